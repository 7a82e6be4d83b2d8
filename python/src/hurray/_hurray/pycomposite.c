/* hurray.Composite (requirements § Composites, ADR-036; composite.md) and the bridge between
 * Python objects and C items (item.h), which streams and files share.
 *
 * A Composite holds its head descriptor (layout composite, no buffers), a tuple of
 * members (each a Tensor or a Composite) and one role byte per member. Every rule is
 * libhurray's: the head is checked by hurray_descriptor_validate, the roles come from
 * hurray_composite_member_role, and the whole tree by hurray_composite_validate, run on
 * the C item tree this file builds. The binding keeps no copy of those rules.
 *
 * Roles (requirements § Overlay member roles): they live on the composite, never on a member
 * tensor. A member object's descriptor carries no role section; the tree handed to C
 * (to validate, to write) presents each member with its role, and equality compares
 * those presented descriptors. An authored composite's roles are derived; a decoded
 * one's are the ones on the wire (which the reader has checked against the derived
 * ones), so a round trip cannot relabel a member.
 *
 * Items read from a stream or a file become objects here: the item tree is owned by
 * one ItemMemory, and every Tensor over its buffers holds that ItemMemory, so the bytes
 * (an allocation, a file image or a mapping) live while any of them does. Nothing of
 * the tree is copied: a Tensor's or a Composite's Descriptor borrows its node's record
 * (roles are moved out of the member records into the Composite first: they are the
 * derived ones, which the reader checked), and a Composite read from C makes its member
 * objects lazily, from the tree, the first time `members` is asked for (equality and
 * repr make the ones they look at on the fly, keeping none): a composite of many members
 * costs what its C tree costs, not one Python object per member. */
#include "state.h"

#include <limits.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

/* ---- the readers' allocator ----------------------------------------------------------- */

#define HUGE_PAGES_FROM ((size_t)4 << 20)

/* Blocks of this size and more come from libhurray's system allocator, which maps them from
 * the system and unmaps them when freed (alloc.h): a file's index and tables leave the
 * process as soon as the reader frees them, where a heap block below the records made next
 * would stay resident (file-container.md HR-FILE-13). tracemalloc is told of them, so it
 * sees what the heap blocks showed it. */
#define SYSTEM_BLOCKS_FROM ((size_t)1 << 20)

static void *raw_alloc(void *ctx, size_t size) {
    (void)ctx;
    void *p;
    if (size >= SYSTEM_BLOCKS_FROM) {
        const struct hurray_allocator *a = hurray_system_allocator();
        p = a->alloc(a->ctx, size);
        if (p != NULL) (void)PyTraceMalloc_Track(0, (uintptr_t)p, size);
    } else {
        p = PyMem_RawMalloc(size);
    }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* Large buffers (stream items, file images) are filled once, page by page: huge
     * pages make that first touch cheaper, as NumPy's allocator and owned.c do. */
    if (p != NULL && size >= HUGE_PAGES_FROM) {
        uintptr_t start = ((uintptr_t)p + 4095u) & ~(uintptr_t)4095u;
        size_t len = size - (size_t)(start - (uintptr_t)p);
        (void)madvise((void *)start, len & ~(size_t)4095u, MADV_HUGEPAGE);
    }
#endif
    return p;
}

static void raw_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    if (ptr != NULL && size >= SYSTEM_BLOCKS_FROM) {
        const struct hurray_allocator *a = hurray_system_allocator();
        (void)PyTraceMalloc_Untrack(0, (uintptr_t)ptr);
        a->free(a->ctx, ptr, size);
    } else {
        PyMem_RawFree(ptr);
    }
}

const struct hurray_allocator hrpy_raw_allocator = {raw_alloc, raw_free, NULL};

/* ---- ItemMemory ------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    struct hurray_item *item;
} ItemMemoryObject;

PyObject *hrpy_item_memory_new(hrpy_state *st, struct hurray_item *item) {
    ItemMemoryObject *self =
        (ItemMemoryObject *)st->ItemMemory_Type->tp_alloc(st->ItemMemory_Type, 0);
    if (self == NULL) {
        hurray_item_destroy(item);
        return NULL;
    }
    self->item = item;
    return (PyObject *)self;
}

static void item_memory_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    hurray_item_destroy(((ItemMemoryObject *)self)->item); /* unmaps / frees the bytes */
    ((ItemMemoryObject *)self)->item = NULL;
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyType_Slot item_memory_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR("The memory of items read from a stream or a file (an\n"
                                  "allocation, a file image or a mapping), held by every\n"
                                  "Tensor over it. Not constructible.")},
    {Py_tp_dealloc, item_memory_dealloc},
    {0, NULL},
};

/* Not GC-tracked: it refers to nothing but its type (one per item read). */
static PyType_Spec item_memory_spec = {
    .name = "hurray._hurray.ItemMemory",
    .basicsize = sizeof(ItemMemoryObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = item_memory_slots,
};

/* ---- the Composite object ------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *descriptor;                 /* the head's hurray.Descriptor: its one record */
    const struct hurray_descriptor *head; /* that record; role-free: as at top level */
    PyObject *device;                     /* the head's Device */
    PyObject *members;                    /* tuple of Tensor / Composite; NULL until made */
    uint8_t *roles;                       /* member_count bytes: HURRAY_ROLE_* or 0 */
    uint32_t member_count;
    /* read from C: the node the members are made from, its tree's ItemMemory */
    struct hurray_item *item;
    PyObject *owner;
    int readonly;
    unsigned depth;
} CompositeObject;

#define COMPOSITE(o) ((CompositeObject *)(o))

static int is_composite(hrpy_state *st, PyObject *obj) {
    return PyObject_TypeCheck(obj, st->Composite_Type);
}

static CompositeObject *composite_alloc(hrpy_state *st) {
    return (CompositeObject *)st->Composite_Type->tp_alloc(st->Composite_Type, 0);
}

static int composite_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(COMPOSITE(self)->device);
    Py_VISIT(COMPOSITE(self)->members);
    Py_VISIT(COMPOSITE(self)->descriptor);
    Py_VISIT(COMPOSITE(self)->owner);
    return 0;
}

/* The descriptor and the tree's owner stay until dealloc: the head record and the
 * item must not dangle while the object exists (no cycle runs through them). */
static int composite_clear(PyObject *self) {
    Py_CLEAR(COMPOSITE(self)->device);
    Py_CLEAR(COMPOSITE(self)->members);
    return 0;
}

static void composite_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    CompositeObject *c = COMPOSITE(self);
    PyObject_GC_UnTrack(self);
    (void)composite_clear(self);
    c->head = NULL;
    c->item = NULL;
    Py_CLEAR(c->descriptor);
    Py_CLEAR(c->owner);
    PyMem_Free(c->roles);
    c->roles = NULL;
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* ---- C item trees for objects (hrpy_item_build) ----------------------------------------- */

/* An item the binding built: the descriptor is the object's (borrowed) unless it had
 * to be presented differently (a role, a host device), then a copy owned here. */
struct built_item {
    struct hurray_item item; /* first: members[] point at it */
    struct hurray_descriptor *own;
    int flat; /* a struct plan_item: one block, nothing else to free */
};

/* A save plan's item (hrpy_item_from_save_plan): the item, its descriptor with every span
 * pointing into this block (descriptor.h: a borrowed view; storage NULL), one buffer. */
struct plan_item {
    struct built_item b;
    struct hurray_descriptor d;
    struct hurray_item_buffer buf;
    struct hurray_buffer_desc desc;
    uint64_t shape[]; /* rank extents */
};

void hrpy_item_release(struct hurray_item *it) {
    if (it == NULL) return;
    struct built_item *b = (struct built_item *)it;
    if (b->flat) {
        PyMem_Free(b);
        return;
    }
    if (it->members != NULL) {
        for (uint32_t i = 0; i < it->member_count; i++) hrpy_item_release(it->members[i]);
        PyMem_Free(it->members);
    }
    PyMem_Free(it->buffers);
    if (b->own != NULL) {
        hurray_descriptor_reset(b->own);
        PyMem_Free(b->own);
    }
    PyMem_Free(b);
}

/* The descriptor `d` as it goes to C here: with `role` (0: none) and, for a file, on
 * the host (file-container.md HR-FILE-5: "a writer saving a tensor from another device
 * writes it as a host tensor"). */
static int present(hrpy_state *st, struct built_item *b, const struct hurray_descriptor *d,
                   PyObject *tensor, uint8_t role, int mode) {
    int host = mode == HRPY_ITEM_FILE && (d->device != HURRAY_DEVICE_CPU ||
                                          d->memory_class != HURRAY_MEM_STANDARD);
    int relabel = (d->has_role != 0) != (role != 0) || (role != 0 && d->role != role);
    /* a file or a stream declares alignments chosen, never measured from where the source
     * happened to be (file-container.md § Declared alignment of saved buffers; stream.md
     * HR-STREAM-10 § Declared alignment of written buffers) */
    int realign = 0;
    if (mode != HRPY_ITEM_VALIDATE && tensor != NULL)
        for (unsigned i = 0; i < d->buffer_count; i++)
            realign |= hrpy_tensor_file_align_log2(tensor, i) != d->buffers[i].alignment_log2;
    if (!host && !relabel && !realign) {
        b->item.descriptor = (struct hurray_descriptor *)(uintptr_t)d; /* only read */
        return 0;
    }
    struct hurray_error err;
    hurray_error_clear(&err);
    b->own = PyMem_Malloc(sizeof *b->own);
    if (b->own == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    hurray_descriptor_init(b->own);
    int status = hurray_descriptor_copy(b->own, d, NULL, &err);
    if (status != HURRAY_OK) {
        hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
        return -1;
    }
    if (role != 0)
        hurray_descriptor_set_role(b->own, role);
    else
        hurray_descriptor_clear_role(b->own);
    if (host) {
        b->own->device = HURRAY_DEVICE_CPU;
        b->own->memory_class = HURRAY_MEM_STANDARD;
    }
    for (unsigned i = 0; realign && i < d->buffer_count; i++) {
        struct hurray_buffer_desc bd = d->buffers[i];
        bd.alignment_log2 = (uint8_t)hrpy_tensor_file_align_log2(tensor, i);
        status = hurray_descriptor_set_buffer(b->own, (uint8_t)i, &bd, &err);
        if (status != HURRAY_OK) {
            hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
            return -1;
        }
    }
    b->item.descriptor = b->own;
    return 0;
}

static PyObject *composite_members(hrpy_state *st, CompositeObject *c);

static int build(hrpy_state *st, PyObject *obj, uint8_t role, int mode, const char *who,
                 unsigned depth, struct hurray_item **out) {
    *out = NULL;
    if (depth > HURRAY_MAX_COMPOSITE_DEPTH_FORMAT + 1u) {
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_LIMIT, "depth",
                       "%s: composites nest deeper than the format's %u levels", who,
                       HURRAY_MAX_COMPOSITE_DEPTH_FORMAT);
        return -1;
    }
    struct built_item *b = PyMem_Calloc(1, sizeof *b);
    if (b == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *out = &b->item;
    int host = 0;
    const struct hurray_descriptor *d = hrpy_tensor_c(st, obj, &host);
    if (d != NULL) {
        if (mode != HRPY_ITEM_VALIDATE && !host) {
            const char *kind = hurray_device_name(d->device);
            hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, "device",
                           "%s: the tensor's memory is on device '%s' (tag %s); its bytes "
                           "cannot be read from the CPU",
                           who, kind ? kind : "?", HRPY_HEX(d->device));
            return -1;
        }
        if (present(st, b, d, obj, role, mode) < 0) return -1;
        unsigned n = d->buffer_count;
        b->item.buffers = PyMem_Calloc(n ? n : 1, sizeof *b->item.buffers);
        if (b->item.buffers == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (unsigned i = 0; i < n; i++) {
            b->item.buffers[i].data = hrpy_tensor_data(obj, i);
            b->item.buffers[i].size = d->buffers[i].size;
        }
        return 0;
    }
    if (!is_composite(st, obj)) {
        PyObject *tn = hrpy_type_name(obj);
        if (tn != NULL)
            PyErr_Format(PyExc_TypeError,
                         "%s: expected a hurray.Tensor or hurray.Composite, not %U", who, tn);
        Py_XDECREF(tn);
        return -1;
    }
    CompositeObject *c = COMPOSITE(obj);
    if (present(st, b, c->head, NULL, role, mode) < 0) return -1;
    PyObject *members = composite_members(st, c); /* borrowed */
    if (members == NULL) return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(members);
    b->item.members = PyMem_Calloc((size_t)(n ? n : 1), sizeof *b->item.members);
    if (b->item.members == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->item.member_count = (uint32_t)n;
    for (Py_ssize_t i = 0; i < n; i++)
        if (build(st, PyTuple_GET_ITEM(members, i), c->roles[i], mode, who, depth + 1,
                  &b->item.members[i]) < 0)
            return -1;
    return 0;
}

int hrpy_item_from_save_plan(const struct hrpy_save_plan *p, struct hurray_item **out) {
    *out = NULL;
    if (p->rank > HURRAY_MAX_RANK) { /* save_plan never fills more */
        PyErr_SetString(PyExc_SystemError, "hrpy_item_from_save_plan: rank over the maximum");
        return -1;
    }
    struct plan_item *pi =
        PyMem_Malloc(sizeof *pi + (size_t)p->rank * sizeof pi->shape[0]);
    if (pi == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(&pi->b, 0, sizeof pi->b); /* the descriptor and buffer entries are set whole below */
    pi->b.flat = 1;
    /* the record tensor_seal makes for _save_view's tensor: version 1.0, cpu/standard
     * (hurray_descriptor_init), the dtype, shape and dense layout, byte_offset 0, one
     * producer_synced buffer declaring the alignment a saved buffer of its size declares
     * (file-container.md § Declared alignment of saved buffers; 0 when empty, HR-BUF-2) */
    hurray_descriptor_init(&pi->d);
    pi->d.dtype = p->dtype;
    pi->d.layout.tag = p->layout;
    pi->d.rank = p->rank;
    if (p->rank) memcpy(pi->shape, p->shape, (size_t)p->rank * sizeof pi->shape[0]);
    pi->d.shape = p->rank ? pi->shape : NULL;
    pi->desc = (struct hurray_buffer_desc){
        .size = p->size,
        .alignment_log2 = p->size == 0 ? 0 : hrpy_owned_align_log2(p->size),
        .sync_mode = HURRAY_SYNC_PRODUCER_SYNCED};
    pi->d.buffer_count = 1;
    pi->d.buffers = &pi->desc;
    pi->buf = (struct hurray_item_buffer){p->size ? (uint8_t *)(uintptr_t)p->data : NULL,
                                          p->size};
    pi->b.item.descriptor = &pi->d;
    pi->b.item.buffers = &pi->buf;
    *out = &pi->b.item;
    return 0;
}

int hrpy_item_build(hrpy_state *st, PyObject *obj, int mode, const char *who,
                    struct hurray_item **out) {
    if (build(st, obj, 0, mode, who, 1, out) == 0) return 0;
    hrpy_item_release(*out);
    *out = NULL;
    return -1;
}

/* ---- objects for C items (hrpy_item_to_object) ------------------------------------------ */

/* The address an empty buffer is given: never dereferenced, never NULL. */
static _Alignas(64) uint8_t empty_bytes[64];

static PyObject *object_from_item(hrpy_state *st, struct hurray_item *it, PyObject *owner,
                                  int readonly, unsigned depth);

/* The head record's Device: the shared Device('cpu') for cpu/standard. */
static PyObject *head_device(hrpy_state *st, const struct hurray_descriptor *d) {
    if (d->device == HURRAY_DEVICE_CPU && d->memory_class == HURRAY_MEM_STANDARD)
        return Py_NewRef(st->cpu_device);
    return hrpy_device_new(st, d->device, d->memory_class, 0);
}

/* A Composite over node `it` of a tree `owner` keeps: the head's record borrowed, the
 * members made when first needed. Each member's role moves from its record to
 * c->roles: the derived role (the reader checked the wire's against it, HR-COMP-3),
 * so this can run again over the same node and find the same roles. */
static PyObject *composite_from_item(hrpy_state *st, struct hurray_item *it, PyObject *owner,
                                     int readonly, unsigned depth) {
    struct hurray_error err;
    hurray_error_clear(&err);
    struct hurray_descriptor *d = it->descriptor;
    if (it->member_count != d->layout.member_count || it->members == NULL)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_CONSTRAINT, "members",
                              "members: the item holds %lu members, its head declares %lu",
                              (unsigned long)it->member_count,
                              (unsigned long)d->layout.member_count);
    CompositeObject *c = composite_alloc(st);
    if (c == NULL) return NULL;
    c->item = it;
    c->owner = Py_NewRef(owner);
    c->readonly = readonly;
    c->depth = depth;
    c->member_count = it->member_count;
    c->head = d;
    c->device = head_device(st, d);
    c->descriptor = c->device ? hrpy_descriptor_borrow(st, d, owner, c->device) : NULL;
    c->roles = PyMem_Calloc(it->member_count ? it->member_count : 1, 1);
    if (c->device == NULL || c->descriptor == NULL || c->roles == NULL) {
        if (c->roles == NULL) PyErr_NoMemory();
        Py_DECREF(c);
        return NULL;
    }
    for (uint32_t i = 0; i < it->member_count; i++) {
        struct hurray_descriptor *m = it->members[i] ? it->members[i]->descriptor : NULL;
        if (m == NULL) {
            Py_DECREF(c);
            return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_ARGUMENT, "members",
                                  "members[%lu] is missing", (unsigned long)i);
        }
        int status = hurray_composite_member_role(d, i, &c->roles[i], &err);
        if (status != HURRAY_OK) {
            Py_DECREF(c);
            return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
        }
        if (m->has_role && m->role != c->roles[i]) {
            Py_DECREF(c);
            return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_CONSTRAINT, "member_role",
                                  "members[%lu]: role %u, the derived one is %u",
                                  (unsigned long)i, (unsigned)m->role, (unsigned)c->roles[i]);
        }
        hurray_descriptor_clear_role(m); /* the composite holds it */
    }
    return (PyObject *)c;
}

/* Member i as an object: from the members tuple once made, else made from the tree
 * (a new object each call). New reference. */
static PyObject *member_at(hrpy_state *st, CompositeObject *c, uint32_t i) {
    if (c->members != NULL) return Py_NewRef(PyTuple_GET_ITEM(c->members, i));
    return object_from_item(st, c->item->members[i], c->owner, c->readonly, c->depth + 1);
}

/* The members tuple (borrowed), made from the tree the first time. */
static PyObject *composite_members(hrpy_state *st, CompositeObject *c) {
    if (c->members != NULL) return c->members;
    PyObject *t = PyTuple_New((Py_ssize_t)c->member_count);
    for (uint32_t i = 0; t != NULL && i < c->member_count; i++) {
        PyObject *m = member_at(st, c, i);
        if (m == NULL) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, i, m);
    }
    c->members = t;
    return t;
}

static PyObject *object_from_item(hrpy_state *st, struct hurray_item *it, PyObject *owner,
                                  int readonly, unsigned depth) {
    if (it->descriptor == NULL)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_INTERNAL, "item",
                              "item without a descriptor");
    if (depth > HURRAY_MAX_COMPOSITE_DEPTH_FORMAT + 1u)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_LIMIT, "depth",
                              "composites nest deeper than %u levels",
                              HURRAY_MAX_COMPOSITE_DEPTH_FORMAT);
    if (hurray_item_is_composite(it)) return composite_from_item(st, it, owner, readonly, depth);
    const struct hurray_descriptor *d = it->descriptor;
    struct hrpy_part parts[HURRAY_MAX_BUFFERS];
    if (d->buffer_count > 0 && it->buffers == NULL)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_BUFFER_COUNT, "buffers",
                              "buffers: the descriptor declares %d, the item holds none",
                              (int)d->buffer_count);
    for (unsigned i = 0; i < d->buffer_count; i++) {
        const struct hurray_item_buffer *b = &it->buffers[i];
        if (b->size != d->buffers[i].size || (b->data == NULL && b->size != 0))
            return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_BUFFER_SIZE, "buffers",
                                  "buffers[%u]: the item holds %llu bytes, the descriptor "
                                  "declares %llu",
                                  i, (unsigned long long)b->size,
                                  (unsigned long long)d->buffers[i].size);
        parts[i].ptr = b->data != NULL ? b->data : empty_bytes;
        parts[i].size = b->size;
        parts[i].owner = owner;
        parts[i].readonly = readonly || b->size == 0;
        parts[i].align_log2 = d->buffers[i].alignment_log2; /* declared, kept as read */
    }
    /* a root tensor: its reader drops the tree next (hrpy_item_to_object) */
    PyObject *t =
        hrpy_tensor_from_c(st, it->descriptor, owner, parts, d->buffer_count, depth == 1);
    /* bytes read from a file or stream into memory the item tree owns: sparse index buffers
     * are hurray's own, read-only and checked once (memory-layout.md HR-LAYOUT-26) */
    if (t != NULL) hrpy_tensor_seal_index(t);
    return t;
}

PyObject *hrpy_item_to_object(hrpy_state *st, struct hurray_item *item, PyObject *owner,
                              int readonly) {
    /* A member loaded on its own (a file entry by name) presents without its role. */
    if (item->descriptor != NULL) hurray_descriptor_clear_role(item->descriptor);
    return object_from_item(st, item, owner, readonly, 1);
}

/* ---- construction ---------------------------------------------------------------------- */

/* Name -> byte through libhurray's name function (the one table). */
static int byte_for_name(PyObject *obj, const char *who, const char *what,
                         const char *(*name_of)(uint8_t), uint8_t *out) {
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a str, not %.100s", who, what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(obj, &len);
    if (s == NULL) return -1;
    for (unsigned v = 1; v < 0xFF; v++) {
        const char *name = name_of((uint8_t)v);
        if (name != NULL && strlen(name) == (size_t)len && memcmp(name, s, (size_t)len) == 0) {
            *out = (uint8_t)v;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "%s: unknown %s %R", who, what, obj);
    return -1;
}

static const struct hurray_limits *authoring_limits(struct hurray_limits *lim) {
    hurray_limits_default(lim);
    lim->max_descriptor_bytes = UINT64_MAX;
    lim->max_buffer_bytes = UINT64_MAX;
    lim->max_rank = UINT32_MAX;
    lim->max_composite_depth = UINT32_MAX;
    lim->max_composite_members = UINT64_MAX;
    hurray_limits_clamp(lim);
    return lim;
}

/* Composite(composition_rule, shape, dtype, members, combine_op=None, *, shard=None,
 *           statistics=None, device=None) */
static PyObject *composite_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"composition_rule", "shape",      "dtype",
                                        "members",          "combine_op", "shard",
                                        "statistics",       "device"};
    PyObject *a[8];
    CompositeObject *self = NULL;
    PyObject *seq = NULL, *device = NULL;
    struct hurray_item *tree = NULL;
    struct hurray_limits lim;
    struct hurray_error err;
    hurray_error_clear(&err);
    hrpy_state *st = hrpy_state_from_type(type);
    if (st == NULL) return NULL;
    if (hrpy_bind_tuple("Composite", args, kwargs, names, 8, 5, 4, a) < 0) return NULL;
    self = composite_alloc(st);
    if (self == NULL) return NULL;
    struct hurray_descriptor *h = NULL;
    self->descriptor = hrpy_descriptor_new_own(st, &h);
    if (self->descriptor == NULL) goto error;
    self->head = h;
    h->layout.tag = HURRAY_LAYOUT_COMPOSITE;
    if (byte_for_name(a[0], "Composite", "composition_rule", hurray_composite_rule_name,
                      &h->layout.rule) < 0)
        goto error;
    if (a[4] != NULL && a[4] != Py_None &&
        byte_for_name(a[4], "Composite", "combine_op", hurray_combine_op_name,
                      &h->layout.combine) < 0)
        goto error;
    uint64_t shape[HURRAY_MAX_RANK];
    uint8_t rank = 0;
    if (hrpy_as_shape(st, a[1], shape, &rank) < 0) goto error;
    int status = hurray_descriptor_set_shape(h, rank, shape, &err);
    if (status != HURRAY_OK) {
        hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
        goto error;
    }
    /* The members are validated against the head's shape, so every rule needs it
     * resolved here (composite.md HR-COMP-4). */
    if (hrpy_refuse_dynamic(st, "Composite", h->rank, h->shape) < 0) goto error;
    if (!hrpy_dtype_tag_of(st, a[2], &h->dtype)) {
        PyErr_Format(PyExc_TypeError, "Composite: dtype must be a hurray.Dtype, not %.100s",
                     Py_TYPE(a[2])->tp_name);
        goto error;
    }
    /* members: a sequence of Tensor / Composite; anything else names its index */
    if (PyUnicode_Check(a[3]) || PyBytes_Check(a[3]) || PyByteArray_Check(a[3]) ||
        !PySequence_Check(a[3])) {
        PyErr_Format(PyExc_TypeError,
                     "Composite: members must be a sequence of hurray.Tensor or "
                     "hurray.Composite, not %.100s",
                     Py_TYPE(a[3])->tp_name);
        goto error;
    }
    seq = PySequence_Tuple(a[3]);
    if (seq == NULL) goto error;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *m = PyTuple_GET_ITEM(seq, i);
        if (hrpy_tensor_c(st, m, NULL) == NULL && !is_composite(st, m)) {
            PyErr_Format(PyExc_TypeError,
                         "Composite: members[%zd] must be a hurray.Tensor or hurray.Composite, "
                         "not %.100s",
                         i, Py_TYPE(m)->tp_name);
            goto error;
        }
    }
    if ((uint64_t)n > UINT32_MAX) {
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_LIMIT, "layout.member_count",
                       "layout.member_count: %zd members; a head holds at most 2^32-1", n);
        goto error;
    }
    h->layout.member_count = (uint32_t)n; /* taken from members: it cannot disagree */
    self->member_count = (uint32_t)n;
    if (a[5] != NULL && a[5] != Py_None) {
        uint8_t shard_rank = 0;
        const struct hurray_shard *s = hrpy_shard_c(st, a[5], &shard_rank);
        if (s == NULL) {
            PyErr_Format(PyExc_TypeError, "Composite: shard must be a hurray.Shard or None, not %.100s",
                         Py_TYPE(a[5])->tp_name);
            goto error;
        }
        if (shard_rank != h->rank) {
            hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_CONSTRAINT, "shard.global_shape",
                           "shard.global_shape: %d entries, the composite's rank is %d",
                           (int)shard_rank, (int)h->rank);
            goto error;
        }
        status = hurray_descriptor_set_shard(h, s, &err);
        if (status != HURRAY_OK) {
            hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
            goto error;
        }
    }
    if (a[6] != NULL && a[6] != Py_None) {
        const struct hurray_statistics *s = hrpy_statistics_c(st, a[6]);
        if (s == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "Composite: statistics must be a hurray.Statistics or None, not %.100s",
                         Py_TYPE(a[6])->tp_name);
            goto error;
        }
        status = hurray_descriptor_set_statistics(h, s, &err);
        if (status != HURRAY_OK) {
            hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
            goto error;
        }
    }
    if (a[7] == NULL || a[7] == Py_None) {
        device = Py_NewRef(st->cpu_device);
    } else {
        uint8_t tag, mc;
        int32_t id;
        device = hrpy_device_tags(st, a[7], &tag, &mc, &id)
                     ? Py_NewRef(a[7])
                     : PyObject_CallOneArg((PyObject *)st->Device_Type, a[7]);
        if (device == NULL) goto error;
    }
    int32_t device_id = 0;
    (void)hrpy_device_tags(st, device, &h->device, &h->memory_class, &device_id);
    self->device = device;
    device = NULL;
    if (hrpy_descriptor_set_device(self->descriptor, self->device) < 0) goto error;
    /* the head, then the roles, then the whole tree: every rule is libhurray's */
    status = hurray_descriptor_validate(h, authoring_limits(&lim), &err);
    if (status != HURRAY_OK) {
        hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
        goto error;
    }
    self->roles = PyMem_Calloc(n ? (size_t)n : 1, 1);
    if (self->roles == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        status = hurray_composite_member_role(h, (uint32_t)i, &self->roles[i], &err);
        if (status != HURRAY_OK) {
            hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
            goto error;
        }
    }
    self->members = seq;
    seq = NULL;
    if (hrpy_item_build(st, (PyObject *)self, HRPY_ITEM_VALIDATE, "Composite", &tree) < 0)
        goto error;
    status = hurray_composite_validate(tree, authoring_limits(&lim), &err);
    hrpy_item_release(tree);
    if (status != HURRAY_OK) {
        hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
        goto error;
    }
    return (PyObject *)self;
error:
    Py_XDECREF(self);
    Py_XDECREF(seq);
    Py_XDECREF(device);
    return NULL;
}

/* ---- equality: head and members by value, members as they present to the parent ------ */

static int bytes_equal(const uint8_t *a, const uint8_t *b, uint64_t n) {
    if (n == 0 || a == b) return 1;
    int eq;
    if (n < ((uint64_t)1 << 16)) return memcmp(a, b, (size_t)n) == 0;
    Py_BEGIN_ALLOW_THREADS
    eq = memcmp(a, b, (size_t)n) == 0;
    Py_END_ALLOW_THREADS
    return eq;
}

static int object_equal(hrpy_state *st, PyObject *a, PyObject *b, unsigned depth);

/* Descriptors equal but for the buffers' declared alignment, which describes an address
 * and is exempt from the round-trip obligation (requirements § Alignment and the round-trip
 * obligation): two members with equal bytes at different addresses are equal. -1 on error. */
static int descriptors_equal(const struct hurray_descriptor *a, const struct hurray_descriptor *b) {
    if (a->buffer_count != b->buffer_count) return 0;
    int same_alignment = 1;
    for (unsigned i = 0; i < a->buffer_count; i++)
        same_alignment &= a->buffers[i].alignment_log2 == b->buffers[i].alignment_log2;
    if (same_alignment) return hurray_descriptor_equal(a, b);
    /* b seen with a's alignments: a borrowed view over b's record and a copy of its table */
    struct hurray_buffer_desc table[HURRAY_MAX_BUFFERS];
    struct hurray_descriptor view = *b;
    for (unsigned i = 0; i < b->buffer_count; i++) {
        table[i] = b->buffers[i];
        table[i].alignment_log2 = a->buffers[i].alignment_log2;
    }
    view.buffers = table;
    return hurray_descriptor_equal(a, &view);
}

static int tensors_equal(hrpy_state *st, PyObject *a, PyObject *b) {
    int host_a = 0, host_b = 0;
    const struct hurray_descriptor *da = hrpy_tensor_c(st, a, &host_a);
    const struct hurray_descriptor *db = hrpy_tensor_c(st, b, &host_b);
    if (a == b) return 1;
    int eq = descriptors_equal(da, db);
    if (eq <= 0) return eq;
    if (!host_a || !host_b) return 0; /* bytes that cannot be read here: identity only */
    for (unsigned i = 0; i < da->buffer_count; i++)
        if (!bytes_equal(hrpy_tensor_data(a, i), hrpy_tensor_data(b, i), da->buffers[i].size))
            return 0;
    return 1;
}

/* Members are compared one pair at a time: a composite read from C makes each member
 * for the comparison and drops it (members_at), so comparing holds two at a time. */
static int composites_equal(hrpy_state *st, PyObject *a, PyObject *b, unsigned depth) {
    CompositeObject *x = COMPOSITE(a), *y = COMPOSITE(b);
    if (a == b) return 1;
    int eq = descriptors_equal(x->head, y->head);
    if (eq <= 0) return eq;
    uint32_t n = x->member_count;
    if (n != y->member_count) return 0;
    if (n > 0 && memcmp(x->roles, y->roles, (size_t)n) != 0) return 0;
    for (uint32_t i = 0; i < n; i++) {
        PyObject *mx = member_at(st, x, i), *my = mx ? member_at(st, y, i) : NULL;
        eq = my ? object_equal(st, mx, my, depth + 1) : -1;
        Py_XDECREF(mx);
        Py_XDECREF(my);
        if (eq <= 0) return eq;
    }
    return 1;
}

static int object_equal(hrpy_state *st, PyObject *a, PyObject *b, unsigned depth) {
    if (depth > HURRAY_MAX_COMPOSITE_DEPTH_FORMAT + 2u) return 0; /* never: bounded by build */
    int ta = hrpy_tensor_c(st, a, NULL) != NULL, tb = hrpy_tensor_c(st, b, NULL) != NULL;
    if (ta && tb) return tensors_equal(st, a, b);
    if (is_composite(st, a) && is_composite(st, b)) return composites_equal(st, a, b, depth);
    return 0;
}

static PyObject *composite_richcompare(PyObject *self, PyObject *other, int op) {
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    if (st == NULL) return NULL;
    if ((op != Py_EQ && op != Py_NE) || !is_composite(st, other)) Py_RETURN_NOTIMPLEMENTED;
    int eq = object_equal(st, self, other, 1);
    if (eq < 0) return NULL;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* ---- properties --------------------------------------------------------------------------- */

static PyObject *c_get_rule(PyObject *self, void *Py_UNUSED(c)) {
    const char *name = hurray_composite_rule_name(COMPOSITE(self)->head->layout.rule);
    if (name == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

static PyObject *c_get_combine(PyObject *self, void *Py_UNUSED(c)) {
    const struct hurray_layout *l = &COMPOSITE(self)->head->layout;
    const char *name = l->rule == HURRAY_RULE_OVERLAY ? hurray_combine_op_name(l->combine) : NULL;
    if (name == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

static PyObject *c_get_shape(PyObject *self, void *Py_UNUSED(c)) {
    return hrpy_shape_to_tuple(COMPOSITE(self)->head->rank, COMPOSITE(self)->head->shape);
}

static PyObject *c_get_ndim(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromLong(COMPOSITE(self)->head->rank);
}

static PyObject *c_get_dtype(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    return st ? Py_XNewRef(hrpy_dtype_get(st, COMPOSITE(self)->head->dtype, "dtype")) : NULL;
}

static PyObject *c_get_members(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    PyObject *members = st ? composite_members(st, COMPOSITE(self)) : NULL;
    return Py_XNewRef(members);
}

static PyObject *c_get_member_count(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromUnsignedLong(COMPOSITE(self)->member_count);
}

static PyObject *c_get_member_roles(PyObject *self, void *Py_UNUSED(c)) {
    CompositeObject *c = COMPOSITE(self);
    Py_ssize_t n = (Py_ssize_t)c->member_count;
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t != NULL && i < n; i++) {
        const char *name = c->roles[i] ? hurray_member_role_name(c->roles[i]) : NULL;
        PyObject *v = name ? PyUnicode_FromString(name) : Py_NewRef(Py_None);
        if (v == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *c_get_descriptor(PyObject *self, void *Py_UNUSED(c)) {
    return Py_NewRef(COMPOSITE(self)->descriptor);
}

static PyObject *c_get_layout(PyObject *self, void *Py_UNUSED(c)) {
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    return st ? hrpy_layout_from_c(st, &COMPOSITE(self)->head->layout, COMPOSITE(self)->head->rank)
              : NULL;
}

static PyObject *c_get_device(PyObject *self, void *Py_UNUSED(c)) {
    return Py_NewRef(COMPOSITE(self)->device);
}

static PyObject *c_get_shard(PyObject *self, void *Py_UNUSED(c)) {
    const struct hurray_descriptor *h = COMPOSITE(self)->head;
    if (!h->shard) Py_RETURN_NONE;
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    return st ? hrpy_shard_from_c(st, h->shard, h->rank) : NULL;
}

static PyObject *c_get_statistics(PyObject *self, void *Py_UNUSED(c)) {
    const struct hurray_descriptor *h = COMPOSITE(self)->head;
    if (!h->statistics) Py_RETURN_NONE;
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    return st ? hrpy_statistics_from_c(st, h->statistics) : NULL;
}

/* ---- repr: one member per line, indented by depth ----------------------------------------- */

#define REPR_HEAD_MEMBERS 10 /* members shown before an elision, and after it: */
#define REPR_TAIL_MEMBERS 2

static PyObject *composite_repr_at(hrpy_state *st, PyObject *self, unsigned depth);

/* repr of a member at `depth`, its continuation lines indented to it. */
static PyObject *member_repr(hrpy_state *st, PyObject *m, unsigned depth, PyObject *pad) {
    if (is_composite(st, m)) return composite_repr_at(st, m, depth);
    PyObject *r = PyObject_Repr(m), *nl = NULL, *nlpad = NULL, *out = NULL;
    if (r == NULL) return NULL;
    nl = PyUnicode_FromString("\n");
    nlpad = nl ? PyUnicode_Concat(nl, pad) : NULL;
    out = nlpad ? PyUnicode_Replace(r, nl, nlpad, -1) : NULL;
    Py_DECREF(r);
    Py_XDECREF(nl);
    Py_XDECREF(nlpad);
    return out;
}

static PyObject *composite_repr_at(hrpy_state *st, PyObject *self, unsigned depth) {
    CompositeObject *c = COMPOSITE(self);
    PyObject *rule = NULL, *shape = NULL, *dtype = NULL, *combine = NULL, *extra = NULL,
             *pad = NULL, *outer = NULL, *parts = NULL, *line = NULL, *r = NULL;
    unsigned width = depth > 32 ? 128u : depth * 4u;
    rule = c_get_rule(self, NULL);
    shape = c_get_shape(self, NULL);
    dtype = c_get_dtype(self, NULL);
    combine = c_get_combine(self, NULL);
    char spaces[132];
    memset(spaces, ' ', sizeof spaces);
    pad = PyUnicode_FromStringAndSize(spaces, (Py_ssize_t)width);
    outer = PyUnicode_FromStringAndSize(spaces, (Py_ssize_t)(width - 4u));
    parts = PyList_New(0);
    if (!rule || !shape || !dtype || !combine || !pad || !outer || !parts) goto done;
    /* keywords beyond the constructor's required ones, when they say something */
    extra = PyUnicode_FromString("");
    if (extra == NULL) goto done;
    if (combine != Py_None) Py_SETREF(extra, PyUnicode_FromFormat("%U, combine_op=%R", extra, combine));
    if (extra != NULL && c->head->shard != NULL) {
        PyObject *s = c_get_shard(self, NULL);
        Py_SETREF(extra, s ? PyUnicode_FromFormat("%U, shard=%R", extra, s) : NULL);
        Py_XDECREF(s);
    }
    if (extra != NULL && c->head->statistics != NULL) {
        PyObject *s = c_get_statistics(self, NULL);
        Py_SETREF(extra, s ? PyUnicode_FromFormat("%U, statistics=%R", extra, s) : NULL);
        Py_XDECREF(s);
    }
    if (extra != NULL && c->device != st->cpu_device) {
        Py_SETREF(extra, PyUnicode_FromFormat("%U, device=%R", extra, c->device));
    }
    if (extra == NULL) goto done;
    line = PyUnicode_FromFormat("hurray.Composite(%R, shape=%R, dtype=%R%U, members=[", rule,
                                shape, dtype, extra);
    if (line == NULL || PyList_Append(parts, line) < 0) goto done;
    Py_CLEAR(line);
    Py_ssize_t n = (Py_ssize_t)c->member_count;
    int elide = n > REPR_HEAD_MEMBERS + REPR_TAIL_MEMBERS + 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (elide && i == REPR_HEAD_MEMBERS) {
            line = PyUnicode_FromFormat("\n%U...  # %zd more members", pad,
                                        n - REPR_HEAD_MEMBERS - REPR_TAIL_MEMBERS);
            if (line == NULL || PyList_Append(parts, line) < 0) goto done;
            Py_CLEAR(line);
            i = n - REPR_TAIL_MEMBERS - 1;
            continue;
        }
        PyObject *obj = member_at(st, c, (uint32_t)i);
        PyObject *m = obj ? member_repr(st, obj, depth + 1, pad) : NULL;
        Py_XDECREF(obj);
        if (m == NULL) goto done;
        line = PyUnicode_FromFormat("\n%U%U,", pad, m);
        Py_DECREF(m);
        if (line == NULL || PyList_Append(parts, line) < 0) goto done;
        Py_CLEAR(line);
    }
    line = PyUnicode_FromFormat("\n%U])", outer);
    if (line == NULL || PyList_Append(parts, line) < 0) goto done;
    Py_CLEAR(line);
    PyObject *empty = PyUnicode_FromString("");
    if (empty != NULL) {
        r = PyUnicode_Join(empty, parts);
        Py_DECREF(empty);
    }
done:
    Py_XDECREF(rule);
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    Py_XDECREF(combine);
    Py_XDECREF(extra);
    Py_XDECREF(pad);
    Py_XDECREF(outer);
    Py_XDECREF(parts);
    Py_XDECREF(line);
    return r;
}

static PyObject *composite_repr(PyObject *self) {
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    if (st == NULL) return NULL;
    return composite_repr_at(st, self, 1);
}

/* ---- the type ----------------------------------------------------------------------------- */

#define GETTER(name, fn, doc) {name, fn, NULL, PyDoc_STR(doc), NULL}
static PyGetSetDef composite_getset[] = {
    GETTER("composition_rule", c_get_rule, "'partition', 'overlay' or 'group'."),
    GETTER("combine_op", c_get_combine,
           "'replace', 'add', 'max' or 'min' for an overlay; None for the other rules."),
    GETTER("shape", c_get_shape, "The logical shape the head states (None: dynamic)."),
    GETTER("ndim", c_get_ndim, "Rank of the head."),
    GETTER("dtype", c_get_dtype, "The element type the head states."),
    GETTER("members", c_get_members, "Tuple of the members (hurray.Tensor or hurray.Composite)."),
    GETTER("member_count", c_get_member_count, "len(members)."),
    GETTER("member_roles", c_get_member_roles,
           "Tuple of 'base' / 'correction' / None, one per member: derived from the rule and\n"
           "the position for an authored composite, as read for a decoded one."),
    GETTER("descriptor", c_get_descriptor, "The head Descriptor (layout composite, no buffers)."),
    GETTER("layout", c_get_layout, "The head's CompositeLayout."),
    GETTER("device", c_get_device, "The head's Device."),
    GETTER("shard", c_get_shard, "The head's Shard (placing it in a parent partition), or None."),
    GETTER("statistics", c_get_statistics, "The head's Statistics, or None."),
    {NULL, NULL, NULL, NULL, NULL},
};
#undef GETTER

static PyType_Slot composite_slots[] = {
    {Py_tp_doc,
     (void *)PyDoc_STR(
         "Composite(composition_rule, shape, dtype, members, combine_op=None, *,\n"
         "          shard=None, statistics=None, device=None)\n--\n\n"
         "A composite tensor: a head stating the logical view (shape and dtype, never\n"
         "derived) and its members, each a hurray.Tensor or hurray.Composite. The rule is\n"
         "'partition', 'overlay' (combine_op required: 'replace', 'add', 'max', 'min') or\n"
         "'group' (combine_op refused, as for partition). member_count is len(members);\n"
         "overlay roles are derived from the position, never accepted. libhurray validates\n"
         "the whole tree (InvalidDescriptorError). Compares by value, members included;\n"
         "unhashable. It has no buffers: no values, buffer, __array__, __dlpack__ or\n"
         "__hurray__. Write it with hurray.save or StreamWriter.")},
    {Py_tp_new, composite_new},
    {Py_tp_repr, composite_repr},
    {Py_tp_richcompare, composite_richcompare},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_getset, composite_getset},
    {Py_tp_traverse, composite_traverse},
    {Py_tp_clear, composite_clear},
    {Py_tp_dealloc, composite_dealloc},
    {0, NULL},
};

static PyType_Spec composite_spec = {
    .name = "hurray.Composite",
    .basicsize = sizeof(CompositeObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = composite_slots,
};

int hrpy_composite_init(PyObject *module, hrpy_state *st) {
    st->ItemMemory_Type = hrpy_add_type(module, &item_memory_spec, NULL);
    if (st->ItemMemory_Type == NULL) return -1;
    st->Composite_Type = hrpy_add_type(module, &composite_spec, NULL);
    return st->Composite_Type == NULL ? -1 : 0;
}
