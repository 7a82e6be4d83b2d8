#!/usr/bin/env python3
"""Static checks of the Python package's packaging (make packaging-check).

- One version: libhurray's version.h is the only place it is written;
  pyproject.toml takes it dynamically and meson.build reads it with
  python/tools/version.py.
- -Werror is not the default for users' builds (meson werror=false in
  python/meson.build and reference/meson.build), and our builds turn it on
  (Makefile, cibuildwheel).
- One build of libhurray: reference/meson.build is its only description (every
  reference/src/*.c named there); python/meson.build builds it as the subproject
  `hurray` (python/subprojects/hurray links to reference/) and compiles no
  libhurray source itself; the warning list is written once, in
  reference/warnings.txt (the Makefile and both meson files name no warning
  flag of their own); the sdist vendors the description with the sources.
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

    # one build of libhurray, one warning list
    ref_meson = (ROOT / "reference/meson.build").read_text()
    check("'werror=false'" in ref_meson, "reference/meson.build: werror off by default")
    unlisted = [p.name for p in sorted((ROOT / "reference/src").glob("*.c"))
                if f"'src/{p.name}'" not in ref_meson]
    check(not unlisted, f"reference/meson.build names every reference/src/*.c "
          f"({', '.join(unlisted) or 'none missing'})")
    link = PY / "subprojects/hurray"
    check(link.is_symlink() and link.resolve() == (ROOT / "reference").resolve(),
          "python/subprojects/hurray is a link to reference/ (the subproject)")
    check("subproject('hurray'" in meson and "reference/src" not in meson
          and "static_library(" not in meson,
          "python/meson.build: libhurray only through subproject('hurray')")
    listed = [ln.split("#")[0].strip() for ln in
              (ROOT / "reference/warnings.txt").read_text().splitlines()]
    listed = [f for f in listed if f]
    check(bool(listed) and all(f.startswith("-W") or f == "-pedantic" for f in listed),
          f"reference/warnings.txt: the warning list ({' '.join(listed)})")
    # A warning flag outside comments, but -Werror (added by our builds) and the documented
    # exceptions (warnings.txt says them): the extension's -pedantic, the fuzz targets'
    # -Wmissing-prototypes.
    flag = re.compile(r"(?<![\w-])(-W(?!error\b|l,)[a-z][\w=-]*|-pedantic)\b")
    mk_text = (ROOT / "Makefile").read_text()
    for name, text, allowed in (
            ("python/meson.build", meson, {"-pedantic", "-Wpedantic"}),
            ("reference/meson.build", ref_meson, set()),
            ("Makefile", mk_text, {"-Wmissing-prototypes"})):
        code = "\n".join(ln.split("#")[0] for ln in text.splitlines())  # comments out
        flags = sorted(set(flag.findall(code)) - allowed)
        check(not flags, f"{name}: no warning flag of its own ({' '.join(flags) or 'none'})")
    check("reference/warnings.txt" in mk_text and "fs.read('warnings.txt')" in ref_meson
          and "get_variable('hurray_warnings')" in meson,
          "the Makefile, reference/meson.build and python/meson.build read reference/warnings.txt")
    vendor = (PY / "tools/dist_vendor.py").read_text()
    check(all(f'"reference/{f}"' in vendor for f in
              ("meson.build", "meson.options", "warnings.txt", "include", "src")),
          "the sdist vendors libhurray's description, warning list, headers and sources")

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
