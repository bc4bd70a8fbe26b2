/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/stress_iter.c - every record read exactly once, or
 * counted, through the read side while writers run.
 *
 * For every configuration variant and each way of reading:
 *  - merge:    grb_chan_iter_poll() with a callback, the channel merged in
 *              timestamp order (live records included in discard mode),
 *              with the ticker thread closing idle and stale sub-buffers;
 *  - buffers:  one buffer iterator per buffer, round robin, with
 *              grb_buf_iter_next() (live in discard mode) and a wait on a
 *              buffer when none had anything;
 * writer threads write tagged records (a few abandoned: discarded or
 * committed as skip records) while one reader thread reads.  Each record
 * is checked (intact payload, rebuilt timestamp equal to the writer's
 * clock value, once, in order per buffer and writer); the merge must
 * return timestamps that never go down (the test clock is one counter for
 * all CPUs, so nothing may be late).  At the end: written == seen + skips
 * + overwritten, the losses the iterators reported equal the engine's
 * refused + overwritten counts, and nothing is lost in discard mode.
 *
 * Usage: stress_iter [SECONDS [SEED]]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "grb/iter.h"
#include "grb/timer.h"
#include "grb/wait.h"
#include "stress_util.h"
#include "tclient.h"

#define NWRITERS 3
#define MAXSEQ (1u << 20)

enum how { HOW_MERGE, HOW_BUFFERS, HOW_COUNT };

struct run {
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct tc_checker tc;
	uint64_t seed, deadline;
	atomic_int writers_left;
	atomic_uint_fast64_t refused;
	uint64_t lost_reported;         /* reader only */
	uint64_t last_ts;               /* merge: last timestamp seen */
	uint64_t late, records;
};

static void *writer(void *p)
{
	struct run *run = (struct run *)p;
	static atomic_uint next_id;
	uint32_t id = atomic_fetch_add(&next_id, 1) % NWRITERS, seq;
	uint64_t rng = stress_seed(run->seed, id, 3), r;
	struct tc_pending pending;

	for (seq = 0; seq < MAXSEQ && stress_now_ns() < run->deadline; seq++) {
		r = stress_rand(&rng);
		if ((r & 63) == 0) {
			if (tc_reserve(run->cfg, run->chan, id, seq,
				       (uint32_t)((r >> 8) % 64), &pending) == 0)
				tc_mark_abandoned(&run->tc, tc_abandon(&pending));
			else
				atomic_fetch_add(&run->refused, 1);
		} else if (tc_write(run->cfg, run->chan, id, seq,
				    (uint32_t)((r >> 8) % 64)) == 0) {
			tc_mark_reserved(&run->tc, id, seq);
		} else {
			atomic_fetch_add(&run->refused, 1);
		}
		/* Now and then slow down, so the reader catches up and reads
		 * live and waits. */
		if ((r >> 20 & 255) == 0)
			stress_sleep_ns((r >> 28) % 500000);
	}
	atomic_fetch_sub(&run->writers_left, 1);
	return NULL;
}

static int on_record(void *arg, const struct grb_iter_record *r)
{
	struct run *run = (struct run *)arg;

	tc_check_iter_record(&run->tc, r);
	run->lost_reported += r->lost;
	if (r->flags & GRB_ITER_LATE)
		run->late++;
	if (run->records++ && r->timestamp < run->last_ts &&
	    !(r->flags & GRB_ITER_LATE))
		run->tc.errors++;       /* out of order and not flagged */
	if (r->timestamp > run->last_ts)
		run->last_ts = r->timestamp;
	return 0;
}

static void read_merged(struct run *run)
{
	struct grb_chan_iter *ci;
	struct grb_ticker *t;
	int ret;

	CHECK_EQ(grb_chan_iter_create(run->chan, GRB_ITER_CONSUME, &ci), 0);
	CHECK_EQ(grb_ticker_start(run->chan, 2000000,
				  GRB_TICK_FLUSH | GRB_TICK_IDLE, &t), 0);
	while (atomic_load(&run->writers_left) > 0) {
		ret = grb_chan_iter_poll(ci, on_record, run, 20000000, NULL);
		CHECK(ret == 0 || ret == -ETIMEDOUT);
	}
	CHECK_EQ(grb_ticker_stop(t), 0);
	CHECK_EQ(grb_channel_finalize(run->chan), 0);
	while ((ret = grb_chan_iter_consume(ci, on_record, run, NULL)) == 0)
		;
	CHECK_EQ(ret, -ENODATA);
	run->lost_reported += grb_chan_iter_lost(ci);
	grb_chan_iter_destroy(ci);
}

static void read_buffers(struct run *run)
{
	unsigned int i, n = grb_channel_nr_bufs(run->chan), done;
	struct grb_buf_iter **its = calloc(n, sizeof(*its));
	struct grb_iter_record r;
	int ret, any, finished = 0;

	CHECK(its != NULL);
	for (i = 0; i < n; i++)
		CHECK_EQ(grb_buf_iter_create(grb_channel_buf(run->chan, i),
					     GRB_ITER_CONSUME, &its[i]), 0);
	for (;;) {
		any = 0;
		done = 0;
		for (i = 0; i < n; i++) {
			while ((ret = grb_buf_iter_next(its[i], &r)) == 0) {
				tc_check_iter_record(&run->tc, &r);
				run->lost_reported += r.lost;
				any = 1;
			}
			CHECK(ret == -EAGAIN || ret == -ENODATA);
			done += ret == -ENODATA;
		}
		if (done == n)
			break;
		if (!finished && atomic_load(&run->writers_left) == 0) {
			CHECK_EQ(grb_channel_finalize(run->chan), 0);
			finished = 1;
		} else if (!any) {
			grb_channel_flush(run->chan, GRB_FLUSH_ACTIVE);
			grb_buf_wait(grb_channel_buf(run->chan, 0), NULL,
				     1000000);
		}
	}
	for (i = 0; i < n; i++) {
		run->lost_reported += grb_buf_iter_lost(its[i]);
		grb_buf_iter_destroy(its[i]);
	}
	free(its);
}

static int run_one(int v, enum how how, const struct stress_args *a)
{
	struct grb_channel_attr attr = { tc_variant_name(v), 4096, 8, NULL };
	struct run *run = calloc(1, sizeof(*run));
	pthread_t tw[NWRITERS];
	uint64_t errors;
	unsigned int i;

	CHECK(run != NULL);
	run->cfg = tc_config(v);
	run->seed = a->seed;
	CHECK_EQ(grb_channel_create(run->cfg, &attr, &run->chan), 0);
	CHECK_EQ(tc_checker_init(&run->tc, run->chan, NWRITERS, MAXSEQ), 0);
	run->deadline = stress_now_ns() +
		(uint64_t)(a->seconds * 1e9 / (TV_COUNT * HOW_COUNT));
	atomic_store(&run->writers_left, NWRITERS);
	for (i = 0; i < NWRITERS; i++)
		CHECK_EQ(pthread_create(&tw[i], NULL, writer, run), 0);
	if (how == HOW_MERGE)
		read_merged(run);
	else
		read_buffers(run);
	for (i = 0; i < NWRITERS; i++)
		CHECK_EQ(pthread_join(tw[i], NULL), 0);
	errors = tc_final_check_iter(&run->tc, run->chan,
				     atomic_load(&run->refused),
				     run->lost_reported);
	if (run->late) {
		fprintf(stderr, "stress_iter: %llu records late with one clock\n",
			(unsigned long long)run->late);
		errors++;
	}
	printf("%-36s %-7s read %7llu lost %7llu\n", tc_variant_name(v),
	       how == HOW_MERGE ? "merge" : "buffers",
	       (unsigned long long)run->tc.records_read,
	       (unsigned long long)run->lost_reported);
	if (errors || run->tc.records_read == 0)
		fprintf(stderr, "stress_iter: FAILED: variant %s, %s, seed %llu\n",
			tc_variant_name(v), how == HOW_MERGE ? "merge" : "buffers",
			(unsigned long long)a->seed);
	errors += run->tc.records_read == 0;
	tc_checker_free(&run->tc);
	grb_channel_destroy(run->chan);
	free(run);
	return errors != 0;
}

int main(int argc, char **argv)
{
	struct stress_args a;
	int v, how, failed = 0;

	stress_parse(argc, argv, &a);
	for (v = 0; v < TV_COUNT; v++)
		for (how = 0; how < HOW_COUNT; how++)
			failed |= run_one(v, (enum how)how, &a);
	printf("stress_iter: %s\n", failed ? "FAILED" : "passed");
	return failed;
}
