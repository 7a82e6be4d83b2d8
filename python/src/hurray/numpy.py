"""hurray.numpy: NumPy arrays to and from hurray files, in the style of safetensors.numpy.

``save_file(tensors, path, metadata=None)`` writes ``{name: numpy.ndarray}`` (arrays are
ingested as ``hurray.from_numpy`` does; a non-contiguous array is stored as a compact copy of
its elements); ``load_file(path)`` returns ``{name: numpy.ndarray}``; ``save``/``load`` do the
same in memory (bytes). ``metadata`` is the file's KV map (``hurray.load_kv`` reads it back).
``progress=`` (both file functions) and ``durable=`` (``save_file``) are ``hurray.save`` /
``hurray.load``'s: ``durable=False`` skips the flush to stable storage before the rename.
Importing this module imports NumPy (``import hurray`` alone does not).
"""
from __future__ import annotations

from collections.abc import Callable as _Callable
from collections.abc import Mapping as _Mapping
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

import numpy as _np
import numpy.typing as _npt

import hurray as _hurray

__all__ = ["save_file", "load_file", "save", "load"]

if _TYPE_CHECKING:  # names of the stubs (_hurray.pyi), for annotations only
    from hurray._hurray import _BufferLike, _KvValue, _Path


def save_file(
    tensors: _Mapping[str, _npt.NDArray[_Any]],
    filename: _Path,
    metadata: _Mapping[str, _KvValue] | None = None,
    *,
    progress: bool | _Callable[[int, int], object] | None = None,
    durable: bool = True,
) -> None:
    """Write ``{name: numpy.ndarray}`` to ``filename`` (``hurray.save`` with arrays)."""
    _hurray.save(filename, tensors, metadata, progress=progress, durable=durable)


def load_file(
    filename: _Path,
    *,
    mmap: bool = False,
    progress: bool | _Callable[[int, int], object] | None = None,
) -> dict[str, _npt.NDArray[_Any]]:
    """``{name: numpy.ndarray}`` of every top-level tensor of ``filename``.

    Each array shares the loaded tensor's own memory (no second copy). ``progress`` is
    ``hurray.load``'s."""
    loaded = _hurray.load(filename, mmap=mmap, progress=progress)
    return {k: _np.asarray(v) for k, v in loaded.items()}


def save(
    tensors: _Mapping[str, _npt.NDArray[_Any]], metadata: _Mapping[str, _KvValue] | None = None
) -> bytes:
    """The bytes ``save_file`` would write."""
    return _hurray.save_bytes(tensors, metadata)


def load(data: _BufferLike) -> dict[str, _npt.NDArray[_Any]]:
    """``load_file`` of a file held in memory."""
    return {k: _np.asarray(v) for k, v in _hurray.load_bytes(data).items()}
