"""Converting between Hurray files and other tensor containers.

    hurray.convert.convert(src, dst, *, src_format=None, dst_format=None, progress=None)
    hurray.convert.read(path, fmt=None) -> Bundle
    hurray.convert.write(bundle, path, fmt=None)

Formats: ``hurray`` (a Hurray file), ``hurray-stream`` (a Hurray stream, stream.md),
``safetensors``, ``npy``, ``npz``, ``torch`` (a checkpoint of ``torch.save``, read with
``torch.load(weights_only=True)``) and ``gguf``. The other containers are read and written
through their own packages (``safetensors``, NumPy, PyTorch, ``gguf``), imported only when a
conversion needs them; nothing here parses their bytes.

Every tensor passes through a ``hurray.Tensor``; a bundle is the tensors in order with their
names and one metadata map (the KV types of ``hurray.save(kv=...)``). What a target cannot
express is refused with ``ConversionError`` naming the tensor or key -- nothing is silently
dropped, widened or rounded. Where both sides can express the data, a round trip gives the
same bytes: the tensors' element bytes, and the metadata value for value (GGUF value types are
kept in the metadata key ``hurray.gguf_value_types``, so that GGUF -> Hurray -> GGUF writes the
same types back).

GGUF quantized tensors map onto the ``block_affine`` quantization scheme
(docs/spec/quantization.md HR-QUANT-12) where the block format is an affine one Hurray has:
``Q8_0`` (blocks of 32 ``int8`` codes and one ``float16`` scale: ``int8`` elements,
``block_affine`` along the last axis, block 32, ``float16`` scales) and ``Q4_0`` (blocks of 32
4-bit codes ``q`` with ``value = (q - 8) * d``: ``int4`` elements holding ``q - 8``, same
scheme). The GGUF block bytes are rebuilt exactly when written back. Every other GGUF block
type is refused by name, except ``MXFP4`` (blocks of 32 E2M1 codes and one E8M0 scale), which
is the ``mx`` scheme with ``float4_e2m1fn`` elements (HR-QUANT-14).
"""
from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

import hurray

if TYPE_CHECKING:
    _Item = hurray.Tensor | hurray.Composite
    _StrPath = str | os.PathLike[str]

FORMATS = ("hurray", "hurray-stream", "safetensors", "npy", "npz", "torch", "gguf")

EXTENSIONS = {
    ".hry": "hurray", ".hurray": "hurray", ".hrs": "hurray-stream",
    ".safetensors": "safetensors", ".npy": "npy", ".npz": "npz",
    ".pt": "torch", ".pth": "torch", ".ckpt": "torch", ".gguf": "gguf",
}

# Where a GGUF file's value types are kept in a Hurray file's metadata.
GGUF_TYPES_KEY = "hurray.gguf_value_types"


class ConversionError(ValueError):
    """The data cannot be expressed in the target format (the message names the tensor or
    the metadata key), or the input is not what its format says."""


class FormatError(ConversionError):
    """The format of a path cannot be told, or is not one of FORMATS (a usage error)."""


class Progress(Protocol):
    """What read/write report progress to (hurray.cli.Progress is one)."""

    def start(self, total: int, label: str) -> None: ...
    def update(self, n: int, name: str = "") -> None: ...
    def done(self) -> None: ...


class Bundle:
    """Named tensors in order, and one metadata map."""

    def __init__(self, tensors: Iterable[tuple[str, _Item]] | None = None,
                 metadata: Mapping[str, Any] | None = None) -> None:
        self.tensors: list[tuple[str, _Item]] = list(tensors or [])
        self.metadata: dict[str, Any] = dict(metadata or {})

    def names(self) -> list[str]:
        return [n for n, _ in self.tensors]


class _NoProgress:
    def start(self, total: int, label: str) -> None:
        pass

    def update(self, n: int, name: str = "") -> None:
        pass

    def done(self) -> None:
        pass


def _progress(p: Progress | None) -> Progress:
    return p if p is not None else _NoProgress()


# ---- format detection --------------------------------------------------------------------------

def sniff(path: _StrPath) -> str | None:
    """The format of an existing file from its first bytes, or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return None
    if head.startswith(b"HRRYFILE"):
        return "hurray"
    if head.startswith(b"HRSF"):
        return "hurray-stream"
    if head.startswith(b"GGUF"):
        return "gguf"
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if len(head) >= 9 and head[8:9] == b"{":  # u64 header length, then the JSON header
        return "safetensors"
    return None


def guess_format(path: _StrPath, given: str | None = None, must_exist: bool = False) -> str:
    """--from/--to if given; else the extension; else (an existing input) its magic."""
    if given:
        if given not in FORMATS:
            raise FormatError(f"unknown format {given!r}; one of {', '.join(FORMATS)}")
        return given
    ext = os.path.splitext(os.fspath(path))[1].lower()
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    if must_exist:
        found = sniff(path)
        if found:
            return found
    raise FormatError(f"{os.fspath(path)}: cannot tell the format from the name; "
                          f"give it with --from/--to (one of {', '.join(FORMATS)})")


# ---- tensors as bytes ----------------------------------------------------------------------------

def _need_numpy() -> ModuleType:
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - NumPy is there wherever the tests run
        raise ConversionError("this conversion needs NumPy (pip install numpy)") from e
    return numpy


def _extents(name: str, t: _Item) -> tuple[int, ...]:
    """The shape of a tensor with no dynamic extent; a dynamic one is refused."""
    shape = tuple(d for d in t.shape if d is not None)
    if len(shape) != len(t.shape):
        raise ConversionError(f"tensor {name!r} has a dynamic extent")
    return shape


def dense_bytes(name: str, t: _Item) -> memoryview:
    """The row-major element bytes of a dense, unquantized CPU tensor (a memoryview over its
    buffer when it is row-major already)."""
    if isinstance(t, hurray.Composite):
        raise ConversionError(f"tensor {name!r} is a composite ({t.composition_rule}); the target "
                              "has no composites")
    if t.quantization is not None:
        raise ConversionError(f"tensor {name!r} is quantized ({_quant_text(t.quantization)}); "
                              "the target cannot express it")
    if t.device.kind != "cpu":
        raise ConversionError(f"tensor {name!r} is declared in {t.device.kind} memory")
    shape = _extents(name, t)
    if t.layout.name == "row_major":
        n = hurray.buffer_size_bytes(t.dtype, math.prod(shape))
        mv = t.buffer(0)
        return mv[t.byte_offset:t.byte_offset + n]
    np = _need_numpy()
    try:
        arr = np.ascontiguousarray(np.asarray(t))
    except Exception as e:
        raise ConversionError(f"tensor {name!r}: a {t.layout.name} layout the target cannot "
                              f"express, and NumPy cannot read it densely: {e}") from e
    return memoryview(arr).cast("B")


def _quant_text(q: hurray.Quantization | None) -> str:
    return repr(q).replace("hurray.", "")


# ---- metadata ------------------------------------------------------------------------------------

def _kv_ok(key: str, v: object, where: str) -> Any:
    """A metadata value hurray's KV map can hold (kv.md § Value types), else ConversionError."""
    if isinstance(v, (bool, str, bytes, float)):
        return v
    if isinstance(v, int):
        if not -(1 << 63) <= v < (1 << 63):
            raise ConversionError(f"{where}: metadata {key!r} = {v} is outside int64")
        return v
    if isinstance(v, (list, tuple)):
        return [_kv_ok(key, x, where) for x in v]
    raise ConversionError(f"{where}: metadata {key!r} is a {type(v).__name__}, which a Hurray "
                          "KV map cannot hold (bool, int, float, str, bytes, list)")


# ==== readers =====================================================================================

def read(path: _StrPath, fmt: str | None = None, progress: Progress | None = None) -> Bundle:
    fmt = guess_format(path, fmt, must_exist=True)
    return _READERS[fmt](path, _progress(progress))


def _read_hurray(path: _StrPath, progress: Progress) -> Bundle:
    tensors = hurray.load(path, mmap=True)
    md = hurray.load_kv(path)
    return Bundle(tensors.items(), md)


def _read_stream(path: _StrPath, progress: Progress) -> Bundle:
    """A stream's items: the item's name, else item<i>; per-item metadata is kept under
    '<name>.<key>' (a Hurray file has one metadata map)."""
    b = Bundle()
    with open(path, "rb") as f, hurray.StreamReader(f) as r:
        for i, it in enumerate(r.items()):
            name = it.name if it.name is not None else f"item{i}"
            b.tensors.append((name, it.value))
            for k, v in it.metadata.items():
                b.metadata[f"{name}.{k}"] = v
    return b


# safetensors' dtype codes (its header) and Hurray's dtype names (the same as TensorSpec's)
ST_CODES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
            "I32": "int32", "U32": "uint32", "I64": "int64", "U64": "uint64", "F16": "float16",
            "BF16": "bfloat16", "F32": "float32", "F64": "float64", "C64": "complex64",
            "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "F8_E8M0": "float8_e8m0fnu"}
ST_NUMPY = {"BOOL", "U8", "I8", "I16", "U16", "I32", "U32", "I64", "U64", "F16", "F32", "F64",
            "C64"}
ST_WRITE = set(ST_CODES.values()) | {"float8_e4m3fnuz", "float8_e5m2fnuz"}


def _read_safetensors(path: _StrPath, progress: Progress) -> Bundle:
    import safetensors
    np = _need_numpy()
    b = Bundle()
    raw: dict[str, Any] | None = None
    with safetensors.safe_open(os.fspath(path), framework="numpy") as f:
        b.metadata = dict(f.metadata() or {})
        keys = list(f.keys())
        specs = [(k, f.get_slice(k)) for k in keys]
        total = sum(math.prod(s.get_shape()) for _, s in specs)
        progress.start(total, "read safetensors")
        for k, s in specs:
            code, shape = s.get_dtype(), tuple(s.get_shape())
            if code not in ST_CODES:
                raise ConversionError(f"tensor {k!r}: safetensors dtype {code} has no Hurray "
                                      "element type")
            if code in ST_NUMPY:
                data = np.ascontiguousarray(f.get_tensor(k)).tobytes()
            else:  # NumPy has no such type: the raw bytes, through safetensors' own parser
                if raw is None:
                    with open(path, "rb") as fh:
                        raw = dict(safetensors.deserialize(fh.read()))
                data = bytes(raw[k]["data"])
            b.tensors.append((k, hurray.Tensor(data, getattr(hurray.dtype, ST_CODES[code]),
                                               shape)))
            progress.update(math.prod(shape), k)
    progress.done()
    return b


def _read_npy(path: _StrPath, progress: Progress) -> Bundle:
    np = _need_numpy()
    arr = np.load(path, allow_pickle=False)
    name = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return Bundle([(name, _from_numpy(name, arr))])


def _read_npz(path: _StrPath, progress: Progress) -> Bundle:
    np = _need_numpy()
    b = Bundle()
    with np.load(path, allow_pickle=False) as z:
        progress.start(len(z.files), "read npz")
        for k in z.files:
            b.tensors.append((k, _from_numpy(k, z[k])))
            progress.update(1, k)
    progress.done()
    return b


def _from_numpy(name: str, arr: Any) -> hurray.Tensor:
    np = _need_numpy()
    if arr.dtype.hasobject or arr.dtype.kind in "USVOMm":
        raise ConversionError(f"array {name!r} has dtype {arr.dtype}, which has no Hurray "
                              "element type")
    try:
        # np.require keeps a 0-d array 0-d (ascontiguousarray would make it 1-d)
        return hurray.from_numpy(np.require(arr, requirements="C"))
    except (TypeError, hurray.HurrayError) as e:
        raise ConversionError(f"array {name!r}: {e}") from e


def _read_torch(path: _StrPath, progress: Progress) -> Bundle:
    """A checkpoint (torch.load(weights_only=True)): tensors at any depth of nested dicts
    become '<outer>.<inner>' names; other leaves (epoch numbers, strings) become metadata."""
    import torch
    obj = torch.load(path, map_location="cpu", weights_only=True)
    b = Bundle()

    def walk(prefix: str, v: object) -> None:
        if isinstance(v, torch.Tensor):
            if v.is_sparse or v.layout != torch.strided:
                raise ConversionError(f"tensor {prefix!r} has layout {v.layout}; only dense "
                                      "tensors convert")
            b.tensors.append((prefix, hurray.from_torch(v.detach().contiguous())))
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else str(k), x)
        elif prefix:
            b.metadata[prefix] = _kv_ok(prefix, v, os.fspath(path))
        else:
            raise ConversionError(f"{os.fspath(path)}: a checkpoint of {type(v).__name__}, not a "
                                  "dict of tensors")

    walk("", obj)
    names = set(b.names())
    clash = names & set(b.metadata)
    if clash:
        raise ConversionError(f"{os.fspath(path)}: {sorted(clash)[0]!r} is both a tensor and a "
                              "value")
    return b


# ---- GGUF ------------------------------------------------------------------------------------------

QK = 32  # the block length of Q8_0 and Q4_0


def _gguf_type_text(types: Iterable[Any]) -> str:
    return "/".join(t.name for t in types)


def _read_gguf(path: _StrPath, progress: Progress) -> Bundle:
    import gguf
    np = _need_numpy()
    r = gguf.GGUFReader(os.fspath(path))
    b = Bundle()
    types: list[list[str]] = []
    for key, field in r.fields.items():
        if key.startswith("GGUF."):  # the header's own counts, not metadata
            continue
        try:
            v = field.contents()
        except UnicodeDecodeError as e:
            raise ConversionError(f"GGUF metadata {key!r} holds a string that is not UTF-8") from e
        b.metadata[key] = _kv_ok(key, v, os.fspath(path))
        types.append([key, _gguf_type_text(field.types)])
    if types:
        b.metadata[GGUF_TYPES_KEY] = types
    Q = gguf.GGMLQuantizationType
    dense = {Q.F32: "float32", Q.F16: "float16", Q.F64: "float64", Q.BF16: "bfloat16",
             Q.I8: "int8", Q.I16: "int16", Q.I32: "int32", Q.I64: "int64"}
    progress.start(sum(int(t.n_bytes) for t in r.tensors), "read gguf")
    for t in r.tensors:
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))  # GGUF lists ne[0] first
        raw = np.ascontiguousarray(t.data).view(np.uint8).reshape(-1)
        if t.tensor_type in dense:
            ht = hurray.Tensor(raw.tobytes(), getattr(hurray.dtype, dense[t.tensor_type]), shape)
        elif t.tensor_type in (Q.Q8_0, Q.Q4_0):
            ht = _gguf_block_to_hurray(t.name, t.tensor_type == Q.Q8_0, raw, shape)
        elif t.tensor_type == Q.MXFP4:
            ht = _gguf_mxfp4_to_hurray(t.name, raw, shape)
        else:
            raise ConversionError(
                f"GGUF tensor {t.name!r} is {t.tensor_type.name}, which Hurray's quantization "
                "schemes cannot express exactly (Q8_0 and Q4_0 map onto block_affine, MXFP4 onto "
                "mx; requantize the model to one of those, or to F16/BF16/F32, first)")
        b.tensors.append((t.name, ht))
        progress.update(int(t.n_bytes), t.name)
    progress.done()
    return b


def _gguf_block_to_hurray(name: str, q8: bool, raw: Any, shape: tuple[int, ...]) -> hurray.Tensor:
    """Q8_0 -> int8 codes; Q4_0 -> int4 codes q - 8 (packed, element 0 in the low nibble,
    memory-layout.md § Sub-byte packing); the blocks' float16 scales in block order, which is
    block_affine's scale array along the last axis (quantization.md HR-QUANT-12)."""
    np = _need_numpy()
    if not shape or shape[-1] % QK:
        raise ConversionError(f"GGUF tensor {name!r}: the last extent {shape[-1:]} is not a "
                              f"multiple of {QK}")
    blk = 2 + (QK if q8 else QK // 2)
    blocks = raw.reshape(-1, blk)
    scales = np.ascontiguousarray(blocks[:, :2]).tobytes()  # the float16 d, bit for bit
    qs = blocks[:, 2:]
    if q8:
        codes = np.ascontiguousarray(qs).tobytes()  # int8 qs[j] is element j
        dt = hurray.int8
    else:
        q = _nibbles_to_sequential(qs)  # elements 0..15, then 16..31
        c = q.astype(np.uint8) ^ 8  # q in 0..15 -> the nibble of the int4 code q - 8
        codes = _pack_sequential(c).tobytes()
        dt = hurray.int4
    return hurray.Tensor([codes, scales], dt, shape,
                         quantization=hurray.BlockAffine(len(shape) - 1, QK, hurray.float16))


def _nibbles_to_sequential(qs: Any) -> Any:
    """GGUF's 4-bit block order (element j in the low nibble of byte j, element j + 16 in its
    high nibble) -> one code per element, in element order."""
    np = _need_numpy()
    return np.concatenate([qs & 0x0F, qs >> 4], axis=1)


def _pack_sequential(c: Any) -> Any:
    """Codes (uint8 < 16, in element order, an even count per row) -> packed nibbles, element 0
    in the low nibble (memory-layout.md § Sub-byte packing)."""
    return (c[..., 0::2] | (c[..., 1::2] << 4)).astype("uint8")


def _unpack_sequential(packed: Any, n: int) -> Any:
    np = _need_numpy()
    c = np.empty(n, dtype=np.uint8)
    c[0::2], c[1::2] = packed & 0x0F, packed >> 4
    return c


def _gguf_mxfp4_to_hurray(name: str, raw: Any, shape: tuple[int, ...]) -> hurray.Tensor:
    """MXFP4 (blocks of 32: one E8M0 byte e, 16 bytes of E2M1 codes in GGUF's nibble order;
    value = E2M1(q) * 2^(e - 127)) -> float4_e2m1fn codes with the mx scheme
    (quantization.md HR-QUANT-14): the same codes in element order, the e bytes as the
    float8_e8m0fnu scales. GGUF reads e = 0xFF as 2^128, MX as NaN: such a block is refused."""
    np = _need_numpy()
    if not shape or shape[-1] % QK:
        raise ConversionError(f"GGUF tensor {name!r}: the last extent {shape[-1:]} is not a "
                              f"multiple of {QK}")
    blocks = raw.reshape(-1, 1 + QK // 2)
    if (blocks[:, 0] == 0xFF).any():
        raise ConversionError(f"GGUF tensor {name!r}: an MXFP4 block scale 0xFF, which GGUF reads "
                              "as 2^128 and MX (Hurray's mx scheme) as NaN")
    codes = _pack_sequential(_nibbles_to_sequential(blocks[:, 1:])).tobytes()
    return hurray.Tensor([codes, blocks[:, 0].tobytes()], hurray.float4_e2m1fn, shape,
                         quantization=hurray.MX(len(shape) - 1, QK))


def _hurray_block_to_gguf(name: str, t: hurray.Tensor) -> tuple[Any, Any] | None:
    """The inverse of _gguf_block_to_hurray: (GGML type, uint8 block bytes shaped by row),
    or None when `t` is not a Q8_0/Q4_0-shaped block_affine tensor."""
    import gguf
    np = _need_numpy()
    q = t.quantization
    shape = _extents(name, t)
    if (isinstance(q, hurray.MX) and q.block_size == QK and q.axis == t.ndim - 1
            and t.dtype == hurray.float4_e2m1fn and t.layout.name == "row_major"
            and t.byte_offset == 0 and shape and shape[-1] % QK == 0):
        n = math.prod(shape)
        e = np.frombuffer(t.buffer(1), dtype=np.uint8, count=n // QK).reshape(-1, 1)
        if (e == 0xFF).any():
            raise ConversionError(f"tensor {name!r}: an mx block scale 0xFF (NaN), which GGUF's "
                                  "MXFP4 would read as 2^128")
        c = _unpack_sequential(np.frombuffer(t.buffer(0), dtype=np.uint8, count=n // 2), n)
        c = c.reshape(-1, QK)
        qs = c[:, :QK // 2] | (c[:, QK // 2:] << 4)
        blocks = np.concatenate([e, qs], axis=1)
        rows = tuple(shape[:-1]) + (shape[-1] // QK * blocks.shape[1],)
        return gguf.GGMLQuantizationType.MXFP4, np.ascontiguousarray(blocks).reshape(rows)
    if not (isinstance(q, hurray.BlockAffine) and q.block_size == QK and q.axis == t.ndim - 1
            and q.zero_point_dtype is None and q.scale_dtype == hurray.float16
            and t.dtype in (hurray.int8, hurray.int4) and t.layout.name == "row_major"
            and t.byte_offset == 0 and shape and shape[-1] % QK == 0):
        return None
    n = math.prod(shape)
    nblocks = n // QK
    scales = np.frombuffer(t.buffer(1), dtype=np.uint8, count=2 * nblocks).reshape(nblocks, 2)
    if t.dtype == hurray.int8:
        qs = np.frombuffer(t.buffer(0), dtype=np.uint8, count=n).reshape(nblocks, QK)
        kind = gguf.GGMLQuantizationType.Q8_0
    else:
        c = _unpack_sequential(np.frombuffer(t.buffer(0), dtype=np.uint8, count=n // 2), n)
        qv = (c ^ 8).reshape(nblocks, QK)  # the nibble of int4 code k -> q = k + 8 (mod 16)
        qs = qv[:, :QK // 2] | (qv[:, QK // 2:] << 4)
        kind = gguf.GGMLQuantizationType.Q4_0
    blocks = np.concatenate([scales, qs], axis=1)
    rows = tuple(shape[:-1]) + (shape[-1] // QK * blocks.shape[1],)
    return kind, np.ascontiguousarray(blocks).reshape(rows)


# ==== writers =====================================================================================

def write(bundle: Bundle, path: _StrPath, fmt: str | None = None,
          progress: Progress | None = None, metadata_json: bool = False) -> None:
    fmt = guess_format(path, fmt)
    _WRITERS[fmt](bundle, path, _progress(progress), metadata_json)


def _write_hurray(b: Bundle, path: _StrPath, progress: Progress, metadata_json: bool) -> None:
    progress.start(len(b.tensors), "write hurray")
    hurray.save(path, dict(b.tensors), kv=b.metadata or None)
    progress.update(len(b.tensors))
    progress.done()


def _write_stream(b: Bundle, path: _StrPath, progress: Progress, metadata_json: bool) -> None:
    """Each tensor as one item named by its name (stream.md HR-STREAM-17). A stream has no
    file-wide metadata: refused rather than dropped."""
    if b.metadata:
        raise ConversionError(f"a stream has no file-wide metadata; the input has "
                              f"{len(b.metadata)} entries (first: {next(iter(b.metadata))!r})")
    progress.start(len(b.tensors), "write stream")
    with open(path, "wb") as f, hurray.StreamWriter(f) as w:
        for name, t in b.tensors:
            w.write(t, name=name)
            progress.update(1, name)
    progress.done()


def _string_metadata(b: Bundle, what: str, metadata_json: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in b.metadata.items():
        if isinstance(v, str):
            out[k] = v
        elif metadata_json and not isinstance(v, bytes):
            out[k] = json.dumps(v)
        else:
            raise ConversionError(
                f"metadata {k!r} is a {type(v).__name__}; {what} metadata holds strings only "
                "(--metadata-json writes other values as JSON text)")
    return out


def _write_safetensors(b: Bundle, path: _StrPath, progress: Progress,
                       metadata_json: bool) -> None:
    import safetensors
    np = _need_numpy()
    md = _string_metadata(b, "safetensors", metadata_json)
    specs: dict[str, Any] = {}
    keep: list[Any] = []
    progress.start(len(b.tensors), "write safetensors")
    for name, t in b.tensors:
        data = dense_bytes(name, t)
        if t.dtype.name not in ST_WRITE:
            raise ConversionError(f"tensor {name!r} has element type {t.dtype.name}, which "
                                  "safetensors does not have")
        arr = np.frombuffer(data, dtype=np.uint8) if len(data) else np.zeros(1, np.uint8)
        keep.append(arr)
        specs[name] = safetensors.TensorSpec(dtype=t.dtype.name, shape=list(_extents(name, t)),
                                             data_ptr=int(arr.ctypes.data), data_len=len(data))
        progress.update(1, name)
    safetensors.serialize_file(specs, os.fspath(path), metadata=md or None)
    del keep
    progress.done()


# Hurray element types that NumPy has (by the same name) without ml_dtypes
NUMPY_NAMES = {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"}


def _to_numpy(name: str, t: _Item) -> Any:
    np = _need_numpy()
    data = dense_bytes(name, t)
    dt = np.dtype(t.dtype.name) if t.dtype.name in NUMPY_NAMES else None
    if dt is None:
        raise ConversionError(f"tensor {name!r} has element type {t.dtype.name}, which a .npy "
                              "array cannot hold without pickling")
    return np.frombuffer(data, dtype=dt).reshape(t.shape)


def _write_npy(b: Bundle, path: _StrPath, progress: Progress, metadata_json: bool) -> None:
    np = _need_numpy()
    if len(b.tensors) != 1:
        raise ConversionError(f"a .npy file holds one array; the input has {len(b.tensors)} "
                              "tensors (convert to .npz)")
    if b.metadata:
        raise ConversionError(f"a .npy file has no metadata; the input has "
                              f"{len(b.metadata)} entries (first: {next(iter(b.metadata))!r})")
    name, t = b.tensors[0]
    with open(path, "wb") as f:
        np.save(f, _to_numpy(name, t), allow_pickle=False)


def _write_npz(b: Bundle, path: _StrPath, progress: Progress, metadata_json: bool) -> None:
    np = _need_numpy()
    if b.metadata:
        raise ConversionError(f"an .npz file has no metadata; the input has "
                              f"{len(b.metadata)} entries (first: {next(iter(b.metadata))!r})")
    arrays: dict[str, Any] = {}
    progress.start(len(b.tensors), "write npz")
    for name, t in b.tensors:
        arrays[name] = _to_numpy(name, t)
        progress.update(1, name)
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    progress.done()


def _write_torch(b: Bundle, path: _StrPath, progress: Progress, metadata_json: bool) -> None:
    import torch
    state: dict[str, Any] = {}
    progress.start(len(b.tensors), "write torch")
    for name, t in b.tensors:
        if isinstance(t, hurray.Composite) or t.quantization is not None:
            dense_bytes(name, t)  # raises, naming the tensor
        try:
            assert isinstance(t, hurray.Tensor)  # dense_bytes refused the others
            state[name] = t.to_torch(copy=True)
        except (hurray.HurrayError, TypeError, BufferError) as e:
            raise ConversionError(f"tensor {name!r}: {e}") from e
        progress.update(1, name)
    for k, v in b.metadata.items():
        if k in state:
            raise ConversionError(f"metadata {k!r} has the name of a tensor")
        state[k] = v
    torch.save(state, path)
    progress.done()


def _gguf_value_type(gguf: Any, key: str, v: object,
                     recorded: Mapping[str, str]) -> tuple[Any, Any]:
    """(value type, sub type) for GGUFWriter.add_key_value: the recorded GGUF type when the
    metadata came from GGUF, else the natural one."""
    T = gguf.GGUFValueType
    if key in recorded:
        parts = [T[p] for p in recorded[key].split("/")]
        return parts[0], (parts[-1] if parts[0] == T.ARRAY else None)

    def scalar(x: object) -> Any:
        if isinstance(x, bool):
            return T.BOOL
        if isinstance(x, int):
            return T.INT64
        if isinstance(x, float):
            return T.FLOAT64
        if isinstance(x, str):
            return T.STRING
        raise ConversionError(f"metadata {key!r} holds a {type(x).__name__}, which GGUF "
                              "has no type for")

    if isinstance(v, bytes):
        return T.ARRAY, T.UINT8
    if isinstance(v, list):
        if not v:
            raise ConversionError(f"metadata {key!r} is an empty list; GGUF has no empty arrays")
        subs = {scalar(x) for x in v}
        if len(subs) > 1:
            raise ConversionError(f"metadata {key!r} is a list of mixed types; GGUF arrays "
                                  "hold one type")
        return T.ARRAY, (subs.pop() if subs else T.INT64)
    return scalar(v), None


def _write_gguf(b: Bundle, path: _StrPath, progress: Progress, metadata_json: bool) -> None:
    import gguf
    np = _need_numpy()
    md = dict(b.metadata)
    types = md.pop(GGUF_TYPES_KEY, [])
    recorded = {k: t for k, t in types}
    # the GGUF file's own key order where it was recorded (a Hurray KV map is sorted)
    order = [k for k, _ in types if k in md] + [k for k in md if k not in recorded]
    arch = md.get("general.architecture", "hurray")
    w = gguf.GGUFWriter(os.fspath(path), arch)  # writes general.architecture first
    md.pop("general.architecture", None)
    for k in order:
        if k not in md:
            continue
        v = md[k]
        if k == "general.alignment":  # the data layout follows it
            w.add_custom_alignment(int(v))
            continue
        vt, st = _gguf_value_type(gguf, k, v, recorded)
        if isinstance(v, bytes):
            v = list(v)
        w.add_key_value(k, v, vt, sub_type=st)
    Q = gguf.GGMLQuantizationType
    dense = {"float32": (np.float32, None), "float16": (np.float16, None),
             "float64": (np.float64, None), "int8": (np.int8, None), "int16": (np.int16, None),
             "int32": (np.int32, None), "int64": (np.int64, None),
             "bfloat16": (np.uint8, Q.BF16)}
    progress.start(len(b.tensors), "write gguf")
    for name, t in b.tensors:
        if isinstance(t, hurray.Tensor) and t.quantization is not None:
            got = _hurray_block_to_gguf(name, t)
            if got is None:
                raise ConversionError(
                    f"tensor {name!r} is quantized ({_quant_text(t.quantization)}); GGUF "
                    "expresses block_affine only as Q8_0 (int8) or Q4_0 (int4): blocks of 32 "
                    "along the last axis, float16 scales, no zero point; and mx only as MXFP4 "
                    "(float4_e2m1fn along the last axis)")
            kind, arr = got
            w.add_tensor(name, arr, raw_dtype=kind)
        else:
            data = dense_bytes(name, t)
            if t.dtype.name not in dense:
                raise ConversionError(f"tensor {name!r} has element type {t.dtype.name}, which "
                                      "GGUF does not have")
            npt, raw = dense[t.dtype.name]
            arr = np.frombuffer(data, dtype=npt)
            if raw is None:
                w.add_tensor(name, arr.reshape(t.shape))
            else:  # bfloat16: its bytes, by row
                shape = _extents(name, t)
                rows = shape[:-1] + (shape[-1] * 2,) if shape else (2,)
                w.add_tensor(name, arr.reshape(rows), raw_dtype=raw)
        progress.update(1, name)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    progress.done()


_READERS: dict[str, Callable[[_StrPath, Progress], Bundle]] = {
    "hurray": _read_hurray, "hurray-stream": _read_stream,
    "safetensors": _read_safetensors, "npy": _read_npy, "npz": _read_npz,
    "torch": _read_torch, "gguf": _read_gguf
}
_WRITERS: dict[str, Callable[[Bundle, _StrPath, Progress, bool], None]] = {
    "hurray": _write_hurray, "hurray-stream": _write_stream,
    "safetensors": _write_safetensors, "npy": _write_npy, "npz": _write_npz,
    "torch": _write_torch, "gguf": _write_gguf
}


def convert(src: _StrPath, dst: _StrPath, *, src_format: str | None = None,
            dst_format: str | None = None, progress: Progress | None = None,
            metadata_json: bool = False) -> Bundle:
    """Reads `src` and writes its tensors and metadata to `dst` (formats from the names,
    else given). Returns the Bundle that was written."""
    dst_fmt = guess_format(dst, dst_format)
    b = read(src, src_format, progress)
    write(b, dst, dst_fmt, progress, metadata_json)
    return b


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use `python -m hurray convert IN OUT`")
