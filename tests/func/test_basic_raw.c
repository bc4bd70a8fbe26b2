/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_basic_raw.c - the basic client's raw sub-buffers in
 * all eight variants (tests/common/basic_rig.h), read through the engine
 * reader on grb_basic_channel() with the thread pinned so that every
 * record lands in one known buffer: sub-buffer headers, which records
 * carry a full timestamp and which only its low 32 bits, and that
 * consume rebuilds every timestamp exactly.
 *
 * Crossing a 2^32 ns boundary of CLOCK_MONOTONIC takes up to 4.3 s of
 * waiting, so that check only runs with GRB_TEST_TS_BOUNDARY=1 in the
 * environment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "basic_rig.h"
#include "check.h"
#include "grb/basic.h"
#include "grb/channel.h"
#include "grb/reader.h"

#define TS_HIGH(t)    ((uint64_t)(t) >> 32)

/* ------------------------------------------------------------------ */
/* Raw sub-buffers, through the engine reader of grb_basic_channel().  */

struct tsrec {
	uint64_t ts;          /* the reservation's timestamp */
	uint32_t seq;
	uint32_t extra;       /* filler bytes after the struct */
};

struct raw_stats {
	uint32_t next_seq;
	uint64_t full, compressed, subbufs;
	uint64_t crossings;          /* full: high bits changed mid sub-buffer */
	uint64_t compressed_after;   /* compressed, at or after `boundary` */
	uint64_t boundary;
};

/* A zero-copy record holding its own reservation timestamp. */
static void raw_write(struct grb_basic *b, uint32_t seq)
{
	struct grb_basic_wctx w;
	struct tsrec r;

	r.seq = seq;
	r.extra = seq % 11;   /* lengths vary: records start unaligned */
	CHECK_EQ(grb_basic_reserve(b, sizeof(r) + r.extra, &w), 0);
	r.ts = w.timestamp;
	memcpy(w.data, &r, sizeof(r));
	memset((char *)w.data + sizeof(r), 0xa5, r.extra);
	grb_basic_commit(&w);
}

/* Check one raw record against the previous one of its sub-buffer. */
static void raw_record(int v, const struct grb_record *rec,
		       const struct tsrec *r, uint64_t nrec, uint64_t prev,
		       struct raw_stats *st)
{
	CHECK_U64(r->seq, st->next_seq);
	st->next_seq++;
	CHECK_U64(rec->payload_len, sizeof(*r) + r->extra);
	CHECK(r->ts >= prev);
	if (rec->rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		CHECK_U64(rec->timestamp, r->ts);
		st->full++;
		if (nrec > 0 && TS_HIGH(prev) != TS_HIGH(r->ts))
			st->crossings++;
		return;
	}
	/* Compressed: only with compression, never first in a sub-buffer,
	 * and only when the high bits are the previous record's. */
	CHECK(v & V_COMPRESS);
	CHECK(nrec > 0);
	CHECK_U64(rec->timestamp, r->ts & UINT64_C(0xffffffff));
	CHECK_U64(TS_HIGH(prev), TS_HIGH(r->ts));
	st->compressed++;
	if (st->boundary && r->ts >= st->boundary)
		st->compressed_after++;
}

static void raw_subbuf(int v, struct grb_buf *buf, unsigned int h,
		       uint64_t pos, struct raw_stats *st)
{
	struct grb_basic_subbuf_header hd;
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	struct tsrec r;
	uint64_t nrec = 0, prev = 0, first = 0;
	size_t off;

	CHECK_EQ(grb_reader_get_subbuf(buf, pos), 0);
	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	CHECK_U64(sb.pos, pos);
	CHECK_U64(sb.seq, pos / PAGE);
	CHECK_EQ(grb_reader_read(buf, 0, &hd, sizeof(hd)), 0);
	CHECK_U64(hd.magic, GRB_BASIC_MAGIC);
	CHECK_EQ(hd.cpu, buf_cpu(v, h));
	CHECK_U64(hd.seq, sb.seq);
	CHECK_U64(hd.data_size, sb.data_size);
	CHECK_U64(hd.records, sb.records);
	CHECK_U64(hd.lost + hd.overwritten, 0);
	CHECK_U64(grb_reader_first_record(buf), HDR);
	for (off = HDR; off < sb.data_size; off = rec.next) {
		CHECK_EQ(grb_reader_record(buf, off, &rec), 0);
		CHECK(rec.payload_len >= sizeof(r));
		CHECK_EQ(grb_reader_read(buf, rec.payload_off, &r, sizeof(r)),
			 0);
		raw_record(v, &rec, &r, nrec, prev, st);
		if (nrec++ == 0)
			first = r.ts;
		prev = r.ts;
	}
	/* The records end exactly where the data does. */
	CHECK_U64(off, sb.data_size);
	CHECK_U64(nrec, sb.records);
	CHECK_U64(hd.ts_begin, first);
	CHECK(hd.ts_end >= prev);
	CHECK_EQ(grb_reader_put_subbuf(buf), 0);
	st->subbufs++;
}

/* Walk every closed sub-buffer of buffer h without consuming it, then
 * consume the records and check each rebuilt timestamp is exact. */
static void raw_check(int v, struct grb_basic *b, unsigned int h,
		      uint32_t n, struct raw_stats *st)
{
	struct grb_buf *buf = grb_channel_buf(grb_basic_channel(b), h);
	unsigned char rec[sizeof(struct tsrec) + 16];
	struct grb_basic_event ev;
	uint64_t c, p, pos;
	struct tsrec r;
	uint32_t seq;

	CHECK_EQ(grb_reader_snapshot(buf, &c, &p), 0);
	CHECK_U64(c, 0);
	for (pos = c; pos < p; pos += PAGE)
		raw_subbuf(v, buf, h, pos, st);
	CHECK_U64(st->next_seq, n);
	CHECK(st->full >= st->subbufs);
	for (seq = 0; seq < n; seq++) {
		CHECK_EQ(grb_basic_consume(b, h, &ev, rec, sizeof(rec)), 0);
		memcpy(&r, rec, sizeof(r));
		CHECK_U64(r.seq, seq);
		CHECK_U64(ev.len, sizeof(r) + r.extra);
		CHECK_U64(ev.timestamp, r.ts);
	}
	CHECK_EQ(grb_basic_consume(b, h, &ev, rec, sizeof(rec)), -EAGAIN);
	/* Consumed now: the reader can no longer pin it. */
	CHECK_EQ(grb_reader_get_subbuf(buf, c), -ESTALE);
}

#define RAW_N 600

static void test_raw(int v)
{
	struct grb_basic *b = make(v, PAGE, 8);
	unsigned int h = home(b, v);
	struct raw_stats st;
	uint32_t seq;

	memset(&st, 0, sizeof(st));
	for (seq = 0; seq < RAW_N; seq++)
		raw_write(b, seq);
	CHECK_EQ(grb_basic_flush(b), 0);
	raw_check(v, b, h, RAW_N, &st);
	CHECK(st.subbufs >= 2);
	if (v & V_COMPRESS)
		CHECK(st.compressed > 0);
	else
		CHECK_U64(st.compressed, 0);
	grb_basic_destroy(b);
}

/*
 * Write records every 100 us from 3 ms before to 3 ms after a multiple of
 * 2^32 ns of CLOCK_MONOTONIC: the high timestamp bits change in the
 * middle of a sub-buffer, so the first record after the change must carry
 * a full timestamp and the compressed ones after it must be rebuilt with
 * the new high bits.  Waits up to 4.3 s for the boundary.
 */
static void test_ts_boundary(int v)
{
	struct grb_basic *b = make(v, PAGE, 8);
	unsigned int h = home(b, v);
	const uint64_t margin = 3000000;
	struct timespec until, gap = { 0, 100000 };
	struct raw_stats st;
	uint64_t t = now_ns(), boundary = (TS_HIGH(t) + 1) << 32;
	uint32_t seq = 0;

	memset(&st, 0, sizeof(st));
	if (boundary - t < 2 * margin)
		boundary += UINT64_C(1) << 32;
	st.boundary = boundary;
	until.tv_sec = (time_t)((boundary - margin) / 1000000000u);
	until.tv_nsec = (long)((boundary - margin) % 1000000000u);
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL),
		 0);
	do {
		raw_write(b, seq++);
		nanosleep(&gap, NULL);
	} while (now_ns() < boundary + margin);
	CHECK_EQ(grb_basic_flush(b), 0);
	raw_check(v, b, h, seq, &st);
	CHECK(st.crossings > 0);
	CHECK(st.compressed_after > 0);
	printf("%-34s %u records across the 2^32 ns boundary at %llu: "
	       "%llu full, %llu compressed (%llu after)\n", variant_name(v),
	       seq, (unsigned long long)boundary,
	       (unsigned long long)st.full, (unsigned long long)st.compressed,
	       (unsigned long long)st.compressed_after);
	grb_basic_destroy(b);
}

int main(void)
{
	static void (*const tests[])(int) = { test_raw };

	run_pinned(tests, 1);
	if (getenv("GRB_TEST_TS_BOUNDARY")) {
		pin();
		test_ts_boundary(V_PER_CHANNEL | V_COMPRESS);
		unpin();
	} else {
		printf("2^32 ns timestamp boundary: skipped "
		       "(set GRB_TEST_TS_BOUNDARY=1 to wait for one)\n");
	}
	printf("test_basic_raw: all variants passed\n");
	return 0;
}
