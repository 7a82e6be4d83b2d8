"""The released corpus (vectors/release.py, make corpus-release).

Two builds are byte-identical; the archive holds exactly the vectors, the manifest, the
documents and a SHA256SUMS that covers every other file; its metadata is normalised (sorted
members, mtime/uid/gid 0); and the extracted corpus, with nothing of the repository around
it, passes the runner. A stale corpus (a vector that no longer matches the manifest) is not
released.

    pytest harness/tests/test_release.py
"""
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile

import cbor2
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VECTORS = os.environ.get("HURRAY_VECTORS", os.path.join(ROOT, "vectors"))
HARNESS = os.environ.get("HURRAY_HARNESS", os.path.join(ROOT, "build", "harness",
                                                        "hurray-conformance"))
RELEASE = os.path.join(ROOT, "vectors", "release.py")


def manifest():
    with open(os.path.join(VECTORS, "manifest.cbor"), "rb") as f:
        return cbor2.loads(f.read())


def build(out, vectors=VECTORS):
    proc = subprocess.run([sys.executable, RELEASE, "--vectors", vectors, "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    return proc


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    out = tmp_path_factory.mktemp("release")
    proc = build(out)
    assert proc.returncode == 0, proc.stderr
    (path,) = list(out.iterdir())
    return path


def test_name_carries_format_and_corpus_version(release):
    m = manifest()
    assert release.name == (f"hurray-conformance-vectors-{'+'.join(m['spec_version'])}-"
                            f"{m['corpus_version']}.tar.gz")


def test_two_builds_are_byte_identical(release, tmp_path):
    proc = build(tmp_path)
    assert proc.returncode == 0, proc.stderr
    again = tmp_path / release.name
    assert again.read_bytes() == release.read_bytes()


def test_members_are_sorted_and_normalised(release):
    data = release.read_bytes()
    assert data[4:8] == b"\0\0\0\0"  # gzip header mtime 0
    assert data[3] & 0x08 == 0       # no file name in the gzip header
    with tarfile.open(release) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names)
    top = release.name[:-len(".tar.gz")]
    assert names[0] == top and all(n.startswith(top + "/") for n in names[1:])
    for m in members:
        assert (m.mtime, m.uid, m.gid, m.uname, m.gname) == (0, 0, 0, "", "")
        assert m.mode == (0o755 if m.isdir() else 0o644)
        assert m.isdir() or m.isfile()


def test_contents_and_checksums(release, tmp_path):
    with tarfile.open(release) as tar:
        tar.extractall(tmp_path, filter="data")
    root = tmp_path / release.name[:-len(".tar.gz")]
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    m = manifest()
    paths = {v["path"] for v in m["vectors"]}
    docs = {"README.md", "SCHEMA.md", "TESTEE-PROTOCOL.md", "LICENSE", "SHA256SUMS", "manifest.cbor",
            "examples/minimal_testee.py", "examples/minimal_testee.failures"}
    spec = {f"spec/{n}" for n in os.listdir(os.path.join(ROOT, "docs", "spec")) if n.endswith(".md")}
    assert set(files) == paths | docs | spec
    assert (root / "manifest.cbor").read_bytes() == open(os.path.join(VECTORS, "manifest.cbor"), "rb").read()
    assert (root / "SCHEMA.md").read_bytes() == open(os.path.join(ROOT, "vectors", "SCHEMA.md"), "rb").read()
    for name in ("minimal_testee.py", "minimal_testee.failures"):
        assert (root / "examples" / name).read_bytes() == open(
            os.path.join(ROOT, "docs", "conformance", name), "rb").read()
    sums = {}
    for line in (root / "SHA256SUMS").read_text().splitlines():
        digest, path = line.split("  ", 1)
        sums[path] = digest
    assert set(sums) == set(files) - {"SHA256SUMS"}
    for path, digest in sums.items():
        assert hashlib.sha256((root / path).read_bytes()).hexdigest() == digest, path
    if shutil.which("sha256sum"):
        proc = subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=root,
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    readme = (root / "README.md").read_text()
    assert m["corpus_version"] in readme and "{" not in readme.split("```")[0]


def test_extracted_corpus_passes_the_runner(release, tmp_path):
    if not os.access(HARNESS, os.X_OK):
        pytest.fail(f"harness not built: {HARNESS} (make harness)")
    with tarfile.open(release) as tar:
        tar.extractall(tmp_path, filter="data")
    root = tmp_path / release.name[:-len(".tar.gz")]
    proc = subprocess.run([HARNESS, "--vectors", str(root)], capture_output=True, text=True,
                          timeout=600)
    n = manifest()["count"]
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert proc.stdout.endswith(f"{n} passed, 0 failed\n")


def test_stale_corpus_is_not_released(tmp_path):
    copy = tmp_path / "vectors"
    shutil.copytree(VECTORS, copy, ignore=shutil.ignore_patterns("gen", "__pycache__"))
    for name in ("SCHEMA.md", "RELEASE-README.md"):
        shutil.copy(os.path.join(ROOT, "vectors", name), copy / name)
    m = manifest()
    victim = copy / m["vectors"][0]["path"]
    data = bytearray(victim.read_bytes())
    data[-1] ^= 1
    victim.write_bytes(bytes(data))
    proc = build(tmp_path / "out", str(copy))
    assert proc.returncode == 1
    assert "does not match the manifest" in proc.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    victim.write_bytes(bytes(data[:-1]) + bytes([data[-1] ^ 1]))
    (copy / "valid" / "stray.hry").write_bytes(b"x")
    proc = build(tmp_path / "out", str(copy))
    assert proc.returncode == 1 and "stray.hry is not in the manifest" in proc.stderr


def test_tar_reads_back_with_the_standard_library(release):
    """Any tar reader: the archive is plain PAX/ustar, gzip-compressed."""
    with tarfile.open(fileobj=io.BytesIO(release.read_bytes()), mode="r:gz") as tar:
        assert tar.getmember(release.name[:-len(".tar.gz")] + "/manifest.cbor").size > 0
