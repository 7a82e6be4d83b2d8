/* Quantization descriptors: scheme table, payload codec, context-free and
 * context checks, scale-buffer sizes. docs/spec/quantization.md */
#include <math.h>

#include "internal.h"

/* ---- scheme tags (quantization.md § Scheme tags, HR-QUANT-2) -------------- */

static const struct {
    const char *name;
    uint8_t payload;
} scheme_table[] = {
    [HURRAY_QUANT_PER_TENSOR_AFFINE] = {"per_tensor_affine", 24},
    [HURRAY_QUANT_PER_CHANNEL_AFFINE] = {"per_channel_affine", 16},
    [HURRAY_QUANT_BLOCK_AFFINE] = {"block_affine", 24},
    [HURRAY_QUANT_NF4] = {"nf4", 24},
    [HURRAY_QUANT_MX] = {"mx", 16},
    [HURRAY_QUANT_NVFP4] = {"nvfp4", 16},
};

#define SCHEME_LAST HURRAY_QUANT_NVFP4
#define MX_BLOCK 32u
#define NVFP4_BLOCK 16u
#define NF4_BLOCK_MIN 32u
#define NF4_BLOCK_MAX 4096u
#define NF4_QUANT_MAP_ENTRIES 256u

static int scheme_is_named(uint8_t s) { return s >= 1 && s <= SCHEME_LAST; }

const char *hurray_quant_scheme_name(uint8_t scheme) {
    return scheme_is_named(scheme) ? scheme_table[scheme].name : NULL;
}

/* The scheme space has no private range (conventions.md § Tag spaces). */
int hurray_quant_scheme_tag_kind(uint8_t scheme) {
    return hri_tag_kind_plain(scheme, scheme_is_named(scheme));
}

static int check_scheme(uint8_t scheme, struct hurray_error *err) {
    return hri_check_tag_kind(hurray_quant_scheme_tag_kind(scheme), scheme, 0,
                              "quantization.scheme", err);
}

int hurray_quant_payload_length(uint8_t scheme, uint32_t *len, struct hurray_error *err) {
    HR_FAIL_IF(!len, err, HURRAY_E_ARGUMENT, "len", "quant_payload_length: len is NULL");
    HR_TRY(check_scheme(scheme, err));
    *len = scheme_table[scheme].payload;
    return HURRAY_OK;
}

static int has_double_quant(const struct hurray_quant *q) {
    return (q->flags & HURRAY_NF4_DOUBLE_QUANT) != 0;
}

static int has_zero_point(const struct hurray_quant *q) {
    return q->zero_point_buffer != HURRAY_NO_BUFFER;
}

/* The section's buffers in section order (HR-QUANT-3): their index fields
 * and field names. Returns Q. */
static unsigned scheme_buffers(const struct hurray_quant *q, uint8_t idx[3],
                               const char *names[3]) {
    switch (q->scheme) {
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
    case HURRAY_QUANT_BLOCK_AFFINE:
        idx[0] = q->scale_buffer;
        names[0] = "quantization.scale_buffer_index";
        idx[1] = q->zero_point_buffer;
        names[1] = "quantization.zero_point_buffer_index";
        return has_zero_point(q) ? 2 : 1;
    case HURRAY_QUANT_NF4:
        idx[0] = q->absmax_buffer;
        names[0] = "quantization.absmax_buffer_index";
        idx[1] = q->nested_absmax_buffer;
        names[1] = "quantization.nested_absmax_buffer_index";
        idx[2] = q->quant_map_buffer;
        names[2] = "quantization.quant_map_buffer_index";
        return has_double_quant(q) ? 3 : 1;
    case HURRAY_QUANT_MX:
    case HURRAY_QUANT_NVFP4:
        idx[0] = q->scale_buffer;
        names[0] = "quantization.scale_buffer_index";
        return 1;
    default:
        return 0;
    }
}

int hurray_quant_buffer_count(const struct hurray_quant *q, int *count,
                              struct hurray_error *err) {
    HR_FAIL_IF(!q || !count, err, HURRAY_E_ARGUMENT, "quantization",
               "quant_buffer_count: NULL argument");
    HR_TRY(check_scheme(q->scheme, err));
    uint8_t idx[3];
    const char *names[3];
    *count = (int)scheme_buffers(q, idx, names);
    return HURRAY_OK;
}

/* ---- context-free checks: structure (tags, reserved-like fields) ----------
 * These are exactly the checks the payload reader makes while reading, in
 * offset order (descriptor.md § Decoding order, step 9). */

/* per_channel/block_affine offsets 4-5: the dtype bytes pass the element-type
 * tag checks (element-types.md); the zero-point dtype only when present. */
static int check_dtype_tags(const struct hurray_quant *q, struct hurray_error *err) {
    HR_TRY(hurray_dtype_check_tag(q->scale_dtype, "quantization.scale_dtype", err));
    if (!has_zero_point(q)) return HURRAY_OK;
    return hurray_dtype_check_tag(q->zero_point_dtype, "quantization.zero_point_dtype", err);
}

/* nf4 offset 1: flags bits 1-7 are reserved. */
static int check_nf4_flags(uint8_t flags, struct hurray_error *err) {
    HR_FAIL_IF(flags & ~HURRAY_NF4_DOUBLE_QUANT, err, HURRAY_E_RESERVED_NONZERO,
               "quantization.flags", "quantization.flags: reserved bits set (0x%02X)", flags);
    return HURRAY_OK;
}

/* nf4 offsets 12 and 16: without double quant the nested fields are 0
 * (quantization.md § Common rules: CONSTRAINT). */
static int check_nf4_nested_block_size(const struct hurray_quant *q, struct hurray_error *err) {
    HR_FAIL_IF(!has_double_quant(q) && q->nested_block_size != 0, err,
               HURRAY_E_CONSTRAINT, "quantization.nested_block_size",
               "quantization.nested_block_size: %u without double quant, must be 0",
               (unsigned)q->nested_block_size);
    return HURRAY_OK;
}

static int check_nf4_nested_offset(const struct hurray_quant *q, struct hurray_error *err) {
    HR_FAIL_IF(!has_double_quant(q) && hri_f32_bits(q->nested_offset) != 0, err,
               HURRAY_E_CONSTRAINT, "quantization.nested_offset",
               "quantization.nested_offset: bits 0x%08X without double quant, must be 0",
               (unsigned)hri_f32_bits(q->nested_offset));
    return HURRAY_OK;
}

static int check_structure(const struct hurray_quant *q, struct hurray_error *err) {
    switch (q->scheme) {
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
    case HURRAY_QUANT_BLOCK_AFFINE:
        return check_dtype_tags(q, err);
    case HURRAY_QUANT_NF4:
        return check_nf4_flags(q->flags, err);
    default:
        return HURRAY_OK;
    }
}

/* ---- context-free checks: values (HR-QUANT-3, -10 ... -15) ----------------- */

/* A scale is finite and > 0: NaN, ±Inf, 0 and −0.0 are refused. */
static int check_scale(double v, const char *field, struct hurray_error *err) {
    HR_FAIL_IF(!(isfinite(v) && v > 0), err, HURRAY_E_CONSTRAINT, field,
               "%s: %g is not a finite positive scale", field, v);
    return HURRAY_OK;
}

static int check_present(uint8_t idx, const char *field, struct hurray_error *err) {
    HR_FAIL_IF(idx == HURRAY_NO_BUFFER, err, HURRAY_E_CONSTRAINT, field,
               "%s: this buffer is required, its index cannot be 0xFF", field);
    return HURRAY_OK;
}

/* Present exactly when `want` (the absent-buffer convention: 0xFF). */
static int check_presence(uint8_t idx, int want, const char *field, struct hurray_error *err) {
    if (want) return check_present(idx, field, err);
    HR_FAIL_IF(idx != HURRAY_NO_BUFFER, err, HURRAY_E_CONSTRAINT, field,
               "%s: %u, but this buffer is absent (0xFF) without double quant", field,
               (unsigned)idx);
    return HURRAY_OK;
}

/* scale_dtype: float16, bfloat16, float32, float64. */
static int check_scale_dtype(uint8_t dtype, struct hurray_error *err) {
    int ok = dtype == HURRAY_DTYPE_FLOAT16 || dtype == HURRAY_DTYPE_BFLOAT16 ||
             dtype == HURRAY_DTYPE_FLOAT32 || dtype == HURRAY_DTYPE_FLOAT64;
    HR_FAIL_IF(!ok, err, HURRAY_E_COMBINATION, "quantization.scale_dtype",
               "quantization.scale_dtype: 0x%02X is not float16, bfloat16, float32 or float64",
               dtype);
    return HURRAY_OK;
}

/* zero_point_dtype: a Tier 1 integer type or float16/bfloat16/float32 when
 * the zero-point buffer is present; 0x00 when absent. */
static int check_zero_point_dtype(const struct hurray_quant *q, struct hurray_error *err) {
    uint8_t t = q->zero_point_dtype;
    if (!has_zero_point(q)) {
        HR_FAIL_IF(t != 0, err, HURRAY_E_CONSTRAINT, "quantization.zero_point_dtype",
                   "quantization.zero_point_dtype: 0x%02X without a zero-point buffer, must "
                   "be 0x00", t);
        return HURRAY_OK;
    }
    int ok = (t >= HURRAY_DTYPE_INT8 && t <= HURRAY_DTYPE_UINT64) || t == HURRAY_DTYPE_FLOAT16 ||
             t == HURRAY_DTYPE_BFLOAT16 || t == HURRAY_DTYPE_FLOAT32;
    HR_FAIL_IF(!ok, err, HURRAY_E_COMBINATION, "quantization.zero_point_dtype",
               "quantization.zero_point_dtype: 0x%02X is not a Tier 1 integer type, float16, "
               "bfloat16 or float32", t);
    return HURRAY_OK;
}

/* per_channel_affine and block_affine offsets 2-5 (HR-QUANT-11, -12). */
static int check_affine_fields(const struct hurray_quant *q, struct hurray_error *err) {
    HR_TRY(check_present(q->scale_buffer, "quantization.scale_buffer_index", err));
    HR_TRY(check_scale_dtype(q->scale_dtype, err));
    return check_zero_point_dtype(q, err);
}

static int check_block_affine(const struct hurray_quant *q, struct hurray_error *err) {
    HR_TRY(check_affine_fields(q, err));
    HR_FAIL_IF(q->block_size < 1, err, HURRAY_E_CONSTRAINT, "quantization.block_size",
               "quantization.block_size: must be >= 1");
    return HURRAY_OK;
}

static int check_nf4_block(uint32_t v, const char *field, struct hurray_error *err) {
    HR_FAIL_IF(!hri_is_pow2_u64(v) || v < NF4_BLOCK_MIN || v > NF4_BLOCK_MAX, err,
               HURRAY_E_CONSTRAINT, field,
               "%s: %u is not a power of two in [32, 4096]", field, (unsigned)v);
    return HURRAY_OK;
}

/* nf4 (HR-QUANT-13), offset order. */
static int check_nf4(const struct hurray_quant *q, struct hurray_error *err) {
    int dq = has_double_quant(q);
    HR_TRY(check_present(q->absmax_buffer, "quantization.absmax_buffer_index", err));
    HR_TRY(check_presence(q->nested_absmax_buffer, dq,
                          "quantization.nested_absmax_buffer_index", err));
    HR_TRY(check_presence(q->quant_map_buffer, dq, "quantization.quant_map_buffer_index", err));
    HR_TRY(check_nf4_block(q->block_size, "quantization.block_size", err));
    if (!dq) {
        HR_TRY(check_nf4_nested_block_size(q, err));
        return check_nf4_nested_offset(q, err);
    }
    HR_TRY(check_nf4_block(q->nested_block_size, "quantization.nested_block_size", err));
    HR_FAIL_IF(!isfinite(q->nested_offset), err, HURRAY_E_CONSTRAINT,
               "quantization.nested_offset", "quantization.nested_offset: not finite");
    return HURRAY_OK;
}

/* mx (HR-QUANT-14) and nvfp4 (HR-QUANT-15): fixed block sizes. */
static int check_micro(const struct hurray_quant *q, uint32_t block, struct hurray_error *err) {
    HR_TRY(check_present(q->scale_buffer, "quantization.scale_buffer_index", err));
    HR_FAIL_IF(q->block_size != block, err, HURRAY_E_CONSTRAINT, "quantization.block_size",
               "quantization.block_size: %s blocks are %u elements, not %u",
               hurray_quant_scheme_name(q->scheme), (unsigned)block, (unsigned)q->block_size);
    if (q->scheme == HURRAY_QUANT_NVFP4)
        HR_TRY(check_scale(q->tensor_scale, "quantization.tensor_scale", err));
    return HURRAY_OK;
}

static int check_values(const struct hurray_quant *q, struct hurray_error *err) {
    switch (q->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
        return check_scale(q->scale, "quantization.scale", err);
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
        return check_affine_fields(q, err);
    case HURRAY_QUANT_BLOCK_AFFINE:
        return check_block_affine(q, err);
    case HURRAY_QUANT_NF4:
        return check_nf4(q, err);
    case HURRAY_QUANT_MX:
        return check_micro(q, MX_BLOCK, err);
    default:
        return check_micro(q, NVFP4_BLOCK, err);
    }
}

int hurray_quant_check(const struct hurray_quant *q, struct hurray_error *err) {
    HR_FAIL_IF(!q, err, HURRAY_E_ARGUMENT, "quantization", "quant_check: q is NULL");
    HR_TRY(check_scheme(q->scheme, err));
    HR_TRY(check_structure(q, err));
    return check_values(q, err);
}

/* ---- payload codec (one § per scheme) -------------------------------------- */

/* per_tensor_affine: scheme, reserved u8[7], scale f64, zero_point i64. */
static int read_per_tensor(struct hri_cursor *c, struct hurray_quant *out,
                           struct hurray_error *err) {
    HR_TRY(hri_read_reserved(c, 7, "quantization.reserved", err));
    HR_TRY(hri_read_f64(c, &out->scale, "quantization.scale", err));
    return hri_read_i64(c, &out->zero_point, "quantization.zero_point", err);
}

/* Offsets 1-5 of per_channel_affine and block_affine. */
static int read_affine_head(struct hri_cursor *c, struct hurray_quant *out,
                            struct hurray_error *err) {
    HR_TRY(hri_read_u8(c, &out->axis, "quantization.axis", err));
    HR_TRY(hri_read_u8(c, &out->scale_buffer, "quantization.scale_buffer_index", err));
    HR_TRY(hri_read_u8(c, &out->zero_point_buffer, "quantization.zero_point_buffer_index", err));
    HR_TRY(hri_read_u8(c, &out->scale_dtype, "quantization.scale_dtype", err));
    HR_TRY(hurray_dtype_check_tag(out->scale_dtype, "quantization.scale_dtype", err));
    HR_TRY(hri_read_u8(c, &out->zero_point_dtype, "quantization.zero_point_dtype", err));
    if (!has_zero_point(out)) return HURRAY_OK;
    return hurray_dtype_check_tag(out->zero_point_dtype, "quantization.zero_point_dtype", err);
}

/* per_channel_affine: head, reserved u8[10]. */
static int read_per_channel(struct hri_cursor *c, struct hurray_quant *out,
                            struct hurray_error *err) {
    HR_TRY(read_affine_head(c, out, err));
    return hri_read_reserved(c, 10, "quantization.reserved", err);
}

/* block_affine: head, reserved u16, block_size u32, reserved u32, reserved u64. */
static int read_block_affine(struct hri_cursor *c, struct hurray_quant *out,
                             struct hurray_error *err) {
    HR_TRY(read_affine_head(c, out, err));
    HR_TRY(hri_read_reserved(c, 2, "quantization.reserved", err));
    HR_TRY(hri_read_u32(c, &out->block_size, "quantization.block_size", err));
    return hri_read_reserved(c, 12, "quantization.reserved", err);
}

/* nf4: flags, absmax, nested, quant_map, reserved u8[3], block_size,
 * nested_block_size, nested_offset f32, reserved u32. */
static int read_nf4(struct hri_cursor *c, struct hurray_quant *out, struct hurray_error *err) {
    HR_TRY(hri_read_u8(c, &out->flags, "quantization.flags", err));
    HR_TRY(check_nf4_flags(out->flags, err));
    HR_TRY(hri_read_u8(c, &out->absmax_buffer, "quantization.absmax_buffer_index", err));
    HR_TRY(hri_read_u8(c, &out->nested_absmax_buffer, "quantization.nested_absmax_buffer_index",
                       err));
    HR_TRY(hri_read_u8(c, &out->quant_map_buffer, "quantization.quant_map_buffer_index", err));
    HR_TRY(hri_read_reserved(c, 3, "quantization.reserved", err));
    HR_TRY(hri_read_u32(c, &out->block_size, "quantization.block_size", err));
    HR_TRY(hri_read_u32(c, &out->nested_block_size, "quantization.nested_block_size", err));
    HR_TRY(hri_read_f32(c, &out->nested_offset, "quantization.nested_offset", err));
    return hri_read_reserved(c, 4, "quantization.reserved", err);
}

/* mx: axis, scale, reserved u8, block_size u32, reserved u64.
 * nvfp4: axis, scale, reserved u8, block_size u32, tensor_scale f32, reserved u32. */
static int read_micro(struct hri_cursor *c, struct hurray_quant *out, struct hurray_error *err) {
    HR_TRY(hri_read_u8(c, &out->axis, "quantization.axis", err));
    HR_TRY(hri_read_u8(c, &out->scale_buffer, "quantization.scale_buffer_index", err));
    HR_TRY(hri_read_reserved(c, 1, "quantization.reserved", err));
    HR_TRY(hri_read_u32(c, &out->block_size, "quantization.block_size", err));
    if (out->scheme == HURRAY_QUANT_MX) return hri_read_reserved(c, 8, "quantization.reserved", err);
    HR_TRY(hri_read_f32(c, &out->tensor_scale, "quantization.tensor_scale", err));
    return hri_read_reserved(c, 4, "quantization.reserved", err);
}

static int read_body(struct hri_cursor *c, struct hurray_quant *out, struct hurray_error *err) {
    switch (out->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
        return read_per_tensor(c, out, err);
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
        return read_per_channel(c, out, err);
    case HURRAY_QUANT_BLOCK_AFFINE:
        return read_block_affine(c, out, err);
    case HURRAY_QUANT_NF4:
        return read_nf4(c, out, err);
    default:
        return read_micro(c, out, err);
    }
}

/* The scheme byte, the exact payload length (LENGTH), then the fields in
 * offset order with their tags and reserved fields checked as they are read.
 * Value rules are hurray_quant_check's (run by decode and validate). */
int hri_quant_read(struct hri_cursor *c, struct hurray_quant *out, struct hurray_error *err) {
    HR_FAIL_IF(!c || !out, err, HURRAY_E_ARGUMENT, "quantization", "quant_read: NULL argument");
    size_t have = hri_cursor_left(c);
    memset(out, 0, sizeof *out);
    HR_TRY(hri_read_u8(c, &out->scheme, "quantization.scheme", err));
    HR_TRY(check_scheme(out->scheme, err));
    size_t want = scheme_table[out->scheme].payload;
    HR_FAIL_IF(have != want, err, HURRAY_E_LENGTH, "quantization.length",
               "quantization.length: a %s payload is %zu bytes, not %zu",
               scheme_table[out->scheme].name, want, have);
    return read_body(c, out, err);
}

static void write_affine_head(struct hri_writer *w, const struct hurray_quant *q) {
    hri_w_u8(w, q->axis);
    hri_w_u8(w, q->scale_buffer);
    hri_w_u8(w, q->zero_point_buffer);
    hri_w_u8(w, q->scale_dtype);
    hri_w_u8(w, q->zero_point_dtype);
}

static void write_nf4(struct hri_writer *w, const struct hurray_quant *q) {
    hri_w_u8(w, q->flags);
    hri_w_u8(w, q->absmax_buffer);
    hri_w_u8(w, q->nested_absmax_buffer);
    hri_w_u8(w, q->quant_map_buffer);
    hri_w_zero(w, 3);
    hri_w_u32(w, q->block_size);
    hri_w_u32(w, q->nested_block_size);
    hri_w_f32(w, q->nested_offset);
    hri_w_zero(w, 4);
}

static void write_micro(struct hri_writer *w, const struct hurray_quant *q) {
    hri_w_u8(w, q->axis);
    hri_w_u8(w, q->scale_buffer);
    hri_w_zero(w, 1);
    hri_w_u32(w, q->block_size);
    if (q->scheme == HURRAY_QUANT_MX) {
        hri_w_zero(w, 8);
        return;
    }
    hri_w_f32(w, q->tensor_scale);
    hri_w_zero(w, 4);
}

/* The payload in the byte order of quantization.md; nothing for an unnamed
 * scheme (encode refuses those first). */
void hri_quant_write(struct hri_writer *w, const struct hurray_quant *q) {
    if (!w || !q || !scheme_is_named(q->scheme)) return;
    hri_w_u8(w, q->scheme);
    switch (q->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
        hri_w_zero(w, 7);
        hri_w_f64(w, q->scale);
        hri_w_i64(w, q->zero_point);
        break;
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
        write_affine_head(w, q);
        hri_w_zero(w, 10);
        break;
    case HURRAY_QUANT_BLOCK_AFFINE:
        write_affine_head(w, q);
        hri_w_zero(w, 2);
        hri_w_u32(w, q->block_size);
        hri_w_zero(w, 12);
        break;
    case HURRAY_QUANT_NF4:
        write_nf4(w, q);
        break;
    default:
        write_micro(w, q);
        break;
    }
}

/* HR-QUANT-1: the standalone encoding is the section payload. */
int hurray_quant_encode(const struct hurray_quant *q, uint8_t *dst, size_t cap, size_t *written,
                        struct hurray_error *err) {
    if (written) *written = 0;
    HR_FAIL_IF(!q || !dst, err, HURRAY_E_ARGUMENT, "quantization", "quant_encode: NULL argument");
    HR_TRY(hurray_quant_check(q, err));
    size_t len = scheme_table[q->scheme].payload;
    HR_FAIL_IF(cap < len, err, HURRAY_E_ARGUMENT, "cap",
               "cap: %zu bytes are too few for the %zu-byte %s payload", cap, len,
               scheme_table[q->scheme].name);
    struct hri_writer w;
    hri_writer_init(&w, dst, cap);
    hri_quant_write(&w, q);
    HR_FAIL_IF(w.overflowed || w.pos != len, err, HURRAY_E_INTERNAL, "quantization",
               "quant_encode: wrote %zu bytes, expected %zu", w.pos, len);
    if (written) *written = len;
    return HURRAY_OK;
}

/* HR-QUANT-1: the scheme byte first, then exactly the scheme's length. */
int hurray_quant_decode(const uint8_t *src, size_t len, struct hurray_quant *out,
                        struct hurray_error *err) {
    HR_FAIL_IF(!out || (!src && len), err, HURRAY_E_ARGUMENT, "quantization",
               "quant_decode: NULL argument");
    struct hri_cursor c;
    hri_cursor_init(&c, src, len, HURRAY_E_LENGTH);
    HR_TRY(hri_quant_read(&c, out, err));
    return hurray_quant_check(out, err);
}

/* ---- context checks (tier 3) ---------------------------------------------- */

static int is_affine_float8(uint8_t dtype) {
    return dtype == HURRAY_DTYPE_FLOAT8_E4M3FN || dtype == HURRAY_DTYPE_FLOAT8_E4M3FNUZ ||
           dtype == HURRAY_DTYPE_FLOAT8_E5M2 || dtype == HURRAY_DTYPE_FLOAT8_E5M2FNUZ;
}

/* Any integer type (Tier 1 or sub-byte, not bool). */
static int is_integer_dtype(uint8_t dtype) {
    const struct hurray_dtype_info *info = hurray_dtype_info(dtype);
    return info && info->is_integer;
}

static int is_mx_dtype(uint8_t dtype) {
    return dtype == HURRAY_DTYPE_FLOAT8_E4M3FN || dtype == HURRAY_DTYPE_FLOAT8_E5M2 ||
           dtype == HURRAY_DTYPE_FLOAT6_E2M3FN || dtype == HURRAY_DTYPE_FLOAT6_E3M2FN ||
           dtype == HURRAY_DTYPE_FLOAT4_E2M1FN || dtype == HURRAY_DTYPE_INT8;
}

/* Element type per scheme (HR-QUANT-10 ... -15). The affine schemes share
 * per_tensor_affine's set (block_affine is group-wise affine). */
static int check_element_type(const struct hurray_quant *q, uint8_t dtype,
                              struct hurray_error *err) {
    int ok;
    switch (q->scheme) {
    case HURRAY_QUANT_NF4:
        ok = dtype == HURRAY_DTYPE_UINT4;
        break;
    case HURRAY_QUANT_MX:
        ok = is_mx_dtype(dtype);
        break;
    case HURRAY_QUANT_NVFP4:
        ok = dtype == HURRAY_DTYPE_FLOAT4_E2M1FN;
        break;
    default:
        ok = is_integer_dtype(dtype) || is_affine_float8(dtype);
        break;
    }
    HR_FAIL_IF(!ok, err, HURRAY_E_COMBINATION, "dtype",
               "dtype: %s (0x%02X) is not an element type %s quantization allows",
               hurray_dtype_info(dtype) ? hurray_dtype_info(dtype)->name : "unnamed", dtype,
               scheme_table[q->scheme].name);
    return HURRAY_OK;
}

static int layout_incompatible(const struct hurray_quant *q, const struct hurray_layout *l,
                               struct hurray_error *err) {
    return hri_fail(err, HURRAY_E_COMBINATION, "layout",
                    "layout: %s quantization does not apply to the %s layout",
                    scheme_table[q->scheme].name, hurray_layout_name(l->tag));
}

/* HR-QUANT-20. Private and unknown layouts accept every scheme. */
static int check_layout_compat(const struct hurray_quant *q, const struct hurray_layout *l,
                               uint8_t rank, struct hurray_error *err) {
    int kind = hurray_layout_tag_kind(l->tag);
    HR_FAIL_IF(kind == HURRAY_TAG_INVALID, err, HURRAY_E_INVALID_TAG, "layout",
               "layout: tag 0x%02X is invalid", l->tag);
    if (kind != HURRAY_TAG_NAMED) return HURRAY_OK;
    switch (q->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
        if (l->tag == HURRAY_LAYOUT_COMPOSITE) return layout_incompatible(q, l, err);
        return HURRAY_OK;
    case HURRAY_QUANT_NF4:
        if (l->tag != HURRAY_LAYOUT_ROW_MAJOR) return layout_incompatible(q, l, err);
        return HURRAY_OK;
    default:
        if (l->tag == HURRAY_LAYOUT_BLOCK_PAGED)
            return hurray_block_paged_check_quantization(l, rank, q, err);
        if (!hurray_layout_is_dense(l->tag)) return layout_incompatible(q, l, err);
        return HURRAY_OK;
    }
}

static int uses_axis(const struct hurray_quant *q) {
    return q->scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE || q->scheme == HURRAY_QUANT_BLOCK_AFFINE ||
           q->scheme == HURRAY_QUANT_MX || q->scheme == HURRAY_QUANT_NVFP4;
}

/* HR-QUANT-3: axis < rank (RANGE). */
static int check_axis(const struct hurray_quant *q, uint8_t rank, struct hurray_error *err) {
    HR_FAIL_IF(uses_axis(q) && q->axis >= rank, err, HURRAY_E_RANGE, "quantization.axis",
               "quantization.axis: %u is not below the rank %u", (unsigned)q->axis,
               (unsigned)rank);
    return HURRAY_OK;
}

/* HR-QUANT-10: zero_point lies in the integer element type's range, or is 0
 * for float8 (RANGE). */
static int check_zero_point(const struct hurray_quant *q, uint8_t dtype,
                            struct hurray_error *err) {
    if (q->scheme != HURRAY_QUANT_PER_TENSOR_AFFINE) return HURRAY_OK;
    const struct hurray_dtype_info *info = hurray_dtype_info(dtype);
    int64_t lo = 0, hi = 0;
    if (info && info->is_integer) {
        unsigned bits = info->bits;
        hi = info->is_signed ? (int64_t)((UINT64_C(1) << (bits - 1)) - 1)
                             : (bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << bits) - 1));
        lo = info->is_signed ? -hi - 1 : 0;
    }
    HR_FAIL_IF(q->zero_point < lo || q->zero_point > hi, err, HURRAY_E_RANGE,
               "quantization.zero_point",
               "quantization.zero_point: %lld is outside [%lld, %lld] for dtype 0x%02X",
               (long long)q->zero_point, (long long)lo, (long long)hi, dtype);
    return HURRAY_OK;
}

/* HR-QUANT-3: with L known, the scheme's buffers are L, L+1, ... in order
 * (CONSTRAINT); that they exist is tier 1's buffer count. With L unknown
 * (private/unknown layouts) each index is below buffer_count (RANGE) and
 * distinct (CONSTRAINT). */
static int check_buffer_indices(const struct hurray_quant *q, int layout_buffer_count,
                                unsigned buffer_count, struct hurray_error *err) {
    uint8_t idx[3];
    const char *names[3];
    unsigned n = scheme_buffers(q, idx, names);
    for (unsigned i = 0; i < n; i++) {
        if (layout_buffer_count >= 0) {
            long want = (long)layout_buffer_count + (long)i;
            HR_FAIL_IF(idx[i] != want, err, HURRAY_E_CONSTRAINT, names[i],
                       "%s: %u, must be %ld (the layout's %d buffers, then this section's in "
                       "order)", names[i], (unsigned)idx[i], want, layout_buffer_count);
            continue;
        }
        HR_FAIL_IF(idx[i] >= buffer_count, err, HURRAY_E_CONSTRAINT, names[i],
                   "%s: %u is not below buffer_count %u", names[i], (unsigned)idx[i],
                   buffer_count);
        for (unsigned j = 0; j < i; j++)
            HR_FAIL_IF(idx[j] == idx[i], err, HURRAY_E_CONSTRAINT, names[i],
                       "%s: %u is also %s", names[i], (unsigned)idx[i], names[j]);
    }
    return HURRAY_OK;
}

int hurray_quant_validate(const struct hurray_quant *q, uint8_t dtype,
                          const struct hurray_layout *layout, uint8_t rank,
                          const uint64_t *shape, int layout_buffer_count, unsigned buffer_count,
                          struct hurray_error *err) {
    HR_FAIL_IF(!q || !layout || (rank > 0 && !shape), err, HURRAY_E_ARGUMENT, "quantization",
               "quant_validate: NULL argument");
    HR_FAIL_IF(rank > HURRAY_MAX_RANK, err, HURRAY_E_LIMIT, "rank",
               "rank: %u exceeds the format maximum %d", (unsigned)rank, HURRAY_MAX_RANK);
    HR_TRY(hurray_quant_check(q, err));
    HR_TRY(check_element_type(q, dtype, err));
    HR_TRY(check_layout_compat(q, layout, rank, err));
    HR_TRY(check_axis(q, rank, err));
    HR_TRY(check_zero_point(q, dtype, err));
    return check_buffer_indices(q, layout_buffer_count, buffer_count, err);
}

/* ---- required sizes of the section's buffers (HR-QUANT-3, -11 ... -15) ----- */

static int is_dynamic(uint64_t extent) { return extent == HURRAY_DYNAMIC_DIM; }

/* Π over k != skip of shape[k] (skip = rank: none) times `factor`: 0 when a
 * resolved extent or the factor is 0, unknown (*resolved = 0) when an extent
 * is dynamic, OVERFLOW past 2^64-1. */
static int shape_product(uint8_t rank, const uint64_t *shape, unsigned skip, uint64_t factor,
                         uint64_t *out, int *resolved, struct hurray_error *err) {
    *out = 0;
    *resolved = 1;
    for (unsigned k = 0; k < rank; k++)
        if (shape[k] == 0) return HURRAY_OK;
    if (factor == 0) return HURRAY_OK;
    uint64_t p = factor;
    for (unsigned k = 0; k < rank; k++) {
        if (k == skip) continue;
        if (is_dynamic(shape[k])) {
            *resolved = 0;
            continue;
        }
        HR_FAIL_IF(hri_mul_u64(p, shape[k], &p), err, HURRAY_E_OVERFLOW, "shape",
                   "shape: the element count exceeds 2^64-1");
    }
    if (*resolved) *out = p;
    return HURRAY_OK;
}

/* The blocked scale array's element count: (N / n_a)·⌈n_a/B⌉, 0 when N = 0. */
static int blocked_count(const struct hurray_quant *q, uint8_t rank, const uint64_t *shape,
                         uint64_t *count, int *resolved, struct hurray_error *err) {
    uint64_t na = shape[q->axis];
    if (is_dynamic(na)) {
        HR_TRY(shape_product(rank, shape, rank, 1, count, resolved, err));
        *resolved = *resolved && *count == 0;
        return HURRAY_OK;
    }
    return shape_product(rank, shape, q->axis, hri_ceil_div_u64(na, q->block_size), count,
                         resolved, err);
}

/* bs(dtype, count) into sizes[i], with the error naming the buffer. */
static int dtype_size(uint8_t dtype, uint64_t count, const char *field, uint64_t *size,
                      struct hurray_error *err) {
    int st = hurray_buffer_size_bytes(dtype, count, size, err);
    if (st == HURRAY_E_OVERFLOW)
        return hri_fail(err, st, field, "%s: the buffer's required size exceeds 2^64-1", field);
    return st;
}

/* Scale (and zero point) buffers of `count` entries each. */
static int scale_sizes(const struct hurray_quant *q, uint8_t scale_dtype, uint64_t count,
                       int resolved, uint64_t sizes[3], uint8_t known[3],
                       struct hurray_error *err) {
    unsigned n = q->scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE ||
                         q->scheme == HURRAY_QUANT_BLOCK_AFFINE
                     ? (has_zero_point(q) ? 2u : 1u) : 1u;
    for (unsigned i = 0; i < n; i++) known[i] = (uint8_t)resolved;
    if (!resolved) return HURRAY_OK;
    HR_TRY(dtype_size(scale_dtype, count, "quantization.scale_buffer_index", &sizes[0], err));
    if (n < 2) return HURRAY_OK;
    return dtype_size(q->zero_point_dtype, count, "quantization.zero_point_buffer_index",
                      &sizes[1], err);
}

/* nf4: nblocks = ⌈N/block_size⌉; absmax nblocks float32, or nblocks uint8
 * codes + ⌈nblocks/nested_block_size⌉ float32 + 256 float32 with double quant. */
static int nf4_sizes(const struct hurray_quant *q, uint8_t rank, const uint64_t *shape,
                     uint64_t sizes[3], uint8_t known[3], struct hurray_error *err) {
    uint64_t n = 0;
    int resolved = 0;
    int dq = has_double_quant(q);
    HR_TRY(shape_product(rank, shape, rank, 1, &n, &resolved, err));
    if (dq) {
        known[1] = known[2] = 1;
        HR_TRY(dtype_size(HURRAY_DTYPE_FLOAT32, NF4_QUANT_MAP_ENTRIES,
                          "quantization.quant_map_buffer_index", &sizes[2], err));
    }
    known[0] = (uint8_t)resolved;
    if (!resolved) {
        known[1] = 0;
        return HURRAY_OK;
    }
    uint64_t nblocks = hri_ceil_div_u64(n, q->block_size);
    if (!dq)
        return dtype_size(HURRAY_DTYPE_FLOAT32, nblocks, "quantization.absmax_buffer_index",
                          &sizes[0], err);
    sizes[0] = nblocks; /* uint8 codes */
    return dtype_size(HURRAY_DTYPE_FLOAT32, hri_ceil_div_u64(nblocks, q->nested_block_size),
                      "quantization.nested_absmax_buffer_index", &sizes[1], err);
}

int hurray_quant_required_sizes(const struct hurray_quant *q, uint8_t rank,
                                const uint64_t *shape, uint64_t sizes[3], uint8_t known[3],
                                struct hurray_error *err) {
    HR_FAIL_IF(!q || !sizes || !known || (rank > 0 && !shape), err, HURRAY_E_ARGUMENT,
               "quantization", "quant_required_sizes: NULL argument");
    HR_FAIL_IF(rank > HURRAY_MAX_RANK, err, HURRAY_E_LIMIT, "rank",
               "rank: %u exceeds the format maximum %d", (unsigned)rank, HURRAY_MAX_RANK);
    for (unsigned i = 0; i < 3; i++) {
        sizes[i] = 0;
        known[i] = 0;
    }
    HR_TRY(hurray_quant_check(q, err));
    HR_TRY(check_axis(q, rank, err));
    uint64_t count = 0;
    int resolved = 0;
    switch (q->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
        return HURRAY_OK;
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
        count = shape[q->axis];
        return scale_sizes(q, q->scale_dtype, count, !is_dynamic(count), sizes, known, err);
    case HURRAY_QUANT_NF4:
        return nf4_sizes(q, rank, shape, sizes, known, err);
    default:
        HR_TRY(blocked_count(q, rank, shape, &count, &resolved, err));
        return scale_sizes(q,
                           q->scheme == HURRAY_QUANT_BLOCK_AFFINE ? q->scale_dtype
                           : q->scheme == HURRAY_QUANT_MX         ? HURRAY_DTYPE_FLOAT8_E8M0FNU
                                                                  : HURRAY_DTYPE_FLOAT8_E4M3FN,
                           count, resolved, sizes, known, err);
    }
}

/* ---- equality (quantization.md § Equality) ------------------------------- */

static int affine_equal(const struct hurray_quant *a, const struct hurray_quant *b) {
    return a->axis == b->axis && a->scale_buffer == b->scale_buffer &&
           a->zero_point_buffer == b->zero_point_buffer && a->scale_dtype == b->scale_dtype &&
           a->zero_point_dtype == b->zero_point_dtype;
}

static int nf4_equal(const struct hurray_quant *a, const struct hurray_quant *b) {
    return a->flags == b->flags && a->absmax_buffer == b->absmax_buffer &&
           a->nested_absmax_buffer == b->nested_absmax_buffer &&
           a->quant_map_buffer == b->quant_map_buffer && a->block_size == b->block_size &&
           a->nested_block_size == b->nested_block_size && a->nested_offset == b->nested_offset;
}

static int all_fields_equal(const struct hurray_quant *a, const struct hurray_quant *b) {
    return affine_equal(a, b) && nf4_equal(a, b) && a->scale == b->scale &&
           a->zero_point == b->zero_point && a->tensor_scale == b->tensor_scale;
}

/* Field by field over the scheme's fields; floats by value (NaN != NaN). */
int hurray_quant_equal(const struct hurray_quant *a, const struct hurray_quant *b) {
    if (!a || !b) return a == b;
    if (a->scheme != b->scheme) return 0;
    switch (a->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
        return a->scale == b->scale && a->zero_point == b->zero_point;
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
        return affine_equal(a, b);
    case HURRAY_QUANT_BLOCK_AFFINE:
        return affine_equal(a, b) && a->block_size == b->block_size;
    case HURRAY_QUANT_NF4:
        return nf4_equal(a, b);
    case HURRAY_QUANT_MX:
        return a->axis == b->axis && a->scale_buffer == b->scale_buffer &&
               a->block_size == b->block_size;
    case HURRAY_QUANT_NVFP4:
        return a->axis == b->axis && a->scale_buffer == b->scale_buffer &&
               a->block_size == b->block_size && a->tensor_scale == b->tensor_scale;
    default:
        return all_fields_equal(a, b);
    }
}
