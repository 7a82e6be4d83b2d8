/* The HRRYFILE container: validating reader and canonical writer.
 * docs/spec/file-container.md
 *
 * Reading is index-first (§ Reading, HR-FILE-8 … 13) and a thin driver over
 * the one descriptor decoder and the one KV decoder (STYLE 6). Opening reads
 * the header, the padding before the data, the index (as it is parsed, never
 * far ahead of the parser) and the KV section when asked, by positioned
 * reads, and follows § Decoding order step by step; the data region's gaps
 * are checked at open by batched positioned reads of only the bytes around
 * them (deferred, but reported in decoding order). Nothing is read through a
 * mapping to validate it. Loading then reads (copy) or maps copy-on-write
 * (mmap) only the byte ranges of the items asked for, each into a refcounted
 * block the item holds, so an item pins nothing else and outlives the file.
 * Every count is bounded by the bytes present or a limit before it sizes an
 * allocation.
 *
 * Writing plans the whole file first (flattened entries with generated
 * member names, descriptor lengths, canonical offsets), validating
 * everything, and only then emits bytes: a list of byte ranges copied into
 * memory or written with a few vectored writes, so a refused file writes
 * nothing. Every system call goes through os.h. */
#include "item_internal.h"
#include "kv_internal.h"
#include "os.h"

#include <stdio.h>
#include <stdlib.h>

#include "hurray/composite.h"

#if !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
#define HRI_REFCOUNT atomic_size_t
#define HRI_REF_INIT(p, v) atomic_init((p), (v))
#define HRI_REF_INC(p) atomic_fetch_add((p), 1)
#define HRI_REF_DEC(p) atomic_fetch_sub((p), 1) /* returns the old value */
#else
#define HRI_REFCOUNT size_t
#define HRI_REF_INIT(p, v) (*(p) = (v))
#define HRI_REF_INC(p) ((*(p))++)
#define HRI_REF_DEC(p) ((*(p))--)
#endif

/* Header field offsets (§ Header). */
enum {
    OFF_VERSION = 8,
    OFF_RESERVED = 12,
    OFF_INDEX = 16,
    OFF_INDEX_LENGTH = 24,
    OFF_KV = 32,
    OFF_KV_LENGTH = 40,
    OFF_DATA = 48,
    OFF_DATA_LENGTH = 56,
    ENTRY_HEADER_BYTES = 8,
    DATA_PAD = 64
};

#define PAGE ((uint64_t)HURRAY_PAGE_ALIGNMENT)

/* Reading (HR-FILE-9): the first read, and the least the index is read ahead. */
#define META_FIRST_READ ((uint64_t)64 << 10)
/* Gap checks (§ What is read, and when): gaps within GAP_NEAR bytes of each
 * other are read together, at most GAP_WINDOW bytes and GAP_BATCH gaps at once. */
#define GAP_NEAR ((uint64_t)HURRAY_PAGE_ALIGNMENT)
#define GAP_WINDOW ((uint64_t)64 << 10)
#define GAP_BATCH 1024u
/* Loading: copy mode reads items of at most LOAD_SMALL bytes lying within
 * LOAD_NEAR of each other together through a LOAD_SCRATCH-byte buffer; mmap
 * mode maps items within MAP_MERGE of each other with one mapping (HR-FILE-8). */
#define LOAD_SMALL ((uint64_t)64 << 10)
#define LOAD_NEAR ((uint64_t)HURRAY_PAGE_ALIGNMENT)
#define LOAD_SCRATCH ((uint64_t)1 << 20)
#define MAP_MERGE ((uint64_t)1 << 20)

static uint64_t round_up(uint64_t v, uint64_t a) { return v % a ? v + (a - v % a) : v; }
/* round_up without wrapping: 1 on overflow. */
static int round_up_checked(uint64_t v, uint64_t a, uint64_t *out) {
    uint64_t r = v % a;
    if (r == 0) { *out = v; return 0; }
    return hri_add_u64(v, a - r, out);
}

/* Where a buffer goes: the next multiple of max(64, declared) (§ Buffer placement). */
static uint64_t placement_alignment(uint8_t alignment_log2) {
    uint64_t a = (uint64_t)1 << alignment_log2;
    return a > HURRAY_MIN_BUFFER_ALIGNMENT ? a : HURRAY_MIN_BUFFER_ALIGNMENT;
}

/* A page of zeros: what padding is compared with, and what the writer emits as padding. */
static const uint8_t zero_page[HURRAY_PAGE_ALIGNMENT];

/* 1 when p[0..n) are all zero, else 0 and *first = the offset of the first non-zero byte.
 * Compared a page at a time against zero_page (memcmp: the C library's vectorised loop);
 * only a page that differs is scanned byte by byte for the offset the error reports. */
static int is_zero(const uint8_t *p, uint64_t n, uint64_t *first) {
    for (uint64_t at = 0; at < n; at += sizeof zero_page) {
        size_t len = n - at < sizeof zero_page ? (size_t)(n - at) : sizeof zero_page;
        if (memcmp(p + at, zero_page, len) == 0) continue;
        for (size_t k = 0;; k++)
            if (p[at + k] != 0) { *first = at + k; return 0; }
    }
    return 1;
}

/* Prefixes a record a sub-decoder filled ("shape[2]" -> "index[3]/shape[2]")
 * and makes its offset absolute. */
static int in_region(int st, const char *prefix, uint64_t base, struct hurray_error *err) {
    if (st == HURRAY_OK || !err) return st;
    char f[HURRAY_ERROR_FIELD_MAX];
    hri_fieldf(f, "%s/%s", prefix, err->field);
    memcpy(err->field, f, sizeof f);
    if (err->has_offset) err->offset += base;
    return st;
}

/* Puts `prefix` before a failure's message (truncated to the record's size),
 * so that a fault deep in a descriptor also names the file and the entry it
 * is in. Only on failure: nothing is formatted on a success path. */
static int prefix_message(int st, struct hurray_error *err, const char *fmt, ...)
    HRI_PRINTF(3, 4);
static int prefix_message(int st, struct hurray_error *err, const char *fmt, ...) {
    if (st == HURRAY_OK || !err) return st;
    char pre[HURRAY_ERROR_MESSAGE_MAX], msg[HURRAY_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    if (n < 0) return st;
    size_t pl = strlen(pre), ml = 0;
    while (ml < sizeof msg - 1 && err->message[ml]) ml++;
    memcpy(msg, err->message, ml);
    if (ml > sizeof msg - 1 - pl) ml = sizeof msg - 1 - pl; /* pl < sizeof msg */
    memcpy(err->message, pre, pl);
    memcpy(err->message + pl, msg, ml);
    err->message[pl + ml] = '\0';
    return st;
}

/* n elements of `size` bytes, not initialised (NULL when n is 0). */
static int alloc_array_raw(const struct hurray_allocator *a, size_t n, size_t size, void **out,
                           struct hurray_error *err) {
    *out = NULL;
    if (n == 0) return HURRAY_OK;
    HR_FAIL_IF(n > SIZE_MAX / size, err, HURRAY_E_NOMEM, "file", "file: table too large");
    *out = hri_alloc(a, n * size);
    HR_FAIL_IF(!*out, err, HURRAY_E_NOMEM, "file", "file: out of memory (%zu bytes)", n * size);
    return HURRAY_OK;
}

/* The same, zeroed. */
static int alloc_array(const struct hurray_allocator *a, size_t n, size_t size, void **out,
                       struct hurray_error *err) {
    HR_TRY(alloc_array_raw(a, n, size, out, err));
    if (*out) memset(*out, 0, n * size);
    return HURRAY_OK;
}

/* ==== data blocks ============================================================
 * What a loaded item's bytes live in, refcounted: the item (or, for a shared
 * mapping, each item over it) holds one reference, and the last one frees the
 * block. One allocation holds the record and, for a copy or an image, the
 * bytes after it. */

enum { BLOCK_COPY, BLOCK_MAP };

struct data_block {
    HRI_REFCOUNT refs;
    const struct hurray_allocator *allocator;
    size_t alloc_len;           /* of the allocation starting at this record */
    struct hri_os_mapping map;  /* BLOCK_MAP */
    int kind;
};

static void block_ref(struct data_block *b) { HRI_REF_INC(&b->refs); }

/* owner_release of loaded items; the last reference frees the bytes. */
static void block_unref(void *owner) {
    struct data_block *b = owner;
    if (!b || HRI_REF_DEC(&b->refs) != 1) return;
    if (b->kind == BLOCK_MAP) hri_os_unmap(&b->map);
    hri_free(b->allocator, b, b->alloc_len);
}

/* A block with room for `payload` bytes starting at *bytes, an address that
 * is `phase` modulo `align` (align a power of two <= PAGE, phase < align). */
static int block_new(const struct hurray_allocator *a, int kind, uint64_t payload, uint64_t align,
                     uint64_t phase, struct data_block **out, uint8_t **bytes,
                     struct hurray_error *err) {
    size_t head = sizeof(struct data_block);
    HR_FAIL_IF(payload > SIZE_MAX - head - (size_t)PAGE, err, HURRAY_E_NOMEM, "file",
               "file: %llu bytes exceed the address space", (unsigned long long)payload);
    size_t len = head + (size_t)(align - 1 + payload);
    struct data_block *b = hri_alloc(a, len);
    HR_FAIL_IF(!b, err, HURRAY_E_NOMEM, "file", "file: cannot allocate %llu bytes",
               (unsigned long long)payload);
    memset(b, 0, head);
    HRI_REF_INIT(&b->refs, 1);
    b->allocator = a;
    b->alloc_len = len;
    b->kind = kind;
    /* the first address after the record that is `phase` modulo `align` */
    uintptr_t start = (uintptr_t)b + head;
    *bytes = (uint8_t *)(start + (((uintptr_t)phase - start) & (uintptr_t)(align - 1)));
    *out = b;
    return HURRAY_OK;
}

/* ==== header (steps 1-3) ===================================================== */

struct file_header {
    uint64_t index_offset, index_length, kv_offset, kv_length, data_offset, data_length;
    uint64_t meta_end; /* end of the index or of the KV section */
    uint64_t end;      /* data_offset + data_length */
};

static int header_magic_version(const uint8_t *src, struct hurray_error *err) {
    HR_FAIL_IF(memcmp(src, HURRAY_FILE_MAGIC, 8) != 0, err, HURRAY_E_BAD_MAGIC, "header.magic",
               "header.magic: not \"HRRYFILE\" (HR-FILE-1)");
    uint16_t major = hri_load_u16le(src + OFF_VERSION);
    if (major != HURRAY_FILE_VERSION_MAJOR)
        return hri_fail_at(err, HURRAY_E_VERSION, OFF_VERSION, "header.version_major",
                           "header.version_major: %u is not supported; this reader reads %u "
                           "(HR-FILE-1)",
                           (unsigned)major, HURRAY_FILE_VERSION_MAJOR);
    for (unsigned k = 0; k < 4; k++)
        if (src[OFF_RESERVED + k] != 0)
            return hri_fail_at(err, HURRAY_E_RESERVED_NONZERO, OFF_RESERVED + k,
                               "header.reserved", "header.reserved: byte %u is 0x%02X, must be "
                               "zero (HR-FILE-1)", OFF_RESERVED + k, src[OFF_RESERVED + k]);
    return HURRAY_OK;
}

static int header_index(struct file_header *h, struct hurray_error *err) {
    if (h->index_offset != HURRAY_FILE_HEADER_BYTES)
        return hri_fail_at(err, HURRAY_E_OFFSET, OFF_INDEX, "header.index_offset",
                           "header.index_offset: %llu, the index starts at 64 (HR-FILE-4)",
                           (unsigned long long)h->index_offset);
    if (h->index_length < 8 || h->index_length % 8 != 0)
        return hri_fail_at(err, HURRAY_E_LENGTH, OFF_INDEX_LENGTH, "header.index_length",
                           "header.index_length: %llu is below 8 or not a multiple of 8 "
                           "(HR-FILE-4)",
                           (unsigned long long)h->index_length);
    if (hri_add_u64(h->index_offset, h->index_length, &h->meta_end))
        return hri_fail_at(err, HURRAY_E_OVERFLOW, OFF_INDEX_LENGTH, "header.index_length",
                           "header.index_length: the index end overflows");
    return HURRAY_OK;
}

static int header_kv(struct file_header *h, const struct hurray_limits *lim,
                     struct hurray_error *err) {
    if (h->kv_length == 0) {
        if (h->kv_offset == 0) return HURRAY_OK;
        return hri_fail_at(err, HURRAY_E_OFFSET, OFF_KV, "header.kv_offset",
                           "header.kv_offset: %llu with kv_length 0; no KV section is (0, 0) "
                           "(HR-FILE-4)",
                           (unsigned long long)h->kv_offset);
    }
    if (h->kv_offset != h->meta_end)
        return hri_fail_at(err, HURRAY_E_OFFSET, OFF_KV, "header.kv_offset",
                           "header.kv_offset: %llu, the KV section starts where the index ends "
                           "(%llu) (HR-FILE-4)",
                           (unsigned long long)h->kv_offset, (unsigned long long)h->meta_end);
    if (h->kv_length < 8 || h->kv_length % 8 != 0)
        return hri_fail_at(err, HURRAY_E_LENGTH, OFF_KV_LENGTH, "header.kv_length",
                           "header.kv_length: %llu is below 8 or not a multiple of 8 (HR-FILE-4)",
                           (unsigned long long)h->kv_length);
    if (h->kv_length > lim->max_kv_bytes)
        return hri_fail_at(err, HURRAY_E_LIMIT, OFF_KV_LENGTH, "header.kv_length",
                           "header.kv_length: %llu exceeds max_kv_bytes %llu (HR-FILE-4)",
                           (unsigned long long)h->kv_length,
                           (unsigned long long)lim->max_kv_bytes);
    if (hri_add_u64(h->kv_offset, h->kv_length, &h->meta_end))
        return hri_fail_at(err, HURRAY_E_OVERFLOW, OFF_KV_LENGTH, "header.kv_length",
                           "header.kv_length: the KV end overflows");
    return HURRAY_OK;
}

static int header_data(struct file_header *h, struct hurray_error *err) {
    uint64_t want = 0;
    if (round_up_checked(h->meta_end, PAGE, &want))
        return hri_fail_at(err, HURRAY_E_OVERFLOW, OFF_DATA, "header.data_offset",
                           "header.data_offset: the page after the metadata overflows");
    if (h->data_offset != want)
        return hri_fail_at(err, HURRAY_E_OFFSET, OFF_DATA, "header.data_offset",
                           "header.data_offset: %llu, the data starts at the first multiple of "
                           "4096 after the metadata (%llu) (HR-FILE-4)",
                           (unsigned long long)h->data_offset, (unsigned long long)want);
    if (h->data_length % DATA_PAD != 0)
        return hri_fail_at(err, HURRAY_E_LENGTH, OFF_DATA_LENGTH, "header.data_length",
                           "header.data_length: %llu is not a multiple of 64 (HR-FILE-4)",
                           (unsigned long long)h->data_length);
    if (hri_add_u64(h->data_offset, h->data_length, &h->end))
        return hri_fail_at(err, HURRAY_E_OVERFLOW, OFF_DATA_LENGTH, "header.data_length",
                           "header.data_length: the file end overflows");
    return HURRAY_OK;
}

/* Step 3: the file ends exactly at data_offset + data_length. `path` names
 * the file in the message (NULL: an image in memory). */
static int header_size(const struct file_header *h, uint64_t size, const char *path,
                       struct hurray_error *err) {
    char who[192];
    if (path) snprintf(who, sizeof who, "file \"%.160s\"", path);
    else snprintf(who, sizeof who, "file");
    if (size < h->end)
        return hri_fail_at(err, HURRAY_E_TRUNCATED, size, "file",
                           "%s: %llu bytes, the header says %llu (HR-FILE-4)", who,
                           (unsigned long long)size, (unsigned long long)h->end);
    if (size > h->end)
        return hri_fail_at(err, HURRAY_E_LENGTH, h->end, "file",
                           "%s: %llu trailing bytes after data_offset + data_length "
                           "(HR-FILE-4)",
                           who, (unsigned long long)(size - h->end));
    return HURRAY_OK;
}

/* Steps 1-3 over the first min(size, 64) bytes of the file. */
static int parse_header(const uint8_t *src, uint64_t size, const char *path,
                        const struct hurray_limits *lim, struct file_header *h,
                        struct hurray_error *err) {
    if (size < HURRAY_FILE_HEADER_BYTES)
        return hri_fail_at(err, HURRAY_E_TRUNCATED, size, "header",
                           "header: the file%s%.160s%s has %llu bytes, the header alone is 64",
                           path ? " \"" : "", path ? path : "", path ? "\"" : "",
                           (unsigned long long)size);
    HR_TRY(header_magic_version(src, err));
    memset(h, 0, sizeof *h);
    h->index_offset = hri_load_u64le(src + OFF_INDEX);
    h->index_length = hri_load_u64le(src + OFF_INDEX_LENGTH);
    h->kv_offset = hri_load_u64le(src + OFF_KV);
    h->kv_length = hri_load_u64le(src + OFF_KV_LENGTH);
    h->data_offset = hri_load_u64le(src + OFF_DATA);
    h->data_length = hri_load_u64le(src + OFF_DATA_LENGTH);
    HR_TRY(header_index(h, err));
    HR_TRY(header_kv(h, lim, err));
    HR_TRY(header_data(h, err));
    return header_size(h, size, path, err);
}


/* ==== the file handle ========================================================== */

/* One index entry: a constant-size record (HR-FILE-13). Its name, descriptor
 * and buffer offsets stay in the metadata block: the name at
 * desc_pos - round_up(name_len, 8), the offsets at desc_pos + desc_len. */
struct entry_rec {
    const char *name; /* NUL-terminated, in the names block (after parsing) */
    uint64_t desc_pos;
    uint32_t name_len;
    uint32_t desc_len;
    uint8_t kind;
    uint8_t is_member;
    uint8_t buffer_count;
};

struct hurray_file {
    const struct hurray_allocator *allocator;
    struct hurray_limits lim;
    int mode;  /* enum hurray_file_mode */
    int parts; /* enum hurray_file_parts, ALL resolved to INDEX | KV */
    /* the source: a descriptor (open_path) or an image (open_memory) */
    hri_os_fd fd;
    char *path; /* NUL-terminated copy, for messages; NULL in memory */
    size_t path_len;
    struct data_block *image; /* open_memory: the page-aligned copy */
    const uint8_t *image_bytes;
    uint64_t size; /* measured at open */
    struct file_header h;
    /* file bytes [0, meta_have): the header and the index, read as parsed
     * (open_path), or the image itself (open_memory) */
    const uint8_t *meta;
    uint8_t *meta_buf;
    size_t meta_cap;
    uint64_t meta_have;
    struct entry_rec *entries;
    size_t count;
    char *names;
    size_t names_len;
    uint32_t *sorted; /* entry indices by name (entry_count <= 2^32 - 1) */
    uint32_t *top;    /* top-level entry indices, file order */
    size_t top_count;
    struct hurray_descriptor *scratch;
    size_t top_fail; /* first top-level tensor failing step 9, else SIZE_MAX */
    struct hurray_error top_fail_err;
    struct hurray_kv kv;
    /* HR-FILE-17: copy-mode loads report to it; NULL: none */
    int (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
};

void hurray_file_destroy(struct hurray_file *f) {
    if (!f) return;
    const struct hurray_allocator *a = f->allocator;
    hurray_kv_reset(&f->kv);
    if (f->scratch) {
        hurray_descriptor_reset(f->scratch);
        hri_free(a, f->scratch, sizeof *f->scratch);
    }
    hri_free(a, f->top, f->count * sizeof *f->top);
    hri_free(a, f->sorted, f->count * sizeof *f->sorted);
    hri_free(a, f->names, f->names_len);
    hri_free(a, f->entries, f->count * sizeof *f->entries);
    hri_free(a, f->meta_buf, f->meta_cap);
    hri_free(a, f->path, f->path_len + 1);
    (void)hri_os_close(&f->fd, NULL, NULL);
    block_unref(f->image);
    hri_free(a, f, sizeof *f);
}

static const char *file_path(const struct hurray_file *f) { return f->path ? f->path : "(memory)"; }

/* HR-FILE-12: a positioned read came back short of what the header (checked
 * against the size measured at open) promises. */
static int shrank(const struct hurray_file *f, uint64_t at, uint64_t want,
                  struct hurray_error *err) {
    return hri_fail_at(err, HURRAY_E_TRUNCATED, at, "file",
                       "file \"%.160s\": ends at byte %llu, the header promises %llu; it was "
                       "truncated after it was opened (HR-FILE-12)",
                       file_path(f), (unsigned long long)at, (unsigned long long)want);
}

/* Reads exactly n file bytes at `off` into dst (TRUNCATED if the file ends
 * first). In memory, copies from the image. */
static int read_exact(const struct hurray_file *f, uint8_t *dst, uint64_t n, uint64_t off,
                      struct hurray_error *err) {
    size_t got = 0;
    if (n == 0) return HURRAY_OK;
    if (f->image) {
        memcpy(dst, f->image_bytes + off, (size_t)n);
        return HURRAY_OK;
    }
    HR_FAIL_IF(n > SIZE_MAX, err, HURRAY_E_NOMEM, "file", "file: read too large");
    HR_TRY(hri_os_pread(f->fd, dst, (size_t)n, off, &got, f->path, err));
    if (got < n) return shrank(f, off + got, off + n, err);
    return HURRAY_OK;
}

/* Makes file bytes [0, upto) available in f->meta, reading ahead to at most
 * `limit` (the end of the region being parsed): at least META_FIRST_READ
 * bytes, at most as many as are already there, so an index that fails early
 * costs what was parsed (HR-FILE-9). */
static int meta_ensure(struct hurray_file *f, uint64_t upto, uint64_t limit,
                       struct hurray_error *err) {
    if (upto <= f->meta_have) return HURRAY_OK;
    uint64_t ahead = f->meta_have > META_FIRST_READ ? f->meta_have : META_FIRST_READ;
    uint64_t want = f->meta_have + ahead;
    if (want < upto) want = upto;
    if (want > limit) want = limit;
    if (want < upto) want = upto; /* callers never ask past the end of the file */
    HR_FAIL_IF(want > SIZE_MAX, err, HURRAY_E_NOMEM, "file", "file: metadata too large");
    if (want > f->meta_cap) {
        uint8_t *n = hri_alloc(f->allocator, (size_t)want);
        HR_FAIL_IF(!n, err, HURRAY_E_NOMEM, "file", "file: cannot allocate %llu bytes",
                   (unsigned long long)want);
        if (f->meta_have) memcpy(n, f->meta_buf, (size_t)f->meta_have);
        hri_free(f->allocator, f->meta_buf, f->meta_cap);
        f->meta_buf = n;
        f->meta_cap = (size_t)want;
        f->meta = n;
    }
    HR_TRY(read_exact(f, f->meta_buf + f->meta_have, want - f->meta_have, f->meta_have, err));
    f->meta_have = want;
    return HURRAY_OK;
}

/* A region of the file's bytes to look at: in the image or the metadata
 * already read, else read into *tmp (allocated here, *tmp_len bytes; the
 * caller frees it). */
static int region(struct hurray_file *f, uint64_t off, uint64_t n, const uint8_t **out,
                  uint8_t **tmp, size_t *tmp_len, struct hurray_error *err) {
    *tmp = NULL;
    *tmp_len = 0;
    if (f->image) {
        *out = f->image_bytes + off;
        return HURRAY_OK;
    }
    if (off + n <= f->meta_have) {
        *out = f->meta + off;
        return HURRAY_OK;
    }
    HR_FAIL_IF(n > SIZE_MAX, err, HURRAY_E_NOMEM, "file", "file: region too large");
    HR_TRY(alloc_array(f->allocator, (size_t)n, 1, (void **)tmp, err));
    *tmp_len = (size_t)n;
    int st = read_exact(f, *tmp, n, off, err);
    if (st != HURRAY_OK) {
        hri_free(f->allocator, *tmp, *tmp_len);
        *tmp = NULL;
        *tmp_len = 0;
        return st;
    }
    *out = *tmp;
    return HURRAY_OK;
}

/* ==== the index (steps 5-6) ================================================== */

struct composite_frame {
    size_t entry;   /* the head's entry index */
    uint32_t next;  /* the member expected next */
    uint32_t count; /* member_count */
};

/* A gap of the data region waiting for its check (step 5, check 5; step 6). */
struct gap {
    uint64_t start; /* data-relative */
    uint32_t len;   /* < 4096 */
    uint32_t buffer;
    size_t entry; /* SIZE_MAX: the padding after the last buffer */
};

struct gap_batch {
    struct gap g[GAP_BATCH];
    size_t n;
    uint8_t *scratch; /* min(GAP_WINDOW, data_length) bytes, made on first use */
    size_t scratch_len;
};

struct index_parse {
    struct hurray_file *f;
    struct hri_cursor c; /* over meta, absolute offsets, short status LENGTH */
    uint64_t index_end;
    struct hurray_decode_options dopt;
    uint64_t end; /* end of the previous buffer (data-relative) */
    struct composite_frame stack[HURRAY_MAX_COMPOSITE_DEPTH_FORMAT + 1];
    unsigned depth;
    uint64_t tree_total; /* members of the current top-level composite */
    struct gap_batch *gaps;
};

static const char *entry_field(char f[HURRAY_ERROR_FIELD_MAX], size_t i, const char *part) {
    return hri_fieldf(f, "index[%zu].%s", i, part);
}

static const char *buffer_field(char f[HURRAY_ERROR_FIELD_MAX], size_t i, unsigned b) {
    return hri_fieldf(f, "index[%zu].buffers[%u]", i, b);
}

/* The next n bytes of the index (or what is left of it) are in meta; the
 * cursor then reads them, failing with LENGTH past the index end. */
static int need(struct index_parse *p, uint64_t n, struct hurray_error *err) {
    uint64_t upto = hri_cursor_offset(&p->c) + n;
    if (upto > p->index_end || upto < n) upto = p->index_end;
    HR_TRY(meta_ensure(p->f, upto, p->index_end, err));
    p->c.src = p->f->meta;
    return HURRAY_OK;
}

static uint64_t name_pos(const struct entry_rec *r);
static int entry_failure(const struct hurray_file *f, size_t i, uint64_t name_off, int st,
                         struct hurray_error *err);

/* ---- gaps: checked in batches, reported in decoding order ---------------------------- */

/* Checks every pending gap, in order: RESERVED_NONZERO for the first with a
 * non-zero byte. Reads the bytes from the first pending gap to the end of the
 * last (<= GAP_WINDOW) in one positioned read. */
static int gaps_flush(struct index_parse *p, struct hurray_error *err) {
    struct gap_batch *gb = p->gaps;
    struct hurray_file *f = p->f;
    if (gb->n == 0) return HURRAY_OK;
    uint64_t lo = gb->g[0].start, hi = gb->g[gb->n - 1].start + gb->g[gb->n - 1].len;
    const uint8_t *bytes;
    if (f->image) {
        bytes = f->image_bytes + f->h.data_offset + lo;
    } else {
        if (!gb->scratch) {
            gb->scratch_len = (size_t)(f->h.data_length < GAP_WINDOW ? f->h.data_length
                                                                     : GAP_WINDOW);
            gb->scratch = hri_alloc(f->allocator, gb->scratch_len);
            HR_FAIL_IF(!gb->scratch, err, HURRAY_E_NOMEM, "file", "file: out of memory");
        }
        HR_TRY(read_exact(f, gb->scratch, hi - lo, f->h.data_offset + lo, err));
        bytes = gb->scratch;
    }
    size_t n = gb->n;
    gb->n = 0;
    for (size_t k = 0; k < n; k++) {
        const struct gap *g = &gb->g[k];
        uint64_t first = 0;
        char fl[HURRAY_ERROR_FIELD_MAX];
        if (is_zero(bytes + (g->start - lo), g->len, &first)) continue;
        uint64_t at = f->h.data_offset + g->start + first;
        if (g->entry == SIZE_MAX)
            return hri_fail_at(err, HURRAY_E_RESERVED_NONZERO, at, "data.padding",
                               "data.padding: not zero after the last buffer (HR-FILE-2)");
        return entry_failure(f, g->entry, name_pos(&f->entries[g->entry]),
                             hri_fail_at(err, HURRAY_E_RESERVED_NONZERO, at,
                                         buffer_field(fl, g->entry, g->buffer),
                                         "%s: padding before the buffer is not zero "
                                         "(HR-FILE-2)",
                                         fl),
                             err);
    }
    return HURRAY_OK;
}

/* Queues [start, start + len) for its check, first flushing the batch when
 * the gap lies too far from it. */
static int gap_add(struct index_parse *p, uint64_t start, uint64_t len, size_t entry,
                   unsigned buffer, struct hurray_error *err) {
    struct gap_batch *gb = p->gaps;
    if (len == 0) return HURRAY_OK;
    if (gb->n > 0) {
        const struct gap *last = &gb->g[gb->n - 1];
        uint64_t last_end = last->start + last->len;
        if (gb->n == GAP_BATCH || start - last_end > GAP_NEAR ||
            start + len - gb->g[0].start > GAP_WINDOW)
            HR_TRY(gaps_flush(p, err));
    }
    struct gap g = {start, (uint32_t)len, buffer, entry};
    gb->g[gb->n++] = g;
    return HURRAY_OK;
}

/* A failure at a later step: a pending gap comes first in the decoding order. */
static int after_gaps(struct index_parse *p, int st, struct hurray_error *err) {
    if (st == HURRAY_OK) return st;
    int g = gaps_flush(p, err);
    return g != HURRAY_OK ? g : st;
}

/* ---- entries ---------------------------------------------------------------------- */

/* Step 5: entry_count, bounded by the limit and by the index bytes, before
 * anything is allocated per entry (HR-FILE-13). */
static int parse_entry_count(struct index_parse *p, uint64_t *count, struct hurray_error *err) {
    uint64_t at = hri_cursor_offset(&p->c);
    HR_TRY(need(p, 8, err));
    HR_TRY(hri_read_u64(&p->c, count, "index.entry_count", err));
    if (*count > p->f->lim.max_file_tensors)
        return hri_fail_at(err, HURRAY_E_LIMIT, at, "index.entry_count",
                           "index.entry_count: %llu exceeds max_file_tensors %llu (HR-FILE-2)",
                           (unsigned long long)*count,
                           (unsigned long long)p->f->lim.max_file_tensors);
    if (*count > hri_cursor_left(&p->c) / HURRAY_FILE_MIN_ENTRY_BYTES)
        return hri_fail_at(err, HURRAY_E_LENGTH, at, "index.entry_count",
                           "index.entry_count: %llu entries need at least %llu bytes, the index "
                           "has %zu left (HR-FILE-2)",
                           (unsigned long long)*count,
                           (unsigned long long)*count * HURRAY_FILE_MIN_ENTRY_BYTES,
                           hri_cursor_left(&p->c));
    return HURRAY_OK;
}

/* name_length, kind, reserved. */
static int parse_entry_header(struct index_parse *p, size_t i, struct entry_rec *r,
                              struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    uint64_t at = hri_cursor_offset(&p->c);
    HR_TRY(need(p, ENTRY_HEADER_BYTES, err));
    HR_TRY(hri_need_i(&p->c, ENTRY_HEADER_BYTES, "index[%u].header", (unsigned)i, err));
    HR_TRY(hri_read_u32(&p->c, &r->name_len, "name_length", err));
    if (r->name_len == 0 || r->name_len > p->f->lim.max_name_bytes)
        return hri_name_check(NULL, r->name_len, p->f->lim.max_name_bytes,
                              entry_field(f, i, "name_length"), at, err);
    HR_TRY(hri_read_u8(&p->c, &r->kind, "kind", err));
    if (r->kind != HURRAY_FILE_KIND_TENSOR && r->kind != HURRAY_FILE_KIND_COMPOSITE) {
        int code = (r->kind == 0x00 || r->kind == 0xFF) ? HURRAY_E_INVALID_TAG
                                                        : HURRAY_E_RESERVED_TAG;
        return hri_fail_at(err, code, at + 4, entry_field(f, i, "kind"),
                           "%s: 0x%02X is not 0x01 (tensor) or 0x02 (composite head) "
                           "(HR-FILE-2)",
                           f, r->kind);
    }
    return hri_read_reserved_i(&p->c, 3, "index[%u].reserved", (unsigned)i, err);
}

/* name bytes, name rules, padding. */
static int parse_entry_name(struct index_parse *p, size_t i, struct entry_rec *r,
                            struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    const uint8_t *name = NULL;
    uint64_t at = hri_cursor_offset(&p->c);
    size_t pad = hri_pad8(r->name_len);
    HR_TRY(need(p, (uint64_t)r->name_len + pad, err));
    HR_TRY(hri_need_i(&p->c, r->name_len, "index[%u].name", (unsigned)i, err));
    HR_TRY(hri_read_bytes(&p->c, r->name_len, &name, "name", err));
    if (!hri_utf8_valid(name, r->name_len, 0))
        return hri_name_check(name, r->name_len, p->f->lim.max_name_bytes,
                              entry_field(f, i, "name"), at, err);
    return pad ? hri_read_reserved_i(&p->c, pad, "index[%u].name.padding", (unsigned)i, err)
               : HURRAY_OK;
}

static size_t decimal(uint32_t v, char out[11]) {
    char tmp[11];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t k = 0; k < n; k++) out[k] = tmp[n - 1 - k];
    return n;
}

/* Where entry r's name bytes are in meta. */
static uint64_t name_pos(const struct entry_rec *r) { return r->desc_pos - round_up(r->name_len, 8); }

/* HR-FILE-3: inside a composite, the entry is named "{head}.{index}". Runs
 * right after the name is read (desc_pos still unset: `name` is the cursor's
 * position minus the padded name). */
static int check_member_name(struct index_parse *p, size_t i, struct entry_rec *r,
                             struct hurray_error *err) {
    if (p->depth == 0) return HURRAY_OK;
    const struct composite_frame *fr = &p->stack[p->depth - 1];
    const struct entry_rec *head = &p->f->entries[fr->entry];
    const uint8_t *hn = p->f->meta + name_pos(head);
    const uint8_t *name = p->f->meta + p->c.pos - round_up(r->name_len, 8);
    char digits[11];
    size_t nd = decimal(fr->next, digits);
    r->is_member = 1;
    if (r->name_len == (uint64_t)head->name_len + 1 + nd &&
        memcmp(name, hn, head->name_len) == 0 && name[head->name_len] == '.' &&
        memcmp(name + head->name_len + 1, digits, nd) == 0)
        return HURRAY_OK;
    char f[HURRAY_ERROR_FIELD_MAX];
    int hl = (int)(head->name_len > 48 ? 48 : head->name_len);
    return hri_fail(err, HURRAY_E_CONSTRAINT, entry_field(f, i, "name"),
                    "%s: member %u of composite \"%.*s\" must be named \"%.*s.%.*s\" "
                    "(HR-FILE-3)",
                    f, (unsigned)fr->next, hl, (const char *)hn, hl, (const char *)hn, (int)nd,
                    digits);
}

/* HR-FILE-5: kind agrees with the layout; host bytes only. */
static int check_entry_descriptor(const struct hurray_descriptor *d, size_t i, uint8_t kind,
                                  struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    int composite = d->layout.tag == HURRAY_LAYOUT_COMPOSITE;
    if (composite != (kind == HURRAY_FILE_KIND_COMPOSITE))
        return hri_fail(err, HURRAY_E_CONSTRAINT, entry_field(f, i, "kind"),
                        "%s: kind 0x%02X, but the descriptor's layout is %s (HR-FILE-5)", f,
                        kind, composite ? "composite" : "not composite");
    if (d->device != HURRAY_DEVICE_CPU || d->memory_class != HURRAY_MEM_STANDARD)
        return hri_fail(err, HURRAY_E_COMBINATION, entry_field(f, i, "device"),
                        "%s: device 0x%02X / memory class 0x%02X; a file holds host bytes "
                        "(cpu, standard) (HR-FILE-5)",
                        f, d->device, d->memory_class);
    for (unsigned b = 0; b < d->buffer_count; b++)
        if (d->buffers[b].sync_mode != HURRAY_SYNC_PRODUCER_SYNCED)
            return hri_fail(err, HURRAY_E_COMBINATION, entry_field(f, i, "sync_mode"),
                            "%s: buffer %u is not producer_synced; a file has no events or "
                            "streams (HR-FILE-5)",
                            f, b);
    return HURRAY_OK;
}

/* The descriptor, by the one decoder; a descriptor crossing the index end is
 * LENGTH (the file is complete, the index length lies). Its length is peeked
 * first so that exactly its bytes are read. Leaves it decoded in f->scratch. */
static int parse_entry_descriptor(struct index_parse *p, size_t i, struct entry_rec *r,
                                  struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    size_t consumed = 0;
    uint32_t len = 0;
    uint64_t at = hri_cursor_offset(&p->c);
    HR_TRY(need(p, HURRAY_DESCRIPTOR_HEADER_BYTES, err));
    if (hurray_descriptor_peek_length(p->c.src + p->c.pos, hri_cursor_left(&p->c) <
                                                               HURRAY_DESCRIPTOR_HEADER_BYTES
                                          ? hri_cursor_left(&p->c)
                                          : HURRAY_DESCRIPTOR_HEADER_BYTES,
                                      &p->f->lim, &len, NULL) == HURRAY_OK)
        HR_TRY(need(p, len, err));
    /* what is in meta of the rest of the index: the decoder reads no further
     * than the descriptor's length, and reports a peek failure itself */
    size_t avail = (size_t)((p->f->meta_have < p->index_end ? p->f->meta_have : p->index_end) -
                            p->c.pos);
    hurray_descriptor_reset(p->f->scratch);
    int st = hurray_descriptor_decode(p->c.src + p->c.pos, avail, &p->dopt, p->f->scratch,
                                      &consumed, err);
    if (st == HURRAY_E_TRUNCATED)
        return hri_fail_at(err, HURRAY_E_LENGTH, at, entry_field(f, i, "descriptor"),
                           "%s: the descriptor crosses the end of the index (HR-FILE-6)", f);
    if (st != HURRAY_OK) return in_region(st, hri_fieldf(f, "index[%zu]", i), at, err);
    r->desc_pos = p->c.pos;
    r->desc_len = (uint32_t)consumed;
    r->buffer_count = p->f->scratch->buffer_count;
    p->c.pos += consumed;
    return check_entry_descriptor(p->f->scratch, i, r->kind, err);
}

/* HR-FILE-3 / HR-COMP-9: a head's depth and its tree's member total, before
 * anything is built for its members. */
static int enter_composite(struct index_parse *p, size_t i, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    const struct hurray_descriptor *d = p->f->scratch;
    const struct hurray_limits *lim = &p->f->lim;
    if (d->layout.tag != HURRAY_LAYOUT_COMPOSITE) return HURRAY_OK;
    if (p->depth == 0) p->tree_total = 0;
    if (p->depth + 1 > lim->max_composite_depth)
        return hri_fail(err, HURRAY_E_LIMIT, entry_field(f, i, "descriptor"),
                        "%s: composite depth %u exceeds max_composite_depth %u (HR-FILE-3)", f,
                        p->depth + 1, (unsigned)lim->max_composite_depth);
    p->tree_total += d->layout.member_count;
    if (p->tree_total > lim->max_composite_members)
        return hri_fail(err, HURRAY_E_LIMIT, entry_field(f, i, "descriptor"),
                        "%s: the composite holds %llu members over all levels, more than "
                        "max_composite_members %llu (HR-FILE-3)",
                        f, (unsigned long long)p->tree_total,
                        (unsigned long long)lim->max_composite_members);
    struct composite_frame fr = {i, 0, d->layout.member_count};
    p->stack[p->depth++] = fr;
    return HURRAY_OK;
}

/* § Buffer placement, checks 1-5, for one buffer; check 5 (the gap's bytes)
 * is queued (gap_add). Fields are formatted only on failure. */
static int place_buffer(struct index_parse *p, size_t i, unsigned b, uint64_t o, uint64_t at,
                        const struct hurray_buffer_desc *bd, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    uint64_t a = (uint64_t)1 << bd->alignment_log2, end = 0;
    uint64_t place = round_up(p->end, placement_alignment(bd->alignment_log2));
    if (o < p->end)
        return hri_fail_at(err, HURRAY_E_OVERLAP, at, buffer_field(f, i, b),
                           "%s: offset %llu is before the end of the previous buffer (%llu) "
                           "(HR-FILE-2)",
                           f, (unsigned long long)o, (unsigned long long)p->end);
    if (o % a != 0)
        return hri_fail_at(err, HURRAY_E_OFFSET, at, buffer_field(f, i, b),
                           "%s: offset %llu is not a multiple of the declared alignment %llu "
                           "(HR-FILE-2)",
                           f, (unsigned long long)o, (unsigned long long)a);
    if (o != place)
        return hri_fail_at(err, HURRAY_E_OFFSET, at, buffer_field(f, i, b),
                           "%s: offset %llu, but the buffer's place is %llu (HR-FILE-2)", f,
                           (unsigned long long)o, (unsigned long long)place);
    if (hri_add_u64(o, bd->size, &end))
        return hri_fail_at(err, HURRAY_E_OVERFLOW, at, buffer_field(f, i, b),
                           "%s: offset + size overflows", f);
    if (end > p->f->h.data_length)
        return hri_fail_at(err, HURRAY_E_OFFSET, at, buffer_field(f, i, b),
                           "%s: ends at %llu, past the data region's %llu bytes (HR-FILE-2)", f,
                           (unsigned long long)end, (unsigned long long)p->f->h.data_length);
    HR_TRY(gap_add(p, p->end, o - p->end, i, b, err));
    p->end = end;
    return HURRAY_OK;
}

static int parse_buffer_offsets(struct index_parse *p, size_t i, struct hurray_error *err) {
    const struct hurray_descriptor *d = p->f->scratch;
    HR_TRY(need(p, (uint64_t)8 * d->buffer_count, err));
    HR_TRY(hri_need_i(&p->c, (size_t)8 * d->buffer_count, "index[%u].buffers", (unsigned)i,
                      err));
    for (unsigned b = 0; b < d->buffer_count; b++) {
        uint64_t at = hri_cursor_offset(&p->c), o = 0;
        HR_TRY(hri_read_u64(&p->c, &o, "buffers", err));
        HR_TRY(place_buffer(p, i, b, o, at, &d->buffers[b], err));
    }
    return HURRAY_OK;
}

/* A finished entry advances the member counters; completed composites pop. */
static void leave_entries(struct index_parse *p, int was_composite) {
    if (was_composite) return; /* a head has >= 1 member still to come */
    while (p->depth > 0 && p->stack[p->depth - 1].next == p->stack[p->depth - 1].count)
        p->depth--;
}

/* Step 9 for a top-level tensor, computed while its descriptor is decoded
 * here and reported at step 9 (check_composites): the first one that fails. */
static void note_top_tensor(struct index_parse *p, size_t i, const struct entry_rec *r) {
    struct hurray_file *f = p->f;
    if (r->is_member || r->kind != HURRAY_FILE_KIND_TENSOR || f->top_fail != SIZE_MAX) return;
    if (hri_composite_check_top(f->scratch, &f->top_fail_err) != HURRAY_OK) f->top_fail = i;
}

/* A failure about entry i, whose (validated) name is at file offset name_off
 * in meta: the message names the entry by name and index as well as the field
 * (the file is named by open_finish). */
static int entry_failure(const struct hurray_file *f, size_t i, uint64_t name_off, int st,
                         struct hurray_error *err) {
    if (st == HURRAY_OK || !err) return st;
    const struct entry_rec *r = &f->entries[i];
    int n = (int)(r->name_len > 64 ? 64 : r->name_len);
    return prefix_message(st, err, "entry \"%.*s%s\" (index[%zu]): ", n,
                          (const char *)f->meta + name_off, r->name_len > 64 ? "..." : "", i);
}

static int parse_entry_rest(struct index_parse *p, size_t i, struct entry_rec *r,
                            struct hurray_error *err) {
    HR_TRY(check_member_name(p, i, r, err));
    if (p->depth > 0) p->stack[p->depth - 1].next++;
    HR_TRY(parse_entry_descriptor(p, i, r, err));
    HR_TRY(enter_composite(p, i, err));
    note_top_tensor(p, i, r);
    HR_TRY(parse_buffer_offsets(p, i, err));
    leave_entries(p, r->kind == HURRAY_FILE_KIND_COMPOSITE);
    return HURRAY_OK;
}

static int parse_entry(struct index_parse *p, size_t i, struct hurray_error *err) {
    struct entry_rec *r = &p->f->entries[i];
    HR_TRY(parse_entry_header(p, i, r, err));
    HR_TRY(parse_entry_name(p, i, r, err));
    uint64_t name_off = p->c.pos - round_up(r->name_len, 8);
    return entry_failure(p->f, i, name_off, parse_entry_rest(p, i, r, err), err);
}

/* Step 6 before the trailing padding: the index ends exactly; no composite is
 * left open; the data region ends at the last buffer rounded up to 64. */
static int parse_index_end(struct index_parse *p, struct hurray_error *err) {
    const struct file_header *h = &p->f->h;
    if (hri_cursor_left(&p->c) != 0)
        return hri_fail_at(err, HURRAY_E_LENGTH, hri_cursor_offset(&p->c), "index",
                           "index: %zu bytes left after the last entry (HR-FILE-2)",
                           hri_cursor_left(&p->c));
    if (p->depth > 0) {
        const struct composite_frame *fr = &p->stack[p->depth - 1];
        char f[HURRAY_ERROR_FIELD_MAX];
        return hri_fail(err, HURRAY_E_CONSTRAINT, entry_field(f, fr->entry, "descriptor"),
                        "%s: the composite has %u members, the index ends after %u "
                        "(HR-FILE-3)",
                        f, (unsigned)fr->count, (unsigned)fr->next);
    }
    if (h->data_length != round_up(p->end, DATA_PAD))
        return hri_fail_at(err, HURRAY_E_LENGTH, OFF_DATA_LENGTH, "header.data_length",
                           "header.data_length: %llu, but the buffers end at %llu; it is that "
                           "rounded up to 64 (HR-FILE-2)",
                           (unsigned long long)h->data_length, (unsigned long long)p->end);
    return HURRAY_OK;
}

static int parse_entries(struct index_parse *p, struct hurray_error *err) {
    struct hurray_file *f = p->f;
    uint64_t count = 0;
    HR_TRY(parse_entry_count(p, &count, err));
    HR_TRY(alloc_array(f->allocator, (size_t)count, sizeof *f->entries, (void **)&f->entries,
                       err));
    f->count = (size_t)count;
    for (size_t i = 0; i < f->count; i++) HR_TRY(parse_entry(p, i, err));
    hurray_descriptor_reset(f->scratch);
    return parse_index_end(p, err);
}

/* Steps 5-6: every entry, then the index end; the gaps are checked as they
 * batch up, and every pending one before any later failure is reported. */
static int parse_index(struct hurray_file *f, struct hurray_error *err) {
    HR_FAIL_IF(f->h.index_offset + f->h.index_length > SIZE_MAX, err, HURRAY_E_NOMEM, "file",
               "file: an index of %llu bytes exceeds the address space",
               (unsigned long long)f->h.index_length);
    struct index_parse *p = hri_alloc(f->allocator, sizeof *p);
    HR_FAIL_IF(!p, err, HURRAY_E_NOMEM, "file", "file: out of memory");
    memset(p, 0, sizeof *p);
    struct gap_batch *gb = hri_alloc(f->allocator, sizeof *gb);
    if (!gb) {
        hri_free(f->allocator, p, sizeof *p);
        return hri_fail(err, HURRAY_E_NOMEM, "file", "file: out of memory");
    }
    gb->n = 0;
    gb->scratch = NULL;
    gb->scratch_len = 0;
    p->f = f;
    p->gaps = gb;
    p->index_end = f->h.index_offset + f->h.index_length;
    hri_cursor_init(&p->c, f->meta, (size_t)p->index_end, HURRAY_E_LENGTH);
    p->c.pos = (size_t)f->h.index_offset;
    p->dopt.limits = &f->lim;
    p->dopt.allocator = f->allocator;
    int st = after_gaps(p, parse_entries(p, err), err);
    if (st == HURRAY_OK) st = gap_add(p, p->end, f->h.data_length - p->end, SIZE_MAX, 0, err);
    if (st == HURRAY_OK) st = gaps_flush(p, err);
    hri_free(f->allocator, gb->scratch, gb->scratch_len);
    hri_free(f->allocator, gb, sizeof *gb);
    hri_free(f->allocator, p, sizeof *p);
    return st;
}

/* ---- step 7: names unique (HR-FILE-5); the sorted table then serves lookups ---------------- */

static int name_order(const struct hurray_file *f, uint32_t ia, uint32_t ib) {
    const struct entry_rec *a = &f->entries[ia], *b = &f->entries[ib];
    int c = memcmp(a->name, b->name, a->name_len < b->name_len ? a->name_len : b->name_len);
    if (c != 0) return c;
    if (a->name_len != b->name_len) return a->name_len < b->name_len ? -1 : 1;
    return (ia > ib) - (ia < ib); /* file order among equals: the later one is reported */
}

/* Merge sort of the index table (qsort has no context argument in C11). */
static void sort_names(const struct hurray_file *f, uint32_t *v, uint32_t *tmp, size_t n) {
    if (n < 2) return;
    size_t h = n / 2, i = 0, j = h, k = 0;
    sort_names(f, v, tmp, h);
    sort_names(f, v + h, tmp, n - h);
    while (i < h && j < n) tmp[k++] = name_order(f, v[i], v[j]) <= 0 ? v[i++] : v[j++];
    while (i < h) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

static int copy_names(struct hurray_file *f, struct hurray_error *err) {
    size_t total = 0, at = 0;
    for (size_t i = 0; i < f->count; i++) total += (size_t)f->entries[i].name_len + 1;
    HR_TRY(alloc_array(f->allocator, total, 1, (void **)&f->names, err));
    f->names_len = total;
    for (size_t i = 0; i < f->count; i++) {
        struct entry_rec *r = &f->entries[i];
        memcpy(f->names + at, f->meta + name_pos(r), r->name_len);
        f->names[at + r->name_len] = 0;
        r->name = f->names + at;
        at += (size_t)r->name_len + 1;
    }
    return HURRAY_OK;
}

static int check_names(struct hurray_file *f, struct hurray_error *err) {
    uint32_t *tmp = NULL;
    HR_TRY(copy_names(f, err));
    HR_TRY(alloc_array(f->allocator, f->count, sizeof *f->sorted, (void **)&f->sorted, err));
    HR_TRY(alloc_array(f->allocator, f->count, sizeof *tmp, (void **)&tmp, err));
    for (size_t i = 0; i < f->count; i++) f->sorted[i] = (uint32_t)i;
    sort_names(f, f->sorted, tmp, f->count);
    hri_free(f->allocator, tmp, f->count * sizeof *tmp);
    for (size_t k = 1; k < f->count; k++) {
        const struct entry_rec *a = &f->entries[f->sorted[k - 1]], *b = &f->entries[f->sorted[k]];
        if (a->name_len != b->name_len || memcmp(a->name, b->name, a->name_len) != 0) continue;
        char fl[HURRAY_ERROR_FIELD_MAX];
        return hri_fail(err, HURRAY_E_DUPLICATE, entry_field(fl, f->sorted[k], "name"),
                        "%s: \"%.*s\" is also the name of entry %zu (HR-FILE-5)", fl,
                        (int)(b->name_len > 64 ? 64 : b->name_len), b->name,
                        (size_t)f->sorted[k - 1]);
    }
    return HURRAY_OK;
}

/* ---- step 8: the KV section, short status LENGTH; present means non-empty ------------- */

/* The section read and decoded: into f->kv (`fn` NULL), or handed to `fn` one entry at a
 * time with no map held (hurray_file_kv_each). One decoder and one empty-section rule for
 * both; nothing reaches `fn` unless the whole section is valid. */
static int kv_section(struct hurray_file *f, hurray_kv_entry_fn fn, void *ctx,
                      struct hurray_error *err) {
    const struct file_header *h = &f->h;
    const uint8_t *src = NULL;
    uint8_t *tmp = NULL;
    size_t tmp_len = 0, n = 0;
    if (h->kv_length == 0) return HURRAY_OK;
    /* kv_length <= max_kv_bytes (step 2): bounded before it is read */
    HR_TRY(region(f, h->kv_offset, h->kv_length, &src, &tmp, &tmp_len, err));
    int st;
    if (fn) {
        st = hri_kv_decode_section_each(src, (size_t)h->kv_length, &f->lim, f->allocator,
                                        HURRAY_E_LENGTH, 0, fn, ctx, &n, err);
    } else {
        st = hri_kv_decode_section(src, (size_t)h->kv_length, &f->lim, f->allocator,
                                   HURRAY_E_LENGTH, 0, &f->kv, err);
        n = f->kv.count;
    }
    st = in_region(st, "kv", h->kv_offset, err);
    hri_free(f->allocator, tmp, tmp_len); /* the map (or fn) has what it keeps */
    if (st != HURRAY_OK || n > 0) return st;
    return hri_fail_at(err, HURRAY_E_CONSTRAINT, h->kv_offset, "kv.entry_count",
                       "kv.entry_count: 0; an empty map is written as no KV section "
                       "(HR-FILE-4)");
}

static int parse_kv(struct hurray_file *f, struct hurray_error *err) {
    return kv_section(f, NULL, NULL, err);
}

/* ==== items ===================================================================== */

/* in_region for entry i's descriptor, naming the entry: formatted only on
 * failure (entries are named after the index is parsed). */
static int in_entry(const struct hurray_file *f, int st, size_t i, uint64_t base,
                    struct hurray_error *err) {
    if (st == HURRAY_OK || !err) return st;
    char pf[HURRAY_ERROR_FIELD_MAX];
    const struct entry_rec *r = &f->entries[i];
    int n = (int)(r->name_len > 64 ? 64 : r->name_len);
    st = in_region(st, hri_fieldf(pf, "index[%zu]", i), base, err);
    return prefix_message(st, err, "file \"%.100s\": entry \"%.*s%s\" (index[%zu]): ",
                          file_path(f), n, r->name, r->name_len > 64 ? "..." : "", i);
}

static int decode_entry(const struct hurray_file *f, size_t i, struct hurray_descriptor *out,
                        struct hurray_error *err) {
    const struct entry_rec *r = &f->entries[i];
    struct hurray_decode_options dopt = {&f->lim, f->allocator};
    size_t consumed = 0;
    hurray_descriptor_reset(out);
    return in_entry(f,
                    hurray_descriptor_decode(f->meta + r->desc_pos, r->desc_len, &dopt, out,
                                             &consumed, err),
                    i, r->desc_pos, err);
}

/* Data-relative offset of entry i's buffer b (validated at open). */
static uint64_t buffer_offset(const struct hurray_file *f, size_t i, unsigned b) {
    const struct entry_rec *r = &f->entries[i];
    return hri_load_u64le(f->meta + r->desc_pos + r->desc_len + 8u * b);
}

/* The byte range an item's buffers span, and the largest placement alignment
 * among them (HR-FILE-9: what loading it reads or maps). */
struct byte_range {
    uint64_t lo, hi, align;
};

/* Entry i and, for a composite, its members (pre-order); *next is the entry
 * after its subtree. With `range`, buffer tables are made (data NULL) and
 * the bytes' range accumulated; without, descriptors only (validation). No
 * owner is set: the caller decides. */
static int build_item(const struct hurray_file *f, size_t i, struct byte_range *range,
                      struct hurray_item **out, size_t *next, struct hurray_error *err) {
    struct hurray_item *it = NULL;
    size_t j = i + 1;
    HR_FAIL_IF(i >= f->count, err, HURRAY_E_INTERNAL, "index",
               "index: member entry %zu past the validated index", i);
    HR_TRY(hri_item_new(f->allocator, &it, err));
    int st = decode_entry(f, i, it->descriptor, err);
    if (st == HURRAY_OK && range && f->entries[i].kind == HURRAY_FILE_KIND_TENSOR) {
        st = hri_item_alloc_buffer_table(it, err);
        it->owns_buffers = HURRAY_ITEM_BORROWED;
        for (unsigned b = 0; st == HURRAY_OK && b < it->descriptor->buffer_count; b++) {
            const struct hurray_buffer_desc *bd = &it->descriptor->buffers[b];
            uint64_t o = buffer_offset(f, i, b), a = placement_alignment(bd->alignment_log2);
            it->buffers[b].size = bd->size;
            if (bd->size == 0) continue;
            if (range->hi == range->lo) range->lo = o; /* the first non-empty buffer */
            range->hi = o + bd->size;                  /* buffers ascend (HR-FILE-2) */
            if (a > range->align) range->align = a;
        }
    }
    if (st == HURRAY_OK && f->entries[i].kind == HURRAY_FILE_KIND_COMPOSITE) {
        st = hri_item_alloc_members(it, it->descriptor->layout.member_count, err);
        for (uint32_t k = 0; st == HURRAY_OK && k < it->member_count; k++)
            st = build_item(f, j, range, &it->members[k], &j, err);
    }
    if (st != HURRAY_OK) {
        hurray_item_destroy(it);
        return st;
    }
    *out = it;
    *next = j;
    return HURRAY_OK;
}

/* Points an item tree's buffers (entries from i, pre-order) into `base`, the
 * address of data-relative byte `lo`. */
static void attach_buffers(const struct hurray_file *f, size_t *i, struct hurray_item *it,
                           uint8_t *base, uint64_t lo) {
    size_t e = (*i)++;
    for (uint32_t k = 0; k < it->member_count; k++)
        attach_buffers(f, i, it->members[k], base, lo);
    if (it->member_count || !it->buffers) return;
    for (unsigned b = 0; b < it->descriptor->buffer_count; b++)
        if (it->buffers[b].size) it->buffers[b].data = base + (buffer_offset(f, e, b) - lo);
}

/* Step 9: each top-level item through the composite rules (HR-COMP-10):
 * composite trees whole, tensors for their top-level rule (computed while
 * the index was parsed: note_top_tensor). */
static int check_composites(struct hurray_file *f, struct hurray_error *err) {
    for (size_t k = 0; k < f->top_count; k++) {
        struct hurray_item *it = NULL;
        size_t i = f->top[k], next = 0;
        int st = HURRAY_OK;
        if (i == f->top_fail) {
            if (err) *err = f->top_fail_err;
            st = f->top_fail_err.code;
        } else if (f->entries[i].kind == HURRAY_FILE_KIND_COMPOSITE) {
            HR_TRY(build_item(f, i, NULL, &it, &next, err));
            st = hurray_composite_validate(it, &f->lim, err);
            hurray_item_destroy(it);
        }
        HR_TRY(in_entry(f, st, i, 0, err));
    }
    return HURRAY_OK;
}

static int list_top_level(struct hurray_file *f, struct hurray_error *err) {
    HR_TRY(alloc_array(f->allocator, f->count, sizeof *f->top, (void **)&f->top, err));
    for (size_t i = 0; i < f->count; i++)
        if (!f->entries[i].is_member) f->top[f->top_count++] = (uint32_t)i;
    return HURRAY_OK;
}

/* ---- loading (HR-FILE-8, HR-FILE-9) ------------------------------------------------------- */

struct load_req {
    struct hurray_item *item;
    struct byte_range r; /* lo == hi: no bytes */
    size_t entry;
    size_t k; /* position in the caller's list */
};

static int req_before(const struct load_req *a, const struct load_req *b) {
    return a->r.lo < b->r.lo || (a->r.lo == b->r.lo && a->k < b->k);
}

/* Sorts requests by their range's start (merge sort: stable, no context). */
static void sort_reqs(struct load_req **v, struct load_req **tmp, size_t n) {
    if (n < 2) return;
    size_t h = n / 2, i = 0, j = h, k = 0;
    sort_reqs(v, tmp, h);
    sort_reqs(v + h, tmp, n - h);
    while (i < h && j < n) tmp[k++] = req_before(v[j], v[i]) ? v[j++] : v[i++];
    while (i < h) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

/* Gives the item its bytes: `base` is the address of its range's first byte,
 * `b` the block it takes a reference on (already counted). */
static void give_bytes(const struct hurray_file *f, struct load_req *q, struct data_block *b,
                       uint8_t *base) {
    size_t e = q->entry;
    attach_buffers(f, &e, q->item, base, q->r.lo);
    q->item->owner = b;
    q->item->owner_release = block_unref;
}

/* In memory: the items borrow from the image; an item with no bytes holds nothing of it
 * (as in copy and mmap mode), so that the image goes with the file when only such items are
 * kept (HR-FILE-8). */
static int load_from_image(struct hurray_file *f, struct load_req *q, size_t n) {
    for (size_t k = 0; k < n; k++) {
        if (q[k].r.hi == q[k].r.lo) continue;
        block_ref(f->image);
        give_bytes(f, &q[k], f->image,
                   (uint8_t *)(uintptr_t)(f->image_bytes + f->h.data_offset + q[k].r.lo));
    }
    return HURRAY_OK;
}

/* Copy mode: a block of its own per item (placed so its buffers keep their
 * alignment), filled by positioned reads; small neighbours are read together
 * through one scratch buffer. `s` is sorted by range. */
/* The run of small items starting at s[k] that one read covers: its end (m)
 * and the bytes it spans (*span); m == k + 1 when s[k] is read alone. */
static size_t small_run(struct load_req **s, size_t n, size_t k, uint64_t *span) {
    const struct load_req *q = s[k];
    uint64_t hi = q->r.hi;
    size_t m = k + 1;
    if (q->r.hi == q->r.lo || q->r.hi - q->r.lo > LOAD_SMALL) {
        *span = q->r.hi - q->r.lo;
        return m;
    }
    while (m < n && s[m]->r.hi > s[m]->r.lo && s[m]->r.hi - s[m]->r.lo <= LOAD_SMALL &&
           s[m]->r.lo <= hi + LOAD_NEAR && s[m]->r.hi - q->r.lo <= LOAD_SCRATCH) {
        if (s[m]->r.hi > hi) hi = s[m]->r.hi;
        m++;
    }
    *span = hi - q->r.lo;
    return m;
}

/* Whether the run s[k..m) has no two items sharing bytes (an entry asked for twice, or a
 * composite member with its head): then one scatter read fills every item's own bytes. */
static int run_disjoint(struct load_req **s, size_t k, size_t m) {
    for (size_t j = k + 1; j < m; j++)
        if (s[j]->r.lo < s[j - 1]->r.hi) return 0;
    return 1;
}

/* A disjoint run: one scatter read (hri_os_preadv) straight into each item's block, the
 * gaps between them (< LOAD_NEAR bytes each) into `trash`. */
static int read_run(const struct hurray_file *f, struct load_req **s, size_t k, size_t m,
                    uint8_t **bytes, struct hri_os_rvec *v, uint8_t *trash,
                    struct hurray_error *err) {
    size_t nv = 0, got = 0;
    uint64_t at = s[k]->r.lo;
    for (size_t j = k; j < m; j++) {
        if (s[j]->r.lo > at) {
            struct hri_os_rvec g = {trash, (size_t)(s[j]->r.lo - at)};
            v[nv++] = g;
        }
        struct hri_os_rvec it = {bytes[j], (size_t)(s[j]->r.hi - s[j]->r.lo)};
        v[nv++] = it;
        at = s[j]->r.hi;
    }
    uint64_t span = at - s[k]->r.lo, off = f->h.data_offset + s[k]->r.lo;
    HR_TRY(hri_os_preadv(f->fd, v, nv, off, &got, f->path, err));
    if (got < span) return shrank(f, off + got, off + span, err);
    return HURRAY_OK;
}

/* HR-FILE-17: the caller's hook (none set: nothing); non-zero stops the load. */
static int load_report(const struct hurray_file *f, uint64_t done, uint64_t total,
                       struct hurray_error *err) {
    if (!f->progress || f->progress(f->progress_ctx, done, total) == 0) return HURRAY_OK;
    return hri_os_cancelled(err, "file", "load cancelled by the caller");
}

/* One item read alone: in chunks of HURRAY_FILE_PROGRESS_CHUNK with the hook between
 * them when one is set (*done counts its bytes), else in one read. */
static int read_alone(const struct hurray_file *f, uint8_t *dst, uint64_t n, uint64_t off,
                      uint64_t *done, uint64_t total, struct hurray_error *err) {
    if (!f->progress) return read_exact(f, dst, n, off, err);
    for (uint64_t at = 0; at < n;) {
        uint64_t len = n - at < HURRAY_FILE_PROGRESS_CHUNK ? n - at : HURRAY_FILE_PROGRESS_CHUNK;
        HR_TRY(read_exact(f, dst + at, len, off + at, err));
        at += len;
        *done += len;
        HR_TRY(load_report(f, *done, total, err));
    }
    return HURRAY_OK;
}

static int load_copies(struct hurray_file *f, struct load_req **s, size_t n,
                       struct hurray_error *err) {
    uint8_t *scratch = NULL, **bytes = NULL, trash[LOAD_NEAR];
    struct hri_os_rvec *v = NULL;
    uint64_t scratch_len = 0, span = 0, done = 0, total = 0;
    /* HR-FILE-17: the sum of the items' spans (each within the file, validated at open;
     * an entry may be requested any number of times, so saturating rather than wrapping) */
    for (size_t k = 0; k < n; k++) {
        uint64_t w = s[k]->r.hi - s[k]->r.lo;
        total = total > UINT64_MAX - w ? UINT64_MAX : total + w;
    }
    /* the scratch buffer, for runs whose items share bytes: the widest such run's span */
    for (size_t k = 0, m; k < n; k = m)
        if ((m = small_run(s, n, k, &span)) > k + 1 && !run_disjoint(s, k, m) &&
            span > scratch_len)
            scratch_len = span;
    int st = alloc_array(f->allocator, n, sizeof *bytes, (void **)&bytes, err);
    if (st == HURRAY_OK) st = alloc_array(f->allocator, 2 * n, sizeof *v, (void **)&v, err);
    for (size_t k = 0; st == HURRAY_OK && k < n; k++) {
        struct data_block *b = NULL;
        struct load_req *q = s[k];
        if (q->r.hi == q->r.lo) continue;
        st = block_new(f->allocator, BLOCK_COPY, q->r.hi - q->r.lo, q->r.align,
                       q->r.lo % q->r.align, &b, &bytes[k], err);
        if (st == HURRAY_OK) give_bytes(f, q, b, bytes[k]);
    }
    if (st == HURRAY_OK && scratch_len) {
        scratch = hri_alloc(f->allocator, (size_t)scratch_len);
        if (!scratch) st = hri_fail(err, HURRAY_E_NOMEM, "file", "file: out of memory");
    }
    if (st == HURRAY_OK) st = load_report(f, 0, total, err);
    for (size_t k = 0, m; st == HURRAY_OK && k < n; k = m) {
        struct load_req *q = s[k];
        m = small_run(s, n, k, &span);
        if (m == k + 1) { /* alone: straight into its own bytes */
            st = read_alone(f, bytes[k], span, f->h.data_offset + q->r.lo, &done, total, err);
            continue;
        }
        /* small items lying close together: one read (at most LOAD_SCRATCH bytes) */
        if (run_disjoint(s, k, m)) {
            st = read_run(f, s, k, m, bytes, v, trash, err);
        } else {
            st = read_exact(f, scratch, span, f->h.data_offset + q->r.lo, err);
            for (size_t j = k; st == HURRAY_OK && j < m; j++)
                memcpy(bytes[j], scratch + (s[j]->r.lo - q->r.lo),
                       (size_t)(s[j]->r.hi - s[j]->r.lo));
        }
        for (size_t j = k; j < m; j++) done += s[j]->r.hi - s[j]->r.lo;
        if (st == HURRAY_OK && f->progress) st = load_report(f, done, total, err);
    }
    /* the last report had done = total: an item with no bytes adds nothing */
    hri_free(f->allocator, scratch, scratch ? (size_t)scratch_len : 0);
    hri_free(f->allocator, v, v ? 2 * n * sizeof *v : 0);
    hri_free(f->allocator, bytes, n * sizeof *bytes);
    return st;
}

/* mmap mode: one copy-on-write mapping (HR-FILE-11) per run of items lying
 * within MAP_MERGE of each other, shared by them; then the file is measured
 * again, so a range it no longer holds is refused now rather than faulting
 * later (HR-FILE-12). `s` is sorted by range. */
static int load_mappings(struct hurray_file *f, struct load_req **s, size_t n,
                         struct hurray_error *err) {
    uint64_t top = 0, size = 0;
    for (size_t k = 0; k < n;) {
        struct load_req *q = s[k];
        if (q->r.hi == q->r.lo) {
            k++;
            continue;
        }
        size_t m = k + 1;
        uint64_t hi = q->r.hi;
        while (m < n && s[m]->r.hi > s[m]->r.lo && s[m]->r.lo <= hi + MAP_MERGE) {
            if (s[m]->r.hi > hi) hi = s[m]->r.hi;
            m++;
        }
        struct data_block *b = NULL;
        uint8_t *unused = NULL;
        void *addr = NULL;
        HR_TRY(block_new(f->allocator, BLOCK_MAP, 0, 1, 0, &b, &unused, err));
        int st = hri_os_map_private(f->fd, f->h.data_offset + q->r.lo, hi - q->r.lo, f->path,
                                    &addr, &b->map, err);
        if (st != HURRAY_OK) {
            block_unref(b);
            return st;
        }
        for (size_t j = k; j < m; j++) {
            if (j > k) block_ref(b);
            give_bytes(f, s[j], b, (uint8_t *)addr + (s[j]->r.lo - q->r.lo));
        }
        if (hi > top) top = hi;
        k = m;
    }
    if (top == 0) return HURRAY_OK;
    HR_TRY(hri_os_file_size(f->fd, f->path, &size, err));
    if (size < f->h.data_offset + top) return shrank(f, size, f->h.data_offset + top, err);
    return HURRAY_OK;
}

int hurray_file_load_items(struct hurray_file *f, const size_t *entries, size_t n,
                           struct hurray_item **out, struct hurray_error *err) {
    struct load_req *q = NULL, **s = NULL, **tmp = NULL;
    HR_FAIL_IF(!f || !out || (n && !entries), err, HURRAY_E_ARGUMENT, "file",
               "load_items: NULL argument");
    for (size_t k = 0; k < n; k++) out[k] = NULL;
    for (size_t k = 0; k < n; k++)
        HR_FAIL_IF(entries[k] >= f->count, err, HURRAY_E_ARGUMENT, "index",
                   "index: entry %zu of %zu does not exist", entries[k], f->count);
    if (n == 0) return HURRAY_OK;
    int st = alloc_array(f->allocator, n, sizeof *q, (void **)&q, err);
    if (st == HURRAY_OK) st = alloc_array(f->allocator, n, sizeof *s, (void **)&s, err);
    if (st == HURRAY_OK) st = alloc_array(f->allocator, n, sizeof *tmp, (void **)&tmp, err);
    for (size_t k = 0; st == HURRAY_OK && k < n; k++) {
        size_t next = 0;
        q[k].entry = entries[k];
        q[k].k = k;
        q[k].r.align = HURRAY_MIN_BUFFER_ALIGNMENT;
        s[k] = &q[k];
        st = build_item(f, entries[k], &q[k].r, &q[k].item, &next, err);
    }
    if (st == HURRAY_OK) {
        sort_reqs(s, tmp, n);
        if (f->image) st = load_from_image(f, q, n);
        else if (f->mode == HURRAY_FILE_MMAP) st = load_mappings(f, s, n, err);
        else st = load_copies(f, s, n, err);
    }
    for (size_t k = 0; q && k < n; k++) {
        if (st == HURRAY_OK) out[k] = q[k].item;
        else hurray_item_destroy(q[k].item); /* releases whatever bytes it was given */
    }
    hri_free(f->allocator, tmp, tmp ? n * sizeof *tmp : 0);
    hri_free(f->allocator, s, s ? n * sizeof *s : 0);
    hri_free(f->allocator, q, q ? n * sizeof *q : 0);
    return st;
}

void hurray_file_set_progress(struct hurray_file *f,
                              int (*progress)(void *ctx, uint64_t done, uint64_t total),
                              void *ctx) {
    if (!f) return;
    f->progress = progress;
    f->progress_ctx = progress ? ctx : NULL;
}

int hurray_file_entry_span(const struct hurray_file *f, size_t i, uint64_t *span,
                           struct hurray_error *err) {
    HR_FAIL_IF(!f || !span, err, HURRAY_E_ARGUMENT, "file", "entry_span: NULL argument");
    HR_FAIL_IF(i >= f->count, err, HURRAY_E_ARGUMENT, "index",
               "index: entry %zu of %zu does not exist", i, f->count);
    struct byte_range r = {0, 0, HURRAY_MIN_BUFFER_ALIGNMENT};
    struct hurray_item *it = NULL;
    size_t next = 0;
    HR_TRY(build_item(f, i, &r, &it, &next, err)); /* the range load_items reads */
    hurray_item_destroy(it);
    *span = r.hi - r.lo;
    return HURRAY_OK;
}

int hurray_file_load_item(struct hurray_file *f, size_t i, struct hurray_item **out,
                          struct hurray_error *err) {
    HR_FAIL_IF(!f || !out, err, HURRAY_E_ARGUMENT, "file", "load_item: NULL argument");
    return hurray_file_load_items(f, &i, 1, out, err);
}

/* ==== opening (HR-FILE-9, HR-FILE-10) ============================================== */

/* Step 4: the padding before data_offset (fewer than 4096 bytes). */
static int check_meta_padding(struct hurray_file *f, struct hurray_error *err) {
    const uint8_t *src = NULL;
    uint8_t *tmp = NULL;
    size_t tmp_len = 0;
    uint64_t first = 0, n = f->h.data_offset - f->h.meta_end;
    HR_TRY(region(f, f->h.meta_end, n, &src, &tmp, &tmp_len, err));
    int zero = is_zero(src, n, &first);
    hri_free(f->allocator, tmp, tmp_len);
    if (zero) return HURRAY_OK;
    return hri_fail_at(err, HURRAY_E_RESERVED_NONZERO, f->h.meta_end + first, "padding",
                       "padding: non-zero byte before data_offset (HR-FILE-4)");
}

/* § Decoding order over the parts asked for; f->size is the size measured at
 * open. Steps 1-3 on the header, 4, then 5-7 (index), 8 (KV), 9 (index). */
static int validate_file(struct hurray_file *f, struct hurray_error *err) {
    if (!f->image) {
        /* one read usually holds a small file's whole metadata */
        uint64_t want = f->size < META_FIRST_READ ? f->size : META_FIRST_READ;
        HR_TRY(meta_ensure(f, want, want, err));
    }
    HR_TRY(parse_header(f->meta, f->size, f->path, &f->lim, &f->h, err)); /* 64 bytes at most */
    HR_TRY(check_meta_padding(f, err));
    if (f->parts & HURRAY_FILE_PARTS_INDEX) {
        f->scratch = hri_alloc(f->allocator, sizeof *f->scratch);
        HR_FAIL_IF(!f->scratch, err, HURRAY_E_NOMEM, "file", "file: out of memory");
        hurray_descriptor_init(f->scratch);
        HR_TRY(parse_index(f, err));
        HR_TRY(check_names(f, err));
    }
    if (f->parts & HURRAY_FILE_PARTS_KV) HR_TRY(parse_kv(f, err));
    if (f->parts & HURRAY_FILE_PARTS_INDEX) {
        HR_TRY(list_top_level(f, err));
        HR_TRY(check_composites(f, err));
    }
    return HURRAY_OK;
}

static int file_new(const struct hurray_file_options *opt, struct hurray_file **out,
                    struct hurray_error *err) {
    const struct hurray_allocator *a = opt ? opt->allocator : NULL;
    int parts = opt ? opt->parts : HURRAY_FILE_PARTS_ALL;
    HR_FAIL_IF(parts & ~(HURRAY_FILE_PARTS_INDEX | HURRAY_FILE_PARTS_KV | HURRAY_FILE_PARTS_HEADER),
               err, HURRAY_E_ARGUMENT, "parts",
               "parts: %d is not a combination of HURRAY_FILE_PARTS_INDEX, _KV and _HEADER",
               parts);
    struct hurray_file *f = hri_alloc(a, sizeof *f);
    HR_FAIL_IF(!f, err, HURRAY_E_NOMEM, "file", "file: out of memory");
    memset(f, 0, sizeof *f);
    f->allocator = a;
    f->fd = HRI_OS_NO_FD;
    f->mode = opt ? opt->mode : HURRAY_FILE_COPY;
    f->parts = parts ? parts : HURRAY_FILE_PARTS_INDEX | HURRAY_FILE_PARTS_KV;
    f->top_fail = SIZE_MAX;
    hri_limits_effective(opt ? opt->limits : NULL, &f->lim);
    hurray_kv_init(&f->kv);
    *out = f;
    return HURRAY_OK;
}

/* Names the file in a failure's message, unless the message already does (system errors,
 * truncation). */
static int name_file(const struct hurray_file *f, int st, struct hurray_error *err) {
    if (st != HURRAY_OK && err && err->code == st && st != HURRAY_E_IO && f->path &&
        strncmp(err->message, "file \"", 6) != 0)
        prefix_message(st, err, "file \"%.100s\": ", f->path);
    return st;
}

static int open_finish(struct hurray_file *f, struct hurray_file **out, struct hurray_error *err) {
    int st = name_file(f, validate_file(f, err), err);
    if (st != HURRAY_OK) {
        hurray_file_destroy(f);
        return st;
    }
    *out = f;
    return HURRAY_OK;
}

static int open_args(const void *src, struct hurray_file **out, struct hurray_error *err) {
    HR_FAIL_IF(!src || !out, err, HURRAY_E_ARGUMENT, "file", "file_open: NULL argument");
    *out = NULL;
    return HURRAY_OK;
}

int hurray_file_create_memory(const uint8_t *data, size_t size,
                            const struct hurray_file_options *opt, struct hurray_file **out,
                            struct hurray_error *err) {
    struct hurray_limits lim;
    struct file_header h;
    struct hurray_file *f = NULL;
    uint8_t *bytes = NULL;
    HR_TRY(open_args(data, out, err));
    hri_limits_effective(opt ? opt->limits : NULL, &lim);
    /* steps 1-3 before anything is copied */
    HR_TRY(parse_header(data, size, NULL, &lim, &h, err));
    HR_TRY(file_new(opt, &f, err));
    f->mode = HURRAY_FILE_COPY;
    int st = block_new(f->allocator, BLOCK_COPY, size, PAGE, 0, &f->image, &bytes, err);
    if (st != HURRAY_OK) {
        hurray_file_destroy(f);
        return st;
    }
    memcpy(bytes, data, size);
    f->image_bytes = bytes;
    f->meta = bytes;
    f->meta_have = size;
    f->size = size;
    return open_finish(f, out, err);
}

int hurray_file_create_path(const char *path, const struct hurray_file_options *opt,
                          struct hurray_file **out, struct hurray_error *err) {
    struct hurray_file *f = NULL;
    int mode = opt ? opt->mode : HURRAY_FILE_COPY;
    HR_TRY(open_args(path, out, err));
    HR_FAIL_IF(mode != HURRAY_FILE_COPY && mode != HURRAY_FILE_MMAP, err, HURRAY_E_ARGUMENT,
               "mode", "mode: %d is neither HURRAY_FILE_COPY nor HURRAY_FILE_MMAP", mode);
    HR_TRY(file_new(opt, &f, err));
    f->path_len = strlen(path);
    f->path = hri_alloc(f->allocator, f->path_len + 1);
    if (!f->path) {
        hurray_file_destroy(f);
        return hri_fail(err, HURRAY_E_NOMEM, "file", "file: out of memory");
    }
    memcpy(f->path, path, f->path_len + 1);
    /* HR-FILE-10: a regular file or nothing, refused before a byte is read */
    int st = hri_os_open_regular(path, &f->fd, &f->size, err);
    if (st != HURRAY_OK) {
        hurray_file_destroy(f);
        return st;
    }
    return open_finish(f, out, err);
}

/* ==== accessors ==================================================================== */

size_t hurray_file_entry_count(const struct hurray_file *f) { return f ? f->count : 0; }

const char *hurray_file_entry_name(const struct hurray_file *f, size_t i) {
    return f && i < f->count ? f->entries[i].name : NULL;
}

int hurray_file_entry_kind(const struct hurray_file *f, size_t i) {
    return f && i < f->count ? f->entries[i].kind : 0;
}

int hurray_file_entry_is_member(const struct hurray_file *f, size_t i) {
    return f && i < f->count ? f->entries[i].is_member : 0;
}

int hurray_file_entry_buffer_count(const struct hurray_file *f, size_t i) {
    return f && i < f->count ? f->entries[i].buffer_count : -1;
}

size_t hurray_file_top_level_count(const struct hurray_file *f) { return f ? f->top_count : 0; }

size_t hurray_file_top_level_entry(const struct hurray_file *f, size_t k) {
    return f && k < f->top_count ? f->top[k] : SIZE_MAX;
}

int hurray_file_find(const struct hurray_file *f, const char *name, size_t *index) {
    if (!f || !name) return 0;
    size_t n = strlen(name), lo = 0, hi = f->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct entry_rec *r = &f->entries[f->sorted[mid]];
        int c = memcmp(r->name, name, r->name_len < n ? r->name_len : n);
        if (c == 0) c = (r->name_len > n) - (r->name_len < n);
        if (c == 0) {
            if (index) *index = f->sorted[mid];
            return 1;
        }
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return 0;
}

int hurray_file_entry_descriptor(const struct hurray_file *f, size_t i,
                                 struct hurray_descriptor *out, struct hurray_error *err) {
    HR_FAIL_IF(!f || !out, err, HURRAY_E_ARGUMENT, "file", "entry_descriptor: NULL argument");
    HR_FAIL_IF(i >= f->count, err, HURRAY_E_ARGUMENT, "index",
               "index: entry %zu of %zu does not exist", i, f->count);
    return decode_entry(f, i, out, err);
}

int hurray_file_read_buffer(const struct hurray_file *f, size_t i, unsigned b, uint64_t offset,
                            uint64_t len, void *dst, struct hurray_error *err) {
    struct hurray_descriptor d;
    uint64_t size = 0;
    HR_FAIL_IF(!f || (len && !dst), err, HURRAY_E_ARGUMENT, "file",
               "read_buffer: NULL argument");
    HR_FAIL_IF(i >= f->count, err, HURRAY_E_ARGUMENT, "index",
               "index: entry %zu of %zu does not exist", i, f->count);
    const struct entry_rec *r = &f->entries[i];
    HR_FAIL_IF(r->kind != HURRAY_FILE_KIND_TENSOR || b >= r->buffer_count, err,
               HURRAY_E_ARGUMENT, "index", "index[%zu]: \"%.64s\" has no buffer %u", i, r->name,
               b);
    /* the buffer's size: from its descriptor (validated at open) */
    hurray_descriptor_init(&d);
    d.allocator = f->allocator;
    int st = decode_entry(f, i, &d, err);
    if (st == HURRAY_OK) size = d.buffers[b].size;
    hurray_descriptor_reset(&d);
    HR_TRY(st);
    HR_FAIL_IF(offset > size || len > size - offset, err, HURRAY_E_ARGUMENT, "index",
               "index[%zu]: bytes [%llu, +%llu) of buffer %u of \"%.64s\" are past its %llu "
               "bytes",
               i, (unsigned long long)offset, (unsigned long long)len, b, r->name,
               (unsigned long long)size);
    /* data_offset + buffer offset + size <= data_offset + data_length: checked at open */
    return read_exact(f, dst, len, f->h.data_offset + buffer_offset(f, i, b) + offset, err);
}

const struct hurray_kv *hurray_file_kv(const struct hurray_file *f) { return f ? &f->kv : NULL; }

int hurray_file_kv_each(struct hurray_file *f, hurray_kv_entry_fn fn, void *ctx,
                        struct hurray_error *err) {
    HR_FAIL_IF(!f || !fn, err, HURRAY_E_ARGUMENT, "file", "file_kv_each: NULL argument");
    if (f->parts & HURRAY_FILE_PARTS_KV) { /* decoded at open */
        for (size_t i = 0; i < f->kv.count; i++) {
            int st = fn(ctx, &f->kv.entries[i], i, f->kv.count);
            if (st != HURRAY_OK) return st;
        }
        return HURRAY_OK;
    }
    return name_file(f, kv_section(f, fn, ctx, err), err);
}

/* ==== writing (HR-FILE-7) ============================================================ */

struct plan_entry {
    const char *name; /* the caller's, or generated in the plan's names block */
    size_t name_len;
    const struct hurray_item *item;
    size_t desc_len; /* its canonical encoding's length, counted while planning */
    uint8_t top;
};

struct file_plan {
    struct plan_entry *entries;
    size_t count;
    char *names; /* generated member names, NUL-terminated */
    size_t names_len, names_used;
    uint64_t *offsets; /* every buffer, index order, data-relative */
    size_t n_offsets;
    uint64_t kv_length, index_length, meta_end, data_offset, data_length, total;
    const struct hurray_allocator *a;
    const struct hurray_limits *lim; /* a reader's limits (HR-FILE-15), or NULL */
    const struct hurray_limits *vlim; /* what descriptors are validated under: `lim`, else
                                         the format maxima */
};

static void plan_free(struct file_plan *p) {
    hri_free(p->a, p->entries, p->count * sizeof *p->entries);
    hri_free(p->a, p->names, p->names_len);
    hri_free(p->a, p->offsets, p->n_offsets * sizeof *p->offsets);
    memset(p, 0, sizeof *p);
}

static int is_composite_item(const struct hurray_item *it) {
    return it->descriptor->layout.tag == HURRAY_LAYOUT_COMPOSITE;
}

static size_t decimal_len(uint32_t v) {
    char d[11];
    return decimal(v, d);
}

/* First walk: entries, buffers and generated-name bytes of one item tree;
 * pointers, depth and name lengths checked on the way. */
static int count_item(struct file_plan *p, const struct hurray_item *it, size_t name_len,
                      unsigned depth, struct hurray_error *err) {
    HR_FAIL_IF(!it || !it->descriptor, err, HURRAY_E_ARGUMENT, "item",
               "item: NULL item or descriptor (entry %zu)", p->count);
    HR_FAIL_IF(p->count >= HURRAY_MAX_FILE_TENSORS_FORMAT, err, HURRAY_E_LIMIT, "index",
               "index: more than 2^32-1 entries (HR-FILE-7)");
    p->count++;
    if (!is_composite_item(it)) {
        p->n_offsets += it->descriptor->buffer_count;
        return HURRAY_OK;
    }
    HR_FAIL_IF(depth + 1 > HURRAY_MAX_COMPOSITE_DEPTH_FORMAT, err, HURRAY_E_LIMIT, "item",
               "item: composites nest deeper than %u (HR-FILE-7)",
               HURRAY_MAX_COMPOSITE_DEPTH_FORMAT);
    HR_FAIL_IF(it->member_count && !it->members, err, HURRAY_E_ARGUMENT, "item",
               "item: composite without its members table");
    for (uint32_t k = 0; k < it->member_count; k++) {
        size_t len = name_len + 1 + decimal_len(k);
        HR_FAIL_IF(len > HURRAY_MAX_NAME_BYTES_FORMAT, err, HURRAY_E_LIMIT, "name",
                   "name: generated member name of %zu bytes exceeds 65535 (HR-FILE-3)", len);
        HR_FAIL_IF(p->lim && len > p->lim->max_name_bytes, err, HURRAY_E_LIMIT, "name",
                   "name: generated member name of %zu bytes exceeds max_name_bytes %u "
                   "(HR-FILE-15)",
                   len, (unsigned)p->lim->max_name_bytes);
        p->names_len += len + 1;
        HR_TRY(count_item(p, it->members[k], len, depth + 1, err));
    }
    return HURRAY_OK;
}

/* Second walk: the flattened entries, pre-order, with generated names. */
static void fill_item(struct file_plan *p, size_t *at, const struct hurray_item *it,
                      const char *name, size_t name_len, int top) {
    struct plan_entry *e = &p->entries[(*at)++];
    e->name = name;
    e->name_len = name_len;
    e->item = it;
    e->top = (uint8_t)top;
    if (!is_composite_item(it)) return;
    for (uint32_t k = 0; k < it->member_count; k++) {
        char *child = p->names + p->names_used, digits[11];
        size_t nd = decimal(k, digits);
        memcpy(child, name, name_len);
        child[name_len] = '.';
        memcpy(child + name_len + 1, digits, nd);
        child[name_len + 1 + nd] = 0;
        p->names_used += name_len + 1 + nd + 1;
        fill_item(p, at, it->members[k], child, name_len + 1 + nd, 0);
    }
}

/* First pass: the names checked, the entries, buffers and generated names counted, and
 * the tables allocated (filled by plan_make's pass). */
static int plan_entries(struct file_plan *p, const struct hurray_file_contents *c,
                        struct hurray_error *err) {
    HR_FAIL_IF(c->count && !c->entries, err, HURRAY_E_ARGUMENT, "entries",
               "file: NULL entries");
    for (size_t i = 0; i < c->count; i++) {
        char f[HURRAY_ERROR_FIELD_MAX];
        const char *name = c->entries[i].name;
        HR_FAIL_IF(!name, err, HURRAY_E_ARGUMENT, "name", "entries[%zu]: NULL name", i);
        size_t n = strlen(name);
        uint64_t max = p->lim ? p->lim->max_name_bytes : HURRAY_MAX_NAME_BYTES_FORMAT;
        /* checked once; only a refused name has its field formatted (the same check again,
         * with the error record): no printf per entry saved */
        if (hri_name_check((const uint8_t *)name, n, max, "name", UINT64_MAX, NULL) != HURRAY_OK)
            return hri_name_check((const uint8_t *)name, n, max,
                                  hri_fieldf(f, "entries[%zu].name", i), UINT64_MAX, err);
        HR_TRY(count_item(p, c->entries[i].item, n, 0, err));
    }
    HR_FAIL_IF(p->lim && p->count > p->lim->max_file_tensors, err, HURRAY_E_LIMIT, "index",
               "index: %zu entries (composite members included) exceed max_file_tensors %llu "
               "(HR-FILE-15)",
               p->count, (unsigned long long)p->lim->max_file_tensors);
    size_t entries = p->count, offsets = p->n_offsets;
    p->count = p->n_offsets = 0; /* sizes of what is allocated, set below */
    /* not zeroed: the pass fills each entry (fill_item, then check_plan_entry's length) and
     * each offset (place_entry) before anything reads it; the names block as it goes */
    HR_TRY(alloc_array_raw(p->a, entries, sizeof *p->entries, (void **)&p->entries, err));
    p->count = entries;
    HR_TRY(alloc_array_raw(p->a, p->names_len, 1, (void **)&p->names, err));
    HR_TRY(alloc_array_raw(p->a, offsets, sizeof *p->offsets, (void **)&p->offsets, err));
    p->n_offsets = offsets;
    return HURRAY_OK;
}

/* The buffers an item lends agree with its buffer table. */
static int check_item_buffers(const struct hurray_item *it, size_t i, struct hurray_error *err) {
    const struct hurray_descriptor *d = it->descriptor;
    char f[HURRAY_ERROR_FIELD_MAX];
    HR_FAIL_IF(it->members || it->member_count, err, HURRAY_E_ARGUMENT,
               entry_field(f, i, "members"), "%s: a tensor item has no members", f);
    HR_FAIL_IF(d->buffer_count && !it->buffers, err, HURRAY_E_ARGUMENT,
               entry_field(f, i, "buffers"), "%s: %u buffers declared, none given", f,
               (unsigned)d->buffer_count);
    for (unsigned b = 0; b < d->buffer_count; b++) {
        /* the field is formatted on failure only: this runs for every buffer saved */
        HR_FAIL_IF(it->buffers[b].size != d->buffers[b].size, err, HURRAY_E_ARGUMENT,
                   hri_fieldf(f, "index[%zu].buffers[%u]", i, b),
                   "%s: %llu bytes given, the buffer table says %llu (HR-FILE-7)", f,
                   (unsigned long long)it->buffers[b].size,
                   (unsigned long long)d->buffers[b].size);
        HR_FAIL_IF(it->buffers[b].size && !it->buffers[b].data, err, HURRAY_E_ARGUMENT,
                   hri_fieldf(f, "index[%zu].buffers[%u]", i, b), "%s: NULL data", f);
    }
    return HURRAY_OK;
}

/* A refusal about entry i names it: field "index[i]/<field>", message prefixed with the
 * entry's name (HR-FILE-15: the caller knows its tensors by name, not by index). */
static int name_entry(int st, const struct plan_entry *e, size_t i, struct hurray_error *err) {
    char pf[HURRAY_ERROR_FIELD_MAX];
    if (st == HURRAY_OK || !err) return st;
    in_region(st, hri_fieldf(pf, "index[%zu]", i), 0, err);
    char m[HURRAY_ERROR_MESSAGE_MAX];
    int len = (int)(e->name_len > 64 ? 64 : e->name_len);
    if (snprintf(m, sizeof m, "entry \"%.*s\"%s: %s", len, e->name,
                 e->name_len > 64 ? "..." : "", err->message) >= 0) /* truncated: still a message */
        memcpy(err->message, m, sizeof m);
    return st;
}

static int check_plan_entry(struct plan_entry *e, size_t i, const struct hurray_limits *vlim,
                            struct hurray_error *err) {
    const struct hurray_descriptor *d = e->item->descriptor;
    int composite = is_composite_item(e->item);
    /* validated once, through the one descriptor validator, under the reader's limits
     * (HR-FILE-15) when given, which also proves the format's rules, else under the format
     * maxima, and its canonical length counted (hurray_descriptor_encode's first half):
     * write_index writes the bytes straight into the index from this length, so each
     * descriptor is validated and encoded once */
    HR_TRY(name_entry(hri_descriptor_measure(d, vlim, &e->desc_len, err), e, i, err));
    HR_TRY(check_entry_descriptor(d, i,
                                  composite ? HURRAY_FILE_KIND_COMPOSITE : HURRAY_FILE_KIND_TENSOR,
                                  err));
    if (!composite) HR_TRY(check_item_buffers(e->item, i, err));
    return HURRAY_OK;
}

/* A top-level item through the composite validator, once every descriptor of its tree has
 * been found valid on its own. */
static int check_plan_tree(const struct file_plan *p, size_t i, struct hurray_error *err) {
    return name_entry(hurray_composite_validate(p->entries[i].item, p->vlim, err),
                      &p->entries[i], i, err);
}

static int plan_name_compare(const struct plan_entry *a, const struct plan_entry *b) {
    int c = memcmp(a->name, b->name, a->name_len < b->name_len ? a->name_len : b->name_len);
    if (c != 0) return c;
    return a->name_len == b->name_len ? 0 : a->name_len < b->name_len ? -1 : 1;
}

/* The names' table hash, 8 bytes at a time (the tail zero-padded): each word multiplied in
 * and its high bits folded down, then a final mix (MurmurHash3's), since the table indexes
 * with the low bits and one checkpoint's names share long prefixes and suffixes. */
static uint64_t plan_name_hash(const struct plan_entry *e) {
    const uint64_t k = UINT64_C(0x9e3779b97f4a7c15);
    uint64_t h = (uint64_t)e->name_len * k, w;
    size_t at = 0;
    for (; e->name_len - at >= 8; at += 8) {
        memcpy(&w, e->name + at, 8);
        h = (h ^ w) * k;
        h ^= h >> 31;
    }
    w = 0;
    memcpy(&w, e->name + at, e->name_len - at);
    h = (h ^ w) * k;
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    return h ^ (h >> 33);
}

/* No two entries share a name (HR-FILE-5): a hash table of entry indices (open addressing,
 * at least twice as many slots as entries), each entry added as the pass meets it, linear
 * in the names' bytes. The entry refused is the one a sort by name would meet first: the
 * second occurrence of the smallest duplicated name. */
struct dup_table {
    size_t cap, *slot; /* entry index + 1; 0 = empty */
    const struct plan_entry *dup;
};

static int dup_init(const struct file_plan *p, struct dup_table *t, struct hurray_error *err) {
    t->cap = 16;
    t->slot = NULL;
    t->dup = NULL;
    if (p->count < 2) return HURRAY_OK;
    HR_FAIL_IF(p->count > SIZE_MAX / 4, err, HURRAY_E_NOMEM, "file", "file: table too large");
    while (t->cap / 2 < p->count) t->cap *= 2;
    return alloc_array(p->a, t->cap, sizeof *t->slot, (void **)&t->slot, err); /* zeroed */
}

static void dup_add(const struct file_plan *p, struct dup_table *t, size_t i) {
    const struct plan_entry *e = &p->entries[i];
    if (!t->slot) return;
    size_t at = (size_t)plan_name_hash(e) & (t->cap - 1);
    for (; t->slot[at] != 0; at = (at + 1) & (t->cap - 1)) {
        const struct plan_entry *o = &p->entries[t->slot[at] - 1];
        if (o->name_len == e->name_len && memcmp(o->name, e->name, e->name_len) == 0) break;
    }
    if (t->slot[at] == 0) t->slot[at] = i + 1;
    else if (t->dup == NULL || plan_name_compare(e, t->dup) < 0) t->dup = e;
}

static int dup_finish(const struct file_plan *p, struct dup_table *t, struct hurray_error *err) {
    const struct plan_entry *dup = t->dup;
    hri_free(p->a, t->slot, t->slot ? t->cap * sizeof *t->slot : 0);
    t->slot = NULL;
    if (dup == NULL) return HURRAY_OK;
    char f[HURRAY_ERROR_FIELD_MAX];
    return hri_fail(err, HURRAY_E_DUPLICATE, entry_field(f, (size_t)(dup - p->entries), "name"),
                    "%s: \"%.*s\" names two entries (generated member names included) "
                    "(HR-FILE-5)",
                    f, (int)(dup->name_len > 64 ? 64 : dup->name_len), dup->name);
}

/* Canonical placement (HR-FILE-4, HR-FILE-2) with checked arithmetic, entry by entry:
 * *idx is the index length so far, *pos the data length so far, *k the next offset. */
static int place_entry(struct file_plan *p, size_t i, uint64_t *idx, uint64_t *pos, size_t *k) {
    const struct hurray_descriptor *d = p->entries[i].item->descriptor;
    uint64_t n = ENTRY_HEADER_BYTES + round_up(p->entries[i].name_len, 8) +
                 p->entries[i].desc_len + 8u * (uint64_t)d->buffer_count;
    int ovf = hri_add_u64(*idx, n, idx);
    if (is_composite_item(p->entries[i].item)) return ovf;
    for (unsigned b = 0; b < d->buffer_count; b++, (*k)++) {
        ovf |= round_up_checked(*pos, placement_alignment(d->buffers[b].alignment_log2),
                                &p->offsets[*k]);
        ovf |= hri_add_u64(p->offsets[*k], d->buffers[b].size, pos);
    }
    return ovf;
}

/* The file's regions from the index and data lengths (HR-FILE-2). */
static int plan_regions(struct file_plan *p, uint64_t idx, uint64_t pos, int ovf,
                        struct hurray_error *err) {
    p->index_length = idx;
    ovf |= hri_add_u64(HURRAY_FILE_HEADER_BYTES + p->kv_length, idx, &p->meta_end);
    ovf |= round_up_checked(p->meta_end, PAGE, &p->data_offset);
    ovf |= round_up_checked(pos, DATA_PAD, &p->data_length);
    ovf |= hri_add_u64(p->data_offset, p->data_length, &p->total);
    HR_FAIL_IF(ovf || p->meta_end > SIZE_MAX, err, HURRAY_E_OVERFLOW, "file",
               "file: its size overflows 64 bits");
    return HURRAY_OK;
}

/* The KV map under a reader's limits (HR-FILE-15): entries, keys, the section's length. */
static int check_kv_limits(const struct file_plan *p, const struct hurray_file_contents *c,
                           struct hurray_error *err) {
    const struct hurray_limits *lim = p->lim;
    if (!lim) return HURRAY_OK;
    HR_FAIL_IF(c->kv_count > lim->max_kv_entries, err, HURRAY_E_LIMIT, "kv",
               "kv: %zu entries exceed max_kv_entries %llu (HR-FILE-15)", c->kv_count,
               (unsigned long long)lim->max_kv_entries);
    for (size_t i = 0; i < c->kv_count; i++)
        HR_FAIL_IF(c->kv[i].key_len > lim->max_name_bytes, err, HURRAY_E_LIMIT, "kv",
                   "kv: key \"%.*s...\" of %lu bytes exceeds max_name_bytes %u (HR-FILE-15)",
                   (int)(c->kv[i].key_len > 64 ? 64 : c->kv[i].key_len), c->kv[i].key,
                   (unsigned long)c->kv[i].key_len,
                   (unsigned)lim->max_name_bytes);
    HR_FAIL_IF(p->kv_length > lim->max_kv_bytes, err, HURRAY_E_LIMIT, "kv",
               "kv: the section is %llu bytes, more than max_kv_bytes %llu (HR-FILE-15)",
               (unsigned long long)p->kv_length, (unsigned long long)lim->max_kv_bytes);
    return HURRAY_OK;
}

/* The second pass, one top-level entry at a time while its records are in the cache: its
 * tree's entries filled in, each checked (its descriptor validated and measured), the tree
 * validated, its names added to the duplicate table, its bytes placed. The refusals keep
 * the order of a planner that did each step over every entry before the next: a
 * descriptor first (the first in index order), then a tree, then a duplicate name, then the
 * KV section, then an overflow; the first tree refusal is kept aside until every
 * descriptor has been checked. */
static int plan_pass(struct file_plan *p, const struct hurray_file_contents *c,
                     struct hurray_error *err) {
    struct dup_table dups;
    struct hurray_error tree_err;
    int tree_st = HURRAY_OK, ovf = 0;
    uint64_t idx = 8, pos = 0;
    size_t at = 0, k = 0;
    hurray_error_clear(&tree_err);
    HR_TRY(dup_init(p, &dups, err));
    int st = HURRAY_OK;
    for (size_t i = 0; st == HURRAY_OK && i < c->count; i++) {
        size_t first = at;
        fill_item(p, &at, c->entries[i].item, c->entries[i].name, strlen(c->entries[i].name),
                  1);
        for (size_t j = first; st == HURRAY_OK && j < at; j++)
            st = check_plan_entry(&p->entries[j], j, p->vlim, err);
        if (st != HURRAY_OK) break;
        if (tree_st == HURRAY_OK) tree_st = check_plan_tree(p, first, err ? &tree_err : NULL);
        for (size_t j = first; j < at; j++) {
            dup_add(p, &dups, j);
            ovf |= place_entry(p, j, &idx, &pos, &k);
        }
    }
    if (st == HURRAY_OK && tree_st != HURRAY_OK) {
        if (err) *err = tree_err;
        st = tree_st;
    }
    int dst = dup_finish(p, &dups, st == HURRAY_OK ? err : NULL);
    if (st == HURRAY_OK) st = dst;
    if (st == HURRAY_OK && c->kv_count)
        st = in_region(hurray_kv_encoded_len(c->kv, c->kv_count, p->a, &p->kv_length, err), "kv",
                       0, err);
    if (st == HURRAY_OK) st = check_kv_limits(p, c, err);
    if (st == HURRAY_OK) st = plan_regions(p, idx, pos, ovf, err);
    return st;
}

static int plan_make(const struct hurray_file_contents *c, const struct hurray_allocator *a,
                     const struct hurray_limits *lim, struct file_plan *p,
                     struct hurray_error *err) {
    struct hurray_limits eff;
    memset(p, 0, sizeof *p);
    p->a = a;
    if (lim) {
        eff = *lim;
        hurray_limits_clamp(&eff);
        p->lim = &eff;
    } else {
        hri_limits_format_max(&eff);
    }
    p->vlim = &eff;
    HR_FAIL_IF(!c, err, HURRAY_E_ARGUMENT, "contents", "file: NULL contents");
    int st = plan_entries(p, c, err);
    if (st == HURRAY_OK) st = plan_pass(p, c, err);
    p->lim = p->vlim = NULL; /* `eff` ends here; only planning reads the limits */
    if (st != HURRAY_OK) plan_free(p);
    return st;
}


/* ---- emitting ---------------------------------------------------------------------- */

static void write_header(struct hri_writer *w, const struct file_plan *p) {
    hri_w_bytes(w, HURRAY_FILE_MAGIC, 8);
    hri_w_u16(w, HURRAY_FILE_VERSION_MAJOR);
    hri_w_u16(w, HURRAY_FILE_VERSION_MINOR);
    hri_w_u32(w, 0);
    hri_w_u64(w, HURRAY_FILE_HEADER_BYTES);
    hri_w_u64(w, p->index_length);
    hri_w_u64(w, p->kv_length ? HURRAY_FILE_HEADER_BYTES + p->index_length : 0);
    hri_w_u64(w, p->kv_length);
    hri_w_u64(w, p->data_offset);
    hri_w_u64(w, p->data_length);
}

/* The file as a list of byte ranges: metadata, zero padding (from one zero
 * page: every pad is shorter than 4096 bytes), buffers. At most
 * 3 + 2 * n_offsets ranges. */

struct ranges {
    struct hri_os_iovec *v;
    size_t n, cap;
    uint64_t total;
    uint64_t pos; /* data-relative: where the next buffer's padding starts */
};

static void put_range(struct ranges *r, const void *base, uint64_t len) {
    if (len == 0) return;
    r->v[r->n].base = base;
    r->v[r->n].len = (size_t)len;
    r->n++;
    r->total += len;
}

/* A tensor entry's buffers, each after the zeros up to its planned offset. */
static void put_buffers(struct ranges *r, const struct file_plan *p, const struct hurray_item *it,
                        size_t k) {
    for (unsigned b = 0; b < it->descriptor->buffer_count; b++, k++) {
        put_range(r, zero_page, p->offsets[k] - r->pos);
        put_range(r, it->buffers[b].data, it->buffers[b].size);
        r->pos = p->offsets[k] + it->buffers[b].size;
    }
}

/* The index, and beside each tensor entry its ranges (one pass over the entries). */
static int write_index(struct hri_writer *w, const struct file_plan *p, struct ranges *r,
                       struct hurray_error *err) {
    size_t k = 0;
    hri_w_u64(w, p->count);
    for (size_t i = 0; i < p->count; i++) {
        const struct plan_entry *e = &p->entries[i];
        const struct hurray_descriptor *d = e->item->descriptor;
        int composite = is_composite_item(e->item);
        size_t padded = (size_t)round_up(e->name_len, 8);
        uint8_t *h = hri_w_reserve(w, ENTRY_HEADER_BYTES + padded);
        HR_FAIL_IF(!h, err, HURRAY_E_INTERNAL, "index", "index: planned length exceeded");
        hri_store_u32le(h, (uint32_t)e->name_len);
        h[4] = composite ? HURRAY_FILE_KIND_COMPOSITE : HURRAY_FILE_KIND_TENSOR;
        h[5] = h[6] = h[7] = 0;
        /* the name's last word zeroed, then the name over it (names are non-empty) */
        if (padded) hri_store_u64le(h + ENTRY_HEADER_BYTES + padded - 8, 0);
        memcpy(h + ENTRY_HEADER_BYTES, e->name, e->name_len);
        /* validated and measured while planning (check_plan_entry): written once, here */
        HR_TRY(hri_descriptor_write(w, d, e->desc_len, err));
        if (!composite) put_buffers(r, p, e->item, k);
        if (d->buffer_count) {
            uint8_t *o = hri_w_reserve(w, 8u * (size_t)d->buffer_count);
            HR_FAIL_IF(!o, err, HURRAY_E_INTERNAL, "index", "index: planned length exceeded");
            for (unsigned b = 0; b < d->buffer_count; b++)
                hri_store_u64le(o + 8u * b, p->offsets[k++]);
        }
    }
    return HURRAY_OK;
}

/* Header, index and KV in one block of meta_end bytes, and the file's ranges in r. */
static int build_meta(const struct file_plan *p, const struct hurray_file_contents *c,
                      uint8_t *meta, struct ranges *r, struct hurray_error *err) {
    struct hri_writer w;
    size_t kv_written = 0;
    hri_writer_init(&w, meta, (size_t)p->meta_end);
    write_header(&w, p);
    put_range(r, meta, p->meta_end);
    put_range(r, zero_page, p->data_offset - p->meta_end);
    HR_TRY(write_index(&w, p, r, err));
    put_range(r, zero_page, p->data_length - r->pos);
    if (p->kv_length) {
        HR_TRY(hurray_kv_encode(c->kv, c->kv_count, p->a, meta + w.pos, w.cap - w.pos,
                                &kv_written, err));
        w.pos += kv_written;
    }
    HR_FAIL_IF(w.overflowed || w.pos != p->meta_end, err, HURRAY_E_INTERNAL, "file",
               "file: metadata is %zu bytes, planned %llu", w.pos,
               (unsigned long long)p->meta_end);
    return HURRAY_OK;
}

/* Ranges written between two progress reports, at most: a small-tensor file (4 KiB each)
 * is then one call and one report per 4 MiB, not per MiB. */
#define PROGRESS_RANGES 1024

/* The caller's progress hook (NULL-tolerant): a non-zero return cancels the write. */
static int report(const struct hurray_file_write_options *o, uint64_t done, uint64_t total,
                  struct hurray_error *err) {
    if (!o || !o->progress || o->progress(o->progress_ctx, done, total) == 0) return HURRAY_OK;
    return hri_os_cancelled(err, "file", "write cancelled by the caller");
}

/* Writes the ranges to fd: all at once without a progress hook, else in chunks of at most
 * HURRAY_FILE_PROGRESS_CHUNK bytes and PROGRESS_RANGES ranges with the hook called between
 * them (a range longer than a chunk is split). */
static int write_ranges(hri_os_fd fd, const struct ranges *r,
                        const struct hurray_file_write_options *o, struct hurray_error *err) {
    if (!o || !o->progress) return hri_os_writev_all(fd, r->v, r->n, NULL, "file", err);
    uint64_t done = 0;
    size_t i = 0, skip = 0; /* r->v[i] is next, its first `skip` bytes written */
    HR_TRY(report(o, 0, r->total, err));
    while (i < r->n) {
        /* up to IOV_MAX (1024) ranges a chunk: the OS layer's whole batch, one call */
        struct hri_os_iovec v[PROGRESS_RANGES];
        size_t k = 0, j = i, off = skip;
        uint64_t chunk = 0;
        while (j < r->n && k < PROGRESS_RANGES && chunk < HURRAY_FILE_PROGRESS_CHUNK) {
            size_t len = r->v[j].len - off;
            if (len > HURRAY_FILE_PROGRESS_CHUNK - chunk)
                len = (size_t)(HURRAY_FILE_PROGRESS_CHUNK - chunk);
            v[k].base = (const uint8_t *)r->v[j].base + off;
            v[k].len = len;
            k++;
            chunk += len;
            if (off + len == r->v[j].len) {
                j++;
                off = 0;
            } else {
                off += len;
            }
        }
        HR_TRY(hri_os_writev_all(fd, v, k, NULL, "file", err));
        i = j;
        skip = off;
        done += chunk;
        HR_TRY(report(o, done, r->total, err));
    }
    return HURRAY_OK;
}

/* Emits the planned file: copied into dst (cap >= p->total), or written to fd
 * with vectored writes. */
static int emit(const struct file_plan *p, const struct hurray_file_contents *c, uint8_t *dst,
                hri_os_fd fd, const struct hurray_file_write_options *o,
                struct hurray_error *err) {
    struct ranges r = {NULL, 0, 0, 0, 0};
    uint8_t *meta = NULL;
    HR_FAIL_IF(p->n_offsets > (SIZE_MAX / sizeof *r.v - 3) / 2 || p->total > SIZE_MAX, err,
               HURRAY_E_NOMEM, "file", "file: too large for this address space");
    r.cap = 3 + 2 * p->n_offsets;
    int st = alloc_array_raw(p->a, r.cap, sizeof *r.v, (void **)&r.v, err); /* put_range fills */
    if (st == HURRAY_OK) {
        meta = hri_alloc(p->a, (size_t)p->meta_end);
        if (!meta) st = hri_fail(err, HURRAY_E_NOMEM, "file", "file: out of memory");
    }
    if (st == HURRAY_OK) st = build_meta(p, c, meta, &r, err);
    if (st == HURRAY_OK) {
        if (r.total != p->total)
            st = hri_fail(err, HURRAY_E_INTERNAL, "file", "file: %llu bytes listed, planned %llu",
                          (unsigned long long)r.total, (unsigned long long)p->total);
    }
    if (st == HURRAY_OK && dst) {
        size_t at = 0;
        for (size_t k = 0; k < r.n; k++) {
            memcpy(dst + at, r.v[k].base, r.v[k].len);
            at += r.v[k].len;
        }
    } else if (st == HURRAY_OK) {
        st = write_ranges(fd, &r, o, err);
    }
    hri_free(p->a, meta, meta ? (size_t)p->meta_end : 0);
    hri_free(p->a, r.v, r.v ? r.cap * sizeof *r.v : 0);
    return st;
}

static const struct hurray_allocator *write_allocator(const struct hurray_file_write_options *o) {
    return o ? o->allocator : NULL;
}

static const struct hurray_limits *write_limits(const struct hurray_file_write_options *o) {
    return o ? o->limits : NULL;
}

int hurray_file_encoded_len(const struct hurray_file_contents *contents,
                            const struct hurray_file_write_options *opt, uint64_t *len,
                            struct hurray_error *err) {
    struct file_plan p;
    HR_FAIL_IF(!len, err, HURRAY_E_ARGUMENT, "len", "file_encoded_len: NULL argument");
    HR_TRY(plan_make(contents, write_allocator(opt), write_limits(opt), &p, err));
    *len = p.total;
    plan_free(&p);
    return HURRAY_OK;
}

int hurray_file_encode(const struct hurray_file_contents *contents,
                       const struct hurray_file_write_options *opt, uint8_t *dst, size_t cap,
                       size_t *written, struct hurray_error *err) {
    struct file_plan p;
    HR_FAIL_IF(!dst || !written, err, HURRAY_E_ARGUMENT, "dst", "file_encode: NULL argument");
    HR_TRY(plan_make(contents, write_allocator(opt), write_limits(opt), &p, err));
    int st = p.total > cap ? hri_fail(err, HURRAY_E_ARGUMENT, "cap",
                                      "cap: %zu bytes, the file needs %llu", cap,
                                      (unsigned long long)p.total)
                           : emit(&p, contents, dst, HRI_OS_NO_FD, NULL, err);
    if (st == HURRAY_OK) *written = (size_t)p.total;
    plan_free(&p);
    return st;
}

int hurray_file_write_fd(int fd, const struct hurray_file_contents *contents,
                         const struct hurray_file_write_options *opt, struct hurray_error *err) {
    struct file_plan p;
    HR_FAIL_IF(fd < 0, err, HURRAY_E_ARGUMENT, "fd", "file_write_fd: fd %d", fd);
    HR_TRY(plan_make(contents, write_allocator(opt), write_limits(opt), &p, err));
    int st = emit(&p, contents, NULL, (hri_os_fd)fd, opt, err);
    plan_free(&p);
    return st;
}

/* HR-FILE-7: written beside the path (the OS layer keeps the replaced file's
 * mode and follows a symbolic link to its target), flushed to stable storage
 * (skipped with HURRAY_FILE_WRITE_NO_SYNC, HR-FILE-18), and renamed over it,
 * so no reader sees a half-written file and a mapping of the old file keeps
 * its bytes. */
int hurray_file_write_path(const char *path, const struct hurray_file_contents *contents,
                           const struct hurray_file_write_options *opt,
                           struct hurray_error *err) {
    struct file_plan p;
    char tmp[4096 + 64];
    hri_os_fd fd = HRI_OS_NO_FD;
    HR_FAIL_IF(!path, err, HURRAY_E_ARGUMENT, "path", "file_write_path: NULL path");
    HR_FAIL_IF(opt && (opt->flags & ~(unsigned)HURRAY_FILE_WRITE_NO_SYNC), err,
               HURRAY_E_ARGUMENT, "flags", "file_write_path: unknown flags 0x%x", opt->flags);
    HR_TRY(plan_make(contents, write_allocator(opt), write_limits(opt), &p, err)); /* before touching the path */
    hri_os_temp_sweep(path); /* HR-FILE-16: leftovers of dead writers of this target */
    int st = hri_os_temp_create(path, tmp, sizeof tmp, &fd, err);
    if (st != HURRAY_OK) {
        plan_free(&p);
        return st;
    }
    /* the whole length first: the file system does not then extend the file write by write
     * (file-container.md § Writing) */
    st = hri_os_set_size(fd, p.total, tmp, err);
    if (st == HURRAY_OK) st = emit(&p, contents, NULL, fd, opt, err);
    plan_free(&p);
    if (st == HURRAY_OK && !(opt && (opt->flags & HURRAY_FILE_WRITE_NO_SYNC)))
        st = hri_os_sync(fd, tmp, err);
    int cst = hri_os_close(&fd, tmp, st == HURRAY_OK ? err : NULL);
    if (st == HURRAY_OK) st = cst;
    if (st == HURRAY_OK) st = hri_os_replace(tmp, path, err);
    if (st != HURRAY_OK) hri_os_remove(tmp);
    return st;
}
