/* hurray-testee: libhurray behind the testee protocol, so that
 * `hurray-conformance --testee build/harness/hurray-testee` runs the corpus
 * through the same path as any other implementation
 * (docs/conformance/testee-protocol.md).
 *
 * Reads framed CBOR requests on stdin, answers on stdout, one at a time,
 * until end of input. Each request runs libhurray on the bytes it carries:
 *
 *   descriptor    hurray_descriptor_decode; re-encoded with _encode
 *   quantization  hurray_quant_decode; _encode
 *   kv            hurray_kv_decode; _encode
 *   file          hurray_file_create_memory (copy mode); every entry's
 *                 descriptor, its loaded buffers, top level and KV map;
 *                 re-encoded with hurray_file_encode
 *   stream        a memory reader (cross_machine, require_end_frame) until
 *                 the end or a failure, one more read, the end state
 *                 (hurray_stream_reader_end); each item re-written with a
 *                 memory writer, finished when the stream ended with its
 *                 end frame, else left unfinished
 *
 * The decoded values are written by decoded.c. Nothing here interprets the
 * format itself except two things libhurray does not expose: a file's
 * header fields (version, data_offset, data_length: read from the header
 * of an image the library accepted) and its buffers' offsets (derived by
 * file-container.md § Buffer placement from the sizes and alignments in
 * index order: an accepted file has every buffer exactly there, and the
 * digest of the bytes the library loaded shows that it read them from
 * there). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cbor.h>

#include "hc_limits.h"
#include "testee.h"

#define HT_FRAME_MAX ((uint32_t)1 << 30)

/* ----------------------------------------------------------------- I/O --- */

/* 0: n bytes read; 1: end of input before the first byte; -1: error. */
static int read_exact(uint8_t *p, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(0, p + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return got == 0 && r == 0 ? 1 : -1;
        got += (size_t)r;
    }
    return 0;
}

static int write_exact(const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(1, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_frame(const struct hc_buf *b) {
    if (b->oom || b->len == 0 || b->len >= HT_FRAME_MAX) return -1;
    uint8_t hdr[4];
    for (int i = 0; i < 4; i++) hdr[i] = (uint8_t)(b->len >> (8 * i));
    return write_exact(hdr, 4) || write_exact(b->p, b->len) ? -1 : 0;
}

/* ------------------------------------------------------------ requests --- */

static const cbor_item_t *get(const cbor_item_t *map, const char *k) {
    size_t n = cbor_map_size(map);
    struct cbor_pair *pairs = cbor_map_handle(map);
    for (size_t i = 0; i < n; i++) {
        const cbor_item_t *key = pairs[i].key;
        if (cbor_isa_string(key) && cbor_string_is_definite(key) &&
            cbor_string_length(key) == strlen(k) &&
            memcmp(cbor_string_handle(key), k, strlen(k)) == 0)
            return pairs[i].value;
    }
    return NULL;
}

static int text_is(const cbor_item_t *item, const char *s) {
    return item && cbor_isa_string(item) && cbor_string_is_definite(item) &&
           cbor_string_length(item) == strlen(s) &&
           memcmp(cbor_string_handle(item), s, strlen(s)) == 0;
}

struct request {
    const char *kind;
    const uint8_t *input;
    size_t input_len;
    struct hurray_limits limits;
    int cross_machine;
    int require_end_frame;
};

static int parse_request(const cbor_item_t *map, struct request *rq, char *why, size_t cap) {
    static const char *const kinds[] = {"descriptor", "quantization", "kv", "file", "stream"};
    const cbor_item_t *kind = get(map, "kind"), *input = get(map, "input"),
                      *limits = get(map, "limits"), *cm = get(map, "cross_machine"),
                      *ref = get(map, "require_end_frame");
    memset(rq, 0, sizeof *rq);
    hurray_limits_default(&rq->limits);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (text_is(kind, kinds[i])) rq->kind = kinds[i];
    if (!rq->kind) {
        snprintf(why, cap, "unknown kind");
        return -1;
    }
    if (!input || !cbor_isa_bytestring(input) || !cbor_bytestring_is_definite(input)) {
        snprintf(why, cap, "no input");
        return -1;
    }
    rq->input = cbor_bytestring_handle(input);
    rq->input_len = cbor_bytestring_length(input);
    if (limits && cbor_isa_map(limits)) {
        size_t n = cbor_map_size(limits);
        struct cbor_pair *pairs = cbor_map_handle(limits);
        for (size_t i = 0; i < n; i++)
            if (cbor_isa_string(pairs[i].key) && cbor_string_is_definite(pairs[i].key) &&
                cbor_isa_uint(pairs[i].value))
                hc_limit_set(&rq->limits, (const char *)cbor_string_handle(pairs[i].key),
                             cbor_string_length(pairs[i].key), cbor_get_int(pairs[i].value));
    }
    rq->cross_machine = cm && cbor_isa_float_ctrl(cm) && cbor_get_bool(cm);
    rq->require_end_frame = ref && cbor_isa_float_ctrl(ref) && cbor_get_bool(ref);
    return 0;
}

/* ------------------------------------------------------------- answers --- */

/* What one decode did; decoded/encoded are filled only for OK. */
struct outcome {
    int status;
    struct hurray_error err;
    struct hc_buf decoded;
    struct hc_buf encoded;
    uint64_t items; /* stream */
    int again;      /* stream */
    int end;        /* stream: hurray_stream_reader_end after the further read */
};

static void outcome_init(struct outcome *o) {
    memset(o, 0, sizeof *o);
    hc_buf_init(&o->decoded);
    hc_buf_init(&o->encoded);
    hurray_error_clear(&o->err);
}

static void outcome_free(struct outcome *o) {
    hc_buf_free(&o->decoded);
    hc_buf_free(&o->encoded);
}

static const char *status_name(int st) { return st == HURRAY_OK ? "OK" : hurray_status_name(st); }

/* An end state as the protocol spells it: "end_frame", "eof" or null. */
static void put_end(struct hc_buf *out, int end) {
    if (end == HURRAY_STREAM_END_FRAME) hc_cbor_tstr(out, "end_frame");
    else if (end == HURRAY_STREAM_END_EOF) hc_cbor_tstr(out, "eof");
    else hc_cbor_null(out);
}

/* An internal failure of the testee itself (out of memory, an encoder that
 * refuses what the decoder gave): reported as that status. */
static int fail_here(struct outcome *o, int st, const char *what) {
    o->status = st;
    snprintf(o->err.message, sizeof o->err.message, "testee: %s", what);
    return st;
}

/* ---------------------------------------------------------- descriptor --- */

static void run_descriptor(const struct request *rq, struct outcome *o, int want_values) {
    struct hurray_decode_options opt = {&rq->limits, NULL};
    struct hurray_descriptor *d = malloc(sizeof *d);
    size_t consumed = 0;
    if (!d) {
        fail_here(o, HURRAY_E_NOMEM, "out of memory");
        return;
    }
    hurray_descriptor_init(d);
    o->status = hurray_descriptor_decode(rq->input, rq->input_len, &opt, d, &consumed, &o->err);
    if (o->status == HURRAY_OK && want_values) {
        ht_put_descriptor(&o->decoded, d, consumed);
        size_t len = 0, written = 0;
        uint8_t *out = NULL;
        int st = hurray_descriptor_encoded_len(d, &len, &o->err);
        if (st == HURRAY_OK && !(out = malloc(len ? len : 1))) st = fail_here(o, HURRAY_E_NOMEM, "oom");
        if (st == HURRAY_OK) st = hurray_descriptor_encode(d, out, len, &written, &o->err);
        if (st == HURRAY_OK) hc_buf_put(&o->encoded, out, written);
        else o->status = st;
        free(out);
    }
    hurray_descriptor_reset(d);
    free(d);
}

static void run_quant(const struct request *rq, struct outcome *o, int want_values) {
    struct hurray_quant q;
    memset(&q, 0, sizeof q);
    o->status = hurray_quant_decode(rq->input, rq->input_len, &q, &o->err);
    if (o->status != HURRAY_OK || !want_values) return;
    ht_put_quant(&o->decoded, &q);
    uint8_t out[64];
    size_t written = 0;
    int st = hurray_quant_encode(&q, out, sizeof out, &written, &o->err);
    if (st == HURRAY_OK) hc_buf_put(&o->encoded, out, written);
    else o->status = st;
}

static void run_kv(const struct request *rq, struct outcome *o, int want_values) {
    struct hurray_decode_options opt = {&rq->limits, NULL};
    struct hurray_kv kv;
    hurray_kv_init(&kv);
    o->status = hurray_kv_decode(rq->input, rq->input_len, &opt, &kv, &o->err);
    if (o->status == HURRAY_OK && want_values) {
        hc_cbor_map(&o->decoded, 2);
        hc_cbor_tstr(&o->decoded, "entries");
        ht_put_kv(&o->decoded, kv.entries, kv.count);
        hc_cbor_tstr(&o->decoded, "encoded_len");
        hc_cbor_uint(&o->decoded, rq->input_len);
        uint64_t len = 0;
        size_t written = 0;
        uint8_t *out = NULL;
        int st = hurray_kv_encoded_len(kv.entries, kv.count, NULL, &len, &o->err);
        if (st == HURRAY_OK && (len > SIZE_MAX - 1 || !(out = malloc(len ? (size_t)len : 1))))
            st = fail_here(o, HURRAY_E_NOMEM, "oom");
        if (st == HURRAY_OK)
            st = hurray_kv_encode(kv.entries, kv.count, NULL, out, (size_t)len, &written, &o->err);
        if (st == HURRAY_OK) hc_buf_put(&o->encoded, out, written);
        else o->status = st;
        free(out);
    }
    hurray_kv_reset(&kv);
}

/* ---------------------------------------------------------------- file --- */

static uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* The "decoded" map of an accepted file. Returns a status. */
static int file_values(struct hurray_file *f, const struct request *rq, struct outcome *o) {
    struct hc_buf *b = &o->decoded;
    size_t n = hurray_file_entry_count(f);
    size_t *stack = calloc(n ? n : 1, sizeof *stack);
    uint64_t *left = calloc(n ? n : 1, sizeof *left);
    struct hurray_descriptor *d = malloc(sizeof *d);
    int st = HURRAY_OK;
    if (!stack || !left || !d) {
        free(stack);
        free(left);
        free(d);
        return fail_here(o, HURRAY_E_NOMEM, "oom");
    }
    hurray_descriptor_init(d);
    const uint8_t *h = rq->input;
    hc_cbor_map(b, 6);
    hc_cbor_tstr(b, "version");
    hc_cbor_array(b, 2);
    hc_cbor_uint(b, le(h + 8, 2));
    hc_cbor_uint(b, le(h + 10, 2));
    hc_cbor_tstr(b, "data_offset");
    hc_cbor_uint(b, le(h + 48, 8));
    hc_cbor_tstr(b, "data_length");
    hc_cbor_uint(b, le(h + 56, 8));
    hc_cbor_tstr(b, "entries");
    hc_cbor_array(b, n);
    size_t depth = 0;
    uint64_t end = 0; /* the previous buffer's end, data-relative */
    for (size_t i = 0; i < n && st == HURRAY_OK; i++) {
        while (depth && left[depth - 1] == 0) depth--;
        const char *name = hurray_file_entry_name(f, i);
        int kind = hurray_file_entry_kind(f, i);
        st = hurray_file_entry_descriptor(f, i, d, &o->err);
        if (st != HURRAY_OK) break;
        size_t len = 0;
        st = hurray_descriptor_encoded_len(d, &len, &o->err);
        if (st != HURRAY_OK) break;
        hc_cbor_map(b, 5);
        hc_cbor_tstr(b, "name");
        hc_cbor_tstr(b, name ? name : "");
        hc_cbor_tstr(b, "kind");
        hc_cbor_tstr(b, kind == HURRAY_FILE_KIND_COMPOSITE ? "composite" : "tensor");
        hc_cbor_tstr(b, "member_of");
        if (depth) {
            hc_cbor_tstr(b, hurray_file_entry_name(f, stack[depth - 1]));
            left[depth - 1]--;
        } else {
            hc_cbor_null(b);
        }
        hc_cbor_tstr(b, "descriptor");
        ht_put_descriptor(b, d, len);
        hc_cbor_tstr(b, "buffers");
        if (kind == HURRAY_FILE_KIND_COMPOSITE) {
            hc_cbor_array(b, 0);
            stack[depth] = i;
            left[depth] = d->layout.member_count;
            depth++;
        } else {
            struct hurray_item *it = NULL;
            st = hurray_file_load_item(f, i, &it, &o->err);
            if (st != HURRAY_OK) break;
            hc_cbor_array(b, d->buffer_count);
            for (size_t k = 0; k < d->buffer_count; k++) {
                uint64_t a = (uint64_t)1 << (d->buffers[k].alignment_log2 & 63);
                uint64_t off = round_up(end, a > 64 ? a : 64);
                ht_put_buffer(b, it->buffers[k].data, it->buffers[k].size, 1, off);
                end = off + d->buffers[k].size;
            }
            hurray_item_destroy(it);
        }
        hurray_descriptor_reset(d);
    }
    hurray_descriptor_reset(d);
    free(d);
    free(stack);
    free(left);
    if (st != HURRAY_OK) return st;
    size_t ntop = hurray_file_top_level_count(f);
    hc_cbor_tstr(b, "top_level");
    hc_cbor_array(b, ntop);
    for (size_t k = 0; k < ntop; k++)
        hc_cbor_tstr(b, hurray_file_entry_name(f, hurray_file_top_level_entry(f, k)));
    const struct hurray_kv *kv = hurray_file_kv(f);
    hc_cbor_tstr(b, "kv");
    if (kv && kv->count) ht_put_kv(b, kv->entries, kv->count); /* a present section is never empty */
    else hc_cbor_null(b);
    return HURRAY_OK;
}

/* A 1.0 writer's image of the top-level items and the KV map. */
static int file_encoding(struct hurray_file *f, struct outcome *o) {
    size_t ntop = hurray_file_top_level_count(f);
    struct hurray_file_entry *entries = calloc(ntop ? ntop : 1, sizeof *entries);
    struct hurray_item **items = calloc(ntop ? ntop : 1, sizeof *items);
    int st = HURRAY_OK;
    if (!entries || !items) st = fail_here(o, HURRAY_E_NOMEM, "oom");
    for (size_t k = 0; k < ntop && st == HURRAY_OK; k++) {
        size_t i = hurray_file_top_level_entry(f, k);
        st = hurray_file_load_item(f, i, &items[k], &o->err);
        entries[k].name = hurray_file_entry_name(f, i);
        entries[k].item = items[k];
    }
    if (st == HURRAY_OK) {
        const struct hurray_kv *kv = hurray_file_kv(f);
        struct hurray_file_contents c = {entries, ntop, kv ? kv->entries : NULL, kv ? kv->count : 0};
        uint64_t len = 0;
        size_t written = 0;
        uint8_t *out = NULL;
        st = hurray_file_encoded_len(&c, NULL, &len, &o->err);
        if (st == HURRAY_OK && (len > SIZE_MAX - 1 || !(out = malloc(len ? (size_t)len : 1))))
            st = fail_here(o, HURRAY_E_NOMEM, "oom");
        if (st == HURRAY_OK) st = hurray_file_encode(&c, NULL, out, (size_t)len, &written, &o->err);
        if (st == HURRAY_OK) hc_buf_put(&o->encoded, out, written);
        free(out);
    }
    for (size_t k = 0; items && k < ntop; k++) hurray_item_destroy(items[k]);
    free(items);
    free(entries);
    return st;
}

static void run_file(const struct request *rq, struct outcome *o, int want_values) {
    struct hurray_file_options fo;
    struct hurray_file *f = NULL;
    memset(&fo, 0, sizeof fo);
    fo.limits = &rq->limits;
    fo.mode = HURRAY_FILE_COPY;
    o->status = hurray_file_create_memory(rq->input, rq->input_len, &fo, &f, &o->err);
    if (o->status == HURRAY_OK && want_values) {
        int st = file_values(f, rq, o);
        if (st == HURRAY_OK) st = file_encoding(f, o);
        o->status = st;
    }
    hurray_file_destroy(f);
}

/* -------------------------------------------------------------- stream --- */

static void run_stream(const struct request *rq, struct outcome *o, int want_values) {
    struct hurray_stream_reader_options ro;
    struct hurray_stream_writer_options wo;
    struct hurray_stream_reader *r = NULL;
    struct hurray_stream_writer *w = NULL;
    struct hc_buf items, offsets;
    hc_buf_init(&items);
    hc_buf_init(&offsets);
    hurray_stream_reader_options_init(&ro);
    ro.limits = &rq->limits;
    ro.cross_machine = rq->cross_machine;
    ro.require_end_frame = rq->require_end_frame;
    hurray_stream_writer_options_init(&wo);
    o->status = hurray_stream_reader_create_memory(rq->input, rq->input_len, &ro, &r, &o->err);
    if (o->status != HURRAY_OK) {
        o->again = o->status;
        return;
    }
    if (want_values && hurray_stream_writer_create_memory(&wo, &w, &o->err) != HURRAY_OK) w = NULL;
    int internal = 0;
    struct hc_kept kept = {0}; /* every item kept to the end (HR-LIMIT-2, § Golden corpus) */
    hc_cbor_uint(&offsets, 0);
    for (;;) {
        struct hurray_item *it = NULL;
        o->status = hurray_stream_reader_next(r, &it, &o->err);
        if (o->status != HURRAY_OK || !it) {
            hurray_item_destroy(it);
            break;
        }
        o->items++;
        if (want_values) {
            struct hurray_error werr;
            struct hurray_stream_annotation ann;
            hurray_stream_reader_annotation(r, &ann);
            if (ht_put_stream_item(&items, it, &ann)) internal = 1;
            if (!w || hurray_stream_writer_write_annotated(w, it, &ann, &werr) != HURRAY_OK)
                internal = 1;
            hc_cbor_uint(&offsets, hurray_stream_reader_offset(r));
        }
        if (hc_keep(&kept, it) != 0) internal = 1;
    }
    int end = hurray_stream_reader_end(r);
    struct hurray_item *more = NULL;
    struct hurray_error again;
    o->again = hurray_stream_reader_next(r, &more, &again);
    if (o->again == HURRAY_OK && more) o->again = HURRAY_E_INTERNAL; /* an item after the end */
    hurray_item_destroy(more);
    o->end = hurray_stream_reader_end(r);
    if (o->status == HURRAY_OK && want_values) {
        const uint8_t *out = NULL;
        size_t out_len = 0;
        struct hurray_error gerr;
        /* as its writer left it: finished (the end frame) or abandoned (HR-STREAM-10) */
        if (w && end == HURRAY_STREAM_END_FRAME &&
            hurray_stream_writer_finish(w, &gerr) != HURRAY_OK)
            internal = 1;
        if (internal || hurray_stream_writer_getvalue(w, &out, &out_len, &gerr) != HURRAY_OK) {
            fail_here(o, HURRAY_E_INTERNAL, "re-writing the items failed");
        } else {
            hc_buf_put(&o->encoded, out, out_len);
            hc_cbor_map(&o->decoded, 3);
            hc_cbor_tstr(&o->decoded, "items");
            hc_cbor_array(&o->decoded, o->items);
            hc_buf_put(&o->decoded, items.p, items.len);
            hc_cbor_tstr(&o->decoded, "frame_offsets");
            hc_cbor_array(&o->decoded, o->items + 1);
            hc_buf_put(&o->decoded, offsets.p, offsets.len);
            hc_cbor_tstr(&o->decoded, "end");
            hc_cbor_tstr(&o->decoded, end == HURRAY_STREAM_END_FRAME ? "end_frame" : "eof");
        }
    }
    hurray_stream_writer_destroy(w);
    hurray_stream_reader_destroy(r);
    hc_kept_free(&kept); /* after the reader: the items hand their slack back to its budget */
    hc_buf_free(&items);
    hc_buf_free(&offsets);
}

static void run(const struct request *rq, struct outcome *o, int want_values) {
    switch (rq->kind[0]) {
    case 'd': run_descriptor(rq, o, want_values); break;
    case 'q': run_quant(rq, o, want_values); break;
    case 'k': run_kv(rq, o, want_values); break;
    case 'f': run_file(rq, o, want_values); break;
    default: run_stream(rq, o, want_values); break;
    }
}

/* ------------------------------------------------------------- the loop --- */

static void answer_decode(const struct request *rq, struct hc_buf *out) {
    struct outcome o;
    outcome_init(&o);
    run(rq, &o, 1);
    int ok = o.status == HURRAY_OK, stream = rq->kind[0] == 's';
    if (o.decoded.oom || o.encoded.oom) {
        ok = 0;
        fail_here(&o, HURRAY_E_NOMEM, "out of memory writing the answer");
    }
    char msg[HURRAY_ERROR_FIELD_MAX + HURRAY_ERROR_MESSAGE_MAX + 8];
    snprintf(msg, sizeof msg, "%s%s%s", o.err.field, o.err.field[0] ? ": " : "", o.err.message);
    hc_cbor_map(out, 1 + (ok ? 2 : 1) + (stream ? 3 : 0));
    hc_cbor_tstr(out, "status");
    hc_cbor_tstr(out, status_name(o.status));
    if (ok) {
        hc_cbor_tstr(out, "decoded");
        hc_buf_put(out, o.decoded.p, o.decoded.len);
        hc_cbor_tstr(out, "encoded");
        hc_cbor_bstr(out, o.encoded.p, o.encoded.len);
    } else {
        hc_cbor_tstr(out, "message");
        hc_cbor_tstr(out, msg);
    }
    if (stream) {
        hc_cbor_tstr(out, "items");
        hc_cbor_uint(out, o.items);
        hc_cbor_tstr(out, "again");
        hc_cbor_tstr(out, status_name(o.again));
        hc_cbor_tstr(out, "end");
        put_end(out, o.end);
    }
    outcome_free(&o);
}

static void answer_sweep(const cbor_item_t *req, struct request *rq, struct hc_buf *out) {
    const cbor_item_t *lengths = get(req, "lengths");
    size_t n = lengths && cbor_isa_array(lengths) ? cbor_array_size(lengths) : 0;
    cbor_item_t **ls = n ? cbor_array_handle(lengths) : NULL;
    int stream = rq->kind[0] == 's';
    struct hc_buf counts, ends;
    hc_buf_init(&counts);
    hc_buf_init(&ends);
    hc_cbor_map(out, stream ? 3 : 1);
    hc_cbor_tstr(out, "statuses");
    hc_cbor_array(out, n);
    const uint8_t *all = rq->input;
    size_t all_len = rq->input_len;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = cbor_isa_uint(ls[i]) ? cbor_get_int(ls[i]) : 0;
        struct outcome o;
        outcome_init(&o);
        rq->input = all;
        rq->input_len = k <= all_len ? (size_t)k : all_len;
        run(rq, &o, 0);
        hc_cbor_tstr(out, status_name(o.status));
        hc_cbor_uint(&counts, o.items);
        put_end(&ends, o.end);
        outcome_free(&o);
    }
    if (stream) {
        hc_cbor_tstr(out, "items");
        hc_cbor_array(out, n);
        hc_buf_put(out, counts.p, counts.len);
        hc_cbor_tstr(out, "ends");
        hc_cbor_array(out, n);
        hc_buf_put(out, ends.p, ends.len);
    }
    hc_buf_free(&counts);
    hc_buf_free(&ends);
}

static void skip(struct hc_buf *out, const char *why) {
    hc_cbor_map(out, 1);
    hc_cbor_tstr(out, "skip");
    hc_cbor_tstr(out, why);
}

int main(void) {
    for (;;) {
        uint8_t hdr[4];
        int r = read_exact(hdr, 4);
        if (r == 1) return 0; /* end of input at a frame boundary */
        if (r) return 1;
        uint32_t n = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
                     (uint32_t)hdr[3] << 24;
        if (n == 0 || n >= HT_FRAME_MAX) return 1;
        uint8_t *body = malloc(n);
        if (!body || read_exact(body, n)) return 1;
        struct cbor_load_result res;
        cbor_item_t *req = cbor_load(body, n, &res);
        free(body);
        struct hc_buf out;
        hc_buf_init(&out);
        const cbor_item_t *op = req && cbor_isa_map(req) ? get(req, "op") : NULL;
        if (!op) {
            skip(&out, "not a request");
        } else if (text_is(op, "hello")) {
            hc_cbor_map(&out, 3);
            hc_cbor_tstr(&out, "protocol");
            hc_cbor_uint(&out, 2);
            hc_cbor_tstr(&out, "name");
            hc_cbor_tstr(&out, "libhurray");
            hc_cbor_tstr(&out, "version");
            hc_cbor_tstr(&out, HURRAY_VERSION_STRING);
        } else if (text_is(op, "decode") || text_is(op, "sweep")) {
            struct request rq;
            char why[128];
            if (parse_request(req, &rq, why, sizeof why)) skip(&out, why);
            else if (text_is(op, "decode")) answer_decode(&rq, &out);
            else answer_sweep(req, &rq, &out);
        } else {
            skip(&out, "unknown op");
        }
        if (req) cbor_decref(&req);
        int w = send_frame(&out);
        hc_buf_free(&out);
        if (w) return 1;
    }
}
