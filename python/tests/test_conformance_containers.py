"""python-conformance, container kinds: the corpus's "kv", "file" and "stream" vectors
through the binding's load_kv / load and StreamReader (test_conformance.py runs the
"descriptor" and "quantization" kinds; this file shares its readers and checkers).

Seed § Conformance and Validation: the binding decodes every vector to the logical values
the manifest states and re-encodes round-trippable ones byte for byte; invalid vectors raise
the class the one status table maps their error to (context file for kv and file, stream for
stream), with .code equal to the manifest's error.
"""
import hashlib
import struct

import pytest

import hurray
from test_conformance import _VECTORS, _options, _params, _read, check_descriptor

CONTEXT = {"kv": "file", "file": "file", "stream": "stream"}


# ---- KV values -------------------------------------------------------------------------------


def check_kv_value(got, exp):
    """exp is the manifest's typed value: {"bool": …}, {"int64": …}, {"uint64": …},
    {"float64": bits}, {"string": …}, {"bytes": …}, {"list": […]}."""
    (tag, value), = exp.items()
    if tag == "bool":
        assert type(got) is bool and got == value
    elif tag in ("int64", "uint64"):
        assert type(got) is int and got == value  # both integer tags read as int (HR-KV-4)
    elif tag == "float64":
        assert type(got) is float and struct.unpack("<Q", struct.pack("<d", got))[0] == value
    elif tag == "string":
        assert type(got) is str and got == value
    elif tag == "bytes":
        assert type(got) is bytes and got == bytes(value)
    elif tag == "list":
        assert type(got) is list and len(got) == len(value)
        for g, e in zip(got, value):
            check_kv_value(g, e)
    else:  # pragma: no cover - a manifest newer than this test
        pytest.fail(f"unknown KV tag {tag}")


def check_kv(got, exp):
    exp = exp or {}
    assert set(got) == set(exp)
    assert list(got) == sorted(got, key=lambda k: k.encode())  # canonical order (HR-KV-7)
    for key, value in exp.items():
        check_kv_value(got[key], value)


def has_uint64(exp):
    def walk(v):
        (tag, value), = v.items()
        return tag == "uint64" or (tag == "list" and any(walk(x) for x in value))

    return any(walk(v) for v in (exp or {}).values())


def python_kv(exp):
    """The manifest's typed map as the dict save(kv=...) takes (no uint64)."""
    def conv(v):
        (tag, value), = v.items()
        if tag == "float64":
            return struct.unpack("<d", struct.pack("<Q", value))[0]
        if tag == "list":
            return [conv(x) for x in value]
        if tag == "bytes":
            return bytes(value)
        return value

    return {k: conv(v) for k, v in (exp or {}).items()}


@_params(lambda v: v["kind"] == "kv" and v["expect"] == "valid")
def test_REQ_CONF_DECODE_CORPUS_kv(vector):
    got = hurray._hurray._kv_decode(_read(vector), **_options(vector))
    check_kv(got, vector["decoded"]["entries"])


# ---- items ------------------------------------------------------------------------------------


def check_buffers(t, exp_buffers):
    assert t.buffer_count == len(exp_buffers)
    readable = t.device.kind == "cpu" and t.sync_mode == "producer_synced"
    for i, b in enumerate(exp_buffers):
        assert t.buffer_handles[i].size == b["size"]
        if readable:
            data = bytes(t.buffer(i))
            assert len(data) == b["size"] and hashlib.sha256(data).digest() == bytes(b["sha256"])


def presented(d):
    """The manifest's descriptor of a member as the member object holds it: without its
    member-role section (8-byte header + 8-byte payload), which lives on the composite."""
    return dict(d, role=None, encoded_len=d["encoded_len"] - (16 if d["role"] else 0))


def check_item(obj, exp, role=None):
    """A Tensor or Composite against the manifest's item; `role` is the one its parent
    reports for it (roles live on the composite, never on the member tensor)."""
    d = presented(exp["descriptor"])
    check_descriptor(obj.descriptor, d)
    assert obj.descriptor.role is None
    assert exp["descriptor"]["role"] == role
    if exp["kind"] == "tensor":
        assert isinstance(obj, hurray.Tensor)
        check_buffers(obj, exp["buffers"])
    else:
        assert isinstance(obj, hurray.Composite)
        assert obj.member_count == len(exp["members"])
        for m, e, r in zip(obj.members, exp["members"], obj.member_roles):
            check_item(m, e, r)


@_params(lambda v: v["kind"] == "stream" and v["expect"] == "valid")
def test_REQ_CONF_DECODE_CORPUS_REQ_CONF_REENCODE_stream(vector):
    data = _read(vector)
    dec = vector["decoded"]
    reader = hurray.StreamReader(data, **_options(vector))
    items, offsets, annotations = [], [0], []
    for rec in reader.items():
        items.append(rec.value)
        annotations.append((rec.name, rec.metadata))
        offsets.append(reader.offset)
    assert len(items) == len(dec["items"])
    for it, (name, metadata), exp in zip(items, annotations, dec["items"]):
        check_item(it, exp)
        # stream.md HR-STREAM-18 (schema 5): the name and metadata, when the item has them
        assert name == exp.get("name")
        check_kv(metadata, exp.get("metadata"))
    assert offsets == dec["frame_offsets"]
    # the end state (stream.md HR-STREAM-13); bytes after an end frame are not read
    assert reader.end == dec["end"]
    stop = offsets[-1] + 8 if dec["end"] == "end_frame" else len(data)
    assert reader.offset == stop
    if vector.get("roundtrip", True):  # REQ_CONF_REENCODE: finished iff it was
        w = hurray.StreamWriter()
        for it, (name, metadata), exp in zip(items, annotations, dec["items"]):
            if has_uint64(exp.get("metadata")):  # Python writes every int as int64 (HR-KV-4)
                return
            w.write(it, name=name, metadata=metadata)
        if dec["end"] == "end_frame":
            w.finish()
        assert w.getvalue() == data[:stop]


@_params(lambda v: v["kind"] == "stream" and v["expect"] == "invalid")
def test_REQ_CONF_INVALID_CODES_stream(vector):
    data = _read(vector)
    expected = hurray._hurray._error_class(vector["error"], "stream")
    reader = hurray.StreamReader(data, **_options(vector))
    # the corpus's consumer keeps every item until the end (errors-and-limits.md HR-LIMIT-2,
    # § Golden corpus: the slack of the items kept counts)
    kept = [next(reader) for _ in range(vector.get("error_after_items", 0))]
    with pytest.raises(expected) as info:
        for it in reader:
            kept.append(it)
    assert info.value.code == vector["error"], str(info.value)
    assert type(info.value) is expected


# ---- files ----------------------------------------------------------------------------------------


FILE_LIMITS = {"max_descriptor_bytes", "max_buffer_bytes", "max_rank", "max_composite_depth",
               "max_composite_members", "max_kv_entries", "max_kv_bytes", "max_name_bytes",
               "max_file_tensors"}


def check_entry(obj, name, entries, role=None):
    e = entries[name]
    assert e["kind"] == ("composite" if isinstance(obj, hurray.Composite) else "tensor")
    item = {"kind": e["kind"], "descriptor": e["descriptor"], "buffers": e["buffers"]}
    if e["kind"] == "tensor":
        check_item(obj, item, role)
        return
    check_descriptor(obj.descriptor, presented(e["descriptor"]))
    assert e["descriptor"]["role"] == role
    members = [n for n, x in entries.items() if x["member_of"] == name]
    assert members == [f"{name}.{i}" for i in range(obj.member_count)]  # HR-FILE-3
    for m, child, r in zip(obj.members, members, obj.member_roles):
        check_entry(m, child, entries, r)


@_params(lambda v: v["kind"] == "file" and v["expect"] == "valid")
def test_REQ_CONF_DECODE_CORPUS_REQ_CONF_REENCODE_file(vector, tmp_path):
    data = _read(vector)
    dec = vector["decoded"]
    opts = _options(vector)
    assert set(opts) <= FILE_LIMITS
    path = tmp_path / "v.hry"
    path.write_bytes(data)
    entries = {e["name"]: e for e in dec["entries"]}
    for mmap in (False, True):
        loaded = hurray.load(path, mmap=mmap, **opts)
        assert list(loaded) == dec["top_level"]
        for name, obj in loaded.items():
            check_entry(obj, name, entries)
    for name, e in entries.items():  # every entry by name, members included
        (obj,) = hurray.load(path, name, **opts).values()
        role = e["descriptor"]["role"]
        if e["member_of"] is not None:
            parent = hurray.load(path, e["member_of"], **opts)[e["member_of"]]
            role = parent.member_roles[int(name.rsplit(".", 1)[1])]
        check_entry(obj, name, entries, role if e["member_of"] is not None else None)
    kv = hurray.load_kv(path, **opts)
    check_kv(kv, dec["kv"])
    if vector.get("roundtrip", True) and not has_uint64(dec["kv"]):
        # REQ_CONF_REENCODE (Python writes every int as int64, so a uint64 value cannot
        # come back as uint64: those files are exempt)
        again = tmp_path / "again.hry"
        hurray.save(again, hurray.load(path, **opts), kv=python_kv(dec["kv"]))
        assert again.read_bytes() == data


@_params(lambda v: v["kind"] in ("file", "kv") and v["expect"] == "invalid")
def test_REQ_CONF_INVALID_CODES_file_and_kv(vector, tmp_path):
    data = _read(vector)
    expected = hurray._hurray._error_class(vector["error"], CONTEXT[vector["kind"]])
    with pytest.raises(expected) as info:
        if vector["kind"] == "kv":
            hurray._hurray._kv_decode(data, **_options(vector))
        else:
            # load reads and validates the header and the index part, load_kv the header and
            # the KV part (file-container.md HR-FILE-9): together, the whole file; a vector
            # has one fault, so one of them raises its status
            path = tmp_path / "v.hry"
            path.write_bytes(data)
            hurray.load(path, **_options(vector))
            hurray.load_kv(path, **_options(vector))
    assert info.value.code == vector["error"], str(info.value)
    assert type(info.value) is expected
    assert info.value.field


# ---- implementation-defined ---------------------------------------------------------------------


def _decode_any(vector, data, tmp_path):
    """What the binding does with a vector of any kind, to its end."""
    kind, opts = vector["kind"], _options(vector)
    if kind == "stream":
        list(hurray.StreamReader(data, **opts))  # every item kept (HR-LIMIT-2, § Golden corpus)
    elif kind == "file":
        path = tmp_path / "v.hry"
        path.write_bytes(data)
        hurray.load(path, **opts)
    elif kind == "kv":
        hurray._hurray._kv_decode(data, **opts)
    elif kind == "descriptor":
        hurray.Descriptor.decode(data, **opts)
    else:
        hurray.decode_quantization(data)


@_params(lambda v: v["expect"] == "implementation-defined")
def test_REQ_CONF_INVALID_CODES_implementation_defined(vector, tmp_path):
    """The outcome is one of the manifest's i_outcomes ("OK", or a status whose class the
    status table names for the vector's context; NOMEM is the built-in MemoryError)."""
    data = _read(vector)
    allowed = vector["i_outcomes"]
    context = CONTEXT.get(vector["kind"], "descriptor")
    try:
        _decode_any(vector, data, tmp_path)
    except Exception as e:  # noqa: BLE001 - the class is judged below
        classes = {hurray._hurray._error_class(o, context) for o in allowed if o != "OK"}
        assert type(e) in classes, f"{type(e).__name__}: {e} (allowed {allowed})"
        code = getattr(e, "code", None)
        assert code is None or code in allowed, f"{code}: {e} (allowed {allowed})"
    else:
        assert "OK" in allowed, f"accepted, but the allowed outcomes are {allowed}"


def test_REQ_CONF_CORPUS_PRESENT_container_kinds():
    kinds = {(v["kind"], v["expect"]) for v in _VECTORS}
    for kind in ("kv", "file", "stream"):
        assert (kind, "valid") in kinds and (kind, "invalid") in kinds
