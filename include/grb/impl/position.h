/* SPDX-License-Identifier: MIT */
/*
 * grb/impl/position.h - position and lap arithmetic, in one place.
 *
 * A position is a free-running 64-bit byte count in a buffer (it never
 * wraps modulo the buffer size and never goes backwards).  Everything
 * derived from it is a mask or a shift, because sub-buffer size and count
 * are powers of two:
 *
 *   position  | ...lap... | slot (nsb_order bits) | byte (subbuf_order bits) |
 *
 * The writer's fast path, the sub-buffer switch, delivery, the reader and
 * the validator all use these helpers and nothing else to interpret a
 * position, a commit counter or the lap field of an id word
 * (docs/design.md, section 4).
 */
#ifndef GRB_IMPL_POSITION_H
#define GRB_IMPL_POSITION_H

#include <stdint.h>

#include "grb/impl/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Byte of position o inside its sub-buffer. */
static inline uint64_t grb__subbuf_offset(const struct grb_buf *b, uint64_t o)
{
	return o & b->sb_mask;
}

/* Start position of the sub-buffer holding o (its first byte). */
static inline uint64_t grb__subbuf_trunc(const struct grb_buf *b, uint64_t o)
{
	return o & ~b->sb_mask;
}

/* Ring slot of position o: the same for every lap. */
static inline uint64_t grb__slot(const struct grb_buf *b, uint64_t o)
{
	return (o & b->buf_mask) >> b->subbuf_order;
}

/* Commit bytes a slot has seen before the lap holding position o. */
static inline uint64_t grb__lap_bytes(const struct grb_buf *b, uint64_t o)
{
	return (o & ~b->buf_mask) >> b->nsb_order;
}

/* True when cc says the lap holding position o is fully committed. */
static inline int grb__cc_complete(const struct grb_buf *b, uint64_t cc,
				   uint64_t o)
{
	return ((cc - grb__lap_bytes(b, o) - b->subbuf_size)
		& GRB_CC_BYTES_MASK) == 0;
}

/*
 * The commit's one-instruction pre-test for grb__cc_complete(): a
 * multiple of the sub-buffer size in the byte half.  A committer's own
 * value of its slot's count lies in (lap bytes, lap bytes + subbuf_size]
 * of its lap (its add is in it, and no commit of the next lap comes
 * before this lap is delivered), and the lap bytes are a multiple of
 * subbuf_size, so only the completing value passes; a per-CPU
 * committer's sum may be later (another committer completed and the
 * next lap went on), which grb__cc_complete() then tells apart.
 */
static inline int grb__cc_maybe_complete(const struct grb_buf *b,
					 uint64_t cc)
{
	return (cc & b->sb_mask) == 0;
}

/*
 * True when the sub-buffer holding pos is a whole buffer (or more) ahead
 * of the sub-buffer at position c: it would write over c's lap.
 */
static inline int grb__lap_ahead(const struct grb_buf *b, uint64_t pos,
				 uint64_t c)
{
	return grb__subbuf_trunc(b, pos) - grb__subbuf_trunc(b, c) >=
		b->buf_size;
}

/*
 * The commit count of ring slot `slot`: cc, plus cc_local on a per-CPU
 * (rseq) buffer (0 elsewhere).  Each load pairs with the release of the
 * commits it reads; seq_cst (the same instruction as acquire on x86-64
 * and arm64) because the live reader's check is one side of the wake-up
 * handshake (src/wait.c).  The two loads are not one snapshot:
 * both words only grow within a lap, so the sum lies between the count
 * at the first load and the count at the second; when it equals every
 * byte reserved, no commit can have landed in between.
 */
static inline uint64_t grb__cc_load(const struct grb_buf *b, uint64_t slot)
{
	return grb_load_seq_cst(&b->hot[slot].cc_local) +
		grb_load_seq_cst(&b->hot[slot].cc);
}

/* True when cc_sb says the lap before the one holding pos was delivered
 * (a writer may then open pos's sub-buffer). */
static inline int grb__prev_lap_delivered(const struct grb_buf *b,
					  uint64_t cc_sb, uint64_t pos)
{
	return ((cc_sb - grb__lap_bytes(b, pos)) & GRB_CC_BYTES_MASK) == 0;
}

/* True when cc_sb says the lap holding position pos has been delivered:
 * the delivery stores cc_sb = cc at the value that completed the lap. */
static inline int grb__delivered(const struct grb_buf *b, uint64_t cc_sb,
				 uint64_t pos)
{
	return grb__cc_complete(b, cc_sb, pos);
}

/* Lap bits of the sub-buffer id word for position pos (layout.h). */
static inline uint64_t grb__id_lap(const struct grb_buf *b, uint64_t pos)
{
	return (pos >> b->buf_order) << GRB_ID_LAP_SHIFT;
}

#ifdef __cplusplus
}
#endif

#endif /* GRB_IMPL_POSITION_H */
