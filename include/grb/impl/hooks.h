/* SPDX-License-Identifier: MIT */
/*
 * grb/impl/hooks.h - named race-injection points.
 *
 * Every step of reserve, commit, switch, delivery and the reader protocol
 * where another thread's action changes the outcome has a hook.  In normal
 * builds GRB_HOOK() expands to nothing.  Code compiled with GRB_TEST_HOOKS
 * (the tests, and the grb_hooked library they link) calls the function a
 * torture test installed with grb_test_set_hook(), which may delay, yield
 * or move the thread to another CPU to widen the window.
 */
#ifndef GRB_IMPL_HOOKS_H
#define GRB_IMPL_HOOKS_H

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
	/* switch.c grb__reserve_slow(): next sub-buffer checked, no CAS yet. */
	GRB_HOOK_SLOW_CHECKED,
	/* switch.c grb__end_old(): close info stored, padding not committed. */
	GRB_HOOK_END_OLD,
	/* switch.c grb_buf_flush(): position loaded, CAS not done. */
	GRB_HOOK_FLUSH_LOADED,
	/* deliver.c grb__deliver(): metadata written, NOREF not set. */
	GRB_HOOK_DELIVER_META,
	/* deliver.c grb__deliver(): NOREF set, cc_sb not published. */
	GRB_HOOK_DELIVER_PUBLISH,
	/* deliver.c grb__push_reader(): records read, CAS not done. */
	GRB_HOOK_PUSH_BEFORE_CAS,
	/* reader.c: delivery seen, swap not done. */
	GRB_HOOK_GET_DELIVERED,
	/* reader.c: swap done, claim not done. */
	GRB_HOOK_GET_SWAPPED,
	/* reader.c grb_reader_put_next() / put_subbuf(): before release. */
	GRB_HOOK_PUT_BEFORE,
	/* switch.c grb__discard(): sub-buffer closed, slot not committed. */
	GRB_HOOK_DISCARD_CLOSED,
	GRB_HOOK_COUNT
};

/* A torture test's hook; @arg is what it passed to grb_test_set_hook(). */
typedef void (*grb_hook_fn)(enum grb_hook_point point, void *arg);

/**
 * grb_test_set_hook - install (or, with NULL, remove) the hook called at
 * every injection point, process-wide.
 * Context: while no other thread runs grb code.  Effective only in code
 * compiled with GRB_TEST_HOOKS.
 */
void grb_test_set_hook(grb_hook_fn fn, void *arg);

/* The name of a hook point, for schedules printed by tests. */
const char *grb_hook_name(enum grb_hook_point point);

void grb__hook(enum grb_hook_point point);

#ifdef GRB_TEST_HOOKS
#define GRB_HOOK(point) grb__hook(point)
#else
#define GRB_HOOK(point) ((void)0)
#endif

#ifdef __cplusplus
}
#endif

#endif /* GRB_IMPL_HOOKS_H */
