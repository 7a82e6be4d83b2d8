/* Internal helpers shared by libhurray's translation units. Never installed.
 * Checked arithmetic, little-endian cursors, error filling, and the hri_
 * functions one .c file offers another. */
#ifndef HURRAY_INTERNAL_H
#define HURRAY_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hurray/hurray.h"

#if defined(__MINGW32__) && defined(__USE_MINGW_ANSI_STDIO) && __USE_MINGW_ANSI_STDIO
/* mingw-w64 with its C99 stdio (%zu, %llu), as our Windows builds use it. */
#define HRI_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#elif defined(__MINGW32__)
#define HRI_PRINTF(f, a) __attribute__((format(ms_printf, f, a)))
#elif defined(__GNUC__) || defined(__clang__)
#define HRI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HRI_PRINTF(f, a)
#endif

/* ---- errors ------------------------------------------------------------ */

/* Fills `err` (NULL-tolerant) and returns `code`. */
int hri_fail(struct hurray_error *err, int code, const char *field, const char *fmt, ...)
    HRI_PRINTF(4, 5);
/* Same, recording the byte offset in the input. */
int hri_fail_at(struct hurray_error *err, int code, uint64_t offset, const char *field,
                const char *fmt, ...) HRI_PRINTF(5, 6);
/* snprintf into a field-name buffer of HURRAY_ERROR_FIELD_MAX bytes. */
const char *hri_fieldf(char buf[HURRAY_ERROR_FIELD_MAX], const char *fmt, ...) HRI_PRINTF(2, 3);

/* A by-tag index of a table made from an X-macro row list ROWS whose rows each start with
 * their tag, every named tag below HRI_TAG_LIMIT (0x40; element-types.md and memory-layout.md
 * name none above): NAME[tag] is the tag's row index + 1, 0 for a tag with no row. One
 * definition for the dtype and layout tables (dtype.c, layout.c). */
#define HRI_TAG_LIMIT 0x40u
#define HRI_TAG_POS_(tag, ...) HRI_TAG_POS_##tag,
#define HRI_TAG_INDEX_(tag, ...) [(tag)] = HRI_TAG_POS_##tag + 1,
#define HRI_TAG_INDEX(ROWS, NAME)                                                            \
    enum { ROWS(HRI_TAG_POS_) HRI_TAG_POS_END_##NAME };                                     \
    static const uint8_t NAME[HRI_TAG_LIMIT] = {ROWS(HRI_TAG_INDEX_)}

#define HR_TRY(expr)                                                                           \
    do {                                                                                       \
        int hr_try_status_ = (expr);                                                           \
        if (hr_try_status_ != HURRAY_OK) return hr_try_status_;                                \
    } while (0)

#define HR_FAIL_IF(cond, err, code, field, ...)                                                \
    do {                                                                                       \
        if (cond) return hri_fail((err), (code), (field), __VA_ARGS__);                        \
    } while (0)

/* ---- checked arithmetic: return 1 on overflow, 0 otherwise -------------- */

static inline int hri_add_u64(uint64_t a, uint64_t b, uint64_t *out) {
    if (b > UINT64_MAX - a) return 1;
    *out = a + b;
    return 0;
}
static inline int hri_mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
    if (a != 0 && b > UINT64_MAX / a) return 1;
    *out = a * b;
    return 0;
}
static inline int hri_add_i64(int64_t a, int64_t b, int64_t *out) {
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return 1;
    *out = a + b;
    return 0;
}
static inline int hri_mul_i64(int64_t a, int64_t b, int64_t *out) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_mul_overflow(a, b, out) ? 1 : 0;
#else
    if (a == 0 || b == 0) { *out = 0; return 0; }
    if (a == -1) { if (b == INT64_MIN) return 1; *out = -b; return 0; }
    if (b == -1) { if (a == INT64_MIN) return 1; *out = -a; return 0; }
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
              : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
        return 1;
    *out = a * b;
    return 0;
#endif
}
/* ceil(a / b), b > 0. */
static inline uint64_t hri_ceil_div_u64(uint64_t a, uint64_t b) {
    return a / b + (a % b != 0);
}
static inline int hri_is_pow2_u64(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

/* ---- little-endian loads and stores ------------------------------------ */

static inline uint16_t hri_load_u16le(const uint8_t *p) {
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}
static inline uint32_t hri_load_u32le(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t hri_load_u64le(const uint8_t *p) {
    return (uint64_t)hri_load_u32le(p) | (uint64_t)hri_load_u32le(p + 4) << 32;
}
static inline void hri_store_u16le(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void hri_store_u32le(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void hri_store_u64le(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline double hri_f64_from_bits(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
static inline uint64_t hri_f64_bits(double d) { uint64_t b; memcpy(&b, &d, 8); return b; }
static inline float hri_f32_from_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t hri_f32_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

/* ---- reading cursor ----------------------------------------------------- */

/* Reads within [pos, end) of src. `base` is the absolute offset of src[0] in
 * the caller's input, for error offsets. A read that would cross `end`
 * fails with `short_code` (LENGTH inside a descriptor: the length lied). */
struct hri_cursor {
    const uint8_t *src;
    size_t pos;
    size_t end;
    uint64_t base;
    int short_code;
};

static inline void hri_cursor_init(struct hri_cursor *c, const uint8_t *src, size_t len,
                                   int short_code) {
    c->src = src;
    c->pos = 0;
    c->end = len;
    c->base = 0;
    c->short_code = short_code;
}
static inline size_t hri_cursor_left(const struct hri_cursor *c) { return c->end - c->pos; }
static inline uint64_t hri_cursor_offset(const struct hri_cursor *c) { return c->base + c->pos; }

/* The error of a read that needs n bytes where fewer remain (short_code). */
int hri_need_fail(const struct hri_cursor *c, size_t n, const char *field,
                  struct hurray_error *err);
/* RESERVED_NONZERO (or the short read) for n reserved bytes at the cursor. */
int hri_read_reserved_fail(const struct hri_cursor *c, size_t n, const char *field,
                           struct hurray_error *err);

/* The readers: the bounds check inline, every error out of line (the hot
 * path of a decode is a compare and a load). */

/* Fails unless n bytes remain. */
static inline int hri_need(const struct hri_cursor *c, size_t n, const char *field,
                           struct hurray_error *err) {
    return n <= c->end - c->pos ? HURRAY_OK : hri_need_fail(c, n, field, err);
}

#define HRI_READER(name, type, width, load)                                                    \
    static inline int name(struct hri_cursor *c, type *v, const char *field,                   \
                           struct hurray_error *err) {                                         \
        if (width > c->end - c->pos) {                                                         \
            *v = 0; /* a failed read leaves a defined value */                                 \
            return hri_need_fail(c, width, field, err);                                        \
        }                                                                                      \
        *v = (type)load(c->src + c->pos);                                                      \
        c->pos += width;                                                                       \
        return HURRAY_OK;                                                                      \
    }

static inline uint8_t hri_load_u8(const uint8_t *p) { return p[0]; }

HRI_READER(hri_read_u8, uint8_t, 1u, hri_load_u8)
HRI_READER(hri_read_u16, uint16_t, 2u, hri_load_u16le)
HRI_READER(hri_read_u32, uint32_t, 4u, hri_load_u32le)
HRI_READER(hri_read_u64, uint64_t, 8u, hri_load_u64le)
#undef HRI_READER

int hri_read_i64(struct hri_cursor *c, int64_t *v, const char *field, struct hurray_error *err);
int hri_read_f32(struct hri_cursor *c, float *v, const char *field, struct hurray_error *err);
int hri_read_f64(struct hri_cursor *c, double *v, const char *field, struct hurray_error *err);
/* Reads n reserved bytes; RESERVED_NONZERO (with the offset of the first
 * non-zero byte) unless all are zero. */
static inline int hri_read_reserved(struct hri_cursor *c, size_t n, const char *field,
                                    struct hurray_error *err) {
    if (n > c->end - c->pos) return hri_need_fail(c, n, field, err);
    for (size_t i = 0; i < n; i++)
        if (c->src[c->pos + i] != 0) return hri_read_reserved_fail(c, n, field, err);
    c->pos += n;
    return HURRAY_OK;
}
/* Variants whose field name is a format with one unsigned index ("shape[%u]"),
 * formatted only when the read fails: the hot path never formats. */
int hri_need_i_fail(const struct hri_cursor *c, size_t n, const char *field_fmt, unsigned index,
                    struct hurray_error *err);
int hri_read_reserved_i_fail(const struct hri_cursor *c, size_t n, const char *field_fmt,
                             unsigned index, struct hurray_error *err);
static inline int hri_need_i(const struct hri_cursor *c, size_t n, const char *field_fmt,
                             unsigned index, struct hurray_error *err) {
    return n <= c->end - c->pos ? HURRAY_OK : hri_need_i_fail(c, n, field_fmt, index, err);
}
static inline int hri_read_u64_i(struct hri_cursor *c, uint64_t *v, const char *field_fmt,
                                 unsigned index, struct hurray_error *err) {
    if (8u > c->end - c->pos) {
        *v = 0; /* a failed read leaves a defined value */
        return hri_need_i_fail(c, 8u, field_fmt, index, err);
    }
    *v = hri_load_u64le(c->src + c->pos);
    c->pos += 8u;
    return HURRAY_OK;
}
static inline int hri_read_reserved_i(struct hri_cursor *c, size_t n, const char *field_fmt,
                                      unsigned index, struct hurray_error *err) {
    if (n > c->end - c->pos) return hri_need_i_fail(c, n, field_fmt, index, err);
    for (size_t i = 0; i < n; i++)
        if (c->src[c->pos + i] != 0)
            return hri_read_reserved_i_fail(c, n, field_fmt, index, err);
    c->pos += n;
    return HURRAY_OK;
}
/* n consecutive u64 / i64 / u8 values into dst; element k's field name is
 * field_fmt formatted with k, only when its read fails. */
int hri_read_u64s_i(struct hri_cursor *c, uint64_t *dst, unsigned n, const char *field_fmt,
                    struct hurray_error *err);
int hri_read_i64s_i(struct hri_cursor *c, int64_t *dst, unsigned n, const char *field_fmt,
                    struct hurray_error *err);
int hri_read_u8s_i(struct hri_cursor *c, uint8_t *dst, unsigned n, const char *field_fmt,
                   struct hurray_error *err);
/* Borrow n bytes: *p points into src. */
int hri_read_bytes(struct hri_cursor *c, size_t n, const uint8_t **p, const char *field,
                   struct hurray_error *err);

/* ---- writer --------------------------------------------------------------
 * With dst == NULL it only counts (used to compute encoded lengths, so the
 * length and the bytes come from one code path). Writing past cap sets
 * `overflowed` and writes nothing more. */
struct hri_writer {
    uint8_t *dst;
    size_t cap;
    size_t pos;
    int overflowed;
};

static inline void hri_writer_init(struct hri_writer *w, uint8_t *dst, size_t cap) {
    w->dst = dst;
    w->cap = dst ? cap : SIZE_MAX;
    w->pos = 0;
    w->overflowed = 0;
}
/* The primitives are inline: the encoders call them per field, and a call per
 * byte was a fifth of a descriptor's encoding (bench/README.md). */
static inline void hri_w_bytes(struct hri_writer *w, const void *p, size_t n) {
    if (w->overflowed) return;
    if (n > w->cap - w->pos) {
        w->overflowed = 1;
        return;
    }
    if (w->dst && n) memcpy(w->dst + w->pos, p, n);
    w->pos += n;
}
static inline void hri_w_zero(struct hri_writer *w, size_t n) {
    if (w->overflowed) return;
    if (n > w->cap - w->pos) {
        w->overflowed = 1;
        return;
    }
    if (w->dst && n) memset(w->dst + w->pos, 0, n);
    w->pos += n;
}
static inline void hri_w_u8(struct hri_writer *w, uint8_t v) { hri_w_bytes(w, &v, 1); }
static inline void hri_w_u16(struct hri_writer *w, uint16_t v) {
    uint8_t b[2];
    hri_store_u16le(b, v);
    hri_w_bytes(w, b, 2);
}
static inline void hri_w_u32(struct hri_writer *w, uint32_t v) {
    uint8_t b[4];
    hri_store_u32le(b, v);
    hri_w_bytes(w, b, 4);
}
static inline void hri_w_u64(struct hri_writer *w, uint64_t v) {
    uint8_t b[8];
    hri_store_u64le(b, v);
    hri_w_bytes(w, b, 8);
}
static inline void hri_w_i64(struct hri_writer *w, int64_t v) {
    uint64_t u;
    memcpy(&u, &v, 8);
    hri_w_u64(w, u);
}
static inline void hri_w_f32(struct hri_writer *w, float v) { hri_w_u32(w, hri_f32_bits(v)); }
static inline void hri_w_f64(struct hri_writer *w, double v) { hri_w_u64(w, hri_f64_bits(v)); }
static inline size_t hri_pad8(size_t n) { return (8 - (n & 7)) & 7; }
/* n bytes of a writer with a destination, for the caller to fill: where they start, or NULL
 * (and `overflowed` set) when they do not fit or there is no destination (a counting
 * writer). One room check for a run of fields stored at known offsets. */
static inline uint8_t *hri_w_reserve(struct hri_writer *w, size_t n) {
    if (w->overflowed || !w->dst || n > w->cap - w->pos) {
        w->overflowed = 1;
        return NULL;
    }
    uint8_t *p = w->dst + w->pos;
    w->pos += n;
    return p;
}
/* Zero padding up to the next multiple of 8 of w->pos. */
static inline void hri_w_pad8(struct hri_writer *w) { hri_w_zero(w, hri_pad8(w->pos)); }

/* ---- allocation --------------------------------------------------------- */

void *hri_alloc(const struct hurray_allocator *a, size_t size);
void hri_free(const struct hurray_allocator *a, void *p, size_t size);

/* ---- limits (status.c, beside hurray_limits_default and _clamp) ---------- */

/* NULL means the defaults; a limit above its format maximum means the maximum. */
void hri_limits_effective(const struct hurray_limits *in, struct hurray_limits *out);
/* Every limit at its format maximum: what an encoder or writer is bound by (a 20 GiB buffer
 * is encodable even though a default reader refuses it with LIMIT). */
void hri_limits_format_max(struct hurray_limits *out);

/* ---- cross-file functions ------------------------------------------------ */

/* Writable room for a layout's rank-sized parameters while it is parsed
 * (the decoder's scratch; never zeroed: only what is read is used). */
struct hri_layout_arrays {
    int64_t strides[HURRAY_MAX_RANK];
    int64_t inner_strides[HURRAY_MAX_RANK];
    uint64_t tile_shape[HURRAY_MAX_RANK];
    uint64_t fiber_counts[HURRAY_MAX_RANK];
    uint8_t mode_order[HURRAY_MAX_RANK];
};

/* layout.c: parameter block body (no header, no padding). The cursor spans
 * exactly param_length bytes; the function must consume all of them or fail
 * with LENGTH. The spans the tag uses are read into `arrays` and `out` points
 * at them (the others are NULL); private/unknown layouts get opaque pointing
 * into c->src. */
int hri_layout_params_read(struct hri_cursor *c, uint8_t tag, uint8_t rank,
                           const struct hurray_limits *limits, struct hurray_layout *out,
                           struct hri_layout_arrays *arrays, struct hurray_error *err);
/* layout.c: ARGUMENT unless every span `tag` uses is non-NULL for `rank`
 * (and opaque for opaque_len bytes). */
int hri_layout_check_spans(const struct hurray_layout *l, uint8_t rank,
                           struct hurray_error *err);
void hri_layout_params_write(struct hri_writer *w, const struct hurray_layout *l, uint8_t rank);
/* Dtype/byte_offset rules that depend on the layout (strided/tiled need
 * byte-addressable types; byte_offset multiple of element width; zero for
 * buffer-less layouts). */
int hri_layout_check_dtype(const struct hurray_layout *l, uint8_t dtype, uint64_t byte_offset,
                           struct hurray_error *err);
/* Required sizes of the layout's L buffers (tier 2). Only for named layouts;
 * assumes validate_against_shape passed. known[i] = 0 when not evaluable. */
int hri_layout_required_sizes(const struct hurray_layout *l, uint8_t dtype, uint8_t rank,
                              const uint64_t *shape, uint64_t byte_offset, uint64_t *sizes,
                              uint8_t *known, struct hurray_error *err);
/* The last step of hurray_layout_check_params: the parameters' value rules
 * (tile extents, composite rule/combine/member_count, extension opaque
 * bytes), for a caller that has already checked the tag (not invalid), the
 * rank (at most the format maximum) and the spans (hri_layout_check_spans). */
int hri_layout_check_param_values(const struct hurray_layout *layout, uint8_t rank,
                                  const struct hurray_limits *limits, struct hurray_error *err);
/* The last step of hurray_layout_validate_against_shape: the layout's rank,
 * extent and parameter constraints (HR-LAYOUT-50), for a caller that has
 * already checked the rank, the extents, the element count and the
 * parameters' own rules (hurray_layout_check_params). */
int hri_layout_check_against_shape(const struct hurray_layout *l, uint8_t rank,
                                   const uint64_t *shape, struct hurray_error *err);

/* descriptor.c: hurray_descriptor_encode in two halves, for a writer that places the bytes
 * itself (file.c's index): `measure` validates once, under `limits` (never NULL: a reader's
 * clamped to the format maxima, valid under which is valid under the format's rules too, or
 * the format maxima; the caller makes them once for all its descriptors), and gives the
 * canonical length; `write` then appends exactly
 * those `len` bytes of the descriptor so measured (no second validation), INTERNAL if w
 * lacks the room or the writer's count differs. */
int hri_descriptor_measure(const struct hurray_descriptor *d, const struct hurray_limits *limits,
                           size_t *len, struct hurray_error *err);
int hri_descriptor_write(struct hri_writer *w, const struct hurray_descriptor *d, size_t len,
                         struct hurray_error *err);

/* quant.c: write the payload (no section header). */
void hri_quant_write(struct hri_writer *w, const struct hurray_quant *q);
/* quant.c: read a payload spanning the whole cursor. */
int hri_quant_read(struct hri_cursor *c, struct hurray_quant *out, struct hurray_error *err);

/* sections.c: payload readers (cursor spans exactly the payload) and writers. */
int hri_statistics_read(struct hri_cursor *c, struct hurray_statistics *out,
                        struct hurray_error *err);
void hri_statistics_write(struct hri_writer *w, const struct hurray_statistics *s);
/* global_shape / global_offset (rank each) are read into the two arrays,
 * which out's spans then point at. */
int hri_shard_read(struct hri_cursor *c, uint8_t rank, struct hurray_shard *out,
                   uint64_t *global_shape, uint64_t *global_offset, struct hurray_error *err);
void hri_shard_write(struct hri_writer *w, const struct hurray_shard *s, uint8_t rank);
int hri_role_read(struct hri_cursor *c, uint8_t *role, struct hurray_error *err);
void hri_role_write(struct hri_writer *w, uint8_t role);
/* Payload lengths of the known sections. */
uint32_t hri_statistics_length(void);
uint32_t hri_shard_length(uint8_t rank);
uint32_t hri_role_length(void);

/* Shared tag-kind rule for spaces with a private range (conventions.md). */
static inline int hri_tag_kind_with_private(uint8_t tag, int named) {
    if (tag == 0x00 || tag == 0xFF) return HURRAY_TAG_INVALID;
    if (named) return HURRAY_TAG_NAMED;
    if (tag >= HURRAY_PRIVATE_FIRST && tag <= HURRAY_PRIVATE_LAST) return HURRAY_TAG_PRIVATE;
    return HURRAY_TAG_RESERVED;
}
/* For spaces without a private range (0xF0-0xFE are reserved there). */
static inline int hri_tag_kind_plain(uint8_t tag, int named) {
    if (tag == 0x00 || tag == 0xFF) return HURRAY_TAG_INVALID;
    return named ? HURRAY_TAG_NAMED : HURRAY_TAG_RESERVED;
}
/* OK for named (and private when allow_private); INVALID_TAG / RESERVED_TAG
 * with a message naming `field` and the byte otherwise. */
int hri_check_tag_kind(int kind, uint8_t tag, int allow_private, const char *field,
                       struct hurray_error *err);

#endif
