/* Items: a tensor with its buffers, or a composite with its members, as files
 * and streams carry them. docs/spec/composite.md, stream.md, file-container.md
 *
 * Ownership: an item owns its descriptor and its `members` array and every
 * member item. Buffer bytes are either owned (allocated with `allocator`,
 * freed by hurray_item_destroy) or borrowed from an owner (e.g. a memory-mapped
 * file) that `owner_release(owner)` releases once, when the item tree that
 * holds it is freed. Readers produce items; writers take items whose buffers
 * the caller borrows to them (owner_release NULL, owns_buffers 0). */
#ifndef HURRAY_ITEM_H
#define HURRAY_ITEM_H

#include <stddef.h>
#include <stdint.h>
#include "hurray/alloc.h"
#include "hurray/descriptor.h"
#include "hurray/export.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

/* One buffer's bytes (CPU-addressable). */
struct hurray_item_buffer {
    uint8_t *data;  /* NULL only when size == 0 */
    uint64_t size;  /* == the descriptor's buffer-table size */
};

struct hurray_item {
    /* heap-allocated (see hurray_item_destroy); never NULL in a valid item. Each
     * node of a tree costs its item, its compact descriptor and that
     * descriptor's storage block: no fixed-size records. A reader's node holds
     * the item, the descriptor and a one-buffer table in one block. */
    struct hurray_descriptor *descriptor;
    /* tensor: descriptor->buffer_count entries; composite: NULL */
    struct hurray_item_buffer *buffers;
    /* composite (layout composite): descriptor->layout.member_count members,
     * each a tensor or a composite; tensor: NULL, 0 */
    struct hurray_item **members;
    uint32_t member_count;
    /* HURRAY_ITEM_BORROWED (0): the caller's or `owner`'s bytes;
     * HURRAY_ITEM_OWNS_BUFFERS (1): each buffers[i].data was allocated with
     * `allocator` at exactly buffers[i].size bytes and is freed with the item;
     * HURRAY_ITEM_OWNS_ALIGNED (2): each was allocated with
     * hurray_item_buffer_alloc, or by a stream reader (what stream readers
     * yield), and is freed with the item by hurray_item_buffer_free. */
    uint8_t owns_buffers;
    const struct hurray_allocator *allocator; /* NULL = default */
    /* Optional owner of borrowed bytes (e.g. a mapping), released once on free. */
    void *owner;
    void (*owner_release)(void *owner);
};

#define HURRAY_ITEM_BORROWED 0
#define HURRAY_ITEM_OWNS_BUFFERS 1
#define HURRAY_ITEM_OWNS_ALIGNED 2

/* Frees the whole tree (descriptor, buffers if owned, members, owner). NULL-tolerant.
 * Every block is returned to `allocator` with the size it was allocated at:
 * the item (sizeof(struct hurray_item)), the descriptor (hurray_descriptor_reset,
 * which frees its storage block, then sizeof(struct hurray_descriptor)) -- or,
 * when `descriptor` points right behind the item (the one block libhurray's
 * readers allocate per node: a struct hurray_item immediately followed by its
 * struct hurray_descriptor), that block at the size of both --, `members`
 * (member_count pointers;
 * NULL slots are skipped, each member is freed with its own allocator),
 * `buffers` (descriptor->buffer_count entries). owner_release(owner) runs once
 * for each item of the tree that sets it, after that item's own parts are
 * freed; set it on the root only when one owner backs the whole tree. */
HURRAY_API void hurray_item_destroy(struct hurray_item *item);
/* 1 when the item is a composite head with members. */
HURRAY_API int hurray_item_is_composite(const struct hurray_item *item);

/* A buffer of `size` bytes whose address is a multiple of
 * max(HURRAY_MIN_BUFFER_ALIGNMENT, 2^alignment_log2), so that it honours the
 * alignment its buffer-table entry declares (buffer-protocol.md § Alignment);
 * allocated with `allocator` (NULL = default), with a small hidden header.
 * *data = NULL for size 0. NOMEM on failure, ARGUMENT if alignment_log2 > 12. */
HURRAY_API HURRAY_NODISCARD int hurray_item_buffer_alloc(const struct hurray_allocator *allocator,
                                                         uint64_t size, uint8_t alignment_log2,
                                                         uint8_t **data,
                                                         struct hurray_error *err);
/* Frees a buffer from hurray_item_buffer_alloc (same allocator), or one a stream
 * reader yields (its allocator): a reader's buffers of 1 MiB or more are address
 * space reserved from the operating system and committed as their bytes arrived
 * (stream.md HR-STREAM-16), which this returns to the system. NULL-tolerant. */
HURRAY_API void hurray_item_buffer_free(const struct hurray_allocator *allocator, uint8_t *data);

HURRAY_EXTERN_C_END

#endif
