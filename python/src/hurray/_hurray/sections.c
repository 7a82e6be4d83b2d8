/* hurray.Statistics and hurray.Shard: the value objects for the statistics and
 * shard sections (docs/spec/sections.md; requirements § Multi-buffer tensors: "MUST
 * expose the descriptor's optional sections for reading").
 *
 * Both are small immutable classes rather than dicts so that a section read
 * from one descriptor can be passed back when building another (the requirements'
 * round-trip obligation covers statistics and shard) and so that validation
 * happens once, at construction, through libhurray (hurray_statistics_check,
 * hurray_shard_check). Statistics carries floats and is unhashable, like the
 * quantization classes; Shard hashes by value. */
#include "state.h"

typedef struct {
    PyObject_HEAD
    struct hurray_statistics c;
} StatisticsObject;

typedef struct {
    PyObject_HEAD
    struct hurray_shard c; /* its spans point at the arrays below */
    uint8_t rank;
    uint64_t global_shape[HURRAY_MAX_RANK];
    uint64_t global_offset[HURRAY_MAX_RANK];
} ShardObject;

#define STATS(o) ((StatisticsObject *)(o))
#define SHARD(o) ((ShardObject *)(o))

/* ---- Statistics (HR-STAT-1) ------------------------------------------------------------ */

const struct hurray_statistics *hrpy_statistics_c(hrpy_state *st, PyObject *obj) {
    return Py_IS_TYPE(obj, st->Statistics_Type) ? &STATS(obj)->c : NULL;
}

PyObject *hrpy_statistics_from_c(hrpy_state *st, const struct hurray_statistics *s) {
    StatisticsObject *self =
        (StatisticsObject *)st->Statistics_Type->tp_alloc(st->Statistics_Type, 0);
    if (self == NULL) return NULL;
    self->c = *s;
    return (PyObject *)self;
}

static int real_arg(PyObject *obj, const char *what, double *out) {
    double v = PyFloat_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s must be a real number or None, not %.100s", what,
                         Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    *out = v;
    return 0;
}

static PyObject *statistics_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"min", "max", "nan_count"};
    PyObject *a[3];
    hrpy_state *st = hrpy_state_from_type(type);
    if (st == NULL) return NULL;
    if (hrpy_bind_tuple("Statistics", args, kwargs, names, 3, 3, 0, a) < 0) return NULL;
    struct hurray_statistics s;
    memset(&s, 0, sizeof s);
    int has_min = a[0] != NULL && a[0] != Py_None, has_max = a[1] != NULL && a[1] != Py_None;
    if (has_min != has_max) {
        PyErr_SetString(PyExc_ValueError, "Statistics: min and max go together (both or neither)");
        return NULL;
    }
    if (has_min) {
        if (real_arg(a[0], "min", &s.min) < 0 || real_arg(a[1], "max", &s.max) < 0) return NULL;
        s.flags |= HURRAY_STATS_HAS_MIN_MAX;
    }
    if (a[2] != NULL && a[2] != Py_None) {
        if (hrpy_as_u64(a[2], "nan_count", &s.nan_count) < 0) return NULL;
        s.flags |= HURRAY_STATS_HAS_NAN_COUNT;
    }
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_statistics_check(&s, UINT64_MAX, &err); /* N unknown here */
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    return hrpy_statistics_from_c(st, &s);
}

static PyObject *stats_get_min(PyObject *self, void *Py_UNUSED(c)) {
    if (!(STATS(self)->c.flags & HURRAY_STATS_HAS_MIN_MAX)) Py_RETURN_NONE;
    return PyFloat_FromDouble(STATS(self)->c.min);
}
static PyObject *stats_get_max(PyObject *self, void *Py_UNUSED(c)) {
    if (!(STATS(self)->c.flags & HURRAY_STATS_HAS_MIN_MAX)) Py_RETURN_NONE;
    return PyFloat_FromDouble(STATS(self)->c.max);
}
static PyObject *stats_get_nan_count(PyObject *self, void *Py_UNUSED(c)) {
    if (!(STATS(self)->c.flags & HURRAY_STATS_HAS_NAN_COUNT)) Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(STATS(self)->c.nan_count);
}

static PyGetSetDef stats_getset[] = {
    {"min", stats_get_min, NULL, PyDoc_STR("Smallest stored value (widened to float), or None."),
     NULL},
    {"max", stats_get_max, NULL, PyDoc_STR("Largest stored value (widened to float), or None."),
     NULL},
    {"nan_count", stats_get_nan_count, NULL, PyDoc_STR("Number of NaN elements, or None."),
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *stats_repr(PyObject *self) {
    PyObject *mn = stats_get_min(self, NULL), *mx = stats_get_max(self, NULL),
             *nc = stats_get_nan_count(self, NULL), *r = NULL;
    if (mn && mx && nc) r = PyUnicode_FromFormat("Statistics(min=%R, max=%R, nan_count=%R)", mn, mx, nc);
    Py_XDECREF(mn);
    Py_XDECREF(mx);
    Py_XDECREF(nc);
    return r;
}

static PyObject *stats_richcompare(PyObject *self, PyObject *other, int op) {
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    if (st == NULL) return NULL;
    const struct hurray_statistics *b = hrpy_statistics_c(st, other);
    if (b == NULL || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    int eq = hurray_statistics_equal(&STATS(self)->c, b);
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyType_Slot stats_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "Statistics(min=None, max=None, nan_count=None)\n--\n\n"
                    "The statistics section: min and max (together) and/or a NaN count.\n"
                    "Immutable; compares by value; unhashable (carries floats).")},
    {Py_tp_new, statistics_new},
    {Py_tp_repr, stats_repr},
    {Py_tp_richcompare, stats_richcompare},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_getset, stats_getset},
    {Py_tp_traverse, hrpy_traverse_type_only},
    {Py_tp_dealloc, hrpy_dealloc_simple},
    {0, NULL},
};

static PyType_Spec stats_spec = {
    .name = "hurray.Statistics",
    .basicsize = sizeof(StatisticsObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = stats_slots,
};

/* ---- Shard (HR-SHARD-1) ----------------------------------------------------------------- */

const struct hurray_shard *hrpy_shard_c(hrpy_state *st, PyObject *obj, uint8_t *rank) {
    if (!Py_IS_TYPE(obj, st->Shard_Type)) return NULL;
    if (rank) *rank = SHARD(obj)->rank;
    return &SHARD(obj)->c;
}

PyObject *hrpy_shard_from_c(hrpy_state *st, const struct hurray_shard *s, uint8_t rank) {
    ShardObject *self = (ShardObject *)st->Shard_Type->tp_alloc(st->Shard_Type, 0);
    if (self == NULL) return NULL;
    size_t n = (rank > HURRAY_MAX_RANK ? HURRAY_MAX_RANK : rank) * sizeof(uint64_t);
    self->c = *s;
    self->c.global_shape = self->global_shape;
    self->c.global_offset = self->global_offset;
    if (n > 0 && s->global_shape != NULL) memcpy(self->global_shape, s->global_shape, n);
    if (n > 0 && s->global_offset != NULL) memcpy(self->global_offset, s->global_offset, n);
    self->rank = rank;
    return (PyObject *)self;
}

static PyObject *shard_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static const char *const names[] = {"shard_index", "shard_count", "global_shape",
                                        "global_offset"};
    PyObject *a[4];
    hrpy_state *st = hrpy_state_from_type(type);
    if (st == NULL) return NULL;
    if (hrpy_bind_tuple("Shard", args, kwargs, names, 4, 4, 4, a) < 0) return NULL;
    struct hurray_shard s;
    uint64_t global_shape[HURRAY_MAX_RANK], global_offset[HURRAY_MAX_RANK];
    memset(&s, 0, sizeof s);
    s.global_shape = global_shape;
    s.global_offset = global_offset;
    uint64_t index, count;
    Py_ssize_t n_shape = 0, n_offset = 0;
    if (hrpy_as_uint_max(a[0], "shard_index", UINT32_MAX, &index) < 0 ||
        hrpy_as_uint_max(a[1], "shard_count", UINT32_MAX, &count) < 0 ||
        hrpy_as_u64_array(a[2], "global_shape", HURRAY_MAX_RANK, global_shape, &n_shape) < 0 ||
        hrpy_as_u64_array(a[3], "global_offset", HURRAY_MAX_RANK, global_offset, &n_offset) < 0)
        return NULL;
    if (n_shape != n_offset)
        return PyErr_Format(PyExc_ValueError,
                            "global_shape and global_offset must have the same length (%zd != "
                            "%zd)",
                            n_shape, n_offset);
    s.shard_index = (uint32_t)index;
    s.shard_count = (uint32_t)count;
    /* The local shape is not known here: check against all-dynamic extents,
     * which skips only the box rule (HR-SHAPE-4). */
    uint64_t dynamic[HURRAY_MAX_RANK];
    for (int k = 0; k < HURRAY_MAX_RANK; k++) dynamic[k] = HURRAY_DYNAMIC_DIM;
    struct hurray_error err;
    hurray_error_clear(&err);
    int status = hurray_shard_check(&s, (uint8_t)n_shape, dynamic, &err);
    if (status != HURRAY_OK) return hrpy_raise_status(st, HRPY_CTX_DESCRIPTOR, status, &err);
    return hrpy_shard_from_c(st, &s, (uint8_t)n_shape);
}

static PyObject *shard_get_index(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromUnsignedLong(SHARD(self)->c.shard_index);
}
static PyObject *shard_get_count(PyObject *self, void *Py_UNUSED(c)) {
    return PyLong_FromUnsignedLong(SHARD(self)->c.shard_count);
}
static PyObject *shard_get_global_shape(PyObject *self, void *Py_UNUSED(c)) {
    return hrpy_u64_tuple(SHARD(self)->c.global_shape, SHARD(self)->rank);
}
static PyObject *shard_get_global_offset(PyObject *self, void *Py_UNUSED(c)) {
    return hrpy_u64_tuple(SHARD(self)->c.global_offset, SHARD(self)->rank);
}

static PyGetSetDef shard_getset[] = {
    {"shard_index", shard_get_index, NULL, PyDoc_STR("This shard's index."), NULL},
    {"shard_count", shard_get_count, NULL, PyDoc_STR("Number of shards."), NULL},
    {"global_shape", shard_get_global_shape, NULL, PyDoc_STR("Shape of the global tensor."),
     NULL},
    {"global_offset", shard_get_global_offset, NULL,
     PyDoc_STR("Where this tensor's box starts in the global tensor."), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *shard_repr(PyObject *self) {
    PyObject *gs = shard_get_global_shape(self, NULL), *go = shard_get_global_offset(self, NULL);
    PyObject *r = NULL;
    if (gs && go)
        r = PyUnicode_FromFormat(
            "Shard(shard_index=%lu, shard_count=%lu, global_shape=%R, global_offset=%R)",
            (unsigned long)SHARD(self)->c.shard_index, (unsigned long)SHARD(self)->c.shard_count,
            gs, go);
    Py_XDECREF(gs);
    Py_XDECREF(go);
    return r;
}

static PyObject *shard_richcompare(PyObject *self, PyObject *other, int op) {
    hrpy_state *st = hrpy_state_from_type(Py_TYPE(self));
    if (st == NULL) return NULL;
    uint8_t rank = 0;
    const struct hurray_shard *b = hrpy_shard_c(st, other, &rank);
    if (b == NULL || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    int eq = rank == SHARD(self)->rank && hurray_shard_equal(&SHARD(self)->c, b, rank);
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t shard_hash(PyObject *self) {
    const ShardObject *s = SHARD(self);
    Py_uhash_t h = 0x9E3779B9u ^ s->rank;
    h = (h ^ s->c.shard_index) * 1000003u;
    h = (h ^ s->c.shard_count) * 1000003u;
    for (unsigned k = 0; k < s->rank; k++) {
        h = (h ^ (Py_uhash_t)s->c.global_shape[k]) * 1000003u;
        h = (h ^ (Py_uhash_t)s->c.global_offset[k]) * 1000003u;
    }
    return h == (Py_uhash_t)-1 ? -2 : (Py_hash_t)h;
}

static PyType_Slot shard_slots[] = {
    {Py_tp_doc, (void *)PyDoc_STR(
                    "Shard(shard_index, shard_count, global_shape, global_offset)\n--\n\n"
                    "The shard section: this tensor as a box in a larger global tensor.\n"
                    "Immutable; compares and hashes by value.")},
    {Py_tp_new, shard_new},
    {Py_tp_repr, shard_repr},
    {Py_tp_richcompare, shard_richcompare},
    {Py_tp_hash, shard_hash},
    {Py_tp_getset, shard_getset},
    {Py_tp_traverse, hrpy_traverse_type_only},
    {Py_tp_dealloc, hrpy_dealloc_simple},
    {0, NULL},
};

static PyType_Spec shard_spec = {
    .name = "hurray.Shard",
    .basicsize = sizeof(ShardObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = shard_slots,
};

int hrpy_sections_init(PyObject *module, hrpy_state *st) {
    st->Statistics_Type = hrpy_add_type(module, &stats_spec, NULL);
    if (st->Statistics_Type == NULL) return -1;
    st->Shard_Type = hrpy_add_type(module, &shard_spec, NULL);
    return st->Shard_Type == NULL ? -1 : 0;
}
