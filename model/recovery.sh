#!/usr/bin/env bash
# model/recovery.sh - check model/recovery.pml (recovering a sub-buffer a
# dead writer left incomplete) with Spin: every configuration must pass,
# every reachability probe and mutant must be rejected.
#
# Each line of the table is: name, expectation, kind (safety), then the
# -D options for spin (model/runner.sh runs them).  "pass" needs an exhaustive run with no error.  "fail" needs Spin
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
  "one-death           pass safety "
  "one-death-2rec      pass safety -DNREC=2"
  "one-death-3w        pass safety -DNW=3"
  "no-guard            pass safety -DSUM_GUARD=0"
  "no-guard-2rec       pass safety -DNREC=2 -DSUM_GUARD=0"
  "no-guard-3w         pass safety -DNW=3 -DSUM_GUARD=0"
  # Each recovery path is reached (else a pass above would prove little):
  # a lap recovered, a complete lap delivered for its dead committer, a
  # dead closer's missing data_size, a dead TENTATIVE entry recovered.
  "reach-recover       fail=^[^(]*0 safety -DNREC=2 -DREACH_RECOVER"
  "reach-finish        fail=^[^(]*0 safety -DNREC=2 -DREACH_FINISH"
  "reach-no-close      fail=close_pos safety -DNREC=2 -DREACH_NO_CLOSE"
  "reach-tentative     fail=tentdead safety -DNREC=2 -DREACH_TENTATIVE"
  # Two deaths: the dead ranges may exceed the missing bytes (a writer
  # that died after its commit, before clearing its entry): the rule must
  # wait forever, or damage committed bytes.
  "two-deaths-stall    fail=invalid safety -DMAXDEAD=2"
  "two-deaths-no-guard fail=mask>>k safety -DMAXDEAD=2 -DSUM_GUARD=0"
  # Mutants.  Without the sum guard the journal mutants let recovery
  # complete a lap a live writer holds (property 3); with it, Spin shows
  # the same mistake as a stall.
  "mutant-entry-after-cas   fail=dead\\[\\(own safety -DNW=3 -DSUM_GUARD=0 -DMUTANT_ENTRY_AFTER_CAS"
  "mutant-entry-after-cas-g fail=invalid safety -DMUTANT_ENTRY_AFTER_CAS"
  "mutant-ignore-tentative  fail=dead\\[\\(own safety -DNW=3 -DSUM_GUARD=0 -DMUTANT_IGNORE_TENTATIVE"
  "mutant-ignore-tentative-g fail=invalid safety -DMUTANT_IGNORE_TENTATIVE"
  "mutant-ignore-liveness   fail=dead\\[\\(own safety -DMUTANT_IGNORE_LIVENESS"
  "mutant-final-no-journal  fail=dead\\[\\(own safety -DNW=3 -DMUTANT_FINAL_NO_JOURNAL"
  "mutant-recover-open      fail=tag\\[ safety -DSUM_GUARD=0 -DMUTANT_RECOVER_OPEN"
  "mutant-pos-in-range      fail=mask>>k safety -DNREC=2 -DSUM_GUARD=0 -DMUTANT_POS_IN_RANGE"
  "mutant-pos-in-range-g    fail=invalid safety -DNREC=2 -DMUTANT_POS_IN_RANGE"
  "mutant-none-before-deliver fail=sb_b\\[ds\\]<tb safety -DNREC=2 -DMUTANT_NONE_BEFORE_DELIVER"
  "mutant-no-finish-delivery fail=invalid safety -DNREC=2 -DMUTANT_NO_FINISH_DELIVERY"
  "mutant-no-recovery       fail=invalid safety -DMUTANT_NO_RECOVERY"
  "mutant-no-damage-mask    fail=bad\\[ safety -DMUTANT_NO_DAMAGE_MASK"
  "mutant-damage-whole      fail=mask>>k safety -DMUTANT_DAMAGE_WHOLE"
  "mutant-no-damage-recs    fail=n_ok== safety -DMUTANT_NO_DAMAGE_RECS"
)

model=recovery.pml
label="recovery model"
# shellcheck source=model/runner.sh
source "$here/runner.sh"
