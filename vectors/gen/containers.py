"""KV sections, HRRYFILE images and streams: the generator's models and encoders, written from
docs/spec/kv.md, file-container.md and stream.md (and nothing else).

As in encoder.py there are two levels: a *model* (a KV map, a list of named items, a list of
stream items) and a *raw record* (a list of wire records with every derived field — counts,
lengths, reserved bytes, padding, offsets — overridable), so that mutators can break exactly one
rule. `serialize_*` writes the bytes with `struct`, little-endian, and returns the byte
positions of the parts (for byte-level mutations).
"""
import hashlib

from encoder import encode, i64, u8, u32, u64
from tables import COMPOSITE, pad8

# ================================================================ KV (kv.md) ===
KV_TAGS = {"bool": 0x01, "int64": 0x02, "uint64": 0x03, "float64": 0x04, "string": 0x05,
           "bytes": 0x06, "list": 0x07}


def kv_value(v):
    """(tag, payload bytes) of a model value. A value is a tuple:
    ("bool", b) ("int64", n) ("uint64", n) ("float64", bits) ("string", str|bytes)
    ("bytes", b) ("list", [values]) or, for mutations, ("raw", tag, payload)."""
    t = v[0]
    if t == "raw":
        return v[1], v[2]
    if t == "bool":
        return KV_TAGS[t], u8(int(v[1])) + bytes(7)
    if t == "int64":
        return KV_TAGS[t], i64(v[1])
    if t in ("uint64", "float64"):
        return KV_TAGS[t], u64(v[1])
    if t in ("string", "bytes"):
        b = v[1].encode("utf-8") if isinstance(v[1], str) else bytes(v[1])
        return KV_TAGS[t], u64(len(b)) + b + bytes(pad8(len(b)) - len(b))
    if t == "list":
        out = u64(len(v[1]))
        for e in v[1]:
            tag, p = kv_value(e)
            out += u8(tag) + bytes(7) + p
        return KV_TAGS[t], out
    raise ValueError(t)


def _kb(k):
    return k.encode("utf-8") if isinstance(k, str) else bytes(k)


def kv_raw(entries, sort=True):
    """Raw entry records of a model map: entries is a dict or a list of (key, value)."""
    items = list(entries.items()) if isinstance(entries, dict) else list(entries)
    if sort:
        items.sort(key=lambda kv: _kb(kv[0]))
    out = []
    for k, v in items:
        tag, payload = kv_value(v)
        out.append({"key": _kb(k), "klen": None, "tag": tag, "res": bytes(3), "kpad": None,
                    "payload": payload})
    return out


def kv_serialize(raw, count=None):
    out = bytearray(u64(len(raw) if count is None else count))
    for e in raw:
        k = e["key"]
        out += u32(len(k) if e["klen"] is None else e["klen"]) + u8(e["tag"]) + e["res"]
        out += k + (bytes(pad8(len(k)) - len(k)) if e["kpad"] is None else e["kpad"])
        out += e["payload"]
    return bytes(out)


def kv_encode(entries):
    """The canonical section of a model map (HR-KV-10)."""
    return kv_serialize(kv_raw(entries))


def kv_decoded_value(v):
    t = v[0]
    if t == "bool":
        return {"bool": bool(v[1])}
    if t in ("string",):
        return {"string": v[1] if isinstance(v[1], str) else bytes(v[1]).decode("utf-8")}
    if t == "bytes":
        return {"bytes": bytes(v[1])}
    if t == "list":
        return {"list": [kv_decoded_value(e) for e in v[1]]}
    return {t: v[1]}


def kv_model(decoded):
    """The model map of a decoded KV map (the manifest's form): the inverse of kv_decoded."""
    def val(v):
        (t, x), = v.items()
        return ("list", [val(e) for e in x]) if t == "list" else (t, x)
    return {k: val(v) for k, v in decoded.items()}


def kv_decoded(entries):
    items = entries.items() if isinstance(entries, dict) else entries
    return {(k if isinstance(k, str) else bytes(k).decode("utf-8")): kv_decoded_value(v)
            for k, v in items}


# ================================================================ items ===
def pattern(size, seed):
    """Deterministic buffer contents (arbitrary bytes; readers do not interpret them)."""
    return bytes(((i * 31 + seed * 17 + 7) >> 1) & 0xFF for i in range(size))


class Tensor:
    """A tensor item: a descriptor (a filled Desc) and one bytes object per buffer."""

    def __init__(self, desc, data=None, seed=0):
        self.desc = desc
        if data is None:
            data = [pattern(b.size, seed + i) for i, b in enumerate(desc.buffers)]
        self.data = list(data)

    @property
    def is_composite(self):
        return False


class Comp:
    """A composite item: a head descriptor and its member items."""

    def __init__(self, desc, members):
        self.desc = desc
        self.members = list(members)

    @property
    def is_composite(self):
        return True


def _sha(b):
    return hashlib.sha256(bytes(b)).digest()


def descriptor_decoded(desc):
    from decoded import descriptor_map
    body = encode(desc)
    return descriptor_map(desc, len(body))


# ================================================================ stream (stream.md) ===
FRAME_MAGIC = b"HRSF"
# stream.md § End frame (HR-STREAM-12): the 8-byte header alone, kind 0x03.
END_FRAME = FRAME_MAGIC + bytes([0x03, 0, 0, 0])
# stream.md § Annotation frame (HR-STREAM-17): kind 0x04, a name and/or a KV map for the item
# after it (revision 3).
ANN_KIND = 0x04


class Ann:
    """A top-level stream item with a name and/or metadata (a model map, as kv_encode takes):
    written as an annotation frame, then the item's frames (HR-STREAM-17, HR-STREAM-18).
    `body` overrides the annotation frame's bytes 8.. (for mutations)."""

    def __init__(self, item, name=None, metadata=None, body=None):
        self.item, self.name, self.metadata, self.body = item, name, metadata, body

    def __getattr__(self, attr):  # the item's desc, data, members, is_composite
        return getattr(self.item, attr)


def annotation_body(name=None, metadata=None, name_len=None, res=bytes(4), kv_len=None,
                    name_pad=None, kv=None):
    """Bytes 8.. of an annotation frame: name_length, reserved, kv_length, the name and its
    padding, the canonical KV section (each field overridable)."""
    nb = b"" if name is None else (name.encode("utf-8") if isinstance(name, str) else bytes(name))
    kvb = kv if kv is not None else (kv_encode(metadata) if metadata else b"")
    pad = bytes(pad8(len(nb)) - len(nb)) if name_pad is None else name_pad
    return (u32(len(nb) if name_len is None else name_len) + res +
            u64(len(kvb) if kv_len is None else kv_len) + nb + pad + kvb)


def stream_frames(items):
    """Raw frame records of a list of items (pre-order); each record remembers which top-level
    item it belongs to."""
    frames = []

    def walk(it, top):
        fr = {"magic": FRAME_MAGIC, "kind": 0x02 if it.is_composite else 0x01, "res": bytes(3),
              "desc": encode(it.desc), "data": [] if it.is_composite else list(it.data),
              "pads": None, "top": top}
        frames.append(fr)
        if it.is_composite:
            for m in it.members:
                walk(m, top)

    for t, it in enumerate(items):
        if isinstance(it, Ann):
            body = it.body if it.body is not None else annotation_body(it.name, it.metadata)
            frames.append({"magic": FRAME_MAGIC, "kind": ANN_KIND, "res": bytes(3), "ann": body,
                           "top": t})
            it = it.item
        walk(it, t)
    return frames


def stream_serialize(frames):
    """Bytes and positions: frame_start[i], desc_start[i], data_start[i][j], pad_start[i][j]."""
    out = bytearray()
    info = {"frame_start": [], "desc_start": [], "data_start": [], "pad_start": [], "item_start": []}
    last_top = None
    for fr in frames:
        info["frame_start"].append(len(out))
        if fr.get("top") != last_top:
            info["item_start"].append(len(out))
            last_top = fr.get("top")
        out += fr["magic"] + u8(fr["kind"]) + fr["res"]
        if "ann" in fr:  # an annotation frame: its body, no descriptor or buffers
            info["desc_start"].append(None)
            out += fr["ann"]
            info["data_start"].append([])
            info["pad_start"].append([])
            continue
        info["desc_start"].append(len(out))
        out += fr["desc"]
        ds, ps = [], []
        for j, d in enumerate(fr["data"]):
            ds.append(len(out))
            out += d
            ps.append(len(out))
            if fr["pads"] is not None and fr["pads"][j] is not None:
                out += fr["pads"][j]
            else:
                out += bytes(pad8(len(d)) - len(d))
        info["data_start"].append(ds)
        info["pad_start"].append(ps)
    info["size"] = len(out)
    return bytes(out), info


def stream_encode(items, end=False):
    """The frames of `items`; with end=True, as a finished writer leaves them: followed by
    the end frame (stream.md HR-STREAM-10, HR-STREAM-12). info["items_end"] is where the
    items end (the end frame's offset)."""
    data, info = stream_serialize(stream_frames(items))
    info["items_end"] = len(data)
    if end:
        data += END_FRAME
        info["size"] = len(data)
    return data, info


def stream_item_decoded(it):
    if isinstance(it, Ann):  # schema 5: "name" and "metadata" only when the item has them
        d = stream_item_decoded(it.item)
        if it.name is not None:
            d["name"] = it.name
        if it.metadata:
            d["metadata"] = kv_decoded(it.metadata)
        return d
    d = {"kind": "composite" if it.is_composite else "tensor", "descriptor": descriptor_decoded(it.desc)}
    if it.is_composite:
        d["members"] = [stream_item_decoded(m) for m in it.members]
    else:
        d["buffers"] = [{"size": len(b), "sha256": _sha(b)} for b in it.data]
    return d


def stream_decoded(items, end=False):
    """decoded map (vectors/SCHEMA.md): the items, the offsets where each starts and where
    they end, and the end state (stream.md HR-STREAM-13)."""
    _, info = stream_encode(items, end)
    return {"items": [stream_item_decoded(it) for it in items],
            "frame_offsets": list(info["item_start"]) + [info["items_end"]],
            "end": "end_frame" if end else "eof"}


# ================================================================ file (file-container.md) ===
FILE_MAGIC = b"HRRYFILE"
PAGE = 4096


def roundup(v, a):
    return -(-v // a) * a


def file_entries(named):
    """Flat raw index entries of [(name, item)], composites followed by their generated members
    ({head}.{index}, pre-order: HR-FILE-3)."""
    out = []

    def walk(name, it, parent):
        e = {"name": _kb(name), "name_length": None, "kind": 0x02 if it.is_composite else 0x01,
             "res": bytes(3), "npad": None, "desc": encode(it.desc),
             "aligns": [b.align for b in it.desc.buffers],
             "data": [] if it.is_composite else list(it.data),
             "offsets": None, "member_of": parent, "item": it}
        out.append(e)
        if it.is_composite:
            for i, m in enumerate(it.members):
                walk(f"{name}.{i}", m, name)

    for name, it in named:
        walk(name, it, None)
    return out


def file_raw(named, kv=None, kv_bytes=None):
    """A raw file record. kv: a model map (empty or None: no section); kv_bytes: the section
    bytes verbatim (overrides kv)."""
    if kv_bytes is None and kv:
        kv_bytes = kv_encode(kv)
    return {"magic": FILE_MAGIC, "vmaj": 1, "vmin": 0, "res": 0,
            "index_offset": None, "index_length": None, "kv_offset": None, "kv_length": None,
            "data_offset": None, "data_length": None, "entry_count": None,
            "entries": file_entries(named), "index_extra": b"", "kv": kv_bytes,
            "gap_fill": None, "trailing": b"", "truncate": None}


def _placements(entries):
    """Canonical buffer offsets (data-relative), in index order (HR-FILE-2 § Buffer placement)."""
    end = 0
    res = []
    for e in entries:
        offs = []
        for a, d in zip(e["aligns"], e["data"]):
            o = roundup(end, max(64, 1 << a))
            offs.append(o)
            end = o + len(d)
        res.append(offs)
    return res, end


def file_serialize(r):
    """Bytes and positions of a raw file record."""
    ents = r["entries"]
    canon, end = _placements(ents)
    offsets = [e["offsets"] if e["offsets"] is not None else canon[i] for i, e in enumerate(ents)]
    info = {"entry_start": [], "name_start": [], "desc_start": [], "offsets_start": [],
            "offsets": offsets, "canon_end": end}
    index = bytearray(u64(len(ents) if r["entry_count"] is None else r["entry_count"]))
    for e, offs in zip(ents, offsets):
        info["entry_start"].append(64 + len(index))
        n = e["name"]
        index += u32(len(n) if e["name_length"] is None else e["name_length"]) + u8(e["kind"]) + e["res"]
        info["name_start"].append(64 + len(index))
        index += n + (bytes(pad8(len(n)) - len(n)) if e["npad"] is None else e["npad"])
        info["desc_start"].append(64 + len(index))
        index += e["desc"]
        info["offsets_start"].append(64 + len(index))
        for o in offs:
            index += u64(o)
    index += r["index_extra"]
    ilen = len(index)
    index_length = ilen if r["index_length"] is None else r["index_length"]
    kvb = r["kv"] or b""
    meta_end = 64 + ilen + len(kvb)
    kv_off = (64 + ilen if kvb else 0) if r["kv_offset"] is None else r["kv_offset"]
    kv_len = len(kvb) if r["kv_length"] is None else r["kv_length"]
    data_offset = roundup(meta_end, PAGE) if r["data_offset"] is None else r["data_offset"]
    # the data region: every buffer at its (possibly overridden) offset
    top = 0
    for e, offs in zip(ents, offsets):
        for o, d in zip(offs, e["data"]):
            if o + len(d) < 1 << 32:  # an absurd offset (a mutation) places no bytes
                top = max(top, o + len(d))
    data = bytearray(roundup(top, 64))
    info["buf_abs"] = []
    for e, offs in zip(ents, offsets):
        row = []
        for o, d in zip(offs, e["data"]):
            if o + len(d) < 1 << 32:
                data[o:o + len(d)] = d
            row.append(None)
        info["buf_abs"].append(row)
    data_length = len(data) if r["data_length"] is None else r["data_length"]
    hdr = (r["magic"] + r["vmaj"].to_bytes(2, "little") + r["vmin"].to_bytes(2, "little")
           + u32(r["res"]) + u64(64 if r["index_offset"] is None else r["index_offset"])
           + u64(index_length) + u64(kv_off) + u64(kv_len) + u64(data_offset) + u64(data_length))
    out = bytearray(hdr) + index + kvb
    info["kv_start"] = 64 + ilen
    info["meta_end"] = len(out)
    gap = data_offset - len(out)
    out += bytes(max(0, gap)) if r["gap_fill"] is None else r["gap_fill"]
    info["data_offset"] = data_offset
    for i, (e, offs) in enumerate(zip(ents, offsets)):
        info["buf_abs"][i] = [data_offset + o for o in offs]
    out += data
    out += r["trailing"]
    if r["truncate"] is not None:
        out = out[: r["truncate"]]
    info["data_length"] = data_length
    return bytes(out), info


def file_encode(named, kv=None):
    return file_serialize(file_raw(named, kv))


def file_decoded(named, kv=None, version=(1, 0)):
    r = file_raw(named, kv)
    data, info = file_serialize(r)
    entries = []
    for e, offs in zip(r["entries"], info["offsets"]):
        it = e["item"]
        entries.append({
            "name": e["name"].decode("utf-8"),
            "kind": "composite" if it.is_composite else "tensor",
            "member_of": e["member_of"],
            "descriptor": descriptor_decoded(it.desc),
            "buffers": [{"offset": o, "size": len(d), "sha256": _sha(d)}
                        for o, d in zip(offs, e["data"])],
        })
    return {
        "version": [version[0], version[1]],
        "data_offset": info["data_offset"],
        "data_length": info["data_length"],
        "entries": entries,
        "top_level": [e["name"].decode("utf-8") for e in r["entries"] if e["member_of"] is None],
        "kv": kv_decoded(kv) if kv else None,
    }
