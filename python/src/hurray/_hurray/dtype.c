/* hurray.Dtype, the hurray.dtype namespace and buffer_size_bytes.
 * Seed § Dtype surface, § Buffer sizing, § Tier 2 and quantized types;
 * docs/spec/element-types.md.
 *
 * Every Dtype is a singleton made at module init from the C table
 * (hurray_dtype_at): one per named tag, and one per private tag 0xF0-0xFE.
 * The private ones are made eagerly rather than on first use so that the
 * state is never written after exec (the module declares Py_MOD_GIL_NOT_USED);
 * there are only fifteen. Dtype.from_tag / from_name return these objects, so
 * identity is equality: hurray.float32 is hurray.dtype.float32 is
 * Dtype.from_name("float32"). */
#include "state.h"

typedef struct {
    PyObject_HEAD
    uint8_t tag;
    const struct hurray_dtype_info *info; /* NULL for a private (extension) type */
} DtypeObject;

#define DTYPE(o) ((DtypeObject *)(o))

int hrpy_dtype_tag_of(hrpy_state *st, PyObject *obj, uint8_t *tag) {
    if (!Py_IS_TYPE(obj, st->Dtype_Type)) return 0;
    *tag = DTYPE(obj)->tag;
    return 1;
}

PyObject *hrpy_dtype_get(hrpy_state *st, uint8_t tag, const char *field) {
    PyObject *d = st->dtype_by_tag[tag];
    if (d != NULL) return d;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_dtype_check_tag(tag, field, &err);
    if (status == HURRAY_OK) /* the table and the tag kinds disagree: a bug */
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_INTERNAL, field,
                              "%s: no singleton for element type %s", field, HRPY_HEX(tag));
    return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
}

/* ---- class methods -------------------------------------------------------------- */

static PyObject *dtype_from_tag(PyObject *cls, PyObject *arg) {
    hrpy_state *st = hrpy_state_from_type((PyTypeObject *)cls);
    if (st == NULL) return NULL;
    uint64_t tag;
    if (hrpy_as_uint_max(arg, "tag", 0xFF, &tag) < 0) return NULL;
    return Py_XNewRef(hrpy_dtype_get(st, (uint8_t)tag, "dtype"));
}

static PyObject *dtype_from_name(PyObject *cls, PyObject *arg) {
    hrpy_state *st = hrpy_state_from_type((PyTypeObject *)cls);
    if (st == NULL) return NULL;
    Py_ssize_t len;
    const char *name = hrpy_as_str(arg, "name", &len);
    if (name == NULL) return NULL;
    uint8_t tag;
    if (hurray_dtype_from_name(name, (size_t)len, &tag) != HURRAY_OK)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_ARGUMENT, "dtype",
                              "unknown element type name %R (private types have no name: use "
                              "Dtype.from_tag)",
                              arg);
    return Py_XNewRef(hrpy_dtype_get(st, tag, "dtype"));
}

static PyObject *dtype_reduce(PyObject *self, PyObject *Py_UNUSED(ignored)) {
    /* Unpickles to the singleton: (Dtype.from_tag, (tag,)). */
    PyObject *from_tag = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "from_tag");
    if (from_tag == NULL) return NULL;
    PyObject *r = Py_BuildValue("(N(i))", from_tag, (int)DTYPE(self)->tag);
    return r;
}

static PyObject *dtype_copy(PyObject *self, PyObject *Py_UNUSED(ignored)) {
    return Py_NewRef(self);
}

static PyObject *dtype_deepcopy(PyObject *self, PyObject *Py_UNUSED(memo)) {
    return Py_NewRef(self);
}

static PyMethodDef dtype_methods[] = {
    {"from_tag", (PyCFunction)dtype_from_tag, METH_O | METH_CLASS,
     PyDoc_STR("from_tag($type, tag, /)\n--\n\n"
               "The singleton for an element-type byte. Reserved and invalid bytes raise\n"
               "InvalidDescriptorError; private bytes 0xF0-0xFE give the extension type.")},
    {"from_name", (PyCFunction)dtype_from_name, METH_O | METH_CLASS,
     PyDoc_STR("from_name($type, name, /)\n--\n\n"
               "The singleton for a canonical name or alias (float8_e4m3 -> float8_e4m3fn).")},
    {"__reduce__", dtype_reduce, METH_NOARGS, NULL},
    {"__copy__", dtype_copy, METH_NOARGS, NULL},
    {"__deepcopy__", dtype_deepcopy, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

/* ---- properties ---------------------------------------------------------------- */

static PyObject *dtype_get_name(PyObject *self, void *Py_UNUSED(closure)) {
    const struct hurray_dtype_info *info = DTYPE(self)->info;
    return PyUnicode_FromString(info ? info->name : "extension");
}

static PyObject *dtype_get_bit_width(PyObject *self, void *Py_UNUSED(closure)) {
    const struct hurray_dtype_info *info = DTYPE(self)->info;
    if (info == NULL) Py_RETURN_NONE; /* HR-DTYPE-4: part of the private agreement */
    return PyLong_FromLong(info->bits);
}

static PyObject *dtype_get_tier(PyObject *self, void *Py_UNUSED(closure)) {
    const struct hurray_dtype_info *info = DTYPE(self)->info;
    return PyLong_FromLong(info ? info->tier : 3);
}

static PyObject *dtype_get_tag(PyObject *self, void *Py_UNUSED(closure)) {
    return PyLong_FromLong(DTYPE(self)->tag);
}

/* closure = offset of the uint8 predicate in hurray_dtype_info */
static PyObject *dtype_get_flag(PyObject *self, void *closure) {
    const struct hurray_dtype_info *info = DTYPE(self)->info;
    if (info == NULL) Py_RETURN_FALSE;
    const uint8_t *flag = (const uint8_t *)info + (size_t)closure;
    return PyBool_FromLong(*flag);
}

#define FLAG(name, doc)                                                                        \
    {#name, dtype_get_flag, NULL, PyDoc_STR(doc),                                              \
     (void *)offsetof(struct hurray_dtype_info, name)}

static PyGetSetDef dtype_getset[] = {
    {"name", dtype_get_name, NULL, PyDoc_STR("Canonical name; 'extension' for private types."),
     NULL},
    {"bit_width", dtype_get_bit_width, NULL,
     PyDoc_STR("Bits per element, or None for a private extension type."), NULL},
    {"tier", dtype_get_tier, NULL,
     PyDoc_STR("1 standard numeric, 2 low-precision / sub-byte, 3 private extension."), NULL},
    {"tag", dtype_get_tag, NULL, PyDoc_STR("The element-type byte on the wire."), NULL},
    FLAG(is_float, "True for floating-point types (not complex)."),
    FLAG(is_integer, "True for integer types (not bool)."),
    FLAG(is_signed, "True for signed integers, signed floats and complex types."),
    FLAG(is_sub_byte, "True when bit_width < 8 (packed, memory-layout.md)."),
    FLAG(is_complex, "True for complex64 and complex128."),
    {NULL, NULL, NULL, NULL, NULL},
};

#undef FLAG

static PyObject *dtype_repr(PyObject *self) {
    const DtypeObject *d = DTYPE(self);
    if (d->info != NULL) return PyUnicode_FromFormat("hurray.%s", d->info->name);
    /* Seed § Dtype surface: the tag is all that tells two extension types apart. */
    return PyUnicode_FromFormat("hurray.Dtype(extension, tag=%s)", HRPY_HEX(d->tag));
}

static PyType_Slot dtype_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "An element type. Singletons: get them as hurray.float32,\n"
                    "hurray.dtype.int4, Dtype.from_name or Dtype.from_tag.")},
    {Py_tp_repr, dtype_repr},
    {Py_tp_methods, dtype_methods},
    {Py_tp_getset, dtype_getset},
    {Py_tp_traverse, hrpy_traverse_type_only},
    {Py_tp_dealloc, hrpy_dealloc_simple},
    {0, NULL},
};

static PyType_Spec dtype_spec = {
    .name = "hurray.Dtype",
    .basicsize = sizeof(DtypeObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = dtype_slots,
};

/* ---- buffer_size_bytes (requirements § Buffer sizing, HR-PACK-3) --------------------------- */

PyObject *hrpy_buffer_size_bytes(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
    static const char *const names[] = {"dtype", "count"};
    PyObject *a[2];
    if (hrpy_bind("buffer_size_bytes", args, nargs, kwnames, names, 2, 2, 2, a) < 0)
        return NULL;
    hrpy_state *st = hrpy_state_from_module(module);
    uint8_t tag;
    if (!hrpy_dtype_tag_of(st, a[0], &tag))
        return PyErr_Format(PyExc_TypeError, "dtype must be a hurray.Dtype, not %.100s",
                            Py_TYPE(a[0])->tp_name);
    uint64_t count, bytes;
    if (hrpy_as_u64(a[1], "count", &count) < 0) return NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_buffer_size_bytes(tag, count, &bytes, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    return PyLong_FromUnsignedLongLong(bytes);
}

/* ---- init ------------------------------------------------------------------------------- */

static PyObject *make_dtype(hrpy_state *st, uint8_t tag, const struct hurray_dtype_info *info) {
    DtypeObject *d = (DtypeObject *)st->Dtype_Type->tp_alloc(st->Dtype_Type, 0);
    if (d == NULL) return NULL;
    d->tag = tag;
    d->info = info;
    return (PyObject *)d;
}

int hrpy_dtype_init(PyObject *module, hrpy_state *st) {
    st->Dtype_Type = hrpy_add_type(module, &dtype_spec, NULL);
    if (st->Dtype_Type == NULL) return -1;

    for (size_t i = 0; i < hurray_dtype_count(); i++) {
        const struct hurray_dtype_info *info = hurray_dtype_at(i);
        st->dtype_by_tag[info->tag] = make_dtype(st, info->tag, info);
        if (st->dtype_by_tag[info->tag] == NULL) return -1;
    }
    for (unsigned tag = HURRAY_PRIVATE_FIRST; tag <= HURRAY_PRIVATE_LAST; tag++) {
        st->dtype_by_tag[tag] = make_dtype(st, (uint8_t)tag, NULL);
        if (st->dtype_by_tag[tag] == NULL) return -1;
    }

    /* hurray.dtype: every canonical name and alias (HR-DTYPE-3). */
    st->dtype_namespace = PyModule_New("hurray.dtype");
    if (st->dtype_namespace == NULL) return -1;
    if (PyModule_AddStringConstant(st->dtype_namespace, "__doc__",
                                   "Every element type by canonical name and alias.") < 0)
        return -1;
    for (size_t i = 0; i < hurray_dtype_count(); i++) {
        const struct hurray_dtype_info *info = hurray_dtype_at(i);
        if (PyModule_AddObjectRef(st->dtype_namespace, info->name,
                                  st->dtype_by_tag[info->tag]) < 0)
            return -1;
    }
    for (size_t i = 0; i < hurray_dtype_alias_count(); i++) {
        uint8_t tag = 0;
        const char *alias = hurray_dtype_alias_at(i, &tag);
        if (PyModule_AddObjectRef(st->dtype_namespace, alias, st->dtype_by_tag[tag]) < 0)
            return -1;
    }
    return PyModule_AddObjectRef(module, "dtype", st->dtype_namespace);
}
