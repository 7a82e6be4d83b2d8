"""hurray.convert (and `hurray convert`): Hurray files to and from safetensors, .npy/.npz,
PyTorch checkpoints and GGUF, on real files written by those libraries (safetensors, NumPy,
torch.save of a real nn.Transformer's state dict, gguf's GGUFWriter and its Q8_0/Q4_0
quantizers). Round trips give the same bytes where both sides can express the data; what a
target cannot express is refused, naming the tensor or key. Test names carry requirement ids
(docs/requirements/python-binding.md).
"""
import math
import os

import numpy as np
import pytest

import hurray
from hurray import convert as cv

safetensors = pytest.importorskip("safetensors")
gguf = pytest.importorskip("gguf")
from gguf import quants  # noqa: E402


def st_raw(path):
    """A safetensors file's tensors, as its own parser gives them: name -> (dtype, shape, bytes)."""
    with open(path, "rb") as f:
        return {k: (v["dtype"], list(v["shape"]), bytes(v["data"]))
                for k, v in safetensors.deserialize(f.read())}


def st_metadata(path):
    with safetensors.safe_open(os.fspath(path), framework="numpy") as f:
        return f.metadata()


# ---- safetensors ---------------------------------------------------------------------------------


def test_REQ_CLI_CONVERT_SAFETENSORS_round_trip_every_dtype(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file
    g = torch.Generator().manual_seed(1)
    tensors = {
        "w.f32": torch.randn(3, 5, generator=g), "w.f16": torch.randn(4, generator=g).half(),
        "w.bf16": torch.randn(2, 3, generator=g).bfloat16(),
        "w.f64": torch.randn(2, generator=g).double(),
        "f8.e4m3": torch.randn(6, generator=g).to(torch.float8_e4m3fn),
        "f8.e5m2": torch.randn(6, generator=g).to(torch.float8_e5m2),
        "i8": torch.arange(-4, 4, dtype=torch.int8), "u8": torch.arange(7, dtype=torch.uint8),
        "i16": torch.arange(5, dtype=torch.int16), "i32": torch.arange(5, dtype=torch.int32),
        "i64": torch.arange(5, dtype=torch.int64), "u16": torch.tensor([1, 2, 65535], dtype=torch.uint16),
        "b": torch.tensor([True, False, True]), "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 4),
    }
    src = tmp_path / "m.safetensors"
    save_file(tensors, src, metadata={"format": "pt", "author": "tests", "empty": ""})
    mid, back = tmp_path / "m.hry", tmp_path / "back.safetensors"
    b = cv.convert(src, mid)
    assert b.metadata == {"format": "pt", "author": "tests", "empty": ""}
    loaded = hurray.load(mid)
    assert loaded["w.bf16"].dtype == hurray.bfloat16 and loaded["w.bf16"].shape == (2, 3)
    assert loaded["f8.e4m3"].dtype == hurray.float8_e4m3fn
    assert hurray.load_kv(mid) == {"format": "pt", "author": "tests", "empty": ""}
    cv.convert(mid, back)
    assert st_raw(back) == st_raw(src)  # the same tensors, byte for byte
    assert st_metadata(back) == st_metadata(src)
    # (not always the same file: a Hurray KV map is sorted by key, so the safetensors
    # header's metadata can come back in another order)


def test_REQ_CLI_CONVERT_SAFETENSORS_refusals_name_what(tmp_path):
    src = tmp_path / "q.hry"
    q = hurray.Tensor(bytes(8), hurray.int8, (8,), quantization=hurray.PerTensorAffine(0.5, 0))
    hurray.save(src, {"plain": hurray.from_numpy(np.ones(2, np.float32)), "qweight": q})
    with pytest.raises(cv.ConversionError, match="'qweight' is quantized"):
        cv.convert(src, tmp_path / "out.safetensors")
    assert not (tmp_path / "out.safetensors").exists()
    hurray.save(src, {"a": hurray.from_numpy(np.ones(2, np.float32))}, kv={"step": 3, "s": "x"})
    with pytest.raises(cv.ConversionError, match="metadata 'step' is a int"):
        cv.convert(src, tmp_path / "out.safetensors")
    cv.convert(src, tmp_path / "out.safetensors", metadata_json=True)
    assert st_metadata(tmp_path / "out.safetensors") == {"step": "3", "s": "x"}
    g = hurray.Composite.__new__  # a composite has no safetensors form
    from catalog import partition
    hurray.save(src, {"grid": partition()})
    with pytest.raises(cv.ConversionError, match="'grid' is a composite"):
        cv.convert(src, tmp_path / "c.safetensors")
    del g


# ---- NumPy -----------------------------------------------------------------------------------------


def test_REQ_CLI_CONVERT_NPZ_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    arrays = {"x": np.arange(10, dtype=np.int16), "layer.0/w": rng.standard_normal((3, 4)),
              "mask": np.array([True, False]), "c": np.array([1 + 2j], np.complex64),
              "u64": np.array([2 ** 64 - 1], np.uint64), "z": np.zeros((0, 2), np.float32),
              "s": np.float32(7.0)}
    src, mid, back = tmp_path / "a.npz", tmp_path / "a.hry", tmp_path / "b.npz"
    np.savez(src, **arrays)
    cv.convert(src, mid)
    assert list(hurray.load(mid)) == list(arrays)  # names and order kept
    cv.convert(mid, back)
    with np.load(src) as a, np.load(back) as b:
        assert a.files == b.files
        for k in a.files:
            assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
            assert a[k].tobytes() == b[k].tobytes(), k


def test_REQ_CLI_CONVERT_NPZ_npy_and_refusals(tmp_path):
    arr = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]  # not contiguous
    np.save(tmp_path / "w.npy", arr)
    cv.convert(tmp_path / "w.npy", tmp_path / "w.hry")
    assert list(hurray.load(tmp_path / "w.hry")) == ["w"]
    cv.convert(tmp_path / "w.hry", tmp_path / "w2.npy")
    assert np.array_equal(np.load(tmp_path / "w2.npy"), arr)
    hurray.save(tmp_path / "two.hry", {"a": hurray.from_numpy(arr), "b": hurray.from_numpy(arr)})
    with pytest.raises(cv.ConversionError, match="holds one array; the input has 2"):
        cv.convert(tmp_path / "two.hry", tmp_path / "x.npy")
    bf = hurray.Tensor(bytes(4), hurray.bfloat16, (2,))
    hurray.save(tmp_path / "bf.hry", {"half": bf})
    with pytest.raises(cv.ConversionError, match="'half' has element type bfloat16"):
        cv.convert(tmp_path / "bf.hry", tmp_path / "bf.npz")
    np.save(tmp_path / "s.npy", np.array(["a", "b"]))
    with pytest.raises(cv.ConversionError, match="dtype <U1"):
        cv.convert(tmp_path / "s.npy", tmp_path / "s.hry")


# ---- PyTorch checkpoints ---------------------------------------------------------------------------


def test_REQ_CLI_CONVERT_TORCH_real_model_checkpoint(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                 dim_feedforward=32, batch_first=True)
    sd = model.state_dict()
    ckpt = tmp_path / "ckpt.pt"
    torch.save({"model": sd, "epoch": 3, "lr": 0.001, "note": "tiny"}, ckpt)
    mid, back = tmp_path / "ckpt.hry", tmp_path / "back.pt"
    b = cv.convert(ckpt, mid)
    assert b.names() == [f"model.{k}" for k in sd]  # nested dicts flatten with "."
    assert hurray.load_kv(mid) == {"epoch": 3, "lr": 0.001, "note": "tiny"}
    cv.convert(mid, back)
    out = torch.load(back, weights_only=True)
    assert {k: out[k] for k in ("epoch", "lr", "note")} == {"epoch": 3, "lr": 0.001, "note": "tiny"}
    for k, v in sd.items():
        got = out[f"model.{k}"]
        assert got.dtype == v.dtype and got.shape == v.shape and torch.equal(got, v), k
    # the flat state dict loads into the model
    fresh = torch.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                 dim_feedforward=32, batch_first=True)
    fresh.load_state_dict({k[len("model."):]: v for k, v in out.items() if k.startswith("model.")})
    x = torch.randn(1, 3, 16)
    model.eval(), fresh.eval()
    assert torch.equal(model(x, x), fresh(x, x))


def test_REQ_CLI_CONVERT_TORCH_bfloat16_and_refusals(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save({"w": torch.arange(6, dtype=torch.bfloat16).reshape(2, 3).t()}, tmp_path / "b.pt")
    cv.convert(tmp_path / "b.pt", tmp_path / "b.hry")
    cv.convert(tmp_path / "b.hry", tmp_path / "b2.pt")
    w = torch.load(tmp_path / "b2.pt", weights_only=True)["w"]
    assert w.dtype == torch.bfloat16 and torch.equal(w, torch.arange(6).reshape(2, 3).t().bfloat16())
    torch.save({"w": torch.zeros(2), "cfg": {"sizes": (1, 2), "obj": None}}, tmp_path / "n.pt")
    with pytest.raises(cv.ConversionError, match="'cfg.obj' is a NoneType"):
        cv.convert(tmp_path / "n.pt", tmp_path / "n.hry")


# ---- GGUF ------------------------------------------------------------------------------------------


def make_gguf(path, kinds=("Q8_0", "Q4_0")):
    rng = np.random.default_rng(7)
    w = gguf.GGUFWriter(os.fspath(path), "llama")
    w.add_uint32("llama.context_length", 256)
    w.add_int32("llama.signed", -5)
    w.add_float32("llama.rope.freq_base", 10000.0)
    w.add_bool("llama.use_parallel_residual", True)
    w.add_string("general.name", "tiny \u00e9")
    w.add_array("tokenizer.ggml.tokens", ["<s>", "</s>", "a"])
    w.add_array("tokenizer.ggml.scores", [0.0, -1.5, 2.25])
    data = {}
    for i, k in enumerate(kinds):
        a = rng.standard_normal((3, 2, 64)).astype(np.float32) * (i + 1)
        a[0, 0, :32] = 0.0  # an all-zero block: scale 0
        qt = getattr(gguf.GGMLQuantizationType, k)
        q = quants.quantize(a, qt)
        w.add_tensor(f"blk.{i}.{k.lower()}", q, raw_dtype=qt)
        data[f"blk.{i}.{k.lower()}"] = (qt, q, a)
    f = rng.standard_normal((5, 32)).astype(np.float32)
    w.add_tensor("token_embd.weight", f)
    w.add_tensor("norm.f16", f[0].astype(np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return data


def unpack_int4(buf, n):
    b = np.frombuffer(buf, np.uint8, count=(n + 1) // 2)
    v = np.empty(2 * len(b), np.int8)
    v[0::2], v[1::2] = b & 0x0F, b >> 4
    v = v[:n]
    return np.where(v >= 8, v - 16, v).astype(np.int8)


def test_REQ_CLI_CONVERT_GGUF_q8_0_q4_0_block_affine_round_trip(tmp_path):
    src, mid, back = tmp_path / "m.gguf", tmp_path / "m.hry", tmp_path / "back.gguf"
    data = make_gguf(src)
    cv.convert(src, mid)
    loaded = hurray.load(mid)
    for name, (qt, q, a) in data.items():
        t = loaded[name]
        assert t.shape == (3, 2, 64)
        assert t.quantization == hurray.BlockAffine(2, 32, hurray.float16)
        assert t.dtype == (hurray.int8 if qt == gguf.GGMLQuantizationType.Q8_0 else hurray.int4)
        # what the block_affine tensor means is what GGUF's own dequantizer gives
        n = math.prod(t.shape)
        codes = (np.frombuffer(t.buffer(0), np.int8, count=n) if t.dtype == hurray.int8
                 else unpack_int4(t.buffer(0), n))
        scales = np.frombuffer(t.buffer(1), np.float16, count=n // 32).astype(np.float32)
        value = codes.reshape(-1, 32).astype(np.float32) * scales[:, None]
        assert np.array_equal(value.reshape(t.shape), quants.dequantize(q, qt))
    cv.convert(mid, back)
    r1, r2 = gguf.GGUFReader(src), gguf.GGUFReader(back)
    assert [t.name for t in r1.tensors] == [t.name for t in r2.tensors]
    for t1, t2 in zip(r1.tensors, r2.tensors):
        assert t1.tensor_type == t2.tensor_type and list(t1.shape) == list(t2.shape)
        assert t1.data.tobytes() == t2.data.tobytes(), t1.name  # the block bytes, identical
    for k, f1 in r1.fields.items():
        f2 = r2.fields[k]
        assert f1.types == f2.types and f1.contents() == f2.contents(), k
    assert back.read_bytes() == src.read_bytes()  # here the whole file


E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], np.float32)


def test_REQ_CLI_CONVERT_GGUF_mxfp4_is_mx(tmp_path):
    """MXFP4 -> float4_e2m1fn with the mx scheme (quantization.md HR-QUANT-14): the values are
    GGUF's own dequantization; back to GGUF, the same block bytes."""
    src, mid, back = tmp_path / "m.gguf", tmp_path / "m.hry", tmp_path / "back.gguf"
    data = make_gguf(src, kinds=("MXFP4", "Q8_0"))
    cv.convert(src, mid)
    (qt, q, a), = [v for k, v in data.items() if k.endswith("mxfp4")]
    t = hurray.load(mid)["blk.0.mxfp4"]
    assert t.dtype == hurray.float4_e2m1fn and t.quantization == hurray.MX(2, 32)
    n = math.prod(t.shape)
    codes = np.frombuffer(t.buffer(0), np.uint8, count=n // 2)
    c = np.empty(n, np.uint8)
    c[0::2], c[1::2] = codes & 0x0F, codes >> 4
    e = np.frombuffer(t.buffer(1), np.uint8, count=n // 32).astype(np.float64)
    value = E2M1[c].reshape(-1, 32) * np.exp2(e - 127)[:, None]
    assert np.array_equal(value.reshape(t.shape).astype(np.float32), quants.dequantize(q, qt))
    cv.convert(mid, back)
    assert back.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("kind", ["Q4_1", "Q5_0", "Q5_1"])
def test_REQ_CLI_CONVERT_GGUF_other_block_types_refused_by_name(tmp_path, kind):
    src = tmp_path / "m.gguf"
    make_gguf(src, kinds=("Q8_0", kind))
    with pytest.raises(cv.ConversionError, match=f"'blk.1.{kind.lower()}' is {kind}"):
        cv.convert(src, tmp_path / "m.hry")
    assert not (tmp_path / "m.hry").exists()


def test_REQ_CLI_CONVERT_GGUF_from_other_sources(tmp_path):
    """A Hurray file that did not come from GGUF: value types from the Python types, dense
    types as GGUF has them; what GGUF lacks is refused by name."""
    src = tmp_path / "s.hry"
    hurray.save(src, {"w": hurray.from_numpy(np.ones((2, 32), np.float32)),
                      "bf": hurray.Tensor(bytes(8), hurray.bfloat16, (4,))},
                kv={"n": 3, "x": 0.5, "name": "m", "flags": [True, False], "blob": b"\x01\x02"})
    cv.convert(src, tmp_path / "s.gguf")
    r = gguf.GGUFReader(tmp_path / "s.gguf")
    assert {t.name: t.tensor_type.name for t in r.tensors} == {"w": "F32", "bf": "BF16"}
    assert r.fields["n"].contents() == 3 and r.fields["name"].contents() == "m"
    assert r.fields["blob"].contents() == [1, 2]
    assert r.fields["general.architecture"].contents() == "hurray"
    hurray.save(src, {"u": hurray.from_numpy(np.ones(3, np.uint32))})
    with pytest.raises(cv.ConversionError, match="'u' has element type uint32, which GGUF"):
        cv.convert(src, tmp_path / "u.gguf")
    q = hurray.Tensor([bytes(64), bytes(8)], hurray.int8, (64,),
                      quantization=hurray.BlockAffine(0, 32, hurray.float32))
    hurray.save(src, {"q": q})
    with pytest.raises(cv.ConversionError, match="'q' is quantized .*Q8_0"):
        cv.convert(src, tmp_path / "q.gguf")


# ---- streams and formats ---------------------------------------------------------------------------


def test_REQ_CLI_CONVERT_stream_items_named(tmp_path):
    hurray.save(tmp_path / "a.hry", {"x": hurray.from_numpy(np.arange(3, dtype=np.int32)),
                                     "y": hurray.from_numpy(np.ones(2, np.float32))})
    cv.convert(tmp_path / "a.hry", tmp_path / "a.hrs")
    with open(tmp_path / "a.hrs", "rb") as f:
        items = list(hurray.StreamReader(f).items())
    assert [i.name for i in items] == ["x", "y"]
    cv.convert(tmp_path / "a.hrs", tmp_path / "b.hry")
    assert list(hurray.load(tmp_path / "b.hry")) == ["x", "y"]


def test_REQ_CLI_CONVERT_format_detection(tmp_path):
    assert cv.guess_format("x.safetensors") == "safetensors"
    assert cv.guess_format("x.PTH") == "torch"
    assert cv.guess_format("x.bin", "gguf") == "gguf"
    with pytest.raises(cv.FormatError, match="--from/--to"):
        cv.guess_format(tmp_path / "x.bin")
    with pytest.raises(cv.FormatError, match="unknown format 'onnx'"):
        cv.guess_format("x", "onnx")
    hurray.save(tmp_path / "noext", {"a": hurray.from_numpy(np.ones(1, np.float32))})
    assert cv.guess_format(tmp_path / "noext", must_exist=True) == "hurray"  # by its magic
