"""The crash-to-vector loop (make fuzz-promote, fuzz/promote.py, vectors/gen/promoted.py), end
to end on a real fuzzer input, in a copy of the corpus so the repository's stays as it is.

A regression input of fuzz_kv (a KV section of three entries that no vector holds) goes
through `make fuzz-promote`: it passes its target, so it is kept as it is; the generator's
oracle classifies the bytes (valid, every proper prefix TRUNCATED); the generator writes it as
a new valid vector with the next test-case id appended to tcids.txt; regenerating the corpus
reproduces it byte for byte (the comparison `make vectors-check` makes), the C
reference agrees with the oracle on it (the conformance harness over the copy), the raw input
is kept as a regression input of its target, and an input already in the corpus is not added
twice.

    pytest harness/tests/test_fuzz_promote.py
"""
import json
import os
import shutil
import subprocess
import sys

import cbor2

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HARNESS = os.environ.get("HURRAY_HARNESS", os.path.join(ROOT, "build", "harness",
                                                        "hurray-conformance"))
SEED = os.path.join("fuzz", "regress", "fuzz_kv", "three_entries.kv")
DUPLICATE = os.path.join("fuzz", "regress", "fuzz_stream_fd", "claim-16gib-pipe.hrs")


def promote(artifact, vectors, regress):
    proc = subprocess.run(
        ["make", "--no-print-directory", "-s", "fuzz-promote", f"ARTIFACT={artifact}",
         f"VENV={os.path.dirname(os.path.dirname(sys.executable))}",
         f"PROMOTE_ARGS=--vectors {vectors} --regress {regress}"],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tcids(vectors):
    with open(os.path.join(vectors, "gen", "tcids.txt"), encoding="utf-8") as f:
        return f.read()


def corpus_copy(tmp_path):
    """A copy of the corpus to grow, a regression folder, the copy's tcids.txt and its last id."""
    vectors = str(tmp_path / "vectors")
    regress = str(tmp_path / "regress")
    shutil.copytree(os.path.join(ROOT, "vectors"), vectors,
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = tcids(vectors)
    last = max(int(line.split()[0]) for line in before.splitlines()
               if line.strip() and not line.startswith("#"))
    return vectors, regress, before, last


def test_fuzz_promote_end_to_end(tmp_path):
    vectors, regress, before, last = corpus_copy(tmp_path)
    seed = open(os.path.join(ROOT, SEED), "rb").read()

    res = promote(SEED, vectors, regress)

    # classified by the oracle: a valid KV section (the target passes it: not minimised)
    assert res["target"] == "fuzz_kv" and res["kind"] == "kv"
    assert res["status"] == "OK" and res["minimised"] is False
    vid = res["id"]
    assert vid.startswith("y_kv_fuzz_")
    # registered: the next test-case id, appended (tcids.txt is append-only)
    after = tcids(vectors)
    assert after.startswith(before) and after[len(before):] == f"{last + 1} {vid}\n"
    assert res["tcid"] == last + 1
    # written by the generator into the corpus and its manifest
    with open(os.path.join(vectors, "valid", "kv", f"{vid}.hry"), "rb") as f:
        assert f.read() == seed
    with open(os.path.join(vectors, "manifest.cbor"), "rb") as f:
        (entry,) = [v for v in cbor2.load(f)["vectors"] if v["id"] == vid]
    assert entry["expect"] == "valid" and entry["tcid"] == last + 1
    assert len(entry["decoded"]["entries"]) == 3 and entry["decoded"]["encoded_len"] == len(seed)
    # the raw input is a regression input of its target
    with open(os.path.join(regress, "fuzz_kv", vid), "rb") as f:
        assert f.read() == seed
    # the generator reproduces the grown corpus exactly (what make vectors-check compares)
    again = str(tmp_path / "again")
    gen = subprocess.run([sys.executable, os.path.join(vectors, "gen", "generate.py"), "--quiet",
                          "--out", again, "--spec", os.path.join(ROOT, "docs", "spec")],
                         capture_output=True, text=True, timeout=900)
    assert gen.returncode == 0, gen.stderr
    for part in ("valid", "invalid", "implementation-defined", "manifest.cbor"):
        diff = subprocess.run(["diff", "-r", os.path.join(again, part), os.path.join(vectors, part)],
                              capture_output=True, text=True)
        assert diff.returncode == 0, diff.stdout[-2000:]
    # the C reference agrees with the oracle on the new vector (and the rest of the copy)
    run = subprocess.run([HARNESS, "--vectors", vectors, "--id", vid], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "1 passed, 0 failed" in run.stdout, run.stdout

    # an input whose bytes and options are already a vector is not added again (here a
    # fuzz_stream_fd input: its last byte, the transport, comes off first)
    dup = promote(DUPLICATE, vectors, regress)
    assert dup["already_in_corpus"] == "n_stream_buffer__claim_at_default_limit"
    assert tcids(vectors) == after


PLANTED = os.path.join(HERE, "planted", "planted_kv.c")


def test_fuzz_promote_minimises_a_failing_input(tmp_path):
    """A failing input goes the whole way: minimised by libFuzzer (-minimize_crash=1) while it
    still fails, classified by the oracle, written as an invalid vector with the next test-case
    id, kept as a regression input, and the C reference agrees with the oracle on it. The
    failure comes from a throw-away build of fuzz_kv with a planted bug (planted/planted_kv.c:
    any input holding "PLANT" traps), so no real bug is needed: a valid KV section with the
    marker in a trailing junk tail is the artifact."""
    lib = os.path.join(ROOT, "build", "fuzz", "libhurray.a")
    made = subprocess.run(["make", "--no-print-directory", "-s", "build/fuzz/libhurray.a"], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert made.returncode == 0, made.stdout + made.stderr
    build = tmp_path / "build"
    binary = build / "fuzz" / "bin" / "fuzz_kv"
    binary.parent.mkdir(parents=True)
    cc = subprocess.run(
        [os.environ.get("FUZZ_CC", "clang"), "-std=c11", "-O1", "-g",
         "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all",
         "-I", os.path.join(ROOT, "reference", "include"), PLANTED, lib, "-lm", "-o", str(binary)],
        capture_output=True, text=True, timeout=300)
    assert cc.returncode == 0, cc.stderr
    vectors, regress, before, last = corpus_copy(tmp_path)
    artifact = tmp_path / "crash-planted"
    artifact.write_bytes(open(os.path.join(ROOT, SEED), "rb").read() + b"\x00" * 40 + b"PLANT"
                         + b"\xff" * 40)

    proc = subprocess.run([sys.executable, os.path.join(ROOT, "fuzz", "promote.py"),
                           "--artifact", str(artifact), "--target", "fuzz_kv", "--build", str(build),
                           "--vectors", vectors, "--regress", regress, "--runs", "3000"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])

    assert res["minimised"] is True and res["kind"] == "kv"
    kept = open(os.path.join(regress, "fuzz_kv", res["id"]), "rb").read()
    assert b"PLANT" in kept and len(kept) < artifact.stat().st_size
    # the oracle classified the minimised bytes: whatever it reads, not a valid section
    vid = res["id"]
    assert vid.startswith("n_kv_fuzz_") and res["status"] != "OK"
    after = tcids(vectors)
    assert after.startswith(before) and after[len(before):] == f"{last + 1} {vid}\n"
    with open(os.path.join(vectors, "manifest.cbor"), "rb") as f:
        (entry,) = [v for v in cbor2.load(f)["vectors"] if v["id"] == vid]
    assert entry["expect"] == "invalid" and entry["error"] == res["status"]
    with open(os.path.join(vectors, entry["path"]), "rb") as f:
        assert f.read() == kept
    run = subprocess.run([HARNESS, "--vectors", vectors, "--id", vid], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "1 passed, 0 failed" in run.stdout, run.stdout
