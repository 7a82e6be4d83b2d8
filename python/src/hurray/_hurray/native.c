/* The native protocol: Tensor.__hurray__ (producer) and hurray.from_hurray
 * (consumer) over the C ABI of reference/include/hurray/ffi.h.
 * docs/spec/c-abi.md (HR-ABI-1 ... HR-ABI-12).
 *
 * Producer. __hurray__(stream=None) checks `stream` with the rules of
 * __dlpack__ (HR-ABI-10), encodes the tensor's descriptor into a
 * HurrayTensorContext (hurray_tensor_context_create) whose opaque owner is a
 * strong reference to the tensor, released by owner_release (GIL taken; leaked
 * after finalisation, as the DLPack deleter does), and lists every buffer, in
 * descriptor order, in a HurrayBufferList (hurray_buffer_list_create): the
 * buffers carry no owner of their own, the context's covers them (HR-ABI-6).
 * Every dtype, layout, device, memory class and sync mode: nothing is refused,
 * a non-producer_synced buffer is relayed as declared. The capsule is named
 * "hurray_tensor", its pointer the list, its context the context (HR-ABI-1);
 * its destructor destroys both while the capsule still has that name.
 *
 * Consumer. from_hurray(obj, /) takes obj.__hurray__() (or a capsule); reads
 * the context's version before anything else, UnsupportedError on a mismatch
 * with the list untouched (HR-ABI-4); then decodes the descriptor strictly,
 * checks the list's version, length and every size against it (HR-ABI-3),
 * all BufferError, and only then renames the capsule "used_hurray_tensor"
 * (HR-ABI-8) and builds the tensor over a NativeOwner, which destroys the list
 * and then the context, once, when the tensor and everything derived from it
 * are gone. A failure before the rename leaves the capsule to its destructor. */
#include "state.h"

#include <string.h>

/* ==== producer ================================================================================ */

#if PY_VERSION_HEX >= 0x030D0000
#define HRPY_FINALIZING() Py_IsFinalizing()
#else
#define HRPY_FINALIZING() _Py_IsFinalizing()
#endif

/* The context's owner_release: drops the strong reference to the source tensor. Any thread,
 * GIL or not. After finalisation there is no interpreter to release it in: leaked then. */
static void release_owner(void *owner) {
    if (owner == NULL || !Py_IsInitialized()) return;
    if (HRPY_FINALIZING() && !PyGILState_Check()) return;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)owner);
    PyGILState_Release(g);
}

/* Destroys the list, then the context, of a capsule nobody consumed (HR-ABI-8). */
static void capsule_destructor(PyObject *capsule) {
    if (!PyCapsule_IsValid(capsule, HURRAY_CAPSULE_NAME)) return;
    PyObject *exc = hrpy_take_exception();
    HurrayBufferList *list = PyCapsule_GetPointer(capsule, HURRAY_CAPSULE_NAME);
    HurrayTensorContext *ctx = PyCapsule_GetContext(capsule);
    hurray_buffer_list_destroy(list);
    hurray_tensor_context_destroy(ctx);
    PyErr_Clear();
    hrpy_restore_exception(exc);
}

/* DLPack device type whose stream rules apply (HR-ABI-10): the pair's own; for the pairs
 * DLPack has no type for, the device family's standard memory; 0 for private devices. */
static int32_t stream_family(uint8_t tag, uint8_t memory_class) {
    struct hurray_error err;
    int32_t dl = 0;
    if (hurray_device_to_dlpack(tag, memory_class, &dl, &err) == HURRAY_OK) return dl;
    if (hurray_device_to_dlpack(tag, HURRAY_MEM_STANDARD, &dl, &err) == HURRAY_OK) return dl;
    return 0;
}


PyObject *hrpy_tensor_hurray(PyObject *self, PyTypeObject *cls, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames) {
    hrpy_state *st = hrpy_state_from_type(cls);
    if (st == NULL) return NULL;
    static const char *const names[] = {"stream"};
    PyObject *stream = NULL;
    if (hrpy_bind("__hurray__", args, nargs, kwnames, names, 1, 1, 0, &stream) < 0) return NULL;
    const struct hurray_descriptor *d = NULL;
    PyObject *device = NULL;
    if (!hrpy_tensor_peek(st, self, &d, &device)) {
        PyErr_SetString(PyExc_TypeError, "__hurray__: not a hurray.Tensor");
        return NULL;
    }
    uint8_t tag, mc;
    int32_t device_id;
    if (hrpy_device_tags(st, device, &tag, &mc, &device_id) < 0) return NULL;
    if (hrpy_check_stream("__hurray__", stream_family(tag, mc), stream) < 0) return NULL;

    /* the descriptor's canonical bytes, encoded (and so validated) once per descriptor */
    PyObject *desc = hrpy_tensor_descriptor_object(st, self);
    PyObject *encoded = desc == NULL ? NULL : hrpy_descriptor_encoded(st, desc);
    if (encoded == NULL) return NULL;
    const uint8_t *bytes = (const uint8_t *)PyBytes_AS_STRING(encoded);
    size_t written = (size_t)PyBytes_GET_SIZE(encoded);
    int status;

    HurrayBufferList *list = NULL;
    HurrayTensorContext *ctx = NULL;
    PyObject *capsule = NULL;
    status = hurray_buffer_list_create(d->buffer_count, &list);
    if (status == HURRAY_OK)
        status = hurray_tensor_context_create(bytes, written, device_id, self, release_owner,
                                              &ctx);
    if (status != HURRAY_OK) {
        hurray_buffer_list_destroy(list);
        return PyErr_NoMemory();
    }
    Py_INCREF(self); /* the context's owner (HR-ABI-6), released by release_owner */
    for (unsigned i = 0; i < d->buffer_count; i++) {
        struct hrpy_part p;
        if (hrpy_tensor_part(st, self, (Py_ssize_t)i, &p) < 0) goto error;
        HurrayBuffer *b = &list->buffers[i]; /* HR-ABI-3: element i is buffer i */
        b->data = p.size > 0 ? p.ptr : NULL;
        b->size = p.size;
        b->flags = p.readonly ? HURRAY_BUFFER_READONLY : 0u;
    }
    capsule = PyCapsule_New(list, HURRAY_CAPSULE_NAME, capsule_destructor);
    if (capsule == NULL) goto error;
    if (PyCapsule_SetContext(capsule, ctx) < 0) {
        /* not reached (the capsule is valid); the destructor then sees no context */
        PyCapsule_SetDestructor(capsule, NULL);
        Py_CLEAR(capsule);
        goto error;
    }
    return capsule;
error:
    hurray_buffer_list_destroy(list);
    hurray_tensor_context_destroy(ctx);
    return NULL;
}

const char hrpy_doc_hurray[] =
    "__hurray__($self, /, stream=None)\n--\n\n"
    "The native protocol (docs/spec/c-abi.md): a capsule named 'hurray_tensor' whose\n"
    "pointer is a HurrayBufferList (every buffer, in descriptor order, no copy) and\n"
    "whose context is a HurrayTensorContext (the encoded descriptor, the device_id and\n"
    "HURRAY_C_ABI_VERSION). Every element type, layout, quantization, device, memory\n"
    "class and sync mode; the tensor is kept alive until the consumer releases it.\n"
    "stream follows the rules of __dlpack__.";

/* ==== consumer ================================================================================ */

typedef struct {
    PyObject_HEAD
    HurrayBufferList *list;   /* NULL once released */
    HurrayTensorContext *ctx; /* NULL once released */
} NativeOwnerObject;

#define NOWNER(o) ((NativeOwnerObject *)(o))

/* HR-ABI-8: the consumer's exactly-once destroy, list first, then context (HR-ABI-6). */
static void native_owner_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    HurrayBufferList *list = NOWNER(self)->list;
    HurrayTensorContext *ctx = NOWNER(self)->ctx;
    NOWNER(self)->list = NULL;
    NOWNER(self)->ctx = NULL;
    hurray_buffer_list_destroy(list);
    hurray_tensor_context_destroy(ctx);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyType_Slot native_owner_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "What a tensor from hurray.from_hurray holds: the producer's buffer list and\n"
                    "tensor context, destroyed exactly once (list, then context) when it is\n"
                    "collected. Not constructible.")},
    {Py_tp_dealloc, native_owner_dealloc},
    {0, NULL},
};

static PyType_Spec native_owner_spec = {
    .name = "hurray._hurray.NativeOwner",
    .basicsize = sizeof(NativeOwnerObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = native_owner_slots,
};

#define WHO "from_hurray"

static PyObject *consume(hrpy_state *st, PyObject *capsule) {
    if (!PyCapsule_CheckExact(capsule))
        return PyErr_Format(st->BufferError,
                            WHO ": __hurray__ returned %.100s, not a 'hurray_tensor' capsule",
                            Py_TYPE(capsule)->tp_name);
    const char *name = PyCapsule_GetName(capsule);
    if (name == NULL && PyErr_Occurred()) return NULL;
    if (name != NULL && strcmp(name, HURRAY_CAPSULE_USED_NAME) == 0)
        return PyErr_Format(st->BufferError,
                            WHO ": the capsule is named 'used_hurray_tensor': it has already "
                            "been consumed");
    if (name == NULL || strcmp(name, HURRAY_CAPSULE_NAME) != 0)
        return PyErr_Format(st->BufferError,
                            WHO ": the capsule is named %s%s%s, not 'hurray_tensor': not a "
                            "native-protocol capsule",
                            name ? "'" : "", name ? name : "NULL", name ? "'" : "");
    HurrayBufferList *list = PyCapsule_GetPointer(capsule, HURRAY_CAPSULE_NAME);
    if (list == NULL) return NULL;
    HurrayTensorContext *ctx = PyCapsule_GetContext(capsule);
    if (ctx == NULL) {
        if (PyErr_Occurred()) return NULL;
        return PyErr_Format(st->BufferError,
                            WHO ": the capsule has no HurrayTensorContext (PyCapsule context "
                            "is NULL)");
    }
    /* HR-ABI-4: the version first, before any other accessor and before the list. */
    uint32_t version = hurray_tensor_context_abi_version(ctx);
    if (version != HURRAY_C_ABI_VERSION)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "abi_version",
                              WHO ": the capsule's HurrayTensorContext has C ABI version %lu; "
                              "this build reads version %lu (HURRAY_C_ABI_VERSION)",
                              (unsigned long)version, (unsigned long)HURRAY_C_ABI_VERSION);
    size_t len = 0;
    const uint8_t *bytes = hurray_tensor_context_descriptor(ctx, &len);
    if (bytes == NULL)
        return PyErr_Format(st->BufferError, WHO ": the capsule's context has no descriptor");
    struct hurray_descriptor d;
    hurray_descriptor_init(&d);
    d.allocator = &hrpy_raw_allocator;
    struct hurray_limits lim;
    /* the limits a tensor the binding builds is held to: what one producer could hold,
     * another accepts */
    struct hurray_decode_options opt = {hrpy_authoring_limits(&lim), &hrpy_raw_allocator};
    struct hurray_error err;
    hurray_error_clear(&err);
    size_t used = 0;
    PyObject *owner = NULL, *t = NULL;
    int status = hurray_descriptor_decode(bytes, len, &opt, &d, &used, &err);
    if (status != HURRAY_OK) {
        PyErr_Format(st->BufferError, WHO ": the capsule's descriptor does not decode (%s): %s",
                     hurray_status_name(status), err.message);
        goto done;
    }
    if (used != len) {
        PyErr_Format(st->BufferError,
                     WHO ": the capsule's descriptor is %llu bytes, followed by %llu more",
                     (unsigned long long)used, (unsigned long long)(len - used));
        goto done;
    }
    /* HR-ABI-3: the list, read now that its version is known to be ours. */
    if (hurray_buffer_list_abi_version(list) != HURRAY_C_ABI_VERSION) {
        PyErr_Format(st->BufferError,
                     WHO ": the HurrayBufferList has C ABI version %lu, its context %lu",
                     (unsigned long)hurray_buffer_list_abi_version(list), (unsigned long)version);
        goto done;
    }
    size_t n = hurray_buffer_list_len(list);
    if (n != d.buffer_count) {
        PyErr_Format(st->BufferError,
                     WHO ": the HurrayBufferList holds %zu buffers; the descriptor declares %u",
                     n, (unsigned)d.buffer_count);
        goto done;
    }
    struct hrpy_part parts[HURRAY_MAX_BUFFERS];
    for (size_t i = 0; i < n; i++) {
        const HurrayBuffer *b = hurray_buffer_list_get(list, i);
        if (b == NULL || b->size != d.buffers[i].size || (b->size > 0 && b->data == NULL)) {
            PyErr_Format(st->BufferError,
                         WHO ": buffer %zu of the HurrayBufferList is %llu bytes at %p; the "
                         "descriptor declares %llu",
                         i, b ? (unsigned long long)b->size : 0ull, b ? b->data : NULL,
                         (unsigned long long)d.buffers[i].size);
            goto done;
        }
        parts[i] = (struct hrpy_part){b->data, b->size, NULL,
                                      (b->flags & HURRAY_BUFFER_READONLY) != 0,
                                      d.buffers[i].alignment_log2};
    }
    owner = PyObject_New(PyObject, st->NativeOwner_Type);
    if (owner == NULL) goto done;
    NOWNER(owner)->list = NULL;
    NOWNER(owner)->ctx = NULL;
    /* HR-ABI-8: renamed before ownership is taken. */
    if (PyCapsule_SetName(capsule, HURRAY_CAPSULE_USED_NAME) < 0) goto done;
    NOWNER(owner)->list = list;
    NOWNER(owner)->ctx = ctx;
    for (size_t i = 0; i < n; i++) parts[i].owner = owner;
    t = hrpy_tensor_from_native(st, &d, parts, (Py_ssize_t)n,
                                hurray_tensor_context_device_id(ctx));
done:
    Py_XDECREF(owner); /* the tensor holds it; on failure after the rename this destroys both */
    hurray_descriptor_reset(&d);
    return t;
}

static PyObject *hrpy_from_hurray(PyObject *module, PyObject *obj) {
    hrpy_state *st = hrpy_state_from_module(module);
    if (PyCapsule_CheckExact(obj)) return consume(st, obj);
    PyObject *capsule = PyObject_CallMethodNoArgs(obj, st->str_hurray);
    if (capsule == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError) && !PyObject_HasAttr(obj, st->str_hurray)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         WHO ": %.100s has no __hurray__ (the native protocol); Composite has "
                         "none by design",
                         Py_TYPE(obj)->tp_name);
        }
        return NULL;
    }
    PyObject *t = consume(st, capsule);
    Py_DECREF(capsule);
    return t;
}

static PyMethodDef native_methods[] = {
    {"from_hurray", (PyCFunction)hrpy_from_hurray, METH_O,
     PyDoc_STR("from_hurray($module, obj, /)\n--\n\n"
               "The tensor behind obj.__hurray__() (or a 'hurray_tensor' capsule), without a\n"
               "copy: the producer's buffers, its descriptor, device and device_id\n"
               "(docs/spec/c-abi.md). The capsule is renamed 'used_hurray_tensor' and the\n"
               "producer's list and context are released when the tensor and everything\n"
               "derived from it are gone. UnsupportedError for another C ABI version (the\n"
               "list is not read); BufferError for a used, foreign or invalid capsule.")},
    {NULL, NULL, 0, NULL},
};

int hrpy_native_init(PyObject *module, hrpy_state *st) {
    st->NativeOwner_Type = hrpy_add_type(module, &native_owner_spec, NULL);
    if (st->NativeOwner_Type == NULL) return -1;
    st->str_hurray = PyUnicode_InternFromString("__hurray__");
    if (st->str_hurray == NULL) return -1;
    if (PyModule_AddIntConstant(module, "HURRAY_C_ABI_VERSION", (long)HURRAY_C_ABI_VERSION) < 0)
        return -1;
    return PyModule_AddFunctions(module, native_methods);
}
