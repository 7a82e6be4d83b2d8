/* The byte writer and the default allocator (byteio.c, internal.h): the pieces
 * every encoder stands on. An encoder counts its length with the writer in
 * counting mode and then writes into a block of exactly that size, so the
 * encoders never run out of room; these tests hold the writer itself to its
 * contract for when a caller's block is too small. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "hurray/alloc.h"
#include "internal.h"
#include "test_support.h"

/* Writing past `cap` sets `overflowed` and writes nothing more: not the part
 * that does not fit, not anything after it (a later part that would fit
 * included); bytes and zeros alike. */
static void test_writer_overflow_is_sticky(void **state) {
    (void)state;
    uint8_t out[8];
    memset(out, 0xEE, sizeof out);
    struct hri_writer w;
    hri_writer_init(&w, out, 6);
    hri_w_u32(&w, 0x04030201u);
    hri_w_u32(&w, 0x08070605u); /* 4 more do not fit in 6 */
    assert_true(w.overflowed);
    assert_int_equal(w.pos, 4);
    hri_w_u8(&w, 0x09); /* would fit, but the writer has overflowed */
    hri_w_zero(&w, 1);
    assert_int_equal(w.pos, 4);
    const uint8_t want[8] = {1, 2, 3, 4, 0xEE, 0xEE, 0xEE, 0xEE};
    assert_bytes_equal(out, sizeof out, want, sizeof want);

    memset(out, 0xEE, sizeof out);
    hri_writer_init(&w, out, 3);
    hri_w_u16(&w, 0x0201);
    hri_w_zero(&w, 2); /* zeros past cap: nothing written */
    assert_true(w.overflowed);
    assert_int_equal(w.pos, 2);
    assert_int_equal(out[2], 0xEE);
    hri_w_pad8(&w);
    assert_int_equal(w.pos, 2);

    /* counting mode has no cap to pass */
    hri_writer_init(&w, NULL, 0);
    hri_w_zero(&w, 1000);
    hri_w_u64(&w, 1);
    assert_false(w.overflowed);
    assert_int_equal(w.pos, 1008);
}

/* The default allocator (alloc.h) is malloc/free behind the hook: what
 * hri_alloc uses for NULL, and a zero-byte request still gets a block. */
static void test_default_allocator(void **state) {
    (void)state;
    const struct hurray_allocator *a = hurray_default_allocator();
    assert_non_null(a);
    assert_ptr_equal(a, hurray_default_allocator());
    assert_non_null(a->alloc);
    assert_non_null(a->free);
    void *p = a->alloc(a->ctx, 0);
    assert_non_null(p);
    a->free(a->ctx, p, 0);
    uint8_t *q = hri_alloc(a, 32);
    assert_non_null(q);
    memset(q, 1, 32);
    hri_free(NULL, q, 32); /* NULL means the same allocator */
    hri_free(a, NULL, 0);  /* NULL block: nothing */
}

/* The system allocator (alloc.h): blocks of 1 MiB and more mapped from the system outside
 * the sanitizer builds, smaller ones (and a zero-byte request) from the heap; every byte of
 * each writable and readable, each given back by its size, the boundary sizes included. */
static void test_system_allocator(void **state) {
    (void)state;
    const struct hurray_allocator *a = hurray_system_allocator();
    assert_non_null(a);
    assert_ptr_equal(a, hurray_system_allocator());
    assert_ptr_not_equal(a, hurray_default_allocator());
    void *p = a->alloc(a->ctx, 0);
    assert_non_null(p);
    a->free(a->ctx, p, 0);
    const size_t big[] = {(size_t)1 << 20, ((size_t)1 << 20) - 1, ((size_t)4 << 20) + 3};
    for (unsigned k = 0; k < 3; k++) {
        uint8_t *b = hri_alloc(a, big[k]);
        assert_non_null(b);
        b[0] = 1;
        b[big[k] - 1] = 2;
        memset(b + 4096, 3, 4096);
        assert_int_equal(b[0] + b[big[k] - 1] + b[8191], 6);
        hri_free(a, b, big[k]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_overflow_is_sticky),
        cmocka_unit_test(test_default_allocator),
        cmocka_unit_test(test_system_allocator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
