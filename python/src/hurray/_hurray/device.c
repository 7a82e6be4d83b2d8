/* hurray.Device: a device tag, a memory class and the runtime device_id.
 * Seed § Private device tags and memory classes, § Device ID; docs/spec/devices.md.
 *
 * kind and memory_class each accept a name or a wire byte; the byte is how a
 * private value (0xF0-0xFE) is reached. Reserved and invalid bytes, and pairs
 * the validity table forbids, are refused by hurray_device_check (HR-DEV-2,
 * HR-DEV-4) with InvalidDescriptorError naming the byte. device_id is not on
 * the wire (HR-DEV-6): it is runtime metadata, default 0, a DLPack int32. */
#include "state.h"

typedef struct {
    PyObject_HEAD
    uint8_t tag;
    uint8_t memory_class;
    int32_t device_id;
} DeviceObject;

#define DEVICE(o) ((DeviceObject *)(o))

static int is_device(hrpy_state *st, PyObject *obj) {
    return Py_IS_TYPE(obj, st->Device_Type);
}

int hrpy_device_tags(hrpy_state *st, PyObject *obj, uint8_t *tag, uint8_t *memory_class,
                     int32_t *device_id) {
    if (!is_device(st, obj)) return 0;
    *tag = DEVICE(obj)->tag;
    *memory_class = DEVICE(obj)->memory_class;
    if (device_id) *device_id = DEVICE(obj)->device_id;
    return 1;
}

static PyObject *device_alloc(hrpy_state *st, uint8_t tag, uint8_t memory_class,
                              int32_t device_id) {
    DeviceObject *d = (DeviceObject *)st->Device_Type->tp_alloc(st->Device_Type, 0);
    if (d == NULL) return NULL;
    d->tag = tag;
    d->memory_class = memory_class;
    d->device_id = device_id;
    return (PyObject *)d;
}

PyObject *hrpy_device_new(hrpy_state *st, uint8_t tag, uint8_t memory_class, int32_t device_id) {
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_device_check(tag, memory_class, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    return device_alloc(st, tag, memory_class, device_id);
}

/* A name (through the C name table) or a byte (any value 0..255; the kind
 * check happens in hurray_device_check so the message names the byte). */
static int tag_from_arg(hrpy_state *st, PyObject *arg, int is_class, uint8_t *tag) {
    const char *what = is_class ? "memory_class" : "kind";
    if (PyUnicode_Check(arg)) {
        Py_ssize_t len;
        const char *name = PyUnicode_AsUTF8AndSize(arg, &len);
        if (name == NULL) return -1;
        int status = is_class ? hurray_memory_class_from_name(name, (size_t)len, tag)
                              : hurray_device_from_name(name, (size_t)len, tag);
        if (status != HURRAY_OK) {
            hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_ARGUMENT,
                           is_class ? "memory_class" : "device",
                           "unknown %s name %R (a private value has no name: pass its byte, "
                           "0xF0-0xFE)",
                           what, arg);
            return -1;
        }
        return 0;
    }
    if (PyIndex_Check(arg)) {
        uint64_t v;
        if (hrpy_as_uint_max(arg, what, 0xFF, &v) < 0) return -1;
        *tag = (uint8_t)v;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s must be a name (str) or a wire byte (int), not %.100s",
                 what, Py_TYPE(arg)->tp_name);
    return -1;
}

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"kind", "memory_class", "device_id"};
    PyObject *a[3];
    hrpy_state *st = hrpy_state_from_type(type);
    if (st == NULL) return NULL;
    if (hrpy_bind_tuple("Device", args, kwargs, names, 3, 3, 1, a) < 0) return NULL;
    uint8_t tag, memory_class = HURRAY_MEM_STANDARD;
    uint64_t device_id = 0;
    if (tag_from_arg(st, a[0], 0, &tag) < 0) return NULL;
    if (a[1] != NULL && tag_from_arg(st, a[1], 1, &memory_class) < 0) return NULL;
    if (a[2] != NULL && hrpy_as_uint_max(a[2], "device_id", INT32_MAX, &device_id) < 0)
        return NULL;
    return hrpy_device_new(st, tag, memory_class, (int32_t)device_id);
}

/* ---- properties ------------------------------------------------------------------- */

static PyObject *device_get_kind(PyObject *self, void *Py_UNUSED(closure)) {
    return PyUnicode_FromString(hurray_device_name(DEVICE(self)->tag));
}

static PyObject *device_get_memory_class(PyObject *self, void *Py_UNUSED(closure)) {
    return PyUnicode_FromString(hurray_memory_class_name(DEVICE(self)->memory_class));
}

static PyObject *device_get_tag(PyObject *self, void *Py_UNUSED(closure)) {
    return PyLong_FromLong(DEVICE(self)->tag);
}

static PyObject *device_get_memory_class_tag(PyObject *self, void *Py_UNUSED(closure)) {
    return PyLong_FromLong(DEVICE(self)->memory_class);
}

static PyObject *device_get_is_private(PyObject *self, void *Py_UNUSED(closure)) {
    return PyBool_FromLong(hurray_device_tag_kind(DEVICE(self)->tag) == HURRAY_TAG_PRIVATE);
}

static PyObject *device_get_device_id(PyObject *self, void *Py_UNUSED(closure)) {
    return PyLong_FromLong(DEVICE(self)->device_id);
}

static PyGetSetDef device_getset[] = {
    {"kind", device_get_kind, NULL,
     PyDoc_STR("Device name ('cpu', 'cuda', ...); 'private' for 0xF0-0xFE."), NULL},
    {"memory_class", device_get_memory_class, NULL,
     PyDoc_STR("Memory class name ('standard', ...); 'private' for 0xF0-0xFE."), NULL},
    {"tag", device_get_tag, NULL, PyDoc_STR("The device byte on the wire."), NULL},
    {"memory_class_tag", device_get_memory_class_tag, NULL,
     PyDoc_STR("The memory-class byte on the wire."), NULL},
    {"is_private", device_get_is_private, NULL,
     PyDoc_STR("True when the device tag is in the private range 0xF0-0xFE."), NULL},
    {"device_id", device_get_device_id, NULL,
     PyDoc_STR("Runtime device index (not on the wire), default 0."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- methods ---------------------------------------------------------------------- */

/* devices.md § Hurray → DLPack (HR-DEV-5): the DLDeviceType of the pair.
 * UnsupportedError for the table's Unsupported cells. */
static PyObject *device_dlpack_device_type(PyObject *self, PyTypeObject *defining_class,
                                           PyObject *const *args, Py_ssize_t nargs,
                                           PyObject *kwnames) {
    hrpy_state *st = PyType_GetModuleState(defining_class);
    if (hrpy_bind("dlpack_device_type", args, nargs, kwnames, NULL, 0, 0, 0, NULL) < 0)
        return NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    int32_t dl = 0;
    int status = hurray_device_to_dlpack(DEVICE(self)->tag, DEVICE(self)->memory_class, &dl, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    return PyLong_FromLong(dl);
}

/* devices.md § DLPack → Hurray (HR-DEV-7). */
static PyObject *device_from_dlpack(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
    static const char *const names[] = {"device_type", "device_id"};
    PyObject *a[2];
    hrpy_state *st = hrpy_state_from_type((PyTypeObject *)cls);
    if (st == NULL) return NULL;
    if (hrpy_bind("from_dlpack", args, nargs, kwnames, names, 2, 2, 1, a) < 0) return NULL;
    int64_t dl;
    uint64_t device_id = 0;
    if (hrpy_as_i64(a[0], "device_type", &dl) < 0) return NULL;
    if (a[1] != NULL && hrpy_as_uint_max(a[1], "device_id", INT32_MAX, &device_id) < 0)
        return NULL;
    uint8_t tag = 0, memory_class = 0;
    struct hurray_error err;
    hurray_error_clear(&err);
    if (dl < INT32_MIN || dl > INT32_MAX) /* not a DLDeviceType (an int32) at all */
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "dl_device_type",
                              "dl_device_type: %lld has no Hurray device", (long long)dl);
    int status = hurray_device_from_dlpack((int32_t)dl, &tag, &memory_class, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    return hrpy_device_new(st, tag, memory_class, (int32_t)device_id);
}

static PyMethodDef device_methods[] = {
    {"dlpack_device_type", (PyCFunction)(void (*)(void))device_dlpack_device_type,
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("dlpack_device_type($self, /)\n--\n\n"
               "The DLPack DLDeviceType for (kind, memory_class) (devices.md § Hurray →\n"
               "DLPack). UnsupportedError where DLPack has no equivalent.")},
    {"from_dlpack", (PyCFunction)(void (*)(void))device_from_dlpack,
     METH_FASTCALL | METH_KEYWORDS | METH_CLASS,
     PyDoc_STR("from_dlpack($type, /, device_type, device_id=0)\n--\n\n"
               "The Device for a DLPack DLDeviceType (devices.md § DLPack → Hurray).")},
    {NULL, NULL, 0, NULL},
};

/* ---- value semantics ------------------------------------------------------------------ */

static PyObject *device_richcompare(PyObject *self, PyObject *other, int op) {
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    if (st == NULL) return NULL;
    if (!is_device(st, other) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    const DeviceObject *a = DEVICE(self), *b = DEVICE(other);
    int eq = a->tag == b->tag && a->memory_class == b->memory_class &&
             a->device_id == b->device_id;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t device_hash(PyObject *self) {
    const DeviceObject *d = DEVICE(self);
    Py_uhash_t h = ((Py_uhash_t)d->tag << 8 | d->memory_class) * 1000003u ^
                   (Py_uhash_t)(uint32_t)d->device_id;
    return h == (Py_uhash_t)-1 ? -2 : (Py_hash_t)h;
}

static PyObject *device_repr(PyObject *self) {
    const DeviceObject *d = DEVICE(self);
    /* Requirements: repr MUST include the tag (two private devices print alike otherwise). */
    return PyUnicode_FromFormat(
        "hurray.Device(kind='%s', tag=%s, memory_class='%s', memory_class_tag=%s, "
        "device_id=%d)",
        hurray_device_name(d->tag), HRPY_HEX(d->tag), hurray_memory_class_name(d->memory_class),
        HRPY_HEX(d->memory_class), (int)d->device_id);
}

static PyType_Slot device_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "Device(kind, memory_class='standard', device_id=0)\n--\n\n"
                    "Where a tensor's buffers live: a device tag and a memory class, each\n"
                    "given as a name or a wire byte, and the runtime device index.")},
    {Py_tp_new, device_new},
    {Py_tp_repr, device_repr},
    {Py_tp_hash, device_hash},
    {Py_tp_richcompare, device_richcompare},
    {Py_tp_methods, device_methods},
    {Py_tp_getset, device_getset},
    {Py_tp_traverse, hrpy_traverse_type_only},
    {Py_tp_dealloc, hrpy_dealloc_simple},
    {0, NULL},
};

static PyType_Spec device_spec = {
    .name = "hurray.Device",
    .basicsize = sizeof(DeviceObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = device_slots,
};

int hrpy_device_init(PyObject *module, hrpy_state *st) {
    st->Device_Type = hrpy_add_type(module, &device_spec, NULL);
    return st->Device_Type == NULL ? -1 : 0;
}
