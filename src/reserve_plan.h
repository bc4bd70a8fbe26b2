/* SPDX-License-Identifier: MIT */
/*
 * src/reserve_plan.h - the reserve slow path's decision, as a pure
 * function: given the write position a writer loaded and the sizes its
 * record would take, where does the record go, which sub-buffer does the
 * reservation close or open, and what does that cost.  No shared state is
 * read or written here; src/reserve.c applies the plan (checks the next
 * sub-buffer is free, compare-and-swaps the position, then closes and
 * opens), and tests/unit/test_reserve_plan.c drives this function from a
 * table of cases.  Header-only so that the unit test can call it without
 * an exported symbol.
 */
#ifndef GRB_SRC_RESERVE_PLAN_H
#define GRB_SRC_RESERVE_PLAN_H

#include <stdint.h>

enum grb_plan_verdict {
	GRB_PLAN_RESERVE = 0,   /* reserve [begin, end) */
	GRB_PLAN_TOO_BIG,       /* cannot fit in an empty sub-buffer: -ENOSPC */
	GRB_PLAN_EMPTY,         /* an empty slot: -EINVAL, not counted */
};

struct grb_plan_in {
	uint64_t old;           /* the write position loaded */
	uint64_t subbuf_size;   /* a power of two */
	uint64_t hdr;           /* sub-buffer header bytes (< subbuf_size) */
	uint64_t data_size;     /* the payload bytes asked for */
	/* Slot bytes (padding, record header, alignment, payload) when the
	 * record starts at old, and when it starts right after a sub-buffer
	 * header (with a full timestamp); either may have wrapped when
	 * data_size is huge, which is why data_size is given too. */
	uint64_t size_here;
	uint64_t size_open;
};

/* The plan; only meaningful when verdict is GRB_PLAN_RESERVE. */
struct grb_plan {
	enum grb_plan_verdict verdict;
	uint64_t old;           /* in->old: what the CAS expects */
	int close_old;          /* closes the sub-buffer holding old - 1 */
	int open_new;           /* opens the sub-buffer at open_at */
	int exact_fill;         /* the slot ends on a boundary: it closes its
				   own sub-buffer, with no padding */
	uint64_t open_at;       /* start of the opened sub-buffer */
	uint64_t begin, end;    /* the slot; end is the new write position */
	uint64_t pad;           /* padding close_old commits (no record) */
};

static inline void grb__reserve_plan(const struct grb_plan_in *in,
				     struct grb_plan *p)
{
	uint64_t sb = in->subbuf_size;
	uint64_t off = in->old & (sb - 1);
	/* data_size first: a huge one wraps the sums, and must be refused as
	 * too big, not taken for an empty or a fitting slot. */
	int huge = in->data_size > sb;

	p->verdict = GRB_PLAN_RESERVE;
	p->old = in->old;
	p->close_old = 0;
	p->open_new = off == 0;
	p->pad = 0;
	p->open_at = 0;
	p->begin = in->old;
	p->end = in->old + in->size_here;
	if (!p->open_new) {
		if (huge || in->size_here > sb - off) {
			/* Does not fit: close here, open the next one. */
			p->close_old = p->open_new = 1;
			p->pad = sb - off;
		} else if (in->size_here == 0) {
			p->verdict = GRB_PLAN_EMPTY;
		}
	}
	if (p->open_new && p->verdict == GRB_PLAN_RESERVE) {
		/* A record of exactly the room after the header fits. */
		if (huge || in->size_open > sb - in->hdr)
			p->verdict = GRB_PLAN_TOO_BIG;
		else if (in->size_open == 0)
			p->verdict = GRB_PLAN_EMPTY;
		p->open_at = (in->old & ~(sb - 1)) + (p->close_old ? sb : 0);
		p->begin = p->open_at + in->hdr;
		p->end = p->begin + in->size_open;
	}
	p->exact_fill = (p->end & (sb - 1)) == 0;
}

#endif /* GRB_SRC_RESERVE_PLAN_H */
