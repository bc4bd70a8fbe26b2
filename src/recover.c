/* SPDX-License-Identifier: MIT */
/*
 * src/recover.c - completing the sub-buffers a dead writer left behind,
 * from the write journal (grb/impl/journal.h), by the rule that
 * docs/design.md section 23 states and model/recovery.pml checks.
 *
 * A sub-buffer is stuck when the write position is past its end and it
 * is not delivered: some reservation in it has not been committed.  When
 * every journal entry that overlaps it belongs to a dead process, no live
 * thread will ever commit into it, and the bytes missing from its commit
 * counter are the dead entries' pieces that were never committed.  The
 * recoverer finds which ones, marks them as padding (or ends the
 * sub-buffer before them), adds the missing bytes to the counter and
 * delivers the sub-buffer as the last committer would have.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "grb/impl/journal.h"
#include "grb/recover.h"
#include "grb/writer.h"
#include "journal_internal.h"

/* What a piece of a dead entry is, and what its state says of it. */
enum piece_kind { P_PAD, P_HDR, P_REC, P_XPAD };
enum piece_known { K_UNKNOWN, K_FORCED };

struct piece {
	uint64_t a, b;          /* [a, b), positions */
	enum piece_kind kind;
	enum piece_known known;
	int damaged;
	uint64_t ts;            /* the entry's reservation timestamp */
};

/*
 * Pieces one journal entry can name in a sub-buffer (padding, header,
 * record, a discard's close): the piece array is sized for every entry
 * of the journal, so that no number of dead writers overflows it.
 */
#define PIECES_PER_ENTRY 4
/*
 * Unknown pieces the subset search takes, once those that overlap a
 * forced piece are set aside (2^20 subsets at most); more and the
 * sub-buffer waits.
 */
#define MAX_UNKNOWN 20

/* Processes looked up during one call: liveness by pid and start. */
struct alive_cache {
	unsigned int n;
	struct { int pid; uint64_t start; int alive; } e[64];
};

static int alive(struct alive_cache *c, uint64_t owner, uint64_t start)
{
	int pid = grb__jowner_pid(owner), a;
	unsigned int i;

	/* Still claiming the slot: its start is the previous owner's. */
	if (owner & GRB_JOWNER_CLAIM)
		start = 0;

	for (i = 0; i < c->n; i++)
		if (c->e[i].pid == pid && c->e[i].start == start)
			return c->e[i].alive;
	a = grb__process_alive(pid, start);
	if (c->n < sizeof(c->e) / sizeof(c->e[0])) {
		c->e[c->n].pid = pid;
		c->e[c->n].start = start;
		c->e[c->n].alive = a;
		c->n++;
	}
	return a;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The pieces of one stuck sub-buffer, with the scratch the search needs:
 * room for PIECES_PER_ENTRY per journal entry, allocated once per
 * grb_buf_recover() call that has a sub-buffer to work on.
 */
struct piece_set {
	struct piece *p;
	int *dmg;               /* choose()'s candidate marks, one per piece */
	unsigned int *fidx;     /* choose()'s forced pieces, by index */
	unsigned int n, cap;
};

/* Add the piece [a, b) clipped to the sub-buffer [L, E), if it meets it.
 * Return: -1 if the set is full (a journal that names more entries than
 * it has: the mapping is inconsistent), else 0. */
static int add_piece(struct piece_set *ps, uint64_t a, uint64_t b,
		     enum piece_kind kind, enum piece_known known,
		     uint64_t L, uint64_t E, uint64_t ts)
{
	struct piece *q;

	if (b <= a || b <= L || a >= E)
		return 0;
	if (ps->n >= ps->cap)
		return -1;
	q = &ps->p[ps->n++];
	q->a = a < L ? L : a;
	q->b = b > E ? E : b;
	q->kind = kind;
	q->known = known;
	q->damaged = 0;
	q->ts = ts;
	return 0;
}

/*
 * The pieces of a dead entry inside [L, E): each is committed by one add
 * or not at all (the padding of the sub-buffer its CAS closed, the header
 * of the one it opened, its record, a discard's close).  What the state
 * says: TENTATIVE, nothing; OWNED, padding and header committed and the
 * record not; COMMITTING, padding and header committed.
 */
static int entry_pieces(const struct grb_buf *buf, uint64_t state,
			uint64_t old, uint64_t begin, uint64_t end,
			uint64_t xend, uint64_t ts, uint64_t L, uint64_t E,
			struct piece_set *ps)
{
	uint64_t open_at = grb__subbuf_trunc(buf, begin);
	int tent = state == GRB_J_TENTATIVE;
	int ret = 0;

	if (tent) {
		if (old < open_at)
			ret |= add_piece(ps, old, open_at, P_PAD, K_UNKNOWN,
					 L, E, ts);
		if (old <= open_at && open_at < begin)
			ret |= add_piece(ps, open_at, begin, P_HDR,
					 K_UNKNOWN, L, E, ts);
		else if (open_at < old && old < begin)
			ret |= add_piece(ps, old, begin, P_HDR, K_UNKNOWN,
					 L, E, ts);
	}
	ret |= add_piece(ps, begin, end, P_REC,
			 state == GRB_J_OWNED ? K_FORCED : K_UNKNOWN, L, E, ts);
	if (xend > end)
		ret |= add_piece(ps, end, xend, P_XPAD, K_UNKNOWN, L, E, ts);
	return ret;
}

static int overlaps(const struct piece *x, const struct piece *y)
{
	return x->a < y->b && y->a < x->b;
}

/* What a candidate set is checked against: the sub-buffer itself. */
struct lap_view {
	const struct grb_config *cfg;
	const struct grb_buf *buf;
	uint64_t L;
	const char *base;       /* its bytes */
	uint64_t records;       /* records committed in it */
	uint64_t cold_ds;       /* the closer's data size, if it lived */
};

/*
 * Does the sub-buffer decode as exactly its committed records when the
 * pieces marked in dmg[] (sorted by position) are skipped?  The true set
 * always does: every committed record is whole and the records chain
 * from one slot to the next.  A wrong one (a dead entry whose CAS had
 * failed, the same size as the real dead record) usually does not: the
 * real dead record's bytes are then read as a record.
 */
static int walk_ok(const struct piece *p, unsigned int n, const int *dmg,
		   const struct lap_view *v)
{
	const struct grb_buf *buf = v->buf;
	uint64_t L = v->L, E = L + buf->subbuf_size, run = E, ds, off, lim;
	uint64_t hdr = grb__subbuf_header_size(v->cfg), count = 0;
	struct grb_record rec;
	unsigned int i;

	for (i = n; i-- > 0;)
		if (dmg[i] && p[i].b == run)
			run = p[i].a;
	ds = run < E ? run - L : v->cold_ds;
	if (ds < hdr)
		ds = hdr;
	if (ds > buf->subbuf_size)
		return 0;
	off = hdr;
	while (off < ds) {
		lim = ds;
		for (i = 0; i < n; i++) {
			if (!dmg[i])
				continue;
			if (p[i].a - L <= off && off < p[i].b - L)
				break;
			if (p[i].a - L > off && p[i].a - L < lim)
				lim = p[i].a - L;
		}
		if (i < n) {
			off = p[i].b - L;
			continue;
		}
		if (v->cfg->cb.record_decode(v->cfg, v->base, (size_t)off,
					     (size_t)lim, &rec) ||
		    rec.next <= off || rec.next > lim ||
		    (rec.rflags & GRB_RFLAG_PADDING))
			return 0;
		count++;
		off = rec.next;
	}
	return off == ds && count == v->records;
}

/* Bytes the damaged pieces cover (p[] sorted by position). */
static uint64_t damaged_bytes(const struct piece *p, unsigned int n)
{
	uint64_t sum = 0, end = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!p[i].damaged)
			continue;
		if (p[i].a >= end)
			sum += p[i].b - p[i].a;
		else if (p[i].b > end)
			sum += p[i].b - end;
		if (p[i].b > end)
			end = p[i].b;
	}
	return sum;
}

/* Matching sets kept for the decode check; beyond, the union is taken. */
#define MAX_MATCHES 32

/*
 * Which unknown pieces were never committed?  The forced ones were not;
 * the rest must be pairwise disjoint, disjoint from the forced ones, and
 * add up with them to the missing bytes.  An unknown piece that overlaps
 * a forced one is in no such set, so it is set aside before the search,
 * which then runs over at most MAX_UNKNOWN pieces.  When several sets
 * match and the client decodes records, the sets whose sub-buffer does
 * not decode (walk_ok()) are dropped.  ps->p[] is sorted by position.
 * Return: the number of matching sets left (0, 1, or 2 for "more than
 * one"), with every piece of any of them marked damaged.
 */
static int choose(struct piece_set *ps, uint64_t missing,
		  const struct lap_view *v)
{
	struct piece *p = ps->p;
	unsigned int n = ps->n, idx[MAX_UNKNOWN], nu = 0, nf = 0, fp = 0;
	unsigned int i, j, k, nm = 0, kept;
	uint64_t forced = 0, fend = 0, mask, sum, hit = 0, masks[MAX_MATCHES];
	uint32_t ov[MAX_UNKNOWN];
	int *dmg = ps->dmg, ok, overflow = 0;

	/* The forced pieces, in position order, must be disjoint: they
	 * all were left uncommitted.  Their indices go to ps->fidx[]. */
	for (i = 0; i < n; i++) {
		if (p[i].known != K_FORCED)
			continue;
		if (p[i].a < fend)
			return 0;
		forced += p[i].b - p[i].a;
		fend = p[i].b;
		ps->fidx[nf++] = i;
	}
	if (forced > missing)
		return 0;
	/*
	 * The unknown pieces that overlap no forced one.  Disjoint and
	 * sorted by start, the forced pieces are sorted by end too: those
	 * ending at or before this piece's start end before every later
	 * piece's start, and of the rest only the first can overlap it.
	 */
	for (i = 0; i < n; i++) {
		if (p[i].known == K_FORCED)
			continue;
		while (fp < nf && p[ps->fidx[fp]].b <= p[i].a)
			fp++;
		if (fp < nf && p[ps->fidx[fp]].a < p[i].b)
			continue;
		if (nu == MAX_UNKNOWN)
			return 0;
		idx[nu++] = i;
	}
	/* ov[j]: the candidates before j that overlap it. */
	for (j = 0; j < nu; j++) {
		ov[j] = 0;
		for (k = 0; k < j; k++)
			if (overlaps(&p[idx[j]], &p[idx[k]]))
				ov[j] |= UINT32_C(1) << k;
	}
	for (mask = 0; mask < (UINT64_C(1) << nu); mask++) {
		sum = forced;
		ok = 1;
		for (j = 0; j < nu; j++) {
			if (!(mask >> j & 1))
				continue;
			if (mask & ov[j]) {
				ok = 0;
				break;
			}
			sum += p[idx[j]].b - p[idx[j]].a;
		}
		if (!ok || sum != missing)
			continue;
		if (nm < MAX_MATCHES)
			masks[nm] = mask;
		else
			overflow = 1;
		nm++;
		hit |= mask;
	}
	if (nm == 0)
		return 0;
	if (nm > 1 && !overflow && v->cfg->cb.record_decode) {
		kept = 0;
		for (k = 0; k < nm; k++) {
			for (i = 0; i < n; i++)
				dmg[i] = p[i].known == K_FORCED;
			for (j = 0; j < nu; j++)
				if (masks[k] >> j & 1)
					dmg[idx[j]] = 1;
			if (walk_ok(p, n, dmg, v))
				masks[kept++] = masks[k];
		}
		if (kept >= 1) {
			nm = kept;
			hit = 0;
			for (k = 0; k < kept; k++)
				hit |= masks[k];
		}
	}
	for (i = 0; i < n; i++)
		if (p[i].known == K_FORCED)
			p[i].damaged = 1;
	for (j = 0; j < nu; j++)
		if (hit >> j & 1)
			p[idx[j]].damaged = 1;
	/* Sets that damage the same bytes (two entries naming the same
	 * header, one of them stale) are one answer, not an ambiguity. */
	if (nm > 1 && damaged_bytes(p, n) == missing)
		nm = 1;
	return nm > 1 ? 2 : 1;
}

/*
 * The record slots the damaged pieces take (p[] sorted by position): the
 * distinct starts of their record pieces.  A record piece starts where a
 * reservation began (the position its writer loaded, or just past the
 * header of the sub-buffer its CAS would open), and positions never
 * repeat: two record pieces with one start name one slot, the second a
 * stale entry (a writer that journaled and died before its CAS, beside
 * the one whose CAS took those bytes), and are one record.  Pieces with
 * distinct starts name distinct slots, each damaged from its first byte:
 * a dead record, or a committed one the ambiguous union takes.  Counting
 * only pairwise disjoint pieces would leave out a slot whose start lies
 * inside a stale piece that also overlaps a dead record.
 */
static unsigned int dead_records(const struct piece *p, unsigned int n)
{
	unsigned int i, count = 0;
	uint64_t last = 0;

	for (i = 0; i < n; i++) {
		if (!p[i].damaged || p[i].kind != P_REC)
			continue;
		/* Equal starts sort together. */
		if (count == 0 || p[i].a != last)
			count++;
		last = p[i].a;
	}
	return count;
}

static int cmp_piece(const void *x, const void *y)
{
	const struct piece *a = (const struct piece *)x;
	const struct piece *b = (const struct piece *)y;

	return a->a < b->a ? -1 : a->a > b->a;
}

/*
 * Rewrite what the dead writers left in the sub-buffer at L and return
 * its data size: end it before a run of damaged pieces that reaches its
 * end (its closer died), pad the damaged pieces below that, rewrite the
 * header when its opener died.
 */
static uint64_t repair(const struct grb_config *cfg, struct grb_buf *buf,
		       uint64_t L, uint64_t phys, struct piece *p,
		       unsigned int n, struct grb_recover_info *info)
{
	struct grb_commit_cold *cold = &buf->cold[grb__slot(buf, L)];
	char *base = buf->data + (phys << buf->subbuf_order);
	uint64_t hdr = grb__subbuf_header_size(cfg), E = L + buf->subbuf_size;
	uint64_t run = E, data_size, ts_open = 0, ts_close = 0, a, b;
	struct grb_subbuf_info si = { 0 };
	int closer_dead = 0, opener_dead = 0;
	unsigned int i, j;

	/*
	 * A dead opener's or closer's timestamp is its journal entry's:
	 * the records after the opener had their timestamps compressed
	 * against it, and the closer's is where the next sub-buffer
	 * begins, so a reader's clock neither jumps a wrap nor goes back.
	 */
	qsort(p, n, sizeof(*p), cmp_piece);
	for (i = n; i-- > 0;) {
		if (!p[i].damaged)
			continue;
		if (p[i].a == L) {
			opener_dead = 1;
			ts_open = p[i].ts;
		}
		if (p[i].b == run) {
			if (run == E)
				ts_close = p[i].ts;
			run = p[i].a;
			closer_dead = 1;
		}
	}
	if (closer_dead) {
		data_size = run - L < hdr ? hdr : run - L;
		info->bytes += buf->subbuf_size - data_size;
	}
	else
		/* Stored by the closer before its commit, which our acquire
		 * load of cc has seen. */
		data_size = grb_load_relaxed(&cold->data_size);
	if (data_size > buf->subbuf_size || data_size < hdr)
		data_size = buf->subbuf_size;
	if (opener_dead) {
		grb_store_relaxed(&cold->ts_begin, ts_open);
		grb_store_relaxed(&cold->lost_open, grb__lost_total(buf->shm));
		if (cfg->cb.buffer_begin) {
			si.seq = L >> buf->subbuf_order;
			si.timestamp = ts_open;
			si.cpu = buf->cpu;
			cfg->cb.buffer_begin(buf, base, &si);
		}
	}
	/* Damaged runs inside the data: padding, or the end of the data. */
	for (i = 0; i < n; i = j) {
		if (!p[i].damaged) {
			j = i + 1;
			continue;
		}
		a = p[i].a < L + hdr ? L + hdr : p[i].a;
		b = p[i].b;
		for (j = i + 1; j < n && p[j].damaged && p[j].a <= b; j++)
			if (p[j].b > b)
				b = p[j].b;
		if (b > L + data_size)
			b = L + data_size;
		if (a >= b)
			continue;
		if (cfg->cb.record_pad) {
			info->bytes += b - a;
			cfg->cb.record_pad(cfg, base + (a - L), (size_t)(b - a));
		} else {
			/* Cut: everything from the dead slot on. */
			info->bytes += L + data_size - a;
			data_size = a - L;
			break;
		}
	}
	if (closer_dead || !cfg->cb.record_pad)
		grb__set_close(buf, L, data_size,
			       closer_dead ? ts_close
			       : grb_load_relaxed(&cold->ts_end));
	return data_size;
}

/*
 * Free a dead owner's entry, as it was loaded (@w).  The slot's owner was
 * loaded once, before its entries: once they are all NONE or CLAIMING a
 * thread may claim the slot and journal its own reservation in one of
 * them, and a plain store could then put NONE over that live entry.  A
 * CAS frees only the value judged.  Release, as grb__journal_free(): a
 * claimant's acquire loads of the entries (src/journal.c slot_idle())
 * that find it free see what came before.
 */
static void free_entry(struct grb_jentry *e, uint64_t w)
{
	grb_cas_acq_rel(&e->word, &w, grb__jword(GRB_J_NONE, 0));
}

/*
 * Is the closed sub-buffer at L still undelivered?  (A lap whose previous
 * one is not delivered was never opened: not stuck, and nothing to do.)
 * Acquire: pairs with the release store of cc_sb in grb__deliver_publish().
 */
static int stuck_lap(const struct grb_buf *buf, uint64_t L)
{
	uint64_t cc_sb = grb_load_acquire(&buf->cold[grb__slot(buf, L)].cc_sb);

	return !grb__delivered(buf, cc_sb, L) &&
		grb__prev_lap_delivered(buf, cc_sb, L);
}

/*
 * Try the stuck sub-buffer at L, the write position having been pos.
 * Return: 1 recovered; 0 not now (a live writer holds a part of it, or
 * what is missing does not match what the dead left).
 */
static int recover_one(const struct grb_config *cfg, struct grb_buf *buf,
		       uint64_t L, uint64_t pos, struct alive_cache *ac,
		       struct piece_set *ps, struct grb_recover_info *info)
{
	uint64_t E = L + buf->subbuf_size, slot = grb__slot(buf, L);
	uint64_t c, missing, w, st, old, begin, end, xend, owner, phys;
	unsigned int i, k, records;
	struct grb_recover_info done;
	struct lap_view v;
	int m, checked;

	ps->n = 0;
	/*
	 * The mapping is another process's: what would make the writer's
	 * code below loop or index out of range is checked first.  The
	 * reader's position is within a ring of the writers' (they push it
	 * along in overwrite mode, the reader trails in discard mode) and
	 * not past the stuck sub-buffer (neither the reader nor a writer's
	 * push passes one that is not delivered; past it, the push below
	 * would count laps from behind, 2^52 of them), and the physical
	 * sub-buffer a slot names is one of this buffer's.
	 */
	w = grb_load_acquire(&buf->shm->consumed);
	if (w > pos || pos - w > 2 * buf->buf_size || w > L)
		return 0;
	if (cfg->mode == GRB_MODE_OVERWRITE &&
	    (grb_load_acquire(&buf->ids[slot]) & GRB_ID_INDEX_MASK) >=
	    buf->nr_phys)
		return 0;
	/* Pairs with the commits' release adds: their stores (the closer's
	 * data size among them) are visible once counted here. */
	c = grb_load_acquire(&buf->hot[slot].cc);
	missing = (grb__lap_bytes(buf, L) + buf->subbuf_size - c) &
		GRB_CC_BYTES_MASK;
	if (missing > buf->subbuf_size)
		return 0;
	for (i = 0; i < buf->nr_jslots; i++) {
		struct grb_jslot *s = &buf->journal[i];

		owner = grb_load_acquire(&s->owner);
		if (owner == 0)
			continue;
		for (k = 0, checked = 0; k < GRB_JOURNAL_ENTRIES; k++) {
again:
			w = grb_load_acquire(&s->e[k].word);
			st = w >> GRB_J_STATE_SHIFT;
			if (st == GRB_J_NONE || st == GRB_J_CLAIMING)
				continue;
			old = w & GRB_J_POS_MASK;
			begin = grb_load_relaxed(&s->e[k].begin);
			end = grb_load_relaxed(&s->e[k].end);
			xend = grb_load_relaxed(&s->e[k].xend);
			if ((xend > end ? xend : end) <= L || old >= E)
				continue;
			/*
			 * A live owner's sub-buffer is left alone.  A dead
			 * owner's entry is loaded again after the verdict, so
			 * that what is used is its last state (the model's
			 * order: liveness, then the entry).  A commit between
			 * the two loads moves the counter, which is loaded
			 * again after the loop.
			 */
			if (!checked) {
				if (alive(ac, owner,
					  grb_load_relaxed(&s->start)))
					return 0;
				checked = 1;
				goto again;
			}
			/*
			 * A CAS that would have moved the position past where
			 * it is cannot have happened.  Loaded again after the
			 * verdict, the position proves it never will: the
			 * entry is freed, so that it cannot pass later for a
			 * reservation that was made (a stale entry is what
			 * makes two sets match).
			 */
			if (st == GRB_J_TENTATIVE && end > pos) {
				if (end > grb_load_acquire(&buf->shm->offset))
					free_entry(&s->e[k], w);
				continue;
			}
			if (begin < old || end < begin ||
			    entry_pieces(buf, st, old, begin, end, xend,
					 grb_load_relaxed(&s->e[k].ts), L, E,
					 ps))
				return 0;
		}
	}
	/*
	 * A writer that committed here after @c was loaded, then freed its
	 * entry (alive: no entry left to see) or died (its entry now
	 * uncertain), is still counted in @missing: dead entries naming as
	 * many bytes (a stale one, a record committed before its writer
	 * died) would be taken for its record, and repair() writes over
	 * them before the counter's CAS can say no.  Acquire, as above: a
	 * free the loop saw (a release), or a death, comes with the
	 * commit's add, which this load then sees.
	 */
	if (grb_load_acquire(&buf->hot[slot].cc) != c)
		return 0;
	if (missing == 0) {
		/*
		 * Complete: its last committer died before delivering.  No
		 * CAS protects this path as the counter's protects the other,
		 * so check again, after the liveness verdicts, that it is
		 * still undelivered: a committer that delivered after the
		 * caller's check and then died before freeing its entry must
		 * not see its lap delivered twice (by then the ring may have
		 * come round to the slot).  The dead process's stores are
		 * all visible: the kernel ended it before /proc said so.
		 */
		if (ps->n == 0 || !stuck_lap(buf, L))
			return 0;
		/* Overwrite mode: a deliverer that died after publishing the
		 * id left only cc_sb to store; the reader may already have
		 * swapped the sub-buffer out, so nothing else is redone. */
		w = grb_load_acquire(&buf->ids[slot]);
		if (cfg->mode == GRB_MODE_OVERWRITE &&
		    (w & GRB_ID_NOREF) &&
		    (w & GRB_ID_LAP_MASK) ==
		    (grb__id_lap(buf, L) & GRB_ID_LAP_MASK))
			grb__deliver_publish(buf, slot, c);
		else
			grb__deliver(cfg, buf, c, L);
		info->subbufs++;
		grb_fetch_add_relaxed(&buf->shm->subbufs_recovered, 1);
		return 1;
	}
	phys = cfg->mode == GRB_MODE_OVERWRITE ?
		grb_load_acquire(&buf->ids[slot]) & GRB_ID_INDEX_MASK : slot;
	if (phys >= buf->nr_phys)
		return 0;
	qsort(ps->p, ps->n, sizeof(*ps->p), cmp_piece);
	v.cfg = cfg;
	v.buf = buf;
	v.L = L;
	v.base = buf->data + (phys << buf->subbuf_order);
	v.records = (c + missing - grb_load_acquire(&buf->cold[slot].cc_sb) -
		     buf->subbuf_size) >> 32;
	v.cold_ds = grb_load_relaxed(&buf->cold[slot].data_size);
	m = choose(ps, missing, &v);
	if (m == 0)
		return 0;
	phys = cfg->mode == GRB_MODE_OVERWRITE ?
		grb__overwrite_enter(buf, slot, L) : slot;
	/* The index comes from shared memory: checked, as the reader does. */
	if (phys >= buf->nr_phys)
		return 0;
	/* Counted in @info only once the CAS below makes it ours. */
	memset(&done, 0, sizeof(done));
	repair(cfg, buf, L, phys, ps->p, ps->n, &done);
	records = dead_records(ps->p, ps->n);
	/* acq_rel, as a commit: the repair's stores are published with the
	 * counter, and a CAS, so that one recoverer wins. */
	if (!grb_cas_acq_rel(&buf->hot[slot].cc, &c, c + missing))
		return 0;
	grb_fetch_add_relaxed(&buf->shm->lost_dead, records);
	grb_fetch_add_relaxed(&buf->shm->subbufs_recovered, 1);
	info->records += records;
	info->bytes += done.bytes;
	info->ambiguous += m > 1;
	info->subbufs++;
	grb__deliver(cfg, buf, c + missing, L);
	return 1;
}

/* Room for every piece a journal of nr_jslots slots can name. */
static int pieces_alloc(struct piece_set *ps, unsigned int nr_jslots)
{
	ps->n = 0;
	ps->cap = nr_jslots * GRB_JOURNAL_ENTRIES * PIECES_PER_ENTRY;
	ps->p = malloc(ps->cap * sizeof(*ps->p) + 1);
	ps->dmg = malloc(ps->cap * sizeof(*ps->dmg) + 1);
	ps->fidx = malloc(ps->cap * sizeof(*ps->fidx) + 1);
	if (ps->p && ps->dmg && ps->fidx)
		return 0;
	free(ps->p);
	free(ps->dmg);
	free(ps->fidx);
	return -1;
}

static void pieces_free(struct piece_set *ps)
{
	free(ps->p);
	free(ps->dmg);
	free(ps->fidx);
}

/*
 * Free the dead processes' entries that lie wholly before `upto` (every
 * sub-buffer there is delivered), so that their slots can be claimed
 * again.
 */
static void free_dead_entries(struct grb_buf *buf, uint64_t upto,
			      struct alive_cache *ac)
{
	uint64_t owner, w, end, xend;
	unsigned int i, k;

	for (i = 0; i < buf->nr_jslots; i++) {
		struct grb_jslot *s = &buf->journal[i];

		owner = grb_load_acquire(&s->owner);
		if (owner == 0)
			continue;
		for (k = 0; k < GRB_JOURNAL_ENTRIES; k++) {
			w = grb_load_acquire(&s->e[k].word);
			if (w >> GRB_J_STATE_SHIFT == GRB_J_NONE)
				continue;
			end = grb_load_relaxed(&s->e[k].end);
			xend = grb_load_relaxed(&s->e[k].xend);
			if ((xend > end ? xend : end) > upto)
				continue;
			if (alive(ac, owner, grb_load_relaxed(&s->start)))
				break;
			free_entry(&s->e[k], w);
		}
	}
}

int grb_buf_recover(struct grb_buf *buf, uint64_t deadline_ns,
		    struct grb_recover_info *info)
{
	const struct grb_config *cfg;
	struct grb_recover_info local;
	struct alive_cache ac;
	struct piece_set ps;
	uint64_t pos, top, L, k, first = UINT64_MAX, upto, t;
	int stuck = 0, done = 0;

	if (!buf)
		return -EINVAL;
	if (!buf->journal)
		return -EOPNOTSUPP;
	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	cfg = buf->chan->cfg;
	ac.n = 0;
	/* Acquire: every reservation of a closed sub-buffer happened before
	 * the CAS that closed it, and with it its journal entry. */
	pos = grb_load_acquire(&buf->shm->offset);
	top = grb__subbuf_trunc(buf, pos);
	/* Oldest first: at most one ring of sub-buffers can be stuck. */
	for (k = buf->buf_size >> buf->subbuf_order; k >= 1; k--) {
		if (top < k * buf->subbuf_size)
			continue;
		L = top - k * buf->subbuf_size;
		if (!stuck_lap(buf, L))
			continue;
		if (first == UINT64_MAX)
			first = L;
		stuck++;
	}
	upto = first == UINT64_MAX ? top : first;
	if (first == UINT64_MAX) {
		buf->stuck_pos = UINT64_MAX;
		free_dead_entries(buf, upto, &ac);
		return 0;
	}
	/* The deadline runs from when this sub-buffer was first seen
	 * stuck by this handle. */
	t = now_ns();
	if (buf->stuck_pos != first) {
		buf->stuck_pos = first;
		buf->stuck_since = t;
	}
	if (t - buf->stuck_since < deadline_ns) {
		info->waiting = (uint64_t)stuck;
		return 0;
	}
	if (pieces_alloc(&ps, (unsigned int)buf->nr_jslots))
		return -ENOMEM;
	for (k = buf->buf_size >> buf->subbuf_order; k >= 1; k--) {
		if (top < k * buf->subbuf_size)
			continue;
		L = top - k * buf->subbuf_size;
		if (!stuck_lap(buf, L))
			continue;
		if (recover_one(cfg, buf, L, pos, &ac, &ps, info))
			done++;
		else
			info->waiting++;
	}
	pieces_free(&ps);
	if (info->waiting == 0)
		free_dead_entries(buf, top, &ac);
	else
		free_dead_entries(buf, upto, &ac);
	return done;
}

int grb_channel_recover(struct grb_channel *chan, uint64_t deadline_ns,
			struct grb_recover_info *info)
{
	struct grb_recover_info one, sum;
	unsigned int i;
	int ret, done = 0;

	if (!chan)
		return -EINVAL;
	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < chan->nr_bufs; i++) {
		ret = grb_buf_recover(&chan->bufs[i], deadline_ns, &one);
		if (ret < 0)
			return ret;
		done += ret;
		sum.subbufs += one.subbufs;
		sum.records += one.records;
		sum.bytes += one.bytes;
		sum.ambiguous += one.ambiguous;
		sum.waiting += one.waiting;
	}
	if (info)
		*info = sum;
	return done;
}
