"""Print libhurray's C sources (one per line, sorted) for meson.build.

Usage: list_sources.py DIR  -- DIR is reference/src, relative to python/.
Paths are printed as DIR/name.c so meson resolves them like any other file.
"""
import os
import sys


def main() -> int:
    src_dir = sys.argv[1]
    names = sorted(n for n in os.listdir(src_dir) if n.endswith(".c"))
    if not names:
        print(f"no C sources in {src_dir}", file=sys.stderr)
        return 1
    print("\n".join(os.path.join(src_dir, n).replace(os.sep, "/") for n in names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
