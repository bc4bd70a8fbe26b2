/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_finalize_race.c - an empty flush (an idle tick's)
 * running across grb_channel_finalize().
 *
 * grb/channel.h: "After grb_channel_finalize() a buffer stays ended: a
 * flush there opens no sub-buffer" and "readers drain what is left and
 * then get -ENODATA"; grb/timer.h lets a tick run beside anything but
 * destroy, finalize included.  A GRB_FLUSH_EMPTY that checked the buffer
 * before finalize began and opened its sub-buffer after finalize returned
 * gave a reader that had had -ENODATA one sub-buffer more.  Finalize now
 * closes a gate the empty flush passes and waits for the flushes past it.
 *
 * The hook at GRB_HOOK_FLUSH_LOADED (position loaded, CAS not done)
 * parks the flushing thread there while finalize runs, in both modes:
 *  - finalize waits for the parked flush; once both are done the reader
 *    gets the flush's header-only sub-buffer, then -ENODATA, for good;
 *  - an empty flush after finalize opens nothing (-ENODATA);
 *  - a flush that never comes back (a process killed inside it) holds
 *    finalize back about a second, not forever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "grb/reader.h"
#include "grb_test_hooks.h"
#include "tagrec.h"

#define NSUB 4

static _Thread_local int parks;         /* this thread parks at the hook */
static atomic_int parked, go, finalized;

static void hook(enum grb_hook_point point, void *arg)
{
	(void)arg;
	if (point != GRB_HOOK_FLUSH_LOADED || !parks)
		return;
	atomic_store(&parked, 1);
	while (!atomic_load(&go))
		usleep(1000);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct run {
	struct grb_channel *chan;
	int flush_ret;
};

static void *flush_main(void *arg)
{
	struct run *r = (struct run *)arg;

	parks = 1;
	r->flush_ret = grb_buf_flush(grb_channel_buf(r->chan, 0),
				     GRB_FLUSH_EMPTY);
	return NULL;
}

static void *finalize_main(void *arg)
{
	struct run *r = (struct run *)arg;

	CHECK_EQ(grb_channel_finalize(r->chan), 0);
	atomic_store(&finalized, 1);
	return NULL;
}

/* Sub-buffers the reader gets before -ENODATA. */
static unsigned int drain_count(struct grb_buf *b)
{
	unsigned int n = 0;
	int ret;

	while ((ret = grb_reader_get_next(b)) == 0) {
		CHECK_EQ(grb_reader_put_next(b), 0);
		n++;
	}
	CHECK_EQ(ret, -ENODATA);
	return n;
}

static void one_mode(const struct grb_config *cfg, int dead)
{
	struct run r = { create(cfg, SB, NSUB), 1 };
	struct grb_buf *b = grb_channel_buf(r.chan, 0);
	pthread_t fl, fin;
	uint64_t t0;

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(put(cfg, r.chan, 1, 1000), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	/* At a boundary with nothing open: the empty flush would open. */
	atomic_store(&parked, 0);
	atomic_store(&go, 0);
	atomic_store(&finalized, 0);
	CHECK_EQ(pthread_create(&fl, NULL, flush_main, &r), 0);
	while (!atomic_load(&parked))
		usleep(1000);
	t0 = now_ms();
	CHECK_EQ(pthread_create(&fin, NULL, finalize_main, &r), 0);
	if (!dead) {
		usleep(100000);
		/* Finalize waits for the flush already past its gate. */
		CHECK_EQ(atomic_load(&finalized), 0);
		atomic_store(&go, 1);
		CHECK_EQ(pthread_join(fl, NULL), 0);
		CHECK_EQ(pthread_join(fin, NULL), 0);
		CHECK_EQ(r.flush_ret, 0);
	} else {
		/* The flush never comes back: finalize gives up waiting. */
		CHECK_EQ(pthread_join(fin, NULL), 0);
		CHECK(now_ms() - t0 >= 900);
		CHECK(now_ms() - t0 < 10000);
	}
	/* The flush's sub-buffer (opened before finalize closed the gate)
	 * when it ran, then the end, and the end stays. */
	CHECK_EQ(drain_count(b), dead ? 0u : 1u);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), -ENODATA);
	CHECK_EQ(grb_reader_get_next(b), -ENODATA);
	if (dead) {
		atomic_store(&go, 1);
		CHECK_EQ(pthread_join(fl, NULL), 0);
	}
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(r.chan);
}

int main(void)
{
	alarm(60);
	grb_test_set_hook(hook, NULL);
	one_mode(&raw, 0);
	one_mode(&raw_ow, 0);
	one_mode(&raw, 1);
	printf("test_finalize_race: passed\n");
	return 0;
}
