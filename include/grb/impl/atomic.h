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
 * The wrapper is C11 <stdatomic.h>.  C++ (any standard from C++11) gets
 * the same word and the same orders through the compiler's __atomic
 * builtins, below, so public headers compile as C and as C++.
 */
#ifndef GRB_IMPL_ATOMIC_H
#define GRB_IMPL_ATOMIC_H

#include <stdint.h>

#ifdef __cplusplus

/*
 * C++ before C++23 has no <stdatomic.h>.  A C++ translation unit sees the
 * same 8-byte, 8-aligned word as a plain member operated on with the
 * compiler's __atomic builtins, which are what GCC and Clang implement
 * C11's atomics with: the same instructions on the same memory, and a
 * trivial type (no constructor, so thread-local and shared-memory
 * structures that hold one stay plain data).
 */
struct grb_atomic_word {
	alignas(8) uint64_t v;
};
typedef struct grb_atomic_word grb_atomic_u64;

static_assert(sizeof(grb_atomic_u64) == 8 && alignof(grb_atomic_u64) == 8,
	      "grb_atomic_u64 must match the C11 layout");

static inline uint64_t grb_load_relaxed(const grb_atomic_u64 *p)
{
	return __atomic_load_n(&p->v, __ATOMIC_RELAXED);
}

static inline uint64_t grb_load_acquire(const grb_atomic_u64 *p)
{
	return __atomic_load_n(&p->v, __ATOMIC_ACQUIRE);
}

static inline void grb_store_relaxed(grb_atomic_u64 *p, uint64_t v)
{
	__atomic_store_n(&p->v, v, __ATOMIC_RELAXED);
}

static inline void grb_store_release(grb_atomic_u64 *p, uint64_t v)
{
	__atomic_store_n(&p->v, v, __ATOMIC_RELEASE);
}

static inline int grb_cas_acq_rel(grb_atomic_u64 *p, uint64_t *expected,
				  uint64_t desired)
{
	return __atomic_compare_exchange_n(&p->v, expected, desired, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static inline uint64_t grb_fetch_add_relaxed(grb_atomic_u64 *p, uint64_t v)
{
	return __atomic_fetch_add(&p->v, v, __ATOMIC_RELAXED);
}

static inline uint64_t grb_fetch_add_acq_rel(grb_atomic_u64 *p, uint64_t v)
{
	return __atomic_fetch_add(&p->v, v, __ATOMIC_ACQ_REL);
}

static inline uint64_t grb_fetch_or_relaxed(grb_atomic_u64 *p, uint64_t v)
{
	return __atomic_fetch_or(&p->v, v, __ATOMIC_RELAXED);
}

static inline uint64_t grb_fetch_or_release(grb_atomic_u64 *p, uint64_t v)
{
	return __atomic_fetch_or(&p->v, v, __ATOMIC_RELEASE);
}

static inline uint64_t grb_fetch_and_relaxed(grb_atomic_u64 *p, uint64_t v)
{
	return __atomic_fetch_and(&p->v, v, __ATOMIC_RELAXED);
}

static inline uint64_t grb_load_seq_cst(const grb_atomic_u64 *p)
{
	return __atomic_load_n(&p->v, __ATOMIC_SEQ_CST);
}

static inline void grb_store_seq_cst(grb_atomic_u64 *p, uint64_t v)
{
	__atomic_store_n(&p->v, v, __ATOMIC_SEQ_CST);
}

static inline uint64_t grb_fetch_add_seq_cst(grb_atomic_u64 *p, uint64_t v)
{
	return __atomic_fetch_add(&p->v, v, __ATOMIC_SEQ_CST);
}

static inline uint64_t grb_fetch_or_seq_cst(grb_atomic_u64 *p, uint64_t v)
{
	return __atomic_fetch_or(&p->v, v, __ATOMIC_SEQ_CST);
}

static inline uint64_t grb_fetch_and_seq_cst(grb_atomic_u64 *p, uint64_t v)
{
	return __atomic_fetch_and(&p->v, v, __ATOMIC_SEQ_CST);
}

static inline void grb_signal_fence(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

#else /* C11 */

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

static inline uint64_t grb_load_seq_cst(const grb_atomic_u64 *p)
{
	return atomic_load_explicit((grb_atomic_u64 *)p, memory_order_seq_cst);
}

static inline void grb_store_seq_cst(grb_atomic_u64 *p, uint64_t v)
{
	atomic_store_explicit(p, v, memory_order_seq_cst);
}

static inline uint64_t grb_fetch_add_seq_cst(grb_atomic_u64 *p, uint64_t v)
{
	return atomic_fetch_add_explicit(p, v, memory_order_seq_cst);
}

static inline uint64_t grb_fetch_or_seq_cst(grb_atomic_u64 *p, uint64_t v)
{
	return atomic_fetch_or_explicit(p, v, memory_order_seq_cst);
}

static inline uint64_t grb_fetch_and_seq_cst(grb_atomic_u64 *p, uint64_t v)
{
	return atomic_fetch_and_explicit(p, v, memory_order_seq_cst);
}

/*
 * Orders memory accesses against a signal handler running on the same
 * thread; emits no instruction.
 */
static inline void grb_signal_fence(void)
{
	atomic_signal_fence(memory_order_seq_cst);
}

#endif /* __cplusplus */

#endif /* GRB_IMPL_ATOMIC_H */
