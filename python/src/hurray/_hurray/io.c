/* hurray.save, hurray.load, hurray.load_kv (requirements § Multi-buffer tensors, § Composites /
 * I/O, § File metadata, § Error Handling; file-container.md, kv.md).
 *
 * The HRRYFILE container is libhurray's: the writer (hurray_file_write_path: validate
 * everything, write beside the path in a few vectored writes, flush, rename over it) and
 * the index-first reader (file-container.md § Reading): load opens the index part (header,
 * index, the data region's gaps: validated whole) and then reads, or maps copy-on-write,
 * only the byte ranges of the entries it returns; load_kv opens the KV part only. This
 * file converts arguments, builds the C item trees (pycomposite.c) and turns loaded items
 * into Tensor / Composite objects, each holding only its own bytes (a capsule over the
 * item's block), so the result pins nothing else.
 *
 * Errors, all through the one table (errors.c):
 *   - save: what the writer refuses about the contents (an invalid name, a duplicate, a
 *     KV value, a buffer not producer_synced) is checked first by hurray_file_encoded_len
 *     and raised in the descriptor context (InvalidDescriptorError, a ValueError; ARGUMENT
 *     ValueError); writing is then the file context (IO -> FileError).
 *   - load / load_kv: the file context: not found, permission denied, not a regular file
 *     (a directory, FIFO, socket or device, refused before anything can block), a corrupt
 *     container, a truncated file (also one truncated while it is read) and an exceeded
 *     limit are FileError; a newer major version or an unknown KV value type
 *     UnsupportedError. A name not in the file is KeyError.
 *   - a FileError from a failed system call is an OSError with errno, strerror and
 *     filename set (raise_file).
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

/* Raises (status, file context). When a system call failed (IO with err->sys_errno), the
 * FileError is an OSError with errno = the system's number, strerror = libhurray's message
 * (what failed, on which path, the system's words, or what kind of special file was
 * refused) and filename = the path as str (what Python's own open() reports). */
static PyObject *raise_file(hrpy_state *st, int status, const struct hurray_error *err,
                            PyObject *path) {
    hrpy_raise_status(st, HRPY_CTX_FILE, status, err);
    if (err == NULL || err->code != status || err->sys_errno <= 0) return NULL;
    PyObject *exc = hrpy_take_exception();
    PyObject *num = PyLong_FromLong(err->sys_errno);
    PyObject *msg = PyUnicode_DecodeUTF8(err->message, (Py_ssize_t)strlen(err->message),
                                         "replace");
    PyObject *name = path == NULL ? Py_NewRef(Py_None)
                                  : PyUnicode_DecodeFSDefaultAndSize(PyBytes_AS_STRING(path),
                                                                     PyBytes_GET_SIZE(path));
    if (exc == NULL || num == NULL || msg == NULL || name == NULL ||
        PyObject_SetAttrString(exc, "errno", num) < 0 ||
        PyObject_SetAttrString(exc, "strerror", msg) < 0 ||
        PyObject_SetAttrString(exc, "filename", name) < 0)
        PyErr_Clear(); /* the FileError itself stands */
    Py_XDECREF(num);
    Py_XDECREF(msg);
    Py_XDECREF(name);
    hrpy_restore_exception(exc);
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
        raise_file(st, status, &err, path);
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

/* Opens `path` and validates the parts asked for (GIL released): the header, the index
 * and the data region's gaps for load, the KV section for load_kv (file-container.md
 * HR-FILE-9). Nothing else of the file is read. */
static struct hurray_file *open_file(hrpy_state *st, PyObject *path, int mode, int parts,
                                     const struct hurray_limits *limits) {
    struct hurray_file_options opt = {limits, &hrpy_raw_allocator, mode, parts};
    struct hurray_file *f = NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    const char *cpath = PyBytes_AS_STRING(path);
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = hurray_file_create_path(cpath, &opt, &f, &err);
    Py_END_ALLOW_THREADS
    if (status != HURRAY_OK) {
        raise_file(st, status, &err, path);
        return NULL;
    }
    return f;
}

/* ---- a loaded item as an object -----------------------------------------------------------
 * Each loaded entry is its own C item tree: its descriptors (compact records) and its bytes
 * (its own copy, or its share of a copy-on-write mapping), released together by
 * hurray_item_destroy. An ItemMemory owns that tree; the Tensor / Composite objects over it
 * share its descriptor records instead of copying them (one record per tensor) and keep it
 * alive. So the result pins its own entry's bytes and records and nothing else (HR-FILE-8,
 * HR-FILE-13). Loaded bytes are writable in both modes: copies are the caller's, mappings
 * are copy-on-write (HR-FILE-11). */

/* Takes the item tree (owned by the ItemMemory, or freed on failure). */
static PyObject *item_object(hrpy_state *st, struct hurray_item *item) {
    PyObject *owner = hrpy_item_memory_new(st, item); /* owns item, also on failure */
    if (owner == NULL) return NULL;
    PyObject *obj = hrpy_item_to_object(st, item, owner, 0);
    Py_DECREF(owner);
    return obj;
}

/* Entries loaded per call into libhurray: the C item trees of one batch exist at once,
 * then become objects and are freed, so they never add up over a large file. */
#define LOAD_BATCH 1024u

/* Loads entries[0..n) (GIL released while reading) into result[keys[k]]. */
static int load_into(hrpy_state *st, struct hurray_file *f, PyObject *path,
                     const size_t *entries, PyObject *const *keys, size_t n, PyObject *result) {
    struct hurray_item *items[LOAD_BATCH];
    struct hurray_error err;
    for (size_t at = 0; at < n; at += LOAD_BATCH) {
        size_t m = n - at < LOAD_BATCH ? n - at : LOAD_BATCH;
        int status, rc = 0;
        hurray_error_clear(&err);
        Py_BEGIN_ALLOW_THREADS
        status = hurray_file_load_items(f, entries + at, m, items, &err);
        Py_END_ALLOW_THREADS
        if (status != HURRAY_OK) {
            raise_file(st, status, &err, path);
            return -1;
        }
        for (size_t k = 0; k < m; k++) {
            PyObject *obj = NULL;
            if (rc == 0) obj = item_object(st, items[k]); /* frees the item */
            else hurray_item_destroy(items[k]);
            if (rc == 0 && (obj == NULL || PyDict_SetItem(result, keys[at + k], obj) < 0)) rc = -1;
            Py_XDECREF(obj);
        }
        if (rc < 0) return -1;
    }
    return 0;
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
    PyObject *path = NULL, *result = NULL, **keys = NULL;
    size_t *entries = NULL, n = 0;
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
    f = open_file(st, path, mmap ? HURRAY_FILE_MMAP : HURRAY_FILE_COPY, HURRAY_FILE_PARTS_INDEX,
                  &limits);
    if (f == NULL) goto done;
    /* what to load: exactly the names given (members by explicit name too, requirements
     * § Composites / I/O), else the top-level entries (a composite under its head's name,
     * not its members) */
    n = nargs > 1 ? (size_t)(nargs - 1) : hurray_file_top_level_count(f);
    entries = PyMem_Calloc(n ? n : 1, sizeof *entries);
    keys = PyMem_Calloc(n ? n : 1, sizeof *keys);
    if (entries == NULL || keys == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        if (nargs > 1) {
            Py_ssize_t len;
            const char *name = PyUnicode_AsUTF8AndSize(args[k + 1], &len);
            if (name == NULL) goto done;
            if (strlen(name) != (size_t)len || !hurray_file_find(f, name, &entries[k])) {
                PyErr_SetObject(PyExc_KeyError, args[k + 1]);
                goto done;
            }
            keys[k] = Py_NewRef(args[k + 1]);
        } else {
            entries[k] = hurray_file_top_level_entry(f, k);
            const char *name = hurray_file_entry_name(f, entries[k]);
            keys[k] = name ? PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "strict")
                           : NULL;
            if (keys[k] == NULL) goto done;
        }
    }
    result = PyDict_New();
    if (result != NULL && load_into(st, f, path, entries, keys, n, result) < 0) Py_CLEAR(result);
done:
    hurray_file_destroy(f); /* loaded items keep their own bytes */
    for (size_t k = 0; keys != NULL && k < n; k++) Py_XDECREF(keys[k]);
    PyMem_Free(keys);
    PyMem_Free(entries);
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
    /* the header and the KV section only: the index and the data are not read */
    struct hurray_file *f = open_file(st, path, HURRAY_FILE_COPY, HURRAY_FILE_PARTS_KV, &limits);
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
     PyDoc_STR("save($module, /, path, tensors, kv=None)\n--\n\n"
               "Writes an HRRYFILE container: `tensors` maps names to hurray.Tensor or\n"
               "hurray.Composite (every buffer of every tensor; a composite's members are\n"
               "named '{head}.{index}' by the container), `kv` maps str keys to bool, int\n"
               "(int64), float, str, bytes or lists of these. The file is written beside\n"
               "`path` (with the mode of the file it replaces; through a symbolic link, its\n"
               "target), flushed and renamed over it. Contents the format refuses raise\n"
               "InvalidDescriptorError (nothing is written); I/O failures FileError.\n"
               "CPU tensors only (UnsupportedError otherwise).")},
    {"load", (PyCFunction)(void (*)(void))io_load, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("load($module, path, /, *names, mmap=False, max_descriptor_bytes=None,\n"
               "     max_buffer_bytes=None,\n"
               "     max_rank=None, max_composite_depth=None, max_composite_members=None,\n"
               "     max_kv_entries=None, max_kv_bytes=None, max_name_bytes=None,\n"
               "     max_file_tensors=None)\n--\n\n"
               "Validates the file's header and index, then returns {name: Tensor |\n"
               "Composite}: every top-level entry (a composite under its head's name, its\n"
               "members not repeated), or exactly the entries named (members included;\n"
               "KeyError for a name not in the file), reading only their bytes. Each\n"
               "returned item holds its own bytes and nothing else. mmap=True maps them\n"
               "copy-on-write instead of copying: writable, and a write never reaches the\n"
               "file. Limits default to the format's defaults (max_file_tensors bounds the\n"
               "index's entries). FileError for a missing, unreadable, corrupt or truncated\n"
               "file, or one that is not a regular file (errno set when the system gave one).")},
    {"load_kv", (PyCFunction)(void (*)(void))io_load_kv, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("load_kv($module, /, path, *, max_descriptor_bytes=None, max_buffer_bytes=None,\n"
               "        max_rank=None, max_composite_depth=None, max_composite_members=None,\n"
               "        max_kv_entries=None, max_kv_bytes=None, max_name_bytes=None,\n"
               "        max_file_tensors=None)\n--\n\n"
               "The file's key-value section as a dict (empty when it has none): the exact\n"
               "inverse of save(..., kv=...). Reads and validates only the header and the KV\n"
               "section. int64 and uint64 values read as int; a value type this build does\n"
               "not know raises UnsupportedError.")},
    {NULL, NULL, 0, NULL},
};

int hrpy_io_init(PyObject *module, hrpy_state *st) {
    (void)st;
    return PyModule_AddFunctions(module, io_methods);
}
