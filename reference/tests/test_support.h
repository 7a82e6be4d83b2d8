/* Shared cmocka test support, linked into every reference/tests/ binary.
 *
 *  - struct test_alloc: a failure-injecting, counting allocator. Pass
 *    test_alloc_get(&ta) wherever the library takes a `struct hurray_allocator *`.
 *    Its alloc fails on the Nth call (or on every call from the Nth on), and it
 *    counts live allocations and live bytes so a test can assert no leak and
 *    that every free passed the size the block was allocated with.
 *  - test_alloc_sweep: runs a body with failure injected at call 1, 2, 3, ...
 *    until it succeeds, asserting NOMEM and no leak after every injected failure.
 *  - assert_bytes_equal: byte comparison with a hex dump of both sides on
 *    mismatch.
 *  - assert_hurray_error: checks an error record (code, field, message).
 *
 * Include after <stdarg.h> <stddef.h> <stdint.h> <setjmp.h> <cmocka.h>. */
#ifndef HURRAY_TEST_SUPPORT_H
#define HURRAY_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "hurray/alloc.h"
#include "hurray/descriptor.h"
#include "hurray/status.h"

/* ---- failure-injecting allocator ---------------------------------------- */

struct test_alloc {
    struct hurray_allocator base; /* what the library sees; ctx points here */
    unsigned long fail_at;        /* 1-based alloc call that fails; 0 = none */
    int fail_after;               /* nonzero: every call >= fail_at fails too */
    unsigned long calls;          /* alloc calls so far (failed ones included) */
    unsigned long failures;       /* alloc calls that were made to fail */
    unsigned long live_allocs;    /* blocks allocated and not yet freed */
    size_t live_bytes;            /* their total requested size */
    size_t peak_bytes;            /* high-water mark of live_bytes */
    unsigned long bad_frees;      /* frees whose size differs from the alloc's */
};

/* Resets every counter; fail_at = 0 means never fail. */
void test_alloc_init(struct test_alloc *ta, unsigned long fail_at);
/* The allocator to hand to the library (stays valid as long as *ta does). */
const struct hurray_allocator *test_alloc_get(struct test_alloc *ta);
/* cmocka-asserts no live allocation and no size-mismatched free. */
void test_alloc_assert_clean_at(const struct test_alloc *ta, const char *file, int line);
#define assert_alloc_clean(ta) test_alloc_assert_clean_at((ta), __FILE__, __LINE__)

/* A body for test_alloc_sweep: do the work with `a`, free everything it made
 * (on success too), return the library status. */
typedef int (*test_alloc_body)(const struct hurray_allocator *a, void *state);
/* Runs body with fail_at = 1, 2, ... Each run must return OK or NOMEM and
 * leave nothing allocated; a run that returns OK without having had a
 * failure injected ends the sweep. Returns the number of alloc calls of the
 * successful run. Fails the test after max_runs runs (0 = 100000). */
unsigned long test_alloc_sweep_at(test_alloc_body body, void *state, unsigned long max_runs,
                                  const char *file, int line);
#define test_alloc_sweep(body, state) test_alloc_sweep_at((body), (state), 0, __FILE__, __LINE__)

/* ---- bytes --------------------------------------------------------------- */

/* Prints "label: N bytes" and a 16-per-line hex dump, marking `mark` (an
 * offset, or SIZE_MAX for none) with brackets. Goes to cmocka's print_error. */
void test_hex_dump(const char *label, const uint8_t *p, size_t n, size_t mark);
/* Fails (at file:line) with both hex dumps and the first differing offset
 * unless the two byte strings are equal. */
void test_bytes_equal_at(const uint8_t *got, size_t got_len, const uint8_t *want,
                         size_t want_len, const char *file, int line);
#define assert_bytes_equal(got, got_len, want, want_len)                                       \
    test_bytes_equal_at((got), (got_len), (want), (want_len), __FILE__, __LINE__)

/* ---- error records -------------------------------------------------------- */

/* Fails unless err->code == code, the message is non-empty and (when
 * field_substr is non-NULL) err->field contains field_substr. */
void test_error_check_at(const struct hurray_error *err, int code, const char *field_substr,
                         const char *file, int line);
#define assert_hurray_error(err, code, field_substr)                                           \
    test_error_check_at((err), (code), (field_substr), __FILE__, __LINE__)
/* Fails unless `status` == `code`, printing both status names otherwise. */
void test_status_equal_at(int status, int code, const char *file, int line);
#define assert_status(status, code) test_status_equal_at((status), (code), __FILE__, __LINE__)

/* Fills an error record with junk so a test can see what a call wrote. */
void test_error_poison(struct hurray_error *err);

/* ---- building descriptors through the setters ------------------------------
 * Every helper asserts the setter returned OK. */

/* A new descriptor on the heap (free with hurray_descriptor_reset, then free): initialised,
 * with dtype, layout tag and shape set. */
struct hurray_descriptor *test_desc_new(uint8_t dtype, uint8_t layout, unsigned rank,
                                        const uint64_t *shape);

/* A zeroed quantization record of `scheme`, every buffer index HURRAY_NO_BUFFER. */
void test_quant_init(struct hurray_quant *q, uint8_t scheme);

/* One valid quantized descriptor per scheme (per-tensor and per-channel affine, block affine,
 * NF4 with double quantization, MX, NVFP4), for the catalogues of descriptor_test.c and
 * file_test.c; the quantization record is test_quant's. */
struct hurray_descriptor *test_q_per_tensor(void);
struct hurray_descriptor *test_q_per_channel(void);
struct hurray_descriptor *test_q_block(void);
struct hurray_descriptor *test_q_nf4_double(void);
struct hurray_descriptor *test_q_mx(void);
struct hurray_descriptor *test_q_nvfp4(void);

/* Little-endian fields of an encoding, read and patched by hand. */
uint64_t test_get_u64(const uint8_t *p);
uint32_t test_get_u32(const uint8_t *p);
void test_put_u64(uint8_t *p, uint64_t v);
void test_put_u32(uint8_t *p, uint32_t v);

/* hurray_descriptor_set_shape. */
void test_set_shape(struct hurray_descriptor *d, unsigned rank, const uint64_t *shape);
/* Extent k (< rank) of the shape, the rest kept. */
void test_set_shape_at(struct hurray_descriptor *d, unsigned k, uint64_t extent);
/* The buffer table resized to n entries: existing entries kept, new ones zero. */
void test_set_buffer_count(struct hurray_descriptor *d, unsigned n);
/* Entry i (< buffer_count) as given. */
void test_set_buffer_entry(struct hurray_descriptor *d, unsigned i, uint64_t size,
                           uint8_t alignment_log2, uint8_t sync_mode);
/* Entry i with one field changed: TEST_PATCH_BUFFER(d, 0, alignment_log2, 13). */
#define TEST_PATCH_BUFFER(d, i, field, value)                                                   \
    do {                                                                                       \
        struct hurray_buffer_desc test_b_ = (d)->buffers[i];                                   \
        test_b_.field = (value);                                                               \
        test_set_buffer_entry((d), (i), test_b_.size, test_b_.alignment_log2,                  \
                              test_b_.sync_mode);                                              \
    } while (0)
/* Buffer-table helpers for tests that build descriptors. test_set_buffer: entry i
 * (< buffer_count) of `size` bytes, alignment 64 (1 when empty), producer_synced.
 * test_fill_buffers: buffer_count = L + Q and each buffer exactly its requirement,
 * `unknown_size` bytes where a requirement cannot be evaluated; private/unknown
 * layouts keep the caller's table. */
void test_set_buffer(struct hurray_descriptor *d, unsigned i, uint64_t size);
void test_fill_buffers(struct hurray_descriptor *d, uint64_t unknown_size);

/* An editable copy of a descriptor's layout: test_layout_edit copies the layout
 * and its spans (zeros where it has none) into `t`; the test changes t->l's
 * scalars and the arrays; test_layout_apply points t->l's spans at the arrays
 * and sets it with hurray_descriptor_set_layout (for d->rank dimensions). */
struct test_layout {
    struct hurray_layout l;
    int64_t strides[HURRAY_MAX_RANK];
    int64_t inner_strides[HURRAY_MAX_RANK];
    uint64_t tile_shape[HURRAY_MAX_RANK];
    uint64_t fiber_counts[HURRAY_MAX_RANK];
    uint8_t mode_order[HURRAY_MAX_RANK];
};
void test_layout_edit(struct test_layout *t, const struct hurray_descriptor *d);
void test_layout_apply(struct test_layout *t, struct hurray_descriptor *d);

/* The same for the shard section; apply sets it (its record and spans copied). */
struct test_shard {
    struct hurray_shard s;
    uint64_t global_shape[HURRAY_MAX_RANK];
    uint64_t global_offset[HURRAY_MAX_RANK];
};
void test_shard_edit(struct test_shard *t, const struct hurray_descriptor *d);
void test_shard_apply(struct test_shard *t, struct hurray_descriptor *d);

/* One entry of the shard's global_shape (offset 0) or global_offset (offset 1). */
void test_patch_shard(struct hurray_descriptor *d, int offset, unsigned k, uint64_t v);

/* Writable quantization / statistics records for tests that build or patch a descriptor
 * field by field. The record `d` points at (a zeroed one when it has none) is copied into a
 * record kept for `d`, and `d` points at that record: a borrowed record
 * (descriptor.h), written through the pointer returned, never through another descriptor's
 * record (copy on write: a record in d's block or shared with a copy is left as it was).
 * Every descriptor gets a record of its own, which lives as long as the test program. */
struct hurray_quant *test_quant(struct hurray_descriptor *d);
struct hurray_statistics *test_statistics(struct hurray_descriptor *d);

/* Whether this test program runs under valgrind (make valgrind; its preloaded library is in
 * LD_PRELOAD): its shadow memory is in the resident size, its own writes in the process's
 * I/O counters, and it runs code 20 to 50 times slower, so tests that measure or build at
 * scale measure less, or build smaller, there. */
int test_under_valgrind(void);

/* hurray_descriptor_add_opaque_section. */
void test_add_opaque(struct hurray_descriptor *d, uint8_t type, uint8_t flags,
                     const uint8_t *data, uint32_t length);

#endif
