"""Python I/O habits of save / load: FileError subclasses by errno, save_bytes / load_bytes,
load(bytes) pointing at load_bytes, the target's mode and symbolic links, Ctrl-C during a save,
leftover temporary files of killed saves, progress= and durable= (REQ_FILE_OS_ERRORS,
REQ_FILE_BYTES, REQ_SAVE_MODE_LINK, REQ_SAVE_INTERRUPT, REQ_SAVE_STALE_TEMP, REQ_SAVE_PROGRESS,
REQ_SAVE_DURABLE)."""
import builtins
import os
import signal
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hurray


def test_REQ_FILE_OS_ERRORS_missing_file_is_both(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        hurray.load(tmp_path / "nope.hr")
    assert isinstance(e.value, hurray.FileError)
    assert isinstance(e.value, builtins.FileNotFoundError)
    assert type(e.value) is hurray.FileNotFoundError
    assert e.value.errno == 2 and e.value.filename == str(tmp_path / "nope.hr")
    with pytest.raises(hurray.FileError):
        hurray.load_kv(tmp_path / "nope.hr")


def test_REQ_FILE_OS_ERRORS_directory_permission_not_a_directory(tmp_path):
    with pytest.raises(IsADirectoryError) as e:
        hurray.load(tmp_path)
    assert isinstance(e.value, hurray.FileError)
    f = tmp_path / "f"
    f.write_bytes(b"x")
    with pytest.raises(NotADirectoryError) as e:
        hurray.load(f / "x.hr")
    assert isinstance(e.value, hurray.FileError)
    with pytest.raises(NotADirectoryError):
        hurray.save(f / "x.hr", {"a": np.zeros(1)})
    if os.geteuid() != 0:  # root reads anything
        locked = tmp_path / "locked.hr"
        hurray.save(locked, {"a": np.zeros(1)})
        locked.chmod(0)
        with pytest.raises(PermissionError) as e:
            hurray.load(locked)
        assert isinstance(e.value, hurray.FileError)
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        with pytest.raises(PermissionError):
            hurray.save(ro / "x.hr", {"a": np.zeros(1)})


def test_REQ_FILE_OS_ERRORS_corrupt_file_is_plain_file_error(tmp_path):
    p = tmp_path / "bad.hr"
    p.write_bytes(b"NOTHRRY!" + bytes(100))
    with pytest.raises(hurray.FileError) as e:
        hurray.load(p)
    assert type(e.value) is hurray.FileError
    assert not hurray.FileNotFoundError.__name__ in hurray.__all__


def test_REQ_FILE_BYTES_roundtrip_in_memory():
    a = np.arange(10, dtype=np.int32)
    data = hurray.save_bytes({"a": a}, {"who": "me"})
    assert isinstance(data, bytes) and data[:8] == b"HRRYFILE"
    for buf in (data, bytearray(data), memoryview(data)):
        got = hurray.load_bytes(buf)
        np.testing.assert_array_equal(np.asarray(got["a"]), a)
    assert list(hurray.load_bytes(data, "a")) == ["a"]
    with pytest.raises(KeyError):
        hurray.load_bytes(data, "b")
    with pytest.raises(hurray.FileError):
        hurray.load_bytes(data[:-64])
    with pytest.raises(TypeError, match="hurray.load"):
        hurray.load_bytes("some/path.hr")


def test_REQ_FILE_BYTES_load_of_contents_points_at_load_bytes():
    data = hurray.save_bytes({"a": np.zeros(2)})
    with pytest.raises(TypeError, match=r"load_bytes"):
        hurray.load(data)
    with pytest.raises(TypeError, match=r"load_bytes"):
        hurray.load(bytearray(data))
    with pytest.raises(TypeError, match=r"load_bytes"):
        hurray.load(memoryview(data))


def test_REQ_SAVE_MODE_LINK_keeps_mode_and_writes_through_link(tmp_path):
    target = tmp_path / "real.hr"
    hurray.save(target, {"a": np.zeros(1)})
    target.chmod(0o600)
    link = tmp_path / "link.hr"
    link.symlink_to(target)
    hurray.save(link, {"a": np.ones(3)})
    assert link.is_symlink()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    np.testing.assert_array_equal(np.asarray(hurray.load(target)["a"]), np.ones(3))
    assert sorted(os.listdir(tmp_path)) == ["link.hr", "real.hr"]


def _temps(d):
    return [n for n in os.listdir(d) if ".hurray-tmp-" in n]


def test_REQ_SAVE_PROGRESS_callable_sees_every_byte(tmp_path):
    p = tmp_path / "p.hr"
    calls = []
    a = np.ones(40 << 20, dtype=np.uint8)  # 40 MiB: three chunks
    hurray.save(p, {"a": a}, progress=lambda done, total: calls.append((done, total)))
    total = os.path.getsize(p)
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) >= 4
    with pytest.raises(TypeError, match="progress"):
        hurray.save(p, {"a": a}, progress=3)


def test_REQ_SAVE_PROGRESS_true_draws_a_bar_on_stderr(tmp_path):
    code = textwrap.dedent(f"""
        import sys, numpy as np, hurray
        sys.modules['tqdm'] = None  # as if tqdm were not installed
        hurray.save({str(tmp_path / 'b.hr')!r}, {{'a': np.ones(20 << 20, dtype=np.uint8)}},
                    progress=True)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "save" in r.stderr and "#" * 30 in r.stderr and "MiB" in r.stderr


def test_REQ_SAVE_INTERRUPT_exception_from_progress_keeps_old_file(tmp_path):
    p = tmp_path / "keep.hr"
    hurray.save(p, {"old": np.zeros(3)})
    before = p.read_bytes()

    def stop(done, total):
        if done > 0:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        hurray.save(p, {"a": np.ones(40 << 20, dtype=np.uint8)}, progress=stop)
    assert p.read_bytes() == before
    assert _temps(tmp_path) == []


def test_REQ_SAVE_INTERRUPT_ctrl_c_aborts_between_chunks(tmp_path):
    # SIGINT arrives while the write runs without the GIL: the next chunk boundary runs the
    # handler (KeyboardInterrupt); the old file stays, the temporary file is removed.
    p = tmp_path / "c.hr"
    code = textwrap.dedent(f"""
        import os, signal, numpy as np, hurray
        signal.signal(signal.SIGINT, signal.default_int_handler)  # even if inherited ignored
        p = {str(p)!r}
        hurray.save(p, {{'old': np.zeros(3)}})
        seen = []
        def progress(done, total):
            seen.append(done)
            if len(seen) == 2:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C during the write
        try:
            hurray.save(p, {{'a': np.ones(64 << 20, dtype=np.uint8)}}, progress=progress)
        except KeyboardInterrupt:
            print('interrupted after', len(seen), 'of 5 calls')
        else:
            print('not interrupted')
        print(sorted(hurray.load(p)))
        print([n for n in os.listdir(os.path.dirname(p)) if '.hurray-tmp-' in n])
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "interrupted after 2 of 5 calls"
    assert lines[1] == "['old']"
    assert lines[2] == "[]"


def test_REQ_SAVE_STALE_TEMP_killed_save_is_cleaned_by_next_save(tmp_path):
    p = tmp_path / "s.hr"
    code = textwrap.dedent(f"""
        import os, signal, numpy as np, hurray
        def progress(done, total):
            if done > 0:
                os.kill(os.getpid(), signal.SIGKILL)  # killed mid-save
        hurray.save({str(p)!r}, {{'a': np.ones(40 << 20, dtype=np.uint8)}}, progress=progress)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert r.returncode == -signal.SIGKILL
    left = _temps(tmp_path)
    assert len(left) == 1 and left[0].startswith("s.hr.hurray-tmp-")
    assert os.path.getsize(tmp_path / left[0]) >= 16 << 20
    # another target's temporary file and a live process's are left alone
    other = tmp_path / left[0].replace("s.hr.", "t.hr.")
    other.write_bytes(b"x")
    live = tmp_path / ("s.hr.hurray-tmp-" + left[0].split("-")[2] + f"-{os.getppid()}-1")
    live.write_bytes(b"x")
    hurray.save(p, {"b": np.zeros(2)})
    assert sorted(_temps(tmp_path)) == sorted([other.name, live.name])
    assert sorted(hurray.load(p)) == ["b"]


# ---- durable=False: no flush before the rename (file-container.md HR-FILE-18) --------------

FSYNC_COUNTER = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
static long calls;
long fsync_calls(void) { return calls; }
int fsync(int fd) {
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    calls++;
    return real(fd);
}
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD: Linux")
def test_REQ_SAVE_DURABLE_flush_only_when_durable_HR_FILE_18(tmp_path):
    # the fsync calls the child makes, counted by a preloaded fsync in front of the C
    # library's (the real one still runs): save flushes by default, durable=False never does,
    # hurray.numpy / hurray.torch pass the keyword through
    src, lib = tmp_path / "count.c", tmp_path / "libcount.so"
    src.write_text(FSYNC_COUNTER)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", str(src), "-o", str(lib), "-ldl"],
                   check=True)
    code = textwrap.dedent(f"""
        import ctypes, json, numpy as np, torch, hurray, hurray.numpy, hurray.torch
        count = ctypes.CDLL({str(lib)!r}).fsync_calls
        p, a = {str(tmp_path / "d.hr")!r}, np.ones(1000, np.float32)
        def n(fn):
            before = count(); fn(); return count() - before
        print(json.dumps([
            n(lambda: hurray.save(p, {{"a": a}})),
            n(lambda: hurray.save(p, {{"a": a}}, durable=True)),
            n(lambda: hurray.save(p, {{"a": a}}, durable=None)),
            n(lambda: hurray.save(p, {{"a": a}}, durable=False)),
            n(lambda: hurray.numpy.save_file({{"a": a}}, p, durable=False)),
            n(lambda: hurray.numpy.save_file({{"a": a}}, p)),
            n(lambda: hurray.torch.save_file({{"t": torch.ones(3)}}, p, durable=False)),
            n(lambda: hurray.torch.save_model(torch.nn.Linear(2, 2), p, durable=False)),
            n(lambda: hurray.torch.save_model(torch.nn.Linear(2, 2), p)),
        ]))
    """)
    env = dict(os.environ, LD_PRELOAD=str(lib))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    got = [int(x) for x in r.stdout.strip().splitlines()[-1].strip("[]").split(",")]
    # None is the default (flushed), not a false value
    assert got[0] >= 1 and got[1] >= 1 and got[2] >= 1 and got[5] >= 1 and got[8] >= 1, got
    assert got[3] == got[4] == got[6] == got[7] == 0, got


def test_REQ_SAVE_DURABLE_same_file_same_replace_HR_FILE_18(tmp_path):
    p = tmp_path / "s.hr"
    tensors = {"a": np.arange(12, dtype=np.float32).reshape(3, 4), "b": np.zeros(3, np.int8)}
    hurray.save(p, {"old": np.zeros(2)})
    os.chmod(p, 0o640)
    m = hurray.load(p, mmap=True)["old"]
    hurray.save(p, tensors, {"k": 1}, durable=False)
    # the canonical bytes, written beside and renamed over: mode kept, old mapping intact
    assert p.read_bytes() == hurray.save_bytes(tensors, {"k": 1})
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert np.array_equal(np.asarray(m), np.zeros(2)) and _temps(tmp_path) == []

    class Bad:
        def __bool__(self):
            raise ValueError("no truth here")

    before = p.read_bytes()
    with pytest.raises(ValueError, match="no truth here"):
        hurray.save(p, {"x": np.ones(3)}, durable=Bad())
    assert p.read_bytes() == before and _temps(tmp_path) == []
    # a cancelled durable=False save leaves the target as it was
    with pytest.raises(RuntimeError, match="stop"):
        hurray.save(p, {"a": np.ones(40 << 20, np.uint8)}, durable=False,
                    progress=lambda d, t: (_ for _ in ()).throw(RuntimeError("stop")))
    assert p.read_bytes() == before and _temps(tmp_path) == []
