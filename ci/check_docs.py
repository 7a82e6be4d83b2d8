#!/usr/bin/env python3
"""Docs that tell the truth about the repository (make docs-check).

Over every tracked Markdown file (and, for ids, every tracked C, header and
Python file), this fails on:

  links     a Markdown link to a path that does not exist, or that leaves the
            repository (`../` above the root, or anything under shared/);
  paths     a backticked repository path (`docs/spec/x.md`, `python/tools/y.py`,
            `src/hurray/...` from python/) that does not exist, or that points
            outside the repository;
  sections  a citation "<file>.md § <section>" whose file or section heading
            does not exist (a cited HR id must be defined in that file);
  ids       an HR-<AREA>-<n> id that docs/spec does not define, and a REQ_* id
            that docs/requirements/python-binding.md does not list;
  private   citations of the team's private requirement document ("seed §",
            "the seed") in Markdown: the repository states its requirements
            itself (docs/requirements/, docs/spec/);
  pip       a `pip install` of the distribution hurray that could reach the
            public index, where "hurray" is an unrelated project: it must use
            --no-index or --index-url (never --extra-index-url), or install a
            path (./python, a wheel or sdist file).

    check_docs.py            check, print every finding, exit 1 if any
Standard library only (git for the list of tracked files).
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "spec"
REQS = ROOT / "docs" / "requirements" / "python-binding.md"

# Where generated things live: paths under these need not exist in a clone.
GENERATED = ("build/", ".venv/", "dist/", "wheelhouse/", "python/build/", "$(BUILD)", "$(DIST)")
TOP = {"docs", "reference", "python", "vectors", "harness", "fuzz", "bench", "ci", ".ci",
       ".github", "src", "tests", "tools", "include", "gen"}
PLACEHOLDER_AREAS = {"X", "AREA"}  # HR-X-1 in explanations of the scheme
EXT = re.compile(r"\.(md|c|h|py|pyi|toml|txt|cbor|build|yml|yaml|sh|json|dict|in)$")

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
TICK = re.compile(r"`([^`\n]+)`")
SECTION = re.compile(r"([\w./-]*[\w-]+\.md)\s*§\s*([^;,)|\n`:]+)")
HR = re.compile(r"HR-([A-Z]+)-(\d+)")
REQ = re.compile(r"\bREQ_[A-Z0-9]+(?:_[A-Z0-9]+)+\b")
PRIVATE = re.compile(r"\bseed\s*§|\bthe seed\b|\bseed's\b|shared/seeds", re.IGNORECASE)


def tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *patterns], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode()
    return [ROOT / p for p in out.split("\0") if p and (ROOT / p).is_file()]


def inside(p: Path) -> bool:
    try:
        p.resolve().relative_to(ROOT)
        return True
    except ValueError:
        return False


def spec_ids() -> dict[str, str]:
    """HR id -> spec file name defining it (ranges 'HR-X-1 … 4' expand)."""
    ids: dict[str, str] = {}
    for path in sorted(SPEC.glob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for m in re.finditer(r"HR-([A-Z]+)-(\d+)(?:\s*…\s*(\d+))?", line):
                lo, hi = int(m.group(2)), m.group(3)
                for n in range(lo, int(hi) + 1 if hi else lo + 1):
                    ids.setdefault(f"HR-{m.group(1)}-{n}", path.name)
    return ids


def headings(path: Path) -> list[str]:
    return [ln.lstrip("#").strip() for ln in path.read_text(encoding="utf-8").splitlines()
            if ln.startswith("#")]


def norm(s: str) -> str:
    return re.sub(r"\s+", " ", s.replace("`", "").replace("*", "")).strip().lower()


def resolve_md(name: str, base: Path) -> Path | None:
    """A cited Markdown file: as written from the citing file or the root, else in docs/spec."""
    for cand in (base / name, ROOT / name, SPEC / Path(name).name):
        if cand.is_file() and inside(cand):
            return cand
    return None


def section_ok(target: Path, cited: str, hr: dict[str, str]) -> bool:
    c = norm(cited)
    m = HR.match(cited.strip())
    if m and hr.get(m.group(0)) == target.name:
        return True
    for h in headings(target):
        nh = norm(h)
        bare = re.sub(r"\s*\([^)]*\)", "", nh).strip()  # "Alignment (HR-BUF-2 … 4)"
        if nh.startswith(c) or bare.startswith(c) or (len(bare) >= 4 and c.startswith(bare)):
            return True
    return False


def path_like(tok: str) -> bool:
    if any(ch in tok for ch in " <>{}*$|=,;()'\"") or tok.startswith(("-", "http", "#")):
        return False
    if "/" not in tok:
        return False
    # Only what names the repository's own trees (an include path such as hurray/hurray.h,
    # or a file inside another package's wheel, is not a repository path).
    first = tok.lstrip("./").split("/")[0]
    return first in TOP or tok.startswith(("../", "./"))


def check_path(tok: str, md: Path) -> str | None:
    """None when `tok` names something in the repository; else the finding."""
    if "shared/" in tok:
        return "points at the team's private desk (shared/), outside the repository"
    if tok.startswith(GENERATED) or any(g in tok for g in ("/build/", "/dist/")):
        return None
    clean = tok.rstrip("/.:")
    bases = [md.parent, ROOT, ROOT / "python"]
    for b in bases:
        cand = b / clean
        if cand.exists():
            return None if inside(cand) else "points outside the repository"
    if any(not inside(b / clean) for b in bases[:1]) and clean.startswith("../"):
        return "points outside the repository"
    # A path inside a tree named alongside (python/README.md: `src/hurray/...`).
    return "no such path in the repository"


def pip_commands(text: str, markdown: bool) -> list[str]:
    """The commands a reader would run: in Markdown, code blocks (fenced or indented) and
    inline code spans; elsewhere (workflows, Makefile), every line."""
    out: list[str] = []
    fence = False
    for line in text.splitlines():
        if not markdown:
            out.append(line)
            continue
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence or line.startswith("    "):
            out.append(line)
        else:
            out.extend(re.findall(r"`([^`]+)`", line))
    return out


def pip_findings(text: str, markdown: bool = True) -> list[str]:
    """Commands that `pip install` the distribution hurray from somewhere pip may find the
    unrelated public project."""
    out = []
    for cmd in pip_commands(text, markdown):
        m = re.search(r"\bpip3? (install|wheel|download)\b(.*)", cmd)
        if not m:
            continue
        words = [w.strip("'\"`.,;:)(") for w in m.group(2).split()]
        if not [w for w in words if re.fullmatch(r"hurray(\[[^\]]*\])?([=<>~!].*)?", w)]:
            continue
        if "--extra-index-url" in words:
            out.append(f"{cmd.strip()}: --extra-index-url lets pip choose the public "
                       "project's higher version")
        elif not ({"--no-index", "--index-url", "-i"} & set(words)):
            out.append(f"{cmd.strip()}: may resolve to the unrelated public project "
                       "'hurray'; use --no-index --find-links <dir> or --index-url")
    return out


def main() -> int:
    findings: list[str] = []
    hr = spec_ids()
    reqs = set(REQ.findall(REQS.read_text(encoding="utf-8"))) if REQS.exists() else set()
    mds = tracked("*.md")
    for md in mds:
        rel = md.relative_to(ROOT)
        text = md.read_text(encoding="utf-8")
        # fenced code blocks are commands and output, not citations (pip is still checked)
        prose = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)
        for m in LINK.finditer(prose):
            target = m.group(1)
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            p = (md.parent / target.split("#")[0]).resolve()
            if "shared/" in target or not inside(p):
                findings.append(f"{rel}: link {target}: outside the repository")
            elif not p.exists():
                findings.append(f"{rel}: link {target}: no such file")
        for m in TICK.finditer(prose):
            tok = m.group(1).strip()
            if path_like(tok):
                why = check_path(tok, md)
                if why:
                    findings.append(f"{rel}: `{tok}`: {why}")
        for m in SECTION.finditer(re.sub(r"`[^`\n]*`", "", prose)):
            name, cited = m.group(1), m.group(2).strip().rstrip(".")
            target = resolve_md(name, md.parent)
            if target is None:
                findings.append(f"{rel}: {name} § {cited}: no such file")
            elif not section_ok(target, cited, hr):
                findings.append(f"{rel}: {name} § {cited}: no such section in "
                                f"{target.relative_to(ROOT)}")
        for m in PRIVATE.finditer(text):
            line = text[: m.start()].count("\n") + 1
            findings.append(f"{rel}:{line}: cites the private requirement document "
                            f"({m.group(0)!r}); state the requirement in docs/requirements/")
        for f in pip_findings(text, markdown=True):
            findings.append(f"{rel}: {f}")
    # ids, everywhere they are cited
    sources = mds + tracked("*.c", "*.h", "*.py", "*.pyi", "Makefile", "*.toml", "*.yml")
    for src in sources:
        rel = src.relative_to(ROOT)
        if rel.parts[:2] == ("docs", "spec") or rel.parts[0] == "vectors":
            continue  # the definitions themselves; the corpus is checked by trace.py
        text = src.read_text(encoding="utf-8", errors="replace")
        for m in HR.finditer(text):
            if m.group(0) not in hr and m.group(1) not in PLACEHOLDER_AREAS:
                findings.append(f"{rel}: {m.group(0)} is not defined in docs/spec")
        if reqs and src.suffix in (".md", ".py") and rel.parts[:2] != ("docs", "conformance"):
            for m in REQ.finditer(text):
                rid = m.group(0)
                if rid not in reqs and not any(r.startswith(rid + "_") for r in reqs) \
                        and not any(rid.startswith(r + "_") for r in reqs):
                    findings.append(f"{rel}: {rid} is not a requirement of "
                                    "docs/requirements/python-binding.md")
    for f in sorted(set(findings)):
        print(f"FAIL  {f}")
    print(f"check_docs: {len(mds)} Markdown files, {len(hr)} HR ids, {len(reqs)} REQ ids, "
          f"{len(set(findings))} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
