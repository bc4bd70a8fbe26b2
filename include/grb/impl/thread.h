/* SPDX-License-Identifier: MIT */
/*
 * grb/impl/thread.h - per-thread state the fast path reads: the current
 * CPU (from the rseq area glibc registers) and the nesting depth.
 */
#ifndef GRB_IMPL_THREAD_H
#define GRB_IMPL_THREAD_H

#include <stdint.h>

#include "grb/impl/atomic.h"
#include "grb/impl/compat.h"

#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define GRB_HAVE_RSEQ 1
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Deepest nesting of reservations on one thread: the thread itself plus
 * signal handlers that interrupt it between reserve and commit.  A
 * reservation beyond it is refused with -EBUSY and counted as lost.
 */
#define GRB_MAX_NESTING 4

struct grb_thread_state {
	unsigned int nesting;   /* open reservations on this thread */
	int cpu_override;       /* test hook; -1 when unset */
};

extern GRB_THREAD_LOCAL struct grb_thread_state grb__tls GRB_TLS_MODEL;

/* Out-of-line fallback when the rseq area is not registered. */
int grb__cpu_slow(void);

/*
 * The CPU this thread runs on now.  It may change right after the read;
 * grb never relies on it for correctness, only for locality.
 */
static inline int grb__cpu_read(void)
{
#ifdef GRB_HAVE_RSEQ
	const struct rseq *rs = (const struct rseq *)(void *)
		((char *)__builtin_thread_pointer() + __rseq_offset);
	/* cpu_id is negative when rseq registration failed (e.g. valgrind). */
	int32_t cpu = (int32_t)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);

	if (GRB_LIKELY(cpu >= 0))
		return cpu;
#endif
	return grb__cpu_slow();
}

#ifdef GRB_TEST_HOOKS
/* Test builds: grb_test_set_cpu() can make a thread "migrate". */
static inline int grb_cpu_current(void)
{
	int o = grb__tls.cpu_override;

	return o >= 0 ? o : grb__cpu_read();
}
#else
static inline int grb_cpu_current(void)
{
	return grb__cpu_read();
}
#endif

/*
 * Enter one level of reservation nesting.  A signal handler that runs
 * between the load and the store leaves the counter as it found it, so
 * the plain increment is signal-safe; the signal fences stop the compiler
 * from caching the counter across code a handler may interleave with.
 */
static inline int grb__nesting_enter(void)
{
	unsigned int n = grb__tls.nesting;

	if (GRB_UNLIKELY(n >= GRB_MAX_NESTING))
		return 0;
	grb__tls.nesting = n + 1;
	grb_signal_fence();
	return 1;
}

static inline void grb__nesting_exit(void)
{
	grb_signal_fence();
	grb__tls.nesting--;
}

/**
 * grb_test_set_cpu - override the CPU seen by this thread's fast paths.
 * @cpu: CPU number to report, or -1 to read the real CPU again.
 *
 * Only effective in code compiled with GRB_TEST_HOOKS defined before any
 * grb header; it lets a test move a thread to another buffer between
 * reserve and commit, as a migration would.
 * Context: the calling thread only.
 */
void grb_test_set_cpu(int cpu);

#ifdef __cplusplus
}
#endif

#endif /* GRB_IMPL_THREAD_H */
