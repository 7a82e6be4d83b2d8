/* Composites (composite.c) and items (item.c). composite.md
 *
 * Trees are built in memory (item_builders.h) and judged by the one
 * validator; each hostile tree breaks exactly one rule and expects the
 * status (and the field) composite.md gives it, in its validation order. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"
#include "item_builders.h"
#include "test_support.h"

#define F32 HURRAY_DTYPE_FLOAT32
#define DYN HURRAY_DYNAMIC_DIM
#define PART HURRAY_RULE_PARTITION
#define OVER HURRAY_RULE_OVERLAY
#define GROUP HURRAY_RULE_GROUP

static const uint64_t S23[2] = {2, 3};

static void expect(const struct hurray_item *it, const struct hurray_limits *lim, int code,
                   const char *field) {
    struct hurray_error err;
    test_error_poison(&err);
    int st = hurray_composite_validate(it, lim, &err);
    assert_status(st, code);
    if (code != HURRAY_OK) assert_hurray_error(&err, code, field);
}

/* A float32 [2, 3] partition into two [1, 3] rows (composite.md § Example). */
static struct hurray_item *two_rows(void) {
    const uint64_t rows[2] = {0, 1}, cols[1] = {0};
    return tb_grid2(2, 3, rows, 2, cols, 1);
}

/* A float32 [4, 4] overlay: a base and two corrections with their roles. */
static struct hurray_item *overlay3(void) {
    const uint64_t s44[2] = {4, 4}, s22[2] = {2, 2}, s13[2] = {1, 3};
    const uint64_t o00[2] = {0, 0}, o11[2] = {1, 1}, o21[2] = {2, 1};
    struct hurray_item *h = tb_head(OVER, HURRAY_COMBINE_ADD, F32, 2, s44, 3);
    h->members[0] = tb_tensor(F32, 2, s44, 1);
    h->members[1] = tb_piece(F32, 2, s22, s44, o11, 2);
    h->members[2] = tb_piece(F32, 2, s13, s44, o21, 3);
    (void)o00;
    tb_role(h->members[0], HURRAY_ROLE_BASE);
    tb_role(h->members[1], HURRAY_ROLE_CORRECTION);
    tb_role(h->members[2], HURRAY_ROLE_CORRECTION);
    return h;
}

/* A group of `depth` nested composites (each head's one member is the next),
 * ending in a tensor. */
static struct hurray_item *nested_groups(uint32_t depth) {
    const uint64_t s1[1] = {2};
    struct hurray_item *root = tb_head(GROUP, 0, F32, 1, s1, 1), *h = root;
    for (uint32_t d = 1; d < depth; d++) {
        h->members[0] = tb_head(GROUP, 0, F32, 1, s1, 1);
        h = h->members[0];
    }
    h->members[0] = tb_tensor(F32, 1, s1, 7);
    return root;
}

/* ==== items ================================================================ */

static int owner_calls;
static void count_owner(void *owner) {
    (void)owner;
    owner_calls++;
}

static void test_HR_COMP_1_item_free_whole_tree(void **state) {
    (void)state;
    struct hurray_item *h = overlay3();
    owner_calls = 0;
    h->owner = &owner_calls;
    h->owner_release = count_owner;
    assert_true(hurray_item_is_composite(h));
    assert_false(hurray_item_is_composite(h->members[0]));
    assert_false(hurray_item_is_composite(NULL));
    hurray_item_destroy(h);
    assert_int_equal(owner_calls, 1);
    hurray_item_destroy(NULL);
}

static void test_HR_COMP_1_item_free_partial_tree(void **state) {
    (void)state;
    struct hurray_item *h = tb_head(GROUP, 0, F32, 2, S23, 3); /* all slots NULL */
    h->members[1] = tb_tensor(F32, 2, S23, 1);
    hurray_item_destroy(h); /* valgrind / ASan: nothing leaks */
}

static void test_HR_BUF_3_item_buffer_alloc_aligned(void **state) {
    (void)state;
    struct test_alloc ta;
    struct hurray_error err;
    test_alloc_init(&ta, 0);
    for (uint8_t lg = 0; lg <= 12; lg++) {
        uint8_t *p = NULL;
        assert_status(hurray_item_buffer_alloc(test_alloc_get(&ta), 100, lg, &p, &err),
                      HURRAY_OK);
        uintptr_t want = (uintptr_t)1 << lg;
        if (want < 64) want = 64;
        assert_int_equal((uintptr_t)p % want, 0);
        memset(p, 0xAB, 100);
        hurray_item_buffer_free(test_alloc_get(&ta), p);
    }
    uint8_t *p = (uint8_t *)1;
    assert_status(hurray_item_buffer_alloc(test_alloc_get(&ta), 0, 6, &p, &err), HURRAY_OK);
    assert_null(p);
    assert_status(hurray_item_buffer_alloc(test_alloc_get(&ta), 8, 13, &p, &err),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_item_buffer_alloc(test_alloc_get(&ta), UINT64_MAX, 0, &p, &err),
                  HURRAY_E_NOMEM);
    test_alloc_init(&ta, 1);
    assert_status(hurray_item_buffer_alloc(test_alloc_get(&ta), 8, 0, &p, &err), HURRAY_E_NOMEM);
    assert_alloc_clean(&ta);
    hurray_item_buffer_free(NULL, NULL);
}

/* ==== roles (HR-COMP-3) ===================================================== */

static void test_HR_COMP_3_member_role_derived(void **state) {
    (void)state;
    struct hurray_item *o = overlay3(), *p = two_rows(), *g = nested_groups(1);
    struct hurray_error err;
    uint8_t role = 0xEE;
    assert_status(hurray_composite_member_role(o->descriptor, 0, &role, &err), HURRAY_OK);
    assert_int_equal(role, HURRAY_ROLE_BASE);
    assert_status(hurray_composite_member_role(o->descriptor, 2, &role, &err), HURRAY_OK);
    assert_int_equal(role, HURRAY_ROLE_CORRECTION);
    assert_status(hurray_composite_member_role(p->descriptor, 1, &role, &err), HURRAY_OK);
    assert_int_equal(role, 0);
    assert_status(hurray_composite_member_role(g->descriptor, 0, &role, &err), HURRAY_OK);
    assert_int_equal(role, 0);
    assert_status(hurray_composite_member_role(o->descriptor, 3, &role, &err), HURRAY_E_ARGUMENT);
    assert_status(hurray_composite_member_role(o->members[0]->descriptor, 0, &role, &err),
                  HURRAY_E_ARGUMENT);
    assert_status(hurray_composite_member_role(NULL, 0, &role, NULL), HURRAY_E_ARGUMENT);
    hurray_item_destroy(o);
    hurray_item_destroy(p);
    hurray_item_destroy(g);
}

static void test_HR_COMP_3_overlay_roles_required(void **state) {
    (void)state;
    struct hurray_item *o = overlay3();
    expect(o, NULL, HURRAY_OK, NULL);
    tb_role(o->members[1], 0); /* missing */
    expect(o, NULL, HURRAY_E_CONSTRAINT, "members[1].member_role");
    tb_role(o->members[1], HURRAY_ROLE_BASE); /* wrong */
    expect(o, NULL, HURRAY_E_CONSTRAINT, "members[1].member_role");
    tb_role(o->members[1], HURRAY_ROLE_CORRECTION);
    tb_role(o->members[0], HURRAY_ROLE_CORRECTION); /* base labelled correction */
    expect(o, NULL, HURRAY_E_CONSTRAINT, "members[0].member_role");
    hurray_item_destroy(o);
}

static void test_HR_COMP_3_no_roles_elsewhere(void **state) {
    (void)state;
    struct hurray_item *p = two_rows(), *g = nested_groups(2), *t = tb_tensor(F32, 2, S23, 0);
    tb_role(p->members[1], HURRAY_ROLE_CORRECTION);
    expect(p, NULL, HURRAY_E_CONSTRAINT, "members[1].member_role");
    tb_role(g->members[0], HURRAY_ROLE_BASE);
    expect(g, NULL, HURRAY_E_CONSTRAINT, "members[0].member_role");
    tb_role(t, HURRAY_ROLE_BASE); /* a top-level tensor */
    expect(t, NULL, HURRAY_E_CONSTRAINT, "member_role");
    tb_role(t, 0);
    expect(t, NULL, HURRAY_OK, NULL);
    struct hurray_item *o = overlay3();
    tb_role(o, HURRAY_ROLE_BASE); /* a top-level composite */
    expect(o, NULL, HURRAY_E_CONSTRAINT, "member_role");
    hurray_item_destroy(o);
    hurray_item_destroy(p);
    hurray_item_destroy(g);
    hurray_item_destroy(t);
}

static void test_HR_COMP_3_assign_roles(void **state) {
    (void)state;
    struct hurray_item *o = overlay3(), *p = two_rows();
    struct hurray_error err;
    for (unsigned i = 0; i < 3; i++) tb_role(o->members[i], 0);
    tb_role(o->members[2], HURRAY_ROLE_BASE); /* a decoded, wrong role is kept */
    assert_status(hurray_composite_assign_roles(o, &err), HURRAY_OK);
    assert_int_equal(o->members[0]->descriptor->role, HURRAY_ROLE_BASE);
    assert_int_equal(o->members[1]->descriptor->role, HURRAY_ROLE_CORRECTION);
    assert_int_equal(o->members[2]->descriptor->role, HURRAY_ROLE_BASE);
    expect(o, NULL, HURRAY_E_CONSTRAINT, "members[2].member_role");
    assert_status(hurray_composite_assign_roles(p, &err), HURRAY_OK);
    assert_false(p->members[0]->descriptor->has_role);
    expect(p, NULL, HURRAY_OK, NULL);
    assert_status(hurray_composite_assign_roles(NULL, &err), HURRAY_E_ARGUMENT);
    hurray_item_destroy(o);
    hurray_item_destroy(p);
}

/* ==== resolved extents (HR-COMP-4) ============================================ */

static void test_HR_COMP_4_dynamic_extents(void **state) {
    (void)state;
    struct hurray_item *p = two_rows();
    test_set_shape_at(p->descriptor, 1, DYN);
    expect(p, NULL, HURRAY_E_CONSTRAINT, "shape[1]");
    hurray_item_destroy(p);

    const uint64_t s44[2] = {4, 4};
    struct hurray_item *o = overlay3();
    test_set_shape_at(o->members[2]->descriptor, 0, DYN);
    expect(o, NULL, HURRAY_E_CONSTRAINT, "members[2].shape[0]");
    hurray_item_destroy(o);

    const uint64_t dyn[2] = {DYN, 4};
    struct hurray_item *g = tb_head(GROUP, 0, F32, 2, dyn, 1);
    g->members[0] = tb_item(F32, HURRAY_LAYOUT_ROW_MAJOR, 2, dyn);
    expect(g, NULL, HURRAY_OK, NULL); /* a group may hold unresolved tensors */
    (void)s44;
    hurray_item_destroy(g);
}

/* ==== partition (HR-COMP-5, HR-COMP-6) ======================================== */

static void test_HR_COMP_5_partition_members(void **state) {
    (void)state;
    struct hurray_item *p = two_rows();
    expect(p, NULL, HURRAY_OK, NULL);

    p->members[1]->descriptor->dtype = HURRAY_DTYPE_INT32; /* same width, other type */
    expect(p, NULL, HURRAY_E_COMBINATION, "members[1].dtype");
    p->members[1]->descriptor->dtype = F32;

    const struct hurray_shard *kept = p->members[0]->descriptor->shard;
    p->members[0]->descriptor->shard = NULL;
    expect(p, NULL, HURRAY_E_CONSTRAINT, "members[0].shard");
    p->members[0]->descriptor->shard = kept;

    test_patch_shard(p->members[1]->descriptor, 0, 1, 4);
    expect(p, NULL, HURRAY_E_CONSTRAINT, "members[1].shard.global_shape[1]");
    test_patch_shard(p->members[1]->descriptor, 0, 1, 3);
    expect(p, NULL, HURRAY_OK, NULL);
    hurray_item_destroy(p);

    /* a rank-1 member in a rank-2 partition */
    const uint64_t s6[1] = {6}, g6[1] = {6}, o0[1] = {0};
    struct hurray_item *q = tb_head(PART, 0, F32, 2, S23, 1);
    q->members[0] = tb_piece(F32, 1, s6, g6, o0, 0);
    expect(q, NULL, HURRAY_E_CONSTRAINT, "members[0].rank");
    hurray_item_destroy(q);
}

static void test_HR_COMP_6_partition_grids(void **state) {
    (void)state;
    const uint64_t r3[3] = {0, 1, 5}, c2[2] = {0, 2}, z[1] = {0};
    struct hurray_item *p = tb_grid2(7, 3, r3, 3, c2, 2); /* uneven 3 x 2 grid */
    expect(p, NULL, HURRAY_OK, NULL);
    hurray_item_destroy(p);
    p = tb_grid2(7, 3, z, 1, z, 1); /* one member spanning the head */
    expect(p, NULL, HURRAY_OK, NULL);
    hurray_item_destroy(p);
    p = tb_grid2(0, 3, z, 1, c2, 2); /* an empty head: one cut along the zero extent */
    expect(p, NULL, HURRAY_OK, NULL);
    hurray_item_destroy(p);

    /* rank 0: one scalar member */
    struct hurray_item *s = tb_head(PART, 0, F32, 0, NULL, 1);
    s->members[0] = tb_piece(F32, 0, NULL, NULL, NULL, 0);
    expect(s, NULL, HURRAY_OK, NULL);
    hurray_item_destroy(s);
}

static void test_HR_COMP_6_partition_gap(void **state) {
    (void)state;
    struct hurray_item *p = two_rows();
    /* member 1 is one row, but claims only 2 columns: a gap at [1, 2] */
    struct hurray_item *m = p->members[1];
    test_set_shape_at(m->descriptor, 1, 2);
    expect(p, NULL, HURRAY_E_CONSTRAINT, "members[1].shape[1]");
    hurray_item_destroy(p);

    const uint64_t s13[2] = {1, 3}, o00[2] = {0, 0};
    struct hurray_item *one = tb_head(PART, 0, F32, 2, S23, 1); /* row 1 uncovered */
    one->members[0] = tb_piece(F32, 2, s13, S23, o00, 0);
    expect(one, NULL, HURRAY_E_CONSTRAINT, "members[0].shape[0]");
    hurray_item_destroy(one);
}

static void test_HR_COMP_6_partition_overlap(void **state) {
    (void)state;
    struct hurray_item *p = two_rows();
    test_patch_shard(p->members[1]->descriptor, 1, 0, 0); /* both rows at the origin */
    expect(p, NULL, HURRAY_E_CONSTRAINT, "members");
    hurray_item_destroy(p);

    /* three 1-D pieces [0,2) [1,3) [3,4) over [4]: cuts 0 1 3 describe a grid,
     * but member 0's extent 2 overlaps member 1 */
    const uint64_t g4[1] = {4}, s2[1] = {2}, s1[1] = {1}, o0[1] = {0}, o1[1] = {1}, o3[1] = {3};
    struct hurray_item *q = tb_head(PART, 0, F32, 1, g4, 3);
    q->members[0] = tb_piece(F32, 1, s2, g4, o0, 0);
    q->members[1] = tb_piece(F32, 1, s2, g4, o1, 1);
    q->members[2] = tb_piece(F32, 1, s1, g4, o3, 2);
    expect(q, NULL, HURRAY_E_CONSTRAINT, "members[0].shape[0]");
    hurray_item_destroy(q);
}

static void test_HR_COMP_6_partition_out_of_order(void **state) {
    (void)state;
    struct hurray_item *p = two_rows();
    struct hurray_item *tmp = p->members[0];
    p->members[0] = p->members[1];
    p->members[1] = tmp;
    expect(p, NULL, HURRAY_E_CONSTRAINT, NULL);
    hurray_item_destroy(p);

    /* a 2 x 2 grid in column-major order */
    const uint64_t c[2] = {0, 1};
    struct hurray_item *g = tb_grid2(2, 2, c, 2, c, 2);
    tmp = g->members[1];
    g->members[1] = g->members[2];
    g->members[2] = tmp;
    expect(g, NULL, HURRAY_E_CONSTRAINT, NULL);
    hurray_item_destroy(g);
}

static void test_HR_COMP_6_partition_out_of_bounds(void **state) {
    (void)state;
    /* Inside the validator, a box past the head shows as a grid mismatch (the
     * member's own shard rule, HR-SHARD-1, refuses it earlier when decoded). */
    struct hurray_item *p = two_rows();
    test_set_shape_at(p->members[1]->descriptor, 0, 2);
    expect(p, NULL, HURRAY_E_CONSTRAINT, "members[1].shape[0]");
    hurray_item_destroy(p);
}

static void test_HR_COMP_6_non_grid_tiling_nests(void **state) {
    (void)state;
    /* [4, 4]: one wide tile on top, two narrow ones below. Flat: refused. */
    const uint64_t s44[2] = {4, 4}, s24[2] = {2, 4}, s22[2] = {2, 2};
    const uint64_t o00[2] = {0, 0}, o20[2] = {2, 0}, o22[2] = {2, 2}, o02[2] = {0, 2};
    struct hurray_item *flat = tb_head(PART, 0, F32, 2, s44, 3);
    flat->members[0] = tb_piece(F32, 2, s24, s44, o00, 0);
    flat->members[1] = tb_piece(F32, 2, s22, s44, o20, 1);
    flat->members[2] = tb_piece(F32, 2, s22, s44, o22, 2);
    expect(flat, NULL, HURRAY_E_CONSTRAINT, NULL);
    hurray_item_destroy(flat);

    /* Nested: the bottom half is itself a partition placed by its shard. */
    struct hurray_item *outer = tb_head(PART, 0, F32, 2, s44, 2);
    outer->members[0] = tb_piece(F32, 2, s24, s44, o00, 0);
    struct hurray_item *bottom = tb_head(PART, 0, F32, 2, s24, 2);
    tb_shard(bottom, s44, o20);
    bottom->members[0] = tb_piece(F32, 2, s22, s24, o00, 1);
    bottom->members[1] = tb_piece(F32, 2, s22, s24, o02, 2);
    outer->members[1] = bottom;
    expect(outer, NULL, HURRAY_OK, NULL);
    hurray_item_destroy(outer);
}

/* A 64 x 64 grid (4,096 members): the check is one pass over the members
 * (n * rank comparisons, no allocation), never pairwise; a broken offset in
 * the last member is still found. (Each member's descriptor record is ~14
 * KiB, which is what keeps this test at 4,096 rather than 65,536.) */
static void test_HR_COMP_6_large_partition_one_pass(void **state) {
    (void)state;
    uint64_t cuts[64];
    for (unsigned i = 0; i < 64; i++) cuts[i] = 2 * i;
    struct hurray_item *p = tb_grid2(128, 128, cuts, 64, cuts, 64);
    expect(p, NULL, HURRAY_OK, NULL);
    test_patch_shard(p->members[4095]->descriptor, 1, 1, 125);
    expect(p, NULL, HURRAY_E_CONSTRAINT, "members[4095]");
    hurray_item_destroy(p);
}

/* ==== overlay (HR-COMP-7) ======================================================= */

static void test_HR_COMP_7_overlay_base(void **state) {
    (void)state;
    struct hurray_item *o = overlay3();
    test_set_shape_at(o->members[0]->descriptor, 1, 3);
    expect(o, NULL, HURRAY_E_CONSTRAINT, "members[0].shape[1]");
    test_set_shape_at(o->members[0]->descriptor, 1, 4);
    const uint64_t s44[2] = {4, 4}, o00[2] = {0, 0}, o01[2] = {0, 1};
    tb_shard(o->members[0], s44, o00); /* a shard box equal to the head is allowed */
    expect(o, NULL, HURRAY_OK, NULL);
    tb_shard(o->members[0], s44, o01);
    expect(o, NULL, HURRAY_E_CONSTRAINT, "members[0].shard.global_offset[1]");
    hurray_item_destroy(o);
}

static void test_HR_COMP_7_overlay_corrections(void **state) {
    (void)state;
    struct hurray_item *o = overlay3();
    const struct hurray_shard *kept = o->members[2]->descriptor->shard;
    o->members[2]->descriptor->shard = NULL;
    expect(o, NULL, HURRAY_E_CONSTRAINT, "members[2].shard");
    o->members[2]->descriptor->shard = kept;
    test_patch_shard(o->members[1]->descriptor, 0, 0, 5);
    expect(o, NULL, HURRAY_E_CONSTRAINT, "members[1].shard.global_shape[0]");
    test_patch_shard(o->members[1]->descriptor, 0, 0, 4);
    o->members[1]->descriptor->dtype = HURRAY_DTYPE_FLOAT16;
    expect(o, NULL, HURRAY_E_COMBINATION, "members[1].dtype");
    hurray_item_destroy(o);

    /* overlapping corrections are allowed: they apply in order */
    const uint64_t s44[2] = {4, 4}, s22[2] = {2, 2}, o11[2] = {1, 1};
    struct hurray_item *h = tb_head(OVER, HURRAY_COMBINE_REPLACE, F32, 2, s44, 3);
    h->members[0] = tb_tensor(F32, 2, s44, 1);
    h->members[1] = tb_piece(F32, 2, s22, s44, o11, 2);
    h->members[2] = tb_piece(F32, 2, s22, s44, o11, 3);
    assert_status(hurray_composite_assign_roles(h, NULL), HURRAY_OK);
    expect(h, NULL, HURRAY_OK, NULL);
    hurray_item_destroy(h);
}

/* ==== group (HR-COMP-8) ======================================================== */

static void test_HR_COMP_8_group_anything(void **state) {
    (void)state;
    const uint64_t s5[1] = {5};
    struct hurray_item *g = tb_head(GROUP, 0, F32, 2, S23, 3);
    g->members[0] = tb_tensor(HURRAY_DTYPE_INT8, 1, s5, 0);
    g->members[1] = tb_tensor(HURRAY_DTYPE_FLOAT64, 0, NULL, 1);
    g->members[2] = two_rows();
    expect(g, NULL, HURRAY_OK, NULL);
    hurray_item_destroy(g);
}

/* One valid composite of each rule, nested in each other (HR-COMP-2). */
static void test_HR_COMP_2_each_rule_and_nesting(void **state) {
    (void)state;
    const uint64_t s44[2] = {4, 4};
    struct hurray_item *g = tb_head(GROUP, 0, F32, 0, NULL, 3);
    g->members[0] = two_rows();
    g->members[1] = overlay3();
    g->members[2] = nested_groups(2);
    expect(g, NULL, HURRAY_OK, NULL);
    /* an overlay whose base is itself a partition of the head */
    const uint64_t c[2] = {0, 2}, s22[2] = {2, 2}, o11[2] = {1, 1};
    struct hurray_item *o = tb_head(OVER, HURRAY_COMBINE_MAX, F32, 2, s44, 2);
    o->members[0] = tb_grid2(4, 4, c, 2, c, 2);
    o->members[1] = tb_piece(F32, 2, s22, s44, o11, 9);
    assert_status(hurray_composite_assign_roles(o, NULL), HURRAY_OK);
    expect(o, NULL, HURRAY_OK, NULL);
    hurray_item_destroy(g);
    hurray_item_destroy(o);
}

/* ==== count and limits (HR-COMP-1, HR-COMP-9) ====================================== */

static void test_HR_COMP_1_member_count_mismatch(void **state) {
    (void)state;
    struct hurray_item *p = two_rows();
    p->descriptor->layout.member_count = 3;
    expect(p, NULL, HURRAY_E_CONSTRAINT, "members");
    p->descriptor->layout.member_count = 1;
    expect(p, NULL, HURRAY_E_CONSTRAINT, "members");
    p->descriptor->layout.member_count = 2;
    expect(p, NULL, HURRAY_OK, NULL);
    hurray_item_destroy(p);
}

static void test_HR_COMP_9_depth_limit(void **state) {
    (void)state;
    struct hurray_limits lim;
    hurray_limits_default(&lim);
    struct hurray_item *ok = nested_groups(HURRAY_DEFAULT_MAX_COMPOSITE_DEPTH);
    expect(ok, NULL, HURRAY_OK, NULL);
    struct hurray_item *deep = nested_groups(HURRAY_DEFAULT_MAX_COMPOSITE_DEPTH + 1);
    expect(deep, NULL, HURRAY_E_LIMIT, "depth");
    lim.max_composite_depth = 3;
    expect(ok, &lim, HURRAY_E_LIMIT, "depth");
    hurray_item_destroy(ok);
    hurray_item_destroy(deep);
    /* the format maximum: 64 deep passes, 65 does not, whatever the limit says */
    lim.max_composite_depth = 1000;
    struct hurray_item *fmt = nested_groups(64), *over = nested_groups(65);
    expect(fmt, &lim, HURRAY_OK, NULL);
    expect(over, &lim, HURRAY_E_LIMIT, "depth");
    hurray_item_destroy(fmt);
    hurray_item_destroy(over);
}

static void test_HR_COMP_9_member_total(void **state) {
    (void)state;
    struct hurray_limits lim;
    hurray_limits_default(&lim);
    struct hurray_item *g = nested_groups(5); /* 5 members over all levels */
    lim.max_composite_members = 5;
    expect(g, &lim, HURRAY_OK, NULL);
    lim.max_composite_members = 4;
    expect(g, &lim, HURRAY_E_LIMIT, "layout.member_count");
    hurray_item_destroy(g);
}

/* ==== order (HR-COMP-10) ========================================================= */

static void test_HR_COMP_10_first_failure_wins(void **state) {
    (void)state;
    const uint64_t c[2] = {0, 1};
    struct hurray_item *g = tb_grid2(2, 2, c, 2, c, 2);
    test_patch_shard(g->members[3]->descriptor, 1, 1, 0); /* grid: checked last */
    g->members[2]->descriptor->dtype = HURRAY_DTYPE_UINT32;  /* member 2: dtype */
    tb_role(g->members[1], HURRAY_ROLE_BASE);                 /* member 1: role first */
    expect(g, NULL, HURRAY_E_CONSTRAINT, "members[1].member_role");
    tb_role(g->members[1], 0);
    expect(g, NULL, HURRAY_E_COMBINATION, "members[2].dtype");
    g->members[2]->descriptor->dtype = F32;
    expect(g, NULL, HURRAY_E_CONSTRAINT, "members");
    hurray_item_destroy(g);
}

static void test_HR_COMP_10_malformed_trees(void **state) {
    (void)state;
    struct hurray_error err;
    assert_status(hurray_composite_validate(NULL, NULL, &err), HURRAY_E_ARGUMENT);
    struct hurray_item *g = tb_head(GROUP, 0, F32, 2, S23, 2);
    g->members[0] = tb_tensor(F32, 2, S23, 0);
    expect(g, NULL, HURRAY_E_ARGUMENT, "members[1]"); /* NULL member */
    hurray_item_destroy(g);
    struct hurray_item *t = tb_tensor(F32, 2, S23, 0);
    t->member_count = 1; /* a tensor with members */
    expect(t, NULL, HURRAY_E_ARGUMENT, "item");
    t->member_count = 0;
    hurray_item_destroy(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_HR_COMP_1_item_free_whole_tree),
        cmocka_unit_test(test_HR_COMP_1_item_free_partial_tree),
        cmocka_unit_test(test_HR_BUF_3_item_buffer_alloc_aligned),
        cmocka_unit_test(test_HR_COMP_3_member_role_derived),
        cmocka_unit_test(test_HR_COMP_3_overlay_roles_required),
        cmocka_unit_test(test_HR_COMP_3_no_roles_elsewhere),
        cmocka_unit_test(test_HR_COMP_3_assign_roles),
        cmocka_unit_test(test_HR_COMP_4_dynamic_extents),
        cmocka_unit_test(test_HR_COMP_5_partition_members),
        cmocka_unit_test(test_HR_COMP_6_partition_grids),
        cmocka_unit_test(test_HR_COMP_6_partition_gap),
        cmocka_unit_test(test_HR_COMP_6_partition_overlap),
        cmocka_unit_test(test_HR_COMP_6_partition_out_of_order),
        cmocka_unit_test(test_HR_COMP_6_partition_out_of_bounds),
        cmocka_unit_test(test_HR_COMP_6_non_grid_tiling_nests),
        cmocka_unit_test(test_HR_COMP_6_large_partition_one_pass),
        cmocka_unit_test(test_HR_COMP_7_overlay_base),
        cmocka_unit_test(test_HR_COMP_7_overlay_corrections),
        cmocka_unit_test(test_HR_COMP_8_group_anything),
        cmocka_unit_test(test_HR_COMP_2_each_rule_and_nesting),
        cmocka_unit_test(test_HR_COMP_1_member_count_mismatch),
        cmocka_unit_test(test_HR_COMP_9_depth_limit),
        cmocka_unit_test(test_HR_COMP_9_member_total),
        cmocka_unit_test(test_HR_COMP_10_first_failure_wins),
        cmocka_unit_test(test_HR_COMP_10_malformed_trees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
