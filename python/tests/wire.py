"""Hand-packed descriptor bytes for the unit tests, written from docs/spec/ with
struct alone (descriptor.md § Layout of the bytes, sections.md, quantization.md).

It is deliberately tiny and independent of hurray: the tests decode what it packs
and compare. The golden corpus (vectors/) is exercised by test_conformance.py."""
import struct

DYNAMIC = 0xFFFF_FFFF_FFFF_FFFF


def _pad8(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 8)


def section(type_: int, payload: bytes, flags: int = 0) -> bytes:
    return struct.pack("<BBHI", type_, flags, 0, len(payload)) + _pad8(payload)


def per_tensor(scale: float, zero_point: int = 0) -> bytes:
    return struct.pack("<B7xdq", 0x01, scale, zero_point)


def per_channel(axis, scale_idx, zp_idx=0xFF, scale_dtype=0x0C, zp_dtype=0x00) -> bytes:
    return struct.pack("<BBBBBB10x", 0x02, axis, scale_idx, zp_idx, scale_dtype, zp_dtype)


def statistics(min_=None, max_=None, nan_count=None) -> bytes:
    flags = (1 if min_ is not None else 0) | (2 if nan_count is not None else 0)
    return struct.pack(
        "<B7xddQ",
        flags,
        0.0 if min_ is None else min_,
        0.0 if max_ is None else max_,
        0 if nan_count is None else nan_count,
    )


def shard(index, count, global_shape, global_offset) -> bytes:
    n = len(global_shape)
    return struct.pack(f"<II{n}Q{n}Q", index, count, *global_shape, *global_offset)


def descriptor(
    *,
    dtype=0x0C,
    device=0x01,
    memory_class=0x01,
    layout=0x01,
    shape=(),
    buffers=(),
    byte_offset=0,
    params=b"",
    sections=(),
    version=(1, 0),
) -> bytes:
    """buffers: (size, alignment_log2, sync_mode) triples; sections: encoded
    sections (use section()), already in ascending type order."""
    fixed = struct.pack(
        "<BBBBBBBxQ",
        dtype,
        device,
        memory_class,
        layout,
        len(shape),
        len(buffers),
        len(sections),
        byte_offset,
    )
    body = fixed
    body += b"".join(struct.pack("<Q", DYNAMIC if e is None else e) for e in shape)
    body += b"".join(struct.pack("<QBB6x", size, a, s) for (size, a, s) in buffers)
    body += struct.pack("<II", len(params), 0) + _pad8(params)
    body += b"".join(sections)
    total = 16 + len(body)
    header = b"HRYD" + bytes(version) + b"\0\0" + struct.pack("<I", total) + b"\0" * 4
    return header + body


def float32_matrix(rows=2, cols=3, align_log2=6) -> bytes:
    """A valid row-major float32 rows x cols descriptor with one buffer."""
    return descriptor(shape=(rows, cols), buffers=[(4 * rows * cols, align_log2, 1)])
