/* libhurray's decoded values as the manifest's "decoded" maps
 * (vectors/SCHEMA.md § decoded of a descriptor, § quantization map, § KV
 * values, § decoded of a stream). Names come from the library's name
 * functions; tags, sizes and counts are integers; floats travel as bit
 * patterns; absent things are null. The key set of every map is fixed by
 * the schema, so each map's size is known before its keys are written. */
#include <string.h>

#include "sha256.h"
#include "testee.h"

static void key(struct hc_buf *b, const char *k) { hc_cbor_tstr(b, k); }

static void name_or_null(struct hc_buf *b, const char *s) {
    if (s) hc_cbor_tstr(b, s);
    else hc_cbor_null(b);
}

static const char *dtype_name(uint8_t tag) {
    const struct hurray_dtype_info *info = hurray_dtype_info(tag);
    if (info) return info->name;
    return hurray_dtype_tag_kind(tag) == HURRAY_TAG_PRIVATE ? "extension" : NULL;
}

static void f64bits(struct hc_buf *b, double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    hc_cbor_map(b, 1);
    key(b, "f64");
    hc_cbor_uint(b, bits);
}

static void f32bits(struct hc_buf *b, float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    hc_cbor_map(b, 1);
    key(b, "f32");
    hc_cbor_uint(b, bits);
}

static void index_or_null(struct hc_buf *b, uint8_t idx) {
    if (idx == HURRAY_NO_BUFFER) hc_cbor_null(b);
    else hc_cbor_uint(b, idx);
}

/* ------------------------------------------------------------ quantization --- */

void ht_put_quant(struct hc_buf *b, const struct hurray_quant *q) {
    switch (q->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
        hc_cbor_map(b, 3);
        key(b, "scheme");
        name_or_null(b, hurray_quant_scheme_name(q->scheme));
        key(b, "scale");
        f64bits(b, q->scale);
        key(b, "zero_point");
        hc_cbor_int(b, q->zero_point);
        return;
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
    case HURRAY_QUANT_BLOCK_AFFINE: {
        int block = q->scheme == HURRAY_QUANT_BLOCK_AFFINE;
        hc_cbor_map(b, 6 + (size_t)block);
        key(b, "scheme");
        name_or_null(b, hurray_quant_scheme_name(q->scheme));
        key(b, "axis");
        hc_cbor_uint(b, q->axis);
        key(b, "scale_buffer_index");
        hc_cbor_uint(b, q->scale_buffer);
        key(b, "zero_point_buffer_index");
        index_or_null(b, q->zero_point_buffer);
        key(b, "scale_dtype");
        name_or_null(b, dtype_name(q->scale_dtype));
        key(b, "zero_point_dtype");
        name_or_null(b, q->zero_point_dtype ? dtype_name(q->zero_point_dtype) : NULL);
        if (block) {
            key(b, "block_size");
            hc_cbor_uint(b, q->block_size);
        }
        return;
    }
    case HURRAY_QUANT_NF4:
        hc_cbor_map(b, 8);
        key(b, "scheme");
        name_or_null(b, hurray_quant_scheme_name(q->scheme));
        key(b, "double_quant");
        hc_cbor_bool(b, (q->flags & HURRAY_NF4_DOUBLE_QUANT) != 0);
        key(b, "block_size");
        hc_cbor_uint(b, q->block_size);
        key(b, "absmax_buffer_index");
        hc_cbor_uint(b, q->absmax_buffer);
        key(b, "nested_absmax_buffer_index");
        index_or_null(b, q->nested_absmax_buffer);
        key(b, "quant_map_buffer_index");
        index_or_null(b, q->quant_map_buffer);
        key(b, "nested_block_size");
        hc_cbor_uint(b, q->nested_block_size);
        key(b, "nested_offset");
        f32bits(b, q->nested_offset);
        return;
    case HURRAY_QUANT_MX:
    case HURRAY_QUANT_NVFP4: {
        int nv = q->scheme == HURRAY_QUANT_NVFP4;
        hc_cbor_map(b, 4 + (size_t)nv);
        key(b, "scheme");
        name_or_null(b, hurray_quant_scheme_name(q->scheme));
        key(b, "axis");
        hc_cbor_uint(b, q->axis);
        key(b, "scale_buffer_index");
        hc_cbor_uint(b, q->scale_buffer);
        key(b, "block_size");
        hc_cbor_uint(b, q->block_size);
        if (nv) {
            key(b, "tensor_scale");
            f32bits(b, q->tensor_scale);
        }
        return;
    }
    default: /* a decoder never yields another scheme */
        hc_cbor_map(b, 1);
        key(b, "scheme");
        hc_cbor_null(b);
    }
}

/* ------------------------------------------------------------ descriptor --- */

static void ulist(struct hc_buf *b, const uint64_t *v, size_t n) {
    hc_cbor_array(b, n);
    for (size_t i = 0; i < n; i++) hc_cbor_uint(b, v[i]);
}

static void ilist(struct hc_buf *b, const int64_t *v, size_t n) {
    hc_cbor_array(b, n);
    for (size_t i = 0; i < n; i++) hc_cbor_int(b, v[i]);
}

/* vectors/SCHEMA.md § layout: "tag", "name" and exactly the layout's parameters. */
static void put_layout(struct hc_buf *b, const struct hurray_layout *l, size_t rank) {
    int kind = hurray_layout_tag_kind(l->tag);
    size_t extra = 0;
    if (kind == HURRAY_TAG_PRIVATE) extra = 2;
    else if (kind != HURRAY_TAG_NAMED) extra = 1; /* reserved: params */
    else switch (l->tag) {
        case HURRAY_LAYOUT_STRIDED: extra = 1; break;
        case HURRAY_LAYOUT_TILED: extra = 3; break;
        case HURRAY_LAYOUT_COO:
        case HURRAY_LAYOUT_CSR:
        case HURRAY_LAYOUT_CSC: extra = 1; break;
        case HURRAY_LAYOUT_CSF: extra = 3; break;
        case HURRAY_LAYOUT_BLOCK_PAGED: extra = 4; break;
        case HURRAY_LAYOUT_COMPOSITE: extra = 3; break;
        default: extra = 0;
        }
    hc_cbor_map(b, 2 + extra);
    key(b, "tag");
    hc_cbor_uint(b, l->tag);
    key(b, "name");
    name_or_null(b, hurray_layout_name(l->tag));
    if (kind == HURRAY_TAG_PRIVATE) {
        key(b, "extension_layout_id");
        hc_cbor_uint(b, l->extension_layout_id);
        key(b, "extension_data");
        hc_cbor_bstr(b, l->opaque, l->opaque_len);
        return;
    }
    if (kind != HURRAY_TAG_NAMED) {
        key(b, "params");
        hc_cbor_bstr(b, l->opaque, l->opaque_len);
        return;
    }
    switch (l->tag) {
    case HURRAY_LAYOUT_STRIDED:
        key(b, "strides");
        ilist(b, l->strides, rank);
        break;
    case HURRAY_LAYOUT_TILED:
        key(b, "tile_shape");
        ulist(b, l->tile_shape, rank);
        key(b, "outer_strides");
        ilist(b, l->strides, rank);
        key(b, "inner_strides");
        ilist(b, l->inner_strides, rank);
        break;
    case HURRAY_LAYOUT_COO:
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
        key(b, "nnz");
        hc_cbor_uint(b, l->nnz);
        break;
    case HURRAY_LAYOUT_CSF:
        key(b, "nnz");
        hc_cbor_uint(b, l->nnz);
        key(b, "fiber_counts");
        ulist(b, l->fiber_counts, rank ? rank - 1 : 0);
        key(b, "mode_order");
        hc_cbor_array(b, rank);
        for (size_t i = 0; i < rank; i++) hc_cbor_uint(b, l->mode_order[i]);
        break;
    case HURRAY_LAYOUT_BLOCK_PAGED:
        key(b, "page_size");
        hc_cbor_uint(b, l->page_size);
        key(b, "num_pages");
        hc_cbor_uint(b, l->num_pages);
        key(b, "num_seqs");
        hc_cbor_uint(b, l->num_seqs);
        key(b, "num_blocks");
        hc_cbor_uint(b, l->num_blocks);
        break;
    case HURRAY_LAYOUT_COMPOSITE:
        key(b, "rule");
        name_or_null(b, hurray_composite_rule_name(l->rule));
        key(b, "combine"); /* 0x00: "not applicable" */
        name_or_null(b, l->combine == HURRAY_COMBINE_NONE ? NULL : hurray_combine_op_name(l->combine));
        key(b, "member_count");
        hc_cbor_uint(b, l->member_count);
        break;
    default: break;
    }
}

static void put_statistics(struct hc_buf *b, const struct hurray_statistics *s) {
    int mm = (s->flags & HURRAY_STATS_HAS_MIN_MAX) != 0;
    int nc = (s->flags & HURRAY_STATS_HAS_NAN_COUNT) != 0;
    hc_cbor_map(b, 5);
    key(b, "has_min_max");
    hc_cbor_bool(b, mm);
    key(b, "has_nan_count");
    hc_cbor_bool(b, nc);
    key(b, "min");
    if (mm) f64bits(b, s->min);
    else hc_cbor_null(b);
    key(b, "max");
    if (mm) f64bits(b, s->max);
    else hc_cbor_null(b);
    key(b, "nan_count");
    if (nc) hc_cbor_uint(b, s->nan_count);
    else hc_cbor_null(b);
}

void ht_put_descriptor(struct hc_buf *b, const struct hurray_descriptor *d, size_t encoded_len) {
    size_t rank = d->rank;
    hc_cbor_map(b, 17);
    key(b, "encoded_len");
    hc_cbor_uint(b, encoded_len);
    key(b, "version");
    hc_cbor_array(b, 2);
    hc_cbor_uint(b, d->version_major);
    hc_cbor_uint(b, d->version_minor);
    key(b, "dtype");
    name_or_null(b, dtype_name(d->dtype));
    key(b, "dtype_tag");
    hc_cbor_uint(b, d->dtype);
    key(b, "device");
    name_or_null(b, hurray_device_name(d->device));
    key(b, "device_tag");
    hc_cbor_uint(b, d->device);
    key(b, "memory_class");
    name_or_null(b, hurray_memory_class_name(d->memory_class));
    key(b, "memory_class_tag");
    hc_cbor_uint(b, d->memory_class);
    key(b, "shape");
    hc_cbor_array(b, rank);
    for (size_t i = 0; i < rank; i++) {
        if (d->shape[i] == HURRAY_DYNAMIC_DIM) hc_cbor_null(b);
        else hc_cbor_uint(b, d->shape[i]);
    }
    key(b, "byte_offset");
    hc_cbor_uint(b, d->byte_offset);
    key(b, "buffers");
    hc_cbor_array(b, d->buffer_count);
    for (size_t i = 0; i < d->buffer_count; i++) {
        const struct hurray_buffer_desc *bd = &d->buffers[i];
        hc_cbor_map(b, 3);
        key(b, "size");
        hc_cbor_uint(b, bd->size);
        key(b, "alignment");
        hc_cbor_uint(b, bd->alignment_log2 < 64 ? (uint64_t)1 << bd->alignment_log2 : 0);
        key(b, "sync_mode");
        name_or_null(b, hurray_sync_mode_name(bd->sync_mode));
    }
    key(b, "layout");
    put_layout(b, &d->layout, rank);
    key(b, "quantization");
    if (d->quant) ht_put_quant(b, d->quant);
    else hc_cbor_null(b);
    key(b, "statistics");
    if (d->statistics) put_statistics(b, d->statistics);
    else hc_cbor_null(b);
    key(b, "shard");
    if (d->shard) {
        hc_cbor_map(b, 4);
        key(b, "shard_index");
        hc_cbor_uint(b, d->shard->shard_index);
        key(b, "shard_count");
        hc_cbor_uint(b, d->shard->shard_count);
        key(b, "global_shape");
        ulist(b, d->shard->global_shape, rank);
        key(b, "global_offset");
        ulist(b, d->shard->global_offset, rank);
    } else {
        hc_cbor_null(b);
    }
    key(b, "role");
    name_or_null(b, d->has_role ? hurray_member_role_name(d->role) : NULL);
    key(b, "unknown_sections");
    hc_cbor_array(b, d->opaque_count);
    for (size_t i = 0; i < d->opaque_count; i++) {
        const struct hurray_opaque_section *s = &d->opaque[i];
        hc_cbor_map(b, 3);
        key(b, "type");
        hc_cbor_uint(b, s->type);
        key(b, "flags");
        hc_cbor_uint(b, s->flags);
        key(b, "data");
        hc_cbor_bstr(b, s->data, s->length);
    }
}

/* -------------------------------------------------------------------- KV --- */

static void put_kv_value(struct hc_buf *b, const struct hurray_kv_value *v, unsigned depth) {
    const char *t = hurray_kv_type_name(v->type);
    hc_cbor_map(b, 1);
    name_or_null(b, t);
    switch (v->type) {
    case HURRAY_KV_BOOL: hc_cbor_bool(b, v->v.boolean); break;
    case HURRAY_KV_INT64: hc_cbor_int(b, v->v.i64); break;
    case HURRAY_KV_UINT64: hc_cbor_uint(b, v->v.u64); break;
    case HURRAY_KV_FLOAT64: {
        uint64_t bits;
        memcpy(&bits, &v->v.f64, sizeof bits);
        hc_cbor_uint(b, bits);
        break;
    }
    case HURRAY_KV_STRING: hc_cbor_tstrn(b, (const char *)v->v.bytes.data, (size_t)v->v.bytes.len); break;
    case HURRAY_KV_BYTES: hc_cbor_bstr(b, v->v.bytes.data, (size_t)v->v.bytes.len); break;
    case HURRAY_KV_LIST:
        /* the decoder bounds the depth (max_composite_depth <= 64) */
        hc_cbor_array(b, (size_t)v->v.list.count);
        for (uint64_t i = 0; i < v->v.list.count && depth < 100; i++)
            put_kv_value(b, &v->v.list.items[i], depth + 1);
        break;
    default: hc_cbor_null(b);
    }
}

void ht_put_kv(struct hc_buf *b, const struct hurray_kv_entry *entries, size_t count) {
    hc_cbor_map(b, count);
    for (size_t i = 0; i < count; i++) {
        hc_cbor_tstrn(b, entries[i].key, entries[i].key_len);
        put_kv_value(b, &entries[i].value, 0);
    }
}

/* ---------------------------------------------------------------- items --- */

void ht_put_buffer(struct hc_buf *b, const uint8_t *data, uint64_t size, int with_offset,
                   uint64_t offset) {
    static const uint8_t none[1] = {0};
    uint8_t digest[32];
    hc_sha256(data ? data : none, data ? (size_t)size : 0, digest);
    hc_cbor_map(b, 2 + (size_t)with_offset);
    if (with_offset) {
        key(b, "offset");
        hc_cbor_uint(b, offset);
    }
    key(b, "size");
    hc_cbor_uint(b, size);
    key(b, "sha256");
    hc_cbor_bstr(b, digest, 32);
}

static int put_item(struct hc_buf *b, const struct hurray_item *it, unsigned depth,
                    const struct hurray_stream_annotation *a) {
    struct hurray_error err;
    size_t len = 0;
    if (!it || !it->descriptor || depth > 100) return -1;
    const struct hurray_descriptor *d = it->descriptor;
    if (hurray_descriptor_encoded_len(d, &len, &err) != HURRAY_OK) return -1;
    int composite = hurray_item_is_composite(it);
    int has_name = a && a->name, has_md = a && a->metadata_count;
    hc_cbor_map(b, 3 + (size_t)has_name + (size_t)has_md);
    if (has_name) { /* schema 5 (stream.md HR-STREAM-18) */
        key(b, "name");
        hc_cbor_tstrn(b, a->name, a->name_len);
    }
    if (has_md) {
        key(b, "metadata");
        ht_put_kv(b, a->metadata, a->metadata_count);
    }
    key(b, "kind");
    hc_cbor_tstr(b, composite ? "composite" : "tensor");
    key(b, "descriptor");
    ht_put_descriptor(b, d, len);
    if (composite) {
        key(b, "members");
        hc_cbor_array(b, it->member_count);
        for (uint32_t k = 0; k < it->member_count; k++)
            if (put_item(b, it->members[k], depth + 1, NULL)) return -1;
        return 0;
    }
    key(b, "buffers");
    hc_cbor_array(b, d->buffer_count);
    for (size_t i = 0; i < d->buffer_count; i++)
        ht_put_buffer(b, it->buffers ? it->buffers[i].data : NULL,
                      it->buffers ? it->buffers[i].size : 0, 0, 0);
    return 0;
}

int ht_put_item(struct hc_buf *b, const struct hurray_item *it, unsigned depth) {
    return put_item(b, it, depth, NULL);
}

int ht_put_stream_item(struct hc_buf *b, const struct hurray_item *it,
                       const struct hurray_stream_annotation *a) {
    return put_item(b, it, 0, a);
}
