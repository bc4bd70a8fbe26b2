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
 * Seven mechanisms sit behind switches of their own, each off by default,
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
 *   RSEQ         the per-CPU write path (design.md section 25), the
 *                modelled buffer being CPU 0's.  Each writer thread runs
 *                on CPU 0 or elsewhere (ghost cpu[]); the thread of
 *                writer RSEQ_MIG may migrate at any step, RSEQ_NMIG times
 *                at most; the nested writer is on its thread's CPU; the
 *                finalizer and reader run elsewhere, the flusher too
 *                unless RSEQ_FLUSH0.  Reserve's fast path is a critical
 *                section (cpu check, blocked, offset, plain store), its
 *                slow path a locked CAS in a section on CPU 0 or the
 *                remote protocol elsewhere (blocked count, membarrier,
 *                locked CAS); a commit adds to cc_local in a section on
 *                CPU 0, or to cc and fences CPU 0 elsewhere, then sums
 *                both, and a commit that sees its lap complete claims it
 *                before delivering.  Every lap is delivered once (dlv[]).
 *                See "The per-CPU path" below for the sections and CPU
 *                0's store buffer.
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
 *
 * The per-CPU path (RSEQ) replaces the reserve CAS and the commit add by
 * plain loads and stores, so two things are modelled explicitly, and one
 * is argued:
 *
 * - Critical sections.  A section is a few steps, each one load (the cpu
 *   check, blocked, offset, cc_local), then its committing instruction.
 *   The kernel aborts it when anything else runs on its CPU before that
 *   instruction, and resumes the thread at the abort handler, so a
 *   preempted section runs no further step.  live0 names the section
 *   live on CPU 0: a section start there takes it (its context runs, so
 *   the section that held it was preempted); membarrier and every
 *   migration (a context switch on CPU 0, either way) clear it, and so
 *   does a write to offset or blocked outside any section by a context on
 *   CPU 0 (PREEMPT0: a writer that chose the remote protocol, then
 *   migrated back).  Each later step of a section aborts first when the
 *   section is no longer live.  Other steps that another context takes on
 *   CPU 0 during a section leave it live in the model: they write nothing
 *   a section loads, and a section's steps before its store only load, so
 *   such a step commutes to before the section's start, an order the
 *   model explores as well; the abort it causes in reality only retries,
 *   or takes the slow path, with nothing stored.  Contexts elsewhere never
 *   abort a section on CPU 0: blocked and membarrier are there for them.
 *   The nested writer runs between its thread's reserve and commit, never
 *   inside a section; a signal during a section aborts it as a preemption
 *   does, which writer 2 on CPU 0 exercises.
 *
 * - CPU 0's store buffer (x86-TSO) holds a local commit's store to
 *   cc_local.  Contexts on CPU 0 load cc_local through it (forwarding),
 *   the others load memory.  It drains on membarrier, on a migration (the
 *   scheduler's barriers), behind a further store (FIFO), or, if it so
 *   happens, just before a context elsewhere touches cc_local: when it
 *   drains matters to no one else, so this gives every order a drain at
 *   any step would give.  One pending store is enough.  Every load of
 *   cc_local from elsewhere follows the same context's membarrier, which
 *   drains every store before it; a store after it comes from a section
 *   that started after it, whose own load of cc then sees the remote add
 *   (locked, so visible before the membarrier), and the last such
 *   committer, which forwards the others' stores, sees the lap complete
 *   whatever the remote load saw of them.  A deeper buffer would only let
 *   that remote load see less of them, which the argument allows.  The
 *   mutants that skip the membarrier need a single stale store.
 *
 * - offset's plain stores are taken as sequentially consistent.  A store
 *   of offset still in CPU 0's store buffer is a fast path's, which moves
 *   offset inside the open sub-buffer only: every other move is a locked
 *   RMW, which drains the buffer of the CPU that issues it.  CPU 0's
 *   contexts load offset through the buffer.  Elsewhere, a remote CAS
 *   comes after its membarrier, which drains the buffer, so it compares
 *   with the latest value; the flusher's and a writer's first load is a
 *   guess that CAS checks; and the other loads from elsewhere need only
 *   which sub-buffer is open (the reader's TRUNC(offset), the flusher's
 *   SBOFF(offset) != 0), which a pending store does not change, or come
 *   after finalize (whose flush fences CPU 0).  A writer elsewhere that
 *   counts a refusal only if offset is still what it loaded may miss a
 *   pending fast-path store, but then it also misses every later store of
 *   CPU 0 (FIFO), a delivery that would free the sub-buffer among them:
 *   the refusal is right at the moment of its load.  blocked, cc and
 *   claimed change only by locked RMWs.
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
#ifndef RSEQ
#define RSEQ 0
#endif
/* grb_write_record()'s fast path (design.md section 25.9): the slot's
 * id is read before the reservation, not after it. */
#ifndef EARLY_ENTER
#define EARLY_ENTER 0
#endif
/* The writer whose thread may migrate (0: none), and how many times. */
#ifndef RSEQ_MIG
#define RSEQ_MIG 1
#endif
#ifndef RSEQ_NMIG
#define RSEQ_NMIG 2
#endif
/* Progress runs: how many times a section start may preempt another
 * context's live section (see section_start). */
#ifndef RSEQ_PREEMPT
#define RSEQ_PREEMPT 1
#endif
/* May a context on CPU 0 give up retrying a section after an abort and
 * take the remote form (GRB_RSEQ_TRIES in src/rseq.c)?  It multiplies
 * the state space by 3 to 10, so the runs that check it say so. */
#ifndef RSEQ_GIVEUP
#define RSEQ_GIVEUP 0
#endif
/* Does the flusher run on CPU 0 (a flush may run on any thread)? */
#ifndef RSEQ_FLUSH0
#define RSEQ_FLUSH0 0
#endif
#if RSEQ_MIG < 0 || RSEQ_MIG > 2
#error "RSEQ_MIG names writer 1 or 2, or 0 for none"
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
#if RSEQ
/* The per-CPU path (design.md section 25.1) of CPU 0's buffer. */
byte blocked;                /* grb_buf_shm.blocked: the GRB_BLOCKED_REMOTE count */
byte ccl_b[NSB];             /* hot.cc_local as memory holds it: bytes */
byte ccl_r[NSB];             /* hot.cc_local as memory holds it: records */
byte claimed[NSB];           /* cold.claimed: 1 + the lap last claimed */
/* CPU 0's store buffer (x86-TSO): one store to cc_local, not yet in
 * memory, of slot sbs with value (sbv_b, sbv_r). */
bit  sbp;
byte sbs, sbv_b, sbv_r;
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
#if RSEQ
/* Where each thread runs: cpu[w] for writer w (0: CPU 0, 1: elsewhere),
 * cpu[0] for the finalizer and reader (always elsewhere), cpu[3] for the
 * flusher (CPU 0 with RSEQ_FLUSH0).  nmig counts the migrations; mdone
 * says writer RSEQ_MIG has ended. */
bit  cpu[4];
byte nmig;
bit  mdone;
/* The _pid + 1 of the context whose critical section is live on CPU 0,
 * 0 for none: a section may store only while it is still its own. */
byte live0;
byte dlv[NSB];               /* laps delivered, per slot */
#ifdef CHECK_PROGRESS
byte npre;                   /* preemptions of a live section so far */
#endif
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

#if RSEQ
/*
 * The per-CPU path (design.md section 25).  th is the running context's
 * index in cpu[] (the writer number, 3 for the flusher, 0 for the
 * finalizer), so ON0 says it runs on CPU 0; ME is its name in live0.
 * Each step is a d_step: one shared access (or a section's committing
 * instruction) and the local work on it.
 */
#define ON0 (cpu[th] == 0)
#define ME (_pid + 1)

/* CPU 0's pending store reaches memory. */
inline drain()
{
	if
	:: sbp ->
		ccl_b[sbs] = sbv_b; ccl_r[sbs] = sbv_r;
		sbp = 0; sbs = 0; sbv_b = 0; sbv_r = 0
	:: else
	fi
}

/* Load cc_local and add it to tb, tr (0 before, but in the sum): CPU 0
 * forwards its pending store, elsewhere memory is read. */
#define LOAD_CCL(s) \
	tb = tb + ((ON0 && sbp && sbs == (s)) -> sbv_b : ccl_b[s]); \
	tr = tr + ((ON0 && sbp && sbs == (s)) -> sbv_r : ccl_r[s])

/* The same load of cc_local's bytes into lcb (the readiness check). */
#define LCC_BYTES(s) \
	lcb = ((ON0 && sbp && sbs == (s)) -> sbv_b : ccl_b[s])

#endif

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
#if RSEQ
	   /* grb__cc_load(): cc_local, then cc (the reader runs off
	    * CPU 0). */
	   if
	   :: d_step { sbp -> drain(); lcb = ccl_b[SLOT(pos)]; lcr = ccl_r[SLOT(pos)] }
	   :: d_step { lcb = ccl_b[SLOT(pos)]; lcr = ccl_r[SLOT(pos)] }
	   fi;
	   atomic { lcb = lcb + cc_b[SLOT(pos)]; lcr = lcr + cc_r[SLOT(pos)];
		    lrr = lcr - lrr };
#else
	   atomic { lcb = cc_b[SLOT(pos)]; lcr = cc_r[SLOT(pos)]; lrr = lcr - lrr };
#endif
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
#if RSEQ
	   /* grb__cc_load(): cc_local (CPU 0 forwards its pending store;
	    * elsewhere it drains first, or not), then cc. */
	   :: lok ->
		if
		:: d_step { !ON0 && sbp -> drain(); LCC_BYTES(SLOT(rc)) }
		:: d_step { LCC_BYTES(SLOT(rc)) }
		fi;
		atomic { lcb = lcb + cc_b[SLOT(rc)] };
#else
	   :: atomic { lok -> lcb = cc_b[SLOT(rc)] };
#endif
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
#if RSEQ
		/* Once per lap: no other commit delivers it too. */
		assert(dlv[ds] == LAP(p));
		dlv[ds]++;
#endif
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

#if RSEQ
/*
 * A load of cc_local from elsewhere: the pending store drains first, or
 * not.  When the store buffer drains matters only when a context
 * elsewhere reads cc_local (CPU 0's own loads forward), so draining
 * there, or at the steps that drain it for sure (membarrier, a
 * migration, a further store on CPU 0), gives every order a drain free
 * to run at any step gives, without its interleavings.
 */
inline load_ccl(s)
{
	if
	:: d_step { !ON0 && sbp -> drain(); LOAD_CCL(s) }
	:: d_step { LOAD_CCL(s) }
	fi
}

/* A plain store to cc_local: on CPU 0 into its store buffer, behind the
 * store already there, which (FIFO) drains first; elsewhere (only the
 * mutants store from there) to memory, before CPU 0's pending store
 * drains over it. */
inline store_ccl(s, vb, vr)
{
	if
	:: ON0 -> drain(); sbp = 1; sbs = s; sbv_b = vb; sbv_r = vr
	:: else -> ccl_b[s] = vb; ccl_r[s] = vr
	fi
}

/* membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, CPU, 0) (src/rseq.c
 * fence_cpu): the section live on CPU 0 is aborted, and CPU 0 runs a
 * full barrier, which drains its store buffer. */
#define MEMBARRIER d_step { live0 = 0; drain() }

/* A step outside any section that writes a word sections load (offset,
 * blocked): on CPU 0 its context is running, so the section that was
 * live there (another context's) has been preempted. */
#define PREEMPT0 live0 = (ON0 -> 0 : live0)

/*
 * A section's first step, the cpu check: sok = 1 on CPU 0; elsewhere 0
 * (abort), or off for MUTANT_RSEQ_MIGRATED_LOCAL's section without the
 * check.  On CPU 0 the section becomes the live one, preempting another
 * context's.  In progress runs at most RSEQ_PREEMPT starts preempt a
 * live section; then a start waits for the live section to end, as a
 * scheduler lets a thread run: sections aborting each other forever
 * would otherwise be a run that never ends.
 */
inline section_start(off)
{
	d_step {
#ifdef CHECK_PROGRESS
		(!ON0 || live0 == 0 || npre < RSEQ_PREEMPT);
		npre = npre + (ON0 && live0 != 0);
#endif
		sok = (ON0 -> 1 : off);
		live0 = (ON0 -> ME : live0)
	}
}

/*
 * Is the section still live?  A preempted section never runs another
 * instruction: the kernel resumes its thread at the abort handler.  So
 * each later step of a section first aborts if it is no longer live
 * (a mutant's section off CPU 0: if it no longer is).
 */
#ifdef MUTANT_RSEQ_NO_ABORT
/* Mutant: a section runs on, and stores, even when preempted. */
#define LIVE_SEC 1
#else
#define LIVE_SEC ((sok == 1 && live0 == ME) || (sok == 2 && !ON0))
#endif

/* The section is over: it stored, failed a compare, or was aborted. */
#define SECTION_END live0 = (live0 == ME -> 0 : live0); sok = 0

/*
 * The fast path's section (grb__rseq_reserve): the cpu check, blocked
 * == 0, offset == x, then the plain store of y, one step each.  Out: ok,
 * 1 when it stored; a failed compare or an abort leaves it 0 (the caller
 * cleared it) and the caller takes the slow path.
 */
inline fast_section(x, y)
{
	section_start(0);
	if
	:: d_step {
		sok ->
		if
		:: !LIVE_SEC -> SECTION_END
#ifndef MUTANT_RSEQ_NO_BLOCKED_CHECK
		/* (MUTANT_RSEQ_NO_BLOCKED_CHECK ignores the remote count.) */
		:: LIVE_SEC && blocked != 0 -> SECTION_END
#endif
		:: else
		fi
	   };
	   if
	   :: d_step {
		sok ->
		if
		:: !LIVE_SEC || offset != x -> SECTION_END
		:: else
		fi
	      };
	      if
	      :: d_step {
		sok ->
		if
		:: LIVE_SEC -> offset = y; ok = 1
		:: else
		fi;
		SECTION_END
	         }
	      :: else
	      fi
	   :: else
	   fi
	:: else
	fi
}

/*
 * The remote protocol on offset (design.md 25.3; grb__offset_cas off the
 * buffer's CPU): blocked += REMOTE, membarrier, the locked CAS from x to
 * y, blocked -= REMOTE.  Out: ok.  A context that migrated back to CPU 0
 * meanwhile runs these steps there (PREEMPT0).
 */
inline remote_cas(x, y)
{
	d_step { PREEMPT0; blocked++ };
#ifndef MUTANT_RSEQ_REMOTE_NO_MEMBARRIER
	MEMBARRIER;
#endif
	d_step {
		PREEMPT0;
		if
		:: offset == x -> offset = y; ok = 1
		:: else -> ok = 0
		fi
	};
	d_step { PREEMPT0; blocked-- }
}

/*
 * grb__offset_cas(): the locked CAS of offset from x to y.  On CPU 0 in a
 * section (grb__rseq_cas_locked: the cpu check, then the CAS as the
 * committing step), again after an abort or, after any number of aborts
 * (GRB_RSEQ_TRIES), the remote protocol; elsewhere the remote protocol.
 * Out: ok.
 */
inline locked_cas(x, y)
{
	do
	:: section_start(0);
	   if
	   :: d_step {
		sok ->
		ab = !LIVE_SEC;
		if
		:: !ab && offset == x -> offset = y; ok = 1
		:: else -> ok = 0
		fi;
		SECTION_END
	      };
	      if
	      :: ab -> ab = 0;
		/* Retry, or (GRB_RSEQ_TRIES aborts in a row, a debugger
		 * single-stepping) the remote protocol, from CPU 0. */
		if
		:: skip
		:: RSEQ_GIVEUP -> remote_cas(x, y); break
		fi
	      :: else -> break
	      fi
	   :: else -> remote_cas(x, y); break
	   fi
	od
}

/* What a commit add publishes, in its step: the record's bytes (usz,
 * released) and the closer's data_size (clz), set by the caller. */
inline publish()
{
	if
	:: usz != 0 -> unmark(ph, SBOFF(b), SBOFF(b) + usz); usz = 0
	:: else
	fi;
	if
	:: clz != 0 -> close_size[cs] = clz; clz = 0
	:: else
	fi
}

/*
 * The commit add of design.md 25.4 on slot SLOT(p) (grb__commit_rseq,
 * grb__rseq_commit_slow).  Local, on CPU 0: a section of the cpu check,
 * the load of cc_local and the plain store of it plus the add (into the
 * store buffer), again after an abort, or after any number of aborts the
 * remote form (GRB_RSEQ_TRIES).  Remote, elsewhere: the locked add to cc,
 * then membarrier (rcc_remote).  Then the sum: out tb, tr.
 */
inline rcc_remote(bytes, recs)
{
	d_step {
		cc_b[cs] = cc_b[cs] + bytes;
		cc_r[cs] = cc_r[cs] + recs;
		publish()
	};
#ifndef MUTANT_RSEQ_COMMIT_NO_MEMBARRIER
	MEMBARRIER
#endif
}

inline rcc_add(p, bytes, recs)
{
	cs = SLOT(p);
	do
#ifdef MUTANT_RSEQ_MIGRATED_LOCAL
	/* Mutant: no cpu check; off CPU 0 the plain add runs there, on
	 * memory, and nothing on CPU 0 aborts it. */
	:: section_start(2);
#else
	:: section_start(0);
#endif
	   if
	   :: d_step {
		sok ->
		ab = !LIVE_SEC;
		if
		:: ab -> SECTION_END
		:: else -> LOAD_CCL(cs)
		fi
	      };
	      if
	      :: !ab ->
		d_step {
			ab = !LIVE_SEC;
			if
			:: !ab -> store_ccl(cs, tb + bytes, tr + recs); publish()
			:: else
			fi;
			SECTION_END; tb = 0; tr = 0
		}
	      :: else
	      fi;
	      if
	      :: ab -> ab = 0;
		/* Retry, or give up after GRB_RSEQ_TRIES aborts: the
		 * remote form, from CPU 0. */
		if
		:: skip
		:: RSEQ_GIVEUP -> rcc_remote(bytes, recs); break
		fi
	      :: else -> break
	      fi
	   :: else -> rcc_remote(bytes, recs); break
	   fi
	od;
	/* S = cc_local + cc, one load each: cc_local first, as the C code
	 * (RSEQ_CC_FIRST swaps them). */
#ifdef RSEQ_CC_FIRST
	atomic { tb = cc_b[cs]; tr = cc_r[cs] };
	load_ccl(cs)
#else
	load_ccl(cs);
	d_step { tb = tb + cc_b[cs]; tr = tr + cc_r[cs] }
#endif
}

/*
 * If the sum completes the lap: claim it (claim() in src/rseq.c: load
 * claimed and, below lap + 1, CAS it there) and deliver when the claim
 * is ours.  The load and the CAS are one step: between them `claimed`
 * can only move to this lap (a later lap opens only after this one is
 * delivered), which fails the CAS just as it fails the load's test.
 */
inline rcc_complete(p)
{
	if
	:: d_step {
		tb == (LAP(p) + 1) * SBSIZE ->
#ifdef MUTANT_RSEQ_NO_CLAIM
		/* Mutant: every commit that sees the lap complete delivers. */
		won = 1
#else
		won = (claimed[cs] < LAP(p) + 1);
		if
		:: won -> claimed[cs] = LAP(p) + 1
		:: else
		fi
#endif
	   };
	   if
	   :: won -> won = 0; deliver(p, tb, tr)
	   :: else
	   fi
	:: else
	fi;
	tb = 0; tr = 0
}
#endif

inline commit_add(p, bytes, recs)
{
#if RSEQ
	rcc_add(p, bytes, recs);
	rcc_complete(p)
#else
	atomic { cc_add(p, bytes, recs) };
	cc_complete(p)
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

/*
 * grb__overwrite_enter(): one load of the id word.  NOREF clear: a writer
 * of this lap has entered the slot, and it pushed the reader before it
 * cleared NOREF, so there is nothing left to do (design.md section 8).
 * NOREF set: push, then take the slot from the reader.
 */
inline enter(p, ph)
{
#if OVERWRITE
	if
	:: atomic { !id_noref[SLOT(p)] -> ph = id_idx[SLOT(p)] }
	:: else ->
		/* (Mutant: the writer that finds NOREF set skips the push
		 * too.) */
#ifndef MUTANT_ENTER_NO_PUSH
		push(p);
#endif
#ifdef MUTANT_NO_NOREF_CLEAR
		ph = id_idx[SLOT(p)]
#else
		atomic { id_noref[SLOT(p)] = 0; ph = id_idx[SLOT(p)] }
#endif
	fi
#else
	ph = SLOT(p);
#endif
}

/*
 * grb_write_record(): the entry check of enter(), made before the
 * reservation, on the slot of the position p just loaded.  NOREF set:
 * the record leaves the one-call path (late), and its reservation will
 * enter the slot after it as grb_reserve() does.  Clear: ph is the
 * sub-buffer to write to.  (MUTANT_EARLY_NO_NOREF does not test NOREF.)
 */
inline early_id(p, ph)
{
#if OVERWRITE
	atomic {
		if
#ifndef MUTANT_EARLY_NO_NOREF
		:: id_noref[SLOT(p)] -> late = 1
#endif
		:: else -> ph = id_idx[SLOT(p)]
		fi
	}
#else
	ph = SLOT(p)
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
#if RSEQ
	clz = SBOFF(old);
	commit_add(old - 1, SBSIZE - SBOFF(old), 0)
#else
	atomic {
		close_size[SLOT(old - 1)] = SBOFF(old);
		cc_add(old - 1, SBSIZE - SBOFF(old), 0)
	};
	cc_complete(old - 1)
#endif
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
#if EARLY_ENTER
	late = 0;
#endif
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
#if EARLY_ENTER && !defined(MUTANT_EARLY_KEEP_PH)
		; eph = 0
#endif
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
#elif RSEQ
		/* The fast path's section when the record ends strictly
		 * inside the open sub-buffer and no section of this call
		 * failed yet (grb_reserve); else the slow path's locked CAS
		 * (grb__reserve_slow, grb__offset_cas). */
		atomic {
			if
			:: ns -> b = b + HDR
			:: else -> skip
			fi;
			e = b + sz;
			ok = 0
		};
		if
#if EARLY_ENTER
		/* grb_write_record(): the id, then the section; a NOREF
		 * set or a failed section leaves the one-call path. */
		:: !slow && !late && !ns && SBOFF(e) != 0 ->
			early_id(old, ph);
			if
			:: late -> skip
			:: else ->
				fast_section(old, e);
#ifdef MUTANT_EARLY_KEEP_PH
				/* Mutant: a ph read early is kept for
				 * whatever reservation follows (eph is not
				 * cleared at each attempt either). */
				eph = 1;
#else
				eph = ok;
#endif
				late = !ok
			fi
		:: !slow && late && !ns && SBOFF(e) != 0 ->
#else
		:: !slow && !ns && SBOFF(e) != 0 ->
#endif
			fast_section(old, e);
			slow = !ok
		:: else ->
#ifdef MUTANT_RSEQ_SLOW_PLAIN_CAS
			/* Mutant: a locked CAS outside any section and
			 * without the remote protocol, wherever it runs. */
			atomic {
				PREEMPT0;
				if
				:: offset == old -> offset = e; ok = 1
				:: else -> ok = 0
				fi
			}
#else
			locked_cas(old, e)
#endif
		fi;
		if
		:: ok -> break
		:: else -> skip
		fi
#else
#if EARLY_ENTER
		/* grb_write_record(): the id, then the CAS; a NOREF set or
		 * a failed CAS leaves the one-call path. */
		fe = (!late && !ns && SBOFF(old + sz) != 0);
		if
		:: fe -> early_id(old, ph)
		:: else -> skip
		fi;
		if
		:: fe && late -> ok = 0
		:: else ->
#endif
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
#if EARLY_ENTER
#ifdef MUTANT_EARLY_KEEP_PH
		eph = eph || (fe && !late);
#else
		eph = fe && ok;
#endif
		late = late || (fe && !ok)
		fi;
#endif
		if
		:: ok -> break
		:: else -> skip
		fi
#endif
	   fi
	od;
#if RSEQ
	slow = 0;
#endif
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
#if EARLY_ENTER
		/* grb_write_record(): ph was read before the reservation. */
		if
		:: eph -> skip
		:: else -> enter(e - 1, ph)
		fi;
#else
		enter(e - 1, ph);
#endif
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
#if RSEQ
	usz = sz;
	commit_add(e - 1, sz, 1);
#else
	atomic {
		unmark(ph, SBOFF(b), SBOFF(b) + sz);
		cc_add(e - 1, sz, 1)
	};
	cc_complete(e - 1);
#endif
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
#if RSEQ
		locked_cas(e, TRUNC(e) + SBSIZE)
#else
		atomic {
			if
			:: offset == e -> offset = TRUNC(e) + SBSIZE; ok = 1
			:: else -> ok = 0
			fi
		}
#endif
	:: else -> ok = 1   /* the slot fills its sub-buffer: already its closer */
	fi;
	if
	:: ok ->
		/* The sub-buffer now ends where the slot began; the slot
		 * and the rest of the sub-buffer are committed as padding. */
#if RSEQ
		atomic { release_discarded(sz); n_disc++ };
#ifndef MUTANT_DISCARD_NO_CLOSE
		clz = SBOFF(b);
#endif
		commit_add(e - 1, sz + (SBOFF(e) != 0) * (SBSIZE - SBOFF(e)), 0)
#else
		atomic {
#ifndef MUTANT_DISCARD_NO_CLOSE
			close_size[SLOT(e - 1)] = SBOFF(b);
#endif
			release_discarded(sz);
			n_disc++;
			cc_add(e - 1, sz + (SBOFF(e) != 0) * (SBSIZE - SBOFF(e)), 0)
		};
		cc_complete(e - 1)
#endif
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
#if EARLY_ENTER
/* late: this record has left the one-call fast path (NOREF set, or its
 * section or CAS failed) and goes on as grb_reserve(); eph: ph was read
 * before the reservation that succeeded; fe: this attempt is the
 * one-call fast path's. */
#define EARLY_LOCALS ; bit late, eph, fe
#else
#define EARLY_LOCALS
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
#if RSEQ
#define RSEQ_LOCALS ; byte th, sok, usz, clz; bit ab, won, slow
#else
#define RSEQ_LOCALS
#endif
#define WRITER_LOCALS \
	byte old, b, e, ph, c, r, k, ds, dph, cs, tb, tr; \
	bit oe, ns, ok; byte fail TS_LOCALS NEST_LOCALS WAIT_LOCALS RSEQ_LOCALS \
	EARLY_LOCALS

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

#if RSEQ
	th = w;
#endif
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
#if RSEQ
	atomic {
		running--;
		if
		:: w == RSEQ_MIG -> mdone = 1
		:: else
		fi
	}
#else
	running--
#endif
}

/* grb_buf_flush(): close the open sub-buffer, or make a header-only one. */
#if RSEQ
#define FLUSH_STOP d_step { PREEMPT0; blocked-- }; goto done
#else
#define FLUSH_STOP goto done
#endif
proctype flusher()
{
	WRITER_LOCALS;
	bit hdr_only;

#if RSEQ
	/* Wherever it runs, the remote protocol around its CAS loop
	 * (design.md 25.3); its commits are local on CPU 0.  An active flush
	 * with nothing open spares CPU 0 the fence (grb_buf_flush's first
	 * load: a fast path's plain store moves offset inside the open
	 * sub-buffer only). */
	th = 3;
	if
	:: !FLUSH_EMPTY && SBOFF(offset) == 0 -> goto done
	:: else
	fi;
	d_step { PREEMPT0; blocked++ };
#ifndef MUTANT_RSEQ_REMOTE_NO_MEMBARRIER
	MEMBARRIER;
#endif
#endif
	do
	:: old = offset;
	   if
	   :: SBOFF(old) != 0 -> e = TRUNC(old) + SBSIZE; hdr_only = 0
	   :: else ->
		if
		:: FLUSH_EMPTY ->
			subbuf_free(old, ok);
			if
			:: !ok -> FLUSH_STOP
			:: else -> skip
			fi;
			e = old + SBSIZE; hdr_only = 1
		:: else -> FLUSH_STOP
		fi
	   fi;
	   atomic {
#if RSEQ
		PREEMPT0;
#endif
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
#if RSEQ
	atomic { PREEMPT0; blocked-- };     /* (a loop's exit may not enter a d_step) */
#endif
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
#if LIVE && RSEQ
/* The bytes committed, CPU 0's pending store included: it reaches memory
 * in a moment, and a reader asleep by then is owed the wake-up. */
#define CC_SEEN(s) (cc_b[s] + ((sbp && sbs == (s)) -> sbv_b : ccl_b[s]))
#elif LIVE
#define CC_SEEN(s) cc_b[s]
#endif
#if LIVE
#define LIVE_MET (TRUNC(offset) == consumed && SBOFF(offset) != 0 && \
	CC_SEEN(SLOT(consumed)) - LAP(consumed) * SBSIZE == SBOFF(offset) && \
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
#if RSEQ && !defined(MUTANT_RSEQ_NO_ARM_FENCE)
	   /* src/wait.c arm_fence(): after the bit, membarrier on the
	    * buffer's CPU, so that a commit there whose load of `waiting`
	    * missed the bit has its store in memory for the check below.
	    * (Mutant: no fence.) */
	   MEMBARRIER;
#endif
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
#if RSEQ
	byte th = 0;                /* cpu[0]: off CPU 0, always */
#endif
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

#if RSEQ
/*
 * What the hardware and the scheduler do on their own: CPU 0's store
 * buffer drains its pending store at any step, and the thread of writer
 * RSEQ_MIG migrates (CPU 0 to elsewhere or back) RSEQ_NMIG times at
 * most while it runs.  A migration is a context switch on CPU 0: the
 * section live there is aborted and the scheduler's barriers drain the
 * store buffer.
 */
proctype env()
{
end_env:
	do
	:: atomic {
		RSEQ_MIG != 0 && nmig < RSEQ_NMIG && !mdone ->
		cpu[RSEQ_MIG] = 1 - cpu[RSEQ_MIG];
		nmig++;
		live0 = 0;
		drain()
	   }
	od
}
#endif

init {
	atomic {
		byte i;

		for (i : 0 .. NSB - 1) {
			id_idx[i] = i
		}
		running = 2 + FLUSHER;
#if RSEQ
		cpu[0] = 1;         /* the finalizer: elsewhere */
		cpu[3] = !RSEQ_FLUSH0;
#endif
		run writer(1, SIZE_A, SIZE_B, NESTED);
		run writer(2, SIZE_B, SIZE_A, 0);
#if FLUSHER
		run flusher();
#endif
		run finalizer();
		run reader()
#if RSEQ
		; run env()
#endif
	}
}

#ifdef CHECK_PROGRESS
/* Progress: under weak fairness every run finalizes and drains. */
ltl progress { <> (finalized && consumed >= TRUNC(offset)) }
#endif
