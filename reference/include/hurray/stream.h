/* Streams: a reader and a writer of self-delimiting frames. docs/spec/stream.md
 *
 * A stream is frames closed by an end frame when its writer finishes it
 * (HR-STREAM-12); one without an end frame ends where its input ends, and the
 * reader says which way it ended (HR-STREAM-13). The reader yields items
 * (struct hurray_item: a tensor with its buffers, or a whole composite with
 * its members: next-item semantics, HR-STREAM-3); the writer takes items and
 * emits each as soon as it is given it.
 *
 * Both are explicit contexts (create / destroy), with the allocator, limits,
 * cross_machine, timeout and interrupt hook given at creation. Neither uses
 * globals, signals or Python; blocking calls on a descriptor can run with the
 * GIL released.
 *
 * Threads (HR-STREAM-15). A reader or writer is used by one thread at a time,
 * with one exception: hurray_stream_reader_close, hurray_stream_reader_offset
 * and hurray_stream_reader_end may be called from any thread at any moment,
 * also while another thread is inside hurray_stream_reader_next on the same
 * reader. A close then wakes a next blocked on a descriptor at once (a
 * callback reader's next, when the caller's read function returns); that next
 * returns OK with *out = NULL, dropping the item it was reading, and the
 * transport is released by whichever of the two calls returns last. Close
 * never waits. A second next running at the same time as a first is refused
 * (ARGUMENT). hurray_stream_reader_destroy runs alone: after every other call on
 * the reader has returned. Close is not async-signal-safe.
 *
 * SIGPIPE: writing to a pipe or socket whose reader has gone makes the system
 * raise SIGPIPE, which by default ends the process. libhurray never changes
 * signal dispositions; a caller that writes to pipes or sockets should ignore
 * SIGPIPE (Python does) so that the write fails with EPIPE, reported as IO. */
#ifndef HURRAY_STREAM_H
#define HURRAY_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include "hurray/alloc.h"
#include "hurray/export.h"
#include "hurray/item.h"
#include "hurray/kv.h"
#include "hurray/limit.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

#define HURRAY_STREAM_MAGIC "HRSF"
#define HURRAY_STREAM_FRAME_HEADER_BYTES 8u

/* Frame kinds (stream.md § Frame, HR-STREAM-2; the end frame HR-STREAM-12). */
enum hurray_frame_kind {
    HURRAY_FRAME_TENSOR = 0x01,
    HURRAY_FRAME_COMPOSITE = 0x02,
    HURRAY_FRAME_END = 0x03,
    HURRAY_FRAME_ANNOTATION = 0x04 /* revision 3: a name and metadata (HR-STREAM-17) */
};
/* An annotation frame's head: frame header, name_length, reserved, kv_length. */
#define HURRAY_STREAM_ANNOTATION_HEAD_BYTES 24u

/* An item's name and metadata (stream.md HR-STREAM-17, HR-STREAM-18). Given to
 * hurray_stream_writer_write_annotated; filled by hurray_stream_reader_annotation.
 * name NULL (and name_len 0): no name -- a non-NULL name is a name, so an
 * empty one is refused (CONSTRAINT); metadata_count 0: no metadata. */
struct hurray_stream_annotation {
    const char *name; /* a name (kv.md HR-KV-6), name_len bytes, not NUL-terminated */
    uint32_t name_len;
    const struct hurray_kv_entry *metadata; /* any order when writing; sorted when read */
    size_t metadata_count;
};
/* The end frame is its 8-byte header alone: "HRSF" 03 00 00 00. */
#define HURRAY_STREAM_END_FRAME_BYTES 8u

/* How a stream ended (HR-STREAM-13). */
enum hurray_stream_end {
    HURRAY_STREAM_NOT_ENDED = 0,  /* not (yet): reading, failed, or closed first */
    HURRAY_STREAM_END_FRAME = 1,  /* an end frame: its writer finished it */
    HURRAY_STREAM_END_EOF = 2     /* end of input at a frame boundary, no end frame */
};

/* ---- transports given as callbacks -------------------------------------- */

/* Reads up to `cap` (>= 1) bytes into dst. OK with 1 <= *got <= cap, or OK
 * with *got = 0 at the end of the input; any other status fails the reader
 * with it (fill `err`; IO for system errors). */
typedef int (*hurray_stream_read_fn)(void *ctx, uint8_t *dst, size_t cap, size_t *got,
                                     struct hurray_error *err);
/* Writes all `len` bytes of src, or fails (IO for system errors). */
typedef int (*hurray_stream_write_fn)(void *ctx, const uint8_t *src, size_t len,
                                      struct hurray_error *err);

/* ---- reader --------------------------------------------------------------- */

struct hurray_stream_reader; /* opaque */

struct hurray_stream_reader_options {
    const struct hurray_limits *limits;       /* NULL: defaults (copied at creation) */
    const struct hurray_allocator *allocator; /* NULL: malloc/free; also the items' */
    int cross_machine;                        /* 1: every buffer producer_synced */
    /* 1: a stream that ends without an end frame is TRUNCATED (field "end")
     * rather than the end state EOF (HR-STREAM-13). */
    int require_end_frame;
    /* Descriptor readers (HR-STREAM-14): > 0 bounds each wait for the next
     * byte to that many milliseconds (then IO with sys_errno ETIMEDOUT,
     * sticky); 0 waits forever; < 0 is ARGUMENT. Ignored by memory and
     * callback readers. */
    int timeout_ms;
    /* Descriptor readers: runs, on the reading thread, when a wait is
     * interrupted by a signal (EINTR), and at least every 200 ms of a wait
     * (a signal that arrived just before the wait interrupts nothing); non-zero
     * stops the read (IO with sys_errno EINTR, sticky), zero resumes it.
     * NULL: always resume. */
    int (*on_interrupt)(void *ctx);
    void *interrupt_ctx;
};

/* Zero options: default limits and allocator, cross_machine off, no end frame
 * required, no timeout, no interrupt hook. */
HURRAY_API void hurray_stream_reader_options_init(struct hurray_stream_reader_options *o);

/* A reader over the caller's bytes, borrowed (not copied) for the reader's
 * life. `opt` may be NULL. */
HURRAY_API HURRAY_NODISCARD int hurray_stream_reader_create_memory(
    const uint8_t *src, size_t len, const struct hurray_stream_reader_options *opt,
    struct hurray_stream_reader **out, struct hurray_error *err);
/* A reader over a duplicate of `fd` (dup, close-on-exec): closing or destroying
 * the reader closes the duplicate, never the caller's fd. IO if fd is not
 * open. The reader reads ahead up to 64 KiB for small parts (also past the
 * end frame); buffer data is read straight into the item's buffers. */
HURRAY_API HURRAY_NODISCARD int hurray_stream_reader_create_fd(
    int fd, const struct hurray_stream_reader_options *opt, struct hurray_stream_reader **out,
    struct hurray_error *err);
/* A reader over a caller's read function; `ctx` is the caller's. */
HURRAY_API HURRAY_NODISCARD int hurray_stream_reader_create_callback(
    hurray_stream_read_fn read, void *ctx, const struct hurray_stream_reader_options *opt,
    struct hurray_stream_reader **out, struct hurray_error *err);

/* The next item (HR-STREAM-3): OK with *out a tensor or a whole composite,
 * which the caller owns (hurray_item_destroy); OK with *out = NULL at the end --
 * an end frame, or the end of input at a frame boundary (HR-STREAM-4; which
 * one: hurray_stream_reader_end) -- and on every later call, and after close.
 * On failure *out = NULL and the reader stays failed: every later call returns
 * the same status and error record. Nothing is allocated from a size the
 * stream states before that size has passed its limit (HR-STREAM-7), and a
 * buffer's memory is committed as its bytes arrive, at most 1 MiB ahead
 * (HR-STREAM-16). Items have owns_buffers HURRAY_ITEM_OWNS_ALIGNED: each
 * buffer is freed by hurray_item_buffer_free (buffers under 1 MiB come from
 * the allocator; larger ones are address space reserved from the system). */
HURRAY_API HURRAY_NODISCARD int hurray_stream_reader_next(struct hurray_stream_reader *r,
                                                          struct hurray_item **out,
                                                          struct hurray_error *err);
/* Stream offset just past the last byte parsed: after next() yields an item,
 * the end of that item's last frame; at an end frame, the end of it. Any
 * thread, any time (an atomic read). */
HURRAY_API uint64_t hurray_stream_reader_offset(const struct hurray_stream_reader *r);
/* The name and metadata of the item the last hurray_stream_reader_next
 * yielded (HR-STREAM-18): all zero for an item without an annotation frame,
 * and when next yielded nothing. The pointers are the reader's; they stay valid
 * until the next call of next, or destroy (close keeps them). The reading
 * thread only. */
HURRAY_API void hurray_stream_reader_annotation(const struct hurray_stream_reader *r,
                                                struct hurray_stream_annotation *out);
/* How the stream ended: a hurray_stream_end (HURRAY_STREAM_NOT_ENDED while
 * reading, after a failure, or when closed before the end). Any thread, any
 * time. NULL: HURRAY_STREAM_NOT_ENDED. */
HURRAY_API int hurray_stream_reader_end(const struct hurray_stream_reader *r);
/* Releases the transport (closes the duplicate fd) and drops any partly read
 * item; the reader is then exhausted. Idempotent, NULL-tolerant; callable
 * from any thread, also while another is blocked in next, which it wakes at
 * once (see Threads above). */
HURRAY_API void hurray_stream_reader_close(struct hurray_stream_reader *r);
/* close, then frees the reader. NULL-tolerant. */
HURRAY_API void hurray_stream_reader_destroy(struct hurray_stream_reader *r);

/* ---- writer --------------------------------------------------------------- */

struct hurray_stream_writer; /* opaque */

struct hurray_stream_writer_options {
    const struct hurray_allocator *allocator; /* NULL: malloc/free */
    int cross_machine;                        /* 1: refuse buffers not producer_synced */
    /* Descriptor writers (HR-STREAM-14): > 0 bounds each wait for room to
     * write to that many milliseconds (then IO with sys_errno ETIMEDOUT: the
     * writer is failed); 0 waits forever; < 0 is ARGUMENT. */
    int timeout_ms;
    /* Descriptor writers: as the reader's (EINTR; non-zero stops the write). */
    int (*on_interrupt)(void *ctx);
    void *interrupt_ctx;
};

HURRAY_API void hurray_stream_writer_options_init(struct hurray_stream_writer_options *o);

/* A writer into a growable buffer it owns (hurray_stream_writer_getvalue). */
HURRAY_API HURRAY_NODISCARD int hurray_stream_writer_create_memory(
    const struct hurray_stream_writer_options *opt, struct hurray_stream_writer **out,
    struct hurray_error *err);
/* A writer to a duplicate of `fd` (dup, close-on-exec); finishing or destroying
 * the writer closes the duplicate, never the caller's fd. */
HURRAY_API HURRAY_NODISCARD int hurray_stream_writer_create_fd(
    int fd, const struct hurray_stream_writer_options *opt, struct hurray_stream_writer **out,
    struct hurray_error *err);
/* A writer to a caller's write function. */
HURRAY_API HURRAY_NODISCARD int hurray_stream_writer_create_callback(
    hurray_stream_write_fn write, void *ctx, const struct hurray_stream_writer_options *opt,
    struct hurray_stream_writer **out, struct hurray_error *err);

/* Writes one item (HR-STREAM-10): a tensor frame with every buffer in
 * descriptor order, or a composite as its head frame then its members,
 * recursively; all of it reaches the transport before the call returns. The
 * whole item is checked first (descriptors, buffer sizes, the composite
 * validator, cross_machine): if it fails nothing is written and the writer
 * stays usable. An I/O failure while writing leaves the writer failed (IO on
 * every later write). ARGUMENT after finish. The item is only read. */
HURRAY_API HURRAY_NODISCARD int hurray_stream_writer_write(struct hurray_stream_writer *w,
                                                           const struct hurray_item *item,
                                                           struct hurray_error *err);
/* hurray_stream_writer_write with a name and/or metadata: an annotation frame
 * (HR-STREAM-17), then the item. `a` NULL, or with neither a name (NULL) nor
 * metadata: exactly hurray_stream_writer_write (no annotation frame). The name
 * (HR-KV-6, at most 65,535 bytes) and the map (kv.md § Encoding) are checked
 * with the item before anything is written: CONSTRAINT / LIMIT / DUPLICATE /
 * RANGE / UNSUPPORTED leave the writer usable. */
HURRAY_API HURRAY_NODISCARD int hurray_stream_writer_write_annotated(
    struct hurray_stream_writer *w, const struct hurray_item *item,
    const struct hurray_stream_annotation *a, struct hurray_error *err);
/* Ends the stream (HR-STREAM-10): writes the end frame (HR-STREAM-12),
 * flushes, releases the transport (closes the duplicate fd). A memory writer
 * keeps its bytes, the end frame included. Idempotent: OK again after the first
 * call (which returns a failed writer's status once; a failed writer writes no
 * end frame). OK without writing anything on an abandoned writer. */
HURRAY_API HURRAY_NODISCARD int hurray_stream_writer_finish(struct hurray_stream_writer *w,
                                                            struct hurray_error *err);
/* Abandons the stream (HR-STREAM-10): releases the transport WITHOUT the end
 * frame, so that a reader sees the end state EOF -- a stream its writer did
 * not finish (a producer that failed), or a revision-1 stream. Later writes
 * are ARGUMENT; finish does nothing. No-op on a finished writer.
 * NULL-tolerant. */
HURRAY_API void hurray_stream_writer_abandon(struct hurray_stream_writer *w);
/* A memory writer's bytes so far (finished or not): *data stays valid until
 * the next write or destroy. Non-destructive, repeatable. ARGUMENT for a writer
 * with a destination (fd, callback). */
HURRAY_API HURRAY_NODISCARD int hurray_stream_writer_getvalue(
    const struct hurray_stream_writer *w, const uint8_t **data, size_t *len,
    struct hurray_error *err);
/* Bytes written so far (any transport). */
HURRAY_API uint64_t hurray_stream_writer_offset(const struct hurray_stream_writer *w);
/* Frees the writer. An unfinished writer is abandoned first, exactly as by
 * hurray_stream_writer_abandon: the transport is released WITHOUT the end
 * frame (HR-STREAM-10), so a writer dropped without finish -- an error path, a
 * producer that failed -- reads back as a stream that did not end well (end
 * state EOF), never as a finished one. To end a stream well, call
 * hurray_stream_writer_finish before destroy. A finished writer is only freed.
 * NULL-tolerant. */
HURRAY_API void hurray_stream_writer_destroy(struct hurray_stream_writer *w);

HURRAY_EXTERN_C_END

#endif
