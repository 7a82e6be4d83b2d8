#!/usr/bin/env python3
"""The ```python blocks of the user guide (docs/guide/*.md).

Used by python/tests/test_guide.py (which runs them) and ci/typecheck.py (which type-checks
them). A block is a fence opened by a line that is exactly ```python (after indentation)
and closed by the next ``` at the same indentation; other fences (```sh, ```py, plain)
are prose. Standard library only.

    guide_blocks.py OUTDIR      write one <page>.py per page (blocks in order, each at the
                                line it has in the page, so errors point at the Markdown)
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide"


class Block(NamedTuple):
    line: int  # 1-based line of the block's first code line in the page
    code: str


def python_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        indent = len(lines[i]) - len(stripped)
        if stripped.startswith("```"):
            lang = stripped[3:].strip()
            j = i + 1
            while j < len(lines) and not (lines[j].strip() == "```"
                                          and len(lines[j]) - len(lines[j].lstrip()) == indent):
                j += 1
            if j == len(lines):
                raise ValueError(f"line {i + 1}: unclosed code fence")
            if lang == "python":
                body = [ln[indent:] if ln[:indent].strip() == "" else ln for ln in lines[i + 1:j]]
                blocks.append(Block(i + 2, "\n".join(body) + "\n"))
            i = j + 1
            continue
        i += 1
    return blocks


def page_source(text: str) -> str:
    """The page's blocks as one module, each block at its own line number."""
    out: list[str] = []
    for b in python_blocks(text):
        while len(out) < b.line - 1:
            out.append("")
        out.extend(b.code.splitlines())
    return "\n".join(out) + "\n"


def write_pages(pages: list[Path], outdir: Path) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for page in pages:
        dest = outdir / (page.stem.replace("-", "_") + ".py")
        dest.write_text(page_source(page.read_text(encoding="utf-8")), encoding="utf-8")
        written.append(dest)
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    for p in write_pages(sorted(GUIDE.glob("*.md")), Path(argv[1])):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
