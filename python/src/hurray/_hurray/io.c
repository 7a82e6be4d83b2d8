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
    LIMIT_FIELD(max_file_tensors, 0),     LIMIT_FIELD(max_alignment_slack, 0),
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
    /* a file's contents where its path belongs: bytes holding a NUL (never a path) or
     * starting with the container's magic, or any other bytes-like object */
    int contents = PyBytes_Check(obj) &&
                   (memchr(PyBytes_AS_STRING(obj), 0, (size_t)PyBytes_GET_SIZE(obj)) != NULL ||
                    (PyBytes_GET_SIZE(obj) >= 8 &&
                     memcmp(PyBytes_AS_STRING(obj), HURRAY_FILE_MAGIC, 8) == 0));
    if (contents || (!PyUnicode_Check(obj) && !PyBytes_Check(obj) &&
                     !PyObject_HasAttrString(obj, "__fspath__"))) {
        int bytes_like = contents || PyObject_CheckBuffer(obj);
        PyErr_Format(PyExc_TypeError,
                     "%s: path must be str, bytes or os.PathLike, not %s%.100s%s", who,
                     contents ? "the file's contents (" : "", Py_TYPE(obj)->tp_name,
                     contents     ? "); for a file in memory use hurray.load_bytes(data)"
                     : bytes_like ? " (for a file in memory use hurray.load_bytes(data))"
                                  : "");
        return NULL;
    }
    if (!PyUnicode_FSConverter(obj, &out)) return NULL;
    return out;
}

/* ---- save ----------------------------------------------------------------------------- */

/* The limit keywords of save, save_bytes, load, load_bytes, load_kv: the fields of struct
 * hurray_limits (the reader's one table of limits, hurray_limits_default). */
const char *const hrpy_file_limit_names[HRPY_N_FILE_LIMITS] = {HRPY_FILE_LIMIT_KEYWORDS};
#define io_limit_names hrpy_file_limit_names
#define N_IO_LIMITS HRPY_N_FILE_LIMITS


/* obj.<attr> as a truth value; -1 on error. */
static int attr_true(PyObject *obj, const char *attr) {
    PyObject *v = PyObject_GetAttrString(obj, attr);
    if (v == NULL) return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

/* A torch.Tensor as save stores it: detached, on the host, and compact (a non-contiguous
 * view is gathered into a contiguous copy of its own elements, never its whole storage),
 * then ingested by from_torch under its copy rules. */
static PyObject *save_torch(PyObject *module, PyObject *x) {
    PyObject *t = Py_NewRef(x), *r = NULL;
    int grad = attr_true(t, "requires_grad");
    if (grad > 0) Py_SETREF(t, PyObject_CallMethod(t, "detach", NULL));
    if (grad < 0 || t == NULL) goto done;
    int cpu = attr_true(t, "is_cpu");
    if (cpu == 0) Py_SETREF(t, PyObject_CallMethod(t, "cpu", NULL));
    if (cpu < 0 || t == NULL) goto done;
    PyObject *c = PyObject_CallMethod(t, "is_contiguous", NULL);
    int contiguous = c == NULL ? -1 : PyObject_IsTrue(c);
    Py_XDECREF(c);
    if (contiguous == 0) Py_SETREF(t, PyObject_CallMethod(t, "contiguous", NULL));
    if (contiguous < 0 || t == NULL) goto done;
    PyObject *f = PyObject_GetAttrString(module, "from_torch");
    if (f != NULL) r = PyObject_CallOneArg(f, t);
    Py_XDECREF(f);
done:
    Py_XDECREF(t);
    return r;
}

/* What save stores for one value (a new reference): a hurray.Tensor or Composite as it
 * is; a numpy.ndarray through hurray._numpy._save_view (borrowed when contiguous, whatever
 * its address: the writer places the bytes itself; else gathered compactly), a
 * torch.Tensor through save_torch. NumPy and PyTorch are recognised only when already
 * imported (an instance cannot exist otherwise), so save imports neither. The one
 * conversion of save and StreamWriter.write (pystream.c). */
PyObject *hrpy_save_value(hrpy_state *st, PyObject *module, PyObject *obj, const char *who) {
    if (hrpy_tensor_c(st, obj, NULL) != NULL || PyObject_TypeCheck(obj, st->Composite_Type))
        return Py_NewRef(obj);
    int is = hrpy_is_ndarray(st, obj);
    if (is < 0) return NULL;
    if (is) return hrpy_bridge_save_view(st, obj);
    is = hrpy_instance_of(obj, "torch", "Tensor");
    if (is < 0) return NULL;
    if (is) return save_torch(module, obj);
    PyObject *tn = hrpy_type_name(obj);
    if (tn != NULL)
        PyErr_Format(PyExc_TypeError,
                     "%s: expected a hurray.Tensor, hurray.Composite, numpy.ndarray or "
                     "torch.Tensor, not %U",
                     who, tn);
    Py_XDECREF(tn);
    return NULL;
}

/* The item of an ndarray that _save_view would borrow as it is (contiguous, little-endian, a
 * dtype hurray has, not sub-byte): built straight from hurray._numpy's plan, with no Tensor in
 * between and nothing validated before the writer's one validation of every entry (under the
 * reader's limits save passes, which also proves the format's rules: file-container.md
 * HR-FILE-15), whose refusal names the entry. The file's bytes are those of _save_view's
 * tensor (test_save_values.py, the plan-path tests). 1 built, 0 not an array this covers
 * (every other value and array takes hrpy_save_value, unchanged), -1 error. */
static int save_plan_item(hrpy_state *st, PyObject *obj, struct hurray_item **out) {
    int is = hrpy_is_ndarray(st, obj);
    if (is <= 0) return is;
    struct hrpy_save_plan plan;
    int r = hrpy_bridge_save_plan(st, obj, &plan);
    if (r <= 0) return r;
    return hrpy_item_from_save_plan(&plan, out) < 0 ? -1 : 1;
}

/* One save's C view of its arguments: entries over item trees built from the values (kept
 * alive in `values`), the KV map, and the reader's limits the contents must fit. */
struct save_job {
    PyObject *items;  /* a dict copy of the mapping: holds every name and value */
    PyObject *values; /* list: the Tensor / Composite stored for each entry, or the ndarray
                         whose bytes its plan's item borrows (save_plan_item) */
    struct hurray_file_entry *entries;
    struct hurray_item **roots;
    Py_ssize_t n;
    struct hrpy_kv_build kv;
    struct hurray_limits limits;
    struct hurray_file_contents contents;
};

static void save_job_release(struct save_job *j) {
    for (Py_ssize_t i = 0; j->roots != NULL && i < j->n; i++) hrpy_item_release(j->roots[i]);
    PyMem_Free(j->roots);
    PyMem_Free(j->entries);
    hrpy_kv_build_release(&j->kv);
    Py_XDECREF(j->items);
    Py_XDECREF(j->values);
}

/* Prefetch distances, in entries: the objects themselves, then (once their headers are in)
 * what a plan reads behind them. */
enum { SAVE_PREFETCH_OBJECTS = 16, SAVE_PREFETCH_SHAPES = 8 };

/* Each (name, value) of pairs[0 .. 2n) into j's entries and items, in order. */
static int save_job_entries(hrpy_state *st, PyObject *module, const char *fname,
                            struct save_job *j, PyObject *const *pairs, Py_ssize_t n) {
    size_t flen = strlen(fname);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = pairs[2 * i], *obj = pairs[2 * i + 1];
        if (i + SAVE_PREFETCH_OBJECTS < n) {
            HRPY_PREFETCH(pairs[2 * (i + SAVE_PREFETCH_OBJECTS)]);
            HRPY_PREFETCH(pairs[2 * (i + SAVE_PREFETCH_OBJECTS) + 1]);
        }
        if (i + SAVE_PREFETCH_SHAPES < n)
            hrpy_bridge_save_plan_prefetch(st, pairs[2 * (i + SAVE_PREFETCH_SHAPES) + 1]);
        if (!PyUnicode_Check(name)) {
            PyObject *tn = hrpy_type_name(name);
            if (tn != NULL)
                PyErr_Format(PyExc_TypeError, "%s: tensor names must be str, not %U", fname, tn);
            Py_XDECREF(tn);
            return -1;
        }
        Py_ssize_t len;
        const char *utf8 = PyUnicode_AsUTF8AndSize(name, &len);
        if (utf8 == NULL) return -1;
        if (strlen(utf8) != (size_t)len) {
            /* the C API takes names as C strings; kv.md HR-KV-6 forbids U+0000 anyway */
            hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_CONSTRAINT, "name",
                           "name: %R contains U+0000", name);
            return -1;
        }
        int fast = save_plan_item(st, obj, &j->roots[i]);
        if (fast < 0) return -1;
        if (fast) {
            /* the array's bytes, borrowed; the writer's refusals name the entry */
            PyList_SET_ITEM(j->values, i, Py_NewRef(obj));
        } else {
            /* "<fname>: tensors[<name, at most 60 bytes>]" for messages, without a printf
             * per entry (this loop runs once per tensor saved) */
            char who[96];
            size_t nl = (size_t)len < 60 ? (size_t)len : 60, at = 0;
            memcpy(who, fname, flen);
            at = flen;
            memcpy(who + at, ": tensors[", 10);
            at += 10;
            memcpy(who + at, utf8, nl);
            at += nl;
            who[at++] = ']';
            who[at] = 0;
            PyObject *value = hrpy_save_value(st, module, obj, who);
            if (value == NULL) return -1;
            PyList_SET_ITEM(j->values, i, value);
            if (hrpy_item_build(st, value, HRPY_ITEM_FILE, who, &j->roots[i]) < 0) return -1;
        }
        j->entries[i].name = utf8;
        j->entries[i].item = j->roots[i];
    }
    return 0;
}

/* Builds the job. With `total`, also checks the contents exactly as the writer will
 * (hurray_file_encoded_len: the format, and a reader's limits, HR-FILE-15), raising in the
 * descriptor context, and *total receives the file's length; without, the writer's own
 * planning (before it touches the path) does the same checks once. */
static int save_job_make(hrpy_state *st, PyObject *module, const char *fname, PyObject *tensors,
                         PyObject *kv, PyObject *const *limit_vals, struct save_job *j,
                         uint64_t *total) {
    struct hurray_error err;
    hurray_error_clear(&err);
    memset(j, 0, sizeof *j);
    if (hrpy_limits_from_args(limit_vals, io_limit_names, N_IO_LIMITS, &j->limits) < 0) return -1;
    if (!PyDict_Check(tensors) && !PyObject_HasAttrString(tensors, "items")) {
        PyObject *tn = hrpy_type_name(tensors);
        if (tn != NULL)
            PyErr_Format(PyExc_TypeError,
                         "%s: tensors must be a mapping of names to hurray.Tensor, "
                         "hurray.Composite, numpy.ndarray or torch.Tensor, not %U",
                         fname, tn);
        Py_XDECREF(tn);
        return -1;
    }
    /* one shallow copy (no per-entry tuples): the names and values stay alive, and in
     * order, while the write runs without the GIL, whatever happens to `tensors` */
    j->items = PyDict_New();
    if (j->items == NULL || PyDict_Update(j->items, tensors) < 0) return -1;
    j->n = PyDict_GET_SIZE(j->items);
    j->values = PyList_New(j->n);
    j->entries = PyMem_Calloc(j->n ? (size_t)j->n : 1, sizeof *j->entries);
    j->roots = PyMem_Calloc(j->n ? (size_t)j->n : 1, sizeof *j->roots);
    if (j->values == NULL) return -1;
    if (j->entries == NULL || j->roots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    /* The names and values first (the copy's table, read in order), so that the loop below
     * can prefetch the objects a few entries ahead: each entry reads its name, its array
     * and the array's shape, three objects of their own that are rarely in the cache when a
     * checkpoint of thousands of arrays is saved. */
    PyObject **pairs = PyMem_Malloc(2 * (size_t)(j->n ? j->n : 1) * sizeof *pairs);
    if (pairs == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t pos = 0, got = 0;
    PyObject *name, *obj;
    while (got < j->n && PyDict_Next(j->items, &pos, &name, &obj)) {
        pairs[2 * got] = name;
        pairs[2 * got + 1] = obj;
        got++;
    }
    int r = save_job_entries(st, module, fname, j, pairs, got);
    PyMem_Free(pairs);
    if (r < 0) return -1;
    if (kv != NULL && kv != Py_None && hrpy_kv_from_mapping(st, kv, &j->kv) < 0) return -1;
    j->contents = (struct hurray_file_contents){j->entries, (size_t)j->n, j->kv.entries,
                                                j->kv.count};
    if (total == NULL) return 0;
    struct hurray_file_write_options opt = {NULL, &j->limits, NULL, NULL, 0};
    int status = hurray_file_encoded_len(&j->contents, &opt, total, &err);
    if (status != HURRAY_OK) {
        hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err); /* the caller's contents */
        return -1;
    }
    return 0;
}

/* The writer's progress hook (GIL released around the write): takes the GIL, runs pending
 * signal handlers (Ctrl-C: KeyboardInterrupt stops the write between chunks) and the
 * caller's progress callable; an exception from either stops the write and stays set. */
struct save_progress {
    PyObject *callback; /* callable(done, total) or NULL */
};

static int save_progress_hook(void *ctx, uint64_t done, uint64_t total) {
    struct save_progress *p = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = PyErr_CheckSignals() < 0;
    if (!stop && p->callback != NULL) {
        PyObject *r = PyObject_CallFunction(p->callback, "KK", (unsigned long long)done,
                                            (unsigned long long)total);
        stop = r == NULL;
        Py_XDECREF(r);
    }
    PyGILState_Release(g);
    return stop;
}

/* progress=None | True | callable(done_bytes, total_bytes) -> a new reference or NULL (none);
 * True: hurray._progress.bar(what, path), a bar on stderr (tqdm's when it is installed). */
static int progress_arg(PyObject *arg, const char *what, PyObject *path, PyObject **out) {
    *out = NULL;
    if (arg == NULL || arg == Py_None || arg == Py_False) return 0;
    if (arg != Py_True) {
        if (!PyCallable_Check(arg)) {
            PyErr_Format(PyExc_TypeError,
                         "%s: progress must be None, True or a callable(done_bytes, "
                         "total_bytes), not %.100s",
                         what, Py_TYPE(arg)->tp_name);
            return -1;
        }
        *out = Py_NewRef(arg);
        return 0;
    }
    PyObject *mod = PyImport_ImportModule("hurray._progress");
    if (mod == NULL) return -1;
    *out = PyObject_CallMethod(mod, "bar", "sO", what, path ? path : Py_None);
    Py_DECREF(mod);
    return *out == NULL ? -1 : 0;
}

/* save(path, tensors, kv=None, *, progress=None, durable=True, max_...=None) */
static PyObject *io_save(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
    static const char *const names[] = {"path",
                                        "tensors",
                                        "kv",
                                        "progress",
                                        "durable",
                                        HRPY_FILE_LIMIT_KEYWORDS};
    PyObject *a[5 + N_IO_LIMITS];
    PyObject *path = NULL, *result = NULL;
    struct save_job job;
    struct save_progress prog = {NULL};
    struct hurray_error err;
    hurray_error_clear(&err);
    memset(&job, 0, sizeof job);
    hrpy_state *st = hrpy_state_from_module(module);
    if (hrpy_bind("save", args, nargs, kwnames, names, 5 + N_IO_LIMITS, 3, 2, a) < 0)
        return NULL;
    /* durable=False: file-container.md HR-FILE-18 (no flush before the rename); None is the
     * default (flushed), never a false value that would skip the flush */
    int durable = a[4] == NULL || a[4] == Py_None ? 1 : PyObject_IsTrue(a[4]);
    if (durable < 0) return NULL;
    path = path_arg(a[0], "save");
    if (path == NULL) goto done;
    if (save_job_make(st, module, "save", a[1], a[2], a + 5, &job, NULL) < 0) goto done;
    PyObject *shown = PyUnicode_DecodeFSDefaultAndSize(PyBytes_AS_STRING(path),
                                                       PyBytes_GET_SIZE(path));
    int pst = shown == NULL ? -1 : progress_arg(a[3], "save", shown, &prog.callback);
    Py_XDECREF(shown);
    if (pst < 0) goto done;
    const char *cpath = PyBytes_AS_STRING(path);
    struct hurray_file_write_options opt = {NULL, &job.limits, save_progress_hook, &prog,
                                            durable ? 0u : (unsigned)HURRAY_FILE_WRITE_NO_SYNC};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = hurray_file_write_path(cpath, &job.contents, &opt, &err);
    Py_END_ALLOW_THREADS
    if (status != HURRAY_OK) {
        /* an exception from the hook (KeyboardInterrupt, the callback's) is the error; IO
         * is the file's; anything else the writer refused in its planning, before it
         * touched the path: the caller's contents (descriptor context) */
        if (PyErr_Occurred()) goto done;
        if (status == HURRAY_E_IO) raise_file(st, status, &err, path);
        else hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    save_job_release(&job);
    Py_XDECREF(prog.callback);
    Py_XDECREF(path);
    return result;
}

/* save_bytes(tensors, kv=None, *, max_...=None) -> bytes: the file save would write. */
static PyObject *io_save_bytes(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
    static const char *const names[] = {"tensors",
                                        "kv",
                                        HRPY_FILE_LIMIT_KEYWORDS};
    PyObject *a[2 + N_IO_LIMITS];
    PyObject *out = NULL;
    struct save_job job;
    struct hurray_error err;
    uint64_t total = 0;
    hurray_error_clear(&err);
    memset(&job, 0, sizeof job);
    hrpy_state *st = hrpy_state_from_module(module);
    if (hrpy_bind("save_bytes", args, nargs, kwnames, names, 2 + N_IO_LIMITS, 2, 1, a) < 0)
        return NULL;
    if (save_job_make(st, module, "save_bytes", a[0], a[1], a + 2, &job, &total) < 0) goto done;
    if (total > (uint64_t)PY_SSIZE_T_MAX) {
        PyErr_NoMemory();
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (out == NULL) goto done;
    size_t written = 0;
    int status;
    uint8_t *dst = (uint8_t *)PyBytes_AS_STRING(out);
    struct hurray_file_write_options opt = {NULL, &job.limits, NULL, NULL, 0};
    Py_BEGIN_ALLOW_THREADS
    status = hurray_file_encode(&job.contents, &opt, dst, (size_t)total, &written, &err);
    Py_END_ALLOW_THREADS
    if (status != HURRAY_OK || written != total) {
        Py_CLEAR(out);
        hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status != HURRAY_OK ? status : HURRAY_E_INTERNAL,
                          &err);
    }
done:
    save_job_release(&job);
    return out;
}

/* ---- load ----------------------------------------------------------------------------- */

#define load_limit_names io_limit_names /* the one table of limit keywords */
#define N_LOAD_LIMITS N_IO_LIMITS

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

/* For the lazy handle (lazy.c): the same path conversion, opening and error mapping. */
PyObject *hrpy_io_path_arg(PyObject *obj, const char *who) { return path_arg(obj, who); }

struct hurray_file *hrpy_io_open(hrpy_state *st, PyObject *path, int mode, int parts,
                                 const struct hurray_limits *limits) {
    return open_file(st, path, mode, parts, limits);
}

PyObject *hrpy_io_raise_file(hrpy_state *st, int status, const struct hurray_error *err,
                             PyObject *path) {
    return raise_file(st, status, err, path);
}

/* ---- a loaded item as an object -----------------------------------------------------------
 * Each loaded entry is its own C item tree: its descriptors (compact records) and its bytes
 * (its own copy, or its share of a copy-on-write mapping), released together by
 * hurray_item_destroy. An ItemMemory owns that tree; the Tensor / Composite objects over it
 * share its descriptor records instead of copying them (one record per tensor) and keep it
 * alive. So the result pins its own entry's bytes and records and nothing else (HR-FILE-8,
 * HR-FILE-13). Loaded bytes are writable in both modes: copies are the caller's, mappings
 * are copy-on-write (HR-FILE-11) -- but for a sparse tensor's index buffers, read-only and
 * checked once (memory-layout.md HR-LAYOUT-26; hrpy_tensor_seal_index). */

/* Takes the item tree (owned by the ItemMemory, or freed on failure). */
static PyObject *item_object(hrpy_state *st, struct hurray_item *item) {
    PyObject *owner = hrpy_item_memory_new(st, item); /* owns item, also on failure */
    if (owner == NULL) return NULL;
    PyObject *obj = hrpy_item_to_object(st, item, owner, 0);
    Py_DECREF(owner);
    return obj;
}

/* Entries loaded per call into libhurray (one GIL release, one progress batch). */
#define LOAD_BATCH 1024u

/* load's progress (file-container.md HR-FILE-17): the reader's hook, called between reads
 * of a copy-mode load with the GIL released, takes the GIL, runs pending signal handlers
 * (Ctrl-C: KeyboardInterrupt stops the load before its next read) and the caller's
 * callable with the bytes of the whole load (`base` + the batch's done, `total` the sum of
 * the loaded entries' spans); an exception from either stops the load and stays set. */
struct load_progress {
    PyObject *callback; /* callable(done, total) or NULL */
    uint64_t base;      /* the spans of the batches loaded before this one */
    uint64_t total;     /* the load's: the sum of hurray_file_entry_span */
    uint64_t batch;     /* this batch's total, as the reader last reported it */
    uint64_t checked;   /* base + done when signals were last checked */
};

static int load_progress_hook(void *ctx, uint64_t done, uint64_t total) {
    struct load_progress *p = ctx;
    p->batch = total; /* the caller's thread, GIL or not: only it touches *p meanwhile */
    /* without a callable, the GIL is taken only to check for signals: at a batch's start
     * and once per HURRAY_FILE_PROGRESS_CHUNK read (many small items cost no GIL each) */
    if (p->callback == NULL && done != 0 &&
        p->base + done - p->checked < HURRAY_FILE_PROGRESS_CHUNK)
        return 0;
    p->checked = p->base + done;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = PyErr_CheckSignals() < 0;
    if (!stop && p->callback != NULL) {
        uint64_t at = p->base + done;
        PyObject *r = PyObject_CallFunction(p->callback, "KK",
                                            (unsigned long long)(at < p->total ? at : p->total),
                                            (unsigned long long)p->total);
        stop = r == NULL;
        Py_XDECREF(r);
    }
    PyGILState_Release(g);
    return stop;
}

/* Loads entries[0..n) into items[0..n) (GIL released while reading, a batch at a time);
 * `prog` (NULL: none) reports a copy-mode load's progress through the reader's hook. On
 * failure every item loaded is destroyed (items[] all NULL). */
static int load_items(hrpy_state *st, struct hurray_file *f, PyObject *path,
                      const size_t *entries, struct hurray_item **items, size_t n,
                      struct load_progress *prog) {
    struct hurray_error err;
    if (prog != NULL) hurray_file_set_progress(f, load_progress_hook, prog);
    for (size_t at = 0; at < n; at += LOAD_BATCH) {
        size_t m = n - at < LOAD_BATCH ? n - at : LOAD_BATCH;
        int status;
        hurray_error_clear(&err);
        if (prog != NULL) prog->batch = 0;
        Py_BEGIN_ALLOW_THREADS
        status = hurray_file_load_items(f, entries + at, m, items + at, &err);
        Py_END_ALLOW_THREADS
        if (prog != NULL) prog->base += prog->batch;
        if (status != HURRAY_OK) {
            /* an exception from the hook (KeyboardInterrupt, the callback's) is the error;
             * the reader released every byte of the failed batch */
            if (!PyErr_Occurred()) raise_file(st, status, &err, path);
            for (size_t k = 0; k < at; k++) {
                hurray_item_destroy(items[k]);
                items[k] = NULL;
            }
            return -1;
        }
    }
    return 0;
}

static PyObject *load_named(hrpy_state *st, struct hurray_file **fp, PyObject *path,
                            PyObject *const *args, Py_ssize_t nargs, PyObject *progress,
                            int mmap);

/* load(path, *names, mmap=False, progress=None, max_descriptor_bytes=None, ...) */
static PyObject *io_load(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
    static const char *const names[] = {"mmap",
                                        "progress",
                                        HRPY_FILE_LIMIT_KEYWORDS};
    PyObject *kw[2 + N_LOAD_LIMITS];
    PyObject *path = NULL, *result = NULL, *progress = NULL;
    struct hurray_file *f = NULL;
    struct hurray_limits limits;
    hrpy_state *st = hrpy_state_from_module(module);
    nargs = PyVectorcall_NARGS(nargs);
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "load() missing required argument 'path'");
        return NULL;
    }
    if (hrpy_bind("load", args + nargs, 0, kwnames, names, 2 + N_LOAD_LIMITS, 0, 0, kw) < 0)
        return NULL;
    if (hrpy_limits_from_args(kw + 2, load_limit_names, N_LOAD_LIMITS, &limits) < 0) return NULL;
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
    PyObject *shown = PyUnicode_DecodeFSDefaultAndSize(PyBytes_AS_STRING(path),
                                                       PyBytes_GET_SIZE(path));
    int pst = shown == NULL ? -1 : progress_arg(kw[1], "load", shown, &progress);
    Py_XDECREF(shown);
    if (pst < 0) goto done;
    f = open_file(st, path, mmap ? HURRAY_FILE_MMAP : HURRAY_FILE_COPY, HURRAY_FILE_PARTS_INDEX,
                  &limits);
    if (f == NULL) goto done;
    result = load_named(st, &f, path, args, nargs, progress, mmap);
done:
    hurray_file_destroy(f); /* loaded items keep their own bytes */
    Py_XDECREF(progress);
    Py_XDECREF(path);
    return result;
}

/* The entries of an open file as load returns them: args[1..nargs) names or every
 * top-level entry. progress (NULL: none): the caller's callable(done, total), called
 * between the reads of a copy-mode load, once (done = total) after an mmap load.
 *
 * In three steps, so that the open file's index and the result's objects are never held at
 * once (file-container.md HR-FILE-13: what a load holds follows the file): the result's keys
 * (a load of every top-level entry makes its dict now, each name mapped to None; named
 * entries keep their keys in an array: a name may be given twice), then every item's C tree
 * (its record and its own bytes), then *fp is destroyed (the index bytes, entry records and
 * names it held) and the trees become the values. A tensor entry without buffers needs no
 * tree: its record alone is decoded, into a block of its own the tensor then takes
 * (hrpy_tensor_adopt_record), so the most entries a file of a given size holds cost a
 * record each before they become objects, not an item node (HR-FILE-13). */
/* A tensor entry without buffers: load takes its record alone, no tree. */
static int takes_record(const struct hurray_file *f, size_t entry) {
    return hurray_file_entry_kind(f, entry) == HURRAY_FILE_KIND_TENSOR &&
           hurray_file_entry_buffer_count(f, entry) == 0;
}

static PyObject *load_named(hrpy_state *st, struct hurray_file **fp, PyObject *path,
                            PyObject *const *args, Py_ssize_t nargs, PyObject *progress,
                            int mmap) {
    struct hurray_file *f = *fp;
    PyObject *result = NULL, *made = NULL, **keys = NULL;
    struct hurray_item **items = NULL;
    struct hurray_descriptor **records = NULL;
    size_t *entries = NULL, *with_items = NULL, n = 0, m = 0;
    int named = nargs > 1;
    /* what to load: exactly the names given (members by explicit name too, requirements
     * § Composites / I/O), else the top-level entries (a composite under its head's name,
     * not its members) */
    n = named ? (size_t)(nargs - 1) : hurray_file_top_level_count(f);
    entries = PyMem_Calloc(n ? n : 1, sizeof *entries);
    keys = named ? PyMem_Calloc(n, sizeof *keys) : NULL;
    made = PyDict_New();
    if (made == NULL) goto done;
    if (entries == NULL || (named && keys == NULL)) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        if (named) {
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
            PyObject *key = name ? PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "strict")
                                 : NULL;
            int rc = key == NULL ? -1 : PyDict_SetItem(made, key, Py_None);
            Py_XDECREF(key);
            if (rc < 0) goto done;
        }
    }
    /* Ctrl-C stops a copy-mode load from a path between reads, progress or not */
    struct load_progress prog = {progress, 0, 0, 0, 0};
    for (size_t k = 0; progress != NULL && k < n; k++) {
        uint64_t span = 0;
        struct hurray_error err;
        hurray_error_clear(&err);
        int status = hurray_file_entry_span(f, entries[k], &span, &err);
        if (status != HURRAY_OK) {
            raise_file(st, status, &err, path);
            goto done;
        }
        prog.total = prog.total > UINT64_MAX - span ? UINT64_MAX : prog.total + span;
    }
    /* tensors without buffers: their records (records[k]); every other entry: a tree
     * (with_items lists their entries, items receives their trees). The arrays a load of
     * many entries holds are what their count needs: records n, the other two m. */
    for (size_t k = 0; k < n; k++) m += !takes_record(f, entries[k]);
    records = PyMem_Calloc(n ? n : 1, sizeof *records);
    with_items = PyMem_Calloc(m ? m : 1, sizeof *with_items);
    items = PyMem_Calloc(m ? m : 1, sizeof *items);
    if (records == NULL || with_items == NULL || items == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t k = 0, j = 0; k < n; k++) {
        if (!takes_record(f, entries[k])) {
            with_items[j++] = entries[k];
            continue;
        }
        struct hurray_error err;
        hurray_error_clear(&err);
        records[k] = PyMem_RawMalloc(sizeof *records[k]);
        if (records[k] == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        hurray_descriptor_init(records[k]);
        records[k]->allocator = &hrpy_raw_allocator;
        int status = hurray_file_entry_descriptor(f, entries[k], records[k], &err);
        if (status != HURRAY_OK) {
            raise_file(st, status, &err, path);
            goto done;
        }
        /* a member loaded by its name presents without its role (hrpy_item_to_object) */
        hurray_descriptor_clear_role(records[k]);
    }
    PyMem_Free(entries); /* with_items and records say what to load */
    entries = NULL;
    if (load_items(st, f, path, with_items, items, m, path != NULL && !mmap ? &prog : NULL) < 0)
        goto done;
    /* every item holds its own bytes and records: the file is no longer needed */
    PyMem_Free(with_items);
    with_items = NULL;
    hurray_file_destroy(f);
    *fp = NULL;
    Py_ssize_t pos = 0;
    PyObject *key = NULL, *value = NULL;
    for (size_t k = 0, j = 0; k < n; k++) {
        if (!named && !PyDict_Next(made, &pos, &key, &value)) { /* n keys, in file order */
            PyErr_SetString(PyExc_SystemError, "load: fewer names than entries");
            goto done;
        }
        PyObject *obj;
        if (records[k] != NULL) { /* takes the record, also on failure */
            obj = hrpy_tensor_adopt_record(st, records[k]);
            records[k] = NULL;
        } else if (j < m) { /* takes the item, also on failure */
            obj = item_object(st, items[j]);
            items[j++] = NULL;
        } else {
            PyErr_SetString(PyExc_SystemError, "load: fewer trees than entries");
            goto done;
        }
        /* replacing a value of an existing key: the dict does not change size */
        int rc = obj == NULL ? -1 : PyDict_SetItem(made, named ? keys[k] : key, obj);
        Py_XDECREF(obj);
        if (rc < 0) goto done;
    }
    if (progress != NULL && mmap) {
        /* nothing was read: one report, done = total */
        PyObject *r = PyObject_CallFunction(progress, "KK", (unsigned long long)prog.total,
                                            (unsigned long long)prog.total);
        if (r == NULL) goto done;
        Py_DECREF(r);
    }
    result = made;
    made = NULL;
done:
    Py_XDECREF(made); /* nothing partial */
    for (size_t k = 0; keys != NULL && k < n; k++) Py_XDECREF(keys[k]);
    for (size_t k = 0; items != NULL && k < m; k++) hurray_item_destroy(items[k]);
    for (size_t k = 0; records != NULL && k < n; k++) {
        if (records[k] == NULL) continue;
        hurray_descriptor_reset(records[k]);
        PyMem_RawFree(records[k]);
    }
    PyMem_Free(records);
    PyMem_Free(with_items);
    PyMem_Free(items);
    PyMem_Free(keys);
    PyMem_Free(entries);
    return result;
}

/* load_bytes(data, *names, max_...=None): load of a file held in memory (any bytes-like
 * object; its bytes are copied once and validated like a file's). */
static PyObject *io_load_bytes(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
    PyObject *kw[N_LOAD_LIMITS];
    struct hurray_limits limits;
    hrpy_state *st = hrpy_state_from_module(module);
    nargs = PyVectorcall_NARGS(nargs);
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "load_bytes() missing required argument 'data'");
        return NULL;
    }
    if (hrpy_bind("load_bytes", args + nargs, 0, kwnames, load_limit_names, N_LOAD_LIMITS, 0, 0,
                  kw) < 0)
        return NULL;
    if (hrpy_limits_from_args(kw, load_limit_names, N_LOAD_LIMITS, &limits) < 0) return NULL;
    for (Py_ssize_t k = 1; k < nargs; k++)
        if (!PyUnicode_Check(args[k]))
            return PyErr_Format(PyExc_TypeError, "load_bytes: names must be str, not %.100s",
                                Py_TYPE(args[k])->tp_name);
    if (PyUnicode_Check(args[0]) || PyObject_HasAttrString(args[0], "__fspath__"))
        return PyErr_Format(PyExc_TypeError,
                            "load_bytes: data must be a bytes-like object, not %.100s (for a "
                            "path use hurray.load(path))",
                            Py_TYPE(args[0])->tp_name);
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    struct hurray_file_options opt = {&limits, &hrpy_raw_allocator, HURRAY_FILE_COPY,
                                      HURRAY_FILE_PARTS_INDEX};
    struct hurray_file *f = NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = hurray_file_create_memory((const uint8_t *)view.buf, (size_t)view.len, &opt, &f,
                                       &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (status != HURRAY_OK) return raise_file(st, status, &err, NULL);
    PyObject *result = load_named(st, &f, NULL, args, nargs, NULL, 0);
    hurray_file_destroy(f);
    return result;
}

/* load_kv(path, *, max_...=None) */
static PyObject *io_load_kv(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    static const char *const names[] = {"path",
                                        HRPY_FILE_LIMIT_KEYWORDS};
    PyObject *a[1 + N_LOAD_LIMITS];
    struct hurray_limits limits;
    hrpy_state *st = hrpy_state_from_module(module);
    if (hrpy_bind("load_kv", args, nargs, kwnames, names, 1 + N_LOAD_LIMITS, 1, 1, a) < 0)
        return NULL;
    if (hrpy_limits_from_args(a + 1, load_limit_names, N_LOAD_LIMITS, &limits) < 0) return NULL;
    PyObject *path = path_arg(a[0], "load_kv");
    if (path == NULL) return NULL;
    /* the header and the KV section only: the index and the data are not read; */
    struct hurray_file *f = open_file(st, path, HURRAY_FILE_COPY, HURRAY_FILE_PARTS_HEADER,
                                      &limits);
    PyObject *result = NULL;
    /* then the KV section, converted entry by entry as it is decoded: the C map is never held
     * alongside the dict (kv.md § Decoding one entry at a time) */
    if (f != NULL) result = hrpy_kv_each(st, f, path);
    hurray_file_destroy(f);
    Py_DECREF(path);
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
    struct hrpy_kv_each c = {st, NULL, NULL};
    struct hurray_error err;
    hurray_error_clear(&err);
    /* entry by entry, as load_kv converts a file's section */
    int status = hurray_kv_decode_each((const uint8_t *)view.buf, (size_t)view.len, &opt,
                                       hrpy_kv_each_entry, &c, &err);
    PyBuffer_Release(&view);
    if (status != HURRAY_OK) {
        Py_CLEAR(c.dict);
        return PyErr_Occurred() ? NULL : hrpy_raise_status(st, HRPY_CTX_FILE, status, &err);
    }
    return c.dict != NULL ? c.dict : PyDict_New();
}

static PyMethodDef io_methods[] = {
    {"_kv_decode", (PyCFunction)(void (*)(void))io_kv_decode, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("_kv_decode($module, /, data, *, max_kv_entries=None, max_kv_bytes=None,\n"
               "           max_name_bytes=None, max_composite_depth=None)\n--\n\n"
               "A standalone KV section as load_kv returns it (a dict). For the conformance\n"
               "corpus.")},
    {"save", (PyCFunction)(void (*)(void))io_save, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("save($module, /, path, tensors, kv=None, *, progress=None, durable=True,\n"
               "     max_descriptor_bytes=None, max_buffer_bytes=None,\n"
               "     max_rank=None, max_composite_depth=None, max_composite_members=None,\n"
               "     max_kv_entries=None, max_kv_bytes=None, max_name_bytes=None,\n"
               "     max_file_tensors=None)\n--\n\n"
               "Writes an HRRYFILE container: `tensors` maps names to hurray.Tensor,\n"
               "hurray.Composite, numpy.ndarray or torch.Tensor (arrays and torch tensors are\n"
               "ingested as from_numpy / from_torch do; a non-contiguous one is stored as a\n"
               "compact copy of its elements, never its whole base); every buffer of every\n"
               "tensor is written; a composite's members are named '{head}.{index}'. `kv`\n"
               "maps str keys to bool, int (int64), float, str, bytes or lists of these.\n"
               "Contents a reader with the given limits (default: load's defaults) would\n"
               "refuse are refused first, naming the tensor: InvalidDescriptorError (LIMIT\n"
               "and format rules), nothing is written; pass the same max_* to save and load\n"
               "for larger contents. The file is written beside `path` (with the mode of the\n"
               "file it replaces; through a symbolic link, its target; leftovers of killed\n"
               "saves of `path` removed first), flushed to stable storage and renamed over\n"
               "it. durable=False skips the flush only (as np.save and safetensors do;\n"
               "None is the default, True):\n"
               "readers still see the old file or the whole new one, but after a crash\n"
               "`path` may hold a partial file. progress: a\n"
               "callable(done_bytes, total_bytes) called between chunks, or True for a bar\n"
               "on stderr. Ctrl-C (or an exception from progress) stops the write between\n"
               "chunks: the temporary file is removed and `path` left as it was. I/O\n"
               "failures raise FileError (FileNotFoundError, PermissionError, ... subclasses\n"
               "by errno). CPU tensors only (UnsupportedError otherwise).")},
    {"save_bytes", (PyCFunction)(void (*)(void))io_save_bytes, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("save_bytes($module, /, tensors, kv=None, *, max_descriptor_bytes=None,\n"
               "     max_buffer_bytes=None,\n"
               "     max_rank=None, max_composite_depth=None, max_composite_members=None,\n"
               "     max_kv_entries=None, max_kv_bytes=None, max_name_bytes=None,\n"
               "     max_file_tensors=None)\n--\n\n"
               "The bytes save(path, tensors, kv) writes, in memory.")},
    {"load_bytes", (PyCFunction)(void (*)(void))io_load_bytes, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("load_bytes($module, data, /, *names, max_descriptor_bytes=None,\n"
               "     max_buffer_bytes=None,\n"
               "     max_rank=None, max_composite_depth=None, max_composite_members=None,\n"
               "     max_kv_entries=None, max_kv_bytes=None, max_name_bytes=None,\n"
               "     max_file_tensors=None)\n--\n\n"
               "load() of a file held in memory (bytes, bytearray, memoryview, ...): validated\n"
               "the same way; each returned item holds its own copy of its bytes. A corrupt\n"
               "container raises FileError.")},
    {"load", (PyCFunction)(void (*)(void))io_load, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("load($module, path, /, *names, mmap=False, progress=None,\n"
               "     max_descriptor_bytes=None, max_buffer_bytes=None,\n"
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
               "index's entries). progress: a callable(done_bytes, total_bytes) or True for\n"
               "a bar on stderr; total is the bytes of the entries loaded. A copy load calls\n"
               "it before the first read, between reads of at most 16 MiB and at the end\n"
               "(done == total); an mmap load reads nothing and calls it once, with done ==\n"
               "total. Ctrl-C (or an exception from progress) stops a copy load between\n"
               "reads: the exception propagates and nothing of the load is kept. FileError\n"
               "for a missing, unreadable, corrupt or truncated file, or one that is not a\n"
               "regular file (errno set when the system gave one).")},
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
