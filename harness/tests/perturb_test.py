#!/usr/bin/env python3
"""Perturbation test: does the harness notice a wrong oracle and a wrong input?

Copies the corpus to a temporary directory and makes two single-value changes:

  1. oracle:  one valid descriptor vector's manifest "decoded" gets one shape extent + 1;
  2. input:   another valid descriptor vector's file gets ONE byte changed, the low byte of a
              shape extent (extent - 1, so the descriptor still decodes and still
              round-trips; its buffers stay large enough), and the manifest's sha256 is
              updated so that only the decode comparison can catch it.

Then it asserts that the harness run on the copy exits non-zero and that the failures it
reports are exactly those two ids, and that the unperturbed corpus passes.

    python3 harness/tests/perturb_test.py --harness build/harness/hurray-conformance --vectors vectors
    pytest harness/tests/perturb_test.py      (HURRAY_HARNESS / HURRAY_VECTORS override the paths)

Needs cbor2 (the project's .venv has it).
"""
import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

import cbor2

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_HARNESS = os.environ.get("HURRAY_HARNESS",
                                 os.path.join(ROOT, "build", "harness", "hurray-conformance"))
DEFAULT_VECTORS = os.environ.get("HURRAY_VECTORS", os.path.join(ROOT, "vectors"))

FAIL_LINE = re.compile(r"^FAIL (.+?): (.*)$")
FINAL_LINE = re.compile(r"^(\d+) passed, (\d+) failed$")
DYNAMIC = None
HEADER = 32  # shape starts here (descriptor.md § Layout of the bytes)


class Run:
    def __init__(self, proc):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.failures = {}
        self.manifest_failures = []
        self.final = None
        for line in proc.stdout.splitlines():
            m = FAIL_LINE.match(line)
            if m and m.group(1) == "manifest":
                self.manifest_failures.append(m.group(2))
            elif m:
                self.failures[m.group(1)] = m.group(2)
            f = FINAL_LINE.match(line)
            if f:
                self.final = (int(f.group(1)), int(f.group(2)))
        last = proc.stdout.rstrip("\n").splitlines()[-1:] or [""]
        self.final_is_last = FINAL_LINE.match(last[0]) is not None


def run_harness(harness, vectors):
    proc = subprocess.run([harness, "--vectors", vectors], capture_output=True, text=True,
                          timeout=1800)
    return Run(proc)


def load_manifest(vectors):
    with open(os.path.join(vectors, "manifest.cbor"), "rb") as f:
        return cbor2.loads(f.read())


def write_manifest(vectors, manifest):
    with open(os.path.join(vectors, "manifest.cbor"), "wb") as f:
        f.write(cbor2.dumps(manifest, canonical=True))


def valid_descriptors(manifest, passing):
    return [v for v in manifest["vectors"]
            if v.get("kind") == "descriptor" and v.get("expect") == "valid"
            and v["id"] in passing]


def pick_oracle_target(candidates):
    """A valid descriptor with a resolved extent to bump in its "decoded"."""
    for v in candidates:
        for i, e in enumerate(v["decoded"]["shape"]):
            if e is not DYNAMIC:
                return v, i
    raise AssertionError("no valid descriptor vector with a resolved shape extent")


def pick_input_target(candidates, exclude, vectors):
    """A valid row/col-major descriptor without quantization or statistics, with a resolved
    extent e >= 2 whose low byte is non-zero: e - 1 changes one byte, keeps every layout
    constraint and leaves the buffers (now over-sized, which is legal) large enough."""
    for v in candidates:
        d = v["decoded"]
        if v["id"] == exclude or d["layout"]["tag"] not in (0x01, 0x02):
            continue
        if d["quantization"] is not None or d["statistics"] is not None:
            continue
        for i, e in enumerate(d["shape"]):
            if e is not DYNAMIC and e >= 2 and e & 0xFF:
                path = os.path.join(vectors, v["path"])
                with open(path, "rb") as f:
                    data = f.read()
                off = HEADER + 8 * i
                if int.from_bytes(data[off:off + 8], "little") == e:
                    return v, i, off
    raise AssertionError("no valid row/col-major descriptor suitable for a one-byte change")


def perturb(manifest, vectors, passing):
    """Applies both perturbations to the copy; returns the two ids."""
    candidates = valid_descriptors(manifest, passing)
    v1, i1 = pick_oracle_target(candidates)
    v1["decoded"]["shape"][i1] += 1

    v2, i2, off = pick_input_target(candidates, v1["id"], vectors)
    path = os.path.join(vectors, v2["path"])
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[off] -= 1  # low byte of shape[i2]: extent - 1
    with open(path, "wb") as f:
        f.write(data)
    v2["sha256"] = hashlib.sha256(data).digest()
    v2["size"] = len(data)
    write_manifest(vectors, manifest)
    return v1["id"], i1, v2["id"], i2


def check_baseline(harness, vectors, out=sys.stdout):
    """The unperturbed corpus: returns (run, problems)."""
    problems = []
    base = run_harness(harness, vectors)
    print(f"baseline: exit {base.returncode}, final line {base.final}", file=out)
    if not base.final_is_last:
        problems.append("baseline: the last line is not 'N passed, N failed'")
    if base.returncode != 0 or base.failures or base.manifest_failures:
        problems.append(f"baseline: the unperturbed corpus does not pass (exit {base.returncode}, "
                        f"{len(base.failures)} vector failures, "
                        f"{len(base.manifest_failures)} manifest failures)")
    return base, problems


def check_perturbed(harness, vectors, base, out=sys.stdout):
    """Both perturbations, judged against the baseline run: the failures that are new must be
    exactly the two perturbed ids (vectors that already failed are left out of the choice)."""
    problems = []
    passing = {v["id"] for v in load_manifest(vectors)["vectors"]} - set(base.failures)
    with tempfile.TemporaryDirectory(prefix="hurray-perturb-") as tmp:
        copy = os.path.join(tmp, "vectors")
        shutil.copytree(vectors, copy)
        manifest = load_manifest(copy)
        id1, i1, id2, i2 = perturb(manifest, copy, passing)
        print(f"perturbed: {id1} decoded.shape[{i1}] + 1 (manifest); "
              f"{id2} shape[{i2}] - 1 (one byte of the file, sha256 updated)", file=out)
        run = run_harness(harness, copy)
    new = {k: v for k, v in run.failures.items() if k not in base.failures}
    print(f"perturbed run: exit {run.returncode}, final line {run.final}", file=out)
    for k, v in sorted(new.items()):
        print(f"  caught {k}: {v}", file=out)
    if run.returncode == 0:
        problems.append("perturbed run exited 0")
    if set(new) != {id1, id2}:
        problems.append(f"perturbed run: new failures {sorted(new)}, expected {sorted([id1, id2])}")
    for vid, idx in ((id1, i1), (id2, i2)):
        msg = run.failures.get(vid, "")
        if f"decoded.shape[{idx}]" not in msg:
            problems.append(f"{vid}: failure is not the shape mismatch: {msg!r}")
    if run.manifest_failures != base.manifest_failures:
        problems.append(f"perturbed run: manifest failures changed: {run.manifest_failures}")
    return problems


def check(harness, vectors, out=sys.stdout):
    """Runs both halves; returns a list of problems (empty = pass)."""
    base, problems = check_baseline(harness, vectors, out)
    return problems + check_perturbed(harness, vectors, base, out)


# ------------------------------------------------------------------------- pytest ---

def _paths_or_fail():
    import pytest
    if not os.access(DEFAULT_HARNESS, os.X_OK):
        pytest.fail(f"harness not built: {DEFAULT_HARNESS} (make harness)")
    if not os.path.exists(os.path.join(DEFAULT_VECTORS, "manifest.cbor")):
        pytest.fail(f"no corpus at {DEFAULT_VECTORS}")
    return DEFAULT_HARNESS, DEFAULT_VECTORS


def test_unperturbed_corpus_passes():
    harness, vectors = _paths_or_fail()
    _, problems = check_baseline(harness, vectors)
    assert not problems, "\n".join(problems)


def test_perturbations_are_caught():
    harness, vectors = _paths_or_fail()
    base, _ = check_baseline(harness, vectors)
    problems = check_perturbed(harness, vectors, base)
    assert not problems, "\n".join(problems)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--harness", default=DEFAULT_HARNESS)
    ap.add_argument("--vectors", default=DEFAULT_VECTORS)
    args = ap.parse_args()
    problems = check(args.harness, args.vectors)
    for p in problems:
        print(f"PROBLEM: {p}")
    print("perturb_test: " + ("FAILED" if problems else "passed"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
