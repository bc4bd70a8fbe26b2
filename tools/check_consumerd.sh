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
#  4. stream files that cannot be written: exit status 1 and the error;
#  6. a live producer's held reservation at SIGTERM: exit status 3;
#  7. a connection that sends nothing: refused after 2 s, not blocking;
#  8. 66 producers one after the other (64 at a time at most);
#  9. a flush period of centuries: no flush on every pass.
# Each time the consumer must exit 0 and print a summary per channel, and
# grb-read of the stream files must print exactly the records the producer
# says it wrote, none twice; the summary's count must agree.
#  5. bad input: a bad command line, an OUTDIR that holds a trace or is a
#     file, a socket path that is a file, a channel that is missing or is
#     not one, an output directory that appears while it runs: a non-zero
#     status and a message naming the problem, and no file touched.
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

# 4. Output that cannot be written (a file size limit of 1 KiB, with
#    SIGXFSZ ignored so that write(2) and splice(2) fail with EFBIG): the
#    consumer reports the error and exits 1.  (It never writes into files
#    that exist, so /dev/full cannot stand in for them.)
out=$work/out-full sock=$work/sock-full
(trap '' XFSZ; ulimit -f 1
 exec "$consumerd" -q -n 1 -t 20 -l "$sock" "$out" >"$work/c.txt" 2>"$work/c.err") &
cpid=$!
wait_socket "$sock"
"$producer" "$sock" 2 20000 discard >"$work/p.txt" 2>&1 || fail "producer failed"
rc=0
wait "$cpid" || rc=$?
cpid=
[ "$rc" -eq 1 ] || fail "a write error must exit 1 (status $rc)"
grep -q "writing: File too large" "$work/c.err" ||
  fail "no write error reported: $(cat "$work/c.err")"
# Read all of the usage text before matching: grep -q stops at its first
# match, the tool's later writes then fail with SIGPIPE and pipefail
# fails the check (seen in CI).
help=$("$consumerd" --help) || fail "--help exit status $?"
grep -q "^SYNOPSIS" <<<"$help" || fail "--help"

# 6. A live producer holding a reservation when SIGTERM comes: its
#    sub-buffer cannot be drained: exit status 3 and a message saying so.
out=$work/out-held sock=$work/sock-held
"$consumerd" -q -t 20 -r 0 -l "$sock" "$out" >"$work/c.txt" 2>"$work/c.err" &
cpid=$!
wait_socket "$sock"
"$producer" "$sock" 2 2000 discard --reserve-hold 4000 >"$work/p.txt" 2>&1 &
ppid=$!
for _ in $(seq 200); do grep -q reserved "$work/p.txt" && break; sleep 0.05; done
grep -q reserved "$work/p.txt" || fail "the producer did not reserve"
kill -TERM "$cpid"
rc=0
wait "$cpid" || rc=$?
cpid=
[ "$rc" -eq 3 ] ||
  fail "a sub-buffer left to a live writer must exit 3 (status $rc): $(cat "$work/c.err")"
grep -q "sub-buffers left to writers still alive" "$work/c.err" ||
  fail "no message for the sub-buffer left: $(cat "$work/c.err")"
wait "$ppid" || fail "the holding producer failed"

# 7. A connection that sends nothing is refused after 2 s: it holds
#    neither the producers behind it nor SIGTERM (status 1: a refusal).
out=$work/out-idle sock=$work/sock-idle
"$consumerd" -q -t 20 -l "$sock" "$out" >"$work/c.txt" 2>"$work/c.err" &
cpid=$!
wait_socket "$sock"
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
open(sys.argv[2], "w").close(); time.sleep(10)' "$sock" "$work/idle-up" &
idle=$!
# Connected before the producer is: a python3 slow to start under load
# otherwise came second, and SIGTERM beat its refusal.
for _ in $(seq 200); do [ -e "$work/idle-up" ] && break; sleep 0.05; done
[ -e "$work/idle-up" ] || fail "the idle connection did not connect"
sleep 0.3
"$producer" "$sock" 2 2000 discard >"$work/p.txt" 2>&1 || fail "producer failed"
written=$(sed -n 's/^written \([0-9]*\)$/\1/p' "$work/p.txt")
for _ in $(seq 100); do grep -q "^channel chan0:" "$work/c.txt" && break; sleep 0.05; done
kill -TERM "$cpid"
for _ in $(seq 100); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$cpid" 2>/dev/null && fail "SIGTERM did not stop the consumer within 5 s"
rc=0
wait "$cpid" || rc=$?
cpid=
kill "$idle" 2>/dev/null || true
[ "$rc" -eq 1 ] || fail "an idle connection is a refusal: status 1 (status $rc)"
[ "$(summary_read "$work/c.txt" chan0)" = "$written" ] ||
  fail "idle peer: the summary says '$(cat "$work/c.txt")', the producer wrote $written"

# 8. More producers in all than the 64 at a time: each drained channel
#    gives its place to the next.
out=$work/out-many sock=$work/sock-many
"$consumerd" -q -n 66 -t 20 -l "$sock" "$out" >"$work/c.txt" 2>"$work/c.err" &
cpid=$!
wait_socket "$sock"
for k in $(seq 66); do
  "$producer" "$sock" 1 10 discard >"$work/p.txt" 2>&1 || fail "producer $k failed"
done
wait "$cpid" || fail "66 producers, one after the other: $(cat "$work/c.err")"
cpid=
[ "$(grep -c "^channel chan" "$work/c.txt")" -eq 66 ] ||
  fail "66 producers: $(grep -c "^channel chan" "$work/c.txt") summaries"

# 9. A flush period of centuries, which -t accepts: the consumer waits for
#    data, it does not flush on every pass (the deadline overflowed, and
#    20000 records came out in about 80 sub-buffers instead of 5).
out=$work/out-longt sock=$work/sock-longt
"$consumerd" -q -n 1 -t 10000000000000 -l "$sock" "$out" >"$work/c.txt" 2>"$work/c.err" &
cpid=$!
wait_socket "$sock"
"$producer" "$sock" 1 20000 discard >"$work/p.txt" 2>&1 ||
  fail "producer (long tick) failed: $(cat "$work/p.txt")"
wait "$cpid" || fail "consumer (long tick) failed: $(cat "$work/c.err")"
cpid=
check_channel "$out/chan0" 20000
nsb=$("$reader" -q "$out/chan0" | awk '/sub-buffers,/ { n += $3 } END { print n + 0 }')
[ "$nsb" -le 20 ] || fail "-t 10000000000000: $nsb sub-buffers for 20000 records (flushed on every pass)"

# 5. Bad input.  bad_input WHAT PATTERN ARG...: the consumer must exit
#    non-zero (not by a signal, nor hang) with PATTERN on stderr.
bad_input() {
  local what=$1 pat=$2 rc=0
  shift 2
  timeout 20 "$consumerd" -q "$@" >"$work/bad.out" 2>"$work/bad.err" || rc=$?
  [ "$rc" -ne 0 ] || fail "$what: exit status 0"
  [ "$rc" -lt 124 ] || fail "$what: hung or crashed (status $rc)"
  grep -q -- "$pat" "$work/bad.err" ||
    fail "$what: stderr does not say '$pat': $(head -n 3 "$work/bad.err")"
}
s5=$work/sock5 o5=$work/out5
bad_input "no argument" "-l SOCKET or -a DIR/NAME is needed"
bad_input "an unknown option" "unrecognized option '--bogus'" --bogus -l "$s5" "$o5"
bad_input "no OUTDIR" "OUTDIR is missing" -l "$s5"
bad_input "an extra argument" "extra argument 'more'" -l "$s5" "$o5" more
bad_input "-l and -a" "exclude each other" -l "$s5" -a "$work/x/y" "$o5"
bad_input "-n with -a" "-n goes with -l" -n 1 -a "$work/x/y" "$o5"
bad_input "-n not a number" "-n 'two': not a whole number" -n two -l "$s5" "$o5"
bad_input "-n 0" "-n '0': not a whole number from 1" -n 0 -l "$s5" "$o5"
bad_input "-t 0" "-t '0': not a whole number from 1" -t 0 -l "$s5" "$o5"
bad_input "-t with a suffix" "-t '5s': not a whole number" -t 5s -l "$s5" "$o5"
bad_input "-r negative" "-r '-1': not a whole number" -r -1 -l "$s5" "$o5"
bad_input "-t too large" "not a whole number" -t 99999999999999999999 -l "$s5" "$o5"
bad_input "-a without a slash" "-a 'chan': expected DIR/NAME" -a chan "$o5"
[ ! -e "$o5" ] && [ ! -e "$s5" ] || fail "a bad command line left $o5 or $s5"
# An OUTDIR that holds a trace (from 1): refused, not one byte changed.
sums() { find "$1" -type f -exec md5sum {} + | sort; }
before=$(sums "$work/out-exit")
bad_input "an OUTDIR holding a trace" "out-exit: not empty" -n 1 -l "$s5" "$work/out-exit"
[ "$(sums "$work/out-exit")" = "$before" ] || fail "a trace in OUTDIR was changed"
[ ! -e "$s5" ] || fail "a refused OUTDIR left the socket $s5"
echo keep >"$work/afile"
bad_input "an OUTDIR that is a file" "afile: Not a directory" -n 1 -l "$s5" "$work/afile"
bad_input "a socket path that is a file" "afile: exists and is not a socket" \
  -n 1 -l "$work/afile" "$o5"
[ "$(cat "$work/afile")" = keep ] || fail "a file given as a path was changed"
[ ! -e "$o5" ] || fail "a refused socket path left $o5"
# The socket's temporary name (SOCKET.tmp, bound, then renamed) taken by
# a file that is not a socket: refused, the file kept (it was removed).
echo keep >"$work/s6.tmp"
bad_input "a file at the socket's temporary name" "s6.tmp: exists and is not a socket" \
  -n 1 -l "$work/s6" "$o5"
[ "$(cat "$work/s6.tmp")" = keep ] || fail "the file at SOCKET.tmp was removed or changed"
rm -rf "$o5"
# --attach: a channel that does not exist, files that are not a channel
# (not removed), an OUTDIR/NAME that holds a trace (checked first).
bad_input "--attach to nothing" "nothing/ch: no such file" -a "$work/nothing/ch" "$o5"
mkdir "$work/junk"
head -c 8192 /dev/urandom >"$work/junk/ch.0"
cp "$work/junk/ch.0" "$work/junk.copy"
bad_input "--attach to files that are not a channel" "junk/ch: malformed" -a "$work/junk/ch" "$o5"
cmp -s "$work/junk/ch.0" "$work/junk.copy" || fail "--attach changed or removed $work/junk/ch.0"
[ ! -e "$o5" ] || fail "a refused --attach left $o5"
mkdir -p "$o5/ch" && echo keep >"$o5/ch/ch_0"
bad_input "--attach into a trace" "out5/ch: not empty" -a "$work/junk/ch" "$o5"
[ "$(cat "$o5/ch/ch_0")" = keep ] || fail "--attach changed $o5/ch/ch_0"
# A producer's output directory that appears after the start (as a
# second consumer would make it): the producer is refused, counted by -n,
# the file left alone, and the status is 1.
out=$work/out-race sock=$work/sock-race
"$consumerd" -q -n 1 -t 20 -l "$sock" "$out" >"$work/c.txt" 2>"$work/c.err" &
cpid=$!
wait_socket "$sock"
mkdir "$out/chan0" && echo keep >"$out/chan0/stream_0"
"$producer" "$sock" 2 1000 discard >"$work/p.txt" 2>&1 || true
rc=0
timeout 20 tail --pid="$cpid" -f /dev/null || fail "a refused producer left the consumer running (-n 1)"
wait "$cpid" || rc=$?
cpid=
[ "$rc" -eq 1 ] || fail "a refused producer must make the status 1 (status $rc)"
grep -q "chan0: not empty" "$work/c.err" ||
  fail "no error for an existing chan0: $(cat "$work/c.err")"
[ "$(cat "$out/chan0/stream_0")" = keep ] || fail "an existing stream file was changed"
echo "check_consumerd: exit, SIGKILL and SIGTERM cases drained every record; bad input refused"
