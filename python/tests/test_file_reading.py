"""How hurray.load / hurray.load_kv read a file (file-container.md § Reading, HR-FILE-8 … 13)
and how hurray.save writes one (HR-FILE-7): index first, only the requested byte ranges,
copy-on-write mappings, special files refused without blocking, files that shrink while they
are read, bounded memory, few system calls, atomic replacement.

Memory is measured as peak RSS in a child process (resource.getrusage), system calls as the
kernel's per-process counters (/proc/self/io: syscr, syscw); no test asserts a duration. Large
files are made sparse with filebuild (a hole of zeros costs no disk).
"""
import errno
import json
import os
import socket
import stat
import struct
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import filebuild
import hurray
from hurray import FileError, Tensor

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1 << 20
linux_proc = pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs /proc (Linux)")


def child(code, timeout=300, **env):
    """Runs `code` in a fresh interpreter (python/tests on sys.path) and returns what it
    printed last, as JSON. A death by a signal fails the test with the signal's name."""
    prelude = textwrap.dedent("""
        import json, os, resource, sys, time
        sys.path.insert(0, %r)
        def status(key):
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        return int(line.split()[1]) * 1024
        def rss():
            return status("VmRSS")
        def peak():
            return status("VmHWM")
        def reset_peak():
            # the high-water mark restarts at the current RSS (Linux >= 4.0), so that what
            # the import or a warm-up call once used does not hide what is measured next
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            return rss()
        def io(key):
            with open("/proc/self/io") as f:
                return int(dict(l.split(": ") for l in f.read().splitlines())[key])
    """) % HERE
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **{k: str(v) for k, v in env.items()}})
    if proc.returncode < 0:
        pytest.fail(f"child killed by signal {-proc.returncode}: {proc.stderr[-2000:]}")
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


SMALL = np.arange(8, dtype=np.float32)  # the 32-byte tensor


def one_gib_file(path):
    """A 1 GiB uint8 tensor (a hole) followed by the 32-byte float32 tensor "small"."""
    entries = [("big", 1, filebuild.uint8_descriptor(1 << 30)),
               ("small", 1, hurray.from_numpy(SMALL).descriptor.encode())]
    size, _, _ = filebuild.build(path, entries, {(1, 0): SMALL.tobytes()})
    return size


# ---- index first: only what is returned is read (HR-FILE-9) -------------------------------------


@linux_proc
@pytest.mark.parametrize("mmap", [False, True], ids=["copy", "mmap"])
def test_REQ_FILE_INDEX_FIRST_one_tensor_of_a_1GiB_file_HR_FILE_9(tmp_path, mmap):
    path = tmp_path / "big.hry"
    assert one_gib_file(path) > 1 << 30
    got = child(f"""
        import gc, weakref
        import numpy as np
        import hurray
        path, mmap = {str(path)!r}, {mmap}
        hurray.load(path, "small", mmap=mmap)            # warm: code paths, allocator
        base, r0, reads = reset_peak(), io("rchar"), io("syscr")
        t0 = time.perf_counter()
        t = hurray.load(path, "small", mmap=mmap)["small"]
        ms = (time.perf_counter() - t0) * 1e3
        grew, read, calls = peak() - base, io("rchar") - r0, io("syscr") - reads
        maps = []
        with open("/proc/self/maps") as f:
            for line in f:
                if line.rstrip().endswith(path):
                    lo, hi = line.split()[0].split("-")
                    maps.append(int(hi, 16) - int(lo, 16))
        values = np.asarray(t).tolist()
        print(json.dumps(dict(grew=grew, read=read, calls=calls, maps=maps, ms=ms,
                              values=values)))
    """)
    assert got["values"] == SMALL.tolist()
    assert got["grew"] <= 2 * MiB, got             # peak RSS growth
    assert got["read"] <= 256 << 10, got           # bytes read: metadata and 32 bytes
    assert got["calls"] <= 8, got                  # open's reads and one data read
    if mmap:  # the mapping covers the tensor's page, not the file
        assert got["maps"] and sum(got["maps"]) <= 2 * 4096, got
    else:
        assert got["maps"] == []
    print(f"load one 32-byte tensor of a 1 GiB file ({'mmap' if mmap else 'copy'}): "
          f"{got['ms']:.3f} ms, +{got['grew'] / 1024:.0f} KiB peak RSS")


@linux_proc
def test_REQ_FILE_INDEX_FIRST_items_pin_only_their_own_bytes_HR_FILE_8(tmp_path):
    """Two 64 MiB tensors loaded together (copy mode): dropping one returns its memory while
    the other lives; each holds its own bytes, not the file's."""
    path = tmp_path / "two.hry"
    n = 64 * MiB
    filebuild.build(path, [("a", 1, filebuild.uint8_descriptor(n)),
                           ("b", 1, filebuild.uint8_descriptor(n))],
                    {(0, 0): b"\1" * 4096, (1, 0): b"\2" * 4096})
    got = child(f"""
        import gc, weakref
        import numpy as np
        import hurray
        d = hurray.load({str(path)!r})
        a, b = d.pop("a"), d.pop("b")
        ra = weakref.ref(a)
        with_both = rss()
        first = int(np.asarray(b)[0])
        del a
        gc.collect()
        print(json.dumps(dict(freed=with_both - rss(), a_gone=ra() is None, b0=first,
                              b_len=len(np.asarray(b)))))
    """)
    assert got["a_gone"] and got["b0"] == 2 and got["b_len"] == n
    assert got["freed"] >= n - 4 * MiB, got  # a's 64 MiB went back; b did not keep them


@linux_proc
@pytest.mark.parametrize("kind", ["bad-offset", "huge-index"])
def test_REQ_FILE_INDEX_FIRST_bad_index_of_a_2GiB_file_refused_small_HR_FILE_9(tmp_path, kind):
    path = tmp_path / "bad.hry"
    if kind == "bad-offset":  # a 2 GiB buffer whose offset lies (OFFSET at step 5)
        filebuild.build(path, [("big", 1, filebuild.uint8_descriptor(2 << 30))],
                        offset_patch={(0, 0): 64})
        code = "OFFSET"
    else:  # an index that claims 2 GiB (all zero: no entries, then bytes left: LENGTH)
        filebuild.build_huge_index(path, 2 << 30)
        code = "LENGTH"
    assert os.path.getsize(path) >= 2 << 30
    got = child(f"""
        import hurray
        out = {{}}
        for mmap in (False, True):
            base = reset_peak()
            try:
                hurray.load({str(path)!r}, mmap=mmap)
                out[str(mmap)] = "loaded"
            except hurray.FileError as e:
                out[str(mmap)] = e.code
            out["grew"] = max(out.get("grew", 0), peak() - base)
        print(json.dumps(out))
    """)
    assert got["False"] == got["True"] == code, got
    assert got["grew"] <= 2 * MiB, got


def test_REQ_FILE_INDEX_FIRST_load_kv_reads_no_index_HR_FILE_9(tmp_path):
    """load_kv reads the header and the KV section: a file whose index is corrupt still has
    a readable KV section (load refuses it)."""
    path = tmp_path / "kv.hry"
    hurray.save(path, {"t": Tensor(SMALL.tobytes(), hurray.float32, (8,))}, kv={"k": 7})
    data = bytearray(path.read_bytes())
    data[64] = 9  # entry_count 9: the index cannot hold it
    path.write_bytes(bytes(data))
    assert hurray.load_kv(path) == {"k": 7}
    with pytest.raises(FileError) as info:
        hurray.load(path)
    assert info.value.code == "LENGTH" and info.value.field == "index.entry_count"


@linux_proc
def test_REQ_FILE_INDEX_FIRST_load_kv_reads_header_and_kv_only_HR_FILE_9(tmp_path):
    small = tmp_path / "kv.hry"
    hurray.save(small, {}, kv={"model": "x", "layers": 32})
    head = small.read_bytes()
    kv_offset, kv_length = struct.unpack_from("<QQ", head, 32)
    kv = head[kv_offset:kv_offset + kv_length]
    path = tmp_path / "big.hry"
    filebuild.build(path, [("big", 1, filebuild.uint8_descriptor(1 << 30))], kv=kv)
    got = child(f"""
        import hurray
        hurray.load_kv({str(path)!r})
        r0, c0 = io("rchar"), io("syscr")
        kv = hurray.load_kv({str(path)!r})
        print(json.dumps(dict(kv=kv, read=io("rchar") - r0, calls=io("syscr") - c0)))
    """)
    assert got["kv"] == {"layers": 32, "model": "x"}
    assert got["read"] <= 128 << 10 and got["calls"] <= 6, got


@linux_proc
def test_REQ_FILE_INDEX_FIRST_mmap_open_touches_no_data_page_HR_FILE_9(tmp_path):
    """Gap bytes are checked by positioned reads, not through the mapping: loading mapped
    tensors whose buffers leave gaps adds no file pages to the process (RssFile)."""
    path = tmp_path / "gaps.hry"
    n = (64 << 20) - 1  # every buffer leaves a one-byte gap
    entries = [(f"t{i}", 1, filebuild.uint8_descriptor(n)) for i in range(4)]
    filebuild.build(path, entries, {(i, 0): b"\1" * 4096 for i in range(4)})
    got = child(f"""
        import hurray
        hurray.load({str(path)!r}, "t0", mmap=True)
        before = status("RssFile")
        d = hurray.load({str(path)!r}, mmap=True)
        print(json.dumps(dict(grew=status("RssFile") - before, n=len(d))))
    """)
    assert got["n"] == 4 and got["grew"] <= MiB, got


# ---- copy-on-write mappings (HR-FILE-11) -----------------------------------------------------------


def saved_floats(tmp_path, n=1024):
    path = tmp_path / "cow.hry"
    a = np.arange(n, dtype=np.float32)
    hurray.save(path, {"a": hurray.from_numpy(a), "b": hurray.from_numpy(a * 2)})
    return path, a, path.read_bytes()


def test_REQ_FILE_COW_numpy_writes_never_reach_the_file_HR_FILE_11(tmp_path):
    path, a, before = saved_floats(tmp_path)
    t = hurray.load(path, mmap=True)["a"]
    v = np.asarray(t)
    v[...] = -1.0  # a write through the mapping: the process's copy of the page
    assert (np.asarray(t) == -1.0).all()
    assert path.read_bytes() == before
    assert np.array_equal(np.asarray(hurray.load(path, mmap=True)["a"]), a)
    assert np.array_equal(np.asarray(hurray.load(path)["a"]), a)


def test_REQ_FILE_COW_torch_writes_never_reach_the_file_HR_FILE_11(tmp_path):
    torch = pytest.importorskip("torch")
    path, a, before = saved_floats(tmp_path)
    loaded = hurray.load(path, mmap=True)
    x = loaded["a"].to_torch()
    x.add_(1)
    assert torch.equal(x, torch.from_numpy(a) + 1)
    y = torch.from_dlpack(loaded["b"])  # a DLPack consumer writing
    y.mul_(3)
    assert np.array_equal(np.asarray(loaded["b"]), a * 6)
    z = np.from_dlpack(hurray.load(path, mmap=True)["a"])
    if z.flags.writeable:
        z[:] = 5
    assert path.read_bytes() == before
    assert np.array_equal(np.asarray(hurray.load(path, mmap=True)["a"]), a)


def test_REQ_FILE_COW_torch_write_in_a_fresh_process_HR_FILE_11(tmp_path):
    pytest.importorskip("torch")
    path, a, before = saved_floats(tmp_path)
    got = child(f"""
        import numpy as np, torch, hurray
        d = hurray.load({str(path)!r}, mmap=True)
        d["a"].to_torch().add_(1)
        torch.from_dlpack(d["b"]).zero_()
        np.asarray(hurray.load({str(path)!r}, mmap=True)["a"])[:] = 7
        print(json.dumps(dict(a0=float(np.asarray(d["a"])[0]), b0=float(np.asarray(d["b"])[1]))))
    """)
    assert got == {"a0": 1.0, "b0": 0.0}
    assert path.read_bytes() == before


# ---- special files (HR-FILE-10) and OSError fields -----------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_REQ_FILE_SPECIAL_FILES_refused_without_blocking_HR_FILE_10(tmp_path):
    fifo = tmp_path / "pipe.hry"
    os.mkfifo(fifo)
    sock_path = tmp_path / "s.hry"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        # a FIFO with no writer: opening it must neither block nor read
        got = child(f"""
            import hurray
            out = []
            for p in ({str(fifo)!r}, {str(sock_path)!r}, {str(tmp_path)!r}, "/dev/null"):
                for call in (lambda: hurray.load(p), lambda: hurray.load(p, mmap=True),
                             lambda: hurray.load_kv(p)):
                    try:
                        call()
                        out.append(None)
                    except hurray.FileError as e:
                        out.append([str(e), e.errno, e.filename, e.code])
            print(json.dumps(out))
        """, timeout=60)
    finally:
        sock.close()
    kinds = ["FIFO", "socket", "directory", "character device"]
    paths = [str(fifo), str(sock_path), str(tmp_path), "/dev/null"]
    for k, (kind, p) in enumerate(zip(kinds, paths)):
        for msg, num, filename, code in got[3 * k: 3 * k + 3]:
            assert kind in msg and p in msg and code == "IO"
            # the system's number: a socket cannot be opened at all (ENXIO)
            assert num == {"directory": errno.EISDIR, "socket": errno.ENXIO}.get(kind,
                                                                               errno.EINVAL)
            assert filename == p


def test_REQ_FILE_ERRORS_oserror_fields(tmp_path):
    missing = tmp_path / "missing.hry"
    with pytest.raises(FileError) as info:
        hurray.load(missing)
    e = info.value
    assert e.errno == errno.ENOENT and e.filename == str(missing)
    assert "No such file" in e.strerror and str(missing) in e.strerror
    assert isinstance(e, OSError) and e.code == "IO"
    with pytest.raises(OSError) as info:  # catchable as the built-in it is
        hurray.load_kv(os.fsencode(missing))
    assert info.value.errno == errno.ENOENT
    t = Tensor(SMALL.tobytes(), hurray.float32, (8,))
    with pytest.raises(FileError) as info:
        hurray.save(tmp_path / "no" / "x.hry", {"t": t})
    assert info.value.errno == errno.ENOENT


# ---- files that shrink (HR-FILE-12) ----------------------------------------------------------------


def test_REQ_FILE_TRUNCATED_header_promises_more_than_the_file_HR_FILE_12(tmp_path):
    """A file cut inside a buffer's range (the index still whole and valid): TRUNCATED, in
    both modes and for load_kv, never a signal."""
    path = tmp_path / "cut.hry"
    size = one_gib_file(path)
    os.truncate(path, size - (1 << 29))
    for mode in (False, True):
        with pytest.raises(FileError) as info:
            hurray.load(path, "small", mmap=mode)
        assert info.value.code == "TRUNCATED"
    with pytest.raises(FileError) as info:
        hurray.load_kv(path)
    assert info.value.code == "TRUNCATED"


@linux_proc
def test_REQ_FILE_TRUNCATED_while_being_read_never_a_signal_HR_FILE_12(tmp_path):
    """Another thread truncates and restores the file while loads (copy, mmap) and load_kv
    read it: each call either succeeds or raises FileError; the process never takes SIGBUS.
    (Touching a mapped tensor after a truncation is the documented hazard and is not done
    here.)"""
    path = tmp_path / "race.hry"
    tensors = {f"t{i}": hurray.from_numpy(np.full(3000 + i, i, np.uint8)) for i in range(64)}
    hurray.save(path, tensors, kv={"k": "v"})
    whole = path.read_bytes()
    got = child(f"""
        import threading
        import hurray
        path, whole = {str(path)!r}, open({str(path)!r}, "rb").read()
        stop = threading.Event()
        def churn():
            n = 0
            while not stop.is_set():
                cut = (n * 7919) % len(whole)
                os.truncate(path, cut)
                with open(path, "r+b") as f:
                    f.seek(cut)
                    f.write(whole[cut:])
                n += 1
                # the file stays whole a moment before the next cut, so that some loads
                # overlap no cut at all (the "ok" outcomes) however the threads interleave
                stop.wait(0.0005)
        th = threading.Thread(target=churn)
        th.start()
        outcomes = {{}}
        try:
            for i in range(400):
                for call in (lambda: hurray.load(path), lambda: hurray.load(path, mmap=True),
                             lambda: hurray.load_kv(path)):
                    try:
                        call()
                        key = "ok"
                    except hurray.FileError as e:
                        key = e.code
                    outcomes[key] = outcomes.get(key, 0) + 1
        finally:
            stop.set()
            th.join()
        hurray.load(path); hurray.load(path, mmap=True); hurray.load_kv(path)  # whole again
        print(json.dumps(outcomes))
    """)
    assert got.get("ok", 0) > 0
    assert set(got) <= {"ok", "TRUNCATED", "LENGTH", "IO", "RESERVED_NONZERO", "OFFSET",
                        "BAD_MAGIC", "VERSION", "CONSTRAINT", "INVALID_TAG", "DUPLICATE"}, got


# ---- bounded memory (HR-FILE-13) ---------------------------------------------------------------------


def load_peak(path, mmap):
    return child(f"""
        import hurray
        hurray.load_kv({str(path)!r})  # warm the module
        base = reset_peak()
        d = hurray.load({str(path)!r}, mmap={mmap})
        print(json.dumps(dict(grew=peak() - base, n=len(d))))
    """)


def check_memory_bound(tmp_path, make, count):
    """Peak RSS of hurray.load over a baseline <= 8 x file size + 1 MiB (HR-FILE-13), in copy
    and mmap mode, for a metadata-heavy file of `count` entries made at test time."""
    path = tmp_path / "many.hry"
    make(path, count)
    size = os.path.getsize(path)
    for mmap in (False, True):
        got = load_peak(path, mmap)
        assert got["grew"] <= 8 * size + MiB, (mmap, count, size, got)


def make_top_level(path, n):
    t = hurray.from_numpy(np.arange(10, dtype=np.float32))  # 40 bytes, one descriptor
    hurray.save(path, {f"t{i:07d}": t for i in range(n)})


def make_top_level_empty(path, n):
    """The most metadata-heavy top-level entries: uint8 shape (0,), one empty buffer (88
    bytes of file each: an 8-byte name, the 64-byte descriptor, one offset)."""
    t = hurray.zeros((0,), dtype=hurray.uint8)
    hurray.save(path, {f"t{i:07x}": t for i in range(n)})


def make_composite(path, n):
    t = hurray.from_numpy(np.arange(10, dtype=np.float32))
    hurray.save(path, {"c": hurray.Composite("group", shape=(n,), dtype=hurray.float32,
                                             members=[t] * n)})


@linux_proc
def test_REQ_FILE_MEMORY_2e18_top_level_tensors_HR_FILE_13(tmp_path):
    check_memory_bound(tmp_path, make_top_level, 1 << 18)


@linux_proc
def test_REQ_FILE_MEMORY_2e18_top_level_empty_tensors_HR_FILE_13(tmp_path):
    """load keeps no more than 8x the file: the open file (index, entry records, names) is
    released before the entries become objects, and a loaded tensor's Descriptor object is
    made on first use."""
    check_memory_bound(tmp_path, make_top_level_empty, 1 << 18)


def test_REQ_FILE_MEMORY_loaded_descriptor_made_on_first_use_HR_FILE_13(tmp_path):
    """A loaded tensor's Descriptor is made when first asked for, then kept (the same object
    every time); it borrows the record of the tensor's item tree and keeps that tree alive on
    its own."""
    import gc
    import weakref
    path = tmp_path / "few.hry"
    saved = {"a": hurray.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3)),
             "e": hurray.zeros((0,), dtype=hurray.uint8)}
    hurray.save(path, saved)
    for mmap in (False, True):
        loaded = hurray.load(path, mmap=mmap)
        for name, t in loaded.items():
            d = t.descriptor
            assert d is t.descriptor
            # the same tensor, though not the same record: the file declares the alignment of
            # its own placement (file-container.md), the saved tensor the one of its address
            want = saved[name].descriptor
            assert (d.dtype, d.shape, d.layout, d.buffer_count, d.device) == \
                (want.dtype, want.shape, want.layout, want.buffer_count, want.device)
            assert t.buffer_handles == d.buffer_handles
            assert d.device is t.device
        t = loaded.pop("a")
        d, ref = t.descriptor, weakref.ref(t)
        encoded = d.encode()
        del t, loaded
        gc.collect()
        assert ref() is None
        # the record is still alive, and still the file's (its declared alignment is the
        # file's placement rule, not the saved array's address: compare with itself)
        assert d.shape == (2, 3) and d.encode() == encoded
        assert d == hurray.Descriptor.decode(encoded)


@linux_proc
def test_REQ_FILE_MEMORY_65536_member_composite_HR_FILE_13(tmp_path):
    check_memory_bound(tmp_path, make_composite, 1 << 16)


def test_REQ_FILE_LIMITS_max_file_tensors_before_any_entry_HR_FILE_13(tmp_path):
    path = tmp_path / "many.hry"
    make_top_level(path, 5000)
    with pytest.raises(FileError) as info:
        hurray.load(path, max_file_tensors=4999)
    assert info.value.code == "LIMIT" and info.value.field == "index.entry_count"
    assert len(hurray.load(path, max_file_tensors=5000)) == 5000
    assert hurray.load_kv(path, max_file_tensors=1) == {}  # the index is not read


# ---- writing (HR-FILE-7) --------------------------------------------------------------------------


@linux_proc
def test_REQ_FILE_SAVE_few_system_calls_HR_FILE_7(tmp_path):
    got = child(f"""
        import numpy as np, hurray
        ts = {{f"t{{i}}": hurray.from_numpy(np.full(17, i, np.float32)) for i in range(2000)}}
        hurray.save({str(tmp_path / "warm.hry")!r}, {{"t": ts["t0"]}})
        before = io("syscw")
        hurray.save({str(tmp_path / "many.hry")!r}, ts)
        print(json.dumps(io("syscw") - before))
    """)
    assert got <= 16, got  # vectored: a handful of writes for 2000 buffers and their padding
    back = hurray.load(tmp_path / "many.hry", "t1999")["t1999"]
    assert (np.asarray(back) == 1999).all()


def test_REQ_FILE_SAVE_keeps_mode_and_follows_symlinks_HR_FILE_7(tmp_path):
    t = Tensor(SMALL.tobytes(), hurray.float32, (8,))
    target = tmp_path / "model.hry"
    hurray.save(target, {"old": t})
    os.chmod(target, 0o640)
    hurray.save(target, {"new": t})
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert list(hurray.load(target)) == ["new"]
    link = tmp_path / "link.hry"
    os.symlink(target, link)
    hurray.save(link, {"through": t})
    assert os.path.islink(link) and os.readlink(link) == str(target)
    assert list(hurray.load(target)) == ["through"]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.hry", "model.hry"]
    # a mapping of the replaced file keeps its bytes (rename, not truncate)
    m = hurray.load(target, mmap=True)["through"]
    hurray.save(link, {"again": Tensor(b"\0" * 4, hurray.float32, (1,))})
    assert np.array_equal(np.asarray(m), SMALL)
