/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_errors_reserve.c - every errno a writer can get from
 * the write path and the flushes (grb/writer.h, grb/channel.h), each
 * reached by a real call, and after each refusal a check that what was
 * written before it is still read back, intact and in order, and that
 * the refusal was counted as the loss it is (or as none): -ESHUTDOWN
 * after finalize, -EAGAIN while records are disabled, -ENOSPC for a
 * record larger than a sub-buffer, -ENOBUFS when the buffer is full,
 * -EIO when a lap meets an uncommitted record, -EBUSY beyond the nesting
 * bound and from grb_try_discard_reserve(), a data size near SIZE_MAX,
 * and the flushes' -ENODATA and -EINVAL.
 *
 * Most cases use the "raw" clients of tests/common/tagrec.h (a record is
 * exactly its payload, whose first 8 bytes are a tag); a client with a
 * sub-buffer header and one with a compressing clock are below.  The
 * reader's errors are test_errors.c's.
 */
#include <string.h>

#include "check.h"
#include "tagrec.h"

/* A client with a 64-byte sub-buffer header and nothing else. */
#define HDR 64
#define HDR_MAGIC 0x68647221u

static size_t hdr_size(void)
{
	return HDR;
}

static void hdr_begin(struct grb_buf *buf, void *header,
		      const struct grb_subbuf_info *info)
{
	uint32_t magic = HDR_MAGIC;

	(void)buf;
	(void)info;
	memcpy(header, &magic, sizeof(magic));
}

static const struct grb_config hdr = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0,
	{ .subbuf_header_size = hdr_size, .buffer_begin = hdr_begin }, 0,
};

/*
 * A 16-bit compressing client whose clock starts far above 2^16, as real
 * clocks do, and moves by one per read: consecutive records compress.
 */
static uint64_t clock_now = UINT64_C(1) << 40;

static uint64_t clock_step(void)
{
	return ++clock_now;
}

static const struct grb_config tsc = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 16,
	{ .clock_read = clock_step }, 0,
};

/* -ESHUTDOWN after finalize; what was written is still read. */
static void test_shutdown(void)
{
	static const uint64_t want[] = { 1, 2, 3, 4, 5 };
	struct grb_channel *chan = create(&raw, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct tags t = { { 0 }, 0, 0 };
	uint64_t tag;
	int i;

	for (tag = 1; tag <= 5; tag++)
		CHECK_EQ(put(&raw, chan, tag, 8), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	/* Both the fast path (open sub-buffer) and the slow path refuse. */
	for (i = 0; i < 10; i++)
		CHECK_EQ(put(&raw, chan, 100, 8), -ESHUTDOWN);
	CHECK_EQ(put(&raw, chan, 100, SB * 2), -ESHUTDOWN);
	CHECK_EQ(grb_channel_finalize(chan), -EALREADY);
	/* A refusal the client asked for is not a loss. */
	expect_lost(b, 0, 0, 0, 0);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(drain(b, 0, 8, &t), -ENODATA);
	expect_tags(&t, want, 5);
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(chan);
}

/*
 * Open @n reservations on this thread and commit them; the refusals
 * before must have left the nesting depth as they found it.
 */
static void check_nesting_free(const struct grb_config *cfg,
			       struct grb_channel *chan, uint64_t tag0,
			       unsigned int n)
{
	struct grb_ctx ctx[GRB_MAX_NESTING];
	uint64_t tag;
	unsigned int i;

	for (i = 0; i < n; i++) {
		ctx[i] = (struct grb_ctx)GRB_CTX_INIT(8, 1);
		CHECK_EQ(grb_reserve(cfg, chan, &ctx[i]), 0);
		tag = tag0 + i;
		grb_write(cfg, &ctx[i], &tag, sizeof(tag));
	}
	for (i = 0; i < n; i++)
		grb_commit(cfg, &ctx[i]);
}

/* -EAGAIN while records are disabled, per channel and per buffer. */
static void test_disabled(void)
{
	static const uint64_t want[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct grb_channel *chan = create(&raw, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct tags t = { { 0 }, 0, 0 };
	int i;

	CHECK_EQ(put(&raw, chan, 1, 8), 0);
	CHECK_EQ(put(&raw, chan, 2, 8), 0);
	CHECK_EQ(grb_channel_record_disable(chan), 0);
	for (i = 0; i < 10; i++)
		CHECK_EQ(put(&raw, chan, 100, 8), -EAGAIN);
	CHECK_EQ(grb_channel_record_enable(chan), 0);
	CHECK_EQ(put(&raw, chan, 3, 8), 0);
	CHECK_EQ(grb_buf_record_disable(b), 0);
	/* Also on the slow path: at a sub-buffer boundary. */
	CHECK_EQ(put(&raw, chan, 100, 8), -EAGAIN);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(put(&raw, chan, 100, 8), -EAGAIN);
	CHECK_EQ(grb_buf_record_enable(b), 0);
	CHECK_EQ(put(&raw, chan, 4, 8), 0);
	CHECK_EQ(put(&raw, chan, 5, 8), 0);
	/* Disabling twice needs one enable: it is a state, not a count. */
	CHECK_EQ(grb_channel_record_disable(chan), 0);
	CHECK_EQ(grb_buf_record_disable(b), 0);
	CHECK_EQ(put(&raw, chan, 100, 8), -EAGAIN);
	CHECK_EQ(grb_buf_record_enable(b), 0);
	CHECK_EQ(put(&raw, chan, 6, 8), 0);
	expect_lost(b, 0, 0, 0, 0);
	/* No refusal leaked a nesting level: four can still be open. */
	check_nesting_free(&raw, chan, 7, GRB_MAX_NESTING);
	CHECK_EQ(grb_channel_record_disable(NULL), -EINVAL);
	CHECK_EQ(grb_channel_record_enable(NULL), -EINVAL);
	CHECK_EQ(grb_buf_record_disable(NULL), -EINVAL);
	CHECK_EQ(grb_buf_record_enable(NULL), -EINVAL);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(drain(b, 0, 8, &t), -ENODATA);
	expect_tags(&t, want, 10);
	CHECK_EQ(t.subbufs, 2);
	grb_channel_destroy(chan);
}

/* -ENOSPC: larger than an empty sub-buffer, header and padding included. */
static void test_too_big(void)
{
	static const uint64_t want[] = { 1, 2, 3, 4 };
	struct grb_channel *chan = create(&hdr, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_ctx ctx = GRB_CTX_INIT(SB - HDR, 128);
	struct tags t = { { 0 }, 0, 0 };
	uint64_t tag;

	CHECK_EQ(put(&hdr, chan, 1, 8), 0);
	CHECK_EQ(put(&hdr, chan, 2, 8), 0);
	/* Refused in an open sub-buffer, which stays open as it was. */
	CHECK_EQ(put(&hdr, chan, 100, SB - HDR + 1), -ENOSPC);
	CHECK_EQ(put(&hdr, chan, 100, SB), -ENOSPC);
	CHECK_EQ(put(&hdr, chan, 100, (size_t)1 << 40), -ENOSPC);
	expect_lost(b, 0, 0, 3, 0);
	CHECK_EQ(put(&hdr, chan, 3, 8), 0);
	/* Refused at a sub-buffer boundary, where it would open one. */
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(put(&hdr, chan, 100, SB - HDR + 1), -ENOSPC);
	/* The largest record fits exactly after the header... */
	CHECK_EQ(put(&hdr, chan, 4, SB - HDR), 0);
	/* ...but not when its alignment pads it past the end. */
	CHECK_EQ(grb_reserve(&hdr, chan, &ctx), -ENOSPC);
	expect_lost(b, 0, 0, 5, 0);
	ctx = (struct grb_ctx)GRB_CTX_INIT(SB - 2 * HDR, 128);
	CHECK_EQ(grb_reserve(&hdr, chan, &ctx), 0);
	/* The slot includes the padding; the writer skips it. */
	grb_ctx_align(&hdr, &ctx, 128);
	tag = 5;
	grb_write(&hdr, &ctx, &tag, sizeof(tag));
	grb_commit(&hdr, &ctx);

	CHECK_EQ(grb_reader_open(b), 0);
	/* Tags 1-3 in the first sub-buffer, 4 filling the second. */
	CHECK_EQ(take(b, HDR, 8, &t), 0);
	CHECK_EQ(take(b, HDR, SB - HDR, &t), 0);
	expect_tags(&t, want, 4);
	/* The aligned record fills the third, its payload at 128. */
	expect_next(b, 1, SB);
	CHECK_EQ(grb_reader_read(b, 2 * HDR, &tag, 8), 0);
	CHECK_U64(tag, 5);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(chan);
}

/*
 * -ENOBUFS in discard mode: four sub-buffers of four 1000-byte records
 * fill the buffer; the 17th record needs the first sub-buffer again.
 */
static void test_full(void)
{
	struct grb_channel *chan = create(&raw, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct tags t = { { 0 }, 0, 0 };
	struct grb_reader_subbuf sb;
	uint64_t want[32], tag;
	unsigned int n = 0, i;

	for (tag = 1; tag <= 16; tag++) {
		CHECK_EQ(put(&raw, chan, tag, 1000), 0);
		want[n++] = tag;
	}
	for (i = 0; i < 3; i++)
		CHECK_EQ(put(&raw, chan, 100, 1000), -ENOBUFS);
	/* A record that still fits the open sub-buffer is not refused. */
	CHECK_EQ(put(&raw, chan, 17, 80), 0);
	expect_lost(b, 3, 0, 0, 0);
	/* Close the last one: no free sub-buffer for an empty flush either,
	 * and a flush is not a record, so nothing more is counted. */
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), -ENODATA);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), -ENOBUFS);
	expect_lost(b, 3, 0, 0, 0);
	CHECK_EQ(put(&raw, chan, 100, 8), -ENOBUFS);
	expect_lost(b, 4, 0, 0, 0);

	/* A held sub-buffer is not free yet; put_next frees it. */
	CHECK_EQ(grb_reader_open(b), 0);
	expect_next(b, 4, 4000);
	CHECK_EQ(put(&raw, chan, 100, 1000), -ENOBUFS);
	for (i = 0; i < 4; i++)
		read_tag(b, i * 1000, 1000, &t);
	CHECK_EQ(grb_reader_put_next(b), 0);
	for (tag = 18; tag <= 21; tag++)
		CHECK_EQ(put(&raw, chan, tag, 1000), 0);
	CHECK_EQ(put(&raw, chan, 100, 1000), -ENOBUFS);
	expect_lost(b, 6, 0, 0, 0);

	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(take(b, 0, 1000, &t), 0);             /* tags 5-8 */
	CHECK_EQ(take(b, 0, 1000, &t), 0);             /* tags 9-12 */
	/* Tags 13-16 and the short 17. */
	expect_next(b, 5, 4080);
	for (i = 0; i < 4; i++)
		read_tag(b, i * 1000, 1000, &t);
	read_tag(b, 4000, 80, &t);
	CHECK_EQ(grb_reader_put_next(b), 0);
	want[n++] = 17;
	/* Tags 18-21: their sub-buffer opened after five refusals (3, 1
	 * and 1 above); the sixth came later. */
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.lost_open, 5);
	for (i = 0; i < 4; i++)
		read_tag(b, i * 1000, 1000, &t);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(drain(b, 0, 1000, &t), -ENODATA);
	for (tag = 18; tag <= 21; tag++)
		want[n++] = tag;
	expect_tags(&t, want, n);
	CHECK_EQ(grb_buf_validate(b, NULL, 0), 0);
	grb_channel_destroy(chan);
}

/*
 * -EIO in overwrite mode: a reservation left open in the first sub-buffer
 * keeps it undelivered, so a lap later the writer cannot enter it.
 */
static void test_wrap(void)
{
	static const uint64_t want[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct grb_channel *chan = create(&raw_ow, SB, 2);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_ctx r = GRB_CTX_INIT(8, 1);
	struct tags t = { { 0 }, 0, 0 };
	uint64_t tag = 1;
	unsigned int i;

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reserve(&raw_ow, chan, &r), 0);
	grb_write(&raw_ow, &r, &tag, sizeof(tag));
	/* 8 + 4 x 1000 bytes in the first sub-buffer, 4 x 1000 in the
	 * second; the next record needs the first one again. */
	for (tag = 2; tag <= 9; tag++)
		CHECK_EQ(put(&raw_ow, chan, tag, 1000), 0);
	CHECK_EQ(put(&raw_ow, chan, 100, 1000), -EIO);
	CHECK_EQ(put(&raw_ow, chan, 100, 1000), -EIO);
	expect_lost(b, 0, 2, 0, 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), -EIO);
	expect_lost(b, 0, 2, 0, 0);
	/* The reader waits for the first sub-buffer: order is kept. */
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	grb_commit(&raw_ow, &r);

	expect_next(b, 5, 4008);
	read_tag(b, 0, 8, &t);
	for (i = 0; i < 4; i++)
		read_tag(b, 8 + i * 1000, 1000, &t);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(drain(b, 0, 1000, &t), -EAGAIN);
	/* And the writer goes on. */
	CHECK_EQ(put(&raw_ow, chan, 10, 1000), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(drain(b, 0, 1000, &t), -ENODATA);
	expect_tags(&t, want, 10);
	CHECK_EQ(grb_buf_validate(b, NULL, 0), 0);
	grb_channel_destroy(chan);
}

/* -EBUSY beyond GRB_MAX_NESTING open reservations on one thread. */
static void test_nesting(void)
{
	static const uint64_t want[] = { 1, 10, 11, 12, 13, 2, 20, 21, 22, 23 };
	struct grb_channel *chan = create(&raw, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_ctx ctx[GRB_MAX_NESTING + 1];
	struct tags t = { { 0 }, 0, 0 };
	uint64_t tag;
	int i;

	CHECK_EQ(GRB_MAX_NESTING, 4);
	CHECK_EQ(put(&raw, chan, 1, 8), 0);
	for (i = 0; i < GRB_MAX_NESTING; i++) {
		ctx[i] = (struct grb_ctx)GRB_CTX_INIT(8, 1);
		CHECK_EQ(grb_reserve(&raw, chan, &ctx[i]), 0);
		tag = 10 + (uint64_t)i;
		grb_write(&raw, &ctx[i], &tag, sizeof(tag));
	}
	ctx[i] = (struct grb_ctx)GRB_CTX_INIT(8, 1);
	CHECK_EQ(grb_reserve(&raw, chan, &ctx[i]), -EBUSY);
	expect_lost(b, 0, 0, 0, 1);
	/* Innermost first, as nested signal handlers return. */
	for (i = GRB_MAX_NESTING - 1; i >= 0; i--)
		grb_commit(&raw, &ctx[i]);
	CHECK_EQ(put(&raw, chan, 2, 8), 0);
	check_nesting_free(&raw, chan, 20, GRB_MAX_NESTING);
	expect_lost(b, 0, 0, 0, 1);

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(drain(b, 0, 8, &t), -ENODATA);
	expect_tags(&t, want, 10);
	grb_channel_destroy(chan);
}

/* Reserve @size bytes and write @tag into them, without committing. */
static void reserve_tag(const struct grb_config *cfg, struct grb_channel *chan,
			struct grb_ctx *ctx, uint64_t tag, size_t size)
{
	*ctx = (struct grb_ctx)GRB_CTX_INIT(size, 1);
	CHECK_EQ(grb_reserve(cfg, chan, ctx), 0);
	grb_write(cfg, ctx, &tag, sizeof(tag));
	grb_write_fill(cfg, ctx, (int)(tag & 0xff), size - sizeof(tag));
}

static void expect_discarded(struct grb_buf *b, uint64_t n)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.discarded, n);
}

/*
 * grb_try_discard_reserve: the sub-buffer closes where the discarded slot
 * begins and the position never moves back; -EBUSY when something was
 * reserved (or flushed) after the slot.
 */
static void test_discard_reserve(void)
{
	static const uint64_t want[] = { 1, 3, 4, 5, 7, 9, 10 };
	struct grb_channel *chan = create(&tsc, SB, 8);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_ctx a, c;
	struct tags t = { { 0 }, 0, 0 };

	CHECK_EQ(put(&tsc, chan, 1, 8), 0);
	reserve_tag(&tsc, chan, &a, 2, 8);
	/* Consecutive clock values compress. */
	CHECK_EQ(a.rflags & GRB_RFLAG_FULL_TIMESTAMP, 0);
	CHECK_EQ(grb_try_discard_reserve(&tsc, &a), 0);
	expect_discarded(b, 1);
	/* Sub-buffer 0 ended at the slot; the next record opens 1, full. */
	reserve_tag(&tsc, chan, &c, 3, 8);
	CHECK_U64(c.pre_offset, SB);
	CHECK(c.rflags & GRB_RFLAG_FULL_TIMESTAMP);
	grb_commit(&tsc, &c);
	reserve_tag(&tsc, chan, &c, 4, 8);
	CHECK_EQ(c.rflags & GRB_RFLAG_FULL_TIMESTAMP, 0);
	grb_commit(&tsc, &c);

	/* Another reservation followed: -EBUSY, and it must be committed;
	 * the later one is the last and can be discarded. */
	reserve_tag(&tsc, chan, &a, 5, 8);
	reserve_tag(&tsc, chan, &c, 6, 8);
	CHECK_EQ(grb_try_discard_reserve(&tsc, &a), -EBUSY);
	CHECK_EQ(grb_try_discard_reserve(&tsc, &c), 0);
	grb_commit(&tsc, &a);
	/* The first record of sub-buffer 2, discarded: it closes empty. */
	reserve_tag(&tsc, chan, &c, 6, 8);
	CHECK_U64(c.pre_offset, 2 * SB);
	CHECK_EQ(grb_try_discard_reserve(&tsc, &c), 0);
	/* A slot that fills its sub-buffer exactly is its closer already:
	 * its discard needs no compare-and-swap and always succeeds, even
	 * once the next sub-buffer is open. */
	CHECK_EQ(put(&tsc, chan, 7, 8), 0);
	reserve_tag(&tsc, chan, &a, 8, SB - 8);
	CHECK_U64(a.end, 4 * SB);
	CHECK_EQ(put(&tsc, chan, 9, 8), 0);
	CHECK_EQ(grb_try_discard_reserve(&tsc, &a), 0);
	/* A flush after the slot closed the sub-buffer with it inside. */
	reserve_tag(&tsc, chan, &a, 10, 8);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_try_discard_reserve(&tsc, &a), -EBUSY);
	grb_commit(&tsc, &a);
	expect_discarded(b, 4);
	expect_lost(b, 0, 0, 0, 0);
	/* Discards gave their nesting levels back. */
	check_nesting_free(&tsc, chan, 11, GRB_MAX_NESTING);

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(take(b, 0, 8, &t), 0);         /* 1 */
	CHECK_EQ(take(b, 0, 8, &t), 0);         /* 3 4 5 */
	expect_next(b, 0, 0);                   /* 2: discarded first record */
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(take(b, 0, 8, &t), 0);         /* 7 */
	CHECK_EQ(take(b, 0, 8, &t), 0);         /* 9 10 */
	expect_tags(&t, want, 7);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_reader_release(b), 0);
	CHECK_EQ(grb_buf_validate(b, NULL, 0), 0);
	grb_channel_destroy(chan);
}

/*
 * Regressions: a data_size near SIZE_MAX once wrapped the fit test and
 * moved the write position backwards; a discard with a clock below
 * 2^timestamp_bits once failed to force a full timestamp.
 */
static void test_size_wrap_and_small_clock(void)
{
	struct grb_channel *chan = create(&tsc, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_ctx a = GRB_CTX_INIT(8, 1), c = GRB_CTX_INIT(8, 1);
	struct grb_ctx huge = GRB_CTX_INIT(SIZE_MAX - 50, 1);
	struct grb_buf_stats st0, st1;

	clock_now = 100;
	CHECK_EQ(put(&tsc, chan, 1, 8), 0);
	grb_buf_get_stats(b, &st0);
	CHECK_EQ(grb_reserve(&tsc, chan, &huge), -ENOSPC);
	huge = (struct grb_ctx)GRB_CTX_INIT(SIZE_MAX, 1);
	CHECK_EQ(grb_reserve(&tsc, chan, &huge), -ENOSPC);
	grb_buf_get_stats(b, &st1);
	CHECK_U64(st1.produced, st0.produced);
	expect_lost(b, 0, 0, 2, 0);
	CHECK_EQ(grb_reserve(&tsc, chan, &a), 0);
	CHECK_EQ(a.rflags & GRB_RFLAG_FULL_TIMESTAMP, 0);
	CHECK_EQ(grb_try_discard_reserve(&tsc, &a), 0);
	CHECK_EQ(grb_reserve(&tsc, chan, &c), 0);
	CHECK(c.rflags & GRB_RFLAG_FULL_TIMESTAMP);
	grb_write_fill(&tsc, &c, 0, 8);
	grb_commit(&tsc, &c);
	clock_now = UINT64_C(1) << 40;
	grb_channel_destroy(chan);
}

/* Flush: nothing to close, bad flags, and the header-only sub-buffer. */
static void test_flush(void)
{
	struct grb_channel *chan = create(&hdr, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	uint32_t magic = 0;
	uint64_t tag = 0;

	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), -ENODATA);
	CHECK_EQ(grb_buf_flush(b, (enum grb_flush)2), -EINVAL);
	CHECK_EQ(grb_buf_flush(b, (enum grb_flush)-1), -EINVAL);
	CHECK_EQ(grb_buf_flush(NULL, GRB_FLUSH_ACTIVE), -EINVAL);
	CHECK_EQ(grb_channel_flush(chan, (enum grb_flush)2), -EINVAL);
	CHECK_EQ(grb_channel_flush(NULL, GRB_FLUSH_ACTIVE), -EINVAL);
	/* Nothing to close in a buffer is not an error for the channel. */
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);

	CHECK_EQ(grb_reader_open(b), 0);
	/* A header-only sub-buffer: opened, closed and delivered at once. */
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.pos, 0);
	CHECK_U64(sb.data_size, HDR);
	CHECK_U64(sb.records, 0);
	CHECK_EQ(grb_reader_read(b, 0, &magic, sizeof(magic)), 0);
	CHECK_EQ(magic, HDR_MAGIC);
	CHECK_EQ(grb_reader_read(b, HDR, &tag, 1), -ERANGE);
	CHECK_EQ(grb_reader_put_next(b), 0);

	/* With a record: ACTIVE closes it once, then has nothing. */
	CHECK_EQ(put(&hdr, chan, 42, 8), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), -ENODATA);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.pos, SB);
	CHECK_U64(sb.data_size, HDR + 8);
	CHECK_U64(sb.records, 1);
	CHECK_EQ(grb_reader_read(b, HDR, &tag, 8), 0);
	CHECK_U64(tag, 42);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_EMPTY), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.data_size, HDR);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(chan);
}

int main(void)
{
	test_shutdown();
	test_disabled();
	test_too_big();
	test_full();
	test_wrap();
	test_nesting();
	test_discard_reserve();
	test_size_wrap_and_small_clock();
	test_flush();
	printf("test_errors_reserve: passed\n");
	return 0;
}
