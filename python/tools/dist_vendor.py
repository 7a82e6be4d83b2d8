"""meson dist script: make the sdist self-contained.

`python -m build` (meson-python) makes the sdist with `meson dist`, which
archives the committed files of python/ only. In a clone, libhurray reaches
the build through subprojects/hurray, a link to the repository's reference/
(meson.build builds it from its one description, reference/meson.build); the
archive would carry that link, pointing outside itself. This script,
registered with meson.add_dist_script in meson.build, puts what the link
points at in its place: libhurray's committed build description
(meson.build, meson.options, warnings.txt), headers and sources
(reference/ -> subprojects/hurray/, without its tests), and adds the
repository's LICENSE. So the sdist builds on a machine with only a C compiler
(plus the build requirements pip installs).

Like meson dist itself, it takes the committed tree (git archive HEAD), so
the sdist is the same whatever is uncommitted in the work tree.
Environment (set by meson dist): MESON_PROJECT_DIST_ROOT, MESON_PROJECT_SOURCE_ROOT.
"""
import io
import os
import shutil
import subprocess
import sys
import tarfile

# What libhurray is built from (reference/meson.build names nothing else), and where it goes.
LIBHURRAY = ["reference/meson.build", "reference/meson.options", "reference/warnings.txt",
             "reference/include", "reference/src"]
VENDORED = "subprojects/hurray"


def main() -> int:
    dist_root = os.environ["MESON_PROJECT_DIST_ROOT"]
    src_root = os.environ["MESON_PROJECT_SOURCE_ROOT"]
    # The repository root, and python/'s place in it.
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=src_root, check=True,
                         capture_output=True, text=True).stdout.strip()
    paths = [*LIBHURRAY, "LICENSE"]
    tar = subprocess.run(["git", "archive", "--format=tar", "HEAD", "--", *paths], cwd=top,
                         check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        members = t.getmembers()
        names = {m.name for m in members}
        for p in paths:
            if not any(n == p or n.startswith(p + "/") for n in names):
                print(f"dist_vendor: {p} is not in the repository's HEAD", file=sys.stderr)
                return 1
        for m in members:
            if not (m.isfile() or m.isdir()):
                print(f"dist_vendor: {m.name} is not a plain file", file=sys.stderr)
                return 1
            # reference/... -> subprojects/hurray/...; LICENSE stays at the top.
            if m.name == "reference" or m.name.startswith("reference/"):
                m.name = VENDORED + m.name[len("reference"):]
        # The link (or, on a checkout without links, the file holding its target) goes.
        link = os.path.join(dist_root, *VENDORED.split("/"))
        if os.path.islink(link) or os.path.isfile(link):
            os.unlink(link)
        elif os.path.isdir(link):
            shutil.rmtree(link)
        # LICENSE overwrites python/LICENSE, the committed copy that wheels
        # built from a clone carry (ci/check_packaging.py keeps them identical).
        if hasattr(tarfile, "data_filter"):
            t.extractall(dist_root, members=members, filter="data")
        else:
            t.extractall(dist_root, members=members)
    print(f"dist_vendor: added {', '.join(LIBHURRAY)} as {VENDORED}/, and LICENSE, to {dist_root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
