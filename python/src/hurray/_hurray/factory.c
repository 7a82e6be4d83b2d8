/* hurray.zeros / ones / empty / full (seed § Dynamic dimensions, § Alignment
 * is measured; buffer-protocol.md HR-BUF-3; memory-layout.md § Sub-byte
 * packing).
 *
 * Each allocates one owned buffer (an AlignedBuffer: at least
 * MIN_BUFFER_ALIGNMENT, declared as allocated) of exactly the size libhurray
 * requires for the shape and layout (hurray_descriptor_required_sizes), fills
 * it, and builds a CPU Tensor over it. They allocate, so every extent must be
 * resolved: a dynamic one is refused with InvalidDescriptorError naming the
 * call and the index. Layouts: the dense ones (row_major, col_major, strided,
 * tiled, morton, hilbert); a uniform fill is the same bytes in every order.
 *
 * Element encoding is exact or refused: bool, the integers (range-checked,
 * OverflowError), float16 and bfloat16 (round to nearest even, OverflowError
 * when a finite value rounds past the largest finite one), float32/64,
 * complex64/128, and the packed sub-byte integers (padding bits after the
 * last element zero, HR-PACK-2). float8/6/4 and private types:
 * UnsupportedError. All-zero bytes are zero for every named type except
 * float8_e8m0fnu, which has no zero (element-types.md), so zeros refuses it. */
#include "state.h"

#include <math.h>

#define NOGIL_BYTES ((uint64_t)1 << 16)

/* ---- element encoding ----------------------------------------------------------------------- */

struct fill_value {
    uint8_t bytes[16]; /* one element, little-endian (a whole byte for sub-byte types) */
    unsigned len;      /* bytes per element; 1 for sub-byte types */
    unsigned sub_bits; /* element width for sub-byte types, else 0 */
};

/* x rounded to nearest even in a binary format with `ebits` exponent and
 * `mbits` fraction bits and IEEE inf/NaN (float16, bfloat16). */
/* OverflowError naming the value (PyErr_Format has no %g). */
static int out_of_range(double x, const char *type) {
    PyObject *v = PyFloat_FromDouble(x);
    if (v == NULL) return -1;
    PyErr_Format(PyExc_OverflowError, "%R is out of range for %s", v, type);
    Py_DECREF(v);
    return -1;
}

static int pack_ieee(double x, unsigned ebits, unsigned mbits, uint32_t *out) {
    uint32_t sign = signbit(x) ? UINT32_C(1) << (ebits + mbits) : 0;
    uint32_t top = ((UINT32_C(1) << ebits) - 1u) << mbits; /* exponent all ones */
    if (isnan(x)) {
        *out = sign | top | (UINT32_C(1) << (mbits - 1)); /* quiet NaN */
        return 0;
    }
    x = fabs(x);
    if (isinf(x) || x == 0.0) {
        *out = sign | (isinf(x) ? top : 0);
        return 0;
    }
    int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias, e = 0;
    (void)frexp(x, &e);
    e -= 1; /* x in [2^e, 2^(e+1)) */
    int quantum = (e < emin ? emin : e) - (int)mbits;
    uint32_t r = (uint32_t)rint(ldexp(x, -quantum)); /* exact scaling, then ties to even */
    uint32_t bits = e < emin ? r /* subnormal; 2^mbits is the smallest normal's encoding */
                             : ((uint32_t)(e + bias) << mbits) + r - (UINT32_C(1) << mbits);
    if (bits >= top) return out_of_range(x, ebits == 5 ? "float16" : "bfloat16");
    *out = sign | bits;
    return 0;
}

static int float_value(PyObject *v, const char *who, double *out) {
    *out = PyFloat_AsDouble(v);
    if (*out == -1.0 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: fill_value must be a real number, not %.100s", who,
                         Py_TYPE(v)->tp_name);
        }
        return -1;
    }
    return 0;
}

static int pack_f32(double x, uint8_t *dst) {
    float f = (float)x;
    if (isfinite(x) && isinf(f)) return out_of_range(x, "float32");
    uint32_t u;
    memcpy(&u, &f, 4);
    for (int i = 0; i < 4; i++) dst[i] = (uint8_t)(u >> (8 * i));
    return 0;
}

static void pack_f64(double x, uint8_t *dst) {
    uint64_t u;
    memcpy(&u, &x, 8);
    for (int i = 0; i < 8; i++) dst[i] = (uint8_t)(u >> (8 * i));
}

/* An integer type of any width (sub-byte included): range-checked, two's
 * complement, little-endian. */
static int encode_integer(const struct hurray_dtype_info *info, PyObject *v, const char *who,
                          struct fill_value *f) {
    if (!PyIndex_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s: fill_value for %s must be an integer, not %.100s",
                     who, info->name, Py_TYPE(v)->tp_name);
        return -1;
    }
    PyObject *idx = PyNumber_Index(v);
    if (idx == NULL) return -1;
    unsigned bits = info->bits;
    uint64_t u = 0;
    int overflow = 0, ok;
    if (info->is_signed) {
        long long s = PyLong_AsLongLongAndOverflow(idx, &overflow);
        long long hi = bits >= 64 ? LLONG_MAX : (long long)((UINT64_C(1) << (bits - 1)) - 1);
        ok = !overflow && !(s == -1 && PyErr_Occurred()) && s >= -hi - 1 && s <= hi;
        u = (uint64_t)s;
    } else {
        unsigned long long w = PyLong_AsUnsignedLongLong(idx);
        uint64_t hi = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
        ok = !(w == (unsigned long long)-1 && PyErr_Occurred()) && (uint64_t)w <= hi;
        u = (uint64_t)w;
    }
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_OverflowError)) {
        Py_DECREF(idx);
        return -1;
    }
    PyErr_Clear();
    if (!ok) {
        PyErr_Format(PyExc_OverflowError, "%s: %R is out of range for %s", who, idx, info->name);
        Py_DECREF(idx);
        return -1;
    }
    Py_DECREF(idx);
    if (bits < 8) { /* packed: replicate the code across the byte (HR-PACK-1) */
        uint8_t code = (uint8_t)(u & ((1u << bits) - 1u)), b = 0;
        for (unsigned k = 0; k < 8; k += bits) b |= (uint8_t)(code << k);
        f->bytes[0] = b;
        f->len = 1;
        f->sub_bits = bits;
        return 0;
    }
    f->len = bits / 8u;
    for (unsigned i = 0; i < f->len; i++) f->bytes[i] = (uint8_t)(u >> (8 * i));
    return 0;
}

static int encode_float(const struct hurray_dtype_info *info, PyObject *v, const char *who,
                        struct fill_value *f) {
    double x;
    uint32_t h = 0;
    if (float_value(v, who, &x) < 0) return -1;
    f->len = info->bits / 8u;
    switch (info->tag) {
    case HURRAY_DTYPE_FLOAT16:
    case HURRAY_DTYPE_BFLOAT16:
        if (info->tag == HURRAY_DTYPE_FLOAT16 ? pack_ieee(x, 5, 10, &h) : pack_ieee(x, 8, 7, &h))
            return -1;
        f->bytes[0] = (uint8_t)h;
        f->bytes[1] = (uint8_t)(h >> 8);
        return 0;
    case HURRAY_DTYPE_FLOAT32: return pack_f32(x, f->bytes);
    default: pack_f64(x, f->bytes); return 0;
    }
}

static int encode_complex(const struct hurray_dtype_info *info, PyObject *v, const char *who,
                          struct fill_value *f) {
    Py_complex c = PyComplex_AsCComplex(v);
    if (c.real == -1.0 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: fill_value must be a number, not %.100s", who,
                         Py_TYPE(v)->tp_name);
        }
        return -1;
    }
    f->len = info->bits / 8u;
    if (info->bits == 64)
        return pack_f32(c.real, f->bytes) < 0 || pack_f32(c.imag, f->bytes + 4) < 0 ? -1 : 0;
    pack_f64(c.real, f->bytes);
    pack_f64(c.imag, f->bytes + 8);
    return 0;
}

static int encode_fill(hrpy_state *st, uint8_t tag, PyObject *v, const char *who,
                       struct fill_value *f) {
    const struct hurray_dtype_info *info = hurray_dtype_info(tag);
    memset(f, 0, sizeof *f);
    if (info == NULL) {
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "dtype",
                       "%s: the private extension type %s has no known encoding", who,
                       HRPY_HEX(tag));
        return -1;
    }
    if (info->tag == HURRAY_DTYPE_BOOL) {
        int truth = PyObject_IsTrue(v);
        if (truth < 0) return -1;
        f->bytes[0] = (uint8_t)truth;
        f->len = 1;
        return 0;
    }
    if (info->is_integer) return encode_integer(info, v, who, f);
    if (info->is_complex) return encode_complex(info, v, who, f);
    if (info->is_float && info->tier == 1) return encode_float(info, v, who, f);
    hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "dtype",
                   "%s: encoding a value as %s is not implemented; use zeros, or build the "
                   "buffer and pass it to hurray.Tensor",
                   who, info->name);
    return -1;
}

/* Writes the element pattern over [dst, dst + size): the first element, then
 * doubling copies. For sub-byte types the bits after element count-1 are
 * zeroed (HR-PACK-2). */
static void fill_bytes(uint8_t *dst, uint64_t size, const struct fill_value *f, uint64_t count) {
    if (size == 0) return;
    uint64_t done = f->len < size ? f->len : size;
    memcpy(dst, f->bytes, (size_t)done);
    while (done < size) {
        uint64_t n = done < size - done ? done : size - done;
        memcpy(dst + done, dst, (size_t)n);
        done += n;
    }
    if (f->sub_bits == 0) return;
    uint64_t bits = count * f->sub_bits, last = bits / 8u;
    if (bits % 8u != 0 && last < size) dst[last] &= (uint8_t)((1u << (bits % 8u)) - 1u);
}

/* ---- the factories ------------------------------------------------------------------------ */

/* Bytes of buffer 0 for (dtype, shape, layout), from libhurray. */
static int required_size(hrpy_state *st, const char *who, const struct hrpy_tensor_spec *s,
                         uint64_t *size) {
    /* A borrowed view: its spans point at the spec and at `table` (owns nothing). */
    struct hurray_descriptor d;
    struct hurray_buffer_desc table[1] = {{0, 0, HURRAY_SYNC_PRODUCER_SYNCED}};
    uint64_t sizes[HURRAY_MAX_BUFFERS];
    uint8_t known[HURRAY_MAX_BUFFERS];
    struct hurray_error err;
    hurray_error_clear(&err);
    hurray_descriptor_init(&d);
    d.dtype = s->dtype;
    d.rank = s->rank;
    d.shape = s->shape;
    d.layout = s->layout;
    d.buffer_count = 1;
    d.buffers = table;
    int status = hurray_descriptor_required_sizes(&d, sizes, known, &err);
    if (status != HURRAY_OK) {
        hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
        return -1;
    }
    if (!known[0]) {
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "dtype",
                       "%s: the buffer size of element type %s is not known (a private "
                       "extension type)",
                       who, HRPY_HEX(s->dtype));
        return -1;
    }
    *size = sizes[0];
    return 0;
}

/* kind: 0 zeros, 1 empty, 2 full/ones. */
static PyObject *factory(PyObject *module, const char *who, int kind, PyObject *shape,
                         PyObject *fill, PyObject *dtype, PyObject *layout) {
    hrpy_state *st = hrpy_state_from_module(module);
    struct hrpy_tensor_spec s;
    struct fill_value f;
    uint64_t size = 0, count = 1;
    void *data = NULL;
    uint8_t log2 = 0;
    hrpy_tensor_spec_init(&s, st);
    if (hrpy_as_shape(st, shape, s.shape, &s.rank) < 0) return NULL;
    if (hrpy_refuse_dynamic(st, who, s.rank, s.shape) < 0) return NULL;
    s.dtype = HURRAY_DTYPE_FLOAT32;
    if (dtype != NULL && dtype != Py_None && !hrpy_dtype_tag_of(st, dtype, &s.dtype))
        return PyErr_Format(PyExc_TypeError, "%s: dtype must be a hurray.Dtype, not %.100s", who,
                            Py_TYPE(dtype)->tp_name);
    PyObject *opaque_owner = NULL;
    if (hrpy_layout_arg(st, layout, s.rank, who, &s.layout, &opaque_owner) < 0) return NULL;
    if (!hurray_layout_is_dense(s.layout.tag)) {
        const char *name = hurray_layout_name(s.layout.tag);
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "layout",
                              "%s: the %s layout is not dense; %s allocates dense layouts only",
                              who, name ? name : "?", who);
    }
    if (kind == 0 && s.dtype == HURRAY_DTYPE_FLOAT8_E8M0FNU)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "dtype",
                              "%s: float8_e8m0fnu has no zero (every code is a power of two "
                              "or NaN)",
                              who);
    if (kind == 2 && encode_fill(st, s.dtype, fill, who, &f) < 0) return NULL;
    if (required_size(st, who, &s, &size) < 0) return NULL;
    for (unsigned k = 0; k < s.rank; k++) count = s.shape[k] == 0 ? 0 : count * s.shape[k];
    PyObject *owner = hrpy_owned_new(st, size, kind == 0, &data, &log2);
    if (owner == NULL) return NULL;
    if (kind == 2 && size < NOGIL_BYTES) {
        fill_bytes(data, size, &f, count);
    } else if (kind == 2) {
        Py_BEGIN_ALLOW_THREADS
        fill_bytes(data, size, &f, count);
        Py_END_ALLOW_THREADS
    }
    struct hrpy_part part = {data, size, owner, 0, log2};
    PyObject *t = hrpy_tensor_build(st, &s, &part, 1);
    Py_DECREF(owner);
    return t;
}

PyObject *hrpy_zeros(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames) {
    static const char *const names[] = {"shape", "dtype", "layout"};
    PyObject *a[3];
    if (hrpy_bind("zeros", args, nargs, kwnames, names, 3, 2, 1, a) < 0) return NULL;
    return factory(module, "zeros", 0, a[0], NULL, a[1], a[2]);
}

PyObject *hrpy_empty(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames) {
    static const char *const names[] = {"shape", "dtype", "layout"};
    PyObject *a[3];
    if (hrpy_bind("empty", args, nargs, kwnames, names, 3, 2, 1, a) < 0) return NULL;
    return factory(module, "empty", 1, a[0], NULL, a[1], a[2]);
}

PyObject *hrpy_ones(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames) {
    static const char *const names[] = {"shape", "dtype", "layout"};
    PyObject *a[3];
    if (hrpy_bind("ones", args, nargs, kwnames, names, 3, 2, 1, a) < 0) return NULL;
    PyObject *one = PyLong_FromLong(1);
    if (one == NULL) return NULL;
    PyObject *t = factory(module, "ones", 2, a[0], one, a[1], a[2]);
    Py_DECREF(one);
    return t;
}

PyObject *hrpy_full(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames) {
    static const char *const names[] = {"shape", "fill_value", "dtype", "layout"};
    PyObject *a[4];
    if (hrpy_bind("full", args, nargs, kwnames, names, 4, 3, 2, a) < 0) return NULL;
    return factory(module, "full", 2, a[0], a[1], a[2], a[3]);
}
