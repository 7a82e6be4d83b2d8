/* One vector against libhurray (harness/README.md § What is checked).
 *
 *   file:          exactly "size" bytes, SHA-256 equal to "sha256"
 *   descriptor:    decode with default limits overridden by "options";
 *                  valid  -> OK, every field equal to "decoded", consumed ==
 *                            encoded_len, encode() == input[:encoded_len] when
 *                            "roundtrip", and every prefix 0..encoded_len-1
 *                            fails with TRUNCATED;
 *                  invalid -> exactly "error";
 *                  implementation-defined -> one of "i_outcomes".
 *   quantization:  hurray_quant_decode on the whole file; the same, with the
 *                  qmap compared and the re-encoding equal to the file.
 *   kv, file, stream (schema 2): kv.c, file.c, stream.c.
 *
 * Shared by every kind: the counting allocator, the invalid / impl-defined
 * status check, and the prefix sampler of the sweeps (hc_sweep_plan).
 *
 * Inputs are handed to libhurray in buffers of exactly their length, so a
 * read past the end shows up under ASan and valgrind; decode allocations go
 * through a counting allocator, so memory the descriptor keeps after reset
 * fails the vector. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* ---------------------------------------------------- counting allocator --- */

#define HC_ALLOC_HEADER 16u /* keeps max_align_t alignment on common ABIs */

/* A request above HC_ALLOC_MAX is refused (NULL: the library reports NOMEM)
 * without asking malloc: whether malloc grants 2^40 bytes depends on the
 * machine and the sanitizer (ASan aborts the process on it), and a vector's
 * outcome must not. No vector needs more than a few times HC_VECTOR_MAX_BYTES. */
static void *count_alloc(void *ctx, size_t size) {
    struct hc_alloc_stats *st = ctx;
    if (size > HC_ALLOC_MAX) {
        st->refused++;
        return NULL;
    }
    unsigned char *p = malloc(size + HC_ALLOC_HEADER);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    st->live_blocks++;
    st->live_bytes += size;
    return p + HC_ALLOC_HEADER;
}

static void count_free(void *ctx, void *ptr, size_t size) {
    struct hc_alloc_stats *st = ctx;
    if (!ptr) return;
    unsigned char *p = (unsigned char *)ptr - HC_ALLOC_HEADER;
    size_t stored;
    memcpy(&stored, p, sizeof stored);
    if (stored != size) st->size_mismatches++;
    st->live_blocks--;
    st->live_bytes -= stored;
    free(p);
}

void hc_counting_allocator(struct hurray_allocator *a, struct hc_alloc_stats *st) {
    memset(st, 0, sizeof *st);
    a->alloc = count_alloc;
    a->free = count_free;
    a->ctx = st;
}

/* After a reset nothing may stay allocated, and free must get the size that
 * alloc was asked for (alloc.h). */
void hc_check_allocations(struct hc_log *log, struct hc_alloc_stats *st, const char *when) {
    if (st->refused)
        hc_note(log, "note %s: the counting allocator refused %u request(s) above %zu bytes",
                when, st->refused, (size_t)HC_ALLOC_MAX);
    if (st->live_blocks || st->size_mismatches)
        hc_fail(log, "%s: libhurray left %zu allocation(s) (%zu bytes) after reset, %u free(s) "
                     "with a wrong size",
                when, st->live_blocks, st->live_bytes, st->size_mismatches);
    st->size_mismatches = 0;
}

/* ------------------------------------------------------------ helpers --- */

static size_t bounded_len(const char *s, size_t cap) {
    const char *z = memchr(s, '\0', cap);
    return z ? (size_t)(z - s) : cap;
}

const char *hc_status_str(int code) { return code == 0 ? "ok" : hurray_status_name(code); }

/* "LENGTH (field layout.params: message)" */
const char *hc_describe(char *buf, size_t cap, int code, const struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX * 4], m[HURRAY_ERROR_MESSAGE_MAX * 4];
    if (code == HURRAY_OK) {
        snprintf(buf, cap, "OK");
        return buf;
    }
    hc_printable(f, sizeof f, err->field, bounded_len(err->field, sizeof err->field));
    hc_printable(m, sizeof m, err->message, bounded_len(err->message, sizeof err->message));
    snprintf(buf, cap, "%s (field \"%.100s\": %.500s)", hurray_status_name(code), f, m);
    return buf;
}

#define describe hc_describe
#define status_str hc_status_str
#define check_allocations hc_check_allocations

static void hex(char *out, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) snprintf(out + 2 * i, 3, "%02x", p[i]);
}

static int size_cmp(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

size_t *hc_sweep_plan(size_t size, size_t full_max, const uint64_t *marks, size_t nmarks,
                      size_t *n, int *sampled) {
    *n = 0;
    *sampled = size > full_max;
    if (!*sampled) {
        size_t *all = malloc((size ? size : 1) * sizeof *all);
        if (!all) return NULL;
        for (size_t k = 0; k < size; k++) all[k] = k;
        *n = size;
        return all;
    }
    /* 256 head lengths, 9 per mark, 256 spaced, 64 tail lengths */
    static const int64_t around[] = {-8, -7, -1, 0, 1, 7, 8, 16, 24};
    size_t na = sizeof around / sizeof around[0];
    if (nmarks > (SIZE_MAX / sizeof(size_t) - 1024) / na) return NULL;
    size_t cap = 256 + nmarks * na + 256 + 64;
    size_t *out = malloc(cap * sizeof *out), m = 0;
    if (!out) return NULL;
    for (size_t k = 0; k < 256 && k < size; k++) out[m++] = k;
    for (size_t i = 0; i < nmarks; i++)
        for (size_t j = 0; j < na; j++) {
            int64_t k = (int64_t)marks[i] + around[j];
            if (k >= 0 && (uint64_t)k < size) out[m++] = (size_t)k;
        }
    for (size_t i = 0; i < 256; i++) out[m++] = (size_t)((double)size * (double)i / 256.0);
    for (size_t k = size > 64 ? size - 64 : 0; k < size; k++) out[m++] = k;
    qsort(out, m, sizeof *out, size_cmp);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (out[i] < size && (u == 0 || out[u - 1] != out[i])) out[u++] = out[i];
    *n = u;
    return out;
}

/* Reads DIR/path: exactly `size` bytes into an allocation of exactly that
 * size (never more, so over-reads are visible to sanitizers). */
static uint8_t *load_file(struct hc_log *log, const char *dir, const struct hc_vector *v) {
    if (v->size > HC_VECTOR_MAX_BYTES) {
        hc_fail(log, "size %" PRIu64 " exceeds the harness bound of %u bytes", v->size,
                HC_VECTOR_MAX_BYTES);
        return NULL;
    }
    size_t size = (size_t)v->size, plen = strlen(dir) + strlen(v->path) + 2;
    char *path = malloc(plen);
    uint8_t *data = malloc(size ? size : 1);
    FILE *f = NULL;
    if (!path || !data) {
        hc_fail(log, "out of memory loading %s", v->path);
        goto fail;
    }
    snprintf(path, plen, "%s/%s", dir, v->path);
    f = fopen(path, "rb");
    if (!f) {
        hc_fail(log, "cannot open %s: %s", path, strerror(errno));
        goto fail;
    }
    size_t got = fread(data, 1, size, f);
    if (got < size) {
        hc_fail(log, "%s is %zu bytes, manifest size is %zu", v->path, got, size);
        goto fail;
    }
    if (fgetc(f) != EOF) {
        size_t extra = 1;
        while (fgetc(f) != EOF && extra < ((size_t)1 << 24)) extra++;
        hc_fail(log, "%s is longer than the manifest size %zu (at least %zu more bytes)", v->path,
                size, extra);
        goto fail;
    }
    uint8_t digest[32];
    hc_sha256(data, size, digest);
    if (memcmp(digest, v->sha256, 32) != 0) {
        char want[65], have[65];
        hex(want, v->sha256, 32);
        hex(have, digest, 32);
        hc_fail(log, "sha256 mismatch for %s: manifest %s, file %s", v->path, want, have);
        goto fail;
    }
    hc_note(log, "file %s: %zu bytes, sha256 ok", v->path, size);
    fclose(f);
    free(path);
    return data;
fail:
    if (f) fclose(f);
    free(path);
    free(data);
    return NULL;
}

/* Invalid and implementation-defined expectations, shared by every kind. */
void hc_check_failure_status(struct hc_log *log, const struct hc_vector *v, int st,
                                 const struct hurray_error *err, struct hc_result *res) {
    char d[HC_MSG_MAX];
    describe(d, sizeof d, st, err);
    if (v->expect == HC_EXPECT_INVALID) {
        if (st == HURRAY_OK)
            hc_fail(log, "expected %s, but the input was accepted", v->error_name);
        else if (st != v->error)
            hc_fail(log, "expected %s, got %s", v->error_name, d);
        else
            hc_note(log, "ok   status: expected %s, got %s", v->error_name, d);
        return;
    }
    res->impl_outcome = st;
    char list[256];
    size_t o = 0;
    for (size_t i = 0; i < v->n_outcomes && o < sizeof list; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "",
                              status_str(v->outcomes[i]));
    for (size_t i = 0; i < v->n_outcomes; i++)
        if (v->outcomes[i] == st) {
            hc_note(log, "ok   implementation-defined outcome: %s", status_str(st));
            snprintf(res->impl_note, sizeof res->impl_note, "%s (allowed: %.100s)",
                     status_str(st), list);
            return;
        }
    hc_fail(log, "implementation-defined outcome %s is not in i_outcomes [%s]", d, list);
}

/* ---------------------------------------------------------- descriptor --- */

struct decoder {
    struct hurray_descriptor *d;
    struct hc_alloc_stats stats;
    struct hurray_allocator alloc;
    struct hurray_decode_options opt;
    struct hurray_error err;
};

static int decode(struct decoder *dc, const uint8_t *src, size_t len, size_t *consumed) {
    *consumed = 0;
    hurray_error_clear(&dc->err);
    return hurray_descriptor_decode(src, len, &dc->opt, dc->d, consumed, &dc->err);
}

/* Every prefix shorter than the descriptor must fail with TRUNCATED
 * (descriptor.md § Decoding order, steps 1 and 4). The prefix sits at the
 * end of its allocation. */
static void truncation_sweep(struct hc_log *log, struct decoder *dc, const uint8_t *data,
                             size_t encoded_len, struct hc_result *res) {
    uint8_t *buf = malloc(encoded_len ? encoded_len : 1);
    if (!buf) {
        hc_fail(log, "truncation sweep: out of memory");
        return;
    }
    size_t first_bad = 0;
    int first_status = 0;
    unsigned bad = 0;
    for (size_t k = 0; k < encoded_len; k++) {
        uint8_t *tail = buf + (encoded_len - k);
        size_t consumed;
        if (k) memcpy(tail, data, k);
        int st = decode(dc, tail, k, &consumed);
        hurray_descriptor_reset(dc->d);
        res->prefixes++;
        if (st == HURRAY_E_TRUNCATED) continue;
        if (bad++ == 0) {
            first_bad = k;
            first_status = st;
        }
        if (bad <= 16) hc_note(log, "DIFF truncation: prefix %zu -> %s", k, status_str(st));
    }
    res->prefixes_bad += bad;
    check_allocations(log, &dc->stats, "truncation sweep");
    if (bad)
        hc_fail(log, "truncation sweep: %u of %zu prefixes did not fail with TRUNCATED (first: "
                     "prefix of %zu bytes -> %s)",
                bad, encoded_len, first_bad, status_str(first_status));
    else
        hc_note(log, "ok   truncation sweep: %zu prefixes, all TRUNCATED", encoded_len);
    free(buf);
}

/* encode(decode(b)) == b[:encoded_len] (conventions.md § Canonical form). */
static void roundtrip_descriptor(struct hc_log *log, const struct hurray_descriptor *d,
                                 const uint8_t *data, size_t encoded_len) {
    struct hurray_error err;
    char msg[HC_MSG_MAX];
    size_t len = 0, written = 0;
    hurray_error_clear(&err);
    int st = hurray_descriptor_encoded_len(d, &len, &err);
    if (st != HURRAY_OK) {
        hc_fail(log, "roundtrip: hurray_descriptor_encoded_len failed: %s",
                describe(msg, sizeof msg, st, &err));
        return;
    }
    hc_cmp_u64(log, "roundtrip: hurray_descriptor_encoded_len", encoded_len, len);
    uint8_t *out = malloc(encoded_len ? encoded_len : 1);
    if (!out) {
        hc_fail(log, "roundtrip: out of memory");
        return;
    }
    hurray_error_clear(&err);
    st = hurray_descriptor_encode(d, out, encoded_len, &written, &err);
    if (st != HURRAY_OK)
        hc_fail(log, "roundtrip: hurray_descriptor_encode failed: %s",
                describe(msg, sizeof msg, st, &err));
    else
        hc_cmp_bytes(log, "roundtrip: encoded bytes", data, encoded_len, out,
                     written <= encoded_len ? written : encoded_len);
    free(out);
}

static void check_valid_descriptor(struct hc_log *log, const struct hc_vector *v,
                                   struct decoder *dc, const uint8_t *data,
                                   struct hc_result *res) {
    size_t consumed;
    char msg[HC_MSG_MAX];
    int st = decode(dc, data, (size_t)v->size, &consumed);
    size_t encoded_len = (size_t)v->desc->encoded_len;
    if (v->desc->encoded_len > v->size) {
        hc_fail(log, "decoded.encoded_len %" PRIu64 " exceeds the file size %" PRIu64,
                v->desc->encoded_len, v->size);
        encoded_len = (size_t)v->size;
    }
    if (st != HURRAY_OK) {
        hc_fail(log, "expected a valid descriptor, decode failed: %s",
                describe(msg, sizeof msg, st, &dc->err));
    } else {
        hc_compare_descriptor(log, v->desc, dc->d, consumed);
        if (v->roundtrip) roundtrip_descriptor(log, dc->d, data, encoded_len);
    }
    hurray_descriptor_reset(dc->d);
    check_allocations(log, &dc->stats, "decode");
    truncation_sweep(log, dc, data, encoded_len, res);
}

static void check_descriptor(struct hc_log *log, const struct hc_vector *v, const uint8_t *data,
                             struct hc_result *res) {
    struct decoder dc;
    memset(&dc, 0, sizeof dc);
    dc.d = malloc(sizeof *dc.d);
    if (!dc.d) {
        hc_fail(log, "out of memory");
        return;
    }
    hurray_descriptor_init(dc.d);
    hc_counting_allocator(&dc.alloc, &dc.stats);
    dc.opt.limits = &v->limits;
    dc.opt.allocator = &dc.alloc;
    if (v->expect == HC_EXPECT_VALID) {
        check_valid_descriptor(log, v, &dc, data, res);
    } else {
        size_t consumed;
        int st = decode(&dc, data, (size_t)v->size, &consumed);
        hurray_descriptor_reset(dc.d);
        check_allocations(log, &dc.stats, "decode");
        hc_check_failure_status(log, v, st, &dc.err, res);
    }
    free(dc.d);
}

/* -------------------------------------------------------- quantization --- */

static void check_quant(struct hc_log *log, const struct hc_vector *v, const uint8_t *data,
                        struct hc_result *res) {
    struct hurray_quant q;
    struct hurray_error err;
    char msg[HC_MSG_MAX];
    size_t size = (size_t)v->size;
    memset(&q, 0, sizeof q);
    hurray_error_clear(&err);
    int st = hurray_quant_decode(data, size, &q, &err);
    if (v->expect != HC_EXPECT_VALID) {
        hc_check_failure_status(log, v, st, &err, res);
        return;
    }
    if (st != HURRAY_OK) {
        hc_fail(log, "expected a valid quantization descriptor, decode failed: %s",
                describe(msg, sizeof msg, st, &err));
        return;
    }
    hc_compare_qmap(log, "decoded", v->qmap, &q);
    if (!v->roundtrip) return;
    uint8_t *out = malloc(size ? size : 1);
    size_t written = 0;
    if (!out) {
        hc_fail(log, "roundtrip: out of memory");
        return;
    }
    hurray_error_clear(&err);
    st = hurray_quant_encode(&q, out, size, &written, &err);
    if (st != HURRAY_OK)
        hc_fail(log, "roundtrip: hurray_quant_encode failed: %s", describe(msg, sizeof msg, st, &err));
    else
        hc_cmp_bytes(log, "roundtrip: encoded bytes", data, size, out, written <= size ? written : size);
    free(out);
}

/* ---------------------------------------------------------------- run --- */

static void label(struct hc_result *res, const cbor_item_t *item, size_t index) {
    const cbor_item_t *id = NULL;
    if (item && cbor_isa_map(item)) {
        size_t n = cbor_map_size(item);
        struct cbor_pair *pairs = cbor_map_handle(item);
        for (size_t i = 0; i < n; i++)
            if (hc_tstr_equals(pairs[i].key, "id") == 0) id = pairs[i].value;
    }
    if (id && cbor_isa_string(id) && cbor_string_is_definite(id) && cbor_string_length(id) > 0)
        hc_printable(res->id, sizeof res->id, (const char *)cbor_string_handle(id),
                     cbor_string_length(id));
    else
        snprintf(res->id, sizeof res->id, "vectors[%zu]", index);
}

void hc_check_vector(const struct hc_options *opt, const cbor_item_t *item, size_t index,
                     struct hc_result *res) {
    static const char *expects[] = {"valid", "invalid", "implementation-defined", "?"};
    struct hc_log log;
    struct hc_vector v;
    memset(res, 0, sizeof *res);
    label(res, item, index);
    hc_log_init(&log, opt->verbose ? stdout : NULL);
    if (log.out) fprintf(log.out, "== %s\n", res->id);
    int bad = hc_vector_parse(&log, item, opt->schema_version, &v);
    res->kind = v.kind;
    res->expect = v.expect;
    if (!bad) {
        hc_note(&log, "kind %s, expect %s%s%s", hc_kind_name(v.kind), expects[v.expect],
                v.expect == HC_EXPECT_INVALID ? " " : "", v.expect == HC_EXPECT_INVALID ? v.error_name : "");
        uint8_t *data = load_file(&log, opt->dir, &v);
        if (data && opt->testee) {
            hc_protocol_run(&log, opt, &v, data, res);
        } else if (data) {
            switch (v.kind) {
            case HC_KIND_DESCRIPTOR: check_descriptor(&log, &v, data, res); break;
            case HC_KIND_QUANT: check_quant(&log, &v, data, res); break;
            case HC_KIND_KV: hc_check_kv(&log, &v, data, res); break;
            case HC_KIND_FILE: hc_check_file(&log, &v, opt->dir, data, res); break;
            case HC_KIND_STREAM: hc_check_stream(&log, &v, data, res); break;
            default: hc_fail(&log, "internal: no check for this kind"); break;
            }
        }
        free(data);
    }
    hc_vector_free(&v);
    res->passed = log.failures == 0;
    if (log.failures > 1)
        snprintf(res->message, sizeof res->message, "%.*s (+%u more)", HC_MSG_MAX - 32, log.first,
                 log.failures - 1);
    else
        snprintf(res->message, sizeof res->message, "%s", log.first);
    if (log.out) fprintf(log.out, "%s %s\n", res->passed ? "PASS" : "FAIL", res->id);
}
