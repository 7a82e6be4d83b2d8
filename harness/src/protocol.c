/* One vector through a testee (docs/conformance/testee-protocol.md): the
 * decode request, the judgement of its answer, and the sweep requests.
 *
 *   decode:  status against the manifest (invalid: exactly "error";
 *            implementation-defined: one of "i_outcomes"); for a valid
 *            vector "decoded" against the manifest's "decoded", value by
 *            value (hc_cbor_compare), and "encoded" against the file (or its
 *            first encoded_len bytes, or the file with version_minor zero);
 *            streams also "items", "again" and "end" (the end state);
 *   sweep:   the prefixes the built-in run tries (hc_*_sweep_plan), in
 *            batches of HC_SWEEP_BATCH; every prefix judged here (streams:
 *            items and end state, hc_stream_prefix_end).
 *
 * testee.c owns the process and the frames; this file never blocks. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cborw.h"
#include "harness.h"

#define HC_SWEEP_BATCH 4096u

/* -------------------------------------------------------------- requests --- */

static void put_limits(struct hc_buf *b, const struct hurray_limits *lim) {
    size_t n = hc_limit_count();
    hc_cbor_tstr(b, "limits");
    hc_cbor_map(b, n);
    for (size_t i = 0; i < n; i++) {
        const char *name;
        uint64_t value;
        if (hc_limit_get(lim, i, &name, &value)) continue;
        hc_cbor_tstr(b, name);
        hc_cbor_uint(b, value);
    }
}

/* The keys every per-vector request has; `extra` more follow. */
static void put_common(struct hc_buf *b, const char *op, const struct hc_vector *v,
                       const uint8_t *input, size_t input_len, size_t extra) {
    int stream = v->kind == HC_KIND_STREAM;
    hc_cbor_map(b, 5 + 2 * (size_t)stream + extra);
    hc_cbor_tstr(b, "op");
    hc_cbor_tstr(b, op);
    hc_cbor_tstr(b, "id");
    hc_cbor_tstr(b, v->id);
    hc_cbor_tstr(b, "kind");
    hc_cbor_tstr(b, hc_kind_name(v->kind));
    hc_cbor_tstr(b, "input");
    hc_cbor_bstr(b, input, input_len);
    put_limits(b, &v->limits);
    if (stream) {
        hc_cbor_tstr(b, "cross_machine");
        hc_cbor_bool(b, v->cross_machine);
        hc_cbor_tstr(b, "require_end_frame");
        hc_cbor_bool(b, v->require_end_frame);
    }
}

int hc_protocol_hello(const cbor_item_t *manifest_root, struct hc_buf *b) {
    const cbor_item_t *spec = NULL, *corpus = NULL;
    if (manifest_root && cbor_isa_map(manifest_root)) {
        size_t n = cbor_map_size(manifest_root);
        struct cbor_pair *pairs = cbor_map_handle(manifest_root);
        for (size_t i = 0; i < n; i++) {
            if (hc_tstr_equals(pairs[i].key, "spec_version") == 0) spec = pairs[i].value;
            if (hc_tstr_equals(pairs[i].key, "corpus_version") == 0) corpus = pairs[i].value;
        }
    }
    hc_cbor_map(b, 5);
    hc_cbor_tstr(b, "op");
    hc_cbor_tstr(b, "hello");
    hc_cbor_tstr(b, "protocol");
    hc_cbor_uint(b, HC_PROTOCOL_VERSION);
    hc_cbor_tstr(b, "runner");
    hc_cbor_tstr(b, "hurray-conformance");
    hc_cbor_tstr(b, "format");
    size_t ns = spec && cbor_isa_array(spec) ? cbor_array_size(spec) : 0;
    cbor_item_t **items = ns ? cbor_array_handle(spec) : NULL;
    size_t nt = 0;
    for (size_t i = 0; i < ns; i++)
        nt += cbor_isa_string(items[i]) && cbor_string_is_definite(items[i]);
    hc_cbor_array(b, nt);
    for (size_t i = 0; i < ns; i++)
        if (cbor_isa_string(items[i]) && cbor_string_is_definite(items[i]))
            hc_cbor_tstrn(b, (const char *)cbor_string_handle(items[i]),
                          cbor_string_length(items[i]));
    hc_cbor_tstr(b, "corpus");
    if (corpus && cbor_isa_string(corpus) && cbor_string_is_definite(corpus))
        hc_cbor_tstrn(b, (const char *)cbor_string_handle(corpus), cbor_string_length(corpus));
    else
        hc_cbor_tstr(b, "");
    return b->oom ? -1 : 0;
}

/* ------------------------------------------------------------- answers --- */

/* A status name of the answer: 0 for "OK", the status value, or -1. */
static int status_of(const char *s, size_t len) {
    if (len == 2 && memcmp(s, "OK", 2) == 0) return HURRAY_OK;
    int v = hc_status_value(s, len);
    return v > 0 ? v : -1;
}

struct answer {
    int status;
    const cbor_item_t *decoded;
    const uint8_t *encoded;
    size_t encoded_len;
    int has_encoded;
    uint64_t items;
    int again;
    int end; /* stream: a hurray_stream_end */
    char message[HURRAY_ERROR_MESSAGE_MAX];
};

static int proto_fail(struct hc_log *log, const char *fmt, ...) HC_PRINTF(2, 3);
static int proto_fail(struct hc_log *log, const char *fmt, ...) {
    char msg[HC_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hc_fail(log, "protocol: %s", msg);
    return -1;
}

/* A status-name value at `key`. */
static int get_status(struct hc_log *log, const char *key, const cbor_item_t *item, int *out) {
    if (!item || !cbor_isa_string(item) || !cbor_string_is_definite(item))
        return proto_fail(log, "response.%s: expected a status name (tstr), got %s", key,
                          hc_cbor_type_name(item));
    const char *s = (const char *)cbor_string_handle(item);
    size_t len = cbor_string_length(item);
    *out = status_of(s ? s : "", len);
    if (*out < 0) {
        char esc[HC_NAME_MAX * 2];
        hc_printable(esc, sizeof esc, s ? s : "", len > 60 ? 60 : len);
        return proto_fail(log, "response.%s: \"%s\" is not \"OK\" or a status name of the "
                          "manifest's error_codes", key, esc);
    }
    return 0;
}

/* An end-state value at `key`: "end_frame", "eof" or null (not ended). */
static int get_end(struct hc_log *log, const char *key, const cbor_item_t *item, int *out) {
    if (item && cbor_is_null(item)) {
        *out = HURRAY_STREAM_NOT_ENDED;
        return 0;
    }
    if (item && hc_tstr_equals(item, "end_frame") == 0) {
        *out = HURRAY_STREAM_END_FRAME;
        return 0;
    }
    if (item && hc_tstr_equals(item, "eof") == 0) {
        *out = HURRAY_STREAM_END_EOF;
        return 0;
    }
    return proto_fail(log, "response.%s: expected \"end_frame\", \"eof\" or null, got %s", key,
                      hc_cbor_type_name(item));
}

/* Parses a decode answer. Returns 1 when the testee skipped the vector, 0
 * when `a` is usable, -1 after a protocol failure. */
static int parse_answer(struct hc_log *log, const struct hc_vector *v, const cbor_item_t *resp,
                        struct answer *a) {
    enum { K_STATUS, K_DECODED, K_ENCODED, K_ITEMS, K_AGAIN, K_END, K_MESSAGE, K_SKIP, K_COUNT };
    static const char *const names[K_COUNT] = {"status", "decoded", "encoded", "items",
                                               "again",  "end",     "message", "skip"};
    const cbor_item_t *f[K_COUNT] = {0};
    memset(a, 0, sizeof *a);
    size_t n = cbor_map_size(resp);
    struct cbor_pair *pairs = cbor_map_handle(resp);
    for (size_t i = 0; i < n; i++) {
        const cbor_item_t *k = pairs[i].key;
        int j;
        for (j = 0; j < K_COUNT; j++)
            if (hc_tstr_equals(k, names[j]) == 0) break;
        if (j == K_COUNT) {
            char esc[HC_PATH_MAX] = "";
            if (cbor_isa_string(k) && cbor_string_is_definite(k))
                hc_printable(esc, sizeof esc, (const char *)cbor_string_handle(k),
                             cbor_string_length(k) > 60 ? 60 : cbor_string_length(k));
            if (cbor_isa_string(k)) return proto_fail(log, "response: unknown key \"%s\"", esc);
            return proto_fail(log, "response: a key of type %s", hc_cbor_type_name(k));
        }
        if (f[j]) return proto_fail(log, "response: key \"%s\" twice", names[j]);
        f[j] = pairs[i].value;
    }
    if (f[K_MESSAGE] && cbor_isa_string(f[K_MESSAGE]) && cbor_string_is_definite(f[K_MESSAGE]))
        hc_printable(a->message, sizeof a->message, (const char *)cbor_string_handle(f[K_MESSAGE]),
                     cbor_string_length(f[K_MESSAGE]) > 200 ? 200 : cbor_string_length(f[K_MESSAGE]));
    if (f[K_SKIP]) {
        char reason[256] = "";
        if (cbor_isa_string(f[K_SKIP]) && cbor_string_is_definite(f[K_SKIP]))
            hc_printable(reason, sizeof reason, (const char *)cbor_string_handle(f[K_SKIP]),
                         cbor_string_length(f[K_SKIP]) > 200 ? 200 : cbor_string_length(f[K_SKIP]));
        hc_fail(log, "skipped by the testee: %s", reason);
        return 1;
    }
    if (!f[K_STATUS]) return proto_fail(log, "response: missing key \"status\"");
    if (get_status(log, "status", f[K_STATUS], &a->status)) return -1;
    int ok = a->status == HURRAY_OK, stream = v->kind == HC_KIND_STREAM;
    /* (an accepted invalid vector fails as such, decoded values or not) */
    if (ok && v->expect == HC_EXPECT_VALID && (!f[K_DECODED] || !f[K_ENCODED]))
        return proto_fail(log, "response: status OK without \"%s\"",
                          !f[K_DECODED] ? "decoded" : "encoded");
    if (!ok && (f[K_DECODED] || f[K_ENCODED]))
        return proto_fail(log, "response: \"%s\" with a failure status",
                          f[K_DECODED] ? "decoded" : "encoded");
    if (stream && (!f[K_ITEMS] || !f[K_AGAIN] || !f[K_END]))
        return proto_fail(log, "response: a stream answer without \"%s\"",
                          !f[K_ITEMS] ? "items" : !f[K_AGAIN] ? "again" : "end");
    if (!stream && (f[K_ITEMS] || f[K_AGAIN] || f[K_END]))
        return proto_fail(log, "response: \"%s\" belongs to stream answers only",
                          f[K_ITEMS] ? "items" : f[K_AGAIN] ? "again" : "end");
    a->decoded = f[K_DECODED];
    if (f[K_ENCODED]) {
        if (!cbor_isa_bytestring(f[K_ENCODED]) || !cbor_bytestring_is_definite(f[K_ENCODED]))
            return proto_fail(log, "response.encoded: expected a definite bstr, got %s",
                              hc_cbor_type_name(f[K_ENCODED]));
        a->encoded = cbor_bytestring_handle(f[K_ENCODED]);
        a->encoded_len = cbor_bytestring_length(f[K_ENCODED]);
        a->has_encoded = 1;
    }
    if (f[K_ITEMS]) {
        if (!cbor_isa_uint(f[K_ITEMS]))
            return proto_fail(log, "response.items: expected uint, got %s",
                              hc_cbor_type_name(f[K_ITEMS]));
        a->items = cbor_get_int(f[K_ITEMS]);
    }
    if (f[K_AGAIN] && get_status(log, "again", f[K_AGAIN], &a->again)) return -1;
    if (f[K_END] && get_end(log, "end", f[K_END], &a->end)) return -1;
    if (f[K_MESSAGE] && (!cbor_isa_string(f[K_MESSAGE]) || !cbor_string_is_definite(f[K_MESSAGE])))
        return proto_fail(log, "response.message: expected tstr, got %s",
                          hc_cbor_type_name(f[K_MESSAGE]));
    return 0;
}

static const char *end_str(int st) { return st == HURRAY_OK ? "the clean end" : hc_status_str(st); }

/* The re-encoding a valid vector's answer must carry. */
static void check_encoded(struct hc_log *log, const struct hc_vector *v, const uint8_t *data,
                          const struct answer *a) {
    size_t size = (size_t)v->size;
    if (v->kind == HC_KIND_DESCRIPTOR) {
        size_t elen = v->desc && v->desc->encoded_len <= v->size ? (size_t)v->desc->encoded_len : size;
        if (v->roundtrip)
            hc_cmp_bytes(log, "roundtrip: encoded bytes", data, elen, a->encoded, a->encoded_len);
        return;
    }
    if (v->kind == HC_KIND_FILE) {
        uint8_t *want = hc_file_expected_encoding(v, data);
        if (!want) {
            hc_fail(log, "roundtrip: out of memory");
            return;
        }
        hc_cmp_bytes(log, v->roundtrip ? "roundtrip: encoded bytes"
                                       : "re-encoding (version_minor written as 0)",
                     want, size, a->encoded, a->encoded_len);
        free(want);
        return;
    }
    if (v->roundtrip && v->kind == HC_KIND_STREAM && v->stream)
        /* up to and including the end frame: bytes after it are not the stream's */
        hc_cmp_bytes(log, "roundtrip: re-written stream", data, (size_t)hc_stream_stop(v),
                     a->encoded, a->encoded_len);
    else if (v->roundtrip && v->kind != HC_KIND_STREAM)
        hc_cmp_bytes(log, "roundtrip: encoded bytes", data, size, a->encoded, a->encoded_len);
}

/* A stream's decoded map as the manifest has it: a manifest of schema < 4
 * has no "end" (every stream there ends at its end of input), so the
 * testee's "end" is checked here and left out of the comparison. Returns a
 * new reference, or NULL to compare `got` as it is. */
static cbor_item_t *stream_decoded_for(struct hc_log *log, const struct hc_vector *v,
                                       const cbor_item_t *got) {
    if (v->schema_version >= 4 || !got || !cbor_isa_map(got)) return NULL;
    size_t n = cbor_map_size(got);
    struct cbor_pair *pairs = cbor_map_handle(got);
    const cbor_item_t *end = NULL;
    for (size_t i = 0; i < n; i++)
        if (hc_tstr_equals(pairs[i].key, "end") == 0) end = pairs[i].value;
    if (!end) {
        hc_fail(log, "decoded: missing key \"end\" (testee protocol 2)");
        return NULL;
    }
    if (hc_tstr_equals(end, "eof") != 0)
        hc_fail(log, "decoded.end: expected \"eof\" (a stream of schema %u), got %s",
                v->schema_version, hc_tstr_equals(end, "end_frame") == 0 ? "\"end_frame\""
                                                                       : hc_cbor_type_name(end));
    cbor_item_t *copy = cbor_new_definite_map(n);
    if (!copy) return NULL;
    for (size_t i = 0; i < n; i++)
        if (hc_tstr_equals(pairs[i].key, "end") != 0 && !cbor_map_add(copy, pairs[i])) {
            cbor_decref(&copy);
            return NULL;
        }
    return copy;
}

static void judge(struct hc_log *log, const struct hc_vector *v, const uint8_t *data,
                  const struct answer *a, struct hc_result *res) {
    int stream = v->kind == HC_KIND_STREAM;
    if (v->expect == HC_EXPECT_VALID) {
        if (a->status != HURRAY_OK) {
            hc_fail(log, "expected a valid %s, the testee says %s%s%s%s", hc_kind_name(v->kind),
                    hc_status_str(a->status), a->message[0] ? " (" : "", a->message,
                    a->message[0] ? ")" : "");
            return;
        }
        cbor_item_t *got = stream ? stream_decoded_for(log, v, a->decoded) : NULL;
        hc_cbor_compare(log, "decoded", v->decoded_item, got ? got : a->decoded);
        if (got) cbor_decref(&got);
        check_encoded(log, v, data, a);
        if (stream) {
            hc_cmp_u64(log, "decoded.items (items yielded)", v->stream ? v->stream->item_count : 0,
                       a->items);
            if (a->again != HURRAY_OK)
                hc_fail(log, "a further read after the clean end gives %s", end_str(a->again));
            if (v->stream && a->end != v->stream->end)
                hc_fail(log, "end: after a further read the end state is %s, expected %s",
                        hc_stream_end_name(a->end), hc_stream_end_name(v->stream->end));
        }
        return;
    }
    struct hurray_error err;
    hurray_error_clear(&err);
    snprintf(err.message, sizeof err.message, "%s", a->message[0] ? a->message : "no message");
    snprintf(err.field, sizeof err.field, "testee");
    hc_check_failure_status(log, v, a->status, &err, res);
    if (v->expect == HC_EXPECT_INVALID && stream) {
        hc_cmp_u64(log, "error_after_items", v->error_after_items, a->items);
        if (a->again != a->status)
            hc_fail(log, "a further read after %s gives %s", end_str(a->status), end_str(a->again));
    }
    /* a failure has no end state; the end has one (HR-STREAM-13) */
    if (stream && (a->status != HURRAY_OK) != (a->end == HURRAY_STREAM_NOT_ENDED))
        hc_fail(log, "end: the testee %s and reports the end state %s",
                a->status == HURRAY_OK ? "reaches the end" : "fails", hc_stream_end_name(a->end));
}

/* --------------------------------------------------------------- sweep --- */

static size_t *sweep_plan(const struct hc_vector *v, const uint8_t *data, size_t *n, int *sampled) {
    *n = 0;
    *sampled = 0;
    switch (v->kind) {
    case HC_KIND_DESCRIPTOR: {
        size_t elen = v->desc->encoded_len <= v->size ? (size_t)v->desc->encoded_len : (size_t)v->size;
        return hc_sweep_plan(elen, SIZE_MAX, NULL, 0, n, sampled);
    }
    case HC_KIND_KV: return hc_kv_sweep_plan(v, n, sampled);
    case HC_KIND_FILE: return hc_file_sweep_plan(v, data, n, sampled);
    case HC_KIND_STREAM: return hc_stream_sweep_plan(v, n, sampled);
    default: return NULL;
    }
}

struct sweep_tally {
    unsigned bad;
    char first[HC_MSG_MAX];
};

/* What prefix p must give: TRUNCATED, or for streams (items, status, end
 * state). */
static void judge_prefix(struct hc_log *log, const struct hc_vector *v, size_t p, int st,
                         uint64_t items, int end, size_t *cut, struct sweep_tally *t) {
    if (v->kind != HC_KIND_STREAM) {
        if (st == HURRAY_E_TRUNCATED) return;
        if (t->bad++ == 0)
            snprintf(t->first, sizeof t->first, "prefix of %zu bytes -> %s", p, hc_status_str(st));
        if (t->bad <= 16) hc_note(log, "DIFF truncation: prefix %zu -> %s", p, hc_status_str(st));
        return;
    }
    int want_end = hc_stream_prefix_end(v, p, cut);
    int want = want_end != HURRAY_STREAM_NOT_ENDED ? HURRAY_OK : HURRAY_E_TRUNCATED;
    if (st == want && items == *cut && end == want_end) return;
    if (t->bad++ == 0)
        snprintf(t->first, sizeof t->first, "prefix of %zu bytes -> %" PRIu64 " items then %s "
                 "(%s), expected %zu items then %s (%s)", p, items, end_str(st),
                 hc_stream_end_name(end), *cut, end_str(want), hc_stream_end_name(want_end));
    if (t->bad <= 16)
        hc_note(log, "DIFF prefix %zu: %" PRIu64 " items then %s (%s), expected %zu then %s (%s)",
                p, items, end_str(st), hc_stream_end_name(end), *cut, end_str(want),
                hc_stream_end_name(want_end));
}

/* One batch: lengths[0..n). Returns 0, or -1 when the sweep cannot go on. */
static int sweep_batch(struct hc_log *log, const struct hc_options *opt, const struct hc_vector *v,
                       const uint8_t *data, const size_t *lengths, size_t n, size_t *cut,
                       struct sweep_tally *t, struct hc_result *res) {
    int stream = v->kind == HC_KIND_STREAM;
    struct hc_buf req;
    hc_buf_init(&req);
    put_common(&req, "sweep", v, data, lengths[n - 1], 1);
    hc_cbor_tstr(&req, "lengths");
    hc_cbor_array(&req, n);
    for (size_t i = 0; i < n; i++) hc_cbor_uint(&req, lengths[i]);
    if (req.oom) {
        hc_buf_free(&req);
        hc_fail(log, "sweep: out of memory");
        return -1;
    }
    char why[HC_MSG_MAX], what[96];
    snprintf(what, sizeof what, "sweep request, prefixes %zu..%zu", lengths[0], lengths[n - 1]);
    cbor_item_t *resp = NULL;
    int rc = hc_testee_call(opt->testee, req.p, req.len, what, &resp, why, sizeof why);
    hc_buf_free(&req);
    if (rc) {
        hc_fail(log, "sweep: %s", why);
        return -1;
    }
    const cbor_item_t *statuses = NULL, *items = NULL, *ends = NULL, *skip = NULL;
    size_t m = cbor_map_size(resp);
    struct cbor_pair *pairs = cbor_map_handle(resp);
    rc = 0;
    for (size_t i = 0; i < m && !rc; i++) {
        const cbor_item_t **slot = hc_tstr_equals(pairs[i].key, "statuses") == 0 ? &statuses
                                   : hc_tstr_equals(pairs[i].key, "items") == 0  ? &items
                                   : hc_tstr_equals(pairs[i].key, "ends") == 0   ? &ends
                                   : hc_tstr_equals(pairs[i].key, "skip") == 0   ? &skip
                                                                                 : NULL;
        if (!slot || *slot)
            rc = proto_fail(log, "sweep response: %s key", slot ? "a repeated" : "an unknown");
        else
            *slot = pairs[i].value;
    }
    if (!rc && skip) {
        hc_fail(log, "sweep: skipped by the testee");
        rc = -1;
    }
    if (!rc && (!statuses || !cbor_isa_array(statuses) || cbor_array_size(statuses) != n))
        rc = proto_fail(log, "sweep response: \"statuses\" must be an array of one status per "
                        "length");
    if (!rc && stream && (!items || !cbor_isa_array(items) || cbor_array_size(items) != n))
        rc = proto_fail(log, "sweep response: \"items\" must be an array of one count per "
                        "length");
    if (!rc && stream && (!ends || !cbor_isa_array(ends) || cbor_array_size(ends) != n))
        rc = proto_fail(log, "sweep response: \"ends\" must be an array of one end state per "
                        "length");
    if (!rc && !stream && (items || ends))
        rc = proto_fail(log, "sweep response: \"%s\" belongs to stream sweeps only",
                        items ? "items" : "ends");
    for (size_t i = 0; i < n && !rc; i++) {
        int st;
        char key[32];
        snprintf(key, sizeof key, "statuses[%zu]", i);
        if (get_status(log, key, cbor_array_handle(statuses)[i], &st)) {
            rc = -1;
            break;
        }
        uint64_t k = 0;
        int end = HURRAY_STREAM_NOT_ENDED;
        if (stream) {
            snprintf(key, sizeof key, "ends[%zu]", i);
            if (get_end(log, key, cbor_array_handle(ends)[i], &end)) {
                rc = -1;
                break;
            }
            const cbor_item_t *it = cbor_array_handle(items)[i];
            if (!cbor_isa_uint(it)) {
                rc = proto_fail(log, "sweep response: items[%zu] is %s, expected uint", i,
                                hc_cbor_type_name(it));
                break;
            }
            k = cbor_get_int(it);
        }
        res->prefixes++;
        judge_prefix(log, v, lengths[i], st, k, end, cut, t);
    }
    cbor_decref(&resp);
    return rc;
}

static void sweep(struct hc_log *log, const struct hc_options *opt, const struct hc_vector *v,
                  const uint8_t *data, struct hc_result *res) {
    size_t n = 0;
    int sampled = 0;
    size_t *plan = sweep_plan(v, data, &n, &sampled);
    if (!plan) {
        hc_fail(log, "sweep: out of memory");
        return;
    }
    res->sweep_sampled = sampled;
    struct sweep_tally t = {0, ""};
    size_t cut = 0;
    unsigned before = res->prefixes;
    int stopped = 0;
    for (size_t i = 0; i < n && !stopped; i += HC_SWEEP_BATCH) {
        size_t k = n - i < HC_SWEEP_BATCH ? n - i : HC_SWEEP_BATCH;
        stopped = sweep_batch(log, opt, v, data, plan + i, k, &cut, &t, res) != 0;
    }
    res->prefixes_bad += t.bad;
    unsigned tried = res->prefixes - before;
    if (t.bad && v->kind == HC_KIND_STREAM)
        hc_fail(log, "prefix sweep: %u of %u prefixes wrong (first: %s)", t.bad, tried, t.first);
    else if (t.bad)
        hc_fail(log, "truncation sweep: %u of %u prefixes did not fail with TRUNCATED (first: %s)",
                t.bad, tried, t.first);
    else if (!stopped)
        hc_note(log, "ok   sweep: %u prefixes%s", tried, sampled ? " (sampled)" : "");
    free(plan);
}

/* ------------------------------------------------------------- vector --- */

void hc_protocol_run(struct hc_log *log, const struct hc_options *opt, const struct hc_vector *v,
                     const uint8_t *data, struct hc_result *res) {
    struct hc_buf req;
    hc_buf_init(&req);
    put_common(&req, "decode", v, data, (size_t)v->size, 0);
    if (req.oom) {
        hc_buf_free(&req);
        hc_fail(log, "out of memory building the request");
        return;
    }
    char why[HC_MSG_MAX];
    cbor_item_t *resp = NULL;
    int rc = hc_testee_call(opt->testee, req.p, req.len, "decode request", &resp, why, sizeof why);
    hc_buf_free(&req);
    if (rc) {
        hc_fail(log, "%s", why);
        return;
    }
    struct answer a;
    if (parse_answer(log, v, resp, &a) == 0) judge(log, v, data, &a, res);
    cbor_decref(&resp);
    if (v->expect == HC_EXPECT_VALID && v->kind != HC_KIND_QUANT) sweep(log, opt, v, data, res);
}
