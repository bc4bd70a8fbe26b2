#!/usr/bin/env bash
# tests/abi/exports.sh LIB ARCHIVE BUILD_DIR SOURCE_DIR SOVERSION CC -
# check what ships, libgrb.so (LIB), libgrb.a (ARCHIVE) and the headers
# BUILD_DIR installs:
#
#  1. LIB's SONAME is libgrb.so.SOVERSION, and abi/ holds the baselines
#     for that SONAME;
#  2. the dynamic symbols LIB defines are exactly those listed in
#     abi/<SONAME>.symbols, so that every export added or removed is a
#     change someone made on purpose (docs/abi.md says how to update it);
#  3. neither library defines a test hook (grb_test_*, *hook*), whatever
#     the list says;
#  4. the installed include tree names nothing test-only (grb_test_,
#     grb_hook, GRB_TEST_HOOKS; case-sensitive, because the GRB_HOOK()
#     seam itself is meant to be there, defined as nothing), and the
#     public headers, preprocessed as a consumer sees them with CC, keep
#     no trace of the race hooks or the CPU override;
#  5. docs/abi.md names every grb__ symbol LIB exports.
set -euo pipefail
if [ $# -ne 6 ]; then
  echo "usage: $0 LIB ARCHIVE BUILD_DIR SOURCE_DIR SOVERSION CC" >&2
  exit 2
fi
lib=$1
archive=$2
build=$(cd "$3" && pwd)
srcdir=$(cd "$4" && pwd)
soversion=$5
cc=$6
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/abi/common.sh
source "$here/common.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/grb-exports.XXXXXX")
trap 'rm -rf "$work"' EXIT
errors=0

complain() {
  echo "exports: FAIL: $*" >&2
  errors=$((errors + 1))
}

[ -e "$lib" ] || { echo "exports: FAIL: $lib not built" >&2; exit 1; }
[ -e "$archive" ] || { echo "exports: FAIL: $archive not built" >&2; exit 1; }

# 1. SONAME.
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != "libgrb.so.$soversion" ]; then
  complain "SONAME is '$soname', expected libgrb.so.$soversion (GRB_SOVERSION)"
fi
list=$srcdir/abi/libgrb.so.$soversion.symbols
if [ ! -f "$list" ]; then
  echo "exports: FAIL: no $list: a new SONAME needs its baselines in abi/ (docs/abi.md)" >&2
  exit 1
fi

# 2. The exported symbols, as "name type" (T function, B/D variable).
abi_symbols "$lib" >"$work/got"
grep -v '^#' "$list" | grep -v '^$' | LC_ALL=C sort >"$work/want" || true
if ! cmp -s "$work/want" "$work/got"; then
  complain "the symbols libgrb.so exports differ from $list (- listed, + exported):"
  { diff "$work/want" "$work/got" || true; } | sed -n 's/^< /  - /p; s/^> /  + /p' >&2
  echo "  An export added or removed on purpose goes into that list and the ABI" >&2
  echo "  baseline: tests/abi/update.sh $build (docs/abi.md)." >&2
fi

# 3. No test hook in either library.
if grep -Ei 'grb_test_|hook' "$work/got" >"$work/hooks"; then
  complain "libgrb.so exports test-only symbols: $(awk '{ print $1 }' "$work/hooks" | xargs)"
fi
nm --defined-only "$archive" 2>/dev/null | awk 'NF == 3 { print $3 }' |
  grep -Ei 'grb_test_|hook' >"$work/ahooks" || true
if [ -s "$work/ahooks" ]; then
  complain "libgrb.a defines test-only symbols: $(sort -u "$work/ahooks" | xargs)"
fi

# 4. The installed headers.
if ! cmake --install "$build" --prefix "$work/prefix" >"$work/log" 2>&1; then
  echo "exports: FAIL: cmake --install $build failed:" >&2
  sed 's/^/  | /' "$work/log" >&2
  exit 1
fi
inc=$work/prefix/include
[ -f "$inc/grb/grb.h" ] || { echo "exports: FAIL: no grb/grb.h installed" >&2; exit 1; }
if grep -rnE 'grb_test_|grb_hook|GRB_TEST_HOOKS' "$inc" >"$work/names"; then
  complain "the installed headers name test-only things:"
  sed "s|^$inc/|  |" "$work/names" >&2
fi
testfiles=$(find "$inc" -iname '*test*')
if [ -n "$testfiles" ]; then
  complain "test headers are installed: $(xargs <<<"$testfiles")"
fi
for h in grb/grb.h grb/basic.h; do
  printf '#include <%s>\n' "$h" >"$work/t.c"
  if ! "$cc" -std=c11 -E -I"$inc" "$work/t.c" -o "$work/t.i" 2>"$work/log"; then
    complain "$h does not preprocess from the install: $(head -3 "$work/log")"
    continue
  fi
  if grep -nE 'grb_test_|grb_hook|GRB_HOOK|GRB_CPU_OVERRIDE|GRB_TEST_HOOKS' \
       "$work/t.i" >"$work/left"; then
    complain "after preprocessing $h, test-only names are left:"
    head -5 "$work/left" | sed 's/^/  /' >&2
  fi
done

# 5. docs/abi.md lists the grb__ exports by name (item 1: what the inline
# code calls is ABI although it is not API); a new one must be named there.
for sym in $(awk '$1 ~ /^grb__/ { print $1 }' "$work/got"); do
  grep -qw -- "$sym" "$srcdir/docs/abi.md" ||
    complain "docs/abi.md does not name the export $sym (item 1)"
done

nsyms=$(wc -l <"$work/got")
if [ "$errors" -ne 0 ]; then
  echo "exports: $errors check(s) failed" >&2
  exit 1
fi
echo "exports: $soname exports exactly the $nsyms listed symbols, no hooks; installed headers clean"
