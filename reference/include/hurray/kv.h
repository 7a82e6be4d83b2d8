/* Key-value metadata: values, the canonical section encoder and the strict
 * decoder. docs/spec/kv.md
 *
 * Ownership: a caller building a map for the writer owns every array and byte
 * string it points to (the encoder only reads them). A decoded map
 * (struct hurray_kv) owns one block holding its entries, list elements, keys
 * and strings; hurray_kv_reset frees it. Keys of a decoded map are
 * NUL-terminated (a name never contains U+0000); string and bytes values are
 * (data, length) and may contain NUL. */
#ifndef HURRAY_KV_H
#define HURRAY_KV_H

#include <stddef.h>
#include <stdint.h>
#include "hurray/alloc.h"
#include "hurray/descriptor.h"
#include "hurray/export.h"
#include "hurray/status.h"

HURRAY_EXTERN_C_BEGIN

/* Value tags (kv.md § Value types, HR-KV-2). */
enum hurray_kv_type {
    HURRAY_KV_BOOL = 0x01,
    HURRAY_KV_INT64 = 0x02,
    HURRAY_KV_UINT64 = 0x03,
    HURRAY_KV_FLOAT64 = 0x04,
    HURRAY_KV_STRING = 0x05,
    HURRAY_KV_BYTES = 0x06,
    HURRAY_KV_LIST = 0x07
};

/* Format maximum of list nesting for writers (max_composite_depth's). */
#define HURRAY_KV_MAX_DEPTH_FORMAT 64u

struct hurray_kv_value {
    uint8_t type; /* enum hurray_kv_type */
    union {
        uint8_t boolean; /* 0 or 1 */
        int64_t i64;
        uint64_t u64;
        double f64; /* compared and encoded by bit pattern */
        /* string (valid UTF-8) and bytes; data may be NULL when len == 0 */
        struct {
            const uint8_t *data;
            uint64_t len;
        } bytes;
        /* list: items may be NULL when count == 0 */
        struct {
            const struct hurray_kv_value *items;
            uint64_t count;
        } list;
    } v;
};

struct hurray_kv_entry {
    const char *key; /* UTF-8 name (kv.md HR-KV-6), key_len bytes */
    uint32_t key_len;
    struct hurray_kv_value value;
};

/* A decoded map: entries sorted by key bytes (HR-KV-7). Initialise with
 * hurray_kv_init (or zero it); reset frees what it owns. */
struct hurray_kv {
    const struct hurray_kv_entry *entries;
    size_t count;
    /* private: the block the entries, elements and bytes live in */
    void *storage;
    size_t storage_len;
    const struct hurray_allocator *allocator;
};

HURRAY_API void hurray_kv_init(struct hurray_kv *kv);
/* Frees what `kv` owns and re-initialises it. NULL-tolerant. */
HURRAY_API void hurray_kv_reset(struct hurray_kv *kv);
/* Moves what `src` owns into `dst` (reset first); `src` is left initialised.
 * dst == src does nothing. NULL-tolerant. */
HURRAY_API void hurray_kv_move(struct hurray_kv *dst, struct hurray_kv *src);

/* "bool", "int64", "uint64", "float64", "string", "bytes", "list"; NULL otherwise. */
HURRAY_API const char *hurray_kv_type_name(uint8_t type);

/* Canonical length of the section for `entries` (any order; HR-KV-10).
 * `allocator` (NULL = default) serves the temporary sort. Refuses exactly what
 * hurray_kv_encode refuses. */
HURRAY_API HURRAY_NODISCARD int hurray_kv_encoded_len(const struct hurray_kv_entry *entries,
                                                      size_t count,
                                                      const struct hurray_allocator *allocator,
                                                      uint64_t *len, struct hurray_error *err);
/* Writes the canonical section (entries sorted by key). ARGUMENT if cap is too
 * small; DUPLICATE / CONSTRAINT / LIMIT / RANGE / UNSUPPORTED / ARGUMENT for a
 * map that would not decode (nothing useful written). */
HURRAY_API HURRAY_NODISCARD int hurray_kv_encode(const struct hurray_kv_entry *entries,
                                                 size_t count,
                                                 const struct hurray_allocator *allocator,
                                                 uint8_t *dst, size_t cap, size_t *written,
                                                 struct hurray_error *err);
/* Strict decode (kv.md § Decoding order) of a section of exactly `len` bytes:
 * a read past len is TRUNCATED, bytes left over are LENGTH. Limits and the
 * allocator come from `opt` (NULL: defaults). `out` must be initialised; on
 * success it owns the map, on failure it is left reset. */
HURRAY_API HURRAY_NODISCARD int hurray_kv_decode(const uint8_t *src, size_t len,
                                                 const struct hurray_decode_options *opt,
                                                 struct hurray_kv *out, struct hurray_error *err);
/* Called by hurray_kv_decode_each once per entry, in section (key) order: `entry`
 * and everything it points to are valid during the call only. `index` counts from 0;
 * `count` is the section's entry_count. Return HURRAY_OK to go on; any other status
 * stops the walk and is what hurray_kv_decode_each returns (err as the callback left it). */
typedef int (*hurray_kv_entry_fn)(void *ctx, const struct hurray_kv_entry *entry, size_t index,
                                  size_t count);
/* hurray_kv_decode, handing the entries over one at a time instead of building the map
 * (kv.md § Decoding one entry at a time): the whole section is validated first, exactly
 * as hurray_kv_decode validates it (same statuses, fields, offsets and messages), and
 * nothing is handed over unless it is valid; then each entry is decoded into a scratch
 * block sized for that entry alone (opt->allocator) and passed to `fn`. The memory it
 * holds is one entry's, never the map's. */
HURRAY_API HURRAY_NODISCARD int hurray_kv_decode_each(const uint8_t *src, size_t len,
                                                      const struct hurray_decode_options *opt,
                                                      hurray_kv_entry_fn fn, void *ctx,
                                                      struct hurray_error *err);
/* Index of `key` in a decoded (sorted) map, or -1. */
HURRAY_API ptrdiff_t hurray_kv_find(const struct hurray_kv *kv, const char *key, size_t key_len);
/* 1 when equal in the sense of HR-KV-11 (floats by bits), else 0. */
HURRAY_API int hurray_kv_value_equal(const struct hurray_kv_value *a,
                                     const struct hurray_kv_value *b);
/* 1 when both arrays hold the same entries in the same order: equal keys, values equal as
 * hurray_kv_value_equal says. A decoded map is in key order (kv.md HR-KV-7), so for two
 * decoded maps this is map equality; sort an array you built before comparing it. */
HURRAY_API int hurray_kv_entries_equal(const struct hurray_kv_entry *a, size_t a_count,
                                       const struct hurray_kv_entry *b, size_t b_count);

HURRAY_EXTERN_C_END

#endif
