/* libhurray's decoded structs against the manifest's "decoded" oracle.
 * Names come from the library's own name functions; tags compare as
 * integers; floats by bit pattern; byte strings byte for byte. */
#include <string.h>

#include "harness.h"

const char *hc_dtype_name(uint8_t tag) {
    const struct hurray_dtype_info *info = hurray_dtype_info(tag);
    if (info) return info->name;
    return hurray_dtype_tag_kind(tag) == HURRAY_TAG_PRIVATE ? "extension" : NULL;
}

/* A dtype byte that may be absent (0x00 = none). */
static const char *opt_dtype_name(uint8_t tag) { return tag == 0 ? NULL : hc_dtype_name(tag); }

static void cmp_opt_index(struct hc_log *log, const char *path, const struct hc_opt_u64 *want,
                          uint8_t got) {
    hc_cmp_opt_u64(log, path, want->null, want->v, got == HURRAY_NO_BUFFER, got);
}

/* ------------------------------------------------------------ qmap ------ */

static void cmp_affine(struct hc_log *log, const char *path, const struct hc_qmap *w,
                       const struct hurray_quant *q) {
    char p[HC_PATH_MAX];
    hc_cmp_u64(log, hc_pathf(p, "%s.axis", path), w->axis, q->axis);
    hc_cmp_u64(log, hc_pathf(p, "%s.scale_buffer_index", path), w->scale_buffer_index,
               q->scale_buffer);
    cmp_opt_index(log, hc_pathf(p, "%s.zero_point_buffer_index", path),
                  &w->zero_point_buffer_index, q->zero_point_buffer);
    hc_cmp_str(log, hc_pathf(p, "%s.scale_dtype", path), w->scale_dtype,
               hc_dtype_name(q->scale_dtype));
    hc_cmp_str(log, hc_pathf(p, "%s.zero_point_dtype", path),
               w->zero_point_dtype_null ? NULL : w->zero_point_dtype,
               opt_dtype_name(q->zero_point_dtype));
}

static void cmp_nf4(struct hc_log *log, const char *path, const struct hc_qmap *w,
                    const struct hurray_quant *q) {
    char p[HC_PATH_MAX];
    hc_cmp_bool(log, hc_pathf(p, "%s.double_quant", path), w->double_quant,
                (q->flags & HURRAY_NF4_DOUBLE_QUANT) != 0);
    hc_cmp_u64(log, hc_pathf(p, "%s.block_size", path), w->block_size, q->block_size);
    hc_cmp_u64(log, hc_pathf(p, "%s.absmax_buffer_index", path), w->absmax_buffer_index,
               q->absmax_buffer);
    cmp_opt_index(log, hc_pathf(p, "%s.nested_absmax_buffer_index", path),
                  &w->nested_absmax_buffer_index, q->nested_absmax_buffer);
    cmp_opt_index(log, hc_pathf(p, "%s.quant_map_buffer_index", path),
                  &w->quant_map_buffer_index, q->quant_map_buffer);
    hc_cmp_u64(log, hc_pathf(p, "%s.nested_block_size", path), w->nested_block_size,
               q->nested_block_size);
    uint32_t bits;
    memcpy(&bits, &q->nested_offset, sizeof bits);
    hc_cmp_f32bits(log, hc_pathf(p, "%s.nested_offset", path), w->nested_offset_bits, bits);
}

void hc_compare_qmap(struct hc_log *log, const char *path, const struct hc_qmap *w,
                     const struct hurray_quant *q) {
    char p[HC_PATH_MAX];
    hc_cmp_str(log, hc_pathf(p, "%s.scheme", path), w->scheme, hurray_quant_scheme_name(q->scheme));
    switch (w->kind) {
    case HC_SCHEME_PER_TENSOR: {
        uint64_t bits;
        memcpy(&bits, &q->scale, sizeof bits);
        hc_cmp_f64bits(log, hc_pathf(p, "%s.scale", path), w->scale_bits, bits);
        hc_cmp_i64(log, hc_pathf(p, "%s.zero_point", path), w->zero_point, q->zero_point);
        break;
    }
    case HC_SCHEME_PER_CHANNEL:
        cmp_affine(log, path, w, q);
        break;
    case HC_SCHEME_BLOCK:
        cmp_affine(log, path, w, q);
        hc_cmp_u64(log, hc_pathf(p, "%s.block_size", path), w->block_size, q->block_size);
        break;
    case HC_SCHEME_NF4:
        cmp_nf4(log, path, w, q);
        break;
    case HC_SCHEME_MX:
    case HC_SCHEME_NVFP4:
        hc_cmp_u64(log, hc_pathf(p, "%s.axis", path), w->axis, q->axis);
        hc_cmp_u64(log, hc_pathf(p, "%s.scale_buffer_index", path), w->scale_buffer_index,
                   q->scale_buffer);
        hc_cmp_u64(log, hc_pathf(p, "%s.block_size", path), w->block_size, q->block_size);
        if (w->kind == HC_SCHEME_NVFP4) {
            uint32_t bits;
            memcpy(&bits, &q->tensor_scale, sizeof bits);
            hc_cmp_f32bits(log, hc_pathf(p, "%s.tensor_scale", path), w->tensor_scale_bits, bits);
        }
        break;
    }
}

/* ---------------------------------------------------------- layout ------ */

/* Every comparison below takes `base`, the key path of the descriptor map
 * ("decoded", "decoded.items[1].members[0].descriptor", ...). */

/* A rank-sized list: its length against `n`, then each entry. */
static void cmp_ulist(struct hc_log *log, const char *path, const struct hc_ulist *w,
                      const uint64_t *got, size_t n) {
    char p[HC_PATH_MAX];
    hc_cmp_u64(log, hc_pathf(p, "%s (length)", path), w->n, n);
    for (size_t i = 0; i < w->n && i < n; i++)
        hc_cmp_u64(log, hc_pathf(p, "%s[%zu]", path, i), w->v[i], got[i]);
}

static void cmp_ilist(struct hc_log *log, const char *path, const struct hc_ilist *w,
                      const int64_t *got, size_t n) {
    char p[HC_PATH_MAX];
    hc_cmp_u64(log, hc_pathf(p, "%s (length)", path), w->n, n);
    for (size_t i = 0; i < w->n && i < n; i++)
        hc_cmp_i64(log, hc_pathf(p, "%s[%zu]", path, i), w->v[i], got[i]);
}

static void cmp_csf(struct hc_log *log, const char *lp, const struct hc_layout_exp *w,
                    const struct hurray_layout *l, size_t rank) {
    uint64_t modes[HURRAY_MAX_RANK];
    char p[HC_PATH_MAX];
    for (size_t i = 0; i < rank; i++) modes[i] = l->mode_order[i];
    cmp_ulist(log, hc_pathf(p, "%s.fiber_counts", lp), &w->fiber_counts, l->fiber_counts,
              rank ? rank - 1 : 0);
    cmp_ulist(log, hc_pathf(p, "%s.mode_order", lp), &w->mode_order, modes, rank);
}

static void cmp_composite(struct hc_log *log, const char *lp, const struct hc_layout_exp *w,
                          const struct hurray_layout *l) {
    char p[HC_PATH_MAX];
    hc_cmp_str(log, hc_pathf(p, "%s.rule", lp), w->rule, hurray_composite_rule_name(l->rule));
    /* combine 0x00 is "not applicable" (partition, group): null in the manifest. */
    hc_cmp_str(log, hc_pathf(p, "%s.combine", lp), w->combine_null ? NULL : w->combine,
               l->combine == HURRAY_COMBINE_NONE ? NULL : hurray_combine_op_name(l->combine));
    hc_cmp_u64(log, hc_pathf(p, "%s.member_count", lp), w->member_count, l->member_count);
}

static void cmp_layout(struct hc_log *log, const char *base, const struct hc_layout_exp *w,
                       const struct hurray_layout *l, size_t rank) {
    char lp[HC_PATH_MAX], p[HC_PATH_MAX];
    hc_pathf(lp, "%s.layout", base);
#define LP(key) hc_pathf(p, "%s.%s", lp, key)
    hc_cmp_u64(log, LP("tag"), w->tag, l->tag);
    hc_cmp_str(log, LP("name"), w->name, hurray_layout_name(l->tag));
    if (w->keys & HC_LK_STRIDES) cmp_ilist(log, LP("strides"), &w->strides, l->strides, rank);
    if (w->keys & HC_LK_TILE_SHAPE)
        cmp_ulist(log, LP("tile_shape"), &w->tile_shape, l->tile_shape, rank);
    if (w->keys & HC_LK_OUTER_STRIDES)
        cmp_ilist(log, LP("outer_strides"), &w->outer_strides, l->strides, rank);
    if (w->keys & HC_LK_INNER_STRIDES)
        cmp_ilist(log, LP("inner_strides"), &w->inner_strides, l->inner_strides, rank);
    if (w->keys & HC_LK_NNZ) hc_cmp_u64(log, LP("nnz"), w->nnz, l->nnz);
    if (w->keys & HC_LK_FIBER_COUNTS) cmp_csf(log, lp, w, l, rank);
    if (w->keys & HC_LK_PAGED) {
        hc_cmp_u64(log, LP("page_size"), w->page_size, l->page_size);
        hc_cmp_u64(log, LP("num_pages"), w->num_pages, l->num_pages);
        hc_cmp_u64(log, LP("num_seqs"), w->num_seqs, l->num_seqs);
        hc_cmp_u64(log, LP("num_blocks"), w->num_blocks, l->num_blocks);
    }
    if (w->keys & HC_LK_COMPOSITE) cmp_composite(log, lp, w, l);
    if (w->keys & HC_LK_EXTENSION) {
        hc_cmp_u64(log, LP("extension_layout_id"), w->extension_layout_id,
                   l->extension_layout_id);
        hc_cmp_bytes(log, LP("extension_data"), w->extension_data.p, w->extension_data.len,
                     l->opaque, l->opaque_len);
    }
    if (w->keys & HC_LK_PARAMS)
        hc_cmp_bytes(log, LP("params"), w->params.p, w->params.len, l->opaque, l->opaque_len);
#undef LP
}

/* -------------------------------------------------------- sections ------ */

/* {"f64": bits} or null; the library's value counts only when its flag is set. */
static void cmp_opt_f64(struct hc_log *log, const char *path, int want_null, uint64_t want,
                        int got_null, uint64_t got) {
    if (want_null || got_null) hc_cmp_presence(log, path, !want_null, !got_null);
    else hc_cmp_f64bits(log, path, want, got);
}

static void cmp_statistics(struct hc_log *log, const char *base, const struct hc_stats_exp *w,
                           const struct hurray_statistics *s) {
    char p[HC_PATH_MAX];
    int mm = (s->flags & HURRAY_STATS_HAS_MIN_MAX) != 0;
    int nc = (s->flags & HURRAY_STATS_HAS_NAN_COUNT) != 0;
    hc_cmp_bool(log, hc_pathf(p, "%s.statistics.has_min_max", base), w->has_min_max, mm);
    hc_cmp_bool(log, hc_pathf(p, "%s.statistics.has_nan_count", base), w->has_nan_count, nc);
    uint64_t min, max;
    memcpy(&min, &s->min, sizeof min);
    memcpy(&max, &s->max, sizeof max);
    cmp_opt_f64(log, hc_pathf(p, "%s.statistics.min", base), w->min_null, w->min_bits, !mm, min);
    cmp_opt_f64(log, hc_pathf(p, "%s.statistics.max", base), w->max_null, w->max_bits, !mm, max);
    hc_cmp_opt_u64(log, hc_pathf(p, "%s.statistics.nan_count", base), w->nan_count_null,
                   w->nan_count, !nc, s->nan_count);
}

static void cmp_shard(struct hc_log *log, const char *base, const struct hc_shard_exp *w,
                      const struct hurray_shard *s, size_t rank) {
    char p[HC_PATH_MAX];
    hc_cmp_u64(log, hc_pathf(p, "%s.shard.shard_index", base), w->shard_index, s->shard_index);
    hc_cmp_u64(log, hc_pathf(p, "%s.shard.shard_count", base), w->shard_count, s->shard_count);
    cmp_ulist(log, hc_pathf(p, "%s.shard.global_shape", base), &w->global_shape,
              s->global_shape, rank);
    cmp_ulist(log, hc_pathf(p, "%s.shard.global_offset", base), &w->global_offset,
              s->global_offset, rank);
}

static void cmp_unknown_sections(struct hc_log *log, const char *base,
                                 const struct hc_desc_exp *w, const struct hurray_descriptor *d) {
    char p[HC_PATH_MAX];
    hc_cmp_u64(log, hc_pathf(p, "%s.unknown_sections (length)", base), w->section_count,
               d->opaque_count);
    for (size_t i = 0; i < w->section_count && i < d->opaque_count; i++) {
        const struct hc_section_exp *ws = &w->sections[i];
        const struct hurray_opaque_section *gs = &d->opaque[i];
        hc_cmp_u64(log, hc_pathf(p, "%s.unknown_sections[%zu].type", base, i), ws->type,
                   gs->type);
        hc_cmp_u64(log, hc_pathf(p, "%s.unknown_sections[%zu].flags", base, i), ws->flags,
                   gs->flags);
        hc_cmp_bytes(log, hc_pathf(p, "%s.unknown_sections[%zu].data", base, i), ws->data.p,
                     ws->data.len, gs->data, gs->length);
    }
}

static void cmp_sections(struct hc_log *log, const char *base, const struct hc_desc_exp *w,
                         const struct hurray_descriptor *d) {
    char p[HC_PATH_MAX];
    hc_cmp_presence(log, hc_pathf(p, "%s.quantization", base), w->has_quant, d->quant != NULL);
    if (w->has_quant && d->quant) hc_compare_qmap(log, p, &w->quant, d->quant);
    hc_cmp_presence(log, hc_pathf(p, "%s.statistics", base), w->has_stats, d->statistics != NULL);
    if (w->has_stats && d->statistics) cmp_statistics(log, base, &w->stats, d->statistics);
    hc_cmp_presence(log, hc_pathf(p, "%s.shard", base), w->has_shard, d->shard != NULL);
    if (w->has_shard && d->shard) cmp_shard(log, base, &w->shard, d->shard, d->rank);
    hc_cmp_str(log, hc_pathf(p, "%s.role", base), w->role_null ? NULL : w->role,
               d->has_role ? hurray_member_role_name(d->role) : NULL);
    cmp_unknown_sections(log, base, w, d);
}

/* ------------------------------------------------------ descriptor ------ */

static void cmp_header(struct hc_log *log, const char *base, const struct hc_desc_exp *w,
                       const struct hurray_descriptor *d, size_t consumed) {
    char p[HC_PATH_MAX];
#define DP(key) hc_pathf(p, "%s.%s", base, key)
    hc_cmp_u64(log, DP("encoded_len"), w->encoded_len, consumed);
    hc_cmp_u64(log, DP("version[0]"), w->version_major, d->version_major);
    hc_cmp_u64(log, DP("version[1]"), w->version_minor, d->version_minor);
    hc_cmp_str(log, DP("dtype"), w->dtype, hc_dtype_name(d->dtype));
    hc_cmp_u64(log, DP("dtype_tag"), w->dtype_tag, d->dtype);
    hc_cmp_str(log, DP("device"), w->device, hurray_device_name(d->device));
    hc_cmp_u64(log, DP("device_tag"), w->device_tag, d->device);
    hc_cmp_str(log, DP("memory_class"), w->memory_class, hurray_memory_class_name(d->memory_class));
    hc_cmp_u64(log, DP("memory_class_tag"), w->memory_class_tag, d->memory_class);
#undef DP
}

static void cmp_shape(struct hc_log *log, const char *base, const struct hc_desc_exp *w,
                      const struct hurray_descriptor *d) {
    char p[HC_PATH_MAX];
    hc_cmp_u64(log, hc_pathf(p, "%s.shape (rank)", base), w->rank, d->rank);
    for (size_t i = 0; i < w->rank && i < d->rank; i++)
        hc_cmp_opt_u64(log, hc_pathf(p, "%s.shape[%zu]", base, i), w->shape[i].null,
                       w->shape[i].v, d->shape[i] == HURRAY_DYNAMIC_DIM, d->shape[i]);
}

static void cmp_buffers(struct hc_log *log, const char *base, const struct hc_desc_exp *w,
                        const struct hurray_descriptor *d) {
    char p[HC_PATH_MAX];
    hc_cmp_u64(log, hc_pathf(p, "%s.buffers (length)", base), w->buffer_count, d->buffer_count);
    for (size_t i = 0; i < w->buffer_count && i < d->buffer_count; i++) {
        const struct hurray_buffer_desc *b = &d->buffers[i];
        uint64_t align = b->alignment_log2 < 64 ? UINT64_C(1) << b->alignment_log2 : 0;
        hc_cmp_u64(log, hc_pathf(p, "%s.buffers[%zu].size", base, i), w->buffers[i].size,
                   b->size);
        hc_cmp_u64(log, hc_pathf(p, "%s.buffers[%zu].alignment", base, i),
                   w->buffers[i].alignment, align);
        hc_cmp_str(log, hc_pathf(p, "%s.buffers[%zu].sync_mode", base, i),
                   w->buffers[i].sync_mode, hurray_sync_mode_name(b->sync_mode));
    }
}

void hc_compare_descriptor_at(struct hc_log *log, const char *base, const struct hc_desc_exp *w,
                              const struct hurray_descriptor *d, size_t consumed) {
    char p[HC_PATH_MAX];
    cmp_header(log, base, w, d, consumed);
    cmp_shape(log, base, w, d);
    hc_cmp_u64(log, hc_pathf(p, "%s.byte_offset", base), w->byte_offset, d->byte_offset);
    cmp_buffers(log, base, w, d);
    cmp_layout(log, base, &w->layout, &d->layout, d->rank);
    cmp_sections(log, base, w, d);
}

void hc_compare_descriptor(struct hc_log *log, const struct hc_desc_exp *w,
                           const struct hurray_descriptor *d, size_t consumed) {
    hc_compare_descriptor_at(log, "decoded", w, d, consumed);
}
