/* Caller-adjustable limits and format constants. docs/spec/errors-and-limits.md */
#ifndef HURRAY_LIMIT_H
#define HURRAY_LIMIT_H

#include <stdint.h>
#include "hurray/export.h"

HURRAY_EXTERN_C_BEGIN

#define HURRAY_MAX_RANK 64                 /* format maximum (memory-layout.md § Shape) */
#define HURRAY_MAX_BUFFERS 255             /* buffer_count is a u8 */
#define HURRAY_MAX_SECTIONS 255            /* section_count is a u8 */
#define HURRAY_DYNAMIC_DIM UINT64_MAX      /* wire sentinel of a dynamic extent */
#define HURRAY_MAX_EXTENT INT64_MAX        /* largest resolved extent */
#define HURRAY_MIN_BUFFER_ALIGNMENT 64u
#define HURRAY_PAGE_ALIGNMENT 4096u
#define HURRAY_MAX_ALIGNMENT_LOG2 12u
#define HURRAY_MAX_DESCRIPTOR_BYTES_FORMAT (UINT32_MAX - 7u)
#define HURRAY_MAX_COMPOSITE_DEPTH_FORMAT 64u

#define HURRAY_DEFAULT_MAX_DESCRIPTOR_BYTES (1u << 20)
#define HURRAY_DEFAULT_MAX_RANK 64u
#define HURRAY_DEFAULT_MAX_BUFFER_BYTES (UINT64_C(1) << 34)
#define HURRAY_DEFAULT_MAX_COMPOSITE_DEPTH 16u
#define HURRAY_DEFAULT_MAX_COMPOSITE_MEMBERS 65536u
#define HURRAY_DEFAULT_MAX_KV_ENTRIES 65536u
#define HURRAY_DEFAULT_MAX_KV_BYTES (UINT64_C(64) << 20)
#define HURRAY_DEFAULT_MAX_NAME_BYTES 1024u
#define HURRAY_DEFAULT_MAX_FILE_TENSORS (1u << 20)
/* errors-and-limits.md HR-LIMIT-2: bytes of alignment padding the items a stream
 * reader yielded that are still alive (not yet hurray_item_destroy'ed), and the item
 * it is reading, may need beyond the bytes of their buffers */
#define HURRAY_DEFAULT_MAX_ALIGNMENT_SLACK (UINT64_C(1) << 20)

struct hurray_limits {
    uint64_t max_descriptor_bytes;
    uint64_t max_buffer_bytes;
    uint32_t max_rank;
    uint32_t max_composite_depth;
    uint64_t max_composite_members;
    uint64_t max_kv_entries;
    uint64_t max_kv_bytes;
    uint32_t max_name_bytes;
    uint64_t max_file_tensors;
    uint64_t max_alignment_slack; /* stream readers only (HR-LIMIT-2) */
};

/* Fills every field with its spec default. */
HURRAY_API void hurray_limits_default(struct hurray_limits *out);
/* Clamps every field to its format maximum (a limit above it means the maximum). */
HURRAY_API void hurray_limits_clamp(struct hurray_limits *lim);

HURRAY_EXTERN_C_END

#endif
