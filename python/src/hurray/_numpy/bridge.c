/* hurray._numpy: the NumPy side of the binding (seed § NumPy Interoperability,
 * § Buffer Lifetime and Ownership, § copy on ingest, § The aligned
 * allocator).
 *
 * Built against NumPy's headers and imported on first use -- by
 * hurray.from_numpy, Tensor.__array__, Tensor.to_ml_dtypes and
 * hurray.aligned_allocator -- so that `import hurray` never imports NumPy. It
 * reaches the Tensor through hurray._hurray's C API capsule (capi.h) and
 * keeps no rule of its own: what may become an ndarray is decided by
 * _hurray's numpy_view, the descriptor of a shared array is built and
 * validated there.
 *
 *   from_numpy(array, *, copy=None)  C-contiguous -> row_major, Fortran ->
 *       col_major, other strides that are whole elements -> strided, all
 *       zero-copy: the Tensor holds a strong reference to the ndarray.
 *       Copied instead (row- or column-major, into an owned 64-byte-aligned
 *       buffer, little-endian) when the address is not 64-byte aligned, the
 *       data is big-endian, or the strides are not whole elements; copy=True
 *       always copies, copy=False raises ValueError where a copy is needed.
 *   _tensor_to_array(tensor, dtype, copy)  Tensor.__array__: an ndarray over
 *       the tensor's buffer whose base is the tensor.
 *   _to_ml_dtypes(tensor)  the ml_dtypes view (sub-byte types: an unpacked copy).
 *   _aligned_handler_push() / _aligned_handler_restore(previous)  the NEP 49
 *       handler behind hurray.aligned_allocator(): 64-byte-aligned blocks. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

#include <numpy/arrayobject.h>

#include "capi.h"

typedef struct {
    PyObject *hurray;      /* the hurray._hurray module the C API works in */
    const hrpy_capi *api;
    PyObject *handler;     /* the "mem_handler" capsule of the aligned allocator */
    uint8_t by_kind[5][17]; /* Tier 1 tag by NumPy kind index and itemsize, 0 if none */
} np_state;

static np_state *get_state(PyObject *module) { return (np_state *)PyModule_GetState(module); }

/* ---- dtypes --------------------------------------------------------------------------------- */

static int kind_index(char kind) {
    switch (kind) {
    case 'b': return 0;
    case 'i': return 1;
    case 'u': return 2;
    case 'f': return 3;
    case 'c': return 4;
    default: return -1;
    }
}

/* NumPy type number for a (kind, itemsize) the C API reported. */
static int type_number(char kind, unsigned itemsize) {
    switch (kind) {
    case 'b': return NPY_BOOL;
    case 'i': return itemsize == 1 ? NPY_INT8 : itemsize == 2 ? NPY_INT16
                   : itemsize == 4 ? NPY_INT32 : NPY_INT64;
    case 'u': return itemsize == 1 ? NPY_UINT8 : itemsize == 2 ? NPY_UINT16
                   : itemsize == 4 ? NPY_UINT32 : NPY_UINT64;
    case 'f': return itemsize == 2 ? NPY_FLOAT16 : itemsize == 4 ? NPY_FLOAT32 : NPY_FLOAT64;
    default: return itemsize == 8 ? NPY_COMPLEX64 : NPY_COMPLEX128;
    }
}

/* A dtype NumPy does not know by itself: an ml_dtypes type whose name is a
 * canonical hurray name (ml_dtypes' float8_e4m3 is not hurray's
 * float8_e4m3fn, so aliases do not count). */
static int ml_dtypes_tag(np_state *st, PyArray_Descr *descr, uint8_t *tag) {
    PyObject *mod = PyObject_GetAttrString((PyObject *)descr->typeobj, "__module__");
    PyObject *name = mod ? PyObject_GetAttrString((PyObject *)descr->typeobj, "__name__") : NULL;
    int found = 0;
    if (name != NULL && PyUnicode_Check(mod) && PyUnicode_Check(name) &&
        PyUnicode_CompareWithASCIIString(mod, "ml_dtypes") == 0) {
        Py_ssize_t len = 0;
        const char *s = PyUnicode_AsUTF8AndSize(name, &len);
        const struct hurray_dtype_info *info = NULL;
        if (s != NULL && st->api->dtype_from_name(s, (size_t)len, tag) == HURRAY_OK &&
            (info = st->api->dtype_info(*tag)) != NULL && strcmp(info->name, s) == 0)
            found = 1;
    }
    Py_XDECREF(mod);
    Py_XDECREF(name);
    PyErr_Clear();
    return found;
}

static int array_tag(np_state *st, PyArrayObject *arr, uint8_t *tag) {
    PyArray_Descr *descr = PyArray_DESCR(arr);
    npy_intp elsize = PyDataType_ELSIZE(descr);
    int k = kind_index(descr->kind);
    if (!PyDataType_HASFIELDS(descr) && !PyDataType_HASSUBARRAY(descr) && k >= 0 && elsize > 0 &&
        elsize <= 16 && st->by_kind[k][elsize] != 0) {
        *tag = st->by_kind[k][elsize];
        return 0;
    }
    if (ml_dtypes_tag(st, descr, tag)) return 0;
    st->api->raise_fmt(st->hurray, HURRAY_E_UNSUPPORTED, "dtype",
                       "from_numpy: NumPy dtype %R has no hurray element type", (PyObject *)descr);
    return -1;
}

static int is_little_endian(PyArray_Descr *descr) {
    char order = descr->byteorder;
#if NPY_BYTE_ORDER == NPY_LITTLE_ENDIAN
    return order != NPY_BIG;
#else
    return order == NPY_LITTLE || order == NPY_IGNORE;
#endif
}

/* ---- from_numpy --------------------------------------------------------------------------- */

struct plan {
    uint8_t tag;
    uint8_t layout;
    int nd;
    uint64_t shape[NPY_MAXDIMS > HURRAY_MAX_RANK ? NPY_MAXDIMS : HURRAY_MAX_RANK];
    int64_t strides[HURRAY_MAX_RANK]; /* element strides (strided) */
    char *lo;                         /* lowest byte the array touches */
    uint64_t span;                    /* bytes from lo past the highest element */
    uint64_t byte_offset;             /* first element - lo */
    const char *copy_reason;          /* why sharing is impossible, or NULL */
};

/* The strided case: element strides, and the byte range the array spans. */
static void plan_strided(PyArrayObject *arr, npy_intp itemsize, struct plan *p) {
    npy_intp *dims = PyArray_DIMS(arr), *strides = PyArray_STRIDES(arr);
    npy_intp neg = 0, pos = 0;
    for (int k = 0; k < p->nd; k++) {
        if (strides[k] % itemsize != 0) {
            p->copy_reason = "has strides that are not whole elements";
            return;
        }
        p->strides[k] = (int64_t)(strides[k] / itemsize);
        if (strides[k] < 0) neg += strides[k] * (dims[k] - 1);
        else pos += strides[k] * (dims[k] - 1);
    }
    p->layout = HURRAY_LAYOUT_STRIDED;
    p->lo = PyArray_BYTES(arr) + neg;
    p->span = (uint64_t)(pos - neg + itemsize);
    p->byte_offset = (uint64_t)(-neg);
}

static int make_plan(np_state *st, PyArrayObject *arr, struct plan *p) {
    memset(p, 0, sizeof *p);
    if (array_tag(st, arr, &p->tag) < 0) return -1;
    p->nd = PyArray_NDIM(arr);
    if (p->nd > HURRAY_MAX_RANK) {
        st->api->raise_fmt(st->hurray, HURRAY_E_LIMIT, "rank",
                           "from_numpy: %d dimensions exceed the format maximum of %d", p->nd,
                           HURRAY_MAX_RANK);
        return -1;
    }
    npy_intp itemsize = PyArray_ITEMSIZE(arr);
    for (int k = 0; k < p->nd; k++) p->shape[k] = (uint64_t)PyArray_DIMS(arr)[k];
    p->lo = PyArray_BYTES(arr);
    p->span = (uint64_t)PyArray_NBYTES(arr);
    if (PyArray_IS_C_CONTIGUOUS(arr)) p->layout = HURRAY_LAYOUT_ROW_MAJOR;
    else if (PyArray_IS_F_CONTIGUOUS(arr)) p->layout = HURRAY_LAYOUT_COL_MAJOR;
    else plan_strided(arr, itemsize, p);
    if (p->copy_reason == NULL && !is_little_endian(PyArray_DESCR(arr)))
        p->copy_reason = "is big-endian (hurray buffers are little-endian)";
    if (p->copy_reason == NULL && p->span != 0 &&
        (uintptr_t)p->lo % HURRAY_MIN_BUFFER_ALIGNMENT != 0)
        p->copy_reason = "is not 64-byte aligned (MIN_BUFFER_ALIGNMENT)";
    return 0;
}

/* The array copied into an owned, aligned, little-endian buffer in C (or,
 * for a Fortran-contiguous source, Fortran) order. */
static PyObject *copy_into_owned(np_state *st, PyArrayObject *arr, const struct plan *p) {
    void *data = NULL;
    uint8_t log2 = 0;
    PyArray_Descr *descr = PyArray_DESCR(arr);
    int fortran = !PyArray_IS_C_CONTIGUOUS(arr) && PyArray_IS_F_CONTIGUOUS(arr);
    PyObject *owner = NULL, *dst = NULL, *tensor = NULL;
    owner = st->api->owned_new(st->hurray, (uint64_t)PyArray_NBYTES(arr), 0, &data, &log2);
    if (owner == NULL) goto done;
    if (is_little_endian(descr)) Py_INCREF(descr);
    else descr = PyArray_DescrNewByteorder(descr, NPY_LITTLE);
    if (descr == NULL) goto done;
    dst = PyArray_NewFromDescr(&PyArray_Type, descr, PyArray_NDIM(arr), PyArray_DIMS(arr), NULL,
                               data, NPY_ARRAY_WRITEABLE | (fortran ? NPY_ARRAY_F_CONTIGUOUS : 0),
                               NULL); /* steals descr */
    if (dst == NULL) goto done;
    if (PyArray_SetBaseObject((PyArrayObject *)dst, Py_NewRef(owner)) < 0) goto done;
    if (PyArray_CopyInto((PyArrayObject *)dst, arr) < 0) goto done;
    struct hrpy_part part = {data, (uint64_t)PyArray_NBYTES(arr), owner, 0, log2};
    tensor = st->api->tensor_dense(st->hurray, &part, p->tag, (uint8_t)p->nd, p->shape,
                                   fortran ? HURRAY_LAYOUT_COL_MAJOR : HURRAY_LAYOUT_ROW_MAJOR,
                                   NULL, 0);
done:
    Py_XDECREF(dst);
    Py_XDECREF(owner);
    return tensor;
}

static int sub_byte(np_state *st, uint8_t tag) {
    const struct hurray_dtype_info *info = st->api->dtype_info(tag);
    return info != NULL && info->bits % 8 != 0;
}

/* ml_dtypes stores a sub-byte type one element per byte (low bits); hurray
 * packs it (HR-PACK-1): always a copy, row-major, padding bits zero. */
static PyObject *pack_sub_byte(np_state *st, PyArrayObject *arr, const struct plan *p) {
    const struct hurray_dtype_info *info = st->api->dtype_info(p->tag);
    unsigned w = info->bits;
    uint64_t count = (uint64_t)PyArray_SIZE(arr), nbytes = (count * w + 7u) / 8u;
    void *data = NULL;
    uint8_t log2 = 0;
    PyObject *owner = NULL, *tensor = NULL;
    PyArrayObject *src = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)arr, NULL, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
    if (src == NULL) return NULL;
    owner = st->api->owned_new(st->hurray, nbytes, 1, &data, &log2);
    if (owner == NULL) goto done;
    const uint8_t *in = (const uint8_t *)PyArray_DATA(src);
    uint8_t *out = data;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t bit = i * w;
        unsigned v = in[i] & ((1u << w) - 1u), sh = (unsigned)(bit % 8u);
        out[bit / 8u] |= (uint8_t)(v << sh);
        if (sh + w > 8u) out[bit / 8u + 1u] |= (uint8_t)(v >> (8u - sh));
    }
    struct hrpy_part part = {data, nbytes, owner, 0, log2};
    tensor = st->api->tensor_dense(st->hurray, &part, p->tag, (uint8_t)p->nd, p->shape,
                                   HURRAY_LAYOUT_ROW_MAJOR, NULL, 0);
done:
    Py_XDECREF(owner);
    Py_DECREF(src);
    return tensor;
}

/* copy keyword: None / True / False -> -1 / 1 / 0. */
static int copy_mode(PyObject *obj, const char *who, int *mode) {
    if (obj == NULL || obj == Py_None) {
        *mode = -1;
        return 0;
    }
    if (!PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: copy must be None, True or False, not %.100s", who,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    *mode = obj == Py_True;
    return 0;
}

static PyObject *from_numpy(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    np_state *st = get_state(module);
    PyObject *copy = NULL;
    Py_ssize_t npos = PyVectorcall_NARGS(nargs), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (npos != 1)
        return PyErr_Format(PyExc_TypeError,
                            "from_numpy() takes 1 positional argument (%zd given)", npos);
    for (Py_ssize_t k = 0; k < nkw; k++) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "copy") != 0)
            return PyErr_Format(PyExc_TypeError,
                                "from_numpy() got an unexpected keyword argument %R",
                                PyTuple_GET_ITEM(kwnames, k));
        copy = args[npos + k];
    }
    int mode = -1;
    if (copy_mode(copy, "from_numpy", &mode) < 0) return NULL;
    if (!PyArray_Check(args[0]))
        return PyErr_Format(PyExc_TypeError, "from_numpy: expected a numpy.ndarray, not %.100s",
                            Py_TYPE(args[0])->tp_name);
    PyArrayObject *arr = (PyArrayObject *)args[0];
    struct plan p;
    if (make_plan(st, arr, &p) < 0) return NULL;
    if (sub_byte(st, p.tag)) {
        if (mode == 0)
            return PyErr_Format(PyExc_ValueError,
                                "from_numpy: ml_dtypes stores %R one element per byte and "
                                "hurray packs it, so it is always copied; copy=False forbids "
                                "the copy",
                                (PyObject *)PyArray_DESCR(arr));
        return pack_sub_byte(st, arr, &p);
    }
    if (mode == 0 && p.copy_reason != NULL)
        return PyErr_Format(PyExc_ValueError,
                            "from_numpy: the array %s, so sharing it needs a copy, and "
                            "copy=False forbids the copy",
                            p.copy_reason);
    if (mode == 1 || p.copy_reason != NULL) return copy_into_owned(st, arr, &p);
    struct hrpy_part part = {p.lo, p.span, (PyObject *)arr, !PyArray_ISWRITEABLE(arr), -1};
    return st->api->tensor_dense(st->hurray, &part, p.tag, (uint8_t)p.nd, p.shape, p.layout,
                                 p.strides, p.byte_offset);
}

/* ---- Tensor -> ndarray ------------------------------------------------------------------- */

/* The ml_dtypes scalar type for a hurray element type (ImportError if the
 * package is missing, UnsupportedError if it lacks the type). */
static PyObject *ml_dtypes_descr(np_state *st, uint8_t tag, const char *who) {
    const struct hurray_dtype_info *info = st->api->dtype_info(tag);
    PyObject *ml = PyImport_ImportModule("ml_dtypes");
    if (ml == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_ImportError)) return NULL;
        PyErr_Clear();
        return st->api->raise_fmt(st->hurray, HURRAY_E_UNSUPPORTED, "dtype",
                                  "%s: NumPy has no %s; install ml_dtypes to get one", who,
                                  info ? info->name : "?");
    }
    PyObject *type = PyObject_GetAttrString(ml, info ? info->name : "?");
    Py_DECREF(ml);
    if (type == NULL) {
        PyErr_Clear();
        return st->api->raise_fmt(st->hurray, HURRAY_E_UNSUPPORTED, "dtype",
                                  "%s: this ml_dtypes has no %s", who, info ? info->name : "?");
    }
    PyArray_Descr *descr = NULL;
    int ok = PyArray_DescrConverter(type, &descr);
    Py_DECREF(type);
    return ok ? (PyObject *)descr : NULL;
}

static PyObject *view_descr(np_state *st, const struct hrpy_np_view *v, const char *who) {
    if (v->kind == 0) return ml_dtypes_descr(st, v->dtype, who);
    PyArray_Descr *descr = PyArray_DescrFromType(type_number(v->kind, v->itemsize));
#if NPY_BYTE_ORDER != NPY_LITTLE_ENDIAN
    if (descr != NULL && v->itemsize > 1)
        Py_SETREF(descr, PyArray_DescrNewByteorder(descr, NPY_LITTLE));
#endif
    return (PyObject *)descr;
}

/* An ndarray over the view's bytes whose base is `tensor`. Steals descr. */
static PyObject *wrap_view(PyObject *tensor, const struct hrpy_np_view *v, PyObject *descr) {
    npy_intp dims[HURRAY_MAX_RANK], strides[HURRAY_MAX_RANK];
    for (int k = 0; k < v->ndim; k++) {
        dims[k] = (npy_intp)v->shape[k];
        strides[k] = (npy_intp)v->strides[k];
    }
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, (PyArray_Descr *)descr, v->ndim, dims,
                                         strides, v->data,
                                         v->readonly ? 0 : NPY_ARRAY_WRITEABLE, NULL);
    if (arr == NULL) return NULL;
    if (PyArray_SetBaseObject((PyArrayObject *)arr, Py_NewRef(tensor)) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

/* Tensor.__array__(dtype=None, copy=None) with NumPy 2's semantics: the
 * zero-copy view; a copy when copy=True or dtype differs; ValueError when
 * dtype differs and copy=False. */
static PyObject *tensor_to_array(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    np_state *st = get_state(module);
    struct hrpy_np_view v;
    PyArray_Descr *want = NULL;
    int mode = -1;
    if (nargs != 3) return PyErr_Format(PyExc_TypeError, "_tensor_to_array(tensor, dtype, copy)");
    if (args[2] != Py_None) {
        int truth = PyObject_IsTrue(args[2]);
        if (truth < 0) return NULL;
        mode = truth;
    }
    if (st->api->numpy_view(st->hurray, args[0], "__array__", HRPY_NPV_BFLOAT16, &v) < 0)
        return NULL;
    if (args[1] != Py_None && !PyArray_DescrConverter(args[1], &want)) return NULL;
    PyObject *descr = view_descr(st, &v, "__array__");
    PyObject *arr = descr ? wrap_view(args[0], &v, descr) : NULL;
    if (arr == NULL) goto error;
    if (want != NULL && !PyArray_EquivTypes(want, PyArray_DESCR((PyArrayObject *)arr))) {
        if (mode == 0) {
            PyErr_Format(PyExc_ValueError,
                         "__array__: converting %R to %R needs a copy, and copy=False forbids it",
                         (PyObject *)PyArray_DESCR((PyArrayObject *)arr), (PyObject *)want);
            goto error;
        }
        PyObject *cast = PyArray_CastToType((PyArrayObject *)arr, want, 0); /* steals want */
        want = NULL;
        Py_SETREF(arr, cast);
        return arr;
    }
    Py_CLEAR(want);
    if (mode == 1) Py_SETREF(arr, PyArray_NewCopy((PyArrayObject *)arr, NPY_KEEPORDER));
    return arr;
error:
    Py_XDECREF(want);
    Py_XDECREF(arr);
    return NULL;
}

/* Tensor.to_ml_dtypes(): byte-sized types (bfloat16, float8) as a zero-copy
 * view; packed sub-byte types unpacked, one element per byte in the low bits
 * as ml_dtypes stores them (a copy, in the tensor's storage order). NumPy's
 * own types come back as plain ndarrays. */
static PyObject *to_ml_dtypes(PyObject *module, PyObject *tensor) {
    np_state *st = get_state(module);
    struct hrpy_np_view v;
    if (st->api->numpy_view(st->hurray, tensor, "to_ml_dtypes", HRPY_NPV_TIER2, &v) < 0)
        return NULL;
    PyObject *descr = view_descr(st, &v, "to_ml_dtypes");
    if (descr == NULL) return NULL;
    if (v.itemsize != 0) return wrap_view(tensor, &v, descr);
    npy_intp dims[HURRAY_MAX_RANK];
    for (int k = 0; k < v.ndim; k++) dims[k] = (npy_intp)v.shape[k];
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, (PyArray_Descr *)descr, v.ndim, dims, NULL,
                                         NULL, v.c_order ? 0 : NPY_ARRAY_F_CONTIGUOUS, NULL);
    if (arr == NULL) return NULL;
    unsigned w = st->api->dtype_info(v.dtype)->bits;
    const uint8_t *in = (const uint8_t *)v.data;
    uint8_t *out = PyArray_DATA((PyArrayObject *)arr);
    for (uint64_t i = 0; i < v.count; i++) {
        uint64_t bit = i * w;
        unsigned sh = (unsigned)(bit % 8u), x = in[bit / 8u] >> sh;
        if (sh + w > 8u) x |= (unsigned)in[bit / 8u + 1u] << (8u - sh);
        out[i] = (uint8_t)(x & ((1u << w) - 1u));
    }
    return arr;
}

/* ---- the NEP 49 handler (hurray.aligned_allocator) ------------------------------------ */

#define HANDLER_ALIGN 64u

struct block_header {
    void *raw;
    size_t size;
};

static void *aligned_block(size_t size, int zero) {
    size_t head = sizeof(struct block_header);
    if (size > SIZE_MAX - head - HANDLER_ALIGN) return NULL;
    size_t total = size + head + HANDLER_ALIGN;
    void *raw = zero ? calloc(1, total) : malloc(total);
    if (raw == NULL) return NULL;
    uintptr_t p = ((uintptr_t)raw + head + HANDLER_ALIGN - 1u) & ~(uintptr_t)(HANDLER_ALIGN - 1u);
    struct block_header *h = (struct block_header *)p - 1;
    h->raw = raw;
    h->size = size;
    return (void *)p;
}

static void *handler_malloc(void *ctx, size_t size) {
    (void)ctx;
    return aligned_block(size, 0);
}

static void *handler_calloc(void *ctx, size_t nelem, size_t elsize) {
    (void)ctx;
    if (elsize != 0 && nelem > SIZE_MAX / elsize) return NULL;
    return aligned_block(nelem * elsize, 1);
}

static void handler_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size;
    if (ptr != NULL) free(((struct block_header *)ptr - 1)->raw);
}

static void *handler_realloc(void *ctx, void *ptr, size_t new_size) {
    if (ptr == NULL) return handler_malloc(ctx, new_size);
    size_t old = ((struct block_header *)ptr - 1)->size;
    void *p = aligned_block(new_size, 0);
    if (p == NULL) return NULL;
    memcpy(p, ptr, old < new_size ? old : new_size);
    handler_free(ctx, ptr, old);
    return p;
}

static PyDataMem_Handler aligned_handler = {
    "hurray_aligned_64",
    1,
    {NULL, handler_malloc, handler_calloc, handler_realloc, handler_free},
};

/* Installs the aligned handler in the current context; returns the previous one. */
static PyObject *handler_push(PyObject *module, PyObject *Py_UNUSED(arg)) {
    return PyDataMem_SetHandler(get_state(module)->handler);
}

static PyObject *handler_restore(PyObject *module, PyObject *previous) {
    (void)module;
    if (!PyCapsule_IsValid(previous, "mem_handler"))
        return PyErr_Format(PyExc_TypeError, "expected a 'mem_handler' capsule");
    PyObject *ours = PyDataMem_SetHandler(previous);
    if (ours == NULL) return NULL;
    Py_DECREF(ours);
    Py_RETURN_NONE;
}

/* ---- module ---------------------------------------------------------------------------------- */

static PyMethodDef bridge_methods[] = {
    {"from_numpy", (PyCFunction)(void (*)(void))from_numpy, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("from_numpy(array, *, copy=None) -> hurray.Tensor")},
    {"_tensor_to_array", (PyCFunction)(void (*)(void))tensor_to_array, METH_FASTCALL,
     PyDoc_STR("_tensor_to_array(tensor, dtype, copy): Tensor.__array__.")},
    {"_to_ml_dtypes", (PyCFunction)to_ml_dtypes, METH_O,
     PyDoc_STR("_to_ml_dtypes(tensor): Tensor.to_ml_dtypes().")},
    {"_aligned_handler_push", (PyCFunction)handler_push, METH_NOARGS,
     PyDoc_STR("Installs the 64-byte-aligned NEP 49 handler; returns the previous one.")},
    {"_aligned_handler_restore", (PyCFunction)handler_restore, METH_O,
     PyDoc_STR("Reinstalls a handler _aligned_handler_push returned.")},
    {NULL, NULL, 0, NULL},
};

/* by_kind: the tags NumPy has a dtype for (_hurray's numpy_kind, from
 * libhurray's table), by kind and itemsize. */
static void fill_kinds(np_state *st) {
    memset(st->by_kind, 0, sizeof st->by_kind);
    for (unsigned t = 1; t < 256; t++) {
        int k = kind_index(st->api->numpy_kind((uint8_t)t));
        const struct hurray_dtype_info *info = st->api->dtype_info((uint8_t)t);
        if (k < 0 || info == NULL || info->bits / 8u > 16u) continue;
        st->by_kind[k][info->bits / 8u] = (uint8_t)t;
    }
}

static int bridge_exec(PyObject *module) {
    np_state *st = get_state(module);
    if (PyArray_ImportNumPyAPI() < 0) return -1;
    st->hurray = PyImport_ImportModule("hurray._hurray");
    if (st->hurray == NULL) return -1;
    st->api = (const hrpy_capi *)PyCapsule_Import(HRPY_CAPI_NAME, 0);
    if (st->api == NULL) return -1;
    if (st->api->version != HRPY_CAPI_VERSION) {
        PyErr_Format(PyExc_ImportError, "hurray._numpy: C API version %u, expected %u",
                     st->api->version, HRPY_CAPI_VERSION);
        return -1;
    }
    st->handler = PyCapsule_New(&aligned_handler, "mem_handler", NULL);
    if (st->handler == NULL) return -1;
    fill_kinds(st);
    return 0;
}

static int bridge_traverse(PyObject *module, visitproc visit, void *arg) {
    np_state *st = get_state(module);
    if (st == NULL) return 0;
    Py_VISIT(st->hurray);
    Py_VISIT(st->handler);
    return 0;
}

static int bridge_clear(PyObject *module) {
    np_state *st = get_state(module);
    if (st == NULL) return 0;
    Py_CLEAR(st->hurray);
    Py_CLEAR(st->handler);
    return 0;
}

static void bridge_free(void *module) { (void)bridge_clear((PyObject *)module); }

static PyModuleDef_Slot bridge_slots[] = {
    {Py_mod_exec, (void *)bridge_exec},
#if PY_VERSION_HEX >= 0x030C0000
    /* NumPy itself does not load in subinterpreters. */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static PyModuleDef bridge_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "hurray._numpy",
    .m_doc = PyDoc_STR("hurray's NumPy bridge (imported on first use; imports NumPy)."),
    .m_size = sizeof(np_state),
    .m_methods = bridge_methods,
    .m_slots = bridge_slots,
    .m_traverse = bridge_traverse,
    .m_clear = bridge_clear,
    .m_free = bridge_free,
};

PyMODINIT_FUNC PyInit__numpy(void);
PyMODINIT_FUNC PyInit__numpy(void) { return PyModuleDef_Init(&bridge_def); }
