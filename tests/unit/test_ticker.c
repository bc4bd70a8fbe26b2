/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_ticker.c - the ticker thread's schedule after a slow
 * tick (grb/timer.h: it "calls grb_channel_tick() every period_ns
 * nanoseconds"; an idle buffer gets an empty sub-buffer once it "wrote
 * nothing for a whole period").
 *
 * The ticker kept a fixed schedule and never caught up with the clock:
 * after one tick that took ten periods (a slow buffer_end, a stopped
 * process), it fired the nine missed ones back to back, each finding the
 * buffer idle since the one a few microseconds before, and each closing
 * an empty sub-buffer (in overwrite mode, each pushing out one that held
 * data).  The next tick after a late one now comes a period later.
 *
 * The check counts ticks closer than a tenth of a period to the one
 * before: a burst makes about nine; a late wake-up on a loaded machine
 * can make one (a tick late by nearly a period, the next one on time).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"
#include "grb/timer.h"

#define PERIOD_NS 50000000u     /* 50 ms */
#define SLOW_US   500000u       /* the third tick takes ten periods */
#define MAX_TICKS 128

static uint64_t tick_ns[MAX_TICKS];
static unsigned int nr_ticks;

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Every idle tick closes an empty sub-buffer: its end is the tick. */
static void on_end(struct grb_buf *buf, void *hdr,
		   const struct grb_subbuf_info *info)
{
	(void)buf;
	(void)hdr;
	(void)info;
	if (nr_ticks < MAX_TICKS)
		tick_ns[nr_ticks++] = clock_ns();
	if (nr_ticks == 3)
		usleep(SLOW_US);
}

int main(void)
{
	static const struct grb_config cfg = {
		.alloc = GRB_ALLOC_PER_CHANNEL, .mode = GRB_MODE_OVERWRITE,
		.cb = { .buffer_end = on_end },
	};
	struct grb_channel_attr attr = { "ticker", 4096, 64, NULL };
	struct grb_channel *chan;
	struct grb_ticker *t;
	unsigned int i, n, close_pairs = 0;

	CHECK_EQ(grb_channel_create(&cfg, &attr, &chan), 0);
	CHECK_EQ(grb_ticker_start(chan, PERIOD_NS, GRB_TICK_IDLE, &t), 0);
	usleep(SLOW_US + 8 * PERIOD_NS / 1000);
	CHECK_EQ(grb_ticker_stop(t), 0);
	n = nr_ticks;
	/* Ticks after the slow one, or the check below is empty. */
	CHECK(n >= 5);
	for (i = 3; i < n; i++)
		if (tick_ns[i] - tick_ns[i - 1] < PERIOD_NS / 10)
			close_pairs++;
	if (close_pairs > 1) {
		for (i = 1; i < n; i++)
			fprintf(stderr, "tick %u: +%.1f ms\n", i,
				(double)(tick_ns[i] - tick_ns[i - 1]) / 1e6);
	}
	CHECK_EQ(close_pairs <= 1, 1);
	grb_channel_destroy(chan);
	printf("test_ticker: %u ticks, %u within a tenth of a period "
	       "of the one before\n", n, close_pairs);
	return 0;
}
