"""hurray.numpy: NumPy arrays to and from hurray files, in the style of safetensors.numpy.

``save_file(tensors, path, metadata=None)`` writes ``{name: numpy.ndarray}`` (arrays are
ingested as ``hurray.from_numpy`` does; a non-contiguous array is stored as a compact copy of
its elements); ``load_file(path)`` returns ``{name: numpy.ndarray}``; ``save``/``load`` do the
same in memory (bytes). ``metadata`` is the file's KV map (``hurray.load_kv`` reads it back).
Importing this module imports NumPy (``import hurray`` alone does not).
"""
import numpy as _np

import hurray as _hurray

__all__ = ["save_file", "load_file", "save", "load"]


def save_file(tensors, filename, metadata=None, *, progress=None):
    """Write ``{name: numpy.ndarray}`` to ``filename`` (``hurray.save`` with arrays)."""
    _hurray.save(filename, tensors, metadata, progress=progress)


def load_file(filename, *, mmap=False):
    """``{name: numpy.ndarray}`` of every top-level tensor of ``filename``.

    Each array shares the loaded tensor's own memory (no second copy)."""
    return {k: _np.asarray(v) for k, v in _hurray.load(filename, mmap=mmap).items()}


def save(tensors, metadata=None):
    """The bytes ``save_file`` would write."""
    return _hurray.save_bytes(tensors, metadata)


def load(data):
    """``load_file`` of a file held in memory."""
    return {k: _np.asarray(v) for k, v in _hurray.load_bytes(data).items()}
