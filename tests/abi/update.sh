#!/usr/bin/env bash
# tests/abi/update.sh BUILD_DIR [CC] - rewrite the ABI baselines in abi/
# from a debug build (cmake --preset debug && cmake --build --preset debug;
# BUILD_DIR is then build/debug):
#
#   abi/<SONAME>.symbols    the exported symbols (tests/abi/exports.sh)
#   abi/<SONAME>.abi        libabigail's ABI description (abidiff.sh)
#   abi/<SONAME>.constants  the headers' constants and struct sizes
#                           (constants.sh)
#
# Run it only after deciding, with docs/abi.md, whether the change needs a
# new GRB_SOVERSION or a new version; commit the baselines with that change
# and say in the message why the ABI moved.  When GRB_SOVERSION changes,
# remove the old SONAME's files.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 BUILD_DIR [CC]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
cc=${2:-cc}
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
# shellcheck source=tests/abi/common.sh
source "$here/common.sh"
lib=$build/libgrb.so
[ -e "$lib" ] || { echo "update: $lib not built" >&2; exit 1; }
readelf -S "$lib" | grep '\.debug_info' >/dev/null ||
  { echo "update: $lib has no debug information; use the debug preset" >&2; exit 1; }
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -n "$soname" ] || { echo "update: $lib has no SONAME" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/grb-abi-update.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$srcdir/abi"

{
  echo "# The dynamic symbols $soname defines, as \`nm -D --defined-only\`"
  echo "# shows them: name and type (T function, B thread-local variable)."
  echo "# tests/abi/exports.sh fails when the library exports anything else"
  echo "# or less.  Written by tests/abi/update.sh (docs/abi.md)."
  abi_symbols "$lib"
} >"$srcdir/abi/$soname.symbols"

abi_dump "$lib" "$srcdir" "$srcdir/abi/$soname.abi"

{
  echo "# What callers compile in from the public headers: the value of each"
  echo "# integer macro and enumerator, the size and alignment of each struct."
  echo "# tests/abi/constants.sh fails when one changes, appears or goes."
  echo "# Written by tests/abi/update.sh (docs/abi.md)."
  abi_constants "$srcdir/include" "$cc" "$work"
} >"$srcdir/abi/$soname.constants"

echo "update: wrote abi/$soname.symbols, abi/$soname.abi, abi/$soname.constants"
git -C "$srcdir" status --short -- abi/ || true
