/* The HRRYFILE container (file.c). file-container.md, kv.md
 *
 * Valid files are written from items of every layout and quantization scheme
 * and read back (memory, copy and mapped modes); a second, independent
 * canonical writer in this file (raw_file) assembles files from raw
 * descriptor bytes, so the library's layout is checked against the spec's
 * arithmetic and descriptors the library refuses to write can still be put
 * in front of the reader. Hostile files are byte patches, each with the one
 * status the decoding order (HR-FILE-6) gives it. */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hurray/hurray.h"
#include "hurray/composite.h"
#include "test_support.h"

#define DYN HURRAY_DYNAMIC_DIM

/* ==== little helpers ========================================================== */

static uint64_t up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* ==== descriptors and items ===================================================== */

static const uint8_t ext_bytes[32] = "private extension data, 32 byte";

/* One valid descriptor per layout and per quantization scheme. */
static struct hurray_descriptor *catalogue(unsigned k) {
    struct hurray_descriptor *d = NULL;
    struct test_layout t;
    switch (k) {
    case 0: return test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 0, NULL);
    case 1: return test_desc_new(HURRAY_DTYPE_INT16, HURRAY_LAYOUT_ROW_MAJOR, 3, (uint64_t[]){2, 3, 4});
    case 2: return test_desc_new(HURRAY_DTYPE_FLOAT64, HURRAY_LAYOUT_COL_MAJOR, 2, (uint64_t[]){5, 7});
    case 3: return test_desc_new(HURRAY_DTYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){3, 5});
    case 4:
        d = test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_STRIDED, 2, (uint64_t[]){3, 4});
        test_layout_edit(&t, d);
        t.strides[0] = -4;
        t.strides[1] = 1;
        test_layout_apply(&t, d);
        d->byte_offset = 32;
        return d;
    case 5:
        d = test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_TILED, 2, (uint64_t[]){4, 6});
        test_layout_edit(&t, d);
        t.tile_shape[0] = 2;
        t.tile_shape[1] = 3;
        t.strides[0] = 12;
        t.strides[1] = 6;
        t.inner_strides[0] = 3;
        t.inner_strides[1] = 1;
        test_layout_apply(&t, d);
        return d;
    case 6: return test_desc_new(HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_MORTON, 2, (uint64_t[]){4, 8});
    case 7: return test_desc_new(HURRAY_DTYPE_BFLOAT16, HURRAY_LAYOUT_HILBERT, 2, (uint64_t[]){8, 8});
    case 8:
        d = test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COO, 2, (uint64_t[]){10, 10});
        d->layout.nnz = 5;
        return d;
    case 9:
        d = test_desc_new(HURRAY_DTYPE_FLOAT64, HURRAY_LAYOUT_CSR, 2, (uint64_t[]){4, 5});
        d->layout.nnz = 6;
        return d;
    case 10:
        d = test_desc_new(HURRAY_DTYPE_INT32, HURRAY_LAYOUT_CSC, 2, (uint64_t[]){4, 5});
        d->layout.nnz = 6;
        return d;
    case 11:
        d = test_desc_new(HURRAY_DTYPE_INT64, HURRAY_LAYOUT_CSF, 3, (uint64_t[]){2, 3, 4});
        test_layout_edit(&t, d);
        t.l.nnz = 6;
        t.fiber_counts[0] = 2;
        t.fiber_counts[1] = 4;
        for (unsigned m = 0; m < 3; m++) t.mode_order[m] = (uint8_t)m;
        test_layout_apply(&t, d);
        return d;
    case 12:
        d = test_desc_new(HURRAY_DTYPE_FLOAT16, HURRAY_LAYOUT_BLOCK_PAGED, 3, (uint64_t[]){2, 16, 4});
        d->layout.page_size = 4;
        d->layout.num_pages = 6;
        d->layout.num_seqs = 2;
        d->layout.num_blocks = 5;
        return d;
    case 13:
        d = test_desc_new(HURRAY_DTYPE_FLOAT32, 0xF3, 2, (uint64_t[]){3, 3});
        test_layout_edit(&t, d);
        t.l.extension_layout_id = 0xDEADBEEFu;
        t.l.opaque = ext_bytes;
        t.l.opaque_len = 11;
        test_layout_apply(&t, d);
        test_set_buffer_count(d, 2);
        test_set_buffer(d, 0, 100);
        test_set_buffer(d, 1, 0);
        return d;
    case 14:
        d = test_desc_new(HURRAY_DTYPE_INT32, 0x07, 1, (uint64_t[]){9});
        test_layout_edit(&t, d);
        t.l.opaque = ext_bytes;
        t.l.opaque_len = 13;
        test_layout_apply(&t, d);
        test_set_buffer_count(d, 1);
        test_set_buffer(d, 0, 36);
        return d;
    case 15: return test_desc_new(HURRAY_DTYPE_UINT8, 0x40, 0, NULL); /* no buffers at all */
    case 16: return test_q_per_tensor();
    case 17: return test_q_per_channel();
    case 18: return test_q_block();
    case 19: return test_q_nf4_double();
    case 20: return test_q_mx();
    case 21: return test_q_nvfp4();
    case 22:
        d = catalogue(12);
        d->dtype = HURRAY_DTYPE_INT8;
        test_quant_init(test_quant(d), HURRAY_QUANT_PER_CHANNEL_AFFINE);
        test_quant(d)->axis = 2;
        test_quant(d)->scale_buffer = 3;
        test_quant(d)->scale_dtype = HURRAY_DTYPE_FLOAT32;
        return d;
    case 23:
        d = test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){4});
        test_statistics(d)->flags = HURRAY_STATS_HAS_MIN_MAX | HURRAY_STATS_HAS_NAN_COUNT;
        test_statistics(d)->min = -1.5;
        test_statistics(d)->max = 2.0;
        test_statistics(d)->nan_count = 1;
        return d;
    case 24: return test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){0, 5});
    default: return NULL;
    }
}
#define CATALOGUE 25

static uint8_t pattern(unsigned seed, uint64_t k) { return (uint8_t)(seed * 37u + k * 13u + 1u); }

/* A tensor item around `d` (taken), each buffer filled with a pattern. */
static struct hurray_item *tensor_item(struct hurray_descriptor *d, unsigned seed) {
    struct hurray_item *it = calloc(1, sizeof *it);
    assert_non_null(it);
    it->descriptor = d;
    it->owns_buffers = HURRAY_ITEM_OWNS_BUFFERS;
    if (d->buffer_count) {
        it->buffers = calloc(d->buffer_count, sizeof *it->buffers);
        assert_non_null(it->buffers);
    }
    for (unsigned b = 0; b < d->buffer_count; b++) {
        it->buffers[b].size = d->buffers[b].size;
        if (!d->buffers[b].size) continue;
        it->buffers[b].data = malloc((size_t)d->buffers[b].size);
        assert_non_null(it->buffers[b].data);
        for (uint64_t k = 0; k < d->buffers[b].size; k++)
            it->buffers[b].data[k] = pattern(seed + b, k);
    }
    return it;
}

static struct hurray_item *catalogue_item(unsigned k) {
    struct hurray_descriptor *d = catalogue(k);
    assert_non_null(d);
    test_fill_buffers(d, 40);
    return tensor_item(d, k);
}

static struct hurray_item *composite_item(struct hurray_descriptor *head,
                                          struct hurray_item **members, uint32_t n) {
    struct hurray_item *it = calloc(1, sizeof *it);
    assert_non_null(it);
    it->descriptor = head;
    it->members = malloc(n * sizeof *it->members);
    assert_non_null(it->members);
    memcpy(it->members, members, n * sizeof *members);
    it->member_count = n;
    return it;
}

static struct hurray_descriptor *head_new(uint8_t rule, uint8_t combine, uint32_t n,
                                          unsigned rank, const uint64_t *shape) {
    struct hurray_descriptor *d = test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COMPOSITE, rank,
                                           shape);
    d->layout.rule = rule;
    d->layout.combine = combine;
    d->layout.member_count = n;
    return d;
}

/* A float32 member of `shape` with a shard box in [4, 4]. */
static struct hurray_item *box_member(const uint64_t *shape, const uint64_t *offset,
                                      uint32_t index, uint32_t count, unsigned seed) {
    struct hurray_descriptor *d = test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, shape);
    struct hurray_shard s = {index, count, (const uint64_t[]){4, 4}, offset};
    struct hurray_error err;
    assert_status(hurray_descriptor_set_shard(d, &s, &err), HURRAY_OK);
    test_fill_buffers(d, 40);
    return tensor_item(d, seed);
}

/* A [4, 4] partition of two [2, 4] rows. */
static struct hurray_item *partition_item(void) {
    struct hurray_item *m[2] = {
        box_member((uint64_t[]){2, 4}, (uint64_t[]){0, 0}, 0, 2, 50),
        box_member((uint64_t[]){2, 4}, (uint64_t[]){2, 0}, 1, 2, 51)};
    return composite_item(head_new(HURRAY_RULE_PARTITION, HURRAY_COMBINE_NONE, 2, 2,
                                   (uint64_t[]){4, 4}),
                          m, 2);
}

/* A [4, 4] overlay: a base and one [2, 2] correction at (1, 1); roles derived. */
static struct hurray_item *overlay_item(void) {
    struct hurray_descriptor *base =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){4, 4});
    test_fill_buffers(base, 40);
    struct hurray_item *m[2] = {tensor_item(base, 60),
                                box_member((uint64_t[]){2, 2}, (uint64_t[]){1, 1}, 0, 1, 61)};
    struct hurray_item *it = composite_item(
        head_new(HURRAY_RULE_OVERLAY, HURRAY_COMBINE_ADD, 2, 2, (uint64_t[]){4, 4}), m, 2);
    struct hurray_error err;
    assert_status(hurray_composite_assign_roles(it, &err), HURRAY_OK);
    return it;
}

/* A group of an int8 tensor and a partition: nested composites. */
static struct hurray_item *group_item(void) {
    struct hurray_descriptor *t = test_desc_new(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 1,
                                           (uint64_t[]){3});
    test_fill_buffers(t, 40);
    struct hurray_item *m[2] = {tensor_item(t, 70), partition_item()};
    return composite_item(head_new(HURRAY_RULE_GROUP, HURRAY_COMBINE_NONE, 2, 1, (uint64_t[]){2}),
                          m, 2);
}

/* Items equal: descriptors (HR-DESC-7), buffer bytes, members. */
static void assert_items_equal(const struct hurray_item *a, const struct hurray_item *b) {
    assert_non_null(a);
    assert_non_null(b);
    assert_true(hurray_descriptor_equal(a->descriptor, b->descriptor));
    assert_int_equal(a->member_count, b->member_count);
    for (uint32_t k = 0; k < a->member_count; k++) assert_items_equal(a->members[k], b->members[k]);
    if (hurray_item_is_composite(a)) return;
    for (unsigned i = 0; i < a->descriptor->buffer_count; i++) {
        assert_int_equal(a->buffers[i].size, b->buffers[i].size);
        if (a->buffers[i].size)
            assert_memory_equal(a->buffers[i].data, b->buffers[i].data, a->buffers[i].size);
    }
}

/* Every buffer's address satisfies its declared alignment (HR-FILE-8). */
static void assert_aligned(const struct hurray_item *it) {
    for (uint32_t k = 0; k < it->member_count; k++) assert_aligned(it->members[k]);
    if (hurray_item_is_composite(it)) return;
    for (unsigned i = 0; i < it->descriptor->buffer_count; i++) {
        uintptr_t a = (uintptr_t)1 << it->descriptor->buffers[i].alignment_log2;
        if (it->buffers[i].size) assert_int_equal((uintptr_t)it->buffers[i].data % a, 0);
        else assert_null(it->buffers[i].data);
    }
}

/* ==== writing and opening ========================================================== */

static uint8_t *encode_ok(const struct hurray_file_entry *e, size_t n,
                          const struct hurray_kv_entry *kv, size_t kvn, size_t *len) {
    struct hurray_file_contents c = {e, n, kv, kvn};
    struct hurray_error err;
    uint64_t want = 0;
    int st = hurray_file_encoded_len(&c, NULL, &want, &err);
    if (st != HURRAY_OK) print_error("encoded_len: %s: %s: %s\n", hurray_status_name(st), err.field, err.message);
    assert_status(st, HURRAY_OK);
    uint8_t *buf = malloc((size_t)want);
    assert_non_null(buf);
    assert_status(hurray_file_encode(&c, NULL, buf, (size_t)want, len, &err), HURRAY_OK);
    assert_int_equal(*len, want);
    return buf;
}

/* Opens a copy of exactly len bytes (so over-reads are caught). */
static int open_exact(const uint8_t *src, size_t len, const struct hurray_limits *lim,
                      struct hurray_file **f, struct hurray_error *err) {
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    if (len) memcpy(copy, src, len);
    struct hurray_file_options opt = {lim, NULL, HURRAY_FILE_COPY, HURRAY_FILE_PARTS_ALL};
    *f = (struct hurray_file *)(uintptr_t)1;
    int st = hurray_file_create_memory(copy, len, &opt, f, err);
    free(copy);
    if (st != HURRAY_OK) assert_null(*f);
    return st;
}

static void expect_open(const uint8_t *src, size_t len, const struct hurray_limits *lim, int code,
                        const char *field) {
    struct hurray_file *f = NULL;
    struct hurray_error err;
    test_error_poison(&err);
    int st = open_exact(src, len, lim, &f, &err);
    if (st != code)
        print_error("open: got %s (%s: %s), want %s\n", hurray_status_name(st),
                    st ? err.field : "", st ? err.message : "", hurray_status_name(code));
    assert_status(st, code);
    if (code != HURRAY_OK) assert_hurray_error(&err, code, field);
    hurray_file_destroy(f);
}

/* Locations of index entry i in a file image (parsed here, independently). */
struct loc {
    size_t entry, name, desc, desc_len, offsets, end;
};

static struct loc locate(const uint8_t *img, size_t i) {
    struct loc l;
    size_t pos = 72;
    for (size_t k = 0;; k++) {
        l.entry = pos;
        l.name = pos + 8;
        l.desc = l.name + (size_t)up(test_get_u32(img + pos), 8);
        l.desc_len = test_get_u32(img + l.desc + 8);
        l.offsets = l.desc + l.desc_len;
        l.end = l.offsets + 8u * img[l.desc + 21];
        if (k == i) return l;
        pos = l.end;
    }
}

/* ==== an independent canonical writer ================================================= */

struct raw_entry {
    const char *name;
    uint8_t kind;
    const uint8_t *desc; /* encoded descriptor */
    size_t desc_len;
};

/* file-container.md § Placement, § Buffer placement, computed here from the
 * spec alone; buffer bytes are pattern(seed = entry index + buffer, k). */
static uint8_t *raw_file(const struct raw_entry *e, size_t n, const uint8_t *kv, size_t kv_len,
                         size_t *out_len) {
    uint64_t index_len = 8, pos = 0, offs[64][8];
    for (size_t i = 0; i < n; i++) {
        const uint8_t *d = e[i].desc;
        unsigned rank = d[20], bc = d[21];
        index_len += 8 + up(strlen(e[i].name), 8) + e[i].desc_len + 8u * bc;
        for (unsigned b = 0; b < bc; b++) {
            const uint8_t *t = d + 32 + 8 * rank + 16 * b;
            uint64_t a = (uint64_t)1 << t[8];
            offs[i][b] = up(pos, a > 64 ? a : 64);
            pos = offs[i][b] + test_get_u64(t);
        }
    }
    uint64_t meta_end = 64 + index_len + kv_len, data_off = up(meta_end, 4096);
    uint64_t data_len = up(pos, 64), total = data_off + data_len;
    uint8_t *f = calloc(1, (size_t)total);
    assert_non_null(f);
    memcpy(f, "HRRYFILE", 8);
    f[8] = 1;
    test_put_u64(f + 16, 64);
    test_put_u64(f + 24, index_len);
    test_put_u64(f + 32, kv_len ? 64 + index_len : 0);
    test_put_u64(f + 40, kv_len);
    test_put_u64(f + 48, data_off);
    test_put_u64(f + 56, data_len);
    size_t at = 64;
    test_put_u64(f + at, n);
    at += 8;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *d = e[i].desc;
        unsigned rank = d[20], bc = d[21];
        test_put_u32(f + at, (uint32_t)strlen(e[i].name));
        f[at + 4] = e[i].kind;
        memcpy(f + at + 8, e[i].name, strlen(e[i].name));
        at += 8 + (size_t)up(strlen(e[i].name), 8);
        memcpy(f + at, d, e[i].desc_len);
        at += e[i].desc_len;
        for (unsigned b = 0; b < bc; b++, at += 8) {
            const uint8_t *t = d + 32 + 8 * rank + 16 * b;
            test_put_u64(f + at, offs[i][b]);
            for (uint64_t k = 0; k < test_get_u64(t); k++)
                f[data_off + offs[i][b] + k] = pattern((unsigned)(i + b), k);
        }
    }
    if (kv_len) memcpy(f + at, kv, kv_len);
    *out_len = (size_t)total;
    return f;
}

static size_t encode_desc(const struct hurray_descriptor *d, uint8_t *buf, size_t cap) {
    size_t n = 0;
    struct hurray_error err;
    assert_status(hurray_descriptor_encode(d, buf, cap, &n, &err), HURRAY_OK);
    return n;
}

/* ==== a standard small file =========================================================== */

/* Entries: "a" (row_major, 1 buffer), "q" (per-channel, 3 buffers), "g" (a
 * group with a partition inside); KV {"k": "v", "n": 1}. */
struct std_file {
    struct hurray_item *items[3];
    struct hurray_file_entry entries[3];
    struct hurray_kv_entry kv[2];
    uint8_t *bytes;
    size_t len;
};

static void std_make(struct std_file *s) {
    s->items[0] = catalogue_item(1);
    s->items[1] = catalogue_item(17);
    s->items[2] = group_item();
    s->entries[0] = (struct hurray_file_entry){"a", s->items[0]};
    s->entries[1] = (struct hurray_file_entry){"q", s->items[1]};
    s->entries[2] = (struct hurray_file_entry){"g", s->items[2]};
    memset(s->kv, 0, sizeof s->kv);
    s->kv[0].key = "n";
    s->kv[0].key_len = 1;
    s->kv[0].value.type = HURRAY_KV_INT64;
    s->kv[0].value.v.i64 = 1;
    s->kv[1].key = "k";
    s->kv[1].key_len = 1;
    s->kv[1].value.type = HURRAY_KV_STRING;
    s->kv[1].value.v.bytes.data = (const uint8_t *)"v";
    s->kv[1].value.v.bytes.len = 1;
    s->bytes = encode_ok(s->entries, 3, s->kv, 2, &s->len);
}

static void std_free(struct std_file *s) {
    for (int k = 0; k < 3; k++) hurray_item_destroy(s->items[k]);
    free(s->bytes);
}

/* ==== round trips ===================================================================== */

/* file-container.md § Worked example, byte for byte. */
static void test_HR_FILE_1_worked_example(void **state) {
    (void)state;
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){2, 3});
    test_set_buffer_count(d, 1);
    test_set_buffer(d, 0, 24);
    struct hurray_item *it = tensor_item(d, 0);
    for (int k = 0; k < 6; k++) {
        float v = (float)(k + 1);
        memcpy(it->buffers[0].data + 4 * k, &v, 4);
    }
    struct hurray_file_entry e = {"w", it};
    struct hurray_kv_entry kv;
    memset(&kv, 0, sizeof kv);
    kv.key = "a";
    kv.key_len = 1;
    kv.value.type = HURRAY_KV_INT64;
    kv.value.v.i64 = 1;
    size_t len = 0;
    uint8_t *f = encode_ok(&e, 1, &kv, 1, &len);
    assert_int_equal(len, 4160);
    static const uint8_t head[] = {
        0x48, 0x52, 0x52, 0x59, 0x46, 0x49, 0x4C, 0x45, 1, 0, 0, 0, 0, 0, 0, 0,
        0x40, 0, 0, 0, 0, 0, 0, 0, 0x68, 0, 0, 0, 0, 0, 0, 0,
        0xA8, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0,
        0x00, 0x10, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0,
        1, 0, 0, 0, 0, 0, 0, 0,
        1, 0, 0, 0, 1, 0, 0, 0, 0x77, 0, 0, 0, 0, 0, 0, 0};
    assert_bytes_equal(f, sizeof head, head, sizeof head);
    static const uint8_t desc[72] = {
        0x48, 0x52, 0x59, 0x44, 1, 0, 0, 0, 0x48, 0, 0, 0, 0, 0, 0, 0,
        0x0C, 1, 1, 1, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
        0x18, 0, 0, 0, 0, 0, 0, 0, 6, 1, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0};
    assert_bytes_equal(f + 0x58, 72, desc, 72);
    static const uint8_t tail[] = {
        0, 0, 0, 0, 0, 0, 0, 0,
        1, 0, 0, 0, 0, 0, 0, 0,
        1, 0, 0, 0, 2, 0, 0, 0, 0x61, 0, 0, 0, 0, 0, 0, 0,
        1, 0, 0, 0, 0, 0, 0, 0};
    assert_bytes_equal(f + 0xA0, sizeof tail, tail, sizeof tail);
    for (size_t k = 0xC8; k < 0x1000; k++) assert_int_equal(f[k], 0);
    static const uint8_t data[24] = {0, 0, 0x80, 0x3F, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40,
                                     0, 0, 0x80, 0x40, 0, 0, 0xA0, 0x40, 0, 0, 0xC0, 0x40};
    assert_bytes_equal(f + 0x1000, 24, data, 24);
    for (size_t k = 0x1018; k < len; k++) assert_int_equal(f[k], 0);
    /* the spec's mutations */
    uint8_t *g = malloc(len + 1);
    assert_non_null(g);
    memcpy(g, f, len);
    test_put_u64(g + 48, 8192);
    expect_open(g, len, NULL, HURRAY_E_OFFSET, "header.data_offset");
    memcpy(g, f, len);
    g[len] = 0;
    expect_open(g, len + 1, NULL, HURRAY_E_LENGTH, "file");
    g[0x1018] = 1;
    expect_open(g, len, NULL, HURRAY_E_RESERVED_NONZERO, "data.padding");
    expect_open(f, len, NULL, HURRAY_OK, NULL);
    free(g);
    free(f);
    hurray_item_destroy(it);
}

/* Every layout and scheme, all buffers of multi-buffer tensors, back
 * byte-identical; the file re-encodes canonically from what was loaded
 * (HR-FILE-2); the independent writer agrees byte for byte. */
static void test_HR_FILE_2_round_trip_every_layout_and_scheme(void **state) {
    (void)state;
    struct hurray_item *items[CATALOGUE];
    struct hurray_file_entry e[CATALOGUE];
    char names[CATALOGUE][8];
    static const uint8_t aligns[] = {0, 3, 6, 7, 12, 9};
    for (unsigned k = 0; k < CATALOGUE; k++) {
        items[k] = catalogue_item(k);
        /* a variety of declared alignments (empty buffers declare 1) */
        for (unsigned b = 0; b < items[k]->descriptor->buffer_count; b++)
            if (items[k]->descriptor->buffers[b].size)
                TEST_PATCH_BUFFER(items[k]->descriptor, b, alignment_log2, aligns[(k + b) % 6]);
        snprintf(names[k], sizeof names[k], "t%02u", k);
        e[k] = (struct hurray_file_entry){names[k], items[k]};
    }
    size_t len = 0;
    uint8_t *f = encode_ok(e, CATALOGUE, NULL, 0, &len);

    /* the independent writer */
    struct raw_entry raw[CATALOGUE];
    uint8_t *descs = malloc(CATALOGUE * 4096);
    assert_non_null(descs);
    for (unsigned k = 0; k < CATALOGUE; k++) {
        raw[k].name = names[k];
        raw[k].kind = HURRAY_FILE_KIND_TENSOR;
        raw[k].desc = descs + 4096 * k;
        raw[k].desc_len = encode_desc(items[k]->descriptor, descs + 4096 * k, 4096);
        for (unsigned b = 0; b < items[k]->descriptor->buffer_count; b++) /* raw's pattern */
            for (uint64_t j = 0; j < items[k]->buffers[b].size; j++)
                items[k]->buffers[b].data[j] = pattern(k + b, j);
    }
    free(f);
    f = encode_ok(e, CATALOGUE, NULL, 0, &len);
    size_t raw_len = 0;
    uint8_t *r = raw_file(raw, CATALOGUE, NULL, 0, &raw_len);
    assert_bytes_equal(f, len, r, raw_len);
    free(r);
    free(descs);

    struct hurray_file *file = NULL;
    struct hurray_error err;
    assert_status(open_exact(f, len, NULL, &file, &err), HURRAY_OK);
    assert_int_equal(hurray_file_entry_count(file), CATALOGUE);
    assert_int_equal(hurray_file_top_level_count(file), CATALOGUE);
    assert_int_equal(hurray_file_kv(file)->count, 0); /* no KV section: empty */
    struct hurray_item *back[CATALOGUE];
    for (unsigned k = 0; k < CATALOGUE; k++) {
        assert_string_equal(hurray_file_entry_name(file, k), names[k]);
        assert_int_equal(hurray_file_entry_kind(file, k), HURRAY_FILE_KIND_TENSOR);
        assert_status(hurray_file_load_item(file, k, &back[k], &err), HURRAY_OK);
        assert_items_equal(items[k], back[k]);
        assert_aligned(back[k]);
        e[k].item = back[k];
    }
    hurray_file_destroy(file);
    size_t len2 = 0;
    uint8_t *again = encode_ok(e, CATALOGUE, NULL, 0, &len2);
    assert_bytes_equal(again, len2, f, len);
    for (unsigned k = 0; k < CATALOGUE; k++) {
        hurray_item_destroy(back[k]);
        hurray_item_destroy(items[k]);
    }
    free(again);
    free(f);
}

static void test_HR_FILE_3_composites(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    struct hurray_item *ov = overlay_item();
    struct hurray_file_entry e[4] = {s.entries[0], s.entries[1], s.entries[2], {"o", ov}};
    size_t len = 0;
    uint8_t *f = encode_ok(e, 4, NULL, 0, &len);
    struct hurray_file *file = NULL;
    struct hurray_error err;
    assert_status(open_exact(f, len, NULL, &file, &err), HURRAY_OK);
    static const char *want[] = {"a", "q", "g", "g.0", "g.1", "g.1.0", "g.1.1", "o", "o.0", "o.1"};
    static const int member[] = {0, 0, 0, 1, 1, 1, 1, 0, 1, 1};
    assert_int_equal(hurray_file_entry_count(file), 10);
    for (size_t i = 0; i < 10; i++) {
        assert_string_equal(hurray_file_entry_name(file, i), want[i]);
        assert_int_equal(hurray_file_entry_is_member(file, i), member[i]);
        struct hurray_descriptor d;
        hurray_descriptor_init(&d);
        assert_status(hurray_file_entry_descriptor(file, i, &d, &err), HURRAY_OK);
        assert_int_equal(hurray_file_entry_buffer_count(file, i), d.buffer_count);
        hurray_descriptor_reset(&d);
        size_t at = 99;
        assert_true(hurray_file_find(file, want[i], &at));
        assert_int_equal(at, i);
    }
    assert_int_equal(hurray_file_entry_kind(file, 2), HURRAY_FILE_KIND_COMPOSITE);
    assert_int_equal(hurray_file_entry_kind(file, 4), HURRAY_FILE_KIND_COMPOSITE);
    assert_int_equal(hurray_file_entry_kind(file, 5), HURRAY_FILE_KIND_TENSOR);
    assert_null(hurray_file_entry_name(file, 10));
    assert_int_equal(hurray_file_entry_buffer_count(file, 10), -1);
    assert_int_equal(hurray_file_entry_buffer_count(NULL, 0), -1);
    assert_int_equal(hurray_file_entry_buffer_count(file, 2), 0); /* a head */
    assert_false(hurray_file_find(file, "g.2", NULL));
    assert_false(hurray_file_find(file, "", NULL));
    /* top level skips members */
    assert_int_equal(hurray_file_top_level_count(file), 4);
    static const size_t tops[] = {0, 1, 2, 7};
    for (size_t k = 0; k < 4; k++) assert_int_equal(hurray_file_top_level_entry(file, k), tops[k]);
    assert_int_equal(hurray_file_top_level_entry(file, 4), SIZE_MAX);
    /* by head: the whole tree; by member name: the member (subtree) */
    struct hurray_item *g = NULL, *g1 = NULL, *g10 = NULL, *o = NULL;
    assert_status(hurray_file_load_item(file, 2, &g, &err), HURRAY_OK);
    assert_items_equal(s.items[2], g);
    assert_status(hurray_composite_validate(g, NULL, &err), HURRAY_OK);
    assert_status(hurray_file_load_item(file, 4, &g1, &err), HURRAY_OK);
    assert_items_equal(s.items[2]->members[1], g1);
    assert_status(hurray_file_load_item(file, 5, &g10, &err), HURRAY_OK);
    assert_items_equal(s.items[2]->members[1]->members[0], g10);
    assert_status(hurray_file_load_item(file, 7, &o, &err), HURRAY_OK);
    assert_items_equal(ov, o);
    assert_int_equal(o->members[0]->descriptor->role, HURRAY_ROLE_BASE);
    assert_int_equal(o->members[1]->descriptor->role, HURRAY_ROLE_CORRECTION);
    struct hurray_descriptor *d = test_desc_new(0, 0, 0, NULL);
    assert_status(hurray_file_entry_descriptor(file, 4, d, &err), HURRAY_OK);
    assert_true(hurray_descriptor_equal(d, s.items[2]->members[1]->descriptor));
    hurray_descriptor_reset(d);
    free(d);
    hurray_item_destroy(o);
    assert_status(hurray_file_load_item(file, 10, &o, &err), HURRAY_E_ARGUMENT);
    assert_null(o);
    hurray_file_destroy(file);
    hurray_item_destroy(g);
    hurray_item_destroy(g1);
    hurray_item_destroy(g10);
    hurray_item_destroy(ov);
    free(f);
    std_free(&s);
}

static void test_HR_FILE_4_kv_section(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    struct hurray_file *file = NULL;
    struct hurray_error err;
    assert_status(open_exact(s.bytes, s.len, NULL, &file, &err), HURRAY_OK);
    const struct hurray_kv *kv = hurray_file_kv(file);
    assert_int_equal(kv->count, 2);
    assert_string_equal(kv->entries[0].key, "k"); /* sorted */
    assert_true(hurray_kv_value_equal(&kv->entries[0].value, &s.kv[1].value));
    assert_true(hurray_kv_value_equal(&kv->entries[1].value, &s.kv[0].value));
    /* re-written from what was read: the same file */
    size_t len = 0;
    uint8_t *again = encode_ok(s.entries, 3, kv->entries, kv->count, &len);
    assert_bytes_equal(again, len, s.bytes, s.len);
    free(again);
    hurray_file_destroy(file);

    /* inside a file, a KV read past kv_length is LENGTH (the file is complete) */
    uint8_t *b = malloc(s.len);
    assert_non_null(b);
    size_t kv_at = (size_t)test_get_u64(s.bytes + 32);
    memcpy(b, s.bytes, s.len);
    b[kv_at] = 3; /* entry_count 3 */
    expect_open(b, s.len, NULL, HURRAY_E_LENGTH, "kv/");
    memcpy(b, s.bytes, s.len);
    b[kv_at + 12] = 0x09; /* value tag */
    expect_open(b, s.len, NULL, HURRAY_E_UNSUPPORTED, "kv/");
    free(b);
    /* a present but empty section: CONSTRAINT (HR-FILE-4) */
    uint8_t desc[4096];
    size_t dl = encode_desc(s.items[0]->descriptor, desc, sizeof desc);
    struct raw_entry re = {"a", HURRAY_FILE_KIND_TENSOR, desc, dl};
    static const uint8_t empty_kv[8] = {0};
    size_t rl = 0;
    uint8_t *r = raw_file(&re, 1, empty_kv, 8, &rl);
    expect_open(r, rl, NULL, HURRAY_E_CONSTRAINT, "kv.entry_count");
    free(r);
    r = raw_file(&re, 1, NULL, 0, &rl);
    expect_open(r, rl, NULL, HURRAY_OK, NULL);
    free(r);
    std_free(&s);
}

/* ==== reading modes (HR-FILE-8) ======================================================== */

static char tmp_dir[64];

static int setup_tmp(void **state) {
    (void)state;
    strcpy(tmp_dir, "/tmp/hurray_file_test_XXXXXX");
    return mkdtemp(tmp_dir) ? 0 : -1;
}

static int teardown_tmp(void **state) {
    (void)state;
    char p[128];
    static const char *files[] = {"a.hry", "b.hry", "bad.hry"};
    for (size_t k = 0; k < 3; k++) {
        snprintf(p, sizeof p, "%s/%s", tmp_dir, files[k]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/dir", tmp_dir);
    rmdir(p);
    return rmdir(tmp_dir);
}

static void tmp_path(char *out, size_t cap, const char *name) {
    snprintf(out, cap, "%s/%s", tmp_dir, name);
}

/* 1 when p lies in a mapping of this process (/proc/self/maps; where that
 * does not exist the answer is `expected`: the allocator count still checks
 * that the image was released). */
static int mapped(const void *p, int expected) {
    FILE *fp = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    if (!fp) return expected;
    while (!found && fgets(line, sizeof line, fp)) {
        unsigned long long lo = 0, hi = 0;
        if (sscanf(line, "%llx-%llx", &lo, &hi) == 2)
            found = (uintptr_t)p >= lo && (uintptr_t)p < hi;
    }
    fclose(fp);
    return found;
}

static void test_HR_FILE_8_mmap_alignment_and_lifetime(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    char path[128];
    tmp_path(path, sizeof path, "a.hry");
    struct hurray_file_contents c = {s.entries, 3, s.kv, 2};
    struct hurray_error err;
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);

    struct test_alloc ta;
    test_alloc_init(&ta, 0);
    struct hurray_file_options opt = {NULL, test_alloc_get(&ta), HURRAY_FILE_MMAP,
                                      HURRAY_FILE_PARTS_ALL};
    struct hurray_file *file = NULL;
    assert_status(hurray_file_create_path(path, &opt, &file, &err), HURRAY_OK);
    struct hurray_item *it[3];
    for (size_t k = 0; k < 3; k++) {
        size_t i = hurray_file_top_level_entry(file, k);
        assert_status(hurray_file_load_item(file, i, &it[k], &err), HURRAY_OK);
        assert_aligned(it[k]);
        assert_items_equal(s.items[k], it[k]);
    }
    const uint8_t *p0 = it[0]->buffers[0].data;
    assert_true(mapped(p0, 1));
    hurray_file_destroy(file); /* the items keep the mapping */
    assert_true(mapped(p0, 1));
    for (size_t k = 0; k < 3; k++) assert_items_equal(s.items[k], it[k]);
    hurray_item_destroy(it[1]);
    hurray_item_destroy(it[2]);
    assert_true(mapped(p0, 1));
    assert_true(ta.live_allocs > 0);
    hurray_item_destroy(it[0]); /* the last reference: unmapped */
    assert_false(mapped(p0, 0));
    assert_alloc_clean(&ta);

    /* copy mode: page-aligned owned memory, same lifetime rule */
    test_alloc_init(&ta, 0);
    opt.mode = HURRAY_FILE_COPY;
    assert_status(hurray_file_create_path(path, &opt, &file, &err), HURRAY_OK);
    assert_status(hurray_file_load_item(file, 1, &it[1], &err), HURRAY_OK);
    hurray_file_destroy(file);
    assert_aligned(it[1]);
    assert_items_equal(s.items[1], it[1]);
    hurray_item_destroy(it[1]);
    assert_alloc_clean(&ta);
    opt.mode = 7;
    assert_status(hurray_file_create_path(path, &opt, &file, &err), HURRAY_E_ARGUMENT);

    /* the path holds exactly the canonical bytes */
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    uint8_t *disk = malloc(s.len + 1);
    assert_non_null(disk);
    assert_int_equal(fread(disk, 1, s.len + 1, fp), s.len);
    fclose(fp);
    assert_bytes_equal(disk, s.len, s.bytes, s.len);
    free(disk);
    std_free(&s);
}

static void test_HR_FILE_8_io_errors(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    struct hurray_file_contents c = {s.entries, 3, s.kv, 2};
    struct hurray_error err;
    struct hurray_file *file = NULL;
    char path[128];
    tmp_path(path, sizeof path, "missing.hry");
    assert_status(hurray_file_create_path(path, NULL, &file, &err), HURRAY_E_IO);
    assert_hurray_error(&err, HURRAY_E_IO, "file");
    assert_non_null(strstr(err.message, "No such file"));
    tmp_path(path, sizeof path, "dir");
    assert_int_equal(mkdir(path, 0700), 0);
    assert_status(hurray_file_create_path(path, NULL, &file, &err), HURRAY_E_IO);
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_E_IO);
    tmp_path(path, sizeof path, "nodir/x.hry");
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_E_IO);
    /* a short file on disk: TRUNCATED, as in memory */
    tmp_path(path, sizeof path, "bad.hry");
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(s.bytes, 1, s.len - 1, fp), s.len - 1);
    fclose(fp);
    assert_status(hurray_file_create_path(path, NULL, &file, &err), HURRAY_E_TRUNCATED);
    struct hurray_file_options mopt = {NULL, NULL, HURRAY_FILE_MMAP, HURRAY_FILE_PARTS_ALL};
    assert_status(hurray_file_create_path(path, &mopt, &file, &err), HURRAY_E_TRUNCATED);
    fp = fopen(path, "wb");
    assert_non_null(fp);
    fclose(fp);
    assert_status(hurray_file_create_path(path, &mopt, &file, &err), HURRAY_E_TRUNCATED);
    /* a refused file leaves the path untouched */
    tmp_path(path, sizeof path, "b.hry");
    struct hurray_file_entry dup[2] = {s.entries[0], s.entries[0]};
    struct hurray_file_contents bad = {dup, 2, NULL, 0};
    assert_status(hurray_file_write_path(path, &bad, NULL, &err), HURRAY_E_DUPLICATE);
    assert_int_equal(access(path, F_OK), -1);
    /* write_fd through a pipe */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_true(s.len < 65536);
    assert_status(hurray_file_write_fd(fds[1], &c, NULL, &err), HURRAY_OK);
    close(fds[1]);
    uint8_t *got = malloc(s.len + 8);
    assert_non_null(got);
    size_t n = 0;
    for (ssize_t r; (r = read(fds[0], got + n, s.len + 8 - n)) > 0;) n += (size_t)r;
    close(fds[0]);
    assert_bytes_equal(got, n, s.bytes, s.len);
    free(got);
    assert_status(hurray_file_write_fd(-1, &c, NULL, &err), HURRAY_E_ARGUMENT);
    std_free(&s);
}


/* HR-FILE-7: the path is replaced by rename, so a mapping of the old file
 * keeps its bytes (a truncation in place would SIGBUS it), and nothing is
 * left beside the path. */
static void test_HR_FILE_7_write_path_replaces(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    char path[128];
    tmp_path(path, sizeof path, "a.hry");
    struct hurray_file_contents c = {s.entries, 3, s.kv, 2};
    struct hurray_error err;
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);
    struct hurray_file_options opt = {NULL, NULL, HURRAY_FILE_MMAP, HURRAY_FILE_PARTS_ALL};
    struct hurray_file *file = NULL;
    struct hurray_item *old = NULL;
    assert_status(hurray_file_create_path(path, &opt, &file, &err), HURRAY_OK);
    assert_status(hurray_file_load_item(file, 1, &old, &err), HURRAY_OK);
    hurray_file_destroy(file);
    struct hurray_file_contents one = {&s.entries[0], 1, NULL, 0};
    assert_status(hurray_file_write_path(path, &one, NULL, &err), HURRAY_OK);
    assert_items_equal(s.items[1], old); /* still the old file's bytes */
    hurray_item_destroy(old);
    assert_status(hurray_file_create_path(path, &opt, &file, &err), HURRAY_OK);
    assert_int_equal(hurray_file_entry_count(file), 1);
    hurray_file_destroy(file);
    DIR *dir = opendir(tmp_dir);
    assert_non_null(dir);
    for (struct dirent *de; (de = readdir(dir)) != NULL;)
        assert_null(strstr(de->d_name, "hurray-tmp"));
    closedir(dir);
    std_free(&s);
}

/* ==== hostile files ======================================================================= */

static uint8_t *dup_bytes(const uint8_t *p, size_t n) {
    uint8_t *b = malloc(n + 64);
    assert_non_null(b);
    memcpy(b, p, n);
    memset(b + n, 0, 64);
    return b;
}

static void test_HR_FILE_6_every_prefix_is_truncated(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    for (size_t n = 0; n < s.len; n++) expect_open(s.bytes, n, NULL, HURRAY_E_TRUNCATED, NULL);
    expect_open(s.bytes, s.len, NULL, HURRAY_OK, NULL);
    uint8_t *b = dup_bytes(s.bytes, s.len);
    expect_open(b, s.len + 1, NULL, HURRAY_E_LENGTH, "file"); /* trailing bytes */
    expect_open(b, s.len + 64, NULL, HURRAY_E_LENGTH, "file");
    free(b);
    std_free(&s);
}

static void patch_u64(const struct std_file *s, size_t at, uint64_t v, const struct hurray_limits *lim,
                      int code, const char *field) {
    uint8_t *b = dup_bytes(s->bytes, s->len);
    test_put_u64(b + at, v);
    expect_open(b, s->len, lim, code, field);
    free(b);
}

static void patch_u8(const struct std_file *s, size_t at, uint8_t v, const struct hurray_limits *lim,
                     int code, const char *field) {
    uint8_t *b = dup_bytes(s->bytes, s->len);
    b[at] = v;
    expect_open(b, s->len, lim, code, field);
    free(b);
}

static void test_HR_FILE_4_header_lies(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    const uint64_t il = test_get_u64(s.bytes + 24), kvo = test_get_u64(s.bytes + 32),
                   kvl = test_get_u64(s.bytes + 40), dof = test_get_u64(s.bytes + 48),
                   dl = test_get_u64(s.bytes + 56);
    assert_int_equal(kvo, 64 + il);
    assert_int_equal(dof, 4096);
    struct hurray_limits lim;
    patch_u8(&s, 0, 'X', NULL, HURRAY_E_BAD_MAGIC, "header.magic");
    patch_u8(&s, 8, 2, NULL, HURRAY_E_VERSION, "header.version_major");
    patch_u8(&s, 9, 1, NULL, HURRAY_E_VERSION, "header.version_major");
    patch_u8(&s, 10, 7, NULL, HURRAY_OK, NULL); /* any minor */
    patch_u8(&s, 12, 1, NULL, HURRAY_E_RESERVED_NONZERO, "header.reserved");
    patch_u8(&s, 15, 1, NULL, HURRAY_E_RESERVED_NONZERO, "header.reserved");
    patch_u64(&s, 16, 128, NULL, HURRAY_E_OFFSET, "header.index_offset");
    patch_u64(&s, 16, 0, NULL, HURRAY_E_OFFSET, "header.index_offset");
    patch_u64(&s, 24, il + 4, NULL, HURRAY_E_LENGTH, "header.index_length");
    patch_u64(&s, 24, 0, NULL, HURRAY_E_LENGTH, "header.index_length");
    patch_u64(&s, 24, UINT64_MAX - 7, NULL, HURRAY_E_OVERFLOW, "header.index_length");
    patch_u64(&s, 24, il + 8, NULL, HURRAY_E_OFFSET, "header.kv_offset"); /* KV no longer follows */
    patch_u64(&s, 32, 0, NULL, HURRAY_E_OFFSET, "header.kv_offset");
    patch_u64(&s, 32, kvo + 8, NULL, HURRAY_E_OFFSET, "header.kv_offset");
    patch_u64(&s, 40, 0, NULL, HURRAY_E_OFFSET, "header.kv_offset"); /* (offset, 0) */
    patch_u64(&s, 40, kvl + 4, NULL, HURRAY_E_LENGTH, "header.kv_length");
    hurray_limits_default(&lim);
    lim.max_kv_bytes = kvl - 8;
    patch_u64(&s, 40, kvl, &lim, HURRAY_E_LIMIT, "header.kv_length");
    lim.max_kv_bytes = UINT64_MAX;
    {
        uint8_t *b = dup_bytes(s.bytes, s.len);
        test_put_u64(b + 24, UINT64_C(1) << 63);
        test_put_u64(b + 32, 64 + (UINT64_C(1) << 63));
        test_put_u64(b + 40, (UINT64_C(1) << 63) - 8);
        expect_open(b, s.len, &lim, HURRAY_E_OVERFLOW, "header.kv_length");
        test_put_u64(b + 40, 16);
        test_put_u64(b + 48, 0);
        expect_open(b, s.len, &lim, HURRAY_E_OFFSET, "header.data_offset");
        test_put_u64(b + 24, UINT64_MAX - 127);
        test_put_u64(b + 32, 0);
        test_put_u64(b + 40, 0);
        expect_open(b, s.len, &lim, HURRAY_E_OVERFLOW, "header.data_offset");
        free(b);
    }
    patch_u64(&s, 48, 4097, NULL, HURRAY_E_OFFSET, "header.data_offset");
    patch_u64(&s, 48, 0, NULL, HURRAY_E_OFFSET, "header.data_offset");
    patch_u64(&s, 48, 8192, NULL, HURRAY_E_OFFSET, "header.data_offset");
    patch_u64(&s, 48, UINT64_MAX - 4095, NULL, HURRAY_E_OFFSET, "header.data_offset");
    patch_u64(&s, 56, dl + 1, NULL, HURRAY_E_LENGTH, "header.data_length");
    patch_u64(&s, 56, dl + 64, NULL, HURRAY_E_TRUNCATED, "file");
    patch_u64(&s, 56, dl - 64, NULL, HURRAY_E_LENGTH, "file"); /* trailing bytes */
    patch_u64(&s, 56, UINT64_MAX - 63, NULL, HURRAY_E_OVERFLOW, "header.data_length");
    {
        /* index and data both moved on by a page: consistent, but past EOF */
        uint8_t *b = dup_bytes(s.bytes, s.len);
        test_put_u64(b + 24, il + 4096);
        test_put_u64(b + 32, kvo + 4096);
        test_put_u64(b + 48, dof + 4096);
        expect_open(b, s.len, NULL, HURRAY_E_TRUNCATED, "file");
        free(b);
    }
    patch_u8(&s, dof - 1, 1, NULL, HURRAY_E_RESERVED_NONZERO, "padding");
    patch_u8(&s, kvo + kvl, 1, NULL, HURRAY_E_RESERVED_NONZERO, "padding");
    std_free(&s);
}

/* Buffer placement (HR-FILE-2): "a" 48 bytes at 0; q's three at 64, 128, 192. */
static void test_HR_FILE_2_buffer_placement(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    struct loc a = locate(s.bytes, 0), q = locate(s.bytes, 1), last = locate(s.bytes, 6);
    const uint64_t dof = test_get_u64(s.bytes + 48), dl = test_get_u64(s.bytes + 56);
    assert_int_equal(test_get_u64(s.bytes + a.offsets), 0);
    assert_int_equal(test_get_u64(s.bytes + q.offsets), 64);
    assert_int_equal(test_get_u64(s.bytes + q.offsets + 8), 128);
    assert_int_equal(test_get_u64(s.bytes + q.offsets + 16), 192);
    uint64_t last_off = test_get_u64(s.bytes + last.offsets);
    assert_int_equal(dl, up(last_off + 32, 64));
    patch_u64(&s, q.offsets + 8, 64, NULL, HURRAY_E_OVERLAP, "index[1].buffers[1]");
    patch_u64(&s, q.offsets, 0, NULL, HURRAY_E_OVERLAP, "index[1].buffers[0]");
    patch_u64(&s, q.offsets + 8, 136, NULL, HURRAY_E_OFFSET, "index[1].buffers[1]"); /* misaligned */
    patch_u64(&s, q.offsets + 8, 192, NULL, HURRAY_E_OFFSET, "index[1].buffers[1]"); /* a gap */
    patch_u64(&s, q.offsets + 16, 256, NULL, HURRAY_E_OFFSET, "index[1].buffers[2]");
    /* the last buffer's size grows past the data region (tier 2 allows larger) */
    size_t size_at = last.desc + 32 + 8 * 2;
    assert_int_equal(test_get_u64(s.bytes + size_at), 32);
    patch_u64(&s, size_at, 1u << 20, NULL, HURRAY_E_OFFSET, "index[6].buffers[0]");
    struct hurray_limits lim;
    hurray_limits_default(&lim);
    lim.max_buffer_bytes = UINT64_MAX;
    patch_u64(&s, size_at, UINT64_MAX - 64, &lim, HURRAY_E_OVERFLOW, "index[6].buffers[0]");
    /* padding between and after buffers */
    patch_u8(&s, dof + 48, 1, NULL, HURRAY_E_RESERVED_NONZERO, "index[1].buffers[0]");
    patch_u8(&s, dof + 63, 0x80, NULL, HURRAY_E_RESERVED_NONZERO, "index[1].buffers[0]");
    patch_u8(&s, dof + last_off + 32, 1, NULL, HURRAY_E_RESERVED_NONZERO, "data.padding");
    patch_u8(&s, dof + dl - 1, 1, NULL, HURRAY_E_RESERVED_NONZERO, "data.padding");
    patch_u8(&s, dof + 47, 0xEE, NULL, HURRAY_OK, NULL); /* data bytes are data */
    /* data_length one block longer than the buffers need (and the file with it) */
    uint8_t *b = dup_bytes(s.bytes, s.len);
    test_put_u64(b + 56, dl + 64);
    expect_open(b, s.len + 64, NULL, HURRAY_E_LENGTH, "header.data_length");
    free(b);
    std_free(&s);
}

static void test_HR_FILE_5_entry_rules(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    struct loc a = locate(s.bytes, 0), g = locate(s.bytes, 2);
    struct hurray_limits lim;
    patch_u8(&s, a.entry + 4, 0x00, NULL, HURRAY_E_INVALID_TAG, "index[0].kind");
    patch_u8(&s, a.entry + 4, 0xFF, NULL, HURRAY_E_INVALID_TAG, "index[0].kind");
    patch_u8(&s, a.entry + 4, 0x03, NULL, HURRAY_E_RESERVED_TAG, "index[0].kind");
    patch_u8(&s, a.entry + 4, 0xF0, NULL, HURRAY_E_RESERVED_TAG, "index[0].kind");
    patch_u8(&s, a.entry + 4, 0x02, NULL, HURRAY_E_CONSTRAINT, "index[0].kind");
    patch_u8(&s, g.entry + 4, 0x01, NULL, HURRAY_E_CONSTRAINT, "index[2].kind");
    patch_u8(&s, a.entry + 5, 1, NULL, HURRAY_E_RESERVED_NONZERO, "index[0].reserved");
    patch_u8(&s, a.entry + 7, 1, NULL, HURRAY_E_RESERVED_NONZERO, "index[0].reserved");
    patch_u8(&s, a.name + 1, 1, NULL, HURRAY_E_RESERVED_NONZERO, "index[0].name.padding");
    patch_u8(&s, a.name, 0xFF, NULL, HURRAY_E_CONSTRAINT, "index[0].name");
    patch_u8(&s, a.name, 0x00, NULL, HURRAY_E_CONSTRAINT, "index[0].name");
    patch_u8(&s, a.name, 0xC3, NULL, HURRAY_E_CONSTRAINT, "index[0].name"); /* truncated */
    patch_u8(&s, a.entry, 0, NULL, HURRAY_E_CONSTRAINT, "index[0].name_length");
    {
        uint8_t *b = dup_bytes(s.bytes, s.len);
        test_put_u32(b + a.entry, 0x10000);
        expect_open(b, s.len, NULL, HURRAY_E_LIMIT, "index[0].name_length");
        test_put_u32(b + a.entry, 65535); /* the format maximum, crossing the index end */
        hurray_limits_default(&lim);
        lim.max_name_bytes = UINT32_MAX; /* clamped to 65535 */
        expect_open(b, s.len, &lim, HURRAY_E_LENGTH, "index[0].name");
        free(b);
    }
    hurray_limits_default(&lim);
    lim.max_name_bytes = 4; /* "g.1.0" is 5 bytes */
    expect_open(s.bytes, s.len, &lim, HURRAY_E_LIMIT, "index[5].name_length");
    /* a file holds host bytes (HR-FILE-5) */
    patch_u8(&s, a.desc + 17, HURRAY_DEVICE_CUDA, NULL, HURRAY_E_COMBINATION, "index[0].device");
    patch_u8(&s, a.desc + 32 + 8 * 3 + 9, HURRAY_SYNC_EVENT, NULL, HURRAY_E_COMBINATION,
             "index[0].sync_mode");
    /* a descriptor fault is reported inside its entry, at its file offset */
    {
        uint8_t *b = dup_bytes(s.bytes, s.len);
        struct hurray_file *f = NULL;
        struct hurray_error err;
        b[a.desc + 16] = 0xFF;
        assert_status(open_exact(b, s.len, NULL, &f, &err), HURRAY_E_INVALID_TAG);
        assert_hurray_error(&err, HURRAY_E_INVALID_TAG, "index[0]/dtype");
        assert_true(err.has_offset);
        assert_int_equal(err.offset, a.desc + 16);
        free(b);
    }
    /* a descriptor crossing the end of the index: LENGTH */
    struct loc last = locate(s.bytes, 6);
    patch_u8(&s, last.desc + 8, (uint8_t)(last.desc_len + 64), NULL, HURRAY_E_LENGTH,
             "index[6].descriptor");
    std_free(&s);
}

static void test_HR_FILE_2_index_counts_and_limits(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    struct hurray_limits lim;
    hurray_limits_default(&lim);
    lim.max_file_tensors = 6; /* 7 entries, members included */
    expect_open(s.bytes, s.len, &lim, HURRAY_E_LIMIT, "index.entry_count");
    lim.max_file_tensors = 7;
    expect_open(s.bytes, s.len, &lim, HURRAY_OK, NULL);
    patch_u64(&s, 64, UINT64_C(1) << 40, NULL, HURRAY_E_LIMIT, "index.entry_count");
    patch_u64(&s, 64, 1000, NULL, HURRAY_E_LENGTH, "index.entry_count");
    patch_u64(&s, 64, 6, NULL, HURRAY_E_LENGTH, "index"); /* bytes left over */
    patch_u64(&s, 64, 8, NULL, HURRAY_E_LENGTH, NULL);    /* an eighth entry that is not there */
    std_free(&s);
}

/* The descriptor's own buffer-count rule holds in a file: load rejects a
 * buffer table that disagrees with its layout (requirements § Multi-buffer tensors). */
static void test_HR_FILE_2_buffer_count_mismatch(void **state) {
    (void)state;
    uint8_t desc[88] = {
        0x48, 0x52, 0x59, 0x44, 1, 0, 0, 0, 88, 0, 0, 0, 0, 0, 0, 0,
        0x0C, 1, 1, 1, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
        0x18, 0, 0, 0, 0, 0, 0, 0, 6, 1, 0, 0, 0, 0, 0, 0,
        0x08, 0, 0, 0, 0, 0, 0, 0, 6, 1, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0};
    struct raw_entry e = {"w", HURRAY_FILE_KIND_TENSOR, desc, sizeof desc};
    size_t len = 0;
    uint8_t *f = raw_file(&e, 1, NULL, 0, &len);
    expect_open(f, len, NULL, HURRAY_E_BUFFER_COUNT, "index[0]/buffer_count");
    free(f);
    /* the same table with one buffer is the worked example: fine */
    desc[8] = 72;
    desc[21] = 1;
    memmove(desc + 64, desc + 80, 8);
    e.desc_len = 72;
    f = raw_file(&e, 1, NULL, 0, &len);
    expect_open(f, len, NULL, HURRAY_OK, NULL);
    free(f);
    /* and with none */
    desc[8] = 56;
    desc[21] = 0;
    memmove(desc + 48, desc + 64, 8);
    e.desc_len = 56;
    f = raw_file(&e, 1, NULL, 0, &len);
    expect_open(f, len, NULL, HURRAY_E_BUFFER_COUNT, "index[0]/buffer_count");
    free(f);
}

static void test_HR_FILE_3_member_names_and_trees(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    struct loc g0 = locate(s.bytes, 3), g10 = locate(s.bytes, 5), g = locate(s.bytes, 2);
    patch_u8(&s, g0.name + 2, '7', NULL, HURRAY_E_CONSTRAINT, "index[3].name");
    patch_u8(&s, g10.name + 4, '1', NULL, HURRAY_E_CONSTRAINT, "index[5].name");
    patch_u8(&s, g0.name, 'h', NULL, HURRAY_E_CONSTRAINT, "index[3].name");
    /* the head's member_count (u32 at params + 4; rank 1, no buffers) */
    size_t mc = g.desc + 32 + 8 + 8 + 4;
    assert_int_equal(test_get_u32(s.bytes + mc), 2);
    patch_u8(&s, mc, 3, NULL, HURRAY_E_CONSTRAINT, "index[2].descriptor"); /* index ends first */
    /* one member: "g.1" is then a top-level partition of its own, and valid */
    patch_u8(&s, mc, 1, NULL, HURRAY_OK, NULL);
    struct hurray_limits lim;
    hurray_limits_default(&lim);
    lim.max_composite_depth = 1;
    expect_open(s.bytes, s.len, &lim, HURRAY_E_LIMIT, "index[4].descriptor");
    hurray_limits_default(&lim);
    lim.max_composite_members = 3; /* 2 + 2 over both levels */
    expect_open(s.bytes, s.len, &lim, HURRAY_E_LIMIT, "index[4].descriptor");
    lim.max_composite_members = 4;
    expect_open(s.bytes, s.len, &lim, HURRAY_OK, NULL);

    /* a user entry named like a generated member: DUPLICATE, after or before */
    struct hurray_item *t = catalogue_item(0);
    struct hurray_file_entry after[2] = {s.entries[2], {"h.1", t}};
    size_t len = 0;
    uint8_t *f = encode_ok(after, 2, NULL, 0, &len);
    struct loc h = locate(f, 5);
    assert_memory_equal(f + h.name, "h.1", 3);
    f[h.name] = 'g';
    expect_open(f, len, NULL, HURRAY_E_DUPLICATE, "index[5].name");
    free(f);
    struct hurray_file_entry before[2] = {{"h.0", t}, s.entries[2]};
    f = encode_ok(before, 2, NULL, 0, &len);
    f[72 + 8] = 'g';
    expect_open(f, len, NULL, HURRAY_E_DUPLICATE, "index[2].name");
    free(f);
    /* plain duplicates */
    struct hurray_file_entry two[2] = {{"xy", t}, {"xz", s.items[0]}};
    f = encode_ok(two, 2, NULL, 0, &len);
    f[locate(f, 1).name + 1] = 'y';
    expect_open(f, len, NULL, HURRAY_E_DUPLICATE, "index[1].name");
    free(f);
    hurray_item_destroy(t);

    /* composite rules run on the whole tree (composite.md): overlapping
     * partition boxes, each descriptor valid on its own */
    uint8_t dh[4096], d0[4096], d1[4096];
    struct hurray_item *p = partition_item();
    size_t lh = encode_desc(p->descriptor, dh, sizeof dh);
    size_t l0 = encode_desc(p->members[0]->descriptor, d0, sizeof d0);
    test_patch_shard(p->members[1]->descriptor, 1, 0, 0);
    size_t l1 = encode_desc(p->members[1]->descriptor, d1, sizeof d1);
    struct raw_entry re[3] = {{"p", HURRAY_FILE_KIND_COMPOSITE, dh, lh},
                              {"p.0", HURRAY_FILE_KIND_TENSOR, d0, l0},
                              {"p.1", HURRAY_FILE_KIND_TENSOR, d1, l1}};
    f = raw_file(re, 3, NULL, 0, &len);
    expect_open(f, len, NULL, HURRAY_E_CONSTRAINT, "index[0]/");
    free(f);
    /* a member-role section on a top-level tensor is refused the same way */
    struct hurray_item *ov = overlay_item();
    l0 = encode_desc(ov->members[1]->descriptor, d0, sizeof d0);
    struct raw_entry lone = {"c", HURRAY_FILE_KIND_TENSOR, d0, l0};
    f = raw_file(&lone, 1, NULL, 0, &len);
    expect_open(f, len, NULL, HURRAY_E_CONSTRAINT, "index[0]/");
    free(f);
    hurray_item_destroy(ov);
    hurray_item_destroy(p);
    std_free(&s);
}

/* Single-byte changes anywhere in the metadata: refused with a status, or
 * accepted and then the file re-encodes to exactly the changed bytes. */
static void test_HR_FILE_6_mutations_are_canonical_or_refused(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    static const uint8_t vals[] = {0x00, 0x01, 0x02, 0x40, 0x80, 0xFF};
    uint64_t meta_end = test_get_u64(s.bytes + 32) + test_get_u64(s.bytes + 40);
    uint8_t *b = dup_bytes(s.bytes, s.len);
    unsigned accepted = 0;
    for (size_t at = 0; at < meta_end + 16; at++) {
        for (size_t k = 0; k < sizeof vals; k++) {
            struct hurray_file *f = NULL;
            struct hurray_error err;
            if (at == 10 || at == 11) continue; /* version_minor: read, not re-written */
            memcpy(b, s.bytes, s.len);
            b[at] = vals[k];
            int st = open_exact(b, s.len, NULL, &f, &err);
            assert_true(st >= 0 && st < HURRAY_STATUS_COUNT);
            if (st != HURRAY_OK) {
                assert_int_equal(err.code, st);
                continue;
            }
            accepted++;
            size_t n = hurray_file_top_level_count(f);
            struct hurray_item *it[8];
            struct hurray_file_entry e[8];
            assert_true(n <= 8);
            for (size_t j = 0; j < n; j++) {
                size_t i = hurray_file_top_level_entry(f, j);
                assert_status(hurray_file_load_item(f, i, &it[j], &err), HURRAY_OK);
                e[j].name = hurray_file_entry_name(f, i);
                e[j].item = it[j];
            }
            const struct hurray_kv *kv = hurray_file_kv(f);
            size_t len = 0;
            uint8_t *again = encode_ok(e, n, kv->entries, kv->count, &len);
            assert_bytes_equal(again, len, b, s.len);
            free(again);
            for (size_t j = 0; j < n; j++) hurray_item_destroy(it[j]);
            hurray_file_destroy(f);
        }
    }
    assert_true(accepted > 0);
    free(b);
    std_free(&s);
}

/* ==== the writer (HR-FILE-7) ================================================================ */

static int encode_status(const struct hurray_file_entry *e, size_t n,
                         const struct hurray_kv_entry *kv, size_t kvn, struct hurray_error *err) {
    struct hurray_file_contents c = {e, n, kv, kvn};
    uint64_t len = 0;
    return hurray_file_encoded_len(&c, NULL, &len, err);
}

static void test_HR_FILE_7_writer_refusals(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    struct hurray_error err;
    struct hurray_item *a = s.items[0];
    struct hurray_file_entry e = {"a", a};
    assert_status(encode_status(&e, 1, NULL, 0, &err), HURRAY_OK);
    a->buffers[0].size++;
    assert_status(encode_status(&e, 1, NULL, 0, &err), HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "index[0].buffers[0]");
    a->buffers[0].size--;
    uint8_t *saved = a->buffers[0].data;
    a->buffers[0].data = NULL;
    assert_status(encode_status(&e, 1, NULL, 0, &err), HURRAY_E_ARGUMENT);
    a->buffers[0].data = saved;
    a->descriptor->device = HURRAY_DEVICE_CUDA;
    assert_status(encode_status(&e, 1, NULL, 0, &err), HURRAY_E_COMBINATION);
    a->descriptor->device = HURRAY_DEVICE_CPU;
    TEST_PATCH_BUFFER(a->descriptor, 0, sync_mode, HURRAY_SYNC_EVENT);
    assert_status(encode_status(&e, 1, NULL, 0, &err), HURRAY_E_COMBINATION);
    TEST_PATCH_BUFFER(a->descriptor, 0, sync_mode, HURRAY_SYNC_PRODUCER_SYNCED);
    a->descriptor->dtype = 0;
    assert_status(encode_status(&e, 1, NULL, 0, &err), HURRAY_E_INVALID_TAG);
    assert_hurray_error(&err, HURRAY_E_INVALID_TAG, "index[0]/");
    a->descriptor->dtype = HURRAY_DTYPE_INT16;
    static const char *bad_names[] = {"", "\xFF", "a\xC3"};
    for (size_t k = 0; k < 3; k++) {
        struct hurray_file_entry b = {bad_names[k], a};
        assert_status(encode_status(&b, 1, NULL, 0, &err), HURRAY_E_CONSTRAINT);
    }
    struct hurray_file_entry nul = {NULL, a};
    assert_status(encode_status(&nul, 1, NULL, 0, &err), HURRAY_E_ARGUMENT);
    struct hurray_file_entry noitem = {"x", NULL};
    assert_status(encode_status(&noitem, 1, NULL, 0, &err), HURRAY_E_ARGUMENT);
    /* duplicates, generated names included */
    struct hurray_file_entry dup[2] = {{"x", a}, {"x", s.items[1]}};
    assert_status(encode_status(dup, 2, NULL, 0, &err), HURRAY_E_DUPLICATE);
    struct hurray_file_entry gen[2] = {{"g.1.0", a}, {"g", s.items[2]}};
    assert_status(encode_status(gen, 2, NULL, 0, &err), HURRAY_E_DUPLICATE);
    assert_hurray_error(&err, HURRAY_E_DUPLICATE, "name");
    /* several duplicated names: the one refused is the second occurrence of the smallest
     * (what a walk of the names in sorted order meets first), whatever the entries' order */
    struct hurray_file_entry many[6] = {{"zz", a}, {"b", a}, {"zz", a},
                                        {"a", a},  {"b", a}, {"a", a}};
    assert_status(encode_status(many, 6, NULL, 0, &err), HURRAY_E_DUPLICATE);
    assert_string_equal(err.field, "index[5].name");
    many[5].name = "c";
    assert_status(encode_status(many, 6, NULL, 0, &err), HURRAY_E_DUPLICATE);
    assert_string_equal(err.field, "index[4].name");
    /* one duplicated name a prefix of the other: the shorter sorts first */
    struct hurray_file_entry prefix[4] = {{"ab", a}, {"ab", a}, {"a", a}, {"a", a}};
    assert_status(encode_status(prefix, 4, NULL, 0, &err), HURRAY_E_DUPLICATE);
    assert_string_equal(err.field, "index[3].name");
    prefix[2].name = prefix[3].name = "abc";
    assert_status(encode_status(prefix, 4, NULL, 0, &err), HURRAY_E_DUPLICATE);
    assert_string_equal(err.field, "index[1].name");
    /* a composite that breaks composite.md */
    s.items[2]->member_count = 1;
    assert_status(encode_status(&s.entries[2], 1, NULL, 0, &err), HURRAY_E_CONSTRAINT);
    s.items[2]->member_count = 2;
    /* the KV map */
    struct hurray_kv_entry kv[2] = {s.kv[0], s.kv[0]};
    assert_status(encode_status(&e, 1, kv, 2, &err), HURRAY_E_DUPLICATE);
    assert_hurray_error(&err, HURRAY_E_DUPLICATE, "kv/");
    /* output too small; NULL arguments */
    struct hurray_file_contents c = {&e, 1, NULL, 0};
    uint8_t small[4096];
    size_t written = 0;
    assert_status(hurray_file_encode(&c, NULL, small, sizeof small, &written, &err),
                  HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "cap");
    assert_status(hurray_file_encode(NULL, NULL, small, sizeof small, &written, &err),
                  HURRAY_E_ARGUMENT);
    /* nothing at all: header, empty index, a page */
    struct hurray_file_contents none = {NULL, 0, NULL, 0};
    uint64_t len = 0;
    assert_status(hurray_file_encoded_len(&none, NULL, &len, &err), HURRAY_OK);
    assert_int_equal(len, 4096);
    assert_status(hurray_file_encode(&none, NULL, small, sizeof small, &written, &err), HURRAY_OK);
    expect_open(small, written, NULL, HURRAY_OK, NULL);
    std_free(&s);
}

/* ==== allocation failures ==================================================================== */

struct sweep_state {
    const uint8_t *bytes;
    size_t len;
    const char *path;
    int mode;
    const struct std_file *s;
};

static int load_everything(struct hurray_file *f, struct hurray_error *err) {
    int st = HURRAY_OK;
    for (size_t i = 0; st == HURRAY_OK && i < hurray_file_entry_count(f); i++) {
        struct hurray_item *it = NULL;
        st = hurray_file_load_item(f, i, &it, err);
        hurray_item_destroy(it);
    }
    return st;
}

static int sweep_open(const struct hurray_allocator *a, void *state) {
    const struct sweep_state *ss = state;
    struct hurray_file_options opt = {NULL, a, ss->mode, HURRAY_FILE_PARTS_ALL};
    struct hurray_file *f = NULL;
    int st = ss->path ? hurray_file_create_path(ss->path, &opt, &f, NULL)
                      : hurray_file_create_memory(ss->bytes, ss->len, &opt, &f, NULL);
    if (st == HURRAY_OK) st = load_everything(f, NULL);
    hurray_file_destroy(f);
    return st;
}

static int sweep_write(const struct hurray_allocator *a, void *state) {
    const struct sweep_state *ss = state;
    struct hurray_file_contents c = {ss->s->entries, 3, ss->s->kv, 2};
    struct hurray_file_write_options opt = {a, NULL, NULL, NULL, 0};
    uint64_t len = 0;
    size_t written = 0;
    int st = hurray_file_encoded_len(&c, &opt, &len, NULL);
    if (st != HURRAY_OK) return st;
    uint8_t *buf = malloc((size_t)len);
    assert_non_null(buf);
    st = hurray_file_encode(&c, &opt, buf, (size_t)len, &written, NULL);
    free(buf);
    return st;
}

static void test_HR_FILE_6_nomem_without_leaks(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    char path[128];
    tmp_path(path, sizeof path, "a.hry");
    struct hurray_file_contents c = {s.entries, 3, s.kv, 2};
    struct hurray_error err;
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);
    struct sweep_state ss = {s.bytes, s.len, NULL, HURRAY_FILE_COPY, &s};
    assert_true(test_alloc_sweep(sweep_open, &ss) > 5);
    ss.path = path;
    assert_true(test_alloc_sweep(sweep_open, &ss) > 5);
    ss.mode = HURRAY_FILE_MMAP;
    assert_true(test_alloc_sweep(sweep_open, &ss) > 5);
    assert_true(test_alloc_sweep(sweep_write, &ss) > 1);
    std_free(&s);
}

/* ==== index-first reading (HR-FILE-9 … 13) ================================================= */

/* A file on disk whose data region is a hole (zeros) except the buffers in
 * `fill`: the header and index by the spec's arithmetic (as raw_file), so
 * gigabyte tensors cost no disk. *data_off receives data_offset. */
struct fill {
    size_t entry;
    unsigned buffer;
    const void *bytes;
    size_t len;
};

static uint64_t sparse_file(const char *path, const struct raw_entry *e, size_t n,
                            const struct fill *fl, size_t nf, uint64_t *data_off) {
    uint64_t index_len = 8, pos = 0, offs[4][8];
    assert_true(n <= 4);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *d = e[i].desc;
        unsigned rank = d[20], bc = d[21];
        index_len += 8 + up(strlen(e[i].name), 8) + e[i].desc_len + 8u * bc;
        for (unsigned b = 0; b < bc; b++) {
            const uint8_t *t = d + 32 + 8 * rank + 16 * b;
            uint64_t a = (uint64_t)1 << t[8];
            offs[i][b] = up(pos, a > 64 ? a : 64);
            pos = offs[i][b] + test_get_u64(t);
        }
    }
    uint64_t doff = up(64 + index_len, 4096), total = doff + up(pos, 64);
    uint8_t *m = calloc(1, (size_t)doff);
    assert_non_null(m);
    memcpy(m, "HRRYFILE", 8);
    m[8] = 1;
    test_put_u64(m + 16, 64);
    test_put_u64(m + 24, index_len);
    test_put_u64(m + 48, doff);
    test_put_u64(m + 56, up(pos, 64));
    size_t at = 72;
    test_put_u64(m + 64, n);
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(e[i].name);
        test_put_u32(m + at, (uint32_t)nl);
        m[at + 4] = e[i].kind;
        memcpy(m + at + 8, e[i].name, nl);
        at += 8 + (size_t)up(nl, 8);
        memcpy(m + at, e[i].desc, e[i].desc_len);
        at += e[i].desc_len;
        for (unsigned b = 0; b < e[i].desc[21]; b++, at += 8) test_put_u64(m + at, offs[i][b]);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, m, (size_t)doff, 0), (ssize_t)doff);
    assert_int_equal(ftruncate(fd, (off_t)total), 0);
    for (size_t k = 0; k < nf; k++)
        assert_int_equal(pwrite(fd, fl[k].bytes, fl[k].len,
                                (off_t)(doff + offs[fl[k].entry][fl[k].buffer])),
                         (ssize_t)fl[k].len);
    close(fd);
    free(m);
    *data_off = doff;
    return total;
}

static size_t uint8_vector_desc(uint64_t n, uint8_t *buf, size_t cap) {
    struct hurray_descriptor *d = test_desc_new(HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 1,
                                           (uint64_t[]){n});
    test_fill_buffers(d, 0);
    size_t len = encode_desc(d, buf, cap);
    hurray_descriptor_reset(d);
    free(d);
    return len;
}

/* Bytes of the file's mappings in this process (/proc/self/maps; 0 elsewhere). */
static size_t mapped_bytes(const char *path, size_t *count) {
    FILE *fp = fopen("/proc/self/maps", "r");
    char line[1024];
    size_t total = 0;
    *count = 0;
    if (!fp) return 0;
    while (fgets(line, sizeof line, fp)) {
        unsigned long long lo = 0, hi = 0;
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == ' ')) line[--n] = 0;
        if (n < strlen(path) || strcmp(line + n - strlen(path), path) != 0) continue;
        if (sscanf(line, "%llx-%llx", &lo, &hi) == 2) {
            total += (size_t)(hi - lo);
            (*count)++;
        }
    }
    fclose(fp);
    return total;
}

static const float small_values[8] = {1, 2, 3, 4, 5, 6, 7, 8};

/* "big": a 1 GiB uint8 hole; "small": 32 bytes of float32 after it. */
static uint64_t one_gib_file(const char *path) {
    static uint8_t big[256], small[256];
    uint64_t doff = 0;
    struct hurray_descriptor *sd = test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 1,
                                            (uint64_t[]){8});
    test_fill_buffers(sd, 0);
    struct raw_entry re[2] = {
        {"big", HURRAY_FILE_KIND_TENSOR, big, uint8_vector_desc((uint64_t)1 << 30, big, sizeof big)},
        {"small", HURRAY_FILE_KIND_TENSOR, small, encode_desc(sd, small, sizeof small)}};
    hurray_descriptor_reset(sd);
    free(sd);
    struct fill fl = {1, 0, small_values, sizeof small_values};
    return sparse_file(path, re, 2, &fl, 1, &doff);
}

/* One named 32-byte tensor of a 1 GiB file: the reader's memory stays within its
 * first metadata read, the item holds 32 bytes (copy) or one page's mapping (mmap). */
static void test_HR_FILE_9_one_tensor_of_a_1GiB_file(void **state) {
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "big.hry");
    assert_true(one_gib_file(path) > ((uint64_t)1 << 30));
    for (int mode = HURRAY_FILE_COPY; mode <= HURRAY_FILE_MMAP; mode++) {
        struct test_alloc ta;
        test_alloc_init(&ta, 0);
        struct hurray_file_options opt = {NULL, test_alloc_get(&ta), mode, HURRAY_FILE_PARTS_INDEX};
        struct hurray_file *f = NULL;
        struct hurray_error err;
        struct hurray_item *it = NULL;
        size_t i = 0, nmaps = 0;
        assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_OK);
        assert_true(hurray_file_find(f, "small", &i));
        assert_status(hurray_file_load_item(f, i, &it, &err), HURRAY_OK);
        hurray_file_destroy(f);
        assert_int_equal(it->buffers[0].size, 32);
        assert_memory_equal(it->buffers[0].data, small_values, 32);
        assert_aligned(it);
        /* metadata read ahead (64 KiB), a gap window (64 KiB), descriptors, tables */
        assert_true(ta.peak_bytes < 256u * 1024);
        size_t mb = mapped_bytes(path, &nmaps);
        if (mode == HURRAY_FILE_MMAP) assert_true(mb <= 2 * 4096 && nmaps <= 1);
        else assert_int_equal(nmaps, 0);
        hurray_item_destroy(it);
        assert_alloc_clean(&ta);
        assert_int_equal(mapped_bytes(path, &nmaps), 0);
    }
    unlink(path);
}

/* A 2 GiB file with a lying index is refused before anything it claims is
 * read or allocated: a buffer offset that lies, and an index that claims 2 GiB. */
static void test_HR_FILE_9_bad_index_of_a_2GiB_file(void **state) {
    (void)state;
    char path[128];
    uint8_t big[256];
    uint64_t doff = 0;
    tmp_path(path, sizeof path, "bad.hry");
    struct raw_entry re = {"big", HURRAY_FILE_KIND_TENSOR, big,
                           uint8_vector_desc((uint64_t)2 << 30, big, sizeof big)};
    sparse_file(path, &re, 1, NULL, 0, &doff);
    /* the buffer's offset: 64 instead of 0 (OFFSET, step 5) */
    int fd = open(path, O_WRONLY);
    uint8_t o[8];
    test_put_u64(o, 64);
    assert_int_equal(pwrite(fd, o, 8, (off_t)(72 + 8 + 8 + re.desc_len)), 8); /* hdr, "big" */
    close(fd);
    for (int mode = HURRAY_FILE_COPY; mode <= HURRAY_FILE_MMAP; mode++) {
        struct test_alloc ta;
        test_alloc_init(&ta, 0);
        struct hurray_file_options opt = {NULL, test_alloc_get(&ta), mode, HURRAY_FILE_PARTS_ALL};
        struct hurray_file *f = NULL;
        struct hurray_error err;
        assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_E_OFFSET);
        assert_hurray_error(&err, HURRAY_E_OFFSET, "index[0].buffers[0]");
        assert_true(ta.peak_bytes < 256u * 1024);
        assert_alloc_clean(&ta);
    }
    /* an index of 2 GiB of zeros: no entries, then bytes left over (LENGTH) */
    uint8_t h[64] = "HRRYFILE";
    h[8] = 1;
    uint64_t il = (uint64_t)2 << 30;
    test_put_u64(h + 16, 64);
    test_put_u64(h + 24, il);
    test_put_u64(h + 48, up(64 + il, 4096));
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, h, 64), 64);
    assert_int_equal(ftruncate(fd, (off_t)up(64 + il, 4096)), 0);
    close(fd);
    struct test_alloc ta;
    test_alloc_init(&ta, 0);
    struct hurray_file_options opt = {NULL, test_alloc_get(&ta), HURRAY_FILE_COPY,
                                      HURRAY_FILE_PARTS_ALL};
    struct hurray_file *f = NULL;
    struct hurray_error err;
    assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_E_LENGTH);
    assert_hurray_error(&err, HURRAY_E_LENGTH, "index");
    assert_true(ta.peak_bytes < 256u * 1024);
    /* the KV part alone does not read the index: the file has no KV section */
    opt.parts = HURRAY_FILE_PARTS_KV;
    assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_OK);
    assert_int_equal(hurray_file_entry_count(f), 0);
    assert_int_equal(hurray_file_kv(f)->count, 0);
    hurray_file_destroy(f);
    assert_true(ta.peak_bytes < 256u * 1024);
    assert_alloc_clean(&ta);
    unlink(path);
}

/* The parts: a fault in the part not read is not reported; an unknown part
 * is ARGUMENT. */
static void test_HR_FILE_9_parts(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    struct hurray_file *f = NULL;
    struct hurray_error err;
    uint8_t *b = dup_bytes(s.bytes, s.len);
    b[64] = 99; /* entry_count 99: the index cannot hold it */
    struct hurray_file_options opt = {NULL, NULL, HURRAY_FILE_COPY, HURRAY_FILE_PARTS_KV};
    assert_status(hurray_file_create_memory(b, s.len, &opt, &f, &err), HURRAY_OK);
    assert_int_equal(hurray_file_entry_count(f), 0);
    assert_int_equal(hurray_file_top_level_count(f), 0);
    assert_int_equal(hurray_file_kv(f)->count, 2);
    hurray_file_destroy(f);
    opt.parts = HURRAY_FILE_PARTS_ALL;
    assert_status(hurray_file_create_memory(b, s.len, &opt, &f, &err), HURRAY_E_LENGTH);
    memcpy(b, s.bytes, s.len);
    size_t kvo = (size_t)test_get_u64(s.bytes + 32);
    b[kvo + 12] = 0x7F; /* the first KV value's type: reserved */
    opt.parts = HURRAY_FILE_PARTS_INDEX;
    assert_status(hurray_file_create_memory(b, s.len, &opt, &f, &err), HURRAY_OK);
    assert_int_equal(hurray_file_top_level_count(f), 3);
    assert_int_equal(hurray_file_kv(f)->count, 0);
    hurray_file_destroy(f);
    opt.parts = HURRAY_FILE_PARTS_INDEX | HURRAY_FILE_PARTS_KV;
    assert_true(hurray_file_create_memory(b, s.len, &opt, &f, &err) != HURRAY_OK);
    opt.parts = 8;
    assert_status(hurray_file_create_memory(s.bytes, s.len, &opt, &f, &err), HURRAY_E_ARGUMENT);
    free(b);
    std_free(&s);
}

/* hurray_file_kv_each's callback: counts, and compares with a map when given one. */
struct kv_seen {
    const struct hurray_kv *map;
    size_t calls;
};

static int kv_seen_entry(void *ctx, const struct hurray_kv_entry *e, size_t index, size_t count) {
    struct kv_seen *k = ctx;
    assert_int_equal(index, k->calls);
    k->calls++;
    if (k->map) {
        assert_int_equal(count, k->map->count);
        assert_true(hurray_kv_entries_equal(e, 1, &k->map->entries[index], 1));
    }
    return HURRAY_OK;
}

/* Opens `bytes` (from memory, or from `path` when given) with the KV part and with the
 * header part only; kv_each on the second must give what the first gave: its status and
 * error record, or its map entry by entry. Returns the status. */
static int kv_each_as_open(const uint8_t *bytes, size_t len, const char *path) {
    struct test_alloc ta;
    test_alloc_init(&ta, 0);
    struct hurray_file_options opt = {NULL, test_alloc_get(&ta), HURRAY_FILE_COPY,
                                      HURRAY_FILE_PARTS_KV};
    struct hurray_file *whole = NULL, *f = NULL;
    struct hurray_error e1, e2;
    if (path) {
        FILE *fp = fopen(path, "wb");
        assert_non_null(fp);
        assert_int_equal(fwrite(bytes, 1, len, fp), len);
        fclose(fp);
    }
    int st = path ? hurray_file_create_path(path, &opt, &whole, &e1)
                  : hurray_file_create_memory(bytes, len, &opt, &whole, &e1);
    opt.parts = HURRAY_FILE_PARTS_HEADER;
    assert_status(path ? hurray_file_create_path(path, &opt, &f, &e2)
                       : hurray_file_create_memory(bytes, len, &opt, &f, &e2),
                  HURRAY_OK);
    assert_int_equal(hurray_file_entry_count(f), 0);
    assert_int_equal(hurray_file_kv(f)->count, 0); /* nothing decoded at open */
    struct kv_seen seen = {st == HURRAY_OK ? hurray_file_kv(whole) : NULL, 0};
    test_error_poison(&e2);
    assert_status(hurray_file_kv_each(f, kv_seen_entry, &seen, &e2), st);
    if (st == HURRAY_OK) {
        assert_int_equal(seen.calls, hurray_file_kv(whole)->count);
        /* a file that decoded its map at open hands over the same entries */
        struct kv_seen again = {hurray_file_kv(whole), 0};
        assert_status(hurray_file_kv_each(whole, kv_seen_entry, &again, &e2), HURRAY_OK);
        assert_int_equal(again.calls, seen.calls);
    } else {
        assert_int_equal(seen.calls, 0); /* nothing partial */
        assert_int_equal(e2.code, e1.code);
        assert_int_equal(e2.has_offset, e1.has_offset);
        if (e1.has_offset) assert_int_equal(e2.offset, e1.offset);
        assert_string_equal(e2.field, e1.field);
        assert_string_equal(e2.message, e1.message);
    }
    hurray_file_destroy(whole);
    hurray_file_destroy(f);
    assert_alloc_clean(&ta);
    return st;
}

/* HR-FILE-9, HR-KV-12: the KV section read entry by entry after an open of the header
 * alone: the same entries, or the same refusal (status, field, offset and the message
 * naming the file), as an open that decodes the map; nothing is handed over from an
 * invalid section; a file without KV calls back never. */
static void test_HR_FILE_9_kv_each_as_open(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    char path[128];
    tmp_path(path, sizeof path, "bad.hry");
    assert_status(kv_each_as_open(s.bytes, s.len, NULL), HURRAY_OK);
    assert_status(kv_each_as_open(s.bytes, s.len, path), HURRAY_OK);
    size_t kvo = (size_t)test_get_u64(s.bytes + 32);
    uint8_t *b = dup_bytes(s.bytes, s.len);
    b[kvo + 12] = 0x7F; /* the first KV value's type: reserved */
    assert_status(kv_each_as_open(b, s.len, NULL), HURRAY_E_UNSUPPORTED);
    assert_status(kv_each_as_open(b, s.len, path), HURRAY_E_UNSUPPORTED);
    memcpy(b, s.bytes, s.len);
    b[kvo] = 1; /* entry_count 1 of 2: the second entry is bytes left over */
    assert_status(kv_each_as_open(b, s.len, path), HURRAY_E_LENGTH);
    memcpy(b, s.bytes, s.len);
    b[kvo + 8 + 8 + 3] = 'A'; /* the first key's padding */
    assert_status(kv_each_as_open(b, s.len, path), HURRAY_E_RESERVED_NONZERO);
    free(b);
    /* no KV section at all */
    struct hurray_file_contents c = {s.entries, 3, NULL, 0};
    struct hurray_error err;
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);
    struct hurray_file_options opt = {NULL, NULL, HURRAY_FILE_COPY, HURRAY_FILE_PARTS_HEADER};
    struct hurray_file *f = NULL;
    assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_OK);
    struct kv_seen seen = {NULL, 0};
    assert_status(hurray_file_kv_each(f, kv_seen_entry, &seen, &err), HURRAY_OK);
    assert_int_equal(seen.calls, 0);
    assert_status(hurray_file_kv_each(f, NULL, &seen, &err), HURRAY_E_ARGUMENT);
    hurray_file_destroy(f);
    unlink(path);
    std_free(&s);
}

/* Gaps are checked at open (every entry), batched, but reported in decoding
 * order: before a later entry's fault, after an earlier one's. Many gaps far
 * apart and close together, from memory and from a path. */
static void test_HR_FILE_9_gaps_checked_at_open_in_order(void **state) {
    (void)state;
    enum { N = 1500 };
    struct hurray_descriptor *d = test_desc_new(HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 1,
                                           (uint64_t[]){5});
    test_fill_buffers(d, 0);
    static struct hurray_item items[N];
    static struct hurray_file_entry e[N];
    static char names[N][8];
    static uint8_t bytes[N][5];
    struct hurray_item_buffer *bufs = calloc(N, sizeof *bufs);
    assert_non_null(bufs);
    for (size_t i = 0; i < N; i++) {
        memset(bytes[i], (int)(i % 250) + 1, 5);
        bufs[i].data = bytes[i];
        bufs[i].size = 5;
        items[i].descriptor = d;
        items[i].buffers = &bufs[i];
        snprintf(names[i], sizeof names[i], "t%zu", i);
        e[i].name = names[i];
        e[i].item = &items[i];
    }
    size_t len = 0;
    uint8_t *img = encode_ok(e, N, NULL, 0, &len);
    uint64_t doff = test_get_u64(img + 48);
    char path[128];
    tmp_path(path, sizeof path, "gaps.hry");
    struct { size_t entry; int later_fault; } cases[] = {{0, 0}, {1100, 0}, {N - 1, 0}, {7, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint8_t *b = dup_bytes(img, len);
        char field[64];
        size_t gap = (size_t)doff + 64 * cases[c].entry + 5 + 3; /* inside the gap after it */
        b[gap] = 0x5A;
        if (cases[c].later_fault) {
            struct loc l = locate(b, cases[c].entry + 2);
            b[l.entry + 4] = 0x03; /* a later entry's kind: RESERVED_TAG */
        }
        /* the gap follows entry k's buffer: it is the gap before entry k+1's */
        snprintf(field, sizeof field, "index[%zu].buffers[0]", cases[c].entry + 1);
        const char *want = cases[c].entry == N - 1 ? "data.padding" : field;
        expect_open(b, len, NULL, HURRAY_E_RESERVED_NONZERO, want);
        FILE *fp = fopen(path, "wb");
        assert_non_null(fp);
        assert_int_equal(fwrite(b, 1, len, fp), len);
        fclose(fp);
        for (int mode = HURRAY_FILE_COPY; mode <= HURRAY_FILE_MMAP; mode++) {
            struct hurray_file_options opt = {NULL, NULL, mode, HURRAY_FILE_PARTS_ALL};
            struct hurray_file *f = NULL;
            struct hurray_error err;
            assert_status(hurray_file_create_path(path, &opt, &f, &err),
                          HURRAY_E_RESERVED_NONZERO);
            assert_hurray_error(&err, HURRAY_E_RESERVED_NONZERO, want);
            assert_int_equal(err.offset, gap);
            if (cases[c].entry != N - 1) { /* the message names the entry and the file */
                char who[64];
                snprintf(who, sizeof who, "entry \"t%zu\" (index[%zu])", cases[c].entry + 1,
                         cases[c].entry + 1);
                assert_non_null(strstr(err.message, who));
                assert_non_null(strstr(err.message, path));
            }
        }
        free(b);
    }
    /* a fault before the gap wins: entry 3's kind, gap after entry 900 */
    uint8_t *b = dup_bytes(img, len);
    b[doff + 64 * 900 + 6] = 1;
    b[locate(b, 3).entry + 4] = 0x03;
    expect_open(b, len, NULL, HURRAY_E_RESERVED_TAG, "index[3].kind");
    free(b);
    expect_open(img, len, NULL, HURRAY_OK, NULL);
    unlink(path);
    free(img);
    free(bufs);
    hurray_descriptor_reset(d);
    free(d);
}

/* Truncated after open: loading reads (copy) or maps (mmap) a range the file
 * no longer holds: TRUNCATED naming the path, never a signal; nothing leaks,
 * and items loaded before stay valid. */
static void test_HR_FILE_12_truncated_after_open(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    char path[128];
    tmp_path(path, sizeof path, "cut.hry");
    struct hurray_file_contents c = {s.entries, 3, s.kv, 2};
    struct hurray_error err;
    for (int mode = HURRAY_FILE_COPY; mode <= HURRAY_FILE_MMAP; mode++) {
        assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);
        struct test_alloc ta;
        test_alloc_init(&ta, 0);
        struct hurray_file_options opt = {NULL, test_alloc_get(&ta), mode, HURRAY_FILE_PARTS_ALL};
        struct hurray_file *f = NULL;
        struct hurray_item *first = NULL, *out[3] = {NULL, NULL, NULL};
        assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_OK);
        assert_status(hurray_file_load_item(f, 0, &first, &err), HURRAY_OK);
        if (mode == HURRAY_FILE_COPY) assert_int_equal(truncate(path, 4096), 0);
        else assert_int_equal(truncate(path, 4096 + 64), 0); /* "a" stays, "q" does not */
        size_t idx[3] = {0, hurray_file_top_level_entry(f, 1), hurray_file_top_level_entry(f, 2)};
        test_error_poison(&err);
        assert_status(hurray_file_load_items(f, idx, 3, out, &err), HURRAY_E_TRUNCATED);
        assert_non_null(strstr(err.message, path));
        assert_null(out[0]);
        assert_null(out[1]);
        assert_null(out[2]);
        hurray_file_destroy(f);
        assert_items_equal(s.items[0], first); /* loaded before: its own bytes */
        hurray_item_destroy(first);
        assert_alloc_clean(&ta);
    }
    unlink(path);
    std_free(&s);
}

/* Truncated while it is opened: an allocator that truncates the file on its
 * k-th call cuts it between any two of open's reads. Every k gives OK (the
 * cut came after the last read) or TRUNCATED naming the path; never a signal. */
struct cutting_alloc {
    struct hurray_allocator base;
    const char *path;
    off_t to;
    unsigned long calls, at;
};

static void *cut_alloc(void *ctx, size_t n) {
    struct cutting_alloc *c = ctx;
    if (++c->calls == c->at) assert_int_equal(truncate(c->path, c->to), 0);
    return malloc(n ? n : 1);
}

static void cut_free(void *ctx, void *p, size_t n) {
    (void)ctx;
    (void)n;
    free(p);
}

static void test_HR_FILE_12_truncated_while_opened(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    char path[128];
    tmp_path(path, sizeof path, "cut.hry");
    struct hurray_file_contents c = {s.entries, 3, s.kv, 2};
    struct hurray_error err;
    unsigned truncated = 0, ok = 0;
    for (unsigned long at = 1; at < 64; at++) {
        for (int mode = HURRAY_FILE_COPY; mode <= HURRAY_FILE_MMAP; mode++) {
            assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);
            struct cutting_alloc ca = {{cut_alloc, cut_free, NULL}, path, 100, 0, at};
            ca.base.ctx = &ca;
            struct hurray_file_options opt = {NULL, &ca.base, mode, HURRAY_FILE_PARTS_ALL};
            struct hurray_file *f = NULL;
            int st = hurray_file_create_path(path, &opt, &f, &err);
            if (st == HURRAY_OK) {
                ok++;
                struct hurray_item *it = NULL;
                st = hurray_file_load_item(f, 0, &it, &err); /* the data is gone by now */
                hurray_item_destroy(it);
                hurray_file_destroy(f);
            }
            if (st != HURRAY_OK) {
                assert_status(st, HURRAY_E_TRUNCATED);
                assert_non_null(strstr(err.message, path));
                truncated++;
            }
        }
    }
    assert_true(truncated > 0 && ok > 0);
    unlink(path);
    std_free(&s);
}

/* HR-FILE-10: special files are refused before anything can block. */
static void test_HR_FILE_10_special_files(void **state) {
    (void)state;
    char path[128];
    struct hurray_file *f = NULL;
    struct hurray_error err;
    tmp_path(path, sizeof path, "fifo.hry");
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(20); /* a blocking open would hang here: SIGALRM ends the test run */
    for (int mode = HURRAY_FILE_COPY; mode <= HURRAY_FILE_MMAP; mode++) {
        struct hurray_file_options opt = {NULL, NULL, mode, HURRAY_FILE_PARTS_ALL};
        assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_E_IO);
        assert_non_null(strstr(err.message, "FIFO"));
        assert_non_null(strstr(err.message, path));
        assert_true(err.sys_errno != 0);
    }
    assert_status(hurray_file_create_path("/dev/null", NULL, &f, &err), HURRAY_E_IO);
    assert_non_null(strstr(err.message, "character device"));
    alarm(0);
    unlink(path);
}

/* Items loaded together: copy mode gives each its own bytes; mmap mode shares
 * one mapping among items within 1 MiB and maps far ones apart; a name asked
 * twice gets two items; out of range is ARGUMENT with every out[k] NULL. */
/* HR-FILE-8: from an image in memory, an item with no bytes holds nothing of the image (as
 * in copy and mmap mode): once the file is gone only the items remain, while an item with
 * bytes keeps the image. */
static void test_HR_FILE_8_empty_items_hold_no_image(void **state) {
    (void)state;
    struct hurray_descriptor *de = test_desc_new(HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 1,
                                            (uint64_t[]){0});
    struct hurray_descriptor *dx = test_desc_new(HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 1,
                                            (uint64_t[]){4096});
    test_fill_buffers(de, 0);
    test_fill_buffers(dx, 0);
    struct hurray_item *ie = tensor_item(de, 1), *ix = tensor_item(dx, 2);
    struct hurray_file_entry e[2] = {{"empty", ie}, {"x", ix}};
    size_t len = 0;
    uint8_t *bytes = encode_ok(e, 2, NULL, 0, &len);
    struct test_alloc ta;
    test_alloc_init(&ta, 0);
    struct hurray_file_options opt = {NULL, test_alloc_get(&ta), HURRAY_FILE_COPY,
                                      HURRAY_FILE_PARTS_INDEX};
    struct hurray_file *f = NULL;
    struct hurray_error err;
    struct hurray_item *empty = NULL, *x = NULL;
    assert_status(hurray_file_create_memory(bytes, len, &opt, &f, &err), HURRAY_OK);
    assert_status(hurray_file_load_item(f, 0, &empty, &err), HURRAY_OK);
    assert_null(empty->owner);
    assert_int_equal(empty->buffers[0].size, 0);
    hurray_file_destroy(f);
    assert_true(ta.live_bytes < len); /* the image went with the file */
    assert_status(hurray_file_create_memory(bytes, len, &opt, &f, &err), HURRAY_OK);
    assert_status(hurray_file_load_item(f, 1, &x, &err), HURRAY_OK);
    assert_non_null(x->owner);
    hurray_file_destroy(f);
    assert_true(ta.live_bytes >= len); /* x borrows from the image */
    assert_memory_equal(x->buffers[0].data, ix->buffers[0].data, 4096);
    hurray_item_destroy(x);
    hurray_item_destroy(empty);
    assert_alloc_clean(&ta);
    free(bytes);
    hurray_item_destroy(ie);
    hurray_item_destroy(ix);
}

static void test_HR_FILE_8_load_items(void **state) {
    (void)state;
    char path[128];
    uint8_t d0[256], d1[256], d2[256];
    uint64_t doff = 0;
    tmp_path(path, sizeof path, "three.hry");
    static const uint8_t x[4] = {9, 8, 7, 6};
    struct raw_entry re[3] = {
        {"a", HURRAY_FILE_KIND_TENSOR, d0, uint8_vector_desc(4, d0, sizeof d0)},
        {"hole", HURRAY_FILE_KIND_TENSOR, d1, uint8_vector_desc(8u << 20, d1, sizeof d1)},
        {"c", HURRAY_FILE_KIND_TENSOR, d2, uint8_vector_desc(4, d2, sizeof d2)}};
    struct fill fl[2] = {{0, 0, x, 4}, {2, 0, x, 4}};
    sparse_file(path, re, 3, fl, 2, &doff);
    for (int mode = HURRAY_FILE_COPY; mode <= HURRAY_FILE_MMAP; mode++) {
        struct test_alloc ta;
        test_alloc_init(&ta, 0);
        struct hurray_file_options opt = {NULL, test_alloc_get(&ta), mode, HURRAY_FILE_PARTS_ALL};
        struct hurray_file *f = NULL;
        struct hurray_error err;
        struct hurray_item *out[4] = {NULL, NULL, NULL, NULL};
        size_t nmaps = 0;
        assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_OK);
        size_t idx[4] = {0, 2, 0, 7};
        assert_status(hurray_file_load_items(f, idx, 4, out, &err), HURRAY_E_ARGUMENT);
        for (int k = 0; k < 4; k++) assert_null(out[k]);
        assert_status(hurray_file_load_items(f, idx, 3, out, &err), HURRAY_OK);
        for (int k = 0; k < 3; k++) assert_memory_equal(out[k]->buffers[0].data, x, 4);
        /* the same entry twice: its own copy each, or the same copy-on-write pages */
        assert_true((out[0]->buffers[0].data == out[2]->buffers[0].data) ==
                    (mode == HURRAY_FILE_MMAP));
        mapped_bytes(path, &nmaps);
        assert_int_equal(nmaps, mode == HURRAY_FILE_MMAP ? 2 : 0); /* a, a: one; c: 8 MiB on */
        out[0]->buffers[0].data[0] = 1; /* writable; copy-on-write when mapped */
        assert_int_equal(out[2]->buffers[0].data[0], mode == HURRAY_FILE_MMAP ? 1 : 9);
        assert_status(hurray_file_load_items(f, idx, 0, out + 3, &err), HURRAY_OK);
        hurray_file_destroy(f);
        for (int k = 0; k < 3; k++) hurray_item_destroy(out[k]);
        assert_alloc_clean(&ta);
        assert_int_equal(mapped_bytes(path, &nmaps), 0);
    }
    /* the file itself never changed */
    FILE *fp = fopen(path, "rb");
    uint8_t back[4];
    assert_non_null(fp);
    assert_int_equal(fseek(fp, (long)doff, SEEK_SET), 0);
    assert_int_equal(fread(back, 1, 4, fp), 4);
    fclose(fp);
    assert_memory_equal(back, x, 4);
    unlink(path);
}

/* HR-FILE-11: a mapped item is writable and copy-on-write: writing every
 * buffer neither faults nor reaches the file; a later load sees the file. */
static void test_HR_FILE_11_mapped_items_are_copy_on_write(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    char path[128];
    tmp_path(path, sizeof path, "cow.hry");
    struct hurray_file_contents c = {s.entries, 3, s.kv, 2};
    struct hurray_error err;
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);
    struct hurray_file_options opt = {NULL, NULL, HURRAY_FILE_MMAP, HURRAY_FILE_PARTS_ALL};
    struct hurray_file *f = NULL;
    struct hurray_item *it = NULL, *again = NULL;
    assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_OK);
    assert_status(hurray_file_load_item(f, 1, &it, &err), HURRAY_OK);
    for (unsigned b = 0; b < it->descriptor->buffer_count; b++)
        memset(it->buffers[b].data, 0xEE, (size_t)it->buffers[b].size);
    assert_status(hurray_file_load_item(f, 1, &again, &err), HURRAY_OK);
    assert_items_equal(s.items[1], again); /* a new mapping: the file's bytes */
    assert_int_equal(it->buffers[0].data[0], 0xEE);
    hurray_item_destroy(it);
    hurray_item_destroy(again);
    hurray_file_destroy(f);
    FILE *fp = fopen(path, "rb");
    uint8_t *disk = malloc(s.len);
    assert_non_null(fp);
    assert_non_null(disk);
    assert_int_equal(fread(disk, 1, s.len, fp), s.len);
    fclose(fp);
    assert_bytes_equal(disk, s.len, s.bytes, s.len);
    free(disk);
    unlink(path);
    std_free(&s);
}

/* HR-FILE-13: what an open file holds. A counting allocator that sets the
 * descriptor records apart: the file reader's own bytes (everything else) at
 * their peak, opening and loading every top-level entry at once, are at most
 * 8 x the file + 1 MiB; with a compact descriptor record (<= 1 KiB) so is the
 * total. 2^18 top-level tensors; a 65,536-member composite. While the record
 * is large, the load-everything part runs at a reduced count (its total would
 * be gigabytes of records). */
struct record_alloc {
    struct hurray_allocator base;
    size_t live, records, peak_own, peak_total;
};

static void *rec_alloc(void *ctx, size_t n) {
    struct record_alloc *r = ctx;
    void *p = malloc(n ? n : 1);
    if (!p) return NULL;
    r->live += n;
    if (n == sizeof(struct hurray_descriptor)) r->records += n;
    if (r->live - r->records > r->peak_own) r->peak_own = r->live - r->records;
    if (r->live > r->peak_total) r->peak_total = r->live;
    return p;
}

static void rec_free(void *ctx, void *p, size_t n) {
    struct record_alloc *r = ctx;
    if (!p) return;
    r->live -= n;
    if (n == sizeof(struct hurray_descriptor)) r->records -= n;
    free(p);
}

static void check_reader_memory(const char *path, int load) {
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    uint64_t bound = 8 * (uint64_t)st.st_size + (1u << 20);
    for (int mode = HURRAY_FILE_COPY; mode <= HURRAY_FILE_MMAP; mode++) {
        struct record_alloc ra = {{rec_alloc, rec_free, NULL}, 0, 0, 0, 0};
        ra.base.ctx = &ra;
        struct hurray_file_options opt = {NULL, &ra.base, mode, HURRAY_FILE_PARTS_ALL};
        struct hurray_file *f = NULL;
        struct hurray_error err;
        assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_OK);
        size_t n = hurray_file_top_level_count(f);
        struct hurray_item **items = calloc(n, sizeof *items);
        size_t *idx = calloc(n, sizeof *idx);
        assert_non_null(items);
        assert_non_null(idx);
        for (size_t k = 0; k < n; k++) idx[k] = hurray_file_top_level_entry(f, k);
        if (load) assert_status(hurray_file_load_items(f, idx, n, items, &err), HURRAY_OK);
        hurray_file_destroy(f);
        for (size_t k = 0; k < n; k++) hurray_item_destroy(items[k]);
        free(items);
        free(idx);
        if (ra.peak_own > bound || (sizeof(struct hurray_descriptor) <= 1024 &&
                                    ra.peak_total > bound))
            print_error("%s: own %zu, total %zu, bound %llu\n", path, ra.peak_own,
                        ra.peak_total, (unsigned long long)bound);
        assert_true(ra.peak_own <= bound);
        if (sizeof(struct hurray_descriptor) <= 1024) assert_true(ra.peak_total <= bound);
        assert_int_equal(ra.live, 0);
    }
}

static void write_many(const char *path, size_t n, int composite) {
    struct hurray_descriptor *d = test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 1,
                                           (uint64_t[]){10});
    test_fill_buffers(d, 0);
    static const float ten[10];
    struct hurray_item_buffer buf = {(uint8_t *)(uintptr_t)ten, 40};
    struct hurray_item *items = calloc(n, sizeof *items), **members = calloc(n, sizeof *members);
    struct hurray_file_entry *e = calloc(n, sizeof *e);
    char *names = malloc(n * 12);
    assert_true(items && members && e && names);
    for (size_t i = 0; i < n; i++) {
        items[i].descriptor = d; /* one descriptor, shared: the writer only reads it */
        items[i].buffers = &buf;
        members[i] = &items[i];
        snprintf(names + 12 * i, 12, "t%07zu", i);
        e[i].name = names + 12 * i;
        e[i].item = &items[i];
    }
    struct hurray_descriptor *h = head_new(HURRAY_RULE_GROUP, HURRAY_COMBINE_NONE, (uint32_t)n,
                                           1, (uint64_t[]){n});
    struct hurray_item head = {h, NULL, members, (uint32_t)n, 0, NULL, NULL, NULL};
    struct hurray_file_entry one = {"c", &head};
    struct hurray_file_contents c = {composite ? &one : e, composite ? 1 : n, NULL, 0};
    struct hurray_error err;
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);
    free(items);
    free(members);
    free(e);
    free(names);
    hurray_descriptor_reset(d);
    free(d);
    hurray_descriptor_reset(h);
    free(h);
}

/* Under valgrind the same checks run over 16 times fewer entries (the bound's 1 MiB of slack
 * then carries more of it; the plain run holds the bound at full size). */
static void test_HR_FILE_13_reader_memory(void **state) {
    (void)state;
    char path[128];
    int compact = sizeof(struct hurray_descriptor) <= 1024;
    unsigned shift = test_under_valgrind() ? 4 : 0;
    tmp_path(path, sizeof path, "many.hry");
    write_many(path, ((size_t)1 << 18) >> shift, 0);
    check_reader_memory(path, compact); /* open (and load all, when compact): 2^18 entries */
    if (!compact) {
        write_many(path, (size_t)1 << 12, 0);
        check_reader_memory(path, 1);
    }
    write_many(path, (compact ? (size_t)1 << 16 : (size_t)1 << 10) >> shift, 1);
    check_reader_memory(path, 1);
    unlink(path);
}

/* HR-FILE-7: a file of 2000 buffers is written with a handful of vectored
 * writes (the kernel's count of write calls, /proc/self/io), into a new file
 * that keeps the replaced one's mode. */
static long proc_io(const char *key) {
    FILE *fp = fopen("/proc/self/io", "r");
    char line[128];
    long v = -1;
    if (!fp) return -1;
    while (fgets(line, sizeof line, fp))
        if (strncmp(line, key, strlen(key)) == 0) v = atol(line + strlen(key) + 2);
    fclose(fp);
    return v;
}

static void test_HR_FILE_7_few_writes_and_mode_kept(void **state) {
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "w.hry");
    write_many(path, 8, 0);
    assert_int_equal(chmod(path, 0640), 0);
    long before = proc_io("syscw");
    write_many(path, 2000, 0);
    long after = proc_io("syscw");
    /* (valgrind's own writes land in the same counter: it is not counted there) */
    if (before >= 0 && !test_under_valgrind()) assert_true(after - before <= 16);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    struct hurray_file *f = NULL;
    struct hurray_error err;
    assert_status(hurray_file_create_path(path, NULL, &f, &err), HURRAY_OK);
    assert_int_equal(hurray_file_top_level_count(f), 2000);
    hurray_file_destroy(f);
    unlink(path);
}

/* ==== writing for a reader's limits; temporary files ===================================== */

/* HR-FILE-15: given a reader's limits, the writer refuses (LIMIT, naming the entry) what that
 * reader would refuse, before anything is written; with the defaults the file reads back. */
static void test_HR_FILE_15_writer_refuses_what_a_reader_would(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    char path[128];
    tmp_path(path, sizeof path, "a.hry");
    unlink(path);
    struct hurray_file_contents c = {s.entries, 3, s.kv, 2};
    struct hurray_limits lim;
    struct hurray_file_write_options opt = {NULL, &lim, NULL, NULL, 0};
    struct hurray_error err;
    uint64_t len = 0;

    hurray_limits_default(&lim);
    lim.max_buffer_bytes = 1;
    assert_status(hurray_file_write_path(path, &c, &opt, &err), HURRAY_E_LIMIT);
    assert_non_null(strstr(err.message, "entry \"a\""));
    assert_non_null(strstr(err.message, "max_buffer_bytes"));
    assert_true(strncmp(err.field, "index[0]/", 9) == 0);
    assert_int_equal(access(path, F_OK), -1); /* nothing written */

    hurray_limits_default(&lim);
    lim.max_file_tensors = 2;
    assert_status(hurray_file_encoded_len(&c, &opt, &len, &err), HURRAY_E_LIMIT);
    assert_string_equal(err.field, "index");

    hurray_limits_default(&lim);
    lim.max_name_bytes = 0; /* every name is longer */
    assert_status(hurray_file_encoded_len(&c, &opt, &len, &err), HURRAY_E_LIMIT);

    hurray_limits_default(&lim);
    lim.max_kv_bytes = 8;
    assert_status(hurray_file_encoded_len(&c, &opt, &len, &err), HURRAY_E_LIMIT);
    assert_string_equal(err.field, "kv");
    lim.max_kv_bytes = UINT64_MAX;
    lim.max_kv_entries = 1;
    assert_status(hurray_file_encoded_len(&c, &opt, &len, &err), HURRAY_E_LIMIT);

    /* the defaults: written, and read back by a reader with the same limits */
    hurray_limits_default(&lim);
    assert_status(hurray_file_write_path(path, &c, &opt, &err), HURRAY_OK);
    struct hurray_file_options ro = {&lim, NULL, HURRAY_FILE_COPY, HURRAY_FILE_PARTS_ALL};
    struct hurray_file *f = NULL;
    assert_status(hurray_file_create_path(path, &ro, &f, &err), HURRAY_OK);
    assert_status(load_everything(f, &err), HURRAY_OK);
    hurray_file_destroy(f);
    unlink(path);

    /* the writer validates each descriptor once, under the reader's limits clamped to the
     * format maxima, which proves the format's rules too: a descriptor that breaks a format
     * rule (no limit) is refused as without limits, naming the entry, even under limits
     * above every format maximum */
    uint8_t dtype = s.items[0]->descriptor->dtype;
    s.items[0]->descriptor->dtype = 0xFF;
    int bare = hurray_file_encoded_len(&c, NULL, &len, &err);
    assert_true(bare != HURRAY_OK && bare != HURRAY_E_LIMIT);
    hurray_limits_default(&lim);
    assert_status(hurray_file_encoded_len(&c, &opt, &len, &err), bare);
    assert_non_null(strstr(err.message, "entry \"a\""));
    lim = (struct hurray_limits){UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX, UINT64_MAX,
                                 UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT64_MAX, UINT64_MAX};
    assert_status(hurray_file_encoded_len(&c, &opt, &len, &err), bare);
    assert_non_null(strstr(err.message, "entry \"a\""));
    assert_status(hurray_file_write_path(path, &c, &opt, &err), bare);
    assert_int_equal(access(path, F_OK), -1); /* nothing written */
    s.items[0]->descriptor->dtype = dtype;
    assert_status(hurray_file_encoded_len(&c, &opt, &len, &err), HURRAY_OK);
    std_free(&s);
}

/* The writer plans each top-level entry's tree in one pass (its descriptors, then the tree,
 * its names, its placement), yet refuses in the order of checking every descriptor first,
 * then every tree, then the names: a bad descriptor after a bad tree is the one reported,
 * and a bad tree before a duplicate name. */
static void test_HR_FILE_15_writer_refusal_order(void **state) {
    (void)state;
    struct hurray_item *p = partition_item(); /* entries 0-2: p, p.0, p.1 */
    struct hurray_item *t = catalogue_item(0), *u = catalogue_item(0);
    struct hurray_error err;
    uint64_t len = 0;
    struct hurray_file_entry e[3] = {{"p", p}, {"t", t}, {"u", u}};
    struct hurray_file_contents c = {e, 3, NULL, 0};
    assert_status(hurray_file_encoded_len(&c, NULL, &len, &err), HURRAY_OK);

    test_patch_shard(p->members[1]->descriptor, 1, 0, 0); /* overlapping partition boxes */
    assert_status(hurray_file_encoded_len(&c, NULL, &len, &err), HURRAY_E_CONSTRAINT);
    assert_true(strncmp(err.field, "index[0]/", 9) == 0);
    assert_non_null(strstr(err.message, "entry \"p\""));

    uint8_t dtype = t->descriptor->dtype;
    t->descriptor->dtype = 0xFF; /* entry 3's descriptor: reported before entry 0's tree */
    int bad = hurray_file_encoded_len(&c, NULL, &len, &err);
    assert_true(bad != HURRAY_OK && bad != HURRAY_E_CONSTRAINT);
    assert_true(strncmp(err.field, "index[3]/", 9) == 0);
    assert_non_null(strstr(err.message, "entry \"t\""));
    t->descriptor->dtype = dtype;

    e[2].name = "t"; /* a duplicate name too: the tree is still the one reported */
    assert_status(hurray_file_encoded_len(&c, NULL, &len, &err), HURRAY_E_CONSTRAINT);
    assert_true(strncmp(err.field, "index[0]/", 9) == 0);
    e[0].item = t; /* no bad tree left: the duplicate (the second "t", entry 2) */
    e[1].item = u;
    e[2].item = catalogue_item(0);
    assert_status(hurray_file_encoded_len(&c, NULL, &len, &err), HURRAY_E_DUPLICATE);
    assert_string_equal(err.field, "index[2].name");
    hurray_item_destroy((struct hurray_item *)(uintptr_t)e[2].item);
    hurray_item_destroy(p);
    hurray_item_destroy(t);
    hurray_item_destroy(u);
}

/* Names of every length the writer's name table hashes by words (1 to 40 bytes, sharing
 * prefixes and suffixes): all accepted, and each one's duplicate refused. */
static void test_HR_FILE_5_writer_duplicate_names_every_length(void **state) {
    (void)state;
    enum { N = 40 };
    static char names[N + 1][48];
    struct hurray_file_entry e[N + 1];
    struct hurray_item *t = catalogue_item(0);
    struct hurray_error err;
    uint64_t len = 0;
    for (unsigned i = 0; i < N; i++) {
        memset(names[i], 'w', i + 1); /* "w", "ww", ... : each a prefix of the next */
        names[i][i] = (char)('a' + i % 26);
        names[i][i + 1] = 0;
        e[i] = (struct hurray_file_entry){names[i], t};
    }
    struct hurray_file_contents c = {e, N, NULL, 0};
    assert_status(hurray_file_encoded_len(&c, NULL, &len, &err), HURRAY_OK);
    for (unsigned i = 0; i < N; i++) {
        memcpy(names[N], names[i], sizeof names[N]);
        e[N] = (struct hurray_file_entry){names[N], t};
        c.count = N + 1;
        assert_status(hurray_file_encoded_len(&c, NULL, &len, &err), HURRAY_E_DUPLICATE);
        assert_string_equal(err.field, "index[40].name");
    }
    hurray_item_destroy(t);
}

struct progress_log {
    uint64_t calls, first_done, last_done, total;
    int cancel_at; /* cancel on this call (1-based); 0: never */
    char seen_tmp[256];
};

static int progress_hook(void *ctx, uint64_t done, uint64_t total) {
    struct progress_log *l = ctx;
    if (l->calls++ == 0) l->first_done = done;
    l->last_done = done;
    l->total = total;
    DIR *d = opendir(tmp_dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".hurray-tmp-")) snprintf(l->seen_tmp, sizeof l->seen_tmp, "%s", e->d_name);
    if (d) closedir(d);
    return l->cancel_at > 0 && l->calls == (uint64_t)l->cancel_at;
}

static int count_temps(void) {
    int n = 0;
    DIR *d = opendir(tmp_dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) n += strstr(e->d_name, ".hurray-tmp-") != NULL;
    if (d) closedir(d);
    return n;
}

/* HR-FILE-16: the temporary name, the progress hook, cancelling, and removing the leftovers of
 * dead writers of the same target (never a live process's). */
static void test_HR_FILE_16_temporary_files_progress_and_cancel(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    char path[128];
    tmp_path(path, sizeof path, "a.hry");
    unlink(path);
    struct hurray_file_contents c = {s.entries, 3, s.kv, 2};
    struct progress_log log;
    struct hurray_file_write_options opt = {NULL, NULL, progress_hook, &log, 0};
    struct hurray_error err;

    memset(&log, 0, sizeof log);
    assert_status(hurray_file_write_path(path, &c, &opt, &err), HURRAY_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(log.calls >= 2);
    assert_true(log.first_done == 0 && log.last_done == log.total);
    assert_int_equal((uint64_t)st.st_size, log.total);
    /* "a.hry.hurray-tmp-<8 hex>-<pid>-<hex>" */
    char host[9];
    unsigned long pid = 0;
    assert_int_equal(sscanf(log.seen_tmp, "a.hry.hurray-tmp-%8[0-9a-f]-%lu-", host, &pid), 2);
    assert_int_equal(strlen(host), 8);
    assert_int_equal(pid, (unsigned long)getpid());
    assert_int_equal(count_temps(), 0);

    /* cancelled: IO/ECANCELED, the target as it was, no temporary file */
    memset(&log, 0, sizeof log);
    log.cancel_at = 1;
    uint8_t before[64];
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0 && read(fd, before, sizeof before) == (ssize_t)sizeof before);
    close(fd);
    struct hurray_file_contents c2 = {s.entries, 1, NULL, 0};
    assert_status(hurray_file_write_path(path, &c2, &opt, &err), HURRAY_E_IO);
    assert_int_equal(err.sys_errno, ECANCELED);
    assert_int_equal(count_temps(), 0);
    uint8_t after[64];
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0 && read(fd, after, sizeof after) == (ssize_t)sizeof after);
    close(fd);
    assert_memory_equal(before, after, sizeof before);

    /* leftovers: a dead process's of this host and target is removed; a live process's,
     * another host's and another target's are kept */
    pid_t child = fork();
    if (child == 0) _exit(0);
    assert_true(child > 0);
    waitpid(child, NULL, 0);
    const char *names[4][2] = {{"a.hry", "dead"}, {"a.hry", "live"}, {"b.hry", "dead"},
                               {"a.hry", "host"}};
    char made[4][512];
    for (int k = 0; k < 4; k++) {
        unsigned long p = strcmp(names[k][1], "live") == 0 ? (unsigned long)getppid()
                                                             : (unsigned long)child;
        snprintf(made[k], sizeof made[k], "%s/%s.hurray-tmp-%s-%lu-1", tmp_dir, names[k][0],
                 strcmp(names[k][1], "host") == 0 ? "00000000" : host, p);
        fd = open(made[k], O_WRONLY | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0);
        close(fd);
    }
    assert_status(hurray_file_write_path(path, &c, NULL, &err), HURRAY_OK);
    assert_int_equal(access(made[0], F_OK), -1);
    for (int k = 1; k < 4; k++) {
        assert_int_equal(access(made[k], F_OK), 0);
        unlink(made[k]);
    }
    unlink(path);
    std_free(&s);
}

/* HR-FILE-14: a byte range of one buffer, read with nothing else of the file
 * (memory and path, both modes); ranges outside the buffer, a composite head
 * and a missing buffer are ARGUMENT. HR-FILE-6: a fault inside an entry names
 * the entry (its name and index) and the file in the message. */
static void test_HR_FILE_14_read_buffer_range(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    char path[128];
    tmp_path(path, sizeof path, "range.hry");
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(s.bytes, 1, s.len, fp), s.len);
    fclose(fp);
    const struct hurray_item *a = s.items[0];
    uint64_t size = a->buffers[0].size;
    assert_true(size >= 4);
    for (int how = 0; how < 3; how++) {
        struct hurray_file_options opt = {NULL, NULL, how == 2 ? HURRAY_FILE_MMAP : HURRAY_FILE_COPY,
                                          HURRAY_FILE_PARTS_ALL};
        struct hurray_file *f = NULL;
        struct hurray_error err;
        if (how == 0)
            assert_status(hurray_file_create_memory(s.bytes, s.len, &opt, &f, &err), HURRAY_OK);
        else
            assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_OK);
        size_t ia = 0, ig = 0;
        assert_true(hurray_file_find(f, "a", &ia));
        assert_true(hurray_file_find(f, "g", &ig));
        uint8_t *dst = malloc((size_t)size);
        assert_non_null(dst);
        for (uint64_t off = 0; off < size; off += size / 3 ? size / 3 : 1) {
            uint64_t n = size - off < 5 ? size - off : 5;
            memset(dst, 0xEE, (size_t)size);
            assert_status(hurray_file_read_buffer(f, ia, 0, off, n, dst, &err), HURRAY_OK);
            assert_memory_equal(dst, a->buffers[0].data + off, (size_t)n);
        }
        assert_status(hurray_file_read_buffer(f, ia, 0, 0, size, dst, &err), HURRAY_OK);
        assert_memory_equal(dst, a->buffers[0].data, (size_t)size);
        assert_status(hurray_file_read_buffer(f, ia, 0, size, 0, dst, &err), HURRAY_OK);
        assert_status(hurray_file_read_buffer(f, ia, 0, 1, size, dst, &err), HURRAY_E_ARGUMENT);
        assert_status(hurray_file_read_buffer(f, ia, 0, UINT64_MAX, 2, dst, &err),
                      HURRAY_E_ARGUMENT);
        assert_status(hurray_file_read_buffer(f, ia, 0, 2, UINT64_MAX, dst, &err),
                      HURRAY_E_ARGUMENT);
        assert_status(hurray_file_read_buffer(f, ia, 9, 0, 1, dst, &err), HURRAY_E_ARGUMENT);
        assert_status(hurray_file_read_buffer(f, ig, 0, 0, 1, dst, &err), HURRAY_E_ARGUMENT);
        assert_status(hurray_file_read_buffer(f, 999, 0, 0, 1, dst, &err), HURRAY_E_ARGUMENT);
        assert_status(hurray_file_read_buffer(f, ia, 0, 0, 1, NULL, &err), HURRAY_E_ARGUMENT);
        free(dst);
        hurray_file_destroy(f);
    }
    /* a fault in entry "q"'s descriptor names "q", its index and the path */
    uint8_t *b = dup_bytes(s.bytes, s.len);
    struct loc l = locate(b, 1);
    b[l.desc + 12] = 0x01; /* reserved bytes 12-15: RESERVED_NONZERO */
    fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(b, 1, s.len, fp), s.len);
    fclose(fp);
    struct hurray_file *f = NULL;
    struct hurray_error err;
    assert_int_not_equal(hurray_file_create_path(path, NULL, &f, &err), HURRAY_OK);
    assert_non_null(strstr(err.message, "entry \"q\" (index[1])"));
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.field, "index[1]"));
    free(b);
    unlink(path);
    std_free(&s);
}

struct load_log {
    uint64_t calls, last_done, total, max_step;
    int cancel_at; /* cancel on this call (1-based); 0: never */
    int bad;       /* a report broke the rules */
};

static int load_hook(void *ctx, uint64_t done, uint64_t total) {
    struct load_log *l = ctx;
    if (l->calls == 0 && done != 0) l->bad = 1;
    if (l->calls > 0 && (done < l->last_done || total != l->total)) l->bad = 1;
    if (done > total) l->bad = 1;
    if (l->calls > 0 && done - l->last_done > l->max_step) l->max_step = done - l->last_done;
    l->calls++;
    l->last_done = done;
    l->total = total;
    return l->cancel_at > 0 && l->calls == (uint64_t)l->cancel_at;
}

/* HR-FILE-17: a copy-mode load reports its items' spans in chunks of at most
 * HURRAY_FILE_PROGRESS_CHUNK, ends at done = total, stops (IO/ECANCELED, nothing returned,
 * nothing leaked) when the hook says so; mmap mode never calls it. */
static void test_HR_FILE_17_load_progress_and_cancel(void **state) {
    (void)state;
    static uint8_t big[256], small[256];
    char path[128];
    tmp_path(path, sizeof path, "progress.hry");
    const uint64_t big_len = (uint64_t)40 << 20; /* a 40 MiB hole: three chunks */
    struct hurray_descriptor *sd = test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 1,
                                            (uint64_t[]){8});
    test_fill_buffers(sd, 0);
    struct raw_entry re[2] = {
        {"big", HURRAY_FILE_KIND_TENSOR, big, uint8_vector_desc(big_len, big, sizeof big)},
        {"small", HURRAY_FILE_KIND_TENSOR, small, encode_desc(sd, small, sizeof small)}};
    hurray_descriptor_reset(sd);
    free(sd);
    struct fill fl = {1, 0, small_values, sizeof small_values};
    uint64_t doff = 0;
    sparse_file(path, re, 2, &fl, 1, &doff);

    struct hurray_error err;
    struct test_alloc ta;
    test_alloc_init(&ta, 0);
    struct hurray_file_options opt = {NULL, test_alloc_get(&ta), HURRAY_FILE_COPY,
                                      HURRAY_FILE_PARTS_INDEX};
    struct hurray_file *f = NULL;
    assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_OK);
    uint64_t span_big = 0, span_small = 0;
    assert_status(hurray_file_entry_span(f, 0, &span_big, &err), HURRAY_OK);
    assert_status(hurray_file_entry_span(f, 1, &span_small, &err), HURRAY_OK);
    assert_int_equal(span_big, big_len);
    assert_int_equal(span_small, sizeof small_values);
    assert_status(hurray_file_entry_span(f, 2, &span_small, &err), HURRAY_E_ARGUMENT);

    /* every entry, the big one twice: total = the sum of the spans */
    struct load_log log;
    memset(&log, 0, sizeof log);
    hurray_file_set_progress(f, load_hook, &log);
    size_t entries[3] = {0, 1, 0};
    struct hurray_item *out[3] = {NULL, NULL, NULL};
    assert_status(hurray_file_load_items(f, entries, 3, out, &err), HURRAY_OK);
    assert_false(log.bad);
    assert_int_equal(log.total, 2 * big_len + sizeof small_values);
    assert_int_equal(log.last_done, log.total);
    assert_true(log.calls >= 1 + 2 * 3 + 1); /* the start, 3 chunks per big item, the small */
    assert_true(log.max_step <= HURRAY_FILE_PROGRESS_CHUNK);
    assert_memory_equal(out[1]->buffers[0].data, small_values, sizeof small_values);
    for (int k = 0; k < 3; k++) hurray_item_destroy(out[k]);

    /* cancelled on the second call (after the first chunk): IO/ECANCELED, no items, and
     * every byte of the load released (only the open file's own memory is live) */
    unsigned long live = ta.live_allocs;
    size_t live_bytes = ta.live_bytes;
    memset(&log, 0, sizeof log);
    log.cancel_at = 2;
    assert_status(hurray_file_load_items(f, entries, 3, out, &err), HURRAY_E_IO);
    assert_int_equal(err.sys_errno, ECANCELED);
    assert_int_equal(log.calls, 2);
    for (int k = 0; k < 3; k++) assert_null(out[k]);
    assert_int_equal(ta.live_allocs, live);
    assert_int_equal(ta.live_bytes, live_bytes);

    /* cancelled at the start: nothing read */
    memset(&log, 0, sizeof log);
    log.cancel_at = 1;
    struct hurray_item *one = NULL;
    assert_status(hurray_file_load_item(f, 1, &one, &err), HURRAY_E_IO);
    assert_null(one);
    assert_int_equal(ta.live_allocs, live);

    /* no hook: one read, the same bytes */
    hurray_file_set_progress(f, NULL, &log);
    memset(&log, 0, sizeof log);
    assert_status(hurray_file_load_item(f, 1, &one, &err), HURRAY_OK);
    assert_int_equal(log.calls, 0);
    assert_memory_equal(one->buffers[0].data, small_values, sizeof small_values);
    hurray_item_destroy(one);
    hurray_file_destroy(f);
    assert_int_equal(ta.live_allocs, 0);
    assert_int_equal(ta.bad_frees, 0);

    /* mmap mode: never called */
    opt.mode = HURRAY_FILE_MMAP;
    assert_status(hurray_file_create_path(path, &opt, &f, &err), HURRAY_OK);
    hurray_file_set_progress(f, load_hook, &log);
    memset(&log, 0, sizeof log);
    assert_status(hurray_file_load_items(f, entries, 3, out, &err), HURRAY_OK);
    assert_int_equal(log.calls, 0);
    for (int k = 0; k < 3; k++) hurray_item_destroy(out[k]);
    hurray_file_destroy(f);
    unlink(path);
}

/* HR-FILE-18: the writer's flush, counted. On Linux this program's own fsync
 * stands in front of the C library's (the library is linked statically into
 * it), counts the call and makes the real system call: what is counted is
 * what the writer asked the kernel for. */
#if defined(__linux__)
#include <sys/syscall.h>
long syscall(long number, ...);
static long fsync_calls;
int fsync(int fd) {
    fsync_calls++;
    return (int)syscall(SYS_fsync, fd);
}
#define FSYNC_COUNTED 1
#else
static long fsync_calls;
#define FSYNC_COUNTED 0
#endif

static uint8_t *read_all(const char *path, size_t *len) {
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    uint8_t *b = malloc((size_t)st.st_size + 1);
    int fd = open(path, O_RDONLY);
    assert_true(b && fd >= 0);
    assert_int_equal(read(fd, b, (size_t)st.st_size), (ssize_t)st.st_size);
    close(fd);
    *len = (size_t)st.st_size;
    return b;
}

/* HR-FILE-18: HURRAY_FILE_WRITE_NO_SYNC skips the flush and nothing else: the same bytes,
 * written beside the path and renamed over it (the replaced file's mode kept, no temporary
 * left); without it the writer flushes. Unknown flags are refused before anything is made. */
static void test_HR_FILE_18_no_sync_skips_the_flush_only(void **state) {
    (void)state;
    struct std_file s;
    std_make(&s);
    char path[128];
    tmp_path(path, sizeof path, "d.hry");
    unlink(path);
    struct hurray_file_contents c = {s.entries, 3, s.kv, 2};
    struct hurray_file_write_options opt = {NULL, NULL, NULL, NULL, 0};
    struct hurray_error err;
    size_t len = 0;

    long before = fsync_calls;
    assert_status(hurray_file_write_path(path, &c, &opt, &err), HURRAY_OK);
    if (FSYNC_COUNTED) assert_true(fsync_calls - before >= 1); /* durable: flushed */
    assert_int_equal(chmod(path, 0640), 0);

    opt.flags = HURRAY_FILE_WRITE_NO_SYNC;
    before = fsync_calls;
    assert_status(hurray_file_write_path(path, &c, &opt, &err), HURRAY_OK);
    assert_int_equal(fsync_calls - before, 0);
    uint8_t *got = read_all(path, &len);
    assert_int_equal(len, s.len);
    assert_memory_equal(got, s.bytes, s.len); /* the canonical bytes, as durable writes them */
    free(got);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640); /* a new file renamed over: mode kept */
    assert_int_equal(count_temps(), 0);

    /* a progress hook and a cancel behave as without the flag */
    struct progress_log log;
    memset(&log, 0, sizeof log);
    log.cancel_at = 1;
    opt.progress = progress_hook;
    opt.progress_ctx = &log;
    struct hurray_file_contents c1 = {s.entries, 1, NULL, 0};
    assert_status(hurray_file_write_path(path, &c1, &opt, &err), HURRAY_E_IO);
    assert_int_equal(err.sys_errno, ECANCELED);
    assert_int_equal(count_temps(), 0);
    got = read_all(path, &len);
    assert_memory_equal(got, s.bytes, s.len); /* untouched */
    free(got);

    /* unknown flags: ARGUMENT naming the field, nothing created */
    unlink(path);
    opt.progress = NULL;
    opt.flags = 2;
    assert_status(hurray_file_write_path(path, &c, &opt, &err), HURRAY_E_ARGUMENT);
    assert_string_equal(err.field, "flags");
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(count_temps(), 0);
    std_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_FILE_1_worked_example),
        cmocka_unit_test(test_HR_FILE_2_round_trip_every_layout_and_scheme),
        cmocka_unit_test(test_HR_FILE_3_composites),
        cmocka_unit_test(test_HR_FILE_4_kv_section),
        cmocka_unit_test(test_HR_FILE_8_mmap_alignment_and_lifetime),
        cmocka_unit_test(test_HR_FILE_8_io_errors),
        cmocka_unit_test(test_HR_FILE_7_write_path_replaces),
        cmocka_unit_test(test_HR_FILE_6_every_prefix_is_truncated),
        cmocka_unit_test(test_HR_FILE_4_header_lies),
        cmocka_unit_test(test_HR_FILE_2_buffer_placement),
        cmocka_unit_test(test_HR_FILE_5_entry_rules),
        cmocka_unit_test(test_HR_FILE_2_index_counts_and_limits),
        cmocka_unit_test(test_HR_FILE_2_buffer_count_mismatch),
        cmocka_unit_test(test_HR_FILE_3_member_names_and_trees),
        cmocka_unit_test(test_HR_FILE_6_mutations_are_canonical_or_refused),
        cmocka_unit_test(test_HR_FILE_7_writer_refusals),
        cmocka_unit_test(test_HR_FILE_6_nomem_without_leaks),
        cmocka_unit_test(test_HR_FILE_9_one_tensor_of_a_1GiB_file),
        cmocka_unit_test(test_HR_FILE_9_bad_index_of_a_2GiB_file),
        cmocka_unit_test(test_HR_FILE_9_parts),
        cmocka_unit_test(test_HR_FILE_9_kv_each_as_open),
        cmocka_unit_test(test_HR_FILE_9_gaps_checked_at_open_in_order),
        cmocka_unit_test(test_HR_FILE_12_truncated_after_open),
        cmocka_unit_test(test_HR_FILE_12_truncated_while_opened),
        cmocka_unit_test(test_HR_FILE_10_special_files),
        cmocka_unit_test(test_HR_FILE_8_load_items),
        cmocka_unit_test(test_HR_FILE_8_empty_items_hold_no_image),
        cmocka_unit_test(test_HR_FILE_11_mapped_items_are_copy_on_write),
        cmocka_unit_test(test_HR_FILE_13_reader_memory),
        cmocka_unit_test(test_HR_FILE_7_few_writes_and_mode_kept),
        cmocka_unit_test(test_HR_FILE_14_read_buffer_range),
        cmocka_unit_test(test_HR_FILE_15_writer_refuses_what_a_reader_would),
        cmocka_unit_test(test_HR_FILE_15_writer_refusal_order),
        cmocka_unit_test(test_HR_FILE_5_writer_duplicate_names_every_length),
        cmocka_unit_test(test_HR_FILE_16_temporary_files_progress_and_cancel),
        cmocka_unit_test(test_HR_FILE_17_load_progress_and_cancel),
        cmocka_unit_test(test_HR_FILE_18_no_sync_skips_the_flush_only),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
