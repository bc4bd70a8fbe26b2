#!/usr/bin/env bash
# tools/check_tools_audit.sh GRB_READ CONSUMERD CRASH SHM_PRODUCER
#                            BASIC_THREADS CTF_TRACER
# What the tools' usage texts and the examples' comments promise that
# check_grb_read.sh, check_consumerd.sh and check_ctf_tools.sh do not
# check: exact exit statuses, where the usage goes, SIGINT, what a refused
# run leaves behind, and a FIFO given to grb-read.  Needs no babeltrace2.
#  grb-read:  -h/--help (0, stdout); a bad command line (2); a FIFO, as
#             PATH or in a directory (reported, status 1, never a hang);
#             a file malformed after good sub-buffers (status 1, its
#             records up to there still printed); -q; dot files left
#             out; an empty stream file (an idle buffer) accepted; a
#             missing PATH beside good ones (1, the others printed).
#  grb-consumerd: --help; a bad command line (1); a socket path refused
#             (too long, in no directory, SOCKET.tmp taken) leaves no
#             OUTDIR; --attach refused as busy leaves no OUTDIR/NAME, so
#             that the same command works once the first consumer is
#             stopped by SIGINT; the socket made 0600 and removed at
#             SIGINT, but not when a later consumer put its own there;
#             a quiet producer's records in the files within the flush
#             periods.
#  grb-crash: -q prints nothing on stdout; a CTF channel without its
#             metadata leaves no OUTDIR; a second run finds the buffer
#             files still there and writes 0 packets; damaged packets
#             give status 3 and a message on stderr, even with -q.
#  examples:  shm_producer and ctf_tracer refuse a bad command line with
#             status 2 and a message naming the problem; ctf_tracer
#             writes what its comment says (EVENTS per thread, plus one
#             app:state every 64).
set -euo pipefail
if [ $# -ne 6 ]; then
  echo "usage: $0 GRB_READ CONSUMERD CRASH SHM_PRODUCER BASIC_THREADS CTF_TRACER" >&2
  exit 2
fi
reader=$1 consumerd=$2 crash=$3 producer=$4 example=$5 tracer=$6
work=$(mktemp -d "${TMPDIR:-/tmp}/grb-tools-audit.XXXXXX")
# Only the jobs still running are killed: a pid kept after its wait may
# belong to another process by now.
cleanup() {
  local p
  for p in $(jobs -p); do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check_tools_audit: $*" >&2; exit 1; }
note() { echo "check_tools_audit: ok: $*"; }

# run WANT WHAT CMD...: CMD must exit WANT within 20 s; its output is in
# $work/out and $work/err.
run() {
  local want=$1 what=$2 rc=0
  shift 2
  timeout 20 "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" -ne 124 ] || fail "$what: did not finish in 20 s (hung)"
  [ "$rc" -eq "$want" ] ||
    fail "$what: status $rc, not $want: $(head -n 3 "$work/err")"
}
has() {   # WHICH PATTERN WHAT: $work/WHICH must match PATTERN
  grep -q -- "$2" "$work/$1" ||
    fail "$3: $1 does not say '$2': $(head -n 3 "$work/$1")"
}
empty() {   # WHICH WHAT
  [ ! -s "$work/$1" ] || fail "$2: $1 is not empty: $(head -n 3 "$work/$1")"
}
wait_socket() {
  for _ in $(seq 400); do [ -S "$1" ] && return 0; sleep 0.05; done
  fail "no socket $1"
}
records() { grep -vc '^#' "$work/out" || true; }

# ---- grb-read --------------------------------------------------------
"$example" --out "$work/trace" 2 2000 discard >"$work/ex.txt" ||
  fail "basic_threads failed: $(cat "$work/ex.txt")"
want=$(awk '$1 == "read" { print $2 }' "$work/ex.txt")
good=$(ls -S "$work/trace"/* | head -n 1)
run 0 "grb-read $good" "$reader" "$good"
in_good=$(records)
[ "$in_good" -gt 0 ] || fail "no record in $good"

for h in -h --help; do
  run 0 "grb-read $h" "$reader" "$h"
  has out "^usage: grb-read" "grb-read $h"
  empty err "grb-read $h"
done
run 2 "grb-read with no PATH" "$reader"
has err "no PATH given" "grb-read with no PATH"
has err "^usage: grb-read" "grb-read with no PATH"
empty out "grb-read with no PATH"
run 2 "grb-read -x" "$reader" -x "$good"
has err "unknown option '-x'" "grb-read -x"
empty out "grb-read -x"
note "grb-read: --help 0 on stdout, a bad command line 2 on stderr"

# A FIFO: open(2) would wait for a writer that never comes.
mkfifo "$work/fifo"
run 1 "grb-read FIFO" "$reader" "$work/fifo"
has err "fifo: not a regular file" "grb-read FIFO"
mkdir "$work/withfifo"
cp "$good" "$work/withfifo/a"
mkfifo "$work/withfifo/b"
run 1 "grb-read DIR holding a FIFO" "$reader" "$work/withfifo"
has err "withfifo/b: not a regular file" "grb-read DIR holding a FIFO"
[ "$(records)" = "$in_good" ] ||
  fail "grb-read DIR holding a FIFO: $(records) records, not $in_good"
note "grb-read: a FIFO reported, status 1, no hang"

# Good sub-buffers, then bytes that are not a header: reported with the
# offset, status 1, and every record before them printed.
mkdir "$work/tail"
cp "$good" "$work/tail/a"
head -c 100 /dev/zero | tr '\0' Z >>"$work/tail/a"
run 1 "grb-read, garbage after good sub-buffers" "$reader" "$work/tail"
has err "tail/a: offset $(stat -c %s "$good"): .*bad magic" \
  "grb-read, garbage after good sub-buffers"
[ "$(records)" = "$in_good" ] ||
  fail "grb-read, garbage after good sub-buffers: $(records) records printed, not $in_good"
has out "^# total: $in_good records from 1 files" \
  "grb-read, garbage after good sub-buffers"
note "grb-read: a malformed tail is status 1, the records before it printed"

# -q, dot files, an empty stream file, a missing PATH beside good ones.
mkdir "$work/dots"
cp "$work/trace"/* "$work/dots/"
head -c 300 /dev/urandom >"$work/dots/.junk"
: >"$work/dots/zz-idle"
run 0 "grb-read, a dot file and an empty file" "$reader" "$work/dots"
[ "$(records)" = "$want" ] ||
  fail "grb-read, a dot file and an empty file: $(records) records, not $want"
has out "zz-idle: 0 sub-buffers, 0 records" "grb-read, an empty file"
run 0 "grb-read -q" "$reader" -q "$work/dots"
[ "$(records)" = 0 ] || fail "grb-read -q printed $(records) records"
nfiles=$(($(ls "$work/trace" | wc -l) + 1))
has out "^# total: $want records from $nfiles files" "grb-read -q"
run 1 "grb-read, a missing PATH" "$reader" "$work/none" "$good"
has err "none: No such file" "grb-read, a missing PATH"
[ "$(records)" = "$in_good" ] ||
  fail "grb-read, a missing PATH: $(records) records, not $in_good"
note "grb-read: -q, dot files, empty files, a missing PATH"

# ---- grb-consumerd ---------------------------------------------------
run 0 "grb-consumerd --help" "$consumerd" --help
has out "^EXIT STATUS" "grb-consumerd --help"
empty err "grb-consumerd --help"
run 1 "grb-consumerd, a bad command line" "$consumerd" -q -x "$work/o"
has err "^usage: grb-consumerd" "grb-consumerd, a bad command line"
[ ! -e "$work/o" ] || fail "a bad command line made $work/o"

# A socket path refused after OUTDIR was checked: OUTDIR not left made.
long=$work/$(printf 's%.0s' $(seq 120))
run 1 "grb-consumerd, a socket path too long" \
  "$consumerd" -q -n 1 -l "$long" "$work/o1"
has err "socket path too long" "grb-consumerd, a socket path too long"
[ ! -e "$work/o1" ] || fail "a socket path too long left OUTDIR $work/o1"
run 1 "grb-consumerd, a socket in no directory" \
  "$consumerd" -q -n 1 -l "$work/nodir/sock" "$work/o2"
has err "nodir/sock: No such file" "grb-consumerd, a socket in no directory"
[ ! -e "$work/o2" ] || fail "a socket in no directory left OUTDIR $work/o2"
echo keep >"$work/s3.tmp"
run 1 "grb-consumerd, SOCKET.tmp taken" \
  "$consumerd" -q -n 1 -l "$work/s3" "$work/o3"
[ ! -e "$work/o3" ] || fail "SOCKET.tmp taken left OUTDIR $work/o3"
# An OUTDIR that existed (empty) before a refusal stays.
mkdir "$work/o4"
run 1 "grb-consumerd, SOCKET.tmp taken, OUTDIR there" \
  "$consumerd" -q -n 1 -l "$work/s3" "$work/o4"
[ -d "$work/o4" ] || fail "a refusal removed an OUTDIR it had not made"
note "grb-consumerd: a refused socket path leaves no OUTDIR"

# The socket: 0600, removed at SIGINT (status 0), unless a consumer
# started later on the same path has put its own there.
sock=$work/sock
"$consumerd" -q -l "$sock" "$work/l1" >"$work/l1.txt" 2>&1 &
c1=$!
wait_socket "$sock"
[ "$(stat -c %a "$sock")" = 600 ] || fail "the socket is $(stat -c %a "$sock"), not 600"
kill -INT "$c1"
rc=0; wait "$c1" || rc=$?
[ "$rc" -eq 0 ] || fail "SIGINT with no producer: status $rc: $(cat "$work/l1.txt")"
[ ! -e "$sock" ] || fail "SIGINT did not remove the socket"
"$consumerd" -q -l "$sock" "$work/l2" >"$work/l2.txt" 2>&1 &
c1=$!
wait_socket "$sock"
ino1=$(stat -c %i "$sock")
"$consumerd" -q -n 1 -l "$sock" "$work/l3" >"$work/l3.txt" 2>&1 &
c2=$!
for _ in $(seq 400); do
  [ "$(stat -c %i "$sock" 2>/dev/null)" != "$ino1" ] && break; sleep 0.05
done
wait_socket "$sock"
kill -TERM "$c1"
rc=0; wait "$c1" || rc=$?
[ "$rc" -eq 0 ] || fail "the first consumer: status $rc: $(cat "$work/l2.txt")"
[ -S "$sock" ] || fail "the first consumer removed the second one's socket"
"$producer" "$sock" 1 100 discard >"$work/p.txt" 2>&1 ||
  fail "a producer could not reach the second consumer: $(cat "$work/p.txt")"
rc=0; wait "$c2" || rc=$?
[ "$rc" -eq 0 ] || fail "the second consumer: status $rc: $(cat "$work/l3.txt")"
[ ! -e "$sock" ] || fail "the second consumer did not remove its socket"
note "grb-consumerd: the socket 0600, removed at exit only when its own"

# A quiet producer (it wrote, and keeps its connection): its records are
# in the files within two flush periods (-t 100: 0.2 s; 5 s allowed on a
# loaded machine), without a finalize or a signal.
"$consumerd" -q -n 1 -t 100 -l "$work/sq" "$work/q" >"$work/q.txt" 2>&1 &
c1=$!
wait_socket "$work/sq"
# (A file of its own: an earlier one's "written" must not count.)
"$producer" "$work/sq" 1 500 discard --hold 8000 >"$work/pq.txt" 2>&1 &
pq=$!
for _ in $(seq 100); do grep -q written "$work/pq.txt" && break; sleep 0.05; done
grep -q "^written 500$" "$work/pq.txt" ||
  fail "the quiet producer: $(cat "$work/pq.txt")"
n=0
for _ in $(seq 50); do
  n=$("$reader" "$work/q/chan0" 2>/dev/null | grep -vc '^#' || true)
  [ "$n" = 500 ] && break
  sleep 0.1
done
[ "$n" = 500 ] || fail "a quiet producer's records: $n of 500 in the files after 5 s (-t 100)"
kill -TERM "$c1"
rc=0; wait "$c1" || rc=$?
[ "$rc" -eq 0 ] || fail "the quiet producer's consumer: status $rc: $(cat "$work/q.txt")"
kill "$pq" 2>/dev/null || true
wait "$pq" 2>/dev/null || true
note "grb-consumerd: a quiet producer's records out within the flush periods"

# --attach refused (busy: another consumer reads the channel): no
# OUTDIR, no OUTDIR/NAME left, so the same command works later.
mkdir "$work/shm"
coproc PROD { exec "$tracer" -s "$work/shm" -t 1 -n 2000 -w; }
read -r line <&"${PROD[0]}"; [ "$line" = ready ] || fail "ctf_tracer: $line"
"$consumerd" -q -t 20 -a "$work/shm/ctf" "$work/a1" >"$work/a1.txt" 2>&1 &
c1=$!
for _ in $(seq 200); do [ -e "$work/a1/ctf/metadata" ] && break; sleep 0.05; done
run 1 "grb-consumerd --attach, busy" \
  "$consumerd" -q -t 20 -a "$work/shm/ctf" "$work/a2"
has err "busy" "grb-consumerd --attach, busy"
[ ! -e "$work/a2" ] || fail "a busy --attach left $(find "$work/a2" | tr '\n' ' ')"
mkdir "$work/a3"
run 1 "grb-consumerd --attach, busy, OUTDIR there" \
  "$consumerd" -q -t 20 -a "$work/shm/ctf" "$work/a3"
[ -d "$work/a3" ] && [ ! -e "$work/a3/ctf" ] ||
  fail "a busy --attach into an existing OUTDIR left $(find "$work/a3" | tr '\n' ' ')"
kill -INT "$c1"
rc=0; wait "$c1" || rc=$?
[ "$rc" -eq 0 ] || fail "--attach stopped by SIGINT: status $rc: $(cat "$work/a1.txt")"
grep -q "^channel ctf: " "$work/a1.txt" || fail "SIGINT: no summary: $(cat "$work/a1.txt")"
"$consumerd" -q -t 20 -a "$work/shm/ctf" "$work/a3" >"$work/a3.txt" 2>&1 &
c3=$!
sleep 0.3
kill -USR1 "$PROD_PID"
read -r out <&"${PROD[0]}"
rc=0; wait "$c3" || rc=$?
[ "$rc" -eq 0 ] || fail "--attach again into the same OUTDIR: status $rc: $(cat "$work/a3.txt")"
written=$(echo "$out" | awk '{ print $2 }')
sed -n 's/^channel ctf: \([0-9]*\) records read.*/\1/p' "$work/a3.txt" >"$work/n.txt"
[ "$(cat "$work/n.txt")" = "$written" ] ||
  fail "--attach again: read '$(cat "$work/n.txt")', the tracer wrote $written"
kill -USR1 "$PROD_PID"; wait "$PROD_PID" || fail "ctf_tracer failed"
note "grb-consumerd: a busy --attach leaves nothing; SIGINT drains and exits 0"

# ---- grb-crash -------------------------------------------------------
mkdir "$work/shm2"
"$tracer" -s "$work/shm2" -t 1 -n 100000000 -m overwrite >/dev/null &
prod=$!
for _ in $(seq 200); do [ -e "$work/shm2/ctf.metadata" ] && break; sleep 0.05; done
sleep 0.3
kill -9 "$prod"; wait "$prod" 2>/dev/null || true
ls "$work/shm2" >"$work/files.txt"
run 0 "grb-crash -q" "$crash" -q "$work/shm2/ctf" "$work/x1"
empty out "grb-crash -q"
[ -s "$work/x1/metadata" ] || fail "grb-crash -q wrote no metadata"
run 0 "grb-crash, a second run" "$crash" "$work/shm2/ctf" "$work/x2"
has out "^grb-crash: ctf (grb-ctf, [0-9]* buffers): 0 packets" "grb-crash, a second run"
[ "$(ls "$work/shm2")" = "$(cat "$work/files.txt")" ] ||
  fail "grb-crash removed or added buffer files: $(ls "$work/shm2")"
mv "$work/shm2/ctf.metadata" "$work/meta.save"
run 1 "grb-crash, no metadata" "$crash" "$work/shm2/ctf" "$work/x3"
has err "shm2/ctf.metadata: No such file" "grb-crash, no metadata"
[ ! -e "$work/x3" ] || fail "grb-crash, no metadata: left OUTDIR $work/x3"
note "grb-crash: -q, a second run, a refused run leaves no OUTDIR"

# Packets that are not CTF (every packet magic in the buffer files
# zeroed): written, but incomplete: status 3, said on stderr even with -q.
mkdir "$work/shm3"
coproc PROD { exec "$tracer" -s "$work/shm3" -t 1 -n 5000 -w; }
read -r line <&"${PROD[0]}"; [ "$line" = ready ] || fail "ctf_tracer: $line"
kill -USR1 "$PROD_PID"
read -r out <&"${PROD[0]}"
kill -9 "$PROD_PID"; wait "$PROD_PID" 2>/dev/null || true
python3 - "$work/shm3"/ctf.[0-9]* <<'PY'
import sys
for f in sys.argv[1:]:
    b = bytearray(open(f, 'rb').read())
    magic = bytes.fromhex('c11ffcc1')        # 0xC1FC1FC1, little-endian
    i = b.find(magic)
    while i >= 0:
        b[i:i + 4] = bytes(4)
        i = b.find(magic, i + 4)
    open(f, 'wb').write(b)
PY
run 3 "grb-crash -q, damaged packets" "$crash" -q "$work/shm3/ctf" "$work/x4"
empty out "grb-crash -q, damaged packets"
has err "the trace is incomplete: .* [1-9][0-9]* packets damaged" \
  "grb-crash -q, damaged packets"
note "grb-crash: damaged packets: status 3, on stderr even with -q"

# ---- examples --------------------------------------------------------
run 2 "shm_producer, 0 threads" "$producer" "$work/nosock" 0 10
has err "THREADS" "shm_producer, 0 threads"
run 2 "shm_producer, a misspelt option" "$producer" "$work/nosock" 1 10 --kil
has err "'--kil'" "shm_producer, a misspelt option"
run 2 "ctf_tracer -t 0" "$tracer" -o "$work/t0" -t 0
has err "-t: 1 to 64" "ctf_tracer -t 0"
if grep -q "give one of" "$work/err"; then
  fail "ctf_tracer -t 0 blames -o and -s: $(cat "$work/err")"
fi
run 2 "ctf_tracer, neither -o nor -s" "$tracer" -t 1
has err "give one of -o and -s" "ctf_tracer, neither -o nor -s"
# EVENTS per thread, and an app:state event every 64 (i % 64 == 0).
run 0 "ctf_tracer -o" "$tracer" -o "$work/t1" -t 3 -n 1000
has out "^written $((3 * (1000 + (1000 + 63) / 64))) discarded 0$" "ctf_tracer -o"
[ -s "$work/t1/metadata" ] || fail "ctf_tracer -o wrote no metadata"
run 2 "basic_threads, 0 threads" "$example" 0 10
has err "threads must be 1..1024" "basic_threads, 0 threads"
note "examples: bad command lines refused with status 2 and a reason"

echo "check_tools_audit: all checks passed"
