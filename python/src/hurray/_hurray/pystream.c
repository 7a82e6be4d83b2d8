/* hurray.StreamReader and hurray.StreamWriter (seed § Streaming, § Writer output,
 * § Error Handling; stream.md).
 *
 * The frames, next-item semantics, limits, cross_machine and the composite rules are
 * libhurray's stream reader and writer (hurray_stream_reader_* / _writer_*). This file
 * gives them their Python shape: the iterator and context-manager protocols, close /
 * finish, keyword limits, and the transports.
 *
 * Transports. An int file descriptor, or an object with fileno() (file, socket, pipe),
 * is duplicated (F_DUPFD_CLOEXEC) so that closing or finishing never closes the caller's;
 * the duplicate is driven through libhurray's callback transport by the read / write
 * functions below, which resume after EINTR and short transfers and wait (poll) on a
 * non-blocking descriptor -- and, unlike a plain C loop, run Python's signal handlers
 * when a system call is interrupted, so Ctrl-C stops a reader blocked on an idle pipe
 * (the handler's exception is raised; the stream is left failed, mid-frame). A reader
 * also takes bytes-like data (bytes, bytearray, memoryview, mmap; held, not copied); a
 * writer with no destination builds the stream in memory (getvalue()). io.BytesIO has no
 * descriptor and is refused with a TypeError that says what to do instead.
 *
 * Blocking: every call into the C reader or writer runs with the GIL released. A reader or
 * writer is used by one thread at a time: a per-object lock serialises calls (a second
 * thread waits, with the GIL released); close() waits for a read in progress. */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pythread.h>
#include <structmember.h>

/* ---- the descriptor transport ------------------------------------------------------------ */

struct fd_transport {
    int fd;             /* our duplicate; -1 when none or released */
    PyThreadState *ts;  /* set while a call runs with the GIL released */
    int interrupted;    /* a signal handler raised: its exception is pending */
    int last_errno;     /* the system error of the last failed transfer */
};

static int transport_fail(struct fd_transport *t, struct hurray_error *err, int e,
                          const char *what) {
    t->last_errno = e;
    if (err != NULL) {
        char buf[128];
        const char *msg = "interrupted by a signal";
        if (e != 0) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
            msg = strerror_r(e, buf, sizeof buf);
#else
            msg = strerror_r(e, buf, sizeof buf) == 0 ? buf : "system error";
#endif
        }
        err->code = HURRAY_E_IO;
        err->has_offset = 0;
        err->offset = 0;
        snprintf(err->field, sizeof err->field, "transport");
        snprintf(err->message, sizeof err->message, "%s: %s", what, msg);
    }
    return HURRAY_E_IO;
}

/* EINTR: run Python's signal handlers (PEP 475); -1 when one raised. */
static int on_eintr(struct fd_transport *t) {
    if (t->ts == NULL) return 0;
    PyEval_RestoreThread(t->ts);
    int rc = PyErr_CheckSignals();
    t->ts = PyEval_SaveThread();
    if (rc < 0) t->interrupted = 1;
    return rc;
}

/* Waits until the descriptor is ready (a non-blocking one answered EAGAIN). */
static int wait_ready(struct fd_transport *t, short events, struct hurray_error *err) {
    struct pollfd p = {t->fd, events, 0};
    while (poll(&p, 1, -1) < 0) {
        int e = errno;
        if (e != EINTR) return transport_fail(t, err, e, "poll");
        if (on_eintr(t) < 0) return transport_fail(t, err, 0, "poll");
    }
    return HURRAY_OK;
}

static int fd_read(void *ctx, uint8_t *dst, size_t cap, size_t *got, struct hurray_error *err) {
    struct fd_transport *t = ctx;
    if (cap > SSIZE_MAX) cap = SSIZE_MAX;
    for (;;) {
        ssize_t n = read(t->fd, dst, cap);
        if (n >= 0) {
            *got = (size_t)n;
            return HURRAY_OK;
        }
        int e = errno;
        if (e == EINTR) {
            if (on_eintr(t) < 0) return transport_fail(t, err, 0, "stream read");
        } else if (e == EAGAIN || e == EWOULDBLOCK) {
            int st = wait_ready(t, POLLIN, err);
            if (st != HURRAY_OK) return st;
        } else {
            return transport_fail(t, err, e, "stream read");
        }
    }
}

static int fd_write(void *ctx, const uint8_t *src, size_t len, struct hurray_error *err) {
    struct fd_transport *t = ctx;
    while (len > 0) {
        ssize_t n = write(t->fd, src, len > SSIZE_MAX ? SSIZE_MAX : len);
        if (n > 0) {
            src += n;
            len -= (size_t)n;
            continue;
        }
        int e = n == 0 ? 0 : errno;
        if (n == 0) return transport_fail(t, err, EIO, "stream write (wrote 0 bytes)");
        if (e == EINTR) {
            if (on_eintr(t) < 0) return transport_fail(t, err, 0, "stream write");
        } else if (e == EAGAIN || e == EWOULDBLOCK) {
            int st = wait_ready(t, POLLOUT, err);
            if (st != HURRAY_OK) return st;
        } else {
            return transport_fail(t, err, e, "stream write"); /* EPIPE: the reader is gone */
        }
    }
    return HURRAY_OK;
}

static void transport_close(struct fd_transport *t) {
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
}

/* Runs `call(arg)` with the GIL released; the transport can take it back on EINTR. */
#define RUN_RELEASED(t, status, expr)                                                          \
    do {                                                                                       \
        (t)->interrupted = 0;                                                                  \
        (t)->last_errno = 0;                                                                   \
        (t)->ts = PyEval_SaveThread();                                                         \
        status = (expr);                                                                       \
        PyEval_RestoreThread((t)->ts);                                                         \
        (t)->ts = NULL;                                                                        \
    } while (0)

/* Raises a stream failure: the Python exception a signal handler raised, or the mapped
 * class (errno set when the system gave one). */
static PyObject *raise_stream(hrpy_state *st, struct fd_transport *t, int status,
                              const struct hurray_error *err) {
    if (t->interrupted && PyErr_Occurred()) return NULL;
    hrpy_raise_status(st, HRPY_CTX_STREAM, status, err);
    if (status == HURRAY_E_IO && t->last_errno != 0) hrpy_set_errno(t->last_errno);
    return NULL;
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

/* The close-on-exec duplicate the stream owns. */
static int dup_fd(hrpy_state *st, struct fd_transport *t, int fd, const char *who) {
    int d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (d < 0) {
        struct hurray_error err;
        hurray_error_clear(&err);
        char what[64];
        snprintf(what, sizeof what, "%s: cannot duplicate descriptor %d", who, fd);
        int status = transport_fail(t, &err, errno, what);
        raise_stream(st, t, status, &err);
        return -1;
    }
    t->fd = d;
    return 0;
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
    struct hurray_stream_reader *r; /* NULL once closed */
    PyThread_type_lock lock;
    unsigned long owner; /* the thread inside a call, 0 when none */
    struct fd_transport t;
    Py_buffer src;
    uint8_t has_src;
    PyObject *weakreflist;
} ReaderObject;

#define READER(o) ((ReaderObject *)(o))

static void reader_release(ReaderObject *self) {
    hurray_stream_reader_destroy(self->r);
    self->r = NULL;
    transport_close(&self->t);
    if (self->has_src) {
        PyBuffer_Release(&self->src);
        self->has_src = 0;
    }
}

static PyObject *reader_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"source",           "max_descriptor_bytes",
                                        "max_buffer_bytes", "max_composite_depth",
                                        "max_composite_members", "max_rank",
                                        "cross_machine"};
    PyObject *a[7];
    hrpy_state *st = hrpy_state_from_type(type);
    if (st == NULL) return NULL;
    if (hrpy_bind_tuple("StreamReader", args, kwargs, names, 7, 1, 1, a) < 0) return NULL;
    struct hurray_limits limits;
    if (hrpy_limits_from_args(a + 1, names + 1, 5, &limits) < 0) return NULL;
    int cross = 0;
    if (a[6] != NULL && (cross = PyObject_IsTrue(a[6])) < 0) return NULL;
    ReaderObject *self = (ReaderObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->t.fd = -1;
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    int fd = -1;
    int kind = transport_arg(a[0], "StreamReader", 1, &fd, &self->src);
    if (kind < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->has_src = kind == TRANSPORT_MEMORY;
    struct hurray_stream_reader_options opt;
    hurray_stream_reader_options_init(&opt);
    opt.limits = &limits;
    opt.allocator = &hrpy_raw_allocator;
    opt.cross_machine = cross;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status;
    if (kind == TRANSPORT_MEMORY) {
        status = hurray_stream_reader_create_memory((const uint8_t *)self->src.buf,
                                                    (size_t)self->src.len, &opt, &self->r, &err);
    } else {
        if (dup_fd(st, &self->t, fd, "StreamReader") < 0) {
            Py_DECREF(self);
            return NULL;
        }
        status = hurray_stream_reader_create_callback(fd_read, &self->t, &opt, &self->r, &err);
    }
    if (status != HURRAY_OK) {
        raise_stream(st, &self->t, status, &err);
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *reader_iternext(PyObject *op) {
    ReaderObject *self = READER(op);
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(op));
    if (st == NULL) return NULL;
    struct hurray_item *item = NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = HURRAY_OK;
    if (lock_acquire(self->lock, &self->owner) < 0) return NULL;
    if (self->r == NULL) { /* closed: exhausted, not an error */
        lock_release(self->lock, &self->owner);
        return NULL;
    }
    RUN_RELEASED(&self->t, status, hurray_stream_reader_next(self->r, &item, &err));
    lock_release(self->lock, &self->owner);
    if (status != HURRAY_OK) return raise_stream(st, &self->t, status, &err);
    if (item == NULL) return NULL; /* the clean end: StopIteration */
    PyObject *owner = hrpy_item_memory_new(st, item); /* owns item, also on failure */
    if (owner == NULL) return NULL;
    PyObject *obj = hrpy_item_to_object(st, item, owner, 0);
    Py_DECREF(owner);
    return obj;
}

static PyObject *reader_close(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    ReaderObject *self = READER(op);
    if (lock_acquire(self->lock, &self->owner) < 0) return NULL;
    reader_release(self);
    lock_release(self->lock, &self->owner);
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
    return PyBool_FromLong(READER(op)->r == NULL);
}

static PyObject *reader_get_offset(PyObject *op, void *Py_UNUSED(c)) {
    ReaderObject *self = READER(op);
    if (lock_acquire(self->lock, &self->owner) < 0) return NULL;
    uint64_t off = self->r ? hurray_stream_reader_offset(self->r) : 0;
    int closed = self->r == NULL;
    lock_release(self->lock, &self->owner);
    if (closed) Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(off);
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
    {"close", reader_close, METH_NOARGS,
     PyDoc_STR("close()\n--\n\nReleases the transport (the duplicated descriptor, the held\n"
               "bytes) and drops a partly read item. Idempotent; the reader then iterates as\n"
               "exhausted. Waits for a read in progress in another thread.")},
    {"__enter__", return_self, METH_NOARGS, PyDoc_STR("Returns the reader.")},
    {"__exit__", (PyCFunction)(void (*)(void))reader_exit, METH_FASTCALL,
     PyDoc_STR("close(); exceptions propagate.")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef reader_getset[] = {
    {"closed", reader_get_closed, NULL, PyDoc_STR("True after close()."), NULL},
    {"offset", reader_get_offset, NULL,
     PyDoc_STR("Stream offset past the last byte parsed (the end of the last item's last\n"
               "frame after an item); None once closed."),
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
         "             cross_machine=False)\n--\n\n"
         "Iterates the items of a Hurray stream: each a hurray.Tensor, or a whole\n"
         "hurray.Composite (head and members as one item), yielded as soon as its last byte\n"
         "has arrived; StopIteration at the clean end. `source` is a file descriptor (int)\n"
         "or an object with fileno() (duplicated: closing the reader never closes the\n"
         "caller's), or bytes-like data (held, not copied). io.BytesIO is refused (pass\n"
         "its getvalue()). The limits bound what a frame may claim before anything is\n"
         "allocated (None: the format's defaults); exceeding one, a corrupt frame, a\n"
         "stream cut inside a frame or a transport error raise StreamError, and the reader\n"
         "stays failed. cross_machine=True refuses buffers that are not producer_synced.\n"
         "Blocking reads release the GIL. Context manager: close() on exit.")},
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
    struct fd_transport t;
    uint8_t finished;
    PyObject *weakreflist;
} WriterObject;

#define WRITER(o) ((WriterObject *)(o))

static PyObject *writer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"destination", "cross_machine"};
    PyObject *a[2];
    hrpy_state *st = hrpy_state_from_type(type);
    if (st == NULL) return NULL;
    if (hrpy_bind_tuple("StreamWriter", args, kwargs, names, 2, 1, 0, a) < 0) return NULL;
    int cross = 0;
    if (a[1] != NULL && (cross = PyObject_IsTrue(a[1])) < 0) return NULL;
    WriterObject *self = (WriterObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->t.fd = -1;
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    struct hurray_stream_writer_options opt;
    hurray_stream_writer_options_init(&opt);
    opt.allocator = &hrpy_raw_allocator;
    opt.cross_machine = cross;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status;
    if (a[0] == NULL || a[0] == Py_None) {
        status = hurray_stream_writer_create_memory(&opt, &self->w, &err);
    } else {
        int fd = -1;
        if (transport_arg(a[0], "StreamWriter", 0, &fd, NULL) < 0 ||
            dup_fd(st, &self->t, fd, "StreamWriter") < 0) {
            Py_DECREF(self);
            return NULL;
        }
        status = hurray_stream_writer_create_callback(fd_write, &self->t, &opt, &self->w, &err);
    }
    if (status != HURRAY_OK) {
        raise_stream(st, &self->t, status, &err);
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *writer_write(PyObject *op, PyTypeObject *defining_class, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames) {
    static const char *const names[] = {"item"};
    PyObject *a[1];
    WriterObject *self = WRITER(op);
    hrpy_state *st = PyType_GetModuleState(defining_class);
    if (hrpy_bind("write", args, nargs, kwnames, names, 1, 1, 1, a) < 0) return NULL;
    struct hurray_item *tree = NULL;
    if (hrpy_item_build(st, a[0], HRPY_ITEM_STREAM, "StreamWriter.write", &tree) < 0)
        return NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status;
    if (lock_acquire(self->lock, &self->owner) < 0) {
        hrpy_item_release(tree);
        return NULL;
    }
    RUN_RELEASED(&self->t, status, hurray_stream_writer_write(self->w, tree, &err));
    lock_release(self->lock, &self->owner);
    hrpy_item_release(tree);
    /* after finish: ARGUMENT, which the stream context maps to StreamError */
    if (status != HURRAY_OK) return raise_stream(st, &self->t, status, &err);
    Py_RETURN_NONE;
}

static PyObject *writer_finish(PyObject *op, PyObject *Py_UNUSED(ignored)) {
    WriterObject *self = WRITER(op);
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(op));
    if (st == NULL) return NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status;
    if (lock_acquire(self->lock, &self->owner) < 0) return NULL;
    RUN_RELEASED(&self->t, status, hurray_stream_writer_finish(self->w, &err));
    transport_close(&self->t); /* the callback transport is ours to release */
    self->finished = 1;
    lock_release(self->lock, &self->owner);
    if (status != HURRAY_OK) return raise_stream(st, &self->t, status, &err);
    Py_RETURN_NONE;
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
    /* non-destructive (seed § Writer output): a copy, the writer keeps its bytes */
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
    if (status != HURRAY_OK) return raise_stream(st, &self->t, status, &err);
    return out;
}

static PyObject *writer_exit(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
    (void)args;
    (void)nargs;
    PyObject *r = writer_finish(op, NULL);
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
    hurray_stream_writer_destroy(self->w); /* finishes, ignoring errors */
    self->w = NULL;
    transport_close(&self->t);
    if (self->lock != NULL) PyThread_free_lock(self->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef writer_methods[] = {
    {"write", (PyCFunction)(void (*)(void))writer_write,
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("write(item)\n--\n\n"
               "Emits a hurray.Tensor (every buffer, in descriptor order) or a\n"
               "hurray.Composite (head, then its members) before returning. An item the\n"
               "writer refuses (cross_machine and a buffer not producer_synced) is not\n"
               "written and the writer stays usable: StreamError. A tensor whose bytes are\n"
               "not in host memory: UnsupportedError. After finish(): StreamError.")},
    {"finish", writer_finish, METH_NOARGS,
     PyDoc_STR("finish()\n--\n\nEnds the stream and releases the transport (the duplicated\n"
               "descriptor); an in-memory writer keeps its bytes. Idempotent.")},
    {"getvalue", writer_getvalue, METH_NOARGS,
     PyDoc_STR("getvalue() -> bytes\n--\n\nThe stream so far, for a writer with no\n"
               "destination; repeatable (nothing is consumed). StreamError for a writer\n"
               "with a destination.")},
    {"__enter__", return_self, METH_NOARGS, PyDoc_STR("Returns the writer.")},
    {"__exit__", (PyCFunction)(void (*)(void))writer_exit, METH_FASTCALL,
     PyDoc_STR("finish(); exceptions propagate.")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef writer_getset[] = {
    {"finished", writer_get_finished, NULL, PyDoc_STR("True after finish()."), NULL},
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
         "StreamWriter(destination=None, *, cross_machine=False)\n--\n\n"
         "Writes a Hurray stream: each write() emits one item's frames at once. The\n"
         "destination is a file descriptor (int) or an object with fileno() (flushed, then\n"
         "its descriptor duplicated: finishing never closes the caller's); None builds the\n"
         "stream in memory, read with getvalue(). io.BytesIO is refused (use no\n"
         "destination and getvalue()). cross_machine=True refuses buffers that are not\n"
         "producer_synced. Blocking writes release the GIL. Context manager: finish() on\n"
         "exit.")},
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

int hrpy_stream_init(PyObject *module, hrpy_state *st) {
    st->StreamReader_Type = hrpy_add_type(module, &reader_spec, NULL);
    if (st->StreamReader_Type == NULL) return -1;
    st->StreamWriter_Type = hrpy_add_type(module, &writer_spec, NULL);
    return st->StreamWriter_Type == NULL ? -1 : 0;
}
