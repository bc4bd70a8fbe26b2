/* SPDX-License-Identifier: MIT */
/*
 * tests/hooks/grb_test_hooks.h - the race-injection points and the CPU
 * override, for tests only.  Neither this header nor its library
 * (tests/hooks/hooks.c, linked into grb_hooked) is installed.
 *
 * Every step of reserve, commit, switch, delivery and the reader protocol
 * where another thread's action changes the outcome calls GRB_HOOK(point).
 * The installed headers define GRB_HOOK() as nothing (grb/impl/compat.h).
 * A hooked build force-includes this header before anything else (the
 * compiler's -include), so GRB_HOOK() calls the function a test installed
 * with grb_test_set_hook(), which may delay, yield or move the thread to
 * another CPU to widen the window; and GRB_CPU_OVERRIDE() lets
 * grb_test_set_cpu() make a thread "migrate" between reserve and commit.
 */
#ifndef GRB_TEST_HOOKS_H
#define GRB_TEST_HOOKS_H

#ifdef __cplusplus
extern "C" {
#endif

enum grb_hook_point {
	/* writer_inline.h grb_reserve(): position loaded, CAS not done. */
	GRB_HOOK_RESERVE_LOADED = 0,
	/* grb_reserve() / grb__reserve_slow(): CAS done, last_ts not stored,
	 * slot not entered. */
	GRB_HOOK_RESERVE_DONE,
	/* grb__overwrite_enter(): pushed, NOREF not cleared yet. */
	GRB_HOOK_ENTER_PUSHED,
	/* grb_commit(): before the commit add. */
	GRB_HOOK_COMMIT_BEFORE,
	/* grb_commit(): after the add, before a delivery it triggers. */
	GRB_HOOK_COMMIT_AFTER,
	/* reserve.c grb__reserve_slow(): next sub-buffer checked, no CAS yet. */
	GRB_HOOK_SLOW_CHECKED,
	/* switch.c grb__end_old(): close info stored, padding not committed. */
	GRB_HOOK_END_OLD,
	/* switch.c grb_buf_flush(): position loaded, CAS not done. */
	GRB_HOOK_FLUSH_LOADED,
	/* deliver.c grb__deliver(): metadata written, NOREF not set. */
	GRB_HOOK_DELIVER_META,
	/* deliver.c grb__deliver(): NOREF set, cc_sb not published. */
	GRB_HOOK_DELIVER_PUBLISH,
	/* overwrite.c grb__push_reader(): records read, CAS not done. */
	GRB_HOOK_PUSH_BEFORE_CAS,
	/* reader.c: delivery seen, swap not done. */
	GRB_HOOK_GET_DELIVERED,
	/* reader.c: swap done, claim not done. */
	GRB_HOOK_GET_SWAPPED,
	/* reader.c grb_reader_put_next() / put_subbuf(): before release. */
	GRB_HOOK_PUT_BEFORE,
	/* switch.c grb__discard(): sub-buffer closed, slot not committed. */
	GRB_HOOK_DISCARD_CLOSED,
	/* wait.c: a waiter found nothing, has not armed yet. */
	GRB_HOOK_WAIT_CHECKED,
	/* reader.c grb__live_prefix(): prefix checked, count not taken. */
	GRB_HOOK_LIVE_CHECKED,
	/* journal.c take_slot(): the slot's owner CASed and its entries
	 * cleared, its start not stored yet. */
	GRB_HOOK_JOURNAL_CLAIMED,
	/* deliver.c grb__deliver(): the lap marked counted, the slot's
	 * delivered total not stored yet. */
	GRB_HOOK_DELIVER_COUNTED,
	/* switch.c grb__discard(): journaled COMMITTING, slot not
	 * committed, not counted as discarded yet. */
	GRB_HOOK_DISCARD_COMMITTING,
	GRB_HOOK_COUNT
};

/* A torture test's hook; @arg is what it passed to grb_test_set_hook(). */
typedef void (*grb_hook_fn)(enum grb_hook_point point, void *arg);

/**
 * grb_test_set_hook - install (or, with NULL, remove) the hook called at
 * every injection point, process-wide.
 * Context: while no other thread runs grb code.
 */
void grb_test_set_hook(grb_hook_fn fn, void *arg);

/* The name of a hook point, for schedules printed by tests. */
const char *grb_hook_name(enum grb_hook_point point);

void grb_test_hook(enum grb_hook_point point);

/**
 * grb_test_set_cpu - override the CPU seen by this thread's fast paths.
 * @cpu: CPU number to report, or -1 to read the real CPU again.
 *
 * Lets a test move a thread to another buffer between reserve and commit,
 * as a migration would.
 * Context: the calling thread only.
 */
void grb_test_set_cpu(int cpu);

/* The CPU the fast path uses: the override when set, else @cpu. */
int grb_test_cpu(int cpu);

/**
 * grb_test_set_nr_cpus - the number of buffers per-CPU channels created
 * from now on get, instead of the possible CPUs' count.
 * @n: buffers, or 0 for the real count again.
 *
 * Lets a test merge more buffers than the machine has CPUs; their
 * writers pick a buffer with grb_test_set_cpu() and must take the atomic
 * path (no rseq section runs on a CPU that does not exist).
 * Context: while no other thread creates a channel.
 */
void grb_test_set_nr_cpus(int n);

/* The buffers of a per-CPU channel: the override when set, else @n. */
int grb_test_nr_cpus(int n);

#define GRB_HOOK(point) grb_test_hook(point)
#define GRB_CPU_OVERRIDE(cpu) grb_test_cpu(cpu)
#define GRB_NR_CPUS_OVERRIDE(n) grb_test_nr_cpus(n)

#ifdef __cplusplus
}
#endif

#endif /* GRB_TEST_HOOKS_H */
