/* hurray.save, hurray.load, hurray.load_kv (seed § Multi-buffer tensors, § Composites /
 * I/O, § File metadata, § Error Handling; file-container.md, kv.md).
 *
 * The HRRYFILE container is libhurray's: the writer (hurray_file_write_path: validate
 * everything, write beside the path, rename over it) and the validating reader
 * (hurray_file_create_path: the whole file checked before anything is handed out, copy or
 * memory-mapped). This file converts arguments, builds the C item trees
 * (pycomposite.c) and turns loaded items into Tensor / Composite objects that keep the
 * file's image (an owned copy or the mapping) alive.
 *
 * Errors, all through the one table (errors.c):
 *   - save: what the writer refuses about the contents (an invalid name, a duplicate, a
 *     KV value, a buffer not producer_synced) is checked first by hurray_file_encoded_len
 *     and raised in the descriptor context (InvalidDescriptorError, a ValueError; ARGUMENT
 *     ValueError); writing is then the file context (IO -> FileError, errno set).
 *   - load / load_kv: the file context: not found, permission denied, a corrupt
 *     container, a truncated file and an exceeded limit are FileError (errno set when the
 *     system gave one); a newer major version or an unknown KV value type
 *     UnsupportedError. A name not in the file is KeyError.
 * Every call into libhurray that touches the file runs with the GIL released. */
#include "state.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- limits ------------------------------------------------------------------------- */

struct limit_field {
    const char *name;
    size_t offset;
    int is32;
};

#define LIMIT_FIELD(f, w) {#f, offsetof(struct hurray_limits, f), w}
static const struct limit_field limit_fields[] = {
    LIMIT_FIELD(max_descriptor_bytes, 0), LIMIT_FIELD(max_buffer_bytes, 0),
    LIMIT_FIELD(max_rank, 1),             LIMIT_FIELD(max_composite_depth, 1),
    LIMIT_FIELD(max_composite_members, 0), LIMIT_FIELD(max_kv_entries, 0),
    LIMIT_FIELD(max_kv_bytes, 0),         LIMIT_FIELD(max_name_bytes, 1),
    LIMIT_FIELD(max_file_tensors, 0),
};
#undef LIMIT_FIELD

int hrpy_limits_from_args(PyObject *const *vals, const char *const *names, Py_ssize_t n,
                          struct hurray_limits *out) {
    hurray_limits_default(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (vals[i] == NULL || vals[i] == Py_None) continue;
        const struct limit_field *f = NULL;
        for (size_t k = 0; k < sizeof limit_fields / sizeof limit_fields[0]; k++)
            if (strcmp(limit_fields[k].name, names[i]) == 0) f = &limit_fields[k];
        if (f == NULL) {
            PyErr_Format(PyExc_SystemError, "no limit named %s", names[i]);
            return -1;
        }
        uint64_t v = 0;
        if (hrpy_as_uint_max(vals[i], names[i], f->is32 ? UINT32_MAX : UINT64_MAX, &v) < 0)
            return -1;
        if (f->is32)
            *(uint32_t *)(void *)((char *)out + f->offset) = (uint32_t)v;
        else
            *(uint64_t *)(void *)((char *)out + f->offset) = v;
    }
    hurray_limits_clamp(out); /* a limit above the format's maximum means the maximum */
    return 0;
}

/* ---- errors --------------------------------------------------------------------------- */

/* Raises (status, file context) and, for IO, sets .errno from the "(errno N)" the C
 * library puts in its message. */
static PyObject *raise_file(hrpy_state *st, int status, const struct hurray_error *err) {
    hrpy_raise_status(st, HRPY_CTX_FILE, status, err);
    if (status != HURRAY_E_IO || err == NULL) return NULL;
    const char *p = strstr(err->message, "(errno ");
    if (p == NULL) return NULL;
    long e = strtol(p + 7, NULL, 10);
    if (e > 0 && e < INT_MAX) hrpy_set_errno((int)e);
    return NULL;
}

/* path: str, bytes or os.PathLike -> a new bytes object (file system encoding). */
static PyObject *path_arg(PyObject *obj, const char *who) {
    PyObject *out = NULL;
    if (!PyUnicode_Check(obj) && !PyBytes_Check(obj) &&
        !PyObject_HasAttrString(obj, "__fspath__")) {
        PyErr_Format(PyExc_TypeError, "%s: path must be str, bytes or os.PathLike, not %.100s",
                     who, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (!PyUnicode_FSConverter(obj, &out)) return NULL;
    return out;
}

/* ---- save ----------------------------------------------------------------------------- */

/* save(path, tensors, kv=None) */
static PyObject *io_save(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
    static const char *const names[] = {"path", "tensors", "kv"};
    PyObject *a[3];
    PyObject *path = NULL, *items = NULL, *result = NULL;
    struct hurray_file_entry *entries = NULL;
    struct hurray_item **roots = NULL;
    struct hrpy_kv_build kv;
    Py_ssize_t n = 0;
    struct hurray_error err;
    hurray_error_clear(&err);
    memset(&kv, 0, sizeof kv);
    hrpy_state *st = hrpy_state_from_module(module);
    if (hrpy_bind("save", args, nargs, kwnames, names, 3, 3, 2, a) < 0) return NULL;
    path = path_arg(a[0], "save");
    if (path == NULL) goto done;
    if (!PyDict_Check(a[1]) && !PyObject_HasAttrString(a[1], "items")) {
        PyErr_Format(PyExc_TypeError,
                     "save: tensors must be a mapping of names to hurray.Tensor or "
                     "hurray.Composite, not %.100s",
                     Py_TYPE(a[1])->tp_name);
        goto done;
    }
    items = PyMapping_Items(a[1]); /* holds every name and object for the call */
    if (items == NULL) goto done;
    n = PyList_GET_SIZE(items);
    entries = PyMem_Calloc(n ? (size_t)n : 1, sizeof *entries);
    roots = PyMem_Calloc(n ? (size_t)n : 1, sizeof *roots);
    if (entries == NULL || roots == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GET_ITEM(items, i);
        PyObject *name = PyTuple_GET_ITEM(pair, 0), *obj = PyTuple_GET_ITEM(pair, 1);
        if (!PyUnicode_Check(name)) {
            PyErr_Format(PyExc_TypeError, "save: tensor names must be str, not %.100s",
                         Py_TYPE(name)->tp_name);
            goto done;
        }
        Py_ssize_t len;
        const char *utf8 = PyUnicode_AsUTF8AndSize(name, &len);
        if (utf8 == NULL) goto done;
        if (strlen(utf8) != (size_t)len) {
            /* the C API takes names as C strings; kv.md HR-KV-6 forbids U+0000 anyway */
            hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_CONSTRAINT, "name",
                           "name: %R contains U+0000", name);
            goto done;
        }
        char who[96];
        PyOS_snprintf(who, sizeof who, "save: tensors[%.60s]", utf8);
        if (hrpy_item_build(st, obj, HRPY_ITEM_FILE, who, &roots[i]) < 0) goto done;
        entries[i].name = utf8;
        entries[i].item = roots[i];
    }
    if (a[2] != NULL && a[2] != Py_None && hrpy_kv_from_mapping(st, a[2], &kv) < 0) goto done;
    struct hurray_file_contents contents = {entries, (size_t)n, kv.entries, kv.count};
    uint64_t total = 0;
    int status = hurray_file_encoded_len(&contents, NULL, &total, &err);
    if (status != HURRAY_OK) {
        hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err); /* the caller's contents */
        goto done;
    }
    const char *cpath = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS
    status = hurray_file_write_path(cpath, &contents, NULL, &err);
    Py_END_ALLOW_THREADS
    if (status != HURRAY_OK) {
        raise_file(st, status, &err);
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    for (Py_ssize_t i = 0; roots != NULL && i < n; i++) hrpy_item_release(roots[i]);
    PyMem_Free(roots);
    PyMem_Free(entries);
    hrpy_kv_build_release(&kv);
    Py_XDECREF(items);
    Py_XDECREF(path);
    return result;
}

/* ---- load ----------------------------------------------------------------------------- */

static const char *const load_limit_names[] = {
    "max_descriptor_bytes", "max_buffer_bytes", "max_rank",       "max_composite_depth",
    "max_composite_members", "max_kv_entries",  "max_kv_bytes",   "max_name_bytes",
    "max_file_tensors",
};
#define N_LOAD_LIMITS 9

/* Opens and validates `path` (GIL released). */
static struct hurray_file *open_file(hrpy_state *st, PyObject *path, int mode,
                                     const struct hurray_limits *limits) {
    struct hurray_file_options opt = {limits, &hrpy_raw_allocator, mode};
    struct hurray_file *f = NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    const char *cpath = PyBytes_AS_STRING(path);
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = hurray_file_create_path(cpath, &opt, &f, &err);
    Py_END_ALLOW_THREADS
    if (status != HURRAY_OK) {
        raise_file(st, status, &err);
        return NULL;
    }
    return f;
}

/* Entry i as a Tensor or Composite holding the file's image. */
static PyObject *load_entry(hrpy_state *st, struct hurray_file *f, size_t i, int readonly) {
    struct hurray_item *item = NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_file_load_item(f, i, &item, &err);
    if (status != HURRAY_OK) return raise_file(st, status, &err);
    PyObject *owner = hrpy_item_memory_new(st, item); /* owns item, also on failure */
    if (owner == NULL) return NULL;
    PyObject *obj = hrpy_item_to_object(st, item, owner, readonly);
    Py_DECREF(owner);
    return obj;
}

/* load(path, *names, mmap=False, max_descriptor_bytes=None, ...) */
static PyObject *io_load(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
    static const char *const names[] = {"mmap",
                                        "max_descriptor_bytes",
                                        "max_buffer_bytes",
                                        "max_rank",
                                        "max_composite_depth",
                                        "max_composite_members",
                                        "max_kv_entries",
                                        "max_kv_bytes",
                                        "max_name_bytes",
                                        "max_file_tensors"};
    PyObject *kw[1 + N_LOAD_LIMITS];
    PyObject *path = NULL, *result = NULL, *obj = NULL;
    struct hurray_file *f = NULL;
    struct hurray_limits limits;
    hrpy_state *st = hrpy_state_from_module(module);
    nargs = PyVectorcall_NARGS(nargs);
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "load() missing required argument 'path'");
        return NULL;
    }
    if (hrpy_bind("load", args + nargs, 0, kwnames, names, 1 + N_LOAD_LIMITS, 0, 0, kw) < 0)
        return NULL;
    if (hrpy_limits_from_args(kw + 1, load_limit_names, N_LOAD_LIMITS, &limits) < 0) return NULL;
    int mmap = 0;
    if (kw[0] != NULL) {
        mmap = PyObject_IsTrue(kw[0]);
        if (mmap < 0) return NULL;
    }
    for (Py_ssize_t k = 1; k < nargs; k++)
        if (!PyUnicode_Check(args[k]))
            return PyErr_Format(PyExc_TypeError, "load: names must be str, not %.100s",
                                Py_TYPE(args[k])->tp_name);
    path = path_arg(args[0], "load");
    if (path == NULL) return NULL;
    f = open_file(st, path, mmap ? HURRAY_FILE_MMAP : HURRAY_FILE_COPY, &limits);
    if (f == NULL) goto done;
    result = PyDict_New();
    if (result == NULL) goto done;
    if (nargs > 1) {
        /* members by explicit name too (seed § Composites / I/O) */
        for (Py_ssize_t k = 1; k < nargs; k++) {
            Py_ssize_t len;
            const char *name = PyUnicode_AsUTF8AndSize(args[k], &len);
            size_t i = 0;
            if (name == NULL) goto fail;
            if (strlen(name) != (size_t)len || !hurray_file_find(f, name, &i)) {
                PyErr_SetObject(PyExc_KeyError, args[k]);
                goto fail;
            }
            obj = load_entry(st, f, i, mmap);
            if (obj == NULL || PyDict_SetItem(result, args[k], obj) < 0) goto fail;
            Py_CLEAR(obj);
        }
    } else {
        /* the top-level entries: a composite under its head's name, not its members */
        size_t top = hurray_file_top_level_count(f);
        for (size_t k = 0; k < top; k++) {
            size_t i = hurray_file_top_level_entry(f, k);
            const char *name = hurray_file_entry_name(f, i);
            PyObject *key = name ? PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "strict")
                                 : NULL;
            if (key == NULL) goto fail;
            obj = load_entry(st, f, i, mmap);
            int rc = obj == NULL ? -1 : PyDict_SetItem(result, key, obj);
            Py_DECREF(key);
            if (rc < 0) goto fail;
            Py_CLEAR(obj);
        }
    }
    goto done;
fail:
    Py_CLEAR(result);
    Py_CLEAR(obj);
done:
    hurray_file_destroy(f); /* loaded items keep the image */
    Py_XDECREF(path);
    return result;
}

/* load_kv(path, *, max_...=None) */
static PyObject *io_load_kv(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    static const char *const names[] = {"path",
                                        "max_descriptor_bytes",
                                        "max_buffer_bytes",
                                        "max_rank",
                                        "max_composite_depth",
                                        "max_composite_members",
                                        "max_kv_entries",
                                        "max_kv_bytes",
                                        "max_name_bytes",
                                        "max_file_tensors"};
    PyObject *a[1 + N_LOAD_LIMITS];
    struct hurray_limits limits;
    hrpy_state *st = hrpy_state_from_module(module);
    if (hrpy_bind("load_kv", args, nargs, kwnames, names, 1 + N_LOAD_LIMITS, 1, 1, a) < 0)
        return NULL;
    if (hrpy_limits_from_args(a + 1, load_limit_names, N_LOAD_LIMITS, &limits) < 0) return NULL;
    PyObject *path = path_arg(a[0], "load_kv");
    if (path == NULL) return NULL;
    /* mapped: the metadata is copied out and validated, the data pages stay untouched */
    struct hurray_file *f = open_file(st, path, HURRAY_FILE_MMAP, &limits);
    Py_DECREF(path);
    if (f == NULL) return NULL;
    PyObject *result = hrpy_kv_to_dict(st, hurray_file_kv(f));
    hurray_file_destroy(f);
    return result;
}

/* _kv_decode(data, *, max_kv_entries=None, max_kv_bytes=None, max_name_bytes=None,
 *            max_composite_depth=None): a standalone KV section (kv.md, as the corpus holds
 * them) to a dict, through the same conversion as load_kv. Errors in the file context. */
static PyObject *io_kv_decode(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
    static const char *const names[] = {"data", "max_kv_entries", "max_kv_bytes",
                                        "max_name_bytes", "max_composite_depth"};
    PyObject *a[5];
    struct hurray_limits limits;
    hrpy_state *st = hrpy_state_from_module(module);
    if (hrpy_bind("_kv_decode", args, nargs, kwnames, names, 5, 1, 1, a) < 0) return NULL;
    if (hrpy_limits_from_args(a + 1, names + 1, 4, &limits) < 0) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(a[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    struct hurray_decode_options opt = {&limits, &hrpy_raw_allocator};
    struct hurray_kv kv;
    struct hurray_error err;
    hurray_error_clear(&err);
    hurray_kv_init(&kv);
    int status = hurray_kv_decode((const uint8_t *)view.buf, (size_t)view.len, &opt, &kv, &err);
    PyBuffer_Release(&view);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_FILE, status, &err);
    PyObject *result = hrpy_kv_to_dict(st, &kv);
    hurray_kv_reset(&kv);
    return result;
}

static PyMethodDef io_methods[] = {
    {"_kv_decode", (PyCFunction)(void (*)(void))io_kv_decode, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("_kv_decode(data, *, max_kv_entries=None, max_kv_bytes=None,\n"
               "           max_name_bytes=None, max_composite_depth=None) -> dict\n--\n\n"
               "A standalone KV section as load_kv returns it. For the conformance corpus.")},
    {"save", (PyCFunction)(void (*)(void))io_save, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("save(path, tensors, kv=None) -> None\n--\n\n"
               "Writes an HRRYFILE container: `tensors` maps names to hurray.Tensor or\n"
               "hurray.Composite (every buffer of every tensor; a composite's members are\n"
               "named '{head}.{index}' by the container), `kv` maps str keys to bool, int\n"
               "(int64), float, str, bytes or lists of these. The file is written beside\n"
               "`path` and renamed over it. Contents the format refuses raise\n"
               "InvalidDescriptorError (nothing is written); I/O failures FileError.\n"
               "CPU tensors only (UnsupportedError otherwise).")},
    {"load", (PyCFunction)(void (*)(void))io_load, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("load(path, *names, mmap=False, max_descriptor_bytes=None, max_buffer_bytes=None,\n"
               "     max_rank=None, max_composite_depth=None, max_composite_members=None,\n"
               "     max_kv_entries=None, max_kv_bytes=None, max_name_bytes=None,\n"
               "     max_file_tensors=None) -> dict\n--\n\n"
               "Validates the whole file, then returns {name: Tensor | Composite}: every\n"
               "top-level entry (a composite under its head's name, its members not\n"
               "repeated), or exactly the entries named (members included; KeyError for a\n"
               "name not in the file). mmap=True maps the file read-only and the tensors\n"
               "borrow from the mapping (read-only buffers), which lives as long as any of\n"
               "them; otherwise the file is read into memory the tensors share. Limits\n"
               "default to the format's defaults. FileError for a missing, unreadable,\n"
               "corrupt or truncated file.")},
    {"load_kv", (PyCFunction)(void (*)(void))io_load_kv, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("load_kv(path, *, max_...=None) -> dict\n--\n\n"
               "The file's key-value section as a dict (empty when it has none): the exact\n"
               "inverse of save(..., kv=...). int64 and uint64 values read as int; a value\n"
               "type this build does not know raises UnsupportedError.")},
    {NULL, NULL, 0, NULL},
};

int hrpy_io_init(PyObject *module, hrpy_state *st) {
    (void)st;
    return PyModule_AddFunctions(module, io_methods);
}
