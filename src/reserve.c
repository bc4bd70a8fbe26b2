/* SPDX-License-Identifier: MIT */
/*
 * src/reserve.c - the reserve slow path: everything grb_reserve()'s inline
 * fast path does not handle (a record that opens or closes a sub-buffer,
 * a lost compare-and-swap, a blocked buffer, a refusal and its count).
 *
 * Each attempt loads the position and the clock, asks the pure decision
 * (src/reserve_plan.h) where the record goes, checks that a sub-buffer it
 * would open is free, and moves the position with one compare-and-swap;
 * then it applies the plan: closes the old sub-buffer, enters the slot,
 * opens the new one (src/switch.c does the closing and opening).
 */
#include "engine.h"
#include "grb/writer.h"
#include "reserve_plan.h"

int grb__reserve_refused_nesting(struct grb_channel *chan, int cpu)
{
	if ((unsigned int)cpu >= chan->nr_bufs)
		cpu = 0;
	/* A statistic; relaxed (see count_loss). */
	grb_fetch_add_relaxed(&chan->bufs[cpu].shm->lost_nesting, 1);
	return -EBUSY;
}

/*
 * A shared buffer's reservation that found no journal entry: the thread
 * has no slot (GRB_JOURNAL_SLOTS threads already write to the buffer) or
 * every entry of its slot is in use.  Counted with the nesting refusals:
 * both are a thread holding more than the bound allows.
 */
int grb__reserve_refused_journal(struct grb_buf *buf)
{
	grb__nesting_undo();
	grb_fetch_add_relaxed(&buf->shm->lost_nesting, 1);
	return -EBUSY;
}

/*
 * Count a reservation refused by grb__subbuf_free().  Loss counters are
 * statistics: one atomic add each, relaxed (grb__deliver() says what a
 * sub-buffer header's running count includes).
 */
static void count_loss(struct grb_buf_shm *shm, int err)
{
	grb_fetch_add_relaxed(err == -EIO ? &shm->lost_wrap : &shm->lost_full,
			      1);
}

/* Why a blocked buffer refuses a reservation. */
static int blocked_errno(uint64_t blocked)
{
	return (blocked & GRB_BLOCKED_FINALIZED) ? -ESHUTDOWN : -EAGAIN;
}

/*
 * Load the position and the clock and decide.  Sets ctx->timestamp and
 * ctx->rflags (forced full when the record opens a sub-buffer: a reader
 * may start at any sub-buffer) and *pre, the padding before the header.
 */
static void plan_attempt(const struct grb_config *cfg, struct grb_buf *buf,
			 struct grb_ctx *ctx, struct grb_plan *p, size_t *pre)
{
	struct grb_plan_in in;
	unsigned int rflags = 0;
	size_t pre_here = 0, pre_open;

	/* A guess the CAS checks. */
	in.old = grb_load_relaxed(&buf->shm->offset);
	ctx->timestamp = grb__timestamp(cfg, buf, &rflags);
	in.subbuf_size = buf->subbuf_size;
	in.hdr = grb__subbuf_header_size(cfg);
	in.data_size = ctx->data_size;
	ctx->rflags = rflags;
	in.size_here = grb__subbuf_offset(buf, in.old) ?
		grb__slot_size(cfg, grb__subbuf_offset(buf, in.old), ctx,
			       ctx->data_size, ctx->largest_align, &pre_here) : 0;
	if (cfg->timestamp_bits > 0)
		ctx->rflags = rflags | GRB_RFLAG_FULL_TIMESTAMP;
	in.size_open = grb__slot_size(cfg, in.hdr, ctx, ctx->data_size,
				      ctx->largest_align, &pre_open);
	grb__reserve_plan(&in, p);
	if (!p->open_new)
		ctx->rflags = rflags;
	*pre = p->open_new ? pre_open : pre_here;
}

/* After the CAS: close, enter, open.  Return: the physical sub-buffer. */
static uint64_t apply(const struct grb_config *cfg, struct grb_buf *buf,
		      const struct grb_ctx *ctx, const struct grb_plan *p,
		      uint64_t old)
{
	size_t hdr = grb__subbuf_header_size(cfg);
	uint64_t phys;

	if (p->close_old)
		grb__end_old(cfg, buf, old, ctx->timestamp);
	if (cfg->mode == GRB_MODE_OVERWRITE)
		phys = grb__overwrite_enter(buf, grb__slot(buf, p->end - 1),
					    p->end - 1);
	else
		phys = grb__slot(buf, p->end - 1);
	if (p->open_new) {
		grb__begin_new(cfg, buf, p->open_at, phys, ctx->timestamp);
		grb__commit_bytes(cfg, buf, p->open_at, hdr);
	}
	if (p->exact_fill)
		grb__set_close(buf, p->end - 1, buf->subbuf_size,
			       ctx->timestamp);
	return phys;
}

int grb__reserve_slow(const struct grb_config *cfg, struct grb_buf *buf,
		      struct grb_ctx *ctx)
{
	struct grb_buf_shm *shm = buf->shm;
	struct grb_plan p;
	uint64_t blocked, old;
	size_t pre;
	int ret;

	for (;;) {
		/* Relaxed, as record_disable (src/channel.c); finalize has
		 * writers stopped first.  A remote operation on a per-CPU
		 * buffer (its count in the high bits) only sent us here. */
		blocked = grb_load_relaxed(&shm->blocked) & GRB_BLOCKED_STOP;
		if (blocked) {
			ret = blocked_errno(blocked);
			goto fail;
		}
		plan_attempt(cfg, buf, ctx, &p, &pre);
		if (p.verdict == GRB_PLAN_EMPTY) {
			/* Nothing a reader could find: refuse, not counted. */
			ret = -EINVAL;
			goto fail;
		}
		if (p.verdict == GRB_PLAN_TOO_BIG) {
			grb_fetch_add_relaxed(&shm->lost_big, 1);
			ret = -ENOSPC;
			goto fail;
		}
		old = p.old;
		if (p.open_new) {
			ret = grb__subbuf_free(cfg, buf, p.open_at);
			if (ret) {
				/* Our view may be old: other writers may have
				 * moved on and freed the sub-buffer since.  The
				 * acquire pairs with their CAS, so the retry
				 * sees what they saw. */
				if (grb_load_acquire(&shm->offset) != old)
					continue;
				count_loss(shm, ret);
				goto fail;
			}
		}
		/* The whole range the CAS claims: padding of the sub-buffer
		 * it closes, header of the one it opens, the record. */
		if (ctx->jent)
			grb__journal_tentative(ctx->jent, old, p.begin, p.end,
					       ctx->timestamp);
		GRB_HOOK(GRB_HOOK_SLOW_CHECKED);
		/* Same pairing as the fast path's CAS; on a per-CPU buffer,
		 * a locked CAS in a section or the remote protocol. */
		if (grb__offset_cas(buf, &old, p.end))
			break;
	}
	GRB_HOOK(GRB_HOOK_RESERVE_DONE);
	grb__save_timestamp(cfg, buf, ctx->timestamp);
	grb__ctx_fill(buf, ctx, p.begin, p.end,
		      grb__subbuf_offset(buf, p.begin), pre,
		      grb__slot(buf, p.begin), apply(cfg, buf, ctx, &p, old));
	/* Padding and header committed: only the record is left. */
	if (ctx->jent)
		grb__journal_set(ctx->jent, GRB_J_OWNED);
	return 0;
fail:
	if (ctx->jent)
		grb__journal_free(ctx->jent);
	grb__nesting_undo();
	return ret;
}
