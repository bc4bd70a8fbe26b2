/* SPDX-License-Identifier: MIT */
/*
 * grb/impl/journal.h - the write journal of a shared buffer: what each
 * writing thread is doing to the write position, where a recoverer in
 * another process can see it after the thread's process died.
 *
 * Only shared buffers have one (grb/shm.h), and only configurations
 * with GRB_CONFIG_SHARED write it: a private buffer dies with its
 * writers, so it needs none, and a private configuration's fast path
 * has none of this code (the flag is a constant the compiler folds).  docs/design.md section 23 gives the protocol and the Spin
 * model that checks it; src/recover.c is the recoverer.
 *
 * Each thread that writes to a shared buffer owns one slot of that
 * buffer's journal (claimed once, src/journal.c), and one entry of its
 * slot per reservation it has open.  Only the thread holding the
 * reservation writes an entry (the thread a context was handed to, for a
 * commit on another thread), with plain (relaxed) stores ordered by the
 * release CAS or add that follows them: the journal adds no locked
 * instruction to the fast path.
 *
 *   state word:  | state (4 bits) | old (60 bits) |
 *
 * CLAIMING     the entry is taken, its fields are not valid yet;
 * TENTATIVE    old/begin/end are the range the next position CAS claims
 *              (from old to end); the CAS may or may not have happened;
 * OWNED        the CAS succeeded and every piece of the range except the
 *              record [begin, end) is committed; the record is not;
 * COMMITTING   as OWNED, but the record's commit add may have happened;
 * NONE         free: the record is committed and, when that commit
 *              completed its sub-buffer, delivered.
 *
 * xend is a discard's close (grb_try_discard_reserve()): the position it
 * moves the write position to, or 0.  Positions stay below 2^60 (a
 * buffer written at 10 GB/s for three years).
 */
#ifndef GRB_IMPL_JOURNAL_H
#define GRB_IMPL_JOURNAL_H

#include "grb/api.h"

#include <stdint.h>

#include "grb/config.h"
#include "grb/impl/atomic.h"
#include "grb/impl/compat.h"
#include "grb/impl/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GRB_J_NONE       UINT64_C(0)
#define GRB_J_CLAIMING   UINT64_C(1)
#define GRB_J_TENTATIVE  UINT64_C(2)
#define GRB_J_OWNED      UINT64_C(3)
#define GRB_J_COMMITTING UINT64_C(4)

#define GRB_J_STATE_SHIFT 60
#define GRB_J_POS_MASK    ((UINT64_C(1) << GRB_J_STATE_SHIFT) - 1)

/* Entries per slot: GRB_MAX_NESTING reservations, plus a flush from a
 * signal handler on top of them, plus one spare. */
#define GRB_JOURNAL_ENTRIES 6

/* Slots per buffer: threads that may write to one buffer at a time. */
#define GRB_JOURNAL_SLOTS 128

struct grb_jentry {
	grb_atomic_u64 word;            /* state << 60 | old */
	grb_atomic_u64 begin;           /* the record's slot start */
	grb_atomic_u64 end;             /* the position after the CAS */
	grb_atomic_u64 xend;            /* a discard's close, or 0 */
	/* The reservation's timestamp: a recoverer writes it into the
	 * header of a sub-buffer whose dead opener or closer this was, so
	 * that the packet's time range is the one the records were
	 * compressed against (0 without a clock). */
	grb_atomic_u64 ts;
};

/*
 * Set in grb_jslot.owner while its new owner claims it (src/journal.c):
 * its start is not stored yet.  A pid fits in 22 bits, so a real owner
 * word never has it.
 */
#define GRB_JOWNER_CLAIM (UINT64_C(1) << 63)

/* The pid in an owner word, without GRB_JOWNER_CLAIM. */
static inline int grb__jowner_pid(uint64_t owner)
{
	return (int)((owner & ~GRB_JOWNER_CLAIM) >> 32);
}

struct grb_jslot {
	/* pid << 32 | tid of the owning thread (GRB_JOWNER_CLAIM while it
	 * claims the slot); 0 when free. */
	grb_atomic_u64 owner;
	/* Its process's start time (clock ticks since boot, /proc), told
	 * apart from a later process with the same pid; 0 not known yet. */
	grb_atomic_u64 start;
	uint64_t pad[2];
	struct grb_jentry e[GRB_JOURNAL_ENTRIES];
};

/* Per-thread cache: buffer key -> this thread's slot in its journal. */
#define GRB_JCACHE_SIZE 64

struct grb_jcache {
	uint64_t key;                   /* grb_buf.jkey, 0 unused */
	struct grb_jslot *slot;
};

extern GRB_API GRB_THREAD_LOCAL struct grb_jcache
	grb__jcache[GRB_JCACHE_SIZE] GRB_TLS_MODEL;

/* src/journal.c: find or claim this thread's slot (NULL: none free). */
GRB_API struct grb_jslot *grb__journal_slot(struct grb_buf *buf);

/* Does this configuration journal (a constant, folded at compile time)? */
static GRB_ALWAYS_INLINE int grb__journaled(const struct grb_config *cfg)
{
	return (cfg->flags & GRB_CONFIG_SHARED) != 0;
}

static inline uint64_t grb__jword(uint64_t state, uint64_t old)
{
	return (state << GRB_J_STATE_SHIFT) | (old & GRB_J_POS_MASK);
}

/*
 * Take a free entry of this thread's slot, or NULL when the thread has
 * no slot or every entry is in use.  A signal handler that interrupts
 * between the load that finds the entry free and the store that takes it
 * takes the same entry and gives it back before it returns (it commits
 * what it reserves: grb/shm.h says so), so the store here is not lost.
 */
static GRB_ALWAYS_INLINE struct grb_jentry *grb__journal_take(struct grb_buf *buf)
{
	struct grb_jcache *c = &grb__jcache[buf->jkey & (GRB_JCACHE_SIZE - 1)];
	struct grb_jslot *s;
	unsigned int i;

	s = GRB_LIKELY(c->key == buf->jkey) ? c->slot : grb__journal_slot(buf);
	if (GRB_UNLIKELY(!s))
		return NULL;
	for (i = 0; i < GRB_JOURNAL_ENTRIES; i++) {
		if (grb_load_relaxed(&s->e[i].word) >> GRB_J_STATE_SHIFT ==
		    GRB_J_NONE) {
			grb_store_relaxed(&s->e[i].word,
					  grb__jword(GRB_J_CLAIMING, 0));
			grb_signal_fence();
			return &s->e[i];
		}
	}
	return NULL;
}

/* The range the next CAS claims; before it (the CAS is a release). */
static GRB_ALWAYS_INLINE void grb__journal_tentative(struct grb_jentry *je,
						     uint64_t old,
						     uint64_t begin,
						     uint64_t end,
						     uint64_t ts)
{
	grb_store_relaxed(&je->ts, ts);
	grb_store_relaxed(&je->begin, begin);
	grb_store_relaxed(&je->end, end);
	grb_store_relaxed(&je->xend, 0);
	grb_store_relaxed(&je->word, grb__jword(GRB_J_TENTATIVE, old));
}

/*
 * OWNED and COMMITTING.  Relaxed: COMMITTING precedes the commit add, a
 * release, which publishes it; OWNED follows the reserve CAS and the
 * padding and header adds, whose acquire halves keep it from becoming
 * visible before them (on ARM64 too).  A recoverer that reads a stale
 * state is caught by the commit counter: it loads it again after the
 * journal, before it writes anything into the sub-buffer, and its CAS on
 * it fails after any add since the first load.
 */
static GRB_ALWAYS_INLINE void grb__journal_set(struct grb_jentry *je,
					       uint64_t state)
{
	uint64_t w = grb_load_relaxed(&je->word);

	grb_store_relaxed(&je->word, grb__jword(state, w & GRB_J_POS_MASK));
}

/*
 * Give the entry back.  Release: pairs with the recoverer's acquire load
 * of the word (src/recover.c), so that one that reads NONE also sees the
 * commit add and the delivery that came before it.  The owner taking the
 * entry again needs no more than coherence: its load of NONE (relaxed, in
 * grb__journal_take()) orders its own later store of the same word after
 * this one, and no other field is written by the committer.
 */
static GRB_ALWAYS_INLINE void grb__journal_free(struct grb_jentry *je)
{
	grb_store_release(&je->word, grb__jword(GRB_J_NONE, 0));
}

#ifdef __cplusplus
}
#endif

#endif /* GRB_IMPL_JOURNAL_H */
