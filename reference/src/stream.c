/* Streams: reader and writer of self-delimiting frames. docs/spec/stream.md
 *
 * The reader is one push-parser (STYLE 6): a stage enum, a `want` answer
 * (where the next bytes go and how many the stage still requires) and an
 * `advance` that runs the stage's checks once its part is complete, in
 * stream.md § Decoding order. The transports (memory, a duplicated fd, a
 * caller's callback) are thin drivers that only move bytes into the place
 * `want` names: buffer data goes straight into the item's buffers, small
 * parts through a read-ahead block. Nothing whose size the stream states is
 * allocated before the limit on it has passed (HR-STREAM-7).
 *
 * The writer checks a whole item before writing any of it, then emits the
 * canonical frames through a staging block (fd, callback) or into its
 * growable buffer (memory), flushing at the end of every item; finishing
 * emits the end frame (HR-STREAM-12).
 *
 * Descriptor transports go through the one OS layer (os.h): reads and writes
 * with a timeout and an interrupt hook (HR-STREAM-14), and a waker through
 * which a close from another thread ends a blocked read (HR-STREAM-15). This
 * file includes no OS header. */
#include <errno.h> /* ETIMEDOUT, ECANCELED: the error numbers os.h reports */
#include <stdatomic.h>
#include <stdio.h>

#include "item_internal.h"
#include "kv_internal.h"
#include "os.h"

#if defined(__STDC_NO_ATOMICS__)
#error "stream.c needs C11 atomics (HR-STREAM-15: close from another thread)"
#endif

#define READ_AHEAD_BYTES (64u * 1024u)
#define WRITE_STAGING_BYTES (64u * 1024u)
#define DESC_PREFIX_BYTES 16u /* what hurray_descriptor_peek_length needs */
#define MAX_DEPTH HURRAY_MAX_COMPOSITE_DEPTH_FORMAT
/* An annotation's KV bytes are committed as they arrive: the first step, then
 * doubling (HR-STREAM-17: at most twice what arrived plus 64 KiB). */
#define ANN_KV_FIRST_STEP (64u * 1024u)
#define ANN_HEAD_REST (HURRAY_STREAM_ANNOTATION_HEAD_BYTES - HURRAY_STREAM_FRAME_HEADER_BYTES)

static const uint8_t zeros[8];
static const uint8_t end_frame[HURRAY_STREAM_END_FRAME_BYTES] = {'H', 'R', 'S', 'F',
                                                                 HURRAY_FRAME_END, 0, 0, 0};

/* A wait on a descriptor from a caller's timeout (0: none) and hook. */
static int wait_from_options(int timeout_ms, int (*hook)(void *), void *ctx,
                             struct hri_os_wait *w, struct hurray_error *err) {
    HR_FAIL_IF(timeout_ms < 0, err, HURRAY_E_ARGUMENT, "timeout_ms",
               "timeout_ms: %d is negative (0 waits forever, HR-STREAM-14)", timeout_ms);
    memset(w, 0, sizeof *w);
    w->timeout_ms = timeout_ms > 0 ? timeout_ms : -1;
    w->on_eintr = hook;
    w->ctx = ctx;
    return HURRAY_OK;
}

/* A timeout's record says what passed (HR-STREAM-14); the status stays IO. */
static int name_timeout(int status, const struct hri_os_wait *w, const char *what,
                        struct hurray_error *e) {
    if (status == HURRAY_E_IO && e && e->sys_errno == ETIMEDOUT) {
        hri_fail(e, HURRAY_E_IO, "transport",
                 "%s: nothing for %d ms, the timeout (HR-STREAM-14): the peer stalled", what,
                 w->timeout_ms);
        e->sys_errno = ETIMEDOUT;
    }
    return status;
}

/* ==== reader ============================================================== */

/* One stage per part of a frame (stream.md § Decoding order). */
enum stage {
    ST_FRAME,       /* the 8-byte frame header */
    ST_DESC_PREFIX, /* the descriptor's first 16 bytes: its length */
    ST_DESC_BODY,   /* the rest of the descriptor */
    ST_BUFFER,      /* buffer data, straight into the item's buffer */
    ST_PAD,         /* the buffer's zero padding */
    ST_ANN_HEAD,    /* an annotation frame's bytes 8..23 (HR-STREAM-17) */
    ST_ANN_NAME,    /* its name and padding */
    ST_ANN_KV,      /* its KV section, committed as it arrives */
    ST_ITEM_DONE,   /* a top-level item is complete */
    ST_END,         /* clean end of the stream */
    ST_FAILED,      /* sticky error */
    ST_CLOSED
};

struct open_head {
    struct hurray_item *item;
    uint32_t next; /* members complete so far */
};

struct memory_source {
    const uint8_t *src;
    size_t len;
    size_t pos;
};

/* Who is inside the reader (HR-STREAM-15): the bits of `state`. */
#define IN_NEXT 1u   /* a next is running */
#define CLOSING 2u   /* close was called; the transport goes with whoever leaves last */

struct hurray_stream_reader {
    const struct hurray_allocator *allocator;
    struct hurray_limits limits;
    int cross_machine;
    int require_end_frame;

    /* shared with other threads: close, offset, end (HR-STREAM-15) */
    atomic_uint state;
    _Atomic uint64_t offset_seen; /* r->pos, published */
    atomic_int end;               /* enum hurray_stream_end, published by next */
    int ended;                    /* the parser's end state, not yet published */

    /* transport */
    hurray_stream_read_fn read;
    void *read_ctx;
    hri_os_fd fd;
    struct hri_os_waker *waker; /* fd readers: a close wakes a blocked read */
    struct hri_os_wait wait;
    struct memory_source mem;
    uint8_t *ahead; /* read-ahead block (fd, callback); NULL for memory */
    size_t ahead_pos, ahead_len;

    /* parser */
    enum stage stage;
    uint64_t pos;         /* stream offset of the next byte */
    uint64_t frame_start; /* stream offset of the current frame */
    size_t filled;        /* bytes of the current part in place */
    uint8_t frame_header[HURRAY_STREAM_FRAME_HEADER_BYTES];
    uint8_t desc_prefix[DESC_PREFIX_BYTES];
    uint8_t *desc; /* descriptor scratch, <= max_descriptor_bytes */
    size_t desc_cap;
    uint32_t desc_len;
    uint8_t pad[8];
    size_t pad_len;
    struct hurray_item *root;    /* the top-level item being read */
    struct hurray_item *tensor;  /* the tensor whose buffers are being read */
    unsigned buffer_index;
    uint64_t committed; /* bytes of the current buffer committed (HR-STREAM-16) */
    struct open_head heads[MAX_DEPTH]; /* open composites, outermost first */
    uint32_t depth;
    uint64_t member_total; /* HR-COMP-9, over the current top-level item */
    /* HR-LIMIT-2: the slack of this reader's buffers still alive (NULL when
     * max_alignment_slack is 2^64 - 1: nothing to count), and the index of the
     * top-level item being read, which a refusal names */
    struct hri_slack_budget *budget;
    uint64_t items_started;

    /* annotations (HR-STREAM-17, -18): the one being read or pending (read,
     * its item next), and the one of the item next() last yielded */
    uint8_t ann_head[ANN_HEAD_REST];
    uint32_t ann_name_len;
    uint64_t ann_kv_len;
    uint8_t *ann_name; /* name + padding; swapped with cur_name at yield */
    size_t ann_name_cap;
    uint8_t *ann_kv; /* the section's bytes so far */
    size_t ann_kv_cap;
    int ann_pending;
    struct hurray_kv pend_kv;
    uint8_t *cur_name;
    size_t cur_name_cap;
    uint32_t cur_name_len;
    struct hurray_kv cur_kv;

    int status; /* sticky failure */
    struct hurray_error error;
};

/* ---- options and creation ---------------------------------------------------- */

void hurray_stream_reader_options_init(struct hurray_stream_reader_options *o) {
    if (o) memset(o, 0, sizeof *o);
}

static int memory_read(void *ctx, uint8_t *dst, size_t cap, size_t *got,
                       struct hurray_error *err) {
    struct memory_source *m = ctx;
    size_t n = m->len - m->pos < cap ? m->len - m->pos : cap;
    (void)err;
    if (n) memcpy(dst, m->src + m->pos, n);
    m->pos += n;
    *got = n;
    return HURRAY_OK;
}

static int reader_new(const struct hurray_stream_reader_options *opt, int read_ahead,
                      struct hurray_stream_reader **out, struct hurray_error *err) {
    const struct hurray_allocator *a = opt ? opt->allocator : NULL;
    struct hurray_stream_reader *r = hri_alloc(a, sizeof *r);
    HR_FAIL_IF(!r, err, HURRAY_E_NOMEM, "reader", "stream reader: cannot allocate %zu bytes",
               sizeof *r);
    memset(r, 0, sizeof *r);
    r->allocator = a;
    r->fd = HRI_OS_NO_FD;
    hri_limits_effective(opt ? opt->limits : NULL, &r->limits);
    r->cross_machine = opt ? opt->cross_machine != 0 : 0;
    r->require_end_frame = opt ? opt->require_end_frame != 0 : 0;
    atomic_init(&r->state, 0u);
    atomic_init(&r->offset_seen, 0u);
    atomic_init(&r->end, HURRAY_STREAM_NOT_ENDED);
    hurray_kv_init(&r->pend_kv);
    hurray_kv_init(&r->cur_kv);
    r->stage = ST_FRAME;
    if (r->limits.max_alignment_slack != UINT64_MAX &&
        hri_slack_budget_new(a, &r->budget, err) != HURRAY_OK) {
        hri_free(a, r, sizeof *r);
        return HURRAY_E_NOMEM;
    }
    if (read_ahead) {
        r->ahead = hri_alloc(a, READ_AHEAD_BYTES);
        if (!r->ahead) {
            hri_slack_budget_release(r->budget);
            hri_free(a, r, sizeof *r);
            return hri_fail(err, HURRAY_E_NOMEM, "reader",
                            "stream reader: cannot allocate its %u-byte read-ahead block",
                            READ_AHEAD_BYTES);
        }
    }
    *out = r;
    return HURRAY_OK;
}

static int check_reader_out(struct hurray_stream_reader **out, struct hurray_error *err) {
    HR_FAIL_IF(!out, err, HURRAY_E_ARGUMENT, "out", "stream reader: out is NULL");
    *out = NULL;
    return HURRAY_OK;
}

int hurray_stream_reader_create_memory(const uint8_t *src, size_t len,
                                       const struct hurray_stream_reader_options *opt,
                                       struct hurray_stream_reader **out,
                                       struct hurray_error *err) {
    HR_TRY(check_reader_out(out, err));
    HR_FAIL_IF(!src && len, err, HURRAY_E_ARGUMENT, "src", "stream reader: src is NULL");
    HR_TRY(reader_new(opt, 0, out, err));
    (*out)->mem.src = src;
    (*out)->mem.len = len;
    (*out)->read = memory_read;
    (*out)->read_ctx = &(*out)->mem;
    return HURRAY_OK;
}

/* The descriptor transport: one read through the OS layer, with the
 * reader's timeout, interrupt hook and waker (HR-STREAM-11, -14, -15). */
static int fd_read(void *ctx, uint8_t *dst, size_t cap, size_t *got, struct hurray_error *err) {
    struct hurray_stream_reader *r = ctx;
    int st = hri_os_read(r->fd, dst, cap, got, &r->wait, "transport", err);
    return name_timeout(st, &r->wait, "stream read", err);
}

int hurray_stream_reader_create_fd(int fd, const struct hurray_stream_reader_options *opt,
                                   struct hurray_stream_reader **out, struct hurray_error *err) {
    hri_os_fd dup = HRI_OS_NO_FD;
    struct hri_os_wait w;
    HR_TRY(check_reader_out(out, err));
    HR_TRY(wait_from_options(opt ? opt->timeout_ms : 0, opt ? opt->on_interrupt : NULL,
                             opt ? opt->interrupt_ctx : NULL, &w, err));
    HR_FAIL_IF(fd < 0, err, HURRAY_E_ARGUMENT, "fd", "fd: %d is not a descriptor", fd);
    HR_TRY(hri_os_dup((hri_os_fd)fd, &dup, "transport", err));
    int status = reader_new(opt, 1, out, err);
    if (status == HURRAY_OK) status = hri_os_waker_create(&w.waker, err);
    if (status != HURRAY_OK) {
        hurray_stream_reader_destroy(*out);
        *out = NULL;
        hri_os_close(&dup, NULL, NULL);
        return status;
    }
    (*out)->fd = dup;
    (*out)->waker = w.waker;
    (*out)->wait = w;
    (*out)->read = fd_read;
    (*out)->read_ctx = *out;
    return HURRAY_OK;
}

int hurray_stream_reader_create_callback(hurray_stream_read_fn read, void *ctx,
                                         const struct hurray_stream_reader_options *opt,
                                         struct hurray_stream_reader **out,
                                         struct hurray_error *err) {
    HR_TRY(check_reader_out(out, err));
    HR_FAIL_IF(!read, err, HURRAY_E_ARGUMENT, "read", "stream reader: read callback is NULL");
    HR_TRY(reader_new(opt, 1, out, err));
    (*out)->read = read;
    (*out)->read_ctx = ctx;
    return HURRAY_OK;
}

/* ---- failure --------------------------------------------------------------------- */

/* Drops the annotation being read or pending (HR-STREAM-18). */
static void drop_annotation(struct hurray_stream_reader *r) {
    r->ann_pending = 0;
    r->ann_name_len = 0;
    hurray_kv_reset(&r->pend_kv);
    hri_free(r->allocator, r->ann_kv, r->ann_kv_cap);
    r->ann_kv = NULL;
    r->ann_kv_cap = 0;
}

/* Drops the item being read (items already yielded are the caller's). */
static void drop_partial(struct hurray_stream_reader *r) {
    drop_annotation(r);
    hurray_item_destroy(r->root);
    r->root = NULL;
    r->tensor = NULL;
    r->depth = 0;
    r->member_total = 0;
}

/* Records `status` (whose record is *e) as the reader's sticky failure, at
 * stream offset `offset` unless the record already has one. */
static int reader_fail(struct hurray_stream_reader *r, int status, struct hurray_error *e,
                       uint64_t offset) {
    if (!e->has_offset) {
        e->has_offset = 1;
        e->offset = offset;
    }
    drop_partial(r);
    r->status = status;
    r->error = *e;
    r->stage = ST_FAILED;
    return status;
}

/* Gives a failure without an input offset the stream offset `offset`. */
static int at(int status, struct hurray_error *e, uint64_t offset) {
    if (status != HURRAY_OK && !e->has_offset) {
        e->has_offset = 1;
        e->offset = offset;
    }
    return status;
}

/* ---- the parser: where the next bytes go (the `required` answer) ------------------------ */

static void parser_want(struct hurray_stream_reader *r, uint8_t **dst, size_t *n) {
    switch (r->stage) {
    case ST_FRAME:
        *dst = r->frame_header + r->filled;
        *n = sizeof r->frame_header - r->filled;
        break;
    case ST_DESC_PREFIX:
        *dst = r->desc_prefix + r->filled;
        *n = sizeof r->desc_prefix - r->filled;
        break;
    case ST_DESC_BODY:
        *dst = r->desc + r->filled;
        *n = r->desc_len - r->filled;
        break;
    case ST_BUFFER: {
        const struct hurray_item_buffer *b = &r->tensor->buffers[r->buffer_index];
        *dst = b->data + r->filled;
        *n = (size_t)b->size - r->filled; /* reserved at its size: it fits size_t */
        break;
    }
    case ST_PAD:
        *dst = r->pad + r->filled;
        *n = r->pad_len - r->filled;
        break;
    case ST_ANN_HEAD:
        *dst = r->ann_head + r->filled;
        *n = sizeof r->ann_head - r->filled;
        break;
    case ST_ANN_NAME:
        *dst = r->ann_name + r->filled;
        *n = (size_t)r->ann_name_len + hri_pad8(r->ann_name_len) - r->filled;
        break;
    case ST_ANN_KV: /* up to what is committed; part_complete commits more */
        *dst = r->ann_kv + r->filled;
        *n = r->ann_kv_cap - r->filled;
        break;
    default:
        *dst = NULL;
        *n = 0;
        break;
    }
}

/* ---- the parser: checks at the end of each part ----------------------------------------- */

/* Step 2: magic, kind, reserved bytes 5-7 (HR-STREAM-2). */
static int check_frame_header(const uint8_t *h, uint8_t *kind, struct hurray_error *e) {
    HR_FAIL_IF(memcmp(h, HURRAY_STREAM_MAGIC, 4) != 0, e, HURRAY_E_BAD_MAGIC, "frame.magic",
               "frame.magic: %02X %02X %02X %02X is not \"HRSF\" (HR-STREAM-2)", h[0], h[1],
               h[2], h[3]);
    *kind = h[4];
    int named = *kind == HURRAY_FRAME_TENSOR || *kind == HURRAY_FRAME_COMPOSITE ||
                *kind == HURRAY_FRAME_END || *kind == HURRAY_FRAME_ANNOTATION;
    HR_TRY(hri_check_tag_kind(hri_tag_kind_plain(*kind, named), *kind, 0, "frame.kind", e));
    for (unsigned i = 5; i < HURRAY_STREAM_FRAME_HEADER_BYTES; i++)
        HR_FAIL_IF(h[i] != 0, e, HURRAY_E_RESERVED_NONZERO, "frame.reserved",
                   "frame.reserved: byte %u is 0x%02X, not zero (HR-STREAM-2)", i, h[i]);
    return HURRAY_OK;
}

/* Step 3, first half: the length, against max_descriptor_bytes, before the
 * scratch that will hold the descriptor is sized. */
static int on_desc_prefix(struct hurray_stream_reader *r, struct hurray_error *e) {
    uint32_t len = 0;
    int status = hurray_descriptor_peek_length(r->desc_prefix, sizeof r->desc_prefix, &r->limits,
                                               &len, e);
    if (status != HURRAY_OK && e->has_offset) e->offset += r->frame_start + 8;
    HR_TRY(at(status, e, r->frame_start + 8));
    if (len > r->desc_cap) {
        hri_free(r->allocator, r->desc, r->desc_cap);
        r->desc_cap = 0;
        r->desc = hri_alloc(r->allocator, len);
        HR_FAIL_IF(!r->desc, e, HURRAY_E_NOMEM, "descriptor",
                   "descriptor: cannot allocate %lu bytes", (unsigned long)len);
        r->desc_cap = len;
    }
    memcpy(r->desc, r->desc_prefix, sizeof r->desc_prefix);
    r->desc_len = len;
    return HURRAY_OK;
}

/* HR-STREAM-6: kind 0x02 if and only if the layout is composite. */
static int check_frame_kind(uint8_t kind, const struct hurray_descriptor *d,
                            struct hurray_error *e) {
    int composite = d->layout.tag == HURRAY_LAYOUT_COMPOSITE;
    if (composite == (kind == HURRAY_FRAME_COMPOSITE)) return HURRAY_OK;
    return hri_fail(e, HURRAY_E_CONSTRAINT, "frame.kind",
                    "frame.kind: 0x%02X (%s frame), but the descriptor's layout is %s "
                    "(HR-STREAM-6)",
                    kind, kind == HURRAY_FRAME_COMPOSITE ? "composite head" : "tensor",
                    hurray_layout_name(d->layout.tag) ? hurray_layout_name(d->layout.tag)
                                                      : "invalid");
}

/* HR-STREAM-5: with cross_machine, every buffer is producer_synced. */
static int check_cross_machine(const struct hurray_descriptor *d, struct hurray_error *e) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned i = 0; i < d->buffer_count; i++) {
        if (d->buffers[i].sync_mode == HURRAY_SYNC_PRODUCER_SYNCED) continue;
        hri_fieldf(f, "buffers[%u].sync_mode", i);
        return hri_fail(e, HURRAY_E_COMBINATION, f,
                        "%s: %s, but a cross-machine stream carries only producer_synced "
                        "buffers (HR-STREAM-5)",
                        f, hurray_sync_mode_name(d->buffers[i].sync_mode));
    }
    return HURRAY_OK;
}

/* Puts a new item where it belongs (the top level or the open head's next
 * slot) before it is decoded, so a failure frees it with the tree. */
static int new_node(struct hurray_stream_reader *r, struct hurray_item **node,
                    struct hurray_error *e) {
    HR_TRY(hri_item_new(r->allocator, node, e));
    if (r->depth == 0) {
        r->root = *node;
        r->member_total = 0;
        r->items_started++;
    } else {
        struct open_head *top = &r->heads[r->depth - 1];
        top->item->members[top->next] = *node;
    }
    return HURRAY_OK;
}

/* Step 3, second half: the strict decode, under the reader's limits. The
 * record's descriptor offsets become stream offsets. */
static int decode_node(struct hurray_stream_reader *r, struct hurray_descriptor *d,
                       struct hurray_error *e) {
    struct hurray_decode_options opt = {&r->limits, r->allocator};
    size_t consumed = 0;
    int status = hurray_descriptor_decode(r->desc, r->desc_len, &opt, d, &consumed, e);
    if (status != HURRAY_OK && e->has_offset) e->offset += r->frame_start + 8;
    return at(status, e, r->frame_start + 8);
}

/* Step 6: the composite rules for this descriptor in its place. */
static int check_place(const struct hurray_stream_reader *r, const struct hurray_descriptor *d,
                       struct hurray_error *e) {
    if (r->depth == 0) return hri_composite_check_top(d, e);
    const struct open_head *top = &r->heads[r->depth - 1];
    return hri_composite_check_member(top->item->descriptor, top->next, d, e);
}

static void begin_frame(struct hurray_stream_reader *r) {
    r->stage = ST_FRAME;
    r->filled = 0;
    r->frame_start = r->pos;
}

/* A node is complete: count it in its head, closing every head it completes
 * (the partition grid runs then, HR-COMP-6); the top-level item is done
 * when the outermost head closes. */
static int node_done(struct hurray_stream_reader *r, struct hurray_error *e) {
    while (r->depth > 0) {
        struct open_head *top = &r->heads[r->depth - 1];
        if (++top->next < top->item->member_count) {
            begin_frame(r);
            return HURRAY_OK;
        }
        HR_TRY(hri_composite_check_grid(top->item->descriptor, top->item->members,
                                        top->item->member_count, e));
        r->depth--;
    }
    r->stage = ST_ITEM_DONE;
    return HURRAY_OK;
}

/* Step 7: a head: depth and member total (LIMIT) before its members table is
 * allocated, resolved extents; then its member frames. */
static int open_head(struct hurray_stream_reader *r, struct hurray_item *node,
                     struct hurray_error *e) {
    const struct hurray_descriptor *d = node->descriptor;
    HR_TRY(at(hri_composite_check_head(d, r->depth + 1, d->layout.member_count,
                                       &r->member_total, &r->limits, e),
              e, r->frame_start));
    HR_TRY(hri_item_alloc_members(node, d->layout.member_count, e));
    r->heads[r->depth].item = node;
    r->heads[r->depth].next = 0;
    r->depth++;
    begin_frame(r);
    return HURRAY_OK;
}

/* Step 8: buffer i (its size already within max_buffer_bytes: decode step
 * 7), set aside only now that its data is next, and committed as its bytes
 * arrive (HR-STREAM-16: commit_ahead). Empty buffers have neither data nor
 * padding. */
static int begin_buffer(struct hurray_stream_reader *r, struct hurray_error *e) {
    const struct hurray_descriptor *d = r->tensor->descriptor;
    while (r->buffer_index < d->buffer_count && d->buffers[r->buffer_index].size == 0)
        r->buffer_index++;
    if (r->buffer_index == d->buffer_count) return node_done(r, e);
    const struct hurray_buffer_desc *b = &d->buffers[r->buffer_index];
    HR_TRY(hri_item_buffer_reserve(r->allocator, b->size, b->alignment_log2, r->budget,
                                   &r->tensor->buffers[r->buffer_index].data, e));
    r->stage = ST_BUFFER;
    r->filled = 0;
    r->committed = 0;
    return HURRAY_OK;
}

/* HR-STREAM-16: before the next bytes of a buffer are read, the next step of
 * it is committed -- never more than HRI_COMMIT_STEP ahead of what arrived. */
static int commit_ahead(struct hurray_stream_reader *r, struct hurray_error *e) {
    const struct hurray_item_buffer *b = &r->tensor->buffers[r->buffer_index];
    if (r->filled < r->committed || r->committed == b->size) return HURRAY_OK;
    uint64_t next = b->size - r->committed < HRI_COMMIT_STEP ? b->size
                                                               : r->committed + HRI_COMMIT_STEP;
    HR_TRY(at(hri_item_buffer_commit(b->data, next, e), e, r->pos));
    r->committed = next;
    return HURRAY_OK;
}

/* Step 8, HR-LIMIT-2 refused: the record names the item (its index among the
 * stream's top-level items), the member path inside a composite (in the
 * message: a path 64 levels deep does not fit the field) and the buffer. */
static int slack_refused(const struct hurray_stream_reader *r, const struct hri_slack_over *o,
                         struct hurray_error *e) {
    char f[HURRAY_ERROR_FIELD_MAX], path[96];
    size_t n = 0;
    path[0] = 0;
    for (uint32_t k = 0; k < r->depth && n < sizeof path; k++) {
        int w = snprintf(path + n, sizeof path - n, "%smembers[%lu]", k ? "." : ", ",
                         (unsigned long)r->heads[k].next);
        n += w > 0 ? (size_t)w : 0;
    }
    hri_fieldf(f, "buffers[%u]", o->buffer);
    return hri_fail_at(e, HURRAY_E_LIMIT, r->frame_start + 8, f,
                       "item %llu%s, %s: the reader's alignment slack of %llu bytes would "
                       "exceed its %llu buffer bytes by more than max_alignment_slack %llu "
                       "(HR-LIMIT-2; items kept alive count)",
                       (unsigned long long)(r->items_started - 1), path, f,
                       (unsigned long long)o->slack, (unsigned long long)o->bytes,
                       (unsigned long long)r->limits.max_alignment_slack);
}

/* Step 8: the reader's alignment slack (errors-and-limits.md HR-LIMIT-2) --
 * its live buffers' and this descriptor's -- before anything of this tensor's
 * buffers is set aside; then its buffers. */
static int open_tensor(struct hurray_stream_reader *r, struct hurray_item *node,
                       struct hurray_error *e) {
    struct hri_slack_over over;
    if (hri_slack_check(r->budget, node->descriptor, r->limits.max_alignment_slack, &over) !=
        HURRAY_OK)
        return slack_refused(r, &over, e);
    HR_TRY(hri_item_alloc_buffer_table(node, e));
    r->tensor = node;
    r->buffer_index = 0;
    return begin_buffer(r, e);
}

/* Steps 3 (decode) to 7/8 for a complete descriptor. */
static int on_descriptor(struct hurray_stream_reader *r, struct hurray_error *e) {
    struct hurray_item *node = NULL;
    uint8_t kind = r->frame_header[4];
    HR_TRY(new_node(r, &node, e));
    HR_TRY(decode_node(r, node->descriptor, e));
    HR_TRY(at(check_frame_kind(kind, node->descriptor, e), e, r->frame_start + 4));
    if (r->cross_machine) HR_TRY(at(check_cross_machine(node->descriptor, e), e, r->frame_start));
    HR_TRY(at(check_place(r, node->descriptor, e), e, r->frame_start));
    if (kind == HURRAY_FRAME_COMPOSITE) return open_head(r, node, e);
    return open_tensor(r, node, e);
}

/* The buffer's data is in: its padding next (HR-STREAM-2). */
static int on_buffer(struct hurray_stream_reader *r, struct hurray_error *e) {
    uint64_t size = r->tensor->buffers[r->buffer_index].size;
    r->pad_len = hri_pad8((size_t)(size & 7));
    r->filled = 0;
    if (r->pad_len) {
        r->stage = ST_PAD;
        return HURRAY_OK;
    }
    r->buffer_index++;
    return begin_buffer(r, e);
}

static int on_pad(struct hurray_stream_reader *r, struct hurray_error *e) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (size_t i = 0; i < r->pad_len; i++)
        if (r->pad[i] != 0)
            return hri_fail_at(e, HURRAY_E_RESERVED_NONZERO, r->pos - r->pad_len + i,
                               hri_fieldf(f, "buffers[%u].padding", r->buffer_index),
                               "%s: byte %zu is 0x%02X, not zero (HR-STREAM-2)", f, i,
                               r->pad[i]);
    r->buffer_index++;
    return begin_buffer(r, e);
}

/* Steps 2a-2b: an end (0x03) or annotation (0x04) frame stands only outside
 * a composite (a member is due there: CONSTRAINT) and not right after an
 * annotation frame (whose item is then missing, or would have two). */
static int check_top_level_frame(const struct hurray_stream_reader *r, uint8_t kind,
                                 struct hurray_error *e) {
    int end = kind == HURRAY_FRAME_END;
    const char *what = end ? "an end frame (0x03)" : "an annotation frame (0x04)";
    if (r->depth > 0) {
        const struct open_head *top = &r->heads[r->depth - 1];
        return hri_fail_at(e, HURRAY_E_CONSTRAINT, r->frame_start + 4, "frame.kind",
                           "frame.kind: %s where member %lu of a composite of %lu is due: %s",
                           what, (unsigned long)top->next,
                           (unsigned long)top->item->member_count,
                           end ? "the stream ended with the composite unfinished (HR-STREAM-12)"
                               : "only top-level items are annotated (HR-STREAM-18)");
    }
    HR_FAIL_IF(r->ann_pending, e, HURRAY_E_CONSTRAINT, "frame.kind",
               end ? "frame.kind: an end frame (0x03) right after an annotation frame: the item "
                     "it annotates is missing (HR-STREAM-18)"
                   : "frame.kind: an annotation frame (0x04) right after another: an item has "
                     "at most one (HR-STREAM-18)");
    return HURRAY_OK;
}

/* Step 2a (HR-STREAM-12): the end frame ends the stream; nothing after it is
 * read. */
static int on_end_frame(struct hurray_stream_reader *r, struct hurray_error *e) {
    HR_TRY(check_top_level_frame(r, HURRAY_FRAME_END, e));
    r->stage = ST_END;
    r->ended = HURRAY_STREAM_END_FRAME;
    return HURRAY_OK;
}

/* ---- annotation frames (HR-STREAM-17, -18) ------------------------------------------- */

/* Step 2b: an annotation frame's head next. */
static int on_annotation_frame(struct hurray_stream_reader *r, struct hurray_error *e) {
    HR_TRY(check_top_level_frame(r, HURRAY_FRAME_ANNOTATION, e));
    r->stage = ST_ANN_HEAD;
    r->filled = 0;
    return HURRAY_OK;
}

static int annotation_done(struct hurray_stream_reader *r) {
    hri_free(r->allocator, r->ann_kv, r->ann_kv_cap);
    r->ann_kv = NULL;
    r->ann_kv_cap = 0;
    r->ann_pending = 1;
    begin_frame(r);
    return HURRAY_OK;
}

/* The section's first step is committed now; more as bytes arrive. */
static int begin_ann_kv(struct hurray_stream_reader *r, struct hurray_error *e) {
    if (r->ann_kv_len == 0) return annotation_done(r);
    size_t cap = r->ann_kv_len < ANN_KV_FIRST_STEP ? (size_t)r->ann_kv_len : ANN_KV_FIRST_STEP;
    r->ann_kv = hri_alloc(r->allocator, cap);
    HR_FAIL_IF(!r->ann_kv, e, HURRAY_E_NOMEM, "annotation.metadata",
               "annotation.metadata: cannot allocate %zu bytes", cap);
    r->ann_kv_cap = cap;
    r->stage = ST_ANN_KV;
    r->filled = 0;
    return HURRAY_OK;
}

/* Bytes 8..23 in offset order: name_length against its limit, reserved,
 * kv_length against its rules, not both zero -- before anything is set aside (HR-STREAM-7). */
static int on_ann_head(struct hurray_stream_reader *r, struct hurray_error *e) {
    const uint8_t *h = r->ann_head;
    uint32_t name_len = hri_load_u32le(h);
    uint64_t kv_len = hri_load_u64le(h + 8);
    if (name_len > r->limits.max_name_bytes)
        return hri_fail_at(e, HURRAY_E_LIMIT, r->frame_start + 8, "annotation.name_length",
                           "annotation.name_length: %lu exceeds max_name_bytes %lu "
                           "(HR-STREAM-17)",
                           (unsigned long)name_len, (unsigned long)r->limits.max_name_bytes);
    for (unsigned i = 4; i < 8; i++)
        if (h[i] != 0)
            return hri_fail_at(e, HURRAY_E_RESERVED_NONZERO, r->frame_start + 8 + i,
                               "annotation.reserved",
                               "annotation.reserved: byte %u is 0x%02X, not zero (HR-STREAM-17)",
                               8 + i, h[i]);
    if (kv_len % 8 != 0)
        return hri_fail_at(e, HURRAY_E_LENGTH, r->frame_start + 16, "annotation.kv_length",
                           "annotation.kv_length: %llu is not a multiple of 8 (HR-STREAM-17)",
                           (unsigned long long)kv_len);
    if (kv_len > r->limits.max_kv_bytes || kv_len > SIZE_MAX)
        return hri_fail_at(e, HURRAY_E_LIMIT, r->frame_start + 16, "annotation.kv_length",
                           "annotation.kv_length: %llu exceeds max_kv_bytes %llu "
                           "(HR-STREAM-17)",
                           (unsigned long long)kv_len,
                           (unsigned long long)r->limits.max_kv_bytes);
    if (name_len == 0 && kv_len == 0)
        return hri_fail_at(e, HURRAY_E_CONSTRAINT, r->frame_start + 8, "annotation",
                           "annotation: neither a name nor metadata; an item with neither has "
                           "no annotation frame (HR-STREAM-17)");
    r->ann_name_len = name_len;
    r->ann_kv_len = kv_len;
    if (name_len == 0) return begin_ann_kv(r, e);
    size_t need = (size_t)name_len + hri_pad8(name_len); /* <= 2^32 + 6 */
    if (need > r->ann_name_cap) {
        hri_free(r->allocator, r->ann_name, r->ann_name_cap);
        r->ann_name_cap = 0;
        r->ann_name = hri_alloc(r->allocator, need);
        HR_FAIL_IF(!r->ann_name, e, HURRAY_E_NOMEM, "annotation.name",
                   "annotation.name: cannot allocate %zu bytes", need);
        r->ann_name_cap = need;
    }
    r->stage = ST_ANN_NAME;
    r->filled = 0;
    return HURRAY_OK;
}

static int on_ann_name(struct hurray_stream_reader *r, struct hurray_error *e) {
    uint64_t at_name = r->frame_start + HURRAY_STREAM_ANNOTATION_HEAD_BYTES;
    HR_TRY(hri_name_check(r->ann_name, r->ann_name_len, r->limits.max_name_bytes,
                          "annotation.name", at_name, e));
    for (size_t i = r->ann_name_len; i < r->filled; i++)
        if (r->ann_name[i] != 0)
            return hri_fail_at(e, HURRAY_E_RESERVED_NONZERO, at_name + i,
                               "annotation.name.padding",
                               "annotation.name.padding: byte %zu is 0x%02X, not zero "
                               "(HR-STREAM-17)",
                               i - r->ann_name_len, r->ann_name[i]);
    return begin_ann_kv(r, e);
}

/* A committed step of the section is full: commit the next (doubling), or,
 * with the whole section in, decode it strictly under the reader's limits. */
static int on_ann_kv(struct hurray_stream_reader *r, struct hurray_error *e) {
    if (r->filled < r->ann_kv_len) {
        size_t cap = r->ann_kv_len - r->ann_kv_cap < r->ann_kv_cap ? (size_t)r->ann_kv_len
                                                                     : 2 * r->ann_kv_cap;
        uint8_t *p = hri_alloc(r->allocator, cap);
        HR_FAIL_IF(!p, e, HURRAY_E_NOMEM, "annotation.metadata",
                   "annotation.metadata: cannot allocate %zu bytes", cap);
        memcpy(p, r->ann_kv, r->filled);
        hri_free(r->allocator, r->ann_kv, r->ann_kv_cap);
        r->ann_kv = p;
        r->ann_kv_cap = cap;
        return HURRAY_OK;
    }
    uint64_t base = r->frame_start + HURRAY_STREAM_ANNOTATION_HEAD_BYTES + r->ann_name_len +
                    hri_pad8(r->ann_name_len);
    HR_TRY(hri_kv_decode_section(r->ann_kv, (size_t)r->ann_kv_len, &r->limits, r->allocator,
                                 HURRAY_E_LENGTH, base, &r->pend_kv, e));
    if (r->pend_kv.count == 0)
        return hri_fail_at(e, HURRAY_E_CONSTRAINT, base, "annotation.metadata",
                           "annotation.metadata: entry_count 0; an empty map is written as no "
                           "section (HR-STREAM-17)");
    return annotation_done(r);
}

/* The current part is complete: its checks, then the next stage. */
static int part_complete(struct hurray_stream_reader *r, struct hurray_error *e) {
    uint8_t kind = 0;
    switch (r->stage) {
    case ST_FRAME:
        HR_TRY(at(check_frame_header(r->frame_header, &kind, e), e, r->frame_start));
        if (kind == HURRAY_FRAME_END) return on_end_frame(r, e);
        if (kind == HURRAY_FRAME_ANNOTATION) return on_annotation_frame(r, e);
        r->stage = ST_DESC_PREFIX;
        r->filled = 0;
        return HURRAY_OK;
    case ST_DESC_PREFIX:
        HR_TRY(on_desc_prefix(r, e));
        r->stage = ST_DESC_BODY;
        r->filled = DESC_PREFIX_BYTES;
        return r->filled == r->desc_len ? on_descriptor(r, e) : HURRAY_OK;
    case ST_DESC_BODY: return on_descriptor(r, e);
    case ST_BUFFER: return on_buffer(r, e);
    case ST_PAD: return on_pad(r, e);
    case ST_ANN_HEAD: return on_ann_head(r, e);
    case ST_ANN_NAME: return on_ann_name(r, e);
    case ST_ANN_KV: return on_ann_kv(r, e);
    default: return hri_fail(e, HURRAY_E_INTERNAL, "stage", "stream reader: stage %d",
                             (int)r->stage);
    }
}

/* `n` bytes arrived where parser_want said. */
static int parser_advance(struct hurray_stream_reader *r, size_t n, struct hurray_error *e) {
    uint8_t *dst;
    size_t want;
    parser_want(r, &dst, &want);
    r->filled += n;
    r->pos += n;
    atomic_store_explicit(&r->offset_seen, r->pos, memory_order_relaxed);
    if (n < want) return HURRAY_OK;
    return part_complete(r, e);
}

/* The input ended (HR-STREAM-4): the clean end at a frame boundary outside a
 * composite, TRUNCATED anywhere else. */
static int parser_eof(struct hurray_stream_reader *r, struct hurray_error *e) {
    char f[HURRAY_ERROR_FIELD_MAX];
    if (r->stage == ST_FRAME && r->filled == 0 && r->depth == 0 && r->ann_pending)
        return hri_fail(e, HURRAY_E_TRUNCATED, "item",
                        "item: the input ends after an annotation frame, before the item it "
                        "annotates (HR-STREAM-18)");
    if (r->stage == ST_FRAME && r->filled == 0 && r->depth == 0) {
        if (r->require_end_frame)
            return hri_fail(e, HURRAY_E_TRUNCATED, "end",
                            "end: the input ends after %llu bytes without an end frame, and "
                            "the reader requires one: the sender stopped before finishing "
                            "(HR-STREAM-13)",
                            (unsigned long long)r->pos);
        r->stage = ST_END;
        r->ended = HURRAY_STREAM_END_EOF;
        return HURRAY_OK;
    }
    switch (r->stage) {
    case ST_FRAME:
        if (r->filled == 0) {
            const struct open_head *top = &r->heads[r->depth - 1];
            return hri_fail(e, HURRAY_E_TRUNCATED,
                            hri_fieldf(f, "members[%lu]", (unsigned long)top->next),
                            "%s: the input ends before member %lu of a composite of %lu "
                            "(HR-STREAM-4)",
                            f, (unsigned long)top->next,
                            (unsigned long)top->item->member_count);
        }
        return hri_fail(e, HURRAY_E_TRUNCATED, "frame",
                        "frame: the input ends %zu bytes into a frame header", r->filled);
    case ST_DESC_PREFIX:
    case ST_DESC_BODY:
        return hri_fail(e, HURRAY_E_TRUNCATED, "descriptor",
                        "descriptor: the input ends %zu bytes into the descriptor", r->filled);
    case ST_ANN_HEAD:
        return hri_fail(e, HURRAY_E_TRUNCATED, "annotation",
                        "annotation: the input ends %zu bytes into the annotation frame's head",
                        r->filled + HURRAY_STREAM_FRAME_HEADER_BYTES);
    case ST_ANN_NAME:
        return hri_fail(e, HURRAY_E_TRUNCATED, "annotation.name",
                        "annotation.name: the input ends %zu bytes into the name and its "
                        "padding",
                        r->filled);
    case ST_ANN_KV:
        return hri_fail(e, HURRAY_E_TRUNCATED, "annotation.metadata",
                        "annotation.metadata: the input ends after %zu of its %llu bytes",
                        r->filled, (unsigned long long)r->ann_kv_len);
    case ST_BUFFER:
        hri_fieldf(f, "buffers[%u]", r->buffer_index);
        return hri_fail(e, HURRAY_E_TRUNCATED, f,
                        "%s: the input ends after %zu of its %llu bytes", f, r->filled,
                        (unsigned long long)r->tensor->buffers[r->buffer_index].size);
    default:
        hri_fieldf(f, "buffers[%u].padding", r->buffer_index);
        return hri_fail(e, HURRAY_E_TRUNCATED, f, "%s: the input ends inside the padding", f);
    }
}

/* ---- the driver: moves bytes from the transport to where the parser wants them ------ */

/* Up to n (>= 1) bytes into dst: from the read-ahead block, else straight from
 * the transport for parts at least a block long (buffer data), else by
 * refilling the block. *got = 0 only at the end of the input. */
static int source_fill(struct hurray_stream_reader *r, uint8_t *dst, size_t n, size_t *got,
                       struct hurray_error *e) {
    if (r->ahead_pos == r->ahead_len && r->ahead && n < READ_AHEAD_BYTES) {
        size_t k = 0;
        HR_TRY(r->read(r->read_ctx, r->ahead, READ_AHEAD_BYTES, &k, e));
        HR_FAIL_IF(k > READ_AHEAD_BYTES, e, HURRAY_E_ARGUMENT, "read",
                   "read callback: returned %zu bytes for a %u-byte request", k,
                   READ_AHEAD_BYTES);
        r->ahead_pos = 0;
        r->ahead_len = k;
    }
    if (r->ahead_pos < r->ahead_len) {
        size_t k = r->ahead_len - r->ahead_pos < n ? r->ahead_len - r->ahead_pos : n;
        memcpy(dst, r->ahead + r->ahead_pos, k);
        r->ahead_pos += k;
        *got = k;
        return HURRAY_OK;
    }
    if (r->ahead && n < READ_AHEAD_BYTES) { /* the refill above found the end */
        *got = 0;
        return HURRAY_OK;
    }
    HR_TRY(r->read(r->read_ctx, dst, n, got, e));
    HR_FAIL_IF(*got > n, e, HURRAY_E_ARGUMENT, "read",
               "read callback: returned %zu bytes for a %zu-byte request", *got, n);
    return HURRAY_OK;
}

/* Runs the parser until a top-level item is complete, the input ends or a
 * check fails. */
static int reader_run(struct hurray_stream_reader *r, struct hurray_error *e) {
    while (r->stage != ST_ITEM_DONE && r->stage != ST_END) {
        /* HR-STREAM-15: a read that finds bytes waiting does not wait (and so
         * meets no waker): a close is seen here too, between two reads. */
        if (atomic_load_explicit(&r->state, memory_order_relaxed) & CLOSING)
            return hri_fail(e, HURRAY_E_IO, "transport",
                            "stream read: the reader was closed (HR-STREAM-15)");
        uint8_t *dst;
        size_t n, got = 0;
        parser_want(r, &dst, &n);
        HR_FAIL_IF(n == 0, e, HURRAY_E_INTERNAL, "stage", "stream reader: nothing wanted");
        if (r->stage == ST_BUFFER) { /* only into what is committed (HR-STREAM-16) */
            HR_TRY(commit_ahead(r, e));
            if (n > r->committed - r->filled) n = (size_t)(r->committed - r->filled);
        }
        HR_TRY(source_fill(r, dst, n, &got, e));
        if (got == 0) return parser_eof(r, e);
        HR_TRY(parser_advance(r, got, e));
    }
    return HURRAY_OK;
}

/* Releases the transport and drops the item being read: the reader is
 * exhausted. Runs once, on the thread that leaves last (HR-STREAM-15); the
 * waker stays until free, since a close may still be signalling it. */
static void reader_release(struct hurray_stream_reader *r) {
    drop_partial(r);
    hri_os_close(&r->fd, NULL, NULL); /* the duplicate is ours; nothing to report */
    r->stage = ST_CLOSED;
}

/* One next, alone in the reader (the IN_NEXT bit is ours). */
static int reader_next(struct hurray_stream_reader *r, struct hurray_item **out,
                       struct hurray_error *err) {
    struct hurray_error e;
    r->cur_name_len = 0; /* the previous item's annotation ends here (HR-STREAM-18) */
    hurray_kv_reset(&r->cur_kv);
    if (r->stage == ST_END || r->stage == ST_CLOSED) return HURRAY_OK;
    if (r->stage == ST_FAILED) {
        if (err) *err = r->error;
        return r->status;
    }
    hurray_error_clear(&e);
    int status = reader_run(r, &e);
    if (status != HURRAY_OK) {
        if (atomic_load(&r->state) & CLOSING) return HURRAY_OK; /* a close woke us */
        reader_fail(r, status, &e, r->pos);
        if (err) *err = r->error;
        return status;
    }
    if (r->stage == ST_ITEM_DONE) {
        if (r->ann_pending) { /* the item's annotation becomes the yielded one */
            uint8_t *name = r->cur_name;
            size_t cap = r->cur_name_cap;
            r->cur_name = r->ann_name;
            r->cur_name_cap = r->ann_name_cap;
            r->cur_name_len = r->ann_name_len;
            r->ann_name = name;
            r->ann_name_cap = cap;
            hurray_kv_move(&r->cur_kv, &r->pend_kv);
            r->ann_pending = 0;
            r->ann_name_len = 0;
        }
        *out = r->root;
        r->root = NULL;
        r->tensor = NULL;
        begin_frame(r);
    }
    return HURRAY_OK;
}

int hurray_stream_reader_next(struct hurray_stream_reader *r, struct hurray_item **out,
                              struct hurray_error *err) {
    HR_FAIL_IF(!r || !out, err, HURRAY_E_ARGUMENT, "reader", "stream reader next: NULL argument");
    *out = NULL;
    unsigned before = atomic_fetch_or(&r->state, IN_NEXT);
    HR_FAIL_IF(before & IN_NEXT, err, HURRAY_E_ARGUMENT, "reader",
               "stream reader next: another thread is reading (a reader is used by one "
               "thread at a time, HR-STREAM-15)");
    if (before & CLOSING) { /* closed: the close released the transport */
        atomic_fetch_and(&r->state, ~IN_NEXT);
        return HURRAY_OK;
    }
    int status = reader_next(r, out, err);
    unsigned after = atomic_fetch_and(&r->state, ~IN_NEXT);
    if (after & CLOSING) { /* a close came while we read: close wins, we release */
        hurray_item_destroy(*out);
        *out = NULL;
        reader_release(r);
        return HURRAY_OK;
    }
    /* an end reached before any close: published (a close after it keeps it) */
    if (r->ended != HURRAY_STREAM_NOT_ENDED) atomic_store(&r->end, r->ended);
    return status;
}

uint64_t hurray_stream_reader_offset(const struct hurray_stream_reader *r) {
    return r ? atomic_load_explicit(&r->offset_seen, memory_order_relaxed) : 0;
}

void hurray_stream_reader_annotation(const struct hurray_stream_reader *r,
                                     struct hurray_stream_annotation *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!r) return;
    if (r->cur_name_len) {
        out->name = (const char *)r->cur_name;
        out->name_len = r->cur_name_len;
    }
    out->metadata = r->cur_kv.count ? r->cur_kv.entries : NULL;
    out->metadata_count = r->cur_kv.count;
}

int hurray_stream_reader_end(const struct hurray_stream_reader *r) {
    return r ? atomic_load(&r->end) : HURRAY_STREAM_NOT_ENDED;
}

void hurray_stream_reader_close(struct hurray_stream_reader *r) {
    if (!r) return;
    unsigned before = atomic_fetch_or(&r->state, CLOSING);
    if (before & CLOSING) return; /* closed, or being closed */
    if (before & IN_NEXT) {       /* wake it; it releases on its way out */
        hri_os_waker_signal(r->waker);
        return;
    }
    reader_release(r);
}

void hurray_stream_reader_destroy(struct hurray_stream_reader *r) {
    if (!r) return;
    hurray_stream_reader_close(r);
    const struct hurray_allocator *a = r->allocator;
    hri_os_waker_destroy(r->waker);
    hri_free(a, r->desc, r->desc_cap);
    hri_free(a, r->ahead, r->ahead ? READ_AHEAD_BYTES : 0);
    drop_annotation(r);
    hurray_kv_reset(&r->cur_kv);
    hri_free(a, r->ann_name, r->ann_name_cap);
    hri_free(a, r->cur_name, r->cur_name_cap);
    hri_slack_budget_release(r->budget); /* its buffers still alive keep it */
    hri_free(a, r, sizeof *r);
}

/* ==== writer ============================================================== */

enum writer_kind { W_MEMORY, W_FD, W_CALLBACK };

struct hurray_stream_writer {
    const struct hurray_allocator *allocator;
    int cross_machine;
    enum writer_kind kind;
    hri_os_fd fd;
    struct hri_os_wait wait; /* fd: timeout and interrupt hook (HR-STREAM-14) */
    hurray_stream_write_fn write;
    void *write_ctx;
    uint8_t *buf; /* memory: the stream so far; fd/callback: the staging block */
    size_t cap;
    size_t len;
    uint8_t *scratch; /* one descriptor's encoding */
    size_t scratch_cap;
    uint64_t offset;
    int finished;  /* finished or abandoned: nothing more is written */
    int abandoned; /* ended without the end frame (HR-STREAM-10) */
    int status; /* sticky I/O failure */
    struct hurray_error error;
};

/* What the checks learnt about an item, so that emitting it cannot fail
 * except in the transport. */
struct item_plan {
    uint64_t bytes;       /* the item's frames */
    size_t max_desc;      /* largest descriptor encoding */
};

void hurray_stream_writer_options_init(struct hurray_stream_writer_options *o) {
    if (o) memset(o, 0, sizeof *o);
}

static int writer_new(const struct hurray_stream_writer_options *opt, enum writer_kind kind,
                      struct hurray_stream_writer **out, struct hurray_error *err) {
    const struct hurray_allocator *a = opt ? opt->allocator : NULL;
    HR_FAIL_IF(!out, err, HURRAY_E_ARGUMENT, "out", "stream writer: out is NULL");
    *out = NULL;
    struct hurray_stream_writer *w = hri_alloc(a, sizeof *w);
    HR_FAIL_IF(!w, err, HURRAY_E_NOMEM, "writer", "stream writer: cannot allocate %zu bytes",
               sizeof *w);
    memset(w, 0, sizeof *w);
    w->allocator = a;
    w->cross_machine = opt ? opt->cross_machine != 0 : 0;
    w->kind = kind;
    w->fd = HRI_OS_NO_FD;
    if (kind != W_MEMORY) {
        w->buf = hri_alloc(a, WRITE_STAGING_BYTES);
        if (!w->buf) {
            hri_free(a, w, sizeof *w);
            return hri_fail(err, HURRAY_E_NOMEM, "writer",
                            "stream writer: cannot allocate its staging block");
        }
        w->cap = WRITE_STAGING_BYTES;
    }
    *out = w;
    return HURRAY_OK;
}

int hurray_stream_writer_create_memory(const struct hurray_stream_writer_options *opt,
                                       struct hurray_stream_writer **out,
                                       struct hurray_error *err) {
    return writer_new(opt, W_MEMORY, out, err);
}

int hurray_stream_writer_create_fd(int fd, const struct hurray_stream_writer_options *opt,
                                   struct hurray_stream_writer **out, struct hurray_error *err) {
    hri_os_fd dup = HRI_OS_NO_FD;
    struct hri_os_wait w;
    HR_FAIL_IF(!out, err, HURRAY_E_ARGUMENT, "out", "stream writer: out is NULL");
    *out = NULL;
    HR_TRY(wait_from_options(opt ? opt->timeout_ms : 0, opt ? opt->on_interrupt : NULL,
                             opt ? opt->interrupt_ctx : NULL, &w, err));
    HR_FAIL_IF(fd < 0, err, HURRAY_E_ARGUMENT, "fd", "fd: %d is not a descriptor", fd);
    HR_TRY(hri_os_dup((hri_os_fd)fd, &dup, "transport", err));
    int status = writer_new(opt, W_FD, out, err);
    if (status != HURRAY_OK) {
        hri_os_close(&dup, NULL, NULL);
        return status;
    }
    (*out)->fd = dup;
    (*out)->wait = w;
    return HURRAY_OK;
}

int hurray_stream_writer_create_callback(hurray_stream_write_fn write, void *ctx,
                                         const struct hurray_stream_writer_options *opt,
                                         struct hurray_stream_writer **out,
                                         struct hurray_error *err) {
    HR_FAIL_IF(!write, err, HURRAY_E_ARGUMENT, "write", "stream writer: write callback is NULL");
    HR_TRY(writer_new(opt, W_CALLBACK, out, err));
    (*out)->write = write;
    (*out)->write_ctx = ctx;
    return HURRAY_OK;
}

/* ---- checking an item before any byte of it is written (HR-STREAM-10) ----------------- */

static int plan_add(struct item_plan *p, uint64_t n, struct hurray_error *err) {
    HR_FAIL_IF(hri_add_u64(p->bytes, n, &p->bytes), err, HURRAY_E_OVERFLOW, "item",
               "item: its frames exceed 2^64-1 bytes");
    return HURRAY_OK;
}

/* A tensor's buffers: as many as the table, each of its declared size, with
 * data unless empty; producer_synced under cross_machine. */
static int check_tensor_buffers(const struct hurray_stream_writer *w,
                                const struct hurray_item *it, struct item_plan *p,
                                struct hurray_error *err) {
    const struct hurray_descriptor *d = it->descriptor;
    char f[HURRAY_ERROR_FIELD_MAX];
    HR_FAIL_IF(d->buffer_count && !it->buffers, err, HURRAY_E_ARGUMENT, "buffers",
               "buffers: the descriptor declares %u buffers and the item holds none",
               (unsigned)d->buffer_count);
    HR_FAIL_IF(it->members || it->member_count, err, HURRAY_E_ARGUMENT, "members",
               "members: a tensor item has no members");
    for (unsigned i = 0; i < d->buffer_count; i++) {
        const struct hurray_item_buffer *b = &it->buffers[i];
        if (b->size != d->buffers[i].size || (b->size && !b->data))
            hri_fieldf(f, "buffers[%u]", i); /* only on failure */
        HR_FAIL_IF(b->size != d->buffers[i].size, err, HURRAY_E_ARGUMENT, f,
                   "%s: %llu bytes held, but the table declares %llu", f,
                   (unsigned long long)b->size, (unsigned long long)d->buffers[i].size);
        HR_FAIL_IF(b->size && !b->data, err, HURRAY_E_ARGUMENT, f, "%s: data is NULL", f);
        HR_TRY(plan_add(p, b->size, err));
        HR_TRY(plan_add(p, hri_pad8((size_t)(b->size & 7)), err));
    }
    if (w->cross_machine) HR_TRY(check_cross_machine(d, err));
    return HURRAY_OK;
}

/* Every node, depth-first: the descriptor validates (under the format maxima,
 * as encode does) and its item holds what it declares. Depth is bounded by
 * the format (64) before recursing. */
static int check_node(const struct hurray_stream_writer *w, const struct hurray_item *it,
                      uint32_t depth, struct item_plan *p, struct hurray_error *err) {
    size_t len = 0;
    HR_FAIL_IF(!it || !it->descriptor, err, HURRAY_E_ARGUMENT, "item",
               "item: NULL item or descriptor");
    HR_TRY(hurray_descriptor_encoded_len(it->descriptor, &len, err));
    if (len > p->max_desc) p->max_desc = len;
    HR_TRY(plan_add(p, HURRAY_STREAM_FRAME_HEADER_BYTES + (uint64_t)len, err));
    if (!hurray_item_is_composite(it)) return check_tensor_buffers(w, it, p, err);
    HR_FAIL_IF(depth >= MAX_DEPTH, err, HURRAY_E_LIMIT, "depth",
               "depth: composites nest at most %u deep (HR-COMP-9)", MAX_DEPTH);
    HR_FAIL_IF(it->member_count && !it->members, err, HURRAY_E_ARGUMENT, "members",
               "members: member_count %lu with no members table",
               (unsigned long)it->member_count);
    HR_FAIL_IF(it->buffers, err, HURRAY_E_ARGUMENT, "buffers",
               "buffers: a composite head owns no buffers");
    for (uint32_t i = 0; i < it->member_count; i++)
        HR_TRY(check_node(w, it->members[i], depth + 1, p, err));
    return HURRAY_OK;
}

/* Room for the item's encodings (and, in memory, its bytes) before any is
 * written, so that NOMEM leaves the stream untouched. */
static int grow(const struct hurray_allocator *a, uint8_t **buf, size_t *cap, size_t keep,
                size_t need, struct hurray_error *err) {
    if (need <= *cap) return HURRAY_OK;
    size_t n = *cap ? *cap : 4096;
    while (n < need) n = n > SIZE_MAX / 2 ? need : n * 2;
    uint8_t *p = hri_alloc(a, n);
    HR_FAIL_IF(!p, err, HURRAY_E_NOMEM, "writer", "stream writer: cannot allocate %zu bytes", n);
    if (keep) memcpy(p, *buf, keep);
    hri_free(a, *buf, *cap);
    *buf = p;
    *cap = n;
    return HURRAY_OK;
}

static int reserve(struct hurray_stream_writer *w, const struct item_plan *p,
                   struct hurray_error *err) {
    HR_TRY(grow(w->allocator, &w->scratch, &w->scratch_cap, 0, p->max_desc, err));
    if (w->kind != W_MEMORY) return HURRAY_OK;
    HR_FAIL_IF(p->bytes > SIZE_MAX - w->len, err, HURRAY_E_NOMEM, "writer",
               "stream writer: %llu more bytes exceed the address space",
               (unsigned long long)p->bytes);
    return grow(w->allocator, &w->buf, &w->cap, w->len, w->len + (size_t)p->bytes, err);
}

/* ---- emitting ------------------------------------------------------------------------ */

static int transport_write(struct hurray_stream_writer *w, const uint8_t *src, size_t n,
                           struct hurray_error *err) {
    if (n == 0) return HURRAY_OK;
    if (w->kind == W_FD)
        return name_timeout(hri_os_write_all(w->fd, src, n, &w->wait, "transport", err),
                            &w->wait, "stream write", err);
    return w->write(w->write_ctx, src, n, err);
}

static int flush(struct hurray_stream_writer *w, struct hurray_error *err) {
    if (w->kind == W_MEMORY || w->len == 0) return HURRAY_OK;
    size_t n = w->len;
    w->len = 0;
    return transport_write(w, w->buf, n, err);
}

/* Appends n bytes: into memory (reserved), or through the staging block,
 * large parts (buffer data) straight to the transport. */
static int put(struct hurray_stream_writer *w, const uint8_t *src, size_t n,
               struct hurray_error *err) {
    w->offset += n;
    if (w->kind == W_MEMORY || w->len + n <= w->cap) {
        if (n) memcpy(w->buf + w->len, src, n);
        w->len += n;
        return HURRAY_OK;
    }
    HR_TRY(flush(w, err));
    if (n >= w->cap) return transport_write(w, src, n, err);
    memcpy(w->buf, src, n);
    w->len = n;
    return HURRAY_OK;
}

static int emit_frame_head(struct hurray_stream_writer *w, const struct hurray_item *it,
                           struct hurray_error *err) {
    uint8_t h[HURRAY_STREAM_FRAME_HEADER_BYTES] = {'H', 'R', 'S', 'F', HURRAY_FRAME_TENSOR, 0,
                                                   0, 0};
    size_t n = 0;
    if (hurray_item_is_composite(it)) h[4] = HURRAY_FRAME_COMPOSITE;
    HR_TRY(put(w, h, sizeof h, err));
    HR_TRY(hurray_descriptor_encode(it->descriptor, w->scratch, w->scratch_cap, &n, err));
    return put(w, w->scratch, n, err);
}

/* Head frame then members (recursion bounded by check_node), or the tensor
 * frame with every buffer in descriptor order, each zero-padded to 8. */
static int emit_item(struct hurray_stream_writer *w, const struct hurray_item *it,
                     struct hurray_error *err) {
    HR_TRY(emit_frame_head(w, it, err));
    if (hurray_item_is_composite(it)) {
        for (uint32_t i = 0; i < it->member_count; i++) HR_TRY(emit_item(w, it->members[i], err));
        return HURRAY_OK;
    }
    for (unsigned i = 0; i < it->descriptor->buffer_count; i++) {
        const struct hurray_item_buffer *b = &it->buffers[i];
        HR_TRY(put(w, b->data, (size_t)b->size, err));
        HR_TRY(put(w, zeros, hri_pad8((size_t)(b->size & 7)), err));
    }
    return HURRAY_OK;
}

/* Records a transport failure as the writer's sticky status. */
static int writer_fail(struct hurray_stream_writer *w, int status, struct hurray_error *err) {
    struct hurray_error e;
    if (!err) hri_fail(&e, status, "transport", "stream writer: the transport failed");
    w->status = status;
    w->error = err ? *err : e;
    return status;
}

static int writer_usable(const struct hurray_stream_writer *w, struct hurray_error *err) {
    HR_FAIL_IF(w->finished, err, HURRAY_E_ARGUMENT, "writer",
               w->abandoned ? "stream writer: written to after it was abandoned (HR-STREAM-10)"
                            : "stream writer: written to after finish (HR-STREAM-10)");
    if (w->status == HURRAY_OK) return HURRAY_OK;
    if (err) *err = w->error;
    return w->status;
}

/* HR-STREAM-17: the annotation's name (HR-KV-6 under the format maximum)
 * and the length of its canonical KV section, checked before anything is
 * written; *frame_len 0 when there is nothing to annotate. */
static int check_annotation(const struct hurray_stream_writer *w,
                            const struct hurray_stream_annotation *a, uint64_t *kv_len,
                            uint64_t *frame_len, struct hurray_error *err) {
    *kv_len = 0;
    *frame_len = 0;
    int has_name = a && (a->name != NULL || a->name_len != 0);
    if (!a || (!has_name && a->metadata_count == 0)) return HURRAY_OK;
    if (has_name) { /* a given name is a name: non-empty (HR-KV-6) */
        HR_FAIL_IF(!a->name, err, HURRAY_E_ARGUMENT, "name",
                   "name: NULL with name_len %lu", (unsigned long)a->name_len);
        HR_TRY(hri_name_check((const uint8_t *)a->name, a->name_len, UINT16_MAX, "name",
                              UINT64_MAX, err));
    }
    if (a->metadata_count) {
        HR_FAIL_IF(!a->metadata, err, HURRAY_E_ARGUMENT, "metadata",
                   "metadata: NULL with metadata_count %zu", a->metadata_count);
        HR_TRY(hurray_kv_encoded_len(a->metadata, a->metadata_count, w->allocator, kv_len, err));
        HR_FAIL_IF(*kv_len > SIZE_MAX, err, HURRAY_E_NOMEM, "metadata",
                   "metadata: %llu bytes exceed the address space", (unsigned long long)*kv_len);
    }
    *frame_len = HURRAY_STREAM_ANNOTATION_HEAD_BYTES + (uint64_t)a->name_len +
                 hri_pad8(a->name_len) + *kv_len;
    return HURRAY_OK;
}

/* The annotation frame: head, name and padding, the canonical section
 * (encoded into the scratch, which reserve sized for it). */
static int emit_annotation(struct hurray_stream_writer *w, const struct hurray_stream_annotation *a,
                           uint64_t kv_len, struct hurray_error *err) {
    uint8_t h[HURRAY_STREAM_ANNOTATION_HEAD_BYTES] = {'H', 'R', 'S', 'F',
                                                       HURRAY_FRAME_ANNOTATION, 0, 0, 0};
    size_t n = 0;
    hri_store_u32le(h + 8, a->name_len);
    hri_store_u64le(h + 16, kv_len);
    HR_TRY(put(w, h, sizeof h, err));
    if (a->name_len) {
        HR_TRY(put(w, (const uint8_t *)a->name, a->name_len, err));
        HR_TRY(put(w, zeros, hri_pad8(a->name_len), err));
    }
    if (kv_len == 0) return HURRAY_OK;
    HR_TRY(hurray_kv_encode(a->metadata, a->metadata_count, w->allocator, w->scratch,
                            w->scratch_cap, &n, err));
    HR_FAIL_IF(n != kv_len, err, HURRAY_E_INTERNAL, "metadata",
               "metadata: encoded %zu bytes, planned %llu", n, (unsigned long long)kv_len);
    return put(w, w->scratch, n, err);
}

int hurray_stream_writer_write(struct hurray_stream_writer *w, const struct hurray_item *item,
                               struct hurray_error *err) {
    return hurray_stream_writer_write_annotated(w, item, NULL, err);
}

int hurray_stream_writer_write_annotated(struct hurray_stream_writer *w,
                                         const struct hurray_item *item,
                                         const struct hurray_stream_annotation *a,
                                         struct hurray_error *err) {
    struct item_plan plan = {0, 0};
    struct hurray_limits lim;
    uint64_t kv_len = 0, ann_len = 0;
    HR_FAIL_IF(!w, err, HURRAY_E_ARGUMENT, "writer", "stream writer write: writer is NULL");
    HR_TRY(writer_usable(w, err));
    HR_TRY(check_node(w, item, 0, &plan, err));
    hri_limits_format_max(&lim);
    HR_TRY(hurray_composite_validate(item, &lim, err));
    HR_TRY(check_annotation(w, a, &kv_len, &ann_len, err));
    HR_TRY(plan_add(&plan, ann_len, err));
    if (kv_len > plan.max_desc) plan.max_desc = (size_t)kv_len;
    HR_TRY(reserve(w, &plan, err));
    int status = ann_len ? emit_annotation(w, a, kv_len, err) : HURRAY_OK;
    if (status == HURRAY_OK) status = emit_item(w, item, err);
    if (status == HURRAY_OK) status = flush(w, err);
    if (status != HURRAY_OK) writer_fail(w, status, err);
    return status;
}

/* Closes the duplicated descriptor; a close error matters only to a finish. */
static int writer_release(struct hurray_stream_writer *w, struct hurray_error *err) {
    return hri_os_close(&w->fd, NULL, err);
}

/* HR-STREAM-10, HR-STREAM-12: the end frame, flushed, then the transport
 * released. A failed writer writes no end frame and reports its failure. */
int hurray_stream_writer_finish(struct hurray_stream_writer *w, struct hurray_error *err) {
    HR_FAIL_IF(!w, err, HURRAY_E_ARGUMENT, "writer", "stream writer finish: writer is NULL");
    if (w->finished) return HURRAY_OK;
    w->finished = 1;
    int status = w->status;
    if (status != HURRAY_OK) {
        if (err) *err = w->error;
    } else if (w->kind == W_MEMORY) {
        status = grow(w->allocator, &w->buf, &w->cap, w->len, w->len + sizeof end_frame, err);
        if (status == HURRAY_OK) status = put(w, end_frame, sizeof end_frame, err);
    } else {
        status = put(w, end_frame, sizeof end_frame, err);
        if (status == HURRAY_OK) status = flush(w, err);
        if (status != HURRAY_OK) writer_fail(w, status, err);
    }
    int closed = writer_release(w, status == HURRAY_OK ? err : NULL);
    return status != HURRAY_OK ? status : closed;
}

void hurray_stream_writer_abandon(struct hurray_stream_writer *w) {
    if (!w || w->finished) return;
    w->finished = 1;
    w->abandoned = 1;
    writer_release(w, NULL);
}

int hurray_stream_writer_getvalue(const struct hurray_stream_writer *w, const uint8_t **data,
                                  size_t *len, struct hurray_error *err) {
    HR_FAIL_IF(!w || !data || !len, err, HURRAY_E_ARGUMENT, "writer",
               "stream writer getvalue: NULL argument");
    HR_FAIL_IF(w->kind != W_MEMORY, err, HURRAY_E_ARGUMENT, "writer",
               "stream writer getvalue: the writer has a destination; only a memory writer "
               "holds its bytes");
    *data = w->buf;
    *len = w->len;
    return HURRAY_OK;
}

uint64_t hurray_stream_writer_offset(const struct hurray_stream_writer *w) {
    return w ? w->offset : 0;
}

void hurray_stream_writer_destroy(struct hurray_stream_writer *w) {
    if (!w) return;
    hurray_stream_writer_abandon(w); /* unfinished: no end frame (HR-STREAM-10) */
    hri_free(w->allocator, w->buf, w->cap);
    hri_free(w->allocator, w->scratch, w->scratch_cap);
    hri_free(w->allocator, w, sizeof *w);
}
