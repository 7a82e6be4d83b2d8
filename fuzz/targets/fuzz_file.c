/* Fuzz target: the HRRYFILE reader over a memory image (file-container.md).
 *
 * Oracle beyond "sanitizers are quiet" (conformance-and-fuzzing.md § 5.4):
 *  - every failure is a defined status with a matching error record;
 *  - an accepted file loads every entry, each buffer inside the image's
 *    data region and at its declared alignment;
 *  - an accepted file is canonical: re-writing its top-level items and KV map
 *    gives back exactly the input (version_minor aside: a 1.0 writer writes 0);
 *  - memory stays bounded: the reader's peak live bytes are at most a small
 *    multiple of the input plus a constant, and nothing is left allocated.
 * Two limit profiles keep trees and tables small and exercise the limits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond) {
    if (!cond) __builtin_trap(); /* an oracle failure is a finding */
}

struct counter {
    size_t live, peak;
};

static void *count_alloc(void *ctx, size_t n) {
    struct counter *c = ctx;
    void *p = malloc(n ? n : 1);
    if (p) {
        c->live += n;
        if (c->live > c->peak) c->peak = c->live;
    }
    return p;
}

static void count_free(void *ctx, void *p, size_t n) {
    struct counter *c = ctx;
    if (!p) return;
    check(c->live >= n);
    c->live -= n;
    free(p);
}

static void pick_limits(int profile, struct hurray_limits *lim) {
    hurray_limits_default(lim);
    lim->max_descriptor_bytes = 4096;
    lim->max_buffer_bytes = 1u << 20;
    lim->max_file_tensors = 64;
    lim->max_kv_bytes = 1u << 16;
    lim->max_kv_entries = 64;
    lim->max_composite_members = 16;
    lim->max_composite_depth = 4;
    if (profile == 1) {
        lim->max_name_bytes = 8;
        lim->max_composite_depth = 2;
        lim->max_composite_members = 3;
        lim->max_rank = 4;
    }
}

/* Every buffer of the tree at its declared alignment, within one image of
 * `size` bytes (the span of all of them), and readable to its end (ASan). */
struct span {
    uintptr_t lo, hi;
    unsigned sum;
};

static void check_item(const struct hurray_item *it, struct span *sp) {
    for (uint32_t k = 0; k < it->member_count; k++) check_item(it->members[k], sp);
    if (hurray_item_is_composite(it)) return;
    for (unsigned b = 0; b < it->descriptor->buffer_count; b++) {
        const struct hurray_item_buffer *buf = &it->buffers[b];
        uintptr_t a = (uintptr_t)1 << it->descriptor->buffers[b].alignment_log2;
        check(buf->size == it->descriptor->buffers[b].size);
        if (!buf->size) continue;
        check((uintptr_t)buf->data % a == 0);
        if ((uintptr_t)buf->data < sp->lo) sp->lo = (uintptr_t)buf->data;
        if ((uintptr_t)buf->data + buf->size > sp->hi) sp->hi = (uintptr_t)buf->data + buf->size;
        for (uint64_t j = 0; j < buf->size; j++) sp->sum += buf->data[j];
    }
}

/* Loads every entry (members too); the top-level items go to `top`. */
static size_t load_all(struct hurray_file *f, struct hurray_item **top, size_t size) {
    size_t count = hurray_file_entry_count(f), n = 0;
    struct span sp = {UINTPTR_MAX, 0, 0};
    for (size_t i = 0; i < count; i++) {
        struct hurray_item *it = NULL;
        struct hurray_error err;
        check(hurray_file_load_item(f, i, &it, &err) == HURRAY_OK);
        check_item(it, &sp);
        if (!hurray_file_entry_is_member(f, i)) top[n++] = it;
        else hurray_item_free(it);
    }
    check(n == hurray_file_top_level_count(f));
    check(sp.hi <= sp.lo || sp.hi - sp.lo <= size);
    return n;
}

/* Re-writing what was read gives the input back (minor version aside). */
static void check_canonical(const struct hurray_file *f, struct hurray_item **top, size_t n,
                            const uint8_t *data, size_t size) {
    struct hurray_file_entry *entries = malloc((n ? n : 1) * sizeof *entries);
    struct hurray_error err;
    if (!entries) return;
    for (size_t k = 0; k < n; k++) {
        entries[k].name = hurray_file_entry_name(f, hurray_file_top_level_entry(f, k));
        entries[k].item = top[k];
    }
    const struct hurray_kv *kv = hurray_file_kv(f);
    struct hurray_file_contents c = {entries, n, kv->entries, kv->count};
    uint64_t len = 0;
    check(hurray_file_encoded_len(&c, NULL, &len, &err) == HURRAY_OK);
    check(len == size);
    uint8_t *out = malloc(size);
    if (out) {
        size_t written = 0;
        check(hurray_file_encode(&c, NULL, out, size, &written, &err) == HURRAY_OK);
        check(written == size);
        check(memcmp(out, data, 10) == 0 && out[10] == 0 && out[11] == 0);
        check(memcmp(out + 12, data + 12, size - 12) == 0);
        free(out);
    }
    free(entries);
}

static void run_profile(const uint8_t *data, size_t size, int profile) {
    struct hurray_limits lim;
    struct counter ctr = {0, 0};
    struct hurray_allocator alloc = {count_alloc, count_free, &ctr};
    struct hurray_file_options opt = {&lim, &alloc, HURRAY_FILE_COPY, HURRAY_FILE_PARTS_ALL};
    struct hurray_file *f = NULL;
    struct hurray_error err;
    pick_limits(profile, &lim);
    int st = hurray_file_open_memory(data, size, &opt, &f, &err);
    check(st >= 0 && st < HURRAY_STATUS_COUNT);
    if (st != HURRAY_OK) {
        check(err.code == st && f == NULL && ctr.live == 0);
        return;
    }
    check(size >= HURRAY_PAGE_ALIGNMENT);
    struct hurray_item **top = malloc(hurray_file_entry_count(f) * sizeof *top + 1);
    if (!top) {
        hurray_file_close(f);
        return;
    }
    size_t n = load_all(f, top, size);
    check(ctr.peak <= 4 * size + (1u << 20));
    check_canonical(f, top, n, data, size);
    hurray_file_close(f); /* the items keep the image alive */
    struct span sp = {UINTPTR_MAX, 0, 0};
    for (size_t k = 0; k < n; k++) check_item(top[k], &sp);
    for (size_t k = 0; k < n; k++) hurray_item_free(top[k]);
    free(top);
    check(ctr.live == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (int profile = 0; profile < 2; profile++) run_profile(data, size, profile);
    return 0;
}
