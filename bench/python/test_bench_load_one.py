"""Loading one small tensor by name from a large file: hurray.load(path, name) (copy and
mmap) against safetensors' safe_open(path).get_tensor(name), in the same run.

The files hold a 1 GiB uint8 tensor and then a 32-byte float32 tensor "small"; both are made
sparse (the 1 GiB is a hole), so they cost no disk and are cheap to build. hurray's file is
assembled by the spec's arithmetic (python/tests/filebuild.py), safetensors' by its format (an
8-byte header length, a JSON header, the data). Each call opens the file, reads its metadata
and returns "small" (hurray validates the whole index and its gaps first; file-container.md
HR-FILE-9): what matters is that the cost does not grow with the 1 GiB the call skips.

    .venv/bin/python -m pytest bench/python/test_bench_load_one.py --benchmark-only
"""
import json
import os
import struct
import sys

import numpy as np
import pytest

import hurray

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "tests"))
import filebuild  # noqa: E402

BIG = 1 << 30
SMALL = np.arange(8, dtype=np.float32)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("load-one")
    hry = d / "big.hry"
    filebuild.build(hry, [("big", 1, filebuild.uint8_descriptor(BIG)),
                          ("small", 1, hurray.from_numpy(SMALL).descriptor.encode())],
                    {(1, 0): SMALL.tobytes()})
    st = d / "big.safetensors"
    header = json.dumps({"big": {"dtype": "U8", "shape": [BIG], "data_offsets": [0, BIG]},
                         "small": {"dtype": "F32", "shape": [8],
                                   "data_offsets": [BIG, BIG + 32]}}).encode()
    header += b" " * (-len(header) % 8)
    with open(st, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        f.truncate(8 + len(header) + BIG)
        f.seek(8 + len(header) + BIG)
        f.write(SMALL.tobytes())
    return {"hurray": hry, "safetensors": st}


def _run(benchmark, role, fn):
    benchmark.group = "load-one-32B-of-1GiB"
    benchmark.extra_info.update(role=role)
    out = benchmark.pedantic(fn, rounds=200, warmup_rounds=5)
    assert np.array_equal(np.asarray(out), SMALL)


def test_hurray_load_one_copy(benchmark, files):
    _run(benchmark, "subject", lambda: hurray.load(files["hurray"], "small")["small"])


def test_hurray_load_one_mmap(benchmark, files):
    _run(benchmark, "subject", lambda: hurray.load(files["hurray"], "small", mmap=True)["small"])


def test_safetensors_get_tensor(benchmark, files):
    try:
        from safetensors import safe_open
    except ImportError:
        pytest.skip("safetensors is not installed: its anchor is skipped (ci/requirements-dev.txt)")

    def get():
        with safe_open(str(files["safetensors"]), framework="numpy") as f:
            return f.get_tensor("small")

    _run(benchmark, "anchor", get)
