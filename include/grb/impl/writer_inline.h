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
/* The ends of grb_write_record() (src/write_record.c): the three calls
 * out of line, and the ends of a commit, each of which finishes it,
 * gives the nesting level back and returns 0. */
GRB_API int grb__write_record_slow(const struct grb_config *cfg,
				   struct grb_channel *chan, size_t data_size,
				   size_t largest_align, void *client_priv,
				   grb_fill_fn fill);
GRB_API int grb__record_commit_slow(const struct grb_config *cfg,
				    struct grb_buf *buf, uint64_t pos,
				    uint64_t add);
GRB_API int grb__record_commit_end(const struct grb_config *cfg,
				   struct grb_buf *buf, uint64_t pos,
				   uint64_t sum);
GRB_API int grb__record_wake(struct grb_buf *buf);

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

/*
 * The buffer of the calling thread's CPU.  *off_path is set to 1 when
 * the compare failed on a channel whose configuration inlines the
 * per-CPU path: a thread without rseq, or a channel that fell back to
 * the atomic path (nr_fast is 0 there).  Either way the fast path's
 * section could not succeed, and the reservation goes out of line
 * without a test of its own for the channel's path.
 */
static GRB_ALWAYS_INLINE struct grb_buf *grb__pick_buf(const struct grb_config *cfg,
					    struct grb_channel *chan, int *cpu,
					    int *off_path)
{
	unsigned int c = 0;

	*off_path = 0;
	if (cfg->alloc == GRB_ALLOC_PER_CPU) {
		/* One compare for both: a thread without rseq reads a
		 * negative id, and possible CPUs are read at creation, so
		 * the id is never trusted. */
		c = (unsigned int)GRB_CPU_OVERRIDE(grb__cpu_raw());
		if (GRB_UNLIKELY(c >= (grb__rseq_cfg(cfg) ? chan->nr_fast :
				       chan->nr_bufs))) {
			c = grb__cpu_index(chan->nr_bufs);
			*off_path = grb__rseq_cfg(cfg);
		}
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
	/* phys * subbuf_size is phys << subbuf_order (a power of two), in
	 * one instruction that reads its operand from the handle: a shift
	 * by a loaded count needs %cl on x86-64, and a move into it. */
	char *base = buf->data + phys * buf->subbuf_size + off;

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
	int cpu, rseq, off_path;
	/* Before the fence in grb__nesting_enter(): see grb__slot_size(). */
	size_t dsize = ctx->data_size, align = ctx->largest_align;

	owner = grb__nesting_enter();
	if (GRB_UNLIKELY(!owner))
		return grb__reserve_refused_nesting(chan,
			cfg->alloc == GRB_ALLOC_PER_CPU ? grb_cpu_current() : 0);
	ctx->owner = owner;
	buf = grb__pick_buf(cfg, chan, &cpu, &off_path);
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
	 * channels that fell back (buf->rseq 0, nr_fast 0: off_path) reserve
	 * and commit out of line, with the atomic protocol (docs/design.md
	 * section 25.5).  blocked: relaxed, as grb_buf_record_disable() says
	 * why; the per-CPU path checks it inside its critical section.
	 */
	rseq = grb__rseq_cfg(cfg);
	if (GRB_UNLIKELY(off == 0 || off_path ||
			 (!rseq && grb_load_relaxed(&buf->shm->blocked) != 0)))
		return grb__reserve_slow_copy(cfg, buf, ctx);
	size = grb__slot_size(cfg, off, ctx, dsize, align, &pre);
	/*
	 * ">=": a record that exactly fills the sub-buffer closes it.  The
	 * data_size test keeps a huge size from wrapping the sum off + size
	 * (against a constant, so that a constant size folds it away); the
	 * slow path refuses a record too big for the sub-buffer.
	 */
	if (GRB_UNLIKELY(off + size >= buf->subbuf_size ||
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
						   o_end, 0) != GRB_RSEQ_OK))
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

	/* strnlen() is POSIX, not C11.  n + 1 < len, not n < len - 1: a
	 * field of 0 bytes takes nothing, rather than all of memory. */
	while (n + 1 < len && s[n] != '\0')
		n++;

	grb_write(cfg, ctx, s, n);
	grb_write_fill(cfg, ctx, 0, len - n);
}

static GRB_ALWAYS_INLINE void grb_ctx_align(const struct grb_config *cfg,
				 struct grb_ctx *ctx, size_t align)
{
	(void)cfg;
	/* The data area and each sub-buffer are page aligned, so address
	 * alignment equals offset alignment for align <= page size.  0
	 * means none, as a context's largest_align does. */
	if (align > 1)
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

/*
 * The one-call write (docs/design.md section 25.9).  The same protocol
 * steps as grb_reserve() then grb_commit(), with one difference in
 * overwrite mode: the slot's id word is read before the reservation
 * rather than after it (what grb__overwrite_enter() does on its common
 * path), and a slot whose NOREF is still set (a lap's first writer has
 * the reader to push) takes the three-call path instead.  Everything
 * rare ends the call by jumping out of line (the library's ends return
 * 0 or the errno themselves): no call returns into the fast path, which
 * then keeps fewer values in callee-saved registers.
 */
static GRB_ALWAYS_INLINE int grb_write_record(const struct grb_config *cfg,
					      struct grb_channel *chan,
					      size_t data_size,
					      size_t largest_align,
					      void *client_priv,
					      grb_fill_fn fill)
{
	struct grb_thread_state *owner;
	struct grb_ctx c;
	struct grb_buf *buf;
	struct grb_buf_shm *shm;
	struct grb_commit_hot *hot;
	uint64_t o_begin, o_end, off, slot, phys, ts, add, sum;
	size_t pre, size;
	unsigned int rflags = 0;
	int cpu, rseq = grb__rseq_cfg(cfg);
#ifdef GRB_RSEQ_ASM
	struct rseq *rs;
#endif

	/* A shared buffer journals each reservation: the three calls,
	 * inline. */
	if (grb__journaled(cfg)) {
		int ret;

		grb_ctx_init(&c, data_size, largest_align);
		c.client_priv = client_priv;
		ret = grb_reserve(cfg, chan, &c);
		if (ret)
			return ret;
		fill(cfg, &c);
		grb_commit(cfg, &c);
		return 0;
	}
#ifndef GRB_RSEQ_ASM
	if (rseq)
		goto slow_entered;
#endif
	/* The context is ours: its address never leaves this function
	 * (@fill is inlined), so it can live in registers. */
	c.data_size = data_size;
	c.largest_align = largest_align;
	c.client_priv = client_priv;
	owner = grb__nesting_enter();
	if (GRB_UNLIKELY(!owner))
		goto slow_entered;
	c.owner = owner;
	/*
	 * grb__pick_buf() without its out-of-line CPU lookup: a thread
	 * without rseq takes the three calls.  The compare is against
	 * nr_fast, which is 0 on a channel that fell back from the per-CPU
	 * path its configuration inlines: its records take the three calls
	 * too, and the path needs no test of its own below.
	 */
	cpu = 0;
	if (cfg->alloc == GRB_ALLOC_PER_CPU) {
		cpu = GRB_CPU_OVERRIDE(grb__cpu_raw());
		if (GRB_UNLIKELY((unsigned int)cpu >= chan->nr_fast)) {
			grb__nesting_undo();
			goto slow_entered;
		}
	}
	buf = &chan->bufs[cpu];
	c.buf = buf;
	c.cpu = cpu;
	c.jent = NULL;
	/* Once, in a register: after each acquire load below the compiler
	 * would otherwise load the handle's pointer again. */
	shm = buf->shm;
	/*
	 * Acquire (free on x86-64): the id word read below must be at
	 * least as new as the delivery of the slot's previous lap, which
	 * happened before the opener of this sub-buffer moved the
	 * position, and so before the move we load here.
	 */
	o_begin = grb_load_acquire(&shm->offset);
	ts = grb__timestamp(cfg, buf, &rflags);
	c.timestamp = ts;
	c.rflags = rflags;
	off = grb__subbuf_offset(buf, o_begin);
	/* The per-CPU path checks blocked inside its section. */
	if (GRB_UNLIKELY(off == 0 ||
			 (!rseq && grb_load_relaxed(&shm->blocked) != 0)))
		goto slow;
	size = grb__slot_size(cfg, off, &c, data_size, largest_align, &pre);
	/* As grb_reserve(). */
	if (GRB_UNLIKELY(off + size >= buf->subbuf_size ||
			 data_size >= GRB_SUBBUF_SIZE_MAX || size == 0))
		goto slow;
	o_end = o_begin + size;
	slot = grb__slot(buf, o_begin);
	phys = slot;
	if (cfg->mode == GRB_MODE_OVERWRITE) {
		/*
		 * The entry check of grb__overwrite_enter(), before the
		 * reservation: NOREF clear means a writer of this lap
		 * pushed the reader and cleared it (an older lap's clear
		 * is older than the delivery the acquire above sees), and
		 * no swap can set it again before this lap is delivered,
		 * which cannot happen while the position is still o_begin
		 * (the reservation checks it) or while our record is
		 * uncommitted.  Acquire: pairs with the release of the
		 * reader's swaps and of the clear (src/overwrite.c).
		 */
		uint64_t id = grb_load_acquire(&buf->ids[slot]);

		if (GRB_UNLIKELY(id & GRB_ID_NOREF))
			goto slow;
		phys = id & GRB_ID_INDEX_MASK;
	}
	/* Arithmetic only, before the reservation: what the record needs
	 * after it is then three values (the record's address, the slot's
	 * counters, the add), not the six it is made from. */
	grb__ctx_fill(buf, &c, o_begin, o_end, off, pre, slot, phys);
	add = size + GRB_CC_RECORD;
	hot = &buf->hot[slot];
	GRB_HOOK(GRB_HOOK_RESERVE_LOADED);
#ifdef GRB_RSEQ_ASM
	rs = grb__rseq_area();
	if (rseq) {
		/* rseq_cs stays set until the commit section replaces it:
		 * every path from here runs that section. */
		if (GRB_UNLIKELY(grb__rseq_reserve(rs, (uint32_t)cpu,
						   &shm->blocked,
						   &shm->offset, o_begin,
						   o_end, 1) != GRB_RSEQ_OK))
			goto slow;
	} else
#endif
	if (GRB_UNLIKELY(!grb_cas_acq_rel(&shm->offset, &o_begin, o_end)))
		goto slow;
	GRB_HOOK(GRB_HOOK_RESERVE_DONE);
	grb__save_timestamp(cfg, buf, ts);
	fill(cfg, &c);
	assert(c.wptr <= c.wend);
	GRB_HOOK(GRB_HOOK_COMMIT_BEFORE);
#ifdef GRB_RSEQ_ASM
	if (rseq) {
		if (GRB_UNLIKELY(grb__rseq_add(rs, (uint32_t)cpu,
					       &hot->cc_local, add) !=
				 GRB_RSEQ_OK))
			return grb__record_commit_slow(cfg, buf, o_end - 1,
						       add);
		/* As grb__commit_rseq(). */
		sum = grb_load_acquire(&hot->cc_local) +
			grb_load_acquire(&hot->cc);
	} else
#endif
	{
		/* As grb_commit(): release, acquire, and the writer's side
		 * of the wake-up handshake. */
		sum = grb_fetch_add_seq_cst(&hot->cc, add) + add;
		GRB_HOOK(GRB_HOOK_COMMIT_AFTER);
	}
	if (GRB_UNLIKELY(grb__cc_maybe_complete(buf, sum)))
		return grb__record_commit_end(cfg, buf, o_end - 1, sum);
	/* The level goes back before the wake-up, which calls no client
	 * code (the delivery above keeps it, as grb_commit() does). */
	grb__nesting_undo();
	if (GRB_UNLIKELY(grb_load_seq_cst(&shm->waiting)))
		return grb__record_wake(buf);
	return 0;
slow:
	/* buf->chan is chan: one register fewer on the fast path. */
	grb__nesting_undo();
	return grb__write_record_slow(cfg, buf->chan, data_size, largest_align,
				      client_priv, fill);
slow_entered:
	return grb__write_record_slow(cfg, chan, data_size, largest_align,
				      client_priv, fill);
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
