#!/usr/bin/env bash
# ci/test_install.sh sdist FILE | wheel DIR
#
# Installs hurray the way a user would, into a fresh virtual environment made from
# the base interpreter (never the repository's .venv), and tests the result
# (ci/install_smoke.py, then, for wheels, the binding's tests against the installed
# package).
#
#   sdist FILE  pip builds FILE (the sdist) with build isolation: meson-python,
#               meson, ninja and NumPy come from the package index, and PATH holds
#               the venv and a C compiler only (no system meson, ninja or git).
#   wheel DIR   hurray from DIR only (--no-index --find-links DIR --only-binary),
#               with NO compiler on PATH (checked); then pytest over python/tests
#               (the files that need no PyTorch/JAX) against the installed wheel.
#
# Environment: BASE_PYTHON (default: the interpreter behind .venv), KEEP=1 keeps the
# scratch directory. Test tools come pinned from ci/requirements-dev.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=${1:?usage: test_install.sh sdist FILE | wheel DIR}
art=${2:?usage: test_install.sh sdist FILE | wheel DIR}
art=$(realpath "$art")
BASE_PYTHON=${BASE_PYTHON:-$(.venv/bin/python -c 'import sys; print(sys._base_executable)')}
version=$(python3 python/tools/version.py reference)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hurray-install.XXXXXX")
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$scratch"' EXIT
pin() { grep -E "^$1==" ci/requirements-dev.txt; }

"$BASE_PYTHON" -m venv "$scratch/venv"
vpy="$scratch/venv/bin/python"
# pip.conf on this image names local indexes that may be absent: drop that warning only.
# (grep by absolute path: quiet_pip also runs under the narrowed PATHs below.)
GREP=$(command -v grep)
quiet_pip() { { "$vpy" -m pip "$@" 2>&1 1>&3 | { "$GREP" -v "is ignored: it is neither" || true; } >&2; } 3>&1; }
quiet_pip install -q --disable-pip-version-check --only-binary=:all: \
    "$(pin pytest)" "$(pin numpy)" "$(pin cbor2)" "$(pin ml_dtypes)" "$(pin hypothesis)" \
    "$(pin pytest-xdist)" "$(pin execnet)"

mkdir -p "$scratch/bin"
case "$mode" in
sdist)
    # A C compiler and what it runs, and the basic shell utilities every machine has;
    # nothing else (meson and ninja must come from the index, git is not needed).
    for t in cc gcc as ld ld.bfd ar "$(gcc -dumpmachine)-gcc" \
             sh rm cp mv ln mkdir cat env uname sed grep tr basename dirname; do
        p=$(command -v "$t" || true)
        [[ -n "$p" ]] && ln -sf "$p" "$scratch/bin/$t"
    done
    PATH="$scratch/venv/bin:$scratch/bin" quiet_pip install -q --disable-pip-version-check \
        --no-cache-dir "$art"
    PATH="$scratch/venv/bin" "$vpy" ci/install_smoke.py --version "$version"
    ;;
wheel)
    nocc="$scratch/venv/bin"   # the whole PATH of every command below
    PATH="$nocc" "$vpy" - <<'PY'
import shutil, sys
found = {c: shutil.which(c) for c in ("cc", "gcc", "clang", "tcc", "zig", "meson", "ninja")}
found = {c: p for c, p in found.items() if p}
sys.exit(f"a compiler or build tool is on PATH: {found}" if found else 0)
PY
    PATH="$nocc" quiet_pip install -q --disable-pip-version-check --no-index \
        --find-links "$art" --only-binary=:all: hurray
    PATH="$nocc" "$vpy" ci/install_smoke.py --version "$version" \
        --wheel-tag "${WHEEL_TAG:-manylinux}"
    # The binding's own tests against the installed wheel (pytest puts python/tests, not
    # python/src, on sys.path; install_smoke.py checked where hurray comes from). One test
    # compiles a helper library with cc: it runs where a compiler is (make test-python,
    # cibuildwheel), not here.
    # PYTEST_JOBS (make wheel-test): "-n N", pytest-xdist's workers, or empty.
    # shellcheck disable=SC2086
    PATH="$nocc" "$vpy" ci/wheel_tests.py "$(pwd)" ${PYTEST_JOBS:-}
    ;;
*) echo "test_install.sh: unknown mode $mode" >&2; exit 2 ;;
esac
echo "test_install: $mode $(basename "$art"): ok"
