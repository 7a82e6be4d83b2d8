/* Typed access to the manifest's CBOR tree. Every type or range error is a
 * schema failure naming the path of the bad key; nothing here aborts. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "harness.h"

const char *hc_pathf(char buf[HC_PATH_MAX], const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, HC_PATH_MAX, fmt, ap);
    va_end(ap);
    return buf;
}

/* libcbor asserts (aborts) when a ctrl accessor meets a float: check the
 * width first. */
static int ctrl_is(const cbor_item_t *item, uint8_t value) {
    return item && cbor_isa_float_ctrl(item) && cbor_float_get_width(item) == CBOR_FLOAT_0 &&
           cbor_ctrl_value(item) == value;
}

const char *hc_cbor_type_name(const cbor_item_t *item) {
    if (!item) return "nothing";
    switch (cbor_typeof(item)) {
    case CBOR_TYPE_UINT: return "uint";
    case CBOR_TYPE_NEGINT: return "negint";
    case CBOR_TYPE_BYTESTRING: return "bstr";
    case CBOR_TYPE_STRING: return "tstr";
    case CBOR_TYPE_ARRAY: return "array";
    case CBOR_TYPE_MAP: return "map";
    case CBOR_TYPE_TAG: return "tag";
    case CBOR_TYPE_FLOAT_CTRL:
        if (cbor_float_get_width(item) != CBOR_FLOAT_0) return "float";
        if (ctrl_is(item, CBOR_CTRL_NULL)) return "null";
        if (ctrl_is(item, CBOR_CTRL_TRUE) || ctrl_is(item, CBOR_CTRL_FALSE)) return "bool";
        if (ctrl_is(item, CBOR_CTRL_UNDEF)) return "undefined";
        return "simple";
    }
    return "unknown";
}

int hc_schema_fail(struct hc_log *log, const char *path, const char *fmt, ...) {
    char msg[HC_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hc_fail(log, "schema: %s: %s", path, msg);
    return -1;
}

static int type_fail(struct hc_log *log, const char *path, const char *want,
                     const cbor_item_t *item) {
    return hc_schema_fail(log, path, "expected %s, got %s", want, hc_cbor_type_name(item));
}

int hc_is_null(const cbor_item_t *item) { return ctrl_is(item, CBOR_CTRL_NULL); }

int hc_get_uint(struct hc_log *log, const char *path, const cbor_item_t *item, uint64_t *out) {
    if (!item || !cbor_isa_uint(item)) return type_fail(log, path, "uint", item);
    *out = cbor_get_int(item);
    return 0;
}

int hc_get_int(struct hc_log *log, const char *path, const cbor_item_t *item, int64_t *out) {
    if (item && cbor_isa_uint(item)) {
        uint64_t v = cbor_get_int(item);
        if (v > (uint64_t)INT64_MAX)
            return hc_schema_fail(log, path, "%" PRIu64 " does not fit int64", v);
        *out = (int64_t)v;
        return 0;
    }
    if (item && cbor_isa_negint(item)) {
        uint64_t v = cbor_get_int(item); /* the value is -1 - v */
        if (v > (uint64_t)INT64_MAX)
            return hc_schema_fail(log, path, "-1-%" PRIu64 " does not fit int64", v);
        *out = -1 - (int64_t)v;
        return 0;
    }
    return type_fail(log, path, "int", item);
}

int hc_get_bool(struct hc_log *log, const char *path, const cbor_item_t *item, int *out) {
    if (ctrl_is(item, CBOR_CTRL_TRUE)) *out = 1;
    else if (ctrl_is(item, CBOR_CTRL_FALSE)) *out = 0;
    else return type_fail(log, path, "bool", item);
    return 0;
}

int hc_get_tstr(struct hc_log *log, const char *path, const cbor_item_t *item, const char **s,
                size_t *len) {
    *s = "";
    *len = 0;
    if (!item || !cbor_isa_string(item)) return type_fail(log, path, "tstr", item);
    if (!cbor_string_is_definite(item))
        return hc_schema_fail(log, path, "indefinite-length tstr (not deterministic CBOR)");
    *s = (const char *)cbor_string_handle(item);
    *len = cbor_string_length(item);
    if (!*s) *s = "";
    return 0;
}

int hc_get_name(struct hc_log *log, const char *path, const cbor_item_t *item, char *buf,
                size_t cap) {
    const char *s;
    size_t len;
    if (hc_get_tstr(log, path, item, &s, &len)) return -1;
    if (len >= cap) return hc_schema_fail(log, path, "string of %zu bytes is too long", len);
    if (memchr(s, '\0', len)) return hc_schema_fail(log, path, "string contains NUL");
    memcpy(buf, s, len);
    buf[len] = '\0';
    return 0;
}

int hc_get_bstr(struct hc_log *log, const char *path, const cbor_item_t *item,
                const uint8_t **p, size_t *len) {
    static const uint8_t empty[1] = {0};
    *p = empty;
    *len = 0;
    if (!item || !cbor_isa_bytestring(item)) return type_fail(log, path, "bstr", item);
    if (!cbor_bytestring_is_definite(item))
        return hc_schema_fail(log, path, "indefinite-length bstr (not deterministic CBOR)");
    *p = cbor_bytestring_handle(item);
    *len = cbor_bytestring_length(item);
    if (!*p) *p = empty;
    return 0;
}

int hc_get_array(struct hc_log *log, const char *path, const cbor_item_t *item, size_t max,
                 cbor_item_t ***items, size_t *n) {
    if (!item || !cbor_isa_array(item)) return type_fail(log, path, "array", item);
    *n = cbor_array_size(item);
    *items = cbor_array_handle(item);
    if (*n > max) return hc_schema_fail(log, path, "%zu entries, at most %zu allowed", *n, max);
    return 0;
}

int hc_tstr_equals(const cbor_item_t *item, const char *s) {
    if (!item || !cbor_isa_string(item) || !cbor_string_is_definite(item)) return 1;
    size_t len = cbor_string_length(item);
    return !(len == strlen(s) && (len == 0 || memcmp(cbor_string_handle(item), s, len) == 0));
}

static int keys_equal(const cbor_item_t *a, const cbor_item_t *b) {
    size_t la = cbor_string_length(a), lb = cbor_string_length(b);
    return la == lb && (la == 0 || memcmp(cbor_string_handle(a), cbor_string_handle(b), la) == 0);
}

/* Text keys, definite, no duplicates (libcbor keeps duplicates silently). */
int hc_map_check_keys(struct hc_log *log, const char *path, const cbor_item_t *map) {
    if (!map || !cbor_isa_map(map)) return type_fail(log, path, "map", map);
    size_t n = cbor_map_size(map);
    struct cbor_pair *pairs = cbor_map_handle(map);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const cbor_item_t *k = pairs[i].key;
        if (!cbor_isa_string(k) || !cbor_string_is_definite(k)) {
            bad = hc_schema_fail(log, path, "key #%zu is %s, expected a definite tstr", i,
                                 hc_cbor_type_name(k));
            continue;
        }
        for (size_t j = 0; j < i; j++) {
            const cbor_item_t *o = pairs[j].key;
            if (cbor_isa_string(o) && cbor_string_is_definite(o) && keys_equal(k, o)) {
                char kb[HC_PATH_MAX];
                bad = hc_schema_fail(log, path, "duplicate key \"%s\"",
                                     hc_printable(kb, sizeof kb,
                                                  (const char *)cbor_string_handle(k),
                                                  cbor_string_length(k)));
                break;
            }
        }
    }
    return bad;
}

int hc_map_fields(struct hc_log *log, const char *path, const cbor_item_t *map,
                  const struct hc_key *keys, size_t nkeys, const cbor_item_t **found) {
    for (size_t i = 0; i < nkeys; i++) found[i] = NULL;
    if (hc_map_check_keys(log, path, map)) return -1;
    size_t n = cbor_map_size(map);
    struct cbor_pair *pairs = cbor_map_handle(map);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j;
        for (j = 0; j < nkeys; j++)
            if (hc_tstr_equals(pairs[i].key, keys[j].name) == 0) break;
        if (j == nkeys) {
            char kb[HC_PATH_MAX];
            bad = hc_schema_fail(log, path, "unknown key \"%s\"",
                                 hc_printable(kb, sizeof kb,
                                              (const char *)cbor_string_handle(pairs[i].key),
                                              cbor_string_length(pairs[i].key)));
            continue;
        }
        found[j] = pairs[i].value;
    }
    for (size_t j = 0; j < nkeys; j++)
        if ((keys[j].flags & HC_KEY_REQUIRED) && !found[j])
            bad = hc_schema_fail(log, path, "missing required key \"%s\"", keys[j].name);
    return bad;
}

static int get_float_bits(struct hc_log *log, const char *path, const cbor_item_t *item,
                          const char *key, uint64_t max, uint64_t *out) {
    const struct hc_key keys[] = {{key, HC_KEY_REQUIRED}};
    const cbor_item_t *v;
    if (!item || !cbor_isa_map(item)) {
        char want[32];
        snprintf(want, sizeof want, "{\"%s\": bits}", key);
        return type_fail(log, path, want, item);
    }
    if (hc_map_fields(log, path, item, keys, 1, &v)) return -1;
    char sub[HC_PATH_MAX];
    hc_pathf(sub, "%s.%s", path, key);
    if (hc_get_uint(log, sub, v, out)) return -1;
    if (*out > max) return hc_schema_fail(log, sub, "bit pattern 0x%" PRIx64 " too wide", *out);
    return 0;
}

int hc_get_f64bits(struct hc_log *log, const char *path, const cbor_item_t *item, uint64_t *out) {
    return get_float_bits(log, path, item, "f64", UINT64_MAX, out);
}

int hc_get_f32bits(struct hc_log *log, const char *path, const cbor_item_t *item, uint32_t *out) {
    uint64_t v = 0;
    if (get_float_bits(log, path, item, "f32", UINT32_MAX, &v)) return -1;
    *out = (uint32_t)v;
    return 0;
}
