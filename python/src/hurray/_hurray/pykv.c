/* KV metadata (requirements § File metadata; kv.md): a Python mapping to libhurray's entry
 * array, and a decoded map back to a dict. The encoder and decoder, and every rule on
 * names, UTF-8, order and depth, are libhurray's (hurray_kv_encode / _decode, run by
 * the file writer and reader); this file only converts values.
 *
 * Python -> KV (the direction save(kv=...) takes), bool tested before int:
 *   bool -> bool; int (and any other __index__ integer) -> int64, OverflowError outside
 *   its range (Python never writes uint64, kv.md HR-KV-4); float -> float64, bit for bit;
 *   str -> string (UTF-8); bytes, bytearray, memoryview -> bytes; list -> list.
 *   Anything else, a tuple included (it would read back as a list and the two would not
 *   compare equal), is TypeError naming the key.
 * KV -> Python (load_kv): bool, int64 and uint64 -> int, float64, string -> str, bytes,
 *   list; a value type this build does not know raises UnsupportedError, never a hole. */
#include "state.h"

#include <string.h>

/* ---- building -------------------------------------------------------------------------- */

static void *block_new(struct hrpy_kv_build *b, size_t n, size_t size) {
    if (b->nblocks == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        void **grown = PyMem_Realloc(b->blocks, cap * sizeof *grown);
        if (grown == NULL) return PyErr_NoMemory();
        b->blocks = grown;
        b->cap = cap;
    }
    void *p = PyMem_Calloc(n ? n : 1, size);
    if (p == NULL) return PyErr_NoMemory();
    b->blocks[b->nblocks++] = p;
    return p;
}

void hrpy_kv_build_release(struct hrpy_kv_build *b) {
    for (size_t i = 0; i < b->nblocks; i++) PyMem_Free(b->blocks[i]);
    PyMem_Free(b->blocks);
    Py_CLEAR(b->keep);
    memset(b, 0, sizeof *b);
}

/* Bytes of a str (UTF-8, cached in the object) or a bytes-like object (as a bytes copy
 * kept in b->keep, so that nothing the encoder reads can change under it). */
static int keep_bytes(struct hrpy_kv_build *b, PyObject *obj, int is_str, const uint8_t **data,
                      uint64_t *len) {
    PyObject *held;
    if (is_str) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(obj, &n);
        if (s == NULL) return -1;
        held = Py_NewRef(obj);
        *data = (const uint8_t *)s;
        *len = (uint64_t)n;
    } else {
        held = PyBytes_Check(obj) ? Py_NewRef(obj) : PyBytes_FromObject(obj);
        if (held == NULL) return -1;
        *data = (const uint8_t *)PyBytes_AS_STRING(held);
        *len = (uint64_t)PyBytes_GET_SIZE(held);
    }
    int rc = PyList_Append(b->keep, held);
    Py_DECREF(held);
    return rc;
}

static int value_from_object(hrpy_state *st, struct hrpy_kv_build *b, PyObject *key,
                             PyObject *obj, struct hurray_kv_value *v, unsigned depth) {
    if (PyBool_Check(obj)) { /* before int: bool is a subclass of int */
        v->type = HURRAY_KV_BOOL;
        v->v.boolean = obj == Py_True;
        return 0;
    }
    if (PyFloat_Check(obj)) {
        v->type = HURRAY_KV_FLOAT64;
        v->v.f64 = PyFloat_AS_DOUBLE(obj);
        return 0;
    }
    if (PyLong_Check(obj) || PyIndex_Check(obj)) { /* int, and NumPy's integer scalars */
        PyObject *i = PyNumber_Index(obj);
        if (i == NULL) return -1;
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(i, &overflow);
        Py_DECREF(i);
        if (x == -1 && PyErr_Occurred()) return -1;
        if (overflow) {
            PyErr_Format(PyExc_OverflowError,
                         "kv[%R]: %R does not fit int64 (Python ints are written as int64)", key,
                         obj);
            return -1;
        }
        v->type = HURRAY_KV_INT64;
        v->v.i64 = (int64_t)x;
        return 0;
    }
    if (PyUnicode_Check(obj)) {
        v->type = HURRAY_KV_STRING;
        return keep_bytes(b, obj, 1, &v->v.bytes.data, &v->v.bytes.len);
    }
    if (PyBytes_Check(obj) || PyByteArray_Check(obj) || PyMemoryView_Check(obj)) {
        v->type = HURRAY_KV_BYTES;
        return keep_bytes(b, obj, 0, &v->v.bytes.data, &v->v.bytes.len);
    }
    if (PyList_Check(obj)) {
        if (depth > HURRAY_KV_MAX_DEPTH_FORMAT) {
            hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_LIMIT, "kv",
                           "kv[%R]: lists nest deeper than %u levels", key,
                           HURRAY_KV_MAX_DEPTH_FORMAT);
            return -1;
        }
        /* a snapshot: a list changed meanwhile cannot pull items from under the encoder */
        PyObject *items = PySequence_Tuple(obj);
        if (items == NULL) return -1;
        int rc = PyList_Append(b->keep, items);
        Py_DECREF(items);
        if (rc < 0) return -1;
        Py_ssize_t n = PyTuple_GET_SIZE(items);
        struct hurray_kv_value *elems = block_new(b, (size_t)n, sizeof *elems);
        if (elems == NULL) return -1;
        for (Py_ssize_t k = 0; k < n; k++)
            if (value_from_object(st, b, key, PyTuple_GET_ITEM(items, k), &elems[k], depth + 1) < 0)
                return -1;
        v->type = HURRAY_KV_LIST;
        v->v.list.items = elems;
        v->v.list.count = (uint64_t)n;
        return 0;
    }
    if (PyTuple_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "kv[%R]: a tuple would read back as a list and not compare equal; pass a "
                     "list",
                     key);
        return -1;
    }
    PyErr_Format(PyExc_TypeError,
                 "kv[%R]: %.100s is not a KV value type (bool, int, float, str, bytes, list)",
                 key, Py_TYPE(obj)->tp_name);
    return -1;
}

int hrpy_kv_from_mapping(hrpy_state *st, PyObject *mapping, struct hrpy_kv_build *b) {
    memset(b, 0, sizeof *b);
    b->keep = PyList_New(0);
    if (b->keep == NULL) return -1;
    if (!PyDict_Check(mapping) && !PyObject_HasAttrString(mapping, "items")) {
        PyErr_Format(PyExc_TypeError, "kv must be a mapping of str to values, not %.100s",
                     Py_TYPE(mapping)->tp_name);
        return -1;
    }
    PyObject *items = PyMapping_Items(mapping);
    if (items == NULL) return -1;
    int rc = PyList_Append(b->keep, items);
    Py_DECREF(items);
    if (rc < 0) return -1;
    Py_ssize_t n = PyList_GET_SIZE(items);
    b->entries = block_new(b, (size_t)n, sizeof *b->entries);
    if (b->entries == NULL) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GET_ITEM(items, i);
        PyObject *key = PyTuple_GET_ITEM(pair, 0), *value = PyTuple_GET_ITEM(pair, 1);
        struct hurray_kv_entry *e = &b->entries[i];
        if (!PyUnicode_Check(key)) {
            PyErr_Format(PyExc_TypeError, "kv: keys must be str, not %.100s",
                         Py_TYPE(key)->tp_name);
            return -1;
        }
        const uint8_t *kd;
        uint64_t kl;
        if (keep_bytes(b, key, 1, &kd, &kl) < 0) return -1;
        if (kl > UINT32_MAX) {
            hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_LIMIT, "kv",
                           "kv: a key of %llu bytes; names are at most 65535",
                           (unsigned long long)kl);
            return -1;
        }
        e->key = (const char *)kd;
        e->key_len = (uint32_t)kl;
        if (value_from_object(st, b, key, value, &e->value, 1) < 0) return -1;
    }
    b->count = (size_t)n;
    return 0;
}

/* ---- reading --------------------------------------------------------------------------- */

static PyObject *value_to_object(hrpy_state *st, const char *key,
                                 const struct hurray_kv_value *v, unsigned depth) {
    switch (v->type) {
    case HURRAY_KV_BOOL: return PyBool_FromLong(v->v.boolean);
    case HURRAY_KV_INT64: return PyLong_FromLongLong(v->v.i64);
    case HURRAY_KV_UINT64: return PyLong_FromUnsignedLongLong(v->v.u64);
    case HURRAY_KV_FLOAT64: return PyFloat_FromDouble(v->v.f64);
    case HURRAY_KV_STRING:
        return PyUnicode_DecodeUTF8((const char *)v->v.bytes.data, (Py_ssize_t)v->v.bytes.len,
                                    "strict");
    case HURRAY_KV_BYTES:
        return PyBytes_FromStringAndSize((const char *)v->v.bytes.data,
                                         (Py_ssize_t)v->v.bytes.len);
    case HURRAY_KV_LIST: {
        if (depth > HURRAY_KV_MAX_DEPTH_FORMAT)
            return hrpy_raise_fmt(st, HRPY_CTX_FILE, HURRAY_E_LIMIT, "kv",
                                  "kv[%s]: lists nest deeper than %u levels", key,
                                  HURRAY_KV_MAX_DEPTH_FORMAT);
        if (v->v.list.count > (uint64_t)PY_SSIZE_T_MAX) return PyErr_NoMemory();
        PyObject *list = PyList_New((Py_ssize_t)v->v.list.count);
        for (uint64_t k = 0; list != NULL && k < v->v.list.count; k++) {
            PyObject *item = value_to_object(st, key, &v->v.list.items[k], depth + 1);
            if (item == NULL) Py_CLEAR(list);
            else PyList_SET_ITEM(list, (Py_ssize_t)k, item);
        }
        return list;
    }
    default:
        /* never a silent hole (kv.md HR-KV-3) */
        return hrpy_raise_fmt(st, HRPY_CTX_FILE, HURRAY_E_UNSUPPORTED, "kv",
                              "kv[%s]: value type %s is not known to this build", key,
                              HRPY_HEX(v->type));
    }
}

int hrpy_kv_entry_into(hrpy_state *st, PyObject *dict, const struct hurray_kv_entry *e) {
    PyObject *key = PyUnicode_DecodeUTF8(e->key, (Py_ssize_t)e->key_len, "strict");
    PyObject *value = key ? value_to_object(st, e->key, &e->value, 1) : NULL;
    int rc = value == NULL ? -1 : PyDict_SetItem(dict, key, value);
    Py_XDECREF(key);
    Py_XDECREF(value);
    return rc;
}

PyObject *hrpy_kv_to_dict(hrpy_state *st, const struct hurray_kv *kv) {
    PyObject *dict = PyDict_New();
    for (size_t i = 0; dict != NULL && kv != NULL && i < kv->count; i++)
        if (hrpy_kv_entry_into(st, dict, &kv->entries[i]) < 0) Py_CLEAR(dict);
    return dict;
}

/* hurray_kv_entry_fn of hrpy_kv_each: takes the GIL back at the first entry (the section is
 * read and validated without it) and keeps it; a Python failure stops the walk. */
int hrpy_kv_each_entry(void *ctx, const struct hurray_kv_entry *entry, size_t index,
                         size_t count) {
    struct hrpy_kv_each *c = ctx;
    (void)index;
    (void)count;
    if (c->save != NULL) {
        PyEval_RestoreThread(c->save);
        c->save = NULL;
    }
    if (c->dict == NULL) c->dict = PyDict_New();
    if (c->dict == NULL || hrpy_kv_entry_into(c->st, c->dict, entry) < 0)
        return HURRAY_E_INTERNAL; /* the Python exception set is the error */
    return HURRAY_OK;
}

PyObject *hrpy_kv_each(hrpy_state *st, struct hurray_file *f, PyObject *path) {
    struct hrpy_kv_each c = {st, NULL, NULL};
    struct hurray_error err;
    hurray_error_clear(&err);
    c.save = PyEval_SaveThread();
    int status = hurray_file_kv_each(f, hrpy_kv_each_entry, &c, &err);
    if (c.save != NULL) PyEval_RestoreThread(c.save); /* no entry was handed over */
    if (status != HURRAY_OK) {
        /* nothing partial: the dict built so far is dropped */
        Py_CLEAR(c.dict);
        if (!PyErr_Occurred()) hrpy_io_raise_file(st, status, &err, path);
        return NULL;
    }
    return c.dict != NULL ? c.dict : PyDict_New();
}
