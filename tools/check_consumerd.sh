#!/usr/bin/env bash
# tools/check_consumerd.sh CONSUMERD PRODUCER GRB_READ - grb-consumerd end
# to end, each producer a separate process writing a shared basic channel
# (examples/shm_producer.c, 4 threads) in discard mode:
#  1. the producer exits (its destroy finalizes the channel);
#  2. the producer kills itself with SIGKILL after writing: nothing
#     finalizes, the consumer sees the connection end, flushes from its
#     side and drains; and again while it holds a reservation it never
#     commits: the consumer recovers that sub-buffer (grb/recover.h) and
#     the dead record is not in the output;
#  3. two producers at once, and the consumer stopped by SIGTERM while
#     the second still holds its connection;
#  4. stream files that cannot be written: exit status 1 and the error.
# Each time the consumer must exit 0 and print a summary per channel, and
# grb-read of the stream files must print exactly the records the producer
# says it wrote, none twice; the summary's count must agree.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 CONSUMERD PRODUCER GRB_READ" >&2
  exit 2
fi
consumerd=$1 producer=$2 reader=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/grb-consumerd-check.XXXXXX")
cpid=
cleanup() { [ -n "$cpid" ] && kill "$cpid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "check_consumerd: $*" >&2; exit 1; }

wait_socket() {
  for _ in $(seq 400); do [ -S "$1" ] && return 0; sleep 0.05; done
  fail "no socket $1"
}

# check_channel OUTDIR/CHAN WRITTEN: the files hold WRITTEN records, once.
check_channel() {
  local dir=$1 want=$2
  "$reader" "$dir" >"$work/records.txt" 2>"$work/read.err" ||
    fail "grb-read $dir failed: $(cat "$work/read.err")"
  awk -v want="$want" '
    /^#/ { next }
    { n++; if (seen[$4]++) { print "twice: " $0; bad = 1 } }
    END { if (n != want) { print "read " n " records, the producer wrote " want; bad = 1 }
          exit bad }' "$work/records.txt" >"$work/verdict.txt" ||
    fail "$dir: $(cat "$work/verdict.txt")"
}

summary_read() {   # the consumer's "N records read" for channel $2
  sed -n "s/^channel $2: \([0-9]*\) records read.*/\1/p" "$1"
}

# 1 and 2: one producer each, the consumer exits after it.
for how in exit kill kill-reserved; do
  out=$work/out-$how sock=$work/sock-$how
  "$consumerd" -q -n 1 -t 20 -l "$sock" "$out" >"$work/c.txt" 2>"$work/c.err" &
  cpid=$!
  wait_socket "$sock"
  extra=
  [ "$how" != exit ] && extra=--$how
  rc=0
  "$producer" "$sock" 4 40000 discard $extra >"$work/p.txt" 2>&1 || rc=$?
  if [ "$how" != exit ]; then
    [ "$rc" -eq 137 ] || fail "the producer was to die by SIGKILL (status $rc)"
  else
    [ "$rc" -eq 0 ] || fail "producer failed: $(cat "$work/p.txt")"
  fi
  written=$(sed -n 's/^written \([0-9]*\)$/\1/p' "$work/p.txt")
  [ -n "$written" ] && [ "$written" -gt 0 ] || fail "producer wrote nothing"
  wait "$cpid" || fail "consumer ($how) failed: $(cat "$work/c.err")"
  cpid=
  [ "$(summary_read "$work/c.txt" chan0)" = "$written" ] ||
    fail "$how: the summary says '$(cat "$work/c.txt")', the producer wrote $written"
  check_channel "$out/chan0" "$written"
  if [ "$how" = kill-reserved ]; then
    grep -q " dead=1, [1-9][0-9]* sub-buffers recovered" "$work/c.txt" ||
      fail "kill-reserved: no recovery in the summary: $(cat "$work/c.txt")"
  fi
done

# 3: two producers; the second holds its connection; SIGTERM ends it all.
out=$work/out-term sock=$work/sock-term
"$consumerd" -q -t 20 -l "$sock" "$out" >"$work/c.txt" 2>"$work/c.err" &
cpid=$!
wait_socket "$sock"
"$producer" "$sock" 4 20000 discard >"$work/p0.txt" 2>&1 || fail "producer 0 failed"
"$producer" "$sock" 4 20000 discard --hold 3000 >"$work/p1.txt" 2>&1 &
ppid=$!
for _ in $(seq 100); do grep -q written "$work/p1.txt" && break; sleep 0.05; done
grep -q written "$work/p1.txt" || fail "producer 1 did not finish writing"
kill -TERM "$cpid"
wait "$cpid" || fail "consumer failed on SIGTERM: $(cat "$work/c.err")"
cpid=
wait "$ppid" || fail "producer 1 failed"
for k in 0 1; do
  written=$(sed -n 's/^written \([0-9]*\)$/\1/p' "$work/p$k.txt")
  [ "$(summary_read "$work/c.txt" chan$k)" = "$written" ] ||
    fail "SIGTERM: chan$k: the summary says '$(cat "$work/c.txt")', the producer wrote $written"
  check_channel "$out/chan$k" "$written"
done
[ ! -e "$sock" ] || fail "the socket was not removed"

# 4. Output that cannot be written (every stream file is /dev/full): the
#    consumer reports the error and exits 1.
out=$work/out-full sock=$work/sock-full
mkdir -p "$out/chan0"
for i in $(seq 0 255); do ln -s /dev/full "$out/chan0/stream_$i"; done
"$consumerd" -q -n 1 -t 20 -l "$sock" "$out" >"$work/c.txt" 2>"$work/c.err" &
cpid=$!
wait_socket "$sock"
"$producer" "$sock" 2 20000 discard >"$work/p.txt" 2>&1 || fail "producer failed"
rc=0
wait "$cpid" || rc=$?
cpid=
[ "$rc" -eq 1 ] || fail "a write error must exit 1 (status $rc)"
grep -q "writing: .*space" "$work/c.err" ||
  fail "no write error reported: $(cat "$work/c.err")"
"$consumerd" --help | grep -q "^SYNOPSIS" || fail "--help"
echo "check_consumerd: exit, SIGKILL and SIGTERM cases drained every record"
