# shellcheck shell=bash
# tests/abi/common.sh - how the ABI baselines in abi/ are produced, in one
# place, sourced by the checks (exports.sh, abidiff.sh, constants.sh) and
# by update.sh, which rewrites the baselines.  Bash; the caller sets
# `set -euo pipefail`.

# abi_symbols LIB - the dynamic symbols LIB defines, one "name type" a
# line (T function, B or D variable), sorted.
abi_symbols() {
  nm -D --defined-only --format=posix "$1" | awk '{ print $1, $2 }' |
    LC_ALL=C sort
}

# abi_dump LIB SOURCE_DIR OUT - libabigail's description of LIB's ABI:
# every exported function and variable and every type reachable from
# them, as the DWARF of a -g build describes them.  Only types defined in
# the public headers (SOURCE_DIR/include/grb, impl/ included) are
# described in full; the library's private types (struct grb_basic, ...)
# stay opaque.  Locations, the library's path and the compilation
# directory are left out, and SOURCE_DIR is cut from the translation
# units' paths, so that the dump depends neither on where the tree was
# checked out nor on line numbers.
abi_dump() {
  abidw --headers-dir "$2/include/grb" --drop-private-types \
    --no-corpus-path --no-comp-dir-path --no-show-locs \
    --out-file "$3.raw" "$1"
  sed "s|path='$2/|path='|" "$3.raw" >"$3"
  rm -f "$3.raw"
}

# abi_constants INCLUDE_DIR CC WORKDIR - what the caller's code compiles
# in from the public headers besides calls: the value of every integer
# macro and enumerator (bit layouts, limits, magic numbers, flags), one
# "NAME 0xVALUE" a line, and the size and alignment of every struct they
# define, as "sizeof(struct NAME) 0xVALUE" and "_Alignof(struct NAME)
# 0xVALUE"; sorted.  abidiff sees none of the macros, and no type that no
# exported function reaches (struct grb_basic_subbuf_header, enum
# grb_rflag).  Version numbers (GRB_VERSION_*) change with every release
# and GRB_HAVE_* with the platform; neither is ABI, so both are left out.
abi_constants() {
  local inc=$1 cc=$2 work=$3 name names=() strs=() structs=() prog
  local pre='#include <grb/grb.h>
#include <grb/basic.h>'
  while read -r name; do
    case $name in GRB_VERSION_*|GRB_HAVE_*) continue ;; esac
    # An integer constant expression, a string (a client name written into
    # shared memory: ABI too, compared by its text), or an attribute, a
    # keyword: only the first two kinds compile here.
    printf '%s\n_Static_assert(_Generic((%s), char *: 0, default: 1) && (%s) == (%s), "integer");\n' \
      "$pre" "$name" "$name" "$name" >"$work/isint.c"
    if "$cc" -std=c11 -fsyntax-only -I"$inc" "$work/isint.c" 2>/dev/null; then
      names+=("$name")
      continue
    fi
    printf '%s\nstatic const char s[] = %s;\n' "$pre" "$name" >"$work/isint.c"
    if "$cc" -std=c11 -fsyntax-only -I"$inc" "$work/isint.c" 2>/dev/null; then
      strs+=("$name")
    fi
  done < <({
      grep -rhoE '^#[[:space:]]*define[[:space:]]+GRB_[A-Za-z0-9_]+[[:space:]]' "$inc/grb"
      grep -rhoE '^[[:space:]]+GRB_[A-Z0-9_]+[[:space:]]*(=|,|$)' "$inc/grb"
    } | grep -oE 'GRB_[A-Za-z0-9_]+' | LC_ALL=C sort -u)
  # The structs a C caller sees complete (grb_atomic_word is C++ only).
  structs=()
  while read -r name; do
    printf '%s\n_Static_assert(sizeof(struct %s) > 0, "complete");\n' \
      "$pre" "$name" >"$work/isint.c"
    if "$cc" -std=c11 -fsyntax-only -I"$inc" "$work/isint.c" 2>/dev/null; then
      structs+=("$name")
    fi
  done < <(grep -rhoE '^struct grb_[A-Za-z0-9_]+ \{' "$inc/grb" |
             awk '{ print $2 }' | LC_ALL=C sort -u)
  prog=$work/constants.c
  {
    printf '%s\n#include <stdio.h>\nint main(void)\n{\n' "$pre"
    for name in "${names[@]}"; do
      printf '\tprintf("%%s 0x%%llx\\n", "%s", (unsigned long long)(%s));\n' \
        "$name" "$name"
    done
    for name in "${strs[@]}"; do
      printf '\tprintf("%%s \\"%%s\\"\\n", "%s", %s);\n' "$name" "$name"
    done
    for name in "${structs[@]}"; do
      printf '\tprintf("sizeof(struct %s) 0x%%zx\\n", sizeof(struct %s));\n' \
        "$name" "$name"
      printf '\tprintf("_Alignof(struct %s) 0x%%zx\\n", _Alignof(struct %s));\n' \
        "$name" "$name"
    done
    printf '\treturn 0;\n}\n'
  } >"$prog"
  "$cc" -std=c11 -I"$inc" "$prog" -o "$work/constants"
  "$work/constants" | LC_ALL=C sort
}
