/* Quantization descriptors. docs/spec/quantization.md */
#ifndef HURRAY_QUANT_H
#define HURRAY_QUANT_H

#include <stddef.h>
#include <stdint.h>
#include "hurray/export.h"
#include "hurray/limit.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

struct hurray_layout;

enum hurray_quant_scheme {
    HURRAY_QUANT_PER_TENSOR_AFFINE = 0x01,
    HURRAY_QUANT_PER_CHANNEL_AFFINE = 0x02,
    HURRAY_QUANT_BLOCK_AFFINE = 0x03,
    HURRAY_QUANT_NF4 = 0x04,
    HURRAY_QUANT_MX = 0x05,
    HURRAY_QUANT_NVFP4 = 0x06
};

#define HURRAY_NO_BUFFER 0xFFu
#define HURRAY_NF4_DOUBLE_QUANT 0x01u

/* Fields meaningful per scheme (others zero; absent buffer indices 0xFF). */
struct hurray_quant {
    uint8_t scheme;
    uint8_t axis;              /* per_channel, block, mx, nvfp4 */
    uint8_t flags;             /* nf4 */
    uint8_t scale_buffer;      /* per_channel, block, mx, nvfp4 */
    uint8_t zero_point_buffer; /* per_channel, block (0xFF = symmetric) */
    uint8_t scale_dtype;       /* per_channel, block */
    uint8_t zero_point_dtype;  /* per_channel, block (0 when absent) */
    uint8_t absmax_buffer;        /* nf4 */
    uint8_t nested_absmax_buffer; /* nf4 (0xFF without double quant) */
    uint8_t quant_map_buffer;     /* nf4 (0xFF without double quant) */
    uint32_t block_size;          /* block, nf4, mx (32), nvfp4 (16) */
    uint32_t nested_block_size;   /* nf4 */
    double scale;                 /* per_tensor */
    int64_t zero_point;           /* per_tensor */
    float nested_offset;          /* nf4 */
    float tensor_scale;           /* nvfp4 */
};

/* "per_tensor_affine", ...; NULL if not named. */
HURRAY_API const char *hurray_quant_scheme_name(uint8_t scheme);
HURRAY_API int hurray_quant_scheme_tag_kind(uint8_t scheme);
/* Payload length of a scheme (24 or 16). */
HURRAY_API HURRAY_NODISCARD int hurray_quant_payload_length(uint8_t scheme, uint32_t *len,
                                                            struct hurray_error *err);
/* Extra buffers the section owns (Q). */
HURRAY_API HURRAY_NODISCARD int hurray_quant_buffer_count(const struct hurray_quant *q,
                                                          int *count,
                                                          struct hurray_error *err);
/* Context-free checks: tags, reserved fields, flags, finite positive scales,
 * fixed block sizes, absent-buffer conventions. Run by encode and decode. */
HURRAY_API HURRAY_NODISCARD int hurray_quant_check(const struct hurray_quant *q,
                                                   struct hurray_error *err);
/* Standalone encoding = section payload (HR-QUANT-1). */
HURRAY_API HURRAY_NODISCARD int hurray_quant_encode(const struct hurray_quant *q, uint8_t *dst,
                                                    size_t cap, size_t *written,
                                                    struct hurray_error *err);
/* `len` must be exactly the scheme's payload length (LENGTH otherwise). */
HURRAY_API HURRAY_NODISCARD int hurray_quant_decode(const uint8_t *src, size_t len,
                                                    struct hurray_quant *out,
                                                    struct hurray_error *err);
/* Context checks (tier 3): element type, layout compatibility, axis range,
 * zero-point range, buffer indices against layout_buffer_count (-1 if
 * unknown) and buffer_count. `shape` has `rank` extents. */
HURRAY_API HURRAY_NODISCARD int hurray_quant_validate(const struct hurray_quant *q, uint8_t dtype,
                                                      const struct hurray_layout *layout,
                                                      uint8_t rank, const uint64_t *shape,
                                                      int layout_buffer_count,
                                                      unsigned buffer_count,
                                                      struct hurray_error *err);
/* Required byte size of each of the section's Q buffers, in section order;
 * known[i] = 0 when it depends on a dynamic extent. */
HURRAY_API HURRAY_NODISCARD int hurray_quant_required_sizes(const struct hurray_quant *q,
                                                            uint8_t rank, const uint64_t *shape,
                                                            uint64_t sizes[3], uint8_t known[3],
                                                            struct hurray_error *err);
HURRAY_API int hurray_quant_equal(const struct hurray_quant *a, const struct hurray_quant *b);

HURRAY_EXTERN_C_END

#endif
