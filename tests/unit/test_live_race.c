/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_live_race.c - the live read's record count when the
 * sub-buffer it looks at is filled and delivered under it.
 *
 * grb_reader_live() checks that the prefix of the sub-buffer at consumed
 * is committed (position, commit counter, position again), then counts
 * its records as the counter's minus cc_sb, the value the previous lap's
 * delivery left.  If cc_sb is loaded after that check, the sub-buffer can
 * fill and be delivered in between: cc_sb is then this lap's own, larger
 * than the counter the check read, and the count wraps.  The hook at
 * GRB_HOOK_LIVE_CHECKED stands in for writers on other CPUs: it fills the
 * sub-buffer (and delivers it) right after the check.  The reply must
 * still describe the prefix it checked: its size and its records.  Spin
 * found this first (model/check.sh mutant-live-late-cc-sb).
 */
#include <errno.h>
#include <stdio.h>

#include "check.h"
#include "grb/reader.h"
#include "grb_test_hooks.h"
#include "tclient.h"

#define SB 4096

static const struct grb_config *cfg;
static struct grb_channel *chan;
static uint32_t seq;
static int fill_armed;
static uint64_t in_open;        /* records in the open sub-buffer */

static uint64_t produced(void)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(grb_channel_buf(chan, 0), &st), 0);
	return st.produced;
}

static void put(void)
{
	uint64_t before = produced() / SB;

	CHECK_EQ(tc_write(cfg, chan, 0, seq, 0), 0);
	seq++;
	in_open = produced() / SB == before ? in_open + 1 : 1;
}

/* Fill the open sub-buffer: the next write opens the second one, and the
 * first is delivered. */
static void fill(enum grb_hook_point point, void *arg)
{
	uint64_t start;

	(void)arg;
	if (point != GRB_HOOK_LIVE_CHECKED || !fill_armed)
		return;
	fill_armed = 0;
	start = produced() / SB;
	while (produced() / SB == start)
		put();
}

int main(void)
{
	struct grb_channel_attr attr = { "live-race", SB, 4, NULL };
	struct grb_buf *buf;
	struct grb_reader_subbuf live, sb;
	uint64_t size_before, recs_before;
	int round;

	cfg = tc_config(TV_PER_CHANNEL | TV_DISCARD);
	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	buf = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	grb_test_set_hook(fill, NULL);
	/* Two rounds: the second is a later lap of another slot, with a
	 * cc_sb left by an earlier delivery. */
	for (round = 0; round < 2; round++) {
		put();
		put();
		put();
		size_before = produced() % SB;
		recs_before = in_open;
		fill_armed = 1;
		CHECK_EQ(grb_reader_live(buf, &live), 0);
		CHECK(!fill_armed);
		/* What was checked: the prefix and its records. */
		CHECK_U64(live.data_size, size_before);
		CHECK_U64(live.records, recs_before);
		/* The sub-buffer is delivered now, with every record. */
		CHECK_EQ(grb_reader_get_next(buf), 0);
		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		CHECK_U64(sb.pos, live.pos);
		CHECK(sb.records > live.records);
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	grb_test_set_hook(NULL, NULL);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	grb_channel_destroy(chan);
	printf("test_live_race: passed\n");
	return 0;
}
