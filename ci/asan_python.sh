#!/usr/bin/env bash
# ci/asan_python.sh [PYTEST ARGS...]
#
# The Python binding built with AddressSanitizer + UndefinedBehaviorSanitizer (gcc's runtimes,
# preloaded into the interpreter) in a scratch virtual environment that borrows the project
# .venv's packages, then pytest over the given test files (default: the native-protocol, DLPack
# and tensor tests). Memory-growth tests are deselected: ASan's quarantine grows RSS on purpose.
# `make python-asan` (part of `make test`) runs it over the native protocol's and DLPack's tests;
# with no arguments it also runs the Tensor tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ -x .venv/bin/python ]] || { echo "asan_python: run 'make deps' first" >&2; exit 2; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hurray-asan.XXXXXX")
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$scratch"' EXIT
base=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$base" -m venv "$scratch/venv"
vsite=$("$scratch/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$site" > "$vsite/zz_project_venv.pth"
for b in meson ninja; do ln -sf "$(pwd)/.venv/bin/$b" "$scratch/venv/bin/$b"; done
CC=gcc PATH="$scratch/venv/bin:$PATH" "$scratch/venv/bin/python" -m pip install -q \
    --no-build-isolation -Csetup-args=-Db_sanitize=address,undefined \
    -Csetup-args=-Db_lundef=false -Csetup-args=-Dwerror=true \
    -Cbuild-dir="$scratch/build" ./python
so=$(ls "$vsite"/hurray/_hurray.*.so)
[[ $(nm -D "$so" | grep -c __asan_) -gt 0 ]] || { echo "asan_python: $so is not instrumented" >&2; exit 1; }
[[ $# -gt 0 ]] || set -- python/tests/test_native.py python/tests/test_dlpack.py \
    python/tests/test_tensor.py
LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" \
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$scratch/venv/bin/python" -m pytest -q -p no:cacheprovider -k "not LEAK" "$@"
