/* Element types. docs/spec/element-types.md, memory-layout.md § Sub-byte packing */
#ifndef HURRAY_DTYPE_H
#define HURRAY_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include "hurray/export.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

/* Kind of a byte in any tag space (conventions.md § Tag spaces). */
enum hurray_tag_kind {
    HURRAY_TAG_NAMED = 1,
    HURRAY_TAG_RESERVED = 2,
    HURRAY_TAG_PRIVATE = 3,
    HURRAY_TAG_INVALID = 4
};

enum hurray_dtype_tag {
    HURRAY_DTYPE_BOOL = 0x01,
    HURRAY_DTYPE_INT8 = 0x02,
    HURRAY_DTYPE_UINT8 = 0x03,
    HURRAY_DTYPE_INT16 = 0x04,
    HURRAY_DTYPE_UINT16 = 0x05,
    HURRAY_DTYPE_INT32 = 0x06,
    HURRAY_DTYPE_UINT32 = 0x07,
    HURRAY_DTYPE_INT64 = 0x08,
    HURRAY_DTYPE_UINT64 = 0x09,
    HURRAY_DTYPE_FLOAT16 = 0x0A,
    HURRAY_DTYPE_BFLOAT16 = 0x0B,
    HURRAY_DTYPE_FLOAT32 = 0x0C,
    HURRAY_DTYPE_FLOAT64 = 0x0D,
    HURRAY_DTYPE_COMPLEX64 = 0x0E,
    HURRAY_DTYPE_COMPLEX128 = 0x0F,
    HURRAY_DTYPE_INT1 = 0x20,
    HURRAY_DTYPE_UINT1 = 0x21,
    HURRAY_DTYPE_INT2 = 0x22,
    HURRAY_DTYPE_UINT2 = 0x23,
    HURRAY_DTYPE_INT4 = 0x24,
    HURRAY_DTYPE_UINT4 = 0x25,
    HURRAY_DTYPE_FLOAT8_E4M3FN = 0x30,
    HURRAY_DTYPE_FLOAT8_E4M3FNUZ = 0x31,
    HURRAY_DTYPE_FLOAT8_E5M2 = 0x32,
    HURRAY_DTYPE_FLOAT8_E5M2FNUZ = 0x33,
    HURRAY_DTYPE_FLOAT8_E8M0FNU = 0x34,
    HURRAY_DTYPE_FLOAT6_E2M3FN = 0x35,
    HURRAY_DTYPE_FLOAT6_E3M2FN = 0x36,
    HURRAY_DTYPE_FLOAT4_E2M1FN = 0x37
};

#define HURRAY_PRIVATE_FIRST 0xF0u
#define HURRAY_PRIVATE_LAST 0xFEu

/* No DLPack code for this type. */
#define HURRAY_DLPACK_NONE 0xFFu

/* One row of the element-type table (element-types.md § Tag table). */
struct hurray_dtype_info {
    uint8_t tag;
    uint8_t tier;          /* 1, 2 (3 is private: never in this table) */
    uint16_t bits;         /* bit width */
    const char *name;      /* canonical name */
    uint8_t is_float;
    uint8_t is_integer;
    uint8_t is_signed;
    uint8_t is_sub_byte;
    uint8_t is_complex;
    uint8_t dlpack_code;   /* DLDataTypeCode or HURRAY_DLPACK_NONE */
    uint8_t dlpack_bits;
    uint8_t dlpack_minor;  /* least DLPack 1.x minor that has the code (0 = any) */
};

/* Kind of an element-type byte. */
HURRAY_API int hurray_dtype_tag_kind(uint8_t tag);
/* Row for a named tag; NULL for reserved, private and invalid tags. */
HURRAY_API const struct hurray_dtype_info *hurray_dtype_info(uint8_t tag);
/* Iterate the named types in tag order: i in [0, hurray_dtype_count()). */
HURRAY_API size_t hurray_dtype_count(void);
HURRAY_API const struct hurray_dtype_info *hurray_dtype_at(size_t i);
/* Name or alias -> tag (HR-DTYPE-3). "extension" is not a lookup name.
 * HURRAY_E_ARGUMENT for an unknown name. `name` need not be NUL-terminated. */
HURRAY_API HURRAY_NODISCARD int hurray_dtype_from_name(const char *name, size_t name_len,
                                                       uint8_t *tag);
/* Iterate the aliases: returns the alias string and stores its canonical tag. */
HURRAY_API size_t hurray_dtype_alias_count(void);
HURRAY_API const char *hurray_dtype_alias_at(size_t i, uint8_t *tag);
/* OK for named and private tags; INVALID_TAG / RESERVED_TAG otherwise, with
 * `field` in the error record. */
HURRAY_API HURRAY_NODISCARD int hurray_dtype_check_tag(uint8_t tag, const char *field,
                                                       struct hurray_error *err);
/* Bits of a named tag, 0 for private/reserved/invalid. */
HURRAY_API uint16_t hurray_dtype_bits(uint8_t tag);
/* ceil(count * bits / 8) with overflow checks (HR-PACK-3). UNSUPPORTED for a
 * private type, INVALID_TAG/RESERVED_TAG for others, OVERFLOW past 2^64-1. */
HURRAY_API HURRAY_NODISCARD int hurray_buffer_size_bytes(uint8_t dtype, uint64_t count,
                                                         uint64_t *out,
                                                         struct hurray_error *err);

/* A binary64 value as an element code of a floating-point type
 * (element-types.md § Encoding values, HR-DTYPE-6 … 8): rounded once to
 * nearest, ties to even (float8_e8m0fnu: ties up); the code's bits are the
 * low `bits` of *code, sign bit highest (packing is the caller's: memory-layout.md
 * § Sub-byte packing). float64 is the identity. RANGE for a finite value past
 * the type's range where the type refuses overflow (float6 and float4
 * saturate instead); ARGUMENT for a value the type has no encoding for (NaN,
 * an infinity, and for float8_e8m0fnu zero and negative values) and for a tag
 * that is not a floating-point type. */
HURRAY_API HURRAY_NODISCARD int hurray_float_encode(uint8_t dtype, double value, uint64_t *code,
                                                    struct hurray_error *err);
/* The exact binary64 value of an element code (a NaN code gives a NaN, with the code's sign
 * where the type has one). ARGUMENT for a code with bits past the type's width or a tag that
 * is not a floating-point type. */
HURRAY_API HURRAY_NODISCARD int hurray_float_decode(uint8_t dtype, uint64_t code, double *value,
                                                    struct hurray_error *err);

HURRAY_EXTERN_C_END

#endif
