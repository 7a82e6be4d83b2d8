/* hurray._hurray: the module object, its state and multi-phase initialisation.
 *
 * Each concept file (errors.c, dtype.c, device.c, layout.c, quant.c,
 * sections.c, descriptor.c, owned.c, tensor.c) contributes an init function
 * that makes its heap types and stores them in the state; this file only
 * wires them together, lists the module functions (factory.c's factories and
 * the NumPy forwarder among them) and adds the constants (requirements § Alignment is
 * measured / Constants). */
#include "state.h"

/* ---- state access -------------------------------------------------------- */

hrpy_state *hrpy_state_from_type(PyTypeObject *type) {
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *module = PyType_GetModuleByDef(type, &hrpy_module_def);
    if (module == NULL) return NULL;
    return hrpy_state_from_module(module);
#else
    /* 3.10 has no PyType_GetModuleByDef: walk the MRO for our heap type. */
    PyObject *mro = type->tp_mro;
    Py_ssize_t n = mro ? PyTuple_GET_SIZE(mro) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTypeObject *t = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
        if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE)) continue;
        PyObject *module = PyType_GetModule(t);
        if (module == NULL) {
            PyErr_Clear();
            continue;
        }
        if (PyModule_GetDef(module) == &hrpy_module_def) return hrpy_state_from_module(module);
    }
    PyErr_Format(PyExc_TypeError, "%s is not a hurray type", type->tp_name);
    return NULL;
#endif
}

int hrpy_traverse_type_only(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    return 0;
}

void hrpy_dealloc_simple(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

PyTypeObject *hrpy_add_type(PyObject *module, PyType_Spec *spec, PyObject *bases) {
    PyTypeObject *type = (PyTypeObject *)PyType_FromModuleAndSpec(module, spec, bases);
    if (type == NULL) return NULL;
    if (PyModule_AddType(module, type) < 0) {
        Py_DECREF(type);
        return NULL;
    }
    return type;
}

/* ---- module functions ------------------------------------------------------ */

static PyMethodDef module_methods[] = {
    {"buffer_size_bytes", (PyCFunction)(void (*)(void))hrpy_buffer_size_bytes,
     METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("buffer_size_bytes($module, /, dtype, count)\n--\n\n"
               "Bytes that hold `count` elements of `dtype`, sub-byte types packed\n"
               "(memory-layout.md § buffer_size_bytes): ceil(count * bits / 8).")},
    {"layout_tag_kind", (PyCFunction)hrpy_layout_tag_kind_py, METH_O,
     PyDoc_STR("layout_tag_kind($module, tag, /)\n--\n\n"
               "'named', 'reserved', 'private' or 'invalid' for a layout byte.")},
    {"decode_quantization", (PyCFunction)hrpy_decode_quantization, METH_O,
     PyDoc_STR("decode_quantization($module, data, /)\n--\n\n"
               "Decodes a standalone quantization section and returns the class its\n"
               "scheme byte names.")},
    {"zeros", (PyCFunction)(void (*)(void))hrpy_zeros, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("zeros($module, /, shape, dtype=None, *, layout=None)\n--\n\n"
               "A CPU tensor over a new buffer of zero bytes, aligned to at least\n"
               "MIN_BUFFER_ALIGNMENT; dtype None is hurray.float32.\n"
               "Every extent must be resolved (no None).\n"
               "float8_e8m0fnu has no zero: UnsupportedError.")},
    {"ones", (PyCFunction)(void (*)(void))hrpy_ones, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("ones($module, /, shape, dtype=None, *, layout=None)\n--\n\n"
               "full(shape, 1, dtype, layout=layout).")},
    {"empty", (PyCFunction)(void (*)(void))hrpy_empty, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("empty($module, /, shape, dtype=None, *, layout=None)\n--\n\n"
               "Like zeros, with the bytes left uninitialised.")},
    {"full", (PyCFunction)(void (*)(void))hrpy_full, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("full($module, /, shape, fill_value, dtype=None, *, layout=None)\n--\n\n"
               "Every element `fill_value`: bool, integers (range-checked, OverflowError),\n"
               "and every floating-point type by libhurray's encoder (element-types.md\n"
               "§ Encoding values): rounded once to nearest even (float8_e8m0fnu: ties up);\n"
               "OverflowError past a type's range (float6/float4 saturate instead),\n"
               "ValueError for a value a type has no encoding for (NaN or inf where it has\n"
               "none; zero or a negative as float8_e8m0fnu). complex64/128 encode both parts.\n"
               "Sub-byte types are packed, padding bits zero. Private types: UnsupportedError.")},
    {"from_numpy", (PyCFunction)(void (*)(void))hrpy_from_numpy, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("from_numpy($module, /, array, *, copy=None)\n--\n\n"
               "A Tensor sharing the ndarray's buffer (it holds the array alive).\n"
               "C-contiguous -> row_major, Fortran-contiguous -> col_major, other\n"
               "strides -> strided (element strides); a copy (row_major or col_major,\n"
               "aligned, little-endian) when the address is not 64-byte aligned, the\n"
               "data is big-endian or the strides are not whole elements. copy=True\n"
               "always copies, copy=False raises ValueError instead. Imports NumPy.")},
    {"from_scipy", (PyCFunction)(void (*)(void))hrpy_from_scipy, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("from_scipy($module, matrix, /, *, copy=None)\n--\n\n"
               "A coo / csr / csc Tensor over a SciPy sparse matrix or array (csr_*, csc_*,\n"
               "coo_*; the other formats are TypeError naming the conversion to call).\n"
               "nnz, shape and layout come from the matrix. The copy decision is per\n"
               "buffer: data is shared when 64-byte aligned; an index array is shared when\n"
               "it is int64 (or uint64), aligned and non-negative (the same bytes as the\n"
               "format's uint64), and copied (widened) otherwise -- SciPy's int32 indices\n"
               "always are, in the same pass as the index check. COO coords are shared only when they are rows of one (ndim, nnz)\n"
               "block (as to_scipy hands them out). copy=True copies every buffer;\n"
               "copy=False raises ValueError naming the buffer that needs a copy. The\n"
               "tensor holds the arrays it shares. Index contents are checked\n"
               "(memory-layout.md § Index contents: InvalidDescriptorError); unsorted and\n"
               "duplicate entries are kept as they are. When every index array was\n"
               "copied, the tensor's index buffers are hurray's own: read-only wherever\n"
               "they are handed out, and checked once (§ Checked once); shared ones stay\n"
               "the caller's and are checked again at every to_scipy. Imports NumPy.")},
    {"sparse_coo", (PyCFunction)(void (*)(void))hrpy_sparse_coo, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("sparse_coo($module, /, indices, values, shape, *, copy=None)\n--\n\n"
               "A coo Tensor from an (ndim, nnz) integer array of coordinates and nnz\n"
               "values (array-likes: numpy.asarray). nnz is derived; shape is required and\n"
               "every extent must be resolved (InvalidDescriptorError naming the index).\n"
               "Every coordinate must be below its extent (InvalidDescriptorError).\n"
               "Copies per buffer as from_scipy; copied indices are read-only and checked\n"
               "once, as there. Imports NumPy.")},
    {"asarray", (PyCFunction)(void (*)(void))hrpy_asarray, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("asarray($module, obj, /, *, copy=None)\n--\n\n"
               "The generic ingest entry point: a hurray.Tensor as is (copy=True: a copy of\n"
               "every buffer); an object with __hurray__ through hurray.from_hurray\n"
               "(the native protocol); a SciPy sparse matrix through from_scipy; a torch.Tensor\n"
               "through from_torch; a numpy.ndarray through from_numpy; another __dlpack__\n"
               "producer through from_dlpack; anything else through numpy.asarray, then\n"
               "from_numpy. copy follows the chosen path (None: copy only what must be\n"
               "copied; True: always; False: ValueError where a copy is needed).")},
    {"_error_class", (PyCFunction)(void (*)(void))hrpy_error_class_py,
     METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("_error_class($module, /, status, context='descriptor')\n--\n\n"
               "The exception class the binding raises for a C status name in a context\n"
               "('descriptor', 'file', 'stream'). For tests and diagnostics.")},
    {NULL, NULL, 0, NULL},
};

/* ---- exec ------------------------------------------------------------------ */

static int add_constants(PyObject *module) {
    PyObject *fmt = NULL;
    if (PyModule_AddIntConstant(module, "MIN_BUFFER_ALIGNMENT", HURRAY_MIN_BUFFER_ALIGNMENT) < 0)
        goto error;
    if (PyModule_AddIntConstant(module, "PAGE_ALIGNMENT", HURRAY_PAGE_ALIGNMENT) < 0) goto error;
    if (PyModule_AddIntConstant(module, "MAX_RANK", HURRAY_MAX_RANK) < 0) goto error;
    if (PyModule_AddStringConstant(module, "__version__", hurray_version_string()) < 0)
        goto error;
    fmt = Py_BuildValue("(ii)", HURRAY_FORMAT_MAJOR, HURRAY_FORMAT_MINOR);
    if (fmt == NULL) goto error;
    if (PyModule_AddObjectRef(module, "FORMAT_VERSION", fmt) < 0) goto error;
    Py_DECREF(fmt);
    return 0;
error:
    Py_XDECREF(fmt);
    return -1;
}

static int hrpy_exec(PyObject *module) {
    hrpy_state *st = hrpy_state_from_module(module);
    if (hrpy_errors_init(module, st) < 0) return -1;
    if (hrpy_dtype_init(module, st) < 0) return -1;
    if (hrpy_device_init(module, st) < 0) return -1;
    if (hrpy_layout_init(module, st) < 0) return -1;
    if (hrpy_quant_init(module, st) < 0) return -1;
    if (hrpy_sections_init(module, st) < 0) return -1;
    if (hrpy_descriptor_init(module, st) < 0) return -1;
    if (hrpy_owned_init(module, st) < 0) return -1;
    if (hrpy_tensor_init(module, st) < 0) return -1;
    if (hrpy_composite_init(module, st) < 0) return -1;
    if (hrpy_io_init(module, st) < 0) return -1;
    if (hrpy_lazy_init(module, st) < 0) return -1;
    if (hrpy_stream_init(module, st) < 0) return -1;
    if (hrpy_dlpack_init(module, st) < 0) return -1;
    if (hrpy_native_init(module, st) < 0) return -1;
    if (add_constants(module) < 0) return -1;
    return 0;
}

/* ---- GC of the state ------------------------------------------------------- */

#define STATE_OBJECTS(X, st)                                                                   \
    X((st)->HurrayError);                                                                      \
    X((st)->InvalidDescriptorError);                                                           \
    X((st)->UnsupportedError);                                                                 \
    X((st)->BufferError);                                                                      \
    X((st)->InternalError);                                                                    \
    X((st)->FileError);                                                                        \
    X((st)->StreamError);                                                                      \
    X((st)->StreamTimeoutError);                                                               \
    X((st)->file_os_error[0]);                                                                 \
    X((st)->file_os_error[1]);                                                                 \
    X((st)->file_os_error[2]);                                                                 \
    X((st)->file_os_error[3]);                                                                 \
    X((st)->file_os_error[4]);                                                                 \
    X((st)->file_os_error[5]);                                                                 \
    X((st)->Dtype_Type);                                                                       \
    X((st)->dtype_namespace);                                                                  \
    X((st)->Device_Type);                                                                      \
    X((st)->Statistics_Type);                                                                  \
    X((st)->Shard_Type);                                                                       \
    X((st)->Descriptor_Type);                                                                  \
    X((st)->BufferHandle_Type);                                                                \
    X((st)->Tensor_Type);                                                                      \
    X((st)->AlignedBuffer_Type);                                                               \
    X((st)->ByteView_Type);                                                                    \
    X((st)->Composite_Type);                                                                   \
    X((st)->ItemMemory_Type);                                                                  \
    X((st)->StreamReader_Type);                                                                \
    X((st)->StreamWriter_Type);                                                                \
    X((st)->File_Type);                                                                        \
    X((st)->FileSlice_Type);                                                                   \
    X((st)->StreamItem_Type);                                                                  \
    X((st)->DLPackOwner_Type);                                                                 \
    X((st)->NativeOwner_Type);                                                                 \
    X((st)->str_hurray);                                                                       \
    for (int i_ = 0; i_ < HRPY_DLPACK_OBJ_COUNT; i_++) X((st)->dlpack_obj[i_]);                \
    X((st)->cpu_device);                                                                       \
    X((st)->str_numpy_module);                                                                 \
    X((st)->str_numpy);                                                                        \
    X((st)->ndarray_type);                                                                     \
    for (int i_ = 0; i_ < 5; i_++) X((st)->ai_keys[i_]);                                       \
    for (int i_ = 0; i_ < HRPY_BRIDGE_COUNT; i_++) X((st)->str_bridge[i_]);                    \
    for (int i_ = 0; i_ < HRPY_BRIDGE_COUNT; i_++) X((st)->bridge_fn[i_]);                     \
    X((st)->np_module);                                                                        \
    for (int i_ = 0; i_ < 256; i_++) X((st)->typestr[i_]);                                     \
    for (int i_ = 0; i_ < 256; i_++) X((st)->dtype_by_tag[i_]);                                \
    for (int i_ = 0; i_ < HRPY_LAYOUT_CLASS_COUNT; i_++) X((st)->layout_types[i_]);            \
    for (int i_ = 0; i_ < HRPY_QUANT_CLASS_COUNT; i_++) X((st)->quant_types[i_])

static int hrpy_traverse(PyObject *module, visitproc visit, void *arg) {
    hrpy_state *st = hrpy_state_from_module(module);
    if (st == NULL) return 0;
    STATE_OBJECTS(Py_VISIT, st);
    return 0;
}

static int hrpy_clear(PyObject *module) {
    hrpy_state *st = hrpy_state_from_module(module);
    if (st == NULL) return 0;
    STATE_OBJECTS(Py_CLEAR, st);
    return 0;
}

static void hrpy_free(void *module) { (void)hrpy_clear((PyObject *)module); }

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)hrpy_exec},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
    /* Every object is immutable once built and the state is only written in
     * exec, so nothing here relies on the GIL. */
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

PyModuleDef hrpy_module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "hurray._hurray",
    .m_doc = PyDoc_STR("C extension of hurray: the Hurray format's object model over libhurray."),
    .m_size = sizeof(hrpy_state),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = hrpy_traverse,
    .m_clear = hrpy_clear,
    .m_free = hrpy_free,
};

PyMODINIT_FUNC PyInit__hurray(void);
PyMODINIT_FUNC PyInit__hurray(void) { return PyModuleDef_Init(&hrpy_module_def); }
