"""A second, deliberately plain decoder + validator of Hurray 1.0, written from docs/spec/.

The generator runs every vector through it: a valid vector must decode to OK and to the same
`decoded` map the builders recorded; an invalid one must stop with exactly the status the
manifest names. It follows descriptor.md § Decoding order step by step and then the three
validation tiers of buffer-protocol.md in the order of their table (3, 1, 2). It is a
self-check of the corpus, not a product: no speed, no API.
"""
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
