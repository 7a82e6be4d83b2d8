"""Promoted inputs: byte strings a fuzzer (or a person) found, kept in the corpus for good.

Each is a pair under vectors/gen/promoted/: <id>.bin (the bytes) and <id>.json (kind,
options, where it came from). The generator classifies the bytes with its own decoder
(oracle.py) -- valid, or invalid with the status the oracle stops at -- and build_all() adds
them to the corpus like every other vector, so `make vectors-check` regenerates them exactly
and every implementation inherits them. The bytes are the only input: nothing here knows
about any implementation.

    python3 vectors/gen/promoted.py add --kind stream --data crash.bin --origin "fuzz_stream"
        [--options '{"require_end_frame": true}']

adds the pair (the id is <class>_<area>_fuzz_<first 12 hex digits of the SHA-256>) and prints
the id and its class; then generate.py --assign-new-tcids registers the id in tcids.txt.
"""
import argparse
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import oracle  # noqa: E402

DIR = os.path.join(HERE, "promoted")
AREA = {"descriptor": "desc", "quantization": "quant", "kv": "kv", "file": "file",
        "stream": "stream"}
# the decoding order each kind follows (the step that refused it is in `where`)
REFS = {"descriptor": ["HR-DESC-5"], "quantization": ["HR-QUANT-1"], "kv": ["HR-KV-9"],
        "file": ["HR-FILE-6"], "stream": ["HR-STREAM-9"]}


def classify(kind, data, options=None):
    """(status, decoded map or where, items read before the status; None but for streams)."""
    if kind == "descriptor":
        return oracle.decode_descriptor(data, options) + (None,)
    if kind == "quantization":
        return oracle.decode_quantization(data) + (None,)
    if kind == "kv":
        return oracle.decode_kv(data, options) + (None,)
    if kind == "file":
        return oracle.decode_file(data, options) + (None,)
    if kind == "stream":
        return oracle.decode_stream(data, options)
    raise ValueError(f"unknown kind {kind}")


def vector_id(kind, data, status):
    return f"{'y' if status == 'OK' else 'n'}_{AREA[kind]}_fuzz_" \
           f"{hashlib.sha256(data).hexdigest()[:12]}"


def _truncations_ok(kind, data, options, decoded):
    """The promise of a valid vector (SCHEMA.md): every proper prefix of what is read is
    TRUNCATED -- for a descriptor, of its encoded_len bytes (bytes after it are not read)."""
    if kind == "stream":
        return False  # streams have prefixes that are themselves valid: not promoted as valid
    n = decoded["encoded_len"] if kind == "descriptor" else len(data)
    return all(classify(kind, data[:k], options)[0] == "TRUNCATED" for k in range(n))


def build_all(c):
    """Adds every promoted input to the corpus `c` (corpus.Corpus)."""
    if not os.path.isdir(DIR):
        return
    for name in sorted(os.listdir(DIR)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(DIR, name), encoding="utf-8") as f:
            meta = json.load(f)
        with open(os.path.join(DIR, name[:-5] + ".bin"), "rb") as f:
            data = f.read()
        kind, options = meta["kind"], meta.get("options") or None
        status, got, after = classify(kind, data, options)
        vid = vector_id(kind, data, status)
        if vid != name[:-5]:
            raise ValueError(f"promoted/{name}: the oracle now classifies it as {vid}")
        desc = f"Promoted from {meta['origin']}. " + meta.get("note", "")
        refs = REFS[kind]
        if status != "OK":
            if kind == "descriptor":
                c.n_bytes(vid, data, status, desc.strip(), refs, options)
            elif kind == "quantization":
                c.nq(vid, data, status, desc.strip(), refs)
            elif kind == "kv":
                c.nkv(vid, data, status, desc.strip(), refs, options)
            elif kind == "file":
                c.nfile(vid, data, status, desc.strip(), refs, options)
            else:
                c.nstream(vid, data, status, after, desc.strip(), refs, options)
            continue
        if not _truncations_ok(kind, data, options, got):
            raise ValueError(f"promoted/{name}: valid, but a prefix is not TRUNCATED")
        c._add({"id": vid, "kind": kind, "expect": "valid", "data": data, "decoded": got,
                "description": desc.strip(), "spec_refs": refs, "options": options})


def add(kind, data, origin, options=None, note=""):
    """Stores the pair; returns (id, status, where). An input already there is left alone."""
    status, got, after = classify(kind, data, options)
    if status == "OK" and not _truncations_ok(kind, data, options, got):
        raise SystemExit(f"promoted.py: the input is valid but a proper prefix of it is not "
                         f"TRUNCATED (a valid {kind} vector promises that); not promoted")
    vid = vector_id(kind, data, status)
    os.makedirs(DIR, exist_ok=True)
    base = os.path.join(DIR, vid)
    if not os.path.exists(base + ".json"):
        with open(base + ".bin", "wb") as f:
            f.write(data)
        meta = {"kind": kind, "origin": origin, "options": options or None, "note": note}
        with open(base + ".json", "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2, sort_keys=True)
            f.write("\n")
    return vid, status, (got if status != "OK" else "valid"), after


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a_add = sub.add_parser("add", help="classify a byte string and store it as a vector")
    a_add.add_argument("--kind", required=True, choices=sorted(AREA))
    a_add.add_argument("--data", required=True, help="file holding the bytes")
    a_add.add_argument("--origin", required=True, help="where it came from (one line)")
    a_add.add_argument("--options", default=None, help="decode options, JSON")
    a_add.add_argument("--note", default="")
    a_cls = sub.add_parser("classify", help="only print the oracle's verdict")
    a_cls.add_argument("--kind", required=True, choices=sorted(AREA))
    a_cls.add_argument("--data", required=True)
    a_cls.add_argument("--options", default=None)
    a = ap.parse_args(argv)
    with open(a.data, "rb") as f:
        data = f.read()
    options = json.loads(a.options) if a.options else None
    if a.cmd == "classify":
        status, got, after = classify(a.kind, data, options)
        print(json.dumps({"status": status, "where": got if status != "OK" else None,
                          "items_before": after}))
        return 0
    vid, status, where, after = add(a.kind, data, a.origin, options, a.note)
    print(json.dumps({"id": vid, "status": status, "where": where, "items_before": after}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
