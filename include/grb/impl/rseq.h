/* SPDX-License-Identifier: MIT */
/*
 * grb/impl/rseq.h - the restartable sequences of the per-CPU write path
 * (docs/design.md section 25).
 *
 * Each function below is one critical section on the calling thread's
 * rseq area, the one glibc registered (grb never registers its own).  A
 * section starts by checking that the thread runs on @cpu, and ends with
 * one committing instruction; if the kernel preempts, migrates or signals
 * the thread before that instruction retires, it resumes the thread at
 * the section's abort handler, and nothing was stored.  The fields the
 * kernel owns (cpu_id_start, cpu_id) are only read; the only field
 * written is rseq_cs, which points the kernel at the section's
 * descriptor.  No system call is made inside a section.
 *
 * Each returns GRB_RSEQ_OK when its store happened, GRB_RSEQ_FAIL when a
 * compare failed (nothing stored), GRB_RSEQ_ABORT when the section was
 * aborted or the thread is not on @cpu (nothing stored).
 *
 * Only x86-64 has the sections so far (GRB_RSEQ_ASM); elsewhere the
 * functions are absent and every channel takes the atomic path.
 */
#ifndef GRB_IMPL_RSEQ_H
#define GRB_IMPL_RSEQ_H

#include <stdint.h>

#include "grb/impl/atomic.h"
#include "grb/impl/compat.h"
#include "grb/impl/thread.h"

#if defined(GRB_HAVE_RSEQ) && defined(__x86_64__) && defined(RSEQ_SIG) && \
	!defined(GRB_NO_RSEQ_ASM)
#define GRB_RSEQ_ASM 1
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define GRB_RSEQ_OK    0
#define GRB_RSEQ_FAIL  1
#define GRB_RSEQ_ABORT 2

#ifdef GRB_RSEQ_ASM

#define GRB__STR2(x) #x
#define GRB__STR(x) GRB__STR2(x)

/*
 * After a section, whatever its outcome: clear rseq_cs.  The kernel reads
 * the descriptor it points to whenever it preempts the thread; left set,
 * it would outlive the code holding the descriptor if that code is
 * unloaded (a dlclose()d plugin carrying libgrb.a), and the kernel would
 * kill the thread with SIGSEGV.  (The kernel clears it on an abort, but
 * the CPU check leaves the section by a plain jump.)
 */
#define GRB__RSEQ_DONE(rs) \
	__atomic_store_n(&(rs)->rseq_cs, 0, __ATOMIC_RELAXED)

/* The calling thread's rseq area (glibc's __rseq_offset ABI). */
static inline struct rseq *grb__rseq_area(void)
{
	return (struct rseq *)(void *)
		((char *)__builtin_thread_pointer() + __rseq_offset);
}

/*
 * The descriptor (struct rseq_cs: version, flags, start, length of the
 * section up to the committing instruction included, abort address),
 * 32-byte aligned as the kernel requires; then the store of its address
 * into rseq_cs, which must come before the section's first instruction.
 * Local labels: 1 start, 2 just after the committing instruction,
 * 3 descriptor, 4 abort handler.  %rcx is the scratch register.
 */
#define GRB__RSEQ_ENTER \
	".pushsection __rseq_cs, \"aw\"\n\t" \
	".balign 32\n\t" \
	"3:\n\t" \
	".long 0x0, 0x0\n\t" \
	".quad 1f, (2f - 1f), 4f\n\t" \
	".popsection\n\t" \
	"leaq 3b(%%rip), %%rcx\n\t" \
	"movq %%rcx, %[rseq_cs]\n\t" \
	"1:\n\t" \
	"cmpl %[cpu], %[cpu_id]\n\t" \
	"jnz %l[aborted]\n\t"

/*
 * The abort handler, out of line: preceded by the signature the kernel
 * checks (the 4 bytes before the abort address; with the 3 bytes before
 * them they decode as one ud1 instruction, so a disassembler stays in
 * step), it leaves for the C label.
 */
#define GRB__RSEQ_ABORT_HANDLER \
	".pushsection __rseq_failure, \"ax\"\n\t" \
	".byte 0x0f, 0xb9, 0x3d\n\t" \
	".long " GRB__STR(RSEQ_SIG) "\n\t" \
	"4:\n\t" \
	"jmp %l[aborted]\n\t" \
	".popsection\n\t"

/*
 * The fast-path reservation: if blocked is 0 and *offset is @expect,
 * store @newv into *offset (a plain store: the committing instruction).
 *
 * @keep (a constant) leaves rseq_cs set when the store happened, for a
 * caller whose every path from there runs another section of the same
 * function, whose descriptor store replaces it and whose ends clear it
 * (grb_write_record(): the commit section).  Until then the descriptor
 * is one of the running code's own, so it cannot be unloaded under it;
 * and the kernel clears rseq_cs itself when it preempts or signals the
 * thread outside the section the descriptor names.
 */
static GRB_ALWAYS_INLINE int grb__rseq_reserve(struct rseq *rs, uint32_t cpu,
					       grb_atomic_u64 *blocked,
					       grb_atomic_u64 *offset,
					       uint64_t expect, uint64_t newv,
					       int keep)
{
	__asm__ goto(
		GRB__RSEQ_ENTER
		"cmpq $0, %[blocked]\n\t"
		"jnz %l[failed]\n\t"
		"cmpq %[expect], %[v]\n\t"
		"jnz %l[failed]\n\t"
		"movq %[newv], %[v]\n\t"
		"2:\n\t"
		GRB__RSEQ_ABORT_HANDLER
		/*
		 * The memory it touches, named, rather than a "memory"
		 * clobber: the compiler then keeps what it loaded from the
		 * buffer's handle in registers across the section.  No
		 * ordering is lost: the stores into the slot come after
		 * the branch on the section's outcome.
		 */
		: [rseq_cs] "+m" (rs->rseq_cs),
		  [v] "+m" (*(uint64_t *)(void *)offset)
		: [cpu_id] "m" (rs->cpu_id), [cpu] "r" (cpu),
		  [blocked] "m" (*(const uint64_t *)(const void *)blocked),
		  [expect] "r" (expect), [newv] "r" (newv)
		: "cc", "rcx"
		: aborted, failed);
	if (!keep)
		GRB__RSEQ_DONE(rs);
	return GRB_RSEQ_OK;
aborted:
	GRB__RSEQ_DONE(rs);
	return GRB_RSEQ_ABORT;
failed:
	GRB__RSEQ_DONE(rs);
	return GRB_RSEQ_FAIL;
}

/* A CPU-local add: *v += add, as one plain read-modify-write instruction
 * (not locked: the section excludes the other threads of this CPU). */
static GRB_ALWAYS_INLINE int grb__rseq_add(struct rseq *rs, uint32_t cpu,
					   grb_atomic_u64 *v, uint64_t add)
{
	__asm__ goto(
		GRB__RSEQ_ENTER
		"addq %[add], %[v]\n\t"
		"2:\n\t"
		GRB__RSEQ_ABORT_HANDLER
		:
		: [rseq_cs] "m" (rs->rseq_cs), [cpu_id] "m" (rs->cpu_id),
		  [cpu] "r" (cpu), [v] "m" (*(uint64_t *)(void *)v),
		  [add] "r" (add)
		: "memory", "cc", "rcx"
		: aborted);
	GRB__RSEQ_DONE(rs);
	return GRB_RSEQ_OK;
aborted:
	GRB__RSEQ_DONE(rs);
	return GRB_RSEQ_ABORT;
}

/*
 * A locked compare-and-swap of *v from @expect to @newv, issued only on
 * @cpu: the lock makes it atomic against other CPUs' locked operations,
 * the section against a plain section of this CPU that loaded *v before
 * it and stores after it (docs/design.md section 25.2).
 */
static GRB_ALWAYS_INLINE int grb__rseq_cas_locked(struct rseq *rs,
						  uint32_t cpu,
						  grb_atomic_u64 *v,
						  uint64_t expect,
						  uint64_t newv)
{
	__asm__ goto(
		"movq %[expect], %%rax\n\t"
		GRB__RSEQ_ENTER
		"lock; cmpxchgq %[newv], %[v]\n\t"
		"2:\n\t"
		"jnz %l[failed]\n\t"
		GRB__RSEQ_ABORT_HANDLER
		:
		: [rseq_cs] "m" (rs->rseq_cs), [cpu_id] "m" (rs->cpu_id),
		  [cpu] "r" (cpu), [v] "m" (*(uint64_t *)(void *)v),
		  [expect] "r" (expect), [newv] "r" (newv)
		: "memory", "cc", "rax", "rcx"
		: aborted, failed);
	GRB__RSEQ_DONE(rs);
	return GRB_RSEQ_OK;
aborted:
	GRB__RSEQ_DONE(rs);
	return GRB_RSEQ_ABORT;
failed:
	GRB__RSEQ_DONE(rs);
	return GRB_RSEQ_FAIL;
}

/* The CPU the kernel says this thread runs on, or -1 when its rseq
 * registration failed or was never made (valgrind). */
static inline int grb__rseq_cpu(const struct rseq *rs)
{
	return (int32_t)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
}

#endif /* GRB_RSEQ_ASM */

#ifdef __cplusplus
}
#endif

#endif /* GRB_IMPL_RSEQ_H */
