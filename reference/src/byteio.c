/* Little-endian cursor and writer, and the allocator. conventions.md */
#include <stdlib.h>

#include "internal.h"
#include "os.h"

/* Called only when fewer than n bytes remain (hri_need and the readers). */
int hri_need_fail(const struct hri_cursor *c, size_t n, const char *field,
                  struct hurray_error *err) {
    return hri_fail_at(err, c->short_code, hri_cursor_offset(c), field,
                       "%s: needs %zu bytes at offset %llu, %zu remain", field, n,
                       (unsigned long long)hri_cursor_offset(c), c->end - c->pos);
}

int hri_read_i64(struct hri_cursor *c, int64_t *v, const char *field, struct hurray_error *err) {
    uint64_t u;
    HR_TRY(hri_read_u64(c, &u, field, err));
    memcpy(v, &u, 8);
    return HURRAY_OK;
}

int hri_read_f32(struct hri_cursor *c, float *v, const char *field, struct hurray_error *err) {
    uint32_t u;
    HR_TRY(hri_read_u32(c, &u, field, err));
    *v = hri_f32_from_bits(u);
    return HURRAY_OK;
}

int hri_read_f64(struct hri_cursor *c, double *v, const char *field, struct hurray_error *err) {
    uint64_t u;
    HR_TRY(hri_read_u64(c, &u, field, err));
    *v = hri_f64_from_bits(u);
    return HURRAY_OK;
}

/* Called when a reserved byte of the n at the cursor (which exist) is not
 * zero: the error names the first one. */
int hri_read_reserved_fail(const struct hri_cursor *c, size_t n, const char *field,
                           struct hurray_error *err) {
    size_t i = 0;
    while (i + 1 < n && c->src[c->pos + i] == 0) i++;
    return hri_fail_at(err, HURRAY_E_RESERVED_NONZERO, hri_cursor_offset(c) + i, field,
                       "%s: reserved byte at offset %llu is 0x%02X, must be zero", field,
                       (unsigned long long)(hri_cursor_offset(c) + i), c->src[c->pos + i]);
}

/* The failures of the indexed readers: the field name formatted only here. */
int hri_need_i_fail(const struct hri_cursor *c, size_t n, const char *field_fmt, unsigned index,
                    struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    return hri_need_fail(c, n, hri_fieldf(f, field_fmt, index), err);
}

int hri_read_reserved_i_fail(const struct hri_cursor *c, size_t n, const char *field_fmt,
                             unsigned index, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    return hri_read_reserved_fail(c, n, hri_fieldf(f, field_fmt, index), err);
}

int hri_read_u64s_i(struct hri_cursor *c, uint64_t *dst, unsigned n, const char *field_fmt,
                    struct hurray_error *err) {
    for (unsigned k = 0; k < n; k++) HR_TRY(hri_read_u64_i(c, &dst[k], field_fmt, k, err));
    return HURRAY_OK;
}

int hri_read_i64s_i(struct hri_cursor *c, int64_t *dst, unsigned n, const char *field_fmt,
                    struct hurray_error *err) {
    for (unsigned k = 0; k < n; k++) {
        uint64_t u;
        HR_TRY(hri_read_u64_i(c, &u, field_fmt, k, err));
        memcpy(&dst[k], &u, 8);
    }
    return HURRAY_OK;
}

int hri_read_u8s_i(struct hri_cursor *c, uint8_t *dst, unsigned n, const char *field_fmt,
                   struct hurray_error *err) {
    for (unsigned k = 0; k < n; k++) {
        HR_TRY(hri_need_i(c, 1, field_fmt, k, err));
        dst[k] = c->src[c->pos++];
    }
    return HURRAY_OK;
}

int hri_read_bytes(struct hri_cursor *c, size_t n, const uint8_t **p, const char *field,
                   struct hurray_error *err) {
    HR_TRY(hri_need(c, n, field, err));
    *p = c->src + c->pos;
    c->pos += n;
    return HURRAY_OK;
}

static void *default_alloc(void *ctx, size_t size) {
    (void)ctx;
    return malloc(size ? size : 1);
}

static void default_free(void *ctx, void *p, size_t size) {
    (void)ctx;
    (void)size;
    free(p);
}

/* The system allocator (alloc.h): the C library's heap, except that blocks of
 * HRI_SYSTEM_BLOCK bytes and more come straight from the system (os.h reserved memory,
 * committed whole) and go back to it when freed. A reader's large transient blocks -- a
 * file's index and its tables -- then stop counting against the process as soon as they are
 * freed, wherever the heap would have put them (a freed heap block below later allocations
 * stays resident: file-container.md HR-FILE-13). Every block comes back with its size, which
 * says which it was. Under AddressSanitizer or MemorySanitizer every block stays on the heap,
 * so the sanitizer sees every access. */
#if defined(__SANITIZE_ADDRESS__)
#define HRI_SYSTEM_BLOCKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define HRI_SYSTEM_BLOCKS 0
#endif
#endif
#ifndef HRI_SYSTEM_BLOCKS
#define HRI_SYSTEM_BLOCKS 1
#endif
#define HRI_SYSTEM_BLOCK ((size_t)1 << 20)

static void *system_alloc(void *ctx, size_t size) {
    (void)ctx;
    if (HRI_SYSTEM_BLOCKS && size >= HRI_SYSTEM_BLOCK) {
        void *p = NULL;
        int ok = hri_os_reserve(size, &p, NULL) == HURRAY_OK &&
                 hri_os_commit(p, size, 0, size, NULL) == HURRAY_OK;
        if (!ok) hri_os_release(p, size), p = NULL; /* the system refused: NULL, as malloc */
        return p;
    }
    return malloc(size ? size : 1);
}

static void system_free(void *ctx, void *p, size_t size) {
    (void)ctx;
    if (HRI_SYSTEM_BLOCKS && size >= HRI_SYSTEM_BLOCK) hri_os_release(p, size);
    else free(p);
}

static const struct hurray_allocator system_allocator = {system_alloc, system_free, NULL};

const struct hurray_allocator *hurray_system_allocator(void) { return &system_allocator; }

static const struct hurray_allocator default_allocator = {default_alloc, default_free, NULL};

const struct hurray_allocator *hurray_default_allocator(void) { return &default_allocator; }

void *hri_alloc(const struct hurray_allocator *a, size_t size) {
    if (!a) a = &default_allocator;
    return a->alloc(a->ctx, size);
}

void hri_free(const struct hurray_allocator *a, void *p, size_t size) {
    if (!p) return;
    if (!a) a = &default_allocator;
    a->free(a->ctx, p, size);
}
