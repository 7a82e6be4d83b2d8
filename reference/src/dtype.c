/* Element types: the one tag table, names and aliases, tag kinds, and
 * buffer_size_bytes. docs/spec/element-types.md, memory-layout.md § Sub-byte
 * packing. */
#include "internal.h"

/* ---- the tag table (element-types.md § Tag table, HR-DTYPE-1) -----------
 * One row per named type, in tag order. The DLPack columns come from
 * § Partner names (HR-DTYPE-5): Tier 1 codes exist in every DLPack 1.x
 * (dlpack_minor 0); the float8/6/4 codes 10-17 arrived in DLPack 1.1; the
 * sub-byte integers have no DLPack code. is_sub_byte is bits < 8. */
#define DTYPE_ROWS(X)                                                                          \
    /* tag                           name               bits tier fl in sg cx  DLPack */       \
    X(HURRAY_DTYPE_BOOL,              "bool",             8,   1,  0, 0, 0, 0,  6, 8, 0) \
    X(HURRAY_DTYPE_INT8,              "int8",             8,   1,  0, 1, 1, 0,  0, 8, 0) \
    X(HURRAY_DTYPE_UINT8,             "uint8",            8,   1,  0, 1, 0, 0,  1, 8, 0) \
    X(HURRAY_DTYPE_INT16,             "int16",            16,  1,  0, 1, 1, 0,  0, 16, 0) \
    X(HURRAY_DTYPE_UINT16,            "uint16",           16,  1,  0, 1, 0, 0,  1, 16, 0) \
    X(HURRAY_DTYPE_INT32,             "int32",            32,  1,  0, 1, 1, 0,  0, 32, 0) \
    X(HURRAY_DTYPE_UINT32,            "uint32",           32,  1,  0, 1, 0, 0,  1, 32, 0) \
    X(HURRAY_DTYPE_INT64,             "int64",            64,  1,  0, 1, 1, 0,  0, 64, 0) \
    X(HURRAY_DTYPE_UINT64,            "uint64",           64,  1,  0, 1, 0, 0,  1, 64, 0) \
    X(HURRAY_DTYPE_FLOAT16,           "float16",          16,  1,  1, 0, 1, 0,  2, 16, 0) \
    X(HURRAY_DTYPE_BFLOAT16,          "bfloat16",         16,  1,  1, 0, 1, 0,  4, 16, 0) \
    X(HURRAY_DTYPE_FLOAT32,           "float32",          32,  1,  1, 0, 1, 0,  2, 32, 0) \
    X(HURRAY_DTYPE_FLOAT64,           "float64",          64,  1,  1, 0, 1, 0,  2, 64, 0) \
    X(HURRAY_DTYPE_COMPLEX64,         "complex64",        64,  1,  0, 0, 1, 1,  5, 64, 0) \
    X(HURRAY_DTYPE_COMPLEX128,        "complex128",       128, 1,  0, 0, 1, 1,  5, 128, 0) \
    X(HURRAY_DTYPE_INT1,              "int1",             1,   2,  0, 1, 1, 0,  NONE, 0, 0) \
    X(HURRAY_DTYPE_UINT1,             "uint1",            1,   2,  0, 1, 0, 0,  NONE, 0, 0) \
    X(HURRAY_DTYPE_INT2,              "int2",             2,   2,  0, 1, 1, 0,  NONE, 0, 0) \
    X(HURRAY_DTYPE_UINT2,             "uint2",            2,   2,  0, 1, 0, 0,  NONE, 0, 0) \
    X(HURRAY_DTYPE_INT4,              "int4",             4,   2,  0, 1, 1, 0,  NONE, 0, 0) \
    X(HURRAY_DTYPE_UINT4,             "uint4",            4,   2,  0, 1, 0, 0,  NONE, 0, 0) \
    X(HURRAY_DTYPE_FLOAT8_E4M3FN,     "float8_e4m3fn",    8,   2,  1, 0, 1, 0,  10, 8, 1) \
    X(HURRAY_DTYPE_FLOAT8_E4M3FNUZ,   "float8_e4m3fnuz",  8,   2,  1, 0, 1, 0,  11, 8, 1) \
    X(HURRAY_DTYPE_FLOAT8_E5M2,       "float8_e5m2",      8,   2,  1, 0, 1, 0,  12, 8, 1) \
    X(HURRAY_DTYPE_FLOAT8_E5M2FNUZ,   "float8_e5m2fnuz",  8,   2,  1, 0, 1, 0,  13, 8, 1) \
    X(HURRAY_DTYPE_FLOAT8_E8M0FNU,    "float8_e8m0fnu",   8,   2,  1, 0, 0, 0,  14, 8, 1) \
    X(HURRAY_DTYPE_FLOAT6_E2M3FN,     "float6_e2m3fn",    6,   2,  1, 0, 1, 0,  15, 6, 1) \
    X(HURRAY_DTYPE_FLOAT6_E3M2FN,     "float6_e3m2fn",    6,   2,  1, 0, 1, 0,  16, 6, 1) \
    X(HURRAY_DTYPE_FLOAT4_E2M1FN,     "float4_e2m1fn",    4,   2,  1, 0, 1, 0,  17, 4, 1)

#define ROW(tag, name, bits, tier, fl, in, sg, cx, code, dl_bits, minor)                        \
    { (tag), (tier), (bits), (name), (fl), (in), (sg), (bits) < 8, (cx), (code), (dl_bits), (minor) },
#define NONE HURRAY_DLPACK_NONE

static const struct hurray_dtype_info dtype_table[] = {DTYPE_ROWS(ROW)};

#undef ROW

/* By tag, its row's index + 1 (0: no row), made from the same row list (element-types.md § Tag table). */
HRI_TAG_INDEX(DTYPE_ROWS, row_by_tag);
#undef NONE

#define DTYPE_COUNT (sizeof dtype_table / sizeof dtype_table[0])

/* ---- aliases (element-types.md § Aliases, HR-DTYPE-3) ------------------- */

static const struct {
    const char *alias;
    uint8_t tag;
} alias_table[] = {
    {"float8_e4m3", HURRAY_DTYPE_FLOAT8_E4M3FN},
    {"float8_e8m0", HURRAY_DTYPE_FLOAT8_E8M0FNU},
    {"float6_e2m3", HURRAY_DTYPE_FLOAT6_E2M3FN},
    {"float6_e3m2", HURRAY_DTYPE_FLOAT6_E3M2FN},
    {"float4_e2m1", HURRAY_DTYPE_FLOAT4_E2M1FN},
};

#define ALIAS_COUNT (sizeof alias_table / sizeof alias_table[0])

/* ---- table access -------------------------------------------------------- */

/* One load on every descriptor's hot path. (The table itself is in ascending
 * tag order for hurray_dtype_at; dtype_test checks it.) */
const struct hurray_dtype_info *hurray_dtype_info(uint8_t tag) {
    unsigned pos = tag < HRI_TAG_LIMIT ? row_by_tag[tag] : 0u;
    return pos ? &dtype_table[pos - 1u] : NULL;
}

size_t hurray_dtype_count(void) { return DTYPE_COUNT; }

const struct hurray_dtype_info *hurray_dtype_at(size_t i) {
    return i < DTYPE_COUNT ? &dtype_table[i] : NULL;
}

/* conventions.md § Tag spaces: the element-type space has a private range. */
int hurray_dtype_tag_kind(uint8_t tag) {
    return hri_tag_kind_with_private(tag, hurray_dtype_info(tag) != NULL);
}

uint16_t hurray_dtype_bits(uint8_t tag) {
    const struct hurray_dtype_info *info = hurray_dtype_info(tag);
    return info ? info->bits : 0;
}

/* ---- names (HR-DTYPE-3) -------------------------------------------------- */

static int name_equals(const char *name, size_t name_len, const char *candidate) {
    return strlen(candidate) == name_len && memcmp(name, candidate, name_len) == 0;
}

/* Canonical names first, then aliases. "extension" names no single type. */
int hurray_dtype_from_name(const char *name, size_t name_len, uint8_t *tag) {
    if (!tag || !name) return HURRAY_E_ARGUMENT;
    for (size_t i = 0; i < DTYPE_COUNT; i++) {
        if (name_equals(name, name_len, dtype_table[i].name)) {
            *tag = dtype_table[i].tag;
            return HURRAY_OK;
        }
    }
    for (size_t i = 0; i < ALIAS_COUNT; i++) {
        if (name_equals(name, name_len, alias_table[i].alias)) {
            *tag = alias_table[i].tag;
            return HURRAY_OK;
        }
    }
    return HURRAY_E_ARGUMENT;
}

size_t hurray_dtype_alias_count(void) { return ALIAS_COUNT; }

const char *hurray_dtype_alias_at(size_t i, uint8_t *tag) {
    if (i >= ALIAS_COUNT) return NULL;
    if (tag) *tag = alias_table[i].tag;
    return alias_table[i].alias;
}

/* ---- checks ---------------------------------------------------------------- */

/* HR-DTYPE-2: reserved -> RESERVED_TAG, 0x00/0xFF -> INVALID_TAG; named and
 * private (HR-DTYPE-4) types pass. */
int hurray_dtype_check_tag(uint8_t tag, const char *field, struct hurray_error *err) {
    if (hurray_dtype_info(tag)) return HURRAY_OK; /* named */
    return hri_check_tag_kind(hurray_dtype_tag_kind(tag), tag, 1, field ? field : "dtype", err);
}

/* memory-layout.md § buffer_size_bytes (HR-PACK-3): ceil(count * bits / 8),
 * OVERFLOW when count * bits exceeds 2^64-1, UNSUPPORTED for an extension
 * type (its width is part of the private agreement, HR-DTYPE-4). */
int hurray_buffer_size_bytes(uint8_t dtype, uint64_t count, uint64_t *out,
                             struct hurray_error *err) {
    HR_FAIL_IF(!out, err, HURRAY_E_ARGUMENT, "out", "buffer_size_bytes: out is NULL");
    const struct hurray_dtype_info *info = hurray_dtype_info(dtype);
    int kind = info ? HURRAY_TAG_NAMED : hurray_dtype_tag_kind(dtype);
    HR_FAIL_IF(kind == HURRAY_TAG_PRIVATE, err, HURRAY_E_UNSUPPORTED, "dtype",
               "dtype: extension type 0x%02X has no format-defined bit width, so its buffer "
               "size is unknown",
               dtype);
    HR_TRY(hri_check_tag_kind(kind, dtype, 0, "dtype", err));
    uint64_t total_bits = 0;
    HR_FAIL_IF(hri_mul_u64(count, info->bits, &total_bits), err, HURRAY_E_OVERFLOW, "count",
               "count: %llu elements of dtype %s (0x%02X, %u bits) exceed 2^64-1 bits",
               (unsigned long long)count, info->name, dtype, (unsigned)info->bits);
    *out = hri_ceil_div_u64(total_bits, 8);
    return HURRAY_OK;
}
