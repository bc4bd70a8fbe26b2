/* SPDX-License-Identifier: MIT */
/*
 * grb/impl/thread.h - per-thread state the fast path reads: the current
 * CPU (from the rseq area glibc registers) and the nesting depth.
 */
#ifndef GRB_IMPL_THREAD_H
#define GRB_IMPL_THREAD_H

#include "grb/api.h"

#include <stddef.h>
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

/*
 * A thread's open reservations are entered - left_remote.  Only the thread
 * itself (and its signal handlers) writes `entered`: +1 when a reservation
 * starts, -1 when the thread commits or discards one of its own or reserve
 * refuses.  A thread that commits a context another thread reserved must
 * not touch that thread's plain counter (its increment could be lost
 * against the owner's own load and store), so it adds 1 to the owner's
 * left_remote instead, an atomic word no one else writes.  Both counters
 * only grow apart by the open count, so their difference is exact modulo
 * 2^64.
 */
struct grb_thread_state {
	uint64_t entered;
	grb_atomic_u64 left_remote;
};

extern GRB_API GRB_THREAD_LOCAL struct grb_thread_state grb__tls GRB_TLS_MODEL;

/* Out-of-line fallback when the rseq area is not registered. */
GRB_API int grb__cpu_slow(void);

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

/*
 * cpu_id as the kernel last wrote it, unchecked: negative (as unsigned,
 * huge) when the thread's rseq area is not registered, and -1 without
 * the rseq header.  The fast path checks it against its number of
 * buffers in one compare and leaves the rest to grb__cpu_index().
 */
static inline int grb__cpu_raw(void)
{
#ifdef GRB_HAVE_RSEQ
	const struct rseq *rs = (const struct rseq *)(void *)
		((char *)__builtin_thread_pointer() + __rseq_offset);

	return (int32_t)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
#else
	return -1;
#endif
}

/* Out of line (src/cpu.c): grb_cpu_current() if below n, else 0. */
GRB_API unsigned int grb__cpu_index(unsigned int n);

/* The CPU for the fast path (a test build may override it). */
static inline int grb_cpu_current(void)
{
	return GRB_CPU_OVERRIDE(grb__cpu_read());
}

/* Out of line: a commit of another thread's reservation (src/cpu.c). */
GRB_API void grb__nesting_exit_remote(struct grb_thread_state *owner);

/*
 * Enter one level of reservation nesting; returns the state to record in
 * the context as the reservation's owner, or NULL when the thread already
 * has GRB_MAX_NESTING reservations open.  A signal handler that runs
 * between the load and the store of `entered` leaves it as it found it
 * (its own reservations are committed before it returns, or handed to
 * another thread, which counts them in left_remote), so the plain
 * increment is signal-safe; the signal fences stop the compiler from
 * caching the counter across code a handler may interleave with.
 *
 * left_remote is read relaxed: the value only decides whether to refuse,
 * and a stale (smaller) value refuses a reservation that raced with the
 * remote commit that would have allowed it, as if the reservation had
 * come first.  A commit that happens before this reserve (a join, a
 * handshake) is seen, by coherence.
 */
static inline struct grb_thread_state *grb__nesting_enter(void)
{
	struct grb_thread_state *self = &grb__tls;
	uint64_t n = self->entered;

	/* The open count is n - left_remote, and left_remote <= n: it is
	 * at most n, so only an n at the limit needs the second load. */
	if (GRB_UNLIKELY(n >= GRB_MAX_NESTING) &&
	    n - grb_load_relaxed(&self->left_remote) >= GRB_MAX_NESTING)
		return NULL;
	self->entered = n + 1;
	grb_signal_fence();
	return self;
}

/* Leave the level a refused reservation entered (same thread). */
static inline void grb__nesting_undo(void)
{
	grb_signal_fence();
	grb__tls.entered--;
}

/*
 * Leave the level of a reservation owned by @owner, from whatever thread
 * commits or discards it: a plain decrement on the owner's own thread, an
 * atomic increment of the owner's left_remote on any other.
 */
static inline void grb__nesting_exit(struct grb_thread_state *owner)
{
	if (GRB_LIKELY(owner == &grb__tls)) {
		grb_signal_fence();
		owner->entered--;
	} else {
		grb__nesting_exit_remote(owner);
	}
}

#ifdef __cplusplus
}
#endif

#endif /* GRB_IMPL_THREAD_H */
