/* Index contents of the COO, CSR and CSC layouts.
 * docs/spec/memory-layout.md § Index contents (HR-LAYOUT-24).
 *
 * The descriptor validator never reads index buffers; this is the one check
 * of what they hold, for a consumer (or a binding handing the buffers to a
 * library that indexes memory with them unchecked). Buffers are raw
 * little-endian uint64 arrays; nothing is allocated. */
#include <stdio.h>

#include "internal.h"

static const char *major_ptr_name(uint8_t tag) {
    return tag == HURRAY_LAYOUT_CSR ? "row_ptr" : "col_ptr";
}
static const char *minor_name(uint8_t tag) {
    return tag == HURRAY_LAYOUT_CSR ? "col_indices" : "row_indices";
}

/* A little-endian uint64 entry: one load on a little-endian host (memcpy compiles to it). */
static inline uint64_t entry(const uint8_t *p, uint64_t j) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p + j * 8u, 8);
    return v;
#else
    return hri_load_u64le(p + j * 8u);
#endif
}

/* Whether any of the n entries is >= bound: a branch-free pass the compiler vectorises; the
 * slow search for the first offender runs only on failure. */
static int any_at_least(const uint8_t *p, uint64_t n, uint64_t bound) {
    uint64_t bad = 0;
    for (uint64_t j = 0; j < n; j++) bad |= entry(p, j) >= bound;
    return bad != 0;
}

/* " (-3 as int64)" for a value with the top bit set: an int64 index that was negative. */
static const char *as_int64(uint64_t v, char buf[40]) {
    buf[0] = '\0';
    if (v >> 63) snprintf(buf, 40, " (%lld as int64)", (long long)(int64_t)v);
    return buf;
}

static int check_coo(uint8_t rank, const uint64_t *shape, uint64_t nnz, const uint8_t *idx,
                     struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned d = 0; d < rank; d++) {
        const uint8_t *row = idx + (uint64_t)d * nnz * 8u;
        if (!any_at_least(row, nnz, shape[d])) continue;
        for (uint64_t j = 0; j < nnz; j++) {
            uint64_t v = entry(row, j);
            if (v < shape[d]) continue;
            char sv[40];
            return hri_fail(err, HURRAY_E_INDEX, hri_fieldf(f, "indices[%u][%llu]", d,
                                                            (unsigned long long)j),
                            "indices[%u][%llu] = %llu%s is not below shape[%u] = %llu", d,
                            (unsigned long long)j, (unsigned long long)v, as_int64(v, sv), d,
                            (unsigned long long)shape[d]);
        }
    }
    return HURRAY_OK;
}

static int check_compressed(uint8_t tag, uint64_t n, uint64_t minor_extent, uint64_t nnz,
                            const uint8_t *idx, const uint8_t *ptr, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    const char *pname = major_ptr_name(tag), *iname = minor_name(tag);
    uint64_t prev = entry(ptr, 0);
    char sv[40];
    HR_FAIL_IF(prev != 0, err, HURRAY_E_INDEX, hri_fieldf(f, "%s[0]", pname),
               "%s[0] = %llu%s; the pointers start at 0", pname, (unsigned long long)prev,
               as_int64(prev, sv));
    uint64_t decreases = 0;
    for (uint64_t i = 1; i <= n; i++) decreases |= entry(ptr, i) < entry(ptr, i - 1);
    for (uint64_t i = 1; decreases && i <= n; i++) {
        uint64_t v = entry(ptr, i);
        if (v >= prev) {
            prev = v;
            continue;
        }
        return hri_fail(err, HURRAY_E_INDEX, hri_fieldf(f, "%s[%llu]", pname, (unsigned long long)i),
                        "%s[%llu] = %llu%s is below %s[%llu] = %llu; the pointers never decrease",
                        pname, (unsigned long long)i, (unsigned long long)v, as_int64(v, sv),
                        pname, (unsigned long long)(i - 1), (unsigned long long)prev);
    }
    prev = entry(ptr, n);
    HR_FAIL_IF(prev != nnz, err, HURRAY_E_INDEX,
               hri_fieldf(f, "%s[%llu]", pname, (unsigned long long)n),
               "%s[%llu] = %llu; the last pointer is nnz = %llu", pname, (unsigned long long)n,
               (unsigned long long)prev, (unsigned long long)nnz);
    if (!any_at_least(idx, nnz, minor_extent)) return HURRAY_OK;
    for (uint64_t j = 0; j < nnz; j++) {
        uint64_t v = entry(idx, j);
        if (v < minor_extent) continue;
        return hri_fail(err, HURRAY_E_INDEX, hri_fieldf(f, "%s[%llu]", iname, (unsigned long long)j),
                        "%s[%llu] = %llu%s is not below shape[%d] = %llu", iname,
                        (unsigned long long)j, (unsigned long long)v, as_int64(v, sv),
                        tag == HURRAY_LAYOUT_CSR ? 1 : 0, (unsigned long long)minor_extent);
    }
    return HURRAY_OK;
}

/* Bytes of `count` uint64 entries, or BUFFER_SIZE naming `name` when `have` is short. */
static int need_bytes(const char *name, uint64_t count, uint64_t have, struct hurray_error *err) {
    uint64_t need = 0;
    HR_FAIL_IF(hri_mul_u64(count, 8u, &need), err, HURRAY_E_OVERFLOW, name,
               "%s: %llu entries of 8 bytes exceed 2^64-1", name, (unsigned long long)count);
    HR_FAIL_IF(have < need, err, HURRAY_E_BUFFER_SIZE, name,
               "%s: %llu bytes, the layout needs %llu", name, (unsigned long long)have,
               (unsigned long long)need);
    return HURRAY_OK;
}

int hurray_sparse_validate_index_buffers(const struct hurray_layout *layout, uint8_t rank,
                                         const uint64_t *shape, const uint8_t *index,
                                         uint64_t index_bytes, const uint8_t *ptr,
                                         uint64_t ptr_bytes, struct hurray_error *err) {
    HR_FAIL_IF(!layout || (layout->tag != HURRAY_LAYOUT_COO && layout->tag != HURRAY_LAYOUT_CSR &&
                           layout->tag != HURRAY_LAYOUT_CSC),
               err, HURRAY_E_ARGUMENT, "layout",
               "sparse_validate_index_buffers: not a coo, csr or csc layout");
    HR_FAIL_IF(!shape && rank, err, HURRAY_E_ARGUMENT, "shape",
               "sparse_validate_index_buffers: NULL shape");
    HR_FAIL_IF((!index && index_bytes) || (!ptr && ptr_bytes), err, HURRAY_E_ARGUMENT, "index",
               "sparse_validate_index_buffers: NULL buffer with a non-zero size");
    const uint8_t tag = layout->tag;
    const uint64_t nnz = layout->nnz;
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned d = 0; d < rank; d++)
        HR_FAIL_IF(shape[d] == HURRAY_DYNAMIC_DIM, err, HURRAY_E_UNSUPPORTED,
                   hri_fieldf(f, "shape[%u]", d),
                   "shape[%u] is dynamic; index contents are checked against resolved extents",
                   d);
    if (tag == HURRAY_LAYOUT_COO) {
        HR_FAIL_IF(rank == 0, err, HURRAY_E_CONSTRAINT, "rank", "rank: coo needs rank >= 1");
        uint64_t count = 0;
        HR_FAIL_IF(hri_mul_u64(nnz, rank, &count), err, HURRAY_E_OVERFLOW, "indices",
                   "indices: rank * nnz exceeds 2^64-1");
        HR_TRY(need_bytes("indices", count, index_bytes, err));
        return check_coo(rank, shape, nnz, index, err);
    }
    HR_FAIL_IF(rank != 2, err, HURRAY_E_CONSTRAINT, "rank", "rank: %s needs rank 2, not %u",
               hurray_layout_name(tag), (unsigned)rank);
    const uint64_t n = shape[tag == HURRAY_LAYOUT_CSR ? 0 : 1];
    const uint64_t minor = shape[tag == HURRAY_LAYOUT_CSR ? 1 : 0];
    HR_TRY(need_bytes(minor_name(tag), nnz, index_bytes, err));
    HR_TRY(need_bytes(major_ptr_name(tag), n + 1u, ptr_bytes, err)); /* n < 2^63: no wrap */
    return check_compressed(tag, n, minor, nnz, index, ptr, err);
}
