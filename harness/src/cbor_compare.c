/* A testee's decoded value against the manifest's, value by value
 * (docs/conformance/testee-protocol.md § 5): maps as maps (same keys, equal
 * values, any order), arrays element by element, integers by value and
 * sign, strings byte for byte, null/true/false as themselves. Every
 * difference goes to the log with its key path (decoded.layout.nnz,
 * decoded.entries["a b"].list[2]); the manifest side is schema-checked
 * canonical CBOR, the testee side anything well-formed. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define HC_COMPARE_MAX_DEPTH 600u

/* A short description of a value for "expected X, got Y". */
static const char *describe(char *buf, size_t cap, const cbor_item_t *item) {
    switch (cbor_typeof(item)) {
    case CBOR_TYPE_UINT:
        snprintf(buf, cap, "%" PRIu64, (uint64_t)cbor_get_int(item));
        break;
    case CBOR_TYPE_NEGINT:
        if (cbor_get_int(item) < (uint64_t)INT64_MAX)
            snprintf(buf, cap, "%" PRId64, -1 - (int64_t)cbor_get_int(item));
        else
            snprintf(buf, cap, "-1-%" PRIu64, (uint64_t)cbor_get_int(item));
        break;
    case CBOR_TYPE_STRING:
        if (cbor_string_is_definite(item)) {
            char esc[128];
            size_t len = cbor_string_length(item);
            snprintf(buf, cap, "\"%s\"%s",
                     hc_printable(esc, 100, (const char *)cbor_string_handle(item), len > 60 ? 60 : len),
                     len > 60 ? "..." : "");
        } else {
            snprintf(buf, cap, "an indefinite-length tstr");
        }
        break;
    case CBOR_TYPE_BYTESTRING:
        if (cbor_bytestring_is_definite(item))
            snprintf(buf, cap, "a bstr of %zu bytes", cbor_bytestring_length(item));
        else
            snprintf(buf, cap, "an indefinite-length bstr");
        break;
    case CBOR_TYPE_ARRAY: snprintf(buf, cap, "an array of %zu", cbor_array_size(item)); break;
    case CBOR_TYPE_MAP: snprintf(buf, cap, "a map of %zu keys", cbor_map_size(item)); break;
    case CBOR_TYPE_TAG: snprintf(buf, cap, "tag %" PRIu64, (uint64_t)cbor_tag_value(item)); break;
    default: {
        const char *t = hc_cbor_type_name(item);
        if (strcmp(t, "bool") == 0)
            snprintf(buf, cap, "%s", cbor_get_bool(item) ? "true" : "false");
        else
            snprintf(buf, cap, "%s", t);
    }
    }
    return buf;
}

/* Which values can be compared directly: integers of either sign compare as
 * numbers, so uint/negint is one class. */
static int same_class(const cbor_item_t *a, const cbor_item_t *b) {
    int ia = cbor_isa_uint(a) || cbor_isa_negint(a), ib = cbor_isa_uint(b) || cbor_isa_negint(b);
    if (ia || ib) return ia && ib;
    return strcmp(hc_cbor_type_name(a), hc_cbor_type_name(b)) == 0;
}

static void mismatch(struct hc_log *log, const char *path, const cbor_item_t *want,
                     const cbor_item_t *got) {
    char w[160], g[160];
    hc_cmp_field(log, path, 0, describe(w, sizeof w, want), describe(g, sizeof g, got));
}

static int is_ident(const char *s, size_t len) {
    if (!len || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return 0;
    return 1;
}

/* `path.key` for the schema's keys, `path["key"]` for keys that are data (a
 * KV map's keys). */
static const char *key_path(char buf[HC_PATH_MAX], const char *path, const cbor_item_t *key,
                            int data_keys) {
    const char *s = (const char *)cbor_string_handle(key);
    size_t len = cbor_string_length(key);
    char esc[64];
    if (!s) s = "";
    if (!data_keys && is_ident(s, len) && len < 48)
        return hc_pathf(buf, "%s.%.*s", path, (int)len, s);
    hc_printable(esc, sizeof esc, s, len > 40 ? 40 : len);
    return hc_pathf(buf, "%s[\"%s%s\"]", path, esc, len > 40 ? "..." : "");
}

static int text_key(const cbor_item_t *k) {
    return cbor_isa_string(k) && cbor_string_is_definite(k);
}

/* Key order for the merge below: bytewise, then by length. */
static int key_cmp(const cbor_item_t *a, const cbor_item_t *b) {
    size_t la = cbor_string_length(a), lb = cbor_string_length(b), n = la < lb ? la : lb;
    int c = n ? memcmp(cbor_string_handle(a), cbor_string_handle(b), n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return (la > lb) - (la < lb);
}

static int pair_cmp(const void *a, const void *b) {
    return key_cmp((*(const struct cbor_pair *const *)a)->key, (*(const struct cbor_pair *const *)b)->key);
}

/* The pairs of a map sorted by key (a heap array of pointers), or NULL (OOM). */
static struct cbor_pair **sorted_pairs(const cbor_item_t *map) {
    size_t n = cbor_map_size(map);
    struct cbor_pair *pairs = cbor_map_handle(map);
    struct cbor_pair **out = malloc((n ? n : 1) * sizeof *out);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) out[i] = &pairs[i];
    qsort(out, n, sizeof *out, pair_cmp);
    return out;
}

static void compare(struct hc_log *log, const char *path, const cbor_item_t *want,
                    const cbor_item_t *got, unsigned depth, int data_keys);

/* The KV maps of the schema: "entries" of kind kv and "kv" of kind file. */
static int holds_data_keys(const cbor_item_t *key, const cbor_item_t *value) {
    return cbor_isa_map(value) &&
           (hc_tstr_equals(key, "entries") == 0 || hc_tstr_equals(key, "kv") == 0);
}

/* Both maps' pairs sorted by key, then merged: O(n log n) for maps of any size. */
static void compare_map(struct hc_log *log, const char *path, const cbor_item_t *want,
                        const cbor_item_t *got, unsigned depth, int data_keys) {
    size_t nw = cbor_map_size(want), ng = cbor_map_size(got);
    char p[HC_PATH_MAX];
    struct cbor_pair *pg = cbor_map_handle(got);
    for (size_t j = 0; j < ng; j++)
        if (!text_key(pg[j].key)) {
            hc_fail(log, "%s: a key of type %s (keys are text)", path, hc_cbor_type_name(pg[j].key));
            return;
        }
    struct cbor_pair **sw = sorted_pairs(want), **sg = sorted_pairs(got);
    if (!sw || !sg) {
        hc_fail(log, "%s: out of memory", path);
        free(sw);
        free(sg);
        return;
    }
    for (size_t j = 1; j < ng; j++)
        if (key_cmp(sg[j - 1]->key, sg[j]->key) == 0) {
            hc_fail(log, "%s: key twice", key_path(p, path, sg[j]->key, data_keys));
            free(sw);
            free(sg);
            return;
        }
    size_t i = 0, j = 0;
    while (i < nw || j < ng) {
        int c = i == nw ? 1 : j == ng ? -1 : key_cmp(sw[i]->key, sg[j]->key);
        if (c < 0) {
            hc_fail(log, "%s: missing", key_path(p, path, sw[i]->key, data_keys));
            i++;
        } else if (c > 0) {
            hc_fail(log, "%s: unexpected key", key_path(p, path, sg[j]->key, data_keys));
            j++;
        } else {
            key_path(p, path, sw[i]->key, data_keys);
            compare(log, p, sw[i]->value, sg[j]->value, depth + 1,
                    !data_keys && holds_data_keys(sw[i]->key, sw[i]->value));
            i++;
            j++;
        }
    }
    free(sw);
    free(sg);
}

static void compare(struct hc_log *log, const char *path, const cbor_item_t *want,
                    const cbor_item_t *got, unsigned depth, int data_keys) {
    char p[HC_PATH_MAX];
    if (!got) {
        hc_fail(log, "%s: missing", path);
        return;
    }
    if (depth > HC_COMPARE_MAX_DEPTH) {
        hc_fail(log, "%s: nested deeper than %u", path, HC_COMPARE_MAX_DEPTH);
        return;
    }
    if (!same_class(want, got)) {
        mismatch(log, path, want, got);
        return;
    }
    switch (cbor_typeof(want)) {
    case CBOR_TYPE_UINT:
    case CBOR_TYPE_NEGINT: {
        int same = cbor_typeof(want) == cbor_typeof(got) && cbor_get_int(want) == cbor_get_int(got);
        char w[48], g[48];
        hc_cmp_field(log, path, same, describe(w, sizeof w, want), describe(g, sizeof g, got));
        break;
    }
    case CBOR_TYPE_STRING:
        if (!cbor_string_is_definite(got) || !cbor_string_is_definite(want)) {
            mismatch(log, path, want, got);
            break;
        }
        hc_cmp_text(log, path, (const char *)cbor_string_handle(want), cbor_string_length(want),
                    (const char *)cbor_string_handle(got), cbor_string_length(got));
        break;
    case CBOR_TYPE_BYTESTRING: {
        static const uint8_t none[1] = {0};
        if (!cbor_bytestring_is_definite(got) || !cbor_bytestring_is_definite(want)) {
            mismatch(log, path, want, got);
            break;
        }
        const uint8_t *w = cbor_bytestring_handle(want), *g = cbor_bytestring_handle(got);
        hc_cmp_bytes(log, path, w ? w : none, cbor_bytestring_length(want), g ? g : none,
                     cbor_bytestring_length(got));
        break;
    }
    case CBOR_TYPE_ARRAY: {
        size_t nw = cbor_array_size(want), ng = cbor_array_size(got);
        hc_cmp_u64(log, hc_pathf(p, "%s (length)", path), nw, ng);
        cbor_item_t **iw = cbor_array_handle(want), **ig = cbor_array_handle(got);
        for (size_t i = 0; i < nw && i < ng; i++)
            compare(log, hc_pathf(p, "%s[%zu]", path, i), iw[i], ig[i], depth + 1, 0);
        break;
    }
    case CBOR_TYPE_MAP:
        compare_map(log, path, want, got, depth, data_keys);
        break;
    case CBOR_TYPE_TAG:
        if (cbor_tag_value(want) != cbor_tag_value(got)) {
            mismatch(log, path, want, got);
            break;
        }
        {
            cbor_item_t *a = cbor_tag_item(want), *b = cbor_tag_item(got);
            compare(log, path, a, b, depth + 1, 0);
            cbor_decref(&a);
            cbor_decref(&b);
        }
        break;
    default: {
        /* null, bool, simple, float: equal iff the same kind and value */
        char w[160], g[160];
        describe(w, sizeof w, want);
        describe(g, sizeof g, got);
        int same = strcmp(w, g) == 0;
        if (same && cbor_float_get_width(want) != CBOR_FLOAT_0)
            same = cbor_float_get_width(want) == cbor_float_get_width(got) &&
                   cbor_float_get_float(want) == cbor_float_get_float(got);
        hc_cmp_field(log, path, same, w, g);
    }
    }
}

void hc_cbor_compare(struct hc_log *log, const char *path, const cbor_item_t *want,
                     const cbor_item_t *got) {
    if (!want) {
        hc_fail(log, "%s: the manifest has no value to compare with", path);
        return;
    }
    compare(log, path, want, got, 0, 0);
}
