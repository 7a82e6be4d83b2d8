#!/usr/bin/env python3
"""Print libhurray's version, the package's only version source.

Usage: version.py [REF_ROOT]  -- the libhurray tree; by default
subprojects/hurray beside python/'s meson.build (a link to ../reference in a
clone, a copy in an sdist), where meson.build finds it. The version is
HURRAY_VERSION_STRING in REF_ROOT/include/hurray/version.h; meson.build makes
it the project version, which meson-python gives the package (pyproject.toml:
dynamic = ["version"]), and the extension reports it as hurray.__version__
(hurray_version_string()). reference/meson.build reads the same header for
libhurray's own version (soname, hurray.pc).
"""
import os
import re
import sys


def main() -> int:
    if len(sys.argv) > 1:
        ref_root = sys.argv[1]
    else:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        ref_root = os.path.join(here, "subprojects", "hurray")
    header = os.path.join(ref_root, "include", "hurray", "version.h")
    with open(header, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'^#define HURRAY_VERSION_STRING "([0-9]+\.[0-9]+\.[0-9]+[^"]*)"', text, re.M)
    if not m:
        print(f"no HURRAY_VERSION_STRING in {header}", file=sys.stderr)
        return 1
    parts = {k: re.search(rf"^#define HURRAY_VERSION_{k} ([0-9]+)", text, re.M) for k in
             ("MAJOR", "MINOR", "PATCH")}
    if any(v is None for v in parts.values()):
        print(f"{header}: HURRAY_VERSION_MAJOR/MINOR/PATCH missing", file=sys.stderr)
        return 1
    numeric = ".".join(parts[k].group(1) for k in ("MAJOR", "MINOR", "PATCH"))
    if not m.group(1).startswith(numeric):
        print(f"{header}: HURRAY_VERSION_STRING {m.group(1)} disagrees with "
              f"MAJOR.MINOR.PATCH {numeric}", file=sys.stderr)
        return 1
    print(m.group(1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
