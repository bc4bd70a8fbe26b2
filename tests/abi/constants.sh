#!/usr/bin/env bash
# tests/abi/constants.sh SOURCE_DIR CC SOVERSION - compare what callers
# compile in from the public headers besides calls, which abidiff cannot
# see or sees only in part: the values of the integer macros and
# enumerators (bit layouts, limits, magic numbers, flags) and the size and
# alignment of every struct, with the baseline
# abi/libgrb.so.SOVERSION.constants (tests/abi/common.sh makes the list).
# Any difference fails.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 SOURCE_DIR CC SOVERSION" >&2
  exit 2
fi
srcdir=$(cd "$1" && pwd)
cc=$2
soversion=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/abi/common.sh
source "$here/common.sh"
baseline=$srcdir/abi/libgrb.so.$soversion.constants
[ -f "$baseline" ] || {
  echo "constants: FAIL: no baseline $baseline (docs/abi.md, 'Updating the baseline')" >&2
  exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/grb-constants.XXXXXX")
trap 'rm -rf "$work"' EXIT
abi_constants "$srcdir/include" "$cc" "$work" >"$work/got"
grep -v '^#' "$baseline" | grep -v '^$' | LC_ALL=C sort >"$work/want" || true
if ! cmp -s "$work/want" "$work/got"; then
  echo "constants: FAIL: the public headers' constants or struct sizes differ from $baseline (- baseline, + headers):" >&2
  { diff "$work/want" "$work/got" || true; } | sed -n 's/^< /  - /p; s/^> /  + /p' >&2
  echo "  A changed value or struct size needs a new GRB_SOVERSION; a new constant or" >&2
  echo "  struct, a new version (docs/abi.md).  Then refresh the baselines with" >&2
  echo "  tests/abi/update.sh BUILD_DIR (build/debug)." >&2
  exit 1
fi
echo "constants: the $(wc -l <"$work/got") constants and struct sizes of the public headers match the baseline"
