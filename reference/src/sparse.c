/* Index contents of the COO, CSR and CSC layouts.
 * docs/spec/memory-layout.md § Index contents (HR-LAYOUT-24), § Importing index arrays
 * (HR-LAYOUT-25).
 *
 * The descriptor validator never reads index buffers; this is the one check
 * of what they hold, for a consumer (or a binding handing the buffers to a
 * library that indexes memory with them unchecked). The check reads the format's
 * little-endian uint64 buffers, or -- on import -- another library's int32 /
 * int64 / uint32 array, which it writes out as the format's uint64 in the same
 * pass. Nothing is allocated.
 *
 * Speed: every pass is branch-free over its entries (an AND / OR of borrow bits,
 * the first offender searched for only on failure), so that the compiler
 * vectorises it; x86-64's baseline SSE2 has no 64-bit compare, but it has the
 * subtraction and bitwise operations the borrow is made of. */
#include <stdio.h>

#include "internal.h"

#if defined(__GNUC__) || defined(__clang__)
#define PASS_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define PASS_INLINE static __forceinline
#else
#define PASS_INLINE static inline
#endif

static const char *major_ptr_name(uint8_t tag) {
    return tag == HURRAY_LAYOUT_CSR ? "row_ptr" : "col_ptr";
}
static const char *minor_name(uint8_t tag) {
    return tag == HURRAY_LAYOUT_CSR ? "col_indices" : "row_indices";
}

static unsigned entry_width(uint8_t encoding) {
    return encoding == HURRAY_INDEX_I32 || encoding == HURRAY_INDEX_U32 ? 4u : 8u;
}

/* Entry j of an index array in `encoding`, as the format's uint64 (§ Importing index
 * arrays): a signed entry is sign-extended, so that a negative one becomes a value of at
 * least 2^63, which no extent admits -- the value a modular cast to uint64 gives. On a
 * little-endian host each case is one load (memcpy compiles to it). */
PASS_INLINE uint64_t entry(const uint8_t *p, uint64_t j, uint8_t encoding) {
    int64_t s64;
    int32_t s32;
    uint32_t u32;
    switch (encoding) {
    case HURRAY_INDEX_I64: memcpy(&s64, p + j * 8u, 8); return (uint64_t)s64;
    case HURRAY_INDEX_I32: memcpy(&s32, p + j * 4u, 4); return (uint64_t)(int64_t)s32;
    case HURRAY_INDEX_U32: memcpy(&u32, p + j * 4u, 4); return u32;
    default: break; /* HURRAY_INDEX_U64LE */
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t u64;
    memcpy(&u64, p + j * 8u, 8);
    return u64;
#else
    return hri_load_u64le(p + j * 8u);
#endif
}

/* Entry j of the format's little-endian uint64 buffer `out`. */
PASS_INLINE void put(uint8_t *out, uint64_t j, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(out + j * 8u, &v, 8);
#else
    hri_store_u64le(out + j * 8u, v);
#endif
}

/* Top bit set exactly when a < b (unsigned): the borrow out of a - b. */
PASS_INLINE uint64_t borrow(uint64_t a, uint64_t b) {
    return (~a & b) | (~(a ^ b) & (a - b));
}
/* The same for b <= 2^63 (every extent of a real shape), in three operations: a - b wraps to
 * a value with the top bit set exactly when a < b, for a < 2^63; ~a clears it for a >= 2^63,
 * which is never below b. */
PASS_INLINE uint64_t below_small(uint64_t a, uint64_t b) {
    return (a - b) & ~a;
}

/* One pass over entries [0, n) of p: each written to `out` (when not NULL) and compared with
 * `bound`; 1 when every entry is below it. */
PASS_INLINE int below_pass(const uint8_t *p, uint64_t n, uint64_t bound, uint8_t *out,
                           uint8_t encoding) {
    uint64_t all = ~(uint64_t)0;
    if (bound > (UINT64_C(1) << 63)) { /* an extent past 2^63: the general borrow */
        for (uint64_t j = 0; j < n; j++) {
            uint64_t v = entry(p, j, encoding);
            if (out != NULL) put(out, j, v);
            all &= borrow(v, bound);
        }
    } else if (out == NULL) {
        for (uint64_t j = 0; j < n; j++) all &= below_small(entry(p, j, encoding), bound);
    } else {
        for (uint64_t j = 0; j < n; j++) {
            uint64_t v = entry(p, j, encoding);
            put(out, j, v);
            all &= below_small(v, bound);
        }
    }
    return (int)(all >> 63);
}

/* One pass over the n + 1 pointers: each written to `out` (when not NULL); 1 when none is
 * below the one before it -- or, as a filter, 0 when some pointer from the second on has the
 * top bit set (the exact search that follows decides; such a value is never nnz). For values
 * below 2^63 the difference of neighbours has the top bit set exactly when they decrease. */
PASS_INLINE int ascending_pass(const uint8_t *p, uint64_t n, uint8_t *out, uint8_t encoding) {
    uint64_t flag = 0;
    if (out != NULL) put(out, 0, entry(p, 0, encoding));
    if (out == NULL) {
        for (uint64_t i = 1; i <= n; i++) {
            uint64_t v = entry(p, i, encoding);
            flag |= (v - entry(p, i - 1, encoding)) | v;
        }
    } else {
        for (uint64_t i = 1; i <= n; i++) {
            uint64_t v = entry(p, i, encoding);
            put(out, i, v);
            flag |= (v - entry(p, i - 1, encoding)) | v;
        }
    }
    return (int)(~flag >> 63);
}

/* The passes, each specialised for every encoding (a constant `encoding` lets the compiler
 * drop the switch and vectorise the loop). */
static int all_below(const struct hurray_index_array *a, uint64_t n, uint64_t bound) {
    uint8_t *out = a->out;
    switch (a->encoding) {
    case HURRAY_INDEX_I64: return below_pass(a->data, n, bound, out, HURRAY_INDEX_I64);
    case HURRAY_INDEX_I32: return below_pass(a->data, n, bound, out, HURRAY_INDEX_I32);
    case HURRAY_INDEX_U32: return below_pass(a->data, n, bound, out, HURRAY_INDEX_U32);
    default: return below_pass(a->data, n, bound, out, HURRAY_INDEX_U64LE);
    }
}
static int ascending(const struct hurray_index_array *a, uint64_t n) {
    uint8_t *out = a->out;
    switch (a->encoding) {
    case HURRAY_INDEX_I64: return ascending_pass(a->data, n, out, HURRAY_INDEX_I64);
    case HURRAY_INDEX_I32: return ascending_pass(a->data, n, out, HURRAY_INDEX_I32);
    case HURRAY_INDEX_U32: return ascending_pass(a->data, n, out, HURRAY_INDEX_U32);
    default: return ascending_pass(a->data, n, out, HURRAY_INDEX_U64LE);
    }
}
static uint64_t at(const struct hurray_index_array *a, uint64_t j) {
    return entry(a->data, j, a->encoding);
}

/* " (-3 as int64)" for a value with the top bit set: an int64 index that was negative. */
static const char *as_int64(uint64_t v, char buf[40]) {
    buf[0] = '\0';
    if (v >> 63) snprintf(buf, 40, " (%lld as int64)", (long long)(int64_t)v);
    return buf;
}

/* INDEX naming the first of the n entries of `a` that is not below `bound` (one exists). */
static int first_not_below(const struct hurray_index_array *a, uint64_t n, uint64_t bound,
                           const char *name, int dim, int shape_dim,
                           struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX], sv[40];
    for (uint64_t j = 0; j < n; j++) {
        uint64_t v = at(a, j);
        if (v < bound) continue;
        if (dim >= 0)
            return hri_fail(err, HURRAY_E_INDEX,
                            hri_fieldf(f, "%s[%d][%llu]", name, dim, (unsigned long long)j),
                            "%s[%d][%llu] = %llu%s is not below shape[%d] = %llu", name, dim,
                            (unsigned long long)j, (unsigned long long)v, as_int64(v, sv),
                            shape_dim, (unsigned long long)bound);
        return hri_fail(err, HURRAY_E_INDEX,
                        hri_fieldf(f, "%s[%llu]", name, (unsigned long long)j),
                        "%s[%llu] = %llu%s is not below shape[%d] = %llu", name,
                        (unsigned long long)j, (unsigned long long)v, as_int64(v, sv),
                        shape_dim, (unsigned long long)bound);
    }
    return hri_fail(err, HURRAY_E_INTERNAL, name, "%s: no entry at or above the bound", name);
}

static int check_coo(uint8_t rank, const uint64_t *shape, uint64_t nnz,
                     const struct hurray_index_array *rows, struct hurray_error *err) {
    for (unsigned d = 0; d < rank; d++) {
        if (all_below(&rows[d], nnz, shape[d])) continue;
        return first_not_below(&rows[d], nnz, shape[d], "indices", (int)d, (int)d, err);
    }
    return HURRAY_OK;
}

static int check_compressed(uint8_t tag, uint64_t n, uint64_t minor_extent, uint64_t nnz,
                            const struct hurray_index_array *idx,
                            const struct hurray_index_array *ptr, struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX], sv[40];
    const char *pname = major_ptr_name(tag);
    int rising = ascending(ptr, n); /* writes every pointer out; 0: search exactly */
    uint64_t prev = at(ptr, 0);
    HR_FAIL_IF(prev != 0, err, HURRAY_E_INDEX, hri_fieldf(f, "%s[0]", pname),
               "%s[0] = %llu%s; the pointers start at 0", pname, (unsigned long long)prev,
               as_int64(prev, sv));
    for (uint64_t i = 1; !rising && i <= n; i++) {
        uint64_t v = at(ptr, i);
        if (v >= prev) {
            prev = v;
            continue;
        }
        return hri_fail(err, HURRAY_E_INDEX, hri_fieldf(f, "%s[%llu]", pname, (unsigned long long)i),
                        "%s[%llu] = %llu%s is below %s[%llu] = %llu; the pointers never decrease",
                        pname, (unsigned long long)i, (unsigned long long)v, as_int64(v, sv),
                        pname, (unsigned long long)(i - 1), (unsigned long long)prev);
    }
    prev = at(ptr, n);
    HR_FAIL_IF(prev != nnz, err, HURRAY_E_INDEX,
               hri_fieldf(f, "%s[%llu]", pname, (unsigned long long)n),
               "%s[%llu] = %llu; the last pointer is nnz = %llu", pname, (unsigned long long)n,
               (unsigned long long)prev, (unsigned long long)nnz);
    if (all_below(idx, nnz, minor_extent)) return HURRAY_OK;
    return first_not_below(idx, nnz, minor_extent, minor_name(tag), -1,
                           tag == HURRAY_LAYOUT_CSR ? 1 : 0, err);
}

/* Bytes of `count` entries of `width` bytes, or BUFFER_SIZE naming `name` when `have` is
 * short. */
static int need_bytes(const char *name, uint64_t count, unsigned width, uint64_t have,
                      struct hurray_error *err) {
    uint64_t need = 0;
    HR_FAIL_IF(hri_mul_u64(count, width, &need), err, HURRAY_E_OVERFLOW, name,
               "%s: %llu entries of %u bytes exceed 2^64-1", name, (unsigned long long)count,
               width);
    HR_FAIL_IF(have < need, err, HURRAY_E_BUFFER_SIZE, name,
               "%s: %llu bytes, the layout needs %llu", name, (unsigned long long)have,
               (unsigned long long)need);
    return HURRAY_OK;
}

/* What both entry points check before reading an entry: the layout, the shape, resolved
 * extents, the rank. `fn` names the entry point in ARGUMENT messages. */
static int sparse_args(const char *fn, const struct hurray_layout *layout, uint8_t rank,
                       const uint64_t *shape, struct hurray_error *err) {
    HR_FAIL_IF(!layout || (layout->tag != HURRAY_LAYOUT_COO && layout->tag != HURRAY_LAYOUT_CSR &&
                           layout->tag != HURRAY_LAYOUT_CSC),
               err, HURRAY_E_ARGUMENT, "layout", "%s: not a coo, csr or csc layout", fn);
    HR_FAIL_IF(!shape && rank, err, HURRAY_E_ARGUMENT, "shape", "%s: NULL shape", fn);
    return HURRAY_OK;
}
static int sparse_shape(const struct hurray_layout *layout, uint8_t rank, const uint64_t *shape,
                        struct hurray_error *err) {
    char f[HURRAY_ERROR_FIELD_MAX];
    for (unsigned d = 0; d < rank; d++)
        HR_FAIL_IF(shape[d] == HURRAY_DYNAMIC_DIM, err, HURRAY_E_UNSUPPORTED,
                   hri_fieldf(f, "shape[%u]", d),
                   "shape[%u] is dynamic; index contents are checked against resolved extents",
                   d);
    if (layout->tag == HURRAY_LAYOUT_COO)
        HR_FAIL_IF(rank == 0, err, HURRAY_E_CONSTRAINT, "rank", "rank: coo needs rank >= 1");
    else
        HR_FAIL_IF(rank != 2, err, HURRAY_E_CONSTRAINT, "rank", "rank: %s needs rank 2, not %u",
                   hurray_layout_name(layout->tag), (unsigned)rank);
    return HURRAY_OK;
}

int hurray_sparse_validate_index_buffers(const struct hurray_layout *layout, uint8_t rank,
                                         const uint64_t *shape, const uint8_t *index,
                                         uint64_t index_bytes, const uint8_t *ptr,
                                         uint64_t ptr_bytes, struct hurray_error *err) {
    static const char fn[] = "sparse_validate_index_buffers";
    HR_TRY(sparse_args(fn, layout, rank, shape, err));
    HR_FAIL_IF((!index && index_bytes) || (!ptr && ptr_bytes), err, HURRAY_E_ARGUMENT, "index",
               "%s: NULL buffer with a non-zero size", fn);
    HR_TRY(sparse_shape(layout, rank, shape, err));
    const uint8_t tag = layout->tag;
    const uint64_t nnz = layout->nnz;
    if (tag == HURRAY_LAYOUT_COO) {
        uint64_t count = 0;
        HR_FAIL_IF(hri_mul_u64(nnz, rank, &count), err, HURRAY_E_OVERFLOW, "indices",
                   "indices: rank * nnz exceeds 2^64-1");
        HR_TRY(need_bytes("indices", count, 8u, index_bytes, err));
        struct hurray_index_array rows[HURRAY_MAX_RANK];
        for (unsigned d = 0; d < rank; d++)
            rows[d] = (struct hurray_index_array){index ? index + (uint64_t)d * nnz * 8u : NULL, nnz * 8u,
                                                  HURRAY_INDEX_U64LE, NULL, 0};
        return check_coo(rank, shape, nnz, rows, err);
    }
    const uint64_t n = shape[tag == HURRAY_LAYOUT_CSR ? 0 : 1];
    const uint64_t minor = shape[tag == HURRAY_LAYOUT_CSR ? 1 : 0];
    HR_TRY(need_bytes(minor_name(tag), nnz, 8u, index_bytes, err));
    HR_TRY(need_bytes(major_ptr_name(tag), n + 1u, 8u, ptr_bytes, err)); /* n < 2^63: no wrap */
    const struct hurray_index_array idx = {index, index_bytes, HURRAY_INDEX_U64LE, NULL, 0};
    const struct hurray_index_array pa = {ptr, ptr_bytes, HURRAY_INDEX_U64LE, NULL, 0};
    return check_compressed(tag, n, minor, nnz, &idx, &pa, err);
}

/* One source array of `count` entries: its encoding, sizes and (when it has one) an output
 * that does not overlap it, or is the array itself with the format's entry width. */
static int check_array(const struct hurray_index_array *a, const char *name, uint64_t count,
                       struct hurray_error *err) {
    HR_FAIL_IF(a->encoding > HURRAY_INDEX_U32, err, HURRAY_E_ARGUMENT, name,
               "%s: encoding %u is not a HURRAY_INDEX_ value", name, (unsigned)a->encoding);
    HR_FAIL_IF(!a->data && a->bytes, err, HURRAY_E_ARGUMENT, name,
               "%s: NULL data with a non-zero size", name);
    HR_FAIL_IF(!a->out && a->out_bytes, err, HURRAY_E_ARGUMENT, name,
               "%s: NULL output with a non-zero size", name);
    const unsigned width = entry_width(a->encoding);
    HR_TRY(need_bytes(name, count, width, a->bytes, err));
    if (a->out == NULL) return HURRAY_OK;
    uint64_t out_need = 0;
    HR_FAIL_IF(hri_mul_u64(count, 8u, &out_need), err, HURRAY_E_OVERFLOW, name,
               "%s: %llu entries of 8 bytes exceed 2^64-1", name, (unsigned long long)count);
    HR_FAIL_IF(a->out_bytes < out_need, err, HURRAY_E_BUFFER_SIZE, name,
               "%s: the output holds %llu bytes, the layout needs %llu", name,
               (unsigned long long)a->out_bytes, (unsigned long long)out_need);
    const uintptr_t in0 = (uintptr_t)a->data, in1 = in0 + (uintptr_t)(count * width);
    const uintptr_t o0 = (uintptr_t)a->out, o1 = o0 + (uintptr_t)out_need;
    const int same = o0 == in0 && width == 8u;
    HR_FAIL_IF(count != 0 && !same && o0 < in1 && in0 < o1, err, HURRAY_E_ARGUMENT, name,
               "%s: the output overlaps the input (only the same address, with 8-byte entries, "
               "may)", name);
    return HURRAY_OK;
}

int hurray_sparse_import_index_buffers(const struct hurray_layout *layout, uint8_t rank,
                                       const uint64_t *shape,
                                       const struct hurray_index_array *index,
                                       const struct hurray_index_array *ptr,
                                       struct hurray_error *err) {
    static const char fn[] = "sparse_import_index_buffers";
    HR_TRY(sparse_args(fn, layout, rank, shape, err));
    const uint8_t tag = layout->tag;
    HR_FAIL_IF(!index || (tag != HURRAY_LAYOUT_COO && !ptr), err, HURRAY_E_ARGUMENT, "index",
               "%s: NULL index array", fn);
    HR_TRY(sparse_shape(layout, rank, shape, err));
    const uint64_t nnz = layout->nnz;
    char f[HURRAY_ERROR_FIELD_MAX];
    if (tag == HURRAY_LAYOUT_COO) {
        for (unsigned d = 0; d < rank; d++)
            HR_TRY(check_array(&index[d], hri_fieldf(f, "indices[%u]", d), nnz, err));
        return check_coo(rank, shape, nnz, index, err);
    }
    const uint64_t n = shape[tag == HURRAY_LAYOUT_CSR ? 0 : 1];
    const uint64_t minor = shape[tag == HURRAY_LAYOUT_CSR ? 1 : 0];
    HR_TRY(check_array(index, minor_name(tag), nnz, err));
    HR_TRY(check_array(ptr, major_ptr_name(tag), n + 1u, err)); /* n < 2^63: no wrap */
    return check_compressed(tag, n, minor, nnz, index, ptr, err);
}
