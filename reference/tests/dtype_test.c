/* Element types (dtype.c). element-types.md, memory-layout.md § Sub-byte packing */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "hurray/hurray.h"
#include "test_support.h"

/* element-types.md § Tag table and § Partner names, transcribed independently
 * of dtype.c. DLPack minor: 0 for codes every DLPack 1.x has, 1 for the codes
 * DLPack 1.1 added. */
struct expected_dtype {
    uint8_t tag;
    const char *name;
    uint16_t bits;
    uint8_t tier;
    uint8_t is_float, is_integer, is_signed, is_sub_byte, is_complex;
    uint8_t dl_code, dl_bits, dl_minor;
};

#define NO HURRAY_DLPACK_NONE
static const struct expected_dtype spec_dtypes[] = {
    /* tag   name               bits tier fl in sg sb cx  DLPack */
    {0x01, "bool",              8,   1,   0, 0, 0, 0, 0,  6, 8, 0},
    {0x02, "int8",              8,   1,   0, 1, 1, 0, 0,  0, 8, 0},
    {0x03, "uint8",             8,   1,   0, 1, 0, 0, 0,  1, 8, 0},
    {0x04, "int16",             16,  1,   0, 1, 1, 0, 0,  0, 16, 0},
    {0x05, "uint16",            16,  1,   0, 1, 0, 0, 0,  1, 16, 0},
    {0x06, "int32",             32,  1,   0, 1, 1, 0, 0,  0, 32, 0},
    {0x07, "uint32",            32,  1,   0, 1, 0, 0, 0,  1, 32, 0},
    {0x08, "int64",             64,  1,   0, 1, 1, 0, 0,  0, 64, 0},
    {0x09, "uint64",            64,  1,   0, 1, 0, 0, 0,  1, 64, 0},
    {0x0A, "float16",           16,  1,   1, 0, 1, 0, 0,  2, 16, 0},
    {0x0B, "bfloat16",          16,  1,   1, 0, 1, 0, 0,  4, 16, 0},
    {0x0C, "float32",           32,  1,   1, 0, 1, 0, 0,  2, 32, 0},
    {0x0D, "float64",           64,  1,   1, 0, 1, 0, 0,  2, 64, 0},
    {0x0E, "complex64",         64,  1,   0, 0, 1, 0, 1,  5, 64, 0},
    {0x0F, "complex128",        128, 1,   0, 0, 1, 0, 1,  5, 128, 0},
    {0x20, "int1",              1,   2,   0, 1, 1, 1, 0,  NO, 0, 0},
    {0x21, "uint1",             1,   2,   0, 1, 0, 1, 0,  NO, 0, 0},
    {0x22, "int2",              2,   2,   0, 1, 1, 1, 0,  NO, 0, 0},
    {0x23, "uint2",             2,   2,   0, 1, 0, 1, 0,  NO, 0, 0},
    {0x24, "int4",              4,   2,   0, 1, 1, 1, 0,  NO, 0, 0},
    {0x25, "uint4",             4,   2,   0, 1, 0, 1, 0,  NO, 0, 0},
    {0x30, "float8_e4m3fn",     8,   2,   1, 0, 1, 0, 0,  10, 8, 1},
    {0x31, "float8_e4m3fnuz",   8,   2,   1, 0, 1, 0, 0,  11, 8, 1},
    {0x32, "float8_e5m2",       8,   2,   1, 0, 1, 0, 0,  12, 8, 1},
    {0x33, "float8_e5m2fnuz",   8,   2,   1, 0, 1, 0, 0,  13, 8, 1},
    {0x34, "float8_e8m0fnu",    8,   2,   1, 0, 0, 0, 0,  14, 8, 1},
    {0x35, "float6_e2m3fn",     6,   2,   1, 0, 1, 1, 0,  15, 6, 1},
    {0x36, "float6_e3m2fn",     6,   2,   1, 0, 1, 1, 0,  16, 6, 1},
    {0x37, "float4_e2m1fn",     4,   2,   1, 0, 1, 1, 0,  17, 4, 1},
};
#undef NO
#define SPEC_DTYPE_COUNT (sizeof spec_dtypes / sizeof spec_dtypes[0])

static const struct expected_dtype *spec_dtype(uint8_t tag) {
    for (size_t i = 0; i < SPEC_DTYPE_COUNT; i++)
        if (spec_dtypes[i].tag == tag) return &spec_dtypes[i];
    return NULL;
}

static void check_row(const struct hurray_dtype_info *got, const struct expected_dtype *want) {
    assert_non_null(got);
    assert_int_equal(got->tag, want->tag);
    assert_string_equal(got->name, want->name);
    assert_int_equal(got->bits, want->bits);
    assert_int_equal(got->tier, want->tier);
    assert_int_equal(got->is_float, want->is_float);
    assert_int_equal(got->is_integer, want->is_integer);
    assert_int_equal(got->is_signed, want->is_signed);
    assert_int_equal(got->is_sub_byte, want->is_sub_byte);
    assert_int_equal(got->is_complex, want->is_complex);
    assert_int_equal(got->dlpack_code, want->dl_code);
    assert_int_equal(got->dlpack_bits, want->dl_bits);
    assert_int_equal(got->dlpack_minor, want->dl_minor);
}

/* HR-DTYPE-1 and HR-DTYPE-5 (the DLPack columns): every row, by iteration (in tag
 * order) and by lookup. */
static void test_HR_DTYPE_1_HR_DTYPE_5_tag_table_and_partner_codes(void **state) {
    (void)state;
    assert_int_equal(hurray_dtype_count(), SPEC_DTYPE_COUNT);
    for (size_t i = 0; i < SPEC_DTYPE_COUNT; i++) {
        check_row(hurray_dtype_at(i), &spec_dtypes[i]);
        check_row(hurray_dtype_info(spec_dtypes[i].tag), &spec_dtypes[i]);
        assert_ptr_equal(hurray_dtype_at(i), hurray_dtype_info(spec_dtypes[i].tag));
        assert_int_equal(hurray_dtype_bits(spec_dtypes[i].tag), spec_dtypes[i].bits);
        if (i > 0) assert_true(hurray_dtype_at(i - 1)->tag < hurray_dtype_at(i)->tag);
    }
    assert_null(hurray_dtype_at(SPEC_DTYPE_COUNT));
    assert_null(hurray_dtype_at((size_t)-1));
}

/* The enum constants are the spec's bytes. */
static void test_HR_DTYPE_1_enum_values(void **state) {
    (void)state;
    const struct {
        int tag;
        const char *name;
    } e[] = {
        {HURRAY_DTYPE_BOOL, "bool"}, {HURRAY_DTYPE_INT8, "int8"},
        {HURRAY_DTYPE_UINT8, "uint8"}, {HURRAY_DTYPE_INT16, "int16"},
        {HURRAY_DTYPE_UINT16, "uint16"}, {HURRAY_DTYPE_INT32, "int32"},
        {HURRAY_DTYPE_UINT32, "uint32"}, {HURRAY_DTYPE_INT64, "int64"},
        {HURRAY_DTYPE_UINT64, "uint64"}, {HURRAY_DTYPE_FLOAT16, "float16"},
        {HURRAY_DTYPE_BFLOAT16, "bfloat16"}, {HURRAY_DTYPE_FLOAT32, "float32"},
        {HURRAY_DTYPE_FLOAT64, "float64"}, {HURRAY_DTYPE_COMPLEX64, "complex64"},
        {HURRAY_DTYPE_COMPLEX128, "complex128"}, {HURRAY_DTYPE_INT1, "int1"},
        {HURRAY_DTYPE_UINT1, "uint1"}, {HURRAY_DTYPE_INT2, "int2"},
        {HURRAY_DTYPE_UINT2, "uint2"}, {HURRAY_DTYPE_INT4, "int4"},
        {HURRAY_DTYPE_UINT4, "uint4"}, {HURRAY_DTYPE_FLOAT8_E4M3FN, "float8_e4m3fn"},
        {HURRAY_DTYPE_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz"},
        {HURRAY_DTYPE_FLOAT8_E5M2, "float8_e5m2"},
        {HURRAY_DTYPE_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz"},
        {HURRAY_DTYPE_FLOAT8_E8M0FNU, "float8_e8m0fnu"},
        {HURRAY_DTYPE_FLOAT6_E2M3FN, "float6_e2m3fn"},
        {HURRAY_DTYPE_FLOAT6_E3M2FN, "float6_e3m2fn"},
        {HURRAY_DTYPE_FLOAT4_E2M1FN, "float4_e2m1fn"},
    };
    assert_int_equal(sizeof e / sizeof e[0], SPEC_DTYPE_COUNT);
    for (size_t i = 0; i < sizeof e / sizeof e[0]; i++) {
        assert_int_equal(e[i].tag, spec_dtypes[i].tag);
        assert_string_equal(hurray_dtype_info((uint8_t)e[i].tag)->name, e[i].name);
    }
}

/* element-types.md: is_sub_byte is bits < 8; bool is neither integer nor
 * float; integer and float are exclusive; tier 1 is exactly 0x01-0x0F. */
static void test_HR_DTYPE_1_predicates_consistent(void **state) {
    (void)state;
    for (size_t i = 0; i < hurray_dtype_count(); i++) {
        const struct hurray_dtype_info *d = hurray_dtype_at(i);
        assert_int_equal(d->is_sub_byte, d->bits < 8);
        assert_false(d->is_float && d->is_integer);
        assert_false(d->is_complex && (d->is_float || d->is_integer));
        assert_int_equal(d->tier, d->tag <= 0x0F ? 1 : 2);
        assert_true(d->bits == 1 || d->bits == 2 || d->bits == 4 || d->bits == 6 ||
                    d->bits % 8 == 0);
        /* Tier 1 exists in every DLPack (minor 0); no type needs DLPack > 1.1. */
        if (d->tier == 1) {
            assert_int_not_equal(d->dlpack_code, HURRAY_DLPACK_NONE);
            assert_int_equal(d->dlpack_minor, 0);
        }
        assert_true(d->dlpack_minor <= 1);
        if (d->dlpack_code != HURRAY_DLPACK_NONE) assert_int_equal(d->dlpack_bits, d->bits);
    }
    const struct hurray_dtype_info *b = hurray_dtype_info(HURRAY_DTYPE_BOOL);
    assert_false(b->is_integer || b->is_float || b->is_signed);
    assert_false(hurray_dtype_info(HURRAY_DTYPE_FLOAT8_E8M0FNU)->is_signed);
}

/* conventions.md § Tag spaces: each of the 256 bytes is exactly one kind. */
static void test_HR_DTYPE_2_tag_kinds_all_bytes(void **state) {
    (void)state;
    int counts[5] = {0};
    for (int b = 0; b < 256; b++) {
        uint8_t t = (uint8_t)b;
        int kind = hurray_dtype_tag_kind(t);
        int want = spec_dtype(t)                  ? HURRAY_TAG_NAMED
                   : (b == 0x00 || b == 0xFF)     ? HURRAY_TAG_INVALID
                   : (b >= 0xF0 && b <= 0xFE)     ? HURRAY_TAG_PRIVATE
                                                  : HURRAY_TAG_RESERVED;
        assert_int_equal(kind, want);
        counts[kind]++;
        if (kind != HURRAY_TAG_NAMED) {
            assert_null(hurray_dtype_info(t));
            assert_int_equal(hurray_dtype_bits(t), 0);
        }
    }
    assert_int_equal(counts[HURRAY_TAG_NAMED], 29);
    assert_int_equal(counts[HURRAY_TAG_PRIVATE], 15);
    assert_int_equal(counts[HURRAY_TAG_INVALID], 2);
    assert_int_equal(counts[HURRAY_TAG_RESERVED], 256 - 29 - 15 - 2);
}

/* HR-DTYPE-2: reserved refused with RESERVED_TAG, 0x00/0xFF with INVALID_TAG;
 * the record names the field and the byte in hex. */
static void test_HR_DTYPE_2_reserved_tags_refused(void **state) {
    (void)state;
    for (int b = 0; b < 256; b++) {
        uint8_t t = (uint8_t)b;
        struct hurray_error err;
        test_error_poison(&err);
        int st = hurray_dtype_check_tag(t, "members[3].dtype", &err);
        int kind = hurray_dtype_tag_kind(t);
        assert_status(hurray_dtype_check_tag(t, "dtype", NULL), st); /* NULL err */
        if (kind == HURRAY_TAG_NAMED || kind == HURRAY_TAG_PRIVATE) {
            assert_status(st, HURRAY_OK);
            continue;
        }
        int want = kind == HURRAY_TAG_INVALID ? HURRAY_E_INVALID_TAG : HURRAY_E_RESERVED_TAG;
        assert_status(st, want);
        assert_hurray_error(&err, want, "members[3].dtype");
        char hex[8];
        snprintf(hex, sizeof hex, "0x%02X", b);
        assert_non_null(strstr(err.message, hex));
        assert_non_null(strstr(err.message, "members[3].dtype"));
    }
}

static void test_HR_DTYPE_2_check_tag_default_field(void **state) {
    (void)state;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_dtype_check_tag(0x10, NULL, &err), HURRAY_E_RESERVED_TAG);
    assert_hurray_error(&err, HURRAY_E_RESERVED_TAG, "dtype");
    assert_non_null(strstr(err.message, "0x10"));
    assert_status(hurray_dtype_check_tag(0x00, NULL, &err), HURRAY_E_INVALID_TAG);
    assert_hurray_error(&err, HURRAY_E_INVALID_TAG, "dtype");
    assert_non_null(strstr(err.message, "0x00"));
}

/* ---- names (HR-DTYPE-3) ---------------------------------------------------- */

static int lookup(const char *name, uint8_t *tag) {
    return hurray_dtype_from_name(name, strlen(name), tag);
}

static void test_HR_DTYPE_3_canonical_names(void **state) {
    (void)state;
    for (size_t i = 0; i < SPEC_DTYPE_COUNT; i++) {
        uint8_t tag = 0;
        assert_status(lookup(spec_dtypes[i].name, &tag), HURRAY_OK);
        assert_int_equal(tag, spec_dtypes[i].tag);
        for (size_t j = i + 1; j < SPEC_DTYPE_COUNT; j++)
            assert_string_not_equal(spec_dtypes[i].name, spec_dtypes[j].name);
    }
}

static void test_HR_DTYPE_3_aliases(void **state) {
    (void)state;
    const struct {
        const char *alias;
        uint8_t tag;
    } spec_aliases[] = {
        {"float8_e4m3", 0x30}, {"float8_e8m0", 0x34}, {"float6_e2m3", 0x35},
        {"float6_e3m2", 0x36}, {"float4_e2m1", 0x37},
    };
    size_t n = sizeof spec_aliases / sizeof spec_aliases[0];
    assert_int_equal(hurray_dtype_alias_count(), n);
    for (size_t i = 0; i < n; i++) {
        uint8_t tag = 0;
        assert_status(lookup(spec_aliases[i].alias, &tag), HURRAY_OK);
        assert_int_equal(tag, spec_aliases[i].tag);
        /* name reports the canonical spelling, never the alias */
        assert_string_not_equal(hurray_dtype_info(tag)->name, spec_aliases[i].alias);
        tag = 0;
        assert_string_equal(hurray_dtype_alias_at(i, &tag), spec_aliases[i].alias);
        assert_int_equal(tag, spec_aliases[i].tag);
        assert_non_null(hurray_dtype_alias_at(i, NULL));
        /* an alias is never also a canonical name */
        for (size_t j = 0; j < SPEC_DTYPE_COUNT; j++)
            assert_string_not_equal(spec_dtypes[j].name, spec_aliases[i].alias);
    }
    uint8_t tag = 0x77;
    assert_null(hurray_dtype_alias_at(n, &tag));
    assert_int_equal(tag, 0x77);
    uint8_t e4m3 = 0;
    assert_status(lookup("float8_e4m3", &e4m3), HURRAY_OK);
    assert_int_equal(e4m3, HURRAY_DTYPE_FLOAT8_E4M3FN);
}

static void test_HR_DTYPE_3_unknown_names(void **state) {
    (void)state;
    const char *bad[] = {
        "extension", "private", "", "Float32", "FLOAT32", "float32 ", " float32", "float",
        "int", "float8_e4m3f", "float8_e4m3fn\n", "float8_e4m3fnuzz", "bfloat", "i8", "F32",
        "complex", "float8_e4m3fnu", "float6_e2m3fnu", "int3", "uint64_t",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t tag = 0x77;
        assert_status(lookup(bad[i], &tag), HURRAY_E_ARGUMENT);
        assert_int_equal(tag, 0x77); /* untouched on failure */
    }
}

/* `name` need not be NUL-terminated: only name_len bytes count. */
static void test_HR_DTYPE_3_name_length_bounded(void **state) {
    (void)state;
    const char buf[] = {'f', 'l', 'o', 'a', 't', '3', '2', 'x', 'y'};
    uint8_t tag = 0;
    assert_status(hurray_dtype_from_name(buf, 7, &tag), HURRAY_OK);
    assert_int_equal(tag, HURRAY_DTYPE_FLOAT32);
    assert_status(hurray_dtype_from_name(buf, 6, &tag), HURRAY_E_ARGUMENT);
    assert_status(hurray_dtype_from_name(buf, 9, &tag), HURRAY_E_ARGUMENT);
    const char with_nul[] = "int8\0xx";
    assert_status(hurray_dtype_from_name(with_nul, 5, &tag), HURRAY_E_ARGUMENT);
    assert_status(hurray_dtype_from_name(with_nul, 4, &tag), HURRAY_OK);
    assert_int_equal(tag, HURRAY_DTYPE_INT8);
}

static void test_HR_DTYPE_3_null_arguments(void **state) {
    (void)state;
    uint8_t tag = 0;
    assert_status(hurray_dtype_from_name(NULL, 0, &tag), HURRAY_E_ARGUMENT);
    assert_status(hurray_dtype_from_name(NULL, 4, &tag), HURRAY_E_ARGUMENT);
    assert_status(hurray_dtype_from_name("int8", 4, NULL), HURRAY_E_ARGUMENT);
}

/* ---- buffer_size_bytes (HR-PACK-3) ----------------------------------------- */

/* ceil(count * bits / 8) without a wider type: count = 8q + r. Returns 1
 * when count * bits exceeds 2^64-1. */
static int expected_size(uint64_t count, unsigned bits, uint64_t *out) {
    if (count > UINT64_MAX / bits) return 1;
    *out = (count / 8) * bits + ((count % 8) * bits + 7) / 8;
    return 0;
}

static void test_HR_PACK_3_small_counts_every_type(void **state) {
    (void)state;
    for (size_t i = 0; i < SPEC_DTYPE_COUNT; i++) {
        for (uint64_t count = 0; count <= 64; count++) {
            uint64_t got = 0xDEAD, want = 0;
            assert_status(hurray_buffer_size_bytes(spec_dtypes[i].tag, count, &got, NULL),
                          HURRAY_OK);
            assert_int_equal(expected_size(count, spec_dtypes[i].bits, &want), 0);
            assert_true(got == want);
            assert_true(got * 8 >= count * spec_dtypes[i].bits);
            assert_true(got == 0 || (got - 1) * 8 < count * spec_dtypes[i].bits);
        }
    }
}

/* Worked examples: the last partial byte is counted (memory-layout.md). */
static void test_HR_PACK_3_sub_byte_examples(void **state) {
    (void)state;
    const struct {
        uint8_t tag;
        uint64_t count;
        uint64_t bytes;
    } cases[] = {
        {HURRAY_DTYPE_INT4, 3, 2},          /* int4 [-1, 7, -8] -> 7F 08 */
        {HURRAY_DTYPE_INT2, 5, 2},          /* int2 [1, -2, 0, -1, 1] -> C9 01 */
        {HURRAY_DTYPE_FLOAT6_E2M3FN, 4, 3}, /* four float6 codes -> three bytes */
        {HURRAY_DTYPE_FLOAT6_E3M2FN, 1, 1},
        {HURRAY_DTYPE_FLOAT6_E3M2FN, 5, 4},
        {HURRAY_DTYPE_INT1, 9, 2},
        {HURRAY_DTYPE_UINT1, 8, 1},
        {HURRAY_DTYPE_UINT1, 1, 1},
        {HURRAY_DTYPE_UINT2, 3, 1},
        {HURRAY_DTYPE_UINT2, 4, 1},
        {HURRAY_DTYPE_UINT4, 1, 1},
        {HURRAY_DTYPE_FLOAT4_E2M1FN, 7, 4},
        {HURRAY_DTYPE_BOOL, 3, 3},
        {HURRAY_DTYPE_COMPLEX128, 3, 48},
        {HURRAY_DTYPE_FLOAT8_E4M3FN, 0, 0},
        {HURRAY_DTYPE_INT4, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t got = 0;
        assert_status(hurray_buffer_size_bytes(cases[i].tag, cases[i].count, &got, NULL),
                      HURRAY_OK);
        assert_true(got == cases[i].bytes);
    }
}

/* HR-PACK-3: OVERFLOW exactly when count * bits > 2^64-1, for every width. */
static void test_HR_PACK_3_overflow_edge_every_type(void **state) {
    (void)state;
    for (size_t i = 0; i < SPEC_DTYPE_COUNT; i++) {
        unsigned bits = spec_dtypes[i].bits;
        uint64_t max_ok = UINT64_MAX / bits, got = 0, want = 0;
        assert_status(hurray_buffer_size_bytes(spec_dtypes[i].tag, max_ok, &got, NULL),
                      HURRAY_OK);
        assert_int_equal(expected_size(max_ok, bits, &want), 0);
        assert_true(got == want);
        if (bits == 1) continue; /* UINT64_MAX elements of 1 bit never overflow */
        struct hurray_error err;
        test_error_poison(&err);
        got = 0xABCD;
        assert_status(hurray_buffer_size_bytes(spec_dtypes[i].tag, max_ok + 1, &got, &err),
                      HURRAY_E_OVERFLOW);
        assert_true(got == 0xABCD); /* out untouched on failure */
        assert_hurray_error(&err, HURRAY_E_OVERFLOW, "count");
        char hex[8];
        snprintf(hex, sizeof hex, "0x%02X", spec_dtypes[i].tag);
        assert_non_null(strstr(err.message, hex));
        assert_status(hurray_buffer_size_bytes(spec_dtypes[i].tag, UINT64_MAX, &got, NULL),
                      HURRAY_E_OVERFLOW);
    }
}

/* The edges worked by hand, independent of expected_size(). */
static void test_HR_PACK_3_overflow_edge_values(void **state) {
    (void)state;
    uint64_t got = 0;
    /* int1: 2^64-1 bits -> 2^61 bytes */
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_INT1, UINT64_MAX, &got, NULL),
                  HURRAY_OK);
    assert_true(got == UINT64_C(1) << 61);
    /* int4: 2^62-1 elements = 2^64-4 bits -> 2^61 bytes; 2^62 overflows */
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_INT4, (UINT64_C(1) << 62) - 1, &got,
                                           NULL),
                  HURRAY_OK);
    assert_true(got == UINT64_C(1) << 61);
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_INT4, UINT64_MAX / 4 + 1, &got, NULL),
                  HURRAY_E_OVERFLOW);
    assert_true(UINT64_MAX / 4 + 1 == UINT64_C(1) << 62);
    /* float6: 3074457345618258602 elements = 18446744073709551612 bits */
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT6_E2M3FN,
                                           UINT64_C(3074457345618258602), &got, NULL),
                  HURRAY_OK);
    assert_true(got == UINT64_C(2305843009213693952));
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT6_E2M3FN,
                                           UINT64_C(3074457345618258603), &got, NULL),
                  HURRAY_E_OVERFLOW);
    /* int2: 2^63-1 elements -> 2^64-2 bits -> 2^61 bytes; 2^63 overflows */
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_INT2, (UINT64_C(1) << 63) - 1, &got,
                                           NULL),
                  HURRAY_OK);
    assert_true(got == UINT64_C(1) << 61);
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_INT2, UINT64_C(1) << 63, &got, NULL),
                  HURRAY_E_OVERFLOW);
    /* uint8: every count fits; complex128: 2^57 overflows, 2^57-1 -> 2^61-16 */
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_UINT8, UINT64_MAX, &got, NULL),
                  HURRAY_E_OVERFLOW);
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_UINT8, UINT64_MAX / 8, &got, NULL),
                  HURRAY_OK);
    assert_true(got == UINT64_MAX / 8);
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_COMPLEX128, (UINT64_C(1) << 57) - 1,
                                           &got, NULL),
                  HURRAY_OK);
    assert_true(got == (UINT64_C(1) << 61) - 16);
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_COMPLEX128, UINT64_C(1) << 57, &got,
                                           NULL),
                  HURRAY_E_OVERFLOW);
}

/* HR-DTYPE-4: private types have no width -> UNSUPPORTED; others per kind. */
static void test_HR_DTYPE_4_buffer_size_error_codes(void **state) {
    (void)state;
    for (int b = 0; b < 256; b++) {
        uint8_t t = (uint8_t)b;
        int kind = hurray_dtype_tag_kind(t);
        if (kind == HURRAY_TAG_NAMED) continue;
        int want = kind == HURRAY_TAG_PRIVATE    ? HURRAY_E_UNSUPPORTED
                   : kind == HURRAY_TAG_INVALID  ? HURRAY_E_INVALID_TAG
                                                 : HURRAY_E_RESERVED_TAG;
        struct hurray_error err;
        test_error_poison(&err);
        uint64_t got = 0x1234;
        assert_status(hurray_buffer_size_bytes(t, 1, &got, &err), want);
        assert_true(got == 0x1234);
        assert_hurray_error(&err, want, "dtype");
        char hex[8];
        snprintf(hex, sizeof hex, "0x%02X", b);
        assert_non_null(strstr(err.message, hex));
        assert_status(hurray_buffer_size_bytes(t, 0, &got, NULL), want); /* NULL err */
    }
}

static void test_HR_PACK_3_null_out(void **state) {
    (void)state;
    struct hurray_error err;
    test_error_poison(&err);
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_INT8, 1, NULL, &err),
                  HURRAY_E_ARGUMENT);
    assert_hurray_error(&err, HURRAY_E_ARGUMENT, NULL);
    assert_status(hurray_buffer_size_bytes(HURRAY_DTYPE_INT8, 1, NULL, NULL),
                  HURRAY_E_ARGUMENT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_DTYPE_1_HR_DTYPE_5_tag_table_and_partner_codes),
        cmocka_unit_test(test_HR_DTYPE_1_enum_values),
        cmocka_unit_test(test_HR_DTYPE_1_predicates_consistent),
        cmocka_unit_test(test_HR_DTYPE_2_tag_kinds_all_bytes),
        cmocka_unit_test(test_HR_DTYPE_2_reserved_tags_refused),
        cmocka_unit_test(test_HR_DTYPE_2_check_tag_default_field),
        cmocka_unit_test(test_HR_DTYPE_3_canonical_names),
        cmocka_unit_test(test_HR_DTYPE_3_aliases),
        cmocka_unit_test(test_HR_DTYPE_3_unknown_names),
        cmocka_unit_test(test_HR_DTYPE_3_name_length_bounded),
        cmocka_unit_test(test_HR_DTYPE_3_null_arguments),
        cmocka_unit_test(test_HR_PACK_3_small_counts_every_type),
        cmocka_unit_test(test_HR_PACK_3_sub_byte_examples),
        cmocka_unit_test(test_HR_PACK_3_overflow_edge_every_type),
        cmocka_unit_test(test_HR_PACK_3_overflow_edge_values),
        cmocka_unit_test(test_HR_DTYPE_4_buffer_size_error_codes),
        cmocka_unit_test(test_HR_PACK_3_null_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
