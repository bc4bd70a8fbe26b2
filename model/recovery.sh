#!/usr/bin/env bash
# model/recovery.sh - check model/recovery.pml (recovering a sub-buffer a
# dead writer left incomplete) with Spin: every configuration must pass,
# every reachability probe and mutant must be rejected.
#
# Each line of the table is: name, expectation, then the -D options for
# spin.  "pass" needs an exhaustive run with no error.  "fail" needs Spin
# to find one; "fail=REGEX" also needs the first error Spin reports (the
# violated assertion's text or "invalid end state") to match the extended
# regular expression, so that a mutant is rejected for its own reason.
# The checks run GRB_MODEL_JOBS (default 2) at a time and print in table
# order; an optional argument runs only the checks whose name contains it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v spin >/dev/null || { echo "model: spin is not installed"; exit 1; }

checks=(
  # One death (the protocol's scope), with and without the sum guard:
  # without it the model asserts the dead ranges always add up.
  "one-death           pass  "
  "one-death-2rec      pass  -DNREC=2"
  "one-death-3w        pass  -DNW=3"
  "no-guard            pass  -DSUM_GUARD=0"
  "no-guard-2rec       pass  -DNREC=2 -DSUM_GUARD=0"
  "no-guard-3w         pass  -DNW=3 -DSUM_GUARD=0"
  # Each recovery path is reached (else a pass above would prove little):
  # a lap recovered, a complete lap delivered for its dead committer, a
  # dead closer's missing data_size, a dead TENTATIVE entry recovered.
  "reach-recover       fail=^[^(]*0 -DNREC=2 -DREACH_RECOVER"
  "reach-finish        fail=^[^(]*0 -DNREC=2 -DREACH_FINISH"
  "reach-no-close      fail=close_pos -DNREC=2 -DREACH_NO_CLOSE"
  "reach-tentative     fail=tentdead -DNREC=2 -DREACH_TENTATIVE"
  # Two deaths: the dead ranges may exceed the missing bytes (a writer
  # that died after its commit, before clearing its entry): the rule must
  # wait forever, or damage committed bytes.
  "two-deaths-stall    fail=invalid -DMAXDEAD=2"
  "two-deaths-no-guard fail=mask>>k -DMAXDEAD=2 -DSUM_GUARD=0"
  # Mutants.  Without the sum guard the journal mutants let recovery
  # complete a lap a live writer holds (property 3); with it, Spin shows
  # the same mistake as a stall.
  "mutant-entry-after-cas   fail=dead\\[\\(own -DNW=3 -DSUM_GUARD=0 -DMUTANT_ENTRY_AFTER_CAS"
  "mutant-entry-after-cas-g fail=invalid -DMUTANT_ENTRY_AFTER_CAS"
  "mutant-ignore-tentative  fail=dead\\[\\(own -DNW=3 -DSUM_GUARD=0 -DMUTANT_IGNORE_TENTATIVE"
  "mutant-ignore-tentative-g fail=invalid -DMUTANT_IGNORE_TENTATIVE"
  "mutant-ignore-liveness   fail=dead\\[\\(own -DMUTANT_IGNORE_LIVENESS"
  "mutant-final-no-journal  fail=dead\\[\\(own -DNW=3 -DMUTANT_FINAL_NO_JOURNAL"
  "mutant-recover-open      fail=tag\\[ -DSUM_GUARD=0 -DMUTANT_RECOVER_OPEN"
  "mutant-pos-in-range      fail=mask>>k -DNREC=2 -DSUM_GUARD=0 -DMUTANT_POS_IN_RANGE"
  "mutant-pos-in-range-g    fail=invalid -DNREC=2 -DMUTANT_POS_IN_RANGE"
  "mutant-none-before-deliver fail=sb_b\\[ds\\]<tb -DNREC=2 -DMUTANT_NONE_BEFORE_DELIVER"
  "mutant-no-finish-delivery fail=invalid -DNREC=2 -DMUTANT_NO_FINISH_DELIVERY"
  "mutant-no-recovery       fail=invalid -DMUTANT_NO_RECOVERY"
  "mutant-no-damage-mask    fail=bad\\[ -DMUTANT_NO_DAMAGE_MASK"
  "mutant-damage-whole      fail=mask>>k -DMUTANT_DAMAGE_WHOLE"
  "mutant-no-damage-recs    fail=n_ok== -DMUTANT_NO_DAMAGE_RECS"
)

# Run check number $1; leave its report line and verdict in $work.
run_check() {
  local i=$1 name expect defs want dir errors states what verdict why t0
  read -r name expect defs <<<"${checks[$i]}"
  want=""
  if [[ "$expect" == fail=* ]]; then want=${expect#fail=}; expect=fail; fi
  dir="$work/$name"; mkdir -p "$dir"; cd "$dir"
  t0=$SECONDS
  # shellcheck disable=SC2086
  spin -a $defs "$here/recovery.pml" >spin.log 2>&1
  gcc -w -O1 -DSAFETY -DCOLLAPSE -o pan pan.c
  timeout 600 ./pan -m100000 >pan.log 2>&1 || true
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | tail -1)
  states=$(sed -n 's/^ *\([0-9e.+]*\) states, stored.*/\1/p' pan.log | tail -1)
  what=$(grep -m1 -E "assertion violated|invalid end state|max search depth" pan.log || true)
  what=${what#pan:1: }
  if [ -z "$errors" ]; then
    verdict=FAIL; why="spin did not finish: $(tail -n 2 pan.log | tr '\n' ' ')"
  elif [ "$expect" = pass ] && [ "$errors" = 0 ] && ! grep -q "max search depth too small" pan.log; then
    verdict=ok; why="no error in $states states"
  elif [ "$expect" = fail ] && [ "$errors" != 0 ] &&
       { [ -z "$want" ] || grep -qE -- "$want" <<<"$what"; }; then
    verdict=ok; why="rejected as expected: ${what:-$errors errors}"
  elif [ "$expect" = fail ] && [ "$errors" != 0 ]; then
    verdict=FAIL; why="rejected, but not for /$want/: $what"
  else
    verdict=FAIL; why="expected $expect, got $errors errors ${what}"
  fi
  printf '%-26s %-4s %3ss %s\n' "$name" "$verdict" "$((SECONDS - t0))" "$why" >"$work/$i.line"
  echo "$verdict" >"$work/$i.verdict"
}

filter=${1:-}
jobs=${GRB_MODEL_JOBS:-2}
total=${#checks[@]}
start=$SECONDS
shown=0
show_ready() {
  while [ "$shown" -lt "$total" ] &&
        { [ -f "$work/$shown.skip" ] || [ -f "$work/$shown.verdict" ]; }; do
    [ -f "$work/$shown.line" ] && cat "$work/$shown.line"
    shown=$((shown + 1))
  done
}
for i in "${!checks[@]}"; do
  read -r name _ <<<"${checks[$i]}"
  if [ -n "$filter" ] && [[ "$name" != *$filter* ]]; then
    touch "$work/$i.skip"; continue
  fi
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n || true
    show_ready
  done
  { run_check "$i" || true; } &
done
wait
show_ready
passed=$(cat "$work"/*.verdict 2>/dev/null | grep -c '^ok$' || true)
failed=$(cat "$work"/*.verdict 2>/dev/null | grep -vc '^ok$' || true)
echo "recovery model: $passed passed, $failed failed in $((SECONDS - start))s"
[ "$failed" = 0 ]
