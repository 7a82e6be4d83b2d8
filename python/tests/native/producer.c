/* A native-protocol producer that does not link libhurray: a test-only CPython extension
 * (python/tests/test_native.py compiles it with cc against ffi.h, which it uses for the
 * structure layout only). It fills HurrayBufferList and HurrayTensorContext itself, with its
 * own release callbacks, from descriptor bytes and buffer objects it is given.
 *
 * make(descriptor, buffers, abi_version=1, device_id=0, extra=0, poison=False) -> capsule
 *   extra: buffers added to / (negative) removed from the list's count (a lying producer);
 *   poison: the capsule's pointer is an unmapped address, not a list (HR-ABI-4 proof).
 * counts() -> (lists released, buffers released, contexts released). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "hurray/ffi.h"

static long lists_released, buffers_released, contexts_released;

#define POISON ((void *)(uintptr_t)0x00000000DEAD0000ull)

static void buffer_release(HurrayBuffer *b) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_buffer *view = b->owner;
    PyBuffer_Release(view);
    free(view);
    buffers_released++;
    PyGILState_Release(g);
}

/* private_data: how many buffers were really filled (a lying `count` does not change it). */
static void list_release(HurrayBufferList *l) {
    uint32_t filled = (uint32_t)(uintptr_t)l->private_data;
    for (uint32_t i = 0; i < filled; i++)
        if (l->buffers[i].release != NULL) l->buffers[i].release(&l->buffers[i]);
    free(l->buffers);
    free(l);
    lists_released++;
}

static void ctx_release(HurrayTensorContext *c) {
    free((void *)c->descriptor);
    free(c);
    contexts_released++;
}

static void capsule_destructor(PyObject *cap) {
    if (!PyCapsule_IsValid(cap, "hurray_tensor")) return;
    HurrayBufferList *l = PyCapsule_GetPointer(cap, "hurray_tensor");
    HurrayTensorContext *c = PyCapsule_GetContext(cap);
    if (l != POISON && l->release != NULL) l->release(l);
    if (c != NULL && c->release != NULL) c->release(c);
}

static PyObject *make(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *names[] = {"descriptor", "buffers", "abi_version", "device_id", "extra",
                            "poison", NULL};
    Py_buffer desc;
    PyObject *bufs;
    unsigned int version = 1;
    int device_id = 0, extra = 0, poison = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*O|Iiip", names, &desc, &bufs, &version,
                                     &device_id, &extra, &poison))
        return NULL;
    if (extra < -1 || extra > 1) {
        PyBuffer_Release(&desc);
        PyErr_SetString(PyExc_ValueError, "extra must be -1, 0 or 1");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(bufs, "buffers must be a sequence");
    HurrayTensorContext *c = calloc(1, sizeof *c);
    uint8_t *dcopy = malloc(desc.len > 0 ? (size_t)desc.len : 1);
    if (seq == NULL || c == NULL || dcopy == NULL) goto fail0;
    memcpy(dcopy, desc.buf, (size_t)desc.len);
    c->abi_version = version;
    c->device_id = device_id;
    c->descriptor = dcopy;
    c->descriptor_len = (uint64_t)desc.len;
    c->release = ctx_release;
    PyBuffer_Release(&desc);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    HurrayBufferList *l = calloc(1, sizeof *l);
    HurrayBuffer *b = calloc((size_t)n + 1, sizeof *b);
    if (l == NULL || b == NULL) {
        free(l);
        free(b);
        Py_DECREF(seq);
        ctx_release(c);
        return PyErr_NoMemory();
    }
    l->abi_version = version;
    l->buffers = b;
    l->release = list_release;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_buffer *view = malloc(sizeof *view);
        if (view == NULL || PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, i), view,
                                               PyBUF_SIMPLE) < 0) {
            free(view);
            Py_DECREF(seq);
            list_release(l);
            ctx_release(c);
            return NULL;
        }
        b[i].data = view->len > 0 ? view->buf : NULL;
        b[i].size = (uint64_t)view->len;
        b[i].flags = view->readonly ? 1u : 0u;
        b[i].owner = view;
        b[i].release = buffer_release;
        l->count = (uint32_t)(i + 1);
        l->private_data = (void *)(uintptr_t)l->count;
    }
    Py_DECREF(seq);
    PyObject *cap;
    if (poison) {
        list_release(l); /* nothing of it travels: the capsule points at poison */
        lists_released--;
        cap = PyCapsule_New(POISON, "hurray_tensor", capsule_destructor);
    } else {
        /* a lying count (extra -1 or +1): still within the allocation (one spare, zeroed
         * buffer); list_release releases what was really filled */
        l->count = (uint32_t)((long)l->count + extra);
        cap = PyCapsule_New(l, "hurray_tensor", capsule_destructor);
    }
    if (cap == NULL || PyCapsule_SetContext(cap, c) < 0) {
        Py_XDECREF(cap);
        return NULL;
    }
    return cap;
fail0:
    PyBuffer_Release(&desc);
    Py_XDECREF(seq);
    free(c);
    free(dcopy);
    return PyErr_NoMemory();
}

static PyObject *counts(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    return Py_BuildValue("(lll)", lists_released, buffers_released, contexts_released);
}

static PyMethodDef methods[] = {
    {"make", (PyCFunction)(void (*)(void))make, METH_VARARGS | METH_KEYWORDS, NULL},
    {"counts", counts, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "hurray_test_producer", NULL, -1,
                                 methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_hurray_test_producer(void);
PyMODINIT_FUNC PyInit_hurray_test_producer(void) { return PyModule_Create(&def); }
