/* Kind "stream" (schema 2, end states schema 4, item names and metadata
 * schema 5): a byte stream of frames (docs/spec/stream.md).
 *
 * A memory reader over the whole file (limits, cross_machine and
 * require_end_frame from "options", a counting allocator) reads items until
 * the end or a failure; each item is re-written at once with a memory writer.
 *
 *   valid:   the reader yields exactly `items`: kind, descriptor (the
 *            descriptor comparison of kind descriptor), each buffer's size,
 *            SHA-256 and address (a multiple of its declared alignment and
 *            of 64, HR-STREAM-11), a composite's members recursively and
 *            each member's derived role (hurray_composite_member_role)
 *            against its descriptor's "role"; a top-level item's "name" and
 *            "metadata" (schema 5, HR-STREAM-18) against
 *            hurray_stream_reader_annotation (none when absent); after item i the reader's
 *            offset is frame_offsets[i + 1]; then the end, reported again by
 *            a further read, with the end state "end" (HR-STREAM-13), at
 *            offset size ("eof") or just past the end frame ("end_frame",
 *            HR-STREAM-12: bytes after it are not read). With roundtrip, the
 *            re-written stream -- finished for "end_frame", abandoned for
 *            "eof" -- is the input up to that offset, byte for byte
 *            (HR-STREAM-10; items re-written with their annotations). Then the prefix sweep (HR-STREAM-4): a reader
 *            over every prefix p < size yields the k items that end at or
 *            before p and then ends ("end_frame") once p holds the end frame,
 *            ends ("eof") if p is in frame_offsets and no end frame is
 *            required, else fails TRUNCATED
 *            (every prefix up to 8 KiB; above that a sample, see
 *            hc_sweep_plan, around every frame, descriptor and buffer
 *            boundary the oracle implies);
 *   invalid: exactly error_after_items items, then exactly "error", and the
 *            same status again on a further read (HR-STREAM-9); the items
 *            yielded re-write to the input's bytes before the failing item;
 *   implementation-defined: the outcome (ok = the clean end) is listed.
 * Nothing may stay allocated once the items, reader and writer are freed. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define HC_STREAM_MAX_NODES 262144u /* oracle items and members the harness parses */
#define HC_STREAM_MAX_DEPTH 80u
#define HC_STREAM_SWEEP_FULL 8192u

/* ------------------------------------------------------------ decoded --- */

struct parse_state {
    struct hc_log *log;
    size_t nodes;
    unsigned schema_version;
};

static int item_parse(struct parse_state *ps, const char *base, const cbor_item_t *item,
                      struct hc_item_exp *x, unsigned depth);

static int tensor_buffers_parse(struct parse_state *ps, const char *base, const cbor_item_t *item,
                                struct hc_item_exp *x) {
    static const struct hc_key keys[] = {{"size", HC_KEY_REQUIRED}, {"sha256", HC_KEY_REQUIRED}};
    struct hc_log *log = ps->log;
    cbor_item_t **items;
    size_t n;
    char path[HC_PATH_MAX];
    if (hc_get_array(log, hc_pathf(path, "%s.buffers", base), item, HURRAY_MAX_BUFFERS, &items,
                     &n))
        return -1;
    x->buffers = calloc(n ? n : 1, sizeof *x->buffers);
    if (!x->buffers) return hc_schema_fail(log, path, "out of memory");
    x->buffer_count = n;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const cbor_item_t *f[2];
        char b[HC_PATH_MAX], p[HC_PATH_MAX];
        hc_pathf(b, "%s.buffers[%zu]", base, i);
        if (hc_map_fields(log, b, items[i], keys, 2, f)) {
            bad = 1;
            continue;
        }
        size_t len = 0;
        bad |= hc_get_uint(log, hc_pathf(p, "%s.size", b), f[0], &x->buffers[i].size);
        if (!hc_get_bstr(log, hc_pathf(p, "%s.sha256", b), f[1], &x->buffers[i].sha256, &len) &&
            len != 32)
            bad = hc_schema_fail(log, p, "expected 32 bytes, got %zu", len);
    }
    return bad ? -1 : 0;
}

static int members_parse(struct parse_state *ps, const char *base, const cbor_item_t *item,
                         struct hc_item_exp *x, unsigned depth) {
    struct hc_log *log = ps->log;
    cbor_item_t **items;
    size_t n;
    char path[HC_PATH_MAX];
    if (hc_get_array(log, hc_pathf(path, "%s.members", base), item, SIZE_MAX, &items, &n))
        return -1;
    if (depth >= HC_STREAM_MAX_DEPTH)
        return hc_schema_fail(log, path, "composites nested deeper than %u", HC_STREAM_MAX_DEPTH);
    if (n > HC_STREAM_MAX_NODES - ps->nodes)
        return hc_schema_fail(log, path, "more than %u items and members in the oracle",
                              HC_STREAM_MAX_NODES);
    ps->nodes += n;
    x->members = calloc(n ? n : 1, sizeof *x->members);
    if (!x->members) return hc_schema_fail(log, path, "out of memory");
    x->member_count = n;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char b[HC_PATH_MAX];
        bad |= item_parse(ps, hc_pathf(b, "%s.members[%zu]", base, i), items[i], &x->members[i],
                          depth + 1);
    }
    return bad ? -1 : 0;
}

static int item_parse(struct parse_state *ps, const char *base, const cbor_item_t *item,
                      struct hc_item_exp *x, unsigned depth) {
    enum { IK_KIND, IK_DESC, IK_BUFFERS, IK_MEMBERS, IK_NAME, IK_METADATA, IK_COUNT };
    static const struct hc_key keys[IK_COUNT] = {[IK_KIND] = {"kind", HC_KEY_REQUIRED},
                                                 [IK_DESC] = {"descriptor", HC_KEY_REQUIRED},
                                                 [IK_BUFFERS] = {"buffers", 0},
                                                 [IK_MEMBERS] = {"members", 0},
                                                 [IK_NAME] = {"name", 0},
                                                 [IK_METADATA] = {"metadata", 0}};
    struct hc_log *log = ps->log;
    const cbor_item_t *f[IK_COUNT];
    char p[HC_PATH_MAX];
    if (hc_map_fields(log, base, item, keys, IK_COUNT, f)) return -1;
    int bad = 0;
    /* schema 5: a top-level item's name and metadata (stream.md HR-STREAM-18) */
    if ((f[IK_NAME] || f[IK_METADATA]) && (ps->schema_version < 5 || depth != 1))
        bad = hc_schema_fail(log, base, ps->schema_version < 5
                                            ? "\"name\"/\"metadata\": schema 5 only (the manifest "
                                              "has %u)"
                                            : "\"name\"/\"metadata\" belong to top-level items "
                                              "(schema %u)",
                             ps->schema_version);
    if (f[IK_NAME] &&
        hc_get_tstr(log, hc_pathf(p, "%s.name", base), f[IK_NAME], &x->name, &x->name_len) == 0 &&
        x->name_len == 0)
        bad = hc_schema_fail(log, p, "an empty name (an item without one has no key \"name\")");
    if (f[IK_METADATA]) {
        if (hc_kv_map_parse(log, hc_pathf(p, "%s.metadata", base), f[IK_METADATA]) == 0 &&
            cbor_map_size(f[IK_METADATA]) == 0)
            bad = hc_schema_fail(log, p, "an empty map (an item without metadata has no key "
                                         "\"metadata\")");
        x->metadata = f[IK_METADATA];
    }
    if (hc_tstr_equals(f[IK_KIND], "tensor") == 0) x->composite = 0;
    else if (hc_tstr_equals(f[IK_KIND], "composite") == 0) x->composite = 1;
    else
        return hc_schema_fail(log, hc_pathf(p, "%s.kind", base),
                              "expected \"tensor\" or \"composite\", got %s",
                              hc_cbor_type_name(f[IK_KIND]));
    const char *variant = x->composite ? "a composite item" : "a tensor item";
    if ((!f[IK_BUFFERS]) != x->composite)
        bad = hc_schema_fail(log, base, x->composite ? "key \"buffers\" does not belong to %s"
                                                     : "missing key \"buffers\" (required for %s)",
                             variant);
    if (!f[IK_MEMBERS] != !x->composite)
        bad = hc_schema_fail(log, base, x->composite ? "missing key \"members\" (required for %s)"
                                                     : "key \"members\" does not belong to %s",
                             variant);
    x->desc = calloc(1, sizeof *x->desc);
    if (!x->desc) return hc_schema_fail(log, base, "out of memory");
    bad |= hc_desc_parse(log, hc_pathf(p, "%s.descriptor", base), f[IK_DESC], x->desc);
    if (!x->composite && f[IK_BUFFERS]) bad |= tensor_buffers_parse(ps, base, f[IK_BUFFERS], x);
    if (x->composite && f[IK_MEMBERS]) bad |= members_parse(ps, base, f[IK_MEMBERS], x, depth);
    return bad ? -1 : 0;
}

int hc_stream_decoded_parse(struct hc_log *log, const cbor_item_t *item, struct hc_vector *v) {
    const struct hc_key keys[] = {{"items", HC_KEY_REQUIRED},
                                  {"frame_offsets", HC_KEY_REQUIRED},
                                  {"end", v->schema_version >= 4 ? HC_KEY_REQUIRED : 0}};
    const cbor_item_t *f[3];
    struct hc_stream_exp *x = v->stream = calloc(1, sizeof *v->stream);
    struct parse_state ps = {log, 0, v->schema_version};
    if (!x) return hc_schema_fail(log, "decoded", "out of memory");
    if (hc_map_fields(log, "decoded", item, keys, 3, f)) return -1;
    cbor_item_t **items;
    size_t n;
    int bad = 0;
    x->end = HURRAY_STREAM_END_EOF;
    if (f[2] && v->schema_version < 4) {
        bad = hc_schema_fail(log, "decoded.end", "schema 4 only (the manifest has %u)",
                             v->schema_version);
    } else if (f[2]) {
        if (hc_tstr_equals(f[2], "end_frame") == 0) x->end = HURRAY_STREAM_END_FRAME;
        else if (hc_tstr_equals(f[2], "eof") != 0)
            bad = hc_schema_fail(log, "decoded.end", "expected \"end_frame\" or \"eof\", got %s",
                                 hc_cbor_type_name(f[2]));
    }
    if (!hc_get_array(log, "decoded.items", f[0], HC_STREAM_MAX_NODES, &items, &n)) {
        ps.nodes = n;
        x->items = calloc(n ? n : 1, sizeof *x->items);
        if (!x->items) return hc_schema_fail(log, "decoded.items", "out of memory");
        x->item_count = n;
        for (size_t i = 0; i < n; i++) {
            char b[HC_PATH_MAX];
            bad |= item_parse(&ps, hc_pathf(b, "decoded.items[%zu]", i), items[i], &x->items[i], 1);
        }
    } else {
        bad = 1;
    }
    if (!hc_get_array(log, "decoded.frame_offsets", f[1], HC_STREAM_MAX_NODES + 1, &items, &n)) {
        x->frame_offsets = calloc(n ? n : 1, sizeof *x->frame_offsets);
        if (!x->frame_offsets) return hc_schema_fail(log, "decoded.frame_offsets", "out of memory");
        x->frame_count = n;
        for (size_t i = 0; i < n; i++) {
            char p[HC_PATH_MAX];
            if (hc_get_uint(log, hc_pathf(p, "decoded.frame_offsets[%zu]", i), items[i],
                            &x->frame_offsets[i])) {
                bad = 1;
            } else if (i > 0 && x->frame_offsets[i] <= x->frame_offsets[i - 1]) {
                bad = hc_schema_fail(log, p, "%" PRIu64 " does not follow %" PRIu64
                                     " (offsets strictly increase: items are not empty)",
                                     x->frame_offsets[i], x->frame_offsets[i - 1]);
            }
        }
        if (!bad && x->items && n != x->item_count + 1)
            bad = hc_schema_fail(log, "decoded.frame_offsets", "%zu entries, expected len(items) "
                                 "+ 1 = %zu", n, x->item_count + 1);
        else if (!bad && x->end == HURRAY_STREAM_END_EOF &&
                 (x->frame_offsets[0] != 0 || x->frame_offsets[n - 1] != v->size))
            bad = hc_schema_fail(log, "decoded.frame_offsets", "must start at 0 and end at size "
                                 "%" PRIu64 " (got %" PRIu64 " ... %" PRIu64 ")", v->size,
                                 x->frame_offsets[0], x->frame_offsets[n - 1]);
        else if (!bad && x->end == HURRAY_STREAM_END_FRAME &&
                 (x->frame_offsets[0] != 0 || x->frame_offsets[n - 1] > v->size ||
                  v->size - x->frame_offsets[n - 1] < HURRAY_STREAM_END_FRAME_BYTES))
            bad = hc_schema_fail(log, "decoded.frame_offsets", "must start at 0 and end at least "
                                 "8 bytes (the end frame) before size %" PRIu64 " (got %" PRIu64
                                 " ... %" PRIu64 ")", v->size, x->frame_offsets[0],
                                 x->frame_offsets[n - 1]);
    } else {
        bad = 1;
    }
    return bad ? -1 : 0;
}

static void item_exp_free(struct hc_item_exp *x) {
    for (size_t i = 0; i < x->member_count; i++) item_exp_free(&x->members[i]);
    free(x->members);
    free(x->buffers);
    free(x->desc);
}

void hc_stream_exp_free(struct hc_stream_exp *s) {
    for (size_t i = 0; i < s->item_count; i++) item_exp_free(&s->items[i]);
    free(s->items);
    free(s->frame_offsets);
    s->items = NULL;
    s->frame_offsets = NULL;
    s->item_count = s->frame_count = 0;
}

/* ------------------------------------------------------------ compare --- */

/* HR-STREAM-18: the name and metadata the reader gives item i, against the
 * oracle's (none on either side when the item has none). */
static void cmp_annotation(struct hc_log *log, size_t i, const struct hc_item_exp *x,
                           const struct hurray_stream_annotation *a) {
    char p[HC_PATH_MAX];
    hc_pathf(p, "decoded.items[%zu].name (hurray_stream_reader_annotation)", i);
    if (!x->name != !a->name)
        hc_fail(log, "%s: expected %s, got %s", p, x->name ? "a name" : "none",
                a->name ? "a name" : "none");
    else if (x->name)
        hc_cmp_bytes(log, p, (const uint8_t *)x->name, x->name_len, (const uint8_t *)a->name,
                     a->name_len);
    struct hurray_kv got;
    hurray_kv_init(&got);
    got.entries = a->metadata;
    got.count = a->metadata_count;
    hc_kv_compare(log, hc_pathf(p, "decoded.items[%zu].metadata", i), x->metadata, &got);
}

static void cmp_item(struct hc_log *log, const char *base, const struct hc_item_exp *x,
                     const struct hurray_item *it, unsigned depth) {
    char p[HC_PATH_MAX], msg[HC_MSG_MAX];
    struct hurray_error err;
    if (!it || !it->descriptor) {
        hc_fail(log, "%s: the reader yields a NULL item or descriptor", base);
        return;
    }
    const struct hurray_descriptor *d = it->descriptor;
    int composite = hurray_item_is_composite(it);
    hc_cmp_str(log, hc_pathf(p, "%s.kind", base), x->composite ? "composite" : "tensor",
               composite ? "composite" : "tensor");
    size_t len = 0;
    hurray_error_clear(&err);
    int st = hurray_descriptor_encoded_len(d, &len, &err);
    if (st != HURRAY_OK)
        hc_fail(log, "%s.descriptor: hurray_descriptor_encoded_len failed: %s", base,
                hc_describe(msg, sizeof msg, st, &err));
    hc_compare_descriptor_at(log, hc_pathf(p, "%s.descriptor", base), x->desc, d, len);
    if (x->composite != composite) return;
    if (!composite) {
        hc_cmp_u64(log, hc_pathf(p, "%s.buffers (length)", base), x->buffer_count, d->buffer_count);
        if (d->buffer_count && !it->buffers) {
            hc_fail(log, "%s: the reader yields NULL buffers", base);
            return;
        }
        for (size_t b = 0; b < x->buffer_count && b < d->buffer_count; b++) {
            const struct hurray_item_buffer *g = &it->buffers[b];
            hc_cmp_u64(log, hc_pathf(p, "%s.buffers[%zu].size", base, b), x->buffers[b].size,
                       g->size);
            if (g->size != x->buffers[b].size) continue;
            if (g->size && !g->data) {
                hc_fail(log, "%s.buffers[%zu]: NULL data for %" PRIu64 " bytes", base, b, g->size);
                continue;
            }
            static const uint8_t none[1] = {0};
            hc_cmp_sha256(log, hc_pathf(p, "%s.buffers[%zu].sha256", base, b), x->buffers[b].sha256,
                          g->data ? g->data : none, (size_t)g->size);
            uint64_t align = (uint64_t)1 << (d->buffers[b].alignment_log2 & 63);
            if (align < HURRAY_MIN_BUFFER_ALIGNMENT) align = HURRAY_MIN_BUFFER_ALIGNMENT;
            if (g->data && (uintptr_t)g->data % align != 0)
                hc_fail(log, "%s.buffers[%zu]: at an address that is not a multiple of %" PRIu64
                             " (its declared alignment and 64, HR-STREAM-11)",
                        base, b, align);
        }
        return;
    }
    hc_cmp_u64(log, hc_pathf(p, "%s.members (length)", base), x->member_count, it->member_count);
    if (it->member_count && !it->members) {
        hc_fail(log, "%s: the reader yields NULL members", base);
        return;
    }
    if (depth >= HC_STREAM_MAX_DEPTH) return;
    for (size_t k = 0; k < x->member_count && k < it->member_count; k++) {
        char mb[HC_PATH_MAX];
        hc_pathf(mb, "%s.members[%zu]", base, k);
        uint8_t role = 0;
        hurray_error_clear(&err);
        st = hurray_composite_member_role(d, (uint32_t)k, &role, &err);
        const struct hc_desc_exp *md = x->members[k].desc;
        if (st != HURRAY_OK)
            hc_fail(log, "%s: hurray_composite_member_role failed: %s", mb,
                    hc_describe(msg, sizeof msg, st, &err));
        else
            hc_cmp_str(log, hc_pathf(p, "%s.descriptor.role (hurray_composite_member_role)", mb),
                       md->role_null ? NULL : md->role, role ? hurray_member_role_name(role) : NULL);
        cmp_item(log, mb, &x->members[k], it->members[k], depth + 1);
    }
}

/* -------------------------------------------------------------- check --- */

struct reader_run {
    struct hc_alloc_stats stats;
    struct hurray_allocator alloc;
    struct hurray_stream_reader_options ro;
};

static void reader_setup(struct reader_run *rr, const struct hc_vector *v) {
    hc_counting_allocator(&rr->alloc, &rr->stats);
    hurray_stream_reader_options_init(&rr->ro);
    rr->ro.limits = &v->limits;
    rr->ro.allocator = &rr->alloc;
    rr->ro.cross_machine = v->cross_machine;
    rr->ro.require_end_frame = v->require_end_frame;
}

/* Where a valid stream ends: past its end frame, or at its size. */
uint64_t hc_stream_stop(const struct hc_vector *v) {
    const struct hc_stream_exp *x = v->stream;
    if (x->end != HURRAY_STREAM_END_FRAME) return v->size;
    return x->frame_offsets[x->frame_count - 1] + HURRAY_STREAM_END_FRAME_BYTES;
}

const char *hc_stream_end_name(int end) {
    return end == HURRAY_STREAM_END_FRAME ? "end_frame"
           : end == HURRAY_STREAM_END_EOF ? "eof"
                                          : "(not ended)";
}

/* The sweep rule (vectors/SCHEMA.md § Running a vector, stream): a prefix
 * of p bytes yields the items whose frame_offsets[k] <= p, then ends with
 * the end frame if it holds it whole, at a cut point with EOF (unless
 * require_end_frame), else not at all (TRUNCATED). HR-STREAM-4, -13. */
int hc_stream_prefix_end(const struct hc_vector *v, size_t p, size_t *cut) {
    const struct hc_stream_exp *x = v->stream;
    while (*cut + 1 < x->frame_count && x->frame_offsets[*cut + 1] <= p) (*cut)++;
    if (x->end == HURRAY_STREAM_END_FRAME && p >= hc_stream_stop(v)) return HURRAY_STREAM_END_FRAME;
    if (x->frame_offsets[*cut] == p && !v->require_end_frame) return HURRAY_STREAM_END_EOF;
    return HURRAY_STREAM_NOT_ENDED;
}

/* Reads a prefix to its end: the items it yields whole, the end state and the
 * final status (0 = the end). */
static int read_prefix(struct reader_run *rr, const uint8_t *src, size_t len, size_t *items,
                       int *end) {
    struct hurray_stream_reader *r = NULL;
    struct hurray_error err;
    *items = 0;
    *end = HURRAY_STREAM_NOT_ENDED;
    struct hc_kept kept = {0}; /* every item kept to the end (HR-LIMIT-2, § Golden corpus) */
    int st = hurray_stream_reader_create_memory(src, len, &rr->ro, &r, &err);
    if (st != HURRAY_OK) return st;
    for (;;) {
        struct hurray_item *it = NULL;
        st = hurray_stream_reader_next(r, &it, &err);
        if (st != HURRAY_OK || !it) break;
        if (hc_keep(&kept, it) != 0) st = HURRAY_E_NOMEM;
        (*items)++;
    }
    *end = hurray_stream_reader_end(r);
    hurray_stream_reader_destroy(r);
    hc_kept_free(&kept); /* after the reader: the items hand their slack back to its budget */
    return st;
}

/* Boundaries inside the stream the oracle implies: each frame's start, its
 * descriptor, each buffer and its padding (stream.md § Frame). */
static void frame_marks(const struct hc_item_exp *x, uint64_t *at, uint64_t *marks, size_t *n,
                        size_t cap, unsigned depth) {
    if (*n + 2 > cap || depth > HC_STREAM_MAX_DEPTH) return;
    marks[(*n)++] = *at;
    *at += HURRAY_STREAM_FRAME_HEADER_BYTES;
    marks[(*n)++] = *at;
    *at += x->desc->encoded_len;
    if (x->composite) {
        for (size_t k = 0; k < x->member_count; k++)
            frame_marks(&x->members[k], at, marks, n, cap, depth + 1);
        return;
    }
    for (size_t b = 0; b < x->buffer_count && *n + 2 <= cap; b++) {
        marks[(*n)++] = *at;
        *at += x->buffers[b].size;
        marks[(*n)++] = *at;
        *at += (8 - x->buffers[b].size % 8) % 8;
    }
}

/* The bytes of an item's own frames (no annotation frame), from the oracle's sizes. */
static void item_len(const struct hc_item_exp *x, uint64_t *len, unsigned depth) {
    if (depth > HC_STREAM_MAX_DEPTH) return;
    *len += HURRAY_STREAM_FRAME_HEADER_BYTES + x->desc->encoded_len;
    for (size_t k = 0; k < x->member_count; k++) item_len(&x->members[k], len, depth + 1);
    for (size_t b = 0; b < x->buffer_count; b++)
        *len += x->buffers[b].size + (8 - x->buffers[b].size % 8) % 8;
}

static size_t count_marks(const struct hc_item_exp *x, unsigned depth) {
    size_t n = 2 + 2 * x->buffer_count;
    if (depth > HC_STREAM_MAX_DEPTH) return 0;
    for (size_t k = 0; k < x->member_count; k++) n += count_marks(&x->members[k], depth + 1);
    return n;
}

size_t *hc_stream_sweep_plan(const struct hc_vector *v, size_t *n, int *sampled) {
    const struct hc_stream_exp *x = v->stream;
    size_t cap = x->frame_count + 1, nm = 0;
    for (size_t i = 0; i < x->item_count; i++) cap += count_marks(&x->items[i], 0);
    uint64_t *marks = malloc((cap ? cap : 1) * sizeof *marks);
    if (!marks) return NULL;
    for (size_t i = 0; i < x->frame_count; i++) marks[nm++] = x->frame_offsets[i];
    if (x->end == HURRAY_STREAM_END_FRAME) marks[nm++] = hc_stream_stop(v); /* past the end frame */
    for (size_t i = 0; i < x->item_count; i++) {
        /* an annotated item begins with its annotation frame (HR-STREAM-18): its first
         * descriptor frame is where the item's own frames, counted back from its end, begin */
        uint64_t len = 0, at;
        item_len(&x->items[i], &len, 0);
        at = x->frame_offsets[i + 1] >= len ? x->frame_offsets[i + 1] - len : x->frame_offsets[i];
        frame_marks(&x->items[i], &at, marks, &nm, cap, 0);
    }
    size_t *plan = hc_sweep_plan((size_t)v->size, HC_STREAM_SWEEP_FULL, marks, nm, n, sampled);
    free(marks);
    return plan;
}

static void stream_sweep(struct hc_log *log, const struct hc_vector *v, const uint8_t *data,
                         struct hc_result *res) {
    const struct hc_stream_exp *x = v->stream;
    size_t size = (size_t)v->size, n = 0;
    int sampled = 0;
    size_t *plan = hc_stream_sweep_plan(v, &n, &sampled);
    uint8_t *buf = malloc(size ? size : 1);
    if (!plan || !buf) {
        hc_fail(log, "prefix sweep: out of memory");
        free(plan);
        free(buf);
        return;
    }
    res->sweep_sampled = sampled;
    struct reader_run rr;
    reader_setup(&rr, v);
    unsigned bad = 0;
    char first[HC_MSG_MAX] = "";
    size_t cut = 0; /* frame_offsets[1..cut] <= p */
    for (size_t i = 0; i < n; i++) {
        size_t p = plan[i], items = 0;
        int end = HURRAY_STREAM_NOT_ENDED;
        int want_end = hc_stream_prefix_end(v, p, &cut);
        int want = want_end != HURRAY_STREAM_NOT_ENDED ? HURRAY_OK : HURRAY_E_TRUNCATED;
        uint8_t *tail = buf + (size - p);
        if (p) memcpy(tail, data, p);
        int st = read_prefix(&rr, tail, p, &items, &end);
        res->prefixes++;
        if (st == want && items == cut && end == want_end) continue;
        const char *got_s = st == HURRAY_OK ? "the end" : hc_status_str(st);
        const char *want_s = want == HURRAY_OK ? "the end" : "TRUNCATED";
        if (bad++ == 0)
            snprintf(first, sizeof first, "prefix of %zu bytes -> %zu items then %s (%s), expected "
                     "%zu items then %s (%s)", p, items, got_s, hc_stream_end_name(end), cut,
                     want_s, hc_stream_end_name(want_end));
        if (bad <= 16)
            hc_note(log, "DIFF prefix %zu: %zu items then %s (%s), expected %zu then %s (%s)", p,
                    items, got_s, hc_stream_end_name(end), cut, want_s,
                    hc_stream_end_name(want_end));
    }
    res->prefixes_bad += bad;
    hc_check_allocations(log, &rr.stats, "prefix sweep");
    if (bad)
        hc_fail(log, "prefix sweep: %u of %zu prefixes wrong (first: %s)", bad, n, first);
    else
        hc_note(log, "ok   prefix sweep: %zu prefixes%s, ends at the %zu cut points%s, "
                     "TRUNCATED elsewhere", n, sampled ? " (sampled)" : "", x->frame_count,
                     x->end == HURRAY_STREAM_END_FRAME ? " and past the end frame" : "");
    free(plan);
    free(buf);
}

void hc_check_stream(struct hc_log *log, const struct hc_vector *v, const uint8_t *data,
                     struct hc_result *res) {
    struct reader_run rr;
    struct hurray_stream_reader *r = NULL;
    struct hurray_stream_writer *w = NULL;
    struct hurray_stream_writer_options wo;
    struct hurray_error err, again;
    char msg[HC_MSG_MAX], p[HC_PATH_MAX];
    size_t size = (size_t)v->size;
    const struct hc_stream_exp *x = v->stream;
    reader_setup(&rr, v);
    hurray_stream_writer_options_init(&wo);
    wo.allocator = &rr.alloc;
    hurray_error_clear(&err);
    int st = hurray_stream_reader_create_memory(data, size, &rr.ro, &r, &err);
    if (st != HURRAY_OK) {
        hc_fail(log, "hurray_stream_reader_create_memory failed: %s",
                hc_describe(msg, sizeof msg, st, &err));
        return;
    }
    st = hurray_stream_writer_create_memory(&wo, &w, &err);
    if (st != HURRAY_OK) {
        hc_fail(log, "hurray_stream_writer_create_memory failed: %s",
                hc_describe(msg, sizeof msg, st, &err));
        hurray_stream_reader_destroy(r);
        return;
    }
    size_t count = 0;
    uint64_t last_end = 0;
    int rewrite_ok = 1;
    struct hc_kept kept = {0}; /* every item kept to the end (HR-LIMIT-2, § Golden corpus) */
    for (;;) {
        struct hurray_item *it = NULL;
        hurray_error_clear(&err);
        st = hurray_stream_reader_next(r, &it, &err);
        if (st != HURRAY_OK || !it) {
            if (st != HURRAY_OK && it) hc_fail(log, "the reader fails with %s and yields an item",
                                               hc_status_str(st));
            break;
        }
        uint64_t end = hurray_stream_reader_offset(r);
        struct hurray_error verr;
        hurray_error_clear(&verr);
        int vst = hurray_composite_validate(it, &v->limits, &verr);
        if (vst != HURRAY_OK)
            hc_fail(log, "item %zu as yielded does not pass hurray_composite_validate: %s", count,
                    hc_describe(msg, sizeof msg, vst, &verr));
        struct hurray_stream_annotation ann;
        hurray_stream_reader_annotation(r, &ann);
        if (x && count < x->item_count) {
            cmp_item(log, hc_pathf(p, "decoded.items[%zu]", count), &x->items[count], it, 0);
            cmp_annotation(log, count, &x->items[count], &ann);
            hc_cmp_u64(log, hc_pathf(p, "decoded.frame_offsets[%zu] (reader offset after item %zu)",
                                     count + 1, count),
                       x->frame_offsets[count + 1], end);
        }
        struct hurray_error werr;
        hurray_error_clear(&werr);
        int wst = hurray_stream_writer_write_annotated(w, it, &ann, &werr);
        if (wst != HURRAY_OK && rewrite_ok) {
            hc_fail(log, "rewrite: hurray_stream_writer_write refuses item %zu: %s", count,
                    hc_describe(msg, sizeof msg, wst, &werr));
            rewrite_ok = 0;
        }
        if (hc_keep(&kept, it) != 0) hc_fail(log, "cannot keep item %zu", count);
        count++;
        last_end = end;
    }
    int end_state = hurray_stream_reader_end(r);
    /* a further read: the same answer (HR-STREAM-4, HR-STREAM-9) */
    struct hurray_item *more = NULL;
    hurray_error_clear(&again);
    int st2 = hurray_stream_reader_next(r, &more, &again);
    if (st2 != st || more)
        hc_fail(log, "a further read after %s gives %s%s", st == HURRAY_OK ? "the clean end"
                                                                           : hc_status_str(st),
                st2 == HURRAY_OK ? (more ? "an item" : "the clean end") : hc_status_str(st2), "");
    else if (st != HURRAY_OK && (again.offset != err.offset || again.has_offset != err.has_offset))
        hc_fail(log, "a further read after %s reports offset %" PRIu64 ", the first %" PRIu64,
                hc_status_str(st), again.offset, err.offset);
    hurray_item_destroy(more);
    if (hurray_stream_reader_end(r) != end_state)
        hc_fail(log, "a further read changes the end state from %s to %s",
                hc_stream_end_name(end_state), hc_stream_end_name(hurray_stream_reader_end(r)));
    uint64_t final_offset = hurray_stream_reader_offset(r);
    const uint8_t *out = NULL;
    size_t out_len = 0;
    struct hurray_error gerr;
    /* a stream with an end frame is rewritten finished: with its end frame (HR-STREAM-10) */
    if (v->expect == HC_EXPECT_VALID && x->end == HURRAY_STREAM_END_FRAME &&
        hurray_stream_writer_finish(w, &gerr) != HURRAY_OK) {
        hc_fail(log, "rewrite: hurray_stream_writer_finish failed");
        rewrite_ok = 0;
    }
    if (hurray_stream_writer_getvalue(w, &out, &out_len, &gerr) != HURRAY_OK) {
        hc_fail(log, "rewrite: hurray_stream_writer_getvalue failed");
        rewrite_ok = 0;
    }
    if (v->expect == HC_EXPECT_VALID) {
        uint64_t stop = hc_stream_stop(v);
        if (st != HURRAY_OK)
            hc_fail(log, "expected a valid stream, the reader fails after %zu items: %s", count,
                    hc_describe(msg, sizeof msg, st, &err));
        else
            hc_cmp_u64(log, x->end == HURRAY_STREAM_END_FRAME
                                ? "end: reader offset (past the end frame)"
                                : "end: reader offset (size)",
                       stop, final_offset);
        hc_cmp_str(log, "decoded.end (hurray_stream_reader_end)", hc_stream_end_name(x->end),
                   hc_stream_end_name(end_state));
        hc_cmp_u64(log, "decoded.items (length)", x->item_count, count);
        if (v->roundtrip && rewrite_ok)
            hc_cmp_bytes(log, "roundtrip: re-written stream", data, (size_t)stop, out, out_len);
    } else {
        hc_check_failure_status(log, v, st, &err, res);
        /* a failure has no end state; the end has one (HR-STREAM-13) */
        if ((st != HURRAY_OK) != (end_state == HURRAY_STREAM_NOT_ENDED))
            hc_fail(log, "the reader %s and reports the end state %s",
                    st == HURRAY_OK ? "reaches the end" : "fails", hc_stream_end_name(end_state));
        if (v->expect == HC_EXPECT_INVALID) {
            hc_cmp_u64(log, "error_after_items", v->error_after_items, count);
            if (rewrite_ok && last_end <= size)
                hc_cmp_bytes(log, "rewrite of the items before the failure", data,
                             (size_t)last_end, out, out_len);
        }
    }
    hurray_stream_writer_destroy(w);
    hurray_stream_reader_destroy(r);
    hc_kept_free(&kept); /* after the reader: the items hand their slack back to its budget */
    hc_check_allocations(log, &rr.stats, "reader, writer and items freed");
    if (v->expect == HC_EXPECT_VALID) stream_sweep(log, v, data, res);
}
