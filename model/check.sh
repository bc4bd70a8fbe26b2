#!/usr/bin/env bash
# model/check.sh - check model/grb.pml with Spin: every property in both
# modes, and every mutant, which Spin must reject.
#
# Each line of the table is: name, expectation (pass|fail), kind
# (safety|progress), then the -D options for spin.  A "fail" line is a
# mutant (or a configuration where the property must not hold): the run
# passes only when Spin finds a counterexample.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v spin >/dev/null || { echo "model: spin is not installed"; exit 1; }
# The model-to-code table in docs/design.md must name the code as it is.
python3 "$here/maptable.py" --check

checks=(
  "overwrite           pass safety   -DOVERWRITE=1"
  "discard             pass safety   -DOVERWRITE=0"
  "no-loss-overwrite   pass safety   -DOVERWRITE=1 -DEXPECT_NO_LOSS -DNSB=4 -DSBSIZE=8"
  "no-loss-discard     pass safety   -DOVERWRITE=0 -DEXPECT_NO_LOSS -DNSB=4 -DSBSIZE=8"
  "loss-reachable-ovw  fail safety   -DOVERWRITE=1 -DEXPECT_NO_LOSS"
  "loss-reachable-dis  fail safety   -DOVERWRITE=0 -DEXPECT_NO_LOSS"
  "progress-overwrite  pass progress -DOVERWRITE=1"
  "progress-discard    pass progress -DOVERWRITE=0"
  "mutant-no-cas       fail safety   -DOVERWRITE=1 -DMUTANT_NO_CAS"
  "mutant-deliver-early fail safety  -DOVERWRITE=0 -DMUTANT_DELIVER_EARLY"
  "mutant-no-noref     fail safety   -DOVERWRITE=1 -DMUTANT_NO_NOREF_CLEAR"
  "laps-overwrite      pass safety   -DOVERWRITE=1 -DSBSIZE=2 -DSIZE_B=1"
  "mutant-push-count   fail safety   -DOVERWRITE=1 -DSBSIZE=2 -DSIZE_B=1 -DMUTANT_PUSH_COUNTS_ALWAYS"
  "mutant-claim-no-cas fail safety   -DOVERWRITE=1 -DSBSIZE=2 -DSIZE_B=1 -DMUTANT_CLAIM_NO_CAS"
  "mutant-no-full      fail safety   -DOVERWRITE=0 -DMUTANT_NO_FULL_CHECK"
  "mutant-stale-refuse fail safety   -DOVERWRITE=0 -DMUTANT_STALE_REFUSAL -DEXPECT_NO_LOSS -DNSB=4 -DSBSIZE=8"
  "mutant-no-final-flush fail safety -DOVERWRITE=0 -DMUTANT_NO_FINAL_FLUSH"
  "mutant-wait-wrap    fail progress -DOVERWRITE=1 -DMUTANT_WAIT_WRAP"
)

# GRB_MODEL_LONG=1 adds a run with two records per writer (about 10^8
# states, several minutes); the default run takes about a minute.
if [ "${GRB_MODEL_LONG:-0}" = 1 ]; then
  checks+=("overwrite-2rec      pass safety   -DOVERWRITE=1 -DNREC=2")
fi

filter=${1:-}
passed=0; failed=0
for line in "${checks[@]}"; do
  read -r name expect kind defs <<<"$line"
  [ -n "$filter" ] && [[ "$name" != *$filter* ]] && continue
  dir="$work/$name"; mkdir -p "$dir"; cd "$dir"
  # shellcheck disable=SC2086
  if [ "$kind" = progress ]; then
    spin -a $defs -DCHECK_PROGRESS "$here/grb.pml" >spin.log 2>&1
    gcc -w -O2 -DCOLLAPSE -DNFAIR=4 -o pan pan.c
    timeout 600 ./pan -m100000 -a -f >pan.log 2>&1 || true
  else
    spin -a $defs "$here/grb.pml" >spin.log 2>&1
    gcc -w -O2 -DSAFETY -DCOLLAPSE -o pan pan.c
    timeout 600 ./pan -m100000 >pan.log 2>&1 || true
  fi
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | tail -1)
  states=$(sed -n 's/^ *\([0-9e.+]*\) states, stored.*/\1/p' pan.log | tail -1)
  what=$(grep -m1 -E "assertion violated|invalid end state|acceptance cycle|max search depth" pan.log || true)
  if [ -z "$errors" ]; then
    verdict=FAIL; why="spin did not finish: $(tail -n 2 pan.log | tr '\n' ' ')"
  elif [ "$expect" = pass ] && [ "$errors" = 0 ] && ! grep -q "max search depth too small" pan.log; then
    verdict=ok; why="no error in $states states"
  elif [ "$expect" = fail ] && [ "$errors" != 0 ]; then
    verdict=ok; why="rejected as expected: ${what:-$errors errors}"
  else
    verdict=FAIL; why="expected $expect, got $errors errors ${what}"
  fi
  printf '%-24s %-8s %-4s %s\n' "$name" "$kind" "$verdict" "$why"
  if [ "$verdict" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  cd "$here"
done
echo "model: $passed passed, $failed failed"
[ "$failed" = 0 ]
