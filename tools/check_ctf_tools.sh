#!/usr/bin/env bash
# tools/check_ctf_tools.sh CTF_TRACER GRB_CONSUMERD GRB_CRASH - the CTF
# client's three ways out, read by babeltrace2 (and babeltrace 1.5):
#  1. the tracer's own writer thread (ctf_tracer -o);
#  2. buffers in shared memory drained by grb-consumerd --attach, while
#     the producer writes and after it stopped, and by a second consumer
#     after the first was stopped (2c);
#  3. a producer killed with SIGKILL, its trace rebuilt by grb-crash:
#     while it writes, and after it stopped (3b).
# In 1, 2 and 3b the events printed must be exactly the events the tracer
# says it wrote, and the discarded-events warnings must add up to what it
# says it refused; in 3 babeltrace2 must read the rebuilt trace without
# an error (test_ctf_crash checks that case event by event).
#  4. grb-crash on bad input (a bad command line, a channel that is
#     missing or is not one, an OUTDIR already holding a file it would
#     write): a non-zero status and a message naming the problem, nothing
#     overwritten, and (3b) nothing read from the buffers before it fails.
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

# 2c. A consumer stopped with SIGTERM while the producer lives, then
# another: the first gives the reader role back, so the second attaches
# (not "busy") and drains every event.
mkdir "$work/shm5"
coproc PROD { exec "$tracer" -s "$work/shm5" -t 2 -n 30000 -w; }
read -r line <&"${PROD[0]}"; [ "$line" = ready ] || fail "producer: $line"
"$consumerd" -q -t 20 -a "$work/shm5/ctf" "$work/out5a" > "$work/consumerd5a.txt" 2>&1 &
cons=$!
sleep 0.3
kill -TERM "$cons"
wait "$cons" || fail "grb-consumerd (first) failed after SIGTERM: $(cat "$work/consumerd5a.txt")"
"$consumerd" -q -t 20 -a "$work/shm5/ctf" "$work/out5b" > "$work/consumerd5b.txt" 2>&1 &
cons=$!
sleep 0.3
kill -USR1 "$PROD_PID"
read -r out <&"${PROD[0]}"
wait "$cons" || fail "grb-consumerd (second) failed: $(cat "$work/consumerd5b.txt")"
kill -USR1 "$PROD_PID"; wait "$PROD_PID" || fail "producer failed"
check_counts "$work/out5b/ctf" "$out"

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
babeltrace2 "$work/crash" > /dev/null 2>"$work/crash.err" ||
  fail "babeltrace2 cannot read grb-crash's trace"
# Overwrite mode for long enough that packets were overwritten: each
# stream starts with a leader packet (grb_ctf_stream_leader()), so the
# reader reports them (without it, nothing at all).
grep -q "discarded [0-9]* packets\{0,1\}" "$work/crash.err" ||
  fail "grb-crash: the overwritten packets are not reported: $(head -c 300 "$work/crash.err")"
echo "check_ctf_tools: grb-crash after SIGKILL: $n events, read by babeltrace2, overwritten packets reported"

# 3b. A discard-mode producer killed after it stopped, whose streams end
# with refusals after their last packets (as in 2b): grb-crash's trace
# must report them all too.
mkdir "$work/shm4"
coproc PROD { exec "$tracer" -s "$work/shm4" -t 2 -n 30000 -w -f; }
read -r line <&"${PROD[0]}"; [ "$line" = ready ] || fail "producer: $line"
kill -USR1 "$PROD_PID"
read -r out <&"${PROD[0]}"
kill -9 "$PROD_PID"; wait "$PROD_PID" 2>/dev/null || true
# First into an OUTDIR that already holds a metadata file: refused before
# reading a packet, the file untouched, no file of its own left behind.
bad_input() {   # WHAT PATTERN STATUS ARG...: grb-crash exits STATUS
  local what=$1 pat=$2 want=$3 rc=0
  shift 3
  "$crash" "$@" >"$work/bad.out" 2>"$work/bad.err" || rc=$?
  [ "$rc" -eq "$want" ] || fail "grb-crash: $what: status $rc, not $want"
  grep -q -- "$pat" "$work/bad.err" ||
    fail "grb-crash: $what: stderr does not say '$pat': $(head -n 3 "$work/bad.err")"
}
mkdir "$work/taken" && echo keep >"$work/taken/metadata"
bad_input "an OUTDIR holding a trace" "taken/metadata: exists" 1 \
  "$work/shm4/ctf" "$work/taken"
[ "$(cat "$work/taken/metadata")" = keep ] || fail "grb-crash overwrote a metadata file"
[ "$(ls "$work/taken")" = metadata ] || fail "grb-crash left files in a refused OUTDIR: $(ls "$work/taken")"
# A stream file in the way: the metadata it wrote is removed again.
mkdir "$work/taken2" && echo keep >"$work/taken2/ctf_0"
bad_input "a stream file in the way" "taken2/ctf_0: exists" 1 \
  "$work/shm4/ctf" "$work/taken2"
[ "$(ls "$work/taken2")" = ctf_0 ] && [ "$(cat "$work/taken2/ctf_0")" = keep ] ||
  fail "grb-crash changed a refused OUTDIR: $(ls "$work/taken2")"
"$crash" "$work/shm4/ctf" "$work/crash4" > /dev/null || fail "grb-crash failed"
check_counts "$work/crash4" "$out"

# 4. Bad input.
# The whole usage text first: see check_consumerd.sh on grep -q and SIGPIPE.
help=$("$crash" --help) || fail "grb-crash --help exit status $?"
grep -q "^SYNOPSIS" <<<"$help" || fail "grb-crash --help"
bad_input "no argument" "DIR/NAME and OUTDIR are missing" 2
bad_input "no OUTDIR" "OUTDIR is missing" 2 "$work/shm4/ctf"
bad_input "an extra argument" "extra argument more" 2 "$work/shm4/ctf" "$work/c5" more
bad_input "an unknown option" "unrecognized option '--bogus'" 2 --bogus "$work/shm4/ctf" "$work/c5"
bad_input "no DIR/" "ctf: expected DIR/NAME" 2 ctf "$work/c5"
bad_input "a missing channel" "nothing/ctf: No such file" 1 "$work/nothing/ctf" "$work/c5"
mkdir "$work/junk"
head -c 8192 /dev/urandom >"$work/junk/ch.0"
cp "$work/junk/ch.0" "$work/junk.copy"
bad_input "files that are not a channel" "junk/ch: not the files of a grb channel" 1 \
  "$work/junk/ch" "$work/c5"
cmp -s "$work/junk/ch.0" "$work/junk.copy" || fail "grb-crash changed or removed junk/ch.0"
[ ! -e "$work/c5" ] || fail "grb-crash made an OUTDIR on bad input"
