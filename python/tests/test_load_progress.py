"""hurray.load(progress=...): the bytes of a load reported between reads, a bar on stderr,
and Ctrl-C (or an exception from progress) stopping a long copy-mode load with nothing kept
(docs/requirements/python-binding.md § Files: REQ_LOAD_PROGRESS, REQ_LOAD_INTERRUPT;
file-container.md HR-FILE-17)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hurray

CHUNK = 16 << 20  # HURRAY_FILE_PROGRESS_CHUNK


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("load") / "big.hr"
    a = np.arange(40 << 20, dtype=np.uint8)  # 40 MiB: three reads
    hurray.save(p, {"a": a, "b": np.arange(5.0), "c": np.ones((3, 4), dtype=np.float32)})
    return p, a


def test_REQ_LOAD_PROGRESS_callable_sees_every_byte_of_a_copy_load(big_file):
    p, a = big_file
    calls = []
    got = hurray.load(p, progress=lambda done, total: calls.append((done, total)))
    total = a.nbytes + 5 * 8 + 12 * 4  # the entries' bytes (no gaps inside these items)
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    assert all(t == total for _, t in calls)
    dones = [d for d, _ in calls]
    assert dones == sorted(dones)
    assert max(b - a_ for a_, b in zip(dones, dones[1:])) <= CHUNK
    assert len(calls) >= 4  # the start and three reads of "a" at least
    np.testing.assert_array_equal(np.asarray(got["a"]), a)
    np.testing.assert_array_equal(np.asarray(got["b"]), np.arange(5.0))


def test_REQ_LOAD_PROGRESS_names_count_only_their_bytes_and_mmap_reports_once(big_file):
    p, _ = big_file
    calls = []
    got = hurray.load(p, "b", "c", progress=lambda d, t: calls.append((d, t)))
    assert sorted(got) == ["b", "c"]
    assert calls[0] == (0, 5 * 8 + 12 * 4) and calls[-1] == (88, 88)
    calls.clear()
    got = hurray.load(p, mmap=True, progress=lambda d, t: calls.append((d, t)))
    total = (40 << 20) + 88
    assert calls == [(total, total)]
    assert sorted(got) == ["a", "b", "c"]
    with pytest.raises(TypeError, match="load: progress must be"):
        hurray.load(p, progress=3)
    assert hurray.load(p, "b", progress=False)["b"].shape == (5,)


def test_REQ_LOAD_PROGRESS_true_draws_a_bar_on_stderr(big_file):
    p, _ = big_file
    code = textwrap.dedent(f"""
        import sys, hurray
        sys.modules['tqdm'] = None  # as if tqdm were not installed
        hurray.load({str(p)!r}, progress=True)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "load" in r.stderr and "#" * 30 in r.stderr and "40.0/40.0 MiB" in r.stderr


def test_REQ_LOAD_INTERRUPT_exception_from_progress_stops_and_keeps_nothing(big_file):
    import tracemalloc

    p, _ = big_file
    seen = []

    def stop(done, total):
        seen.append(done)
        if done > 0:
            raise RuntimeError("stop here")

    hurray.load(p, "b")  # warm the module's one-time allocations
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with pytest.raises(RuntimeError, match="stop here"):
            hurray.load(p, progress=stop)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert seen == [0, CHUNK]  # stopped after the first read, none after
    assert after - before < (1 << 20)  # the 40 MiB block (and every item) released


def test_REQ_LOAD_INTERRUPT_ctrl_c_stops_a_long_copy_load(tmp_path):
    # SIGINT's handler (here raised by a timer 1 ms into the load, without progress=) runs at
    # the next read boundary while the read runs without the GIL: KeyboardInterrupt, the
    # load's memory released. Promptly: the process's peak RSS stays far below the 256 MiB
    # a load run to its end would have touched.
    p = tmp_path / "long.hr"
    hurray.save(p, {"a": np.ones(256 << 20, dtype=np.uint8)})
    code = textwrap.dedent(f"""
        import resource, signal, tracemalloc, hurray
        p = {str(p)!r}
        hurray.load(p, mmap=True)  # the module's one-time allocations
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        peak0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        signal.signal(signal.SIGALRM, signal.default_int_handler)  # as Ctrl-C does
        signal.setitimer(signal.ITIMER_REAL, 0.001)
        try:
            hurray.load(p)
        except KeyboardInterrupt:
            print('interrupted')
        else:
            print('not interrupted')
        print(tracemalloc.get_traced_memory()[0] - before < (1 << 20))
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak0) // 1024)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == ["interrupted", "True"]
    assert int(lines[2]) < 128, f"peak RSS grew {lines[2]} MiB: the load ran on"
