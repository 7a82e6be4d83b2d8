/* Optional sections: section types, statistics, shard, member role.
 * docs/spec/sections.md */
#include <math.h>

#include "internal.h"

/* ---- section types (sections.md, HR-SECT-1 ... 4) ------------------------- */

static const char *const section_names[] = {"quantization", "statistics", "shard",
                                            "member_role"};

static int section_is_named(uint8_t type) {
    return type >= HURRAY_SECTION_QUANTIZATION && type <= HURRAY_SECTION_ROLE;
}

/* The section-type space has a private range (conventions.md § Tag spaces). */
int hurray_section_type_kind(uint8_t type) {
    return hri_tag_kind_with_private(type, section_is_named(type));
}

const char *hurray_section_name(uint8_t type) {
    return section_is_named(type) ? section_names[type - 1] : NULL;
}

/* ---- member role (HR-ROLE-1) ----------------------------------------------- */

static int role_is_named(uint8_t role) {
    return role == HURRAY_ROLE_BASE || role == HURRAY_ROLE_CORRECTION;
}

const char *hurray_member_role_name(uint8_t role) {
    if (role == HURRAY_ROLE_BASE) return "base";
    if (role == HURRAY_ROLE_CORRECTION) return "correction";
    return NULL;
}

/* 0x00/0xFF INVALID_TAG, other unnamed bytes RESERVED_TAG (no private range). */
int hurray_member_role_check(uint8_t role, struct hurray_error *err) {
    return hri_check_tag_kind(hri_tag_kind_plain(role, role_is_named(role)), role, 0,
                              "member_role.role", err);
}

#define STATISTICS_BYTES 32u
#define ROLE_BYTES 8u
#define SHARD_HEAD_BYTES 8u

uint32_t hri_statistics_length(void) { return STATISTICS_BYTES; }
uint32_t hri_role_length(void) { return ROLE_BYTES; }
/* 8 + 16·rank bytes. */
uint32_t hri_shard_length(uint8_t rank) { return SHARD_HEAD_BYTES + 16u * rank; }

/* A known section's payload is exactly its length (HR-SECT-2). */
static int check_payload_length(const struct hri_cursor *c, uint32_t want, const char *name,
                                struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    size_t have = hri_cursor_left(c);
    HR_FAIL_IF(have != want, err, HURRAY_E_LENGTH, hri_fieldf(f, "%s.length", name),
               "%s.length: the payload is %u bytes, not %zu", name, (unsigned)want, have);
    return HURRAY_OK;
}

/* role u8, reserved u8[7]. */
int hri_role_read(struct hri_cursor *c, uint8_t *role, struct hurray_error *err) {
    HR_FAIL_IF(!c || !role, err, HURRAY_E_ARGUMENT, "member_role", "role_read: NULL argument");
    HR_TRY(check_payload_length(c, ROLE_BYTES, "member_role", err));
    HR_TRY(hri_read_u8(c, role, "member_role.role", err));
    HR_TRY(hurray_member_role_check(*role, err));
    return hri_read_reserved(c, 7, "member_role.reserved", err);
}

void hri_role_write(struct hri_writer *w, uint8_t role) {
    if (!w) return;
    hri_w_u8(w, role);
    hri_w_zero(w, 7);
}

/* ---- statistics (HR-STAT-1) ------------------------------------------------ */

#define STATS_KNOWN_FLAGS (HURRAY_STATS_HAS_MIN_MAX | HURRAY_STATS_HAS_NAN_COUNT)

/* Offset 0: bits 2-7 of flags are reserved. */
static int check_stats_flags_reserved(uint8_t flags, struct hurray_error *err) {
    HR_FAIL_IF(flags & ~STATS_KNOWN_FLAGS, err, HURRAY_E_RESERVED_NONZERO, "statistics.flags",
               "statistics.flags: reserved bits set (0x%02X)", flags);
    return HURRAY_OK;
}

/* A field whose flag is clear MUST be all-zero bytes (RESERVED_NONZERO). */
static int check_absent_zero(int present, uint64_t bits, const char *field,
                             struct hurray_error *err) {
    HR_FAIL_IF(!present && bits != 0, err, HURRAY_E_RESERVED_NONZERO, field,
               "%s: its flag is clear, so its bytes must be zero", field);
    return HURRAY_OK;
}

static int has_min_max(const struct hurray_statistics *s) {
    return (s->flags & HURRAY_STATS_HAS_MIN_MAX) != 0;
}
static int has_nan_count(const struct hurray_statistics *s) {
    return (s->flags & HURRAY_STATS_HAS_NAN_COUNT) != 0;
}

/* The structural rules in offset order: flags' reserved bits, then min, max
 * and nan_count zero when absent. */
static int check_stats_structure(const struct hurray_statistics *s, struct hurray_error *err) {
    HR_TRY(check_stats_flags_reserved(s->flags, err));
    HR_TRY(check_absent_zero(has_min_max(s), hri_f64_bits(s->min), "statistics.min", err));
    HR_TRY(check_absent_zero(has_min_max(s), hri_f64_bits(s->max), "statistics.max", err));
    return check_absent_zero(has_nan_count(s), s->nan_count, "statistics.nan_count", err);
}

/* flags = 0 is CONSTRAINT (omit the section instead); min/max not NaN and
 * min <= max; nan_count <= N (CONSTRAINT). */
static int check_stats_values(const struct hurray_statistics *s, uint64_t element_count,
                              struct hurray_error *err) {
    HR_FAIL_IF(s->flags == 0, err, HURRAY_E_CONSTRAINT, "statistics.flags",
               "statistics.flags: 0 (no statistic); omit the section instead");
    if (has_min_max(s)) {
        HR_FAIL_IF(isnan(s->min), err, HURRAY_E_CONSTRAINT, "statistics.min",
                   "statistics.min: NaN");
        HR_FAIL_IF(isnan(s->max), err, HURRAY_E_CONSTRAINT, "statistics.max",
                   "statistics.max: NaN");
        HR_FAIL_IF(s->min > s->max, err, HURRAY_E_CONSTRAINT, "statistics.min",
                   "statistics.min: %g exceeds max %g", s->min, s->max);
    }
    HR_FAIL_IF(has_nan_count(s) && s->nan_count > element_count, err, HURRAY_E_CONSTRAINT,
               "statistics.nan_count", "statistics.nan_count: %llu exceeds the element count "
               "%llu", (unsigned long long)s->nan_count, (unsigned long long)element_count);
    return HURRAY_OK;
}

int hurray_statistics_check(const struct hurray_statistics *s, uint64_t element_count,
                            struct hurray_error *err) {
    HR_FAIL_IF(!s, err, HURRAY_E_ARGUMENT, "statistics", "statistics_check: s is NULL");
    HR_TRY(check_stats_structure(s, err));
    return check_stats_values(s, element_count, err);
}

/* flags u8, reserved u8[7], min f64, max f64, nan_count u64. Reads the
 * structure (reserved bits and bytes, absent fields zero) in offset order;
 * the value rules are hurray_statistics_check's, which needs N. */
int hri_statistics_read(struct hri_cursor *c, struct hurray_statistics *out,
                        struct hurray_error *err) {
    HR_FAIL_IF(!c || !out, err, HURRAY_E_ARGUMENT, "statistics",
               "statistics_read: NULL argument");
    memset(out, 0, sizeof *out);
    HR_TRY(check_payload_length(c, STATISTICS_BYTES, "statistics", err));
    HR_TRY(hri_read_u8(c, &out->flags, "statistics.flags", err));
    HR_TRY(check_stats_flags_reserved(out->flags, err));
    HR_TRY(hri_read_reserved(c, 7, "statistics.reserved", err));
    HR_TRY(hri_read_f64(c, &out->min, "statistics.min", err));
    HR_TRY(hri_read_f64(c, &out->max, "statistics.max", err));
    HR_TRY(hri_read_u64(c, &out->nan_count, "statistics.nan_count", err));
    return check_stats_structure(out, err);
}

void hri_statistics_write(struct hri_writer *w, const struct hurray_statistics *s) {
    if (!w || !s) return;
    hri_w_u8(w, s->flags);
    hri_w_zero(w, 7);
    hri_w_f64(w, s->min);
    hri_w_f64(w, s->max);
    hri_w_u64(w, s->nan_count);
}

/* Floats compare by value (descriptor.md § Equality). */
int hurray_statistics_equal(const struct hurray_statistics *a,
                            const struct hurray_statistics *b) {
    if (!a || !b) return a == b;
    return a->flags == b->flags && a->min == b->min && a->max == b->max &&
           a->nan_count == b->nan_count;
}

/* ---- shard (HR-SHARD-1) ------------------------------------------------------ */

static int check_shard_rank(uint8_t rank, struct hurray_error *err) {
    HR_FAIL_IF(rank > HURRAY_MAX_RANK, err, HURRAY_E_LIMIT, "rank",
               "rank: %u exceeds the format maximum %d", (unsigned)rank, HURRAY_MAX_RANK);
    return HURRAY_OK;
}

/* shard_index u32, shard_count u32, global_shape u64[rank], global_offset u64[rank]. */
int hri_shard_read(struct hri_cursor *c, uint8_t rank, struct hurray_shard *out,
                   uint64_t *global_shape, uint64_t *global_offset, struct hurray_error *err) {
    HR_FAIL_IF(!c || !out || !global_shape || !global_offset, err, HURRAY_E_ARGUMENT, "shard",
               "shard_read: NULL argument");
    HR_TRY(check_shard_rank(rank, err));
    memset(out, 0, sizeof *out);
    HR_TRY(check_payload_length(c, hri_shard_length(rank), "shard", err));
    HR_TRY(hri_read_u32(c, &out->shard_index, "shard.shard_index", err));
    HR_TRY(hri_read_u32(c, &out->shard_count, "shard.shard_count", err));
    HR_TRY(hri_read_u64s_i(c, global_shape, rank, "shard.global_shape[%u]", err));
    HR_TRY(hri_read_u64s_i(c, global_offset, rank, "shard.global_offset[%u]", err));
    out->global_shape = global_shape;
    out->global_offset = global_offset;
    return HURRAY_OK;
}

/* The shard's two spans exist for `rank` dimensions (ARGUMENT otherwise). */
static int check_shard_spans(const struct hurray_shard *s, uint8_t rank,
                             struct hurray_error *err) {
    HR_FAIL_IF(rank > 0 && (!s->global_shape || !s->global_offset), err, HURRAY_E_ARGUMENT,
               "shard", "shard: NULL global_shape or global_offset span for rank %u",
               (unsigned)rank);
    return HURRAY_OK;
}

void hri_shard_write(struct hri_writer *w, const struct hurray_shard *s, uint8_t rank) {
    if (!w || !s) return;
    if (rank > HURRAY_MAX_RANK) {
        w->overflowed = 1;
        return;
    }
    hri_w_u32(w, s->shard_index);
    hri_w_u32(w, s->shard_count);
    for (unsigned k = 0; k < rank; k++) hri_w_u64(w, s->global_shape[k]);
    for (unsigned k = 0; k < rank; k++) hri_w_u64(w, s->global_offset[k]);
}

/* shard_count >= 1 and shard_index < shard_count (CONSTRAINT). */
static int check_shard_index(const struct hurray_shard *s, struct hurray_error *err) {
    HR_FAIL_IF(s->shard_count == 0, err, HURRAY_E_CONSTRAINT, "shard.shard_count",
               "shard.shard_count: must be >= 1");
    HR_FAIL_IF(s->shard_index >= s->shard_count, err, HURRAY_E_CONSTRAINT, "shard.shard_index",
               "shard.shard_index: %u is not below shard_count %u", (unsigned)s->shard_index,
               (unsigned)s->shard_count);
    return HURRAY_OK;
}

/* Global extents are resolved and <= 2^63-1 (RANGE). */
static int check_global_shape(const struct hurray_shard *s, uint8_t rank,
                              struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned k = 0; k < rank; k++) {
        HR_FAIL_IF(s->global_shape[k] > HURRAY_MAX_EXTENT, err, HURRAY_E_RANGE,
                   hri_fieldf(f, "shard.global_shape[%u]", k),
                   "shard.global_shape[%u]: %s", k,
                   s->global_shape[k] == HURRAY_DYNAMIC_DIM
                       ? "a global extent cannot be dynamic"
                       : "exceeds 2^63-1");
    }
    return HURRAY_OK;
}

/* offset_k + n_k <= global_k for every resolved local extent (checked add). */
static int check_shard_box(const struct hurray_shard *s, uint8_t rank, const uint64_t *shape,
                           struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned k = 0; k < rank; k++) {
        uint64_t end = 0;
        if (shape[k] == HURRAY_DYNAMIC_DIM) continue;
        HR_FAIL_IF(hri_add_u64(s->global_offset[k], shape[k], &end), err, HURRAY_E_CONSTRAINT,
                   hri_fieldf(f, "shard.global_offset[%u]", k),
                   "shard.global_offset[%u]: offset + extent exceeds 2^64-1, so the box "
                   "cannot lie inside the global shape", k);
        HR_FAIL_IF(end > s->global_shape[k], err, HURRAY_E_CONSTRAINT,
                   hri_fieldf(f, "shard.global_offset[%u]", k),
                   "shard.global_offset[%u]: %llu + extent %llu exceeds the global extent %llu",
                   k, (unsigned long long)s->global_offset[k], (unsigned long long)shape[k],
                   (unsigned long long)s->global_shape[k]);
    }
    return HURRAY_OK;
}

int hurray_shard_check(const struct hurray_shard *s, uint8_t rank, const uint64_t *shape,
                       struct hurray_error *err) {
    HR_FAIL_IF(!s || (rank > 0 && !shape), err, HURRAY_E_ARGUMENT, "shard",
               "shard_check: NULL argument");
    HR_TRY(check_shard_rank(rank, err));
    HR_TRY(check_shard_spans(s, rank, err));
    HR_TRY(check_shard_index(s, err));
    HR_TRY(check_global_shape(s, rank, err));
    return check_shard_box(s, rank, shape, err);
}

int hurray_shard_equal(const struct hurray_shard *a, const struct hurray_shard *b,
                       uint8_t rank) {
    if (!a || !b) return a == b;
    if (rank > HURRAY_MAX_RANK) rank = HURRAY_MAX_RANK;
    if (a->shard_index != b->shard_index || a->shard_count != b->shard_count) return 0;
    if (check_shard_spans(a, rank, NULL) != HURRAY_OK ||
        check_shard_spans(b, rank, NULL) != HURRAY_OK)
        return 0;
    for (unsigned k = 0; k < rank; k++) {
        if (a->global_shape[k] != b->global_shape[k] ||
            a->global_offset[k] != b->global_offset[k])
            return 0;
    }
    return 1;
}
