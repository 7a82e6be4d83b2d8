#!/usr/bin/env python3
"""Smoke test of an installed hurray, run inside the clean environment that
ci/test_install.sh made (never from the repository's own .venv).

    install_smoke.py --version V [--wheel-tag PREFIX]

Checks that `import hurray` is the installed package (not a source tree), that
its version is V (libhurray's version.h) in both hurray.__version__ and the
distribution metadata, that the LICENSE travelled with it, that (with
--wheel-tag) the installed wheel's tag starts with PREFIX, and that real work
happens: a descriptor round trip, a file save/load, a stream round trip, and
NumPy in both directions. Exits non-zero on the first failure.
"""
import argparse
import importlib.metadata as md
import os
import sys
import tempfile


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", required=True)
    ap.add_argument("--wheel-tag")
    args = ap.parse_args()

    import hurray

    where = os.path.realpath(hurray.__file__)
    assert where.startswith(os.path.realpath(sys.prefix)), f"hurray imported from {where}"
    assert hurray.__version__ == args.version, (hurray.__version__, args.version)
    dist = md.distribution("hurray")
    assert dist.version == args.version, (dist.version, args.version)
    assert dist.metadata["License-Expression"] == "Apache-2.0", dist.metadata["License-Expression"]
    lic = [f for f in dist.files or () if f.name == "LICENSE"]
    assert lic, "no LICENSE in the installed distribution"
    assert "Apache License" in lic[0].read_text(), "LICENSE is not the Apache License"
    if args.wheel_tag:
        tags = [line.split(":", 1)[1].strip() for line in (dist.read_text("WHEEL") or "").splitlines()
                if line.startswith("Tag:")]
        assert any(t.split("-")[-1].startswith(args.wheel_tag) for t in tags), tags

    # Real work: descriptor, file, stream, NumPy.
    t = hurray.zeros((2, 3), hurray.float32)
    d = hurray.Descriptor.decode(t.descriptor.encode())
    assert d == t.descriptor and d.shape == (2, 3)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "x.hurray")
        hurray.save(path, {"x": t})
        back = hurray.load(path)
        assert list(back) == ["x"] and back["x"].descriptor == t.descriptor
        mapped = hurray.load(path, mmap=True)
        assert mapped["x"].shape == (2, 3)
        del mapped
    w = hurray.StreamWriter()
    w.write(t)
    w.finish()
    items = list(hurray.StreamReader(w.getvalue()))
    assert len(items) == 1 and items[0].descriptor == t.descriptor
    import numpy as np

    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    h = hurray.from_numpy(a)
    assert h.shape == (3, 4) and h.dtype is hurray.int32
    assert (np.asarray(h) == a).all()
    print(f"install smoke: hurray {hurray.__version__} from {os.path.dirname(where)}: ok "
          f"(numpy {np.__version__}, Python {sys.version.split()[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
