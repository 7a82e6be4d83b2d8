"""hurray.open: the lazy file handle (keys, metadata, descriptor, get_tensor, get_slice),
its framework conversions and lifetime; load's error messages and per-tensor metadata.
Requirements: docs/requirements/python-binding.md § Lazy file access."""
import gc
import json
import os
import subprocess
import sys
import textwrap
import threading
import weakref

import numpy as np
import pytest

import hurray


def _save(path, arrays, kv=None):
    hurray.save(str(path), {k: hurray.from_numpy(v) for k, v in arrays.items()}, kv)


@pytest.fixture()
def small(tmp_path):
    rng = np.random.default_rng(7)
    arrays = {
        "w": rng.standard_normal((6, 5, 4)).astype(np.float32),
        "b": np.arange(10, dtype=np.int8),
        "s": np.array(3.5, dtype=np.float64),
        "m": rng.integers(0, 1000, (7, 3)).astype(np.int64),
        "e": np.zeros((0, 4), dtype=np.float32),
    }
    path = tmp_path / "small.hurray"
    _save(path, arrays, {"author": "me", "n": 3})
    return path, arrays


# ---- REQ_OPEN_LAZY ----------------------------------------------------------------------


@pytest.mark.parametrize("mmap", [True, False])
def test_REQ_OPEN_LAZY_keys_metadata_descriptor_get_tensor(small, mmap):
    path, arrays = small
    loaded = hurray.load(str(path))
    with hurray.open(path, mmap=mmap) as f:
        assert f.keys() == list(arrays)
        assert list(f) == list(arrays)
        assert len(f) == len(arrays)
        assert "w" in f and "nope" not in f and 3 not in f
        assert f.metadata() == {"author": "me", "n": 3} == hurray.load_kv(str(path))
        for name, a in arrays.items():
            d = f.descriptor(name)
            assert isinstance(d, hurray.Descriptor)
            assert d == loaded[name].descriptor
            assert d.shape == a.shape
            t = f.get_tensor(name)
            assert isinstance(t, hurray.Tensor)
            assert t.descriptor == loaded[name].descriptor
            np.testing.assert_array_equal(np.asarray(t), a)
        with pytest.raises(KeyError, match="small.hurray"):
            f.get_tensor("nope")
        with pytest.raises(KeyError):
            f.descriptor("nope")
        with pytest.raises(TypeError):
            f.get_tensor(3)
        assert f.path == str(path)
        assert not f.closed


def test_REQ_OPEN_LAZY_composites_and_members(tmp_path):
    a = hurray.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = hurray.from_numpy(np.arange(6, 12, dtype=np.float32).reshape(2, 3))
    c = hurray.Composite("group", shape=(2,), dtype=hurray.float32, members=[a, b])
    path = tmp_path / "c.hurray"
    hurray.save(str(path), {"c": c, "t": a})
    with hurray.open(path) as f:
        assert f.keys() == ["c", "t"]
        got = f.get_tensor("c")
        assert isinstance(got, hurray.Composite)
        np.testing.assert_array_equal(np.asarray(got.members[1]), np.asarray(b))
        assert "c.1" in f
        np.testing.assert_array_equal(np.asarray(f.get_tensor("c.1")), np.asarray(b))
        with pytest.raises(hurray.UnsupportedError, match="composite"):
            f.get_slice("c")
    with hurray.open(path, framework="numpy") as f:
        assert isinstance(f.get_tensor("c"), hurray.Composite)  # composites stay hurray's
        assert isinstance(f.get_tensor("t"), np.ndarray)


def test_REQ_OPEN_LAZY_validates_like_load(tmp_path):
    path = tmp_path / "bad.hurray"
    _save(path, {"x": np.arange(4, dtype=np.int32)})
    raw = bytearray(path.read_bytes())
    raw[0] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(hurray.FileError):
        hurray.open(path)
    with pytest.raises(hurray.FileError) as e:
        hurray.open(tmp_path / "missing.hurray")
    assert e.value.errno is not None
    with pytest.raises(TypeError):
        hurray.open(3.5)


# ---- REQ_OPEN_SLICE ----------------------------------------------------------------------

KEYS = [
    0,
    -1,
    slice(None),
    slice(1, 3),
    slice(None, None, 2),
    slice(None, None, -1),
    slice(4, 0, -2),
    slice(5, 2),
    (1, 2),
    (slice(1, 4), 2),
    (Ellipsis, 1),
    (0, Ellipsis, slice(1, 3)),
    (slice(None), slice(1, 3), slice(None, None, 3)),
    (2, 3, 1),
    Ellipsis,
    (),
    (slice(None, None, -2), slice(None), -1),
]


@pytest.mark.parametrize("mmap", [True, False])
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_REQ_OPEN_SLICE_matches_numpy_indexing(small, key, mmap):
    path, arrays = small
    w = arrays["w"]
    with hurray.open(path, mmap=mmap) as f:
        sl = f.get_slice("w")
        assert sl.shape == (6, 5, 4) and sl.get_shape() == [6, 5, 4] and len(sl) == 6
        assert sl.dtype == hurray.float32
        got = sl[key]
        assert isinstance(got, hurray.Tensor)
        want = w[key]
        assert got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), want)
        m = f.get_slice("m")  # rank 2: the same key may be out of range, as for NumPy
        try:
            want = arrays["m"][key]
        except IndexError:
            with pytest.raises(IndexError):
                m[key]
        else:
            np.testing.assert_array_equal(np.asarray(m[key]), want)


def test_REQ_OPEN_SLICE_edges(small):
    path, arrays = small
    with hurray.open(path) as f:
        s = f.get_slice("s")
        np.testing.assert_array_equal(np.asarray(s[()]), arrays["s"])
        with pytest.raises(TypeError):
            len(s)
        e = f.get_slice("e")
        assert e[:].shape == (0, 4)
        b = f.get_slice("b")
        np.testing.assert_array_equal(np.asarray(b[-3:]), arrays["b"][-3:])
        with pytest.raises(IndexError):
            b[10]
        with pytest.raises(IndexError):
            b[1, 2]
        with pytest.raises(IndexError):
            b[..., ...]
        with pytest.raises(hurray.UnsupportedError, match="basic"):
            b[[1, 2]]
        with pytest.raises(hurray.UnsupportedError):
            b[None]
        with pytest.raises(hurray.UnsupportedError):
            b[True]  # NumPy reads a bool as a mask, not as 1
        np.testing.assert_array_equal(np.asarray(b[np.int64(3)]), arrays["b"][3])


def test_REQ_OPEN_SLICE_unsupported_layouts(tmp_path):
    q = hurray.Tensor(bytes(32), hurray.int8, (4, 8), quantization=hurray.PerTensorAffine(0.5))
    cm = hurray.zeros((4, 8), hurray.float32, layout=hurray.ColMajorLayout())
    path = tmp_path / "q.hurray"
    hurray.save(str(path), {"q": q, "cm": cm})
    with hurray.open(path) as f:
        for name in ("q", "cm"):
            sl = f.get_slice(name)
            assert sl.shape == (4, 8)
            with pytest.raises(hurray.UnsupportedError, match="row_major"):
                sl[0]
            f.get_tensor(name)  # the whole tensor still loads


def _rchar():
    with open("/proc/self/io") as fh:
        return int(next(line for line in fh if line.startswith("rchar")).split()[1])


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs /proc/self/io (Linux)")
@pytest.mark.parametrize("mmap", [True, False])
def test_REQ_OPEN_SLICE_reads_only_the_rows_selected_HR_FILE_14(tmp_path, mmap):
    rows, cols = 512, 32768  # 64 MiB of float32, 128 KiB a row
    a = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    path = tmp_path / "big.hurray"
    _save(path, {"big": a, "small": np.ones(3, np.float32)})
    del a
    with hurray.open(path, mmap=mmap) as f:
        sl = f.get_slice("big")
        before = _rchar()
        got = np.asarray(sl[100:103])
        contiguous = _rchar() - before
        before = _rchar()
        cols_of_rows = np.asarray(sl[10:400:100, 5:9])  # 4 rows read one by one
        strided = _rchar() - before
    want = np.arange(100 * cols, 103 * cols, dtype=np.float32).reshape(3, cols)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        cols_of_rows, np.array([[r * cols + c for c in range(5, 9)] for r in (10, 110, 210, 310)],
                               dtype=np.float32))
    assert contiguous <= 3 * cols * 4 + 4096, contiguous
    assert strided <= 4 * cols * 4 + 4096, strided


# ---- REQ_OPEN_FRAMEWORK -----------------------------------------------------------------


@pytest.mark.parametrize("mmap", [True, False])
def test_REQ_OPEN_FRAMEWORK_numpy_torch_jax(small, mmap):
    import jax
    import torch

    path, arrays = small
    w = arrays["w"]
    for fw in ("numpy", "np"):
        with hurray.open(path, framework=fw, mmap=mmap) as f:
            t = f.get_tensor("w")
            assert isinstance(t, np.ndarray)
            np.testing.assert_array_equal(t, w)
            t[0, 0, 0] = 42.0  # writable: copies are the caller's, mappings copy-on-write
            s = f.get_slice("w")[1:3]
            assert isinstance(s, np.ndarray)
            np.testing.assert_array_equal(s, w[1:3])
    for fw in ("torch", "pt"):
        with hurray.open(path, framework=fw, mmap=mmap) as f:
            t = f.get_tensor("w")
            assert isinstance(t, torch.Tensor)
            np.testing.assert_array_equal(t.numpy(), w)
            t.add_(1)  # safe: the mapping is copy-on-write
            assert isinstance(f.get_slice("m")[2], torch.Tensor)
    with hurray.open(path, framework="jax", mmap=mmap) as f:
        t = f.get_tensor("w")
        assert isinstance(t, jax.Array)
        np.testing.assert_array_equal(np.asarray(t), w)
        np.testing.assert_array_equal(np.asarray(f.get_slice("w")[:, 1]), w[:, 1])
    # the file never changed
    np.testing.assert_array_equal(np.asarray(hurray.load(str(path))["w"]), w)
    with pytest.raises(ValueError, match="unknown framework"):
        hurray.open(path, framework="tensorflow")
    with pytest.raises(TypeError):
        hurray.open(path, framework=1)


# ---- REQ_OPEN_CLOSE -----------------------------------------------------------------------


def test_REQ_OPEN_CLOSE_plain_object_and_context_manager(small):
    path, arrays = small
    f = hurray.open(path)
    t = f.get_tensor("w")
    sl = f.get_slice("w")
    ref = weakref.ref(f)
    f.close()
    assert f.closed
    f.close()  # idempotent
    for call in (f.keys, f.metadata, lambda: f.get_tensor("w"), lambda: f.descriptor("w"),
                 lambda: f.get_slice("w"), lambda: sl[0], lambda: len(f), lambda: "w" in f):
        with pytest.raises(ValueError, match="closed.*small.hurray"):
            call()
    with pytest.raises(ValueError, match="closed"):
        with f:
            pass
    np.testing.assert_array_equal(np.asarray(t), arrays["w"])  # outlives the handle
    del f, sl
    gc.collect()
    assert ref() is None
    np.testing.assert_array_equal(np.asarray(t), arrays["w"])
    with hurray.open(path) as g:
        t2 = g.get_tensor("b")
    assert g.closed
    np.testing.assert_array_equal(np.asarray(t2), arrays["b"])
    assert "closed" in repr(g)


def test_REQ_OPEN_CLOSE_from_another_thread_while_reading(tmp_path):
    a = np.arange(4 << 20, dtype=np.float32)
    path = tmp_path / "t.hurray"
    _save(path, {"a": a})
    for _ in range(5):
        f = hurray.open(path, mmap=False)
        got, errors = [], []

        def reader(f=f, got=got, errors=errors):
            try:
                for _ in range(20):
                    got.append(f.get_slice("a")[1000:2000])
            except ValueError as e:
                errors.append(e)

        th = threading.Thread(target=reader)
        th.start()
        f.close()
        th.join()
        for t in got:
            np.testing.assert_array_equal(np.asarray(t), a[1000:2000])
        assert all("closed" in str(e) for e in errors)


# ---- REQ_LOAD_ERROR_NAMES -----------------------------------------------------------------


def test_REQ_LOAD_ERROR_NAMES_limit_names_tensor_and_file(tmp_path):
    path = tmp_path / "named.hurray"
    _save(path, {"small": np.ones(4, np.float32), "layer.7.weight": np.ones(4096, np.float32)})
    for call in (lambda: hurray.load(str(path), max_buffer_bytes=1024),
                 lambda: hurray.open(path, max_buffer_bytes=1024)):
        with pytest.raises(hurray.FileError) as e:
            call()
        msg = str(e.value)
        assert 'entry "layer.7.weight" (index[1])' in msg, msg
        assert "named.hurray" in msg, msg
        assert e.value.field == "index[1]/buffers[0].size"


# ---- REQ_OPEN_COST, REQ_LOAD_TENSOR_METADATA (subprocesses) --------------------------------


def _run(code, *args):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _many(tmp_path, n=2000, elems=1024):
    path = tmp_path / "many.hurray"
    _save(path, {f"model.layers.{i}.weight": np.full(elems, i, np.float32) for i in range(n)})
    return path


def test_REQ_LOAD_TENSOR_METADATA_at_most_2KiB_per_tensor(tmp_path):
    path = _many(tmp_path)
    r = _run("""
        import gc, json, sys, tracemalloc
        import hurray
        path = sys.argv[1]
        hurray.load(path); hurray.load(path, mmap=True)  # warm: types, caches
        out = {}
        tracemalloc.start()
        for mmap in (False, True):
            gc.collect()
            base = tracemalloc.get_traced_memory()[0]
            d = hurray.load(path, mmap=mmap)
            held = tracemalloc.get_traced_memory()[0] - base
            data = 0 if mmap else sum(t.nbytes for t in d.values())
            out[str(mmap)] = (held - data) / len(d)
            del d
        print(json.dumps(out))
        """, path)
    assert r["False"] <= 2048, r
    assert r["True"] <= 2048, r


def test_REQ_OPEN_COST_nothing_per_tensor_at_open(tmp_path):
    # 1000 floats a tensor: 96 bytes of padding after each, every gap checked at open
    # (file-container.md HR-FILE-9) by positioned reads, never through a mapping
    path = _many(tmp_path, elems=1000)
    r = _run("""
        import gc, json, sys, tracemalloc
        import hurray
        path = sys.argv[1]
        hurray.open(path).close()
        def rss_file():
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("RssFile:"):
                        return int(line.split()[1]) * 1024
            return 0
        tracemalloc.start()
        gc.collect()
        base = tracemalloc.get_traced_memory()[0]
        rss0 = rss_file()
        f = hurray.open(path)
        held = tracemalloc.get_traced_memory()[0] - base
        rss1 = rss_file()
        t = f.get_tensor("model.layers.1999.weight")
        ok = float(sum(memoryview(t.buffer(0)).cast("f")[:2])) == 2 * 1999.0
        print(json.dumps({"held": held, "rss": rss1 - rss0, "ok": ok}))
        """, path)
    # the index bytes (~ 140 B an entry here), a copy of each name, a constant record
    # an entry and the name table: no per-tensor Python object, no decoded descriptor
    assert r["held"] <= 2000 * 256, r
    assert r["rss"] <= 256 << 10, r  # no data page comes in through the handle at open
    assert r["ok"], r
