/* The HRRYFILE container: validating reader and canonical writer.
 * docs/spec/file-container.md
 *
 * Reading is a thin driver over the one descriptor decoder and the one KV
 * decoder (STYLE 6): the functions below follow file-container.md § Decoding
 * order step by step (header, size, padding, index entries with their
 * descriptors, buffer placement, names, KV, composite trees) and stop at the
 * first failure. Every count is bounded by the bytes present before it sizes
 * an allocation. The bytes live in a refcounted image (a page-aligned copy or
 * a read-only mapping); loaded items borrow buffers from it and hold a
 * reference, so they outlive the file handle.
 *
 * Writing plans the whole file first (flattened entries with generated
 * member names, descriptor lengths, canonical offsets), validating
 * everything, and only then emits bytes through a sink (memory or fd), so a
 * refused file writes nothing. Platform calls (open, pread, write, mmap,
 * fstat) sit in small functions at the end of each half. */
#define _POSIX_C_SOURCE 200809L

#include "item_internal.h"
#include "kv_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

static int is_zero(const uint8_t *p, uint64_t n, uint64_t *first) {
    for (uint64_t k = 0; k < n; k++)
        if (p[k] != 0) { *first = k; return 0; }
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

/* ==== the image ============================================================ */

struct file_image {
    HRI_REFCOUNT refs;
    const uint8_t *base; /* page-aligned */
    uint64_t size;
    void *raw; /* copy: the allocation; mmap: the mapping */
    size_t raw_len;
    int mapped;
    const struct hurray_allocator *allocator;
};

static void image_unmap(struct file_image *img);

static void image_ref(struct file_image *img) { HRI_REF_INC(&img->refs); }

/* owner_release of loaded items; the last reference frees the bytes. */
static void image_unref(void *owner) {
    struct file_image *img = owner;
    if (!img || HRI_REF_DEC(&img->refs) != 1) return;
    if (img->mapped)
        image_unmap(img);
    else
        hri_free(img->allocator, img->raw, img->raw_len);
    hri_free(img->allocator, img, sizeof *img);
}

static int image_new(const struct hurray_allocator *a, struct file_image **out,
                     struct hurray_error *err) {
    struct file_image *img = hri_alloc(a, sizeof *img);
    HR_FAIL_IF(!img, err, HURRAY_E_NOMEM, "file", "file: out of memory");
    memset(img, 0, sizeof *img);
    HRI_REF_INIT(&img->refs, 1);
    img->allocator = a;
    *out = img;
    return HURRAY_OK;
}

/* An owned block of `size` bytes whose start is page-aligned. */
static int image_alloc_copy(const struct hurray_allocator *a, uint64_t size,
                            struct file_image **out, struct hurray_error *err) {
    struct file_image *img = NULL;
    HR_FAIL_IF(size > SIZE_MAX - PAGE, err, HURRAY_E_NOMEM, "file",
               "file: %llu bytes exceed the address space", (unsigned long long)size);
    HR_TRY(image_new(a, &img, err));
    img->raw_len = (size_t)size + (size_t)PAGE;
    img->raw = hri_alloc(a, img->raw_len);
    if (!img->raw) {
        hri_free(a, img, sizeof *img);
        return hri_fail(err, HURRAY_E_NOMEM, "file", "file: cannot allocate %llu bytes",
                        (unsigned long long)size);
    }
    uintptr_t at = ((uintptr_t)img->raw + (uintptr_t)PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    img->base = (const uint8_t *)at;
    img->size = size;
    *out = img;
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

/* Step 3: the file ends exactly at data_offset + data_length. */
static int header_size(const struct file_header *h, uint64_t size, struct hurray_error *err) {
    if (size < h->end)
        return hri_fail_at(err, HURRAY_E_TRUNCATED, size, "file",
                           "file: %llu bytes, the header says %llu (HR-FILE-4)",
                           (unsigned long long)size, (unsigned long long)h->end);
    if (size > h->end)
        return hri_fail_at(err, HURRAY_E_LENGTH, h->end, "file",
                           "file: %llu trailing bytes after data_offset + data_length "
                           "(HR-FILE-4)",
                           (unsigned long long)(size - h->end));
    return HURRAY_OK;
}

/* Steps 1-3 over the first min(size, 64) bytes of the file. */
static int parse_header(const uint8_t *src, uint64_t size, const struct hurray_limits *lim,
                        struct file_header *h, struct hurray_error *err) {
    if (size < HURRAY_FILE_HEADER_BYTES)
        return hri_fail_at(err, HURRAY_E_TRUNCATED, size, "header",
                           "header: the file has %llu bytes, the header alone is 64",
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
    return header_size(h, size, err);
}

/* ==== the file handle ========================================================== */

struct entry_rec {
    const uint8_t *name_src; /* into meta while parsing */
    const char *name;        /* NUL-terminated, in the names block */
    uint32_t name_len;
    uint8_t kind;
    uint8_t is_member;
    uint8_t buffer_count;
    uint32_t desc_len;
    uint64_t desc_pos;    /* in meta */
    uint64_t offsets_pos; /* in meta */
};

struct hurray_file {
    struct file_image *image;
    const uint8_t *meta; /* [0, data_offset): the image, or a copy (mmap) */
    uint8_t *meta_copy;
    size_t meta_copy_len;
    struct file_header h;
    struct entry_rec *entries;
    size_t count;
    char *names;
    size_t names_len;
    const struct entry_rec **sorted; /* by name */
    size_t *top;
    size_t top_count;
    struct hurray_descriptor *scratch;
    struct hurray_kv kv;
    struct hurray_limits lim;
    const struct hurray_allocator *allocator;
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
    hri_free(a, (void *)f->sorted, f->count * sizeof *f->sorted);
    hri_free(a, f->names, f->names_len);
    hri_free(a, f->entries, f->count * sizeof *f->entries);
    hri_free(a, f->meta_copy, f->meta_copy_len);
    image_unref(f->image);
    hri_free(a, f, sizeof *f);
}

/* ==== the index (steps 5-6) ================================================== */

struct composite_frame {
    size_t entry;   /* the head's entry index */
    uint32_t next;  /* the member expected next */
    uint32_t count; /* member_count */
};

struct index_parse {
    struct hurray_file *f;
    struct hri_cursor c; /* over meta, absolute offsets, short status LENGTH */
    struct hurray_decode_options dopt;
    const uint8_t *data; /* the data region, for padding checks */
    uint64_t end;        /* end of the previous buffer (data-relative) */
    struct composite_frame stack[HURRAY_MAX_COMPOSITE_DEPTH_FORMAT + 1];
    unsigned depth;
    uint64_t tree_total; /* members of the current top-level composite */
};

static const char *entry_field(char f[HURRAY_ERROR_FIELD_MAX], size_t i, const char *part) {
    return hri_fieldf(f, "index[%zu].%s", i, part);
}

/* Step 5: entry_count, bounded by the limit and by the index bytes. */
static int parse_entry_count(struct index_parse *p, uint64_t *count, struct hurray_error *err) {
    uint64_t at = hri_cursor_offset(&p->c);
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
    uint64_t at = hri_cursor_offset(&p->c);
    HR_TRY(hri_need_i(&p->c, r->name_len, "index[%u].name", (unsigned)i, err));
    HR_TRY(hri_read_bytes(&p->c, r->name_len, &r->name_src, "name", err));
    if (!hri_utf8_valid(r->name_src, r->name_len, 0))
        return hri_name_check(r->name_src, r->name_len, p->f->lim.max_name_bytes,
                              entry_field(f, i, "name"), at, err);
    size_t pad = hri_pad8(r->name_len);
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

/* HR-FILE-3: inside a composite, the entry is named "{head}.{index}". */
static int check_member_name(struct index_parse *p, size_t i, struct entry_rec *r,
                             struct hurray_error *err) {
    if (p->depth == 0) return HURRAY_OK;
    const struct composite_frame *fr = &p->stack[p->depth - 1];
    const struct entry_rec *head = &p->f->entries[fr->entry];
    char digits[11];
    size_t nd = decimal(fr->next, digits);
    r->is_member = 1;
    if (r->name_len == (uint64_t)head->name_len + 1 + nd &&
        memcmp(r->name_src, head->name_src, head->name_len) == 0 &&
        r->name_src[head->name_len] == '.' &&
        memcmp(r->name_src + head->name_len + 1, digits, nd) == 0)
        return HURRAY_OK;
    char f[HURRAY_ERROR_FIELD_MAX];
    return hri_fail(err, HURRAY_E_CONSTRAINT, entry_field(f, i, "name"),
                    "%s: member %u of composite \"%.*s\" must be named \"%.*s.%.*s\" "
                    "(HR-FILE-3)",
                    f, (unsigned)fr->next, (int)(head->name_len > 48 ? 48 : head->name_len),
                    (const char *)head->name_src,
                    (int)(head->name_len > 48 ? 48 : head->name_len),
                    (const char *)head->name_src, (int)nd, digits);
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
 * LENGTH (the file is complete, the index length lies). Leaves it decoded in
 * f->scratch. */
static int parse_entry_descriptor(struct index_parse *p, size_t i, struct entry_rec *r,
                                  struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    size_t consumed = 0;
    uint64_t at = hri_cursor_offset(&p->c);
    hurray_descriptor_reset(p->f->scratch);
    int st = hurray_descriptor_decode(p->c.src + p->c.pos, hri_cursor_left(&p->c), &p->dopt,
                                      p->f->scratch, &consumed, err);
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

static const char *buffer_field(char f[HURRAY_ERROR_FIELD_MAX], size_t i, unsigned b) {
    return hri_fieldf(f, "index[%zu].buffers[%u]", i, b);
}

/* § Buffer placement, checks 1-5, for one buffer. Fields are formatted only
 * on failure (the arguments of the failing call). */
static int place_buffer(struct index_parse *p, size_t i, unsigned b, uint64_t o, uint64_t at,
                        const struct hurray_buffer_desc *bd, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    uint64_t a = (uint64_t)1 << bd->alignment_log2, end = 0, first = 0;
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
    if (o != round_up(p->end, placement_alignment(bd->alignment_log2)))
        return hri_fail_at(err, HURRAY_E_OFFSET, at, buffer_field(f, i, b),
                           "%s: offset %llu, but the buffer's place is %llu (HR-FILE-2)", f,
                           (unsigned long long)o,
                           (unsigned long long)round_up(p->end,
                                                        placement_alignment(bd->alignment_log2)));
    if (hri_add_u64(o, bd->size, &end))
        return hri_fail_at(err, HURRAY_E_OVERFLOW, at, buffer_field(f, i, b),
                           "%s: offset + size overflows", f);
    if (end > p->f->h.data_length)
        return hri_fail_at(err, HURRAY_E_OFFSET, at, buffer_field(f, i, b),
                           "%s: ends at %llu, past the data region's %llu bytes (HR-FILE-2)", f,
                           (unsigned long long)end, (unsigned long long)p->f->h.data_length);
    if (!is_zero(p->data + p->end, o - p->end, &first))
        return hri_fail_at(err, HURRAY_E_RESERVED_NONZERO,
                           p->f->h.data_offset + p->end + first, buffer_field(f, i, b),
                           "%s: padding before the buffer is not zero (HR-FILE-2)", f);
    p->end = end;
    return HURRAY_OK;
}

static int parse_buffer_offsets(struct index_parse *p, size_t i, struct entry_rec *r,
                                struct hurray_error *err) {
    const struct hurray_descriptor *d = p->f->scratch;
    HR_TRY(hri_need_i(&p->c, (size_t)8 * d->buffer_count, "index[%u].buffers", (unsigned)i,
                      err));
    r->offsets_pos = p->c.pos;
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

static int parse_entry(struct index_parse *p, size_t i, struct hurray_error *err) {
    struct entry_rec *r = &p->f->entries[i];
    HR_TRY(parse_entry_header(p, i, r, err));
    HR_TRY(parse_entry_name(p, i, r, err));
    HR_TRY(check_member_name(p, i, r, err));
    if (p->depth > 0) p->stack[p->depth - 1].next++;
    HR_TRY(parse_entry_descriptor(p, i, r, err));
    HR_TRY(enter_composite(p, i, err));
    HR_TRY(parse_buffer_offsets(p, i, r, err));
    leave_entries(p, r->kind == HURRAY_FILE_KIND_COMPOSITE);
    return HURRAY_OK;
}

/* Step 6: the index ends exactly; no composite is left open; the data region
 * ends at the last buffer rounded up to 64, zero-padded. */
static int parse_index_end(struct index_parse *p, struct hurray_error *err) {
    uint64_t first = 0;
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
    if (!is_zero(p->data + p->end, h->data_length - p->end, &first))
        return hri_fail_at(err, HURRAY_E_RESERVED_NONZERO, h->data_offset + p->end + first,
                           "data.padding", "data.padding: not zero after the last buffer "
                           "(HR-FILE-2)");
    return HURRAY_OK;
}

static int alloc_array(const struct hurray_allocator *a, size_t n, size_t size, void **out,
                       struct hurray_error *err) {
    *out = NULL;
    if (n == 0) return HURRAY_OK;
    HR_FAIL_IF(n > SIZE_MAX / size, err, HURRAY_E_NOMEM, "file", "file: table too large");
    *out = hri_alloc(a, n * size);
    HR_FAIL_IF(!*out, err, HURRAY_E_NOMEM, "file", "file: out of memory (%zu bytes)", n * size);
    memset(*out, 0, n * size);
    return HURRAY_OK;
}

/* Steps 5-6. */
static int parse_index(struct hurray_file *f, struct hurray_error *err) {
    struct index_parse p;
    uint64_t count = 0;
    memset(&p, 0, sizeof p);
    p.f = f;
    hri_cursor_init(&p.c, f->meta, (size_t)(f->h.index_offset + f->h.index_length),
                    HURRAY_E_LENGTH);
    p.c.pos = (size_t)f->h.index_offset;
    p.dopt.limits = &f->lim;
    p.dopt.allocator = f->allocator;
    p.data = f->image->base + f->h.data_offset;
    HR_TRY(parse_entry_count(&p, &count, err));
    HR_TRY(alloc_array(f->allocator, (size_t)count, sizeof *f->entries, (void **)&f->entries,
                       err));
    f->count = (size_t)count;
    for (size_t i = 0; i < f->count; i++) HR_TRY(parse_entry(&p, i, err));
    hurray_descriptor_reset(f->scratch);
    return parse_index_end(&p, err);
}

/* Step 7: names unique (HR-FILE-5); the sorted table then serves lookups. */
static int name_compare(const void *pa, const void *pb) {
    const struct entry_rec *a = *(const struct entry_rec *const *)pa;
    const struct entry_rec *b = *(const struct entry_rec *const *)pb;
    int c = memcmp(a->name, b->name, a->name_len < b->name_len ? a->name_len : b->name_len);
    if (c != 0) return c;
    if (a->name_len != b->name_len) return a->name_len < b->name_len ? -1 : 1;
    return (a > b) - (a < b); /* file order among equals: the later one is reported */
}

static int copy_names(struct hurray_file *f, struct hurray_error *err) {
    size_t total = 0, at = 0;
    for (size_t i = 0; i < f->count; i++) total += (size_t)f->entries[i].name_len + 1;
    HR_TRY(alloc_array(f->allocator, total, 1, (void **)&f->names, err));
    f->names_len = total;
    for (size_t i = 0; i < f->count; i++) {
        struct entry_rec *r = &f->entries[i];
        memcpy(f->names + at, r->name_src, r->name_len);
        f->names[at + r->name_len] = 0;
        r->name = f->names + at;
        at += (size_t)r->name_len + 1;
    }
    return HURRAY_OK;
}

static int check_names(struct hurray_file *f, struct hurray_error *err) {
    HR_TRY(copy_names(f, err));
    HR_TRY(alloc_array(f->allocator, f->count, sizeof *f->sorted, (void **)&f->sorted, err));
    for (size_t i = 0; i < f->count; i++) f->sorted[i] = &f->entries[i];
    if (f->count > 1) qsort((void *)f->sorted, f->count, sizeof *f->sorted, name_compare);
    for (size_t k = 1; k < f->count; k++) {
        const struct entry_rec *a = f->sorted[k - 1], *b = f->sorted[k];
        if (a->name_len != b->name_len || memcmp(a->name, b->name, a->name_len) != 0) continue;
        char fl[HURRAY_ERROR_FIELD_MAX];
        return hri_fail(err, HURRAY_E_DUPLICATE,
                        entry_field(fl, (size_t)(b - f->entries), "name"),
                        "%s: \"%.*s\" is also the name of entry %zu (HR-FILE-5)", fl,
                        (int)(b->name_len > 64 ? 64 : b->name_len), b->name,
                        (size_t)(a - f->entries));
    }
    return HURRAY_OK;
}

/* Step 8: the KV section, short status LENGTH; present means non-empty. */
static int parse_kv(struct hurray_file *f, struct hurray_error *err) {
    const struct file_header *h = &f->h;
    if (h->kv_length == 0) return HURRAY_OK;
    HR_TRY(in_region(hri_kv_decode_section(f->meta + h->kv_offset, (size_t)h->kv_length, &f->lim,
                                           f->allocator, HURRAY_E_LENGTH, 0, &f->kv, err),
                     "kv", h->kv_offset, err));
    if (f->kv.count > 0) return HURRAY_OK;
    return hri_fail_at(err, HURRAY_E_CONSTRAINT, h->kv_offset, "kv.entry_count",
                       "kv.entry_count: 0; an empty map is written as no KV section "
                       "(HR-FILE-4)");
}

/* ==== items ===================================================================== */

static int decode_entry(const struct hurray_file *f, size_t i, struct hurray_descriptor *out,
                        struct hurray_error *err) {
    const struct entry_rec *r = &f->entries[i];
    struct hurray_decode_options dopt = {&f->lim, f->allocator};
    size_t consumed = 0;
    char pf[HURRAY_ERROR_FIELD_MAX];
    hurray_descriptor_reset(out);
    return in_region(hurray_descriptor_decode(f->meta + r->desc_pos, r->desc_len, &dopt, out,
                                              &consumed, err),
                     hri_fieldf(pf, "index[%zu]", i), r->desc_pos, err);
}

/* Buffers borrowed from the image: data region + each validated offset. */
static int attach_buffers(const struct hurray_file *f, size_t i, struct hurray_item *it,
                          struct hurray_error *err) {
    const struct entry_rec *r = &f->entries[i];
    HR_TRY(hri_item_alloc_buffer_table(it, err));
    it->owns_buffers = HURRAY_ITEM_BORROWED;
    for (unsigned b = 0; b < r->buffer_count; b++) {
        uint64_t o = hri_load_u64le(f->meta + r->offsets_pos + 8u * b);
        struct hurray_item_buffer *buf = &it->buffers[b];
        buf->data = buf->size ? (uint8_t *)(uintptr_t)(f->image->base + f->h.data_offset + o)
                              : NULL;
    }
    return HURRAY_OK;
}

/* Entry i and, for a composite, its members (pre-order); *next is the entry
 * after its subtree. No owner is set: the caller decides. */
static int build_item(const struct hurray_file *f, size_t i, struct hurray_item **out,
                      size_t *next, struct hurray_error *err) {
    struct hurray_item *it = NULL;
    size_t j = i + 1;
    HR_FAIL_IF(i >= f->count, err, HURRAY_E_INTERNAL, "index",
               "index: member entry %zu past the validated index", i);
    HR_TRY(hri_item_new(f->allocator, &it, err));
    int st = decode_entry(f, i, it->descriptor, err);
    if (st == HURRAY_OK && f->entries[i].kind == HURRAY_FILE_KIND_TENSOR)
        st = attach_buffers(f, i, it, err);
    if (st == HURRAY_OK && f->entries[i].kind == HURRAY_FILE_KIND_COMPOSITE) {
        st = hri_item_alloc_members(it, it->descriptor->layout.member_count, err);
        for (uint32_t k = 0; st == HURRAY_OK && k < it->member_count; k++)
            st = build_item(f, j, &it->members[k], &j, err);
    }
    if (st != HURRAY_OK) {
        hurray_item_destroy(it);
        return st;
    }
    *out = it;
    *next = j;
    return HURRAY_OK;
}

/* The validator on a top-level tensor: its descriptor decoded into the
 * scratch one, wrapped in an item on the stack (no allocation per tensor). */
static int check_top_tensor(struct hurray_file *f, size_t i, struct hurray_error *err) {
    struct hurray_item it;
    memset(&it, 0, sizeof it);
    it.descriptor = f->scratch;
    HR_TRY(decode_entry(f, i, f->scratch, err));
    int st = hurray_composite_validate(&it, &f->lim, err);
    hurray_descriptor_reset(f->scratch);
    return st;
}

/* Step 9: each top-level item through the composite validator (HR-COMP-10):
 * composite trees whole, tensors for their top-level rule. */
static int check_composites(struct hurray_file *f, struct hurray_error *err) {
    for (size_t k = 0; k < f->top_count; k++) {
        struct hurray_item *it = NULL;
        size_t i = f->top[k], next = 0;
        char pf[HURRAY_ERROR_FIELD_MAX];
        int st;
        if (f->entries[i].kind == HURRAY_FILE_KIND_TENSOR) {
            st = check_top_tensor(f, i, err);
        } else {
            HR_TRY(build_item(f, i, &it, &next, err));
            st = hurray_composite_validate(it, &f->lim, err);
            hurray_item_destroy(it);
        }
        HR_TRY(in_region(st, hri_fieldf(pf, "index[%zu]", i), 0, err));
    }
    return HURRAY_OK;
}

static int list_top_level(struct hurray_file *f, struct hurray_error *err) {
    HR_TRY(alloc_array(f->allocator, f->count, sizeof *f->top, (void **)&f->top, err));
    for (size_t i = 0; i < f->count; i++)
        if (!f->entries[i].is_member) f->top[f->top_count++] = i;
    return HURRAY_OK;
}

/* ==== opening ==================================================================== */

/* Step 4 and the metadata copy a mapping needs (HR-FILE-8). */
static int take_meta(struct hurray_file *f, int copy, struct hurray_error *err) {
    uint64_t first = 0, n = f->h.data_offset - f->h.meta_end;
    if (copy) {
        HR_TRY(alloc_array(f->allocator, (size_t)f->h.data_offset, 1, (void **)&f->meta_copy,
                           err));
        f->meta_copy_len = (size_t)f->h.data_offset;
        memcpy(f->meta_copy, f->image->base, f->meta_copy_len);
        f->meta = f->meta_copy;
    } else {
        f->meta = f->image->base;
    }
    if (is_zero(f->meta + f->h.meta_end, n, &first)) return HURRAY_OK;
    return hri_fail_at(err, HURRAY_E_RESERVED_NONZERO, f->h.meta_end + first, "padding",
                       "padding: non-zero byte before data_offset (HR-FILE-4)");
}

static int validate_file(struct hurray_file *f, int copy_meta, struct hurray_error *err) {
    HR_TRY(parse_header(f->image->base, f->image->size, &f->lim, &f->h, err));
    HR_TRY(take_meta(f, copy_meta, err));
    f->scratch = hri_alloc(f->allocator, sizeof *f->scratch);
    HR_FAIL_IF(!f->scratch, err, HURRAY_E_NOMEM, "file", "file: out of memory");
    hurray_descriptor_init(f->scratch);
    HR_TRY(parse_index(f, err));
    HR_TRY(check_names(f, err));
    HR_TRY(parse_kv(f, err));
    HR_TRY(list_top_level(f, err));
    return check_composites(f, err);
}

/* Takes the caller's reference on `img` (released on failure). */
static int open_image(struct file_image *img, const struct hurray_limits *lim,
                      const struct hurray_allocator *a, int copy_meta, struct hurray_file **out,
                      struct hurray_error *err) {
    struct hurray_file *f = hri_alloc(a, sizeof *f);
    if (!f) {
        image_unref(img);
        return hri_fail(err, HURRAY_E_NOMEM, "file", "file: out of memory");
    }
    memset(f, 0, sizeof *f);
    f->image = img;
    f->allocator = a;
    f->lim = *lim;
    hurray_kv_init(&f->kv);
    int st = validate_file(f, copy_meta, err);
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
    struct file_image *img = NULL;
    const struct hurray_allocator *a = opt ? opt->allocator : NULL;
    HR_TRY(open_args(data, out, err));
    hri_limits_effective(opt ? opt->limits : NULL, &lim);
    HR_TRY(parse_header(data, size, &lim, &h, err)); /* before copying anything */
    HR_TRY(image_alloc_copy(a, size, &img, err));
    memcpy((void *)(uintptr_t)img->base, data, size);
    return open_image(img, &lim, a, 0, out, err);
}

/* ---- POSIX: open, size, read, map --------------------------------------------- */

static int sys_fail(struct hurray_error *err, const char *what, const char *path, int e) {
    char msg[128];
    if (strerror_r(e, msg, sizeof msg) != 0) msg[0] = 0;
    return hri_fail(err, HURRAY_E_IO, "file", "%s \"%.120s\": %s (errno %d)", what,
                    path ? path : "", msg, e);
}

static int fd_size(int fd, const char *path, uint64_t *size, struct hurray_error *err) {
    struct stat st;
    if (fstat(fd, &st) != 0) return sys_fail(err, "cannot stat", path, errno);
    if (!S_ISREG(st.st_mode))
        return hri_fail(err, HURRAY_E_IO, "file", "\"%.120s\" is not a regular file", path);
    *size = (uint64_t)st.st_size;
    return HURRAY_OK;
}

/* pread until n bytes or EOF/error; EINTR retried. A file that shrank under
 * us is IO (it is no longer the file that was measured). */
static int fd_read_at(int fd, const char *path, uint8_t *dst, size_t n, uint64_t off,
                      struct hurray_error *err) {
    size_t got = 0;
    while (got < n) {
        size_t chunk = n - got > (1u << 30) ? (1u << 30) : n - got;
        ssize_t r = pread(fd, dst + got, chunk, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return sys_fail(err, "cannot read", path, errno);
        if (r == 0)
            return hri_fail(err, HURRAY_E_IO, "file", "\"%.120s\" shrank while being read",
                            path);
        got += (size_t)r;
    }
    return HURRAY_OK;
}

static int image_read_fd(int fd, const char *path, uint64_t size,
                         const struct hurray_allocator *a, struct file_image **out,
                         struct hurray_error *err) {
    struct file_image *img = NULL;
    HR_TRY(image_alloc_copy(a, size, &img, err));
    int st = fd_read_at(fd, path, (uint8_t *)(uintptr_t)img->base, (size_t)size, 0, err);
    if (st != HURRAY_OK) {
        image_unref(img);
        return st;
    }
    *out = img;
    return HURRAY_OK;
}

static int image_map_fd(int fd, const char *path, uint64_t size,
                        const struct hurray_allocator *a, struct file_image **out,
                        struct hurray_error *err) {
    struct file_image *img = NULL;
    HR_FAIL_IF(size > SIZE_MAX, err, HURRAY_E_NOMEM, "file", "file: too large to map");
    HR_TRY(image_new(a, &img, err));
    void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        hri_free(a, img, sizeof *img);
        return sys_fail(err, "cannot map", path, e);
    }
    img->raw = m;
    img->raw_len = (size_t)size;
    img->base = m;
    img->size = size;
    img->mapped = 1;
    *out = img;
    return HURRAY_OK;
}

static void image_unmap(struct file_image *img) { munmap(img->raw, img->raw_len); }

/* Steps 1-3 on the first 64 bytes before the image is made, then the image. */
static int open_fd(int fd, const char *path, const struct hurray_limits *lim,
                   const struct hurray_allocator *a, int mode, struct hurray_file **out,
                   struct hurray_error *err) {
    uint64_t size = 0;
    uint8_t head[HURRAY_FILE_HEADER_BYTES];
    struct file_header h;
    struct file_image *img = NULL;
    HR_TRY(fd_size(fd, path, &size, err));
    if (size >= HURRAY_FILE_HEADER_BYTES)
        HR_TRY(fd_read_at(fd, path, head, sizeof head, 0, err));
    HR_TRY(parse_header(head, size, lim, &h, err));
    if (mode == HURRAY_FILE_MMAP)
        HR_TRY(image_map_fd(fd, path, size, a, &img, err));
    else
        HR_TRY(image_read_fd(fd, path, size, a, &img, err));
    return open_image(img, lim, a, mode == HURRAY_FILE_MMAP, out, err);
}

int hurray_file_create_path(const char *path, const struct hurray_file_options *opt,
                          struct hurray_file **out, struct hurray_error *err) {
    struct hurray_limits lim;
    int mode = opt ? opt->mode : HURRAY_FILE_COPY;
    HR_TRY(open_args(path, out, err));
    HR_FAIL_IF(mode != HURRAY_FILE_COPY && mode != HURRAY_FILE_MMAP, err, HURRAY_E_ARGUMENT,
               "mode", "mode: %d is neither HURRAY_FILE_COPY nor HURRAY_FILE_MMAP", mode);
    hri_limits_effective(opt ? opt->limits : NULL, &lim);
    int fd;
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return sys_fail(err, "cannot open", path, errno);
    int st = open_fd(fd, path, &lim, opt ? opt->allocator : NULL, mode, out, err);
    close(fd); /* a mapping stays valid after its descriptor is closed */
    return st;
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

size_t hurray_file_top_level_count(const struct hurray_file *f) { return f ? f->top_count : 0; }

size_t hurray_file_top_level_entry(const struct hurray_file *f, size_t k) {
    return f && k < f->top_count ? f->top[k] : SIZE_MAX;
}

int hurray_file_find(const struct hurray_file *f, const char *name, size_t *index) {
    if (!f || !name) return 0;
    size_t n = strlen(name), lo = 0, hi = f->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct entry_rec *r = f->sorted[mid];
        int c = memcmp(r->name, name, r->name_len < n ? r->name_len : n);
        if (c == 0) c = (r->name_len > n) - (r->name_len < n);
        if (c == 0) {
            if (index) *index = (size_t)(r - f->entries);
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

int hurray_file_load_item(struct hurray_file *f, size_t i, struct hurray_item **out,
                          struct hurray_error *err) {
    size_t next = 0;
    HR_FAIL_IF(!f || !out, err, HURRAY_E_ARGUMENT, "file", "load_item: NULL argument");
    *out = NULL;
    HR_FAIL_IF(i >= f->count, err, HURRAY_E_ARGUMENT, "index",
               "index: entry %zu of %zu does not exist", i, f->count);
    HR_TRY(build_item(f, i, out, &next, err));
    image_ref(f->image);
    (*out)->owner = f->image;
    (*out)->owner_release = image_unref;
    return HURRAY_OK;
}

const struct hurray_kv *hurray_file_kv(const struct hurray_file *f) { return f ? &f->kv : NULL; }

/* ==== writing (HR-FILE-7) ============================================================ */

struct plan_entry {
    const char *name; /* the caller's, or generated in the plan's names block */
    size_t name_len;
    const struct hurray_item *item;
    size_t desc_len;
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

static int plan_entries(struct file_plan *p, const struct hurray_file_contents *c,
                        struct hurray_error *err) {
    size_t at = 0;
    HR_FAIL_IF(c->count && !c->entries, err, HURRAY_E_ARGUMENT, "entries",
               "file: NULL entries");
    for (size_t i = 0; i < c->count; i++) {
        char f[HURRAY_ERROR_FIELD_MAX];
        const char *name = c->entries[i].name;
        HR_FAIL_IF(!name, err, HURRAY_E_ARGUMENT, "name", "entries[%zu]: NULL name", i);
        size_t n = strlen(name);
        HR_TRY(hri_name_check((const uint8_t *)name, n, HURRAY_MAX_NAME_BYTES_FORMAT,
                              hri_fieldf(f, "entries[%zu].name", i), UINT64_MAX, err));
        HR_TRY(count_item(p, c->entries[i].item, n, 0, err));
    }
    size_t entries = p->count, offsets = p->n_offsets;
    p->count = p->n_offsets = 0; /* sizes of what is allocated, set below */
    HR_TRY(alloc_array(p->a, entries, sizeof *p->entries, (void **)&p->entries, err));
    p->count = entries;
    HR_TRY(alloc_array(p->a, p->names_len, 1, (void **)&p->names, err));
    HR_TRY(alloc_array(p->a, offsets, sizeof *p->offsets, (void **)&p->offsets, err));
    p->n_offsets = offsets;
    for (size_t i = 0; i < c->count; i++)
        fill_item(p, &at, c->entries[i].item, c->entries[i].name, strlen(c->entries[i].name), 1);
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
        hri_fieldf(f, "index[%zu].buffers[%u]", i, b);
        HR_FAIL_IF(it->buffers[b].size != d->buffers[b].size, err, HURRAY_E_ARGUMENT, f,
                   "%s: %llu bytes given, the buffer table says %llu (HR-FILE-7)", f,
                   (unsigned long long)it->buffers[b].size,
                   (unsigned long long)d->buffers[b].size);
        HR_FAIL_IF(it->buffers[b].size && !it->buffers[b].data, err, HURRAY_E_ARGUMENT, f,
                   "%s: NULL data", f);
    }
    return HURRAY_OK;
}

static int check_plan_entry(struct plan_entry *e, size_t i, struct hurray_error *err) {
    const struct hurray_descriptor *d = e->item->descriptor;
    char pf[HURRAY_ERROR_FIELD_MAX];
    int composite = is_composite_item(e->item);
    HR_TRY(in_region(hurray_descriptor_encoded_len(d, &e->desc_len, err),
                     hri_fieldf(pf, "index[%zu]", i), 0, err));
    HR_TRY(check_entry_descriptor(d, i,
                                  composite ? HURRAY_FILE_KIND_COMPOSITE : HURRAY_FILE_KIND_TENSOR,
                                  err));
    if (!composite) HR_TRY(check_item_buffers(e->item, i, err));
    return HURRAY_OK;
}

/* Every top-level item through the composite validator, once every
 * descriptor has been found valid on its own. */
static int check_plan_trees(const struct file_plan *p, struct hurray_error *err) {
    struct hurray_limits fmt;
    hri_limits_format_max(&fmt);
    for (size_t i = 0; i < p->count; i++) {
        char pf[HURRAY_ERROR_FIELD_MAX];
        if (!p->entries[i].top) continue;
        HR_TRY(in_region(hurray_composite_validate(p->entries[i].item, &fmt, err),
                         hri_fieldf(pf, "index[%zu]", i), 0, err));
    }
    return HURRAY_OK;
}

static int plan_name_compare(const void *pa, const void *pb) {
    const struct plan_entry *a = *(const struct plan_entry *const *)pa;
    const struct plan_entry *b = *(const struct plan_entry *const *)pb;
    int c = memcmp(a->name, b->name, a->name_len < b->name_len ? a->name_len : b->name_len);
    if (c != 0) return c;
    if (a->name_len != b->name_len) return a->name_len < b->name_len ? -1 : 1;
    return (a > b) - (a < b);
}

static int plan_check_duplicates(struct file_plan *p, struct hurray_error *err) {
    const struct plan_entry **s = NULL;
    int st = HURRAY_OK;
    HR_TRY(alloc_array(p->a, p->count, sizeof *s, (void **)&s, err));
    for (size_t i = 0; i < p->count; i++) s[i] = &p->entries[i];
    if (p->count > 1) qsort((void *)s, p->count, sizeof *s, plan_name_compare);
    for (size_t k = 1; k < p->count && st == HURRAY_OK; k++) {
        if (s[k - 1]->name_len != s[k]->name_len ||
            memcmp(s[k - 1]->name, s[k]->name, s[k]->name_len) != 0)
            continue;
        char f[HURRAY_ERROR_FIELD_MAX];
        st = hri_fail(err, HURRAY_E_DUPLICATE, entry_field(f, (size_t)(s[k] - p->entries), "name"),
                      "%s: \"%.*s\" names two entries (generated member names included) "
                      "(HR-FILE-5)",
                      f, (int)(s[k]->name_len > 64 ? 64 : s[k]->name_len), s[k]->name);
    }
    hri_free(p->a, (void *)s, p->count * sizeof *s);
    return st;
}

/* Canonical placement (HR-FILE-4, HR-FILE-2), with checked arithmetic. */
static int plan_layout(struct file_plan *p, struct hurray_error *err) {
    uint64_t idx = 8, pos = 0;
    size_t k = 0;
    int ovf = 0;
    for (size_t i = 0; i < p->count; i++) {
        const struct hurray_descriptor *d = p->entries[i].item->descriptor;
        uint64_t n = ENTRY_HEADER_BYTES + round_up(p->entries[i].name_len, 8) +
                     p->entries[i].desc_len + 8u * (uint64_t)d->buffer_count;
        ovf |= hri_add_u64(idx, n, &idx);
        if (is_composite_item(p->entries[i].item)) continue;
        for (unsigned b = 0; b < d->buffer_count; b++, k++) {
            ovf |= round_up_checked(pos, placement_alignment(d->buffers[b].alignment_log2),
                                    &p->offsets[k]);
            ovf |= hri_add_u64(p->offsets[k], d->buffers[b].size, &pos);
        }
    }
    p->index_length = idx;
    ovf |= hri_add_u64(HURRAY_FILE_HEADER_BYTES + p->kv_length, idx, &p->meta_end);
    ovf |= round_up_checked(p->meta_end, PAGE, &p->data_offset);
    ovf |= round_up_checked(pos, DATA_PAD, &p->data_length);
    ovf |= hri_add_u64(p->data_offset, p->data_length, &p->total);
    HR_FAIL_IF(ovf || p->meta_end > SIZE_MAX, err, HURRAY_E_OVERFLOW, "file",
               "file: its size overflows 64 bits");
    return HURRAY_OK;
}

static int plan_make(const struct hurray_file_contents *c, const struct hurray_allocator *a,
                     struct file_plan *p, struct hurray_error *err) {
    memset(p, 0, sizeof *p);
    p->a = a;
    HR_FAIL_IF(!c, err, HURRAY_E_ARGUMENT, "contents", "file: NULL contents");
    int st = plan_entries(p, c, err);
    for (size_t i = 0; st == HURRAY_OK && i < p->count; i++)
        st = check_plan_entry(&p->entries[i], i, err);
    if (st == HURRAY_OK) st = check_plan_trees(p, err);
    if (st == HURRAY_OK) st = plan_check_duplicates(p, err);
    if (st == HURRAY_OK && c->kv_count)
        st = in_region(hurray_kv_encoded_len(c->kv, c->kv_count, a, &p->kv_length, err), "kv", 0,
                       err);
    if (st == HURRAY_OK) st = plan_layout(p, err);
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

static int write_index(struct hri_writer *w, const struct file_plan *p,
                       struct hurray_error *err) {
    size_t k = 0;
    hri_w_u64(w, p->count);
    for (size_t i = 0; i < p->count; i++) {
        const struct plan_entry *e = &p->entries[i];
        const struct hurray_descriptor *d = e->item->descriptor;
        size_t written = 0;
        hri_w_u32(w, (uint32_t)e->name_len);
        hri_w_u8(w, is_composite_item(e->item) ? HURRAY_FILE_KIND_COMPOSITE
                                               : HURRAY_FILE_KIND_TENSOR);
        hri_w_zero(w, 3);
        hri_w_bytes(w, e->name, e->name_len);
        hri_w_pad8(w);
        HR_FAIL_IF(w->overflowed || w->cap - w->pos < e->desc_len, err, HURRAY_E_INTERNAL,
                   "index", "index: planned length exceeded");
        HR_TRY(hurray_descriptor_encode(d, w->dst + w->pos, e->desc_len, &written, err));
        w->pos += written;
        for (unsigned b = 0; b < d->buffer_count; b++) hri_w_u64(w, p->offsets[k++]);
    }
    return HURRAY_OK;
}

/* Header, index and KV in one block of meta_end bytes. */
static int build_meta(const struct file_plan *p, const struct hurray_file_contents *c,
                      uint8_t *meta, struct hurray_error *err) {
    struct hri_writer w;
    size_t kv_written = 0;
    hri_writer_init(&w, meta, (size_t)p->meta_end);
    write_header(&w, p);
    HR_TRY(write_index(&w, p, err));
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

/* Where bytes go: dst (memory) or fd. data NULL writes zeros. */
struct sink {
    uint8_t *dst;
    uint64_t pos;
    int fd;
};

static int fd_write_all(int fd, const uint8_t *p, size_t n, struct hurray_error *err);

static const uint8_t zero_page[HURRAY_PAGE_ALIGNMENT];

static int sink_put(struct sink *s, const uint8_t *data, uint64_t n, struct hurray_error *err) {
    if (s->dst) {
        if (data) memcpy(s->dst + s->pos, data, (size_t)n);
        else memset(s->dst + s->pos, 0, (size_t)n);
        s->pos += n;
        return HURRAY_OK;
    }
    while (n > 0) {
        size_t chunk = data ? (n > (1u << 30) ? (1u << 30) : (size_t)n)
                            : (n > sizeof zero_page ? sizeof zero_page : (size_t)n);
        HR_TRY(fd_write_all(s->fd, data ? data : zero_page, chunk, err));
        if (data) data += chunk;
        n -= chunk;
        s->pos += chunk;
    }
    return HURRAY_OK;
}

static int emit_data(const struct file_plan *p, struct sink *s, struct hurray_error *err) {
    uint64_t pos = 0;
    size_t k = 0;
    for (size_t i = 0; i < p->count; i++) {
        const struct hurray_item *it = p->entries[i].item;
        if (is_composite_item(it)) continue;
        for (unsigned b = 0; b < it->descriptor->buffer_count; b++, k++) {
            HR_TRY(sink_put(s, NULL, p->offsets[k] - pos, err));
            HR_TRY(sink_put(s, it->buffers[b].data, it->buffers[b].size, err));
            pos = p->offsets[k] + it->buffers[b].size;
        }
    }
    return sink_put(s, NULL, p->data_length - pos, err);
}

static int emit(const struct file_plan *p, const struct hurray_file_contents *c, struct sink *s,
                struct hurray_error *err) {
    uint8_t *meta = hri_alloc(p->a, (size_t)p->meta_end);
    HR_FAIL_IF(!meta, err, HURRAY_E_NOMEM, "file", "file: out of memory");
    int st = build_meta(p, c, meta, err);
    if (st == HURRAY_OK) st = sink_put(s, meta, p->meta_end, err);
    hri_free(p->a, meta, (size_t)p->meta_end);
    if (st == HURRAY_OK) st = sink_put(s, NULL, p->data_offset - p->meta_end, err);
    if (st == HURRAY_OK) st = emit_data(p, s, err);
    HR_FAIL_IF(st == HURRAY_OK && s->pos != p->total, err, HURRAY_E_INTERNAL, "file",
               "file: wrote %llu bytes, planned %llu", (unsigned long long)s->pos,
               (unsigned long long)p->total);
    return st;
}

static const struct hurray_allocator *write_allocator(const struct hurray_file_write_options *o) {
    return o ? o->allocator : NULL;
}

int hurray_file_encoded_len(const struct hurray_file_contents *contents,
                            const struct hurray_file_write_options *opt, uint64_t *len,
                            struct hurray_error *err) {
    struct file_plan p;
    HR_FAIL_IF(!len, err, HURRAY_E_ARGUMENT, "len", "file_encoded_len: NULL argument");
    HR_TRY(plan_make(contents, write_allocator(opt), &p, err));
    *len = p.total;
    plan_free(&p);
    return HURRAY_OK;
}

int hurray_file_encode(const struct hurray_file_contents *contents,
                       const struct hurray_file_write_options *opt, uint8_t *dst, size_t cap,
                       size_t *written, struct hurray_error *err) {
    struct file_plan p;
    struct sink s = {dst, 0, -1};
    HR_FAIL_IF(!dst || !written, err, HURRAY_E_ARGUMENT, "dst", "file_encode: NULL argument");
    HR_TRY(plan_make(contents, write_allocator(opt), &p, err));
    int st = p.total > cap ? hri_fail(err, HURRAY_E_ARGUMENT, "cap",
                                      "cap: %zu bytes, the file needs %llu", cap,
                                      (unsigned long long)p.total)
                           : emit(&p, contents, &s, err);
    if (st == HURRAY_OK) *written = (size_t)p.total;
    plan_free(&p);
    return st;
}

/* ---- POSIX: write -------------------------------------------------------------------- */

static int fd_write_all(int fd, const uint8_t *p, size_t n, struct hurray_error *err) {
    while (n > 0) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return sys_fail(err, "cannot write", "", errno);
        if (r == 0) return hri_fail(err, HURRAY_E_IO, "file", "write: no progress");
        p += r;
        n -= (size_t)r;
    }
    return HURRAY_OK;
}

int hurray_file_write_fd(int fd, const struct hurray_file_contents *contents,
                         const struct hurray_file_write_options *opt, struct hurray_error *err) {
    struct file_plan p;
    struct sink s = {NULL, 0, fd};
    HR_FAIL_IF(fd < 0, err, HURRAY_E_ARGUMENT, "fd", "file_write_fd: fd %d", fd);
    HR_TRY(plan_make(contents, write_allocator(opt), &p, err));
    int st = emit(&p, contents, &s, err);
    plan_free(&p);
    return st;
}

/* A new file beside `path`, created exclusively (so nothing is clobbered),
 * with the usual permissions (0666 less the umask). */
static int create_temp(const char *path, char *tmp, size_t cap, int *fd,
                       struct hurray_error *err) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        int n = snprintf(tmp, cap, "%s.hurray-tmp-%ld-%ld-%u", path, (long)getpid(),
                         (long)ts.tv_nsec, attempt);
        HR_FAIL_IF(n < 0 || (size_t)n >= cap, err, HURRAY_E_ARGUMENT, "path",
                   "path: too long (%zu bytes)", strlen(path));
        do {
            *fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        } while (*fd < 0 && errno == EINTR);
        if (*fd >= 0) return HURRAY_OK;
        if (errno != EEXIST) return sys_fail(err, "cannot create a file beside", path, errno);
    }
    return hri_fail(err, HURRAY_E_IO, "path", "cannot create a temporary file beside \"%.120s\"",
                    path);
}

/* HR-FILE-7: written beside the path and renamed over it, so no reader sees
 * a half-written file and a mapping of the old file keeps its bytes. */
int hurray_file_write_path(const char *path, const struct hurray_file_contents *contents,
                           const struct hurray_file_write_options *opt,
                           struct hurray_error *err) {
    struct file_plan p;
    char tmp[4096];
    int fd = -1;
    HR_FAIL_IF(!path, err, HURRAY_E_ARGUMENT, "path", "file_write_path: NULL path");
    HR_TRY(plan_make(contents, write_allocator(opt), &p, err)); /* before touching the path */
    int st = create_temp(path, tmp, sizeof tmp, &fd, err);
    if (st != HURRAY_OK) {
        plan_free(&p);
        return st;
    }
    struct sink s = {NULL, 0, fd};
    st = emit(&p, contents, &s, err);
    plan_free(&p);
    if (close(fd) != 0 && st == HURRAY_OK) st = sys_fail(err, "cannot close", tmp, errno);
    if (st == HURRAY_OK && rename(tmp, path) != 0)
        st = sys_fail(err, "cannot replace", path, errno);
    if (st != HURRAY_OK) unlink(tmp);
    return st;
}
