/* Stream readers and writers over a descriptor or a callback (stream.c,
 * stream.md § Transports): what their creation needs (the reader's read-ahead
 * block and waker, the writer's staging block) and how the staging block
 * passes bytes on. Every failure is a status, frees what was taken and leaves
 * the caller's descriptor open. */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hurray/hurray.h"
#include "item_builders.h"
#include "test_support.h"

/* A descriptor reader takes, from its allocator, the reader, its slack budget
 * (errors-and-limits.md HR-LIMIT-2) and then its read-ahead block; a writer
 * takes the writer and then its staging block.
 * Each failure is NOMEM naming the object, nothing stays allocated, and the
 * caller's descriptor is still open (the duplicate is closed). */
static void test_HR_STREAM_11_fd_transports_without_memory(void **state) {
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    for (unsigned long at = 1; at <= 3; at++) {
        struct test_alloc ta;
        struct hurray_error err;
        test_alloc_init(&ta, at);
        struct hurray_stream_reader_options ro;
        hurray_stream_reader_options_init(&ro);
        ro.allocator = test_alloc_get(&ta);
        struct hurray_stream_reader *r = (struct hurray_stream_reader *)&err; /* not NULL */
        assert_status(hurray_stream_reader_create_fd(fds[0], &ro, &r, &err), HURRAY_E_NOMEM);
        assert_hurray_error(&err, HURRAY_E_NOMEM, "reader");
        assert_null(r);
        assert_alloc_clean(&ta);
        if (at == 3) break; /* a writer takes two */

        test_alloc_init(&ta, at);
        struct hurray_stream_writer_options wo;
        hurray_stream_writer_options_init(&wo);
        wo.allocator = test_alloc_get(&ta);
        struct hurray_stream_writer *w = (struct hurray_stream_writer *)&err;
        assert_status(hurray_stream_writer_create_fd(fds[1], &wo, &w, &err), HURRAY_E_NOMEM);
        assert_hurray_error(&err, HURRAY_E_NOMEM, "writer");
        assert_null(w);
        assert_alloc_clean(&ta);
    }
    /* the caller's descriptors still work */
    assert_int_equal(write(fds[1], "x", 1), 1);
    char c = 0;
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);
    close(fds[1]);
}

/* The lowest descriptor number not in use. */
static int lowest_free_fd(void) {
    int fd = dup(0);
    assert_true(fd >= 0);
    close(fd);
    return fd;
}

/* A descriptor reader needs two descriptors of its own besides the caller's:
 * the duplicate and its waker's pipe (§ Closing a reader from another thread).
 * With room for only the duplicate (RLIMIT_NOFILE), creation fails with IO and
 * the system's EMFILE, and gives the duplicate back. */
static void test_HR_STREAM_11_fd_reader_without_descriptors(void **state) {
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    struct rlimit old, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    low = old;
    low.rlim_cur = (rlim_t)lowest_free_fd() + 1; /* one descriptor left: the duplicate */
    struct test_alloc ta;
    test_alloc_init(&ta, 0);
    struct hurray_stream_reader_options ro;
    hurray_stream_reader_options_init(&ro);
    ro.allocator = test_alloc_get(&ta);
    struct hurray_stream_reader *r = NULL;
    struct hurray_error err;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    int st = hurray_stream_reader_create_fd(fds[0], &ro, &r, &err);
    int next = lowest_free_fd(); /* the duplicate was closed again */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_status(st, HURRAY_E_IO);
    assert_hurray_error(&err, HURRAY_E_IO, "waker");
    assert_int_equal(err.sys_errno, EMFILE);
    assert_null(r);
    assert_alloc_clean(&ta);
    assert_int_equal((rlim_t)next + 1, low.rlim_cur);
    close(fds[0]);
    close(fds[1]);
}

/* A callback sink that keeps every byte and counts the calls. */
struct sink {
    uint8_t *p;
    size_t n, cap;
    unsigned calls;
};

static int sink_write(void *ctx, const uint8_t *src, size_t n, struct hurray_error *err) {
    (void)err;
    struct sink *s = ctx;
    if (s->n + n > s->cap) {
        s->cap = (s->n + n) * 2;
        s->p = realloc(s->p, s->cap);
        assert_non_null(s->p);
    }
    memcpy(s->p + s->n, src, n);
    s->n += n;
    s->calls++;
    return HURRAY_OK;
}

/* The staging block (64 KiB) collects the small parts of a frame; a part that
 * does not fit after what is staged sends the staged bytes on first and is
 * staged itself when it is smaller than the block, passed straight through when
 * it is not. Whatever the split, the bytes are exactly the memory writer's. */
static void test_HR_STREAM_10_staging_keeps_the_bytes(void **state) {
    (void)state;
    /* uint8 buffers just under, and over, the staging block */
    const uint64_t sizes[3] = {65500, 70000, 10};
    struct hurray_item *items[3];
    for (int i = 0; i < 3; i++) {
        uint64_t shape[1] = {sizes[i]};
        items[i] = tb_tensor(HURRAY_DTYPE_UINT8, 1, shape, (uint8_t)(i * 7 + 1));
    }
    struct hurray_error err;
    struct hurray_stream_writer *mw = NULL;
    assert_status(hurray_stream_writer_create_memory(NULL, &mw, &err), HURRAY_OK);
    struct sink s = {NULL, 0, 0, 0};
    struct hurray_stream_writer *cw = NULL;
    assert_status(hurray_stream_writer_create_callback(sink_write, &s, NULL, &cw, &err), HURRAY_OK);
    for (int i = 0; i < 3; i++) {
        assert_status(hurray_stream_writer_write(mw, items[i], &err), HURRAY_OK);
        assert_status(hurray_stream_writer_write(cw, items[i], &err), HURRAY_OK);
    }
    assert_status(hurray_stream_writer_finish(mw, &err), HURRAY_OK);
    assert_status(hurray_stream_writer_finish(cw, &err), HURRAY_OK);
    const uint8_t *want = NULL;
    size_t want_len = 0;
    assert_status(hurray_stream_writer_getvalue(mw, &want, &want_len, &err), HURRAY_OK);
    assert_bytes_equal(s.p, s.n, want, want_len);
    assert_true(s.calls >= 3); /* the 64 KiB block was passed on more than once */
    hurray_stream_writer_destroy(mw);
    hurray_stream_writer_destroy(cw);
    for (int i = 0; i < 3; i++) hurray_item_destroy(items[i]);
    free(s.p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_STREAM_11_fd_transports_without_memory),
        cmocka_unit_test(test_HR_STREAM_11_fd_reader_without_descriptors),
        cmocka_unit_test(test_HR_STREAM_10_staging_keeps_the_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
