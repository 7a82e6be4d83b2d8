"""A second, deliberately plain decoder + validator of Hurray 1.0, written from docs/spec/.

The generator runs every vector through it: a valid vector must decode to OK and to the same
`decoded` map the builders recorded; an invalid one must stop with exactly the status the
manifest names. It follows descriptor.md § Decoding order step by step and then the three
validation tiers of buffer-protocol.md in the order of their table (3, 1, 2). It is a
self-check of the corpus, not a product: no speed, no API.
"""
import hashlib
import math
import struct

from tables import (BLOCK_PAGED, COL_MAJOR, COMBINES, COMPOSITE, CSC, CSF, COO,
                    CSR, DENSE_LAYOUTS, DEVICES, DT, DTYPES, DYNAMIC, HILBERT, I64_MAX, INT_RANGE,
                    MAGIC, MAX_ALIGNMENT_LOG2, MEMORY_CLASSES, MORTON, MX_DTYPES, ROLES, ROW_MAJOR,
                    RULES, SCALE_DTYPES, SCHEMES, SECT_QUANT, SECT_ROLE, SECT_SHARD, SECT_STATS,
                    SECTIONS, STRIDED, SYNC_MODES, TILED, U64_MAX, ZP_DTYPES, affine_dtype_ok,
                    byte_addressable, device_name, dtype_bits, dtype_kind, dtype_name,
                    effective_limits, is_integer, is_invalid_tag, layout_buffer_count,
                    layout_kind, layout_name, layout_param_length, memclass_name, pad8,
                    pair_valid, simple_kind)

ABSENT = 0xFF


class Fail(Exception):
    def __init__(self, status, where):
        super().__init__(f"{status}: {where}")
        self.status = status
        self.where = where


def fail(status, where):
    raise Fail(status, where)


def _u(b, off, n):
    return int.from_bytes(b[off:off + n], "little")


def _i64(b, off):
    return struct.unpack_from("<q", b, off)[0]


def _f64(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _ck(v, where):
    """Checked u64 arithmetic result."""
    if v < 0 or v > U64_MAX:
        fail("OVERFLOW", where)
    return v


def _cki(v, where):
    """Checked i64 arithmetic result."""
    if v < -(1 << 63) or v > I64_MAX:
        fail("OVERFLOW", where)
    return v


def bs(dtype, count, where):
    """buffer_size_bytes (HR-PACK-3); None for an extension type."""
    bits = dtype_bits(dtype)
    if bits is None:
        return None
    nb = _ck(count * bits, where)
    return nb // 8 + (1 if nb % 8 else 0)


def _pow2(v):
    return v >= 1 and v & (v - 1) == 0


class Reader:
    def __init__(self, data, end):
        self.d = data
        self.end = end
        self.pos = 0

    def take(self, n, where):
        if self.pos + n > self.end:
            fail("LENGTH", f"{where}: read crosses encoded_len")
        b = self.d[self.pos:self.pos + n]
        self.pos += n
        return b


def _tag(b, kind, where):
    if kind == "invalid":
        fail("INVALID_TAG", where)
    if kind == "reserved":
        fail("RESERVED_TAG", where)


def _dtype_tag(t, where):
    _tag(t, dtype_kind(t), where)


def _zero(b, where):
    if any(b):
        fail("RESERVED_NONZERO", where)


# ---------------------------------------------------------------- quantization payload ---
def parse_quant(p, where="quantization"):
    """Structure, tags and reserved fields of a quantization payload, in offset order."""
    if len(p) < 1:
        fail("LENGTH", f"{where}: empty payload")
    s = p[0]
    if is_invalid_tag(s):
        fail("INVALID_TAG", f"{where}.scheme")
    if s not in SCHEMES:
        fail("RESERVED_TAG", f"{where}.scheme")
    if len(p) != SCHEMES[s][1]:
        fail("LENGTH", f"{where}: payload length {len(p)} for {SCHEMES[s][0]}")
    q = {"scheme": s}
    if s == 0x01:
        _zero(p[1:8], f"{where}.reserved")
        q["scale"] = _u(p, 8, 8)
        q["zero_point"] = _i64(p, 16)
    elif s in (0x02, 0x03):
        q["axis"], q["scale_idx"], q["zp_idx"] = p[1], p[2], p[3]
        q["scale_dtype"], q["zp_dtype"] = p[4], p[5]
        _dtype_tag(p[4], f"{where}.scale_dtype")
        if not (q["zp_idx"] == ABSENT and p[5] == 0):
            _dtype_tag(p[5], f"{where}.zero_point_dtype")
        if s == 0x02:
            _zero(p[6:16], f"{where}.reserved")
        else:
            _zero(p[6:8], f"{where}.reserved")
            q["block_size"] = _u(p, 8, 4)
            _zero(p[12:24], f"{where}.reserved")
    elif s == 0x04:
        if p[1] & 0xFE:
            fail("RESERVED_NONZERO", f"{where}.flags")
        q["flags"] = p[1]
        q["absmax_idx"], q["nested_idx"], q["qmap_idx"] = p[2], p[3], p[4]
        _zero(p[5:8], f"{where}.reserved")
        q["block_size"] = _u(p, 8, 4)
        q["nested_block_size"] = _u(p, 12, 4)
        q["nested_offset"] = _u(p, 16, 4)
        _zero(p[20:24], f"{where}.reserved")
    elif s in (0x05, 0x06):
        q["axis"], q["scale_idx"] = p[1], p[2]
        _zero(p[3:4], f"{where}.reserved")
        q["block_size"] = _u(p, 4, 4)
        if s == 0x05:
            _zero(p[8:16], f"{where}.reserved")
        else:
            q["tensor_scale"] = _u(p, 8, 4)
            _zero(p[12:16], f"{where}.reserved")
    return q


def quant_intrinsic(q, where="quantization"):
    """Rules of a quantization descriptor that need no tensor context."""
    s = q["scheme"]
    if s == 0x01:
        x = _f64(q["scale"])
        if not (math.isfinite(x) and x > 0):
            fail("CONSTRAINT", f"{where}.scale")
    elif s in (0x02, 0x03):
        if q["scale_dtype"] not in SCALE_DTYPES:
            fail("COMBINATION", f"{where}.scale_dtype")
        if q["zp_idx"] != ABSENT:
            if q["zp_dtype"] not in ZP_DTYPES:
                fail("COMBINATION", f"{where}.zero_point_dtype")
        elif q["zp_dtype"] != 0:
            fail("CONSTRAINT", f"{where}.zero_point_dtype without a zero-point buffer")
        if s == 0x03 and q["block_size"] < 1:
            fail("CONSTRAINT", f"{where}.block_size")
    elif s == 0x04:
        bsz = q["block_size"]
        if not (_pow2(bsz) and 32 <= bsz <= 4096):
            fail("CONSTRAINT", f"{where}.block_size")
        if q["flags"] & 1:
            n = q["nested_block_size"]
            if not (_pow2(n) and 32 <= n <= 4096):
                fail("CONSTRAINT", f"{where}.nested_block_size")
            if not math.isfinite(_f32(q["nested_offset"])):
                fail("CONSTRAINT", f"{where}.nested_offset")
            if q["nested_idx"] == ABSENT or q["qmap_idx"] == ABSENT:
                fail("CONSTRAINT", f"{where}: double quant needs nested and quant-map buffers")
        else:
            if q["nested_block_size"] != 0 or q["nested_offset"] != 0:
                fail("CONSTRAINT", f"{where}: nested fields without double quant")
            if q["nested_idx"] != ABSENT or q["qmap_idx"] != ABSENT:
                fail("CONSTRAINT", f"{where}: nested buffers without double quant")
    elif s == 0x05:
        if q["block_size"] != 32:
            fail("CONSTRAINT", f"{where}.block_size")
    elif s == 0x06:
        if q["block_size"] != 16:
            fail("CONSTRAINT", f"{where}.block_size")
        x = _f32(q["tensor_scale"])
        if not (math.isfinite(x) and x > 0):
            fail("CONSTRAINT", f"{where}.tensor_scale")


def quant_count(q):
    """Q: extra buffers of a scheme (quantization.md § Scheme tags)."""
    s = q["scheme"]
    if s == 0x01:
        return 0
    if s in (0x02, 0x03):
        return 1 if q["zp_idx"] == ABSENT else 2
    if s == 0x04:
        return 3 if q["flags"] & 1 else 1
    return 1


def quant_map(q):
    from decoded import quant_map as qm  # same schema; the values come from the bytes here
    return qm(q)


def decode_quantization(data):
    """Standalone payload (HR-QUANT-1): (status, decoded map or where)."""
    try:
        q = parse_quant(bytes(data))
        quant_intrinsic(q)
        return "OK", quant_map(q)
    except Fail as e:
        return e.status, e.where


# ---------------------------------------------------------------- descriptor ---
def decode_descriptor(data, options=None):
    """(status, decoded map) or (status, where)."""
    try:
        return "OK", _decode(bytes(data), effective_limits(options))
    except Fail as e:
        return e.status, e.where


def _decode(b, lim):
    # 1.
    if len(b) < 16:
        fail("TRUNCATED", "fewer than 16 bytes")
    # 2.
    if b[0:4] != MAGIC:
        fail("BAD_MAGIC", "magic")
    if b[4] != 1:
        fail("VERSION", "version_major")
    _zero(b[6:8], "header reserved 6-7")
    _zero(b[12:16], "header reserved 12-15")
    # 3.
    elen = _u(b, 8, 4)
    if elen < 40 or elen % 8:
        fail("LENGTH", "encoded_len")
    if elen > lim["max_descriptor_bytes"]:
        fail("LIMIT", "encoded_len > max_descriptor_bytes")
    # 4.
    if len(b) < elen:
        fail("TRUNCATED", "input shorter than encoded_len")
    r = Reader(b, elen)
    hdr = r.take(32, "header")
    # 5.
    _zero(hdr[23:24], "header reserved 23")
    dtype, device, memclass, layout = hdr[16], hdr[17], hdr[18], hdr[19]
    _dtype_tag(dtype, "dtype")
    _tag(device, simple_kind(device, DEVICES), "device")
    _tag(memclass, simple_kind(memclass, MEMORY_CLASSES), "memory_class")
    if not pair_valid(device, memclass):
        fail("COMBINATION", "device x memory_class")
    lkind = layout_kind(layout)
    if lkind == "invalid":
        fail("INVALID_TAG", "layout")
    rank, bc, sc = hdr[20], hdr[21], hdr[22]
    if rank > min(lim["max_rank"], 64):
        fail("LIMIT", "rank")
    off = _u(hdr, 24, 8)
    # 6.
    shape = []
    for k in range(rank):
        w = _u(r.take(8, f"shape[{k}]"), 0, 8)
        if w != DYNAMIC and w > I64_MAX:
            fail("RANGE", f"shape[{k}]")
        shape.append(None if w == DYNAMIC else w)
    resolved = [e for e in shape if e is not None]
    if any(e == 0 for e in resolved):
        n_elems = 0
    else:
        n_elems = _ck(math.prod(resolved), "element count")
    bits = dtype_bits(dtype)
    if bits is not None:
        _ck(n_elems * bits, "element count x bits")
    dynamic = any(e is None for e in shape)
    # 7.
    bufs = []
    for i in range(bc):
        e = r.take(16, f"buffers[{i}]")
        size, al, sync = _u(e, 0, 8), e[8], e[9]
        _zero(e[10:16], f"buffers[{i}].reserved")
        if al > MAX_ALIGNMENT_LOG2:
            fail("ALIGNMENT", f"buffers[{i}].alignment_log2")
        if size == 0 and al != 0:
            fail("ALIGNMENT", f"buffers[{i}]: empty buffer must declare 1")
        _tag(sync, simple_kind(sync, SYNC_MODES) if not (0xF0 <= sync <= 0xFE) else "reserved",
             f"buffers[{i}].sync_mode")
        if size > lim["max_buffer_bytes"]:
            fail("LIMIT", f"buffers[{i}].size")
        bufs.append((size, al, sync))
    # 8.
    lb = r.take(8, "layout block header")
    plen = _u(lb, 0, 4)
    _zero(lb[4:8], "layout block reserved")
    if plen > elen - r.pos:
        fail("LENGTH", "layout param_length exceeds encoded_len")
    if lkind == "named" and plen != layout_param_length(layout, rank):
        fail("LENGTH", "layout param_length for the layout")
    if lkind == "private" and plen < 8:
        fail("LENGTH", "private layout param_length < 8")
    pb = r.take(plen, "layout params")
    params = _parse_params(layout, lkind, rank, pb)
    _zero(r.take(pad8(plen) - plen, "layout padding"), "layout padding")
    # 9.
    prev = 0
    quant = stats = shard = role = None
    unknown = []
    for i in range(sc):
        sh = r.take(8, f"sections[{i}] header")
        st, fl, ln = sh[0], sh[1], _u(sh, 4, 4)
        if is_invalid_tag(st):
            fail("INVALID_TAG", f"sections[{i}].type")
        if st <= prev:
            fail("SECTION_ORDER", f"sections[{i}].type")
        prev = st
        if fl & 0xFE:
            fail("RESERVED_NONZERO", f"sections[{i}].flags")
        _zero(sh[2:4], f"sections[{i}].reserved")
        mu = fl & 1
        if st in SECTIONS:
            if mu != SECTIONS[st][1]:
                fail("CONSTRAINT", f"sections[{i}].must_understand")
        elif mu:
            fail("UNSUPPORTED", f"sections[{i}]: unknown must-understand section")
        if ln > elen - r.pos:
            fail("LENGTH", f"sections[{i}].length")
        p = r.take(ln, f"sections[{i}] payload")
        w = f"sections[{i}]"
        if st == SECT_QUANT:
            quant = parse_quant(p, w)
        elif st == SECT_STATS:
            if ln != 32:
                fail("LENGTH", f"{w}.length")
            if p[0] & 0xFC:
                fail("RESERVED_NONZERO", f"{w}.flags")
            _zero(p[1:8], f"{w}.reserved")
            stats = {"flags": p[0], "min": _u(p, 8, 8), "max": _u(p, 16, 8),
                     "nan_count": _u(p, 24, 8)}
            if not p[0] & 1:
                _zero(p[8:24], f"{w}: min/max without its flag")
            if not p[0] & 2:
                _zero(p[24:32], f"{w}: nan_count without its flag")
        elif st == SECT_SHARD:
            if ln != 8 + 16 * rank:
                fail("LENGTH", f"{w}.length")
            shard = {"index": _u(p, 0, 4), "count": _u(p, 4, 4),
                     "global_shape": [_u(p, 8 + 8 * k, 8) for k in range(rank)],
                     "global_offset": [_u(p, 8 + 8 * rank + 8 * k, 8) for k in range(rank)]}
        elif st == SECT_ROLE:
            if ln != 8:
                fail("LENGTH", f"{w}.length")
            if is_invalid_tag(p[0]):
                fail("INVALID_TAG", f"{w}.role")
            if p[0] not in ROLES:
                fail("RESERVED_TAG", f"{w}.role")
            _zero(p[1:8], f"{w}.reserved")
            role = p[0]
        else:
            unknown.append({"type": st, "flags": fl, "data": bytes(p)})
        _zero(r.take(pad8(ln) - ln, f"{w} padding"), f"{w} padding")
    # 10.
    if r.pos != elen:
        fail("LENGTH", "end of last part != encoded_len")
    # 11. tier 3
    _tier3(dtype, layout, lkind, shape, n_elems, dynamic, off, bufs, params, quant, stats,
           shard, lim)
    if lkind == "named":
        # tier 1
        L = layout_buffer_count(layout, rank)
        Q = quant_count(quant) if quant else 0
        if bc != L + Q:
            fail("BUFFER_COUNT", f"buffer_count {bc} != {L}+{Q}")
        # tier 2
        req = _requirements(dtype, layout, shape, n_elems, dynamic, off, params, quant)
        for i, need in enumerate(req):
            if need is not None and bufs[i][0] < need:
                fail("BUFFER_SIZE", f"buffers[{i}].size {bufs[i][0]} < {need}")
    return {
        "encoded_len": elen,
        "version": [b[4], b[5]],
        "dtype": dtype_name(dtype), "dtype_tag": dtype,
        "device": device_name(device), "device_tag": device,
        "memory_class": memclass_name(memclass), "memory_class_tag": memclass,
        "shape": shape,
        "byte_offset": off,
        "buffers": [{"size": s, "alignment": 1 << a, "sync_mode": SYNC_MODES[y]} for s, a, y in bufs],
        "layout": _layout_map(layout, lkind, params),
        "quantization": quant_map(quant) if quant else None,
        "statistics": ({"has_min_max": bool(stats["flags"] & 1),
                        "has_nan_count": bool(stats["flags"] & 2),
                        "min": {"f64": stats["min"]} if stats["flags"] & 1 else None,
                        "max": {"f64": stats["max"]} if stats["flags"] & 1 else None,
                        "nan_count": stats["nan_count"] if stats["flags"] & 2 else None}
                       if stats else None),
        "shard": ({"shard_index": shard["index"], "shard_count": shard["count"],
                   "global_shape": shard["global_shape"], "global_offset": shard["global_offset"]}
                  if shard else None),
        "role": ROLES[role] if role else None,
        "unknown_sections": unknown,
    }


def _parse_params(layout, lkind, rank, pb):
    if lkind == "private":
        _zero(pb[4:8], "layout.reserved")
        return {"extension_layout_id": _u(pb, 0, 4), "extension_data": bytes(pb[8:])}
    if lkind == "reserved":
        return {"params": bytes(pb)}
    if layout == STRIDED:
        return {"strides": [_i64(pb, 8 * k) for k in range(rank)]}
    if layout == TILED:
        return {"tile_shape": [_u(pb, 8 * k, 8) for k in range(rank)],
                "outer_strides": [_i64(pb, 8 * rank + 8 * k) for k in range(rank)],
                "inner_strides": [_i64(pb, 16 * rank + 8 * k) for k in range(rank)]}
    if layout in (COO, CSR, CSC):
        return {"nnz": _u(pb, 0, 8)}
    if layout == CSF:
        nnz = _u(pb, 0, 8)
        fc = [_u(pb, 8 + 8 * k, 8) for k in range(rank - 1)]
        mo_at = 8 * rank
        mo = list(pb[mo_at:mo_at + rank])
        return {"nnz": nnz, "fiber_counts": fc, "mode_order": mo}
    if layout == BLOCK_PAGED:
        return {k: _u(pb, 8 * i, 8) for i, k in
                enumerate(("page_size", "num_pages", "num_seqs", "num_blocks"))}
    if layout == COMPOSITE:
        rule, comb = pb[0], pb[1]
        if is_invalid_tag(rule):
            fail("INVALID_TAG", "layout.rule")
        if rule not in RULES:
            fail("RESERVED_TAG", "layout.rule")
        if comb == 0xFF or (rule == 0x02 and comb == 0x00):
            fail("INVALID_TAG", "layout.combine")
        if comb != 0 and comb not in COMBINES:
            fail("RESERVED_TAG", "layout.combine")
        _zero(pb[2:4], "layout.reserved")
        return {"rule": rule, "combine": comb, "member_count": _u(pb, 4, 4)}
    return {}


def _layout_map(layout, lkind, p):
    m = {"tag": layout, "name": layout_name(layout)}
    if lkind == "private":
        m["extension_layout_id"] = p["extension_layout_id"]
        m["extension_data"] = p["extension_data"]
    elif lkind == "reserved":
        m["params"] = p["params"]
    elif layout == COMPOSITE:
        m["rule"] = RULES[p["rule"]]
        m["combine"] = COMBINES[p["combine"]] if p["combine"] else None
        m["member_count"] = p["member_count"]
    else:
        m.update(p)
    return m


# ---------------------------------------------------------------- tier 3 ---
def _bounds(terms, where):
    """lo, hi of a sum of signed terms, each term and sum checked in i64."""
    lo = hi = 0
    for t in terms:
        _cki(t, where)
        if t < 0:
            lo = _cki(lo + t, where)
        else:
            hi = _cki(hi + t, where)
    return lo, hi


def _strided_terms(layout, shape, p):
    if layout == STRIDED:
        return [s * (n - 1) for s, n in zip(p["strides"], shape)]
    terms = []
    for k, n in enumerate(shape):
        t = p["tile_shape"][k]
        terms.append(p["outer_strides"][k] * (-(-n // t) - 1))
        terms.append(p["inner_strides"][k] * (min(t, n) - 1))
    return terms


def _tier3(dtype, layout, lkind, shape, N, dynamic, off, bufs, p, quant, stats, shard, lim):
    rank = len(shape)
    E = dtype_bits(dtype) // 8 if byte_addressable(dtype) else None
    # descriptor.md HR-DESC-3 (read as part of tier 3)
    if (layout == COMPOSITE or not bufs) and off != 0:
        fail("CONSTRAINT", "byte_offset must be 0")
    if E is not None and off % E:
        fail("CONSTRAINT", "byte_offset not a multiple of the element width")
    # memory-layout.md § Layout against shape
    if layout in (STRIDED, TILED):
        if layout == TILED:
            if rank < 1:
                fail("CONSTRAINT", "tiled rank")
            for k, t in enumerate(p["tile_shape"]):
                if t < 1 or t > I64_MAX:
                    fail("CONSTRAINT", f"layout.tile_shape[{k}]")
        if E is None:
            fail("COMBINATION", f"{layout_name(layout)} with a non-byte-addressable type")
        if N > 0 and not dynamic:
            lo, _ = _bounds(_strided_terms(layout, shape, p), "layout bounds")
            if off // E + lo < 0:
                fail("CONSTRAINT", "lowest element precedes buffer 0")
    elif layout == MORTON:
        if rank not in (2, 3):
            fail("CONSTRAINT", "morton rank")
        for k, n in enumerate(shape):
            if n is not None and not _pow2(n):
                fail("CONSTRAINT", f"morton shape[{k}]")
    elif layout == HILBERT:
        if rank != 2:
            fail("CONSTRAINT", "hilbert rank")
        for k, n in enumerate(shape):
            if n is not None and not _pow2(n):
                fail("CONSTRAINT", f"hilbert shape[{k}]")
        if None not in shape and shape[0] != shape[1]:
            fail("CONSTRAINT", "hilbert non-square")
    elif layout in (COO, CSR, CSC):
        if layout == COO and rank < 1:
            fail("CONSTRAINT", "coo rank")
        if layout != COO and rank != 2:
            fail("CONSTRAINT", "csr/csc rank")
        if not dynamic and p["nnz"] > N:
            fail("CONSTRAINT", "nnz > N")
    elif layout == CSF:
        if rank < 1:
            fail("CONSTRAINT", "csf rank")
        m = p["mode_order"]
        if sorted(m) != list(range(rank)):
            fail("CONSTRAINT", "csf mode_order")
        c = p["fiber_counts"] + [p["nnz"]]
        if any(c):
            if c[0] < 1:
                fail("CONSTRAINT", "csf fiber_counts[0]")
            for d in range(1, rank):
                if c[d - 1] > c[d]:
                    fail("CONSTRAINT", f"csf c[{d - 1}] > c[{d}]")
        prev = 1
        for d in range(rank):
            n = shape[m[d]]
            if n is not None and c[d] > prev * n:
                fail("CONSTRAINT", f"csf c[{d}]")
            prev = c[d]
    elif layout == BLOCK_PAGED:
        if rank < 2:
            fail("CONSTRAINT", "block_paged rank")
        if p["page_size"] < 1:
            fail("CONSTRAINT", "block_paged page_size")
        if shape[0] is not None and p["num_seqs"] != shape[0]:
            fail("CONSTRAINT", "block_paged num_seqs != shape[0]")
    elif layout == COMPOSITE:
        if p["rule"] in (0x01, 0x03) and p["combine"] != 0:
            fail("COMBINATION", "combine on partition/group")
        if p["member_count"] < 1:
            fail("CONSTRAINT", "member_count")
        if p["member_count"] > lim["max_composite_members"]:
            fail("LIMIT", "member_count")
        if quant is not None:
            fail("COMBINATION", "quantization on a composite head")
    # quantization.md
    if quant is not None:
        _quant_context(dtype, layout, lkind, shape, len(bufs), p, quant)
    # sections.md
    if stats is not None:
        f = stats["flags"]
        if f == 0:
            fail("CONSTRAINT", "statistics.flags = 0")
        if f & 1:
            lo, hi = _f64(stats["min"]), _f64(stats["max"])
            if math.isnan(lo) or math.isnan(hi):
                fail("CONSTRAINT", "statistics NaN min/max")
            if lo > hi:
                fail("CONSTRAINT", "statistics min > max")
        if f & 2 and not dynamic and stats["nan_count"] > N:
            fail("CONSTRAINT", "statistics nan_count > N")
    if shard is not None:
        if shard["count"] < 1 or shard["index"] >= shard["count"]:
            fail("CONSTRAINT", "shard index/count")
        for k, g in enumerate(shard["global_shape"]):
            if g == DYNAMIC or g > I64_MAX:
                fail("RANGE", f"shard.global_shape[{k}]")
        for k, n in enumerate(shape):
            if n is not None and shard["global_offset"][k] + n > shard["global_shape"][k]:
                fail("CONSTRAINT", f"shard box dim {k}")


def _quant_context(dtype, layout, lkind, shape, bc, p, q):
    quant_intrinsic(q)
    s = q["scheme"]
    rank = len(shape)
    # element type
    if s in (0x01, 0x02, 0x03):
        if not affine_dtype_ok(dtype):
            fail("COMBINATION", "quantization element type")
    elif s == 0x04 and dtype != DT["uint4"]:
        fail("COMBINATION", "nf4 element type")
    elif s == 0x05 and dtype not in MX_DTYPES:
        fail("COMBINATION", "mx element type")
    elif s == 0x06 and dtype != DT["float4_e2m1fn"]:
        fail("COMBINATION", "nvfp4 element type")
    if s == 0x01:
        zp = q["zero_point"]
        if is_integer(dtype):
            lo, hi = INT_RANGE[DTYPES[dtype][0]]
            if not lo <= zp <= hi:
                fail("RANGE", "zero_point")
        elif zp != 0:
            fail("RANGE", "zero_point of a float8 type")
    if s in (0x02, 0x03, 0x05, 0x06) and q["axis"] >= rank:
        fail("RANGE", "axis")
    # layout compatibility (HR-QUANT-20, HR-PAGED-3)
    if lkind == "named":
        if s == 0x01:
            ok = layout != COMPOSITE
        elif s == 0x04:
            ok = layout == ROW_MAJOR
        else:
            ok = layout in DENSE_LAYOUTS or (layout == BLOCK_PAGED and s == 0x02 and q["axis"] >= 2)
        if not ok:
            fail("COMBINATION", "quantization x layout")
    # buffer indices (HR-QUANT-3)
    idx = []
    if s in (0x02, 0x03):
        idx = [q["scale_idx"], q["zp_idx"]]
    elif s == 0x04:
        idx = [q["absmax_idx"], q["nested_idx"], q["qmap_idx"]]
    elif s in (0x05, 0x06):
        idx = [q["scale_idx"]]
    if idx and idx[0] == ABSENT:
        fail("CONSTRAINT", "quantization: the first scheme buffer is not optional")
    if lkind == "named":
        L = layout_buffer_count(layout, rank)
        for k, v in enumerate(idx):
            if v != ABSENT and v != L + k:
                fail("CONSTRAINT", "quantization buffer index")
    else:
        present = [v for v in idx if v != ABSENT]
        if len(set(present)) != len(present) or any(v >= bc for v in present):
            fail("CONSTRAINT", "quantization buffer index (private/unknown layout)")


# ---------------------------------------------------------------- tier 2 ---
def _requirements(dtype, layout, shape, N, dynamic, off, p, q):
    """Required size of each buffer, None where it cannot be evaluated (HR-BUF-11)."""
    rank = len(shape)

    def vals(count):
        if count is None:
            return None
        n = bs(dtype, count, "values")
        return None if n is None else _ck(off + n, "values size")

    req = []
    if layout in (ROW_MAJOR, COL_MAJOR, MORTON, HILBERT):
        req = [None if dynamic else vals(N)]
    elif layout in (STRIDED, TILED):
        if dynamic:
            req = [None]
        elif N == 0:
            req = [off]
        else:
            E = dtype_bits(dtype) // 8
            _, hi = _bounds(_strided_terms(layout, shape, p), "layout bounds")
            req = [_ck((off // E + hi + 1) * E, "strided size")]
    elif layout == COO:
        nnz = p["nnz"]
        req = [vals(nnz), _ck(8 * rank * nnz, "coo indices")]
    elif layout in (CSR, CSC):
        nnz = p["nnz"]
        n = shape[0] if layout == CSR else shape[1]
        req = [vals(nnz), _ck(8 * nnz, "indices"),
               None if n is None else _ck(8 * (n + 1), "ptr")]
    elif layout == CSF:
        c = p["fiber_counts"] + [p["nnz"]]
        req = [vals(p["nnz"])]
        prev = 1
        for d in range(rank):
            req += [_ck(8 * (prev + 1), f"ptr_{d}"), _ck(8 * c[d], f"idx_{d}")]
            prev = c[d]
    elif layout == BLOCK_PAGED:
        inner = shape[2:]
        if any(e is None for e in inner):
            pages = None
        else:
            pages = _ck(p["num_pages"] * p["page_size"], "pages")
            for e in inner:
                pages = _ck(pages * e, "pages")
        req = [vals(pages), _ck(8 * (p["num_seqs"] + 1), "seq_ptr"),
               _ck(8 * p["num_blocks"], "block_table")]
    if q is not None:
        req += _quant_requirements(dtype, shape, N, dynamic, q)
    return req


def _blocked(shape, N, dynamic, axis, B):
    if dynamic:
        return None
    if N == 0:
        return 0
    na = shape[axis]
    return (N // na) * (-(-na // B))


def _quant_requirements(dtype, shape, N, dynamic, q):
    s = q["scheme"]
    out = []
    if s == 0x02:
        na = shape[q["axis"]]
        out.append(None if na is None else bs(q["scale_dtype"], na, "scale"))
        if q["zp_idx"] != ABSENT:
            out.append(None if na is None else bs(q["zp_dtype"], na, "zero point"))
    elif s == 0x03:
        c = _blocked(shape, N, dynamic, q["axis"], q["block_size"])
        out.append(None if c is None else bs(q["scale_dtype"], c, "scale"))
        if q["zp_idx"] != ABSENT:
            out.append(None if c is None else bs(q["zp_dtype"], c, "zero point"))
    elif s == 0x04:
        nb = None if dynamic else -(-N // q["block_size"])
        if q["flags"] & 1:
            out.append(nb)
            out.append(None if nb is None else 4 * -(-nb // q["nested_block_size"]))
            out.append(1024)
        else:
            out.append(None if nb is None else 4 * nb)
    elif s in (0x05, 0x06):
        out.append(_blocked(shape, N, dynamic, q["axis"], q["block_size"]))
    return out


# ================================================================ KV sections (kv.md) ===
KV_TYPES = {0x01: "bool", 0x02: "int64", 0x03: "uint64", 0x04: "float64", 0x05: "string",
            0x06: "bytes", 0x07: "list"}


def _limits(options):
    return effective_limits({k: v for k, v in (options or {}).items()
                             if k not in ("cross_machine", "require_end_frame")})


class _Cursor:
    """Reads a region; a read crossing its end fails with the region's short status."""

    def __init__(self, data, start, end, short, what):
        self.d, self.pos, self.end, self.short, self.what = data, start, end, short, what

    @property
    def left(self):
        return self.end - self.pos

    def take(self, n, where):
        if n > self.end - self.pos:
            fail(self.short, f"{self.what}{where}: read crosses the end")
        b = bytes(self.d[self.pos:self.pos + n])
        self.pos += n
        return b


def _name_ok(b):
    """kv.md HR-KV-6: valid UTF-8 (Python's codec is RFC 3629 strict), no U+0000."""
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in s else s


def _kv_tag(tag, where):
    if is_invalid_tag(tag):
        fail("INVALID_TAG", where)
    if tag not in KV_TYPES:
        fail("UNSUPPORTED", where)


def _kv_payload(c, tag, depth, lim, where):
    t = KV_TYPES[tag]
    if t == "bool":
        p = c.take(8, where)
        if p[0] > 1:
            fail("RANGE", f"{where}: bool {p[0]}")
        _zero(p[1:8], f"{where}: bool reserved")
        return {"bool": p[0] == 1}
    if t in ("int64", "uint64", "float64"):
        p = c.take(8, where)
        return {t: struct.unpack("<q", p)[0] if t == "int64" else _u(p, 0, 8)}
    if t in ("string", "bytes"):
        n = _u(c.take(8, f"{where}.length"), 0, 8)
        b = c.take(n, f"{where}.bytes")
        if t == "string":
            try:
                s = b.decode("utf-8")
            except UnicodeDecodeError:
                fail("CONSTRAINT", f"{where}: string not UTF-8")
        _zero(c.take(pad8(n) - n, f"{where}.padding"), f"{where}.padding")
        return {"string": s} if t == "string" else {"bytes": b}
    # list
    if depth + 1 > lim["max_composite_depth"]:
        fail("LIMIT", f"{where}: list depth {depth + 1}")
    count = _u(c.take(8, f"{where}.count"), 0, 8)
    if count * 16 > c.left:
        fail(c.short, f"{where}: count {count} exceeds the bytes left")
    out = []
    for i in range(count):
        h = c.take(8, f"{where}[{i}] header")
        _kv_tag(h[0], f"{where}[{i}].tag")
        _zero(h[1:8], f"{where}[{i}].reserved")
        out.append(_kv_payload(c, h[0], depth + 1, lim, f"{where}[{i}]"))
    return {"list": out}


def _kv(data, start, end, lim, short, what="kv"):
    """kv.md § Decoding order (HR-KV-9) over data[start:end]; returns the map."""
    if end - start > lim["max_kv_bytes"]:
        fail("LIMIT", f"{what}: section bytes > max_kv_bytes")
    c = _Cursor(data, start, end, short, what)
    count = _u(c.take(8, ".entry_count"), 0, 8)
    if count > lim["max_kv_entries"]:
        fail("LIMIT", f"{what}.entry_count")
    if count * 24 > c.left:
        fail(short, f"{what}.entry_count exceeds the bytes left")
    out, prev = {}, None
    for i in range(count):
        w = f"{what}[{i}]"
        h = c.take(8, f"[{i}] header")
        klen, tag = _u(h, 0, 4), h[4]
        if klen == 0:
            fail("CONSTRAINT", f"{w}.key_length 0")
        if klen > lim["max_name_bytes"]:
            fail("LIMIT", f"{w}.key_length")
        _kv_tag(tag, f"{w}.value_tag")
        _zero(h[5:8], f"{w}.reserved")
        key = c.take(klen, f"[{i}].key")
        s = _name_ok(key)
        if s is None:
            fail("CONSTRAINT", f"{w}.key is not a name")
        if prev is not None:
            if key == prev:
                fail("DUPLICATE", f"{w}.key")
            if key < prev:
                fail("SECTION_ORDER", f"{w}.key")
        prev = key
        _zero(c.take(pad8(klen) - klen, f"[{i}].key padding"), f"{w}.key padding")
        out[s] = _kv_payload(c, tag, 0, lim, f"{w}.value")
    if c.left:
        fail("LENGTH", f"{what}: {c.left} bytes after the last entry")
    return out


def decode_kv(data, options=None):
    """A standalone KV section (kv.decode): (status, {"entries", "encoded_len"} or where)."""
    try:
        data = bytes(data)
        m = _kv(data, 0, len(data), _limits(options), "TRUNCATED")
        return "OK", {"entries": m, "encoded_len": len(data)}
    except Fail as e:
        return e.status, e.where


# ================================================================ composites (composite.md) ===
def _member_rules(h, i, m, where):
    """composite.md § Validation order step 3.1-3.2 for member i (decoded descriptor maps)."""
    rule = h["layout"]["rule"]
    if rule == "overlay":
        want = "base" if i == 0 else "correction"
        if m["role"] != want:
            fail("CONSTRAINT", f"{where}: overlay role {m['role']} != {want}")
    elif m["role"] is not None:
        fail("CONSTRAINT", f"{where}: role section on a {rule} member")
    if rule == "group":
        return
    hs, ms = h["shape"], m["shape"]
    if len(ms) != len(hs):
        fail("CONSTRAINT", f"{where}: rank")
    if m["dtype_tag"] != h["dtype_tag"]:
        fail("COMBINATION", f"{where}: dtype")
    if None in ms:
        fail("CONSTRAINT", f"{where}: dynamic extent")
    sh = m["shard"]
    if rule == "partition":
        if sh is None:
            fail("CONSTRAINT", f"{where}: partition member without a shard section")
        if sh["global_shape"] != hs:
            fail("CONSTRAINT", f"{where}: global_shape != head shape")
    elif i == 0:
        if ms != hs:
            fail("CONSTRAINT", f"{where}: overlay base shape != head shape")
        if sh is not None and (sh["global_shape"] != hs or any(sh["global_offset"])):
            fail("CONSTRAINT", f"{where}: overlay base shard box")
    else:
        if sh is None:
            fail("CONSTRAINT", f"{where}: overlay correction without a shard section")
        if sh["global_shape"] != hs:
            fail("CONSTRAINT", f"{where}: global_shape != head shape")


MIN_BUFFER_ALIGNMENT = 64  # buffer-protocol.md § Alignment


def _alignment_slack(d, total, lim, where):
    """errors-and-limits.md HR-LIMIT-2 (stream.md HR-STREAM-9 step 8), before a tensor's
    buffers: total[1] and total[2] are the reader's running alignment slack and buffer bytes
    -- every item it yielded (the corpus's consumer keeps them all, § Golden corpus) and the
    descriptors read so far of this one."""
    first = None  # the first buffer at which the running sums pass (the field named)
    for j, bf in enumerate(d["buffers"]):
        if not bf["size"]:
            continue  # never allocated
        if bf["alignment"] > MIN_BUFFER_ALIGNMENT:
            total[1] += bf["alignment"] - MIN_BUFFER_ALIGNMENT
        total[2] += bf["size"]
        if first is None and total[1] > min(total[2] + lim["max_alignment_slack"], U64_MAX):
            first = j
    # a descriptor with no non-empty buffer sets nothing aside and is not checked; else the
    # last one's running sums are the total
    if first is not None and total[1] > min(total[2] + lim["max_alignment_slack"], U64_MAX):
        fail("LIMIT", f"{where}.buffers[{first}]: alignment slack {total[1]} > {total[2]} "
                      f"buffer bytes + max_alignment_slack")


def _head_rules(h, depth, total, lim, where):
    """composite.md step 2 for a head at `depth`; total: [running member total of the
    top-level item, the reader's alignment slack, buffer bytes] (_alignment_slack)."""
    if depth > lim["max_composite_depth"]:
        fail("LIMIT", f"{where}: depth {depth}")
    total[0] += h["layout"]["member_count"]
    if total[0] > lim["max_composite_members"]:
        fail("LIMIT", f"{where}: member total {total[0]}")
    if h["layout"]["rule"] in ("partition", "overlay") and None in h["shape"]:
        fail("CONSTRAINT", f"{where}: head extents not resolved")


def _grid(h, members, where):
    """composite.md HR-COMP-6: the members tile the head as a row-major grid."""
    H = h["shape"]
    r, n = len(H), len(members)
    offs = [m["shard"]["global_offset"] for m in members]
    shp = [m["shape"] for m in members]
    if r == 0:
        if n != 1:
            fail("CONSTRAINT", f"{where}: rank-0 partition with {n} members")
        return
    m = [0] * r
    s = [0] * r
    stride = 1
    for k in range(r - 1, -1, -1):
        s[k] = stride
        t = 1
        while t * stride < n and offs[t * stride][k] != 0:
            t += 1
        m[k] = t
        stride *= t
    if math.prod(m) != n:
        fail("CONSTRAINT", f"{where}: grid {m} holds {math.prod(m)} cells, not {n}")
    cuts = []
    for k in range(r):
        c = [offs[t * s[k]][k] for t in range(m[k])] + [H[k]]
        if c[0] != 0:
            fail("CONSTRAINT", f"{where}: first cut of dim {k} is not 0")
        for t in range(m[k]):
            if H[k] == 0:
                if m[k] != 1:
                    fail("CONSTRAINT", f"{where}: cuts of an empty dim {k}")
            elif not c[t] < c[t + 1]:
                fail("CONSTRAINT", f"{where}: cuts of dim {k} not increasing")
        cuts.append(c)
    for i in range(n):
        rem = i
        for k in range(r - 1, -1, -1):
            j = rem % m[k]
            rem //= m[k]
            if offs[i][k] != cuts[k][j] or shp[i][k] != cuts[k][j + 1] - cuts[k][j]:
                fail("CONSTRAINT", f"{where}: member {i} is not grid cell along dim {k}")


# ================================================================ streams (stream.md) ===
FRAME_MAGIC = b"HRSF"


END_KIND = 0x03  # stream.md § End frame (HR-STREAM-12)
ANN_KIND = 0x04  # stream.md § Annotation frame (HR-STREAM-17)


class _EndFrame(Exception):
    """An end frame outside a composite: the stream ends here (HR-STREAM-12)."""


def _frame_kind(kind, where, named=(0x01, 0x02)):
    """A stream frame kind (named: also END_KIND) or a file index entry kind."""
    if is_invalid_tag(kind):
        fail("INVALID_TAG", where)
    if kind not in named:
        fail("RESERVED_TAG", where)


def _annotation(b, pos, lim):
    """stream.md § Annotation frame (HR-STREAM-17) at pos (its header checked): the head in
    offset order, the name and its padding, the KV section. Returns (name, metadata, pos)."""
    where = f"annotation@{pos}"
    if len(b) - pos < 24:
        fail("TRUNCATED", f"{where}: head")
    name_len = _u(b, pos + 8, 4)
    if name_len > lim["max_name_bytes"]:
        fail("LIMIT", f"{where}.name_length")
    _zero(b[pos + 12:pos + 16], f"{where}.reserved")
    kv_len = _u(b, pos + 16, 8)
    if kv_len % 8:
        fail("LENGTH", f"{where}.kv_length")
    if kv_len > lim["max_kv_bytes"]:
        fail("LIMIT", f"{where}.kv_length")
    if name_len == 0 and kv_len == 0:
        fail("CONSTRAINT", f"{where}: neither a name nor metadata")
    p = pos + 24
    if len(b) - p < pad8(name_len):
        fail("TRUNCATED", f"{where}.name")
    name = None
    if name_len:
        name = _name_ok(b[p:p + name_len])
        if name is None:
            fail("CONSTRAINT", f"{where}.name is not a name")
    _zero(b[p + name_len:p + pad8(name_len)], f"{where}.name padding")
    p += pad8(name_len)
    if len(b) - p < kv_len:
        fail("TRUNCATED", f"{where}.metadata")
    md = None
    if kv_len:
        md = _kv(b, p, p + kv_len, lim, "LENGTH", f"{where}.metadata")
        if not md:
            fail("CONSTRAINT", f"{where}.metadata: entry_count 0")
    return name, md, p + kv_len


def _stream_item(b, pos, lim, opts, cm, parent, idx, depth, total, after_ann=False):
    """One item from pos (stream.md § Decoding order, HR-STREAM-9). Returns (item, pos)."""
    where = f"frame@{pos}"
    if pos == len(b):
        fail("TRUNCATED", "item missing after its annotation" if after_ann else f"members[{idx}] missing")
    if len(b) - pos < 8:
        fail("TRUNCATED", f"{where}: frame header")
    if b[pos:pos + 4] != FRAME_MAGIC:
        fail("BAD_MAGIC", f"{where}.magic")
    kind = b[pos + 4]
    _frame_kind(kind, f"{where}.kind", (0x01, 0x02, END_KIND, ANN_KIND))
    _zero(b[pos + 5:pos + 8], f"{where}.reserved")
    if kind == END_KIND:  # step 2a
        if parent is not None:
            fail("CONSTRAINT", f"{where}.kind: an end frame where member {idx} is due")
        if after_ann:
            fail("CONSTRAINT", f"{where}.kind: an end frame right after an annotation frame")
        raise _EndFrame()
    if kind == ANN_KIND:  # step 2b (HR-STREAM-18)
        if parent is not None:
            fail("CONSTRAINT", f"{where}.kind: an annotation frame where member {idx} is due")
        if after_ann:
            fail("CONSTRAINT", f"{where}.kind: an annotation frame right after another")
        name, md, pos = _annotation(b, pos, lim)
        it, pos = _stream_item(b, pos, lim, opts, cm, None, None, depth, total, after_ann=True)
        if name is not None:
            it["name"] = name
        if md:
            it["metadata"] = md
        return it, pos
    status, d = decode_descriptor(b[pos + 8:], opts)
    if status != "OK":
        fail(status, f"{where}/descriptor: {d}")
    is_comp = d["layout"]["tag"] == COMPOSITE
    if (kind == 0x02) != is_comp:
        fail("CONSTRAINT", f"{where}.kind vs layout")
    if cm:
        for i, bf in enumerate(d["buffers"]):
            if bf["sync_mode"] != "producer_synced":
                fail("COMBINATION", f"{where}.buffers[{i}].sync_mode (cross_machine)")
    if parent is None:
        if d["role"] is not None:
            fail("CONSTRAINT", f"{where}: role section on a top-level item")
    else:
        _member_rules(parent, idx, d, where)
    pos += 8 + d["encoded_len"]
    if is_comp:
        _head_rules(d, depth + 1, total, lim, where)
        members = []
        for i in range(d["layout"]["member_count"]):
            it, pos = _stream_item(b, pos, lim, opts, cm, d, i, depth + 1, total)
            members.append(it)
        if d["layout"]["rule"] == "partition":
            _grid(d, [m["descriptor"] for m in members], where)
        return {"kind": "composite", "descriptor": d, "members": members}, pos
    _alignment_slack(d, total, lim, where)
    bufs = []
    for i, bf in enumerate(d["buffers"]):
        n = bf["size"]
        if len(b) - pos < n:
            fail("TRUNCATED", f"{where}.buffers[{i}] data")
        data = b[pos:pos + n]
        pos += n
        p = pad8(n) - n
        if len(b) - pos < p:
            fail("TRUNCATED", f"{where}.buffers[{i}] padding")
        _zero(b[pos:pos + p], f"{where}.buffers[{i}] padding")
        pos += p
        bufs.append({"size": n, "sha256": hashlib.sha256(data).digest()})
    return {"kind": "tensor", "descriptor": d, "buffers": bufs}, pos


STREAM_OPTIONS = ("cross_machine", "require_end_frame")  # the stream-only bool options


def decode_stream(data, options=None):
    """Read items until the end or a failure: (status, decoded map or where, items read).
    The end is an end frame (nothing after it is looked at), or the end of input at a frame
    boundary outside a composite -- TRUNCATED with require_end_frame (HR-STREAM-13)."""
    b = bytes(data)
    lim = _limits(options)
    opts = {k: v for k, v in (options or {}).items() if k not in STREAM_OPTIONS}
    cm = bool((options or {}).get("cross_machine"))
    need_end = bool((options or {}).get("require_end_frame"))
    items, offsets, pos = [], [], 0
    held = [0, 0]  # HR-LIMIT-2: the slack and bytes of the items yielded, all kept
    try:
        while True:
            if pos == len(b):  # a frame boundary outside a composite with no byte left
                if need_end:
                    fail("TRUNCATED", "end: no end frame")
                end = "eof"
                break
            start = pos
            total = [0] + held
            try:
                it, pos = _stream_item(b, pos, lim, opts, cm, None, None, 0, total)
            except _EndFrame:
                end = "end_frame"
                break
            held = total[1:]
            items.append(it)
            offsets.append(start)
        return "OK", {"items": items, "frame_offsets": offsets + [pos], "end": end}, len(items)
    except Fail as e:
        return e.status, e.where, len(items)


# ================================================================ files (file-container.md) ===
FILE_MAGIC = b"HRRYFILE"
PAGE = 4096


def _up(v, a):
    return -(-v // a) * a


def decode_file(data, options=None):
    """(status, decoded map or where)."""
    try:
        return "OK", _file(bytes(data), _limits(options), options)
    except Fail as e:
        return e.status, e.where


def _file(b, lim, opts):
    # 1.
    if len(b) < 64:
        fail("TRUNCATED", "fewer than 64 bytes")
    # 2. the header in offset order
    if b[0:8] != FILE_MAGIC:
        fail("BAD_MAGIC", "header.magic")
    vmaj, vmin = _u(b, 8, 2), _u(b, 10, 2)
    if vmaj != 1:
        fail("VERSION", "header.version_major")
    _zero(b[12:16], "header.reserved")
    io, il = _u(b, 16, 8), _u(b, 24, 8)
    ko, kl = _u(b, 32, 8), _u(b, 40, 8)
    do, dl = _u(b, 48, 8), _u(b, 56, 8)
    if io != 64:
        fail("OFFSET", "header.index_offset")
    if il < 8 or il % 8:
        fail("LENGTH", "header.index_length")
    iend = _ck(io + il, "header.index_length: index end")
    if kl == 0:
        if ko != 0:
            fail("OFFSET", "header.kv_offset without a section")
        meta_end = iend
    else:
        if ko != iend:
            fail("OFFSET", "header.kv_offset")
        if kl < 8 or kl % 8:
            fail("LENGTH", "header.kv_length")
        if kl > lim["max_kv_bytes"]:
            fail("LIMIT", "header.kv_length > max_kv_bytes")
        meta_end = _ck(ko + kl, "header.kv_length: kv end")
    if meta_end + PAGE - 1 > U64_MAX:
        fail("OVERFLOW", "header.data_offset")
    if do != _up(meta_end, PAGE):
        fail("OFFSET", "header.data_offset")
    if dl % 64:
        fail("LENGTH", "header.data_length")
    fend = _ck(do + dl, "header: data_offset + data_length")
    # 3.
    if len(b) < fend:
        fail("TRUNCATED", "file shorter than data_offset + data_length")
    if len(b) > fend:
        fail("LENGTH", "bytes after data_offset + data_length")
    # 4.
    _zero(b[meta_end:do], "padding before data_offset")
    # 5. the index
    c = _Cursor(b, io, iend, "LENGTH", "index")
    count = _u(c.take(8, ".entry_count"), 0, 8)
    if count > lim["max_file_tensors"]:
        fail("LIMIT", "index.entry_count > max_file_tensors")
    if count > (il - 8) // 56:
        fail("LENGTH", "index.entry_count exceeds index_length")
    entries, trees = [], []
    stack = []  # open composites: [name, member_count, next member, depth, entry]
    total = [0]
    end = 0  # end of the previous buffer (data-relative)

    def finish(node):
        # an item is complete: attach to its parent, close parents that are now complete
        while stack:
            top = stack[-1]
            top[4]["members"].append(node)
            top[2] += 1
            if top[2] < top[1]:
                return
            stack.pop()
            node = top[4]
        trees.append(node)

    for i in range(count):
        w = f"index[{i}]"
        h = c.take(8, f"[{i}] header")
        nlen, kind = _u(h, 0, 4), h[4]
        if nlen == 0:
            fail("CONSTRAINT", f"{w}.name_length 0")
        if nlen > lim["max_name_bytes"]:
            fail("LIMIT", f"{w}.name_length")
        _frame_kind(kind, f"{w}.kind")
        _zero(h[5:8], f"{w}.reserved")
        nb = c.take(nlen, f"[{i}].name")
        name = _name_ok(nb)
        if name is None:
            fail("CONSTRAINT", f"{w}.name is not a name")
        _zero(c.take(pad8(nlen) - nlen, f"[{i}].name padding"), f"{w}.name padding")
        parent = stack[-1] if stack else None
        if parent is not None and name != f"{parent[0]}.{parent[2]}":
            fail("CONSTRAINT", f"{w}.name: member {parent[2]} of {parent[0]!r} must be "
                               f"{parent[0]}.{parent[2]}")
        status, d = decode_descriptor(b[c.pos:iend], opts)
        if status == "TRUNCATED":
            status = "LENGTH"
        if status != "OK":
            fail(status, f"{w}/descriptor: {d}")
        c.pos += d["encoded_len"]
        is_comp = d["layout"]["tag"] == COMPOSITE
        if (kind == 0x02) != is_comp:
            fail("CONSTRAINT", f"{w}.kind vs layout")
        if d["device"] != "cpu" or d["memory_class"] != "standard":
            fail("COMBINATION", f"{w}: device/memory class in a file")
        for j, bf in enumerate(d["buffers"]):
            if bf["sync_mode"] != "producer_synced":
                fail("COMBINATION", f"{w}.buffers[{j}].sync_mode in a file")
        if is_comp:
            depth = len(stack) + 1
            if depth > lim["max_composite_depth"]:
                fail("LIMIT", f"{w}: composite depth {depth}")
            if not stack:
                total[0] = 0
            total[0] += d["layout"]["member_count"]
            if total[0] > lim["max_composite_members"]:
                fail("LIMIT", f"{w}: member total {total[0]}")
        ob = c.take(8 * len(d["buffers"]), f"[{i}].buffer offsets")
        bl = []
        for j, bf in enumerate(d["buffers"]):
            o, s, a = _u(ob, 8 * j, 8), bf["size"], bf["alignment"]
            bw = f"{w}.buffers[{j}]"
            if o < end:
                fail("OVERLAP", bw)
            if o % a:
                fail("OFFSET", f"{bw}: misaligned")
            if o != _up(end, max(64, a)):
                fail("OFFSET", f"{bw}: not at its canonical offset")
            oe = _ck(o + s, f"{bw}: offset + size")
            if oe > dl:
                fail("OFFSET", f"{bw}: past data_length")
            _zero(b[do + end:do + o], f"{bw}: gap before it")
            bl.append({"offset": o, "size": s, "sha256": hashlib.sha256(b[do + o:do + oe]).digest()})
            end = oe
        e = {"name": name, "kind": "composite" if is_comp else "tensor",
             "member_of": parent[0] if parent else None, "descriptor": d, "buffers": bl}
        entries.append(e)
        node = {"d": d, "members": [], "where": w}
        if is_comp:
            stack.append([name, d["layout"]["member_count"], 0, len(stack) + 1, node])
        else:
            finish(node)
    # 6.
    if c.left:
        fail("LENGTH", f"index: {c.left} bytes after the last entry")
    if stack:
        fail("CONSTRAINT", f"index ends inside composite {stack[-1][0]!r}")
    if dl != _up(end, 64):
        fail("LENGTH", "header.data_length != end of the last buffer rounded up to 64")
    _zero(b[do + end:do + dl], "data padding after the last buffer")
    # 7.
    seen = set()
    for i, e in enumerate(entries):
        if e["name"] in seen:
            fail("DUPLICATE", f"index[{i}].name")
        seen.add(e["name"])
    # 8.
    kv = None
    if kl:
        kv = _kv(b, ko, ko + kl, lim, "LENGTH")
        if not kv:
            fail("CONSTRAINT", "kv: a present section with no entries")
    # 9.
    for t in trees:
        _tree(t, None, None, 0, [0], lim)
    return {
        "version": [vmaj, vmin],
        "data_offset": do,
        "data_length": dl,
        "entries": entries,
        "top_level": [e["name"] for e in entries if e["member_of"] is None],
        "kv": kv,
    }


def _tree(node, parent, idx, depth, total, lim):
    """The composite validator (composite.md § Validation order) over an item tree."""
    d, w = node["d"], node["where"]
    if parent is None:
        if d["role"] is not None:
            fail("CONSTRAINT", f"{w}: role section on a top-level item")
    else:
        _member_rules(parent, idx, d, w)
    if d["layout"]["tag"] != COMPOSITE:
        return
    _head_rules(d, depth + 1, total, lim, w)
    if len(node["members"]) != d["layout"]["member_count"]:
        fail("CONSTRAINT", f"{w}: member count")
    for i, m in enumerate(node["members"]):
        _tree(m, d, i, depth + 1, total, lim)
    if d["layout"]["rule"] == "partition":
        _grid(d, [m["d"] for m in node["members"]], w)
