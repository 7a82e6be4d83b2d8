/* Quantization classes (requirements § Standalone quantization sections;
 * docs/spec/quantization.md): PerTensorAffine, PerChannelAffine, BlockAffine,
 * NF4, MX, NVFP4 over one C struct hurray_quant held by the base
 * hurray.Quantization.
 *
 * Buffer indices. The spec makes them positional: a scheme's buffers are
 * L, L+1, ... where L is the layout's buffer count (HR-QUANT-3). An object
 * always holds concrete indices -- it *is* the wire record, so encode() and
 * decode_quantization() round-trip exactly and equality is the C library's
 * (hurray_quant_equal, which compares the index fields). A constructed object
 * takes L from the keyword-only first_buffer_index, default 1: the
 * single-buffer dense layouts, the only ones NF4 allows and the common case
 * for every scheme. A tensor that attaches a scheme to another layout
 * re-derives the indices from that layout (later phase), so a scheme read
 * off one tensor can always be reused to build another.
 *
 * Hashing: the classes carrying a float (PerTensorAffine, NF4, NVFP4) are
 * unhashable (__hash__ = None, requirements: NaN would break hash/equality); the
 * others hash by value over exactly the fields equality compares. */
#include "state.h"

#include <math.h>

typedef struct {
    PyObject_HEAD
    struct hurray_quant c;
} QuantObject;

#define QUANT(o) ((QuantObject *)(o))

const struct hurray_quant *hrpy_quant_c(hrpy_state *st, PyObject *obj) {
    if (!PyObject_TypeCheck(obj, st->quant_types[0])) return NULL;
    return &QUANT(obj)->c;
}

PyObject *hrpy_quant_from_c(hrpy_state *st, const struct hurray_quant *q) {
    if (q->scheme == 0 || q->scheme >= HRPY_QUANT_CLASS_COUNT)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_RESERVED_TAG,
                              "quantization.scheme",
                              "quantization.scheme: %s has no class in this build",
                              HRPY_HEX(q->scheme));
    PyTypeObject *type = st->quant_types[q->scheme];
    QuantObject *self = (QuantObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->c = *q;
    return (PyObject *)self;
}

/* The section's buffer-index fields in section order (quantization.md):
 * absmax, nested_absmax, quant_map for NF4; scale, zero_point otherwise. */
static int index_fields(struct hurray_quant *q, uint8_t *f[3]) {
    if (q->scheme == HURRAY_QUANT_NF4) {
        f[0] = &q->absmax_buffer;
        f[1] = &q->nested_absmax_buffer;
        f[2] = &q->quant_map_buffer;
        return 3;
    }
    f[0] = &q->scale_buffer;
    f[1] = &q->zero_point_buffer;
    return 2;
}

void hrpy_quant_set_first_index(struct hurray_quant *q, uint8_t first) {
    uint8_t *f[3];
    int n = index_fields(q, f);
    unsigned next = first;
    for (int i = 0; i < n; i++) {
        if (*f[i] == HURRAY_NO_BUFFER) continue;
        *f[i] = (uint8_t)next++;
    }
}

/* Runs hurray_quant_check on a freshly built object. Steals `self`. */
static PyObject *quant_finish(hrpy_state *st, QuantObject *self) {
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_quant_check(&self->c, &err);
    if (status != HURRAY_OK) {
        Py_DECREF(self);
        return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    }
    return (PyObject *)self;
}

static QuantObject *quant_alloc(PyTypeObject *type, uint8_t scheme) {
    QuantObject *self = (QuantObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    memset(&self->c, 0, sizeof self->c);
    self->c.scheme = scheme;
    self->c.scale_buffer = HURRAY_NO_BUFFER;
    self->c.zero_point_buffer = HURRAY_NO_BUFFER;
    self->c.absmax_buffer = HURRAY_NO_BUFFER;
    self->c.nested_absmax_buffer = HURRAY_NO_BUFFER;
    self->c.quant_map_buffer = HURRAY_NO_BUFFER;
    return self;
}

/* ---- argument helpers ---------------------------------------------------------------- */

static int axis_arg(PyObject *obj, uint8_t *axis) {
    uint64_t v;
    if (hrpy_as_uint_max(obj, "axis", 0xFF, &v) < 0) return -1;
    *axis = (uint8_t)v;
    return 0;
}

static int u32_arg(PyObject *obj, const char *what, uint32_t *out) {
    uint64_t v;
    if (hrpy_as_uint_max(obj, what, UINT32_MAX, &v) < 0) return -1;
    *out = (uint32_t)v;
    return 0;
}

static int double_arg(PyObject *obj, const char *what, double *out) {
    double v = PyFloat_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s must be a real number, not %.100s", what,
                         Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    *out = v;
    return 0;
}

/* A float32 field: the value is rounded to binary32 (what the wire holds). */
static int float_arg(PyObject *obj, const char *what, float *out) {
    double v;
    if (double_arg(obj, what, &v) < 0) return -1;
    *out = (float)v;
    return 0;
}

/* A Dtype (required) or None (when `optional`). */
static int dtype_arg(hrpy_state *st, PyObject *obj, const char *what, int optional,
                     uint8_t *tag, int *present) {
    *present = 0;
    if (obj == NULL || obj == Py_None) {
        if (optional) return 0;
        PyErr_Format(PyExc_TypeError, "%s must be a hurray.Dtype, not None", what);
        return -1;
    }
    if (!hrpy_dtype_tag_of(st, obj, tag)) {
        PyErr_Format(PyExc_TypeError, "%s must be a hurray.Dtype%s, not %.100s", what,
                     optional ? " or None" : "", Py_TYPE(obj)->tp_name);
        return -1;
    }
    *present = 1;
    return 0;
}

/* first_buffer_index = L (keyword-only, default 1); L + Q - 1 must stay
 * below 0xFF (the absent marker), since buffer_count is a u8. */
static int first_index_arg(PyObject *obj, unsigned q, uint8_t *first) {
    uint64_t v = 1;
    if (obj != NULL && obj != Py_None &&
        hrpy_as_uint_max(obj, "first_buffer_index", 0xFEu - (q - 1u), &v) < 0)
        return -1;
    *first = (uint8_t)v;
    return 0;
}

static PyObject *index_or_none(uint8_t idx) {
    if (idx == HURRAY_NO_BUFFER) Py_RETURN_NONE;
    return PyLong_FromLong(idx);
}

/* Binds tp_new arguments: `npos` positional-or-keyword names then the
 * keyword-only first_buffer_index (when the scheme has buffers). */
#define QUANT_NEW_PROLOGUE(fname, scheme, nnames, maxpos, req)                                 \
    hrpy_state *st = hrpy_state_from_type(type);                                               \
    if (st == NULL) return NULL;                                                               \
    PyObject *a[nnames];                                                                       \
    if (hrpy_bind_tuple(fname, args, kwargs, names, (nnames), (maxpos), (req), a) < 0)         \
        return NULL;                                                                           \
    QuantObject *self = quant_alloc(type, (scheme));                                           \
    if (self == NULL) return NULL

/* ---- per_tensor_affine (HR-QUANT-10) ---------------------------------------------------- */

static PyObject *per_tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"scale", "zero_point"};
    QUANT_NEW_PROLOGUE("PerTensorAffine", HURRAY_QUANT_PER_TENSOR_AFFINE, 2, 2, 1);
    if (double_arg(a[0], "scale", &self->c.scale) < 0) goto error;
    if (a[1] != NULL && hrpy_as_i64(a[1], "zero_point", &self->c.zero_point) < 0) goto error;
    return quant_finish(st, self);
error:
    Py_DECREF(self);
    return NULL;
}

static PyObject *get_scale(PyObject *self, void *Py_UNUSED(c)) {
    return PyFloat_FromDouble(QUANT(self)->c.scale);
}
static PyObject *get_zero_point(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromLongLong(QUANT(self)->c.zero_point);
}

static PyObject *per_tensor_repr(PyObject *self) {
    PyObject *scale = get_scale(self, NULL);
    if (scale == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("PerTensorAffine(scale=%R, zero_point=%lld)", scale,
                                       (long long)QUANT(self)->c.zero_point);
    Py_DECREF(scale);
    return r;
}

static PyGetSetDef per_tensor_getset[] = {
    {"scale", get_scale, NULL, PyDoc_STR("value = (code - zero_point) * scale."), NULL},
    {"zero_point", get_zero_point, NULL, PyDoc_STR("Integer zero point."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- per_channel_affine and block_affine (HR-QUANT-11, -12) ---------------------------------- */

static int set_affine(hrpy_state *st, QuantObject *self, PyObject *axis, PyObject *scale_dtype,
                      PyObject *zp_dtype, PyObject *first) {
    int present = 0, zp = 0;
    uint8_t tag = 0, l = 1;
    if (axis_arg(axis, &self->c.axis) < 0) return -1;
    if (scale_dtype == NULL) {
        self->c.scale_dtype = HURRAY_DTYPE_FLOAT32;
    } else {
        if (dtype_arg(st, scale_dtype, "scale_dtype", 0, &tag, &present) < 0) return -1;
        self->c.scale_dtype = tag;
    }
    if (dtype_arg(st, zp_dtype, "zero_point_dtype", 1, &tag, &zp) < 0) return -1;
    if (first_index_arg(first, zp ? 2u : 1u, &l) < 0) return -1;
    self->c.scale_buffer = l;
    self->c.zero_point_buffer = zp ? (uint8_t)(l + 1) : HURRAY_NO_BUFFER;
    self->c.zero_point_dtype = zp ? tag : 0;
    return 0;
}

static PyObject *per_channel_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"axis", "scale_dtype", "zero_point_dtype",
                                        "first_buffer_index"};
    QUANT_NEW_PROLOGUE("PerChannelAffine", HURRAY_QUANT_PER_CHANNEL_AFFINE, 4, 3, 1);
    if (set_affine(st, self, a[0], a[1], a[2], a[3]) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return quant_finish(st, self);
}

static PyObject *block_affine_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"axis", "block_size", "scale_dtype", "zero_point_dtype",
                                        "first_buffer_index"};
    QUANT_NEW_PROLOGUE("BlockAffine", HURRAY_QUANT_BLOCK_AFFINE, 5, 4, 2);
    if (set_affine(st, self, a[0], a[2], a[3], a[4]) < 0 ||
        u32_arg(a[1], "block_size", &self->c.block_size) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return quant_finish(st, self);
}

static PyObject *get_axis(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromLong(QUANT(self)->c.axis);
}
static PyObject *get_block_size(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromUnsignedLong(QUANT(self)->c.block_size);
}
static PyObject *get_scale_buffer_index(PyObject *self, void *Py_UNUSED(c)) {
    return index_or_none(QUANT(self)->c.scale_buffer);
}
static PyObject *get_zero_point_buffer_index(PyObject *self, void *Py_UNUSED(c)) {
    return index_or_none(QUANT(self)->c.zero_point_buffer);
}

static PyObject *dtype_or_none(PyObject *self, uint8_t tag, int present) {
    if (!present) Py_RETURN_NONE;
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    if (st == NULL) return NULL;
    return Py_XNewRef(hrpy_dtype_get(st, tag, "quantization.dtype"));
}

static PyObject *get_scale_dtype(PyObject *self, void *Py_UNUSED(c)) {
    return dtype_or_none(self, QUANT(self)->c.scale_dtype, 1);
}
static PyObject *get_zero_point_dtype(PyObject *self, void *Py_UNUSED(c)) {
    return dtype_or_none(self, QUANT(self)->c.zero_point_dtype,
                         QUANT(self)->c.zero_point_buffer != HURRAY_NO_BUFFER);
}

/* The first of the scheme's buffer indices (L), or None without buffers. */
static PyObject *get_first_buffer_index(PyObject *self, void *Py_UNUSED(c)) {
    const struct hurray_quant *q = &QUANT(self)->c;
    return index_or_none(q->scheme == HURRAY_QUANT_NF4 ? q->absmax_buffer : q->scale_buffer);
}

/* ", first_buffer_index=L" when L != 1 (the constructor's default). */
static PyObject *first_index_suffix(PyObject *self) {
    const struct hurray_quant *q = &QUANT(self)->c;
    uint8_t l = q->scheme == HURRAY_QUANT_NF4 ? q->absmax_buffer : q->scale_buffer;
    if (l == 1) return PyUnicode_FromString("");
    return PyUnicode_FromFormat(", first_buffer_index=%d", (int)l);
}

static PyObject *affine_repr(PyObject *self) {
    const struct hurray_quant *q = &QUANT(self)->c;
    PyObject *sd = NULL, *zd = NULL, *sfx = NULL, *r = NULL;
    sd = get_scale_dtype(self, NULL);
    zd = get_zero_point_dtype(self, NULL);
    sfx = first_index_suffix(self);
    if (sd == NULL || zd == NULL || sfx == NULL) goto done;
    if (q->scheme == HURRAY_QUANT_BLOCK_AFFINE)
        r = PyUnicode_FromFormat(
            "BlockAffine(axis=%d, block_size=%lu, scale_dtype=%R, zero_point_dtype=%R%U)",
            (int)q->axis, (unsigned long)q->block_size, sd, zd, sfx);
    else
        r = PyUnicode_FromFormat("PerChannelAffine(axis=%d, scale_dtype=%R, zero_point_dtype=%R%U)",
                                 (int)q->axis, sd, zd, sfx);
done:
    Py_XDECREF(sd);
    Py_XDECREF(zd);
    Py_XDECREF(sfx);
    return r;
}

#define AFFINE_GETSET                                                                          \
    {"axis", get_axis, NULL, PyDoc_STR("The quantized axis."), NULL},                          \
        {"scale_dtype", get_scale_dtype, NULL, PyDoc_STR("Element type of the scales."),      \
         NULL},                                                                                \
        {"zero_point_dtype", get_zero_point_dtype, NULL,                                       \
         PyDoc_STR("Element type of the zero points, or None (symmetric)."), NULL},            \
        {"scale_buffer_index", get_scale_buffer_index, NULL,                                   \
         PyDoc_STR("Buffer index of the scales (L)."), NULL},                                  \
        {"zero_point_buffer_index", get_zero_point_buffer_index, NULL,                         \
         PyDoc_STR("Buffer index of the zero points (L+1), or None."), NULL},                  \
        {"first_buffer_index", get_first_buffer_index, NULL,                                   \
         PyDoc_STR("L: the index of the scheme's first buffer."), NULL}

static PyGetSetDef per_channel_getset[] = {
    AFFINE_GETSET,
    {NULL, NULL, NULL, NULL, NULL},
};

static PyGetSetDef block_affine_getset[] = {
    AFFINE_GETSET,
    {"block_size", get_block_size, NULL, PyDoc_STR("Elements per block along axis."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- nf4 (HR-QUANT-13) ------------------------------------------------------------------ */

static PyObject *nf4_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"block_size", "double_quant", "nested_block_size",
                                        "nested_offset", "first_buffer_index"};
    QUANT_NEW_PROLOGUE("NF4", HURRAY_QUANT_NF4, 5, 4, 0);
    uint8_t l = 1;
    int dq = 0;
    self->c.block_size = 64;
    if (a[0] != NULL && u32_arg(a[0], "block_size", &self->c.block_size) < 0) goto error;
    if (a[1] != NULL && (dq = PyObject_IsTrue(a[1])) < 0) goto error;
    self->c.flags = dq ? HURRAY_NF4_DOUBLE_QUANT : 0;
    self->c.nested_block_size = dq ? 256 : 0;
    if (a[2] != NULL && a[2] != Py_None &&
        u32_arg(a[2], "nested_block_size", &self->c.nested_block_size) < 0)
        goto error;
    if (a[3] != NULL && a[3] != Py_None &&
        float_arg(a[3], "nested_offset", &self->c.nested_offset) < 0)
        goto error;
    if (first_index_arg(a[4], dq ? 3u : 1u, &l) < 0) goto error;
    self->c.absmax_buffer = l;
    self->c.nested_absmax_buffer = dq ? (uint8_t)(l + 1) : HURRAY_NO_BUFFER;
    self->c.quant_map_buffer = dq ? (uint8_t)(l + 2) : HURRAY_NO_BUFFER;
    return quant_finish(st, self);
error:
    Py_DECREF(self);
    return NULL;
}

static int nf4_dq(PyObject *self) { return (QUANT(self)->c.flags & HURRAY_NF4_DOUBLE_QUANT) != 0; }

static PyObject *nf4_get_double_quant(PyObject *self, void *Py_UNUSED(c)) {
    return PyBool_FromLong(nf4_dq(self));
}
static PyObject *nf4_get_nested_block_size(PyObject *self, void *Py_UNUSED(c)) {
    if (!nf4_dq(self)) Py_RETURN_NONE;
    return PyLong_FromUnsignedLong(QUANT(self)->c.nested_block_size);
}
static PyObject *nf4_get_nested_offset(PyObject *self, void *Py_UNUSED(c)) {
    if (!nf4_dq(self)) Py_RETURN_NONE;
    return PyFloat_FromDouble((double)QUANT(self)->c.nested_offset);
}
static PyObject *nf4_get_absmax(PyObject *self, void *Py_UNUSED(c)) {
    return index_or_none(QUANT(self)->c.absmax_buffer);
}
static PyObject *nf4_get_nested_absmax(PyObject *self, void *Py_UNUSED(c)) {
    return index_or_none(QUANT(self)->c.nested_absmax_buffer);
}
static PyObject *nf4_get_quant_map(PyObject *self, void *Py_UNUSED(c)) {
    return index_or_none(QUANT(self)->c.quant_map_buffer);
}

static PyObject *nf4_repr(PyObject *self) {
    const struct hurray_quant *q = &QUANT(self)->c;
    PyObject *sfx = first_index_suffix(self), *off = NULL, *r = NULL;
    if (sfx == NULL) return NULL;
    if (!nf4_dq(self)) {
        r = PyUnicode_FromFormat("NF4(block_size=%lu%U)", (unsigned long)q->block_size, sfx);
    } else {
        off = PyFloat_FromDouble((double)q->nested_offset);
        if (off != NULL)
            r = PyUnicode_FromFormat(
                "NF4(block_size=%lu, double_quant=True, nested_block_size=%lu, "
                "nested_offset=%R%U)",
                (unsigned long)q->block_size, (unsigned long)q->nested_block_size, off, sfx);
    }
    Py_XDECREF(off);
    Py_DECREF(sfx);
    return r;
}

static PyGetSetDef nf4_getset[] = {
    {"block_size", get_block_size, NULL, PyDoc_STR("Elements per absmax block."), NULL},
    {"double_quant", nf4_get_double_quant, NULL,
     PyDoc_STR("True when the absmax values are themselves quantized."), NULL},
    {"nested_block_size", nf4_get_nested_block_size, NULL,
     PyDoc_STR("Block size of the nested absmax (double quant), else None."), NULL},
    {"nested_offset", nf4_get_nested_offset, NULL,
     PyDoc_STR("Offset added to dequantized absmax (float32; double quant), else None."),
     NULL},
    {"absmax_buffer_index", nf4_get_absmax, NULL, PyDoc_STR("Buffer index of absmax (L)."),
     NULL},
    {"nested_absmax_buffer_index", nf4_get_nested_absmax, NULL,
     PyDoc_STR("Buffer index of the nested absmax (L+1), or None."), NULL},
    {"quant_map_buffer_index", nf4_get_quant_map, NULL,
     PyDoc_STR("Buffer index of the quant map (L+2), or None."), NULL},
    {"first_buffer_index", get_first_buffer_index, NULL,
     PyDoc_STR("L: the index of the scheme's first buffer."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- mx (HR-QUANT-14) and nvfp4 (HR-QUANT-15) ------------------------------------------------- */

static PyObject *mx_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"axis", "block_size", "first_buffer_index"};
    QUANT_NEW_PROLOGUE("MX", HURRAY_QUANT_MX, 3, 2, 1);
    uint8_t l = 1;
    self->c.block_size = 32;
    if (axis_arg(a[0], &self->c.axis) < 0) goto error;
    if (a[1] != NULL && u32_arg(a[1], "block_size", &self->c.block_size) < 0) goto error;
    if (first_index_arg(a[2], 1u, &l) < 0) goto error;
    self->c.scale_buffer = l;
    return quant_finish(st, self);
error:
    Py_DECREF(self);
    return NULL;
}

static PyObject *nvfp4_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"axis", "tensor_scale", "block_size",
                                        "first_buffer_index"};
    QUANT_NEW_PROLOGUE("NVFP4", HURRAY_QUANT_NVFP4, 4, 3, 2);
    uint8_t l = 1;
    self->c.block_size = 16;
    if (axis_arg(a[0], &self->c.axis) < 0) goto error;
    if (float_arg(a[1], "tensor_scale", &self->c.tensor_scale) < 0) goto error;
    if (a[2] != NULL && u32_arg(a[2], "block_size", &self->c.block_size) < 0) goto error;
    if (first_index_arg(a[3], 1u, &l) < 0) goto error;
    self->c.scale_buffer = l;
    return quant_finish(st, self);
error:
    Py_DECREF(self);
    return NULL;
}

static PyObject *get_tensor_scale(PyObject *self, void *Py_UNUSED(c)) {
    return PyFloat_FromDouble((double)QUANT(self)->c.tensor_scale);
}

static PyObject *mx_repr(PyObject *self) {
    PyObject *sfx = first_index_suffix(self);
    if (sfx == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("MX(axis=%d, block_size=%lu%U)", (int)QUANT(self)->c.axis,
                                       (unsigned long)QUANT(self)->c.block_size, sfx);
    Py_DECREF(sfx);
    return r;
}

static PyObject *nvfp4_repr(PyObject *self) {
    PyObject *sfx = first_index_suffix(self), *ts = get_tensor_scale(self, NULL), *r = NULL;
    if (sfx && ts)
        r = PyUnicode_FromFormat("NVFP4(axis=%d, tensor_scale=%R, block_size=%lu%U)",
                                 (int)QUANT(self)->c.axis, ts,
                                 (unsigned long)QUANT(self)->c.block_size, sfx);
    Py_XDECREF(sfx);
    Py_XDECREF(ts);
    return r;
}

static PyGetSetDef mx_getset[] = {
    {"axis", get_axis, NULL, PyDoc_STR("The blocked axis."), NULL},
    {"block_size", get_block_size, NULL, PyDoc_STR("Elements per block (32)."), NULL},
    {"scale_buffer_index", get_scale_buffer_index, NULL,
     PyDoc_STR("Buffer index of the E8M0 scales (L)."), NULL},
    {"first_buffer_index", get_first_buffer_index, NULL,
     PyDoc_STR("L: the index of the scheme's first buffer."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyGetSetDef nvfp4_getset[] = {
    {"axis", get_axis, NULL, PyDoc_STR("The blocked axis."), NULL},
    {"tensor_scale", get_tensor_scale, NULL, PyDoc_STR("Per-tensor float32 scale."), NULL},
    {"block_size", get_block_size, NULL, PyDoc_STR("Elements per block (16)."), NULL},
    {"scale_buffer_index", get_scale_buffer_index, NULL,
     PyDoc_STR("Buffer index of the E4M3 block scales (L)."), NULL},
    {"first_buffer_index", get_first_buffer_index, NULL,
     PyDoc_STR("L: the index of the scheme's first buffer."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- base: scheme, buffer_count, encode, equality, hash ----------------------------------- */

static PyObject *quant_get_scheme(PyObject *self, void *Py_UNUSED(c)) {
    const char *name = hurray_quant_scheme_name(QUANT(self)->c.scheme);
    if (name == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

static PyObject *quant_get_buffer_count(PyObject *self, void *Py_UNUSED(c)) {
    int count = 0;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_quant_buffer_count(&QUANT(self)->c, &count, &err);
    if (status != HURRAY_OK) {
        hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
        return st ? hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err) : NULL;
    }
    return PyLong_FromLong(count);
}

static PyObject *quant_encode(PyObject *self, PyTypeObject *defining_class, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames) {
    hrpy_state *st = PyType_GetModuleState(defining_class);
    if (hrpy_bind("encode", args, nargs, kwnames, NULL, 0, 0, 0, NULL) < 0) return NULL;
    uint8_t buf[64];
    size_t written = 0;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_quant_encode(&QUANT(self)->c, buf, sizeof buf, &written, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    return PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)written);
}

static PyMethodDef quant_methods[] = {
    {"encode", (PyCFunction)(void (*)(void))quant_encode,
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("encode($self, /)\n--\n\n"
               "The standalone encoding: the quantization section's payload.")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef quant_getset[] = {
    {"scheme", quant_get_scheme, NULL,
     PyDoc_STR("'per_tensor_affine', 'per_channel_affine', 'block_affine', 'nf4', 'mx' or "
               "'nvfp4'."),
     NULL},
    {"buffer_count", quant_get_buffer_count, NULL,
     PyDoc_STR("Buffers the scheme adds after the layout's (Q)."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *quant_richcompare(PyObject *self, PyObject *other, int op) {
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    if (st == NULL) return NULL;
    const struct hurray_quant *b = hrpy_quant_c(st, other);
    if (b == NULL || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    int eq = hurray_quant_equal(&QUANT(self)->c, b);
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* For the integer-only schemes: the fields hurray_quant_equal compares. */
static Py_hash_t quant_hash(PyObject *self) {
    const struct hurray_quant *q = &QUANT(self)->c;
    uint64_t fields[7] = {q->scheme, q->axis, q->scale_buffer, q->zero_point_buffer,
                          q->scale_dtype, q->zero_point_dtype, q->block_size};
    if (q->scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE) fields[6] = 0;
    if (q->scheme == HURRAY_QUANT_MX) fields[3] = fields[4] = fields[5] = 0;
    Py_uhash_t h = 0x345678u;
    for (int i = 0; i < 7; i++) h = (h ^ (Py_uhash_t)fields[i]) * 1000003u;
    return h == (Py_uhash_t)-1 ? -2 : (Py_hash_t)h;
}

static PyObject *quant_repr_base(PyObject *self) {
    return PyUnicode_FromFormat("Quantization(scheme=%s)", HRPY_HEX(QUANT(self)->c.scheme));
}

static PyType_Slot quant_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR("Base of the quantization classes. Not constructible.")},
    {Py_tp_repr, quant_repr_base},
    {Py_tp_richcompare, quant_richcompare},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_methods, quant_methods},
    {Py_tp_getset, quant_getset},
    {Py_tp_traverse, hrpy_traverse_type_only},
    {Py_tp_dealloc, hrpy_dealloc_simple},
    {0, NULL},
};

static PyType_Spec quant_spec = {
    .name = "hurray.Quantization",
    .basicsize = sizeof(QuantObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_BASETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = quant_slots,
};

#define QUANT_SPEC(var, pyname, doc, newfn, reprfn, getset, hashfn)                              \
    static PyType_Slot var##_slots[] = {                                                       \
        {Py_tp_doc, (void *)PyDoc_STR(doc)},                                                   \
        {Py_tp_new, newfn},                                                                    \
        {Py_tp_repr, reprfn},                                                                  \
        {Py_tp_traverse, hrpy_traverse_type_only},                                                          \
        {Py_tp_getset, getset},                                                                \
        {Py_tp_richcompare, quant_richcompare},                                                \
        {Py_tp_hash, hashfn},                                                                  \
        {0, NULL},                                                                             \
    };                                                                                         \
    static PyType_Spec var##_spec = {                                                          \
        .name = "hurray." pyname,                                                              \
        .basicsize = 0,                                                                        \
        .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,           \
        .slots = var##_slots,                                                                  \
    }

QUANT_SPEC(per_tensor, "PerTensorAffine",
           "PerTensorAffine(scale, zero_point=0)\n--\n\n"
           "value = (code - zero_point) * scale. Unhashable (carries a float).",
           per_tensor_new, per_tensor_repr, per_tensor_getset, PyObject_HashNotImplemented);
QUANT_SPEC(per_channel, "PerChannelAffine",
           "PerChannelAffine(axis, scale_dtype=..., zero_point_dtype=None, *, "
           "first_buffer_index=1)\n--\n\n"
           "One scale (and optional zero point) per index along axis, in buffers L, L+1;\n"
           "scale_dtype defaults to hurray.float32.",
           per_channel_new, affine_repr, per_channel_getset, quant_hash);
QUANT_SPEC(block_affine, "BlockAffine",
           "BlockAffine(axis, block_size, scale_dtype=..., zero_point_dtype=None, *, "
           "first_buffer_index=1)\n--\n\n"
           "Group-wise affine: one scale (and zero point) per block along axis;\n"
           "scale_dtype defaults to hurray.float32.",
           block_affine_new, affine_repr, block_affine_getset, quant_hash);
QUANT_SPEC(nf4, "NF4",
           "NF4(block_size=64, double_quant=False, nested_block_size=None, "
           "nested_offset=None, *, first_buffer_index=1)\n--\n\n"
           "QLoRA 4-bit NormalFloat; nested_block_size defaults to 256 with double quant.\n"
           "Unhashable (carries a float).",
           nf4_new, nf4_repr, nf4_getset, PyObject_HashNotImplemented);
QUANT_SPEC(mx, "MX",
           "MX(axis, block_size=32, *, first_buffer_index=1)\n--\n\n"
           "OCP Microscaling: one E8M0 scale per block of 32 along axis.",
           mx_new, mx_repr, mx_getset, quant_hash);
QUANT_SPEC(nvfp4, "NVFP4",
           "NVFP4(axis, tensor_scale, block_size=16, *, first_buffer_index=1)\n--\n\n"
           "NVIDIA NVFP4: E4M3 block scales of 16 and a float32 tensor scale.\n"
           "Unhashable (carries a float).",
           nvfp4_new, nvfp4_repr, nvfp4_getset, PyObject_HashNotImplemented);

/* ---- decode_quantization (HR-QUANT-1) ------------------------------------------------------ */

PyObject *hrpy_decode_quantization(PyObject *module, PyObject *arg) {
    hrpy_state *st = hrpy_state_from_module(module);
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    struct hurray_quant q;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_quant_decode((const uint8_t *)view.buf, (size_t)view.len, &q, &err);
    PyBuffer_Release(&view);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    return hrpy_quant_from_c(st, &q);
}

int hrpy_quant_init(PyObject *module, hrpy_state *st) {
    static PyType_Spec *const specs[HRPY_QUANT_CLASS_COUNT] = {
        [0] = &quant_spec,
        [HURRAY_QUANT_PER_TENSOR_AFFINE] = &per_tensor_spec,
        [HURRAY_QUANT_PER_CHANNEL_AFFINE] = &per_channel_spec,
        [HURRAY_QUANT_BLOCK_AFFINE] = &block_affine_spec,
        [HURRAY_QUANT_NF4] = &nf4_spec,
        [HURRAY_QUANT_MX] = &mx_spec,
        [HURRAY_QUANT_NVFP4] = &nvfp4_spec,
    };
    st->quant_types[0] = hrpy_add_type(module, &quant_spec, NULL);
    if (st->quant_types[0] == NULL) return -1;
    for (int i = 1; i < HRPY_QUANT_CLASS_COUNT; i++) {
        st->quant_types[i] = hrpy_add_type(module, specs[i], (PyObject *)st->quant_types[0]);
        if (st->quant_types[i] == NULL) return -1;
    }
    return 0;
}
