/* SPDX-License-Identifier: MIT */
/*
 * src/deliver.c - handing completed sub-buffers to the reader.  The
 * overwrite-mode protocol it takes part in is in src/overwrite.c.
 */
#include "engine.h"

/*
 * Deliver the sub-buffer holding position pos, whose commit counter just
 * reached cc, the value that completes its lap.  Exactly one commit sees
 * that value (commits are atomic adds), so this runs once per lap and
 * needs no exclusion.  Until the final store of cc_sb, writers that wrap
 * around to this slot see it as still being written (lost_wrap) and the
 * reader sees it as not ready.
 */
void grb__deliver(const struct grb_config *cfg, struct grb_buf *buf,
		  uint64_t cc, uint64_t pos)
{
	struct grb_buf_shm *shm = buf->shm;
	uint64_t slot = grb__slot(buf, pos);
	uint64_t sb_pos = grb__subbuf_trunc(buf, pos);
	struct grb_commit_cold *cold = &buf->cold[slot];
	struct grb_subbuf_info info = { 0 };
	uint64_t prev, records, phys;
	struct grb_subbuf_meta *meta;

	/* Written by the previous delivery of this slot, which happened
	 * before the lap we deliver could open; the acquire pairs with that
	 * delivery's release store (the chain through the position word
	 * already orders it, this keeps the reason local). */
	prev = grb_load_acquire(&cold->cc_sb);
	/* A lap adds exactly subbuf_size bytes; the rest is records. */
	records = (cc - prev - buf->subbuf_size) >> 32;
	/*
	 * Relaxed loads of what this lap's writers stored: the id (cleared
	 * of NOREF by the lap's first writer, and unchanged since, as the
	 * reader only swaps an id with NOREF set), the opener's ts_begin
	 * and lost_open, and the closer's data_size and ts_end.  Each was
	 * stored before its writer's commit
	 * add, a release; our completing add is an acquire that reads the
	 * end of cc's release sequence, which holds every add of the lap.
	 * So each store happens before these loads, on any architecture.
	 */
	if (cfg->mode == GRB_MODE_OVERWRITE)
		phys = grb_load_relaxed(&buf->ids[slot]) & GRB_ID_INDEX_MASK;
	else
		phys = slot;
	meta = &buf->meta[phys];
	meta->data_size = grb_load_relaxed(&cold->data_size);
	meta->records = records;
	meta->seq = sb_pos >> buf->subbuf_order;
	meta->ts_begin = grb_load_relaxed(&cold->ts_begin);
	meta->ts_end = grb_load_relaxed(&cold->ts_end);
	meta->lost_open = grb_load_relaxed(&cold->lost_open);
	if (cfg->cb.buffer_end) {
		info.seq = meta->seq;
		info.timestamp = meta->ts_end;
		info.data_size = meta->data_size;
		info.records = records;
		/*
		 * Running counts, relaxed: every loss and overwrite that
		 * happens before this delivery is included (a refusal
		 * counted on this thread, or on one whose commit we
		 * acquired); one racing with it may land in the next.
		 */
		info.lost = grb_load_relaxed(&shm->lost_full) +
			grb_load_relaxed(&shm->lost_wrap) +
			grb_load_relaxed(&shm->lost_big) +
			grb_load_relaxed(&shm->lost_nesting);
		info.overwritten = grb_load_relaxed(&shm->records_overwritten);
		info.cpu = buf->cpu;
		cfg->cb.buffer_end(buf, buf->data + (phys << buf->subbuf_order),
				   &info);
	}
	GRB_HOOK(GRB_HOOK_DELIVER_META);
	/*
	 * Statistics (grb_buf_get_stats()); the release of cc_sb below
	 * orders them before anyone who sees this lap delivered.  Once per
	 * lap: a recoverer may run this again after a writer died anywhere
	 * in it (src/recover.c), so every step can be redone.  Only this
	 * lap's deliverer, or a recoverer after its death, writes these
	 * words.  The slot's total before the lap (dbase), then the mark,
	 * then the total with the lap (dtotal): a redo before the mark
	 * takes the same base again, one after it stores the same total.
	 * (One add to a buffer-wide total could not be redone: a writer
	 * killed between the mark and the add left the lap out of
	 * `written` for good.)  Releases: a grb_buf_get_stats() that sees
	 * the mark sees the base, and one that sees the total sees the
	 * mark.
	 */
	if (grb_load_relaxed(&cold->counted) != sb_pos + 1) {
		grb_store_release(&buf->hot[slot].dbase,
				  grb_load_relaxed(&buf->hot[slot].dtotal));
		grb_store_release(&cold->counted, sb_pos + 1);
		grb_fetch_add_relaxed(&shm->subbufs_delivered, 1);
	}
	GRB_HOOK(GRB_HOOK_DELIVER_COUNTED);
	grb_store_release(&buf->hot[slot].dtotal,
			  grb_load_relaxed(&buf->hot[slot].dbase) + records);
	/* Pairs with the acquire in grb__push_reader(). */
	grb_store_release(&cold->records_lap, records);
	/* Let the reader swap the sub-buffer out (overwrite mode). */
	if (cfg->mode == GRB_MODE_OVERWRITE)
		grb__ow_publish(buf, slot, phys, pos);
	GRB_HOOK(GRB_HOOK_DELIVER_PUBLISH);
	grb__deliver_publish(buf, slot, cc);
}

/* The end of a delivery: the reader and writers may now see the lap. */
void grb__deliver_publish(struct grb_buf *buf, uint64_t slot, uint64_t cc)
{
	/*
	 * Publish: pairs with the acquire loads of cc_sb in the reader and
	 * in grb__subbuf_free().  seq_cst, with the load of `waiting`: the
	 * writer's side of the wake-up handshake (src/wait.c), so a reader
	 * that armed after this load finds the delivery.  (A seq_cst store
	 * and load rather than a fence: ThreadSanitizer does not model
	 * fences.)
	 */
	grb_store_seq_cst(&buf->cold[slot].cc_sb, cc);
	if (grb_load_seq_cst(&buf->shm->waiting))
		grb__wake(buf);
}
