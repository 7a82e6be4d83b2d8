/* Streams: a reader and a writer of self-delimiting frames. docs/spec/stream.md
 *
 * A stream is frames with no end marker; it ends where its input ends. The
 * reader yields items (struct hurray_item: a tensor with its buffers, or a
 * whole composite with its members: next-item semantics, HR-STREAM-3); the
 * writer takes items and emits each as soon as it is given it.
 *
 * Both are opaque handles (_create / _destroy: the lifecycle rule of
 * hurray.h for every libhurray handle), with the allocator, limits and
 * cross_machine given at creation. Neither uses globals, signals or Python:
 * a reader or writer may be used from any one thread at a time, and blocking
 * calls on a descriptor can run with the GIL released.
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
#include "hurray/limit.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

#define HURRAY_STREAM_MAGIC "HRSF"
#define HURRAY_STREAM_FRAME_HEADER_BYTES 8u

/* Frame kinds (stream.md § Frame, HR-STREAM-2). */
enum hurray_frame_kind {
    HURRAY_FRAME_TENSOR = 0x01,
    HURRAY_FRAME_COMPOSITE = 0x02
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
};

/* Zero options: default limits and allocator, cross_machine off. */
HURRAY_API void hurray_stream_reader_options_init(struct hurray_stream_reader_options *o);

/* A reader over the caller's bytes, borrowed (not copied) for the reader's
 * life. `opt` may be NULL. */
HURRAY_API HURRAY_NODISCARD int hurray_stream_reader_create_memory(
    const uint8_t *src, size_t len, const struct hurray_stream_reader_options *opt,
    struct hurray_stream_reader **out, struct hurray_error *err);
/* A reader over a duplicate of `fd` (dup, close-on-exec): closing or destroying
 * the reader closes the duplicate, never the caller's fd. IO if fd is not
 * open. The reader reads ahead up to 64 KiB for small parts; buffer data is
 * read straight into the item's buffers. */
HURRAY_API HURRAY_NODISCARD int hurray_stream_reader_create_fd(
    int fd, const struct hurray_stream_reader_options *opt, struct hurray_stream_reader **out,
    struct hurray_error *err);
/* A reader over a caller's read function; `ctx` is the caller's. */
HURRAY_API HURRAY_NODISCARD int hurray_stream_reader_create_callback(
    hurray_stream_read_fn read, void *ctx, const struct hurray_stream_reader_options *opt,
    struct hurray_stream_reader **out, struct hurray_error *err);

/* The next item (HR-STREAM-3): OK with *out a tensor or a whole composite,
 * which the caller owns (hurray_item_destroy); OK with *out = NULL at the clean
 * end (and on every later call, and after close). On failure *out = NULL and
 * the reader stays failed: every later call returns the same status and
 * error record. Nothing is allocated from a size the stream states before
 * that size has passed its limit (HR-STREAM-7). Buffers are allocated with
 * hurray_item_buffer_alloc (items have owns_buffers HURRAY_ITEM_OWNS_ALIGNED). */
HURRAY_API HURRAY_NODISCARD int hurray_stream_reader_next(struct hurray_stream_reader *r,
                                                          struct hurray_item **out,
                                                          struct hurray_error *err);
/* Stream offset just past the last byte parsed: after next() yields an item,
 * the end of that item's last frame. */
HURRAY_API uint64_t hurray_stream_reader_offset(const struct hurray_stream_reader *r);
/* Releases the transport (closes the duplicate fd) and drops any partly read
 * item; the reader is then exhausted. Idempotent, NULL-tolerant. */
HURRAY_API void hurray_stream_reader_close(struct hurray_stream_reader *r);
/* close, then frees the reader. NULL-tolerant. */
HURRAY_API void hurray_stream_reader_destroy(struct hurray_stream_reader *r);

/* ---- writer --------------------------------------------------------------- */

struct hurray_stream_writer; /* opaque */

struct hurray_stream_writer_options {
    const struct hurray_allocator *allocator; /* NULL: malloc/free */
    int cross_machine;                        /* 1: refuse buffers not producer_synced */
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
/* Ends the stream: releases the transport (closes the duplicate fd). A memory
 * writer keeps its bytes. Idempotent: OK again after the first call (which
 * returns a failed writer's status once). */
HURRAY_API HURRAY_NODISCARD int hurray_stream_writer_finish(struct hurray_stream_writer *w,
                                                            struct hurray_error *err);
/* A memory writer's bytes so far (finished or not): *data stays valid until
 * the next write or destroy. Non-destructive, repeatable. ARGUMENT for a writer
 * with a destination (fd, callback). */
HURRAY_API HURRAY_NODISCARD int hurray_stream_writer_getvalue(
    const struct hurray_stream_writer *w, const uint8_t **data, size_t *len,
    struct hurray_error *err);
/* Bytes written so far (any transport). */
HURRAY_API uint64_t hurray_stream_writer_offset(const struct hurray_stream_writer *w);
/* Finishes (ignoring errors), then frees the writer. NULL-tolerant. */
HURRAY_API void hurray_stream_writer_destroy(struct hurray_stream_writer *w);

HURRAY_EXTERN_C_END

#endif
