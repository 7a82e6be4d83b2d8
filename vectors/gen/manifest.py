"""vectors/manifest.cbor, schema_version 5 (documented in vectors/SCHEMA.md)."""
import hashlib

import cbor2

from tables import DEFAULT_LIMITS, ERROR_CODES

FORMAT = "hurray-conformance"
SCHEMA_VERSION = 5
CORPUS_VERSION = "2026.12.4"
SPEC_VERSION = ["1.0"]
GENERATOR = {"name": "hurray-vectors-gen", "version": "5"}
# the top-level folder of each class (vectors/SCHEMA.md § Files)
CLASS_DIRS = {"valid": "valid", "invalid": "invalid",
              "implementation-defined": "implementation-defined"}


def vector_path(v):
    area = v["id"].split("_")[1]
    return f"{CLASS_DIRS[v['expect']]}/{area}/{v['id']}.hry"


def vector_entry(v, tcid):
    e = {
        "id": v["id"],
        "tcid": tcid,
        "kind": v["kind"],
        "path": vector_path(v),
        "size": len(v["data"]),
        "sha256": hashlib.sha256(v["data"]).digest(),
        "expect": v["expect"],
        "roundtrip": v.get("roundtrip", v["expect"] == "valid"),
        "description": v["description"],
        "spec_refs": list(v["spec_refs"]),
    }
    if v["expect"] == "invalid":
        e["error"] = v["error"]
        if v["kind"] == "stream":
            e["error_after_items"] = v["error_after_items"]
    if v["expect"] == "implementation-defined":
        e["i_outcomes"] = list(v["i_outcomes"])
    if v.get("options"):
        e["options"] = dict(v["options"])
    if v["expect"] == "valid":
        e["decoded"] = v["decoded"]
    return e


def build(vectors, tcids):
    entries = [vector_entry(v, tcids[v["id"]]) for v in sorted(vectors, key=lambda v: v["id"])]
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "corpus_version": CORPUS_VERSION,
        "spec_version": SPEC_VERSION,
        "generator": GENERATOR,
        "error_codes": dict(ERROR_CODES),
        "default_limits": dict(DEFAULT_LIMITS),
        "count": len(entries),
        "vectors": entries,
    }


def dumps(m):
    return cbor2.dumps(m, canonical=True)
