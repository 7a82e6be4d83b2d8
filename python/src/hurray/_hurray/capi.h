/* The C API hurray._hurray offers its sibling extension hurray._numpy.
 *
 * hurray._numpy is built against NumPy's headers and imported on first use
 * (hurray.from_numpy, Tensor.__array__, hurray.aligned_allocator, the SciPy
 * paths, sparse_coo, asarray of an array-like), so that
 * importing hurray never imports NumPy. It reaches the Tensor through this
 * table, published as the capsule "hurray._hurray._C_API" (PyCapsule_Import).
 * The table is a constant: every function takes the hurray._hurray module
 * object whose state it works in, so it is the same for every interpreter.
 *
 * Nothing here is public API; the two modules are built and shipped together
 * and the version must match exactly. */
#ifndef HRPY_CAPI_H
#define HRPY_CAPI_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "hurray/hurray.h"

#define HRPY_CAPI_NAME "hurray._hurray._C_API"
#define HRPY_CAPI_VERSION 4u

/* What a NumPy array over a tensor's element buffer needs. Filled by
 * numpy_view; the pointers stay valid while the tensor lives. */
struct hrpy_np_view {
    char *data;        /* first element: buffer 0 + byte_offset */
    int readonly;      /* buffer 0 is read-only */
    uint8_t dtype;     /* the tensor's element type tag */
    char kind;         /* NumPy kind 'b' 'i' 'u' 'f' 'c'; 0 when NumPy has no dtype */
    unsigned itemsize; /* bytes per element (0 for sub-byte types) */
    int ndim;
    int c_order;       /* row-major: strides are the C-order ones */
    int64_t shape[HURRAY_MAX_RANK];
    int64_t strides[HURRAY_MAX_RANK]; /* bytes */
    uint64_t count;    /* element count */
    uint64_t nbytes;   /* bytes of buffer 0 from data to its declared end */
};

/* numpy_view flags: which element types the caller can represent. */
#define HRPY_NPV_NUMPY 0u     /* NumPy's own dtypes only (kind != 0) */
#define HRPY_NPV_BFLOAT16 1u  /* also bfloat16 (ml_dtypes) */
#define HRPY_NPV_TIER2 2u     /* also every other named type (ml_dtypes; sub-byte packed) */

/* One buffer of a tensor being built: [ptr, ptr + size) kept valid by
 * `owner` (borrowed here; the tensor takes its own reference). */
struct hrpy_part {
    void *ptr;
    uint64_t size;
    PyObject *owner;
    int readonly;
    int align_log2; /* declared alignment of an owned buffer; -1: measure the address;
                       HRPY_ALIGN_AS_SAVED: what a saved file declares for a buffer of
                       this size (a tensor that only hurray.save reads) */
};

/* hrpy_part.align_log2 of a buffer lent to hurray.save alone: its tensor declares at once the
 * alignment the file declares for it (file-container.md § Declared alignment of saved
 * buffers: that of an owned buffer of its size), so that the writer's item borrows the
 * tensor's record instead of copying it to replace a measured alignment. */
#define HRPY_ALIGN_AS_SAVED (-2)

/* What hurray.save writes for an ndarray it takes as it is (hrpy_np_capi.save_plan): one
 * buffer of `size` bytes at `data`, read by the writer during the call only (the caller keeps
 * the array alive meanwhile), its descriptor the one a Tensor built by _save_view would have
 * (cpu/standard, byte_offset 0, the buffer declaring what the file declares for its size:
 * file-container.md § Declared alignment of saved buffers). shape is filled up to rank. */
struct hrpy_save_plan {
    uint8_t dtype;
    uint8_t layout; /* HURRAY_LAYOUT_ROW_MAJOR or HURRAY_LAYOUT_COL_MAJOR */
    uint8_t rank;   /* <= HURRAY_MAX_RANK */
    const void *data;
    uint64_t size;
    uint64_t shape[HURRAY_MAX_RANK];
};

/* What a SciPy sparse object over a coo / csr / csc tensor needs (Tensor.to_scipy). Filled
 * by sparse_view; the pointers stay valid while the tensor lives. */
struct hrpy_sparse_view {
    uint8_t layout;    /* HURRAY_LAYOUT_COO, _CSR or _CSC */
    uint8_t dtype;     /* the tensor's element type tag (one NumPy has: kind != 0) */
    char kind;         /* NumPy kind of the values */
    unsigned itemsize; /* bytes per value */
    int ndim;
    int64_t shape[HURRAY_MAX_RANK];
    uint64_t nnz;
    char *values;      /* the first value: buffer 0 + byte_offset */
    char *index;       /* COO: indices, (ndim, nnz) row-major; CSR/CSC: the nnz minor indices */
    char *ptr;         /* CSR/CSC: the n + 1 pointers; NULL for COO */
    int readonly[3];   /* per buffer: values, index, ptr */
};

typedef struct {
    unsigned version;
    /* 1 if obj is a hurray.Tensor of this module. */
    int (*is_tensor)(PyObject *module, PyObject *obj);
    /* Checks that a NumPy array may be made over the tensor's bytes (CPU,
     * producer_synced, resolved shape, stride-expressible layout, element type
     * per `flags`, not quantized), raising UnsupportedError naming `who` and
     * the reason otherwise; fills *v. 0 / -1. */
    int (*numpy_view)(PyObject *module, PyObject *tensor, const char *who, unsigned flags,
                      struct hrpy_np_view *v);
    /* A new owned, writable, aligned buffer object of `size` bytes (zeroed if
     * `zero`); *data and *align_log2 receive its address and alignment. */
    PyObject *(*owned_new)(PyObject *module, uint64_t size, int zero, void **data,
                           uint8_t *align_log2);
    /* A new CPU Tensor over one buffer with a dense, stride-expressible
     * layout (row_major, col_major, strided with element strides). */
    PyObject *(*tensor_dense)(PyObject *module, const struct hrpy_part *part, uint8_t dtype,
                              uint8_t rank, const uint64_t *shape, uint8_t layout_tag,
                              const int64_t *strides, uint64_t byte_offset);
    /* NumPy's kind ('b' 'i' 'u' 'f' 'c') for an element type NumPy has, else 0. */
    char (*numpy_kind)(uint8_t tag);
    /* libhurray's element-type table (the binding keeps no copy). */
    const struct hurray_dtype_info *(*dtype_info)(uint8_t tag);
    int (*dtype_from_name)(const char *name, size_t len, uint8_t *tag);
    /* Raises the mapped exception class for (status) in the descriptor
     * context with a formatted message; returns NULL. */
    PyObject *(*raise_fmt)(PyObject *module, int status, const char *field, const char *fmt,
                           ...);
    /* Checks that SciPy may be handed the tensor's buffers (CPU, producer_synced, a coo /
     * csr / csc layout, an element type NumPy has, not quantized, resolved shape, index
     * contents valid: hurray_sparse_validate_index_buffers), raising the binding's
     * exception naming `who` otherwise; fills *v. 0 / -1. */
    int (*sparse_view)(PyObject *module, PyObject *tensor, const char *who,
                       struct hrpy_sparse_view *v);
    /* A new CPU Tensor with a coo / csr / csc layout of `nnz` over `n` parts (values, then
     * the layout's index buffers), validated by the three tiers and then for its index
     * contents. `index` NULL: the contents are the parts' own
     * (hurray_sparse_validate_index_buffers). Otherwise they come from `index` (COO: one
     * array per dimension; CSR/CSC: the minor indices) and `ptr` (CSR/CSC: the pointers),
     * each checked and, where it has an `out` (an index part's memory, not yet filled),
     * written there in the same pass (hurray_sparse_import_index_buffers). `index_private`:
     * every index part is memory the caller allocated for this tensor and holds no other
     * reference to (an imported or copied index array); the tensor then keeps its index
     * buffers read-only and is checked once (memory-layout.md HR-LAYOUT-26). */
    PyObject *(*tensor_sparse)(PyObject *module, const struct hrpy_part *parts, Py_ssize_t n,
                               uint8_t dtype, uint8_t rank, const uint64_t *shape,
                               uint8_t layout_tag, uint64_t nnz,
                               const struct hurray_index_array *index,
                               const struct hurray_index_array *ptr, int index_private);
    /* A shape argument of a call that validates buffers against it: ints >= 0 (None is a
     * dynamic extent, refused as InvalidDescriptorError "who: shape[k] is dynamic (None)").
     * 0 / -1. */
    int (*shape_resolved)(PyObject *module, PyObject *obj, const char *who, uint8_t *rank,
                          uint64_t *shape);
} hrpy_capi;

/* The other direction: what hurray._numpy offers hurray._hurray, published as the capsule
 * "hurray._numpy._C_API" (looked up by _hurray on first use, with the module object every
 * function takes). Same rules as above: internal, the version must match exactly. */
#define HRPY_NP_CAPI_NAME "hurray._numpy._C_API"
#define HRPY_NP_CAPI_VERSION 2u

/* A hint that the caller will soon read `p` (a cache prefetch; nothing where the compiler
 * has no such builtin). Never faults, whatever p is. */
#if defined(__GNUC__) || defined(__clang__)
#define HRPY_PREFETCH(p) __builtin_prefetch(p)
#else
#define HRPY_PREFETCH(p) ((void)(p))
#endif

typedef struct {
    unsigned version;
    /* hurray.save's plan for `obj`, when it is an ndarray that _save_view would borrow as it
     * is (a dtype hurray has that is not sub-byte, native little-endian, C- or
     * Fortran-contiguous, rank <= HURRAY_MAX_RANK): fills *p and returns 1, raising
     * nothing and checking nothing the writer checks. 0 for every other object (the caller
     * then takes _save_view's path, which copies, packs or refuses as before); -1 with an
     * exception set on an internal failure. */
    int (*save_plan)(PyObject *np_module, PyObject *obj, struct hrpy_save_plan *p);
    /* A prefetch of what save_plan will read of `obj` beyond its object header (an
     * ndarray's shape), for a caller that plans many arrays in a row and has already
     * prefetched their headers: reads obj's header, so only for a live object. */
    void (*save_plan_prefetch)(PyObject *obj);
} hrpy_np_capi;

#endif
