/* SPDX-License-Identifier: MIT */
/*
 * grb/impl/atomic.h - the one wrapper through which grb touches atomics.
 *
 * Every function name carries its memory order, so a reader of the ring
 * buffer code sees the ordering at each call site without looking it up.
 * All shared counters are 64-bit words: offsets are free-running byte
 * positions that must not wrap in a process lifetime, and one width keeps
 * the shared-memory layout identical for every reader.
 *
 * The wrapper is C11 <stdatomic.h>; C++ includes it through the C++23
 * <stdatomic.h> compatibility header, so the same layout compiles in both.
 */
#ifndef GRB_IMPL_ATOMIC_H
#define GRB_IMPL_ATOMIC_H

#include <stdint.h>
#include <stdatomic.h>

typedef _Atomic(uint64_t) grb_atomic_u64;

static inline uint64_t grb_load_relaxed(const grb_atomic_u64 *p)
{
	return atomic_load_explicit((grb_atomic_u64 *)p, memory_order_relaxed);
}

static inline uint64_t grb_load_acquire(const grb_atomic_u64 *p)
{
	return atomic_load_explicit((grb_atomic_u64 *)p, memory_order_acquire);
}

static inline void grb_store_relaxed(grb_atomic_u64 *p, uint64_t v)
{
	atomic_store_explicit(p, v, memory_order_relaxed);
}

static inline void grb_store_release(grb_atomic_u64 *p, uint64_t v)
{
	atomic_store_explicit(p, v, memory_order_release);
}

/*
 * Strong compare-and-swap; on failure *expected holds the current value.
 * There is no relaxed flavour: every CAS in grb hands memory from one
 * thread to another (a slot, a sub-buffer, the reader's spare).
 */
static inline int grb_cas_acq_rel(grb_atomic_u64 *p, uint64_t *expected,
				  uint64_t desired)
{
	return atomic_compare_exchange_strong_explicit(p, expected, desired,
			memory_order_acq_rel, memory_order_acquire);
}

static inline uint64_t grb_fetch_add_relaxed(grb_atomic_u64 *p, uint64_t v)
{
	return atomic_fetch_add_explicit(p, v, memory_order_relaxed);
}

static inline uint64_t grb_fetch_add_acq_rel(grb_atomic_u64 *p, uint64_t v)
{
	return atomic_fetch_add_explicit(p, v, memory_order_acq_rel);
}

static inline uint64_t grb_fetch_or_relaxed(grb_atomic_u64 *p, uint64_t v)
{
	return atomic_fetch_or_explicit(p, v, memory_order_relaxed);
}

static inline uint64_t grb_fetch_or_release(grb_atomic_u64 *p, uint64_t v)
{
	return atomic_fetch_or_explicit(p, v, memory_order_release);
}

static inline uint64_t grb_fetch_and_relaxed(grb_atomic_u64 *p, uint64_t v)
{
	return atomic_fetch_and_explicit(p, v, memory_order_relaxed);
}

static inline void grb_fence_seq_cst(void)
{
	atomic_thread_fence(memory_order_seq_cst);
}

/*
 * Orders memory accesses against a signal handler running on the same
 * thread; emits no instruction.
 */
static inline void grb_signal_fence(void)
{
	atomic_signal_fence(memory_order_seq_cst);
}

#endif /* GRB_IMPL_ATOMIC_H */
