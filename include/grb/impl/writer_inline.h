/* SPDX-License-Identifier: MIT */
/*
 * grb/impl/writer_inline.h - inline bodies of the write fast path.
 *
 * Included by grb/writer.h only.  The fast path handles the common case,
 * a record that fits in the sub-buffer already open; everything else
 * (opening or closing a sub-buffer, loss accounting, delivery) is out of
 * line in src/.
 */
#ifndef GRB_IMPL_WRITER_INLINE_H
#define GRB_IMPL_WRITER_INLINE_H

#include "grb/api.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

/* The contract and struct grb_ctx; when writer.h is the one including
 * this file, its guard makes this a no-op. */
#include "grb/writer.h"

#include "grb/align.h"
#include "grb/impl/compat.h"
#include "grb/impl/journal.h"
#include "grb/impl/layout.h"
#include "grb/impl/position.h"
#include "grb/impl/rseq.h"
#include "grb/impl/thread.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The entry points are always inlined: the whole point is that the
 * caller's constant configuration folds into them, and GCC 12 at -O2
 * otherwise keeps one out-of-line copy that reads the configuration at
 * run time (measured by bench/, section 4).
 */

/* Slow paths, in src/. */
GRB_API int grb__reserve_slow(const struct grb_config *cfg, struct grb_buf *buf,
		      struct grb_ctx *ctx);
GRB_API int grb__reserve_refused_nesting(struct grb_channel *chan, int cpu);
GRB_API int grb__reserve_refused_journal(struct grb_buf *buf);
GRB_API int grb__discard(const struct grb_config *cfg, struct grb_ctx *ctx);
GRB_API void grb__wake(struct grb_buf *buf);
GRB_API void grb__push_reader(struct grb_buf *buf, uint64_t pos);
GRB_API uint64_t grb__clear_noref(struct grb_buf *buf, uint64_t slot);
GRB_API void grb__deliver(const struct grb_config *cfg, struct grb_buf *buf,
		  uint64_t cc, uint64_t pos);
GRB_API void grb__rseq_deliver(const struct grb_config *cfg,
			       struct grb_buf *buf, uint64_t sum, uint64_t pos);
GRB_API void grb__rseq_commit_slow(const struct grb_config *cfg,
				   struct grb_buf *buf, uint64_t pos,
				   uint64_t add);
GRB_API void grb__commit_slow(const struct grb_config *cfg,
			      struct grb_buf *buf, uint64_t pos, uint64_t add);

/*
 * Can this configuration's channels take the per-CPU (rseq) path?  A
 * constant for a static const config: the other configurations compile
 * without any of it.  Whether a channel did is buf->rseq, set at
 * creation (docs/design.md section 25.5) by the library, which may have
 * the sections when this caller was compiled without them (another
 * architecture's headers, GRB_NO_RSEQ_ASM): such a caller sends a
 * per-CPU buffer's reservations and commits to the library's slow paths,
 * which follow the buffer's protocol, never to the atomic fast path.
 */
static GRB_ALWAYS_INLINE int grb__rseq_cfg(const struct grb_config *cfg)
{
	return cfg->alloc == GRB_ALLOC_PER_CPU &&
		(cfg->flags & GRB_CONFIG_SYNC_PER_CPU) &&
		!(cfg->flags & GRB_CONFIG_SHARED);
}

static GRB_ALWAYS_INLINE struct grb_buf *grb__pick_buf(const struct grb_config *cfg,
					    struct grb_channel *chan, int *cpu)
{
	unsigned int c = 0;

	if (cfg->alloc == GRB_ALLOC_PER_CPU) {
		/* One compare for both: a thread without rseq reads a
		 * negative id, and possible CPUs are read at creation, so
		 * the id is never trusted. */
		c = (unsigned int)GRB_CPU_OVERRIDE(grb__cpu_raw());
		if (GRB_UNLIKELY(c >= chan->nr_bufs))
			c = grb__cpu_index(chan->nr_bufs);
	}
	*cpu = (int)c;
	return &chan->bufs[c];
}

/*
 * Timestamp for a reservation; sets GRB_RFLAG_FULL_TIMESTAMP as needed.
 *
 * last_ts is loaded and stored relaxed.  A reservation B whose CAS
 * succeeds compares against a value some writer W stored after its own
 * successful CAS; W's CAS came before B's in the position's modification
 * order (one after B's load would have made B's CAS fail, and the
 * position never returns to an earlier value), so W's record is before
 * B's and its timestamp is not newer (docs/design.md section 10).  On a
 * weakly ordered machine B could only see a later writer's store if that
 * store were visible before B's load: it is not, because B's CAS is a
 * release that orders B's load before it, and any later writer's CAS is
 * an acquire that reads B's CAS or a later RMW of its release sequence.
 * A stale (older) value only makes B carry a full timestamp it did not
 * need.
 */
static GRB_ALWAYS_INLINE uint64_t grb__timestamp(const struct grb_config *cfg,
				      const struct grb_buf *buf,
				      unsigned int *rflags)
{
	uint64_t ts;

	if (cfg->timestamp_bits == 0)
		return 0;
	ts = cfg->cb.clock_read();
	if (cfg->timestamp_bits >= 64 ||
	    ((ts ^ grb_load_relaxed(&buf->shm->last_ts))
	     >> cfg->timestamp_bits) != 0)
		*rflags |= GRB_RFLAG_FULL_TIMESTAMP;
	return ts;
}

static GRB_ALWAYS_INLINE void grb__save_timestamp(const struct grb_config *cfg,
				       struct grb_buf *buf, uint64_t ts)
{
	/*
	 * After the reservation's CAS, relaxed (see grb__timestamp()):
	 * racing writers may store out of order, and a stale value only
	 * makes a later record carry a full timestamp it did not need.
	 */
	if (cfg->timestamp_bits > 0 && cfg->timestamp_bits < 64)
		grb_store_relaxed(&buf->shm->last_ts, ts);
}

/*
 * Slot bytes for a record whose slot starts at sub-buffer offset off, of
 * data_size payload bytes aligned on align (ctx's inputs, passed apart so
 * that the fast path reads them before the nesting count's signal fence
 * and the compiler keeps the caller's constants).
 */
static GRB_ALWAYS_INLINE size_t grb__slot_size(const struct grb_config *cfg,
					       size_t off,
					       const struct grb_ctx *ctx,
					       size_t data_size, size_t align,
					       size_t *pre)
{
	size_t hdr = 0;

	*pre = 0;
	if (cfg->cb.record_header_size)
		hdr = cfg->cb.record_header_size(cfg, off, pre, ctx);
	if (align > 1)
		hdr += grb_offset_align(off + hdr, align);
	return hdr + data_size;
}

/*
 * Overwrite mode, after the reservation of a slot whose last byte is at
 * position last, in ring slot `slot` (grb__slot(buf, last)): make sure the
 * slot is out of the reader's reach before we write to it.  One load of
 * the id word when a writer of this lap has entered the slot already
 * (NOREF clear); the first writer to get here pushes the reader off the
 * position we write, then clears NOREF (src/overwrite.c).
 * Return: the physical sub-buffer to write to.
 */
static GRB_ALWAYS_INLINE uint64_t grb__overwrite_enter(struct grb_buf *buf,
						       uint64_t slot,
						       uint64_t last)
{
	/* Pairs with the release of the reader's swaps and of the clear
	 * (src/overwrite.c). */
	uint64_t id = grb_load_acquire(&buf->ids[slot]);

	/*
	 * NOREF clear: the writer that cleared it for this lap pushed the
	 * reader first (its clear is a release after its push), and NOREF
	 * was set by the delivery of the slot's previous lap, which came
	 * before this reservation, so the clear we see is of this lap.
	 * Until this lap is delivered, no swap can set it again.
	 */
	if (GRB_UNLIKELY(id & GRB_ID_NOREF)) {
		/*
		 * grb__lap_ahead(buf, last, consumed) in fewer instructions:
		 * consumed is always a sub-buffer start (grb_buf_validate()
		 * checks it), so last's sub-buffer is a lap ahead of it
		 * exactly when last is.  Relaxed: consumed only grows, so a
		 * stale value is smaller and only sends us to
		 * grb__push_reader(), which loads it with acquire.
		 */
		if (last - grb_load_relaxed(&buf->shm->consumed) >=
		    buf->buf_size)
			grb__push_reader(buf, last);
		GRB_HOOK(GRB_HOOK_ENTER_PUSHED);
		id = grb__clear_noref(buf, slot);
	}
	return id & GRB_ID_INDEX_MASK;
}

/*
 * Fill a context for the slot [begin, end) held in physical sub-buffer
 * phys of ring slot `slot`, starting at byte off of its sub-buffer, pre
 * bytes of padding before the record header: where to write, and what
 * grb_commit() adds to and compares with.  The fast path and the slow
 * path (src/reserve.c) both end with it; the caller passes slot and off,
 * which it has computed already.
 */
static GRB_ALWAYS_INLINE void grb__ctx_fill(const struct grb_buf *buf,
					    struct grb_ctx *ctx,
					    uint64_t begin, uint64_t end,
					    uint64_t off, size_t pre,
					    uint64_t slot, uint64_t phys)
{
	char *base = buf->data + (phys << buf->subbuf_order) + off;

	ctx->pre_offset = begin;
	ctx->end = end;
	ctx->slot_size = (size_t)(end - begin);
	ctx->wptr = base + pre;
	ctx->wend = base + (end - begin);
	ctx->cc = &buf->hot[slot].cc;
	ctx->cc_done = grb__lap_bytes(buf, begin) + buf->subbuf_size;
}

/*
 * The slow path on a copy of the context: the caller's context then never
 * has its address taken, and the compiler can keep it in registers on the
 * fast path, through the writes, to the commit.
 */
static GRB_ALWAYS_INLINE int grb__reserve_slow_copy(const struct grb_config *cfg,
						    struct grb_buf *buf,
						    struct grb_ctx *ctx)
{
	struct grb_ctx tmp = *ctx;
	int ret = grb__reserve_slow(cfg, buf, &tmp);

	*ctx = tmp;
	return ret;
}

static GRB_ALWAYS_INLINE int grb_reserve(const struct grb_config *cfg,
			      struct grb_channel *chan, struct grb_ctx *ctx)
{
	struct grb_thread_state *owner;
	struct grb_buf *buf;
	uint64_t o_begin, o_end, off, slot, phys, ts;
	size_t pre, size;
	unsigned int rflags = 0;
	int cpu, rseq;
	/* Before the fence in grb__nesting_enter(): see grb__slot_size(). */
	size_t dsize = ctx->data_size, align = ctx->largest_align;

	owner = grb__nesting_enter();
	if (GRB_UNLIKELY(!owner))
		return grb__reserve_refused_nesting(chan,
			cfg->alloc == GRB_ALLOC_PER_CPU ? grb_cpu_current() : 0);
	ctx->owner = owner;
	buf = grb__pick_buf(cfg, chan, &cpu);
	ctx->buf = buf;
	ctx->cpu = cpu;
	/* A shared buffer journals the reservation (grb/impl/journal.h);
	 * a private configuration folds all of it away. */
	ctx->jent = NULL;
	if (grb__journaled(cfg) && buf->journal) {
		ctx->jent = grb__journal_take(buf);
		if (GRB_UNLIKELY(!ctx->jent))
			return grb__reserve_refused_journal(buf);
	}
	/* The position is read before the clock: timestamps then grow with
	 * positions inside a buffer.  Relaxed: a guess the CAS checks (the
	 * clock's own ordering is clock_read's contract, grb/config.h). */
	o_begin = grb_load_relaxed(&buf->shm->offset);
	ts = grb__timestamp(cfg, buf, &rflags);
	ctx->timestamp = ts;
	ctx->rflags = rflags;
	off = grb__subbuf_offset(buf, o_begin);
	/*
	 * A per-CPU configuration inlines the per-CPU path only; its
	 * channels that fell back (buf->rseq 0) reserve and commit out of
	 * line, with the atomic protocol (docs/design.md section 25.5).
	 * blocked: relaxed, as grb_buf_record_disable() says why; the
	 * per-CPU path checks it inside its critical section.
	 */
	rseq = grb__rseq_cfg(cfg);
	if (GRB_UNLIKELY(off == 0 ||
			 (rseq ? !buf->rseq :
			  grb_load_relaxed(&buf->shm->blocked) != 0)))
		return grb__reserve_slow_copy(cfg, buf, ctx);
	size = grb__slot_size(cfg, off, ctx, dsize, align, &pre);
	/*
	 * ">=": a record that exactly fills the sub-buffer closes it.  The
	 * data_size test keeps a huge size from wrapping the sum (against
	 * a constant, so that a constant size folds it away); the slow path
	 * refuses a record too big for the sub-buffer.
	 */
	if (GRB_UNLIKELY(size >= buf->subbuf_size - off ||
			 dsize >= GRB_SUBBUF_SIZE_MAX || size == 0))
		return grb__reserve_slow_copy(cfg, buf, ctx);
	o_end = o_begin + size;
	if (grb__journaled(cfg) && ctx->jent)
		grb__journal_tentative(ctx->jent, o_begin, o_begin, o_end,
				       ts);
	GRB_HOOK(GRB_HOOK_RESERVE_LOADED);
#ifdef GRB_RSEQ_ASM
	if (rseq) {
		/*
		 * One critical section on this CPU: blocked still 0 and the
		 * position still o_begin, then a plain store of o_end.  An
		 * abort (preempted, migrated, signalled) or a failed compare
		 * stored nothing: the slow path starts over.  Ordering: the
		 * section's loads and store are x86-64's, acquire and
		 * release, like the CAS below (design.md section 25).
		 */
		if (GRB_UNLIKELY(grb__rseq_reserve(grb__rseq_area(),
						   (uint32_t)cpu,
						   &buf->shm->blocked,
						   &buf->shm->offset, o_begin,
						   o_end) != GRB_RSEQ_OK))
			return grb__reserve_slow_copy(cfg, buf, ctx);
	} else
#else
	if (rseq)
		return grb__reserve_slow_copy(cfg, buf, ctx);
	else
#endif
	/*
	 * acq_rel: acquire pairs with the release of the CAS (or reader
	 * store) that made this sub-buffer writable, through the release
	 * sequence of the position word; release passes it on.
	 */
	if (GRB_UNLIKELY(!grb_cas_acq_rel(&buf->shm->offset, &o_begin, o_end)))
		return grb__reserve_slow_copy(cfg, buf, ctx);
	GRB_HOOK(GRB_HOOK_RESERVE_DONE);
	grb__save_timestamp(cfg, buf, ts);
	/* One slot for o_begin and o_end - 1: the record did not reach
	 * the end of the sub-buffer. */
	slot = grb__slot(buf, o_begin);
	if (cfg->mode == GRB_MODE_OVERWRITE)
		phys = grb__overwrite_enter(buf, slot, o_end - 1);
	else
		phys = slot;
	grb__ctx_fill(buf, ctx, o_begin, o_end, off, pre, slot, phys);
	if (grb__journaled(cfg) && ctx->jent)
		grb__journal_set(ctx->jent, GRB_J_OWNED);
	return 0;
}

static GRB_ALWAYS_INLINE void grb_write(const struct grb_config *cfg,
			     struct grb_ctx *ctx, const void *src, size_t len)
{
	(void)cfg;
	assert(ctx->wptr + len <= ctx->wend);
	memcpy(ctx->wptr, src, len);
	ctx->wptr += len;
}

static GRB_ALWAYS_INLINE void grb_write_fill(const struct grb_config *cfg,
				  struct grb_ctx *ctx, int c, size_t len)
{
	(void)cfg;
	assert(ctx->wptr + len <= ctx->wend);
	memset(ctx->wptr, c, len);
	ctx->wptr += len;
}

static GRB_ALWAYS_INLINE void grb_write_str(const struct grb_config *cfg,
				 struct grb_ctx *ctx, const char *s, size_t len)
{
	size_t n = 0;

	/* strnlen() is POSIX, not C11. */
	while (n < len - 1 && s[n] != '\0')
		n++;

	grb_write(cfg, ctx, s, n);
	grb_write_fill(cfg, ctx, 0, len - n);
}

static GRB_ALWAYS_INLINE void grb_ctx_align(const struct grb_config *cfg,
				 struct grb_ctx *ctx, size_t align)
{
	(void)cfg;
	/* The data area and each sub-buffer are page aligned, so address
	 * alignment equals offset alignment for align <= page size. */
	ctx->wptr += grb_offset_align((uintptr_t)ctx->wptr, align);
	assert(ctx->wptr <= ctx->wend);
}

#ifdef GRB_RSEQ_ASM
/*
 * The per-CPU commit (design.md section 25.4): a plain add to the slot's
 * cc_local in a critical section on the buffer's CPU, then the sum of
 * both counters; when it completes the lap, claim and deliver.  A thread
 * no longer on that CPU (or aborted there) commits out of line.
 */
static GRB_ALWAYS_INLINE void grb__commit_rseq(const struct grb_config *cfg,
					       struct grb_ctx *ctx,
					       uint64_t add)
{
	/* ctx->cc is the first member of its slot's hot line. */
	struct grb_commit_hot *hot = (struct grb_commit_hot *)(void *)ctx->cc;
	uint64_t sum;

	if (GRB_UNLIKELY(grb__rseq_add(grb__rseq_area(), (uint32_t)ctx->cpu,
				       &hot->cc_local, add) != GRB_RSEQ_OK)) {
		grb__rseq_commit_slow(cfg, ctx->buf, ctx->end - 1, add);
		return;
	}
	/* Acquire, as in grb__rseq_commit_slow(): pairs with the other
	 * committers' release, for the delivery this commit may make. */
	sum = grb_load_acquire(&hot->cc_local) + grb_load_acquire(&hot->cc);
	if (GRB_UNLIKELY(grb__cc_maybe_complete(ctx->buf, sum)) &&
	    grb__cc_complete(ctx->buf, sum, ctx->end - 1))
		grb__rseq_deliver(cfg, ctx->buf, sum, ctx->end - 1);
}
#endif

static GRB_ALWAYS_INLINE void grb_commit(const struct grb_config *cfg,
			      struct grb_ctx *ctx)
{
	uint64_t add = ctx->slot_size + GRB_CC_RECORD;
	uint64_t cc;

	assert(ctx->wptr <= ctx->wend);
	/* Before the add, so that OWNED says it did not happen. */
	if (grb__journaled(cfg) && ctx->jent)
		grb__journal_set(ctx->jent, GRB_J_COMMITTING);
	GRB_HOOK(GRB_HOOK_COMMIT_BEFORE);
	if (grb__rseq_cfg(cfg)) {
#ifdef GRB_RSEQ_ASM
		if (GRB_LIKELY(ctx->buf->rseq))
			grb__commit_rseq(cfg, ctx, add);
		else
#endif
			grb__commit_slow(cfg, ctx->buf, ctx->end - 1, add);
		goto committed;
	}
	/*
	 * Release publishes the record; acquire lets the thread that
	 * completes the sub-buffer see every other committer's data before
	 * it runs buffer_end.  Pairs with the acquire loads of cc_sb in the
	 * reader and in the reserve slow path, through grb__deliver(), and
	 * with a live reader's acquire load of cc.  seq_cst (the same
	 * instruction as acq_rel on x86-64 and arm64): the writer's side of
	 * the wake-up handshake, with the load of `waiting` below
	 * (src/wait.c).
	 */
	cc = grb_fetch_add_seq_cst(ctx->cc, add) + add;
	GRB_HOOK(GRB_HOOK_COMMIT_AFTER);
	if (GRB_UNLIKELY(grb__cc_maybe_complete(ctx->buf, cc)) &&
	    grb__cc_complete(ctx->buf, cc, ctx->end - 1))
		grb__deliver(cfg, ctx->buf, cc, ctx->end - 1);
committed:
	/* After the delivery: a recoverer must not deliver it again. */
	if (grb__journaled(cfg) && ctx->jent)
		grb__journal_free(ctx->jent);
	/* A reader waits: one load of a line no writer writes. */
	if (GRB_UNLIKELY(grb_load_seq_cst(&ctx->buf->shm->waiting)))
		grb__wake(ctx->buf);
	grb__nesting_exit(ctx->owner);
}

static GRB_ALWAYS_INLINE int grb_try_discard_reserve(const struct grb_config *cfg,
					  struct grb_ctx *ctx)
{
	/* Rare by contract: the whole of it is out of line (src/switch.c). */
	return grb__discard(cfg, ctx);
}

#ifdef __cplusplus
}
#endif

#endif /* GRB_IMPL_WRITER_INLINE_H */
