/* The binary descriptor: decode, validate, encode. docs/spec/descriptor.md */
#ifndef HURRAY_DESCRIPTOR_H
#define HURRAY_DESCRIPTOR_H

#include <stddef.h>
#include <stdint.h>
#include "hurray/alloc.h"
#include "hurray/export.h"
#include "hurray/layout.h"
#include "hurray/limit.h"
#include "hurray/quant.h"
#include "hurray/sections.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

#define HURRAY_DESCRIPTOR_MAGIC "HRYD"
#define HURRAY_DESCRIPTOR_HEADER_BYTES 32u
#define HURRAY_DESCRIPTOR_MIN_BYTES 40u
#define HURRAY_BUFFER_ENTRY_BYTES 16u

enum hurray_sync_mode {
    HURRAY_SYNC_PRODUCER_SYNCED = 0x01,
    HURRAY_SYNC_EVENT = 0x02,
    HURRAY_SYNC_STREAM = 0x03
};

/* One buffer-table entry (buffer-protocol.md § Buffer table entry). */
struct hurray_buffer_desc {
    uint64_t size;
    uint8_t alignment_log2;
    uint8_t sync_mode;
};

/* A decoded (or caller-built) descriptor. Plain data: safe to memcpy only when
 * `owned` is NULL; use hurray_descriptor_copy otherwise. Large (~16 KiB):
 * prefer heap or static storage in deep call chains. */
struct hurray_descriptor {
    uint8_t version_major;
    uint8_t version_minor;
    uint8_t dtype;
    uint8_t device;
    uint8_t memory_class;
    uint8_t rank;
    uint8_t buffer_count;
    uint64_t byte_offset;
    uint64_t shape[HURRAY_MAX_RANK];
    struct hurray_buffer_desc buffers[HURRAY_MAX_BUFFERS];
    struct hurray_layout layout;
    uint8_t has_quant;
    uint8_t has_statistics;
    uint8_t has_shard;
    uint8_t has_role;
    struct hurray_quant quant;
    struct hurray_statistics statistics;
    struct hurray_shard shard;
    uint8_t role;
    /* Unknown sections carried verbatim, ascending type (interleaved with the
     * known ones by type order when encoded). */
    uint8_t opaque_count;
    struct hurray_opaque_section opaque[HURRAY_MAX_SECTIONS];
    /* Ownership of bytes that layout.opaque / opaque[i].data point into, when
     * this descriptor was decoded or copied. NULL for caller-built ones. */
    uint8_t *owned;
    size_t owned_len;
    const struct hurray_allocator *allocator;
};

struct hurray_decode_options {
    const struct hurray_limits *limits;       /* NULL: defaults */
    const struct hurray_allocator *allocator; /* NULL: malloc/free */
};

/* Zeroes `d` and sets version 1.0, row_major, cpu/standard, rank 0. */
HURRAY_API void hurray_descriptor_init(struct hurray_descriptor *d);
/* Frees what `d` owns and re-initialises it. NULL-tolerant. */
HURRAY_API void hurray_descriptor_reset(struct hurray_descriptor *d);

/* Steps 1-3 of the decoding order: enough of the header to know the length.
 * OK with *encoded_len set, or TRUNCATED / BAD_MAGIC / VERSION /
 * RESERVED_NONZERO / LENGTH / LIMIT. For streams. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_peek_length(const uint8_t *src, size_t len,
                                                              const struct hurray_limits *limits,
                                                              uint32_t *encoded_len,
                                                              struct hurray_error *err);
/* Full strict decode (descriptor.md § Decoding order) of the descriptor at the
 * start of src; trailing bytes are ignored. On success `out` owns copies of
 * any opaque bytes (reset it when done) and *consumed = encoded_len. On
 * failure `out` is left reset. `out` must have been initialised or reset. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_decode(const uint8_t *src, size_t len,
                                                         const struct hurray_decode_options *opt,
                                                         struct hurray_descriptor *out,
                                                         size_t *consumed,
                                                         struct hurray_error *err);
/* Every rule decode enforces after parsing: tags, ranges, reserved-by-value
 * fields, then the three validation tiers against the declared buffer table. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_validate(const struct hurray_descriptor *d,
                                                           const struct hurray_limits *limits,
                                                           struct hurray_error *err);
/* Exact canonical length; fails if the descriptor does not validate. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_encoded_len(const struct hurray_descriptor *d,
                                                              size_t *len,
                                                              struct hurray_error *err);
/* Writes the canonical bytes. ARGUMENT if cap is too small (nothing written
 * past cap). Fails, writing nothing useful, if the descriptor does not validate. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_encode(const struct hurray_descriptor *d,
                                                         uint8_t *dst, size_t cap,
                                                         size_t *written,
                                                         struct hurray_error *err);
/* Deep copy (opaque bytes duplicated with `allocator`, NULL = default). `dst`
 * must be initialised; it is reset first. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_copy(struct hurray_descriptor *dst,
                                                       const struct hurray_descriptor *src,
                                                       const struct hurray_allocator *allocator,
                                                       struct hurray_error *err);
/* 1 when equal in the sense of HR-DESC-7, else 0. */
HURRAY_API int hurray_descriptor_equal(const struct hurray_descriptor *a,
                                       const struct hurray_descriptor *b);
/* Element count of the shape (HR-SHAPE-3): *resolved = 0 when a dynamic
 * extent leaves it unknown (then *count is the product of resolved extents). */
HURRAY_API HURRAY_NODISCARD int hurray_shape_element_count(uint8_t rank, const uint64_t *shape,
                                                           uint64_t *count, int *resolved,
                                                           struct hurray_error *err);
/* Layout buffer count L (-1 unknown) plus quantization Q. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_expected_buffer_count(
    const struct hurray_descriptor *d, int *count, struct hurray_error *err);
/* Required minimum size of every buffer in the table (tier 2 inputs).
 * known[i] = 0 where the requirement cannot be evaluated (dynamic extent,
 * extension width, private/unknown layout). Requires tier 3 and tier 1 to hold. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_required_sizes(
    const struct hurray_descriptor *d, uint64_t sizes[HURRAY_MAX_BUFFERS],
    uint8_t known[HURRAY_MAX_BUFFERS], struct hurray_error *err);
/* "producer_synced", "event", "stream"; NULL otherwise. */
HURRAY_API const char *hurray_sync_mode_name(uint8_t mode);
HURRAY_API int hurray_sync_mode_tag_kind(uint8_t mode);

HURRAY_EXTERN_C_END

#endif
