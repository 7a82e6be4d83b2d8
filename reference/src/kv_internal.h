/* What kv.c offers file.c: the UTF-8 and name rules (kv.md HR-KV-6) and the
 * section decoder with a caller-chosen short status. Never installed. */
#ifndef HURRAY_KV_INTERNAL_H
#define HURRAY_KV_INTERNAL_H

#include "internal.h"

/* 1 when s[0..n) is well-formed UTF-8 (RFC 3629); with allow_nul 0, U+0000
 * makes it invalid too. */
int hri_utf8_valid(const uint8_t *s, size_t n, int allow_nul);

/* HR-KV-6: a name is 1..max_bytes bytes (LIMIT above; CONSTRAINT when
 * empty), valid UTF-8 without U+0000 (CONSTRAINT). `what` names the field
 * ("index[3].name"); `offset` is the input offset for the record, or
 * UINT64_MAX when there is none. */
int hri_name_check(const uint8_t *s, uint64_t n, uint64_t max_bytes, const char *what,
                   uint64_t offset, struct hurray_error *err);

/* hurray_kv_decode with the short status (TRUNCATED standalone, LENGTH when
 * the section's length was declared by a file header) and `base`, the
 * absolute offset of src[0] for error records. */
int hri_kv_decode_section(const uint8_t *src, size_t len, const struct hurray_limits *limits,
                          const struct hurray_allocator *allocator, int short_code,
                          uint64_t base, struct hurray_kv *out, struct hurray_error *err);

/* hurray_kv_decode_each with the same short status and `base`; *count (may be NULL)
 * receives the section's entry_count once the first pass has validated it (0 before). */
int hri_kv_decode_section_each(const uint8_t *src, size_t len,
                               const struct hurray_limits *limits,
                               const struct hurray_allocator *allocator, int short_code,
                               uint64_t base, hurray_kv_entry_fn fn, void *ctx, size_t *count,
                               struct hurray_error *err);

#endif
