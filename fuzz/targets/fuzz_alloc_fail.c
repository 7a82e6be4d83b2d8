/* Fuzz target: allocation failure, driven by the input. Every allocation
 * libhurray makes goes through the caller's allocator (hurray/alloc.h); this
 * target hands each reader an allocator that fails on an allocation the input
 * chooses, so every NOMEM path of the readers runs.
 *
 * Input: byte 0 picks the reader (bits 0-1: descriptor decode, KV decode,
 * file over memory + loading every entry, stream over memory reading every
 * item) and the failure mode (bit 7: every allocation from the chosen one on
 * fails; clear: only that one); bytes 1-2 (little endian) choose which
 * allocation fails, modulo the number a run without failures makes; the rest
 * is the reader's input, read under small limits (as fuzz_file's first
 * profile) so that trees and tables stay small.
 *
 * Oracles beyond "sanitizers are quiet":
 *   - the run without failures and the run with one are deterministic: same
 *     status, unless an allocation failed, when the status is NOMEM or what
 *     the run without failures gave (a reader may stop earlier for another
 *     reason before it needed the memory); an injected failure never turns a
 *     refusal into an acceptance;
 *   - a failure is a defined status with a matching error record;
 *   - nothing stays allocated once the reader and its results are freed, and
 *     nothing is freed that was not allocated (the allocator counts both). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond) {
    if (!cond) __builtin_trap(); /* an oracle failure is a finding */
}

/* ---- the failure-injecting allocator ------------------------------------------------- */

struct failing {
    size_t live_bytes, live_blocks;
    uint64_t calls;    /* allocations asked for so far */
    uint64_t fail_at;  /* 1-based index of the allocation to fail; 0: none */
    int sticky;        /* every allocation from fail_at on fails */
    int failed;        /* an allocation was refused */
};

static void *failing_alloc(void *ctx, size_t n) {
    struct failing *f = ctx;
    f->calls++;
    if (f->fail_at && (f->calls == f->fail_at || (f->sticky && f->calls > f->fail_at))) {
        f->failed = 1;
        return NULL;
    }
    void *p = malloc(n ? n : 1);
    if (p) {
        f->live_bytes += n;
        f->live_blocks++;
    }
    return p;
}

static void failing_free(void *ctx, void *p, size_t n) {
    struct failing *f = ctx;
    if (!p) return;
    check(f->live_blocks > 0 && f->live_bytes >= n);
    f->live_bytes -= n;
    f->live_blocks--;
    free(p);
}

/* ---- the readers ----------------------------------------------------------------------- */

static void small_limits(struct hurray_limits *lim) {
    hurray_limits_default(lim);
    lim->max_descriptor_bytes = 4096;
    lim->max_buffer_bytes = 1u << 20;
    lim->max_file_tensors = 64;
    lim->max_kv_bytes = 1u << 16;
    lim->max_kv_entries = 64;
    lim->max_composite_members = 16;
    lim->max_composite_depth = 4;
}

static int status_ok(int st, const struct hurray_error *err) {
    check(st >= 0 && st < HURRAY_STATUS_COUNT);
    if (st != HURRAY_OK) check(err->code == st);
    return st;
}

static int read_descriptor(const uint8_t *p, size_t n, const struct hurray_allocator *a,
                           const struct hurray_limits *lim) {
    struct hurray_decode_options opt = {lim, a};
    struct hurray_descriptor d;
    struct hurray_error err;
    size_t consumed = 0;
    hurray_descriptor_init(&d);
    d.allocator = a;
    int st = status_ok(hurray_descriptor_decode(p, n, &opt, &d, &consumed, &err), &err);
    hurray_descriptor_reset(&d);
    return st;
}

static int read_kv(const uint8_t *p, size_t n, const struct hurray_allocator *a,
                   const struct hurray_limits *lim) {
    struct hurray_decode_options opt = {lim, a};
    struct hurray_kv kv;
    struct hurray_error err;
    hurray_kv_init(&kv);
    int st = status_ok(hurray_kv_decode(p, n, &opt, &kv, &err), &err);
    hurray_kv_reset(&kv);
    return st;
}

static int read_file(const uint8_t *p, size_t n, const struct hurray_allocator *a,
                     const struct hurray_limits *lim) {
    struct hurray_file_options opt = {lim, a, HURRAY_FILE_COPY, HURRAY_FILE_PARTS_ALL};
    struct hurray_file *f = NULL;
    struct hurray_error err;
    int st = status_ok(hurray_file_create_memory(p, n, &opt, &f, &err), &err);
    if (st != HURRAY_OK) {
        check(f == NULL);
        return st;
    }
    size_t count = hurray_file_entry_count(f);
    size_t *idx = malloc((count + 1) * sizeof *idx);
    struct hurray_item **items = malloc((count + 1) * sizeof *items);
    check(idx && items);
    for (size_t i = 0; i < count; i++) idx[i] = i;
    st = status_ok(hurray_file_load_items(f, idx, count, items, &err), &err);
    if (st == HURRAY_OK)
        for (size_t i = 0; i < count; i++) hurray_item_destroy(items[i]);
    free(idx);
    free(items);
    hurray_file_destroy(f);
    return st;
}

static int read_stream(const uint8_t *p, size_t n, const struct hurray_allocator *a,
                       const struct hurray_limits *lim) {
    struct hurray_stream_reader_options opt;
    struct hurray_stream_reader *r = NULL;
    struct hurray_error err;
    hurray_stream_reader_options_init(&opt);
    opt.limits = lim;
    opt.allocator = a;
    int st = status_ok(hurray_stream_reader_create_memory(p, n, &opt, &r, &err), &err);
    if (st != HURRAY_OK) return st;
    for (;;) {
        struct hurray_item *it = NULL;
        st = status_ok(hurray_stream_reader_next(r, &it, &err), &err);
        if (st != HURRAY_OK || !it) break;
        hurray_item_destroy(it);
    }
    hurray_stream_reader_destroy(r);
    return st;
}

typedef int (*reader_fn)(const uint8_t *, size_t, const struct hurray_allocator *,
                         const struct hurray_limits *);
static const reader_fn readers[4] = {read_descriptor, read_kv, read_file, read_stream};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    reader_fn read = readers[data[0] & 3];
    int sticky = (data[0] & 0x80) != 0;
    unsigned pick = (unsigned)data[1] | (unsigned)data[2] << 8;
    const uint8_t *p = data + 3;
    size_t n = size - 3;
    struct hurray_limits lim;
    small_limits(&lim);

    /* without failures: how many allocations, and the outcome */
    struct failing clean = {0, 0, 0, 0, 0, 0};
    struct hurray_allocator ca = {failing_alloc, failing_free, &clean};
    int want = read(p, n, &ca, &lim);
    check(clean.live_blocks == 0 && clean.live_bytes == 0);
    if (clean.calls == 0) return 0;

    struct failing inj = {0, 0, 0, 1 + pick % clean.calls, sticky, 0};
    struct hurray_allocator ia = {failing_alloc, failing_free, &inj};
    int got = read(p, n, &ia, &lim);
    check(inj.live_blocks == 0 && inj.live_bytes == 0);
    if (!inj.failed) check(got == want);
    else check(got == HURRAY_E_NOMEM || (got == want && want != HURRAY_OK));
    return 0;
}
