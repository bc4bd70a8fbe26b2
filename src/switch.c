/* SPDX-License-Identifier: MIT */
/*
 * src/switch.c - opening and closing sub-buffers: the free check, the
 * header and padding commits, flush and discard (the reserve slow path
 * that drives them is src/reserve.c).
 *
 * A sub-buffer is opened by the reservation that first lands in it (its
 * header is reserved together with that record) and closed by the one
 * reservation that moves the write position past its end: a record that
 * fills it exactly, a record that does not fit (the rest becomes padding,
 * committed but never written), or a flush.  The closer records the data
 * size and end timestamp in the slot's cold counters; whichever commit
 * completes the slot then delivers it (src/deliver.c).
 */
#include "engine.h"
#include "grb/writer.h"

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

	if (!grb__prev_lap_delivered(buf, cc_sb, pos))
		return -EIO;
	if (cfg->mode == GRB_MODE_DISCARD) {
		/* Pairs with the release store in grb_reader_put_next(): the
		 * reader is done with the bytes we are about to overwrite. */
		consumed = grb_load_acquire(&shm->consumed);
		if (grb__lap_ahead(buf, pos, consumed))
			return -ENOBUFS;
	}
	return 0;
}

/* Add header or padding bytes (no record) to a slot's commit counter. */
void grb__commit_bytes(const struct grb_config *cfg, struct grb_buf *buf,
		       uint64_t pos, uint64_t bytes)
{
	uint64_t cc;

	if (bytes == 0)
		return;
	if (buf->rseq) {
		/* Local or remote, as a record's commit (design.md 25.4). */
		grb__rseq_commit_slow(cfg, buf, pos, bytes);
		return;
	}
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

/*
 * Open the sub-buffer at pos, held in physical phys: record when it opened
 * and how much the buffer had lost by then (a reader attributes the losses
 * to the gap before this sub-buffer), then write the client's header.
 * Published by the header's commit that follows (release).
 */
void grb__begin_new(const struct grb_config *cfg, struct grb_buf *buf,
		    uint64_t pos, uint64_t phys, uint64_t ts)
{
	struct grb_commit_cold *cold = &buf->cold[grb__slot(buf, pos)];
	struct grb_subbuf_info info = { 0 };

	/* Relaxed statistics (grb__deliver() says what they include); the
	 * stores are published by the header commit, as set_close's are. */
	grb_store_relaxed(&cold->ts_begin, ts);
	grb_store_relaxed(&cold->lost_open, grb__lost_total(buf->shm));
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
		/* The close this CAS may claim, journaled before it. */
		if (ctx->jent)
			grb_store_relaxed(&ctx->jent->xend, next);
		/*
		 * Only while the slot is the last reservation.  acq_rel, as
		 * the flush CAS: later writers' acquire CAS on the position
		 * then also orders the bytes this writer already stored in
		 * the slot before anything they do.
		 */
		if (!grb__offset_cas(buf, &end, next)) {
			if (ctx->jent)
				grb_store_relaxed(&ctx->jent->xend, 0);
			return -EBUSY;
		}
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
	if (ctx->jent)
		grb__journal_set(ctx->jent, GRB_J_COMMITTING);
	GRB_HOOK(GRB_HOOK_DISCARD_COMMITTING);
	/* The slot and the padding after it, with no record. */
	grb__commit_bytes(cfg, buf, ctx->end - 1,
			  ctx->slot_size + (next - ctx->end));
	/* Counted once committed: a writer of a shared buffer that dies
	 * before the commit has its slot counted by the recoverer as
	 * lost_dead (src/recover.c), and must not be in both counts. */
	grb_fetch_add_relaxed(&buf->shm->records_discarded, 1);
	if (ctx->jent)
		grb__journal_free(ctx->jent);
	grb__nesting_exit(ctx->owner);
	return 0;
}

/*
 * Can a flush from an attached reader run writer code on this mapping?
 * A consumer or a crash tool flushes buffers another process wrote, and
 * maybe damaged: the write position must be at most two rings ahead of
 * the consumed one (a ring, plus room for a writer's push in flight) and
 * the slot's id (overwrite mode) must name one of this buffer's
 * sub-buffers, or the delivery would write outside the mapping.
 */
static int flush_sane(const struct grb_config *cfg, const struct grb_buf *buf,
		      uint64_t pos)
{
	uint64_t c = grb_load_acquire(&buf->shm->consumed);

	if (c > pos || pos - c > 2 * buf->buf_size)
		return 0;
	return cfg->mode != GRB_MODE_OVERWRITE ||
		(grb_load_acquire(&buf->ids[grb__slot(buf, pos)]) &
		 GRB_ID_INDEX_MASK) < buf->nr_phys;
}

/* grb_buf_flush(), journaled in a shared buffer unless @journal is 0. */
static int buf_flush(struct grb_buf *buf, enum grb_flush how, int journal)
{
	const struct grb_config *cfg;
	uint64_t old, next, ts = 0, phys;
	struct grb_jentry *je = NULL;
	unsigned int rflags = 0;
	size_t hdr;
	int ret, empty, remote = 0, gated = 0;

	if (!buf || (how != GRB_FLUSH_ACTIVE && how != GRB_FLUSH_EMPTY))
		return -EINVAL;
	/*
	 * A finalized buffer stays ended: its reader may have had -ENODATA
	 * and the client its buffer_finalize, so an empty flush (an idle
	 * ticker's) opens nothing once finalize has begun; there is nothing
	 * open to close either, finalize closes it.  An empty flush that
	 * finds the gate open holds it open until it is done, and finalize
	 * waits for it (src/channel.c).  Acquire: pairs with finalize's
	 * RMW, so the flush below sees finalize's flush if it ran.
	 */
	if (how == GRB_FLUSH_EMPTY) {
		if (grb_fetch_add_acq_rel(&buf->shm->flush_gate,
					  GRB_GATE_EMPTY) & GRB_GATE_CLOSED) {
			grb_fetch_add_acq_rel(&buf->shm->flush_gate,
					      -GRB_GATE_EMPTY);
			how = GRB_FLUSH_ACTIVE;
		} else {
			gated = 1;
		}
	}
	cfg = buf->chan->cfg;
	hdr = grb__subbuf_header_size(cfg);
	/* A flush moves the position too: journaled as a reservation. */
	if (buf->journal && journal) {
		je = grb__journal_take(buf);
		if (!je) {
			ret = -EBUSY;
			goto out;
		}
	}
	if (buf->rseq) {
		/* Nothing open: spare the idle CPU the fence (a guess, as
		 * any flush's is against a writer that comes right after). */
		if (how == GRB_FLUSH_ACTIVE &&
		    grb__subbuf_offset(buf,
			grb_load_relaxed(&buf->shm->offset)) == 0) {
			ret = -ENODATA;
			goto out;
		}
		/* A flush runs anywhere: the remote protocol, for the CAS
		 * below (design.md section 25.3). */
		grb__remote_enter(buf);
		remote = 1;
	}
	for (;;) {
		/* A guess the CAS checks. */
		old = grb_load_relaxed(&buf->shm->offset);
		if (buf->chan->shared == GRB_CHAN_READER &&
		    !flush_sane(cfg, buf, old)) {
			ret = -EBADMSG;
			goto out;
		}
		ts = grb__timestamp(cfg, buf, &rflags);
		empty = grb__subbuf_offset(buf, old) == 0;
		if (!empty) {
			next = grb__subbuf_trunc(buf, old) + buf->subbuf_size;
		} else {
			if (how == GRB_FLUSH_ACTIVE) {
				ret = -ENODATA;
				goto out;
			}
			/* A flush is not a record: no loss is counted. */
			ret = grb__subbuf_free(cfg, buf, old);
			if (ret) {
				/* As in grb__reserve_slow(): pairs with the
				 * CAS that moved the position. */
				if (grb_load_acquire(&buf->shm->offset) != old)
					continue;
				goto out;
			}
			next = old + buf->subbuf_size;
		}
		/*
		 * Journaled as padding, with no record ([next, next)), and
		 * left TENTATIVE to the end: a dead flush's one commit may or
		 * may not have happened, which is what TENTATIVE says.
		 */
		if (je)
			grb__journal_tentative(je, old, next, next, ts);
		GRB_HOOK(GRB_HOOK_FLUSH_LOADED);
		/* Same pairing as the reserve CAS. */
		if (grb_cas_acq_rel(&buf->shm->offset, &old, next))
			break;
	}
	if (remote) {
		grb__remote_exit(buf);
		grb__remote_moved(buf);
		remote = 0;
	}
	ret = 0;
	if (!empty) {
		grb__end_old(cfg, buf, old, ts);
		goto out;
	}

	/* A header-only sub-buffer, opened and closed at once. */
	if (cfg->mode == GRB_MODE_OVERWRITE)
		phys = grb__overwrite_enter(buf, grb__slot(buf, old), old);
	else
		phys = grb__slot(buf, old);
	grb__set_close(buf, old, hdr, ts);
	grb__begin_new(cfg, buf, old, phys, ts);
	grb__commit_bytes(cfg, buf, old, buf->subbuf_size);
out:
	if (remote)
		grb__remote_exit(buf);
	if (je)
		grb__journal_free(je);
	/* Release: what this flush did is visible to the finalize that
	 * sees the count drop. */
	if (gated)
		grb_fetch_add_acq_rel(&buf->shm->flush_gate, -GRB_GATE_EMPTY);
	return ret;
}

int grb_buf_flush(struct grb_buf *buf, enum grb_flush how)
{
	return buf_flush(buf, how, 1);
}

/*
 * The flush of grb_channel_finalize(), whose caller has no journal entry
 * when every one is held by a live thread that wrote: the writers are
 * done (finalize's contract), so no reservation races with it, and only
 * a finalizer that dies in the middle would leave an unjournaled move.
 */
int grb__flush_final(struct grb_buf *buf)
{
	int ret = buf_flush(buf, GRB_FLUSH_ACTIVE, 1);

	return ret == -EBUSY ? buf_flush(buf, GRB_FLUSH_ACTIVE, 0) : ret;
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
