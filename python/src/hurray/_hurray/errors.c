/* Exceptions: the classes (requirements § Error Handling) and the ONE table that maps a
 * libhurray status code to a class, per context (errors-and-limits.md
 * § Status codes: "the Python binding maps them to exception classes from one
 * table (per context: descriptor, file, stream)").
 *
 * Every raised instance carries .code (the C status name, e.g. "BUFFER_SIZE"),
 * .field (the field the C error record names, e.g. "buffers[1].size", or
 * None) and .offset (byte offset in the input, or None). The message is the C
 * record's, which names the field.
 *
 * Choices where the requirements are silent (documented in python/README.md):
 *   - RESERVED_TAG is InvalidDescriptorError in the descriptor context: the
 *     the requirements say a reserved byte "MUST be refused rather than accepted", and a
 *     descriptor carrying one is not one this reader may interpret.
 *   - VERSION and UNSUPPORTED are UnsupportedError: the input is well formed
 *     but beyond this build (a newer major, a must-understand section, an
 *     extension width, a DLPack cell).
 *   - ARGUMENT is the built-in ValueError, NOMEM MemoryError, INTERNAL
 *     InternalError (the C library's invariant failed: a bug).
 *   - In the file and stream contexts every malformed/invalid/limit code is
 *     FileError / StreamError (a corrupt container or frame), IO too; ARGUMENT in the
 *     stream context is StreamError (write after finish, getvalue with a destination).
 *   - IO in the stream context whose record names the system error ETIMEDOUT (a peer that
 *     stalled past the timeout, stream.md HR-STREAM-14) is StreamTimeoutError, a subclass
 *     of both StreamError and the built-in TimeoutError, so that `except TimeoutError` and
 *     `except hurray.StreamError` both catch it. No status of its own: the status says IO,
 *     the record's system error number says which.
 *   - IO with a system error number sets the exception's .errno to it.
 *   - IO in the file context whose record names a system error number that Python maps to
 *     a built-in OSError subclass (ENOENT FileNotFoundError, EACCES/EPERM PermissionError,
 *     EISDIR IsADirectoryError, ENOTDIR NotADirectoryError, EEXIST FileExistsError, EINTR
 *     InterruptedError) raises hurray's class of that name: a subclass of both FileError
 *     and the built-in, so `except hurray.FileError` and `except FileNotFoundError` both
 *     catch a missing file. The table below (file_os_errors) is the one place of that
 *     mapping. */
#include "state.h"

#include <errno.h>
#include <stdarg.h>

enum exc_id {
    X_INVALID,     /* InvalidDescriptorError */
    X_UNSUPPORTED, /* UnsupportedError */
    X_BUFFER,      /* hurray.BufferError */
    X_INTERNAL,    /* InternalError */
    X_FILE,        /* FileError */
    X_STREAM,      /* StreamError */
    X_VALUE,       /* builtins.ValueError */
    X_MEMORY,      /* builtins.MemoryError */
    X_OS           /* builtins.OSError */
};

/* Rows: status value (HURRAY_E_*); columns: descriptor, file, stream. */
#define MALFORMED {X_INVALID, X_FILE, X_STREAM}
static const uint8_t error_table[HURRAY_STATUS_COUNT][HRPY_CTX_COUNT] = {
    [HURRAY_OK] = {X_INTERNAL, X_INTERNAL, X_INTERNAL}, /* raising OK is a binding bug */
    [HURRAY_E_TRUNCATED] = MALFORMED,
    [HURRAY_E_BAD_MAGIC] = MALFORMED,
    [HURRAY_E_VERSION] = {X_UNSUPPORTED, X_UNSUPPORTED, X_UNSUPPORTED},
    [HURRAY_E_RESERVED_NONZERO] = MALFORMED,
    [HURRAY_E_INVALID_TAG] = MALFORMED,
    [HURRAY_E_RESERVED_TAG] = MALFORMED,
    [HURRAY_E_LENGTH] = MALFORMED,
    [HURRAY_E_OVERFLOW] = MALFORMED,
    [HURRAY_E_LIMIT] = MALFORMED,
    [HURRAY_E_RANGE] = MALFORMED,
    [HURRAY_E_CONSTRAINT] = MALFORMED,
    [HURRAY_E_COMBINATION] = MALFORMED,
    [HURRAY_E_BUFFER_COUNT] = MALFORMED,
    [HURRAY_E_BUFFER_SIZE] = MALFORMED,
    [HURRAY_E_ALIGNMENT] = MALFORMED,
    [HURRAY_E_SECTION_ORDER] = MALFORMED,
    [HURRAY_E_INDEX] = MALFORMED,
    [HURRAY_E_DUPLICATE] = MALFORMED,
    [HURRAY_E_UNSUPPORTED] = {X_UNSUPPORTED, X_UNSUPPORTED, X_UNSUPPORTED},
    /* stream: the API errors a stream reports are a finished writer written to and
     * getvalue() on one with a destination, both StreamError (requirements § Streaming) */
    [HURRAY_E_ARGUMENT] = {X_VALUE, X_VALUE, X_STREAM},
    [HURRAY_E_NOMEM] = {X_MEMORY, X_MEMORY, X_MEMORY},
    [HURRAY_E_IO] = {X_OS, X_FILE, X_STREAM},
    [HURRAY_E_INTERNAL] = {X_INTERNAL, X_INTERNAL, X_INTERNAL},
    [HURRAY_E_OFFSET] = MALFORMED,
    [HURRAY_E_OVERLAP] = MALFORMED,
};
#undef MALFORMED

static const char *const context_names[HRPY_CTX_COUNT] = {"descriptor", "file", "stream"};

/* System error number -> hurray.<name>, a FileError and builtins.<name>. Slots of
 * st->file_os_error, in this order (HRPY_FILE_OS_ERRORS). */
static const struct {
    int errnum, slot;
} file_os_errnos[] = {
    {ENOENT, 0}, {EACCES, 1}, {EPERM, 1}, {EISDIR, 2}, {ENOTDIR, 3}, {EEXIST, 4}, {EINTR, 5},
};
static const char *const file_os_names[HRPY_FILE_OS_ERRORS] = {
    "hurray.FileNotFoundError", "hurray.PermissionError",  "hurray.IsADirectoryError",
    "hurray.NotADirectoryError", "hurray.FileExistsError", "hurray.InterruptedError",
};

static PyObject *file_os_class(hrpy_state *st, int errnum) {
    for (size_t i = 0; i < sizeof file_os_errnos / sizeof file_os_errnos[0]; i++)
        if (file_os_errnos[i].errnum == errnum) return st->file_os_error[file_os_errnos[i].slot];
    return st->FileError;
}

PyObject *hrpy_error_class(hrpy_state *st, int context, int status) {
    if (context < 0 || context >= HRPY_CTX_COUNT) context = HRPY_CTX_DESCRIPTOR;
    /* A status outside the table is a library newer than this binding. */
    if (status < 0 || status >= HURRAY_STATUS_COUNT) return st->InternalError;
    switch ((enum exc_id)error_table[status][context]) {
    case X_INVALID: return st->InvalidDescriptorError;
    case X_UNSUPPORTED: return st->UnsupportedError;
    case X_BUFFER: return st->BufferError;
    case X_INTERNAL: return st->InternalError;
    case X_FILE: return st->FileError;
    case X_STREAM: return st->StreamError;
    case X_VALUE: return PyExc_ValueError;
    case X_MEMORY: return PyExc_MemoryError;
    case X_OS: return PyExc_OSError;
    }
    return st->InternalError;
}

/* Builds the instance, attaches code/field/offset and raises it. */
static void raise_with(PyObject *cls, int status, const char *field, int has_offset,
                       uint64_t offset, PyObject *message) {
    PyObject *exc = NULL, *value = NULL;
    exc = PyObject_CallOneArg(cls, message);
    if (exc == NULL) goto error;
    value = PyUnicode_FromString(hurray_status_name(status));
    if (value == NULL || PyObject_SetAttrString(exc, "code", value) < 0) goto error;
    Py_CLEAR(value);
    if (field != NULL && field[0] != '\0') {
        value = PyUnicode_FromString(field);
    } else {
        value = Py_NewRef(Py_None);
    }
    if (value == NULL || PyObject_SetAttrString(exc, "field", value) < 0) goto error;
    Py_CLEAR(value);
    value = has_offset ? PyLong_FromUnsignedLongLong(offset) : Py_NewRef(Py_None);
    if (value == NULL || PyObject_SetAttrString(exc, "offset", value) < 0) goto error;
    Py_CLEAR(value);
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return;
error:
    Py_XDECREF(exc);
    Py_XDECREF(value);
}

PyObject *hrpy_raise_status(hrpy_state *st, int context, int status,
                            const struct hurray_error *err) {
    PyObject *message = NULL;
    const char *field = NULL;
    if (err != NULL && err->code == status && err->message[0] != '\0') {
        message = PyUnicode_FromString(err->message);
        field = err->field;
    } else {
        /* The C call failed without filling the record (e.g. a name lookup). */
        message = PyUnicode_FromFormat("%s (%s)", hurray_status_name(status),
                                       hurray_status_stage(status));
    }
    if (message == NULL) return NULL;
    int sys = err != NULL && err->code == status && status == HURRAY_E_IO ? err->sys_errno : 0;
    PyObject *cls = hrpy_error_class(st, context, status);
    if (context == HRPY_CTX_STREAM && sys == ETIMEDOUT) cls = st->StreamTimeoutError;
    if (context == HRPY_CTX_FILE && sys != 0) cls = file_os_class(st, sys);
    raise_with(cls, status, field, err != NULL && err->code == status && err->has_offset,
               err != NULL ? err->offset : 0, message);
    Py_DECREF(message);
    if (sys != 0) hrpy_set_errno(sys);
    return NULL;
}

PyObject *hrpy_raise_fmt(hrpy_state *st, int context, int status, const char *field,
                         const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *message = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (message == NULL) return NULL;
    raise_with(hrpy_error_class(st, context, status), status, field, 0, 0, message);
    Py_DECREF(message);
    return NULL;
}

/* _error_class(status, context="descriptor") */
PyObject *hrpy_error_class_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
    static const char *const names[] = {"status", "context"};
    PyObject *a[2];
    if (hrpy_bind("_error_class", args, nargs, kwnames, names, 2, 2, 1, a) < 0) return NULL;
    hrpy_state *st = hrpy_state_from_module(module);
    Py_ssize_t len;
    const char *name = hrpy_as_str(a[0], "status", &len);
    if (name == NULL) return NULL;
    int status = hurray_status_from_name(name);
    if (status < 0) return PyErr_Format(PyExc_ValueError, "unknown status name %R", a[0]);
    int context = HRPY_CTX_DESCRIPTOR;
    if (a[1] != NULL) {
        const char *ctx = hrpy_as_str(a[1], "context", &len);
        if (ctx == NULL) return NULL;
        for (context = 0; context < HRPY_CTX_COUNT; context++)
            if (strcmp(ctx, context_names[context]) == 0) break;
        if (context == HRPY_CTX_COUNT)
            return PyErr_Format(PyExc_ValueError,
                                "context must be 'descriptor', 'file' or 'stream', not %R", a[1]);
    }
    return Py_NewRef(hrpy_error_class(st, context, status));
}

/* ---- the classes ------------------------------------------------------------- */

static PyObject *new_exception(PyObject *module, const char *name, const char *doc,
                               PyObject *base1, PyObject *base2) {
    PyObject *bases = NULL, *dict = NULL, *cls = NULL;
    bases = base2 ? PyTuple_Pack(2, base1, base2) : PyTuple_Pack(1, base1);
    if (bases == NULL) goto error;
    dict = PyDict_New();
    if (dict == NULL) goto error;
    if (base1 == PyExc_Exception) {
        /* The root class: defaults for instances a caller builds by hand. */
        if (PyDict_SetItemString(dict, "code", Py_None) < 0) goto error;
        if (PyDict_SetItemString(dict, "field", Py_None) < 0) goto error;
        if (PyDict_SetItemString(dict, "offset", Py_None) < 0) goto error;
    }
    cls = PyErr_NewExceptionWithDoc(name, doc, bases, dict);
    if (cls == NULL) goto error;
    /* name is "hurray.X": add it to the module as X. */
    if (PyModule_AddObjectRef(module, strrchr(name, '.') + 1, cls) < 0) goto error;
    Py_DECREF(bases);
    Py_DECREF(dict);
    return cls;
error:
    Py_XDECREF(bases);
    Py_XDECREF(dict);
    Py_XDECREF(cls);
    return NULL;
}

int hrpy_errors_init(PyObject *module, hrpy_state *st) {
    st->HurrayError = new_exception(
        module, "hurray.HurrayError",
        "Base of every error hurray raises. .code is the C status name (e.g.\n"
        "'BUFFER_SIZE'), .field the field it concerns, .offset the byte offset.",
        PyExc_Exception, NULL);
    if (st->HurrayError == NULL) return -1;
    st->InvalidDescriptorError = new_exception(
        module, "hurray.InvalidDescriptorError",
        "A descriptor, layout, quantization or section that violates the format.",
        st->HurrayError, PyExc_ValueError);
    if (st->InvalidDescriptorError == NULL) return -1;
    st->UnsupportedError = new_exception(
        module, "hurray.UnsupportedError",
        "Valid, but not supported by this build or this path.", st->HurrayError,
        NULL);
    if (st->UnsupportedError == NULL) return -1;
    st->BufferError = new_exception(module, "hurray.BufferError",
                                    "A buffer or capsule that cannot be used.",
                                    st->HurrayError, PyExc_BufferError);
    if (st->BufferError == NULL) return -1;
    st->InternalError = new_exception(module, "hurray.InternalError",
                                      "A library invariant failed: a bug in hurray.",
                                      st->HurrayError, PyExc_RuntimeError);
    if (st->InternalError == NULL) return -1;
    st->FileError = new_exception(module, "hurray.FileError",
                                  "hurray.load / hurray.save: the file or container.",
                                  st->HurrayError, PyExc_OSError);
    if (st->FileError == NULL) return -1;
    st->StreamError = new_exception(module, "hurray.StreamError",
                                    "The streaming reader or writer: framing or transport.",
                                    st->HurrayError, PyExc_OSError);
    if (st->StreamError == NULL) return -1;
    st->StreamTimeoutError = new_exception(
        module, "hurray.StreamTimeoutError",
        "A stream's peer sent nothing (or took nothing) for longer than the timeout\n"
        "(stream.md HR-STREAM-14): a StreamError and a TimeoutError, .errno ETIMEDOUT.",
        st->StreamError, PyExc_TimeoutError);
    if (st->StreamTimeoutError == NULL) return -1;
    PyObject *const builtins[HRPY_FILE_OS_ERRORS] = {
        PyExc_FileNotFoundError,  PyExc_PermissionError,   PyExc_IsADirectoryError,
        PyExc_NotADirectoryError, PyExc_FileExistsError,   PyExc_InterruptedError,
    };
    for (int i = 0; i < HRPY_FILE_OS_ERRORS; i++) {
        char doc[160];
        PyOS_snprintf(doc, sizeof doc,
                      "A FileError that is also the built-in %s (the system error the file "
                      "operation failed with).",
                      strrchr(file_os_names[i], '.') + 1);
        st->file_os_error[i] =
            new_exception(module, file_os_names[i], doc, st->FileError, builtins[i]);
        if (st->file_os_error[i] == NULL) return -1;
    }
    return 0;
}
