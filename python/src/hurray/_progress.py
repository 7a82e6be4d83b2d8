"""The bar behind ``progress=True`` (hurray.save, hurray.load and the framework modules).

``bar(what, path)`` returns a callable ``(done_bytes, total_bytes)``: tqdm's bar when tqdm is
installed (never required), else a one-line bar redrawn on stderr. The bar closes itself when
``done == total``.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def bar(what: str, path: object = None) -> Callable[[int, int], None]:
    label = f"{what} {path}" if path is not None else what
    try:
        import tqdm  # optional: used when installed, never required
    except ImportError:
        return _StderrBar(label)
    return _TqdmBar(tqdm.tqdm, label)


class _TqdmBar:
    def __init__(self, tqdm: Callable[..., Any], label: str) -> None:
        self._bar = tqdm(total=0, unit="B", unit_scale=True, unit_divisor=1024, desc=label,
                         leave=False)
        self._done = 0

    def __call__(self, done: int, total: int) -> None:
        if self._bar.total != total:
            self._bar.total = total
        self._bar.update(done - self._done)
        self._done = done
        if done >= total:
            self._bar.close()


class _StderrBar:
    WIDTH = 30

    def __init__(self, label: str) -> None:
        self._label = label
        self._shown = -1

    def __call__(self, done: int, total: int) -> None:
        frac = 1.0 if total == 0 else done / total
        filled = int(frac * self.WIDTH)
        if filled == self._shown and done < total:
            return
        self._shown = filled
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\r{self._label} [{'#' * filled}{'.' * (self.WIDTH - filled)}] "
                         f"{done / 2**20:.1f}/{total / 2**20:.1f} MiB{end}")
        sys.stderr.flush()
