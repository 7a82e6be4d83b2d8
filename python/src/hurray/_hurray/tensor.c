/* hurray.Tensor (requirements § Tensor Surface, § Layouts and Sparse Tensor Support,
 * § Authoring, § Buffer Handles, § Alignment is measured, § sync_mode,
 * § NumPy Interoperability; buffer-protocol.md, memory-layout.md).
 *
 * One class for every layout. A Tensor holds:
 *   - its one C record (the compact struct hurray_descriptor): built in C, in
 *     the Tensor's own allocation, from the constructor's arguments and the
 *     actual buffers through libhurray's setters, and validated by
 *     hurray_descriptor_validate (the three tiers; nothing inferred or
 *     corrected); for a tensor read from a stream or a file, the record of the
 *     item tree it came from, borrowed (descriptor.c). Its hurray.Descriptor
 *     object is made when first asked for (tensor_descriptor);
 *   - one slot per buffer-table entry: the address and declared size, the
 *     object that keeps the memory valid (a Py_buffer export held for the
 *     tensor's lifetime, an AlignedBuffer the binding allocated, the ndarray
 *     from_numpy shares, or the parent tensor of a component view), the
 *     read-only flag and the declared alignment;
 *   - its Device (which carries the runtime device_id).
 * Nothing changes after construction. descriptor is that one Descriptor object
 * (and buffer_handles its tuple); layout, quantization, statistics and shard
 * are fresh value objects per access, equal each time.
 *
 * The buffer table is filled from the buffers themselves: size = their length
 * in bytes, alignment measured from the address (owned buffers: what was
 * allocated), sync_mode producer_synced (no constructor accepts it). A
 * Tensor is validated at the format's maxima, not a reader's default limits:
 * those protect a reader from untrusted input, and a tensor built here is
 * the producer's own.
 *
 * The Tensor exports no buffer itself (NumPy would take it for a uint8
 * array): the bytes leave through buffer(i), the component views,
 * __array_interface__ and __array__, every one of which refuses a tensor
 * whose bytes are not addressable here (device other than cpu) or not ready
 * (a buffer whose sync_mode is not producer_synced, HR-BUF-6). */
#include "state.h"

#include <limits.h>
#include <stdarg.h>

#include <structmember.h>

struct hrpy_tbuf {
    char *ptr;
    uint64_t size;
    PyObject *owner;  /* keeps ptr valid; NULL when `view` does */
    Py_buffer *view;  /* the exporter's buffer, held for the tensor's lifetime; NULL
                         unless the bytes came through the buffer protocol */
    uint8_t readonly;
    uint8_t align_log2;
    uint8_t measured; /* align_log2 was measured from a borrowed address, not chosen */
};

/* The alignment a part over this buffer passes on: -1 (measure again) when it was measured,
 * so that a measured alignment stays known as one. */
static int part_align(const struct hrpy_tbuf *b) {
    return b->measured ? -1 : (int)b->align_log2;
}

typedef struct {
    PyObject_VAR_HEAD
    const struct hurray_descriptor *d; /* the record of `descriptor` */
    /* hurray.Descriptor: the one record. NULL until first asked for in a tensor read from a
     * stream or file (tensor_descriptor makes it then, borrowing the record from the item
     * tree its first buffer's owner keeps alive): most loaded tensors are never asked. */
    PyObject *descriptor;
    PyObject *device;
    PyObject *weakreflist;
    uint8_t host; /* bytes in host memory whatever the device tag (streams, files) */
    /* 1: `d` is this object's own record, held in its allocation after bufs[] (a tensor
     * built here: tensor_seal); 2: its own record in a block of its own (OWN_RECORD_TAKEN:
     * taken from a tree read from a stream or a file). The Descriptor object is then made on
     * first use, over an equal copy (tensor_descriptor), and the record is reset in dealloc
     * (and its block freed). */
    uint8_t own_record;
    /* A coo / csr / csc tensor's index buffers (1, and 2 for csr / csc) are memory hurray
     * allocated or read and no one else holds: their slots are read-only, so that every view
     * of them is (memory-layout.md § Checked once, HR-LAYOUT-26). Set at construction. */
    uint8_t index_private;
    /* index_private, and § Index contents held when last read: no export reads them again. */
    uint8_t index_checked;
    struct hrpy_tbuf bufs[];
} TensorObject;

#define TENSOR(o) ((TensorObject *)(o))
#define OWN_RECORD_TAKEN 2

/* The own record's room, in buffer slots after the Py_SIZE ones (slots are 8-byte aligned
 * and a multiple of 8 bytes long, so the record is too). */
#define RECORD_SLOTS \
    ((Py_ssize_t)((sizeof(struct hurray_descriptor) + sizeof(struct hrpy_tbuf) - 1) / \
                  sizeof(struct hrpy_tbuf)))
_Static_assert(sizeof(struct hrpy_tbuf) % _Alignof(struct hurray_descriptor) == 0,
               "the record after the slots must be aligned");

/* Larger copies and fills run with the GIL released. */
#define NOGIL_BYTES ((uint64_t)1 << 16)

/* ---- allocation and lifetime ------------------------------------------------------------ */

static TensorObject *tensor_alloc(hrpy_state *st, Py_ssize_t nbuf) {
    TensorObject *self;
    if (nbuf > HURRAY_MAX_BUFFERS) {
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_LIMIT, "buffer_count",
                       "buffer_count: %zd buffers; a descriptor holds at most %d", nbuf,
                       HURRAY_MAX_BUFFERS);
        return NULL;
    }
    self = (TensorObject *)hrpy_alloc_var(st->Tensor_Type, nbuf);
    return self;
}

/* A Tensor with room for its own record after its nbuf slots, initialised and set as `d`
 * (one allocation for the object, its slots and its record; the record's storage block is
 * the setters' one allocation). Py_SIZE stays nbuf. */
static TensorObject *tensor_alloc_own(hrpy_state *st, Py_ssize_t nbuf) {
    if (nbuf > HURRAY_MAX_BUFFERS) return tensor_alloc(st, nbuf); /* raises */
    TensorObject *self = (TensorObject *)hrpy_alloc_var(st->Tensor_Type, nbuf + RECORD_SLOTS);
    if (self == NULL) return NULL;
    Py_SET_SIZE(self, nbuf);
    struct hurray_descriptor *record = (struct hurray_descriptor *)(void *)&self->bufs[nbuf];
    hurray_descriptor_init(record);
    record->allocator = &hrpy_raw_allocator;
    self->d = record;
    self->own_record = 1;
    return self;
}

/* Gives `self` a Descriptor with an embedded record for the caller to fill. */
static struct hurray_descriptor *tensor_own_record(hrpy_state *st, TensorObject *self) {
    struct hurray_descriptor *record = NULL;
    self->descriptor = hrpy_descriptor_new_own(st, &record);
    if (self->descriptor == NULL) return NULL;
    self->d = record;
    return record;
}

static void slot_release(struct hrpy_tbuf *b) {
    if (b->view != NULL) {
        PyBuffer_Release(b->view);
        PyMem_Free(b->view);
        b->view = NULL;
    }
    Py_CLEAR(b->owner);
    b->ptr = NULL;
}

static int tensor_traverse(PyObject *self, visitproc visit, void *arg) {
    TensorObject *t = TENSOR(self);
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(t->device);
    Py_VISIT(t->descriptor);
    /* Owners are plain references. An exporter we hold a Py_buffer of is not
     * visited: the collector would otherwise tp_clear it while exported (a
     * memoryview's clear drops its managed buffer despite open exports, and
     * releasing ours afterwards crashes); unvisited, it counts as reachable
     * until this tensor releases it in dealloc. */
    for (Py_ssize_t i = 0; i < Py_SIZE(self); i++) Py_VISIT(t->bufs[i].owner);
    return 0;
}

/* The buffers and the descriptor stay until dealloc: a cycle through an
 * exporter is broken by the exporter's own clear, and the pointers must not
 * dangle before (no cycle runs through a Descriptor). */
static int tensor_clear(PyObject *self) {
    Py_CLEAR(TENSOR(self)->device);
    return 0;
}

static void tensor_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    TensorObject *t = TENSOR(self);
    PyObject_GC_UnTrack(self);
    if (t->weakreflist != NULL) PyObject_ClearWeakRefs(self);
    (void)tensor_clear(self);
    for (Py_ssize_t i = 0; i < Py_SIZE(self); i++) slot_release(&t->bufs[i]);
    if (t->own_record) hurray_descriptor_reset((struct hurray_descriptor *)t->d);
    if (t->own_record == OWN_RECORD_TAKEN) PyMem_RawFree((void *)t->d);
    t->d = NULL;
    Py_CLEAR(t->descriptor);
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* ---- building ----------------------------------------------------------------------------- */

/* Every field but the shape, which is read up to `rank` only (no memset of the whole
 * spec, 600 bytes, per tensor built). */
void hrpy_tensor_spec_init(struct hrpy_tensor_spec *s, hrpy_state *st) {
    s->dtype = 0;
    s->rank = 0;
    memset(&s->layout, 0, sizeof s->layout);
    s->layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
    s->layout_obj = NULL;
    s->quant = NULL;
    s->stats = NULL;
    s->shard = NULL;
    s->device = st->cpu_device;
    s->byte_offset = 0;
}

/* Limits a producer's own tensor is validated against: the format's maxima. */
static const struct hurray_limits *authoring_limits(struct hurray_limits *lim) {
    hurray_limits_default(lim);
    lim->max_descriptor_bytes = UINT64_MAX;
    lim->max_buffer_bytes = UINT64_MAX;
    lim->max_rank = UINT32_MAX;
    lim->max_composite_members = UINT64_MAX;
    hurray_limits_clamp(lim);
    return lim;
}

static void slot_set(struct hrpy_tbuf *b, const struct hrpy_part *p) {
    b->ptr = p->ptr;
    b->size = p->size;
    b->owner = Py_XNewRef(p->owner);
    b->readonly = p->readonly ? 1 : 0;
    b->align_log2 = p->size == 0                        ? 0
                    : p->align_log2 >= 0                 ? (uint8_t)p->align_log2
                    : p->align_log2 == HRPY_ALIGN_AS_SAVED ? hrpy_owned_align_log2(p->size)
                                                         : hrpy_measure_align_log2(p->ptr, p->size);
    b->measured = p->size != 0 && p->align_log2 == -1;
}

/* The quantization section, its buffer indices re-derived from the layout:
 * L, L+1, ... (HR-QUANT-3). With L unknowable (private, unknown layouts) the
 * indices are kept as given. */
static int fill_quant(hrpy_state *st, struct hurray_descriptor *d, const struct hurray_quant *q) {
    int layout_buffers = -1;
    struct hurray_error err;
    hurray_error_clear(&err);
    struct hurray_quant renumbered = *q;
    int status = hurray_layout_buffer_count(d->layout.tag, d->rank, &layout_buffers, &err);
    if (status == HURRAY_OK && layout_buffers >= 0 && layout_buffers < HURRAY_MAX_BUFFERS)
        hrpy_quant_set_first_index(&renumbered, (uint8_t)layout_buffers);
    if (status == HURRAY_OK) status = hurray_descriptor_set_quant(d, &renumbered, &err);
    if (status != HURRAY_OK) {
        hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
        return -1;
    }
    return 0;
}

/* Fills the descriptor of `self` (whose slots are set) from `s` through
 * libhurray's setters (one storage block: shape, buffer table, layout and
 * shard spans, opaque bytes copied) and validates it. Steals `self`. */
static PyObject *tensor_seal(hrpy_state *st, TensorObject *self,
                             const struct hrpy_tensor_spec *s) {
    /* self comes from tensor_alloc_own: its record is its own, in its allocation */
    struct hurray_descriptor *d = (struct hurray_descriptor *)self->d;
    struct hurray_buffer_desc table[HURRAY_MAX_BUFFERS];
    struct hurray_error err;
    hurray_error_clear(&err);
    int32_t device_id = 0;
    if (!self->own_record) {
        PyErr_SetString(PyExc_SystemError, "tensor_seal: the tensor has no record of its own");
        goto error;
    }
    if (!hrpy_device_tags(st, s->device, &d->device, &d->memory_class, &device_id)) {
        PyErr_SetString(PyExc_SystemError, "tensor_seal: device is not a hurray.Device");
        goto error;
    }
    self->device = Py_NewRef(s->device);
    d->dtype = s->dtype;
    d->byte_offset = s->byte_offset;
    for (Py_ssize_t i = 0; i < Py_SIZE(self); i++) {
        table[i].size = self->bufs[i].size;
        table[i].alignment_log2 = self->bufs[i].size == 0 ? 0 : self->bufs[i].align_log2;
        table[i].sync_mode = HURRAY_SYNC_PRODUCER_SYNCED; /* everything built here */
    }
    if (s->rank > HURRAY_MAX_RANK) { /* every caller checked it; s->shape holds no more */
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_LIMIT, "rank",
                       "rank: %d exceeds the format maximum of %d", (int)s->rank,
                       HURRAY_MAX_RANK);
        goto error;
    }
    /* The shape and the buffer table are borrowed for this call (descriptor.h: a caller may
     * point a span at memory of its own, setting its length with it), and the layout setter
     * copies them with the layout's own spans into the record's one storage block: one block
     * built per tensor, where a setter per span (shape, layout, buffers) built it three
     * times. The setter's checks are the same; nothing else reads the record meanwhile. */
    d->rank = s->rank;
    d->shape = s->rank ? s->shape : NULL;
    d->buffer_count = (uint8_t)Py_SIZE(self);
    d->buffers = Py_SIZE(self) ? table : NULL;
    int status = hurray_descriptor_set_layout(d, &s->layout, &err);
    if (status == HURRAY_OK && s->shard != NULL)
        status = hurray_descriptor_set_shard(d, s->shard, &err);
    if (status != HURRAY_OK) {
        if (d->storage == NULL) { /* nothing copied: drop the borrowed spans */
            d->rank = 0;
            d->shape = NULL;
            d->buffer_count = 0;
            d->buffers = NULL;
        }
        hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
        goto error;
    }
    if (s->quant != NULL && fill_quant(st, d, s->quant) < 0) goto error;
    if (s->stats != NULL) status = hurray_descriptor_set_statistics(d, s->stats, &err);
    if (status == HURRAY_OK) status = hurray_descriptor_validate(d, &st->authoring, &err);
    if (status != HURRAY_OK) {
        hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
        goto error;
    }
    return (PyObject *)self;
error:
    Py_DECREF(self);
    return NULL;
}

PyObject *hrpy_tensor_build(hrpy_state *st, const struct hrpy_tensor_spec *s,
                            const struct hrpy_part *parts, Py_ssize_t n) {
    TensorObject *self = tensor_alloc_own(st, n);
    if (self == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) slot_set(&self->bufs[i], &parts[i]);
    return tensor_seal(st, self, s);
}

/* ---- items: tensors from streams and files, and the view writers take -------------------- */

static PyObject *tensor_from_record(hrpy_state *st, const struct hurray_descriptor *d,
                                    struct hurray_descriptor *decoded, PyObject *owner,
                                    const struct hrpy_part *parts, Py_ssize_t n,
                                    int32_t device_id, int host);

/* A tensor with no buffers, the root of a tree its reader drops next, keeps nothing of the
 * tree: its record is moved out of the tree into a block of its own (from the raw allocator,
 * whose freed tree nodes that block reuses) and its Descriptor object is made on first use.
 * A stream's or a file's smallest tensors then cost that block and one object each, not an
 * object, an ItemMemory, a Descriptor and the tree's node (HR-STREAM-8, HR-FILE-13). */
static PyObject *tensor_take_record(hrpy_state *st, struct hurray_descriptor *d) {
    struct hurray_descriptor *own = PyMem_RawMalloc(sizeof *own);
    if (own == NULL) return PyErr_NoMemory();
    hurray_descriptor_init(own);
    hurray_descriptor_move(own, d); /* its storage block moves with it: nothing copied */
    return hrpy_tensor_adopt_record(st, own);
}

PyObject *hrpy_tensor_adopt_record(hrpy_state *st, struct hurray_descriptor *own) {
    struct hurray_limits lim;
    struct hurray_error err;
    hurray_error_clear(&err);
    TensorObject *t = tensor_alloc(st, 0);
    if (t == NULL) {
        hurray_descriptor_reset(own);
        PyMem_RawFree(own);
        return NULL;
    }
    t->d = own;
    t->own_record = OWN_RECORD_TAKEN; /* dealloc frees it from here on */
    if (own->buffer_count != 0 || own->has_role) {
        Py_DECREF(t);
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_INTERNAL, "descriptor",
                              "a taken tensor record has buffers or a member role");
    }
    t->host = 1;
    if (own->device == HURRAY_DEVICE_CPU && own->memory_class == HURRAY_MEM_STANDARD)
        t->device = Py_NewRef(st->cpu_device);
    else
        t->device = hrpy_device_new(st, own->device, own->memory_class, 0);
    if (t->device == NULL) {
        Py_DECREF(t);
        return NULL;
    }
    int status = hurray_descriptor_validate(own, authoring_limits(&lim), &err);
    if (status != HURRAY_OK) {
        Py_DECREF(t);
        return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    }
    return (PyObject *)t;
}

PyObject *hrpy_tensor_from_c(hrpy_state *st, struct hurray_descriptor *d, PyObject *owner,
                             const struct hrpy_part *parts, Py_ssize_t n, int take) {
    if (take && owner != NULL && n == 0) return tensor_take_record(st, d);
    return tensor_from_record(st, d, NULL, owner, parts, n, 0, 1);
}

const struct hurray_limits *hrpy_authoring_limits(struct hurray_limits *lim) {
    return authoring_limits(lim);
}

PyObject *hrpy_tensor_from_native(hrpy_state *st, struct hurray_descriptor *decoded,
                                  const struct hrpy_part *parts, Py_ssize_t n,
                                  int32_t device_id) {
    return tensor_from_record(st, decoded, decoded, NULL, parts, n, device_id, 0);
}

/* `decoded` (when not NULL, == d): a record decoded with the authoring limits and the raw
 * allocator, moved into the tensor rather than copied, and not validated again (decoding
 * validated it under the same limits). */
static PyObject *tensor_from_record(hrpy_state *st, const struct hurray_descriptor *d,
                                    struct hurray_descriptor *decoded, PyObject *owner,
                                    const struct hrpy_part *parts, Py_ssize_t n,
                                    int32_t device_id, int host) {
    struct hurray_limits lim;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = HURRAY_OK;
    if (n != d->buffer_count)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_BUFFER_COUNT, "buffer_count",
                              "buffer_count: the descriptor declares %d buffers, %zd were given",
                              (int)d->buffer_count, n);
    if (owner != NULL && d->has_role)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_INTERNAL, "role",
                              "a borrowed tensor record still carries its member role");
    TensorObject *t = tensor_alloc(st, n);
    if (t == NULL) return NULL;
    t->host = (uint8_t)host;
    if (d->device == HURRAY_DEVICE_CPU && d->memory_class == HURRAY_MEM_STANDARD &&
        device_id == 0)
        t->device = Py_NewRef(st->cpu_device);
    else
        t->device = hrpy_device_new(st, d->device, d->memory_class, device_id);
    if (t->device == NULL) {
        Py_DECREF(t);
        return NULL;
    }
    if (owner != NULL) { /* the item tree's record, shared */
        t->d = d;
        /* with a buffer over the tree, its owner keeps the record alive: the Descriptor
         * object waits for its first use (tensor_descriptor); else it is made now */
        if (n == 0 || parts[0].owner != owner)
            t->descriptor = hrpy_descriptor_borrow(st, d, owner, t->device);
        if ((n == 0 || parts[0].owner != owner) && t->descriptor == NULL) {
            Py_DECREF(t);
            return NULL;
        }
    } else {
        struct hurray_descriptor *own = tensor_own_record(st, t);
        if (own != NULL && decoded != NULL) hurray_descriptor_move(own, decoded);
        else if (own != NULL) status = hurray_descriptor_copy(own, d, &hrpy_raw_allocator, &err);
        if (own == NULL || status != HURRAY_OK ||
            hrpy_descriptor_set_device(t->descriptor, t->device) < 0) {
            Py_DECREF(t);
            return own == NULL || status == HURRAY_OK
                       ? NULL
                       : hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
        }
        hurray_descriptor_clear_role(own); /* a tensor has no role; its composite holds it */
    }
    for (Py_ssize_t i = 0; i < n; i++) slot_set(&t->bufs[i], &parts[i]);
    if (decoded != NULL) return (PyObject *)t;
    status = hurray_descriptor_validate(t->d, authoring_limits(&lim), &err);
    if (status != HURRAY_OK) {
        Py_DECREF(t);
        return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    }
    return (PyObject *)t;
}

const struct hurray_descriptor *hrpy_tensor_c(hrpy_state *st, PyObject *obj, int *host) {
    if (!PyObject_TypeCheck(obj, st->Tensor_Type)) return NULL;
    const struct hurray_descriptor *d = TENSOR(obj)->d;
    if (host != NULL) *host = d->device == HURRAY_DEVICE_CPU || TENSOR(obj)->host;
    return d;
}

int hrpy_tensor_file_align_log2(PyObject *tensor, unsigned i) {
    TensorObject *t = TENSOR(tensor);
    if ((Py_ssize_t)i >= Py_SIZE(tensor)) return -1;
    const struct hrpy_tbuf *b = &t->bufs[i];
    if (!b->measured || t->d->buffers[i].size == 0) return t->d->buffers[i].alignment_log2;
    return hrpy_owned_align_log2(t->d->buffers[i].size);
}

uint8_t *hrpy_tensor_data(PyObject *tensor, unsigned i) {
    TensorObject *t = TENSOR(tensor);
    return (Py_ssize_t)i < Py_SIZE(tensor) && t->bufs[i].size > 0 ? (uint8_t *)t->bufs[i].ptr
                                                                 : NULL;
}

/* ---- argument conversions shared with the factories ------------------------------------- */

int hrpy_layout_arg(hrpy_state *st, PyObject *obj, uint8_t rank, const char *who,
                    struct hurray_layout *out, PyObject **opaque_owner) {
    *opaque_owner = NULL;
    memset(out, 0, sizeof *out);
    if (obj == NULL || obj == Py_None) {
        out->tag = HURRAY_LAYOUT_ROW_MAJOR; /* requirements § Authoring: omitting it means row-major */
        return 0;
    }
    int param_rank = -1;
    const struct hurray_layout *l = hrpy_layout_c(st, obj, &param_rank);
    if (l == NULL) {
        /* A string cannot carry nnz or strides: never accepted (requirements § Authoring). */
        PyErr_Format(PyExc_TypeError, "%s: layout must be a hurray.Layout instance, not %.100s",
                     who, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (l->tag == HURRAY_LAYOUT_COMPOSITE) {
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "layout",
                       "%s: a composite head owns no buffers, which a Tensor cannot represent",
                       who);
        return -1;
    }
    if (param_rank >= 0 && param_rank != rank) {
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_CONSTRAINT, "rank",
                       "rank: the %s layout's parameters are for rank %d, the shape has rank %d",
                       hurray_layout_name(l->tag), param_rank, (int)rank);
        return -1;
    }
    *out = *l;
    if (l->opaque != NULL) *opaque_owner = obj;
    return 0;
}

/* Index of the first dynamic extent, or -1. */
static int first_dynamic(uint8_t rank, const uint64_t *shape) {
    for (unsigned k = 0; k < rank; k++)
        if (shape[k] == HURRAY_DYNAMIC_DIM) return (int)k;
    return -1;
}

int hrpy_refuse_dynamic(hrpy_state *st, const char *who, uint8_t rank, const uint64_t *shape) {
    int k = first_dynamic(rank, shape);
    if (k < 0) return 0;
    char field[32];
    PyOS_snprintf(field, sizeof field, "shape[%d]", k);
    hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_CONSTRAINT, field,
                   "%s: %s is dynamic (None); %s needs every extent resolved", who, field, who);
    return -1;
}

/* device= (a Device, or what Device() takes as kind; None: cpu) and
 * device_id= (None: the Device's own, 0 for a kind). New reference. */
static PyObject *device_arg(hrpy_state *st, PyObject *device, PyObject *device_id) {
    uint8_t tag = HURRAY_DEVICE_CPU, memory_class = HURRAY_MEM_STANDARD;
    int32_t id = 0;
    PyObject *given = NULL; /* a Device object that may be reused */
    if (device != NULL && device != Py_None) {
        if (hrpy_device_tags(st, device, &tag, &memory_class, &id)) {
            given = device;
        } else {
            PyObject *made = PyObject_CallOneArg((PyObject *)st->Device_Type, device);
            if (made == NULL) return NULL;
            (void)hrpy_device_tags(st, made, &tag, &memory_class, &id);
            Py_DECREF(made);
        }
    }
    if (device_id != NULL && device_id != Py_None) {
        uint64_t v = 0;
        if (hrpy_as_uint_max(device_id, "device_id", INT32_MAX, &v) < 0) return NULL;
        if (given != NULL && (int32_t)v != id)
            return PyErr_Format(PyExc_ValueError,
                                "device_id=%lld contradicts device.device_id=%ld; pass one",
                                (long long)v, (long)id);
        id = (int32_t)v;
    }
    if (given != NULL) return Py_NewRef(given);
    if (tag == HURRAY_DEVICE_CPU && memory_class == HURRAY_MEM_STANDARD && id == 0)
        return Py_NewRef(st->cpu_device);
    return hrpy_device_new(st, tag, memory_class, id);
}

/* copy=None / True / False -> -1 / 1 / 0. */
static int copy_arg(PyObject *obj, int *mode) {
    if (obj == NULL || obj == Py_None) {
        *mode = -1;
        return 0;
    }
    if (!PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "copy must be None, True or False, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    *mode = obj == Py_True;
    return 0;
}

/* ---- the constructor ------------------------------------------------------------------------ */

/* Borrows one buffer-protocol object's bytes for the tensor's lifetime. */
static int slot_from_object(struct hrpy_tbuf *b, PyObject *obj, Py_ssize_t i) {
    if (!PyObject_CheckBuffer(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "buffers[%zd] must support the buffer protocol, not %.100s", i,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_buffer *view = PyMem_Malloc(sizeof *view);
    if (view == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (PyObject_GetBuffer(obj, view, PyBUF_ANY_CONTIGUOUS) < 0) {
        PyMem_Free(view);
        return -1;
    }
    b->view = view;
    b->ptr = view->buf;
    b->size = (uint64_t)view->len;
    b->readonly = view->readonly ? 1 : 0;
    b->align_log2 = hrpy_measure_align_log2(b->ptr, b->size);
    b->measured = b->size != 0;
    return 0;
}

static void copy_bytes(void *dst, const void *src, uint64_t n) {
    if (n == 0) return;
    if (n < NOGIL_BYTES) {
        memcpy(dst, src, (size_t)n);
        return;
    }
    Py_BEGIN_ALLOW_THREADS
    memcpy(dst, src, (size_t)n);
    Py_END_ALLOW_THREADS
}

/* Replaces a borrowed buffer by an owned, aligned copy of it. */
static int slot_copy_to_owned(hrpy_state *st, struct hrpy_tbuf *b) {
    void *data = NULL;
    uint8_t log2 = 0;
    PyObject *owner = hrpy_owned_new(st, b->size, 0, &data, &log2);
    if (owner == NULL) return -1;
    copy_bytes(data, b->ptr, b->size);
    slot_release(b);
    b->owner = owner;
    b->ptr = data;
    b->readonly = 0;
    b->align_log2 = log2;
    b->measured = 0;
    return 0;
}

/* copy on ingest, per buffer (requirements § copy on ingest): None copies a buffer
 * whose address is not MIN_BUFFER_ALIGNMENT-aligned, True always copies,
 * False refuses (ValueError) when a copy would be needed. */
static int slot_apply_copy(hrpy_state *st, struct hrpy_tbuf *b, int mode, const char *who,
                           Py_ssize_t i) {
    int aligned = b->size == 0 || ((uintptr_t)b->ptr % HURRAY_MIN_BUFFER_ALIGNMENT) == 0;
    if (mode == 1 || (mode == -1 && !aligned)) return slot_copy_to_owned(st, b);
    if (mode == 0 && !aligned) {
        PyErr_Format(PyExc_ValueError,
                     "%s: buffers[%zd] at %p is only %ld-byte aligned; sharing it needs "
                     "MIN_BUFFER_ALIGNMENT (%d) and copy=False forbids the copy",
                     who, i, (void *)b->ptr, 1L << b->align_log2, HURRAY_MIN_BUFFER_ALIGNMENT);
        return -1;
    }
    return 0;
}

/* The sections and scalars of the constructor, converted into `s`. */
static int tensor_spec_from_args(hrpy_state *st, PyObject *const *a,
                                 struct hrpy_tensor_spec *s, PyObject **device) {
    if (!hrpy_dtype_tag_of(st, a[1], &s->dtype)) {
        PyErr_Format(PyExc_TypeError, "Tensor: dtype must be a hurray.Dtype, not %.100s",
                     Py_TYPE(a[1])->tp_name);
        return -1;
    }
    if (hrpy_as_shape(st, a[2], s->shape, &s->rank) < 0) return -1;
    if (hrpy_layout_arg(st, a[3], s->rank, "Tensor", &s->layout, &s->layout_obj) < 0) return -1;
    if (a[4] != NULL && a[4] != Py_None) {
        s->quant = hrpy_quant_c(st, a[4]);
        if (s->quant == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "Tensor: quantization must be a hurray.Quantization or None, not %.100s",
                         Py_TYPE(a[4])->tp_name);
            return -1;
        }
    }
    if (a[5] != NULL && a[5] != Py_None) {
        s->stats = hrpy_statistics_c(st, a[5]);
        if (s->stats == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "Tensor: statistics must be a hurray.Statistics or None, not %.100s",
                         Py_TYPE(a[5])->tp_name);
            return -1;
        }
    }
    if (a[6] != NULL && a[6] != Py_None) {
        uint8_t shard_rank = 0;
        s->shard = hrpy_shard_c(st, a[6], &shard_rank);
        if (s->shard == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "Tensor: shard must be a hurray.Shard or None, not %.100s",
                         Py_TYPE(a[6])->tp_name);
            return -1;
        }
        if (shard_rank != s->rank) {
            hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_CONSTRAINT, "shard.global_shape",
                           "shard.global_shape: %d entries, the tensor's rank is %d",
                           (int)shard_rank, (int)s->rank);
            return -1;
        }
    }
    if (a[9] != NULL && hrpy_as_u64(a[9], "byte_offset", &s->byte_offset) < 0) return -1;
    *device = device_arg(st, a[7], a[8]);
    if (*device == NULL) return -1;
    s->device = *device;
    return 0;
}

/* buffers: one buffer-protocol object, or a sequence of them. New reference
 * to a fast sequence. */
static PyObject *buffers_arg(PyObject *obj) {
    if (PyObject_CheckBuffer(obj)) return PyTuple_Pack(1, obj);
    if (PyUnicode_Check(obj) || !PySequence_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "Tensor: buffers must be a buffer-protocol object or a sequence of them, "
                     "not %.100s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return PySequence_Fast(obj, "Tensor: buffers must be a sequence");
}

static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"buffers", "dtype",  "shape",     "layout",
                                        "quantization", "statistics", "shard", "device",
                                        "device_id", "byte_offset", "copy"};
    PyObject *a[11];
    PyObject *seq = NULL, *device = NULL;
    TensorObject *self = NULL;
    struct hrpy_tensor_spec s;
    int mode = -1;
    hrpy_state *st = hrpy_state_from_type(type);
    if (st == NULL) return NULL;
    if (hrpy_bind_tuple("Tensor", args, kwargs, names, 11, 3, 3, a) < 0) return NULL;
    hrpy_tensor_spec_init(&s, st);
    if (tensor_spec_from_args(st, a, &s, &device) < 0) goto error;
    if (copy_arg(a[10], &mode) < 0) goto error;
    seq = buffers_arg(a[0]);
    if (seq == NULL) goto error;
    self = tensor_alloc_own(st, PySequence_Fast_GET_SIZE(seq));
    if (self == NULL) goto error;
    for (Py_ssize_t i = 0; i < Py_SIZE(self); i++) {
        if (slot_from_object(&self->bufs[i], PySequence_Fast_GET_ITEM(seq, i), i) < 0 ||
            slot_apply_copy(st, &self->bufs[i], mode, "Tensor", i) < 0)
            goto error;
    }
    Py_CLEAR(seq);
    PyObject *result = tensor_seal(st, self, &s); /* steals self */
    Py_DECREF(device);
    return result;
error:
    Py_XDECREF(self);
    Py_XDECREF(seq);
    Py_XDECREF(device);
    return NULL;
}

/* ---- byte access rules ----------------------------------------------------------------------- */

/* Whether check_bytes passes, without an error: callers whose `who` names an index or an
 * attribute format it only when this fails (no formatting on the success path). */
static int bytes_ready(const struct hurray_descriptor *d) {
    if (d->device != HURRAY_DEVICE_CPU) return 0;
    for (unsigned i = 0; i < d->buffer_count; i++)
        if (d->buffers[i].sync_mode != HURRAY_SYNC_PRODUCER_SYNCED) return 0;
    return 1;
}

/* Paths that hand out bytes need CPU memory and producer_synced buffers
 * (HR-BUF-6: UnsupportedError naming the mode). */
static int check_bytes(hrpy_state *st, TensorObject *t, const char *who) {
    const struct hurray_descriptor *d = t->d;
    if (d->device != HURRAY_DEVICE_CPU) {
        const char *kind = hurray_device_name(d->device);
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "device",
                       "%s: the tensor's memory is on device '%s' (tag %s), which this binding "
                       "cannot address from the CPU",
                       who, kind ? kind : "?", HRPY_HEX(d->device));
        return -1;
    }
    for (unsigned i = 0; i < d->buffer_count; i++) {
        if (d->buffers[i].sync_mode == HURRAY_SYNC_PRODUCER_SYNCED) continue;
        const char *mode = hurray_sync_mode_name(d->buffers[i].sync_mode);
        char field[32];
        PyOS_snprintf(field, sizeof field, "buffers[%u].sync_mode", i);
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, field,
                       "%s: buffer %u has sync_mode '%s'; the binding holds no event or stream "
                       "to wait on, so it hands out only producer_synced bytes",
                       who, i, mode ? mode : "?");
        return -1;
    }
    return 0;
}

/* NumPy's kind for a named element type: from the DLPack code in the C
 * table, which names exactly NumPy's own numeric types (int, uint, float,
 * complex, bool); 0 for the others (bfloat16, Tier 2). */
static char numpy_kind(const struct hurray_dtype_info *info) {
    if (info == NULL || info->tier != 1) return 0;
    switch (info->dlpack_code) {
    case 0: return 'i';
    case 1: return 'u';
    case 2: return 'f';
    case 5: return 'c';
    case 6: return 'b';
    default: return 0;
    }
}

static int refuse_dtype(hrpy_state *st, const char *who, uint8_t tag,
                        const struct hurray_dtype_info *info) {
    if (info == NULL)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "dtype",
                              "%s: the element type is the private extension type %s; NumPy "
                              "has no dtype for it",
                              who, HRPY_HEX(tag)),
               -1;
    if (info->tag == HURRAY_DTYPE_BFLOAT16)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "dtype",
                              "%s: NumPy has no bfloat16; install ml_dtypes and use "
                              "numpy.asarray(tensor.__array__()) or buffer(i)",
                              who),
               -1;
    return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "dtype",
                          "%s: %s is a Tier %d element type; NumPy has no dtype for it (use "
                          "buffer(i), or to_ml_dtypes() with ml_dtypes installed)",
                          who, info->name, (int)info->tier),
           -1;
}

/* Byte strides of a stride-expressible layout; 0, or -1 when a stride
 * overflows 64 bits (UnsupportedError). */
static int np_strides(hrpy_state *st, const struct hurray_descriptor *d, unsigned itemsize,
                      const char *who, struct hrpy_np_view *v) {
    int overflow = 0;
    int64_t s = (int64_t)itemsize;
    if (d->layout.tag == HURRAY_LAYOUT_STRIDED) {
        for (unsigned k = 0; k < d->rank; k++) {
            int64_t e = d->layout.strides[k];
            overflow |= e != 0 && (e > INT64_MAX / (int64_t)(itemsize ? itemsize : 1) ||
                                   e < INT64_MIN / (int64_t)(itemsize ? itemsize : 1));
            v->strides[k] = overflow ? 0 : e * (int64_t)itemsize;
        }
    } else {
        int col = d->layout.tag == HURRAY_LAYOUT_COL_MAJOR;
        for (unsigned j = 0; j < d->rank; j++) {
            unsigned k = col ? j : d->rank - 1u - j;
            v->strides[k] = s;
            int64_t n = (int64_t)d->shape[k];
            if (n > 1 && s > INT64_MAX / n) overflow = 1;
            else if (n > 1) s *= n;
        }
    }
    if (!overflow) return 0;
    hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "shape",
                   "%s: a byte stride exceeds 2^63-1", who);
    return -1;
}

static int tensor_numpy_view(hrpy_state *st, TensorObject *t, const char *who, unsigned flags,
                             struct hrpy_np_view *v) {
    const struct hurray_descriptor *d = t->d;
    if (check_bytes(st, t, who) < 0) return -1;
    if (d->quant) {
        const char *scheme = hurray_quant_scheme_name(d->quant->scheme);
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "quantization",
                       "%s: the tensor is quantized (%s); NumPy has no quantized element type "
                       "(use buffer(i) or the native protocol)",
                       who, scheme ? scheme : "?");
        return -1;
    }
    const struct hurray_dtype_info *info = hurray_dtype_info(d->dtype);
    char kind = numpy_kind(info);
    int allowed = kind != 0 ||
                  (info != NULL && info->tag == HURRAY_DTYPE_BFLOAT16 &&
                   (flags & (HRPY_NPV_BFLOAT16 | HRPY_NPV_TIER2))) ||
                  (info != NULL && (flags & HRPY_NPV_TIER2));
    if (!allowed) return refuse_dtype(st, who, d->dtype, info);
    uint8_t tag = d->layout.tag;
    int sub_byte = info->bits % 8 != 0;
    if (!hurray_layout_is_stride_expressible(tag) || (sub_byte && tag == HURRAY_LAYOUT_STRIDED)) {
        const char *name = hurray_layout_name(tag); /* the one name helper (HR-LAYOUT-4) */
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "layout",
                       "%s: the %s layout is not dense and stride-expressible; NumPy cannot "
                       "address it (use buffer(i) and the layout's parameters)",
                       who, name ? name : "?");
        return -1;
    }
    int dyn = first_dynamic(d->rank, d->shape);
    if (dyn >= 0) {
        /* Unsupported, not invalid: the descriptor is fine, NumPy is not. */
        char field[32];
        PyOS_snprintf(field, sizeof field, "shape[%d]", dyn);
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, field,
                       "%s: %s is dynamic (None); NumPy would read the wire sentinel as -1, "
                       "so an unresolved shape is not handed to it",
                       who, field);
        return -1;
    }
    v->data = t->bufs[0].ptr + d->byte_offset;
    v->readonly = t->bufs[0].readonly;
    v->dtype = d->dtype;
    v->kind = kind;
    v->itemsize = sub_byte ? 0u : info->bits / 8u;
    v->ndim = d->rank;
    v->c_order = tag == HURRAY_LAYOUT_ROW_MAJOR;
    uint64_t count = 1;
    for (unsigned k = 0; k < d->rank; k++) {
        v->shape[k] = (int64_t)d->shape[k];
        /* validated (HR-SHAPE-3): the product does not overflow */
        count = d->shape[k] == 0 || count == 0 ? 0 : count * d->shape[k];
    }
    v->count = count;
    v->nbytes = t->bufs[0].size - d->byte_offset;
    return np_strides(st, d, v->itemsize ? v->itemsize : 1u, who, v);
}

/* ---- properties ------------------------------------------------------------------------------ */

static hrpy_state *self_state(PyObject *self) { return hrpy_state_from_type(Py_TYPE(self)); }

static PyObject *t_get_dtype(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? Py_XNewRef(hrpy_dtype_get(st, TENSOR(self)->d->dtype, "dtype")) : NULL;
}

static PyObject *t_get_shape(PyObject *self, void *Py_UNUSED(c)) {
    return hrpy_shape_to_tuple(TENSOR(self)->d->rank, TENSOR(self)->d->shape);
}

static PyObject *t_get_ndim(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromLong(TENSOR(self)->d->rank);
}

static PyObject *t_get_size(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? hrpy_descriptor_size(st, TENSOR(self)->d) : NULL;
}

static PyObject *t_get_layout(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? hrpy_layout_from_c(st, &TENSOR(self)->d->layout, TENSOR(self)->d->rank) : NULL;
}

static PyObject *t_get_quantization(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? hrpy_descriptor_quantization(st, TENSOR(self)->d) : NULL;
}

static PyObject *t_get_statistics(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? hrpy_descriptor_statistics(st, TENSOR(self)->d) : NULL;
}

static PyObject *t_get_shard(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    return st ? hrpy_descriptor_shard(st, TENSOR(self)->d) : NULL;
}

static PyObject *t_get_device(PyObject *self, void *Py_UNUSED(c)) {
    return Py_NewRef(TENSOR(self)->device);
}

static PyObject *t_get_device_id(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    uint8_t tag, memory_class;
    int32_t id = 0;
    if (st == NULL) return NULL;
    (void)hrpy_device_tags(st, TENSOR(self)->device, &tag, &memory_class, &id);
    return PyLong_FromLong(id);
}

static PyObject *t_get_buffer_count(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromLong(TENSOR(self)->d->buffer_count);
}

/* The tensor's Descriptor object (borrowed; NULL with an exception set), made on first use
 * and kept: the same object every time. A tensor read from a stream or file borrows the
 * record its item tree holds (kept alive by the first buffer's owner); a tensor built here
 * (own_record) gives the Descriptor an equal copy of its record (the Descriptor must not
 * refer back to the tensor, which holds it: neither would ever be freed), so that most
 * tensors, never asked, cost no Descriptor. */
static PyObject *tensor_descriptor(TensorObject *t) {
    if (t->descriptor != NULL) return t->descriptor;
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(t));
    if (st == NULL) return NULL;
    PyObject *desc = t->own_record
                         ? hrpy_descriptor_from_c_device(st, t->d, t->device)
                         : hrpy_descriptor_borrow(st, t->d, t->bufs[0].owner, t->device);
    if (desc == NULL) return NULL;
    if (t->descriptor == NULL) t->descriptor = desc; /* else made meanwhile: keep that one */
    else Py_DECREF(desc);
    return t->descriptor;
}

static PyObject *t_get_buffer_handles(PyObject *self, void *Py_UNUSED(c)) {
    PyObject *desc = tensor_descriptor(TENSOR(self));
    return desc == NULL ? NULL : PyObject_GetAttrString(desc, "buffer_handles");
}

static PyObject *t_get_descriptor(PyObject *self, void *Py_UNUSED(c)) {
    return Py_XNewRef(tensor_descriptor(TENSOR(self)));
}

static PyObject *t_get_byte_offset(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromUnsignedLongLong(TENSOR(self)->d->byte_offset);
}

/* 'producer_synced' when every buffer is (and for a tensor with none);
 * otherwise the first other mode in buffer order. */
static PyObject *t_get_sync_mode(PyObject *self, void *Py_UNUSED(c)) {
    const struct hurray_descriptor *d = TENSOR(self)->d;
    uint8_t mode = HURRAY_SYNC_PRODUCER_SYNCED;
    for (unsigned i = 0; i < d->buffer_count && mode == HURRAY_SYNC_PRODUCER_SYNCED; i++)
        mode = d->buffers[i].sync_mode;
    const char *name = hurray_sync_mode_name(mode);
    if (name == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

static PyObject *t_get_nbytes(PyObject *self, void *Py_UNUSED(c)) {
    const struct hurray_descriptor *d = TENSOR(self)->d;
    uint64_t total = 0;
    PyObject *sum = PyLong_FromLong(0);
    for (unsigned i = 0; sum != NULL && i < d->buffer_count; i++) {
        if (total <= UINT64_MAX - d->buffers[i].size) {
            total += d->buffers[i].size;
            continue;
        }
        PyObject *part = PyLong_FromUnsignedLongLong(total), *acc = NULL;
        if (part != NULL) acc = PyNumber_Add(sum, part);
        Py_XDECREF(part);
        Py_SETREF(sum, acc);
        total = d->buffers[i].size;
    }
    if (sum == NULL) return NULL;
    PyObject *rest = PyLong_FromUnsignedLongLong(total);
    PyObject *result = rest ? PyNumber_Add(sum, rest) : NULL;
    Py_XDECREF(rest);
    Py_DECREF(sum);
    return result;
}

static PyObject *t_get_itemsize(PyObject *self, void *Py_UNUSED(c)) {
    uint16_t bits = hurray_dtype_bits(TENSOR(self)->d->dtype);
    if (bits == 0 || bits % 8 != 0) Py_RETURN_NONE;
    return PyLong_FromLong(bits / 8);
}

/* ---- sparse accessors (requirements § Layouts and Sparse Tensor Support) ---------------------- */

/* AttributeError, so that hasattr reports whether the accessor applies
 * (requirements: MUST NOT raise UnsupportedError). */
static PyObject *not_applicable(PyObject *self, const char *attr) {
    const char *name = hurray_layout_name(TENSOR(self)->d->layout.tag);
    PyErr_Format(PyExc_AttributeError,
                 "'hurray.Tensor' object with the %s layout has no attribute '%s'",
                 name ? name : "?", attr);
    return NULL;
}

static int is_sparse(uint8_t tag) {
    return tag == HURRAY_LAYOUT_COO || tag == HURRAY_LAYOUT_CSR || tag == HURRAY_LAYOUT_CSC ||
           tag == HURRAY_LAYOUT_CSF;
}

/* A row-major Tensor view over buffer `index` of `self`, which it keeps alive. */
static PyObject *component_view(PyObject *self, const char *attr, unsigned index, uint8_t dtype,
                                uint8_t rank, const uint64_t *shape, uint64_t byte_offset,
                                const struct hurray_quant *quant) {
    TensorObject *t = TENSOR(self);
    hrpy_state *st = self_state(self);
    if (st == NULL) return NULL;
    if (!bytes_ready(t->d)) {
        char who[48];
        PyOS_snprintf(who, sizeof who, ".%s", attr);
        if (check_bytes(st, t, who) < 0) return NULL;
    }
    struct hrpy_tensor_spec s;
    hrpy_tensor_spec_init(&s, st);
    s.dtype = dtype;
    s.rank = rank;
    memcpy(s.shape, shape, sizeof shape[0] * rank);
    s.byte_offset = byte_offset;
    s.device = t->device;
    s.quant = quant;
    const struct hrpy_tbuf *b = &t->bufs[index];
    struct hrpy_part part = {b->ptr, b->size, self, b->readonly, part_align(b)};
    return hrpy_tensor_build(st, &s, &part, 1);
}

static PyObject *t_get_nnz(PyObject *self, void *Py_UNUSED(c)) {
    if (!is_sparse(TENSOR(self)->d->layout.tag)) return not_applicable(self, "nnz");
    return PyLong_FromUnsignedLongLong(TENSOR(self)->d->layout.nnz);
}

/* values: the tensor's element type, shape (nnz,), the tensor's byte_offset;
 * a per-tensor-affine scheme (the only one a sparse layout takes) applies to
 * the values and travels with them. */
static PyObject *t_get_values(PyObject *self, void *Py_UNUSED(c)) {
    const struct hurray_descriptor *d = TENSOR(self)->d;
    if (!is_sparse(d->layout.tag)) return not_applicable(self, "values");
    uint64_t shape[1] = {d->layout.nnz};
    return component_view(self, "values", 0, d->dtype, 1, shape, d->byte_offset,
                          d->quant);
}

/* COO indices: uint64, the (rank, nnz) row-major array memory-layout.md
 * defines (coordinate k of entry j is element k*nnz + j). */
static PyObject *t_get_indices(PyObject *self, void *Py_UNUSED(c)) {
    const struct hurray_descriptor *d = TENSOR(self)->d;
    if (d->layout.tag != HURRAY_LAYOUT_COO) return not_applicable(self, "indices");
    uint64_t shape[2] = {d->rank, d->layout.nnz};
    return component_view(self, "indices", 1, HURRAY_DTYPE_UINT64, 2, shape, 0, NULL);
}

/* CSR/CSC: buffer 1 holds nnz minor indices, buffer 2 n+1 pointers, where n
 * is the extent of dimension 0 (CSR) or 1 (CSC); None stays None. */
static PyObject *compressed_view(PyObject *self, uint8_t layout, const char *attr, int ptr) {
    const struct hurray_descriptor *d = TENSOR(self)->d;
    if (d->layout.tag != layout) return not_applicable(self, attr);
    uint64_t n = d->shape[layout == HURRAY_LAYOUT_CSR ? 0 : 1];
    uint64_t shape[1] = {ptr ? (n == HURRAY_DYNAMIC_DIM ? n : n + 1) : d->layout.nnz};
    return component_view(self, attr, ptr ? 2u : 1u, HURRAY_DTYPE_UINT64, 1, shape, 0, NULL);
}

static PyObject *t_get_col_indices(PyObject *self, void *Py_UNUSED(c)) {
    return compressed_view(self, HURRAY_LAYOUT_CSR, "col_indices", 0);
}
static PyObject *t_get_row_ptr(PyObject *self, void *Py_UNUSED(c)) {
    return compressed_view(self, HURRAY_LAYOUT_CSR, "row_ptr", 1);
}
static PyObject *t_get_row_indices(PyObject *self, void *Py_UNUSED(c)) {
    return compressed_view(self, HURRAY_LAYOUT_CSC, "row_indices", 0);
}
static PyObject *t_get_col_ptr(PyObject *self, void *Py_UNUSED(c)) {
    return compressed_view(self, HURRAY_LAYOUT_CSC, "col_ptr", 1);
}

static PyMethodDef to_scipy_def;

/* Tensor.to_scipy: a bound method for the layouts SciPy has (coo, csr, csc), AttributeError
 * otherwise, so that hasattr(t, "to_scipy") tells (Python requirements § Layouts and Sparse Tensor Support). */
static PyObject *t_get_to_scipy(PyObject *self, void *Py_UNUSED(c)) {
    uint8_t tag = TENSOR(self)->d->layout.tag;
    if (tag != HURRAY_LAYOUT_COO && tag != HURRAY_LAYOUT_CSR && tag != HURRAY_LAYOUT_CSC)
        return not_applicable(self, "to_scipy");
    return PyCFunction_NewEx(&to_scipy_def, self, NULL);
}

/* ---- __array_interface__ ----------------------------------------------- */

enum { AI_SHAPE, AI_TYPESTR, AI_DATA, AI_STRIDES, AI_VERSION };
static const char *const ai_key_names[5] = {"shape", "typestr", "data", "strides", "version"};

/* Interned keys, and the typestr of every tag NumPy has a dtype for:
 * '|' for one byte, else '<' (buffers are little-endian, conventions.md). */
static int array_interface_init(hrpy_state *st) {
    for (int i = 0; i < 5; i++) {
        st->ai_keys[i] = PyUnicode_InternFromString(ai_key_names[i]);
        if (st->ai_keys[i] == NULL) return -1;
    }
    for (unsigned tag = 0; tag < 256; tag++) {
        const struct hurray_dtype_info *info = hurray_dtype_info((uint8_t)tag);
        char kind = numpy_kind(info);
        if (kind == 0) continue;
        unsigned size = info->bits / 8u;
        st->typestr[tag] = PyUnicode_FromFormat("%c%c%u", size == 1 ? '|' : '<', kind, size);
        if (st->typestr[tag] == NULL) return -1;
    }
    return 0;
}

static PyObject *t_get_array_interface(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = self_state(self);
    struct hrpy_np_view v;
    PyObject *dict = NULL, *item = NULL;
    if (st == NULL) return NULL;
    if (tensor_numpy_view(st, TENSOR(self), "__array_interface__", HRPY_NPV_NUMPY, &v) < 0)
        return NULL;
    dict = PyDict_New();
    if (dict == NULL) return NULL;
    item = hrpy_shape_to_tuple(TENSOR(self)->d->rank, TENSOR(self)->d->shape);
    if (item == NULL || PyDict_SetItem(dict, st->ai_keys[AI_SHAPE], item) < 0) goto error;
    Py_CLEAR(item);
    if (PyDict_SetItem(dict, st->ai_keys[AI_TYPESTR], st->typestr[v.dtype]) < 0) goto error;
    item = Py_BuildValue("(NO)", PyLong_FromVoidPtr(v.data), v.readonly ? Py_True : Py_False);
    if (item == NULL || PyDict_SetItem(dict, st->ai_keys[AI_DATA], item) < 0) goto error;
    Py_CLEAR(item);
    item = v.c_order ? Py_NewRef(Py_None) : hrpy_i64_tuple(v.strides, v.ndim);
    if (item == NULL || PyDict_SetItem(dict, st->ai_keys[AI_STRIDES], item) < 0) goto error;
    Py_CLEAR(item);
    item = PyLong_FromLong(3);
    if (item == NULL || PyDict_SetItem(dict, st->ai_keys[AI_VERSION], item) < 0) goto error;
    Py_DECREF(item);
    return dict;
error:
    Py_XDECREF(item);
    Py_DECREF(dict);
    return NULL;
}

/* ---- __array_struct__ ---------------------------------------------------- */

/* NumPy's array interface in its C form (NumPy's documentation, "The array interface
 * protocol" § C-struct access): a capsule, with no name, over this struct; NumPy reads it
 * before __array_interface__ and makes the array without a dict or a parsed tuple. The
 * layout and flag values are the protocol's (version 3), written here because the binding
 * does not build against NumPy. */
struct hrpy_array_struct {
    int two;           /* 2 */
    int nd;
    char typekind;     /* the typestr's kind character */
    int itemsize;
    int flags;
    Py_intptr_t *shape;
    Py_intptr_t *strides; /* bytes; NULL: C order */
    void *data;
    PyObject *descr;   /* with AS_HAS_DESCR: the typestr, read as a dtype */
};
#define AS_C_CONTIGUOUS 0x1
#define AS_F_CONTIGUOUS 0x2
#define AS_ALIGNED 0x100
#define AS_NOTSWAPPED 0x200
#define AS_WRITEABLE 0x400
#define AS_HAS_DESCR 0x800

/* The struct and its shape and strides, one allocation, owned by the capsule. */
struct array_struct_block {
    struct hrpy_array_struct s;
    Py_intptr_t dims[]; /* shape[nd], then strides[nd] */
};

/* The capsule's destructor: the block, the typestr and the tensor it keeps alive. */
static void array_struct_free(PyObject *capsule) {
    struct array_struct_block *b = PyCapsule_GetPointer(capsule, NULL);
    PyObject *tensor = PyCapsule_GetContext(capsule);
    if (b != NULL) {
        Py_XDECREF(b->s.descr);
        PyMem_Free(b);
    }
    Py_XDECREF(tensor);
}

/* The same array __array_interface__ describes, and the same refusals (tensor_numpy_view);
 * the capsule holds the tensor (NumPy makes the array's base a tuple of the tensor and the
 * capsule). */
static PyObject *t_get_array_struct(PyObject *self, void *Py_UNUSED(c)) {
    static const int64_t no_element = 0; /* an address for an array without elements */
    hrpy_state *st = self_state(self);
    struct hrpy_np_view v;
    if (st == NULL) return NULL;
    if (tensor_numpy_view(st, TENSOR(self), "__array_struct__", HRPY_NPV_NUMPY, &v) < 0)
        return NULL;
    int nd = v.ndim;
    struct array_struct_block *b =
        PyMem_Malloc(sizeof *b + (size_t)(nd > 0 ? nd : 1) * 2u * sizeof(Py_intptr_t));
    if (b == NULL) return PyErr_NoMemory();
    b->s.two = 2;
    b->s.nd = nd;
    b->s.typekind = v.kind;
    b->s.itemsize = (int)v.itemsize;
    b->s.shape = b->dims;
    b->s.strides = v.c_order ? NULL : b->dims + nd;
    for (int k = 0; k < nd; k++) {
        b->dims[k] = (Py_intptr_t)v.shape[k];
        b->dims[nd + k] = (Py_intptr_t)v.strides[k];
    }
    b->s.data = v.data != NULL ? (void *)v.data : (void *)(uintptr_t)&no_element;
    int flags = AS_HAS_DESCR | (v.readonly ? 0 : AS_WRITEABLE);
    if (v.c_order) flags |= AS_C_CONTIGUOUS;
    else if (TENSOR(self)->d->layout.tag == HURRAY_LAYOUT_COL_MAJOR) flags |= AS_F_CONTIGUOUS;
    if (v.itemsize != 0 && (uintptr_t)b->s.data % v.itemsize == 0) flags |= AS_ALIGNED;
#if PY_LITTLE_ENDIAN
    flags |= AS_NOTSWAPPED; /* buffers are little-endian (conventions.md) */
#endif
    b->s.flags = flags;
    b->s.descr = Py_NewRef(st->typestr[v.dtype]); /* '<' or '|': explicit on any host */
    PyObject *capsule = PyCapsule_New(b, NULL, array_struct_free);
    if (capsule == NULL) {
        Py_DECREF(b->s.descr);
        PyMem_Free(b);
        return NULL;
    }
    if (PyCapsule_SetContext(capsule, Py_NewRef(self)) < 0) {
        Py_DECREF(self);
        Py_DECREF(capsule);
        return NULL;
    }
    return capsule;
}

/* ---- methods -------------------------------------------------------------------------------- */

/* buffer(index): a 1-D uint8 memoryview of exactly the declared size of the
 * buffer at that index (read-only if the memory is), keeping the tensor alive. */
static PyObject *tensor_buffer(PyObject *self, PyTypeObject *defining_class,
                               PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    static const char *const names[] = {"index"};
    PyObject *a[1];
    hrpy_state *st = PyType_GetModuleState(defining_class);
    TensorObject *t = TENSOR(self);
    if (hrpy_bind("buffer", args, nargs, kwnames, names, 1, 1, 1, a) < 0) return NULL;
    if (!PyIndex_Check(a[0]))
        return PyErr_Format(PyExc_TypeError, "buffer index must be an integer, not %.100s",
                            Py_TYPE(a[0])->tp_name);
    Py_ssize_t i = PyNumber_AsSsize_t(a[0], NULL);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i >= (Py_ssize_t)t->d->buffer_count)
        return PyErr_Format(PyExc_IndexError,
                            "buffer index %zd out of range: the tensor has %d buffer%s", i,
                            (int)t->d->buffer_count, t->d->buffer_count == 1 ? "" : "s");
    if (!bytes_ready(t->d)) {
        char who[32];
        PyOS_snprintf(who, sizeof who, "buffer(%zd)", i);
        if (check_bytes(st, t, who) < 0) return NULL;
    }
    const struct hrpy_tbuf *b = &t->bufs[i];
    return hrpy_byteview_memoryview(st, self, b->ptr, t->d->buffers[i].size, b->readonly);
}

/* The sibling module that speaks NumPy's C API, imported on first use. */
static PyObject *numpy_bridge(hrpy_state *st) {
    PyObject *m = PyImport_GetModule(st->str_numpy_module);
    if (m != NULL || PyErr_Occurred()) return m;
    return PyImport_Import(st->str_numpy_module);
}

enum {
    BRIDGE_FROM_NUMPY,
    BRIDGE_TO_ARRAY,
    BRIDGE_TO_ML_DTYPES,
    BRIDGE_FROM_SCIPY,
    BRIDGE_SPARSE_COO,
    BRIDGE_TO_SCIPY,
    BRIDGE_ASARRAY,
    BRIDGE_SAVE_VIEW,
    BRIDGE_FROM_DLPACK_NDARRAY
};
static const char *const bridge_names[HRPY_BRIDGE_COUNT] = {
    "from_numpy", "_tensor_to_array", "_to_ml_dtypes", "from_scipy", "sparse_coo", "_to_scipy",
    "_asarray",   "_save_view",       "_from_dlpack_ndarray"};

/* hurray._numpy's function `which`, imported and looked up on first use and kept in the
 * module state (a per-call import lookup and getattr cost about a fifth of from_numpy). */
static PyObject *call_bridge(hrpy_state *st, int which, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
    PyObject *f = st->bridge_fn[which];
    if (f == NULL) {
        PyObject *m = numpy_bridge(st);
        if (m == NULL) return NULL;
        f = PyObject_GetAttr(m, st->str_bridge[which]);
        Py_DECREF(m);
        if (f == NULL) return NULL;
        if (st->bridge_fn[which] == NULL) st->bridge_fn[which] = f; /* the state's reference */
        else Py_DECREF(f); /* filled meanwhile (the import may release the GIL) */
        f = st->bridge_fn[which];
    }
    Py_INCREF(f); /* the call may run code that clears the state */
    PyObject *r = PyObject_Vectorcall(f, args, nargs, kwnames);
    Py_DECREF(f);
    return r;
}

/* __array__(dtype=None, copy=None): NumPy 2's protocol, done by hurray._numpy. */
static PyObject *tensor_array(PyObject *self, PyTypeObject *defining_class, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames) {
    static const char *const names[] = {"dtype", "copy"};
    PyObject *a[2];
    hrpy_state *st = PyType_GetModuleState(defining_class);
    if (hrpy_bind("__array__", args, nargs, kwnames, names, 2, 2, 0, a) < 0) return NULL;
    PyObject *call[3] = {self, a[0] ? a[0] : Py_None, a[1] ? a[1] : Py_None};
    return call_bridge(st, BRIDGE_TO_ARRAY, call, 3, NULL);
}

static PyObject *tensor_to_ml_dtypes(PyObject *self, PyTypeObject *defining_class,
                                     PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    hrpy_state *st = PyType_GetModuleState(defining_class);
    if (hrpy_bind("to_ml_dtypes", args, nargs, kwnames, NULL, 0, 0, 0, NULL) < 0) return NULL;
    PyObject *call[1] = {self};
    return call_bridge(st, BRIDGE_TO_ML_DTYPES, call, 1, NULL);
}

PyObject *hrpy_from_numpy(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
    return call_bridge(hrpy_state_from_module(module), BRIDGE_FROM_NUMPY, args, nargs,
                       kwnames);
}

PyObject *hrpy_from_scipy(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
    return call_bridge(hrpy_state_from_module(module), BRIDGE_FROM_SCIPY, args, nargs,
                       kwnames);
}

PyObject *hrpy_sparse_coo(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
    return call_bridge(hrpy_state_from_module(module), BRIDGE_SPARSE_COO, args, nargs,
                       kwnames);
}

PyObject *hrpy_bridge_save_view(hrpy_state *st, PyObject *array) {
    return call_bridge(st, BRIDGE_SAVE_VIEW, &array, 1, NULL);
}

/* hurray._numpy's C API table (capi.h hrpy_np_capi), imported with the module on first use
 * and kept in the state with it: a direct call per array saved, no Python call. */
static int np_capi(hrpy_state *st) {
    PyObject *m = numpy_bridge(st);
    if (m == NULL) return -1;
    PyObject *capsule = PyObject_GetAttrString(m, "_C_API");
    const hrpy_np_capi *api =
        capsule == NULL ? NULL : PyCapsule_GetPointer(capsule, HRPY_NP_CAPI_NAME);
    Py_XDECREF(capsule);
    if (api != NULL && api->version != HRPY_NP_CAPI_VERSION) {
        PyErr_Format(PyExc_ImportError, "hurray._numpy: C API version %u, expected %u",
                     api->version, HRPY_NP_CAPI_VERSION);
        api = NULL;
    }
    if (api == NULL || st->np_module != NULL) { /* failed, or filled meanwhile */
        Py_DECREF(m);
        return api == NULL ? -1 : 0;
    }
    st->np_api = api;
    st->np_module = m; /* the state's reference */
    return 0;
}

int hrpy_bridge_save_plan(hrpy_state *st, PyObject *obj, struct hrpy_save_plan *p) {
    if (st->np_module == NULL && np_capi(st) < 0) return -1;
    return st->np_api->save_plan(st->np_module, obj, p);
}

void hrpy_bridge_save_plan_prefetch(hrpy_state *st, PyObject *obj) {
    if (st->np_api != NULL) st->np_api->save_plan_prefetch(obj);
}

PyObject *hrpy_bridge_from_dlpack_ndarray(hrpy_state *st, PyObject *array) {
    return call_bridge(st, BRIDGE_FROM_DLPACK_NDARRAY, &array, 1, NULL);
}

PyObject *hrpy_bridge_asarray(hrpy_state *st, PyObject *obj, PyObject *copy) {
    PyObject *call[2] = {obj, copy ? copy : Py_None};
    return call_bridge(st, BRIDGE_ASARRAY, call, 2, NULL);
}

/* to_scipy(*, array=False, copy=None), bound to its tensor by the getter below. */
static PyObject *tensor_to_scipy(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
    static const char *const names[] = {"array", "copy"};
    PyObject *a[2];
    hrpy_state *st = self_state(self);
    if (st == NULL || hrpy_bind("to_scipy", args, nargs, kwnames, names, 2, 0, 0, a) < 0)
        return NULL;
    int array = 0;
    if (a[0] != NULL && (array = PyObject_IsTrue(a[0])) < 0) return NULL;
    PyObject *call[3] = {self, array ? Py_True : Py_False, a[1] != NULL ? a[1] : Py_None};
    return call_bridge(st, BRIDGE_TO_SCIPY, call, 3, NULL);
}

static PyMethodDef to_scipy_def = {
    "to_scipy", (PyCFunction)(void (*)(void))tensor_to_scipy, METH_FASTCALL | METH_KEYWORDS,
    PyDoc_STR("to_scipy($self, /, *, array=False, copy=None)\n--\n\n"
              "The tensor as SciPy's csr_matrix / csc_matrix / coo_matrix (array=True:\n"
              "csr_array / csc_array / coo_array; a COO tensor of rank other than 2 is\n"
              "always a coo_array, SciPy matrices being 2-D). copy=None or False: no copy\n"
              "(never needed) -- values, and the uint64 index buffers viewed as int64, the\n"
              "same bytes, since valid indices are below 2^63; every array's .base is the\n"
              "tensor, which stays alive as long as the matrix uses its buffers. The index\n"
              "contents are checked against the shape (InvalidDescriptorError).\n"
              "Index memory hurray owns (int32 indices widened by from_scipy / sparse_coo,\n"
              "copy=True, read from a file or stream) is checked once and handed out only\n"
              "read-only -- here, by buffer(i) and by the index component views -- so no\n"
              "later call reads it again. Index memory borrowed from the caller (int64\n"
              "arrays shared by from_scipy / sparse_coo) stays as writable as the caller's\n"
              "arrays and is checked at every call. On read-only CSR / CSC index arrays\n"
              "SciPy's in-place methods raise ValueError ('... read-only'): eliminate_zeros\n"
              "always, sort_indices / sum_duplicates / count_nonzero unless the contents are\n"
              "already sorted / canonical; their copying forms (sorted_indices(), tocsc(),\n"
              "arithmetic) work. copy=True: writable copies of\n"
              "values and indices (int64) that the result owns; it holds nothing of the\n"
              "tensor. SciPy's matrix constructors would narrow int64 indices to int32 (a\n"
              "copy); the matrix class is built from the array class, which shares its\n"
              "arrays. Unsorted and duplicate entries come back as they are.\n"
              "UnsupportedError for element types NumPy has no dtype for, quantized\n"
              "tensors, dynamic extents, non-CPU memory. Imports NumPy and SciPy.")};

/* _tensor_with_sync_mode(tensor, index, mode) -> Tensor: a copy of the
 * tensor whose buffer `index` declares another sync_mode byte. For tests of
 * the refusal paths only: no public constructor accepts a sync_mode (seed
 * § sync_mode), and the tensors that carry one arrive through the native
 * protocol and streams. */
static PyObject *tensor_with_sync_mode(PyObject *module, PyObject *const *args,
                                       Py_ssize_t nargs) {
    hrpy_state *st = hrpy_state_from_module(module);
    uint64_t index = 0, mode = 0;
    if (nargs != 3 || !PyObject_TypeCheck(args[0], st->Tensor_Type))
        return PyErr_Format(PyExc_TypeError, "_tensor_with_sync_mode(tensor, index, mode)");
    TensorObject *src = TENSOR(args[0]);
    if (hrpy_as_uint_max(args[1], "index", src->d->buffer_count ? src->d->buffer_count - 1u : 0,
                         &index) < 0 ||
        hrpy_as_uint_max(args[2], "mode", 0xFF, &mode) < 0)
        return NULL;
    if (src->d->buffer_count == 0) return PyErr_Format(PyExc_IndexError, "no buffers");
    TensorObject *t = tensor_alloc(st, Py_SIZE(src));
    if (t == NULL) return NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    struct hurray_descriptor *own = tensor_own_record(st, t);
    if (own == NULL) {
        Py_DECREF(t);
        return NULL;
    }
    int status = hurray_descriptor_copy(own, src->d, &hrpy_raw_allocator, &err);
    struct hurray_buffer_desc entry = src->d->buffers[index];
    entry.sync_mode = (uint8_t)mode;
    if (status == HURRAY_OK)
        status = hurray_descriptor_set_buffer(own, (uint8_t)index, &entry, &err);
    if (status != HURRAY_OK) {
        Py_DECREF(t);
        return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    }
    t->device = Py_NewRef(src->device);
    if (hrpy_descriptor_set_device(t->descriptor, t->device) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < Py_SIZE(src); i++) {
        const struct hrpy_tbuf *b = &src->bufs[i];
        struct hrpy_part part = {b->ptr, b->size, args[0], b->readonly, part_align(b)};
        slot_set(&t->bufs[i], &part);
    }
    struct hurray_limits lim;
    status = hurray_descriptor_validate(t->d, authoring_limits(&lim), &err);
    if (status != HURRAY_OK) {
        Py_DECREF(t);
        return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    }
    return (PyObject *)t;
}

/* ---- repr ---------------------------------------------------------------------------------- */

/* 'cpu' for the default device, else e.g. 'cuda:1', 'cpu:0/host_pinned',
 * 'private(0xF3):0'. */
static PyObject *device_text(hrpy_state *st, const struct hurray_descriptor *d,
                             PyObject *device) {
    uint8_t tag, memory_class;
    int32_t device_id = 0;
    (void)hrpy_device_tags(st, device, &tag, &memory_class, &device_id);
    long id = device_id;
    const char *kind = hurray_device_name(d->device);
    const char *mc = hurray_memory_class_name(d->memory_class);
    int std_class = d->memory_class == HURRAY_MEM_STANDARD;
    if (d->device == HURRAY_DEVICE_CPU && std_class && id == 0) return PyUnicode_FromString("cpu");
    int priv = hurray_device_tag_kind(d->device) == HURRAY_TAG_PRIVATE;
    int priv_mc = hurray_memory_class_tag_kind(d->memory_class) == HURRAY_TAG_PRIVATE;
    return PyUnicode_FromFormat("%s%s%s%s:%ld%s%s%s%s%s", kind ? kind : "?", priv ? "(" : "",
                                priv ? HRPY_HEX(d->device) : "", priv ? ")" : "", id,
                                std_class ? "" : "/", std_class ? "" : (mc ? mc : "?"),
                                priv_mc ? "(" : "", priv_mc ? HRPY_HEX(d->memory_class) : "",
                                priv_mc ? ")" : "");
}

/* The data, through NumPy, for a tensor NumPy can read -- only when NumPy is
 * already imported (repr never imports it) and never for a dynamic shape
 * (requirements § Dynamic dimensions). NULL without an exception otherwise. */
static PyObject *repr_data(hrpy_state *st, PyObject *self, Py_ssize_t indent) {
    TensorObject *t = TENSOR(self);
    if (first_dynamic(t->d->rank, t->d->shape) >= 0) return NULL;
    PyObject *np = PyImport_GetModule(st->str_numpy);
    if (np == NULL) {
        PyErr_Clear();
        return NULL;
    }
    struct hrpy_np_view v;
    PyObject *arr = NULL, *text = NULL, *nl = NULL, *pad = NULL;
    if (tensor_numpy_view(st, t, "repr", HRPY_NPV_NUMPY, &v) < 0) goto done;
    arr = PyObject_CallMethod(np, "asarray", "O", self);
    if (arr == NULL) goto done;
    PyObject *fn = PyObject_GetAttrString(np, "array2string");
    PyObject *kw = fn ? Py_BuildValue("{ss}", "separator", ", ") : NULL;
    PyObject *pos = kw ? PyTuple_Pack(1, arr) : NULL;
    text = pos ? PyObject_Call(fn, pos, kw) : NULL;
    Py_XDECREF(fn);
    Py_XDECREF(kw);
    Py_XDECREF(pos);
    nl = PyUnicode_FromString("\n");
    char spaces[64];
    indent = indent < (Py_ssize_t)sizeof spaces - 2 ? indent : (Py_ssize_t)sizeof spaces - 2;
    spaces[0] = '\n';
    memset(spaces + 1, ' ', (size_t)indent);
    pad = PyUnicode_FromStringAndSize(spaces, indent + 1);
    if (text != NULL && nl != NULL && pad != NULL) /* continuation lines under the first */
        Py_SETREF(text, PyUnicode_Replace(text, nl, pad, -1));
    else
        Py_CLEAR(text);
done:
    if (text == NULL) PyErr_Clear();
    Py_XDECREF(arr);
    Py_XDECREF(nl);
    Py_XDECREF(pad);
    Py_DECREF(np);
    return text;
}

static PyObject *tensor_repr(PyObject *self) {
    static const char prefix[] = "hurray.Tensor(";
    TensorObject *t = TENSOR(self);
    PyObject *dtype = NULL, *shape = NULL, *layout = NULL, *dev = NULL, *quant = NULL,
             *data = NULL, *head = NULL, *r = NULL;
    hrpy_state *st = self_state(self);
    if (st == NULL) return NULL;
    dtype = t_get_dtype(self, NULL);
    shape = t_get_shape(self, NULL);
    layout = t_get_layout(self, NULL);
    dev = device_text(st, t->d, t->device);
    quant = t->d->quant != NULL ? t_get_quantization(self, NULL) : NULL;
    if (!dtype || !shape || !layout || !dev || (t->d->quant != NULL && !quant)) goto done;
    data = repr_data(st, self, (Py_ssize_t)(sizeof prefix - 1));
    head = data ? PyUnicode_FromFormat("%s%U, ", prefix, data) : PyUnicode_FromString(prefix);
    if (head == NULL) goto done;
    if (quant != NULL)
        r = PyUnicode_FromFormat("%Udtype=%R, shape=%R, layout=%R, device=%R, quantization=%R)",
                                 head, dtype, shape, layout, dev, quant);
    else
        r = PyUnicode_FromFormat("%Udtype=%R, shape=%R, layout=%R, device=%R)", head, dtype,
                                 shape, layout, dev);
done:
    Py_XDECREF(dtype);
    Py_XDECREF(shape);
    Py_XDECREF(layout);
    Py_XDECREF(dev);
    Py_XDECREF(quant);
    Py_XDECREF(data);
    Py_XDECREF(head);
    return r;
}

/* ---- the type ------------------------------------------------------------------------------ */

#define GETTER(name, fn, doc) {name, fn, NULL, PyDoc_STR(doc), NULL}
static PyGetSetDef tensor_getset[] = {
    GETTER("dtype", t_get_dtype, "Element type (a Dtype singleton)."),
    GETTER("shape", t_get_shape, "Tuple of extents; None for a dynamic one."),
    GETTER("ndim", t_get_ndim, "Rank."),
    GETTER("size", t_get_size,
           "Element count, or None when a dynamic dimension leaves it unknown."),
    GETTER("layout", t_get_layout, "The Layout object (a fresh, equal one per access)."),
    GETTER("quantization", t_get_quantization,
           "The quantization object (the class the constructor takes), or None."),
    GETTER("statistics", t_get_statistics, "Statistics, or None."),
    GETTER("shard", t_get_shard, "Shard, or None."),
    GETTER("device", t_get_device, "The Device; every BufferHandle shares this object."),
    GETTER("device_id", t_get_device_id, "device.device_id: runtime metadata, not on the wire."),
    GETTER("buffer_count", t_get_buffer_count, "Entries in the buffer table."),
    GETTER("buffer_handles", t_get_buffer_handles,
           "Tuple of BufferHandle, one per buffer in descriptor order; they pin nothing."),
    GETTER("descriptor", t_get_descriptor,
           "The Descriptor this tensor declares (equal each time)."),
    GETTER("byte_offset", t_get_byte_offset, "Where the layout's data starts in buffer 0."),
    GETTER("sync_mode", t_get_sync_mode,
           "'producer_synced' when every buffer is, else the first other mode. Read-only."),
    GETTER("nbytes", t_get_nbytes, "Bytes the buffers hold: the sum of their declared sizes."),
    GETTER("itemsize", t_get_itemsize,
           "Bytes per element, or None for sub-byte and extension element types."),
    GETTER("nnz", t_get_nnz, "Stored non-zero count (coo, csr, csc, csf; AttributeError else)."),
    GETTER("values", t_get_values,
           "Tensor view of the values buffer: dtype of the tensor, shape (nnz,)\n"
           "(coo, csr, csc, csf; AttributeError else)."),
    GETTER("indices", t_get_indices,
           "COO: uint64 Tensor view of the (ndim, nnz) index array (AttributeError else)."),
    GETTER("col_indices", t_get_col_indices, "CSR: uint64 view, shape (nnz,)."),
    GETTER("row_ptr", t_get_row_ptr, "CSR: uint64 view, shape (shape[0] + 1,)."),
    GETTER("row_indices", t_get_row_indices, "CSC: uint64 view, shape (nnz,)."),
    GETTER("col_ptr", t_get_col_ptr, "CSC: uint64 view, shape (shape[1] + 1,)."),
    GETTER("to_scipy", t_get_to_scipy,
           "to_scipy(*, array=False, copy=None): the coo / csr / csc tensor as a SciPy sparse\n"
           "matrix (or array) over the same buffers (AttributeError for other layouts)."),
    GETTER("__array_interface__", t_get_array_interface,
           "NumPy array interface (v3) over buffer 0, for CPU tensors NumPy can address."),
    GETTER("__array_struct__", t_get_array_struct,
           "The same array interface in its C form (a capsule NumPy reads first); it keeps\n"
           "the tensor alive."),
    {NULL, NULL, NULL, NULL, NULL},
};
#undef GETTER

static PyMethodDef tensor_methods[] = {
    {"buffer", (PyCFunction)(void (*)(void))tensor_buffer,
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("buffer($self, /, index)\n--\n\n"
               "A 1-D unsigned-byte view of exactly the declared size of the buffer at\n"
               "that descriptor index (read-only if the memory is); it keeps the tensor\n"
               "alive. IndexError past the table; UnsupportedError for a buffer that is\n"
               "not producer_synced or memory that is not on the CPU.")},
    {"__array__", (PyCFunction)(void (*)(void))tensor_array,
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("__array__($self, /, dtype=None, copy=None)\n--\n\n"
               "An ndarray over the same buffer whose .base is this tensor (row_major:\n"
               "C order, col_major: Fortran order, strided: byte strides). copy=True\n"
               "copies; copy=False raises ValueError if dtype needs a conversion.")},
    {"to_ml_dtypes", (PyCFunction)(void (*)(void))tensor_to_ml_dtypes,
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("to_ml_dtypes($self, /)\n--\n\n"
               "The elements as an ml_dtypes array (bfloat16, float8, int4, ...):\n"
               "a zero-copy view for byte-sized types; a copy for packed sub-byte types,\n"
               "unpacked one element per byte as ml_dtypes stores them.")},
    HRPY_DLPACK_TENSOR_METHODS /* __dlpack__, __dlpack_device__, to_torch (dlpack.c) */
    HRPY_NATIVE_TENSOR_METHODS /* __hurray__ (native.c) */
    {NULL, NULL, 0, NULL},
};

static PyMemberDef tensor_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(TensorObject, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot tensor_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "Tensor(buffers, dtype, shape, *, layout=None, quantization=None,\n"
                    "       statistics=None, shard=None, device=None, device_id=None,\n"
                    "       byte_offset=0, copy=None)\n--\n\n"
                    "A Hurray tensor: a descriptor and the buffers it describes, one class\n"
                    "for every layout. `buffers` is one buffer-protocol object per buffer-table\n"
                    "entry in descriptor order (a single object for single-buffer layouts);\n"
                    "the descriptor is built from the arguments and those buffers (size =\n"
                    "their length, alignment measured, sync_mode producer_synced) and\n"
                    "validated by libhurray's three tiers. copy=None copies a buffer whose\n"
                    "address is not 64-byte aligned, True copies every buffer, False raises\n"
                    "ValueError instead of copying. Compares by identity.")},
    {Py_tp_new, tensor_new},
    {Py_tp_repr, tensor_repr},
    {Py_tp_getset, tensor_getset},
    {Py_tp_methods, tensor_methods},
    {Py_tp_members, tensor_members},
    {Py_tp_traverse, tensor_traverse},
    {Py_tp_clear, tensor_clear},
    {Py_tp_dealloc, tensor_dealloc},
    {0, NULL},
};

static PyType_Spec tensor_spec = {
    .name = "hurray.Tensor",
    .basicsize = (int)sizeof(TensorObject),
    .itemsize = (int)sizeof(struct hrpy_tbuf),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = tensor_slots,
};

/* ---- for dlpack.c (state.h) ------------------------------------------------------------------ */

PyObject *hrpy_tensor_descriptor_object(hrpy_state *st, PyObject *obj) {
    return PyObject_TypeCheck(obj, st->Tensor_Type) ? tensor_descriptor(TENSOR(obj)) : NULL;
}

int hrpy_tensor_peek(hrpy_state *st, PyObject *obj, const struct hurray_descriptor **d,
                     PyObject **device) {
    if (!PyObject_TypeCheck(obj, st->Tensor_Type)) return 0;
    *d = TENSOR(obj)->d;
    *device = TENSOR(obj)->device;
    return 1;
}

int hrpy_tensor_part(hrpy_state *st, PyObject *obj, Py_ssize_t i, struct hrpy_part *out) {
    if (!PyObject_TypeCheck(obj, st->Tensor_Type) || i < 0 || i >= Py_SIZE(obj)) {
        PyErr_Format(PyExc_IndexError, "no buffer %zd", i);
        return -1;
    }
    const struct hrpy_tbuf *b = &TENSOR(obj)->bufs[i];
    *out = (struct hrpy_part){b->ptr, TENSOR(obj)->d->buffers[i].size, b->owner, b->readonly,
                              part_align(b)};
    return 0;
}

/* ---- the C API for hurray._numpy (capi.h) --------------------------------------------------- */

static int capi_is_tensor(PyObject *module, PyObject *obj) {
    return PyObject_TypeCheck(obj, hrpy_state_from_module(module)->Tensor_Type);
}

static int capi_numpy_view(PyObject *module, PyObject *tensor, const char *who, unsigned flags,
                           struct hrpy_np_view *v) {
    hrpy_state *st = hrpy_state_from_module(module);
    if (!PyObject_TypeCheck(tensor, st->Tensor_Type)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a hurray.Tensor, not %.100s", who,
                     Py_TYPE(tensor)->tp_name);
        return -1;
    }
    return tensor_numpy_view(st, TENSOR(tensor), who, flags, v);
}

static char capi_numpy_kind(uint8_t tag) { return numpy_kind(hurray_dtype_info(tag)); }

static PyObject *capi_owned_new(PyObject *module, uint64_t size, int zero, void **data,
                                uint8_t *align_log2) {
    return hrpy_owned_new(hrpy_state_from_module(module), size, zero, data, align_log2);
}

/* The spec the C-API builders start from: element type, shape and layout tag (the rank
 * checked against the format maximum first). -1 with an exception set. */
static int capi_spec_start(hrpy_state *st, struct hrpy_tensor_spec *s, uint8_t dtype,
                           uint8_t rank, const uint64_t *shape, uint8_t layout_tag) {
    hrpy_tensor_spec_init(s, st);
    if (rank > HURRAY_MAX_RANK) {
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_LIMIT, "rank",
                       "rank: %d exceeds the format maximum of %d", (int)rank, HURRAY_MAX_RANK);
        return -1;
    }
    s->dtype = dtype;
    s->rank = rank;
    memcpy(s->shape, shape, sizeof shape[0] * rank);
    s->layout.tag = layout_tag;
    return 0;
}

static PyObject *capi_tensor_dense(PyObject *module, const struct hrpy_part *part, uint8_t dtype,
                                   uint8_t rank, const uint64_t *shape, uint8_t layout_tag,
                                   const int64_t *strides, uint64_t byte_offset) {
    hrpy_state *st = hrpy_state_from_module(module);
    struct hrpy_tensor_spec s;
    if (capi_spec_start(st, &s, dtype, rank, shape, layout_tag) < 0) return NULL;
    if (layout_tag == HURRAY_LAYOUT_STRIDED) s.layout.strides = strides; /* copied by the build */
    s.byte_offset = byte_offset;
    return hrpy_tensor_build(st, &s, part, 1);
}

static PyObject *capi_raise_fmt(PyObject *module, int status, const char *field, const char *fmt,
                                ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (msg == NULL) return NULL;
    hrpy_raise_fmt(hrpy_state_from_module(module), HRPY_CTX_DESCRIPTOR, status, field, "%U", msg);
    Py_DECREF(msg);
    return NULL;
}

/* Index contents of a coo / csr / csc tensor (memory-layout.md § Index contents): its own
 * buffers (index NULL), or the arrays they are imported from, written into them in the same
 * pass (§ Importing index arrays). */
static int sparse_check_contents(hrpy_state *st, TensorObject *t,
                                 const struct hurray_index_array *index,
                                 const struct hurray_index_array *ptr) {
    const struct hurray_descriptor *d = t->d;
    struct hurray_error err;
    hurray_error_clear(&err);
    int has_ptr = d->layout.tag != HURRAY_LAYOUT_COO;
    if (index == NULL && t->index_checked) return 0; /* checked, read-only since */
    uint64_t shape[HURRAY_MAX_RANK];
    for (unsigned k = 0; k < d->rank; k++) shape[k] = d->shape[k];
    int status =
        index != NULL
            ? hurray_sparse_import_index_buffers(&d->layout, d->rank, shape, index, ptr, &err)
            : hurray_sparse_validate_index_buffers(
                  &d->layout, d->rank, shape, (const uint8_t *)t->bufs[1].ptr, t->bufs[1].size,
                  has_ptr ? (const uint8_t *)t->bufs[2].ptr : NULL,
                  has_ptr ? t->bufs[2].size : 0, &err);
    if (status == HURRAY_OK) {
        t->index_checked = t->index_private; /* no one can write them since (HR-LAYOUT-26) */
        return 0;
    }
    hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    return -1;
}

/* Marks the index buffers of a coo / csr / csc tensor hurray's own (memory-layout.md § Checked
 * once, HR-LAYOUT-26): read-only slots from here on, so that no view of them -- buffer(i),
 * the component views and what they export, to_scipy, the native protocol -- can write them.
 * Called on a new tensor before anything is handed out. No-op for other layouts. */
void hrpy_tensor_seal_index(PyObject *tensor) {
    TensorObject *t = TENSOR(tensor);
    uint8_t tag = t->d->layout.tag;
    if (tag != HURRAY_LAYOUT_COO && tag != HURRAY_LAYOUT_CSR && tag != HURRAY_LAYOUT_CSC) return;
    Py_ssize_t last = tag == HURRAY_LAYOUT_COO ? 1 : 2;
    if (Py_SIZE(tensor) <= last) return; /* refused by the validator before any use */
    for (Py_ssize_t i = 1; i <= last; i++) t->bufs[i].readonly = 1;
    t->index_private = 1;
}

static int capi_sparse_view(PyObject *module, PyObject *tensor, const char *who,
                            struct hrpy_sparse_view *v) {
    hrpy_state *st = hrpy_state_from_module(module);
    if (!PyObject_TypeCheck(tensor, st->Tensor_Type)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a hurray.Tensor, not %.100s", who,
                     Py_TYPE(tensor)->tp_name);
        return -1;
    }
    TensorObject *t = TENSOR(tensor);
    const struct hurray_descriptor *d = t->d;
    uint8_t tag = d->layout.tag;
    if (tag != HURRAY_LAYOUT_COO && tag != HURRAY_LAYOUT_CSR && tag != HURRAY_LAYOUT_CSC) {
        const char *name = hurray_layout_name(tag);
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "layout",
                       "%s: the %s layout has no SciPy form (coo, csr and csc have)", who,
                       name ? name : "?");
        return -1;
    }
    if (check_bytes(st, t, who) < 0) return -1;
    if (d->quant) {
        const char *scheme = hurray_quant_scheme_name(d->quant->scheme);
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "quantization",
                       "%s: the tensor is quantized (%s); SciPy has no quantized values", who,
                       scheme ? scheme : "?");
        return -1;
    }
    const struct hurray_dtype_info *info = hurray_dtype_info(d->dtype);
    char kind = numpy_kind(info);
    if (kind == 0) return refuse_dtype(st, who, d->dtype, info);
    int dyn = first_dynamic(d->rank, d->shape);
    if (dyn >= 0) {
        char field[32];
        PyOS_snprintf(field, sizeof field, "shape[%d]", dyn);
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, field,
                       "%s: %s is dynamic (None); SciPy needs every extent", who, field);
        return -1;
    }
    if (sparse_check_contents(st, t, NULL, NULL) < 0) return -1;
    memset(v, 0, sizeof *v);
    v->layout = tag;
    v->dtype = d->dtype;
    v->kind = kind;
    v->itemsize = info->bits / 8u;
    v->ndim = d->rank;
    for (unsigned k = 0; k < d->rank; k++) v->shape[k] = (int64_t)d->shape[k];
    v->nnz = d->layout.nnz;
    v->values = t->bufs[0].ptr + d->byte_offset;
    v->index = t->bufs[1].ptr;
    v->ptr = tag == HURRAY_LAYOUT_COO ? NULL : t->bufs[2].ptr;
    for (int i = 0; i < (tag == HURRAY_LAYOUT_COO ? 2 : 3); i++) v->readonly[i] = t->bufs[i].readonly;
    return 0;
}

static PyObject *capi_tensor_sparse(PyObject *module, const struct hrpy_part *parts, Py_ssize_t n,
                                    uint8_t dtype, uint8_t rank, const uint64_t *shape,
                                    uint8_t layout_tag, uint64_t nnz,
                                    const struct hurray_index_array *index,
                                    const struct hurray_index_array *ptr, int index_private) {
    hrpy_state *st = hrpy_state_from_module(module);
    struct hrpy_tensor_spec s;
    if (capi_spec_start(st, &s, dtype, rank, shape, layout_tag) < 0) return NULL;
    s.layout.nnz = nnz;
    PyObject *t = hrpy_tensor_build(st, &s, parts, n);
    if (t != NULL && index_private) hrpy_tensor_seal_index(t);
    if (t != NULL && sparse_check_contents(st, TENSOR(t), index, ptr) < 0) Py_CLEAR(t);
    return t;
}

static int capi_shape_resolved(PyObject *module, PyObject *obj, const char *who, uint8_t *rank,
                               uint64_t *shape) {
    hrpy_state *st = hrpy_state_from_module(module);
    if (hrpy_as_shape(st, obj, shape, rank) < 0) return -1;
    return hrpy_refuse_dynamic(st, who, *rank, shape);
}

static const hrpy_capi capi_table = {
    HRPY_CAPI_VERSION,
    capi_is_tensor,
    capi_numpy_view,
    capi_owned_new,
    capi_tensor_dense,
    capi_numpy_kind,
    hurray_dtype_info,
    hurray_dtype_from_name,
    capi_raise_fmt,
    capi_sparse_view,
    capi_tensor_sparse,
    capi_shape_resolved,
};

static PyMethodDef tensor_module_methods[] = {
    {"_tensor_with_sync_mode", (PyCFunction)(void (*)(void))tensor_with_sync_mode, METH_FASTCALL,
     PyDoc_STR("_tensor_with_sync_mode($module, tensor, index, mode, /)\n--\n\n"
               "Test hook: the tensor with buffer `index` declaring sync_mode byte `mode`.\n"
               "No public constructor accepts a sync_mode.")},
    {NULL, NULL, 0, NULL},
};

int hrpy_tensor_init(PyObject *module, hrpy_state *st) {
    PyObject *capsule = NULL;
    st->Tensor_Type = hrpy_add_type(module, &tensor_spec, NULL);
    if (st->Tensor_Type == NULL) return -1;
    (void)authoring_limits(&st->authoring);
    st->cpu_device = hrpy_device_new(st, HURRAY_DEVICE_CPU, HURRAY_MEM_STANDARD, 0);
    if (st->cpu_device == NULL) return -1;
    st->str_numpy_module = PyUnicode_InternFromString("hurray._numpy");
    if (st->str_numpy_module == NULL) return -1;
    st->str_numpy = PyUnicode_InternFromString("numpy");
    if (st->str_numpy == NULL) return -1;
    if (array_interface_init(st) < 0) return -1;
    for (int i = 0; i < HRPY_BRIDGE_COUNT; i++) {
        st->str_bridge[i] = PyUnicode_InternFromString(bridge_names[i]);
        if (st->str_bridge[i] == NULL) return -1;
    }
    if (PyModule_AddFunctions(module, tensor_module_methods) < 0) return -1;
    capsule = PyCapsule_New((void *)&capi_table, HRPY_CAPI_NAME, NULL);
    if (capsule == NULL) return -1;
    if (PyModule_AddObjectRef(module, "_C_API", capsule) < 0) {
        Py_DECREF(capsule);
        return -1;
    }
    Py_DECREF(capsule);
    return 0;
}
