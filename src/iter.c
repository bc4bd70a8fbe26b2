/* SPDX-License-Identifier: MIT */
/*
 * src/iter.c - the per-buffer record iterator (grb/iter.h): sub-buffers
 * taken in order through the reader protocol, records decoded with the
 * client's record_decode, timestamps rebuilt, losses reported in place.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "grb/iter.h"
#include "iter_internal.h"

/* The engine's running refused + overwritten total, as the reader sees it. */
static uint64_t lost_now(const struct grb_buf *buf)
{
	return grb__lost_total(buf->shm);
}

/* Losses a counter now shows beyond what was already accounted. */
static void note_lost(struct grb_buf_iter *it, uint64_t total)
{
	if (total > it->lost_seen) {
		it->lost_pending += total - it->lost_seen;
		it->lost_seen = total;
	}
}

/* Give up the rest of it->sb: its records not taken yet are lost. */
static void skip_rest(struct grb_buf_iter *it)
{
	if (it->sb.records > it->taken)
		it->lost_pending += it->sb.records - it->taken;
	it->taken = it->sb.records;
	it->next = it->sb.data_size;
}

/* Start on the sub-buffer described by it->sb (held, or a live view). */
static void start_subbuf(struct grb_buf_iter *it, int live)
{
	uint64_t seq = it->sb.seq;

	/* A gap: writers pushed the reader past sub-buffers it never saw
	 * (overwrite mode), or a snapshot skipped overwritten ones; the
	 * first sub-buffer is checked too (grb__buf_iter_init()). */
	if (seq > it->expect_seq)
		note_lost(it, lost_now(it->buf));
	note_lost(it, it->sb.lost_open);
	it->expect_seq = seq + 1;
	if (live || it->sb.pos != it->live_pos) {
		it->next = grb_reader_first_record(it->buf);
		it->prev_ts = 0;
		it->taken = 0;
		it->damaged = 0;
	} else if (it->damaged) {
		/* Delivered at last, with a record that did not decode when
		 * it was read live: its rest is skipped (iter.h, -EIO). */
		skip_rest(it);
		it->damaged = 0;
	} else {
		/* Delivered at last: resume after what was read live. */
		it->next = it->live_next;
	}
	it->live = live;
	if (live)
		it->live_pos = it->sb.pos;
	else
		it->live_pos = UINT64_MAX;
}

/* Rebuild a timestamp: full, or the previous one with the low bits
 * replaced, stepping forward if that went backwards (design.md s. 10). */
static uint64_t rebuild_ts(const struct grb_config *cfg, uint64_t prev,
			   const struct grb_record *rec)
{
	unsigned int bits = cfg->timestamp_bits;
	uint64_t mask, ts;

	if (bits == 0)
		return 0;
	if (bits >= 64 || (rec->rflags & GRB_RFLAG_FULL_TIMESTAMP))
		return rec->timestamp;
	mask = (UINT64_C(1) << bits) - 1;
	ts = (prev & ~mask) | (rec->timestamp & mask);
	if (ts < prev)
		ts += mask + 1;
	return ts;
}

/* Give back the held sub-buffer; in consume mode it is consumed. */
static void drop_held(struct grb_buf_iter *it)
{
	if (!it->held)
		return;
	if (it->mode == GRB_ITER_CONSUME)
		grb_reader_put_next(it->buf);
	else
		grb_reader_put_subbuf(it->buf);
	it->held = 0;
}

/* Snapshot mode: pin the next sub-buffer of the snapshot. */
static int take_snapshot(struct grb_buf_iter *it)
{
	int ret;

	while (it->snap_pos < it->snap_end) {
		ret = grb_reader_get_subbuf(it->buf, it->snap_pos);
		it->snap_pos += it->buf->subbuf_size;
		if (ret == -ESTALE)
			continue;       /* overwritten: a gap, counted */
		if (ret == -EAGAIN) {
			/* Closed but not delivered (a writer has not
			 * committed): try it again later. */
			it->snap_pos -= it->buf->subbuf_size;
			return -EAGAIN;
		}
		if (ret)
			return ret;
		/* A description the reader refuses (an attached reader's
		 * mapping, -EBADMSG): unpinned, and the next call meets it
		 * again rather than skipping it uncounted. */
		ret = grb_reader_held(it->buf, &it->sb);
		if (ret) {
			grb_reader_put_subbuf(it->buf);
			it->snap_pos -= it->buf->subbuf_size;
			return ret;
		}
		it->held = 1;
		start_subbuf(it, 0);
		return 0;
	}
	return -ENODATA;
}

/*
 * Consume mode: the next delivered sub-buffer, or (discard mode) records
 * committed live in the open one.  Return: 0, or -EAGAIN when there is
 * nothing new, or the reader's error.
 */
static int take_next(struct grb_buf_iter *it)
{
	int ret = grb_reader_get_next(it->buf);

	if (ret == 0) {
		/* A description the reader refuses (-EBADMSG): given back
		 * as grb_buf_write() gives it. */
		ret = grb_reader_held(it->buf, &it->sb);
		if (ret) {
			grb__reader_give_back(it->buf);
			return ret;
		}
		it->held = 1;
		start_subbuf(it, 0);
		return 0;
	}
	if (ret != -EAGAIN || it->buf->chan->cfg->mode != GRB_MODE_DISCARD)
		return ret;
	ret = grb_reader_live(it->buf, &it->sb);
	if (ret)
		return ret;
	if (it->sb.pos != it->live_pos) {
		start_subbuf(it, 1);
	} else if (it->damaged) {
		/* The same open sub-buffer, with a record that did not
		 * decode: what was committed into its rest since is skipped
		 * and counted too. */
		skip_rest(it);
		it->live_next = it->sb.data_size;
		it->live = 1;
	} else {
		/* The same open sub-buffer, perhaps longer now. */
		it->next = it->live_next;
		it->live = 1;
	}
	return it->next < it->sb.data_size ? 0 : -EAGAIN;
}

/* Make it->sb and it->next point at a record to decode. */
static int fill(struct grb_buf_iter *it)
{
	int ret;

	for (;;) {
		if ((it->held || it->live) && it->next < it->sb.data_size)
			return 0;
		if (it->held) {
			/* Finished a closed sub-buffer: nothing later in the
			 * buffer is older than its closer. */
			if (it->sb.ts_end > it->bound)
				it->bound = it->sb.ts_end;
			drop_held(it);
		}
		it->live = 0;
		ret = it->mode == GRB_ITER_CONSUME ? take_next(it) :
			take_snapshot(it);
		if (ret)
			return ret;
	}
}

int grb__buf_iter_peek(struct grb_buf_iter *it, struct grb_iter_record *r)
{
	const struct grb_config *cfg = it->buf->chan->cfg;
	int ret;

again:
	ret = fill(it);
	if (ret)
		return ret;
	ret = cfg->cb.record_decode(cfg, it->sb.data, it->next,
				    it->sb.data_size, &r->rec);
	if (ret == 0 && (r->rec.rflags & GRB_RFLAG_PADDING) &&
	    r->rec.next > it->next && r->rec.next <= it->sb.data_size) {
		/* A dead writer's bytes (grb/recover.h): not a record.  The
		 * records after the sub-buffer's first one compress their
		 * timestamps against it: the opener's, ts_begin. */
		it->next = r->rec.next;
		if (it->prev_ts == 0)
			it->prev_ts = it->sb.ts_begin;
		if (it->live)
			it->live_next = r->rec.next;
		goto again;
	}
	if (ret || r->rec.next <= it->next || r->rec.next > it->sb.data_size) {
		/* Nothing says where the next record starts: skip the rest
		 * of the sub-buffer, its records counted as lost; read live,
		 * also what is committed into that rest later. */
		it->undecodable++;
		skip_rest(it);
		if (it->live) {
			it->live_next = it->sb.data_size;
			it->damaged = 1;
		}
		return -EIO;
	}
	r->timestamp = rebuild_ts(cfg, it->prev_ts, &r->rec);
	r->payload = (const char *)it->sb.data + r->rec.payload_off;
	r->payload_len = r->rec.payload_len;
	r->buf = it->buf;
	r->cpu = it->buf->cpu;
	r->pos = it->sb.pos + it->next;
	r->lost = it->lost_pending;
	r->flags = it->live ? GRB_ITER_LIVE : 0;
	return 0;
}

void grb__buf_iter_advance(struct grb_buf_iter *it,
			   const struct grb_iter_record *r)
{
	it->prev_ts = r->timestamp;
	if (r->timestamp > it->bound)
		it->bound = r->timestamp;
	it->next = r->rec.next;
	if (it->live)
		it->live_next = r->rec.next;
	it->taken++;
	it->lost_pending = 0;
	it->read_off = 0;
}

int grb_buf_iter_next(struct grb_buf_iter *it, struct grb_iter_record *r)
{
	int ret;

	if (!it || !r)
		return -EINVAL;
	ret = grb__buf_iter_peek(it, r);
	if (ret == 0)
		grb__buf_iter_advance(it, r);
	return ret;
}

struct grb_buf *grb__buf_iter_buf(const struct grb_buf_iter *it)
{
	return it->buf;
}

uint64_t grb__buf_iter_live_mark(const struct grb_buf_iter *it)
{
	if (it->buf->chan->cfg->mode != GRB_MODE_DISCARD)
		return 0;
	/* Reading live happens only at the consumed position. */
	return it->live_pos != UINT64_MAX ? it->live_next + 1 : 1;
}

uint64_t grb_buf_iter_lost(struct grb_buf_iter *it)
{
	if (!it)
		return 0;
	note_lost(it, lost_now(it->buf));
	return it->lost_pending;
}

int grb__buf_iter_init(struct grb_buf_iter *it, struct grb_buf *buf,
		       enum grb_iter_mode mode)
{
	uint64_t produced;
	int ret;

	if (mode != GRB_ITER_CONSUME && mode != GRB_ITER_SNAPSHOT)
		return -EINVAL;
	if (!buf->chan->cfg->cb.record_decode)
		return -ENOTSUP;
	memset(it, 0, sizeof(*it));
	it->buf = buf;
	it->mode = mode;
	it->live_pos = UINT64_MAX;
	ret = grb_reader_open(buf);
	if (ret)
		return ret;
	/*
	 * The sub-buffer the iterator should take first, so that a gap
	 * before it is one like any other (iter.h: an overwritten
	 * sub-buffer is reported at the gap it leaves): overwrite-mode
	 * writers may push the reader past sub-buffers before it takes
	 * one, and a snapshot skips those overwritten before it gets there.
	 * Acquire, as the reader's other loads of consumed: pairs with the
	 * writers' acq_rel CAS that pushes it (src/overwrite.c) and the
	 * reader's release store (src/reader.c).  Only a guess at the gap:
	 * a stale value is smaller, which reports the losses up to now with
	 * the first record, as a gap does; never a loss twice (note_lost()
	 * counts totals past what it saw).
	 */
	it->expect_seq = grb_load_acquire(&buf->shm->consumed) /
		buf->subbuf_size;
	if (mode == GRB_ITER_SNAPSHOT) {
		ret = grb_reader_snapshot(buf, &it->snap_pos, &produced);
		it->snap_end = ret == 0 ? produced : it->snap_pos;
		it->expect_seq = it->snap_pos / buf->subbuf_size;
	}
	/*
	 * Overwrite mode: the sub-buffers writers pushed out before now lie
	 * before the first one the iterator takes, so what was lost until
	 * now goes with its first record (iter.h).  Without this, the
	 * first sub-buffer is no gap (expect_seq is already past them), and
	 * these losses came out later, through the lost_open of sub-buffers
	 * that opened after them, on records that follow the previous one
	 * with nothing lost between.  Read after consumed: a push between
	 * the two loads is counted here, once (note_lost() counts totals).
	 * Not in discard mode, whose refusals go with the first record of
	 * the next sub-buffer that opened after them.
	 */
	if (buf->chan->cfg->mode == GRB_MODE_OVERWRITE)
		note_lost(it, lost_now(buf));
	return 0;
}

void grb__buf_iter_fini(struct grb_buf_iter *it)
{
	drop_held(it);
	grb_reader_release(it->buf);
}

int grb_buf_iter_create(struct grb_buf *buf, enum grb_iter_mode mode,
			struct grb_buf_iter **out)
{
	struct grb_buf_iter *it;
	int ret;

	if (!buf || !out)
		return -EINVAL;
	it = (struct grb_buf_iter *)malloc(sizeof(*it));
	if (!it)
		return -ENOMEM;
	ret = grb__buf_iter_init(it, buf, mode);
	if (ret) {
		free(it);
		return ret;
	}
	*out = it;
	return 0;
}

void grb_buf_iter_destroy(struct grb_buf_iter *it)
{
	if (!it)
		return;
	grb__buf_iter_fini(it);
	free(it);
}
