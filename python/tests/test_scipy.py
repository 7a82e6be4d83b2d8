"""SciPy sparse interop and the array-shaped constructors: from_scipy, Tensor.to_scipy,
sparse_coo, asarray.

Python requirements § Layouts and Sparse Tensor Support (".to_scipy() — MUST convert a CSR or CSC tensor to
the corresponding scipy.sparse matrix type without copying where scipy's memory layout is
compatible"; "hurray.from_scipy(matrix) — MUST wrap a scipy.sparse matrix as a hurray.Tensor
without copying"; accessors that do not apply raise AttributeError), § copy on ingest ("For a
multi-buffer source the decision MUST be made per buffer"), § Dynamic dimensions, § Buffer
Lifetime and Ownership; memory-layout.md § COO, § CSR and CSC, § Index contents
(HR-LAYOUT-24). Real SciPy, NumPy, PyTorch and JAX; no mocks.
"""
import gc
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import hurray
from catalog import layout_tensors
from hurray import CooLayout, CscLayout, CsrLayout, InvalidDescriptorError

# Every element type SciPy supports (scipy.sparse's supported_dtypes) that hurray has: all but
# longdouble and clongdouble, which hurray has no type for (refused: test_REQ_SCIPY_FROM_refusals).
SCIPY_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                "uint64", "float32", "float64", "complex64", "complex128"]
CLASSES = {
    "csr": (sp.csr_matrix, sp.csr_array, CsrLayout),
    "csc": (sp.csc_matrix, sp.csc_array, CscLayout),
    "coo": (sp.coo_matrix, sp.coo_array, CooLayout),
}


def aligned(a) -> np.ndarray:
    """A copy of `a` allocated 64-byte aligned (hurray.aligned_allocator)."""
    with hurray.aligned_allocator():
        out = np.array(a, copy=True)
    assert out.ctypes.data % 64 == 0 or out.nbytes == 0
    return out


def misaligned(a) -> np.ndarray:
    a = np.asarray(a)
    flat = aligned(np.concatenate([a[:1], a]))[1:]
    assert flat.ctypes.data % 64 != 0
    return flat


def addr(a) -> int:
    return np.asarray(a).ctypes.data


def buf_addr(t, i) -> int:
    return np.frombuffer(t.buffer(i), np.uint8).ctypes.data


def dense(shape, dtype, seed, density=0.4):
    rng = np.random.default_rng(seed)
    mask = rng.random(shape) < density
    if np.dtype(dtype) == np.bool_:
        vals = np.ones(shape, bool)
    elif np.dtype(dtype).kind == "c":
        vals = (rng.integers(1, 9, shape) + 1j * rng.integers(-4, 5, shape)).astype(dtype)
    else:
        vals = rng.integers(1, 100, shape).astype(dtype)
    return np.where(mask, vals, np.zeros((), dtype)).astype(dtype)


def shared_csr(cls, d, dtype="float64", fmt="csr"):
    """A SciPy object whose data and int64 index arrays are 64-byte aligned, so nothing needs
    a copy. Matrices are made from the array class: their own constructors narrow int64
    indices to int32 (a copy SciPy makes)."""
    m = getattr(sp, f"{fmt}_array")(d.astype(dtype))
    if fmt == "coo":
        block = aligned(np.stack(m.coords).astype(np.int64))
        arr = sp.coo_array((aligned(m.data), tuple(block)), shape=m.shape)
    else:
        arr = getattr(sp, f"{fmt}_array")(
            (aligned(m.data), aligned(m.indices.astype(np.int64)),
             aligned(m.indptr.astype(np.int64))), shape=m.shape)
    return arr if cls is getattr(sp, f"{fmt}_array") else cls(arr)


def same(m1, m2):
    assert m1.shape == m2.shape and m1.dtype == m2.dtype and m1.nnz == m2.nnz
    assert (m1.toarray() == m2.toarray()).all()


# ---- from_scipy ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", CLASSES)
@pytest.mark.parametrize("kind", ["matrix", "array"])
def test_REQ_SCIPY_FROM_layout_nnz_and_shape_derived(fmt, kind):
    cls = CLASSES[fmt][0 if kind == "matrix" else 1]
    d = dense((5, 7), np.float64, 1)
    m = cls(d)
    t = hurray.from_scipy(m)
    assert isinstance(t, hurray.Tensor) and t.layout == CLASSES[fmt][2](nnz=m.nnz)
    assert t.nnz == m.nnz and t.shape == (5, 7) and t.dtype is hurray.float64
    assert (np.asarray(t.values) == m.data).all()
    if fmt == "csr":
        assert np.asarray(t.col_indices).tolist() == m.indices.tolist()
        assert np.asarray(t.row_ptr).tolist() == m.indptr.tolist()
    elif fmt == "csc":
        assert np.asarray(t.row_indices).tolist() == m.indices.tolist()
        assert np.asarray(t.col_ptr).tolist() == m.indptr.tolist()
    else:
        assert np.asarray(t.indices).tolist() == [list(c) for c in m.coords]
    same(t.to_scipy(array=kind == "array"), m)


@pytest.mark.parametrize("fmt,conversion", [("bsr", ".tocsr()"), ("dia", ".tocsr()"),
                                            ("lil", ".tocsr()"), ("dok", ".tocoo()")])
def test_REQ_SCIPY_FROM_other_formats_name_the_conversion(fmt, conversion):
    for cls in (getattr(sp, f"{fmt}_matrix"), getattr(sp, f"{fmt}_array")):
        m = cls(np.eye(4))
        with pytest.raises(TypeError, match=f"the {fmt} format has no hurray layout") as e:
            hurray.from_scipy(m)
        assert conversion in str(e.value)
        t = hurray.from_scipy(eval("m" + conversion))  # the conversion it names works
        assert t.nnz == 4


def test_REQ_SCIPY_FROM_refusals():
    with pytest.raises(TypeError, match="expected a scipy.sparse matrix or array, not list"):
        hurray.from_scipy([[1, 0], [0, 1]])
    with pytest.raises(TypeError, match="numpy.ndarray"):
        hurray.from_scipy(np.eye(2))
    with pytest.raises(TypeError, match="copy must be None, True or False"):
        hurray.from_scipy(sp.csr_array(np.eye(2)), copy=1)
    one_d = sp.csr_array(np.array([0.0, 1.0, 0.0]))
    assert one_d.shape == (3,)
    with pytest.raises(hurray.UnsupportedError, match=r"1-D csr matrix has no hurray form.*tocoo"):
        hurray.from_scipy(one_d)
    t = hurray.from_scipy(one_d.tocoo())  # 1-D COO is fine
    assert t.shape == (3,) and t.layout == CooLayout(nnz=1)
    with pytest.raises(hurray.UnsupportedError, match="has no hurray element type"):
        hurray.from_scipy(sp.csr_array(np.eye(2, dtype=np.longdouble)))


def test_REQ_SCIPY_FROM_nd_coo_array():
    d = np.zeros((2, 3, 4))
    d[0, 1, 2], d[1, 2, 3] = 5.0, 7.0
    m = sp.coo_array(d)
    t = hurray.from_scipy(m)
    assert t.shape == (2, 3, 4) and t.layout == CooLayout(nnz=2)
    back = t.to_scipy()  # SciPy matrices are 2-D: an n-D coo comes back as a coo_array
    assert isinstance(back, sp.coo_array) and (back.toarray() == d).all()


# ---- round trips: every dtype, pointers compared -------------------------------------------------


@pytest.mark.parametrize("fmt", CLASSES)
@pytest.mark.parametrize("dtype", SCIPY_DTYPES)
def test_REQ_SCIPY_ROUNDTRIP_every_dtype_zero_copy_both_ways(fmt, dtype):
    d = dense((6, 5), dtype, 7)
    for cls in CLASSES[fmt][:2]:
        m = shared_csr(cls, d, dtype, fmt)
        t = hurray.from_scipy(m, copy=False)  # nothing needs a copy: none is made
        assert t.dtype is getattr(hurray, dtype)
        assert buf_addr(t, 0) == addr(m.data)
        if fmt == "coo":
            assert buf_addr(t, 1) == addr(m.coords[0])
        else:
            assert buf_addr(t, 1) == addr(m.indices) and buf_addr(t, 2) == addr(m.indptr)
        back = t.to_scipy(array=cls is CLASSES[fmt][1])
        assert type(back) is cls
        same(back, m)
        # the tensor's buffers, as SciPy holds them: values and int64 views of the uint64 indices
        assert addr(back.data) == buf_addr(t, 0)
        if fmt == "coo":
            nnz = t.nnz
            assert [addr(c) for c in back.coords] == [buf_addr(t, 1) + 8 * nnz * k for k in range(2)]
            assert all(c.dtype == np.int64 for c in back.coords)
        else:
            assert addr(back.indices) == buf_addr(t, 1) and addr(back.indptr) == buf_addr(t, 2)
            assert back.indices.dtype == back.indptr.dtype == np.int64
        # and back into hurray: the same memory again (a to_scipy matrix needs no copy)
        again = hurray.from_scipy(back, copy=False)
        assert [buf_addr(again, i) for i in range(again.buffer_count)] == [
            buf_addr(t, i) for i in range(t.buffer_count)]


def owner(a):
    """The object at the end of an ndarray's .base chain."""
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


def test_REQ_SCIPY_TO_array_bases_are_the_tensor_and_writes_go_through():
    t = hurray.from_scipy(sp.csr_array(np.eye(3)))  # int32 indices: widened, hurray's own
    m = t.to_scipy(array=True)
    for a in (m.data, m.indices, m.indptr):
        assert owner(a) is t  # SciPy may slice our view; the chain ends at the tensor
    assert m.data.flags.writeable  # the values are writable: the check never reads them
    # index memory hurray owns is handed out read-only (checked once: HR-LAYOUT-24)
    assert not m.indices.flags.writeable and not m.indptr.flags.writeable
    m.data[0] = 42.0  # writes through: it is the tensor's memory
    assert np.asarray(t.values)[0] == 42.0


def test_REQ_SCIPY_TO_attribute_error_where_scipy_has_no_form():
    for name, t in layout_tensors():  # every layout
        has = t.layout.name in ("coo", "csr", "csc")
        assert hasattr(t, "to_scipy") is has, name
        if not has:
            with pytest.raises(AttributeError, match=rf"the {t.layout.name} layout has no "
                                                     r"attribute 'to_scipy'"):
                t.to_scipy()
        else:
            assert t.to_scipy().shape == t.shape


def test_REQ_SCIPY_TO_refusals_name_the_problem():
    f16 = hurray.Tensor([np.zeros(2, np.uint8), np.zeros(2, np.uint64), np.array([0, 1, 2], np.uint64)],
                        hurray.float8_e4m3fn, (2, 2), layout=CsrLayout(nnz=2))
    with pytest.raises(hurray.UnsupportedError, match="to_scipy: float8_e4m3fn is a Tier 2"):
        f16.to_scipy()
    dyn = hurray.Tensor([np.zeros(1), np.zeros(2, np.uint64)], hurray.float64, (None, 3),
                        layout=CooLayout(nnz=1))
    with pytest.raises(hurray.UnsupportedError, match=r"to_scipy: shape\[0\] is dynamic"):
        dyn.to_scipy()
    q = hurray.Tensor([np.zeros(2, np.int8), np.zeros(2, np.uint64), np.array([0, 1, 2], np.uint64)],
                      hurray.int8, (2, 2), layout=CsrLayout(nnz=2),
                      quantization=hurray.PerTensorAffine(scale=0.5, zero_point=0))
    with pytest.raises(hurray.UnsupportedError, match="quantized"):
        q.to_scipy()
    t = hurray.from_scipy(sp.csr_array(np.eye(2)))
    synced = hurray._hurray._tensor_with_sync_mode(t, 1, 2)
    with pytest.raises(hurray.UnsupportedError, match="sync_mode"):
        synced.to_scipy()
    with pytest.raises(TypeError):
        t.to_scipy(True)  # keyword-only


# ---- index contents (HR-LAYOUT-24) -----------------------------------------------------------


def test_REQ_SPARSE_INDEX_CONTENTS_checked_both_ways_HR_LAYOUT_24():
    data = np.ones(2)
    bad = sp.csr_array((data, np.array([0, 9]), np.array([0, 1, 2])), shape=(2, 3))
    with pytest.raises(InvalidDescriptorError, match=r"col_indices\[1\] = 9 is not below") as e:
        hurray.from_scipy(bad)
    assert e.value.code == "INDEX" and e.value.field == "col_indices[1]"
    neg = sp.csc_array((data, np.array([0, -1], np.int64), np.array([0, 1, 2])), shape=(2, 2))
    with pytest.raises(InvalidDescriptorError, match=r"\(-1 as int64\)"):
        hurray.from_scipy(neg)
    neg32 = sp.csr_array((data, np.array([-2, 0], np.int32), np.array([0, 1, 2], np.int32)),
                         shape=(2, 2))
    with pytest.raises(InvalidDescriptorError, match=r"col_indices\[0\].*\(-2 as int64\)"):
        hurray.from_scipy(neg32)
    ptr = sp.csr_array((data, np.array([0, 1]), np.array([0, 2, 2])), shape=(2, 2))
    ptr.indptr = np.array([0, 2, 1])  # SciPy's constructor would refuse it; assignment does not
    with pytest.raises(InvalidDescriptorError, match=r"row_ptr\[2\] = 1 is below row_ptr\[1\] = 2"):
        hurray.from_scipy(ptr)
    ptr.indptr = np.array([1, 2, 2])
    with pytest.raises(InvalidDescriptorError, match=r"row_ptr\[0\] = 1; the pointers start at 0"):
        hurray.from_scipy(ptr)
    # nnz is indptr[-1], as SciPy's own: longer data and indices are over-sized buffers
    long = sp.csr_array((data, np.array([0, 1]), np.array([0, 1, 1])), shape=(2, 2))
    assert hurray.from_scipy(long).nnz == long.nnz == 1
    coo = sp.coo_array((data, (np.array([0, 2]), np.array([0, 0]))), shape=(3, 1))
    coo.coords = (np.array([0, 3]), np.array([0, 0]))
    with pytest.raises(InvalidDescriptorError, match=r"indices\[0\]\[1\] = 3 is not below shape\[0\]"):
        hurray.from_scipy(coo)
    # a tensor built by hand, or read from a file, is checked before SciPy indexes with it
    t = hurray.Tensor([np.ones(2), np.array([0, 5], np.uint64), np.array([0, 1, 2], np.uint64)],
                      hurray.float64, (2, 3), layout=CsrLayout(nnz=2))
    with pytest.raises(InvalidDescriptorError, match=r"col_indices\[1\] = 5"):
        t.to_scipy()
    big = hurray.Tensor([np.ones(1), np.array([0, 2 ** 63], np.uint64)], hurray.float64, (2, 2),
                        layout=CooLayout(nnz=1))
    with pytest.raises(InvalidDescriptorError, match="9223372036854775808"):
        big.to_scipy()  # never handed to SciPy as a negative int64


def test_REQ_SPARSE_INDEX_CONTENTS_rechecked_at_every_export_when_borrowed_HR_LAYOUT_24():
    """Index memory shared with the caller (int64, copy=False) is re-read at every to_scipy:
    its owner can write it at any time (memory-layout.md § Index contents, § Checked once)."""
    ind, ptr = aligned(np.array([0, 2, 1], np.int64)), aligned(np.array([0, 2, 3], np.int64))
    data = aligned(np.ones(3))
    t = hurray.from_scipy(sp.csr_array((data, ind, ptr), shape=(2, 3), copy=False), copy=False)
    m = t.to_scipy(array=True)
    assert addr(m.indices) == addr(ind) and addr(m.indptr) == addr(ptr)
    assert m.indices.flags.writeable  # the caller's memory: writable, as the caller's array is
    ind[1] = 3  # out of range
    for array in (False, True):
        with pytest.raises(InvalidDescriptorError, match=r"col_indices\[1\] = 3 is not below"):
            t.to_scipy(array=array)
    with pytest.raises(InvalidDescriptorError, match=r"col_indices\[1\] = 3 is not below"):
        t.to_scipy(copy=True)
    ind[1] = -1  # negative: never handed to SciPy as an index
    with pytest.raises(InvalidDescriptorError, match=r"col_indices\[1\].*\(-1 as int64\)"):
        t.to_scipy()
    ptr[1] = 4
    ind[1] = 2
    with pytest.raises(InvalidDescriptorError, match=r"row_ptr\[1\] = 4"):
        t.to_scipy()
    # sparse_coo over the caller's int64 block: borrowed too
    block = aligned(np.array([[0, 1], [2, 0]], np.int64))
    coo = hurray.sparse_coo(block, aligned(np.ones(2)), (2, 3), copy=False)
    assert coo.to_scipy().coords[0].flags.writeable
    block[1, 1] = 3
    with pytest.raises(InvalidDescriptorError, match=r"indices\[1\]\[1\] = 3"):
        coo.to_scipy()


def _owned_sparse(tmp_path):
    """(name, tensor) for every way a sparse tensor's index memory becomes hurray's own:
    imported (int32, widened), copied (copy=True), sparse_coo of int32, read from a file (copy
    and mmap) and from a stream."""
    data = np.array([1.0, 2.0, 3.0])
    ind32, ptr32 = np.array([2, 0, 1], np.int32), np.array([0, 2, 3], np.int32)
    src = sp.csr_matrix((data, ind32, ptr32), shape=(2, 3), copy=False)
    out = [("from_scipy int32", hurray.from_scipy(src)),
           ("from_scipy csc int32", hurray.from_scipy(sp.csc_matrix(src))),
           ("from_scipy copy=True", hurray.from_scipy(sp.csr_array(
               (aligned(data), aligned(ind32.astype(np.int64)),
                aligned(ptr32.astype(np.int64))), shape=(2, 3)), copy=True)),
           ("from_scipy coo", hurray.from_scipy(sp.coo_array(src))),
           ("sparse_coo int32", hurray.sparse_coo(np.array([[1, 0], [2, 1]], np.int32),
                                                  np.ones(2), (2, 3)))]
    path = tmp_path / "owned.hurray"
    hurray.save(path, {"csr": out[0][1], "coo": out[4][1]})
    for mmap in (False, True):
        loaded = hurray.load(path, mmap=mmap)
        out += [(f"load mmap={mmap} csr", loaded["csr"]), (f"load mmap={mmap} coo", loaded["coo"])]
    w = hurray.StreamWriter()
    w.write(out[0][1])
    w.finish()
    out.append(("stream", next(iter(hurray.StreamReader(w.getvalue())))))
    return out


def _index_views(t):
    """Every public way to reach a sparse tensor's index memory, as (what, object)."""
    last = 1 if t.layout.name == "coo" else 2
    comps = ["indices"] if t.layout.name == "coo" else (
        ["col_indices", "row_ptr"] if t.layout.name == "csr" else ["row_indices", "col_ptr"])
    m = t.to_scipy(array=True)
    idx = list(m.coords) if t.layout.name == "coo" else [m.indices, m.indptr]
    views = [(f"to_scipy index {k}", a) for k, a in enumerate(idx)]
    if t.layout.name != "coo" or t.ndim == 2:
        mm = t.to_scipy()
        views += [(f"to_scipy() matrix index {k}", a) for k, a in
                  enumerate(list(mm.coords) if t.layout.name == "coo" else [mm.indices, mm.indptr])]
    native = hurray.from_hurray(t)  # the native protocol carries the read-only flag
    for i in range(1, last + 1):
        views += [(f"buffer({i})", t.buffer(i)), (f"from_hurray buffer({i})", native.buffer(i)),
                  (f"Tensor over buffer({i})", np.asarray(hurray.Tensor(
                      [t.buffer(i)], hurray.uint8, (t.buffer(i).nbytes,))))]
    for c in comps:
        v = getattr(t, c)
        views += [(f"{c} asarray", np.asarray(v)), (f"{c} __array__", v.__array__()),
                  (f"{c} buffer(0)", v.buffer(0)),
                  (f"{c} from_dlpack", np.from_dlpack(v)),
                  (f"{c} hurray.asarray", np.asarray(hurray.asarray(v))),
                  (f"{c} from_hurray", np.asarray(hurray.from_hurray(v)))]
    return views


def test_REQ_SPARSE_INDEX_CONTENTS_checked_once_read_only_when_owned_HR_LAYOUT_26(tmp_path):
    """Index memory hurray owns is checked once and never handed out writable (memory-layout.md
    § Checked once): no public path can write it, so the first check stays true and to_scipy
    does not read the index buffers again."""
    import ctypes

    for name, t in _owned_sparse(tmp_path):
        first = t.to_scipy(array=True)  # checked (once) here; no copy
        assert addr(first.coords[0] if t.layout.name == "coo" else first.indices) == \
            buf_addr(t, 1), name
        for what, v in _index_views(t):
            if isinstance(v, memoryview):
                assert v.readonly, (name, what)
                with pytest.raises(TypeError):
                    v[0] = 1
            else:
                assert not v.flags.writeable, (name, what)
                with pytest.raises(ValueError, match="read-only"):
                    v[0] = 7
                with pytest.raises(ValueError):
                    v.flags.writeable = True  # NumPy refuses: the base is not writable
        # to_torch gets a copy (torch ignores DLPack's READ_ONLY flag: HR-DLPACK-4), and
        # copy=False refuses; the legacy capsule, which cannot say read-only, is refused
        comp = t.indices if t.layout.name == "coo" else (
            t.col_indices if t.layout.name == "csr" else t.row_indices)
        assert comp.to_torch().data_ptr() != addr(comp)
        with pytest.raises(BufferError, match="read-only"):
            comp.to_torch(copy=False)
        with pytest.raises(BufferError, match="read-only"):
            comp.__dlpack__()
        # the index memory is not read again: a write no public path could make (ctypes, behind
        # hurray's back) goes unseen -- the proof that the check ran once, not per export
        buf = np.frombuffer(t.buffer(1), np.uint64)
        keep = int(buf[0])
        ctypes.c_uint64.from_address(buf.ctypes.data).value = 1 << 40
        try:
            if t.layout.name == "coo":  # SciPy's coo constructor checks bounds itself
                with pytest.raises(ValueError, match="exceeds matrix dimension") as e:
                    t.to_scipy(array=True)
                assert type(e.value) is ValueError, name  # SciPy's, not hurray's check
            else:
                assert t.to_scipy(array=True).indices[0] == 1 << 40, name
        finally:
            ctypes.c_uint64.from_address(buf.ctypes.data).value = keep


def test_REQ_SCIPY_TO_in_place_methods_and_copy_true_HR_LAYOUT_26():
    """SciPy's in-place methods on read-only index arrays: a ValueError, nothing written;
    to_scipy(copy=True): writable arrays of the matrix's own, holding nothing of the tensor."""
    data = np.array([1.0, 0.0, 3.0])
    src = sp.csr_matrix((data, np.array([2, 0, 1], np.int32), np.array([0, 2, 3], np.int32)),
                        shape=(2, 3))  # unsorted minor indices, a stored zero
    t = hurray.from_scipy(src)
    for array in (False, True):
        m = t.to_scipy(array=array)
        assert not m.has_sorted_indices
        for method in ("sort_indices", "sum_duplicates", "eliminate_zeros"):
            with pytest.raises(ValueError, match="read-only"):
                getattr(m, method)()
        assert list(m.indices) == [2, 0, 1] and list(m.data) == [1.0, 0.0, 3.0]
        same(m.sorted_indices(), src.sorted_indices())  # the copying forms work
        same(m.tocsc(), src.tocsc())
        np.testing.assert_array_equal(m @ np.ones(3), src @ np.ones(3))
    # canonical contents: the in-place methods that find nothing to do write nothing
    canon = hurray.from_scipy(sp.csr_matrix(np.eye(3)))
    mc = canon.to_scipy()
    mc.sort_indices()
    mc.sum_duplicates()
    assert mc.count_nonzero() == 3
    with pytest.raises(ValueError, match="read-only"):
        mc.eliminate_zeros()  # always writes (SciPy's csr_eliminate_zeros)
    # SciPy's COO methods build new arrays: they work over read-only coords
    cm = hurray.from_scipy(sp.coo_matrix(src)).to_scipy()
    assert not cm.coords[0].flags.writeable
    cm.sum_duplicates()
    cm.eliminate_zeros()
    assert cm.nnz == 2 and cm.coords[0].flags.writeable
    for array in (False, True):
        c = t.to_scipy(array=array, copy=True)
        arrays = [c.data, c.indices, c.indptr]
        assert all(a.flags.writeable for a in arrays)
        assert all(owner(a) is not t for a in arrays)
        assert addr(c.indices) != buf_addr(t, 1) and addr(c.data) != buf_addr(t, 0)
        assert c.indices.dtype == np.int64
        c.sort_indices()
        c.eliminate_zeros()
        expect = src.copy()
        expect.sort_indices()
        expect.eliminate_zeros()
        assert list(c.indices) == list(expect.indices) == [2, 1]
        assert list(t.to_scipy().indices) == [2, 0, 1]  # the tensor is untouched
    coo = hurray.from_scipy(sp.coo_array(src)).to_scipy(copy=True)
    assert all(a.flags.writeable for a in coo.coords)
    for bad in (1, "yes"):
        with pytest.raises(TypeError, match="copy must be None, True or False"):
            t.to_scipy(copy=bad)
    with pytest.raises(TypeError):
        t.to_scipy(True)  # keyword-only
    assert t.to_scipy(copy=False).indices.ctypes.data == buf_addr(t, 1)  # never needs a copy
    # lifetimes: a copy holds nothing; a view keeps the tensor alive through its arrays
    ref = weakref.ref(t)
    c, v = t.to_scipy(copy=True), t.to_scipy()
    del t, m, arrays
    gc.collect()
    assert ref() is not None
    del v
    gc.collect()
    assert ref() is None
    assert list(c.indices) == [2, 0, 1]


# ---- importing index arrays (HR-LAYOUT-25): widened and checked in one pass --------------------

# How each index array reaches the format: read by libhurray's import (int32, int64, uint32,
# uint64), or cast by NumPy first (int16, uint16, byte-swapped, strided), then checked.
IMPORT_SOURCES = {
    "int32": lambda a: a.astype(np.int32),
    "int64-misaligned": lambda a: misaligned(a.astype(np.int64)),
    "uint32": lambda a: a.astype(np.uint32),
    "uint64-misaligned": lambda a: misaligned(a.astype(np.uint64)),
    "int16": lambda a: a.astype(np.int16),
    "uint16": lambda a: a.astype(np.uint16),
    "int64-big-endian": lambda a: a.astype(">i8"),
    "int32-strided": lambda a: np.repeat(a.astype(np.int32), 2, axis=-1)[..., ::2],
}


@pytest.mark.parametrize("source", IMPORT_SOURCES)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_REQ_SPARSE_INDEX_CONTENTS_import_every_index_type_HR_LAYOUT_25(fmt, source):
    make = IMPORT_SOURCES[source]
    d = dense((37, 29), np.float64, 11)  # > 8 entries per pass: the unrolled loop and its tail
    ref = getattr(sp, f"{fmt}_array")(d)
    data, idx, ptr = aligned(ref.data), make(ref.indices), make(ref.indptr)
    m = getattr(sp, f"{fmt}_array")((data, idx, ptr), shape=ref.shape)
    m.indices, m.indptr = idx, ptr  # SciPy's constructor may have converted them
    t = hurray.from_scipy(m)
    minor, major = ("col_indices", "row_ptr") if fmt == "csr" else ("row_indices", "col_ptr")
    assert np.asarray(getattr(t, minor)).tolist() == ref.indices.tolist()
    assert np.asarray(getattr(t, major)).tolist() == ref.indptr.tolist()
    assert buf_addr(t, 0) == addr(data)  # values shared, the index buffers are the tensor's own
    assert buf_addr(t, 1) != addr(idx) and buf_addr(t, 1) % 64 == 0
    assert (t.to_scipy().toarray() == d).all()
    with pytest.raises(ValueError, match=f"from_scipy: indices .*copy=False"):
        hurray.from_scipy(m, copy=False)
    # a fault anywhere is refused with the converted value, as the format's own check says
    for pos in (0, 5, len(ref.indices) - 1):
        bad = ref.indices.copy()
        bad[pos] = d.shape[1 if fmt == "csr" else 0]
        m.indices = make(bad)
        with pytest.raises(InvalidDescriptorError, match=rf"{minor}\[{pos}\] = {bad[pos]} is not"):
            hurray.from_scipy(m)
        if np.dtype(m.indices.dtype).kind == "i":
            bad[pos] = -3
            m.indices = make(bad)
            with pytest.raises(InvalidDescriptorError,
                               match=rf"{minor}\[{pos}\] = 18446744073709551613 \(-3 as int64\)"):
                hurray.from_scipy(m)
    m.indices = make(ref.indices)
    badptr = ref.indptr.copy()
    badptr[4] = badptr[3] - 1  # row 3 holds entries (dense() at 0.4), so this decreases
    assert badptr[3] > 0 and badptr[4] < badptr[3]
    m.indptr = make(badptr)
    with pytest.raises(InvalidDescriptorError,
                       match=rf"{major}\[4\] = {badptr[4]} is below {major}\[3\] = {badptr[3]}"):
        hurray.from_scipy(m)


@pytest.mark.parametrize("source", IMPORT_SOURCES)
def test_REQ_SPARSE_COO_import_every_index_type_HR_LAYOUT_25(source):
    make = IMPORT_SOURCES[source]
    d = dense((3, 19, 4), np.float32, 12)
    coords = np.stack(np.nonzero(d))
    values = aligned(d[tuple(coords)])
    t = hurray.sparse_coo(make(coords), values, d.shape)
    assert np.asarray(t.indices).tolist() == coords.tolist()
    assert buf_addr(t, 0) == addr(values)
    assert (t.to_scipy().toarray() == d).all()
    rows = tuple(make(c) for c in coords)  # SciPy's coords: one array per dimension
    m = sp.coo_array((values, rows), shape=d.shape)
    m.coords = rows
    assert np.asarray(hurray.from_scipy(m).indices).tolist() == coords.tolist()
    bad = coords.copy()
    bad[2, -1] = 4
    with pytest.raises(InvalidDescriptorError,
                       match=rf"indices\[2\]\[{coords.shape[1] - 1}\] = 4 is not below shape\[2\]"):
        hurray.sparse_coo(make(bad), values, d.shape)
    m.coords = tuple(make(c) for c in bad)
    with pytest.raises(InvalidDescriptorError, match=r"indices\[2\]"):
        hurray.from_scipy(m)


def test_REQ_COPY_PER_BUFFER_int64_shared_int32_widened_HR_LAYOUT_25():
    """int64 indices need no copy (the check proves them non-negative, so their bytes are the
    format's uint64); int32 ones are widened. Pointers compared, lifetimes by weakref."""
    d = dense((40, 30), np.float64, 13)
    ref = sp.csr_array(d)
    data = aligned(ref.data)
    i64, p64 = aligned(ref.indices.astype(np.int64)), aligned(ref.indptr.astype(np.int64))
    m64 = sp.csr_array((data, i64, p64), shape=ref.shape)
    assert m64.indices is i64 or np.shares_memory(m64.indices, i64)
    t = hurray.from_scipy(m64, copy=False)
    assert [buf_addr(t, i) for i in range(3)] == [addr(data), addr(i64), addr(p64)]
    back = t.to_scipy(array=True)
    assert [addr(back.data), addr(back.indices), addr(back.indptr)] == [addr(data), addr(i64),
                                                                         addr(p64)]
    refs = [weakref.ref(a) for a in (data, i64, p64)]
    del m64, data, i64, p64
    gc.collect()
    assert all(r() is not None for r in refs)  # the tensor (and back, over it) holds them
    del t
    gc.collect()
    assert all(r() is not None for r in refs)
    del back
    gc.collect()
    assert all(r() is None for r in refs)
    i32, p32 = aligned(ref.indices.astype(np.int32)), aligned(ref.indptr.astype(np.int32))
    m32 = sp.csr_matrix((aligned(ref.data), i32, p32), shape=ref.shape)
    assert m32.indices.dtype == np.int32
    with pytest.raises(ValueError, match="from_scipy: indices is a 32-bit signed integer array"):
        hurray.from_scipy(m32, copy=False)
    t32 = hurray.from_scipy(m32)
    assert buf_addr(t32, 1) not in (addr(i32), addr(p32)) and buf_addr(t32, 1) % 64 == 0
    r32 = [weakref.ref(m32.indices), weakref.ref(m32.indptr)]
    del m32, i32, p32
    gc.collect()
    assert all(r() is None for r in r32)  # the widened copies hold nothing of the source
    assert (t32.to_scipy().toarray() == d).all()


# ---- non-canonical input: kept as it is ----------------------------------------------------------


def test_REQ_SCIPY_NONCANONICAL_unsorted_and_duplicates_kept():
    data, idx, ptr = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2, 0, 2, 1]), np.array([0, 3, 4])
    m = sp.csr_array((data, idx, ptr), shape=(2, 3))
    assert not m.has_canonical_format
    t = hurray.from_scipy(m)
    assert np.asarray(t.col_indices).tolist() == [2, 0, 2, 1]  # not sorted, not summed
    assert np.asarray(t.values).tolist() == [1.0, 2.0, 3.0, 4.0]
    back = t.to_scipy()
    assert back.indices.tolist() == [2, 0, 2, 1] and back.nnz == 4
    assert back.toarray().tolist() == [[2.0, 0.0, 4.0], [0.0, 4.0, 0.0]]  # SciPy sums them
    c = sp.coo_array((np.array([1.0, 5.0]), (np.array([1, 1]), np.array([0, 0]))), shape=(2, 2))
    tc = hurray.from_scipy(c)
    assert np.asarray(tc.indices).tolist() == [[1, 1], [0, 0]] and tc.nnz == 2
    assert hurray.from_scipy(tc.to_scipy()).nnz == 2


# ---- copy, per buffer ----------------------------------------------------------------------------


def test_REQ_COPY_PER_BUFFER_from_scipy():
    base = shared_csr(sp.csr_array, dense((4, 6), np.float64, 3))
    data, indices = base.data, base.indices
    indptr = misaligned(base.indptr)
    m = sp.csr_array((data, indices, indptr), shape=base.shape)
    t = hurray.from_scipy(m)  # None: each buffer on its own
    assert buf_addr(t, 0) == addr(data) and buf_addr(t, 1) == addr(indices)
    assert buf_addr(t, 2) != addr(indptr) and buf_addr(t, 2) % 64 == 0
    assert t.buffer_handles[2].alignment >= 64
    with pytest.raises(ValueError, match="from_scipy: indptr is not 64-byte aligned.*copy=False"):
        hurray.from_scipy(m, copy=False)
    c = hurray.from_scipy(m, copy=True)
    assert all(buf_addr(c, i) not in (addr(data), addr(indices), addr(indptr)) for i in range(3))
    assert (c.to_scipy().toarray() == m.toarray()).all()
    # SciPy's int32 indices: widened into uint64, always a copy
    m32 = sp.csr_matrix(dense((4, 6), np.float64, 4))
    assert m32.indices.dtype == np.int32
    m32a = aligned_data(m32)
    with pytest.raises(ValueError, match=r"from_scipy: indices is a 32-bit signed integer array; "
                                         r"hurray index buffers are uint64"):
        hurray.from_scipy(m32a, copy=False)
    t32 = hurray.from_scipy(m32a)
    assert buf_addr(t32, 0) == addr(m32a.data)  # the aligned data is still shared
    assert buf_addr(t32, 1) != addr(m32a.indices) and buf_addr(t32, 2) != addr(m32a.indptr)
    assert (t32.to_scipy().toarray() == m32.toarray()).all()
    # values: misaligned data is copied, the (shared) int64 indices are not
    m2 = sp.csr_array((misaligned(base.data), indices, base.indptr), shape=base.shape)
    t2 = hurray.from_scipy(m2)
    assert buf_addr(t2, 0) != addr(m2.data) and buf_addr(t2, 1) == addr(indices)
    with pytest.raises(ValueError, match="from_scipy: data is not 64-byte aligned"):
        hurray.from_scipy(m2, copy=False)
    # big-endian data: copied into little-endian values (hurray buffers are little-endian)
    m3 = sp.csr_array((aligned(base.data.astype(">f8")), indices, base.indptr), shape=base.shape)
    assert m3.data.dtype.byteorder == ">"
    with pytest.raises(ValueError, match="from_scipy: data is big-endian"):
        hurray.from_scipy(m3, copy=False)
    t3 = hurray.from_scipy(m3)
    assert np.asarray(t3.values).tolist() == base.data.tolist() and buf_addr(t3, 1) == addr(indices)


def aligned_data(m):
    """m with its data array replaced by an aligned copy (indices untouched)."""
    m = m.copy()
    m.data = aligned(m.data)
    return m


def test_REQ_COPY_PER_BUFFER_coo_coords_one_block():
    m = sp.coo_array(dense((5, 5), np.float32, 5))  # separate int32 coords
    m.data = aligned(m.data)
    with pytest.raises(ValueError, match="from_scipy: coords is a 32-bit"):
        hurray.from_scipy(m, copy=False)
    m64 = sp.coo_array((aligned(m.data), tuple(aligned(c.astype(np.int64)) for c in m.coords)),
                       shape=m.shape)
    with pytest.raises(ValueError, match="coords are separate arrays"):
        hurray.from_scipy(m64, copy=False)
    t = hurray.from_scipy(m64)  # one copy into the (ndim, nnz) block; data shared
    assert buf_addr(t, 0) == addr(m64.data)
    assert (t.to_scipy().toarray() == m.toarray()).all()


# ---- lifetimes -----------------------------------------------------------------------------------


def test_REQ_SCIPY_LIFETIME_from_scipy_holds_what_it_shares():
    m = shared_csr(sp.csr_array, dense((8, 8), np.float64, 9))
    refs = {k: weakref.ref(getattr(m, k)) for k in ("data", "indices", "indptr")}
    rm = weakref.ref(m)
    t = hurray.from_scipy(m)
    values = t.values
    del m
    gc.collect()
    assert rm() is None  # the matrix object itself is not held: its arrays are
    assert all(r() is not None for r in refs.values())
    del t
    gc.collect()
    assert all(r() is not None for r in refs.values())  # the values view holds the tensor
    assert np.asarray(values).sum() > 0
    del values
    gc.collect()
    assert all(r() is None for r in refs.values())


def test_REQ_SCIPY_LIFETIME_copies_hold_nothing():
    m = sp.csr_matrix(dense((8, 8), np.float64, 9))
    r_idx = weakref.ref(m.indices)  # int32: copied
    t = hurray.from_scipy(m, copy=True)
    del m
    gc.collect()
    assert r_idx() is None and t.nnz > 0


def test_REQ_SCIPY_LIFETIME_to_scipy_keeps_the_tensor():
    t = hurray.from_scipy(shared_csr(sp.csc_array, dense((6, 4), np.int32, 2), "int32", "csc"))
    want = t.to_scipy().toarray()
    rt = weakref.ref(t)
    m = t.to_scipy()
    del t
    gc.collect()
    assert rt() is not None  # the matrix's arrays have the tensor as their base
    assert (m.toarray() == want).all()
    del m
    gc.collect()
    assert rt() is None
    t2 = hurray.from_scipy(sp.csr_array(np.eye(3)))
    before = sys.getrefcount(t2)
    m2 = t2.to_scipy()
    assert sys.getrefcount(t2) == before + 3  # data, indices, indptr
    del m2
    gc.collect()
    assert sys.getrefcount(t2) == before


# ---- files and streams ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", CLASSES)
def test_REQ_SCIPY_FILE_STREAM_save_load_copy_and_mmap(tmp_path, fmt):
    ms = {dt: CLASSES[fmt][0](dense((7, 9), dt, 11)) for dt in ("float32", "int64", "complex128", "bool")}
    path = tmp_path / "sparse.hurray"
    hurray.save(path, {dt: hurray.from_scipy(m) for dt, m in ms.items()})
    for mmap in (False, True):
        loaded = hurray.load(path, mmap=mmap)
        for dt, m in ms.items():
            t = loaded[dt]
            assert t.layout == CLASSES[fmt][2](nnz=m.nnz)
            back = t.to_scipy()
            same(back, m)
            assert back.data.flags.writeable  # copies are the caller's, mappings copy-on-write
            assert addr(back.data) == buf_addr(t, 0)  # no copy out of the file either


@pytest.mark.parametrize("fmt", CLASSES)
def test_REQ_SCIPY_FILE_STREAM_stream_round_trip(fmt):
    ms = [CLASSES[fmt][1](dense((5, 3 + k), "float64", k)) for k in range(3)]
    w = hurray.StreamWriter()
    for m in ms:
        w.write(hurray.from_scipy(m))
    w.finish()
    got = list(hurray.StreamReader(w.getvalue()))
    assert len(got) == 3
    for t, m in zip(got, ms):
        same(t.to_scipy(array=True), m)


# ---- random sparse matrices ----------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(rows=st.integers(0, 12), cols=st.integers(0, 12), density=st.floats(0.0, 1.0),
       dtype=st.sampled_from(SCIPY_DTYPES), fmt=st.sampled_from(sorted(CLASSES)),
       kind=st.sampled_from([0, 1]), seed=st.integers(0, 2 ** 32 - 1),
       shuffle=st.booleans(), copy=st.sampled_from([None, True]))
def test_REQ_SCIPY_ROUNDTRIP_random_matrices(rows, cols, density, dtype, fmt, kind, seed,
                                             shuffle, copy):
    m = CLASSES[fmt][kind](dense((rows, cols), dtype, seed, density))
    if shuffle and fmt != "coo" and m.nnz > 1:  # unsorted minor indices within each line
        rng = np.random.default_rng(seed)
        for i in range(len(m.indptr) - 1):
            lo, hi = m.indptr[i], m.indptr[i + 1]
            perm = rng.permutation(hi - lo) + lo
            m.indices[lo:hi], m.data[lo:hi] = m.indices[perm], m.data[perm]
    t = hurray.from_scipy(m, copy=copy)
    assert t.nnz == m.nnz and t.shape == m.shape and t.dtype is getattr(hurray, dtype)
    back = t.to_scipy(array=bool(kind))
    assert type(back) is type(m)
    same(back, m)
    if fmt != "coo":
        assert back.indices.tolist() == m.indices.tolist()  # order kept
    assert (hurray.from_scipy(back, copy=False).to_scipy().toarray() == m.toarray()).all()


# ---- sparse_coo ----------------------------------------------------------------------------------


def test_REQ_SPARSE_COO_from_arrays_and_array_likes():
    t = hurray.sparse_coo([[0, 1, 1], [2, 0, 2]], [1.0, 2.0, 3.0], (2, 3))
    assert t.layout == CooLayout(nnz=3) and t.shape == (2, 3) and t.dtype is hurray.float64
    assert t.to_scipy().toarray().tolist() == [[0, 0, 1], [2, 0, 3]]
    e = hurray.sparse_coo(np.zeros((1, 0), np.int64), np.zeros(0, np.float32), [4])
    assert e.nnz == 0 and e.shape == (4,)
    idx = aligned(np.array([[0, 1], [3, 1], [2, 0]], np.int64))  # (ndim, nnz): two entries
    val = aligned(np.array([5, 6], np.int16))
    t3 = hurray.sparse_coo(idx, val, (2, 4, 3), copy=False)  # zero-copy: both buffers shared
    assert buf_addr(t3, 0) == addr(val) and buf_addr(t3, 1) == addr(idx)
    assert t3.to_scipy().toarray()[1, 1, 0] == 6
    u = hurray.sparse_coo(np.array([[0], [1]], np.uint8), np.array([7], np.uint64), (1, 2))
    assert np.asarray(u.indices).dtype == np.uint64 and np.asarray(u.values).tolist() == [7]
    ml_dtypes = pytest.importorskip("ml_dtypes")
    b = hurray.sparse_coo([[0, 1]], np.array([1.5, -2], ml_dtypes.bfloat16), (3,))
    assert b.dtype is hurray.bfloat16 and b.values.to_ml_dtypes().tolist() == [1.5, -2]
    i4 = np.array([-3, 7, 1], ml_dtypes.int4)  # one per byte in ml_dtypes, packed in hurray
    q = hurray.sparse_coo([[0, 2, 4]], i4, (5,))
    assert q.dtype is hurray.int4 and q.buffer_handles[0].size == 2
    assert q.values.to_ml_dtypes().tolist() == [-3, 7, 1]
    with pytest.raises(ValueError, match="values holds an unpacked sub-byte type"):
        hurray.sparse_coo(aligned(np.array([[0, 2, 4]], np.int64)), i4, (5,), copy=False)


@pytest.mark.parametrize("shape,index", [((2, None), 1), ((None,), 0), ((1, 2, None), 2)])
def test_REQ_DYNAMIC_REFUSED_SPARSE_COO(shape, index):
    idx = np.zeros((len(shape), 1), np.int64)
    with pytest.raises(InvalidDescriptorError) as e:
        hurray.sparse_coo(idx, [1.0], shape)
    assert str(e.value).startswith(f"sparse_coo: shape[{index}] is dynamic (None)")
    assert e.value.field == f"shape[{index}]"


def test_REQ_SPARSE_COO_refusals_name_the_problem():
    with pytest.raises(ValueError, match=r"indices must be a 2-D \(ndim, nnz\) array with ndim = "
                                         r"len\(shape\) = 2 rows, not an array of shape \(2,\)"):
        hurray.sparse_coo([0, 1], [1.0, 2.0], (2, 2))
    with pytest.raises(ValueError, match=r"values must be 1-D with nnz = 2"):
        hurray.sparse_coo([[0, 1], [0, 1]], [1.0], (2, 2))
    with pytest.raises(TypeError, match="indices must be an integer array"):
        hurray.sparse_coo([[0.0], [1.0]], [1.0], (2, 2))
    with pytest.raises(InvalidDescriptorError, match=r"indices\[1\]\[0\] = 2 is not below shape\[1\] = 2"):
        hurray.sparse_coo([[0], [2]], [1.0], (2, 2))
    with pytest.raises(InvalidDescriptorError, match=r"\(-1 as int64\)"):
        hurray.sparse_coo([[0], [-1]], [1.0], (2, 2))
    with pytest.raises(ValueError, match="values is a list, not an array; making one is a copy"):
        hurray.sparse_coo(aligned(np.zeros((1, 1), np.int64)), [1.0], (2,), copy=False)
    with pytest.raises(ValueError, match=r"indices is a 32-bit signed integer array"):
        hurray.sparse_coo(np.zeros((1, 1), np.int32), aligned(np.ones(1)), (2,), copy=False)
    with pytest.raises(ValueError, match="indices is not contiguous"):
        hurray.sparse_coo(aligned(np.zeros((2, 3), np.int64)).T.copy().T, aligned(np.ones(3)),
                          (2, 2), copy=False)
    with pytest.raises(TypeError, match="missing required argument 'shape'"):
        hurray.sparse_coo([[0]], [1.0])


# ---- asarray -------------------------------------------------------------------------------------


def test_REQ_ASARRAY_tensors():
    t = hurray.full((3,), 2.0)
    assert hurray.asarray(t) is t and hurray.asarray(t, copy=False) is t
    c = hurray.asarray(t, copy=True)
    assert c is not t and c.descriptor == t.descriptor and buf_addr(c, 0) != buf_addr(t, 0)
    s = hurray.from_scipy(sp.csr_array(np.eye(3)))
    cs = hurray.asarray(s, copy=True)
    assert cs.layout == s.layout and all(buf_addr(cs, i) != buf_addr(s, i) for i in range(3))
    with pytest.raises(TypeError, match="copy must be None, True or False"):
        hurray.asarray(t, copy="yes")


def test_REQ_ASARRAY_native_protocol_first():
    """An object speaking __hurray__ goes through from_hurray before any other protocol (even
    when it also has __dlpack__): zero-copy, every buffer of a multi-buffer tensor; copy=True
    rebuilds over copies with an equal descriptor."""
    src = hurray.from_scipy(sp.csr_array(np.eye(4)))

    class Both:
        def __hurray__(self, stream=None):
            return src.__hurray__(stream)

        def __dlpack__(self, **kw):  # never reached: the native protocol comes first
            raise AssertionError("asarray used __dlpack__")

    t = hurray.asarray(Both())
    assert t.descriptor == src.descriptor
    assert all(buf_addr(t, i) == buf_addr(src, i) for i in range(src.buffer_count))
    assert hurray.asarray(Both(), copy=False).descriptor == src.descriptor
    c = hurray.asarray(Both(), copy=True)
    # equal but for alignment, which describes an address (exempt from the round trip)
    assert (c.dtype, c.shape, c.layout) == (src.dtype, src.shape, src.layout)
    for i in range(src.buffer_count):
        assert buf_addr(c, i) != buf_addr(src, i)
        assert bytes(c.buffer(i)) == bytes(src.buffer(i))


def test_REQ_ASARRAY_scipy_numpy_and_array_likes():
    m = shared_csr(sp.csr_matrix, dense((4, 4), np.float64, 1))
    t = hurray.asarray(m, copy=False)
    assert t.layout == CsrLayout(nnz=m.nnz) and buf_addr(t, 1) == addr(m.indices)
    a = aligned(np.arange(6.0).reshape(2, 3))
    ta = hurray.asarray(a, copy=False)
    assert buf_addr(ta, 0) == addr(a) and ta.shape == (2, 3)
    assert buf_addr(hurray.asarray(a, copy=True), 0) != addr(a)
    with pytest.raises(ValueError, match="from_numpy: the array is not 64-byte aligned"):
        hurray.asarray(misaligned(np.arange(4.0)), copy=False)
    lst = hurray.asarray([[1, 2], [3, 4]])
    assert lst.shape == (2, 2) and np.asarray(lst).tolist() == [[1, 2], [3, 4]]
    assert lst.buffer_handles[0].alignment >= 64
    with pytest.raises(ValueError, match="asarray: obj is a list, not an array"):
        hurray.asarray([1, 2], copy=False)
    mv = memoryview(a)  # the buffer protocol: a zero-copy array-like
    tm = hurray.asarray(mv, copy=False)
    assert buf_addr(tm, 0) == addr(a)
    assert np.asarray(hurray.asarray(3.5)).item() == 3.5
    with pytest.raises(hurray.UnsupportedError, match="has no hurray element type"):
        hurray.asarray(["a", "b"])
    with pytest.raises(TypeError, match="asarray: a object is not an array-like of numbers"):
        hurray.asarray(object())
    c = hurray.Composite("group", shape=(1,), dtype=hurray.float32, members=[hurray.zeros((1,))])
    with pytest.raises(TypeError, match="asarray: a hurray.Composite holds tensors"):
        hurray.asarray(c)


def test_REQ_ASARRAY_torch_and_jax():
    torch = pytest.importorskip("torch")
    x = torch.arange(16, dtype=torch.float32)
    t = hurray.asarray(x)
    assert t.dtype is hurray.float32 and np.asarray(t).tolist() == list(range(16))
    assert x.data_ptr() % 64 == 0  # PyTorch's CPU allocator aligns to 64 bytes
    assert buf_addr(t, 0) == x.data_ptr()  # from_torch: shared
    c = hurray.asarray(x, copy=True)
    assert buf_addr(c, 0) != x.data_ptr()
    jnp = pytest.importorskip("jax.numpy")
    j = jnp.arange(5, dtype=jnp.int32)
    tj = hurray.asarray(j)
    assert tj.dtype is hurray.int32 and np.asarray(tj).tolist() == [0, 1, 2, 3, 4]


def test_REQ_PKG_NO_HEAVY_IMPORT_asarray_of_a_tensor():
    r = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import sys
        import hurray
        t = hurray.zeros((2,))
        assert hurray.asarray(t) is t
        hurray.asarray(t, copy=True)
        try:
            hurray.from_scipy(t)
        except TypeError as e:
            assert "expected a scipy.sparse" in str(e)
        print(",".join(m for m in ("scipy", "torch", "jax") if m in sys.modules))
    """)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""
