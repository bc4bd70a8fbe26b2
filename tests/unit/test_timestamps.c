/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_timestamps.c - deterministic reproductions of the two
 * ways a discard that moved the write position backwards broke
 * timestamps, on one thread, with the race-injection hooks standing in
 * for a signal handler that runs at the worst moment:
 *
 *  - reorder: writer X loads the position e just after D's slot [o, e) and
 *    reads its clock; D is discarded and P reserves a slot of the same
 *    size, [o, e) again, with a later clock; X's compare-and-swap from e
 *    then succeeded and X's record followed P's with an older timestamp;
 *  - compressed first record: X has reserved the last slot of a sub-buffer
 *    and not yet stored last_ts; H opens the next sub-buffer and is
 *    discarded, the position went back to just after that sub-buffer's
 *    header and last_ts to "force full"; X then stored its own timestamp
 *    over it, and the next writer, on the fast path right after the
 *    header, compressed its timestamp against X's: the first record of the
 *    sub-buffer could not be decoded on its own.
 *
 * The test client's checker rebuilds every timestamp and compares it with
 * the writer's clock value, requires a full timestamp on each sub-buffer's
 * first record and timestamps that never decrease in position order.
 * Each scenario runs several times, so that the test clock (a counter
 * that moves by 997 per read) crossing a 2^16 boundary at the wrong step,
 * which forces a full timestamp anyway, cannot hide the bug every time.
 */
#include <errno.h>
#include <stdio.h>

#include "check.h"
#include "grb_test_hooks.h"
#include "tclient.h"

#define ROUNDS 8

static const struct grb_config *cfg;
static struct grb_channel *chan;
static struct tc_checker tc;
static uint32_t seq;            /* writer 0: the outer writer */
static uint32_t seq1;           /* writer 1: what the hook writes */
static enum grb_hook_point armed_at = GRB_HOOK_COUNT;
static void (*armed_fn)(void);

/* Run armed_fn once, the next time the library passes armed_at. */
static void hook(enum grb_hook_point point, void *arg)
{
	void (*fn)(void) = armed_fn;

	(void)arg;
	if (point != armed_at || !fn)
		return;
	armed_fn = NULL;
	fn();
}

static void arm(enum grb_hook_point point, void (*fn)(void))
{
	armed_at = point;
	armed_fn = fn;
}

static void put(uint32_t extra)
{
	CHECK_EQ(tc_write(cfg, chan, 0, seq, extra), 0);
	tc_mark_reserved(&tc, 0, seq++);
}

static uint64_t room(void)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(grb_channel_buf(chan, 0), &st), 0);
	return 4096 - (st.produced & 4095);
}

/* --- reorder -------------------------------------------------------- */

static struct tc_pending d_rec;

/* X has loaded the position after D's slot and read its clock. */
static void discard_and_refill(void)
{
	struct tc_pending p;

	CHECK_EQ(tc_abandon(&d_rec), 1);
	tc_mark_abandoned(&tc, 1);
	/* Same size as D's slot: with the old discard it lands on [o, e). */
	CHECK_EQ(tc_reserve(cfg, chan, 1, seq1, 16, &p), 0);
	tc_finish(&p);
	tc_mark_reserved(&tc, 1, seq1++);
}

static void reorder_round(void)
{
	put(0);
	CHECK_EQ(tc_reserve(cfg, chan, 0, seq, 16, &d_rec), 0);
	seq++;                  /* D's number is never read */
	arm(GRB_HOOK_RESERVE_LOADED, discard_and_refill);
	put(16);                /* X: the hook runs inside its reserve */
	CHECK(armed_fn == NULL);
	put(0);
}

/* --- compressed first record ---------------------------------------- */

/* X's compare-and-swap is done, its last_ts store is not. */
static void open_and_discard(void)
{
	struct tc_pending h;

	/* Too big for what X left: H opens the next sub-buffer. */
	CHECK_EQ(tc_reserve(cfg, chan, 1, seq1++, 200, &h), 0);
	CHECK_EQ(tc_abandon(&h), 1);
	tc_mark_abandoned(&tc, 1);
}

static void first_record_round(void)
{
	uint64_t r;

	/*
	 * Leave between 294 and 330 bytes in the open sub-buffer (a record
	 * with no extra bytes takes 32 or 36; one with 250 takes about 290
	 * and, when it does not fit, moves to the next sub-buffer)...
	 */
	if (room() < 294)
		put(250);
	while (room() >= 330)
		put(0);
	/* ...then X leaves about 200 bytes, less than H's 236 or more. */
	r = room();
	arm(GRB_HOOK_RESERVE_DONE, open_and_discard);
	put((uint32_t)(r - 200 - 36));
	CHECK(armed_fn == NULL);
	/* Y: the next record; it must open a sub-buffer and be full. */
	put(0);
	put(0);
}

static void run(const char *name, int variant, void (*round)(void))
{
	struct grb_channel_attr attr = { name, 4096, 64, NULL };
	uint64_t errors;
	int i;

	cfg = tc_config(variant);
	seq = seq1 = 0;
	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	CHECK_EQ(tc_checker_init(&tc, chan, 2, 4096), 0);
	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	grb_test_set_hook(hook, NULL);
	for (i = 0; i < ROUNDS; i++)
		round();
	grb_test_set_hook(NULL, NULL);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	tc_drain_all(&tc, chan);
	errors = tc_final_check(&tc, chan, 0);
	printf("test_timestamps %-14s %llu records read, %llu discarded, %llu errors\n",
	       name, (unsigned long long)tc.records_read,
	       (unsigned long long)tc.discards, (unsigned long long)errors);
	CHECK_U64(errors, 0);
	CHECK_U64(tc.discards, ROUNDS);
	tc_checker_free(&tc);
	grb_channel_destroy(chan);
}

int main(void)
{
	/* Full timestamps keep record sizes equal: the refill then lands on
	 * exactly the discarded slot, as it must for the reorder. */
	run("reorder", TV_PER_CHANNEL | TV_DISCARD, reorder_round);
	run("first-record", TV_PER_CHANNEL | TV_DISCARD | TV_COMPRESS,
	    first_record_round);
	printf("test_timestamps: passed\n");
	return 0;
}
