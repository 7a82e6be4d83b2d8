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
