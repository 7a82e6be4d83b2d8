"""The generator's own encoder of Hurray 1.0 descriptors and quantization payloads.

Two levels:
  * `Desc` — a descriptor as a producer means it (element type, shape, layout parameters,
    buffers, sections). `to_raw(desc)` lays it out in canonical form (descriptor.md § Encoding).
  * a *raw* record — a dict of every wire field, including reserved bytes, lengths and counts
    that are normally derived. Mutators (mutators.py) edit a raw record to break exactly one
    rule, then `serialize(raw)` writes the bytes with `struct`, little-endian throughout
    (conventions.md § Byte order and integers).
"""
import copy
import math
import struct

from tables import (COMPOSITE, CSF, BLOCK_PAGED, COO, CSC, CSR, DYNAMIC, MAGIC, SECT_QUANT,
                    SECT_ROLE, SECT_SHARD, SECT_STATS, SECTIONS, STRIDED, TILED, U64_MAX,
                    layout_kind, pad8)


# ---------------------------------------------------------------- float bit patterns ---
def f64bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f32bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits_f64(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def bits_f32(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


F64_NAN = 0x7FF8000000000000
F64_NEG_ZERO = 0x8000000000000000
F64_INF = 0x7FF0000000000000
F64_NEG_INF = 0xFFF0000000000000
F32_NAN = 0x7FC00000
F32_INF = 0x7F800000
F32_NEG_ZERO = 0x80000000


# ---------------------------------------------------------------- model ---
class Buf:
    """One buffer-table entry (buffer-protocol.md § Buffer table entry)."""

    def __init__(self, size, align=6, sync=0x01):
        self.size = size
        self.align = align  # alignment_log2
        self.sync = sync

    def __repr__(self):
        return f"Buf({self.size}, {self.align}, {self.sync})"


class Desc:
    """A descriptor. shape entries are ints or None (dynamic). params depend on the layout:
    named layouts take a dict of their fields; private layouts
    {"extension_layout_id": u32, "extension_data": bytes}; reserved (unknown) layouts
    {"params": bytes}. Floats in sections are carried as bit patterns."""

    def __init__(self, dtype, shape, layout=0x01, params=None, buffers=None, byte_offset=0,
                 device=0x01, memclass=0x01, version=(1, 0), quant=None, stats=None,
                 shard=None, role=None, unknown=None):
        self.dtype = dtype
        self.shape = list(shape)
        self.layout = layout
        self.params = params if params is not None else {}
        self.buffers = buffers  # None: builders fill in the required sizes
        self.byte_offset = byte_offset
        self.device = device
        self.memclass = memclass
        self.version = version
        self.quant = quant
        self.stats = stats
        self.shard = shard
        self.role = role
        self.unknown = list(unknown or [])  # [(type, flags, data)]

    @property
    def rank(self):
        return len(self.shape)

    def copy(self, **kw):
        d = copy.deepcopy(self)
        for k, v in kw.items():
            setattr(d, k, v)
        return d


# ---------------------------------------------------------------- payload encoders ---
def u8(v):
    return struct.pack("<B", v)


def u16(v):
    return struct.pack("<H", v)


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v)


def i64(v):
    return struct.pack("<q", v)


def shape_word(e):
    return DYNAMIC if e is None else e


def encode_layout_params(layout, rank, p):
    """Layout parameter bytes, without the block padding (memory-layout.md)."""
    kind = layout_kind(layout)
    if kind == "private":
        return u32(p["extension_layout_id"]) + u32(p.get("reserved", 0)) + p["extension_data"]
    if kind == "reserved":
        return p["params"]
    if layout == STRIDED:
        return b"".join(i64(s) for s in p["strides"])
    if layout == TILED:
        return (b"".join(u64(t) for t in p["tile_shape"])
                + b"".join(i64(s) for s in p["outer_strides"])
                + b"".join(i64(s) for s in p["inner_strides"]))
    if layout in (COO, CSR, CSC):
        return u64(p["nnz"])
    if layout == CSF:
        body = u64(p["nnz"]) + b"".join(u64(c) for c in p["fiber_counts"])
        mo = bytes(p["mode_order"])
        return body + mo
    if layout == BLOCK_PAGED:
        return u64(p["page_size"]) + u64(p["num_pages"]) + u64(p["num_seqs"]) + u64(p["num_blocks"])
    if layout == COMPOSITE:
        return u8(p["rule"]) + u8(p["combine"]) + u16(0) + u32(p["member_count"])
    return b""  # row_major, col_major, morton, hilbert


def encode_quant(q):
    """A quantization payload (quantization.md); also the standalone encoding."""
    s = q["scheme"]
    if s == 0x01:
        return u8(1) + bytes(7) + u64(q["scale"]) + i64(q["zero_point"])
    if s in (0x02, 0x03):
        head = (u8(s) + u8(q["axis"]) + u8(q["scale_idx"]) + u8(q["zp_idx"])
                + u8(q["scale_dtype"]) + u8(q["zp_dtype"]))
        if s == 0x02:
            return head + bytes(10)
        return head + bytes(2) + u32(q["block_size"]) + bytes(4) + bytes(8)
    if s == 0x04:
        return (u8(4) + u8(q["flags"]) + u8(q["absmax_idx"]) + u8(q["nested_idx"])
                + u8(q["qmap_idx"]) + bytes(3) + u32(q["block_size"])
                + u32(q["nested_block_size"]) + u32(q["nested_offset"]) + bytes(4))
    if s == 0x05:
        return u8(5) + u8(q["axis"]) + u8(q["scale_idx"]) + bytes(1) + u32(q["block_size"]) + bytes(8)
    if s == 0x06:
        return (u8(6) + u8(q["axis"]) + u8(q["scale_idx"]) + bytes(1) + u32(q["block_size"])
                + u32(q["tensor_scale"]) + bytes(4))
    raise ValueError(s)


def encode_stats(st):
    """sections.md § Statistics."""
    return (u8(st["flags"]) + bytes(7) + u64(st.get("min", 0)) + u64(st.get("max", 0))
            + u64(st.get("nan_count", 0)))


def encode_shard(sh):
    """sections.md § Shard."""
    return (u32(sh["index"]) + u32(sh["count"]) + b"".join(u64(g) for g in sh["global_shape"])
            + b"".join(u64(o) for o in sh["global_offset"]))


def encode_role(r):
    return u8(r) + bytes(7)


# ---------------------------------------------------------------- raw record ---
def raw_section(stype, payload, flags=None):
    if flags is None:
        flags = SECTIONS[stype][1] if stype in SECTIONS else 0
    return {"type": stype, "flags": flags, "res": bytes(2), "length": None,
            "payload": payload, "pad": None}


def buffer_entry(b):
    return {"size": b.size, "align": b.align, "sync": b.sync, "res": bytes(6)}


def to_raw(d):
    """Canonical layout of a Desc as an editable raw record."""
    sections = []
    if d.quant is not None:
        sections.append(raw_section(SECT_QUANT, encode_quant(d.quant)))
    if d.stats is not None:
        sections.append(raw_section(SECT_STATS, encode_stats(d.stats)))
    if d.shard is not None:
        sections.append(raw_section(SECT_SHARD, encode_shard(d.shard)))
    if d.role is not None:
        sections.append(raw_section(SECT_ROLE, encode_role(d.role)))
    for (t, f, data) in d.unknown:
        sections.append(raw_section(t, data, f))
    sections.sort(key=lambda s: s["type"])
    return {
        "magic": MAGIC, "vmaj": d.version[0], "vmin": d.version[1], "res6": bytes(2),
        "elen": None, "res12": bytes(4),
        "dtype": d.dtype, "device": d.device, "memclass": d.memclass, "layout": d.layout,
        "rank": None, "buffer_count": None, "section_count": None, "res23": 0,
        "byte_offset": d.byte_offset,
        "shape": [shape_word(e) for e in d.shape],
        "buffers": [buffer_entry(b) for b in (d.buffers or [])],
        "param_length": None, "lres": bytes(4),
        "params": encode_layout_params(d.layout, d.rank, d.params), "ppad": None,
        "sections": sections,
        "trailing": b"",
        "truncate": None,  # cut the serialized bytes to this many
    }


def serialize(r):
    out = bytearray()
    out += r["magic"] + u8(r["vmaj"]) + u8(r["vmin"]) + r["res6"]
    out += u32(0) + r["res12"]  # encoded_len patched below
    rank = len(r["shape"]) if r["rank"] is None else r["rank"]
    bc = len(r["buffers"]) if r["buffer_count"] is None else r["buffer_count"]
    sc = len(r["sections"]) if r["section_count"] is None else r["section_count"]
    out += bytes([r["dtype"], r["device"], r["memclass"], r["layout"], rank, bc, sc, r["res23"]])
    out += u64(r["byte_offset"])
    for w in r["shape"]:
        out += u64(w)
    for b in r["buffers"]:
        out += u64(b["size"]) + u8(b["align"]) + u8(b["sync"]) + b["res"]
    params = r["params"]
    plen = len(params) if r["param_length"] is None else r["param_length"]
    out += u32(plen) + r["lres"] + params
    out += bytes(pad8(len(params)) - len(params)) if r["ppad"] is None else r["ppad"]
    for s in r["sections"]:
        ln = len(s["payload"]) if s["length"] is None else s["length"]
        out += u8(s["type"]) + u8(s["flags"]) + s["res"] + u32(ln) + s["payload"]
        out += bytes(pad8(len(s["payload"])) - len(s["payload"])) if s["pad"] is None else s["pad"]
    elen = len(out) if r["elen"] is None else r["elen"]
    out[8:12] = u32(elen)
    out += r["trailing"]
    if r["truncate"] is not None:
        out = out[: r["truncate"]]
    return bytes(out)


def encode(d):
    return serialize(to_raw(d))


# ---------------------------------------------------------------- misc helpers ---
def ceil_div(a, b):
    return -(-a // b)


def prod(xs):
    return math.prod(xs)


def checked(v):
    """Raise OverflowError when a size computation leaves u64 (HR-PACK-3)."""
    if v < 0 or v > U64_MAX:
        raise OverflowError(v)
    return v
