/* Fuzz target: the stream reader over its descriptor and callback transports,
 * with the default limits (stream.md HR-STREAM-7, -11, -12, -16).
 *
 * The last input byte chooses how the bytes arrive; the rest is the stream:
 *   - bit 7 set: a pipe -- the stream is written into it (up to 60 KiB, what a
 *     pipe holds without a reader) and the write end closed; the reader reads
 *     the descriptor through libhurray's OS layer (poll, read, its waker);
 *   - bit 7 clear: a read callback that hands out short reads, their lengths
 *     drawn from a generator seeded by the input, so every part of a frame
 *     (header, descriptor, buffer, padding, commit steps) is cut everywhere.
 * Bit 6 sets require_end_frame; bit 5 makes the consumer keep every item until
 * the stream's end (clear: each is freed as soon as it is read; under
 * HURRAY_FUZZ_ALL_MODES=1, which the replays set, both), so alignment slack
 * that accumulates across kept items meets the reader's budget
 * (errors-and-limits.md HR-LIMIT-2). The limits are the defaults: a claim of up to
 * 16 GiB is accepted and must cost nothing until its bytes arrive (libFuzzer's
 * -malloc_limit_mb and -rss_limit_mb, set low by make fuzz-smoke, make any
 * amplification a finding).
 *
 * Oracles beyond "sanitizers are quiet":
 *   - the items and the outcome equal those of a memory reader over the same
 *     bytes (the transport and the read sizes change nothing); a failure is
 *     the same pinned status at the same offset, and sticky;
 *   - memory follows the input (issue 9's bound, stream.md HR-STREAM-8): the
 *     reader's allocator traps if its live bytes -- the reader's and every
 *     item's still alive, kept ones included -- exceed 8 x the input
 *     + what the default limits let a reader set aside ahead of the bytes
 *     (descriptor scratch, one buffer step, members tables, alignment slack:
 *     memory_bound) -- amplification beyond that is a finding;
 *   - nothing stays allocated once the items and the reader are freed. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bounded.h"
#include "hurray/hurray.h"
#include "modes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond) {
    if (!cond) __builtin_trap(); /* an oracle failure is a finding */
}

#define PIPE_BYTES (60u * 1024u)

/* ---- a bounded, counting allocator: fuzz/support/bounded.c ------------------ */

/* What may be live at once under the default limits (stream.md HR-STREAM-8,
 * -16; errors-and-limits.md HR-LIMIT-2): 8 x the input -- per frame an item
 * node and its descriptor's block (a few times the frame's bytes), the
 * buffers' bytes once more, the alignment slack those bytes pay for (for every
 * buffer still alive, the kept items' included), an annotation's section and
 * its decoded map -- plus what the limits let a reader set aside before the
 * bytes arrive, each term once (only the item being read has bytes to come):
 *   - 128 KiB: the reader, its budget block and its 64 KiB read-ahead;
 *   - a descriptor scratch of max_descriptor_bytes (stream.md § Reader limits);
 *   - one buffer under 1 MiB ahead of its data, allocated whole, with its
 *     alignment and header (larger ones are reserved address space, committed
 *     as bytes arrive: not allocations, HR-STREAM-16);
 *   - the members tables (max_composite_members pointers in all);
 *   - the slack past the bytes held: max_alignment_slack, and what one
 *     descriptor may declare ahead of its bytes (HR-LIMIT-2 counts a buffer's
 *     bytes as its descriptor is decoded: 255 buffers x (4096 - 64));
 *   - an annotation's name and the first 64 KiB step of its section
 *     (HR-STREAM-17). */
static size_t memory_bound(size_t input) {
    size_t ahead = 128 * 1024 + HURRAY_DEFAULT_MAX_DESCRIPTOR_BYTES + ((size_t)1 << 20) + 4096 +
                   32 + HURRAY_DEFAULT_MAX_COMPOSITE_MEMBERS * sizeof(void *) +
                   HURRAY_DEFAULT_MAX_ALIGNMENT_SLACK + HURRAY_MAX_BUFFERS * (4096 - 64) +
                   HURRAY_DEFAULT_MAX_NAME_BYTES + 64 * 1024;
    return 8 * input + ahead;
}

/* ---- the callback transport: short reads ----------------------------------------- */

struct trickle {
    const uint8_t *p;
    size_t n, pos;
    uint64_t rng;
};

static uint64_t next_rand(uint64_t *s) { /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

static int trickle_read(void *ctx, uint8_t *dst, size_t cap, size_t *got,
                        struct hurray_error *err) {
    struct trickle *t = ctx;
    (void)err;
    uint64_t r = next_rand(&t->rng);
    size_t want = (r & 3) == 0 ? cap : 1 + (size_t)((r >> 8) % 23); /* mostly short */
    size_t n = t->n - t->pos;
    if (n > want) n = want;
    if (n > cap) n = cap;
    memcpy(dst, t->p + t->pos, n);
    t->pos += n;
    *got = n;
    return HURRAY_OK;
}

/* ---- reading ---------------------------------------------------------------------- */

struct outcome {
    int status;
    size_t items;
    uint64_t offsets[64]; /* reader offset after each of the first 64 items */
    uint64_t end_offset;
    int end;
    struct hurray_error err;
};

static size_t kept_cap; /* the room in a keeping consumer's table (run) */

/* Reads to the end; a keeping consumer (`kept` not NULL, room for every item the input
 * can hold) keeps each item there, for the caller to free after the reader. */
static void read_all(struct hurray_stream_reader *r, struct outcome *o,
                     struct hurray_item **kept) {
    memset(o, 0, sizeof *o);
    for (;;) {
        struct hurray_item *it = NULL;
        o->status = hurray_stream_reader_next(r, &it, &o->err);
        check(o->status >= 0 && o->status < HURRAY_STATUS_COUNT);
        if (o->status != HURRAY_OK) {
            struct hurray_error again;
            check(it == NULL && o->err.code == o->status);
            check(hurray_stream_reader_next(r, &it, &again) == o->status);
            check(again.offset == o->err.offset && it == NULL);
            break;
        }
        if (!it) break;
        if (o->items < 64) o->offsets[o->items] = hurray_stream_reader_offset(r);
        if (kept) {
            check(o->items < kept_cap); /* an item shorter than 48 bytes would be a finding */
            kept[o->items] = it;
        }
        else
            hurray_item_destroy(it);
        o->items++;
    }
    o->end_offset = hurray_stream_reader_offset(r);
    o->end = hurray_stream_reader_end(r);
}

static void free_kept(struct hurray_item **kept, size_t n) {
    for (size_t i = 0; kept && i < n; i++) hurray_item_destroy(kept[i]);
}

static void run(const uint8_t *data, size_t size, uint8_t mode);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    uint8_t mode = data[size - 1];
    run(data, size - 1, mode); /* the stream is the rest */
    if (hurray_fuzz_all_modes()) run(data, size - 1, mode ^ 0x20);
    return 0;
}

static void run(const uint8_t *data, size_t size, uint8_t mode) {
    struct bounded b = {0, memory_bound(size)};
    /* every item is at least a frame header and a 40-byte descriptor */
    struct hurray_item **kept = NULL;
    if (mode & 0x20) {
        kept_cap = size / 48 + 1;
        kept = malloc(kept_cap * sizeof *kept);
        if (!kept) return;
    }
    struct hurray_allocator a = {bounded_alloc, bounded_free, &b};
    struct hurray_stream_reader_options opt;
    struct hurray_stream_reader *r = NULL;
    struct outcome want, got;

    hurray_stream_reader_options_init(&opt); /* default limits */
    opt.allocator = &a;
    opt.require_end_frame = (mode & 0x40) != 0;

    /* the reference: a memory reader over the same bytes */
    if (hurray_stream_reader_create_memory(data, size, &opt, &r, NULL) != HURRAY_OK) goto out;
    read_all(r, &want, kept);
    hurray_stream_reader_destroy(r);
    free_kept(kept, want.items); /* after the reader: the items hand their slack back */
    check(b.live == 0);

    if (mode & 0x80) { /* a pipe, filled and closed before reading */
        int fds[2];
        if (size > PIPE_BYTES || pipe(fds) != 0) goto out;
        size_t done = 0;
        while (done < size) {
            ssize_t n = write(fds[1], data + done, size - done);
            if (n <= 0) break;
            done += (size_t)n;
        }
        close(fds[1]);
        if (done != size) {
            close(fds[0]);
            goto out;
        }
        opt.timeout_ms = 10000; /* a reader that waited for more would be a finding */
        int st = hurray_stream_reader_create_fd(fds[0], &opt, &r, NULL);
        close(fds[0]); /* the reader holds its own duplicate */
        if (st != HURRAY_OK) goto out;
        read_all(r, &got, kept);
        hurray_stream_reader_destroy(r);
    } else {
        struct trickle *t = malloc(sizeof *t);
        if (!t) goto out;
        *t = (struct trickle){data, size, 0, UINT64_C(0x9E3779B97F4A7C15) ^ size ^ mode};
        for (size_t i = 0; i < size && i < 64; i++) t->rng = t->rng * 31u + data[i] + 1u;
        if (t->rng == 0) t->rng = 1;
        if (hurray_stream_reader_create_callback(trickle_read, t, &opt, &r, NULL) != HURRAY_OK) {
            free(t);
            goto out;
        }
        read_all(r, &got, kept);
        hurray_stream_reader_destroy(r);
        free(t);
    }
    free_kept(kept, got.items);
    check(b.live == 0);
    /* NOMEM (a platform that cannot reserve a claim) is the one outcome a transport may add */
    if (got.status == HURRAY_E_NOMEM || want.status == HURRAY_E_NOMEM) goto out;
    check(got.status == want.status && got.items == want.items && got.end == want.end);
    for (size_t i = 0; i < got.items && i < 64; i++) check(got.offsets[i] == want.offsets[i]);
    if (got.status == HURRAY_OK) {
        check(got.end_offset == want.end_offset);
    } else {
        check(got.err.has_offset && got.err.offset == want.err.offset);
        check(strcmp(got.err.field, want.err.field) == 0);
    }
out:
    free(kept);
}
