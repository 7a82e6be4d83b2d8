"""Descriptor.encode / Descriptor.decode against protobuf (upb, the C implementation behind
`google.protobuf`) on an equivalent message, in the same run.

The anchor message carries what the hurray descriptor carries, field for field: format
version, element type, shape (packed), layout tag, byte offset, device kind, memory class,
device id, and one sub-message per buffer-table entry (size, alignment, sync mode); for the
strided case also the packed element strides. It is built at run time from a
FileDescriptorProto (descriptor_pb2 + message_factory): no generated code is committed.

Groups:
  descriptor-decode-<case>  hurray.Descriptor.decode(b) vs Message.FromString(b')
  descriptor-encode-<case>  d.encode()                  vs m.SerializeToString()
Cases: `small` (float32 (1024, 768), row_major, one buffer: 72 bytes) and `strided`
(float32 rank 3, strided, byte offset). encode runs on a freshly decoded descriptor each
time (hurray keeps a descriptor's canonical bytes once made, so encoding the same object twice
would time a cache hit); decode + encode of the anchor mirrors that.

    .venv/bin/python -m pytest bench/python/test_bench_descriptor.py --benchmark-only
"""
import numpy as np
import pytest

import hurray

pb = pytest.importorskip("google.protobuf")
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: E402


def _anchor_class():
    fdp = descriptor_pb2.FileDescriptorProto(name="hurray_bench_anchor.proto",
                                             package="hurray_bench", syntax="proto3")
    F = descriptor_pb2.FieldDescriptorProto
    buf = fdp.message_type.add(name="Buffer")
    for i, (name, ty) in enumerate([("size", F.TYPE_UINT64), ("alignment_log2", F.TYPE_UINT32),
                                    ("sync_mode", F.TYPE_UINT32)], 1):
        buf.field.add(name=name, number=i, type=ty, label=F.LABEL_OPTIONAL)
    msg = fdp.message_type.add(name="Descriptor")
    fields = [("version", F.TYPE_UINT32, F.LABEL_OPTIONAL, None),
              ("dtype", F.TYPE_UINT32, F.LABEL_OPTIONAL, None),
              ("shape", F.TYPE_UINT64, F.LABEL_REPEATED, None),
              ("layout", F.TYPE_UINT32, F.LABEL_OPTIONAL, None),
              ("strides", F.TYPE_SINT64, F.LABEL_REPEATED, None),
              ("byte_offset", F.TYPE_UINT64, F.LABEL_OPTIONAL, None),
              ("device", F.TYPE_UINT32, F.LABEL_OPTIONAL, None),
              ("memory_class", F.TYPE_UINT32, F.LABEL_OPTIONAL, None),
              ("device_id", F.TYPE_INT32, F.LABEL_OPTIONAL, None),
              ("buffers", F.TYPE_MESSAGE, F.LABEL_REPEATED, ".hurray_bench.Buffer")]
    for i, (name, ty, label, tn) in enumerate(fields, 1):
        f = msg.field.add(name=name, number=i, type=ty, label=label)
        if tn:
            f.type_name = tn
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("hurray_bench.Descriptor"))


def _cases():
    with hurray.aligned_allocator():
        small = np.empty((1024, 768), np.float32)
        big = np.empty((8, 16, 32), np.float32)
    strided = big[:, ::2, 1:]
    return {"small": hurray.from_numpy(small), "strided": hurray.from_numpy(strided)}


def _anchor_message(cls, t):
    d = t.descriptor
    m = cls(version=1, dtype=d.dtype.tag, shape=list(d.shape), layout=d.layout.tag,
            byte_offset=t.byte_offset, device=d.device.tag,
            memory_class=d.device.memory_class_tag, device_id=d.device.device_id)
    strides = getattr(d.layout, "strides", None)
    if strides:
        m.strides.extend(strides)
    for h in t.buffer_handles:
        m.buffers.add(size=h.size, alignment_log2=h.alignment.bit_length() - 1, sync_mode=1)
    return m


@pytest.fixture(scope="module")
def data():
    cls = _anchor_class()
    out = {}
    for case, t in _cases().items():
        blob = t.descriptor.encode()
        m = _anchor_message(cls, t)
        out[case] = {"blob": blob, "pb_blob": m.SerializeToString(), "cls": cls}
    return out


CASES = ["small", "strided"]


def role(benchmark, group, r, nbytes):
    benchmark.group = group
    benchmark.extra_info.update(role=r, nbytes=nbytes)


@pytest.mark.guard
@pytest.mark.parametrize("case", CASES)
def test_decode_hurray(benchmark, data, case):
    blob = data[case]["blob"]
    role(benchmark, f"descriptor-decode-{case}", "subject", len(blob))
    d = benchmark(hurray.Descriptor.decode, blob)
    assert d.encode() == blob


@pytest.mark.guard
@pytest.mark.parametrize("case", CASES)
def test_decode_anchor_protobuf(benchmark, data, case):
    blob, cls = data[case]["pb_blob"], data[case]["cls"]
    role(benchmark, f"descriptor-decode-{case}", "anchor", len(blob))
    m = benchmark(cls.FromString, blob)
    assert m.SerializeToString() == blob


def _hurray_encode(blob):
    return hurray.Descriptor.decode(blob).encode()


def _pb_encode(cls, blob):
    return cls.FromString(blob).SerializeToString()


@pytest.mark.guard
@pytest.mark.parametrize("case", CASES)
def test_decode_encode_hurray(benchmark, data, case):
    blob = data[case]["blob"]
    role(benchmark, f"descriptor-encode-{case}", "subject", len(blob))
    assert benchmark(_hurray_encode, blob) == blob


@pytest.mark.guard
@pytest.mark.parametrize("case", CASES)
def test_decode_encode_anchor_protobuf(benchmark, data, case):
    blob, cls = data[case]["pb_blob"], data[case]["cls"]
    role(benchmark, f"descriptor-encode-{case}", "anchor", len(blob))
    assert benchmark(_pb_encode, cls, blob) == blob
