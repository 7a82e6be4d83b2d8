/* Layouts (layout.c). docs/spec/memory-layout.md, block-paged.md */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "internal.h"
#include "test_support.h"

#define DYN HURRAY_DYNAMIC_DIM
#define NTAGS 256

/* ---- helpers ----------------------------------------------------------------- */

/* A caller-built layout borrows its rank-sized spans from the caller's arrays.
 * Here every layout make() returns points its spans at zeroed arrays from a
 * pool the test owns (slots are reused round-robin; no test keeps more than a
 * handful alive), and the tests fill those arrays through W_*(span): the
 * test's own memory, seen as the layout's read-only span. */
#define POOL_SLOTS 256
static struct hri_layout_arrays pool[POOL_SLOTS];
static unsigned pool_next;

static struct hri_layout_arrays *pool_slot(void) {
    struct hri_layout_arrays *a = &pool[pool_next++ % POOL_SLOTS];
    memset(a, 0, sizeof *a);
    return a;
}

#define W_I64(span) ((int64_t *)(uintptr_t)(span))
#define W_U64(span) ((uint64_t *)(uintptr_t)(span))
#define W_U8(span) ((uint8_t *)(uintptr_t)(span))

static struct hurray_layout make(uint8_t tag) {
    struct hurray_layout l;
    struct hri_layout_arrays *a = pool_slot();
    memset(&l, 0, sizeof l);
    l.tag = tag;
    l.strides = a->strides;
    l.inner_strides = a->inner_strides;
    l.tile_shape = a->tile_shape;
    l.fiber_counts = a->fiber_counts;
    l.mode_order = a->mode_order;
    return l;
}

static int read_params(const uint8_t *p, size_t n, uint8_t tag, uint8_t rank,
                       struct hurray_layout *out, struct hurray_error *err) {
    struct hri_cursor c;
    hri_cursor_init(&c, p, n, HURRAY_E_LENGTH);
    return hri_layout_params_read(&c, tag, rank, NULL, out, pool_slot(), err);
}

static size_t write_params(const struct hurray_layout *l, uint8_t rank, uint8_t *dst,
                           size_t cap) {
    struct hri_writer w;
    hri_writer_init(&w, dst, cap);
    hri_layout_params_write(&w, l, rank);
    assert_false(w.overflowed);
    return w.pos;
}

static uint32_t param_length(const struct hurray_layout *l, uint8_t rank) {
    uint32_t len = 0;
    assert_status(hurray_layout_param_length(l, rank, &len, NULL), HURRAY_OK);
    return len;
}

/* Writes, checks the length against param_length, reads back, compares, and
 * writes again byte-identically. */
static void round_trip(const struct hurray_layout *l, uint8_t rank) {
    uint8_t a[2048], b[2048];
    size_t n = write_params(l, rank, a, sizeof a);
    assert_int_equal(n, param_length(l, rank));
    struct hurray_layout back;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(read_params(a, n, l->tag, rank, &back, &err), HURRAY_OK);
    assert_true(hurray_layout_equal(l, &back, rank));
    assert_int_equal(back.tag, l->tag);
    size_t m = write_params(&back, rank, b, sizeof b);
    assert_bytes_equal(b, m, a, n);
}

static int validate(const struct hurray_layout *l, uint8_t rank, const uint64_t *shape,
                    struct hurray_error *err) {
    return hurray_layout_validate_against_shape(l, rank, shape, NULL, err);
}

static void expect_validate(const struct hurray_layout *l, uint8_t rank, const uint64_t *shape,
                            int code, const char *field) {
    struct hurray_error err;
    test_error_poison(&err);
    int st = validate(l, rank, shape, &err);
    assert_status(st, code);
    if (code != HURRAY_OK) assert_hurray_error(&err, code, field);
}

static int sizes_of(const struct hurray_layout *l, uint8_t dtype, uint8_t rank,
                    const uint64_t *shape, uint64_t off, uint64_t *sizes, uint8_t *known,
                    struct hurray_error *err) {
    return hri_layout_required_sizes(l, dtype, rank, shape, off, sizes, known, err);
}

/* Independent transcription of memory-layout.md § Layout tags. */
static const struct {
    uint8_t tag;
    const char *name;
    int dense, virt, stride;
} spec_layouts[] = {
    {0x01, "row_major", 1, 0, 1}, {0x02, "col_major", 1, 0, 1}, {0x03, "strided", 1, 0, 1},
    {0x04, "tiled", 1, 0, 0},     {0x05, "morton", 1, 0, 0},    {0x06, "hilbert", 1, 0, 0},
    {0x10, "coo", 0, 0, 0},       {0x11, "csr", 0, 0, 0},       {0x12, "csc", 0, 0, 0},
    {0x13, "csf", 0, 0, 0},       {0x20, "block_paged", 0, 0, 0}, {0x30, "composite", 0, 1, 0},
};
#define SPEC_LAYOUT_COUNT (sizeof spec_layouts / sizeof spec_layouts[0])

static int spec_is_named(unsigned tag) {
    for (size_t i = 0; i < SPEC_LAYOUT_COUNT; i++)
        if (spec_layouts[i].tag == tag) return 1;
    return 0;
}

static int spec_buffers(uint8_t tag, unsigned rank) {
    switch (tag) {
    case 0x10: return 2;
    case 0x11: case 0x12: case 0x20: return 3;
    case 0x13: return (int)(2 * rank + 1);
    case 0x30: return 0;
    default: return 1;
    }
}

static uint32_t spec_params(uint8_t tag, unsigned rank) {
    switch (tag) {
    case 0x03: return 8 * rank;
    case 0x04: return 24 * rank;
    case 0x10: case 0x11: case 0x12: case 0x30: return 8;
    case 0x13: return 8 * rank + rank; /* nnz + fiber_counts[rank-1] + mode_order[rank] */
    case 0x20: return 32;
    default: return 0;
    }
}

/* ---- HR-LAYOUT-1 … 4: tags, names, kinds ------------------------------------ */

static void test_HR_LAYOUT_1_tag_table(void **state) {
    (void)state;
    for (size_t i = 0; i < SPEC_LAYOUT_COUNT; i++) {
        uint8_t tag = spec_layouts[i].tag;
        assert_int_equal(hurray_layout_tag_kind(tag), HURRAY_TAG_NAMED);
        assert_string_equal(hurray_layout_name(tag), spec_layouts[i].name);
        assert_int_equal(hurray_layout_is_dense(tag), spec_layouts[i].dense);
        assert_int_equal(hurray_layout_is_virtual(tag), spec_layouts[i].virt);
        assert_int_equal(hurray_layout_is_stride_expressible(tag), spec_layouts[i].stride);
        for (unsigned rank = 0; rank <= HURRAY_MAX_RANK; rank++) {
            int count = -7;
            assert_status(hurray_layout_buffer_count(tag, (uint8_t)rank, &count, NULL),
                          HURRAY_OK);
            assert_int_equal(count, spec_buffers(tag, rank));
            struct hurray_layout l = make(tag);
            assert_int_equal(param_length(&l, (uint8_t)rank), spec_params(tag, rank));
        }
    }
}

static void test_HR_LAYOUT_2_tag_kinds_all_bytes(void **state) {
    (void)state;
    int counts[5] = {0};
    for (unsigned t = 0; t < NTAGS; t++) {
        int want = (t == 0x00 || t == 0xFF) ? HURRAY_TAG_INVALID
                   : spec_is_named(t)       ? HURRAY_TAG_NAMED
                   : (t >= 0xF0)            ? HURRAY_TAG_PRIVATE
                                            : HURRAY_TAG_RESERVED;
        int kind = hurray_layout_tag_kind((uint8_t)t);
        assert_int_equal(kind, want);
        counts[kind]++;
        int count = -7;
        struct hurray_error err;
        test_error_poison(&err);
        int st = hurray_layout_buffer_count((uint8_t)t, 2, &count, &err);
        if (kind == HURRAY_TAG_INVALID) {
            assert_status(st, HURRAY_E_INVALID_TAG);
            assert_hurray_error(&err, HURRAY_E_INVALID_TAG, "layout");
        } else {
            assert_status(st, HURRAY_OK);
            if (kind != HURRAY_TAG_NAMED) assert_int_equal(count, -1);
        }
        if (kind != HURRAY_TAG_NAMED) {
            assert_int_equal(hurray_layout_is_dense((uint8_t)t), 0);
            assert_int_equal(hurray_layout_is_virtual((uint8_t)t), 0);
            assert_int_equal(hurray_layout_is_stride_expressible((uint8_t)t), 0);
        }
    }
    assert_int_equal(counts[HURRAY_TAG_NAMED], SPEC_LAYOUT_COUNT);
    assert_int_equal(counts[HURRAY_TAG_PRIVATE], 15);
    assert_int_equal(counts[HURRAY_TAG_INVALID], 2);
    assert_int_equal(counts[HURRAY_TAG_RESERVED], 256 - 2 - 15 - (int)SPEC_LAYOUT_COUNT);
}

/* HR-LAYOUT-3: a reserved tag is accepted and carried; an invalid one is not. */
static void test_HR_LAYOUT_3_reserved_tag_carried(void **state) {
    (void)state;
    const uint8_t params[] = {1, 2, 3, 4, 5, 0, 0xFF};
    const uint8_t tags[] = {0x07, 0x0F, 0x14, 0x21, 0x31, 0x40, 0xEF};
    for (size_t i = 0; i < sizeof tags; i++) {
        for (size_t n = 0; n <= sizeof params; n++) {
            struct hurray_layout l;
            assert_status(read_params(params, n, tags[i], 3, &l, NULL), HURRAY_OK);
            assert_int_equal(l.tag, tags[i]);
            assert_int_equal(l.opaque_len, n);
            if (n) assert_memory_equal(l.opaque, params, n);
            assert_int_equal(param_length(&l, 3), n);
            uint8_t out[16];
            size_t m = write_params(&l, 3, out, sizeof out);
            assert_bytes_equal(out, m, params, n);
            /* Unknown layouts pass tier 3 against any shape. */
            const uint64_t shape[3] = {7, DYN, 0};
            assert_status(validate(&l, 3, shape, NULL), HURRAY_OK);
        }
    }
    struct hurray_layout l;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(read_params(params, 0, 0x00, 0, &l, &err), HURRAY_E_INVALID_TAG);
    assert_hurray_error(&err, HURRAY_E_INVALID_TAG, "layout");
    assert_status(read_params(params, 0, 0xFF, 0, &l, NULL), HURRAY_E_INVALID_TAG);
    struct hurray_layout bad = make(0xFF);
    assert_status(validate(&bad, 0, NULL, NULL), HURRAY_E_INVALID_TAG);
    uint32_t len;
    assert_status(hurray_layout_param_length(&bad, 0, &len, NULL), HURRAY_E_INVALID_TAG);
}

static void test_HR_LAYOUT_4_extension_name(void **state) {
    (void)state;
    for (unsigned t = 0; t < NTAGS; t++) {
        const char *name = hurray_layout_name((uint8_t)t);
        int kind = hurray_layout_tag_kind((uint8_t)t);
        if (kind == HURRAY_TAG_INVALID)
            assert_null(name);
        else if (kind == HURRAY_TAG_NAMED)
            assert_string_not_equal(name, "extension");
        else
            assert_string_equal(name, "extension");
    }
}

/* ---- parameter blocks: round trips and golden bytes --------------------------- */

static void test_HR_LAYOUT_10_no_params(void **state) {
    (void)state;
    const uint8_t tags[] = {0x01, 0x02, 0x05, 0x06};
    for (size_t i = 0; i < sizeof tags; i++)
        for (unsigned rank = 0; rank <= HURRAY_MAX_RANK; rank += 7)
            round_trip(&(struct hurray_layout){.tag = tags[i]}, (uint8_t)rank);
}

static void test_HR_LAYOUT_11_strided_bytes(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_STRIDED);
    W_I64(l.strides)[0] = 3;
    W_I64(l.strides)[1] = -1;
    const uint8_t want[] = {3, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    uint8_t out[32];
    size_t n = write_params(&l, 2, out, sizeof out);
    assert_bytes_equal(out, n, want, sizeof want);
    round_trip(&l, 2);
    for (unsigned rank = 0; rank <= HURRAY_MAX_RANK; rank++) {
        struct hurray_layout r = make(HURRAY_LAYOUT_STRIDED);
        for (unsigned k = 0; k < rank; k++)
            W_I64(r.strides)[k] = (int64_t)(k * 0x0102030405060708ull) - INT64_MAX / 3;
        W_I64(r.strides)[0] = INT64_MIN;
        round_trip(&r, (uint8_t)rank);
    }
}

static void test_HR_LAYOUT_12_tiled_bytes(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_TILED);
    W_U64(l.tile_shape)[0] = 2;
    W_I64(l.strides)[0] = 4;
    W_I64(l.inner_strides)[0] = -1;
    const uint8_t want[] = {2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0,
                            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    uint8_t out[32];
    size_t n = write_params(&l, 1, out, sizeof out);
    assert_bytes_equal(out, n, want, sizeof want);
    struct hurray_layout r = make(HURRAY_LAYOUT_TILED);
    for (unsigned k = 0; k < HURRAY_MAX_RANK; k++) {
        W_U64(r.tile_shape)[k] = k + 1;
        W_I64(r.strides)[k] = -(int64_t)k * 1000;
        W_I64(r.inner_strides)[k] = (int64_t)k * 7;
    }
    round_trip(&r, 1);
    round_trip(&r, 5);
    round_trip(&r, HURRAY_MAX_RANK);
}

static void test_HR_LAYOUT_20_nnz_bytes(void **state) {
    (void)state;
    const uint8_t tags[] = {0x10, 0x11, 0x12};
    for (size_t i = 0; i < sizeof tags; i++) {
        struct hurray_layout l = make(tags[i]);
        l.nnz = 0x0807060504030201ull;
        const uint8_t want[] = {1, 2, 3, 4, 5, 6, 7, 8};
        uint8_t out[16];
        size_t n = write_params(&l, 2, out, sizeof out);
        assert_bytes_equal(out, n, want, sizeof want);
        round_trip(&l, 2);
        l.nnz = UINT64_MAX;
        round_trip(&l, 1);
    }
}

/* CSF: nnz, fiber_counts[rank-1], mode_order[rank]; param_length 9·rank (the
 * padding to 8 is the layout block's). */
static void test_HR_LAYOUT_23_csf_bytes(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_CSF);
    l.nnz = 9;
    W_U64(l.fiber_counts)[0] = 2;
    W_U64(l.fiber_counts)[1] = 5;
    W_U8(l.mode_order)[0] = 2;
    W_U8(l.mode_order)[1] = 0;
    W_U8(l.mode_order)[2] = 1;
    const uint8_t want[] = {9, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
                            5, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1};
    uint8_t out[64];
    size_t n = write_params(&l, 3, out, sizeof out);
    assert_bytes_equal(out, n, want, sizeof want);
    assert_int_equal(param_length(&l, 3), 27);
    round_trip(&l, 3);
    for (unsigned rank = 0; rank <= HURRAY_MAX_RANK; rank++) {
        struct hurray_layout r = make(HURRAY_LAYOUT_CSF);
        r.nnz = rank * 11u;
        for (unsigned k = 0; k < rank; k++) {
            W_U8(r.mode_order)[k] = (uint8_t)(rank - 1 - k);
            if (k + 1 < rank) W_U64(r.fiber_counts)[k] = k + 1;
        }
        round_trip(&r, (uint8_t)rank);
    }
}

static void test_HR_PAGED_1_param_bytes(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_BLOCK_PAGED);
    l.page_size = 16;
    l.num_pages = 0x100;
    l.num_seqs = 2;
    l.num_blocks = UINT64_MAX;
    const uint8_t want[32] = {16, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
                              2, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                              0xFF};
    uint8_t out[64];
    size_t n = write_params(&l, 2, out, sizeof out);
    assert_bytes_equal(out, n, want, sizeof want);
    round_trip(&l, 2);
    round_trip(&l, 7);
}

static void test_HR_LAYOUT_30_composite_bytes(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_COMPOSITE);
    l.rule = HURRAY_RULE_OVERLAY;
    l.combine = HURRAY_COMBINE_ADD;
    l.member_count = 0x01020304;
    const uint8_t want[] = {2, 2, 0, 0, 4, 3, 2, 1};
    uint8_t out[16];
    size_t n = write_params(&l, 3, out, sizeof out);
    assert_bytes_equal(out, n, want, sizeof want);
    round_trip(&l, 3);
    l.rule = HURRAY_RULE_PARTITION;
    l.combine = 0;
    round_trip(&l, 0);
    l.rule = HURRAY_RULE_GROUP;
    round_trip(&l, 64);
}

/* HR-LAYOUT-30: the reserved u16 of the composite head. */
static void test_HR_LAYOUT_30_composite_reserved(void **state) {
    (void)state;
    for (int pos = 2; pos < 4; pos++) {
        uint8_t b[8] = {1, 0, 0, 0, 1, 0, 0, 0};
        b[pos] = 0x80;
        struct hurray_layout l;
        struct hurray_error err;
        test_error_poison(&err);
        assert_status(read_params(b, 8, HURRAY_LAYOUT_COMPOSITE, 1, &l, &err),
                      HURRAY_E_RESERVED_NONZERO);
        assert_hurray_error(&err, HURRAY_E_RESERVED_NONZERO, "layout.reserved");
        assert_int_equal(err.has_offset, 1);
        assert_true(err.offset == (uint64_t)pos);
    }
}

/* Rule and combine bytes, exhaustively, against memory-layout.md § Composite head. */
static int spec_composite_status(unsigned rule, unsigned combine) {
    if (rule == 0x00 || rule == 0xFF) return HURRAY_E_INVALID_TAG;
    if (rule > 3) return HURRAY_E_RESERVED_TAG;
    if (rule == 2) {
        if (combine >= 1 && combine <= 4) return HURRAY_OK;
        if (combine == 0x00 || combine == 0xFF) return HURRAY_E_INVALID_TAG;
        return HURRAY_E_RESERVED_TAG;
    }
    if (combine == 0x00) return HURRAY_OK;
    if (combine == 0xFF) return HURRAY_E_INVALID_TAG;
    if (combine <= 4) return HURRAY_E_COMBINATION;
    return HURRAY_E_RESERVED_TAG;
}

static void test_HR_LAYOUT_30_rule_and_combine(void **state) {
    (void)state;
    for (unsigned rule = 0; rule < 256; rule++) {
        for (unsigned combine = 0; combine < 256; combine++) {
            uint8_t b[8] = {(uint8_t)rule, (uint8_t)combine, 0, 0, 3, 0, 0, 0};
            int want = spec_composite_status(rule, combine);
            struct hurray_layout l;
            struct hurray_error err;
            test_error_poison(&err);
            int st = read_params(b, 8, HURRAY_LAYOUT_COMPOSITE, 2, &l, &err);
            assert_status(st, want);
            struct hurray_layout c = make(HURRAY_LAYOUT_COMPOSITE);
            c.rule = (uint8_t)rule;
            c.combine = (uint8_t)combine;
            c.member_count = 3;
            assert_status(hurray_layout_check_params(&c, 2, NULL, NULL), want);
            if (want == HURRAY_OK) continue;
            const char *field = (rule == 0 || rule > 3) ? "layout.rule" : "layout.combine";
            assert_hurray_error(&err, want, field);
        }
    }
}

/* An overlay without a combine operation says so, on both paths (not "tag 0x00 is invalid"). */
static void test_HR_LAYOUT_30_overlay_without_combine_named(void **state) {
    (void)state;
    uint8_t b[8] = {HURRAY_RULE_OVERLAY, 0x00, 0, 0, 2, 0, 0, 0};
    struct hurray_layout l;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(read_params(b, 8, HURRAY_LAYOUT_COMPOSITE, 1, &l, &err), HURRAY_E_INVALID_TAG);
    assert_hurray_error(&err, HURRAY_E_INVALID_TAG, "layout.combine");
    assert_non_null(strstr(err.message, "overlay composite requires a combine operation"));
    struct hurray_layout c = make(HURRAY_LAYOUT_COMPOSITE);
    c.rule = HURRAY_RULE_OVERLAY;
    c.member_count = 2;
    test_error_poison(&err);
    assert_status(hurray_layout_check_params(&c, 1, NULL, &err), HURRAY_E_INVALID_TAG);
    assert_non_null(strstr(err.message, "replace, add, max or min"));
}

static void test_HR_LAYOUT_30_member_count(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_COMPOSITE);
    l.rule = HURRAY_RULE_GROUP;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_layout_check_params(&l, 1, NULL, &err), HURRAY_E_CONSTRAINT);
    assert_hurray_error(&err, HURRAY_E_CONSTRAINT, "layout.member_count");
    /* The decoder reads it (a tier-3 rule), validate refuses it. */
    uint8_t b[8] = {3, 0, 0, 0, 0, 0, 0, 0};
    struct hurray_layout r;
    assert_status(read_params(b, 8, HURRAY_LAYOUT_COMPOSITE, 1, &r, NULL), HURRAY_OK);
    const uint64_t shape[1] = {4};
    expect_validate(&r, 1, shape, HURRAY_E_CONSTRAINT, "layout.member_count");

    l.member_count = HURRAY_DEFAULT_MAX_COMPOSITE_MEMBERS;
    assert_status(hurray_layout_check_params(&l, 1, NULL, NULL), HURRAY_OK);
    l.member_count = HURRAY_DEFAULT_MAX_COMPOSITE_MEMBERS + 1;
    test_error_poison(&err);
    assert_status(hurray_layout_check_params(&l, 1, NULL, &err), HURRAY_E_LIMIT);
    assert_hurray_error(&err, HURRAY_E_LIMIT, "layout.member_count");
    expect_validate(&l, 1, shape, HURRAY_E_LIMIT, "layout.member_count");

    struct hurray_limits lim;
    hurray_limits_default(&lim);
    lim.max_composite_members = 4;
    l.member_count = 4;
    assert_status(hurray_layout_check_params(&l, 1, &lim, NULL), HURRAY_OK);
    assert_status(hurray_layout_validate_against_shape(&l, 1, shape, &lim, NULL), HURRAY_OK);
    l.member_count = 5;
    assert_status(hurray_layout_check_params(&l, 1, &lim, NULL), HURRAY_E_LIMIT);
    assert_status(hurray_layout_validate_against_shape(&l, 1, shape, &lim, NULL),
                  HURRAY_E_LIMIT);
    l.member_count = UINT32_MAX;
    lim.max_composite_members = UINT32_MAX;
    assert_status(hurray_layout_check_params(&l, 1, &lim, NULL), HURRAY_OK);
}

static void test_HR_LAYOUT_30_names(void **state) {
    (void)state;
    assert_string_equal(hurray_composite_rule_name(1), "partition");
    assert_string_equal(hurray_composite_rule_name(2), "overlay");
    assert_string_equal(hurray_composite_rule_name(3), "group");
    assert_string_equal(hurray_combine_op_name(1), "replace");
    assert_string_equal(hurray_combine_op_name(2), "add");
    assert_string_equal(hurray_combine_op_name(3), "max");
    assert_string_equal(hurray_combine_op_name(4), "min");
    for (unsigned t = 0; t < 256; t++) {
        if (t < 1 || t > 3) assert_null(hurray_composite_rule_name((uint8_t)t));
        if (t < 1 || t > 4) assert_null(hurray_combine_op_name((uint8_t)t));
    }
}

/* HR-LAYOUT-40: id u32, reserved u32, extension_data; at least 8 bytes. */
static void test_HR_LAYOUT_40_private_params(void **state) {
    (void)state;
    const uint8_t b[] = {0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0, 0xAA, 0xBB, 0xCC};
    for (unsigned tag = 0xF0; tag <= 0xFE; tag++) {
        for (size_t n = 8; n <= sizeof b; n++) {
            struct hurray_layout l;
            assert_status(read_params(b, n, (uint8_t)tag, 2, &l, NULL), HURRAY_OK);
            assert_int_equal(l.extension_layout_id, 0x12345678);
            assert_int_equal(l.opaque_len, n - 8);
            if (n > 8) assert_memory_equal(l.opaque, b + 8, n - 8);
            uint8_t out[16];
            size_t m = write_params(&l, 2, out, sizeof out);
            assert_bytes_equal(out, m, b, n);
            assert_int_equal(param_length(&l, 2), n);
            int count = 0;
            assert_status(hurray_layout_buffer_count((uint8_t)tag, 2, &count, NULL), HURRAY_OK);
            assert_int_equal(count, -1);
            const uint64_t shape[2] = {3, 5};
            assert_status(validate(&l, 2, shape, NULL), HURRAY_OK);
        }
        for (size_t n = 0; n < 8; n++) {
            struct hurray_layout l;
            struct hurray_error err;
            test_error_poison(&err);
            assert_status(read_params(b, n, (uint8_t)tag, 2, &l, &err), HURRAY_E_LENGTH);
            assert_hurray_error(&err, HURRAY_E_LENGTH, "layout.param_length");
        }
        for (int pos = 4; pos < 8; pos++) {
            uint8_t c[8] = {1, 0, 0, 0, 0, 0, 0, 0};
            c[pos] = 1;
            struct hurray_layout l;
            struct hurray_error err;
            test_error_poison(&err);
            assert_status(read_params(c, 8, (uint8_t)tag, 0, &l, &err),
                          HURRAY_E_RESERVED_NONZERO);
            assert_hurray_error(&err, HURRAY_E_RESERVED_NONZERO, "layout.reserved");
        }
    }
}

static void test_HR_LAYOUT_40_private_equality(void **state) {
    (void)state;
    const uint8_t d1[] = {1, 2, 3}, d2[] = {1, 2, 4};
    struct hurray_layout a = make(0xF3), b = make(0xF3);
    a.extension_layout_id = b.extension_layout_id = 7;
    a.opaque = d1;
    b.opaque = d1;
    a.opaque_len = b.opaque_len = 3;
    assert_true(hurray_layout_equal(&a, &b, 0));
    b.opaque = d2;
    assert_false(hurray_layout_equal(&a, &b, 0));
    b.opaque = d1;
    b.extension_layout_id = 8;
    assert_false(hurray_layout_equal(&a, &b, 0));
    b.extension_layout_id = 7;
    b.opaque_len = 2;
    assert_false(hurray_layout_equal(&a, &b, 0));
    b.tag = 0xF4;
    b.opaque_len = 3;
    assert_false(hurray_layout_equal(&a, &b, 0));
    /* Unknown layouts compare opaque bytes only. */
    struct hurray_layout u = make(0x50), v = make(0x50);
    u.opaque = d1;
    v.opaque = d1;
    u.opaque_len = v.opaque_len = 3;
    assert_true(hurray_layout_equal(&u, &v, 0));
    v.opaque = d2;
    assert_false(hurray_layout_equal(&u, &v, 0));
    /* opaque NULL with a length is an API error. */
    struct hurray_layout n = make(0xF0);
    n.opaque_len = 4;
    assert_status(hurray_layout_check_params(&n, 0, NULL, NULL), HURRAY_E_ARGUMENT);
    /* 8 + extension data must fit the u32 param_length. */
    n.opaque = d1;
    n.opaque_len = UINT32_MAX - 7;
    uint32_t len = 0;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_layout_param_length(&n, 0, &len, &err), HURRAY_E_LENGTH);
    assert_hurray_error(&err, HURRAY_E_LENGTH, "layout.param_length");
    assert_status(hurray_layout_check_params(&n, 0, NULL, NULL), HURRAY_E_LENGTH);
    n.opaque_len = UINT32_MAX - 8;
    assert_status(hurray_layout_param_length(&n, 0, &len, NULL), HURRAY_OK);
    assert_true(len == UINT32_MAX);
    u.opaque_len = UINT32_MAX; /* unknown layouts have no head */
    assert_status(hurray_layout_param_length(&u, 0, &len, NULL), HURRAY_OK);
    assert_true(len == UINT32_MAX);
}

/* Every named layout: one byte short or long, and 8 short or long → LENGTH. */
static void test_HR_DESC_5_param_length_exact(void **state) {
    (void)state;
    uint8_t buf[4096] = {0};
    buf[0] = 1; /* composite: partition; csf etc. do not care */
    buf[4] = 1;
    for (size_t i = 0; i < SPEC_LAYOUT_COUNT; i++) {
        uint8_t tag = spec_layouts[i].tag;
        const unsigned ranks[] = {0, 1, 2, 3, 7, 64};
        for (size_t r = 0; r < sizeof ranks / sizeof ranks[0]; r++) {
            uint8_t rank = (uint8_t)ranks[r];
            size_t want = spec_params(tag, rank);
            const long deltas[] = {-8, -1, 1, 8};
            for (size_t d = 0; d < 4; d++) {
                long n = (long)want + deltas[d];
                if (n < 0) continue;
                struct hurray_layout l;
                struct hurray_error err;
                test_error_poison(&err);
                assert_status(read_params(buf, (size_t)n, tag, rank, &l, &err), HURRAY_E_LENGTH);
                assert_hurray_error(&err, HURRAY_E_LENGTH, "layout.param_length");
            }
            struct hurray_layout l;
            assert_status(read_params(buf, want, tag, rank, &l, NULL), HURRAY_OK);
        }
    }
}

/* A cursor is never read past its end, even when its end is inside a larger buffer. */
static void test_HR_DESC_5_params_stay_in_cursor(void **state) {
    (void)state;
    uint8_t buf[64];
    memset(buf, 0x11, sizeof buf);
    struct hri_cursor c;
    hri_cursor_init(&c, buf, 16, HURRAY_E_LENGTH);
    struct hurray_layout l;
    assert_status(hri_layout_params_read(&c, HURRAY_LAYOUT_STRIDED, 2, NULL, &l, pool_slot(), NULL),
                  HURRAY_OK);
    assert_int_equal(c.pos, 16);
    hri_cursor_init(&c, buf, 16, HURRAY_E_LENGTH);
    assert_status(hri_layout_params_read(&c, HURRAY_LAYOUT_STRIDED, 3, NULL, &l, pool_slot(), NULL),
                  HURRAY_E_LENGTH);
}

static void test_layout_api_arguments(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_ROW_MAJOR);
    uint32_t len;
    int count;
    assert_status(hurray_layout_buffer_count(1, 0, NULL, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_layout_param_length(NULL, 0, &len, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_layout_param_length(&l, 0, NULL, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_layout_check_params(NULL, 0, NULL, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_layout_validate_against_shape(NULL, 0, NULL, NULL, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_layout_validate_against_shape(&l, 2, NULL, NULL, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_layout_validate_against_shape(&l, 0, NULL, NULL, NULL), HURRAY_OK);
    struct hurray_error err;
    test_error_poison(&err);
    uint64_t shape[65] = {0};
    assert_status(hurray_layout_validate_against_shape(&l, 65, shape, NULL, &err),
                  HURRAY_E_LIMIT);
    assert_hurray_error(&err, HURRAY_E_LIMIT, "rank");
    assert_status(hurray_layout_param_length(&l, 65, &len, NULL), HURRAY_E_LIMIT);
    assert_status(read_params(NULL, 0, 1, 65, &l, NULL), HURRAY_E_LIMIT);
    assert_status(hurray_layout_buffer_count(HURRAY_LAYOUT_CSF, 255, &count, NULL), HURRAY_OK);
    assert_int_equal(count, 511);
    uint64_t sizes[4];
    uint8_t known[4];
    assert_status(sizes_of(&l, HURRAY_DTYPE_FLOAT32, 1, NULL, 0, sizes, known, NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hri_layout_check_dtype(NULL, 1, 0, NULL), HURRAY_E_ARGUMENT);
    /* A writer given rank > 64 writes nothing and reports overflow. */
    struct hri_writer w;
    uint8_t out[8];
    hri_writer_init(&w, out, sizeof out);
    struct hurray_layout s = make(HURRAY_LAYOUT_STRIDED);
    hri_layout_params_write(&w, &s, 65);
    assert_true(w.overflowed);
    assert_int_equal(w.pos, 0);
    /* Counting writer (dst NULL) measures without writing. */
    hri_writer_init(&w, NULL, 0);
    hri_layout_params_write(&w, &s, 3);
    assert_int_equal(w.pos, 24);
}

/* ---- tier 3: constraints against a shape (HR-LAYOUT-50) ------------------------ */

static void test_HR_SHAPE_1_extent_range(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_ROW_MAJOR);
    uint64_t shape[3] = {2, (uint64_t)INT64_MAX + 1, 3};
    expect_validate(&l, 3, shape, HURRAY_E_RANGE, "shape[1]");
    shape[1] = UINT64_MAX - 1;
    expect_validate(&l, 3, shape, HURRAY_E_RANGE, "shape[1]");
    shape[1] = INT64_MAX;
    expect_validate(&l, 3, shape, HURRAY_E_OVERFLOW, "shape");
    shape[1] = DYN;
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
}

/* HR-SHAPE-3: products beyond 2^64-1 overflow even next to a dynamic
 * extent; a zero extent makes N = 0. */
static void test_HR_SHAPE_3_element_count_overflow(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_COL_MAJOR);
    uint64_t big = UINT64_C(1) << 40;
    uint64_t shape[3] = {big, big, DYN};
    expect_validate(&l, 3, shape, HURRAY_E_OVERFLOW, "shape");
    shape[2] = 0;
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    shape[0] = UINT64_C(1) << 31;
    shape[1] = UINT64_C(1) << 32;
    shape[2] = DYN;
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    expect_validate(&l, 0, NULL, HURRAY_OK, NULL);
}

static void test_HR_LAYOUT_10_any_rank(void **state) {
    (void)state;
    uint64_t shape[HURRAY_MAX_RANK];
    for (unsigned k = 0; k < HURRAY_MAX_RANK; k++) shape[k] = k % 3 == 0 ? 1 : (k % 3 == 1 ? 2 : DYN);
    const uint8_t tags[] = {HURRAY_LAYOUT_ROW_MAJOR, HURRAY_LAYOUT_COL_MAJOR, HURRAY_LAYOUT_STRIDED};
    for (size_t i = 0; i < sizeof tags; i++) {
        for (unsigned rank = 0; rank <= HURRAY_MAX_RANK; rank++) {
            struct hurray_layout l = make(tags[i]); /* zero strides */
            expect_validate(&l, (uint8_t)rank, shape, HURRAY_OK, NULL);
        }
    }
    /* A span the layout reads must be there: NULL is refused, never read. */
    expect_validate(&(struct hurray_layout){.tag = HURRAY_LAYOUT_STRIDED}, 0, shape, HURRAY_OK,
                    NULL);
    expect_validate(&(struct hurray_layout){.tag = HURRAY_LAYOUT_STRIDED}, 2, shape,
                    HURRAY_E_ARGUMENT, "layout.strides");
    expect_validate(&(struct hurray_layout){.tag = HURRAY_LAYOUT_CSF}, 2, shape,
                    HURRAY_E_ARGUMENT, "layout.fiber_counts");
    expect_validate(&(struct hurray_layout){.tag = 0xF3, .opaque_len = 4}, 2, shape,
                    HURRAY_E_ARGUMENT, "layout.opaque");
    struct hurray_layout a = make(HURRAY_LAYOUT_STRIDED), b = a;
    b.strides = NULL;
    assert_false(hurray_layout_equal(&a, &b, 2));
    assert_false(hurray_layout_equal(&b, &a, 2));
    assert_true(hurray_layout_equal(&a, &b, 0));
}

static void test_HR_LAYOUT_12_tiled_constraints(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_TILED);
    expect_validate(&l, 0, NULL, HURRAY_E_CONSTRAINT, "rank");
    uint64_t shape[2] = {4, DYN};
    W_U64(l.tile_shape)[0] = 2;
    W_U64(l.tile_shape)[1] = 0;
    expect_validate(&l, 2, shape, HURRAY_E_CONSTRAINT, "layout.tile_shape[1]");
    W_U64(l.tile_shape)[1] = (uint64_t)INT64_MAX + 1;
    expect_validate(&l, 2, shape, HURRAY_E_CONSTRAINT, "layout.tile_shape[1]");
    W_U64(l.tile_shape)[1] = UINT64_MAX;
    expect_validate(&l, 2, shape, HURRAY_E_CONSTRAINT, "layout.tile_shape[1]");
    W_U64(l.tile_shape)[1] = INT64_MAX;
    expect_validate(&l, 2, shape, HURRAY_OK, NULL);
    /* Tile extents larger than the tensor are fine. */
    W_U64(l.tile_shape)[0] = 100;
    expect_validate(&l, 2, shape, HURRAY_OK, NULL);
    /* Tiles beyond the rank are not looked at. */
    W_U64(l.tile_shape)[2] = 0;
    expect_validate(&l, 2, shape, HURRAY_OK, NULL);
    struct hurray_error err;
    test_error_poison(&err);
    W_U64(l.tile_shape)[0] = 0;
    assert_status(hurray_layout_check_params(&l, 2, NULL, &err), HURRAY_E_CONSTRAINT);
    assert_hurray_error(&err, HURRAY_E_CONSTRAINT, "layout.tile_shape[0]");
}

static void test_HR_LAYOUT_13_morton(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_MORTON);
    uint64_t shape[4] = {4, 8, 1, 2};
    expect_validate(&l, 0, shape, HURRAY_E_CONSTRAINT, "rank");
    expect_validate(&l, 1, shape, HURRAY_E_CONSTRAINT, "rank");
    expect_validate(&l, 2, shape, HURRAY_OK, NULL);
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    expect_validate(&l, 4, shape, HURRAY_E_CONSTRAINT, "rank");
    shape[1] = 6;
    expect_validate(&l, 2, shape, HURRAY_E_CONSTRAINT, "shape[1]");
    shape[1] = 0;
    expect_validate(&l, 2, shape, HURRAY_E_CONSTRAINT, "shape[1]");
    shape[1] = DYN;
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    shape[0] = UINT64_C(1) << 62;
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    shape[2] = 3;
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "shape[2]");
}

static void test_HR_LAYOUT_14_hilbert(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_HILBERT);
    uint64_t shape[3] = {8, 8, 8};
    expect_validate(&l, 2, shape, HURRAY_OK, NULL);
    expect_validate(&l, 1, shape, HURRAY_E_CONSTRAINT, "rank");
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "rank");
    shape[1] = 4;
    expect_validate(&l, 2, shape, HURRAY_E_CONSTRAINT, "shape[1]");
    shape[0] = shape[1] = 6;
    expect_validate(&l, 2, shape, HURRAY_E_CONSTRAINT, "shape[0]");
    shape[0] = shape[1] = 1;
    expect_validate(&l, 2, shape, HURRAY_OK, NULL);
    shape[0] = shape[1] = 0;
    expect_validate(&l, 2, shape, HURRAY_E_CONSTRAINT, "shape[0]");
    shape[0] = DYN;
    shape[1] = 16;
    expect_validate(&l, 2, shape, HURRAY_OK, NULL);
    shape[1] = 12;
    expect_validate(&l, 2, shape, HURRAY_E_CONSTRAINT, "shape[1]");
    shape[0] = shape[1] = DYN;
    expect_validate(&l, 2, shape, HURRAY_OK, NULL);
}

static void test_HR_LAYOUT_20_coo_constraints(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_COO);
    expect_validate(&l, 0, NULL, HURRAY_E_CONSTRAINT, "rank");
    uint64_t shape[3] = {2, 3, 4};
    l.nnz = 24;
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    l.nnz = 25;
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.nnz");
    shape[1] = DYN;
    l.nnz = UINT64_MAX;
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    shape[2] = 0; /* N = 0 even with a dynamic extent */
    l.nnz = 1;
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.nnz");
    l.nnz = 0;
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    expect_validate(&l, 1, shape, HURRAY_OK, NULL);
}

static void test_HR_LAYOUT_21_csr_csc_constraints(void **state) {
    (void)state;
    const uint8_t tags[] = {HURRAY_LAYOUT_CSR, HURRAY_LAYOUT_CSC};
    for (size_t i = 0; i < 2; i++) {
        struct hurray_layout l = make(tags[i]);
        uint64_t shape[3] = {3, 5, 2};
        expect_validate(&l, 1, shape, HURRAY_E_CONSTRAINT, "rank");
        expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "rank");
        expect_validate(&l, 0, shape, HURRAY_E_CONSTRAINT, "rank");
        l.nnz = 15;
        expect_validate(&l, 2, shape, HURRAY_OK, NULL);
        l.nnz = 16;
        expect_validate(&l, 2, shape, HURRAY_E_CONSTRAINT, "layout.nnz");
        shape[0] = DYN;
        expect_validate(&l, 2, shape, HURRAY_OK, NULL);
    }
}

static struct hurray_layout csf3(uint64_t c0, uint64_t c1, uint64_t nnz) {
    struct hurray_layout l = make(HURRAY_LAYOUT_CSF);
    W_U64(l.fiber_counts)[0] = c0;
    W_U64(l.fiber_counts)[1] = c1;
    l.nnz = nnz;
    W_U8(l.mode_order)[0] = 0;
    W_U8(l.mode_order)[1] = 1;
    W_U8(l.mode_order)[2] = 2;
    return l;
}

static void test_HR_LAYOUT_23_csf_mode_order(void **state) {
    (void)state;
    uint64_t shape[3] = {4, 5, 6};
    struct hurray_layout l = csf3(2, 3, 4);
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    W_U8(l.mode_order)[1] = 0;
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.mode_order[1]");
    W_U8(l.mode_order)[1] = 3;
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.mode_order[1]");
    W_U8(l.mode_order)[1] = 255;
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.mode_order[1]");
    W_U8(l.mode_order)[0] = 2;
    W_U8(l.mode_order)[1] = 0;
    W_U8(l.mode_order)[2] = 1;
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    struct hurray_layout r = make(HURRAY_LAYOUT_CSF);
    expect_validate(&r, 0, shape, HURRAY_E_CONSTRAINT, "rank");
    r.nnz = 4;
    expect_validate(&r, 1, shape, HURRAY_OK, NULL); /* c_0 = nnz <= n_0 */
    r.nnz = 5;
    expect_validate(&r, 1, shape, HURRAY_E_CONSTRAINT, "layout.nnz");
    r.nnz = 5;
    W_U8(r.mode_order)[0] = 1;
    expect_validate(&r, 1, shape, HURRAY_E_CONSTRAINT, "layout.mode_order[0]");
}

static void test_HR_LAYOUT_23_csf_fiber_counts(void **state) {
    (void)state;
    uint64_t shape[3] = {4, 5, 6};
    struct hurray_layout l = csf3(0, 0, 0); /* every c_d 0: an empty tensor */
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    l = csf3(0, 1, 1);
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.fiber_counts[0]");
    l = csf3(2, 1, 4);
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.fiber_counts[1]");
    l = csf3(2, 3, 2);
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.nnz");
    l = csf3(2, 0, 0);
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.fiber_counts[1]");
    /* c_0 <= n_{m_0}; c_d <= c_{d-1}·n_{m_d}. */
    l = csf3(4, 20, 120);
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    l = csf3(5, 5, 5);
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.fiber_counts[0]");
    l = csf3(4, 21, 21);
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.fiber_counts[1]");
    l = csf3(4, 20, 121);
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.nnz");
    /* mode_order picks the extent. */
    l = csf3(6, 6, 6);
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.fiber_counts[0]");
    W_U8(l.mode_order)[0] = 2;
    W_U8(l.mode_order)[2] = 0;
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    /* Dynamic extents skip their bound; the monotone rule still holds. */
    shape[2] = DYN;
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    l = csf3(4, 20, UINT64_MAX);
    expect_validate(&l, 3, shape, HURRAY_OK, NULL);
    l = csf3(4, 3, UINT64_MAX);
    expect_validate(&l, 3, shape, HURRAY_E_CONSTRAINT, "layout.fiber_counts[1]");
    /* A bound beyond 2^64-1 cannot be exceeded. */
    uint64_t big[3] = {INT64_MAX, INT64_MAX, 4};
    l = csf3(INT64_MAX, UINT64_MAX, UINT64_MAX);
    expect_validate(&l, 3, big, HURRAY_E_OVERFLOW, "shape"); /* N itself overflows */
    big[2] = DYN;
    expect_validate(&l, 3, big, HURRAY_E_OVERFLOW, "shape");
    uint64_t ok2[2] = {INT64_MAX, 2};
    struct hurray_layout m = make(HURRAY_LAYOUT_CSF);
    W_U8(m.mode_order)[1] = 1;
    W_U64(m.fiber_counts)[0] = INT64_MAX;
    m.nnz = UINT64_MAX - 1;
    expect_validate(&m, 2, ok2, HURRAY_OK, NULL);
}

static void test_HR_PAGED_1_constraints(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_BLOCK_PAGED);
    l.page_size = 16;
    l.num_seqs = 3;
    uint64_t shape[4] = {3, 100, 8, 64};
    expect_validate(&l, 4, shape, HURRAY_OK, NULL);
    expect_validate(&l, 2, shape, HURRAY_OK, NULL);
    expect_validate(&l, 1, shape, HURRAY_E_CONSTRAINT, "rank");
    expect_validate(&l, 0, shape, HURRAY_E_CONSTRAINT, "rank");
    l.page_size = 0;
    expect_validate(&l, 4, shape, HURRAY_E_CONSTRAINT, "layout.page_size");
    l.page_size = 1;
    l.num_seqs = 2;
    expect_validate(&l, 4, shape, HURRAY_E_CONSTRAINT, "layout.num_seqs");
    shape[0] = DYN;
    expect_validate(&l, 4, shape, HURRAY_OK, NULL);
    shape[1] = DYN;
    shape[3] = DYN;
    expect_validate(&l, 4, shape, HURRAY_OK, NULL);
}

static void test_HR_LAYOUT_30_composite_any_rank(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_COMPOSITE);
    l.rule = HURRAY_RULE_PARTITION;
    l.member_count = 2;
    uint64_t shape[3] = {DYN, 0, 5};
    for (uint8_t rank = 0; rank <= 3; rank++) expect_validate(&l, rank, shape, HURRAY_OK, NULL);
    l.combine = HURRAY_COMBINE_MAX;
    expect_validate(&l, 3, shape, HURRAY_E_COMBINATION, "layout.combine");
}

/* ---- dtype and byte_offset (HR-LAYOUT-11, -12, HR-DESC-3) ------------------------ */

static void test_HR_LAYOUT_11_strided_dtype(void **state) {
    (void)state;
    const uint8_t tags[] = {HURRAY_LAYOUT_STRIDED, HURRAY_LAYOUT_TILED};
    for (size_t i = 0; i < 2; i++) {
        struct hurray_layout l = make(tags[i]);
        for (unsigned d = 0; d < 256; d++) {
            uint16_t bits = hurray_dtype_bits((uint8_t)d);
            int addressable = bits != 0 && bits % 8 == 0;
            struct hurray_error err;
            test_error_poison(&err);
            int st = hri_layout_check_dtype(&l, (uint8_t)d, 0, &err);
            if (addressable) {
                assert_status(st, HURRAY_OK);
            } else {
                assert_status(st, HURRAY_E_COMBINATION);
                assert_hurray_error(&err, HURRAY_E_COMBINATION, "dtype");
            }
        }
    }
}

static void test_HR_DESC_3_byte_offset(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_ROW_MAJOR);
    struct hurray_error err;
    assert_status(hri_layout_check_dtype(&l, HURRAY_DTYPE_FLOAT32, 8, NULL), HURRAY_OK);
    test_error_poison(&err);
    assert_status(hri_layout_check_dtype(&l, HURRAY_DTYPE_FLOAT32, 6, &err),
                  HURRAY_E_CONSTRAINT);
    assert_hurray_error(&err, HURRAY_E_CONSTRAINT, "byte_offset");
    assert_status(hri_layout_check_dtype(&l, HURRAY_DTYPE_COMPLEX128, 16, NULL), HURRAY_OK);
    assert_status(hri_layout_check_dtype(&l, HURRAY_DTYPE_COMPLEX128, 8, NULL),
                  HURRAY_E_CONSTRAINT);
    assert_status(hri_layout_check_dtype(&l, HURRAY_DTYPE_UINT8, 3, NULL), HURRAY_OK);
    /* Sub-byte and extension types: E is undefined, any offset. */
    assert_status(hri_layout_check_dtype(&l, HURRAY_DTYPE_INT4, 3, NULL), HURRAY_OK);
    assert_status(hri_layout_check_dtype(&l, HURRAY_DTYPE_FLOAT6_E2M3FN, 1, NULL), HURRAY_OK);
    assert_status(hri_layout_check_dtype(&l, 0xF5, 7, NULL), HURRAY_OK);
    l.tag = HURRAY_LAYOUT_STRIDED;
    assert_status(hri_layout_check_dtype(&l, HURRAY_DTYPE_INT64, 12, NULL),
                  HURRAY_E_CONSTRAINT);
    assert_status(hri_layout_check_dtype(&l, HURRAY_DTYPE_INT64, 16, NULL), HURRAY_OK);
    l.tag = HURRAY_LAYOUT_COMPOSITE;
    assert_status(hri_layout_check_dtype(&l, HURRAY_DTYPE_FLOAT32, 0, NULL), HURRAY_OK);
    test_error_poison(&err);
    assert_status(hri_layout_check_dtype(&l, HURRAY_DTYPE_FLOAT32, 8, &err),
                  HURRAY_E_CONSTRAINT);
    assert_hurray_error(&err, HURRAY_E_CONSTRAINT, "byte_offset");
}

/* ---- tier 2: required sizes ------------------------------------------------------ */

static void expect_sizes(const struct hurray_layout *l, uint8_t dtype, uint8_t rank,
                         const uint64_t *shape, uint64_t off, size_t n, const uint64_t *want,
                         const uint8_t *want_known) {
    uint64_t sizes[160];
    uint8_t known[160];
    memset(sizes, 0xAB, sizeof sizes);
    memset(known, 0xAB, sizeof known);
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(sizes_of(l, dtype, rank, shape, off, sizes, known, &err), HURRAY_OK);
    for (size_t i = 0; i < n; i++) {
        uint8_t k = want_known ? want_known[i] : 1;
        assert_int_equal(known[i], k);
        if (k) assert_true(sizes[i] == want[i]);
    }
    assert_int_equal(known[n], 0xAB); /* nothing past L written */
}

static void expect_sizes_fail(const struct hurray_layout *l, uint8_t dtype, uint8_t rank,
                              const uint64_t *shape, uint64_t off, int code, const char *field) {
    uint64_t sizes[160];
    uint8_t known[160];
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(sizes_of(l, dtype, rank, shape, off, sizes, known, &err), code);
    assert_hurray_error(&err, code, field);
}

static void test_HR_LAYOUT_10_dense_sizes(void **state) {
    (void)state;
    const uint8_t tags[] = {HURRAY_LAYOUT_ROW_MAJOR, HURRAY_LAYOUT_COL_MAJOR,
                            HURRAY_LAYOUT_MORTON, HURRAY_LAYOUT_HILBERT};
    for (size_t i = 0; i < sizeof tags; i++) {
        struct hurray_layout l = make(tags[i]);
        uint64_t shape[2] = {2, 4};
        expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 8, 1, (uint64_t[]){40}, NULL);
        expect_sizes(&l, HURRAY_DTYPE_INT4, 2, shape, 1, 1, (uint64_t[]){5}, NULL);
        shape[1] = 3;
        expect_sizes(&l, HURRAY_DTYPE_INT4, 2, shape, 0, 1, (uint64_t[]){3}, NULL);
        expect_sizes(&l, HURRAY_DTYPE_UINT1, 2, shape, 0, 1, (uint64_t[]){1}, NULL);
        expect_sizes(&l, HURRAY_DTYPE_FLOAT6_E3M2FN, 2, shape, 0, 1, (uint64_t[]){5}, NULL);
        expect_sizes(&l, HURRAY_DTYPE_INT2, 2, shape, 0, 1, (uint64_t[]){2}, NULL);
        expect_sizes(&l, HURRAY_DTYPE_COMPLEX128, 2, shape, 0, 1, (uint64_t[]){96}, NULL);
        /* Dynamic: unknown; with a zero extent N = 0: off bytes, known. */
        shape[0] = DYN;
        expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 8, 1, (uint64_t[]){0},
                     (uint8_t[]){0});
        shape[1] = 0;
        expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 8, 1, (uint64_t[]){8}, NULL);
        /* Extension type: unknown width. */
        shape[0] = 2;
        shape[1] = 2;
        expect_sizes(&l, 0xF1, 2, shape, 0, 1, (uint64_t[]){0}, (uint8_t[]){0});
    }
    struct hurray_layout l = make(HURRAY_LAYOUT_ROW_MAJOR);
    expect_sizes(&l, HURRAY_DTYPE_FLOAT64, 0, NULL, 16, 1, (uint64_t[]){24}, NULL);
    /* N·bits beyond 2^64-1, and off + bs(N) beyond 2^64-1. */
    uint64_t big[2] = {UINT64_C(1) << 59, 16}; /* N = 2^63 */
    expect_sizes_fail(&l, HURRAY_DTYPE_INT8, 2, big, 0, HURRAY_E_OVERFLOW, "buffers[0].size");
    expect_sizes(&l, HURRAY_DTYPE_UINT1, 2, big, 0, 1, (uint64_t[]){UINT64_C(1) << 60}, NULL);
    expect_sizes_fail(&l, HURRAY_DTYPE_INT2, 2, big, 0, HURRAY_E_OVERFLOW, "buffers[0].size");
    expect_sizes_fail(&l, HURRAY_DTYPE_INT4, 2, big, 0, HURRAY_E_OVERFLOW, "buffers[0].size");
    big[1] = 15;
    expect_sizes(&l, HURRAY_DTYPE_UINT1, 2, big, 0, 1,
                 (uint64_t[]){(UINT64_C(15) << 59) / 8}, NULL);
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT1, 2, big, UINT64_MAX - 8, HURRAY_E_OVERFLOW,
                      "buffers[0].size");
    big[1] = 33; /* the product itself */
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT1, 2, big, 0, HURRAY_E_OVERFLOW, "shape");
}

/* Brute force: the lowest and highest element position over every index. */
static int brute_span(const struct hurray_layout *l, uint8_t rank, const uint64_t *shape,
                      int64_t *lo, int64_t *hi) {
    uint64_t idx[4] = {0};
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    for (unsigned k = 0; k < rank; k++)
        if (shape[k] == 0) return 0;
    for (;;) {
        int64_t pos = 0;
        for (unsigned k = 0; k < rank; k++) {
            if (l->tag == HURRAY_LAYOUT_STRIDED) {
                pos += (int64_t)idx[k] * l->strides[k];
            } else {
                uint64_t t = l->tile_shape[k];
                pos += (int64_t)(idx[k] / t) * l->strides[k] +
                       (int64_t)(idx[k] % t) * l->inner_strides[k];
            }
        }
        if (pos < *lo) *lo = pos;
        if (pos > *hi) *hi = pos;
        unsigned k = 0;
        while (k < rank && ++idx[k] == shape[k]) idx[k++] = 0;
        if (k == rank) return 1;
    }
}

/* memory-layout.md § Tiled, transcribed: per dimension a grid term
 * outer·(⌈n/t⌉−1) and an in-tile term inner·(min(t, n)−1), each added to lo
 * when negative and to hi when positive. It equals the brute-force span when
 * every tile is full (n mod t = 0 or t >= n) and contains it otherwise. */
static void spec_tiled_span(const struct hurray_layout *l, uint8_t rank, const uint64_t *shape,
                            int64_t *lo, int64_t *hi, int *exact) {
    *lo = *hi = 0;
    *exact = 1;
    for (unsigned k = 0; k < rank; k++) {
        int64_t t = (int64_t)l->tile_shape[k], n = (int64_t)shape[k];
        int64_t g = l->strides[k] * ((n + t - 1) / t - 1);
        int64_t in = l->inner_strides[k] * ((t < n ? t : n) - 1);
        *lo += (g < 0 ? g : 0) + (in < 0 ? in : 0);
        *hi += (g > 0 ? g : 0) + (in > 0 ? in : 0);
        if (n % t != 0 && t < n) *exact = 0;
    }
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* HR-LAYOUT-11/12: the required size over random small layouts, including
 * zero and negative strides and tiles larger than extents: strided equals
 * brute force; tiled equals the spec's per-dimension formula, which equals
 * brute force for full tiles and over-approximates partial last tiles. */
static void test_HR_LAYOUT_11_span_matches_brute_force(void **state) {
    (void)state;
    const uint8_t dtypes[] = {HURRAY_DTYPE_UINT8, HURRAY_DTYPE_FLOAT32, HURRAY_DTYPE_COMPLEX128};
    for (int iter = 0; iter < 4000; iter++) {
        struct hurray_layout l = make(iter % 2 ? HURRAY_LAYOUT_STRIDED : HURRAY_LAYOUT_TILED);
        uint8_t rank = (uint8_t)(1 + rng() % 4);
        uint64_t shape[4];
        for (unsigned k = 0; k < rank; k++) {
            shape[k] = rng() % 5;
            if (shape[k] == 0 && rng() % 4) shape[k] = 1;
            W_I64(l.strides)[k] = (int64_t)(rng() % 21) - 10;
            W_I64(l.inner_strides)[k] = (int64_t)(rng() % 11) - 5;
            W_U64(l.tile_shape)[k] = 1 + rng() % 6;
        }
        uint8_t dtype = dtypes[rng() % 3];
        uint64_t e = hurray_dtype_bits(dtype) / 8;
        uint64_t off = e * (rng() % 40);
        int64_t lo, hi;
        uint64_t sizes[1];
        uint8_t known[1];
        struct hurray_error err;
        int st = sizes_of(&l, dtype, rank, shape, off, sizes, known, &err);
        if (!brute_span(&l, rank, shape, &lo, &hi)) {
            assert_status(st, HURRAY_OK);
            assert_true(sizes[0] == off);
            continue;
        }
        if (l.tag == HURRAY_LAYOUT_TILED) {
            int64_t slo, shi;
            int exact;
            spec_tiled_span(&l, rank, shape, &slo, &shi, &exact);
            assert_true(slo <= lo && shi >= hi);
            if (exact) assert_true(slo == lo && shi == hi);
            lo = slo;
            hi = shi;
        }
        if ((int64_t)(off / e) + lo < 0) {
            assert_status(st, HURRAY_E_CONSTRAINT);
            assert_true(strstr(err.field, "strides") != NULL);
            continue;
        }
        assert_status(st, HURRAY_OK);
        assert_int_equal(known[0], 1);
        assert_true(sizes[0] == ((uint64_t)((int64_t)(off / e) + hi) + 1) * e);
    }
}

static void test_HR_LAYOUT_11_strided_sizes(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_STRIDED);
    uint64_t shape[2] = {2, 3};
    W_I64(l.strides)[0] = 3;
    W_I64(l.strides)[1] = 1;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 0, 1, (uint64_t[]){24}, NULL);
    /* Negative stride: off/E + lo >= 0. */
    W_I64(l.strides)[0] = -3;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 12, 1, (uint64_t[]){24}, NULL);
    expect_sizes_fail(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 8, HURRAY_E_CONSTRAINT,
                      "layout.strides");
    /* Zero strides: a broadcast needs one element. */
    W_I64(l.strides)[0] = 0;
    W_I64(l.strides)[1] = 0;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT64, 2, shape, 16, 1, (uint64_t[]){24}, NULL);
    /* N = 0: off bytes, whatever the strides (and even with a dynamic extent). */
    W_I64(l.strides)[0] = -1000;
    shape[1] = 0;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 4, 1, (uint64_t[]){4}, NULL);
    shape[0] = DYN;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 4, 1, (uint64_t[]){4}, NULL);
    shape[1] = 3;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 4, 1, (uint64_t[]){0}, (uint8_t[]){0});
    /* Rank 0: one element at off. */
    expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 0, NULL, 4, 1, (uint64_t[]){8}, NULL);
    /* Non-byte-addressable types. */
    shape[0] = 2;
    expect_sizes_fail(&l, HURRAY_DTYPE_INT4, 2, shape, 0, HURRAY_E_COMBINATION, "dtype");
    expect_sizes_fail(&l, 0xF0, 2, shape, 0, HURRAY_E_COMBINATION, "dtype");
}

static void test_HR_LAYOUT_11_strided_overflow(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_STRIDED);
    uint64_t shape[2] = {3, 1};
    W_I64(l.strides)[0] = INT64_MAX; /* INT64_MAX·2 */
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT8, 2, shape, 0, HURRAY_E_OVERFLOW, "buffers[0].size");
    W_I64(l.strides)[0] = INT64_MIN;
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT8, 2, shape, 0, HURRAY_E_OVERFLOW, "buffers[0].size");
    /* Each term fits, the sum does not. */
    shape[0] = 2;
    shape[1] = 2;
    W_I64(l.strides)[0] = INT64_MAX;
    W_I64(l.strides)[1] = 1;
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT8, 2, shape, 0, HURRAY_E_OVERFLOW, "buffers[0].size");
    W_I64(l.strides)[0] = INT64_MIN + 1;
    W_I64(l.strides)[1] = -2;
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT8, 2, shape, 0, HURRAY_E_OVERFLOW, "buffers[0].size");
    /* hi fits, (off/E + hi + 1)·E does not. */
    W_I64(l.strides)[0] = INT64_MAX;
    W_I64(l.strides)[1] = 0;
    expect_sizes(&l, HURRAY_DTYPE_UINT8, 2, shape, 0, 1, (uint64_t[]){(uint64_t)INT64_MAX + 1},
                 NULL);
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT16, 2, shape, 0, HURRAY_E_OVERFLOW,
                      "buffers[0].size");
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT8, 2, shape, UINT64_MAX, HURRAY_E_OVERFLOW,
                      "buffers[0].size");
    /* lo = INT64_MIN exactly, with off/E large enough. */
    W_I64(l.strides)[0] = INT64_MIN;
    expect_sizes(&l, HURRAY_DTYPE_UINT8, 2, shape, (uint64_t)INT64_MAX + 1, 1,
                 (uint64_t[]){(uint64_t)INT64_MAX + 2}, NULL);
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT8, 2, shape, (uint64_t)INT64_MAX, HURRAY_E_CONSTRAINT,
                      "layout.strides");
    /* A stride times an extent (2^62·(2^62−1)). */
    uint64_t wide[1] = {UINT64_C(1) << 62};
    W_I64(l.strides)[0] = INT64_C(1) << 62;
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT8, 1, wide, 0, HURRAY_E_OVERFLOW, "buffers[0].size");
}

static void test_HR_LAYOUT_12_tiled_sizes(void **state) {
    (void)state;
    /* A 5×6 matrix in 2×4 tiles, tiles row-major (3 × 2 grid of 8-element
     * tiles), elements row-major within a tile: outer = {16, 8}, inner = {4, 1}.
     * hi = 16·2 + 8·1 + 4·1 + 1·3 = 47 → 48 elements. */
    struct hurray_layout l = make(HURRAY_LAYOUT_TILED);
    uint64_t shape[2] = {5, 6};
    W_U64(l.tile_shape)[0] = 2;
    W_U64(l.tile_shape)[1] = 4;
    W_I64(l.strides)[0] = 16;
    W_I64(l.strides)[1] = 8;
    W_I64(l.inner_strides)[0] = 4;
    W_I64(l.inner_strides)[1] = 1;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 0, 1, (uint64_t[]){192}, NULL);
    expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 64, 1, (uint64_t[]){256}, NULL);
    /* Tile larger than the tensor: in-tile term uses min(t, n). */
    W_U64(l.tile_shape)[1] = 100;
    W_I64(l.strides)[1] = 1000; /* grid term ⌈6/100⌉−1 = 0 */
    expect_sizes(&l, HURRAY_DTYPE_UINT8, 2, shape, 0, 1, (uint64_t[]){16 * 2 + 4 + 5 + 1},
                 NULL);
    W_I64(l.inner_strides)[1] = -1;
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT8, 2, shape, 4, HURRAY_E_CONSTRAINT,
                      "layout.outer_strides");
    expect_sizes(&l, HURRAY_DTYPE_UINT8, 2, shape, 5, 1, (uint64_t[]){5 + 36 + 1}, NULL);
    shape[0] = DYN;
    expect_sizes(&l, HURRAY_DTYPE_UINT8, 2, shape, 5, 1, (uint64_t[]){0}, (uint8_t[]){0});
    shape[0] = 0;
    expect_sizes(&l, HURRAY_DTYPE_UINT8, 2, shape, 5, 1, (uint64_t[]){5}, NULL);
    shape[0] = 3;
    W_I64(l.strides)[0] = INT64_MAX;
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT8, 2, shape, 5, HURRAY_E_OVERFLOW, "buffers[0].size");
    expect_sizes_fail(&l, HURRAY_DTYPE_FLOAT6_E2M3FN, 2, shape, 0, HURRAY_E_COMBINATION, "dtype");
}

static void test_HR_LAYOUT_20_coo_sizes(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_COO);
    uint64_t shape[2] = {10, DYN};
    l.nnz = 5;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 4, 2, (uint64_t[]){24, 80}, NULL);
    expect_sizes(&l, HURRAY_DTYPE_INT4, 2, shape, 0, 2, (uint64_t[]){3, 80}, NULL);
    expect_sizes(&l, 0xF7, 2, shape, 0, 2, (uint64_t[]){0, 80}, (uint8_t[]){0, 1});
    l.nnz = 0;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 4, 2, (uint64_t[]){4, 0}, NULL);
    l.nnz = UINT64_C(1) << 60;
    expect_sizes_fail(&l, HURRAY_DTYPE_FLOAT32, 2, shape, 0, HURRAY_E_OVERFLOW,
                      "buffers[0].size");
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT1, 2, shape, 0, HURRAY_E_OVERFLOW, "buffers[1].size");
    l.nnz = UINT64_MAX / 2;
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT1, 3, (uint64_t[]){1, 1, 1}, 0, HURRAY_E_OVERFLOW,
                      "buffers[1].size");
}

static void test_HR_LAYOUT_21_csr_csc_sizes(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_CSR);
    uint64_t shape[2] = {4, 10};
    l.nnz = 7;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT64, 2, shape, 0, 3, (uint64_t[]){56, 56, 40}, NULL);
    l.tag = HURRAY_LAYOUT_CSC;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT64, 2, shape, 8, 3, (uint64_t[]){64, 56, 88}, NULL);
    shape[1] = DYN;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT64, 2, shape, 8, 3, (uint64_t[]){64, 56, 0},
                 (uint8_t[]){1, 1, 0});
    l.tag = HURRAY_LAYOUT_CSR;
    expect_sizes(&l, HURRAY_DTYPE_UINT2, 2, shape, 0, 3, (uint64_t[]){2, 56, 40}, NULL);
    shape[0] = INT64_MAX;
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT2, 2, shape, 0, HURRAY_E_OVERFLOW,
                      "buffers[2].size");
    l.nnz = UINT64_C(1) << 61;
    shape[0] = 1;
    expect_sizes_fail(&l, HURRAY_DTYPE_UINT1, 2, shape, 0, HURRAY_E_OVERFLOW,
                      "buffers[1].size");
    expect_sizes_fail(&l, HURRAY_DTYPE_FLOAT32, 1, shape, 0, HURRAY_E_CONSTRAINT, "rank");
}

static void test_HR_LAYOUT_23_csf_sizes(void **state) {
    (void)state;
    struct hurray_layout l = csf3(2, 3, 5);
    uint64_t shape[3] = {4, DYN, 6};
    expect_sizes(&l, HURRAY_DTYPE_FLOAT32, 3, shape, 0, 7,
                 (uint64_t[]){20, 16, 16, 24, 24, 32, 40}, NULL);
    expect_sizes(&l, 0xFE, 3, shape, 0, 7, (uint64_t[]){0, 16, 16, 24, 24, 32, 40},
                 (uint8_t[]){0, 1, 1, 1, 1, 1, 1});
    struct hurray_layout r = make(HURRAY_LAYOUT_CSF);
    r.nnz = 3;
    expect_sizes(&r, HURRAY_DTYPE_INT4, 1, shape, 1, 3, (uint64_t[]){3, 16, 24}, NULL);
    l = csf3(2, UINT64_MAX, 5);
    expect_sizes_fail(&l, HURRAY_DTYPE_FLOAT32, 3, shape, 0, HURRAY_E_OVERFLOW,
                      "buffers[4].size");
    l = csf3(2, UINT64_MAX / 8 + 1, 5);
    expect_sizes_fail(&l, HURRAY_DTYPE_FLOAT32, 3, shape, 0, HURRAY_E_OVERFLOW,
                      "buffers[4].size");
    /* Rank 64: 129 buffers. */
    struct hurray_layout big = make(HURRAY_LAYOUT_CSF);
    uint64_t want[129];
    uint64_t s64[64];
    big.nnz = 1;
    want[0] = 4;
    for (unsigned d = 0; d < 64; d++) {
        s64[d] = 1;
        if (d < 63) W_U64(big.fiber_counts)[d] = 1;
        want[1 + 2 * d] = 16;
        want[2 + 2 * d] = 8;
    }
    expect_sizes(&big, HURRAY_DTYPE_FLOAT32, 64, s64, 0, 129, want, NULL);
}

static void test_HR_PAGED_2_sizes(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_BLOCK_PAGED);
    l.page_size = 16;
    l.num_pages = 3;
    l.num_seqs = 2;
    l.num_blocks = 5;
    uint64_t shape[4] = {2, 40, 4, 8};
    expect_sizes(&l, HURRAY_DTYPE_FLOAT16, 4, shape, 0, 3, (uint64_t[]){3072, 24, 40}, NULL);
    expect_sizes(&l, HURRAY_DTYPE_INT4, 2, shape, 2, 3, (uint64_t[]){2 + 24, 24, 40}, NULL);
    shape[3] = DYN;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT16, 4, shape, 0, 3, (uint64_t[]){0, 24, 40},
                 (uint8_t[]){0, 1, 1});
    shape[2] = 0;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT16, 4, shape, 6, 3, (uint64_t[]){6, 24, 40}, NULL);
    shape[0] = DYN; /* seq_ptr comes from num_seqs, known */
    shape[1] = DYN;
    shape[2] = 1;
    shape[3] = 1;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT16, 4, shape, 0, 3, (uint64_t[]){96, 24, 40}, NULL);
    l.num_pages = 0;
    shape[3] = DYN;
    expect_sizes(&l, HURRAY_DTYPE_FLOAT16, 4, shape, 0, 3, (uint64_t[]){0, 24, 40}, NULL);
    l.num_pages = UINT64_MAX;
    shape[3] = 1;
    expect_sizes_fail(&l, HURRAY_DTYPE_FLOAT16, 4, shape, 0, HURRAY_E_OVERFLOW,
                      "buffers[0].size");
    l.num_pages = 1;
    l.num_seqs = UINT64_MAX;
    expect_sizes_fail(&l, HURRAY_DTYPE_FLOAT16, 4, shape, 0, HURRAY_E_OVERFLOW,
                      "buffers[1].size");
    l.num_seqs = 2;
    l.num_blocks = UINT64_MAX / 4;
    expect_sizes_fail(&l, HURRAY_DTYPE_FLOAT16, 4, shape, 0, HURRAY_E_OVERFLOW,
                      "buffers[2].size");
}

static void test_HR_LAYOUT_41_no_sizes_for_unknown(void **state) {
    (void)state;
    uint64_t sizes[4] = {7, 7, 7, 7};
    uint8_t known[4] = {7, 7, 7, 7};
    struct hurray_layout l = make(0x44);
    assert_status(sizes_of(&l, HURRAY_DTYPE_FLOAT32, 0, NULL, 0, sizes, known, NULL), HURRAY_OK);
    assert_int_equal(known[0], 7);
    l = make(HURRAY_LAYOUT_COMPOSITE);
    assert_status(sizes_of(&l, HURRAY_DTYPE_FLOAT32, 0, NULL, 0, sizes, known, NULL), HURRAY_OK);
    assert_int_equal(known[0], 7);
}

/* ---- block-paged invariants (HR-PAGED-2) ----------------------------------------- */

struct paged {
    struct hurray_layout l;
    uint8_t seq[8 * 8];
    uint8_t table[8 * 8];
};

static void set_u64(uint8_t *p, size_t i, uint64_t v) { hri_store_u64le(p + 8 * i, v); }

/* Two sequences over 3 pages: seq 0 → blocks [0, 2), seq 1 → [2, 4). */
static struct paged paged_ok(void) {
    struct paged p;
    memset(&p, 0, sizeof p);
    p.l = make(HURRAY_LAYOUT_BLOCK_PAGED);
    p.l.page_size = 4;
    p.l.num_pages = 3;
    p.l.num_seqs = 2;
    p.l.num_blocks = 4;
    set_u64(p.seq, 0, 0);
    set_u64(p.seq, 1, 2);
    set_u64(p.seq, 2, 4);
    set_u64(p.table, 0, 0);
    set_u64(p.table, 1, 1);
    set_u64(p.table, 2, 2);
    set_u64(p.table, 3, 1);
    return p;
}

static int check_paged(const struct paged *p, uint64_t seq_bytes, uint64_t table_bytes,
                       struct hurray_error *err) {
    return hurray_block_paged_validate_index_buffers(&p->l, p->seq, seq_bytes, p->table,
                                                     table_bytes, err);
}

static void expect_paged(const struct paged *p, int code, const char *field) {
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(check_paged(p, 24, 32, &err), code);
    if (code != HURRAY_OK) assert_hurray_error(&err, code, field);
}

static void test_HR_PAGED_2_valid_and_aliasing(void **state) {
    (void)state;
    struct paged p = paged_ok();
    expect_paged(&p, HURRAY_OK, NULL);
    /* Every block names page 0: aliasing is legal. */
    for (int j = 0; j < 4; j++) set_u64(p.table, (size_t)j, 0);
    expect_paged(&p, HURRAY_OK, NULL);
    /* Over-sized buffers are fine; empty sequences are fine. */
    set_u64(p.seq, 1, 0);
    assert_status(check_paged(&p, 64, 64, NULL), HURRAY_OK);
    /* No sequences, no blocks. */
    struct paged e = paged_ok();
    e.l.num_seqs = 0;
    e.l.num_blocks = 0;
    assert_status(hurray_block_paged_validate_index_buffers(&e.l, e.seq, 8, NULL, 0, NULL),
                  HURRAY_OK);
}

static void test_HR_PAGED_2_invariant_1(void **state) {
    (void)state;
    struct paged p = paged_ok();
    set_u64(p.seq, 0, 1);
    expect_paged(&p, HURRAY_E_INDEX, "seq_ptr[0]");
}

static void test_HR_PAGED_2_invariant_2(void **state) {
    (void)state;
    struct paged p = paged_ok();
    p.l.num_seqs = 3;
    p.l.num_blocks = 4;
    set_u64(p.seq, 1, 3);
    set_u64(p.seq, 2, 2);
    set_u64(p.seq, 3, 4);
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(check_paged(&p, 32, 32, &err), HURRAY_E_INDEX);
    assert_hurray_error(&err, HURRAY_E_INDEX, "seq_ptr[2]");
}

static void test_HR_PAGED_2_invariant_3(void **state) {
    (void)state;
    struct paged p = paged_ok();
    set_u64(p.seq, 2, 3);
    expect_paged(&p, HURRAY_E_INDEX, "seq_ptr[2]");
    set_u64(p.seq, 2, 5);
    expect_paged(&p, HURRAY_E_INDEX, "seq_ptr[2]");
}

static void test_HR_PAGED_2_invariant_4(void **state) {
    (void)state;
    struct paged p = paged_ok();
    set_u64(p.table, 3, 3);
    expect_paged(&p, HURRAY_E_INDEX, "block_table[3]");
    set_u64(p.table, 3, UINT64_MAX);
    expect_paged(&p, HURRAY_E_INDEX, "block_table[3]");
    p.l.num_pages = 0;
    set_u64(p.table, 3, 0);
    expect_paged(&p, HURRAY_E_INDEX, "block_table[0]");
}

static void test_HR_PAGED_2_short_buffers(void **state) {
    (void)state;
    struct paged p = paged_ok();
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(check_paged(&p, 23, 32, &err), HURRAY_E_BUFFER_SIZE);
    assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, "seq_ptr");
    test_error_poison(&err);
    assert_status(check_paged(&p, 24, 31, &err), HURRAY_E_BUFFER_SIZE);
    assert_hurray_error(&err, HURRAY_E_BUFFER_SIZE, "block_table");
    assert_status(check_paged(&p, 0, 0, NULL), HURRAY_E_BUFFER_SIZE);
    p.l.num_seqs = UINT64_MAX;
    assert_status(check_paged(&p, 64, 64, NULL), HURRAY_E_OVERFLOW);
    p.l.num_seqs = UINT64_MAX / 8; /* 8·(num_seqs+1) = 2^64 */
    assert_status(check_paged(&p, 64, 64, NULL), HURRAY_E_OVERFLOW);
    p.l.num_seqs = UINT64_MAX / 16;
    assert_status(check_paged(&p, 64, 64, NULL), HURRAY_E_BUFFER_SIZE);
    struct hurray_layout other = make(HURRAY_LAYOUT_ROW_MAJOR);
    assert_status(hurray_block_paged_validate_index_buffers(&other, p.seq, 24, p.table, 32,
                                                            NULL),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_block_paged_validate_index_buffers(&p.l, NULL, 24, p.table, 32, NULL),
                  HURRAY_E_ARGUMENT);
}

/* HR-PAGED-3: quantization compatibility. */
static void test_HR_PAGED_3_quantization(void **state) {
    (void)state;
    struct hurray_layout l = make(HURRAY_LAYOUT_BLOCK_PAGED);
    struct hurray_quant q;
    memset(&q, 0, sizeof q);
    q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
    assert_status(hurray_block_paged_check_quantization(&l, 3, &q, NULL), HURRAY_OK);
    assert_status(hurray_block_paged_check_quantization(&l, 3, NULL, NULL), HURRAY_OK);
    q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
    q.axis = 2;
    assert_status(hurray_block_paged_check_quantization(&l, 3, &q, NULL), HURRAY_OK);
    struct hurray_error err;
    for (uint8_t axis = 0; axis < 2; axis++) {
        q.axis = axis;
        test_error_poison(&err);
        assert_status(hurray_block_paged_check_quantization(&l, 3, &q, &err),
                      HURRAY_E_COMBINATION);
        assert_hurray_error(&err, HURRAY_E_COMBINATION, "quantization.axis");
    }
    q.axis = 3;
    assert_status(hurray_block_paged_check_quantization(&l, 3, &q, NULL), HURRAY_E_RANGE);
    const uint8_t blocked[] = {HURRAY_QUANT_BLOCK_AFFINE, HURRAY_QUANT_NF4, HURRAY_QUANT_MX,
                               HURRAY_QUANT_NVFP4};
    for (size_t i = 0; i < sizeof blocked; i++) {
        q.scheme = blocked[i];
        q.axis = 2;
        test_error_poison(&err);
        assert_status(hurray_block_paged_check_quantization(&l, 3, &q, &err),
                      HURRAY_E_COMBINATION);
        assert_hurray_error(&err, HURRAY_E_COMBINATION, "quantization.scheme");
    }
    q.scheme = 0x00;
    assert_status(hurray_block_paged_check_quantization(&l, 3, &q, NULL), HURRAY_E_INVALID_TAG);
    q.scheme = 0x09;
    assert_status(hurray_block_paged_check_quantization(&l, 3, &q, NULL), HURRAY_E_RESERVED_TAG);
    struct hurray_layout other = make(HURRAY_LAYOUT_ROW_MAJOR);
    assert_status(hurray_block_paged_check_quantization(&other, 3, &q, NULL), HURRAY_E_ARGUMENT);
}

/* ---- robustness: random parameter blocks ------------------------------------------ */

/* Conventions § Canonical form on random input: whatever reads OK writes back
 * byte-identically; nothing reads outside the cursor (ASan/valgrind runs); and
 * tier 3 and tier 2 run on whatever was read without crashing. */
static void test_HR_DESC_5_random_params_canonical(void **state) {
    (void)state;
    static uint8_t buf[1600];
    static uint8_t out[1600];
    int ok = 0;
    for (int iter = 0; iter < 20000; iter++) {
        uint8_t tag = (uint8_t)(iter % 3 ? spec_layouts[rng() % SPEC_LAYOUT_COUNT].tag : rng());
        uint8_t rank = (uint8_t)(rng() % 66);
        size_t n = (size_t)(rng() % 3 ? spec_params(tag, rank) : rng() % 1600);
        if (n > sizeof buf) n = sizeof buf;
        for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)(rng() % 4 ? rng() % 3 : rng());
        uint8_t *copy = test_malloc(n ? n : 1); /* exact-size copy: ASan sees overreads */
        memcpy(copy, buf, n);
        struct hurray_layout l;
        struct hurray_error err;
        int st = read_params(copy, n, tag, rank, &l, &err);
        if (st == HURRAY_OK) {
            ok++;
            size_t m = write_params(&l, rank, out, sizeof out);
            assert_bytes_equal(out, m, copy, n);
            uint64_t shape[64];
            for (unsigned k = 0; k < rank && k < 64; k++)
                shape[k] = rng() % 5 ? rng() % 9 : (rng() % 2 ? DYN : rng());
            if (validate(&l, rank, shape, NULL) == HURRAY_OK && spec_is_named(tag)) {
                uint64_t sizes[160];
                uint8_t known[160];
                (void)sizes_of(&l, (uint8_t)(rng() % 0x40), rank, shape, rng() % 64, sizes,
                               known, NULL);
            }
        } else {
            assert_true(err.message[0] != '\0');
        }
        test_free(copy);
    }
    assert_true(ok > 1000);
}

/* ---- equality ---------------------------------------------------------------------- */

static void test_HR_DESC_7_layout_equal(void **state) {
    (void)state;
    struct hurray_layout a = make(HURRAY_LAYOUT_STRIDED), b = make(HURRAY_LAYOUT_STRIDED);
    W_I64(a.strides)[0] = W_I64(b.strides)[0] = 5;
    W_I64(a.strides)[3] = 9; /* beyond rank 2: ignored */
    assert_true(hurray_layout_equal(&a, &b, 2));
    assert_false(hurray_layout_equal(&a, &b, 4));
    W_I64(b.strides)[1] = 1;
    assert_false(hurray_layout_equal(&a, &b, 2));
    assert_true(hurray_layout_equal(&a, &a, 2));
    assert_false(hurray_layout_equal(&a, NULL, 2));
    assert_true(hurray_layout_equal(NULL, NULL, 2));
    /* Fields of other layouts do not matter. */
    struct hurray_layout r = make(HURRAY_LAYOUT_ROW_MAJOR), s = make(HURRAY_LAYOUT_ROW_MAJOR);
    s.nnz = 4;
    W_I64(s.strides)[0] = 3;
    assert_true(hurray_layout_equal(&r, &s, 2));
    s.tag = HURRAY_LAYOUT_COL_MAJOR;
    assert_false(hurray_layout_equal(&r, &s, 2));

    struct hurray_layout t = make(HURRAY_LAYOUT_TILED), u = make(HURRAY_LAYOUT_TILED);
    W_I64(u.inner_strides)[1] = 1;
    assert_false(hurray_layout_equal(&t, &u, 2));
    W_I64(u.inner_strides)[1] = 0;
    W_U64(u.tile_shape)[0] = 2;
    assert_false(hurray_layout_equal(&t, &u, 2));

    struct hurray_layout c = csf3(1, 2, 3), d = csf3(1, 2, 3);
    assert_true(hurray_layout_equal(&c, &d, 3));
    W_U64(d.fiber_counts)[1] = 3;
    assert_false(hurray_layout_equal(&c, &d, 3));
    d = csf3(1, 2, 3);
    W_U8(d.mode_order)[2] = 7;
    assert_false(hurray_layout_equal(&c, &d, 3));
    assert_true(hurray_layout_equal(&c, &d, 2));

    struct hurray_layout p = make(HURRAY_LAYOUT_BLOCK_PAGED), q = make(HURRAY_LAYOUT_BLOCK_PAGED);
    q.num_blocks = 1;
    assert_false(hurray_layout_equal(&p, &q, 2));
    struct hurray_layout m = make(HURRAY_LAYOUT_COMPOSITE), n = make(HURRAY_LAYOUT_COMPOSITE);
    n.member_count = 1;
    assert_false(hurray_layout_equal(&m, &n, 0));
    struct hurray_layout x = make(HURRAY_LAYOUT_COO), y = make(HURRAY_LAYOUT_COO);
    y.nnz = 1;
    assert_false(hurray_layout_equal(&x, &y, 1));
    /* rank above 64 is clamped, never read out of bounds. */
    assert_true(hurray_layout_equal(&c, &c, 255));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_LAYOUT_1_tag_table),
        cmocka_unit_test(test_HR_LAYOUT_2_tag_kinds_all_bytes),
        cmocka_unit_test(test_HR_LAYOUT_3_reserved_tag_carried),
        cmocka_unit_test(test_HR_LAYOUT_4_extension_name),
        cmocka_unit_test(test_HR_LAYOUT_10_no_params),
        cmocka_unit_test(test_HR_LAYOUT_11_strided_bytes),
        cmocka_unit_test(test_HR_LAYOUT_12_tiled_bytes),
        cmocka_unit_test(test_HR_LAYOUT_20_nnz_bytes),
        cmocka_unit_test(test_HR_LAYOUT_23_csf_bytes),
        cmocka_unit_test(test_HR_PAGED_1_param_bytes),
        cmocka_unit_test(test_HR_LAYOUT_30_composite_bytes),
        cmocka_unit_test(test_HR_LAYOUT_30_composite_reserved),
        cmocka_unit_test(test_HR_LAYOUT_30_rule_and_combine),
        cmocka_unit_test(test_HR_LAYOUT_30_overlay_without_combine_named),
        cmocka_unit_test(test_HR_LAYOUT_30_member_count),
        cmocka_unit_test(test_HR_LAYOUT_30_names),
        cmocka_unit_test(test_HR_LAYOUT_40_private_params),
        cmocka_unit_test(test_HR_LAYOUT_40_private_equality),
        cmocka_unit_test(test_HR_DESC_5_param_length_exact),
        cmocka_unit_test(test_HR_DESC_5_params_stay_in_cursor),
        cmocka_unit_test(test_layout_api_arguments),
        cmocka_unit_test(test_HR_SHAPE_1_extent_range),
        cmocka_unit_test(test_HR_SHAPE_3_element_count_overflow),
        cmocka_unit_test(test_HR_LAYOUT_10_any_rank),
        cmocka_unit_test(test_HR_LAYOUT_12_tiled_constraints),
        cmocka_unit_test(test_HR_LAYOUT_13_morton),
        cmocka_unit_test(test_HR_LAYOUT_14_hilbert),
        cmocka_unit_test(test_HR_LAYOUT_20_coo_constraints),
        cmocka_unit_test(test_HR_LAYOUT_21_csr_csc_constraints),
        cmocka_unit_test(test_HR_LAYOUT_23_csf_mode_order),
        cmocka_unit_test(test_HR_LAYOUT_23_csf_fiber_counts),
        cmocka_unit_test(test_HR_PAGED_1_constraints),
        cmocka_unit_test(test_HR_LAYOUT_30_composite_any_rank),
        cmocka_unit_test(test_HR_LAYOUT_11_strided_dtype),
        cmocka_unit_test(test_HR_DESC_3_byte_offset),
        cmocka_unit_test(test_HR_LAYOUT_10_dense_sizes),
        cmocka_unit_test(test_HR_LAYOUT_11_span_matches_brute_force),
        cmocka_unit_test(test_HR_LAYOUT_11_strided_sizes),
        cmocka_unit_test(test_HR_LAYOUT_11_strided_overflow),
        cmocka_unit_test(test_HR_LAYOUT_12_tiled_sizes),
        cmocka_unit_test(test_HR_LAYOUT_20_coo_sizes),
        cmocka_unit_test(test_HR_LAYOUT_21_csr_csc_sizes),
        cmocka_unit_test(test_HR_LAYOUT_23_csf_sizes),
        cmocka_unit_test(test_HR_PAGED_2_sizes),
        cmocka_unit_test(test_HR_LAYOUT_41_no_sizes_for_unknown),
        cmocka_unit_test(test_HR_PAGED_2_valid_and_aliasing),
        cmocka_unit_test(test_HR_PAGED_2_invariant_1),
        cmocka_unit_test(test_HR_PAGED_2_invariant_2),
        cmocka_unit_test(test_HR_PAGED_2_invariant_3),
        cmocka_unit_test(test_HR_PAGED_2_invariant_4),
        cmocka_unit_test(test_HR_PAGED_2_short_buffers),
        cmocka_unit_test(test_HR_PAGED_3_quantization),
        cmocka_unit_test(test_HR_DESC_5_random_params_canonical),
        cmocka_unit_test(test_HR_DESC_7_layout_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
