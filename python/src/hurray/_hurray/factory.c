/* hurray.zeros / ones / empty / full (requirements § Dynamic dimensions, § Alignment
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
 * Element encoding is exact, rounded once, or refused: bool, the integers (range-checked,
 * OverflowError), and every floating-point type through libhurray's
 * hurray_float_encode, the one place of the rounding, range and special-value
 * rules (element-types.md § Encoding values, HR-DTYPE-6 … 8: round half to
 * even; OverflowError where a type refuses overflow, ValueError for a value it
 * has no encoding for). complex64/128 encode both parts as float32/float64.
 * Packed sub-byte types (int1 … uint4, float6, float4) repeat the element
 * across a pattern of whole bytes, and the padding bits after the last element
 * are zero (HR-PACK-2). Private types:
 * UnsupportedError. All-zero bytes are zero for every named type except
 * float8_e8m0fnu, which has no zero (element-types.md), so zeros refuses it. */
#include "state.h"

#include <string.h>

#define NOGIL_BYTES ((uint64_t)1 << 16)

/* ---- element encoding ----------------------------------------------------------------------- */

struct fill_value {
    uint8_t bytes[16]; /* one element, little-endian; sub-byte types: the repeating pattern */
    unsigned len;      /* bytes per element; sub-byte types: bytes of the pattern (1 or 3) */
    unsigned sub_bits; /* element width for sub-byte types, else 0 */
};

/* fill_value as a C double; TypeError for a non-number. */
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

/* A packed sub-byte element `code` of `bits` < 8 repeated over the smallest
 * whole-byte pattern (lcm(bits, 8) / 8 bytes: 1, or 3 for 6-bit types), LSB
 * first (HR-PACK-1). */
static void pattern_sub_byte(uint64_t code, unsigned bits, struct fill_value *f) {
    unsigned len = bits == 6 ? 3u : 1u;
    memset(f->bytes, 0, sizeof f->bytes);
    for (unsigned bit = 0; bit < 8u * len; bit += bits)
        for (unsigned k = 0; k < bits; k++)
            if ((code >> k) & 1u) f->bytes[(bit + k) / 8u] |= (uint8_t)(1u << ((bit + k) % 8u));
    f->len = len;
    f->sub_bits = bits;
}

/* One floating-point element by libhurray's rules (HR-DTYPE-6 … 8): RANGE is
 * OverflowError, a value with no encoding ValueError, both with the C message. */
static int encode_float_code(uint8_t tag, double x, const char *who, uint64_t *code) {
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_float_encode(tag, x, code, &err);
    if (status == HURRAY_OK) return 0;
    const char *msg = err.message;
    if (strncmp(msg, "value: ", 7) == 0) msg += 7;
    PyErr_Format(status == HURRAY_E_RANGE ? PyExc_OverflowError : PyExc_ValueError,
                 "%s: fill_value %s", who, msg);
    return -1;
}

static void store_le(uint64_t code, unsigned len, uint8_t *dst) {
    for (unsigned i = 0; i < len; i++) dst[i] = (uint8_t)(code >> (8 * i));
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
        pattern_sub_byte(u & ((1u << bits) - 1u), bits, f);
        return 0;
    }
    f->len = bits / 8u;
    for (unsigned i = 0; i < f->len; i++) f->bytes[i] = (uint8_t)(u >> (8 * i));
    return 0;
}

static int encode_float(const struct hurray_dtype_info *info, PyObject *v, const char *who,
                        struct fill_value *f) {
    double x;
    uint64_t code = 0;
    if (float_value(v, who, &x) < 0 || encode_float_code(info->tag, x, who, &code) < 0) return -1;
    if (info->bits < 8) {
        pattern_sub_byte(code, info->bits, f);
        return 0;
    }
    f->len = info->bits / 8u;
    store_le(code, f->len, f->bytes);
    return 0;
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
    uint8_t part = info->bits == 64 ? HURRAY_DTYPE_FLOAT32 : HURRAY_DTYPE_FLOAT64;
    unsigned half = info->bits / 16u;
    uint64_t re = 0, im = 0;
    if (encode_float_code(part, c.real, who, &re) < 0 || encode_float_code(part, c.imag, who, &im) < 0)
        return -1;
    f->len = info->bits / 8u;
    store_le(re, half, f->bytes);
    store_le(im, half, f->bytes + half);
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
    if (info->is_float) return encode_float(info, v, who, f);
    hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_INTERNAL, "dtype",
                   "%s: element type %s is neither bool, integer, float nor complex", who,
                   info->name);
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
