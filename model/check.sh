#!/usr/bin/env bash
# model/check.sh - check model/grb.pml with Spin: every property in both
# modes, and every mutant, which Spin must reject.
#
# Each line of the table is: name, expectation, kind (safety|progress),
# then the -D options for spin.  The expectation is "pass", or "fail" for a
# mutant (or a configuration where the property must not hold): the run
# passes only when Spin finds a counterexample.  "fail=REGEX" also requires
# the first error Spin reports (the violated assertion's text, "invalid end
# state" or "acceptance cycle") to match the extended regular expression,
# so that a mutant is rejected for the reason it is there to show.
#
# The checks run GRB_MODEL_JOBS (default 2) at a time; results print in
# table order.  An optional argument runs only the checks whose name
# contains it.
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
  "loss-reachable-ovw  fail=n_full safety -DOVERWRITE=1 -DEXPECT_NO_LOSS"
  "loss-reachable-dis  fail=n_full safety -DOVERWRITE=0 -DEXPECT_NO_LOSS"
  "progress-overwrite  pass progress -DOVERWRITE=1"
  "progress-discard    pass progress -DOVERWRITE=0"
  "mutant-no-cas       fail=n_ok==|owner\\[|reading\\[ safety -DOVERWRITE=1 -DMUTANT_NO_CAS"
  "mutant-deliver-early fail=invalid|tag\\[ safety -DOVERWRITE=0 -DMUTANT_DELIVER_EARLY"
  "mutant-no-noref     fail=tag\\[ safety -DOVERWRITE=1 -DMUTANT_NO_NOREF_CLEAR"
  "mutant-enter-no-push fail=invalid safety -DOVERWRITE=1 -DMUTANT_ENTER_NO_PUSH"
  "laps-overwrite      pass safety   -DOVERWRITE=1 -DSBSIZE=2 -DSIZE_B=1"
  "mutant-push-count   fail=n_ok== safety -DOVERWRITE=1 -DSBSIZE=2 -DSIZE_B=1 -DMUTANT_PUSH_COUNTS_ALWAYS"
  "mutant-claim-no-cas fail=n_ok== safety -DOVERWRITE=1 -DSBSIZE=2 -DSIZE_B=1 -DMUTANT_CLAIM_NO_CAS"
  "mutant-no-full      fail=n_ok== safety -DOVERWRITE=0 -DMUTANT_NO_FULL_CHECK"
  "mutant-stale-refuse fail=n_full safety -DOVERWRITE=0 -DMUTANT_STALE_REFUSAL -DEXPECT_NO_LOSS -DNSB=4 -DSBSIZE=8"
  "mutant-no-final-flush fail=n_ok== safety -DOVERWRITE=0 -DMUTANT_NO_FINAL_FLUSH"
  "mutant-wait-wrap    fail=acceptance progress -DOVERWRITE=1 -DMUTANT_WAIT_WRAP"
  # grb_try_discard_reserve: the second writer discards, then writes again.
  "try-discard-ovw     pass safety   -DOVERWRITE=1 -DTRY_DISCARD=1"
  "try-discard-dis     pass safety   -DOVERWRITE=0 -DTRY_DISCARD=1"
  "mutant-discard-no-close fail=disc\\[ safety -DOVERWRITE=0 -DTRY_DISCARD=1 -DMUTANT_DISCARD_NO_CLOSE"
  # Timestamps: ghost clock, last_ts, the full-timestamp rule.
  "timestamps-ovw      pass safety   -DOVERWRITE=1 -DTIMESTAMPS=1"
  "timestamps-dis      pass safety   -DOVERWRITE=0 -DTIMESTAMPS=1"
  "mutant-clock-first  fail=rt>=tprev safety -DOVERWRITE=0 -DTIMESTAMPS=1 -DMUTANT_CLOCK_BEFORE_LOAD"
  "mutant-no-full-open fail=rfull safety -DOVERWRITE=1 -DTIMESTAMPS=1 -DMUTANT_NO_FULL_ON_OPEN"
  # Discard and timestamps together (no nested writer, no header-only
  # flush, to stay exhaustive): the new discard keeps every timestamp
  # check, moving the position back (the old design) breaks them.
  "discard-ts-dis      pass safety   -DOVERWRITE=0 -DTRY_DISCARD=1 -DTIMESTAMPS=1 -DNESTED=0 -DFLUSH_EMPTY=0"
  "mutant-discard-rollback fail=rfull|rt>=tprev|tprev>> safety -DOVERWRITE=0 -DTRY_DISCARD=1 -DTIMESTAMPS=1 -DNESTED=0 -DFLUSH_EMPTY=0 -DMUTANT_DISCARD_ROLLBACK"
  # Nesting counters, with a reservation committed on another thread.
  "handoff-ovw         pass safety   -DOVERWRITE=1 -DHANDOFF=1"
  "handoff-dis         pass safety   -DOVERWRITE=0 -DHANDOFF=1"
  "handoff-refusal     fail=n_nest safety -DOVERWRITE=1 -DHANDOFF=1 -DMAXNEST=1 -DNESTED=0 -DEXPECT_NO_LOSS -DNSB=4 -DSBSIZE=8"
  "mutant-nest-committer fail=entered\\[0\\] safety -DOVERWRITE=1 -DHANDOFF=1 -DMUTANT_NEST_COMMITTER"
  "mutant-nest-one-word fail=entered\\[1\\] safety -DOVERWRITE=1 -DHANDOFF=1 -DMUTANT_NEST_ONE_WORD"
  # Pinned reads (get_subbuf/put_subbuf) beside the consuming ones.
  "pinned-ovw          pass safety   -DOVERWRITE=1 -DPINNED=1"
  "pinned-laps-ovw     pass safety   -DOVERWRITE=1 -DPINNED=1 -DSBSIZE=2 -DSIZE_B=1"
  "pinned-laps-dis     pass safety   -DOVERWRITE=0 -DPINNED=1 -DSBSIZE=2 -DSIZE_B=1"
  "pinned-ts-ovw       pass safety   -DOVERWRITE=1 -DPINNED=1 -DTIMESTAMPS=1 -DFLUSH_EMPTY=0"
  "mutant-put-no-cas   fail=tag\\[ safety -DOVERWRITE=1 -DPINNED=1 -DMUTANT_PUT_NO_CAS"
  "mutant-put-lose-pin fail=id_idx safety -DOVERWRITE=1 -DPINNED=1 -DMUTANT_PUT_LOSE_PIN"
  "mutant-pin-undelivered fail=pos\\+k safety -DOVERWRITE=0 -DPINNED=1 -DSBSIZE=2 -DSIZE_B=1 -DMUTANT_PIN_UNDELIVERED"
  # The wake-up (WAIT): a waiting reader is never left asleep with
  # something to read.  With the flusher but without the nested writer or
  # the header-only flush; then with the nested writer and many laps but
  # no flusher, where writers push the waiting reader on (overwrite) or
  # are refused (discard).  A lost wake-up is an invalid end state.
  "wait-ovw            pass safety   -DOVERWRITE=1 -DWAIT=1 -DNESTED=0 -DFLUSH_EMPTY=0"
  "wait-dis            pass safety   -DOVERWRITE=0 -DWAIT=1 -DNESTED=0 -DFLUSH_EMPTY=0"
  "wait-laps-ovw       pass safety   -DOVERWRITE=1 -DWAIT=1 -DSBSIZE=2 -DSIZE_B=1 -DFLUSHER=0"
  "wait-laps-dis       pass safety   -DOVERWRITE=0 -DWAIT=1 -DSBSIZE=2 -DSIZE_B=1 -DFLUSHER=0"
  "mutant-arm-after-check fail=invalid safety -DOVERWRITE=1 -DWAIT=1 -DNESTED=0 -DFLUSH_EMPTY=0 -DMUTANT_ARM_AFTER_CHECK"
  "mutant-wake-before-publish fail=invalid safety -DOVERWRITE=0 -DWAIT=1 -DNESTED=0 -DFLUSH_EMPTY=0 -DMUTANT_WAKE_BEFORE_PUBLISH"
  # The live read (LIVE, discard mode): at full scope, and with a discard
  # (no nested writer).  src/reader.c grb__live_prefix() loaded cc_sb
  # after the second load of offset until Spin rejected that order
  # (mutant-live-late-cc-sb); C and model now load it before the counter.
  # live-in-overwrite shows why overwrite mode refuses the live read.
  "live-dis            pass safety   -DOVERWRITE=0 -DLIVE=1"
  "live-discard-dis    pass safety   -DOVERWRITE=0 -DLIVE=1 -DTRY_DISCARD=1 -DNESTED=0"
  "mutant-live-no-recheck fail=owner\\[|tag\\[ safety -DOVERWRITE=0 -DLIVE=1 -DMUTANT_LIVE_NO_RECHECK"
  "mutant-live-late-cc-sb fail=lrr==lrec safety -DOVERWRITE=0 -DLIVE=1 -DMUTANT_LIVE_LATE_CC_SB"
  "live-in-overwrite   fail=reading\\[ safety -DOVERWRITE=1 -DLIVE=1 -DLIVE_IN_OVERWRITE -DNESTED=0 -DSBSIZE=3 -DNREC=2 -DFLUSH_EMPTY=0"
  # Both (no flusher: finalize still flushes): the reader waits for one
  # live record past those it read, which only a commit's wake delivers.
  "wait-live-dis       pass safety   -DOVERWRITE=0 -DWAIT=1 -DLIVE=1 -DFLUSHER=0"
  "mutant-no-commit-wake fail=invalid safety -DOVERWRITE=0 -DWAIT=1 -DLIVE=1 -DFLUSHER=0 -DMUTANT_NO_COMMIT_WAKE"
  # The wake-up on a per-CPU (rseq) buffer: the committer's store to
  # cc_local may sit in CPU 0's store buffer past its load of the bit;
  # the reader's membarrier after arming (arm_fence) drains it.
  "rseq-live-dis       pass safety   -DOVERWRITE=0 -DLIVE=1 -DRSEQ=1 -DRSEQ_NMIG=1 -DNESTED=0"
  "rseq-wait-live-dis  pass safety   -DOVERWRITE=0 -DWAIT=1 -DLIVE=1 -DFLUSHER=0 -DRSEQ=1 -DRSEQ_NMIG=1"
  "mutant-rseq-no-arm-fence fail=invalid safety -DOVERWRITE=0 -DWAIT=1 -DLIVE=1 -DFLUSHER=0 -DRSEQ=1 -DRSEQ_NMIG=1 -DMUTANT_RSEQ_NO_ARM_FENCE"
  # The per-CPU write path (RSEQ, design.md section 25): critical
  # sections on CPU 0, the remote protocol, local and remote commits with
  # CPU 0's store buffer, the claim.  Writer 1's thread, with the nested
  # writer, migrates once (the flusher then only closes); or writer 2's
  # twice, away and back (no nested writer, 1-byte records so that the
  # fast path occurs, the header-only flush); the discard (no flusher:
  # the migrated writer's discard is the remote operation); liveness
  # with one migration.  Each mutant drops one step of the protocol; all
  # but one run in the liveness run's scope (the slow path's CAS needs
  # the nested writer's fast path beside it).
  "rseq-ovw            pass safety   -DOVERWRITE=1 -DRSEQ=1 -DFLUSH_EMPTY=0 -DRSEQ_NMIG=1"
  "rseq-dis            pass safety   -DOVERWRITE=0 -DRSEQ=1 -DFLUSH_EMPTY=0 -DRSEQ_NMIG=1 -DRSEQ_FLUSH0=1"
  "rseq-mig-dis        pass safety   -DOVERWRITE=0 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DRSEQ_MIG=2"
  "rseq-try-discard-dis pass safety  -DOVERWRITE=0 -DRSEQ=1 -DTRY_DISCARD=1 -DFLUSHER=0 -DRSEQ_MIG=2"
  "rseq-progress-dis   pass progress -DOVERWRITE=0 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DFLUSH_EMPTY=0 -DRSEQ_MIG=2 -DRSEQ_NMIG=1"
  # A writer on CPU 0 that gives up retrying its sections (a debugger
  # single-stepping it) and takes the remote forms.
  "rseq-giveup-dis     pass safety   -DOVERWRITE=0 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DRSEQ_MIG=2 -DRSEQ_GIVEUP=1"
  "rseq-giveup-ovw     pass safety   -DOVERWRITE=1 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DRSEQ_MIG=2 -DRSEQ_GIVEUP=1"
  "mutant-rseq-no-abort fail=n_ok== safety -DOVERWRITE=0 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DFLUSH_EMPTY=0 -DRSEQ_MIG=2 -DRSEQ_NMIG=1 -DMUTANT_RSEQ_NO_ABORT"
  "mutant-rseq-no-blocked-check fail=n_ok== safety -DOVERWRITE=0 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DFLUSH_EMPTY=0 -DRSEQ_MIG=2 -DRSEQ_NMIG=1 -DMUTANT_RSEQ_NO_BLOCKED_CHECK"
  "mutant-rseq-remote-no-membarrier fail=n_ok== safety -DOVERWRITE=0 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DFLUSH_EMPTY=0 -DRSEQ_MIG=2 -DRSEQ_NMIG=1 -DMUTANT_RSEQ_REMOTE_NO_MEMBARRIER"
  "mutant-rseq-commit-no-membarrier fail=invalid safety -DOVERWRITE=0 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DFLUSH_EMPTY=0 -DRSEQ_MIG=2 -DRSEQ_NMIG=1 -DMUTANT_RSEQ_COMMIT_NO_MEMBARRIER"
  "mutant-rseq-no-claim fail=dlv\\[ safety -DOVERWRITE=0 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DFLUSH_EMPTY=0 -DRSEQ_MIG=2 -DRSEQ_NMIG=1 -DMUTANT_RSEQ_NO_CLAIM"
  "mutant-rseq-migrated-local fail=invalid safety -DOVERWRITE=0 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DFLUSH_EMPTY=0 -DRSEQ_MIG=2 -DRSEQ_NMIG=1 -DMUTANT_RSEQ_MIGRATED_LOCAL"
  "mutant-rseq-slow-plain-cas fail=owner\\[ safety -DOVERWRITE=0 -DRSEQ=1 -DFLUSH_EMPTY=0 -DRSEQ_NMIG=1 -DRSEQ_MIG=2 -DMUTANT_RSEQ_SLOW_PLAIN_CAS"
  # grb_write_record() (EARLY_ENTER, design.md section 25.9): every
  # writer's fast path reads the slot's id before its reservation, on
  # the atomic path and on the per-CPU path; with one sub-buffer
  # (NSB=1, 1-byte records) a lap's opener and a second writer share a
  # sub-buffer whose previous lap the reader may still swap out.  A
  # mutant per new step: no NOREF test, and a ph read early kept for a
  # reservation made elsewhere afterwards.
  "early-ovw           pass safety   -DOVERWRITE=1 -DEARLY_ENTER=1"
  "early-one-sb-ovw    pass safety   -DOVERWRITE=1 -DEARLY_ENTER=1 -DNSB=1 -DSIZE_B=1"
  "early-dis           pass safety   -DOVERWRITE=0 -DEARLY_ENTER=1"
  "early-progress-ovw  pass progress -DOVERWRITE=1 -DEARLY_ENTER=1"
  "rseq-early-ovw      pass safety   -DOVERWRITE=1 -DEARLY_ENTER=1 -DRSEQ=1 -DFLUSH_EMPTY=0 -DRSEQ_NMIG=1"
  "rseq-early-one-sb-ovw pass safety -DOVERWRITE=1 -DEARLY_ENTER=1 -DRSEQ=1 -DNSB=1 -DSIZE_B=1 -DNESTED=0 -DRSEQ_MIG=2"
  "mutant-early-no-noref fail=tag\\[ safety -DOVERWRITE=1 -DEARLY_ENTER=1 -DNSB=1 -DSIZE_B=1 -DMUTANT_EARLY_NO_NOREF"
  "mutant-early-keep-ph fail=owner\\[ safety -DOVERWRITE=1 -DEARLY_ENTER=1 -DMUTANT_EARLY_KEEP_PH"
  "mutant-rseq-early-no-noref fail=tag\\[ safety -DOVERWRITE=1 -DEARLY_ENTER=1 -DRSEQ=1 -DNSB=1 -DSIZE_B=1 -DNESTED=0 -DRSEQ_MIG=2 -DMUTANT_EARLY_NO_NOREF"
  "mutant-rseq-early-keep-ph fail=owner\\[|tag\\[ safety -DOVERWRITE=1 -DEARLY_ENTER=1 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DRSEQ_MIG=2 -DMUTANT_EARLY_KEEP_PH"
)

# GRB_MODEL_LONG=1 adds larger runs: two records per writer (about 10^8
# states), discard with timestamps in overwrite mode (3 x 10^7) and at
# full scope in discard mode (1.4 x 10^8 states, about 9 GB, 6 minutes);
# the wake-up with the flusher and the nested writer (1-2 x 10^7), the
# wake-up and the live read together with the flusher (4 x 10^7), and
# the live read with a discard at full scope (2 x 10^7).  RSEQ: at full
# scope (writer 1 migrating away and back, the header-only flush; 5.5 x
# 10^7 and 3.1 x 10^7), writer 2 migrating in overwrite mode, the discard
# in overwrite mode, the sum's loads in the other order, liveness in
# overwrite mode (each 10^7 or less), and with timestamps, the hand-off
# and pinned reads (7.1, 7.3 and 3.5 x 10^7, about 4 GB, 5 minutes each).
if [ "${GRB_MODEL_LONG:-0}" = 1 ]; then
  checks+=(
    "overwrite-2rec      pass safety   -DOVERWRITE=1 -DNREC=2"
    "discard-ts-ovw      pass safety   -DOVERWRITE=1 -DTRY_DISCARD=1 -DTIMESTAMPS=1 -DNESTED=0 -DFLUSH_EMPTY=0"
    "discard-ts-full-dis pass safety   -DOVERWRITE=0 -DTRY_DISCARD=1 -DTIMESTAMPS=1"
    "wait-nested-ovw     pass safety   -DOVERWRITE=1 -DWAIT=1 -DFLUSH_EMPTY=0"
    "wait-nested-dis     pass safety   -DOVERWRITE=0 -DWAIT=1 -DFLUSH_EMPTY=0"
    "wait-live-flush-dis pass safety   -DOVERWRITE=0 -DWAIT=1 -DLIVE=1 -DNESTED=0 -DFLUSH_EMPTY=0"
    "live-discard-full-dis pass safety -DOVERWRITE=0 -DLIVE=1 -DTRY_DISCARD=1"
    "rseq-giveup-nested-ovw pass safety -DOVERWRITE=1 -DRSEQ=1 -DFLUSH_EMPTY=0 -DRSEQ_NMIG=1 -DRSEQ_GIVEUP=1"
    "rseq-giveup-nested-dis pass safety -DOVERWRITE=0 -DRSEQ=1 -DFLUSH_EMPTY=0 -DRSEQ_NMIG=1 -DRSEQ_FLUSH0=1 -DRSEQ_GIVEUP=1"
    "rseq-full-ovw       pass safety   -DOVERWRITE=1 -DRSEQ=1"
    "rseq-full-dis       pass safety   -DOVERWRITE=0 -DRSEQ=1"
    "rseq-mig-ovw        pass safety   -DOVERWRITE=1 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DRSEQ_MIG=2"
    "rseq-try-discard-ovw pass safety  -DOVERWRITE=1 -DRSEQ=1 -DTRY_DISCARD=1 -DFLUSHER=0 -DRSEQ_MIG=2"
    "rseq-cc-first-dis   pass safety   -DOVERWRITE=0 -DRSEQ=1 -DFLUSH_EMPTY=0 -DRSEQ_NMIG=1 -DRSEQ_CC_FIRST"
    "rseq-progress-ovw   pass progress -DOVERWRITE=1 -DRSEQ=1 -DNESTED=0 -DSIZE_B=1 -DFLUSH_EMPTY=0 -DRSEQ_MIG=2 -DRSEQ_NMIG=1"
    "rseq-ts-dis         pass safety   -DOVERWRITE=0 -DRSEQ=1 -DTIMESTAMPS=1 -DNESTED=0 -DSIZE_B=1 -DRSEQ_MIG=2"
    "rseq-handoff-ovw    pass safety   -DOVERWRITE=1 -DRSEQ=1 -DHANDOFF=1 -DFLUSH_EMPTY=0 -DRSEQ_NMIG=1"
    "rseq-pinned-ovw     pass safety   -DOVERWRITE=1 -DRSEQ=1 -DPINNED=1 -DNESTED=0 -DSIZE_B=1 -DRSEQ_MIG=2"
  )
fi

model=grb.pml
label=model
# shellcheck source=model/runner.sh
source "$here/runner.sh"
