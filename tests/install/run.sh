#!/usr/bin/env bash
# tests/install/run.sh BUILD_DIR CC GENERATOR - install grb from BUILD_DIR
# into a temporary prefix, then build and run, against that prefix only,
# the programs an outside user would write:
#
#   pkg-config   a program built with `cc $(pkg-config --cflags --libs grb)`
#                (libgrb.so), one that names the archive (-l:libgrb.a),
#                and one built with `cc -static $(pkg-config --static
#                ...)` (no shared object at all);
#   CMake        find_package(grb CONFIG REQUIRED) with CMAKE_PREFIX_PATH
#                set to the prefix, one target linking grb::grb and one
#                grb::grb_static;
#   plugin       a -shared plugin that carries libgrb.a (position-
#                independent code, rseq's initial-exec TLS), dlopen()ed by
#                a host that does not link grb.
#
# Each program writes records through the engine API and the basic client
# and reads them back (consumer/roundtrip.c).  Programs that use libgrb.so
# run with the prefix's lib dir on LD_LIBRARY_PATH and must resolve
# libgrb.so.1 there (ldd); the static ones must not need it (readelf).
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 BUILD_DIR CC GENERATOR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
cc=$2
generator=$3
here=$(cd "$(dirname "$0")" && pwd)
src=$here/consumer

work=$(mktemp -d "${TMPDIR:-/tmp}/grb-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
log=$work/log
checks=0

fail() {
  echo "install: FAIL: $*" >&2
  exit 1
}

# Run a command quietly; on failure show what it printed and stop.
step() {
  local what=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "install: FAIL: $what; the command was:" >&2
    echo "  $*" >&2
    sed 's/^/  | /' "$log" >&2
    exit 1
  fi
  echo "install: ok: $what"
  checks=$((checks + 1))
}

# The program's dynamic dependencies as readelf lists them.
needed() {
  readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

# $1 must resolve libgrb.so.1 to the prefix's copy.
uses_prefix_lib() {
  local exe=$1 deps line path
  deps=$(needed "$exe")
  grep -qx 'libgrb.so.1' <<<"$deps" ||
    fail "$exe does not need libgrb.so.1 (NEEDED: $(xargs <<<"$deps"))"
  line=$(LD_LIBRARY_PATH=$libdir ldd "$exe" | grep 'libgrb\.so\.1 ') ||
    fail "ldd does not list libgrb.so.1 for $exe"
  path=$(echo "$line" | sed -n 's/.*=> \([^ ]*\) .*/\1/p')
  if [ -z "$path" ] || [ "$(realpath "$path")" != "$(realpath "$libdir/libgrb.so.1")" ]; then
    fail "$exe resolves libgrb.so.1 as '$line', not to $libdir/libgrb.so.1"
  fi
  checks=$((checks + 1))
}

# $1 must not need libgrb.so at all.
no_shared_lib() {
  local deps
  deps=$(needed "$1")
  if grep -q '^libgrb\.so' <<<"$deps"; then
    fail "$1 should carry libgrb.a but needs $(grep libgrb <<<"$deps")"
  fi
  checks=$((checks + 1))
}

step "cmake --install $build --prefix $prefix" \
  cmake --install "$build" --prefix "$prefix"

pc=$(find "$prefix" -name grb.pc -path '*/pkgconfig/*')
[ -n "$pc" ] || fail "no grb.pc installed under $prefix"
libdir=$(dirname "$(dirname "$pc")")
[ -e "$libdir/libgrb.so.1" ] || fail "no libgrb.so.1 beside grb.pc in $libdir"
[ -e "$libdir/libgrb.a" ] || fail "no libgrb.a beside grb.pc in $libdir"

# Only the prefix: no pkg-config search path of the system, no CMake
# package registry, no library path from the caller.
export PKG_CONFIG_PATH=$libdir/pkgconfig
export PKG_CONFIG_LIBDIR=$libdir/pkgconfig
unset LD_LIBRARY_PATH CPATH C_INCLUDE_PATH LIBRARY_PATH CMAKE_PREFIX_PATH

# --- pkg-config --------------------------------------------------------
pkg-config --exists --print-errors grb || fail "pkg-config does not find grb in $libdir/pkgconfig"
incdir=$(pkg-config --variable=includedir grb)
[ "$(realpath -m "$incdir")" = "$(realpath "$prefix/include")" ] ||
  fail "grb.pc gives includedir $incdir, not the prefix's $prefix/include: is grb.pc relocatable?"
pclibdir=$(pkg-config --variable=libdir grb)
[ "$(realpath -m "$pclibdir")" = "$(realpath "$libdir")" ] ||
  fail "grb.pc gives libdir $pclibdir, not $libdir"
checks=$((checks + 1))

copts=(-std=c11 -O2 -Wall -Wextra -Werror)
# shellcheck disable=SC2046 # pkg-config output is a list of flags
step "build a program with pkg-config (shared)" \
  "$cc" "${copts[@]}" "$src/main.c" "$src/roundtrip.c" -o "$work/pc_shared" \
  $(pkg-config --cflags --libs grb)
uses_prefix_lib "$work/pc_shared"
step "run the pkg-config program (shared)" \
  env LD_LIBRARY_PATH="$libdir" "$work/pc_shared"

# libgrb.a into a dynamic program: pkg-config's flags with the archive
# named, -l:libgrb.a (cmake/install.cmake's advice; the plugin below
# names it by path, as the README does).
# shellcheck disable=SC2046
step "build a program with pkg-config and -l:libgrb.a" \
  "$cc" "${copts[@]}" "$src/main.c" "$src/roundtrip.c" -o "$work/pc_archive" \
  $(pkg-config --cflags --libs-only-L grb) -l:libgrb.a
no_shared_lib "$work/pc_archive"
step "run the program linked with libgrb.a" "$work/pc_archive"

# shellcheck disable=SC2046
step "build a program with pkg-config --static" \
  "$cc" "${copts[@]}" -static "$src/main.c" "$src/roundtrip.c" \
  -o "$work/pc_static" $(pkg-config --static --cflags --libs grb)
[ -z "$(needed "$work/pc_static")" ] ||
  fail "the -static program still needs $(needed "$work/pc_static" | xargs)"
step "run the pkg-config program (static)" "$work/pc_static"

# --- CMake find_package -------------------------------------------------
step "configure the find_package(grb) project" \
  cmake -S "$src" -B "$work/cmake" -G "$generator" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
found=$(sed -n 's/^grb_DIR:PATH=//p' "$work/cmake/CMakeCache.txt")
[ "$(realpath -m "$found")" = "$(realpath "$libdir/cmake/grb")" ] ||
  fail "find_package(grb) found $found, not $libdir/cmake/grb"
step "build the find_package(grb) project" cmake --build "$work/cmake"
uses_prefix_lib "$work/cmake/consumer_shared"
no_shared_lib "$work/cmake/consumer_static"
step "run consumer_shared (grb::grb)" \
  env LD_LIBRARY_PATH="$libdir" "$work/cmake/consumer_shared"
step "run consumer_static (grb::grb_static)" "$work/cmake/consumer_static"

# --- a plugin carrying libgrb.a -----------------------------------------
# shellcheck disable=SC2046
step "link a -shared plugin with libgrb.a" \
  "$cc" "${copts[@]}" -fPIC -shared -Wl,--no-undefined "$src/roundtrip.c" \
  -o "$work/libplugin.so" $(pkg-config --cflags grb) "$libdir/libgrb.a"
no_shared_lib "$work/libplugin.so"
step "build the plugin host" \
  "$cc" "${copts[@]}" "$src/host.c" -o "$work/host" -ldl
no_shared_lib "$work/host"
# No LD_LIBRARY_PATH: the plugin must not look for libgrb.so.
step "run the host, which dlopen()s the plugin" "$work/host" "$work/libplugin.so"

echo "install: $checks checks passed against $prefix"
