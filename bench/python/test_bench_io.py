"""hurray.save / hurray.load and the streams against safetensors, NumPy and PyTorch, in the
same run.

Tensor sets (float32, random): `1MiB` (4 x 256 KiB), `64MiB` (8 x 8 MiB), and `1GiB`
(16 x 64 MiB) when HURRAY_BENCH_1GIB=1 (it needs ~6 GiB of memory and disk and takes minutes).

Groups, per set:
  save-<set>       hurray.save(path, tensors)          vs safetensors.numpy.save_file,
                   numpy.savez (one uncompressed .npz), torch.save (a dict of tensors)
  load-<set>       hurray.load(path) (read into memory, validated)
                                                        vs safetensors.numpy.load_file,
                   numpy.load of the .npz (every array read), torch.load
  load-mmap-<set>  hurray.load(path, mmap=True) (validated, buffers borrowed from the mapping,
                   not touched)                         vs safetensors.safe_open(framework=
                   "numpy") + get_tensor for each (reads each tensor), numpy.load(mmap_mode="r")
                   of one .npy per tensor, torch.load(mmap=True)
  stream-<set>     a StreamWriter thread -> pipe -> StreamReader (every item yielded)
                                                        vs the same bytes copied through a pipe
                                                        with os.write / os.readinto
Files are on the same file system, warm in the page cache (each file is written once before
its load is timed): the numbers are memory and system-call bound, not disk bound. The
throughput lines give GiB/s (set bytes / min time); the ratio lines are hurray / anchor.

    make bench-python      # or: .venv/bin/python -m pytest bench/python/test_bench_io.py --benchmark-only
"""
import os

import numpy as np
import pytest

import hurray

SETS = {"1MiB": (4, 256 << 10), "64MiB": (8, 8 << 20)}
if os.environ.get("HURRAY_BENCH_1GIB") == "1":
    SETS["1GiB"] = (16, 64 << 20)
ROUNDS = {"1MiB": 50, "64MiB": 8, "1GiB": 3}


def _arrays(count, nbytes):
    rng = np.random.default_rng(0)
    with hurray.aligned_allocator():  # shared by from_numpy with no copy
        return {f"t{i}": rng.random(nbytes // 4, dtype=np.float32) for i in range(count)}


@pytest.fixture(scope="module", params=list(SETS))
def case(request, tmp_path_factory):
    name = request.param
    count, nbytes = SETS[name]
    arrays = _arrays(count, nbytes)
    tensors = {k: hurray.from_numpy(a, copy=False) for k, a in arrays.items()}
    d = tmp_path_factory.mktemp(f"io-{name}")
    return {"name": name, "arrays": arrays, "tensors": tensors, "dir": d,
            "nbytes": count * nbytes, "rounds": ROUNDS[name]}


def _run(benchmark, case, group, role, fn, *args, **kwargs):
    benchmark.group = f"{group}-{case['name']}"
    benchmark.extra_info.update(role=role, nbytes=case["nbytes"], throughput=True)
    return benchmark.pedantic(fn, args=args, kwargs=kwargs, rounds=case["rounds"],
                              warmup_rounds=1)


def _torch():
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed: the torch anchor is skipped (the others run)")
    return torch


def _safetensors():
    try:
        import safetensors.numpy  # noqa: F401
    except ImportError:
        pytest.skip("safetensors is not installed: its anchor is skipped (ci/requirements-dev.txt)")
    import safetensors

    return safetensors


# ---- save ----------------------------------------------------------------------------------------


def test_save_hurray(benchmark, case):
    path = case["dir"] / "h.hurray"
    _run(benchmark, case, "save", "subject", hurray.save, path, case["tensors"])
    back = hurray.load(path)
    assert all(np.array_equal(np.asarray(back[k]), a) for k, a in case["arrays"].items())


def test_save_anchor_safetensors(benchmark, case):
    st = _safetensors()
    _run(benchmark, case, "save", "anchor", st.numpy.save_file, case["arrays"],
         case["dir"] / "s.safetensors")


def test_save_anchor_numpy_savez(benchmark, case):
    _run(benchmark, case, "save", "anchor", np.savez, case["dir"] / "n.npz", **case["arrays"])


def test_save_anchor_torch(benchmark, case):
    torch = _torch()
    ts = {k: torch.from_numpy(a) for k, a in case["arrays"].items()}
    _run(benchmark, case, "save", "anchor", torch.save, ts, case["dir"] / "t.pt")


# ---- load (into memory) ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(case):
    d = case["dir"]
    paths = {"hurray": d / "load.hurray", "npz": d / "load.npz", "npy": {}}
    hurray.save(paths["hurray"], case["tensors"])
    np.savez(paths["npz"], **case["arrays"])
    for k, a in case["arrays"].items():
        paths["npy"][k] = d / f"load-{k}.npy"
        np.save(paths["npy"][k], a)
    try:
        import safetensors.numpy

        paths["st"] = d / "load.safetensors"
        safetensors.numpy.save_file(case["arrays"], paths["st"])
    except ImportError:
        pass
    try:
        import torch

        paths["pt"] = d / "load.pt"
        torch.save({k: torch.from_numpy(a) for k, a in case["arrays"].items()}, paths["pt"])
    except ImportError:
        pass
    return paths


def test_load_hurray(benchmark, case, files):
    out = _run(benchmark, case, "load", "subject", hurray.load, files["hurray"])
    assert all(np.array_equal(np.asarray(out[k]), a) for k, a in case["arrays"].items())


def test_load_anchor_safetensors(benchmark, case, files):
    st = _safetensors()
    _run(benchmark, case, "load", "anchor", st.numpy.load_file, files["st"])


def _npz_all(path):
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def test_load_anchor_numpy_npz(benchmark, case, files):
    _run(benchmark, case, "load", "anchor", _npz_all, files["npz"])


def test_load_anchor_torch(benchmark, case, files):
    torch = _torch()
    _run(benchmark, case, "load", "anchor", torch.load, files["pt"])


# ---- load (memory-mapped) -------------------------------------------------------------------------


def test_load_mmap_hurray(benchmark, case, files):
    out = _run(benchmark, case, "load-mmap", "subject", hurray.load, files["hurray"], mmap=True)
    assert all(np.array_equal(np.asarray(out[k]), a) for k, a in case["arrays"].items())


def _safe_open_all(path):
    from safetensors import safe_open

    with safe_open(path, framework="numpy") as f:
        return {k: f.get_tensor(k) for k in f.keys()}


def test_load_mmap_anchor_safetensors_safe_open(benchmark, case, files):
    _safetensors()
    _run(benchmark, case, "load-mmap", "anchor", _safe_open_all, files["st"])


def _npy_mmap_all(paths):
    return {k: np.load(p, mmap_mode="r") for k, p in paths.items()}


def test_load_mmap_anchor_numpy_mmap_mode(benchmark, case, files):
    _run(benchmark, case, "load-mmap", "anchor", _npy_mmap_all, files["npy"])


def test_load_mmap_anchor_torch_mmap(benchmark, case, files):
    torch = _torch()
    _run(benchmark, case, "load-mmap", "anchor", torch.load, files["pt"], mmap=True)


# ---- stream over a pipe ------------------------------------------------------------------------------

# the pipe helpers are conftest.py's fixtures (shared with test_bench_stream.py)


def test_stream_hurray_pipe(benchmark, case, stream_roundtrip):
    tensors = list(case["tensors"].values())
    items = _run(benchmark, case, "stream", "subject", stream_roundtrip, tensors)
    assert len(items) == len(tensors)
    assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(tensors, items))


def test_stream_anchor_raw_pipe(benchmark, case, raw_pipe_roundtrip):
    w = hurray.StreamWriter()
    for t in case["tensors"].values():
        w.write(t)
    data = w.getvalue()  # the same bytes the stream carries
    out = bytearray(len(data))
    got = _run(benchmark, case, "stream", "anchor", raw_pipe_roundtrip, data, out)
    assert got == len(data) and out == data
