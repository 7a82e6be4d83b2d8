/* One manifest vector and its "decoded" oracle, parsed into C structs.
 *
 * The schema is strict: every key is known, required keys are present,
 * types are exact (uint vs int vs null), and keys that belong to a variant
 * (a layout's parameters, a scheme's fields) appear exactly for that variant.
 * Any deviation is a schema failure of the vector, with the path of the key. */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

/* -------------------------------------------------------------- kinds --- */

static const struct {
    const char *name;
    unsigned min_schema;
} kind_table[HC_KIND_COUNT] = {
    [HC_KIND_DESCRIPTOR] = {"descriptor", 1},
    [HC_KIND_QUANT] = {"quantization", 1},
    [HC_KIND_KV] = {"kv", 2},
    [HC_KIND_FILE] = {"file", 2},
    [HC_KIND_STREAM] = {"stream", 2},
    [HC_KIND_UNKNOWN] = {"?", UINT32_MAX},
};

const char *hc_kind_name(enum hc_kind k) {
    return (unsigned)k < HC_KIND_COUNT ? kind_table[k].name : "?";
}

enum hc_kind hc_kind_from_name(const char *name) {
    for (int k = 0; k < HC_KIND_UNKNOWN; k++)
        if (strcmp(kind_table[k].name, name) == 0) return (enum hc_kind)k;
    return HC_KIND_UNKNOWN;
}

unsigned hc_kind_min_schema(enum hc_kind k) {
    return (unsigned)k < HC_KIND_COUNT ? kind_table[k].min_schema : UINT32_MAX;
}

int hc_status_value(const char *name, size_t len) {
    char buf[HC_NAME_MAX];
    if (len >= sizeof buf || memchr(name, '\0', len)) return -1;
    memcpy(buf, name, len);
    buf[len] = '\0';
    return hurray_status_from_name(buf);
}

/* ------------------------------------------------------------ helpers --- */

/* Keys of a variant map: `present` bits must equal `required` bits. */
static int check_variant(struct hc_log *log, const char *path, const struct hc_key *keys,
                         size_t nkeys, const cbor_item_t **found, uint32_t required,
                         const char *variant) {
    int bad = 0;
    for (size_t i = 0; i < nkeys; i++) {
        int want = (required >> i) & 1u;
        if (want && !found[i])
            bad = hc_schema_fail(log, path, "missing key \"%s\" (required for %s)", keys[i].name,
                                 variant);
        else if (!want && found[i])
            bad = hc_schema_fail(log, path, "key \"%s\" does not belong to %s", keys[i].name,
                                 variant);
    }
    return bad;
}

static int get_opt_uint(struct hc_log *log, const char *path, const cbor_item_t *item,
                        struct hc_opt_u64 *out) {
    out->null = 0;
    out->v = 0;
    if (hc_is_null(item)) {
        out->null = 1;
        return 0;
    }
    if (item && !cbor_isa_uint(item))
        return hc_schema_fail(log, path, "expected uint or null, got %s", hc_cbor_type_name(item));
    return hc_get_uint(log, path, item, &out->v);
}

static int get_opt_name(struct hc_log *log, const char *path, const cbor_item_t *item, int *null,
                        char *buf, size_t cap) {
    *null = 0;
    buf[0] = '\0';
    if (hc_is_null(item)) {
        *null = 1;
        return 0;
    }
    if (item && !cbor_isa_string(item))
        return hc_schema_fail(log, path, "expected tstr or null, got %s", hc_cbor_type_name(item));
    return hc_get_name(log, path, item, buf, cap);
}

static int get_ulist(struct hc_log *log, const char *path, const cbor_item_t *item,
                     struct hc_ulist *out) {
    cbor_item_t **items;
    size_t n;
    out->n = 0;
    if (hc_get_array(log, path, item, HURRAY_MAX_RANK, &items, &n)) return -1;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char p[HC_PATH_MAX];
        bad |= hc_get_uint(log, hc_pathf(p, "%s[%zu]", path, i), items[i], &out->v[i]);
    }
    out->n = n;
    return bad ? -1 : 0;
}

static int get_ilist(struct hc_log *log, const char *path, const cbor_item_t *item,
                     struct hc_ilist *out) {
    cbor_item_t **items;
    size_t n;
    out->n = 0;
    if (hc_get_array(log, path, item, HURRAY_MAX_RANK, &items, &n)) return -1;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char p[HC_PATH_MAX];
        bad |= hc_get_int(log, hc_pathf(p, "%s[%zu]", path, i), items[i], &out->v[i]);
    }
    out->n = n;
    return bad ? -1 : 0;
}

/* A value that may be null or a map (sections). */
static int is_null_or_map(struct hc_log *log, const char *path, const cbor_item_t *item,
                          int *present) {
    *present = 0;
    if (hc_is_null(item)) return 0;
    if (!item || !cbor_isa_map(item))
        return hc_schema_fail(log, path, "expected map or null, got %s", hc_cbor_type_name(item));
    *present = 1;
    return 0;
}

/* --------------------------------------------------------------- qmap --- */

enum {
    QK_SCHEME, QK_AXIS, QK_SCALE_BUF, QK_ZP_BUF, QK_SCALE_DTYPE, QK_ZP_DTYPE, QK_BLOCK_SIZE,
    QK_SCALE, QK_ZERO_POINT, QK_DOUBLE_QUANT, QK_ABSMAX_BUF, QK_NESTED_ABSMAX_BUF,
    QK_QUANT_MAP_BUF, QK_NESTED_BLOCK_SIZE, QK_NESTED_OFFSET, QK_TENSOR_SCALE, QK_COUNT
};

static const struct hc_key qmap_keys[QK_COUNT] = {
    [QK_SCHEME] = {"scheme", 0},
    [QK_AXIS] = {"axis", 0},
    [QK_SCALE_BUF] = {"scale_buffer_index", 0},
    [QK_ZP_BUF] = {"zero_point_buffer_index", 0},
    [QK_SCALE_DTYPE] = {"scale_dtype", 0},
    [QK_ZP_DTYPE] = {"zero_point_dtype", 0},
    [QK_BLOCK_SIZE] = {"block_size", 0},
    [QK_SCALE] = {"scale", 0},
    [QK_ZERO_POINT] = {"zero_point", 0},
    [QK_DOUBLE_QUANT] = {"double_quant", 0},
    [QK_ABSMAX_BUF] = {"absmax_buffer_index", 0},
    [QK_NESTED_ABSMAX_BUF] = {"nested_absmax_buffer_index", 0},
    [QK_QUANT_MAP_BUF] = {"quant_map_buffer_index", 0},
    [QK_NESTED_BLOCK_SIZE] = {"nested_block_size", 0},
    [QK_NESTED_OFFSET] = {"nested_offset", 0},
    [QK_TENSOR_SCALE] = {"tensor_scale", 0},
};

#define QB(k) (1u << (k))
#define QB_AFFINE (QB(QK_AXIS) | QB(QK_SCALE_BUF) | QB(QK_ZP_BUF) | QB(QK_SCALE_DTYPE) | QB(QK_ZP_DTYPE))

/* The schemes of quantization.md § Scheme tags and the keys each carries. */
static const struct {
    const char *name;
    enum hc_scheme kind;
    uint32_t keys;
} schemes[] = {
    {"per_tensor_affine", HC_SCHEME_PER_TENSOR, QB(QK_SCHEME) | QB(QK_SCALE) | QB(QK_ZERO_POINT)},
    {"per_channel_affine", HC_SCHEME_PER_CHANNEL, QB(QK_SCHEME) | QB_AFFINE},
    {"block_affine", HC_SCHEME_BLOCK, QB(QK_SCHEME) | QB_AFFINE | QB(QK_BLOCK_SIZE)},
    {"nf4", HC_SCHEME_NF4,
     QB(QK_SCHEME) | QB(QK_DOUBLE_QUANT) | QB(QK_BLOCK_SIZE) | QB(QK_ABSMAX_BUF) |
         QB(QK_NESTED_ABSMAX_BUF) | QB(QK_QUANT_MAP_BUF) | QB(QK_NESTED_BLOCK_SIZE) |
         QB(QK_NESTED_OFFSET)},
    {"mx", HC_SCHEME_MX, QB(QK_SCHEME) | QB(QK_AXIS) | QB(QK_SCALE_BUF) | QB(QK_BLOCK_SIZE)},
    {"nvfp4", HC_SCHEME_NVFP4,
     QB(QK_SCHEME) | QB(QK_AXIS) | QB(QK_SCALE_BUF) | QB(QK_BLOCK_SIZE) | QB(QK_TENSOR_SCALE)},
};

static int qmap_fields(struct hc_log *log, const char *path, const cbor_item_t **f,
                       struct hc_qmap *q) {
    char p[HC_PATH_MAX];
#define QP(key) hc_pathf(p, "%s.%s", path, key)
    int bad = 0;
    if (f[QK_AXIS]) bad |= hc_get_uint(log, QP("axis"), f[QK_AXIS], &q->axis);
    if (f[QK_SCALE_BUF])
        bad |= hc_get_uint(log, QP("scale_buffer_index"), f[QK_SCALE_BUF], &q->scale_buffer_index);
    if (f[QK_ZP_BUF])
        bad |= get_opt_uint(log, QP("zero_point_buffer_index"), f[QK_ZP_BUF],
                            &q->zero_point_buffer_index);
    if (f[QK_SCALE_DTYPE])
        bad |= hc_get_name(log, QP("scale_dtype"), f[QK_SCALE_DTYPE], q->scale_dtype,
                           sizeof q->scale_dtype);
    if (f[QK_ZP_DTYPE])
        bad |= get_opt_name(log, QP("zero_point_dtype"), f[QK_ZP_DTYPE],
                            &q->zero_point_dtype_null, q->zero_point_dtype,
                            sizeof q->zero_point_dtype);
    if (f[QK_BLOCK_SIZE])
        bad |= hc_get_uint(log, QP("block_size"), f[QK_BLOCK_SIZE], &q->block_size);
    if (f[QK_SCALE]) bad |= hc_get_f64bits(log, QP("scale"), f[QK_SCALE], &q->scale_bits);
    if (f[QK_ZERO_POINT])
        bad |= hc_get_int(log, QP("zero_point"), f[QK_ZERO_POINT], &q->zero_point);
    if (f[QK_DOUBLE_QUANT])
        bad |= hc_get_bool(log, QP("double_quant"), f[QK_DOUBLE_QUANT], &q->double_quant);
    if (f[QK_ABSMAX_BUF])
        bad |= hc_get_uint(log, QP("absmax_buffer_index"), f[QK_ABSMAX_BUF],
                           &q->absmax_buffer_index);
    if (f[QK_NESTED_ABSMAX_BUF])
        bad |= get_opt_uint(log, QP("nested_absmax_buffer_index"), f[QK_NESTED_ABSMAX_BUF],
                            &q->nested_absmax_buffer_index);
    if (f[QK_QUANT_MAP_BUF])
        bad |= get_opt_uint(log, QP("quant_map_buffer_index"), f[QK_QUANT_MAP_BUF],
                            &q->quant_map_buffer_index);
    if (f[QK_NESTED_BLOCK_SIZE])
        bad |= hc_get_uint(log, QP("nested_block_size"), f[QK_NESTED_BLOCK_SIZE],
                           &q->nested_block_size);
    if (f[QK_NESTED_OFFSET])
        bad |= hc_get_f32bits(log, QP("nested_offset"), f[QK_NESTED_OFFSET],
                              &q->nested_offset_bits);
    if (f[QK_TENSOR_SCALE])
        bad |= hc_get_f32bits(log, QP("tensor_scale"), f[QK_TENSOR_SCALE], &q->tensor_scale_bits);
#undef QP
    return bad ? -1 : 0;
}

int hc_qmap_parse(struct hc_log *log, const char *path, const cbor_item_t *item,
                  struct hc_qmap *q) {
    const cbor_item_t *f[QK_COUNT];
    char p[HC_PATH_MAX];
    memset(q, 0, sizeof *q);
    if (hc_map_fields(log, path, item, qmap_keys, QK_COUNT, f)) return -1;
    if (!f[QK_SCHEME]) return hc_schema_fail(log, path, "missing required key \"scheme\"");
    if (hc_get_name(log, hc_pathf(p, "%s.scheme", path), f[QK_SCHEME], q->scheme,
                    sizeof q->scheme))
        return -1;
    size_t s;
    for (s = 0; s < NKEYS(schemes); s++)
        if (strcmp(schemes[s].name, q->scheme) == 0) break;
    if (s == NKEYS(schemes))
        return hc_schema_fail(log, p, "unknown quantization scheme \"%s\"", q->scheme);
    q->kind = schemes[s].kind;
    char variant[HC_NAME_MAX + 16];
    snprintf(variant, sizeof variant, "scheme %s", q->scheme);
    int bad = check_variant(log, path, qmap_keys, QK_COUNT, f, schemes[s].keys, variant);
    bad |= qmap_fields(log, path, f, q);
    return bad ? -1 : 0;
}

/* ------------------------------------------------------------- layout --- */

enum {
    LK_TAG, LK_NAME, LK_STRIDES, LK_TILE_SHAPE, LK_OUTER_STRIDES, LK_INNER_STRIDES, LK_NNZ,
    LK_FIBER_COUNTS, LK_MODE_ORDER, LK_PAGE_SIZE, LK_NUM_PAGES, LK_NUM_SEQS, LK_NUM_BLOCKS,
    LK_RULE, LK_COMBINE, LK_MEMBER_COUNT, LK_EXT_ID, LK_EXT_DATA, LK_PARAMS, LK_COUNT
};

static const struct hc_key layout_keys[LK_COUNT] = {
    [LK_TAG] = {"tag", HC_KEY_REQUIRED},
    [LK_NAME] = {"name", HC_KEY_REQUIRED},
    [LK_STRIDES] = {"strides", 0},
    [LK_TILE_SHAPE] = {"tile_shape", 0},
    [LK_OUTER_STRIDES] = {"outer_strides", 0},
    [LK_INNER_STRIDES] = {"inner_strides", 0},
    [LK_NNZ] = {"nnz", 0},
    [LK_FIBER_COUNTS] = {"fiber_counts", 0},
    [LK_MODE_ORDER] = {"mode_order", 0},
    [LK_PAGE_SIZE] = {"page_size", 0},
    [LK_NUM_PAGES] = {"num_pages", 0},
    [LK_NUM_SEQS] = {"num_seqs", 0},
    [LK_NUM_BLOCKS] = {"num_blocks", 0},
    [LK_RULE] = {"rule", 0},
    [LK_COMBINE] = {"combine", 0},
    [LK_MEMBER_COUNT] = {"member_count", 0},
    [LK_EXT_ID] = {"extension_layout_id", 0},
    [LK_EXT_DATA] = {"extension_data", 0},
    [LK_PARAMS] = {"params", 0},
};

#define LB(k) (1u << (k))

/* Parameter keys per layout tag (memory-layout.md § Layout tags): named tags
 * carry their parameters, private tags (0xF0-0xFE) the extension id and data,
 * reserved tags the opaque parameter bytes. -1 for invalid tags (0x00, 0xFF),
 * which no valid descriptor carries. */
static int layout_param_keys(uint64_t tag, uint32_t *keys, unsigned *lk) {
    *keys = 0;
    *lk = 0;
    switch (tag) {
    case 0x01: case 0x02: case 0x05: case 0x06: return 0;
    case 0x03:
        *lk = HC_LK_STRIDES;
        *keys = LB(LK_STRIDES);
        return 0;
    case 0x04:
        *lk = HC_LK_TILE_SHAPE | HC_LK_OUTER_STRIDES | HC_LK_INNER_STRIDES;
        *keys = LB(LK_TILE_SHAPE) | LB(LK_OUTER_STRIDES) | LB(LK_INNER_STRIDES);
        return 0;
    case 0x10: case 0x11: case 0x12:
        *lk = HC_LK_NNZ;
        *keys = LB(LK_NNZ);
        return 0;
    case 0x13:
        *lk = HC_LK_NNZ | HC_LK_FIBER_COUNTS | HC_LK_MODE_ORDER;
        *keys = LB(LK_NNZ) | LB(LK_FIBER_COUNTS) | LB(LK_MODE_ORDER);
        return 0;
    case 0x20:
        *lk = HC_LK_PAGED;
        *keys = LB(LK_PAGE_SIZE) | LB(LK_NUM_PAGES) | LB(LK_NUM_SEQS) | LB(LK_NUM_BLOCKS);
        return 0;
    case 0x30:
        *lk = HC_LK_COMPOSITE;
        *keys = LB(LK_RULE) | LB(LK_COMBINE) | LB(LK_MEMBER_COUNT);
        return 0;
    default: break;
    }
    if (tag == 0x00 || tag >= 0xFF) return -1;
    if (tag >= 0xF0) {
        *lk = HC_LK_EXTENSION;
        *keys = LB(LK_EXT_ID) | LB(LK_EXT_DATA);
    } else {
        *lk = HC_LK_PARAMS;
        *keys = LB(LK_PARAMS);
    }
    return 0;
}

static int layout_fields(struct hc_log *log, const char *path, const cbor_item_t **f,
                         struct hc_layout_exp *l) {
    char p[HC_PATH_MAX];
#define LP(key) hc_pathf(p, "%s.%s", path, key)
    int bad = 0;
    if (f[LK_STRIDES]) bad |= get_ilist(log, LP("strides"), f[LK_STRIDES], &l->strides);
    if (f[LK_TILE_SHAPE]) bad |= get_ulist(log, LP("tile_shape"), f[LK_TILE_SHAPE], &l->tile_shape);
    if (f[LK_OUTER_STRIDES])
        bad |= get_ilist(log, LP("outer_strides"), f[LK_OUTER_STRIDES], &l->outer_strides);
    if (f[LK_INNER_STRIDES])
        bad |= get_ilist(log, LP("inner_strides"), f[LK_INNER_STRIDES], &l->inner_strides);
    if (f[LK_NNZ]) bad |= hc_get_uint(log, LP("nnz"), f[LK_NNZ], &l->nnz);
    if (f[LK_FIBER_COUNTS])
        bad |= get_ulist(log, LP("fiber_counts"), f[LK_FIBER_COUNTS], &l->fiber_counts);
    if (f[LK_MODE_ORDER]) bad |= get_ulist(log, LP("mode_order"), f[LK_MODE_ORDER], &l->mode_order);
    if (f[LK_PAGE_SIZE]) bad |= hc_get_uint(log, LP("page_size"), f[LK_PAGE_SIZE], &l->page_size);
    if (f[LK_NUM_PAGES]) bad |= hc_get_uint(log, LP("num_pages"), f[LK_NUM_PAGES], &l->num_pages);
    if (f[LK_NUM_SEQS]) bad |= hc_get_uint(log, LP("num_seqs"), f[LK_NUM_SEQS], &l->num_seqs);
    if (f[LK_NUM_BLOCKS])
        bad |= hc_get_uint(log, LP("num_blocks"), f[LK_NUM_BLOCKS], &l->num_blocks);
    if (f[LK_RULE]) bad |= hc_get_name(log, LP("rule"), f[LK_RULE], l->rule, sizeof l->rule);
    if (f[LK_COMBINE])
        bad |= get_opt_name(log, LP("combine"), f[LK_COMBINE], &l->combine_null, l->combine,
                            sizeof l->combine);
    if (f[LK_MEMBER_COUNT])
        bad |= hc_get_uint(log, LP("member_count"), f[LK_MEMBER_COUNT], &l->member_count);
    if (f[LK_EXT_ID])
        bad |= hc_get_uint(log, LP("extension_layout_id"), f[LK_EXT_ID], &l->extension_layout_id);
    if (f[LK_EXT_DATA])
        bad |= hc_get_bstr(log, LP("extension_data"), f[LK_EXT_DATA], &l->extension_data.p,
                           &l->extension_data.len);
    if (f[LK_PARAMS])
        bad |= hc_get_bstr(log, LP("params"), f[LK_PARAMS], &l->params.p, &l->params.len);
#undef LP
    return bad ? -1 : 0;
}

static int layout_parse(struct hc_log *log, const char *path, const cbor_item_t *item,
                        struct hc_layout_exp *l) {
    const cbor_item_t *f[LK_COUNT];
    char p[HC_PATH_MAX];
    if (hc_map_fields(log, path, item, layout_keys, LK_COUNT, f)) return -1;
    int bad = hc_get_uint(log, hc_pathf(p, "%s.tag", path), f[LK_TAG], &l->tag);
    bad |= hc_get_name(log, hc_pathf(p, "%s.name", path), f[LK_NAME], l->name, sizeof l->name);
    if (bad) return -1;
    uint32_t want;
    if (layout_param_keys(l->tag, &want, &l->keys))
        return hc_schema_fail(log, hc_pathf(p, "%s.tag", path),
                              "tag 0x%02" PRIx64 " is not a layout a valid descriptor can carry",
                              l->tag);
    want |= LB(LK_TAG) | LB(LK_NAME);
    char variant[48];
    snprintf(variant, sizeof variant, "layout tag 0x%02" PRIx64, l->tag);
    bad = check_variant(log, path, layout_keys, LK_COUNT, f, want, variant);
    bad |= layout_fields(log, path, f, l);
    return bad ? -1 : 0;
}

/* ----------------------------------------------------------- sections --- */

/* Every descriptor-map parser takes `base`, the key path of the map itself
 * ("decoded", "decoded.entries[2].descriptor", ...), so errors name the key. */

static int buffers_parse(struct hc_log *log, const char *base, const cbor_item_t *item,
                         struct hc_desc_exp *d) {
    static const struct hc_key keys[] = {
        {"size", HC_KEY_REQUIRED}, {"alignment", HC_KEY_REQUIRED}, {"sync_mode", HC_KEY_REQUIRED}};
    cbor_item_t **items;
    size_t n;
    char path[HC_PATH_MAX];
    if (hc_get_array(log, hc_pathf(path, "%s.buffers", base), item, HURRAY_MAX_BUFFERS, &items,
                     &n))
        return -1;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const cbor_item_t *f[3];
        char b[HC_PATH_MAX], p[HC_PATH_MAX];
        hc_pathf(b, "%s.buffers[%zu]", base, i);
        if (hc_map_fields(log, b, items[i], keys, 3, f)) {
            bad = 1;
            continue;
        }
        struct hc_buffer_exp *e = &d->buffers[i];
        bad |= hc_get_uint(log, hc_pathf(p, "%s.size", b), f[0], &e->size);
        bad |= hc_get_uint(log, hc_pathf(p, "%s.alignment", b), f[1], &e->alignment);
        bad |= hc_get_name(log, hc_pathf(p, "%s.sync_mode", b), f[2], e->sync_mode,
                           sizeof e->sync_mode);
    }
    d->buffer_count = n;
    return bad ? -1 : 0;
}

static int shape_parse(struct hc_log *log, const char *base, const cbor_item_t *item,
                       struct hc_desc_exp *d) {
    cbor_item_t **items;
    size_t n;
    char path[HC_PATH_MAX];
    if (hc_get_array(log, hc_pathf(path, "%s.shape", base), item, HURRAY_MAX_RANK, &items, &n))
        return -1;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char p[HC_PATH_MAX];
        bad |= get_opt_uint(log, hc_pathf(p, "%s.shape[%zu]", base, i), items[i], &d->shape[i]);
    }
    d->rank = n;
    return bad ? -1 : 0;
}

static int stats_parse(struct hc_log *log, const char *base, const cbor_item_t *item,
                       struct hc_stats_exp *s) {
    static const struct hc_key keys[] = {
        {"has_min_max", HC_KEY_REQUIRED}, {"has_nan_count", HC_KEY_REQUIRED},
        {"min", HC_KEY_REQUIRED},         {"max", HC_KEY_REQUIRED},
        {"nan_count", HC_KEY_REQUIRED}};
    const cbor_item_t *f[5];
    char b[HC_PATH_MAX], p[HC_PATH_MAX];
    hc_pathf(b, "%s.statistics", base);
    if (hc_map_fields(log, b, item, keys, 5, f)) return -1;
    int bad = hc_get_bool(log, hc_pathf(p, "%s.has_min_max", b), f[0], &s->has_min_max);
    bad |= hc_get_bool(log, hc_pathf(p, "%s.has_nan_count", b), f[1], &s->has_nan_count);
    s->min_null = hc_is_null(f[2]);
    if (!s->min_null) bad |= hc_get_f64bits(log, hc_pathf(p, "%s.min", b), f[2], &s->min_bits);
    s->max_null = hc_is_null(f[3]);
    if (!s->max_null) bad |= hc_get_f64bits(log, hc_pathf(p, "%s.max", b), f[3], &s->max_bits);
    struct hc_opt_u64 nc;
    bad |= get_opt_uint(log, hc_pathf(p, "%s.nan_count", b), f[4], &nc);
    s->nan_count_null = nc.null;
    s->nan_count = nc.v;
    return bad ? -1 : 0;
}

static int shard_parse(struct hc_log *log, const char *base, const cbor_item_t *item,
                       struct hc_shard_exp *s) {
    static const struct hc_key keys[] = {
        {"shard_index", HC_KEY_REQUIRED}, {"shard_count", HC_KEY_REQUIRED},
        {"global_shape", HC_KEY_REQUIRED}, {"global_offset", HC_KEY_REQUIRED}};
    const cbor_item_t *f[4];
    char b[HC_PATH_MAX], p[HC_PATH_MAX];
    hc_pathf(b, "%s.shard", base);
    if (hc_map_fields(log, b, item, keys, 4, f)) return -1;
    int bad = hc_get_uint(log, hc_pathf(p, "%s.shard_index", b), f[0], &s->shard_index);
    bad |= hc_get_uint(log, hc_pathf(p, "%s.shard_count", b), f[1], &s->shard_count);
    bad |= get_ulist(log, hc_pathf(p, "%s.global_shape", b), f[2], &s->global_shape);
    bad |= get_ulist(log, hc_pathf(p, "%s.global_offset", b), f[3], &s->global_offset);
    return bad ? -1 : 0;
}

static int unknown_sections_parse(struct hc_log *log, const char *base, const cbor_item_t *item,
                                  struct hc_desc_exp *d) {
    static const struct hc_key keys[] = {
        {"type", HC_KEY_REQUIRED}, {"flags", HC_KEY_REQUIRED}, {"data", HC_KEY_REQUIRED}};
    cbor_item_t **items;
    size_t n;
    char path[HC_PATH_MAX];
    if (hc_get_array(log, hc_pathf(path, "%s.unknown_sections", base), item, HURRAY_MAX_SECTIONS,
                     &items, &n))
        return -1;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const cbor_item_t *f[3];
        char b[HC_PATH_MAX], p[HC_PATH_MAX];
        hc_pathf(b, "%s.unknown_sections[%zu]", base, i);
        if (hc_map_fields(log, b, items[i], keys, 3, f)) {
            bad = 1;
            continue;
        }
        struct hc_section_exp *s = &d->sections[i];
        bad |= hc_get_uint(log, hc_pathf(p, "%s.type", b), f[0], &s->type);
        bad |= hc_get_uint(log, hc_pathf(p, "%s.flags", b), f[1], &s->flags);
        bad |= hc_get_bstr(log, hc_pathf(p, "%s.data", b), f[2], &s->data.p, &s->data.len);
    }
    d->section_count = n;
    return bad ? -1 : 0;
}

/* ---------------------------------------------------------- decoded ---- */

enum {
    DK_ENCODED_LEN, DK_VERSION, DK_DTYPE, DK_DTYPE_TAG, DK_DEVICE, DK_DEVICE_TAG, DK_MEMCLASS,
    DK_MEMCLASS_TAG, DK_SHAPE, DK_BYTE_OFFSET, DK_BUFFERS, DK_LAYOUT, DK_QUANT, DK_STATS,
    DK_SHARD, DK_ROLE, DK_UNKNOWN_SECTIONS, DK_COUNT
};

static const struct hc_key desc_keys[DK_COUNT] = {
    [DK_ENCODED_LEN] = {"encoded_len", HC_KEY_REQUIRED},
    [DK_VERSION] = {"version", HC_KEY_REQUIRED},
    [DK_DTYPE] = {"dtype", HC_KEY_REQUIRED},
    [DK_DTYPE_TAG] = {"dtype_tag", HC_KEY_REQUIRED},
    [DK_DEVICE] = {"device", HC_KEY_REQUIRED},
    [DK_DEVICE_TAG] = {"device_tag", HC_KEY_REQUIRED},
    [DK_MEMCLASS] = {"memory_class", HC_KEY_REQUIRED},
    [DK_MEMCLASS_TAG] = {"memory_class_tag", HC_KEY_REQUIRED},
    [DK_SHAPE] = {"shape", HC_KEY_REQUIRED},
    [DK_BYTE_OFFSET] = {"byte_offset", HC_KEY_REQUIRED},
    [DK_BUFFERS] = {"buffers", HC_KEY_REQUIRED},
    [DK_LAYOUT] = {"layout", HC_KEY_REQUIRED},
    [DK_QUANT] = {"quantization", HC_KEY_REQUIRED},
    [DK_STATS] = {"statistics", HC_KEY_REQUIRED},
    [DK_SHARD] = {"shard", HC_KEY_REQUIRED},
    [DK_ROLE] = {"role", HC_KEY_REQUIRED},
    [DK_UNKNOWN_SECTIONS] = {"unknown_sections", HC_KEY_REQUIRED},
};

static int version_parse(struct hc_log *log, const char *base, const cbor_item_t *item,
                         struct hc_desc_exp *d) {
    cbor_item_t **items;
    size_t n;
    char b[HC_PATH_MAX], p[HC_PATH_MAX];
    hc_pathf(b, "%s.version", base);
    if (hc_get_array(log, b, item, 2, &items, &n)) return -1;
    if (n != 2) return hc_schema_fail(log, b, "expected [major, minor], got %zu entries", n);
    int bad = hc_get_uint(log, hc_pathf(p, "%s[0]", b), items[0], &d->version_major);
    bad |= hc_get_uint(log, hc_pathf(p, "%s[1]", b), items[1], &d->version_minor);
    return bad ? -1 : 0;
}

static int sections_parse(struct hc_log *log, const char *base, const cbor_item_t **f,
                          struct hc_desc_exp *d) {
    char p[HC_PATH_MAX];
    int bad = is_null_or_map(log, hc_pathf(p, "%s.quantization", base), f[DK_QUANT],
                             &d->has_quant);
    if (d->has_quant) bad |= hc_qmap_parse(log, p, f[DK_QUANT], &d->quant);
    bad |= is_null_or_map(log, hc_pathf(p, "%s.statistics", base), f[DK_STATS], &d->has_stats);
    if (d->has_stats) bad |= stats_parse(log, base, f[DK_STATS], &d->stats);
    bad |= is_null_or_map(log, hc_pathf(p, "%s.shard", base), f[DK_SHARD], &d->has_shard);
    if (d->has_shard) bad |= shard_parse(log, base, f[DK_SHARD], &d->shard);
    bad |= get_opt_name(log, hc_pathf(p, "%s.role", base), f[DK_ROLE], &d->role_null, d->role,
                        sizeof d->role);
    bad |= unknown_sections_parse(log, base, f[DK_UNKNOWN_SECTIONS], d);
    return bad ? -1 : 0;
}

int hc_desc_parse(struct hc_log *log, const char *base, const cbor_item_t *item,
                  struct hc_desc_exp *d) {
    const cbor_item_t *f[DK_COUNT];
    char p[HC_PATH_MAX];
#define DP(key) hc_pathf(p, "%s.%s", base, key)
    if (hc_map_fields(log, base, item, desc_keys, DK_COUNT, f)) return -1;
    int bad = hc_get_uint(log, DP("encoded_len"), f[DK_ENCODED_LEN], &d->encoded_len);
    bad |= version_parse(log, base, f[DK_VERSION], d);
    bad |= hc_get_name(log, DP("dtype"), f[DK_DTYPE], d->dtype, sizeof d->dtype);
    bad |= hc_get_uint(log, DP("dtype_tag"), f[DK_DTYPE_TAG], &d->dtype_tag);
    bad |= hc_get_name(log, DP("device"), f[DK_DEVICE], d->device, sizeof d->device);
    bad |= hc_get_uint(log, DP("device_tag"), f[DK_DEVICE_TAG], &d->device_tag);
    bad |= hc_get_name(log, DP("memory_class"), f[DK_MEMCLASS], d->memory_class,
                       sizeof d->memory_class);
    bad |= hc_get_uint(log, DP("memory_class_tag"), f[DK_MEMCLASS_TAG], &d->memory_class_tag);
    bad |= shape_parse(log, base, f[DK_SHAPE], d);
    bad |= hc_get_uint(log, DP("byte_offset"), f[DK_BYTE_OFFSET], &d->byte_offset);
    bad |= buffers_parse(log, base, f[DK_BUFFERS], d);
    bad |= layout_parse(log, DP("layout"), f[DK_LAYOUT], &d->layout);
    bad |= sections_parse(log, base, f, d);
#undef DP
    return bad ? -1 : 0;
}

/* -------------------------------------------------------------- vector --- */

enum {
    VK_ID, VK_TCID, VK_KIND, VK_PATH, VK_SIZE, VK_SHA256, VK_EXPECT, VK_ERROR, VK_ROUNDTRIP,
    VK_OPTIONS, VK_DESCRIPTION, VK_SPEC_REFS, VK_I_OUTCOMES, VK_DECODED, VK_ERROR_AFTER_ITEMS,
    VK_COUNT
};

static const struct hc_key vector_keys[VK_COUNT] = {
    [VK_ID] = {"id", HC_KEY_REQUIRED},
    [VK_TCID] = {"tcid", HC_KEY_REQUIRED},
    [VK_KIND] = {"kind", HC_KEY_REQUIRED},
    [VK_PATH] = {"path", HC_KEY_REQUIRED},
    [VK_SIZE] = {"size", HC_KEY_REQUIRED},
    [VK_SHA256] = {"sha256", HC_KEY_REQUIRED},
    [VK_EXPECT] = {"expect", HC_KEY_REQUIRED},
    [VK_ERROR] = {"error", 0},
    [VK_ROUNDTRIP] = {"roundtrip", HC_KEY_REQUIRED},
    [VK_OPTIONS] = {"options", 0},
    [VK_DESCRIPTION] = {"description", HC_KEY_REQUIRED},
    [VK_SPEC_REFS] = {"spec_refs", HC_KEY_REQUIRED},
    [VK_I_OUTCOMES] = {"i_outcomes", 0},
    [VK_DECODED] = {"decoded", 0},
    [VK_ERROR_AFTER_ITEMS] = {"error_after_items", 0}, /* schema 2: invalid streams */
};

/* A relative path inside the vectors directory: no absolute paths, no "..",
 * no empty components, no NUL or backslash. */
static int path_parse(struct hc_log *log, const cbor_item_t *item, struct hc_vector *v) {
    if (hc_get_name(log, "path", item, v->path, sizeof v->path)) return -1;
    const char *s = v->path;
    if (!*s || *s == '/' || strchr(s, '\\'))
        return hc_schema_fail(log, "path", "\"%s\" is not a relative path", s);
    for (const char *c = s; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 2 && c[0] == '.' && c[1] == '.') || (n == 1 && c[0] == '.'))
            return hc_schema_fail(log, "path", "\"%s\" has an empty, \".\" or \"..\" component", s);
        c += n;
        if (*c == '/') c++;
    }
    return 0;
}

static int options_parse(struct hc_log *log, const cbor_item_t *item, struct hc_vector *v) {
    if (hc_map_check_keys(log, "options", item)) return -1;
    size_t n = cbor_map_size(item);
    struct cbor_pair *pairs = cbor_map_handle(item);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = (const char *)cbor_string_handle(pairs[i].key);
        size_t len = cbor_string_length(pairs[i].key);
        char kb[HC_PATH_MAX], p[HC_PATH_MAX];
        hc_printable(kb, sizeof kb, name ? name : "", len);
        uint64_t value;
        if (len == 13 && memcmp(name, "cross_machine", 13) == 0) {
            if (v->kind != HC_KIND_STREAM)
                bad = hc_schema_fail(log, "options.cross_machine", "only stream vectors have it");
            else
                bad |= hc_get_bool(log, "options.cross_machine", pairs[i].value, &v->cross_machine);
            continue;
        }
        if (len == 17 && memcmp(name, "require_end_frame", 17) == 0) {
            if (v->kind != HC_KIND_STREAM || v->schema_version < 4)
                bad = hc_schema_fail(log, "options.require_end_frame",
                                     "only stream vectors of schema 4 have it");
            else
                bad |= hc_get_bool(log, "options.require_end_frame", pairs[i].value,
                                   &v->require_end_frame);
            continue;
        }
        if (hc_get_uint(log, hc_pathf(p, "options.%s", kb), pairs[i].value, &value)) {
            bad = 1;
            continue;
        }
        if (hc_limit_set(&v->limits, name ? name : "", len, value))
            bad = hc_schema_fail(log, "options", "unknown limit \"%s\"", kb);
    }
    return bad ? -1 : 0;
}

static int outcomes_parse(struct hc_log *log, const cbor_item_t *item, struct hc_vector *v) {
    cbor_item_t **items;
    size_t n;
    if (hc_get_array(log, "i_outcomes", item, HC_MAX_OUTCOMES, &items, &n)) return -1;
    if (n == 0) return hc_schema_fail(log, "i_outcomes", "empty list");
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char p[HC_PATH_MAX], name[HC_NAME_MAX];
        hc_pathf(p, "i_outcomes[%zu]", i);
        if (hc_get_name(log, p, items[i], name, sizeof name)) {
            bad = 1;
            continue;
        }
        /* schema 3 spells success "OK" (a key of error_codes); the harness's
         * own test corpus, written before, "ok" */
        int success = strcmp(name, "OK") == 0 || strcmp(name, "ok") == 0;
        int code = success ? 0 : hc_status_value(name, strlen(name));
        if (code <= 0 && !success) {
            bad = hc_schema_fail(log, p, "\"%s\" is neither \"OK\" nor a status name libhurray knows", name);
            continue;
        }
        v->outcomes[i] = code;
    }
    v->n_outcomes = n;
    return bad ? -1 : 0;
}

static int spec_refs_parse(struct hc_log *log, const cbor_item_t *item) {
    cbor_item_t **items;
    size_t n;
    if (hc_get_array(log, "spec_refs", item, SIZE_MAX, &items, &n)) return -1;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        char p[HC_PATH_MAX];
        bad |= hc_get_tstr(log, hc_pathf(p, "spec_refs[%zu]", i), items[i], &s, &len);
    }
    return bad ? -1 : 0;
}

static int identity_parse(struct hc_log *log, const cbor_item_t **f, unsigned schema_version,
                          struct hc_vector *v) {
    int bad = 0;
    const char *s;
    size_t len;
    if (!hc_get_tstr(log, "id", f[VK_ID], &s, &len)) {
        if (len == 0 || len >= sizeof v->id || memchr(s, '\0', len))
            bad = hc_schema_fail(log, "id", "must be 1..%zu bytes without NUL", sizeof v->id - 1);
        else
            memcpy(v->id, s, len);
    } else {
        bad = 1;
    }
    bad |= hc_get_uint(log, "tcid", f[VK_TCID], &v->tcid);
    char kind[HC_NAME_MAX];
    v->kind = HC_KIND_UNKNOWN;
    if (!hc_get_name(log, "kind", f[VK_KIND], kind, sizeof kind)) {
        enum hc_kind k = hc_kind_from_name(kind);
        if (k == HC_KIND_UNKNOWN)
            bad = hc_schema_fail(log, "kind", "unknown kind \"%s\"", kind);
        else if (hc_kind_min_schema(k) > schema_version)
            bad = hc_schema_fail(log, "kind", "kind \"%s\" needs schema_version %u, the manifest "
                                 "has %u", kind, hc_kind_min_schema(k), schema_version);
        else
            v->kind = k;
    } else {
        bad = 1;
    }
    char expect[HC_NAME_MAX];
    v->expect = HC_EXPECT_UNKNOWN;
    if (!hc_get_name(log, "expect", f[VK_EXPECT], expect, sizeof expect)) {
        if (strcmp(expect, "valid") == 0) v->expect = HC_EXPECT_VALID;
        else if (strcmp(expect, "invalid") == 0) v->expect = HC_EXPECT_INVALID;
        else if (strcmp(expect, "implementation-defined") == 0) v->expect = HC_EXPECT_IMPL;
        else bad = hc_schema_fail(log, "expect", "unknown expectation \"%s\"", expect);
    } else {
        bad = 1;
    }
    return bad ? -1 : 0;
}

static int input_parse(struct hc_log *log, const cbor_item_t **f, struct hc_vector *v) {
    int bad = path_parse(log, f[VK_PATH], v);
    bad |= hc_get_uint(log, "size", f[VK_SIZE], &v->size);
    size_t len = 0;
    if (!hc_get_bstr(log, "sha256", f[VK_SHA256], &v->sha256, &len) && len != 32)
        bad = hc_schema_fail(log, "sha256", "expected 32 bytes, got %zu", len);
    if (f[VK_OPTIONS]) bad |= options_parse(log, f[VK_OPTIONS], v);
    const char *s;
    bad |= hc_get_tstr(log, "description", f[VK_DESCRIPTION], &s, &len);
    bad |= spec_refs_parse(log, f[VK_SPEC_REFS]);
    bad |= hc_get_bool(log, "roundtrip", f[VK_ROUNDTRIP], &v->roundtrip);
    return bad ? -1 : 0;
}

/* Keys that exist for one expectation only. */
static int expectation_parse(struct hc_log *log, const cbor_item_t **f, struct hc_vector *v) {
    int bad = 0;
    if (v->expect == HC_EXPECT_UNKNOWN) return -1;
    int invalid = v->expect == HC_EXPECT_INVALID, impl = v->expect == HC_EXPECT_IMPL,
        valid = v->expect == HC_EXPECT_VALID;
    if (!f[VK_ERROR] != !invalid)
        bad = hc_schema_fail(log, "error", invalid ? "required for an invalid vector"
                                                   : "present, but the vector is not invalid");
    if (!f[VK_I_OUTCOMES] != !impl)
        bad = hc_schema_fail(log, "i_outcomes", impl ? "required for an implementation-defined vector"
                                                     : "present, but the vector is not implementation-defined");
    if (!f[VK_DECODED] != !valid)
        bad = hc_schema_fail(log, "decoded", valid ? "required for a valid vector"
                                                   : "present, but the vector is not valid");
    if (v->roundtrip && !valid)
        bad = hc_schema_fail(log, "roundtrip", "true, but the vector is not valid");
    if (invalid && f[VK_ERROR] &&
        !hc_get_name(log, "error", f[VK_ERROR], v->error_name, sizeof v->error_name)) {
        v->error = hc_status_value(v->error_name, strlen(v->error_name));
        if (v->error <= 0)
            bad = hc_schema_fail(log, "error", "\"%s\" is not a failure status libhurray knows",
                                 v->error_name);
    } else if (invalid) {
        bad = 1;
    }
    if (impl && f[VK_I_OUTCOMES]) bad |= outcomes_parse(log, f[VK_I_OUTCOMES], v);
    int stream_invalid = invalid && v->kind == HC_KIND_STREAM;
    if (!f[VK_ERROR_AFTER_ITEMS] != !stream_invalid)
        bad = hc_schema_fail(log, "error_after_items",
                             stream_invalid ? "required for an invalid stream vector"
                                            : "present, but the vector is not an invalid stream");
    else if (stream_invalid &&
             !hc_get_uint(log, "error_after_items", f[VK_ERROR_AFTER_ITEMS], &v->error_after_items))
        v->has_error_after_items = 1;
    else if (stream_invalid)
        bad = 1;
    return bad ? -1 : 0;
}

static int decoded_parse(struct hc_log *log, const cbor_item_t *item, struct hc_vector *v) {
    if (v->kind == HC_KIND_DESCRIPTOR) {
        v->desc = calloc(1, sizeof *v->desc);
        if (!v->desc) return hc_schema_fail(log, "decoded", "out of memory");
        return hc_desc_parse(log, "decoded", item, v->desc);
    }
    if (v->kind == HC_KIND_QUANT) {
        v->qmap = calloc(1, sizeof *v->qmap);
        if (!v->qmap) return hc_schema_fail(log, "decoded", "out of memory");
        return hc_qmap_parse(log, "decoded", item, v->qmap);
    }
    if (v->kind == HC_KIND_KV) return hc_kv_decoded_parse(log, item, v);
    if (v->kind == HC_KIND_FILE) return hc_file_decoded_parse(log, item, v);
    if (v->kind == HC_KIND_STREAM) return hc_stream_decoded_parse(log, item, v);
    return -1;
}

int hc_vector_parse(struct hc_log *log, const cbor_item_t *item, unsigned schema_version,
                    struct hc_vector *v) {
    const cbor_item_t *f[VK_COUNT];
    memset(v, 0, sizeof *v);
    v->kind = HC_KIND_UNKNOWN;
    v->expect = HC_EXPECT_UNKNOWN;
    hurray_limits_default(&v->limits);
    v->schema_version = schema_version;
    int bad = hc_map_fields(log, "vector", item, vector_keys, VK_COUNT, f);
    if (!item || !cbor_isa_map(item)) return -1;
    bad |= identity_parse(log, f, schema_version, v);
    if (f[VK_PATH] && f[VK_SIZE] && f[VK_SHA256] && f[VK_DESCRIPTION] && f[VK_SPEC_REFS] &&
        f[VK_ROUNDTRIP])
        bad |= input_parse(log, f, v);
    bad |= expectation_parse(log, f, v);
    if (v->expect == HC_EXPECT_VALID && f[VK_DECODED]) {
        v->decoded_item = f[VK_DECODED];
        bad |= decoded_parse(log, f[VK_DECODED], v);
    }
    return bad ? -1 : 0;
}

void hc_vector_free(struct hc_vector *v) {
    free(v->desc);
    free(v->qmap);
    free(v->kv);
    if (v->file) hc_file_exp_free(v->file);
    if (v->stream) hc_stream_exp_free(v->stream);
    free(v->file);
    free(v->stream);
    v->desc = NULL;
    v->qmap = NULL;
    v->kv = NULL;
    v->file = NULL;
    v->stream = NULL;
}
