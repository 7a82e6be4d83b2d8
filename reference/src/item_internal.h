/* Internal helpers for items and composites, shared by item.c, composite.c
 * and stream.c (and any driver that builds items: the file container).
 * Never installed. */
#ifndef HURRAY_ITEM_INTERNAL_H
#define HURRAY_ITEM_INTERNAL_H

#include "internal.h"

/* ---- building items (hurray_item_destroy's allocation convention) ----------- */

/* A zeroed item with `a` as its allocator (its descriptor's too) and a
 * freshly initialised descriptor in the same block, right behind it
 * (hurray_item_destroy frees both as one). NOMEM leaves *out NULL. */
int hri_item_new(const struct hurray_allocator *a, struct hurray_item **out,
                 struct hurray_error *err);
/* The `members` table of `count` NULL slots; item->member_count = count. */
int hri_item_alloc_members(struct hurray_item *it, uint32_t count, struct hurray_error *err);
/* The `buffers` table of descriptor->buffer_count zeroed entries (NULL when 0),
 * with owns_buffers = HURRAY_ITEM_OWNS_ALIGNED. */
int hri_item_alloc_buffer_table(struct hurray_item *it, struct hurray_error *err);

/* errors-and-limits.md HR-LIMIT-2: a stream reader's slack budget -- the
 * alignment slack and the sizes of the buffers it set aside that are still
 * alive (its items', yielded or being read), in a block the reader and each
 * such buffer hold a reference to (item.c), so items may outlive the reader
 * and be freed on any thread. */
struct hri_slack_budget;
/* A budget holding nothing, with one reference (the reader's). */
int hri_slack_budget_new(const struct hurray_allocator *a, struct hri_slack_budget **out,
                         struct hurray_error *err);
/* Drops one reference; the last frees the block. NULL-tolerant. */
void hri_slack_budget_release(struct hri_slack_budget *b);
/* What it holds now (another thread may be handing some back). */
void hri_slack_budget_held(struct hri_slack_budget *b, uint64_t *slack, uint64_t *bytes);
/* The check of HR-LIMIT-2 for descriptor `d` about to be set aside: the
 * budget's slack plus d's against its bytes plus d's plus `limit` (saturating
 * at 2^64 - 1). LIMIT when over, with *over filled: the sums with d's whole
 * table, and the index of d's first buffer at which the running sums, in table
 * order, passed; OK otherwise, and always for a descriptor with no non-empty
 * buffer (it sets nothing aside). `budget` NULL counts as holding nothing. */
struct hri_slack_over {
    uint64_t slack, bytes;
    unsigned buffer;
};
int hri_slack_check(struct hri_slack_budget *budget, const struct hurray_descriptor *d,
                    uint64_t limit, struct hri_slack_over *over);

/* What a stream reader commits of a buffer ahead of its bytes, at most
 * (stream.md HR-STREAM-16); buffers this size or larger are reserved. */
#define HRI_COMMIT_STEP ((size_t)1 << 20)
/* A buffer as hurray_item_buffer_alloc gives one (same alignment, freed by
 * hurray_item_buffer_free), but with memory committed only as it fills: a
 * size of HRI_COMMIT_STEP or more reserves address space from the system
 * (not from `allocator`) with nothing committed yet; below that it is
 * hurray_item_buffer_alloc. Counted in `budget` (NULL: none) until
 * hurray_item_buffer_free hands its slack and size back (HR-LIMIT-2). */
int hri_item_buffer_reserve(const struct hurray_allocator *allocator, uint64_t size,
                            uint8_t alignment_log2, struct hri_slack_budget *budget,
                            uint8_t **data, struct hurray_error *err);
/* The largest reservation (data and alignment) kept, once released, for the
 * next of the same size (item.c, stream.md HR-STREAM-16): 64 MiB of data. */
#define HRI_KEEP_MAX_BYTES (((size_t)64 << 20) + 4096u)
/* The largest kept reservation whose pages stay as they are (no discard): the
 * next buffer of its size re-writes them in place. Giving up 1 MiB of pages
 * (MADV_FREE) and writing them again costs about as much as copying the MiB
 * once more; holding at most 2 MiB for the process avoids that. */
#define HRI_KEEP_RESIDENT_BYTES (((size_t)2 << 20) + 4096u)
/* Commits the first `upto` bytes of such a buffer (rounded up to pages); a
 * no-op for one allocated whole. `upto` <= its size. */
int hri_item_buffer_commit(uint8_t *data, uint64_t upto, struct hurray_error *err);

/* ---- composite rules (composite.md § Validation order) ---------------------
 * The validator and the stream reader call these same functions at the same
 * steps, so both report the same first failure. `lim` is effective (clamped). */

/* Step 1: an item that is not a member carries no member-role section. */
int hri_composite_check_top(const struct hurray_descriptor *d, struct hurray_error *err);
/* Step 2: head `h` at `depth` holding `held` members: depth, held count, the
 * running member total (*total, in and out), resolved extents. */
int hri_composite_check_head(const struct hurray_descriptor *h, uint32_t depth, uint64_t held,
                             uint64_t *total, const struct hurray_limits *lim,
                             struct hurray_error *err);
/* Steps 3.1-3.2: member `index` of head `h` with descriptor `m`. */
int hri_composite_check_member(const struct hurray_descriptor *h, uint32_t index,
                               const struct hurray_descriptor *m, struct hurray_error *err);
/* Step 4: the partition grid (HR-COMP-6) over all `n` members of `h`, each
 * having passed check_member. OK for overlay and group. */
int hri_composite_check_grid(const struct hurray_descriptor *h,
                             struct hurray_item *const *members, uint32_t n,
                             struct hurray_error *err);

#endif
