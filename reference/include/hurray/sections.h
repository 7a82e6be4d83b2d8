/* Optional sections: statistics, shard, member role, unknown. docs/spec/sections.md */
#ifndef HURRAY_SECTIONS_H
#define HURRAY_SECTIONS_H

#include <stddef.h>
#include <stdint.h>
#include "hurray/export.h"
#include "hurray/limit.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

enum hurray_section_type {
    HURRAY_SECTION_QUANTIZATION = 0x01,
    HURRAY_SECTION_STATISTICS = 0x02,
    HURRAY_SECTION_SHARD = 0x03,
    HURRAY_SECTION_ROLE = 0x04
};

#define HURRAY_SECTION_MUST_UNDERSTAND 0x01u

#define HURRAY_STATS_HAS_MIN_MAX 0x01u
#define HURRAY_STATS_HAS_NAN_COUNT 0x02u

enum hurray_member_role {
    HURRAY_ROLE_BASE = 0x01,
    HURRAY_ROLE_CORRECTION = 0x02
};

struct hurray_statistics {
    uint8_t flags;
    double min;
    double max;
    uint64_t nan_count;
};

/* global_shape and global_offset are spans of the shape's rank: in a
 * descriptor they point into its storage block (hurray_descriptor_set_shard
 * copies them there); in a shard a caller builds they borrow its arrays. Both
 * must be non-NULL when rank > 0 (ARGUMENT otherwise). */
struct hurray_shard {
    uint32_t shard_index;
    uint32_t shard_count;
    const uint64_t *global_shape;
    const uint64_t *global_offset;
};

/* A section this build does not interpret, carried verbatim (HR-SECT-3).
 * `data` is borrowed from the owning descriptor or the caller. */
struct hurray_opaque_section {
    uint8_t type;
    uint8_t flags;
    const uint8_t *data;
    uint32_t length;
};

/* hurray_tag_kind of a section-type byte. */
HURRAY_API int hurray_section_type_kind(uint8_t type);
/* "quantization", "statistics", "shard", "member_role"; NULL if not named. */
HURRAY_API const char *hurray_section_name(uint8_t type);
HURRAY_API const char *hurray_member_role_name(uint8_t role); /* "base", "correction" */

/* Statistics: context-free checks (flags, absent fields zero, NaN, min <= max);
 * the nan_count <= N check needs the element count: pass UINT64_MAX if unknown. */
HURRAY_API HURRAY_NODISCARD int hurray_statistics_check(const struct hurray_statistics *s,
                                                        uint64_t element_count,
                                                        struct hurray_error *err);
/* Shard against a shape of `rank` extents (HR-SHARD-1). */
HURRAY_API HURRAY_NODISCARD int hurray_shard_check(const struct hurray_shard *s, uint8_t rank,
                                                   const uint64_t *shape,
                                                   struct hurray_error *err);
HURRAY_API HURRAY_NODISCARD int hurray_member_role_check(uint8_t role, struct hurray_error *err);

HURRAY_API int hurray_statistics_equal(const struct hurray_statistics *a,
                                       const struct hurray_statistics *b);
HURRAY_API int hurray_shard_equal(const struct hurray_shard *a, const struct hurray_shard *b,
                                  uint8_t rank);

HURRAY_EXTERN_C_END

#endif
