# shellcheck shell=bash
# model/runner.sh - the check runner model/check.sh and model/recovery.sh
# share; sourced after they set:
#   model   the .pml file, in $here
#   label   the name printed in the summary line
#   checks  the table: "name expectation kind -Doptions...", where kind is
#           safety or progress (an LTL check under weak fairness)
#   work    a scratch directory
# and with an optional first argument: run only the checks whose name
# contains it.  The checks run GRB_MODEL_JOBS (default 2) at a time and
# print in table order; the exit status is 1 when any result was not the
# expected one.

# Run check number $1; leave its report line and verdict in $work.
run_check() {
  local i=$1 name expect kind defs want dir errors states secs what verdict why cflags
  read -r name expect kind defs <<<"${checks[$i]}"
  want=""
  if [[ "$expect" == fail=* ]]; then want=${expect#fail=}; expect=fail; fi
  dir="$work/$name"; mkdir -p "$dir"; cd "$dir"
  # gcc's dead-store elimination takes half the compile time of pan.c's
  # one large transition function and gains nothing when pan runs.
  cflags="-w -O1 -fno-dse -fno-tree-dse"
  # shellcheck disable=SC2086
  if [ "$kind" = progress ]; then
    spin -a $defs -DCHECK_PROGRESS "$here/$model" >spin.log 2>&1
    gcc $cflags -DCOLLAPSE -DNFAIR=4 -o pan pan.c
    timeout 600 ./pan -m100000 -a -f >pan.log 2>&1 || true
  else
    spin -a $defs "$here/$model" >spin.log 2>&1
    gcc $cflags -DSAFETY -DCOLLAPSE -o pan pan.c
    timeout 600 ./pan -m100000 >pan.log 2>&1 || true
  fi
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | tail -1)
  states=$(sed -n 's/^ *\([0-9e.+]*\) states, stored.*/\1/p' pan.log | tail -1)
  secs=$(sed -n 's/^pan: elapsed time \([0-9.e+]*\) seconds.*/\1/p' pan.log | tail -1)
  what=$(grep -m1 -E "assertion violated|invalid end state|acceptance cycle|max search depth" pan.log || true)
  what=${what#pan:1: }
  if [ -z "$errors" ]; then
    verdict=FAIL; why="spin did not finish: $(tail -n 2 pan.log | tr '\n' ' ')"
  elif [ "$expect" = pass ] && [ "$errors" = 0 ] && ! grep -q "max search depth too small" pan.log; then
    verdict=ok; why="no error in $states states (${secs}s)"
  elif [ "$expect" = fail ] && [ "$errors" != 0 ] &&
       { [ -z "$want" ] || grep -qE -- "$want" <<<"$what"; }; then
    verdict=ok; why="rejected as expected: ${what:-$errors errors}"
  elif [ "$expect" = fail ] && [ "$errors" != 0 ]; then
    verdict=FAIL; why="rejected, but not for /$want/: $what"
  else
    verdict=FAIL; why="expected $expect, got $errors errors ${what}"
  fi
  printf '%-24s %-8s %-4s %s\n' "$name" "$kind" "$verdict" "$why" >"$work/$i.line"
  echo "$verdict" >"$work/$i.verdict"
}

filter=${1:-}
jobs=${GRB_MODEL_JOBS:-2}
total=${#checks[@]}
start=$SECONDS
shown=0
# Print every finished result that is next in table order.
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
  # A spin or gcc error leaves no verdict "pass": the run then reports
  # that spin did not finish.
  { run_check "$i" || true; } &
done
wait
show_ready
passed=$(cat "$work"/*.verdict 2>/dev/null | grep -c '^ok$' || true)
failed=$(cat "$work"/*.verdict 2>/dev/null | grep -vc '^ok$' || true)
echo "$label: $passed passed, $failed failed in $((SECONDS - start))s"
[ "$failed" = 0 ]
