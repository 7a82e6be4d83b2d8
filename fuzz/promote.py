#!/usr/bin/env python3
"""A fuzzer finding into the golden corpus (make fuzz-promote ARTIFACT=path [TARGET=fuzz_x]).

  1. the target: TARGET, or the fuzz_* name in the artifact's path;
  2. minimise: if the input still fails its target (libFuzzer build), libFuzzer
     -minimize_crash=1 shrinks it to the smallest input that still fails; an input that
     passes (a regression input, a corpus entry worth keeping) is kept as it is;
  3. the bytes a reader sees: the target's own framing taken off (fuzz_stream_fd: the last
     byte picks the transport, bit 6 require_end_frame; fuzz_alloc_fail: three leading bytes
     pick the reader and the allocation to fail);
  4. classify and store: vectors/gen/promoted.py (the generator's oracle, which reads only the
     bytes) decides valid or invalid and the status, and stores them under
     vectors/gen/promoted/; generate.py --assign-new-tcids regenerates the corpus and gives the
     new id the next test-case id in tcids.txt (append-only);
  5. the raw finding is also kept as fuzz/regress/<target>/<id> so that fuzz-replay replays it
     through its own target.

The corpus then fails `make conformance` for as long as libhurray disagrees with the oracle:
that disagreement is the finding, now written down where every implementation sees it.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGETS = ("fuzz_descriptor", "fuzz_quant", "fuzz_kv", "fuzz_file", "fuzz_stream",
           "fuzz_stream_fd", "fuzz_alloc_fail")
ALLOC_READERS = ("descriptor", "kv", "file", "stream")  # fuzz_alloc_fail.c, byte 0 bits 0-1


def infer_target(path):
    names = [t for t in TARGETS if re.search(rf"(^|[/_.-]){t}([/_.-]|$)", path)]
    names = [t for t in names if not any(o != t and o.startswith(t) for o in names)]
    return names[0] if len(names) == 1 else None


def reader_input(target, data):
    """(kind, bytes, options) the target's reader sees."""
    if target == "fuzz_stream_fd":
        if not data:
            raise SystemExit("promote: an empty fuzz_stream_fd input has no stream")
        return "stream", data[:-1], ({"require_end_frame": True} if data[-1] & 0x40 else None)
    if target == "fuzz_alloc_fail":
        if len(data) < 3:
            raise SystemExit("promote: a fuzz_alloc_fail input under 3 bytes reads nothing")
        return ALLOC_READERS[data[0] & 3], data[3:], None
    return {"fuzz_descriptor": "descriptor", "fuzz_quant": "quantization", "fuzz_kv": "kv",
            "fuzz_file": "file", "fuzz_stream": "stream"}[target], data, None


LIMITS = ["-rss_limit_mb=512", "-malloc_limit_mb=256", "-timeout=10"]
# Every way in on every input: minimising changes the bytes, and with them the inputs that a
# sampling target (fuzz_file) cross-checks while fuzzing.
ENV = dict(os.environ, HURRAY_FUZZ_ALL_MODES="1")


def fails(binary, path):
    p = subprocess.run([binary] + LIMITS + [path], capture_output=True, cwd=ROOT, env=ENV)
    return p.returncode != 0


def minimise(binary, path, runs):
    out = tempfile.NamedTemporaryFile(delete=False, prefix="hurray-min-").name
    p = subprocess.run([binary] + LIMITS + ["-minimize_crash=1", f"-runs={runs}",
                                            f"-exact_artifact_path={out}", path],
                       capture_output=True, cwd=ROOT, env=ENV)
    if os.path.exists(out) and os.path.getsize(out) and fails(binary, out):
        return out
    sys.stderr.write(p.stderr.decode(errors="replace")[-2000:])
    raise SystemExit("promote: minimisation lost the failure")


def already_there(vectors, kind, data, options):
    """The id of a vector of the corpus with these bytes, kind and options, or None."""
    import hashlib

    import cbor2  # the manifest's format (ci/requirements-dev.txt)
    with open(os.path.join(vectors, "manifest.cbor"), "rb") as f:
        m = cbor2.load(f)
    digest = hashlib.sha256(data).digest()
    for v in m["vectors"]:
        if v["kind"] == kind and v["sha256"] == digest and (v.get("options") or None) == options:
            return v["id"]
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--artifact", required=True)
    ap.add_argument("--target", default=None)
    ap.add_argument("--build", default="build")
    ap.add_argument("--vectors", default=os.path.join(ROOT, "vectors"),
                    help="the corpus root; its gen/ is the generator that classifies")
    ap.add_argument("--regress", default=os.path.join(HERE, "regress"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--runs", type=int, default=50000, help="-runs of -minimize_crash")
    ap.add_argument("--note", default="")
    a = ap.parse_args(argv)
    target = a.target or infer_target(os.path.abspath(a.artifact))
    if target not in TARGETS:
        raise SystemExit(f"promote: name the target (TARGET=one of {' '.join(TARGETS)})")
    binary = os.path.join(ROOT, a.build, "fuzz", "bin", target)
    if not os.path.exists(binary):
        raise SystemExit(f"promote: {binary} is not built (make fuzz-build)")
    path = a.artifact
    failed = fails(binary, path)
    if failed:
        path = minimise(binary, path, a.runs)
    raw = open(path, "rb").read()
    kind, data, options = reader_input(target, raw)
    dup = already_there(a.vectors, kind, data, options)
    if dup:
        if path != a.artifact:
            os.unlink(path)
        print(json.dumps({"already_in_corpus": dup, "target": target, "kind": kind}))
        return 0
    with tempfile.NamedTemporaryFile(delete=False, prefix="hurray-promote-") as f:
        f.write(data)
    gen = os.path.join(a.vectors, "gen")
    origin = f"{target} ({'a failing input, minimised' if failed else 'an input it passes'}; " \
             f"{len(raw)} bytes as the target reads them)"
    cmd = [a.python, os.path.join(gen, "promoted.py"), "add", "--kind", kind, "--data", f.name,
           "--origin", origin, "--note", a.note]
    if options:
        cmd += ["--options", json.dumps(options)]
    res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    os.unlink(f.name)
    spec = os.path.join(ROOT, "docs", "spec")
    subprocess.run([a.python, os.path.join(gen, "generate.py"), "--quiet", "--assign-new-tcids",
                    "--out", a.vectors, "--spec", spec], check=True)
    tcid = None
    for line in open(os.path.join(gen, "tcids.txt"), encoding="utf-8"):
        parts = line.split("#", 1)[0].split()
        if len(parts) >= 2 and parts[1] == res["id"]:
            tcid = int(parts[0])
    os.makedirs(os.path.join(a.regress, target), exist_ok=True)
    keep = os.path.join(a.regress, target, res["id"])
    shutil.copyfile(path, keep)
    if path != a.artifact:
        os.unlink(path)
    res.update({"tcid": tcid, "target": target, "kind": kind, "minimised": failed,
                "regression_input": os.path.relpath(keep, ROOT)})
    print(json.dumps(res, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
