/* Layouts: the tag table, parameter blocks, constraints against a shape,
 * buffer-size requirements and the block-paged invariants.
 * docs/spec/memory-layout.md, block-paged.md */
#include "internal.h"

/* ---- the layout table (memory-layout.md § Layout tags, HR-LAYOUT-1) -------
 * One row per named layout. Buffer count = buffers_fixed + buffers_per_rank·rank
 * and parameter bytes = params_fixed + params_per_rank·rank. CSF's parameters
 * are nnz (8) + fiber_counts (8·(rank−1)) + mode_order (rank) = 9·rank bytes;
 * the zero padding to a multiple of 8 is the layout block's generic padding,
 * written and checked by the descriptor, not counted in param_length. */
struct layout_row {
    uint8_t tag;
    const char *name;
    uint8_t dense;
    uint8_t virtual_;
    uint8_t stride_expressible;
    uint8_t buffers_fixed;
    uint8_t buffers_per_rank;
    uint8_t params_fixed;
    uint8_t params_per_rank;
};

#define LAYOUT_ROWS(X)                                                                         \
    /* tag                        name           dense virt stride  buffers  params */        \
    X(HURRAY_LAYOUT_ROW_MAJOR, "row_major", 1, 0, 1, 1, 0, 0, 0)                               \
    X(HURRAY_LAYOUT_COL_MAJOR, "col_major", 1, 0, 1, 1, 0, 0, 0)                               \
    X(HURRAY_LAYOUT_STRIDED, "strided", 1, 0, 1, 1, 0, 0, 8)                                   \
    X(HURRAY_LAYOUT_TILED, "tiled", 1, 0, 0, 1, 0, 0, 24)                                      \
    X(HURRAY_LAYOUT_MORTON, "morton", 1, 0, 0, 1, 0, 0, 0)                                     \
    X(HURRAY_LAYOUT_HILBERT, "hilbert", 1, 0, 0, 1, 0, 0, 0)                                   \
    X(HURRAY_LAYOUT_COO, "coo", 0, 0, 0, 2, 0, 8, 0)                                           \
    X(HURRAY_LAYOUT_CSR, "csr", 0, 0, 0, 3, 0, 8, 0)                                           \
    X(HURRAY_LAYOUT_CSC, "csc", 0, 0, 0, 3, 0, 8, 0)                                           \
    X(HURRAY_LAYOUT_CSF, "csf", 0, 0, 0, 1, 2, 0, 9)                                           \
    X(HURRAY_LAYOUT_BLOCK_PAGED, "block_paged", 0, 0, 0, 3, 0, 32, 0)                          \
    X(HURRAY_LAYOUT_COMPOSITE, "composite", 0, 1, 0, 0, 0, 8, 0)

#define ROW(...) {__VA_ARGS__},
static const struct layout_row layout_table[] = {LAYOUT_ROWS(ROW)};
#undef ROW

/* By tag, its row's index + 1 (0: no row), made from the same row list (memory-layout.md § Layout tags). */
HRI_TAG_INDEX(LAYOUT_ROWS, row_by_tag);


/* Private extension parameters: extension_layout_id u32, reserved u32. */
#define PRIVATE_HEAD_BYTES 8u

static const struct layout_row *layout_row(uint8_t tag) {
    unsigned pos = tag < HRI_TAG_LIMIT ? row_by_tag[tag] : 0u;
    return pos ? &layout_table[pos - 1u] : NULL;
}

/* HR-LAYOUT-2: named, reserved, private or invalid; the four partition the
 * byte space. */
int hurray_layout_tag_kind(uint8_t tag) {
    return hri_tag_kind_with_private(tag, layout_row(tag) != NULL);
}

/* HR-LAYOUT-4: private and reserved tags share the name "extension". */
const char *hurray_layout_name(uint8_t tag) {
    const struct layout_row *row = layout_row(tag);
    if (row) return row->name;
    return hurray_layout_tag_kind(tag) == HURRAY_TAG_INVALID ? NULL : "extension";
}

int hurray_layout_is_dense(uint8_t tag) {
    const struct layout_row *row = layout_row(tag);
    return row ? row->dense : 0;
}

int hurray_layout_is_virtual(uint8_t tag) {
    const struct layout_row *row = layout_row(tag);
    return row ? row->virtual_ : 0;
}

int hurray_layout_is_stride_expressible(uint8_t tag) {
    const struct layout_row *row = layout_row(tag);
    return row ? row->stride_expressible : 0;
}

/* An invalid layout tag is refused with INVALID_TAG (HR-LAYOUT-3); reserved
 * and private ones are accepted. */
static int check_layout_tag(uint8_t tag, struct hurray_error *err) {
    HR_FAIL_IF(hurray_layout_tag_kind(tag) == HURRAY_TAG_INVALID, err, HURRAY_E_INVALID_TAG,
               "layout", "layout: tag 0x%02X is invalid", tag);
    return HURRAY_OK;
}

static int check_rank(uint8_t rank, struct hurray_error *err) {
    HR_FAIL_IF(rank > HURRAY_MAX_RANK, err, HURRAY_E_LIMIT, "rank",
               "rank: %u exceeds the format maximum %d", (unsigned)rank, HURRAY_MAX_RANK);
    return HURRAY_OK;
}

int hurray_layout_buffer_count(uint8_t tag, uint8_t rank, int *count,
                               struct hurray_error *err) {
    HR_FAIL_IF(!count, err, HURRAY_E_ARGUMENT, "count", "layout_buffer_count: count is NULL");
    HR_TRY(check_layout_tag(tag, err));
    const struct layout_row *row = layout_row(tag);
    /* Private (HR-LAYOUT-40) and unknown (HR-LAYOUT-41) layouts: unknowable. */
    *count = row ? row->buffers_fixed + row->buffers_per_rank * (int)rank : -1;
    return HURRAY_OK;
}

int hurray_layout_param_length(const struct hurray_layout *layout, uint8_t rank, uint32_t *len,
                               struct hurray_error *err) {
    HR_FAIL_IF(!layout || !len, err, HURRAY_E_ARGUMENT, "layout",
               "layout_param_length: NULL argument");
    const struct layout_row *row = layout_row(layout->tag);
    if (!row) HR_TRY(check_layout_tag(layout->tag, err)); /* a named tag is valid */
    HR_TRY(check_rank(rank, err));
    if (row) {
        *len = row->params_fixed + (uint32_t)row->params_per_rank * rank;
        return HURRAY_OK;
    }
    uint32_t head = hurray_layout_tag_kind(layout->tag) == HURRAY_TAG_PRIVATE
                        ? PRIVATE_HEAD_BYTES : 0;
    HR_FAIL_IF(layout->opaque_len > UINT32_MAX - head, err, HURRAY_E_LENGTH,
               "layout.param_length", "layout.param_length: %u bytes of extension data do "
               "not fit a u32 parameter length", (unsigned)layout->opaque_len);
    *len = head + layout->opaque_len;
    return HURRAY_OK;
}

/* ---- composite rule and combine (memory-layout.md § Composite head) ------- */

static const char *const rule_names[] = {"partition", "overlay", "group"};
static const char *const combine_names[] = {"replace", "add", "max", "min"};

static int rule_is_named(uint8_t rule) {
    return rule >= HURRAY_RULE_PARTITION && rule <= HURRAY_RULE_GROUP;
}
static int combine_is_named(uint8_t combine) {
    return combine >= HURRAY_COMBINE_REPLACE && combine <= HURRAY_COMBINE_MIN;
}

const char *hurray_composite_rule_name(uint8_t rule) {
    return rule_is_named(rule) ? rule_names[rule - 1] : NULL;
}

/* 0x00 means "not applicable" (partition, group) and has no name. */
const char *hurray_combine_op_name(uint8_t combine) {
    return combine_is_named(combine) ? combine_names[combine - 1] : NULL;
}

/* Rule bytes 0x00/0xFF are INVALID_TAG, the rest RESERVED_TAG (the rule space
 * has no private range). */
static int check_rule(uint8_t rule, struct hurray_error *err) {
    return hri_check_tag_kind(hri_tag_kind_plain(rule, rule_is_named(rule)), rule, 0,
                              "layout.rule", err);
}

/* Overlay requires replace/add/max/min (0x00 is INVALID_TAG for it);
 * partition and group require 0x00, and a named combine on them is
 * COMBINATION. Otherwise 0xFF is INVALID_TAG and unassigned bytes are
 * RESERVED_TAG, whatever the rule. */
static int check_combine(uint8_t rule, uint8_t combine, struct hurray_error *err) {
    /* the same INVALID_TAG, with a message that says what is missing */
    HR_FAIL_IF(rule == HURRAY_RULE_OVERLAY && combine == HURRAY_COMBINE_NONE, err,
               HURRAY_E_INVALID_TAG, "layout.combine",
               "layout.combine: an overlay composite requires a combine operation (replace, "
               "add, max or min); 0x00 names none");
    if (rule == HURRAY_RULE_OVERLAY || combine != HURRAY_COMBINE_NONE) {
        int kind = hri_tag_kind_plain(combine, combine_is_named(combine));
        HR_TRY(hri_check_tag_kind(kind, combine, 0, "layout.combine", err));
    }
    HR_FAIL_IF(rule != HURRAY_RULE_OVERLAY && combine != HURRAY_COMBINE_NONE, err,
               HURRAY_E_COMBINATION, "layout.combine",
               "layout.combine: %s composites take combine 0x00, not %s (0x%02X)",
               hurray_composite_rule_name(rule), hurray_combine_op_name(combine), combine);
    return HURRAY_OK;
}

/* member_count >= 1 (CONSTRAINT) and <= max_composite_members (LIMIT). */
static int check_member_count(uint32_t count, const struct hurray_limits *limits,
                              struct hurray_error *err) {
    uint64_t max = limits ? limits->max_composite_members : HURRAY_DEFAULT_MAX_COMPOSITE_MEMBERS;
    HR_FAIL_IF(count == 0, err, HURRAY_E_CONSTRAINT, "layout.member_count",
               "layout.member_count: a composite has at least one member");
    HR_FAIL_IF(count > max, err, HURRAY_E_LIMIT, "layout.member_count",
               "layout.member_count: %u members exceed the max_composite_members limit %llu",
               (unsigned)count, (unsigned long long)max);
    return HURRAY_OK;
}

/* HR-LAYOUT-12: every tile extent >= 1 and <= 2^63-1 (CONSTRAINT). */
static int check_tile_shape(const uint64_t *tile, uint8_t rank, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned k = 0; k < rank; k++) {
        HR_FAIL_IF(tile[k] == 0 || tile[k] > HURRAY_MAX_EXTENT, err, HURRAY_E_CONSTRAINT,
                   hri_fieldf(f, "layout.tile_shape[%u]", k),
                   "layout.tile_shape[%u]: %llu is not in [1, 2^63-1]", k,
                   (unsigned long long)tile[k]);
    }
    return HURRAY_OK;
}

static int check_opaque(const struct hurray_layout *l, struct hurray_error *err) {
    HR_FAIL_IF(l->opaque_len != 0 && !l->opaque, err, HURRAY_E_ARGUMENT, "layout.opaque",
               "layout.opaque: NULL with opaque_len %u", (unsigned)l->opaque_len);
    uint32_t len = 0;
    return hurray_layout_param_length(l, 0, &len, err);
}

/* A span the tag reads, `n` entries long, must exist. */
static int check_span(const void *p, unsigned n, const char *field, struct hurray_error *err) {
    HR_FAIL_IF(n > 0 && !p, err, HURRAY_E_ARGUMENT, field, "%s: NULL span of %u entries",
               field, n);
    return HURRAY_OK;
}

int hri_layout_check_spans(const struct hurray_layout *l, uint8_t rank,
                           struct hurray_error *err) {
    switch (l->tag) {
    case HURRAY_LAYOUT_STRIDED:
        return check_span(l->strides, rank, "layout.strides", err);
    case HURRAY_LAYOUT_TILED:
        HR_TRY(check_span(l->tile_shape, rank, "layout.tile_shape", err));
        HR_TRY(check_span(l->strides, rank, "layout.outer_strides", err));
        return check_span(l->inner_strides, rank, "layout.inner_strides", err);
    case HURRAY_LAYOUT_CSF:
        HR_TRY(check_span(l->fiber_counts, rank ? rank - 1u : 0u, "layout.fiber_counts", err));
        return check_span(l->mode_order, rank, "layout.mode_order", err);
    default:
        return layout_row(l->tag) ? HURRAY_OK
                                  : check_span(l->opaque, l->opaque_len, "layout.opaque", err);
    }
}

int hurray_layout_check_params(const struct hurray_layout *layout, uint8_t rank,
                               const struct hurray_limits *limits, struct hurray_error *err) {
    HR_FAIL_IF(!layout, err, HURRAY_E_ARGUMENT, "layout", "layout_check_params: layout is NULL");
    HR_TRY(check_layout_tag(layout->tag, err));
    HR_TRY(check_rank(rank, err));
    HR_TRY(hri_layout_check_spans(layout, rank, err));
    return hri_layout_check_param_values(layout, rank, limits, err);
}

int hri_layout_check_param_values(const struct hurray_layout *layout, uint8_t rank,
                                  const struct hurray_limits *limits, struct hurray_error *err) {
    switch (layout->tag) {
    case HURRAY_LAYOUT_TILED:
        return check_tile_shape(layout->tile_shape, rank, err);
    case HURRAY_LAYOUT_COMPOSITE:
        HR_TRY(check_rule(layout->rule, err));
        HR_TRY(check_combine(layout->rule, layout->combine, err));
        return check_member_count(layout->member_count, limits, err);
    default:
        return layout_row(layout->tag) ? HURRAY_OK : check_opaque(layout, err);
    }
}

/* ---- parameter blocks (memory-layout.md, one § per layout) ----------------- */

/* HR-LAYOUT-12: tile_shape u64[rank], outer_strides i64[rank], inner_strides i64[rank]. */
static int read_tiled(struct hri_cursor *c, uint8_t rank, struct hurray_layout *out,
                      struct hri_layout_arrays *a, struct hurray_error *err) {
    HR_TRY(hri_read_u64s_i(c, a->tile_shape, rank, "layout.tile_shape[%u]", err));
    HR_TRY(hri_read_i64s_i(c, a->strides, rank, "layout.outer_strides[%u]", err));
    HR_TRY(hri_read_i64s_i(c, a->inner_strides, rank, "layout.inner_strides[%u]", err));
    out->tile_shape = a->tile_shape;
    out->strides = a->strides;
    out->inner_strides = a->inner_strides;
    return HURRAY_OK;
}

/* HR-LAYOUT-23: nnz u64, fiber_counts u64[rank−1], mode_order u8[rank]:
 * 9·rank bytes. Rank 0 (refused by tier 3) has none, as the table's formula
 * says. */
static int read_csf(struct hri_cursor *c, uint8_t rank, struct hurray_layout *out,
                    struct hri_layout_arrays *a, struct hurray_error *err) {
    out->fiber_counts = a->fiber_counts;
    out->mode_order = a->mode_order;
    if (rank == 0) return HURRAY_OK;
    HR_TRY(hri_read_u64(c, &out->nnz, "layout.nnz", err));
    HR_TRY(hri_read_u64s_i(c, a->fiber_counts, rank - 1u, "layout.fiber_counts[%u]", err));
    return hri_read_u8s_i(c, a->mode_order, rank, "layout.mode_order[%u]", err);
}

/* HR-PAGED-1: page_size, num_pages, num_seqs, num_blocks (u64 each). */
static int read_block_paged(struct hri_cursor *c, struct hurray_layout *out,
                            struct hurray_error *err) {
    HR_TRY(hri_read_u64(c, &out->page_size, "layout.page_size", err));
    HR_TRY(hri_read_u64(c, &out->num_pages, "layout.num_pages", err));
    HR_TRY(hri_read_u64(c, &out->num_seqs, "layout.num_seqs", err));
    return hri_read_u64(c, &out->num_blocks, "layout.num_blocks", err);
}

/* HR-LAYOUT-30: rule u8, combine u8, reserved u16, member_count u32. The
 * tags are checked as they are read (offset order); member_count's
 * CONSTRAINT and LIMIT belong to hurray_layout_check_params. */
static int read_composite(struct hri_cursor *c, struct hurray_layout *out,
                          struct hurray_error *err) {
    HR_TRY(hri_read_u8(c, &out->rule, "layout.rule", err));
    HR_TRY(check_rule(out->rule, err));
    HR_TRY(hri_read_u8(c, &out->combine, "layout.combine", err));
    HR_TRY(check_combine(out->rule, out->combine, err));
    HR_TRY(hri_read_reserved(c, 2, "layout.reserved", err));
    return hri_read_u32(c, &out->member_count, "layout.member_count", err);
}

/* HR-LAYOUT-40: extension_layout_id u32, reserved u32, extension_data. */
static int read_private(struct hri_cursor *c, struct hurray_layout *out,
                        struct hurray_error *err) {
    HR_TRY(hri_read_u32(c, &out->extension_layout_id, "layout.extension_layout_id", err));
    HR_TRY(hri_read_reserved(c, 4, "layout.reserved", err));
    out->opaque_len = (uint32_t)hri_cursor_left(c);
    return hri_read_bytes(c, out->opaque_len, &out->opaque, "layout.extension_data", err);
}

/* HR-LAYOUT-41: a reserved tag's parameters are opaque bytes. */
static int read_unknown(struct hri_cursor *c, struct hurray_layout *out,
                        struct hurray_error *err) {
    out->opaque_len = (uint32_t)hri_cursor_left(c);
    return hri_read_bytes(c, out->opaque_len, &out->opaque, "layout.params", err);
}

/* The exact parameter length the layout requires (descriptor.md § Decoding
 * order, step 8): fixed for named layouts, >= 8 for private ones, anything
 * (up to a u32) for unknown ones. */
static int check_param_length(const struct hri_cursor *c, uint8_t tag, uint8_t rank,
                              struct hurray_error *err) {
    size_t have = hri_cursor_left(c);
    const struct layout_row *row = layout_row(tag);
    HR_FAIL_IF(have > UINT32_MAX, err, HURRAY_E_LENGTH, "layout.param_length",
               "layout.param_length: %zu bytes do not fit a u32", have);
    if (row) {
        size_t want = row->params_fixed + (size_t)row->params_per_rank * rank;
        HR_FAIL_IF(have != want, err, HURRAY_E_LENGTH, "layout.param_length",
                   "layout.param_length: %s with rank %u has %zu parameter bytes, not %zu",
                   row->name, (unsigned)rank, have, want);
    } else if (hurray_layout_tag_kind(tag) == HURRAY_TAG_PRIVATE) {
        HR_FAIL_IF(have < PRIVATE_HEAD_BYTES, err, HURRAY_E_LENGTH, "layout.param_length",
                   "layout.param_length: a private layout has at least 8 parameter bytes, "
                   "not %zu", have);
    }
    return HURRAY_OK;
}

static int read_params_body(struct hri_cursor *c, uint8_t tag, uint8_t rank,
                            struct hurray_layout *out, struct hri_layout_arrays *a,
                            struct hurray_error *err) {
    switch (tag) {
    case HURRAY_LAYOUT_ROW_MAJOR:
    case HURRAY_LAYOUT_COL_MAJOR:
    case HURRAY_LAYOUT_MORTON:
    case HURRAY_LAYOUT_HILBERT:
        return HURRAY_OK;
    case HURRAY_LAYOUT_STRIDED:
        out->strides = a->strides;
        return hri_read_i64s_i(c, a->strides, rank, "layout.strides[%u]", err);
    case HURRAY_LAYOUT_TILED:
        return read_tiled(c, rank, out, a, err);
    case HURRAY_LAYOUT_COO:
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
        return hri_read_u64(c, &out->nnz, "layout.nnz", err);
    case HURRAY_LAYOUT_CSF:
        return read_csf(c, rank, out, a, err);
    case HURRAY_LAYOUT_BLOCK_PAGED:
        return read_block_paged(c, out, err);
    case HURRAY_LAYOUT_COMPOSITE:
        return read_composite(c, out, err);
    default:
        if (hurray_layout_tag_kind(tag) == HURRAY_TAG_PRIVATE) return read_private(c, out, err);
        return read_unknown(c, out, err);
    }
}

/* Decoding step 8: exact length, then the parameters' own tags and reserved
 * fields in offset order. Value constraints (tile extents, member_count) are
 * hurray_layout_check_params', which validate_against_shape runs. `limits`
 * is accepted for symmetry; no limit bounds the parameter block itself. */
int hri_layout_params_read(struct hri_cursor *c, uint8_t tag, uint8_t rank,
                           const struct hurray_limits *limits, struct hurray_layout *out,
                           struct hri_layout_arrays *arrays, struct hurray_error *err) {
    (void)limits;
    HR_FAIL_IF(!c || !out || !arrays, err, HURRAY_E_ARGUMENT, "layout",
               "layout_params_read: NULL argument");
    HR_TRY(check_layout_tag(tag, err));
    HR_TRY(check_rank(rank, err));
    memset(out, 0, sizeof *out);
    out->tag = tag;
    HR_TRY(check_param_length(c, tag, rank, err));
    HR_TRY(read_params_body(c, tag, rank, out, arrays, err));
    HR_FAIL_IF(hri_cursor_left(c) != 0, err, HURRAY_E_LENGTH, "layout.param_length",
               "layout.param_length: %zu parameter bytes left unread", hri_cursor_left(c));
    return HURRAY_OK;
}

static void write_csf(struct hri_writer *w, const struct hurray_layout *l, uint8_t rank) {
    if (rank == 0) return;
    hri_w_u64(w, l->nnz);
    for (unsigned k = 0; k + 1u < rank; k++) hri_w_u64(w, l->fiber_counts[k]);
    hri_w_bytes(w, l->mode_order, rank);
}

static void write_tiled(struct hri_writer *w, const struct hurray_layout *l, uint8_t rank) {
    for (unsigned k = 0; k < rank; k++) hri_w_u64(w, l->tile_shape[k]);
    for (unsigned k = 0; k < rank; k++) hri_w_i64(w, l->strides[k]);
    for (unsigned k = 0; k < rank; k++) hri_w_i64(w, l->inner_strides[k]);
}

static void write_extension(struct hri_writer *w, const struct hurray_layout *l) {
    if (hurray_layout_tag_kind(l->tag) == HURRAY_TAG_PRIVATE) {
        hri_w_u32(w, l->extension_layout_id);
        hri_w_zero(w, 4);
    }
    if (l->opaque_len && l->opaque) hri_w_bytes(w, l->opaque, l->opaque_len);
}

/* The parameter body, no header and no padding; exactly param_length bytes.
 * A rank above the format maximum writes nothing and marks the writer. */
void hri_layout_params_write(struct hri_writer *w, const struct hurray_layout *l, uint8_t rank) {
    if (!w || !l) return;
    if (rank > HURRAY_MAX_RANK) {
        w->overflowed = 1;
        return;
    }
    switch (l->tag) {
    case HURRAY_LAYOUT_STRIDED:
        for (unsigned k = 0; k < rank; k++) hri_w_i64(w, l->strides[k]);
        break;
    case HURRAY_LAYOUT_TILED:
        write_tiled(w, l, rank);
        break;
    case HURRAY_LAYOUT_COO:
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
        hri_w_u64(w, l->nnz);
        break;
    case HURRAY_LAYOUT_CSF:
        write_csf(w, l, rank);
        break;
    case HURRAY_LAYOUT_BLOCK_PAGED:
        hri_w_u64(w, l->page_size);
        hri_w_u64(w, l->num_pages);
        hri_w_u64(w, l->num_seqs);
        hri_w_u64(w, l->num_blocks);
        break;
    case HURRAY_LAYOUT_COMPOSITE:
        hri_w_u8(w, l->rule);
        hri_w_u8(w, l->combine);
        hri_w_zero(w, 2);
        hri_w_u32(w, l->member_count);
        break;
    default:
        if (!layout_row(l->tag)) write_extension(w, l);
        break;
    }
}

/* ---- shapes (memory-layout.md § Shape and dynamic dimensions) ------------- */

static int is_dynamic(uint64_t extent) { return extent == HURRAY_DYNAMIC_DIM; }

/* HR-SHAPE-1: every extent is resolved (<= 2^63-1) or the dynamic sentinel. */
static int check_extents(uint8_t rank, const uint64_t *shape, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned k = 0; k < rank; k++) {
        HR_FAIL_IF(!is_dynamic(shape[k]) && shape[k] > HURRAY_MAX_EXTENT, err, HURRAY_E_RANGE,
                   hri_fieldf(f, "shape[%u]", k),
                   "shape[%u]: %llu is neither <= 2^63-1 nor the dynamic sentinel", k,
                   (unsigned long long)shape[k]);
    }
    return HURRAY_OK;
}

/* HR-SHAPE-3: N is 1 for rank 0, 0 if any resolved extent is 0, otherwise the
 * checked product of the resolved extents (OVERFLOW past 2^64-1, even when a
 * dynamic extent leaves the true count unknown). *resolved = 0 when N is
 * unknown because of a dynamic extent (HR-SHAPE-4). */
static int element_count(uint8_t rank, const uint64_t *shape, uint64_t *n, int *resolved,
                         struct hurray_error *err) {
    *n = 1;
    *resolved = 1;
    for (unsigned k = 0; k < rank; k++) {
        if (shape[k] == 0) {
            *n = 0;
            return HURRAY_OK;
        }
    }
    for (unsigned k = 0; k < rank; k++) {
        if (is_dynamic(shape[k])) {
            *resolved = 0;
            continue;
        }
        HR_FAIL_IF(hri_mul_u64(*n, shape[k], n), err, HURRAY_E_OVERFLOW, "shape",
                   "shape: the product of the resolved extents exceeds 2^64-1");
    }
    return HURRAY_OK;
}

/* ---- constraints against a shape (tier 3, HR-LAYOUT-50) -------------------- */

static int fail_rank(const char *name, uint8_t rank, const char *want, struct hurray_error *err) {
    return hri_fail(err, HURRAY_E_CONSTRAINT, "rank", "rank: %s needs rank %s, not %u", name,
                    want, (unsigned)rank);
}

/* HR-LAYOUT-13: rank 2 or 3, every resolved extent a power of two >= 1. */
static int check_pow2_extents(const char *name, uint8_t rank, const uint64_t *shape,
                              struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned k = 0; k < rank; k++) {
        HR_FAIL_IF(!is_dynamic(shape[k]) && !hri_is_pow2_u64(shape[k]), err, HURRAY_E_CONSTRAINT,
                   hri_fieldf(f, "shape[%u]", k),
                   "shape[%u]: %s extents are powers of two >= 1, not %llu", k, name,
                   (unsigned long long)shape[k]);
    }
    return HURRAY_OK;
}

static int validate_morton(uint8_t rank, const uint64_t *shape, struct hurray_error *err) {
    if (rank != 2 && rank != 3) return fail_rank("morton", rank, "2 or 3", err);
    return check_pow2_extents("morton", rank, shape, err);
}

/* HR-LAYOUT-14: rank 2, n_0 = n_1, a power of two. */
static int validate_hilbert(uint8_t rank, const uint64_t *shape, struct hurray_error *err) {
    if (rank != 2) return fail_rank("hilbert", rank, "2", err);
    HR_FAIL_IF(!is_dynamic(shape[0]) && !is_dynamic(shape[1]) && shape[0] != shape[1], err,
               HURRAY_E_CONSTRAINT, "shape[1]",
               "shape[1]: hilbert needs a square shape, %llu != %llu",
               (unsigned long long)shape[0], (unsigned long long)shape[1]);
    return check_pow2_extents("hilbert", rank, shape, err);
}

/* HR-LAYOUT-20..22: nnz <= N when every extent is resolved. */
static int check_nnz(uint64_t nnz, uint8_t rank, const uint64_t *shape,
                     struct hurray_error *err) {
    uint64_t n = 0;
    int resolved = 0;
    HR_TRY(element_count(rank, shape, &n, &resolved, err));
    HR_FAIL_IF(resolved && nnz > n, err, HURRAY_E_CONSTRAINT, "layout.nnz",
               "layout.nnz: %llu exceeds the element count %llu", (unsigned long long)nnz,
               (unsigned long long)n);
    return HURRAY_OK;
}

static int validate_coo(const struct hurray_layout *l, uint8_t rank, const uint64_t *shape,
                        struct hurray_error *err) {
    if (rank < 1) return fail_rank("coo", rank, ">= 1", err);
    return check_nnz(l->nnz, rank, shape, err);
}

static int validate_compressed(const struct hurray_layout *l, uint8_t rank,
                               const uint64_t *shape, struct hurray_error *err) {
    if (rank != 2) return fail_rank(hurray_layout_name(l->tag), rank, "2", err);
    return check_nnz(l->nnz, rank, shape, err);
}

/* HR-LAYOUT-23: mode_order is a permutation of 0 .. rank-1. */
static int check_mode_order(const uint8_t *m, uint8_t rank, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    uint8_t seen[HURRAY_MAX_RANK] = {0};
    for (unsigned k = 0; k < rank; k++) {
        HR_FAIL_IF(m[k] >= rank || seen[m[k]], err, HURRAY_E_CONSTRAINT,
                   hri_fieldf(f, "layout.mode_order[%u]", k),
                   "layout.mode_order[%u]: %u %s", k, (unsigned)m[k],
                   m[k] >= rank ? "is not below the rank" : "is repeated");
        seen[m[k]] = 1;
    }
    return HURRAY_OK;
}

/* c_d = fiber_counts[d] for d < rank-1, c_{rank-1} = nnz. */
static uint64_t csf_count(const struct hurray_layout *l, uint8_t rank, unsigned d) {
    return d + 1u == rank ? l->nnz : l->fiber_counts[d];
}

static const char *csf_count_field(char f[HURRAY_ERROR_FIELD_MAX], uint8_t rank, unsigned d) {
    if (d + 1u == rank) return hri_fieldf(f, "layout.nnz");
    return hri_fieldf(f, "layout.fiber_counts[%u]", d);
}

/* Either every c_d is 0, or 1 <= c_0 and c_{d-1} <= c_d (no empty fiber). */
static int check_csf_monotone(const struct hurray_layout *l, uint8_t rank,
                              struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    int all_zero = 1;
    for (unsigned d = 0; d < rank; d++) all_zero &= csf_count(l, rank, d) == 0;
    if (all_zero) return HURRAY_OK;
    HR_FAIL_IF(csf_count(l, rank, 0) == 0, err, HURRAY_E_CONSTRAINT, csf_count_field(f, rank, 0),
               "%s: 0 while a deeper level is non-empty (an empty fiber)", f);
    for (unsigned d = 1; d < rank; d++) {
        uint64_t prev = csf_count(l, rank, d - 1), cur = csf_count(l, rank, d);
        HR_FAIL_IF(cur < prev, err, HURRAY_E_CONSTRAINT, csf_count_field(f, rank, d),
                   "%s: %llu is below the previous level's %llu (an empty fiber)", f,
                   (unsigned long long)cur, (unsigned long long)prev);
    }
    return HURRAY_OK;
}

/* c_d <= c_{d-1}·n_{m_d} with c_{-1} = 1, where n_{m_d} is resolved. A bound
 * beyond 2^64-1 cannot be exceeded by a u64 count. */
static int check_csf_bounds(const struct hurray_layout *l, uint8_t rank, const uint64_t *shape,
                            struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned d = 0; d < rank; d++) {
        uint64_t extent = shape[l->mode_order[d]];
        uint64_t prev = d == 0 ? 1 : csf_count(l, rank, d - 1), bound = 0;
        if (is_dynamic(extent) || hri_mul_u64(prev, extent, &bound)) continue;
        HR_FAIL_IF(csf_count(l, rank, d) > bound, err, HURRAY_E_CONSTRAINT,
                   csf_count_field(f, rank, d),
                   "%s: %llu exceeds %llu (previous level times shape[%u])", f,
                   (unsigned long long)csf_count(l, rank, d), (unsigned long long)bound,
                   (unsigned)l->mode_order[d]);
    }
    return HURRAY_OK;
}

static int validate_csf(const struct hurray_layout *l, uint8_t rank, const uint64_t *shape,
                        struct hurray_error *err) {
    if (rank < 1) return fail_rank("csf", rank, ">= 1", err);
    HR_TRY(check_mode_order(l->mode_order, rank, err));
    HR_TRY(check_csf_monotone(l, rank, err));
    return check_csf_bounds(l, rank, shape, err);
}

/* HR-PAGED-1: rank >= 2, page_size >= 1, num_seqs = shape[0] when resolved. */
static int validate_block_paged(const struct hurray_layout *l, uint8_t rank,
                                const uint64_t *shape, struct hurray_error *err) {
    if (rank < 2) return fail_rank("block_paged", rank, ">= 2", err);
    HR_FAIL_IF(l->page_size == 0, err, HURRAY_E_CONSTRAINT, "layout.page_size",
               "layout.page_size: must be >= 1");
    HR_FAIL_IF(!is_dynamic(shape[0]) && l->num_seqs != shape[0], err, HURRAY_E_CONSTRAINT,
               "layout.num_seqs", "layout.num_seqs: %llu differs from shape[0] = %llu",
               (unsigned long long)l->num_seqs, (unsigned long long)shape[0]);
    return HURRAY_OK;
}

static int validate_for_tag(const struct hurray_layout *l, uint8_t rank, const uint64_t *shape,
                            struct hurray_error *err) {
    switch (l->tag) {
    case HURRAY_LAYOUT_TILED:
        return rank < 1 ? fail_rank("tiled", rank, ">= 1", err) : HURRAY_OK;
    case HURRAY_LAYOUT_MORTON:
        return validate_morton(rank, shape, err);
    case HURRAY_LAYOUT_HILBERT:
        return validate_hilbert(rank, shape, err);
    case HURRAY_LAYOUT_COO:
        return validate_coo(l, rank, shape, err);
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
        return validate_compressed(l, rank, shape, err);
    case HURRAY_LAYOUT_CSF:
        return validate_csf(l, rank, shape, err);
    case HURRAY_LAYOUT_BLOCK_PAGED:
        return validate_block_paged(l, rank, shape, err);
    default: /* row/col-major, strided, composite: no shape constraint; */
        return HURRAY_OK; /* private and unknown layouts: nothing to interpret */
    }
}

/* The shape itself (RANGE, OVERFLOW), the parameters' own rules, then the
 * layout's rank, extent and parameter constraints. */
int hurray_layout_validate_against_shape(const struct hurray_layout *layout, uint8_t rank,
                                         const uint64_t *shape,
                                         const struct hurray_limits *limits,
                                         struct hurray_error *err) {
    HR_FAIL_IF(!layout || (rank > 0 && !shape), err, HURRAY_E_ARGUMENT, "layout",
               "layout_validate_against_shape: NULL argument");
    HR_TRY(check_rank(rank, err));
    HR_TRY(check_extents(rank, shape, err));
    uint64_t n = 0;
    int resolved = 0;
    HR_TRY(element_count(rank, shape, &n, &resolved, err));
    HR_TRY(hurray_layout_check_params(layout, rank, limits, err));
    return validate_for_tag(layout, rank, shape, err);
}

int hri_layout_check_against_shape(const struct hurray_layout *l, uint8_t rank,
                                   const uint64_t *shape, struct hurray_error *err) {
    return validate_for_tag(l, rank, shape, err);
}

/* ---- dtype and byte_offset (HR-LAYOUT-11, -12, -30, HR-DESC-3) ------------ */

static int is_byte_addressable(uint8_t dtype) {
    uint16_t bits = hurray_dtype_bits(dtype);
    return bits != 0 && bits % 8 == 0;
}

int hri_layout_check_dtype(const struct hurray_layout *l, uint8_t dtype, uint64_t byte_offset,
                           struct hurray_error *err) {
    HR_FAIL_IF(!l, err, HURRAY_E_ARGUMENT, "layout", "layout_check_dtype: layout is NULL");
    /* Composite head: off MUST be 0. */
    HR_FAIL_IF(l->tag == HURRAY_LAYOUT_COMPOSITE && byte_offset != 0, err, HURRAY_E_CONSTRAINT,
               "byte_offset", "byte_offset: a composite head owns no buffers, so it is 0, "
               "not %llu", (unsigned long long)byte_offset);
    /* Strided and tiled: byte-addressable element types only. */
    HR_FAIL_IF((l->tag == HURRAY_LAYOUT_STRIDED || l->tag == HURRAY_LAYOUT_TILED) &&
                   !is_byte_addressable(dtype),
               err, HURRAY_E_COMBINATION, "dtype",
               "dtype: %s needs a byte-addressable element type, not 0x%02X",
               hurray_layout_name(l->tag), dtype);
    if (!is_byte_addressable(dtype)) return HURRAY_OK;
    uint64_t e = hurray_dtype_bits(dtype) / 8u;
    HR_FAIL_IF(byte_offset % e != 0, err, HURRAY_E_CONSTRAINT, "byte_offset",
               "byte_offset: %llu is not a multiple of the element width %llu",
               (unsigned long long)byte_offset, (unsigned long long)e);
    return HURRAY_OK;
}

/* ---- required buffer sizes (tier 2) ------------------------------------- */

static const char *buffer_field(char f[HURRAY_ERROR_FIELD_MAX], unsigned i) {
    return hri_fieldf(f, "buffers[%u].size", i);
}

static int size_overflow(unsigned i, const char *what, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    return hri_fail(err, HURRAY_E_OVERFLOW, buffer_field(f, i),
                    "buffers[%u].size: the required size of %s exceeds 2^64-1", i, what);
}

/* off + bs(count) for buffer i; unknown for an extension element type. */
static int values_size(uint8_t dtype, uint64_t count, uint64_t off, unsigned i, uint64_t *size,
                       uint8_t *known, struct hurray_error *err) {
    if (!hurray_dtype_info(dtype) && hurray_dtype_tag_kind(dtype) == HURRAY_TAG_PRIVATE) {
        *known = 0;
        return HURRAY_OK;
    }
    uint64_t bytes = 0;
    int st = hurray_buffer_size_bytes(dtype, count, &bytes, err);
    if (st == HURRAY_E_OVERFLOW) return size_overflow(i, "the values", err);
    HR_TRY(st);
    if (hri_add_u64(off, bytes, size)) return size_overflow(i, "the values", err);
    return HURRAY_OK;
}

/* 8 bytes per uint64 index entry. */
static int index_size(uint64_t entries, unsigned i, const char *what, uint64_t *size,
                      struct hurray_error *err) {
    if (hri_mul_u64(entries, 8, size)) return size_overflow(i, what, err);
    return HURRAY_OK;
}

/* 8·(count+1) bytes: a pointer array over `count` entries. */
static int ptr_size(uint64_t count, unsigned i, const char *what, uint64_t *size,
                    struct hurray_error *err) {
    uint64_t entries = 0;
    if (hri_add_u64(count, 1, &entries)) return size_overflow(i, what, err);
    return index_size(entries, i, what, size, err);
}

/* Row/col-major, morton, hilbert: off + bs(N) (HR-LAYOUT-10, -13, -14). */
static int dense_sizes(uint8_t dtype, uint8_t rank, const uint64_t *shape, uint64_t off,
                       uint64_t *sizes, uint8_t *known, struct hurray_error *err) {
    uint64_t n = 0;
    int resolved = 0;
    HR_TRY(element_count(rank, shape, &n, &resolved, err));
    if (!resolved) {
        known[0] = 0;
        return HURRAY_OK;
    }
    return values_size(dtype, n, off, 0, &sizes[0], &known[0], err);
}

/* Running lo (sum of negative terms) and hi (sum of positive terms), in
 * logical elements (HR-LAYOUT-11). */
struct span {
    int64_t lo;
    int64_t hi;
};

static int span_add(struct span *s, int64_t stride, uint64_t steps, struct hurray_error *err) {
    int64_t term = 0;
    if (steps > (uint64_t)INT64_MAX || hri_mul_i64(stride, (int64_t)steps, &term) ||
        (term < 0 ? hri_add_i64(s->lo, term, &s->lo) : hri_add_i64(s->hi, term, &s->hi)))
        return size_overflow(0, "the strided extent (a stride times an extent)", err);
    return HURRAY_OK;
}

/* lo/hi of strided: s_k·(n_k−1); of tiled: outer_k·(⌈n_k/t_k⌉−1) and
 * inner_k·(min(t_k, n_k)−1). Every n_k >= 1 here. */
static int layout_span(const struct hurray_layout *l, uint8_t rank, const uint64_t *shape,
                       struct span *s, struct hurray_error *err) {
    s->lo = 0;
    s->hi = 0;
    for (unsigned k = 0; k < rank; k++) {
        if (l->tag == HURRAY_LAYOUT_STRIDED) {
            HR_TRY(span_add(s, l->strides[k], shape[k] - 1, err));
            continue;
        }
        uint64_t t = l->tile_shape[k] ? l->tile_shape[k] : 1;
        HR_TRY(span_add(s, l->strides[k], hri_ceil_div_u64(shape[k], t) - 1, err));
        HR_TRY(span_add(s, l->inner_strides[k], (t < shape[k] ? t : shape[k]) - 1, err));
    }
    return HURRAY_OK;
}

/* off/E + lo >= 0 (CONSTRAINT); buffer 0 holds (off/E + hi + 1)·E bytes. */
static int span_size(const struct hurray_layout *l, const struct span *s, uint64_t off,
                     uint64_t e, uint64_t *size, struct hurray_error *err) {
    uint64_t base = off / e, end = 0;
    uint64_t below = s->lo < 0 ? (uint64_t)(-(s->lo + 1)) + 1u : 0;
    const char *field = l->tag == HURRAY_LAYOUT_STRIDED ? "layout.strides" : "layout.outer_strides";
    HR_FAIL_IF(base < below, err, HURRAY_E_CONSTRAINT, field,
               "%s: the lowest element lies %llu elements before byte_offset %llu, before "
               "the start of buffer 0",
               field, (unsigned long long)below, (unsigned long long)off);
    if (hri_add_u64(base, (uint64_t)s->hi, &end) || hri_add_u64(end, 1, &end) ||
        hri_mul_u64(end, e, size))
        return size_overflow(0, "the strided values", err);
    return HURRAY_OK;
}

/* Strided and tiled (HR-LAYOUT-11, -12): off bytes when N = 0; unknown when
 * an extent is dynamic; else the span. */
static int span_sizes(const struct hurray_layout *l, uint8_t dtype, uint8_t rank,
                      const uint64_t *shape, uint64_t off, uint64_t *sizes, uint8_t *known,
                      struct hurray_error *err) {
    uint64_t n = 0;
    int resolved = 0;
    HR_TRY(element_count(rank, shape, &n, &resolved, err));
    HR_FAIL_IF(!is_byte_addressable(dtype), err, HURRAY_E_COMBINATION, "dtype",
               "dtype: %s needs a byte-addressable element type, not 0x%02X",
               hurray_layout_name(l->tag), dtype);
    if (resolved && n == 0) {
        sizes[0] = off;
        return HURRAY_OK;
    }
    if (!resolved) {
        known[0] = 0;
        return HURRAY_OK;
    }
    struct span s;
    HR_TRY(layout_span(l, rank, shape, &s, err));
    return span_size(l, &s, off, hurray_dtype_bits(dtype) / 8u, &sizes[0], err);
}

/* COO (HR-LAYOUT-20): values off + bs(nnz); indices 8·rank·nnz. */
static int coo_sizes(const struct hurray_layout *l, uint8_t dtype, uint8_t rank, uint64_t off,
                     uint64_t *sizes, uint8_t *known, struct hurray_error *err) {
    uint64_t entries = 0;
    HR_TRY(values_size(dtype, l->nnz, off, 0, &sizes[0], &known[0], err));
    if (hri_mul_u64(l->nnz, rank, &entries)) return size_overflow(1, "the indices", err);
    return index_size(entries, 1, "the indices", &sizes[1], err);
}

/* CSR/CSC (HR-LAYOUT-21, -22): values, 8·nnz indices, 8·(n_0+1) or 8·(n_1+1)
 * pointers (unknown when that extent is dynamic). */
static int compressed_sizes(const struct hurray_layout *l, uint8_t dtype, const uint64_t *shape,
                            uint64_t off, uint64_t *sizes, uint8_t *known,
                            struct hurray_error *err) {
    uint64_t major = shape[l->tag == HURRAY_LAYOUT_CSR ? 0 : 1];
    HR_TRY(values_size(dtype, l->nnz, off, 0, &sizes[0], &known[0], err));
    HR_TRY(index_size(l->nnz, 1, "the indices", &sizes[1], err));
    if (is_dynamic(major)) {
        known[2] = 0;
        return HURRAY_OK;
    }
    return ptr_size(major, 2, "the pointers", &sizes[2], err);
}

/* CSF (HR-LAYOUT-23): values, then per level d ptr_d (c_{d−1}+1 entries) and
 * idx_d (c_d entries). */
static int csf_sizes(const struct hurray_layout *l, uint8_t dtype, uint8_t rank, uint64_t off,
                     uint64_t *sizes, uint8_t *known, struct hurray_error *err) {
    HR_TRY(values_size(dtype, l->nnz, off, 0, &sizes[0], &known[0], err));
    for (unsigned d = 0; d < rank; d++) {
        uint64_t prev = d == 0 ? 1 : csf_count(l, rank, d - 1);
        HR_TRY(ptr_size(prev, 1 + 2 * d, "a CSF ptr level", &sizes[1 + 2 * d], err));
        HR_TRY(index_size(csf_count(l, rank, d), 2 + 2 * d, "a CSF idx level",
                          &sizes[2 + 2 * d], err));
    }
    return HURRAY_OK;
}

/* num_pages × page_size × Π inner: 0 if a factor is 0; unknown if an inner
 * extent is dynamic. */
static int pages_count(const struct hurray_layout *l, uint8_t rank, const uint64_t *shape,
                       uint64_t *count, int *resolved, struct hurray_error *err) {
    *count = 0;
    *resolved = 1;
    if (l->num_pages == 0 || l->page_size == 0) return HURRAY_OK;
    for (unsigned k = 2; k < rank; k++)
        if (shape[k] == 0) return HURRAY_OK;
    HR_FAIL_IF(hri_mul_u64(l->num_pages, l->page_size, count), err, HURRAY_E_OVERFLOW,
               "buffers[0].size", "buffers[0].size: num_pages × page_size exceeds 2^64-1");
    for (unsigned k = 2; k < rank; k++) {
        if (is_dynamic(shape[k])) {
            *resolved = 0;
            continue;
        }
        HR_FAIL_IF(hri_mul_u64(*count, shape[k], count), err, HURRAY_E_OVERFLOW,
                   "buffers[0].size",
                   "buffers[0].size: num_pages × page_size × inner extents exceeds 2^64-1");
    }
    return HURRAY_OK;
}

/* Block-paged (HR-PAGED-2): pages, seq_ptr (num_seqs+1), block_table. */
static int block_paged_sizes(const struct hurray_layout *l, uint8_t dtype, uint8_t rank,
                             const uint64_t *shape, uint64_t off, uint64_t *sizes,
                             uint8_t *known, struct hurray_error *err) {
    uint64_t count = 0;
    int resolved = 0;
    HR_TRY(pages_count(l, rank, shape, &count, &resolved, err));
    if (resolved)
        HR_TRY(values_size(dtype, count, off, 0, &sizes[0], &known[0], err));
    else
        known[0] = 0;
    HR_TRY(ptr_size(l->num_seqs, 1, "seq_ptr", &sizes[1], err));
    return index_size(l->num_blocks, 2, "block_table", &sizes[2], err);
}

int hri_layout_required_sizes(const struct hurray_layout *l, uint8_t dtype, uint8_t rank,
                              const uint64_t *shape, uint64_t byte_offset, uint64_t *sizes,
                              uint8_t *known, struct hurray_error *err) {
    HR_FAIL_IF(!l || !sizes || !known || (rank > 0 && !shape), err, HURRAY_E_ARGUMENT, "layout",
               "layout_required_sizes: NULL argument");
    HR_TRY(check_rank(rank, err));
    const struct layout_row *row = layout_row(l->tag);
    if (!row) return HURRAY_OK; /* private/unknown: tier 2 does not run */
    unsigned count = row->buffers_fixed + row->buffers_per_rank * (unsigned)rank;
    for (unsigned i = 0; i < count; i++) {
        sizes[i] = 0;
        known[i] = 1;
    }
    switch (l->tag) {
    case HURRAY_LAYOUT_STRIDED:
    case HURRAY_LAYOUT_TILED:
        return span_sizes(l, dtype, rank, shape, byte_offset, sizes, known, err);
    case HURRAY_LAYOUT_COO:
        return coo_sizes(l, dtype, rank, byte_offset, sizes, known, err);
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
        return rank == 2 ? compressed_sizes(l, dtype, shape, byte_offset, sizes, known, err)
                         : fail_rank(row->name, rank, "2", err);
    case HURRAY_LAYOUT_CSF:
        return csf_sizes(l, dtype, rank, byte_offset, sizes, known, err);
    case HURRAY_LAYOUT_BLOCK_PAGED:
        return block_paged_sizes(l, dtype, rank, shape, byte_offset, sizes, known, err);
    case HURRAY_LAYOUT_COMPOSITE:
        return HURRAY_OK;
    default:
        return dense_sizes(dtype, rank, shape, byte_offset, sizes, known, err);
    }
}

/* ---- block-paged storage invariants (block-paged.md § Storage) ------------ */

static uint64_t entry_at(const uint8_t *p, uint64_t i) { return hri_load_u64le(p + 8 * i); }

/* seq_ptr >= num_seqs+1 entries, block_table >= num_blocks entries. */
static int check_index_buffer_sizes(const struct hurray_layout *l, uint64_t seq_ptr_bytes,
                                    uint64_t block_table_bytes, struct hurray_error *err) {
    uint64_t need = 0;
    HR_TRY(ptr_size(l->num_seqs, 1, "seq_ptr", &need, err));
    HR_FAIL_IF(seq_ptr_bytes < need, err, HURRAY_E_BUFFER_SIZE, "seq_ptr",
               "seq_ptr: %llu bytes hold fewer than num_seqs + 1 = %llu entries",
               (unsigned long long)seq_ptr_bytes, (unsigned long long)(need / 8));
    HR_TRY(index_size(l->num_blocks, 2, "block_table", &need, err));
    HR_FAIL_IF(block_table_bytes < need, err, HURRAY_E_BUFFER_SIZE, "block_table",
               "block_table: %llu bytes hold fewer than num_blocks = %llu entries",
               (unsigned long long)block_table_bytes, (unsigned long long)l->num_blocks);
    return HURRAY_OK;
}

/* Invariants 1-3: seq_ptr[0] = 0, non-decreasing, seq_ptr[num_seqs] = num_blocks. */
static int check_seq_ptr(const struct hurray_layout *l, const uint8_t *seq_ptr,
                         struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    HR_FAIL_IF(entry_at(seq_ptr, 0) != 0, err, HURRAY_E_INDEX, "seq_ptr[0]",
               "seq_ptr[0]: %llu, must be 0 (invariant 1)",
               (unsigned long long)entry_at(seq_ptr, 0));
    for (uint64_t s = 1; s <= l->num_seqs; s++) {
        HR_FAIL_IF(entry_at(seq_ptr, s) < entry_at(seq_ptr, s - 1), err, HURRAY_E_INDEX,
                   hri_fieldf(f, "seq_ptr[%llu]", (unsigned long long)s),
                   "seq_ptr[%llu]: %llu decreases from %llu (invariant 2)",
                   (unsigned long long)s, (unsigned long long)entry_at(seq_ptr, s),
                   (unsigned long long)entry_at(seq_ptr, s - 1));
    }
    uint64_t last = entry_at(seq_ptr, l->num_seqs);
    HR_FAIL_IF(last != l->num_blocks, err, HURRAY_E_INDEX,
               hri_fieldf(f, "seq_ptr[%llu]", (unsigned long long)l->num_seqs),
               "seq_ptr[%llu]: %llu, must equal num_blocks = %llu (invariant 3)",
               (unsigned long long)l->num_seqs, (unsigned long long)last,
               (unsigned long long)l->num_blocks);
    return HURRAY_OK;
}

/* Invariant 4: every block_table[j] < num_pages. Aliasing is legal. */
static int check_block_table(const struct hurray_layout *l, const uint8_t *table,
                             struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (uint64_t j = 0; j < l->num_blocks; j++) {
        HR_FAIL_IF(entry_at(table, j) >= l->num_pages, err, HURRAY_E_INDEX,
                   hri_fieldf(f, "block_table[%llu]", (unsigned long long)j),
                   "block_table[%llu]: page %llu is not below num_pages = %llu (invariant 4)",
                   (unsigned long long)j, (unsigned long long)entry_at(table, j),
                   (unsigned long long)l->num_pages);
    }
    return HURRAY_OK;
}

int hurray_block_paged_validate_index_buffers(const struct hurray_layout *layout,
                                              const uint8_t *seq_ptr, uint64_t seq_ptr_bytes,
                                              const uint8_t *block_table,
                                              uint64_t block_table_bytes,
                                              struct hurray_error *err) {
    HR_FAIL_IF(!layout || layout->tag != HURRAY_LAYOUT_BLOCK_PAGED, err, HURRAY_E_ARGUMENT,
               "layout", "block_paged_validate_index_buffers: not a block_paged layout");
    HR_FAIL_IF((!seq_ptr && seq_ptr_bytes) || (!block_table && block_table_bytes), err,
               HURRAY_E_ARGUMENT, "seq_ptr", "block_paged_validate_index_buffers: NULL buffer "
               "with a non-zero size");
    HR_TRY(check_index_buffer_sizes(layout, seq_ptr_bytes, block_table_bytes, err));
    HR_TRY(check_seq_ptr(layout, seq_ptr, err));
    return check_block_table(layout, block_table, err);
}

/* HR-PAGED-3: per_tensor yes; per_channel only with axis >= 2; the blocked
 * schemes (block_affine, nf4, mx, nvfp4) no. */
int hurray_block_paged_check_quantization(const struct hurray_layout *layout, uint8_t rank,
                                          const struct hurray_quant *quant,
                                          struct hurray_error *err) {
    HR_FAIL_IF(!layout || layout->tag != HURRAY_LAYOUT_BLOCK_PAGED, err, HURRAY_E_ARGUMENT,
               "layout", "block_paged_check_quantization: not a block_paged layout");
    if (!quant) return HURRAY_OK; /* no quantization: nothing to reconcile */
    int kind = hurray_quant_scheme_tag_kind(quant->scheme);
    HR_TRY(hri_check_tag_kind(kind, quant->scheme, 0, "quantization.scheme", err));
    if (quant->scheme == HURRAY_QUANT_PER_TENSOR_AFFINE) return HURRAY_OK;
    HR_FAIL_IF(quant->scheme != HURRAY_QUANT_PER_CHANNEL_AFFINE, err, HURRAY_E_COMBINATION,
               "quantization.scheme",
               "quantization.scheme: %s scales are indexed by token position, which "
               "block_paged permutes", hurray_quant_scheme_name(quant->scheme));
    HR_FAIL_IF(quant->axis < 2, err, HURRAY_E_COMBINATION, "quantization.axis",
               "quantization.axis: per_channel_affine on block_paged needs axis >= 2, not %u",
               (unsigned)quant->axis);
    HR_FAIL_IF(quant->axis >= rank, err, HURRAY_E_RANGE, "quantization.axis",
               "quantization.axis: %u is not below the rank %u", (unsigned)quant->axis,
               (unsigned)rank);
    return HURRAY_OK;
}

/* ---- equality ---------------------------------------------------------------- */

static int opaque_equal(const struct hurray_layout *a, const struct hurray_layout *b) {
    if (a->opaque_len != b->opaque_len) return 0;
    if (a->opaque_len == 0) return 1;
    if (!a->opaque || !b->opaque) return a->opaque == b->opaque;
    return memcmp(a->opaque, b->opaque, a->opaque_len) == 0;
}

static int csf_equal(const struct hurray_layout *a, const struct hurray_layout *b,
                     uint8_t rank) {
    if (rank == 0) return 1; /* no parameter bytes (HR-LAYOUT-23) */
    if (a->nnz != b->nnz || memcmp(a->mode_order, b->mode_order, rank) != 0) return 0;
    for (unsigned k = 0; k + 1u < rank; k++)
        if (a->fiber_counts[k] != b->fiber_counts[k]) return 0;
    return 1;
}

static int tiled_equal(const struct hurray_layout *a, const struct hurray_layout *b,
                       uint8_t rank) {
    for (unsigned k = 0; k < rank; k++) {
        if (a->tile_shape[k] != b->tile_shape[k] || a->strides[k] != b->strides[k] ||
            a->inner_strides[k] != b->inner_strides[k])
            return 0;
    }
    return 1;
}

static int strides_equal(const struct hurray_layout *a, const struct hurray_layout *b,
                         uint8_t rank) {
    for (unsigned k = 0; k < rank; k++)
        if (a->strides[k] != b->strides[k]) return 0;
    return 1;
}

int hurray_layout_equal(const struct hurray_layout *a, const struct hurray_layout *b,
                        uint8_t rank) {
    if (a == b) return 1;
    if (!a || !b || a->tag != b->tag) return 0;
    if (rank > HURRAY_MAX_RANK) rank = HURRAY_MAX_RANK;
    /* A NULL span the tag reads compares equal only to the same layout. */
    if (hri_layout_check_spans(a, rank, NULL) != HURRAY_OK ||
        hri_layout_check_spans(b, rank, NULL) != HURRAY_OK)
        return 0;
    switch (a->tag) {
    case HURRAY_LAYOUT_STRIDED:
        return strides_equal(a, b, rank);
    case HURRAY_LAYOUT_TILED:
        return tiled_equal(a, b, rank);
    case HURRAY_LAYOUT_COO:
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
        return a->nnz == b->nnz;
    case HURRAY_LAYOUT_CSF:
        return csf_equal(a, b, rank);
    case HURRAY_LAYOUT_BLOCK_PAGED:
        return a->page_size == b->page_size && a->num_pages == b->num_pages &&
               a->num_seqs == b->num_seqs && a->num_blocks == b->num_blocks;
    case HURRAY_LAYOUT_COMPOSITE:
        return a->rule == b->rule && a->combine == b->combine &&
               a->member_count == b->member_count;
    default:
        if (layout_row(a->tag)) return 1;
        if (hurray_layout_tag_kind(a->tag) == HURRAY_TAG_PRIVATE &&
            a->extension_layout_id != b->extension_layout_id)
            return 0;
        return opaque_equal(a, b);
    }
}
