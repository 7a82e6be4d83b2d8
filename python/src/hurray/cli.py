"""The ``hurray`` command (also ``python -m hurray``).

    hurray inspect PATH [--json]          a Hurray file or stream: its tensors and metadata
    hurray verify PATH [--json]           every check the library has, exit status 0/1/2
    hurray convert IN OUT [--from F] [--to F] [--force] [--progress | --no-progress]
                                          between hurray, hurray-stream, safetensors, npy,
                                          npz, torch and gguf (hurray.convert)

Exit status: 0 success; 1 the input is invalid (verify), or cannot be converted (a tensor or
metadata entry the target cannot express, named in the message); 2 a usage error, a missing
or unreadable file, a missing package.
"""
from __future__ import annotations

import argparse
import base64
import json
import math
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

import hurray

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


class Progress:
    """A progress bar on stderr: when stderr is a terminal, or when asked (--progress)."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self.total = self.done_n = 0
        self.label = ""
        self.last = -1

    def start(self, total: int, label: str) -> None:
        self.total, self.done_n, self.label, self.last = max(int(total), 0), 0, label, -1
        self.update(0)

    def update(self, n: int, name: str = "") -> None:
        if not self.enabled:
            return
        self.done_n += int(n)
        pct = 100 if self.total == 0 else min(100, self.done_n * 100 // self.total)
        if pct == self.last and n:
            return
        self.last = pct
        width = 30
        fill = pct * width // 100
        name = (name[:28] + "…") if len(name) > 29 else name
        self.stream.write(f"\r{self.label:<18} [{'#' * fill}{'.' * (width - fill)}] {pct:3d}% "
                          f"{name:<30}")
        self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


# ---- describing tensors ------------------------------------------------------------------------

def _shape(shape: Iterable[int | None]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _quant(q: hurray.Quantization | None) -> str | None:
    if q is None:
        return None
    return repr(q).replace("hurray.", "")


def _nbytes(t: hurray.Tensor | hurray.Composite) -> int:
    if isinstance(t, hurray.Composite):
        return sum(_nbytes(m) for m in t.members)
    return sum(h.size for h in t.buffer_handles)


def describe(name: str, t: hurray.Tensor | hurray.Composite) -> dict[str, Any]:
    """A JSON-able description of a tensor or composite (members nested)."""
    d: dict[str, Any] = {
        "name": name, "kind": "composite" if isinstance(t, hurray.Composite) else "tensor",
        "dtype": t.dtype.name, "shape": list(t.shape), "layout": t.layout.name,
        "quantization": None, "nbytes": _nbytes(t), "device": t.device.kind}
    if isinstance(t, hurray.Composite):
        d["rule"] = t.composition_rule
        d["members"] = [describe(f"{name}.{i}", m) for i, m in enumerate(t.members)]
    else:
        d["quantization"] = _quant(t.quantization)
        d["buffers"] = [h.size for h in t.buffer_handles]
    return d


def _json_value(v: object) -> object:
    """KV values as JSON: bytes as {"bytes": base64}, floats that JSON lacks as strings."""
    if isinstance(v, bytes):
        return {"bytes": base64.b64encode(v).decode("ascii")}
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, list):
        return [_json_value(x) for x in v]
    return v


def _value_text(v: object, limit: int = 60) -> str:
    if isinstance(v, list):
        text = "[" + ", ".join(_value_text(x, 20) for x in v[:8]) + (", …" if len(v) > 8 else "") \
               + "]" + (f" ({len(v)} items)" if len(v) > 8 else "")
    elif isinstance(v, bytes):
        text = f"<{len(v)} bytes>"
    else:
        text = repr(v)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _type_text(v: object) -> str:
    return {bool: "bool", int: "int", float: "float", str: "str", bytes: "bytes",
            list: "list"}.get(type(v), type(v).__name__)


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable: TiB returns")


def _table(rows: Sequence[Mapping[str, Any]], out: TextIO) -> None:
    cols = ["NAME", "DTYPE", "SHAPE", "LAYOUT", "QUANTIZATION", "BYTES"]
    cells = [cols]

    def add(d: Mapping[str, Any], indent: int) -> None:
        cells.append([" " * indent + d["name"], d["dtype"], _shape(d["shape"]),
                      d["layout"] + (f" ({d['rule']})" if d.get("rule") else ""),
                      d["quantization"] or "-", str(d["nbytes"])])
        for m in d.get("members", ()):
            add(m, indent + 2)

    for d in rows:
        add(d, 0)
    widths = [max(len(r[i]) for r in cells) for i in range(len(cols))]
    for r in cells:
        out.write("  ".join(c.ljust(w) if i < len(cols) - 1 else c.rjust(w)
                            for i, (c, w) in enumerate(zip(r, widths))).rstrip() + "\n")


def _metadata_lines(md: Mapping[str, object], out: TextIO, indent: str = "") -> None:
    if not md:
        out.write(f"{indent}(no metadata)\n")
        return
    w = max(len(k) for k in md)
    for k, v in md.items():
        out.write(f"{indent}{k.ljust(w)}  {_type_text(v):5}  {_value_text(v)}\n")


# ---- commands ------------------------------------------------------------------------------------

def _kind_of(path: str) -> str | None:
    """'hurray', 'hurray-stream' or None, from the magic; a missing or unreadable path raises
    its OSError (exit status 2)."""
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(b"HRRYFILE"):
        return "hurray"
    if head.startswith(b"HRSF"):
        return "hurray-stream"
    return None


def cmd_inspect(args: argparse.Namespace, out: TextIO) -> int:
    path = args.path
    kind = _kind_of(path)
    size = os.path.getsize(path)
    if kind == "hurray":
        tensors = hurray.load(path, mmap=True)
        md = hurray.load_kv(path)
        rows = [describe(n, t) for n, t in tensors.items()]
        if args.json:
            json.dump({"path": path, "format": "hurray", "size": size,
                       "metadata": {k: _json_value(v) for k, v in md.items()},
                       "tensors": rows}, out, indent=2)
            out.write("\n")
            return EXIT_OK
        out.write(f"{path}: Hurray file, {len(rows)} tensors, "
                  f"{_human(sum(r['nbytes'] for r in rows))} of data, {_human(size)} on disk\n\n")
        _table(rows, out)
        out.write("\nmetadata:\n")
        _metadata_lines(md, out, "  ")
        return EXIT_OK
    if kind == "hurray-stream":
        items: list[dict[str, Any]] = []
        with open(path, "rb") as f, hurray.StreamReader(f) as r:
            for i, it in enumerate(r.items()):
                d = describe(it.name if it.name is not None else f"#{i}", it.value)
                d["index"], d["named"] = i, it.name is not None
                d["metadata"] = it.metadata
                items.append(d)
            end = r.end
        if args.json:
            for d in items:
                d["metadata"] = {k: _json_value(v) for k, v in d["metadata"].items()}
            json.dump({"path": path, "format": "hurray-stream", "size": size, "end": end,
                       "items": items}, out, indent=2)
            out.write("\n")
            return EXIT_OK
        out.write(f"{path}: Hurray stream, {len(items)} items, "
                  f"{'finished (end frame)' if end == 'end_frame' else 'not finished (no end frame)'}"
                  "\n\n")
        _table(items, out)
        for d in items:
            if d["metadata"]:
                out.write(f"\nmetadata of {d['name']}:\n")
                _metadata_lines(d["metadata"], out, "  ")
        return EXIT_OK
    raise _Usage(f"{path}: not a Hurray file or stream (inspect reads those; `hurray convert` "
                 "reads the other formats)")


def _index_checks(name: str, t: hurray.Tensor | hurray.Composite,
                  problems: list[dict[str, Any]]) -> str | None:
    """The on-demand index checks (status INDEX): block_paged through the layout's
    validate_index_buffers, coo/csr/csc through the SciPy export, which runs libhurray's
    sparse check first."""
    if isinstance(t, hurray.Composite):
        for i, m in enumerate(t.members):
            _index_checks(f"{name}.{i}", m, problems)
        return None
    layout = t.layout
    lay = layout.name
    try:
        if isinstance(layout, hurray.BlockPagedLayout):
            layout.validate_index_buffers(t.buffer(1), t.buffer(2))
            return "index buffers"
        if lay in ("coo", "csr", "csc"):
            try:
                import scipy  # noqa: F401
            except ImportError:
                return f"not checked: index contents of a {lay} tensor need SciPy"
            t.to_scipy()
            return "index contents"
    except hurray.HurrayError as e:
        problems.append(_problem(e, name))
    return None


def _problem(e: hurray.HurrayError, tensor: str | None = None) -> dict[str, Any]:
    """A failure as verify reports it: the tensor (when known), the status, the field and
    offset the library named, its message."""
    return {"tensor": tensor, "error": type(e).__name__, "code": e.code,
            "field": getattr(e, "field", None), "offset": getattr(e, "offset", None),
            "message": str(e)}


def cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    """Opens the file or stream with every check libhurray has: the container (header,
    index, gaps, KV section), every descriptor's three validation tiers, and the index
    contents of block-paged and sparse tensors."""
    path = args.path
    kind = _kind_of(path)
    problems: list[dict[str, Any]] = []
    notes: list[str] = []
    count = 0
    try:
        if kind == "hurray":
            tensors = hurray.load(path, mmap=True)
            hurray.load_kv(path)
            count = len(tensors)
            for n, t in tensors.items():
                note = _index_checks(n, t, problems)
                if note and note.startswith("not checked"):
                    notes.append(f"{n}: {note}")
        elif kind == "hurray-stream":
            with open(path, "rb") as f, hurray.StreamReader(f) as r:
                for i, it in enumerate(r.items()):
                    count += 1
                    note = _index_checks(it.name or f"#{i}", it.value, problems)
                    if note and note.startswith("not checked"):
                        notes.append(f"{it.name or f'#{i}'}: {note}")
                if r.end != "end_frame":
                    notes.append("the stream has no end frame: its writer did not finish it")
        else:  # not a stream: the file reader says what is wrong (BAD_MAGIC for another format)
            kind = "hurray"
            count = len(hurray.load(path, mmap=True))
    except hurray.HurrayError as e:
        if e.code == "IO":  # the file could not be read: not a verdict on its bytes
            raise
        problems.append(_problem(e))
    ok = not problems
    if args.json:
        json.dump({"path": path, "format": kind, "valid": ok, "tensors": count,
                   "problems": problems, "notes": notes}, out, indent=2)
        out.write("\n")
    else:
        for p in problems:
            where = f"tensor {p['tensor']!r}, " if p["tensor"] else ""
            field = f"field {p['field']}" if p["field"] else "the file"
            at = f" at offset {p['offset']}" if p["offset"] is not None else ""
            out.write(f"{path}: INVALID: {where}{field}{at}: {p['code']}: {p['message']}\n")
        for n in notes:
            out.write(f"{path}: note: {n}\n")
        if ok:
            out.write(f"{path}: OK ({kind}, {count} {'items' if kind == 'hurray-stream' else 'tensors'})\n")
    return EXIT_OK if ok else EXIT_INVALID


def cmd_convert(args: argparse.Namespace, out: TextIO) -> int:
    from . import convert as cv
    dst_fmt = cv.guess_format(args.output, args.to_format)
    src_fmt = cv.guess_format(args.input, args.from_format, must_exist=True)
    if os.path.exists(args.output) and not args.force:
        raise _Usage(f"{args.output}: exists (--force replaces it)")
    if os.path.abspath(args.output) == os.path.abspath(args.input):
        raise _Usage("the output is the input")
    progress = Progress(enabled=True if args.progress else (False if args.no_progress else None))
    start = time.monotonic()
    b = cv.read(args.input, src_fmt, progress)
    tmp = args.output + ".hurray-convert.tmp"
    try:
        cv.write(b, tmp, dst_fmt, progress, metadata_json=args.metadata_json)
        os.replace(tmp, args.output)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    if not args.quiet:
        out.write(f"{args.input} ({src_fmt}) -> {args.output} ({dst_fmt}): {len(b.tensors)} "
                  f"tensors, {len(b.metadata)} metadata entries, "
                  f"{time.monotonic() - start:.1f} s\n")
    return EXIT_OK


class _Usage(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hurray", description="Inspect, verify and convert Hurray tensor files.",
        epilog="Exit status: 0 success, 1 invalid input or not convertible, 2 usage or I/O "
               "error.")
    p.add_argument("--version", action="version", version=f"hurray {hurray.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    i = sub.add_parser("inspect", help="list a Hurray file's or stream's tensors and metadata")
    i.add_argument("path")
    i.add_argument("--json", action="store_true", help="print JSON instead of a table")
    i.set_defaults(func=cmd_inspect)
    v = sub.add_parser("verify", help="check a Hurray file or stream completely "
                                      "(exit 0 valid, 1 invalid, 2 cannot read)")
    v.add_argument("path")
    v.add_argument("--json", action="store_true", help="print JSON")
    v.set_defaults(func=cmd_verify)
    from .convert import FORMATS
    c = sub.add_parser("convert", help="convert between hurray, hurray-stream, safetensors, "
                                       "npy, npz, torch and gguf")
    c.add_argument("input")
    c.add_argument("output")
    c.add_argument("--from", dest="from_format", choices=FORMATS,
                   help="the input's format (default: from its extension, else its magic)")
    c.add_argument("--to", dest="to_format", choices=FORMATS,
                   help="the output's format (default: from its extension)")
    c.add_argument("-f", "--force", action="store_true", help="replace an existing output")
    c.add_argument("--progress", action="store_true",
                   help="show a progress bar on stderr even when it is not a terminal")
    c.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    c.add_argument("--metadata-json", action="store_true",
                   help="write non-string metadata values as JSON text where the target "
                        "holds strings only (safetensors)")
    c.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    c.set_defaults(func=cmd_convert)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    out = sys.stdout
    from .convert import ConversionError, FormatError
    try:
        status: int = args.func(args, out)
        return status
    except (_Usage, FormatError) as e:
        sys.stderr.write(f"hurray {args.command}: {e}\n")
        return EXIT_USAGE
    except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
        sys.stderr.write(f"hurray {args.command}: {e}\n")
        return EXIT_USAGE
    except ConversionError as e:
        sys.stderr.write(f"hurray {args.command}: {e}\n")
        return EXIT_INVALID
    except ImportError as e:
        sys.stderr.write(f"hurray {args.command}: needs a package that is not installed: {e}\n")
        return EXIT_USAGE
    except hurray.HurrayError as e:
        is_io = getattr(e, "code", None) == "IO"
        sys.stderr.write(f"hurray {args.command}: {type(e).__name__}: {e}\n")
        return EXIT_USAGE if is_io else EXIT_INVALID
    except OSError as e:
        sys.stderr.write(f"hurray {args.command}: {e}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return 130
