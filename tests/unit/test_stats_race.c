/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_stats_race.c - counters read while writers run.
 *
 * grb/channel.h: "written includes records committed in sub-buffers not
 * yet delivered"; a delivery racing grb_buf_get_stats() may be missed,
 * but no record is counted twice.  A delivery adds its lap's records to
 * the delivered total before it stores the lap's cc_sb; in between they
 * are in both halves of `written`.  The hook at GRB_HOOK_DELIVER_PUBLISH
 * (totals added, cc_sb not stored) reads the statistics there, inside
 * the reservation or commit that delivers: one thread, so `written` must
 * be the records committed (the delivering commit's included).  Before
 * the fix it was a whole sub-buffer more.
 *
 * grb/basic.h: grb_basic_get_counts() reads its counters one after the
 * other; entries, computed from them, must not wrap below zero when an
 * overwrite lands between the loads: a writer overwrites on one thread
 * while the main one reads the counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "grb/basic.h"
#include "grb_test_hooks.h"
#include "tagrec.h"

#define NSUB 4
#define REC 100

static struct grb_buf *watched;
static uint64_t committed;      /* records committed before this one */
static unsigned int checks;

static void hook(enum grb_hook_point point, void *arg)
{
	struct grb_buf_stats st;

	(void)arg;
	if (point != GRB_HOOK_DELIVER_PUBLISH || !watched)
		return;
	CHECK_EQ(grb_buf_get_stats(watched, &st), 0);
	/* Delivered by the next record's reservation (its padding), or by
	 * a commit (which is then counted): nothing twice. */
	CHECK(st.written == committed || st.written == committed + 1);
	checks++;
}

static void deliveries(const struct grb_config *cfg)
{
	struct grb_channel *chan = create(cfg, SB, NSUB);
	struct grb_buf_stats st;
	uint64_t i;

	watched = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_reader_open(watched), 0);
	checks = 0;
	/* Overwrite mode laps the reader: deliveries go on all along. */
	for (i = 0, committed = 0; i < 20 * SB / REC; i++, committed++) {
		if (cfg->mode == GRB_MODE_DISCARD && i % (SB / REC) == 0)
			while (grb_reader_get_next(watched) == 0)
				CHECK_EQ(grb_reader_put_next(watched), 0);
		CHECK_EQ(put(cfg, chan, i, REC), 0);
	}
	watched = NULL;
	CHECK(checks >= 15);
	CHECK_EQ(grb_buf_get_stats(grb_channel_buf(chan, 0), &st), 0);
	CHECK_U64(st.written, committed);
	grb_channel_destroy(chan);
}

static atomic_int stop;

static void *overwriter(void *arg)
{
	struct grb_basic *b = (struct grb_basic *)arg;
	uint64_t x = 0;

	while (!atomic_load(&stop)) {
		CHECK_EQ(grb_basic_write(b, &x, sizeof(x)), 0);
		x++;
	}
	return NULL;
}

static void basic_entries(void)
{
	struct grb_basic_attr attr = { "stats", 4096, 4, GRB_ALLOC_PER_CHANNEL,
				       GRB_MODE_OVERWRITE, 0 };
	struct grb_basic_counts c;
	struct grb_basic *b;
	struct timespec t0, t;
	pthread_t w;
	uint64_t reads = 0;

	CHECK_EQ(grb_basic_create(&attr, &b), 0);
	CHECK_EQ(pthread_create(&w, NULL, overwriter, b), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
		CHECK(c.entries <= c.written);
		reads++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < 700);
	atomic_store(&stop, 1);
	CHECK_EQ(pthread_join(w, NULL), 0);
	/* Writers stopped: the counts add up again. */
	CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
	CHECK_U64(c.entries + c.overruns + c.consumed + c.dropped + c.corrupt,
		  c.written);
	CHECK(reads > 0);
	grb_basic_destroy(b);
}

int main(void)
{
	grb_test_set_hook(hook, NULL);
	deliveries(&raw);
	deliveries(&raw_ow);
	grb_test_set_hook(NULL, NULL);
	basic_entries();
	printf("test_stats_race: passed\n");
	return 0;
}
