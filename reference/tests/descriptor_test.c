/* The binary descriptor (descriptor.c). descriptor.md, buffer-protocol.md,
 * sections.md, memory-layout.md.
 *
 * Valid descriptors are built in memory for every layout, scheme and section
 * and round-tripped; hostile inputs are byte patches of those encodings or of
 * a hand-written golden vector, each with the one status the decoding order
 * (HR-DESC-5) gives it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"
#include "test_support.h"

#define BUF_CAP 32768
#define DYN HURRAY_DYNAMIC_DIM

/* ==== helpers ============================================================== */

/* The layout spans of the builders below, through hurray_descriptor_set_layout. */
static void set_strides(struct hurray_descriptor *d, const int64_t *strides) {
    struct test_layout t;
    test_layout_edit(&t, d);
    memcpy(t.strides, strides, d->rank * sizeof strides[0]);
    test_layout_apply(&t, d);
}

static void desc_free(struct hurray_descriptor *d) {
    hurray_descriptor_reset(d);
    free(d);
}

static size_t encode_ok(const struct hurray_descriptor *d, uint8_t *buf, size_t cap) {
    struct hurray_error err;
    size_t n = 0, len = 0;
    int st = hurray_descriptor_encode(d, buf, cap, &n, &err);
    if (st != HURRAY_OK) print_error("encode: %s: %s\n", hurray_status_name(st), err.message);
    assert_status(st, HURRAY_OK);
    assert_status(hurray_descriptor_encoded_len(d, &len, &err), HURRAY_OK);
    assert_int_equal(len, n);
    assert_int_equal(n % 8, 0);
    return n;
}

/* Decodes a copy of exactly `len` bytes in its own allocation, so a read past
 * the end is caught by ASan/valgrind. */
static int decode_exact(const uint8_t *src, size_t len, const struct hurray_decode_options *opt,
                        struct hurray_descriptor *out, size_t *consumed,
                        struct hurray_error *err) {
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    if (len) memcpy(copy, src, len);
    int st = hurray_descriptor_decode(copy, len, opt, out, consumed, err);
    free(copy);
    return st;
}

static int decode_status(const uint8_t *src, size_t len, const struct hurray_limits *lim,
                         struct hurray_error *err) {
    struct hurray_descriptor *d = malloc(sizeof *d);
    struct hurray_decode_options opt = {lim, NULL};
    assert_non_null(d);
    hurray_descriptor_init(d);
    int st = decode_exact(src, len, &opt, d, NULL, err);
    if (st != HURRAY_OK) {
        /* "On failure out is left reset." */
        assert_null(d->storage);
        assert_int_equal(d->opaque_count, 0);
        assert_int_equal(d->rank, 0);
    }
    desc_free(d);
    return st;
}

static void expect_decode(const uint8_t *src, size_t len, int code, const char *field) {
    struct hurray_error err;
    test_error_poison(&err);
    int st = decode_status(src, len, NULL, &err);
    if (st != code) print_error("decode: %s (%s: %s)\n", hurray_status_name(st), err.field, err.message);
    assert_status(st, code);
    if (code != HURRAY_OK) assert_hurray_error(&err, code, field);
}

/* encode -> decode -> equal -> encode byte-identical (HR-DESC-6, HR-DESC-7);
 * trailing bytes ignored (HR-DESC-1); every prefix TRUNCATED (HR-DESC-5);
 * a short output is ARGUMENT and nothing is written past cap. */
static void check_roundtrip(const struct hurray_descriptor *d) {
    static uint8_t buf[BUF_CAP], again[BUF_CAP];
    struct hurray_descriptor *back = test_desc_new(0, 0, 0, NULL);
    struct hurray_error err;
    size_t n = encode_ok(d, buf, BUF_CAP - 64), consumed = 0;

    int st = decode_exact(buf, n, NULL, back, &consumed, &err);
    if (st != HURRAY_OK) print_error("decode: %s: %s\n", hurray_status_name(st), err.message);
    assert_status(st, HURRAY_OK);
    assert_int_equal(consumed, n);
    assert_true(hurray_descriptor_equal(d, back));
    assert_true(hurray_descriptor_equal(back, d));
    size_t m = encode_ok(back, again, BUF_CAP);
    assert_bytes_equal(again, m, buf, n);

    memset(buf + n, 0xA5, 64); /* HR-DESC-1: trailing bytes are not part of it */
    assert_status(decode_exact(buf, n + 64, NULL, back, &consumed, &err), HURRAY_OK);
    assert_int_equal(consumed, n);
    assert_true(hurray_descriptor_equal(d, back));

    for (size_t k = 0; k < n; k++) {
        assert_status(decode_status(buf, k, NULL, &err), HURRAY_E_TRUNCATED);
        assert_int_equal(err.code, HURRAY_E_TRUNCATED);
    }

    size_t written = 99;
    memset(again, 0xEE, BUF_CAP);
    assert_status(hurray_descriptor_encode(d, again, n - 8, &written, &err), HURRAY_E_ARGUMENT);
    assert_int_equal(written, n); /* the length needed */
    for (size_t k = n - 8; k < n + 8; k++) assert_int_equal(again[k], 0xEE);
    desc_free(back);
}

static const uint8_t ext_bytes[32] = "private extension data, 32 byte";

/* ==== the catalogue of valid descriptors ==================================== */

typedef struct hurray_descriptor *(*builder_fn)(void);

static struct hurray_descriptor *b_row_major_rank0(void) {
    return test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 0, NULL);
}
static struct hurray_descriptor *b_row_major_rank3(void) {
    return test_desc_new(HURRAY_DTYPE_INT16, HURRAY_LAYOUT_ROW_MAJOR, 3, (uint64_t[]){2, 3, 4});
}
static struct hurray_descriptor *b_col_major(void) {
    return test_desc_new(HURRAY_DTYPE_FLOAT64, HURRAY_LAYOUT_COL_MAJOR, 2, (uint64_t[]){5, 7});
}
static struct hurray_descriptor *b_row_major_int4(void) {
    return test_desc_new(HURRAY_DTYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){3, 5});
}
static struct hurray_descriptor *b_row_major_float6(void) {
    return test_desc_new(HURRAY_DTYPE_FLOAT6_E2M3FN, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){4});
}
static struct hurray_descriptor *b_strided_negative(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_STRIDED, 2, (uint64_t[]){3, 4});
    set_strides(d, (int64_t[]){-4, 1});
    d->byte_offset = 32; /* off/E + lo = 8 - 8 >= 0 */
    return d;
}
static struct hurray_descriptor *b_strided_zero(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_STRIDED, 3, (uint64_t[]){5, 3, 2});
    set_strides(d, (int64_t[]){0, 2, -1});
    d->byte_offset = 1;
    return d;
}
static struct hurray_descriptor *b_tiled(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_TILED, 2, (uint64_t[]){4, 6});
    struct test_layout t;
    test_layout_edit(&t, d);
    t.tile_shape[0] = 2;
    t.tile_shape[1] = 3;
    t.strides[0] = 12;
    t.strides[1] = 6;
    t.inner_strides[0] = 3;
    t.inner_strides[1] = 1;
    test_layout_apply(&t, d);
    return d;
}
static struct hurray_descriptor *b_morton2(void) {
    return test_desc_new(HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_MORTON, 2, (uint64_t[]){4, 8});
}
static struct hurray_descriptor *b_morton3(void) {
    return test_desc_new(HURRAY_DTYPE_FLOAT16, HURRAY_LAYOUT_MORTON, 3, (uint64_t[]){2, 2, 4});
}
static struct hurray_descriptor *b_hilbert(void) {
    return test_desc_new(HURRAY_DTYPE_BFLOAT16, HURRAY_LAYOUT_HILBERT, 2, (uint64_t[]){8, 8});
}
static struct hurray_descriptor *b_coo(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COO, 2, (uint64_t[]){10, 10});
    d->layout.nnz = 5;
    return d;
}
static struct hurray_descriptor *b_csr(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT64, HURRAY_LAYOUT_CSR, 2, (uint64_t[]){4, 5});
    d->layout.nnz = 6;
    return d;
}
static struct hurray_descriptor *b_csc(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_INT32, HURRAY_LAYOUT_CSC, 2, (uint64_t[]){4, 5});
    d->layout.nnz = 6;
    return d;
}
static struct hurray_descriptor *b_csf1(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_CSF, 1, (uint64_t[]){10});
    struct test_layout t;
    test_layout_edit(&t, d);
    t.l.nnz = 3;
    t.mode_order[0] = 0;
    test_layout_apply(&t, d);
    return d;
}
static struct hurray_descriptor *b_csf2(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_CSF, 2, (uint64_t[]){4, 5});
    struct test_layout t;
    test_layout_edit(&t, d);
    t.l.nnz = 5;
    t.fiber_counts[0] = 2;
    t.mode_order[0] = 1;
    t.mode_order[1] = 0;
    test_layout_apply(&t, d);
    return d;
}
static struct hurray_descriptor *b_csf3(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_INT64, HURRAY_LAYOUT_CSF, 3, (uint64_t[]){2, 3, 4});
    struct test_layout t;
    test_layout_edit(&t, d);
    t.l.nnz = 6;
    t.fiber_counts[0] = 2;
    t.fiber_counts[1] = 4;
    for (unsigned k = 0; k < 3; k++) t.mode_order[k] = (uint8_t)k;
    test_layout_apply(&t, d);
    return d;
}
static struct hurray_descriptor *b_csf5(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT16, HURRAY_LAYOUT_CSF, 5, (uint64_t[]){2, 2, 2, 2, 2});
    struct test_layout t;
    test_layout_edit(&t, d);
    t.l.nnz = 5;
    for (unsigned k = 0; k < 4; k++) t.fiber_counts[k] = k + 1;
    for (unsigned k = 0; k < 5; k++) t.mode_order[k] = (uint8_t)(4 - k);
    test_layout_apply(&t, d);
    return d;
}
static struct hurray_descriptor *b_block_paged(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT16, HURRAY_LAYOUT_BLOCK_PAGED, 3, (uint64_t[]){2, 16, 4});
    d->layout.page_size = 4;
    d->layout.num_pages = 6;
    d->layout.num_seqs = 2;
    d->layout.num_blocks = 5;
    return d;
}
static struct hurray_descriptor *composite(uint8_t rule, uint8_t combine) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COMPOSITE, 2, (uint64_t[]){4, 4});
    d->layout.rule = rule;
    d->layout.combine = combine;
    d->layout.member_count = 3;
    return d;
}
static struct hurray_descriptor *b_composite_partition(void) {
    return composite(HURRAY_RULE_PARTITION, HURRAY_COMBINE_NONE);
}
static struct hurray_descriptor *b_composite_overlay_replace(void) {
    return composite(HURRAY_RULE_OVERLAY, HURRAY_COMBINE_REPLACE);
}
static struct hurray_descriptor *b_composite_overlay_add(void) {
    return composite(HURRAY_RULE_OVERLAY, HURRAY_COMBINE_ADD);
}
static struct hurray_descriptor *b_composite_overlay_max(void) {
    return composite(HURRAY_RULE_OVERLAY, HURRAY_COMBINE_MAX);
}
static struct hurray_descriptor *b_composite_overlay_min(void) {
    return composite(HURRAY_RULE_OVERLAY, HURRAY_COMBINE_MIN);
}
static struct hurray_descriptor *b_composite_group(void) {
    return composite(HURRAY_RULE_GROUP, HURRAY_COMBINE_NONE);
}
static struct hurray_descriptor *b_private_layout(void) {
    struct hurray_descriptor *d = test_desc_new(HURRAY_DTYPE_FLOAT32, 0xF3, 2, (uint64_t[]){3, 3});
    struct test_layout t;
    test_layout_edit(&t, d);
    t.l.extension_layout_id = 0xDEADBEEFu;
    t.l.opaque = ext_bytes;
    t.l.opaque_len = 11; /* param_length 19: 5 bytes of padding */
    test_layout_apply(&t, d);
    test_set_buffer_count(d, 2);
    test_set_buffer(d, 0, 100);
    test_set_buffer(d, 1, 0);
    return d;
}
static struct hurray_descriptor *b_private_layout_empty(void) {
    struct hurray_descriptor *d = test_desc_new(HURRAY_DTYPE_UINT8, 0xF0, 1, (uint64_t[]){7});
    d->layout.extension_layout_id = 1;
    return d;
}
static struct hurray_descriptor *b_unknown_layout(void) {
    struct hurray_descriptor *d = test_desc_new(HURRAY_DTYPE_INT32, 0x07, 1, (uint64_t[]){9});
    struct test_layout t;
    test_layout_edit(&t, d);
    t.l.opaque = ext_bytes;
    t.l.opaque_len = 13;
    test_layout_apply(&t, d);
    test_set_buffer_count(d, 1);
    test_set_buffer(d, 0, 36);
    return d;
}
/* The smallest descriptor: rank 0, no buffers, parameters or sections. */
static struct hurray_descriptor *b_unknown_layout_empty(void) {
    return test_desc_new(HURRAY_DTYPE_UINT8, 0x40, 0, NULL);
}

static struct hurray_descriptor *b_q_per_tensor_coo(void) {
    struct hurray_descriptor *d = b_coo();
    d->dtype = HURRAY_DTYPE_UINT8;
    test_quant_init(test_quant(d), HURRAY_QUANT_PER_TENSOR_AFFINE);
    test_quant(d)->scale = 3.0;
    test_quant(d)->zero_point = 128;
    return d;
}
static struct hurray_descriptor *b_q_per_channel_symmetric(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_COL_MAJOR, 2, (uint64_t[]){3, 8});
    test_quant_init(test_quant(d), HURRAY_QUANT_PER_CHANNEL_AFFINE);
    test_quant(d)->axis = 0;
    test_quant(d)->scale_buffer = 1;
    test_quant(d)->scale_dtype = HURRAY_DTYPE_BFLOAT16;
    return d;
}
static struct hurray_descriptor *b_q_nf4(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){256});
    test_quant_init(test_quant(d), HURRAY_QUANT_NF4);
    test_quant(d)->absmax_buffer = 1;
    test_quant(d)->block_size = 64;
    return d;
}
static struct hurray_descriptor *b_q_mx_int8(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_STRIDED, 2, (uint64_t[]){64, 3});
    set_strides(d, (int64_t[]){3, 1});
    test_quant_init(test_quant(d), HURRAY_QUANT_MX);
    test_quant(d)->axis = 0;
    test_quant(d)->scale_buffer = 1;
    test_quant(d)->block_size = 32;
    return d;
}
static struct hurray_descriptor *b_q_paged(void) {
    struct hurray_descriptor *d = b_block_paged();
    d->dtype = HURRAY_DTYPE_INT8;
    test_quant_init(test_quant(d), HURRAY_QUANT_PER_CHANNEL_AFFINE);
    test_quant(d)->axis = 2;
    test_quant(d)->scale_buffer = 3;
    test_quant(d)->scale_dtype = HURRAY_DTYPE_FLOAT32;
    return d;
}
static struct hurray_descriptor *b_q_private_layout(void) {
    struct hurray_descriptor *d = b_private_layout();
    d->dtype = HURRAY_DTYPE_INT8;
    test_quant_init(test_quant(d), HURRAY_QUANT_PER_TENSOR_AFFINE);
    test_quant(d)->scale = 1.5;
    return d;
}
static struct hurray_descriptor *b_statistics(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){4});
    test_statistics(d)->flags = HURRAY_STATS_HAS_MIN_MAX | HURRAY_STATS_HAS_NAN_COUNT;
    test_statistics(d)->min = -1.5;
    test_statistics(d)->max = 2.0;
    test_statistics(d)->nan_count = 1;
    return d;
}
static struct hurray_descriptor *b_statistics_minmax(void) {
    struct hurray_descriptor *d = b_statistics();
    test_statistics(d)->flags = HURRAY_STATS_HAS_MIN_MAX;
    test_statistics(d)->nan_count = 0;
    test_statistics(d)->min = test_statistics(d)->max = -0.0;
    return d;
}
static struct hurray_descriptor *b_statistics_nan_dynamic(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT64, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){DYN, 2});
    test_statistics(d)->flags = HURRAY_STATS_HAS_NAN_COUNT;
    test_statistics(d)->nan_count = 1000; /* N unknown: not bounded */
    return d;
}
static struct hurray_descriptor *b_shard(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){2, 3});
    struct test_shard t;
    test_shard_edit(&t, d);
    t.s.shard_index = 3;
    t.s.shard_count = 4;
    t.global_shape[0] = 4;
    t.global_shape[1] = 6;
    t.global_offset[0] = 2;
    t.global_offset[1] = 3;
    test_shard_apply(&t, d);
    return d;
}
static struct hurray_descriptor *b_role_base(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){4, 4});
    d->has_role = 1;
    d->role = HURRAY_ROLE_BASE;
    return d;
}
static struct hurray_descriptor *b_role_correction(void) {
    struct hurray_descriptor *d = b_shard();
    d->has_role = 1;
    d->role = HURRAY_ROLE_CORRECTION;
    return d;
}
static struct hurray_descriptor *b_unknown_sections(void) {
    struct hurray_descriptor *d = b_statistics();
    test_add_opaque(d, 0x05, 0, ext_bytes, 5);
    test_add_opaque(d, 0xF0, 0, NULL, 0);
    test_add_opaque(d, 0xFE, 0, ext_bytes + 8, 16);
    return d;
}
static struct hurray_descriptor *b_all_sections(void) {
    struct hurray_descriptor *d = test_q_per_tensor();
    struct hurray_descriptor *s = b_shard();
    struct test_shard t;
    test_set_shape(d, 2, (uint64_t[]){2, 3});
    test_shard_edit(&t, s);
    test_shard_apply(&t, d);
    desc_free(s);
    test_statistics(d)->flags = HURRAY_STATS_HAS_MIN_MAX;
    test_statistics(d)->min = -128;
    test_statistics(d)->max = 127;
    d->has_role = 1;
    d->role = HURRAY_ROLE_CORRECTION;
    test_add_opaque(d, 0x22, 0, ext_bytes, 32);
    return d;
}
static struct hurray_descriptor *b_everything_opaque(void) {
    struct hurray_descriptor *d = b_private_layout();
    test_add_opaque(d, 0x10, 0, ext_bytes, 1);
    test_add_opaque(d, 0xEF, 0, ext_bytes, 31);
    return d;
}
static struct hurray_descriptor *b_dynamic(void) {
    return test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){DYN, 3});
}
static struct hurray_descriptor *b_dynamic_coo(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COO, 3, (uint64_t[]){DYN, 5, DYN});
    d->layout.nnz = 1000;
    return d;
}
static struct hurray_descriptor *b_rank64(void) {
    uint64_t shape[64];
    for (unsigned k = 0; k < 64; k++) shape[k] = k % 9 == 0 ? 2 : 1;
    return test_desc_new(HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 64, shape);
}
static struct hurray_descriptor *b_rank64_strided_shard(void) {
    uint64_t shape[64];
    for (unsigned k = 0; k < 64; k++) shape[k] = k < 3 ? 2 : 1;
    struct hurray_descriptor *d = test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_STRIDED, 64, shape);
    struct test_layout t;
    struct test_shard sh;
    test_layout_edit(&t, d);
    for (unsigned k = 0; k < 64; k++) t.strides[k] = k < 3 ? (int64_t)(1u << k) : 99;
    test_layout_apply(&t, d);
    test_shard_edit(&sh, d);
    sh.s.shard_count = 1;
    for (unsigned k = 0; k < 64; k++) sh.global_shape[k] = shape[k] + k;
    sh.global_offset[63] = 63;
    test_shard_apply(&sh, d);
    return d;
}
static struct hurray_descriptor *b_zero_dims(void) {
    return test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){0, 5});
}
static struct hurray_descriptor *b_zero_dims_coo(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COO, 2, (uint64_t[]){0, 4});
    return d;
}
static struct hurray_descriptor *b_private_dtype(void) {
    return test_desc_new(0xF5, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){3, 3});
}
static struct hurray_descriptor *b_private_device(void) {
    struct hurray_descriptor *d = b_col_major();
    d->device = 0xF1;
    d->memory_class = 0xF2;
    return d;
}
static struct hurray_descriptor *b_cuda_peer_sync(void) {
    struct hurray_descriptor *d = b_csr();
    d->device = HURRAY_DEVICE_CUDA;
    d->memory_class = HURRAY_MEM_PEER;
    return d;
}
static struct hurray_descriptor *b_version_minor(void) {
    struct hurray_descriptor *d = b_row_major_rank3();
    d->version_minor = 0xFF;
    return d;
}
static struct hurray_descriptor *b_byte_offset(void) {
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){4});
    d->byte_offset = 16;
    return d;
}

static const struct {
    const char *name;
    builder_fn build;
} catalogue[] = {
#define B(f) {#f, f}
    B(b_row_major_rank0), B(b_row_major_rank3), B(b_col_major), B(b_row_major_int4),
    B(b_row_major_float6), B(b_strided_negative), B(b_strided_zero), B(b_tiled),
    B(b_morton2), B(b_morton3), B(b_hilbert), B(b_coo), B(b_csr), B(b_csc), B(b_csf1),
    B(b_csf2), B(b_csf3), B(b_csf5), B(b_block_paged), B(b_composite_partition),
    B(b_composite_overlay_replace), B(b_composite_overlay_add), B(b_composite_overlay_max),
    B(b_composite_overlay_min), B(b_composite_group), B(b_private_layout),
    B(b_private_layout_empty), B(b_unknown_layout), B(b_unknown_layout_empty),
    {"b_q_per_tensor", test_q_per_tensor}, B(b_q_per_tensor_coo), {"b_q_per_channel", test_q_per_channel},
    B(b_q_per_channel_symmetric), {"b_q_block", test_q_block}, B(b_q_nf4), {"b_q_nf4_double", test_q_nf4_double}, {"b_q_mx", test_q_mx},
    B(b_q_mx_int8), {"b_q_nvfp4", test_q_nvfp4}, B(b_q_paged), B(b_q_private_layout), B(b_statistics),
    B(b_statistics_minmax), B(b_statistics_nan_dynamic), B(b_shard), B(b_role_base),
    B(b_role_correction), B(b_unknown_sections), B(b_all_sections), B(b_everything_opaque),
    B(b_dynamic), B(b_dynamic_coo), B(b_rank64), B(b_rank64_strided_shard), B(b_zero_dims),
    B(b_zero_dims_coo), B(b_private_dtype), B(b_private_device), B(b_cuda_peer_sync),
    B(b_version_minor), B(b_byte_offset),
#undef B
};
#define CATALOGUE_COUNT (sizeof catalogue / sizeof catalogue[0])

/* A catalogue entry with its buffer table completed. */
static struct hurray_descriptor *build(size_t i) {
    struct hurray_descriptor *d = catalogue[i].build();
    test_fill_buffers(d, 64);
    return d;
}

/* Its canonical encoding; returns the length. */
static size_t build_encoded(size_t i, uint8_t *buf, size_t cap) {
    struct hurray_descriptor *d = build(i);
    size_t n = encode_ok(d, buf, cap);
    desc_free(d);
    return n;
}

static size_t find_entry(const char *name) {
    for (size_t i = 0; i < CATALOGUE_COUNT; i++)
        if (strcmp(catalogue[i].name, name) == 0) return i;
    fail_msg("no catalogue entry %s", name);
    return 0;
}

/* ==== byte offsets inside an encoding ====================================== */

static size_t pad8(size_t n) { return (8 - (n & 7)) & 7; }

static size_t off_buffers(const uint8_t *b) { return 32 + 8u * b[20]; }
static size_t off_layout(const uint8_t *b) { return off_buffers(b) + 16u * b[21]; }
static size_t off_params(const uint8_t *b) { return off_layout(b) + 8; }
static size_t off_section(const uint8_t *b, unsigned i) {
    size_t at = off_params(b) + test_get_u32(b + off_layout(b));
    at += pad8(at);
    for (unsigned k = 0; k < i; k++) {
        size_t len = test_get_u32(b + at + 4);
        at += 8 + len + pad8(len);
    }
    return at;
}

/* descriptor.md § Layout of the bytes, written out by hand: row_major
 * float32 [2, 3], one 24-byte buffer aligned to 64, producer_synced. */
static const uint8_t golden[72] = {
    0x48, 0x52, 0x59, 0x44, 0x01, 0x00, 0x00, 0x00, /* magic, 1.0, reserved */
    0x48, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* encoded_len 72, reserved */
    0x0C, 0x01, 0x01, 0x01, 0x02, 0x01, 0x00, 0x00, /* f32 cpu std row_major r2 b1 s0 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* byte_offset */
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* shape[0] */
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* shape[1] */
    0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* buffers[0].size 24 */
    0x06, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* align 2^6, producer_synced */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* param_length 0, reserved */
};

/* The golden vector with one byte changed. */
static void expect_golden_patch(size_t at, uint8_t v, int code, const char *field) {
    uint8_t b[sizeof golden];
    memcpy(b, golden, sizeof b);
    b[at] = v;
    expect_decode(b, sizeof b, code, field);
}

/* ==== HR-DESC-2, HR-DESC-6: exact bytes ===================================== */

static void test_HR_DESC_2_golden_vector_decodes(void **state) {
    (void)state;
    struct hurray_descriptor *d = test_desc_new(0, 0, 0, NULL);
    struct hurray_error err;
    size_t consumed = 0;
    assert_status(hurray_descriptor_decode(golden, sizeof golden, NULL, d, &consumed, &err),
                  HURRAY_OK);
    assert_int_equal(consumed, 72);
    assert_int_equal(d->version_major, 1);
    assert_int_equal(d->version_minor, 0);
    assert_int_equal(d->dtype, HURRAY_DTYPE_FLOAT32);
    assert_int_equal(d->device, HURRAY_DEVICE_CPU);
    assert_int_equal(d->memory_class, HURRAY_MEM_STANDARD);
    assert_int_equal(d->layout.tag, HURRAY_LAYOUT_ROW_MAJOR);
    assert_int_equal(d->rank, 2);
    assert_int_equal(d->shape[0], 2);
    assert_int_equal(d->shape[1], 3);
    assert_int_equal(d->buffer_count, 1);
    assert_int_equal(d->buffers[0].size, 24);
    assert_int_equal(d->buffers[0].alignment_log2, 6);
    assert_int_equal(d->buffers[0].sync_mode, HURRAY_SYNC_PRODUCER_SYNCED);
    assert_true(!d->quant && !d->statistics && !d->shard && !d->has_role);
    assert_int_equal(d->opaque_count, 0);
    /* One block holds every span, sized exactly: the shape and the table. */
    assert_ptr_equal(d->shape, d->storage);
    assert_int_equal(d->storage_len, 2 * 8 + sizeof(struct hurray_buffer_desc));
    desc_free(d);
}

static void test_HR_DESC_6_golden_vector_encodes(void **state) {
    (void)state;
    uint8_t buf[128];
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){2, 3});
    test_set_buffer_count(d, 1);
    test_set_buffer(d, 0, 24);
    size_t n = encode_ok(d, buf, sizeof buf);
    assert_bytes_equal(buf, n, golden, sizeof golden);
    desc_free(d);
}

/* descriptor.md § Worked example: the golden vector plus a statistics
 * section (min -1.5, max 2.0) is 112 bytes. */
static void test_HR_DESC_2_worked_example_with_statistics(void **state) {
    (void)state;
    uint8_t want[112], buf[128];
    memcpy(want, golden, sizeof golden);
    memset(want + 72, 0, 40);
    want[8] = 112;
    want[22] = 1;
    const uint8_t header[8] = {0x02, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00};
    memcpy(want + 72, header, 8);
    want[80] = 0x01;
    want[94] = 0xF8; /* -1.5 */
    want[95] = 0xBF;
    want[103] = 0x40; /* 2.0 */
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){2, 3});
    test_set_buffer_count(d, 1);
    test_set_buffer(d, 0, 24);
    test_statistics(d)->flags = HURRAY_STATS_HAS_MIN_MAX;
    test_statistics(d)->min = -1.5;
    test_statistics(d)->max = 2.0;
    assert_bytes_equal(buf, encode_ok(d, buf, sizeof buf), want, sizeof want);
    check_roundtrip(d);
    desc_free(d);
}

/* "The smallest descriptor (rank 0, no buffers, no parameters, no sections)
 * is 40 bytes." Only an unknown layout has neither buffers nor parameters. */
static void test_HR_DESC_2_smallest_is_40_bytes(void **state) {
    (void)state;
    uint8_t buf[64];
    struct hurray_descriptor *d = b_unknown_layout_empty();
    assert_int_equal(encode_ok(d, buf, sizeof buf), HURRAY_DESCRIPTOR_MIN_BYTES);
    assert_int_equal(buf[19], 0x40);
    assert_int_equal(test_get_u32(buf + 8), 40);
    desc_free(d);
}

/* HR-DESC-4: every minor version is read and re-encoded as read. */
static void test_HR_DESC_4_minor_version_kept(void **state) {
    (void)state;
    for (unsigned minor = 0; minor < 256; minor += 51) {
        expect_golden_patch(5, (uint8_t)minor, HURRAY_OK, NULL);
    }
    uint8_t b[sizeof golden], out[128];
    struct hurray_descriptor *d = test_desc_new(0, 0, 0, NULL);
    struct hurray_error err;
    memcpy(b, golden, sizeof b);
    b[5] = 7;
    assert_status(hurray_descriptor_decode(b, sizeof b, NULL, d, NULL, &err), HURRAY_OK);
    assert_int_equal(d->version_minor, 7);
    assert_bytes_equal(out, encode_ok(d, out, sizeof out), b, sizeof b);
    d->version_major = 2;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_VERSION);
    desc_free(d);
}

/* ==== round trips (HR-DESC-6, HR-DESC-7) =================================== */

static void roundtrip_range(const char *first, const char *last) {
    for (size_t i = find_entry(first); i <= find_entry(last); i++) {
        struct hurray_descriptor *d = build(i);
        check_roundtrip(d);
        desc_free(d);
    }
}

static void test_HR_DESC_6_roundtrip_dense_layouts(void **state) {
    (void)state;
    roundtrip_range("b_row_major_rank0", "b_hilbert");
}
static void test_HR_DESC_6_roundtrip_sparse_layouts(void **state) {
    (void)state;
    roundtrip_range("b_coo", "b_csf5");
}
static void test_HR_DESC_6_roundtrip_block_paged_and_composite(void **state) {
    (void)state;
    roundtrip_range("b_block_paged", "b_composite_group");
}
static void test_HR_LAYOUT_40_41_roundtrip_private_and_unknown_layouts(void **state) {
    (void)state;
    roundtrip_range("b_private_layout", "b_unknown_layout_empty");
}
static void test_HR_QUANT_roundtrip_every_scheme(void **state) {
    (void)state;
    roundtrip_range("b_q_per_tensor", "b_q_private_layout");
}
static void test_HR_SECT_roundtrip_sections(void **state) {
    (void)state;
    roundtrip_range("b_statistics", "b_everything_opaque");
}
static void test_HR_SHAPE_roundtrip_shapes_and_devices(void **state) {
    (void)state;
    roundtrip_range("b_dynamic", "b_byte_offset");
}

/* The opaque bytes are copied: the decoded descriptor outlives its input. */
static void test_HR_SECT_3_opaque_bytes_owned(void **state) {
    (void)state;
    uint8_t *buf = malloc(BUF_CAP);
    uint8_t again[BUF_CAP];
    struct hurray_descriptor *d = test_desc_new(0, 0, 0, NULL);
    struct hurray_error err;
    assert_non_null(buf);
    size_t n = build_encoded(find_entry("b_everything_opaque"), buf, BUF_CAP);
    uint8_t *keep = malloc(n);
    assert_non_null(keep);
    memcpy(keep, buf, n);
    assert_status(hurray_descriptor_decode(buf, n, NULL, d, NULL, &err), HURRAY_OK);
    /* One block: shape, buffer table, the two section records, then the 11 + 1 + 31
     * opaque bytes, the layout's first. */
    assert_non_null(d->storage);
    assert_int_equal(d->storage_len, 2 * 8 + 2 * sizeof(struct hurray_buffer_desc) +
                                         2 * sizeof(struct hurray_opaque_section) + 11 + 1 +
                                         31);
    assert_ptr_equal(d->layout.opaque, (const uint8_t *)d->storage + d->storage_len - 43);
    assert_ptr_equal(d->opaque[0].data, d->layout.opaque + 11);
    assert_ptr_equal(d->opaque[1].data, d->layout.opaque + 12);
    assert_int_equal(d->opaque_count, 2);
    assert_int_equal(d->opaque[0].type, 0x10);
    assert_int_equal(d->opaque[1].type, 0xEF);
    assert_memory_equal(d->layout.opaque, ext_bytes, 11);
    memset(buf, 0, n);
    free(buf);
    assert_bytes_equal(again, encode_ok(d, again, sizeof again), keep, n);
    free(keep);
    desc_free(d);
}

/* Unknown sections sit in type order among the known ones on the wire. */
static void test_HR_SECT_1_canonical_section_order(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    size_t n = build_encoded(find_entry("b_all_sections"), buf, sizeof buf);
    const uint8_t want[] = {0x01, 0x02, 0x03, 0x04, 0x22};
    const uint8_t mu[] = {1, 0, 0, 1, 0};
    assert_int_equal(buf[22], 5);
    for (unsigned i = 0; i < 5; i++) {
        size_t at = off_section(buf, i);
        assert_true(at < n);
        assert_int_equal(buf[at], want[i]);
        assert_int_equal(buf[at + 1], mu[i]);
    }
    assert_int_equal(off_section(buf, 5), n);
}

/* ==== decode API ============================================================ */

static void test_HR_DESC_5_peek_length(void **state) {
    (void)state;
    struct hurray_error err;
    uint32_t len = 0;
    for (size_t k = 0; k < 16; k++)
        assert_status(hurray_descriptor_peek_length(golden, k, NULL, &len, &err),
                      HURRAY_E_TRUNCATED);
    assert_status(hurray_descriptor_peek_length(golden, 16, NULL, &len, &err), HURRAY_OK);
    assert_int_equal(len, 72);
    uint8_t b[16];
    memcpy(b, golden, 16);
    b[0] = 'X';
    assert_status(hurray_descriptor_peek_length(b, 16, NULL, &len, &err), HURRAY_E_BAD_MAGIC);
    memcpy(b, golden, 16);
    test_put_u32(b + 8, 0xFFFFFFF8u);
    assert_status(hurray_descriptor_peek_length(b, 16, NULL, &len, &err), HURRAY_E_LIMIT);
    struct hurray_limits lim;
    hurray_limits_default(&lim);
    lim.max_descriptor_bytes = UINT64_MAX; /* clamped to 2^32 - 8 */
    assert_status(hurray_descriptor_peek_length(b, 16, &lim, &len, &err), HURRAY_OK);
    assert_int_equal(len, 0xFFFFFFF8u);
    test_put_u32(b + 8, 44);
    assert_status(hurray_descriptor_peek_length(b, 16, NULL, &len, &err), HURRAY_E_LENGTH);
    assert_status(hurray_descriptor_peek_length(NULL, 16, NULL, &len, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_descriptor_peek_length(b, 16, NULL, NULL, &err), HURRAY_E_ARGUMENT);
}

static void test_decode_arguments(void **state) {
    (void)state;
    struct hurray_descriptor *d = test_desc_new(0, 0, 0, NULL);
    struct hurray_error err;
    size_t consumed = 5;
    assert_status(hurray_descriptor_decode(golden, sizeof golden, NULL, NULL, &consumed, &err),
                  HURRAY_E_ARGUMENT);
    assert_int_equal(consumed, 0);
    assert_status(hurray_descriptor_decode(NULL, 8, NULL, d, &consumed, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_descriptor_decode(NULL, 0, NULL, d, &consumed, &err),
                  HURRAY_E_TRUNCATED);
    /* NULL consumed and NULL error record are accepted. */
    assert_status(hurray_descriptor_decode(golden, sizeof golden, NULL, d, NULL, NULL), HURRAY_OK);
    /* Decoding into a descriptor that owns bytes releases them first. */
    uint8_t buf[BUF_CAP];
    size_t n = build_encoded(find_entry("b_everything_opaque"), buf, sizeof buf);
    struct test_alloc ta;
    test_alloc_init(&ta, 0);
    struct hurray_decode_options opt = {NULL, test_alloc_get(&ta)};
    assert_status(hurray_descriptor_decode(buf, n, &opt, d, NULL, &err), HURRAY_OK);
    assert_int_equal(ta.live_allocs, 1);
    assert_status(hurray_descriptor_decode(golden, sizeof golden, &opt, d, NULL, &err), HURRAY_OK);
    assert_int_equal(ta.live_allocs, 1); /* the first block freed, the golden's the only one */
    hurray_descriptor_reset(d);
    assert_alloc_clean(&ta);
    assert_status(hurray_descriptor_decode(buf, n, &opt, d, NULL, &err), HURRAY_OK);
    assert_status(hurray_descriptor_decode(buf, 16, &opt, d, NULL, &err), HURRAY_E_TRUNCATED);
    assert_alloc_clean(&ta);
    desc_free(d);
}

/* ==== HR-DESC-5: each step's own failures =================================== */

/* Steps 1-4: header. */
static void test_HR_DESC_5_step1_to_4_header(void **state) {
    (void)state;
    expect_decode(golden, 0, HURRAY_E_TRUNCATED, NULL);
    expect_decode(golden, 15, HURRAY_E_TRUNCATED, NULL);
    for (unsigned i = 0; i < 4; i++) expect_golden_patch(i, 0x00, HURRAY_E_BAD_MAGIC, "magic");
    expect_golden_patch(4, 0, HURRAY_E_VERSION, "version_major");
    expect_golden_patch(4, 2, HURRAY_E_VERSION, "version_major");
    expect_golden_patch(4, 0xFF, HURRAY_E_VERSION, "version_major");
    const size_t reserved[] = {6, 7, 12, 13, 14, 15, 23};
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++) {
        expect_golden_patch(reserved[i], 0x01, HURRAY_E_RESERVED_NONZERO, NULL);
        expect_golden_patch(reserved[i], 0x80, HURRAY_E_RESERVED_NONZERO, NULL);
    }
    const uint32_t bad_len[] = {0, 8, 32, 39, 41, 44, 71, 73, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof bad_len / sizeof bad_len[0]; i++) {
        uint8_t b[sizeof golden];
        memcpy(b, golden, sizeof b);
        test_put_u32(b + 8, bad_len[i]);
        expect_decode(b, sizeof b, HURRAY_E_LENGTH, "encoded_len");
    }
}

/* Step 3: the limit, before the bytes are asked for (step 4). */
static void test_HR_LIMIT_1_encoded_len_over_limit(void **state) {
    (void)state;
    uint8_t b[sizeof golden];
    struct hurray_limits lim;
    struct hurray_error err;
    memcpy(b, golden, sizeof b);
    test_put_u32(b + 8, (1u << 20) + 8);
    expect_decode(b, sizeof b, HURRAY_E_LIMIT, "encoded_len");
    test_put_u32(b + 8, 0xFFFFFFF8u);
    expect_decode(b, sizeof b, HURRAY_E_LIMIT, "encoded_len");
    hurray_limits_default(&lim);
    lim.max_descriptor_bytes = 64;
    assert_status(decode_status(golden, sizeof golden, &lim, &err), HURRAY_E_LIMIT);
    lim.max_descriptor_bytes = 72;
    assert_status(decode_status(golden, sizeof golden, &lim, &err), HURRAY_OK);
    lim.max_descriptor_bytes = 0xFFFFFFFF; /* not clamped below 2^32 - 8: fine for 72 */
    assert_status(decode_status(golden, sizeof golden, &lim, &err), HURRAY_OK);
    /* Under the limit but more than is there: TRUNCATED. */
    test_put_u32(b + 8, 80);
    expect_decode(b, sizeof b, HURRAY_E_TRUNCATED, NULL);
}

/* Lengths that lie: every read stops at encoded_len (LENGTH), never past the
 * input; an encoded_len past the last part is LENGTH at step 10. */
static void test_HR_DESC_5_lengths_that_lie(void **state) {
    (void)state;
    uint8_t b[sizeof golden + 16];
    for (uint32_t len = 40; len < 72; len += 8) {
        memcpy(b, golden, sizeof golden);
        test_put_u32(b + 8, len);
        expect_decode(b, sizeof golden, HURRAY_E_LENGTH, NULL);
        expect_decode(b, len, HURRAY_E_LENGTH, NULL);
    }
    memset(b, 0, sizeof b);
    memcpy(b, golden, sizeof golden);
    test_put_u32(b + 8, 80);
    expect_decode(b, 80, HURRAY_E_LENGTH, "encoded_len");
    expect_decode(b, 79, HURRAY_E_TRUNCATED, NULL);

    /* param_length past the end, and not the layout's exact length. */
    memcpy(b, golden, sizeof golden);
    test_put_u32(b + 64, 8);
    expect_decode(b, sizeof golden, HURRAY_E_LENGTH, "layout");
    test_put_u32(b + 64, 0xFFFFFFFFu);
    expect_decode(b, sizeof golden, HURRAY_E_LENGTH, "layout");
    test_put_u32(b + 8, 80);
    test_put_u32(b + 64, 8); /* 8 bytes of row_major parameters: it has none */
    memset(b + 72, 0, 8);
    expect_decode(b, 80, HURRAY_E_LENGTH, "layout");
}

static void test_HR_DESC_5_section_lengths_that_lie(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    size_t n = build_encoded(find_entry("b_unknown_sections"), buf, sizeof buf);
    /* sections: [0] statistics (32), [1] 0x05 (5), [2] 0xF0 (0), [3] 0xFE (16) */
    size_t s0 = off_section(buf, 0), s2 = off_section(buf, 2), s3 = off_section(buf, 3);
    uint8_t *b = malloc(n);
    assert_non_null(b);
    /* statistics: exact length 32 */
    memcpy(b, buf, n);
    test_put_u32(b + s0 + 4, 24);
    expect_decode(b, n, HURRAY_E_LENGTH, "sections[0]");
    test_put_u32(b + s0 + 4, 40);
    expect_decode(b, n, HURRAY_E_LENGTH, "sections[0]");
    test_put_u32(b + s0 + 4, 0x7FFFFFFFu);
    expect_decode(b, n, HURRAY_E_LENGTH, "sections[0]");
    /* the last section's payload past encoded_len */
    memcpy(b, buf, n);
    test_put_u32(b + s3 + 4, 17);
    expect_decode(b, n, HURRAY_E_LENGTH, "sections[3]");
    test_put_u32(b + s3 + 4, 24);
    expect_decode(b, n, HURRAY_E_LENGTH, "sections[3]");
    /* an unknown section shortened: the bytes after it are not a section */
    memcpy(b, buf, n);
    test_put_u32(b + s2 + 4, 8); /* eats the next header; payload text is read as one */
    expect_decode(b, n, HURRAY_E_SECTION_ORDER, "sections[3].type");
    /* section_count larger than what is there: header does not fit */
    memcpy(b, buf, n);
    b[22] = 5;
    expect_decode(b, n, HURRAY_E_LENGTH, "sections[4]");
    /* section_count smaller: bytes left over at the end */
    b[22] = 3;
    expect_decode(b, n, HURRAY_E_LENGTH, "encoded_len");
    free(b);
}

/* Step 5: tags in every fixed tag field, and the device pair. */
static void test_HR_DESC_5_step5_fixed_field_tags(void **state) {
    (void)state;
    expect_golden_patch(16, 0x00, HURRAY_E_INVALID_TAG, "dtype");
    expect_golden_patch(16, 0xFF, HURRAY_E_INVALID_TAG, "dtype");
    expect_golden_patch(16, 0x10, HURRAY_E_RESERVED_TAG, "dtype");
    expect_golden_patch(16, 0xEF, HURRAY_E_RESERVED_TAG, "dtype");
    expect_golden_patch(16, 0xF0, HURRAY_OK, NULL); /* private: width unknown, tier 2 skips */
    expect_golden_patch(17, 0x00, HURRAY_E_INVALID_TAG, "device");
    expect_golden_patch(17, 0xFF, HURRAY_E_INVALID_TAG, "device");
    expect_golden_patch(17, 0x0B, HURRAY_E_RESERVED_TAG, "device");
    expect_golden_patch(17, 0xFE, HURRAY_OK, NULL);
    expect_golden_patch(18, 0x00, HURRAY_E_INVALID_TAG, "memory_class");
    expect_golden_patch(18, 0xFF, HURRAY_E_INVALID_TAG, "memory_class");
    expect_golden_patch(18, 0x05, HURRAY_E_RESERVED_TAG, "memory_class");
    expect_golden_patch(18, 0xF7, HURRAY_OK, NULL);
    expect_golden_patch(18, HURRAY_MEM_PEER, HURRAY_E_COMBINATION, NULL); /* cpu/peer */
    expect_golden_patch(19, 0x00, HURRAY_E_INVALID_TAG, "layout");
    expect_golden_patch(19, 0xFF, HURRAY_E_INVALID_TAG, "layout");
    /* HR-LAYOUT-3: a reserved layout is accepted as unknown (0 params, any buffers). */
    expect_golden_patch(19, 0x07, HURRAY_OK, NULL);
    expect_golden_patch(19, 0xEF, HURRAY_OK, NULL);
    /* A private layout needs at least 8 parameter bytes. */
    expect_golden_patch(19, 0xF0, HURRAY_E_LENGTH, "layout");
}

/* HR-DEV-4: every forbidden (device, memory class) pair is COMBINATION. */
static void test_HR_DEV_4_forbidden_pairs(void **state) {
    (void)state;
    const uint8_t pairs[][2] = {
        {HURRAY_DEVICE_CPU, HURRAY_MEM_PEER},        {HURRAY_DEVICE_METAL, HURRAY_MEM_PEER},
        {HURRAY_DEVICE_VULKAN, HURRAY_MEM_HOST_PINNED}, {HURRAY_DEVICE_VULKAN, HURRAY_MEM_UNIFIED},
        {HURRAY_DEVICE_OPENCL, HURRAY_MEM_PEER},     {HURRAY_DEVICE_WEBGPU, HURRAY_MEM_UNIFIED},
        {HURRAY_DEVICE_HEXAGON, HURRAY_MEM_HOST_PINNED}, {HURRAY_DEVICE_MAIA, HURRAY_MEM_PEER},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        uint8_t b[sizeof golden];
        memcpy(b, golden, sizeof b);
        b[17] = pairs[i][0];
        b[18] = pairs[i][1];
        expect_decode(b, sizeof b, HURRAY_E_COMBINATION, "memory_class");
    }
}

/* Step 5, rank: LIMIT over max_rank (format maximum 64). */
static void test_HR_LIMIT_1_rank_over_limit(void **state) {
    (void)state;
    uint8_t b[BUF_CAP];
    struct hurray_limits lim;
    struct hurray_error err;
    expect_golden_patch(20, 65, HURRAY_E_LIMIT, "rank");
    expect_golden_patch(20, 255, HURRAY_E_LIMIT, "rank");
    hurray_limits_default(&lim);
    lim.max_rank = 1;
    assert_status(decode_status(golden, sizeof golden, &lim, &err), HURRAY_E_LIMIT);
    assert_hurray_error(&err, HURRAY_E_LIMIT, "rank");
    lim.max_rank = 2;
    assert_status(decode_status(golden, sizeof golden, &lim, &err), HURRAY_OK);
    lim.max_rank = 1000; /* clamped to 64 */
    size_t n = build_encoded(find_entry("b_rank64"), b, sizeof b);
    assert_status(decode_status(b, n, &lim, &err), HURRAY_OK);
    lim.max_rank = 63;
    assert_status(decode_status(b, n, &lim, &err), HURRAY_E_LIMIT);
    b[20] = 65;
    expect_decode(b, n, HURRAY_E_LIMIT, "rank");
    /* validate and encode refuse rank 65 before touching shape[64]. */
    struct hurray_descriptor *d = build(find_entry("b_rank64"));
    d->rank = 65;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_LIMIT);
    assert_status(hurray_descriptor_encode(d, b, sizeof b, NULL, &err), HURRAY_E_LIMIT);
    d->rank = 255;
    assert_status(hurray_descriptor_encoded_len(d, &n, &err), HURRAY_E_LIMIT);
    desc_free(d);
}

/* ==== HR-SHAPE: step 6 ====================================================== */

/* The golden vector with dtype, shape[0] and shape[1] replaced. */
static void expect_shape(uint8_t dtype, uint64_t s0, uint64_t s1, int code, const char *field) {
    uint8_t b[sizeof golden];
    memcpy(b, golden, sizeof b);
    b[16] = dtype;
    test_put_u64(b + 32, s0);
    test_put_u64(b + 40, s1);
    expect_decode(b, sizeof b, code, field);
}

static void test_HR_SHAPE_1_extent_range(void **state) {
    (void)state;
    const uint64_t big = UINT64_C(1) << 63;
    expect_shape(HURRAY_DTYPE_FLOAT32, big, 1, HURRAY_E_RANGE, "shape[0]");
    expect_shape(HURRAY_DTYPE_FLOAT32, 1, big, HURRAY_E_RANGE, "shape[1]");
    expect_shape(HURRAY_DTYPE_FLOAT32, 1, UINT64_MAX - 1, HURRAY_E_RANGE, "shape[1]");
    /* 2^63 - 1 is resolved: the count passes, the 24-byte buffer does not. */
    expect_shape(HURRAY_DTYPE_UINT1, big - 1, 1, HURRAY_E_BUFFER_SIZE, "buffers[0].size");
    /* Extents in order: shape[0]'s RANGE before shape[1] is read past encoded_len. */
    uint8_t b[sizeof golden];
    memcpy(b, golden, sizeof b);
    test_put_u32(b + 8, 40);
    test_put_u64(b + 32, big);
    expect_decode(b, sizeof b, HURRAY_E_RANGE, "shape[0]");
    test_put_u64(b + 32, 2);
    expect_decode(b, sizeof b, HURRAY_E_LENGTH, "shape[1]");
}

/* HR-SHAPE-3: N and N x bits fit 64 bits, dynamic extents aside. */
static void test_HR_SHAPE_3_overflow(void **state) {
    (void)state;
    const uint64_t two32 = UINT64_C(1) << 32;
    expect_shape(HURRAY_DTYPE_FLOAT32, UINT64_C(1) << 62, 4, HURRAY_E_OVERFLOW, "shape");
    /* (2^32+1)(2^32-1) = 2^64-1 elements: N fits, N x 32 bits does not. */
    expect_shape(HURRAY_DTYPE_FLOAT32, two32 + 1, two32 - 1, HURRAY_E_OVERFLOW, "shape");
    expect_shape(HURRAY_DTYPE_UINT2, two32 + 1, two32 - 1, HURRAY_E_OVERFLOW, "shape");
    expect_shape(HURRAY_DTYPE_INT8, (UINT64_C(1) << 63) - 1, 2, HURRAY_E_OVERFLOW, "shape");
    /* ... but 2^64-1 one-bit elements fit: step 6 passes, tier 2 refuses the buffer. */
    expect_shape(HURRAY_DTYPE_UINT1, two32 + 1, two32 - 1, HURRAY_E_BUFFER_SIZE, NULL);
    /* An extension type's width is unknown: only N is checked. */
    expect_shape(0xF0, two32 + 1, two32 - 1, HURRAY_OK, NULL);
    expect_shape(0xF0, UINT64_C(1) << 62, 4, HURRAY_E_OVERFLOW, "shape");
    /* Even where a dynamic extent leaves N unknown. */
    expect_shape(HURRAY_DTYPE_FLOAT32, DYN, UINT64_C(1) << 58, HURRAY_OK, NULL);
    expect_shape(HURRAY_DTYPE_FLOAT32, DYN, UINT64_C(1) << 59, HURRAY_E_OVERFLOW, "shape");
    expect_shape(0xF0, UINT64_C(1) << 62, DYN, HURRAY_OK, NULL);
    /* N = 0 when any resolved extent is 0: no product is formed. */
    expect_shape(HURRAY_DTYPE_FLOAT32, 0, (UINT64_C(1) << 63) - 1, HURRAY_OK, NULL);
    expect_shape(HURRAY_DTYPE_COMPLEX128, DYN, 0, HURRAY_OK, NULL);
}

static void test_HR_SHAPE_3_element_count(void **state) {
    (void)state;
    uint64_t n = 7;
    int resolved = 7;
    struct hurray_error err;
    assert_status(hurray_shape_element_count(0, NULL, &n, &resolved, &err), HURRAY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(resolved, 1);
    assert_status(hurray_shape_element_count(3, (uint64_t[]){2, 3, 4}, &n, &resolved, &err),
                  HURRAY_OK);
    assert_int_equal(n, 24);
    assert_status(hurray_shape_element_count(3, (uint64_t[]){2, DYN, 4}, &n, &resolved, &err),
                  HURRAY_OK);
    assert_int_equal(n, 8);
    assert_int_equal(resolved, 0);
    assert_status(hurray_shape_element_count(2, (uint64_t[]){0, DYN}, &n, &resolved, &err),
                  HURRAY_OK);
    assert_int_equal(n, 0);
    assert_int_equal(resolved, 0);
    assert_status(hurray_shape_element_count(2, (uint64_t[]){UINT64_C(1) << 62, 0}, &n,
                                             &resolved, &err),
                  HURRAY_OK);
    assert_int_equal(n, 0);
    assert_status(hurray_shape_element_count(2, (uint64_t[]){UINT64_C(1) << 62, 4}, &n,
                                             &resolved, &err),
                  HURRAY_E_OVERFLOW);
    assert_status(hurray_shape_element_count(1, (uint64_t[]){UINT64_MAX - 1}, &n, &resolved,
                                             &err),
                  HURRAY_E_RANGE);
    assert_hurray_error(&err, HURRAY_E_RANGE, "shape[0]");
    assert_status(hurray_shape_element_count(65, (uint64_t[65]){0}, &n, &resolved, &err),
                  HURRAY_E_LIMIT);
    assert_status(hurray_shape_element_count(1, NULL, &n, &resolved, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_shape_element_count(0, NULL, NULL, &resolved, &err), HURRAY_E_ARGUMENT);
}

/* HR-SHAPE-2: dynamic extents round-trip and their requirements are skipped. */
static void test_HR_SHAPE_2_dynamic_requirements_skipped(void **state) {
    (void)state;
    uint64_t sizes[HURRAY_MAX_BUFFERS];
    uint8_t known[HURRAY_MAX_BUFFERS];
    struct hurray_error err;
    struct hurray_descriptor *d = build(find_entry("b_dynamic"));
    assert_status(hurray_descriptor_required_sizes(d, sizes, known, &err), HURRAY_OK);
    assert_int_equal(known[0], 0);
    test_set_buffer(d, 0, 1); /* any size is accepted */
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK);
    desc_free(d);
    d = build(find_entry("b_dynamic_coo"));
    assert_status(hurray_descriptor_required_sizes(d, sizes, known, &err), HURRAY_OK);
    assert_int_equal(known[0], 1); /* values: off + bs(nnz), no extent involved */
    assert_int_equal(sizes[0], 4000);
    test_set_buffer(d, 0, 3999);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_BUFFER_SIZE);
    desc_free(d);
}

/* ==== HR-BUF: step 7 ========================================================= */

static void test_HR_BUF_1_entry_rules(void **state) {
    (void)state;
    for (size_t at = 58; at < 64; at++)
        expect_golden_patch(at, 0x01, HURRAY_E_RESERVED_NONZERO, "buffers[0].reserved");
    expect_golden_patch(56, 12, HURRAY_OK, NULL);
    expect_golden_patch(56, 13, HURRAY_E_ALIGNMENT, "buffers[0].alignment_log2");
    expect_golden_patch(56, 0xFF, HURRAY_E_ALIGNMENT, "buffers[0].alignment_log2");
    expect_golden_patch(57, 0x00, HURRAY_E_INVALID_TAG, "buffers[0].sync_mode");
    expect_golden_patch(57, 0xFF, HURRAY_E_INVALID_TAG, "buffers[0].sync_mode");
    expect_golden_patch(57, 0x04, HURRAY_E_RESERVED_TAG, "buffers[0].sync_mode");
    expect_golden_patch(57, 0xF0, HURRAY_E_RESERVED_TAG, "buffers[0].sync_mode");
    expect_golden_patch(57, HURRAY_SYNC_EVENT, HURRAY_OK, NULL);
    expect_golden_patch(57, HURRAY_SYNC_STREAM, HURRAY_OK, NULL);
    /* The offset of the failing field is recorded. */
    uint8_t b[sizeof golden];
    struct hurray_error err;
    memcpy(b, golden, sizeof b);
    b[56] = 13;
    assert_status(decode_status(b, sizeof b, NULL, &err), HURRAY_E_ALIGNMENT);
    assert_int_equal(err.has_offset, 1);
    assert_int_equal(err.offset, 56);
}

/* HR-BUF-2: an empty buffer declares alignment 1. */
static void test_HR_BUF_2_empty_buffer_alignment(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    size_t n = build_encoded(find_entry("b_zero_dims"), buf, sizeof buf);
    size_t e = off_buffers(buf);
    assert_int_equal(test_get_u64(buf + e), 0);
    assert_int_equal(buf[e + 8], 0);
    buf[e + 8] = 1;
    expect_decode(buf, n, HURRAY_E_ALIGNMENT, "buffers[0].alignment_log2");
    buf[e + 8] = 12;
    expect_decode(buf, n, HURRAY_E_ALIGNMENT, "buffers[0].alignment_log2");
}

static void test_HR_LIMIT_1_max_buffer_bytes(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    struct hurray_limits lim;
    struct hurray_error err;
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){UINT64_C(1) << 38});
    test_fill_buffers(d, 64);
    assert_int_equal(d->buffers[0].size, UINT64_C(1) << 40);
    /* A writer is bound by the format, not by a reader's default limit. */
    size_t n = encode_ok(d, buf, sizeof buf);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_LIMIT);
    expect_decode(buf, n, HURRAY_E_LIMIT, "buffers[0].size");
    hurray_limits_default(&lim);
    lim.max_buffer_bytes = UINT64_MAX;
    assert_status(decode_status(buf, n, &lim, &err), HURRAY_OK);
    lim.max_buffer_bytes = (UINT64_C(1) << 40) - 1;
    assert_status(decode_status(buf, n, &lim, &err), HURRAY_E_LIMIT);
    desc_free(d);
    /* Exactly the default limit is accepted. */
    d = test_desc_new(HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){UINT64_C(1) << 34});
    test_fill_buffers(d, 64);
    n = encode_ok(d, buf, sizeof buf);
    expect_decode(buf, n, HURRAY_OK, NULL);
    TEST_PATCH_BUFFER(d, 0, size, d->buffers[0].size + 1);
    n = encode_ok(d, buf, sizeof buf);
    expect_decode(buf, n, HURRAY_E_LIMIT, "buffers[0].size");
    desc_free(d);
}

/* ==== HR-LAYOUT: step 8 ====================================================== */

static void test_HR_DESC_5_step8_layout_block(void **state) {
    (void)state;
    for (size_t at = 68; at < 72; at++)
        expect_golden_patch(at, 0x01, HURRAY_E_RESERVED_NONZERO, "layout");
    uint8_t buf[BUF_CAP];
    /* Padding after parameters whose length is not a multiple of 8. */
    size_t n = build_encoded(find_entry("b_private_layout"), buf, sizeof buf);
    size_t p = off_params(buf);
    assert_int_equal(test_get_u32(buf + off_layout(buf)), 19);
    for (size_t at = p + 19; at < p + 24; at++) {
        buf[at] = 0x10;
        expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, "layout.padding");
        buf[at] = 0;
    }
    /* The private layout's own reserved word. */
    for (size_t at = p + 4; at < p + 8; at++) {
        buf[at] = 0x10;
        expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, "layout");
        buf[at] = 0;
    }
    expect_decode(buf, n, HURRAY_OK, NULL);
    /* param_length one short: the last parameter byte is read as padding. */
    test_put_u32(buf + off_layout(buf), 18);
    expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, "layout.padding");
    test_put_u32(buf + off_layout(buf), 24);
    expect_decode(buf, n, HURRAY_OK, NULL); /* 24 bytes of private params, zero padding */
    n = build_encoded(find_entry("b_unknown_layout"), buf, sizeof buf);
    p = off_params(buf);
    buf[p + 13] = 1;
    expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, "layout.padding");
}

/* Composite parameters: rule, combine, reserved u16, member_count. */
static void test_HR_LAYOUT_30_composite_params(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    struct hurray_limits lim;
    struct hurray_error err;
    size_t n = build_encoded(find_entry("b_composite_overlay_add"), buf, sizeof buf);
    size_t p = off_params(buf);
    const struct {
        size_t at;
        uint8_t v;
        int code;
    } cases[] = {
        {0, 0x00, HURRAY_E_INVALID_TAG},  {0, 0xFF, HURRAY_E_INVALID_TAG},
        {0, 0x04, HURRAY_E_RESERVED_TAG}, {1, 0x00, HURRAY_E_INVALID_TAG},
        {1, 0xFF, HURRAY_E_INVALID_TAG},  {1, 0x05, HURRAY_E_RESERVED_TAG},
        {2, 0x01, HURRAY_E_RESERVED_NONZERO}, {3, 0x80, HURRAY_E_RESERVED_NONZERO},
        {0, HURRAY_RULE_PARTITION, HURRAY_E_COMBINATION},
        {0, HURRAY_RULE_GROUP, HURRAY_E_COMBINATION},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t old = buf[p + cases[i].at];
        buf[p + cases[i].at] = cases[i].v;
        expect_decode(buf, n, cases[i].code, "layout");
        buf[p + cases[i].at] = old;
    }
    test_put_u32(buf + p + 4, 0);
    expect_decode(buf, n, HURRAY_E_CONSTRAINT, "layout.member_count");
    test_put_u32(buf + p + 4, 65537);
    expect_decode(buf, n, HURRAY_E_LIMIT, "layout.member_count");
    hurray_limits_default(&lim);
    lim.max_composite_members = 70000;
    assert_status(decode_status(buf, n, &lim, &err), HURRAY_OK);
    /* A composite head owns no buffers, carries no byte_offset and no quantization. */
    struct hurray_descriptor *d = build(find_entry("b_composite_group"));
    d->byte_offset = 8;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    assert_hurray_error(&err, HURRAY_E_CONSTRAINT, "byte_offset");
    d->byte_offset = 0;
    test_set_buffer_count(d, 1);
    test_set_buffer(d, 0, 64);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_BUFFER_COUNT);
    test_set_buffer_count(d, 0);
    test_quant_init(test_quant(d), HURRAY_QUANT_PER_TENSOR_AFFINE);
    test_quant(d)->scale = 1;
    d->dtype = HURRAY_DTYPE_INT8;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_COMBINATION);
    desc_free(d);
}

/* Parameter constraints are tier 3 (HR-LAYOUT-50): a later structural
 * fault (step 9) wins over them. */
static void test_HR_DESC_5_param_constraints_after_structure(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    const char *names[] = {"b_tiled", "b_composite_group"};
    for (size_t i = 0; i < 2; i++) {
        struct hurray_descriptor *d = build(find_entry(names[i]));
        test_add_opaque(d, 0x30, 0, ext_bytes, 3);
        size_t n = encode_ok(d, buf, sizeof buf);
        size_t p = off_params(buf), s0 = off_section(buf, 0);
        if (i == 0)
            test_put_u64(buf + p, 0); /* tile_shape[0] = 0 */
        else
            test_put_u32(buf + p + 4, 0); /* member_count = 0 */
        buf[s0 + 8 + 5] = 1; /* padding of the unknown section */
        expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, "sections[0].padding");
        buf[s0 + 8 + 5] = 0;
        expect_decode(buf, n, HURRAY_E_CONSTRAINT, "layout");
        desc_free(d);
    }
}

/* HR-DESC-3: byte_offset. */
static void test_HR_DESC_3_byte_offset(void **state) {
    (void)state;
    struct hurray_error err;
    struct hurray_descriptor *d = build(find_entry("b_byte_offset"));
    assert_int_equal(d->buffers[0].size, 32);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK);
    d->byte_offset = 18; /* not a multiple of 4 */
    test_set_buffer(d, 0, 64);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    assert_hurray_error(&err, HURRAY_E_CONSTRAINT, "byte_offset");
    d->byte_offset = 20;
    test_set_buffer(d, 0, 35); /* needs 20 + 16 */
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_BUFFER_SIZE);
    desc_free(d);
    /* No buffers: 0. */
    d = build(find_entry("b_unknown_layout_empty"));
    d->byte_offset = 1;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    assert_hurray_error(&err, HURRAY_E_CONSTRAINT, "byte_offset");
    desc_free(d);
    /* Sub-byte types: any offset (the element width is not a byte count). */
    d = build(find_entry("b_row_major_int4"));
    d->byte_offset = 3;
    test_set_buffer(d, 0, 11);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK);
    desc_free(d);
}

/* ==== HR-SECT: step 9 ======================================================== */

static void test_HR_SECT_4_invalid_section_types(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    size_t n = build_encoded(find_entry("b_unknown_sections"), buf, sizeof buf);
    size_t s2 = off_section(buf, 2);
    buf[s2] = 0xFF;
    expect_decode(buf, n, HURRAY_E_INVALID_TAG, "sections[2].type");
    size_t s0 = off_section(buf, 0);
    buf[s0] = 0x00;
    expect_decode(buf, n, HURRAY_E_INVALID_TAG, "sections[0].type");
}

static void test_HR_SECT_1_duplicate_and_out_of_order(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    size_t n = build_encoded(find_entry("b_unknown_sections"), buf, sizeof buf);
    /* sections: [0] statistics, [1] 0x05, [2] 0xF0, [3] 0xFE */
    size_t s2 = off_section(buf, 2), s3 = off_section(buf, 3);
    buf[s2] = 0x05; /* duplicates sections[1] */
    expect_decode(buf, n, HURRAY_E_SECTION_ORDER, "sections[2].type");
    buf[s2] = 0x02; /* known type, after an unknown one */
    expect_decode(buf, n, HURRAY_E_SECTION_ORDER, "sections[2].type");
    buf[s2] = 0x04; /* role, must-understand, but out of order first */
    expect_decode(buf, n, HURRAY_E_SECTION_ORDER, "sections[2].type");
    buf[s2] = 0xF0;
    buf[s3] = 0xF0;
    expect_decode(buf, n, HURRAY_E_SECTION_ORDER, "sections[3].type");
    /* Known sections too: statistics twice. */
    n = build_encoded(find_entry("b_all_sections"), buf, sizeof buf);
    size_t q = off_section(buf, 2); /* shard */
    buf[q] = 0x02;
    expect_decode(buf, n, HURRAY_E_SECTION_ORDER, "sections[2].type");
}

static void test_HR_SECT_2_3_must_understand(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    size_t n = build_encoded(find_entry("b_all_sections"), buf, sizeof buf);
    const int want[] = {1, 0, 0, 1, 0};
    for (unsigned i = 0; i < 5; i++) {
        size_t at = off_section(buf, i) + 1;
        char f[32];
        snprintf(f, sizeof f, "sections[%u].flags", i);
        buf[at] ^= 1; /* known: CONSTRAINT either way; unknown 0x22: UNSUPPORTED */
        expect_decode(buf, n, want[i] == 0 && i == 4 ? HURRAY_E_UNSUPPORTED : HURRAY_E_CONSTRAINT,
                      f);
        buf[at] ^= 1;
        buf[at] |= 0x02; /* a reserved flag bit */
        expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, f);
        buf[at] &= 0x01;
        buf[at + 1] = 0x01; /* reserved u16 */
        expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, "reserved");
        buf[at + 1] = 0;
        buf[at + 2] = 0x40;
        expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, "reserved");
        buf[at + 2] = 0;
    }
    expect_decode(buf, n, HURRAY_OK, NULL);
}

/* Section padding and the payloads' own reserved bytes and tags. */
static void test_HR_SECT_payload_reserved_and_padding(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    size_t n = build_encoded(find_entry("b_unknown_sections"), buf, sizeof buf);
    size_t s0 = off_section(buf, 0);
    /* sections: [0] statistics, [1] 0x05 (5 bytes), [2] 0xF0 (0), [3] 0xFE (16) */
    size_t p05 = off_section(buf, 1) + 8;
    for (size_t at = p05 + 5; at < p05 + 8; at++) {
        buf[at] = 0x01;
        expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, "sections[1].padding");
        buf[at] = 0;
    }
    /* statistics: reserved bytes 1-7 */
    for (size_t at = s0 + 9; at < s0 + 16; at++) {
        buf[at] = 0x01;
        expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, "statistics");
        buf[at] = 0;
    }
    expect_decode(buf, n, HURRAY_OK, NULL);

    n = build_encoded(find_entry("b_all_sections"), buf, sizeof buf);
    size_t q = off_section(buf, 0) + 8, r = off_section(buf, 3) + 8;
    for (size_t at = q + 1; at < q + 8; at++) {
        buf[at] = 0x01;
        expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, "quantization");
        buf[at] = 0;
    }
    buf[q] = 0x00;
    expect_decode(buf, n, HURRAY_E_INVALID_TAG, "quantization.scheme");
    buf[q] = 0x07;
    expect_decode(buf, n, HURRAY_E_RESERVED_TAG, "quantization.scheme");
    buf[q] = 0x02; /* per_channel is 16 bytes, the section says 24 */
    expect_decode(buf, n, HURRAY_E_LENGTH, "sections[0].length");
    buf[q] = 0x01;
    for (size_t at = r + 1; at < r + 8; at++) {
        buf[at] = 0x01;
        expect_decode(buf, n, HURRAY_E_RESERVED_NONZERO, "member_role");
        buf[at] = 0;
    }
    buf[r] = 0x00;
    expect_decode(buf, n, HURRAY_E_INVALID_TAG, "member_role");
    buf[r] = 0xFF;
    expect_decode(buf, n, HURRAY_E_INVALID_TAG, "member_role");
    buf[r] = 0x03;
    expect_decode(buf, n, HURRAY_E_RESERVED_TAG, "member_role");
    buf[r] = HURRAY_ROLE_BASE;
    expect_decode(buf, n, HURRAY_OK, NULL);
    /* An empty quantization payload: the scheme byte is past the section. */
    n = build_encoded(find_entry("b_q_per_tensor"), buf, sizeof buf);
    q = off_section(buf, 0);
    test_put_u32(buf + q + 4, 0);
    expect_decode(buf, n, HURRAY_E_LENGTH, NULL);
}

/* Tags inside the quantization payload: scheme and dtype bytes (step 9),
 * then the allowed sets (tier 3). */
static void test_HR_QUANT_payload_tags_through_descriptor(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    size_t n = build_encoded(find_entry("b_q_per_channel"), buf, sizeof buf);
    size_t q = off_section(buf, 0) + 8; /* scheme, axis, scale idx, zp idx, scale dt, zp dt */
    const struct {
        size_t at;
        uint8_t v;
        int code;
        const char *field;
    } cases[] = {
        {4, 0x00, HURRAY_E_INVALID_TAG, "quantization.scale_dtype"},
        {4, 0xFF, HURRAY_E_INVALID_TAG, "quantization.scale_dtype"},
        {4, 0x10, HURRAY_E_RESERVED_TAG, "quantization.scale_dtype"},
        {4, HURRAY_DTYPE_UINT8, HURRAY_E_COMBINATION, "quantization.scale_dtype"},
        {5, 0x00, HURRAY_E_INVALID_TAG, "quantization.zero_point_dtype"},
        {5, 0x50, HURRAY_E_RESERVED_TAG, "quantization.zero_point_dtype"},
        {5, HURRAY_DTYPE_FLOAT64, HURRAY_E_COMBINATION, "quantization.zero_point_dtype"},
        {2, 0x02, HURRAY_E_CONSTRAINT, "quantization.scale_buffer_index"},
        {1, 0x02, HURRAY_E_RANGE, "quantization"},
        {6, 0x01, HURRAY_E_RESERVED_NONZERO, "quantization"},
        {15, 0x01, HURRAY_E_RESERVED_NONZERO, "quantization"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t keep = buf[q + cases[i].at];
        buf[q + cases[i].at] = cases[i].v;
        expect_decode(buf, n, cases[i].code, cases[i].field);
        buf[q + cases[i].at] = keep;
    }
    expect_decode(buf, n, HURRAY_OK, NULL);
}

/* ==== HR-DESC-5: first failure wins ========================================= */

/* Two faults in one input: the earlier step (or earlier offset within a
 * step) decides the status. Each row patches the golden vector twice. */
static void test_HR_DESC_5_decoding_order_pairs(void **state) {
    (void)state;
    const struct {
        size_t a;
        uint8_t va;
        size_t b;
        uint8_t vb;
        int code;
        const char *field;
    } rows[] = {
        {0, 'X', 4, 2, HURRAY_E_BAD_MAGIC, "magic"},
        {4, 2, 6, 1, HURRAY_E_VERSION, "version_major"},
        {7, 1, 12, 1, HURRAY_E_RESERVED_NONZERO, "reserved[6..7]"},
        {15, 1, 8, 41, HURRAY_E_RESERVED_NONZERO, "reserved[12..15]"},
        {8, 44, 11, 0x7F, HURRAY_E_LENGTH, "encoded_len"}, /* not a multiple of 8, huge */
        {23, 1, 16, 0x00, HURRAY_E_RESERVED_NONZERO, "reserved[23]"},
        {16, 0x00, 17, 0x00, HURRAY_E_INVALID_TAG, "dtype"},
        {16, 0x40, 17, 0x00, HURRAY_E_RESERVED_TAG, "dtype"},
        {17, 0x20, 18, 0x00, HURRAY_E_RESERVED_TAG, "device"},
        {18, 0xFF, 19, 0x00, HURRAY_E_INVALID_TAG, "memory_class"},
        {18, HURRAY_MEM_PEER, 19, 0xFF, HURRAY_E_COMBINATION, "memory_class"},
        {19, 0x00, 20, 99, HURRAY_E_INVALID_TAG, "layout"},
        {20, 65, 58, 1, HURRAY_E_LIMIT, "rank"},
        {39, 0x80, 58, 1, HURRAY_E_RANGE, "shape[0]"},
        {39, 0x40, 58, 1, HURRAY_E_OVERFLOW, "shape"},
        {58, 1, 56, 13, HURRAY_E_RESERVED_NONZERO, "buffers[0].reserved"},
        {56, 13, 57, 0, HURRAY_E_ALIGNMENT, "buffers[0].alignment_log2"},
        {57, 0, 55, 0x10, HURRAY_E_INVALID_TAG, "buffers[0].sync_mode"},
        {55, 0x10, 68, 1, HURRAY_E_LIMIT, "buffers[0].size"},
        {48, 23, 68, 1, HURRAY_E_RESERVED_NONZERO, "layout.reserved"}, /* before tier 2 */
        {69, 1, 64, 8, HURRAY_E_RESERVED_NONZERO, "layout.reserved"},
        {64, 8, 48, 23, HURRAY_E_LENGTH, "layout.param_length"},
        {22, 1, 48, 23, HURRAY_E_LENGTH, "sections[0]"}, /* structure before tier 2 */
        {21, 2, 40, 5, HURRAY_E_LENGTH, "buffers[1]"},   /* entry past the end, then tiers */
        {21, 0, 40, 5, HURRAY_E_LENGTH, "layout.param_length"}, /* 24 read as param_length */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint8_t b[sizeof golden];
        memcpy(b, golden, sizeof b);
        b[rows[i].a] = rows[i].va;
        b[rows[i].b] = rows[i].vb;
        expect_decode(b, sizeof b, rows[i].code, rows[i].field);
    }
    /* Step 10 before step 11: an end short of encoded_len beats tier 2. */
    uint8_t b[sizeof golden + 8];
    memset(b, 0, sizeof b);
    memcpy(b, golden, sizeof golden);
    test_put_u32(b + 8, sizeof b);
    b[48] = 23;
    expect_decode(b, sizeof b, HURRAY_E_LENGTH, "encoded_len");
    test_put_u32(b + 8, sizeof golden);
    expect_decode(b, sizeof b, HURRAY_E_BUFFER_SIZE, "buffers[0].size");
}

/* Within step 9: header fits, type tag, order, reserved bits, must_understand,
 * length fits and is exact, payload, padding. */
static void test_HR_DESC_5_section_step_order(void **state) {
    (void)state;
    uint8_t buf[BUF_CAP];
    size_t n = build_encoded(find_entry("b_unknown_sections"), buf, sizeof buf);
    size_t s1 = off_section(buf, 1);
    uint8_t *b = malloc(n);
    assert_non_null(b);
    /* type 0xFF + out of order + reserved + mu: INVALID_TAG */
    memcpy(b, buf, n);
    b[s1] = 0xFF;
    b[s1 + 1] = 0x03;
    b[s1 + 2] = 1;
    expect_decode(b, n, HURRAY_E_INVALID_TAG, "sections[1].type");
    /* out of order + reserved flag bit: SECTION_ORDER */
    memcpy(b, buf, n);
    b[s1] = 0x02;
    b[s1 + 1] = 0x02;
    expect_decode(b, n, HURRAY_E_SECTION_ORDER, "sections[1].type");
    /* reserved flag bit + reserved u16 + must_understand: flags */
    memcpy(b, buf, n);
    b[s1 + 1] = 0x03;
    b[s1 + 3] = 1;
    expect_decode(b, n, HURRAY_E_RESERVED_NONZERO, "sections[1].flags");
    /* reserved u16 + must_understand: reserved */
    b[s1 + 1] = 0x01;
    expect_decode(b, n, HURRAY_E_RESERVED_NONZERO, "sections[1].reserved");
    /* must_understand + length past the end: UNSUPPORTED */
    b[s1 + 3] = 0;
    test_put_u32(b + s1 + 4, 0xFFFFFF);
    expect_decode(b, n, HURRAY_E_UNSUPPORTED, "sections[1].flags");
    /* length past the end + padding: LENGTH */
    b[s1 + 1] = 0;
    b[s1 + 8 + 6] = 1;
    expect_decode(b, n, HURRAY_E_LENGTH, "sections[1].length");
    /* statistics: exact length before its payload's reserved bytes */
    memcpy(b, buf, n);
    size_t s0 = off_section(buf, 0);
    test_put_u32(b + s0 + 4, 31);
    b[s0 + 9] = 1;
    expect_decode(b, n, HURRAY_E_LENGTH, "sections[0].length");
    /* payload reserved byte + padding: payload first */
    memcpy(b, buf, n);
    b[s0 + 9] = 1;
    b[s1 + 8 + 6] = 1;
    expect_decode(b, n, HURRAY_E_RESERVED_NONZERO, "statistics");
    /* a structural fault in a later section beats a semantic one earlier */
    memcpy(b, buf, n);
    b[s0 + 8] = 0; /* statistics flags 0 (CONSTRAINT, step 11) ... */
    memset(b + s0 + 16, 0, 24);
    b[s1 + 8 + 6] = 1; /* ... and a padding byte (step 9) */
    expect_decode(b, n, HURRAY_E_RESERVED_NONZERO, "sections[1].padding");
    b[s1 + 8 + 6] = 0;
    expect_decode(b, n, HURRAY_E_CONSTRAINT, "statistics.flags");
    free(b);
}

/* ==== HR-BUF-9 ... 11: the three tiers ====================================== */

static void test_HR_BUF_9_tier1_buffer_count(void **state) {
    (void)state;
    const char *names[] = {"b_row_major_rank3", "b_coo", "b_csr", "b_csf3", "b_csf5",
                           "b_block_paged", "b_q_per_channel", "b_q_nf4_double",
                           "b_composite_partition"};
    struct hurray_error err;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct hurray_descriptor *d = build(find_entry(names[i]));
        unsigned right = d->buffer_count;
        assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK);
        test_set_buffer_count(d, (uint8_t)(right + 1));
        test_set_buffer(d, right, 64);
        assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_BUFFER_COUNT);
        assert_hurray_error(&err, HURRAY_E_BUFFER_COUNT, "buffer_count");
        if (right > 0) {
            test_set_buffer_count(d, (uint8_t)(right - 1));
            assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_BUFFER_COUNT);
        }
        desc_free(d);
    }
    /* Private and unknown layouts: tier 1 does not run. */
    struct hurray_descriptor *d = build(find_entry("b_private_layout"));
    for (unsigned count = 0; count < 5; count++) {
        test_set_buffer_count(d, (uint8_t)count);
        for (unsigned i = 0; i < count; i++) test_set_buffer(d, i, 8);
        assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK);
    }
    desc_free(d);
    /* The decoder agrees. */
    uint8_t b[sizeof golden];
    memcpy(b, golden, sizeof b);
    b[21] = 0;
    test_put_u32(b + 8, 56);
    memmove(b + 48, b + 64, 8);
    expect_decode(b, 56, HURRAY_E_BUFFER_COUNT, "buffer_count");
}

static void test_HR_BUF_10_tier2_buffer_size(void **state) {
    (void)state;
    struct hurray_error err;
    for (size_t e = 0; e < CATALOGUE_COUNT; e++) {
        struct hurray_descriptor *d = build(e);
        uint64_t sizes[HURRAY_MAX_BUFFERS];
        uint8_t known[HURRAY_MAX_BUFFERS];
        assert_status(hurray_descriptor_required_sizes(d, sizes, known, &err), HURRAY_OK);
        for (unsigned i = 0; i < d->buffer_count; i++) {
            if (!known[i] || sizes[i] == 0) continue;
            char f[32];
            uint64_t keep = d->buffers[i].size;
            snprintf(f, sizeof f, "buffers[%u].size", i);
            TEST_PATCH_BUFFER(d, i, size, sizes[i] - 1);
            assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_BUFFER_SIZE);
            assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, f);
            TEST_PATCH_BUFFER(d, i, size, sizes[i] + 1000); /* over-sized is permitted */
            assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK);
            TEST_PATCH_BUFFER(d, i, size, keep);
        }
        desc_free(d);
    }
}

/* "a coo layout with nnz = 4 and a 2-element values buffer fails tier 2". */
static void test_HR_BUF_11_coo_not_reinterpreted(void **state) {
    (void)state;
    struct hurray_error err;
    struct hurray_descriptor *d =
        test_desc_new(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COO, 2, (uint64_t[]){4, 4});
    d->layout.nnz = 4;
    test_set_buffer_count(d, 2);
    test_set_buffer(d, 0, 8);
    test_set_buffer(d, 1, 64);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_BUFFER_SIZE);
    assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, "buffers[0].size");
    assert_int_equal(d->layout.nnz, 4);
    desc_free(d);
}

/* Tier order: 3 before 1 before 2; within tier 2 buffer order. */
static void test_HR_BUF_9_tier_order(void **state) {
    (void)state;
    struct hurray_error err;
    struct hurray_descriptor *d = build(find_entry("b_morton2"));
    test_set_shape_at(d, 1, 6); /* not a power of two: tier 3 */
    test_set_buffer_count(d, 3);  /* tier 1 */
    test_set_buffer(d, 1, 1);
    test_set_buffer(d, 2, 1);
    test_set_buffer(d, 0, 1); /* tier 2 */
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    test_set_shape_at(d, 1, 8);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_BUFFER_COUNT);
    test_set_buffer_count(d, 1);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_BUFFER_SIZE);
    desc_free(d);
    d = build(find_entry("b_csr"));
    test_set_buffer(d, 1, 1);
    test_set_buffer(d, 2, 1);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_BUFFER_SIZE);
    assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, "buffers[1].size");
    desc_free(d);
    /* Quantization buffers follow the layout's (HR-BUF-8). */
    d = build(find_entry("b_q_per_channel"));
    assert_int_equal(d->buffer_count, 3);
    assert_int_equal(d->buffers[1].size, 8 * 4);
    assert_int_equal(d->buffers[2].size, 8);
    test_set_buffer(d, 2, 7);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_BUFFER_SIZE);
    assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, "buffers[2].size");
    desc_free(d);
}

/* Tier 3 pieces reached through the descriptor: quantization, statistics,
 * shard, layout constraints, dtype combinations. */
static void test_HR_BUF_9_tier3_through_descriptor(void **state) {
    (void)state;
    struct hurray_error err;
    struct hurray_descriptor *d = build(find_entry("b_q_per_tensor"));
    test_quant(d)->scale = 0.0;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    test_quant(d)->scale = 1.0;
    d->dtype = HURRAY_DTYPE_FLOAT32;
    test_set_buffer(d, 0, 64);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_COMBINATION);
    desc_free(d);
    d = build(find_entry("b_q_nf4"));
    d->layout.tag = HURRAY_LAYOUT_COL_MAJOR;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_COMBINATION);
    desc_free(d);
    d = build(find_entry("b_statistics"));
    test_statistics(d)->min = 3.0;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    test_statistics(d)->min = -1.0;
    test_statistics(d)->nan_count = 5; /* N = 4 */
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    assert_hurray_error(&err, HURRAY_E_CONSTRAINT, "statistics.nan_count");
    desc_free(d);
    d = build(find_entry("b_shard"));
    test_patch_shard(d, 1, 1, 4); /* 4 + 3 > 6 */
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    test_patch_shard(d, 1, 1, 0);
    test_patch_shard(d, 0, 0, DYN);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_RANGE);
    desc_free(d);
    d = build(find_entry("b_strided_negative"));
    d->byte_offset = 28; /* off/E + lo = 7 - 8 < 0 */
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    d->byte_offset = 32;
    d->dtype = HURRAY_DTYPE_INT4;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_COMBINATION);
    desc_free(d);
    d = build(find_entry("b_csf3"));
    struct test_layout t;
    test_layout_edit(&t, d);
    t.mode_order[2] = 1;
    test_layout_apply(&t, d);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    desc_free(d);
    d = build(find_entry("b_block_paged"));
    d->layout.num_seqs = 3;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    desc_free(d);
    d = build(find_entry("b_hilbert"));
    test_set_shape_at(d, 1, 4);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_CONSTRAINT);
    desc_free(d);
    d = build(find_entry("b_q_paged"));
    test_quant(d)->axis = 1; /* block-paged: per_channel only on an inner axis */
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_COMBINATION);
    desc_free(d);
}

/* ==== validate: descriptors built in memory ================================= */

static void test_HR_DESC_6_validate_refuses_what_decode_refuses(void **state) {
    (void)state;
    struct hurray_error err;
    uint8_t buf[BUF_CAP];
    size_t written = 7;
    struct hurray_descriptor *d = build(find_entry("b_row_major_rank3"));
    const struct {
        size_t off;
        uint8_t v;
        int code;
    } fixed[] = {
        {offsetof(struct hurray_descriptor, dtype), 0, HURRAY_E_INVALID_TAG},
        {offsetof(struct hurray_descriptor, dtype), 0x11, HURRAY_E_RESERVED_TAG},
        {offsetof(struct hurray_descriptor, device), 0xFF, HURRAY_E_INVALID_TAG},
        {offsetof(struct hurray_descriptor, memory_class), 0x09, HURRAY_E_RESERVED_TAG},
        {offsetof(struct hurray_descriptor, memory_class), HURRAY_MEM_PEER, HURRAY_E_COMBINATION},
        {offsetof(struct hurray_descriptor, version_major), 0, HURRAY_E_VERSION},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        uint8_t *field = (uint8_t *)d + fixed[i].off, keep = *field;
        *field = fixed[i].v;
        assert_status(hurray_descriptor_validate(d, NULL, &err), fixed[i].code);
        assert_status(hurray_descriptor_encode(d, buf, sizeof buf, &written, &err),
                      fixed[i].code);
        assert_int_equal(written, 0);
        *field = keep;
    }
    d->layout.tag = 0xFF;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_INVALID_TAG);
    d->layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
    test_set_shape_at(d, 2, UINT64_C(1) << 63);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_RANGE);
    assert_hurray_error(&err, HURRAY_E_RANGE, "shape[2]");
    test_set_shape_at(d, 2, 4);
    TEST_PATCH_BUFFER(d, 0, alignment_log2, 13);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_ALIGNMENT);
    TEST_PATCH_BUFFER(d, 0, alignment_log2, 6);
    TEST_PATCH_BUFFER(d, 0, sync_mode, 0);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_INVALID_TAG);
    TEST_PATCH_BUFFER(d, 0, sync_mode, 1);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK);
    /* role tag */
    d->has_role = 1;
    d->role = 0x07;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_RESERVED_TAG);
    d->role = HURRAY_ROLE_BASE;
    /* quantization scheme tag */
    test_quant_init(test_quant(d), 0x09);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_RESERVED_TAG);
    d->quant = NULL;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK);
    desc_free(d);
}

/* Unknown sections built in memory obey step 9's rules. */
static void test_HR_SECT_3_built_unknown_sections(void **state) {
    (void)state;
    struct hurray_error err;
    struct hurray_descriptor *d = build(find_entry("b_unknown_sections"));
    /* Records the test patches in place: a borrowed view of the section table
     * (the data still points into d's storage). */
    struct hurray_opaque_section recs[HURRAY_MAX_SECTIONS];
    memset(recs, 0, sizeof recs);
    memcpy(recs, d->opaque, 3 * sizeof recs[0]);
    d->opaque = recs;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK);
    recs[1].type = 0x05;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_SECTION_ORDER);
    recs[1].type = 0xFF;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_INVALID_TAG);
    recs[1].type = 0xF0;
    recs[1].flags = HURRAY_SECTION_MUST_UNDERSTAND;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_UNSUPPORTED);
    recs[1].flags = 0x04;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_RESERVED_NONZERO);
    recs[1].flags = 0;
    recs[0].type = HURRAY_SECTION_SHARD; /* a known type as opaque bytes */
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_ARGUMENT);
    recs[0].type = HURRAY_SECTION_STATISTICS; /* and a duplicate of a present one */
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_SECTION_ORDER);
    recs[0].type = 0x05;
    recs[2].data = NULL;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_ARGUMENT);
    recs[2].length = 0;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK);
    /* 255 sections fit the byte; 256 do not. */
    d->opaque_count = 0;
    for (unsigned t = 0x05; t <= 0xFE; t++)
        recs[d->opaque_count++] = (struct hurray_opaque_section){(uint8_t)t, 0, NULL, 0};
    assert_int_equal(d->opaque_count, 250);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK); /* + statistics */
    d->has_role = 1;
    d->dtype = HURRAY_DTYPE_INT8;
    test_quant_init(test_quant(d), HURRAY_QUANT_PER_TENSOR_AFFINE);
    test_quant(d)->scale = 1;
    d->role = HURRAY_ROLE_BASE;
    struct test_shard sh;
    test_shard_edit(&sh, d);
    sh.s.shard_count = 1;
    sh.global_shape[0] = 4;
    test_shard_apply(&sh, d); /* copies the borrowed records into d's storage too */
    test_fill_buffers(d, 64);
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK); /* 254 */
    check_roundtrip(d);
    recs[250] = (struct hurray_opaque_section){0xFE, 0, NULL, 0};
    recs[251] = (struct hurray_opaque_section){0xFE, 0, NULL, 0};
    d->opaque = recs;
    d->opaque_count = 252; /* 256 sections cannot be counted in section_count */
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "section_count");
    desc_free(d);
}

/* Opaque layout bytes follow the layout kind. */
static void test_HR_LAYOUT_40_opaque_conventions(void **state) {
    (void)state;
    struct hurray_error err;
    struct hurray_descriptor *d = build(find_entry("b_row_major_rank3"));
    d->layout.opaque = ext_bytes;
    d->layout.opaque_len = 3;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_ARGUMENT);
    desc_free(d);
    d = build(find_entry("b_private_layout"));
    d->layout.opaque = NULL;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_ARGUMENT);
    desc_free(d);
}

/* ==== encode API (HR-DESC-6) ================================================= */

static void test_HR_DESC_6_encode_arguments(void **state) {
    (void)state;
    uint8_t buf[128];
    size_t n = 0, written = 3;
    struct hurray_error err;
    struct hurray_descriptor *d = build(find_entry("b_row_major_rank3"));
    assert_status(hurray_descriptor_encoded_len(d, &n, &err), HURRAY_OK);
    assert_int_equal(n, 32 + 24 + 16 + 8);
    /* Too small (or no output): ARGUMENT "cap", and *written is the length needed. */
    assert_status(hurray_descriptor_encode(d, NULL, 0, &written, &err), HURRAY_E_ARGUMENT);
    assert_int_equal(written, n);
    written = 3;
    assert_status(hurray_descriptor_encode(d, buf, 0, &written, &err), HURRAY_E_ARGUMENT);
    assert_int_equal(written, n);
    written = 3;
    assert_status(hurray_descriptor_encode(d, buf, n - 1, &written, &err), HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "cap");
    assert_int_equal(written, n);
    assert_status(hurray_descriptor_encode(d, buf, n - 1, NULL, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_descriptor_encode(d, buf, n, NULL, NULL), HURRAY_OK);
    assert_status(hurray_descriptor_encode(NULL, buf, n, &written, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_descriptor_encoded_len(NULL, &n, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_descriptor_encoded_len(d, NULL, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_descriptor_validate(NULL, NULL, &err), HURRAY_E_ARGUMENT);
    /* An invalid descriptor: the validation status wins over a small cap. */
    TEST_PATCH_BUFFER(d, 0, size, 1);
    written = 3;
    assert_status(hurray_descriptor_encode(d, buf, 8, &written, &err), HURRAY_E_BUFFER_SIZE);
    assert_int_equal(written, 0); /* no length for what does not validate */
    assert_status(hurray_descriptor_encoded_len(d, &n, &err), HURRAY_E_BUFFER_SIZE);
    desc_free(d);
}

/* An encoding over 2^32 - 8 bytes cannot be written (encoded_len is a u32). */
static void test_HR_LIMIT_1_encoding_too_large(void **state) {
    (void)state;
    struct hurray_error err;
    size_t n = 0;
    struct hurray_descriptor *d = b_unknown_layout_empty();
    /* Lengths the (short) data cannot back: a borrowed view of section records,
     * which no setter would copy. */
    struct hurray_opaque_section recs[2] = {{0x10, 0, ext_bytes, UINT32_MAX},
                                            {0x11, 0, ext_bytes, UINT32_MAX}};
    d->opaque = recs;
    d->opaque_count = 2;
    /* Nothing reads the (short) data: the length is refused first. */
    assert_status(hurray_descriptor_encoded_len(d, &n, &err), HURRAY_E_LIMIT);
    assert_hurray_error(&err, HURRAY_E_LIMIT, "encoded_len");
    d->opaque_count = 1;
    recs[0].length = (1u << 20) - 40 - 8;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_OK); /* exactly 1 MiB */
    recs[0].length += 1;
    assert_status(hurray_descriptor_validate(d, NULL, &err), HURRAY_E_LIMIT);
    assert_status(hurray_descriptor_encoded_len(d, &n, &err), HURRAY_OK);
    assert_int_equal(n, (1u << 20) + 8);
    desc_free(d);
}

/* ==== copy and equality (HR-DESC-7) ========================================= */

static void test_HR_DESC_7_equal_field_by_field(void **state) {
    (void)state;
    struct hurray_descriptor *a = build(find_entry("b_all_sections"));
    struct hurray_descriptor *b = build(find_entry("b_all_sections"));
    uint8_t other[32];
    assert_true(hurray_descriptor_equal(a, b));
    assert_true(hurray_descriptor_equal(a, a));
    assert_false(hurray_descriptor_equal(a, NULL));
    assert_false(hurray_descriptor_equal(NULL, b));
#define DIFFERS(stmt)                                                                          \
    do {                                                                                       \
        struct hurray_descriptor *c = build(find_entry("b_all_sections"));                    \
        stmt;                                                                                  \
        assert_false(hurray_descriptor_equal(a, c));                                           \
        assert_false(hurray_descriptor_equal(c, a));                                           \
        desc_free(c);                                                                          \
    } while (0)
    DIFFERS(c->version_minor = 1);
    DIFFERS(c->dtype = HURRAY_DTYPE_UINT8);
    DIFFERS(c->device = HURRAY_DEVICE_CUDA);
    DIFFERS(c->memory_class = HURRAY_MEM_UNIFIED);
    DIFFERS(c->byte_offset = 1);
    DIFFERS(test_set_shape_at(c, 1, 4));
    DIFFERS(TEST_PATCH_BUFFER(c, 0, size, c->buffers[0].size + 1));
    DIFFERS(TEST_PATCH_BUFFER(c, 0, alignment_log2, 3));
    DIFFERS(TEST_PATCH_BUFFER(c, 0, sync_mode, HURRAY_SYNC_EVENT));
    DIFFERS(test_set_buffer_count(c, 2));
    DIFFERS(c->layout.tag = HURRAY_LAYOUT_COL_MAJOR);
    DIFFERS(test_quant(c)->scale = 0.5);
    DIFFERS(c->quant = NULL);
    DIFFERS(test_statistics(c)->max = 126);
    DIFFERS(c->statistics = NULL);
    DIFFERS(test_patch_shard(c, 1, 0, 1));
    DIFFERS(c->shard = NULL);
    DIFFERS(c->role = HURRAY_ROLE_BASE);
    DIFFERS(c->has_role = 0);
    DIFFERS(hurray_descriptor_clear_opaque_sections(c));
    /* Patched section records: borrowed views (their data still in c's storage). */
    struct hurray_opaque_section rec;
    DIFFERS(rec = c->opaque[0]; rec.type = 0x23; c->opaque = &rec);
    DIFFERS(rec = c->opaque[0]; rec.length = 31; c->opaque = &rec);
    DIFFERS(memcpy(other, ext_bytes, 32); other[31] ^= 1; rec = c->opaque[0]; rec.data = other;
            c->opaque = &rec);
#undef DIFFERS
    /* Floats compare by value: -0.0 == 0.0. */
    test_statistics(a)->min = 0.0;
    test_statistics(b)->min = -0.0;
    assert_true(hurray_descriptor_equal(a, b));
    /* Shape entries past rank are not part of it (a longer borrowed span). */
    uint64_t longer[11] = {0};
    memcpy(longer, a->shape, a->rank * sizeof longer[0]);
    longer[10] = 99;
    a->shape = longer;
    assert_true(hurray_descriptor_equal(a, b));
    desc_free(a);
    desc_free(b);
    /* Private layouts: id and opaque bytes. */
    a = build(find_entry("b_private_layout"));
    b = build(find_entry("b_private_layout"));
    memcpy(other, ext_bytes, 32);
    b->layout.opaque = other;
    assert_true(hurray_descriptor_equal(a, b));
    other[0] ^= 1;
    assert_false(hurray_descriptor_equal(a, b));
    other[0] ^= 1;
    b->layout.extension_layout_id++;
    assert_false(hurray_descriptor_equal(a, b));
    desc_free(a);
    desc_free(b);
}

static void test_HR_DESC_7_copy_is_deep(void **state) {
    (void)state;
    uint8_t *data = malloc(64);
    struct hurray_error err;
    struct test_alloc ta;
    assert_non_null(data);
    memcpy(data, ext_bytes, 32);
    memcpy(data + 32, ext_bytes, 32);
    struct hurray_descriptor *src = build(find_entry("b_everything_opaque"));
    struct hurray_descriptor *dst = test_desc_new(0, 0, 0, NULL);
    /* src borrows bytes the test frees after the copy (borrowed views). */
    struct hurray_opaque_section recs[2];
    memcpy(recs, src->opaque, sizeof recs);
    src->opaque = recs;
    src->layout.opaque = data;
    recs[1].data = data + 32;
    test_alloc_init(&ta, 0);
    assert_status(hurray_descriptor_copy(dst, src, test_alloc_get(&ta), &err), HURRAY_OK);
    assert_int_equal(ta.calls, 1); /* one owned allocation */
    assert_true(hurray_descriptor_equal(dst, src));
    memset(data, 0, 64);
    free(data);
    src->layout.opaque = ext_bytes;
    recs[1].data = ext_bytes;
    assert_true(hurray_descriptor_equal(dst, src));
    /* Copy of a copy, then into a descriptor that already owns bytes. */
    struct hurray_descriptor *third = test_desc_new(0, 0, 0, NULL);
    assert_status(hurray_descriptor_copy(third, dst, NULL, &err), HURRAY_OK);
    assert_status(hurray_descriptor_copy(dst, third, test_alloc_get(&ta), &err), HURRAY_OK);
    assert_int_equal(ta.live_allocs, 1);
    assert_true(hurray_descriptor_equal(dst, src));
    assert_status(hurray_descriptor_copy(dst, dst, NULL, &err), HURRAY_OK);
    assert_status(hurray_descriptor_copy(NULL, dst, NULL, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_descriptor_copy(dst, NULL, NULL, &err), HURRAY_E_ARGUMENT);
    hurray_descriptor_reset(dst);
    assert_alloc_clean(&ta);
    /* Spans and opaque bytes: one block all the same. */
    struct hurray_descriptor *plain = build(find_entry("b_csf5"));
    test_alloc_init(&ta, 0);
    assert_status(hurray_descriptor_copy(dst, plain, test_alloc_get(&ta), &err), HURRAY_OK);
    assert_int_equal(ta.calls, 1);
    assert_int_equal(dst->storage_len, plain->storage_len);
    assert_true(hurray_descriptor_equal(dst, plain));
    hurray_descriptor_reset(dst);
    assert_alloc_clean(&ta);
    desc_free(plain);
    /* A descriptor with no spans (rank 0, no buffers, no sections) copies
     * without allocating. */
    plain = b_unknown_layout_empty();
    test_alloc_init(&ta, 1);
    assert_status(hurray_descriptor_copy(dst, plain, test_alloc_get(&ta), &err), HURRAY_OK);
    assert_int_equal(ta.calls, 0);
    assert_true(hurray_descriptor_equal(dst, plain));
    desc_free(plain);
    desc_free(third);
    desc_free(dst);
    desc_free(src);
}

/* ==== NOMEM: every allocation fails once, nothing leaks ===================== */

struct sweep_state {
    const uint8_t *src;
    size_t len;
    const struct hurray_descriptor *want;
};

static int decode_body(const struct hurray_allocator *a, void *vs) {
    struct sweep_state *s = vs;
    struct hurray_descriptor *d = test_desc_new(0, 0, 0, NULL);
    struct hurray_decode_options opt = {NULL, a};
    struct hurray_error err;
    int st = hurray_descriptor_decode(s->src, s->len, &opt, d, NULL, &err);
    if (st == HURRAY_OK) {
        assert_true(hurray_descriptor_equal(d, s->want));
        assert_int_equal(d->storage_len, s->want->storage_len); /* sized exactly */
    }
    if (st != HURRAY_OK) {
        assert_null(d->storage);
        assert_int_equal(d->opaque_count, 0);
    }
    desc_free(d);
    return st;
}

static int copy_body(const struct hurray_allocator *a, void *vs) {
    struct sweep_state *s = vs;
    struct hurray_descriptor *d = test_desc_new(0, 0, 0, NULL);
    struct hurray_error err;
    int st = hurray_descriptor_copy(d, s->want, a, &err);
    if (st == HURRAY_OK) assert_true(hurray_descriptor_equal(d, s->want));
    if (st != HURRAY_OK) assert_null(d->storage);
    desc_free(d);
    return st;
}

static void test_HR_LIMIT_nomem_every_allocation(void **state) {
    (void)state;
    static uint8_t buf[BUF_CAP];
    for (size_t e = 0; e < CATALOGUE_COUNT; e++) {
        /* an owning copy: its section records are in its block, as a decoded one's are */
        struct hurray_descriptor *built = build(e), *d = test_desc_new(0, 0, 0, NULL);
        struct hurray_error err;
        assert_status(hurray_descriptor_copy(d, built, NULL, &err), HURRAY_OK);
        desc_free(built);
        struct sweep_state s = {buf, 0, d};
        s.len = encode_ok(d, buf, sizeof buf);
        unsigned long calls = test_alloc_sweep(decode_body, &s);
        /* One block for every span, none when there is none. */
        assert_int_equal(calls, d->storage_len ? 1 : 0);
        assert_int_equal(test_alloc_sweep(copy_body, &s), calls);
        desc_free(d);
    }
}

/* ==== mutation loop: any status, never a crash; accepted means canonical ===== */

static void mutate_and_check(const uint8_t *valid, size_t n, size_t pos, uint8_t v,
                             struct hurray_descriptor *d, uint8_t *scratch) {
    static uint8_t again[BUF_CAP];
    struct hurray_error err;
    size_t consumed = 0;
    memcpy(scratch, valid, n);
    scratch[pos] = v;
    test_error_poison(&err);
    int st = hurray_descriptor_decode(scratch, n, NULL, d, &consumed, &err);
    assert_true(st >= 0 && st < HURRAY_STATUS_COUNT);
    assert_int_equal(err.code, st == HURRAY_OK ? -12345 : st);
    if (st != HURRAY_OK) {
        assert_true(err.message[0] != '\0');
        assert_null(d->storage);
        return;
    }
    size_t m = encode_ok(d, again, sizeof again);
    assert_int_equal(m, consumed);
    assert_bytes_equal(again, m, scratch, consumed);
    hurray_descriptor_reset(d);
}

static void test_HR_DESC_6_mutations_are_canonical_or_refused(void **state) {
    (void)state;
    static uint8_t valid[BUF_CAP];
    struct hurray_descriptor *d = test_desc_new(0, 0, 0, NULL);
    for (size_t e = 0; e < CATALOGUE_COUNT; e++) {
        size_t n = build_encoded(e, valid, sizeof valid);
        uint8_t *scratch = malloc(n); /* exact size: over-reads are caught */
        assert_non_null(scratch);
        for (size_t pos = 0; pos < n; pos++) {
            const uint8_t b = valid[pos];
            const uint8_t values[] = {0x00, 0xFF, (uint8_t)(b ^ 0x01), (uint8_t)(b ^ 0x80),
                                      (uint8_t)(b + 1), (uint8_t)(b - 1), 0x40};
            for (size_t k = 0; k < sizeof values; k++)
                mutate_and_check(valid, n, pos, values[k], d, scratch);
        }
        free(scratch);
    }
    desc_free(d);
}

/* ==== buffer counts, required sizes, sync modes ============================== */

static void test_HR_BUF_8_expected_buffer_count(void **state) {
    (void)state;
    const struct {
        const char *name;
        int count;
    } rows[] = {
        {"b_row_major_rank0", 1}, {"b_tiled", 1},       {"b_coo", 2},
        {"b_csr", 3},             {"b_csc", 3},         {"b_csf1", 3},
        {"b_csf2", 5},            {"b_csf3", 7},        {"b_csf5", 11},
        {"b_block_paged", 3},     {"b_composite_group", 0}, {"b_private_layout", -1},
        {"b_unknown_layout", -1}, {"b_q_per_tensor", 1}, {"b_q_per_channel", 3},
        {"b_q_per_channel_symmetric", 2}, {"b_q_block", 3}, {"b_q_nf4", 2},
        {"b_q_nf4_double", 4},    {"b_q_mx", 2},        {"b_q_nvfp4", 2},
        {"b_q_paged", 4},         {"b_q_private_layout", -1},
    };
    struct hurray_error err;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct hurray_descriptor *d = catalogue[find_entry(rows[i].name)].build();
        int count = 99;
        assert_status(hurray_descriptor_expected_buffer_count(d, &count, &err), HURRAY_OK);
        if (count != rows[i].count) print_error("%s: %d\n", rows[i].name, count);
        assert_int_equal(count, rows[i].count);
        desc_free(d);
    }
    int count = 0;
    assert_status(hurray_descriptor_expected_buffer_count(NULL, &count, &err), HURRAY_E_ARGUMENT);
    struct hurray_descriptor *d = b_coo();
    d->layout.tag = 0;
    assert_status(hurray_descriptor_expected_buffer_count(d, &count, &err), HURRAY_E_INVALID_TAG);
    desc_free(d);
}

/* Required sizes computed from the spec's formulas, independently. */
static void test_HR_BUF_10_required_sizes(void **state) {
    (void)state;
    const struct {
        const char *name;
        unsigned count;
        uint64_t sizes[8];
    } rows[] = {
        {"b_row_major_rank3", 1, {2 * 3 * 4 * 2}},
        {"b_row_major_int4", 1, {8}},     /* 15 x 4 bits */
        {"b_row_major_float6", 1, {3}},   /* 4 x 6 bits */
        {"b_strided_negative", 1, {48}},  /* (8 + 3 + 1) x 4 */
        {"b_strided_zero", 1, {6}},       /* 1 + 2 x 2 + 1 */
        {"b_tiled", 1, {96}},             /* (12 + 6 + 3 + 2 + 1) x 4 */
        {"b_coo", 2, {20, 80}},
        {"b_csr", 3, {48, 48, 40}},
        {"b_csc", 3, {24, 48, 48}},
        {"b_csf2", 5, {20, 16, 16, 24, 40}}, /* ptr_0 has c_{-1} + 1 = 2 entries */
        {"b_block_paged", 3, {6 * 4 * 4 * 2, 24, 40}},
        {"b_q_per_channel", 3, {32, 32, 8}},
        {"b_q_block", 3, {128, 16, 8}},   /* 4 x ceil(64/32) scales */
        {"b_q_nf4", 2, {128, 16}},        /* 4 blocks of float32 */
        {"b_q_nf4_double", 4, {4096, 128, 4, 1024}},
        {"b_q_mx", 2, {128, 4}},
        {"b_q_nvfp4", 2, {32, 4}},
        {"b_byte_offset", 1, {32}},
        {"b_zero_dims", 1, {0}},
    };
    struct hurray_error err;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct hurray_descriptor *d = build(find_entry(rows[i].name));
        uint64_t sizes[HURRAY_MAX_BUFFERS];
        uint8_t known[HURRAY_MAX_BUFFERS];
        assert_int_equal(d->buffer_count, rows[i].count);
        assert_status(hurray_descriptor_required_sizes(d, sizes, known, &err), HURRAY_OK);
        for (unsigned b = 0; b < rows[i].count; b++) {
            if (sizes[b] != rows[i].sizes[b] || !known[b])
                print_error("%s buffer %u: %llu (known %u), want %llu\n", rows[i].name, b,
                            (unsigned long long)sizes[b], known[b],
                            (unsigned long long)rows[i].sizes[b]);
            assert_int_equal(known[b], 1);
            assert_int_equal(sizes[b], rows[i].sizes[b]);
        }
        desc_free(d);
    }
    /* Private layouts and extension dtypes: not evaluable. */
    const char *unknown[] = {"b_private_layout", "b_unknown_layout", "b_private_dtype"};
    for (size_t i = 0; i < 3; i++) {
        struct hurray_descriptor *d = build(find_entry(unknown[i]));
        uint64_t sizes[HURRAY_MAX_BUFFERS];
        uint8_t known[HURRAY_MAX_BUFFERS];
        assert_status(hurray_descriptor_required_sizes(d, sizes, known, &err), HURRAY_OK);
        for (unsigned b = 0; b < d->buffer_count; b++) assert_int_equal(known[b], 0);
        desc_free(d);
    }
    /* Preconditions are checked, not assumed. */
    struct hurray_descriptor *d = build(find_entry("b_csr"));
    uint64_t sizes[HURRAY_MAX_BUFFERS];
    uint8_t known[HURRAY_MAX_BUFFERS];
    struct hurray_buffer_desc third = d->buffers[2];
    test_set_buffer_count(d, 2);
    assert_status(hurray_descriptor_required_sizes(d, sizes, known, &err), HURRAY_E_BUFFER_COUNT);
    test_set_buffer_count(d, 3);
    test_set_buffer_entry(d, 2, third.size, third.alignment_log2, third.sync_mode);
    test_set_shape_at(d, 0, 3);
    d->layout.nnz = 16; /* > N */
    assert_status(hurray_descriptor_required_sizes(d, sizes, known, &err), HURRAY_E_CONSTRAINT);
    assert_status(hurray_descriptor_required_sizes(d, NULL, known, &err), HURRAY_E_ARGUMENT);
    desc_free(d);
}

static void test_HR_BUF_5_sync_modes(void **state) {
    (void)state;
    assert_string_equal(hurray_sync_mode_name(0x01), "producer_synced");
    assert_string_equal(hurray_sync_mode_name(0x02), "event");
    assert_string_equal(hurray_sync_mode_name(0x03), "stream");
    assert_null(hurray_sync_mode_name(0x00));
    assert_null(hurray_sync_mode_name(0x04));
    assert_null(hurray_sync_mode_name(0xF0));
    assert_null(hurray_sync_mode_name(0xFF));
    for (unsigned t = 0; t < 256; t++) {
        int kind = hurray_sync_mode_tag_kind((uint8_t)t);
        int want = t == 0 || t == 0xFF ? HURRAY_TAG_INVALID
                   : t <= 3            ? HURRAY_TAG_NAMED
                                       : HURRAY_TAG_RESERVED; /* no private range */
        assert_int_equal(kind, want);
    }
}

static void test_descriptor_init_and_reset(void **state) {
    (void)state;
    struct hurray_descriptor *d = malloc(sizeof *d);
    assert_non_null(d);
    memset(d, 0xAB, sizeof *d);
    hurray_descriptor_init(d);
    assert_int_equal(d->version_major, 1);
    assert_int_equal(d->version_minor, 0);
    assert_int_equal(d->layout.tag, HURRAY_LAYOUT_ROW_MAJOR);
    assert_int_equal(d->device, HURRAY_DEVICE_CPU);
    assert_int_equal(d->memory_class, HURRAY_MEM_STANDARD);
    assert_int_equal(d->rank, 0);
    assert_int_equal(d->buffer_count, 0);
    assert_int_equal(d->opaque_count, 0);
    assert_null(d->storage);
    assert_int_equal(d->storage_len, 0);
    assert_null(d->shape);
    assert_null(d->buffers);
    assert_null(d->opaque);
    assert_null(d->allocator);
    hurray_descriptor_init(NULL);
    hurray_descriptor_reset(NULL);
    hurray_descriptor_reset(d);
    hurray_descriptor_reset(d);
    assert_int_equal(d->version_major, 1);
    free(d);
}

/* The compact record: a small header, every span in one block. */
static void test_descriptor_is_compact(void **state) {
    (void)state;
    /* 16 bytes of tags and counts, byte_offset, 3 spans, the layout (6 spans and
     * its scalars), a pointer to each optional section's record, the block: no
     * fixed arrays, no record of a section the descriptor does not have. */
    assert_true(sizeof(struct hurray_descriptor) <= 200);
    assert_true(sizeof(struct hurray_layout) <= 112);
    assert_true(sizeof(struct hurray_shard) <= 24);
}

/* The setters (descriptor.h § builder setters): one block, rebuilt. */
static void test_descriptor_setters(void **state) {
    (void)state;
    struct hurray_error err;
    struct test_alloc ta;
    struct hurray_descriptor d;
    test_alloc_init(&ta, 0);
    hurray_descriptor_init(&d);
    d.allocator = test_alloc_get(&ta);
    d.dtype = HURRAY_DTYPE_FLOAT32;
    d.layout.tag = HURRAY_LAYOUT_TILED;
    test_set_shape(&d, 2, (uint64_t[]){4, 6});
    assert_int_equal(ta.live_allocs, 1);
    assert_ptr_equal(d.shape, d.storage);
    /* The rank change gave the tiled layout's spans zeros of rank 2. */
    assert_int_equal(d.layout.tile_shape[1], 0);
    assert_int_equal(d.layout.inner_strides[1], 0);
    assert_int_equal(d.storage_len, 4 * 2 * 8);
    /* A NULL span the layout needs is refused, never read. */
    struct hurray_layout l = d.layout;
    l.tile_shape = NULL;
    assert_status(hurray_descriptor_set_layout(&d, &l, &err), HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "layout.tile_shape");
    const uint64_t *tiles = d.layout.tile_shape;
    d.layout.tile_shape = NULL;
    assert_status(hurray_descriptor_validate(&d, NULL, &err), HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "layout.tile_shape");
    d.layout.tile_shape = tiles;
    l.tile_shape = (uint64_t[]){2, 3};
    l.strides = (int64_t[]){12, 6};
    l.inner_strides = (int64_t[]){3, 1};
    l.mode_order = (uint8_t[]){1, 0}; /* not used by tiled: not copied */
    assert_status(hurray_descriptor_set_layout(&d, &l, &err), HURRAY_OK);
    assert_null(d.layout.mode_order);
    assert_int_equal(d.layout.tile_shape[1], 3);
    assert_int_equal(d.layout.inner_strides[0], 3);
    assert_int_equal(ta.live_allocs, 1);
    assert_int_equal(d.storage_len, 4 * 2 * 8);
    /* Named layouts carry no opaque bytes. */
    l.opaque = (const uint8_t *)"x";
    l.opaque_len = 1;
    assert_status(hurray_descriptor_set_layout(&d, &l, &err), HURRAY_E_ARGUMENT);
    /* The same rank keeps the rank-sized spans; another restarts them at zero. */
    test_shard_apply(&(struct test_shard){.s = {0, 1, NULL, NULL},
                                          .global_shape = {8, 6},
                                          .global_offset = {4, 0}},
                     &d);
    test_set_shape(&d, 2, (uint64_t[]){4, 3});
    assert_int_equal(d.layout.strides[0], 12);
    assert_int_equal(d.shard->global_offset[0], 4);
    test_set_shape(&d, 3, (uint64_t[]){1, 2, 3});
    for (unsigned k = 0; k < 3; k++) {
        assert_int_equal(d.layout.strides[k], 0);
        assert_int_equal(d.layout.inner_strides[k], 0);
        assert_int_equal(d.layout.tile_shape[k], 0);
        assert_int_equal(d.shard->global_shape[k], 0);
        assert_int_equal(d.shard->global_offset[k], 0);
    }
    assert_int_equal(d.storage_len, sizeof(struct hurray_shard) + 3 * 8 * 6);
    assert_status(hurray_descriptor_set_shape(&d, 65, (uint64_t[65]){0}, &err),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_descriptor_set_shape(&d, 1, NULL, &err), HURRAY_E_ARGUMENT);
    /* Buffers: the table, then entries; an index past the table is refused. */
    struct hurray_buffer_desc b = {64, 6, HURRAY_SYNC_PRODUCER_SYNCED};
    assert_status(hurray_descriptor_set_buffer(&d, 0, &b, &err), HURRAY_E_ARGUMENT);
    test_set_buffer_count(&d, 2);
    assert_status(hurray_descriptor_set_buffer(&d, 1, &b, &err), HURRAY_OK);
    assert_int_equal(d.buffers[1].size, 64);
    assert_int_equal(d.buffers[0].size, 0);
    assert_status(hurray_descriptor_set_buffers(&d, 1, NULL, &err), HURRAY_E_ARGUMENT);
    /* A borrowed table is copied into the block before an entry is set. */
    struct hurray_buffer_desc mine[2] = {{1, 0, 1}, {2, 0, 1}};
    d.buffers = mine;
    assert_status(hurray_descriptor_set_buffer(&d, 0, &b, &err), HURRAY_OK);
    assert_int_equal(mine[0].size, 1);
    assert_int_equal(d.buffers[0].size, 64);
    assert_int_equal(d.buffers[1].size, 2);
    assert_int_equal(ta.live_allocs, 1);
    /* Sections. */
    struct hurray_quant q;
    test_quant_init(&q, HURRAY_QUANT_PER_TENSOR_AFFINE);
    assert_status(hurray_descriptor_set_quant(&d, &q, &err), HURRAY_OK);
    assert_non_null(d.quant);
    assert_true(d.quant != &q && (const void *)d.quant == d.storage); /* copied, first */
    assert_int_equal(d.quant->scheme, HURRAY_QUANT_PER_TENSOR_AFFINE);
    assert_status(hurray_descriptor_set_quant(&d, NULL, &err), HURRAY_OK);
    assert_null(d.quant);
    struct hurray_statistics st = {HURRAY_STATS_HAS_MIN_MAX, -1, 1, 0};
    assert_status(hurray_descriptor_set_statistics(&d, &st, &err), HURRAY_OK);
    assert_true(d.statistics != &st && d.statistics->flags == HURRAY_STATS_HAS_MIN_MAX);
    assert_status(hurray_descriptor_set_statistics(&d, NULL, &err), HURRAY_OK);
    assert_null(d.statistics);
    assert_status(hurray_descriptor_set_quant(NULL, &q, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_descriptor_set_statistics(NULL, &st, &err), HURRAY_E_ARGUMENT);
    hurray_descriptor_set_role(&d, HURRAY_ROLE_BASE);
    assert_int_equal(d.has_role, 1);
    hurray_descriptor_clear_role(&d);
    assert_int_equal(d.has_role + d.role, 0);
    assert_status(hurray_descriptor_set_shard(&d, NULL, &err), HURRAY_OK);
    assert_null(d.shard);
    assert_status(hurray_descriptor_set_shard(&d, &(struct hurray_shard){0, 1, NULL, NULL}, &err),
                  HURRAY_E_ARGUMENT);
    for (unsigned t = 0; t < 255; t++) test_add_opaque(&d, (uint8_t)(t + 1), 0, ext_bytes, 2);
    assert_status(hurray_descriptor_add_opaque_section(&d, 0xFE, 0, ext_bytes, 1, &err),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_descriptor_add_opaque_section(&d, 0xFE, 0, NULL, 1, &err),
                  HURRAY_E_ARGUMENT);
    assert_int_equal(d.opaque_count, 255);
    assert_ptr_equal(d.opaque[254].data, d.opaque[253].data + 2); /* bytes in the block */
    assert_int_equal(ta.live_allocs, 1);
    hurray_descriptor_clear_opaque_sections(&d);
    assert_int_equal(d.opaque_count, 0);
    /* A failed rebuild leaves the descriptor as it was. */
    const void *keep = d.storage;
    ta.fail_at = ta.calls + 1;
    assert_status(hurray_descriptor_set_shape(&d, 1, (uint64_t[]){9}, &err), HURRAY_E_NOMEM);
    assert_ptr_equal(d.storage, keep);
    assert_int_equal(d.rank, 3);
    assert_int_equal(d.shape[2], 3);
    ta.fail_at = 0;
    /* Move: the block changes hands, the source is initialised. */
    struct hurray_descriptor e;
    hurray_descriptor_init(&e);
    hurray_descriptor_move(&e, &d);
    assert_ptr_equal(e.storage, keep);
    assert_int_equal(e.rank, 3);
    assert_null(d.storage);
    assert_int_equal(d.rank, 0);
    hurray_descriptor_move(&e, &e);
    hurray_descriptor_move(NULL, &e);
    assert_int_equal(ta.live_allocs, 1);
    hurray_descriptor_reset(&e);
    hurray_descriptor_reset(&d);
    assert_alloc_clean(&ta);
    assert_status(hurray_descriptor_set_shape(NULL, 0, NULL, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_descriptor_set_layout(&d, NULL, &err), HURRAY_E_ARGUMENT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_DESC_2_golden_vector_decodes),
        cmocka_unit_test(test_HR_DESC_6_golden_vector_encodes),
        cmocka_unit_test(test_HR_DESC_2_worked_example_with_statistics),
        cmocka_unit_test(test_HR_DESC_2_smallest_is_40_bytes),
        cmocka_unit_test(test_HR_DESC_4_minor_version_kept),
        cmocka_unit_test(test_HR_DESC_6_roundtrip_dense_layouts),
        cmocka_unit_test(test_HR_DESC_6_roundtrip_sparse_layouts),
        cmocka_unit_test(test_HR_DESC_6_roundtrip_block_paged_and_composite),
        cmocka_unit_test(test_HR_LAYOUT_40_41_roundtrip_private_and_unknown_layouts),
        cmocka_unit_test(test_HR_QUANT_roundtrip_every_scheme),
        cmocka_unit_test(test_HR_SECT_roundtrip_sections),
        cmocka_unit_test(test_HR_SHAPE_roundtrip_shapes_and_devices),
        cmocka_unit_test(test_HR_SECT_3_opaque_bytes_owned),
        cmocka_unit_test(test_HR_SECT_1_canonical_section_order),
        cmocka_unit_test(test_HR_DESC_5_peek_length),
        cmocka_unit_test(test_decode_arguments),
        cmocka_unit_test(test_HR_DESC_5_step1_to_4_header),
        cmocka_unit_test(test_HR_LIMIT_1_encoded_len_over_limit),
        cmocka_unit_test(test_HR_DESC_5_lengths_that_lie),
        cmocka_unit_test(test_HR_DESC_5_section_lengths_that_lie),
        cmocka_unit_test(test_HR_DESC_5_step5_fixed_field_tags),
        cmocka_unit_test(test_HR_DEV_4_forbidden_pairs),
        cmocka_unit_test(test_HR_LIMIT_1_rank_over_limit),
        cmocka_unit_test(test_HR_SHAPE_1_extent_range),
        cmocka_unit_test(test_HR_SHAPE_3_overflow),
        cmocka_unit_test(test_HR_SHAPE_3_element_count),
        cmocka_unit_test(test_HR_SHAPE_2_dynamic_requirements_skipped),
        cmocka_unit_test(test_HR_BUF_1_entry_rules),
        cmocka_unit_test(test_HR_BUF_2_empty_buffer_alignment),
        cmocka_unit_test(test_HR_LIMIT_1_max_buffer_bytes),
        cmocka_unit_test(test_HR_DESC_5_step8_layout_block),
        cmocka_unit_test(test_HR_LAYOUT_30_composite_params),
        cmocka_unit_test(test_HR_DESC_5_param_constraints_after_structure),
        cmocka_unit_test(test_HR_DESC_3_byte_offset),
        cmocka_unit_test(test_HR_SECT_4_invalid_section_types),
        cmocka_unit_test(test_HR_SECT_1_duplicate_and_out_of_order),
        cmocka_unit_test(test_HR_SECT_2_3_must_understand),
        cmocka_unit_test(test_HR_SECT_payload_reserved_and_padding),
        cmocka_unit_test(test_HR_QUANT_payload_tags_through_descriptor),
        cmocka_unit_test(test_HR_DESC_5_decoding_order_pairs),
        cmocka_unit_test(test_HR_DESC_5_section_step_order),
        cmocka_unit_test(test_HR_BUF_9_tier1_buffer_count),
        cmocka_unit_test(test_HR_BUF_10_tier2_buffer_size),
        cmocka_unit_test(test_HR_BUF_11_coo_not_reinterpreted),
        cmocka_unit_test(test_HR_BUF_9_tier_order),
        cmocka_unit_test(test_HR_BUF_9_tier3_through_descriptor),
        cmocka_unit_test(test_HR_DESC_6_validate_refuses_what_decode_refuses),
        cmocka_unit_test(test_HR_SECT_3_built_unknown_sections),
        cmocka_unit_test(test_HR_LAYOUT_40_opaque_conventions),
        cmocka_unit_test(test_HR_DESC_6_encode_arguments),
        cmocka_unit_test(test_HR_LIMIT_1_encoding_too_large),
        cmocka_unit_test(test_HR_DESC_7_equal_field_by_field),
        cmocka_unit_test(test_HR_DESC_7_copy_is_deep),
        cmocka_unit_test(test_HR_LIMIT_nomem_every_allocation),
        cmocka_unit_test(test_HR_DESC_6_mutations_are_canonical_or_refused),
        cmocka_unit_test(test_HR_BUF_8_expected_buffer_count),
        cmocka_unit_test(test_HR_BUF_10_required_sizes),
        cmocka_unit_test(test_HR_BUF_5_sync_modes),
        cmocka_unit_test(test_descriptor_init_and_reset),
        cmocka_unit_test(test_descriptor_is_compact),
        cmocka_unit_test(test_descriptor_setters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
