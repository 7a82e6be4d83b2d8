"""Memory follows the input, for the readers test_memory.py does not measure: StreamReader
over a descriptor (a pipe), load_bytes and load(mmap=True) of a file holding one 65,536-member
composite, and load_kv of the most metadata-heavy KV sections there are. Each input is built
here at test time and read in a fresh subprocess that keeps everything it read alive and
measures its peak resident memory (VmHWM) before and after reading:

    peak - baseline <= 8 x input size + 1 MiB

under default limits. The subprocess loads what it must before its baseline (the bytes given
to load_bytes; it warms each reader on a small input, so first-call costs are not counted);
a file or a pipe is read by the reader itself. Building the input happens in this process,
whose freed memory the subprocess cannot reuse."""
import struct
import subprocess
import sys
import threading

import pytest

import hurray
from memprobe import (MEMBERS, PROBE_HEADER, budget, check_growth, group_of_tiny, linux_only,
                      page_aligned_items, page_aligned_members, tiny)

pytestmark = linux_only

KV_ENTRIES = 65536  # the default max_kv_entries

PROBE = PROBE_HEADER + r"""
case, path, expect = sys.argv[1], sys.argv[2], int(sys.argv[3])
small = os.path.join(os.path.dirname(path), "small.hry")
hurray.save(small, {"t": hurray.zeros((0,), dtype=hurray.uint8)}, kv={"a": 1})
size = os.path.getsize(path) if case != "stream-fd" else int(sys.argv[4])
data = None
if case.startswith("load_bytes"):
    with open(path, "rb") as f:
        data = f.read()
    hurray.load_bytes(open(small, "rb").read())
elif case == "load_kv":
    hurray.load_kv(small)
elif case == "load_mmap":
    hurray.load(small, mmap=True)
elif case == "stream-fd":
    w = hurray.StreamWriter()
    w.write(hurray.zeros((0,), dtype=hurray.uint8))
    list(hurray.StreamReader(w.getvalue()))
base = hwm()
if case == "stream-fd":
    with hurray.StreamReader(0) as reader:
        keep = list(reader)
    assert len(keep) == 1 and keep[0].member_count == expect
elif case == "load_bytes":
    keep = hurray.load_bytes(data)
    assert len(keep) == 1 and keep["c"].member_count == expect
elif case == "load_bytes-entries":
    keep = hurray.load_bytes(data)
    assert len(keep) == expect
elif case == "load_mmap":
    keep = hurray.load(path, mmap=True)
    assert len(keep) == 1 and keep["c"].member_count == expect
elif case == "load_kv":
    keep = hurray.load_kv(path)
    assert len(keep) == expect
print(size, hwm() - base)
"""


def measure(case, path, expect, stdin_bytes=None):
    """Runs the probe; `stdin_bytes` are written into its stdin, a pipe, from a thread."""
    args = [sys.executable, "-c", PROBE, case, str(path), str(expect)]
    if stdin_bytes is None:
        out = subprocess.run(args, check=True, capture_output=True, text=True,
                             timeout=600).stdout
    else:
        proc = subprocess.Popen(args + [str(len(stdin_bytes))], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=False)

        def feed():
            view = memoryview(stdin_bytes)
            for i in range(0, len(view), 1 << 16):  # the pipe fills: the reader waits
                proc.stdin.write(view[i:i + (1 << 16)])
            proc.stdin.close()

        th = threading.Thread(target=feed)
        th.start()
        out = proc.stdout.read().decode()  # not communicate(): it would close stdin
        th.join()
        assert proc.wait(timeout=600) == 0
    size, growth = out.split()
    return int(size), int(growth)


def check(case, path, expect, stdin_bytes=None):
    size, growth = measure(case, path, expect, stdin_bytes)
    check_growth(case, size, growth)


# ---- StreamReader over a descriptor ---------------------------------------------------------


def _smallest_descriptor(dtype, layout, shape, params):
    """descriptor.md § Layout of the bytes: header, fixed fields, shape, no buffers, the
    layout block; no sections."""
    block = struct.pack("<II", len(params), 0) + params + b"\0" * (-len(params) % 8)
    body = struct.pack("<BBBBBBBBQ", dtype, 0x01, 0x01, layout, len(shape), 0, 0, 0, 0)
    body += b"".join(struct.pack("<Q", e) for e in shape) + block
    return b"HRYD" + struct.pack("<BBHII", 1, 0, 0, 32 + len(body) - 16, 0) + body


def stream_of_tiny():
    writer = hurray.StreamWriter()
    writer.write(group_of_tiny(MEMBERS))
    return writer.getvalue()


def stream_of_smallest():
    """One 65,536-member group of the smallest members there are (an unknown layout, rank 0,
    no buffers: a 40-byte descriptor and an 8-byte frame header each), hand-packed
    (stream.md § Frame): 3.0 MiB."""
    head = _smallest_descriptor(0x03, 0x30, [0], struct.pack("<BBHI", 0x03, 0x00, 0, MEMBERS))
    member = _smallest_descriptor(0x03, 0x40, [], b"")
    assert len(member) == 40
    return b"HRSF\x02\0\0\0" + head + (b"HRSF\x01\0\0\0" + member) * MEMBERS


@pytest.mark.parametrize("make", [stream_of_tiny, stream_of_smallest],
                         ids=["tiny-members", "smallest-members"])
def test_HR_STREAM_8_reader_over_a_pipe_memory_follows_input(tmp_path, make):
    """StreamReader(fd) over a pipe the test fills in 64 KiB writes (the reader waits for
    bytes, reads ahead in its own block and assembles frames from partial reads)."""
    data = make()
    check("stream-fd", tmp_path / "unused", MEMBERS, stdin_bytes=data)


# ---- load_bytes, load(mmap=True) ------------------------------------------------------------


@pytest.fixture(scope="module")
def composite_file(tmp_path_factory):
    """A file holding one 65,536-member composite of the smallest tensors (every member an
    index entry of its own): 5.8 MB."""
    path = tmp_path_factory.mktemp("composite") / "composite.hry"
    hurray.save(path, {"c": group_of_tiny(MEMBERS)})
    return path


def test_REQ_FILE_MEMORY_load_bytes_of_a_65536_member_composite_HR_FILE_13(composite_file):
    """load_bytes over the file's bytes (already in memory: the input is not counted twice)."""
    check("load_bytes", composite_file, MEMBERS)


def test_REQ_FILE_MEMORY_load_bytes_of_2e18_empty_tensors_HR_FILE_13(tmp_path):
    """load_bytes of 2^18 top-level empty tensors (88 bytes of file each): the image copy goes
    with the reader before the entries become objects (an item with no bytes holds nothing
    of it)."""
    path = tmp_path / "many.hry"
    hurray.save(path, {f"t{i:07x}": tiny() for i in range(1 << 18)})
    check("load_bytes-entries", path, 1 << 18)


def test_REQ_FILE_MEMORY_load_mmap_of_a_65536_member_composite_HR_FILE_13(composite_file):
    """load(path, mmap=True): the index read and validated, the members' bytes mapped."""
    check("load_mmap", composite_file, MEMBERS)


# ---- load_kv --------------------------------------------------------------------------------

# The smallest KV entries there are take 24 bytes (kv.md § Section layout: 8 header bytes, a
# key padded to 8, an 8-byte payload); the default max_kv_entries allows 65,536 of them, a
# 1.5 MiB section. What each becomes in Python differs by value type: a shared object (bool,
# a small int, "") or an object of its own (a large int, a float, an empty list).
KEYS = [f"k{i:07x}" for i in range(KV_ENTRIES)]  # 8 bytes: the longest key of 24 bytes
KV_VALUES = {
    "bool": lambda i: True,
    "int": lambda i: (1 << 40) + i,
    "float": lambda i: float(i) + 0.5,
    "empty-string": lambda i: "",
}


def kv_length(path):
    """The header's kv_length (file-container.md § Header, bytes 40-47)."""
    with open(path, "rb") as f:
        return struct.unpack_from("<Q", f.read(64), 40)[0]


@pytest.mark.parametrize("kind", sorted(KV_VALUES))
def test_REQ_FILE_MEMORY_load_kv_of_65536_smallest_entries_HR_FILE_13(tmp_path, kind):
    """load_kv of a file of no tensors whose KV section holds 65,536 entries of 24 bytes."""
    path = tmp_path / "kv.hry"
    hurray.save(path, {}, kv={k: KV_VALUES[kind](i) for i, k in enumerate(KEYS)})
    assert kv_length(path) == 8 + 24 * KV_ENTRIES
    check("load_kv", path, KV_ENTRIES)


def test_REQ_FILE_MEMORY_load_kv_of_65536_empty_lists_HR_FILE_13(tmp_path):
    """The most expensive smallest entry: an empty list, a new object for every entry."""
    path = tmp_path / "kv.hry"
    hurray.save(path, {}, kv={k: [] for k in KEYS})
    assert kv_length(path) == 8 + 24 * KV_ENTRIES
    check("load_kv", path, KV_ENTRIES)


def test_REQ_FILE_MEMORY_load_kv_of_a_list_of_2e20_empty_lists_HR_FILE_13(tmp_path):
    """A section the entry limit does not bound: one entry, a list of 2^20 empty lists (the
    smallest list element: 16 bytes), 16 MiB -- larger inputs hold the same ratio."""
    path = tmp_path / "kv.hry"
    hurray.save(path, {}, kv={"list": [[] for _ in range(1 << 20)]})
    check("load_kv", path, 1)


# ---- alignment slack (errors-and-limits.md HR-LIMIT-2) --------------------------------------

ALIGN_PROBE = r"""
import os, re, sys
import hurray

def hwm():
    with open("/proc/self/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)) * 1024

case, path = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "keep"  # keep, drop, or keep-unlimited
limits = {"max_alignment_slack": 2**64 - 1} if mode == "keep-unlimited" else {}
w = hurray.StreamWriter()
w.write(hurray.zeros((0,), dtype=hurray.uint8))
list(hurray.StreamReader(w.getvalue()))  # first-call costs before the baseline
size = os.path.getsize(path)
if case == "bytes":
    with open(path, "rb") as f:
        source = f.read()
else:  # a descriptor the reader reads (with its read-ahead block)
    source = os.open(path, os.O_RDONLY)
base = hwm()
keep, n = [], 0
try:
    with hurray.StreamReader(source, **limits) as reader:
        for item in reader:  # kept, or dropped as the next one is read
            n += 1
            if mode != "drop":
                keep.append(item)
    outcome, cls = "OK", "-"
except hurray.StreamError as e:
    outcome = e.code if "max_alignment_slack" in str(e) else "unnamed-" + e.code
    cls = type(e).__name__
print(size, hwm() - base, outcome, n, cls)
"""


def run_align_probe(path, case, mode="keep"):
    out = subprocess.run([sys.executable, "-c", ALIGN_PROBE, case, str(path), mode], check=True,
                         capture_output=True, text=True, timeout=600).stdout
    size, growth, outcome, n, cls = out.split()
    size, growth = int(size), int(growth)
    print(f"{case} ({mode}): input {size} bytes, peak growth {growth} bytes "
          f"({growth / size:.2f}x), budget {budget(size)}, {outcome} after {n} items")
    return size, growth, outcome, int(n), cls


@pytest.mark.parametrize("case", ["bytes", "fd"])
def test_REQ_STREAM_ALIGNMENT_SLACK_page_aligned_members_within_budget_HR_LIMIT_2(tmp_path, case):
    """StreamReader over bytes and over a descriptor refuses the stream (StreamError LIMIT naming
    max_alignment_slack) once the slack passes the bytes + 1 MiB, holding at most
    8 x the stream + 1 MiB until then."""
    path = tmp_path / "aligned.hrs"
    path.write_bytes(page_aligned_members(MEMBERS))
    size, growth, outcome, _, _ = run_align_probe(path, case)
    assert outcome == "LIMIT"
    assert growth <= budget(size), (case, size, growth, round(growth / size, 2))


ITEMS = 65536  # top-level items of the kept-items attack


@pytest.mark.parametrize("case", ["bytes", "fd"])
def test_REQ_STREAM_ALIGNMENT_SLACK_kept_page_aligned_items_within_budget_HR_LIMIT_2(tmp_path,
                                                                                    case):
    """65,536 top-level uint8[1] tensors whose buffers declare 4 KiB (5 MiB), every item kept:
    the reader's budget counts the items still alive, so StreamReader over bytes and over a
    descriptor raises the StreamError subclass the LIMIT code maps to (naming
    max_alignment_slack) at item 260, holding at most 8 x the stream + 1 MiB. With the limit
    off the same consumer holds a page an item, far past the budget: the test can fail."""
    path = tmp_path / "items.hrs"
    path.write_bytes(page_aligned_items(ITEMS))
    size, growth, outcome, n, cls = run_align_probe(path, case)
    assert outcome == "LIMIT" and n == 260  # 261 x 4032 > 261 + 2^20
    assert cls == hurray._hurray._error_class("LIMIT", "stream").__name__
    assert growth <= budget(size), (case, size, growth, round(growth / size, 2))
    if case == "bytes":
        size, growth, outcome, n, _ = run_align_probe(path, case, "keep-unlimited")
        assert outcome == "OK" and n == ITEMS
        assert growth > budget(size)


@pytest.mark.parametrize("case", ["bytes", "fd"])
def test_REQ_STREAM_ALIGNMENT_SLACK_dropped_items_read_whole_HR_LIMIT_2(tmp_path, case):
    """The same stream read by a consumer that drops each item (its Tensor collected as the
    next arrives): each hands its slack back to the reader's budget, so the whole stream reads
    under the default limit, within the budget."""
    path = tmp_path / "items.hrs"
    path.write_bytes(page_aligned_items(ITEMS))
    size, growth, outcome, n, _ = run_align_probe(path, case, "drop")
    assert outcome == "OK" and n == ITEMS
    assert growth <= budget(size), (case, size, growth, round(growth / size, 2))
