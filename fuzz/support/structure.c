/* Structure-aware mutation of Hurray descriptors (structure.h). The wire layout it parses is
 * descriptor.md § Layout of the bytes: a 32-byte header (magic, version, encoded_len at 8,
 * dtype/device/memory class/layout/rank/buffer_count/section_count at 16..22, byte_offset at
 * 24), rank u64 shape words, buffer_count 16-byte buffer entries (size u64, alignment_log2,
 * sync, 6 reserved), the layout parameters (u32 length, 4 reserved, bytes, padding to 8) and
 * the sections. Which tags are named is asked of libhurray (hurray_dtype_info,
 * hurray_layout_tag_kind, ...): the tables live once, in the library. */
#include <string.h>

#include "hurray/hurray.h"
#include "structure.h"

/* libFuzzer's byte-level mutator; absent (NULL) in the replay and AFL++ builds, where no
 * custom mutator is ever called. */
__attribute__((weak)) size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

static uint64_t next(uint64_t *s) { /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p) {
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put64(uint8_t *p, uint64_t v) {
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* A tag byte the library names for the field, or a neighbour of one. */
enum field { F_DTYPE, F_DEVICE, F_MEMCLASS, F_LAYOUT };

static int named(enum field f, uint8_t t) {
    switch (f) {
    case F_DTYPE: return hurray_dtype_info(t) != NULL;
    case F_DEVICE: return hurray_device_tag_kind(t) == HURRAY_TAG_NAMED;
    case F_MEMCLASS: return hurray_memory_class_tag_kind(t) == HURRAY_TAG_NAMED;
    case F_LAYOUT: return hurray_layout_tag_kind(t) == HURRAY_TAG_NAMED;
    }
    return 0;
}

static uint8_t pick_tag(enum field f, uint64_t *rng) {
    static uint8_t tags[4][256]; /* the named tags of each field, asked once */
    static size_t count[4];
    static int ready;
    if (!ready) {
        for (int k = F_DTYPE; k <= F_LAYOUT; k++)
            for (unsigned t = 0; t < 256; t++)
                if (named((enum field)k, (uint8_t)t)) tags[k][count[k]++] = (uint8_t)t;
        ready = 1;
    }
    size_t n = count[f];
    uint64_t r = next(rng);
    if (n == 0 || r % 8 == 0) return (uint8_t)(r >> 8); /* any byte: reserved, private, invalid */
    uint8_t t = tags[f][(r >> 8) % n];
    if (r % 8 == 1) t = (uint8_t)(t + 1); /* just past a named one */
    return t;
}

/* Sizes and counts at the edges the decoder checks. */
static uint64_t pick_u64(uint64_t old, uint64_t *rng) {
    static const uint64_t edge[] = {0, 1, 2, 3, 4, 7, 8, 15, 16, 63, 64, 255, 256, 4095, 4096,
                                    65535, 65536, UINT64_C(1) << 20, (UINT64_C(1) << 31) - 1,
                                    UINT64_C(1) << 31, UINT32_MAX, UINT64_C(1) << 32,
                                    UINT64_C(1) << 34, (UINT64_C(1) << 34) + 1, UINT64_C(1) << 62,
                                    INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX - 1, UINT64_MAX};
    uint64_t r = next(rng);
    switch (r % 6) {
    case 0: return old + 1;
    case 1: return old - 1;
    case 2: return old * 2;
    case 3: return old / 2;
    default: return edge[(r >> 8) % (sizeof edge / sizeof edge[0])];
    }
}

/* The parsed positions of one descriptor record in the input. */
struct record {
    size_t at;     /* offset of the magic */
    size_t len;    /* bytes of the record present in the input, at most encoded_len */
    uint8_t rank, buffers;
    size_t shape, table, params; /* offsets from `at`; 0 if beyond the input */
};

static int parse(const uint8_t *data, size_t size, size_t at, struct record *r) {
    if (size - at < 32) return 0;
    const uint8_t *p = data + at;
    r->at = at;
    r->len = get32(p + 8);
    if (r->len > size - at || r->len < 32) r->len = size - at;
    r->rank = p[20];
    r->buffers = p[21];
    r->shape = 32;
    r->table = 32 + (size_t)8 * r->rank;
    r->params = r->table + (size_t)16 * r->buffers;
    if (r->table > r->len) r->table = 0;
    if (!r->table || r->params + 8 > r->len) r->params = 0;
    return 1;
}

/* Moves data[from, size) to `to` (inside max_size), returning the new size or 0. */
static size_t shift(uint8_t *data, size_t size, size_t max_size, size_t from, size_t to) {
    if (to > from && size + (to - from) > max_size) return 0;
    memmove(data + to, data + from, size - from);
    return to > from ? size + (to - from) : size - (from - to);
}

size_t hurray_fuzz_mutate_descriptor(uint8_t *data, size_t size, size_t max_size,
                                     uint64_t *rng, int resize) {
    size_t found[16], n = 0;
    /* the first 16 "HRYD" in order; memchr skips to each 'H' (a byte-by-byte memcmp was a
     * twentieth of fuzz_file's time on 16 KiB inputs) */
    for (size_t i = 0; i + 4 <= size && n < 16; i++) {
        const uint8_t *h = memchr(data + i, 'H', size - 3 - i);
        if (!h) break;
        i = (size_t)(h - data);
        if (memcmp(h, "HRYD", 4) == 0) found[n++] = i;
    }
    if (n == 0) return 0;
    struct record r;
    if (!parse(data, size, found[next(rng) % n], &r)) return 0;
    uint8_t *p = data + r.at;
    uint64_t choice = next(rng) % (resize ? 14 : 11);
    switch (choice) {
    case 0: p[16] = pick_tag(F_DTYPE, rng); break;
    case 1: p[17] = pick_tag(F_DEVICE, rng); p[18] = pick_tag(F_MEMCLASS, rng); break;
    case 2: p[19] = pick_tag(F_LAYOUT, rng); break;
    case 3: put64(p + 24, pick_u64(get64(p + 24), rng)); break; /* byte_offset */
    case 4: /* one shape word */
        if (!r.rank || !r.table) return 0;
        {
            uint8_t *w = p + r.shape + 8 * (next(rng) % r.rank);
            put64(w, pick_u64(get64(w), rng));
        }
        break;
    case 5: /* one buffer's size */
    case 6: /* one buffer's alignment and sync */
        if (!r.buffers || !r.params) return 0;
        {
            uint8_t *b = p + r.table + 16 * (next(rng) % r.buffers);
            if (choice == 5) put64(b, pick_u64(get64(b), rng));
            else {
                uint64_t v = next(rng);
                b[8] = (uint8_t)(v % 16);
                b[9] = (uint8_t)(1 + (v >> 8) % 4); /* 1..3 named, 4 not */
            }
        }
        break;
    case 7: p[4] = (uint8_t)(next(rng) % 3); p[5] = (uint8_t)(next(rng) % 3); break; /* version */
    case 8: { /* one reserved byte non-zero: the header's, or a buffer entry's */
        static const uint8_t res[] = {6, 7, 12, 13, 14, 15, 23};
        p[res[next(rng) % sizeof res]] ^= (uint8_t)(1 + next(rng) % 255);
        break;
    }
    case 9: /* the layout parameters' length */
        if (!r.params) return 0;
        put32(p + r.params, (uint32_t)pick_u64(get32(p + r.params), rng));
        break;
    case 10: /* encoded_len: repaired to the record as parsed, or an edge */
        put32(p + 8, next(rng) % 2 ? (uint32_t)r.len : (uint32_t)pick_u64(get32(p + 8), rng));
        break;
    case 11: /* one more shape word (value 1), rank + 1 */
    case 12: { /* one fewer (the last), rank - 1 */
        if (!r.table || r.len != get32(p + 8)) return 0;
        size_t end = r.at + r.shape + 8 * (size_t)r.rank, got;
        if (choice == 11) {
            if (r.rank == 255 || !(got = shift(data, size, max_size, end, end + 8))) return 0;
            put64(data + end, 1);
            p[20]++;
            put32(p + 8, (uint32_t)(r.len + 8));
        } else {
            if (!r.rank || !(got = shift(data, size, max_size, end, end - 8))) return 0;
            p[20]--;
            put32(p + 8, (uint32_t)(r.len - 8));
        }
        return got;
    }
    case 13: { /* one more buffer entry (a copy of the last, or 64 bytes at 2^6) */
        if (!r.params || r.len != get32(p + 8) || r.buffers == 255) return 0;
        size_t end = r.at + r.params, got;
        if (!(got = shift(data, size, max_size, end, end + 16))) return 0;
        if (r.buffers) memcpy(data + end, data + end - 16, 16);
        else {
            memset(data + end, 0, 16);
            put64(data + end, 64);
            data[end + 8] = 6;
            data[end + 9] = 1;
        }
        p[21]++;
        put32(p + 8, (uint32_t)(r.len + 16));
        return got;
    }
    }
    return size;
}

size_t hurray_fuzz_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed,
                          int resize) {
    uint64_t rng = (uint64_t)seed * UINT64_C(0x9E3779B97F4A7C15) + 1;
    if (next(&rng) % 3 != 0) {
        size_t got = hurray_fuzz_mutate_descriptor(data, size, max_size, &rng, resize);
        if (got) return got;
    }
    return LLVMFuzzerMutate ? LLVMFuzzerMutate(data, size, max_size) : size;
}
