#!/usr/bin/env bash
# tests/headers/check.sh INCLUDE_DIR - compile every public header of grb
# on its own, as C11 and C17 with gcc and clang, and as C++17 and C++20
# with g++ and clang++, with -Wall -Wextra -Wpedantic -Werror.  A header
# that needs another to be included first, uses a C-only construct, or
# warns fails here.  A compiler that is not installed is reported and
# fails the check: scripts/install-deps installs all four.
set -euo pipefail
inc=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-Wall -Wextra -Wpedantic -Werror -I"$inc" -c -o /dev/null)
fail=0; n=0
cd "$inc"
headers=$(find grb -name '*.h' | sort)
for cc in gcc clang; do
  command -v $cc >/dev/null || { echo "headers: $cc not found"; exit 1; }
  for std in c11 c17; do
    for h in $headers; do
      printf '#include <%s>\nint grb_header_check;\n' "$h" > "$work/t.c"
      if ! $cc -std=$std "${flags[@]}" "$work/t.c" 2>"$work/err"; then
        echo "headers: $h fails with $cc -std=$std:"; head -5 "$work/err"
        fail=$((fail + 1))
      fi
      n=$((n + 1))
    done
  done
done
for cxx in g++ clang++; do
  command -v $cxx >/dev/null || { echo "headers: $cxx not found"; exit 1; }
  for std in c++17 c++20; do
    for h in $headers; do
      printf '#include <%s>\nint grb_header_check;\n' "$h" > "$work/t.cc"
      if ! $cxx -std=$std "${flags[@]}" "$work/t.cc" 2>"$work/err"; then
        echo "headers: $h fails with $cxx -std=$std:"; head -5 "$work/err"
        fail=$((fail + 1))
      fi
      n=$((n + 1))
    done
  done
done
echo "headers: $((n - fail)) of $n header compilations passed"
[ "$fail" = 0 ]
