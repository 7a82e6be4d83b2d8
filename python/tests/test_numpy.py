"""NumPy interop: from_numpy, __array__, __array_interface__, copy on ingest, lifetimes,
hurray.aligned_allocator, and the optional ml_dtypes views.

Seed § NumPy Interoperability, § Buffer Lifetime and Ownership, § copy on ingest, § The
aligned allocator, § Alignment is measured, § Layouts and Sparse Tensor Support ("Protocols
that require a densely addressable element buffer … MUST reject non-dense layouts, naming the
layout"), § sync_mode. Real NumPy 2.x, no mocks (one monkeypatched version string for the
NumPy < 1.22 refusal, which cannot be installed next to NumPy 2).
"""
import gc
import struct
import subprocess
import sys
import textwrap
import threading
import weakref

import numpy as np
import pytest

import hurray
from hurray import Tensor
from numpy._core.multiarray import get_handler_name

HANDLER = "hurray_aligned_64"


def aligned(a: np.ndarray) -> np.ndarray:
    """A copy of `a` whose data is allocated 64-byte aligned."""
    with hurray.aligned_allocator():
        out = np.array(a, copy=True, order="K")
    assert out.ctypes.data % 64 == 0
    return out


def misaligned(a: np.ndarray) -> np.ndarray:
    """A view of `a`'s values at an address that is not 64-byte aligned."""
    flat = aligned(np.concatenate([a.reshape(-1)[:1], a.reshape(-1)]))
    out = flat[1:].reshape(a.shape)
    assert out.ctypes.data % 64 != 0
    return out


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, check=False, timeout=300)


# ---- import hygiene -----------------------------------------------------------------------------


def test_REQ_PKG_NO_HEAVY_IMPORT_tensor_paths_without_numpy():
    r = run("""
        import sys
        import hurray
        t = hurray.zeros((2, 3))
        repr(t), t.buffer(0), t.descriptor, t.__array_interface__
        u = hurray.Tensor(bytearray(24), hurray.float32, (2, 3))
        print("numpy" in sys.modules)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_REQ_NUMPY_IMPORTERROR_when_absent():
    r = run("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "numpy":
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import hurray
        for f in (lambda: hurray.from_numpy(object()), lambda: hurray.zeros((2,)).__array__(),
                  lambda: hurray.aligned_allocator().__enter__()):
            try:
                f()
            except ImportError:
                print("ImportError")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ImportError"] * 3


# ---- dtype mapping ------------------------------------------------------------------------------

TIER1 = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", TIER1)
def test_REQ_NUMPY_DTYPE_MAP_tier1_round_trip(name):
    a = aligned(np.arange(6).astype(name).reshape(2, 3))
    t = hurray.from_numpy(a)
    assert t.dtype is getattr(hurray, name)
    b = np.asarray(t)
    assert b.dtype == a.dtype and (b == a).all() and np.shares_memory(a, b)
    assert t.__array_interface__["typestr"] == a.dtype.str
    assert t.__array__().dtype == a.dtype


def test_REQ_NUMPY_DTYPE_MAP_c_type_aliases():
    for dt in (np.intc, np.uintc, np.int_, np.uint, np.longlong, np.ulonglong, np.short,
               np.byte, np.single, np.double, np.csingle, np.cdouble):
        t = hurray.from_numpy(aligned(np.zeros(4, dt)))
        assert t.dtype.bit_width == np.dtype(dt).itemsize * 8


@pytest.mark.parametrize("dt", [object, "U3", "S3", "V4", [("a", "i4"), ("b", "f4")],
                                np.longdouble, np.clongdouble, "M8[s]", "m8[s]"])
def test_REQ_NUMPY_DTYPE_MAP_unsupported(dt):
    if np.dtype(dt) in (np.float64, np.complex128):
        pytest.skip("long double is double on this platform")
    with pytest.raises(hurray.UnsupportedError, match="no hurray element type"):
        hurray.from_numpy(np.zeros(2, dt))


def test_REQ_NUMPY_FROM_NUMPY_type_errors():
    for bad in ([1, 2], b"ab", memoryview(b"abcd"), 3):
        with pytest.raises(TypeError, match="ndarray"):
            hurray.from_numpy(bad)
    with pytest.raises(TypeError):
        hurray.from_numpy(np.zeros(2), True)  # copy is keyword-only
    with pytest.raises(TypeError, match="copy"):
        hurray.from_numpy(np.zeros(2), copy="yes")
    with pytest.raises(TypeError):
        hurray.from_numpy(np.zeros(2), order="C")


# ---- zero copy, layouts -------------------------------------------------------------------------


def test_REQ_NUMPY_FROM_NUMPY_ZERO_COPY_c_contiguous():
    a = aligned(np.arange(12, dtype=np.float32).reshape(3, 4))
    t = hurray.from_numpy(a, copy=False)
    assert t.layout == hurray.RowMajorLayout() and t.shape == (3, 4)
    h = t.buffer_handles[0]
    assert h.size == a.nbytes and h.alignment >= 64
    assert a.ctypes.data % h.alignment == 0  # measured, not assumed
    b = np.asarray(t)
    assert np.shares_memory(a, b) and b.ctypes.data == a.ctypes.data
    a[0, 0] = 42
    assert b[0, 0] == 42 and struct.unpack("<f", bytes(t.buffer(0)[:4]))[0] == 42


def test_REQ_NUMPY_FROM_NUMPY_ZERO_COPY_fortran_is_col_major():
    a = aligned(np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4)))
    t = hurray.from_numpy(a, copy=False)
    assert t.layout == hurray.ColMajorLayout()
    b = t.__array__()
    assert b.flags.f_contiguous and not b.flags.c_contiguous
    assert (b == a).all() and np.shares_memory(a, b)
    assert t.__array_interface__["strides"] == a.strides


def test_REQ_NUMPY_FROM_NUMPY_ZERO_COPY_strided_views():
    base = aligned(np.arange(48, dtype=np.float64).reshape(6, 8))
    # views whose lowest byte is the (aligned) base: shared as strided, element strides
    for view in (base[:, ::2], base[::-1], base.T[::2], np.broadcast_to(base[0], (3, 8)),
                 base[::-2, ::3]):
        t = hurray.from_numpy(view, copy=False)
        assert t.layout == hurray.StridedLayout([s // 8 for s in view.strides])
        b = np.asarray(t)
        assert (b == view).all() and np.shares_memory(b, base) and b.strides == view.strides
        assert t.buffer_handles[0].alignment >= 64
    # a view whose lowest byte is not 64-byte aligned is copied (copy=None)
    odd = base[:, 1::2]
    t = hurray.from_numpy(odd)
    assert t.layout == hurray.RowMajorLayout() and not np.shares_memory(np.asarray(t), base)
    assert (np.asarray(t) == odd).all()


def test_REQ_NUMPY_FROM_NUMPY_ZERO_COPY_negative_strides_byte_offset():
    base = aligned(np.arange(8, dtype=np.float32))
    view = base[::-1]
    t = hurray.from_numpy(view, copy=False)
    assert t.layout == hurray.StridedLayout([-1]) and t.byte_offset == 28
    assert t.buffer_handles[0].size == 32
    assert np.asarray(t).tolist() == list(range(7, -1, -1))
    zero = np.broadcast_to(base[:1], (5,))
    tz = hurray.from_numpy(zero, copy=False)
    assert tz.layout == hurray.StridedLayout([0]) and np.asarray(tz).tolist() == [0.0] * 5


# ---- copy on ingest -----------------------------------------------------------------------------


def test_REQ_COPY_ON_INGEST_none_copies_only_misaligned():
    a = misaligned(np.arange(10, dtype=np.float32))
    t = hurray.from_numpy(a)  # copy=None: not 64-aligned -> copy
    b = np.asarray(t)
    assert not np.shares_memory(a, b) and (b == a).all()
    assert b.ctypes.data % 64 == 0 and t.buffer_handles[0].alignment == 64
    ok = aligned(a)
    assert np.shares_memory(np.asarray(hurray.from_numpy(ok)), ok)


def test_REQ_COPY_ON_INGEST_false_raises_valueerror():
    a = misaligned(np.arange(10, dtype=np.float32))
    with pytest.raises(ValueError, match="copy=False"):
        hurray.from_numpy(a, copy=False)
    with pytest.raises(ValueError, match="big-endian"):
        hurray.from_numpy(aligned(np.arange(4, dtype=">i4")), copy=False)
    rec = aligned(np.zeros(4, dtype=[("a", "i1"), ("b", "<f4")]))["b"]
    with pytest.raises(ValueError, match="whole elements"):
        hurray.from_numpy(rec, copy=False)
    assert np.asarray(hurray.from_numpy(rec)).tolist() == [0.0] * 4


def test_REQ_COPY_ON_INGEST_true_always_copies():
    a = aligned(np.arange(10, dtype=np.int16))
    t = hurray.from_numpy(a, copy=True)
    b = np.asarray(t)
    assert not np.shares_memory(a, b) and (b == a).all()
    a[0] = 99
    assert b[0] == 0 and b.flags.writeable
    f = hurray.from_numpy(aligned(np.asfortranarray(np.ones((2, 3)))), copy=True)
    assert f.layout == hurray.ColMajorLayout()  # a Fortran source is copied in Fortran order


def test_REQ_COPY_ON_INGEST_big_endian_to_little():
    a = aligned(np.arange(6, dtype=">f8").reshape(2, 3))
    t = hurray.from_numpy(a)
    assert t.dtype is hurray.float64
    assert bytes(t.buffer(0)[:16]) == struct.pack("<2d", 0.0, 1.0)
    b = np.asarray(t)
    assert b.dtype == np.dtype("<f8") and (b == a).all()


def test_REQ_COPY_ON_INGEST_empty_and_zero_d():
    e = hurray.from_numpy(np.zeros((0, 3), np.float32), copy=False)  # an empty buffer needs no copy
    assert e.shape == (0, 3) and e.buffer_handles[0].alignment == 1 and e.size == 0
    assert np.asarray(e).shape == (0, 3)
    s = hurray.from_numpy(aligned(np.array(3.5)))
    assert s.shape == () and np.asarray(s).item() == 3.5


# ---- lifetimes ----------------------------------------------------------------------------------


def test_REQ_LIFETIME_FROM_NUMPY_tensor_holds_array():
    a = aligned(np.arange(16, dtype=np.float32))
    before = sys.getrefcount(a)
    t = hurray.from_numpy(a)
    assert sys.getrefcount(a) == before + 1
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is not None  # the ndarray is not collected while the tensor lives
    assert np.asarray(t)[3] == 3
    del t
    gc.collect()
    assert ref() is None


def test_REQ_LIFETIME_ARRAY_BASE_ndarray_holds_tensor():
    t = hurray.zeros((4, 4))
    before = sys.getrefcount(t)
    b = t.__array__()
    refs = sys.getrefcount(t)
    assert refs == before + 1
    assert b.base is t
    c = np.asarray(t)  # through __array_struct__: NumPy's base is (tensor, capsule)
    assert holds_tensor(c, t)
    ref = weakref.ref(t)
    del t
    gc.collect()
    assert ref() is not None
    b[0, 0] = 5
    del b
    gc.collect()
    assert ref() is not None and c[0, 0] == 5  # c still holds it
    del c
    gc.collect()
    assert ref() is None


def test_REQ_LIFETIME_CHAIN_array_tensor_array():
    a = aligned(np.arange(8.0))
    ref_a = weakref.ref(a)
    b = np.asarray(hurray.from_numpy(a))
    del a
    gc.collect()
    assert ref_a() is not None and b.sum() == 28.0
    del b
    gc.collect()
    assert ref_a() is None


def test_REQ_LIFETIME_BUFFERHANDLES_pin_nothing():
    a = aligned(np.arange(8.0))
    t = hurray.from_numpy(a)
    handles, ref_t, ref_a = t.buffer_handles, weakref.ref(t), weakref.ref(a)
    del t, a
    gc.collect()
    assert ref_t() is None and ref_a() is None and handles[0].size == 64


def test_REQ_LIFETIME_SPARSE_VIEWS_to_numpy():
    vals = hurray.from_numpy(aligned(np.array([1.5, 2.5], np.float32)))
    idx = hurray.from_numpy(aligned(np.array([[0, 1], [1, 0]], np.uint64)))
    coo = Tensor([vals.buffer(0), idx.buffer(0)], hurray.float32, (2, 2),
                 layout=hurray.CooLayout(nnz=2))
    ref = weakref.ref(coo)
    v, i = np.asarray(coo.values), np.asarray(coo.indices)
    assert v.tolist() == [1.5, 2.5] and i.tolist() == [[0, 1], [1, 0]]
    del coo
    gc.collect()
    assert ref() is not None
    del v, i
    gc.collect()
    assert ref() is None


# ---- __array__ and __array_interface__ ----------------------------------------------------------


def test_REQ_NUMPY_ARRAY_ZERO_COPY_and_copy_keyword():
    t = hurray.full((2, 3), 1.5)
    a = t.__array__()
    assert a.base is t and a.flags.writeable and a.dtype == np.float32
    assert np.shares_memory(a, np.asarray(t))
    c = t.__array__(copy=True)
    assert not np.shares_memory(a, c) and (c == a).all()
    assert t.__array__(copy=False).base is t
    d = t.__array__(np.float64)
    assert d.dtype == np.float64 and not np.shares_memory(a, d)
    assert t.__array__(np.dtype("<f4"), copy=False).base is t  # same dtype: no copy
    with pytest.raises(ValueError, match="copy=False"):
        t.__array__(np.float64, copy=False)
    assert np.array(t, dtype=np.int32).tolist() == [[1, 1, 1]] * 2
    assert holds_tensor(np.array(t, copy=None), t)


def test_REQ_NUMPY_ARRAY_readonly_source_stays_readonly():
    a = aligned(np.arange(4, dtype=np.uint8))
    a.flags.writeable = False
    t = hurray.from_numpy(a)
    assert t.buffer(0).readonly
    b = np.asarray(t)
    assert not b.flags.writeable and t.__array_interface__["data"][1] is True
    with pytest.raises(ValueError):
        b[0] = 1


def test_REQ_NUMPY_ARRAY_INTERFACE_v3():
    t = hurray.zeros((2, 3), hurray.int16)
    ai = t.__array_interface__
    assert ai["version"] == 3 and ai["shape"] == (2, 3) and ai["typestr"] == "<i2"
    assert ai["strides"] is None and ai["data"] == (np.asarray(t).ctypes.data, False)
    assert set(ai) == {"version", "shape", "typestr", "data", "strides"}
    assert hurray.zeros((2,), hurray.bool).__array_interface__["typestr"] == "|b1"
    assert hurray.zeros((2,), hurray.complex128).__array_interface__["typestr"] == "<c16"
    f = hurray.zeros((2, 3), hurray.int16, layout=hurray.ColMajorLayout())
    assert f.__array_interface__["strides"] == (2, 4)
    s = hurray.zeros((2, 3), hurray.float64, layout=hurray.StridedLayout([4, 1]))
    assert s.__array_interface__["strides"] == (32, 8)


def holds_tensor(arr, t):
    """The array's base is the tensor (__array__), or NumPy's (tensor, capsule) tuple of the
    __array_struct__ path, whose capsule holds the tensor too."""
    if arr.base is t:
        return True
    return (isinstance(arr.base, tuple) and len(arr.base) == 2 and arr.base[0] is t
            and type(arr.base[1]).__name__ == "PyCapsule")


def test_REQ_NUMPY_ARRAY_STRUCT_same_array_as_the_interface():
    cases = [hurray.zeros((2, 3), hurray.int16),
             hurray.zeros((2, 3), hurray.int16, layout=hurray.ColMajorLayout()),
             hurray.zeros((2, 3), hurray.float64, layout=hurray.StridedLayout([4, 1])),
             hurray.zeros((), hurray.complex128), hurray.zeros((0, 5), hurray.bool)]
    for t in cases:
        ai, cap = t.__array_interface__, t.__array_struct__
        assert type(cap).__name__ == "PyCapsule"
        a = np.asarray(t)
        assert holds_tensor(a, t)
        assert a.shape == ai["shape"] and a.dtype.str == ai["typestr"]
        if a.size:
            assert a.ctypes.data == ai["data"][0]
        assert ai["strides"] is None and a.flags.c_contiguous or a.strides == ai["strides"]
        assert a.flags.writeable


def test_REQ_NUMPY_ARRAY_STRUCT_readonly_offset_and_lifetime():
    src = aligned(np.arange(6, dtype=np.float32))
    src.flags.writeable = False
    base = hurray.from_numpy(src)
    t = Tensor(base.buffer(0), hurray.float32, (3,), byte_offset=8)
    a = np.asarray(t)
    assert a.tolist() == [2.0, 3.0, 4.0] and not a.flags.writeable
    with pytest.raises(ValueError):
        a[0] = 1
    before = sys.getrefcount(t)
    cap = t.__array_struct__  # a capsule alone keeps the tensor alive
    assert sys.getrefcount(t) == before + 1
    ref = weakref.ref(t)
    del t, a, base
    gc.collect()
    assert ref() is not None
    del cap
    gc.collect()
    assert ref() is None


def test_REQ_NUMPY_ARRAY_STRUCT_refuses_as_the_interface():
    q = Tensor(hurray.zeros((64,), hurray.uint8).buffer(0), hurray.int4, (8,))
    with pytest.raises(hurray.UnsupportedError, match="__array_struct__.*int4"):
        q.__array_struct__
    coo = hurray.sparse_coo(np.zeros((1, 1), np.uint64), np.ones(1, np.float32), (4,))
    with pytest.raises(hurray.UnsupportedError, match="coo"):
        coo.__array_struct__


def test_REQ_NUMPY_ARRAY_byte_offset():
    base = hurray.from_numpy(aligned(np.arange(6, dtype=np.float32)))
    t = Tensor(base.buffer(0), hurray.float32, (3,), byte_offset=8)
    assert np.asarray(t).tolist() == [2.0, 3.0, 4.0]
    assert t.__array_interface__["data"][0] == np.asarray(base).ctypes.data + 8


TIER2 = ["int1", "uint1", "int2", "uint2", "int4", "uint4", "float8_e4m3fn",
         "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
         "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]


@pytest.mark.parametrize("name", TIER2)
def test_REQ_NUMPY_TIER2_UNSUPPORTED(name):
    dt = getattr(hurray, name)
    t = Tensor(hurray.zeros((64,), hurray.uint8).buffer(0), dt, (8,))
    for path in (t.__array__, lambda: t.__array_interface__, lambda: np.asarray(t)):
        with pytest.raises(hurray.UnsupportedError, match=name):
            path()


def test_REQ_NUMPY_TIER2_UNSUPPORTED_quantized_and_extension():
    q = Tensor([hurray.zeros((16,), hurray.uint8).buffer(0), hurray.ones((4,)).buffer(0)],
               hurray.int8, (4, 4), quantization=hurray.PerChannelAffine(axis=0))
    with pytest.raises(hurray.UnsupportedError, match="quantized"):
        q.__array__()
    with pytest.raises(hurray.UnsupportedError, match="quantized"):
        np.asarray(q)
    p = Tensor(hurray.zeros((16,), hurray.uint8).buffer(0), hurray.Dtype.from_tag(0xF5), (4,))
    with pytest.raises(hurray.UnsupportedError, match="0xF5"):
        p.__array__()


def sparse_and_other_layouts():
    u8 = lambda n: hurray.zeros((n,), hurray.uint8).buffer(0)  # noqa: E731
    f = hurray.float32
    yield Tensor([u8(8), u8(32)], f, (2, 2), layout=hurray.CooLayout(nnz=2))
    yield Tensor([u8(8), u8(16), u8(24)], f, (2, 2), layout=hurray.CsrLayout(nnz=2))
    yield Tensor([u8(8), u8(16), u8(24)], f, (2, 2), layout=hurray.CscLayout(nnz=2))
    yield Tensor([u8(8), u8(16), u8(8), u8(24), u8(16)], f, (2, 2),
                 layout=hurray.CsfLayout(nnz=2, fiber_counts=[1]))
    yield Tensor([u8(512), u8(24), u8(24)], f, (2, 16),
                 layout=hurray.BlockPagedLayout(page_size=8, num_pages=4, num_seqs=2,
                                                num_blocks=3))
    yield hurray.zeros((4, 4), layout=hurray.TiledLayout([2, 2], [8, 2], [2, 1]))
    yield hurray.zeros((4, 4), layout=hurray.MortonLayout())
    yield hurray.zeros((4, 4), layout=hurray.HilbertLayout())
    yield Tensor([u8(64)], f, (4,), layout=hurray.PrivateExtensionLayout(0xF1, 3))
    yield Tensor([u8(64)], f, (4,), layout=hurray.UnknownLayout(0x50))


@pytest.mark.parametrize("t", list(sparse_and_other_layouts()), ids=lambda t: t.layout.name)
def test_REQ_NUMPY_NONDENSE_REJECTED_naming_the_layout(t):
    name = t.layout.name  # the one name helper: hurray_layout_name
    for path in (t.__array__, lambda: t.__array_interface__, lambda: np.asarray(t)):
        with pytest.raises(hurray.UnsupportedError, match=f"the {name} layout"):
            path()


def test_REQ_SHAPE_DYNAMIC_NUMPY_refused():
    t = Tensor(hurray.zeros((16,)).buffer(0), hurray.float32, (None, 4))
    for path in (t.__array__, lambda: t.__array_interface__, lambda: np.asarray(t)):
        with pytest.raises(hurray.UnsupportedError, match=r"shape\[0\] is dynamic"):
            path()
    assert "0." not in repr(t)


@pytest.mark.parametrize("mode,name", [(2, "event"), (3, "stream")])
def test_REQ_SYNC_REFUSE_BYTES_numpy(mode, name):
    t = hurray._hurray._tensor_with_sync_mode(hurray.zeros((4,)), 0, mode)
    for path in (t.__array__, lambda: t.__array_interface__, lambda: np.asarray(t)):
        with pytest.raises(hurray.UnsupportedError, match=f"sync_mode '{name}'"):
            path()
    assert "data" not in repr(t) and "0." not in repr(t)


def test_REQ_NUMPY_DEVICE_refused():
    t = Tensor(hurray.zeros((4,)).buffer(0), hurray.float32, (4,), device="cuda")
    with pytest.raises(hurray.UnsupportedError, match="cuda"):
        np.asarray(t)


def test_REQ_TENSOR_REPR_data_for_tier1_dense():
    t = hurray.from_numpy(aligned(np.array([[1, 2], [3, 4]], np.int64)))
    text = repr(t)
    assert text.startswith("hurray.Tensor([[1, 2],\n               [3, 4]], dtype=hurray.int64")
    assert "layout=RowMajorLayout()" in text and "device='cpu'" in text
    big = hurray.zeros((100000,))
    assert "..." in repr(big) and len(repr(big)) < 400


# ---- aligned_allocator --------------------------------------------------------------------------


def test_REQ_ALLOCATOR_ingest_without_copy():
    with hurray.aligned_allocator():
        arrays = [np.arange(n, dtype=np.float32) for n in (1, 3, 17, 1000, 70000)]
        arrays += [np.ones((3, 5), np.int8), np.empty(7, np.complex128)]
    for a in arrays:
        assert get_handler_name(a) == HANDLER
        assert a.ctypes.data % 64 == 0
        t = hurray.from_numpy(a, copy=False)
        assert np.shares_memory(np.asarray(t), a)
        assert t.buffer_handles[0].alignment >= 64


def test_REQ_ALLOCATOR_restores_on_exit_and_exception():
    before = get_handler_name()
    with hurray.aligned_allocator():
        assert get_handler_name() == HANDLER
    assert get_handler_name() == before
    with pytest.raises(KeyError):
        with hurray.aligned_allocator():
            raise KeyError("boom")
    assert get_handler_name() == before
    assert get_handler_name(np.empty(4)) == before


def test_REQ_ALLOCATOR_nesting():
    before = get_handler_name()
    with hurray.aligned_allocator():
        with hurray.aligned_allocator():
            assert get_handler_name() == HANDLER
        assert get_handler_name() == HANDLER
        a = np.empty(5)
    assert get_handler_name() == before
    assert get_handler_name(a) == HANDLER  # an array keeps the handler that allocated it
    a.resize(50, refcheck=False)  # realloc through the same handler, alignment kept
    assert a.ctypes.data % 64 == 0
    del a
    gc.collect()


def test_REQ_ALLOCATOR_not_module_level():
    before = get_handler_name()
    cm = hurray.aligned_allocator()  # nothing happens until the block is entered
    assert get_handler_name() == before
    for name in dir(hurray):
        assert "install" not in name.lower() and "set_allocator" not in name.lower()
    with cm:
        assert get_handler_name() == HANDLER
    assert get_handler_name() == before


def test_REQ_ALLOCATOR_thread_does_not_inherit():
    doc = hurray.aligned_allocator.__doc__
    assert "thread started inside the block does NOT inherit" in doc
    seen = []
    with hurray.aligned_allocator():
        th = threading.Thread(target=lambda: seen.append(get_handler_name(np.empty(3))))
        th.start()
        th.join()
        assert get_handler_name(np.empty(3)) == HANDLER
    assert seen == ["default_allocator"]


def test_REQ_ALLOCATOR_old_numpy_unsupported(monkeypatch):
    monkeypatch.setattr(np, "__version__", "1.21.6")
    with pytest.raises(hurray.UnsupportedError, match="1.22"):
        with hurray.aligned_allocator():
            pass  # pragma: no cover


# ---- ml_dtypes (optional extra) -----------------------------------------------------------------


def test_REQ_NUMPY_BFLOAT16_via_ml_dtypes():
    ml = pytest.importorskip("ml_dtypes")
    t = hurray.full((3,), 1.5, hurray.bfloat16)
    a = t.__array__()
    assert a.dtype == ml.bfloat16 and a.base is t and a.astype(np.float32).tolist() == [1.5] * 3
    with pytest.raises(hurray.UnsupportedError, match="bfloat16"):
        t.__array_interface__
    back = hurray.from_numpy(aligned(np.array([1, 2, 3], ml.bfloat16)), copy=False)
    assert back.dtype is hurray.bfloat16


def test_REQ_NUMPY_ML_DTYPES_views_and_unpacking():
    ml = pytest.importorskip("ml_dtypes")
    raw = hurray.from_numpy(aligned(np.array([0x38, 0x40, 0x00, 0xC0], np.uint8)))
    f8 = Tensor(raw.buffer(0), hurray.float8_e4m3fn, (4,))
    v = f8.to_ml_dtypes()
    assert v.dtype == ml.float8_e4m3fn and v.base is f8  # byte-sized: zero copy
    assert v.astype(np.float32).tolist() == [1.0, 2.0, 0.0, -2.0]
    i4 = hurray.full((5,), -3, hurray.int4)
    u = i4.to_ml_dtypes()
    assert u.dtype == ml.int4 and u.astype(np.int8).tolist() == [-3] * 5 and u.base is None
    f4 = Tensor(hurray.from_numpy(aligned(np.array([0x21, 0x3F], np.uint8))).buffer(0),
                hurray.float4_e2m1fn, (3,))
    assert f4.to_ml_dtypes().view(np.uint8).tolist() == [0x1, 0x2, 0xF]
    f6 = Tensor(hurray.from_numpy(aligned(np.array([0xE1, 0x5F, 0xA8], np.uint8))).buffer(0),
                hurray.float6_e2m3fn, (4,))  # memory-layout.md's float6 example
    assert f6.to_ml_dtypes().view(np.uint8).tolist() == [0x21, 0x3F, 0x05, 0x2A]
    assert hurray.zeros((2,)).to_ml_dtypes().dtype == np.float32


def test_REQ_NUMPY_ML_DTYPES_ingest_packs_sub_byte():
    ml = pytest.importorskip("ml_dtypes")
    a = np.array([-1, 7, -8], ml.int4)
    t = hurray.from_numpy(a)
    assert t.dtype is hurray.int4 and bytes(t.buffer(0)) == b"\x7f\x08"  # memory-layout.md
    assert t.to_ml_dtypes().astype(np.int8).tolist() == [-1, 7, -8]
    with pytest.raises(ValueError, match="copy=False"):
        hurray.from_numpy(a, copy=False)
    # ml_dtypes' float8_e4m3 is an IEEE-like format, not hurray's float8_e4m3fn
    with pytest.raises(hurray.UnsupportedError):
        hurray.from_numpy(np.zeros(2, ml.float8_e4m3))


# ---- leaks --------------------------------------------------------------------------------------

LEAK_SCRIPT = """
import gc, os, sys, tracemalloc
import numpy as np
import hurray

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

N = {n}
with hurray.aligned_allocator():
    shared = np.ones(16, np.float32)       # 64-byte aligned: shared zero-copy
copied = np.ones(17, np.float32)[1:]       # misaligned: copied into an owned buffer
refs = sys.getrefcount(shared), sys.getrefcount(copied)

def cycle(a, n):
    for _ in range(n):
        np.asarray(hurray.from_numpy(a))

cycle(shared, 20000)
cycle(copied, 20000)
gc.collect()
rss0 = rss()
cycle(shared, N)
cycle(copied, N)
gc.collect()
rss1 = rss()
tracemalloc.start()
cycle(shared, 20000)
gc.collect()
traced0 = tracemalloc.get_traced_memory()[0]
cycle(shared, N)
gc.collect()
traced1 = tracemalloc.get_traced_memory()[0]
print(rss1 - rss0, traced1 - traced0, file=sys.stderr)
print(rss1 - rss0, traced1 - traced0,
      (sys.getrefcount(shared), sys.getrefcount(copied)) == refs)
"""


def test_REQ_LEAK_million_from_numpy_asarray_cycles():
    # 10^6 cycles of from_numpy + np.asarray on the zero-copy path and 10^6 on the copy
    # path, RSS from /proc/self/statm; then 10^6 zero-copy cycles under tracemalloc.
    # A subprocess, so that the measurement sees nothing of the test session.
    if not sys.platform.startswith("linux"):
        pytest.skip("RSS is read from /proc/self/statm")
    r = run(LEAK_SCRIPT.format(n=1_000_000))
    assert r.returncode == 0, r.stderr
    rss_growth, traced_growth, refs_ok = r.stdout.split()
    assert refs_ok == "True"
    assert int(rss_growth) < 1 << 20, rss_growth      # < 1 MiB after 2 * 10^6 cycles
    assert int(traced_growth) < 64 * 1024, traced_growth
