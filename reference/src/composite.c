/* Composites: the one validator. docs/spec/composite.md
 *
 * Every composite rule lives in one check_* function below, called at its
 * step of composite.md § Validation order (HR-COMP-10). The stream reader
 * (stream.c) calls the same hri_composite_* steps as frames arrive, so a tree
 * validated in memory and the same tree read from a stream fail with the same
 * status. Nothing here allocates; recursion is bounded by max_composite_depth
 * (<= 64), checked before a head's members are visited. */
#include "item_internal.h"

static int is_boxed_rule(uint8_t rule) {
    return rule == HURRAY_RULE_PARTITION || rule == HURRAY_RULE_OVERLAY;
}

/* ---- roles (HR-COMP-3) ------------------------------------------------------ */

int hurray_composite_member_role(const struct hurray_descriptor *head, uint32_t index,
                                 uint8_t *role, struct hurray_error *err) {
    HR_FAIL_IF(!head || !role, err, HURRAY_E_ARGUMENT, "head",
               "composite_member_role: NULL argument");
    HR_FAIL_IF(head->layout.tag != HURRAY_LAYOUT_COMPOSITE, err, HURRAY_E_ARGUMENT, "layout",
               "composite_member_role: the head's layout is %s, not composite",
               hurray_layout_name(head->layout.tag) ? hurray_layout_name(head->layout.tag)
                                                    : "invalid");
    HR_FAIL_IF(index >= head->layout.member_count, err, HURRAY_E_ARGUMENT, "index",
               "composite_member_role: member %lu of a composite of %lu",
               (unsigned long)index, (unsigned long)head->layout.member_count);
    *role = 0;
    if (head->layout.rule == HURRAY_RULE_OVERLAY)
        *role = index == 0 ? HURRAY_ROLE_BASE : HURRAY_ROLE_CORRECTION;
    return HURRAY_OK;
}

/* Step 1: only overlay members carry a role; an item that is no member has none. */
int hri_composite_check_top(const struct hurray_descriptor *d, struct hurray_error *err) {
    HR_FAIL_IF(d->has_role, err, HURRAY_E_CONSTRAINT, "member_role",
               "member_role: a %s item that is not a composite member carries a member-role "
               "section (HR-COMP-3)",
               d->layout.tag == HURRAY_LAYOUT_COMPOSITE ? "composite" : "tensor");
    return HURRAY_OK;
}

/* Step 3.1: an overlay member's role section equals its derived role; other
 * members carry none. */
static int check_member_role(const struct hurray_descriptor *h, uint32_t i,
                             const struct hurray_descriptor *m, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    uint8_t want = 0;
    HR_TRY(hurray_composite_member_role(h, i, &want, err));
    if (want == 0 ? !m->has_role : m->has_role && m->role == want) return HURRAY_OK;
    hri_fieldf(f, "members[%lu].member_role", (unsigned long)i); /* only on failure */
    HR_FAIL_IF(want == 0 && m->has_role, err, HURRAY_E_CONSTRAINT, f,
               "%s: a member of a %s composite carries no member-role section (HR-COMP-3)", f,
               hurray_composite_rule_name(h->layout.rule));
    HR_FAIL_IF(want != 0 && !m->has_role, err, HURRAY_E_CONSTRAINT, f,
               "%s: an overlay member carries a member-role section, here %s (HR-COMP-3)", f,
               hurray_member_role_name(want));
    return hri_fail(err, HURRAY_E_CONSTRAINT, f, /* want != 0 && m->role != want */
                    "%s: role %s, but member %lu of an overlay is the %s (HR-COMP-3)", f,
                    hurray_member_role_name(m->role) ? hurray_member_role_name(m->role) : "?",
                    (unsigned long)i, hurray_member_role_name(want));
}

/* ---- the head (step 2) ---------------------------------------------------------- */

/* HR-COMP-4: boxes are only meaningful when resolved. `who` names the field prefix. */
static int check_resolved(const struct hurray_descriptor *d, const char *who,
                          struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned k = 0; k < d->rank; k++) {
        if (d->shape[k] != HURRAY_DYNAMIC_DIM) continue;
        hri_fieldf(f, "%sshape[%u]", who, k);
        return hri_fail(err, HURRAY_E_CONSTRAINT, f,
                        "%s: a dynamic dimension, but partition and overlay boxes must be "
                        "resolved (HR-COMP-4)",
                        f);
    }
    return HURRAY_OK;
}

/* HR-COMP-9: depth, then (HR-COMP-1) the members held, then the member total
 * over every level, then HR-COMP-4 for the head. */
int hri_composite_check_head(const struct hurray_descriptor *h, uint32_t depth, uint64_t held,
                             uint64_t *total, const struct hurray_limits *lim,
                             struct hurray_error *err) {
    uint32_t n = h->layout.member_count;
    HR_FAIL_IF(depth > lim->max_composite_depth, err, HURRAY_E_LIMIT, "depth",
               "depth: a composite nested %lu deep exceeds max_composite_depth %lu (HR-COMP-9)",
               (unsigned long)depth, (unsigned long)lim->max_composite_depth);
    HR_FAIL_IF(held != n, err, HURRAY_E_CONSTRAINT, "members",
               "members: %llu members held, but the head's member_count is %lu (HR-COMP-1)",
               (unsigned long long)held, (unsigned long)n);
    HR_FAIL_IF(n > lim->max_composite_members || *total > lim->max_composite_members - n, err,
               HURRAY_E_LIMIT, "layout.member_count",
               "layout.member_count: %lu more members bring the composite's total past "
               "max_composite_members %llu (HR-COMP-9)",
               (unsigned long)n, (unsigned long long)lim->max_composite_members);
    *total += n;
    if (!is_boxed_rule(h->layout.rule)) return HURRAY_OK;
    return check_resolved(h, "", err);
}

/* ---- members (step 3.2) ----------------------------------------------------------- */

static const char *dtype_name(uint8_t tag) {
    const struct hurray_dtype_info *info = hurray_dtype_info(tag);
    return info ? info->name : "extension";
}

/* Rank and dtype equal to the head's, resolved extents (HR-COMP-5 1-3, HR-COMP-7 2). */
static int check_rank_dtype_resolved(const struct hurray_descriptor *h, uint32_t i,
                                     const struct hurray_descriptor *m,
                                     struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    const char *rule = hurray_composite_rule_name(h->layout.rule);
    if (m->rank != h->rank)
        return hri_fail(err, HURRAY_E_CONSTRAINT, hri_fieldf(f, "members[%lu].rank",
                                                             (unsigned long)i),
                        "%s: %u, but the %s head has rank %u", f, (unsigned)m->rank, rule,
                        (unsigned)h->rank);
    if (m->dtype != h->dtype)
        return hri_fail(err, HURRAY_E_COMBINATION, hri_fieldf(f, "members[%lu].dtype",
                                                              (unsigned long)i),
                        "%s: %s, but a %s member has the head's dtype %s", f,
                        dtype_name(m->dtype), rule, dtype_name(h->dtype));
    if (check_resolved(m, "", NULL) == HURRAY_OK) return HURRAY_OK;
    hri_fieldf(f, "members[%lu].", (unsigned long)i); /* only on failure */
    return check_resolved(m, f, err);
}

/* A member's shard section is present and its global_shape is the head's shape. */
static int check_shard_global(const struct hurray_descriptor *h, uint32_t i,
                              const struct hurray_descriptor *m, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    if (!m->shard)
        return hri_fail(err, HURRAY_E_CONSTRAINT, hri_fieldf(f, "members[%lu].shard",
                                                             (unsigned long)i),
                        "%s: a %s member is placed by a shard section, and has none", f,
                        i == 0 ? "partition" : "partition or overlay correction");
    for (unsigned k = 0; k < h->rank; k++) {
        if (m->shard->global_shape[k] == h->shape[k]) continue;
        hri_fieldf(f, "members[%lu].shard.global_shape[%u]", (unsigned long)i, k);
        return hri_fail(err, HURRAY_E_CONSTRAINT, f,
                        "%s: %llu, but the head's extent is %llu", f,
                        (unsigned long long)m->shard->global_shape[k],
                        (unsigned long long)h->shape[k]);
    }
    return HURRAY_OK;
}

/* HR-COMP-5. */
static int check_partition_member(const struct hurray_descriptor *h, uint32_t i,
                                  const struct hurray_descriptor *m, struct hurray_error *err) {
    HR_TRY(check_rank_dtype_resolved(h, i, m, err));
    return check_shard_global(h, i, m, err);
}

/* HR-COMP-7 3: the base spans the head: same shape; no shard, or the whole head. */
static int check_overlay_base(const struct hurray_descriptor *h,
                              const struct hurray_descriptor *m, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned k = 0; k < h->rank; k++)
        HR_FAIL_IF(m->shape[k] != h->shape[k], err, HURRAY_E_CONSTRAINT,
                   hri_fieldf(f, "members[0].shape[%u]", k),
                   "%s: %llu, but the overlay base spans the head, whose extent is %llu", f,
                   (unsigned long long)m->shape[k], (unsigned long long)h->shape[k]);
    if (!m->shard) return HURRAY_OK;
    HR_TRY(check_shard_global(h, 0, m, err));
    for (unsigned k = 0; k < h->rank; k++)
        HR_FAIL_IF(m->shard->global_offset[k] != 0, err, HURRAY_E_CONSTRAINT,
                   hri_fieldf(f, "members[0].shard.global_offset[%u]", k),
                   "%s: %llu, but the overlay base's box is the whole head", f,
                   (unsigned long long)m->shard->global_offset[k]);
    return HURRAY_OK;
}

/* HR-COMP-7. */
static int check_overlay_member(const struct hurray_descriptor *h, uint32_t i,
                                const struct hurray_descriptor *m, struct hurray_error *err) {
    HR_TRY(check_rank_dtype_resolved(h, i, m, err));
    if (i == 0) return check_overlay_base(h, m, err);
    return check_shard_global(h, i, m, err);
}

int hri_composite_check_member(const struct hurray_descriptor *h, uint32_t index,
                               const struct hurray_descriptor *m, struct hurray_error *err) {
    HR_TRY(check_member_role(h, index, m, err));
    switch (h->layout.rule) {
    case HURRAY_RULE_PARTITION: return check_partition_member(h, index, m, err);
    case HURRAY_RULE_OVERLAY: return check_overlay_member(h, index, m, err);
    default: return HURRAY_OK; /* group (HR-COMP-8) */
    }
}

/* ---- the partition grid (HR-COMP-6, step 4) ------------------------------------------ */

struct grid {
    uint64_t cells[HURRAY_MAX_RANK];  /* m_k */
    uint64_t stride[HURRAY_MAX_RANK]; /* s_k = m_{k+1} ... m_{r-1} */
};

static uint64_t offset_of(const struct hurray_item *m, unsigned k) {
    const struct hurray_descriptor *d = m->descriptor;
    return d->shard ? d->shard->global_offset[k] : 0;
}

/* Reads the grid off the members, last dimension first: m_k is the first
 * t >= 1 at which member t*s_k's offset along k returns to 0 (or t*s_k
 * reaches n). At most n*rank steps; t*s_k < 2n never wraps. */
static int derive_grid(const struct hurray_descriptor *h, struct hurray_item *const *members,
                       uint32_t n, struct grid *g, struct hurray_error *err) {
    uint64_t s = 1;
    for (unsigned k = h->rank; k-- > 0;) {
        uint64_t t = 1;
        while (t * s < n && offset_of(members[t * s], k) != 0) t++;
        g->cells[k] = t;
        g->stride[k] = s;
        s *= t;
    }
    HR_FAIL_IF(s != n, err, HURRAY_E_CONSTRAINT, "members",
               "members: the members' offsets describe a grid of %llu cells, but the partition "
               "has %lu members (HR-COMP-6)",
               (unsigned long long)s, (unsigned long)n);
    return HURRAY_OK;
}

/* Member i at grid position j along k: offset c_k[j], extent c_k[j+1] - c_k[j]
 * (c_k[m_k] = H_k), cuts strictly ascending (a zero-extent head has the one
 * cut 0). */
static int check_grid_cell(const struct hurray_descriptor *h, struct hurray_item *const *members,
                           const struct grid *g, uint32_t i, unsigned k,
                           struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    const struct hurray_descriptor *m = members[i]->descriptor;
    uint64_t j = (i / g->stride[k]) % g->cells[k];
    uint64_t lo = offset_of(members[j * g->stride[k]], k);
    uint64_t hi = j + 1 < g->cells[k] ? offset_of(members[(j + 1) * g->stride[k]], k) : h->shape[k];
    if (offset_of(members[i], k) != lo)
        return hri_fail(err, HURRAY_E_CONSTRAINT,
                        hri_fieldf(f, "members[%lu].shard.global_offset[%u]", (unsigned long)i, k),
                        "%s: %llu, but the partition grid in row-major order puts member %lu "
                        "at %llu along dimension %u (HR-COMP-6)",
                        f, (unsigned long long)offset_of(members[i], k), (unsigned long)i,
                        (unsigned long long)lo, k);
    if (hi < lo || (hi == lo && h->shape[k] != 0))
        return hri_fail(err, HURRAY_E_CONSTRAINT,
                        hri_fieldf(f, "members[%lu].shard.global_offset[%u]",
                                   (unsigned long)((j + 1) * g->stride[k]), k),
                        "%s: the partition's cuts along dimension %u are not ascending: %llu "
                        "follows %llu (members overlap; HR-COMP-6)",
                        f, k, (unsigned long long)hi, (unsigned long long)lo);
    if (m->shape[k] != hi - lo)
        return hri_fail(err, HURRAY_E_CONSTRAINT,
                        hri_fieldf(f, "members[%lu].shape[%u]", (unsigned long)i, k),
                        "%s: %llu, but its grid cell spans %llu..%llu along dimension %u "
                        "(a gap or an overlap; HR-COMP-6)",
                        f, (unsigned long long)m->shape[k], (unsigned long long)lo,
                        (unsigned long long)hi, k);
    return HURRAY_OK;
}

int hri_composite_check_grid(const struct hurray_descriptor *h,
                             struct hurray_item *const *members, uint32_t n,
                             struct hurray_error *err) {
    struct grid g;
    if (h->layout.rule != HURRAY_RULE_PARTITION) return HURRAY_OK;
    HR_TRY(derive_grid(h, members, n, &g, err));
    for (uint32_t i = 0; i < n; i++)
        for (unsigned k = 0; k < h->rank; k++) HR_TRY(check_grid_cell(h, members, &g, i, k, err));
    return HURRAY_OK;
}

/* ---- the validator ------------------------------------------------------------------- */

/* What the rules assume of an item built in memory (ARGUMENT otherwise): a
 * descriptor, a rank the arrays hold, members exactly when composite. */
static int check_item_struct(const struct hurray_item *it, const char *what,
                             struct hurray_error *err);

/* The same for member i, its name formatted only when it fails. */
static int check_member_struct(const struct hurray_item *m, uint32_t i,
                               struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    if (check_item_struct(m, "", NULL) == HURRAY_OK) return HURRAY_OK;
    return check_item_struct(m, hri_fieldf(f, "members[%lu]", (unsigned long)i), err);
}

static int check_item_struct(const struct hurray_item *it, const char *what,
                             struct hurray_error *err) {
    HR_FAIL_IF(!it || !it->descriptor, err, HURRAY_E_ARGUMENT, what,
               "%s: NULL item or descriptor", what);
    HR_FAIL_IF(it->descriptor->rank > HURRAY_MAX_RANK, err, HURRAY_E_ARGUMENT, what,
               "%s: rank %u exceeds 64; validate the descriptor first", what,
               (unsigned)it->descriptor->rank);
    int composite = hurray_item_is_composite(it);
    HR_FAIL_IF(!composite && (it->members || it->member_count), err, HURRAY_E_ARGUMENT, what,
               "%s: a tensor item has no members", what);
    HR_FAIL_IF(composite && it->member_count && !it->members, err, HURRAY_E_ARGUMENT, what,
               "%s: member_count %lu with no members table", what,
               (unsigned long)it->member_count);
    return HURRAY_OK;
}

static int validate_head(const struct hurray_item *it, uint32_t depth, uint64_t *total,
                         const struct hurray_limits *lim, struct hurray_error *err);

/* Step 3 for member i: its rules against the head, then its own subtree. */
static int validate_member(const struct hurray_item *it, uint32_t i, uint32_t depth,
                           uint64_t *total, const struct hurray_limits *lim,
                           struct hurray_error *err) {
    const struct hurray_item *m = it->members[i];
    HR_TRY(check_member_struct(m, i, err));
    HR_TRY(hri_composite_check_member(it->descriptor, i, m->descriptor, err));
    if (!hurray_item_is_composite(m)) return HURRAY_OK;
    return validate_head(m, depth + 1, total, lim, err);
}

/* Steps 2-4 for a head at `depth` (depth is checked before any recursion). */
static int validate_head(const struct hurray_item *it, uint32_t depth, uint64_t *total,
                         const struct hurray_limits *lim, struct hurray_error *err) {
    HR_TRY(hri_composite_check_head(it->descriptor, depth, it->member_count, total, lim, err));
    for (uint32_t i = 0; i < it->member_count; i++)
        HR_TRY(validate_member(it, i, depth, total, lim, err));
    return hri_composite_check_grid(it->descriptor, it->members, it->member_count, err);
}

int hurray_composite_validate(const struct hurray_item *item, const struct hurray_limits *limits,
                              struct hurray_error *err) {
    struct hurray_limits lim;
    uint64_t total = 0;
    HR_TRY(check_item_struct(item, "item", err));
    HR_TRY(hri_composite_check_top(item->descriptor, err));
    if (!hurray_item_is_composite(item)) return HURRAY_OK;
    hri_limits_effective(limits, &lim); /* only a head's walk reads them */
    return validate_head(item, 1, &total, &lim, err);
}

/* ---- assigning roles ------------------------------------------------------------------- */

static int assign_roles(struct hurray_item *it, uint32_t depth, struct hurray_error *err) {
    HR_TRY(check_item_struct(it, "item", err));
    if (!hurray_item_is_composite(it)) return HURRAY_OK;
    HR_FAIL_IF(depth > HURRAY_MAX_COMPOSITE_DEPTH_FORMAT, err, HURRAY_E_LIMIT, "depth",
               "depth: composites nest at most %u deep", HURRAY_MAX_COMPOSITE_DEPTH_FORMAT);
    HR_FAIL_IF(it->member_count != it->descriptor->layout.member_count, err, HURRAY_E_ARGUMENT,
               "members", "members: %lu held, member_count %lu",
               (unsigned long)it->member_count,
               (unsigned long)it->descriptor->layout.member_count);
    for (uint32_t i = 0; i < it->member_count; i++) {
        struct hurray_item *m = it->members[i];
        uint8_t role = 0;
        HR_TRY(check_item_struct(m, "member", err));
        HR_TRY(hurray_composite_member_role(it->descriptor, i, &role, err));
        if (role && !m->descriptor->has_role) {
            m->descriptor->has_role = 1;
            m->descriptor->role = role;
        }
        HR_TRY(assign_roles(m, depth + 1, err));
    }
    return HURRAY_OK;
}

int hurray_composite_assign_roles(struct hurray_item *item, struct hurray_error *err) {
    return assign_roles(item, 1, err);
}
