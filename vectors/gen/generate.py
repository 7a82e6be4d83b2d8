#!/usr/bin/env python3
"""Generate the Hurray conformance corpus from docs/spec/ alone.

    python3 vectors/gen/generate.py --out vectors

writes vectors/valid/<area>/y_*.hry, vectors/invalid/<area>/n_*.hry and vectors/manifest.cbor.
Deterministic: the same sources give the same bytes. Every vector is checked against the
generator's own decoder (oracle.py) before anything is written. New vector ids need a tcid:
run once with --assign-new-tcids, which appends them to vectors/gen/tcids.txt (ids and tcids
are never reused; see vectors/README.md § Corpus versioning).
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep vectors/gen/ free of __pycache__

import build_containers  # noqa: E402
import builders  # noqa: E402
import manifest  # noqa: E402
import mutators  # noqa: E402
import promoted  # noqa: E402
from corpus import Corpus, GenError  # noqa: E402

TCIDS = os.path.join(HERE, "tcids.txt")
SPEC = os.path.normpath(os.path.join(HERE, "..", "..", "docs", "spec"))


def build_corpus():
    c = Corpus()
    builders.build_all(c)
    mutators.mutate_all(c)
    build_containers.build_all(c)
    promoted.build_all(c)  # fuzzer findings kept for good (promoted.py)
    return list(c.vectors.values())


# ------------------------------------------------------------------ tcid registry ---
def load_tcids():
    """tcids.txt: '<tcid> <id> [withdrawn]' per line, '#' comments."""
    reg, withdrawn = {}, set()
    if not os.path.exists(TCIDS):
        return reg, withdrawn
    with open(TCIDS, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            tcid, vid = int(parts[0]), parts[1]
            if vid in reg or tcid in reg.values():
                raise GenError(f"tcids.txt: duplicate {vid} / {tcid}")
            reg[vid] = tcid
            if len(parts) > 2 and parts[2] == "withdrawn":
                withdrawn.add(vid)
    return reg, withdrawn


def assign_tcids(vectors, assign_new):
    reg, withdrawn = load_tcids()
    ids = sorted(v["id"] for v in vectors)
    back = sorted(set(ids) & withdrawn)
    if back:
        raise GenError(f"withdrawn ids may not come back: {back}")
    new = [i for i in ids if i not in reg]
    if new and not assign_new:
        raise GenError(f"{len(new)} vector ids have no tcid (first: {new[0]}); "
                       "run generate.py --assign-new-tcids once and commit tcids.txt")
    missing = sorted(set(reg) - set(ids) - withdrawn)
    if missing:
        raise GenError(f"ids in tcids.txt no longer generated (mark them withdrawn): {missing[:5]}")
    if new:
        nxt = max(reg.values(), default=0) + 1
        with open(TCIDS, "a", encoding="utf-8") as f:
            if os.path.getsize(TCIDS) == 0:
                f.write("# tcid id [withdrawn] -- append-only; never renumber, never reuse\n")
            for vid in new:
                reg[vid] = nxt
                f.write(f"{nxt} {vid}\n")
                nxt += 1
    return reg


# ------------------------------------------------------------------ spec references ---
def _slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^a-z0-9 _-]", "", s)
    return s.replace(" ", "-")


def check_refs(vectors, spec_dir):
    anchors, ids = set(), set()
    for name in sorted(os.listdir(spec_dir)):
        if not name.endswith(".md"):
            continue
        text = open(os.path.join(spec_dir, name), encoding="utf-8").read()
        for m in re.finditer(r"^#+ (.+)$", text, re.M):
            anchors.add(f"{name}#{_slug(m.group(1))}")
        for m in re.finditer(r"HR-([A-Z]+)-(\d+)(?: … (\d+))?", text):
            lo = int(m.group(2))
            hi = int(m.group(3)) if m.group(3) else lo
            for n in range(lo, hi + 1):
                ids.add(f"HR-{m.group(1)}-{n}")
    bad = set()
    for v in vectors:
        for r in v["spec_refs"]:
            if (r.startswith("HR-") and r not in ids) or ("#" in r and r not in anchors):
                bad.add((v["id"], r))
    if bad:
        raise GenError("unknown spec references: " + ", ".join(f"{i}: {r}" for i, r in sorted(bad)[:10]))


# ------------------------------------------------------------------ output ---
def write_corpus(out, vectors, tcids):
    wanted = {}
    for v in vectors:
        wanted[os.path.normpath(os.path.join(out, manifest.vector_path(v)))] = v["data"]
    for top in manifest.CLASS_DIRS.values():  # remove stale vector files
        root = os.path.join(out, top)
        for dirpath, _dirs, files in os.walk(root):
            for fn in files:
                p = os.path.normpath(os.path.join(dirpath, fn))
                if fn.endswith(".hry") and p not in wanted:
                    os.remove(p)
    for p in sorted(wanted):
        os.makedirs(os.path.dirname(p), exist_ok=True)
        data = wanted[p]
        if os.path.exists(p):
            with open(p, "rb") as f:
                if f.read() == data:
                    continue
        with open(p, "wb") as f:
            f.write(data)
    m = manifest.build(vectors, tcids)
    with open(os.path.join(out, "manifest.cbor"), "wb") as f:
        f.write(manifest.dumps(m))
    return m


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="corpus root (the repository's vectors/)")
    ap.add_argument("--assign-new-tcids", action="store_true",
                    help="give new vector ids the next tcids and append them to tcids.txt")
    ap.add_argument("--spec", default=SPEC, help="docs/spec, to check spec_refs (skipped if absent)")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)
    try:
        vectors = build_corpus()
        if os.path.isdir(a.spec):
            check_refs(vectors, a.spec)
        tcids = assign_tcids(vectors, a.assign_new_tcids)
        m = write_corpus(a.out, vectors, tcids)
    except GenError as e:
        print(f"generate.py: {e}", file=sys.stderr)
        return 1
    if not a.quiet:
        counts = {}
        for v in m["vectors"]:
            key = (v["expect"], v["path"].split("/")[1], v["kind"])
            counts[key] = counts.get(key, 0) + 1
        for k in sorted(counts):
            print(f"{k[0]:8} {k[1]:7} {k[2]:13} {counts[k]:4}")
        by = {c: sum(1 for v in m["vectors"] if v["expect"] == c) for c in manifest.CLASS_DIRS}
        print(f"total {m['count']} vectors: {by['valid']} valid, {by['invalid']} invalid, "
              f"{by['implementation-defined']} implementation-defined")
    return 0


if __name__ == "__main__":
    sys.exit(main())
