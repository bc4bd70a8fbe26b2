#!/usr/bin/env bash
# model/recovery.sh - check model/recovery.pml (recovering a sub-buffer
# dead writers left incomplete) with Spin: every configuration must pass,
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
  # One death: the model asserts that the candidates are exactly the
  # missing pieces, so the subset rule and damaging every candidate
  # unchecked (no-guard) are the same rule there.
  "one-death           pass safety "
  "one-death-2rec      pass safety -DNREC=2"
  "one-death-3w        pass safety -DNW=3"
  "no-guard            pass safety -DSUBSET_RULE=0"
  # Two deaths: a dead entry may be stale (committed before its NONE, or
  # a failed CAS), so the candidates can exceed the missing bytes; the
  # subset rule still recovers every lap, damaging committed bytes only
  # as counted ambiguous loss.
  "two-deaths          pass safety -DMAXDEAD=2"
  "two-deaths-2rec     pass safety -DMAXDEAD=2 -DNREC=2"
  "two-deaths-3w       pass safety -DMAXDEAD=2 -DNW=3"
  # Each recovery path is reached (else a pass above would prove little):
  # a lap recovered, a complete lap delivered for its dead committer, a
  # dead closer's missing data_size, a dead TENTATIVE entry recovered, a
  # lap the old sum rule stalled on recovered exactly, an ambiguous lap
  # that costs committed bytes, a TENTATIVE entry pruned.
  "reach-recover       fail=^[^(]*0 safety -DNREC=2 -DREACH_RECOVER"
  "reach-finish        fail=^[^(]*0 safety -DNREC=2 -DREACH_FINISH"
  "reach-no-close      fail=close_pos safety -DNREC=2 -DREACH_NO_CLOSE"
  "reach-tentative     fail=tentdead safety -DNREC=2 -DREACH_TENTATIVE"
  "reach-decided       fail=amb\\|\\|\\(sum==m safety -DMAXDEAD=2 -DREACH_DECIDED"
  "reach-ambiguous     fail=amb.*mask&1 safety -DMAXDEAD=2 -DNREC=2 -DREACH_AMBIGUOUS"
  "reach-prune         fail=^[^(]*0 safety -DNREC=2 -DREACH_PRUNE"
  # Mutants.  Without the subset rule the journal mutants let recovery
  # complete a lap a live writer holds (property 3); with it, Spin shows
  # the same mistake as a stall, or, for ignored tentative entries, as a
  # lap delivered twice (the finalizer's close, TENTATIVE to the end as a
  # flush's in C, is missed).
  "mutant-entry-after-cas   fail=dead\\[\\(own safety -DNW=3 -DSUBSET_RULE=0 -DMUTANT_ENTRY_AFTER_CAS"
  "mutant-entry-after-cas-g fail=invalid safety -DMUTANT_ENTRY_AFTER_CAS"
  "mutant-ignore-tentative  fail=dead\\[\\(own safety -DNW=3 -DSUBSET_RULE=0 -DMUTANT_IGNORE_TENTATIVE"
  "mutant-ignore-tentative-g fail=sb_b\\[ds\\]<tb safety -DMUTANT_IGNORE_TENTATIVE"
  "mutant-ignore-liveness   fail=dead\\[\\(own safety -DMUTANT_IGNORE_LIVENESS"
  "mutant-final-no-journal  fail=dead\\[\\(own safety -DNW=3 -DMUTANT_FINAL_NO_JOURNAL"
  "mutant-recover-open      fail=tag\\[ safety -DSUBSET_RULE=0 -DMUTANT_RECOVER_OPEN"
  "mutant-pos-in-range      fail=mask>>k safety -DNREC=2 -DSUBSET_RULE=0 -DMUTANT_POS_IN_RANGE"
  "mutant-pos-in-range-g    fail=invalid safety -DNREC=2 -DMUTANT_POS_IN_RANGE"
  "mutant-none-before-deliver fail=sb_b\\[ds\\]<tb safety -DNREC=2 -DMUTANT_NONE_BEFORE_DELIVER"
  "mutant-no-finish-delivery fail=invalid safety -DNREC=2 -DMUTANT_NO_FINISH_DELIVERY"
  "mutant-no-recovery       fail=invalid safety -DMUTANT_NO_RECOVERY"
  "mutant-no-damage-mask    fail=bad\\[ safety -DMUTANT_NO_DAMAGE_MASK"
  "mutant-damage-whole      fail=g_dmgc==n_amb safety -DMUTANT_DAMAGE_WHOLE"
  "mutant-no-damage-recs    fail=n_ok== safety -DMUTANT_NO_DAMAGE_RECS"
  # Mutants of the subset rule and of the journal states behind it.
  # Damaging every candidate, or the first match when there are several,
  # destroys committed bytes it does not count (property 2); not forcing
  # OWNED records makes a lap ambiguous that is not (property 5); storing
  # OWNED before a closer's padding is committed makes a piece the rule
  # skips as committed one that is not, storing COMMITTING after the add
  # makes a forced piece one that may be committed, and pruning a
  # TENTATIVE entry that ends at offset drops one whose CAS succeeded
  # (property 6).
  "mutant-all-candidates    fail=g_dmgc==n_amb safety -DMAXDEAD=2 -DSUBSET_RULE=0"
  "mutant-subset-not-unique fail=g_dmgc==n_amb safety -DMAXDEAD=2 -DNREC=2 -DMUTANT_SUBSET_NOT_UNIQUE"
  "mutant-no-forced-owned   fail=nunk>=2 safety -DMAXDEAD=2 -DNREC=2 -DMUTANT_NO_FORCED_OWNED"
  "mutant-owned-before-padding fail=own\\[\\(lo.*!=\\(q\\+1 safety -DNREC=2 -DMUTANT_OWNED_BEFORE_PADDING"
  "mutant-committing-after-add fail=own\\[\\(lo.*==\\(q\\+1 safety -DMUTANT_COMMITTING_AFTER_ADD"
  "mutant-prune-at-end      fail=own\\[\\(p.*!=\\(q\\+1 safety -DNREC=2 -DMUTANT_PRUNE_AT_END"
)

model=recovery.pml
label="recovery model"
# shellcheck source=model/runner.sh
source "$here/runner.sh"
