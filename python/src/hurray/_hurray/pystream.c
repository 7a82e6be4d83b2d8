/* hurray.StreamReader and hurray.StreamWriter (requirements § Streaming, § Writer output,
 * § Error Handling; stream.md).
 *
 * The frames, next-item semantics, limits, cross_machine, the composite rules, the end
 * frame and the transports are libhurray's stream reader and writer
 * (hurray_stream_reader_* / _writer_*). This file gives them their Python shape: the
 * iterator and context-manager protocols, close / finish, keyword limits and timeouts, the
 * end state, and Python's signal handling. It makes no system call of its own: a file
 * descriptor, or an object with fileno() (file, socket, pipe), goes to libhurray's
 * descriptor reader or writer, which duplicates it (closing or finishing never closes the
 * caller's) and reads and writes it through libhurray's one OS layer.
 *
 * Blocking (stream.md HR-STREAM-14, -15): every call into the C reader or writer runs with
 * the GIL released. When a wait is interrupted by a signal, libhurray calls the interrupt
 * hook below, which takes the GIL back and runs Python's signal handlers (PEP 475): a
 * handler that raises -- KeyboardInterrupt on Ctrl-C -- stops the read or write, and its
 * exception is what the call raises (the stream is then failed, mid-frame). A timeout
 * (timeout=, by default a socket's own gettimeout()) bounds each wait for the peer; a stall
 * raises StreamTimeoutError (a StreamError and a TimeoutError).
 *
 * Threads: a reader or writer is used by one thread at a time: a per-object lock
 * serialises calls (a second thread waits, with the GIL released). close() and .offset /
 * .end are the exception: they do not wait for a read in progress. close() wakes a read
 * blocked in another thread at once (libhurray's waker); that __next__ then raises
 * StopIteration. A reader also takes bytes-like data (bytes, bytearray, memoryview, mmap;
 * held, not copied); a writer with no destination builds the stream in memory (getvalue()).
 * io.BytesIO has no descriptor and is refused with a TypeError that says what to do
 * instead.
 *
 * Invariant: the C reader pointer is freed only with both the GIL and the object's lock
 * held, so a thread holding just the GIL (close, offset, end) may use it. */
#include "state.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <pythread.h>
#include <structmember.h>

/* ---- signals and the GIL ------------------------------------------------------------------ */

/* The interrupt hook's context: the thread state saved while a call runs without the GIL. */
struct released {
    PyThreadState *ts; /* set while a call runs with the GIL released */
    int raised;        /* a signal handler raised: its exception is pending */
};

/* libhurray's interrupt hook (stream.md HR-STREAM-14): run Python's signal handlers
 * (PEP 475); non-zero -- stop the read or write -- when one raised. */
static int run_signal_handlers(void *ctx) {
    struct released *g = ctx;
    if (g->ts == NULL) return 0;
    PyEval_RestoreThread(g->ts);
    int rc = PyErr_CheckSignals();
    g->ts = PyEval_SaveThread();
    if (rc < 0) g->raised = 1;
    return rc < 0;
}

/* Runs `expr` with the GIL released; the interrupt hook can take it back. */
#define RUN_RELEASED(g, status, expr)                                                          \
    do {                                                                                       \
        (g)->raised = 0;                                                                       \
        (g)->ts = PyEval_SaveThread();                                                         \
        status = (expr);                                                                       \
        PyEval_RestoreThread((g)->ts);                                                         \
        (g)->ts = NULL;                                                                        \
    } while (0)

/* Raises a stream failure: the exception a signal handler raised, or the mapped class
 * (StreamTimeoutError for a timeout; .errno from the record's system error). */
static PyObject *raise_stream(hrpy_state *st, const struct released *g, int status,
                              const struct hurray_error *err) {
    if (g != NULL && g->raised && PyErr_Occurred()) return NULL;
    return hrpy_raise_status(st, HRPY_CTX_STREAM, status, err);
}

/* timeout= (seconds) -> milliseconds for libhurray: 0 = wait forever. `given` is the
 * keyword's value or NULL; without it, an object with gettimeout() (a socket) gives its
 * own (None, or 0.0 for a non-blocking socket: no bound, the stream waits). */
static int timeout_arg(PyObject *given, PyObject *transport, const char *who, int *ms) {
    PyObject *t = NULL;
    *ms = 0;
    if (given != NULL) {
        t = Py_NewRef(given);
    } else if (transport != NULL && PyObject_HasAttrString(transport, "gettimeout")) {
        t = PyObject_CallMethod(transport, "gettimeout", NULL);
        if (t == NULL) return -1;
        if (t != Py_None) {
            double d = PyFloat_AsDouble(t);
            if (d == -1.0 && PyErr_Occurred()) {
                Py_DECREF(t);
                return -1;
            }
            if (d == 0.0) { /* a non-blocking socket: there is nothing to bound */
                Py_DECREF(t);
                return 0;
            }
        }
    } else {
        return 0;
    }
    if (t == Py_None) {
        Py_DECREF(t);
        return 0;
    }
    if (PyBool_Check(t) || !(PyFloat_Check(t) || PyLong_Check(t))) {
        PyErr_Format(PyExc_TypeError, "%s: timeout must be a number of seconds or None, not %.100s",
                     who, Py_TYPE(t)->tp_name);
        Py_DECREF(t);
        return -1;
    }
    double d = PyFloat_AsDouble(t);
    Py_DECREF(t);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    if (isnan(d) || d <= 0.0) {
        PyErr_Format(PyExc_ValueError, "%s: timeout must be > 0 seconds or None, got %R", who,
                     given != NULL ? given : Py_None);
        return -1;
    }
    if (isinf(d) || d * 1000.0 >= (double)INT_MAX) return 0; /* no bound */
    double m = ceil(d * 1000.0);
    *ms = m < 1.0 ? 1 : (int)m;
    return 0;
}

/* ---- transports from Python objects ------------------------------------------------------- */

enum { TRANSPORT_FD, TRANSPORT_MEMORY };

static const char reader_hint[] =
    "a stream reads from a file descriptor (int), an object with fileno() (a file, socket "
    "or pipe) or bytes-like data; for an in-memory buffer such as io.BytesIO, pass its "
    "getvalue()";
static const char writer_hint[] =
    "a stream writes to a file descriptor (int) or an object with fileno() (a file, socket "
    "or pipe); for an in-memory buffer such as io.BytesIO, use StreamWriter() with no "
    "destination and write its getvalue() to the buffer";

/* TypeError naming the object and the fix, chained to `cause` (may be NULL). */
static void refuse_transport(PyObject *obj, const char *who, const char *hint, PyObject *cause) {
    PyErr_Format(PyExc_TypeError, "%s: %.100s has no file descriptor, so it cannot be a stream %s; %s",
                 who, Py_TYPE(obj)->tp_name, hint == reader_hint ? "source" : "destination",
                 hint);
    if (cause == NULL) return;
    PyObject *exc = hrpy_take_exception();
    if (exc != NULL) {
        PyException_SetCause(exc, Py_NewRef(cause));
        PyException_SetContext(exc, cause); /* steals */
    } else {
        Py_DECREF(cause);
    }
    hrpy_restore_exception(exc);
}

/* Resolves a source / destination. Returns TRANSPORT_FD with *fd (the caller's, not yet
 * duplicated), TRANSPORT_MEMORY with *view held (reader only), or -1. */
static int transport_arg(PyObject *obj, const char *who, int reader, int *fd, Py_buffer *view) {
    const char *hint = reader ? reader_hint : writer_hint;
    if (PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a file descriptor, not a bool", who,
                     reader ? "source" : "destination");
        return -1;
    }
    if (PyLong_Check(obj)) {
        long v = PyLong_AsLong(obj);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < 0 || v > INT_MAX) {
            PyErr_Format(PyExc_ValueError, "%s: %ld is not a file descriptor", who, v);
            return -1;
        }
        *fd = (int)v;
        return TRANSPORT_FD;
    }
    if (reader && PyObject_CheckBuffer(obj)) {
        if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) return -1;
        return TRANSPORT_MEMORY;
    }
    if (!PyObject_HasAttrString(obj, "fileno")) {
        refuse_transport(obj, who, hint, NULL);
        return -1;
    }
    PyObject *r = PyObject_CallMethod(obj, "fileno", NULL);
    if (r == NULL) {
        /* io.BytesIO: fileno() raises io.UnsupportedOperation */
        refuse_transport(obj, who, hint, hrpy_take_exception());
        return -1;
    }
    if (!PyLong_Check(r) || PyBool_Check(r)) {
        PyErr_Format(PyExc_TypeError, "%s: %.100s.fileno() returned %.100s, not an int", who,
                     Py_TYPE(obj)->tp_name, Py_TYPE(r)->tp_name);
        Py_DECREF(r);
        return -1;
    }
    long v = PyLong_AsLong(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0 || v > INT_MAX) {
        PyErr_Format(PyExc_ValueError, "%s: %.100s.fileno() returned %ld", who,
                     Py_TYPE(obj)->tp_name, v);
        return -1;
    }
    if (!reader && PyObject_HasAttrString(obj, "flush")) {
        /* what the caller wrote through the object lands before the first frame */
        PyObject *f = PyObject_CallMethod(obj, "flush", NULL);
        if (f == NULL) return -1;
        Py_DECREF(f);
    }
    *fd = (int)v;
    return TRANSPORT_FD;
}

/* One thread at a time per object; a waiting thread does not hold the GIL. A call from
 * the thread that is inside the object already (a signal handler run during a blocked
 * read, closing the reader) is RuntimeError rather than a deadlock, as in io.Buffered*. */
static int lock_acquire(PyThread_type_lock lock, unsigned long *owner) {
    unsigned long me = PyThread_get_thread_ident();
    if (*owner == me) {
        PyErr_SetString(PyExc_RuntimeError,
                        "reentrant call: this thread is inside the stream already (a signal "
                        "handler interrupting a read or write)");
        return -1;
    }
    if (!PyThread_acquire_lock(lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
    *owner = me;
    return 0;
}

static void lock_release(PyThread_type_lock lock, unsigned long *owner) {
    *owner = 0;
    PyThread_release_lock(lock);
}

/* ---- StreamReader ------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    struct hurray_stream_reader *r; /* NULL once released */
    PyThread_type_lock lock;
    unsigned long owner; /* the thread inside a call, 0 when none */
    struct released g;
    Py_buffer src;
    uint8_t has_src;
    uint8_t closed; /* close() was called: exhausted from then on */
    int end_seen;   /* the end state when the C reader was released */
    PyObject *weakreflist;
} ReaderObject;

#define READER(o) ((ReaderObject *)(o))

/* With the GIL and the lock (or from dealloc): frees the C reader, releases the source. */
static void reader_release(ReaderObject *self) {
    if (self->r != NULL) self->end_seen = hurray_stream_reader_end(self->r);
    hurray_stream_reader_destroy(self->r);
    self->r = NULL;
    if (self->has_src) {
        PyBuffer_Release(&self->src);
        self->has_src = 0;
    }
}

static PyObject *reader_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    /* the limits first (one table, io.c), then the options; the KV and name limits bound an
     * annotation frame (stream.md HR-STREAM-17), max_alignment_slack the live items' declared
     * alignments (errors-and-limits.md HR-LIMIT-2) */
    static const char *const names[] = {"source",           "max_descriptor_bytes",
                                        "max_buffer_bytes", "max_composite_depth",
                                        "max_composite_members", "max_rank",
                                        "max_kv_entries",   "max_kv_bytes",
                                        "max_name_bytes",   "max_alignment_slack",
                                        "cross_machine",    "timeout",
                                        "require_end_frame"};
    enum { N_LIMITS = 9, A_CROSS = 10, A_TIMEOUT = 11, A_NEED_END = 12, A_COUNT = 13 };
    PyObject *a[A_COUNT];
    hrpy_state *st = hrpy_state_from_type(type);
    if (st == NULL) return NULL;
    if (hrpy_bind_tuple("StreamReader", args, kwargs, names, A_COUNT, 1, 1, a) < 0) return NULL;
    struct hurray_limits limits;
    if (hrpy_limits_from_args(a + 1, names + 1, N_LIMITS, &limits) < 0) return NULL;
    int cross = 0, need_end = 0;
    if (a[A_CROSS] != NULL && (cross = PyObject_IsTrue(a[A_CROSS])) < 0) return NULL;
    if (a[A_NEED_END] != NULL && (need_end = PyObject_IsTrue(a[A_NEED_END])) < 0) return NULL;
    ReaderObject *self = (ReaderObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    int fd = -1, timeout_ms = 0;
    int kind = transport_arg(a[0], "StreamReader", 1, &fd, &self->src);
    if (kind < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->has_src = kind == TRANSPORT_MEMORY;
    if (kind == TRANSPORT_FD && timeout_arg(a[A_TIMEOUT], a[0], "StreamReader", &timeout_ms) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    if (kind == TRANSPORT_MEMORY && a[A_TIMEOUT] != NULL && a[A_TIMEOUT] != Py_None &&
        timeout_arg(a[A_TIMEOUT], NULL, "StreamReader", &timeout_ms) < 0) { /* checked, unused */
        Py_DECREF(self);
        return NULL;
    }
    struct hurray_stream_reader_options opt;
    hurray_stream_reader_options_init(&opt);
    opt.limits = &limits;
    opt.allocator = &hrpy_raw_allocator;
    opt.cross_machine = cross;
    opt.require_end_frame = need_end;
    opt.timeout_ms = timeout_ms;
    opt.on_interrupt = run_signal_handlers;
    opt.interrupt_ctx = &self->g;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status;
    if (kind == TRANSPORT_MEMORY)
        status = hurray_stream_reader_create_memory((const uint8_t *)self->src.buf,
                                                    (size_t)self->src.len, &opt, &self->r, &err);
    else
        status = hurray_stream_reader_create_fd(fd, &opt, &self->r, &err);
    if (status != HURRAY_OK) {
        raise_stream(st, NULL, status, &err);
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* The name (str or None) and metadata (dict, {} for none) of the item the C reader
 * last yielded (stream.md HR-STREAM-18), read under the reader's lock. */
static int annotation_objects(hrpy_state *st, const struct hurray_stream_reader *r,
                              PyObject **name, PyObject **metadata) {
    struct hurray_stream_annotation a;
    hurray_stream_reader_annotation(r, &a);
    struct hurray_kv kv;
    hurray_kv_init(&kv);
    kv.entries = a.metadata;
    kv.count = a.metadata_count;
    *name = a.name ? PyUnicode_DecodeUTF8(a.name, (Py_ssize_t)a.name_len, "strict")
                   : Py_NewRef(Py_None);
    if (*name == NULL) return -1;
    *metadata = hrpy_kv_to_dict(st, &kv);
    if (*metadata == NULL) {
        Py_CLEAR(*name);
        return -1;
    }
    return 0;
}

/* One item: the value alone (iteration), or a StreamItem(name, value, metadata)
 * (read_item). NULL without an exception at the end. */
static PyObject *reader_read(PyObject *op, int annotated) {
    ReaderObject *self = READER(op);
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(op));
    if (st == NULL) return NULL;
    PyObject *name = NULL, *metadata = NULL;
    struct hurray_item *item = NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = HURRAY_OK;
    if (lock_acquire(self->lock, &self->owner) < 0) return NULL;
    if (self->r == NULL || self->closed) { /* closed: exhausted, not an error */
        reader_release(self);
        lock_release(self->lock, &self->owner);
        return NULL;
    }
    RUN_RELEASED(&self->g, status, hurray_stream_reader_next(self->r, &item, &err));
    if (self->closed) { /* closed while we read (also from a signal handler): close wins */
        hurray_item_destroy(item);
        item = NULL;
        status = HURRAY_OK;
        reader_release(self);
    }
    /* the annotation's bytes are the reader's until its next read: taken under the lock */
    if (annotated && item != NULL && annotation_objects(st, self->r, &name, &metadata) < 0) {
        lock_release(self->lock, &self->owner);
        hurray_item_destroy(item);
        return NULL;
    }
    lock_release(self->lock, &self->owner);
    if (status != HURRAY_OK) return raise_stream(st, &self->g, status, &err);
    if ((self->g.raised && PyErr_Occurred()) || item == NULL) {
        /* a handler raised, and the read went on; or the end: StopIteration / None */
        hurray_item_destroy(item);
        Py_XDECREF(name);
        Py_XDECREF(metadata);
        return NULL;
    }
    PyObject *owner = hrpy_item_memory_new(st, item); /* owns item, also on failure */
    PyObject *obj = owner ? hrpy_item_to_object(st, item, owner, 0) : NULL;
    Py_XDECREF(owner);
    if (!annotated || obj == NULL) {
        Py_XDECREF(name);
        Py_XDECREF(metadata);
        return obj;
    }
    PyObject *rec = PyStructSequence_New(st->StreamItem_Type);
    if (rec == NULL) {
        Py_DECREF(obj);
        Py_DECREF(name);
        Py_DECREF(metadata);
        return NULL;
    }
    PyStructSequence_SetItem(rec, 0, name); /* steals */
    PyStructSequence_SetItem(rec, 1, obj);
    PyStructSequence_SetItem(rec, 2, metadata);
    return rec;
}

static PyObject *reader_iternext(PyObject *op) { return reader_read(op, 0); }

static PyObject *reader_read_item(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    PyObject *rec = reader_read(op, 1);
    if (rec == NULL && !PyErr_Occurred()) Py_RETURN_NONE;
    return rec;
}

/* iter(reader.read_item, None): the callable iterator stops at the first None. */
static PyObject *reader_items(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    PyObject *read = PyObject_GetAttrString(op, "read_item");
    if (read == NULL) return NULL;
    PyObject *it = PyCallIter_New(read, Py_None);
    Py_DECREF(read);
    return it;
}

/* stream.md HR-STREAM-15: wakes a read blocked in another thread at once, then waits
 * (without the GIL) for it to return before releasing. From a signal handler running
 * inside this reader's own read, it only wakes it: the read releases on its way out. */
static PyObject *reader_close(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    ReaderObject *self = READER(op);
    self->closed = 1;
    if (self->r != NULL) hurray_stream_reader_close(self->r);
    if (self->owner == PyThread_get_thread_ident()) Py_RETURN_NONE;
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(self->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
    reader_release(self);
    PyThread_release_lock(self->lock);
    Py_RETURN_NONE;
}

static PyObject *return_self(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    return Py_NewRef(op);
}

static PyObject *reader_exit(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
    (void)args;
    (void)nargs;
    PyObject *r = reader_close(op, NULL);
    if (r == NULL) return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *reader_get_closed(PyObject *op, void *Py_UNUSED(c)) {
    return PyBool_FromLong(READER(op)->closed);
}

/* Without the lock: an atomic read in libhurray, while a read may be in progress. */
static PyObject *reader_get_offset(PyObject *op, void *Py_UNUSED(c)) {
    ReaderObject *self = READER(op);
    if (self->closed || self->r == NULL) Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(hurray_stream_reader_offset(self->r));
}

/* stream.md HR-STREAM-13: "end_frame", "eof", or None (not ended, failed, closed first). */
static PyObject *reader_get_end(PyObject *op, void *Py_UNUSED(c)) {
    ReaderObject *self = READER(op);
    int end = self->r != NULL ? hurray_stream_reader_end(self->r) : self->end_seen;
    switch (end) {
    case HURRAY_STREAM_END_FRAME: return PyUnicode_FromString("end_frame");
    case HURRAY_STREAM_END_EOF: return PyUnicode_FromString("eof");
    default: Py_RETURN_NONE;
    }
}

static void reader_dealloc(PyObject *op) {
    PyTypeObject *tp = Py_TYPE(op);
    ReaderObject *self = READER(op);
    PyObject_GC_UnTrack(op);
    if (self->weakreflist != NULL) PyObject_ClearWeakRefs(op);
    reader_release(self);
    if (self->lock != NULL) PyThread_free_lock(self->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef reader_methods[] = {
    {"read_item", reader_read_item, METH_NOARGS,
     PyDoc_STR("read_item($self, /)\n--\n\n"
               "The next item with its name and metadata (stream.md HR-STREAM-18): a\n"
               "StreamItem(name, value, metadata) -- name a str or None, value the Tensor or\n"
               "Composite, metadata a dict ({} when the item has none) -- or None at the end.\n"
               "Errors as for iteration.")},
    {"items", reader_items, METH_NOARGS,
     PyDoc_STR("items($self, /)\n--\n\n"
               "Iterates the remaining items as StreamItem(name, value, metadata): for name,\n"
               "value, metadata in reader.items(). Iterating the reader itself yields the\n"
               "values alone.")},
    {"close", reader_close, METH_NOARGS,
     PyDoc_STR("close($self, /)\n--\n\nReleases the transport (the duplicated descriptor, the held\n"
               "bytes) and drops a partly read item. Idempotent; the reader then iterates as\n"
               "exhausted. A read blocked in another thread is woken at once and raises\n"
               "StopIteration (stream.md HR-STREAM-15); close() returns as soon as it has.")},
    {"__enter__", return_self, METH_NOARGS, PyDoc_STR("__enter__($self, /)\n--\n\nReturns the reader.")},
    {"__exit__", (PyCFunction)(void (*)(void))reader_exit, METH_FASTCALL,
     PyDoc_STR("__exit__($self, /, *exc)\n--\n\nclose(); exceptions propagate.")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef reader_getset[] = {
    {"closed", reader_get_closed, NULL, PyDoc_STR("True after close()."), NULL},
    {"offset", reader_get_offset, NULL,
     PyDoc_STR("Stream offset past the last byte parsed (the end of the last item's last\n"
               "frame after an item, past the end frame at the end); None once closed. Readable\n"
               "from another thread while a read is blocked."),
     NULL},
    {"end", reader_get_end, NULL,
     PyDoc_STR("How the stream ended (stream.md HR-STREAM-13): 'end_frame' (its writer\n"
               "finished it), 'eof' (the input ended between two items without an end frame:\n"
               "an unfinished writer, a sender that died, or a stream of the first revision),\n"
               "or None (not ended yet, failed, or closed first)."),
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef reader_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(ReaderObject, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot reader_slots[] = {
    {Py_tp_doc,
     (void *)PyDoc_STR(
         "StreamReader(source, *, max_descriptor_bytes=None, max_buffer_bytes=None,\n"
         "             max_composite_depth=None, max_composite_members=None, max_rank=None,\n"
         "             max_kv_entries=None, max_kv_bytes=None, max_name_bytes=None,\n"
         "             max_alignment_slack=None, cross_machine=False, timeout=...,\n"
         "             require_end_frame=False)\n"
         "--\n\n"
         "Iterates the items of a Hurray stream: each a hurray.Tensor, or a whole\n"
         "hurray.Composite (head and members as one item), yielded as soon as its last byte\n"
         "has arrived; StopIteration at the end (an end frame, or the end of input between\n"
         "items: .end says which). `source` is a file descriptor (int)\n"
         "or an object with fileno() (duplicated: closing the reader never closes the\n"
         "caller's), or bytes-like data (held, not copied). io.BytesIO is refused (pass\n"
         "its getvalue()). The limits bound what a frame may claim before anything is\n"
         "allocated (None: the format's defaults); max_alignment_slack (1 MiB) bounds the\n"
         "padding the declared buffer alignments of the items still alive (those yielded\n"
         "and kept, and the one being read) may need beyond their buffer bytes; an item\n"
         "hands its share back when collected.\n"
         "Exceeding a limit, a corrupt frame, a stream cut inside a frame or a transport\n"
         "error raise StreamError, and the reader stays failed. cross_machine=True\n"
         "refuses buffers that are not producer_synced. require_end_frame=True makes a\n"
         "stream that ends without an end frame (a sender that died between items) a\n"
         "StreamError (TRUNCATED). timeout (seconds, or None)\n"
         "bounds each wait for the peer -- by default a socket's own gettimeout() -- and a\n"
         "stall raises StreamTimeoutError (a StreamError and a TimeoutError). Blocking reads\n"
         "release the GIL and run Python's signal handlers (Ctrl-C interrupts them). Context\n"
         "manager: close() on exit.")},
    {Py_tp_new, reader_new},
    {Py_tp_iter, PyObject_SelfIter},
    {Py_tp_iternext, reader_iternext},
    {Py_tp_methods, reader_methods},
    {Py_tp_getset, reader_getset},
    {Py_tp_members, reader_members},
    {Py_tp_traverse, hrpy_traverse_type_only}, /* the held source is not visited (tensor.c) */
    {Py_tp_dealloc, reader_dealloc},
    {0, NULL},
};

static PyType_Spec reader_spec = {
    .name = "hurray.StreamReader",
    .basicsize = sizeof(ReaderObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = reader_slots,
};

/* ---- StreamWriter ------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    struct hurray_stream_writer *w;
    PyThread_type_lock lock;
    unsigned long owner; /* the thread inside a call, 0 when none */
    struct released g;
    uint8_t finished;
    PyObject *weakreflist;
} WriterObject;

#define WRITER(o) ((WriterObject *)(o))

static PyObject *writer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"destination", "cross_machine", "timeout"};
    PyObject *a[3];
    hrpy_state *st = hrpy_state_from_type(type);
    if (st == NULL) return NULL;
    if (hrpy_bind_tuple("StreamWriter", args, kwargs, names, 3, 1, 0, a) < 0) return NULL;
    int cross = 0;
    if (a[1] != NULL && (cross = PyObject_IsTrue(a[1])) < 0) return NULL;
    WriterObject *self = (WriterObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    struct hurray_stream_writer_options opt;
    hurray_stream_writer_options_init(&opt);
    opt.allocator = &hrpy_raw_allocator;
    opt.cross_machine = cross;
    opt.on_interrupt = run_signal_handlers;
    opt.interrupt_ctx = &self->g;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status;
    PyObject *dest = a[0] == NULL || a[0] == Py_None ? NULL : a[0];
    if (timeout_arg(a[2], dest, "StreamWriter", &opt.timeout_ms) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    if (dest == NULL) {
        status = hurray_stream_writer_create_memory(&opt, &self->w, &err);
    } else {
        int fd = -1;
        if (transport_arg(dest, "StreamWriter", 0, &fd, NULL) < 0) {
            Py_DECREF(self);
            return NULL;
        }
        status = hurray_stream_writer_create_fd(fd, &opt, &self->w, &err);
    }
    if (status != HURRAY_OK) {
        raise_stream(st, NULL, status, &err);
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *writer_write(PyObject *op, PyTypeObject *defining_class, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames) {
    static const char *const names[] = {"item", "name", "metadata"};
    PyObject *a[3];
    WriterObject *self = WRITER(op);
    hrpy_state *st = PyType_GetModuleState(defining_class);
    if (hrpy_bind("write", args, nargs, kwnames, names, 3, 1, 1, a) < 0) return NULL;
    /* stream.md HR-STREAM-17: the name (a str, checked by the C writer) and the metadata */
    struct hurray_stream_annotation ann;
    struct hrpy_kv_build kv;
    memset(&ann, 0, sizeof ann);
    memset(&kv, 0, sizeof kv);
    if (a[1] != NULL && a[1] != Py_None) {
        Py_ssize_t n = 0;
        if (!PyUnicode_Check(a[1])) {
            PyErr_Format(PyExc_TypeError, "StreamWriter.write: name must be a str or None, "
                         "not %.100s", Py_TYPE(a[1])->tp_name);
            return NULL;
        }
        ann.name = PyUnicode_AsUTF8AndSize(a[1], &n);
        if (ann.name == NULL) return NULL;
        if ((size_t)n > UINT32_MAX) n = UINT32_MAX; /* over the name limit either way */
        ann.name_len = (uint32_t)n;
    }
    if (a[2] != NULL && a[2] != Py_None) {
        if (hrpy_kv_from_mapping(st, a[2], &kv) < 0) {
            hrpy_kv_build_release(&kv);
            return NULL;
        }
        ann.metadata = kv.entries;
        ann.metadata_count = kv.count;
    }
    /* a numpy.ndarray / torch.Tensor is ingested exactly as save ingests it (io.c); the
     * converted value stays alive until the write is done */
    PyObject *module = PyType_GetModule(defining_class);
    PyObject *value = module == NULL ? NULL
                                     : hrpy_save_value(st, module, a[0], "StreamWriter.write: item");
    struct hurray_item *tree = NULL;
    if (value == NULL ||
        hrpy_item_build(st, value, HRPY_ITEM_STREAM, "StreamWriter.write", &tree) < 0) {
        Py_XDECREF(value);
        hrpy_kv_build_release(&kv);
        return NULL;
    }
    struct hurray_error err;
    hurray_error_clear(&err);
    int status;
    if (lock_acquire(self->lock, &self->owner) < 0) {
        hrpy_item_release(tree);
        Py_DECREF(value);
        hrpy_kv_build_release(&kv);
        return NULL;
    }
    RUN_RELEASED(&self->g, status,
                 hurray_stream_writer_write_annotated(self->w, tree, &ann, &err));
    lock_release(self->lock, &self->owner);
    hrpy_item_release(tree);
    Py_DECREF(value);
    hrpy_kv_build_release(&kv);
    /* after finish: ARGUMENT, which the stream context maps to StreamError */
    if (status != HURRAY_OK) return raise_stream(st, &self->g, status, &err);
    if (self->g.raised && PyErr_Occurred()) return NULL; /* a handler raised; written whole */
    Py_RETURN_NONE;
}

/* HR-STREAM-10: finish writes the end frame; abandon (an exception leaving the with block,
 * or a writer collected unfinished) does not, so the reader sees a stream that did not end
 * well rather than a finished one. */
static PyObject *writer_end(PyObject *op, int finish) {
    WriterObject *self = WRITER(op);
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(op));
    if (st == NULL) return NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = HURRAY_OK;
    if (lock_acquire(self->lock, &self->owner) < 0) return NULL;
    if (finish)
        RUN_RELEASED(&self->g, status, hurray_stream_writer_finish(self->w, &err));
    else
        hurray_stream_writer_abandon(self->w); /* closes our duplicate: never blocks */
    self->finished = 1;
    lock_release(self->lock, &self->owner);
    if (status != HURRAY_OK) return raise_stream(st, &self->g, status, &err);
    if (self->g.raised && PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyObject *writer_finish(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    return writer_end(op, 1);
}

static PyObject *writer_getvalue(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    WriterObject *self = WRITER(op);
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(op));
    if (st == NULL) return NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    const uint8_t *data = NULL;
    size_t len = 0;
    PyObject *out = NULL;
    if (lock_acquire(self->lock, &self->owner) < 0) return NULL;
    /* non-destructive (requirements § Writer output): a copy, the writer keeps its bytes */
    int status = hurray_stream_writer_getvalue(self->w, &data, &len, &err);
    if (status == HURRAY_OK) {
        out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
        if (out != NULL && len > 0) {
            char *dst = PyBytes_AS_STRING(out);
            Py_BEGIN_ALLOW_THREADS
            memcpy(dst, data, len);
            Py_END_ALLOW_THREADS
        }
    }
    lock_release(self->lock, &self->owner);
    if (status != HURRAY_OK) return raise_stream(st, NULL, status, &err);
    return out;
}

/* __exit__(exc_type, exc, tb): finish on a normal exit; abandon -- no end frame -- when an
 * exception leaves the block (HR-STREAM-10). */
static PyObject *writer_exit(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
    int failed = nargs > 0 && args[0] != Py_None;
    PyObject *r = writer_end(op, !failed);
    if (r == NULL) return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *writer_get_finished(PyObject *op, void *Py_UNUSED(c)) {
    return PyBool_FromLong(WRITER(op)->finished);
}

static PyObject *writer_get_offset(PyObject *op, void *Py_UNUSED(c)) {
    WriterObject *self = WRITER(op);
    if (lock_acquire(self->lock, &self->owner) < 0) return NULL;
    uint64_t off = hurray_stream_writer_offset(self->w);
    lock_release(self->lock, &self->owner);
    return PyLong_FromUnsignedLongLong(off);
}

static void writer_dealloc(PyObject *op) {
    PyTypeObject *tp = Py_TYPE(op);
    WriterObject *self = WRITER(op);
    PyObject_GC_UnTrack(op);
    if (self->weakreflist != NULL) PyObject_ClearWeakRefs(op);
    hurray_stream_writer_destroy(self->w); /* unfinished: abandoned, no end frame */
    self->w = NULL;
    if (self->lock != NULL) PyThread_free_lock(self->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef writer_methods[] = {
    {"write", (PyCFunction)(void (*)(void))writer_write,
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("write($self, /, item, name=None, metadata=None)\n--\n\n"
               "Emits a hurray.Tensor (every buffer, in descriptor order), a\n"
               "hurray.Composite (head, then its members), or a numpy.ndarray /\n"
               "torch.Tensor ingested as save ingests it (a non-contiguous one as a\n"
               "compact copy of its elements; anything else: TypeError naming its type)\n"
               "before returning; with a name\n"
               "(a non-empty str without NUL) and/or metadata (a dict of str to bool, int,\n"
               "float, str, bytes, list), an annotation frame first (stream.md\n"
               "HR-STREAM-17), which read_item()/items() give back. A bad name or map:\n"
               "nothing is written. An item the\n"
               "writer refuses (cross_machine and a buffer not producer_synced) is not\n"
               "written and the writer stays usable: StreamError. A tensor whose bytes are\n"
               "not in host memory: UnsupportedError. After finish(): StreamError.")},
    {"finish", writer_finish, METH_NOARGS,
     PyDoc_STR("finish($self, /)\n--\n\nEnds the stream: writes the end frame (stream.md HR-STREAM-12),\n"
               "so that a reader knows the stream is whole, and releases the transport (the\n"
               "duplicated descriptor); an in-memory writer keeps its bytes, end frame\n"
               "included. Idempotent.")},
    {"getvalue", writer_getvalue, METH_NOARGS,
     PyDoc_STR("getvalue($self, /)\n--\n\nThe stream so far, for a writer with no\n"
               "destination; repeatable (nothing is consumed). StreamError for a writer\n"
               "with a destination.")},
    {"__enter__", return_self, METH_NOARGS, PyDoc_STR("__enter__($self, /)\n--\n\nReturns the writer.")},
    {"__exit__", (PyCFunction)(void (*)(void))writer_exit, METH_FASTCALL,
     PyDoc_STR("__exit__($self, /, *exc)\n--\n\n"
               "finish() on a normal exit. When an exception leaves the block the stream is\n"
               "abandoned instead: the transport is released without the end frame, so a\n"
               "reader sees a stream that did not end well (end 'eof'), never a finished one.\n"
               "Exceptions propagate.")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef writer_getset[] = {
    {"finished", writer_get_finished, NULL,
     PyDoc_STR("True after finish() (or after a with block an exception left)."), NULL},
    {"offset", writer_get_offset, NULL, PyDoc_STR("Bytes written so far."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef writer_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(WriterObject, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot writer_slots[] = {
    {Py_tp_doc,
     (void *)PyDoc_STR(
         "StreamWriter(destination=None, *, cross_machine=False, timeout=...)\n"
         "--\n\n"
         "Writes a Hurray stream: each write() emits one item's frames at once. The\n"
         "destination is a file descriptor (int) or an object with fileno() (flushed, then\n"
         "its descriptor duplicated: finishing never closes the caller's); None builds the\n"
         "stream in memory, read with getvalue(). io.BytesIO is refused (use no\n"
         "destination and getvalue()). cross_machine=True refuses buffers that are not\n"
         "producer_synced. timeout (seconds, or None; by default a socket's own\n"
         "gettimeout()) bounds each wait for the peer to take bytes: StreamTimeoutError.\n"
         "Blocking writes release the GIL and run Python's signal handlers. Context\n"
         "manager: finish() on exit (the end frame), abandon when an exception leaves the\n"
         "block; a writer collected unfinished is abandoned too.")},
    {Py_tp_new, writer_new},
    {Py_tp_methods, writer_methods},
    {Py_tp_getset, writer_getset},
    {Py_tp_members, writer_members},
    {Py_tp_traverse, hrpy_traverse_type_only},
    {Py_tp_dealloc, writer_dealloc},
    {0, NULL},
};

static PyType_Spec writer_spec = {
    .name = "hurray.StreamWriter",
    .basicsize = sizeof(WriterObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = writer_slots,
};

static PyStructSequence_Field stream_item_fields[] = {
    {"name", "the item's name (str), or None"},
    {"value", "the item: a Tensor or a Composite"},
    {"metadata", "the item's metadata (dict; {} when it has none)"},
    {NULL, NULL},
};

static PyStructSequence_Desc stream_item_desc = {
    "hurray.StreamItem",
    "An item read from a stream with its name and metadata (stream.md HR-STREAM-18):\n"
    "StreamItem(name, value, metadata).",
    stream_item_fields,
    3,
};

int hrpy_stream_init(PyObject *module, hrpy_state *st) {
    st->StreamItem_Type = PyStructSequence_NewType(&stream_item_desc);
    if (st->StreamItem_Type == NULL) return -1;
    if (PyModule_AddObjectRef(module, "StreamItem", (PyObject *)st->StreamItem_Type) < 0)
        return -1;
    st->StreamReader_Type = hrpy_add_type(module, &reader_spec, NULL);
    if (st->StreamReader_Type == NULL) return -1;
    st->StreamWriter_Type = hrpy_add_type(module, &writer_spec, NULL);
    return st->StreamWriter_Type == NULL ? -1 : 0;
}
