/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/stress_migrate.c - writers that "migrate" between reserve
 * and commit.
 *
 * For every configuration variant, with small buffers (4 KiB x 4, so
 * overwrite, full and wrap paths are hot) and roomy ones (64 KiB x 8),
 * three writer threads per online CPU (at least 6, at most 32) write
 * tagged records for a sixteenth of the run time each, while a reader
 * thread drains every buffer and flushes every millisecond.  A quarter of
 * the records run a hook between grb_reserve() and grb_commit() that moves
 * the thread's CPU id to another buffer with grb_test_set_cpu() (sometimes
 * back to the real CPU, sometimes to an id past the possible CPUs, which
 * the library must map to buffer 0), and often yields or spins there, so
 * other writers fill the same sub-buffer and commit around the parked one,
 * and the parked one commits into a buffer that is no longer its CPU's.
 * At the end the channel is finalized and drained and tc_final_check()
 * verifies every record and counter and runs grb_buf_validate() on every
 * buffer; the writers' own refusal counts must match lost_full and
 * lost_wrap.
 *
 * Usage: stress_migrate [SECONDS [SEED]]   (default 2 s, seed from clock)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "stress_util.h"
#include "tclient.h"

#define MAX_WRITERS 32
#define FLUSH_EVERY_NS 1000000u

struct run;

struct writer {
	struct run *run;
	pthread_t tid;
	uint32_t id;
	uint32_t seq;           /* next sequence number; refusals reuse it */
	uint64_t rng;
	uint64_t written, lost_full, lost_wrap, hooks, yields;
	int bad;                /* first unexpected return code, or 0 */
};

struct run {
	int variant;
	const struct grb_config *cfg;
	struct grb_channel *chan;
	size_t subbuf_size, num_subbuf;
	struct tc_checker tc;
	uint32_t maxseq;
	int cpu_ids;            /* CPU ids the hook moves threads between */
	atomic_int stop;
	atomic_int writers_done;
	uint64_t subbufs, flushes;      /* reader thread only */
	int nwriters;
	struct writer w[MAX_WRITERS];
};

static const struct stress_args *args;

static void run_failed(const struct run *run, const char *what)
{
	fprintf(stderr, "stress_migrate: FAILED: %s\n"
		"  variant %s, sub-buffers %zu x %zu, %d writers, seed %"
		PRIu64 "\n  repeat: stress_migrate %g %" PRIu64 "\n",
		what, tc_variant_name(run->variant), run->subbuf_size,
		run->num_subbuf, run->nwriters, args->seed, args->seconds,
		args->seed);
	exit(1);
}

static void spin(uint64_t n)
{
	uint64_t i;

	/* The fence keeps the empty loop from being optimised away. */
	for (i = 0; i < n; i++)
		atomic_signal_fence(memory_order_seq_cst);
}

/* Between reserve and commit: move to another CPU id, and maybe park. */
static void migrate_hook(void *arg, const struct grb_ctx *ctx)
{
	struct writer *w = (struct writer *)arg;
	uint64_t r = stress_rand(&w->rng);
	int n = w->run->cpu_ids, k = (int)(r & 63), step;

	w->hooks++;
	if (k == 0) {
		/* Past the possible CPUs: the library must use buffer 0. */
		grb_test_set_cpu(n + (int)((r >> 8) & 7));
	} else if (k < 8) {
		grb_test_set_cpu(-1);           /* back to the real CPU */
	} else if (n > 1) {
		step = 1 + (int)((r >> 8) % (uint64_t)(n - 1));
		grb_test_set_cpu((ctx->cpu + step) % n);
	} else {
		grb_test_set_cpu(0);
	}
	if (((r >> 16) & 3) == 0) {
		sched_yield();
		w->yields++;
	} else if (((r >> 16) & 15) == 1) {
		spin((r >> 20) & 4095);
	}
}

static void *writer_main(void *p)
{
	struct writer *w = (struct writer *)p;
	struct run *run = w->run;
	uint32_t extra;
	uint64_t r;
	int ret;

	while (!atomic_load_explicit(&run->stop, memory_order_relaxed) &&
	       w->seq < run->maxseq) {
		r = stress_rand(&w->rng);
		/* Mostly small records, some up to 256 pattern bytes, so
		 * slots straddle pages and sub-buffer ends. */
		extra = (r & 7) ? (uint32_t)((r >> 8) % 40) :
			(uint32_t)((r >> 8) % 257);
		if (((r >> 24) & 3) == 0)
			ret = tc_write_hook(run->cfg, run->chan, w->id, w->seq,
					    extra, migrate_hook, w);
		else
			ret = tc_write(run->cfg, run->chan, w->id, w->seq,
				       extra);
		if (ret == 0) {
			tc_mark_reserved(&run->tc, w->id, w->seq);
			w->seq++;
			w->written++;
		} else if (ret == -ENOBUFS) {
			w->lost_full++;
		} else if (ret == -EIO) {
			w->lost_wrap++;
		} else if (!w->bad) {
			w->bad = ret;
		}
	}
	return NULL;
}

static void *reader_main(void *p)
{
	struct run *run = (struct run *)p;
	uint64_t n, last_flush = stress_now_ns(), now;
	int kind = 0;

	while (!atomic_load(&run->writers_done)) {
		n = tc_drain_all(&run->tc, run->chan);
		run->subbufs += n;
		now = stress_now_ns();
		if (now - last_flush >= FLUSH_EVERY_NS) {
			/* Close sub-buffers under writers that sit between
			 * reserve and commit; now and then an empty one. */
			grb_channel_flush(run->chan, (++kind & 15) == 0 ?
					  GRB_FLUSH_EMPTY : GRB_FLUSH_ACTIVE);
			run->flushes++;
			last_flush = now;
		}
		if (n == 0)
			sched_yield();
	}
	return NULL;
}

static void run_variant(struct run *run, int v, size_t subbuf_size,
			size_t num_subbuf, uint64_t slice_ns, int nwriters)
{
	struct grb_channel_attr attr = {
		.name = tc_variant_name(v),
		.subbuf_size = subbuf_size,
		.num_subbuf = num_subbuf,
	};
	uint64_t refused = 0, hooks = 0, yields = 0, full = 0, wrap = 0;
	uint64_t exhausted = 0;
	uint64_t slice_ms = slice_ns / 1000000u;
	struct grb_buf_stats st;
	pthread_t reader;
	char why[160];
	unsigned int i;
	int t;

	memset(run, 0, sizeof(*run));
	run->variant = v;
	run->cfg = tc_config(v);
	run->subbuf_size = subbuf_size;
	run->num_subbuf = num_subbuf;
	run->nwriters = nwriters;
	/* Enough sequence numbers for a fast writer; a writer that runs out
	 * stops early, which only shortens the run. */
	run->maxseq = (uint32_t)(slice_ms * 4000u < (1u << 16) ? 1u << 16 :
				 slice_ms * 4000u > (1u << 23) ? 1u << 23 :
				 slice_ms * 4000u);
	printf("run: %-36s sb %5zu x %zu, %d writers\n", tc_variant_name(v),
	       subbuf_size, num_subbuf, nwriters);
	fflush(stdout);
	if (grb_channel_create(run->cfg, &attr, &run->chan) != 0)
		run_failed(run, "grb_channel_create");
	if (tc_checker_init(&run->tc, run->chan, (uint32_t)nwriters,
			    run->maxseq) != 0)
		run_failed(run, "tc_checker_init: out of memory");
	run->cpu_ids = run->cfg->alloc == GRB_ALLOC_PER_CPU ?
		(int)grb_channel_nr_bufs(run->chan) : 2;
	for (i = 0; i < grb_channel_nr_bufs(run->chan); i++)
		if (grb_reader_open(grb_channel_buf(run->chan, i)) != 0)
			run_failed(run, "grb_reader_open");
	CHECK_EQ(pthread_create(&reader, NULL, reader_main, run), 0);
	for (t = 0; t < nwriters; t++) {
		run->w[t].run = run;
		run->w[t].id = (uint32_t)t;
		run->w[t].rng = stress_seed(args->seed, (uint64_t)v * 2 +
					    (subbuf_size > 4096), (uint64_t)t);
		CHECK_EQ(pthread_create(&run->w[t].tid, NULL, writer_main,
					&run->w[t]), 0);
	}
	stress_sleep_ns(slice_ns);
	atomic_store(&run->stop, 1);
	for (t = 0; t < nwriters; t++) {
		CHECK_EQ(pthread_join(run->w[t].tid, NULL), 0);
		refused += run->w[t].lost_full + run->w[t].lost_wrap;
		full += run->w[t].lost_full;
		wrap += run->w[t].lost_wrap;
		hooks += run->w[t].hooks;
		yields += run->w[t].yields;
		exhausted += run->w[t].seq >= run->maxseq;
		if (run->w[t].bad) {
			snprintf(why, sizeof(why), "writer %d: tc_write returned %d (%s)",
				 t, run->w[t].bad, grb_strerror(run->w[t].bad));
			run_failed(run, why);
		}
	}
	atomic_store(&run->writers_done, 1);
	CHECK_EQ(pthread_join(reader, NULL), 0);
	if (grb_channel_finalize(run->chan) != 0)
		run_failed(run, "grb_channel_finalize");
	run->subbufs += tc_drain_all(&run->tc, run->chan);
	grb_channel_get_stats(run->chan, &st);
	printf("     written %8" PRIu64 " read %8" PRIu64 " overwritten %8"
	       PRIu64 " lost full %" PRIu64 " wrap %" PRIu64 "; hooks %"
	       PRIu64 " yields %" PRIu64 " flushes %" PRIu64 "; %" PRIu64
	       " writers ran out of sequence numbers\n",
	       st.written, st.read, st.overwritten, st.lost_full, st.lost_wrap,
	       hooks, yields, run->flushes, exhausted);
	fflush(stdout);
	if (tc_final_check(&run->tc, run->chan, refused) != 0)
		run_failed(run, "tc_final_check (messages above)");
	if (st.lost_full != full || st.lost_wrap != wrap)
		run_failed(run, "lost_full/lost_wrap differ from the writers' refusals");
	if (st.lost_big || st.lost_nesting)
		run_failed(run, "records refused as too big or too deeply nested");
	if (run->tc.records_read == 0 || hooks == 0)
		run_failed(run, "nothing read, or no record went through the hook");
	tc_checker_free(&run->tc);
	grb_channel_destroy(run->chan);
}

int main(int argc, char **argv)
{
	static const size_t geom[2][2] = { { 4096, 4 }, { 65536, 8 } };
	static struct run run;
	struct stress_args a;
	int v, g, nwriters = 3 * stress_ncpus();
	uint64_t slice_ns;

	stress_parse(argc, argv, &a);
	args = &a;
	if (nwriters < 6)
		nwriters = 6;
	if (nwriters > MAX_WRITERS)
		nwriters = MAX_WRITERS;
	slice_ns = (uint64_t)(a.seconds * 1e9 / (TV_COUNT * 2));
	for (v = 0; v < TV_COUNT; v++)
		for (g = 0; g < 2; g++)
			run_variant(&run, v, geom[g][0], geom[g][1], slice_ns,
				    nwriters);
	printf("stress_migrate: %d runs passed\n", TV_COUNT * 2);
	return 0;
}
