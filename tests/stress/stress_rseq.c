/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/stress_rseq.c - the per-CPU (rseq) write path under
 * everything that aborts its critical sections or takes it off the
 * buffer's CPU (docs/design.md section 25): real migrations between
 * reserve and commit, preemption, signals landing inside sections, and
 * remote operations (flushes, remote discards and commits) racing with
 * the plain stores of the buffer's own CPU.
 *
 * For every per-CPU test client variant (overwrite and discard, full
 * and compressed timestamps: each asks for GRB_CONFIG_SYNC_PER_CPU),
 * with small buffers (4 KiB x 4: full, wrap and sub-buffer switches are
 * hot) and roomy ones (64 KiB x 8), two writer threads per online CPU
 * (at least 4) loop on: reserve a tagged record; with probability 1/8
 * move to a random allowed CPU with sched_setaffinity() (a real
 * migration: the commit then runs elsewhere); sometimes yield or spin;
 * commit, or now and then (after one move in eight) give the record up
 * with tc_abandon() (a discard from another CPU, or a skip record when
 * the discard is refused).  Now and then a writer lets itself run on
 * every CPU again.  After each such record comes a burst of 0 to 15
 * plain records (tc_write(), nothing between reserve and commit), so
 * that writers also spend their time in the sections themselves, not
 * only in system calls.
 *
 * Each writer arms a POSIX timer of its own (CLOCK_MONOTONIC, 20 to
 * 50 us, SIGEV_THREAD_ID) that sends SIGUSR1 to it; the handler writes a
 * whole record as the writer's handler id (writers + writer), with its
 * own sequence counter, so signals land anywhere, in the writer's
 * sections and between its reserve and commit, and the sections they
 * interrupt must abort.  The handler's state is the thread's (reached
 * through a thread-local pointer; SIGUSR1 is blocked while it runs, so
 * handlers of one thread never nest) and its counters are lock-free
 * atomics: it is async-signal-safe.  A reader thread drains every buffer
 * all along, and a flusher thread flushes the channel every 200 us
 * (every sixteenth an empty flush).
 *
 * At the end the timers are deleted by their threads, the channel is
 * finalized and drained, and: tc_final_check() (every record intact and
 * read exactly once, or counted as overwritten; discarded and skip
 * records as the writers counted them; grb_buf_validate() on every
 * buffer); each refusal was a documented errno for its mode (-ENOBUFS
 * discard mode only, -EIO, and -EBUSY only in handlers) and lost_full,
 * lost_wrap and lost_nesting equal the refusals counted; handlers ran
 * and wrote, some inside their thread's reservation; writers really
 * moved.  When this environment gives the rseq path (not under
 * ThreadSanitizer, valgrind or GRB_SYNC=atomic: computed as the library
 * decides it) the channel must report it, and remote_commits and
 * remote_moves must both be above 0: the run migrated and flushed.  On
 * the atomic path both must be 0.
 *
 * Usage: stress_rseq [SECONDS [SEED]]   (default 2 s, seed from clock)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "stress_util.h"
#include "expect_path.h"
#include "tclient.h"


#define MAX_WRITERS 32
#define FLUSH_EVERY_NS 200000u
/* The checker's two tables, ids x maxseq bytes each, stay below this. */
#define TABLE_BYTES (UINT64_C(1) << 27)

struct writer {
	pthread_t tid;
	uint32_t id;                    /* the thread's writer id */
	uint32_t hid;                   /* its handler's */
	uint64_t rng;
	uint32_t seq;                   /* next; refusals and abandons reuse it */
	uint64_t written, lost_full, lost_wrap, moves, migrated, yields;
	uint64_t discards, skips, unpins, plain;
	int bad;                        /* first unexpected return, or 0 */
	timer_t timer;
	uint64_t interval_ns;
	/* Touched by the thread's handler: its own, or lock-free atomics. */
	atomic_int ready;               /* the handler may write */
	atomic_int in_window;           /* between reserve and commit */
	uint64_t hrng;
	uint32_t hseq;
	atomic_uint_fast64_t hsignals, hwritten, hinside;
	atomic_uint_fast64_t hfull, hwrap, hbusy;
	atomic_int hbad;
};

/* The current run, for the handlers; set before any thread starts. */
static const struct grb_config *g_cfg;
static struct grb_channel *g_chan;
static struct tc_checker g_tc;
static uint32_t g_maxseq;
static int g_nwriters;
static struct writer g_w[MAX_WRITERS];
static atomic_int g_stop, g_writers_done;
static uint64_t g_flushes;

static _Thread_local struct writer *tls_writer;

static const struct stress_args *args;
static int cur_variant;
static size_t cur_sb, cur_nsb;

/* The CPUs the process may run on. */
static cpu_set_t all_cpus;
static int cpus[CPU_SETSIZE], ncpus;

static void run_failed(const char *what)
{
	fprintf(stderr, "stress_rseq: FAILED: %s\n"
		"  variant %s, sub-buffers %zu x %zu, %d writers, seed %"
		PRIu64 "\n  repeat: stress_rseq %g %" PRIu64 "\n", what,
		tc_variant_name(cur_variant), cur_sb, cur_nsb, g_nwriters,
		args->seed, args->seconds, args->seed);
	exit(1);
}

/* ---- the path this environment gives ----------------------------------- */

/* Whether a private per-CPU channel created now takes the rseq path
 * (docs/design.md section 25.5), and *why not. */
static int expect_rseq(const char **why)
{
	static const char *const names[] = {
		"as asked", "no rseq sections for this architecture",
		"no rseq registration", "no rseq membarrier", "shared",
		"GRB_SYNC=atomic", "ThreadSanitizer build",
	};
	enum grb_path_reason r = test_expected_reason(0);

	*why = names[r];
	return r == GRB_PATH_AS_ASKED;
}

/* ---- writers and their handlers --------------------------------------- */

static void spin(uint64_t n)
{
	uint64_t i;

	/* The fence keeps the empty loop from being optimised away. */
	for (i = 0; i < n; i++)
		atomic_signal_fence(memory_order_seq_cst);
}

static void set_cpu(int c)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	/* SA_RESTART, and sched_setaffinity() is not interrupted anyway. */
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		run_failed("sched_setaffinity");
}

static void set_all_cpus(void)
{
	if (sched_setaffinity(0, sizeof(all_cpus), &all_cpus) != 0)
		run_failed("sched_setaffinity (all CPUs)");
}

static void handler_write(struct writer *w)
{
	uint64_t r = stress_rand(&w->hrng);
	int inside = atomic_load_explicit(&w->in_window,
					  memory_order_relaxed);
	int ret;

	if (w->hseq >= g_maxseq)
		return;
	ret = tc_write(g_cfg, g_chan, w->hid, w->hseq, (uint32_t)(r % 48));
	if (ret == 0) {
		tc_mark_reserved(&g_tc, w->hid, w->hseq);
		w->hseq++;
		atomic_fetch_add_explicit(&w->hwritten, 1,
					  memory_order_relaxed);
		if (inside)
			atomic_fetch_add_explicit(&w->hinside, 1,
						  memory_order_relaxed);
	} else if (ret == -ENOBUFS && g_cfg->mode == GRB_MODE_DISCARD) {
		atomic_fetch_add_explicit(&w->hfull, 1, memory_order_relaxed);
	} else if (ret == -EIO) {
		atomic_fetch_add_explicit(&w->hwrap, 1, memory_order_relaxed);
	} else if (ret == -EBUSY) {
		atomic_fetch_add_explicit(&w->hbusy, 1, memory_order_relaxed);
	} else {
		atomic_store_explicit(&w->hbad, ret, memory_order_relaxed);
	}
}

static void on_timer(int sig)
{
	int saved_errno = errno;
	struct writer *w = tls_writer;

	(void)sig;
	if (w && atomic_load_explicit(&w->ready, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&w->hsignals, 1,
					  memory_order_relaxed);
		handler_write(w);
	}
	errno = saved_errno;
}

/* A timer of this thread's own, SIGUSR1 every interval_ns. */
static void arm_timer(struct writer *w)
{
	struct sigevent sev;
	struct itimerspec its;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &w->timer) != 0)
		run_failed("timer_create");
	its.it_interval.tv_sec = 0;
	its.it_interval.tv_nsec = (long)w->interval_ns;
	its.it_value = its.it_interval;
	if (timer_settime(w->timer, 0, &its, NULL) != 0)
		run_failed("timer_settime");
}

/* Give the record up, after a move: a remote discard, or a skip. */
static void abandon(struct writer *w, struct tc_pending *p)
{
	int discarded = tc_abandon(p);

	tc_mark_abandoned(&g_tc, discarded);
	if (discarded)
		w->discards++;
	else
		w->skips++;
}

/* Records with nothing between reserve and commit (tc_write()). */
static void plain_burst(struct writer *w, unsigned int n)
{
	uint64_t r;
	int ret;

	while (n-- > 0 && w->seq < g_maxseq) {
		r = stress_rand(&w->rng);
		ret = tc_write(g_cfg, g_chan, w->id, w->seq,
			       (uint32_t)(r % 40));
		if (ret == 0) {
			tc_mark_reserved(&g_tc, w->id, w->seq);
			w->seq++;
			w->written++;
			w->plain++;
		} else if (ret == -ENOBUFS &&
			   g_cfg->mode == GRB_MODE_DISCARD) {
			w->lost_full++;
		} else if (ret == -EIO) {
			w->lost_wrap++;
		} else if (!w->bad) {
			w->bad = ret;
		}
	}
}

static void *writer_main(void *arg)
{
	struct writer *w = (struct writer *)arg;
	struct tc_pending p;
	uint32_t extra;
	uint64_t r;
	int ret, moved;

	tls_writer = w;
	atomic_store(&w->ready, 1);
	arm_timer(w);
	while (!atomic_load_explicit(&g_stop, memory_order_relaxed) &&
	       w->seq < g_maxseq) {
		r = stress_rand(&w->rng);
		/* Mostly small records, some up to 256 pattern bytes. */
		extra = (r & 7) ? (uint32_t)((r >> 8) % 40) :
			(uint32_t)((r >> 8) % 257);
		ret = tc_reserve(g_cfg, g_chan, w->id, w->seq, extra, &p);
		if (ret == -ENOBUFS && g_cfg->mode == GRB_MODE_DISCARD) {
			w->lost_full++;
			continue;
		} else if (ret == -EIO) {
			w->lost_wrap++;
			continue;
		} else if (ret != 0) {
			if (!w->bad)
				w->bad = ret;
			continue;
		}
		atomic_store_explicit(&w->in_window, 1, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		moved = 0;
		if (((r >> 24) & 7) == 0) {
			set_cpu(cpus[(r >> 32) % (uint64_t)ncpus]);
			w->moves++;
			moved = 1;
			if (sched_getcpu() != p.ctx.cpu)
				w->migrated++;
		}
		if (((r >> 27) & 15) == 0) {
			sched_yield();
			w->yields++;
		} else if (((r >> 27) & 15) == 1) {
			spin((r >> 40) & 4095);
		}
		if (moved && ((r >> 52) & 7) == 0) {
			abandon(w, &p);
		} else {
			tc_finish(&p);
			tc_mark_reserved(&g_tc, w->id, w->seq);
			w->seq++;
			w->written++;
		}
		atomic_signal_fence(memory_order_seq_cst);
		atomic_store_explicit(&w->in_window, 0, memory_order_relaxed);
		if (((r >> 56) & 31) == 0) {
			set_all_cpus();
			w->unpins++;
		}
		/* Then a burst of plain records: time in the sections
		 * themselves, where the timer's signals must abort them. */
		plain_burst(w, (unsigned int)((r >> 44) & 15));
	}
	/* No timer signal after this; one already pending writes nothing
	 * once ready is 0. */
	if (timer_delete(w->timer) != 0)
		run_failed("timer_delete");
	atomic_store(&w->ready, 0);
	set_all_cpus();
	return NULL;
}

static void *reader_main(void *arg)
{
	uint64_t n;

	(void)arg;
	while (!atomic_load(&g_writers_done)) {
		n = tc_drain_all(&g_tc, g_chan);
		if (n == 0)
			sched_yield();
	}
	return NULL;
}

static void *flusher_main(void *arg)
{
	unsigned int k = 0;

	(void)arg;
	while (!atomic_load(&g_writers_done)) {
		/* Remote moves and commits on every buffer with data,
		 * racing with its CPU's sections. */
		if (grb_channel_flush(g_chan, (++k & 15) == 0 ?
				      GRB_FLUSH_EMPTY : GRB_FLUSH_ACTIVE) != 0)
			run_failed("grb_channel_flush");
		g_flushes++;
		stress_sleep_ns(FLUSH_EVERY_NS);
	}
	return NULL;
}

/* ---- one run ---------------------------------------------------------- */

struct totals {
	uint64_t written, full, wrap, busy, refused, moves, migrated, yields;
	uint64_t discards, skips, unpins, exhausted, plain;
	uint64_t hsignals, hwritten, hinside;
};

static void collect(struct totals *s)
{
	char why[160];
	int t, bad;

	memset(s, 0, sizeof(*s));
	for (t = 0; t < g_nwriters; t++) {
		struct writer *w = &g_w[t];

		bad = w->bad ? w->bad : atomic_load(&w->hbad);
		if (bad) {
			snprintf(why, sizeof(why), "writer %d%s: returned %d (%s)",
				 t, w->bad ? "" : "'s handler", bad,
				 grb_strerror(bad));
			run_failed(why);
		}
		s->written += w->written + atomic_load(&w->hwritten);
		s->full += w->lost_full + atomic_load(&w->hfull);
		s->wrap += w->lost_wrap + atomic_load(&w->hwrap);
		s->busy += atomic_load(&w->hbusy);
		s->moves += w->moves;
		s->migrated += w->migrated;
		s->yields += w->yields;
		s->discards += w->discards;
		s->skips += w->skips;
		s->unpins += w->unpins;
		s->plain += w->plain;
		s->exhausted += w->seq >= g_maxseq;
		s->hsignals += atomic_load(&w->hsignals);
		s->hwritten += atomic_load(&w->hwritten);
		s->hinside += atomic_load(&w->hinside);
	}
	s->refused = s->full + s->wrap + s->busy;
}

static void run_variant(int v, size_t subbuf_size, size_t num_subbuf,
			uint64_t slice_ns, int want_rseq)
{
	struct grb_channel_attr attr = {
		.name = tc_variant_name(v),
		.subbuf_size = subbuf_size,
		.num_subbuf = num_subbuf,
	};
	uint64_t slice_ms = slice_ns / 1000000u, cap;
	pthread_t reader, flusher;
	enum grb_path_reason why;
	struct grb_buf_stats st;
	struct totals s;
	unsigned int i, nids = 2 * (unsigned int)g_nwriters;
	char msg[160];
	int t, path;

	cur_variant = v;
	cur_sb = subbuf_size;
	cur_nsb = num_subbuf;
	g_cfg = tc_config(v);
	if (!(g_cfg->flags & GRB_CONFIG_SYNC_PER_CPU))
		run_failed("the variant does not ask for the per-CPU path");
	/* Enough sequence numbers for a fast writer; one that runs out
	 * stops early, which only shortens its part of the run. */
	g_maxseq = (uint32_t)(slice_ms * 4000u < (1u << 16) ? 1u << 16 :
			      slice_ms * 4000u > (1u << 23) ? 1u << 23 :
			      slice_ms * 4000u);
	cap = TABLE_BYTES / nids;
	if (g_maxseq > cap)
		g_maxseq = (uint32_t)cap;
	printf("run: %-36s sb %5zu x %zu, %d writers\n", tc_variant_name(v),
	       subbuf_size, num_subbuf, g_nwriters);
	fflush(stdout);
	if (grb_channel_create(g_cfg, &attr, &g_chan) != 0)
		run_failed("grb_channel_create");
	path = grb_channel_write_path(g_chan, &why);
	if (path != (want_rseq ? GRB_WRITE_RSEQ : GRB_WRITE_ATOMIC) ||
	    (want_rseq && why != GRB_PATH_AS_ASKED) ||
	    (!want_rseq && why == GRB_PATH_AS_ASKED)) {
		snprintf(msg, sizeof(msg), "write path %d (reason %d), "
			 "expected %s", path, (int)why,
			 want_rseq ? "rseq" : "atomic");
		run_failed(msg);
	}
	if (tc_checker_init(&g_tc, g_chan, nids, g_maxseq) != 0)
		run_failed("tc_checker_init: out of memory");
	for (i = 0; i < grb_channel_nr_bufs(g_chan); i++)
		if (grb_reader_open(grb_channel_buf(g_chan, i)) != 0)
			run_failed("grb_reader_open");
	atomic_store(&g_stop, 0);
	atomic_store(&g_writers_done, 0);
	g_flushes = 0;
	memset(g_w, 0, sizeof(g_w));
	CHECK_EQ(pthread_create(&reader, NULL, reader_main, NULL), 0);
	CHECK_EQ(pthread_create(&flusher, NULL, flusher_main, NULL), 0);
	for (t = 0; t < g_nwriters; t++) {
		struct writer *w = &g_w[t];

		w->id = (uint32_t)t;
		w->hid = (uint32_t)(g_nwriters + t);
		w->rng = stress_seed(args->seed, (uint64_t)v * 2 +
				     (subbuf_size > 4096), (uint64_t)t);
		w->hrng = stress_seed(w->rng, 100, (uint64_t)t);
		w->interval_ns = 20000 + stress_rand(&w->hrng) % 30001;
		CHECK_EQ(pthread_create(&w->tid, NULL, writer_main, w), 0);
	}
	stress_sleep_ns(slice_ns);
	atomic_store(&g_stop, 1);
	for (t = 0; t < g_nwriters; t++)
		CHECK_EQ(pthread_join(g_w[t].tid, NULL), 0);
	atomic_store(&g_writers_done, 1);
	CHECK_EQ(pthread_join(reader, NULL), 0);
	CHECK_EQ(pthread_join(flusher, NULL), 0);
	if (grb_channel_finalize(g_chan) != 0)
		run_failed("grb_channel_finalize");
	tc_drain_all(&g_tc, g_chan);
	collect(&s);
	grb_channel_get_stats(g_chan, &st);
	printf("     written %8" PRIu64 " read %8" PRIu64 " overwritten %8"
	       PRIu64 " lost full %" PRIu64 " wrap %" PRIu64 " nesting %"
	       PRIu64 "\n     plain records %" PRIu64 ", moves %" PRIu64
	       " (%" PRIu64 " to another CPU)"
	       " discards %" PRIu64 " skips %" PRIu64 " yields %" PRIu64
	       " flushes %" PRIu64 "\n     signals %" PRIu64 " handler "
	       "records %" PRIu64 " (%" PRIu64 " inside a reservation)\n"
	       "     remote commits %" PRIu64 " remote moves %" PRIu64
	       "; %" PRIu64 " writers ran out of sequence numbers\n",
	       st.written, st.read, st.overwritten, st.lost_full, st.lost_wrap,
	       st.lost_nesting, s.plain, s.moves, s.migrated, s.discards, s.skips,
	       s.yields, g_flushes, s.hsignals, s.hwritten, s.hinside,
	       st.remote_commits, st.remote_moves, s.exhausted);
	fflush(stdout);
	if (tc_final_check(&g_tc, g_chan, s.refused) != 0)
		run_failed("tc_final_check (messages above)");
	for (i = 0; i < grb_channel_nr_bufs(g_chan); i++) {
		if (grb_buf_validate(grb_channel_buf(g_chan, i), msg,
				     sizeof(msg)) != 0) {
			fprintf(stderr, "buf %u: %s\n", i, msg);
			run_failed("grb_buf_validate");
		}
	}
	if (st.lost_full != s.full || st.lost_wrap != s.wrap)
		run_failed("lost_full/lost_wrap differ from the refusals seen");
	if (st.lost_nesting != s.busy)
		run_failed("lost_nesting differs from the handlers' -EBUSY");
	if (st.lost_big)
		run_failed("records refused as too big");
	if (st.written != s.written + s.skips)
		run_failed("written differs from the records committed");
	if (st.discarded != s.discards)
		run_failed("discarded differs from the writers' discards");
	if (g_tc.records_read == 0 || s.moves == 0)
		run_failed("nothing read, or no writer moved");
	if (ncpus > 1 && s.migrated == 0)
		run_failed("no writer committed on another CPU than it reserved on");
	if (s.hsignals == 0 || s.hwritten == 0)
		run_failed("no timer signal wrote a record");
	if (s.hinside == 0)
		run_failed("no handler wrote inside its thread's reservation");
	if (want_rseq) {
		if (st.remote_commits == 0 || st.remote_moves == 0)
			run_failed("rseq path: no remote commit or no remote move");
	} else if (st.remote_commits || st.remote_moves) {
		run_failed("atomic path: remote counters moved");
	}
	tc_checker_free(&g_tc);
	grb_channel_destroy(g_chan);
	g_chan = NULL;
}

int main(int argc, char **argv)
{
	static const size_t geom[2][2] = { { 4096, 4 }, { 65536, 8 } };
	static const int variants[] = {
		0, TV_DISCARD, TV_COMPRESS, TV_DISCARD | TV_COMPRESS,
	};
	const int nvar = (int)(sizeof(variants) / sizeof(variants[0]));
	struct stress_args a;
	struct sigaction sa;
	const char *why;
	uint64_t slice_ns;
	int v, g, c, want_rseq;

	stress_parse(argc, argv, &a);
	args = &a;
	CHECK_EQ(sched_getaffinity(0, sizeof(all_cpus), &all_cpus), 0);
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all_cpus))
			cpus[ncpus++] = c;
	CHECK(ncpus > 0);
	g_nwriters = 2 * stress_ncpus();
	if (g_nwriters < 4)
		g_nwriters = 4;
	if (g_nwriters > MAX_WRITERS)
		g_nwriters = MAX_WRITERS;
	want_rseq = expect_rseq(&why);
	printf("expected write path: %s (%s); %d CPUs allowed\n",
	       want_rseq ? "rseq" : "atomic", why, ncpus);

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_timer;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);

	slice_ns = (uint64_t)(a.seconds * 1e9 / (nvar * 2));
	for (v = 0; v < nvar; v++)
		for (g = 0; g < 2; g++)
			run_variant(variants[v], geom[g][0], geom[g][1],
				    slice_ns, want_rseq);
	printf("stress_rseq: %d runs passed\n", nvar * 2);
	return 0;
}
