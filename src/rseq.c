/* SPDX-License-Identifier: MIT */
/*
 * src/rseq.c - the per-CPU (rseq) write path's out-of-line parts
 * (docs/design.md section 25): the decision at channel creation, the
 * membarrier that fences one CPU, the remote operations on the write
 * position, and the commits that do not complete on the buffer's CPU.
 * The sections themselves are in grb/impl/rseq.h, the inline fast path
 * that runs them in grb/impl/writer_inline.h.
 */
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine.h"
#include "grb/writer.h"
#include "grb/impl/rseq.h"

/*
 * How many times in a row the slow paths run a section on the buffer's
 * CPU before they take the remote form.  A section aborts when its thread
 * is preempted, migrated or signalled in it, which a retry gets past; but
 * a debugger single-stepping the thread stops it after every instruction,
 * each stop aborts the section, and a section would never complete.  The
 * remote forms (design.md 25.3, 25.4) are correct from any CPU, the
 * buffer's own included, and complete under single-stepping.
 */
#define GRB_RSEQ_TRIES 16

#if defined(__SANITIZE_THREAD__)
#define GRB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GRB_TSAN 1
#endif
#endif

#ifdef GRB_RSEQ_ASM

static int membarrier(int cmd, unsigned int flags, int cpu)
{
	return (int)syscall(__NR_membarrier, cmd, flags, cpu);
}

/*
 * Register the process for the rseq membarrier, once.  The state is 0
 * (not tried), 1 (registered) or -1 (refused); a race between two
 * creations registers twice, which the kernel allows.
 */
static int membarrier_ready(void)
{
	static int state;
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);

	if (s == 0) {
		s = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ,
			       0, 0) == 0 ? 1 : -1;
		__atomic_store_n(&state, s, __ATOMIC_RELEASE);
	}
	return s > 0;
}

#endif /* GRB_RSEQ_ASM */

int grb__rseq_decide(const struct grb_config *cfg, int shared, int *reason)
{
	const char *env;

	*reason = GRB_PATH_AS_ASKED;
	if (!(cfg->flags & GRB_CONFIG_SYNC_PER_CPU))
		return GRB_WRITE_ATOMIC;
#ifndef GRB_RSEQ_ASM
	(void)shared;
	(void)env;
	*reason = GRB_PATH_NO_ARCH;
	return GRB_WRITE_ATOMIC;
#else
#ifdef GRB_TSAN
	*reason = GRB_PATH_SANITIZER;
	return GRB_WRITE_ATOMIC;
#endif
	env = getenv("GRB_SYNC");
	if (env && strcmp(env, "atomic") == 0) {
		*reason = GRB_PATH_ENV;
		return GRB_WRITE_ATOMIC;
	}
	if (shared || (cfg->flags & GRB_CONFIG_SHARED)) {
		*reason = GRB_PATH_SHARED;
		return GRB_WRITE_ATOMIC;
	}
	/* glibc exports 0 when its registration failed (or was turned
	 * off); the fields grb reads end at byte 16. */
	if (__rseq_size < 16 || grb__rseq_cpu(grb__rseq_area()) < 0) {
		*reason = GRB_PATH_NO_RSEQ;
		return GRB_WRITE_ATOMIC;
	}
	if (!membarrier_ready()) {
		*reason = GRB_PATH_NO_MEMBARRIER;
		return GRB_WRITE_ATOMIC;
	}
	return GRB_WRITE_RSEQ;
#endif
}

#ifdef GRB_RSEQ_ASM

/*
 * Abort every critical section running on cpu and make that CPU execute
 * a full barrier (docs/design.md sections 25.3 and 25.4).  The process
 * registered at creation, so the kernel has no reason to refuse; should
 * it, the barrier on every CPU is the same guarantee and more, and a
 * process where both fail cannot keep its buffers consistent.
 */
static void fence_cpu(int cpu)
{
	if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
		       MEMBARRIER_CMD_FLAG_CPU, cpu) == 0)
		return;
	if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0)
		return;
	fprintf(stderr, "grb: membarrier failed after registration\n");
	abort();
}

void grb__rseq_fence(struct grb_buf *buf)
{
	fence_cpu(buf->cpu);
}

void grb__rseq_fence_all(void)
{
	if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0)
		return;
	fprintf(stderr, "grb: membarrier failed after registration\n");
	abort();
}

/*
 * Enter a remote operation on buf's position: count it in `blocked`,
 * then fence the CPU, after which no plain section stores the position
 * until grb__remote_exit(): those that loaded `blocked` before the count
 * are over (aborted or done), the others see it and take the slow path,
 * whose CAS is locked.  The caller counts remote_moves once its CAS has
 * moved the position (grb__remote_moved()): a refused flush or discard,
 * or a lost CAS, moved nothing (grb/channel.h).
 */
void grb__remote_enter(struct grb_buf *buf)
{
	grb_fetch_add_seq_cst(&buf->shm->blocked, GRB_BLOCKED_REMOTE);
	fence_cpu(buf->cpu);
}

void grb__remote_exit(struct grb_buf *buf)
{
	/* seq_cst: the position this operation moved is visible to the
	 * section that sees the count drop (it loads `blocked` first). */
	grb_fetch_add_seq_cst(&buf->shm->blocked, -GRB_BLOCKED_REMOTE);
}

/* A statistic (grb_buf_stats.remote_moves); relaxed. */
void grb__remote_moved(struct grb_buf *buf)
{
	grb_fetch_add_relaxed(&buf->shm->remote_moves, 1);
}

#else

void grb__rseq_fence(struct grb_buf *buf)
{
	(void)buf;
}

void grb__rseq_fence_all(void)
{
}

void grb__remote_enter(struct grb_buf *buf)
{
	(void)buf;
}

void grb__remote_exit(struct grb_buf *buf)
{
	(void)buf;
}

void grb__remote_moved(struct grb_buf *buf)
{
	(void)buf;
}

#endif /* GRB_RSEQ_ASM */

int grb__offset_cas(struct grb_buf *buf, uint64_t *old, uint64_t new_pos)
{
#ifdef GRB_RSEQ_ASM
	unsigned int tries = 0;
	struct rseq *rs;
	int ok, r;

	if (buf->rseq) {
		rs = grb__rseq_area();
		/* On the buffer's CPU: a locked CAS inside a section (a
		 * bounded number of times: see GRB_RSEQ_TRIES). */
		while (grb__rseq_cpu(rs) == buf->cpu &&
		       tries++ < GRB_RSEQ_TRIES) {
			r = grb__rseq_cas_locked(rs, (uint32_t)buf->cpu,
						 &buf->shm->offset, *old,
						 new_pos);
			if (r == GRB_RSEQ_OK)
				return 1;
			if (r == GRB_RSEQ_FAIL) {
				/* As a failed CAS: the value it saw. */
				*old = grb_load_acquire(&buf->shm->offset);
				return 0;
			}
		}
		/* Elsewhere, or aborted every time: the remote protocol,
		 * which is correct from any CPU, this one included. */
		grb__remote_enter(buf);
		ok = grb_cas_acq_rel(&buf->shm->offset, old, new_pos);
		grb__remote_exit(buf);
		if (ok)
			grb__remote_moved(buf);
		return ok;
	}
#endif
	return grb_cas_acq_rel(&buf->shm->offset, old, new_pos);
}

/*
 * Claim the delivery of the lap holding pos.  Several commits may see
 * its commit count complete; the one whose CAS moves `claimed` to this
 * lap delivers.  `claimed` only grows, so a commit holding a stale sum
 * cannot claim a later lap.
 */
static int claim(struct grb_buf *buf, uint64_t pos)
{
	grb_atomic_u64 *w = &buf->cold[grb__slot(buf, pos)].claimed;
	uint64_t want = grb__subbuf_trunc(buf, pos) + 1;
	/*
	 * The claim orders no data: what the deliverer reads, it reads
	 * because its own loads of cc and cc_local (acquire) saw every
	 * commit of the lap.  Acquire and acq_rel only keep a later lap's
	 * claim from being read before an earlier one on any machine.
	 */
	uint64_t c = grb_load_acquire(w);

	while (c < want)
		if (grb_cas_acq_rel(w, &c, want))
			return 1;
	return 0;
}

void grb__rseq_deliver(const struct grb_config *cfg, struct grb_buf *buf,
		       uint64_t sum, uint64_t pos)
{
	if (claim(buf, pos))
		grb__deliver(cfg, buf, sum, pos);
}

void grb__rseq_commit_slow(const struct grb_config *cfg, struct grb_buf *buf,
			   uint64_t pos, uint64_t add)
{
	struct grb_commit_hot *hot = &buf->hot[grb__slot(buf, pos)];
	uint64_t sum;
#ifdef GRB_RSEQ_ASM
	struct rseq *rs = grb__rseq_area();

	unsigned int tries = 0;

	/* Still (or again) on the buffer's CPU: the local add, a bounded
	 * number of times (GRB_RSEQ_TRIES). */
	while (grb__rseq_cpu(rs) == buf->cpu && tries++ < GRB_RSEQ_TRIES)
		if (grb__rseq_add(rs, (uint32_t)buf->cpu, &hot->cc_local,
				  add) == GRB_RSEQ_OK)
			goto check;
#endif
	/*
	 * Remote (elsewhere, or aborted every time on this CPU, where it is
	 * as correct): the atomic add, then the fence.  After it, a local
	 * commit's store to cc_local is visible to the loads below, or that
	 * commit had not run yet and its own load of cc sees this add: one
	 * of the two sees the lap complete (design.md section 25.4).
	 */
	grb_fetch_add_seq_cst(&hot->cc, add);
	grb__rseq_fence(buf);
	grb_fetch_add_relaxed(&buf->shm->remote_commits, 1);
#ifdef GRB_RSEQ_ASM
check:
#endif
	/* Acquire: pairs with every committer's release (the atomic add,
	 * or the section's store, a release on x86-64, the only machine
	 * with the sections), so a deliverer sees all the lap's data. */
	sum = grb_load_acquire(&hot->cc_local) + grb_load_acquire(&hot->cc);
	if (grb__cc_complete(buf, sum, pos))
		grb__rseq_deliver(cfg, buf, sum, pos);
}

/*
 * The commit of a per-CPU configuration's record, out of line: the
 * configuration's inline commit has the per-CPU path only, and a channel
 * that fell back to the atomic path (design.md section 25.5), or a
 * caller compiled without the sections, commits here.  The atomic path
 * is grb_commit()'s: the add, then the delivery by the one commit that
 * completes the lap.
 */
void grb__commit_slow(const struct grb_config *cfg, struct grb_buf *buf,
		      uint64_t pos, uint64_t add)
{
	uint64_t cc;

	if (buf->rseq) {
		grb__rseq_commit_slow(cfg, buf, pos, add);
		return;
	}
	/* seq_cst: as grb_commit()'s add (release, acquire, and the
	 * writer's side of the wake-up handshake). */
	cc = grb_fetch_add_seq_cst(&buf->hot[grb__slot(buf, pos)].cc, add) +
		add;
	if (grb__cc_complete(buf, cc, pos))
		grb__deliver(cfg, buf, cc, pos);
}
