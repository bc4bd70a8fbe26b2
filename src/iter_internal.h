/* SPDX-License-Identifier: MIT */
/*
 * src/iter_internal.h - the per-buffer iterator's state, shared by the
 * buffer iterator (src/iter.c) and the channel merge (src/merge.c), which
 * embeds one per buffer and looks at a record before taking it.
 */
#ifndef GRB_SRC_ITER_INTERNAL_H
#define GRB_SRC_ITER_INTERNAL_H

#include <stdint.h>

#include "grb/iter.h"
#include "grb/reader.h"

struct grb_buf_iter {
	struct grb_buf *buf;
	enum grb_iter_mode mode;
	int held;                       /* a sub-buffer is held */
	int live;                       /* sb is a live view */
	int damaged;                    /* the sub-buffer read live at
					   live_pos had a record that did
					   not decode: its rest is skipped */
	struct grb_reader_subbuf sb;    /* held sub-buffer, or live view */
	size_t next;                    /* offset of the next record in sb */
	uint64_t taken;                 /* records returned from sb */
	uint64_t prev_ts;               /* last timestamp rebuilt in sb */
	uint64_t live_pos;              /* sub-buffer read live, or ~0 */
	size_t live_next;               /* where its live reading stopped */
	uint64_t expect_seq;            /* next sub-buffer seq in order */
	uint64_t lost_seen;             /* losses accounted (a maximum) */
	uint64_t lost_pending;          /* to report with the next record */
	uint64_t undecodable;           /* -EIO returned */
	/*
	 * No record this buffer returns from now on is older than this: the
	 * last timestamp returned, or the end of the last closed sub-buffer
	 * finished, whichever is later (timestamps grow with positions).
	 */
	uint64_t bound;
	uint64_t snap_pos, snap_end;    /* snapshot mode: the range left */
	/*
	 * grb_buf_iter_read() (src/output.c): payload bytes of the peeked
	 * record already copied out.  The record is taken (advanced) only
	 * once all of it is copied, so a split record stays the one peek
	 * returns; advance resets this.
	 */
	size_t read_off;
};

int grb__buf_iter_init(struct grb_buf_iter *it, struct grb_buf *buf,
		       enum grb_iter_mode mode);
void grb__buf_iter_fini(struct grb_buf_iter *it);
/* Decode the next record without taking it; the same record until
 * grb__buf_iter_advance(). */
int grb__buf_iter_peek(struct grb_buf_iter *it, struct grb_iter_record *r);
void grb__buf_iter_advance(struct grb_buf_iter *it,
			   const struct grb_iter_record *r);

/*
 * src/merge.c: the iterator of the buffer whose lack of records held the
 * last -EAGAIN of grb_chan_iter_next() back, or NULL when no buffer had
 * anything; and each buffer's byte watermark for a wait (below), in an
 * array the iterator owns (allocated with it: a poll allocates nothing).
 */
struct grb_buf_iter *grb__chan_iter_blocker(const struct grb_chan_iter *ci);
struct grb_channel *grb__chan_iter_channel(const struct grb_chan_iter *ci);
const uint64_t *grb__chan_iter_marks(struct grb_chan_iter *ci);
struct grb_buf *grb__buf_iter_buf(const struct grb_buf_iter *it);
/*
 * The byte watermark (from the consumed position) at which the buffer has
 * something this iterator has not read: one byte past what it read live
 * in the open sub-buffer (discard mode), 0 (sub-buffers only) otherwise.
 */
uint64_t grb__buf_iter_live_mark(const struct grb_buf_iter *it);

/*
 * A record grb_chan_iter_read() split: the merge has already taken it
 * (grb_chan_iter_next()), so the channel iterator keeps it and the bytes
 * copied so far.  Its payload stays valid until the merge is called
 * again, which it is only once the record is finished.  off == 0: none.
 */
struct grb_iter_split {
	struct grb_iter_record rec;
	size_t off;
};

/* src/merge.c: the channel iterator's split record. */
struct grb_iter_split *grb__chan_iter_split(struct grb_chan_iter *ci);

/* src/merge.c: give back the losses of a record grb_chan_iter_read()
 * took to its buffer's iterator. */
void grb__chan_iter_unreport(struct grb_chan_iter *ci,
			     const struct grb_iter_record *r);

#endif /* GRB_SRC_ITER_INTERNAL_H */
