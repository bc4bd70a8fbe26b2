/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_iter.c - the record iterators of grb/iter.h with a
 * client whose clock the test sets for every record:
 *  - one buffer, consumed: payloads and rebuilt timestamps (16-bit
 *    compression across many wraps), live records before their
 *    sub-buffer closes and no duplicate after it does;
 *  - losses reported in place and exact in total, discard and overwrite;
 *  - a snapshot that consumes nothing and ends where it started;
 *  - the channel merge: timestamp order, ties by buffer, an idle buffer
 *    that holds the merge back until it closes an empty sub-buffer, a
 *    clock that goes backwards (returned in place, flagged, counted);
 *    without a clock, nothing held back;
 *  - an undecodable record: -EIO once, the rest of its sub-buffer lost.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "lenrec.h"
#include "grb/grb.h"
#include "grb/iter.h"

#define SB 4096
#define FULL LENREC_FULL
#define TS_BITS 16

#define CB { .clock_read = lenrec_clock, .record_header_size = lenrec_header, \
	     .record_decode = lenrec_decode }

static const struct grb_config chan_disc = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, TS_BITS, CB, 0 };
static const struct grb_config chan_ovw = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, TS_BITS, CB, 0 };
static const struct grb_config cpu_disc = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, TS_BITS, CB, 0 };

/* Write a record whose payload is `tag` (8 bytes), at clock value ts. */
static int put(const struct grb_config *cfg, struct grb_channel *chan,
	       uint64_t tag, uint64_t ts)
{
	struct grb_ctx ctx = GRB_CTX_INIT(8, 4);
	uint32_t word, low;
	int ret;

	lenrec_now = ts;
	ret = grb_reserve(cfg, chan, &ctx);
	if (ret)
		return ret;
	word = 8;
	if (ctx.rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		word |= FULL;
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

static struct grb_channel *create(const struct grb_config *cfg, size_t n)
{
	struct grb_channel_attr attr = { "iter", SB, n, NULL };
	struct grb_channel *chan;

	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	return chan;
}

/* One buffer: timestamps across 16-bit wraps, live then delivered. */
static void test_buf_consume(void)
{
	struct grb_channel *chan = create(&chan_disc, 64);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_iter *it;
	struct grb_iter_record r;
	uint64_t i, got = 0, ts = UINT64_C(5) << 40, prev_next = 0;

	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), -EBUSY);
	CHECK_EQ(grb_buf_iter_next(it, &r), -EAGAIN);
	/* Three records, read live: no flush. */
	for (i = 0; i < 3; i++)
		CHECK_EQ(put(&chan_disc, chan, i, ts + i * 40000), 0);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(grb_buf_iter_next(it, &r), 0);
		CHECK_U64(tag_of(&r), i);
		CHECK_U64(r.timestamp, ts + i * 40000);
		CHECK(r.flags & GRB_ITER_LIVE);
		CHECK_U64(r.lost, 0);
		CHECK(r.buf == b);
		/* Per channel: cpu -1; pos is the slot's position, in the
		 * first sub-buffer here, and the decoder's offsets are from
		 * its start: the slot ends where the next one begins. */
		CHECK_EQ(r.cpu, -1);
		CHECK(r.pos < SB);
		CHECK_U64(r.pos % SB, i ? prev_next : r.pos % SB);
		CHECK_EQ(r.payload_len, 8);
		CHECK(r.rec.payload_off + 8 == r.rec.next);
		prev_next = r.rec.next;
	}
	CHECK_EQ(grb_buf_iter_next(it, &r), -EAGAIN);
	/* Many more, with steps that wrap the 16 kept bits often. */
	for (i = 3; i < 2000; i++)
		CHECK_EQ(put(&chan_disc, chan, i, ts + i * 40000), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	for (i = 3; i < 2000; i++) {
		CHECK_EQ(grb_buf_iter_next(it, &r), 0);
		CHECK_U64(tag_of(&r), i);
		CHECK_U64(r.timestamp, ts + i * 40000);
		/* Delivered sub-buffers (all, once finalized) are not live. */
		CHECK(!(r.flags & GRB_ITER_LIVE));
		got++;
	}
	CHECK_EQ(grb_buf_iter_next(it, &r), -ENODATA);
	CHECK_U64(grb_buf_iter_lost(it), 0);
	CHECK_U64(got, 1997);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);
}

/* Losses, reported before the records that follow them, exact in total. */
static void test_lost(const struct grb_config *cfg)
{
	struct grb_channel *chan = create(cfg, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_stats st;
	struct grb_buf_iter *it;
	struct grb_iter_record r;
	uint64_t i, reported = 0, read = 0, last = 0;
	int ret, refused = 0;

	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
	/* Far more than four sub-buffers hold, with no reader running. */
	for (i = 0; i < 3000; i++)
		refused += put(cfg, chan, i, 1000 + i) != 0;
	CHECK_EQ(grb_channel_finalize(chan), 0);
	while ((ret = grb_buf_iter_next(it, &r)) == 0) {
		CHECK(read == 0 || tag_of(&r) > last);
		/* A gap in the tags is announced by the record after it. */
		if (read && tag_of(&r) != last + 1)
			CHECK(r.lost > 0);
		last = tag_of(&r);
		reported += r.lost;
		read++;
	}
	CHECK_EQ(ret, -ENODATA);
	reported += grb_buf_iter_lost(it);
	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.read, read);
	CHECK_U64(reported, st.lost_full + st.lost_wrap + st.overwritten);
	CHECK_U64(read + reported, 3000);
	CHECK(reported > 0);
	CHECK_EQ(refused > 0, cfg->mode == GRB_MODE_DISCARD);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);
}

/* A snapshot reads without consuming, and ends where it began. */
static void test_snapshot(void)
{
	struct grb_buf_stats st0, st1;
	struct grb_channel *chan = create(&chan_ovw, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_iter *it;
	struct grb_iter_record r;
	uint64_t i, n1 = 0, n2 = 0, first = 0;
	int pass;

	for (i = 0; i < 500; i++)
		CHECK_EQ(put(&chan_ovw, chan, i, 7 + i), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	for (pass = 0; pass < 2; pass++) {
		CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_SNAPSHOT, &it), 0);
		while (grb_buf_iter_next(it, &r) == 0) {
			if (pass == 0 && n1 == 0)
				first = tag_of(&r);
			CHECK_U64(tag_of(&r), first + (pass ? n2 : n1));
			*(pass ? &n2 : &n1) += 1;
			/* Writers go on: the snapshot still ends. */
			if (pass == 1)
				CHECK_EQ(put(&chan_ovw, chan, 1000 + n2, 600), 0);
		}
		CHECK_EQ(grb_buf_iter_next(it, &r), -ENODATA);
		grb_buf_iter_destroy(it);
	}
	CHECK(n1 > 0);
	CHECK_U64(n1, n2);
	CHECK_U64(first + n1, 500);
	grb_channel_destroy(chan);

	/* Writers lap the snapshot: what it had not reached is skipped, and
	 * the loss reported is what the buffer overwrote meanwhile (the
	 * losses' definition above, exact in total). */
	chan = create(&chan_ovw, 4);
	b = grb_channel_buf(chan, 0);
	for (i = 0; i < 300; i++)
		CHECK_EQ(put(&chan_ovw, chan, i, 7 + i), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_get_stats(b, &st0), 0);
	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_SNAPSHOT, &it), 0);
	CHECK_EQ(grb_buf_iter_next(it, &r), 0);
	CHECK_U64(r.lost, 0);
	n1 = 1;
	n2 = 0;
	for (i = 0; i < 3000; i++)
		CHECK_EQ(put(&chan_ovw, chan, 1000 + i, 400 + i), 0);
	CHECK_EQ(grb_buf_get_stats(b, &st1), 0);
	while (grb_buf_iter_next(it, &r) == 0) {
		CHECK(tag_of(&r) < 300);
		n2 += r.lost;
		n1++;
	}
	n2 += grb_buf_iter_lost(it);
	CHECK(n1 < 300);
	CHECK(n2 > 0);
	CHECK_U64(n2, st1.overwritten - st0.overwritten);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);
}

static int ncpus_allowed(int *cpus)
{
	cpu_set_t set;
	int c, n = 0;

	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

static void run_on(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

/* Write tag at ts into the buffer of cpu. */
static void put_on(struct grb_channel *chan, int cpu, uint64_t tag,
		   uint64_t ts)
{
	run_on(cpu);
	CHECK_EQ(put(&cpu_disc, chan, tag, ts), 0);
}

static void test_merge(void)
{
	static const uint64_t want[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct grb_chan_iter_stats st;
	struct grb_chan_iter *ci;
	struct grb_iter_record r;
	struct grb_channel *chan;
	cpu_set_t all;
	int cpus[2], i;

	if (ncpus_allowed(cpus) < 2) {
		printf("test_iter: merge across buffers skipped: one CPU\n");
		return;
	}
	CHECK_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
	chan = create(&cpu_disc, 16);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	/* Interleaved timestamps across two buffers; 3 and 4 tie at 300:
	 * the lower buffer index comes first. */
	put_on(chan, cpus[0], 1, 100);
	put_on(chan, cpus[1], 2, 200);
	put_on(chan, cpus[0], 3, 300);
	put_on(chan, cpus[1], 4, 300);
	put_on(chan, cpus[1], 5, 400);
	put_on(chan, cpus[0], 6, 500);
	for (i = 0; i < 5; i++) {
		CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
		CHECK_U64(tag_of(&r), want[i]);
	}
	/* 6 (at 500) waits: the other buffer, now idle, returned 400 last
	 * and may still write something older. */
	CHECK_EQ(grb_chan_iter_next(ci, &r), -EAGAIN);
	put_on(chan, cpus[1], 8, 700);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 6);
	/* Now 8 waits for cpus[0], which does write something older. */
	CHECK_EQ(grb_chan_iter_next(ci, &r), -EAGAIN);
	put_on(chan, cpus[0], 7, 600);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 7);
	CHECK_EQ(grb_chan_iter_next(ci, &r), -EAGAIN);
	/* Closing the idle buffer's sub-buffer (what the tick does) tells
	 * the merge it writes nothing before 800. */
	lenrec_now = 800;
	CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, (unsigned int)cpus[0]),
			       GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 8);
	/* Idle with nothing open: an empty sub-buffer does the same. */
	put_on(chan, cpus[1], 11, 820);
	CHECK_EQ(grb_chan_iter_next(ci, &r), -EAGAIN);
	lenrec_now = 830;
	CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, (unsigned int)cpus[0]),
			       GRB_FLUSH_EMPTY), 0);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 11);
	/* A clock that goes backwards across buffers: returned in place,
	 * flagged late and counted. */
	put_on(chan, cpus[1], 9, 900);
	CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, (unsigned int)cpus[1]),
			       GRB_FLUSH_ACTIVE), 0);
	lenrec_now = 950;
	CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, (unsigned int)cpus[0]),
			       GRB_FLUSH_EMPTY), 0);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 9);
	CHECK_EQ(r.flags & GRB_ITER_LATE, 0);
	put_on(chan, cpus[0], 10, 850);     /* below 900, already returned */
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 10);
	CHECK(r.flags & GRB_ITER_LATE);
	CHECK_EQ(grb_chan_iter_next(ci, &r), -ENODATA);
	CHECK_EQ(grb_chan_iter_stats(ci, &st), 0);
	CHECK_U64(st.records, 11);
	CHECK_U64(st.late, 1);
	CHECK_U64(st.lost, 0);
	CHECK_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);
}

/* A record a client bug overwrote: -EIO once, its sub-buffer's rest lost. */
/* Without a clock there is no order across buffers to keep: a record is
 * returned as soon as its buffer has it, whatever the idle buffers. */
static void test_merge_clockless(void)
{
	static const struct grb_config nots = {
		GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0,
		{ .record_header_size = lenrec_header,
		  .record_decode = lenrec_decode }, 0 };
	struct grb_chan_iter *ci;
	struct grb_iter_record r;
	struct grb_channel *chan;
	cpu_set_t all;
	int cpus[2];

	if (ncpus_allowed(cpus) < 2) {
		printf("test_iter: clock-less merge skipped: one CPU\n");
		return;
	}
	CHECK_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
	chan = create(&nots, 4);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	/* The higher buffer first, the lower one idle. */
	run_on(cpus[1]);
	CHECK_EQ(put(&nots, chan, 7, 0), 0);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 7);
	CHECK_U64(r.timestamp, 0);
	CHECK_EQ(r.cpu, cpus[1]);
	CHECK_EQ(grb_chan_iter_next(ci, &r), -EAGAIN);
	run_on(cpus[0]);
	CHECK_EQ(put(&nots, chan, 8, 0), 0);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 8);
	CHECK_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
	grb_channel_finalize(chan);
	CHECK_EQ(grb_chan_iter_next(ci, &r), -ENODATA);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);
}

static void put_bad(struct grb_channel *chan, uint64_t ts);

static void test_undecodable(void)
{
	struct grb_channel *chan = create(&chan_disc, 8);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_iter *it;
	struct grb_iter_record r;
	struct grb_ctx ctx = GRB_CTX_INIT(8, 4);
	uint32_t bad = 0x7fff0000u;
	uint64_t total = 0;
	int i;

	CHECK_EQ(put(&chan_disc, chan, 1, 10), 0);
	lenrec_now = 11;
	CHECK_EQ(grb_reserve(&chan_disc, chan, &ctx), 0);
	grb_write(&chan_disc, &ctx, &bad, 4);   /* a length past the end */
	grb_write_fill(&chan_disc, &ctx, 0, 12);
	grb_commit(&chan_disc, &ctx);
	for (i = 0; i < 3; i++)
		CHECK_EQ(put(&chan_disc, chan, 3, 12), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(put(&chan_disc, chan, 4, 13), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
	CHECK_EQ(grb_buf_iter_next(it, &r), 0);
	CHECK_U64(tag_of(&r), 1);
	CHECK_EQ(grb_buf_iter_next(it, &r), -EIO);
	CHECK_EQ(grb_buf_iter_next(it, &r), 0);
	CHECK_U64(tag_of(&r), 4);
	CHECK_U64(r.lost, 4);   /* the bad one and the three after it */
	total += r.lost;
	CHECK_EQ(grb_buf_iter_next(it, &r), -ENODATA);
	CHECK_U64(total, 4);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);

	/* The same through grb_buf_iter_read() (grb/output.h): the bad
	 * record is skipped, counted, and the copy goes on. */
	chan = create(&chan_disc, 8);
	b = grb_channel_buf(chan, 0);
	CHECK_EQ(put(&chan_disc, chan, 1, 10), 0);
	ctx = (struct grb_ctx)GRB_CTX_INIT(8, 4);
	lenrec_now = 11;
	CHECK_EQ(grb_reserve(&chan_disc, chan, &ctx), 0);
	grb_write(&chan_disc, &ctx, &bad, 4);
	grb_write_fill(&chan_disc, &ctx, 0, 12);
	grb_commit(&chan_disc, &ctx);
	CHECK_EQ(put(&chan_disc, chan, 3, 12), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(put(&chan_disc, chan, 4, 13), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
	{
		uint64_t got[8];
		size_t len, all = 0;

		while ((i = grb_buf_iter_read(it, (char *)got + all,
					      sizeof(got) - all, &len)) == 0 &&
		       len > 0)
			all += len;
		CHECK_EQ(i, -ENODATA);
		CHECK_U64(all, 16);
		CHECK_U64(got[0], 1);
		CHECK_U64(got[1], 4);
	}
	/* The two lost records went with record 4, which the caller never
	 * saw as a record: they are left for grb_buf_iter_lost(). */
	CHECK_U64(grb_buf_iter_lost(it), 2);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);

	/* The same through grb_chan_iter_read(). */
	chan = create(&chan_disc, 8);
	CHECK_EQ(put(&chan_disc, chan, 1, 10), 0);
	put_bad(chan, 11);
	CHECK_EQ(put(&chan_disc, chan, 3, 12), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(put(&chan_disc, chan, 4, 13), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	{
		struct grb_chan_iter_stats st;
		struct grb_chan_iter *ci;
		uint64_t got[8];
		size_t len, all = 0;

		CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
		while ((i = grb_chan_iter_read(ci, (char *)got + all,
					       sizeof(got) - all, &len)) == 0 &&
		       len > 0)
			all += len;
		CHECK_EQ(i, -ENODATA);
		CHECK_U64(all, 16);
		CHECK_U64(got[0], 1);
		CHECK_U64(got[1], 4);
		CHECK_EQ(grb_chan_iter_stats(ci, &st), 0);
		CHECK_U64(st.records, 2);
		CHECK_U64(st.undecodable, 1);
		CHECK_U64(st.lost, 0);
		CHECK_U64(grb_chan_iter_lost(ci), 2);
		grb_chan_iter_destroy(ci);
	}
	grb_channel_destroy(chan);

	/* Through the channel's merge: -EIO once, then the records after
	 * the skipped rest, and each counted where iter.h says. */
	chan = create(&chan_disc, 8);
	CHECK_EQ(put(&chan_disc, chan, 1, 10), 0);
	ctx = (struct grb_ctx)GRB_CTX_INIT(8, 4);
	lenrec_now = 11;
	CHECK_EQ(grb_reserve(&chan_disc, chan, &ctx), 0);
	grb_write(&chan_disc, &ctx, &bad, 4);
	grb_write_fill(&chan_disc, &ctx, 0, 12);
	grb_commit(&chan_disc, &ctx);
	CHECK_EQ(put(&chan_disc, chan, 3, 12), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(put(&chan_disc, chan, 4, 13), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	{
		struct grb_chan_iter_stats st;
		struct grb_chan_iter *ci;

		CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
		CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
		CHECK_U64(tag_of(&r), 1);
		CHECK_EQ(grb_chan_iter_next(ci, &r), -EIO);
		CHECK_EQ(grb_chan_iter_stats(ci, &st), 0);
		CHECK_U64(st.undecodable, 1);
		CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
		CHECK_U64(tag_of(&r), 4);
		CHECK_U64(r.lost, 2);   /* the bad one and the one after it */
		CHECK_EQ(grb_chan_iter_next(ci, &r), -ENODATA);
		CHECK_EQ(grb_chan_iter_stats(ci, &st), 0);
		CHECK_U64(st.records, 2);
		CHECK_U64(st.late, 0);
		CHECK_U64(st.lost, 2);
		CHECK_U64(st.undecodable, 1);
		CHECK_U64(grb_chan_iter_lost(ci), 0);
		grb_chan_iter_destroy(ci);
	}
	grb_channel_destroy(chan);
}

/* A record whose length word runs past any sub-buffer, at clock ts. */
static void put_bad(struct grb_channel *chan, uint64_t ts)
{
	struct grb_ctx ctx = GRB_CTX_INIT(8, 4);
	uint32_t bad = 0x7fff0000u;

	lenrec_now = ts;
	CHECK_EQ(grb_reserve(&chan_disc, chan, &ctx), 0);
	grb_write(&chan_disc, &ctx, &bad, 4);
	grb_write_fill(&chan_disc, &ctx, 0, 12);
	grb_commit(&chan_disc, &ctx);
}

/*
 * Discard mode, the bad record read live: "the rest of its sub-buffer is
 * skipped and its records counted as lost", the records committed into
 * that rest after the -EIO included; reading goes on with the next
 * sub-buffer.
 */
static void test_undecodable_live(void)
{
	struct grb_channel *chan = create(&chan_disc, 8);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_iter *it;
	struct grb_iter_record r;

	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
	CHECK_EQ(put(&chan_disc, chan, 1, 10), 0);
	put_bad(chan, 11);
	CHECK_EQ(grb_buf_iter_next(it, &r), 0);
	CHECK_U64(tag_of(&r), 1);
	CHECK(r.flags & GRB_ITER_LIVE);
	CHECK_EQ(grb_buf_iter_next(it, &r), -EIO);
	CHECK_EQ(put(&chan_disc, chan, 2, 12), 0);
	CHECK_EQ(put(&chan_disc, chan, 3, 13), 0);
	CHECK_EQ(grb_buf_iter_next(it, &r), -EAGAIN);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_iter_next(it, &r), -EAGAIN);
	CHECK_EQ(put(&chan_disc, chan, 4, 14), 0);
	CHECK_EQ(grb_buf_iter_next(it, &r), 0);
	CHECK_U64(tag_of(&r), 4);
	CHECK_U64(r.lost, 3);   /* the bad one and the two after it */
	CHECK_EQ(grb_buf_iter_next(it, &r), -EAGAIN);
	CHECK_U64(grb_buf_iter_lost(it), 0);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);
}

/*
 * Overwrite mode: sub-buffers overwritten before the iterator takes its
 * first one are a gap like any other, reported with the first record
 * after it, whether or not grb_buf_iter_lost() was asked first; and
 * nothing is reported where there is no gap.
 */
static void test_lost_first_gap(int ask_first)
{
	struct grb_channel *chan = create(&chan_ovw, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_iter *it;
	struct grb_iter_record r;
	struct grb_buf_stats st;
	uint64_t i, want, sum = 0, n = 0;
	int ret;

	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
	/* 8-byte records: 6 sub-buffers' worth in a ring of 4. */
	for (i = 0; i < 6 * (SB / 16); i++)
		CHECK_EQ(put(&chan_ovw, chan, i, 100 + i), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	grb_buf_get_stats(b, &st);
	CHECK(st.overwritten > 0);
	if (ask_first)
		CHECK_U64(grb_buf_iter_lost(it), st.overwritten);
	CHECK_EQ(grb_buf_iter_next(it, &r), 0);
	want = tag_of(&r);
	CHECK_U64(r.lost, st.overwritten);
	CHECK_U64(want, st.overwritten);
	sum += r.lost;
	n++;
	while ((ret = grb_buf_iter_next(it, &r)) == 0) {
		CHECK_U64(tag_of(&r), want + n);
		CHECK_U64(r.lost, 0);   /* contiguous: no gap */
		n++;
	}
	CHECK_EQ(ret, -EAGAIN);
	CHECK_U64(sum + grb_buf_iter_lost(it), st.overwritten);
	CHECK_U64(n + st.overwritten, 6 * (SB / 16));
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);

	/* The same through the merge: its statistics add up what the
	 * records reported (iter.h, grb_chan_iter_stats). */
	{
		struct grb_chan_iter_stats cst;
		struct grb_chan_iter *ci;

		chan = create(&chan_ovw, 4);
		b = grb_channel_buf(chan, 0);
		CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
		for (i = 0; i < 6 * (SB / 16); i++)
			CHECK_EQ(put(&chan_ovw, chan, i, 100 + i), 0);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		grb_buf_get_stats(b, &st);
		if (ask_first)
			CHECK_U64(grb_chan_iter_lost(ci), st.overwritten);
		sum = 0;
		n = 0;
		while ((ret = grb_chan_iter_next(ci, &r)) == 0) {
			CHECK_U64(r.lost, n == 0 ? st.overwritten : 0);
			sum += r.lost;
			n++;
		}
		CHECK_EQ(ret, -EAGAIN);
		CHECK_EQ(grb_chan_iter_stats(ci, &cst), 0);
		CHECK_U64(cst.records, n);
		CHECK_U64(cst.lost, sum);
		CHECK_U64(sum + grb_chan_iter_lost(ci), st.overwritten);
		grb_chan_iter_destroy(ci);
		grb_channel_destroy(chan);
	}
}

/*
 * Overwrite mode, the iterator created after writers pushed sub-buffers
 * out (a flight recorder read after the fact): those losses lie before
 * the first record it returns and go with it, and nothing is reported on
 * the records after it, which follow one another (iter.h, "Losses").
 * Each form, and the merge.
 */
static void test_lost_before_create(enum grb_iter_mode mode, int merged)
{
	struct grb_channel *chan = create(&chan_ovw, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_iter *it = NULL;
	struct grb_chan_iter *ci = NULL;
	struct grb_iter_record r;
	struct grb_buf_stats st;
	uint64_t i, first = 0, sum = 0, n = 0;
	int ret;

	for (i = 0; i < 6 * (SB / 16); i++)
		CHECK_EQ(put(&chan_ovw, chan, i, 100 + i), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	grb_buf_get_stats(b, &st);
	CHECK(st.overwritten > 0);
	if (merged)
		CHECK_EQ(grb_chan_iter_create(chan, mode, &ci), 0);
	else
		CHECK_EQ(grb_buf_iter_create(b, mode, &it), 0);
	for (;;) {
		ret = merged ? grb_chan_iter_next(ci, &r) :
			grb_buf_iter_next(it, &r);
		if (ret)
			break;
		if (n == 0) {
			first = tag_of(&r);
			CHECK_U64(r.lost, st.overwritten);
			CHECK_U64(first, st.overwritten);
		} else {
			CHECK_U64(tag_of(&r), first + n);
			CHECK_U64(r.lost, 0);   /* contiguous: no gap */
		}
		sum += r.lost;
		n++;
	}
	CHECK(ret == -EAGAIN || ret == -ENODATA);
	CHECK_U64(n + st.overwritten, 6 * (SB / 16));
	CHECK_U64(sum + (merged ? grb_chan_iter_lost(ci) :
			 grb_buf_iter_lost(it)), st.overwritten);
	if (merged)
		grb_chan_iter_destroy(ci);
	else
		grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);
}

static int stop_at_two(void *arg, const struct grb_iter_record *r)
{
	(void)r;
	return ++*(int *)arg == 2;
}

/* The documented refusals of create, stats, lost, consume and poll. */
static void test_contract(void)
{
	static const struct grb_config nodec = {
		GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 }, 0 };
	struct grb_chan_iter_stats st;
	struct grb_channel *chan, *raw;
	struct grb_chan_iter *ci;
	struct grb_buf_iter *it;
	uint64_t n;
	int calls;

	chan = create(&chan_disc, 4);
	raw = create(&nodec, 4);
	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0),
				     (enum grb_iter_mode)7, &it), -EINVAL);
	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0),
				     GRB_ITER_CONSUME, NULL), -EINVAL);
	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(raw, 0),
				     GRB_ITER_CONSUME, &it), -ENOTSUP);
	CHECK_EQ(grb_chan_iter_create(chan, (enum grb_iter_mode)7, &ci),
		 -EINVAL);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, NULL), -EINVAL);
	CHECK_EQ(grb_chan_iter_create(raw, GRB_ITER_CONSUME, &ci), -ENOTSUP);
	CHECK_EQ(grb_chan_iter_stats(NULL, &st), -EINVAL);
	CHECK_U64(grb_buf_iter_lost(NULL), 0);
	CHECK_U64(grb_chan_iter_lost(NULL), 0);
	CHECK_EQ(grb_chan_iter_consume(NULL, stop_at_two, &calls, &n), -EINVAL);
	CHECK_EQ(grb_chan_iter_poll(NULL, stop_at_two, &calls, 0, &n), -EINVAL);
	CHECK_EQ(grb_buf_iter_poll(NULL, stop_at_two, &calls, 0, &n), -EINVAL);

	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	CHECK_EQ(grb_chan_iter_stats(ci, NULL), -EINVAL);
	CHECK_EQ(grb_chan_iter_consume(ci, NULL, &calls, &n), -EINVAL);
	CHECK_EQ(grb_chan_iter_poll(ci, NULL, &calls, 0, &n), -EINVAL);
	/* Nothing yet: 0 and no call; then -ECANCELED at the record the
	 * callback stopped on, which counts as consumed. */
	calls = 0;
	n = 99;
	CHECK_EQ(grb_chan_iter_consume(ci, stop_at_two, &calls, &n), 0);
	CHECK_U64(n, 0);
	CHECK_EQ(grb_chan_iter_poll(ci, stop_at_two, &calls, 0, &n),
		 -ETIMEDOUT);
	for (uint64_t i = 0; i < 3; i++)
		CHECK_EQ(put(&chan_disc, chan, i, 10 + i), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_chan_iter_consume(ci, stop_at_two, &calls, &n),
		 -ECANCELED);
	CHECK_U64(n, 2);
	/* The third, then the end once finalized and drained. */
	calls = 0;
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_chan_iter_consume(ci, stop_at_two, &calls, &n),
		 -ENODATA);
	CHECK_U64(n, 1);
	CHECK_EQ(grb_chan_iter_poll(ci, stop_at_two, &calls, 0, &n),
		 -ENODATA);
	CHECK_EQ(grb_chan_iter_stats(ci, &st), 0);
	CHECK_U64(st.records, 3);
	CHECK_U64(st.lost, 0);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(raw);
	grb_channel_destroy(chan);
}

int main(void)
{
	struct grb_buf_iter *it;
	struct grb_chan_iter *ci;
	struct grb_iter_record r;

	CHECK_EQ(grb_buf_iter_create(NULL, GRB_ITER_CONSUME, &it), -EINVAL);
	CHECK_EQ(grb_buf_iter_next(NULL, &r), -EINVAL);
	CHECK_EQ(grb_chan_iter_create(NULL, GRB_ITER_CONSUME, &ci), -EINVAL);
	CHECK_EQ(grb_chan_iter_next(NULL, &r), -EINVAL);
	grb_buf_iter_destroy(NULL);
	grb_chan_iter_destroy(NULL);
	test_contract();
	test_buf_consume();
	test_lost(&chan_disc);
	test_lost(&chan_ovw);
	test_snapshot();
	test_merge();
	test_merge_clockless();
	test_undecodable();
	test_undecodable_live();
	test_lost_first_gap(0);
	test_lost_first_gap(1);
	test_lost_before_create(GRB_ITER_CONSUME, 0);
	test_lost_before_create(GRB_ITER_SNAPSHOT, 0);
	test_lost_before_create(GRB_ITER_CONSUME, 1);
	test_lost_before_create(GRB_ITER_SNAPSHOT, 1);
	printf("test_iter: passed\n");
	return 0;
}
