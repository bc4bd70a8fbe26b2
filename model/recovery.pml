/*
 * model/recovery.pml - Promela model of recovering a sub-buffer that a dead
 * writer left incomplete (a protocol not yet in the C code: design.md
 * section 17, "Crash recovery").
 *
 * Scope.  Discard mode, one buffer of NSB = 2 sub-buffers of SBSIZE = 4
 * bytes, no sub-buffer headers.  NW (2 or 3) writer threads reserve and
 * commit NREC records each, of 1 or 2 bytes; at most MAXDEAD of them are
 * killed, each at any step it could take.  A finalizer closes the open
 * sub-buffer once every writer is done or dead; a reader consumes
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
 *   - after the CAS succeeds, stores OWNED (an exact fill also stores
 *     close_pos in that step; the recoverer cannot tell the two apart);
 *   - pads (closer), commits, delivers if its add completed the lap, and
 *     only then stores NONE;
 *   - on a failed CAS loops and stores new tentative values; when refused
 *     (buffer full) clears the entry.
 * Death: at any step a writer may stop forever (dead[w], standing for a
 * pidfd check, which the recoverer may read and which is exact).
 *
 * The rule (recoverer, for the sub-buffer at consumed, position c, slot s):
 *   1. acquire-load offset; go on only if offset >= c + SBSIZE (closed)
 *      and the lap is not delivered;
 *   2. for each entry q: first load dead[q], then the entry (once a thread
 *      is dead its entry is frozen; loaded the other way round, the entry
 *      may be one its owner has since committed; the model keeps this
 *      order and has no mutant for the other).  An entry overlaps the
 *      lap when state != NONE and [pos, pos + size) meets [c, c + SBSIZE).
 *      An overlapping entry of a live thread: give up and wait for it to
 *      change.  One of a dead thread, TENTATIVE or OWNED alike: a
 *      candidate; its range clipped to the lap goes into the damage mask,
 *      its size into `sum`, and the record it names (the part after the
 *      padding, for a range that crosses a sub-buffer end) into R when
 *      that record starts in the lap;
 *   3. load cc: M = SBSIZE - (bytes committed in the lap);
 *   4. M == 0: the lap is complete but undelivered, so the commit that
 *      completed it died before its delivery; deliver it (a recoverer
 *      must do this too: the protocol as first stated missed the case);
 *   5. M > 0: recover only if sum == M (SUM_GUARD), else wait.  Then set
 *      data_size from close_pos if this lap's is set, else SBSIZE (the
 *      closer is dead before setting it, and its padding is in the mask),
 *      and CAS cc from the loaded value to complete (+M bytes, +R
 *      records); the CAS success makes the recoverer the deliverer, which
 *      stores the damage mask and R in the sub-buffer's metadata.
 *
 * Why "every overlapping entry is dead" suffices.  Every reservation in the
 * lap is a CAS from a position below c + SBSIZE, and offset takes each
 * value once (positions never repeat), so every such CAS comes before the
 * CAS that moved offset to c + SBSIZE or beyond, which the recoverer's
 * load of offset reads (or a later one).  Each owner stored its tentative
 * entry before its CAS, so at the scan its entry is that reservation's
 * (TENTATIVE or OWNED), or a later value, which the owner only stores after
 * committing and delivering.  Hence a reservation of the lap that is not
 * committed shows an overlapping non-NONE entry, and if its owner is live
 * the recoverer waits; and no new reservation can enter the closed lap.
 * With the entry stored after the CAS (MUTANT_ENTRY_AFTER_CAS) a live
 * writer between its CAS and that store is invisible.
 *
 * TENTATIVE entries.  A dead TENTATIVE entry either made its CAS (died
 * before storing OWNED) or did not (died before it, or after it failed).
 * Exactly one CAS leaves each value of offset, so it made its CAS iff no
 * other reservation starts at its pos; the recoverer can see OWNED
 * entries but not committed reservations, so it cannot decide that from
 * the journal.  The byte count decides it: the bytes not committed in the
 * lap are exactly the reservations not committed, each of which has an
 * overlapping entry; so the true set U of damaged ranges is a subset of
 * the candidates C, and sum(C) == M implies C == U (every candidate
 * covers at least one byte).  With one death (MAXDEAD = 1) there is only
 * one dead entry, and the lap can be incomplete with no live overlapping
 * entry only if that entry is the reservation still missing: sum == M
 * always, which the model asserts.  With two deaths the candidates can
 * exceed M: a dead writer that committed and died before storing NONE, or
 * a stale TENTATIVE entry whose pos another (committed) reservation took,
 * next to a truly missing record.  The recoverer cannot then tell which
 * range is damaged: it must wait forever (the buffer stalls; check
 * two-deaths-stall) or damage more than the dead record, possibly a live
 * writer's committed record (check two-deaths-no-guard).  Without
 * SUM_GUARD, the rule damages every candidate.
 *
 * Memory ordering the C code needs.  The entry stores are release (or
 * plain, followed by the reserve CAS, which is acq_rel); every change of
 * offset is an RMW (the finalizer's close too), so they form one release
 * sequence, and the recoverer's acquire load of offset that reads the
 * closing CAS (or later) synchronises with every reserving CAS of the lap
 * and sees each owner's tentative entry or a later value.  The recoverer
 * loads each entry with acquire after the liveness check (a pidfd poll is
 * a syscall, ordered after the death), so an entry seen as NONE brings
 * with it the owner's commit add (release) and delivery, and the load of
 * cc after the scan counts them.  The entry is one snapshot {state, pos,
 * size}: one 64-bit word (for instance the position in sub-buffer units
 * of the buffer plus the offset) or a per-entry sequence count the
 * recoverer checks; the model stores and loads it in one step.  The
 * recovering update of cc is a CAS, not an add: a second recoverer, or a
 * commit the rule failed to exclude, makes it fail instead of counting
 * twice.  The model is sequentially consistent; each step is one load,
 * store or RMW of the C code, with its local computation and ghost
 * updates.
 *
 * Ghost state, for the properties:
 *   own[b]   1 + the thread holding byte b reserved and not committed
 *   bad[b]   byte b was reserved by a dead writer and never committed
 *   tag[b]   position + 1 of the byte last reserved at b
 * Properties: (1) no stall: a run that ends with the reader waiting is an
 * invalid end state; (2) the reader reads only bytes committed in the lap
 * it expects (tag, own, bad), and the damage mask at recovery is exactly
 * the bytes dead threads hold; (3) recovery never completes a lap while a
 * live thread holds a byte of it, and no commit adds to a complete lap;
 * (4) attempts = reserved + refused, reserved = read + damaged.
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
 * With SUM_GUARD the first two turn a corruption into a stall (the live
 * writer's bytes are missing from the sum); without it they complete a
 * lap a live writer holds.  REACH_* are probes that each recovery path is
 * taken.  The recoverer is a process apart from the reader, so consumed
 * may move under it: it compares cc and cc_sb with < against the lap it
 * looked at, never with ==.
 *
 * Left out: headers, the flusher, overwrite mode, timestamps, nesting and
 * signal handlers (one reservation per thread at a time), the live read,
 * the wake-up, data_size's neighbour ts_end, several recoverers, what the
 * C code does when a pid is reused (liveness is exact here), death of the
 * finalizer or recoverer, and the shadowing refinement (a dead TENTATIVE
 * entry whose pos equals a dead OWNED entry's failed its CAS) that would
 * resolve some two-death cases.
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
#ifndef SUM_GUARD
#define SUM_GUARD 1
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
    defined(MUTANT_NONE_BEFORE_DELIVER)
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

#define NONE  0
#define TENT  1
#define OWNED 2

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
byte ndead;                     /* writers killed so far */
byte live;                      /* writers neither done nor dead */

/* Ghost state. */
byte own[BUFSIZE];
bit  bad[BUFSIZE];
byte tag[BUFSIZE];

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
			   offset = e; claim(old, e); n_attempt++; n_ok++
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
			if
			:: atomic {
#ifdef MUTANT_ENTRY_AFTER_CAS
				/* Mutant: the entry only after the CAS. */
				ent_pos[w] = old; ent_sz[w] = e - old;
#endif
				ent_st[w] = OWNED;
				/* An exact fill closes its sub-buffer. */
				if
				:: SBOFF(e) == 0 -> close_pos[SLOT(e - 1)] = e
				:: else
				fi
			   }
			:: DIE
			fi;
			if
			:: oe ->
				/* grb__end_old(): data_size, and the padding
				 * committed at once. */
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
			/* The record is written here (plain stores), then
			 * committed. */
			if
			:: atomic { unclaim(b, e); cc_add(b, sz, 1) }
			:: DIE
			fi;
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
 * open sub-buffer (journalled like a reservation) and finalize.  Nothing
 * else moves offset now, but the recoverer may look at any time.
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
			ent_st[FIN] = OWNED; ent_pos[FIN] = old;
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

proctype recoverer()
{
	byte w = NE;
	byte c, s, q, st, p, z, lo, hi, rs, lcb, lcr, m, sum, mask, r, dsz;
	byte k, cs, ds, tb, tr;
	bit dq, ok;
#ifdef REACH_TENTATIVE
	bit tentdead;
#endif

	do
	:: atomic {
		/* consumed is the reader's own; the load of offset is the
		 * acquire load the rule starts with. */
		CLOSED(consumed) && sb_b[SLOT(consumed)] < FULL(consumed) ->
		c = consumed; s = SLOT(c)
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
#ifdef MUTANT_POS_IN_RANGE
				/* Mutant: pos in the lap, not the range. */
				:: st != NONE && p >= c && p < c + SBSIZE ->
#else
				:: st != NONE && p < c + SBSIZE && p + z > c ->
#endif
					if
					:: dq ->
#ifdef REACH_TENTATIVE
						tentdead = tentdead || st == TENT;
#endif
						lo = (p > c -> p : c);
						hi = (p + z < c + SBSIZE -> p + z : c + SBSIZE);
						sum = sum + hi - lo;
						mask = mask | (((1 << (hi - lo)) - 1) << (lo - c));
						rs = (TRUNC(p) + SBSIZE < p + z -> TRUNC(p) + SBSIZE : p);
						r = r + (rs >= c && rs < c + SBSIZE)
					:: else -> ok = 0
					fi
				:: else
				fi;
				lo = 0; hi = 0; rs = 0
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
				/* One death: the dead entry is exactly what is
				 * missing. */
				assert(sum == m);
#endif
#if SUM_GUARD
				if
				:: sum != m ->
					/* Ambiguous: wait (forever, unless the
					 * rule missed a live commit). */
					(cc_b[s] != lcb);
					goto again
				:: else
				fi;
#endif
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
						/* (2): the mask is exactly the held bytes. */
#ifdef MUTANT_DAMAGE_WHOLE
						mask = 15;   /* Mutant: damage it all. */
#endif
						k = 0;
						do
						:: k < SBSIZE ->
							assert((own[PHYS(c + k)] != 0) ==
							       ((mask >> k) & 1));
							if
							:: own[PHYS(c + k)] != 0 ->
								own[PHYS(c + k)] = 0;
								bad[PHYS(c + k)] = 1
							:: else
							fi;
							k++
						:: else -> break
						od;
						k = 0;
#ifdef REACH_RECOVER
						assert(0);   /* reachable? */
#endif
#ifdef REACH_NO_CLOSE
						assert(close_pos[s] > c);   /* reachable? */
#endif
#ifdef REACH_TENTATIVE
						assert(!tentdead);   /* reachable? */
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
			c = 0; s = 0; q = 0; st = 0; p = 0; z = 0; lcb = 0;
			lcr = 0; m = 0; sum = 0; mask = 0; r = 0; dsz = 0;
			dq = 0; ok = 0
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
	/* (4) Accounting. */
	assert(n_attempt == n_ok + n_lost);
	assert(n_ok == n_read + n_dmg)
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
