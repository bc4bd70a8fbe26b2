/*
 * model/grb.pml - Promela model of grb's lock-less buffer algorithm.
 *
 * One buffer of NSB sub-buffers of SBSIZE bytes; every sub-buffer starts
 * with an HDR-byte header reserved together with its first record.  Writer
 * processes reserve, write and commit records of different sizes; one of
 * them is "interrupted" between reserve and commit by a nested writer, as
 * a signal handler would be.  One flusher closes the open sub-buffer (or
 * produces a header-only one), a finalizer flushes once every writer is
 * done, and one reader consumes sub-buffers until the buffer is finalized
 * and drained.  OVERWRITE selects flight-recorder mode (reader spare, push,
 * id swap) or discard mode.  docs/design.md maps each step to the C code.
 *
 * Ghost state, not in the C code, turns the properties into assertions:
 *   owner[b]   writer holding physical byte b between reserve and commit
 *   reading[b] the reader is reading byte b
 *   tag[b]     position + 1 of the byte last written at b, so a reader
 *              can tell data of the lap it expects from older or newer data
 *
 * Memory model.  The model is sequentially consistent.  grb's C code makes
 * every decision shared between threads either with a read-modify-write
 * on one word (reserve and flush CAS on offset, commit add, push and claim
 * CAS on consumed, NOREF clear and reader swap CAS on an id), whose
 * atomicity and single modification order C11 guarantees at any memory
 * order, or by reading with acquire a value published with release after
 * the data it guards (delivery publishes cc_sb last; the commit add is a
 * release; put_next publishes consumed).  A reordering could only matter
 * if a thread acted on a stale value: a stale consumed makes a writer try
 * a push its CAS then refuses, a stale id makes the NOREF CAS fail and
 * retry, and no decision reads two plain words that a Dekker-style store
 * pair would order.  Each step below that stands for an acquire load or a
 * CAS therefore reads the latest value, and each publication is one step
 * taken after the writes it publishes.
 */

#ifndef NSB
#define NSB 2
#endif
#ifndef SBSIZE
#define SBSIZE 4
#endif
#ifndef HDR
#define HDR 1
#endif
#ifndef OVERWRITE
#define OVERWRITE 1
#endif
/* Record sizes of the writers; the nested writer uses SIZE_N. */
#ifndef SIZE_A
#define SIZE_A 1
#endif
#ifndef SIZE_B
#define SIZE_B 2
#endif
#ifndef SIZE_N
#define SIZE_N 1
#endif
/* Records per writer (the nested writer adds one to the first). */
#ifndef NREC
#define NREC 1
#endif
#ifndef FLUSH_EMPTY
#define FLUSH_EMPTY 1
#endif

#define BUFSIZE (NSB * SBSIZE)
#if OVERWRITE
#define NPHYS (NSB + 1)
#else
#define NPHYS NSB
#endif
#define NBYTES (NPHYS * SBSIZE)

#define SLOT(p)   (((p) / SBSIZE) % NSB)
#define LAP(p)    ((p) / BUFSIZE)
#define SBOFF(p)  ((p) % SBSIZE)
#define TRUNC(p)  ((p) - SBOFF(p))

/* Shared state of the C code (include/grb/impl/layout.h). */
byte offset;                 /* write position */
byte consumed;               /* read position */
byte cc_b[NSB];              /* commit counter: bytes (cumulative) */
byte cc_r[NSB];              /* commit counter: records (cumulative) */
byte sb_b[NSB];              /* cc_sb: bytes at the last delivery */
byte sb_r[NSB];              /* cc_sb: records at the last delivery */
byte rec_lap[NSB];           /* records of the last delivered lap */
byte close_size[NSB];        /* data size set by the closing reservation */
byte id_idx[NSB];            /* id word: physical index */
bit  id_noref[NSB];          /* id word: NOREF */
byte id_lap[NSB];            /* id word: lap */
byte spare = NSB;            /* reader's spare (reader_id) */
byte meta_size[NPHYS];       /* grb_subbuf_meta */
byte meta_recs[NPHYS];
bit  finalized;

/* Counters of the C code. */
byte n_ok, n_attempt, n_full, n_wrap, n_big, n_over, n_read;
byte running;                 /* writers and flusher still running */

/* Ghost state. */
byte owner[NBYTES];
bit  reading[NBYTES];
byte tag[NBYTES];

/* Mark bytes [from, to) of a sub-buffer as written by process w. */
inline mark(ph, from, to, pos0, w)
{
	atomic {
		k = from;
		do
		:: k < to ->
			assert(owner[ph * SBSIZE + k] == 0);
			assert(!reading[ph * SBSIZE + k]);
			owner[ph * SBSIZE + k] = w;
			tag[ph * SBSIZE + k] = pos0 + k + 1;
			k++
		:: else -> break
		od;
		k = 0
	}
}

inline unmark(ph, from, to)
{
	atomic {
		k = from;
		do
		:: k < to -> owner[ph * SBSIZE + k] = 0; k++
		:: else -> break
		od;
		k = 0
	}
}

/* src/deliver.c grb__deliver(): once per lap, by the completing commit. */
inline deliver(p, tb, tr)
{
	/* Metadata, records_lap and NOREF + lap, then cc_sb last. */
	atomic {
		ds = SLOT(p);
#if OVERWRITE
		dph = id_idx[ds];
#else
		dph = ds;
#endif
		meta_size[dph] = close_size[ds];
		meta_recs[dph] = tr - sb_r[ds];
		rec_lap[ds] = tr - sb_r[ds];
#if OVERWRITE
		id_noref[ds] = 1;
		id_lap[ds] = LAP(p);
#endif
		dph = 0
	};
	atomic { sb_b[ds] = tb; sb_r[ds] = tr; ds = 0 }   /* release store of cc_sb */
}

/* grb_commit() and grb__commit_bytes(): one atomic add, then the check. */
inline commit_add(p, bytes, recs)
{
	atomic {
		cs = SLOT(p);
		cc_b[cs] = cc_b[cs] + bytes;
		cc_r[cs] = cc_r[cs] + recs;
		tb = cc_b[cs];
		tr = cc_r[cs]
	};
#ifdef MUTANT_DELIVER_EARLY
	/* Mutant: delivers one byte before the lap is complete. */
	if
	:: tb + 1 == (LAP(p) + 1) * SBSIZE -> deliver(p, tb + 1, tr)
	:: tb == (LAP(p) + 1) * SBSIZE -> skip
	:: else -> skip
	fi
#else
	if
	:: tb == (LAP(p) + 1) * SBSIZE -> deliver(p, tb, tr)
	:: else -> skip
	fi
#endif
}

/* grb__push_reader(): one CAS per overwritten sub-buffer. */
inline push(p)
{
	do
	:: c = consumed;
	   if
	   :: TRUNC(p) - c >= BUFSIZE ->
		r = rec_lap[SLOT(c)];
#ifdef MUTANT_PUSH_COUNTS_ALWAYS
		/* Mutant: counts the records even when the CAS fails. */
		atomic {
			n_over = n_over + r;
			if
			:: consumed == c -> consumed = c + SBSIZE
			:: else -> skip
			fi
		}
#else
		atomic {
			if
			:: consumed == c ->
				consumed = c + SBSIZE;
				n_over = n_over + r
			:: else -> skip
			fi
		}
#endif
	   :: else -> break
	   fi
	od
}

/* grb__overwrite_enter(): push, then take the slot from the reader. */
inline enter(p, ph)
{
#if OVERWRITE
	push(p);
#ifdef MUTANT_NO_NOREF_CLEAR
	ph = id_idx[SLOT(p)];
#else
	atomic { id_noref[SLOT(p)] = 0; ph = id_idx[SLOT(p)] }
#endif
#else
	ph = SLOT(p);
#endif
}

/* grb__subbuf_free(): may a writer open the sub-buffer at p? */
inline subbuf_free(p, ok)
{
	ok = 1;
#ifdef MUTANT_WAIT_WRAP
	/* Mutant: waits for the previous lap instead of dropping. */
	(sb_b[SLOT(p)] == LAP(p) * SBSIZE);
#else
	if
	:: sb_b[SLOT(p)] != LAP(p) * SBSIZE -> ok = 0; fail = 2
	:: else -> skip
	fi;
#endif
#if !OVERWRITE && !defined(MUTANT_NO_FULL_CHECK)
	if
	:: ok && TRUNC(p) - consumed >= BUFSIZE -> ok = 0; fail = 1
	:: else -> skip
	fi
#endif
}

/* grb__end_old(): close the sub-buffer holding old - 1; pad by commit. */
inline end_old(old)
{
	close_size[SLOT(old - 1)] = SBOFF(old);
	commit_add(old - 1, SBSIZE - SBOFF(old), 0)
}

/*
 * grb_reserve() with its slow path (src/switch.c grb__reserve_slow()).
 * Out: ok, b (record start), e (end), ph (physical sub-buffer).
 */
inline count_refusal()
{
	atomic {
		if
		:: fail == 1 -> n_full++
		:: fail == 2 -> n_wrap++
		:: else -> n_big++
		fi
	}
}

inline reserve(sz, w)
{
	n_attempt++;
	do
	:: atomic {
		/* Load of offset and the local decisions on it. */
		old = offset;
		oe = 0;
		ns = (SBOFF(old) == 0);
		b = old;
		if
		:: !ns && SBOFF(old) + sz > SBSIZE -> oe = 1; ns = 1
		:: else -> skip
		fi;
		if
		:: ns -> b = TRUNC(old) + (oe -> SBSIZE : 0)
		:: else -> skip
		fi;
		ok = 1
	   };
	   if
	   :: ns ->
		if
		:: HDR + sz > SBSIZE -> ok = 0; fail = 3
		:: else -> subbuf_free(b, ok)
		fi
	   :: else -> skip
	   fi;
	   if
	   :: !ok ->
#ifdef MUTANT_STALE_REFUSAL
		/* Mutant: counts a refusal decided on a stale position. */
		count_refusal();
		break
#else
		/* Count it only if the position has not moved meanwhile. */
		if
		:: offset == old -> count_refusal(); break
		:: else -> skip
		fi
#endif
	   :: else ->
#ifdef MUTANT_NO_CAS
		/* Mutant: a plain store instead of the compare-and-swap. */
		atomic {
			if
			:: ns -> b = b + HDR
			:: else -> skip
			fi;
			e = b + sz;
			offset = e
		};
		break
#else
		atomic {
			if
			:: ns -> b = b + HDR
			:: else -> skip
			fi;
			e = b + sz;
			if
			:: offset == old -> offset = e; ok = 1
			:: else -> ok = 0
			fi
		};
		if
		:: ok -> break
		:: else -> skip
		fi
#endif
	   fi
	od;
	if
	:: ok ->
		n_ok++;
		if
		:: oe -> end_old(old)
		:: else -> skip
		fi;
		enter(e - 1, ph);
		if
		:: ns ->
			/* buffer_begin writes the header, then it is
			 * committed like a record without a count. */
			atomic {
				mark(ph, 0, HDR, b - HDR, w);
				unmark(ph, 0, HDR)
			};
			commit_add(b - HDR, HDR, 0)
		:: else -> skip
		fi;
		if
		:: SBOFF(e) == 0 -> close_size[SLOT(e - 1)] = SBSIZE
		:: else -> skip
		fi;
		mark(ph, SBOFF(b), SBOFF(b) + sz, TRUNC(b), w)
	:: else -> skip
	fi
}

inline commit(sz)
{
	unmark(ph, SBOFF(b), SBOFF(b) + sz);
	commit_add(e - 1, sz, 1)
}

/* Local variables every writer-like process needs. */
#define WRITER_LOCALS \
	byte old, b, e, ph, c, r, k, ds, dph, cs, tb, tr; \
	bit oe, ns, ok; byte fail

proctype writer(byte w; byte sz1; byte sz2; bit nested)
{
	WRITER_LOCALS;
	byte b1, e1, ph1;

	reserve(sz1, w);
	if
	:: ok ->
		if
		:: nested ->
			/* A signal handler runs to completion on this thread
			 * while its first record is reserved, not committed. */
			b1 = b; e1 = e; ph1 = ph;
			reserve(SIZE_N, w + 10);
			if
			:: ok -> commit(SIZE_N)
			:: else -> skip
			fi;
			b = b1; e = e1; ph = ph1
		:: else -> skip
		fi;
		commit(sz1)
	:: else -> skip
	fi;
#if NREC > 1
	reserve(sz2, w);
	if
	:: ok -> commit(sz2)
	:: else -> skip
	fi;
#endif
	running--
}

/* grb_buf_flush(): close the open sub-buffer, or make a header-only one. */
proctype flusher()
{
	WRITER_LOCALS;
	bit hdr_only;

	do
	:: old = offset;
	   if
	   :: SBOFF(old) != 0 -> e = TRUNC(old) + SBSIZE; hdr_only = 0
	   :: else ->
		if
		:: FLUSH_EMPTY ->
			subbuf_free(old, ok);
			if
			:: !ok -> goto done
			:: else -> skip
			fi;
			e = old + SBSIZE; hdr_only = 1
		:: else -> goto done
		fi
	   fi;
	   atomic {
		if
		:: offset == old -> offset = e; ok = 1
		:: else -> ok = 0
		fi
	   };
	   if
	   :: ok -> break
	   :: else -> skip
	   fi
	od;
	if
	:: !hdr_only -> end_old(old)
	:: else ->
		enter(old, ph);
		close_size[SLOT(old)] = HDR;
		atomic {
			mark(ph, 0, HDR, old, 20);
			unmark(ph, 0, HDR)
		};
		commit_add(old, SBSIZE, 0)
	fi;
done:
	running--
}

/* grb_channel_finalize(): after the last writer, flush, then finalize. */
proctype finalizer()
{
	WRITER_LOCALS;

	(running == 0);
#ifndef MUTANT_NO_FINAL_FLUSH
	old = offset;
	if
	:: SBOFF(old) != 0 ->
		offset = TRUNC(old) + SBSIZE;   /* no writer left to race */
		end_old(old)
	:: else -> skip
	fi;
#endif
	finalized = 1
}

/* src/reader.c: get_next / read / put_next until finalized and drained. */
proctype reader()
{
	byte c, s, P, k, n;
	bit got;

	do
	:: c = consumed;
	   s = SLOT(c);
	   /* Wait for delivery, a push, or the end (blocking instead of
	    * polling, so a sub-buffer never delivered shows as a deadlock). */
	   if
	   :: sb_b[s] == (LAP(c) + 1) * SBSIZE -> skip
	   :: consumed != c -> goto next
	   :: finalized && c >= TRUNC(offset) -> break
	   fi;
#if OVERWRITE
	   /* swap_in(): the reader's spare replaces the delivered data. */
	   atomic {
		if
		:: id_noref[s] && id_lap[s] == LAP(c) ->
			P = id_idx[s]; id_idx[s] = spare; spare = P; got = 1
		:: else -> got = 0
		fi
	   };
	   if
	   :: !got -> (consumed != c); goto next
	   :: else -> skip
	   fi;
	   /* Claim with the CAS writers push with. */
#ifdef MUTANT_CLAIM_NO_CAS
	   atomic { consumed = c + SBSIZE; n_read = n_read + meta_recs[P] };
#else
	   atomic {
		if
		:: consumed == c ->
			consumed = c + SBSIZE; n_read = n_read + meta_recs[P];
			got = 1
		:: else -> got = 0
		fi
	   };
	   if
	   :: !got -> goto next
	   :: else -> skip
	   fi;
#endif
#else
	   P = s;
#endif
	   /* Read the held sub-buffer: every byte committed, of this lap;
	    * the reading marks stay until the reader is done (put). */
	   atomic {
		n = meta_size[P];
		k = 0;
		do
		:: k < n ->
			assert(owner[P * SBSIZE + k] == 0);
			assert(tag[P * SBSIZE + k] == c + k + 1);
			reading[P * SBSIZE + k] = 1;
			k++
		:: else -> break
		od;
		k = 0
	   };
	   atomic {
		do
		:: k < n -> reading[P * SBSIZE + k] = 0; k++
		:: else -> break
		od;
		k = 0
	   };
#if !OVERWRITE
	   /* put_next: release store of consumed. */
	   atomic { n_read = n_read + meta_recs[P]; consumed = c + SBSIZE };
#endif
next:
	   skip
	od;
	/* Accounting, at the end of every run. */
	assert(n_ok == n_read + n_over);
	assert(n_attempt == n_ok + n_full + n_wrap + n_big);
#ifdef EXPECT_NO_LOSS
	assert(n_full + n_wrap + n_big == 0);
#endif
}

init {
	atomic {
		byte i;

		for (i : 0 .. NSB - 1) {
			id_idx[i] = i
		}
		running = 3;
		run writer(1, SIZE_A, SIZE_B, 1);
		run writer(2, SIZE_B, SIZE_A, 0);
		run flusher();
		run finalizer();
		run reader()
	}
}

#ifdef CHECK_PROGRESS
/* Progress: under weak fairness every run finalizes and drains. */
ltl progress { <> (finalized && consumed >= TRUNC(offset)) }
#endif
