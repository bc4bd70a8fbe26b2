#!/usr/bin/env bash
# tests/abi/abidiff.sh LIB SOURCE_DIR - compare the ABI of the freshly
# built libgrb.so (LIB) with the baseline abi/<SONAME>.abi, using
# libabigail (abidw, abidiff; Debian package abigail-tools).
#
# Any difference fails, additions included: the baseline records exactly
# what ships, and docs/abi.md says, for each kind of change, whether it
# needs a new SONAME (GRB_SOVERSION) or only a new version, and how to
# update the baseline.  abidiff's exit status is a bit set: 1 tool error,
# 2 usage error, 4 the ABI changed, 8 the change is certainly incompatible
# (a function or variable removed).  A layout change of a type the inline
# fast path reads only sets 4, yet it breaks every caller compiled against
# the old headers: the message below does not claim more than abidiff knows.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 LIB SOURCE_DIR" >&2
  exit 2
fi
lib=$1
srcdir=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/abi/common.sh
source "$here/common.sh"

for tool in abidw abidiff; do
  command -v $tool >/dev/null || {
    echo "abidiff: FAIL: $tool not found; scripts/install-deps installs abigail-tools" >&2
    exit 1
  }
done
[ -e "$lib" ] || { echo "abidiff: FAIL: $lib not built" >&2; exit 1; }
# (grep reads all of readelf's output: with pipefail, grep -q could
# close the pipe early and fail the check.)
if ! readelf -S "$lib" | grep '\.debug_info' >/dev/null; then
  echo "abidiff: FAIL: $lib has no debug information; the check needs a -g build (the debug preset)" >&2
  exit 1
fi
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
baseline=$srcdir/abi/$soname.abi
if [ ! -f "$baseline" ]; then
  echo "abidiff: FAIL: no baseline $baseline for SONAME $soname (docs/abi.md, 'Updating the baseline')" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/grb-abidiff.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! abi_dump "$lib" "$srcdir" "$work/current.abi" 2>"$work/err"; then
  echo "abidiff: FAIL: abidw could not read $lib:" >&2
  sed 's/^/  | /' "$work/err" >&2
  exit 1
fi

status=0
abidiff "$baseline" "$work/current.abi" >"$work/report" 2>&1 || status=$?
if [ "$status" -eq 0 ]; then
  echo "abidiff: $soname matches the baseline abi/$soname.abi"
  exit 0
fi
if [ $((status & 3)) -ne 0 ]; then
  echo "abidiff: FAIL: abidiff itself failed (status $status):" >&2
  sed 's/^/  | /' "$work/report" >&2
  exit 1
fi
if [ $((status & 8)) -ne 0 ]; then
  echo "abidiff: FAIL: incompatible ABI change (abidiff status $status: a symbol was removed" >&2
  echo "  or changed incompatibly); this needs a new GRB_SOVERSION:" >&2
else
  echo "abidiff: FAIL: the ABI of $soname changed (abidiff status $status).  An addition" >&2
  echo "  needs a new version; a change of a type's layout or of a signature needs" >&2
  echo "  a new GRB_SOVERSION as well (docs/abi.md):" >&2
fi
sed 's/^/  | /' "$work/report" >&2
echo "  If the change is intended, follow docs/abi.md and refresh the baselines with" >&2
echo "  tests/abi/update.sh BUILD_DIR (build/debug)" >&2
exit 1
