/* Loading vectors/manifest.cbor and checking its top level.
 *
 * Fatal (the vectors cannot be run): the file is unreadable or larger than
 * HC_MANIFEST_MAX_BYTES, is not one well-formed CBOR item, is not a map, or
 * names another format, schema version or no vector list. Everything else
 * (count, unique and sorted ids, unique tcids, the error-code registry
 * against libhurray's table, the default limits against libhurray's) is a
 * manifest failure: reported, counted as failed, and the vectors still run. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int hc_read_file(const char *path, size_t max, uint8_t **data, size_t *len, char *msg,
                 size_t msgcap) {
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(msg, msgcap, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 64 * 1024, n = 0;
    uint8_t *buf = malloc(cap);
    int rc = -1;
    if (!buf) {
        snprintf(msg, msgcap, "out of memory reading %s", path);
        goto done;
    }
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                snprintf(msg, msgcap, "%s is larger than %zu bytes", path, max);
                goto done;
            }
            size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            uint8_t *p = realloc(buf, ncap);
            if (!p) {
                snprintf(msg, msgcap, "out of memory reading %s", path);
                goto done;
            }
            buf = p;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        snprintf(msg, msgcap, "error reading %s: %s", path, strerror(errno));
        goto done;
    }
    if (n > max) {
        snprintf(msg, msgcap, "%s is larger than %zu bytes", path, max);
        goto done;
    }
    *data = buf;
    *len = n;
    buf = NULL;
    rc = 0;
done:
    free(buf);
    fclose(f);
    return rc;
}

void hc_manifest_free(struct hc_manifest *m) {
    if (m->root) cbor_decref(&m->root);
    free(m->bytes);
    memset(m, 0, sizeof *m);
}

/* Reports every failure a log collected as one manifest failure line each
 * (the log keeps the first message and the count). */
static void flush_log(struct hc_report *r, struct hc_log *log) {
    if (log->failures == 1) hc_report_manifest_failure(r, "%s", log->first);
    else if (log->failures > 1)
        hc_report_manifest_failure(r, "%s (+%u more schema errors)", log->first, log->failures - 1);
    hc_log_init(log, NULL);
}

static const char *load_error_name(cbor_error_code code) {
    switch (code) {
    case CBOR_ERR_NONE: return "none";
    case CBOR_ERR_NOTENOUGHDATA: return "truncated CBOR";
    case CBOR_ERR_NODATA: return "empty file";
    case CBOR_ERR_MALFORMATED: return "malformed CBOR";
    case CBOR_ERR_MEMERROR: return "out of memory (or nesting too deep)";
    case CBOR_ERR_SYNTAXERROR: return "CBOR syntax error (e.g. invalid UTF-8 in a tstr)";
    }
    return "unknown libcbor error";
}

enum {
    TK_FORMAT, TK_SCHEMA_VERSION, TK_CORPUS_VERSION, TK_SPEC_VERSION, TK_GENERATOR,
    TK_ERROR_CODES, TK_DEFAULT_LIMITS, TK_COUNT_KEY, TK_VECTORS, TK_COUNT
};

static const struct hc_key top_keys[TK_COUNT] = {
    [TK_FORMAT] = {"format", HC_KEY_REQUIRED},
    [TK_SCHEMA_VERSION] = {"schema_version", HC_KEY_REQUIRED},
    [TK_CORPUS_VERSION] = {"corpus_version", HC_KEY_REQUIRED},
    [TK_SPEC_VERSION] = {"spec_version", HC_KEY_REQUIRED},
    [TK_GENERATOR] = {"generator", HC_KEY_REQUIRED},
    [TK_ERROR_CODES] = {"error_codes", HC_KEY_REQUIRED},
    [TK_DEFAULT_LIMITS] = {"default_limits", HC_KEY_REQUIRED},
    [TK_COUNT_KEY] = {"count", HC_KEY_REQUIRED},
    [TK_VECTORS] = {"vectors", HC_KEY_REQUIRED},
};

/* error_codes: {NAME: value}, against libhurray's pinned table (HR-ERR-1). */
static void check_error_codes(struct hc_report *r, const cbor_item_t *map) {
    struct hc_log log;
    hc_log_init(&log, NULL);
    if (hc_map_check_keys(&log, "error_codes", map)) {
        flush_log(r, &log);
        return;
    }
    size_t n = cbor_map_size(map);
    struct cbor_pair *pairs = cbor_map_handle(map);
    unsigned seen[HURRAY_STATUS_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        char name[HC_NAME_MAX], p[HC_PATH_MAX];
        const char *k = (const char *)cbor_string_handle(pairs[i].key);
        size_t klen = cbor_string_length(pairs[i].key);
        hc_printable(name, sizeof name, k ? k : "", klen);
        uint64_t value;
        if (hc_get_uint(&log, hc_pathf(p, "error_codes.%s", name), pairs[i].value, &value)) {
            flush_log(r, &log);
            continue;
        }
        int lib = hc_status_value(k ? k : "", klen);
        if (lib < 0) {
            hc_report_manifest_failure(r, "error_codes.%s: status unknown to libhurray", name);
        } else if ((uint64_t)lib != value) {
            hc_report_manifest_failure(r, "error_codes.%s: manifest value %" PRIu64 ", libhurray %d",
                                       name, value, lib);
        } else {
            seen[lib] = 1;
        }
    }
    for (int s = 1; s < HURRAY_STATUS_COUNT; s++)
        if (!seen[s])
            hc_report_manifest_failure(r, "error_codes: libhurray status %s (%d) missing",
                                       hurray_status_name(s), s);
}

/* default_limits: every limit, equal to libhurray's defaults (HR-LIMIT-1). */
static void check_default_limits(struct hc_report *r, const cbor_item_t *map) {
    struct hc_log log;
    hc_log_init(&log, NULL);
    if (hc_map_check_keys(&log, "default_limits", map)) {
        flush_log(r, &log);
        return;
    }
    struct hurray_limits lib, seen;
    hurray_limits_default(&lib);
    memset(&seen, 0, sizeof seen);
    size_t n = cbor_map_size(map);
    struct cbor_pair *pairs = cbor_map_handle(map);
    for (size_t i = 0; i < n; i++) {
        char name[HC_NAME_MAX], p[HC_PATH_MAX];
        const char *k = (const char *)cbor_string_handle(pairs[i].key);
        size_t klen = cbor_string_length(pairs[i].key);
        if (!k) k = "";
        hc_printable(name, sizeof name, k, klen);
        uint64_t value;
        if (hc_get_uint(&log, hc_pathf(p, "default_limits.%s", name), pairs[i].value, &value)) {
            flush_log(r, &log);
            continue;
        }
        if (hc_limit_set(&seen, k, klen, 1)) {
            hc_report_manifest_failure(r, "default_limits.%s: unknown limit", name);
            continue;
        }
        for (size_t j = 0; j < hc_limit_count(); j++) {
            const char *lname;
            uint64_t have;
            if (hc_limit_get(&lib, j, &lname, &have) == 0 && strlen(lname) == klen &&
                memcmp(lname, k, klen) == 0 && have != value)
                hc_report_manifest_failure(r, "default_limits.%s: manifest %" PRIu64
                                           ", libhurray's default is %" PRIu64, name, value, have);
        }
    }
    for (size_t i = 0; i < hc_limit_count(); i++) {
        const char *name;
        uint64_t v;
        if (hc_limit_get(&seen, i, &name, &v) == 0 && v == 0)
            hc_report_manifest_failure(r, "default_limits: missing \"%s\"", name);
    }
}

/* Metadata keys: types only. */
static void check_metadata(struct hc_report *r, const cbor_item_t **f) {
    struct hc_log log;
    hc_log_init(&log, NULL);
    const char *s;
    size_t len;
    if (f[TK_CORPUS_VERSION]) hc_get_tstr(&log, "corpus_version", f[TK_CORPUS_VERSION], &s, &len);
    flush_log(r, &log);
    if (f[TK_SPEC_VERSION]) {
        cbor_item_t **items;
        size_t n;
        if (!hc_get_array(&log, "spec_version", f[TK_SPEC_VERSION], SIZE_MAX, &items, &n))
            for (size_t i = 0; i < n; i++) {
                char p[HC_PATH_MAX];
                hc_get_tstr(&log, hc_pathf(p, "spec_version[%zu]", i), items[i], &s, &len);
            }
        flush_log(r, &log);
    }
    if (f[TK_GENERATOR] && hc_map_check_keys(&log, "generator", f[TK_GENERATOR]))
        flush_log(r, &log);
    if (f[TK_ERROR_CODES]) check_error_codes(r, f[TK_ERROR_CODES]);
    if (f[TK_DEFAULT_LIMITS]) check_default_limits(r, f[TK_DEFAULT_LIMITS]);
}

/* ----------------------------------------------------------- identity --- */

struct id_ref {
    const char *s;
    size_t len;
    size_t index;
};

static int id_cmp(const struct id_ref *a, const struct id_ref *b) {
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->s, b->s, n) : 0;
    if (c) return c;
    return (a->len > b->len) - (a->len < b->len);
}

static int id_qsort_cmp(const void *a, const void *b) {
    int c = id_cmp(a, b);
    if (c) return c;
    const struct id_ref *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

static int u64_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static const cbor_item_t *map_get(const cbor_item_t *map, const char *key) {
    if (!map || !cbor_isa_map(map)) return NULL;
    size_t n = cbor_map_size(map);
    struct cbor_pair *pairs = cbor_map_handle(map);
    for (size_t i = 0; i < n; i++)
        if (hc_tstr_equals(pairs[i].key, key) == 0) return pairs[i].value;
    return NULL;
}

/* Ids unique and sorted; tcids unique. Vectors whose id or tcid is
 * malformed are skipped here (their own schema check fails them). */
static void check_identity(struct hc_report *r, cbor_item_t **vectors, size_t n) {
    struct id_ref *ids = calloc(n ? n : 1, sizeof *ids);
    uint64_t *tcids = calloc(n ? n : 1, sizeof *tcids);
    size_t nid = 0, ntc = 0;
    if (!ids || !tcids) {
        hc_report_manifest_failure(r, "out of memory checking ids");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const cbor_item_t *id = map_get(vectors[i], "id");
        const cbor_item_t *tcid = map_get(vectors[i], "tcid");
        if (id && cbor_isa_string(id) && cbor_string_is_definite(id)) {
            ids[nid].s = (const char *)cbor_string_handle(id);
            ids[nid].len = cbor_string_length(id);
            ids[nid].index = i;
            if (nid > 0 && id_cmp(&ids[nid - 1], &ids[nid]) > 0) {
                char a[HC_ID_MAX];
                hc_report_manifest_failure(r, "vectors not sorted by id at vectors[%zu] (\"%s\")", i,
                                           hc_printable(a, sizeof a, ids[nid].s, ids[nid].len));
            }
            nid++;
        }
        if (tcid && cbor_isa_uint(tcid)) tcids[ntc++] = cbor_get_int(tcid);
    }
    qsort(ids, nid, sizeof *ids, id_qsort_cmp);
    for (size_t i = 1; i < nid; i++)
        if (id_cmp(&ids[i - 1], &ids[i]) == 0) {
            char a[HC_ID_MAX];
            hc_report_manifest_failure(r, "duplicate id \"%s\" (vectors[%zu] and vectors[%zu])",
                                       hc_printable(a, sizeof a, ids[i].s, ids[i].len),
                                       ids[i - 1].index, ids[i].index);
        }
    qsort(tcids, ntc, sizeof *tcids, u64_cmp);
    for (size_t i = 1; i < ntc; i++)
        if (tcids[i] == tcids[i - 1])
            hc_report_manifest_failure(r, "duplicate tcid %" PRIu64, tcids[i]);
done:
    free(ids);
    free(tcids);
}

/* --------------------------------------------------------------- load --- */

static int fatal(struct hc_report *r, FILE *err, const char *msg) {
    fprintf(err, "hurray-conformance: %s\n", msg);
    hc_report_manifest_failure(r, "%s", msg);
    return -1;
}

static int decode_root(struct hc_manifest *m, const char *path, struct hc_report *r, FILE *err) {
    char msg[HC_MSG_MAX];
    if (hc_read_file(path, HC_MANIFEST_MAX_BYTES, &m->bytes, &m->size, msg, sizeof msg))
        return fatal(r, err, msg);
    struct cbor_load_result res;
    memset(&res, 0, sizeof res);
    if (m->size == 0) {
        snprintf(msg, sizeof msg, "%s: empty file", path);
        return fatal(r, err, msg);
    }
    m->root = cbor_load(m->bytes, m->size, &res);
    if (!m->root || res.error.code != CBOR_ERR_NONE) {
        snprintf(msg, sizeof msg, "%s: %s at byte %zu", path, load_error_name(res.error.code),
                 res.error.position);
        return fatal(r, err, msg);
    }
    if (res.read != m->size) {
        snprintf(msg, sizeof msg, "%s: %zu trailing bytes after the manifest item", path,
                 m->size - res.read);
        return fatal(r, err, msg);
    }
    return 0;
}

int hc_manifest_load(struct hc_manifest *m, const char *dir, struct hc_report *r, FILE *err) {
    memset(m, 0, sizeof *m);
    size_t plen = strlen(dir) + sizeof "/manifest.cbor";
    char *path = malloc(plen);
    if (!path) return fatal(r, err, "out of memory");
    snprintf(path, plen, "%s/manifest.cbor", dir);
    int rc = decode_root(m, path, r, err);
    free(path);
    if (rc) return -1;

    struct hc_log log;
    const cbor_item_t *f[TK_COUNT];
    hc_log_init(&log, NULL);
    if (!cbor_isa_map(m->root)) return fatal(r, err, "manifest: top level is not a map");
    if (hc_map_fields(&log, "manifest", m->root, top_keys, TK_COUNT, f)) flush_log(r, &log);
    if (hc_tstr_equals(f[TK_FORMAT], "hurray-conformance") != 0)
        return fatal(r, err, "manifest: \"format\" is not \"hurray-conformance\"");
    if (!f[TK_SCHEMA_VERSION] || !cbor_isa_uint(f[TK_SCHEMA_VERSION]) ||
        cbor_get_int(f[TK_SCHEMA_VERSION]) < HC_SCHEMA_MIN ||
        cbor_get_int(f[TK_SCHEMA_VERSION]) > HC_SCHEMA_MAX) {
        char msg[128];
        snprintf(msg, sizeof msg,
                 "manifest: \"schema_version\" is not %u..%u (this harness reads schemas %u to %u)",
                 HC_SCHEMA_MIN, HC_SCHEMA_MAX, HC_SCHEMA_MIN, HC_SCHEMA_MAX);
        return fatal(r, err, msg);
    }
    m->schema_version = (unsigned)cbor_get_int(f[TK_SCHEMA_VERSION]);
    cbor_item_t **items;
    size_t n;
    if (!f[TK_VECTORS] || hc_get_array(&log, "vectors", f[TK_VECTORS], SIZE_MAX, &items, &n)) {
        hc_log_init(&log, NULL);
        return fatal(r, err, "manifest: \"vectors\" is missing or not an array");
    }
    m->vectors = items;
    m->nvectors = n;
    uint64_t count;
    if (f[TK_COUNT_KEY] && !hc_get_uint(&log, "count", f[TK_COUNT_KEY], &count)) {
        if (count != n)
            hc_report_manifest_failure(r, "count is %" PRIu64 " but the vector list has %zu entries",
                                       count, n);
    }
    flush_log(r, &log);
    check_metadata(r, f);
    check_identity(r, items, n);
    return 0;
}
