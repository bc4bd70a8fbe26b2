/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_read_side_audit.c - promises of grb/reader.h, grb/iter.h
 * and grb/output.h that the other read-side tests check only in part:
 *  - overwrite mode, a closed sub-buffer with a record still reserved:
 *    snapshot counts it closed, get_next and get_subbuf say -EAGAIN, a
 *    later delivered sub-buffer can be pinned but get_next does not skip
 *    the older one, and the commit delivers it whole;
 *  - what grb_reader_snapshot() reports while a sub-buffer is held: the
 *    consumed position moved at get_next in overwrite mode, at put_next
 *    in discard mode;
 *  - grb_reader_live() of a client with a sub-buffer header: data_size
 *    counts the header, records does not, and nothing is held;
 *  - a consuming iterator takes a sub-buffer when it starts on it (read
 *    and consumed move then in overwrite mode) and gives it back on the
 *    call after the one that returned its last record;
 *  - a record's pos, payload and decoder offsets name the bytes of the
 *    sub-buffer the iterator holds;
 *  - a snapshot leaves out the sub-buffer open when it was made, consumes
 *    nothing, releases the buffer; once it ended, the read and consume
 *    functions say -ENODATA, and an idle buffer of a channel snapshot
 *    holds nothing back;
 *  - GRB_TICK_IDLE frees a merge held back by an idle buffer only once
 *    that buffer wrote nothing for a whole period (two ticks after a
 *    write), as grb/iter.h says.
 *
 * The raw clients of tagrec.h (no headers, no clock, a record is its
 * payload) serve the reader protocol; the iterators use lenrec.h, whose
 * clock the test sets for each record, and the test client of tclient.h
 * has a sub-buffer header.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "grb/grb.h"
#include "grb/iter.h"
#include "grb/output.h"
#include "grb/timer.h"
#include "lenrec.h"
#include "tagrec.h"
#include "tclient.h"

#define NSUB 4
#define REC 1000                /* raw records: four fill a sub-buffer */

#define LCB { .clock_read = lenrec_clock, .record_header_size = lenrec_header, \
	      .record_decode = lenrec_decode }

static const struct grb_config len_disc = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 16, LCB, 0 };
static const struct grb_config len_ovw = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 16, LCB, 0 };
static const struct grb_config len_cpu = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 16, LCB, 0 };

static struct grb_buf_stats stats(const struct grb_buf *b)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	return st;
}

/* A lenrec record whose payload is @tag, at clock value @ts. */
static int lput(const struct grb_config *cfg, struct grb_channel *chan,
		uint64_t tag, uint64_t ts)
{
	struct grb_ctx ctx = GRB_CTX_INIT(8, 4);
	uint32_t word = 8, low;
	int ret;

	lenrec_now = ts;
	ret = grb_reserve(cfg, chan, &ctx);
	if (ret)
		return ret;
	if (ctx.rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		word |= LENREC_FULL;
		grb_write(cfg, &ctx, &word, 4);
		grb_write(cfg, &ctx, &ctx.timestamp, 8);
	} else {
		low = (uint32_t)(ctx.timestamp & 0xffff);
		grb_write(cfg, &ctx, &word, 4);
		grb_write(cfg, &ctx, &low, 4);
	}
	grb_write(cfg, &ctx, &tag, 8);
	grb_commit(cfg, &ctx);
	return 0;
}

static uint64_t tag_of(const struct grb_iter_record *r)
{
	uint64_t tag;

	CHECK_EQ(r->payload_len, 8);
	memcpy(&tag, r->payload, 8);
	return tag;
}

static int count_cb(void *arg, const struct grb_iter_record *r)
{
	(void)r;
	++*(uint64_t *)arg;
	return 0;
}

/* The tag of the raw record at @off of the held sub-buffer. */
static uint64_t held_tag(const struct grb_buf *b, size_t off)
{
	uint64_t tag;

	CHECK_EQ(grb_reader_read(b, off, &tag, sizeof(tag)), 0);
	return tag;
}

/*
 * Overwrite mode, sub-buffer 0 closed by a flush with its second record
 * still reserved: closed (snapshot), not delivered (-EAGAIN for both
 * gets), and the reader is not moved past it while sub-buffer 1, closed
 * and delivered after it, can be pinned.  The commit delivers it with
 * all three records, and get_next counts them read at once.
 */
static void test_overwrite_undelivered(void)
{
	struct grb_channel *chan = create(&raw_ow, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_ctx ctx = GRB_CTX_INIT(REC, 1);
	struct grb_reader_subbuf sb;
	uint64_t c, p, tag = 2;

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(put(&raw_ow, chan, 1, REC), 0);
	CHECK_EQ(grb_reserve(&raw_ow, chan, &ctx), 0);
	grb_write(&raw_ow, &ctx, &tag, sizeof(tag));
	CHECK_EQ(put(&raw_ow, chan, 3, REC), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), 0);
	CHECK_U64(c, 0);
	CHECK_U64(p, SB);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), -EAGAIN);
	CHECK_EQ(grb_reader_held(b, &sb), -EPERM);
	/* Sub-buffer 1: four records, closed by the fifth. */
	for (tag = 10; tag < 15; tag++)
		CHECK_EQ(put(&raw_ow, chan, tag, REC), 0);
	CHECK_EQ(grb_reader_get_subbuf(b, SB), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.pos, SB);
	CHECK_U64(sb.records, 4);
	CHECK_U64(held_tag(b, 0), 10);
	CHECK_EQ(grb_reader_put_subbuf(b), 0);
	/* The oldest first: no skipping past the undelivered one. */
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	CHECK_U64(stats(b).read, 0);
	CHECK_U64(stats(b).consumed, 0);

	grb_write_fill(&raw_ow, &ctx, 2, REC - sizeof(tag));
	grb_commit(&raw_ow, &ctx);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.pos, 0);
	CHECK_U64(sb.records, 3);
	CHECK_U64(sb.data_size, 3 * REC);
	CHECK_U64(held_tag(b, 0), 1);
	CHECK_U64(held_tag(b, REC), 2);
	CHECK_U64(held_tag(b, 2 * REC), 3);
	CHECK_U64(stats(b).read, 3);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.pos, SB);
	CHECK_U64(held_tag(b, 0), 10);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);     /* 2 is open */
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(chan);
}

/*
 * grb_reader_snapshot() with a sub-buffer held: overwrite mode moved the
 * consumed position at get_next (none left closed: -EAGAIN, once
 * finalized -ENODATA while still held); discard mode moves it at
 * put_next, so the held one still counts as closed and unconsumed.
 */
static void test_snapshot_held(void)
{
	int ow;

	for (ow = 0; ow < 2; ow++) {
		const struct grb_config *cfg = ow ? &raw_ow : &raw;
		struct grb_channel *chan = create(cfg, SB, NSUB);
		struct grb_buf *b = grb_channel_buf(chan, 0);
		uint64_t c, p;

		CHECK_EQ(grb_reader_open(b), 0);
		CHECK_EQ(put(cfg, chan, 1, REC), 0);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		CHECK_EQ(grb_reader_get_next(b), 0);
		CHECK_EQ(grb_reader_snapshot(b, &c, &p), ow ? -EAGAIN : 0);
		CHECK_U64(c, ow ? SB : 0);
		CHECK_U64(p, SB);
		CHECK_EQ(grb_channel_finalize(chan), 0);
		CHECK_EQ(grb_reader_snapshot(b, &c, &p), ow ? -ENODATA : 0);
		CHECK_EQ(grb_reader_put_next(b), 0);
		CHECK_EQ(grb_reader_snapshot(b, &c, &p), -ENODATA);
		CHECK_U64(c, SB);
		CHECK_EQ(grb_reader_get_next(b), -ENODATA);
		grb_channel_destroy(chan);
	}
}

/*
 * grb_reader_live() with a sub-buffer header (the test client's): the
 * prefix counts the header in data_size but not in records, decodes from
 * grb_reader_first_record() to exactly data_size, and holds nothing; the
 * delivered sub-buffer has the same size and count.
 */
static void test_live_header(void)
{
	const struct grb_config *cfg = tc_config(TV_PER_CHANNEL | TV_DISCARD);
	struct grb_channel *chan = create(cfg, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	size_t first = grb_reader_first_record(b), off;
	struct grb_reader_subbuf live, sb;
	struct grb_record rec;
	unsigned int n = 0;

	CHECK(first > 0);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(tc_write(cfg, chan, 0, 0, 10), 0);
	CHECK_EQ(tc_write(cfg, chan, 0, 1, 10), 0);
	CHECK_EQ(grb_reader_live(b, &live), 0);
	CHECK_U64(live.records, 2);
	CHECK(live.data_size > first);
	for (off = first; off < live.data_size; off = rec.next) {
		CHECK_EQ(cfg->cb.record_decode(cfg, live.data, off,
					       live.data_size, &rec), 0);
		CHECK(rec.next > off);
		n++;
	}
	CHECK_U64(off, live.data_size);
	CHECK_EQ(n, 2);
	/* Nothing is held: the held-sub-buffer calls refuse. */
	CHECK_EQ(grb_reader_held(b, &sb), -EPERM);
	CHECK_EQ(grb_reader_record(b, first, &rec), -EPERM);
	CHECK_EQ(grb_reader_put_next(b), -EPERM);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK(sb.data == live.data);
	CHECK_U64(sb.data_size, live.data_size);
	CHECK_U64(sb.records, live.records);
	CHECK_EQ(grb_reader_put_next(b), 0);
	grb_channel_destroy(chan);
}

/*
 * A consuming iterator takes a sub-buffer when it starts on it and gives
 * it back on the call after the one that returned its last record:
 * overwrite mode counts it read and consumed at the first call; discard
 * mode only at that later call (here the one that goes on to a record
 * read live, or -EAGAIN).
 */
static void test_iter_giveback(void)
{
	int ow;

	for (ow = 0; ow < 2; ow++) {
		const struct grb_config *cfg = ow ? &len_ovw : &len_disc;
		struct grb_channel *chan = create(cfg, SB, NSUB);
		struct grb_buf *b = grb_channel_buf(chan, 0);
		struct grb_buf_iter *it;
		struct grb_iter_record r;
		uint64_t i;

		for (i = 0; i < 3; i++)
			CHECK_EQ(lput(cfg, chan, i, 100 + i), 0);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		CHECK_EQ(lput(cfg, chan, 3, 200), 0);  /* stays open */
		CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
		CHECK_U64(stats(b).consumed, 0);
		for (i = 0; i < 3; i++) {
			CHECK_EQ(grb_buf_iter_next(it, &r), 0);
			CHECK_U64(tag_of(&r), i);
			CHECK_EQ(r.flags & GRB_ITER_LIVE, 0);
			CHECK_U64(stats(b).consumed, ow ? SB : 0);
			CHECK_U64(stats(b).read, ow ? 3 : 0);
		}
		if (ow) {
			/* Nothing read live in overwrite mode. */
			CHECK_EQ(grb_buf_iter_next(it, &r), -EAGAIN);
		} else {
			CHECK_EQ(grb_buf_iter_next(it, &r), 0);
			CHECK_U64(tag_of(&r), 3);
			CHECK(r.flags & GRB_ITER_LIVE);
		}
		CHECK_U64(stats(b).consumed, SB);
		CHECK_U64(stats(b).read, 3);
		grb_buf_iter_destroy(it);
		grb_channel_destroy(chan);
	}
}

/*
 * grb_iter_record: pos is the slot's position (the held sub-buffer's
 * position plus the slot's offset, the first at grb_reader_first_record()),
 * the decoder's offsets are from the sub-buffer's start, and payload
 * points into the sub-buffer the iterator holds.  Second sub-buffer, so
 * that pos is not an offset by chance.
 */
static void test_iter_fields(void)
{
	struct grb_channel *chan = create(&len_disc, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	struct grb_buf_iter *it;
	struct grb_iter_record r;
	size_t slot;
	uint64_t i;

	CHECK_EQ(lput(&len_disc, chan, 0, 10), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	for (i = 1; i < 4; i++)
		CHECK_EQ(lput(&len_disc, chan, i, 10 + i), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
	CHECK_EQ(grb_buf_iter_next(it, &r), 0);
	CHECK_U64(r.pos, grb_reader_first_record(b));
	slot = grb_reader_first_record(b);
	for (i = 1; i < 4; i++) {
		CHECK_EQ(grb_buf_iter_next(it, &r), 0);
		CHECK_U64(tag_of(&r), i);
		/* The iterator is the reader: what it holds is this. */
		CHECK_EQ(grb_reader_held(b, &sb), 0);
		CHECK_U64(sb.pos, SB);
		if (i == 1)
			slot = grb_reader_first_record(b);
		CHECK_U64(r.pos, sb.pos + slot);
		CHECK(r.rec.offset >= slot);
		CHECK(r.payload == (const char *)sb.data + r.rec.payload_off);
		CHECK_U64(r.rec.payload_off, r.rec.offset + r.rec.header_len);
		CHECK(r.rec.next <= sb.data_size);
		CHECK_U64(r.timestamp, 10 + i);
		CHECK(r.buf == b);
		CHECK_EQ(r.cpu, -1);
		slot = r.rec.next;
	}
	CHECK_U64(slot, sb.data_size);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);
}

/*
 * A buffer snapshot leaves out the sub-buffer open when it was made,
 * consumes nothing and releases the buffer when destroyed.  At its end
 * every way of reading it says -ENODATA: _next(), _read() (output.h),
 * _consume() and _poll() (with no record passed).
 */
static void test_snapshot_end(void)
{
	struct grb_channel *chan = create(&len_ovw, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_iter *it;
	struct grb_iter_record r;
	uint64_t i, n = 0, count = 99;
	unsigned char dst[16];
	size_t len = 99;

	for (i = 0; i < 3; i++)
		CHECK_EQ(lput(&len_ovw, chan, i, 100 + i), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(lput(&len_ovw, chan, 3, 200), 0);     /* stays open */
	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_SNAPSHOT, &it), 0);
	CHECK_EQ(grb_reader_open(b), -EBUSY);
	while (grb_buf_iter_next(it, &r) == 0)
		CHECK_U64(tag_of(&r), n++);
	CHECK_U64(n, 3);
	CHECK_EQ(grb_buf_iter_next(it, &r), -ENODATA);
	CHECK_EQ(grb_buf_iter_read(it, dst, sizeof(dst), &len), -ENODATA);
	CHECK_EQ(grb_buf_iter_consume(it, count_cb, &n, &count), -ENODATA);
	CHECK_U64(count, 0);
	count = 99;
	CHECK_EQ(grb_buf_iter_poll(it, count_cb, &n, 0, &count), -ENODATA);
	CHECK_U64(count, 0);
	CHECK_U64(n, 3);
	CHECK_U64(stats(b).read, 0);
	CHECK_U64(stats(b).consumed, 0);
	grb_buf_iter_destroy(it);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_release(b), 0);

	/* Flushed first, the fourth is part of the next snapshot. */
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_SNAPSHOT, &it), 0);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(grb_buf_iter_next(it, &r), 0);
		CHECK_U64(tag_of(&r), i);
	}
	CHECK_EQ(grb_buf_iter_next(it, &r), -ENODATA);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);
}

static int two_cpus(int *cpus)
{
	cpu_set_t set;
	int c, n = 0;

	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n == 2;
}

static void run_on(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

static void run_on_set(const cpu_set_t *set)
{
	CHECK_EQ(sched_setaffinity(0, sizeof(*set), set), 0);
}

/*
 * A channel snapshot with one buffer idle: the idle one has an empty
 * snapshot and holds nothing back; at the end, _next(), _read() and
 * _consume() say -ENODATA.
 */
static void test_chan_snapshot_idle(const int *cpus, const cpu_set_t *all)
{
	struct grb_channel *chan = create(&len_cpu, SB, NSUB);
	struct grb_chan_iter *ci;
	struct grb_iter_record r;
	uint64_t i, count = 99;
	unsigned char dst[16];
	size_t len = 99;

	run_on(cpus[1]);
	for (i = 0; i < 3; i++)
		CHECK_EQ(lput(&len_cpu, chan, i, 100 + i), 0);
	run_on_set(all);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_SNAPSHOT, &ci), 0);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
		CHECK_U64(tag_of(&r), i);
		CHECK(r.buf == grb_channel_buf(chan, (unsigned int)cpus[1]));
		CHECK_EQ(r.cpu, cpus[1]);
	}
	CHECK_EQ(grb_chan_iter_next(ci, &r), -ENODATA);
	CHECK_EQ(grb_chan_iter_read(ci, dst, sizeof(dst), &len), -ENODATA);
	CHECK_EQ(grb_chan_iter_consume(ci, count_cb, &i, &count), -ENODATA);
	CHECK_U64(count, 0);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);
}

/*
 * The merge held back by an idle buffer, and GRB_TICK_IDLE: the idle
 * buffer wrote (a record, consumed) before the ticks, so the first tick
 * finds it busy that period and delivers nothing; the second, a whole
 * period idle, delivers the empty sub-buffer that lets the merge go on.
 */
static void test_merge_idle_tick(const int *cpus, const cpu_set_t *all)
{
	struct grb_channel *chan = create(&len_cpu, SB, NSUB);
	struct grb_chan_iter *ci;
	struct grb_iter_record r;

	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	run_on(cpus[0]);
	CHECK_EQ(lput(&len_cpu, chan, 0, 10), 0);
	run_on_set(all);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	/* Buffer 1 has written nothing yet: it may still write older. */
	CHECK_EQ(grb_chan_iter_next(ci, &r), -EAGAIN);
	run_on(cpus[1]);
	CHECK_EQ(lput(&len_cpu, chan, 1, 20), 0);
	run_on_set(all);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 0);
	/* Now buffer 0, with none open, holds record 1 back. */
	lenrec_now = 30;
	CHECK_EQ(grb_chan_iter_next(ci, &r), -EAGAIN);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_IDLE), 0);
	CHECK_EQ(grb_chan_iter_next(ci, &r), -EAGAIN);  /* it wrote */
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_IDLE), 0);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 1);
	CHECK(r.flags & GRB_ITER_LIVE);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);
}

int main(void)
{
	cpu_set_t all;
	int cpus[2];

	CHECK_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
	test_overwrite_undelivered();
	test_snapshot_held();
	test_live_header();
	test_iter_giveback();
	test_iter_fields();
	test_snapshot_end();
	if (two_cpus(cpus)) {
		test_chan_snapshot_idle(cpus, &all);
		test_merge_idle_tick(cpus, &all);
	} else {
		printf("test_read_side_audit: one CPU: merges skipped\n");
	}
	printf("test_read_side_audit: passed\n");
	return 0;
}
