/*
 * model/recovery.pml - Promela model of recovering a sub-buffer that dead
 * writers left incomplete (design.md section 23; the model came before
 * the C code, src/recover.c).
 *
 * Scope.  Discard mode, one buffer of NSB = 2 sub-buffers of SBSIZE = 4
 * bytes, no sub-buffer headers.  NW (2 or 3) writer threads reserve and
 * commit NREC records each, of 1 or 2 bytes; at most MAXDEAD (1 or 2) of
 * them are killed, each at any step it could take.  A finalizer closes the
 * open sub-buffer once every writer is done or dead; a reader consumes
 * delivered sub-buffers; a recoverer (in practice the reader's process,
 * modelled apart) completes the laps dead writers left incomplete.
 * Positions, the cumulative commit counters cc_b/cc_r, delivery (cc_sb =
 * sb_b/sb_r, stored last) and the reservation are those of model/grb.pml,
 * simplified: no headers, no flusher, no overwrite, no timestamps.  A
 * record never spans sub-buffers; one that does not fit closes the open
 * sub-buffer by reserving its rest as padding together with the record,
 * with the same CAS, and commits the padding at once (grb.pml end_old).
 * close_pos[] is design.md's data_size as a position (end of the data),
 * so that a stale value from an earlier lap is recognisable (it is <= the
 * lap's start: positions never repeat).
 *
 * The journal.  Every thread that moves `offset` owns an entry ent[] =
 * {state, pos, size} in shared memory, written only by its owner: each
 * writer, and the finalizer (entry FIN).  The range is the whole range
 * the CAS claims, [old, e): for a closer that is the padding of the old
 * sub-buffer and the record in the next.  A writer
 *   - stores {TENTATIVE, old, e - old} before its reserve CAS from old;
 *   - after the CAS succeeds, a closer commits its padding and delivers
 *     the old sub-buffer if that add completed it, still TENTATIVE;
 *   - then stores OWNED (every piece but the record committed; an exact
 *     fill also stores close_pos in that step);
 *   - writes the record and stores COMMITTING just before its commit add;
 *   - commits, delivers if its add completed the lap, and only then
 *     stores NONE;
 *   - on a failed CAS loops and stores new tentative values; when refused
 *     (buffer full) clears the entry.
 * So OWNED says "the padding is committed, the record is not"; COMMITTING
 * "the padding is committed, the record may be"; TENTATIVE nothing (the
 * CAS may have failed, the padding may or may not be committed).  These
 * are the states of include/grb/impl/journal.h.  The finalizer's close,
 * with no record, stays TENTATIVE from before its CAS to NONE, as a
 * flush does in C (src/switch.c): its one add may or may not have
 * happened.  Death: at any step a writer may stop forever (dead[w],
 * standing for a pidfd check, which the recoverer may read and which is
 * exact).
 *
 * Pieces.  An entry's range splits at the sub-buffer end it crosses: a
 * closer's padding [old, b) and its record [b, e); any other range is one
 * piece (a writer's record, the finalizer's padding).  Each piece is
 * committed by one add or not at all, and lies in one sub-buffer, so a
 * lap meets at most one piece of each entry.  The piece of a dead entry
 * in the lap is committed (skipped) when it is the padding of an OWNED
 * or COMMITTING entry; forced when it is the record of an OWNED entry
 * (certainly not committed); unknown otherwise (the pieces of a
 * TENTATIVE entry, the record of a COMMITTING one).
 *
 * The rule (recoverer, for the sub-buffer at consumed, position c, slot s):
 *   1. acquire-load offset (off); go on only if off >= c + SBSIZE (closed)
 *      and the lap is not delivered;
 *   2. for each entry q: first load dead[q], then the entry (once a thread
 *      is dead its entry is frozen; loaded the other way round, the entry
 *      may be one its owner has since committed; the model keeps this
 *      order and has no mutant for the other).  An entry overlaps the
 *      lap when state != NONE and [pos, pos + size) meets [c, c + SBSIZE).
 *      An overlapping entry of a live thread: give up and wait for it to
 *      change.  A dead TENTATIVE entry with pos + size > off: ignored (its
 *      CAS would have moved offset there, so it failed).  Any other dead
 *      one: its piece in the lap, unless committed, is a candidate,
 *      forced or unknown;
 *   3. load cc: M = SBSIZE - (bytes committed in the lap);
 *   4. M == 0: the lap is complete but undelivered, so the commit that
 *      completed it died before its delivery; deliver it;
 *   5. M > 0: find the subsets of candidates that are pairwise disjoint,
 *      hold every forced piece and add up to M bytes.  None: wait.  One:
 *      damage exactly its pieces.  Several: damage their union U, and
 *      report the |U| - M committed bytes that destroys as ambiguous loss
 *      (n_amb).  The damaged records R are the record pieces damaged (of
 *      the union when ambiguous).  Then set data_size from close_pos if
 *      this lap's is set, else SBSIZE (the closer is dead before setting
 *      it, and its padding is damaged), and CAS cc from the loaded value
 *      to complete (+M bytes, +R records); the CAS success makes the
 *      recoverer the deliverer, which stores the damage mask and R in the
 *      sub-buffer's metadata.
 *
 * Why "every overlapping entry is dead" suffices.  Every reservation in the
 * lap is a CAS from a position below c + SBSIZE, and offset takes each
 * value once (positions never repeat), so every such CAS comes before the
 * CAS that moved offset to c + SBSIZE or beyond, which the recoverer's
 * load of offset reads (or a later one).  Each owner stored its tentative
 * entry before its CAS, so at the scan its entry is that reservation's
 * (TENTATIVE, OWNED or COMMITTING), or a later value, which the owner only
 * stores after committing and delivering.  Hence a piece of the lap that
 * is not committed shows an overlapping non-NONE entry, and if its owner
 * is live the recoverer waits; and no new reservation can enter the closed
 * lap.  With the entry stored after the CAS (MUTANT_ENTRY_AFTER_CAS) a
 * live writer between its CAS and that store is invisible.
 *
 * Why the subset rule is right.  Let T be the pieces of the lap that are
 * reserved and not committed.  Each is a candidate (its owner is dead,
 * its entry still names it, and a TENTATIVE entry that made its CAS ends
 * at or below off); they are pairwise disjoint, every forced piece is one
 * of them, and they add up to M.  So T always matches: the rule never
 * waits once the overlapping owners are dead (no stall), a unique match
 * is T, and a union U of several matches holds T, the rest of U being
 * committed bytes, exactly |U| - M of them.  A forced piece is in every
 * match, so with at most one unknown piece in the lap there is at most one
 * match: ambiguity needs two unknown pieces, which needs two dead entries
 * (one death: the candidates are exactly T, which the model asserts).  A
 * dead entry's candidate is stale when its owner committed it and died
 * before the next store (COMMITTING after the add, TENTATIVE after a
 * closer's padding add), or its CAS failed (TENTATIVE); the sum rule this
 * replaces (recover only when the candidates add up to M) stalled on
 * every such lap.  The pruning of TENTATIVE entries beyond off only drops
 * candidates that cannot be in T (in a closed lap, the padding of a
 * closer whose CAS failed): it can only remove matches, and is not needed
 * for safety (MUTANT_NO_PRUNE passes the two-death runs).  The record
 * count of an ambiguous lap is an over-count: the record pieces of U that
 * were committed (or never reserved: a stale TENTATIVE range) are counted
 * both in the lap's records and as damaged; g_over is that excess.
 *
 * Memory ordering the C code needs.  The entry stores are release (or
 * plain, followed by the reserve CAS, which is acq_rel); every change of
 * offset is an RMW (the finalizer's close too), so they form one release
 * sequence, and the recoverer's acquire load of offset that reads the
 * closing CAS (or later) synchronises with every reserving CAS of the lap
 * and sees each owner's tentative entry or a later value.  The OWNED
 * store comes after the padding add, whose acquire half keeps it there
 * (acq_rel), and the COMMITTING store before the record's add, whose
 * release half keeps it there; program order is what matters, as the
 * rule only trusts the entries of dead owners.  The recoverer loads each
 * entry with acquire after the liveness check (a pidfd poll is a
 * syscall, ordered after the death), so a dead owner's entry is its last
 * store, and an entry seen as NONE brings with it the owner's commit add
 * (release) and delivery, and the load of cc after the scan counts them.
 * The entry is one snapshot {state, pos, size}: one
 * 64-bit word (for instance the position in sub-buffer units of the
 * buffer plus the offset) or a per-entry sequence count the recoverer
 * checks; the model stores and loads it in one step.  The recovering
 * update of cc is a CAS, not an add: a second recoverer, or a commit the
 * rule failed to exclude, makes it fail instead of counting twice.  The
 * model is sequentially consistent; each step is one load, store or RMW
 * of the C code, with its local computation and ghost updates (the subset
 * search is local: one d_step).
 *
 * Ghost state, for the properties:
 *   own[b]   1 + the thread holding byte b reserved and not committed
 *   bad[b]   byte b was reserved by a dead writer and never committed
 *   tag[b]   position + 1 of the byte last reserved at b
 *   rst[b]   a record starts at byte b
 *   g_dmgc   committed bytes damaged by recoveries
 *   g_over   damaged records reported beyond those missing (ambiguous)
 * Properties: (1) no stall: a run that ends with the reader waiting is an
 * invalid end state; (2) the reader reads only bytes committed in the lap
 * it expects (tag, own, bad); at recovery every byte a dead thread holds
 * is damaged, and committed bytes are damaged only as the ambiguous loss
 * the recoverer reports (g_dmgc == n_amb); (3) recovery never completes a
 * lap while a live thread holds a byte of it, no commit adds to a
 * complete lap, no lap is delivered twice; (4) attempts = reserved +
 * refused, reserved = read + damaged - g_over, the damaged records exact
 * (g_over 0) when the match is unique; (5) a recovery is ambiguous only
 * with two unknown pieces in the lap; (6) the journal means what the rule
 * takes it to mean: a forced piece is not committed, a skipped one (a
 * pruned entry, an OWNED or COMMITTING closer's padding) holds no byte.
 *
 * Mutants (model/recovery.sh runs each; Spin must reject it):
 *   MUTANT_ENTRY_AFTER_CAS     the entry is stored only after the CAS
 *   MUTANT_IGNORE_TENTATIVE    the recoverer skips TENTATIVE entries
 *   MUTANT_IGNORE_LIVENESS     every entry counts as dead
 *   MUTANT_RECOVER_OPEN        recovers a sub-buffer not yet closed
 *   MUTANT_POS_IN_RANGE        tests pos in the lap, not range overlap
 *                              (misses a closer's record in the next one)
 *   MUTANT_FINAL_NO_JOURNAL    the finalizer's close is not journalled
 *   MUTANT_NONE_BEFORE_DELIVER a writer clears its entry before delivering
 *   MUTANT_NO_FINISH_DELIVERY  step 4 left out
 *   MUTANT_NO_RECOVERY         step 5 left out
 *   MUTANT_NO_DAMAGE_MASK, MUTANT_DAMAGE_WHOLE, MUTANT_NO_DAMAGE_RECS
 *                              the metadata left empty, set to the whole
 *                              lap, or without the damaged records
 *   SUBSET_RULE=0              damage every candidate (with two deaths)
 *   MUTANT_SUBSET_NOT_UNIQUE   the first match, without the uniqueness check
 *   MUTANT_NO_FORCED_OWNED     OWNED records not forced
 *   MUTANT_OWNED_BEFORE_PADDING a closer stores OWNED before its padding add
 *   MUTANT_COMMITTING_AFTER_ADD COMMITTING stored after the add
 *   MUTANT_PRUNE_AT_END        a TENTATIVE entry ending at off pruned too
 * With the subset rule MUTANT_ENTRY_AFTER_CAS and MUTANT_POS_IN_RANGE turn
 * a corruption into a stall (the live writer's bytes are missing from
 * every match), and MUTANT_IGNORE_TENTATIVE into a lap delivered twice
 * (the finalizer's TENTATIVE close is missed); without the rule they
 * complete a lap a live writer holds.  MUTANT_NO_PRUNE (no pruning)
 * passes, so it is not in the table.  REACH_* are probes that each
 * recovery path is taken.  The recoverer is a process apart from the
 * reader, so consumed may move under it: it compares cc and cc_sb with <
 * against the lap it looked at, never ==.
 *
 * Left out: headers (in C the new sub-buffer's header is a piece of its
 * own), the flusher, overwrite mode, timestamps, nesting and signal
 * handlers (one reservation per thread at a time), the live read, the
 * wake-up, data_size's neighbour ts_end, several recoverers, what the C
 * code does when a pid is reused (liveness is exact here), death of the
 * finalizer or recoverer, more than two deaths, the record count of an
 * ambiguous lap beyond the bound g_over, and what src/recover.c adds to
 * the rule: a discard's close (a piece of its own), the limits on pieces
 * and matches beyond which it waits, and the narrowing of several
 * matches to those whose sub-buffer decodes as its committed records
 * (safe only if the true set always decodes; the model keeps every
 * match).
 */

#ifndef NW
#define NW 2
#endif
#ifndef NREC
#define NREC 1
#endif
#ifndef MAXDEAD
#define MAXDEAD 1
#endif
#ifndef SUBSET_RULE
#define SUBSET_RULE 1
#endif
/* Record sizes: writer 0 writes SIZE_A then SIZE_B, writer 1 the other
 * way round, writer 2 SIZE_C twice. */
#ifndef SIZE_A
#define SIZE_A 1
#endif
#ifndef SIZE_B
#define SIZE_B 2
#endif
#ifndef SIZE_C
#define SIZE_C 1
#endif

#if defined(MUTANT_ENTRY_AFTER_CAS) || defined(MUTANT_IGNORE_TENTATIVE) || \
    defined(MUTANT_RECOVER_OPEN) || defined(MUTANT_IGNORE_LIVENESS) || \
    defined(MUTANT_POS_IN_RANGE) || defined(MUTANT_FINAL_NO_JOURNAL) || \
    defined(MUTANT_NONE_BEFORE_DELIVER) || defined(MUTANT_PRUNE_AT_END) || \
    defined(MUTANT_OWNED_BEFORE_PADDING)
#define MUTANT_RULE 1
#else
#define MUTANT_RULE 0
#endif

#define NSB 2
#define SBSIZE 4
#define BUFSIZE (NSB * SBSIZE)
#define FIN NW                  /* the finalizer's entry */
#define NE (NW + 1)             /* journal entries */

#define SLOT(p)   (((p) / SBSIZE) % NSB)
#define LAP(p)    ((p) / BUFSIZE)
#define SBOFF(p)  ((p) % SBSIZE)
#define TRUNC(p)  ((p) - SBOFF(p))
#define PHYS(p)   ((p) % BUFSIZE)
#define FULL(p)   ((LAP(p) + 1) * SBSIZE)   /* cc_b when p's lap is complete */
#define POP4(x)   (((x) & 1) + (((x) >> 1) & 1) + (((x) >> 2) & 1) + \
                   (((x) >> 3) & 1))          /* bits set, of 4 */

#define NONE   0
#define TENT   1
#define OWNED  2
#define COMMIT 3                /* COMMITTING */

/* Shared state of the (future) C code. */
byte offset, consumed;
byte cc_b[NSB], cc_r[NSB];      /* commit counter: bytes, records */
byte sb_b[NSB], sb_r[NSB];      /* cc_sb: the counter at the last delivery */
byte close_pos[NSB];            /* data_size, as a position */
byte meta_size[NSB], meta_recs[NSB];
byte meta_dmg[NSB];             /* damaged bytes of the lap (bit k: byte k) */
byte meta_dmgr[NSB];            /* damaged records of the lap */
byte ent_st[NE], ent_pos[NE], ent_sz[NE];   /* the journal */
bit  dead[NE];                  /* liveness (pidfd), exact */
bit  finalized;

/* Counters, and the bookkeeping of the scenario. */
byte n_attempt, n_ok, n_lost, n_read, n_dmg;
byte n_amb;                     /* committed bytes an ambiguous recovery
                                   reports destroying: |U| - M */
byte ndead;                     /* writers killed so far */
byte live;                      /* writers neither done nor dead */

/* Ghost state. */
byte own[BUFSIZE];
bit  bad[BUFSIZE];
byte tag[BUFSIZE];
bit  rst[BUFSIZE];              /* a record starts at this byte */
byte g_dmgc;                    /* committed bytes damaged by recoveries */
byte g_over;                    /* damaged records reported beyond those
                                   truly missing (ambiguous recoveries) */

/* The recoverer's scratch for the subset search, inside one d_step. */
hidden byte h_sub, h_i, h_bits, h_us, h_fs, h_rm;
hidden byte h_good;

/*
 * Stop thread w forever, as one of the choices of a step.  Only writers
 * die; the finalizer and the recoverer use w >= NW.
 */
#define DIE atomic { w < NW && ndead < MAXDEAD -> dead[w] = 1; ndead++; live-- }; \
	goto stopped

/* The reserve CAS's ghost side: thread w holds [from, to). */
inline claim(from, to)
{
	k = from;
	do
	:: k < to ->
		assert(own[PHYS(k)] == 0);
		own[PHYS(k)] = w + 1; bad[PHYS(k)] = 0; tag[PHYS(k)] = k + 1;
		rst[PHYS(k)] = 0;
		k++
	:: else -> break
	od;
	k = 0
}

/* Committed: [from, to) is no longer held. */
inline unclaim(from, to)
{
	k = from;
	do
	:: k < to -> own[PHYS(k)] = 0; k++
	:: else -> break
	od;
	k = 0
}

/* The commit add on the slot of position p: (3) never on a complete lap. */
inline cc_add(p, bytes, recs)
{
	cs = SLOT(p);
	assert(cc_b[cs] + bytes <= FULL(p));   /* commit into a complete lap */
	cc_b[cs] = cc_b[cs] + bytes;
	cc_r[cs] = cc_r[cs] + recs;
	tb = cc_b[cs]; tr = cc_r[cs]; cs = 0
}

/*
 * grb__deliver() when the add just made (tb, tr) completes p's lap: the
 * metadata (data size dsz, damage mask dm, damaged records dr), then
 * cc_sb last.  A writer may die between any two of these steps.
 */
inline deliver(p, dsz, dm, dr)
{
	if
	:: tb == FULL(p) ->
		if
		:: atomic {
			ds = SLOT(p);
			meta_size[ds] = dsz; meta_recs[ds] = tr - sb_r[ds];
			meta_dmg[ds] = dm; meta_dmgr[ds] = dr
		   }
		:: DIE
		fi;
		if
		:: atomic {
			assert(sb_b[ds] < tb);   /* delivered twice */
			sb_b[ds] = tb; sb_r[ds] = tr; ds = 0; tb = 0; tr = 0
		   }
		:: DIE
		fi
	:: atomic { tb != FULL(p) -> tb = 0; tr = 0 }
	fi
}

/* The OWNED store (an exact fill also closes its sub-buffer), and the
 * COMMITTING store: each one step of its own. */
#define STORE_OWNED \
		if \
		:: atomic { \
			ent_st[w] = OWNED; \
			if \
			:: SBOFF(e) == 0 -> close_pos[SLOT(e - 1)] = e \
			:: else \
			fi \
		   } \
		:: DIE \
		fi
#define STORE_COMMITTING \
		if \
		:: atomic { ent_st[w] = COMMIT } \
		:: DIE \
		fi

/*
 * Writer w: NREC records, of sizes sz1 then sz2.  Every step is one
 * branch of an `if` whose other branch is death.
 */
proctype writer(byte w; byte sz1; byte sz2)
{
	byte sz, nr, old, b, e, k, cs, ds, tb, tr;
	bit oe, ok;

	sz = sz1;
	do
	:: nr < NREC ->
		do
		::
		   if
		   :: atomic {
			/* Load offset (and consumed, for the full check:
			 * a stale one only refuses more, and a refusal
			 * counts only if offset has not moved). */
			old = offset;
			oe = (SBOFF(old) != 0 && SBOFF(old) + sz > SBSIZE);
			b = (oe -> TRUNC(old) + SBSIZE : old);
			e = b + sz;
			ok = (SBOFF(b) != 0 || TRUNC(b) - consumed < BUFSIZE)
		      }
		   :: DIE
		   fi;
		   if
		   :: atomic {
			!ok && offset == old ->
			/* Refused (lost_full): clear the entry. */
			n_attempt++; n_lost++; ent_st[w] = NONE
		      };
		      break
		   :: atomic { !ok && offset != old -> skip }
#ifndef MUTANT_ENTRY_AFTER_CAS
		   :: atomic {
			ok ->
			/* The journal entry, before the CAS. */
			ent_st[w] = TENT; ent_pos[w] = old; ent_sz[w] = e - old
		      };
#else
		   :: ok ->
#endif
		      if
		      :: atomic {
			   offset == old ->
			   offset = e; claim(old, e); rst[PHYS(b)] = 1;
			   n_attempt++; n_ok++
			 };
			 break
		      :: atomic { offset != old -> skip }   /* CAS failed */
		      :: DIE
		      fi
		   :: DIE
		   fi
		od;
		if
		:: ok ->
#ifdef MUTANT_ENTRY_AFTER_CAS
			/* Mutant: the entry only after the CAS. */
			if
			:: atomic {
				ent_st[w] = TENT; ent_pos[w] = old; ent_sz[w] = e - old
			   }
			:: DIE
			fi;
#endif
#ifdef MUTANT_OWNED_BEFORE_PADDING
			/* Mutant: OWNED before the padding is committed. */
			STORE_OWNED;
#endif
			if
			:: oe ->
				/* grb__end_old(): data_size, and the padding
				 * committed at once, still TENTATIVE. */
				if
				:: atomic {
					close_pos[SLOT(old)] = old;
					unclaim(old, b);
					cc_add(old, b - old, 0)
				   }
				:: DIE
				fi;
				deliver(old, close_pos[ds] - TRUNC(old), 0, 0)
			:: else
			fi;
#ifndef MUTANT_OWNED_BEFORE_PADDING
			/* Every piece but the record committed. */
			STORE_OWNED;
#endif
			/* The record is written here (plain stores), then
			 * COMMITTING is stored, then the add. */
#ifndef MUTANT_COMMITTING_AFTER_ADD
			STORE_COMMITTING;
#endif
			if
			:: atomic { unclaim(b, e); cc_add(b, sz, 1) }
			:: DIE
			fi;
#ifdef MUTANT_COMMITTING_AFTER_ADD
			/* Mutant: COMMITTING only after the add. */
			STORE_COMMITTING;
#endif
#ifdef MUTANT_NONE_BEFORE_DELIVER
			/* Mutant: the entry is cleared before the delivery. */
			if
			:: atomic { ent_st[w] = NONE }
			:: DIE
			fi;
			deliver(b, close_pos[ds] - TRUNC(b), 0, 0)
#else
			deliver(b, close_pos[ds] - TRUNC(b), 0, 0);
			if
			:: atomic { ent_st[w] = NONE }
			:: DIE
			fi
#endif
		:: else
		fi;
		atomic { nr++; sz = sz2; ok = 0; oe = 0; old = 0; b = 0; e = 0 }
	:: else -> break
	od;
	live--;
stopped:
	skip
}

/*
 * grb_channel_finalize(): once every writer is done or dead, close the
 * open sub-buffer and finalize.  The close is journalled like a
 * reservation with no record (its range is one padding piece) and, as a
 * flush in C, left TENTATIVE until NONE: its one commit may or may not
 * have happened.  Nothing else moves offset now, so its CAS cannot fail;
 * but the recoverer may look at any time.
 */
proctype finalizer()
{
	byte w = FIN, old, k, cs, ds, tb, tr;

	(live == 0);
	old = offset;
	if
	:: SBOFF(old) != 0 ->
#ifndef MUTANT_FINAL_NO_JOURNAL
		atomic {
			ent_st[FIN] = TENT; ent_pos[FIN] = old;
			ent_sz[FIN] = SBSIZE - SBOFF(old)
		};
#endif
		atomic {
			offset = TRUNC(old) + SBSIZE;   /* an RMW in C */
			claim(old, TRUNC(old) + SBSIZE)
		};
		atomic {
			close_pos[SLOT(old)] = old;
			unclaim(old, TRUNC(old) + SBSIZE);
			cc_add(old, SBSIZE - SBOFF(old), 0)
		};
		deliver(old, close_pos[ds] - TRUNC(old), 0, 0);
		ent_st[FIN] = NONE
	:: else
	fi;
	finalized = 1;
stopped:
	skip
}

/*
 * The recoverer: the rule of the header, for the sub-buffer at consumed.
 * It polls (a blocking guard here, so that a stall is an end state);
 * every decision is taken on loads made after the guard, one per step.
 */
#ifdef MUTANT_RECOVER_OPEN
#define CLOSED(c) 1             /* Mutant: open sub-buffers too. */
#else
#define CLOSED(c) (offset >= (c) + SBSIZE)
#endif

#if defined(MUTANT_POS_IN_RANGE)
/* Mutant: pos in the lap, not the range. */
#define OVERLAP (st != NONE && p >= c && p < c + SBSIZE)
#else
#define OVERLAP (st != NONE && p < c + SBSIZE && p + z > c)
#endif

#if defined(MUTANT_PRUNE_AT_END)
/* Mutant: a tentative entry ending at offset counts as failed too. */
#define BEYOND (p + z >= off)
#elif defined(MUTANT_NO_PRUNE)
#define BEYOND 0                /* Mutant: no pruning (harmless) */
#else
#define BEYOND (p + z > off)
#endif

#if defined(MUTANT_NO_FORCED_OWNED)
#define FORCED 0                /* Mutant: OWNED records not forced. */
#else
#define FORCED (st == OWNED && rec)
#endif

/* Damage the candidates of subset set: mask, and r the records. */
inline damage_set(set)
{
	h_i = 0; h_rm = 0; mask = 0;
	do
	:: h_i < nc ->
		if
		:: (set >> h_i) & 1 -> mask = mask | cm[h_i]; h_rm = h_rm | cr[h_i]
		:: else
		fi;
		h_i++
	:: else -> break
	od;
	r = POP4(h_rm)
}

proctype recoverer()
{
	byte w = NE;
	byte c, s, off, q, st, p, z, lo, hi, rs, lcb, lcr, m, sum, mask, r, dsz;
	byte nc, nunk, nm, tn;
	byte cm[NE], cr[NE];    /* candidate pieces: bytes, record start */
	bit  cf[NE];            /* candidate is forced (OWNED record) */
	byte k, cs, ds, tb, tr;
	bit dq, ok, rec, amb;
#ifdef REACH_TENTATIVE
	bit tentdead;
#endif

	do
	:: atomic {
		/* consumed is the reader's own; the load of offset is the
		 * acquire load the rule starts with. */
		CLOSED(consumed) && sb_b[SLOT(consumed)] < FULL(consumed) ->
		c = consumed; s = SLOT(c); off = offset
	   };
		q = 0; ok = 1;
		do
		:: q < NE ->
#ifdef MUTANT_IGNORE_LIVENESS
			dq = 1;         /* Mutant: every entry counts as dead. */
#else
			dq = dead[q];   /* liveness first, then the entry */
#endif
			atomic {
				st = ent_st[q]; p = ent_pos[q]; z = ent_sz[q];
#ifdef MUTANT_IGNORE_TENTATIVE
				/* Mutant: tentative entries are not looked at. */
				if :: st == TENT -> st = NONE :: else fi;
#endif
				if
				:: OVERLAP ->
					if
					:: dq && st == TENT && BEYOND ->
						/* Its CAS cannot have succeeded:
						 * (6) it holds nothing. */
						assert(own[PHYS(p)] != q + 1)
#ifdef REACH_PRUNE
						; assert(0)   /* reachable? */
#endif
					:: dq && !(st == TENT && BEYOND) ->
						/* The piece in this lap: a closer's
						 * padding or record, or the whole. */
						rs = TRUNC(p) + SBSIZE;
						if
						:: rs < p + z && c < rs ->
							lo = p; hi = rs; rec = 0
						:: rs < p + z && c >= rs ->
							lo = rs; hi = p + z; rec = (q != FIN)
						:: else ->
							lo = p; hi = p + z; rec = (q != FIN)
						fi;
						assert(lo >= c && hi <= c + SBSIZE);
						if
						:: !rec && st != TENT ->
							/* Padding under OWNED or
							 * COMMITTING: committed; (6) it
							 * holds nothing. */
							assert(own[PHYS(lo)] != q + 1)
						:: else ->
#ifdef REACH_TENTATIVE
							tentdead = tentdead || st == TENT;
#endif
							cf[nc] = FORCED;
							/* (6) a forced piece is not
							 * committed. */
							if
							:: cf[nc] -> assert(own[PHYS(lo)] == q + 1)
							:: else
							fi;
							nunk = nunk + !(st == OWNED && rec);
							cm[nc] = ((1 << (hi - lo)) - 1) << (lo - c);
							cr[nc] = (rec -> 1 << (lo - c) : 0);
							sum = sum + hi - lo;
							nc++
						fi
					:: else -> ok = 0
					fi
				:: else
				fi;
				lo = 0; hi = 0; rs = 0; rec = 0
			};
			if
			:: !ok ->
				/* A live owner: wait until it moves on or dies. */
				(dead[q] || ent_st[q] != st || ent_pos[q] != p ||
				 ent_sz[q] != z);
				break
			:: else -> q++
			fi
		:: else -> break
		od;
		if
		:: ok ->
			atomic {
				lcb = cc_b[s]; lcr = cc_r[s];
				m = (lcb < FULL(c) -> FULL(c) - lcb : 0)
			};
			if
			:: m == 0 ->
				/* Complete; if not delivered, its last
				 * committer died before delivering.  (A
				 * recoverer apart from the reader may find the
				 * lap delivered, consumed and the slot's next
				 * lap delivered too: hence <, not !=.) */
#ifndef MUTANT_NO_FINISH_DELIVERY
				if
				:: atomic {
					sb_b[s] < FULL(c) ->
#ifdef REACH_FINISH
					assert(0);   /* reachable? */
#endif
					meta_size[s] = close_pos[s] - c;
					meta_recs[s] = lcr - sb_r[s];
					meta_dmg[s] = 0; meta_dmgr[s] = 0
				   };
				   atomic {
					assert(sb_b[s] < lcb);   /* delivered twice */
					sb_b[s] = lcb; sb_r[s] = lcr
				   }
				:: else
				fi
#else
				/* Mutant: leaves the delivery to the writers. */
				(sb_b[s] >= FULL(c))
#endif
			:: else ->
#if MAXDEAD == 1 && !MUTANT_RULE
				/* One death: the dead piece is exactly what is
				 * missing. */
				assert(sum == m);
#endif
				/* The subsets of pairwise disjoint candidate
				 * pieces that hold every forced one and add up
				 * to m: nm of them, h_us their union, h_fs the
				 * first. */
				d_step {
#if SUBSET_RULE
					nm = 0; h_us = 0; h_fs = 0; h_sub = 1;
					do
					:: h_sub < (1 << nc) ->
						h_bits = 0; h_good = 1; h_i = 0;
						do
						:: h_i < nc ->
							if
							:: (h_sub >> h_i) & 1 ->
								h_good = h_good && !(h_bits & cm[h_i]);
								h_bits = h_bits | cm[h_i]
							:: else ->
								h_good = h_good && !cf[h_i]
							fi;
							h_i++
						:: else -> break
						od;
						if
						:: h_good && POP4(h_bits) == m ->
							nm++; h_us = h_us | h_sub;
							if
							:: nm == 1 -> h_fs = h_sub
							:: else
							fi
						:: else
						fi;
						h_sub++
					:: else -> break
					od;
#ifdef MUTANT_SUBSET_NOT_UNIQUE
					/* Mutant: the first match, unchecked. */
					if
					:: nm > 1 -> nm = 1; h_us = h_fs
					:: else
					fi;
#endif
#else
					/* Every candidate, unchecked. */
					nm = 1; h_us = (1 << nc) - 1;
#endif
					amb = (nm > 1);
					damage_set(h_us);
					/* (5) ambiguous only when the journal
					 * leaves two pieces unknown. */
					assert(!amb || nunk >= 2);
					h_sub = 0; h_bits = 0; h_good = 0; h_i = 0;
					h_us = 0; h_fs = 0; h_rm = 0;
					nc = 0;
					do
					:: nc < NE -> cm[nc] = 0; cr[nc] = 0; cf[nc] = 0; nc++
					:: else -> break
					od;
					nc = 0; nunk = 0
				};
				if
				:: nm == 0 ->
					/* No subset: wait (forever, unless the
					 * rule missed a live commit). */
					(cc_b[s] != lcb);
					goto again
				:: else
				fi;
#ifdef MUTANT_NO_RECOVERY
				/* Mutant: waits for the writers to complete it. */
				(cc_b[s] != lcb);
				goto again;
#endif
				/* data_size: this lap's, or the whole lap when its
				 * closer died before storing it. */
				atomic { dsz = (close_pos[s] > c -> close_pos[s] - c : SBSIZE) };
				atomic {
					if
					:: cc_b[s] == lcb ->
						/* (3): no live thread holds a byte. */
						k = 0;
						do
						:: k < SBSIZE ->
							assert(own[PHYS(c + k)] == 0 ||
							       dead[own[PHYS(c + k)] - 1]);
							k++
						:: else -> break
						od;
#ifdef MUTANT_DAMAGE_WHOLE
						mask = 15;   /* Mutant: damage it all. */
#endif
						/* (2) committed bytes are damaged only
						 * by an ambiguous recovery, which counts
						 * them. */
						k = 0;
						do
						:: k < SBSIZE ->
							if
							:: own[PHYS(c + k)] == 0 && (mask >> k) & 1 ->
								g_dmgc++
							:: else
							fi;
							k++
						:: else -> break
						od;
						if
						:: amb -> n_amb = n_amb + POP4(mask) - m
						:: else
						fi;
						assert(g_dmgc == n_amb);
						/* (2) every byte a dead thread holds is
						 * damaged; tn: the records it holds. */
						k = 0; tn = 0;
						do
						:: k < SBSIZE ->
							assert(own[PHYS(c + k)] == 0 || (mask >> k) & 1);
							if
							:: own[PHYS(c + k)] != 0 ->
								tn = tn + rst[PHYS(c + k)];
								own[PHYS(c + k)] = 0;
								bad[PHYS(c + k)] = 1
							:: else
							fi;
							k++
						:: else -> break
						od;
						k = 0;
						/* (4) the damaged records: exact, or an
						 * over-count when ambiguous. */
						assert(r >= tn);
						if
						:: amb -> g_over = g_over + r - tn
						:: else -> assert(r == tn)
						fi;
						tn = 0;
#ifdef REACH_RECOVER
						assert(0);   /* reachable? */
#endif
#ifdef REACH_NO_CLOSE
						assert(close_pos[s] > c);   /* reachable? */
#endif
#ifdef REACH_TENTATIVE
						assert(!tentdead);   /* reachable? */
#endif
#ifdef REACH_DECIDED
						/* reachable? (the sum rule waited here) */
						assert(amb || sum == m);
#endif
#ifdef REACH_AMBIGUOUS
						/* reachable? committed bytes lost */
						assert(!amb || POP4(mask) == m);
#endif
						cc_b[s] = FULL(c);
#ifndef MUTANT_NO_DAMAGE_RECS
						cc_r[s] = cc_r[s] + r;
#endif
						tb = cc_b[s]; tr = cc_r[s]; ok = 1
					:: else -> ok = 0
					fi
				};
				if
				:: ok ->
#ifdef MUTANT_NO_DAMAGE_MASK
					deliver(c, dsz, 0, r)
#else
					deliver(c, dsz, mask, r)
#endif
				:: else
				fi
			fi
		:: else
		fi;
again:
		atomic {
			c = 0; s = 0; off = 0; q = 0; st = 0; p = 0; z = 0;
			lcb = 0; lcr = 0; m = 0; sum = 0; mask = 0; r = 0;
			dsz = 0; nm = 0; dq = 0; ok = 0; amb = 0;
			/* Candidates left by a scan that met a live owner. */
			do
			:: nc > 0 -> nc--; cm[nc] = 0; cr[nc] = 0; cf[nc] = 0
			:: else -> break
			od;
			nunk = 0
#ifdef REACH_TENTATIVE
			; tentdead = 0
#endif
		}
	:: atomic { finalized && consumed >= offset } -> break
	od;
stopped:
	skip
}

/*
 * The reader: get_next, read the data skipping damaged bytes, put_next;
 * it waits (blocks) for each delivery, so a stall is an invalid end state.
 */
proctype reader()
{
	byte c, s, k, n;

	do
	:: atomic { c = consumed; s = SLOT(c) };
	   if
	   :: atomic {
		sb_b[s] == FULL(c) ->
		n = meta_size[s]; k = 0;
		do
		:: k < n ->
			if
			:: (meta_dmg[s] >> k) & 1 -> skip
			:: else ->
				/* (2): committed, in this lap, never a dead
				 * writer's uncommitted byte. */
				assert(!bad[PHYS(c + k)]);
				assert(own[PHYS(c + k)] == 0);
				assert(tag[PHYS(c + k)] == c + k + 1)
			fi;
			k++
		:: else -> break
		od;
		n_read = n_read + meta_recs[s] - meta_dmgr[s];
		n_dmg = n_dmg + meta_dmgr[s];
		k = 0; n = 0
	      };
	      consumed = c + SBSIZE     /* put_next: release store */
	   :: atomic { finalized && c >= offset } -> break
	   fi
	od;
	/* (4) Accounting (exact but for the over-count of ambiguous
	 * recoveries). */
	assert(n_attempt == n_ok + n_lost);
	assert(n_ok == n_read + n_dmg - g_over)
}

init {
	atomic {
		live = NW;
		run writer(0, SIZE_A, SIZE_B);
		run writer(1, SIZE_B, SIZE_A);
#if NW > 2
		run writer(2, SIZE_C, SIZE_C);
#endif
		run finalizer();
		run recoverer();
		run reader()
	}
}
