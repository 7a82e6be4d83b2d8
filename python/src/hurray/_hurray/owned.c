/* Owned memory and byte views (requirements § Alignment is measured, § Buffer
 * Lifetime and Ownership; buffer-protocol.md HR-BUF-3).
 *
 * hurray._hurray.AlignedBuffer owns one allocation the binding made (the
 * factories, copy on ingest). It is allocated to at least
 * MIN_BUFFER_ALIGNMENT -- PAGE_ALIGNMENT from 1 MiB up -- and the tensor that
 * holds it declares exactly that alignment ("declare what it allocated"). It
 * exports its bytes through the buffer protocol (1-D, unsigned bytes,
 * writable), so NumPy and memoryview can wrap it, and frees its memory when
 * the last reference goes: the lifetime is an ordinary Python reference.
 *
 * The memory comes from PyMem_RawMalloc/RawCalloc (so tracemalloc sees it)
 * and is aligned by hand: the raw block is over-allocated by the alignment
 * and the object keeps the raw pointer for the matching PyMem_RawFree. Large
 * zeroed buffers use calloc, which the C library satisfies with fresh pages
 * instead of writing zeros.
 *
 * hurray._hurray.ByteView is what Tensor.buffer(i) wraps in a memoryview:
 * a read-only or writable 1-D byte export of [ptr, ptr + size) that holds a
 * strong reference to the tensor, so the view keeps the tensor's buffers
 * alive (and nothing else does: the tensor itself exports no buffer). */
#include "state.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

typedef struct {
    PyObject_HEAD
    void *raw;
    char *data;
    uint64_t size;
    uint8_t align_log2;
} AlignedBufferObject;

typedef struct {
    PyObject_HEAD
    PyObject *owner; /* the tensor */
    char *data;
    Py_ssize_t size;
    int readonly;
} ByteViewObject;

#define ALIGNED(o) ((AlignedBufferObject *)(o))
#define BYTEVIEW(o) ((ByteViewObject *)(o))

/* Owned buffers of at least this size are page-aligned (IPC, RDMA). */
#define PAGE_ALIGNED_FROM (UINT64_C(1) << 20)
/* and from this size asked to be backed by transparent huge pages, as NumPy's
 * default allocator does: a first touch of 64 MiB in 4 KiB pages costs more
 * than copying it. */
#define HUGE_PAGES_FROM (UINT64_C(4) << 20)

static void advise_huge_pages(void *data, uint64_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size < HUGE_PAGES_FROM) return;
    uintptr_t start = (uintptr_t)data & ~(uintptr_t)(HURRAY_PAGE_ALIGNMENT - 1u);
    (void)madvise((void *)start, (size_t)size + ((uintptr_t)data - start), MADV_HUGEPAGE);
#else
    (void)data;
    (void)size;
#endif
}

uint8_t hrpy_owned_align_log2(uint64_t size) {
    return size >= PAGE_ALIGNED_FROM ? 12 : 6; /* 4096 : 64 */
}

uint8_t hrpy_measure_align_log2(const void *ptr, uint64_t size) {
    if (size == 0) return 0; /* HR-BUF-2: an empty buffer declares 1 */
    uintptr_t a = (uintptr_t)ptr;
    uint8_t k = 0;
    while (k < HURRAY_MAX_ALIGNMENT_LOG2 && (a & ((uintptr_t)1 << k)) == 0) k++;
    return k;
}

PyObject *hrpy_owned_new(hrpy_state *st, uint64_t size, int zero, void **data,
                         uint8_t *align_log2) {
    uint8_t log2 = hrpy_owned_align_log2(size);
    size_t align = (size_t)1 << log2;
    if (size > (uint64_t)PY_SSIZE_T_MAX - align) return PyErr_NoMemory();
    AlignedBufferObject *self =
        (AlignedBufferObject *)st->AlignedBuffer_Type->tp_alloc(st->AlignedBuffer_Type, 0);
    if (self == NULL) return NULL;
    /* At least one byte, so that an empty buffer still has a distinct address. */
    size_t raw_size = (size_t)size + align;
    self->raw = zero ? PyMem_RawCalloc(1, raw_size) : PyMem_RawMalloc(raw_size);
    if (self->raw == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    uintptr_t p = ((uintptr_t)self->raw + align) & ~(uintptr_t)(align - 1);
    self->data = (char *)p;
    self->size = size;
    advise_huge_pages(self->data, size); /* advice only: a refusal changes nothing */
    self->align_log2 = log2;
    if (data) *data = self->data;
    if (align_log2) *align_log2 = size == 0 ? 0 : log2;
    return (PyObject *)self;
}

static int aligned_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, self, ALIGNED(self)->data, (Py_ssize_t)ALIGNED(self)->size, 0,
                             flags);
}

static PyObject *aligned_get_nbytes(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromUnsignedLongLong(ALIGNED(self)->size);
}

static PyObject *aligned_get_alignment(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromLong(1L << ALIGNED(self)->align_log2);
}

static PyObject *aligned_get_address(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromVoidPtr(ALIGNED(self)->data);
}

static PyGetSetDef aligned_getset[] = {
    {"nbytes", aligned_get_nbytes, NULL, PyDoc_STR("Size of the allocation in bytes."), NULL},
    {"alignment", aligned_get_alignment, NULL,
     PyDoc_STR("Alignment the allocation was made to (64, or 4096 from 1 MiB up)."), NULL},
    {"address", aligned_get_address, NULL, PyDoc_STR("Address of the first byte."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *aligned_repr(PyObject *self) {
    return PyUnicode_FromFormat("<hurray._hurray.AlignedBuffer nbytes=%llu alignment=%ld>",
                                (unsigned long long)ALIGNED(self)->size,
                                1L << ALIGNED(self)->align_log2);
}

static void aligned_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    PyMem_RawFree(ALIGNED(self)->raw); /* the matching free of the raw block */
    ALIGNED(self)->raw = NULL;
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyType_Slot aligned_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "Memory hurray allocated (factories, copy on ingest): aligned to at least\n"
                    "MIN_BUFFER_ALIGNMENT, exported as writable bytes through the buffer\n"
                    "protocol, freed with the last reference. Not constructible.")},
    {Py_tp_repr, aligned_repr},
    {Py_tp_getset, aligned_getset},
    {Py_tp_traverse, hrpy_traverse_type_only},
    {Py_tp_dealloc, aligned_dealloc},
    {Py_bf_getbuffer, aligned_getbuffer},
    {0, NULL},
};

static PyType_Spec aligned_spec = {
    .name = "hurray._hurray.AlignedBuffer",
    .basicsize = sizeof(AlignedBufferObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = aligned_slots,
};

/* ---- ByteView ---------------------------------------------------------------------- */

PyObject *hrpy_byteview_memoryview(hrpy_state *st, PyObject *owner, void *data, uint64_t size,
                                   int readonly) {
    if (size > (uint64_t)PY_SSIZE_T_MAX) return PyErr_NoMemory();
    ByteViewObject *v = (ByteViewObject *)st->ByteView_Type->tp_alloc(st->ByteView_Type, 0);
    if (v == NULL) return NULL;
    v->owner = Py_NewRef(owner);
    v->data = data;
    v->size = (Py_ssize_t)size;
    v->readonly = readonly;
    PyObject *mv = PyMemoryView_FromObject((PyObject *)v);
    Py_DECREF(v);
    return mv;
}

static int byteview_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, self, BYTEVIEW(self)->data, BYTEVIEW(self)->size,
                             BYTEVIEW(self)->readonly, flags);
}

static int byteview_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(BYTEVIEW(self)->owner);
    return 0;
}

static int byteview_clear(PyObject *self) {
    Py_CLEAR(BYTEVIEW(self)->owner);
    return 0;
}

static void byteview_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    (void)byteview_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *byteview_get_owner(PyObject *self, void *Py_UNUSED(c)) {
    return Py_NewRef(BYTEVIEW(self)->owner ? BYTEVIEW(self)->owner : Py_None);
}

static PyGetSetDef byteview_getset[] = {
    {"owner", byteview_get_owner, NULL, PyDoc_STR("The tensor whose buffer this is."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot byteview_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "The exporter behind Tensor.buffer(i)'s memoryview: the bytes of one\n"
                    "buffer, holding the tensor alive. Not constructible.")},
    {Py_tp_getset, byteview_getset},
    {Py_tp_traverse, byteview_traverse},
    {Py_tp_clear, byteview_clear},
    {Py_tp_dealloc, byteview_dealloc},
    {Py_bf_getbuffer, byteview_getbuffer},
    {0, NULL},
};

static PyType_Spec byteview_spec = {
    .name = "hurray._hurray.ByteView",
    .basicsize = sizeof(ByteViewObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = byteview_slots,
};

int hrpy_owned_init(PyObject *module, hrpy_state *st) {
    st->AlignedBuffer_Type = hrpy_add_type(module, &aligned_spec, NULL);
    if (st->AlignedBuffer_Type == NULL) return -1;
    st->ByteView_Type = hrpy_add_type(module, &byteview_spec, NULL);
    return st->ByteView_Type == NULL ? -1 : 0;
}
