/* Layouts: tags, parameters, constraints. docs/spec/memory-layout.md, block-paged.md */
#ifndef HURRAY_LAYOUT_H
#define HURRAY_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include "hurray/export.h"
#include "hurray/limit.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

struct hurray_quant;

enum hurray_layout_tag {
    HURRAY_LAYOUT_ROW_MAJOR = 0x01,
    HURRAY_LAYOUT_COL_MAJOR = 0x02,
    HURRAY_LAYOUT_STRIDED = 0x03,
    HURRAY_LAYOUT_TILED = 0x04,
    HURRAY_LAYOUT_MORTON = 0x05,
    HURRAY_LAYOUT_HILBERT = 0x06,
    HURRAY_LAYOUT_COO = 0x10,
    HURRAY_LAYOUT_CSR = 0x11,
    HURRAY_LAYOUT_CSC = 0x12,
    HURRAY_LAYOUT_CSF = 0x13,
    HURRAY_LAYOUT_BLOCK_PAGED = 0x20,
    HURRAY_LAYOUT_COMPOSITE = 0x30
};

enum hurray_composite_rule {
    HURRAY_RULE_PARTITION = 0x01,
    HURRAY_RULE_OVERLAY = 0x02,
    HURRAY_RULE_GROUP = 0x03
};

enum hurray_combine_op {
    HURRAY_COMBINE_NONE = 0x00, /* "not applicable": partition and group */
    HURRAY_COMBINE_REPLACE = 0x01,
    HURRAY_COMBINE_ADD = 0x02,
    HURRAY_COMBINE_MAX = 0x03,
    HURRAY_COMBINE_MIN = 0x04
};

/* A layout and its parameters. Which fields are meaningful depends on `tag`;
 * the rest are zero (spans NULL). Rank is not stored here: it is the shape's.
 *
 * The rank-sized parameters are spans (pointer + the shape's rank), never
 * fixed arrays: in a descriptor they point into the descriptor's one storage
 * block (hurray_descriptor_set_layout copies them there); in a layout a
 * caller builds on its own they borrow the caller's arrays. A span the tag
 * uses must be non-NULL when rank > 0 (ARGUMENT otherwise); the others are
 * ignored. `opaque` (opaque_len bytes) likewise. */
struct hurray_layout {
    uint8_t tag;
    /* composite */
    uint8_t rule;
    uint8_t combine;
    uint32_t member_count;
    /* private extension: id; private: extension_data; unknown (reserved tag): all params */
    uint32_t extension_layout_id;
    uint32_t opaque_len;
    const uint8_t *opaque;
    /* strided: strides[rank]; tiled: outer strides[rank] (logical elements, signed) */
    const int64_t *strides;
    /* tiled: inner_strides[rank], tile_shape[rank] */
    const int64_t *inner_strides;
    const uint64_t *tile_shape;
    /* csf: fiber_counts[rank - 1], mode_order[rank] */
    const uint64_t *fiber_counts;
    const uint8_t *mode_order;
    /* coo, csr, csc, csf */
    uint64_t nnz;
    /* block_paged */
    uint64_t page_size;
    uint64_t num_pages;
    uint64_t num_seqs;
    uint64_t num_blocks;
};

/* hurray_tag_kind of a layout byte (HR-LAYOUT-2). */
HURRAY_API int hurray_layout_tag_kind(uint8_t tag);
/* "row_major", ..., "composite"; "extension" for private and reserved tags;
 * NULL for invalid tags. The one place layout names come from (HR-LAYOUT-4). */
HURRAY_API const char *hurray_layout_name(uint8_t tag);
/* Named layouts only: 1/0. */
HURRAY_API int hurray_layout_is_dense(uint8_t tag);
HURRAY_API int hurray_layout_is_virtual(uint8_t tag);
/* row_major, col_major, strided: positions are sum(index * stride). */
HURRAY_API int hurray_layout_is_stride_expressible(uint8_t tag);
/* Buffers the layout owns for a given rank; -1 when unknowable (private,
 * reserved). INVALID_TAG for invalid tags. */
HURRAY_API HURRAY_NODISCARD int hurray_layout_buffer_count(uint8_t tag, uint8_t rank,
                                                           int *count,
                                                           struct hurray_error *err);
/* Parameter block length (memory-layout.md table) for this layout and rank. */
HURRAY_API HURRAY_NODISCARD int hurray_layout_param_length(const struct hurray_layout *layout,
                                                           uint8_t rank, uint32_t *len,
                                                           struct hurray_error *err);
/* Composite rule / combine names ("partition", "add", ...); NULL if not named. */
HURRAY_API const char *hurray_composite_rule_name(uint8_t rule);
HURRAY_API const char *hurray_combine_op_name(uint8_t combine);
/* Value rules of the parameters themselves: composite rule/combine bytes,
 * member_count (>= 1, <= limits->max_composite_members), tile extents.
 * Run by hurray_layout_validate_against_shape (tier 3), hence by decode's
 * step 11 and by encode. */
HURRAY_API HURRAY_NODISCARD int hurray_layout_check_params(const struct hurray_layout *layout,
                                                           uint8_t rank,
                                                           const struct hurray_limits *limits,
                                                           struct hurray_error *err);
/* Tier 3: rank, extent and parameter constraints against a shape
 * (HR-LAYOUT-50). Dynamic extents (HURRAY_DYNAMIC_DIM) never violate one.
 * `limits` may be NULL (defaults). Does not look at dtype or buffers. */
HURRAY_API HURRAY_NODISCARD int hurray_layout_validate_against_shape(
    const struct hurray_layout *layout, uint8_t rank, const uint64_t *shape,
    const struct hurray_limits *limits, struct hurray_error *err);
/* Block-paged storage invariants (block-paged.md § Storage) over the raw
 * little-endian uint64 contents of seq_ptr and block_table. */
HURRAY_API HURRAY_NODISCARD int hurray_block_paged_validate_index_buffers(
    const struct hurray_layout *layout, const uint8_t *seq_ptr, uint64_t seq_ptr_bytes,
    const uint8_t *block_table, uint64_t block_table_bytes, struct hurray_error *err);
/* Index contents of a coo, csr or csc tensor (memory-layout.md § Index contents,
 * HR-LAYOUT-24) over the raw little-endian uint64 index buffers. COO passes its
 * `indices` buffer as `index` (and NULL, 0 as `ptr`); CSR and CSC pass the minor
 * indices (col_indices / row_indices) as `index` and the pointers (row_ptr /
 * col_ptr) as `ptr`. nnz is the layout's. INDEX naming the first bad entry,
 * BUFFER_SIZE for a short buffer, UNSUPPORTED for a dynamic extent. Every value
 * it accepts is below 2^63. */
HURRAY_API HURRAY_NODISCARD int hurray_sparse_validate_index_buffers(
    const struct hurray_layout *layout, uint8_t rank, const uint64_t *shape,
    const uint8_t *index, uint64_t index_bytes, const uint8_t *ptr, uint64_t ptr_bytes,
    struct hurray_error *err);
/* Encodings of an index array hurray_sparse_import_index_buffers reads
 * (memory-layout.md § Importing index arrays, HR-LAYOUT-25): the format's own, and the
 * host-order integer arrays other libraries hold (SciPy's int32 and int64). A signed
 * entry is sign-extended and read as uint64, so a negative one is a value >= 2^63,
 * which no extent admits. */
enum hurray_index_encoding {
    HURRAY_INDEX_U64LE = 0, /* little-endian uint64: the format's index buffers */
    HURRAY_INDEX_I64 = 1,   /* host-order int64 */
    HURRAY_INDEX_I32 = 2,   /* host-order int32 */
    HURRAY_INDEX_U32 = 3    /* host-order uint32 */
};
/* One index array to import: `bytes` readable at `data`, entries in `encoding`. `out`
 * (NULL: check only) receives the entries the layout reads as the format's little-endian
 * uint64, `out_bytes` writable there; it must not overlap `data` unless it is `data`
 * itself and the entries are 8 bytes wide (ARGUMENT). */
struct hurray_index_array {
    const void *data;
    uint64_t bytes;
    uint8_t encoding; /* enum hurray_index_encoding */
    void *out;
    uint64_t out_bytes;
};
/* The index contents check of hurray_sparse_validate_index_buffers -- the same rule,
 * order and messages -- over arrays in any hurray_index_encoding, each entry written to
 * its array's `out` in the same pass (HR-LAYOUT-25). COO passes `rank` arrays in `index`,
 * array d holding the nnz coordinates of dimension d (and NULL as `ptr`); CSR and CSC
 * pass the minor indices as `index[0]` and the pointers as `ptr`. A short array or
 * output is BUFFER_SIZE naming it (`indices[1]`, `col_indices`, `row_ptr`). On failure
 * the outputs hold unspecified bytes. */
HURRAY_API HURRAY_NODISCARD int hurray_sparse_import_index_buffers(
    const struct hurray_layout *layout, uint8_t rank, const uint64_t *shape,
    const struct hurray_index_array *index, const struct hurray_index_array *ptr,
    struct hurray_error *err);
/* block-paged.md § Quantization compatibility (HR-PAGED-3). */
HURRAY_API HURRAY_NODISCARD int hurray_block_paged_check_quantization(
    const struct hurray_layout *layout, uint8_t rank, const struct hurray_quant *quant,
    struct hurray_error *err);
/* Value equality of the meaningful fields for `rank` (opaque bytes compared). */
HURRAY_API int hurray_layout_equal(const struct hurray_layout *a, const struct hurray_layout *b,
                                   uint8_t rank);

HURRAY_EXTERN_C_END

#endif
