#!/usr/bin/env bash
# tools/check_grb_read.sh BASIC_THREADS GRB_READ MODE - the read side end
# to end, as a test:
#  1. basic_threads --out DIR writes its channel's buffers into DIR
#     (discard mode: grb_buf_splice(); overwrite mode: grb_buf_write());
#  2. grb-read DIR must print as many records as the example consumed
#     ("read"), in timestamp order, none twice (each payload is a distinct
#     (writer, seq) pair), and report no gap in discard mode;
#  3. damaged copies of the files (cut short, bytes overwritten at random,
#     a header's data_size made huge) must make grb-read report an error
#     and exit 1, never crash;
#  4. a bad command line, a path that is missing, an empty directory, a
#     directory holding a directory, a file that is not a basic channel's
#     and output that cannot be written: a non-zero status and a message
#     naming the problem, the trace files untouched; --help exits 0.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 BASIC_THREADS GRB_READ discard|overwrite" >&2
  exit 2
fi
example=$1 reader=$2 mode=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/grb-read-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "check_grb_read: $*" >&2; exit 1; }

copy=
[ "$mode" = overwrite ] && copy=--copy
"$example" --out "$work/out" $copy 4 50000 "$mode" >"$work/example.txt" ||
  fail "basic_threads failed: $(cat "$work/example.txt")"
consumed=$(awk '$1 == "read" { print $2 }' "$work/example.txt")
[ -n "$consumed" ] || fail "basic_threads printed no read count"

"$reader" "$work/out" >"$work/records.txt" 2>"$work/errors.txt" ||
  fail "grb-read failed: $(cat "$work/errors.txt")"
# Record lines: count, order, distinct payloads.  awk compares timestamps
# as doubles: rounding keeps their order (never reverses it).
awk -v want="$consumed" -v mode="$mode" '
  /^#/ { if ($0 ~ /sub-buffers [0-9]+ to [0-9]+ missing$/) gaps++; next }
  {
    n++
    if (n > 1 && $1 + 0 < last + 0) { print "out of order at line " NR; bad = 1 }
    last = $1
    if (seen[$4]++) { print "twice: " $0; bad = 1 }
  }
  END {
    if (n != want) { print "grb-read printed " n " records, the example consumed " want; bad = 1 }
    if (mode == "discard" && gaps) { print gaps " gaps in discard mode"; bad = 1 }
    exit bad
  }' "$work/records.txt" >"$work/verdict.txt" ||
  fail "$(cat "$work/verdict.txt")"
grep -q "^# total: $consumed records" "$work/records.txt" ||
  fail "the summary does not say $consumed records"

# Damage.  The largest file is the one with the most to break.
big=$(ls -S "$work/out"/* | head -n 1)
size=$(stat -c %s "$big")
[ "$size" -gt 4096 ] || fail "no file large enough to damage"
run_damaged() {
  local rc=0
  "$reader" -q "$work/bad" >/dev/null 2>"$work/bad.err" || rc=$?
  [ "$rc" -lt 128 ] || fail "grb-read crashed (status $rc) on $1"
  # A sanitizer build exits 1 on an error it finds: not a clean report.
  if grep -q "Sanitizer\|runtime error" "$work/bad.err"; then
    fail "grb-read crashed on $1: $(head -n 5 "$work/bad.err")"
  fi
  [ "$rc" -eq 0 ] || grep -q "^grb-read: " "$work/bad.err" ||
    fail "grb-read exited $rc with no error message on $1"
  [ "$rc" -eq "${2:-1}" ] || [ -z "${2:-}" ] ||
    fail "grb-read exited $rc, not ${2}, on $1"
}
mkdir "$work/bad"
# Cut inside a sub-buffer: always malformed.
head -c $((size - 100)) "$big" >"$work/bad/f"
run_damaged "a cut file" 1
grep -q "ends early\|runs past" "$work/bad.err" || fail "no clear error for a cut file"
# A header's data_size (bytes 32-39 of the first header) made huge.
cp "$big" "$work/bad/f"
printf '\377\377\377\377\377\377\377\177' |
  dd of="$work/bad/f" bs=1 seek=32 conv=notrunc status=none
run_damaged "a huge data_size" 1
# A header's record count (bytes 40-47) that its records do not match,
# and a header's magic (bytes 0-3) gone.
cp "$big" "$work/bad/f"
printf '\001' | dd of="$work/bad/f" bs=1 seek=47 conv=notrunc status=none
run_damaged "a wrong record count" 1
grep -q "record count" "$work/bad.err" || fail "no clear error for a wrong record count"
cp "$big" "$work/bad/f"
printf 'XXXX' | dd of="$work/bad/f" bs=1 count=4 conv=notrunc status=none
run_damaged "a bad magic" 1
grep -q "bad magic" "$work/bad.err" || fail "no clear error for a bad magic"
# Where the sub-buffer headers are: each header's data_size (bytes
# 32-39, little-endian) says where the next begins.
u64_at() { od -An -t u8 -j "$1" -N 8 "$2" | tr -d ' '; }
heads=() at=0
while [ "$at" -lt "$size" ] && [ ${#heads[@]} -lt 64 ]; do
  heads+=("$at")
  at=$((at + $(u64_at $((at + 32)) "$big")))
done
[ ${#heads[@]} -ge 2 ] || fail "fewer than two sub-buffers to damage"
# The second sub-buffer claims the whole rest of the file: larger than
# any before it, inside the file, and its records run into the next
# header.
cp "$big" "$work/bad/f"
rest=$((size - heads[1]))
printf "$(printf '\\%03o' $((rest & 255)) $((rest >> 8 & 255)) \
  $((rest >> 16 & 255)) $((rest >> 24 & 255)) 0 0 0 0)" |
  dd of="$work/bad/f" bs=1 seek=$((heads[1] + 32)) conv=notrunc status=none
run_damaged "a data_size spanning the rest of the file" 1
# Random bytes, half of the rounds inside a header: any verdict, no crash.
poke() {
  printf "\\$(printf %03o $((RANDOM % 256)))" |
    dd of="$work/bad/f" bs=1 seek="$1" conv=notrunc status=none
}
RANDOM=4242
for i in $(seq 1 100); do
  cp "$big" "$work/bad/f"
  for j in 1 2 3 4; do
    if [ $((i % 2)) -eq 0 ]; then
      poke $(( heads[RANDOM % ${#heads[@]}] + RANDOM % 64 ))
    else
      poke $(( (RANDOM * 32768 + RANDOM) % size ))
    fi
  done
  run_damaged "random damage, round $i"
done

# 4. Bad input.  bad_input WHAT PATTERN COMMAND...: COMMAND must exit
#    non-zero (not by a signal) with PATTERN on stderr.
bad_input() {
  local what=$1 pat=$2 rc=0
  shift 2
  "$@" >"$work/bad.out" 2>"$work/bad.err" || rc=$?
  [ "$rc" -ne 0 ] || fail "$what: exit status 0"
  [ "$rc" -lt 128 ] || fail "$what: crashed (status $rc)"
  grep -q -- "$pat" "$work/bad.err" ||
    fail "$what: stderr does not say '$pat': $(head -n 3 "$work/bad.err")"
}
before=$(cat "$work/out"/* | md5sum)
"$reader" --help >"$work/help.txt" || fail "--help: status $?"
grep -q "^usage: grb-read" "$work/help.txt" || fail "--help prints no usage"
bad_input "no PATH" "no PATH given" "$reader"
bad_input "an unknown option" "unknown option '-z'" "$reader" -z "$work/out"
bad_input "a missing path" "$work/none: No such file" "$reader" "$work/none"
mkdir "$work/empty"
bad_input "an empty directory" "empty: no files" "$reader" "$work/empty"
mkdir "$work/nested" "$work/nested/sub"
bad_input "a directory in the directory" "sub: not a regular file" \
  "$reader" "$work/nested"
head -c 200 /dev/zero | tr '\0' x >"$work/text"
bad_input "a file that is not a basic channel's" "bad magic" \
  "$reader" "$work/text"
bad_input "output to a full disk" "writing the records: .*space" \
  sh -c '"$1" "$2" >/dev/full' sh "$reader" "$work/out"
# A pipe whose reader is gone before the first write: reported, status 1,
# not a death by SIGPIPE (python3 runs it with SIGPIPE at its default).
bad_input "output to a closed pipe" "writing the records: .*[Pp]ipe" \
  python3 -c 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
rc = subprocess.call(sys.argv[1:], stdout=w)
sys.exit(128 - rc if rc < 0 else rc)' "$reader" "$work/out"
[ "$(cat "$work/out"/* | md5sum)" = "$before" ] ||
  fail "grb-read changed the files it read"

echo "check_grb_read: $mode: $consumed records, in order, once each; damaged files and bad input reported"
