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

On a schema-2 corpus, a second copy gets one change per new kind present (each in its own
vector, judged the same way; kinds the corpus lacks are left out):

  3. kv:      one valid KV vector's oracle: one scalar entry's value changed;
  4. file:    one valid file vector's oracle: one buffer's sha256 zeroed; and one byte of a
              non-empty buffer in another valid file's data region flipped (sha256 of the file
              updated: the file still opens, only the buffer hash can catch it);
  5. stream:  one valid stream vector's oracle: one buffer's sha256 zeroed; one invalid stream
              vector's error_after_items + 1.

The same perturbations are also run through the testee protocol with the C testee
(--testee build/harness/hurray-testee, docs/conformance/testee-protocol.md): the runner, not
only the built-in comparison, must catch them, with the same field named.

    python3 harness/tests/perturb_test.py --harness build/harness/hurray-conformance --vectors vectors
    python3 harness/tests/perturb_test.py ... --testee build/harness/hurray-testee
    pytest harness/tests/perturb_test.py      (HURRAY_HARNESS / HURRAY_TESTEE / HURRAY_VECTORS
                                               override the paths)

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
DEFAULT_TESTEE = os.environ.get("HURRAY_TESTEE",
                                os.path.join(ROOT, "build", "harness", "hurray-testee"))

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


# Extra arguments of every run: [] (libhurray linked in) or ["--testee", CMD].
EXTRA = []


def run_harness(harness, vectors):
    proc = subprocess.run([harness, "--vectors", vectors, *EXTRA], capture_output=True,
                          text=True, timeout=1800)
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


# ------------------------------------------------------------- schema 2: kv/file/stream ---

def _scalar_bump(value):
    """A kvvalue with one scalar changed, or None for a list."""
    (t, x), = value.items()
    if t == "bool":
        return {t: not x}
    if t == "int64":
        return {t: x - 1 if x > -2**63 else x + 1}
    if t in ("uint64", "float64"):
        return {t: x ^ 1}
    if t in ("string", "bytes"):
        return {t: x + ("x" if t == "string" else b"x")}
    return None


def _buffers(entries_or_items):
    """(path, buffer map) of every non-empty buffer, in a file's entries or a stream's items."""
    def walk(item, path):
        for b, buf in enumerate(item.get("buffers", [])):
            if buf["size"] > 0:
                yield f"{path}.buffers[{b}]", buf
        for k, m in enumerate(item.get("members", [])):
            yield from walk(m, f"{path}.members[{k}]")
    return walk


def perturb_schema2(manifest, vectors, passing):
    """One change per new kind present; returns [(id, substring of its failure line)]."""
    done, used = [], set()

    def pick(kind, expect):
        return [v for v in manifest["vectors"] if v.get("kind") == kind
                and v.get("expect") == expect and v["id"] in passing and v["id"] not in used]

    for v in pick("kv", "valid"):
        for key, value in sorted(v["decoded"]["entries"].items()):
            bumped = _scalar_bump(value)
            if bumped is not None:
                v["decoded"]["entries"][key] = bumped
                done.append((v["id"], "decoded.entries[\""))
                used.add(v["id"])
                break
        if used:
            break
    files = pick("file", "valid")
    for v in files:  # oracle: a buffer hash
        bufs = [(i, b) for i, e in enumerate(v["decoded"]["entries"])
                for b, buf in enumerate(e["buffers"]) if buf["size"] > 0]
        if bufs:
            i, b = bufs[0]
            v["decoded"]["entries"][i]["buffers"][b]["sha256"] = bytes(32)
            done.append((v["id"], f"decoded.entries[{i}].buffers[{b}].sha256"))
            used.add(v["id"])
            break
    for v in pick("file", "valid"):  # input: one data byte
        dec = v["decoded"]
        bufs = [(i, b, buf) for i, e in enumerate(dec["entries"])
                for b, buf in enumerate(e["buffers"]) if buf["size"] > 0]
        if not bufs:
            continue
        i, b, buf = bufs[-1]
        path = os.path.join(vectors, v["path"])
        with open(path, "rb") as f:
            data = bytearray(f.read())
        data[dec["data_offset"] + buf["offset"]] ^= 0x01
        with open(path, "wb") as f:
            f.write(data)
        v["sha256"] = hashlib.sha256(data).digest()
        done.append((v["id"], f"decoded.entries[{i}].buffers[{b}].sha256"))
        used.add(v["id"])
        break
    for v in pick("stream", "valid"):
        found = None
        for n, item in enumerate(v["decoded"]["items"]):
            found = next(_buffers(None)(item, f"decoded.items[{n}]"), None)
            if found:
                break
        if found:
            found[1]["sha256"] = bytes(32)
            done.append((v["id"], found[0] + ".sha256"))
            used.add(v["id"])
            break
    for v in pick("stream", "invalid"):
        v["error_after_items"] += 1
        done.append((v["id"], "error_after_items: expected"))
        used.add(v["id"])
        break
    write_manifest(vectors, manifest)
    return done


def check_perturbed_schema2(harness, vectors, base, out=sys.stdout):
    """The schema-2 perturbations (none when the corpus has no kv/file/stream vectors)."""
    problems = []
    manifest = load_manifest(vectors)
    if not any(v.get("kind") in ("kv", "file", "stream") for v in manifest["vectors"]):
        print("schema 2: no kv/file/stream vectors in the corpus, nothing to perturb", file=out)
        return problems, 0
    passing = {v["id"] for v in manifest["vectors"]} - set(base.failures)
    with tempfile.TemporaryDirectory(prefix="hurray-perturb2-") as tmp:
        copy = os.path.join(tmp, "vectors")
        shutil.copytree(vectors, copy)
        done = perturb_schema2(load_manifest(copy), copy, passing)
        for vid, needle in done:
            print(f"perturbed (schema 2): {vid}, expecting a failure naming {needle!r}", file=out)
        run = run_harness(harness, copy)
    new = {k: v for k, v in run.failures.items() if k not in base.failures}
    print(f"perturbed run (schema 2): exit {run.returncode}, final line {run.final}", file=out)
    for k, v in sorted(new.items()):
        print(f"  caught {k}: {v}", file=out)
    if done and run.returncode == 0:
        problems.append("schema-2 perturbed run exited 0")
    if set(new) != {vid for vid, _ in done}:
        problems.append(f"schema-2 perturbed run: new failures {sorted(new)}, expected "
                        f"{sorted(vid for vid, _ in done)}")
    for vid, needle in done:
        if needle not in run.failures.get(vid, ""):
            problems.append(f"{vid}: failure does not name {needle!r}: "
                            f"{run.failures.get(vid, '')!r}")
    return problems, len(done)


def check(harness, vectors, out=sys.stdout):
    """Runs every half; returns a list of problems (empty = pass)."""
    base, problems = check_baseline(harness, vectors, out)
    problems += check_perturbed(harness, vectors, base, out)
    return problems + check_perturbed_schema2(harness, vectors, base, out)[0]


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


def test_schema2_perturbations_are_caught():
    import pytest
    harness, vectors = _paths_or_fail()
    base, _ = check_baseline(harness, vectors)
    problems, n = check_perturbed_schema2(harness, vectors, base)
    if n == 0:
        pytest.fail("the corpus has no kv/file/stream vectors")
    assert not problems, "\n".join(problems)


def test_perturbations_are_caught_through_the_testee_protocol(monkeypatch):
    """Every perturbation again, the vectors running through the C testee."""
    import pytest
    harness, vectors = _paths_or_fail()
    if not os.access(DEFAULT_TESTEE, os.X_OK):
        pytest.fail(f"testee not built: {DEFAULT_TESTEE} (make harness)")
    monkeypatch.setattr(sys.modules[__name__], "EXTRA", ["--testee", DEFAULT_TESTEE])
    base, problems = check_baseline(harness, vectors)
    problems += check_perturbed(harness, vectors, base)
    more, n = check_perturbed_schema2(harness, vectors, base)
    assert n > 0
    problems += more
    assert not problems, "\n".join(problems)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--harness", default=DEFAULT_HARNESS)
    ap.add_argument("--vectors", default=DEFAULT_VECTORS)
    ap.add_argument("--testee", help="run the vectors through this testee command")
    args = ap.parse_args()
    if args.testee:
        EXTRA[:] = ["--testee", args.testee]
    problems = check(args.harness, args.vectors)
    for p in problems:
        print(f"PROBLEM: {p}")
    print("perturb_test: " + ("FAILED" if problems else "passed"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
