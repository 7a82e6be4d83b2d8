/* Key-value metadata: the canonical encoder and the strict decoder.
 * docs/spec/kv.md
 *
 * Decoding is peek -> verify -> decode (STYLE 7) with one walker: the first
 * pass runs every check of kv.md § Decoding order and counts what the map
 * needs (entries, list elements, bytes); one allocation of exactly that size
 * follows; the second pass walks the same code again and fills it. Nothing
 * is allocated before the first pass has bounded every count by the bytes
 * present. The encoder validates the caller's map under the format maxima,
 * sorts a pointer array by key and writes the one canonical form. */
#include "kv_internal.h"

#include <stdlib.h>

/* Smallest entry (header 8 + key 8 + payload 8) and list element (8 + 8). */
enum { ENTRY_MIN_BYTES = 24, ELEMENT_MIN_BYTES = 16, ENTRY_HEADER_BYTES = 8 };

#define NO_OFFSET UINT64_MAX

/* ---- names and UTF-8 (HR-KV-6) ------------------------------------------ */

/* Length of the sequence a lead byte starts (0: not a lead byte), and the
 * smallest code point that length may encode (overlong forms are invalid). */
static unsigned utf8_seq_len(uint8_t b, uint32_t *min) {
    if (b < 0x80) { *min = 0; return 1; }
    if (b >= 0xC2 && b <= 0xDF) { *min = 0x80; return 2; }
    if (b >= 0xE0 && b <= 0xEF) { *min = 0x800; return 3; }
    if (b >= 0xF0 && b <= 0xF4) { *min = 0x10000; return 4; }
    return 0;
}

static int utf8_decode_one(const uint8_t *s, size_t left, size_t *used, uint32_t *cp) {
    uint32_t min = 0;
    unsigned n = utf8_seq_len(s[0], &min);
    if (n == 0 || n > left) return 0;
    uint32_t v = n == 1 ? s[0] : (uint32_t)(s[0] & (0x7F >> n));
    for (unsigned k = 1; k < n; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        v = v << 6 | (uint32_t)(s[k] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *used = n;
    *cp = v;
    return 1;
}

/* Eight bytes at a time while they are ASCII and (unless allowed) not U+0000: names and keys
 * are mostly ASCII, and a decode per byte was most of a name's check. */
static int ascii8(const uint8_t *s, int allow_nul) {
    uint64_t v;
    memcpy(&v, s, 8);
    const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
    if (v & highs) return 0;
    return allow_nul || ((v - ones) & ~v & highs) == 0; /* no zero byte */
}

int hri_utf8_valid(const uint8_t *s, size_t n, int allow_nul) {
    size_t i = 0;
    while (n - i >= 8 && ascii8(s + i, allow_nul)) i += 8;
    while (i < n) {
        if (s[i] > 0 && s[i] < 0x80) { /* ASCII, not U+0000 */
            i++;
            continue;
        }
        size_t used = 0;
        uint32_t cp = 0;
        if (!utf8_decode_one(s + i, n - i, &used, &cp)) return 0;
        if (cp == 0 && !allow_nul) return 0;
        i += used;
    }
    return 1;
}

static int fail_name(struct hurray_error *err, int code, uint64_t offset, const char *field,
                     const char *why, uint64_t n, uint64_t max_bytes) {
    if (offset == NO_OFFSET)
        return hri_fail(err, code, field, "%s: %s (%llu bytes, max_name_bytes %llu; HR-KV-6)",
                        field, why, (unsigned long long)n, (unsigned long long)max_bytes);
    return hri_fail_at(err, code, offset, field,
                       "%s: %s (%llu bytes, max_name_bytes %llu; HR-KV-6)", field, why,
                       (unsigned long long)n, (unsigned long long)max_bytes);
}

int hri_name_check(const uint8_t *s, uint64_t n, uint64_t max_bytes, const char *what,
                   uint64_t offset, struct hurray_error *err) {
    if (n == 0)
        return fail_name(err, HURRAY_E_CONSTRAINT, offset, what, "a name is non-empty", n,
                         max_bytes);
    if (n > max_bytes)
        return fail_name(err, HURRAY_E_LIMIT, offset, what, "the name is too long", n, max_bytes);
    if (s && hri_utf8_valid(s, (size_t)n, 0)) return HURRAY_OK;
    return fail_name(err, HURRAY_E_CONSTRAINT, offset, what,
                     "a name is valid UTF-8 without U+0000", n, max_bytes);
}

/* ---- value tags (HR-KV-2, HR-KV-3) ---------------------------------------- */

const char *hurray_kv_type_name(uint8_t type) {
    switch (type) {
    case HURRAY_KV_BOOL: return "bool";
    case HURRAY_KV_INT64: return "int64";
    case HURRAY_KV_UINT64: return "uint64";
    case HURRAY_KV_FLOAT64: return "float64";
    case HURRAY_KV_STRING: return "string";
    case HURRAY_KV_BYTES: return "bytes";
    case HURRAY_KV_LIST: return "list";
    default: return NULL;
    }
}

/* 0x00/0xFF INVALID_TAG; unnamed tags UNSUPPORTED: refused, never dropped. */
static int check_value_tag(uint8_t tag, const char *field, uint64_t offset,
                           struct hurray_error *err) {
    if (hurray_kv_type_name(tag)) return HURRAY_OK;
    int code = (tag == 0x00 || tag == 0xFF) ? HURRAY_E_INVALID_TAG : HURRAY_E_UNSUPPORTED;
    const char *why = code == HURRAY_E_INVALID_TAG
                          ? "is permanently invalid"
                          : "is not a value type this reader knows; refused, not dropped (HR-KV-3)";
    if (offset == NO_OFFSET)
        return hri_fail(err, code, field, "%s: value tag 0x%02X %s", field, tag, why);
    return hri_fail_at(err, code, offset, field, "%s: value tag 0x%02X %s", field, tag, why);
}

/* ---- lifetime -------------------------------------------------------------- */

void hurray_kv_init(struct hurray_kv *kv) {
    if (kv) memset(kv, 0, sizeof *kv);
}

void hurray_kv_reset(struct hurray_kv *kv) {
    if (!kv) return;
    hri_free(kv->allocator, kv->storage, kv->storage_len);
    hurray_kv_init(kv);
}

void hurray_kv_move(struct hurray_kv *dst, struct hurray_kv *src) {
    if (!dst || !src || dst == src) return;
    hurray_kv_reset(dst);
    *dst = *src;
    hurray_kv_init(src);
}

/* ==== decoding (kv.md § Decoding order, HR-KV-9) ============================ */

/* One walker for both passes. In the counting pass `values` and `bytes` are
 * NULL and only the totals grow; in the filling pass the walker carves list
 * arrays and byte strings out of them in the same order. */
struct kv_dec {
    struct hri_cursor c;
    const struct hurray_limits *lim;
    unsigned entry; /* for field names */
    uint64_t n_values, n_bytes;
    struct hurray_kv_value *values;
    uint8_t *bytes;
    size_t values_used, bytes_used;
};

/* Field names are formatted only on failure: readers name the part
 * ("value.count") and the entry loop prefixes "entries[i]." to the record. */
static int in_entry(int st, unsigned entry, struct hurray_error *err) {
    if (st == HURRAY_OK || !err) return st;
    char f[HURRAY_ERROR_FIELD_MAX];
    hri_fieldf(f, "entries[%u].%s", entry, err->field);
    memcpy(err->field, f, sizeof f);
    return st;
}

/* Copies n bytes into the byte pool (filling pass) and returns them. */
static const uint8_t *pool_bytes(struct kv_dec *d, const uint8_t *src, uint64_t n, int nul) {
    uint64_t need = n + (nul ? 1 : 0);
    if (!d->bytes) {
        d->n_bytes += need;
        return NULL;
    }
    uint8_t *p = d->bytes + d->bytes_used;
    if (n) memcpy(p, src, (size_t)n);
    if (nul) p[n] = 0;
    d->bytes_used += (size_t)need;
    return p;
}

static int read_padding(struct kv_dec *d, uint64_t n, const char *part, struct hurray_error *err) {
    size_t pad = hri_pad8((size_t)(n & 7));
    if (pad == 0) return HURRAY_OK;
    return hri_read_reserved(&d->c, pad, part, err);
}

static int read_bool(struct kv_dec *d, struct hurray_kv_value *out, struct hurray_error *err) {
    uint8_t b = 0;
    uint64_t at = hri_cursor_offset(&d->c);
    HR_TRY(hri_need(&d->c, 8, "value", err));
    HR_TRY(hri_read_u8(&d->c, &b, "value", err));
    if (b > 1)
        return hri_fail_at(err, HURRAY_E_RANGE, at, "value",
                           "value: bool byte is %u, must be 0 or 1 (HR-KV-8)", (unsigned)b);
    HR_TRY(hri_read_reserved(&d->c, 7, "value.reserved", err));
    if (out) out->v.boolean = b;
    return HURRAY_OK;
}

static int read_word(struct kv_dec *d, struct hurray_kv_value *out, struct hurray_error *err) {
    uint64_t w = 0;
    HR_TRY(hri_read_u64(&d->c, &w, "value", err));
    if (!out) return HURRAY_OK;
    if (out->type == HURRAY_KV_INT64) memcpy(&out->v.i64, &w, 8);
    if (out->type == HURRAY_KV_UINT64) out->v.u64 = w;
    if (out->type == HURRAY_KV_FLOAT64) out->v.f64 = hri_f64_from_bits(w); /* bits kept */
    return HURRAY_OK;
}

/* string / bytes: length, bytes (short status), UTF-8, padding. */
static int read_blob(struct kv_dec *d, uint8_t type, struct hurray_kv_value *out,
                     struct hurray_error *err) {
    uint64_t n = 0;
    const uint8_t *p = NULL;
    HR_TRY(hri_read_u64(&d->c, &n, "value.length", err));
    uint64_t at = hri_cursor_offset(&d->c);
    if (n > hri_cursor_left(&d->c))
        return hri_fail_at(err, d->c.short_code, at, "value",
                           "value: length %llu, but %zu bytes remain", (unsigned long long)n,
                           hri_cursor_left(&d->c));
    HR_TRY(hri_read_bytes(&d->c, (size_t)n, &p, "value", err));
    if (type == HURRAY_KV_STRING && !hri_utf8_valid(p, (size_t)n, 1))
        return hri_fail_at(err, HURRAY_E_CONSTRAINT, at, "value",
                           "value: string is not valid UTF-8 (HR-KV-8)");
    HR_TRY(read_padding(d, n, "value.padding", err));
    const uint8_t *kept = pool_bytes(d, p, n, 0);
    if (out) {
        out->v.bytes.data = n ? kept : NULL;
        out->v.bytes.len = n;
    }
    return HURRAY_OK;
}

static int read_payload(struct kv_dec *d, uint8_t type, unsigned depth,
                        struct hurray_kv_value *out, struct hurray_error *err);

/* One list element: tag, 7 reserved, payload. */
static int read_element(struct kv_dec *d, unsigned depth, struct hurray_kv_value *out,
                        struct hurray_error *err) {
    uint8_t tag = 0;
    uint64_t at = hri_cursor_offset(&d->c);
    HR_TRY(hri_need(&d->c, 8, "value.element", err));
    HR_TRY(hri_read_u8(&d->c, &tag, "element", err));
    HR_TRY(check_value_tag(tag, "value.element.tag", at, err));
    HR_TRY(hri_read_reserved(&d->c, 7, "value.element.reserved", err));
    if (out) out->type = tag;
    return read_payload(d, tag, depth, out, err);
}

/* list: depth, count (bounded by the bytes left), elements. `depth` is this
 * list's depth: 1 for an entry's value. */
static int read_list(struct kv_dec *d, unsigned depth, struct hurray_kv_value *out,
                     struct hurray_error *err) {
    uint64_t count = 0, at = hri_cursor_offset(&d->c);
    if (depth > d->lim->max_composite_depth)
        return hri_fail_at(err, HURRAY_E_LIMIT, at, "value",
                           "value: list nesting depth %u exceeds max_composite_depth %u (HR-KV-2)",
                           depth, (unsigned)d->lim->max_composite_depth);
    HR_TRY(hri_read_u64(&d->c, &count, "value.count", err));
    if (count > hri_cursor_left(&d->c) / ELEMENT_MIN_BYTES)
        return hri_fail_at(err, d->c.short_code, at, "value.count",
                           "value.count: %llu elements need at least %llu bytes, %zu remain",
                           (unsigned long long)count,
                           (unsigned long long)count * ELEMENT_MIN_BYTES, hri_cursor_left(&d->c));
    struct hurray_kv_value *items = NULL;
    if (d->values) {
        items = d->values + d->values_used;
        d->values_used += (size_t)count;
    } else {
        d->n_values += count;
    }
    for (uint64_t k = 0; k < count; k++)
        HR_TRY(read_element(d, depth, items ? &items[k] : NULL, err));
    if (out) {
        out->v.list.items = count ? items : NULL;
        out->v.list.count = count;
    }
    return HURRAY_OK;
}

/* The payload for `type` (HR-KV-8). `depth` is the depth of the list that
 * holds this value (0 for an entry's value). */
static int read_payload(struct kv_dec *d, uint8_t type, unsigned depth,
                        struct hurray_kv_value *out, struct hurray_error *err) {
    switch (type) {
    case HURRAY_KV_BOOL: return read_bool(d, out, err);
    case HURRAY_KV_INT64:
    case HURRAY_KV_UINT64:
    case HURRAY_KV_FLOAT64: return read_word(d, out, err);
    case HURRAY_KV_STRING:
    case HURRAY_KV_BYTES: return read_blob(d, type, out, err);
    case HURRAY_KV_LIST: return read_list(d, depth + 1, out, err);
    default: return hri_fail(err, HURRAY_E_INTERNAL, "value", "value: unchecked tag 0x%02X", type);
    }
}

/* HR-KV-7: byte order, equal is DUPLICATE, before is SECTION_ORDER. */
static int key_compare(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c != 0) return c;
    return (an > bn) - (an < bn);
}

struct prev_key {
    const uint8_t *p;
    size_t n;
};

static int check_key_order(const uint8_t *key, size_t n, struct prev_key *prev, uint64_t at,
                           struct hurray_error *err) {
    if (prev->p) {
        int c = key_compare(key, n, prev->p, prev->n);
        if (c == 0)
            return hri_fail_at(err, HURRAY_E_DUPLICATE, at, "key",
                               "key: duplicate key \"%.*s\" (HR-KV-7)", (int)(n > 64 ? 64 : n),
                               (const char *)key);
        if (c < 0)
            return hri_fail_at(err, HURRAY_E_SECTION_ORDER, at, "key",
                               "key: sorts before the previous key; entries are sorted by "
                               "key bytes (HR-KV-7)");
    }
    prev->p = key;
    prev->n = n;
    return HURRAY_OK;
}

/* Step 3.1: key_length, value_tag, reserved. */
static int read_entry_header(struct kv_dec *d, uint32_t *key_len, uint8_t *tag,
                             struct hurray_error *err) {
    uint64_t at = hri_cursor_offset(&d->c);
    HR_TRY(hri_need(&d->c, ENTRY_HEADER_BYTES, "header", err));
    HR_TRY(hri_read_u32(&d->c, key_len, "key_length", err));
    if (*key_len == 0 || *key_len > d->lim->max_name_bytes)
        return hri_name_check(NULL, *key_len, d->lim->max_name_bytes,
                              "key_length", at, err);
    HR_TRY(hri_read_u8(&d->c, tag, "value_tag", err));
    HR_TRY(check_value_tag(*tag, "value_tag", at + 4, err));
    return hri_read_reserved(&d->c, 3, "reserved", err);
}

/* Step 3: one entry. */
static int read_entry(struct kv_dec *d, struct prev_key *prev, struct hurray_kv_entry *out,
                      struct hurray_error *err) {
    uint32_t key_len = 0;
    uint8_t tag = 0;
    const uint8_t *key = NULL;
    HR_TRY(read_entry_header(d, &key_len, &tag, err));
    uint64_t at = hri_cursor_offset(&d->c);
    HR_TRY(hri_read_bytes(&d->c, key_len, &key, "key", err));
    HR_TRY(hri_name_check(key, key_len, d->lim->max_name_bytes, "key", at,
                          err));
    HR_TRY(check_key_order(key, key_len, prev, at, err));
    HR_TRY(read_padding(d, key_len, "key.padding", err));
    const uint8_t *kept = pool_bytes(d, key, key_len, 1);
    if (out) {
        out->key = (const char *)kept;
        out->key_len = key_len;
        out->value.type = tag;
    }
    return read_payload(d, tag, 0, out ? &out->value : NULL, err);
}

/* Steps 2-4 over the whole section; `entries` NULL in the counting pass. */
static int walk_section(struct kv_dec *d, uint64_t *count, struct hurray_kv_entry *entries,
                        struct hurray_error *err) {
    uint64_t at = hri_cursor_offset(&d->c);
    struct prev_key prev = {NULL, 0};
    HR_TRY(hri_read_u64(&d->c, count, "entry_count", err));
    HR_FAIL_IF(*count > d->lim->max_kv_entries, err, HURRAY_E_LIMIT, "entry_count",
               "entry_count: %llu exceeds max_kv_entries %llu (HR-KV-5)",
               (unsigned long long)*count, (unsigned long long)d->lim->max_kv_entries);
    if (*count > hri_cursor_left(&d->c) / ENTRY_MIN_BYTES)
        return hri_fail_at(err, d->c.short_code, at, "entry_count",
                           "entry_count: %llu entries need at least %llu bytes, %zu remain",
                           (unsigned long long)*count,
                           (unsigned long long)*count * ENTRY_MIN_BYTES, hri_cursor_left(&d->c));
    for (uint64_t i = 0; i < *count; i++) {
        d->entry = (unsigned)i;
        HR_TRY(in_entry(read_entry(d, &prev, entries ? &entries[i] : NULL, err), d->entry, err));
    }
    if (hri_cursor_left(&d->c) == 0) return HURRAY_OK;
    return hri_fail_at(err, HURRAY_E_LENGTH, hri_cursor_offset(&d->c), "section",
                       "section: %zu bytes left after the last entry (HR-KV-9)",
                       hri_cursor_left(&d->c));
}

static void dec_init(struct kv_dec *d, const uint8_t *src, size_t len,
                     const struct hurray_limits *lim, int short_code, uint64_t base) {
    memset(d, 0, sizeof *d);
    hri_cursor_init(&d->c, src, len, short_code);
    d->c.base = base;
    d->lim = lim;
}

/* One block: entries, then list elements, then bytes (keys NUL-terminated). */
static int storage_size(uint64_t entries, uint64_t values, uint64_t bytes, size_t *total,
                        struct hurray_error *err) {
    uint64_t a = 0, b = 0, t = 0;
    if (hri_mul_u64(entries, sizeof(struct hurray_kv_entry), &a) ||
        hri_mul_u64(values, sizeof(struct hurray_kv_value), &b) || hri_add_u64(a, b, &t) ||
        hri_add_u64(t, bytes, &t) || t > SIZE_MAX)
        return hri_fail(err, HURRAY_E_OVERFLOW, "section", "section: decoded size overflows");
    *total = (size_t)t;
    return HURRAY_OK;
}

static int fill_pass(const uint8_t *src, size_t len, const struct hurray_limits *lim,
                     int short_code, uint64_t base, uint64_t counted_entries,
                     uint64_t counted_values, struct hurray_kv *out, struct hurray_error *err) {
    struct kv_dec d;
    uint64_t count = 0;
    uint8_t *block = out->storage;
    struct hurray_kv_entry *entries = (struct hurray_kv_entry *)(void *)block;
    dec_init(&d, src, len, lim, short_code, base);
    d.values = (struct hurray_kv_value *)(void *)(entries + counted_entries);
    d.bytes = (uint8_t *)(d.values + counted_values);
    HR_TRY(walk_section(&d, &count, entries, err));
    out->entries = entries;
    out->count = (size_t)count;
    return HURRAY_OK;
}

/* The first pass of both decoders: the limits in effect (the caller's, clamped, or the
 * defaults), step 1, then steps 2-4 over the whole section (walk_section counting, nothing
 * written), and the size of the whole decoded map, which must be representable. */
static int validate_pass(const uint8_t *src, size_t len, const struct hurray_limits *limits,
                         int short_code, uint64_t base, struct hurray_limits *lim,
                         struct kv_dec *d, uint64_t *count, size_t *total,
                         struct hurray_error *err) {
    if (limits) *lim = *limits; else hurray_limits_default(lim);
    hurray_limits_clamp(lim);
    /* Step 1 */
    if ((uint64_t)len > lim->max_kv_bytes)
        return hri_fail_at(err, HURRAY_E_LIMIT, base, "section",
                           "section: %zu bytes exceed max_kv_bytes %llu (HR-KV-5)", len,
                           (unsigned long long)lim->max_kv_bytes);
    dec_init(d, src, len, lim, short_code, base);
    HR_TRY(walk_section(d, count, NULL, err));
    return storage_size(*count, d->n_values, d->n_bytes, total, err);
}

int hri_kv_decode_section(const uint8_t *src, size_t len, const struct hurray_limits *limits,
                          const struct hurray_allocator *allocator, int short_code,
                          uint64_t base, struct hurray_kv *out, struct hurray_error *err) {
    struct hurray_limits lim;
    struct kv_dec d;
    uint64_t count = 0;
    size_t total = 0;
    HR_FAIL_IF(!out || (!src && len), err, HURRAY_E_ARGUMENT, "kv", "kv_decode: NULL argument");
    hurray_kv_reset(out);
    HR_TRY(validate_pass(src, len, limits, short_code, base, &lim, &d, &count, &total, err));
    if (total == 0) return HURRAY_OK;
    out->storage = hri_alloc(allocator, total);
    HR_FAIL_IF(!out->storage, err, HURRAY_E_NOMEM, "kv", "kv: out of memory (%zu bytes)", total);
    out->storage_len = total;
    out->allocator = allocator;
    int st = fill_pass(src, len, &lim, short_code, base, count, d.n_values, out, err);
    if (st != HURRAY_OK) hurray_kv_reset(out);
    return st;
}

/* ---- one entry at a time (kv.md § Decoding one entry at a time) ---------------------- */

/* The second pass of hri_kv_decode_section_each, over a section the first pass has
 * validated whole: for each entry, the walker counts what that entry alone needs (a copy of
 * the cursor, nothing kept), carves it from one scratch block (grown when an entry needs
 * more, never held for more than one entry's values) and fills it. */
static int each_pass(const uint8_t *src, size_t len, const struct hurray_limits *lim,
                     int short_code, uint64_t base, const struct hurray_allocator *allocator,
                     hurray_kv_entry_fn fn, void *ctx, struct hurray_error *err) {
    struct kv_dec d;
    struct prev_key prev = {NULL, 0};
    uint64_t count = 0;
    uint8_t *block = NULL;
    size_t cap = 0;
    int st = HURRAY_OK;
    dec_init(&d, src, len, lim, short_code, base);
    HR_TRY(hri_read_u64(&d.c, &count, "entry_count", err));
    for (uint64_t i = 0; st == HURRAY_OK && i < count; i++) {
        struct kv_dec sizing = d;
        struct prev_key p2 = prev;
        struct hurray_kv_entry entry;
        size_t need = 0;
        sizing.values = NULL;
        sizing.bytes = NULL;
        sizing.n_values = sizing.n_bytes = 0;
        d.entry = sizing.entry = (unsigned)i;
        st = in_entry(read_entry(&sizing, &p2, NULL, err), d.entry, err);
        if (st == HURRAY_OK) st = storage_size(0, sizing.n_values, sizing.n_bytes, &need, err);
        if (st == HURRAY_OK && need > cap) {
            hri_free(allocator, block, cap);
            cap = 0;
            block = hri_alloc(allocator, need);
            if (!block) st = hri_fail(err, HURRAY_E_NOMEM, "kv", "kv: out of memory (%zu bytes)",
                                      need);
            else cap = need;
        }
        if (st != HURRAY_OK) break;
        d.values = (struct hurray_kv_value *)(void *)block;
        d.bytes = (uint8_t *)(d.values + sizing.n_values); /* a key needs >= 2 bytes */
        d.values_used = d.bytes_used = 0;
        memset(&entry, 0, sizeof entry);
        st = in_entry(read_entry(&d, &prev, &entry, err), d.entry, err);
        if (st == HURRAY_OK) st = fn(ctx, &entry, (size_t)i, (size_t)count);
    }
    hri_free(allocator, block, cap);
    return st;
}

int hri_kv_decode_section_each(const uint8_t *src, size_t len,
                               const struct hurray_limits *limits,
                               const struct hurray_allocator *allocator, int short_code,
                               uint64_t base, hurray_kv_entry_fn fn, void *ctx, size_t *count,
                               struct hurray_error *err) {
    struct hurray_limits lim;
    struct kv_dec d;
    uint64_t n = 0;
    size_t total = 0;
    HR_FAIL_IF(!fn || (!src && len), err, HURRAY_E_ARGUMENT, "kv",
               "kv_decode_each: NULL argument");
    if (count) *count = 0;
    /* the whole section validated before any entry is handed over, and the whole map's size
     * representable, exactly as hurray_kv_decode requires */
    HR_TRY(validate_pass(src, len, limits, short_code, base, &lim, &d, &n, &total, err));
    if (count) *count = (size_t)n;
    if (n == 0) return HURRAY_OK;
    return each_pass(src, len, &lim, short_code, base, allocator, fn, ctx, err);
}

int hurray_kv_decode_each(const uint8_t *src, size_t len, const struct hurray_decode_options *opt,
                          hurray_kv_entry_fn fn, void *ctx, struct hurray_error *err) {
    return hri_kv_decode_section_each(src, len, opt ? opt->limits : NULL,
                                      opt ? opt->allocator : NULL, HURRAY_E_TRUNCATED, 0, fn, ctx,
                                      NULL, err);
}

int hurray_kv_decode(const uint8_t *src, size_t len, const struct hurray_decode_options *opt,
                     struct hurray_kv *out, struct hurray_error *err) {
    return hri_kv_decode_section(src, len, opt ? opt->limits : NULL, opt ? opt->allocator : NULL,
                                 HURRAY_E_TRUNCATED, 0, out, err);
}

ptrdiff_t hurray_kv_find(const struct hurray_kv *kv, const char *key, size_t key_len) {
    if (!kv || !key) return -1;
    size_t lo = 0, hi = kv->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct hurray_kv_entry *e = &kv->entries[mid];
        int c = key_compare((const uint8_t *)e->key, e->key_len, (const uint8_t *)key, key_len);
        if (c == 0) return (ptrdiff_t)mid;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return -1;
}

/* ==== equality (HR-KV-11) ==================================================== */

int hurray_kv_value_equal(const struct hurray_kv_value *a, const struct hurray_kv_value *b) {
    if (!a || !b || a->type != b->type) return 0;
    switch (a->type) {
    case HURRAY_KV_BOOL: return a->v.boolean == b->v.boolean;
    case HURRAY_KV_INT64: return a->v.i64 == b->v.i64;
    case HURRAY_KV_UINT64: return a->v.u64 == b->v.u64;
    case HURRAY_KV_FLOAT64: return hri_f64_bits(a->v.f64) == hri_f64_bits(b->v.f64);
    case HURRAY_KV_STRING:
    case HURRAY_KV_BYTES:
        return a->v.bytes.len == b->v.bytes.len &&
               (a->v.bytes.len == 0 ||
                memcmp(a->v.bytes.data, b->v.bytes.data, (size_t)a->v.bytes.len) == 0);
    case HURRAY_KV_LIST:
        if (a->v.list.count != b->v.list.count) return 0;
        for (uint64_t k = 0; k < a->v.list.count; k++)
            if (!hurray_kv_value_equal(&a->v.list.items[k], &b->v.list.items[k])) return 0;
        return 1;
    default: return 0;
    }
}

int hurray_kv_entries_equal(const struct hurray_kv_entry *a, size_t a_count,
                            const struct hurray_kv_entry *b, size_t b_count) {
    if (a_count != b_count) return 0;
    for (size_t i = 0; i < a_count; i++) {
        if (a[i].key_len != b[i].key_len || memcmp(a[i].key, b[i].key, a[i].key_len) != 0)
            return 0;
        if (!hurray_kv_value_equal(&a[i].value, &b[i].value)) return 0;
    }
    return 1;
}

/* ==== encoding (HR-KV-10) ===================================================== */

/* Payload length of a value the caller built, validated under the format
 * maxima on the way (tag, bool, UTF-8, pointers, depth). Field "value"; the
 * caller prefixes the entry. */
static int value_check_len(const struct hurray_kv_value *v, unsigned depth, uint64_t *len,
                           struct hurray_error *err) {
    HR_TRY(check_value_tag(v->type, "value", NO_OFFSET, err));
    switch (v->type) {
    case HURRAY_KV_BOOL:
        HR_FAIL_IF(v->v.boolean > 1, err, HURRAY_E_RANGE, "value",
                   "value: bool is %u, must be 0 or 1 (HR-KV-8)", (unsigned)v->v.boolean);
        *len = 8;
        return HURRAY_OK;
    case HURRAY_KV_STRING:
    case HURRAY_KV_BYTES: {
        uint64_t n = v->v.bytes.len;
        HR_FAIL_IF(n && !v->v.bytes.data, err, HURRAY_E_ARGUMENT, "value", "value: NULL data");
        HR_FAIL_IF(n > SIZE_MAX - 16, err, HURRAY_E_OVERFLOW, "value", "value: length overflows");
        HR_FAIL_IF(v->type == HURRAY_KV_STRING && !hri_utf8_valid(v->v.bytes.data, (size_t)n, 1),
                   err, HURRAY_E_CONSTRAINT, "value", "value: string is not valid UTF-8 (HR-KV-8)");
        *len = 8 + n + hri_pad8((size_t)(n & 7));
        return HURRAY_OK;
    }
    case HURRAY_KV_LIST: {
        HR_FAIL_IF(depth + 1 > HURRAY_KV_MAX_DEPTH_FORMAT, err, HURRAY_E_LIMIT, "value",
                   "value: lists nest deeper than %u (HR-KV-2)", HURRAY_KV_MAX_DEPTH_FORMAT);
        HR_FAIL_IF(v->v.list.count && !v->v.list.items, err, HURRAY_E_ARGUMENT, "value",
                   "value: NULL list items");
        uint64_t total = 8;
        for (uint64_t k = 0; k < v->v.list.count; k++) {
            uint64_t el = 0;
            HR_TRY(value_check_len(&v->v.list.items[k], depth + 1, &el, err));
            HR_FAIL_IF(hri_add_u64(total, 8 + el, &total), err, HURRAY_E_OVERFLOW, "value",
                       "value: list length overflows");
        }
        *len = total;
        return HURRAY_OK;
    }
    default: *len = 8; return HURRAY_OK;
    }
}

static int entry_ptr_compare(const void *pa, const void *pb) {
    const struct hurray_kv_entry *a = *(const struct hurray_kv_entry *const *)pa;
    const struct hurray_kv_entry *b = *(const struct hurray_kv_entry *const *)pb;
    return key_compare((const uint8_t *)a->key, a->key_len, (const uint8_t *)b->key, b->key_len);
}

/* A validated, sorted view of the caller's map and its exact length. */
struct kv_plan {
    const struct hurray_kv_entry **sorted;
    size_t count;
    uint64_t len;
    const struct hurray_allocator *allocator;
};

static void plan_free(struct kv_plan *p) {
    hri_free(p->allocator, (void *)p->sorted, p->count * sizeof *p->sorted);
    p->sorted = NULL;
}

static int check_entries(const struct hurray_kv_entry *e, size_t count, uint64_t *len,
                         struct hurray_error *err) {
    uint64_t total = 8;
    for (size_t i = 0; i < count; i++) {
        uint64_t v = 0;
        HR_TRY(in_entry(hri_name_check((const uint8_t *)e[i].key, e[i].key_len,
                                       HURRAY_MAX_NAME_BYTES_FORMAT, "key", NO_OFFSET, err),
                        (unsigned)i, err));
        HR_TRY(in_entry(value_check_len(&e[i].value, 0, &v, err), (unsigned)i, err));
        uint64_t key = (uint64_t)e[i].key_len + hri_pad8(e[i].key_len & 7u);
        HR_FAIL_IF(hri_add_u64(total, 8 + key, &total) || hri_add_u64(total, v, &total), err,
                   HURRAY_E_OVERFLOW, "section", "section: length overflows");
    }
    *len = total;
    return HURRAY_OK;
}

static int check_duplicates(const struct kv_plan *p, struct hurray_error *err) {
    for (size_t i = 1; i < p->count; i++) {
        if (entry_ptr_compare(&p->sorted[i - 1], &p->sorted[i]) != 0) continue;
        return hri_fail(err, HURRAY_E_DUPLICATE, "key", "key: \"%.*s\" appears twice (HR-KV-7)",
                        (int)(p->sorted[i]->key_len > 64 ? 64 : p->sorted[i]->key_len),
                        p->sorted[i]->key);
    }
    return HURRAY_OK;
}

static int plan_make(const struct hurray_kv_entry *e, size_t count,
                     const struct hurray_allocator *a, struct kv_plan *p,
                     struct hurray_error *err) {
    memset(p, 0, sizeof *p);
    p->allocator = a;
    HR_FAIL_IF(count && !e, err, HURRAY_E_ARGUMENT, "entries", "kv_encode: NULL entries");
    HR_FAIL_IF((uint64_t)count > UINT32_MAX, err, HURRAY_E_LIMIT, "entry_count",
               "entry_count: %zu exceeds the format maximum 2^32-1 (HR-KV-10)", count);
    HR_TRY(check_entries(e, count, &p->len, err));
    if (count == 0) return HURRAY_OK;
    p->sorted = hri_alloc(a, count * sizeof *p->sorted);
    HR_FAIL_IF(!p->sorted, err, HURRAY_E_NOMEM, "kv", "kv: out of memory");
    p->count = count;
    for (size_t i = 0; i < count; i++) p->sorted[i] = &e[i];
    qsort((void *)p->sorted, count, sizeof *p->sorted, entry_ptr_compare);
    int st = check_duplicates(p, err);
    if (st != HURRAY_OK) plan_free(p);
    return st;
}

static void write_value(struct hri_writer *w, const struct hurray_kv_value *v) {
    switch (v->type) {
    case HURRAY_KV_BOOL:
        hri_w_u8(w, v->v.boolean);
        hri_w_zero(w, 7);
        return;
    case HURRAY_KV_INT64: hri_w_i64(w, v->v.i64); return;
    case HURRAY_KV_UINT64: hri_w_u64(w, v->v.u64); return;
    case HURRAY_KV_FLOAT64: hri_w_u64(w, hri_f64_bits(v->v.f64)); return;
    case HURRAY_KV_STRING:
    case HURRAY_KV_BYTES:
        hri_w_u64(w, v->v.bytes.len);
        hri_w_bytes(w, v->v.bytes.data, (size_t)v->v.bytes.len);
        hri_w_pad8(w);
        return;
    case HURRAY_KV_LIST:
        hri_w_u64(w, v->v.list.count);
        for (uint64_t k = 0; k < v->v.list.count; k++) {
            hri_w_u8(w, v->v.list.items[k].type);
            hri_w_zero(w, 7);
            write_value(w, &v->v.list.items[k]);
        }
        return;
    default: return;
    }
}

static void write_section(struct hri_writer *w, const struct kv_plan *p) {
    hri_w_u64(w, p->count);
    for (size_t i = 0; i < p->count; i++) {
        const struct hurray_kv_entry *e = p->sorted[i];
        hri_w_u32(w, e->key_len);
        hri_w_u8(w, e->value.type);
        hri_w_zero(w, 3);
        hri_w_bytes(w, e->key, e->key_len);
        hri_w_pad8(w);
        write_value(w, &e->value);
    }
}

int hurray_kv_encoded_len(const struct hurray_kv_entry *entries, size_t count,
                          const struct hurray_allocator *allocator, uint64_t *len,
                          struct hurray_error *err) {
    struct kv_plan p;
    HR_FAIL_IF(!len, err, HURRAY_E_ARGUMENT, "len", "kv_encoded_len: NULL argument");
    HR_TRY(plan_make(entries, count, allocator, &p, err));
    *len = p.len;
    plan_free(&p);
    return HURRAY_OK;
}

int hurray_kv_encode(const struct hurray_kv_entry *entries, size_t count,
                     const struct hurray_allocator *allocator, uint8_t *dst, size_t cap,
                     size_t *written, struct hurray_error *err) {
    struct kv_plan p;
    struct hri_writer w;
    HR_FAIL_IF(!dst || !written, err, HURRAY_E_ARGUMENT, "dst", "kv_encode: NULL argument");
    HR_TRY(plan_make(entries, count, allocator, &p, err));
    if (p.len > cap) {
        plan_free(&p);
        return hri_fail(err, HURRAY_E_ARGUMENT, "cap", "cap: %zu bytes, the section needs %llu",
                        cap, (unsigned long long)p.len);
    }
    hri_writer_init(&w, dst, cap);
    write_section(&w, &p);
    plan_free(&p);
    HR_FAIL_IF(w.overflowed || w.pos != p.len, err, HURRAY_E_INTERNAL, "section",
               "section: wrote %zu bytes, planned %llu", w.pos, (unsigned long long)p.len);
    *written = w.pos;
    return HURRAY_OK;
}
