/* Quantization descriptors (quant.c). docs/spec/quantization.md */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "test_support.h"

#define DYN HURRAY_DYNAMIC_DIM
#define NO HURRAY_NO_BUFFER

/* ---- fixtures: one valid descriptor per scheme ------------------------------ */

static struct hurray_quant per_tensor(void) {
    struct hurray_quant q;
    memset(&q, 0, sizeof q);
    q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
    q.scale = 0.5;
    q.zero_point = -3;
    return q;
}

static struct hurray_quant per_channel(int with_zp) {
    struct hurray_quant q;
    memset(&q, 0, sizeof q);
    q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
    q.axis = 1;
    q.scale_buffer = 1;
    q.zero_point_buffer = with_zp ? 2 : NO;
    q.scale_dtype = HURRAY_DTYPE_FLOAT32;
    q.zero_point_dtype = with_zp ? HURRAY_DTYPE_INT8 : 0;
    return q;
}

static struct hurray_quant block_affine(int with_zp) {
    struct hurray_quant q = per_channel(with_zp);
    q.scheme = HURRAY_QUANT_BLOCK_AFFINE;
    q.scale_dtype = HURRAY_DTYPE_FLOAT16;
    q.block_size = 128;
    return q;
}

static struct hurray_quant nf4(int dq) {
    struct hurray_quant q;
    memset(&q, 0, sizeof q);
    q.scheme = HURRAY_QUANT_NF4;
    q.flags = dq ? HURRAY_NF4_DOUBLE_QUANT : 0;
    q.absmax_buffer = 1;
    q.nested_absmax_buffer = dq ? 2 : NO;
    q.quant_map_buffer = dq ? 3 : NO;
    q.block_size = 64;
    q.nested_block_size = dq ? 256 : 0;
    q.nested_offset = dq ? 0.25f : 0.0f;
    return q;
}

static struct hurray_quant mx(void) {
    struct hurray_quant q;
    memset(&q, 0, sizeof q);
    q.scheme = HURRAY_QUANT_MX;
    q.axis = 1;
    q.scale_buffer = 1;
    q.block_size = 32;
    return q;
}

static struct hurray_quant nvfp4(void) {
    struct hurray_quant q = mx();
    q.scheme = HURRAY_QUANT_NVFP4;
    q.block_size = 16;
    q.tensor_scale = 3.0f;
    return q;
}

#define FIXTURE_COUNT 9
static struct hurray_quant fixture(int i) {
    switch (i) {
    case 0: return per_tensor();
    case 1: return per_channel(0);
    case 2: return per_channel(1);
    case 3: return block_affine(0);
    case 4: return block_affine(1);
    case 5: return nf4(0);
    case 6: return nf4(1);
    case 7: return mx();
    default: return nvfp4();
    }
}

/* Independent transcription of § Scheme tags. */
static unsigned spec_payload(unsigned scheme) {
    static const unsigned len[] = {0, 24, 16, 24, 24, 16, 16};
    return scheme >= 1 && scheme <= 6 ? len[scheme] : 0;
}

static int encode(const struct hurray_quant *q, uint8_t *dst, size_t cap, size_t *n,
                  struct hurray_error *err) {
    return hurray_quant_encode(q, dst, cap, n, err);
}

static void expect_qcheck(const struct hurray_quant *q, int code, const char *field) {
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_quant_check(q, &err), code);
    if (code != HURRAY_OK) assert_hurray_error(&err, code, field);
}

/* Encodes q without validation (the raw writer), then decodes. */
static int decode_raw(const struct hurray_quant *q, struct hurray_quant *out,
                      struct hurray_error *err) {
    uint8_t buf[32];
    struct hri_writer w;
    hri_writer_init(&w, buf, sizeof buf);
    hri_quant_write(&w, q);
    return hurray_quant_decode(buf, w.pos, out, err);
}

static void expect_decode(const struct hurray_quant *q, int code, const char *field) {
    struct hurray_quant out;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(decode_raw(q, &out, &err), code);
    if (code != HURRAY_OK) assert_hurray_error(&err, code, field);
}

/* Both the context-free check and a decode of the raw bytes give `code`. */
static void expect_both(const struct hurray_quant *q, int code, const char *field) {
    expect_qcheck(q, code, field);
    expect_decode(q, code, field);
}

/* ---- HR-QUANT-2: scheme tags ------------------------------------------------- */

static void test_HR_QUANT_2_scheme_tags(void **state) {
    (void)state;
    static const char *const names[] = {NULL, "per_tensor_affine", "per_channel_affine",
                                        "block_affine", "nf4", "mx", "nvfp4"};
    for (unsigned t = 0; t < 256; t++) {
        int kind = hurray_quant_scheme_tag_kind((uint8_t)t);
        uint32_t len = 99;
        struct hurray_error err;
        test_error_poison(&err);
        int st = hurray_quant_payload_length((uint8_t)t, &len, &err);
        if (t >= 1 && t <= 6) {
            assert_int_equal(kind, HURRAY_TAG_NAMED);
            assert_string_equal(hurray_quant_scheme_name((uint8_t)t), names[t]);
            assert_status(st, HURRAY_OK);
            assert_int_equal(len, spec_payload(t));
        } else if (t == 0 || t == 0xFF) {
            assert_int_equal(kind, HURRAY_TAG_INVALID);
            assert_null(hurray_quant_scheme_name((uint8_t)t));
            assert_status(st, HURRAY_E_INVALID_TAG);
            assert_hurray_error(&err, HURRAY_E_INVALID_TAG, "quantization.scheme");
        } else { /* no private range: 0xF0-0xFE are reserved too */
            assert_int_equal(kind, HURRAY_TAG_RESERVED);
            assert_null(hurray_quant_scheme_name((uint8_t)t));
            assert_status(st, HURRAY_E_RESERVED_TAG);
            assert_hurray_error(&err, HURRAY_E_RESERVED_TAG, "quantization.scheme");
        }
    }
}

/* HR-QUANT-1: decode reads the scheme byte first, for every byte and length. */
static void test_HR_QUANT_1_decode_dispatch(void **state) {
    (void)state;
    uint8_t buf[40] = {0};
    for (unsigned t = 0; t < 256; t++) {
        buf[0] = (uint8_t)t;
        for (size_t n = 1; n <= sizeof buf; n++) {
            struct hurray_quant out;
            int st = hurray_quant_decode(buf, n, &out, NULL);
            if (t == 0 || t == 0xFF)
                assert_status(st, HURRAY_E_INVALID_TAG);
            else if (t > 6)
                assert_status(st, HURRAY_E_RESERVED_TAG);
            else if (n != spec_payload(t))
                assert_status(st, HURRAY_E_LENGTH);
            else
                assert_true(st != HURRAY_E_LENGTH); /* zeros may fail value rules */
        }
    }
    struct hurray_quant out;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_quant_decode(buf, 0, &out, &err), HURRAY_E_LENGTH);
    assert_hurray_error(&err, HURRAY_E_LENGTH, "quantization.scheme");
    assert_status(hurray_quant_decode(NULL, 0, &out, NULL), HURRAY_E_LENGTH);
    assert_status(hurray_quant_decode(NULL, 4, &out, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_quant_decode(buf, 4, NULL, NULL), HURRAY_E_ARGUMENT);
}

/* ---- payload bytes ---------------------------------------------------------- */

static void expect_bytes(const struct hurray_quant *q, const uint8_t *want, size_t n) {
    uint8_t out[32];
    size_t written = 0;
    assert_status(encode(q, out, sizeof out, &written, NULL), HURRAY_OK);
    assert_bytes_equal(out, written, want, n);
}

static void test_HR_QUANT_10_per_tensor_bytes(void **state) {
    (void)state;
    struct hurray_quant q = per_tensor();
    const uint8_t want[24] = {0x01, 0, 0, 0, 0, 0, 0, 0,
                              0, 0, 0, 0, 0, 0, 0xE0, 0x3F, /* 0.5 */
                              0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}; /* -3 */
    expect_bytes(&q, want, sizeof want);
}

static void test_HR_QUANT_11_per_channel_bytes(void **state) {
    (void)state;
    struct hurray_quant q = per_channel(1);
    const uint8_t want[16] = {0x02, 1, 1, 2, 0x0C, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_bytes(&q, want, sizeof want);
    q = per_channel(0);
    const uint8_t sym[16] = {0x02, 1, 1, 0xFF, 0x0C, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_bytes(&q, sym, sizeof sym);
}

static void test_HR_QUANT_12_block_affine_bytes(void **state) {
    (void)state;
    struct hurray_quant q = block_affine(1);
    q.block_size = 0x01020304;
    const uint8_t want[24] = {0x03, 1, 1, 2, 0x0A, 0x02, 0, 0, 4, 3, 2, 1,
                              0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_bytes(&q, want, sizeof want);
}

static void test_HR_QUANT_13_nf4_bytes(void **state) {
    (void)state;
    struct hurray_quant q = nf4(1);
    const uint8_t want[24] = {0x04, 0x01, 1, 2, 3, 0, 0, 0, 64, 0, 0, 0,
                              0, 1, 0, 0, 0, 0, 0x80, 0x3E, 0, 0, 0, 0}; /* 0.25f */
    expect_bytes(&q, want, sizeof want);
    q = nf4(0);
    const uint8_t plain[24] = {0x04, 0, 1, 0xFF, 0xFF, 0, 0, 0, 64, 0, 0, 0,
                               0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_bytes(&q, plain, sizeof plain);
}

static void test_HR_QUANT_14_mx_bytes(void **state) {
    (void)state;
    struct hurray_quant q = mx();
    const uint8_t want[16] = {0x05, 1, 1, 0, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_bytes(&q, want, sizeof want);
}

static void test_HR_QUANT_15_nvfp4_bytes(void **state) {
    (void)state;
    struct hurray_quant q = nvfp4();
    const uint8_t want[16] = {0x06, 1, 1, 0, 16, 0, 0, 0, 0, 0, 0x40, 0x40, 0, 0, 0, 0};
    expect_bytes(&q, want, sizeof want);
}

/* encode → decode → encode is byte-identical, and decode(encode(q)) == q. */
static void test_HR_QUANT_1_round_trip(void **state) {
    (void)state;
    for (int i = 0; i < FIXTURE_COUNT; i++) {
        struct hurray_quant q = fixture(i);
        uint8_t a[32], b[32];
        size_t na = 0, nb = 0;
        assert_status(encode(&q, a, sizeof a, &na, NULL), HURRAY_OK);
        assert_int_equal(na, spec_payload(q.scheme));
        struct hurray_quant back;
        assert_status(hurray_quant_decode(a, na, &back, NULL), HURRAY_OK);
        assert_true(hurray_quant_equal(&q, &back));
        assert_status(encode(&back, b, sizeof b, &nb, NULL), HURRAY_OK);
        assert_bytes_equal(b, nb, a, na);
        /* In a descriptor the payload sits in a larger buffer: read stays inside. */
        uint8_t big[64];
        memset(big, 0xEE, sizeof big);
        memcpy(big, a, na);
        struct hri_cursor c;
        hri_cursor_init(&c, big, na, HURRAY_E_LENGTH);
        assert_status(hri_quant_read(&c, &back, NULL), HURRAY_OK);
        assert_int_equal(c.pos, na);
        /* Exactly the scheme's length: one byte more or less is LENGTH. */
        struct hurray_error err;
        test_error_poison(&err);
        assert_status(hurray_quant_decode(big, na + 1, &back, &err), HURRAY_E_LENGTH);
        assert_hurray_error(&err, HURRAY_E_LENGTH, "quantization.length");
        assert_status(hurray_quant_decode(a, na - 1, &back, NULL), HURRAY_E_LENGTH);
        int count = -1;
        assert_status(hurray_quant_buffer_count(&q, &count, NULL), HURRAY_OK);
        static const int want_q[FIXTURE_COUNT] = {0, 1, 2, 1, 2, 1, 3, 1, 1};
        assert_int_equal(count, want_q[i]);
    }
}

/* Every reserved byte of every scheme → RESERVED_NONZERO at its offset. */
static void test_HR_QUANT_3_reserved_bytes(void **state) {
    (void)state;
    static const struct {
        int fixture;
        uint8_t offsets[24];
        size_t n;
    } cases[] = {
        {0, {1, 2, 3, 4, 5, 6, 7}, 7},
        {2, {6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 10},
        {4, {6, 7, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}, 14},
        {6, {5, 6, 7, 20, 21, 22, 23}, 7},
        {7, {3, 8, 9, 10, 11, 12, 13, 14, 15}, 9},
        {8, {3, 12, 13, 14, 15}, 5},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct hurray_quant q = fixture(cases[c].fixture);
        uint8_t buf[32];
        size_t n = 0;
        assert_status(encode(&q, buf, sizeof buf, &n, NULL), HURRAY_OK);
        for (size_t i = 0; i < cases[c].n; i++) {
            uint8_t b[32];
            memcpy(b, buf, n);
            b[cases[c].offsets[i]] = 0x01;
            struct hurray_quant out;
            struct hurray_error err;
            test_error_poison(&err);
            assert_status(hurray_quant_decode(b, n, &out, &err), HURRAY_E_RESERVED_NONZERO);
            assert_hurray_error(&err, HURRAY_E_RESERVED_NONZERO, "quantization.reserved");
            assert_int_equal(err.has_offset, 1);
            assert_true(err.offset == cases[c].offsets[i]);
        }
    }
}

/* ---- context-free rules ------------------------------------------------------ */

static void test_HR_QUANT_3_scale_finite_positive(void **state) {
    (void)state;
    const double bad[] = {0.0, -0.0, -1.0, NAN, -NAN, INFINITY, -INFINITY, -1e-300};
    const double good[] = {1e-320 /* subnormal */, 1e300, 1.0, DBL_MIN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct hurray_quant q = per_tensor();
        q.scale = bad[i];
        expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.scale");
        struct hurray_quant v = nvfp4();
        v.tensor_scale = (float)bad[i];
        expect_both(&v, HURRAY_E_CONSTRAINT, "quantization.tensor_scale");
    }
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        struct hurray_quant q = per_tensor();
        q.scale = good[i];
        expect_both(&q, HURRAY_OK, NULL);
    }
    struct hurray_quant v = nvfp4();
    v.tensor_scale = 1e-45f; /* subnormal float */
    expect_both(&v, HURRAY_OK, NULL);
}

static void test_HR_QUANT_12_block_size(void **state) {
    (void)state;
    struct hurray_quant q = block_affine(0);
    q.block_size = 0;
    expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.block_size");
    q.block_size = 1;
    expect_both(&q, HURRAY_OK, NULL);
    q.block_size = UINT32_MAX;
    expect_both(&q, HURRAY_OK, NULL);
}

static void test_HR_QUANT_14_mx_block_size(void **state) {
    (void)state;
    const uint32_t sizes[] = {0, 1, 16, 31, 33, 64, UINT32_MAX};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct hurray_quant q = mx();
        q.block_size = sizes[i];
        expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.block_size");
        struct hurray_quant v = nvfp4();
        v.block_size = sizes[i] == 16 ? 32 : sizes[i];
        expect_both(&v, HURRAY_E_CONSTRAINT, "quantization.block_size");
    }
}

static void test_HR_QUANT_13_nf4_block_sizes(void **state) {
    (void)state;
    for (uint64_t v = 0; v <= 9000; v++) {
        int ok = v >= 32 && v <= 4096 && (v & (v - 1)) == 0;
        if (!ok && v % 16 != 0 && v > 40 && v < 8000) continue; /* keep it quick */
        struct hurray_quant q = nf4(0);
        q.block_size = (uint32_t)v;
        expect_both(&q, ok ? HURRAY_OK : HURRAY_E_CONSTRAINT, "quantization.block_size");
        struct hurray_quant d = nf4(1);
        d.nested_block_size = (uint32_t)v;
        expect_both(&d, ok ? HURRAY_OK : HURRAY_E_CONSTRAINT, "quantization.nested_block_size");
    }
}

static void test_HR_QUANT_13_nf4_flags_and_nested(void **state) {
    (void)state;
    for (unsigned bit = 1; bit < 8; bit++) {
        struct hurray_quant q = nf4(bit & 1);
        q.flags |= (uint8_t)(1u << bit);
        expect_both(&q, HURRAY_E_RESERVED_NONZERO, "quantization.flags");
    }
    /* Without double quant the nested fields are zero bytes. */
    struct hurray_quant q = nf4(0);
    q.nested_block_size = 64;
    expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.nested_block_size");
    q = nf4(0);
    q.nested_offset = -0.0f;
    expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.nested_offset");
    /* Absent-buffer convention: 0xFF exactly when absent. */
    q = nf4(0);
    q.nested_absmax_buffer = 2;
    expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.nested_absmax_buffer_index");
    q = nf4(0);
    q.quant_map_buffer = 2;
    expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.quant_map_buffer_index");
    q = nf4(1);
    q.nested_absmax_buffer = NO;
    expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.nested_absmax_buffer_index");
    q = nf4(1);
    q.quant_map_buffer = NO;
    expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.quant_map_buffer_index");
    q = nf4(1);
    q.absmax_buffer = NO;
    expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.absmax_buffer_index");
    /* nested_offset finite with double quant; any finite value (0, negative) is fine. */
    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < 3; i++) {
        q = nf4(1);
        q.nested_offset = bad[i];
        expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.nested_offset");
    }
    q = nf4(1);
    q.nested_offset = -2.5f;
    expect_both(&q, HURRAY_OK, NULL);
    q.nested_offset = 0.0f;
    expect_both(&q, HURRAY_OK, NULL);
}

static void test_HR_QUANT_3_required_buffers(void **state) {
    (void)state;
    const int fixtures[] = {1, 3, 7, 8};
    for (size_t i = 0; i < 4; i++) {
        struct hurray_quant q = fixture(fixtures[i]);
        q.scale_buffer = NO;
        expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.scale_buffer_index");
    }
}

static int spec_scale_dtype_ok(unsigned t) { return t == 0x0A || t == 0x0B || t == 0x0C || t == 0x0D; }
static int spec_zp_dtype_ok(unsigned t) {
    return (t >= 0x02 && t <= 0x09) || t == 0x0A || t == 0x0B || t == 0x0C;
}

/* Dtype bytes: element-type tag checks first, then the allowed set (COMBINATION). */
static void test_HR_QUANT_11_dtype_bytes(void **state) {
    (void)state;
    for (int f = 1; f <= 4; f++) {
        for (unsigned t = 0; t < 256; t++) {
            int kind = hurray_dtype_tag_kind((uint8_t)t);
            struct hurray_quant q = fixture(f);
            q.scale_dtype = (uint8_t)t;
            int want = kind == HURRAY_TAG_INVALID    ? HURRAY_E_INVALID_TAG
                       : kind == HURRAY_TAG_RESERVED ? HURRAY_E_RESERVED_TAG
                       : spec_scale_dtype_ok(t)      ? HURRAY_OK
                                                     : HURRAY_E_COMBINATION;
            expect_both(&q, want, "quantization.scale_dtype");
            if (f % 2 == 0) { /* fixtures 2 and 4 carry a zero point */
                q = fixture(f);
                q.zero_point_dtype = (uint8_t)t;
                want = kind == HURRAY_TAG_INVALID    ? HURRAY_E_INVALID_TAG
                       : kind == HURRAY_TAG_RESERVED ? HURRAY_E_RESERVED_TAG
                       : spec_zp_dtype_ok(t)         ? HURRAY_OK
                                                     : HURRAY_E_COMBINATION;
                expect_both(&q, want, "quantization.zero_point_dtype");
            } else if (t != 0) { /* absent zero point: dtype byte 0x00 */
                q = fixture(f);
                q.zero_point_dtype = (uint8_t)t;
                expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.zero_point_dtype");
            }
        }
    }
}

/* Tags and reserved fields are reported before value rules (offset order). */
static void test_HR_DESC_5_quant_structure_first(void **state) {
    (void)state;
    struct hurray_quant q = per_channel(1);
    q.scale_buffer = NO;                     /* CONSTRAINT at offset 2 */
    q.zero_point_dtype = 0x10;               /* RESERVED_TAG at offset 5 */
    expect_both(&q, HURRAY_E_RESERVED_TAG, "quantization.zero_point_dtype");
    q = nf4(0);
    q.flags = 0x80;                          /* RESERVED_NONZERO at offset 1 */
    q.block_size = 3;                        /* CONSTRAINT at offset 8 */
    q.nested_block_size = 7;                 /* CONSTRAINT at offset 12 */
    expect_both(&q, HURRAY_E_RESERVED_NONZERO, "quantization.flags");
    q.flags = 0;
    expect_both(&q, HURRAY_E_CONSTRAINT, "quantization.block_size");
}

static void test_quant_api_arguments(void **state) {
    (void)state;
    struct hurray_quant q = per_tensor();
    uint8_t out[32];
    size_t n = 7;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(encode(&q, out, 23, &n, &err), HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, "cap");
    assert_int_equal(n, 0);
    assert_status(encode(&q, NULL, 32, &n, NULL), HURRAY_E_ARGUMENT);
    assert_status(encode(NULL, out, 32, &n, NULL), HURRAY_E_ARGUMENT);
    assert_status(encode(&q, out, 24, NULL, NULL), HURRAY_OK);
    q.scale = 0;
    assert_status(encode(&q, out, 32, &n, NULL), HURRAY_E_CONSTRAINT);
    assert_int_equal(n, 0);
    q.scheme = 0x42;
    assert_status(encode(&q, out, 32, &n, NULL), HURRAY_E_RESERVED_TAG);
    assert_status(hurray_quant_check(NULL, NULL), HURRAY_E_ARGUMENT);
    int count;
    assert_status(hurray_quant_buffer_count(NULL, &count, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_quant_buffer_count(&q, &count, NULL), HURRAY_E_RESERVED_TAG);
    assert_status(hurray_quant_payload_length(1, NULL, NULL), HURRAY_E_ARGUMENT);
    /* The raw writer writes nothing for an unnamed scheme. */
    struct hri_writer w;
    hri_writer_init(&w, out, sizeof out);
    hri_quant_write(&w, &q);
    assert_int_equal(w.pos, 0);
}

/* ---- context rules (hurray_quant_validate) --------------------------------------- */

static struct hurray_layout layout_of(uint8_t tag) {
    struct hurray_layout l;
    memset(&l, 0, sizeof l);
    l.tag = tag;
    return l;
}

static int validate(const struct hurray_quant *q, uint8_t dtype, uint8_t layout_tag,
                    uint8_t rank, const uint64_t *shape, int L, unsigned count,
                    struct hurray_error *err) {
    struct hurray_layout l = layout_of(layout_tag);
    return hurray_quant_validate(q, dtype, &l, rank, shape, L, count, err);
}

static void expect_qvalidate(const struct hurray_quant *q, uint8_t dtype, uint8_t layout_tag,
                            uint8_t rank, const uint64_t *shape, int L, unsigned count,
                            int code, const char *field) {
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(validate(q, dtype, layout_tag, rank, shape, L, count, &err), code);
    if (code != HURRAY_OK) assert_hurray_error(&err, code, field);
}

/* A dtype the fixture's scheme accepts, and the buffer count it needs with L = 1. */
static uint8_t good_dtype(const struct hurray_quant *q) {
    switch (q->scheme) {
    case HURRAY_QUANT_NF4: return HURRAY_DTYPE_UINT4;
    case HURRAY_QUANT_MX: return HURRAY_DTYPE_FLOAT8_E4M3FN;
    case HURRAY_QUANT_NVFP4: return HURRAY_DTYPE_FLOAT4_E2M1FN;
    default: return HURRAY_DTYPE_INT8;
    }
}

static int spec_dtype_ok(uint8_t scheme, unsigned t) {
    int integer = t >= 0x02 && t <= 0x09;
    int sub = t >= 0x20 && t <= 0x25;
    int f8 = t >= 0x30 && t <= 0x33;
    switch (scheme) {
    case HURRAY_QUANT_NF4: return t == 0x25;
    case HURRAY_QUANT_MX: return t == 0x30 || t == 0x32 || t == 0x35 || t == 0x36 || t == 0x37 || t == 0x02;
    case HURRAY_QUANT_NVFP4: return t == 0x37;
    default: return integer || sub || f8;
    }
}

static void test_HR_QUANT_10_element_types(void **state) {
    (void)state;
    const uint64_t shape[2] = {4, 64};
    for (int f = 0; f < FIXTURE_COUNT; f++) {
        struct hurray_quant q = fixture(f);
        int Q = 0;
        assert_status(hurray_quant_buffer_count(&q, &Q, NULL), HURRAY_OK);
        for (unsigned t = 0; t < 256; t++) {
            struct hurray_error err;
            test_error_poison(&err);
            int st = validate(&q, (uint8_t)t, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1,
                              1u + (unsigned)Q, &err);
            if (spec_dtype_ok(q.scheme, t)) {
                if (q.scheme == HURRAY_QUANT_PER_TENSOR_AFFINE && st == HURRAY_E_RANGE)
                    continue; /* zero_point -3 outside an unsigned range */
                assert_status(st, HURRAY_OK);
            } else {
                assert_status(st, HURRAY_E_COMBINATION);
                assert_hurray_error(&err, HURRAY_E_COMBINATION, "dtype");
            }
        }
    }
}

static int spec_layout_ok(uint8_t scheme, unsigned tag) {
    int kind = hurray_layout_tag_kind((uint8_t)tag);
    if (kind == HURRAY_TAG_PRIVATE || kind == HURRAY_TAG_RESERVED) return 1;
    int dense = tag >= 0x01 && tag <= 0x06;
    switch (scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE: return tag != 0x30;
    case HURRAY_QUANT_NF4: return tag == 0x01;
    default: return dense; /* block_paged: per_channel with axis >= 2 only, below */
    }
}

static void test_HR_QUANT_20_layout_compatibility(void **state) {
    (void)state;
    const uint64_t shape[2] = {4, 64};
    for (int f = 0; f < FIXTURE_COUNT; f++) {
        struct hurray_quant q = fixture(f);
        int Q = 0;
        assert_status(hurray_quant_buffer_count(&q, &Q, NULL), HURRAY_OK);
        for (unsigned t = 0; t < 256; t++) {
            int kind = hurray_layout_tag_kind((uint8_t)t);
            struct hurray_quant r = q;
            if (q.scheme == HURRAY_QUANT_PER_TENSOR_AFFINE) r.zero_point = 0;
            int L = 1;
            if (kind == HURRAY_TAG_NAMED) {
                int count = 0;
                assert_status(hurray_layout_buffer_count((uint8_t)t, 2, &count, NULL), HURRAY_OK);
                L = count;
                uint8_t idx = (uint8_t)L;
                r.scale_buffer = r.absmax_buffer = idx;
                if (r.zero_point_buffer != NO) r.zero_point_buffer = (uint8_t)(idx + 1);
                if (r.nested_absmax_buffer != NO) r.nested_absmax_buffer = (uint8_t)(idx + 1);
                if (r.quant_map_buffer != NO) r.quant_map_buffer = (uint8_t)(idx + 2);
            } else if (kind == HURRAY_TAG_PRIVATE || kind == HURRAY_TAG_RESERVED) {
                L = -1;
            }
            struct hurray_error err;
            test_error_poison(&err);
            int st = validate(&r, good_dtype(&r), (uint8_t)t, 2, shape, L, (unsigned)(L < 0 ? 4 : L + Q), &err);
            if (kind == HURRAY_TAG_INVALID) {
                assert_status(st, HURRAY_E_INVALID_TAG);
            } else if (spec_layout_ok(r.scheme, t)) {
                assert_status(st, HURRAY_OK);
            } else {
                assert_status(st, HURRAY_E_COMBINATION);
            }
        }
    }
}

static void test_HR_PAGED_3_via_validate(void **state) {
    (void)state;
    const uint64_t shape[4] = {2, 64, 8, 16};
    struct hurray_quant q = per_channel(1);
    q.scale_buffer = 3;
    q.zero_point_buffer = 4;
    q.axis = 2;
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_BLOCK_PAGED, 4, shape, 3, 5, HURRAY_OK,
                    NULL);
    q.axis = 3;
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_BLOCK_PAGED, 4, shape, 3, 5, HURRAY_OK,
                    NULL);
    q.axis = 1;
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_BLOCK_PAGED, 4, shape, 3, 5,
                    HURRAY_E_COMBINATION, "quantization.axis");
    q.axis = 4;
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_BLOCK_PAGED, 4, shape, 3, 5,
                    HURRAY_E_RANGE, "quantization.axis");
    struct hurray_quant t = per_tensor();
    expect_qvalidate(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_BLOCK_PAGED, 4, shape, 3, 3, HURRAY_OK,
                    NULL);
    struct hurray_quant b = block_affine(0);
    b.scale_buffer = 3;
    b.axis = 3;
    expect_qvalidate(&b, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_BLOCK_PAGED, 4, shape, 3, 4,
                    HURRAY_E_COMBINATION, "quantization.scheme");
}

static void test_HR_QUANT_3_axis_range(void **state) {
    (void)state;
    const uint64_t shape[3] = {4, 64, 32};
    const int fixtures[] = {1, 3, 7, 8};
    for (size_t i = 0; i < 4; i++) {
        struct hurray_quant q = fixture(fixtures[i]);
        int Q = 0;
        assert_status(hurray_quant_buffer_count(&q, &Q, NULL), HURRAY_OK);
        for (unsigned axis = 0; axis < 256; axis += (axis < 8 ? 1 : 37)) {
            q.axis = (uint8_t)axis;
            expect_qvalidate(&q, good_dtype(&q), HURRAY_LAYOUT_ROW_MAJOR, 3, shape, 1,
                            1u + (unsigned)Q, axis < 3 ? HURRAY_OK : HURRAY_E_RANGE,
                            "quantization.axis");
        }
        q.axis = 0;
        expect_qvalidate(&q, good_dtype(&q), HURRAY_LAYOUT_ROW_MAJOR, 0, NULL, 1, 1u + (unsigned)Q,
                        HURRAY_E_RANGE, "quantization.axis");
    }
}

/* HR-QUANT-10: zero_point in the integer type's range, 0 for float8. */
static void test_HR_QUANT_10_zero_point_range(void **state) {
    (void)state;
    static const struct {
        uint8_t dtype;
        int64_t lo, hi;
    } ranges[] = {
        {HURRAY_DTYPE_INT8, -128, 127},          {HURRAY_DTYPE_UINT8, 0, 255},
        {HURRAY_DTYPE_INT16, -32768, 32767},     {HURRAY_DTYPE_UINT16, 0, 65535},
        {HURRAY_DTYPE_INT32, INT32_MIN, INT32_MAX}, {HURRAY_DTYPE_UINT32, 0, UINT32_MAX},
        {HURRAY_DTYPE_INT64, INT64_MIN, INT64_MAX}, {HURRAY_DTYPE_UINT64, 0, INT64_MAX},
        {HURRAY_DTYPE_INT1, -1, 0},              {HURRAY_DTYPE_UINT1, 0, 1},
        {HURRAY_DTYPE_INT2, -2, 1},              {HURRAY_DTYPE_UINT2, 0, 3},
        {HURRAY_DTYPE_INT4, -8, 7},              {HURRAY_DTYPE_UINT4, 0, 15},
        {HURRAY_DTYPE_FLOAT8_E4M3FN, 0, 0},      {HURRAY_DTYPE_FLOAT8_E4M3FNUZ, 0, 0},
        {HURRAY_DTYPE_FLOAT8_E5M2, 0, 0},        {HURRAY_DTYPE_FLOAT8_E5M2FNUZ, 0, 0},
    };
    const uint64_t shape[1] = {10};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        struct hurray_quant q = per_tensor();
        const int64_t lo = ranges[i].lo, hi = ranges[i].hi;
        q.zero_point = lo;
        expect_qvalidate(&q, ranges[i].dtype, HURRAY_LAYOUT_ROW_MAJOR, 1, shape, 1, 1, HURRAY_OK,
                        NULL);
        q.zero_point = hi;
        expect_qvalidate(&q, ranges[i].dtype, HURRAY_LAYOUT_ROW_MAJOR, 1, shape, 1, 1, HURRAY_OK,
                        NULL);
        if (lo > INT64_MIN) {
            q.zero_point = lo - 1;
            expect_qvalidate(&q, ranges[i].dtype, HURRAY_LAYOUT_ROW_MAJOR, 1, shape, 1, 1,
                            HURRAY_E_RANGE, "quantization.zero_point");
        }
        if (hi < INT64_MAX) {
            q.zero_point = hi + 1;
            expect_qvalidate(&q, ranges[i].dtype, HURRAY_LAYOUT_ROW_MAJOR, 1, shape, 1, 1,
                            HURRAY_E_RANGE, "quantization.zero_point");
        }
    }
}

/* HR-QUANT-3: with L known the indices are L, L+1, L+2 in scheme order. */
static void test_HR_QUANT_3_buffer_indices_known_L(void **state) {
    (void)state;
    const uint64_t shape[2] = {4, 64};
    struct hurray_quant q = per_channel(1);
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1, 3, HURRAY_OK,
                    NULL);
    q.scale_buffer = 2;
    q.zero_point_buffer = 1;
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1, 3,
                    HURRAY_E_CONSTRAINT, "quantization.scale_buffer_index");
    q = per_channel(1);
    q.zero_point_buffer = 3;
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1, 4,
                    HURRAY_E_CONSTRAINT, "quantization.zero_point_buffer_index");
    q = per_channel(1);
    q.scale_buffer = 0; /* the values buffer */
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1, 3,
                    HURRAY_E_CONSTRAINT, "quantization.scale_buffer_index");
    struct hurray_quant n = nf4(1);
    n.quant_map_buffer = 4;
    expect_qvalidate(&n, HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1, 4,
                    HURRAY_E_CONSTRAINT, "quantization.quant_map_buffer_index");
    n = nf4(1);
    expect_qvalidate(&n, HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1, 4, HURRAY_OK,
                    NULL);
    /* CSR: L = 3. */
    struct hurray_quant t = per_tensor();
    expect_qvalidate(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_CSR, 2, shape, 3, 3, HURRAY_OK, NULL);
    /* A missing buffer with L known is tier 1's BUFFER_COUNT, not a tier-3 error. */
    q = per_channel(1);
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1, 1, HURRAY_OK,
                    NULL);
}

/* HR-QUANT-20: with L unknown, indices are distinct and below buffer_count. */
static void test_HR_QUANT_20_buffer_indices_unknown_L(void **state) {
    (void)state;
    const uint64_t shape[2] = {4, 64};
    struct hurray_quant q = per_channel(1);
    q.scale_buffer = 5;
    q.zero_point_buffer = 0;
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, 0xF2, 2, shape, -1, 6, HURRAY_OK, NULL);
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, 0x77, 2, shape, -1, 6, HURRAY_OK, NULL);
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, 0xF2, 2, shape, -1, 5, HURRAY_E_CONSTRAINT,
                    "quantization.scale_buffer_index");
    q.zero_point_buffer = 5;
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, 0xF2, 2, shape, -1, 6, HURRAY_E_CONSTRAINT,
                    "quantization.zero_point_buffer_index");
    struct hurray_quant n = nf4(1);
    n.absmax_buffer = 7;
    n.nested_absmax_buffer = 2;
    n.quant_map_buffer = 7;
    expect_qvalidate(&n, HURRAY_DTYPE_UINT4, 0xF2, 2, shape, -1, 8, HURRAY_E_CONSTRAINT,
                    "quantization.quant_map_buffer_index");
    n.quant_map_buffer = 8;
    expect_qvalidate(&n, HURRAY_DTYPE_UINT4, 0xF2, 2, shape, -1, 8, HURRAY_E_CONSTRAINT,
                    "quantization.quant_map_buffer_index");
    n.quant_map_buffer = 0;
    expect_qvalidate(&n, HURRAY_DTYPE_UINT4, 0xF2, 2, shape, -1, 8, HURRAY_OK, NULL);
}

static void test_HR_QUANT_validate_runs_check_first(void **state) {
    (void)state;
    const uint64_t shape[1] = {8};
    struct hurray_quant q = per_tensor();
    q.scale = NAN;
    expect_qvalidate(&q, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COMPOSITE, 1, shape, 1, 1,
                    HURRAY_E_CONSTRAINT, "quantization.scale");
    q = per_tensor();
    struct hurray_layout l = layout_of(HURRAY_LAYOUT_ROW_MAJOR);
    assert_status(hurray_quant_validate(NULL, 2, &l, 1, shape, 1, 1, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_quant_validate(&q, 2, NULL, 1, shape, 1, 1, NULL), HURRAY_E_ARGUMENT);
    assert_status(hurray_quant_validate(&q, 2, &l, 1, NULL, 1, 1, NULL), HURRAY_E_ARGUMENT);
    uint64_t big[65] = {0};
    assert_status(hurray_quant_validate(&q, 2, &l, 65, big, 1, 1, NULL), HURRAY_E_LIMIT);
    /* Composite heads carry no quantization. */
    expect_qvalidate(&q, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_COMPOSITE, 1, shape, 0, 0,
                    HURRAY_E_COMBINATION, "layout");
}

/* ---- required sizes --------------------------------------------------------------- */

static void expect_qsizes(const struct hurray_quant *q, uint8_t rank, const uint64_t *shape,
                          const uint64_t want[3], const uint8_t want_known[3]) {
    uint64_t sizes[3];
    uint8_t known[3];
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_quant_required_sizes(q, rank, shape, sizes, known, &err), HURRAY_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(known[i], want_known[i]);
        if (known[i]) assert_true(sizes[i] == want[i]);
    }
}

static void expect_qsizes_fail(const struct hurray_quant *q, uint8_t rank, const uint64_t *shape,
                               int code, const char *field) {
    uint64_t sizes[3];
    uint8_t known[3];
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_quant_required_sizes(q, rank, shape, sizes, known, &err), code);
    assert_hurray_error(&err, code, field);
}

static void test_HR_QUANT_11_per_channel_sizes(void **state) {
    (void)state;
    uint64_t shape[2] = {3, 10};
    struct hurray_quant q = per_channel(1);
    q.scale_dtype = HURRAY_DTYPE_FLOAT16;
    expect_qsizes(&q, 2, shape, (uint64_t[]){20, 10, 0}, (uint8_t[]){1, 1, 0});
    q.zero_point_dtype = HURRAY_DTYPE_INT64;
    q.scale_dtype = HURRAY_DTYPE_FLOAT64;
    expect_qsizes(&q, 2, shape, (uint64_t[]){80, 80, 0}, (uint8_t[]){1, 1, 0});
    q = per_channel(0);
    expect_qsizes(&q, 2, shape, (uint64_t[]){40, 0, 0}, (uint8_t[]){1, 0, 0});
    shape[0] = DYN; /* only the axis extent matters */
    expect_qsizes(&q, 2, shape, (uint64_t[]){40, 0, 0}, (uint8_t[]){1, 0, 0});
    shape[1] = DYN;
    expect_qsizes(&q, 2, shape, (uint64_t[]){0, 0, 0}, (uint8_t[]){0, 0, 0});
    shape[1] = 0;
    expect_qsizes(&q, 2, shape, (uint64_t[]){0, 0, 0}, (uint8_t[]){1, 0, 0});
    struct hurray_quant t = per_tensor();
    expect_qsizes(&t, 2, shape, (uint64_t[]){0, 0, 0}, (uint8_t[]){0, 0, 0});
    shape[1] = (uint64_t)INT64_MAX;
    q.scale_dtype = HURRAY_DTYPE_FLOAT64;
    expect_qsizes_fail(&q, 2, shape, HURRAY_E_OVERFLOW, "quantization.scale_buffer_index");
    q.axis = 2;
    expect_qsizes_fail(&q, 2, shape, HURRAY_E_RANGE, "quantization.axis");
}

/* The blocked scale array: (N / n_a)·⌈n_a/B⌉ entries, 0 when N = 0. */
static void test_HR_QUANT_12_blocked_sizes(void **state) {
    (void)state;
    uint64_t shape[3] = {4, 10, 3};
    struct hurray_quant q = block_affine(1);
    q.block_size = 4; /* ⌈10/4⌉ = 3 → 4·3·3 = 36 entries */
    q.scale_dtype = HURRAY_DTYPE_FLOAT32;
    q.zero_point_dtype = HURRAY_DTYPE_UINT8;
    expect_qsizes(&q, 3, shape, (uint64_t[]){144, 36, 0}, (uint8_t[]){1, 1, 0});
    q.axis = 0; /* ⌈4/4⌉ = 1 → 30 entries */
    expect_qsizes(&q, 3, shape, (uint64_t[]){120, 30, 0}, (uint8_t[]){1, 1, 0});
    q.block_size = 1000;
    expect_qsizes(&q, 3, shape, (uint64_t[]){120, 30, 0}, (uint8_t[]){1, 1, 0});
    shape[1] = 0;
    expect_qsizes(&q, 3, shape, (uint64_t[]){0, 0, 0}, (uint8_t[]){1, 1, 0});
    shape[0] = DYN; /* dynamic axis, but N = 0 */
    expect_qsizes(&q, 3, shape, (uint64_t[]){0, 0, 0}, (uint8_t[]){1, 1, 0});
    shape[1] = 5;
    expect_qsizes(&q, 3, shape, (uint64_t[]){0, 0, 0}, (uint8_t[]){0, 0, 0});
    shape[0] = 4;
    shape[2] = DYN;
    expect_qsizes(&q, 3, shape, (uint64_t[]){0, 0, 0}, (uint8_t[]){0, 0, 0});
    /* mx: one e8m0 byte per 32 along the axis. */
    struct hurray_quant m = mx();
    uint64_t s2[2] = {2, 65};
    expect_qsizes(&m, 2, s2, (uint64_t[]){6, 0, 0}, (uint8_t[]){1, 0, 0});
    struct hurray_quant v = nvfp4();
    expect_qsizes(&v, 2, s2, (uint64_t[]){10, 0, 0}, (uint8_t[]){1, 0, 0});
    v.axis = 0;
    expect_qsizes(&v, 2, s2, (uint64_t[]){65, 0, 0}, (uint8_t[]){1, 0, 0});
    /* Overflow of the entry count and of its bytes. */
    uint64_t huge[3] = {UINT64_C(1) << 62, 8, 2};
    q = block_affine(0);
    q.axis = 2;
    q.block_size = 1;
    expect_qsizes_fail(&q, 3, huge, HURRAY_E_OVERFLOW, "shape");
    huge[0] = UINT64_C(1) << 61;
    huge[1] = 2; /* 2^63 entries fit, their bytes do not */
    q.scale_dtype = HURRAY_DTYPE_FLOAT64;
    expect_qsizes_fail(&q, 3, huge, HURRAY_E_OVERFLOW, "quantization.scale_buffer_index");
}

static void test_HR_QUANT_13_nf4_sizes(void **state) {
    (void)state;
    uint64_t shape[2] = {10, 10}; /* N = 100, block 64 → 2 blocks */
    struct hurray_quant q = nf4(0);
    expect_qsizes(&q, 2, shape, (uint64_t[]){8, 0, 0}, (uint8_t[]){1, 0, 0});
    q = nf4(1); /* nested 256 → 1 nested block */
    expect_qsizes(&q, 2, shape, (uint64_t[]){2, 4, 1024}, (uint8_t[]){1, 1, 1});
    shape[1] = 1000; /* N = 10000 → 157 blocks */
    q.nested_block_size = 32; /* ⌈157/32⌉ = 5 */
    expect_qsizes(&q, 2, shape, (uint64_t[]){157, 20, 1024}, (uint8_t[]){1, 1, 1});
    shape[0] = DYN;
    expect_qsizes(&q, 2, shape, (uint64_t[]){0, 0, 1024}, (uint8_t[]){0, 0, 1});
    shape[1] = 0;
    expect_qsizes(&q, 2, shape, (uint64_t[]){0, 0, 1024}, (uint8_t[]){1, 1, 1});
    q = nf4(0);
    expect_qsizes(&q, 0, NULL, (uint64_t[]){4, 0, 0}, (uint8_t[]){1, 0, 0});
    q.block_size = 3; /* invalid descriptors are refused, never divided by */
    expect_qsizes_fail(&q, 0, NULL, HURRAY_E_CONSTRAINT, "quantization.block_size");
}

/* ---- robustness ---------------------------------------------------------------------- */

static uint64_t rng_state = 0xD1B54A32D192ED03ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* HR-QUANT-1 on random payloads: whatever decodes re-encodes byte-identically,
 * validate and required_sizes never misbehave on it. */
static void test_HR_QUANT_1_random_payloads_canonical(void **state) {
    (void)state;
    int ok = 0;
    for (int iter = 0; iter < 50000; iter++) {
        /* A valid payload with a few bytes mutated, or (1 in 8) random bytes. */
        struct hurray_quant f = fixture((int)(rng() % FIXTURE_COUNT));
        uint8_t base[32];
        size_t n = 0;
        assert_status(encode(&f, base, sizeof base, &n, NULL), HURRAY_OK);
        if (iter % 8 == 0) n = rng() % 30;
        uint8_t *b = test_malloc(n ? n : 1); /* exact size: overreads are caught */
        for (size_t i = 0; i < n; i++) b[i] = iter % 8 == 0 ? (uint8_t)rng() : base[i];
        for (uint64_t k = rng() % 3; k > 0 && n > 0; k--) {
            uint64_t r = rng();
            b[r % n] = (uint8_t)(r % 5 == 0 ? r >> 32 : (r >> 32) % 4);
        }
        struct hurray_quant q;
        if (hurray_quant_decode(b, n, &q, NULL) == HURRAY_OK) {
            ok++;
            uint8_t out[32];
            size_t m = 0;
            assert_status(encode(&q, out, sizeof out, &m, NULL), HURRAY_OK);
            assert_bytes_equal(out, m, b, n);
            uint64_t shape[4] = {rng() % 70, rng() % 3 ? rng() % 70 : DYN, 1 + rng() % 5, 7};
            struct hurray_layout l = layout_of((uint8_t)rng());
            int st = hurray_quant_validate(&q, (uint8_t)rng(), &l, (uint8_t)(rng() % 5), shape,
                                           (int)(rng() % 6) - 1, (unsigned)(rng() % 8), NULL);
            assert_true(st >= 0 && st < HURRAY_STATUS_COUNT);
            uint64_t sizes[3];
            uint8_t known[3];
            st = hurray_quant_required_sizes(&q, (uint8_t)(rng() % 5), shape, sizes, known,
                                             NULL);
            assert_true(st >= 0 && st < HURRAY_STATUS_COUNT);
        }
        test_free(b);
    }
    assert_true(ok > 5000);
}

/* ---- equality ----------------------------------------------------------------------- */

static void test_HR_QUANT_equality(void **state) {
    (void)state;
    for (int i = 0; i < FIXTURE_COUNT; i++) {
        struct hurray_quant a = fixture(i), b = fixture(i);
        assert_true(hurray_quant_equal(&a, &b));
        for (int j = 0; j < FIXTURE_COUNT; j++) {
            struct hurray_quant c = fixture(j);
            if (i != j) assert_false(hurray_quant_equal(&a, &c));
        }
    }
    struct hurray_quant a = per_tensor(), b = per_tensor();
    a.scale = b.scale = NAN;
    assert_false(hurray_quant_equal(&a, &b)); /* NaN != NaN */
    assert_false(hurray_quant_equal(&a, &a));
    a = per_tensor();
    b = per_tensor();
    b.axis = 3; /* not a per_tensor field */
    b.block_size = 9;
    assert_true(hurray_quant_equal(&a, &b));
    b.zero_point = 0;
    assert_false(hurray_quant_equal(&a, &b));
    struct hurray_quant n = nf4(1), m = nf4(1);
    m.nested_offset = 0.5f;
    assert_false(hurray_quant_equal(&n, &m));
    struct hurray_quant v = nvfp4(), w = nvfp4();
    w.tensor_scale = 2.0f;
    assert_false(hurray_quant_equal(&v, &w));
    struct hurray_quant x = block_affine(1), y = block_affine(1);
    y.block_size = 64;
    assert_false(hurray_quant_equal(&x, &y));
    assert_true(hurray_quant_equal(NULL, NULL));
    assert_false(hurray_quant_equal(&x, NULL));
    /* a scheme this library does not know (a caller's own struct): every field
     * of every scheme counts */
    struct hurray_quant u = nf4(1), t = nf4(1);
    u.scheme = t.scheme = 0x7E;
    assert_true(hurray_quant_equal(&u, &t));
    t.nested_block_size = 5; /* an NF4 field */
    assert_false(hurray_quant_equal(&u, &t));
    t = u;
    t.zero_point_dtype = 9; /* an affine field */
    assert_false(hurray_quant_equal(&u, &t));
    t = u;
    t.tensor_scale = 3.0f; /* an NVFP4 field */
    assert_false(hurray_quant_equal(&u, &t));
    t = u;
    t.zero_point = 1; /* a per-tensor field */
    assert_false(hurray_quant_equal(&u, &t));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_QUANT_2_scheme_tags),
        cmocka_unit_test(test_HR_QUANT_1_decode_dispatch),
        cmocka_unit_test(test_HR_QUANT_10_per_tensor_bytes),
        cmocka_unit_test(test_HR_QUANT_11_per_channel_bytes),
        cmocka_unit_test(test_HR_QUANT_12_block_affine_bytes),
        cmocka_unit_test(test_HR_QUANT_13_nf4_bytes),
        cmocka_unit_test(test_HR_QUANT_14_mx_bytes),
        cmocka_unit_test(test_HR_QUANT_15_nvfp4_bytes),
        cmocka_unit_test(test_HR_QUANT_1_round_trip),
        cmocka_unit_test(test_HR_QUANT_3_reserved_bytes),
        cmocka_unit_test(test_HR_QUANT_3_scale_finite_positive),
        cmocka_unit_test(test_HR_QUANT_12_block_size),
        cmocka_unit_test(test_HR_QUANT_14_mx_block_size),
        cmocka_unit_test(test_HR_QUANT_13_nf4_block_sizes),
        cmocka_unit_test(test_HR_QUANT_13_nf4_flags_and_nested),
        cmocka_unit_test(test_HR_QUANT_3_required_buffers),
        cmocka_unit_test(test_HR_QUANT_11_dtype_bytes),
        cmocka_unit_test(test_HR_DESC_5_quant_structure_first),
        cmocka_unit_test(test_quant_api_arguments),
        cmocka_unit_test(test_HR_QUANT_10_element_types),
        cmocka_unit_test(test_HR_QUANT_20_layout_compatibility),
        cmocka_unit_test(test_HR_PAGED_3_via_validate),
        cmocka_unit_test(test_HR_QUANT_3_axis_range),
        cmocka_unit_test(test_HR_QUANT_10_zero_point_range),
        cmocka_unit_test(test_HR_QUANT_3_buffer_indices_known_L),
        cmocka_unit_test(test_HR_QUANT_20_buffer_indices_unknown_L),
        cmocka_unit_test(test_HR_QUANT_validate_runs_check_first),
        cmocka_unit_test(test_HR_QUANT_11_per_channel_sizes),
        cmocka_unit_test(test_HR_QUANT_12_blocked_sizes),
        cmocka_unit_test(test_HR_QUANT_13_nf4_sizes),
        cmocka_unit_test(test_HR_QUANT_1_random_payloads_canonical),
        cmocka_unit_test(test_HR_QUANT_equality),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
