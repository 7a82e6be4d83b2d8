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

/* A decoded (or caller-built) descriptor: a small header of scalars plus
 * spans (pointer + count) for everything variable-sized, and a pointer to
 * each optional section's record (quant, statistics, shard: NULL when absent).
 *
 * Storage. Every span a descriptor owns (shape, buffers, the layout's and
 * the shard's rank-sized parameters, the quant, statistics and shard records,
 * the opaque section records and every opaque byte) lives in ONE block, `storage` (`storage_len` bytes, from
 * `allocator`, NULL = default). Decoding sizes that block exactly from the
 * parsed counts; the setters below rebuild it (copying the spans already
 * there), so a descriptor built with them always owns exactly one block (or
 * none, when every span is empty). Read the spans with the usual syntax:
 * d->shape[k] (k < rank), d->buffers[i] (i < buffer_count),
 * d->opaque[j] (j < opaque_count), d->layout.strides[k], d->quant->scheme,
 * d->shard->global_shape[k] (the last two when the pointer is not NULL).
 * An empty span is NULL (check the length before handing a span to memcpy).
 * The header is 200 bytes on LP64; nothing in it is a fixed-size array.
 *
 * Writing. Scalars (dtype, device, memory_class, byte_offset, version, the
 * layout's scalar parameters) are assigned directly. Spans are written only
 * through the setters, which keep `rank`, `buffer_count` and `opaque_count`
 * (the spans' lengths) in step with them; a caller never writes through a
 * span. A caller may instead point a span (or a section record) at memory of
 * its own, setting its length with it (a borrowed view, e.g. a descriptor on the stack for one
 * call: reset frees only `storage`; hurray_descriptor_copy makes an owning
 * copy). Every function that reads a descriptor refuses (ARGUMENT) a NULL span
 * of non-zero length instead of dereferencing it.
 *
 * Lifecycle (the rule for every libhurray type whose struct is public):
 * hurray_descriptor_init before first use, hurray_descriptor_reset to free
 * what it owns (it is then initialised again), hurray_descriptor_move to hand
 * the storage to another descriptor. Never memcpy a descriptor that owns
 * storage (two owners); use _move or _copy. */
struct hurray_descriptor {
    uint8_t version_major;
    uint8_t version_minor;
    uint8_t dtype;
    uint8_t device;
    uint8_t memory_class;
    uint8_t rank;         /* length of shape (and of the rank-sized layout/shard spans) */
    uint8_t buffer_count; /* length of buffers */
    uint8_t opaque_count; /* length of opaque */
    uint8_t has_role;
    uint8_t role;
    uint64_t byte_offset;
    const uint64_t *shape;
    const struct hurray_buffer_desc *buffers;
    /* Unknown sections carried verbatim, ascending type (interleaved with the
     * known ones by type order when encoded). */
    const struct hurray_opaque_section *opaque;
    struct hurray_layout layout;
    /* The optional sections, each a record in the storage block (or borrowed,
     * like any span), NULL when the descriptor has none: most have none, so
     * the header carries a pointer for each, not the record. */
    const struct hurray_quant *quant;
    const struct hurray_statistics *statistics;
    const struct hurray_shard *shard;
    /* The one block the spans live in (NULL when every span is empty or
     * borrowed), its size, and the allocator it came from. */
    void *storage;
    size_t storage_len;
    const struct hurray_allocator *allocator;
};

struct hurray_decode_options {
    const struct hurray_limits *limits;       /* NULL: defaults */
    const struct hurray_allocator *allocator; /* NULL: malloc/free */
};

/* Sets version 1.0, row_major, cpu/standard, rank 0, no buffers, no
 * sections, every span NULL, no storage, the default allocator. To build with
 * another allocator, assign `allocator` after init, before the first setter. */
HURRAY_API void hurray_descriptor_init(struct hurray_descriptor *d);
/* Frees what `d` owns and re-initialises it (keeping its allocator). NULL-tolerant. */
HURRAY_API void hurray_descriptor_reset(struct hurray_descriptor *d);
/* Moves everything `src` holds, storage included, into `dst` (reset first)
 * and leaves `src` initialised. dst == src does nothing. NULL-tolerant. */
HURRAY_API void hurray_descriptor_move(struct hurray_descriptor *dst,
                                       struct hurray_descriptor *src);

/* ---- builder setters ------------------------------------------------------
 * Each copies what it is given into d's storage block (rebuilding the block
 * once, with the spans already there) and returns OK, or ARGUMENT / NOMEM
 * leaving `d` unchanged. None validates values: hurray_descriptor_validate
 * (and encode) do. */

/* The shape: rank <= 64 extents (shape may be NULL when rank is 0). When the
 * rank changes, every rank-sized span the layout's tag uses (strided:
 * strides; tiled: strides, inner_strides, tile_shape; csf: fiber_counts,
 * mode_order) and, when there is a shard section, the shard's global_shape
 * and global_offset, are replaced by zeros of the new rank (fiber_counts by
 * rank - 1 zeros): values stated for other dimensions are dropped, never
 * reinterpreted, and no span is left shorter than the rank. With the same
 * rank they are kept. So set the shape first, then the layout and shard. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_set_shape(struct hurray_descriptor *d,
                                                            uint8_t rank, const uint64_t *shape,
                                                            struct hurray_error *err);
/* The buffer table: count entries (bufs may be NULL when count is 0). */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_set_buffers(
    struct hurray_descriptor *d, uint8_t count, const struct hurray_buffer_desc *bufs,
    struct hurray_error *err);
/* Entry i of the table (i < buffer_count, else ARGUMENT). */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_set_buffer(struct hurray_descriptor *d,
                                                             uint8_t i,
                                                             const struct hurray_buffer_desc *b,
                                                             struct hurray_error *err);
/* The layout: its scalars, and deep copies of the spans its tag uses, for
 * d->rank dimensions (strided: strides; tiled: tile_shape, strides,
 * inner_strides; csf: fiber_counts, mode_order; private and reserved tags:
 * opaque). Spans the tag does not use are ignored (left NULL). ARGUMENT for a
 * NULL span the tag needs, or opaque bytes on a named layout. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_set_layout(struct hurray_descriptor *d,
                                                             const struct hurray_layout *layout,
                                                             struct hurray_error *err);
/* The quantization section (its record copied into the storage block), or
 * none when q is NULL (the block keeps the record's bytes until the next
 * rebuild, as after clear_opaque_sections). */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_set_quant(struct hurray_descriptor *d,
                                                            const struct hurray_quant *q,
                                                            struct hurray_error *err);
/* The statistics section (its record copied), or none when s is NULL (likewise). */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_set_statistics(
    struct hurray_descriptor *d, const struct hurray_statistics *s, struct hurray_error *err);
/* The shard section, its record and spans copied for d->rank dimensions, or
 * none when s is NULL (its record and spans are dropped; the block keeps their bytes until the next
 * rebuild, as after clear_opaque_sections). */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_set_shard(struct hurray_descriptor *d,
                                                            const struct hurray_shard *s,
                                                            struct hurray_error *err);
/* The member-role section (HR-ROLE-1 values), and its removal. */
HURRAY_API void hurray_descriptor_set_role(struct hurray_descriptor *d, uint8_t role);
HURRAY_API void hurray_descriptor_clear_role(struct hurray_descriptor *d);
/* Appends an unknown section carried verbatim (its `length` bytes copied).
 * Sections must be added in ascending type order (validation checks it).
 * ARGUMENT when 255 are already there or data is NULL with length > 0. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_add_opaque_section(
    struct hurray_descriptor *d, uint8_t type, uint8_t flags, const uint8_t *data,
    uint32_t length, struct hurray_error *err);
/* Drops every unknown section. */
HURRAY_API void hurray_descriptor_clear_opaque_sections(struct hurray_descriptor *d);

/* Steps 1-3 of the decoding order: enough of the header to know the length.
 * OK with *encoded_len set, or TRUNCATED / BAD_MAGIC / VERSION /
 * RESERVED_NONZERO / LENGTH / LIMIT. For streams. */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_peek_length(const uint8_t *src, size_t len,
                                                              const struct hurray_limits *limits,
                                                              uint32_t *encoded_len,
                                                              struct hurray_error *err);
/* Full strict decode (descriptor.md § Decoding order) of the descriptor at the
 * start of src; trailing bytes are ignored. On success `out` owns one storage
 * block, sized exactly for its spans and opaque bytes (reset it when done),
 * and *consumed = encoded_len. On failure `out` is left reset. `out` must
 * have been initialised. */
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
/* Writes the canonical bytes; *written (if not NULL) = their length. ARGUMENT
 * (field "cap") if dst is NULL or cap is too small: nothing is written past cap,
 * and *written = the length needed, so a caller grows its output by exactly that
 * and calls again. Fails, writing nothing useful and *written = 0, if the
 * descriptor does not validate (that status wins over a small cap). */
HURRAY_API HURRAY_NODISCARD int hurray_descriptor_encode(const struct hurray_descriptor *d,
                                                         uint8_t *dst, size_t cap,
                                                         size_t *written,
                                                         struct hurray_error *err);
/* Deep copy: every span and opaque byte of `src` (owned or borrowed) into one
 * new storage block of `dst`, from `allocator` (NULL = default). `dst` must
 * be initialised; it is reset first, and left reset on failure. */
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
