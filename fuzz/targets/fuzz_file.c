/* Fuzz target: the HRRYFILE reader (file-container.md), over a memory image and,
 * through a temporary file, opened by path in copy and in mmap mode.
 *
 * Oracle beyond "sanitizers are quiet":
 *  - every failure is a defined status with a matching error record;
 *  - an accepted file loads every entry, each buffer inside the image's
 *    data region and at its declared alignment;
 *  - an accepted file is canonical: re-writing its top-level items and KV map
 *    gives back exactly the input (version_minor aside: a 1.0 writer writes 0);
 *  - the three ways in (memory, copy, mmap) agree: the same status, and for an
 *    accepted file the same bytes in every loaded buffer (HR-FILE-8); reading
 *    the parts alone (HR-FILE-9) accepts what the whole accepts, and a
 *    refused file is refused by a part with the same status;
 *  - mapped buffers are copy-on-write: writing every one of them leaves the
 *    file's bytes as they were (HR-FILE-11);
 *  - memory stays bounded: the reader's peak live bytes are at most a small
 *    multiple of the input plus a constant (descriptor records counted apart
 *    under the default limits), and nothing is left allocated.
 * Three limit profiles: two keep trees and tables small and exercise the
 * limits (memory only), the third is the defaults (memory, the parts alone,
 * copy and mmap).
 *
 * Which ways in each input takes. Every input goes through the memory image
 * (hurray_file_create_memory) under all three profiles. The cross-checks of the
 * defaults -- the two parts alone, and the file on disk opened by path in copy
 * and in mmap mode -- run on every input of a replay (HURRAY_FUZZ_ALL_MODES=1:
 * the regression driver sets it, so make fuzz-replay and fuzz-msan-replay;
 * fuzz-smoke, the campaign's ASan+UBSan replay and fuzz-promote pass it), and
 * while fuzzing (the campaign, fuzz-afl, a run by hand) on one input
 * in SAMPLE_EVERY (16), those whose hash of every byte and of the length is 0
 * modulo 16. Run on every input they held the target to 2-5 k executions per
 * second (fuzz/README.md has the figures).
 * Why the sample finds what running them always would:
 *  - the disk modes differ from the memory image only in how the bytes arrive
 *    (the header and index read ahead in steps, regions read into scratch
 *    buffers, the loads as scatter reads or a mapping); what is parsed and
 *    checked is the same code, which the memory path runs on every input;
 *  - the choice is a function of the bytes alone, never random: an input takes
 *    the same paths every time, so coverage feedback is stable (an input kept
 *    for what its disk run reached is always run on disk again) and a finding
 *    reproduces from its bytes;
 *  - it depends on every byte, so inputs that differ anywhere are chosen
 *    independently: the fuzzer reaches a disagreement through many distinct
 *    inputs (mutations of the bytes that cause it), of which each is checked
 *    with probability 1/16; k of them all escape with probability (15/16)^k
 *    (under 1 % for k = 72), and a campaign makes millions;
 *  - every input the campaign keeps, and every vector, is replayed in all
 *    modes (the replays above), so a corpus input is never only sampled.
 * Minimising a finding (libFuzzer -minimize_crash, afl-tmin) changes the bytes
 * and so the choice: run it with HURRAY_FUZZ_ALL_MODES=1 (fuzz-promote does). */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hurray/hurray.h"
#include "modes.h"
#include "structure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static void check(int cond) {
    if (!cond) __builtin_trap(); /* an oracle failure is a finding */
}

/* Counts live bytes, and apart from them the descriptor records (allocations
 * of exactly sizeof(struct hurray_descriptor)), whose size is the descriptor
 * module's business, not the reader's. */
struct counter {
    size_t live, peak, records, peak_own;
};

static void *count_alloc(void *ctx, size_t n) {
    struct counter *c = ctx;
    void *p = malloc(n ? n : 1);
    if (p) {
        c->live += n;
        if (n == sizeof(struct hurray_descriptor)) c->records += n;
        if (c->live > c->peak) c->peak = c->live;
        if (c->live - c->records > c->peak_own) c->peak_own = c->live - c->records;
    }
    return p;
}

static void count_free(void *ctx, void *p, size_t n) {
    struct counter *c = ctx;
    if (!p) return;
    check(c->live >= n);
    c->live -= n;
    if (n == sizeof(struct hurray_descriptor)) c->records -= n;
    free(p);
}

static void pick_limits(int profile, struct hurray_limits *lim) {
    hurray_limits_default(lim);
    if (profile == 2) return; /* the defaults */
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

/* Every buffer of the tree at its declared alignment and readable to its end
 * (ASan); `sum` digests the bytes, `span` collects the address range. */
struct span {
    uintptr_t lo, hi;
    uint64_t sum;
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
        for (uint64_t j = 0; j < buf->size; j++) sp->sum = sp->sum * 31 + buf->data[j];
    }
}

/* Writes 0xA5 over every buffer of the tree (copy-on-write when mapped). */
static void scribble(const struct hurray_item *it) {
    for (uint32_t k = 0; k < it->member_count; k++) scribble(it->members[k]);
    if (hurray_item_is_composite(it)) return;
    for (unsigned b = 0; b < it->descriptor->buffer_count; b++)
        if (it->buffers[b].size) memset(it->buffers[b].data, 0xA5, (size_t)it->buffers[b].size);
}

/* Loads every entry (members too) at once; the top-level items go to `top`,
 * the digest of all bytes to *sum. */
static size_t load_all(struct hurray_file *f, struct hurray_item **top, uint64_t *sum) {
    size_t count = hurray_file_entry_count(f), n = 0;
    struct span sp = {UINTPTR_MAX, 0, 0};
    size_t *idx = malloc((count + 1) * sizeof *idx);
    struct hurray_item **all = malloc((count + 1) * sizeof *all);
    struct hurray_error err;
    check(idx && all);
    for (size_t i = 0; i < count; i++) idx[i] = i;
    check(hurray_file_load_items(f, idx, count, all, &err) == HURRAY_OK);
    for (size_t i = 0; i < count; i++) {
        check_item(all[i], &sp);
        if (!hurray_file_entry_is_member(f, i)) top[n++] = all[i];
        else hurray_item_destroy(all[i]);
    }
    check(n == hurray_file_top_level_count(f));
    free(idx);
    free(all);
    *sum = sp.sum;
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

/* ---- the input as a file ----------------------------------------------------------------- */

/* One temporary file per process, kept open and rewritten in place for each input that takes
 * the disk paths (ftruncate + pwrite: no file created, opened or closed by the target per
 * input), in RAM where the system has /dev/shm. The library opens it by path, as a caller's
 * file, twice per input (copy and mmap): by /proc/self/fd/N once its name is removed. */
static char temp[64];
static int temp_fd = -1, temp_failed;
static uint8_t *back; /* check_file_unchanged's buffer, grown as needed */
static size_t back_cap;

static void remove_temp(void) {
    if (temp[0]) unlink(temp);
}

static const char *write_temp(const uint8_t *data, size_t size) {
    if (temp_fd < 0) {
        struct stat st;
        if (temp_failed) return NULL;
        const char *dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
        snprintf(temp, sizeof temp, "%s/hurray-fuzz-file-XXXXXX", dir);
        temp_fd = mkstemp(temp);
        if (temp_fd < 0) {
            temp[0] = 0;
            temp_failed = 1;
            return NULL;
        }
        /* Where /proc/self/fd reopens the open file, its name goes at once, so a process
         * killed mid-run (afl-fuzz ends its targets with SIGKILL) leaves nothing behind. */
        char proc[sizeof temp];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", temp_fd);
        if (access(proc, F_OK) == 0 && unlink(temp) == 0) memcpy(temp, proc, sizeof temp);
        else atexit(remove_temp);
    }
    if (ftruncate(temp_fd, (off_t)size) != 0) return NULL;
    for (size_t at = 0; at < size;) {
        ssize_t w = pwrite(temp_fd, data + at, size - at, (off_t)at);
        if (w <= 0) return NULL;
        at += (size_t)w;
    }
    return temp;
}

/* The file on disk still holds exactly the input (HR-FILE-11: mapped buffers are private). */
static void check_file_unchanged(const uint8_t *data, size_t size) {
    size_t got = 0;
    if (back_cap < size + 1) {
        free(back);
        back_cap = size + 1;
        back = malloc(back_cap);
        check(back != NULL);
    }
    for (ssize_t r;
         got <= size && (r = pread(temp_fd, back + got, size + 1 - got, (off_t)got)) > 0;)
        got += (size_t)r;
    check(got == size && memcmp(back, data, size) == 0);
}

/* ---- which inputs are cross-checked ------------------------------------------------------ */

/* Live fuzzing runs the parts alone, copy and mmap on one input in SAMPLE_EVERY, chosen by a
 * hash of all the input's bytes; a replay (HURRAY_FUZZ_ALL_MODES set and not "0": the
 * regression driver sets it) on every input. The header comment says why that is sound. */
#define SAMPLE_EVERY 16u

/* Mixes every byte and the length; four independent lanes, so that hashing a 16 KiB input
 * costs about a microsecond. */
static uint64_t input_hash(const uint8_t *data, size_t size) {
    const uint64_t k = 0xFF51AFD7ED558CCDu;
    uint64_t h[4] = {0x9E3779B97F4A7C15u ^ size, 0xC2B2AE3D27D4EB4Fu, 0x165667B19E3779F9u,
                     0x27D4EB2F165667C5u};
    size_t i = 0;
    for (; i + 32 <= size; i += 32)
        for (int l = 0; l < 4; l++) {
            uint64_t w;
            memcpy(&w, data + i + 8 * l, 8);
            h[l] = (h[l] ^ w) * k;
            h[l] ^= h[l] >> 29;
        }
    uint64_t r = h[0] ^ (h[1] * 3) ^ (h[2] * 5) ^ (h[3] * 7);
    for (; i < size; i++) r = (r ^ data[i]) * 0x100000001B3u;
    r ^= r >> 33;
    r *= 0xC4CEB9FE1A85EC53u;
    return r ^ (r >> 33);
}

static int sampled(const uint8_t *data, size_t size) {
    return hurray_fuzz_all_modes() || input_hash(data, size) % SAMPLE_EVERY == 0;
}

/* ---- one way in ---------------------------------------------------------------------------- */

enum { VIA_MEMORY, VIA_COPY, VIA_MMAP };

struct outcome {
    int status;
    size_t top;
    uint64_t sum;
};

static struct outcome run_once(const uint8_t *data, size_t size, const char *path, int via,
                               int parts, int profile) {
    struct hurray_limits lim;
    struct counter ctr = {0, 0, 0, 0};
    struct hurray_allocator alloc = {count_alloc, count_free, &ctr};
    struct hurray_file_options opt = {&lim, &alloc, via == VIA_MMAP ? HURRAY_FILE_MMAP
                                                                    : HURRAY_FILE_COPY,
                                      parts};
    struct hurray_file *f = NULL;
    struct hurray_error err;
    struct outcome o = {0, 0, 0};
    pick_limits(profile, &lim);
    o.status = via == VIA_MEMORY ? hurray_file_create_memory(data, size, &opt, &f, &err)
                                 : hurray_file_create_path(path, &opt, &f, &err);
    check(o.status >= 0 && o.status < HURRAY_STATUS_COUNT);
    if (o.status != HURRAY_OK) {
        check(err.code == o.status && f == NULL && ctr.live == 0);
        return o;
    }
    check(size >= HURRAY_PAGE_ALIGNMENT);
    struct hurray_item **top = malloc(hurray_file_entry_count(f) * sizeof *top + 1);
    if (!top) {
        hurray_file_destroy(f);
        return o;
    }
    o.top = load_all(f, top, &o.sum);
    if (profile == 2) check(ctr.peak_own <= 4 * size + (1u << 20));
    else check(ctr.peak <= 4 * size + (1u << 20));
    if (via == VIA_MEMORY && parts == HURRAY_FILE_PARTS_ALL)
        check_canonical(f, top, o.top, data, size);
    hurray_file_destroy(f); /* the items keep their bytes alive */
    struct span sp = {UINTPTR_MAX, 0, 0};
    for (size_t k = 0; k < o.top; k++) check_item(top[k], &sp);
    if (via == VIA_MMAP)
        for (size_t k = 0; k < o.top; k++) scribble(top[k]);
    for (size_t k = 0; k < o.top; k++) hurray_item_destroy(top[k]);
    free(top);
    check(ctr.live == 0);
    return o;
}

static void run_profile(const uint8_t *data, size_t size, int profile) {
    struct outcome m = run_once(data, size, NULL, VIA_MEMORY, HURRAY_FILE_PARTS_ALL, profile);
    if (profile != 2) return;
    /* the cross-checks of the defaults: a sample while fuzzing, every input in a replay */
    if (!sampled(data, size)) return;
    /* the parts alone: each accepts what the whole accepts; a refusal is a part's */
    struct outcome pi = run_once(data, size, NULL, VIA_MEMORY, HURRAY_FILE_PARTS_INDEX, 2);
    struct outcome pk = run_once(data, size, NULL, VIA_MEMORY, HURRAY_FILE_PARTS_KV, 2);
    if (m.status == HURRAY_OK) check(pi.status == HURRAY_OK && pk.status == HURRAY_OK);
    else check(pi.status == m.status || pk.status == m.status);
    if (m.status == HURRAY_OK) check(pi.top == m.top && pi.sum == m.sum);
    const char *path = write_temp(data, size);
    if (!path) return;
    for (int via = VIA_COPY; via <= VIA_MMAP; via++) {
        struct outcome o = run_once(data, size, path, via, HURRAY_FILE_PARTS_ALL, 2);
        check(o.status == m.status);
        check(o.top == m.top && o.sum == m.sum);
    }
    check_file_unchanged(data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (int profile = 0; profile < 3; profile++) run_profile(data, size, profile);
    return 0;
}

/* Field-level mutation of the descriptors in the input (fuzz/support/structure.c); it
 * keeps every descriptor's length (the other parts point at byte offsets). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    return hurray_fuzz_mutate(data, size, max_size, seed, 0);
}
