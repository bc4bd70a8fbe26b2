/* SPDX-License-Identifier: MIT */
/*
 * src/overwrite.c - the overwrite-mode (flight recorder) protocol, whole:
 * how writers and the reader share a buffer without waiting for each
 * other and without a byte being both written and read.
 *
 * Two words carry it (docs/design.md, section 8):
 *
 *  - `consumed`, the reader's position.  A writer about to reuse a
 *    sub-buffer the reader has not taken pushes it forward (push_reader);
 *    the reader takes a sub-buffer with the very same compare-and-swap
 *    (claim).  One CAS per sub-buffer succeeds, so its records are counted
 *    read or overwritten, never both, never neither.
 *
 *  - the id word of each ring slot (bit layout in grb/impl/layout.h):
 *    which physical sub-buffer the slot uses, NOREF and a lap.  Delivery
 *    publishes "no writer references this, lap L" (publish); the reader
 *    exchanges its spare for the delivered sub-buffer (swap_in) and may
 *    give it back (swap_back); a writer entering the slot for a new lap
 *    clears NOREF before it writes (clear_noref).  Whoever's CAS on the id
 *    wins owns the physical sub-buffer: the reader reads only what it
 *    swapped out, writers write only what they found NOREF-clear.
 *
 * The inline fast path (grb__overwrite_enter() in grb/impl/writer_inline.h)
 * only tests whether a push or a clear is needed and calls in here.
 */
#include "engine.h"

/* An id word: physical sub-buffer, NOREF, and the lap of position pos. */
static uint64_t id_word(const struct grb_buf *buf, uint64_t phys,
			uint64_t pos)
{
	return (phys & GRB_ID_INDEX_MASK) | GRB_ID_NOREF |
		(grb__id_lap(buf, pos) & GRB_ID_LAP_MASK);
}

/*
 * A writer is about to use position pos, a lap ahead of the reader.  Move
 * the consumed position past every sub-buffer that pos overwrites, one
 * sub-buffer per compare-and-swap; each successful one owns that
 * sub-buffer's records and counts them as overwritten.
 */
void grb__push_reader(struct grb_buf *buf, uint64_t pos)
{
	struct grb_buf_shm *shm = buf->shm;
	/* Pairs with the release of the claim or push CAS that set it. */
	uint64_t c = grb_load_acquire(&shm->consumed);
	uint64_t records;

	while (grb__lap_ahead(buf, pos, c)) {
		/*
		 * The lap at c is delivered (the sub-buffer a lap after it was
		 * opened) and cannot be delivered again while c is still the
		 * consumed position, so records_lap is that lap's count when
		 * the CAS below succeeds.  Pairs with grb__deliver().
		 */
		records = grb_load_acquire(&buf->cold[grb__slot(buf, c)].records_lap);
		GRB_HOOK(GRB_HOOK_PUSH_BEFORE_CAS);
		if (grb_cas_acq_rel(&shm->consumed, &c, c + buf->subbuf_size)) {
			/* A statistic; the CAS above made the decision. */
			grb_fetch_add_relaxed(&shm->records_overwritten, records);
			c += buf->subbuf_size;
		}
	}
}

/*
 * The reader takes the sub-buffer at c: the same CAS writers push with.
 * Return: 1 when it is the reader's (its records count as read), 0 when a
 * writer pushed past it first (counted overwritten there).
 */
int grb__ow_claim(struct grb_buf *buf, uint64_t c)
{
	/* acq_rel pairs with the pushes' acq_rel CAS. */
	return grb_cas_acq_rel(&buf->shm->consumed, &c, c + buf->subbuf_size);
}

/*
 * Take ring slot `slot` out of the reader's reach before writing to it.
 * The reader may swap the physical sub-buffer under us until NOREF is
 * clear, so retry on the id we find.
 * Return: the physical index now bound to the slot.
 */
uint64_t grb__clear_noref(struct grb_buf *buf, uint64_t slot)
{
	/* Pairs with the release of the reader's swap (swap_in, swap_back). */
	uint64_t id = grb_load_acquire(&buf->ids[slot]);

	/* acq_rel: acquire pairs with the reader's swap (its reads of the
	 * spare are done); release orders our push before the clear. */
	while ((id & GRB_ID_NOREF) &&
	       !grb_cas_acq_rel(&buf->ids[slot], &id, id & ~GRB_ID_NOREF))
		;
	return id & GRB_ID_INDEX_MASK;
}

/*
 * Delivery: the lap at pos, held in physical sub-buffer phys, is complete
 * and no writer references it; the reader may swap it out.
 */
void grb__ow_publish(struct grb_buf *buf, uint64_t slot, uint64_t phys,
		     uint64_t pos)
{
	/* Pairs with the reader's acquire load of the id in swap_in: the
	 * meta and, through the commit adds, every record are visible. */
	grb_store_release(&buf->ids[slot], id_word(buf, phys, pos));
}

/*
 * The reader exchanges its spare for the delivered sub-buffer at pos.
 * Return: the physical index now held, or -1 when the slot is not (or no
 * longer) the delivered lap at pos.
 */
int64_t grb__ow_swap_in(struct grb_buf *buf, uint64_t pos, uint64_t spare)
{
	uint64_t slot = grb__slot(buf, pos);
	uint64_t lap = grb__id_lap(buf, pos) & GRB_ID_LAP_MASK;
	/* Pairs with the release store in grb__ow_publish(). */
	uint64_t id = grb_load_acquire(&buf->ids[slot]);

	if (!(id & GRB_ID_NOREF) || (id & GRB_ID_LAP_MASK) != lap)
		return -1;
	/* Release: our reads of the spare are done before a writer, whose
	 * acquire load of the id pairs with this, writes into it. */
	if (!grb_cas_acq_rel(&buf->ids[slot], &id, id_word(buf, spare, pos)))
		return -1;
	return (int64_t)(id & GRB_ID_INDEX_MASK);
}

/*
 * The reader gives the pinned sub-buffer `held` (of position pos) back to
 * the ring, where its `spare` stands in for it, unless a writer has taken
 * the slot since.
 * Return: 1 when swapped back (spare is the reader's again), 0 when a
 * writer took the slot (held becomes the reader's spare).
 */
int grb__ow_swap_back(struct grb_buf *buf, uint64_t pos, uint64_t held,
		      uint64_t spare)
{
	uint64_t id = id_word(buf, spare, pos);

	/* Release: same pairing as swap_in. */
	return grb_cas_acq_rel(&buf->ids[grb__slot(buf, pos)], &id,
			       id_word(buf, held, pos));
}

/* The physical sub-buffer the reader owns: pinned, else its spare. */
uint64_t grb__ow_reader_phys(const struct grb_buf_shm *shm)
{
	return shm->held == GRB_HELD_POS ? shm->held_phys : shm->reader_id;
}
