#!/usr/bin/env python3
"""Static checks of the Python package's packaging (make packaging-check).

- One version: libhurray's version.h is the only place it is written;
  pyproject.toml takes it dynamically and meson.build reads it with
  python/tools/version.py.
- -Werror is not the default for users' builds (meson werror=false in
  meson.build), and our builds turn it on (Makefile, cibuildwheel).
- LICENSE: python/LICENSE (what wheels built from a clone carry) is byte for
  byte the repository's LICENSE, and pyproject.toml declares it.
- The distribution name is "hurray" and it is never sent to the public index
  (the workflow uploads artifacts only).
- cibuildwheel's configuration selects exactly CPython 3.10-3.13 on Linux
  x86_64/aarch64, macOS x86_64/arm64 and Windows AMD64 (asked of cibuildwheel
  itself, so the table is valid for the pinned version), and the workflow has
  a runner for each of those platforms.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = ROOT / "python"
VERSIONS = ["cp310", "cp311", "cp312", "cp313"]
PLATFORMS = {  # (cibuildwheel --platform, --archs) -> identifier suffix
    ("linux", "x86_64"): "manylinux_x86_64",
    ("linux", "aarch64"): "manylinux_aarch64",
    ("macos", "x86_64"): "macosx_x86_64",
    ("macos", "arm64"): "macosx_arm64",
    ("windows", "AMD64"): "win_amd64",
}
RUNNERS = {"linux-x86_64": "ubuntu-", "linux-aarch64": "-arm", "macos-x86_64": "intel",
           "macos-arm64": "macos-14", "windows-x86_64": "windows-"}

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def main() -> int:
    pyproject = tomllib.loads((PY / "pyproject.toml").read_text())
    project = pyproject["project"]
    meson = (PY / "meson.build").read_text()
    header = (ROOT / "reference/include/hurray/version.h").read_text()

    # version
    m = re.search(r'#define HURRAY_VERSION_STRING "([^"]+)"', header)
    out = subprocess.run([sys.executable, str(PY / "tools/version.py")], capture_output=True,
                         text=True)
    check(m is not None and out.returncode == 0 and out.stdout.strip() == m.group(1),
          f"python/tools/version.py prints version.h's {m.group(1) if m else '?'}")
    check("version" not in project and "version" in project.get("dynamic", []),
          "pyproject.toml: version is dynamic (no second copy)")
    check("run_command('tools/version.py'" in meson, "meson.build: project version from tools/version.py")
    check(not re.search(r"version:\s*'\d", meson), "meson.build: no literal version")

    # warnings
    check("'werror=false'" in meson, "meson.build: werror off by default (users' compilers)")
    mk = (ROOT / "Makefile").read_text()
    check("-Dwerror=true" in mk, "Makefile: our python-install builds with -Dwerror=true")
    cibw = pyproject["tool"]["cibuildwheel"]
    check(cibw.get("config-settings", {}).get("setup-args") == "-Dwerror=true",
          "cibuildwheel: CI wheels build with -Dwerror=true")

    # license
    check((PY / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes(),
          "python/LICENSE is identical to LICENSE")
    check(project.get("license") == "Apache-2.0" and project.get("license-files") == ["LICENSE"],
          "pyproject.toml: license = Apache-2.0, license-files = [LICENSE]")

    # name
    check(project["name"] == "hurray", "distribution name is the contract's: hurray")
    wf = (ROOT / ".github/workflows/wheels.yml").read_text()
    check("pypa/gh-action-pypi-publish" not in wf and "twine upload" not in wf,
          "workflow never uploads to the public index (the name there is another project's)")

    # cibuildwheel selection, asked of cibuildwheel itself
    for (plat, arch), suffix in PLATFORMS.items():
        r = subprocess.run([sys.executable, "-m", "cibuildwheel", "--print-build-identifiers",
                            "--platform", plat, "--archs", arch, str(PY)],
                           capture_output=True, text=True)
        got = r.stdout.split()
        want = [f"{v}-{suffix}" for v in VERSIONS]
        check(r.returncode == 0 and got == want,
              f"cibuildwheel {plat}/{arch}: {' '.join(got) or r.stderr.strip()[-200:]}")

    # workflow: one runner per platform, cibuildwheel on python/
    for name, marker in RUNNERS.items():
        line = next((ln for ln in wf.splitlines() if f"name: {name}," in ln), "")
        check(marker in line, f"workflow: runner for {name} ({line.strip() or 'missing'})")
    check("uses: pypa/cibuildwheel@" in wf and "package-dir: python" in wf,
          "workflow: cibuildwheel builds python/")
    check("ci/test_install.sh sdist" in wf, "workflow: the sdist is built and installed with only a compiler")

    print(f"check_packaging: {len(failures)} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
