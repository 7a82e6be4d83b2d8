"""hurray.save / save_bytes with NumPy arrays and PyTorch tensors as values, compact storage of
non-contiguous inputs, the same bytes wherever the source lives, and save refusing what a
default load would refuse (docs/requirements/python-binding.md § Files: REQ_SAVE_*)."""
import os

import numpy as np
import pytest
import torch

import hurray
from catalog import at_page_offset


def test_REQ_SAVE_VALUES_numpy_and_torch_directly(tmp_path):
    p = tmp_path / "v.hr"
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = torch.arange(6, dtype=torch.bfloat16).reshape(2, 3)
    hurray.save(p, {"a": a, "t": t, "h": hurray.from_numpy(np.ones(3))})
    got = hurray.load(p)
    np.testing.assert_array_equal(np.asarray(got["a"]), a)
    assert torch.equal(got["t"].to_torch(), t)
    assert got["t"].dtype is hurray.bfloat16
    np.testing.assert_array_equal(np.asarray(got["h"]), np.ones(3))


def test_REQ_SAVE_VALUES_requires_grad_and_type_error_names_full_type(tmp_path):
    p = tmp_path / "g.hr"
    w = torch.ones(4, requires_grad=True)
    hurray.save(p, {"w": w})
    assert torch.equal(hurray.load(p)["w"].to_torch(), torch.ones(4))
    with pytest.raises(TypeError, match=r"tensors\[x\].*not list"):
        hurray.save(p, {"x": [1, 2]})
    class Tensor:  # a class named like torch's: the message must say whose
        pass
    with pytest.raises(TypeError, match=r"not test_save_values\..*Tensor"):
        hurray.save(p, {"x": Tensor()})


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_REQ_SAVE_COMPACT_non_contiguous_stores_its_elements_only(tmp_path, kind):
    # an 8-column slice of a 4096 x 4096 float32 matrix: 128 KiB of elements, 64 MiB of base;
    # the base 64-byte aligned, so that a zero-copy ingest would share (and span) all of it
    with hurray.aligned_allocator():
        base = np.arange(4096 * 4096, dtype=np.float32).reshape(4096, 4096)
    assert base.ctypes.data % 64 == 0
    view = base[:, :8] if kind == "numpy" else torch.from_numpy(base)[:, :8]
    if kind == "numpy":  # from_numpy itself shares the strided view (its span is the base)
        assert isinstance(hurray.from_numpy(view).layout, hurray.StridedLayout)
    p = tmp_path / "s.hr"
    hurray.save(p, {"s": view})
    assert os.path.getsize(p) <= 4096 * 8 * 4 + 2 * 4096
    got = hurray.load(p)["s"]
    np.testing.assert_array_equal(np.asarray(got), base[:, :8])
    assert got.shape == (4096, 8)


def test_REQ_SAVE_SAME_BYTES_wherever_the_source_lives(tmp_path):
    data = np.arange(1000, dtype=np.float32)
    files = []
    for offset in (0, 64, 128, 512):
        a = at_page_offset(data.size, offset, np.float32)
        a[:] = data
        t = hurray.from_numpy(a, copy=False)  # zero-copy: alignment measured from the address
        files.append(hurray.save_bytes({"x": t, "y": t}))
    assert all(f == files[0] for f in files)
    # the declared alignment in the file is the one an owned buffer of the size declares
    loaded = hurray.load_bytes(files[0])["x"]
    assert loaded.buffer_handles[0].alignment == 64
    big = at_page_offset(1 << 18, 64, np.float32)  # 1 MiB
    assert hurray.load_bytes(hurray.save_bytes({"b": hurray.from_numpy(big, copy=False)}))[
        "b"].buffer_handles[0].alignment == 4096


def test_REQ_SAVE_SAME_BYTES_save_and_save_bytes_agree(tmp_path):
    tensors = {f"t{i}": np.full(100 + i, i, dtype=np.int16) for i in range(20)}
    p = tmp_path / "f.hr"
    hurray.save(p, tensors, {"k": "v"})
    assert p.read_bytes() == hurray.save_bytes(tensors, {"k": "v"})


def test_REQ_SAVE_LIMITS_name_longer_than_a_reader_accepts(tmp_path):
    p = tmp_path / "n.hr"
    name = "n" * 2000
    with pytest.raises(hurray.InvalidDescriptorError, match="max_name_bytes") as e:
        hurray.save(p, {name: np.zeros(1)})
    assert e.value.code == "LIMIT"
    assert not p.exists()
    # the same max_* on both sides writes and reads it
    hurray.save(p, {name: np.zeros(1)}, max_name_bytes=4096)
    with pytest.raises(hurray.FileError):
        hurray.load(p)
    assert list(hurray.load(p, max_name_bytes=4096)) == [name]


def test_REQ_SAVE_LIMITS_metadata_value_larger_than_max_kv_bytes(tmp_path):
    p = tmp_path / "k.hr"
    with pytest.raises(hurray.InvalidDescriptorError, match="max_kv_bytes"):
        hurray.save(p, {"x": np.zeros(1)}, {"blob": b"\0" * (80 << 20)})
    assert not p.exists()


def test_REQ_SAVE_LIMITS_buffer_larger_than_max_buffer_bytes_names_the_tensor(tmp_path):
    # a 16.25 GiB tensor without 16 GiB of memory: a lazily committed zero-filled map
    import mmap

    n = (16 << 30) + (256 << 20)
    try:
        m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(
            mmap, "MAP_NORESERVE", 0))
    except (OSError, OverflowError):
        pytest.skip("no 16.25 GiB of address space")
    try:
        a = np.frombuffer(m, dtype=np.uint8)
        p = tmp_path / "big.hr"
        with pytest.raises(hurray.InvalidDescriptorError, match='"huge".*max_buffer_bytes') as e:
            hurray.save(p, {"small": np.zeros(1), "huge": a})
        assert e.value.code == "LIMIT"
        assert e.value.field.startswith("index[1]/")
        assert not p.exists()
        del a
    finally:
        m.close()


# ---- the plan path: save builds the writer's item straight from the ndarray -------------------
# A contiguous, little-endian ndarray of a type hurray has (not sub-byte) is written from a plain
# plan hurray._numpy fills (no Tensor over it); every other array takes _save_view as before.
# The bytes must be those of _save_view's tensor, which is what save stored for it before.

import gc
import sys
import weakref

import ml_dtypes

from hurray import _numpy as _np_bridge

_NUMPY_TYPES = "?bBhHiIlLqQefdFD"
_ML_TYPES = [n for n in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                         "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3",
                         "float8_e8m0fnu", "int4", "uint4", "int2", "uint2", "int1", "uint1",
                         "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "complex32",
                         "bcomplex32")
             if hasattr(ml_dtypes, n)]


def _typed(dt, shape):
    n = int(np.prod(shape, dtype=np.int64))
    raw = np.random.default_rng(n + len(str(dt))).integers(0, 4, size=n)
    return raw.astype(np.int8).astype(dt).reshape(shape)


def _layouts(dt):
    """(label, array, planned): planned is True where the plan path covers the array."""
    base = _typed(dt, (6, 10))
    ro = base.copy()
    ro.flags.writeable = False
    odd = np.frombuffer(bytearray(base.tobytes()) + b"\0" * 8, dtype=base.dtype,
                        offset=base.dtype.itemsize, count=30)  # not 64-byte aligned
    return [
        ("c", base, True),
        ("f", np.asfortranarray(base), True),
        ("0-d", base[2:3, 3].reshape(()), True),
        ("size-0", base[:0], True),
        ("size-0-2d", np.empty((3, 0), dtype=base.dtype), True),
        ("read-only", ro, True),
        ("unaligned", odd, True),
        ("extent-1", base[:1].reshape(1, 10, 1), True),
        ("rank-64", base.reshape(-1)[:1].reshape((1,) * 64), True),  # the format's maximum
        ("strided", base[:, ::2], False),
        ("negative", base[::-1], False),
        ("broadcast", np.broadcast_to(base[:1], (4, 10)), False),
    ]


def _is_planned(tmp_path, value):
    """Whether save held `value` itself during the write (the plan path), or a Tensor over it."""
    held = {}

    def progress(done, total):
        refs = gc.get_referrers(value)
        held["tensor"] = any(isinstance(r, hurray.Tensor) for r in refs)
        held["list"] = any(isinstance(r, list) and any(x is value for x in r) for r in refs)

    hurray.save(tmp_path / "probe.hr", {"x": value}, progress=progress, durable=False)
    return held["list"] and not held["tensor"]


def _old_path(value):
    """What save stored for an ndarray before the plan path (and still does where it does not
    apply): the tensor hurray._numpy._save_view makes."""
    return _np_bridge._save_view(value) if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize("dt", list(_NUMPY_TYPES) + _ML_TYPES)
def test_REQ_SAVE_SAME_BYTES_plan_path_writes_what_the_tensor_path_wrote(tmp_path, dt):
    dtype = np.dtype(getattr(ml_dtypes, dt) if dt in _ML_TYPES else dt)
    has_type, sub_byte = True, False
    try:
        sub_byte = _np_bridge._save_view(np.zeros(1, dtype)).dtype.is_sub_byte  # packed: a copy
    except hurray.UnsupportedError:
        has_type = False  # an ml_dtypes type hurray has no element type for
    for label, a, planned in _layouts(dtype):
        if not has_type:
            with pytest.raises(hurray.UnsupportedError, match="has no hurray element type"):
                hurray.save_bytes({"x": a})
            continue
        want = hurray.save_bytes({"x": _old_path(a)})
        assert hurray.save_bytes({"x": a}) == want, (dt, label)
        p = tmp_path / "f.hr"
        hurray.save(p, {"x": a}, durable=False)
        assert p.read_bytes() == want, (dt, label)
        assert _is_planned(tmp_path, a) == (planned and not sub_byte), (dt, label)
        got = hurray.load_bytes(want)["x"]
        assert got.shape == a.shape
        if dt in _NUMPY_TYPES:
            np.testing.assert_array_equal(np.asarray(got), a)


class _Sub(np.ndarray):
    pass


def test_REQ_SAVE_SAME_BYTES_plan_path_in_a_mixed_mapping(tmp_path):
    rng = np.random.default_rng(7)
    f = rng.standard_normal((5, 7)).astype(np.float32)
    values = {
        "c": f,
        "f": np.asfortranarray(f),
        "strided": f[:, ::3],
        "big_endian": f.astype(">f4"),
        "sub": np.arange(9, dtype=np.int8).astype(ml_dtypes.int4),
        "tensor": hurray.from_numpy(np.arange(4.0)),
        "torch": torch.arange(6, dtype=torch.int32),
        "subclass": f.view(_Sub),  # its bytes, as _save_view took them
        "view": np.lib.stride_tricks.as_strided(f, f.shape, f.strides),
        "empty": np.empty((0, 3), np.float64),
        "scalar": np.full((), 2.5),
    }
    want = hurray.save_bytes({k: _old_path(v) for k, v in values.items()}, {"k": "v"})
    assert hurray.save_bytes(values, {"k": "v"}) == want
    p = tmp_path / "m.hr"
    hurray.save(p, values, {"k": "v"})
    assert p.read_bytes() == want
    assert _is_planned(tmp_path, values["subclass"])
    assert not _is_planned(tmp_path, values["big_endian"])


def test_REQ_SAVE_LIMITS_plan_path_refusals_name_the_tensor(tmp_path):
    p = tmp_path / "r.hr"
    cases = [
        ({"small": np.zeros(2), "wide": np.zeros(100, np.float32)}, {"max_buffer_bytes": 64},
         '"wide".*max_buffer_bytes'),
        ({"deep": np.zeros((1,) * 9)}, {"max_rank": 8}, '"deep".*max_rank'),
    ]
    for tensors, limits, pattern in cases:
        old = {k: _old_path(v) for k, v in tensors.items()}
        with pytest.raises(hurray.InvalidDescriptorError, match=pattern) as new_err:
            hurray.save(p, tensors, **limits)
        with pytest.raises(hurray.InvalidDescriptorError) as old_err:
            hurray.save(p, old, **limits)
        assert str(new_err.value) == str(old_err.value)
        assert new_err.value.code == old_err.value.code == "LIMIT"
        assert new_err.value.field == old_err.value.field
        assert not p.exists()
    # what the plan does not take keeps _save_view's refusals
    with pytest.raises(hurray.UnsupportedError, match="has no hurray element type"):
        hurray.save(p, {"s": np.array(["a"])})
    assert not p.exists()


def test_REQ_SAVE_VALUES_plan_path_holds_no_reference_after_save(tmp_path):
    p = tmp_path / "l.hr"
    arrays = [np.ones((64, 16), np.float32), np.asfortranarray(np.ones((3, 5))),
              np.zeros(()), np.empty(0, np.int16)]
    before = [sys.getrefcount(a) for a in arrays]
    refs = [weakref.ref(a) for a in arrays]
    hurray.save(p, {f"a{i}": a for i, a in enumerate(arrays)}, durable=False)
    hurray.save_bytes({f"a{i}": a for i, a in enumerate(arrays)})
    with pytest.raises(hurray.InvalidDescriptorError):  # refused by the writer's planning
        hurray.save(p, {f"a{i}": a for i, a in enumerate(arrays)}, max_buffer_bytes=8)
    with pytest.raises(TypeError):  # a later value refused: the earlier plans released
        hurray.save(p, {"a": arrays[0], "b": object()})
    assert [sys.getrefcount(a) for a in arrays] == before
    del arrays
    gc.collect()
    assert all(r() is None for r in refs)
