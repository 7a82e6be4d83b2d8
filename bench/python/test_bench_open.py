"""hurray.open (the lazy handle) against safetensors' safe_open, and hurray.load against
safetensors' load_file, in the same run.

Files (float32, written once, warm in the page cache):
  `2000x4KiB`  2,000 tensors of 4 KiB, named like a checkpoint's ("model.layers.N.weight")
  `64MiB`      8 tensors of 8 MiB

Groups, per file:
  open-<file>        hurray.open(path) entered and closed (header, whole index, gaps and KV
                     validated; nothing built per tensor)  vs safe_open(path, "numpy")
  open-one-<file>    open + get_tensor of one tensor by name (mapped, numpy)
                                                           vs safe_open + get_tensor
  open-slice-<file>  open + get_slice(name)[a:b] (a few rows of one tensor, numpy)
                                                           vs safe_open + get_slice(name)[a:b]
  load-<file>        hurray.load(path) (every tensor read into memory of its own)
                                                           vs safetensors.numpy.load_file
The ratio lines are hurray / anchor (goal: <= 1.0 for each group); the throughput lines give
GiB/s for the whole-file loads.

    .venv/bin/python -m pytest bench/python/test_bench_open.py --benchmark-only
"""
import numpy as np
import pytest

import hurray

FILES = {"2000x4KiB": (2000, 4 << 10), "64MiB": (8, 8 << 20)}
ROUNDS = {"2000x4KiB": 30, "64MiB": 10}


def _safetensors():
    try:
        import safetensors.numpy  # noqa: F401
    except ImportError:
        pytest.skip("safetensors is not installed: its anchor is skipped (ci/requirements-dev.txt)")
    import safetensors

    return safetensors


@pytest.fixture(scope="module", params=list(FILES))
def case(request, tmp_path_factory):
    name = request.param
    count, nbytes = FILES[name]
    rng = np.random.default_rng(0)
    arrays = {f"model.layers.{i}.weight": rng.random((nbytes // 4 // 64, 64), dtype=np.float32)
              for i in range(count)}
    d = tmp_path_factory.mktemp(f"open-{name}")
    hpath, spath = str(d / "f.hurray"), str(d / "f.safetensors")
    hurray.save(hpath, {k: hurray.from_numpy(a) for k, a in arrays.items()})
    try:
        import safetensors.numpy

        safetensors.numpy.save_file(arrays, spath)
    except ImportError:
        spath = None
    one = f"model.layers.{count // 2}.weight"
    return {"name": name, "hurray": hpath, "safetensors": spath, "one": one,
            "nbytes": count * nbytes, "rounds": ROUNDS[name]}


def _run(benchmark, case, group, role, fn, throughput=False):
    benchmark.group = f"{group}-{case['name']}"
    benchmark.extra_info.update(role=role, nbytes=case["nbytes"], throughput=throughput)
    return benchmark.pedantic(fn, rounds=case["rounds"], warmup_rounds=1)


# ---- open ----------------------------------------------------------------------------------


def test_open_hurray(benchmark, case):
    def run():
        with hurray.open(case["hurray"], framework="numpy"):
            pass

    _run(benchmark, case, "open", "subject", run)


def test_open_safetensors(benchmark, case):
    st = _safetensors()

    def run():
        with st.safe_open(case["safetensors"], framework="numpy"):
            pass

    _run(benchmark, case, "open", "anchor", run)


# ---- one tensor by name ----------------------------------------------------------------------


def test_open_one_hurray(benchmark, case):
    def run():
        with hurray.open(case["hurray"], framework="numpy") as f:
            return f.get_tensor(case["one"])

    out = _run(benchmark, case, "open-one", "subject", run)
    assert out.shape[1] == 64


def test_open_one_safetensors(benchmark, case):
    st = _safetensors()

    def run():
        with st.safe_open(case["safetensors"], framework="numpy") as f:
            return f.get_tensor(case["one"])

    out = _run(benchmark, case, "open-one", "anchor", run)
    assert out.shape[1] == 64


# ---- one slice -------------------------------------------------------------------------------


def test_open_slice_hurray(benchmark, case):
    def run():
        with hurray.open(case["hurray"], framework="numpy") as f:
            return f.get_slice(case["one"])[2:6]

    out = _run(benchmark, case, "open-slice", "subject", run)
    assert out.shape == (4, 64)


def test_open_slice_safetensors(benchmark, case):
    st = _safetensors()

    def run():
        with st.safe_open(case["safetensors"], framework="numpy") as f:
            return f.get_slice(case["one"])[2:6]

    out = _run(benchmark, case, "open-slice", "anchor", run)
    assert out.shape == (4, 64)


# ---- whole-file load ---------------------------------------------------------------------------


def test_load_hurray(benchmark, case):
    out = _run(benchmark, case, "load", "subject", lambda: hurray.load(case["hurray"]), True)
    assert len(out) == FILES[case["name"]][0]


def test_load_safetensors(benchmark, case):
    st = _safetensors()
    import safetensors.numpy

    assert st is not None
    out = _run(benchmark, case, "load", "anchor",
               lambda: safetensors.numpy.load_file(case["safetensors"]), True)
    assert len(out) == FILES[case["name"]][0]
