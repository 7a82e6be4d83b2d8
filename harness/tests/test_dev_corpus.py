"""The harness's own small corpus (harness/tests/corpus/) is current and passes.

make_test_corpus.py writes it from docs/spec alone and deterministically; the tree keeps a
copy so the harness can be tried without the real corpus. Two properties keep that copy
honest:

- regenerating it gives the committed bytes, file for file (a change to the generator, or to
  the manifest schema the harness reads, shows up here rather than as a stale copy);
- the harness passes over it (every vector as expected, exit status 0).

    pytest harness/tests/test_dev_corpus.py
"""
import filecmp
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")
HARNESS = os.environ.get("HURRAY_HARNESS",
                         os.path.join(ROOT, "build", "harness", "hurray-conformance"))


def files_under(top):
    out = set()
    for d, _, names in os.walk(top):
        out.update(os.path.relpath(os.path.join(d, n), top) for n in names)
    return out


def test_committed_dev_corpus_is_what_the_generator_writes(tmp_path):
    out = tmp_path / "corpus"
    subprocess.run([sys.executable, os.path.join(HERE, "make_test_corpus.py"), str(out)],
                   check=True, capture_output=True)
    have, want = files_under(CORPUS), files_under(out)
    assert have == want, (f"missing from the tree: {sorted(want - have)}; "
                          f"not written by the generator: {sorted(have - want)}")
    differ = [p for p in sorted(want)
              if not filecmp.cmp(os.path.join(CORPUS, p), out / p, shallow=False)]
    assert not differ, (f"stale in harness/tests/corpus: {differ} "
                        "(run python3 harness/tests/make_test_corpus.py)")


def test_harness_passes_the_dev_corpus():
    if not os.access(HARNESS, os.X_OK):
        pytest.fail(f"harness not built: {HARNESS} (make harness)")
    run = subprocess.run([HARNESS, "--vectors", CORPUS], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert " 0 failed" in run.stdout, run.stdout[-2000:]
