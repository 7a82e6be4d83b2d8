#!/usr/bin/env python3
"""A small hand-written corpus for developing and testing the harness itself.

Independent of vectors/gen: every byte here is written from docs/spec/ with `struct`, so the
harness can be exercised (and its schema checks tested) without the real corpus. The real
corpus is vectors/; this one only needs to cover each code path of the harness once: every
layout-parameter family the oracle map carries, every optional section, negative ints,
dynamic extents, trailing bytes, limit options, the three expectations and every kind of
manifest schema 2: descriptor, quantization, kv, file and stream (KV sections, HRRYFILE images
and frame streams written here from kv.md, file-container.md and stream.md, including their
worked examples, byte for byte).

    python3 harness/tests/make_test_corpus.py [OUTDIR]   (default: harness/tests/corpus)
"""
import hashlib
import os
import struct
import sys

import cbor2

DYN = None
DYN_WIRE = 0xFFFF_FFFF_FFFF_FFFF


def pad8(b):
    return b + bytes(-len(b) % 8)


def f64bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f32bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def section(stype, flags, payload):
    return struct.pack("<BBHI", stype, flags, 0, len(payload)) + pad8(payload)


def descriptor(dtype, shape, buffers, layout=0x01, params=b"", sections=(), device=0x01,
               memclass=0x01, byte_offset=0, minor=0):
    """buffers: [(size, align_log2, sync)]; sections: [bytes] already framed."""
    body = b"".join(struct.pack("<Q", DYN_WIRE if e is None else e) for e in shape)
    body += b"".join(struct.pack("<QBB6x", s, a, m) for (s, a, m) in buffers)
    body += struct.pack("<II", len(params), 0) + pad8(params)
    body += b"".join(sections)
    total = 32 + len(body)
    head = b"HRYD" + struct.pack("<BBHII", 1, minor, 0, total, 0)
    head += struct.pack("<BBBBBBBxQ", dtype, device, memclass, layout, len(shape), len(buffers),
                        len(sections), byte_offset)
    return head + body


def quant_per_tensor(scale, zp):
    return struct.pack("<B7xdq", 0x01, scale, zp)


def quant_nvfp4(axis, scale_idx, tensor_scale):
    return struct.pack("<BBBxIfI", 0x06, axis, scale_idx, 16, tensor_scale, 0)


def buf_maps(buffers):
    names = {1: "producer_synced", 2: "event", 3: "stream"}
    return [{"size": s, "alignment": 1 << a, "sync_mode": names[m]} for (s, a, m) in buffers]


def decoded(data_len, dtype, dtype_tag, shape, buffers, layout, device="cpu", device_tag=1,
            memclass="standard", memclass_tag=1, byte_offset=0, quantization=None,
            statistics=None, shard=None, role=None, unknown_sections=()):
    return {
        "encoded_len": data_len, "version": [1, 0], "dtype": dtype, "dtype_tag": dtype_tag,
        "device": device, "device_tag": device_tag, "memory_class": memclass,
        "memory_class_tag": memclass_tag, "shape": list(shape), "byte_offset": byte_offset,
        "buffers": buf_maps(buffers), "layout": layout, "quantization": quantization,
        "statistics": statistics, "shard": shard, "role": role,
        "unknown_sections": list(unknown_sections),
    }


VECTORS = []


def add(vid, kind, expect, data, *, error=None, decoded_map=None, roundtrip=None, options=None,
        i_outcomes=None, area="desc", refs=("docs/spec/descriptor.md",), description="",
        error_after_items=None):
    sub = {"valid": "valid", "invalid": "invalid", "implementation-defined": "impl"}[expect]
    v = {
        "id": vid, "kind": kind, "expect": expect, "path": f"{sub}/{area}/{vid}.hry",
        "size": len(data), "sha256": hashlib.sha256(data).digest(), "data": data,
        "roundtrip": expect == "valid" if roundtrip is None else roundtrip,
        "description": description or vid, "spec_refs": list(refs),
    }
    if error is not None:
        v["error"] = error
    if decoded_map is not None:
        v["decoded"] = decoded_map
    if options:
        v["options"] = options
    if i_outcomes is not None:
        v["i_outcomes"] = i_outcomes
    if error_after_items is not None:
        v["error_after_items"] = error_after_items
    VECTORS.append(v)


def build():
    # -- valid descriptors ---------------------------------------------------------------
    bufs = [(24, 6, 1)]
    d = descriptor(0x0C, [2, 3], bufs)  # descriptor.md § Worked example
    assert len(d) == 72
    trailing = bytes(range(256)) * 4  # ignored by the decoder (HR-DESC-1); multi-block sha256
    add("y_desc_f32_2x3_row_major", "descriptor", "valid", d + trailing,
        decoded_map=decoded(72, "float32", 0x0C, [2, 3], bufs, {"tag": 1, "name": "row_major"}),
        description="the worked example of descriptor.md, with 1024 trailing bytes")

    bufs = [(24, 6, 1)]
    d = descriptor(0x06, [2, 3], bufs, layout=0x03, params=struct.pack("<2q", 3, -1),
                   byte_offset=8)
    add("y_desc_int32_strided_negative", "descriptor", "valid", d,
        decoded_map=decoded(len(d), "int32", 0x06, [2, 3], bufs,
                            {"tag": 3, "name": "strided", "strides": [3, -1]}, byte_offset=8))

    bufs = [(64, 6, 2)]
    stats = section(0x02, 0, struct.pack("<B7xddQ", 3, -1.5, 2.0, 0))
    unknown = section(0x10, 0, b"hello")
    d = descriptor(0x0A, [DYN, 4], bufs, sections=[stats, unknown])
    add("y_desc_f16_dynamic_stats_unknown_section", "descriptor", "valid", d,
        decoded_map=decoded(len(d), "float16", 0x0A, [None, 4], bufs,
                            {"tag": 1, "name": "row_major"},
                            statistics={"has_min_max": True, "has_nan_count": True,
                                        "min": {"f64": f64bits(-1.5)},
                                        "max": {"f64": f64bits(2.0)}, "nan_count": 0},
                            unknown_sections=[{"type": 0x10, "flags": 0, "data": b"hello"}]))

    bufs = [(10, 0, 1), (0, 0, 3)]
    d = descriptor(0xF1, [5], bufs, layout=0xF0, params=struct.pack("<II", 7, 0) + b"\x01\x02\x03",
                   device=0xF3, memclass=0xF4)
    add("y_desc_private_everything", "descriptor", "valid", d,
        decoded_map=decoded(len(d), "extension", 0xF1, [5], bufs,
                            {"tag": 0xF0, "name": "extension", "extension_layout_id": 7,
                             "extension_data": b"\x01\x02\x03"},
                            device="private", device_tag=0xF3, memclass="private",
                            memclass_tag=0xF4))

    bufs = [(1, 0, 1)]
    d = descriptor(0x03, [1], bufs, layout=0x07, params=b"\xaa\xbb\xcc")
    add("y_desc_reserved_layout_carried", "descriptor", "valid", d,
        decoded_map=decoded(len(d), "uint8", 0x03, [1], bufs,
                            {"tag": 0x07, "name": "extension", "params": b"\xaa\xbb\xcc"}))

    bufs = [(4, 6, 1)]
    q = section(0x01, 1, quant_per_tensor(0.5, -3))
    d = descriptor(0x02, [4], bufs, sections=[q])
    add("y_desc_int8_per_tensor_affine", "descriptor", "valid", d,
        decoded_map=decoded(len(d), "int8", 0x02, [4], bufs, {"tag": 1, "name": "row_major"},
                            quantization={"scheme": "per_tensor_affine",
                                          "scale": {"f64": f64bits(0.5)}, "zero_point": -3}))

    d = descriptor(0x0C, [4], [], layout=0x30, params=struct.pack("<BBHI", 0x02, 0x02, 0, 2))
    add("y_desc_composite_overlay_add", "descriptor", "valid", d,
        decoded_map=decoded(len(d), "float32", 0x0C, [4], [],
                            {"tag": 0x30, "name": "composite", "rule": "overlay",
                             "combine": "add", "member_count": 2}))

    bufs = [(8, 6, 1), (32, 6, 1)]
    d = descriptor(0x0C, [3, 3], bufs, layout=0x10, params=struct.pack("<Q", 2))
    add("y_desc_coo_nnz2", "descriptor", "valid", d,
        decoded_map=decoded(len(d), "float32", 0x0C, [3, 3], bufs,
                            {"tag": 0x10, "name": "coo", "nnz": 2}))

    bufs = [(16, 6, 1)]
    shard = section(0x03, 0, struct.pack("<II2Q2Q", 1, 2, 4, 2, 2, 0))
    role = section(0x04, 1, struct.pack("<B7x", 0x02))
    d = descriptor(0x0C, [2, 2], bufs, sections=[shard, role])
    add("y_desc_shard_and_role", "descriptor", "valid", d,
        decoded_map=decoded(len(d), "float32", 0x0C, [2, 2], bufs,
                            {"tag": 1, "name": "row_major"},
                            shard={"shard_index": 1, "shard_count": 2, "global_shape": [4, 2],
                                   "global_offset": [2, 0]},
                            role="correction"))

    # -- invalid descriptors -------------------------------------------------------------
    base = descriptor(0x0C, [2, 3], [(24, 6, 1)])
    add("n_desc_bad_magic", "descriptor", "invalid", b"HRYX" + base[4:], error="BAD_MAGIC")
    add("n_desc_truncated_body", "descriptor", "invalid", base[:60], error="TRUNCATED")
    bad = bytearray(base)
    bad[23] = 1
    add("n_desc_reserved_byte_23", "descriptor", "invalid", bytes(bad), error="RESERVED_NONZERO")
    add("n_desc_rank_over_limit", "descriptor", "invalid", base, error="LIMIT",
        options={"max_rank": 1})
    small = descriptor(0x0C, [2, 3], [(23, 6, 1)])
    add("n_desc_buffer_too_small", "descriptor", "invalid", small, error="BUFFER_SIZE")

    # -- implementation-defined ----------------------------------------------------------
    add("i_desc_descriptor_limit_64", "descriptor", "implementation-defined", base,
        i_outcomes=["ok", "LIMIT"], options={"max_descriptor_bytes": 64})

    # -- standalone quantization ---------------------------------------------------------
    pt = quant_per_tensor(0.25, 7)
    add("y_quant_per_tensor", "quantization", "valid", pt, area="quant",
        refs=["docs/spec/quantization.md"],
        decoded_map={"scheme": "per_tensor_affine", "scale": {"f64": f64bits(0.25)},
                     "zero_point": 7})
    nv = quant_nvfp4(1, 1, 0.75)
    add("y_quant_nvfp4", "quantization", "valid", nv, area="quant",
        refs=["docs/spec/quantization.md"],
        decoded_map={"scheme": "nvfp4", "axis": 1, "scale_buffer_index": 1, "block_size": 16,
                     "tensor_scale": {"f32": f32bits(0.75)}})
    add("n_quant_short_payload", "quantization", "invalid", pt[:23], error="LENGTH",
        area="quant", refs=["docs/spec/quantization.md"])
    add("n_quant_zero_scale", "quantization", "invalid", quant_per_tensor(0.0, 0),
        error="CONSTRAINT", area="quant", refs=["docs/spec/quantization.md"])

    build_kv()
    build_file()
    build_stream()


# ---------------------------------------------------------------------------------- KV ---
# kv.md § Section layout / Payloads. A value is (tag_name, python value); the oracle map is
# {key: {tag_name: value}} (vectors/README.md § KV values).

KV_TAGS = {"bool": 1, "int64": 2, "uint64": 3, "float64": 4, "string": 5, "bytes": 6, "list": 7}


def kv_payload(t, x):
    if t == "bool":
        return struct.pack("<B7x", int(x))
    if t == "int64":
        return struct.pack("<q", x)
    if t in ("uint64", "float64"):  # float64 given as its bit pattern
        return struct.pack("<Q", x)
    if t in ("string", "bytes"):
        b = x.encode() if t == "string" else x
        return struct.pack("<Q", len(b)) + pad8(b)
    if t == "list":
        return struct.pack("<Q", len(x)) + b"".join(
            struct.pack("<B7x", KV_TAGS[et]) + kv_payload(et, ex) for (et, ex) in x)
    raise ValueError(t)


def kv_section(entries):
    """entries: {key: (type, value)}; written sorted by key bytes (HR-KV-7)."""
    out = struct.pack("<Q", len(entries))
    for key in sorted(entries, key=lambda k: k.encode()):
        t, x = entries[key]
        kb = key.encode()
        out += struct.pack("<IB3x", len(kb), KV_TAGS[t]) + pad8(kb) + kv_payload(t, x)
    return out


def kv_oracle_value(t, x):
    if t == "list":
        return {"list": [kv_oracle_value(et, ex) for (et, ex) in x]}
    return {t: x}


def kv_oracle(entries):
    return {k: kv_oracle_value(t, x) for k, (t, x) in entries.items()}


KV_REFS = ["docs/spec/kv.md"]


def build_kv():
    example = {"n": ("int64", 42), "tags": ("list", [("bool", True), ("string", "hi")])}
    sec = kv_section(example)
    assert len(sec) == 96  # kv.md § Worked example
    add("y_kv_worked_example", "kv", "valid", sec, area="kv", refs=KV_REFS,
        decoded_map={"entries": kv_oracle(example), "encoded_len": len(sec)})

    every = {
        "a": ("bool", False),
        "ab": ("uint64", 2**64 - 1),
        "b": ("int64", -2**63),
        "nan": ("float64", 0x7FF8_0000_0000_0001),  # a NaN payload, bit for bit
        "negzero": ("float64", 1 << 63),
        "s": ("string", "x\u0000y\u00e9"),
        "z": ("bytes", b""),
        "zz": ("list", [("list", []), ("uint64", 1), ("bytes", b"\x00\xff" * 5)]),
    }
    sec = kv_section(every)
    add("y_kv_every_type", "kv", "valid", sec, area="kv", refs=KV_REFS,
        decoded_map={"entries": kv_oracle(every), "encoded_len": len(sec)})

    big = {"blob": ("bytes", bytes(range(256)) * 80), "n": ("int64", 1)}  # 20 KiB: sampled sweep
    sec = kv_section(big)
    add("y_kv_big_sampled_sweep", "kv", "valid", sec, area="kv", refs=KV_REFS,
        decoded_map={"entries": kv_oracle(big), "encoded_len": len(sec)})

    ex = kv_section(example)
    bad = bytearray(ex)
    bad[0x40] = 2
    add("n_kv_bool_2", "kv", "invalid", bytes(bad), error="RANGE", area="kv", refs=KV_REFS)
    bad = bytearray(ex)
    bad[0x0C] = 8
    add("n_kv_reserved_tag", "kv", "invalid", bytes(bad), error="UNSUPPORTED", area="kv",
        refs=KV_REFS)
    swapped = ex[:8] + ex[0x20:] + ex[8:0x20]
    add("n_kv_entries_swapped", "kv", "invalid", swapped, error="SECTION_ORDER", area="kv",
        refs=KV_REFS)
    add("n_kv_cut", "kv", "invalid", ex[:0x50], error="TRUNCATED", area="kv", refs=KV_REFS)
    add("n_kv_trailing", "kv", "invalid", ex + bytes(8), error="LENGTH", area="kv", refs=KV_REFS)
    add("n_kv_entries_over_limit", "kv", "invalid", ex, error="LIMIT", area="kv", refs=KV_REFS,
        options={"max_kv_entries": 1})


# -------------------------------------------------------------------------- descriptors ---

F32 = 0x0C
SYNC = {"producer_synced": 1, "event": 2, "stream": 3}


def shard_section(index, count, gshape, goffset):
    r = len(gshape)
    return section(0x03, 0, struct.pack(f"<II{r}Q{r}Q", index, count, *gshape, *goffset))


def role_section(role):
    return section(0x04, 1, struct.pack("<B7x", role))


def head(shape, rule, combine, members):
    return descriptor(F32, shape, [], layout=0x30,
                      params=struct.pack("<BBHI", rule, combine, 0, members))


RULES = {1: "partition", 2: "overlay", 3: "group"}
COMBINES = {0: None, 1: "replace", 2: "add", 3: "max", 4: "min"}


def head_decoded(d, shape, rule, combine, members):
    return decoded(len(d), "float32", F32, shape, [],
                   {"tag": 0x30, "name": "composite", "rule": RULES[rule],
                    "combine": COMBINES[combine], "member_count": members})


def tensor(shape, data, shard=None, role=None, sync=1, minor=0):
    """A row-major float32 tensor (one buffer, 2^6) and its decoded map."""
    bufs = [(len(data), 6, sync)]
    secs = []
    if shard:
        secs.append(shard_section(*shard))
    if role:
        secs.append(role_section(role))
    d = descriptor(F32, shape, bufs, sections=secs, minor=minor)
    m = decoded(len(d), "float32", F32, shape, bufs, {"tag": 1, "name": "row_major"},
                shard=None if not shard else {"shard_index": shard[0], "shard_count": shard[1],
                                              "global_shape": list(shard[2]),
                                              "global_offset": list(shard[3])},
                role={None: None, 1: "base", 2: "correction"}[role])
    m["version"] = [1, minor]
    return d, m


def floats(*xs):
    return struct.pack(f"<{len(xs)}f", *xs)


# -------------------------------------------------------------------------------- files ---
# file-container.md § Header / Placement / Index / Buffer placement. An entry is
# (name, kind, descriptor bytes, [buffer bytes], descriptor map, member_of).

FILE_REFS = ["docs/spec/file-container.md"]


def round_up(x, a):
    return (x + a - 1) // a * a


def file_image(entries, kv=None, minor=0, align_log2=6):
    data, offsets, end = b"", [], 0
    for (_, _, _, bufs, _, _) in entries:
        offs = []
        for b in bufs:
            o = round_up(end, max(64, 1 << align_log2))
            data += bytes(o - len(data)) + b
            offs.append(o)
            end = o + len(b)
        offsets.append(offs)
    data_length = round_up(end, 64)
    data += bytes(data_length - len(data))
    index = struct.pack("<Q", len(entries))
    for (name, kind, desc, _, _, _), offs in zip(entries, offsets):
        nb = name.encode()
        index += struct.pack("<IB3x", len(nb), kind) + pad8(nb) + desc
        index += b"".join(struct.pack("<Q", o) for o in offs)
    kvb = kv_section(kv) if kv else b""
    kv_offset = 64 + len(index) if kvb else 0
    meta_end = 64 + len(index) + len(kvb)
    data_offset = round_up(meta_end, 4096)
    header = b"HRRYFILE" + struct.pack("<HHI", 1, minor, 0)
    header += struct.pack("<6Q", 64, len(index), kv_offset, len(kvb), data_offset, data_length)
    image = header + index + kvb
    image += bytes(data_offset - len(image)) + data
    oracle = {
        "version": [1, minor], "data_offset": data_offset, "data_length": data_length,
        "entries": [
            {"name": name, "kind": {1: "tensor", 2: "composite"}[kind], "member_of": parent,
             "descriptor": dmap,
             "buffers": [{"offset": o, "size": len(b), "sha256": hashlib.sha256(b).digest()}
                         for o, b in zip(offs, bufs)]}
            for (name, kind, _, bufs, dmap, parent), offs in zip(entries, offsets)],
        "top_level": [e[0] for e in entries if e[5] is None],
        "kv": kv_oracle(kv) if kv else None,
    }
    return image, oracle


def build_file():
    d, m = tensor([2, 3], floats(1, 2, 3, 4, 5, 6))
    w = [("w", 1, d, [floats(1, 2, 3, 4, 5, 6)], m, None)]
    image, oracle = file_image(w, kv={"a": ("int64", 1)})
    assert len(image) == 4160 and image[0x10:0x18] == struct.pack("<Q", 64)  # § Worked example
    add("y_file_worked_example", "file", "valid", image, area="file", refs=FILE_REFS,
        decoded_map=oracle)

    # a partition "p" of two rows, then a tensor "t"; no KV section
    hd = head([2, 3], 1, 0, 2)
    r0, m0 = tensor([1, 3], floats(1, 2, 3), shard=(0, 1, [2, 3], [0, 0]))
    r1, m1 = tensor([1, 3], floats(4, 5, 6), shard=(0, 1, [2, 3], [1, 0]))
    t, mt = tensor([2], floats(7, 8))
    ents = [("p", 2, hd, [], head_decoded(hd, [2, 3], 1, 0, 2), None),
            ("p.0", 1, r0, [floats(1, 2, 3)], m0, "p"),
            ("p.1", 1, r1, [floats(4, 5, 6)], m1, "p"),
            ("t", 1, t, [floats(7, 8)], mt, None)]
    image, oracle = file_image(ents)
    add("y_file_partition_and_tensor", "file", "valid", image, area="file", refs=FILE_REFS,
        decoded_map=oracle)

    vals = [float(i) for i in range(3000)]  # 12000 data bytes: a file over 8 KiB, sampled sweep
    bd, bm = tensor([3000], floats(*vals))
    image, oracle = file_image([("w", 1, d, [floats(1, 2, 3, 4, 5, 6)], m, None),
                                ("big", 1, bd, [floats(*vals)], bm, None)],
                               kv={"k": ("string", "v")})
    add("y_file_big_sampled_sweep", "file", "valid", image, area="file", refs=FILE_REFS,
        decoded_map=oracle)

    image1, oracle1 = file_image(w, kv={"a": ("int64", 1)}, minor=1)
    add("y_file_minor_1", "file", "valid", image1, area="file", refs=FILE_REFS,
        decoded_map=oracle1, roundtrip=False,
        description="version 1.1: read; a 1.0 writer writes minor 0")

    base, _ = file_image(w, kv={"a": ("int64", 1)})
    add("n_file_cut", "file", "invalid", base[:4100], error="TRUNCATED", area="file",
        refs=FILE_REFS)
    add("n_file_trailing_byte", "file", "invalid", base + b"\0", error="LENGTH", area="file",
        refs=FILE_REFS)
    add("n_file_bad_magic", "file", "invalid", b"HRRYFILF" + base[8:], error="BAD_MAGIC",
        area="file", refs=FILE_REFS)
    add("n_file_data_offset_8192", "file", "invalid",
        base[:0x30] + struct.pack("<Q", 8192) + base[0x38:], error="OFFSET", area="file",
        refs=FILE_REFS)
    bad = bytearray(base)
    bad[0x1018] = 1
    add("n_file_padding_nonzero", "file", "invalid", bytes(bad), error="RESERVED_NONZERO",
        area="file", refs=FILE_REFS)
    add("n_file_name_over_limit", "file", "invalid", image, error="LIMIT", area="file",
        refs=FILE_REFS, options={"max_name_bytes": 2})


# ------------------------------------------------------------------------------ streams ---
# stream.md § Frame: "HRSF", kind, 3 reserved, descriptor, each buffer + zero padding to 8.

STREAM_REFS = ["docs/spec/stream.md"]


def frame(kind, desc, bufs=()):
    return b"HRSF" + struct.pack("<B3x", kind) + desc + b"".join(pad8(b) for b in bufs)


def stream_tensor(shape, data, **kw):
    d, m = tensor(shape, data, **kw)
    return frame(1, d, [data]), {"kind": "tensor", "descriptor": m, "buffers": [
        {"size": len(data), "sha256": hashlib.sha256(data).digest()}]}


def stream_composite(shape, rule, combine, members):
    hd = head(shape, rule, combine, len(members))
    return (frame(2, hd) + b"".join(f for f, _ in members),
            {"kind": "composite", "descriptor": head_decoded(hd, shape, rule, combine, len(members)),
             "members": [m for _, m in members]})


def stream_vector(items):
    data, offsets = b"", [0]
    for f, _ in items:
        data += f
        offsets.append(len(data))
    return data, {"items": [m for _, m in items], "frame_offsets": offsets}


def build_stream():
    t0 = stream_tensor([2, 3], floats(1, 2, 3, 4, 5, 6))
    assert len(t0[0]) == 104  # stream.md § Worked example
    rows = [stream_tensor([1, 3], floats(1, 2, 3), shard=(0, 1, [2, 3], [0, 0])),
            stream_tensor([1, 3], floats(4, 5, 6), shard=(0, 1, [2, 3], [1, 0]))]
    part = stream_composite([2, 3], 1, 0, rows)
    assert len(part[0]) == 360  # stream.md § Worked example
    over = stream_composite([2, 3], 2, 2, [
        stream_tensor([2, 3], floats(1, 2, 3, 4, 5, 6), role=1),
        stream_tensor([1, 2], floats(10, 20), shard=(0, 1, [2, 3], [1, 1]), role=2)])
    odd = stream_tensor([5], bytes(range(20))[:20])  # 20 bytes: 4 bytes of padding

    data, oracle = stream_vector([t0])
    add("y_stream_one_tensor", "stream", "valid", data, area="stream", refs=STREAM_REFS,
        decoded_map=oracle)
    data, oracle = stream_vector([part, t0, over, odd])
    add("y_stream_mixed", "stream", "valid", data, area="stream", refs=STREAM_REFS,
        decoded_map=oracle)
    big = stream_tensor([2500], floats(*[float(i) for i in range(2500)]))
    data, oracle = stream_vector([t0, big, part, big])  # about 20 KiB: sampled sweep
    add("y_stream_big_sampled_sweep", "stream", "valid", data, area="stream", refs=STREAM_REFS,
        decoded_map=oracle)
    add("y_stream_empty", "stream", "valid", b"", area="stream", refs=STREAM_REFS,
        decoded_map={"items": [], "frame_offsets": [0]})
    ev = stream_tensor([2], floats(1, 2), sync=2)
    data, oracle = stream_vector([t0, ev])
    add("y_stream_event_sync_relayed", "stream", "valid", data, area="stream", refs=STREAM_REFS,
        decoded_map=oracle)

    add("n_stream_event_cross_machine", "stream", "invalid", data, error="COMBINATION",
        error_after_items=1, options={"cross_machine": True}, area="stream", refs=STREAM_REFS)
    whole, _ = stream_vector([t0, part])
    add("n_stream_cut_inside_composite", "stream", "invalid", whole[:104 + 216],
        error="TRUNCATED", error_after_items=1, area="stream", refs=STREAM_REFS)
    swapped = stream_composite([2, 3], 1, 0, [rows[1], rows[0]])
    data, _ = stream_vector([t0, t0, swapped])
    add("n_stream_partition_swapped", "stream", "invalid", data, error="CONSTRAINT",
        error_after_items=2, area="stream", refs=STREAM_REFS)
    bad = bytearray(t0[0])
    bad[4] = 2
    add("n_stream_kind_mismatch", "stream", "invalid", bytes(bad), error="CONSTRAINT",
        error_after_items=0, area="stream", refs=STREAM_REFS)
    bad = bytearray(odd[0])
    bad[-1] = 1
    add("n_stream_padding_nonzero", "stream", "invalid", t0[0] + bytes(bad),
        error="RESERVED_NONZERO", error_after_items=1, area="stream", refs=STREAM_REFS)


ERROR_CODES = ["OK", "TRUNCATED", "BAD_MAGIC", "VERSION", "RESERVED_NONZERO", "INVALID_TAG",
               "RESERVED_TAG", "LENGTH", "OVERFLOW", "LIMIT", "RANGE", "CONSTRAINT",
               "COMBINATION", "BUFFER_COUNT", "BUFFER_SIZE", "ALIGNMENT", "SECTION_ORDER",
               "INDEX", "DUPLICATE", "UNSUPPORTED", "ARGUMENT", "NOMEM", "IO", "INTERNAL",
               "OFFSET", "OVERLAP"]

DEFAULT_LIMITS = {
    "max_descriptor_bytes": 1 << 20, "max_rank": 64, "max_buffer_bytes": 1 << 34,
    "max_composite_depth": 16, "max_composite_members": 65536, "max_kv_entries": 65536,
    "max_kv_bytes": 64 << 20, "max_name_bytes": 1024, "max_file_tensors": 1 << 20,
    "max_alignment_slack": 1 << 20,
}


def manifest():
    vectors = []
    for tcid, v in enumerate(sorted(VECTORS, key=lambda v: v["id"]), start=1):
        m = {k: v[k] for k in v if k != "data"}
        m["tcid"] = tcid
        vectors.append(m)
    return {
        "format": "hurray-conformance", "schema_version": 2, "corpus_version": "0.0.2",
        "spec_version": ["1.0"],
        "generator": {"name": "harness/tests/make_test_corpus.py", "version": "2"},
        "error_codes": {name: i for i, name in enumerate(ERROR_CODES)},
        "default_limits": DEFAULT_LIMITS, "count": len(vectors), "vectors": vectors,
    }


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
    build()
    for v in VECTORS:
        path = os.path.join(out, v["path"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(v["data"])
    with open(os.path.join(out, "manifest.cbor"), "wb") as f:
        f.write(cbor2.dumps(manifest(), canonical=True))
    print(f"{len(VECTORS)} vectors in {out}")


if __name__ == "__main__":
    main()
