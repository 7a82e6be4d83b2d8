/* Item builders for the composite and stream tests: trees built with malloc
 * in hurray_item_destroy's convention (allocator NULL = malloc/free, owned
 * buffers of exactly their size), so hurray_item_destroy releases them.
 * Header-only (static inline): include after cmocka.h, hurray.h and
 * test_support.h (descriptors are built with its setter helpers). */
#ifndef HURRAY_TEST_ITEM_BUILDERS_H
#define HURRAY_TEST_ITEM_BUILDERS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"
#include "test_support.h"

static inline void *tb_calloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    assert_non_null(p);
    return p;
}

/* An item with an initialised descriptor of the given dtype, rank, shape. */
static inline struct hurray_item *tb_item(uint8_t dtype, uint8_t layout, uint8_t rank,
                                          const uint64_t *shape) {
    struct hurray_item *it = tb_calloc(sizeof *it);
    it->descriptor = tb_calloc(sizeof *it->descriptor);
    hurray_descriptor_init(it->descriptor);
    it->descriptor->dtype = dtype;
    it->descriptor->layout.tag = layout;
    test_set_shape(it->descriptor, rank, shape);
    return it;
}

/* Adds buffer i of `size` bytes filled with a pattern from `seed`. */
static inline void tb_buffer(struct hurray_item *it, unsigned i, uint64_t size, uint8_t seed) {
    struct hurray_descriptor *d = it->descriptor;
    assert_true(i < d->buffer_count);
    if (!it->buffers) it->buffers = tb_calloc(d->buffer_count * sizeof *it->buffers);
    it->owns_buffers = HURRAY_ITEM_OWNS_BUFFERS;
    test_set_buffer(d, i, size);
    it->buffers[i].size = size;
    it->buffers[i].data = size ? tb_calloc((size_t)size) : NULL;
    for (uint64_t b = 0; b < size; b++) it->buffers[i].data[b] = (uint8_t)(seed + b * 31u);
}

/* A dense row-major tensor with its one buffer. */
static inline struct hurray_item *tb_tensor(uint8_t dtype, uint8_t rank, const uint64_t *shape,
                                            uint8_t seed) {
    struct hurray_item *it = tb_item(dtype, HURRAY_LAYOUT_ROW_MAJOR, rank, shape);
    uint64_t n = 0, bytes = 0;
    int resolved = 0;
    assert_int_equal(hurray_shape_element_count(rank, shape, &n, &resolved, NULL), HURRAY_OK);
    assert_int_equal(hurray_buffer_size_bytes(dtype, n, &bytes, NULL), HURRAY_OK);
    test_set_buffer_count(it->descriptor, 1);
    tb_buffer(it, 0, bytes, seed);
    return it;
}

/* A composite head with `n` empty member slots. */
static inline struct hurray_item *tb_head(uint8_t rule, uint8_t combine, uint8_t dtype,
                                          uint8_t rank, const uint64_t *shape, uint32_t n) {
    struct hurray_item *it = tb_item(dtype, HURRAY_LAYOUT_COMPOSITE, rank, shape);
    it->descriptor->layout.rule = rule;
    it->descriptor->layout.combine = combine;
    it->descriptor->layout.member_count = n;
    it->member_count = n;
    it->members = tb_calloc(n * sizeof *it->members);
    return it;
}

static inline void tb_shard(struct hurray_item *it, const uint64_t *global,
                            const uint64_t *offset) {
    struct hurray_shard s = {0, 1, global, offset};
    struct hurray_error err;
    assert_int_equal(hurray_descriptor_set_shard(it->descriptor, &s, &err), HURRAY_OK);
}

static inline void tb_role(struct hurray_item *it, uint8_t role) {
    it->descriptor->has_role = role != 0;
    it->descriptor->role = role;
}

/* A member tensor of `dtype`, `shape`, placed at `offset` in `global`. */
static inline struct hurray_item *tb_piece(uint8_t dtype, uint8_t rank, const uint64_t *shape,
                                           const uint64_t *global, const uint64_t *offset,
                                           uint8_t seed) {
    struct hurray_item *it = tb_tensor(dtype, rank, shape, seed);
    tb_shard(it, global, offset);
    return it;
}

/* A rank-2 float32 partition of [rows, cols] into a grid of row cuts and
 * column cuts (each list starts with 0), members in row-major order. */
static inline struct hurray_item *tb_grid2(uint64_t rows, uint64_t cols, const uint64_t *rcuts,
                                           unsigned nr, const uint64_t *ccuts, unsigned nc) {
    uint64_t shape[2] = {rows, cols};
    struct hurray_item *h = tb_head(HURRAY_RULE_PARTITION, 0, HURRAY_DTYPE_FLOAT32, 2, shape,
                                    nr * nc);
    for (unsigned i = 0; i < nr; i++)
        for (unsigned j = 0; j < nc; j++) {
            uint64_t r1 = i + 1 < nr ? rcuts[i + 1] : rows, c1 = j + 1 < nc ? ccuts[j + 1] : cols;
            uint64_t sh[2] = {r1 - rcuts[i], c1 - ccuts[j]}, off[2] = {rcuts[i], ccuts[j]};
            h->members[i * nc + j] =
                tb_piece(HURRAY_DTYPE_FLOAT32, 2, sh, shape, off, (uint8_t)(i * nc + j));
        }
    return h;
}

/* Deep equality: descriptors (HR-DESC-7), buffer bytes, members. */
static inline int tb_item_equal(const struct hurray_item *a, const struct hurray_item *b) {
    if (!a || !b) return a == b;
    if (!hurray_descriptor_equal(a->descriptor, b->descriptor)) return 0;
    if (a->member_count != b->member_count) return 0;
    for (uint32_t i = 0; i < a->member_count; i++)
        if (!tb_item_equal(a->members[i], b->members[i])) return 0;
    if (hurray_item_is_composite(a)) return 1;
    for (unsigned i = 0; i < a->descriptor->buffer_count; i++) {
        if (a->buffers[i].size != b->buffers[i].size) return 0;
        if (a->buffers[i].size &&
            memcmp(a->buffers[i].data, b->buffers[i].data, (size_t)a->buffers[i].size) != 0)
            return 0;
    }
    return 1;
}

#endif
