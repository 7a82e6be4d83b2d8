"""StreamWriter.write with NumPy arrays and PyTorch tensors: ingested exactly as save ingests
them (the same conversion), compactly for non-contiguous inputs, TypeError naming the full
type of anything else (docs/requirements/python-binding.md § Streams: REQ_STREAM_WRITER_VALUES,
REQ_STREAM_WRITER_TYPES)."""
import sys

import numpy as np
import pytest
import torch

import hurray
from hurray import StreamReader, StreamWriter


def _read_all(data):
    return list(StreamReader(data).items())


def test_REQ_STREAM_WRITER_VALUES_numpy_and_torch_directly():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = torch.arange(6, dtype=torch.bfloat16).reshape(2, 3)
    g = torch.ones(4, requires_grad=True)  # detached as save does
    w = StreamWriter()
    w.write(a, name="a", metadata={"k": 1})
    w.write(t)
    w.write(g, name="g")
    w.finish()
    items = _read_all(w.getvalue())
    assert [i.name for i in items] == ["a", None, "g"]
    assert items[0].metadata == {"k": 1}
    np.testing.assert_array_equal(np.asarray(items[0].value), a)
    assert items[1].value.dtype is hurray.bfloat16
    assert torch.equal(items[1].value.to_torch(), t)
    assert torch.equal(items[2].value.to_torch(), torch.ones(4))


def test_REQ_STREAM_WRITER_VALUES_same_item_as_save_stores():
    # the one conversion save uses: an array written directly streams the tensor save
    # stores for it (dtype, shape, layout and bytes)
    a = np.arange(24, dtype=np.int16).reshape(4, 6)
    t = torch.arange(10, dtype=torch.float32)
    saved = hurray.load_bytes(hurray.save_bytes({"a": a, "t": t}))
    w = StreamWriter()
    w.write(a)
    w.write(t)
    w.finish()
    for item, want in zip(_read_all(w.getvalue()), (saved["a"], saved["t"])):
        got = item.value
        assert (got.dtype, got.shape, got.layout) == (want.dtype, want.shape, want.layout)
        assert bytes(memoryview(np.asarray(got)).cast("B")) == \
            bytes(memoryview(np.asarray(want)).cast("B"))


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_REQ_STREAM_WRITER_VALUES_non_contiguous_written_compactly(kind):
    base = np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024)  # 4 MiB
    view = base[:, :8] if kind == "numpy" else torch.from_numpy(base)[:, :8]
    w = StreamWriter()
    w.write(view)
    w.finish()
    data = w.getvalue()
    assert len(data) <= 1024 * 8 * 4 + 4096  # its 32 KiB of elements, never the 4 MiB base
    (item,) = _read_all(data)
    np.testing.assert_array_equal(np.asarray(item.value), base[:, :8])
    assert isinstance(item.value.layout, hurray.RowMajorLayout)


def test_REQ_STREAM_WRITER_VALUES_source_not_kept_after_write():
    a = np.arange(1000, dtype=np.float64)
    before = sys.getrefcount(a)
    w = StreamWriter()
    for _ in range(10):
        w.write(a)
    assert sys.getrefcount(a) == before  # the converted value was released after each write


def test_REQ_STREAM_WRITER_TYPES_other_values_name_their_full_type():
    w = StreamWriter()
    with pytest.raises(TypeError, match=r"StreamWriter.write: item: .*numpy.ndarray or "
                                        r"torch.Tensor, not list"):
        w.write([1, 2])
    with pytest.raises(TypeError, match=r"not decimal.Decimal"):
        import decimal
        w.write(decimal.Decimal(1))
    assert w.getvalue() == b""
