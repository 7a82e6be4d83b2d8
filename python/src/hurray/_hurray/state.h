/* hurray._hurray: module state and the helpers every concept file shares.
 *
 * The extension is isolated (docs: CPython isolating-extensions): every type
 * is a heap type made with PyType_FromModuleAndSpec, every exception class and
 * singleton lives in the module state, and methods reach the state through
 * their defining class (METH_METHOD) or PyType_GetModuleByDef. Nothing is a
 * C global except constant tables. Owned locals start NULL and every function
 * that can fail has one `error:` label (goto-cleanup). */
#ifndef HRPY_STATE_H
#define HRPY_STATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "hurray/hurray.h"

#include "capi.h"

/* ---- contexts of the status -> exception table (errors.c) ---------------- */
enum hrpy_context {
    HRPY_CTX_DESCRIPTOR = 0, /* descriptors, layouts, quantization, dtypes, devices */
    HRPY_CTX_FILE = 1,       /* hurray.load / save (later phase) */
    HRPY_CTX_STREAM = 2,     /* StreamReader / StreamWriter (later phase) */
    HRPY_CTX_COUNT
};

/* Layout classes, one per row of the hierarchy (requirements § Layout Descriptor
 * Classes). HRPY_LAYOUT_BASE is the bare Layout a named-but-unbound tag gets. */
enum hrpy_layout_class {
    HRPY_LAYOUT_BASE = 0,
    HRPY_LAYOUT_ROW_MAJOR,
    HRPY_LAYOUT_COL_MAJOR,
    HRPY_LAYOUT_STRIDED,
    HRPY_LAYOUT_TILED,
    HRPY_LAYOUT_MORTON,
    HRPY_LAYOUT_HILBERT,
    HRPY_LAYOUT_COO,
    HRPY_LAYOUT_CSR,
    HRPY_LAYOUT_CSC,
    HRPY_LAYOUT_CSF,
    HRPY_LAYOUT_BLOCK_PAGED,
    HRPY_LAYOUT_COMPOSITE,
    HRPY_LAYOUT_PRIVATE,
    HRPY_LAYOUT_UNKNOWN,
    HRPY_LAYOUT_CLASS_COUNT
};

/* FileError subclasses by system error (errors.c). */
#define HRPY_FILE_OS_ERRORS 6

/* Quantization classes: index = scheme byte (0 = the base class). */
#define HRPY_QUANT_CLASS_COUNT 7

typedef struct {
    /* exceptions (requirements § Error Handling) */
    PyObject *HurrayError;
    PyObject *InvalidDescriptorError;
    PyObject *UnsupportedError;
    PyObject *BufferError;
    PyObject *InternalError;
    PyObject *FileError;
    PyObject *StreamError;
    PyObject *StreamTimeoutError; /* StreamError and TimeoutError: IO with ETIMEDOUT */
    /* FileError subclasses that are also the built-in OSError subclass for a system error
     * number (errors.c, file_os_errors: FileNotFoundError, PermissionError, ...) */
    PyObject *file_os_error[HRPY_FILE_OS_ERRORS];

    /* dtypes: one singleton per named or private tag, NULL for the others */
    PyTypeObject *Dtype_Type;
    PyObject *dtype_by_tag[256];
    PyObject *dtype_namespace; /* the hurray.dtype module object */

    PyTypeObject *Device_Type;

    PyTypeObject *layout_types[HRPY_LAYOUT_CLASS_COUNT];
    PyTypeObject *quant_types[HRPY_QUANT_CLASS_COUNT];

    PyTypeObject *Statistics_Type;
    PyTypeObject *Shard_Type;
    PyTypeObject *Descriptor_Type;
    PyTypeObject *BufferHandle_Type;

    PyTypeObject *Tensor_Type;
    PyTypeObject *AlignedBuffer_Type;
    PyTypeObject *ByteView_Type;
    PyObject *cpu_device;       /* Device('cpu'): shared, immutable */
    PyObject *str_numpy_module; /* "hurray._numpy" */
    PyObject *str_numpy;        /* "numpy" */
#define HRPY_BRIDGE_COUNT 9
    PyObject *str_bridge[HRPY_BRIDGE_COUNT]; /* hurray._numpy's functions (tensor.c bridge_names) */
    PyObject *bridge_fn[HRPY_BRIDGE_COUNT]; /* those functions, looked up once (NULL until used) */
    PyObject *np_module;        /* hurray._numpy, with its C API table (NULL until used) */
    const hrpy_np_capi *np_api;
    PyObject *ai_keys[5];       /* __array_interface__ keys, interned */
    PyObject *typestr[256];     /* "<f4", ... for the tags NumPy has; NULL otherwise */

    /* composites, items, files and streams (pycomposite.c, io.c, pystream.c) */
    PyTypeObject *Composite_Type;
    PyTypeObject *ItemMemory_Type;
    PyTypeObject *StreamReader_Type;
    PyTypeObject *StreamWriter_Type;
    PyTypeObject *File_Type;      /* lazy.c */
    PyTypeObject *FileSlice_Type; /* lazy.c */
    PyTypeObject *StreamItem_Type; /* a struct sequence (name, value, metadata) */

    /* DLPack (dlpack.c): the owner of an imported capsule's managed tensor, and
     * interned names, kwnames tuples, the (1, 1) max_version and the ints 0 and 1 */
    PyTypeObject *DLPackOwner_Type;
    /* the native protocol (native.c): what a tensor from from_hurray holds */
    PyTypeObject *NativeOwner_Type;
    PyObject *str_hurray; /* "__hurray__" */
#define HRPY_DLPACK_OBJ_COUNT 17
    PyObject *dlpack_obj[HRPY_DLPACK_OBJ_COUNT];
    /* the limits a producer's own tensor is validated against (tensor.c authoring_limits,
     * filled once at module init: not rebuilt per tensor) */
    struct hurray_limits authoring;
    PyObject *ndarray_type; /* numpy.ndarray, kept once seen (ingest.c hrpy_is_ndarray) */
} hrpy_state;

extern PyModuleDef hrpy_module_def;

/* State of the module that defined `type` (or one of its bases). Never NULL
 * for our own types; sets an exception and returns NULL otherwise. */
hrpy_state *hrpy_state_from_type(PyTypeObject *type);
static inline hrpy_state *hrpy_state_from_module(PyObject *module) {
    return (hrpy_state *)PyModule_GetState(module);
}

/* A variable-size instance of exactly n items. tp_alloc (PyType_GenericAlloc) makes room
 * for n + 1 (a sentinel our types never use): ask for n - 1 and set the size, so that an
 * object costs what its items need (a Tensor's buffer slots, a Descriptor's record). */
static inline PyObject *hrpy_alloc_var(PyTypeObject *type, Py_ssize_t n) {
    PyObject *obj = type->tp_alloc(type, n > 0 ? n - 1 : 0);
    if (obj != NULL) Py_SET_SIZE(obj, n);
    return obj;
}

/* Shared tp_traverse/tp_dealloc for instances that hold no references. */
int hrpy_traverse_type_only(PyObject *self, visitproc visit, void *arg);
void hrpy_dealloc_simple(PyObject *self);
/* Creates a type from `spec` with the module as its module, adds it to the
 * module under its short name, returns a new reference (NULL on error). */
PyTypeObject *hrpy_add_type(PyObject *module, PyType_Spec *spec, PyObject *bases);

/* ---- errors.c ------------------------------------------------------------ */
int hrpy_errors_init(PyObject *module, hrpy_state *st);
/* Raises the exception the table maps (status, context) to, carrying .code
 * (status name), .field and .offset from `err`. Always returns NULL. */
PyObject *hrpy_raise_status(hrpy_state *st, int context, int status,
                            const struct hurray_error *err);
/* Same, for a fault detected in the binding: the message is formatted here. */
PyObject *hrpy_raise_fmt(hrpy_state *st, int context, int status, const char *field,
                         const char *fmt, ...);
/* The class (borrowed) for (status, context). */
PyObject *hrpy_error_class(hrpy_state *st, int context, int status);
/* hurray._hurray._error_class(status_name, context="descriptor") */
PyObject *hrpy_error_class_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames);

/* ---- args.c: a tiny argument binder for METH_FASTCALL | METH_KEYWORDS ------
 * Binds positional and keyword arguments to `n` named slots (borrowed, NULL
 * when absent). At most `max_pos` positionally; the first `required` must be
 * given. Raises TypeError in Python's own wording otherwise. */
int hrpy_bind(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
              const char *const *names, Py_ssize_t n, Py_ssize_t max_pos, Py_ssize_t required,
              PyObject **out);
/* Same for tp_new's (tuple, dict). */
int hrpy_bind_tuple(const char *fname, PyObject *args, PyObject *kwargs,
                    const char *const *names, Py_ssize_t n, Py_ssize_t max_pos,
                    Py_ssize_t required, PyObject **out);

/* Integer conversions through __index__: TypeError for non-integers,
 * ValueError naming `what` when out of range. 0 on success, -1 on error. */
int hrpy_as_u64(PyObject *obj, const char *what, uint64_t *out);
int hrpy_as_i64(PyObject *obj, const char *what, int64_t *out);
int hrpy_as_uint_max(PyObject *obj, const char *what, uint64_t max, uint64_t *out);
/* A sequence (not str/bytes) of at most `max_len` items converted with the
 * converter above; *len receives the length. */
int hrpy_as_u64_array(PyObject *obj, const char *what, Py_ssize_t max_len, uint64_t *out,
                      Py_ssize_t *len);
int hrpy_as_i64_array(PyObject *obj, const char *what, Py_ssize_t max_len, int64_t *out,
                      Py_ssize_t *len);
/* A shape: ints >= 0 or None (dynamic); LIMIT past 64 dimensions, RANGE for
 * an extent outside [0, 2^63-1] (raised as InvalidDescriptorError). */
int hrpy_as_shape(hrpy_state *st, PyObject *obj, uint64_t *shape, uint8_t *rank);
/* Tuple of Python ints / None for a shape. */
PyObject *hrpy_shape_to_tuple(uint8_t rank, const uint64_t *shape);
/* Element count of a descriptor's shape as a Python int, or None when a dynamic
 * extent leaves it unknown (a zero extent makes it 0 regardless, HR-SHAPE-3).
 * Shared by Descriptor.size and Tensor.size. */
PyObject *hrpy_descriptor_size(hrpy_state *st, const struct hurray_descriptor *d);
/* A descriptor's optional sections as Python objects (None when absent). Shared by
 * Descriptor and Tensor, whose getters read the same struct. */
PyObject *hrpy_descriptor_quantization(hrpy_state *st, const struct hurray_descriptor *d);
PyObject *hrpy_descriptor_statistics(hrpy_state *st, const struct hurray_descriptor *d);
PyObject *hrpy_descriptor_shard(hrpy_state *st, const struct hurray_descriptor *d);
PyObject *hrpy_u64_tuple(const uint64_t *v, Py_ssize_t n);
PyObject *hrpy_i64_tuple(const int64_t *v, Py_ssize_t n);
/* `name` is a str: its UTF-8 bytes; otherwise TypeError naming `what`. */
const char *hrpy_as_str(PyObject *obj, const char *what, Py_ssize_t *len);

/* ---- dtype.c ------------------------------------------------------------- */
int hrpy_dtype_init(PyObject *module, hrpy_state *st);
/* The singleton for a named or private tag (borrowed), or raise. */
PyObject *hrpy_dtype_get(hrpy_state *st, uint8_t tag, const char *field);
/* 1 and *tag set if obj is a Dtype; 0 if not (no exception). */
int hrpy_dtype_tag_of(hrpy_state *st, PyObject *obj, uint8_t *tag);
PyObject *hrpy_buffer_size_bytes(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames);

/* ---- device.c ------------------------------------------------------------ */
int hrpy_device_init(PyObject *module, hrpy_state *st);
/* New Device; validates the pair through hurray_device_check. */
PyObject *hrpy_device_new(hrpy_state *st, uint8_t tag, uint8_t memory_class, int32_t device_id);
int hrpy_device_tags(hrpy_state *st, PyObject *obj, uint8_t *tag, uint8_t *memory_class,
                     int32_t *device_id);

/* ---- layout.c ------------------------------------------------------------ */
int hrpy_layout_init(PyObject *module, hrpy_state *st);
/* New Layout object of the right class for a C layout; `rank` is the rank of
 * the shape it goes with (kept only for rank-dependent layouts). Opaque bytes
 * are copied. */
PyObject *hrpy_layout_from_c(hrpy_state *st, const struct hurray_layout *layout, uint8_t rank);
/* Borrowed pointer to the C layout of a Layout object, and its parameter rank
 * (-1 when its parameters do not depend on rank); NULL if not a Layout. */
const struct hurray_layout *hrpy_layout_c(hrpy_state *st, PyObject *obj, int *param_rank);
PyObject *hrpy_layout_tag_kind_py(PyObject *module, PyObject *arg);
PyObject *hrpy_tag_kind_string(int kind);

/* ---- quant.c ------------------------------------------------------------- */
int hrpy_quant_init(PyObject *module, hrpy_state *st);
PyObject *hrpy_quant_from_c(hrpy_state *st, const struct hurray_quant *q);
const struct hurray_quant *hrpy_quant_c(hrpy_state *st, PyObject *obj);
PyObject *hrpy_decode_quantization(PyObject *module, PyObject *arg);
/* Renumbers the section's buffer indices to first, first+1, ... in section
 * order (HR-QUANT-3: positional after the layout's L buffers). */
void hrpy_quant_set_first_index(struct hurray_quant *q, uint8_t first);

/* ---- sections.c ---------------------------------------------------------- */
int hrpy_sections_init(PyObject *module, hrpy_state *st);
PyObject *hrpy_statistics_from_c(hrpy_state *st, const struct hurray_statistics *s);
PyObject *hrpy_shard_from_c(hrpy_state *st, const struct hurray_shard *s, uint8_t rank);
const struct hurray_statistics *hrpy_statistics_c(hrpy_state *st, PyObject *obj);
const struct hurray_shard *hrpy_shard_c(hrpy_state *st, PyObject *obj, uint8_t *rank);

/* ---- descriptor.c -------------------------------------------------------- */
int hrpy_descriptor_init(PyObject *module, hrpy_state *st);
/* New Descriptor owning a deep copy of `d` (which must be valid). */
PyObject *hrpy_descriptor_from_c(hrpy_state *st, const struct hurray_descriptor *d);
/* New Descriptor over the record `d` of an item tree that `owner` (an ItemMemory) keeps
 * alive: nothing copied. `device` NULL: made from the record. */
PyObject *hrpy_descriptor_borrow(hrpy_state *st, const struct hurray_descriptor *d,
                                 PyObject *owner, PyObject *device);
/* New Descriptor with an embedded, initialised record (its storage from
 * hrpy_raw_allocator) for the caller to fill through *record before anyone else sees
 * it, and no Device yet (hrpy_descriptor_set_device, once). */
PyObject *hrpy_descriptor_new_own(hrpy_state *st, struct hurray_descriptor **record);
int hrpy_descriptor_set_device(PyObject *desc, PyObject *device);
/* The record of a Descriptor (borrowed, alive with it). */
const struct hurray_descriptor *hrpy_descriptor_c(PyObject *desc);
/* The BufferHandle tuple for `d`, every handle sharing `device`. */
PyObject *hrpy_buffer_handles(hrpy_state *st, const struct hurray_descriptor *d,
                              PyObject *device);

/* Same, with the Descriptor's Device given (a Tensor's, which carries its
 * device_id), so that t.descriptor.device is t.device. */
PyObject *hrpy_descriptor_from_c_device(hrpy_state *st, const struct hurray_descriptor *d,
                                        PyObject *device);

/* ---- owned.c: owned aligned memory and byte views ---------------------------- */
int hrpy_owned_init(PyObject *module, hrpy_state *st);
/* log2 of the alignment hurray allocates a buffer of `size` bytes to. */
uint8_t hrpy_owned_align_log2(uint64_t size);
/* log2 of the largest power of two dividing ptr, capped at PAGE_ALIGNMENT;
 * 0 for an empty buffer (HR-BUF-2, HR-BUF-4). */
uint8_t hrpy_measure_align_log2(const void *ptr, uint64_t size);
/* A new AlignedBuffer of `size` bytes (zeroed if `zero`). */
PyObject *hrpy_owned_new(hrpy_state *st, uint64_t size, int zero, void **data,
                         uint8_t *align_log2);
/* memoryview over [data, data + size) that keeps `owner` alive. */
PyObject *hrpy_byteview_memoryview(hrpy_state *st, PyObject *owner, void *data, uint64_t size,
                                   int readonly);

/* ---- tensor.c ------------------------------------------------------------------ */
/* Everything a tensor declares except its buffers (which come as parts). */
struct hrpy_tensor_spec {
    uint8_t dtype;
    uint8_t rank;
    uint64_t shape[HURRAY_MAX_RANK];
    /* spans and opaque bytes borrowed (from layout_obj or the caller) for the call:
     * hrpy_tensor_build copies them into the tensor's descriptor record */
    struct hurray_layout layout;
    PyObject *layout_obj;        /* borrowed; NULL when the layout has no opaque bytes */
    const struct hurray_quant *quant;     /* NULL: none; indices re-derived from the layout */
    const struct hurray_statistics *stats; /* NULL: none */
    const struct hurray_shard *shard;     /* NULL: none */
    PyObject *device;            /* borrowed Device */
    uint64_t byte_offset;
};
int hrpy_tensor_init(PyObject *module, hrpy_state *st);
void hrpy_tensor_spec_init(struct hrpy_tensor_spec *s, hrpy_state *st);
/* Builds and validates (hurray_descriptor_validate) a Tensor over `n` parts. */
PyObject *hrpy_tensor_build(hrpy_state *st, const struct hrpy_tensor_spec *s,
                            const struct hrpy_part *parts, Py_ssize_t n);
/* The layout argument of Tensor and the factories: None -> row_major; a
 * Layout (its parameter rank checked against `rank`); TypeError otherwise
 * (strings included); UnsupportedError for a composite head. */
int hrpy_layout_arg(hrpy_state *st, PyObject *obj, uint8_t rank, const char *who,
                    struct hurray_layout *out, PyObject **opaque_owner);
/* A dynamic extent in a shape an allocating call needs resolved:
 * InvalidDescriptorError "who: shape[k] is dynamic (None)". */
int hrpy_refuse_dynamic(hrpy_state *st, const char *who, uint8_t rank, const uint64_t *shape);

/* ---- factory.c ------------------------------------------------------------------ */
PyObject *hrpy_zeros(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames);
PyObject *hrpy_ones(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames);
PyObject *hrpy_empty(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames);
PyObject *hrpy_full(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames);

/* ---- NumPy bridge (tensor.c): forwards to hurray._numpy, imported lazily ---- */
PyObject *hrpy_from_numpy(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
PyObject *hrpy_from_scipy(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
PyObject *hrpy_sparse_coo(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
/* hurray._numpy's `_asarray(obj, copy)`: an array-like through numpy.asarray, then from_numpy. */
PyObject *hrpy_bridge_asarray(hrpy_state *st, PyObject *obj, PyObject *copy);
/* hurray._numpy._save_view(array): the Tensor save stores for an ndarray (borrowed whatever
 * its address when contiguous and little-endian, else a compact copy; never leaves save). */
PyObject *hrpy_bridge_save_view(hrpy_state *st, PyObject *array);
/* hurray._numpy's save_plan (capi.h hrpy_np_capi) for `obj`: 1 filled, 0 not taken (take
 * hrpy_bridge_save_view), -1 error. Imports hurray._numpy and its table on first use. */
int hrpy_bridge_save_plan(hrpy_state *st, PyObject *obj, struct hrpy_save_plan *p);
/* Its prefetch hint (capi.h save_plan_prefetch), once the table is there; else nothing. */
void hrpy_bridge_save_plan_prefetch(hrpy_state *st, PyObject *obj);
/* hurray._numpy._from_dlpack_ndarray(array): a Tensor, or NotImplemented (a new reference). */
PyObject *hrpy_bridge_from_dlpack_ndarray(hrpy_state *st, PyObject *array);

/* ---- ingest.c: hurray.asarray ------------------------------------------------------- */
PyObject *hrpy_asarray(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames);

/* A one-byte tag as "0xF3" for PyUnicode_FromFormat / PyErr_Format, whose
 * formatter has no %02X: pass HRPY_HEX(tag) to a "%s". */
typedef struct {
    char s[5];
} hrpy_hex;
static inline hrpy_hex hrpy_hex_byte(unsigned v) {
    static const char digits[] = "0123456789ABCDEF";
    hrpy_hex h = {{'0', 'x', digits[(v >> 4) & 15], digits[v & 15], '\0'}};
    return h;
}
#define HRPY_HEX(v) (hrpy_hex_byte((unsigned)(v)).s)

/* ---- tensor.c: tensors read from streams and files, and the C view writers take ---- */
/* A Tensor over `n` parts with the decoded descriptor `d`: borrowed when `owner` (the
 * ItemMemory of the item tree `d` lives in) is given, which then must carry no member-role
 * section (a tensor has no role; its composite holds it: hrpy_item_to_object moves roles
 * out of the tree); else a deep copy with the role dropped. Alignment and sync modes are
 * kept as declared; the bytes are host memory whatever the device tag says. `take`: `d` is
 * the root of a tree that is dropped after the call; a tensor without buffers then moves the
 * record out of the tree into a block of its own (left initialised in the tree) and holds
 * nothing of the tree. */
PyObject *hrpy_tensor_from_c(hrpy_state *st, struct hurray_descriptor *d, PyObject *owner,
                             const struct hrpy_part *parts, Py_ssize_t n, int take);
/* The same for a tensor received through the native protocol (native.c): `decoded` was
 * decoded with hrpy_authoring_limits and hrpy_raw_allocator and is moved into the tensor
 * (left reset); the device carries `device_id`; the bytes are where the device tag says. */
PyObject *hrpy_tensor_from_native(hrpy_state *st, struct hurray_descriptor *decoded,
                                  const struct hrpy_part *parts, Py_ssize_t n,
                                  int32_t device_id);
/* Makes a new coo / csr / csc tensor's index buffers hurray's own: read-only slots, checked
 * once (memory-layout.md HR-LAYOUT-26); a no-op for other layouts. For memory hurray
 * allocated or read and no one else holds (files, streams, imported index arrays). */
void hrpy_tensor_seal_index(PyObject *tensor);
/* A Tensor without buffers over `own`, a record in a block of its own from PyMem_RawMalloc
 * (its storage from hrpy_raw_allocator), which it takes, also on failure: freed with the
 * tensor. The record must have no buffers and no member role; it is validated. */
PyObject *hrpy_tensor_adopt_record(hrpy_state *st, struct hurray_descriptor *own);
/* The limits a tensor the binding holds is validated against (tensor.c). */
const struct hurray_limits *hrpy_authoring_limits(struct hurray_limits *lim);
/* The descriptor of a Tensor (borrowed), or NULL without an exception if `obj` is not
 * one. *host: whether its bytes are CPU-addressable (device cpu, or read from a stream or
 * file). */
const struct hurray_descriptor *hrpy_tensor_c(hrpy_state *st, PyObject *obj, int *host);
/* Address of buffer `i` of a Tensor (NULL for an empty one). */
uint8_t *hrpy_tensor_data(PyObject *tensor, unsigned i);
/* The alignment (log2) a file declares for buffer i of a tensor: the tensor's declared
 * one, unless it was measured from a borrowed address; then the one an owned buffer of
 * that size declares (file-container.md § Declared alignment of saved buffers), so that
 * the bytes saved do not depend on where the source lived. -1: no such buffer. */
int hrpy_tensor_file_align_log2(PyObject *tensor, unsigned i);
/* "module.qualname" of obj's type ("torch.Tensor", "numpy.ndarray"; builtins bare), for
 * messages that must say which type; a new reference, NULL with an exception set. */
PyObject *hrpy_type_name(PyObject *obj);

/* ---- pycomposite.c: hurray.Composite and the bridge between objects and C items ---- */
int hrpy_composite_init(PyObject *module, hrpy_state *st);
/* A Tensor or Composite for a C item tree that `owner` (its ItemMemory) keeps valid:
 * buffers and descriptor records are borrowed from the tree, not copied; a Composite's
 * members are made from it when first needed. Roles move from member descriptors to the
 * composite (the records in the tree lose them). The caller drops `owner` next: a tensor
 * without buffers at the root takes its record out of the tree instead (hrpy_tensor_from_c)
 * and does not hold `owner`. */
PyObject *hrpy_item_to_object(hrpy_state *st, struct hurray_item *item, PyObject *owner,
                              int readonly);
/* An ItemMemory owning `item` (freed with hurray_item_destroy when the last object over its
 * buffers is gone); frees `item` on failure. */
PyObject *hrpy_item_memory_new(hrpy_state *st, struct hurray_item *item);
enum hrpy_item_mode {
    HRPY_ITEM_VALIDATE = 0, /* descriptors only (the composite validator) */
    HRPY_ITEM_STREAM = 1,   /* bytes are read: host-addressable tensors only */
    HRPY_ITEM_FILE = 2      /* and presented as host tensors (cpu, standard) */
};
/* A C item tree for a Tensor or Composite, borrowing its buffers, with every member's
 * descriptor as it presents to its parent (its role). `who` prefixes errors. */
int hrpy_item_build(hrpy_state *st, PyObject *obj, int mode, const char *who,
                    struct hurray_item **out);
void hrpy_item_release(struct hurray_item *item);
/* The file item of a save plan: one block holding the item, its descriptor (every span
 * borrowed from the block: no storage of its own), its buffer and shape, built as
 * tensor_seal builds a Tensor's record (version, cpu/standard, producer_synced) and not
 * validated here: the writer's validation is its one check. Released by hrpy_item_release;
 * the plan's bytes are borrowed (the caller keeps their owner alive). */
int hrpy_item_from_save_plan(const struct hrpy_save_plan *p, struct hurray_item **out);
/* The allocator readers are given: PyMem_Raw* (tracemalloc sees it; no GIL needed). */
extern const struct hurray_allocator hrpy_raw_allocator;

/* ---- pykv.c: KV maps <-> dicts ---------------------------------------------------- */
struct hrpy_kv_build {
    struct hurray_kv_entry *entries;
    size_t count;
    void **blocks; /* every array allocated for the map */
    size_t nblocks, cap;
    PyObject *keep; /* list: every object whose bytes the entries point into */
};
/* Converts a mapping of str -> bool/int/float/str/bytes/list (TypeError, OverflowError
 * for an int outside int64). Release with hrpy_kv_build_release, also on failure. */
int hrpy_kv_from_mapping(hrpy_state *st, PyObject *mapping, struct hrpy_kv_build *b);
void hrpy_kv_build_release(struct hrpy_kv_build *b);
PyObject *hrpy_kv_to_dict(hrpy_state *st, const struct hurray_kv *kv);
/* dict[key] = value for one decoded entry; -1 with an exception set. */
int hrpy_kv_entry_into(hrpy_state *st, PyObject *dict, const struct hurray_kv_entry *e);
/* The KV section of `f` as a dict, converted entry by entry while libhurray decodes it
 * (hurray_file_kv_each: the whole C map is never held next to the dict; the section is
 * read and validated with the GIL released). Errors raised in the file context naming
 * `path`; nothing partial is returned. */
struct hrpy_kv_each {
    hrpy_state *st;
    PyThreadState *save; /* non-NULL while the GIL is released */
    PyObject *dict;
};
/* Its hurray_kv_entry_fn (ctx: a struct hrpy_kv_each; save NULL when the GIL is held). */
int hrpy_kv_each_entry(void *ctx, const struct hurray_kv_entry *entry, size_t index,
                       size_t count);
PyObject *hrpy_kv_each(hrpy_state *st, struct hurray_file *f, PyObject *path);

/* ---- ingest.c: partner types without importing the partner ------------------------- */
/* sys.modules[name] (borrowed), or NULL without an exception when not imported. */
PyObject *hrpy_imported(const char *name);
/* isinstance(obj, module.attr) for an imported module; 0 when the module is not imported. */
int hrpy_instance_of(PyObject *obj, const char *module, const char *attr);
/* isinstance(obj, numpy.ndarray) by type (0 when NumPy is not imported); -1 on error. */
int hrpy_is_ndarray(hrpy_state *st, PyObject *obj);
/* type(obj) is numpy.ndarray exactly (0 when NumPy is not imported); -1 on error. */
int hrpy_is_exact_ndarray(hrpy_state *st, PyObject *obj);

/* ---- io.c: save, load, load_kv ------------------------------------------------------ */
int hrpy_io_init(PyObject *module, hrpy_state *st);
/* The limit keywords of every call that reads or writes a file (save, save_bytes, load,
 * load_bytes, load_kv, open), in this order: the fields of struct hurray_limits that a file
 * reader applies (hurray_limits_default). Written here only; a call's keyword table splices
 * it in, and hrpy_file_limit_names is the same list on its own. */
#define HRPY_FILE_LIMIT_KEYWORDS                                                               \
    "max_descriptor_bytes", "max_buffer_bytes", "max_rank", "max_composite_depth",             \
        "max_composite_members", "max_kv_entries", "max_kv_bytes", "max_name_bytes",           \
        "max_file_tensors"
#define HRPY_N_FILE_LIMITS 9
extern const char *const hrpy_file_limit_names[HRPY_N_FILE_LIMITS];
/* Reader limits from keyword values: names[i] is a field of struct hurray_limits
 * ("max_buffer_bytes", ...), vals[i] NULL or None for the default. Clamped. */
int hrpy_limits_from_args(PyObject *const *vals, const char *const *names, Py_ssize_t n,
                          struct hurray_limits *out);
/* What save stores for one value (new reference): a Tensor / Composite as it is, a
 * numpy.ndarray or torch.Tensor ingested under the copy rules (stored compactly); TypeError
 * naming `who` and the value's full type otherwise. save and StreamWriter.write share it. */
PyObject *hrpy_save_value(hrpy_state *st, PyObject *module, PyObject *obj, const char *who);
/* path: str, bytes or os.PathLike -> new bytes (TypeError naming `who`). */
PyObject *hrpy_io_path_arg(PyObject *obj, const char *who);
/* hurray_file_create_path with the GIL released; raises (file context) on failure. */
struct hurray_file *hrpy_io_open(hrpy_state *st, PyObject *path, int mode, int parts,
                                 const struct hurray_limits *limits);
/* Raises (status, file context), with errno/strerror/filename for a failed system call. */
PyObject *hrpy_io_raise_file(hrpy_state *st, int status, const struct hurray_error *err,
                             PyObject *path);

/* ---- lazy.c: hurray.open's handle (File) and its slices (FileSlice) ------------------ */
int hrpy_lazy_init(PyObject *module, hrpy_state *st);

/* ---- pystream.c: StreamReader, StreamWriter ---------------------------------------- */
int hrpy_stream_init(PyObject *module, hrpy_state *st);

/* The exception being raised, normalised (a new reference; NULL if none), and cleared;
 * and the way back (steals). PyErr_Fetch is deprecated from 3.12. */
static inline PyObject *hrpy_take_exception(void) {
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && tb != NULL) (void)PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
#endif
}
static inline void hrpy_restore_exception(PyObject *exc) {
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    if (exc == NULL) return;
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
#endif
}
/* Sets .errno on the exception being raised (file and stream errors with a system cause). */
static inline void hrpy_set_errno(int e) {
    PyObject *exc = hrpy_take_exception();
    PyObject *num = PyLong_FromLong(e);
    if (exc == NULL || num == NULL || PyObject_SetAttrString(exc, "errno", num) < 0) PyErr_Clear();
    Py_XDECREF(num);
    hrpy_restore_exception(exc);
}

/* ---- dlpack.c: DLPack producer and consumer, the PyTorch bridge ---------------------- */
int hrpy_dlpack_init(PyObject *module, hrpy_state *st);
/* Tensor methods (METH_METHOD | METH_FASTCALL | METH_KEYWORDS), listed in tensor.c's
 * method table through HRPY_DLPACK_TENSOR_METHODS. */
PyObject *hrpy_tensor_dlpack(PyObject *self, PyTypeObject *cls, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_tensor_dlpack_device(PyObject *self, PyTypeObject *cls, PyObject *const *args,
                                    Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_tensor_to_torch(PyObject *self, PyTypeObject *cls, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames);
extern const char hrpy_doc_dlpack[], hrpy_doc_dlpack_device[], hrpy_doc_to_torch[];
#define HRPY_DLPACK_TENSOR_METHODS                                                             \
    {"__dlpack__", (PyCFunction)(void (*)(void))hrpy_tensor_dlpack,                            \
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS, hrpy_doc_dlpack},                            \
        {"__dlpack_device__", (PyCFunction)(void (*)(void))hrpy_tensor_dlpack_device,          \
         METH_METHOD | METH_FASTCALL | METH_KEYWORDS, hrpy_doc_dlpack_device},                 \
        {"to_torch", (PyCFunction)(void (*)(void))hrpy_tensor_to_torch,                        \
         METH_METHOD | METH_FASTCALL | METH_KEYWORDS, hrpy_doc_to_torch},
/* docs/spec/dlpack.md § Stream parameter semantics for a tensor on DLPack device type
 * `dl_type` (0: a device DLPack has no type for: None or -1 only); `who` prefixes errors.
 * Shared by __dlpack__ and __hurray__ (native.c). 0 / -1. */
int hrpy_check_stream(const char *who, int32_t dl_type, PyObject *stream);

/* ---- native.c: the native protocol, __hurray__ and from_hurray (docs/spec/c-abi.md) ---- */
int hrpy_native_init(PyObject *module, hrpy_state *st);
PyObject *hrpy_tensor_hurray(PyObject *self, PyTypeObject *cls, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames);
extern const char hrpy_doc_hurray[];
#define HRPY_NATIVE_TENSOR_METHODS                                                             \
    {"__hurray__", (PyCFunction)(void (*)(void))hrpy_tensor_hurray,                            \
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS, hrpy_doc_hurray},

/* tensor.c, for dlpack.c: 1 if obj is a Tensor of this module, with its descriptor and
 * Device (both borrowed, alive with the tensor); 0 otherwise (no exception). */
/* The Descriptor object a Tensor holds (borrowed; a tensor read from a stream or file makes
 * it on first use), or NULL: without an exception if `obj` is not a Tensor, with one if
 * making it failed. */
PyObject *hrpy_tensor_descriptor_object(hrpy_state *st, PyObject *obj);
/* descriptor.c: the canonical bytes of a Descriptor object, encoded once and kept on it
 * (borrowed bytes); NULL with an exception set. */
PyObject *hrpy_descriptor_encoded(hrpy_state *st, PyObject *descriptor);
int hrpy_tensor_peek(hrpy_state *st, PyObject *obj, const struct hurray_descriptor **d,
                     PyObject **device);
/* Buffer `i` of a Tensor as a part: address, declared size, owner (borrowed; NULL for a
 * buffer-protocol export, which the tensor holds itself), read-only flag, alignment. */
int hrpy_tensor_part(hrpy_state *st, PyObject *obj, Py_ssize_t i, struct hrpy_part *out);

#endif
