"""Assembles HRRYFILE containers by the spec's arithmetic alone (file-container.md § Header,
§ Placement, § Index, § Buffer placement), for tests and benchmarks that need files the
writer would take too long or too much memory to make: gigabyte tensors (written sparse: a
buffer given as None is a hole of zeros, so a 2 GiB file costs nothing on disk) and files
whose index lies.

Descriptors come from the library (Tensor.descriptor.encode()); `uint8_descriptor(n)` patches
the shape and buffer size of a small uint8 vector's descriptor (descriptor.md § Fixed header:
rank at byte 20, the shape at 32, the buffer table after it) and checks the result decodes.
"""
import os
import struct

import hurray

HEADER = 64
PAGE = 4096


def _up(v, a):
    return (v + a - 1) // a * a


def uint8_descriptor(n):
    """The descriptor of a uint8 row-major vector of n elements (one n-byte buffer)."""
    import numpy as np

    d = bytearray(hurray.from_numpy(np.zeros(64, np.uint8)).descriptor.encode())
    assert d[20] == 1 and d[21] == 1  # rank 1, one buffer
    struct.pack_into("<Q", d, 32, n)  # shape[0]
    struct.pack_into("<Q", d, 40, n)  # buffers[0].size
    hurray.Descriptor.decode(bytes(d), max_buffer_bytes=max(n, 1))  # still valid
    return bytes(d)


def buffer_table(desc):
    """[(size, alignment)] of an encoded descriptor."""
    rank, count = desc[20], desc[21]
    out = []
    for b in range(count):
        at = 32 + 8 * rank + 16 * b
        out.append((struct.unpack_from("<Q", desc, at)[0], 1 << desc[at + 8]))
    return out


def layout(entries):
    """entries: [(name, kind, desc)] -> (index bytes without offsets patched, offsets per
    entry, data_length). kind 1 tensor, 2 composite head."""
    pos = 0
    offsets = []
    for name, kind, desc in entries:
        offs = []
        for size, align in buffer_table(desc):
            o = _up(pos, max(64, align))
            offs.append(o)
            pos = o + size
        offsets.append(offs)
    return offsets, _up(pos, 64)


def build(path, entries, data=None, kv=b"", index_entry_count=None, offset_patch=None):
    """Writes the file. entries: [(name, kind, desc)]; data: {(entry, buffer): bytes} (every
    other buffer is zeros, left as a hole); kv: an encoded KV section (b"": none).
    index_entry_count overrides the count written; offset_patch {(entry, buffer): value}
    writes a lying buffer offset. Returns (size, offsets, data_offset)."""
    data = data or {}
    offset_patch = offset_patch or {}
    offsets, data_length = layout(entries)
    index = bytearray(struct.pack("<Q", len(entries) if index_entry_count is None
                                  else index_entry_count))
    for i, (name, kind, desc) in enumerate(entries):
        raw = name.encode()
        index += struct.pack("<IB3x", len(raw), kind) + raw + bytes(-len(raw) % 8) + desc
        for b, o in enumerate(offsets[i]):
            index += struct.pack("<Q", offset_patch.get((i, b), o))
    kv_offset = HEADER + len(index) if kv else 0
    meta_end = HEADER + len(index) + len(kv)
    data_offset = _up(meta_end, PAGE)
    header = b"HRRYFILE" + struct.pack("<HHI6Q", 1, 0, 0, HEADER, len(index), kv_offset,
                                       len(kv), data_offset, data_length)
    size = data_offset + data_length
    with open(path, "wb") as f:
        f.write(header + bytes(index) + kv)
        f.truncate(size)  # the data region: a hole unless written below
        for (i, b), value in data.items():
            f.seek(data_offset + offsets[i][b])
            f.write(value)
    assert os.path.getsize(path) == size
    return size, offsets, data_offset


def build_huge_index(path, index_length):
    """A file whose index claims index_length bytes (all zero: entry_count 0, then bytes
    left over, LENGTH) and whose data region is empty: all but the header is a hole."""
    data_offset = _up(HEADER + index_length, PAGE)
    header = b"HRRYFILE" + struct.pack("<HHI6Q", 1, 0, 0, HEADER, index_length, 0, 0,
                                       data_offset, 0)
    with open(path, "wb") as f:
        f.write(header)
        f.truncate(data_offset)
    return data_offset
