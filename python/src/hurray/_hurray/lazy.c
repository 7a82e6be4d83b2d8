/* hurray.open's handle: hurray._hurray.File and hurray._hurray.FileSlice (requirements
 * § Lazy file access in docs/requirements/python-binding.md; file-container.md § Reading).
 *
 * Opening validates what every reader validates (file-container.md HR-FILE-9: the header,
 * the whole index, every gap, the KV section) and builds nothing per tensor: keys() makes
 * the names when asked, descriptor(name) decodes one descriptor, get_tensor(name) loads one
 * entry (its own bytes, read or mapped copy-on-write: HR-FILE-8), and get_slice(name)[key]
 * reads only the byte range the selection spans (hurray_file_read_buffer, HR-FILE-14).
 * A loaded tensor stays valid after close (it holds its own bytes).
 *
 * Conversion to a framework is a callable the Python wrapper (hurray.open) resolves once:
 * None returns hurray.Tensor; otherwise it is applied to each returned Tensor (numpy.asarray,
 * Tensor.to_torch, jax.numpy.from_dlpack), so the zero-copy paths and their copy rules are
 * those of the Tensor.
 *
 * Closing: close() (or leaving the with block) releases the C file at once unless a use is
 * in flight in another thread (the GIL is released while reading); then the last such use
 * releases it (file_use / file_done, under a per-handle lock, so also without a GIL).
 * Every access after close raises ValueError naming the path. */
#include "state.h"

#include <structmember.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    struct hurray_file *f; /* NULL once released */
    PyObject *path;        /* bytes (file system encoding) */
    PyObject *convert;     /* callable, or NULL: hurray.Tensor */
    PyThread_type_lock lock; /* guards f, busy and closed; never held while reading */
    Py_ssize_t busy;       /* uses of f in progress (file_use .. file_done) */
    uint8_t closed;
    uint8_t mmap;
    PyObject *weakreflist;
} FileObject;

#define FILEOBJ(o) ((FileObject *)(o))

/* Every use of the C file holds a count under the handle's lock, so that close() (from
 * any thread: reads run without the GIL, and the module may run without one) never frees
 * it under a user; the last user frees it after close. The lock is never held while
 * reading. */
static struct hurray_file *file_use(FileObject *self) {
    struct hurray_file *f = NULL;
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    if (!self->closed && self->f != NULL) {
        self->busy++;
        f = self->f;
    }
    PyThread_release_lock(self->lock);
    if (f == NULL)
        PyErr_Format(PyExc_ValueError, "I/O operation on a closed hurray file (%s)",
                     PyBytes_AS_STRING(self->path));
    return f;
}

static void file_done(FileObject *self) {
    struct hurray_file *f = NULL;
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    if (--self->busy == 0 && self->closed) {
        f = self->f;
        self->f = NULL;
    }
    PyThread_release_lock(self->lock);
    hurray_file_destroy(f);
}

/* name (str) -> entry index; KeyError naming the file when absent. */
static int file_find(FileObject *self, struct hurray_file *f, PyObject *name, size_t *index) {
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "hurray file: names are str, not %.100s",
                     Py_TYPE(name)->tp_name);
        return -1;
    }
    Py_ssize_t len;
    const char *utf8 = PyUnicode_AsUTF8AndSize(name, &len);
    if (utf8 == NULL) return -1;
    if (strlen(utf8) == (size_t)len && hurray_file_find(f, utf8, index)) return 0;
    PyObject *msg = PyUnicode_FromFormat("%R: no tensor of that name in %s", name,
                                         PyBytes_AS_STRING(self->path));
    if (msg != NULL) {
        PyErr_SetObject(PyExc_KeyError, msg);
        Py_DECREF(msg);
    }
    return -1;
}

/* The prologue of the methods that take a name: the module state, a use of the C file
 * (file_use) and the entry `name` names. Returns the file with the use held (the caller
 * ends it with file_done) and *st, *index set; NULL with an exception set and no use held
 * when the handle is closed or the name is not in the file. */
static struct hurray_file *file_entry(FileObject *self, PyObject *name, hrpy_state **st,
                                      size_t *index) {
    *st = hrpy_state_from_type(Py_TYPE(self));
    struct hurray_file *f = *st == NULL ? NULL : file_use(self);
    if (f == NULL) return NULL;
    if (file_find(self, f, name, index) < 0) {
        file_done(self);
        return NULL;
    }
    return f;
}

/* Decodes entry i's descriptor into *d (initialised here) and ends the use file_entry
 * began. 0, or -1 with the file's error raised and *d reset. */
static int file_entry_descriptor(FileObject *self, struct hurray_file *f, size_t i,
                                 hrpy_state *st, struct hurray_descriptor *d) {
    struct hurray_error err;
    hurray_error_clear(&err);
    hurray_descriptor_init(d);
    d->allocator = &hrpy_raw_allocator;
    int status = hurray_file_entry_descriptor(f, i, d, &err);
    file_done(self);
    if (status == HURRAY_OK) return 0;
    hurray_descriptor_reset(d);
    hrpy_io_raise_file(st, status, &err, self->path);
    return -1;
}

/* A Tensor through the framework's conversion; a Composite is returned as it is. */
static PyObject *file_convert(FileObject *self, PyObject *obj) {
    if (obj == NULL || self->convert == NULL) return obj;
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    if (st == NULL || !PyObject_TypeCheck(obj, st->Tensor_Type)) return obj;
    PyObject *r = PyObject_CallOneArg(self->convert, obj);
    Py_DECREF(obj);
    return r;
}

static PyObject *entry_name(const struct hurray_file *f, size_t i) {
    const char *name = hurray_file_entry_name(f, i);
    return PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "strict");
}

/* ---- File methods ----------------------------------------------------------------------- */

/* keys(): the top-level names in file order (what load returns), made on each call. */
static PyObject *file_keys(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    FileObject *self = FILEOBJ(op);
    struct hurray_file *f = file_use(self);
    if (f == NULL) return NULL;
    size_t n = hurray_file_top_level_count(f);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t k = 0; list != NULL && k < n; k++) {
        PyObject *s = entry_name(f, hurray_file_top_level_entry(f, k));
        if (s == NULL) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)k, s);
    }
    file_done(self);
    return list;
}

static PyObject *file_iter(PyObject *op) {
    PyObject *keys = file_keys(op, NULL);
    if (keys == NULL) return NULL;
    PyObject *it = PyObject_GetIter(keys);
    Py_DECREF(keys);
    return it;
}

static Py_ssize_t file_len(PyObject *op) {
    FileObject *self = FILEOBJ(op);
    struct hurray_file *f = file_use(self);
    if (f == NULL) return -1;
    Py_ssize_t n = (Py_ssize_t)hurray_file_top_level_count(f);
    file_done(self);
    return n;
}

/* `name in f`: any entry, composite members included (get_tensor accepts them). */
static int file_contains(PyObject *op, PyObject *name) {
    FileObject *self = FILEOBJ(op);
    struct hurray_file *f = file_use(self);
    if (f == NULL) return -1;
    int r = 0;
    if (PyUnicode_Check(name)) {
        Py_ssize_t len;
        const char *utf8 = PyUnicode_AsUTF8AndSize(name, &len);
        r = utf8 == NULL ? -1 : strlen(utf8) == (size_t)len && hurray_file_find(f, utf8, NULL);
    }
    file_done(self);
    return r;
}

/* metadata(): the KV section as a new dict (load_kv's conversion). */
static PyObject *file_metadata(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    FileObject *self = FILEOBJ(op);
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(op));
    struct hurray_file *f = st == NULL ? NULL : file_use(self);
    if (f == NULL) return NULL;
    PyObject *r = hrpy_kv_to_dict(st, hurray_file_kv(f));
    file_done(self);
    return r;
}

/* descriptor(name): the entry's Descriptor, decoded from the index; no data is touched. */
static PyObject *file_descriptor(PyObject *op, PyObject *name) {
    FileObject *self = FILEOBJ(op);
    size_t i = 0;
    hrpy_state *st = NULL;
    struct hurray_file *f = file_entry(self, name, &st, &i);
    if (f == NULL) return NULL;
    struct hurray_descriptor d;
    if (file_entry_descriptor(self, f, i, st, &d) < 0) return NULL;
    PyObject *r = hrpy_descriptor_from_c(st, &d);
    hurray_descriptor_reset(&d);
    return r;
}

/* get_tensor(name): one entry, its bytes only (a composite with its member tree). */
static PyObject *file_get_tensor(PyObject *op, PyObject *name) {
    FileObject *self = FILEOBJ(op);
    size_t i = 0;
    hrpy_state *st = NULL;
    struct hurray_file *f = file_entry(self, name, &st, &i);
    if (f == NULL) return NULL;
    struct hurray_item *item = NULL;
    struct hurray_error err;
    int status;
    hurray_error_clear(&err);
    Py_BEGIN_ALLOW_THREADS
    status = hurray_file_load_item(f, i, &item, &err);
    Py_END_ALLOW_THREADS
    file_done(self);
    if (status != HURRAY_OK) return hrpy_io_raise_file(st, status, &err, self->path);
    PyObject *owner = hrpy_item_memory_new(st, item); /* owns item, also on failure */
    if (owner == NULL) return NULL;
    PyObject *obj = hrpy_item_to_object(st, item, owner, 0);
    Py_DECREF(owner);
    return file_convert(self, obj);
}

static PyObject *file_get_slice(PyObject *op, PyObject *name);

static PyObject *file_close(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    FileObject *self = FILEOBJ(op);
    struct hurray_file *f = NULL;
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    self->closed = 1;
    if (self->busy == 0) { /* else the last user frees it */
        f = self->f;
        self->f = NULL;
    }
    PyThread_release_lock(self->lock);
    hurray_file_destroy(f);
    Py_RETURN_NONE;
}

static PyObject *file_enter_cm(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    if (file_use(FILEOBJ(op)) == NULL) return NULL;
    file_done(FILEOBJ(op));
    return Py_NewRef(op);
}

static PyObject *file_exit(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
    (void)args;
    (void)nargs;
    PyObject *r = file_close(op, NULL);
    if (r == NULL) return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *file_get_closed(PyObject *op, void *Py_UNUSED(c)) {
    return PyBool_FromLong(FILEOBJ(op)->closed);
}

static PyObject *file_get_path(PyObject *op, void *Py_UNUSED(c)) {
    PyObject *p = FILEOBJ(op)->path;
    return PyUnicode_DecodeFSDefaultAndSize(PyBytes_AS_STRING(p), PyBytes_GET_SIZE(p));
}

static PyObject *file_repr(PyObject *op) {
    FileObject *self = FILEOBJ(op);
    return PyUnicode_FromFormat("<hurray file %s, %s%s>", PyBytes_AS_STRING(self->path),
                                self->mmap ? "mmap" : "copy", self->closed ? ", closed" : "");
}

static int file_traverse(PyObject *op, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(FILEOBJ(op)->convert);
    return 0;
}

static int file_clear(PyObject *op) {
    Py_CLEAR(FILEOBJ(op)->convert);
    return 0;
}

static void file_dealloc(PyObject *op) {
    PyTypeObject *tp = Py_TYPE(op);
    FileObject *self = FILEOBJ(op);
    PyObject_GC_UnTrack(op);
    if (self->weakreflist != NULL) PyObject_ClearWeakRefs(op);
    hurray_file_destroy(self->f); /* no use can be in flight: it would hold a reference */
    self->f = NULL;
    if (self->lock != NULL) PyThread_free_lock(self->lock);
    Py_CLEAR(self->path);
    Py_CLEAR(self->convert);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef file_methods[] = {
    {"keys", file_keys, METH_NOARGS,
     PyDoc_STR("keys($self, /)\n--\n\nThe top-level entry names, in file order (what "
               "load returns).")},
    {"metadata", file_metadata, METH_NOARGS,
     PyDoc_STR("metadata($self, /)\n--\n\nThe file's key-value section (load_kv's dict).")},
    {"descriptor", file_descriptor, METH_O,
     PyDoc_STR("descriptor($self, name, /)\n--\n\nThe entry's descriptor, from the index; "
               "no data is read.")},
    {"get_tensor", file_get_tensor, METH_O,
     PyDoc_STR("get_tensor($self, name, /)\n--\n\n"
               "Loads one entry (composite members too, by their names), reading or\n"
               "mapping only its bytes: a Tensor or Composite, or the framework's tensor.")},
    {"get_slice", file_get_slice, METH_O,
     PyDoc_STR("get_slice($self, name, /)\n--\n\nA FileSlice handle on a tensor entry; "
               "indexing it with basic indices reads only the rows they span.")},
    {"close", file_close, METH_NOARGS,
     PyDoc_STR("close($self, /)\n--\n\nReleases the file. Loaded tensors stay valid; further "
               "access raises ValueError.")},
    {"__enter__", file_enter_cm, METH_NOARGS,
     PyDoc_STR("__enter__($self, /)\n--\n\nReturns the handle.")},
    {"__exit__", (PyCFunction)(void (*)(void))file_exit, METH_FASTCALL,
     PyDoc_STR("__exit__($self, /, *exc)\n--\n\nCloses the handle.")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef file_getset[] = {
    {"closed", file_get_closed, NULL, PyDoc_STR("True after close()."), NULL},
    {"path", file_get_path, NULL, PyDoc_STR("The path the handle was opened on."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef file_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(FileObject, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot file_slots[] = {
    {Py_tp_doc, "A validated hurray file opened for lazy access (hurray.open)."},
    {Py_tp_methods, file_methods},
    {Py_tp_getset, file_getset},
    {Py_tp_members, file_members},
    {Py_tp_iter, file_iter},
    {Py_sq_length, file_len},
    {Py_sq_contains, file_contains},
    {Py_tp_repr, file_repr},
    {Py_tp_traverse, file_traverse},
    {Py_tp_clear, file_clear},
    {Py_tp_dealloc, file_dealloc},
    {0, NULL},
};

static PyType_Spec file_spec = {
    .name = "hurray._hurray.File",
    .basicsize = sizeof(FileObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = file_slots,
};

/* ---- FileSlice ------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *file; /* the File */
    size_t entry;
    uint8_t dtype;
    uint8_t rank;
    uint8_t sliceable; /* a dense row-major tensor with one buffer, no quantization */
    uint64_t byte_offset;
    uint64_t buffer_size;
    uint64_t shape[HURRAY_MAX_RANK];
    PyObject *descriptor; /* the Descriptor (shape, dtype for Python) */
} SliceObject;

#define SLICEOBJ(o) ((SliceObject *)(o))

static PyObject *file_get_slice(PyObject *op, PyObject *name) {
    FileObject *self = FILEOBJ(op);
    size_t i = 0;
    hrpy_state *st = NULL;
    struct hurray_file *f = file_entry(self, name, &st, &i);
    if (f == NULL) return NULL;
    if (hurray_file_entry_kind(f, i) != HURRAY_FILE_KIND_TENSOR) {
        file_done(self);
        return hrpy_raise_fmt(st, HRPY_CTX_FILE, HURRAY_E_UNSUPPORTED, "layout",
                              "get_slice(%R): a composite has no slices; get_tensor loads it",
                              name);
    }
    struct hurray_descriptor d;
    if (file_entry_descriptor(self, f, i, st, &d) < 0) return NULL;
    SliceObject *s = PyObject_GC_New(SliceObject, st->FileSlice_Type);
    if (s == NULL) {
        hurray_descriptor_reset(&d);
        return NULL;
    }
    s->file = Py_NewRef(op);
    s->entry = i;
    s->dtype = d.dtype;
    s->rank = d.rank;
    s->byte_offset = d.byte_offset;
    s->buffer_size = d.buffer_count ? d.buffers[0].size : 0;
    memset(s->shape, 0, sizeof s->shape);
    int dynamic = 0;
    for (unsigned k = 0; k < d.rank; k++) {
        s->shape[k] = d.shape[k];
        if (d.shape[k] == HURRAY_DYNAMIC_DIM) dynamic = 1;
    }
    s->sliceable = d.layout.tag == HURRAY_LAYOUT_ROW_MAJOR && d.buffer_count == 1 &&
                   !d.quant && !dynamic;
    s->descriptor = hrpy_descriptor_from_c(st, &d);
    hurray_descriptor_reset(&d);
    PyObject_GC_Track((PyObject *)s);
    if (s->descriptor == NULL) {
        Py_DECREF(s);
        return NULL;
    }
    return (PyObject *)s;
}

/* One dimension of a basic selection: `count` indices start, start + step, ...; `keep` 0
 * for an integer index (the dimension is dropped). */
struct dim_sel {
    int64_t start, step, count;
    int keep;
};

/* The key as one selection per dimension (numpy's basic indexing: ints, slices, one
 * Ellipsis; no None, arrays or booleans). */
static int parse_key(hrpy_state *st, SliceObject *s, PyObject *key, struct dim_sel *sel) {
    PyObject *items = PyTuple_Check(key) ? Py_NewRef(key) : PyTuple_Pack(1, key);
    if (items == NULL) return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(items), ell = -1, used = 0;
    int rc = -1;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *k = PyTuple_GET_ITEM(items, j);
        if (k == Py_Ellipsis) {
            if (ell >= 0) {
                PyErr_SetString(PyExc_IndexError,
                                "get_slice: an index can only have a single ellipsis ('...')");
                goto done;
            }
            ell = j;
        } else if (PySlice_Check(k) || (PyIndex_Check(k) && !PyBool_Check(k))) {
            used++;
        } else {
            hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "key",
                           "get_slice: only basic indices (int, slice, ...) are supported, "
                           "not %.100s",
                           Py_TYPE(k)->tp_name);
            goto done;
        }
    }
    if (used > s->rank) {
        PyErr_Format(PyExc_IndexError,
                     "get_slice: too many indices: the tensor has %u dimensions, %zd were "
                     "indexed",
                     (unsigned)s->rank, used);
        goto done;
    }
    unsigned d = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *k = PyTuple_GET_ITEM(items, j);
        if (k == Py_Ellipsis) {
            for (Py_ssize_t e = 0; e < (Py_ssize_t)s->rank - used; e++, d++) {
                struct dim_sel full = {0, 1, (int64_t)s->shape[d], 1};
                sel[d] = full;
            }
            continue;
        }
        Py_ssize_t ext = (Py_ssize_t)s->shape[d];
        if (PySlice_Check(k)) {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(k, &start, &stop, &step) < 0) goto done;
            Py_ssize_t cnt = PySlice_AdjustIndices(ext, &start, &stop, step);
            struct dim_sel one = {start, step, cnt, 1};
            sel[d++] = one;
        } else {
            Py_ssize_t v = PyNumber_AsSsize_t(k, PyExc_IndexError);
            if (v == -1 && PyErr_Occurred()) goto done;
            if (v < 0) v += ext;
            if (v < 0 || v >= ext) {
                PyErr_Format(PyExc_IndexError,
                             "get_slice: index %zd is out of bounds for dimension %u with "
                             "size %zd",
                             PyNumber_AsSsize_t(k, NULL), d, ext);
                goto done;
            }
            struct dim_sel one = {v, 1, 1, 0};
            sel[d++] = one;
        }
    }
    for (; d < s->rank; d++) {
        struct dim_sel full = {0, 1, (int64_t)s->shape[d], 1};
        sel[d] = full;
    }
    rc = 0;
done:
    Py_DECREF(items);
    return rc;
}

/* Copies the selection out of `src`, the row-major elements starting at element `base`,
 * into dst (compact, row-major), for dimensions k..rank. */
static void gather(const struct dim_sel *sel, const int64_t *stride, unsigned rank, unsigned k,
                   const uint8_t *src, int64_t at, size_t esize, uint8_t **dst) {
    const struct dim_sel *s = &sel[k];
    if (k + 1 == rank) {
        if (s->step == 1) {
            size_t n = (size_t)s->count * esize;
            memcpy(*dst, src + (size_t)(at + s->start) * esize, n);
            *dst += n;
            return;
        }
        for (int64_t j = 0; j < s->count; j++) {
            memcpy(*dst, src + (size_t)(at + s->start + j * s->step) * esize, esize);
            *dst += esize;
        }
        return;
    }
    for (int64_t j = 0; j < s->count; j++)
        gather(sel, stride, rank, k + 1, src, at + (s->start + j * s->step) * stride[k], esize,
               dst);
}

/* Rows of the first dimension read one at a time (not one covering read) when a row is
 * at least this large: a strided or column selection of a big tensor reads only the rows
 * it touches, through a scratch buffer of one row's span. */
#define SLICE_ROW_READ ((uint64_t)64 << 10)

static PyObject *slice_getitem(PyObject *op, PyObject *key) {
    SliceObject *s = SLICEOBJ(op);
    FileObject *file = FILEOBJ(s->file);
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(op));
    struct dim_sel sel[HURRAY_MAX_RANK];
    int64_t stride[HURRAY_MAX_RANK];
    if (st == NULL) return NULL;
    if (!s->sliceable)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "layout",
                              "get_slice: only dense row_major tensors without quantization "
                              "and with known extents can be sliced; get_tensor loads the "
                              "whole tensor");
    if (parse_key(st, s, key, sel) < 0) return NULL;
    uint16_t bits = hurray_dtype_bits(s->dtype);
    unsigned rank = s->rank;
    struct hrpy_tensor_spec spec;
    hrpy_tensor_spec_init(&spec, st);
    spec.dtype = s->dtype;
    uint64_t count = 1;
    int empty = 0;
    for (unsigned k = 0; k < rank; k++) {
        if (sel[k].count == 0) empty = 1;
        if (sel[k].keep) spec.shape[spec.rank++] = (uint64_t)sel[k].count;
        count *= (uint64_t)sel[k].count; /* <= the tensor's element count */
    }
    int64_t acc = 1;
    for (unsigned k = rank; k-- > 0;) {
        stride[k] = acc;
        acc *= (int64_t)s->shape[k];
    }
    /* the elements the selection spans, [lo, hi), and whether it is contiguous: every
     * dimension before m selects one index, m steps by 1, those after are whole */
    int64_t lo = 0, hi = 1;
    int contiguous = 1;
    if (!empty) {
        for (unsigned k = 0; k < rank; k++) {
            int64_t first = sel[k].start, last = sel[k].start + (sel[k].count - 1) * sel[k].step;
            lo += (first < last ? first : last) * stride[k];
            hi += (first < last ? last : first) * stride[k];
        }
        unsigned m = 0;
        while (m < rank && sel[m].count == 1) m++;
        if (m < rank && sel[m].step != 1) contiguous = 0;
        for (unsigned k = m + 1; k < rank; k++)
            if (sel[k].start != 0 || sel[k].step != 1 ||
                (uint64_t)sel[k].count != s->shape[k])
                contiguous = 0;
    } else {
        hi = 0;
    }
    uint64_t out_bits = count * bits;
    if (bits % 8 != 0 && (!contiguous || ((uint64_t)lo * bits) % 8 != 0 || out_bits % 8 != 0))
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "key",
                              "get_slice: a %u-bit element type is sliced only along whole "
                              "bytes of contiguous rows",
                              (unsigned)bits);
    uint64_t nbytes = (out_bits + 7) / 8;
    void *data = NULL;
    uint8_t align = 0;
    PyObject *owner = hrpy_owned_new(st, nbytes, 0, &data, &align);
    if (owner == NULL) return NULL;
    struct hurray_error err;
    int status = HURRAY_OK;
    hurray_error_clear(&err);
    size_t esize = bits / 8;
    uint64_t off = s->byte_offset + (uint64_t)lo * bits / 8;
    uint64_t row_bytes = rank ? (uint64_t)stride[0] * esize : 0;
    int per_row = !contiguous && rank >= 2 && row_bytes >= SLICE_ROW_READ;
    uint64_t span = contiguous ? 0 : per_row ? row_bytes : (uint64_t)(hi - lo) * esize;
    uint8_t *scratch = NULL;
    if (span) {
        scratch = PyMem_RawMalloc((size_t)span);
        if (scratch == NULL) {
            Py_DECREF(owner);
            return PyErr_NoMemory();
        }
    }
    struct hurray_file *f = file_use(file);
    if (f == NULL) {
        PyMem_RawFree(scratch);
        Py_DECREF(owner);
        return NULL;
    }
    size_t i = s->entry;
    Py_BEGIN_ALLOW_THREADS
    if (empty) {
        /* nothing to read */
    } else if (contiguous) {
        status = hurray_file_read_buffer(f, i, 0, off, nbytes, data, &err);
    } else if (!per_row) {
        uint8_t *dst = data;
        status = hurray_file_read_buffer(f, i, 0, off, span, scratch, &err);
        if (status == HURRAY_OK) gather(sel, stride, rank, 0, scratch, -lo, esize, &dst);
    } else {
        uint8_t *dst = data;
        for (int64_t j = 0; status == HURRAY_OK && j < sel[0].count; j++) {
            int64_t row = sel[0].start + j * sel[0].step;
            uint64_t at = s->byte_offset + (uint64_t)row * row_bytes;
            status = hurray_file_read_buffer(f, i, 0, at, row_bytes, scratch, &err);
            if (status == HURRAY_OK) gather(sel, stride, rank, 1, scratch, 0, esize, &dst);
        }
    }
    Py_END_ALLOW_THREADS
    file_done(file);
    PyMem_RawFree(scratch);
    if (status != HURRAY_OK) {
        Py_DECREF(owner);
        return hrpy_io_raise_file(st, status, &err, file->path);
    }
    struct hrpy_part part = {data, nbytes, owner, 0, align};
    PyObject *t = hrpy_tensor_build(st, &spec, &part, 1);
    Py_DECREF(owner);
    return file_convert(file, t);
}

static PyObject *slice_get_shape(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    SliceObject *s = SLICEOBJ(op);
    return hrpy_shape_to_tuple(s->rank, s->shape);
}

static PyObject *slice_get_shape_list(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    PyObject *t = slice_get_shape(op, NULL);
    if (t == NULL) return NULL;
    PyObject *l = PySequence_List(t);
    Py_DECREF(t);
    return l;
}

static PyObject *slice_get_dtype(PyObject *op, void *Py_UNUSED(c)) {
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(op));
    if (st == NULL) return NULL;
    return Py_XNewRef(hrpy_dtype_get(st, SLICEOBJ(op)->dtype, "dtype"));
}

static PyObject *slice_get_descriptor(PyObject *op, void *Py_UNUSED(c)) {
    return Py_NewRef(SLICEOBJ(op)->descriptor);
}

static Py_ssize_t slice_len(PyObject *op) {
    SliceObject *s = SLICEOBJ(op);
    if (s->rank == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor slice");
        return -1;
    }
    return (Py_ssize_t)s->shape[0];
}

static int slice_traverse(PyObject *op, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(SLICEOBJ(op)->file);
    return 0;
}

static int slice_clear(PyObject *op) {
    Py_CLEAR(SLICEOBJ(op)->file);
    return 0;
}

static void slice_dealloc(PyObject *op) {
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    Py_CLEAR(SLICEOBJ(op)->file);
    Py_CLEAR(SLICEOBJ(op)->descriptor);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef slice_methods[] = {
    {"get_shape", slice_get_shape_list, METH_NOARGS,
     PyDoc_STR("get_shape($self, /)\n--\n\nThe tensor's shape (safetensors' spelling).")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef slice_getset[] = {
    {"shape", (getter)(void (*)(void))slice_get_shape, NULL, PyDoc_STR("The tensor's shape."),
     NULL},
    {"dtype", slice_get_dtype, NULL, PyDoc_STR("The tensor's hurray.Dtype."), NULL},
    {"descriptor", slice_get_descriptor, NULL, PyDoc_STR("The tensor's Descriptor."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot slice_slots[] = {
    {Py_tp_doc, "A tensor entry of an open hurray file, indexed lazily: f[key] reads only the "
                "byte range of the rows the basic index selects and returns a new tensor."},
    {Py_tp_methods, slice_methods},
    {Py_tp_getset, slice_getset},
    {Py_mp_subscript, slice_getitem},
    {Py_mp_length, slice_len},
    {Py_tp_traverse, slice_traverse},
    {Py_tp_clear, slice_clear},
    {Py_tp_dealloc, slice_dealloc},
    {0, NULL},
};

static PyType_Spec slice_spec = {
    .name = "hurray._hurray.FileSlice",
    .basicsize = sizeof(SliceObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = slice_slots,
};

/* ---- _open ------------------------------------------------------------------------------ */

#define open_limit_names hrpy_file_limit_names
#define N_OPEN_LIMITS HRPY_N_FILE_LIMITS

/* _open(path, mmap=True, convert=None, *, max_...=None) -> File */
static PyObject *lazy_open(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
    static const char *const names[] = {"path",
                                        "mmap",
                                        "convert",
                                        HRPY_FILE_LIMIT_KEYWORDS};
    PyObject *a[3 + N_OPEN_LIMITS];
    struct hurray_limits limits;
    hrpy_state *st = hrpy_state_from_module(module);
    if (hrpy_bind("open", args, nargs, kwnames, names, 3 + N_OPEN_LIMITS, 3, 1, a) < 0)
        return NULL;
    if (hrpy_limits_from_args(a + 3, open_limit_names, N_OPEN_LIMITS, &limits) < 0) return NULL;
    int mmap = 1;
    if (a[1] != NULL && (mmap = PyObject_IsTrue(a[1])) < 0) return NULL;
    PyObject *convert = a[2] != NULL && a[2] != Py_None ? a[2] : NULL;
    if (convert != NULL && !PyCallable_Check(convert))
        return PyErr_Format(PyExc_TypeError, "open: convert must be callable, not %.100s",
                            Py_TYPE(convert)->tp_name);
    PyObject *path = hrpy_io_path_arg(a[0], "open");
    if (path == NULL) return NULL;
    struct hurray_file *f =
        hrpy_io_open(st, path, mmap ? HURRAY_FILE_MMAP : HURRAY_FILE_COPY, HURRAY_FILE_PARTS_ALL,
                     &limits);
    if (f == NULL) {
        Py_DECREF(path);
        return NULL;
    }
    PyThread_type_lock lock = PyThread_allocate_lock();
    FileObject *self = lock == NULL ? NULL : PyObject_GC_New(FileObject, st->File_Type);
    if (self == NULL) {
        if (lock != NULL) PyThread_free_lock(lock);
        else PyErr_NoMemory();
        hurray_file_destroy(f);
        Py_DECREF(path);
        return NULL;
    }
    self->lock = lock;
    self->f = f;
    self->path = path;
    self->convert = Py_XNewRef(convert);
    self->busy = 0;
    self->closed = 0;
    self->mmap = (uint8_t)mmap;
    self->weakreflist = NULL;
    PyObject_GC_Track((PyObject *)self);
    return (PyObject *)self;
}

static PyMethodDef lazy_methods[] = {
    {"_open", (PyCFunction)(void (*)(void))lazy_open, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("_open($module, /, path, mmap=True, convert=None, *,\n"
               "      max_descriptor_bytes=None, max_buffer_bytes=None, max_rank=None,\n"
               "      max_composite_depth=None, max_composite_members=None,\n"
               "      max_kv_entries=None, max_kv_bytes=None, max_name_bytes=None,\n"
               "      max_file_tensors=None)\n--\n\n"
               "hurray.open's handle; convert is applied to each returned tensor.")},
    {NULL, NULL, 0, NULL},
};

int hrpy_lazy_init(PyObject *module, hrpy_state *st) {
    st->File_Type = hrpy_add_type(module, &file_spec, NULL);
    if (st->File_Type == NULL) return -1;
    st->FileSlice_Type = hrpy_add_type(module, &slice_spec, NULL);
    if (st->FileSlice_Type == NULL) return -1;
    return PyModule_AddFunctions(module, lazy_methods);
}
