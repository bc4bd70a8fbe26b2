/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/stress_discard.c - writers that abandon reservations and
 * hand them to each other.
 *
 * For every configuration variant, with small buffers (4 KiB x 4, so the
 * overwrite, full and wrap paths are hot), NWRITERS writer threads in
 * pairs write tagged records while a reader thread drains and flushes.
 * Of every 16 records, about one is abandoned after its header and part
 * of its payload are written (grb_try_discard_reserve(), or a skip record
 * when another reservation already followed), and about one is handed to
 * the partner thread through a one-slot mailbox, which finishes it:
 * commits it, or now and then abandons it.  A handed-off reservation
 * keeps a nesting level of the thread that reserved it until the partner
 * finishes it, so with one record in flight per thread no writer may ever
 * see -EBUSY.
 *
 * The test client's clock is a shared counter that moves by 997 per read,
 * so 16-bit compressed timestamps wrap every ~66 records; the checker
 * rebuilds every record's timestamp and compares it with what the
 * writer's clock returned, requires a full timestamp on the first record
 * of every sub-buffer and timestamps that never decrease in position
 * order.  Moving the write position back on a discard broke both (a
 * writer that loaded the old end before the discard reserved after a
 * later record with an older timestamp), and its relaxed compare-and-swap
 * let the discarder's bytes race with the next writer's (seen by TSan).
 * A race-injection hook makes a writer yield now and then between its
 * load of the write position and its compare-and-swap, the window those
 * bugs need.  At the end the checker verifies every record and counter: discards
 * match grb_buf_stats.discarded, skip records are read, the rest balances.
 *
 * Usage: stress_discard [SECONDS [SEED]]   (default 2 s, seed from clock)
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
#include "grb_test_hooks.h"
#include "stress_util.h"
#include "tclient.h"

#define NWRITERS 4              /* two pairs */
#define MAXSEQ (1u << 20)

struct run;

struct writer {
	struct run *run;
	pthread_t tid;
	uint32_t id;
	uint64_t rng;
	uint64_t refused, busy, sent, received;
	/* The partner's records waiting for this thread: NULL or one. */
	_Atomic(struct tc_pending *) mailbox;
	atomic_int sending_done;
	struct tc_pending slot;         /* what this thread hands off */
	int bad;                        /* first unexpected return, or 0 */
};

struct run {
	int variant;
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct tc_checker tc;
	uint64_t deadline;
	atomic_int writers_left;
	pthread_barrier_t done;
	struct writer w[NWRITERS];
};

static _Thread_local uint64_t hook_rng;

/*
 * Race injection: now and then a writer that has loaded the write
 * position yields before its compare-and-swap, long enough for another
 * writer to reserve, discard and reserve again.
 */
static void widen(enum grb_hook_point point, void *arg)
{
	(void)arg;
	if (point == GRB_HOOK_RESERVE_LOADED && hook_rng &&
	    (stress_rand(&hook_rng) & 31) == 0)
		sched_yield();
}

/* Finish or abandon what the partner left in our mailbox, if anything. */
static void serve_mailbox(struct writer *w)
{
	struct tc_pending *p = atomic_load_explicit(&w->mailbox,
						    memory_order_acquire);

	if (!p)
		return;
	if ((stress_rand(&w->rng) & 7) == 0) {
		tc_mark_abandoned(&w->run->tc, tc_abandon(p));
	} else {
		tc_finish(p);
		tc_mark_reserved(&w->run->tc, p->r.writer, p->r.seq);
	}
	w->received++;
	/* Release: our use of the partner's slot is over. */
	atomic_store_explicit(&w->mailbox, NULL, memory_order_release);
}

static void write_one(struct writer *w, uint32_t seq)
{
	struct run *run = w->run;
	struct writer *partner = &run->w[w->id ^ 1];
	uint64_t r = stress_rand(&w->rng);
	/* Few sizes: a record the same size as a discarded one lands
	 * exactly where it was, which a discard that moved the position
	 * back turned into a reordering. */
	uint32_t extra = (uint32_t)((r >> 8) & 3) * 8;
	struct tc_pending local;
	int ret;

	if ((r & 15) == 0 &&
	    atomic_load_explicit(&partner->mailbox, memory_order_acquire)
	    == NULL) {
		/* Hand the record to the partner, which finishes it. */
		ret = tc_reserve(run->cfg, run->chan, w->id, seq, extra,
				 &w->slot);
		if (ret == 0) {
			w->sent++;
			/* Release publishes the slot's bytes written so far. */
			atomic_store_explicit(&partner->mailbox, &w->slot,
					      memory_order_release);
			/* Wait until the partner is done with our slot. */
			while (atomic_load_explicit(&partner->mailbox,
						    memory_order_acquire)) {
				serve_mailbox(w);
				sched_yield();
			}
			return;
		}
	} else {
		ret = tc_reserve(run->cfg, run->chan, w->id, seq, extra,
				 &local);
		if (ret == 0) {
			if ((r & 15) == 1) {
				tc_mark_abandoned(&run->tc, tc_abandon(&local));
			} else {
				tc_finish(&local);
				tc_mark_reserved(&run->tc, w->id, seq);
			}
			return;
		}
	}
	if (ret == -EBUSY)
		w->busy++;
	else if (ret != -ENOBUFS && ret != -EIO && !w->bad)
		w->bad = ret;
	w->refused++;
}

static void *writer_main(void *p)
{
	struct writer *w = (struct writer *)p;
	struct run *run = w->run;
	struct writer *partner = &run->w[w->id ^ 1];
	uint32_t seq;

	hook_rng = stress_seed(w->rng, 5, 7);
	for (seq = 0; seq < MAXSEQ && stress_now_ns() < run->deadline; seq++) {
		serve_mailbox(w);
		write_one(w, seq);
	}
	/* Keep serving the partner until it sends no more, and stay alive
	 * until every hand-off is finished: a commit of a handed-off
	 * reservation updates the reserving thread's nesting count. */
	atomic_store(&w->sending_done, 1);
	while (!atomic_load(&partner->sending_done) ||
	       atomic_load_explicit(&w->mailbox, memory_order_acquire)) {
		serve_mailbox(w);
		sched_yield();
	}
	atomic_fetch_sub(&run->writers_left, 1);
	pthread_barrier_wait(&run->done);
	return NULL;
}

static int run_variant(int v, const struct stress_args *a)
{
	struct grb_channel_attr attr = { tc_variant_name(v), 4096, 4, NULL };
	struct run *run = calloc(1, sizeof(*run));
	uint64_t refused = 0, errors, sent = 0, busy = 0;
	unsigned int i, n = 0;
	int bad = 0;

	CHECK(run != NULL);
	run->variant = v;
	run->cfg = tc_config(v);
	CHECK_EQ(grb_channel_create(run->cfg, &attr, &run->chan), 0);
	CHECK_EQ(tc_checker_init(&run->tc, run->chan, NWRITERS, MAXSEQ), 0);
	for (i = 0; i < grb_channel_nr_bufs(run->chan); i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(run->chan, i)), 0);
	run->deadline = stress_now_ns() +
		(uint64_t)(a->seconds * 1e9 / TV_COUNT);
	atomic_store(&run->writers_left, NWRITERS);
	CHECK_EQ(pthread_barrier_init(&run->done, NULL, NWRITERS), 0);
	grb_test_set_hook(widen, NULL);
	for (i = 0; i < NWRITERS; i++) {
		run->w[i].run = run;
		run->w[i].id = i;
		run->w[i].rng = stress_seed(a->seed, (uint64_t)v, i);
		CHECK_EQ(pthread_create(&run->w[i].tid, NULL, writer_main,
					&run->w[i]), 0);
	}
	/* The reader: drain, and flush now and then so that half-filled
	 * sub-buffers are delivered while writers run. */
	while (atomic_load(&run->writers_left) > 0) {
		tc_drain_all(&run->tc, run->chan);
		if ((++n & 15) == 0)
			grb_channel_flush(run->chan, GRB_FLUSH_ACTIVE);
	}
	for (i = 0; i < NWRITERS; i++) {
		CHECK_EQ(pthread_join(run->w[i].tid, NULL), 0);
		refused += run->w[i].refused;
		sent += run->w[i].sent;
		busy += run->w[i].busy;
		if (run->w[i].bad && !bad)
			bad = run->w[i].bad;
	}
	grb_test_set_hook(NULL, NULL);
	CHECK_EQ(grb_channel_finalize(run->chan), 0);
	tc_drain_all(&run->tc, run->chan);
	errors = tc_final_check(&run->tc, run->chan, refused);
	printf("%-36s read %7llu discarded %5llu skips %5llu handed off %5llu refused %7llu\n",
	       tc_variant_name(v), (unsigned long long)run->tc.records_read,
	       (unsigned long long)run->tc.discards,
	       (unsigned long long)run->tc.skips_written,
	       (unsigned long long)sent, (unsigned long long)refused);
	if (busy || bad) {
		fprintf(stderr, "stress_discard: %llu -EBUSY refusals, unexpected return %d\n",
			(unsigned long long)busy, bad);
		errors++;
	}
	if (run->tc.discards == 0 || sent == 0 || run->tc.records_read == 0) {
		fprintf(stderr, "stress_discard: nothing discarded, handed off or read\n");
		errors++;
	}
	if (errors)
		fprintf(stderr, "stress_discard: FAILED: variant %s, seed %llu\n"
			"  repeat: stress_discard %g %llu\n", tc_variant_name(v),
			(unsigned long long)a->seed, a->seconds,
			(unsigned long long)a->seed);
	pthread_barrier_destroy(&run->done);
	tc_checker_free(&run->tc);
	grb_channel_destroy(run->chan);
	free(run);
	return errors != 0;
}

int main(int argc, char **argv)
{
	struct stress_args a;
	int v, failed = 0;

	stress_parse(argc, argv, &a);
	for (v = 0; v < TV_COUNT; v++)
		failed |= run_variant(v, &a);
	printf("stress_discard: %s\n", failed ? "FAILED" : "passed");
	return failed;
}
