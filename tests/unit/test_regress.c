/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_regress.c - deterministic reproductions of bugs found in
 * review, each of which failed before its fix:
 *  - a reservation whose slow path ran on a stale write position was
 *    refused with -EIO and counted as lost_wrap although the sub-buffer it
 *    wanted had since been delivered by a nested writer;
 *  - a zero-byte slot (no record header, empty payload) committed after its
 *    sub-buffer was delivered and delivered it a second time;
 *  - grb_reader_read() passed NULL to memcpy() for an empty copy;
 *  - the basic client kept a fully consumed sub-buffer until the next
 *    consume call, so in discard mode an idle reader held writers out of
 *    it;
 *  - a data_size whose slot size wraps to 0 was refused with -EINVAL and
 *    not counted, instead of -ENOSPC and lost_big;
 *  - a record with no header of exactly subbuf_size bytes was refused
 *    with -ENOSPC although it fits an empty sub-buffer;
 *  - a record that failed to decode made grb_basic_consume() return -EIO
 *    on every later call;
 *  - a basic channel read record by record at a low rate needed a flush
 *    after every write, which cost a whole sub-buffer each: a 512 KiB
 *    channel kept 8 of 101 records (discard mode now reads them live).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/grb.h"
#include "grb/iter.h"

static int arm;                 /* run the nested writer on the arm-th clock read */
static uint64_t clk;
static int nested_ret[3];
static const struct grb_config nest_cfg;
static struct grb_channel *nest_chan;

static int put(const struct grb_config *cfg, struct grb_channel *chan,
	       size_t len)
{
	struct grb_ctx ctx = GRB_CTX_INIT(len, 1);
	int ret = grb_reserve(cfg, chan, &ctx);

	if (ret == 0) {
		grb_write_fill(cfg, &ctx, 0x5a, len);
		grb_commit(cfg, &ctx);
	}
	return ret;
}

/*
 * The clock stands in for a signal handler: it runs between the slow
 * path's load of the write position and its check of the next sub-buffer.
 */
static uint64_t nesting_clock(void)
{
	if (arm && --arm == 0) {
		/* Close sub-buffer 0, fill and close 1, open 2. */
		nested_ret[0] = put(&nest_cfg, nest_chan, 200);
		nested_ret[1] = put(&nest_cfg, nest_chan, 3800);
		nested_ret[2] = put(&nest_cfg, nest_chan, 200);
	}
	return ++clk;
}

static const struct grb_config nest_cfg = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 64,
	{ .clock_read = nesting_clock }, 0,
};

static void test_stale_position(void)
{
	struct grb_channel_attr attr = { "stale", 4096, 4, NULL };
	struct grb_buf_stats st;
	char why[160];

	CHECK_EQ(grb_channel_create(&nest_cfg, &attr, &nest_chan), 0);
	CHECK_EQ(put(&nest_cfg, nest_chan, 4000), 0);
	arm = 2;                /* 1: fast path's clock, 2: slow path's */
	CHECK_EQ(put(&nest_cfg, nest_chan, 200), 0);
	CHECK_EQ(nested_ret[0], 0);
	CHECK_EQ(nested_ret[1], 0);
	CHECK_EQ(nested_ret[2], 0);
	grb_buf_get_stats(grb_channel_buf(nest_chan, 0), &st);
	CHECK_U64(st.lost_wrap, 0);
	CHECK_U64(st.written, 5);
	CHECK_EQ(grb_channel_finalize(nest_chan), 0);
	CHECK_EQ(grb_buf_validate(grb_channel_buf(nest_chan, 0), why,
				  sizeof(why)), 0);
	grb_channel_destroy(nest_chan);
}

static size_t hdr64(void)
{
	return 64;
}

static const struct grb_config bare_cfg = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0,
	{ .subbuf_header_size = hdr64 }, 0,
};

static void test_zero_slot(void)
{
	struct grb_channel_attr attr = { "zero", 4096, 4, NULL };
	struct grb_ctx z = GRB_CTX_INIT(0, 1);
	struct grb_reader_subbuf sb;
	struct grb_channel *chan;
	struct grb_buf *buf;
	struct grb_buf_stats st;
	char why[160];

	CHECK_EQ(grb_channel_create(&bare_cfg, &attr, &chan), 0);
	buf = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	CHECK_EQ(put(&bare_cfg, chan, 4000), 0);
	/* Refused in an open sub-buffer and at a boundary alike. */
	CHECK_EQ(grb_reserve(&bare_cfg, chan, &z), -EINVAL);
	CHECK_EQ(put(&bare_cfg, chan, 32), 0);          /* exact fill */
	CHECK_EQ(grb_reserve(&bare_cfg, chan, &z), -EINVAL);
	grb_buf_get_stats(buf, &st);
	CHECK_U64(st.written, 2);
	CHECK_U64(st.lost_full + st.lost_wrap + st.lost_big, 0);
	CHECK_EQ(grb_reader_get_next(buf), 0);
	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	CHECK_U64(sb.records, 2);
	CHECK_EQ(sb.data_size, 4096);
	/* An empty copy may name no destination. */
	CHECK_EQ(grb_reader_read(buf, 0, NULL, 0), 0);
	CHECK_EQ(grb_reader_put_next(buf), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_buf_validate(buf, why, sizeof(why)), 0);
	grb_channel_destroy(chan);
}

static void test_basic_idle_reader(void)
{
	struct grb_basic_attr attr = { "idle", 4096, 2, GRB_ALLOC_PER_CHANNEL,
				       GRB_MODE_DISCARD, 1 };
	struct grb_basic_event ev;
	struct grb_basic *b;
	char rec[16] = "0123456789abcde", dst[16];
	int first = 0, second = 0, i;

	CHECK_EQ(grb_basic_create(&attr, &b), 0);
	while (grb_basic_write(b, rec, sizeof(rec)) == 0)
		first++;
	CHECK(first > 2);
	CHECK_EQ(grb_basic_flush(b), 0);
	/* Consume exactly what was written, then stop calling. */
	for (i = 0; i < first; i++)
		CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), 0);
	while (grb_basic_write(b, rec, sizeof(rec)) == 0)
		second++;
	CHECK_EQ(second, first);
	grb_basic_destroy(b);
}

/* A client whose every record has an 8-byte header. */
static size_t hdr8(const struct grb_config *cfg, size_t offset, size_t *pre,
		   const struct grb_ctx *ctx)
{
	(void)cfg;
	(void)offset;
	(void)ctx;
	*pre = 0;
	return 8;
}

static const struct grb_config rec8_cfg = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0,
	{ .record_header_size = hdr8 }, 0,
};

static void test_wrapping_size(void)
{
	struct grb_channel_attr attr = { "wrap", 4096, 4, NULL };
	struct grb_ctx ctx;
	struct grb_channel *chan;
	struct grb_buf_stats st;

	CHECK_EQ(grb_channel_create(&rec8_cfg, &attr, &chan), 0);
	/* At a sub-buffer start: 8 + (SIZE_MAX - 7) wraps to 0. */
	ctx = (struct grb_ctx)GRB_CTX_INIT(SIZE_MAX - 7, 1);
	CHECK_EQ(grb_reserve(&rec8_cfg, chan, &ctx), -ENOSPC);
	CHECK_EQ(put(&rec8_cfg, chan, 100), 0);
	/* Inside an open sub-buffer, on the other branch of the slow path. */
	ctx = (struct grb_ctx)GRB_CTX_INIT(SIZE_MAX - 7, 1);
	CHECK_EQ(grb_reserve(&rec8_cfg, chan, &ctx), -ENOSPC);
	grb_buf_get_stats(grb_channel_buf(chan, 0), &st);
	CHECK_U64(st.lost_big, 2);
	CHECK_U64(st.written, 1);
	grb_channel_destroy(chan);
}

static const struct grb_config raw_cfg = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 }, 0,
};

static void test_exact_subbuf_record(void)
{
	struct grb_channel_attr attr = { "exact", 4096, 4, NULL };
	struct grb_channel *chan;
	struct grb_buf *buf;
	struct grb_reader_subbuf sb;
	struct grb_buf_stats st;

	CHECK_EQ(grb_channel_create(&raw_cfg, &attr, &chan), 0);
	buf = grb_channel_buf(chan, 0);
	CHECK_EQ(put(&raw_cfg, chan, 4096), 0);         /* at a boundary */
	CHECK_EQ(put(&raw_cfg, chan, 100), 0);
	CHECK_EQ(put(&raw_cfg, chan, 4096), 0);         /* closes the open one */
	CHECK_EQ(put(&raw_cfg, chan, 4097), -ENOSPC);
	grb_buf_get_stats(buf, &st);
	CHECK_U64(st.lost_big, 1);
	CHECK_U64(st.written, 3);
	CHECK_EQ(grb_reader_open(buf), 0);
	CHECK_EQ(grb_reader_get_next(buf), 0);
	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	CHECK_U64(sb.records, 1);
	CHECK_U64(sb.data_size, 4096);
	CHECK_EQ(grb_reader_put_next(buf), 0);
	CHECK_EQ(grb_reader_get_next(buf), 0);
	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	CHECK_U64(sb.data_size, 100);
	CHECK_EQ(grb_reader_put_next(buf), 0);
	CHECK_EQ(grb_reader_get_next(buf), 0);
	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	CHECK_U64(sb.data_size, 4096);
	CHECK_EQ(grb_reader_put_next(buf), 0);
	CHECK_EQ(grb_reader_release(buf), 0);
	grb_channel_destroy(chan);
}

/*
 * A basic record whose header a buggy writer overwrote with a length past
 * the sub-buffer: reported once with -EIO, the rest of its sub-buffer
 * counted as corrupt, and the next sub-buffer read as usual.
 */
static void test_basic_corrupt_record(void)
{
	struct grb_basic_attr attr = { "corrupt", 4096, 4, GRB_ALLOC_PER_CHANNEL,
				       GRB_MODE_DISCARD, 1 };
	struct grb_basic_wctx w;
	struct grb_basic_event ev;
	struct grb_basic_counts c;
	struct grb_basic *b;
	uint32_t v, bad = 0x7fffff00u;
	char dst[16];

	CHECK_EQ(grb_basic_create(&attr, &b), 0);
	v = 1;
	CHECK_EQ(grb_basic_write(b, &v, sizeof(v)), 0);
	CHECK_EQ(grb_basic_reserve(b, sizeof(v), &w), 0);
	/* The length word starts the record header, 12 bytes before the
	 * payload with a full timestamp (flag bit 31 set), 8 with a
	 * compressed one (grb/basic.h). */
	memcpy(&v, (char *)w.data - 12, sizeof(v));
	memcpy((char *)w.data - (v == (0x80000000u | sizeof(v)) ? 12 : 8),
	       &bad, sizeof(bad));
	v = 2;
	memcpy(w.data, &v, sizeof(v));
	grb_basic_commit(&w);
	v = 3;
	CHECK_EQ(grb_basic_write(b, &v, sizeof(v)), 0);
	CHECK_EQ(grb_basic_flush(b), 0);
	v = 4;
	CHECK_EQ(grb_basic_write(b, &v, sizeof(v)), 0);
	CHECK_EQ(grb_basic_flush(b), 0);

	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), 0);
	memcpy(&v, dst, sizeof(v));
	CHECK_EQ(v, 1);
	CHECK_EQ(grb_basic_peek(b, 0, &ev, dst, sizeof(dst)), -EIO);
	CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
	CHECK_U64(c.corrupt, 2);        /* the damaged record and 3 after it */
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), 0);
	memcpy(&v, dst, sizeof(v));
	CHECK_EQ(v, 4);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -EAGAIN);
	CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
	CHECK_U64(c.written, 4);
	CHECK_U64(c.consumed, 2);
	CHECK_U64(c.corrupt, 2);
	CHECK_U64(c.entries, 0);
	grb_basic_destroy(b);
}

static void test_basic_live(void)
{
	struct grb_basic_attr attr = { "live", 64 << 10, 8, GRB_ALLOC_PER_CHANNEL,
				       GRB_MODE_DISCARD, 1 };
	struct grb_basic_event ev;
	struct grb_basic_counts c;
	struct grb_basic *b;
	uint32_t i, v;

	CHECK_EQ(grb_basic_create(&attr, &b), 0);
	for (i = 0; i < 101; i++) {
		CHECK_EQ(grb_basic_write(b, &i, sizeof(i)), 0);
		/* No flush: the record is read from the open sub-buffer. */
		CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, sizeof(v)), 0);
		CHECK_EQ(v, i);
		CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, sizeof(v)), -EAGAIN);
	}
	CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
	CHECK_U64(c.written, 101);
	CHECK_U64(c.consumed, 101);
	CHECK_U64(c.overruns + c.lost + c.entries, 0);
	/* The sub-buffer read live is then delivered: nothing twice. */
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, sizeof(v)), -EAGAIN);
	CHECK_EQ(grb_basic_write(b, &i, sizeof(i)), 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, sizeof(v)), 0);
	CHECK_EQ(v, 101);
	grb_basic_destroy(b);
}

/* A basic channel read by the engine's merge instead of the client. */
static void test_basic_external_reader(void)
{
	struct grb_basic_attr attr = { "ext", 4096, 8, GRB_ALLOC_PER_CPU,
				       GRB_MODE_DISCARD, 1 };
	struct grb_chan_iter *ci;
	struct grb_iter_record r;
	struct grb_basic_counts c;
	struct grb_basic_event ev;
	struct grb_basic *b;
	uint64_t prev = 0;
	uint32_t i, v;

	CHECK_EQ(grb_basic_create(&attr, &b), 0);
	/* The client reads until the program takes over. */
	CHECK_EQ(grb_chan_iter_create(grb_basic_channel(b), GRB_ITER_CONSUME,
				      &ci), -EBUSY);
	CHECK_EQ(grb_basic_release_readers(NULL), -EINVAL);
	CHECK_EQ(grb_basic_release_readers(b), 0);
	CHECK_EQ(grb_basic_release_readers(b), -EALREADY);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, sizeof(v)), -EPERM);
	CHECK_EQ(grb_basic_peek(b, 0, &ev, &v, sizeof(v)), -EPERM);
	CHECK_EQ(grb_basic_reset(b), -EPERM);
	CHECK_EQ(grb_chan_iter_create(grb_basic_channel(b), GRB_ITER_CONSUME,
				      &ci), 0);
	for (i = 0; i < 300; i++)
		CHECK_EQ(grb_basic_write(b, &i, sizeof(i)), 0);
	CHECK_EQ(grb_basic_finalize(b), 0);
	for (i = 0; i < 300; i++) {
		CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
		CHECK_EQ(r.payload_len, sizeof(v));
		memcpy(&v, r.payload, sizeof(v));
		CHECK_EQ(v, i);         /* one thread: time order is write order */
		CHECK(r.timestamp >= prev);
		prev = r.timestamp;
	}
	CHECK_EQ(grb_chan_iter_next(ci, &r), -ENODATA);
	grb_chan_iter_destroy(ci);
	grb_basic_destroy(b);

	/* Released while a sub-buffer is held: what was not consumed from
	 * it is dropped, and no longer counted as an entry. */
	attr.alloc = GRB_ALLOC_PER_CHANNEL;
	CHECK_EQ(grb_basic_create(&attr, &b), 0);
	for (i = 0; i < 3; i++)
		CHECK_EQ(grb_basic_write(b, &i, sizeof(i)), 0);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, sizeof(v)), 0);
	CHECK_EQ(grb_basic_release_readers(b), 0);
	CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
	CHECK_U64(c.consumed, 1);
	CHECK_U64(c.dropped, 2);
	CHECK_U64(c.entries, 0);
	grb_basic_destroy(b);
}

/*
 * A shared basic channel starts with its readers released (basic.h): the
 * consumer in another process opens them, so this handle's consume, peek
 * and reset are -EPERM and release_readers is -EALREADY, while the
 * engine's reader opens the buffers and reads what was written.
 */
static void test_basic_shared_released(void)
{
	struct grb_basic_attr attr = { "shr", 4096, 4, GRB_ALLOC_PER_CHANNEL,
				       GRB_MODE_DISCARD, 0 };
	struct grb_reader_subbuf sb;
	struct grb_basic_event ev;
	struct grb_basic *b;
	struct grb_buf *buf;
	uint32_t i = 7, v;

	CHECK_EQ(grb_basic_create_shared(&attr, NULL, &b), 0);
	CHECK_EQ(grb_basic_write(b, &i, sizeof(i)), 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, sizeof(v)), -EPERM);
	CHECK_EQ(grb_basic_peek(b, 0, &ev, &v, sizeof(v)), -EPERM);
	CHECK_EQ(grb_basic_reset(b), -EPERM);
	CHECK_EQ(grb_basic_release_readers(b), -EALREADY);
	buf = grb_channel_buf(grb_basic_channel(b), 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_EQ(grb_reader_get_next(buf), 0);
	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	CHECK_U64(sb.records, 1);
	CHECK_EQ(grb_reader_put_next(buf), 0);
	grb_basic_destroy(b);
}

int main(void)
{
	test_stale_position();
	test_zero_slot();
	test_basic_idle_reader();
	test_wrapping_size();
	test_exact_subbuf_record();
	test_basic_corrupt_record();
	test_basic_live();
	test_basic_external_reader();
	test_basic_shared_released();
	printf("test_regress: passed\n");
	return 0;
}
