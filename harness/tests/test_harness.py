"""Tests of the harness itself, on the hand-written corpus of make_test_corpus.py.

Each test breaks one thing (the manifest's schema, a file, an oracle value, the command line)
and checks that the harness reports exactly that, never crashes, and exits as documented:
0 iff nothing failed and at least one vector ran, 1 on failures, 2 on usage errors.

    pytest harness/tests/test_harness.py   (HURRAY_HARNESS overrides the binary; set
                                            HURRAY_HARNESS_WRAPPER="valgrind -q --error-exitcode=99"
                                            to run every case under valgrind)
"""
import copy
import hashlib
import os
import re
import shlex
import subprocess
import sys

import cbor2
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HARNESS = os.environ.get("HURRAY_HARNESS", os.path.join(ROOT, "build", "harness",
                                                        "hurray-conformance"))
WRAPPER = shlex.split(os.environ.get("HURRAY_HARNESS_WRAPPER", ""))
TESTEE = os.environ.get("HURRAY_TESTEE", os.path.join(ROOT, "build", "harness", "hurray-testee"))

sys.path.insert(0, HERE)
import make_test_corpus  # noqa: E402

FAIL = re.compile(r"^FAIL (.+?): (.*)$", re.M)
FINAL = re.compile(r"(\d+) passed, (\d+) failed\n?\Z")


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    if not os.access(HARNESS, os.X_OK):
        pytest.fail(f"harness not built: {HARNESS} (make harness)")
    out = tmp_path_factory.mktemp("corpus")
    make_test_corpus.VECTORS.clear()
    make_test_corpus.build()
    for v in make_test_corpus.VECTORS:
        path = out / v["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(v["data"])
    (out / "manifest.cbor").write_bytes(cbor2.dumps(make_test_corpus.manifest(), canonical=True))
    return out


@pytest.fixture
def work(corpus, tmp_path):
    """A private copy of the corpus: (dir, manifest dict)."""
    import shutil
    d = tmp_path / "v"
    shutil.copytree(corpus, d)
    return d, cbor2.loads((d / "manifest.cbor").read_bytes())


class Result:
    def __init__(self, proc):
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.fails = dict(FAIL.findall(proc.stdout))
        m = FINAL.search(proc.stdout)
        self.final = (int(m.group(1)), int(m.group(2))) if m else None


def run(d, *args):
    proc = subprocess.run(WRAPPER + [HARNESS, "--vectors", str(d), *args], capture_output=True,
                          text=True, timeout=600)
    assert "AddressSanitizer" not in proc.stderr and "runtime error" not in proc.stderr, proc.stderr
    if WRAPPER:
        assert proc.returncode != 99, proc.stderr  # valgrind found something
    return Result(proc)


def save(d, manifest, raw=None):
    (d / "manifest.cbor").write_bytes(raw if raw is not None else
                                      cbor2.dumps(manifest, canonical=True))


def vec(manifest, vid):
    return next(v for v in manifest["vectors"] if v["id"] == vid)




def count(manifest):
    return len(manifest["vectors"])


# ------------------------------------------------------------------- baseline ---

def test_clean_corpus_passes(work):
    d, m = work
    r = run(d)
    assert r.code == 0, r.out
    assert r.final == (count(m), 0)
    assert r.out.endswith(f"{count(m)} passed, 0 failed\n")


def test_filters(work):
    d, m = work
    r = run(d, "--kind", "quantization")
    quant = sum(v["kind"] == "quantization" for v in m["vectors"])
    assert r.code == 0 and r.final == (quant, 0)
    r = run(d, "--id", "y_desc_coo_nnz2", "--verbose")
    assert r.code == 0 and r.final == (1, 0)
    assert "ok   decoded.layout.nnz: expected 2, got 2" in r.out


def test_unknown_id_is_a_usage_error(work):
    d, _ = work
    assert run(d, "--id", "no_such_vector").code == 2


def test_bad_arguments(work):
    d, _ = work
    assert run(d, "--kind", "tensorfile").code == 2
    assert run(d, "--frobnicate").code == 2
    proc = subprocess.run([HARNESS], capture_output=True, text=True)
    assert proc.returncode == 2


# ---------------------------------------------------------------- the oracle ---

@pytest.mark.parametrize("vid,edit,needle", [
    ("y_desc_int32_strided_negative", lambda d: d["layout"]["strides"].__setitem__(1, -2),
     "decoded.layout.strides[1]: expected -2, got -1"),
    ("y_desc_f16_dynamic_stats_unknown_section",
     lambda d: d["statistics"]["max"].__setitem__("f64", 0x4000000000000001),
     "decoded.statistics.max: expected 0x4000000000000001"),
    ("y_desc_f16_dynamic_stats_unknown_section", lambda d: d["shape"].__setitem__(0, 7),
     "decoded.shape[0]: expected 7, got null"),
    ("y_desc_f16_dynamic_stats_unknown_section",
     lambda d: d["unknown_sections"][0].__setitem__("data", b"hellO"),
     "decoded.unknown_sections[0].data: bytes differ at offset 4"),
    ("y_desc_private_everything", lambda d: d.__setitem__("device", "cuda"),
     'decoded.device: expected "cuda", got "private"'),
    ("y_desc_int8_per_tensor_affine", lambda d: d["quantization"].__setitem__("zero_point", 3),
     "decoded.quantization.zero_point: expected 3, got -3"),
    ("y_desc_composite_overlay_add", lambda d: d["layout"].__setitem__("combine", None),
     'decoded.layout.combine: expected null, got "add"'),
    ("y_desc_shard_and_role", lambda d: d.__setitem__("role", None),
     'decoded.role: expected null, got "correction"'),
    ("y_desc_f32_2x3_row_major", lambda d: d.__setitem__("encoded_len", 76),
     "decoded.encoded_len: expected 76, got 72"),
    ("y_desc_f32_2x3_row_major", lambda d: d["buffers"][0].__setitem__("alignment", 32),
     "decoded.buffers[0].alignment: expected 32, got 64"),
    ("y_quant_nvfp4", lambda d: d.__setitem__("tensor_scale", {"f32": 0x3f400001}),
     "decoded.tensor_scale: expected 0x3f400001"),
])
def test_oracle_mismatch_is_reported(work, vid, edit, needle):
    d, m = work
    edit(vec(m, vid)["decoded"])
    save(d, m)
    r = run(d)
    assert r.code == 1
    assert set(r.fails) == {vid}, r.out
    assert r.fails[vid].startswith(needle), r.fails[vid]
    assert r.final == (count(m) - 1, 1)


def test_verbose_prints_hex_window_for_byte_mismatch(work):
    d, m = work
    vec(m, "y_desc_reserved_layout_carried")["decoded"]["layout"]["params"] = b"\xaa\xbb\xcd"
    save(d, m)
    r = run(d, "--id", "y_desc_reserved_layout_carried", "--verbose")
    assert r.code == 1
    assert "DIFF decoded.layout.params: bytes differ at offset 2 (expected cd, got cc" in r.out
    assert re.search(r"expected @000000: aa bb\[cd\]", r.out), r.out
    assert re.search(r"got      @000000: aa bb\[cc\]", r.out), r.out


def test_wrong_error_code_fails(work):
    d, m = work
    vec(m, "n_desc_bad_magic")["error"] = "VERSION"
    save(d, m)
    r = run(d)
    assert set(r.fails) == {"n_desc_bad_magic"}
    assert r.fails["n_desc_bad_magic"].startswith("expected VERSION, got BAD_MAGIC")


def test_invalid_vector_that_decodes_fails(work):
    d, m = work
    v = vec(m, "n_desc_rank_over_limit")
    del v["options"]
    save(d, m)
    r = run(d)
    assert r.fails == {"n_desc_rank_over_limit": "expected LIMIT, but the input was accepted"}


def test_impl_defined_outcome_outside_list(work):
    d, m = work
    vec(m, "i_desc_descriptor_limit_64")["i_outcomes"] = ["ok"]
    save(d, m)
    r = run(d)
    assert set(r.fails) == {"i_desc_descriptor_limit_64"}
    assert "not in i_outcomes [ok]" in r.fails["i_desc_descriptor_limit_64"]


def test_valid_vector_that_fails_to_decode(work):
    d, m = work
    v = vec(m, "y_desc_f32_2x3_row_major")
    v["options"] = {"max_buffer_bytes": 16}
    save(d, m)
    r = run(d)
    assert set(r.fails) == {"y_desc_f32_2x3_row_major"}
    assert r.fails["y_desc_f32_2x3_row_major"].startswith(
        "expected a valid descriptor, decode failed: LIMIT")


# ------------------------------------------------------------------- files ---

def test_sha256_mismatch(work):
    d, m = work
    v = vec(m, "y_desc_coo_nnz2")
    p = d / v["path"]
    data = bytearray(p.read_bytes())
    data[-1] ^= 1
    p.write_bytes(data)
    r = run(d)
    assert set(r.fails) == {"y_desc_coo_nnz2"}
    assert r.fails["y_desc_coo_nnz2"].startswith("sha256 mismatch for valid/desc/y_desc_coo_nnz2")


def test_size_mismatch_longer_and_shorter(work):
    d, m = work
    v = vec(m, "y_desc_coo_nnz2")
    p = d / v["path"]
    p.write_bytes(p.read_bytes() + b"\0")
    w = vec(m, "n_desc_bad_magic")
    q = d / w["path"]
    q.write_bytes(q.read_bytes()[:-1])
    r = run(d)
    assert set(r.fails) == {"y_desc_coo_nnz2", "n_desc_bad_magic"}
    assert "is longer than the manifest size" in r.fails["y_desc_coo_nnz2"]
    assert "manifest size is 72" in r.fails["n_desc_bad_magic"]


def test_missing_file(work):
    d, m = work
    os.remove(d / vec(m, "y_quant_nvfp4")["path"])
    r = run(d)
    assert set(r.fails) == {"y_quant_nvfp4"}
    assert r.fails["y_quant_nvfp4"].startswith("cannot open")


@pytest.mark.parametrize("path", ["/etc/passwd", "../manifest.cbor", "valid/../x", "a//b", ""])
def test_unsafe_paths_are_schema_errors(work, path):
    d, m = work
    vec(m, "y_quant_nvfp4")["path"] = path
    save(d, m)
    r = run(d)
    assert set(r.fails) == {"y_quant_nvfp4"}
    assert r.fails["y_quant_nvfp4"].startswith("schema: path:")


# ------------------------------------------------------------------ schema ---

@pytest.mark.parametrize("edit,needle", [
    (lambda v: v.__setitem__("colour", "blue"), 'schema: vector: unknown key "colour"'),
    (lambda v: v.pop("tcid"), 'schema: vector: missing required key "tcid"'),
    (lambda v: v.__setitem__("size", -1), "schema: size: expected uint, got negint"),
    (lambda v: v.__setitem__("sha256", b"\0" * 31), "schema: sha256: expected 32 bytes, got 31"),
    (lambda v: v.__setitem__("roundtrip", 1), "schema: roundtrip: expected bool, got uint"),
    (lambda v: v.__setitem__("kind", "tensorfile"), 'schema: kind: unknown kind "tensorfile"'),
    (lambda v: v.__setitem__("expect", "y"), 'schema: expect: unknown expectation "y"'),
    (lambda v: v.__setitem__("error", "LENGTH"), "schema: error: present, but the vector is not invalid"),
    (lambda v: v.__setitem__("options", {"max_rnak": 3}), 'schema: options: unknown limit "max_rnak"'),
    (lambda v: v.__setitem__("options", None), "schema: options: expected map, got null"),
    (lambda v: v["decoded"].pop("role"), 'schema: decoded: missing required key "role"'),
    (lambda v: v["decoded"].__setitem__("extra", 1), 'schema: decoded: unknown key "extra"'),
    (lambda v: v["decoded"]["shape"].__setitem__(0, "2"),
     "schema: decoded.shape[0]: expected uint or null, got tstr"),
    (lambda v: v["decoded"]["shape"].__setitem__(0, -2),
     "schema: decoded.shape[0]: expected uint or null, got negint"),
    (lambda v: v["decoded"]["shape"].__setitem__(0, 2.0),
     "schema: decoded.shape[0]: expected uint or null, got float"),
    (lambda v: v["decoded"]["layout"].__setitem__("nnz", 2),
     'schema: decoded.layout: key "nnz" does not belong to layout tag 0x01'),
    (lambda v: v["decoded"]["buffers"][0].pop("sync_mode"),
     'schema: decoded.buffers[0]: missing required key "sync_mode"'),
    (lambda v: v["decoded"].__setitem__("version", [1]),
     "schema: decoded.version: expected [major, minor], got 1 entries"),
    (lambda v: v["decoded"].__setitem__("statistics", {"has_min_max": False}),
     'schema: decoded.statistics: missing required key "has_nan_count"'),
    (lambda v: v["decoded"].__setitem__("quantization", {"scheme": "nf8"}),
     'schema: decoded.quantization.scheme: unknown quantization scheme "nf8"'),
    (lambda v: v["decoded"].__setitem__("quantization", {"scheme": "mx", "axis": 0,
                                                         "scale_buffer_index": 1}),
     'schema: decoded.quantization: missing key "block_size" (required for scheme mx)'),
    (lambda v: v["decoded"].__setitem__("dtype", b"float32"),
     "schema: decoded.dtype: expected tstr, got bstr"),
    (lambda v: v["decoded"].__setitem__("byte_offset", cbor2.CBORTag(2, b"\0")),
     "schema: decoded.byte_offset: expected uint, got tag"),
])
def test_schema_errors_fail_the_vector(work, edit, needle):
    d, m = work
    vid = "y_desc_f32_2x3_row_major"
    edit(vec(m, vid))
    save(d, m)
    r = run(d)
    assert r.code == 1
    assert set(r.fails) == {vid}, r.out
    assert r.fails[vid].startswith(needle), r.fails[vid]


def test_vector_that_is_not_a_map(work):
    d, m = work
    m["vectors"][3] = ["not", "a", "map"]
    save(d, m)
    r = run(d)
    assert r.fails == {"vectors[3]": "schema: vector: expected map, got array"}
    assert "unclassified" in r.out


def test_duplicate_map_key_is_a_schema_error(work):
    d, m = work
    # cbor2 cannot write a duplicate key: splice one into the encoded manifest instead.
    v = vec(m, "y_quant_nvfp4")
    v["zzzz"] = 1
    raw = cbor2.dumps(m, canonical=True)
    raw = raw.replace(cbor2.dumps("zzzz"), cbor2.dumps("tcid"), 1)
    save(d, m, raw)
    r = run(d)
    assert r.fails["y_quant_nvfp4"].startswith('schema: vector: duplicate key "tcid"')


# ---------------------------------------------------------------- manifest ---

def test_count_mismatch_and_duplicate_ids(work):
    d, m = work
    m["count"] += 1
    m["vectors"][1]["tcid"] = m["vectors"][0]["tcid"]
    dup = copy.deepcopy(m["vectors"][2])
    m["vectors"].insert(3, dup)
    m["count"] += 1
    save(d, m)
    r = run(d)
    assert r.code == 1
    manifest_fails = [line for line in r.out.splitlines() if line.startswith("FAIL manifest:")]
    text = "\n".join(manifest_fails)
    assert "count is" in text and "duplicate id" in text and "duplicate tcid" in text
    assert r.final[1] == len(manifest_fails)


def test_unsorted_ids(work):
    d, m = work
    m["vectors"][0], m["vectors"][1] = m["vectors"][1], m["vectors"][0]
    save(d, m)
    r = run(d)
    assert r.code == 1
    assert "FAIL manifest: vectors not sorted by id at vectors[1]" in r.out


def test_error_code_registry_checked_against_library(work):
    d, m = work
    m["error_codes"]["LENGTH"] = 99
    m["error_codes"]["NEW_CODE"] = 40
    save(d, m)
    r = run(d)
    assert "FAIL manifest: error_codes.LENGTH: manifest value 99, libhurray 7" in r.out
    assert "FAIL manifest: error_codes.NEW_CODE: status unknown to libhurray" in r.out
    assert "FAIL manifest: error_codes: libhurray status LENGTH (7) missing" in r.out


def test_default_limits_checked_against_library(work):
    d, m = work
    m["default_limits"]["max_rank"] = 32
    del m["default_limits"]["max_kv_bytes"]
    save(d, m)
    r = run(d)
    assert "FAIL manifest: default_limits.max_rank: manifest 32, libhurray's default is 64" in r.out
    assert 'FAIL manifest: default_limits: missing "max_kv_bytes"' in r.out


def test_unknown_top_level_key(work):
    d, m = work
    m["flavour"] = "vanilla"
    save(d, m)
    r = run(d)
    assert 'FAIL manifest: schema: manifest: unknown key "flavour"' in r.out


@pytest.mark.parametrize("raw,needle", [
    (b"", "empty file"),
    (b"\xa1", "truncated CBOR"),
    (b"\x9f" * 5000, "hurray-conformance:"),          # deep nesting, truncated
    (b"\x81" * 3000 + b"\x00", "hurray-conformance:"),  # deep nesting, complete
    (cbor2.dumps([1, 2, 3]), "top level is not a map"),
    (cbor2.dumps({"format": "other"}), '"format" is not "hurray-conformance"'),
    (cbor2.dumps({"format": "hurray-conformance", "schema_version": 6}), "schema_version"),
    (cbor2.dumps({"format": "hurray-conformance", "schema_version": 0}), "schema_version"),
    (cbor2.dumps({"format": "hurray-conformance", "schema_version": 1}),
     '"vectors" is missing or not an array'),
    (cbor2.dumps({"a": 1}) + b"\x00", "trailing bytes"),
    (b"\x62\xff\xfe", "hurray-conformance:"),          # invalid UTF-8 in a tstr
])
def test_unusable_manifests_do_not_crash(work, raw, needle):
    d, m = work
    save(d, m, raw)
    r = run(d)
    assert r.code == 1, r.out + r.err
    assert needle in r.err, r.err
    assert r.final[0] == 0 and r.final[1] >= 1, r.out


def test_missing_manifest(tmp_path):
    if not os.access(HARNESS, os.X_OK):
        pytest.fail("harness not built (make harness)")
    r = run(tmp_path)
    assert r.code == 1 and "cannot open" in r.err and r.final == (0, 1)


def test_empty_vector_list_is_not_a_pass(work):
    d, m = work
    m["vectors"] = []
    m["count"] = 0
    save(d, m)
    r = run(d)
    assert r.code == 1 and r.final == (0, 0)


def test_isolate_gives_the_same_answers(work):
    d, m = work
    vec(m, "n_desc_bad_magic")["error"] = "VERSION"
    save(d, m)
    a, b = run(d), run(d, "--isolate")
    assert a.fails == b.fails and a.final == b.final and a.code == b.code == 1


def test_roundtrip_mismatch_reports_offset(work):
    """A file whose re-encoding differs: a non-canonical descriptor the library accepts would
    be a library bug; here the oracle's encoded_len is shortened instead, so the encoder's
    output (72 bytes) must be compared against a 72-byte prefix and still match, while the
    decoded.encoded_len comparison fails."""
    d, m = work
    v = vec(m, "y_desc_f32_2x3_row_major")
    v["decoded"]["encoded_len"] = 64
    save(d, m)
    r = run(d, "--id", v["id"], "--verbose")
    assert "decoded.encoded_len: expected 64, got 72" in r.out
    assert "DIFF roundtrip: hurray_descriptor_encoded_len: expected 64, got 72" in r.out


# ------------------------------------------------------- schema 2: kv, file, stream ---

def test_new_kinds_filter(work):
    d, m = work
    for kind in ("kv", "file", "stream"):
        r = run(d, "--kind", kind)
        n = sum(v["kind"] == kind for v in m["vectors"])
        assert n >= 5 and r.code == 0 and r.final == (n, 0), (kind, r.out)
        assert re.search(rf"^{kind} +\d+/\d+ ", r.out, re.M), r.out


def test_table_has_rows_and_sweeps_for_new_kinds(work):
    d, _ = work
    r = run(d)
    for kind in ("kv", "file", "stream"):
        assert re.search(rf"^{kind} +\d+/\d+ +\d+/\d+ ", r.out, re.M), r.out
        # every kind has one vector large enough for a sampled sweep
        assert re.search(rf"^truncation sweep \({kind}\): [1-9]\d* prefixes of \d+ vectors "
                         rf"\(1 sampled\), 0 ", r.out, re.M), r.out


@pytest.mark.parametrize("vid,edit,needle", [
    # kv: a wrong value, a wrong type (int64 vs uint64 are distinct), float bits, bytes
    ("y_kv_every_type", lambda d: d["entries"].__setitem__("b", {"int64": -2**63 + 1}),
     'decoded.entries["b"].int64: expected -9223372036854775807, got -9223372036854775808'),
    ("y_kv_worked_example", lambda d: d["entries"].__setitem__("n", {"uint64": 42}),
     'decoded.entries["n"] (type): expected "uint64", got "int64"'),
    ("y_kv_every_type", lambda d: d["entries"].__setitem__("negzero", {"float64": 0}),
     'decoded.entries["negzero"].float64: expected 0x0000000000000000'),
    ("y_kv_every_type", lambda d: d["entries"]["zz"]["list"][2].__setitem__("bytes", b"\0\xff"),
     'decoded.entries["zz"].list[2].bytes: length differs'),
    ("y_kv_worked_example", lambda d: d["entries"]["tags"]["list"].append({"bool": False}),
     'decoded.entries["tags"].list (length): expected 3, got 2'),
    ("y_kv_worked_example", lambda d: d["entries"].__setitem__("m", {"bool": True}),
     "decoded.entries (entries): expected 3, got 2"),
    ("y_kv_worked_example", lambda d: d["entries"].__setitem__("tagz", d["entries"].pop("tags")),
     'decoded.entries["tagz"]: key missing from the library\'s map'),
    ("y_kv_worked_example", lambda d: d.__setitem__("encoded_len", 88),
     "decoded.encoded_len (file size): expected 88, got 96"),
    # file: buffer hash, offset, size, names, parent, kind, top level, KV, header fields
    ("y_file_partition_and_tensor",
     lambda d: d["entries"][3]["buffers"][0].__setitem__("sha256", bytes(32)),
     "decoded.entries[3].buffers[0].sha256: expected 0000000000"),
    ("y_file_partition_and_tensor",
     lambda d: d["entries"][1]["buffers"][0].__setitem__("sha256", bytes(32)),
     "decoded.entries[1].buffers[0].sha256: expected 0000"),
    ("y_file_partition_and_tensor",
     lambda d: d["entries"][2]["buffers"][0].__setitem__("offset", 128),
     "decoded.entries[2].buffers[0].offset: the loaded bytes are not the file's bytes"),
    ("y_file_partition_and_tensor",
     lambda d: d["entries"][3]["buffers"][0].__setitem__("size", 12),
     "decoded.entries[3].buffers[0].size: expected 12, got 8"),
    ("y_file_partition_and_tensor", lambda d: d["entries"][2].__setitem__("member_of", None),
     'decoded.entries[2].member_of: expected null, got "p"'),
    ("y_file_partition_and_tensor", lambda d: d["entries"][3].__setitem__("name", "u"),
     'decoded.entries[3].name: expected "u", got "t"'),
    ("y_file_partition_and_tensor", lambda d: d["entries"][0].__setitem__("kind", "tensor"),
     'decoded.entries[0].kind: expected "tensor", got "composite"'),
    ("y_file_partition_and_tensor", lambda d: d.__setitem__("top_level", ["p"]),
     "decoded.top_level (length): expected 1, got 2"),
    ("y_file_partition_and_tensor",
     lambda d: d["entries"][1]["descriptor"]["shard"].__setitem__("global_offset", [1, 0]),
     "decoded.entries[1].descriptor.shard.global_offset[0]: expected 1, got 0"),
    ("y_file_worked_example", lambda d: d["kv"].__setitem__("a", {"int64": 2}),
     'decoded.kv["a"].int64: expected 2, got 1'),
    ("y_file_worked_example", lambda d: d.__setitem__("kv", None),
     "decoded.kv (entries): expected 0, got 1"),
    ("y_file_worked_example", lambda d: d.__setitem__("data_offset", 8192),
     "decoded.data_offset (file header): expected 8192, got 4096"),
    ("y_file_minor_1", lambda d: d.__setitem__("version", [1, 0]),
     "decoded.version[1] (file header): expected 0, got 1"),
    # stream: buffer hash, item kind, descriptor, roles, cut points
    ("y_stream_mixed", lambda d: d["items"][1]["buffers"][0].__setitem__("sha256", bytes(32)),
     "decoded.items[1].buffers[0].sha256: expected 0000"),
    ("y_stream_mixed",
     lambda d: d["items"][0]["members"][1]["buffers"][0].__setitem__("size", 16),
     "decoded.items[0].members[1].buffers[0].size: expected 16, got 12"),
    ("y_stream_mixed", lambda d: d["items"][0]["descriptor"]["layout"].__setitem__("rule", "group"),
     'decoded.items[0].descriptor.layout.rule: expected "group", got "partition"'),
    ("y_stream_mixed", lambda d: d["items"][2]["members"][1]["descriptor"].__setitem__("role", "base"),
     'decoded.items[2].members[1].descriptor.role (hurray_composite_member_role): '
     'expected "base", got "correction"'),
    ("y_stream_mixed", lambda d: d["frame_offsets"].__setitem__(1, d["frame_offsets"][1] + 8),
     "decoded.frame_offsets[1] (reader offset after item 0): expected 368, got 360"),
    ("y_stream_one_tensor", lambda d: d["items"][0].__setitem__("kind", "composite") or
     d["items"][0].__setitem__("members", []) or d["items"][0].pop("buffers"),
     'decoded.items[0].kind: expected "composite", got "tensor"'),
])
def test_new_kind_oracle_mismatch_is_reported(work, vid, edit, needle):
    d, m = work
    edit(vec(m, vid)["decoded"])
    save(d, m)
    r = run(d)
    assert r.code == 1
    assert set(r.fails) == {vid}, r.out
    assert r.fails[vid].startswith(needle), r.fails[vid]
    assert r.final == (count(m) - 1, 1)


def test_stream_item_count_is_checked(work):
    d, m = work
    v = vec(m, "y_stream_mixed")
    dec = v["decoded"]
    dec["items"].pop()           # the oracle misses the last item
    dec["frame_offsets"].pop(-2)  # ... and keeps its cut points consistent (schema)
    save(d, m)
    r = run(d, "--id", v["id"], "--verbose")
    assert r.code == 1
    assert "DIFF decoded.items (length): expected 3, got 4" in r.out
    assert "FAIL prefix sweep:" in r.out  # the cut point at the 4th item is not where it was


@pytest.mark.parametrize("vid,value,needle", [
    ("n_stream_cut_inside_composite", 0, "error_after_items: expected 0, got 1"),
    ("n_stream_partition_swapped", 3, "error_after_items: expected 3, got 2"),
    ("n_stream_kind_mismatch", 1, "error_after_items: expected 1, got 0"),
])
def test_error_after_items_is_exact(work, vid, value, needle):
    d, m = work
    vec(m, vid)["error_after_items"] = value
    save(d, m)
    r = run(d)
    assert r.fails == {vid: needle}, r.out


@pytest.mark.parametrize("vid,error,needle", [
    ("n_stream_cut_inside_composite", "LENGTH", "expected LENGTH, got TRUNCATED"),
    ("n_kv_bool_2", "CONSTRAINT", "expected CONSTRAINT, got RANGE"),
    ("n_file_cut", "LENGTH", "expected LENGTH, got TRUNCATED"),
])
def test_new_kind_wrong_error_code(work, vid, error, needle):
    d, m = work
    vec(m, vid)["error"] = error
    save(d, m)
    r = run(d)
    assert set(r.fails) == {vid}
    assert r.fails[vid].startswith(needle), r.fails[vid]


def test_cross_machine_option_is_applied(work):
    d, m = work
    vec(m, "n_stream_event_cross_machine")["options"] = {"cross_machine": False}
    save(d, m)
    r = run(d)
    assert r.fails == {"n_stream_event_cross_machine":
                       "expected COMBINATION, but the input was accepted (+1 more)"}, r.out


def test_file_roundtrip_flag_is_honoured(work):
    d, m = work
    vec(m, "y_file_minor_1")["roundtrip"] = True
    save(d, m)
    r = run(d)
    assert set(r.fails) == {"y_file_minor_1"}
    assert r.fails["y_file_minor_1"].startswith(
        "roundtrip: encoded bytes: bytes differ at offset 10 (expected 01, got 00")


def test_changed_file_byte_is_caught(work):
    """One data byte of a valid file changed (sha256 updated): the file still opens, and the
    buffer hash comparison catches it."""
    d, m = work
    v = vec(m, "y_file_worked_example")
    p = d / v["path"]
    data = bytearray(p.read_bytes())
    data[4096] ^= 0x01  # first byte of w's buffer
    p.write_bytes(data)
    v["sha256"] = hashlib.sha256(data).digest()
    save(d, m)
    r = run(d)
    assert set(r.fails) == {v["id"]}
    assert r.fails[v["id"]].startswith("decoded.entries[0].buffers[0].sha256: expected")


@pytest.mark.parametrize("vid,edit,needle", [
    ("y_kv_worked_example", lambda v: v["decoded"]["entries"].__setitem__("n", {"int64": 1, "bool": True}),
     'schema: decoded.entries["n"]: a kvvalue has exactly one key, got 2'),
    ("y_kv_worked_example", lambda v: v["decoded"]["entries"].__setitem__("n", {"int32": 1}),
     'schema: decoded.entries["n"]: unknown KV value type "int32"'),
    ("y_kv_worked_example", lambda v: v["decoded"]["entries"].__setitem__("n", {"float64": 1.5}),
     'schema: decoded.entries["n"].float64: expected uint, got float'),
    ("y_kv_worked_example", lambda v: v["decoded"].pop("encoded_len"),
     'schema: decoded: missing required key "encoded_len"'),
    ("y_file_worked_example", lambda v: v["decoded"]["entries"][0].__setitem__("kind", "blob"),
     'schema: decoded.entries[0].kind: expected "tensor" or "composite"'),
    ("y_file_worked_example", lambda v: v["decoded"]["entries"][0]["buffers"][0].pop("offset"),
     'schema: decoded.entries[0].buffers[0]: missing required key "offset"'),
    ("y_file_worked_example", lambda v: v["decoded"]["entries"][0]["descriptor"].pop("role"),
     'schema: decoded.entries[0].descriptor: missing required key "role"'),
    ("y_file_worked_example", lambda v: v["decoded"].pop("data_length"),
     'schema: decoded: missing required key "data_length"'),
    ("y_stream_mixed", lambda v: v["decoded"]["items"][0].__setitem__("buffers", []),
     'schema: decoded.items[0]: key "buffers" does not belong to a composite item'),
    ("y_stream_mixed", lambda v: v["decoded"]["frame_offsets"].pop(),
     "schema: decoded.frame_offsets: 4 entries, expected len(items) + 1 = 5"),
    ("y_stream_mixed", lambda v: v["decoded"]["frame_offsets"].__setitem__(-1, 1 << 20),
     "schema: decoded.frame_offsets: must start at 0 and end at size"),
    ("y_stream_mixed", lambda v: v.__setitem__("error_after_items", 0),
     "schema: error_after_items: present, but the vector is not an invalid stream"),
    ("n_stream_kind_mismatch", lambda v: v.pop("error_after_items"),
     "schema: error_after_items: required for an invalid stream vector"),
    ("y_stream_mixed", lambda v: v.__setitem__("options", {"cross_machine": 1}),
     "schema: options.cross_machine: expected bool, got uint"),
    ("y_kv_worked_example", lambda v: v.__setitem__("options", {"cross_machine": True}),
     "schema: options.cross_machine: only stream vectors have it"),
    ("y_kv_worked_example", lambda v: v.__setitem__("kind", "kv2"),
     'schema: kind: unknown kind "kv2"'),
])
def test_new_kind_schema_errors(work, vid, edit, needle):
    d, m = work
    edit(vec(m, vid))
    save(d, m)
    r = run(d)
    assert r.code == 1
    assert set(r.fails) == {vid}, r.out
    assert r.fails[vid].startswith(needle), r.fails[vid]


def test_new_kinds_need_schema_2(work):
    """A schema-1 manifest cannot carry kv/file/stream vectors: each fails loudly (never
    skipped), the schema-1 kinds still pass."""
    d, m = work
    m["schema_version"] = 1
    save(d, m)
    r = run(d)
    new = {v["id"] for v in m["vectors"] if v["kind"] in ("kv", "file", "stream")}
    assert set(r.fails) == new
    assert all(f.startswith('schema: kind: kind "') and "needs schema_version 2, the manifest has 1"
               in f for f in r.fails.values())
    assert r.final == (count(m) - len(new), len(new))
    assert "unclassified" in r.out


def test_stream_end_states_need_schema_4(work):
    """decoded.end and options.require_end_frame (stream.md HR-STREAM-13) are schema 4: an
    older manifest that carries them fails those vectors; a schema-4 manifest must carry
    decoded.end on every valid stream, and then reads as before (every stream of the test
    corpus ends at its end of input, "eof")."""
    d, m = work
    streams = [v for v in m["vectors"] if v["kind"] == "stream"]
    valid = [v["id"] for v in streams if v["expect"] == "valid"]
    m["schema_version"] = 3
    vec(m, valid[0])["decoded"]["end"] = "eof"
    vec(m, valid[1]).setdefault("options", {})["require_end_frame"] = True
    save(d, m)
    r = run(d)
    assert set(r.fails) == {valid[0], valid[1]}, r.out
    assert r.fails[valid[0]].startswith("schema: decoded.end: schema 4 only (the manifest has 3)")
    assert r.fails[valid[1]].startswith("schema: options.require_end_frame: only stream vectors "
                                        "of schema 4 have it")
    m["schema_version"] = 4
    vec(m, valid[1])["options"].pop("require_end_frame")
    save(d, m)
    r = run(d)
    assert set(r.fails) == set(valid[1:]), r.out
    assert all('missing required key "end"' in f for f in r.fails.values()), r.out
    for vid in valid:
        vec(m, vid)["decoded"]["end"] = "eof"
    save(d, m)
    assert run(d).code == 0
    vec(m, valid[0])["decoded"]["end"] = "end_frame"  # it has no end frame
    save(d, m)
    r = run(d)
    assert set(r.fails) == {valid[0]}, r.out


@pytest.mark.parametrize("through_testee", [False, True])
def test_stream_names_need_schema_5(work, through_testee):
    """A top-level stream item's "name" and "metadata" (stream.md HR-STREAM-18) are schema 5:
    an older manifest that carries them fails the vector; in a schema-5 manifest they are
    compared with what the reader gives (here: items without annotations, so a name or a
    map the oracle claims is a failure, in process and through the testee)."""
    d, m = work
    args = ("--testee", TESTEE) if through_testee else ()
    valid = [v["id"] for v in m["vectors"] if v["kind"] == "stream" and v["expect"] == "valid"
             and v["decoded"]["items"]]
    m["schema_version"] = 4
    for v in m["vectors"]:
        if v["kind"] == "stream" and v["expect"] == "valid":
            v["decoded"]["end"] = "eof"
    vec(m, valid[0])["decoded"]["items"][0]["name"] = "w"
    save(d, m)
    r = run(d)
    assert set(r.fails) == {valid[0]}, r.out
    assert "schema 5 only (the manifest has 4)" in r.fails[valid[0]], r.fails
    m["schema_version"] = 5
    vec(m, valid[1])["decoded"]["items"][0]["metadata"] = {"unit": {"string": "m"}}
    save(d, m)
    r = run(d, *args)
    assert set(r.fails) == {valid[0], valid[1]}, r.out
    vec(m, valid[0])["decoded"]["items"][0].pop("name")
    vec(m, valid[1])["decoded"]["items"][0].pop("metadata")
    save(d, m)
    assert run(d, *args).code == 0
