#!/usr/bin/env bash
# tools/check_ctf_tools.sh CTF_TRACER GRB_CONSUMERD GRB_CRASH - the CTF
# client's three ways out, read by babeltrace2 (and babeltrace 1.5):
#  1. the tracer's own writer thread (ctf_tracer -o);
#  2. buffers in shared memory drained by grb-consumerd --attach, while
#     the producer writes and after it stopped;
#  3. a producer killed with SIGKILL, its trace rebuilt by grb-crash:
#     while it writes, and after it stopped (3b).
# In 1, 2 and 3b the events printed must be exactly the events the tracer
# says it wrote, and the discarded-events warnings must add up to what it
# says it refused; in 3 babeltrace2 must read the rebuilt trace without
# an error (test_ctf_crash checks that case event by event).
set -euo pipefail
tracer=$1 consumerd=$2 crash=$3
command -v babeltrace2 >/dev/null || { echo "SKIP: no babeltrace2"; exit 77; }
work=$(mktemp -d /dev/shm/grb_ctf_tools.XXXXXX)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "check_ctf_tools: $*" >&2; exit 1; }

# events DIR: event lines babeltrace2 prints; discarded DIR: the sum of
# its "discarded N events" warnings.
events() { babeltrace2 "$1" 2>/dev/null | grep -c ' app:' || true; }
discarded() {
  babeltrace2 "$1" 2>&1 >/dev/null |
    sed -n 's/.*Tracer discarded \([0-9]*\) events\{0,1\} .*/\1/p' |
    awk '{ s += $1 } END { print s + 0 }'
}
check_counts() {   # DIR "written W discarded D"
  local w d got gotd
  w=$(echo "$2" | awk '{ print $2 }'); d=$(echo "$2" | awk '{ print $4 }')
  got=$(events "$1"); gotd=$(discarded "$1")
  [ "$got" = "$w" ] || fail "$1: babeltrace2 printed $got events, tracer wrote $w"
  [ "$gotd" = "$d" ] || fail "$1: babeltrace2 reported $gotd discarded, tracer counted $d"
  if command -v babeltrace >/dev/null; then
    got=$(babeltrace "$1" 2>/dev/null | grep -c ' app:' || true)
    [ "$got" = "$w" ] || fail "$1: babeltrace 1.5 printed $got events, tracer wrote $w"
  fi
  echo "check_ctf_tools: $1: $w events, $d discarded: as written"
}

# 1. In-process writer thread; small buffers, so some runs discard.
for mode in discard overwrite; do
  out=$("$tracer" -o "$work/own_$mode" -t 2 -n 30000 -m $mode)
  [ $mode = discard ] && check_counts "$work/own_$mode" "$out"
  [ $mode = overwrite ] && { babeltrace2 "$work/own_$mode" >/dev/null ||
    fail "babeltrace2 cannot read $work/own_$mode"; }
done

# 2. Shared memory, grb-consumerd --attach.
mkdir "$work/shm"
coproc PROD { exec "$tracer" -s "$work/shm" -t 2 -n 30000 -w; }
read -r line <&"${PROD[0]}"; [ "$line" = ready ] || fail "producer: $line"
"$consumerd" -q -t 20 -a "$work/shm/ctf" "$work/out" > "$work/consumerd.txt" &
cons=$!
sleep 0.3
kill -USR1 "$PROD_PID"
read -r out <&"${PROD[0]}"
wait "$cons" || fail "grb-consumerd failed: $(cat "$work/consumerd.txt")"
kill -USR1 "$PROD_PID"; wait "$PROD_PID" || fail "producer failed"
check_counts "$work/out/ctf" "$out"

# 2b. The same, but grb-consumerd attaches only after the producer has
# stopped.  With no reader the buffers fill in the first round; -f
# flushes them, so the whole second round is refused after each stream's
# last packet closed, and only grb-consumerd's trailing packet
# (grb_ctf_stream_trailer()) can report those refusals.
mkdir "$work/shm3"
coproc PROD { exec "$tracer" -s "$work/shm3" -t 2 -n 30000 -w -f; }
read -r line <&"${PROD[0]}"; [ "$line" = ready ] || fail "producer: $line"
kill -USR1 "$PROD_PID"
read -r out <&"${PROD[0]}"
[ "$(echo "$out" | awk '{ print $4 }')" -gt 0 ] ||
  fail "late consumer: the producer refused nothing ($out)"
"$consumerd" -q -t 20 -a "$work/shm3/ctf" "$work/out3" > "$work/consumerd3.txt" ||
  fail "grb-consumerd failed: $(cat "$work/consumerd3.txt")"
kill -USR1 "$PROD_PID"; wait "$PROD_PID" || fail "producer failed"
check_counts "$work/out3/ctf" "$out"

# 3. SIGKILL in the middle of writing, then grb-crash.
mkdir "$work/shm2"
"$tracer" -s "$work/shm2" -t 2 -n 100000000 -m overwrite > /dev/null &
prod=$!
sleep 0.5
kill -9 $prod; wait $prod 2>/dev/null || true
"$crash" "$work/shm2/ctf" "$work/crash" || fail "grb-crash failed"
n=$(events "$work/crash")
[ "$n" -gt 0 ] || fail "grb-crash: no event recovered"
babeltrace2 "$work/crash" > /dev/null || fail "babeltrace2 cannot read grb-crash's trace"
echo "check_ctf_tools: grb-crash after SIGKILL: $n events, read by babeltrace2"

# 3b. A discard-mode producer killed after it stopped, whose streams end
# with refusals after their last packets (as in 2b): grb-crash's trace
# must report them all too.
mkdir "$work/shm4"
coproc PROD { exec "$tracer" -s "$work/shm4" -t 2 -n 30000 -w -f; }
read -r line <&"${PROD[0]}"; [ "$line" = ready ] || fail "producer: $line"
kill -USR1 "$PROD_PID"
read -r out <&"${PROD[0]}"
kill -9 "$PROD_PID"; wait "$PROD_PID" 2>/dev/null || true
"$crash" "$work/shm4/ctf" "$work/crash4" > /dev/null || fail "grb-crash failed"
check_counts "$work/crash4" "$out"
