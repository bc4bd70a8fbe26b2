/* SPDX-License-Identifier: MIT */
/*
 * src/reader.c - the reader protocol: open, snapshot, get/put sub-buffers.
 * In overwrite mode the swaps and the claim are src/overwrite.c's.
 *
 * The reader's state (which sub-buffer it holds, its spare in overwrite
 * mode) lives in the buffer's shared description, so a reader in another
 * process sees and resumes the same state.
 */
#include <string.h>

#include "engine.h"

/* A reader that loses this many races in a row to writers reports -EAGAIN. */
#define GRB_READER_RETRIES 1000

static int reader_check(const struct grb_buf *buf)
{
	if (!buf)
		return -EINVAL;
	/* Relaxed: the reader reads back its own open (or its
	 * predecessor's release, which its open acquired). */
	if (grb_load_relaxed(&buf->shm->active_readers) == 0)
		return -EPERM;
	return 0;
}

int grb_reader_open(struct grb_buf *buf)
{
	uint64_t expected = 0;

	if (!buf)
		return -EINVAL;
	/* Acquire pairs with the release in grb_reader_release(): a new
	 * reader sees the state its predecessor left. */
	if (!grb_cas_acq_rel(&buf->shm->active_readers, &expected, 1))
		return -EBUSY;
	return 0;
}

int grb_reader_takeover(struct grb_buf *buf)
{
	uint64_t expected = 0;

	if (!buf)
		return -EINVAL;
	if (buf->chan->shared == GRB_CHAN_PRIVATE)
		return -EOPNOTSUPP;
	/* Acquire as grb_reader_open(); when the role is taken, a CAS of 1
	 * to 1 acquires what the previous reader last stored. */
	if (grb_cas_acq_rel(&buf->shm->active_readers, &expected, 1))
		return 0;
	grb_cas_acq_rel(&buf->shm->active_readers, &expected, 1);
	return 1;
}

int grb_reader_release(struct grb_buf *buf)
{
	int ret = reader_check(buf);

	if (ret)
		return ret;
	if (buf->shm->held == GRB_HELD_NEXT)
		grb_reader_put_next(buf);
	else if (buf->shm->held == GRB_HELD_POS)
		grb_reader_put_subbuf(buf);
	/* Pairs with the acquire CAS in grb_reader_open(). */
	grb_store_release(&buf->shm->active_readers, 0);
	return 0;
}

/* Finalized and nothing left past position pos? */
static int drained(const struct grb_buf *buf, uint64_t pos)
{
	/* The finalized bit is read before the position: pairs with the
	 * release in grb_channel_finalize(), after its flush. */
	if (!(grb_load_acquire(&buf->shm->blocked) & GRB_BLOCKED_FINALIZED))
		return 0;
	return pos >= grb__subbuf_trunc(buf,
			grb_load_acquire(&buf->shm->offset));
}

int grb_reader_snapshot(struct grb_buf *buf, uint64_t *consumed,
			uint64_t *produced)
{
	uint64_t c, p, fin;
	int ret = reader_check(buf);

	if (ret)
		return ret;
	if (!consumed || !produced)
		return -EINVAL;
	/* Finalized bit first (pairs with grb_channel_finalize()), then the
	 * positions, each pairing with the CAS or store that moved it. */
	fin = grb_load_acquire(&buf->shm->blocked) & GRB_BLOCKED_FINALIZED;
	c = grb_load_acquire(&buf->shm->consumed);
	p = grb__subbuf_trunc(buf, grb_load_acquire(&buf->shm->offset));
	*consumed = c;
	*produced = p;
	if (c == p)
		return fin ? -ENODATA : -EAGAIN;
	return 0;
}

/* Is the lap at pos delivered?  Acquire pairs with grb__deliver(). */
static int is_delivered(const struct grb_buf *buf, uint64_t pos)
{
	uint64_t cc_sb =
		grb_load_acquire(&buf->cold[grb__slot(buf, pos)].cc_sb);

	return grb__delivered(buf, cc_sb, pos);
}

/*
 * Only the reader writes records_read, so a relaxed load and store do not
 * lose counts; statistics read it concurrently (a plain word would be a
 * data race).
 */
static void add_read(struct grb_buf_shm *shm, uint64_t n)
{
	grb_store_relaxed(&shm->records_read,
			  grb_load_relaxed(&shm->records_read) + n);
}

static void hold(struct grb_buf *buf, uint64_t kind, uint64_t pos,
		 uint64_t phys)
{
	buf->shm->held = kind;
	buf->shm->held_pos = pos;
	buf->shm->held_phys = phys;
}

static int get_next_overwrite(struct grb_buf *buf)
{
	struct grb_buf_shm *shm = buf->shm;
	uint64_t c;
	int64_t phys;
	int i;

	for (i = 0; i < GRB_READER_RETRIES; i++) {
		/* Pairs with a writer's push CAS (release). */
		c = grb_load_acquire(&shm->consumed);
		GRB_HOOK(GRB_HOOK_GET_DELIVERED);
		if (!is_delivered(buf, c) ||
		    (phys = grb__ow_swap_in(buf, c, shm->reader_id)) < 0) {
			if (grb_load_acquire(&shm->consumed) != c)
				continue;   /* pushed by a writer: retry */
			return drained(buf, c) ? -ENODATA : -EAGAIN;
		}
		/* The swapped-out sub-buffer is ours whatever happens next. */
		shm->reader_id = (uint64_t)phys;
		if ((uint64_t)phys >= buf->nr_phys)
			return -EBADMSG;        /* a corrupt id: see below */
		GRB_HOOK(GRB_HOOK_GET_SWAPPED);
		/* Claim: the same CAS writers use to push the reader, so the
		 * records are counted either read here or overwritten there. */
		if (!grb__ow_claim(buf, c))
			continue;
		add_read(shm, buf->meta[phys].records);
		hold(buf, GRB_HELD_NEXT, c, (uint64_t)phys);
		return 0;
	}
	return -EAGAIN;
}

int grb_reader_get_next(struct grb_buf *buf)
{
	uint64_t c;
	int ret = reader_check(buf);

	if (ret)
		return ret;
	if (buf->shm->held != GRB_HELD_NONE)
		return -EBUSY;
	if (buf->chan->cfg->mode == GRB_MODE_OVERWRITE) {
		if (buf->shm->reader_id >= buf->nr_phys)
			return -EBADMSG;
		return get_next_overwrite(buf);
	}
	/* Discard mode: only the reader moves consumed, so it reads back
	 * its own store. */
	c = grb_load_relaxed(&buf->shm->consumed);
	if (!is_delivered(buf, c))
		return drained(buf, c) ? -ENODATA : -EAGAIN;
	GRB_HOOK(GRB_HOOK_GET_DELIVERED);
	hold(buf, GRB_HELD_NEXT, c, grb__slot(buf, c));
	return 0;
}

int grb_reader_put_next(struct grb_buf *buf)
{
	struct grb_buf_shm *shm;
	int ret = reader_check(buf);

	if (ret)
		return ret;
	shm = buf->shm;
	if (shm->held != GRB_HELD_NEXT)
		return -EPERM;
	GRB_HOOK(GRB_HOOK_PUT_BEFORE);
	if (buf->chan->cfg->mode == GRB_MODE_DISCARD) {
		if (shm->held_phys < buf->nr_phys)     /* see _held() */
			add_read(shm, buf->meta[shm->held_phys].records);
		/* Release: our reads are done before writers reuse the
		 * sub-buffer; pairs with the acquire in grb__subbuf_free(). */
		grb_store_release(&shm->consumed,
				  shm->held_pos + buf->subbuf_size);
	}
	/* Overwrite mode: consumed moved at get; the held sub-buffer is now
	 * the reader's spare (reader_id). */
	hold(buf, GRB_HELD_NONE, 0, 0);
	return 0;
}

/*
 * Give the held sub-buffer from get_next back without consuming it, so the
 * next get_next returns it again (grb_buf_write() after a failed write).
 * Discard mode only: there get_next moved nothing but the held state, and
 * consumed moves only at put_next.  In overwrite mode get has already
 * moved consumed and swapped the sub-buffer out of the ring, so there is
 * nothing to go back to.
 */
int grb__reader_unget(struct grb_buf *buf)
{
	int ret = reader_check(buf);

	if (ret)
		return ret;
	if (buf->shm->held != GRB_HELD_NEXT ||
	    buf->chan->cfg->mode != GRB_MODE_DISCARD)
		return -EPERM;
	hold(buf, GRB_HELD_NONE, 0, 0);
	return 0;
}

void grb__reader_give_back(struct grb_buf *buf)
{
	if (buf->chan->cfg->mode == GRB_MODE_DISCARD)
		grb__reader_unget(buf);
	else
		grb_reader_put_next(buf);
}

int grb_reader_get_subbuf(struct grb_buf *buf, uint64_t pos)
{
	struct grb_buf_shm *shm;
	uint64_t c;
	int64_t phys;
	int ret = reader_check(buf);

	if (ret)
		return ret;
	shm = buf->shm;
	if (grb__subbuf_offset(buf, pos) != 0)
		return -EINVAL;
	if (shm->held != GRB_HELD_NONE)
		return -EBUSY;
	/* Both pair with the CAS that moved the position (release). */
	/* Positions never wrap (2^64 bytes), so "behind" is a plain
	 * compare: a position far ahead is not stale, only not there yet. */
	c = grb_load_acquire(&shm->consumed);
	if (pos < c)
		return -ESTALE;
	if (pos >= grb__subbuf_trunc(buf, grb_load_acquire(&shm->offset)) ||
	    !is_delivered(buf, pos))
		return drained(buf, pos) ? -ENODATA : -EAGAIN;
	if (buf->chan->cfg->mode == GRB_MODE_DISCARD) {
		/* Writers cannot reach pos while consumed <= pos, and only
		 * the reader moves consumed. */
		hold(buf, GRB_HELD_POS, pos, grb__slot(buf, pos));
		return 0;
	}
	GRB_HOOK(GRB_HOOK_GET_DELIVERED);
	phys = grb__ow_swap_in(buf, pos, shm->reader_id);
	/* A failed swap: pushed past (consumed, acquire as above) or not
	 * delivered yet. */
	if (phys < 0)
		return pos < grb_load_acquire(&shm->consumed) ?
			-ESTALE : -EAGAIN;
	if ((uint64_t)phys >= buf->nr_phys) {
		shm->reader_id = (uint64_t)phys;
		return -EBADMSG;        /* a corrupt id (grb/shm.h) */
	}
	/* reader_id keeps naming the spare we left in the ring, so that
	 * put can swap back. */
	hold(buf, GRB_HELD_POS, pos, (uint64_t)phys);
	return 0;
}

int grb_reader_put_subbuf(struct grb_buf *buf)
{
	struct grb_buf_shm *shm;
	int ret = reader_check(buf);

	if (ret)
		return ret;
	shm = buf->shm;
	if (shm->held != GRB_HELD_POS)
		return -EPERM;
	GRB_HOOK(GRB_HOOK_PUT_BEFORE);
	/* Overwrite mode: give the data back to the ring when no writer has
	 * taken the slot since; otherwise it becomes our spare. */
	if (buf->chan->cfg->mode == GRB_MODE_OVERWRITE &&
	    !grb__ow_swap_back(buf, shm->held_pos, shm->held_phys,
			       shm->reader_id))
		shm->reader_id = shm->held_phys;
	hold(buf, GRB_HELD_NONE, 0, 0);
	return 0;
}

int grb_reader_held(const struct grb_buf *buf, struct grb_reader_subbuf *sb)
{
	const struct grb_subbuf_meta *meta;
	uint64_t page, phys, size;
	int ret = reader_check(buf);

	if (ret)
		return ret;
	if (!sb)
		return -EINVAL;
	if (buf->shm->held == GRB_HELD_NONE)
		return -EPERM;
	/*
	 * The mapping may be shared with processes this one does not trust
	 * (grb/shm.h): the index and the size read from it are checked
	 * before they address anything.  One read of each: a later change
	 * cannot undo the check.
	 */
	phys = buf->shm->held_phys;
	if (phys >= buf->nr_phys)
		return -EBADMSG;
	meta = &buf->meta[phys];
	size = meta->data_size;
	if (size > buf->subbuf_size)
		return -EBADMSG;
	page = grb__page_size();
	sb->pos = buf->shm->held_pos;
	sb->seq = meta->seq;
	sb->data_size = size;
	sb->padded_size = (size + page - 1) & ~(page - 1);
	sb->records = meta->records;
	sb->data = buf->data + (phys << buf->subbuf_order);
	sb->ts_begin = meta->ts_begin;
	sb->ts_end = meta->ts_end;
	sb->lost_open = meta->lost_open;
	return 0;
}

int grb_reader_read(const struct grb_buf *buf, size_t offset, void *dst,
		    size_t len)
{
	struct grb_reader_subbuf sb;
	int ret = grb_reader_held(buf, &sb);

	if (ret)
		return ret;
	if (!dst && len)
		return -EINVAL;
	if (offset > sb.data_size || len > sb.data_size - offset)
		return -ERANGE;
	if (len)        /* dst may be NULL for an empty copy */
		memcpy(dst, (const char *)sb.data + offset, len);
	return 0;
}

int grb_reader_read_cstr(const struct grb_buf *buf, size_t offset, char *dst,
			 size_t cap, size_t *len)
{
	struct grb_reader_subbuf sb;
	const char *s, *nul;
	size_t n;
	int ret = grb_reader_held(buf, &sb);

	if (ret)
		return ret;
	if (!dst || cap == 0)
		return -EINVAL;
	if (offset >= sb.data_size)
		return -ERANGE;
	s = (const char *)sb.data + offset;
	nul = (const char *)memchr(s, 0, sb.data_size - offset);
	if (!nul)
		return -ERANGE;
	n = (size_t)(nul - s);
	if (len)
		*len = n;
	if (n >= cap) {
		memcpy(dst, s, cap - 1);
		dst[cap - 1] = '\0';
		return -ENOBUFS;
	}
	memcpy(dst, s, n + 1);
	return 0;
}

size_t grb_reader_first_record(const struct grb_buf *buf)
{
	return buf ? grb__subbuf_header_size(buf->chan->cfg) : 0;
}

int grb_reader_record(const struct grb_buf *buf, size_t offset,
		      struct grb_record *rec)
{
	const struct grb_config *cfg;
	struct grb_reader_subbuf sb;
	int ret = grb_reader_held(buf, &sb);

	if (ret)
		return ret;
	if (!rec)
		return -EINVAL;
	cfg = buf->chan->cfg;
	if (!cfg->cb.record_decode)
		return -ENOTSUP;
	if (offset >= sb.data_size)
		return -ENODATA;
	return cfg->cb.record_decode(cfg, sb.data, offset, sb.data_size, rec);
}

/*
 * The live read (discard mode).  The sub-buffer at pos is the one writers
 * are filling when the write position is inside it.  Its committed bytes
 * since the lap began are (cc - lap bytes): when they equal the reserved
 * bytes (the position's offset), every reservation made before that
 * position load is committed, so [0, offset) is a readable prefix.  The
 * position is loaded again after cc: if it moved, a later reservation may
 * have committed and made the two counts equal by chance, so the answer
 * is "not now".  If it did not move, cc holds no commit of a reservation
 * made after the first load: such a commit would happen after its CAS,
 * and our acquire of cc would then make that CAS visible to the second
 * load (coherence).  In discard mode no writer can come back to the
 * sub-buffer until the reader consumes it, so the prefix stays valid.
 */
int grb__live_prefix(struct grb_buf *buf, uint64_t pos, uint64_t *size,
		     uint64_t *records)
{
	struct grb_buf_shm *shm = buf->shm;
	uint64_t slot = grb__slot(buf, pos), p1, p2, cc, cc_sb;

	/*
	 * Pairs with the reservation CASes (release).  seq_cst, as every
	 * load of a readiness check: a waiter's re-check after arming runs
	 * this (src/wait.c).
	 */
	p1 = grb_load_seq_cst(&shm->offset);
	if (grb__subbuf_trunc(buf, p1) != pos ||
	    grb__subbuf_offset(buf, p1) == 0)
		return -EAGAIN;
	/*
	 * The previous lap's delivery left cc_sb: cc minus it is this lap's
	 * bytes (exactly the prefix) and records.  Loaded before cc: had
	 * this lap been delivered by then, cc, loaded after, would show it
	 * full and the check below fails.  Loaded after the check, it could
	 * be this lap's own delivery, made since, and the count would wrap
	 * (model/check.sh mutant-live-late-cc-sb; tests/func/test_live_race).
	 */
	cc_sb = grb_load_acquire(&buf->cold[slot].cc_sb);
	/* Pairs with the commit adds (release): their records are visible. */
	cc = grb__cc_load(buf, slot);
	p2 = grb_load_seq_cst(&shm->offset);
	if (p2 != p1 || ((cc - grb__lap_bytes(buf, pos)) & GRB_CC_BYTES_MASK)
	    != grb__subbuf_offset(buf, p1))
		return -EAGAIN;
	GRB_HOOK(GRB_HOOK_LIVE_CHECKED);
	*size = grb__subbuf_offset(buf, p1);
	if (records)
		*records = (cc - cc_sb) >> 32;
	return 0;
}

int grb_reader_live(struct grb_buf *buf, struct grb_reader_subbuf *sb)
{
	struct grb_buf_shm *shm;
	uint64_t c, size, records, slot;
	int ret = reader_check(buf);

	if (ret)
		return ret;
	if (!sb)
		return -EINVAL;
	if (buf->chan->cfg->mode != GRB_MODE_DISCARD)
		return -ENOTSUP;
	shm = buf->shm;
	if (shm->held != GRB_HELD_NONE)
		return -EBUSY;
	/* Only the reader moves consumed in discard mode. */
	c = grb_load_relaxed(&shm->consumed);
	ret = grb__live_prefix(buf, c, &size, &records);
	if (ret)
		return drained(buf, c) ? -ENODATA : ret;
	slot = grb__slot(buf, c);
	sb->pos = c;
	sb->seq = c >> buf->subbuf_order;
	sb->data_size = (size_t)size;
	sb->padded_size = (size_t)size;
	sb->records = records;
	sb->data = buf->data + (slot << buf->subbuf_order);
	/* The opener's stores, published by its header commit, which the
	 * acquire of cc in grb__live_prefix() read past. */
	sb->ts_begin = grb_load_relaxed(&buf->cold[slot].ts_begin);
	sb->ts_end = 0;
	sb->lost_open = grb_load_relaxed(&buf->cold[slot].lost_open);
	return 0;
}
