/* The HRRYFILE container: canonical writer and validating reader.
 * docs/spec/file-container.md, kv.md
 *
 * Writing: the caller names items (tensors and composites; struct
 * hurray_item) and borrows them, with an optional KV map, to one of the
 * writers; nothing is stolen. Composite members get their generated names
 * "{head}.{index}". Everything is validated before the first byte is written.
 *
 * Reading is index-first (file-container.md § Reading): hurray_file_create_*
 * read the header and the parts asked for (the index, the KV section, or
 * both) by positioned reads and validate them whole (§ Decoding order: every
 * descriptor, every buffer offset and gap, names, KV, composite trees), and
 * hand out nothing from a file that fails. Validation never reads through a
 * mapping, so a file truncated while it is opened is an error value, never a
 * signal. Loading then reads (copy mode) or maps copy-on-write (mmap mode)
 * only the byte ranges of the items asked for: each loaded item holds its
 * own bytes (copy) or a reference on its mapping, stays valid after
 * hurray_file_destroy, and pins nothing else. Every loaded buffer's address
 * satisfies its declared alignment. */
#ifndef HURRAY_FILE_H
#define HURRAY_FILE_H

#include <stddef.h>
#include <stdint.h>
#include "hurray/alloc.h"
#include "hurray/descriptor.h"
#include "hurray/export.h"
#include "hurray/item.h"
#include "hurray/kv.h"
#include "hurray/limit.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

#define HURRAY_FILE_MAGIC "HRRYFILE"
#define HURRAY_FILE_HEADER_BYTES 64u
#define HURRAY_FILE_VERSION_MAJOR 1u
#define HURRAY_FILE_VERSION_MINOR 0u
#define HURRAY_FILE_MIN_ENTRY_BYTES 56u
#define HURRAY_MAX_NAME_BYTES_FORMAT 65535u
#define HURRAY_MAX_FILE_TENSORS_FORMAT UINT32_MAX

/* Index entry kinds (file-container.md § Index). */
enum hurray_file_kind {
    HURRAY_FILE_KIND_TENSOR = 0x01,
    HURRAY_FILE_KIND_COMPOSITE = 0x02
};

/* ---- writing ------------------------------------------------------------- */

/* One named top-level item. `name` is a NUL-terminated UTF-8 name (kv.md
 * HR-KV-6); `item` is a tensor or a composite (borrowed). */
struct hurray_file_entry {
    const char *name;
    const struct hurray_item *item;
};

/* What a file holds: entries in index order, and the KV map (any order; an
 * empty map writes no KV section). All borrowed. */
struct hurray_file_contents {
    const struct hurray_file_entry *entries;
    size_t count;
    const struct hurray_kv_entry *kv;
    size_t kv_count;
};

struct hurray_file_write_options {
    const struct hurray_allocator *allocator; /* temporary plan memory; NULL: default */
    /* The limits a reader will apply (file-container.md HR-FILE-15): contents that a
     * reader with these limits would refuse are refused before anything is written, with
     * LIMIT naming the entry. NULL: the format's maxima only (a file a default reader
     * may refuse can be written). */
    const struct hurray_limits *limits;
    /* Called by the writers that write to a file or descriptor (not by
     * hurray_file_encode) with the bytes written so far and the file's total: once
     * before the first byte (done = 0), after each chunk of at most
     * HURRAY_FILE_PROGRESS_CHUNK bytes, and before the file is flushed and renamed. A
     * non-zero return stops the write: IO with sys_errno ECANCELED, and
     * hurray_file_write_path removes its temporary file and leaves `path` untouched.
     * NULL: no calls, the whole file in one vectored write sequence. */
    int (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    /* enum hurray_file_write_flags, OR-ed. 0: hurray_file_write_path flushes the new file
     * to stable storage before its rename (file-container.md HR-FILE-7). */
    unsigned flags;
};
#define HURRAY_FILE_PROGRESS_CHUNK (UINT64_C(16) << 20)

enum hurray_file_write_flags {
    /* hurray_file_write_path skips the flush before the rename, and nothing else: still
     * written beside the path and renamed over it, so a running system's readers see the
     * old file or the whole new one; after a crash the path may hold a partial file
     * (file-container.md HR-FILE-18). Other writers ignore it. */
    HURRAY_FILE_WRITE_NO_SYNC = 1
};

/* Exact byte length of the canonical file for `contents`. Refuses exactly
 * what the writers refuse (file-container.md § Writing). */
HURRAY_API HURRAY_NODISCARD int hurray_file_encoded_len(const struct hurray_file_contents *contents,
                                                        const struct hurray_file_write_options *opt,
                                                        uint64_t *len, struct hurray_error *err);
/* Writes the canonical file into dst. ARGUMENT if cap is too small. */
HURRAY_API HURRAY_NODISCARD int hurray_file_encode(const struct hurray_file_contents *contents,
                                                   const struct hurray_file_write_options *opt,
                                                   uint8_t *dst, size_t cap, size_t *written,
                                                   struct hurray_error *err);
/* Writes the canonical file to `fd` at its current position in a few
 * vectored writes (EINTR and short writes handled; works on pipes and
 * non-blocking descriptors). IO with the system's message on failure. The fd
 * is not closed. */
HURRAY_API HURRAY_NODISCARD int hurray_file_write_fd(int fd,
                                                     const struct hurray_file_contents *contents,
                                                     const struct hurray_file_write_options *opt,
                                                     struct hurray_error *err);
/* Writes the file to a new file beside `path` ("<path>.hurray-tmp-<host>-<pid>-…",
 * file-container.md HR-FILE-16; temporary files of the same target left by a dead
 * process of this host are removed first),
 * created exclusively, with the mode of the file it replaces, else 0666 less
 * the umask), flushes it to stable storage (not with HURRAY_FILE_WRITE_NO_SYNC,
 * HR-FILE-18) and renames it over `path` (over
 * the final target when `path` is a symbolic link, which keeps the link): no
 * reader sees a half-written file, and a reader holding a mapping of the old
 * file keeps its bytes (file-container.md HR-FILE-7). Validation happens
 * before anything is created; on failure the temporary file is removed and
 * `path` is untouched. */
HURRAY_API HURRAY_NODISCARD int hurray_file_write_path(const char *path,
                                                       const struct hurray_file_contents *contents,
                                                       const struct hurray_file_write_options *opt,
                                                       struct hurray_error *err);

/* ---- reading ------------------------------------------------------------- */

enum hurray_file_mode {
    /* each loaded item's byte range is read into memory of its own */
    HURRAY_FILE_COPY = 0,
    /* each loaded item's byte range is mapped copy-on-write (writable; writes
     * never reach the file, HR-FILE-11); items borrow from the mapping */
    HURRAY_FILE_MMAP = 1
};

/* The parts of a file a reader reads and validates (file-container.md
 * HR-FILE-9). 0 means INDEX | KV; HEADER alone reads neither (hurray_file_kv_each
 * reads the KV section afterwards, entry by entry). */
enum hurray_file_parts {
    HURRAY_FILE_PARTS_ALL = 0,
    HURRAY_FILE_PARTS_INDEX = 1, /* entries: what loading needs */
    HURRAY_FILE_PARTS_KV = 2,    /* the KV section only: the index is not read */
    /* the header and the padding before the data only: neither the index nor the KV
     * section is read at open (hurray_file_kv_each reads the KV section later) */
    HURRAY_FILE_PARTS_HEADER = 4
};

struct hurray_file_options {
    const struct hurray_limits *limits;       /* NULL: defaults */
    /* NULL: malloc/free. Every allocation, the loaded items' included: it
     * must outlive the file and every item loaded from it. */
    const struct hurray_allocator *allocator;
    int mode;                                 /* enum hurray_file_mode (open_path only) */
    /* enum hurray_file_parts, OR-ed: without INDEX the file has no entries
     * (entry_count 0); without KV hurray_file_kv is the empty map. */
    int parts;
};

struct hurray_file; /* opaque */

/* Validates a file image of `size` bytes. The image is copied (page-aligned)
 * first, so `data` need not outlive the call; loaded items borrow from that
 * copy and keep it alive. */
HURRAY_API HURRAY_NODISCARD int hurray_file_create_memory(const uint8_t *data, size_t size,
                                                        const struct hurray_file_options *opt,
                                                        struct hurray_file **out,
                                                        struct hurray_error *err);
/* Opens `path` in opt->mode and validates the parts asked for, reading only
 * the header, the padding before the data, the index and the data region's
 * gaps (and the KV section when asked). Anything but a regular file (a
 * directory, FIFO, socket, device) is refused before a byte is read, without
 * blocking. Not found, permission denied, read failures: IO with the system's
 * message, its error number (err->sys_errno) and the path; a file that
 * shrinks while it is read: TRUNCATED naming the path. The file stays open
 * until hurray_file_destroy, for loading. */
HURRAY_API HURRAY_NODISCARD int hurray_file_create_path(const char *path,
                                                      const struct hurray_file_options *opt,
                                                      struct hurray_file **out,
                                                      struct hurray_error *err);
/* Closes the file (its descriptor, metadata and, in memory mode, its
 * reference on the image). NULL-tolerant. Loaded items stay valid. */
HURRAY_API void hurray_file_destroy(struct hurray_file *file);

/* Every index entry, members included, in file order. */
HURRAY_API size_t hurray_file_entry_count(const struct hurray_file *file);
/* NUL-terminated name of entry i; NULL when out of range. Valid until destroy. */
HURRAY_API const char *hurray_file_entry_name(const struct hurray_file *file, size_t i);
/* enum hurray_file_kind of entry i; 0 when out of range. */
HURRAY_API int hurray_file_entry_kind(const struct hurray_file *file, size_t i);
/* 1 when entry i is a composite member (named by the container), else 0. */
HURRAY_API int hurray_file_entry_is_member(const struct hurray_file *file, size_t i);
/* The buffer count of entry i's descriptor (0 for a composite head), read from the index
 * (file-container.md § Index, HR-FILE-2: one buffer offset per buffer); -1 when out of
 * range. What loading entry i would read, known without decoding its descriptor. */
HURRAY_API int hurray_file_entry_buffer_count(const struct hurray_file *file, size_t i);
/* Top-level entries (not composite members), in file order: what load returns. */
HURRAY_API size_t hurray_file_top_level_count(const struct hurray_file *file);
/* Entry index of the k-th top-level entry; SIZE_MAX when out of range. */
HURRAY_API size_t hurray_file_top_level_entry(const struct hurray_file *file, size_t k);
/* Looks a name up (members included). 1 and *index when found, else 0. */
HURRAY_API int hurray_file_find(const struct hurray_file *file, const char *name, size_t *index);
/* Decodes entry i's descriptor into `out` (initialised; reset first). */
HURRAY_API HURRAY_NODISCARD int hurray_file_entry_descriptor(const struct hurray_file *file,
                                                             size_t i,
                                                             struct hurray_descriptor *out,
                                                             struct hurray_error *err);
/* Loads entry i as an item: a tensor with its buffers, or a composite head
 * with its whole member tree (a member entry loads that member's subtree).
 * Reads (copy) or maps (mmap) only that item's byte range; the item owns a
 * reference on those bytes, nothing else, and outlives the file. Free with
 * hurray_item_destroy. ARGUMENT when i is out of range; TRUNCATED (naming the
 * path) when the file has shrunk since it was opened; IO on a read or map
 * failure. */
HURRAY_API HURRAY_NODISCARD int hurray_file_load_item(struct hurray_file *file, size_t i,
                                                      struct hurray_item **out,
                                                      struct hurray_error *err);
/* Loads entries[0..n) into out[0..n) as hurray_file_load_item would, with
 * few system calls: copy mode reads neighbouring items together (each still
 * gets memory of its own), mmap mode maps neighbouring items (within 1 MiB)
 * with one mapping they share. All or nothing: on failure every out[k] is
 * NULL. An entry may be named more than once: each gets its own item (in mmap
 * mode over the same copy-on-write pages). */
HURRAY_API HURRAY_NODISCARD int hurray_file_load_items(struct hurray_file *file,
                                                       const size_t *entries, size_t n,
                                                       struct hurray_item **out,
                                                       struct hurray_error *err);
/* Progress of copy-mode loads from a path (file-container.md HR-FILE-17):
 * hurray_file_load_items / _load_item call progress(ctx, done, total), total
 * the sum of the spans (hurray_file_entry_span) of the items the call loads,
 * done the bytes of them read so far: once before the first read (done = 0),
 * after each read of at most HURRAY_FILE_PROGRESS_CHUNK bytes, the last time
 * with done = total. A non-zero return stops the load: IO with sys_errno
 * ECANCELED, nothing returned, nothing leaked. Never called in mmap mode or on
 * an image in memory. NULL: no calls (each item read in one piece). */
HURRAY_API void hurray_file_set_progress(struct hurray_file *file,
                                         int (*progress)(void *ctx, uint64_t done,
                                                         uint64_t total),
                                         void *ctx);
/* The bytes one load of entry i reads into its item (its byte range, its own
 * gaps included; a composite's whole tree): what the progress hook counts for
 * it. ARGUMENT when i is out of range. */
HURRAY_API HURRAY_NODISCARD int hurray_file_entry_span(const struct hurray_file *file, size_t i,
                                                       uint64_t *span, struct hurray_error *err);
/* Reads bytes [offset, offset + len) of buffer b of tensor entry i into dst
 * (positioned reads in both modes; from the image in memory): what a partial
 * read of a large tensor needs, with none of its other bytes read
 * (file-container.md HR-FILE-14). ARGUMENT when i is out of range, not a
 * tensor, has no buffer b, or the range is not inside the buffer; TRUNCATED
 * (naming the path) when the file has shrunk since it was opened; IO on a
 * read failure. Safe to call from several threads at once on one file. */
HURRAY_API HURRAY_NODISCARD int hurray_file_read_buffer(const struct hurray_file *file, size_t i,
                                                        unsigned b, uint64_t offset, uint64_t len,
                                                        void *dst, struct hurray_error *err);
/* The KV section (empty when the file has none, or when it was not read:
 * opt->parts without HURRAY_FILE_PARTS_KV). Valid until close. */
HURRAY_API const struct hurray_kv *hurray_file_kv(const struct hurray_file *file);
/* The KV section's entries handed to `fn` one at a time, in key order (kv.h,
 * hurray_kv_entry_fn): from the map decoded at open when the file was opened with
 * HURRAY_FILE_PARTS_KV; otherwise the section is read now and decoded entry by entry
 * (hurray_kv_decode_each), so that the whole map is never held (file-container.md
 * HR-FILE-9). The section is validated whole, with the statuses, fields, offsets and
 * messages an open with HURRAY_FILE_PARTS_KV gives, before any entry is handed over; a file
 * without a KV section calls `fn` never. A status other than HURRAY_OK from `fn` stops the
 * walk and is returned (its record's field prefixed "kv/"). */
HURRAY_API HURRAY_NODISCARD int hurray_file_kv_each(struct hurray_file *file,
                                                    hurray_kv_entry_fn fn, void *ctx,
                                                    struct hurray_error *err);

HURRAY_EXTERN_C_END

#endif
