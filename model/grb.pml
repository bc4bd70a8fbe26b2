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
 * Six mechanisms sit behind switches of their own, each off by default,
 * so that every configuration stays small enough to check exhaustively:
 *
 *   TRY_DISCARD  the second writer discards its first reservation
 *                (grb_try_discard_reserve), then reserves and commits one
 *                more record.  The discard never moves the position back:
 *                it closes the sub-buffer where the discarded slot begins,
 *                with one CAS from the slot's end to the next sub-buffer
 *                start (no CAS when the slot fills its sub-buffer exactly:
 *                its reservation already closes it), and commits the slot
 *                and the rest of the sub-buffer as bytes without a record.
 *                A refused discard (-EBUSY) commits the slot as a record.
 *   TIMESTAMPS   a ghost clock, last_ts and the full-timestamp rule; the
 *                reader checks every sub-buffer it reads: the first record
 *                is full, timestamps do not decrease with positions, and a
 *                compressed record rebuilds to its true timestamp from the
 *                previous one.  TSBITS (1) low bits are kept, so both kinds
 *                of record occur.  The clock ticks once per reading; the
 *                flusher's reading is left out, as its value only goes to
 *                ts_end, which the model does not check.
 *   HANDOFF      the per-thread nesting counters (entered, left_remote).
 *                The second writer hands its first reservation to the
 *                first writer, which commits it from its own thread, while
 *                the second writer goes on to reserve and commit another
 *                record; the nested writer runs on the first writer's
 *                thread.  At the end every thread's open count is 0.
 *                MAXNEST is GRB_MAX_NESTING.
 *   PINNED       besides consuming, the reader may pin a delivered
 *                sub-buffer anywhere in [consumed, produced) and put it
 *                back (get_subbuf/put_subbuf), at most NPIN times per run.
 *   WAIT         the waiter bit and the wake-up (src/wait.c).  When
 *                get_next finds nothing, the reader waits as grb_buf_wait()
 *                does, for one delivered sub-buffer: it checks, reads the
 *                futex word, arms (watermark, then the bit), checks again
 *                and blocks until the word moves, then disarms and starts
 *                over.  Three publications load the bit after they
 *                publish and call grb__wake(): every commit (the live
 *                wake), a delivery (after its store of cc_sb) and finalize
 *                (after setting its bit); grb__wake() checks the stored
 *                watermark, then takes the bit and moves the word.  The
 *                channel may also never be finalized, as finalize wakes
 *                the reader whatever came before: only runs without it
 *                leave an earlier lost wake-up unrepaired.  A run that ends
 *                with the reader asleep while its watermark is met (or the
 *                channel finalized) is an invalid end state.
 *   LIVE         the live read (grb__live_prefix(), grb_reader_live()),
 *                discard mode only: when the sub-buffer at consumed is the
 *                one writers fill, the reader may read its committed
 *                prefix without consuming, again as it grows, and reads
 *                the rest when the sub-buffer is delivered.  Each byte
 *                read live is checked as a delivered one is; the delivered
 *                read resumes inside the data at a record start, and the
 *                records read live and delivered add up to the lap's
 *                count, as does the count grb_reader_live() reports.
 *                With WAIT, the reader reads live before it waits, and its
 *                watermark is one byte past what it has read live, so a
 *                commit that lengthens the prefix must wake it.
 *                LIVE_IN_OVERWRITE allows it in overwrite mode, to show why
 *                the C code refuses it there: a writer comes back to the
 *                sub-buffer a lap later while the reader reads it.
 *
 * NESTED=0 drops the nested writer, FLUSH_EMPTY=0 the header-only flush
 * and FLUSHER=0 the flusher; model/check.sh uses them where a combination
 * would otherwise be too large to search exhaustively.
 *
 * Ghost state, not in the C code, turns the properties into assertions:
 *   owner[b]   writer holding physical byte b between reserve and commit
 *   reading[b] the reader is reading byte b
 *   tag[b]     position + 1 of the byte last written at b, so a reader
 *              can tell data of the lap it expects from older or newer data
 *   disc[b]    byte b belongs to a discarded slot (TRY_DISCARD)
 *   rts[b], rfull[b]  timestamp + 1 and full flag of the record whose
 *              first byte is b, 0 on every other byte (TIMESTAMPS)
 *   clock      the clock every thread reads, monotonic across threads
 *   rstart[b]  byte b is the first byte of a record (LIVE)
 *   lr, lrec   (reader) where live reading stopped in the sub-buffer at
 *              consumed, and how many records it read live (LIVE)
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
 * taken after the writes it publishes.  A plain store that only the
 * commit completing the lap reads (data_size) and the ghost updates share
 * the step of the commit add that publishes them: nothing can observe
 * them in between.
 *
 * The new steps keep that argument:
 *
 * - The discard CAS is one more read-modify-write on offset (acq_rel in
 *   C, as the flush CAS): it takes its place in offset's single
 *   modification order like a flush CAS, and as an RMW it continues the
 *   release sequence later writers acquire through.  The model needs
 *   nothing more of it: the writer after it opens a new sub-buffer and
 *   acquires what that needs in grb__subbuf_free, and the discard's
 *   data_size is published as a closer's is, by the discard's commit add
 *   (a release), and read only by the commit that completes the lap.
 *   Because offset never goes back, a writer that loaded the slot's end
 *   before the discard either fails its CAS or, after an exact fill,
 *   opens the next sub-buffer.
 *
 * - last_ts is a relaxed store after the reservation CAS and a relaxed
 *   load between the clock read and the CAS.  A writer B must never see
 *   the last_ts of a writer W that reserves after it in position order.
 *   As offset only moves forward, W's CAS reads the value of B's CAS or
 *   of a later RMW in offset's release sequence, so the release half of
 *   B's CAS (acq_rel) synchronises with W's acquire, and B's load of
 *   last_ts, sequenced before B's CAS, happens before W's store; coherence
 *   forbids it to read that store.  Without the release half an ARM or
 *   POWER core may satisfy B's load late, after W's store.  The model,
 *   where B's load is a step before its CAS, gives the same guarantee.
 *   It lets a writer pause between its CAS and its store, so stores arrive
 *   out of order and a later reader of last_ts sees an older value, as C
 *   allows; design.md section 10 shows any value from an earlier
 *   reservation yields a right delta or a needless full timestamp.
 *   The clock is read after the offset load and is monotonic across
 *   threads, as design.md section 16 requires of clock_read.
 *
 * - left_remote is only changed by an atomic increment, so no increment
 *   is lost at any order; entered is a plain word only its own thread
 *   writes, and a nested writer (signal handler) runs between two of its
 *   thread's steps, never inside one.  The owner reads left_remote
 *   relaxed only to refuse; in the model that load is the latest value,
 *   and a stale one in C can only refuse more.
 *
 * - put_subbuf's CAS on the id is another RMW on the id word, like the
 *   swap; get_subbuf's loads of consumed, offset and cc_sb are acquire
 *   loads like get_next's.
 *
 * - The wake-up handshake (WAIT) is a Dekker pair, and every operation in
 *   it is seq_cst in C: the reader's RMW setting the bit and the loads of
 *   its readiness check; each publication (the commit add, the store of
 *   cc_sb, finalize's RMW on the blocked word) and the load of the bit
 *   after it; the RMW taking the bit and the increment of the futex word.
 *   seq_cst operations lie in one total order that keeps each thread's
 *   program order, so every execution of the handshake is an interleaving
 *   of these steps: exactly what the model runs.  That is why the C code
 *   uses seq_cst there and not acquire/release, under which both sides
 *   may miss each other.  The watermark is stored relaxed before the
 *   bit's RMW, so a waker that sees the bit reads the watermark of that
 *   arming or of a later one; the model loads it in a step of its own
 *   after the bit, so it may see any arming's that comes before that
 *   step.  C may also hand the waker an arming's watermark after the
 *   reader has armed again; then the waker's publication, which came
 *   before its load of the bit, also came before the reader's next
 *   arming, and that arming's check sees it: nothing is lost.  FUTEX_WAIT
 *   compares the word and sleeps atomically, so the model's guard on the
 *   word is exact; wake_seq is kept only as whether it moved since the
 *   reader read it.  A spurious return from FUTEX_WAIT only repeats the
 *   loop; the model leaves it out.
 *
 * - The live read (LIVE) loads the position, then the commit counter,
 *   then the position again, all acquire (seq_cst in C, because a waiter's
 *   check runs the same code).  The counter's acquire reads the value of
 *   a commit add or a later one in its release sequence (the adds are
 *   RMWs), so every reservation whose commit it counts happens before the
 *   second load, which therefore reads that reservation's CAS or later.
 *   If the second load equals the first, every counted commit belongs to
 *   a reservation ending at or before it, and when the counted bytes reach
 *   the position, every reservation below it is committed and its data
 *   visible.  Without the second load the count can match by chance: a
 *   later reservation committed while an earlier one has not
 *   (MUTANT_LIVE_NO_RECHECK).  The record count comes from cc_sb, loaded
 *   before the counter: had the lap been delivered by then, the counter,
 *   loaded after it with acquire, would show the lap full and the step
 *   would fail; loaded after the second load of the position
 *   (MUTANT_LIVE_LATE_CC_SB), it may be the lap just delivered and the
 *   count goes below zero.  In discard mode no writer opens the
 *   sub-buffer again until the reader consumes it, so the prefix stays
 *   valid while it is read.  Each step of the model loads one word, as in
 *   the C code, so the model explores the same interleavings.
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
/* Is there a flusher at all? */
#ifndef FLUSHER
#define FLUSHER 1
#endif
/* Is the first writer interrupted by a nested writer? */
#ifndef NESTED
#define NESTED 1
#endif

/* The mechanisms beyond the core, each off unless asked for. */
#ifndef TRY_DISCARD
#define TRY_DISCARD 0
#endif
#ifndef TIMESTAMPS
#define TIMESTAMPS 0
#endif
#ifndef TSBITS
#define TSBITS 1
#endif
#ifndef HANDOFF
#define HANDOFF 0
#endif
#ifndef MAXNEST
#define MAXNEST 4
#endif
#ifndef PINNED
#define PINNED 0
#endif
#ifndef NPIN
#define NPIN 1
#endif
#ifndef WAIT
#define WAIT 0
#endif
#ifndef LIVE
#define LIVE 0
#endif
#if TRY_DISCARD && HANDOFF
#error "TRY_DISCARD and HANDOFF each script the second writer; pick one"
#endif
#if LIVE && OVERWRITE && !defined(LIVE_IN_OVERWRITE)
#error "the live read is discard mode only (LIVE_IN_OVERWRITE shows why)"
#endif
#if LIVE && (TIMESTAMPS || PINNED)
#error "LIVE reads part of a sub-buffer: not with TIMESTAMPS or PINNED"
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

/* Kept timestamp bits, and what the old discard stored to force a full
 * timestamp (every bit above TSBITS flipped). */
#define TSMASK ((1 << TSBITS) - 1)
#define TSFLIP (255 - TSMASK)

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
#if TIMESTAMPS
byte last_ts;                /* grb_buf_shm.last_ts */
#endif
#if WAIT
bit  waiting;                /* grb_buf_shm.waiting: the GRB_WAIT_BUF bit */
/* grb_buf_shm.wake_seq, the futex word, as the one thing FUTEX_WAIT asks
 * of it: has it moved since the reader read it (seen)?  Set by a wake,
 * cleared where the reader reads it; a counter would only tell apart
 * states that differ in how many wake-ups came before. */
bit  wake_moved;
#if LIVE
byte wake_pos;               /* grb_buf_shm.wake_pos: the byte watermark */
#endif
#endif
#if HANDOFF
/* grb_thread_state of the two writer threads (include/grb/impl/thread.h). */
byte entered[2];             /* plain; written by its own thread only */
byte left_remote[2];         /* atomic; other threads add to it */
#endif

/* Counters of the C code. */
byte n_ok, n_attempt, n_full, n_wrap, n_big, n_over, n_read;
byte n_disc;                  /* records_discarded */
byte n_nest;                  /* lost_nesting */
byte running;                 /* writers and flusher still running */

/* Ghost state. */
byte owner[NBYTES];
bit  reading[NBYTES];
byte tag[NBYTES];
#if TRY_DISCARD
bit  disc[NBYTES];
#endif
#if TIMESTAMPS
byte clock;
byte rts[NBYTES];
bit  rfull[NBYTES];
#endif
#if LIVE
bit  rstart[NBYTES];         /* byte b is the first byte of a record */
#endif
#if HANDOFF
/* The reservation the second writer hands over: 0 not yet, 1 here, 2
 * none (its reserve was refused). */
byte hand, h_b, h_e, h_ph, h_sz;
#endif

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
#if TRY_DISCARD
			disc[ph * SBSIZE + k] = 0;
#endif
#if TIMESTAMPS
			rts[ph * SBSIZE + k] = 0;
#endif
#if LIVE
			rstart[ph * SBSIZE + k] = 0;
#endif
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

/*
 * The loads of the live read and of the wake-up (LIVE, WAIT).  Each
 * step loads one shared word; the local computation on it shares its
 * step, as nothing else can observe it.  A guard that only reads locals
 * opens the step of the load it leads to.
 */

/*
 * src/reader.c grb__live_prefix() for the sub-buffer at pos (discard
 * mode): the position, the slot's commit counter, the position again;
 * the prefix [0, SBOFF(p1)) is readable when the position did not move
 * and the lap's committed bytes reach it.  LIVE_RECHECK is the second
 * load and that verdict (lok), for use inside an atomic step.
 */
#ifdef MUTANT_LIVE_NO_RECHECK
/* Mutant: trusts the first load of the position. */
#define LIVE_RECHECK(pos) \
	lok = (lcb - LAP(pos) * SBSIZE == SBOFF(p1))
#else
#define LIVE_RECHECK(pos) \
	p2 = offset; \
	lok = (p2 == p1 && lcb - LAP(pos) * SBSIZE == SBOFF(p1)); \
	p2 = 0
#endif

/*
 * The reader's call (grb_reader_live()): out lok, lsz, the prefix's size,
 * and lrr, its records: the counter's minus cc_sb's.  cc_sb is loaded
 * before the counter, so it is the lap before's: if the lap had been
 * delivered by then, the counter would show it full.
 */
inline live_prefix(pos)
{
	atomic {
		p1 = offset;
		lok = (TRUNC(p1) == pos && SBOFF(p1) != 0)
	};
	if
#ifndef MUTANT_LIVE_LATE_CC_SB
	:: atomic { lok -> lrr = sb_r[SLOT(pos)] };
	   atomic { lcb = cc_b[SLOT(pos)]; lcr = cc_r[SLOT(pos)]; lrr = lcr - lrr };
	   atomic { LIVE_RECHECK(pos); lsz = lok * SBOFF(p1) }
#else
	:: atomic { lok -> lcb = cc_b[SLOT(pos)]; lcr = cc_r[SLOT(pos)] };
	   atomic { LIVE_RECHECK(pos); lsz = lok * SBOFF(p1) };
	   /* Mutant, the order src/reader.c had before the model found
	    * it: cc_sb loaded last, after the second load of the position,
	    * when the sub-buffer may have been closed and delivered since. */
	   if
	   :: atomic { lok -> lrr = lcr - sb_r[SLOT(pos)] }
	   :: !lok
	   fi
#endif
	:: !lok
	fi
}

/*
 * src/wait.c buf_ready() with one sub-buffer as the watermark and, under
 * LIVE, the byte watermark's end wm (a position), met by a live prefix
 * (grb__live_prefix() without records).  Out: rdy, 1 when ready, 2 when
 * finalized and drained, 0 when not.  Every load is seq_cst in C and one
 * step here, except the finalized bit and the position after it: once
 * the bit is set nothing moves the position, so loading both in one
 * step changes nothing.
 */
inline buf_ready(rdy, wm)
{
	rc = consumed;
	rdy = (sb_b[SLOT(rc)] == (LAP(rc) + 1) * SBSIZE);
#if LIVE
	if
	:: rdy
	:: atomic {
		!rdy ->
		p1 = offset;
		lok = (TRUNC(p1) == rc && SBOFF(p1) != 0)
	   };
	   if
	   :: atomic { lok -> lcb = cc_b[SLOT(rc)] };
	      atomic {
		LIVE_RECHECK(rc);
		rdy = (lok && p1 >= wm);
		p1 = 0; lok = 0; lcb = 0
	      }
	   :: atomic { !lok -> p1 = 0 }
	   fi
	fi;
#endif
	atomic {
		if
		:: rdy == 0 && finalized && rc >= TRUNC(offset) -> rdy = 2
		:: else
		fi;
		rc = 0
	}
}

/*
 * src/wait.c grb__wake() (WAIT): the readiness check with the stored
 * watermark (not ready: return, the bit stays), then take the bit with
 * one atomic and count wake_seq up, which ends the reader's futex wait.
 */
inline wake()
{
#if LIVE
	wq = wake_pos;          /* relaxed: see the header */
#endif
	buf_ready(wr, wq);
	if
	:: atomic { wr != 0 -> wo = waiting; waiting = 0 };
	   atomic {
		if
		:: wo -> wake_moved = 1     /* wake_seq++, then FUTEX_WAKE */
		:: else
		fi;
		wr = 0; wo = 0; wq = 0
	   }
	:: atomic { wr == 0 -> wq = 0 }
	fi
}

/* The writer's side of the handshake, after a publication: the seq_cst
 * load of `waiting`, and the wake if it is set. */
inline wake_check()
{
	if
	:: waiting -> wake()
	:: else
	fi
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
#if WAIT && defined(MUTANT_WAKE_BEFORE_PUBLISH)
	/* Mutant: loads `waiting` before the delivery is published. */
	if
	:: waiting -> atomic { sb_b[ds] = tb; sb_r[ds] = tr; ds = 0 }; wake()
	:: else -> atomic { sb_b[ds] = tb; sb_r[ds] = tr; ds = 0 }
	fi
#elif WAIT
	/* The seq_cst store of cc_sb, then the load of `waiting`. */
	atomic { sb_b[ds] = tb; sb_r[ds] = tr; ds = 0 };
	wake_check()
#else
	atomic { sb_b[ds] = tb; sb_r[ds] = tr; ds = 0 }   /* release store of cc_sb */
#endif
}

/*
 * grb_commit() and grb__commit_bytes(): one atomic add, then the check.
 * cc_add is the add itself (tb, tr get the new counter value), which a
 * caller may take in one step with its own stores that only the
 * deliverer reads, or with ghost updates; cc_complete is the check.
 */
inline cc_add(p, bytes, recs)
{
	cs = SLOT(p);
	cc_b[cs] = cc_b[cs] + bytes;
	cc_r[cs] = cc_r[cs] + recs;
	tb = cc_b[cs];
	tr = cc_r[cs]
}

inline cc_complete(p)
{
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

inline commit_add(p, bytes, recs)
{
	atomic { cc_add(p, bytes, recs) };
	cc_complete(p)
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

/*
 * grb__end_old(): close the sub-buffer holding old - 1; pad by commit.
 * data_size (close_size) is only read by the commit that completes the
 * lap, which comes after this add, so the store and the add are one step.
 */
inline end_old(old)
{
	atomic {
		close_size[SLOT(old - 1)] = SBOFF(old);
		cc_add(old - 1, SBSIZE - SBOFF(old), 0)
	};
	cc_complete(old - 1)
}

/*
 * The per-thread nesting counter (HANDOFF): grb__nesting_enter(),
 * grb__nesting_undo() and grb__nesting_exit() with its remote half
 * grb__nesting_exit_remote().  entered is plain: a load, then a store.
 */
inline nest_enter(t)
{
	atomic { nn = entered[t]; ok = (nn - left_remote[t] < MAXNEST) };
	atomic {
		if
		:: ok -> entered[t] = nn + 1
		:: else -> n_nest++
		fi;
		nn = 0
	}
}

inline nest_exit(t)
{
	nn = entered[t];
	atomic { entered[t] = nn - 1; nn = 0 }
}

/* Leave the level of a reservation of thread o, from thread me. */
inline nest_leave(o, me)
{
#ifdef MUTANT_NEST_COMMITTER
	/* Mutant: the committing thread leaves a level of its own. */
	nest_exit(me)
#else
	if
	:: o == me -> nest_exit(me)
	:: else ->
#ifdef MUTANT_NEST_ONE_WORD
		/* Mutant: the owner's plain word, with a load and a store. */
		nn = entered[o];
		atomic { entered[o] = nn - 1; nn = 0 }
#else
		left_remote[o]++
#endif
	fi
#endif
}

/* One clock reading per attempt (grb__timestamp()). */
inline read_clock()
{
	atomic { ts = clock; clock++ }
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
		fi;
#if TIMESTAMPS
		ts = 0; tsfull = 0
#endif
	}
}

inline reserve(sz, w, t)
{
	n_attempt++;
#if HANDOFF
	nest_enter(t);
	if
	:: !ok -> skip      /* refused: counted, no level entered */
	:: else ->
#endif
	do
	::
#if TIMESTAMPS && defined(MUTANT_CLOCK_BEFORE_LOAD)
	   /* Mutant: the clock is read before the position is loaded. */
	   read_clock();
#endif
	   atomic {
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
#if TIMESTAMPS
#ifndef MUTANT_CLOCK_BEFORE_LOAD
	   read_clock();
#endif
	   /* The full-timestamp rule: an opener, or high bits that differ
	    * from the last_ts loaded now. */
#ifdef MUTANT_NO_FULL_ON_OPEN
	   /* Mutant: opening a sub-buffer does not force a full one. */
	   tsfull = (((ts ^ last_ts) >> TSBITS) != 0);
#else
	   tsfull = (ns || (((ts ^ last_ts) >> TSBITS) != 0));
#endif
#endif
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
#if TIMESTAMPS
		/* grb__save_timestamp(): a relaxed store after the CAS. */
		atomic { last_ts = ts; n_ok++ };
#else
		n_ok++;
#endif
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
		/* An exact fill closes its sub-buffer (data_size, read only
		 * after our commit), then the record is written. */
		atomic {
			if
			:: SBOFF(e) == 0 -> close_size[SLOT(e - 1)] = SBSIZE
			:: else -> skip
			fi;
			mark(ph, SBOFF(b), SBOFF(b) + sz, TRUNC(b), w)
#if LIVE
			; rstart[ph * SBSIZE + SBOFF(b)] = 1
#endif
#if TIMESTAMPS
			/* The record's timestamp, kept at its first byte. */
			; rts[ph * SBSIZE + SBOFF(b)] = ts + 1;
			rfull[ph * SBSIZE + SBOFF(b)] = tsfull;
#ifndef MUTANT_DISCARD_ROLLBACK
			ts = 0;     /* the rollback mutant still needs it */
#endif
			tsfull = 0
#endif
		}
	:: else ->
#if HANDOFF
		nest_exit(t)        /* grb__nesting_undo() */
#else
		skip
#endif
	fi
#if HANDOFF
	fi
#endif
}

/* Commit the record [b, e) reserved by thread o, on thread me; the
 * writer's bytes are done when its add publishes them. */
inline commit(sz, o, me)
{
	atomic {
		unmark(ph, SBOFF(b), SBOFF(b) + sz);
		cc_add(e - 1, sz, 1)
	};
	cc_complete(e - 1);
#if WAIT && !defined(MUTANT_NO_COMMIT_WAKE)
	wake_check();           /* grb_commit()'s live wake */
#endif
#if HANDOFF
	nest_leave(o, me)
#endif
}

/* The discarded slot's bytes: released, and never to be read. */
inline release_discarded(sz)
{
	k = SBOFF(b);
	do
	:: k < SBOFF(b) + sz ->
		owner[ph * SBSIZE + k] = 0;
		disc[ph * SBSIZE + k] = 1;
		k++
	:: else -> break
	od;
	k = 0
}

/*
 * grb_try_discard_reserve() (src/switch.c grb__discard()) on the slot
 * [b, e) of size sz.  Out: ok, set when the slot is discarded; when not,
 * the caller commits it as a record.
 */
inline try_discard(sz)
{
#ifdef MUTANT_DISCARD_ROLLBACK
	/* Mutant, the old design: give the slot back by moving the position
	 * from e back to b, then make the next record carry a full
	 * timestamp; nothing is committed. */
	atomic {
		if
		:: offset == e ->
			offset = b; ok = 1;
			release_discarded(sz);   /* no longer ours once it moved */
			n_disc++
		:: else -> ok = 0
		fi
	};
#if TIMESTAMPS
	if
	:: ok -> last_ts = ts ^ TSFLIP
	:: else -> skip
	fi;
	ts = 0
#endif
#else
	if
	:: SBOFF(e) != 0 ->
		/* Close the sub-buffer, as a flush would. */
		atomic {
			if
			:: offset == e -> offset = TRUNC(e) + SBSIZE; ok = 1
			:: else -> ok = 0
			fi
		}
	:: else -> ok = 1   /* the slot fills its sub-buffer: already its closer */
	fi;
	if
	:: ok ->
		/* The sub-buffer now ends where the slot began; the slot
		 * and the rest of the sub-buffer are committed as padding. */
		atomic {
#ifndef MUTANT_DISCARD_NO_CLOSE
			close_size[SLOT(e - 1)] = SBOFF(b);
#endif
			release_discarded(sz);
			n_disc++;
			cc_add(e - 1, sz + (SBOFF(e) != 0) * (SBSIZE - SBOFF(e)), 0)
		};
		cc_complete(e - 1)
	:: else -> skip
	fi
#endif
}

/* Local variables every writer-like process needs. */
#if TIMESTAMPS
#define TS_LOCALS ; byte ts; bit tsfull
#else
#define TS_LOCALS
#endif
#if HANDOFF
#define NEST_LOCALS ; byte nn, hs
#else
#define NEST_LOCALS
#endif
#if WAIT
#define WAIT_LOCALS ; byte rc, wr, wq; bit wo LIVE_LOCALS
#else
#define WAIT_LOCALS
#endif
#if LIVE
#define LIVE_LOCALS ; byte p1, p2, lcb; bit lok
#else
#define LIVE_LOCALS
#endif
#define WRITER_LOCALS \
	byte old, b, e, ph, c, r, k, ds, dph, cs, tb, tr; \
	bit oe, ns, ok; byte fail TS_LOCALS NEST_LOCALS WAIT_LOCALS

/*
 * Writer w runs on thread w - 1.  The first writer is interrupted by a
 * nested writer on the same thread (when nested is set) and commits what
 * the second hands over (HANDOFF); the second writer discards
 * (TRY_DISCARD) or hands over (HANDOFF) its first reservation.
 */
proctype writer(byte w; byte sz1; byte sz2; bit nested)
{
	WRITER_LOCALS;
	byte b1, e1, ph1;

	reserve(sz1, w, w - 1);
#if TRY_DISCARD
	if
	:: w == 2 && ok ->
		/* Write, think better of it, and write another record. */
		try_discard(sz1);
		if
		:: !ok -> commit(sz1, w - 1, w - 1)
		:: else -> skip
		fi;
		reserve(sz1, w, w - 1);
		if
		:: ok -> commit(sz1, w - 1, w - 1)
		:: else -> skip
		fi;
		ok = 0
	:: else -> skip
	fi;
#endif
#if HANDOFF
	if
	:: w == 2 ->
		/* Hand the reservation to the first writer's thread, then go
		 * on with a record of our own. */
		atomic {
			if
			:: ok -> h_b = b; h_e = e; h_ph = ph; h_sz = sz1; hand = 1
			:: else -> hand = 2
			fi;
			ok = 0
		};
		reserve(sz2, w, w - 1);
		if
		:: ok -> commit(sz2, w - 1, w - 1)
		:: else -> skip
		fi;
		ok = 0
	:: else -> skip
	fi;
#endif
	if
	:: ok ->
		if
		:: nested ->
			/* A signal handler runs to completion on this thread
			 * while its first record is reserved, not committed. */
			b1 = b; e1 = e; ph1 = ph;
			reserve(SIZE_N, w + 10, w - 1);
			if
			:: ok -> commit(SIZE_N, w - 1, w - 1)
			:: else -> skip
			fi;
			b = b1; e = e1; ph = ph1
		:: else -> skip
		fi;
		commit(sz1, w - 1, w - 1)
	:: else -> skip
	fi;
#if HANDOFF
	if
	:: w == 1 ->
		/* Commit the reservation the other thread handed over. */
		(hand != 0);
		if
		:: hand == 1 ->
			atomic {
				b = h_b; e = h_e; ph = h_ph; hs = h_sz;
				h_b = 0; h_e = 0; h_ph = 0; h_sz = 0
			};
			commit(hs, 1, w - 1)
		:: else -> skip
		fi
	:: else -> skip
	fi;
#endif
#if NREC > 1
	reserve(sz2, w, w - 1);
	if
	:: ok -> commit(sz2, w - 1, w - 1)
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
		atomic {
			close_size[SLOT(old)] = HDR;
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
#if WAIT
	/* The channel is finalized, or never is.  Finalize wakes the reader
	 * whatever came before; in the runs where it does not happen, a
	 * wake-up lost earlier leaves the reader asleep with data to read. */
	if
	:: skip
	:: goto unfinalized
	fi;
#endif
#ifndef MUTANT_NO_FINAL_FLUSH
	old = offset;
	if
	:: SBOFF(old) != 0 ->
		offset = TRUNC(old) + SBSIZE;   /* no writer left to race */
		end_old(old)
	:: else -> skip
	fi;
#endif
#if WAIT
	finalized = 1;       /* the seq_cst RMW on the blocked word */
	wake_check();
unfinalized:
	skip
#else
	finalized = 1
#endif
}

/*
 * Timestamp checks on the byte at index i of a sub-buffer being read, in
 * position order: the first record is full, timestamps do not decrease,
 * and a compressed one rebuilds from the previous record's value.
 */
inline check_ts(i)
{
	if
	:: rts[i] != 0 ->
		rt = rts[i] - 1;
		if
		:: !tseen -> assert(rfull[i])
		:: else ->
			assert(rt >= tprev);
			if
			:: !rfull[i] ->
				assert((((tprev >> TSBITS) << TSBITS) | (rt & TSMASK)) == rt)
			:: else -> skip
			fi
		fi;
		tprev = rt;
		tseen = 1
	:: else -> skip
	fi
}

/*
 * Read the sub-buffer held in physical P, which holds positions from base:
 * every byte committed, of this lap, not discarded, and its records'
 * timestamps right; the reading marks stay until the reader is done.
 */
inline read_subbuf(P, base)
{
	atomic {
		n = meta_size[P];
#if LIVE
		/* Resume where the live reads stopped: inside the data, at a
		 * record's first byte, and with every record of the lap read
		 * once, live or now. */
		assert(lr <= n);
		assert(lr == 0 || lr == n || rstart[P * SBSIZE + lr]);
		k = lr;
#else
		k = 0;
#endif
		do
		:: k < n ->
			assert(owner[P * SBSIZE + k] == 0);
#if TRY_DISCARD
			assert(!disc[P * SBSIZE + k]);
#endif
			assert(tag[P * SBSIZE + k] == base + k + 1);
#if TIMESTAMPS
			check_ts(P * SBSIZE + k);
#endif
#if LIVE
			lrec = lrec + rstart[P * SBSIZE + k];
#endif
			reading[P * SBSIZE + k] = 1;
			k++
		:: else -> break
		od;
#if LIVE
		assert(lrec == meta_recs[P]);
#endif
		k = 0
#if TIMESTAMPS
		; rt = 0; tprev = 0; tseen = 0
#endif
	};
	atomic {
		do
		:: k < n -> reading[P * SBSIZE + k] = 0; k++
		:: else -> break
		od;
		k = 0
	}
}

#if LIVE
/*
 * src/reader.c grb_reader_live() and the iterator on it (src/iter.c): the
 * readable prefix of the sub-buffer at c, its record count, then the
 * records from where the last live read stopped (lr) up to the prefix
 * end, without consuming.  Every byte is checked as a delivered one is;
 * lrec counts the records read live, lrr is the count grb_reader_live()
 * reports.
 */
inline live_read()
{
	live_prefix(c);
	if
	:: atomic {
		lok && lsz > lr ->
#if OVERWRITE
		lph = id_idx[s];   /* in place, as writers fill it */
#else
		lph = s;
#endif
		k = lr;
		do
		:: k < lsz ->
			assert(owner[lph * SBSIZE + k] == 0);
#if TRY_DISCARD
			assert(!disc[lph * SBSIZE + k]);
#endif
			assert(tag[lph * SBSIZE + k] == c + k + 1);
			lrec = lrec + rstart[lph * SBSIZE + k];
			reading[lph * SBSIZE + k] = 1;
			k++
		:: else -> break
		od;
		assert(lrr == lrec);
		k = lr
	   };
	   atomic {
		do
		:: k < lsz -> reading[lph * SBSIZE + k] = 0; k++
		:: else -> break
		od;
		lr = lsz; k = 0; lph = 0;
		p1 = 0; lok = 0; lsz = 0; lcb = 0; lcr = 0; lrr = 0
	   }
	:: atomic {
		!(lok && lsz > lr) ->
		p1 = 0; lok = 0; lsz = 0; lcb = 0; lcr = 0; lrr = 0
	   }
	fi
}
#endif

#if WAIT
/* Is the reader's armed watermark met now, or is the channel finalized
 * (then it must end)?  A ghost predicate, for the end-state check in
 * buf_wait. */
#define DELIVERED_AT(p) (sb_b[SLOT(p)] == (LAP(p) + 1) * SBSIZE)
#define DRAINED_NOW (finalized && consumed >= TRUNC(offset))
#if LIVE
#define LIVE_MET (TRUNC(offset) == consumed && SBOFF(offset) != 0 && \
	cc_b[SLOT(consumed)] - LAP(consumed) * SBSIZE == SBOFF(offset) && \
	offset >= wake_pos)
#else
#define LIVE_MET 0
#endif
#define MUST_WAKE (DELIVERED_AT(consumed) || LIVE_MET || DRAINED_NOW || \
	finalized)

/* arm(): the watermark (relaxed), then the seq_cst RMW setting the bit. */
inline arm()
{
#if LIVE
	wake_pos = wp;
#endif
	waiting = 1
}

/*
 * src/wait.c grb_buf_wait() with one sub-buffer (and, under LIVE, one
 * byte past what was read live, wp) as the watermark.  Out: rdy, 1 or 2
 * (drained).  The futex wait is a guard on wake_moved: the reader blocks.
 * Asleep, it sits at an end label only while it is owed nothing: its
 * watermark is not met and the channel is not finalized.  Once it is owed
 * a wake-up it steps to owed_wakeup, not an end label, and steps back if
 * that goes away (a push moves consumed on).  So a run that ends with the
 * reader asleep and owed a wake-up is an invalid end state: a lost
 * wake-up, or (finalized, not drained) a sub-buffer never delivered.
 */
inline buf_wait(rdy)
{
	do
	:: buf_ready(rdy, wp);
	   if
	   :: rdy != 0 -> break
#ifdef MUTANT_ARM_AFTER_CHECK
	   /* Mutant: arms after its only check, and sleeps on it. */
	   :: rdy == 0 -> arm(); wake_moved = 0
	   fi;
#else
	   /* The futex word, read before the check: see src/wait.c. */
	   :: atomic { rdy == 0 -> wake_moved = 0 }
	   fi;
	   arm();
	   buf_ready(rdy, wp);
#endif
	   if
	   :: rdy == 0 ->
end_asleep:
		do
		:: wake_moved -> break
		:: MUST_WAKE ->
owed_wakeup:
			if
			:: wake_moved -> break
			:: !(MUST_WAKE) -> skip
			fi
		od
	   :: rdy != 0
	   fi;
	   atomic { waiting = 0; rdy = 0 }   /* disarm() */
	od
}
#endif

/*
 * src/reader.c: get_next / read / put_next until finalized and drained;
 * with PINNED, also get_subbuf / read / put_subbuf.
 */
proctype reader()
{
	byte c, s, P, k, n;
	bit got;
#if WAIT
	byte rdy, rc, wp;
#endif
#if LIVE
	byte lr, lrec, lrr, lph, p1, p2, lcb, lcr, lsz;
	bit lok;
#if OVERWRITE
	byte lpos;                  /* the position lr and lrec are about */
#endif
#endif
#if TIMESTAMPS
	byte rt, tprev;
	bit tseen;
#endif
#if PINNED
	byte pos, npin;
#endif

	do
	:: c = consumed;
	   s = SLOT(c);
#if LIVE && OVERWRITE
	   /* A push moves the reader on: its live reading starts over. */
	   atomic {
		if
		:: c != lpos -> lr = 0; lrec = 0; lpos = c
		:: else
		fi
	   };
#endif
#if WAIT
	   /* get_next finds the sub-buffer delivered; if not, (LIVE) read
	    * what is committed live, then wait (grb_buf_wait) for a
	    * delivery, a live record past those read, or the end. */
	   if
	   :: sb_b[s] == (LAP(c) + 1) * SBSIZE -> skip
	   :: else ->
#if LIVE
		live_read();
		wp = c + lr + 1;
#endif
		buf_wait(rdy);
		if
		:: rdy == 2 -> break
		:: else -> rdy = 0; goto next
		fi
	   fi;
#else
	   /* Wait for delivery, a push, or the end (blocking instead of
	    * polling, so a sub-buffer never delivered shows as a deadlock);
	    * or (LIVE) read live while writers fill the sub-buffer. */
	   if
	   :: sb_b[s] == (LAP(c) + 1) * SBSIZE -> skip
	   :: consumed != c -> goto next
	   :: finalized && c >= TRUNC(offset) -> break
#if LIVE
	   :: TRUNC(offset) == c && SBOFF(offset) > lr -> live_read(); goto next
#endif
	   fi;
#endif
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
	   read_subbuf(P, c);
#if !OVERWRITE
	   /* put_next: release store of consumed. */
	   atomic {
		n_read = n_read + meta_recs[P]; consumed = c + SBSIZE
#if LIVE
		; lr = 0; lrec = 0
#endif
#if WAIT && LIVE
		; wp = 0
#endif
	   };
#endif
next:
	   skip
#if PINNED
	:: atomic { npin < NPIN -> npin++; c = consumed };
	   /* grb_reader_get_subbuf(pos): consumed, then any pos from it up
	    * to produced, if delivered.  The loads of offset and of pos's
	    * cc_sb share a step: both only grow, so loading offset as late
	    * as cc_sb only widens the range pos is chosen from. */
	   atomic {
		pos = c;
		do
		:: pos + SBSIZE < TRUNC(offset) -> pos = pos + SBSIZE
		:: break
		od;
#ifdef MUTANT_PIN_UNDELIVERED
		/* Mutant: pins without checking that pos is delivered. */
		got = (pos < TRUNC(offset))
#else
		got = (pos < TRUNC(offset) &&
		       sb_b[SLOT(pos)] == (LAP(pos) + 1) * SBSIZE)
#endif
	   };
	   if
	   :: !got -> goto unpin      /* -EAGAIN or -ENODATA */
	   :: else -> skip
	   fi;
	   s = SLOT(pos);
#if OVERWRITE
	   /* swap_in(pos), leaving spare naming what went into the ring. */
	   atomic {
		if
		:: id_noref[s] && id_lap[s] == LAP(pos) ->
			P = id_idx[s]; id_idx[s] = spare; got = 1
		:: else -> got = 0
		fi
	   };
	   if
	   :: !got -> goto unpin      /* pushed past, or not yet NOREF */
	   :: else -> skip
	   fi;
#else
	   P = s;                     /* held in place */
#endif
	   read_subbuf(P, pos);
#if OVERWRITE
	   /* grb_reader_put_subbuf(): give the data back unless a writer
	    * took the slot since; then it becomes the spare. */
	   atomic {
#ifdef MUTANT_PUT_NO_CAS
		/* Mutant: a plain store of the id, whatever it holds now. */
		id_idx[s] = P; id_noref[s] = 1; id_lap[s] = LAP(pos)
#else
		if
		:: id_idx[s] == spare && id_noref[s] && id_lap[s] == LAP(pos) ->
			id_idx[s] = P
		:: else ->
#ifdef MUTANT_PUT_LOSE_PIN
			/* Mutant: the pinned sub-buffer is not kept as spare. */
			skip
#else
			spare = P
#endif
		fi
#endif
	   };
#endif
unpin:
	   atomic { c = 0; s = 0; P = 0; pos = 0; got = 0 }
#endif
	od;
	/* Accounting, at the end of every run. */
	assert(n_ok == n_read + n_over + n_disc);
	assert(n_attempt == n_ok + n_full + n_wrap + n_big + n_nest);
#ifdef EXPECT_NO_LOSS
	assert(n_full + n_wrap + n_big + n_nest == 0);
#endif
#if HANDOFF
	/* No thread keeps a level open. */
	assert(entered[0] == left_remote[0]);
	assert(entered[1] == left_remote[1]);
#endif
#if OVERWRITE
	/* The ids and the spare name each physical sub-buffer once. */
	atomic {
		k = 0;
		do
		:: k < NSB ->
			assert(id_idx[k] != spare);
			n = k + 1;
			do
			:: n < NSB -> assert(id_idx[k] != id_idx[n]); n++
			:: else -> break
			od;
			k++
		:: else -> break
		od
	}
#endif
}

init {
	atomic {
		byte i;

		for (i : 0 .. NSB - 1) {
			id_idx[i] = i
		}
		running = 2 + FLUSHER;
		run writer(1, SIZE_A, SIZE_B, NESTED);
		run writer(2, SIZE_B, SIZE_A, 0);
#if FLUSHER
		run flusher();
#endif
		run finalizer();
		run reader()
	}
}

#ifdef CHECK_PROGRESS
/* Progress: under weak fairness every run finalizes and drains. */
ltl progress { <> (finalized && consumed >= TRUNC(offset)) }
#endif
