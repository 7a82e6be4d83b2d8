/* Logging of comparisons and the final report.
 *
 * Output (harness/README.md § Output):
 *   kind          valid     invalid   impl-defined
 *   descriptor    12/12     40/41     2/2 (ok 1, LIMIT 1)
 *   quantization  6/6       9/9       0/0
 *   truncation sweep: 1234 prefixes, 0 not TRUNCATED
 *   FAIL <id>: <what differed>
 *   N passed, N failed
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* ---------------------------------------------------------------- log --- */

void hc_log_init(struct hc_log *log, FILE *verbose_out) {
    log->out = verbose_out;
    log->failures = 0;
    log->first[0] = '\0';
}

static void vrecord(struct hc_log *log, const char *fmt, va_list ap) {
    char msg[HC_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (log->failures == 0) snprintf(log->first, sizeof log->first, "%s", msg);
    log->failures++;
    if (log->out) fprintf(log->out, "  FAIL %s\n", msg);
}

void hc_fail(struct hc_log *log, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vrecord(log, fmt, ap);
    va_end(ap);
}

void hc_note(struct hc_log *log, const char *fmt, ...) {
    if (!log->out) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("  ", log->out);
    vfprintf(log->out, fmt, ap);
    fputc('\n', log->out);
    va_end(ap);
}

/* One compared field: verbose prints it either way; a difference is recorded. */
static void field(struct hc_log *log, const char *path, int same, const char *want,
                  const char *got) {
    if (log->out)
        fprintf(log->out, "  %-4s %s: expected %s, got %s\n", same ? "ok" : "DIFF", path, want,
                got);
    if (same) return;
    char msg[HC_MSG_MAX];
    snprintf(msg, sizeof msg, "%s: expected %s, got %s", path, want, got);
    if (log->failures == 0) snprintf(log->first, sizeof log->first, "%s", msg);
    log->failures++;
}

void hc_cmp_field(struct hc_log *log, const char *path, int same, const char *want,
                  const char *got) {
    field(log, path, same, want, got);
}

void hc_cmp_u64(struct hc_log *log, const char *path, uint64_t want, uint64_t got) {
    char w[32], g[32];
    snprintf(w, sizeof w, "%" PRIu64, want);
    snprintf(g, sizeof g, "%" PRIu64, got);
    field(log, path, want == got, w, g);
}

void hc_cmp_i64(struct hc_log *log, const char *path, int64_t want, int64_t got) {
    char w[32], g[32];
    snprintf(w, sizeof w, "%" PRId64, want);
    snprintf(g, sizeof g, "%" PRId64, got);
    field(log, path, want == got, w, g);
}

void hc_cmp_bool(struct hc_log *log, const char *path, int want, int got) {
    field(log, path, !want == !got, want ? "true" : "false", got ? "true" : "false");
}

static const char *quoted(char *buf, size_t cap, const char *s) {
    if (!s) return "null";
    char esc[HC_NAME_MAX * 4];
    snprintf(buf, cap, "\"%s\"", hc_printable(esc, sizeof esc, s, strlen(s)));
    return buf;
}

void hc_cmp_str(struct hc_log *log, const char *path, const char *want, const char *got) {
    char w[HC_NAME_MAX * 4 + 3], g[HC_NAME_MAX * 4 + 3];
    int same = (!want && !got) || (want && got && strcmp(want, got) == 0);
    field(log, path, same, quoted(w, sizeof w, want), quoted(g, sizeof g, got));
}

void hc_cmp_opt_u64(struct hc_log *log, const char *path, int want_null, uint64_t want,
                    int got_null, uint64_t got) {
    char w[32] = "null", g[32] = "null";
    if (!want_null) snprintf(w, sizeof w, "%" PRIu64, want);
    if (!got_null) snprintf(g, sizeof g, "%" PRIu64, got);
    int same = want_null ? got_null : (!got_null && want == got);
    field(log, path, same, w, g);
}

void hc_cmp_f64bits(struct hc_log *log, const char *path, uint64_t want, uint64_t got) {
    char w[64], g[64];
    double dw, dg;
    memcpy(&dw, &want, sizeof dw);
    memcpy(&dg, &got, sizeof dg);
    snprintf(w, sizeof w, "0x%016" PRIx64 " (%.17g)", want, dw);
    snprintf(g, sizeof g, "0x%016" PRIx64 " (%.17g)", got, dg);
    field(log, path, want == got, w, g);
}

void hc_cmp_f32bits(struct hc_log *log, const char *path, uint32_t want, uint32_t got) {
    char w[48], g[48];
    float fw, fg;
    memcpy(&fw, &want, sizeof fw);
    memcpy(&fg, &got, sizeof fg);
    snprintf(w, sizeof w, "0x%08" PRIx32 " (%.9g)", want, (double)fw);
    snprintf(g, sizeof g, "0x%08" PRIx32 " (%.9g)", got, (double)fg);
    field(log, path, want == got, w, g);
}

void hc_cmp_text(struct hc_log *log, const char *path, const char *want, size_t want_len,
                 const char *got, size_t got_len) {
    char w[160] = "null", g[160] = "null", esc[128];
    int same = (!want && !got) ||
               (want && got && want_len == got_len && (want_len == 0 || memcmp(want, got, want_len) == 0));
    if (want)
        snprintf(w, sizeof w, "\"%s\"%s", hc_printable(esc, 100, want, want_len > 80 ? 80 : want_len),
                 want_len > 80 ? "..." : "");
    if (got)
        snprintf(g, sizeof g, "\"%s\"%s", hc_printable(esc, 100, got, got_len > 80 ? 80 : got_len),
                 got_len > 80 ? "..." : "");
    field(log, path, same, w, g);
}

void hc_cmp_sha256(struct hc_log *log, const char *path, const uint8_t *want, const uint8_t *got,
                   size_t len) {
    uint8_t digest[32];
    char w[65], g[65];
    hc_sha256(got, len, digest);
    for (int i = 0; i < 32; i++) {
        snprintf(w + 2 * i, 3, "%02x", want[i]);
        snprintf(g + 2 * i, 3, "%02x", digest[i]);
    }
    field(log, path, memcmp(want, digest, 32) == 0, w, g);
}

void hc_cmp_presence(struct hc_log *log, const char *path, int want_present, int got_present) {
    field(log, path, !want_present == !got_present, want_present ? "present" : "null",
          got_present ? "present" : "null (absent)");
}

static size_t first_difference(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
    size_t n = alen < blen ? alen : blen;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return i;
    return n;
}

void hc_cmp_bytes(struct hc_log *log, const char *path, const uint8_t *want, size_t want_len,
                  const uint8_t *got, size_t got_len) {
    size_t at = first_difference(want, want_len, got, got_len);
    int same = want_len == got_len && at == want_len;
    char w[48], g[48];
    snprintf(w, sizeof w, "%zu bytes", want_len);
    snprintf(g, sizeof g, "%zu bytes", got_len);
    if (same) {
        field(log, path, 1, w, g);
        return;
    }
    char msg[HC_MSG_MAX];
    if (at < want_len && at < got_len)
        snprintf(msg, sizeof msg, "%s: bytes differ at offset %zu (expected %02x, got %02x; %zu vs %zu bytes)",
                 path, at, want[at], got[at], want_len, got_len);
    else
        snprintf(msg, sizeof msg, "%s: length differs (expected %zu bytes, got %zu; equal up to offset %zu)",
                 path, want_len, got_len, at);
    if (log->failures == 0) snprintf(log->first, sizeof log->first, "%s", msg);
    log->failures++;
    if (log->out) {
        fprintf(log->out, "  DIFF %s\n", msg);
        hc_hex_window(log->out, "       ", want, want_len, got, got_len, at);
    }
}

void hc_hex_window(FILE *out, const char *indent, const uint8_t *want, size_t want_len,
                   const uint8_t *got, size_t got_len, size_t at) {
    const size_t before = 16, after = 16;
    size_t start = at > before ? at - before : 0;
    size_t end = at + after;
    size_t longest = want_len > got_len ? want_len : got_len;
    if (end > longest) end = longest;
    if (end <= at) end = at + 1;
    const uint8_t *rows[2] = {want, got};
    size_t lens[2] = {want_len, got_len};
    const char *labels[2] = {"expected", "got     "};
    for (int r = 0; r < 2; r++) {
        fprintf(out, "%s%s @%06zx:", indent, labels[r], start);
        for (size_t i = start; i < end; i++) {
            const char *open = i == at ? "[" : " ";
            if (i < lens[r])
                fprintf(out, "%s%02x%s", open, rows[r][i], i == at ? "]" : "");
            else
                fprintf(out, "%s--%s", open, i == at ? "]" : "");
        }
        fputc('\n', out);
    }
}

const char *hc_printable(char *buf, size_t cap, const char *s, size_t len) {
    size_t o = 0;
    if (cap == 0) return buf;
    for (size_t i = 0; i < len && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            buf[o++] = (char)c;
        } else if (c >= 0x80) {
            buf[o++] = (char)c; /* UTF-8 from the manifest (libcbor validated it) */
        } else {
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
        }
    }
    buf[o] = '\0';
    return buf;
}

/* ------------------------------------------------------------- report --- */

struct hc_report {
    struct hc_result *results;
    size_t n, cap;
    char **manifest_failures;
    size_t nmf;
    char **list_failures; /* problems of the failure list itself */
    size_t nlf;
};

struct hc_report *hc_report_create(void) { return calloc(1, sizeof(struct hc_report)); }

void hc_report_free(struct hc_report *r) {
    if (!r) return;
    free(r->results);
    for (size_t i = 0; i < r->nmf; i++) free(r->manifest_failures[i]);
    free(r->manifest_failures);
    for (size_t i = 0; i < r->nlf; i++) free(r->list_failures[i]);
    free(r->list_failures);
    free(r);
}

int hc_report_add(struct hc_report *r, const struct hc_result *res) {
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        struct hc_result *p = realloc(r->results, cap * sizeof *p);
        if (!p) return -1;
        r->results = p;
        r->cap = cap;
    }
    r->results[r->n++] = *res;
    return 0;
}

static int add_line(char ***lines, size_t *n, const char *fmt, va_list ap) {
    char msg[HC_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    char **p = realloc(*lines, (*n + 1) * sizeof *p);
    if (!p) return -1;
    *lines = p;
    size_t len = strlen(msg) + 1;
    char *copy = malloc(len);
    if (!copy) return -1;
    memcpy(copy, msg, len);
    (*lines)[(*n)++] = copy;
    return 0;
}

int hc_report_manifest_failure(struct hc_report *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = add_line(&r->manifest_failures, &r->nmf, fmt, ap);
    va_end(ap);
    return rc;
}

int hc_report_list_failure(struct hc_report *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = add_line(&r->list_failures, &r->nlf, fmt, ap);
    va_end(ap);
    return rc;
}

static int cmp_strp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int hc_report_write_failures(const struct hc_report *r, const char *path, const char *header) {
    const char **ids = malloc((r->n ? r->n : 1) * sizeof *ids);
    size_t m = 0;
    if (!ids) return -1;
    for (size_t i = 0; i < r->n; i++)
        if (!r->results[i].passed) ids[m++] = r->results[i].id;
    qsort(ids, m, sizeof *ids, cmp_strp);
    FILE *f = fopen(path, "w");
    if (!f) {
        free(ids);
        return -1;
    }
    if (header && *header) fprintf(f, "# %s\n", header);
    for (size_t i = 0; i < m; i++) fprintf(f, "%s\n", ids[i]);
    free(ids);
    return fclose(f) == 0 ? 0 : -1;
}

struct cell {
    unsigned passed, total;
};

/* Implementation-defined outcomes, counted by status (0 = ok). */
struct impl_tally {
    unsigned count[HURRAY_STATUS_COUNT + 1]; /* last: outside the table */
};

static void print_impl(FILE *out, const struct cell *c, const struct impl_tally *t) {
    char buf[256];
    int o = snprintf(buf, sizeof buf, "%u/%u", c->passed, c->total);
    int first = 1;
    for (int s = 0; s <= HURRAY_STATUS_COUNT && o > 0 && (size_t)o < sizeof buf; s++) {
        if (!t->count[s]) continue;
        const char *name = s == 0 ? "ok" : s == HURRAY_STATUS_COUNT ? "other" : hurray_status_name(s);
        o += snprintf(buf + o, sizeof buf - (size_t)o, "%s%s %u", first ? " (" : ", ", name,
                      t->count[s]);
        first = 0;
    }
    if (!first && o > 0 && (size_t)o < sizeof buf) snprintf(buf + o, sizeof buf - (size_t)o, ")");
    fprintf(out, "%s", buf);
}

/* Sweeps, per kind: what a prefix must answer. */
static const char *sweep_rule(enum hc_kind k) {
    return k == HC_KIND_STREAM ? "not as stream.md HR-STREAM-4 and -13 say (the end with "
                                 "end_frame past the end frame, with eof at item boundaries, "
                                 "TRUNCATED elsewhere)"
                               : "not TRUNCATED";
}

int hc_report_print(const struct hc_report *r, FILE *out) {
    return hc_report_print_opts(r, out, NULL);
}

int hc_report_print_opts(const struct hc_report *r, FILE *out, const struct hc_report_options *o) {
    const struct hc_failure_list *fl = o ? o->failure_list : NULL;
    struct cell cells[HC_KIND_COUNT][HC_EXPECT_COUNT];
    struct impl_tally tally[HC_KIND_COUNT];
    unsigned passed = 0, failed = 0;
    unsigned prefixes[HC_KIND_COUNT] = {0}, prefixes_bad[HC_KIND_COUNT] = {0};
    unsigned swept[HC_KIND_COUNT] = {0}, sampled[HC_KIND_COUNT] = {0};
    unsigned any_kind[HC_KIND_COUNT] = {0};
    memset(cells, 0, sizeof cells);
    memset(tally, 0, sizeof tally);
    for (size_t i = 0; i < r->n; i++) {
        const struct hc_result *res = &r->results[i];
        enum hc_kind k = res->kind;
        enum hc_expect e = res->expect;
        if ((unsigned)k >= HC_KIND_COUNT || e == HC_EXPECT_UNKNOWN) k = HC_KIND_UNKNOWN;
        if ((unsigned)e >= HC_EXPECT_COUNT) e = HC_EXPECT_UNKNOWN;
        cells[k][e].total++;
        cells[k][e].passed += res->passed != 0;
        any_kind[k]++;
        passed += res->passed != 0;
        failed += res->passed == 0;
        prefixes[k] += res->prefixes;
        prefixes_bad[k] += res->prefixes_bad;
        if (res->prefixes) swept[k]++;
        if (res->sweep_sampled) sampled[k]++;
        if (e == HC_EXPECT_IMPL && res->passed) {
            int s = res->impl_outcome;
            tally[k].count[(s >= 0 && s < HURRAY_STATUS_COUNT) ? s : HURRAY_STATUS_COUNT]++;
        }
    }
    fprintf(out, "%-14s %-12s %-12s %s\n", "kind", "valid", "invalid", "impl-defined");
    for (int k = 0; k < HC_KIND_COUNT; k++) {
        /* schema-1 kinds always have a row; the others when the corpus has them */
        if (k == HC_KIND_UNKNOWN || hc_kind_min_schema((enum hc_kind)k) > 1)
            if (!any_kind[k]) continue;
        char v[32], n[32];
        snprintf(v, sizeof v, "%u/%u", cells[k][HC_EXPECT_VALID].passed,
                 cells[k][HC_EXPECT_VALID].total);
        snprintf(n, sizeof n, "%u/%u", cells[k][HC_EXPECT_INVALID].passed,
                 cells[k][HC_EXPECT_INVALID].total);
        fprintf(out, "%-14s %-12s %-12s ",
                k == HC_KIND_UNKNOWN ? "unclassified" : hc_kind_name((enum hc_kind)k), v, n);
        print_impl(out, &cells[k][HC_EXPECT_IMPL], &tally[k]);
        if (cells[k][HC_EXPECT_UNKNOWN].total)
            fprintf(out, "  unparseable %u", cells[k][HC_EXPECT_UNKNOWN].total);
        fputc('\n', out);
    }
    /* The descriptor line keeps its schema-1 form; other kinds get one line
     * each when they swept anything. */
    fprintf(out, "truncation sweep: %u prefixes, %u not TRUNCATED\n", prefixes[HC_KIND_DESCRIPTOR],
            prefixes_bad[HC_KIND_DESCRIPTOR]);
    for (int k = HC_KIND_KV; k < HC_KIND_UNKNOWN; k++) {
        if (!swept[k]) continue;
        fprintf(out, "truncation sweep (%s): %u prefixes of %u vectors (%u sampled), %u %s\n",
                hc_kind_name((enum hc_kind)k), prefixes[k], swept[k], sampled[k], prefixes_bad[k],
                sweep_rule((enum hc_kind)k));
    }
    /* implementation-defined outcomes, one line each: reported, not judged
     * beyond "allowed" */
    for (size_t i = 0; i < r->n; i++)
        if (r->results[i].expect == HC_EXPECT_IMPL && r->results[i].passed)
            fprintf(out, "IMPL %s: %s\n", r->results[i].id, r->results[i].impl_note);
    for (size_t i = 0; i < r->nmf; i++) fprintf(out, "FAIL manifest: %s\n", r->manifest_failures[i]);
    for (size_t i = 0; i < r->nlf; i++) fprintf(out, "FAIL failure-list: %s\n", r->list_failures[i]);
    unsigned xfail = 0, unexpected = 0, xpass = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct hc_result *res = &r->results[i];
        int listed = hc_failure_list_has(fl, res->id);
        if (!res->passed && listed) {
            xfail++;
            if (o && o->verbose) fprintf(out, "XFAIL %s: %s\n", res->id, res->message);
        } else if (!res->passed) {
            unexpected++;
            fprintf(out, "FAIL %s: %s\n", res->id, res->message);
        } else if (listed) {
            xpass++;
            fprintf(out, "XPASS %s: passed, but the failure list names it (remove it from the "
                         "list)\n", res->id);
        }
    }
    failed += (unsigned)r->nmf;
    if (fl)
        fprintf(out, "failure list: %u expected failures, %u unexpected failures, %u unexpected "
                     "passes\n", xfail, unexpected + (unsigned)r->nmf + (unsigned)r->nlf, xpass);
    fprintf(out, "%u passed, %u failed\n", passed, failed);
    if (!fl) return (failed == 0 && r->n > 0) ? 0 : 1;
    return (unexpected == 0 && xpass == 0 && r->nmf == 0 && r->nlf == 0 && r->n > 0) ? 0 : 1;
}
