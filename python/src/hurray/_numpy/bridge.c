/* hurray._numpy: the NumPy side of the binding (requirements § NumPy Interoperability,
 * § Buffer Lifetime and Ownership, § copy on ingest, § The aligned
 * allocator).
 *
 * Built against NumPy's headers and imported on first use -- by
 * hurray.from_numpy, Tensor.__array__, Tensor.to_ml_dtypes,
 * hurray.aligned_allocator, hurray.from_scipy, hurray.sparse_coo,
 * Tensor.to_scipy and hurray.asarray of an array-like -- so that `import hurray`
 * never imports NumPy (nor SciPy, which only to_scipy imports). It
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
 *       handler behind hurray.aligned_allocator(): 64-byte-aligned blocks.
 *   from_scipy(matrix, *, copy=None), sparse_coo(indices, values, shape, *,
 *       copy=None), _to_scipy(tensor, array, copy)  SciPy sparse and the array-shaped
 *       COO constructor (§ sparse below: the copy decided per buffer, index
 *       contents checked by libhurray, no copy towards SciPy).
 *   _asarray(obj, copy)  hurray.asarray's array-like path.
 *   _from_dlpack_ndarray(array)  hurray.from_dlpack(array) for an ndarray whose capsule
 *       would be taken as it is, without making the capsule; NotImplemented otherwise.
 *
 * And one C function _hurray calls directly (capi.h hrpy_np_capi, the capsule _C_API):
 *   save_plan  hurray.save's plan for an ndarray _save_view would borrow as it is: the
 *       writer's item is built from it, no Tensor in between. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

#include <numpy/arrayobject.h>

#include "capi.h"

typedef struct {
    PyObject *hurray;      /* the hurray._hurray module the C API works in */
    const hrpy_capi *api;
    PyObject *handler;     /* the "mem_handler" capsule of the aligned allocator */
    PyObject *str_scipy_sparse; /* "scipy.sparse" */
    /* to_scipy: the class names (coo, csr, csc; array then matrix), made once, and the
     * classes themselves, looked up in scipy.sparse at their first use and kept (a dict
     * lookup and an attribute lookup less per call) */
    PyObject *str_cls[2][3];
    PyObject *cls[2][3];
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

/* The hurray element type of an array's dtype: 1 found, 0 none (nothing raised). */
static int descr_tag(np_state *st, PyArray_Descr *descr, uint8_t *tag) {
    npy_intp elsize = PyDataType_ELSIZE(descr);
    int k = kind_index(descr->kind);
    if (!PyDataType_HASFIELDS(descr) && !PyDataType_HASSUBARRAY(descr) && k >= 0 && elsize > 0 &&
        elsize <= 16 && st->by_kind[k][elsize] != 0) {
        *tag = st->by_kind[k][elsize];
        return 1;
    }
    return ml_dtypes_tag(st, descr, tag);
}

static int array_tag(np_state *st, PyArrayObject *arr, uint8_t *tag, const char *who) {
    PyArray_Descr *descr = PyArray_DESCR(arr);
    if (descr_tag(st, descr, tag)) return 0;
    st->api->raise_fmt(st->hurray, HURRAY_E_UNSUPPORTED, "dtype",
                       "%s: NumPy dtype %R has no hurray element type", who, (PyObject *)descr);
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

/* Fills what every path reads (shape up to nd; strides only for strided, by plan_strided):
 * no memset of the whole, kilobyte-sized plan per call. */
static int make_plan(np_state *st, PyArrayObject *arr, struct plan *p) {
    p->tag = 0;
    p->layout = 0;
    p->byte_offset = 0;
    p->copy_reason = NULL;
    if (array_tag(st, arr, &p->tag, "from_numpy") < 0) return -1;
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
 * packs it (HR-PACK-1): always a copy, in C order, padding bits zero. The owned
 * buffer (a new reference) with its address, size and alignment. */
static PyObject *pack_sub_byte_owned(np_state *st, PyArrayObject *arr, uint8_t tag, void **data,
                                     uint64_t *nbytes, uint8_t *log2) {
    const struct hurray_dtype_info *info = st->api->dtype_info(tag);
    unsigned w = info->bits;
    uint64_t count = (uint64_t)PyArray_SIZE(arr);
    *nbytes = (count * w + 7u) / 8u;
    PyArrayObject *src = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)arr, NULL, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
    if (src == NULL) return NULL;
    PyObject *owner = st->api->owned_new(st->hurray, *nbytes, 1, data, log2);
    if (owner != NULL) {
        const uint8_t *in = (const uint8_t *)PyArray_DATA(src);
        uint8_t *out = *data;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t bit = i * w;
            unsigned v = in[i] & ((1u << w) - 1u), sh = (unsigned)(bit % 8u);
            out[bit / 8u] |= (uint8_t)(v << sh);
            if (sh + w > 8u) out[bit / 8u + 1u] |= (uint8_t)(v >> (8u - sh));
        }
    }
    Py_DECREF(src);
    return owner;
}

static PyObject *pack_sub_byte(np_state *st, PyArrayObject *arr, const struct plan *p) {
    void *data = NULL;
    uint64_t nbytes = 0;
    uint8_t log2 = 0;
    PyObject *owner = pack_sub_byte_owned(st, arr, p->tag, &data, &nbytes, &log2);
    if (owner == NULL) return NULL;
    struct hrpy_part part = {data, nbytes, owner, 0, log2};
    PyObject *tensor = st->api->tensor_dense(st->hurray, &part, p->tag, (uint8_t)p->nd, p->shape,
                                             HURRAY_LAYOUT_ROW_MAJOR, NULL, 0);
    Py_DECREF(owner);
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

/* _save_view(array): the Tensor hurray.save stores for an ndarray. Unlike from_numpy, its
 * bytes are only read by the file writer during the call, which places them itself
 * (file-container.md § Buffer placement): so a contiguous little-endian array is borrowed
 * whatever its address (no alignment copy; the tensor declares at once what the file
 * declares, that of an owned buffer of its size: § Declared alignment of saved buffers,
 * HRPY_ALIGN_AS_SAVED, never an alignment measured from the address), and every other
 * array (strided, big-endian) is copied compactly into C (or Fortran) order: a view is
 * stored as its own elements, never as the span of its base. The tensor never leaves save. */
static PyObject *save_view(PyObject *module, PyObject *arg) {
    np_state *st = get_state(module);
    if (!PyArray_Check(arg))
        return PyErr_Format(PyExc_TypeError, "_save_view: expected a numpy.ndarray, not %.100s",
                            Py_TYPE(arg)->tp_name);
    PyArrayObject *arr = (PyArrayObject *)arg;
    struct plan p;
    if (make_plan(st, arr, &p) < 0) return NULL;
    if (sub_byte(st, p.tag)) return pack_sub_byte(st, arr, &p);
    int contiguous = PyArray_IS_C_CONTIGUOUS(arr) || PyArray_IS_F_CONTIGUOUS(arr);
    if (!contiguous || !is_little_endian(PyArray_DESCR(arr))) return copy_into_owned(st, arr, &p);
    struct hrpy_part part = {p.lo, p.span, arg, !PyArray_ISWRITEABLE(arr), HRPY_ALIGN_AS_SAVED};
    return st->api->tensor_dense(st->hurray, &part, p.tag, (uint8_t)p.nd, p.shape, p.layout,
                                 NULL, 0);
}

/* hrpy_np_capi.save_plan: what save_view borrows as it is (its last line), as a plain plan
 * for hurray.save's writer instead of a Tensor (capi.h). Every array save_view would copy
 * (strided, big-endian), pack (sub-byte) or refuse (no hurray type, rank) answers 0, and save
 * then calls save_view, so those keep its behaviour and its messages. */
static int capi_save_plan(PyObject *module, PyObject *obj, struct hrpy_save_plan *p) {
    np_state *st = get_state(module);
    if (!PyArray_Check(obj)) return 0;
    PyArrayObject *arr = (PyArrayObject *)obj;
    int nd = PyArray_NDIM(arr);
    if (nd > HURRAY_MAX_RANK || !is_little_endian(PyArray_DESCR(arr))) return 0;
    if (PyArray_IS_C_CONTIGUOUS(arr)) p->layout = HURRAY_LAYOUT_ROW_MAJOR;
    else if (PyArray_IS_F_CONTIGUOUS(arr)) p->layout = HURRAY_LAYOUT_COL_MAJOR;
    else return 0;
    if (!descr_tag(st, PyArray_DESCR(arr), &p->dtype) || sub_byte(st, p->dtype)) return 0;
    p->rank = (uint8_t)nd;
    for (int k = 0; k < nd; k++) p->shape[k] = (uint64_t)PyArray_DIMS(arr)[k];
    p->data = PyArray_BYTES(arr);
    p->size = (uint64_t)PyArray_NBYTES(arr);
    return 1;
}

static void capi_save_plan_prefetch(PyObject *obj) {
    if (PyArray_Check(obj)) HRPY_PREFETCH(PyArray_DIMS((PyArrayObject *)obj));
}

static const hrpy_np_capi np_capi_table = {
    HRPY_NP_CAPI_VERSION,
    capi_save_plan,
    capi_save_plan_prefetch,
};

/* _from_dlpack_ndarray(array): hurray.from_dlpack(array, copy=None) for a numpy.ndarray
 * whose capsule the consumer would take as it is (docs/spec/dlpack.md § The consumer, "A
 * numpy.ndarray"), built from the array's own fields instead of a capsule: the same
 * descriptor, data pointer and read-only flag, the array itself the buffer's owner (the
 * capsule's managed tensor would only hold a reference to it). NotImplemented for every
 * array whose capsule could say something else or be refused -- NumPy's __dlpack__ refuses
 * (byte-swapped data, a dtype outside its signed / unsigned / bool / IEEE float and complex
 * types, strides that are not whole elements), reports another device (an array whose base
 * chain ends in a capsule: NumPy reports the device that capsule names), or the consumer
 * would copy (not 64-byte aligned) or refuse (rank) -- and the caller then takes the
 * general path through __dlpack__. Only the exact type: a subclass may define its own
 * __dlpack__. */
static int dlpack_plain_type(int type_num) {
    switch (type_num) {
    case NPY_BOOL: case NPY_BYTE: case NPY_UBYTE: case NPY_SHORT: case NPY_USHORT:
    case NPY_INT: case NPY_UINT: case NPY_LONG: case NPY_ULONG: case NPY_LONGLONG:
    case NPY_ULONGLONG: case NPY_HALF: case NPY_FLOAT: case NPY_DOUBLE: case NPY_CFLOAT:
    case NPY_CDOUBLE:
        return 1;
    default: /* longdouble (refused by NumPy's __dlpack__ where it is padded), the rest */
        return 0;
    }
}

static PyObject *from_dlpack_ndarray(PyObject *module, PyObject *arg) {
    np_state *st = get_state(module);
    if (!PyArray_CheckExact(arg)) Py_RETURN_NOTIMPLEMENTED;
    PyArrayObject *arr = (PyArrayObject *)arg;
    PyArray_Descr *descr = PyArray_DESCR(arr);
    if (!dlpack_plain_type(descr->type_num) || !PyArray_ISNBO(descr->byteorder) ||
        PyArray_NDIM(arr) > HURRAY_MAX_RANK)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *base = PyArray_BASE(arr);
    while (base != NULL && PyArray_Check(base)) base = PyArray_BASE((PyArrayObject *)base);
    if (base != NULL && PyCapsule_CheckExact(base)) Py_RETURN_NOTIMPLEMENTED;
    struct plan p;
    if (make_plan(st, arr, &p) < 0) return NULL; /* every type above is one hurray has */
    if (p.copy_reason != NULL) Py_RETURN_NOTIMPLEMENTED;
    struct hrpy_part part = {p.lo, p.span, arg, !PyArray_ISWRITEABLE(arr), -1};
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

/* ---- sparse: from_scipy, sparse_coo, Tensor.to_scipy --------------------------------------- *
 * (Python requirements § Layouts and Sparse Tensor Support, § copy on ingest: the decision is made per
 * buffer; memory-layout.md § COO, § CSR and CSC, § Index contents.)
 *
 * Ingest. Values are shared when C-contiguous, little-endian and 64-byte aligned; an index
 * array is shared when it is moreover a 64-bit integer array (int64 of valid indices has
 * the bytes of the format's uint64), and otherwise imported into an owned uint64 buffer
 * (SciPy's int32 indices always are). The tensor is built by _hurray (tensor_sparse: the
 * three tiers, then the index contents by libhurray, which reads a shared array in place
 * and an imported one from its source -- int32, int64, uint32 -- writing the widened
 * entries into the owned buffer in the same pass: memory-layout.md § Importing index
 * arrays. A negative index -- a huge uint64 once widened -- is refused there, as is
 * anything out of bounds. Other integer types, byte-swapped or strided arrays are cast by
 * NumPy into the owned buffer first, then checked in place). copy=True copies every buffer,
 * copy=False raises ValueError naming the first buffer that needs a copy.
 * Entries are carried in the order given: nothing is sorted or merged. A tensor whose every
 * index buffer was imported or copied here holds index memory no one else can reach: it is
 * made with tensor_sparse's index_private, which keeps those buffers read-only and the check
 * of their contents done once (memory-layout.md § Index contents).
 *
 * to_scipy. The values and the uint64 index buffers viewed as int64 (checked: every
 * accepted index is below 2^63; checked once for index memory hurray owns, at every call
 * for borrowed memory), each an ndarray whose base is the tensor, read-only where the
 * tensor's buffer is, handed to SciPy's sparse *array* constructors, which keep int64
 * indices as they are (the matrix constructors narrow them to int32 when they fit: a
 * copy); a matrix is then made from the array, which shares its arrays. copy=True makes
 * each of those arrays a writable copy of its own first. */

/* Arguments of a FASTCALL function: positional or keyword `names`, the first `required`
 * required; at most `max_pos` positionally. Borrowed into out[] (NULL when absent). */
static int bind_args(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                     const char *const *names, Py_ssize_t n, Py_ssize_t max_pos,
                     Py_ssize_t required, PyObject **out) {
    Py_ssize_t npos = PyVectorcall_NARGS(nargs), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < n; i++) out[i] = NULL;
    if (npos > max_pos) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %zd positional arguments (%zd given)",
                     fname, max_pos, npos);
        return -1;
    }
    for (Py_ssize_t i = 0; i < npos; i++) out[i] = args[i];
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t i = 0;
        while (i < n && PyUnicode_CompareWithASCIIString(key, names[i]) != 0) i++;
        if (i == n) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", fname, key);
            return -1;
        }
        if (out[i] != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname,
                         names[i]);
            return -1;
        }
        out[i] = args[npos + k];
    }
    for (Py_ssize_t i = 0; i < required; i++) {
        if (out[i] != NULL) continue;
        PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname, names[i]);
        return -1;
    }
    return 0;
}

/* Objects a tensor under construction borrows from, released after it is built. */
#define KEEP_MAX 12
struct keep {
    PyObject *obj[KEEP_MAX];
    int n;
};
static PyObject *keep_add(struct keep *k, PyObject *o) { /* steals o; returns it (borrowed) */
    if (o == NULL) return NULL;
    if (k->n == KEEP_MAX) { /* never reached: each path keeps at most 6 */
        Py_DECREF(o);
        PyErr_SetString(PyExc_SystemError, "hurray._numpy: too many objects kept");
        return NULL;
    }
    k->obj[k->n++] = o;
    return o;
}
static void keep_release(struct keep *k) {
    while (k->n > 0) Py_DECREF(k->obj[--k->n]);
}

static PyObject *refuse_copy(const char *who, const char *name, const char *reason) {
    return PyErr_Format(PyExc_ValueError,
                        "%s: %s %s, so ingesting it needs a copy, and copy=False forbids the copy",
                        who, name, reason);
}

static int is_aligned(const void *p, uint64_t size) {
    return size == 0 || (uintptr_t)p % HURRAY_MIN_BUFFER_ALIGNMENT == 0;
}

/* A new 1-D (or 2-D) little-endian array of `type` over owned memory `data` whose base is
 * `owner` (borrowed). */
static PyArrayObject *array_over(PyObject *owner, void *data, int type, int nd, npy_intp *dims) {
    PyArray_Descr *descr = PyArray_DescrFromType(type);
#if NPY_BYTE_ORDER != NPY_LITTLE_ENDIAN
    if (descr != NULL) Py_SETREF(descr, PyArray_DescrNewByteorder(descr, NPY_LITTLE));
#endif
    if (descr == NULL) return NULL;
    PyObject *a = PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, NULL, data,
                                       NPY_ARRAY_WRITEABLE, NULL);
    if (a != NULL && PyArray_SetBaseObject((PyArrayObject *)a, Py_NewRef(owner)) < 0) Py_CLEAR(a);
    return (PyArrayObject *)a;
}

/* An ndarray for an array-like argument: itself, or numpy.asarray(obj) -- a copy that
 * copy=False forbids (ValueError naming the argument). New reference. */
static PyArrayObject *as_ndarray(PyObject *obj, int mode, const char *who, const char *name) {
    if (PyArray_Check(obj)) return (PyArrayObject *)Py_NewRef(obj);
    if (mode == 0) {
        PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
        if (a == NULL) return NULL;
        /* zero-copy only if the array borrows obj's memory (a buffer or array interface) */
        if (PyArray_BASE(a) != NULL || PyArray_SIZE(a) == 0) return a;
        Py_DECREF(a);
        PyErr_Format(PyExc_ValueError,
                     "%s: %s is a %.100s, not an array; making one is a copy, and copy=False "
                     "forbids the copy",
                     who, name, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
}

/* The values buffer: a 1-D array of nnz elements. */
static int values_part(np_state *st, PyArrayObject *arr, int mode, const char *who,
                       const char *name, uint8_t *tag, struct hrpy_part *part, struct keep *k) {
    if (PyArray_NDIM(arr) != 1) {
        PyErr_Format(PyExc_ValueError, "%s: %s must be 1-D (nnz,), not %d-D", who, name,
                     PyArray_NDIM(arr));
        return -1;
    }
    if (array_tag(st, arr, tag, who) < 0) return -1;
    void *data = NULL;
    uint8_t log2 = 0;
    uint64_t nbytes = (uint64_t)PyArray_NBYTES(arr);
    const struct hurray_dtype_info *info = st->api->dtype_info(*tag);
    if (info != NULL && info->bits % 8u != 0) { /* ml_dtypes' unpacked sub-byte values */
        if (mode == 0) {
            refuse_copy(who, name, "holds an unpacked sub-byte type, which hurray packs");
            return -1;
        }
        PyObject *owner = keep_add(k, pack_sub_byte_owned(st, arr, *tag, &data, &nbytes, &log2));
        if (owner == NULL) return -1;
        *part = (struct hrpy_part){data, nbytes, owner, 0, log2};
        return 0;
    }
    const char *reason = NULL;
    if (!PyArray_IS_C_CONTIGUOUS(arr)) reason = "is not contiguous";
    else if (!is_little_endian(PyArray_DESCR(arr)))
        reason = "is big-endian (hurray buffers are little-endian)";
    else if (!is_aligned(PyArray_DATA(arr), nbytes))
        reason = "is not 64-byte aligned (MIN_BUFFER_ALIGNMENT)";
    if (mode == 0 && reason != NULL) {
        refuse_copy(who, name, reason);
        return -1;
    }
    if (mode == 1 || reason != NULL) {
        PyObject *owner = keep_add(k, st->api->owned_new(st->hurray, nbytes, 0, &data, &log2));
        if (owner == NULL) return -1;
        PyArray_Descr *descr = PyArray_DESCR(arr);
        if (is_little_endian(descr)) Py_INCREF(descr);
        else descr = PyArray_DescrNewByteorder(descr, NPY_LITTLE);
        if (descr == NULL) return -1;
        PyObject *dst = PyArray_NewFromDescr(&PyArray_Type, descr, 1, PyArray_DIMS(arr), NULL,
                                             data, NPY_ARRAY_WRITEABLE, NULL);
        int bad = dst == NULL || PyArray_CopyInto((PyArrayObject *)dst, arr) < 0;
        Py_XDECREF(dst);
        if (bad) return -1;
        *part = (struct hrpy_part){data, nbytes, owner, 0, log2};
        return 0;
    }
    *part = (struct hrpy_part){PyArray_DATA(arr), nbytes, (PyObject *)arr,
                               !PyArray_ISWRITEABLE(arr), -1};
    return 0;
}

/* Why an integer array cannot be shared as a uint64 index buffer (NULL: it can), in `buf`. */
static const char *index_share_reason(PyArrayObject *arr, char *buf, size_t len) {
    PyArray_Descr *d = PyArray_DESCR(arr);
    if (PyArray_ITEMSIZE(arr) != 8) {
        PyOS_snprintf(buf, len, "is a %d-bit %s integer array; hurray index buffers are uint64",
                      (int)(8 * PyArray_ITEMSIZE(arr)), d->kind == 'u' ? "unsigned" : "signed");
        return buf;
    }
    if (!PyArray_IS_C_CONTIGUOUS(arr)) return "is not contiguous";
    if (!is_little_endian(d)) return "is big-endian (hurray buffers are little-endian)";
    return NULL;
}

static int check_index_dtype(PyArrayObject *arr, const char *who, const char *name) {
    char kind = PyArray_DESCR(arr)->kind;
    if ((kind == 'i' || kind == 'u') && !PyDataType_HASFIELDS(PyArray_DESCR(arr))) return 0;
    PyErr_Format(PyExc_TypeError, "%s: %s must be an integer array, not %R", who, name,
                 (PyObject *)PyArray_DESCR(arr));
    return -1;
}

/* The encoding hurray_sparse_import_index_buffers reads an index array in (memory-layout.md
 * § Importing index arrays): a C-contiguous, host-order int64, int32, uint32 -- or uint64 on a
 * little-endian host. -1: another type, byte order or stride, which NumPy casts first. */
static int index_encoding(PyArrayObject *arr) {
    PyArray_Descr *d = PyArray_DESCR(arr);
    if (!PyArray_IS_C_CONTIGUOUS(arr) || !PyArray_ISNOTSWAPPED(arr)) return -1;
    npy_intp size = PyArray_ITEMSIZE(arr);
    if (d->kind == 'i' && size == 8) return HURRAY_INDEX_I64;
    if (d->kind == 'i' && size == 4) return HURRAY_INDEX_I32;
    if (d->kind == 'u' && size == 4) return HURRAY_INDEX_U32;
#if NPY_BYTE_ORDER == NPY_LITTLE_ENDIAN
    if (d->kind == 'u' && size == 8) return HURRAY_INDEX_U64LE;
#endif
    return -1;
}

/* The import of `count` entries of `src` (1-D, or a 2-D block when count covers it) into the
 * owned uint64 memory at `out`: read by the contents check itself, which writes each entry
 * out as it checks it; or, for an encoding it does not read, cast by NumPy first (a modular
 * cast, so a negative index is still refused) and then checked in place. */
static int index_import(PyObject *owner, PyArrayObject *src, const char *base, npy_intp rows,
                        npy_intp len, uint8_t *out, struct hurray_index_array *a) {
    int enc = index_encoding(src);
    uint64_t count = (uint64_t)rows * (uint64_t)len;
    if (enc >= 0) {
        *a = (struct hurray_index_array){base, count * (uint64_t)PyArray_ITEMSIZE(src),
                                         (uint8_t)enc, out, count * 8u};
        return 0;
    }
    int nd = rows > 1 || PyArray_NDIM(src) == 2 ? 2 : 1;
    npy_intp dims[2] = {nd == 2 ? rows : len, len};
    PyArrayObject *dst = array_over(owner, out, NPY_UINT64, nd, dims);
    int bad = dst == NULL || PyArray_CopyInto(dst, src) < 0;
    Py_XDECREF(dst);
    *a = (struct hurray_index_array){out, count * 8u, HURRAY_INDEX_U64LE, NULL, 0};
    return bad ? -1 : 0;
}

/* A 1-D index array (CSR/CSC minor indices or pointers) as a uint64 index buffer: shared (a
 * 64-bit little-endian array: its bytes are the format's, the contents check reads it in
 * place) or imported into an owned one (`a` says from where). */
static int index_part(np_state *st, PyArrayObject *arr, int mode, const char *who,
                      const char *name, struct hrpy_part *part, struct hurray_index_array *a,
                      struct keep *k, int *copied) {
    *copied = 0;
    if (check_index_dtype(arr, who, name) < 0) return -1;
    if (PyArray_NDIM(arr) != 1) {
        PyErr_Format(PyExc_ValueError, "%s: %s must be 1-D, not %d-D", who, name,
                     PyArray_NDIM(arr));
        return -1;
    }
    char buf[96];
    uint64_t nbytes = (uint64_t)PyArray_NBYTES(arr);
    const char *reason = index_share_reason(arr, buf, sizeof buf);
    if (reason == NULL && !is_aligned(PyArray_DATA(arr), nbytes))
        reason = "is not 64-byte aligned (MIN_BUFFER_ALIGNMENT)";
    if (mode == 0 && reason != NULL) {
        refuse_copy(who, name, reason);
        return -1;
    }
    if (mode == 1 || reason != NULL) {
        void *data = NULL;
        uint8_t log2 = 0;
        npy_intp len = PyArray_DIM(arr, 0);
        uint64_t size = (uint64_t)len * 8u;
        PyObject *owner = keep_add(k, st->api->owned_new(st->hurray, size, 0, &data, &log2));
        if (owner == NULL ||
            index_import(owner, arr, PyArray_BYTES(arr), 1, len, data, a) < 0)
            return -1;
        *part = (struct hrpy_part){data, size, owner, 0, log2};
        *copied = 1;
        return 0;
    }
    *a = (struct hurray_index_array){PyArray_DATA(arr), nbytes, HURRAY_INDEX_U64LE, NULL, 0};
    *part = (struct hrpy_part){PyArray_DATA(arr), nbytes, (PyObject *)arr,
                               !PyArray_ISWRITEABLE(arr), -1};
    return 0;
}

/* The COO indices buffer, (ndim, nnz), from `ndim` rows (SciPy's coords) or one 2-D array
 * (sparse_coo). Shared only when the rows are one contiguous 64-bit block already: a 2-D
 * C-contiguous array, or rows that lie back to back in memory (as to_scipy hands them out;
 * `holder` then keeps every row alive). Otherwise imported into an owned block, row by row.
 * a[d] says where row d's contents come from. */
static int coo_indices_part(np_state *st, PyArrayObject *const *rows, int nrows, npy_intp ndim,
                            npy_intp nnz, PyObject *holder, int mode, const char *who,
                            const char *name, struct hrpy_part *part,
                            struct hurray_index_array *a, struct keep *k, int *copied) {
    char buf[96];
    *copied = 0;
    const char *reason = NULL;
    for (int r = 0; r < nrows && reason == NULL; r++) {
        if (check_index_dtype(rows[r], who, name) < 0) return -1;
        reason = index_share_reason(rows[r], buf, sizeof buf);
    }
    char *base = nrows > 0 ? PyArray_BYTES(rows[0]) : NULL;
    uint64_t nbytes = (uint64_t)ndim * (uint64_t)nnz * 8u;
    for (int r = 1; r < nrows && reason == NULL; r++)
        if (PyArray_BYTES(rows[r]) != base + (size_t)r * (size_t)nnz * 8u)
            reason = "are separate arrays; the coo indices buffer is one (ndim, nnz) block";
    if (reason == NULL && !is_aligned(base, nbytes))
        reason = "are not 64-byte aligned (MIN_BUFFER_ALIGNMENT)";
    if (mode == 0 && reason != NULL) {
        refuse_copy(who, name, reason);
        return -1;
    }
    const size_t row_bytes = (size_t)nnz * 8u;
    if (mode == 1 || reason != NULL) {
        void *data = NULL;
        uint8_t log2 = 0;
        PyObject *owner = keep_add(k, st->api->owned_new(st->hurray, nbytes, 0, &data, &log2));
        if (owner == NULL) return -1;
        uint8_t *out = data;
        if (nrows == ndim) { /* one 1-D array per row */
            for (int r = 0; r < nrows; r++)
                if (index_import(owner, rows[r], PyArray_BYTES(rows[r]), 1, nnz,
                                 out + (size_t)r * row_bytes, &a[r]) < 0)
                    return -1;
        } else if (index_encoding(rows[0]) >= 0) { /* one C-contiguous (ndim, nnz) block */
            size_t src_row = (size_t)nnz * (size_t)PyArray_ITEMSIZE(rows[0]);
            for (npy_intp r = 0; r < ndim; r++)
                if (index_import(owner, rows[0], base + (size_t)r * src_row, 1, nnz,
                                 out + (size_t)r * row_bytes, &a[r]) < 0)
                    return -1;
        } else { /* cast whole by NumPy, then checked in place row by row */
            if (index_import(owner, rows[0], base, ndim, nnz, out, &a[0]) < 0) return -1;
            for (npy_intp r = 0; r < ndim; r++)
                a[r] = (struct hurray_index_array){out + (size_t)r * row_bytes, row_bytes,
                                                   HURRAY_INDEX_U64LE, NULL, 0};
        }
        *part = (struct hrpy_part){data, nbytes, owner, 0, log2};
        *copied = 1;
        return 0;
    }
    int readonly = 0;
    for (int r = 0; r < nrows; r++) readonly |= !PyArray_ISWRITEABLE(rows[r]);
    for (npy_intp r = 0; r < ndim; r++)
        a[r] = (struct hurray_index_array){base + (size_t)r * row_bytes, row_bytes,
                                           HURRAY_INDEX_U64LE, NULL, 0};
    *part = (struct hrpy_part){base, nbytes, holder, readonly, -1};
    return 0;
}

/* The last of `count` (>= 1) entries of an index array, as the format's uint64 (the
 * conversion of memory-layout.md § Importing index arrays): nnz from SciPy's indptr. */
static uint64_t last_entry(const struct hurray_index_array *a, uint64_t count) {
    const char *p = (const char *)a->data;
    switch (a->encoding) {
    case HURRAY_INDEX_I64: {
        int64_t v;
        memcpy(&v, p + (count - 1u) * 8u, 8);
        return (uint64_t)v;
    }
    case HURRAY_INDEX_I32: {
        int32_t v;
        memcpy(&v, p + (count - 1u) * 4u, 4);
        return (uint64_t)(int64_t)v;
    }
    case HURRAY_INDEX_U32: {
        uint32_t v;
        memcpy(&v, p + (count - 1u) * 4u, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p + (count - 1u) * 8u, 8);
#if NPY_BYTE_ORDER != NPY_LITTLE_ENDIAN
        v = __builtin_bswap64(v);
#endif
        return v;
    }
    }
}

static int sequence_shape(PyObject *shape, uint64_t *out, uint8_t *rank, const char *who) {
    PyObject *seq = PySequence_Fast(shape, "shape must be a sequence");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int bad = n > HURRAY_MAX_RANK;
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        unsigned long long v = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(seq, i));
        bad = v == (unsigned long long)-1 && PyErr_Occurred();
        out[i] = v;
    }
    Py_DECREF(seq);
    if (bad && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "%s: rank %zd exceeds %d", who, n, HURRAY_MAX_RANK);
    *rank = (uint8_t)n;
    return bad ? -1 : 0;
}

static int attr_array(PyObject *m, const char *attr, PyArrayObject **out, struct keep *k) {
    PyObject *a = PyObject_GetAttrString(m, attr);
    if (a == NULL) return -1;
    if (!PyArray_Check(a)) {
        PyErr_Format(PyExc_TypeError, "from_scipy: the matrix's .%s is a %.100s, not an ndarray",
                     attr, Py_TYPE(a)->tp_name);
        Py_DECREF(a);
        return -1;
    }
    *out = (PyArrayObject *)keep_add(k, a);
    return 0;
}

/* from_scipy(matrix, /, *, copy=None) */
static PyObject *from_scipy(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    static const char *const names[] = {"matrix", "copy"};
    static const char who[] = "from_scipy";
    np_state *st = get_state(module);
    PyObject *a[2], *tensor = NULL, *fmt = NULL, *shape = NULL;
    struct keep k = {{NULL}, 0};
    int mode = -1;
    if (bind_args(who, args, nargs, kwnames, names, 2, 1, 1, a) < 0) return NULL;
    if (copy_mode(a[1], who, &mode) < 0) return NULL;
    PyObject *m = a[0], *sparse = PyImport_GetModule(st->str_scipy_sparse);
    int is = 0;
    if (sparse != NULL) {
        PyObject *r = PyObject_CallMethod(sparse, "issparse", "O", m);
        is = r == NULL ? -1 : PyObject_IsTrue(r);
        Py_XDECREF(r);
        Py_DECREF(sparse);
        if (is < 0) return NULL;
    } else if (PyErr_Occurred()) {
        return NULL;
    }
    if (!is)
        return PyErr_Format(PyExc_TypeError,
                            "from_scipy: expected a scipy.sparse matrix or array, not %.100s",
                            Py_TYPE(m)->tp_name);
    fmt = PyObject_GetAttrString(m, "format");
    if (fmt == NULL || !PyUnicode_Check(fmt)) goto error_fmt;
    uint8_t layout = PyUnicode_CompareWithASCIIString(fmt, "csr") == 0   ? HURRAY_LAYOUT_CSR
                     : PyUnicode_CompareWithASCIIString(fmt, "csc") == 0 ? HURRAY_LAYOUT_CSC
                     : PyUnicode_CompareWithASCIIString(fmt, "coo") == 0 ? HURRAY_LAYOUT_COO
                                                                         : 0;
    if (layout == 0) {
        PyErr_Format(PyExc_TypeError,
                     "from_scipy: the %U format has no hurray layout; convert it first with "
                     ".tocsr(), .tocsc() or .tocoo() (hurray has csr, csc and coo)",
                     fmt);
        goto error;
    }
    uint64_t dims[HURRAY_MAX_RANK];
    uint8_t rank = 0;
    shape = PyObject_GetAttrString(m, "shape");
    if (shape == NULL || sequence_shape(shape, dims, &rank, who) < 0) goto error;
    if (layout != HURRAY_LAYOUT_COO && rank != 2) {
        st->api->raise_fmt(st->hurray, HURRAY_E_UNSUPPORTED, "rank",
                           "from_scipy: a %d-D %U matrix has no hurray form (csr and csc are "
                           "2-D); convert it with .tocoo()",
                           (int)rank, fmt);
        goto error;
    }
    PyArrayObject *data = NULL;
    uint8_t tag = 0;
    struct hrpy_part parts[3];
    struct hurray_index_array src[HURRAY_MAX_RANK]; /* COO: per dimension; else idx, ptr */
    int copied[2] = {0, 0};                         /* index, ptr: imported or copied */
    if (attr_array(m, "data", &data, &k) < 0 ||
        values_part(st, data, mode, who, "data", &tag, &parts[0], &k) < 0)
        goto error;
    uint64_t nnz = 0;
    Py_ssize_t nparts = 3;
    if (layout == HURRAY_LAYOUT_COO) {
        PyObject *coords = keep_add(&k, PyObject_GetAttrString(m, "coords"));
        if (coords == NULL || !PyTuple_Check(coords) || PyTuple_GET_SIZE(coords) != rank) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "from_scipy: the matrix's .coords is not a "
                                              "tuple of one index array per dimension");
            goto error;
        }
        PyArrayObject *rows[HURRAY_MAX_RANK];
        nnz = (uint64_t)PyArray_DIM(data, 0);
        for (int r = 0; r < rank; r++) {
            PyObject *c = PyTuple_GET_ITEM(coords, r);
            if (!PyArray_Check(c) || PyArray_NDIM((PyArrayObject *)c) != 1 ||
                (uint64_t)PyArray_DIM((PyArrayObject *)c, 0) != nnz) {
                PyErr_Format(PyExc_ValueError,
                             "from_scipy: coords[%d] is not a 1-D array of nnz = %llu indices",
                             r, (unsigned long long)nnz);
                goto error;
            }
            rows[r] = (PyArrayObject *)c;
        }
        if (coo_indices_part(st, rows, rank, rank, (npy_intp)nnz, coords, mode, who, "coords",
                             &parts[1], src, &k, &copied[0]) < 0)
            goto error;
        copied[1] = 1;
        nparts = 2;
    } else {
        PyArrayObject *indices = NULL, *indptr = NULL;
        if (attr_array(m, "indices", &indices, &k) < 0 ||
            attr_array(m, "indptr", &indptr, &k) < 0 ||
            index_part(st, indices, mode, who, "indices", &parts[1], &src[0], &k,
                       &copied[0]) < 0 ||
            index_part(st, indptr, mode, who, "indptr", &parts[2], &src[1], &k, &copied[1]) < 0)
            goto error;
        /* nnz is indptr[-1], as SciPy's own .nnz; the contents check then holds it to it */
        if (PyArray_DIM(indptr, 0) < 1) {
            PyErr_Format(PyExc_ValueError, "from_scipy: indptr is empty");
            goto error;
        }
        nnz = last_entry(&src[1], (uint64_t)PyArray_DIM(indptr, 0));
    }
    /* index buffers hurray allocated for this tensor alone: read-only, checked once */
    tensor = st->api->tensor_sparse(st->hurray, parts, nparts, tag, rank, dims, layout, nnz, src,
                                    layout == HURRAY_LAYOUT_COO ? NULL : &src[1],
                                    copied[0] && copied[1]);
error:
    keep_release(&k);
    Py_XDECREF(fmt);
    Py_XDECREF(shape);
    return tensor;
error_fmt:
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "from_scipy: the matrix has no str .format");
    goto error;
}

/* sparse_coo(indices, values, shape, *, copy=None) */
static PyObject *sparse_coo(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    static const char *const names[] = {"indices", "values", "shape", "copy"};
    static const char who[] = "sparse_coo";
    np_state *st = get_state(module);
    PyObject *a[4], *tensor = NULL;
    struct keep k = {{NULL}, 0};
    int mode = -1;
    uint64_t dims[HURRAY_MAX_RANK];
    uint8_t rank = 0;
    if (bind_args(who, args, nargs, kwnames, names, 4, 3, 3, a) < 0) return NULL;
    if (copy_mode(a[3], who, &mode) < 0) return NULL;
    if (st->api->shape_resolved(st->hurray, a[2], who, &rank, dims) < 0) return NULL;
    PyArrayObject *ind = (PyArrayObject *)keep_add(&k, (PyObject *)as_ndarray(a[0], mode, who,
                                                                                "indices"));
    PyArrayObject *val = ind ? (PyArrayObject *)keep_add(&k, (PyObject *)as_ndarray(
                                                                 a[1], mode, who, "values"))
                             : NULL;
    if (val == NULL) goto done;
    if (check_index_dtype(ind, who, "indices") < 0) goto done;
    if (PyArray_NDIM(ind) != 2 || PyArray_DIM(ind, 0) != rank) {
        PyObject *got = PyObject_GetAttrString((PyObject *)ind, "shape");
        if (got != NULL)
            PyErr_Format(PyExc_ValueError,
                         "%s: indices must be a 2-D (ndim, nnz) array with ndim = len(shape) = "
                         "%d rows, not an array of shape %R",
                         who, (int)rank, got);
        Py_XDECREF(got);
        goto done;
    }
    npy_intp nnz = PyArray_DIM(ind, 1);
    if (PyArray_NDIM(val) != 1 || PyArray_DIM(val, 0) != nnz) {
        PyErr_Format(PyExc_ValueError,
                     "%s: values must be 1-D with nnz = %zd elements (indices.shape[1])", who,
                     (Py_ssize_t)nnz);
        goto done;
    }
    uint8_t tag = 0;
    struct hrpy_part parts[2];
    struct hurray_index_array src[HURRAY_MAX_RANK];
    PyArrayObject *rows[1] = {ind};
    int copied = 0;
    if (values_part(st, val, mode, who, "values", &tag, &parts[0], &k) < 0 ||
        coo_indices_part(st, rows, 1, rank, nnz, (PyObject *)ind, mode, who, "indices",
                         &parts[1], src, &k, &copied) < 0)
        goto done;
    tensor = st->api->tensor_sparse(st->hurray, parts, 2, tag, rank, dims, HURRAY_LAYOUT_COO,
                                    (uint64_t)nnz, src, NULL, copied);
done:
    keep_release(&k);
    return tensor;
}

/* A 1-D array of `n` elements of `type` (kind/itemsize) at `data`, base `tensor`. */
static PyObject *view_1d(PyObject *tensor, PyArray_Descr *descr, char *data, npy_intp n,
                         int readonly, int copy) {
    static int64_t empty_slot; /* NumPy wants an address even for no element */
    npy_intp dims[1] = {n};
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, 1, dims, NULL,
                                         data != NULL ? (void *)data : (void *)&empty_slot,
                                         readonly ? 0 : NPY_ARRAY_WRITEABLE, NULL);
    if (arr != NULL && PyArray_SetBaseObject((PyArrayObject *)arr, Py_NewRef(tensor)) < 0)
        Py_CLEAR(arr);
    if (arr != NULL && copy) /* to_scipy(copy=True): a writable array of its own */
        Py_SETREF(arr, PyArray_NewCopy((PyArrayObject *)arr, NPY_CORDER));
    return arr;
}

static PyObject *index_view(PyObject *tensor, char *data, npy_intp n, int readonly, int copy) {
    PyArray_Descr *descr = PyArray_DescrFromType(NPY_INT64);
#if NPY_BYTE_ORDER != NPY_LITTLE_ENDIAN
    if (descr != NULL) Py_SETREF(descr, PyArray_DescrNewByteorder(descr, NPY_LITTLE));
#endif
    return descr ? view_1d(tensor, descr, data, n, readonly, copy) : NULL;
}

/* _to_scipy(tensor, array, copy): Tensor.to_scipy. */
static PyObject *to_scipy(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    np_state *st = get_state(module);
    struct hrpy_sparse_view v;
    PyObject *sparse = NULL, *values = NULL, *index = NULL, *ptr = NULL, *shape = NULL,
             *arg = NULL, *cls = NULL, *arr = NULL, *result = NULL;
    if (nargs != 3) return PyErr_Format(PyExc_TypeError, "_to_scipy(tensor, array, copy)");
    int want_array = PyObject_IsTrue(args[1]), mode = -1;
    if (want_array < 0 || copy_mode(args[2], "to_scipy", &mode) < 0) return NULL;
    const int copy = mode == 1; /* None, False: the tensor's memory (never needs a copy) */
    if (st->api->sparse_view(st->hurray, args[0], "to_scipy", &v) < 0) return NULL;
    const int which = v.layout == HURRAY_LAYOUT_COO ? 0 : v.layout == HURRAY_LAYOUT_CSR ? 1 : 2;
    const int matrix = !want_array && (v.layout != HURRAY_LAYOUT_COO || v.ndim == 2);
    if (st->cls[0][which] == NULL || (matrix && st->cls[1][which] == NULL)) {
        sparse = PyImport_GetModule(st->str_scipy_sparse); /* sys.modules first: cheap */
        if (sparse == NULL && !PyErr_Occurred()) sparse = PyImport_Import(st->str_scipy_sparse);
        if (sparse == NULL) return NULL;
        for (int i = 0; i <= matrix; i++) {
            if (st->cls[i][which] != NULL) continue;
            PyObject *c = PyObject_GetAttr(sparse, st->str_cls[i][which]);
            if (c == NULL) goto done;
            if (st->cls[i][which] == NULL) st->cls[i][which] = c; /* the state's reference */
            else Py_DECREF(c); /* filled meanwhile (the import may release the GIL) */
        }
    }
    PyArray_Descr *descr = PyArray_DescrFromType(type_number(v.kind, v.itemsize));
#if NPY_BYTE_ORDER != NPY_LITTLE_ENDIAN
    if (descr != NULL && v.itemsize > 1)
        Py_SETREF(descr, PyArray_DescrNewByteorder(descr, NPY_LITTLE));
#endif
    npy_intp nnz = (npy_intp)v.nnz;
    values = descr ? view_1d(args[0], descr, v.values, nnz, v.readonly[0], copy) : NULL;
    if (values == NULL) goto done;
    shape = PyTuple_New(v.ndim);
    for (int d = 0; shape != NULL && d < v.ndim; d++) {
        PyObject *e = PyLong_FromLongLong(v.shape[d]);
        if (e == NULL) Py_CLEAR(shape);
        else PyTuple_SET_ITEM(shape, d, e);
    }
    if (shape == NULL) goto done;
    if (v.layout == HURRAY_LAYOUT_COO) {
        index = PyTuple_New(v.ndim); /* coords: row d of the (ndim, nnz) block */
        for (int d = 0; index != NULL && d < v.ndim; d++) {
            PyObject *row = index_view(args[0], v.index ? v.index + (size_t)d * (size_t)nnz * 8u
                                                        : NULL,
                                       nnz, v.readonly[1], copy);
            if (row == NULL) Py_CLEAR(index);
            else PyTuple_SET_ITEM(index, d, row);
        }
        arg = index ? PyTuple_Pack(2, values, index) : NULL;
    } else {
        npy_intp n = (npy_intp)v.shape[v.layout == HURRAY_LAYOUT_CSR ? 0 : 1] + 1;
        index = index_view(args[0], v.index, nnz, v.readonly[1], copy);
        ptr = index ? index_view(args[0], v.ptr, n, v.readonly[2], copy) : NULL;
        arg = ptr ? PyTuple_Pack(3, values, index, ptr) : NULL;
    }
    if (arg == NULL) goto done;
    /* cls(arg, shape, dtype=None, copy=False), positionally (SciPy's order for every sparse
     * class: no keyword dict to build). Held across the calls: they run Python code. */
    cls = Py_NewRef(st->cls[0][which]);
    PyObject *call[4] = {arg, shape, Py_None, Py_False};
    arr = PyObject_Vectorcall(cls, call, 4, NULL);
    if (arr == NULL || !matrix) {
        result = Py_XNewRef(arr);
        goto done;
    }
    /* the matrix class from the array: SciPy shares the array's arrays on this path */
    Py_SETREF(cls, Py_NewRef(st->cls[1][which]));
    result = PyObject_CallOneArg(cls, arr);
done:
    Py_XDECREF(sparse);
    Py_XDECREF(values);
    Py_XDECREF(index);
    Py_XDECREF(ptr);
    Py_XDECREF(shape);
    Py_XDECREF(arg);
    Py_XDECREF(cls);
    Py_XDECREF(arr);
    return result;
}

/* _asarray(obj, copy): hurray.asarray's last resort, an array-like: numpy.asarray (with
 * copy=False: only when that shares obj's memory), made under the 64-byte-aligned handler
 * so that a new array needs no second copy, then from_numpy. */
static PyObject *asarray_arraylike(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    np_state *st = get_state(module);
    int mode = -1;
    if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_asarray(obj, copy)");
    if (copy_mode(args[1], "asarray", &mode) < 0) return NULL;
    PyObject *previous = PyDataMem_SetHandler(st->handler);
    if (previous == NULL) return NULL;
    PyArrayObject *arr = as_ndarray(args[0], mode, "asarray", "obj");
    PyObject *ours = PyDataMem_SetHandler(previous);
    Py_DECREF(previous);
    if (ours == NULL) {
        Py_XDECREF(arr);
        return NULL;
    }
    Py_DECREF(ours);
    if (arr == NULL) return NULL;
    if (PyArray_DESCR(arr)->type_num == NPY_OBJECT) {
        PyErr_Format(PyExc_TypeError,
                     "asarray: a %.100s is not an array-like of numbers (NumPy makes an object "
                     "array of it), nor a tensor any ingest path takes",
                     Py_TYPE(args[0])->tp_name);
        Py_DECREF(arr);
        return NULL;
    }
    PyObject *kwnames = Py_BuildValue("(s)", "copy");
    PyObject *call[2] = {(PyObject *)arr, args[1]};
    PyObject *t = kwnames ? from_numpy(module, call, 1, kwnames) : NULL;
    Py_XDECREF(kwnames);
    Py_DECREF(arr);
    return t;
}

/* ---- module ---------------------------------------------------------------------------------- */

static PyMethodDef bridge_methods[] = {
    {"from_numpy", (PyCFunction)(void (*)(void))from_numpy, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("from_numpy($module, /, array, *, copy=None)\n--\n\nhurray.from_numpy.")},
    {"_tensor_to_array", (PyCFunction)(void (*)(void))tensor_to_array, METH_FASTCALL,
     PyDoc_STR("_tensor_to_array(tensor, dtype, copy): Tensor.__array__.")},
    {"_to_ml_dtypes", (PyCFunction)to_ml_dtypes, METH_O,
     PyDoc_STR("_to_ml_dtypes(tensor): Tensor.to_ml_dtypes().")},
    {"from_scipy", (PyCFunction)(void (*)(void))from_scipy, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("from_scipy($module, matrix, /, *, copy=None)\n--\n\nhurray.from_scipy.")},
    {"sparse_coo", (PyCFunction)(void (*)(void))sparse_coo, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("sparse_coo($module, /, indices, values, shape, *, copy=None)\n--\n\nhurray.sparse_coo.")},
    {"_to_scipy", (PyCFunction)(void (*)(void))to_scipy, METH_FASTCALL,
     PyDoc_STR("_to_scipy(tensor, array, copy): Tensor.to_scipy.")},
    {"_save_view", (PyCFunction)save_view, METH_O,
     PyDoc_STR("_save_view(array): the Tensor hurray.save stores for an ndarray.")},
    {"_from_dlpack_ndarray", (PyCFunction)from_dlpack_ndarray, METH_O,
     PyDoc_STR("_from_dlpack_ndarray(array): hurray.from_dlpack(array) without the capsule, "
               "or NotImplemented.")},
    {"_asarray", (PyCFunction)(void (*)(void))asarray_arraylike, METH_FASTCALL,
     PyDoc_STR("_asarray(obj, copy): hurray.asarray for an array-like.")},
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
    st->str_scipy_sparse = PyUnicode_InternFromString("scipy.sparse");
    if (st->str_scipy_sparse == NULL) return -1;
    static const char *const cls[2][3] = {{"coo_array", "csr_array", "csc_array"},
                                          {"coo_matrix", "csr_matrix", "csc_matrix"}};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            if ((st->str_cls[i][j] = PyUnicode_InternFromString(cls[i][j])) == NULL) return -1;
    fill_kinds(st);
    PyObject *capsule = PyCapsule_New((void *)&np_capi_table, HRPY_NP_CAPI_NAME, NULL);
    if (capsule == NULL) return -1;
    int added = PyModule_AddObjectRef(module, "_C_API", capsule);
    Py_DECREF(capsule);
    return added;
}

static int bridge_traverse(PyObject *module, visitproc visit, void *arg) {
    np_state *st = get_state(module);
    if (st == NULL) return 0;
    Py_VISIT(st->hurray);
    Py_VISIT(st->handler);
    Py_VISIT(st->str_scipy_sparse);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            Py_VISIT(st->str_cls[i][j]);
            Py_VISIT(st->cls[i][j]);
        }
    return 0;
}

static int bridge_clear(PyObject *module) {
    np_state *st = get_state(module);
    if (st == NULL) return 0;
    Py_CLEAR(st->hurray);
    Py_CLEAR(st->handler);
    Py_CLEAR(st->str_scipy_sparse);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            Py_CLEAR(st->str_cls[i][j]);
            Py_CLEAR(st->cls[i][j]);
        }
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
