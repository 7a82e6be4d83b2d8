/* The layout hierarchy (requirements § Layout Descriptor Classes; memory-layout.md,
 * block-paged.md).
 *
 *   hurray.Layout                 base: holds one C struct hurray_layout,
 *                                 whose rank-sized spans point at the object's
 *                                 own arrays
 *   ├── RowMajorLayout  ColMajorLayout
 *   ├── StridedLayout   TiledLayout   MortonLayout   HilbertLayout
 *   ├── CooLayout       CsrLayout     CscLayout      CsfLayout
 *   ├── BlockPagedLayout
 *   ├── CompositeLayout
 *   ├── PrivateExtensionLayout
 *   └── UnknownLayout
 *
 * The base implements tag, name, buffer_count, is_dense, is_virtual and
 * validate_against_shape once; subclasses are read-only façades over the same
 * struct. Every rule is libhurray's: names come from hurray_layout_name only
 * (HR-LAYOUT-4), parameter checks from hurray_layout_check_params and
 * hurray_layout_validate_against_shape, equality from hurray_layout_equal.
 *
 * Rank: a C layout does not store it (it is the shape's). The parameters of
 * strided, tiled and csf layouts have one entry per dimension, so those
 * objects know their rank ("param_rank"); for every other layout param_rank
 * is -1 and the parameters are rank-free. */
#include "state.h"

typedef struct {
    PyObject_HEAD
    struct hurray_layout c; /* its rank-sized spans point at the arrays below */
    int param_rank;   /* rank of the parameters, -1 when they do not depend on it */
    PyObject *opaque; /* bytes holding c.opaque (private, unknown), or NULL */
    int64_t strides[HURRAY_MAX_RANK];
    int64_t inner_strides[HURRAY_MAX_RANK];
    uint64_t tile_shape[HURRAY_MAX_RANK];
    uint64_t fiber_counts[HURRAY_MAX_RANK];
    uint8_t mode_order[HURRAY_MAX_RANK];
} LayoutObject;

#define LAYOUT(o) ((LayoutObject *)(o))

static int is_rank_dependent(uint8_t tag) {
    return tag == HURRAY_LAYOUT_STRIDED || tag == HURRAY_LAYOUT_TILED || tag == HURRAY_LAYOUT_CSF;
}

/* The class for a tag: the named variant, PrivateExtensionLayout for
 * 0xF0-0xFE, UnknownLayout for reserved tags, the bare Layout for a named tag
 * this build has no class for (requirements: "MUST NOT be reported as UnknownLayout"). */
static int class_for_tag(uint8_t tag) {
    switch (tag) {
    case HURRAY_LAYOUT_ROW_MAJOR: return HRPY_LAYOUT_ROW_MAJOR;
    case HURRAY_LAYOUT_COL_MAJOR: return HRPY_LAYOUT_COL_MAJOR;
    case HURRAY_LAYOUT_STRIDED: return HRPY_LAYOUT_STRIDED;
    case HURRAY_LAYOUT_TILED: return HRPY_LAYOUT_TILED;
    case HURRAY_LAYOUT_MORTON: return HRPY_LAYOUT_MORTON;
    case HURRAY_LAYOUT_HILBERT: return HRPY_LAYOUT_HILBERT;
    case HURRAY_LAYOUT_COO: return HRPY_LAYOUT_COO;
    case HURRAY_LAYOUT_CSR: return HRPY_LAYOUT_CSR;
    case HURRAY_LAYOUT_CSC: return HRPY_LAYOUT_CSC;
    case HURRAY_LAYOUT_CSF: return HRPY_LAYOUT_CSF;
    case HURRAY_LAYOUT_BLOCK_PAGED: return HRPY_LAYOUT_BLOCK_PAGED;
    case HURRAY_LAYOUT_COMPOSITE: return HRPY_LAYOUT_COMPOSITE;
    default:
        switch (hurray_layout_tag_kind(tag)) {
        case HURRAY_TAG_PRIVATE: return HRPY_LAYOUT_PRIVATE;
        case HURRAY_TAG_RESERVED: return HRPY_LAYOUT_UNKNOWN;
        case HURRAY_TAG_NAMED: return HRPY_LAYOUT_BASE;
        default: return -1;
        }
    }
}

/* "CsrLayout" for hurray.CsrLayout (and for a subclass, its own name). */
static const char *short_name(PyObject *self) {
    const char *name = Py_TYPE(self)->tp_name, *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

/* The C layout's spans borrow the object's own arrays (zeroed by tp_alloc). */
static void layout_point_spans(LayoutObject *self) {
    self->c.strides = self->strides;
    self->c.inner_strides = self->inner_strides;
    self->c.tile_shape = self->tile_shape;
    self->c.fiber_counts = self->fiber_counts;
    self->c.mode_order = self->mode_order;
}

static LayoutObject *layout_alloc(PyTypeObject *type, uint8_t tag) {
    LayoutObject *self = (LayoutObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    memset(&self->c, 0, sizeof self->c);
    self->c.tag = tag;
    layout_point_spans(self);
    self->param_rank = -1;
    self->opaque = NULL;
    return self;
}

/* n entries of a span (absent: left zero). */
static void copy_span(void *dst, const void *src, size_t n) {
    if (src != NULL && n > 0) memcpy(dst, src, n);
}

/* Takes ownership of `bytes` (a bytes object) as the opaque parameters. */
static void layout_set_opaque(LayoutObject *self, PyObject *bytes) {
    Py_XSETREF(self->opaque, bytes);
    self->c.opaque = (const uint8_t *)PyBytes_AS_STRING(bytes);
    self->c.opaque_len = (uint32_t)PyBytes_GET_SIZE(bytes);
}

PyObject *hrpy_layout_from_c(hrpy_state *st, const struct hurray_layout *layout, uint8_t rank) {
    int cls = class_for_tag(layout->tag);
    if (cls < 0)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_INVALID_TAG, "layout",
                              "layout: tag %s is invalid", HRPY_HEX(layout->tag));
    LayoutObject *self = layout_alloc(st->layout_types[cls], layout->tag);
    if (self == NULL) return NULL;
    size_t r = rank > HURRAY_MAX_RANK ? HURRAY_MAX_RANK : rank;
    self->c = *layout;
    layout_point_spans(self);
    copy_span(self->strides, layout->strides, r * sizeof(int64_t));
    copy_span(self->inner_strides, layout->inner_strides, r * sizeof(int64_t));
    copy_span(self->tile_shape, layout->tile_shape, r * sizeof(uint64_t));
    copy_span(self->fiber_counts, layout->fiber_counts, r ? (r - 1) * sizeof(uint64_t) : 0);
    copy_span(self->mode_order, layout->mode_order, r);
    self->c.opaque = NULL;
    self->c.opaque_len = 0;
    if (is_rank_dependent(layout->tag) || cls == HRPY_LAYOUT_BASE) self->param_rank = rank;
    if (cls == HRPY_LAYOUT_PRIVATE || cls == HRPY_LAYOUT_UNKNOWN) {
        PyObject *bytes = PyBytes_FromStringAndSize((const char *)layout->opaque,
                                                    (Py_ssize_t)layout->opaque_len);
        if (bytes == NULL) {
            Py_DECREF(self);
            return NULL;
        }
        layout_set_opaque(self, bytes);
    }
    return (PyObject *)self;
}

const struct hurray_layout *hrpy_layout_c(hrpy_state *st, PyObject *obj, int *param_rank) {
    if (!PyObject_TypeCheck(obj, st->layout_types[HRPY_LAYOUT_BASE])) return NULL;
    if (param_rank) *param_rank = LAYOUT(obj)->param_rank;
    return &LAYOUT(obj)->c;
}

/* Construction-time checks, all libhurray's: the parameters' own tags and
 * ranges (hurray_layout_check_params), and for layouts whose constraints do
 * not need extents (tiled, csf, block_paged) the tier-3 rules against an
 * all-dynamic shape of the parameters' rank, which no extent rule can fail
 * (HR-LAYOUT-50: "a dynamic extent never violates an extent constraint").
 * Steals `self`; returns it or NULL with the exception set. */
static PyObject *layout_finish(hrpy_state *st, LayoutObject *self) {
    struct hurray_error err;
    hurray_error_clear(&err);
    uint64_t dynamic[HURRAY_MAX_RANK];
    for (int k = 0; k < HURRAY_MAX_RANK; k++) dynamic[k] = HURRAY_DYNAMIC_DIM;
    uint8_t rank = self->param_rank > 0 ? (uint8_t)self->param_rank : 0;
    int status = hurray_layout_check_params(&self->c, rank, NULL, &err);
    if (status == HURRAY_OK && (is_rank_dependent(self->c.tag)))
        status = hurray_layout_validate_against_shape(&self->c, rank, dynamic, NULL, &err);
    if (status == HURRAY_OK && self->c.tag == HURRAY_LAYOUT_BLOCK_PAGED)
        /* rank 2 is block_paged's minimum; only page_size >= 1 is shape-free */
        status = hurray_layout_validate_against_shape(&self->c, 2, dynamic, NULL, &err);
    if (status != HURRAY_OK) {
        Py_DECREF(self);
        return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    }
    return (PyObject *)self;
}

/* ---- base properties (implemented once) ------------------------------------------ */

static PyObject *layout_get_tag(PyObject *self, void *Py_UNUSED(closure)) {
    return PyLong_FromLong(LAYOUT(self)->c.tag);
}

static PyObject *layout_get_name(PyObject *self, void *Py_UNUSED(closure)) {
    const char *name = hurray_layout_name(LAYOUT(self)->c.tag); /* the one helper */
    if (name == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

/* 0 for a composite head (a known zero), None for private / unknown layouts
 * (unknowable), the table's count otherwise (csf: 2·rank+1). */
static PyObject *layout_get_buffer_count(PyObject *self, void *Py_UNUSED(closure)) {
    const LayoutObject *l = LAYOUT(self);
    int count = -1;
    uint8_t rank = l->param_rank > 0 ? (uint8_t)l->param_rank : 0;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_layout_buffer_count(l->c.tag, rank, &count, &err);
    if (status != HURRAY_OK) {
        hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
        return st ? hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err) : NULL;
    }
    if (count < 0) Py_RETURN_NONE;
    return PyLong_FromLong(count);
}

static PyObject *layout_get_is_dense(PyObject *self, void *Py_UNUSED(closure)) {
    return PyBool_FromLong(hurray_layout_is_dense(LAYOUT(self)->c.tag));
}

static PyObject *layout_get_is_virtual(PyObject *self, void *Py_UNUSED(closure)) {
    return PyBool_FromLong(hurray_layout_is_virtual(LAYOUT(self)->c.tag));
}

static PyObject *layout_get_is_stride_expressible(PyObject *self, void *Py_UNUSED(closure)) {
    return PyBool_FromLong(hurray_layout_is_stride_expressible(LAYOUT(self)->c.tag));
}

static PyGetSetDef layout_getset[] = {
    {"tag", layout_get_tag, NULL, PyDoc_STR("The layout byte on the wire."), NULL},
    {"name", layout_get_name, NULL,
     PyDoc_STR("'row_major', ..., 'composite'; 'extension' for private and unknown tags."),
     NULL},
    {"buffer_count", layout_get_buffer_count, NULL,
     PyDoc_STR("Buffers the layout owns: 0 for a composite head, None when unknowable\n"
               "(private and unknown layouts)."),
     NULL},
    {"is_dense", layout_get_is_dense, NULL,
     PyDoc_STR("Every element stored exactly once in buffer 0."), NULL},
    {"is_virtual", layout_get_is_virtual, NULL,
     PyDoc_STR("The layout owns no data (a composite head)."), NULL},
    {"is_stride_expressible", layout_get_is_stride_expressible, NULL,
     PyDoc_STR("Positions are sum(index * stride): row_major, col_major, strided."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Layout.validate_against_shape(shape): tier 3 (HR-LAYOUT-50). None is a
 * dynamic extent and never violates an extent constraint. */
static PyObject *layout_validate_against_shape(PyObject *self, PyTypeObject *defining_class,
                                               PyObject *const *args, Py_ssize_t nargs,
                                               PyObject *kwnames) {
    static const char *const names[] = {"shape"};
    PyObject *a[1];
    hrpy_state *st = PyType_GetModuleState(defining_class);
    if (hrpy_bind("validate_against_shape", args, nargs, kwnames, names, 1, 1, 1, a) < 0)
        return NULL;
    uint64_t shape[HURRAY_MAX_RANK];
    uint8_t rank = 0;
    if (hrpy_as_shape(st, a[0], shape, &rank) < 0) return NULL;
    const LayoutObject *l = LAYOUT(self);
    if (is_rank_dependent(l->c.tag) && l->param_rank != rank)
        return hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_CONSTRAINT, "rank",
                              "rank: the %s layout's parameters are for rank %d, the shape has "
                              "rank %d",
                              hurray_layout_name(l->c.tag), l->param_rank, (int)rank);
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_layout_validate_against_shape(&l->c, rank, shape, NULL, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    Py_RETURN_NONE;
}

static PyMethodDef layout_methods[] = {
    {"validate_against_shape", (PyCFunction)(void (*)(void))layout_validate_against_shape,
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("validate_against_shape($self, /, shape)\n--\n\n"
               "Checks the layout's rank, extent and parameter constraints against a\n"
               "shape (None = dynamic). InvalidDescriptorError if they cannot go together.")},
    {NULL, NULL, 0, NULL},
};

/* ---- value semantics ------------------------------------------------------------------ */

static PyObject *layout_richcompare(PyObject *self, PyObject *other, int op) {
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    if (st == NULL) return NULL;
    /* Never equal to a string: == "csr" is NotImplemented, hence False. */
    if (!PyObject_TypeCheck(other, st->layout_types[HRPY_LAYOUT_BASE]) ||
        (op != Py_EQ && op != Py_NE))
        Py_RETURN_NOTIMPLEMENTED;
    const LayoutObject *a = LAYOUT(self), *b = LAYOUT(other);
    int eq = Py_TYPE(self) == Py_TYPE(other) && a->param_rank == b->param_rank &&
             hurray_layout_equal(&a->c, &b->c,
                                 a->param_rank > 0 ? (uint8_t)a->param_rank : 0);
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_uhash_t mix(Py_uhash_t h, uint64_t v) {
    h ^= (Py_uhash_t)(v ^ (v >> 32));
    return h * 1099511628211u;
}

static Py_uhash_t mix_bytes(Py_uhash_t h, const uint8_t *p, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) h = mix(h, p[i]);
    return mix(h, n);
}

/* Hashes exactly what hurray_layout_equal compares, so equal => same hash. */
static Py_hash_t layout_hash(PyObject *self) {
    const LayoutObject *l = LAYOUT(self);
    const struct hurray_layout *c = &l->c;
    int rank = l->param_rank > 0 ? l->param_rank : 0;
    Py_uhash_t h = mix(14695981039346656037u & (Py_uhash_t)-1, c->tag);
    h = mix(h, (uint64_t)(int64_t)l->param_rank);
    switch (c->tag) {
    case HURRAY_LAYOUT_STRIDED:
        for (int k = 0; k < rank; k++) h = mix(h, (uint64_t)c->strides[k]);
        break;
    case HURRAY_LAYOUT_TILED:
        for (int k = 0; k < rank; k++) {
            h = mix(h, c->tile_shape[k]);
            h = mix(h, (uint64_t)c->strides[k]);
            h = mix(h, (uint64_t)c->inner_strides[k]);
        }
        break;
    case HURRAY_LAYOUT_COO:
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
        h = mix(h, c->nnz);
        break;
    case HURRAY_LAYOUT_CSF:
        h = mix(h, c->nnz);
        for (int k = 0; k + 1 < rank; k++) h = mix(h, c->fiber_counts[k]);
        h = mix_bytes(h, c->mode_order, (uint32_t)rank);
        break;
    case HURRAY_LAYOUT_BLOCK_PAGED:
        h = mix(mix(mix(mix(h, c->page_size), c->num_pages), c->num_seqs), c->num_blocks);
        break;
    case HURRAY_LAYOUT_COMPOSITE:
        h = mix(mix(mix(h, c->rule), c->combine), c->member_count);
        break;
    default:
        if (hurray_layout_tag_kind(c->tag) == HURRAY_TAG_PRIVATE) h = mix(h, c->extension_layout_id);
        h = mix_bytes(h, c->opaque, c->opaque_len);
        break;
    }
    return h == (Py_uhash_t)-1 ? -2 : (Py_hash_t)h;
}

static int layout_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(LAYOUT(self)->opaque);
    return 0;
}

static int layout_clear(PyObject *self) {
    /* c.opaque points into `opaque`: drop both together. */
    LAYOUT(self)->c.opaque = NULL;
    LAYOUT(self)->c.opaque_len = 0;
    Py_CLEAR(LAYOUT(self)->opaque);
    return 0;
}

static void layout_dealloc(PyObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    (void)layout_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *layout_repr_base(PyObject *self) {
    const char *name = hurray_layout_name(LAYOUT(self)->c.tag);
    return PyUnicode_FromFormat("Layout(tag=%s, name='%s')", HRPY_HEX(LAYOUT(self)->c.tag),
                                name ? name : "?");
}

static PyType_Slot layout_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "Base of every layout class. Not constructible: use a subclass.\n"
                    "Immutable; compares and hashes by value; never equal to a string.")},
    {Py_tp_repr, layout_repr_base},
    {Py_tp_richcompare, layout_richcompare},
    {Py_tp_hash, layout_hash},
    {Py_tp_getset, layout_getset},
    {Py_tp_methods, layout_methods},
    {Py_tp_traverse, layout_traverse},
    {Py_tp_clear, layout_clear},
    {Py_tp_dealloc, layout_dealloc},
    {0, NULL},
};

static PyType_Spec layout_spec = {
    .name = "hurray.Layout",
    .basicsize = sizeof(LayoutObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_BASETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = layout_slots,
};

/* ---- shared subclass plumbing -------------------------------------------------------- */

/* Allocates `type` for `tag` after binding its arguments. */
#define LAYOUT_NEW_PROLOGUE(fname, tagv, nnames, maxpos, req)                                   \
    hrpy_state *st = hrpy_state_from_type(type);                                               \
    if (st == NULL) return NULL;                                                               \
    PyObject *a[(nnames) > 0 ? (nnames) : 1];                                                  \
    if (hrpy_bind_tuple(fname, args, kwargs, names, (nnames), (maxpos), (req), a) < 0)         \
        return NULL;                                                                           \
    LayoutObject *self = layout_alloc(type, (tagv));                                           \
    if (self == NULL) return NULL

static const char *const no_names[] = {NULL};

/* RowMajorLayout(), ColMajorLayout(), MortonLayout(), HilbertLayout() */
static PyObject *new_no_params(PyTypeObject *type, PyObject *args, PyObject *kwargs,
                               const char *fname, uint8_t tag) {
    const char *const *names = no_names;
    LAYOUT_NEW_PROLOGUE(fname, tag, 0, 0, 0);
    (void)a;
    return layout_finish(st, self);
}

static PyObject *row_major_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    return new_no_params(type, args, kwargs, "RowMajorLayout", HURRAY_LAYOUT_ROW_MAJOR);
}
static PyObject *col_major_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    return new_no_params(type, args, kwargs, "ColMajorLayout", HURRAY_LAYOUT_COL_MAJOR);
}
static PyObject *morton_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    return new_no_params(type, args, kwargs, "MortonLayout", HURRAY_LAYOUT_MORTON);
}
static PyObject *hilbert_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    return new_no_params(type, args, kwargs, "HilbertLayout", HURRAY_LAYOUT_HILBERT);
}

static PyObject *repr_no_params(PyObject *self) {
    return PyUnicode_FromFormat("%s()", short_name(self));
}

/* ---- strided (HR-LAYOUT-11) ------------------------------------------------------------ */

static PyObject *strided_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"strides"};
    LAYOUT_NEW_PROLOGUE("StridedLayout", HURRAY_LAYOUT_STRIDED, 1, 1, 1);
    Py_ssize_t n = 0;
    if (hrpy_as_i64_array(a[0], "strides", HURRAY_MAX_RANK, self->strides, &n) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->param_rank = (int)n;
    return layout_finish(st, self);
}

static PyObject *strided_get_strides(PyObject *self, void *Py_UNUSED(closure)) {
    return hrpy_i64_tuple(LAYOUT(self)->c.strides, LAYOUT(self)->param_rank);
}

static PyObject *strided_repr(PyObject *self) {
    PyObject *s = strided_get_strides(self, NULL);
    if (s == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("StridedLayout(strides=%R)", s);
    Py_DECREF(s);
    return r;
}

static PyGetSetDef strided_getset[] = {
    {"strides", strided_get_strides, NULL,
     PyDoc_STR("Per-dimension strides in logical elements (signed; not bytes)."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- tiled (HR-LAYOUT-12) -------------------------------------------------------------- */

static PyObject *tiled_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"tile_shape", "outer_strides", "inner_strides"};
    LAYOUT_NEW_PROLOGUE("TiledLayout", HURRAY_LAYOUT_TILED, 3, 3, 3);
    Py_ssize_t n0 = 0, n1 = 0, n2 = 0;
    if (hrpy_as_u64_array(a[0], "tile_shape", HURRAY_MAX_RANK, self->tile_shape, &n0) < 0 ||
        hrpy_as_i64_array(a[1], "outer_strides", HURRAY_MAX_RANK, self->strides, &n1) < 0 ||
        hrpy_as_i64_array(a[2], "inner_strides", HURRAY_MAX_RANK, self->inner_strides, &n2) < 0)
        goto error;
    if (n0 != n1 || n0 != n2) {
        PyErr_Format(PyExc_ValueError,
                     "tile_shape, outer_strides and inner_strides must have one entry per "
                     "dimension each (got %zd, %zd, %zd)",
                     n0, n1, n2);
        goto error;
    }
    self->param_rank = (int)n0;
    return layout_finish(st, self);
error:
    Py_DECREF(self);
    return NULL;
}

static PyObject *tiled_get_tile_shape(PyObject *self, void *Py_UNUSED(closure)) {
    return hrpy_u64_tuple(LAYOUT(self)->c.tile_shape, LAYOUT(self)->param_rank);
}
static PyObject *tiled_get_outer_strides(PyObject *self, void *Py_UNUSED(closure)) {
    return hrpy_i64_tuple(LAYOUT(self)->c.strides, LAYOUT(self)->param_rank);
}
static PyObject *tiled_get_inner_strides(PyObject *self, void *Py_UNUSED(closure)) {
    return hrpy_i64_tuple(LAYOUT(self)->c.inner_strides, LAYOUT(self)->param_rank);
}

static PyObject *tiled_repr(PyObject *self) {
    PyObject *t = NULL, *o = NULL, *i = NULL, *r = NULL;
    t = tiled_get_tile_shape(self, NULL);
    o = tiled_get_outer_strides(self, NULL);
    i = tiled_get_inner_strides(self, NULL);
    if (t && o && i)
        r = PyUnicode_FromFormat("TiledLayout(tile_shape=%R, outer_strides=%R, inner_strides=%R)",
                                 t, o, i);
    Py_XDECREF(t);
    Py_XDECREF(o);
    Py_XDECREF(i);
    return r;
}

static PyGetSetDef tiled_getset[] = {
    {"tile_shape", tiled_get_tile_shape, NULL, PyDoc_STR("Tile extent per dimension."), NULL},
    {"outer_strides", tiled_get_outer_strides, NULL,
     PyDoc_STR("Stride between tiles, in logical elements (signed)."), NULL},
    {"inner_strides", tiled_get_inner_strides, NULL,
     PyDoc_STR("Stride within a tile, in logical elements (signed)."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- coo, csr, csc (HR-LAYOUT-20..22): nnz is required ------------------------------------ */

static PyObject *new_nnz(PyTypeObject *type, PyObject *args, PyObject *kwargs, const char *fname,
                         uint8_t tag) {
    static const char *const names[] = {"nnz"};
    LAYOUT_NEW_PROLOGUE(fname, tag, 1, 1, 1);
    if (hrpy_as_u64(a[0], "nnz", &self->c.nnz) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return layout_finish(st, self);
}

static PyObject *coo_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    return new_nnz(type, args, kwargs, "CooLayout", HURRAY_LAYOUT_COO);
}
static PyObject *csr_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    return new_nnz(type, args, kwargs, "CsrLayout", HURRAY_LAYOUT_CSR);
}
static PyObject *csc_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    return new_nnz(type, args, kwargs, "CscLayout", HURRAY_LAYOUT_CSC);
}

static PyObject *get_nnz(PyObject *self, void *Py_UNUSED(closure)) {
    return PyLong_FromUnsignedLongLong(LAYOUT(self)->c.nnz);
}

static PyObject *repr_nnz(PyObject *self) {
    return PyUnicode_FromFormat("%s(nnz=%llu)", short_name(self),
                                (unsigned long long)LAYOUT(self)->c.nnz);
}

static PyGetSetDef nnz_getset[] = {
    {"nnz", get_nnz, NULL, PyDoc_STR("Stored non-zero count."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- csf (HR-LAYOUT-23) -------------------------------------------------------------------- */

static PyObject *csf_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"nnz", "fiber_counts", "mode_order"};
    LAYOUT_NEW_PROLOGUE("CsfLayout", HURRAY_LAYOUT_CSF, 3, 3, 2);
    Py_ssize_t nf = 0, nm = 0;
    uint64_t modes[HURRAY_MAX_RANK];
    if (hrpy_as_u64(a[0], "nnz", &self->c.nnz) < 0) goto error;
    if (hrpy_as_u64_array(a[1], "fiber_counts", HURRAY_MAX_RANK - 1, self->fiber_counts, &nf) < 0)
        goto error;
    Py_ssize_t rank = nf + 1;
    if (a[2] == NULL || a[2] == Py_None) {
        for (Py_ssize_t k = 0; k < rank; k++) modes[k] = (uint64_t)k; /* identity */
        nm = rank;
    } else if (hrpy_as_u64_array(a[2], "mode_order", HURRAY_MAX_RANK, modes, &nm) < 0) {
        goto error;
    }
    if (nm != rank) {
        PyErr_Format(PyExc_ValueError,
                     "mode_order must have rank = len(fiber_counts) + 1 = %zd entries, not %zd",
                     rank, nm);
        goto error;
    }
    for (Py_ssize_t k = 0; k < rank; k++) {
        if (modes[k] > 0xFF) {
            PyErr_Format(PyExc_ValueError, "mode_order[%zd] must be in [0, 255]", k);
            goto error;
        }
        self->mode_order[k] = (uint8_t)modes[k];
    }
    self->param_rank = (int)rank;
    return layout_finish(st, self);
error:
    Py_DECREF(self);
    return NULL;
}

static PyObject *csf_get_fiber_counts(PyObject *self, void *Py_UNUSED(closure)) {
    int rank = LAYOUT(self)->param_rank;
    return hrpy_u64_tuple(LAYOUT(self)->c.fiber_counts, rank > 0 ? rank - 1 : 0);
}

static PyObject *csf_get_mode_order(PyObject *self, void *Py_UNUSED(closure)) {
    uint64_t modes[HURRAY_MAX_RANK];
    int rank = LAYOUT(self)->param_rank;
    for (int k = 0; k < rank; k++) modes[k] = LAYOUT(self)->c.mode_order[k];
    return hrpy_u64_tuple(modes, rank);
}

static PyObject *csf_get_ndim(PyObject *self, void *Py_UNUSED(closure)) {
    return PyLong_FromLong(LAYOUT(self)->param_rank);
}

static PyObject *csf_repr(PyObject *self) {
    PyObject *f = csf_get_fiber_counts(self, NULL), *m = csf_get_mode_order(self, NULL);
    PyObject *r = NULL;
    if (f && m)
        r = PyUnicode_FromFormat("CsfLayout(nnz=%llu, fiber_counts=%R, mode_order=%R)",
                                 (unsigned long long)LAYOUT(self)->c.nnz, f, m);
    Py_XDECREF(f);
    Py_XDECREF(m);
    return r;
}

static PyGetSetDef csf_getset[] = {
    {"nnz", get_nnz, NULL, PyDoc_STR("Stored non-zero count (the last level's count)."), NULL},
    {"fiber_counts", csf_get_fiber_counts, NULL,
     PyDoc_STR("Fiber count of each level but the last (rank - 1 entries)."), NULL},
    {"mode_order", csf_get_mode_order, NULL,
     PyDoc_STR("Dimension stored at each level: a permutation of range(rank)."), NULL},
    {"ndim", csf_get_ndim, NULL, PyDoc_STR("The rank the parameters describe."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- block_paged (block-paged.md) ---------------------------------------------------------- */

static PyObject *block_paged_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"page_size", "num_pages", "num_seqs", "num_blocks"};
    LAYOUT_NEW_PROLOGUE("BlockPagedLayout", HURRAY_LAYOUT_BLOCK_PAGED, 4, 4, 4);
    if (hrpy_as_u64(a[0], "page_size", &self->c.page_size) < 0 ||
        hrpy_as_u64(a[1], "num_pages", &self->c.num_pages) < 0 ||
        hrpy_as_u64(a[2], "num_seqs", &self->c.num_seqs) < 0 ||
        hrpy_as_u64(a[3], "num_blocks", &self->c.num_blocks) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return layout_finish(st, self);
}

/* closure = offset of the uint64 field */
static PyObject *get_u64_field(PyObject *self, void *closure) {
    const uint8_t *base = (const uint8_t *)&LAYOUT(self)->c;
    uint64_t v;
    memcpy(&v, base + (size_t)closure, sizeof v);
    return PyLong_FromUnsignedLongLong(v);
}

static PyObject *block_paged_repr(PyObject *self) {
    const struct hurray_layout *c = &LAYOUT(self)->c;
    return PyUnicode_FromFormat(
        "BlockPagedLayout(page_size=%llu, num_pages=%llu, num_seqs=%llu, num_blocks=%llu)",
        (unsigned long long)c->page_size, (unsigned long long)c->num_pages,
        (unsigned long long)c->num_seqs, (unsigned long long)c->num_blocks);
}

/* Holds a contiguous byte view of any buffer-protocol object. */
static int get_bytes_view(PyObject *obj, const char *what, Py_buffer *view) {
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "%s must be a contiguous buffer-protocol object (bytes, array, "
                         "ndarray) of little-endian uint64, not %.100s",
                         what, Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    return 0;
}

/* block-paged.md § Storage: the four invariants, over the buffers' raw
 * little-endian uint64 contents. Aliasing is accepted. */
static PyObject *block_paged_validate_index_buffers(PyObject *self, PyTypeObject *defining_class,
                                                    PyObject *const *args, Py_ssize_t nargs,
                                                    PyObject *kwnames) {
    static const char *const names[] = {"seq_ptr", "block_table"};
    PyObject *a[2];
    hrpy_state *st = PyType_GetModuleState(defining_class);
    if (hrpy_bind("validate_index_buffers", args, nargs, kwnames, names, 2, 2, 2, a) < 0)
        return NULL;
    Py_buffer seq, table;
    if (get_bytes_view(a[0], "seq_ptr", &seq) < 0) return NULL;
    if (get_bytes_view(a[1], "block_table", &table) < 0) {
        PyBuffer_Release(&seq);
        return NULL;
    }
    struct hurray_error err;
    hurray_error_clear(&err);
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = hurray_block_paged_validate_index_buffers(
        &LAYOUT(self)->c, (const uint8_t *)seq.buf, (uint64_t)seq.len,
        (const uint8_t *)table.buf, (uint64_t)table.len, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&seq);
    PyBuffer_Release(&table);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    Py_RETURN_NONE;
}

/* block-paged.md § Quantization compatibility (HR-PAGED-3). Takes the
 * quantization object itself, never a scheme tag. `ndim`, when given, also
 * checks the scheme's axis against the rank. */
static PyObject *block_paged_validate_quantization(PyObject *self, PyTypeObject *defining_class,
                                                   PyObject *const *args, Py_ssize_t nargs,
                                                   PyObject *kwnames) {
    static const char *const names[] = {"quantization", "ndim"};
    PyObject *a[2];
    hrpy_state *st = PyType_GetModuleState(defining_class);
    if (hrpy_bind("validate_quantization_compatibility", args, nargs, kwnames, names, 2, 1, 1,
                  a) < 0)
        return NULL;
    const struct hurray_quant *q = hrpy_quant_c(st, a[0]);
    if (q == NULL)
        return PyErr_Format(PyExc_TypeError,
                            "quantization must be a hurray quantization object "
                            "(PerTensorAffine, PerChannelAffine, ...), not %.100s",
                            Py_TYPE(a[0])->tp_name);
    uint64_t ndim = 0xFF; /* unknown: no axis < rank check */
    if (a[1] != NULL && a[1] != Py_None &&
        hrpy_as_uint_max(a[1], "ndim", HURRAY_MAX_RANK, &ndim) < 0)
        return NULL;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_block_paged_check_quantization(&LAYOUT(self)->c, (uint8_t)ndim, q, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    Py_RETURN_NONE;
}

static PyMethodDef block_paged_methods[] = {
    {"validate_index_buffers", (PyCFunction)(void (*)(void))block_paged_validate_index_buffers,
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("validate_index_buffers($self, /, seq_ptr, block_table)\n--\n\n"
               "Checks the four storage invariants of block-paged.md § Storage over the\n"
               "buffers' little-endian uint64 contents. Aliasing is accepted.\n"
               "InvalidDescriptorError (code INDEX or BUFFER_SIZE) otherwise.")},
    {"validate_quantization_compatibility",
     (PyCFunction)(void (*)(void))block_paged_validate_quantization,
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("validate_quantization_compatibility($self, /, quantization, *, ndim=None)\n--\n\n"
               "Whether a quantization scheme and the paging can go together\n"
               "(block-paged.md § Quantization compatibility).")},
    {NULL, NULL, 0, NULL},
};

#define U64_FIELD(name, doc)                                                                   \
    {#name, get_u64_field, NULL, PyDoc_STR(doc), (void *)offsetof(struct hurray_layout, name)}

static PyGetSetDef block_paged_getset[] = {
    U64_FIELD(page_size, "Tokens per page."),
    U64_FIELD(num_pages, "Pages in buffer 0."),
    U64_FIELD(num_seqs, "Sequences (shape[0])."),
    U64_FIELD(num_blocks, "Entries in the block table."),
    {NULL, NULL, NULL, NULL, NULL},
};

#undef U64_FIELD

/* ---- composite head (HR-LAYOUT-30) ---------------------------------------------------------- */

/* Name -> byte through the C name function (the one table). */
static int byte_for_name(PyObject *obj, const char *what, const char *(*name_of)(uint8_t),
                         uint8_t *out) {
    Py_ssize_t len;
    const char *s = hrpy_as_str(obj, what, &len);
    if (s == NULL) return -1;
    for (unsigned v = 1; v < 0xFF; v++) {
        const char *name = name_of((uint8_t)v);
        if (name != NULL && strlen(name) == (size_t)len && memcmp(name, s, (size_t)len) == 0) {
            *out = (uint8_t)v;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "unknown %s %R", what, obj);
    return -1;
}

static PyObject *composite_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"rule", "combine", "member_count"};
    LAYOUT_NEW_PROLOGUE("CompositeLayout", HURRAY_LAYOUT_COMPOSITE, 3, 2, 1);
    uint64_t count;
    if (a[2] == NULL) {
        PyErr_SetString(PyExc_TypeError, "CompositeLayout() missing required keyword argument "
                                         "'member_count'");
        goto error;
    }
    if (byte_for_name(a[0], "composition rule", hurray_composite_rule_name, &self->c.rule) < 0)
        goto error;
    if (a[1] != NULL && a[1] != Py_None &&
        byte_for_name(a[1], "combine operation", hurray_combine_op_name, &self->c.combine) < 0)
        goto error;
    if (hrpy_as_uint_max(a[2], "member_count", UINT32_MAX, &count) < 0) goto error;
    self->c.member_count = (uint32_t)count;
    return layout_finish(st, self);
error:
    Py_DECREF(self);
    return NULL;
}

static PyObject *composite_get_rule(PyObject *self, void *Py_UNUSED(closure)) {
    const char *name = hurray_composite_rule_name(LAYOUT(self)->c.rule);
    if (name == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

/* None for partition and group: the raw "not applicable" byte is not exposed. */
static PyObject *composite_get_combine(PyObject *self, void *Py_UNUSED(closure)) {
    if (LAYOUT(self)->c.rule != HURRAY_RULE_OVERLAY) Py_RETURN_NONE;
    const char *name = hurray_combine_op_name(LAYOUT(self)->c.combine);
    if (name == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

static PyObject *composite_get_member_count(PyObject *self, void *Py_UNUSED(closure)) {
    return PyLong_FromUnsignedLong(LAYOUT(self)->c.member_count);
}

static PyObject *composite_repr(PyObject *self) {
    PyObject *rule = composite_get_rule(self, NULL), *combine = composite_get_combine(self, NULL);
    PyObject *r = NULL;
    if (rule && combine)
        r = PyUnicode_FromFormat("CompositeLayout(rule=%R, combine=%R, member_count=%lu)", rule,
                                 combine, (unsigned long)LAYOUT(self)->c.member_count);
    Py_XDECREF(rule);
    Py_XDECREF(combine);
    return r;
}

static PyGetSetDef composite_getset[] = {
    {"rule", composite_get_rule, NULL, PyDoc_STR("'partition', 'overlay' or 'group'."), NULL},
    {"combine", composite_get_combine, NULL,
     PyDoc_STR("'replace', 'add', 'max' or 'min' for overlay; None otherwise."), NULL},
    {"member_count", composite_get_member_count, NULL, PyDoc_STR("Number of members."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- private extension (HR-LAYOUT-40) and unknown (HR-LAYOUT-41) ------------------------------ */

static int tag_arg(PyObject *obj, uint8_t *tag) {
    uint64_t v;
    if (hrpy_as_uint_max(obj, "tag", 0xFF, &v) < 0) return -1;
    *tag = (uint8_t)v;
    return 0;
}

static PyObject *bytes_arg(PyObject *obj, const char *what) {
    if (PyUnicode_Check(obj) || !PyObject_CheckBuffer(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be bytes-like, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyObject *b = PyBytes_FromObject(obj);
    if (b != NULL && PyBytes_GET_SIZE(b) > (Py_ssize_t)(UINT32_MAX - 8u)) {
        Py_DECREF(b);
        PyErr_Format(PyExc_ValueError, "%s is longer than a layout block can hold", what);
        return NULL;
    }
    return b;
}

static PyObject *private_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"tag", "extension_layout_id", "extension_data"};
    uint8_t tag;
    uint64_t id;
    PyObject *data = NULL;
    LAYOUT_NEW_PROLOGUE("PrivateExtensionLayout", 0, 3, 3, 2);
    if (tag_arg(a[0], &tag) < 0) goto error;
    if (hurray_layout_tag_kind(tag) != HURRAY_TAG_PRIVATE) {
        if (hurray_layout_tag_kind(tag) == HURRAY_TAG_INVALID) {
            hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_INVALID_TAG, "layout",
                           "layout: tag %s is invalid", HRPY_HEX(tag));
        } else {
            PyErr_Format(PyExc_ValueError,
                         "PrivateExtensionLayout needs a private tag in 0xF0-0xFE, not %s",
                         HRPY_HEX(tag));
        }
        goto error;
    }
    if (hrpy_as_uint_max(a[1], "extension_layout_id", UINT32_MAX, &id) < 0) goto error;
    data = a[2] ? bytes_arg(a[2], "extension_data") : PyBytes_FromStringAndSize(NULL, 0);
    if (data == NULL) goto error;
    self->c.tag = tag;
    self->c.extension_layout_id = (uint32_t)id;
    layout_set_opaque(self, data);
    return layout_finish(st, self);
error:
    Py_DECREF(self);
    return NULL;
}

static PyObject *private_get_id(PyObject *self, void *Py_UNUSED(closure)) {
    return PyLong_FromUnsignedLong(LAYOUT(self)->c.extension_layout_id);
}

static PyObject *get_opaque(PyObject *self, void *Py_UNUSED(closure)) {
    PyObject *b = LAYOUT(self)->opaque;
    return b ? Py_NewRef(b) : PyBytes_FromStringAndSize(NULL, 0);
}

static PyObject *private_repr(PyObject *self) {
    PyObject *b = get_opaque(self, NULL);
    if (b == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat(
        "PrivateExtensionLayout(tag=%s, extension_layout_id=%lu, extension_data=%R)",
        HRPY_HEX(LAYOUT(self)->c.tag), (unsigned long)LAYOUT(self)->c.extension_layout_id, b);
    Py_DECREF(b);
    return r;
}

static PyGetSetDef private_getset[] = {
    {"extension_layout_id", private_get_id, NULL,
     PyDoc_STR("The private agreement's layout id (u32)."), NULL},
    {"extension_data", get_opaque, NULL, PyDoc_STR("The parameters after the id (bytes)."),
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* UnknownLayout(tag, params=b""): only reserved tags. A named tag has its own
 * class (calling it unknown would smuggle an unvalidated descriptor past every
 * rank and buffer check), a private one is PrivateExtensionLayout. */
static PyObject *unknown_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"tag", "params"};
    uint8_t tag;
    PyObject *params = NULL;
    LAYOUT_NEW_PROLOGUE("UnknownLayout", 0, 2, 2, 1);
    if (tag_arg(a[0], &tag) < 0) goto error;
    switch (hurray_layout_tag_kind(tag)) {
    case HURRAY_TAG_RESERVED:
        break;
    case HURRAY_TAG_NAMED:
        PyErr_Format(PyExc_ValueError,
                     "UnknownLayout cannot carry tag %s: it names the '%s' layout, which "
                     "has its own class",
                     HRPY_HEX(tag), hurray_layout_name(tag));
        goto error;
    case HURRAY_TAG_PRIVATE:
        PyErr_Format(PyExc_ValueError,
                     "UnknownLayout cannot carry tag %s: private tags are "
                     "PrivateExtensionLayout",
                     HRPY_HEX(tag));
        goto error;
    default:
        hrpy_raise_fmt(st, HRPY_CTX_DESCRIPTOR, HURRAY_E_INVALID_TAG, "layout",
                       "layout: tag %s is invalid", HRPY_HEX(tag));
        goto error;
    }
    params = a[1] ? bytes_arg(a[1], "params") : PyBytes_FromStringAndSize(NULL, 0);
    if (params == NULL) goto error;
    self->c.tag = tag;
    layout_set_opaque(self, params);
    return layout_finish(st, self);
error:
    Py_DECREF(self);
    return NULL;
}

static PyObject *unknown_repr(PyObject *self) {
    PyObject *b = get_opaque(self, NULL);
    if (b == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("UnknownLayout(tag=%s, params=%R)",
                                       HRPY_HEX(LAYOUT(self)->c.tag), b);
    Py_DECREF(b);
    return r;
}

static PyGetSetDef unknown_getset[] = {
    {"params", get_opaque, NULL, PyDoc_STR("The parameter block, carried verbatim (bytes)."),
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- layout_tag_kind (HR-LAYOUT-2) -------------------------------------------------------- */

PyObject *hrpy_layout_tag_kind_py(PyObject *module, PyObject *arg) {
    (void)module;
    uint64_t tag;
    if (hrpy_as_uint_max(arg, "tag", 0xFF, &tag) < 0) return NULL;
    return hrpy_tag_kind_string(hurray_layout_tag_kind((uint8_t)tag));
}

/* ---- the class table ------------------------------------------------------------------------ */

#define SUBCLASS_SPEC(var, pyname, doc, newfn, reprfn, getset, methods)                          \
    static PyType_Slot var##_slots[] = {                                                       \
        {Py_tp_doc, (void *)PyDoc_STR(doc)},                                                   \
        {Py_tp_new, newfn},                                                                    \
        {Py_tp_repr, reprfn},                                                                  \
        {Py_tp_traverse, layout_traverse},                                                          \
        {Py_tp_getset, getset},                                                                \
        {Py_tp_methods, methods},                                                              \
        {0, NULL},                                                                             \
    };                                                                                         \
    static PyType_Spec var##_spec = {                                                          \
        .name = "hurray." pyname,                                                              \
        .basicsize = 0,                                                                        \
        .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,           \
        .slots = var##_slots,                                                                  \
    }

static PyGetSetDef no_getset[] = {{NULL, NULL, NULL, NULL, NULL}};
static PyMethodDef no_methods[] = {{NULL, NULL, 0, NULL}};

SUBCLASS_SPEC(row_major, "RowMajorLayout", "RowMajorLayout()\n--\n\nC order; one buffer.",
              row_major_new, repr_no_params, no_getset, no_methods);
SUBCLASS_SPEC(col_major, "ColMajorLayout", "ColMajorLayout()\n--\n\nFortran order; one buffer.",
              col_major_new, repr_no_params, no_getset, no_methods);
SUBCLASS_SPEC(strided, "StridedLayout",
              "StridedLayout(strides)\n--\n\nExplicit strides in logical elements (signed).",
              strided_new, strided_repr, strided_getset, no_methods);
SUBCLASS_SPEC(tiled, "TiledLayout",
              "TiledLayout(tile_shape, outer_strides, inner_strides)\n--\n\nTiles with strides "
              "between and within them, in logical elements.",
              tiled_new, tiled_repr, tiled_getset, no_methods);
SUBCLASS_SPEC(morton, "MortonLayout", "MortonLayout()\n--\n\nZ-order; rank 2 or 3, powers of two.",
              morton_new, repr_no_params, no_getset, no_methods);
SUBCLASS_SPEC(hilbert, "HilbertLayout",
              "HilbertLayout()\n--\n\nHilbert curve; square rank-2, power of two.", hilbert_new,
              repr_no_params, no_getset, no_methods);
SUBCLASS_SPEC(coo, "CooLayout", "CooLayout(nnz)\n--\n\nCoordinate sparse: values, indices.",
              coo_new, repr_nnz, nnz_getset, no_methods);
SUBCLASS_SPEC(csr, "CsrLayout",
              "CsrLayout(nnz)\n--\n\nCompressed sparse row: values, col_indices, row_ptr.",
              csr_new, repr_nnz, nnz_getset, no_methods);
SUBCLASS_SPEC(csc, "CscLayout",
              "CscLayout(nnz)\n--\n\nCompressed sparse column: values, row_indices, col_ptr.",
              csc_new, repr_nnz, nnz_getset, no_methods);
SUBCLASS_SPEC(csf, "CsfLayout",
              "CsfLayout(nnz, fiber_counts, mode_order=None)\n--\n\nCompressed sparse fiber; "
              "rank = len(fiber_counts) + 1, mode_order defaults to the identity.",
              csf_new, csf_repr, csf_getset, no_methods);
SUBCLASS_SPEC(block_paged, "BlockPagedLayout",
              "BlockPagedLayout(page_size, num_pages, num_seqs, num_blocks)\n--\n\nPaged KV "
              "storage: pages, seq_ptr, block_table.",
              block_paged_new, block_paged_repr, block_paged_getset, block_paged_methods);
SUBCLASS_SPEC(composite, "CompositeLayout",
              "CompositeLayout(rule, combine=None, *, member_count)\n--\n\nA composite head: "
              "owns no buffers; its members follow it.",
              composite_new, composite_repr, composite_getset, no_methods);
SUBCLASS_SPEC(private_ext, "PrivateExtensionLayout",
              "PrivateExtensionLayout(tag, extension_layout_id, extension_data=b'')\n--\n\n"
              "A private layout (tag 0xF0-0xFE) agreed out of band.",
              private_new, private_repr, private_getset, no_methods);
SUBCLASS_SPEC(unknown, "UnknownLayout",
              "UnknownLayout(tag, params=b'')\n--\n\nA reserved tag from a newer format "
              "version, carried verbatim so a relay can write it back.",
              unknown_new, unknown_repr, unknown_getset, no_methods);

int hrpy_layout_init(PyObject *module, hrpy_state *st) {
    static PyType_Spec *const specs[HRPY_LAYOUT_CLASS_COUNT] = {
        [HRPY_LAYOUT_BASE] = &layout_spec,
        [HRPY_LAYOUT_ROW_MAJOR] = &row_major_spec,
        [HRPY_LAYOUT_COL_MAJOR] = &col_major_spec,
        [HRPY_LAYOUT_STRIDED] = &strided_spec,
        [HRPY_LAYOUT_TILED] = &tiled_spec,
        [HRPY_LAYOUT_MORTON] = &morton_spec,
        [HRPY_LAYOUT_HILBERT] = &hilbert_spec,
        [HRPY_LAYOUT_COO] = &coo_spec,
        [HRPY_LAYOUT_CSR] = &csr_spec,
        [HRPY_LAYOUT_CSC] = &csc_spec,
        [HRPY_LAYOUT_CSF] = &csf_spec,
        [HRPY_LAYOUT_BLOCK_PAGED] = &block_paged_spec,
        [HRPY_LAYOUT_COMPOSITE] = &composite_spec,
        [HRPY_LAYOUT_PRIVATE] = &private_ext_spec,
        [HRPY_LAYOUT_UNKNOWN] = &unknown_spec,
    };
    st->layout_types[HRPY_LAYOUT_BASE] = hrpy_add_type(module, &layout_spec, NULL);
    if (st->layout_types[HRPY_LAYOUT_BASE] == NULL) return -1;
    for (int i = 1; i < HRPY_LAYOUT_CLASS_COUNT; i++) {
        st->layout_types[i] =
            hrpy_add_type(module, specs[i], (PyObject *)st->layout_types[HRPY_LAYOUT_BASE]);
        if (st->layout_types[i] == NULL) return -1;
    }
    return 0;
}
