/* Fuzz target: the stream reader on an in-memory transport (stream.md).
 * fuzz_stream_fd drives the descriptor and callback transports, short reads
 * and default limits.
 *
 * Oracles beyond "sanitizers are quiet":
 *   - every accepted item is canonical: a memory writer re-writes it to
 *     exactly the bytes the reader consumed for it;
 *   - the end is the end of the input (end state EOF), or an end frame right
 *     before the reader's offset (END_FRAME; bytes after it unread, HR-STREAM-12);
 *   - every accepted item passes the composite validator under the reader's
 *     limits;
 *   - memory follows the input (issue 9's bound, stream.md HR-STREAM-8): the
 *     reader's allocator traps if its live bytes -- the reader's and every
 *     item's still alive -- ever exceed 8 x the input + what the limits let
 *     a reader set aside ahead of the bytes (memory_bound) -- amplification
 *     beyond that is a finding;
 *   - the consumer either frees each item once checked, or keeps every item
 *     until the stream's end (bit 1 of the last input byte; both, one after
 *     the other, under HURRAY_FUZZ_ALL_MODES=1, which the replays set): kept
 *     items are where alignment slack accumulates across items, which the
 *     reader's budget bounds (errors-and-limits.md HR-LIMIT-2);
 *   - a failure is a pinned status with a matching record, and is sticky.
 * Small limits keep the bound tight and exercise the limit checks. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bounded.h"
#include "hurray/hurray.h"
#include "modes.h"
#include "structure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static void check(int cond) {
    if (!cond) __builtin_trap(); /* an oracle failure is a finding */
}

#define MAX_BUFFER (64u * 1024u) /* below the commit step: every buffer is allocated */
#define MAX_MEMBERS 16u
#define MAX_DEPTH 4u
#define MAX_DESCRIPTOR 4096u
#define MAX_SLACK (16u * 1024u) /* max_alignment_slack (HR-LIMIT-2) */

/* ---- a bounded, counting allocator: fuzz/support/bounded.c ------------------ */

/* What may be live at once: 8 x the input -- per frame an item node and its
 * descriptor's block (a few times the frame's bytes), the buffers' bytes once
 * more, the alignment slack those bytes pay for (HR-LIMIT-2: for every buffer
 * still alive, the kept items' included), an annotation's section and its
 * decoded map -- plus what the limits let a reader set aside before the bytes
 * arrive, each term once (only the item being read has bytes still to come):
 *   - 16 KiB: the reader itself and its budget block (no read-ahead over memory);
 *   - a descriptor scratch of max_descriptor_bytes (stream.md § Reader limits);
 *   - one buffer ahead of its data, allocated whole below the commit step
 *     (HR-STREAM-16), with its alignment and header;
 *   - the members tables (max_composite_members pointers);
 *   - the slack past the bytes held: max_alignment_slack, and what one
 *     descriptor may declare ahead of its bytes (HR-LIMIT-2 counts a buffer's
 *     bytes as its descriptor is decoded: 255 buffers x (4096 - 64));
 *   - an annotation's name (max_name_bytes) and section (max_kv_bytes, here
 *     MAX_DESCRIPTOR; HR-STREAM-17). */
static size_t memory_bound(size_t input) {
    size_t ahead = 16 * 1024 + MAX_DESCRIPTOR + MAX_BUFFER + 4096 + 32 +
                   MAX_MEMBERS * sizeof(void *) + MAX_SLACK + HURRAY_MAX_BUFFERS * (4096 - 64) +
                   HURRAY_DEFAULT_MAX_NAME_BYTES + MAX_DESCRIPTOR;
    return 8 * input + ahead;
}

/* The items a keeping consumer holds until the end (the system allocator's: the consumer's
 * memory, not the reader's). */
struct kept {
    struct hurray_item **items;
    size_t n, cap;
};

static void keep(struct kept *k, struct hurray_item *it) {
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 64;
        struct hurray_item **more = realloc(k->items, cap * sizeof *more);
        check(more != NULL);
        k->items = more;
        k->cap = cap;
    }
    k->items[k->n++] = it;
}

static void kept_free(struct kept *k) {
    for (size_t i = 0; i < k->n; i++) hurray_item_destroy(k->items[i]);
    free(k->items);
}

/* ---- the oracle ---------------------------------------------------------------- */

/* The item, written again with the name and metadata the reader gave it (stream.md
 * HR-STREAM-17, -18: an annotation frame before it), is the input's bytes of it. */
static void check_canonical(const struct hurray_stream_reader *r, const struct hurray_item *it,
                            const uint8_t *want, size_t len, const struct hurray_limits *lim) {
    struct hurray_stream_writer *w = NULL;
    struct hurray_stream_annotation ann;
    const uint8_t *got = NULL;
    size_t n = 0;
    check(hurray_composite_validate(it, lim, NULL) == HURRAY_OK);
    hurray_stream_reader_annotation(r, &ann);
    check(!ann.name == !ann.name_len && !ann.metadata == !ann.metadata_count);
    if (hurray_stream_writer_create_memory(NULL, &w, NULL) != HURRAY_OK) return;
    int st = hurray_stream_writer_write_annotated(w, it, &ann, NULL);
    if (st == HURRAY_E_NOMEM) {
        hurray_stream_writer_destroy(w);
        return;
    }
    check(st == HURRAY_OK);
    check(hurray_stream_writer_getvalue(w, &got, &n, NULL) == HURRAY_OK);
    check(n == len && memcmp(got, want, len) == 0);
    hurray_stream_writer_destroy(w);
}

static void run(const uint8_t *data, size_t size, int keeping) {
    struct bounded b = {0, memory_bound(size)};
    struct kept k = {NULL, 0, 0};
    struct hurray_allocator a = {bounded_alloc, bounded_free, &b};
    struct hurray_limits lim;
    struct hurray_stream_reader_options opt;
    struct hurray_stream_reader *r = NULL;
    struct hurray_error err, again;
    uint64_t start = 0;

    hurray_limits_default(&lim);
    lim.max_buffer_bytes = MAX_BUFFER;
    lim.max_composite_members = MAX_MEMBERS;
    lim.max_composite_depth = MAX_DEPTH;
    lim.max_descriptor_bytes = MAX_DESCRIPTOR;
    lim.max_kv_bytes = MAX_DESCRIPTOR; /* an annotation's section (HR-STREAM-17) */
    lim.max_alignment_slack = MAX_SLACK;
    hurray_stream_reader_options_init(&opt);
    opt.limits = &lim;
    opt.allocator = &a;
    opt.cross_machine = size > 0 && (data[size - 1] & 1); /* both settings get exercised */
    if (hurray_stream_reader_create_memory(data, size, &opt, &r, NULL) != HURRAY_OK) return;
    for (;;) {
        struct hurray_item *it = NULL;
        int st = hurray_stream_reader_next(r, &it, &err);
        check(st >= 0 && st < HURRAY_STATUS_COUNT);
        if (st != HURRAY_OK) {
            check(it == NULL && err.code == st && err.has_offset && err.offset <= size);
            check(hurray_stream_reader_next(r, &it, &again) == st && again.offset == err.offset);
            break;
        }
        if (!it) { /* the end: of the input, or an end frame (HR-STREAM-12, -13) */
            uint64_t off = hurray_stream_reader_offset(r);
            int end = hurray_stream_reader_end(r);
            if (end == HURRAY_STREAM_END_EOF) {
                check(off == size && off == start);
            } else {
                check(end == HURRAY_STREAM_END_FRAME && off == start + 8 && off <= size);
                check(memcmp(data + start, "HRSF\x03\0\0\0", 8) == 0);
            }
            break;
        }
        uint64_t end = hurray_stream_reader_offset(r);
        check(end > start && end <= size && (end - start) % 8 == 0);
        check_canonical(r, it, data + start, (size_t)(end - start), &lim);
        if (keeping)
            keep(&k, it);
        else
            hurray_item_destroy(it);
        start = end;
    }
    hurray_stream_reader_destroy(r);
    kept_free(&k); /* after the reader: the items hand their slack back to its budget */
    check(b.live == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int keeping = size > 0 && (data[size - 1] & 2);
    run(data, size, keeping);
    if (hurray_fuzz_all_modes()) run(data, size, !keeping);
    return 0;
}

/* Field-level mutation of the descriptors in the input (fuzz/support/structure.c); it
 * keeps every descriptor's length (the other parts point at byte offsets). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    return hurray_fuzz_mutate(data, size, max_size, seed, 0);
}
