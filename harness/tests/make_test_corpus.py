#!/usr/bin/env python3
"""A small hand-written corpus for developing and testing the harness itself.

Independent of vectors/gen: every byte here is written from docs/spec/ with `struct`, so the
harness can be exercised (and its schema checks tested) without the real corpus. The real
corpus is vectors/; this one only needs to cover each code path of the harness once: every
layout-parameter family the oracle map carries, every optional section, negative ints,
dynamic extents, trailing bytes, limit options, the three expectations and both kinds.

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
        i_outcomes=None, area="desc", refs=("docs/spec/descriptor.md",), description=""):
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


ERROR_CODES = ["OK", "TRUNCATED", "BAD_MAGIC", "VERSION", "RESERVED_NONZERO", "INVALID_TAG",
               "RESERVED_TAG", "LENGTH", "OVERFLOW", "LIMIT", "RANGE", "CONSTRAINT",
               "COMBINATION", "BUFFER_COUNT", "BUFFER_SIZE", "ALIGNMENT", "SECTION_ORDER",
               "INDEX", "DUPLICATE", "UNSUPPORTED", "ARGUMENT", "NOMEM", "IO", "INTERNAL",
               "OFFSET", "OVERLAP"]

DEFAULT_LIMITS = {
    "max_descriptor_bytes": 1 << 20, "max_rank": 64, "max_buffer_bytes": 1 << 34,
    "max_composite_depth": 16, "max_composite_members": 65536, "max_kv_entries": 65536,
    "max_kv_bytes": 64 << 20, "max_name_bytes": 1024, "max_file_tensors": 1 << 20,
}


def manifest():
    vectors = []
    for tcid, v in enumerate(sorted(VECTORS, key=lambda v: v["id"]), start=1):
        m = {k: v[k] for k in v if k != "data"}
        m["tcid"] = tcid
        vectors.append(m)
    return {
        "format": "hurray-conformance", "schema_version": 1, "corpus_version": "0.0.1",
        "spec_version": ["1.0"],
        "generator": {"name": "harness/tests/make_test_corpus.py", "version": "1"},
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
