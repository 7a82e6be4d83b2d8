"""Properties of the real corpus (vectors/) that no single vector shows.

- Coverage: every status a kind can produce from its input has a vector of that kind.
  vectors/README.md § Coverage of status codes lists, per kind, the statuses the format
  rules out; every other (kind, status) pair must have an invalid vector, and no vector may
  expect a status the table rules out.
- Classes (vectors/SCHEMA.md § Classes): the id's first letter, the top-level folder, `expect`
  and the class keys (`error`, `i_outcomes`, `decoded`) agree; implementation-defined
  outcomes are "OK" or status names, at least two of them (one outcome is not a choice).

    pytest harness/tests/test_corpus.py
"""
import os
import re

import cbor2
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VECTORS = os.environ.get("HURRAY_VECTORS", os.path.join(ROOT, "vectors"))
README = os.path.join(ROOT, "vectors", "README.md")
KINDS = ("descriptor", "quantization", "kv", "file", "stream")
# statuses no input can produce (README: API misuse, the environment, a bug, on-demand checks,
# allocation failures)
NEVER_FROM_INPUT = {"OK", "ARGUMENT", "IO", "INTERNAL", "INDEX", "NOMEM"}


@pytest.fixture(scope="module")
def m():
    with open(os.path.join(VECTORS, "manifest.cbor"), "rb") as f:
        return cbor2.loads(f.read())


def ruled_out():
    """kind -> set of statuses from the README's coverage table."""
    text = open(README, encoding="utf-8").read()
    section = text.split("## Coverage of status codes", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[0].strip("`") in KINDS:
            out[cells[0].strip("`")] = set(re.findall(r"`([A-Z_]+)`", cells[1]))
    assert set(out) == set(KINDS), f"the coverage table must have one row per kind: {sorted(out)}"
    return out


def test_every_possible_status_has_a_vector_of_each_kind(m):
    table = ruled_out()
    have = {(v["kind"], v["error"]) for v in m["vectors"] if v["expect"] == "invalid"}
    missing, forbidden = [], []
    for kind in KINDS:
        for status in m["error_codes"]:
            if status in NEVER_FROM_INPUT:
                assert (kind, status) not in have, f"{kind}: {status} cannot come from an input"
                continue
            if status in table[kind]:
                if (kind, status) in have:
                    forbidden.append(f"{kind} {status}")
            elif (kind, status) not in have:
                missing.append(f"{kind} {status}")
    assert not missing, f"(kind, status) pairs without a vector: {missing}"
    assert not forbidden, f"vectors for statuses the README says cannot occur: {forbidden}"


def test_classes_agree(m):
    prefix = {"valid": "y", "invalid": "n", "implementation-defined": "i"}
    assert m["schema_version"] >= 3
    for v in m["vectors"]:
        cls = v["expect"]
        assert v["id"][0] == prefix[cls] and v["id"][1] == "_", v["id"]
        assert v["path"].split("/")[0] == cls, v["path"]
        assert ("error" in v) == (cls == "invalid"), v["id"]
        assert ("decoded" in v) == (cls == "valid"), v["id"]
        assert ("i_outcomes" in v) == (cls == "implementation-defined"), v["id"]
        if cls != "valid":
            assert v["roundtrip"] is False


def test_implementation_defined_outcomes(m):
    impl = [v for v in m["vectors"] if v["expect"] == "implementation-defined"]
    assert impl, "the corpus marks no implementation-defined case"
    for v in impl:
        outs = v["i_outcomes"]
        assert len(outs) >= 2 and len(set(outs)) == len(outs), v["id"]
        assert all(o == "OK" or o in m["error_codes"] for o in outs), v["id"]
