/* Items: a tensor with its buffers or a composite with its members, the
 * currency of streams and files. docs/spec/composite.md, stream.md
 *
 * hurray_item_destroy follows the allocation convention item.h states; the
 * hri_item_* builders (item_internal.h) are the one place that convention is
 * produced, so readers never free a block with another size than its own. */
#include <stdatomic.h>

#include "item_internal.h"
#include "os.h"

/* ---- aligned buffers (buffer-protocol.md § Alignment) --------------------- */

/* In front of an aligned buffer: where its block starts, its size, what it
 * came from (the allocator, or a reservation of the operating system's), its
 * alignment slack and the stream reader's slack budget it is counted in. */
#define BUFFER_HEADER_BYTES 32u

enum { FROM_ALLOCATOR = 0, FROM_RESERVATION = 1 };

struct buffer_header {
    uint8_t *raw;    /* the block or the reservation */
    size_t total;    /* its size */
    struct hri_slack_budget *budget; /* HR-LIMIT-2: counted there while alive, or NULL */
    uint32_t source; /* FROM_ALLOCATOR, FROM_RESERVATION */
    uint32_t slack;  /* its alignment: slack + 64 (buffer_alignment) */
};
_Static_assert(sizeof(struct buffer_header) <= BUFFER_HEADER_BYTES, "buffer header");

/* errors-and-limits.md HR-LIMIT-2: one stream reader's budget, shared by the
 * reader and every buffer it set aside that is still alive (each holds a
 * reference), so it outlives the reader while the reader's items do. Only the
 * reader adds (as it sets a buffer aside); any thread subtracts (as a buffer
 * is freed), slack before bytes, so a reader that loads bytes before slack
 * never sees a state stricter than a real one. Live buffers all sit in the
 * address space at once: neither sum can wrap. */
struct hri_slack_budget {
    _Atomic uint64_t slack; /* the alignment slack of the counted buffers alive */
    _Atomic uint64_t bytes; /* their sizes */
    _Atomic uint64_t refs;  /* the reader's one, and one per counted buffer alive */
    const struct hurray_allocator *allocator;
};

int hri_slack_budget_new(const struct hurray_allocator *a, struct hri_slack_budget **out,
                         struct hurray_error *err) {
    struct hri_slack_budget *b = hri_alloc(a, sizeof *b);
    *out = b;
    HR_FAIL_IF(!b, err, HURRAY_E_NOMEM, "reader", "stream reader: cannot allocate %zu bytes",
               sizeof *b);
    atomic_init(&b->slack, 0u);
    atomic_init(&b->bytes, 0u);
    atomic_init(&b->refs, 1u);
    b->allocator = a;
    return HURRAY_OK;
}

void hri_slack_budget_release(struct hri_slack_budget *b) {
    if (b && atomic_fetch_sub(&b->refs, 1u) == 1u) hri_free(b->allocator, b, sizeof *b);
}

void hri_slack_budget_held(struct hri_slack_budget *b, uint64_t *slack, uint64_t *bytes) {
    *bytes = atomic_load(&b->bytes); /* bytes first: see struct hri_slack_budget */
    *slack = atomic_load(&b->slack);
}

/* A freed buffer hands its share back (and its reference). */
static void budget_return(const struct buffer_header *h, size_t front) {
    struct hri_slack_budget *b = h->budget;
    size_t align = (size_t)h->slack + HURRAY_MIN_BUFFER_ALIGNMENT;
    atomic_fetch_sub(&b->slack, (uint64_t)h->slack);
    atomic_fetch_sub(&b->bytes, (uint64_t)(h->total - align - front));
    hri_slack_budget_release(b);
}

static size_t buffer_alignment(uint8_t alignment_log2) {
    size_t declared = (size_t)1 << alignment_log2;
    return declared > HURRAY_MIN_BUFFER_ALIGNMENT ? declared : HURRAY_MIN_BUFFER_ALIGNMENT;
}

static int check_buffer_args(uint8_t **data, uint8_t alignment_log2, struct hurray_error *err) {
    HR_FAIL_IF(!data, err, HURRAY_E_ARGUMENT, "data", "item_buffer_alloc: data is NULL");
    *data = NULL;
    HR_FAIL_IF(alignment_log2 > HURRAY_MAX_ALIGNMENT_LOG2, err, HURRAY_E_ARGUMENT,
               "alignment_log2", "item_buffer_alloc: alignment 2^%u exceeds 2^12",
               (unsigned)alignment_log2);
    return HURRAY_OK;
}

int hurray_item_buffer_alloc(const struct hurray_allocator *allocator, uint64_t size,
                             uint8_t alignment_log2, uint8_t **data, struct hurray_error *err) {
    HR_TRY(check_buffer_args(data, alignment_log2, err));
    if (size == 0) return HURRAY_OK;
    size_t align = buffer_alignment(alignment_log2);
    HR_FAIL_IF(size > SIZE_MAX - align - BUFFER_HEADER_BYTES, err, HURRAY_E_NOMEM, "buffer",
               "buffer: %llu bytes exceed the address space", (unsigned long long)size);
    struct buffer_header h = {NULL, (size_t)size + align + BUFFER_HEADER_BYTES, NULL,
                              FROM_ALLOCATOR, (uint32_t)(align - HURRAY_MIN_BUFFER_ALIGNMENT)};
    h.raw = hri_alloc(allocator, h.total);
    HR_FAIL_IF(!h.raw, err, HURRAY_E_NOMEM, "buffer", "buffer: cannot allocate %llu bytes",
               (unsigned long long)size);
    uintptr_t at = ((uintptr_t)h.raw + BUFFER_HEADER_BYTES + align - 1) & ~(uintptr_t)(align - 1);
    uint8_t *p = (uint8_t *)at;
    memcpy(p - BUFFER_HEADER_BYTES, &h, sizeof h);
    *data = p;
    return HURRAY_OK;
}

/* errors-and-limits.md HR-LIMIT-2: what honouring a buffer's declared
 * alignment may cost beyond the minimum 64 that every buffer pays -- the
 * same alignment buffer_alignment allocates to. */
int hri_slack_check(struct hri_slack_budget *budget, const struct hurray_descriptor *d,
                    uint64_t limit, struct hri_slack_over *over) {
    uint64_t s = 0, b = 0;
    if (budget) hri_slack_budget_held(budget, &s, &b);
    unsigned first = UINT32_MAX;
    uint64_t allowed = 0;
    for (unsigned i = 0; i < d->buffer_count; i++) {
        const struct hurray_buffer_desc *bd = &d->buffers[i];
        if (bd->size == 0) continue; /* never allocated */
        /* live buffers (< 2^64 / 4096 of them) plus 255 of 4032: no wrap */
        s += (uint64_t)(buffer_alignment(bd->alignment_log2) - HURRAY_MIN_BUFFER_ALIGNMENT);
        if (hri_add_u64(b, bd->size, &b)) b = UINT64_MAX;
        if (hri_add_u64(b, limit, &allowed)) allowed = UINT64_MAX;
        if (s > allowed && first == UINT32_MAX) first = i;
    }
    over->slack = s;
    over->bytes = b;
    over->buffer = first;
    /* no buffer set aside, nothing checked; else the last one's running sums are the total */
    return first != UINT32_MAX && s > allowed ? HURRAY_E_LIMIT : HURRAY_OK;
}

/* stream.md HR-STREAM-16 (informative): the reservation its owner released
 * last, if at most HRI_KEEP_MAX_BYTES, is kept -- its contents discarded to the
 * system (which may take the pages back) unless it is at most
 * HRI_KEEP_RESIDENT_BYTES, whose pages stay -- for the next reservation of the
 * same size and alignment, which then pays no page faults for pages the system
 * left in place. A stream of same-sized items read one after another thus
 * reuses one block. One slot for the process; whoever finds it holding a
 * block of another size releases that block. */
static _Atomic(uint8_t *) kept_reservation;

static void release_reservation(uint8_t *data) {
    struct buffer_header h;
    memcpy(&h, data - BUFFER_HEADER_BYTES, sizeof h);
    hri_os_release(h.raw, h.total);
}

static void keep_reservation(uint8_t *data, const struct buffer_header *h) {
    size_t page = hri_os_page_size();
    size_t first = page; /* the header's page stays as it is */
    if (h->total > HRI_KEEP_MAX_BYTES || h->total <= first) {
        hri_os_release(h->raw, h->total);
        return;
    }
    if (h->total > HRI_KEEP_RESIDENT_BYTES) /* a small one keeps its pages (HR-STREAM-16) */
        hri_os_discard(h->raw + first, (h->total - first) - (h->total - first) % page);
    uint8_t *old = atomic_exchange(&kept_reservation, data);
    if (old) release_reservation(old);
}

/* The kept reservation, if its size and data offset are these; else NULL (a
 * kept block of another shape is released). */
static uint8_t *take_reservation(size_t total, size_t align) {
    uint8_t *p = atomic_exchange(&kept_reservation, NULL);
    if (!p) return NULL;
    struct buffer_header h;
    memcpy(&h, p - BUFFER_HEADER_BYTES, sizeof h);
    if (h.total == total && (size_t)(p - h.raw) == align) return p;
    release_reservation(p);
    return NULL;
}

/* stream.md HR-STREAM-16: a buffer of HRI_COMMIT_STEP bytes or more is reserved
 * address space -- its header in the first `align` bytes (committed at once),
 * its data from `align` on, both in one reservation whose address never
 * moves -- and committed as hri_item_buffer_commit is told bytes arrive.
 * Smaller ones come from the allocator, whole. */
/* HR-LIMIT-2: a buffer set aside is counted in `budget` (if any) until freed. */
static void budget_count(uint8_t *data, struct hri_slack_budget *budget) {
    struct buffer_header h;
    memcpy(&h, data - BUFFER_HEADER_BYTES, sizeof h);
    size_t align = (size_t)h.slack + HURRAY_MIN_BUFFER_ALIGNMENT;
    size_t front = h.source == FROM_ALLOCATOR ? BUFFER_HEADER_BYTES : 0;
    h.budget = budget;
    if (budget) {
        atomic_fetch_add(&budget->refs, 1u);
        atomic_fetch_add(&budget->slack, (uint64_t)h.slack);
        atomic_fetch_add(&budget->bytes, (uint64_t)(h.total - align - front));
    }
    memcpy(data - BUFFER_HEADER_BYTES, &h, sizeof h);
}

static int reserve(const struct hurray_allocator *allocator, uint64_t size,
                   uint8_t alignment_log2, uint8_t **data, struct hurray_error *err) {
    if (size < HRI_COMMIT_STEP) return hurray_item_buffer_alloc(allocator, size, alignment_log2,
                                                                data, err);
    size_t align = buffer_alignment(alignment_log2); /* 64 .. 4096: a multiple of 32 */
    size_t page = hri_os_page_size();
    HR_FAIL_IF(size > SIZE_MAX - align - page, err, HURRAY_E_NOMEM, "buffer",
               "buffer: %llu bytes exceed the address space", (unsigned long long)size);
    struct buffer_header h = {NULL, (size_t)size + align, NULL, FROM_RESERVATION,
                              (uint32_t)(align - HURRAY_MIN_BUFFER_ALIGNMENT)};
    uint8_t *again = take_reservation(h.total, align);
    if (again) { /* committed as far as its last owner's bytes came: more as they come */
        *data = again;
        return HURRAY_OK;
    }
    void *base = NULL;
    HR_TRY(hri_os_reserve(h.total, &base, err));
    h.raw = base; /* page-aligned, so raw + align is aligned to align */
    int st = hri_os_commit(base, h.total, 0, align, err);
    if (st != HURRAY_OK) {
        hri_os_release(base, h.total);
        return st;
    }
    memcpy(h.raw + align - BUFFER_HEADER_BYTES, &h, sizeof h);
    *data = h.raw + align;
    return HURRAY_OK;
}

int hri_item_buffer_reserve(const struct hurray_allocator *allocator, uint64_t size,
                            uint8_t alignment_log2, struct hri_slack_budget *budget,
                            uint8_t **data, struct hurray_error *err) {
    HR_TRY(check_buffer_args(data, alignment_log2, err));
    HR_TRY(reserve(allocator, size, alignment_log2, data, err));
    if (*data) budget_count(*data, budget);
    return HURRAY_OK;
}

int hri_item_buffer_commit(uint8_t *data, uint64_t upto, struct hurray_error *err) {
    struct buffer_header h;
    if (!data) return HURRAY_OK;
    memcpy(&h, data - BUFFER_HEADER_BYTES, sizeof h);
    if (h.source != FROM_RESERVATION) return HURRAY_OK; /* allocated whole */
    size_t start = (size_t)(data - h.raw);
    HR_FAIL_IF(upto > h.total - start, err, HURRAY_E_INTERNAL, "buffer",
               "buffer: commit of %llu bytes past its reservation", (unsigned long long)upto);
    return hri_os_commit(h.raw, h.total, start, (size_t)upto, err);
}

void hurray_item_buffer_free(const struct hurray_allocator *allocator, uint8_t *data) {
    struct buffer_header h;
    if (!data) return;
    memcpy(&h, data - BUFFER_HEADER_BYTES, sizeof h);
    if (h.budget) budget_return(&h, h.source == FROM_ALLOCATOR ? BUFFER_HEADER_BYTES : 0);
    if (h.source == FROM_RESERVATION)
        keep_reservation(data, &h);
    else
        hri_free(allocator, h.raw, h.total);
}

/* ---- freeing ------------------------------------------------------------------ */

/* The block hri_item_new makes: the item, its descriptor right behind it, and room for a
 * one-buffer table (most tensors have one buffer: hri_item_alloc_buffer_table puts it here
 * instead of allocating a block of 16 bytes). */
struct item_block {
    struct hurray_item item;
    struct hurray_descriptor descriptor;
    struct hurray_item_buffer buffer0;
};

static int descriptor_inline(const struct hurray_item *it) {
    return (uintptr_t)it->descriptor == (uintptr_t)it + offsetof(struct item_block, descriptor);
}

static int buffers_inline(const struct hurray_item *it) {
    return it->descriptor && descriptor_inline(it) &&
           (uintptr_t)it->buffers == (uintptr_t)it + offsetof(struct item_block, buffer0);
}

static void free_buffers(struct hurray_item *it) {
    if (!it->buffers || !it->descriptor) return; /* no descriptor: table size unknown */
    unsigned n = it->descriptor->buffer_count;
    for (unsigned i = 0; i < n; i++) {
        struct hurray_item_buffer *b = &it->buffers[i];
        if (it->owns_buffers == HURRAY_ITEM_OWNS_BUFFERS)
            hri_free(it->allocator, b->data, (size_t)b->size);
        else if (it->owns_buffers == HURRAY_ITEM_OWNS_ALIGNED)
            hurray_item_buffer_free(it->allocator, b->data);
    }
    if (!buffers_inline(it)) hri_free(it->allocator, it->buffers, n * sizeof *it->buffers);
    it->buffers = NULL;
}

/* Members are freed depth-first; a tree from a reader is at most 64 deep
 * (max_composite_depth), and each level costs one small stack frame. */
static void free_members(struct hurray_item *it) {
    if (!it->members) return;
    for (uint32_t i = 0; i < it->member_count; i++) hurray_item_destroy(it->members[i]);
    hri_free(it->allocator, it->members, (size_t)it->member_count * sizeof *it->members);
    it->members = NULL;
    it->member_count = 0;
}


void hurray_item_destroy(struct hurray_item *item) {
    if (!item) return;
    free_members(item);
    free_buffers(item);
    int one_block = item->descriptor && descriptor_inline(item);
    if (item->descriptor) {
        hurray_descriptor_reset(item->descriptor);
        if (!one_block) hri_free(item->allocator, item->descriptor, sizeof *item->descriptor);
    }
    if (item->owner_release) item->owner_release(item->owner);
    hri_free(item->allocator, item, one_block ? sizeof(struct item_block) : sizeof *item);
}

int hurray_item_is_composite(const struct hurray_item *item) {
    return item && item->descriptor && item->descriptor->layout.tag == HURRAY_LAYOUT_COMPOSITE;
}

/* ---- building ------------------------------------------------------------------- */

/* One allocation per node: the item and its compact descriptor together
 * (item.h's convention for trees libhurray builds). */
int hri_item_new(const struct hurray_allocator *a, struct hurray_item **out,
                 struct hurray_error *err) {
    *out = NULL;
    struct item_block *b = hri_alloc(a, sizeof *b);
    HR_FAIL_IF(!b, err, HURRAY_E_NOMEM, "item", "item: cannot allocate %zu bytes", sizeof *b);
    memset(&b->item, 0, sizeof b->item);
    b->item.allocator = a;
    b->item.descriptor = &b->descriptor;
    hurray_descriptor_init(&b->descriptor);
    b->descriptor.allocator = a;
    *out = &b->item;
    return HURRAY_OK;
}

int hri_item_alloc_members(struct hurray_item *it, uint32_t count, struct hurray_error *err) {
    uint64_t wanted = count;
    HR_FAIL_IF(wanted > (uint64_t)(SIZE_MAX / sizeof *it->members), err, HURRAY_E_NOMEM,
               "members", "members: %lu pointers exceed the address space",
               (unsigned long)count);
    size_t bytes = (size_t)wanted * sizeof *it->members;
    it->members = hri_alloc(it->allocator, bytes);
    HR_FAIL_IF(!it->members, err, HURRAY_E_NOMEM, "members",
               "members: cannot allocate a table of %lu members", (unsigned long)count);
    memset(it->members, 0, bytes);
    it->member_count = count;
    return HURRAY_OK;
}

int hri_item_alloc_buffer_table(struct hurray_item *it, struct hurray_error *err) {
    unsigned n = it->descriptor->buffer_count;
    it->owns_buffers = HURRAY_ITEM_OWNS_ALIGNED;
    if (n == 0) return HURRAY_OK;
    if (n == 1 && descriptor_inline(it))
        it->buffers = &((struct item_block *)(void *)it)->buffer0;
    else
        it->buffers = hri_alloc(it->allocator, n * sizeof *it->buffers);
    HR_FAIL_IF(!it->buffers, err, HURRAY_E_NOMEM, "buffers",
               "buffers: cannot allocate a table of %u buffers", n);
    memset(it->buffers, 0, n * sizeof *it->buffers);
    for (unsigned i = 0; i < n; i++) it->buffers[i].size = it->descriptor->buffers[i].size;
    return HURRAY_OK;
}

