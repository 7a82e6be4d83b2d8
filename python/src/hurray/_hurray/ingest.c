/* hurray.asarray: the generic ingest entry point (Python requirements, § copy on ingest).
 *
 * It decides nothing about bytes itself: it picks the ingest path an object
 * speaks and hands it `copy`, so every copy rule stays with that path --
 *   1. a hurray.Tensor: itself (copy=True: rebuilt over copies of its buffers,
 *      through the Tensor constructor, so the descriptor is equal);
 *   2. an object whose type implements __hurray__ (the native protocol):
 *      hurray.from_hurray, before every other protocol (zero-copy; copy=True
 *      rebuilds the result over copies);
 *   3. a SciPy sparse matrix or array: from_scipy;
 *   4. a torch.Tensor: from_torch (which synchronises a CUDA stream);
 *   5. a numpy.ndarray: from_numpy (strides, byte order, ml_dtypes);
 *   6. any other __dlpack__ producer (JAX, CuPy, ...): from_dlpack;
 *   7. anything else: numpy.asarray, then from_numpy (hurray._numpy).
 * SciPy, PyTorch and NumPy are recognised only when already imported (an
 * instance of their types cannot exist otherwise), so asarray imports nothing
 * it does not need. */
#include "state.h"

/* sys.modules[name] (borrowed), or NULL without an exception when not imported. */
PyObject *hrpy_imported(const char *name) {
    PyObject *m = PyDict_GetItemString(PyImport_GetModuleDict(), name);
    return m == Py_None ? NULL : m;
}

/* isinstance(obj, module.attr) for an imported module; 0 when the module is not imported. */
int hrpy_instance_of(PyObject *obj, const char *module, const char *attr) {
    PyObject *m = hrpy_imported(module);
    if (m == NULL) return 0;
    PyObject *cls = PyObject_GetAttrString(m, attr);
    if (cls == NULL) {
        PyErr_Clear();
        return 0;
    }
    int r = PyObject_IsInstance(obj, cls);
    Py_DECREF(cls);
    return r;
}

/* isinstance(obj, numpy.ndarray); 0 when NumPy is not imported. The class is kept in the
 * module state once found (it is never replaced), so the check per value of a save is a
 * type comparison, not a sys.modules lookup and a getattr (~2,000 instructions). */
int hrpy_is_ndarray(hrpy_state *st, PyObject *obj) {
    if (st->ndarray_type == NULL) {
        PyObject *m = hrpy_imported("numpy");
        if (m == NULL) return 0;
        PyObject *cls = PyObject_GetAttrString(m, "ndarray");
        if (cls == NULL) {
            PyErr_Clear();
            return 0;
        }
        if (!PyType_Check(cls)) { /* not NumPy's own: ask it, keep nothing */
            int r = PyObject_IsInstance(obj, cls);
            Py_DECREF(cls);
            return r;
        }
        if (st->ndarray_type == NULL) st->ndarray_type = cls;
        else Py_DECREF(cls);
    }
    return PyObject_TypeCheck(obj, (PyTypeObject *)st->ndarray_type);
}

/* type(obj) is numpy.ndarray (not a subclass); 0 when NumPy is not imported, -1 on error. */
int hrpy_is_exact_ndarray(hrpy_state *st, PyObject *obj) {
    if (st->ndarray_type == NULL) {
        int is = hrpy_is_ndarray(st, obj); /* keeps the class once found */
        if (is <= 0 || st->ndarray_type == NULL) return is < 0 ? -1 : 0;
    }
    return Py_TYPE(obj) == (PyTypeObject *)st->ndarray_type;
}

/* f(obj, copy=copy) for a function of this module looked up by name. */
static PyObject *call_path(PyObject *module, const char *name, PyObject *obj, PyObject *copy) {
    PyObject *f = PyObject_GetAttrString(module, name);
    if (f == NULL) return NULL;
    PyObject *kwnames = Py_BuildValue("(s)", "copy");
    PyObject *r = NULL;
    if (kwnames != NULL) {
        PyObject *call[2] = {obj, copy};
        r = PyObject_Vectorcall(f, call, 1, kwnames);
        Py_DECREF(kwnames);
    }
    Py_DECREF(f);
    return r;
}

/* A copy of every buffer of a tensor under the same declarations: the constructor's rebuild
 * (the rebuild obligation of § Authoring: an equal descriptor), copy=True. */
static PyObject *tensor_copy(hrpy_state *st, PyObject *t) {
    static const char *const keep[] = {"layout", "quantization", "statistics", "shard",
                                       "device", "byte_offset"};
    PyObject *kwargs = NULL, *buffers = NULL, *args = NULL, *count = NULL, *r = NULL;
    PyObject *dtype = NULL, *shape = NULL;
    count = PyObject_GetAttrString(t, "buffer_count");
    Py_ssize_t n = count ? PyLong_AsSsize_t(count) : -1;
    if (n < 0) goto done;
    buffers = PyList_New(n);
    if (buffers == NULL) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *b = PyObject_CallMethod(t, "buffer", "n", i);
        if (b == NULL) goto done;
        PyList_SET_ITEM(buffers, i, b);
    }
    kwargs = PyDict_New();
    if (kwargs == NULL || PyDict_SetItemString(kwargs, "copy", Py_True) < 0) goto done;
    for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
        PyObject *v = PyObject_GetAttrString(t, keep[k]);
        int bad = v == NULL || PyDict_SetItemString(kwargs, keep[k], v) < 0;
        Py_XDECREF(v);
        if (bad) goto done;
    }
    dtype = PyObject_GetAttrString(t, "dtype");
    shape = dtype ? PyObject_GetAttrString(t, "shape") : NULL;
    args = shape ? PyTuple_Pack(3, buffers, dtype, shape) : NULL;
    if (args != NULL) r = PyObject_Call((PyObject *)st->Tensor_Type, args, kwargs);
done:
    Py_XDECREF(count);
    Py_XDECREF(buffers);
    Py_XDECREF(kwargs);
    Py_XDECREF(dtype);
    Py_XDECREF(shape);
    Py_XDECREF(args);
    return r;
}

PyObject *hrpy_asarray(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames) {
    static const char *const names[] = {"obj", "copy"};
    PyObject *a[2];
    hrpy_state *st = hrpy_state_from_module(module);
    if (hrpy_bind("asarray", args, nargs, kwnames, names, 2, 1, 1, a) < 0) return NULL;
    PyObject *obj = a[0], *copy = a[1] ? a[1] : Py_None;
    if (copy != Py_None && !PyBool_Check(copy))
        return PyErr_Format(PyExc_TypeError, "asarray: copy must be None, True or False, not %.100s",
                            Py_TYPE(copy)->tp_name);
    int is;
    PyObject *r;
    /* 1. a hurray.Tensor */
    if (hrpy_tensor_c(st, obj, NULL) != NULL)
        return copy == Py_True ? tensor_copy(st, obj) : Py_NewRef(obj);
    if (PyObject_TypeCheck(obj, st->Composite_Type))
        return PyErr_Format(PyExc_TypeError,
                            "asarray: a hurray.Composite holds tensors and is not one (its "
                            "members are; it has no buffers to ingest)");
    /* 2. the native protocol: from_hurray(obj) never copies (it takes no copy argument), so
     * copy=True rebuilds its result over copies, as for a hurray.Tensor */
    if (PyObject_HasAttrString((PyObject *)Py_TYPE(obj), "__hurray__")) {
        PyObject *f = PyObject_GetAttrString(module, "from_hurray");
        if (f == NULL) return NULL;
        r = PyObject_CallOneArg(f, obj);
        Py_DECREF(f);
        if (r == NULL || copy != Py_True) return r;
        PyObject *c = tensor_copy(st, r);
        Py_DECREF(r);
        return c;
    }
    /* 3. SciPy sparse */
    PyObject *sparse = hrpy_imported("scipy.sparse");
    if (sparse != NULL) {
        PyObject *t = PyObject_CallMethod(sparse, "issparse", "O", obj);
        is = t == NULL ? -1 : PyObject_IsTrue(t);
        Py_XDECREF(t);
        if (is < 0) return NULL;
        if (is) return call_path(module, "from_scipy", obj, copy);
    }
    /* 4. PyTorch, 5. NumPy */
    if ((is = hrpy_instance_of(obj, "torch", "Tensor")) != 0)
        return is < 0 ? NULL : call_path(module, "from_torch", obj, copy);
    if ((is = hrpy_is_ndarray(st, obj)) != 0)
        return is < 0 ? NULL : call_path(module, "from_numpy", obj, copy);
    /* 6. any other DLPack producer */
    if (PyObject_HasAttrString((PyObject *)Py_TYPE(obj), "__dlpack__"))
        return call_path(module, "from_dlpack", obj, copy);
    /* 7. an array-like */
    return hrpy_bridge_asarray(st, obj, copy);
}
