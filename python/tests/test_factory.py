"""hurray.zeros / ones / empty / full.

Seed § Dynamic dimensions ("Functions that allocate a buffer … MUST refuse a dynamic dimension
with hurray.InvalidDescriptorError, naming the call and the offending index"), § Alignment is
measured (owned buffers), memory-layout.md § Sub-byte packing, element-types.md.
"""
import math
import struct

import numpy as np
import pytest

import hurray
from hurray import ColMajorLayout, CooLayout, RowMajorLayout, StridedLayout, TiledLayout

FACTORIES = {
    "zeros": lambda shape, **kw: hurray.zeros(shape, **kw),
    "ones": lambda shape, **kw: hurray.ones(shape, **kw),
    "empty": lambda shape, **kw: hurray.empty(shape, **kw),
    "full": lambda shape, **kw: hurray.full(shape, 2, **kw),
}


@pytest.mark.parametrize("name", FACTORIES)
@pytest.mark.parametrize("shape,index", [((2, None), 1), ((None,), 0), ((1, 2, None, 4), 2)])
def test_REQ_FACTORY_DYNAMIC_REFUSED(name, shape, index):
    with pytest.raises(hurray.InvalidDescriptorError) as e:
        FACTORIES[name](shape)
    assert str(e.value).startswith(f"{name}: shape[{index}] is dynamic (None)")
    assert e.value.field == f"shape[{index}]"


@pytest.mark.parametrize("name", FACTORIES)
def test_REQ_FACTORY_OWNED_ALIGNED(name):
    for n in (0, 1, 100, 1 << 18):
        t = FACTORIES[name]((n,))
        h = t.buffer_handles[0]
        assert h.size == 4 * n
        if n == 0:
            assert h.alignment == 1
            continue
        assert h.alignment >= hurray.MIN_BUFFER_ALIGNMENT
        assert np.asarray(t).ctypes.data % h.alignment == 0  # declared is what was allocated
        assert t.sync_mode == "producer_synced" and t.device.kind == "cpu"


def test_REQ_FACTORY_DEFAULTS_and_values():
    z = hurray.zeros((2, 3))
    assert z.dtype is hurray.float32 and z.shape == (2, 3) and z.layout == RowMajorLayout()
    assert (np.asarray(z) == 0).all()
    assert (np.asarray(hurray.ones((4,), hurray.int16)) == 1).all()
    assert np.asarray(hurray.full((2, 2), 7.5, hurray.float64)).tolist() == [[7.5, 7.5]] * 2
    assert hurray.empty((3,), hurray.uint8).shape == (3,)
    assert hurray.zeros(()).shape == () and np.asarray(hurray.full((), 3)).item() == 3.0
    assert not np.asarray(hurray.zeros((2,))).flags.owndata  # a view of the owned buffer


def test_REQ_FACTORY_LAYOUTS_dense_only():
    c = hurray.full((2, 3), 1, hurray.int32, layout=ColMajorLayout())
    assert c.layout == ColMajorLayout() and np.asarray(c).flags.f_contiguous
    s = hurray.zeros((2, 3), layout=StridedLayout([4, 1]))
    assert s.buffer_handles[0].size == 4 * (4 + 2 + 1)  # libhurray's required size
    t = hurray.ones((3, 3), hurray.uint8, layout=TiledLayout([2, 2], [8, 2], [2, 1]))
    assert t.buffer_handles[0].size >= 9
    with pytest.raises(TypeError, match="hurray.Layout"):
        hurray.zeros((2,), layout="col_major")
    with pytest.raises(hurray.UnsupportedError, match="coo"):
        hurray.zeros((2, 2), layout=CooLayout(nnz=1))
    with pytest.raises(hurray.UnsupportedError, match="composite"):
        hurray.zeros((2,), layout=hurray.CompositeLayout("group", member_count=1))
    with pytest.raises(TypeError):
        hurray.zeros((2,), hurray.float32, RowMajorLayout())  # layout is keyword-only
    with pytest.raises(TypeError, match="Dtype"):
        hurray.zeros((2,), "float32")


def named_dtypes():
    return [getattr(hurray.dtype, n) for n in dir(hurray.dtype)
            if isinstance(getattr(hurray.dtype, n), hurray.Dtype)
            and getattr(hurray.dtype, n).name != "extension"]


def test_REQ_FACTORY_ZEROS_every_type_but_e8m0():
    for dt in set(named_dtypes()):
        if dt is hurray.float8_e8m0fnu:
            with pytest.raises(hurray.UnsupportedError, match="no zero"):
                hurray.zeros((3,), dt)
            continue
        t = hurray.zeros((5,), dt)
        assert bytes(t.buffer(0)) == bytes(hurray.buffer_size_bytes(dt, 5)), dt
    with pytest.raises(hurray.UnsupportedError):
        hurray.zeros((3,), hurray.Dtype.from_tag(0xF3))  # width unknown


NUMPY_TIER1 = {
    "bool": np.bool_, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
    "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32, "int64": np.int64,
    "uint64": np.uint64, "float16": np.float16, "float32": np.float32, "float64": np.float64,
    "complex64": np.complex64, "complex128": np.complex128,
}


@pytest.mark.parametrize("name", NUMPY_TIER1)
def test_REQ_FACTORY_FULL_tier1_matches_numpy(name):
    dt, npdt = getattr(hurray, name), NUMPY_TIER1[name]
    values = [0, 1, True, 7]
    if np.dtype(npdt).kind in "fc":
        values += [-2.5, 1e-3, math.pi, float("inf"), float("nan"), 65504.0, 6e-8]
    if np.dtype(npdt).kind == "c":
        values += [1 + 2j, -0.5j]
    if np.dtype(npdt).kind in "iu":
        info = np.iinfo(npdt)
        values += [int(info.min), int(info.max)]
    for v in values:
        got = np.asarray(hurray.full((3,), v, dt))
        want = np.full((3,), v, npdt)
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes(), (name, v)


def test_REQ_FACTORY_FULL_float16_rounding_matches_numpy():
    rng = np.random.default_rng(1)
    xs = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-9, 5, 2000),
                         [2.0 ** -25, 2.0 ** -24 * 1.5, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11]])
    for x in xs:
        got = bytes(hurray.full((1,), float(x), hurray.float16).buffer(0))
        assert got == np.float16(x).tobytes(), x


@pytest.mark.parametrize("value,bits", [
    (1.0, 0x3F80), (-2.0, 0xC000), (math.pi, 0x4049), (1 + 2 ** -8, 0x3F80),
    (1 + 3 * 2 ** -8, 0x3F82), (-0.0, 0x8000), (float("inf"), 0x7F80),
    (float("-inf"), 0xFF80), (2.0 ** -133, 0x0001), (2.0 ** -134, 0x0000),
    (3 * 2.0 ** -134, 0x0002), (2.0 ** -126, 0x0080), (3.3895313892515355e38, 0x7F7F),
])
def test_REQ_FACTORY_FULL_bfloat16_exact(value, bits):
    assert bytes(hurray.full((1,), value, hurray.bfloat16).buffer(0)) == struct.pack("<H", bits)


def test_REQ_FACTORY_FULL_overflow_and_types():
    nan = bytes(hurray.full((1,), float("nan"), hurray.bfloat16).buffer(0))
    assert struct.unpack("<H", nan)[0] & 0x7FC0 == 0x7FC0
    for dt, v in ((hurray.bfloat16, 3.4e38), (hurray.float16, 65520.0), (hurray.float32, 1e39),
                  (hurray.int8, 128), (hurray.int8, -129), (hurray.uint8, -1),
                  (hurray.uint64, 2 ** 64), (hurray.int4, 8), (hurray.uint2, 4),
                  (hurray.int1, 1), (hurray.complex64, 1e39j)):
        with pytest.raises(OverflowError):
            hurray.full((2,), v, dt)
    with pytest.raises(TypeError, match="integer"):
        hurray.full((2,), 1.5, hurray.int32)
    with pytest.raises(TypeError):
        hurray.full((2,), "1", hurray.float32)
    assert np.asarray(hurray.full((2,), 2, hurray.bool)).tolist() == [True, True]


@pytest.mark.parametrize("dt,value,count,packed", [
    (hurray.int4, -1, 3, b"\xff\x0f"),        # padding bits after the last element are zero
    (hurray.int4, 7, 2, b"\x77"),
    (hurray.uint4, 9, 5, b"\x99\x99\x09"),
    (hurray.int2, -2, 5, b"\xaa\x02"),
    (hurray.uint2, 1, 4, b"\x55"),
    (hurray.int1, -1, 11, b"\xff\x07"),
    (hurray.uint1, 0, 9, b"\x00\x00"),
])
def test_REQ_FACTORY_FULL_sub_byte_packed(dt, value, count, packed):
    t = hurray.full((count,), value, dt)
    assert bytes(t.buffer(0)) == packed
    assert t.buffer_handles[0].size == hurray.buffer_size_bytes(dt, count)


def test_REQ_FACTORY_ONES_unsupported_encodings():
    # only a private extension type has no known encoding; every named type has one
    # (the narrow floats: test_minifloat.py)
    for tag in (0xF0, 0xFE):
        with pytest.raises(hurray.UnsupportedError, match="private extension type"):
            hurray.ones((2,), hurray.Dtype.from_tag(tag))
    with pytest.raises(OverflowError, match="int1"):  # int1 holds -1 and 0 only
        hurray.ones((2,), hurray.int1)
    for name in hurray._DTYPE_NAMES:
        dt = getattr(hurray.dtype, name)
        if dt is hurray.int1:
            continue
        t = hurray.ones((3,), dt)
        assert t.dtype is dt and t.buffer_handles[0].size == hurray.buffer_size_bytes(dt, 3)


def test_REQ_FACTORY_LARGE_fill_without_gil():
    t = hurray.full((1 << 20,), 3, hurray.int16)  # 2 MiB, filled with the GIL released
    a = np.asarray(t)
    assert a.shape == (1 << 20,) and (a == 3).all()
    assert t.buffer_handles[0].alignment == hurray.PAGE_ALIGNMENT
