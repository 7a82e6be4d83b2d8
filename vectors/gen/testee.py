#!/usr/bin/env python3
"""The generator's own decoder (oracle.py) as a testee of the conformance runner.

    hurray-conformance --vectors vectors --testee "python3 vectors/gen/testee.py"

Speaks the testee protocol (docs/conformance/testee-protocol.md): framed CBOR requests on
stdin, one framed answer each on stdout. Every answer comes from the generator's modules
alone, a second implementation of Hurray 1.0 written from docs/spec/ that shares no code with
the C library:

  status, decoded   oracle.decode_descriptor / decode_quantization / decode_kv / decode_file /
                    decode_stream, which already speak the manifest's "decoded" form;
  encoded           the canonical re-encoding of those decoded values by encoder.py and
                    containers.py: the decoded map back into the generator's model (Desc,
                    Tensor, Comp, KV model), then its encoder. File and stream buffer bytes
                    are taken from the input where the decoded offsets (file) or the frame
                    layout (stream.md § Frame) put them;
  again, end        the oracle decodes a whole stream as a function of its bytes, so a further
                    read after the end or a failure reports the same status and end state by
                    construction: the decoded map's "end" ("end_frame" or "eof") at the end,
                    null after a failure (stream.md HR-STREAM-13). A stream that ended with
                    its end frame is re-encoded finished (with the end frame), one that ended
                    at its end of input unfinished (HR-STREAM-10).

Standard library and cbor2 only, like the rest of the generator.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep vectors/gen/ free of __pycache__

import cbor2  # noqa: E402

import containers  # noqa: E402
import oracle  # noqa: E402
from encoder import Buf, Desc, encode, encode_quant  # noqa: E402
from tables import (COMB, COMPOSITE, DT, ROLE, RULE, SCH, SYNC, layout_kind,  # noqa: E402
                    pad8)

PROTOCOL = 2
NAME = "hurray-vectors-gen oracle"
VERSION = "1"
FRAME_MAX = 1 << 30


# ---------------------------------------------------------------- decoded map -> model ---
def quant_model(m):
    """A decoded quantization map back into the encoder's payload fields."""
    s = SCH[m["scheme"]]
    q = {"scheme": s}
    if s == 0x01:
        q["scale"] = m["scale"]["f64"]
        q["zero_point"] = m["zero_point"]
    elif s in (0x02, 0x03):
        q["axis"] = m["axis"]
        q["scale_idx"] = m["scale_buffer_index"]
        zp = m["zero_point_buffer_index"]
        q["zp_idx"] = 0xFF if zp is None else zp
        q["scale_dtype"] = DT[m["scale_dtype"]]
        zd = m["zero_point_dtype"]
        q["zp_dtype"] = 0 if zd is None else DT[zd]
        if s == 0x03:
            q["block_size"] = m["block_size"]
    elif s == 0x04:
        q["flags"] = 1 if m["double_quant"] else 0
        q["block_size"] = m["block_size"]
        q["absmax_idx"] = m["absmax_buffer_index"]
        nested, qmap = m["nested_absmax_buffer_index"], m["quant_map_buffer_index"]
        q["nested_idx"] = 0xFF if nested is None else nested
        q["qmap_idx"] = 0xFF if qmap is None else qmap
        q["nested_block_size"] = m["nested_block_size"]
        q["nested_offset"] = m["nested_offset"]["f32"]
    else:
        q["axis"] = m["axis"]
        q["scale_idx"] = m["scale_buffer_index"]
        q["block_size"] = m["block_size"]
        if s == 0x06:
            q["tensor_scale"] = m["tensor_scale"]["f32"]
    return q


def layout_params(lay):
    tag, kind = lay["tag"], layout_kind(lay["tag"])
    if kind == "private":
        return {"extension_layout_id": lay["extension_layout_id"],
                "extension_data": lay["extension_data"]}
    if kind == "reserved":
        return {"params": lay["params"]}
    p = {k: v for k, v in lay.items() if k not in ("tag", "name")}
    if tag == COMPOSITE:
        p["rule"] = RULE[lay["rule"]]
        p["combine"] = 0 if lay["combine"] is None else COMB[lay["combine"]]
    return p


def desc_model(m):
    """A decoded descriptor map back into a Desc whose encoding is canonical."""
    st = m["statistics"]
    stats = None
    if st is not None:
        stats = {"flags": (1 if st["has_min_max"] else 0) | (2 if st["has_nan_count"] else 0),
                 "min": st["min"]["f64"] if st["min"] else 0,
                 "max": st["max"]["f64"] if st["max"] else 0,
                 "nan_count": st["nan_count"] or 0}
    sh = m["shard"]
    shard = None if sh is None else {"index": sh["shard_index"], "count": sh["shard_count"],
                                     "global_shape": sh["global_shape"],
                                     "global_offset": sh["global_offset"]}
    return Desc(
        m["dtype_tag"], m["shape"], layout=m["layout"]["tag"], params=layout_params(m["layout"]),
        buffers=[Buf(b["size"], b["alignment"].bit_length() - 1, SYNC[b["sync_mode"]])
                 for b in m["buffers"]],
        byte_offset=m["byte_offset"], device=m["device_tag"], memclass=m["memory_class_tag"],
        version=tuple(m["version"]),
        quant=None if m["quantization"] is None else quant_model(m["quantization"]),
        stats=stats, shard=shard, role=None if m["role"] is None else ROLE[m["role"]],
        unknown=[(u["type"], u["flags"], u["data"]) for u in m["unknown_sections"]])


def file_items(data, decoded):
    """[(name, item)] of the top level, members attached, buffer bytes from the data region."""
    base = decoded["data_offset"]
    entries = iter(decoded["entries"])

    def item(e):
        d = desc_model(e["descriptor"])
        if e["kind"] == "composite":
            return containers.Comp(d, [item(next(entries))
                                       for _ in range(e["descriptor"]["layout"]["member_count"])])
        return containers.Tensor(d, [data[base + b["offset"]:base + b["offset"] + b["size"]]
                                     for b in e["buffers"]])

    named = []
    for e in entries:
        named.append((e["name"], item(e)))
    return named


def stream_items(data, decoded):
    """The items as models, buffer bytes where stream.md § Frame puts them."""
    def item(pos, it):
        d = it["descriptor"]
        pos += 8 + d["encoded_len"]  # frame header, descriptor
        if it["kind"] == "composite":
            members = []
            for m in it["members"]:
                mm, pos = item(pos, m)
                members.append(mm)
            return containers.Comp(desc_model(d), members), pos
        bufs = []
        for b in it["buffers"]:
            bufs.append(data[pos:pos + b["size"]])
            pos += pad8(b["size"])
        return containers.Tensor(desc_model(d), bufs), pos

    def top(start, it):
        """An annotated item (stream.md HR-STREAM-17) begins with its annotation frame."""
        name, md = it.get("name"), it.get("metadata")
        if name is None and md is None:
            return item(start, it)[0]
        model = containers.kv_model(md) if md else None
        nb = name.encode("utf-8") if name is not None else b""
        kvb = containers.kv_encode(model) if model else b""
        return containers.Ann(item(start + 24 + pad8(len(nb)) + len(kvb), it)[0], name, model)

    return [top(start, it) for start, it in zip(decoded["frame_offsets"], decoded["items"])]


def reencode(kind, data, decoded):
    if kind == "descriptor":
        return encode(desc_model(decoded))
    if kind == "quantization":
        return encode_quant(quant_model(decoded))
    if kind == "kv":
        return containers.kv_encode(containers.kv_model(decoded["entries"]))
    if kind == "file":
        kv = decoded["kv"]
        return containers.file_encode(file_items(data, decoded),
                                      containers.kv_model(kv) if kv else None)[0]
    return containers.stream_encode(stream_items(data, decoded),
                                    end=decoded["end"] == "end_frame")[0]


# ---------------------------------------------------------------- requests ---
def run(kind, data, options):
    """(status, decoded or where, items) of the oracle for one input."""
    if kind == "descriptor":
        status, got = oracle.decode_descriptor(data, options)
        return status, got, 0
    if kind == "quantization":
        status, got = oracle.decode_quantization(data)
        return status, got, 0
    if kind == "kv":
        status, got = oracle.decode_kv(data, options)
        return status, got, 0
    if kind == "file":
        status, got = oracle.decode_file(data, options)
        return status, got, 0
    return oracle.decode_stream(data, options)


def options_of(req):
    opts = dict(req["limits"])
    if req["kind"] == "stream":
        opts["cross_machine"] = bool(req.get("cross_machine"))
        opts["require_end_frame"] = bool(req.get("require_end_frame"))
    return opts


def end_of(status, got):
    """The reader's end state: the decoded map's "end", or null after a failure."""
    return got["end"] if status == "OK" else None


def answer(req):
    op = req.get("op")
    if op == "hello":
        return {"protocol": PROTOCOL, "name": NAME, "version": VERSION}
    if op not in ("decode", "sweep"):
        return {"skip": "unknown op"}
    kind, data, opts = req["kind"], bytes(req["input"]), options_of(req)
    if op == "sweep":
        statuses, counts, ends = [], [], []
        mv = memoryview(data)
        for k in req["lengths"]:
            status, got, n = run(kind, mv[:k], opts)
            statuses.append(status)
            counts.append(n)
            if kind == "stream":
                ends.append(end_of(status, got))
        out = {"statuses": statuses}
        if kind == "stream":
            out["items"] = counts
            out["ends"] = ends
        return out
    status, got, n = run(kind, data, opts)
    out = {"status": status}
    if status == "OK":
        out["decoded"] = got
        out["encoded"] = reencode(kind, data, got)
    else:
        out["message"] = str(got)
    if kind == "stream":
        out["items"] = n
        out["again"] = status
        out["end"] = end_of(status, got)
    return out


def read_exact(f, n):
    b = f.read(n)
    return b if b is not None else b""


def main():
    rd, wr = sys.stdin.buffer, sys.stdout.buffer
    while True:
        hdr = read_exact(rd, 4)
        if not hdr:
            return 0
        if len(hdr) < 4:
            return 1
        (n,) = struct.unpack("<I", hdr)
        if not 0 < n < FRAME_MAX:
            return 1
        body = read_exact(rd, n)
        if len(body) < n:
            return 1
        body = cbor2.dumps(answer(cbor2.loads(body)))
        wr.write(struct.pack("<I", len(body)) + body)
        wr.flush()


if __name__ == "__main__":
    sys.exit(main())
