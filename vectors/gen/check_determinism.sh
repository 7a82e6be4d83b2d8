#!/usr/bin/env bash
# vectors/gen/check_determinism.sh: regenerate the corpus twice into a temporary directory and
# require (1) both runs byte-identical, (2) identical to the committed vectors/ (valid/,
# invalid/, implementation-defined/, manifest.cbor), (3) manifest.cbor in canonical form (load + canonical dump
# reproduces it). Exit 0 when all hold, 1 otherwise. Called by `make test`.
# Environment: PYTHON (default: the repository's .venv/bin/python if present, else python3).
set -euo pipefail
GEN="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VEC="$(dirname "$GEN")"
ROOT="$(dirname "$VEC")"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

"$PYTHON" "$GEN/generate.py" --quiet --out "$TMP/a"
"$PYTHON" "$GEN/generate.py" --quiet --out "$TMP/b"

status=0
if ! diff -r "$TMP/a" "$TMP/b" >/dev/null; then
    echo "check_determinism: two generator runs differ:" >&2
    diff -rq "$TMP/a" "$TMP/b" >&2 || true
    status=1
fi
for part in valid invalid implementation-defined manifest.cbor; do
    if [[ ! -e "$VEC/$part" ]]; then
        echo "check_determinism: vectors/$part is missing (run: $PYTHON vectors/gen/generate.py --out vectors)" >&2
        status=1
    elif ! diff -r "$TMP/a/$part" "$VEC/$part" >/dev/null; then
        echo "check_determinism: vectors/$part differs from a fresh generation:" >&2
        diff -rq "$TMP/a/$part" "$VEC/$part" >&2 || true
        status=1
    fi
done
"$PYTHON" - "$VEC/manifest.cbor" <<'PY' || status=1
import sys, cbor2
data = open(sys.argv[1], "rb").read()
m = cbor2.loads(data)
if cbor2.dumps(m, canonical=True) != data:
    sys.exit("check_determinism: manifest.cbor is not in canonical form")
if m["count"] != len(m["vectors"]):
    sys.exit("check_determinism: manifest count disagrees with its vectors")
PY
# Independence: the generator is written from docs/spec alone. It may import only the standard
# library, cbor2 and its own modules; never hurray, ctypes/cffi (a way to reach libhurray), or
# anything under reference/, python/, harness/ or fuzz/.
if grep -nE '^\s*(import|from)\s+(hurray|ctypes|cffi)\b|reference/|python/src|harness/|fuzz/|libhurray' \
        "$GEN"/*.py >&2; then
    echo "check_determinism: the generator must not use the implementation (lines above)" >&2
    status=1
fi
if [[ $status -eq 0 ]]; then
    echo "check_determinism: vectors/ matches the generator ($("$PYTHON" -c "import cbor2,sys; print(cbor2.loads(open(sys.argv[1],'rb').read())['count'])" "$VEC/manifest.cbor") vectors)"
fi
exit $status
