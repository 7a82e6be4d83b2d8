"""hurray.torch: PyTorch tensors and modules to and from hurray files, in the style of
safetensors.torch.

- ``save_file(tensors, filename, metadata=None)`` writes ``{name: torch.Tensor}``. Each tensor
  is detached, brought to the host and, when it is a non-contiguous view, stored as a compact
  copy of its own elements (never its whole storage); then ingested as ``hurray.from_torch``
  does. Two names for one tensor are two entries (its bytes twice): ``save_model`` is the one
  that stores tied weights once.
- ``load_file(filename, device="cpu")`` returns ``{name: torch.Tensor}`` on ``device``.
- ``progress=`` (a callable ``(done_bytes, total_bytes)`` or ``True`` for a bar on stderr) and,
  on the writers, ``durable=`` are ``hurray.save`` / ``hurray.load``'s: ``durable=False`` skips
  the flush to stable storage before the rename (a crash may then leave a partial file under
  the name; readers of a running system still see the old file or the whole new one).
- ``save(tensors, metadata=None) -> bytes`` / ``load(data, device="cpu")``: the same in memory.
- ``save_model(model, filename, metadata=None)`` / ``load_model(model, filename, strict=True,
  device="cpu")`` for an ``nn.Module``'s ``state_dict``. Tied weights (names in the state dict
  that are the very same tensor view: same storage, offset, shape, strides and dtype, e.g. an
  embedding tied to the output projection) are stored ONCE, under the first name in
  ``state_dict`` order, and the other names are recorded as aliases in the file's KV map
  (``hurray.torch.alias_names`` / ``hurray.torch.alias_targets``, two lists of str of equal
  length); ``load_model`` puts every alias back before ``load_state_dict``, so a strict load
  of the same architecture succeeds and the weights stay tied. Tensors that only overlap in
  memory (different views of one storage) are stored separately, each compactly.

``metadata`` is the file's KV map (str keys; bool, int, float, str, bytes or lists of these),
read back by ``hurray.load_kv``; keys starting with ``hurray.torch.`` are reserved.
Importing this module imports PyTorch (``import hurray`` alone does not).
"""
from __future__ import annotations

from collections.abc import Callable as _Callable
from collections.abc import Mapping as _Mapping
from typing import TYPE_CHECKING as _TYPE_CHECKING

import torch as _torch

import hurray as _hurray

__all__ = ["save_file", "load_file", "save", "load", "save_model", "load_model"]

ALIAS_NAMES = "hurray.torch.alias_names"
ALIAS_TARGETS = "hurray.torch.alias_targets"
_RESERVED = "hurray.torch."

if _TYPE_CHECKING:  # names of the stubs (_hurray.pyi), for annotations only
    from hurray._hurray import _BufferLike, _KvValue, _Path

    _Device = str | _torch.device | None
    _Progress = bool | _Callable[[int, int], object] | None


def _to_torch(
    loaded: _Mapping[str, _hurray.Tensor | _hurray.Composite], device: _Device
) -> dict[str, _torch.Tensor]:
    out: dict[str, _torch.Tensor] = {}
    for name, value in loaded.items():
        if not isinstance(value, _hurray.Tensor):
            raise TypeError(
                f"hurray.torch: entry {name!r} is a {type(value).__module__}."
                f"{type(value).__qualname__}, not a tensor; read it with hurray.load"
            )
        t = value.to_torch()
        out[name] = t if device is None or str(device) == "cpu" else t.to(device)
    return out


def save_file(
    tensors: _Mapping[str, _torch.Tensor],
    filename: _Path,
    metadata: _Mapping[str, _KvValue] | None = None,
    *,
    progress: _Progress = None,
    durable: bool = True,
) -> None:
    """Write ``{name: torch.Tensor}`` to ``filename`` (``hurray.save`` with torch tensors)."""
    _hurray.save(filename, tensors, metadata, progress=progress, durable=durable)


def load_file(
    filename: _Path, device: _Device = "cpu", *, mmap: bool = False, progress: _Progress = None
) -> dict[str, _torch.Tensor]:
    """``{name: torch.Tensor}`` of every top-level tensor of ``filename``, on ``device``.

    On the CPU each tensor shares the loaded tensor's own memory (no second copy).
    ``progress`` is ``hurray.load``'s."""
    return _to_torch(_hurray.load(filename, mmap=mmap, progress=progress), device)


def save(
    tensors: _Mapping[str, _torch.Tensor], metadata: _Mapping[str, _KvValue] | None = None
) -> bytes:
    """The bytes ``save_file`` would write."""
    return _hurray.save_bytes(tensors, metadata)


def load(data: _BufferLike, device: _Device = "cpu") -> dict[str, _torch.Tensor]:
    """``load_file`` of a file held in memory."""
    return _to_torch(_hurray.load_bytes(data), device)


def _view_key(t: _torch.Tensor) -> tuple[object, ...]:
    return (t.device, t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape),
            tuple(t.stride()), t.dtype)


def _untie(
    state_dict: _Mapping[str, object],
) -> tuple[dict[str, _torch.Tensor], dict[str, str]]:
    """(tensors stored, aliases {alias: target}): each tensor view once, first name wins."""
    first: dict[tuple[object, ...], str] = {}
    tensors: dict[str, _torch.Tensor] = {}
    aliases: dict[str, str] = {}
    for name, t in state_dict.items():
        if not isinstance(t, _torch.Tensor):
            raise TypeError(
                f"hurray.torch.save_model: state_dict entry {name!r} is a "
                f"{type(t).__module__}.{type(t).__qualname__}, not a torch.Tensor"
            )
        key = _view_key(t) if t.numel() > 0 else None
        if key is not None and key in first:
            aliases[name] = first[key]
            continue
        if key is not None:
            first[key] = name
        tensors[name] = t
    return tensors, aliases


def save_model(
    model: _torch.nn.Module,
    filename: _Path,
    metadata: _Mapping[str, _KvValue] | None = None,
    *,
    progress: _Progress = None,
    durable: bool = True,
) -> None:
    """Write ``model.state_dict()`` to ``filename``, tied weights once (see the module doc)."""
    tensors, aliases = _untie(model.state_dict())
    kv: dict[str, _KvValue] = dict(metadata or {})
    reserved = [k for k in kv if str(k).startswith(_RESERVED)]
    if reserved:
        raise ValueError(
            f"hurray.torch.save_model: metadata keys starting with {_RESERVED!r} are reserved "
            f"(found {reserved[0]!r})"
        )
    if aliases:
        kv[ALIAS_NAMES] = list(aliases)
        kv[ALIAS_TARGETS] = list(aliases.values())
    _hurray.save(filename, tensors, kv or None, progress=progress, durable=durable)


def load_model(
    model: _torch.nn.Module,
    filename: _Path,
    strict: bool = True,
    device: _Device = "cpu",
    *,
    progress: _Progress = None,
) -> tuple[list[str], list[str]]:
    """Load a file ``save_model`` wrote into ``model`` (``load_state_dict``), tied weights
    restored from their aliases. Returns ``(missing_keys, unexpected_keys)``."""
    state = load_file(filename, device=device, progress=progress)
    kv = _hurray.load_kv(filename)
    names, targets = kv.get(ALIAS_NAMES, []), kv.get(ALIAS_TARGETS, [])
    if not (isinstance(names, list) and isinstance(targets, list)):
        raise _hurray.FileError(
            f"hurray.torch.load_model: {filename!s}: {ALIAS_NAMES} and {ALIAS_TARGETS} must be "
            "lists of str"
        )
    if len(names) != len(targets):
        raise _hurray.FileError(
            f"hurray.torch.load_model: {filename!s}: {ALIAS_NAMES} and {ALIAS_TARGETS} differ "
            f"in length ({len(names)} and {len(targets)})"
        )
    for alias, target in zip(names, targets):
        if not (isinstance(alias, str) and isinstance(target, str)):
            raise _hurray.FileError(
                f"hurray.torch.load_model: {filename!s}: {ALIAS_NAMES} and {ALIAS_TARGETS} must "
                "be lists of str"
            )
        if target not in state:
            raise _hurray.FileError(
                f"hurray.torch.load_model: {filename!s}: alias {alias!r} names {target!r}, "
                "which the file does not hold"
            )
        state[alias] = state[target]
    result = model.load_state_dict(state, strict=strict)
    return list(result.missing_keys), list(result.unexpected_keys)
