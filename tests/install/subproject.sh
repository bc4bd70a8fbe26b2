#!/usr/bin/env bash
# tests/install/subproject.sh SOURCE_DIR CC GENERATOR - build grb as a
# subproject (add_subdirectory) of an outside project and check that the
# project gets the library targets and nothing else: no test, benchmark
# or example target, no registered test.  Then build it and run its
# consumer (consumer/roundtrip.c), linked with grb::grb.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 SOURCE_DIR CC GENERATOR" >&2
  exit 2
fi
srcdir=$(cd "$1" && pwd)
cc=$2
generator=$3
here=$(cd "$(dirname "$0")" && pwd)

# What add_subdirectory(grb) may define: the object library both
# libraries are made of, the two libraries, and the consumer's own target.
expected="grb
grb_objects
grb_static
subproject_consumer"

work=$(mktemp -d "${TMPDIR:-/tmp}/grb-subproject.XXXXXX")
trap 'rm -rf "$work"' EXIT
log=$work/log

fail() {
  echo "subproject: FAIL: $*" >&2
  exit 1
}

step() {
  local what=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "subproject: FAIL: $what; the command was:" >&2
    echo "  $*" >&2
    sed 's/^/  | /' "$log" >&2
    exit 1
  fi
  echo "subproject: ok: $what"
}

step "configure a project that add_subdirectory()s grb" \
  cmake -S "$here/subproject" -B "$work/build" -G "$generator" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Debug \
  -DGRB_SOURCE_DIR="$srcdir"

got=$(cat "$work/build/targets.txt")
if [ "$got" != "$expected" ]; then
  echo "subproject: FAIL: add_subdirectory(grb) defines other targets than the library's." >&2
  echo "  Tests, bench and examples must stay off unless grb is the top-level" >&2
  echo "  project (GRB_BUILD_* default to PROJECT_IS_TOP_LEVEL); a new library" >&2
  echo "  target belongs in the list in $0.  Difference (- expected, + got):" >&2
  { diff <(echo "$expected") <(echo "$got") || true; } | sed -n 's/^< /  - /p; s/^> /  + /p' >&2
  exit 1
fi
if [ -s "$work/build/tests.txt" ]; then
  fail "add_subdirectory(grb) registers tests: $(xargs <"$work/build/tests.txt")"
fi
for opt in GRB_BUILD_TESTS GRB_BUILD_BENCH GRB_BUILD_EXAMPLES; do
  grep -qx "$opt:BOOL=OFF" "$work/build/CMakeCache.txt" ||
    fail "$opt is not OFF in a subproject: $(grep "^$opt:" "$work/build/CMakeCache.txt" || echo unset)"
done

step "build the project and the grb library" cmake --build "$work/build"
step "run the subproject's consumer" "$work/build/subproject_consumer"
echo "subproject: add_subdirectory(grb) gives $(echo "$expected" | grep -c '^grb') library targets, no tests, bench or examples; consumer ran"
