"""The testee protocol (docs/conformance/testee-protocol.md) from the runner's side.

Runs `hurray-conformance --testee` with the testees of the repository — libhurray
(build/harness/hurray-testee), the generator's oracle (vectors/gen/testee.py), the minimal
descriptor-header testee (docs/conformance/minimal_testee.py) — and with deliberately broken
ones (testees/broken_testee.py, a proxy in front of the C testee that hangs, crashes, exits,
answers garbage or a wrong frame length on one chosen vector). Each broken answer must fail
exactly that vector, with a message saying what happened, and the run must go on to the end:
the runner restarts the testee and never hangs. Failure lists: exit 0 iff the failures are
exactly the list.

    pytest harness/tests/test_testee.py     (HURRAY_HARNESS, HURRAY_TESTEE, HURRAY_VECTORS
                                             override the paths)
"""
import os
import re
import shlex
import subprocess
import sys

import cbor2
import pytest

from test_harness import FAIL, FINAL, HARNESS, ROOT, corpus, save, vec, work  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
TESTEE = os.environ.get("HURRAY_TESTEE", os.path.join(ROOT, "build", "harness", "hurray-testee"))
VECTORS = os.environ.get("HURRAY_VECTORS", os.path.join(ROOT, "vectors"))
PY = sys.executable
BROKEN = os.path.join(HERE, "testees", "broken_testee.py")
ORACLE = os.path.join(ROOT, "vectors", "gen", "testee.py")
MINIMAL = os.path.join(ROOT, "docs", "conformance", "minimal_testee.py")
MINIMAL_LIST = os.path.join(ROOT, "docs", "conformance", "minimal_testee.failures")
XPASS = re.compile(r"^XPASS (.+?): (.*)$", re.M)
TESTEE_LINE = re.compile(r"^testee: .*: (\d+) starts? \((\d+) failed\), (\d+) timeouts?, "
                         r"(\d+) crash(?:es)?, (\d+) garbage answers?$", re.M)


@pytest.fixture(scope="module", autouse=True)
def built():
    for exe in (HARNESS, TESTEE):
        if not os.access(exe, os.X_OK):
            pytest.fail(f"not built: {exe} (make harness)")


class Run:
    def __init__(self, proc):
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.fails = dict(FAIL.findall(proc.stdout))
        self.xpass = dict(XPASS.findall(proc.stdout))
        m = FINAL.search(proc.stdout)
        self.final = (int(m.group(1)), int(m.group(2))) if m else None
        t = TESTEE_LINE.search(proc.stdout)
        self.starts, self.failed_starts, self.timeouts, self.crashes, self.garbage = (
            tuple(int(x) for x in t.groups()) if t else (None,) * 5)


def run(d, testee, *args, timeout=300):
    """The runner over corpus d with `testee` (a command line). The subprocess timeout is
    the proof that the runner itself never hangs."""
    cmd = [HARNESS, "--vectors", str(d), "--testee", testee, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert "AddressSanitizer" not in proc.stderr and "runtime error" not in proc.stderr, proc.stderr
    return Run(proc)


def broken(mode, target):
    return " ".join(shlex.quote(a) for a in (PY, BROKEN, mode, target, "--", TESTEE))


def count(d):
    return len(cbor2.loads((d / "manifest.cbor").read_bytes())["vectors"])


# ------------------------------------------------------------- real testees ---

def test_c_testee_passes_the_test_corpus(work):
    d, m = work
    r = run(d, TESTEE)
    assert r.code == 0, r.out
    assert r.final == (len(m["vectors"]), 0)
    assert r.out.endswith(f"{len(m['vectors'])} passed, 0 failed\n")
    assert (r.starts, r.timeouts, r.crashes, r.garbage) == (1, 0, 0, 0)
    assert "testee: libhurray " in r.out
    # the same table as the built-in run
    inproc = subprocess.run([HARNESS, "--vectors", str(d)], capture_output=True, text=True)
    table = [ln for ln in inproc.stdout.splitlines() if not ln.startswith("testee:")]
    assert [ln for ln in r.out.splitlines() if not ln.startswith("testee:")] == table


def test_oracle_testee_passes_the_test_corpus(work):
    """The generator's decoder, an implementation that is not libhurray, on a corpus it did
    not write (make_test_corpus.py)."""
    d, m = work
    r = run(d, f"{PY} {ORACLE}")
    assert r.code == 0, r.out
    assert r.final == (len(m["vectors"]), 0)
    assert "testee: hurray-vectors-gen oracle" in r.out


def test_impl_defined_outcome_is_reported_separately(work):
    d, _ = work
    r = run(d, TESTEE)
    assert re.search(r"^IMPL i_desc_descriptor_limit_64: LIMIT \(allowed: ok, LIMIT\)$", r.out, re.M)


def test_minimal_testee_with_its_failure_list():
    """The third client: links nothing of ours, decodes descriptor headers only, and passes
    the real corpus's descriptor vectors with its failure list."""
    r = run(VECTORS, f"{PY} {MINIMAL}", "--kind", "descriptor", "--failure-list", MINIMAL_LIST)
    assert r.code == 0, (
        r.out[-3000:] + "\nIf descriptor vectors were added or changed, update "
        "docs/conformance/minimal_testee.failures (hurray-conformance ... "
        "--write-failure-list FILE writes the current failures).")
    assert "failure list: " in r.out and " 0 unexpected failures, 0 unexpected passes" in r.out
    passed, failed = r.final
    assert passed > 0 and failed > 0
    # without the list the same run fails
    r = run(VECTORS, f"{PY} {MINIMAL}", "--kind", "descriptor")
    assert r.code == 1 and r.final == (passed, failed)


# ------------------------------------------------------------- broken testees ---

# mode, target vector, substring of its FAIL line, (timeouts, crashes, garbage)
BROKEN_CASES = [
    ("hang", "n_desc_bad_magic", "testee timed out after 1 s", (1, 0, 0)),
    ("crash", "n_desc_bad_magic", "testee crashed (signal 11)", (0, 1, 0)),
    ("exit", "n_kv_cut", "testee exited with status 3", (0, 1, 0)),
    ("garbage", "n_file_cut", "testee answered garbage: not one CBOR item", (0, 0, 1)),
    ("not-a-map", "n_quant_zero_scale", "the answer is a CBOR array, not a map", (0, 0, 1)),
    ("long-length", "n_stream_kind_mismatch", "the answer's frame is incomplete", (1, 0, 0)),
    ("short-length", "n_desc_rank_over_limit", "bytes after the", (0, 0, 1)),
    ("zero-length", "n_desc_rank_over_limit", "a frame length of 0 bytes", (0, 0, 1)),
    ("huge-length", "n_desc_rank_over_limit", "a frame length of 2147483648 bytes", (0, 0, 1)),
    ("deep", "n_desc_rank_over_limit", "nested deeper than 512 levels", (0, 0, 1)),
    ("trailing-cbor", "n_kv_bool_2", "1 bytes after the CBOR item", (0, 0, 1)),
    ("hang", "y_desc_coo_nnz2", "testee timed out after 1 s", (1, 0, 0)),
    ("crash", "y_stream_mixed", "testee crashed (signal 11)", (0, 1, 0)),
]


@pytest.mark.parametrize("mode,target,needle,counts", BROKEN_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in BROKEN_CASES])
def test_broken_answer_fails_one_vector_and_the_run_goes_on(work, mode, target, needle, counts):
    d, m = work
    r = run(d, broken(mode, target), "--timeout", "1")
    assert r.code == 1
    assert set(r.fails) == {target}, r.out
    assert needle in r.fails[target], r.fails[target]
    assert r.final == (len(m["vectors"]) - 1, 1)
    assert (r.timeouts, r.crashes, r.garbage) == counts
    assert r.starts == 2  # restarted once, then every other vector ran


# the same breakages in the truncation-sweep request of a valid vector (its decode answer was
# right): the vector fails, the testee is restarted once, the run goes on
SWEEP_CASES = [
    ("hang", "y_desc_coo_nnz2", "testee timed out after 1 s", (1, 0, 0)),
    ("crash", "y_stream_mixed", "testee crashed (signal 11)", (0, 1, 0)),
    ("garbage", "y_desc_f32_2x3_row_major", "testee answered garbage: not one CBOR item", (0, 0, 1)),
]


@pytest.mark.parametrize("mode,target,needle,counts", SWEEP_CASES,
                         ids=[f"{c[0]}-sweep-{c[1]}" for c in SWEEP_CASES])
def test_broken_sweep_answer_fails_one_vector_and_the_run_goes_on(work, mode, target, needle,
                                                                  counts):
    d, m = work
    r = run(d, broken(mode, f"sweep:{target}"), "--timeout", "1")
    assert r.code == 1
    assert set(r.fails) == {target}, r.out
    assert needle in r.fails[target], r.fails[target]
    assert r.fails[target].startswith("sweep: ") and "(sweep request, prefixes" in r.fails[target]
    assert r.final == (len(m["vectors"]) - 1, 1)
    assert (r.timeouts, r.crashes, r.garbage) == counts
    assert r.starts == 2


# testees that misbehave as processes: a grandchild keeps stdout open after the testee exits,
# the testee closes stdout and lives on, it never reads, it floods stdout, it kills itself.
# The runner waits on every read and write with a deadline and kills the testee's whole
# process group, so each run ends, every vector failed, and no process is left behind.
PROCESS_CASES = {
    "grandchild-holds-stdout": "sleep 1000 & exit 0",
    "closes-stdout-and-lives": "exec 1>&-; sleep 1000",
    "never-reads": "sleep 1000",
    "floods-stdout": "yes",
    "kills-itself": "kill -9 $$",
    "exits-at-once": "true",
}


@pytest.mark.parametrize("name", sorted(PROCESS_CASES))
def test_misbehaving_testee_process_never_hangs_the_runner(work, name):
    d, m = work
    marker = f"hurray-testee-case-{name}-{os.getpid()}"
    cmd = f"sh -c {shlex.quote(PROCESS_CASES[name] + ' # ' + marker)}"
    r = run(d, cmd, "--timeout", "1", timeout=120)
    assert r.code == 1
    assert r.final is not None and r.final[0] == 0, r.out[-2000:]
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    assert left == "", f"processes left behind: {left}"


# mode, target, substring: the answer is a well-formed map that breaks the protocol, or a
# wrong answer; the testee keeps running (one start)
PROTOCOL_CASES = [
    ("bad-status", "n_desc_bad_magic", "protocol: response.status: expected a status name"),
    ("unknown-status", "n_kv_cut", "protocol: response.status: \"NOPE\" is not \"OK\""),
    ("extra-key", "n_file_cut", "protocol: response: unknown key \"bogus\""),
    ("skip", "n_stream_kind_mismatch", "skipped by the testee: not implemented here"),
    ("wrong-status", "n_desc_bad_magic", "expected BAD_MAGIC, but the input was accepted"),
    ("wrong-status", "y_desc_f32_2x3_row_major", "expected a valid descriptor, the testee says LENGTH"),
    # the end state of a stream (stream.md HR-STREAM-13), judged in the answer and the sweep
    ("wrong-end", "y_stream_mixed", "end: after a further read the end state is end_frame, "
                                    "expected eof"),
    ("wrong-end", "n_stream_kind_mismatch", "end: the testee fails and reports the end state eof"),
    ("wrong-ends", "y_stream_mixed", "prefix sweep: "),
]


@pytest.mark.parametrize("mode,target,needle", PROTOCOL_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in PROTOCOL_CASES])
def test_protocol_breach_fails_one_vector_without_restart(work, mode, target, needle):
    d, m = work
    r = run(d, broken(mode, target))
    assert r.code == 1
    assert set(r.fails) == {target}, r.out
    assert needle in r.fails[target], r.fails[target]
    assert (r.starts, r.timeouts, r.crashes, r.garbage) == (1, 0, 0, 0)


def test_testee_that_exits_after_an_answer(work):
    """Its answer counts; the next request finds it gone (a crash of that vector) and the
    runner restarts it for the one after."""
    d, m = work
    ids = [v["id"] for v in m["vectors"]]
    target = "n_desc_bad_magic"
    after = ids[ids.index(target) + 1]
    r = run(d, broken("exit-after", target))
    assert r.code == 1
    assert set(r.fails) == {after}, r.out
    assert "testee exited with status 0" in r.fails[after]
    assert (r.starts, r.crashes) == (2, 1)


def test_hanging_testee_is_given_up_after_n_failures(work):
    """A testee that never answers: a bounded run, every vector reported, none passed."""
    d, m = work
    r = run(d, broken("hang", "*"), "--timeout", "1", "--give-up-after", "2", timeout=120)
    n = len(m["vectors"])
    assert r.code == 1 and r.final == (0, n)
    assert len(r.fails) == n
    fails = sorted(r.fails.values())
    assert sum(f == "testee timed out after 1 s at hello" for f in fails) == 2, r.out
    assert sum(f.startswith("not run: the testee failed 2 times in a row (last: testee timed "
                            "out after 1 s at hello)") for f in fails) == n - 2
    assert (r.starts, r.failed_starts) == (2, 2)


@pytest.mark.parametrize("mode,needle", [
    ("banner", "testee answered garbage to hello"),
    ("protocol-3", "testee speaks protocol 3, this runner 2"),
    ("protocol-1", "testee speaks protocol 1, this runner 2"),
])
def test_bad_hello_fails_every_vector(work, mode, needle):
    d, m = work
    r = run(d, broken(mode, "hello"), "--timeout", "2")
    assert r.code == 1 and r.final == (0, len(m["vectors"]))
    assert any(needle in f for f in r.fails.values()), r.out


def test_command_that_does_not_exist(work):
    d, m = work
    r = run(d, "/nonexistent/testee --flag", "--give-up-after", "1")
    assert r.code == 1 and r.final == (0, len(m["vectors"]))
    assert any("exited with status 127" in f for f in r.fails.values()), r.out


def test_bad_arguments(work):
    d, _ = work
    for args in (["--testee", ""], ["--testee", TESTEE, "--timeout", "0"],
                 ["--testee", TESTEE, "--isolate"], ["--testee", TESTEE, "--give-up-after", "x"],
                 ["--failure-list", "/nonexistent/list"]):
        proc = subprocess.run([HARNESS, "--vectors", str(d), *args], capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 2, args


# ------------------------------------------------------------- judgement through the protocol ---

@pytest.mark.parametrize("vid,edit,needle", [
    ("y_desc_coo_nnz2", lambda v: v["decoded"]["layout"].update(nnz=3),
     "decoded.layout.nnz: expected 3, got 2"),
    ("y_kv_every_type", lambda v: v["decoded"]["entries"].update(i={"uint64": 5}),
     "decoded.entries[\"i\"]: missing"),
    ("y_file_worked_example", lambda v: v["decoded"].update(data_length=v["decoded"]["data_length"] + 64),
     "decoded.data_length: expected"),
    ("y_stream_mixed", lambda v: v["decoded"]["frame_offsets"].__setitem__(1, v["decoded"]["frame_offsets"][1] + 8),
     "decoded.frame_offsets[1]: expected"),
    ("n_stream_cut_inside_composite", lambda v: v.update(error_after_items=v["error_after_items"] + 1),
     "error_after_items: expected"),
])
def test_wrong_manifest_value_is_caught_through_the_protocol(work, vid, edit, needle):
    d, m = work
    edit(vec(m, vid))
    save(d, m)
    r = run(d, TESTEE)
    assert r.code == 1
    assert needle in r.fails.get(vid, ""), r.out
    assert set(r.fails) - {"manifest"} == {vid}, r.out


def test_verbose_shows_every_compared_field(work):
    d, _ = work
    proc = subprocess.run([HARNESS, "--vectors", str(d), "--testee", TESTEE, "--id",
                           "y_desc_coo_nnz2", "--verbose"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert "ok   decoded.layout.nnz: expected 2, got 2" in proc.stdout
    assert "ok   sweep:" in proc.stdout


# ------------------------------------------------------------- failure lists ---

def write_list(tmp_path, ids, name="list.failures"):
    p = tmp_path / name
    p.write_text("# a failure list\n\n" + "".join(f"  {i}   # why\n" for i in ids))
    return str(p)


@pytest.mark.parametrize("testee", [None, "c"])
def test_failure_list_exact_match_exits_0(work, tmp_path, testee):
    d, m = work
    vec(m, "y_desc_coo_nnz2")["decoded"]["layout"]["nnz"] = 3
    save(d, m)
    args = ["--failure-list", write_list(tmp_path, ["y_desc_coo_nnz2"])]
    if testee:
        r = run(d, TESTEE, *args)
    else:
        r = Run(subprocess.run([HARNESS, "--vectors", str(d), *args], capture_output=True, text=True))
    assert r.code == 0, r.out
    assert "failure list: 1 expected failures, 0 unexpected failures, 0 unexpected passes" in r.out
    assert r.final == (len(m["vectors"]) - 1, 1)
    assert "FAIL y_desc_coo_nnz2" not in r.out  # an expected failure is not a FAIL line


def test_failure_list_newly_passing_vector_fails_the_run(work, tmp_path):
    d, m = work
    r = run(d, TESTEE, "--failure-list", write_list(tmp_path, ["y_kv_worked_example"]))
    assert r.code == 1
    assert "y_kv_worked_example" in r.xpass and "remove it from the list" in r.xpass["y_kv_worked_example"]
    assert "0 expected failures, 0 unexpected failures, 1 unexpected passes" in r.out


def test_failure_list_unlisted_failure_fails_the_run(work, tmp_path):
    d, m = work
    vec(m, "y_desc_coo_nnz2")["decoded"]["layout"]["nnz"] = 3
    save(d, m)
    r = run(d, TESTEE, "--failure-list", write_list(tmp_path, []))
    assert r.code == 1 and "y_desc_coo_nnz2" in r.fails


def test_failure_list_unknown_id_fails_the_run(work, tmp_path):
    d, _ = work
    r = run(d, TESTEE, "--failure-list", write_list(tmp_path, ["n_no_such_vector"]))
    assert r.code == 1
    assert r.fails.get("failure-list") == '"n_no_such_vector" names no vector of the corpus'


def test_failure_list_ignores_vectors_outside_the_filter(work, tmp_path):
    d, m = work
    vec(m, "y_desc_coo_nnz2")["decoded"]["layout"]["nnz"] = 3
    save(d, m)
    r = run(d, TESTEE, "--kind", "kv", "--failure-list", write_list(tmp_path, ["y_desc_coo_nnz2"]))
    assert r.code == 0, r.out
    assert "0 expected failures" in r.out


def test_failure_list_syntax_errors_are_usage_errors(work, tmp_path):
    d, _ = work
    for text in ("two ids\n", "dup\ndup\n"):
        p = tmp_path / "bad.failures"
        p.write_text(text)
        proc = subprocess.run([HARNESS, "--vectors", str(d), "--failure-list", str(p)],
                              capture_output=True, text=True)
        assert proc.returncode == 2 and "failure list" in proc.stderr


def test_write_failure_list_round_trips(work, tmp_path):
    d, m = work
    vec(m, "y_desc_coo_nnz2")["decoded"]["layout"]["nnz"] = 3
    vec(m, "n_kv_cut")["error"] = "LENGTH"
    save(d, m)
    out = tmp_path / "written.failures"
    r = run(d, TESTEE, "--write-failure-list", str(out))
    assert r.code == 1
    ids = [ln for ln in out.read_text().splitlines() if ln and not ln.startswith("#")]
    assert ids == ["n_kv_cut", "y_desc_coo_nnz2"]
    r = run(d, TESTEE, "--failure-list", str(out))
    assert r.code == 0, r.out


@pytest.mark.parametrize("through_testee", [False, True])
def test_schema3_outcome_names(work, through_testee):
    """Schema 3 spells success "OK" (a key of error_codes); the older "ok" still reads."""
    d, m = work
    m["schema_version"] = 3
    vec(m, "i_desc_descriptor_limit_64")["i_outcomes"] = ["OK", "LIMIT"]
    save(d, m)
    args = ["--testee", TESTEE] if through_testee else []
    proc = subprocess.run([HARNESS, "--vectors", str(d), *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "IMPL i_desc_descriptor_limit_64: LIMIT (allowed: ok, LIMIT)" in proc.stdout
    vec(m, "i_desc_descriptor_limit_64")["i_outcomes"] = ["OK"]
    save(d, m)
    proc = subprocess.run([HARNESS, "--vectors", str(d), *args], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "FAIL i_desc_descriptor_limit_64: implementation-defined outcome LIMIT" in proc.stdout


def test_schema4_stream_end_through_the_protocol(work):
    """In a schema-4 manifest a stream's decoded.end is compared like any other key (in a
    schema-2 one, which has none, the runner requires the testee's "end" to be "eof" and
    leaves it out of the comparison). Both full testees pass either way."""
    d, m = work
    m["schema_version"] = 4
    for v in m["vectors"]:
        if v["kind"] == "stream" and v["expect"] == "valid":
            v["decoded"]["end"] = "eof"
    save(d, m)
    for testee in (TESTEE, f"{PY} {ORACLE}"):
        r = run(d, testee)
        assert r.code == 0, r.out[-3000:]
        assert r.final == (len(m["vectors"]), 0)


def test_cost_paragraph_describes_the_current_corpus():
    """testee-protocol.md § 8 quotes the size of a run over a named corpus version; the version,
    the vector count, the decode count and the prefix counts per kind must be those of the
    committed corpus (the in-process runner's sweep lines count the prefixes), so that the
    paragraph is updated whenever the corpus changes."""
    text = open(os.path.join(ROOT, "docs", "conformance", "testee-protocol.md"),
                encoding="utf-8").read()
    num = r"([\d,]+)"
    m = re.search(r"Over corpus (\S+) \(" + num + r" vectors\) a run is " + num
                  + r" requests: one `hello`, " + num + r" `decode`, " + num
                  + r"\s+`sweep` batches carrying " + num + r" prefixes \(" + num
                  + r" descriptor, " + num + r" KV, " + num + r" file, " + num
                  + r"\s+stream", text)
    assert m, "testee-protocol.md § 8: the cost sentence is not where this test looks"
    version = m.group(1)
    vectors, requests, decode, batches, prefixes, *per_kind = (
        int(g.replace(",", "")) for g in m.groups()[1:])
    with open(os.path.join(VECTORS, "manifest.cbor"), "rb") as f:
        manifest = cbor2.load(f)
    assert version == manifest["corpus_version"]
    assert vectors == decode == manifest["count"] == len(manifest["vectors"])
    assert requests == 1 + decode + batches
    assert prefixes == sum(per_kind)
    proc = subprocess.run([HARNESS, "--vectors", VECTORS], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:]
    swept = [int(n) for n in re.findall(r"^truncation sweep(?: \(\w+\))?: (\d+) prefixes",
                                       proc.stdout, re.M)]
    assert swept == per_kind, (swept, per_kind)
