/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/stress_wait.c - no wake-up is lost.
 *
 * For every configuration variant and each way of waiting (grb_buf_wait
 * on each buffer in turn is not possible for one thread, so: the channel
 * wait, and the event fd with poll), a reader thread blocks with no
 * timeout whenever it has nothing to read, and reads everything it finds
 * when woken.  Writer threads write bursts of random length together, with
 * random pauses inside reservations and between records (so deliveries
 * happen from random threads at random moments); after each round they
 * stop at a barrier, flush, and one of them waits, up to a deadline, until
 * the reader has read (or writers overwrote) everything committed.  With
 * no writer left to wake it, a reader that lost a wake-up stays asleep
 * with data delivered: the deadline expires and the test fails with the
 * seed.  The tagged-record checker verifies every record at the end.
 *
 * Usage: stress_wait [SECONDS [SEED]]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "grb/wait.h"
#include "grb_test_hooks.h"
#include "stress_util.h"
#include "tclient.h"

#define NWRITERS 2
#define MAXSEQ (1u << 20)
#define CATCH_UP_NS 3000000000u   /* a reader awake reads within this */

enum how { HOW_CHANNEL, HOW_EVENT_FD, HOW_COUNT };

struct run {
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct tc_checker tc;
	enum how how;
	uint64_t deadline;
	uint64_t seed;
	atomic_uint_fast64_t committed;     /* records the writers committed */
	atomic_uint_fast64_t read;          /* records the reader checked */
	atomic_uint_fast64_t refused;       /* reservations refused */
	pthread_barrier_t round;            /* writers: start and end */
	atomic_int go;
	atomic_int failed;
	uint64_t sleeps;                    /* reader: times it blocked */
};

/* Records the reader read, or that writers overwrote before it could. */
static uint64_t accounted(struct run *run)
{
	struct grb_buf_stats st;

	grb_channel_get_stats(run->chan, &st);
	return atomic_load(&run->read) + st.overwritten;
}

static _Thread_local uint64_t hook_rng = 1;

/*
 * Race injection: the reader, having found nothing, sometimes sleeps
 * before it arms, so deliveries land in the window an arming order that
 * checks only before arming would lose.
 */
static void widen(enum grb_hook_point point, void *arg)
{
	(void)arg;
	if (point == GRB_HOOK_WAIT_CHECKED && (stress_rand(&hook_rng) & 3) == 0)
		stress_sleep_ns(20000 + stress_rand(&hook_rng) % 300000);
}

/* Sleep inside a reservation now and then: delivery from anywhere. */
static void pause_hook(void *arg, const struct grb_ctx *ctx)
{
	uint64_t *rng = (uint64_t *)arg;

	(void)ctx;
	if ((stress_rand(rng) & 15) == 0)
		stress_sleep_ns(stress_rand(rng) % 200000);
}

/*
 * After every round, with all writers stopped at a barrier and everything
 * flushed, the reader must catch up on its own: no writer activity is
 * left to wake it again if a wake-up was lost.
 */
static void catch_up(struct run *run)
{
	uint64_t t0 = stress_now_ns();

	grb_channel_flush(run->chan, GRB_FLUSH_ACTIVE);
	while (accounted(run) < atomic_load(&run->committed)) {
		if (stress_now_ns() - t0 > CATCH_UP_NS) {
			fprintf(stderr, "stress_wait: reader asleep with %llu records delivered and unread: lost wake-up\n",
				(unsigned long long)(atomic_load(&run->committed) -
						     accounted(run)));
			atomic_store(&run->failed, 1);
			return;
		}
		stress_sleep_ns(100000);
	}
}

static void *writer(void *p)
{
	struct run *run = (struct run *)p;
	static atomic_uint next_id;
	uint32_t id = atomic_fetch_add(&next_id, 1) % NWRITERS, seq = 0;
	uint64_t rng = stress_seed(run->seed, id, 9);
	unsigned int n, i;
	int go;

	for (;;) {
		/* Writer 0 decides, for everyone, whether to run a round. */
		if (id == 0)
			atomic_store(&run->go, stress_now_ns() < run->deadline &&
				     !atomic_load(&run->failed));
		pthread_barrier_wait(&run->round);
		go = atomic_load(&run->go);
		if (!go)
			break;
		n = 1 + (unsigned int)(stress_rand(&rng) % 200);
		for (i = 0; i < n && seq < MAXSEQ; i++, seq++) {
			if (tc_write_hook(run->cfg, run->chan, id, seq,
					  (uint32_t)(stress_rand(&rng) % 64),
					  pause_hook, &rng) == 0) {
				tc_mark_reserved(&run->tc, id, seq);
				atomic_fetch_add(&run->committed, 1);
			} else {
				atomic_fetch_add(&run->refused, 1);
			}
			if ((stress_rand(&rng) & 63) == 0)
				stress_sleep_ns(stress_rand(&rng) % 300000);
		}
		pthread_barrier_wait(&run->round);
		if (id == 0)
			catch_up(run);
	}
	return NULL;
}

static int wait_data(struct run *run, int efd)
{
	struct pollfd pfd = { efd, POLLIN, 0 };
	int ret;

	if (run->how == HOW_CHANNEL) {
		ret = grb_channel_wait(run->chan, NULL, GRB_WAIT_FOREVER);
		run->sleeps++;
		return ret;
	}
	ret = grb_channel_arm(run->chan, NULL);
	if (ret != -EAGAIN)
		return ret;
	run->sleeps++;
	while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	return 0;
}

static void *reader(void *p)
{
	struct run *run = (struct run *)p;
	int efd = -1, ret;

	if (run->how == HOW_EVENT_FD)
		CHECK_EQ(grb_channel_event_fd(run->chan, &efd), 0);
	for (;;) {
		tc_drain_all(&run->tc, run->chan);
		atomic_store(&run->read, run->tc.records_read -
			     run->tc.skips_read);
		ret = wait_data(run, efd);
		if (ret == -ENODATA)
			break;
		CHECK_EQ(ret, 0);
	}
	tc_drain_all(&run->tc, run->chan);
	return NULL;
}

static int run_one(int v, enum how how, const struct stress_args *a)
{
	struct grb_channel_attr attr = { tc_variant_name(v), 4096, 4, NULL };
	struct run *run = calloc(1, sizeof(*run));
	pthread_t tw[NWRITERS], tr;
	uint64_t errors, sleeps;
	unsigned int i;
	int failed;

	CHECK(run != NULL);
	run->cfg = tc_config(v);
	run->how = how;
	run->seed = a->seed;
	CHECK_EQ(grb_channel_create(run->cfg, &attr, &run->chan), 0);
	CHECK_EQ(tc_checker_init(&run->tc, run->chan, NWRITERS, MAXSEQ), 0);
	for (i = 0; i < grb_channel_nr_bufs(run->chan); i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(run->chan, i)), 0);
	run->deadline = stress_now_ns() +
		(uint64_t)(a->seconds * 1e9 / (TV_COUNT * HOW_COUNT));
	CHECK_EQ(pthread_barrier_init(&run->round, NULL, NWRITERS), 0);
	grb_test_set_hook(widen, NULL);
	CHECK_EQ(pthread_create(&tr, NULL, reader, run), 0);
	for (i = 0; i < NWRITERS; i++)
		CHECK_EQ(pthread_create(&tw[i], NULL, writer, run), 0);
	for (i = 0; i < NWRITERS; i++)
		CHECK_EQ(pthread_join(tw[i], NULL), 0);
	CHECK_EQ(grb_channel_finalize(run->chan), 0);
	CHECK_EQ(pthread_join(tr, NULL), 0);
	grb_test_set_hook(NULL, NULL);
	errors = tc_final_check(&run->tc, run->chan,
				atomic_load(&run->refused));
	failed = atomic_load(&run->failed) || errors;
	sleeps = run->sleeps;
	printf("%-36s %-8s read %7llu, reader blocked %6llu times\n",
	       tc_variant_name(v), how == HOW_CHANNEL ? "wait" : "eventfd",
	       (unsigned long long)run->tc.records_read,
	       (unsigned long long)sleeps);
	if (failed || sleeps == 0)
		fprintf(stderr, "stress_wait: FAILED (%s): variant %s, seed %llu\n",
			errors ? "checker errors" : failed ? "lost wake-up" :
			"the reader never blocked",
			tc_variant_name(v), (unsigned long long)a->seed);
	pthread_barrier_destroy(&run->round);
	tc_checker_free(&run->tc);
	grb_channel_destroy(run->chan);
	free(run);
	return failed || sleeps == 0;
}

int main(int argc, char **argv)
{
	struct stress_args a;
	int v, how, failed = 0;

	stress_parse(argc, argv, &a);
	for (v = 0; v < TV_COUNT; v++)
		for (how = 0; how < HOW_COUNT; how++)
			failed |= run_one(v, (enum how)how, &a);
	printf("stress_wait: %s\n", failed ? "FAILED" : "passed");
	return failed;
}
