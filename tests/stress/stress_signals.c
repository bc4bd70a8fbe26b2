/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/stress_signals.c - records written from signal handlers
 * that interrupt writers between reserve and commit, nested past the
 * nesting bound.
 *
 * For every configuration variant, with small (4 KiB x 4) and roomy
 * (64 KiB x 8) buffers, a few writer threads write tagged records, half of
 * them through a hook that spins between grb_reserve() and grb_commit() to
 * widen the window.  A signaller thread sends SIGUSR1 to the writers every
 * few microseconds; the handler writes a tagged record itself, also with a
 * spinning hook, so it is in turn interrupted by the next SIGUSR1 (the
 * handlers are installed with SA_NODEFER).  Some handlers, and some
 * writers inside their window, start a chain: the hook raises SIGUSR2 on
 * its own thread, whose handler writes and raises again from inside its
 * own window, down to HDEPTH handler levels, which is deeper than
 * GRB_MAX_NESTING: the deepest reservations must be refused with -EBUSY,
 * counted as lost_nesting, and everything must still add up.  A chain
 * has a budget of raises, so it ends however signals are delivered.
 * Where a signal raised inside a handler is not delivered until the
 * handler returns (ThreadSanitizer does this), a probe at start finds out
 * and chains call the handler directly instead: the same nesting of
 * reservations on one thread, without the kernel in between.
 *
 * Writer ids: thread t writes as id t; its handler at depth d (0 for a
 * handler interrupting the thread, 1 for one interrupting that handler,
 * ...) writes as id NWRITERS + t * HDEPTH + d, with a sequence counter of
 * that thread and depth.  Only one handler of a given depth runs on a
 * thread at a time, so each id's records are reserved in sequence order,
 * as the checker requires.  Handler state is per thread (found through a
 * thread-local pointer) and its counters are lock-free atomics, so the
 * handler is async-signal-safe.
 *
 * Termination: the signaller is stopped and joined before the writers
 * are told to stop, so no signal targets a thread that has exited; a
 * handler on a thread that has finished its loop writes nothing.
 *
 * Checks: tc_final_check() (every record intact and read once or counted
 * overwritten, grb_buf_validate() on every buffer, lost == refused), the
 * -EBUSY refusals seen by handlers equal lost_nesting and are not zero,
 * no writer outside a handler is refused for nesting, and handlers did
 * write while their thread sat inside a reservation.
 *
 * Usage: stress_signals [SECONDS [SEED]]   (default 2 s, seed from clock)
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

#include "check.h"
#include "stress_util.h"
#include "tclient.h"

#define NWRITERS 4
#define HDEPTH (GRB_MAX_NESTING + 2)    /* handler levels that write */
#define NIDS (NWRITERS * (1 + HDEPTH))
#define CHAIN_SIG SIGUSR2

struct writer {
	pthread_t tid;
	uint32_t id;
	uint64_t rng;                   /* the thread's own decisions */
	uint32_t seq;
	uint64_t written, refused, busy;
	int bad;                        /* first unexpected error, or 0 */
	/* Touched by handlers: lock-free atomics or per-depth slots. */
	atomic_int ready;               /* handlers may write */
	atomic_uint depth;              /* handlers running on the thread */
	atomic_uint in_window;          /* thread between reserve and commit */
	uint64_t hrng[HDEPTH];          /* per depth: one handler at a time */
	uint32_t hseq[HDEPTH];
	atomic_uint_fast64_t hwritten, hrefused, hbusy;
	atomic_uint_fast64_t handled;   /* SIGUSR1 handlers run */
	/* Handler records written while the thread sat in its reservation:
	 * all of them, and those of SIGUSR1 (asynchronous) handlers. */
	atomic_uint_fast64_t hinside, hasync;
	atomic_uint_fast64_t chains;
	atomic_uint chain_left;         /* SIGUSR2 raises the chain may do */
	atomic_int hbad;
};

/* What one handler invocation tells its hook. */
struct hctx {
	struct writer *w;
	unsigned int depth;
	int chain;
	uint64_t r;
};

/* The current run, for the handlers; set before any thread starts. */
static const struct grb_config *g_cfg;
static struct grb_channel *g_chan;
static struct tc_checker g_tc;
static uint32_t g_maxseq;
static struct writer g_w[NWRITERS];
static atomic_int g_stop, g_stop_signals, g_writers_done;

static _Thread_local struct writer *tls_writer;

/*
 * Whether a signal raised inside a handler is delivered at once, nested.
 * ThreadSanitizer blocks every signal while a handler runs and delivers
 * the raised one after it returns; chains then call the handler directly,
 * which is what a nested delivery would do on the same thread.
 */
static int nest_by_signal;
static atomic_int probe_depth, probe_raised, probe_nested;

static const struct stress_args *args;
static int cur_variant;
static size_t cur_sb, cur_nsb;

static void run_failed(const char *what)
{
	fprintf(stderr, "stress_signals: FAILED: %s\n"
		"  variant %s, sub-buffers %zu x %zu, seed %" PRIu64
		"\n  repeat: stress_signals %g %" PRIu64 "\n", what,
		tc_variant_name(cur_variant), cur_sb, cur_nsb, args->seed,
		args->seconds, args->seed);
	exit(1);
}

static void spin(uint64_t n)
{
	uint64_t i;

	/* The fence keeps the empty loop from being optimised away. */
	for (i = 0; i < n; i++)
		atomic_signal_fence(memory_order_seq_cst);
}

/*
 * Take one raise from the chain's budget.  The budget, not the depth,
 * bounds a chain: where a raised signal is delivered only after the
 * handler returns (ThreadSanitizer may defer it), every link runs at the
 * same depth and a depth test alone would never stop.
 */
static int chain_take(struct writer *w)
{
	unsigned int n = atomic_load_explicit(&w->chain_left,
					      memory_order_relaxed);

	while (n > 0 && !atomic_compare_exchange_weak_explicit(&w->chain_left,
			&n, n - 1, memory_order_relaxed, memory_order_relaxed))
		;
	return n > 0;
}

static void chain_start(struct writer *w)
{
	atomic_fetch_add_explicit(&w->chains, 1, memory_order_relaxed);
	atomic_store_explicit(&w->chain_left, HDEPTH, memory_order_relaxed);
}

static void on_signal(int sig);

/* From inside a handler: run the next handler of the chain, nested. */
static void chain_next(void)
{
	if (nest_by_signal)
		raise(CHAIN_SIG);
	else
		on_signal(CHAIN_SIG);
}

/* Inside a handler's reservation: go one level deeper, or wait for one. */
static void handler_hook(void *arg, const struct grb_ctx *ctx)
{
	struct hctx *h = (struct hctx *)arg;

	(void)ctx;
	if (h->chain && h->depth + 1 < HDEPTH && chain_take(h->w))
		chain_next();
	else
		spin((h->r >> 20) & 1023);
}

static void handler_write(struct writer *w, unsigned int d, int chain,
			  int async)
{
	struct hctx h = { w, d, chain, stress_rand(&w->hrng[d]) };
	uint32_t id = NWRITERS + w->id * HDEPTH + d, seq = w->hseq[d];
	int ret, inside = atomic_load_explicit(&w->in_window,
					       memory_order_relaxed) != 0;

	if (seq >= g_maxseq)
		return;
	ret = tc_write_hook(g_cfg, g_chan, id, seq, (uint32_t)(h.r % 64),
			    handler_hook, &h);
	if (ret == 0) {
		tc_mark_reserved(&g_tc, id, seq);
		w->hseq[d] = seq + 1;
		atomic_fetch_add_explicit(&w->hwritten, 1,
					  memory_order_relaxed);
		if (inside)
			atomic_fetch_add_explicit(&w->hinside, 1,
						  memory_order_relaxed);
		if (inside && async)
			atomic_fetch_add_explicit(&w->hasync, 1,
						  memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(&w->hrefused, 1, memory_order_relaxed);
	if (ret == -EBUSY)
		atomic_fetch_add_explicit(&w->hbusy, 1, memory_order_relaxed);
	else if (ret != -ENOBUFS && ret != -EIO)
		atomic_store_explicit(&w->hbad, ret, memory_order_relaxed);
	/* Refused: the hook did not run; keep the chain going past the
	 * bound, so every level beyond it is refused too. */
	if (chain && d + 1 < HDEPTH && chain_take(w))
		chain_next();
}

static void on_signal(int sig)
{
	int saved_errno = errno;
	struct writer *w = tls_writer;
	unsigned int d;
	int chain;

	if (!w || !atomic_load_explicit(&w->ready, memory_order_relaxed)) {
		errno = saved_errno;
		return;
	}
	/* An atomic add: a handler interrupting this one sees depth + 1. */
	d = atomic_fetch_add_explicit(&w->depth, 1, memory_order_relaxed);
	if (sig != CHAIN_SIG)
		atomic_fetch_add_explicit(&w->handled, 1, memory_order_relaxed);
	if (d < HDEPTH) {
		chain = sig == CHAIN_SIG ||
			(stress_rand(&w->hrng[d]) & 7) == 0;
		if (chain && sig != CHAIN_SIG)
			chain_start(w);
		handler_write(w, d, chain, sig != CHAIN_SIG);
	}
	atomic_fetch_sub_explicit(&w->depth, 1, memory_order_relaxed);
	errno = saved_errno;
}

/* Inside the thread's own reservation: wait for signals, or start a
 * chain right here so nesting is reached with the thread's slot open. */
static void writer_hook(void *arg, const struct grb_ctx *ctx)
{
	struct writer *w = (struct writer *)arg;
	uint64_t r = stress_rand(&w->rng);

	(void)ctx;
	atomic_store_explicit(&w->in_window, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if ((r & 15) == 0) {
		chain_start(w);
		if (chain_take(w))
			raise(CHAIN_SIG);
	}
	spin((r >> 8) & 4095);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&w->in_window, 0, memory_order_relaxed);
}

static void *writer_main(void *p)
{
	struct writer *w = (struct writer *)p;
	uint32_t extra;
	uint64_t r;
	int ret;

	tls_writer = w;
	atomic_store(&w->ready, 1);
	while (!atomic_load_explicit(&g_stop, memory_order_relaxed) &&
	       w->seq < g_maxseq) {
		r = stress_rand(&w->rng);
		extra = (r & 7) ? (uint32_t)((r >> 8) % 40) :
			(uint32_t)((r >> 8) % 257);
		if ((r >> 20) & 1)
			ret = tc_write_hook(g_cfg, g_chan, w->id, w->seq,
					    extra, writer_hook, w);
		else
			ret = tc_write(g_cfg, g_chan, w->id, w->seq, extra);
		if (ret == 0) {
			tc_mark_reserved(&g_tc, w->id, w->seq);
			w->seq++;
			w->written++;
			continue;
		}
		w->refused++;
		if (ret == -EBUSY)
			w->busy++;
		else if (ret != -ENOBUFS && ret != -EIO && !w->bad)
			w->bad = ret;
	}
	/* Handlers still pending write nothing from here on. */
	atomic_store(&w->ready, 0);
	return NULL;
}

static void *signaller_main(void *p)
{
	uint64_t rng = *(uint64_t *)p, until;
	int t;

	while (!atomic_load(&g_stop_signals)) {
		for (t = 0; t < NWRITERS; t++)
			if (stress_rand(&rng) & 1)
				pthread_kill(g_w[t].tid, SIGUSR1);
		/* Busy-wait 1 to 16 us: a sleeping signaller, woken among
		 * spinning writers, would send a few thousand a second. */
		until = stress_now_ns() + 1000 + stress_rand(&rng) % 15000;
		while (stress_now_ns() < until)
			;
	}
	return NULL;
}

static void *reader_main(void *p)
{
	uint64_t n;

	(void)p;
	while (!atomic_load(&g_writers_done)) {
		n = tc_drain_all(&g_tc, g_chan);
		if (n == 0)
			sched_yield();
	}
	return NULL;
}

struct totals {
	uint64_t refused, busy, main_busy, hwritten, hinside, hasync;
	uint64_t handled, chains, exhausted;
};

static void collect(struct totals *s)
{
	char why[160];
	int t, bad;

	memset(s, 0, sizeof(*s));
	for (t = 0; t < NWRITERS; t++) {
		struct writer *w = &g_w[t];

		bad = w->bad ? w->bad : atomic_load(&w->hbad);
		if (bad) {
			snprintf(why, sizeof(why), "writer %d: tc_write returned %d (%s)",
				 t, bad, grb_strerror(bad));
			run_failed(why);
		}
		s->refused += w->refused + atomic_load(&w->hrefused);
		s->busy += w->busy + atomic_load(&w->hbusy);
		s->main_busy += w->busy;
		s->hwritten += atomic_load(&w->hwritten);
		s->hinside += atomic_load(&w->hinside);
		s->hasync += atomic_load(&w->hasync);
		s->handled += atomic_load(&w->handled);
		s->chains += atomic_load(&w->chains);
		s->exhausted += w->seq >= g_maxseq;
	}
}

static void run_variant(int v, size_t subbuf_size, size_t num_subbuf,
			uint64_t slice_ns)
{
	struct grb_channel_attr attr = {
		.name = tc_variant_name(v),
		.subbuf_size = subbuf_size,
		.num_subbuf = num_subbuf,
	};
	uint64_t slice_ms = slice_ns / 1000000u, srng;
	pthread_t reader, signaller;
	struct grb_buf_stats st;
	struct totals s;
	unsigned int i;
	int t;

	cur_variant = v;
	cur_sb = subbuf_size;
	cur_nsb = num_subbuf;
	printf("run: %-36s sb %5zu x %zu\n", tc_variant_name(v), subbuf_size,
	       num_subbuf);
	fflush(stdout);
	g_cfg = tc_config(v);
	/* Enough sequence numbers for a fast writer (a few hundred records
	 * a millisecond); one that runs out stops early.  The checker's
	 * tables are NIDS x maxseq bytes, and scanning them is what the end
	 * of a run costs under ThreadSanitizer. */
	g_maxseq = (uint32_t)(slice_ms * 1000u < (1u << 14) ? 1u << 14 :
			      slice_ms * 1000u > (1u << 22) ? 1u << 22 :
			      slice_ms * 1000u);
	if (grb_channel_create(g_cfg, &attr, &g_chan) != 0)
		run_failed("grb_channel_create");
	if (tc_checker_init(&g_tc, g_chan, NIDS, g_maxseq) != 0)
		run_failed("tc_checker_init: out of memory");
	for (i = 0; i < grb_channel_nr_bufs(g_chan); i++)
		if (grb_reader_open(grb_channel_buf(g_chan, i)) != 0)
			run_failed("grb_reader_open");
	atomic_store(&g_stop, 0);
	atomic_store(&g_stop_signals, 0);
	atomic_store(&g_writers_done, 0);
	memset(g_w, 0, sizeof(g_w));
	CHECK_EQ(pthread_create(&reader, NULL, reader_main, NULL), 0);
	for (t = 0; t < NWRITERS; t++) {
		struct writer *w = &g_w[t];

		w->id = (uint32_t)t;
		w->rng = stress_seed(args->seed, (uint64_t)v * 2 +
				     (subbuf_size > 4096), (uint64_t)t);
		for (i = 0; i < HDEPTH; i++)
			w->hrng[i] = stress_seed(w->rng, 100, i);
		CHECK_EQ(pthread_create(&w->tid, NULL, writer_main, w), 0);
	}
	srng = stress_seed(args->seed, (uint64_t)v * 2 + (subbuf_size > 4096),
			   1000);
	CHECK_EQ(pthread_create(&signaller, NULL, signaller_main, &srng), 0);
	stress_sleep_ns(slice_ns);
	/* No signal may target a writer that has exited: stop the
	 * signaller first, then the writers. */
	atomic_store(&g_stop_signals, 1);
	CHECK_EQ(pthread_join(signaller, NULL), 0);
	atomic_store(&g_stop, 1);
	for (t = 0; t < NWRITERS; t++)
		CHECK_EQ(pthread_join(g_w[t].tid, NULL), 0);
	atomic_store(&g_writers_done, 1);
	CHECK_EQ(pthread_join(reader, NULL), 0);
	if (grb_channel_finalize(g_chan) != 0)
		run_failed("grb_channel_finalize");
	tc_drain_all(&g_tc, g_chan);
	collect(&s);
	grb_channel_get_stats(g_chan, &st);
	printf("     written %8" PRIu64 " read %8" PRIu64 " overwritten %8"
	       PRIu64 " lost full %" PRIu64 " wrap %" PRIu64 " nesting %"
	       PRIu64 "\n     SIGUSR1 handled %" PRIu64 " chains %" PRIu64
	       " handler records %" PRIu64 " (%" PRIu64
	       " inside the thread's reservation, %" PRIu64 " of them async)"
	       "; %" PRIu64 " writers ran out of sequence numbers\n",
	       st.written, st.read, st.overwritten, st.lost_full, st.lost_wrap,
	       st.lost_nesting, s.handled, s.chains, s.hwritten, s.hinside,
	       s.hasync, s.exhausted);
	fflush(stdout);
	if (tc_final_check(&g_tc, g_chan, s.refused) != 0)
		run_failed("tc_final_check (messages above)");
	if (st.lost_nesting != s.busy)
		run_failed("lost_nesting differs from the -EBUSY refusals seen");
	if (s.busy == 0)
		run_failed("no reservation was refused for nesting");
	if (s.main_busy != 0)
		run_failed("a writer outside any handler was refused for nesting");
	if (s.hinside == 0)
		run_failed("no handler wrote inside its thread's reservation");
	if (st.lost_big != 0)
		run_failed("records refused as too big");
	tc_checker_free(&g_tc);
	grb_channel_destroy(g_chan);
	g_chan = NULL;
}

static void probe_handler(int sig)
{
	if (atomic_fetch_add(&probe_depth, 1) > 0)
		atomic_store(&probe_nested, 1);
	else if (!atomic_exchange(&probe_raised, 1))
		raise(sig);
	atomic_fetch_sub(&probe_depth, 1);
}

/* Install on_signal for SIGUSR1 and CHAIN_SIG; find out whether handlers
 * nest. */
static void install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	/* SA_NODEFER: a handler can be interrupted by its own signal. */
	sa.sa_flags = SA_RESTART | SA_NODEFER;
	sa.sa_handler = probe_handler;
	CHECK_EQ(sigaction(CHAIN_SIG, &sa, NULL), 0);
	raise(CHAIN_SIG);
	nest_by_signal = atomic_load(&probe_nested);
	printf("signal handlers nest: %s\n", nest_by_signal ? "yes" :
	       "no (a signal raised in a handler waits for it to return); "
	       "chains call the handler directly");
	sa.sa_handler = on_signal;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(sigaction(CHAIN_SIG, &sa, NULL), 0);
}

int main(int argc, char **argv)
{
	static const size_t geom[2][2] = { { 4096, 4 }, { 65536, 8 } };
	struct stress_args a;
	uint64_t slice_ns;
	int v, g;

	stress_parse(argc, argv, &a);
	args = &a;
	install_handlers();
	slice_ns = (uint64_t)(a.seconds * 1e9 / (TV_COUNT * 2));
	for (v = 0; v < TV_COUNT; v++)
		for (g = 0; g < 2; g++)
			run_variant(v, geom[g][0], geom[g][1], slice_ns);
	printf("stress_signals: %d runs passed\n", TV_COUNT * 2);
	return 0;
}
