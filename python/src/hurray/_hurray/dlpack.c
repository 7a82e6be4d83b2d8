/* DLPack: Tensor.__dlpack__ / __dlpack_device__ (producer), hurray.from_dlpack
 * (consumer), and the PyTorch bridge built on them, hurray.from_torch and
 * Tensor.to_torch. Seed § DLPack Interoperability, § Stream parameter
 * semantics, § Device ID, § Device and Memory Class Mapping, § Buffer Lifetime
 * and Ownership, § copy on ingest, § PyTorch Interoperability, § sync_mode;
 * docs/spec/dlpack.md, devices.md. The structures are dlpack_abi.h's.
 *
 * Producer. __dlpack__(*, stream=None, max_version=None, dl_device=None,
 * copy=None) follows DLPack's negotiation rule (docs/spec/dlpack.md
 * HR-DLPACK-1): a max_version with major >= 1 gets a `dltensor_versioned`
 * capsule stamped 1.0 or 1.1 (the consumer's minor, capped at ours; a newer
 * major gets 1.1), anything else the legacy `dltensor` capsule. The capsule
 * points at the tensor's own bytes: data = first element, byte_offset 0,
 * element strides always given for ndim > 0 (NULL shape/strides for 0-d), and
 * its manager_ctx is a strong reference to the tensor, released by the
 * deleter -- so the tensor (and every buffer it holds) lives until the
 * consumer is done. copy=True copies into an owned aligned buffer instead
 * (IS_COPIED) and the reference is to that buffer. No negative stride ever
 * leaves (HR-DLPACK-3: PyTorch aborts on one): such a layout is exported as a
 * C-order copy (copy=None/True) or refused (copy=False). The struct is owned
 * by the capsule and the deleter obligation together, and the deleter is
 * idempotent while the capsule lives (HR-DLPACK-6). The deleter runs on any
 * thread, with or without the GIL, also after the interpreter has finalised
 * (then it frees the C struct and leaks the reference: there is no
 * interpreter left to release it in). The capsule's destructor calls the
 * deleter only while the capsule still has its unused name.
 *
 * Refusals: the device pairs devices.md has no DLPack type for (ROCm unified,
 * peer memory, private devices or classes) are hurray.UnsupportedError (from
 * hurray_device_to_dlpack, the one mapping table); everything DLPack cannot
 * say to this consumer is the built-in BufferError: a buffer that is not
 * producer_synced, a quantized tensor, an element type with no DLPack code
 * (sub-byte integers, private types) or whose code is newer than the
 * consumer's max_version (float8/6/4 need 1.1), a layout that is not
 * stride-expressible (named through hurray_layout_name), a dynamic extent,
 * read-only data on the legacy path (it has no flag to say so: NumPy's
 * choice), a stream a stream-less device cannot take, a dl_device other than
 * the tensor's own (or kDLCPU for host-accessible memory), and non-CPU
 * memory that did not arrive through DLPack (a buffer-protocol object is host
 * memory whatever device the constructor was told).
 *
 * Consumer. from_dlpack(obj, *, copy=None) takes an object with __dlpack__
 * (asked for max_version=(1, 1), then bare on TypeError) or a raw capsule of
 * either name; checks version.major == 1 (otherwise the capsule is marked
 * used, its deleter called, and BufferError raised); maps dtype, device
 * (hurray_device_from_dlpack), strides (NULL or C-contiguous -> row_major,
 * F-contiguous -> col_major, other element strides -> strided) and
 * byte_offset; applies copy on ingest (a copy when the data is not 64-byte
 * aligned or copy=True; ValueError when copy=False forbids a needed copy);
 * builds the tensor over a DLPackOwner that calls the producer's deleter
 * exactly once, when the tensor and everything derived from it are gone, and
 * only then renames the capsule `used_...`. A failure before the rename
 * leaves the capsule unconsumed (its own destructor cleans up). Read-only:
 * the versioned flag; a legacy capsule, which cannot say, is writable
 * (PyTorch's and CuPy's reading, and what lets a JAX array come back to
 * JAX: JAX speaks only the legacy capsule, and read-only data cannot leave
 * on that path). A torch tensor with PyTorch's lazy negation or conjugation
 * bit is resolved (a copy) before its __dlpack__ is asked (HR-DLPACK-5).
 *
 * PyTorch (docs/spec/dlpack.md § PyTorch). to_torch(*, copy=None) applies
 * PyTorch's limits: read-only data leaves only as a copy, since PyTorch
 * ignores READ_ONLY (HR-DLPACK-4). */
#include "state.h"

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_abi.h"

/* __dlpack__'s keyword-only parameters. */
static const char *const dlpack_names[4] = {"stream", "max_version", "dl_device", "copy"};

/* Interned objects in hrpy_state.dlpack_obj. */
enum {
    O_DLPACK,        /* "__dlpack__" */
    O_DLPACK_DEVICE, /* "__dlpack_device__" */
    O_KW_MAX,        /* ("max_version",) */
    O_KW_MAX_COPY,   /* ("max_version", "copy") */
    O_V11,           /* (1, 1) */
    O_TORCH,         /* "torch" */
    O_TORCH_DLPACK,  /* "torch.utils.dlpack" */
    O_FROM_DLPACK,   /* "from_dlpack" */
    O_IS_CUDA,       /* "is_cuda" */
    O_TENSOR,        /* "Tensor" */
    O_KW_FIRST,      /* __dlpack__'s keywords, in dlpack_names order: "stream", "max_version", */
    O_KW_LAST = O_KW_FIRST + 3, /* "dl_device", "copy" */
    O_INT0,          /* 0 */
    O_INT1,          /* 1 */
    O_COUNT,
    /* filled on use, NULL until then (not made by hrpy_dlpack_init): */
    O_NOT_TORCH = O_COUNT, /* the type last found not to be torch.Tensor's (torch_resolve_bits) */
    O_ALL
};
_Static_assert(O_ALL <= HRPY_DLPACK_OBJ_COUNT, "hrpy_state.dlpack_obj is too small");

/* Memory the CPU can address, by DLDeviceType: what a copy can read and what
 * dl_device=(kDLCPU, 0) may be served from in place. */
static int host_accessible(int32_t dl_type) {
    return dl_type == HURRAY_DL_CPU || dl_type == HURRAY_DL_CUDA_HOST ||
           dl_type == HURRAY_DL_ROCM_HOST || dl_type == HURRAY_DL_CUDA_MANAGED;
}

/* Larger copies run with the GIL released. */
#define NOGIL_BYTES ((uint64_t)1 << 16)

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

/* A pair of Python integers (max_version, dl_device). */
static int int_pair(PyObject *obj, const char *who, const char *what, int64_t *a, int64_t *b) {
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 2) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a tuple of two integers, not %.100R", who,
                     what, obj);
        return -1;
    }
    if (hrpy_as_i64(PyTuple_GET_ITEM(obj, 0), what, a) < 0) return -1;
    return hrpy_as_i64(PyTuple_GET_ITEM(obj, 1), what, b);
}

/* ==== the deleter and the capsule ========================================================= */

#if PY_VERSION_HEX >= 0x030D0000
#define HRPY_FINALIZING() Py_IsFinalizing()
#else
#define HRPY_FINALIZING() _Py_IsFinalizing()
#endif

#if PY_VERSION_HEX >= 0x030D0000
#define HRPY_ATTACHED_TSTATE() PyThreadState_GetUnchecked()
#else
#define HRPY_ATTACHED_TSTATE() _PyThreadState_UncheckedGet()
#endif

/* Drops the reference a capsule's manager_ctx holds. Any thread, GIL or not:
 * the GIL is taken around the decref. After finalisation there is no
 * interpreter to release it in, and while the interpreter finalises a thread
 * that takes the GIL may be stopped for good: the reference is leaked then
 * (the process is ending; NumPy's deleter makes the same choice).
 *
 * A thread that already holds the GIL (the common case: the consumer's object
 * dies in Python code) decrefs directly. The test is PyGILState_Ensure's own:
 * Ensure takes this thread's bound thread state (PyGILState_GetThisThreadState)
 * and takes the GIL only when that state is not the attached one
 * (PyThreadState_GetUnchecked: the thread state holding the GIL, which can
 * equal this thread's state only while this thread holds it); when it is,
 * Ensure and Release only raise and lower its counter. So the shortcut is
 * exactly the Ensure/Release pair's no-op branch, and unlike PyGILState_Check
 * it does not answer 1 everywhere once a subinterpreter exists. */
static void release_ctx(void *ctx) {
    if (ctx == NULL || !Py_IsInitialized()) return;
    if (HRPY_FINALIZING() && !PyGILState_Check()) return;
    PyThreadState *bound = PyGILState_GetThisThreadState();
    if (bound != NULL && bound == HRPY_ATTACHED_TSTATE()) {
        Py_DECREF((PyObject *)ctx);
        return;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)ctx);
    PyGILState_Release(g);
}

/* One allocation per exported capsule (docs/spec/dlpack.md § Capsule
 * ownership): the managed struct first -- its address is the pointer the
 * consumer holds and passes to the deleter -- then the block's own state, then
 * shape and strides. malloc'd, not PyMem: free must work without the GIL and
 * after finalisation (block_alloc and block_free below, with one spare).
 *
 * Two parties own the block: the capsule, until it is collected, and the
 * obligation to call the deleter once (`refs` starts at 2; whichever drops
 * the last frees). The deleter is idempotent while the block lives: the
 * reference in manager_ctx is released by the first call only. That is what
 * makes a consumer that calls the deleter and then leaves the capsule under
 * its unused name harmless -- PyTorch 2.13 does so when its import fails
 * late (an OpenCL device: "grandfathered Caffe2 device type"), after which the
 * capsule's destructor would call the deleter a second time: a double free
 * before this rule. */
struct export_block {
    union {
        hrdl_managed_versioned v;
        hrdl_managed l;
    } m;                /* first: &block->m is the block */
    atomic_int refs;    /* the capsule + the deleter obligation */
    atomic_int deleted; /* the deleter has run (its reference is released) */
    int versioned;
    int spare_size;     /* allocated for SPARE_RANK dimensions: may be kept as the spare */
    int64_t dims[];     /* shape[ndim], then strides[ndim] */
};

/* The spare block. Blocks of rank <= SPARE_RANK are allocated for SPARE_RANK dimensions, and
 * the last one freed is kept in one slot for the next export instead of going back to malloc
 * (a malloc/free pair per export is ~130 instructions; the slot, two atomic swaps). The slot
 * is a single pointer swapped atomically -- never a list, so there is no ABA -- since blocks
 * are freed on any thread, with or without the GIL, and the module runs free-threaded and in
 * subinterpreters with their own GIL. One block stays in the slot for the life of the process
 * (reachable, not leaked). Under AddressSanitizer the parked block is poisoned, so a use of a
 * freed block is still reported while it is parked (not once the next export took it). */
#define SPARE_RANK 8u
#define SPARE_BYTES (sizeof(struct export_block) + 2u * SPARE_RANK * sizeof(int64_t))
static _Atomic(struct export_block *) spare_block;

#if defined(__SANITIZE_ADDRESS__)
#define HRPY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HRPY_ASAN 1
#endif
#endif
#ifdef HRPY_ASAN
#include <sanitizer/asan_interface.h>
#define SPARE_POISON(b) ASAN_POISON_MEMORY_REGION((b), SPARE_BYTES)
#define SPARE_UNPOISON(b) ASAN_UNPOISON_MEMORY_REGION((b), SPARE_BYTES)
#else
#define SPARE_POISON(b) ((void)(b))
#define SPARE_UNPOISON(b) ((void)(b))
#endif

static struct export_block *block_alloc(unsigned rank) {
    if (rank > SPARE_RANK) {
        struct export_block *b = malloc(sizeof *b + (size_t)rank * 2u * sizeof(int64_t));
        if (b != NULL) b->spare_size = 0;
        return b;
    }
    struct export_block *b = atomic_exchange(&spare_block, NULL);
    if (b != NULL) SPARE_UNPOISON(b);
    else b = malloc(SPARE_BYTES);
    if (b != NULL) b->spare_size = 1;
    return b;
}

static void block_free(struct export_block *b) {
    if (b->spare_size) {
        struct export_block *none = NULL;
        SPARE_POISON(b); /* before it is visible in the slot: the next owner unpoisons it */
        if (atomic_compare_exchange_strong(&spare_block, &none, b)) return;
        SPARE_UNPOISON(b);
    }
    free(b);
}

static void block_unref(struct export_block *b) {
    if (atomic_fetch_sub(&b->refs, 1) == 1) block_free(b);
}

/* The deleter proper: the first call releases manager_ctx and the deleter's
 * share of the block; later calls (while the capsule still holds it) do
 * nothing. */
static void block_delete(struct export_block *b) {
    if (atomic_exchange(&b->deleted, 1)) return;
    void *ctx = b->versioned ? b->m.v.manager_ctx : b->m.l.manager_ctx;
    block_unref(b);
    release_ctx(ctx);
}

static void deleter_versioned(hrdl_managed_versioned *self) {
    if (self != NULL) block_delete((struct export_block *)(void *)self);
}

static void deleter_legacy(hrdl_managed *self) {
    if (self != NULL) block_delete((struct export_block *)(void *)self);
}

/* The capsule names, one object each: the destructor knows its own name by address. */
static const char capsule_versioned[] = HRDL_CAPSULE_VERSIONED;
static const char capsule_legacy[] = HRDL_CAPSULE_LEGACY;

/* 1 while the capsule still has its unused name (either: the test PyCapsule_IsValid made
 * twice). The name is ours, by address, until a consumer renames it; a name equal by
 * contents at another address counts too. */
static int capsule_unused(PyObject *capsule, const struct export_block *b) {
    const char *name = PyCapsule_GetName(capsule); /* a capsule's pointer is never NULL */
    if (name == (b->versioned ? capsule_versioned : capsule_legacy)) return 1;
    /* both names start with 'd'; a consumer's "used_..." does not */
    return name != NULL && name[0] == 'd' &&
           (strcmp(name, capsule_versioned) == 0 || strcmp(name, capsule_legacy) == 0);
}

/* Called when the capsule is collected. The block rides in the capsule's
 * context (readable whatever the capsule's name). The deleter runs only while
 * the capsule still has its unused name (a consumer that renamed it took the
 * obligation over); then the capsule's share of the block is dropped. A
 * pending exception is kept across the deleter (its decref may run any
 * code); a consumed capsule's destructor runs no Python code. */
static void capsule_destructor(PyObject *capsule) {
    struct export_block *b = PyCapsule_GetContext(capsule); /* valid capsule: no error */
    if (b == NULL) return; /* not ours (no context): nothing of ours to release */
    if (capsule_unused(capsule, b)) {
#if PY_VERSION_HEX >= 0x030C0000
        PyObject *exc = PyErr_GetRaisedException();
#else
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
#endif
        block_delete(b);
#if PY_VERSION_HEX >= 0x030C0000
        PyErr_SetRaisedException(exc);
#else
        PyErr_Restore(type, value, tb);
#endif
    }
    block_unref(b);
}

/* ==== producer ============================================================================== */

struct export_req {
    int versioned;    /* 1: DLManagedTensorVersioned */
    uint32_t minor;   /* version.minor stamped on a versioned capsule */
    int copy;         /* -1 None, 0 False, 1 True */
    int32_t dl_type;  /* the device type the capsule declares */
    int32_t dl_id;
    const char *who;  /* "__dlpack__" or "to_torch", for messages */
    int for_torch;    /* the consumer is PyTorch: read-only data leaves as a copy */
};

/* max_version: None -> legacy; (major, minor) with major >= 1 -> versioned. */
static int parse_max_version(PyObject *obj, struct export_req *req) {
    req->versioned = 0;
    req->minor = 0;
    if (obj == NULL || obj == Py_None) return 0;
    int64_t major, minor;
    if (int_pair(obj, "__dlpack__", "max_version", &major, &minor) < 0) return -1;
    if (minor < 0) {
        PyErr_Format(PyExc_ValueError, "__dlpack__: max_version (%lld, %lld) has a negative minor",
                     (long long)major, (long long)minor);
        return -1;
    }
    if (major < 1) return 0; /* a 0.x consumer: the legacy struct (DLPack's rule) */
    req->versioned = 1;
    req->minor = major > (int64_t)HRDL_MAJOR || minor > (int64_t)HRDL_MINOR ? HRDL_MINOR
                                                                            : (uint32_t)minor;
    return 0;
}

/* What this consumer was promised, for messages. */
static void describe_request(const struct export_req *req, char *buf, size_t n) {
    if (!req->versioned)
        PyOS_snprintf(buf, n, "the legacy capsule (no max_version, DLPack 0.8)");
    else
        PyOS_snprintf(buf, n, "DLPack 1.%u", (unsigned)req->minor);
}

/* dl_device: None or the tensor's own (type, id); (kDLCPU, 0) for memory the
 * CPU can address (served in place, the capsule then says kDLCPU). */
static int resolve_dl_device(PyObject *obj, int32_t own_type, int32_t own_id,
                             struct export_req *req) {
    req->dl_type = own_type;
    req->dl_id = own_id;
    if (obj == NULL || obj == Py_None) return 0;
    int64_t type, id;
    if (int_pair(obj, "__dlpack__", "dl_device", &type, &id) < 0) return -1;
    if (type == own_type && id == own_id) return 0;
    if (type == HURRAY_DL_CPU && id == 0 && host_accessible(own_type)) {
        req->dl_type = HURRAY_DL_CPU;
        req->dl_id = 0;
        return 0;
    }
    PyErr_Format(PyExc_BufferError,
                 "__dlpack__: dl_device=(%lld, %lld) asks for another device; the tensor is on "
                 "(%ld, %ld) and the binding moves no data between devices",
                 (long long)type, (long long)id, (long)own_type, (long)own_id);
    return -1;
}

/* docs/spec/dlpack.md § Stream parameter semantics, for producer_synced data
 * (nothing to wait for): CUDA takes None, -1, 1, 2 or a stream pointer (0 is
 * ambiguous and refused); ROCm None, -1, 0 or a pointer (1 and 2 mean nothing
 * there); every other device None (-1, "no synchronisation", tolerated). */
int hrpy_check_stream(const char *who, int32_t dl_type, PyObject *stream) {
    if (stream == NULL || stream == Py_None) return 0;
    if (PyBool_Check(stream) || !PyLong_Check(stream)) {
        PyErr_Format(PyExc_TypeError, "%s: stream must be an int or None, not %.100s",
                     who, Py_TYPE(stream)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(stream, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow > 0) v = LLONG_MAX; /* a pointer-sized value past 2^63: still a pointer */
    if (overflow < 0 || v < -1) {
        PyErr_Format(PyExc_ValueError, "%s: stream=%R is not a stream (negative)", who, stream);
        return -1;
    }
    if (dl_type == HURRAY_DL_CUDA) {
        if (v == 0) {
            PyErr_Format(PyExc_ValueError,
                         "%s: stream=0 is disallowed on CUDA (ambiguous); pass 1 for the legacy "
                         "default stream, 2 for the per-thread default stream",
                         who);
            return -1;
        }
        return 0;
    }
    if (dl_type == HURRAY_DL_ROCM) {
        if (v == 1 || v == 2) {
            PyErr_Format(PyExc_ValueError,
                         "%s: stream=%lld is not a ROCm stream (0 is the default stream)",
                         who, v);
            return -1;
        }
        return 0;
    }
    if (v == -1) return 0;
    PyErr_Format(PyExc_BufferError,
                 "%s: stream=%lld for a tensor on DLPack device type %ld, which has no "
                 "streams; pass stream=None",
                 who, v, (long)dl_type);
    return -1;
}

/* 1 when buffer 0 is device memory that reached the binding through DLPack
 * (a DLPackOwner, directly or through the tensors built over it). */
static int dlpack_origin(hrpy_state *st, PyObject *tensor) {
    for (int depth = 0; depth < 64 && tensor != NULL; depth++) {
        struct hrpy_part p;
        if (hrpy_tensor_part(st, tensor, 0, &p) < 0) {
            PyErr_Clear();
            return 0;
        }
        if (p.owner == NULL) return 0;
        if (Py_IS_TYPE(p.owner, st->DLPackOwner_Type)) return 1;
        tensor = PyObject_TypeCheck(p.owner, st->Tensor_Type) ? p.owner : NULL;
    }
    return 0;
}

/* What DLPack can say about this tensor to this consumer: BufferError for the
 * rest (requirements § DLPack Interoperability; docs/spec/dlpack.md § Element types). */
static int check_exportable(const struct hurray_descriptor *d, const struct export_req *req,
                            const struct hurray_dtype_info **info_out) {
    for (unsigned i = 0; i < d->buffer_count; i++) {
        if (d->buffers[i].sync_mode == HURRAY_SYNC_PRODUCER_SYNCED) continue;
        const char *mode = hurray_sync_mode_name(d->buffers[i].sync_mode);
        PyErr_Format(PyExc_BufferError,
                     "__dlpack__: buffer %u has sync_mode '%s'; the binding holds no event or "
                     "stream to make the consumer wait on, so it exports only producer_synced "
                     "buffers",
                     i, mode ? mode : "?");
        return -1;
    }
    if (d->quant) {
        const char *scheme = hurray_quant_scheme_name(d->quant->scheme);
        PyErr_Format(PyExc_BufferError,
                     "__dlpack__: the tensor is quantized (%s); DLPack has no quantized element "
                     "type (use buffer(i) or the native protocol)",
                     scheme ? scheme : "?");
        return -1;
    }
    const struct hurray_dtype_info *info = hurray_dtype_info(d->dtype);
    if (info == NULL) {
        PyErr_Format(PyExc_BufferError,
                     "__dlpack__: the element type is the private extension type %s; DLPack has "
                     "no type code for it",
                     HRPY_HEX(d->dtype));
        return -1;
    }
    if (info->dlpack_code == HURRAY_DLPACK_NONE) {
        PyErr_Format(PyExc_BufferError,
                     "__dlpack__: %s is a Tier %d element type with no DLPack type code", info->name,
                     (int)info->tier);
        return -1;
    }
    if (info->dlpack_minor > 0 && (!req->versioned || req->minor < info->dlpack_minor)) {
        char asked[64]; /* formatted only here: never on an export that succeeds */
        describe_request(req, asked, sizeof asked);
        PyErr_Format(PyExc_BufferError,
                     "__dlpack__: %s has DLPack type code %d only from DLPack 1.%d; the consumer "
                     "asked for %s (pass max_version=(1, %d))",
                     info->name, (int)info->dlpack_code, (int)info->dlpack_minor, asked,
                     (int)info->dlpack_minor);
        return -1;
    }
    uint8_t tag = d->layout.tag;
    int sub_byte = info->bits % 8 != 0;
    if (!hurray_layout_is_stride_expressible(tag)) {
        const char *name = hurray_layout_name(tag); /* the one name helper (HR-LAYOUT-4) */
        PyErr_Format(PyExc_BufferError,
                     "__dlpack__: the %s layout is not dense and stride-expressible; DLPack "
                     "cannot describe it (use buffer(i) and the layout's parameters)",
                     name ? name : "?");
        return -1;
    }
    if (sub_byte && tag == HURRAY_LAYOUT_STRIDED) {
        PyErr_Format(PyExc_BufferError,
                     "__dlpack__: the %s layout of the packed %d-bit type %s has no DLPack "
                     "description (row_major and col_major only)",
                     hurray_layout_name(tag), (int)info->bits, info->name);
        return -1;
    }
    for (unsigned k = 0; k < d->rank; k++) {
        if (d->shape[k] != HURRAY_DYNAMIC_DIM) continue;
        PyErr_Format(PyExc_BufferError,
                     "__dlpack__: shape[%u] is dynamic (None); DLPack has no dynamic extent", k);
        return -1;
    }
    *info_out = info;
    return 0;
}

/* Element strides of a stride-expressible layout, and the bytes the elements
 * span: *neg (<= 0) and *span from the first element's address (span NULL: not needed,
 * as on an export without a copy). */
static int export_geometry(const struct hurray_descriptor *d,
                           const struct hurray_dtype_info *info, int64_t *strides,
                           int64_t *neg, uint64_t *span) {
    uint64_t count = 1;
    for (unsigned k = 0; k < d->rank; k++) count = d->shape[k] == 0 ? 0 : count * d->shape[k];
    *neg = 0;
    if (d->layout.tag == HURRAY_LAYOUT_STRIDED) {
        int64_t itemsize = info->bits / 8, pos = 0;
        for (unsigned k = 0; k < d->rank; k++) {
            strides[k] = d->layout.strides[k];
            /* validated (the layout's elements lie in buffer 0): no overflow */
            if (count == 0 || d->shape[k] < 2) continue;
            int64_t e = strides[k] * itemsize * (int64_t)(d->shape[k] - 1);
            if (e < 0) *neg += e;
            else pos += e;
        }
        if (span != NULL) *span = count == 0 ? 0 : (uint64_t)(pos - *neg + itemsize);
        return 0;
    }
    int col = d->layout.tag == HURRAY_LAYOUT_COL_MAJOR, overflow = 0;
    int64_t s = 1;
    for (unsigned j = 0; j < d->rank; j++) {
        unsigned k = col ? j : d->rank - 1u - j;
        strides[k] = s;
        int64_t n = (int64_t)d->shape[k];
        if (n > 1 && s > INT64_MAX / n) overflow = 1;
        else if (n > 1) s *= n;
    }
    if (overflow && count != 0) {
        PyErr_SetString(PyExc_BufferError, "__dlpack__: an element stride exceeds 2^63-1");
        return -1;
    }
    if (span == NULL) return 0;
    uint64_t bytes = 0;
    struct hurray_error err;
    hurray_error_clear(&err);
    if (hurray_buffer_size_bytes(d->dtype, count, &bytes, &err) != HURRAY_OK) {
        PyErr_Format(PyExc_BufferError, "__dlpack__: %s", err.message);
        return -1;
    }
    *span = bytes;
    return 0;
}

/* Builds the capsule. `ctx` is a new reference the managed struct takes over
 * (released by the deleter, also on failure here). */
static PyObject *make_capsule(const struct hurray_descriptor *d,
                              const struct hurray_dtype_info *info, const struct export_req *req,
                              void *data, const int64_t *strides, uint64_t flags, PyObject *ctx) {
    struct export_block *b = block_alloc(d->rank);
    if (b == NULL) {
        Py_DECREF(ctx);
        return PyErr_NoMemory();
    }
    int spare_size = b->spare_size;
    memset(b, 0, sizeof *b);
    b->spare_size = spare_size;
    atomic_init(&b->refs, 2);
    atomic_init(&b->deleted, 0);
    b->versioned = req->versioned;
    hrdl_tensor *t;
    if (req->versioned) {
        hrdl_managed_versioned *v = &b->m.v;
        v->version.major = HRDL_MAJOR;
        v->version.minor = req->minor;
        v->manager_ctx = ctx;
        v->deleter = deleter_versioned;
        v->flags = flags;
        t = &v->dl_tensor;
    } else {
        hrdl_managed *l = &b->m.l;
        l->manager_ctx = ctx;
        l->deleter = deleter_legacy;
        t = &l->dl_tensor;
    }
    int64_t *shape = b->dims;
    for (unsigned k = 0; k < d->rank; k++) {
        shape[k] = (int64_t)d->shape[k];
        shape[d->rank + k] = strides[k];
    }
    t->data = data;
    t->device.device_type = req->dl_type;
    t->device.device_id = req->dl_id;
    t->ndim = d->rank;
    t->dtype.code = info->dlpack_code;
    t->dtype.bits = info->dlpack_bits;
    t->dtype.lanes = 1;
    t->shape = d->rank ? shape : NULL; /* 0-d: NULL, as DLPack 1.2 and NumPy 2.4 */
    t->strides = d->rank ? shape + d->rank : NULL;
    t->byte_offset = 0; /* data is the first element: what every partner expects */
    PyObject *capsule = PyCapsule_New(
        &b->m, req->versioned ? capsule_versioned : capsule_legacy, capsule_destructor);
    if (capsule != NULL && PyCapsule_SetContext(capsule, b) == 0) return capsule;
    if (capsule != NULL) {
        /* Unreachable in practice (SetContext fails only on an invalid capsule);
         * the destructor, with no context, releases nothing: do it here. */
        PyCapsule_SetDestructor(capsule, NULL);
        Py_DECREF(capsule);
    }
    block_delete(b);
    block_unref(b);
    return NULL;
}

/* One element copied; the common sizes are spelled out so that each memcpy
 * is inlined. */
static inline void copy_elem(char *dst, const char *src, size_t n) {
    switch (n) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, n); break;
    }
}

/* The elements of a non-empty strided tensor (element strides of any sign,
 * element 0 at `first`) copied in C order to `dst`: a compact row-major tensor
 * of the same shape and values. An odometer over the outer dimensions; the
 * innermost is one memcpy where it is contiguous. */
static void gather_row_major(char *dst, const char *first, unsigned rank, const uint64_t *shape,
                             const int64_t *strides, size_t itemsize) {
    uint64_t idx[HURRAY_MAX_RANK] = {0};
    int64_t off = 0; /* bytes from `first` to the current row's first element */
    const unsigned last = rank - 1u;
    const uint64_t n = shape[last];
    const int64_t step = strides[last] * (int64_t)itemsize;
    for (;;) {
        if (step == (int64_t)itemsize) {
            memcpy(dst, first + off, (size_t)n * itemsize);
            dst += n * itemsize;
        } else {
            int64_t o = off;
            for (uint64_t i = 0; i < n; i++, o += step, dst += itemsize)
                copy_elem(dst, first + o, itemsize);
        }
        int k = (int)last - 1;
        for (; k >= 0; k--) {
            off += strides[k] * (int64_t)itemsize;
            if (++idx[k] < shape[k]) break;
            off -= strides[k] * (int64_t)itemsize * (int64_t)shape[k];
            idx[k] = 0;
        }
        if (k < 0) return;
    }
}

/* Why an export must be a copy (docs/spec/dlpack.md § Layouts partners can
 * take, § to_torch's copy). */
enum { NEED_NONE, NEED_NEG_STRIDE, NEED_READ_ONLY };

static PyObject *export_capsule(hrpy_state *st, PyObject *self, PyObject *stream,
                                PyObject *dl_device, struct export_req *req) {
    const char *who = req->who;
    const struct hurray_descriptor *d = NULL;
    PyObject *device = NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    if (!hrpy_tensor_peek(st, self, &d, &device)) {
        PyErr_Format(PyExc_TypeError, "%s: not a hurray.Tensor", who);
        return NULL;
    }
    uint8_t tag, memory_class;
    int32_t device_id = 0, own_type = 0;
    (void)hrpy_device_tags(st, device, &tag, &memory_class, &device_id);
    int status = hurray_device_to_dlpack(d->device, d->memory_class, &own_type, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    const struct hurray_dtype_info *info = NULL;
    if (check_exportable(d, req, &info) < 0) return NULL;
    if (resolve_dl_device(dl_device, own_type, device_id, req) < 0) return NULL;
    if (stream != NULL && stream != Py_None &&
        hrpy_check_stream("__dlpack__", req->dl_type, stream) < 0)
        return NULL;
    if (d->device != HURRAY_DEVICE_CPU && !dlpack_origin(st, self)) {
        const char *kind = hurray_device_name(d->device);
        PyErr_Format(PyExc_BufferError,
                     "%s: the tensor declares device '%s' but its buffer is host memory "
                     "(borrowed through the buffer protocol, allocated by the binding, or read "
                     "from a file or stream), not memory of that device; only device memory "
                     "received through DLPack is exported",
                     who, kind ? kind : "?");
        return NULL;
    }
    struct hrpy_part p0;
    if (hrpy_tensor_part(st, self, 0, &p0) < 0) return NULL;
    int64_t strides[HURRAY_MAX_RANK], neg = 0;
    uint64_t span = 0, count = 1;
    if (export_geometry(d, info, strides, &neg, NULL) < 0) return NULL;
    for (unsigned k = 0; k < d->rank; k++) count = d->shape[k] == 0 ? 0 : count * d->shape[k];
    /* § Layouts partners can take: no negative stride ever leaves in a capsule.
     * Where no element is reached through it (an extent of 0 or 1, or a tensor
     * without elements) it is written as 0, which names the same elements; a
     * negative stride that matters makes the export a row-major copy. */
    int neg_dim = -1;
    for (unsigned k = 0; k < d->rank; k++) {
        if (strides[k] >= 0) continue;
        if (count != 0 && d->shape[k] > 1) {
            if (neg_dim < 0) neg_dim = (int)k;
        } else {
            strides[k] = 0;
        }
    }
    /* Read-only means something only where there is an element to write. */
    int readonly = p0.readonly && count != 0;
    int need = neg_dim >= 0                  ? NEED_NEG_STRIDE
               : readonly && req->for_torch ? NEED_READ_ONLY
                                            : NEED_NONE;
    if (need != NEED_NONE && req->copy == 0) {
        if (need == NEED_NEG_STRIDE)
            PyErr_Format(st->BufferError,
                         "%s: negative stride in dimension %d (%lld elements); PyTorch cannot "
                         "take a negative stride (its DLPack import aborts the process), so "
                         "the binding exports such a layout only as a row-major copy, and "
                         "copy=False forbids it",
                         who, neg_dim, (long long)strides[neg_dim]);
        else
            PyErr_Format(st->BufferError,
                         "%s: the buffer is read-only and PyTorch ignores DLPack's READ_ONLY "
                         "flag (a write through the torch tensor would reach read-only "
                         "memory), so read-only data goes to torch only as a copy, and "
                         "copy=False forbids it",
                         who);
        return NULL;
    }
    char *first = p0.ptr == NULL ? NULL : (char *)p0.ptr + d->byte_offset;
    if (need == NEED_NONE && req->copy != 1) {
        if (readonly && !req->versioned) {
            PyErr_Format(PyExc_BufferError,
                         "%s: the buffer is read-only and the legacy capsule (no max_version) "
                         "has no flag to say so; ask for max_version >= (1, 0), or pass "
                         "copy=True",
                         who);
            return NULL;
        }
        uint64_t flags = p0.readonly ? HRDL_FLAG_READ_ONLY : 0;
        return make_capsule(d, info, req, first, strides, flags, Py_NewRef(self));
    }
    if (!host_accessible(own_type)) {
        const char *kind = hurray_device_name(d->device);
        PyErr_Format(PyExc_BufferError,
                     "%s: %s, and the binding cannot copy memory of device '%s'", who,
                     need == NEED_NEG_STRIDE ? "a negative stride needs a row-major copy"
                     : need == NEED_READ_ONLY ? "read-only data needs a copy"
                                              : "copy=True",
                     kind ? kind : "?");
        return NULL;
    }
    void *data = NULL;
    uint8_t log2 = 0;
    if (need != NEED_NEG_STRIDE) { /* the bytes the elements span, same strides */
        int64_t same[HURRAY_MAX_RANK];
        if (export_geometry(d, info, same, &neg, &span) < 0) return NULL;
        PyObject *owned = hrpy_owned_new(st, span, 0, &data, &log2);
        if (owned == NULL) return NULL;
        if (span != 0) copy_bytes(data, first + neg, span);
        return make_capsule(d, info, req, (char *)data - neg, strides, HRDL_FLAG_IS_COPIED,
                            owned);
    }
    /* a negative stride: the elements in C order (count > 0, strided layout of
     * a byte-addressable type; count * itemsize is bounded by HR-SHAPE-3) */
    size_t itemsize = info->bits / 8u;
    uint64_t nbytes = count * itemsize;
    PyObject *owned = hrpy_owned_new(st, nbytes, 0, &data, &log2);
    if (owned == NULL) return NULL;
    if (nbytes < NOGIL_BYTES) {
        gather_row_major(data, first, d->rank, d->shape, strides, itemsize);
    } else {
        Py_BEGIN_ALLOW_THREADS
        gather_row_major(data, first, d->rank, d->shape, strides, itemsize);
        Py_END_ALLOW_THREADS
    }
    int64_t s = 1;
    for (unsigned j = d->rank; j-- > 0;) {
        strides[j] = s;
        s *= (int64_t)d->shape[j];
    }
    return make_capsule(d, info, req, data, strides, HRDL_FLAG_IS_COPIED, owned);
}

/* __dlpack__'s keywords by the interned names consumers pass (the caller's strings are the
 * interpreter's interned ones when it interned them too, as NumPy and the compiler do): 1 and
 * a[] bound when every keyword is one of them, each once, and nothing is positional; 0 for
 * anything else, which hrpy_bind then binds or refuses in its own words. */
static int bind_dlpack_interned(hrpy_state *st, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames, PyObject **a) {
    for (int j = 0; j < 4; j++) a[j] = NULL;
    if (PyVectorcall_NARGS(nargs) != 0) return 0;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int j = 0;
        while (j < 4 && key != st->dlpack_obj[O_KW_FIRST + j]) j++;
        if (j == 4 || a[j] != NULL) return 0;
        a[j] = args[k];
    }
    return 1;
}

/* max_version as consumers pass it, (1, 0) (NumPy 2) or (1, 1): an exact tuple whose items
 * are the interpreter's objects for the ints 1 and 0 or 1. CPython keeps one object per small
 * int, and an int never changes, so the identity test is a value test; any other object
 * (another value, an int subclass, a tuple subclass, an int that is not the shared one) gives 0
 * and parse_max_version decides, by the same rule: major 1 is versioned, the minor capped at
 * ours. */
_Static_assert(HRDL_MAJOR == 1, "max_version_common reads major 1 as this major");
static int max_version_common(hrpy_state *st, PyObject *obj, struct export_req *req) {
    if (!PyTuple_CheckExact(obj) || PyTuple_GET_SIZE(obj) != 2) return 0;
    PyObject *one = st->dlpack_obj[O_INT1], *minor = PyTuple_GET_ITEM(obj, 1);
    if (PyTuple_GET_ITEM(obj, 0) != one) return 0;
    uint32_t m;
    if (minor == st->dlpack_obj[O_INT0]) m = 0;
    else if (minor == one) m = 1;
    else return 0;
    req->versioned = 1;
    req->minor = m > HRDL_MINOR ? HRDL_MINOR : m;
    return 1;
}

PyObject *hrpy_tensor_dlpack(PyObject *self, PyTypeObject *cls, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *a[4];
    hrpy_state *st = PyType_GetModuleState(cls);
    struct export_req req = {.who = "__dlpack__"};
    if (!bind_dlpack_interned(st, args, nargs, kwnames, a) &&
        hrpy_bind("__dlpack__", args, nargs, kwnames, dlpack_names, 4, 0, 0, a) < 0)
        return NULL;
    if (a[1] != NULL && a[1] != Py_None && max_version_common(st, a[1], &req)) {
        /* versioned, minor set */
    } else if (parse_max_version(a[1], &req) < 0) {
        return NULL;
    }
    if (copy_arg(a[3], &req.copy) < 0) return NULL;
    return export_capsule(st, self, a[0], a[2], &req);
}

PyObject *hrpy_tensor_dlpack_device(PyObject *self, PyTypeObject *cls, PyObject *const *args,
                                    Py_ssize_t nargs, PyObject *kwnames) {
    hrpy_state *st = PyType_GetModuleState(cls);
    const struct hurray_descriptor *d = NULL;
    PyObject *device = NULL;
    if ((PyVectorcall_NARGS(nargs) != 0 || kwnames != NULL) &&
        hrpy_bind("__dlpack_device__", args, nargs, kwnames, NULL, 0, 0, 0, NULL) < 0)
        return NULL; /* no arguments (the call every consumer makes) binds nothing */
    if (!hrpy_tensor_peek(st, self, &d, &device)) {
        PyErr_SetString(PyExc_TypeError, "__dlpack_device__: not a hurray.Tensor");
        return NULL;
    }
    uint8_t tag, memory_class;
    int32_t device_id = 0, dl = 0;
    (void)hrpy_device_tags(st, device, &tag, &memory_class, &device_id);
    struct hurray_error err;
    hurray_error_clear(&err);
    /* devices.md § Hurray -> DLPack: from the pair, never the raw tag (HR-DEV-5) */
    int status = hurray_device_to_dlpack(tag, memory_class, &dl, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    PyObject *pair = PyTuple_New(2);
    if (pair == NULL) return NULL;
    PyObject *type = PyLong_FromLong((long)dl);
    if (type == NULL) goto fail;
    PyTuple_SET_ITEM(pair, 0, type);
    PyObject *id = PyLong_FromLong((long)device_id);
    if (id == NULL) goto fail;
    PyTuple_SET_ITEM(pair, 1, id);
    return pair;
fail:
    Py_DECREF(pair);
    return NULL;
}

const char hrpy_doc_dlpack[] =
    "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n"
    "--\n\n"
    "A DLPack capsule over this tensor's buffer, without a copy; the tensor is kept\n"
    "alive until the consumer calls the deleter (or the unconsumed capsule is\n"
    "collected). max_version with major >= 1: 'dltensor_versioned' (DLPack 1.0/1.1,\n"
    "the consumer's minor capped at 1); None: the legacy 'dltensor' capsule.\n"
    "float8/6/4 need max_version >= (1, 1). BufferError for what DLPack cannot say\n"
    "(Tier 2 integers, quantized, non-dense layouts, buffers not producer_synced,\n"
    "read-only data on the legacy path, a stream on a stream-less device);\n"
    "UnsupportedError for devices DLPack has no type for. copy=True copies into a\n"
    "new aligned buffer (IS_COPIED). A negative stride never leaves in a capsule\n"
    "(PyTorch aborts on one): such a layout is exported as a row-major copy for\n"
    "copy=None or True, and copy=False raises BufferError naming the dimension.\n"
    "Read-only data sets READ_ONLY on a versioned capsule (PyTorch ignores it: use\n"
    "to_torch(), which copies read-only data).";

const char hrpy_doc_dlpack_device[] =
    "__dlpack_device__($self, /)\n--\n\n"
    "(DLDeviceType, device_id): the type from (device tag, memory class) through\n"
    "devices.md's table, the runtime device_id. UnsupportedError for ROCm unified,\n"
    "peer memory and private devices or memory classes.";

/* ==== consumer ============================================================================== */

typedef struct {
    PyObject_HEAD
    void *managed; /* hrdl_managed or hrdl_managed_versioned; NULL once released */
    int versioned;
} DLPackOwnerObject;

#define OWNER(o) ((DLPackOwnerObject *)(o))

static void owner_release(DLPackOwnerObject *o) {
    void *m = o->managed;
    o->managed = NULL;
    if (m == NULL) return;
    if (o->versioned) {
        hrdl_managed_versioned *v = m;
        if (v->deleter != NULL) v->deleter(v);
    } else {
        hrdl_managed *l = m;
        if (l->deleter != NULL) l->deleter(l);
    }
}

static void owner_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    owner_release(OWNER(self));
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *owner_get_version(PyObject *self, void *Py_UNUSED(c)) {
    const DLPackOwnerObject *o = OWNER(self);
    if (o->managed == NULL || !o->versioned) Py_RETURN_NONE;
    const hrdl_managed_versioned *v = o->managed;
    return Py_BuildValue("(kk)", (unsigned long)v->version.major, (unsigned long)v->version.minor);
}

static PyObject *owner_get_flags(PyObject *self, void *Py_UNUSED(c)) {
    const DLPackOwnerObject *o = OWNER(self);
    if (o->managed == NULL || !o->versioned) return PyLong_FromLong(0);
    return PyLong_FromUnsignedLongLong(((const hrdl_managed_versioned *)o->managed)->flags);
}

static PyGetSetDef owner_getset[] = {
    {"version", owner_get_version, NULL,
     PyDoc_STR("(major, minor) of a versioned capsule's tensor; None for a legacy one."), NULL},
    {"flags", owner_get_flags, NULL, PyDoc_STR("The versioned capsule's flags (0 for legacy)."),
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot owner_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "What a tensor from hurray.from_dlpack holds: the producer's managed tensor,\n"
                    "whose deleter it calls exactly once, when it is collected. Not constructible.")},
    {Py_tp_getset, owner_getset},
    {Py_tp_dealloc, owner_dealloc},
    {0, NULL},
};

static PyType_Spec owner_spec = {
    .name = "hurray._hurray.DLPackOwner",
    .basicsize = sizeof(DLPackOwnerObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = owner_slots,
};

/* a * b into *out; 0 on overflow. */
static int mul_i64(int64_t a, int64_t b, int64_t *out) {
#if defined(__GNUC__) || defined(__clang__)
    return !__builtin_mul_overflow(a, b, out);
#else
    if (a != 0 && (b > INT64_MAX / (a < 0 ? -a : a) || b < -(INT64_MAX / (a < 0 ? -a : a))))
        return 0;
    *out = a * b;
    return 1;
#endif
}

static int add_i64(int64_t a, int64_t b, int64_t *out) {
#if defined(__GNUC__) || defined(__clang__)
    return !__builtin_add_overflow(a, b, out);
#else
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return 0;
    *out = a + b;
    return 1;
#endif
}

/* The named type with this DLPack (code, bits); *packed_lanes > 1 for a
 * multi-lane byte of a sub-byte type (PyTorch's float4_e2m1fn_x2 is
 * (17, 4, 2): two packed values per element). NULL if none. */
static const struct hurray_dtype_info *dtype_from_dl(hrdl_dtype t, unsigned *packed_lanes) {
    *packed_lanes = 1;
    for (size_t i = 0; i < hurray_dtype_count(); i++) {
        const struct hurray_dtype_info *info = hurray_dtype_at(i);
        if (info->dlpack_code == HURRAY_DLPACK_NONE || info->dlpack_code != t.code ||
            info->dlpack_bits != t.bits)
            continue;
        if (t.lanes == 1) return info;
        if (t.lanes > 1 && info->bits % 8 != 0 && (unsigned)info->bits * t.lanes == 8u) {
            *packed_lanes = t.lanes;
            return info;
        }
        return NULL;
    }
    return NULL;
}

static PyObject *buffer_error(hrpy_state *st, const char *who, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (msg == NULL) return NULL;
    PyErr_Format(st->BufferError, "%s: %U", who, msg);
    Py_DECREF(msg);
    return NULL;
}

/* A plan for one DLTensor: the hurray tensor and the bytes it covers. */
struct import_plan {
    const struct hurray_dtype_info *info;
    uint8_t rank;
    uint64_t shape[HURRAY_MAX_RANK];
    uint8_t layout;
    int64_t strides[HURRAY_MAX_RANK]; /* element strides (strided) */
    char *lo;                         /* lowest byte */
    uint64_t nbytes;                  /* bytes from lo past the last element */
    uint64_t byte_offset;             /* first element - lo */
    uint8_t dev_tag, dev_class;
    int32_t dl_type, dl_id;
};

static int plan_import(hrpy_state *st, const hrdl_tensor *t, uint64_t flags, const char *who,
                       struct import_plan *p) {
    struct hurray_error err;
    hurray_error_clear(&err);
    /* Every scalar zeroed; shape is written up to rank and strides, read only for a strided
     * plan, for every dimension there: no memset of the kilobyte-sized plan per import. */
    p->info = NULL;
    p->rank = 0;
    p->layout = 0;
    p->lo = NULL;
    p->nbytes = 0;
    p->byte_offset = 0;
    p->dev_tag = p->dev_class = 0;
    p->dl_type = p->dl_id = 0;
    /* device (HR-DEV-7) */
    int status = hurray_device_from_dlpack(t->device.device_type, &p->dev_tag, &p->dev_class, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err), -1;
    if (t->device.device_id < 0)
        return buffer_error(st, who, "device_id %d is negative", (int)t->device.device_id), -1;
    p->dl_type = t->device.device_type;
    p->dl_id = t->device.device_id;
    /* element type */
    unsigned lanes = 1;
    p->info = dtype_from_dl(t->dtype, &lanes);
    if (p->info == NULL)
        return buffer_error(st, who,
                            "DLPack dtype (code %d, bits %d, lanes %d) has no hurray element type",
                            (int)t->dtype.code, (int)t->dtype.bits, (int)t->dtype.lanes),
               -1;
    int sub_byte = p->info->bits % 8 != 0;
    if (sub_byte && (flags & HRDL_FLAG_SUBBYTE_PADDED))
        return buffer_error(st, who,
                            "%s arrives padded (one element per byte); hurray stores sub-byte "
                            "types packed",
                            p->info->name),
               -1;
    /* shape */
    if (t->ndim < 0 || t->ndim > HURRAY_MAX_RANK)
        return buffer_error(st, who, "ndim %d is outside 0..%d", (int)t->ndim, HURRAY_MAX_RANK),
               -1;
    if (t->ndim > 0 && t->shape == NULL) return buffer_error(st, who, "shape is NULL"), -1;
    if (lanes > 1 && t->ndim == 0)
        return buffer_error(st, who, "a 0-d tensor of %d-lane %s has no hurray shape",
                            (int)lanes, p->info->name),
               -1;
    p->rank = (uint8_t)t->ndim;
    int64_t count = 1;
    for (int k = 0; k < t->ndim; k++) {
        if (t->shape[k] < 0)
            return buffer_error(st, who, "shape[%d] is negative (%lld)", k,
                                (long long)t->shape[k]),
                   -1;
        if (!mul_i64(count, t->shape[k], &count))
            return buffer_error(st, who, "the element count exceeds 2^63-1"), -1;
        p->shape[k] = (uint64_t)t->shape[k];
    }
    if (t->data == NULL && count != 0) return buffer_error(st, who, "data is NULL"), -1;
    /* layout from the strides (NULL: compact row-major, DLPack before 1.2) */
    int c_contig = 1, f_contig = 1;
    if (t->strides != NULL && count > 1) {
        int64_t expect = 1;
        for (int k = t->ndim - 1; k >= 0; k--) {
            if (t->shape[k] != 1 && t->strides[k] != expect) c_contig = 0;
            expect *= t->shape[k];
        }
        expect = 1;
        for (int k = 0; k < t->ndim; k++) {
            if (t->shape[k] != 1 && t->strides[k] != expect) f_contig = 0;
            expect *= t->shape[k];
        }
    }
    char *first = t->data == NULL ? NULL : (char *)t->data + t->byte_offset;
    if (sub_byte) {
        if (!c_contig)
            return buffer_error(st, who,
                                "packed %s data must be C-contiguous (DLPack does not say how "
                                "strides count packed elements)",
                                p->info->name),
                   -1;
        if (lanes > 1) p->shape[p->rank - 1] *= lanes; /* (n, m) x2 -> (n, 2m) values */
        uint64_t values = (uint64_t)count * lanes;
        status = hurray_buffer_size_bytes(p->info->tag, values, &p->nbytes, &err);
        if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err), -1;
        p->layout = HURRAY_LAYOUT_ROW_MAJOR;
        p->lo = first;
        return 0;
    }
    int64_t itemsize = p->info->bits / 8, total = 0;
    if (!mul_i64(count, itemsize, &total))
        return buffer_error(st, who, "the tensor's size exceeds 2^63-1 bytes"), -1;
    if (c_contig || f_contig) {
        p->layout = c_contig ? HURRAY_LAYOUT_ROW_MAJOR : HURRAY_LAYOUT_COL_MAJOR;
        p->lo = first;
        p->nbytes = (uint64_t)total;
        return 0;
    }
    /* strided: element strides; the buffer spans the lowest to the highest
     * byte the elements touch, byte_offset locates element 0 */
    int64_t neg = 0, pos = 0;
    for (int k = 0; k < t->ndim; k++) {
        p->strides[k] = t->strides[k];
        int64_t e;
        if (t->shape[k] < 2) continue;
        if (!mul_i64(t->strides[k], t->shape[k] - 1, &e) || !mul_i64(e, itemsize, &e) ||
            !add_i64(e < 0 ? neg : pos, e, e < 0 ? &neg : &pos))
            return buffer_error(st, who, "the strides reach past 2^63-1 bytes"), -1;
    }
    int64_t span;
    if (!add_i64(pos, -neg, &span) || !add_i64(span, itemsize, &span))
        return buffer_error(st, who, "the strides reach past 2^63-1 bytes"), -1;
    p->layout = HURRAY_LAYOUT_STRIDED;
    p->lo = first + neg;
    p->nbytes = (uint64_t)span;
    p->byte_offset = (uint64_t)(-neg);
    return 0;
}

/* Marks a capsule consumed; 0 / -1. */
static int mark_used(PyObject *capsule, int versioned) {
    return PyCapsule_SetName(capsule, versioned ? HRDL_CAPSULE_VERSIONED_USED
                                                : HRDL_CAPSULE_LEGACY_USED);
}

static void call_deleter(void *mt, int versioned) {
    if (versioned) {
        hrdl_managed_versioned *v = mt;
        if (v->deleter != NULL) v->deleter(v);
    } else {
        hrdl_managed *l = mt;
        if (l->deleter != NULL) l->deleter(l);
    }
}

/* One capsule into a Tensor. `producer_copied`: the producer was asked for a
 * copy (device memory, copy=True). */
static PyObject *ingest(hrpy_state *st, PyObject *capsule, int copy, int producer_copied,
                        const char *who) {
    int versioned = PyCapsule_IsValid(capsule, HRDL_CAPSULE_VERSIONED);
    if (!versioned && !PyCapsule_IsValid(capsule, HRDL_CAPSULE_LEGACY)) {
        const char *name = PyCapsule_GetName(capsule);
        PyErr_Clear();
        if (name != NULL && (strcmp(name, HRDL_CAPSULE_VERSIONED_USED) == 0 ||
                             strcmp(name, HRDL_CAPSULE_LEGACY_USED) == 0))
            return buffer_error(st, who, "the capsule was already consumed (named '%s')", name);
        return buffer_error(st, who,
                            "expected a DLPack capsule named 'dltensor_versioned' or "
                            "'dltensor', got %s%s%s",
                            name ? "'" : "", name ? name : "an unnamed capsule",
                            name ? "'" : "");
    }
    void *mt = PyCapsule_GetPointer(capsule, versioned ? HRDL_CAPSULE_VERSIONED
                                                       : HRDL_CAPSULE_LEGACY);
    if (mt == NULL) return NULL;
    const hrdl_tensor *t;
    uint64_t flags = 0;
    if (versioned) {
        const hrdl_managed_versioned *v = mt;
        if (v->version.major != HRDL_MAJOR) {
            /* Nothing else may be read; the deleter may (and must) be called. */
            unsigned major = v->version.major, minor = v->version.minor;
            if (mark_used(capsule, 1) < 0) return NULL;
            call_deleter(mt, 1);
            return buffer_error(st, who,
                                "the capsule is DLPack %u.%u; this binding reads major version "
                                "%u only",
                                major, minor, HRDL_MAJOR);
        }
        t = &v->dl_tensor;
        flags = v->flags;
    } else {
        t = &((const hrdl_managed *)mt)->dl_tensor;
    }
    struct import_plan p;
    if (plan_import(st, t, flags, who, &p) < 0) return NULL;
    /* A legacy capsule has no flag: writable, as PyTorch and CuPy read it (NumPy reads
     * it as read-only). Reading it as read-only would make every JAX array (JAX exports
     * only legacy capsules) a read-only tensor that the legacy path could then not give
     * back to JAX. */
    int readonly = versioned && (flags & HRDL_FLAG_READ_ONLY) != 0;
    int aligned = p.nbytes == 0 || ((uintptr_t)p.lo % HURRAY_MIN_BUFFER_ALIGNMENT) == 0;
    int host = host_accessible(p.dl_type);
    int fresh = (flags & HRDL_FLAG_IS_COPIED) != 0 || producer_copied;
    int need_copy = (copy == 1 && !fresh) || (copy == -1 && !aligned);
    if (copy == 0 && !aligned)
        return PyErr_Format(PyExc_ValueError,
                            "%s: the data at %p is not %d-byte aligned; sharing it needs "
                            "MIN_BUFFER_ALIGNMENT and copy=False forbids the copy",
                            who, (void *)p.lo, HURRAY_MIN_BUFFER_ALIGNMENT);
    if (need_copy && !host)
        return buffer_error(st, who,
                            "a copy is needed (%s) and the binding cannot copy memory of DLPack "
                            "device type %d; from_dlpack(x, copy=True) on the producing object "
                            "asks the producer for one",
                            aligned ? "copy=True" : "the data is not 64-byte aligned",
                            (int)p.dl_type);
    PyObject *device = NULL, *owner = NULL, *tensor = NULL;
    struct hrpy_part part;
    if (p.dev_tag == HURRAY_DEVICE_CPU && p.dev_class == HURRAY_MEM_STANDARD && p.dl_id == 0)
        device = Py_NewRef(st->cpu_device);
    else
        device = hrpy_device_new(st, p.dev_tag, p.dev_class, p.dl_id);
    if (device == NULL) goto error;
    if (need_copy) {
        void *data = NULL;
        uint8_t log2 = 0;
        owner = hrpy_owned_new(st, p.nbytes, 0, &data, &log2);
        if (owner == NULL) goto error;
        copy_bytes(data, p.lo, p.nbytes);
        part = (struct hrpy_part){data, p.nbytes, owner, 0, log2};
    } else {
        DLPackOwnerObject *o =
            (DLPackOwnerObject *)st->DLPackOwner_Type->tp_alloc(st->DLPackOwner_Type, 0);
        if (o == NULL) goto error;
        o->managed = NULL; /* armed only once the tensor is built */
        o->versioned = versioned;
        owner = (PyObject *)o;
        part = (struct hrpy_part){p.lo, p.nbytes, owner, readonly, -1};
    }
    struct hrpy_tensor_spec s;
    hrpy_tensor_spec_init(&s, st);
    s.dtype = p.info->tag;
    s.rank = p.rank;
    memcpy(s.shape, p.shape, sizeof p.shape[0] * p.rank);
    s.layout.tag = p.layout;
    if (p.layout == HURRAY_LAYOUT_STRIDED) s.layout.strides = p.strides; /* copied by the build */
    s.byte_offset = p.byte_offset;
    s.device = device;
    tensor = hrpy_tensor_build(st, &s, &part, 1);
    if (tensor == NULL) goto error;
    /* The owner exists and holds the struct: only now is the capsule consumed. */
    if (mark_used(capsule, versioned) < 0) goto error;
    if (need_copy) call_deleter(mt, versioned); /* the bytes are ours now */
    else OWNER(owner)->managed = mt;
    Py_DECREF(owner);
    Py_DECREF(device);
    return tensor;
error:
    Py_XDECREF(tensor);
    Py_XDECREF(owner);
    Py_XDECREF(device);
    return NULL;
}

/* The consumer of the Python specification: obj.__dlpack__(max_version=(1, 1))
 * (plus copy= for memory the binding cannot copy itself), then bare on
 * TypeError; a raw capsule is taken as it is. */
/* 1 and *out (a new reference) when obj has the attribute, 0 when it has not,
 * -1 on another error. */
static int optional_attr(PyObject *obj, PyObject *name, PyObject **out) {
#if PY_VERSION_HEX >= 0x030D0000
    return PyObject_GetOptionalAttr(obj, name, out);
#else
    *out = PyObject_GetAttr(obj, name);
    if (*out != NULL) return 1;
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
    return 0;
#endif
}

/* The module, imported on first use (ImportError when absent). */
static PyObject *import_lazily(PyObject *name) {
    PyObject *m = PyImport_GetModule(name);
    if (m == Py_None) Py_CLEAR(m); /* blocked: let the import machinery say so */
    if (m != NULL || PyErr_Occurred()) return m;
    return PyImport_Import(name);
}

/* A CUDA torch tensor's current stream, synchronised (so that its bytes are
 * producer_synced in fact): torch.cuda.current_stream(x.device).synchronize().
 * Nothing for other devices. 0 / -1. */
static int torch_sync_cuda(hrpy_state *st, PyObject *torch, PyObject *x) {
    PyObject *is_cuda = PyObject_GetAttr(x, st->dlpack_obj[O_IS_CUDA]);
    int cuda = is_cuda == NULL ? -1 : PyObject_IsTrue(is_cuda);
    Py_XDECREF(is_cuda);
    if (cuda <= 0) return cuda;
    PyObject *dev = PyObject_GetAttrString(x, "device");
    PyObject *tc = dev ? PyObject_GetAttrString(torch, "cuda") : NULL;
    PyObject *stream = tc ? PyObject_CallMethod(tc, "current_stream", "O", dev) : NULL;
    PyObject *r = stream ? PyObject_CallMethod(stream, "synchronize", NULL) : NULL;
    Py_XDECREF(r);
    Py_XDECREF(stream);
    Py_XDECREF(tc);
    Py_XDECREF(dev);
    return r == NULL ? -1 : 0;
}

/* PyTorch's lazy bits (docs/spec/dlpack.md § PyTorch's lazy negation and
 * conjugation): x.conj() of a complex tensor and x.conj().imag /
 * torch._neg_view(x) are views whose memory holds the values *before* the
 * conjugation or negation, with a bit on the tensor saying so. DLPack has no
 * such bit: torch refuses to export a conjugated tensor and exports a negated
 * one as its raw memory -- the wrong signs. When `obj` is a torch.Tensor (torch
 * is already imported: an object cannot be one otherwise) with either bit set,
 * *out becomes x.resolve_conj().resolve_neg(), a copy holding the true values
 * (its CUDA stream synchronised), and 1 is returned; copy=False forbids that
 * copy (ValueError naming the bit). 0 and *out = obj (a new reference) when
 * there is nothing to resolve; -1 on error. */
static int torch_resolve_bits(hrpy_state *st, PyObject *obj, int copy, const char *who,
                              PyObject **out) {
    static const struct {
        const char *test, *resolve, *what;
    } bits[] = {
        {"is_conj", "resolve_conj", "conjugation"},
        {"is_neg", "resolve_neg", "negation"},
    };
    *out = Py_NewRef(obj);
    /* the type found not to be torch's last time (NumPy's ndarray, in a loop of ingests):
     * a class that is not torch.Tensor's subclass never becomes one, and one created
     * before torch was imported cannot be one */
    if ((PyObject *)Py_TYPE(obj) == st->dlpack_obj[O_NOT_TORCH]) return 0;
    PyObject *torch = PyImport_GetModule(st->dlpack_obj[O_TORCH]);
    if (torch == NULL && PyErr_Occurred()) return -1;
    PyObject *cls = torch == NULL || torch == Py_None
                        ? NULL
                        : PyObject_GetAttr(torch, st->dlpack_obj[O_TENSOR]);
    int is = cls == NULL ? 0 : PyObject_IsInstance(obj, cls);
    Py_XDECREF(cls);
    if (cls == NULL) PyErr_Clear(); /* a blocked or half-imported torch: not a tensor of it */
    int resolved = 0;
    if (is == 0 && PyType_Check(cls = (PyObject *)Py_TYPE(obj)))
        Py_XSETREF(st->dlpack_obj[O_NOT_TORCH], Py_NewRef(cls));
    if (torch == NULL) return 0; /* not imported: obj cannot be a tensor of it */
    if (is < 0) goto error;
    for (size_t i = 0; is && i < sizeof bits / sizeof bits[0]; i++) {
        PyObject *r = PyObject_CallMethod(*out, bits[i].test, NULL);
        if (r == NULL) goto error;
        int set = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (set < 0) goto error;
        if (!set) continue;
        if (copy == 0) {
            PyErr_Format(PyExc_ValueError,
                         "%s: the torch tensor has PyTorch's lazy %s bit set (x.%s()): its "
                         "memory holds the values before the %s, and DLPack cannot say so; "
                         "resolving it (x.%s()) is a copy, and copy=False forbids it",
                         who, bits[i].what, bits[i].test, bits[i].what, bits[i].resolve);
            goto error;
        }
        PyObject *x = PyObject_CallMethod(*out, bits[i].resolve, NULL);
        if (x == NULL) goto error;
        Py_SETREF(*out, x);
        resolved = 1;
    }
    if (resolved && torch_sync_cuda(st, torch, *out) < 0) goto error;
    Py_DECREF(torch);
    return resolved;
error:
    Py_DECREF(torch);
    Py_CLEAR(*out);
    return -1;
}

static PyObject *no_dlpack(PyObject *obj, const char *who) {
    return PyErr_Format(PyExc_AttributeError,
                        "%s: %.100s has no __dlpack__ method and is not a DLPack capsule", who,
                        Py_TYPE(obj)->tp_name);
}

/* After obj.__dlpack__(...) raised AttributeError: the message above when obj has no
 * __dlpack__ at all, else the producer's own error, kept. NULL always. */
static PyObject *dlpack_attribute_error(hrpy_state *st, PyObject *obj, const char *who) {
    PyObject *meth = NULL;
    PyObject *exc = hrpy_take_exception();
    int has = optional_attr(obj, st->dlpack_obj[O_DLPACK], &meth);
    Py_XDECREF(meth);
    if (has == 1) {
        hrpy_restore_exception(exc);
        return NULL;
    }
    Py_XDECREF(exc);
    return has == 0 ? no_dlpack(obj, who) : NULL;
}

/* obj.__dlpack__(max_version=(1, 1)[, copy=...]) is called as a method (PyObject_
 * VectorcallMethod: no bound method object made per call); a missing __dlpack__ is told
 * apart from an AttributeError raised inside it only on that failure. */
static PyObject *from_object(hrpy_state *st, PyObject *obj, int copy, const char *who) {
    PyObject *meth = NULL, *devfn = NULL, *dev = NULL, *capsule = NULL, *result = NULL;
    int32_t dl_type = HURRAY_DL_CPU;
    /* The device decides one thing only: whether the producer is asked for the copy that
     * copy=True/False settles (docs/spec/dlpack.md § The consumer). copy=None asks for none,
     * so the call is made only when copy is given (after checking for __dlpack__). */
    if (copy != -1) {
        int has = optional_attr(obj, st->dlpack_obj[O_DLPACK], &meth);
        Py_CLEAR(meth);
        if (has <= 0) return has == 0 ? no_dlpack(obj, who) : NULL;
        has = optional_attr(obj, st->dlpack_obj[O_DLPACK_DEVICE], &devfn);
        if (has < 0) goto done;
        if (has) {
            int64_t type = 0, id = 0;
            dev = PyObject_CallNoArgs(devfn);
            if (dev == NULL || int_pair(dev, who, "__dlpack_device__()", &type, &id) < 0)
                goto done;
            dl_type = type < INT32_MIN || type > INT32_MAX ? 0 : (int32_t)type;
        }
    }
    /* Host memory is copied here when needed (to our alignment); device
     * memory only the producer can copy. */
    int ask_copy = !host_accessible(dl_type) && copy != -1;
    PyObject *call[3] = {obj, st->dlpack_obj[O_V11], copy == 1 ? Py_True : Py_False};
    capsule = PyObject_VectorcallMethod(st->dlpack_obj[O_DLPACK], call, 1,
                                        st->dlpack_obj[ask_copy ? O_KW_MAX_COPY : O_KW_MAX]);
    if (capsule == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        dlpack_attribute_error(st, obj, who);
        goto done;
    }
    if (capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        /* a producer from before DLPack 1.0's keywords (Python specification) */
        PyErr_Clear();
        ask_copy = 0;
        capsule = PyObject_VectorcallMethod(st->dlpack_obj[O_DLPACK], call, 1, NULL);
    }
    if (capsule == NULL) goto done;
    if (!PyCapsule_CheckExact(capsule)) {
        PyErr_Format(PyExc_TypeError, "%s: %.100s.__dlpack__() returned %.100s, not a capsule",
                     who, Py_TYPE(obj)->tp_name, Py_TYPE(capsule)->tp_name);
        goto done;
    }
    result = ingest(st, capsule, copy, ask_copy && copy == 1, who);
done:
    Py_XDECREF(devfn);
    Py_XDECREF(dev);
    Py_XDECREF(capsule);
    return result;
}

/* A capsule as it is; an object through its __dlpack__, a torch tensor's lazy
 * bits resolved first (a copy already: copy=True is then satisfied). */
static PyObject *from_dlpack_impl(hrpy_state *st, PyObject *obj, int copy, const char *who) {
    if (PyCapsule_CheckExact(obj)) return ingest(st, obj, copy, 0, who);
    /* an ndarray whose capsule would be taken as it is: the same tensor without the capsule
     * (hurray._numpy._from_dlpack_ndarray; NotImplemented sends it the general way) */
    int exact = copy == -1 ? hrpy_is_exact_ndarray(st, obj) : 0;
    if (exact < 0) return NULL;
    if (exact) {
        PyObject *r = hrpy_bridge_from_dlpack_ndarray(st, obj);
        if (r != Py_NotImplemented) return r;
        Py_DECREF(r);
    }
    PyObject *src = NULL;
    int resolved = torch_resolve_bits(st, obj, copy, who, &src);
    if (resolved < 0) return NULL;
    PyObject *r = from_object(st, src, resolved && copy == 1 ? -1 : copy, who);
    Py_DECREF(src);
    return r;
}

static PyObject *hrpy_from_dlpack(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
    static const char *const names[] = {"x", "copy"};
    PyObject *a[2];
    int copy = -1;
    if (hrpy_bind("from_dlpack", args, nargs, kwnames, names, 2, 1, 1, a) < 0) return NULL;
    if (copy_arg(a[1], &copy) < 0) return NULL;
    return from_dlpack_impl(hrpy_state_from_module(module), a[0], copy, "from_dlpack");
}

/* ==== PyTorch ================================================================================ */

/* from_torch(tensor, *, copy=None): tensor.__dlpack__() wrapped without a copy
 * (copy on ingest applies). A CUDA tensor's stream is synchronised first, so
 * the tensor is producer_synced in fact; a tensor with PyTorch's lazy
 * negation or conjugation bit is resolved first (a copy: torch_resolve_bits). */
static PyObject *hrpy_from_torch(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
    static const char *const names[] = {"tensor", "copy"};
    PyObject *a[2];
    hrpy_state *st = hrpy_state_from_module(module);
    int copy = -1;
    if (hrpy_bind("from_torch", args, nargs, kwnames, names, 2, 1, 1, a) < 0) return NULL;
    if (copy_arg(a[1], &copy) < 0) return NULL;
    PyObject *torch = import_lazily(st->dlpack_obj[O_TORCH]);
    if (torch == NULL) return NULL;
    PyObject *cls = PyObject_GetAttrString(torch, "Tensor");
    int ok = cls == NULL ? -1 : PyObject_IsInstance(a[0], cls);
    Py_XDECREF(cls);
    if (ok <= 0) {
        if (ok == 0)
            PyErr_Format(PyExc_TypeError, "from_torch: expected a torch.Tensor, not %.100s",
                         Py_TYPE(a[0])->tp_name);
        Py_DECREF(torch);
        return NULL;
    }
    int synced = torch_sync_cuda(st, torch, a[0]);
    Py_DECREF(torch);
    if (synced < 0) return NULL;
    return from_dlpack_impl(st, a[0], copy, "from_torch");
}

/* PyTorch 2.13 has no 4-bit element: it imports float4 only as
 * float4_e2m1fn_x2, DLPack (17, 4, lanes 2), one byte holding two packed
 * values (it refuses DLPack 1.1's (17, 4, 1)). The same packed bytes, so the
 * capsule we just made (ours, unconsumed) is re-described in place: the last
 * extent halved, lanes 2, C strides in bytes. Row-major with an even last
 * extent only; BufferError otherwise. Other element types: untouched. */
static int torch_float4_x2(hrpy_state *st, PyObject *capsule) {
    hrdl_managed_versioned *v = PyCapsule_GetPointer(capsule, HRDL_CAPSULE_VERSIONED);
    if (v == NULL) return -1;
    hrdl_tensor *t = &v->dl_tensor;
    const struct hurray_dtype_info *info = hurray_dtype_info(HURRAY_DTYPE_FLOAT4_E2M1FN);
    if (t->dtype.code != info->dlpack_code || t->dtype.bits != info->dlpack_bits ||
        t->dtype.lanes != 1)
        return 0;
    int n = t->ndim;
    int row_major = n > 0 && t->shape[n - 1] % 2 == 0;
    int64_t s = 1, count = 1;
    for (int k = 0; k < n; k++) count *= t->shape[k] == 0 ? 0 : 1;
    for (int k = n - 1; row_major && count != 0 && k >= 0; k--) { /* C-contiguous in values */
        if (t->shape[k] != 1 && t->strides[k] != s) row_major = 0;
        s *= t->shape[k];
    }
    if (!row_major) {
        buffer_error(st, "to_torch",
                     "PyTorch takes float4_e2m1fn only as float4_e2m1fn_x2 (two values a byte), "
                     "which needs a row_major tensor whose last extent is even");
        return -1;
    }
    t->dtype.lanes = 2;
    t->shape[n - 1] /= 2;
    s = 1;
    for (int k = n - 1; k >= 0; k--) {
        t->strides[k] = s;
        s *= t->shape[k];
    }
    return 0;
}

/* to_torch(*, copy=None): torch.utils.dlpack.from_dlpack of this tensor's
 * __dlpack__(max_version=(1, 1), copy=...) capsule, exported with PyTorch's
 * limits applied (docs/spec/dlpack.md § PyTorch): a negative stride and
 * read-only data make the export a copy -- PyTorch aborts the process on the
 * first and ignores DLPack's READ_ONLY flag on the second. copy=None shares
 * when that is safe and copies otherwise; True always copies; False never
 * does, and refuses (hurray.BufferError, naming the reason) where sharing is
 * not safe. Asking 1.1 on torch's behalf is what lets float8 through:
 * torch.from_dlpack itself asks for (1, 0). A buffer that is not
 * producer_synced is refused first with UnsupportedError (requirements § sync_mode). */
PyObject *hrpy_tensor_to_torch(PyObject *self, PyTypeObject *cls, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames) {
    static const char *const names[] = {"copy"};
    PyObject *a[1];
    hrpy_state *st = PyType_GetModuleState(cls);
    const struct hurray_descriptor *d = NULL;
    PyObject *device = NULL;
    struct export_req req;
    memset(&req, 0, sizeof req);
    if (hrpy_bind("to_torch", args, nargs, kwnames, names, 1, 0, 0, a) < 0) return NULL;
    if (copy_arg(a[0], &req.copy) < 0) return NULL;
    if (!hrpy_tensor_peek(st, self, &d, &device)) {
        PyErr_SetString(PyExc_TypeError, "to_torch: not a hurray.Tensor");
        return NULL;
    }
    PyObject *tud = import_lazily(st->dlpack_obj[O_TORCH_DLPACK]);
    if (tud == NULL) return NULL;
    for (unsigned i = 0; i < d->buffer_count; i++) {
        if (d->buffers[i].sync_mode == HURRAY_SYNC_PRODUCER_SYNCED) continue;
        const char *mode = hurray_sync_mode_name(d->buffers[i].sync_mode);
        char field[32];
        PyOS_snprintf(field, sizeof field, "buffers[%u].sync_mode", i);
        Py_DECREF(tud);
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_UNSUPPORTED, field,
                              "to_torch: buffer %u has sync_mode '%s'; the binding holds no "
                              "event or stream to wait on, so it hands out only producer_synced "
                              "bytes",
                              i, mode ? mode : "?");
    }
    req.versioned = 1;
    req.minor = HRDL_MINOR;
    req.who = "to_torch";
    req.for_torch = 1;
    PyObject *capsule = export_capsule(st, self, NULL, NULL, &req);
    if (capsule != NULL && torch_float4_x2(st, capsule) < 0) Py_CLEAR(capsule);
    PyObject *r = NULL;
    if (capsule != NULL) {
        PyObject *fn = PyObject_GetAttr(tud, st->dlpack_obj[O_FROM_DLPACK]);
        r = fn ? PyObject_CallOneArg(fn, capsule) : NULL;
        Py_XDECREF(fn);
        Py_DECREF(capsule);
    }
    Py_DECREF(tud);
    return r;
}

const char hrpy_doc_to_torch[] =
    "to_torch($self, /, *, copy=None)\n--\n\n"
    "torch.utils.dlpack.from_dlpack(self.__dlpack__(max_version=(1, 1), copy=copy))\n"
    "with PyTorch's limits applied: a torch tensor over the same memory (CPU or\n"
    "CUDA), every Tier 1 type and the float8s (float4 as float4_e2m1fn_x2).\n"
    "copy=None shares the memory when that is safe and copies otherwise: read-only\n"
    "data (a file mapped with load(mmap=True), a non-writeable ndarray, bytes, a\n"
    "READ_ONLY DLPack import) is copied, because PyTorch ignores DLPack's READ_ONLY\n"
    "flag, and a layout with a negative stride is copied to row-major, because\n"
    "PyTorch cannot take one. copy=True always copies (the torch tensor then holds\n"
    "only the copy, not this tensor); copy=False never copies and raises\n"
    "hurray.BufferError naming the reason where a copy would be needed. Imports\n"
    "torch (ImportError when absent). UnsupportedError for a buffer that is not\n"
    "producer_synced; BufferError for what DLPack or PyTorch cannot take.";

/* ==== module ================================================================================= */

static PyMethodDef dlpack_module_methods[] = {
    {"from_dlpack", (PyCFunction)(void (*)(void))hrpy_from_dlpack, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("from_dlpack($module, x, /, *, copy=None)\n--\n\n"
               "A Tensor over the memory of x (an object with __dlpack__, asked for\n"
               "max_version=(1, 1), or a 'dltensor' / 'dltensor_versioned' capsule),\n"
               "without a copy: it holds the producer's managed tensor and calls its deleter\n"
               "when the tensor and everything derived from it are gone. Strides map to\n"
               "row_major / col_major / strided; byte_offset is honoured; the READ_ONLY\n"
               "flag gives read-only buffers (a legacy capsule, which has no flags, gives\n"
               "writable ones). copy=None copies\n"
               "host memory that is not 64-byte aligned; True always copies; False raises\n"
               "ValueError where a copy is needed. A torch.Tensor with PyTorch's lazy\n"
               "negation or conjugation bit (x.is_neg(), x.is_conj()) is resolved first,\n"
               "which is a copy (ValueError for copy=False). BufferError for what hurray\n"
               "cannot represent or an already consumed capsule; UnsupportedError for a\n"
               "DLPack device type Hurray has no device for.")},
    {"from_torch", (PyCFunction)(void (*)(void))hrpy_from_torch, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("from_torch($module, tensor, /, *, copy=None)\n--\n\n"
               "tensor.__dlpack__() wrapped in a Tensor without a copy (the rules of\n"
               "from_dlpack). A CUDA tensor's current stream is synchronised first. A\n"
               "tensor with PyTorch's lazy negation or conjugation bit set (x.is_neg(),\n"
               "x.is_conj(): x.conj(), x.conj().imag, torch._neg_view(x)) holds the values\n"
               "before the negation or conjugation, which DLPack cannot say: it is resolved\n"
               "first (x.resolve_conj().resolve_neg(), a copy that does not keep x alive),\n"
               "and copy=False raises ValueError naming the bit. Imports torch\n"
               "(ImportError when absent).")},
    {NULL, NULL, 0, NULL},
};

int hrpy_dlpack_init(PyObject *module, hrpy_state *st) {
    st->DLPackOwner_Type = hrpy_add_type(module, &owner_spec, NULL);
    if (st->DLPackOwner_Type == NULL) return -1;
    static const char *const strs[] = {"__dlpack__", "__dlpack_device__"};
    for (int i = 0; i < 2; i++) {
        st->dlpack_obj[O_DLPACK + i] = PyUnicode_InternFromString(strs[i]);
        if (st->dlpack_obj[O_DLPACK + i] == NULL) return -1;
    }
    for (int i = 0; i < 4; i++)
        st->dlpack_obj[O_KW_FIRST + i] = PyUnicode_InternFromString(dlpack_names[i]);
    for (int i = 0; i < 4; i++)
        if (st->dlpack_obj[O_KW_FIRST + i] == NULL) return -1;
    /* the keyword names of the producer call, interned: NumPy's argument parser (and
     * CPython's) finds an interned name by identity, any other by a string comparison */
    st->dlpack_obj[O_KW_MAX] = PyTuple_Pack(1, st->dlpack_obj[O_KW_FIRST + 1]);
    st->dlpack_obj[O_KW_MAX_COPY] =
        PyTuple_Pack(2, st->dlpack_obj[O_KW_FIRST + 1], st->dlpack_obj[O_KW_FIRST + 3]);
    st->dlpack_obj[O_V11] = Py_BuildValue("(ii)", (int)HRDL_MAJOR, (int)HRDL_MINOR);
    st->dlpack_obj[O_INT0] = PyLong_FromLong(0);
    st->dlpack_obj[O_INT1] = PyLong_FromLong(1);
    st->dlpack_obj[O_TORCH] = PyUnicode_InternFromString("torch");
    st->dlpack_obj[O_TORCH_DLPACK] = PyUnicode_InternFromString("torch.utils.dlpack");
    st->dlpack_obj[O_FROM_DLPACK] = PyUnicode_InternFromString("from_dlpack");
    st->dlpack_obj[O_IS_CUDA] = PyUnicode_InternFromString("is_cuda");
    st->dlpack_obj[O_TENSOR] = PyUnicode_InternFromString("Tensor");
    for (int i = 0; i < O_COUNT; i++)
        if (st->dlpack_obj[i] == NULL) return -1;
    return PyModule_AddFunctions(module, dlpack_module_methods);
}
