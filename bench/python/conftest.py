"""Ratio lines for the Python benchmarks: each case of a group against that group's anchors.

Every benchmark names its role in extra_info: "subject" (the hurray path) or "anchor" (the
NumPy path it is compared with, measured in the same run). After pytest-benchmark's own table,
one line per (subject, anchor) pair gives min and mean ratios: subject / anchor, so 3.0 means
the hurray path takes three times as long.

Benchmarks marked `guard` form the short subset `make bench-compare` runs against the committed
baseline (bench/compare.py, bench/baselines/).

The stream benchmarks (test_bench_stream.py, test_bench_io.py's stream-<set>) share their pipe
helpers through two fixtures here: `stream_roundtrip` (the subject: a StreamWriter thread into
a pipe, StreamReader over the other end) and `raw_pipe_roundtrip` (the anchor: the same bytes
with os.write / os.readv into a preallocated buffer), both over the same 1 MiB pipe.
"""
import fcntl
import os
import threading

import pytest

F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # Linux; elsewhere the pipe keeps its size
PIECE = 1 << 20


def _pipe():
    r, w = os.pipe()
    try:  # the same 1 MiB pipe for subject and anchor
        fcntl.fcntl(w, F_SETPIPE_SZ, PIECE)
    except OSError:
        pass
    return r, w


def raw_replace(blob, tmp, path, sync):
    """The save benchmarks' floor: a function writing `blob` to `tmp` in one os.write (then
    os.fsync when `sync`) and renaming it to `path`, what a durable or plain save must at least
    do (test_bench_save.py, bench/io_rounds.py). `path` may be a callable giving each call's
    target (io_rounds.py save-new: a new path every call)."""

    def run():
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, blob)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, path() if callable(path) else path)

    return run


def run_stream_roundtrip(tensors):
    """Writes `tensors` (one item each) with hurray.StreamWriter from a thread into a pipe and
    returns every item hurray.StreamReader yields from the other end."""
    import hurray

    r, w = _pipe()

    def produce():
        with hurray.StreamWriter(w) as sw:
            for t in tensors:
                sw.write(t)
        os.close(w)

    th = threading.Thread(target=produce)
    th.start()
    with hurray.StreamReader(r) as reader:
        items = list(reader)
    th.join()
    os.close(r)
    return items


def run_raw_pipe_roundtrip(data, out):
    """The same bytes through the same kind of pipe: os.write in 1 MiB pieces from a thread,
    os.readv into `out` (preallocated). Returns the bytes read."""
    r, w = _pipe()
    view = memoryview(data)

    def produce():
        n = 0
        while n < len(view):
            n += os.write(w, view[n:n + PIECE])
        os.close(w)

    th = threading.Thread(target=produce)
    th.start()
    got, mv = 0, memoryview(out)
    while got < len(mv):
        k = os.readv(r, [mv[got:got + PIECE]])
        if k == 0:
            break
        got += k
    th.join()
    os.close(r)
    return got


@pytest.fixture(scope="session")
def stream_roundtrip():
    return run_stream_roundtrip


@pytest.fixture(scope="session")
def raw_pipe_roundtrip():
    return run_raw_pipe_roundtrip


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "guard: in the short subset make bench-compare checks against bench/baselines/")


def pytest_terminal_summary(terminalreporter, config):
    session = getattr(config, "_benchmarksession", None)
    benches = [b for b in getattr(session, "benchmarks", []) if b]
    if not benches:
        return
    groups = {}
    for b in benches:
        groups.setdefault(b.group, []).append(b)
    tr = terminalreporter
    tr.section("hurray vs anchors (ratio = hurray / anchor; min, mean)")
    for group in sorted(groups, key=str):
        subjects = [b for b in groups[group] if b.extra_info.get("role") == "subject"]
        anchors = [b for b in groups[group] if b.extra_info.get("role") == "anchor"]
        for s in subjects:
            for a in anchors:
                low, mean = s.stats.min / a.stats.min, s.stats.mean / a.stats.mean
                tr.write_line(
                    f"{group}: {s.name} / {a.name}: min {low:6.2f}x  mean {mean:6.2f}x"
                    f"   ({s.stats.min * 1e9:,.0f} ns vs {a.stats.min * 1e9:,.0f} ns min)"
                )
    # Benchmarks that move data (extra_info throughput=True, nbytes): GiB/s at the min time.
    moving = [b for b in benches if b.extra_info.get("throughput") and b.extra_info.get("nbytes")]
    if moving:
        tr.section("throughput (GiB/s = nbytes / min time)")
        for b in sorted(moving, key=lambda b: (str(b.group), b.extra_info.get("role") != "subject")):
            gibs = b.extra_info["nbytes"] / b.stats.min / (1 << 30)
            tr.write_line(f"{b.group}: {b.name}: {gibs:8.2f} GiB/s"
                          f"   ({b.extra_info['role']}, {b.stats.min * 1e3:,.3f} ms min)")
