/* Shared cmocka test support: failure-injecting allocator, hex dumps, error
 * record checks. See test_support.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/dtype.h"
#include "hurray/quant.h"
#include "test_support.h"

/* ---- failure-injecting allocator ---------------------------------------- */

/* Each block carries its requested size in front, so frees can be checked. */
union block_header {
    max_align_t align;
    size_t size;
};

static void *counting_alloc(void *ctx, size_t size) {
    struct test_alloc *ta = ctx;
    ta->calls++;
    if (ta->fail_at != 0 &&
        (ta->calls == ta->fail_at || (ta->fail_after && ta->calls > ta->fail_at))) {
        ta->failures++;
        return NULL;
    }
    if (size > SIZE_MAX - sizeof(union block_header)) return NULL;
    union block_header *h = malloc(sizeof *h + (size ? size : 1));
    if (!h) return NULL;
    h->size = size;
    ta->live_allocs++;
    ta->live_bytes += size;
    if (ta->live_bytes > ta->peak_bytes) ta->peak_bytes = ta->live_bytes;
    return h + 1;
}

static void counting_free(void *ctx, void *ptr, size_t size) {
    struct test_alloc *ta = ctx;
    if (!ptr) return;
    union block_header *h = (union block_header *)ptr - 1;
    if (h->size != size) ta->bad_frees++;
    ta->live_allocs--;
    ta->live_bytes -= h->size;
    free(h);
}

void test_alloc_init(struct test_alloc *ta, unsigned long fail_at) {
    memset(ta, 0, sizeof *ta);
    ta->base.alloc = counting_alloc;
    ta->base.free = counting_free;
    ta->base.ctx = ta;
    ta->fail_at = fail_at;
}

const struct hurray_allocator *test_alloc_get(struct test_alloc *ta) { return &ta->base; }

void test_alloc_assert_clean_at(const struct test_alloc *ta, const char *file, int line) {
    if (ta->live_allocs == 0 && ta->live_bytes == 0 && ta->bad_frees == 0) return;
    print_error("allocator not clean: %lu live block(s), %zu live byte(s), %lu free(s) "
                "with a wrong size\n",
                ta->live_allocs, ta->live_bytes, ta->bad_frees);
    _fail(file, line);
}

unsigned long test_alloc_sweep_at(test_alloc_body body, void *state, unsigned long max_runs,
                                  const char *file, int line) {
    if (max_runs == 0) max_runs = 100000;
    for (unsigned long k = 1; k <= max_runs; k++) {
        struct test_alloc ta;
        test_alloc_init(&ta, k);
        int st = body(test_alloc_get(&ta), state);
        if (ta.live_allocs != 0 || ta.bad_frees != 0)
            print_error("alloc sweep: leak or bad free with failure injected at call %lu "
                        "(%s returned)\n",
                        k, hurray_status_name(st));
        test_alloc_assert_clean_at(&ta, file, line);
        if (st == HURRAY_OK && ta.failures == 0) return ta.calls;
        if (st != HURRAY_OK && st != HURRAY_E_NOMEM) {
            print_error("alloc failure injected at call %lu: got %s, want NOMEM\n", k,
                        hurray_status_name(st));
            _fail(file, line);
        }
        if (st == HURRAY_E_NOMEM && ta.failures == 0) {
            print_error("NOMEM with no failure injected (fail_at %lu, %lu calls)\n", k,
                        ta.calls);
            _fail(file, line);
        }
    }
    print_error("alloc sweep did not finish within %lu runs\n", max_runs);
    _fail(file, line);
    return 0;
}

/* ---- bytes --------------------------------------------------------------- */

void test_hex_dump(const char *label, const uint8_t *p, size_t n, size_t mark) {
    print_error("%s: %zu byte(s)\n", label, n);
    for (size_t row = 0; row < n; row += 16) {
        char line[128]; /* 16 + 16 * 4 + NUL fits */
        size_t at = 0;
        at += (size_t)snprintf(line + at, sizeof line - at, "  %06zx:", row);
        for (size_t i = row; i < n && i < row + 16; i++)
            at += (size_t)snprintf(line + at, sizeof line - at, i == mark ? "[%02x]" : " %02x ",
                                   p[i]);
        print_error("%s\n", line);
    }
}

void test_bytes_equal_at(const uint8_t *got, size_t got_len, const uint8_t *want,
                         size_t want_len, const char *file, int line) {
    size_t common = got_len < want_len ? got_len : want_len;
    size_t diff = 0;
    while (diff < common && got[diff] == want[diff]) diff++;
    if (diff == common && got_len == want_len) return;
    print_error("bytes differ at offset %zu (got %zu bytes, want %zu)\n", diff, got_len,
                want_len);
    test_hex_dump("got", got, got_len, diff);
    test_hex_dump("want", want, want_len, diff);
    _fail(file, line);
}

/* ---- error records -------------------------------------------------------- */

void test_error_check_at(const struct hurray_error *err, int code, const char *field_substr,
                         const char *file, int line) {
    int ok = err->code == code && err->message[0] != '\0' &&
             memchr(err->message, '\0', sizeof err->message) != NULL &&
             memchr(err->field, '\0', sizeof err->field) != NULL &&
             (!field_substr || strstr(err->field, field_substr) != NULL);
    if (ok) return;
    print_error("error record: code %s (want %s), field \"%.*s\" (want to contain \"%s\"), "
                "message \"%.*s\"\n",
                hurray_status_name(err->code), hurray_status_name(code),
                (int)sizeof err->field, err->field, field_substr ? field_substr : "",
                (int)sizeof err->message, err->message);
    _fail(file, line);
}

void test_status_equal_at(int status, int code, const char *file, int line) {
    if (status == code) return;
    print_error("status %s (%d), want %s (%d)\n", hurray_status_name(status), status,
                hurray_status_name(code), code);
    _fail(file, line);
}

void test_error_poison(struct hurray_error *err) {
    memset(err, 0x5A, sizeof *err);
    err->code = -12345;
    err->field[sizeof err->field - 1] = '\0';
    err->message[sizeof err->message - 1] = '\0';
}

static void setter_ok(int st, const struct hurray_error *err, const char *what) {
    if (st != HURRAY_OK) print_error("%s: %s: %s\n", what, hurray_status_name(st), err->message);
    assert_status(st, HURRAY_OK);
}

void test_set_shape(struct hurray_descriptor *d, unsigned rank, const uint64_t *shape) {
    struct hurray_error err;
    setter_ok(hurray_descriptor_set_shape(d, (uint8_t)rank, shape, &err), &err, "set_shape");
}

void test_set_shape_at(struct hurray_descriptor *d, unsigned k, uint64_t extent) {
    uint64_t shape[HURRAY_MAX_RANK];
    assert_true(k < d->rank);
    memcpy(shape, d->shape, d->rank * sizeof shape[0]);
    shape[k] = extent;
    test_set_shape(d, d->rank, shape);
}

void test_set_buffer_count(struct hurray_descriptor *d, unsigned n) {
    struct hurray_buffer_desc b[HURRAY_MAX_BUFFERS];
    struct hurray_error err;
    assert_true(n <= HURRAY_MAX_BUFFERS);
    memset(b, 0, sizeof b);
    unsigned keep = d->buffer_count < n ? d->buffer_count : n;
    if (keep) memcpy(b, d->buffers, keep * sizeof b[0]);
    setter_ok(hurray_descriptor_set_buffers(d, (uint8_t)n, b, &err), &err, "set_buffers");
}

void test_set_buffer_entry(struct hurray_descriptor *d, unsigned i, uint64_t size,
                           uint8_t alignment_log2, uint8_t sync_mode) {
    struct hurray_buffer_desc b = {size, alignment_log2, sync_mode};
    struct hurray_error err;
    assert_true(i < d->buffer_count);
    setter_ok(hurray_descriptor_set_buffer(d, (uint8_t)i, &b, &err), &err, "set_buffer");
}

void test_set_buffer(struct hurray_descriptor *d, unsigned i, uint64_t size) {
    test_set_buffer_entry(d, i, size, size ? 6 : 0, HURRAY_SYNC_PRODUCER_SYNCED);
}

void test_fill_buffers(struct hurray_descriptor *d, uint64_t unknown_size) {
    int count = -1;
    uint64_t sizes[HURRAY_MAX_BUFFERS];
    uint8_t known[HURRAY_MAX_BUFFERS];
    struct hurray_error err;
    assert_status(hurray_descriptor_expected_buffer_count(d, &count, &err), HURRAY_OK);
    if (count < 0) return;
    test_set_buffer_count(d, (unsigned)count);
    for (int i = 0; i < count; i++) test_set_buffer(d, (unsigned)i, 0);
    int st = hurray_descriptor_required_sizes(d, sizes, known, &err);
    if (st != HURRAY_OK) print_error("required_sizes: %s: %s\n", hurray_status_name(st), err.message);
    assert_status(st, HURRAY_OK);
    for (int i = 0; i < count; i++)
        test_set_buffer(d, (unsigned)i, known[i] ? sizes[i] : unknown_size);
}

static void copy_span(void *dst, const void *src, size_t n) {
    if (src && n) memcpy(dst, src, n);
}

void test_layout_edit(struct test_layout *t, const struct hurray_descriptor *d) {
    unsigned r = d->rank;
    memset(t, 0, sizeof *t);
    t->l = d->layout;
    copy_span(t->strides, d->layout.strides, r * 8u);
    copy_span(t->inner_strides, d->layout.inner_strides, r * 8u);
    copy_span(t->tile_shape, d->layout.tile_shape, r * 8u);
    copy_span(t->fiber_counts, d->layout.fiber_counts, r ? (r - 1u) * 8u : 0u);
    copy_span(t->mode_order, d->layout.mode_order, r);
}

void test_layout_apply(struct test_layout *t, struct hurray_descriptor *d) {
    struct hurray_error err;
    t->l.strides = t->strides;
    t->l.inner_strides = t->inner_strides;
    t->l.tile_shape = t->tile_shape;
    t->l.fiber_counts = t->fiber_counts;
    t->l.mode_order = t->mode_order;
    setter_ok(hurray_descriptor_set_layout(d, &t->l, &err), &err, "set_layout");
}

void test_shard_edit(struct test_shard *t, const struct hurray_descriptor *d) {
    memset(t, 0, sizeof *t);
    if (!d->shard) return;
    t->s = *d->shard;
    copy_span(t->global_shape, d->shard->global_shape, d->rank * 8u);
    copy_span(t->global_offset, d->shard->global_offset, d->rank * 8u);
}

void test_shard_apply(struct test_shard *t, struct hurray_descriptor *d) {
    struct hurray_error err;
    t->s.global_shape = t->global_shape;
    t->s.global_offset = t->global_offset;
    setter_ok(hurray_descriptor_set_shard(d, &t->s, &err), &err, "set_shard");
}

/* Each record handed out is a block of its own, kept on a list for the life of the test
 * program (reachable, so never a leak), newest first: a descriptor patched again finds its own
 * record at once. */
struct test_record {
    struct test_record *next;
    const struct hurray_descriptor *owner;
    struct hurray_quant q;
    struct hurray_statistics s;
};
static struct test_record *test_records;

static struct test_record *test_record_of(const struct hurray_descriptor *d, const void *rec,
                                          int quant) {
    if (!rec) return NULL;
    for (struct test_record *r = test_records; r; r = r->next)
        if (r->owner == d && rec == (quant ? (const void *)&r->q : (const void *)&r->s))
            return r;
    return NULL;
}

static struct test_record *test_record_new(const struct hurray_descriptor *d) {
    struct test_record *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->owner = d;
    r->next = test_records;
    test_records = r;
    return r;
}

struct hurray_quant *test_quant(struct hurray_descriptor *d) {
    struct test_record *r = test_record_of(d, d->quant, 1);
    if (r) return &r->q;
    r = test_record_new(d);
    if (d->quant) r->q = *d->quant;
    d->quant = &r->q;
    return &r->q;
}

struct hurray_statistics *test_statistics(struct hurray_descriptor *d) {
    struct test_record *r = test_record_of(d, d->statistics, 0);
    if (r) return &r->s;
    r = test_record_new(d);
    if (d->statistics) r->s = *d->statistics;
    d->statistics = &r->s;
    return &r->s;
}

void test_patch_shard(struct hurray_descriptor *d, int offset, unsigned k, uint64_t v) {
    struct test_shard t;
    assert_true(d->shard && k < d->rank);
    test_shard_edit(&t, d);
    if (offset)
        t.global_offset[k] = v;
    else
        t.global_shape[k] = v;
    test_shard_apply(&t, d);
}

void test_add_opaque(struct hurray_descriptor *d, uint8_t type, uint8_t flags,
                     const uint8_t *data, uint32_t length) {
    struct hurray_error err;
    setter_ok(hurray_descriptor_add_opaque_section(d, type, flags, data, length, &err), &err,
              "add_opaque_section");
}

int test_under_valgrind(void) {
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "vgpreload") != NULL;
}

struct hurray_descriptor *test_desc_new(uint8_t dtype, uint8_t layout, unsigned rank,
                                        const uint64_t *shape) {
    struct hurray_descriptor *d = malloc(sizeof *d);
    assert_non_null(d);
    hurray_descriptor_init(d);
    d->dtype = dtype;
    d->layout.tag = layout;
    test_set_shape(d, rank, shape);
    return d;
}

uint64_t test_get_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = v << 8 | p[k];
    return v;
}

uint32_t test_get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void test_put_u64(uint8_t *p, uint64_t v) {
    for (int k = 0; k < 8; k++) p[k] = (uint8_t)(v >> (8 * k));
}

void test_put_u32(uint8_t *p, uint32_t v) {
    for (int k = 0; k < 4; k++) p[k] = (uint8_t)(v >> (8 * k));
}

void test_quant_init(struct hurray_quant *q, uint8_t scheme) {
    memset(q, 0, sizeof *q);
    q->scheme = scheme;
    q->scale_buffer = q->zero_point_buffer = HURRAY_NO_BUFFER;
    q->absmax_buffer = q->nested_absmax_buffer = q->quant_map_buffer = HURRAY_NO_BUFFER;
}

struct hurray_descriptor *test_q_per_tensor(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){4, 4});
    test_quant_init(test_quant(d), HURRAY_QUANT_PER_TENSOR_AFFINE);
    test_quant(d)->scale = 0.25;
    test_quant(d)->zero_point = -3;
    return d;
}

struct hurray_descriptor *test_q_per_channel(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){4, 8});
    test_quant_init(test_quant(d), HURRAY_QUANT_PER_CHANNEL_AFFINE);
    test_quant(d)->axis = 1;
    test_quant(d)->scale_buffer = 1;
    test_quant(d)->zero_point_buffer = 2;
    test_quant(d)->scale_dtype = HURRAY_DTYPE_FLOAT32;
    test_quant(d)->zero_point_dtype = HURRAY_DTYPE_INT8;
    return d;
}

struct hurray_descriptor *test_q_block(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){4, 64});
    test_quant_init(test_quant(d), HURRAY_QUANT_BLOCK_AFFINE);
    test_quant(d)->axis = 1;
    test_quant(d)->scale_buffer = 1;
    test_quant(d)->zero_point_buffer = 2;
    test_quant(d)->scale_dtype = HURRAY_DTYPE_FLOAT16;
    test_quant(d)->zero_point_dtype = HURRAY_DTYPE_UINT8;
    test_quant(d)->block_size = 32;
    return d;
}

struct hurray_descriptor *test_q_nf4_double(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){64, 128});
    test_quant_init(test_quant(d), HURRAY_QUANT_NF4);
    test_quant(d)->flags = HURRAY_NF4_DOUBLE_QUANT;
    test_quant(d)->absmax_buffer = 1;
    test_quant(d)->nested_absmax_buffer = 2;
    test_quant(d)->quant_map_buffer = 3;
    test_quant(d)->block_size = 64;
    test_quant(d)->nested_block_size = 256;
    test_quant(d)->nested_offset = 0.125f;
    return d;
}

struct hurray_descriptor *test_q_mx(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT8_E4M3FN, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){2, 64});
    test_quant_init(test_quant(d), HURRAY_QUANT_MX);
    test_quant(d)->axis = 1;
    test_quant(d)->scale_buffer = 1;
    test_quant(d)->block_size = 32;
    return d;
}

struct hurray_descriptor *test_q_nvfp4(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT4_E2M1FN, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){2, 32});
    test_quant_init(test_quant(d), HURRAY_QUANT_NVFP4);
    test_quant(d)->axis = 1;
    test_quant(d)->scale_buffer = 1;
    test_quant(d)->block_size = 16;
    test_quant(d)->tensor_scale = 2.0f;
    return d;
}
