/* Argument binding and conversions shared by every concept file: the "tiny
 * arg checker" of STYLE.md § 15 for METH_FASTCALL | METH_KEYWORDS, plus the
 * integer, sequence and shape conversions with the binding's error wording. */
#include "state.h"

/* Keyword names arrive as compact ASCII strings (interned by the compiler): a name whose first
 * byte differs is passed over at once (most are), the others compared byte for byte, length
 * first, which costs a fraction of PyUnicode_CompareWithASCIIString per name (__dlpack__
 * binds up to three keywords on every exchange). */
static Py_ssize_t find_name(PyObject *key, const char *const *names, Py_ssize_t n) {
    if (!PyUnicode_Check(key)) return -1;
    if (PyUnicode_IS_COMPACT_ASCII(key)) {
        const char *s = (const char *)PyUnicode_DATA(key);
        size_t len = (size_t)PyUnicode_GET_LENGTH(key);
        if (len == 0) return -1; /* no name is empty */
        for (Py_ssize_t j = 0; j < n; j++)
            if (names[j][0] == s[0] && strlen(names[j]) == len && memcmp(names[j], s, len) == 0)
                return j;
        return -1;
    }
    for (Py_ssize_t j = 0; j < n; j++)
        if (PyUnicode_CompareWithASCIIString(key, names[j]) == 0) return j;
    return -1;
}

static int bind_keyword(const char *fname, PyObject *key, PyObject *value,
                        const char *const *names, Py_ssize_t n, PyObject **out) {
    Py_ssize_t j = find_name(key, names, n);
    if (j < 0) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", fname, key);
        return -1;
    }
    if (out[j] != NULL) {
        PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname,
                     names[j]);
        return -1;
    }
    out[j] = value;
    return 0;
}

static int bind_positional(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                           Py_ssize_t n, Py_ssize_t max_pos, PyObject **out) {
    for (Py_ssize_t i = 0; i < n; i++) out[i] = NULL;
    if (nargs > max_pos) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %zd positional argument%s (%zd given)",
                     fname, max_pos, max_pos == 1 ? "" : "s", nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
    return 0;
}

static int check_required(const char *fname, const char *const *names, Py_ssize_t required,
                          PyObject **out) {
    for (Py_ssize_t i = 0; i < required; i++) {
        if (out[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname,
                         names[i]);
            return -1;
        }
    }
    return 0;
}

int hrpy_bind(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
              const char *const *names, Py_ssize_t n, Py_ssize_t max_pos, Py_ssize_t required,
              PyObject **out) {
    nargs = PyVectorcall_NARGS(nargs);
    if (bind_positional(fname, args, nargs, n, max_pos, out) < 0) return -1;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        if (bind_keyword(fname, PyTuple_GET_ITEM(kwnames, k), args[nargs + k], names, n, out) < 0)
            return -1;
    }
    return check_required(fname, names, required, out);
}

int hrpy_bind_tuple(const char *fname, PyObject *args, PyObject *kwargs,
                    const char *const *names, Py_ssize_t n, Py_ssize_t max_pos,
                    Py_ssize_t required, PyObject **out) {
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    if (bind_positional(fname, ((PyTupleObject *)args)->ob_item, nargs, n, max_pos, out) < 0)
        return -1;
    if (kwargs != NULL) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(kwargs, &pos, &key, &value))
            if (bind_keyword(fname, key, value, names, n, out) < 0) return -1;
    }
    return check_required(fname, names, required, out);
}

/* ---- integers ---------------------------------------------------------------- */

static PyObject *as_index(PyObject *obj, const char *what) {
    if (!PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return PyNumber_Index(obj);
}

int hrpy_as_uint_max(PyObject *obj, const char *what, uint64_t max, uint64_t *out) {
    PyObject *idx = as_index(obj, what);
    if (idx == NULL) return -1;
    unsigned long long v = PyLong_AsUnsignedLongLong(idx);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) goto error;
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s must be in [0, %llu], got %R", what,
                     (unsigned long long)max, idx);
        goto error;
    }
    if ((uint64_t)v > max) {
        PyErr_Format(PyExc_ValueError, "%s must be in [0, %llu], got %R", what,
                     (unsigned long long)max, idx);
        goto error;
    }
    Py_DECREF(idx);
    *out = (uint64_t)v;
    return 0;
error:
    Py_DECREF(idx);
    return -1;
}

int hrpy_as_u64(PyObject *obj, const char *what, uint64_t *out) {
    return hrpy_as_uint_max(obj, what, UINT64_MAX, out);
}

int hrpy_as_i64(PyObject *obj, const char *what, int64_t *out) {
    if (PyLong_CheckExact(obj)) { /* an int already: no __index__ round trip */
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (overflow == 0 && !(v == -1 && PyErr_Occurred())) {
            *out = (int64_t)v;
            return 0;
        }
        PyErr_Clear(); /* out of range: the general path words the error */
    }
    PyObject *idx = as_index(obj, what);
    if (idx == NULL) return -1;
    long long v = PyLong_AsLongLong(idx);
    if (v == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s must be a signed 64-bit integer, got %R", what,
                         idx);
        }
        Py_DECREF(idx);
        return -1;
    }
    Py_DECREF(idx);
    *out = (int64_t)v;
    return 0;
}

/* ---- sequences ------------------------------------------------------------------ */

static PyObject *as_sequence(PyObject *obj, const char *what, Py_ssize_t max_len) {
    if (PyUnicode_Check(obj) || PyBytes_Check(obj) || PyByteArray_Check(obj) ||
        !PySequence_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a sequence of integers, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyObject *seq = PySequence_Fast(obj, what);
    if (seq == NULL) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) > max_len) {
        PyErr_Format(PyExc_ValueError, "%s has %zd entries; at most %zd are allowed", what,
                     PySequence_Fast_GET_SIZE(seq), max_len);
        Py_DECREF(seq);
        return NULL;
    }
    return seq;
}

int hrpy_as_u64_array(PyObject *obj, const char *what, Py_ssize_t max_len, uint64_t *out,
                      Py_ssize_t *len) {
    PyObject *seq = as_sequence(obj, what, max_len);
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (hrpy_as_u64(PySequence_Fast_GET_ITEM(seq, i), what, &out[i]) < 0) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    *len = n;
    return 0;
}

int hrpy_as_i64_array(PyObject *obj, const char *what, Py_ssize_t max_len, int64_t *out,
                      Py_ssize_t *len) {
    PyObject *seq = as_sequence(obj, what, max_len);
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (hrpy_as_i64(PySequence_Fast_GET_ITEM(seq, i), what, &out[i]) < 0) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    *len = n;
    return 0;
}

/* memory-layout.md § Shape and dynamic dimensions: None is a dynamic extent
 * (requirements § Dynamic dimensions); resolved extents are 0 .. 2^63-1 (HR-SHAPE-1). */
int hrpy_as_shape(hrpy_state *st, PyObject *obj, uint64_t *shape, uint8_t *rank) {
    if (PyUnicode_Check(obj) || PyBytes_Check(obj) || !PySequence_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "shape must be a sequence of int or None, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *seq = PySequence_Fast(obj, "shape");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > HURRAY_MAX_RANK) {
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_LIMIT, "rank",
                       "rank: a shape of %zd dimensions exceeds the format maximum of %d", n,
                       HURRAY_MAX_RANK);
        goto error;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (item == Py_None) {
            shape[i] = HURRAY_DYNAMIC_DIM;
            continue;
        }
        if (!PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError, "shape[%zd] must be an int or None, not %.100s", i,
                         Py_TYPE(item)->tp_name);
            goto error;
        }
        PyObject *idx = PyNumber_Index(item);
        if (idx == NULL) goto error;
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
        Py_DECREF(idx);
        if (v == -1 && PyErr_Occurred()) goto error;
        if (overflow != 0 || v < 0) {
            char field[32];
            PyOS_snprintf(field, sizeof field, "shape[%zd]", i);
            hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_RANGE, field,
                           "%s: extent %R is outside [0, 2**63-1] (use None for a dynamic "
                           "dimension)",
                           field, item);
            goto error;
        }
        shape[i] = (uint64_t)v;
    }
    *rank = (uint8_t)n;
    Py_DECREF(seq);
    return 0;
error:
    Py_DECREF(seq);
    return -1;
}

PyObject *hrpy_shape_to_tuple(uint8_t rank, const uint64_t *shape) {
    PyObject *t = PyTuple_New(rank);
    if (t == NULL) return NULL;
    for (Py_ssize_t i = 0; i < rank; i++) {
        PyObject *v = shape[i] == HURRAY_DYNAMIC_DIM ? Py_NewRef(Py_None)
                                                     : PyLong_FromUnsignedLongLong(shape[i]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

PyObject *hrpy_u64_tuple(const uint64_t *v, Py_ssize_t n) {
    PyObject *t = PyTuple_New(n);
    if (t == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyLong_FromUnsignedLongLong(v[i]);
        if (item == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, item);
    }
    return t;
}

PyObject *hrpy_i64_tuple(const int64_t *v, Py_ssize_t n) {
    PyObject *t = PyTuple_New(n);
    if (t == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyLong_FromLongLong(v[i]);
        if (item == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, item);
    }
    return t;
}

const char *hrpy_as_str(PyObject *obj, const char *what, Py_ssize_t *len) {
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return PyUnicode_AsUTF8AndSize(obj, len);
}

PyObject *hrpy_tag_kind_string(int kind) {
    switch (kind) {
    case HURRAY_TAG_NAMED: return PyUnicode_FromString("named");
    case HURRAY_TAG_RESERVED: return PyUnicode_FromString("reserved");
    case HURRAY_TAG_PRIVATE: return PyUnicode_FromString("private");
    default: return PyUnicode_FromString("invalid");
    }
}

PyObject *hrpy_type_name(PyObject *obj) {
    PyTypeObject *t = Py_TYPE(obj);
    PyObject *qual = PyObject_GetAttrString((PyObject *)t, "__qualname__");
    PyObject *mod = qual ? PyObject_GetAttrString((PyObject *)t, "__module__") : NULL;
    PyObject *r = NULL;
    if (qual == NULL || mod == NULL || !PyUnicode_Check(mod) || !PyUnicode_Check(qual)) {
        PyErr_Clear();
        r = PyUnicode_FromString(t->tp_name);
    } else if (PyUnicode_CompareWithASCIIString(mod, "builtins") == 0) {
        r = Py_NewRef(qual);
    } else {
        r = PyUnicode_FromFormat("%U.%U", mod, qual);
    }
    Py_XDECREF(qual);
    Py_XDECREF(mod);
    return r;
}
