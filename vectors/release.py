#!/usr/bin/env python3
"""Build the released corpus: hurray-conformance-vectors-<format>-<corpus>.tar.gz.

    python3 vectors/release.py --out build        (make corpus-release)

The archive holds one folder, hurray-conformance-vectors-<format>-<corpus>/, with the vectors
(valid/, invalid/, implementation-defined/), manifest.cbor, SCHEMA.md (the manifest schema,
vectors/SCHEMA.md), TESTEE-PROTOCOL.md (docs/conformance/testee-protocol.md), the format
specification (spec/, docs/spec/*.md), LICENSE, README.md (vectors/RELEASE-README.md with the
versions and counts filled in) and SHA256SUMS (`sha256sum -c` format, every other file).
<format> is the manifest's spec_version, <corpus> its corpus_version.

Reproducible byte for byte: members in sorted path order, every mtime 0, uid/gid 0 with
empty owner names, modes 0644/0755, a gzip header with mtime 0 and no file name. Before
anything is written every vector file is checked against the manifest (size and SHA-256), so
a stale corpus is never released. Prints the archive's path and SHA-256.
"""
import argparse
import gzip
import hashlib
import io
import os
import sys
import tarfile

import cbor2

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLASS_DIRS = ("valid", "invalid", "implementation-defined")


class ReleaseError(Exception):
    pass


EXAMPLES = ("minimal_testee.py", "minimal_testee.failures")


def counts_table(manifest):
    kinds = ["descriptor", "quantization", "kv", "file", "stream"]
    classes = ["valid", "invalid", "implementation-defined"]
    n = {(k, c): 0 for k in kinds for c in classes}
    for v in manifest["vectors"]:
        n[(v["kind"], v["expect"])] += 1
    rows = ["| kind | must accept | must reject | implementation-defined |", "|---|---|---|---|"]
    for k in kinds:
        rows.append(f"| `{k}` | " + " | ".join(str(n[(k, c)]) for c in classes) + " |")
    rows.append("| all | " + " | ".join(str(sum(n[(k, c)] for k in kinds)) for c in classes) + " |")
    return "\n".join(rows)


def collect(vectors, spec, protocol, license_path, examples):
    """{archive path: bytes} of everything but SHA256SUMS."""
    with open(os.path.join(vectors, "manifest.cbor"), "rb") as f:
        raw = f.read()
    m = cbor2.loads(raw)
    if m.get("format") != "hurray-conformance":
        raise ReleaseError("manifest.cbor is not a hurray-conformance manifest")
    files = {"manifest.cbor": raw}
    for v in m["vectors"]:
        path = v["path"]
        if path.split("/")[0] not in CLASS_DIRS or ".." in path.split("/"):
            raise ReleaseError(f"{v['id']}: unexpected path {path}")
        with open(os.path.join(vectors, path), "rb") as f:
            data = f.read()
        if len(data) != v["size"] or hashlib.sha256(data).digest() != v["sha256"]:
            raise ReleaseError(f"{path} does not match the manifest (regenerate the corpus)")
        files[path] = data
    for top in CLASS_DIRS:  # nothing unlisted rides along
        for dirpath, _dirs, names in os.walk(os.path.join(vectors, top)):
            for name in names:
                rel = os.path.relpath(os.path.join(dirpath, name), vectors).replace(os.sep, "/")
                if rel not in files:
                    raise ReleaseError(f"{rel} is not in the manifest")
    for name in sorted(os.listdir(spec)):
        if name.endswith(".md"):
            with open(os.path.join(spec, name), "rb") as f:
                files[f"spec/{name}"] = f.read()
    for src, dst in ((os.path.join(vectors, "SCHEMA.md"), "SCHEMA.md"),
                     (protocol, "TESTEE-PROTOCOL.md"), (license_path, "LICENSE")):
        with open(src, "rb") as f:
            files[dst] = f.read()
    for name in EXAMPLES:  # the minimal testee and its failure list: a testee to start from
        with open(os.path.join(examples, name), "rb") as f:
            files[f"examples/{name}"] = f.read()
    fmt = "+".join(m["spec_version"])
    with open(os.path.join(vectors, "RELEASE-README.md"), encoding="utf-8") as f:
        readme = f.read()
    readme = (readme.replace("{format}", fmt).replace("{corpus}", m["corpus_version"])
              .replace("{schema}", str(m["schema_version"])).replace("{count}", str(m["count"]))
              .replace("{counts}", counts_table(m)))
    files["README.md"] = readme.encode("utf-8")
    return fmt, m["corpus_version"], files


def sha256sums(files):
    return "".join(f"{hashlib.sha256(files[p]).hexdigest()}  {p}\n"
                   for p in sorted(files)).encode("ascii")


def archive(top, files):
    """The .tar.gz bytes: sorted members, normalised metadata."""
    dirs = set()
    for p in files:
        parts = p.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    entries = sorted([(d, None) for d in dirs] + list(files.items()),
                     key=lambda e: e[0])
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, data in [("", None)] + entries:
            info = tarfile.TarInfo(f"{top}/{path}".rstrip("/"))
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.mode, info.size = 0o644, len(data)
                tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(tar_bytes.getvalue())
    return out.getvalue()


def build(vectors, out, spec, protocol, license_path, examples):
    fmt, corpus, files = collect(vectors, spec, protocol, license_path, examples)
    files["SHA256SUMS"] = sha256sums(files)
    top = f"hurray-conformance-vectors-{fmt}-{corpus}"
    data = archive(top, files)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{top}.tar.gz")
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    return path, hashlib.sha256(data).hexdigest(), len(files)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vectors", default=HERE, help="the corpus (default: this folder)")
    ap.add_argument("--out", required=True, help="folder to write the archive into")
    ap.add_argument("--spec", default=os.path.join(ROOT, "docs", "spec"))
    ap.add_argument("--protocol", default=os.path.join(ROOT, "docs", "conformance", "testee-protocol.md"))
    ap.add_argument("--license", default=os.path.join(ROOT, "LICENSE"))
    ap.add_argument("--examples", default=os.path.join(ROOT, "docs", "conformance"),
                    help="the folder holding " + " and ".join(EXAMPLES))
    a = ap.parse_args(argv)
    try:
        path, digest, n = build(a.vectors, a.out, a.spec, a.protocol, a.license, a.examples)
    except (ReleaseError, OSError, KeyError, ValueError) as e:
        print(f"release.py: {e}", file=sys.stderr)
        return 1
    print(f"{path}: {n} files, sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
