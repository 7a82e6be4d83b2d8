/* hurray.Descriptor and hurray.BufferHandle (requirements § Descriptor Encoding,
 * § Buffer Handles; docs/spec/descriptor.md, buffer-protocol.md).
 *
 * A Descriptor is the binding's one record of a descriptor: the compact C
 * struct hurray_descriptor (descriptor.h: a small header, its spans in one
 * storage block). The record is either embedded in the object (decoded by
 * libhurray, built by a Tensor, or deep-copied), or borrowed from a C item
 * tree read from a stream or a file, whose ItemMemory `owner` the Descriptor
 * holds. A Tensor holds its Descriptor and reads the same record, and
 * Tensor.descriptor returns that object: nothing is copied per tensor or per
 * access. The Device (device_id 0 when not a tensor's: it is not on the wire;
 * a tensor's descriptor shares the tensor's Device) is set at construction;
 * the tuple of BufferHandles, every handle sharing that Device, is made on
 * first access and kept. The record never changes after construction. */
#include "state.h"

#include <stddef.h>

/* The embedded record is counted in 8-byte items (ob_size RECORD_ITEMS when
 * embedded, 0 when borrowed), so that a borrowed one costs no record. The
 * type is not GC-tracked: it refers to its Device, its BufferHandles and an
 * ItemMemory, none of which can refer back. */
typedef struct {
    PyObject_VAR_HEAD
    const struct hurray_descriptor *d; /* own, or one in `owner`'s item tree */
    PyObject *owner;                   /* keeps a borrowed record alive; NULL when own */
    PyObject *device;
    PyObject *buffer_handles; /* made on first access */
    PyObject *encoded;        /* bytes of encode(), made on first use (the record is immutable) */
    struct hurray_descriptor own[];
} DescriptorObject;

#define RECORD_ITEMS ((Py_ssize_t)((sizeof(struct hurray_descriptor) + 7) / 8))

typedef struct {
    PyObject_HEAD
    uint64_t size;
    uint8_t index;
    uint8_t alignment_log2;
    uint8_t sync_mode;
    PyObject *device; /* the descriptor's Device: no tensor, no buffer (requirements) */
} BufferHandleObject;

#define DESC(o) ((DescriptorObject *)(o))
#define HANDLE(o) ((BufferHandleObject *)(o))

/* ---- BufferHandle ------------------------------------------------------------------------ */

PyObject *hrpy_buffer_handles(hrpy_state *st, const struct hurray_descriptor *d,
                              PyObject *device) {
    PyObject *t = PyTuple_New(d->buffer_count);
    if (t == NULL) return NULL;
    for (unsigned i = 0; i < d->buffer_count; i++) {
        BufferHandleObject *h =
            (BufferHandleObject *)st->BufferHandle_Type->tp_alloc(st->BufferHandle_Type, 0);
        if (h == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        h->index = (uint8_t)i;
        h->size = d->buffers[i].size;
        h->alignment_log2 = d->buffers[i].alignment_log2;
        h->sync_mode = d->buffers[i].sync_mode;
        h->device = Py_NewRef(device);
        PyTuple_SET_ITEM(t, i, (PyObject *)h);
    }
    return t;
}

static PyObject *handle_get_index(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromLong(HANDLE(self)->index);
}
static PyObject *handle_get_size(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromUnsignedLongLong(HANDLE(self)->size);
}
static PyObject *handle_get_alignment(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromUnsignedLongLong(UINT64_C(1) << HANDLE(self)->alignment_log2);
}
static PyObject *handle_get_sync_mode(PyObject *self, void *Py_UNUSED(c)) {
    const char *name = hurray_sync_mode_name(HANDLE(self)->sync_mode);
    if (name == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}
static PyObject *handle_get_device(PyObject *self, void *Py_UNUSED(c)) {
    return Py_NewRef(HANDLE(self)->device);
}

static PyGetSetDef handle_getset[] = {
    {"index", handle_get_index, NULL, PyDoc_STR("Position in the descriptor's buffer table."),
     NULL},
    {"size", handle_get_size, NULL, PyDoc_STR("Byte length of the buffer."), NULL},
    {"alignment", handle_get_alignment, NULL,
     PyDoc_STR("Declared alignment of the base address, in bytes (a power of two)."), NULL},
    {"sync_mode", handle_get_sync_mode, NULL,
     PyDoc_STR("'producer_synced', 'event' or 'stream'. Read-only."), NULL},
    {"device", handle_get_device, NULL,
     PyDoc_STR("The descriptor's (tensor's) Device: every buffer shares it."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *handle_richcompare(PyObject *self, PyObject *other, int op) {
    if (!Py_IS_TYPE(other, Py_TYPE(self)) || (op != Py_EQ && op != Py_NE))
        Py_RETURN_NOTIMPLEMENTED;
    const BufferHandleObject *a = HANDLE(self), *b = HANDLE(other);
    int eq = a->index == b->index && a->size == b->size &&
             a->alignment_log2 == b->alignment_log2 && a->sync_mode == b->sync_mode;
    if (eq) {
        eq = PyObject_RichCompareBool(a->device, b->device, Py_EQ);
        if (eq < 0) return NULL;
    }
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t handle_hash(PyObject *self) {
    const BufferHandleObject *h = HANDLE(self);
    Py_hash_t dh = PyObject_Hash(h->device);
    if (dh == -1) return -1;
    Py_uhash_t x = (Py_uhash_t)h->size * 1000003u;
    x = (x ^ ((Py_uhash_t)h->index << 16 | (Py_uhash_t)h->alignment_log2 << 8 | h->sync_mode)) *
        1000003u;
    x ^= (Py_uhash_t)dh;
    return x == (Py_uhash_t)-1 ? -2 : (Py_hash_t)x;
}

static PyObject *handle_repr(PyObject *self) {
    const BufferHandleObject *h = HANDLE(self);
    const char *sync = hurray_sync_mode_name(h->sync_mode);
    return PyUnicode_FromFormat(
        "hurray.BufferHandle(index=%d, size=%llu, alignment=%llu, sync_mode='%s', device=%R)",
        (int)h->index, (unsigned long long)h->size,
        (unsigned long long)(UINT64_C(1) << h->alignment_log2), sync ? sync : "?", h->device);
}

static int handle_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(HANDLE(self)->device);
    return 0;
}

static int handle_clear(PyObject *self) {
    Py_CLEAR(HANDLE(self)->device);
    return 0;
}

static void handle_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    (void)handle_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyType_Slot handle_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "One entry of a descriptor's buffer table: index, size, alignment,\n"
                    "sync_mode, device. Immutable, compares and hashes by value, holds no\n"
                    "reference to any tensor or buffer. Not constructible.")},
    {Py_tp_repr, handle_repr},
    {Py_tp_richcompare, handle_richcompare},
    {Py_tp_hash, handle_hash},
    {Py_tp_getset, handle_getset},
    {Py_tp_traverse, handle_traverse},
    {Py_tp_clear, handle_clear},
    {Py_tp_dealloc, handle_dealloc},
    {0, NULL},
};

static PyType_Spec handle_spec = {
    .name = "hurray.BufferHandle",
    .basicsize = sizeof(BufferHandleObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = handle_slots,
};

/* ---- Descriptor: construction ------------------------------------------------------------ */

/* A Descriptor with an embedded, initialised record (storage from PyMem_Raw*:
 * tracemalloc sees it), no Device yet. */
static DescriptorObject *descriptor_alloc(hrpy_state *st) {
    DescriptorObject *self =
        (DescriptorObject *)hrpy_alloc_var(st->Descriptor_Type, RECORD_ITEMS);
    if (self == NULL) return NULL;
    hurray_descriptor_init(self->own);
    self->own->allocator = &hrpy_raw_allocator;
    self->d = self->own;
    return self;
}

/* The Device of a descriptor that is not a tensor's: Device('cpu') for
 * cpu/standard (the shared immutable one), else a new one with device_id 0. */
static PyObject *record_device(hrpy_state *st, const struct hurray_descriptor *d) {
    if (d->device == HURRAY_DEVICE_CPU && d->memory_class == HURRAY_MEM_STANDARD)
        return Py_NewRef(st->cpu_device);
    return hrpy_device_new(st, d->device, d->memory_class, 0);
}

/* Sets the Device (unless given: a tensor's) of a descriptor whose record is
 * filled. Steals `self`. */
static PyObject *descriptor_complete(hrpy_state *st, DescriptorObject *self, PyObject *device) {
    self->device = device ? Py_NewRef(device) : record_device(st, self->d);
    if (self->device == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

PyObject *hrpy_descriptor_from_c(hrpy_state *st, const struct hurray_descriptor *d) {
    return hrpy_descriptor_from_c_device(st, d, NULL);
}

PyObject *hrpy_descriptor_from_c_device(hrpy_state *st, const struct hurray_descriptor *d,
                                        PyObject *device) {
    DescriptorObject *self = descriptor_alloc(st);
    if (self == NULL) return NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_descriptor_copy(self->own, d, &hrpy_raw_allocator, &err);
    if (status != HURRAY_OK) {
        Py_DECREF(self);
        return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    }
    return descriptor_complete(st, self, device);
}

PyObject *hrpy_descriptor_borrow(hrpy_state *st, const struct hurray_descriptor *d,
                                 PyObject *owner, PyObject *device) {
    DescriptorObject *self = (DescriptorObject *)hrpy_alloc_var(st->Descriptor_Type, 0);
    if (self == NULL) return NULL;
    self->d = d;
    self->owner = Py_NewRef(owner);
    return descriptor_complete(st, self, device);
}

PyObject *hrpy_descriptor_new_own(hrpy_state *st, struct hurray_descriptor **record) {
    DescriptorObject *self = descriptor_alloc(st);
    if (self == NULL) return NULL;
    *record = self->own;
    return (PyObject *)self;
}

int hrpy_descriptor_set_device(PyObject *desc, PyObject *device) {
    DescriptorObject *self = DESC(desc);
    if (self->device != NULL || device == NULL) {
        PyErr_SetString(PyExc_SystemError, "descriptor: the device is set once");
        return -1;
    }
    self->device = Py_NewRef(device);
    return 0;
}

const struct hurray_descriptor *hrpy_descriptor_c(PyObject *desc) { return DESC(desc)->d; }

/* One limit keyword: None/absent keeps the default. */
static int limit_arg(PyObject *obj, const char *what, uint64_t max, uint64_t *field) {
    if (obj == NULL || obj == Py_None) return 0;
    return hrpy_as_uint_max(obj, what, max, field);
}

/* Inputs shorter than this are decoded without releasing the GIL. */
#define HRPY_DECODE_NOGIL_BYTES 4096

/* Descriptor.decode(data, *, max_descriptor_bytes=None, max_rank=None,
 * max_buffer_bytes=None, max_composite_members=None). Trailing bytes are
 * ignored (HR-DESC-1). Limits above the format maximum are clamped by C. */
static PyObject *descriptor_decode(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
    static const char *const names[] = {"data", "max_descriptor_bytes", "max_rank",
                                        "max_buffer_bytes", "max_composite_members"};
    PyObject *a[5];
    hrpy_state *st = hrpy_state_from_type((PyTypeObject *)cls);
    if (st == NULL) return NULL;
    if (hrpy_bind("decode", args, nargs, kwnames, names, 5, 1, 1, a) < 0) return NULL;
    struct hurray_limits limits;
    hurray_limits_default(&limits);
    uint64_t max_rank = limits.max_rank;
    if (limit_arg(a[1], "max_descriptor_bytes", UINT64_MAX, &limits.max_descriptor_bytes) < 0 ||
        limit_arg(a[2], "max_rank", UINT32_MAX, &max_rank) < 0 ||
        limit_arg(a[3], "max_buffer_bytes", UINT64_MAX, &limits.max_buffer_bytes) < 0 ||
        limit_arg(a[4], "max_composite_members", UINT64_MAX, &limits.max_composite_members) < 0)
        return NULL;
    limits.max_rank = (uint32_t)max_rank;

    Py_buffer view;
    if (PyObject_GetBuffer(a[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    DescriptorObject *self = descriptor_alloc(st);
    if (self == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    struct hurray_decode_options opt = {&limits, &hrpy_raw_allocator};
    struct hurray_error err;
    hurray_error_clear(&err);
    size_t consumed = 0;
    int status;
    /* A descriptor short enough to decode in about a microsecond keeps the GIL: releasing and
     * taking it back would cost a good part of that. A long one lets other threads run. */
    if (view.len < HRPY_DECODE_NOGIL_BYTES) {
        status = hurray_descriptor_decode((const uint8_t *)view.buf, (size_t)view.len, &opt,
                                          self->own, &consumed, &err);
    } else {
        Py_BEGIN_ALLOW_THREADS
        status = hurray_descriptor_decode((const uint8_t *)view.buf, (size_t)view.len, &opt,
                                          self->own, &consumed, &err);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    if (status != HURRAY_OK) {
        Py_DECREF(self);
        return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    }
    return descriptor_complete(st, self, NULL);
}

/* ---- Descriptor: properties ---------------------------------------------------------------- */

static hrpy_state *self_state(PyObject *self) { return hrpy_state_from_type(Py_TYPE(self)); }

static PyObject *desc_get_dtype(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? Py_XNewRef(hrpy_dtype_get(st, DESC(self)->d->dtype, "dtype")) : NULL;
}

static PyObject *desc_get_shape(PyObject *self, void *Py_UNUSED(c)) {
    return hrpy_shape_to_tuple(DESC(self)->d->rank, DESC(self)->d->shape);
}

static PyObject *desc_get_ndim(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromLong(DESC(self)->d->rank);
}

PyObject *hrpy_descriptor_size(hrpy_state *st, const struct hurray_descriptor *d) {
    uint64_t count = 0;
    int resolved = 0;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_shape_element_count(d->rank, d->shape, &count, &resolved, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    /* A zero extent makes N = 0 even beside a dynamic one (HR-SHAPE-3). */
    if (!resolved && count != 0) Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(count);
}

/* Element count, or None when a dynamic extent leaves it unknown. */
static PyObject *desc_get_size(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? hrpy_descriptor_size(st, DESC(self)->d) : NULL;
}

static PyObject *desc_get_layout(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? hrpy_layout_from_c(st, &DESC(self)->d->layout, DESC(self)->d->rank) : NULL;
}

static PyObject *desc_get_buffer_handles(PyObject *self, void *Py_UNUSED(c)) {
    DescriptorObject *d = DESC(self);
    if (d->buffer_handles == NULL) {
        hrpy_state *st = self_state(self);
        if (st == NULL) return NULL;
        d->buffer_handles = hrpy_buffer_handles(st, d->d, d->device);
        if (d->buffer_handles == NULL) return NULL;
    }
    return Py_NewRef(d->buffer_handles);
}

static PyObject *desc_get_buffer_count(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromLong(DESC(self)->d->buffer_count);
}

static PyObject *desc_get_device(PyObject *self, void *Py_UNUSED(c)) {
    return Py_NewRef(DESC(self)->device);
}

PyObject *hrpy_descriptor_quantization(hrpy_state *st, const struct hurray_descriptor *d) {
    if (!d->quant) Py_RETURN_NONE;
    return hrpy_quant_from_c(st, d->quant);
}

PyObject *hrpy_descriptor_statistics(hrpy_state *st, const struct hurray_descriptor *d) {
    if (!d->statistics) Py_RETURN_NONE;
    return hrpy_statistics_from_c(st, d->statistics);
}

PyObject *hrpy_descriptor_shard(hrpy_state *st, const struct hurray_descriptor *d) {
    if (!d->shard) Py_RETURN_NONE;
    return hrpy_shard_from_c(st, d->shard, d->rank);
}

static PyObject *desc_get_quantization(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? hrpy_descriptor_quantization(st, DESC(self)->d) : NULL;
}

static PyObject *desc_get_statistics(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? hrpy_descriptor_statistics(st, DESC(self)->d) : NULL;
}

static PyObject *desc_get_shard(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? hrpy_descriptor_shard(st, DESC(self)->d) : NULL;
}

static PyObject *desc_get_role(PyObject *self, void *Py_UNUSED(c)) {
    if (!DESC(self)->d->has_role) Py_RETURN_NONE;
    const char *name = hurray_member_role_name(DESC(self)->d->role);
    if (name == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

/* ((type, flags, payload), ...) for the sections carried verbatim. */
static PyObject *desc_get_unknown_sections(PyObject *self, void *Py_UNUSED(c)) {
    const struct hurray_descriptor *d = DESC(self)->d;
    PyObject *t = PyTuple_New(d->opaque_count);
    if (t == NULL) return NULL;
    for (unsigned i = 0; i < d->opaque_count; i++) {
        const struct hurray_opaque_section *s = &d->opaque[i];
        /* Not Py_BuildValue's y#: it turns an empty payload's NULL pointer into None. */
        PyObject *payload = PyBytes_FromStringAndSize(s->length ? (const char *)s->data : NULL,
                                                      (Py_ssize_t)s->length);
        PyObject *item = payload ? Py_BuildValue("(iiN)", (int)s->type, (int)s->flags, payload)
                                 : NULL;
        if (item == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, item);
    }
    return t;
}

static PyObject *desc_get_byte_offset(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromUnsignedLongLong(DESC(self)->d->byte_offset);
}

static PyObject *desc_get_version(PyObject *self, void *Py_UNUSED(c)) {
    return Py_BuildValue("(ii)", (int)DESC(self)->d->version_major,
                         (int)DESC(self)->d->version_minor);
}

static PyObject *desc_get_encoded_len(PyObject *self, void *Py_UNUSED(c)) {
    size_t len = 0;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_descriptor_encoded_len(DESC(self)->d, &len, &err);
    if (status != HURRAY_OK) {
        hrpy_state *st = self_state(self);
        return st ? hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err) : NULL;
    }
    return PyLong_FromSize_t(len);
}

static PyGetSetDef desc_getset[] = {
    {"dtype", desc_get_dtype, NULL, PyDoc_STR("Element type (a Dtype singleton)."), NULL},
    {"shape", desc_get_shape, NULL, PyDoc_STR("Tuple of extents; None for a dynamic one."),
     NULL},
    {"ndim", desc_get_ndim, NULL, PyDoc_STR("Rank."), NULL},
    {"size", desc_get_size, NULL,
     PyDoc_STR("Element count, or None when a dynamic dimension leaves it unknown."), NULL},
    {"layout", desc_get_layout, NULL, PyDoc_STR("The Layout object (a fresh one per access)."),
     NULL},
    {"buffer_handles", desc_get_buffer_handles, NULL,
     PyDoc_STR("Tuple of BufferHandle, one per buffer-table entry, in order."), NULL},
    {"buffer_count", desc_get_buffer_count, NULL, PyDoc_STR("Entries in the buffer table."),
     NULL},
    {"device", desc_get_device, NULL,
     PyDoc_STR("The Device (device_id 0: it is not on the wire)."), NULL},
    {"quantization", desc_get_quantization, NULL,
     PyDoc_STR("The quantization object, or None."), NULL},
    {"statistics", desc_get_statistics, NULL, PyDoc_STR("Statistics, or None."), NULL},
    {"shard", desc_get_shard, NULL, PyDoc_STR("Shard, or None."), NULL},
    {"role", desc_get_role, NULL,
     PyDoc_STR("'base' or 'correction' for an overlay member, else None."), NULL},
    {"unknown_sections", desc_get_unknown_sections, NULL,
     PyDoc_STR("Sections this build does not interpret, carried verbatim:\n"
               "a tuple of (type, flags, payload) in type order."),
     NULL},
    {"byte_offset", desc_get_byte_offset, NULL,
     PyDoc_STR("Where the layout's data starts in buffer 0."), NULL},
    {"version", desc_get_version, NULL, PyDoc_STR("(major, minor) of the format."), NULL},
    {"encoded_len", desc_get_encoded_len, NULL, PyDoc_STR("len(encode())."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- Descriptor: methods -------------------------------------------------------------------- */

/* The canonical bytes of a Descriptor object (borrowed bytes object), encoded once: a
 * descriptor is immutable, so its encoding is too (encode validates, and is the cost of
 * encode() and __hurray__). NULL with an exception set. */
PyObject *hrpy_descriptor_encoded(hrpy_state *st, PyObject *self) {
    DescriptorObject *o = DESC(self);
    if (o->encoded != NULL) return o->encoded;
    struct hurray_error err;
    hurray_error_clear(&err);
    size_t len = 0, written = 0;
    int status = hurray_descriptor_encoded_len(o->d, &len, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
    if (out == NULL) return NULL;
    status = hurray_descriptor_encode(o->d, (uint8_t *)PyBytes_AS_STRING(out), len, &written,
                                      &err);
    if (status != HURRAY_OK) {
        Py_DECREF(out);
        return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    }
    if (written != len) {
        Py_DECREF(out);
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_INTERNAL, "encoded_len",
                              "encode wrote %zu bytes, encoded_len said %zu", written, len);
    }
    o->encoded = out;
    return out;
}

static PyObject *descriptor_encode(PyObject *self, PyTypeObject *defining_class,
                                   PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    hrpy_state *st = PyType_GetModuleState(defining_class);
    if (hrpy_bind("encode", args, nargs, kwnames, NULL, 0, 0, 0, NULL) < 0) return NULL;
    PyObject *out = hrpy_descriptor_encoded(st, self);
    return out == NULL ? NULL : Py_NewRef(out); /* bytes are immutable: one object serves */
}

static PyMethodDef desc_methods[] = {
    {"decode", (PyCFunction)(void (*)(void))descriptor_decode,
     METH_FASTCALL | METH_KEYWORDS | METH_CLASS,
     PyDoc_STR("decode($type, /, data, *, max_descriptor_bytes=None, max_rank=None,\n"
               "       max_buffer_bytes=None, max_composite_members=None)\n--\n\n"
               "Strictly decodes the descriptor at the start of a bytes-like object;\n"
               "trailing bytes are ignored. Limits default to the spec's defaults.")},
    {"encode", (PyCFunction)(void (*)(void))descriptor_encode,
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("encode($self, /)\n--\n\nThe canonical binary descriptor (bytes).")},
    {NULL, NULL, 0, NULL},
};

/* ---- Descriptor: value semantics, lifetime ----------------------------------------------------- */

static PyObject *desc_richcompare(PyObject *self, PyObject *other, int op) {
    if (!Py_IS_TYPE(other, Py_TYPE(self)) || (op != Py_EQ && op != Py_NE))
        Py_RETURN_NOTIMPLEMENTED;
    int eq = hurray_descriptor_equal(DESC(self)->d, DESC(other)->d);
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *desc_repr(PyObject *self) {
    PyObject *dtype = NULL, *shape = NULL, *layout = NULL, *r = NULL;
    dtype = desc_get_dtype(self, NULL);
    shape = desc_get_shape(self, NULL);
    layout = desc_get_layout(self, NULL);
    if (dtype && shape && layout)
        r = PyUnicode_FromFormat(
            "hurray.Descriptor(dtype=%R, shape=%R, layout=%R, buffer_count=%d, device=%R)", dtype,
            shape, layout, (int)DESC(self)->d->buffer_count, DESC(self)->device);
    Py_XDECREF(dtype);
    Py_XDECREF(shape);
    Py_XDECREF(layout);
    return r;
}

static void desc_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    DescriptorObject *d = DESC(self);
    Py_CLEAR(d->device);
    Py_CLEAR(d->buffer_handles);
    Py_CLEAR(d->encoded);
    if (Py_SIZE(self) > 0) hurray_descriptor_reset(d->own);
    d->d = NULL;
    Py_CLEAR(d->owner);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyType_Slot desc_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "What a tensor declares, without its data. Not constructible: get one\n"
                    "from Descriptor.decode or Tensor.descriptor. Immutable; compares\n"
                    "by value; unhashable (sections may carry floats).")},
    {Py_tp_repr, desc_repr},
    {Py_tp_richcompare, desc_richcompare},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_getset, desc_getset},
    {Py_tp_methods, desc_methods},
    {Py_tp_dealloc, desc_dealloc},
    {0, NULL},
};

static PyType_Spec desc_spec = {
    .name = "hurray.Descriptor",
    .basicsize = (int)offsetof(DescriptorObject, own),
    .itemsize = 8,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = desc_slots,
};

int hrpy_descriptor_init(PyObject *module, hrpy_state *st) {
    st->BufferHandle_Type = hrpy_add_type(module, &handle_spec, NULL);
    if (st->BufferHandle_Type == NULL) return -1;
    st->Descriptor_Type = hrpy_add_type(module, &desc_spec, NULL);
    return st->Descriptor_Type == NULL ? -1 : 0;
}
