/* SPDX-License-Identifier: MIT */
/*
 * src/switch.c - opening and closing sub-buffers: the reserve slow path,
 * flush, and the commits of headers and padding.
 *
 * A sub-buffer is opened by the reservation that first lands in it (its
 * header is reserved together with that record) and closed by the one
 * reservation that moves the write position past its end: a record that
 * fills it exactly, a record that does not fit (the rest becomes padding,
 * committed but never written), or a flush.  The closer records the data
 * size and end timestamp in the slot's cold counters; whichever commit
 * completes the slot then delivers it (src/deliver.c).
 */
#include "internal.h"

/*
 * Can a writer enter the sub-buffer at position pos?  Its previous lap
 * must be delivered, and in discard mode consumed by the reader.
 */
int grb__subbuf_free(const struct grb_config *cfg, struct grb_buf *buf,
		     uint64_t pos)
{
	struct grb_buf_shm *shm = buf->shm;
	uint64_t slot = grb__slot(buf, pos);
	/* Pairs with the release store of cc_sb in grb__deliver(). */
	uint64_t cc_sb = grb_load_acquire(&buf->cold[slot].cc_sb);
	uint64_t consumed;

	if (((cc_sb - grb__lap_bytes(buf, pos)) & GRB_CC_BYTES_MASK) != 0)
		return -EIO;
	if (cfg->mode == GRB_MODE_DISCARD) {
		/* Pairs with the release store in grb_reader_put_next(): the
		 * reader is done with the bytes we are about to overwrite. */
		consumed = grb_load_acquire(&shm->consumed);
		if (grb__subbuf_trunc(buf, pos) - consumed >= buf->buf_size)
			return -ENOBUFS;
	}
	return 0;
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

/* Add header or padding bytes (no record) to a slot's commit counter. */
void grb__commit_bytes(const struct grb_config *cfg, struct grb_buf *buf,
		       uint64_t pos, uint64_t bytes)
{
	uint64_t cc;

	if (bytes == 0)
		return;
	/* Same pairing as grb_commit(). */
	cc = grb_fetch_add_acq_rel(&buf->hot[grb__slot(buf, pos)].cc, bytes)
		+ bytes;
	if (grb__cc_complete(buf, cc, pos))
		grb__deliver(cfg, buf, cc, pos);
}

/* Remember how the slot's current lap ends; only its closer calls this. */
void grb__set_close(struct grb_buf *buf, uint64_t pos, uint64_t data_size,
		    uint64_t ts)
{
	struct grb_commit_cold *cold = &buf->cold[grb__slot(buf, pos)];

	/*
	 * Relaxed: published by the closer's own commit add that follows
	 * (a release the deliverer's completing add acquires, see
	 * grb__deliver()).  One closer per lap, and a discard that corrects
	 * its own close runs on the closer's thread, before that commit.
	 */
	grb_store_relaxed(&cold->data_size, data_size);
	grb_store_relaxed(&cold->ts_end, ts);
}

/* Write the header of the sub-buffer at pos, held in physical phys. */
void grb__begin_new(const struct grb_config *cfg, struct grb_buf *buf,
		    uint64_t pos, uint64_t phys, uint64_t ts)
{
	struct grb_subbuf_info info = { 0 };

	if (!cfg->cb.buffer_begin)
		return;
	info.seq = pos >> buf->subbuf_order;
	info.timestamp = ts;
	info.cpu = buf->cpu;
	cfg->cb.buffer_begin(buf, buf->data + (phys << buf->subbuf_order),
			     &info);
}

/* Close the sub-buffer holding position old - 1, which has data. */
void grb__end_old(const struct grb_config *cfg, struct grb_buf *buf,
		  uint64_t old, uint64_t ts)
{
	uint64_t used = grb__subbuf_offset(buf, old);

	grb__set_close(buf, old - 1, used, ts);
	GRB_HOOK(GRB_HOOK_END_OLD);
	grb__commit_bytes(cfg, buf, old - 1, buf->subbuf_size - used);
}

int grb__reserve_refused_nesting(struct grb_channel *chan, int cpu)
{
	if ((unsigned int)cpu >= chan->nr_bufs)
		cpu = 0;
	grb_fetch_add_relaxed(&chan->bufs[cpu].shm->lost_nesting, 1);
	return -EBUSY;
}

/* Why a blocked buffer refuses a reservation. */
static int blocked_errno(uint64_t blocked)
{
	return (blocked & GRB_BLOCKED_FINALIZED) ? -ESHUTDOWN : -EAGAIN;
}

int grb__reserve_slow(const struct grb_config *cfg, struct grb_buf *buf,
		      struct grb_ctx *ctx)
{
	struct grb_buf_shm *shm = buf->shm;
	size_t hdr = grb__subbuf_header_size(cfg);
	uint64_t old, begin, end, blocked, phys;
	size_t off, pre, size;
	int ret, old_end, new_start;

	for (;;) {
		/* Relaxed, as record_disable (src/channel.c); finalize has
		 * writers stopped first.  offset: a guess the CAS checks. */
		blocked = grb_load_relaxed(&shm->blocked);
		if (blocked) {
			ret = blocked_errno(blocked);
			goto fail;
		}
		old = grb_load_relaxed(&shm->offset);
		ctx->rflags = 0;
		ctx->timestamp = grb__timestamp(cfg, buf, &ctx->rflags);
		off = grb__subbuf_offset(buf, old);
		begin = old;
		old_end = 0;
		new_start = off == 0;
		if (!new_start) {
			size = grb__slot_size(cfg, off, ctx, &pre);
			/*
			 * data_size first: a huge one wraps the sum, and must
			 * reach the lost_big refusal below, not look empty.
			 */
			if (ctx->data_size > buf->subbuf_size ||
			    size > buf->subbuf_size - off) {
				old_end = new_start = 1;
			} else if (size == 0) {
				/* Nothing to reserve, and nothing a reader
				 * could find: refuse, do not count. */
				ret = -EINVAL;
				goto fail;
			}
		}
		if (new_start) {
			begin = grb__subbuf_trunc(buf, old) +
				(old_end ? buf->subbuf_size : 0);
			/* A reader may start at any sub-buffer. */
			if (cfg->timestamp_bits > 0)
				ctx->rflags |= GRB_RFLAG_FULL_TIMESTAMP;
			size = grb__slot_size(cfg, hdr, ctx, &pre);
			/* A record of exactly the room after the sub-buffer
			 * header fits: "too big" is strictly larger. */
			if (ctx->data_size > buf->subbuf_size ||
			    size > buf->subbuf_size - hdr) {
				grb_fetch_add_relaxed(&shm->lost_big, 1);
				ret = -ENOSPC;
				goto fail;
			}
			if (size == 0) {
				ret = -EINVAL;
				goto fail;
			}
			ret = grb__subbuf_free(cfg, buf, begin);
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
			begin += hdr;
		}
		end = begin + size;
		GRB_HOOK(GRB_HOOK_SLOW_CHECKED);
		/* Same pairing as the fast path's CAS. */
		if (grb_cas_acq_rel(&shm->offset, &old, end))
			break;
	}
	GRB_HOOK(GRB_HOOK_RESERVE_DONE);
	grb__save_timestamp(cfg, buf, ctx->timestamp);
	if (old_end)
		grb__end_old(cfg, buf, old, ctx->timestamp);
	if (cfg->mode == GRB_MODE_OVERWRITE)
		phys = grb__overwrite_enter(buf, end - 1);
	else
		phys = grb__slot(buf, end - 1);
	if (new_start) {
		grb__begin_new(cfg, buf, begin - hdr, phys, ctx->timestamp);
		grb__commit_bytes(cfg, buf, begin - hdr, hdr);
	}
	if (grb__subbuf_offset(buf, end) == 0)
		grb__set_close(buf, end - 1, buf->subbuf_size, ctx->timestamp);
	ctx->pre_offset = begin;
	ctx->end = end;
	ctx->slot_size = size;
	ctx->wptr = buf->data + (phys << buf->subbuf_order) +
		grb__subbuf_offset(buf, begin) + pre;
	ctx->wend = buf->data + (phys << buf->subbuf_order) +
		grb__subbuf_offset(buf, begin) + size;
	grb__ctx_commit_target(buf, ctx, begin);
	return 0;
fail:
	grb__nesting_undo();
	return ret;
}

/*
 * grb_try_discard_reserve(): close the sub-buffer where the slot begins.
 * The write position only ever moves forward: moving it back to the slot
 * start would let a writer that loaded the old end before the discard
 * reserve after a later record with an older timestamp (and land a record
 * right after a sub-buffer header on the fast path, with a compressed
 * timestamp).  So the discard becomes this sub-buffer's closer instead,
 * as a flush would, and its slot turns into padding beyond data_size.
 */
int grb__discard(const struct grb_config *cfg, struct grb_ctx *ctx)
{
	struct grb_buf *buf = ctx->buf;
	uint64_t end = ctx->end, next = ctx->end;

	if (grb__subbuf_offset(buf, end) != 0) {
		next = grb__subbuf_trunc(buf, end) + buf->subbuf_size;
		/*
		 * Only while the slot is the last reservation.  acq_rel, as
		 * the flush CAS: later writers' acquire CAS on the position
		 * then also orders the bytes this writer already stored in
		 * the slot before anything they do.
		 */
		if (!grb_cas_acq_rel(&buf->shm->offset, &end, next))
			return -EBUSY;
	}
	/*
	 * Now this reservation closes the sub-buffer: either its CAS just
	 * moved the position past the end, or its slot filled the
	 * sub-buffer exactly and its reserve already recorded the close,
	 * which this store corrects (same thread, no other closer).
	 */
	grb__set_close(buf, ctx->end - 1,
		       grb__subbuf_offset(buf, ctx->pre_offset), ctx->timestamp);
	GRB_HOOK(GRB_HOOK_DISCARD_CLOSED);
	grb_fetch_add_relaxed(&buf->shm->records_discarded, 1);
	/* The slot and the padding after it, with no record. */
	grb__commit_bytes(cfg, buf, ctx->end - 1,
			  ctx->slot_size + (next - ctx->end));
	grb__nesting_exit(ctx->owner);
	return 0;
}

int grb_buf_flush(struct grb_buf *buf, enum grb_flush how)
{
	const struct grb_config *cfg;
	uint64_t old, next, ts = 0, phys;
	unsigned int rflags = 0;
	size_t hdr;
	int ret, empty;

	if (!buf || (how != GRB_FLUSH_ACTIVE && how != GRB_FLUSH_EMPTY))
		return -EINVAL;
	cfg = buf->chan->cfg;
	hdr = grb__subbuf_header_size(cfg);
	for (;;) {
		/* A guess the CAS checks. */
		old = grb_load_relaxed(&buf->shm->offset);
		ts = grb__timestamp(cfg, buf, &rflags);
		empty = grb__subbuf_offset(buf, old) == 0;
		if (!empty) {
			next = grb__subbuf_trunc(buf, old) + buf->subbuf_size;
		} else {
			if (how == GRB_FLUSH_ACTIVE)
				return -ENODATA;
			/* A flush is not a record: no loss is counted. */
			ret = grb__subbuf_free(cfg, buf, old);
			if (ret) {
				/* As in grb__reserve_slow(): pairs with the
				 * CAS that moved the position. */
				if (grb_load_acquire(&buf->shm->offset) != old)
					continue;
				return ret;
			}
			next = old + buf->subbuf_size;
		}
		GRB_HOOK(GRB_HOOK_FLUSH_LOADED);
		/* Same pairing as the reserve CAS. */
		if (grb_cas_acq_rel(&buf->shm->offset, &old, next))
			break;
	}
	if (!empty) {
		grb__end_old(cfg, buf, old, ts);
		return 0;
	}
	/* A header-only sub-buffer, opened and closed at once. */
	if (cfg->mode == GRB_MODE_OVERWRITE)
		phys = grb__overwrite_enter(buf, old);
	else
		phys = grb__slot(buf, old);
	grb__set_close(buf, old, hdr, ts);
	grb__begin_new(cfg, buf, old, phys, ts);
	grb__commit_bytes(cfg, buf, old, buf->subbuf_size);
	return 0;
}

int grb_channel_flush(struct grb_channel *chan, enum grb_flush how)
{
	unsigned int i;
	int ret;

	if (!chan || (how != GRB_FLUSH_ACTIVE && how != GRB_FLUSH_EMPTY))
		return -EINVAL;
	for (i = 0; i < chan->nr_bufs; i++) {
		ret = grb_buf_flush(&chan->bufs[i], how);
		if (ret == -EINVAL)
			return ret;
	}
	return 0;
}
