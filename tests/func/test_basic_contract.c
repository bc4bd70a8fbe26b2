/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_basic_contract.c - promises of grb/basic.h that
 * test_basic*.c, test_regress.c and test_errors_clients.c leave
 * unchecked:
 *  - the refusals counted in grb_basic_counts.lost beyond "full" and "too
 *    big": nesting deeper than the bound (-EBUSY, checked before a
 *    disabled channel's -EAGAIN) and a lap onto an uncommitted record
 *    (-EIO); grb_basic_reserve() refusing and counting as write does;
 *  - argument errors (-EINVAL) before the channel's state (-ESHUTDOWN);
 *  - overwrite mode with the reader holding a sub-buffer: what it holds is
 *    read whole, what writers pushed past is counted in overruns, exactly;
 *  - consume into a NULL destination: -ENOBUFS, the record stays;
 *  - discard mode read live: reset drops only what was not consumed, a
 *    damaged record gives -EIO once and its sub-buffer's rest is counted
 *    as corrupt, release_readers hands the live-read records to the
 *    engine's reader again and keeps the client's counts;
 *  - the record layout drawn in the header, byte by byte, and the
 *    sub-buffer header's running lost and overwritten counts;
 *  - recovery padding (length word 0x7fffffff, then its span) skipped by
 *    consume and by grb_basic_decode(), with the same timestamps, and
 *    -ENODATA when only padding is left;
 *  - overwrite mode made readable by grb_channel_tick();
 *  - a shared channel's client name is GRB_BASIC_CLIENT whatever sattr
 *    says, and grb_basic_config() is the configuration to attach with.
 * Every channel here is per channel (or read from the pinned CPU's
 * buffer), so the checks are deterministic; none depends on timing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/grb.h"

#define PAGE      4096
#define HDR       sizeof(struct grb_basic_subbuf_header)
#define FULL_TS   UINT32_C(0x80000000)
#define PAD_WORD  UINT32_C(0x7fffffff)
#define LOW_MASK  UINT64_C(0xffffffff)

static struct grb_basic *make(enum grb_alloc alloc, enum grb_mode mode,
			      int compress, size_t num_subbuf)
{
	struct grb_basic_attr attr = { "contract", PAGE, num_subbuf, alloc,
				       mode, compress };
	struct grb_basic *b = NULL;

	CHECK_EQ(grb_basic_create(&attr, &b), 0);
	return b;
}

static struct grb_basic_counts counts(struct grb_basic *b, unsigned int i)
{
	struct grb_basic_counts c;

	CHECK_EQ(grb_basic_get_counts(b, i, &c), 0);
	/* Quiescent: every record written is in exactly one of these. */
	CHECK_U64(c.written, c.entries + c.consumed + c.overruns + c.dropped +
		  c.corrupt);
	return c;
}

static void write_seq(struct grb_basic *b, uint32_t seq)
{
	CHECK_EQ(grb_basic_write(b, &seq, sizeof(seq)), 0);
}

static uint32_t read_seq(struct grb_basic *b, unsigned int i)
{
	struct grb_basic_event ev;
	uint32_t seq = 0;

	CHECK_EQ(grb_basic_consume(b, i, &ev, &seq, sizeof(seq)), 0);
	CHECK_U64(ev.len, sizeof(seq));
	return seq;
}

static struct grb_buf *buf0(struct grb_basic *b)
{
	return grb_channel_buf(grb_basic_channel(b), 0);
}

/*
 * More reservations open on one thread than GRB_MAX_NESTING: -EBUSY from
 * write and reserve, counted as lost, and reported before the -EAGAIN of
 * a disabled channel (grb_reserve(), whose errors these are).
 */
static void test_nesting(enum grb_mode mode)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, mode, 1, 4);
	struct grb_basic_wctx w[GRB_MAX_NESTING], extra;
	struct grb_basic_counts c;
	uint32_t i;

	for (i = 0; i < GRB_MAX_NESTING; i++)
		CHECK_EQ(grb_basic_reserve(b, sizeof(i), &w[i]), 0);
	CHECK_EQ(grb_basic_write(b, &i, sizeof(i)), -EBUSY);
	CHECK_EQ(grb_basic_reserve(b, sizeof(i), &extra), -EBUSY);
	CHECK_EQ(grb_basic_record_disable(b), 0);
	CHECK_EQ(grb_basic_write(b, &i, sizeof(i)), -EBUSY);
	c = counts(b, 0);
	CHECK_U64(c.lost, 3);
	CHECK_U64(c.written, 0);
	for (i = 0; i < GRB_MAX_NESTING; i++) {
		memcpy(w[i].data, &i, sizeof(i));
		grb_basic_commit(&w[i]);
	}
	/* With the nesting gone the disabled channel's own refusal shows,
	 * and it is no loss. */
	CHECK_EQ(grb_basic_write(b, &i, sizeof(i)), -EAGAIN);
	CHECK_EQ(grb_basic_record_enable(b), 0);
	CHECK_EQ(grb_basic_flush(b), 0);
	for (i = 0; i < GRB_MAX_NESTING; i++)
		CHECK_U64(read_seq(b, 0), i);
	c = counts(b, 0);
	CHECK_U64(c.written, GRB_MAX_NESTING);
	CHECK_U64(c.consumed, GRB_MAX_NESTING);
	CHECK_U64(c.lost, 3);
	CHECK_U64(c.entries, 0);
	grb_basic_destroy(b);
}

/*
 * Overwrite mode: a record reserved and not committed while writers go
 * round the whole buffer.  Writers cannot take its sub-buffer back: they
 * are refused with -EIO and each refusal is counted as lost.  Committing
 * it lets them go on.
 */
static void test_wrap(void)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE,
				   1, 4);
	struct grb_basic_event ev;
	struct grb_basic_counts c;
	struct grb_basic_wctx w;
	uint32_t seq, ok = 0, refused = 0, last = 0;
	int ret;

	CHECK_EQ(grb_basic_reserve(b, sizeof(seq), &w), 0);
	for (seq = 0; seq < 5000; seq++) {
		ret = grb_basic_write(b, &seq, sizeof(seq));
		if (ret == 0) {
			CHECK_U64(refused, 0);   /* nothing after a refusal */
			ok++;
			continue;
		}
		CHECK_EQ(ret, -EIO);
		refused++;
	}
	CHECK(ok > 0 && refused > 0);
	CHECK_EQ(grb_basic_reserve(b, sizeof(seq), &(struct grb_basic_wctx){
		0 }), -EIO);
	refused++;
	c = counts(b, 0);
	CHECK_U64(c.lost, refused);
	CHECK_U64(c.written, ok);
	seq = UINT32_MAX;
	memcpy(w.data, &seq, sizeof(seq));
	grb_basic_commit(&w);
	write_seq(b, 5000);
	CHECK_EQ(grb_basic_finalize(b), 0);
	/* The newest records, in order, ending with the one written last. */
	while ((ret = grb_basic_consume(b, 0, &ev, &seq, sizeof(seq))) == 0)
		last = seq;
	CHECK_EQ(ret, -ENODATA);
	CHECK_U64(last, 5000);
	c = counts(b, 0);
	CHECK_U64(c.written, ok + 2);
	CHECK_U64(c.lost, refused);
	CHECK_U64(c.entries, 0);
	CHECK(c.overruns > 0);
	grb_basic_destroy(b);
}

/* Discard mode: reserve refuses a full buffer as write does (-ENOBUFS,
 * lost), and an argument error comes before the channel's state. */
static void test_reserve_full_and_einval(void)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD,
				   1, 4);
	static const char big[100];
	struct grb_basic_wctx w;
	struct grb_basic_counts c;
	uint32_t n = 0;
	int ret;

	while ((ret = grb_basic_reserve(b, sizeof(big), &w)) == 0) {
		memset(w.data, 0x5a, 100);
		grb_basic_commit(&w);
		n++;
	}
	CHECK_EQ(ret, -ENOBUFS);
	CHECK_EQ(grb_basic_write(b, big, sizeof(big)), -ENOBUFS);
	c = counts(b, 0);
	CHECK_U64(c.written, n);
	CHECK_U64(c.lost, 2);
	CHECK_EQ(grb_basic_finalize(b), 0);
	CHECK_EQ(grb_basic_write(b, NULL, 1), -EINVAL);
	CHECK_EQ(grb_basic_write(b, "x", (size_t)GRB_BASIC_MAX_LEN + 1),
		 -EINVAL);
	CHECK_EQ(grb_basic_reserve(b, (size_t)GRB_BASIC_MAX_LEN + 1, &w),
		 -EINVAL);
	CHECK_EQ(grb_basic_reserve(b, 1, NULL), -EINVAL);
	CHECK_EQ(grb_basic_write(b, "x", 1), -ESHUTDOWN);
	CHECK_U64(counts(b, 0).lost, 2);
	grb_basic_destroy(b);
}

/*
 * Overwrite mode, the reader holding the first sub-buffer while writers
 * lap the buffer many times: the held sub-buffer is read whole, then the
 * newest records; every record skipped is counted in overruns, exactly.
 */
static void test_overwrite_held(void)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE,
				   1, 4);
	struct grb_basic_counts c;
	struct grb_basic_event ev;
	uint32_t seq, got, expect = 1, gaps = 0, skipped = 0, n = 1;
	int ret;

	for (seq = 0; seq < 200; seq++)
		write_seq(b, seq);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_U64(read_seq(b, 0), 0);
	for (; seq < 5000; seq++)
		write_seq(b, seq);
	CHECK_EQ(grb_basic_flush(b), 0);
	while ((ret = grb_basic_consume(b, 0, &ev, &got, sizeof(got))) == 0) {
		CHECK(got >= expect);
		if (got != expect) {
			/* The held sub-buffer (records 0-199 fit in one
			 * page) is read before anything is skipped. */
			CHECK(expect >= 200);
			gaps++;
			skipped += got - expect;
		}
		expect = got + 1;
		n++;
	}
	CHECK_EQ(ret, -EAGAIN);
	CHECK_U64(expect, 5000);
	CHECK_EQ(gaps, 1);
	c = counts(b, 0);
	CHECK_U64(c.written, 5000);
	CHECK_U64(c.consumed, n);
	CHECK_U64(c.overruns, skipped);
	CHECK_U64(c.entries, 0);
	CHECK_U64(c.lost, 0);
	grb_basic_destroy(b);
}

/* Discard mode, records consumed live: a reset drops only the others. */
static void test_live_reset(void)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD,
				   1, 4);
	struct grb_basic_event ev;
	struct grb_basic_counts c;
	uint32_t seq;

	for (seq = 0; seq < 5; seq++)
		write_seq(b, seq);
	CHECK_U64(read_seq(b, 0), 0);
	/* A NULL destination for a non-empty record is too small, however
	 * large @cap says it is: the record stays. */
	CHECK_EQ(grb_basic_consume(b, 0, &ev, NULL, 64), -ENOBUFS);
	CHECK_U64(ev.len, sizeof(seq));
	CHECK_U64(read_seq(b, 0), 1);
	CHECK_EQ(grb_basic_reset(b), 0);
	c = counts(b, 0);
	CHECK_U64(c.written, 5);
	CHECK_U64(c.consumed, 2);
	CHECK_U64(c.dropped, 3);
	CHECK_U64(c.entries, 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, NULL, 0), -EAGAIN);
	write_seq(b, 9);
	CHECK_U64(read_seq(b, 0), 9);
	c = counts(b, 0);
	CHECK_U64(c.consumed, 3);
	CHECK_U64(c.dropped, 3);
	grb_basic_destroy(b);
}

/* Reserve a record and make its length word run past any sub-buffer. */
static void write_damaged(struct grb_basic *b, uint32_t seq)
{
	struct grb_basic_wctx w;
	uint32_t word, bad = 0x7fffff00u;

	CHECK_EQ(grb_basic_reserve(b, sizeof(seq), &w), 0);
	memcpy(&word, (char *)w.data - 12, sizeof(word));
	memcpy((char *)w.data - (word == (FULL_TS | sizeof(seq)) ? 12 : 8),
	       &bad, sizeof(bad));
	memcpy(w.data, &seq, sizeof(seq));
	grb_basic_commit(&w);
}

/*
 * A record that does not decode: -EIO once, the rest of its sub-buffer
 * counted as corrupt, and reading goes on with the next sub-buffer.  In
 * discard mode read live (what is committed of the rest is counted at
 * the -EIO, what is committed after it once the sub-buffer is
 * delivered), and in overwrite mode from a closed sub-buffer.
 */
static void test_corrupt(enum grb_mode mode)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, mode, 1, 4);
	struct grb_basic_event ev;
	struct grb_basic_counts c;
	char dst[16];

	write_seq(b, 1);
	if (mode == GRB_MODE_OVERWRITE)
		CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_U64(read_seq(b, 0), 1);
	write_damaged(b, 2);
	write_seq(b, 3);
	if (mode == GRB_MODE_OVERWRITE)
		CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -EIO);
	/* Counted at the -EIO (basic.h), not when the sub-buffer is
	 * delivered. */
	c = counts(b, 0);
	CHECK_U64(c.corrupt, 2);
	CHECK_U64(c.entries, 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -EAGAIN);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -EAGAIN);
	c = counts(b, 0);
	CHECK_U64(c.written, 3);
	CHECK_U64(c.consumed, 1);
	CHECK_U64(c.corrupt, 2);
	CHECK_U64(c.entries, 0);
	write_seq(b, 4);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_U64(read_seq(b, 0), 4);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -EAGAIN);
	c = counts(b, 0);
	CHECK_U64(c.consumed, 2);
	CHECK_U64(c.corrupt, 2);
	grb_basic_destroy(b);
}

/*
 * Discard mode, a record damaged in the open sub-buffer: a record
 * committed after the -EIO into the rest of that sub-buffer is skipped
 * and counted as corrupt too, when the sub-buffer is delivered; and a
 * reset before that counts the rest as corrupt, not dropped.
 */
static void test_corrupt_live_rest(void)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD,
				   1, 4);
	struct grb_basic_event ev;
	struct grb_basic_counts c;
	char dst[16];

	write_seq(b, 1);
	CHECK_U64(read_seq(b, 0), 1);
	write_damaged(b, 2);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -EIO);
	write_seq(b, 3);
	c = counts(b, 0);
	CHECK_U64(c.corrupt, 1);
	CHECK_U64(c.entries, 1);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -EAGAIN);
	c = counts(b, 0);
	CHECK_U64(c.corrupt, 2);
	CHECK_U64(c.entries, 0);
	CHECK_U64(c.dropped, 0);

	/* The same, reset before the sub-buffer is delivered. */
	write_damaged(b, 4);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -EIO);
	write_seq(b, 5);
	CHECK_EQ(grb_basic_reset(b), 0);
	c = counts(b, 0);
	CHECK_U64(c.written, 5);
	CHECK_U64(c.consumed, 1);
	CHECK_U64(c.corrupt, 4);
	CHECK_U64(c.dropped, 0);
	CHECK_U64(c.entries, 0);
	write_seq(b, 6);
	CHECK_U64(read_seq(b, 0), 6);
	grb_basic_destroy(b);
}

/*
 * Discard mode: records consumed live are not consumed in the engine, so
 * after grb_basic_release_readers() the engine's reader returns them
 * again; the client's counts stay as they were (nothing was held, so
 * nothing is dropped).
 */
static void test_release_live(void)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD,
				   1, 4);
	struct grb_reader_subbuf sb;
	struct grb_buf_stats st;
	struct grb_basic_counts c;
	struct grb_buf *buf = buf0(b);
	uint32_t seq;

	for (seq = 0; seq < 3; seq++)
		write_seq(b, seq);
	CHECK_U64(read_seq(b, 0), 0);
	CHECK_EQ(grb_basic_release_readers(b), 0);
	c = counts(b, 0);
	CHECK_U64(c.consumed, 1);
	CHECK_U64(c.dropped, 0);
	CHECK_U64(c.entries, 2);
	CHECK_EQ(grb_reader_open(buf), 0);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_EQ(grb_reader_get_next(buf), 0);
	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	CHECK_U64(sb.records, 3);
	CHECK_EQ(grb_reader_put_next(buf), 0);
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	CHECK_U64(st.read, 3);
	c = counts(b, 0);
	CHECK_U64(c.consumed, 1);
	CHECK_U64(c.dropped, 0);
	grb_basic_destroy(b);
}

/* Hold the next closed sub-buffer through the client (peek), and return
 * its bytes. */
static const unsigned char *held(struct grb_basic *b, size_t *size)
{
	struct grb_reader_subbuf sb;
	struct grb_basic_event ev;
	int ret = grb_basic_peek(b, 0, &ev, NULL, 0);

	CHECK(ret == 0 || ret == -ENOBUFS);
	CHECK_EQ(grb_reader_held(buf0(b), &sb), 0);
	*size = sb.data_size;
	return (const unsigned char *)sb.data;
}

static uint32_t u32_at(const unsigned char *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint64_t u64_at(const unsigned char *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/*
 * The layout in grb/basic.h: a 64-byte header, then records aligned on 4
 * bytes, each a length word (bit 31: full timestamp), the timestamp (u64
 * when full, its low u32 otherwise; always full without compression) and
 * the payload.
 */
static void test_layout(int compress)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE,
				   compress, 4);
	const unsigned char *p;
	struct grb_basic_wctx w1, w2;
	size_t size, off2;

	CHECK_U64(HDR, 64);
	CHECK_EQ(grb_basic_reserve(b, 5, &w1), 0);
	memcpy(w1.data, "hello", 5);
	grb_basic_commit(&w1);
	CHECK_EQ(grb_basic_reserve(b, 3, &w2), 0);
	memcpy(w2.data, "abc", 3);
	grb_basic_commit(&w2);
	CHECK_EQ(grb_basic_flush(b), 0);
	p = held(b, &size);
	CHECK_U64(u32_at(p, 0), GRB_BASIC_MAGIC);
	CHECK_U64(u32_at(p, HDR), FULL_TS | 5);
	CHECK_U64(u64_at(p, HDR + 4), w1.timestamp);
	CHECK(memcmp(p + HDR + 12, "hello", 5) == 0);
	CHECK(p + HDR + 12 == (const unsigned char *)w1.data);
	off2 = HDR + 12 + 8;        /* 5 payload bytes, aligned on 4 */
	if (compress && (w1.timestamp >> 32) == (w2.timestamp >> 32)) {
		CHECK_U64(u32_at(p, off2), 3);
		CHECK_U64(u32_at(p, off2 + 4), w2.timestamp & LOW_MASK);
		CHECK(memcmp(p + off2 + 8, "abc", 3) == 0);
		CHECK_U64(size, off2 + 8 + 3);
	} else {
		CHECK_U64(u32_at(p, off2), FULL_TS | 3);
		CHECK_U64(u64_at(p, off2 + 4), w2.timestamp);
		CHECK(memcmp(p + off2 + 12, "abc", 3) == 0);
		CHECK_U64(size, off2 + 12 + 3);
	}
	grb_basic_destroy(b);
}

/*
 * The sub-buffer header's lost and overwritten: the buffer's running
 * counts when it was delivered.
 */
static void test_header_counts(enum grb_mode mode)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, mode, 1, 4);
	struct grb_basic_subbuf_header h;
	struct grb_basic_event ev;
	struct grb_basic_counts c;
	const unsigned char *p;
	uint32_t seq;
	size_t size;
	int ret;

	for (seq = 0; seq < 3000; seq++) {
		ret = grb_basic_write(b, &seq, sizeof(seq));
		CHECK(ret == 0 || (mode == GRB_MODE_DISCARD &&
				   ret == -ENOBUFS));
	}
	CHECK_EQ(grb_basic_flush(b), 0);
	while (grb_basic_consume(b, 0, &ev, &seq, sizeof(seq)) == 0)
		;
	c = counts(b, 0);
	CHECK(c.lost + c.overruns > 0);
	write_seq(b, 7);
	CHECK_EQ(grb_basic_flush(b), 0);
	p = held(b, &size);
	memcpy(&h, p, sizeof(h));
	CHECK_U64(h.magic, GRB_BASIC_MAGIC);
	CHECK_EQ(h.cpu, -1);
	CHECK_U64(h.records, 1);
	CHECK_U64(h.data_size, size);
	CHECK_U64(h.lost, c.lost);
	CHECK_U64(h.overwritten, c.overruns);
	CHECK_U64(read_seq(b, 0), 7);
	grb_basic_destroy(b);
}

/*
 * Recovery padding (grb/basic.h): the length word 0x7fffffff, then the
 * span to the next record.  Made here by rewriting a reserved record's
 * header, as recovery would over a dead writer's record.  The padding
 * is the first record of its sub-buffer, so the compressed timestamp
 * after it is against the header's ts_begin, which is moved 10 x 2^32 ns
 * later to tell it from any other timestamp.  Consume and
 * grb_basic_decode() read the same record with the same timestamp.
 */
#define TS_SHIFT (UINT64_C(10) << 32)

static void pad_record(struct grb_basic_wctx *w, size_t len, int first)
{
	unsigned char *at = (unsigned char *)w->data - 12;
	uint32_t pad[2] = { PAD_WORD, (uint32_t)(12 + len) };
	uint64_t begin;

	CHECK_U64(u32_at(at, 0), FULL_TS | len);
	memcpy(at, pad, sizeof(pad));
	if (first) {
		/* The sub-buffer header sits right before its first record. */
		at -= HDR;
		CHECK_U64(u32_at(at, 0), GRB_BASIC_MAGIC);
		begin = u64_at(at, offsetof(struct grb_basic_subbuf_header,
					    ts_begin));
		CHECK_U64(begin, w->timestamp);
		begin += TS_SHIFT;
		memcpy(at + offsetof(struct grb_basic_subbuf_header, ts_begin),
		       &begin, sizeof(begin));
	}
}

static void test_padding(void)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD,
				   1, 4);
	struct grb_basic_wctx w, wq;
	struct grb_basic_event ev, dev;
	const unsigned char *p;
	size_t size, poff, next;
	uint32_t seq, word;
	uint64_t expect;

	/* A first sub-buffer read to its end: the reader has a previous
	 * timestamp from it. */
	write_seq(b, 1);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_U64(read_seq(b, 0), 1);
	/* Padding first in the next sub-buffer, then a compressed record. */
	CHECK_EQ(grb_basic_reserve(b, 8, &w), 0);
	pad_record(&w, 8, 1);
	grb_basic_commit(&w);
	seq = 2;
	CHECK_EQ(grb_basic_reserve(b, sizeof(seq), &wq), 0);
	memcpy(wq.data, &seq, sizeof(seq));
	memcpy(&word, (char *)wq.data - 8, sizeof(word));
	grb_basic_commit(&wq);
	CHECK_EQ(grb_basic_flush(b), 0);
	expect = word == sizeof(seq) ? wq.timestamp + TS_SHIFT : wq.timestamp;

	p = held(b, &size);
	CHECK_EQ(grb_basic_decode(p, size, HDR, 0, &dev, &poff, &next), 0);
	CHECK_U64(dev.len, sizeof(seq));
	CHECK_U64(u32_at(p, poff), 2);
	CHECK_U64(next, size);
	CHECK_U64(dev.timestamp, expect);
	/* Nothing but padding from there on. */
	CHECK_EQ(grb_basic_decode(p, HDR + 20, HDR, 0, &dev, NULL, &next),
		 -ENODATA);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, &seq, sizeof(seq)), 0);
	CHECK_U64(seq, 2);
	CHECK_U64(ev.timestamp, expect);

	/* Padding in the middle of a sub-buffer, then the end: skipped. */
	write_seq(b, 3);
	CHECK_EQ(grb_basic_reserve(b, 8, &w), 0);
	memcpy(&word, (char *)w.data - 8, sizeof(word));
	if (word == 8) {
		/* Compressed: an 8-byte record header becomes the padding. */
		uint32_t pad[2] = { PAD_WORD, 16 };

		memcpy((char *)w.data - 8, pad, sizeof(pad));
	} else {
		pad_record(&w, 8, 0);
	}
	grb_basic_commit(&w);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_U64(read_seq(b, 0), 3);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, NULL, 0), -EAGAIN);
	CHECK_EQ(grb_basic_finalize(b), 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, NULL, 0), -ENODATA);
	grb_basic_destroy(b);
}

/* Overwrite mode: grb_channel_tick() closes a sub-buffer that held data
 * at the previous tick, which makes its records readable. */
static void test_tick(void)
{
	struct grb_basic *b = make(GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE,
				   1, 4);
	struct grb_basic_event ev;

	write_seq(b, 5);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, NULL, 0), -EAGAIN);
	CHECK_EQ(grb_channel_tick(grb_basic_channel(b), GRB_TICK_FLUSH), 0);
	CHECK_EQ(grb_channel_tick(grb_basic_channel(b), GRB_TICK_FLUSH), 0);
	CHECK_U64(read_seq(b, 0), 5);
	/* And flush with nothing open is no error. */
	CHECK_EQ(grb_basic_flush(b), 0);
	grb_basic_destroy(b);
}

/*
 * A shared channel: the client name in sattr is ignored (it is
 * GRB_BASIC_CLIENT), and grb_basic_config() is what another process
 * attaches with.
 */
static void test_shared(enum grb_alloc alloc, enum grb_mode mode)
{
	struct grb_shm_attr sa = { "not-basic", NULL, -1 };
	struct grb_basic_attr attr = { "shared", PAGE, 4, alloc, mode, 1 };
	const struct grb_config *cfg = grb_basic_config(alloc, mode, 1);
	struct grb_channel *rd = NULL;
	struct grb_reader_subbuf sb;
	struct grb_basic *b = NULL;
	struct grb_basic_event ev;
	unsigned int i, n, hit = 0;
	size_t next;
	int fds[GRB_SHM_MAX_BUFS];
	uint32_t v = 42;

	CHECK(cfg != NULL);
	CHECK(grb_basic_config(alloc, mode, 1) == cfg);
	CHECK_EQ(grb_basic_create_shared(NULL, &sa, &b), -EINVAL);
	CHECK_EQ(grb_basic_create_shared(&attr, &sa, NULL), -EINVAL);
	CHECK_EQ(grb_basic_create_shared(&attr, &sa, &b), 0);
	n = grb_basic_nr_bufs(b);
	CHECK(n >= 1 && n <= GRB_SHM_MAX_BUFS);
	for (i = 0; i < n; i++)
		CHECK((fds[i] = grb_channel_shm_fd(grb_basic_channel(b), i)) >= 0);
	CHECK_EQ(grb_channel_attach(cfg, "not-basic", fds, n,
				    GRB_ATTACH_READER, &rd), -EPROTOTYPE);
	CHECK_EQ(grb_channel_attach(cfg, GRB_BASIC_CLIENT, fds, n,
				    GRB_ATTACH_READER, &rd), 0);
	CHECK_EQ(grb_basic_write(b, &v, sizeof(v)), 0);
	CHECK_EQ(grb_basic_finalize(b), 0);
	for (i = 0; i < n; i++) {
		struct grb_buf *buf = grb_channel_buf(rd, i);

		CHECK_EQ(grb_reader_open(buf), 0);
		if (grb_reader_get_next(buf) != 0)
			continue;
		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		CHECK_EQ(grb_basic_decode(sb.data, sb.data_size, HDR, 0, &ev,
					  NULL, &next), 0);
		CHECK_U64(ev.len, sizeof(v));
		CHECK_EQ(ev.cpu, alloc == GRB_ALLOC_PER_CHANNEL ? -1 : (int)i);
		CHECK_EQ(grb_reader_put_next(buf), 0);
		hit++;
	}
	CHECK_EQ(hit, 1);
	grb_channel_destroy(rd);
	grb_basic_destroy(b);
}

int main(void)
{
	cpu_set_t orig, one;
	int cpu;

	test_nesting(GRB_MODE_OVERWRITE);
	test_nesting(GRB_MODE_DISCARD);
	test_wrap();
	test_reserve_full_and_einval();
	test_overwrite_held();
	test_live_reset();
	test_corrupt(GRB_MODE_DISCARD);
	test_corrupt(GRB_MODE_OVERWRITE);
	test_corrupt_live_rest();
	test_release_live();
	test_layout(0);
	test_layout(1);
	test_header_counts(GRB_MODE_DISCARD);
	test_header_counts(GRB_MODE_OVERWRITE);
	test_padding();
	test_tick();
	test_shared(GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD);
	/* Per CPU: the one record is in the writer's CPU's buffer. */
	CHECK_EQ(sched_getaffinity(0, sizeof(orig), &orig), 0);
	cpu = sched_getcpu();
	CHECK(cpu >= 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	test_shared(GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE);
	CHECK_EQ(sched_setaffinity(0, sizeof(orig), &orig), 0);
	printf("test_basic_contract: passed\n");
	return 0;
}
