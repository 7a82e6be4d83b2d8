"""Memory follows the input: metadata-heavy inputs built here, read back in a fresh
subprocess that measures its peak resident memory (VmHWM) before and after reading and keeps
everything it read alive. Each asserts

    peak - baseline <= 8 x input size + 1 MiB

under default limits. The subprocess loads the input bytes (or leaves the file to the reader)
before taking its baseline, so only the reading is measured; building the input happens in
this process, whose freed memory the subprocess cannot reuse.

What keeps the ratios down: libhurray's compact descriptor record (a small header and one
storage block), one allocation per item node, a Descriptor object that borrows its record from
the item tree it came from, and a Composite read from a stream or a file that makes its member
objects from the C tree only when `members` is first asked for."""
import subprocess
import sys

import hurray
from memprobe import (BUDGET_SLACK, MEMBERS, PROBE_HEADER, check_growth, group_of_tiny,
                      linux_only, tiny)

pytestmark = linux_only

PROBE = PROBE_HEADER + r"""
case, path = sys.argv[1], sys.argv[2]
size = os.path.getsize(path)
data = None
if case in ("decode", "stream", "stream-items", "annotated-kept", "annotated-streamed",
            "load-bytes"):
    with open(path, "rb") as f:
        data = f.read()
members = None
if case == "composite":
    t = hurray.zeros((0,), dtype=hurray.uint8)
    members = [t] * int(sys.argv[3])
base = hwm()
if case == "decode":
    step = int(sys.argv[3])
    view = memoryview(data)
    keep = [hurray.Descriptor.decode(view[i:i + step]) for i in range(0, len(data), step)]
    assert len(keep) == len(data) // step
elif case == "stream":
    keep = list(hurray.StreamReader(data))
    assert len(keep) == 1 and keep[0].member_count == int(sys.argv[3])
elif case == "stream-items":
    keep = list(hurray.StreamReader(data))
    assert len(keep) == int(sys.argv[3])
elif case == "annotated-kept":
    keep = list(hurray.StreamReader(data).items())
    assert len(keep) == int(sys.argv[3]) and len(keep[-1].metadata) == int(sys.argv[4])
elif case == "annotated-streamed":
    n = 0
    for item in hurray.StreamReader(data).items():
        n += len(item.metadata) == int(sys.argv[4]) and item.name is not None
    assert n == int(sys.argv[3])
elif case == "load":
    keep = hurray.load(path)
    assert len(keep) == int(sys.argv[3])
elif case == "load-mmap":
    keep = hurray.load(path, mmap=True)
    assert len(keep) == int(sys.argv[3])
elif case == "load-bytes":
    keep = hurray.load_bytes(data)
    assert len(keep) == int(sys.argv[3])
elif case == "composite":
    keep = hurray.Composite("group", shape=[0], dtype=hurray.uint8, members=members)
    assert keep.member_count == len(members)
print(size, hwm() - base)
"""


def measure(case, path, *args):
    out = subprocess.run(
        [sys.executable, "-c", PROBE, case, str(path), *map(str, args)],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    ).stdout.split()
    return int(out[0]), int(out[1])


def check(case, path, *args, input_size=None):
    size, growth = measure(case, path, *args)
    check_growth(case, size if input_size is None else input_size, growth)


def test_memory_descriptor_decode_follows_input(tmp_path):
    """65,536 Descriptor.decode results kept: one object and one storage block each."""
    encoded = tiny().descriptor.encode()
    path = tmp_path / "descriptors.bin"
    path.write_bytes(encoded * MEMBERS)
    check("decode", path, len(encoded))


def test_HR_STREAM_8_reader_memory_follows_input(tmp_path):
    """A 65,536-member group composite stream of minimal members, read whole by
    StreamReader: the composite holds its C tree; member objects are made on demand."""
    writer = hurray.StreamWriter()
    writer.write(group_of_tiny(MEMBERS))
    path = tmp_path / "composite.hrsf"
    path.write_bytes(writer.getvalue())
    check("stream", path, MEMBERS)


ANNOTATED_ITEMS = 4000
ANNOTATION_ENTRIES = 60


def annotated_stream(tmp_path):
    """4,000 items, each a name and a 60-entry metadata map (int64 values; ~1.4 KiB of
    annotation frame) before the smallest tensor: ~6.2 MB, nearly all annotation."""
    writer = hurray.StreamWriter()
    t = tiny()
    for i in range(ANNOTATED_ITEMS):
        md = {f"k{j:02d}": i * ANNOTATION_ENTRIES + j for j in range(ANNOTATION_ENTRIES)}
        writer.write(t, name=f"item{i}", metadata=md)
    path = tmp_path / "annotated.hrsf"
    path.write_bytes(writer.getvalue())
    return path


def test_HR_STREAM_17_annotated_stream_memory_follows_input(tmp_path):
    """Every item of an annotation-heavy stream kept, as StreamItem(name, value, metadata):
    each map becomes a dict of 60 entries (measured ~4x the input)."""
    check("annotated-kept", annotated_stream(tmp_path), ANNOTATED_ITEMS, ANNOTATION_ENTRIES)


def test_HR_STREAM_18_annotated_stream_read_streaming(tmp_path):
    """The same stream read item by item, nothing kept: the reader holds one annotation at
    a time (the yielded item's, until the next read), so memory does not follow the stream's
    length (measured ~0x)."""
    path = annotated_stream(tmp_path)
    size, growth = measure("annotated-streamed", path, ANNOTATED_ITEMS, ANNOTATION_ENTRIES)
    print(f"annotated-streamed: input {size} bytes, peak growth {growth} bytes "
          f"({growth / size:.2f}x)")
    assert growth <= BUDGET_SLACK + size // 8, (size, growth)


def _descriptor(dtype, layout, shape, params):
    """descriptor.md § Layout of the bytes: header, fixed fields, shape, no buffers, the
    layout block; no sections."""
    import struct
    block = struct.pack("<II", len(params), 0) + params + b"\0" * (-len(params) % 8)
    body = struct.pack("<BBBBBBBBQ", dtype, 0x01, 0x01, layout, len(shape), 0, 0, 0, 0)
    body += b"".join(struct.pack("<Q", e) for e in shape) + block
    return b"HRYD" + struct.pack("<BBHII", 1, 0, 0, 32 + len(body) - 16, 0) + body


def test_HR_STREAM_8_smallest_members_memory_follows_input(tmp_path):
    """The smallest members there are (an unknown layout, rank 0, no buffers: a 40-byte
    descriptor and an 8-byte frame header each): a 3.0 MiB stream of one 65,536-member group,
    hand-packed (stream.md § Frame), read by StreamReader."""
    import struct
    head = _descriptor(0x03, 0x30, [0], struct.pack("<BBHI", 0x03, 0x00, 0, MEMBERS))
    member = _descriptor(0x03, 0x40, [], b"")
    assert len(member) == 40
    data = b"HRSF\x02\0\0\0" + head + (b"HRSF\x01\0\0\0" + member) * MEMBERS
    path = tmp_path / "smallest.hrsf"
    path.write_bytes(data)
    check("stream", path, MEMBERS)


# ---- top-level objects of the smallest kinds, every one kept (8 x the input + 1 MiB each) ----

SMALLEST_ITEMS = 1 << 18


def test_HR_STREAM_8_top_level_tensors_memory_follows_input(tmp_path):
    """StreamReader over 65,536 plain uint8[1] tensors, each its own 80-byte frame (stream.md
    § Frame: 8 header bytes, a 64-byte descriptor, the byte padded to 8), all kept: a Tensor
    each over its item node (measured 7.55x; 8.55x when the descriptor record held its
    optional sections by value)."""
    writer = hurray.StreamWriter()
    t = hurray.zeros((1,), dtype=hurray.uint8)
    for _ in range(MEMBERS):
        writer.write(t)
    path = tmp_path / "tensors.hrsf"
    path.write_bytes(writer.getvalue())
    assert path.stat().st_size == 80 * MEMBERS
    check("stream-items", path, MEMBERS)


def test_HR_STREAM_8_smallest_top_level_items_memory_follows_input(tmp_path):
    """StreamReader over 2^18 of the smallest items there are (48 bytes each: a frame header
    and the 40-byte descriptor of an unknown layout, rank 0, no buffers), all kept: a tensor
    without buffers takes its record out of the item tree, which is freed (measured 7.2x;
    12.9x when each held its tree, an owner object and its Descriptor)."""
    member = _descriptor(0x03, 0x40, [], b"")
    assert len(member) == 40
    path = tmp_path / "smallest-items.hrsf"
    path.write_bytes((b"HRSF\x01\0\0\0" + member) * SMALLEST_ITEMS)
    check("stream-items", path, SMALLEST_ITEMS)


def test_HR_FILE_13_smallest_top_level_tensors_load_memory_follows_input(tmp_path):
    """A file of 2^18 of the smallest tensors (the 40-byte descriptor of an unknown layout,
    rank 0, no buffers) named t00000, t00001, ...: 56 bytes an index entry, 14.7 MB. load
    (copy and mmap) and load_bytes keep a dict of them: a name, a dict slot, a Tensor and its
    record each (~382 bytes), while the open file's index (~104 bytes an entry) is freed
    before the tensors are made. Its large blocks come from the system and go back to it
    (libhurray's system allocator, alloc.h); from the heap they stayed resident below the
    records and made load 8.26x (13.1x when each entry held an item tree)."""
    member = _descriptor(0x03, 0x40, [], b"")
    items = list(hurray.StreamReader((b"HRSF\x01\0\0\0" + member) * SMALLEST_ITEMS))
    path = tmp_path / "smallest.hry"
    hurray.save(path, {f"t{i:05d}": t for i, t in enumerate(items)})
    del items
    for case in ("load", "load-mmap", "load-bytes"):
        check(case, path, SMALLEST_ITEMS)


def test_HR_DESC_5_smallest_descriptors_decode_memory_follows_input(tmp_path):
    """65,536 Descriptor.decode results of the smallest descriptor (40 bytes) kept: one
    object each with its record embedded, a 200-byte header and no storage block (measured
    7.2x; 9.2x with the 280-byte record)."""
    member = _descriptor(0x03, 0x40, [], b"")
    path = tmp_path / "smallest.bin"
    path.write_bytes(member * MEMBERS)
    check("decode", path, len(member))


def test_memory_taken_records_values_and_lifetimes(tmp_path):
    """A tensor without buffers read at the top level takes its record out of its item tree
    (freed at once): from a stream, load (copy, mmap), load_bytes and open(), the same
    values, descriptor and encoding as the descriptor decoded on its own (and equal to it); one
    Descriptor object, made on first use, outliving the tensor; the tensor itself collected
    when dropped, and written back byte for byte. load takes such entries' records without
    building their trees: mixed with other entries, file order and values are kept."""
    import gc
    import weakref
    member = member_bytes = _descriptor(0x03, 0x40, [], b"")
    frames = (b"HRSF\x01\0\0\0" + member) * 3
    want = hurray.Descriptor.decode(member)
    items = list(hurray.StreamReader(frames))
    path = tmp_path / "taken.hry"
    hurray.save(path, {"a": items[0], "b": items[1]})
    read = list(items)
    read += list(hurray.load(path).values()) + list(hurray.load(path, mmap=True).values())
    read += list(hurray.load_bytes(path.read_bytes()).values())
    with hurray.open(path) as f:
        read.append(f.get_tensor("a"))
    assert len(read) == 10
    writer = hurray.StreamWriter()
    for t in items:
        writer.write(t)
    assert writer.getvalue() == frames
    descriptors = []
    for t in read:
        assert t.shape == () and t.dtype == hurray.uint8 and t.device == want.device
        assert t.layout == want.layout and t.quantization is None
        d = t.descriptor
        assert d is t.descriptor and d == want and d.encode() == member
        descriptors.append(d)
    # mixed with entries that have buffers and a composite, in file order; a member by name
    group = hurray.Composite("group", shape=[0], dtype=hurray.uint8, members=[items[0]] * 2)
    ones = hurray.ones((3,), dtype=hurray.uint8)
    hurray.save(path, {"x": items[0], "y": ones, "g": group, "z": items[1]})
    for mixed in (hurray.load(path), hurray.load(path, mmap=True),
                  hurray.load_bytes(path.read_bytes())):
        assert list(mixed) == ["x", "y", "g", "z"]
        assert bytes(mixed["y"].buffer(0)) == b"\x01\x01\x01"
        assert mixed["g"].member_count == 2 and mixed["g"].members[1].descriptor == want
        assert mixed["x"].descriptor == want and mixed["z"].descriptor == want
    (by_name,) = hurray.load(path, "g.1").values()
    assert by_name.descriptor == want and by_name.descriptor.encode() == member_bytes
    alive = weakref.ref(read[0])
    del items, t, d, group, mixed, by_name
    read.clear()
    gc.collect()
    assert alive() is None
    assert all(d == want and d.encode() == member for d in descriptors)


def test_memory_load_composite_follows_input(tmp_path):
    """hurray.load of a file holding one 65,536-member composite (every member an index
    entry of its own)."""
    path = tmp_path / "composite.hurray"
    hurray.save(path, {"c": group_of_tiny(MEMBERS)})
    check("load", path, 1)


def test_memory_load_many_tensors_follows_input(tmp_path):
    """hurray.load of a file of 2^18 top-level empty tensors (uint8 shape (0,), the smallest:
    88 bytes of file each), each a Tensor in the returned dict over its own item node. load
    releases the open file before the entries become objects, and a Tensor makes its
    Descriptor only when asked (bench/README.md, Memory)."""
    path = tmp_path / "many.hurray"
    hurray.save(path, {f"t{i:07x}": tiny() for i in range(1 << 18)})
    check("load", path, 1 << 18)


def test_memory_composite_construction_follows_input(tmp_path):
    """Composite(...) over 65,536 existing member tensors: what the construction adds (the
    members tuple, the roles, the C tree it validates and drops), against the composite's
    encoded size."""
    writer = hurray.StreamWriter()
    writer.write(group_of_tiny(MEMBERS))
    path = tmp_path / "unused.bin"
    path.write_bytes(b"")
    check("composite", path, MEMBERS, input_size=len(writer.getvalue()))


def test_memory_lazy_members_equality_and_repr(tmp_path):
    """A composite read back makes its members from the C tree: the same values, equality
    and repr as the composite written, before and after `members` is first asked for."""
    a = tiny()
    c = hurray.Composite("group", shape=[0], dtype=hurray.uint8,
                         members=[a, hurray.zeros((2,), dtype=hurray.uint8)] * 20)
    writer = hurray.StreamWriter()
    writer.write(c)
    (back,) = list(hurray.StreamReader(writer.getvalue()))
    assert back.member_count == 40
    assert back == c and c == back  # compared member by member, none kept
    assert repr(back) == repr(c)
    first = back.members
    assert first is back.members  # made once, then kept
    assert [m.shape for m in first] == [m.shape for m in c.members]
    assert first[0].descriptor is first[0].descriptor  # one record, one object
    assert first[0].descriptor == a.descriptor
    assert back == c
