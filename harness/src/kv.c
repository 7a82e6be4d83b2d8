/* Kind "kv" (schema 2): a standalone KV section (docs/spec/kv.md), and the
 * KV-map oracle that kind "file" shares.
 *
 * The oracle's KV map is {key: kvvalue}, kvvalue a one-key map naming the
 * value type ({"int64": -3}, {"float64": bits}, {"list": [kvvalue]}, ...).
 * It is schema-checked when the vector is parsed and compared, by walking
 * the CBOR tree, with the library's decoded map:
 *
 *   valid:   hurray_kv_decode of the whole file is OK; the entries are
 *            strictly ascending by key bytes (HR-KV-7); every oracle key is
 *            there with an equal value (tags by name, floats by bit pattern,
 *            int64 and uint64 distinct, strings and bytes byte for byte,
 *            lists element by element) and there are no others;
 *            hurray_kv_encoded_len == encoded_len == size; with roundtrip,
 *            hurray_kv_encode reproduces the file; then every prefix
 *            0..size-1 fails with TRUNCATED (kv.md: "cutting it anywhere");
 *   invalid: exactly "error". */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Deeper than the format maximum (64) plus slack: a schema error, not a crash. */
#define HC_KV_MAX_NESTING 96u
/* Prefix sweeps above this size are sampled (hc_sweep_plan). */
#define HC_KV_SWEEP_FULL 16384u

enum kvt { KVT_BOOL, KVT_INT64, KVT_UINT64, KVT_FLOAT64, KVT_STRING, KVT_BYTES, KVT_LIST,
           KVT_COUNT };

/* Manifest names, which are also libhurray's (hurray_kv_type_name). */
static const char *const kvt_names[KVT_COUNT] = {"bool", "int64", "uint64", "float64",
                                                 "string", "bytes", "list"};

/* A kvvalue's type and payload item; -1 (logged) when it is not one. */
static int kvvalue_split(struct hc_log *log, const char *path, const cbor_item_t *item,
                         enum kvt *type, const cbor_item_t **payload) {
    if (!item || !cbor_isa_map(item))
        return hc_schema_fail(log, path, "expected a kvvalue ({type: value}), got %s",
                              hc_cbor_type_name(item));
    if (hc_map_check_keys(log, path, item)) return -1;
    if (cbor_map_size(item) != 1)
        return hc_schema_fail(log, path, "a kvvalue has exactly one key, got %zu",
                              cbor_map_size(item));
    struct cbor_pair *pair = cbor_map_handle(item);
    for (int t = 0; t < KVT_COUNT; t++)
        if (hc_tstr_equals(pair->key, kvt_names[t]) == 0) {
            *type = (enum kvt)t;
            *payload = pair->value;
            return 0;
        }
    char kb[HC_PATH_MAX];
    return hc_schema_fail(log, path, "unknown KV value type \"%s\"",
                          hc_printable(kb, sizeof kb, (const char *)cbor_string_handle(pair->key),
                                       cbor_string_length(pair->key)));
}

static int kvvalue_parse(struct hc_log *log, const char *path, const cbor_item_t *item,
                         unsigned depth) {
    enum kvt t;
    const cbor_item_t *v;
    char p[HC_PATH_MAX];
    if (kvvalue_split(log, path, item, &t, &v)) return -1;
    hc_pathf(p, "%s.%s", path, kvt_names[t]);
    switch (t) {
    case KVT_BOOL: {
        int b;
        return hc_get_bool(log, p, v, &b);
    }
    case KVT_INT64: {
        int64_t i;
        return hc_get_int(log, p, v, &i);
    }
    case KVT_UINT64:
    case KVT_FLOAT64: {
        uint64_t u;
        return hc_get_uint(log, p, v, &u);
    }
    case KVT_STRING: {
        const char *s;
        size_t len;
        return hc_get_tstr(log, p, v, &s, &len);
    }
    case KVT_BYTES: {
        const uint8_t *b;
        size_t len;
        return hc_get_bstr(log, p, v, &b, &len);
    }
    case KVT_LIST: {
        cbor_item_t **items;
        size_t n;
        if (depth >= HC_KV_MAX_NESTING)
            return hc_schema_fail(log, p, "lists nested deeper than %u", HC_KV_MAX_NESTING);
        if (hc_get_array(log, p, v, SIZE_MAX, &items, &n)) return -1;
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            char e[HC_PATH_MAX];
            bad |= kvvalue_parse(log, hc_pathf(e, "%s[%zu]", p, i), items[i], depth + 1);
        }
        return bad ? -1 : 0;
    }
    default: return -1;
    }
}

/* `path["key"]`, the key shortened and escaped. */
static const char *key_path(char buf[HC_PATH_MAX], const char *path, const char *key, size_t len) {
    char esc[64];
    hc_printable(esc, sizeof esc, key, len > 40 ? 40 : len);
    return hc_pathf(buf, "%s[\"%s%s\"]", path, esc, len > 40 ? "..." : "");
}

int hc_kv_map_parse(struct hc_log *log, const char *path, const cbor_item_t *item) {
    if (hc_map_check_keys(log, path, item)) return -1;
    size_t n = cbor_map_size(item);
    struct cbor_pair *pairs = cbor_map_handle(item);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char p[HC_PATH_MAX];
        key_path(p, path, (const char *)cbor_string_handle(pairs[i].key),
                 cbor_string_length(pairs[i].key));
        bad |= kvvalue_parse(log, p, pairs[i].value, 1);
    }
    return bad ? -1 : 0;
}

/* ------------------------------------------------------------ compare --- */

static void cmp_value(struct hc_log *log, const char *path, const cbor_item_t *want,
                      const struct hurray_kv_value *got, unsigned depth) {
    enum kvt t;
    const cbor_item_t *v;
    char p[HC_PATH_MAX];
    struct hc_log quiet;
    hc_log_init(&quiet, NULL);
    if (kvvalue_split(&quiet, path, want, &t, &v)) { /* parsed before: cannot happen */
        hc_fail(log, "%s: internal: oracle value not parseable", path);
        return;
    }
    const char *got_name = hurray_kv_type_name(got->type);
    hc_cmp_str(log, hc_pathf(p, "%s (type)", path), kvt_names[t], got_name);
    if (!got_name || strcmp(got_name, kvt_names[t]) != 0) return;
    hc_pathf(p, "%s.%s", path, kvt_names[t]);
    switch (t) {
    case KVT_BOOL: {
        int b = 0;
        hc_get_bool(&quiet, p, v, &b);
        /* the decoder only yields 0/1; anything else is a difference too */
        if (got->v.boolean > 1) hc_fail(log, "%s: library bool byte is %u", p, got->v.boolean);
        else hc_cmp_bool(log, p, b, got->v.boolean);
        break;
    }
    case KVT_INT64: {
        int64_t i = 0;
        hc_get_int(&quiet, p, v, &i);
        hc_cmp_i64(log, p, i, got->v.i64);
        break;
    }
    case KVT_UINT64: {
        uint64_t u = 0;
        hc_get_uint(&quiet, p, v, &u);
        hc_cmp_u64(log, p, u, got->v.u64);
        break;
    }
    case KVT_FLOAT64: {
        uint64_t u = 0, bits;
        hc_get_uint(&quiet, p, v, &u);
        memcpy(&bits, &got->v.f64, sizeof bits);
        hc_cmp_f64bits(log, p, u, bits);
        break;
    }
    case KVT_STRING:
    case KVT_BYTES: {
        const uint8_t *b = NULL;
        size_t len = 0;
        if (t == KVT_STRING) {
            const char *s;
            hc_get_tstr(&quiet, p, v, &s, &len);
            b = (const uint8_t *)s;
        } else {
            hc_get_bstr(&quiet, p, v, &b, &len);
        }
        static const uint8_t none[1] = {0};
        const uint8_t *gd = got->v.bytes.data ? got->v.bytes.data : none;
        if (!got->v.bytes.data && got->v.bytes.len)
            hc_fail(log, "%s: library gives NULL data for %" PRIu64 " bytes", p, got->v.bytes.len);
        else
            hc_cmp_bytes(log, p, b, len, gd, (size_t)got->v.bytes.len);
        break;
    }
    case KVT_LIST: {
        cbor_item_t **items = NULL;
        size_t n = 0;
        hc_get_array(&quiet, p, v, SIZE_MAX, &items, &n);
        char lp[HC_PATH_MAX];
        hc_cmp_u64(log, hc_pathf(lp, "%s (length)", p), n, got->v.list.count);
        if (n && !got->v.list.items) {
            hc_fail(log, "%s: library gives NULL items for %zu elements", p, n);
            break;
        }
        if (depth > HC_KV_MAX_NESTING) break;
        for (size_t i = 0; i < n && i < got->v.list.count; i++)
            cmp_value(log, hc_pathf(lp, "%s[%zu]", p, i), items[i], &got->v.list.items[i],
                      depth + 1);
        break;
    }
    default: break;
    }
}

/* memcmp over the shorter length, a prefix first (HR-KV-7). */
static int key_order(const char *a, size_t alen, const char *b, size_t blen) {
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return (alen > blen) - (alen < blen);
}

void hc_kv_compare(struct hc_log *log, const char *path, const cbor_item_t *want,
                   const struct hurray_kv *got) {
    char p[HC_PATH_MAX];
    size_t n = want ? cbor_map_size(want) : 0;
    struct cbor_pair *pairs = want ? cbor_map_handle(want) : NULL;
    hc_cmp_u64(log, hc_pathf(p, "%s (entries)", path), n, got->count);
    if (got->count && !got->entries) {
        hc_fail(log, "%s: library gives NULL entries for %zu", path, got->count);
        return;
    }
    for (size_t i = 1; i < got->count; i++) {
        const struct hurray_kv_entry *a = &got->entries[i - 1], *b = &got->entries[i];
        if (key_order(a->key, a->key_len, b->key, b->key_len) >= 0) {
            hc_fail(log, "%s: library entries not strictly ascending by key at entry %zu "
                         "(HR-KV-7)", path, i);
            break;
        }
    }
    /* every oracle key, found by bisection in the (now known sorted) entries */
    for (size_t i = 0; i < n; i++) {
        const char *k = (const char *)cbor_string_handle(pairs[i].key);
        size_t klen = cbor_string_length(pairs[i].key);
        if (!k) k = "";
        key_path(p, path, k, klen);
        size_t lo = 0, hi = got->count;
        const struct hurray_kv_entry *e = NULL;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            const struct hurray_kv_entry *m = &got->entries[mid];
            int c = key_order(m->key, m->key_len, k, klen);
            if (c == 0) {
                e = m;
                break;
            }
            if (c < 0) lo = mid + 1;
            else hi = mid;
        }
        if (!e) {
            hc_fail(log, "%s: key missing from the library's map", p);
            continue;
        }
        cmp_value(log, p, pairs[i].value, &e->value, 1);
    }
}

/* ------------------------------------------------------------ decoded --- */

int hc_kv_decoded_parse(struct hc_log *log, const cbor_item_t *item, struct hc_vector *v) {
    static const struct hc_key keys[] = {{"entries", HC_KEY_REQUIRED},
                                         {"encoded_len", HC_KEY_REQUIRED}};
    const cbor_item_t *f[2];
    v->kv = calloc(1, sizeof *v->kv);
    if (!v->kv) return hc_schema_fail(log, "decoded", "out of memory");
    if (hc_map_fields(log, "decoded", item, keys, 2, f)) return -1;
    int bad = hc_kv_map_parse(log, "decoded.entries", f[0]);
    bad |= hc_get_uint(log, "decoded.encoded_len", f[1], &v->kv->encoded_len);
    v->kv->entries = f[0];
    return bad ? -1 : 0;
}

/* -------------------------------------------------------------- check --- */

struct kv_decoder {
    struct hurray_kv kv;
    struct hc_alloc_stats stats;
    struct hurray_allocator alloc;
    struct hurray_decode_options opt;
    struct hurray_error err;
};

static int kv_decode(struct kv_decoder *dc, const uint8_t *src, size_t len) {
    hurray_error_clear(&dc->err);
    return hurray_kv_decode(src, len, &dc->opt, &dc->kv, &dc->err);
}

/* Every prefix of a valid section is TRUNCATED (kv.md § Decoding order: every
 * read that would cross the end is the short status). Each prefix sits at the
 * end of an allocation of the whole size. */
size_t *hc_kv_sweep_plan(const struct hc_vector *v, size_t *n, int *sampled) {
    return hc_sweep_plan((size_t)v->size, HC_KV_SWEEP_FULL, NULL, 0, n, sampled);
}

static void kv_sweep(struct hc_log *log, const struct hc_vector *v, struct kv_decoder *dc,
                     const uint8_t *data, size_t size, struct hc_result *res) {
    size_t n = 0;
    int sampled = 0;
    size_t *plan = hc_kv_sweep_plan(v, &n, &sampled);
    uint8_t *buf = malloc(size ? size : 1);
    if (!plan || !buf) {
        hc_fail(log, "truncation sweep: out of memory");
        free(plan);
        free(buf);
        return;
    }
    res->sweep_sampled = sampled;
    unsigned bad = 0;
    size_t first_bad = 0;
    int first_status = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = plan[i];
        uint8_t *tail = buf + (size - k);
        if (k) memcpy(tail, data, k);
        int st = kv_decode(dc, tail, k);
        hurray_kv_reset(&dc->kv);
        res->prefixes++;
        if (st == HURRAY_E_TRUNCATED) continue;
        if (bad++ == 0) {
            first_bad = k;
            first_status = st;
        }
        if (bad <= 16) hc_note(log, "DIFF truncation: prefix %zu -> %s", k, hc_status_str(st));
    }
    res->prefixes_bad += bad;
    hc_check_allocations(log, &dc->stats, "truncation sweep");
    if (bad)
        hc_fail(log, "truncation sweep: %u of %zu prefixes did not fail with TRUNCATED (first: "
                     "prefix of %zu bytes -> %s)",
                bad, n, first_bad, hc_status_str(first_status));
    else
        hc_note(log, "ok   truncation sweep: %zu prefixes%s, all TRUNCATED", n,
                sampled ? " (sampled)" : "");
    free(plan);
    free(buf);
}

static void kv_roundtrip(struct hc_log *log, const struct hc_vector *v, struct kv_decoder *dc,
                         const uint8_t *data) {
    struct hurray_error err;
    char msg[HC_MSG_MAX];
    uint64_t len = 0;
    size_t size = (size_t)v->size, written = 0;
    hurray_error_clear(&err);
    int st = hurray_kv_encoded_len(dc->kv.entries, dc->kv.count, &dc->alloc, &len, &err);
    if (st != HURRAY_OK) {
        hc_fail(log, "roundtrip: hurray_kv_encoded_len failed: %s",
                hc_describe(msg, sizeof msg, st, &err));
        return;
    }
    hc_cmp_u64(log, "decoded.encoded_len (hurray_kv_encoded_len)", v->kv->encoded_len, len);
    if (!v->roundtrip) return;
    uint8_t *out = malloc(size ? size : 1);
    if (!out) {
        hc_fail(log, "roundtrip: out of memory");
        return;
    }
    hurray_error_clear(&err);
    st = hurray_kv_encode(dc->kv.entries, dc->kv.count, &dc->alloc, out, size, &written, &err);
    if (st != HURRAY_OK)
        hc_fail(log, "roundtrip: hurray_kv_encode failed: %s", hc_describe(msg, sizeof msg, st, &err));
    else
        hc_cmp_bytes(log, "roundtrip: encoded bytes", data, size, out, written <= size ? written : size);
    free(out);
}

void hc_check_kv(struct hc_log *log, const struct hc_vector *v, const uint8_t *data,
                 struct hc_result *res) {
    struct kv_decoder *dc = calloc(1, sizeof *dc);
    char msg[HC_MSG_MAX];
    if (!dc) {
        hc_fail(log, "out of memory");
        return;
    }
    size_t size = (size_t)v->size;
    hurray_kv_init(&dc->kv);
    hc_counting_allocator(&dc->alloc, &dc->stats);
    dc->opt.limits = &v->limits;
    dc->opt.allocator = &dc->alloc;
    int st = kv_decode(dc, data, size);
    if (v->expect != HC_EXPECT_VALID) {
        hurray_kv_reset(&dc->kv);
        hc_check_allocations(log, &dc->stats, "decode");
        hc_check_failure_status(log, v, st, &dc->err, res);
        free(dc);
        return;
    }
    if (st != HURRAY_OK) {
        hc_fail(log, "expected a valid KV section, decode failed: %s",
                hc_describe(msg, sizeof msg, st, &dc->err));
    } else {
        hc_cmp_u64(log, "decoded.encoded_len (file size)", v->kv->encoded_len, v->size);
        hc_kv_compare(log, "decoded.entries", v->kv->entries, &dc->kv);
        kv_roundtrip(log, v, dc, data);
    }
    hurray_kv_reset(&dc->kv);
    hc_check_allocations(log, &dc->stats, "decode");
    kv_sweep(log, v, dc, data, size, res);
    free(dc);
}
