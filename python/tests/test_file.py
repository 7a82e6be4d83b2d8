"""hurray.save / hurray.load (requirements § Multi-buffer tensors, § Composites / I/O, § Error
Handling; docs/spec/file-container.md HR-FILE-1 … 8).

Round trips of every dtype, layout and quantization scheme (copy and memory-mapped), the
memory-mapped mode's lifetime, names, refusals, and corrupt or truncated containers.
Test names carry requirement ids (docs/requirements/python-binding.md).
"""
import errno
import gc
import os
import struct
import threading
import weakref

import pytest

import hurray
from catalog import every_composite, every_tensor, f32, nested, rand, same, same_saved, u64
from hurray import FileError, Tensor

ITEMS = list(every_tensor()) + list(every_composite())
IDS = [name for name, _ in ITEMS]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("file") / "all.hurray"
    hurray.save(path, dict(ITEMS))
    return path


# ---- round trips ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mmap", [False, True], ids=["copy", "mmap"])
@pytest.mark.parametrize("name,item", ITEMS, ids=IDS)
def test_REQ_FILE_ROUNDTRIP_every_kind(saved, name, item, mmap):
    back = hurray.load(saved, name, mmap=mmap)[name]
    assert type(back) is type(item) and same_saved(item, back), name


@pytest.mark.parametrize("mmap", [False, True], ids=["copy", "mmap"])
def test_REQ_FILE_ROUNDTRIP_load_returns_top_level_in_order(saved, mmap):
    loaded = hurray.load(saved, mmap=mmap)
    assert list(loaded) == IDS  # file order is the caller's order
    assert all(same_saved(item, loaded[name]) for name, item in ITEMS)


def test_REQ_FILE_ROUNDTRIP_canonical_rewrite_HR_FILE_7(saved, tmp_path):
    again = tmp_path / "again.hurray"
    hurray.save(again, hurray.load(saved))
    assert again.read_bytes() == saved.read_bytes()  # write(read(f)) == f


def test_REQ_FILE_ROUNDTRIP_path_types(tmp_path):
    t = Tensor(f32(1, 2, 3), hurray.float32, (3,))
    for p in (tmp_path / "a.h", str(tmp_path / "b.h"), os.fsencode(tmp_path / "c.h")):
        hurray.save(p, {"t": t})
        assert same_saved(hurray.load(p)["t"], t)
    with pytest.raises(TypeError):
        hurray.save(3, {"t": t})
    with pytest.raises(TypeError):
        hurray.load(None)


def test_REQ_FILE_MULTI_BUFFER_every_buffer_written(tmp_path):
    coo = dict(ITEMS)["layout-csf"]
    path = tmp_path / "m.hurray"
    hurray.save(path, {"x": coo})
    data = path.read_bytes()
    for i in range(coo.buffer_count):  # every buffer's bytes are in the data region
        assert bytes(coo.buffer(i)) in data[4096:]
    back = hurray.load(path)["x"]
    assert back.buffer_count == coo.buffer_count == 5 and same_saved(back, coo)


def test_REQ_FILE_MULTI_BUFFER_count_disagreement_rejected(tmp_path):
    coo = Tensor([f32(1, 2), u64(0, 1, 1, 0)], hurray.float32, (2, 2),
                 layout=hurray.CooLayout(nnz=2))
    path = tmp_path / "m.hurray"
    hurray.save(path, {"a": coo})
    data = bytearray(path.read_bytes())
    # index at 64: entry_count (8), entry header (8), "a" + pad (8): the descriptor at 88;
    # buffer_count is byte 5 of its fixed part (16 + 5)
    at = 88 + 16 + 5
    assert data[at] == 2
    for wrong in (1, 3):
        data[at] = wrong
        path.write_bytes(bytes(data))
        with pytest.raises(FileError):
            hurray.load(path)


# ---- memory-mapped mode (HR-FILE-8) ---------------------------------------------------------------


def mapped(path) -> bool:
    with open("/proc/self/maps") as f:
        return any(line.rstrip().endswith(str(path)) for line in f)


def maps_of(path):
    """(start, end) of every mapping of `path` in this process."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            if line.rstrip().endswith(str(path)):
                lo, hi = line.split()[0].split("-")
                out.append((int(lo, 16), int(hi, 16)))
    return out


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps")
def test_REQ_FILE_MMAP_tensors_keep_the_mapping_alive(tmp_path):
    path = tmp_path / "m.hurray"
    t = Tensor(rand(1 << 16), hurray.uint8, (1 << 16,))
    expected = bytes(t.buffer(0))
    hurray.save(path, {"a": t, "b": Tensor(rand(64), hurray.uint8, (64,))})
    loaded = hurray.load(path, mmap=True)
    a = loaded["a"]
    assert mapped(path)
    view = a.buffer(0)
    assert not view.readonly  # copy-on-write: writable, never written back (HR-FILE-11)
    del loaded, view
    gc.collect()
    assert mapped(path)  # the file object is gone; the tensor holds the mapping
    hurray.save(path, {"a": Tensor(rand(64), hurray.uint8, (64,))})  # replaced, not truncated
    assert bytes(a.buffer(0)) == expected  # the old bytes are still the mapping's
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is None
    assert not mapped(path)  # released with the last tensor


def test_REQ_FILE_MMAP_zero_copy_and_aligned(saved):
    np = pytest.importorskip("numpy")
    for mode in (False, True):
        for name, obj in hurray.load(saved, mmap=mode).items():
            if not isinstance(obj, Tensor) or obj.device.kind != "cpu":
                continue
            for h in obj.buffer_handles:  # every address honours its declared alignment
                if h.size:
                    addr = np.frombuffer(obj.buffer(h.index), np.uint8).ctypes.data
                    assert addr % max(64, h.alignment) == 0, (name, h)
                    # writable in both modes (HR-FILE-11), but for a sparse tensor's index
                    # buffers: read-only, checked once (memory-layout.md HR-LAYOUT-26)
                    index = obj.layout.name in ("coo", "csr", "csc") and h.index > 0
                    assert obj.buffer(h.index).readonly is index, (name, h)
    a = hurray.load(saved, "layout-row_major", mmap=True)["layout-row_major"]
    b = hurray.load(saved, "layout-row_major", mmap=True)["layout-row_major"]
    assert bytes(a.buffer(0)) == bytes(b.buffer(0))


def test_REQ_FILE_MMAP_numpy_view_is_the_mapping(tmp_path):
    np = pytest.importorskip("numpy")
    path = tmp_path / "m.hurray"
    a = np.arange(1 << 14, dtype=np.float32)
    hurray.save(path, {"a": hurray.from_numpy(a)})
    t = hurray.load(path, mmap=True)["a"]
    v = np.asarray(t)
    assert np.array_equal(v, a) and v.flags.writeable
    assert v.ctypes.data % 64 == 0
    assert any(lo <= v.ctypes.data < hi for lo, hi in maps_of(path))  # no copy


# ---- names (HR-FILE-3) ----------------------------------------------------------------------------


def test_REQ_FILE_LOAD_NAMES_explicit_and_missing(saved):
    got = hurray.load(saved, "layout-coo", "quant-mx")
    assert list(got) == ["layout-coo", "quant-mx"]
    with pytest.raises(KeyError):
        hurray.load(saved, "no-such-tensor")
    with pytest.raises(TypeError):
        hurray.load(saved, 3)


def test_REQ_FILE_NAMES_refused(tmp_path):
    t = Tensor(f32(1), hurray.float32, (1,))
    path = tmp_path / "n.hurray"
    for bad in ("", "a\0b"):
        with pytest.raises(hurray.InvalidDescriptorError) as info:
            hurray.save(path, {bad: t})
        assert info.value.code == "CONSTRAINT"
    with pytest.raises(TypeError):
        hurray.save(path, {1: t})
    with pytest.raises(TypeError):
        hurray.save(path, {"a": b"bytes"})
    with pytest.raises(TypeError):
        hurray.save(path, [("a", t)])
    assert not path.exists()


# ---- refusals and atomic writes (HR-FILE-5, HR-FILE-7) ----------------------------------------------


def test_REQ_FILE_ATOMIC_failed_save_leaves_the_file(tmp_path):
    path = tmp_path / "f.hurray"
    t = Tensor(f32(1, 2), hurray.float32, (2,))
    hurray.save(path, {"t": t})
    before = path.read_bytes()
    with pytest.raises(TypeError):
        hurray.save(path, {"t": t}, kv={"x": None})
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.save(path, {"t": t}, kv={"": 1})
    with pytest.raises(FileError) as info:
        hurray.save(tmp_path / "no" / "such" / "dir.hurray", {"t": t})
    assert info.value.errno == errno.ENOENT
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.hurray"]  # no temporary left


def test_REQ_FILE_DEVICE_HOST_HR_FILE_5(tmp_path):
    path = tmp_path / "d.hurray"
    pinned = Tensor(f32(1, 2), hurray.float32, (2,), device=hurray.Device("cpu", "host_pinned"))
    hurray.save(path, {"p": pinned})  # written as a host tensor
    back = hurray.load(path)["p"]
    assert back.device.kind == "cpu" and back.device.memory_class == "standard"
    assert bytes(back.buffer(0)) == bytes(pinned.buffer(0))
    declared = Tensor(f32(1, 2), hurray.float32, (2,), device="cuda")
    with pytest.raises(hurray.UnsupportedError):  # device memory cannot be read here
        hurray.save(path, {"c": declared})
    evented = hurray._hurray._tensor_with_sync_mode(pinned, 0, 0x02)
    with pytest.raises(hurray.InvalidDescriptorError) as info:
        hurray.save(path, {"e": evented})  # a file holds producer_synced bytes only
    assert info.value.code == "COMBINATION"


def test_REQ_FILE_LIMITS_as_keywords(saved):
    with pytest.raises(FileError) as info:
        hurray.load(saved, max_file_tensors=3)
    assert info.value.code == "LIMIT"
    with pytest.raises(FileError) as info:
        hurray.load(saved, max_composite_depth=2)
    assert info.value.code == "LIMIT"
    with pytest.raises(FileError) as info:
        hurray.load(saved, max_buffer_bytes=8)
    assert info.value.code == "LIMIT"
    # load_kv reads the header and the KV section only (HR-FILE-9): the index's limits have
    # nothing to bound there (its own limits: test_kv.py)
    assert hurray.load_kv(saved, max_buffer_bytes=8, max_file_tensors=1) == {}
    assert len(hurray.load(saved, max_buffer_bytes=None)) == len(ITEMS)


# ---- errors (requirements § Error Handling) ------------------------------------------------------------------


def test_REQ_FILE_ERRORS_not_found_and_not_a_file(tmp_path):
    with pytest.raises(FileError) as info:
        hurray.load(tmp_path / "missing.hurray")
    e = info.value
    assert isinstance(e, OSError) and e.errno == errno.ENOENT and e.code == "IO"
    assert "missing.hurray" in str(e)
    with pytest.raises(FileError):
        hurray.load(tmp_path)  # a directory
    with pytest.raises(FileError):
        hurray.load_kv(tmp_path / "missing.hurray")


def test_REQ_FILE_ERRORS_os_error_carries_errno(tmp_path):
    # An operating-system refusal is a FileError with its errno. (Permission bits cannot
    # make one for root, which CI runs as; a directory in place of a file can.)
    with pytest.raises(FileError, match="not a regular file"):
        hurray.load(tmp_path)
    with pytest.raises(FileError) as info:
        hurray.load(tmp_path / "missing.hurray")
    assert info.value.errno == errno.ENOENT
    with pytest.raises(FileError) as info:
        hurray.save(tmp_path / "no-such-dir" / "x.hurray", {"t": Tensor(f32(1), hurray.float32, (1,))})
    assert info.value.errno == errno.ENOENT


def small_file(tmp_path):
    path = tmp_path / "s.hurray"
    hurray.save(path, {"t": Tensor(f32(1, 2, 3), hurray.float32, (3,)), "c": nested()},
                kv={"k": [1, "x"]})
    return path, path.read_bytes()


def test_REQ_FILE_TRUNCATED_every_prefix(tmp_path):
    path, data = small_file(tmp_path)
    bad = tmp_path / "cut.hurray"
    data_offset = struct.unpack_from("<Q", data, 48)[0]
    cuts = list(range(0, data_offset + 64)) + list(range(data_offset + 64, len(data), 61))
    for cut in cuts:
        bad.write_bytes(data[:cut])
        for mode in (False, True):
            with pytest.raises(FileError) as info:
                hurray.load(bad, mmap=mode)
            assert info.value.code == "TRUNCATED", cut
    bad.write_bytes(data + b"\0")
    with pytest.raises(FileError) as info:
        hurray.load(bad)
    assert info.value.code == "LENGTH"


def test_REQ_FILE_MALICIOUS_flipped_bytes_never_crash(tmp_path):
    path, data = small_file(tmp_path)
    bad = tmp_path / "flip.hurray"
    data_offset = struct.unpack_from("<Q", data, 48)[0]
    meta_end = max(struct.unpack_from("<Q", data, 16)[0] + struct.unpack_from("<Q", data, 24)[0],
                   struct.unpack_from("<Q", data, 32)[0] + struct.unpack_from("<Q", data, 40)[0])
    positions = list(range(meta_end + 16)) + list(range(data_offset, len(data), 7))
    outcomes = set()
    for pos in positions:
        flipped = bytearray(data)
        flipped[pos] ^= 0x41
        bad.write_bytes(bytes(flipped))
        try:
            hurray.load(bad, mmap=pos % 2 == 0)
            hurray.load_kv(bad)
            outcomes.add("ok")
        except (FileError, hurray.UnsupportedError) as e:
            outcomes.add(type(e).__name__)
            assert e.code is not None
    assert {"ok", "FileError"} <= outcomes


def test_REQ_FILE_ERRORS_corrupt_container_offsets(tmp_path):
    path, data = small_file(tmp_path)
    bad = tmp_path / "bad.hurray"
    for at, value, code in [(0, b"X", "BAD_MAGIC"), (8, b"\2", "VERSION"),
                            (49, b"\x20", "OFFSET")]:
        corrupt = bytearray(data)
        corrupt[at:at + 1] = value
        bad.write_bytes(bytes(corrupt))
        with pytest.raises((FileError, hurray.UnsupportedError)) as info:
            hurray.load(bad)
        assert info.value.code == code
        assert info.value.field.startswith("header.")
        if code != "VERSION":
            assert isinstance(info.value, FileError)
        if code == "OFFSET":  # (libhurray gives header.magic no offset: reported)
            assert info.value.offset == 48


def test_REQ_FILE_GIL_RELEASED_save_and_load(tmp_path):
    path = tmp_path / "big.hurray"
    big = Tensor(rand(64 << 20), hurray.uint8, (64 << 20,))
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.001)

    th = threading.Thread(target=tick)
    th.start()
    try:
        before = len(ticks)
        hurray.save(path, {"big": big})
        back = hurray.load(path)["big"]
        during = len(ticks) - before
    finally:
        stop.set()
        th.join()
    assert same_saved(back, big)
    assert during > 0  # the other thread ran while the file was written and read
