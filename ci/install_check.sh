#!/usr/bin/env bash
# ci/install_check.sh: `make install` as a C user gets it (make install-check).
#
#   1. make install PREFIX=<scratch>/usr: libhurray.a, libhurray.so (+ its soname links),
#      the public headers (include/hurray/) and hurray.pc are there, nothing else.
#   2. ci/install_check.c compiled with `pkg-config --cflags hurray` (PKG_CONFIG_PATH names
#      the installed lib/pkgconfig only), linked with `pkg-config --libs hurray`: it runs,
#      on the installed libhurray.so (ldd says so);
#   3. the same program linked against the installed archive (`pkg-config --static`, with
#      -l:libhurray.a): it runs and needs no libhurray.so;
#   4. make install PREFIX=/opt/hurray DESTDIR=<scratch>/stage: everything lands under the
#      stage, and the program builds from it (PKG_CONFIG_SYSROOT_DIR).
#
# Environment (make passes them): MAKE, BUILD, CC, WARN (the project's warning list and
# -Werror), LIBDIR (default lib). KEEP=1 keeps the scratch directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MAKE=${MAKE:-make}
BUILD=${BUILD:-build}
CC=${CC:-cc}
WARN=${WARN:-$(sed -e 's/#.*//' reference/warnings.txt | tr '\n' ' ') -Werror}
LIBDIR=${LIBDIR:-lib}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hurray-install-check.XXXXXX")
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$scratch"' EXIT
fail() { echo "install-check: $*" >&2; exit 1; }

# ---- 1. install into a prefix
prefix=$scratch/usr
"$MAKE" --no-print-directory -s install BUILD="$BUILD" PREFIX="$prefix" LIBDIR="$LIBDIR" \
    >"$scratch/install.log" || { cat "$scratch/install.log"; fail "make install failed"; }
libdir=$prefix/$LIBDIR
for f in "$libdir/libhurray.a" "$libdir/libhurray.so" "$libdir/pkgconfig/hurray.pc" \
         "$prefix/include/hurray/hurray.h" "$prefix/include/hurray/version.h"; do
    [[ -e "$f" ]] || fail "not installed: ${f#"$scratch"/}"
done
# Every public header, and no private one.
want=$(cd reference/include/hurray && ls -- *.h | sort)
got=$(cd "$prefix/include/hurray" && ls -- *.h | sort)
[[ "$want" == "$got" ]] || fail "installed headers differ from reference/include/hurray: $got"
unexpected=$(cd "$prefix" && find . -type f ! -path "./include/hurray/*.h" \
    ! -path "./$LIBDIR/libhurray.a" ! -path "./$LIBDIR/libhurray.so.*" \
    ! -path "./$LIBDIR/pkgconfig/hurray.pc")
[[ -z "$unexpected" ]] || fail "unexpected files installed: $unexpected"

export PKG_CONFIG_PATH=$libdir/pkgconfig
[[ "$(pkg-config --variable=pcfiledir hurray)" == "$libdir/pkgconfig" ]] \
    || fail "pkg-config found another hurray.pc: $(pkg-config --variable=pcfiledir hurray)"
version=$(python3 python/tools/version.py reference)
[[ "$(pkg-config --modversion hurray)" == "$version" ]] \
    || fail "hurray.pc says version $(pkg-config --modversion hurray), version.h $version"

# ---- 2. the shared library, through pkg-config
# shellcheck disable=SC2086  # WARN and pkg-config's output are flag lists
"$CC" -std=c11 $WARN $(pkg-config --cflags hurray) ci/install_check.c \
    $(pkg-config --libs hurray) -o "$scratch/check_shared"
LD_LIBRARY_PATH=$libdir ldd "$scratch/check_shared" | grep -q "libhurray\.so.* => $libdir/" \
    || fail "check_shared does not load $libdir/libhurray.so"
LD_LIBRARY_PATH=$libdir "$scratch/check_shared"

# ---- 3. the archive
# shellcheck disable=SC2086
"$CC" -std=c11 $WARN $(pkg-config --cflags hurray) ci/install_check.c \
    $(pkg-config --static --libs hurray | sed 's/-lhurray\b/-l:libhurray.a/') \
    -o "$scratch/check_static"
! ldd "$scratch/check_static" | grep -q libhurray || fail "check_static loads a libhurray.so"
"$scratch/check_static"

# ---- 4. DESTDIR: a staged install of PREFIX=/opt/hurray
stage=$scratch/stage
"$MAKE" --no-print-directory -s install BUILD="$BUILD" PREFIX=/opt/hurray LIBDIR="$LIBDIR" \
    DESTDIR="$stage" >"$scratch/install-destdir.log" \
    || { cat "$scratch/install-destdir.log"; fail "make install DESTDIR=... failed"; }
[[ ! -e /opt/hurray ]] || fail "DESTDIR ignored: /opt/hurray exists"
pc=$stage/opt/hurray/$LIBDIR/pkgconfig/hurray.pc
[[ -f "$pc" ]] || fail "DESTDIR: no ${pc#"$scratch"/}"
grep -q '^prefix=/opt/hurray$' "$pc" || fail "DESTDIR: hurray.pc's prefix is not /opt/hurray"
# shellcheck disable=SC2086
PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$stage \
    "$CC" -std=c11 $WARN \
    $(PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$stage pkg-config --cflags hurray) \
    ci/install_check.c \
    $(PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$stage pkg-config --libs hurray) \
    -o "$scratch/check_staged"
LD_LIBRARY_PATH=$stage/opt/hurray/$LIBDIR "$scratch/check_staged"

echo "install-check: make install (PREFIX, DESTDIR) and pkg-config hurray: ok"
