#!/usr/bin/env python3
"""The package's type stubs, checked (make typecheck).

1. mypy --strict over the package as it ships: python/src/hurray (__init__.py, _hurray.pyi,
   dtype.pyi; py.typed marks it typed);
2. mypy --strict over the user guide's examples (docs/guide/*.md: the ```python blocks of a
   page, in order, as one module per page, written by ci/guide_blocks.py), with `hurray`
   resolved to python/src (the stubs, not the built extension) and the partners (NumPy,
   PyTorch, JAX, SciPy) from the interpreter running this script;
3. pyright (standard mode) over the same stubs and pages.

Configuration for the partners, not for hurray: SciPy and tqdm (the optional progress bar)
ship no type information (ignore_missing_imports), and PyTorch re-exports `torch.from_dlpack` without listing it
(implicit_reexport for torch only). Everything about hurray is checked strictly.

    typecheck.py [--keep DIR]   exit 1 if any checker reports an error
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "python" / "src"
sys.path.insert(0, str(ROOT / "ci"))
import guide_blocks  # noqa: E402

MYPY_INI = """\
[mypy]
strict = True
mypy_path = {src}
cache_dir = {cache}
python_executable = {python}
# type: ignore comments the examples carry must still be needed
warn_unused_ignores = True
# safetensors' Python layer (hurray.convert calls it) declares no types for deserialize
untyped_calls_exclude = safetensors

[mypy-scipy.*]
ignore_missing_imports = True

[mypy-tqdm.*]
ignore_missing_imports = True

[mypy-torch]
implicit_reexport = True
"""


def run(title: str, cmd: list[str], cwd: Path) -> bool:
    print(f"== {title}: {' '.join(cmd)}", flush=True)
    r = subprocess.run(cmd, cwd=cwd, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    return r.returncode == 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, help="write the extracted pages here and keep them")
    args = ap.parse_args()
    python = sys.executable
    cache = ROOT / "build" / "typecheck-cache"
    cache.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="hurray-typecheck-") as tmp:
        work = args.keep or Path(tmp)
        pages = guide_blocks.write_pages(sorted(guide_blocks.GUIDE.glob("*.md")), work / "guide")
        ini = work / "mypy.ini"
        ini.write_text(MYPY_INI.format(src=SRC, cache=cache / "mypy", python=python))
        pyright_cfg = work / "pyrightconfig.json"
        pyright_cfg.write_text(json.dumps({
            "typeCheckingMode": "standard",
            "pythonVersion": f"{sys.version_info.major}.{sys.version_info.minor}",
            "extraPaths": [str(SRC)],
            "include": [os.path.relpath(SRC / "hurray", work), "guide"],
            # hurray.dtype is a stub-only module: at run time the extension builds it
            "reportMissingModuleSource": "none",
        }))
        ok = run("mypy --strict: the package (python/src/hurray)",
                 [python, "-m", "mypy", "--config-file", str(ini), "-p", "hurray"], cwd=work)
        ok &= run("mypy --strict: the guide's examples",
                  [python, "-m", "mypy", "--config-file", str(ini), *map(str, pages)], cwd=work)
        ok &= run("pyright: the package and the guide's examples",
                  [python, "-m", "pyright", "--pythonpath", python, "--project", str(pyright_cfg)],
                  cwd=work)
    print("typecheck: " + ("clean" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
