/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_errors.c - every errno the public headers document,
 * each reached by a real call, and after each refusal a check that what
 * was written before it is still read back, intact and in order.
 *
 * Most cases use "raw" clients: no sub-buffer header, no record header, no
 * clock (timestamp_bits 0, clock_read NULL).  A record is then exactly its
 * payload, whose first 8 bytes are a tag, so a sub-buffer decodes as
 * data_size / record size tags.  The test client of tests/common covers
 * the same refusals on every variant with its checker.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "grb/basic.h"
#include "tclient.h"

#define SB 4096

static const struct grb_config raw = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 }, 0,
};
static const struct grb_config raw_ow = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 0, { 0 }, 0,
};

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

static struct grb_channel *create(const struct grb_config *cfg,
				  size_t subbuf_size, size_t num_subbuf)
{
	struct grb_channel_attr attr = { "errors", subbuf_size, num_subbuf,
					 NULL };
	struct grb_channel *chan = NULL;

	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	return chan;
}

/* One record of @size bytes (at least 8) starting with @tag. */
static int put(const struct grb_config *cfg, struct grb_channel *chan,
	       uint64_t tag, size_t size)
{
	struct grb_ctx ctx = GRB_CTX_INIT(size, 1);
	int ret = grb_reserve(cfg, chan, &ctx);

	if (ret)
		return ret;
	grb_write(cfg, &ctx, &tag, sizeof(tag));
	grb_write_fill(cfg, &ctx, (int)(tag & 0xff), size - sizeof(tag));
	grb_commit(cfg, &ctx);
	return 0;
}

/* Tags read back from a buffer. */
struct tags {
	uint64_t v[256];
	unsigned int n;
	unsigned int subbufs;
};

/*
 * Check the record of @size bytes at @off of the held sub-buffer and
 * append its tag.
 */
static void read_tag(struct grb_buf *b, size_t off, size_t size,
		     struct tags *t)
{
	unsigned char fill[SB];
	size_t i;

	CHECK(t->n < 256);
	CHECK_EQ(grb_reader_read(b, off, &t->v[t->n], 8), 0);
	CHECK_EQ(grb_reader_read(b, off + 8, fill, size - 8), 0);
	/* The record is intact, not only its tag. */
	for (i = 0; i < size - 8; i++)
		CHECK_EQ(fill[i], t->v[t->n] & 0xff);
	t->n++;
}

/*
 * Take one sub-buffer of records of @size bytes after a header of
 * @hdr_len bytes and append their tags.  Return: get_next's result.
 */
static int take(struct grb_buf *b, size_t hdr_len, size_t size,
		struct tags *t)
{
	struct grb_reader_subbuf sb;
	size_t off;
	int ret = grb_reader_get_next(b);

	if (ret)
		return ret;
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.data_size, hdr_len + sb.records * size);
	for (off = hdr_len; off < sb.data_size; off += size)
		read_tag(b, off, size, t);
	t->subbufs++;
	CHECK_EQ(grb_reader_put_next(b), 0);
	return 0;
}

/* Take every delivered sub-buffer.  Return: get_next's final result. */
static int drain(struct grb_buf *b, size_t hdr_len, size_t size,
		 struct tags *t)
{
	int ret;

	while ((ret = take(b, hdr_len, size, t)) == 0)
		;
	return ret;
}

/* get_next, and check what it holds. */
static void expect_next(struct grb_buf *b, uint64_t records,
			size_t data_size)
{
	struct grb_reader_subbuf sb;

	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.records, records);
	CHECK_U64(sb.data_size, data_size);
}

/* Compare what was read with the tags expected, in order. */
static void expect_tags(const struct tags *t, const uint64_t *want,
			unsigned int n)
{
	unsigned int i;

	CHECK_EQ(t->n, n);
	for (i = 0; i < n; i++)
		CHECK_U64(t->v[i], want[i]);
}

static void expect_lost(struct grb_buf *b, uint64_t full, uint64_t wrap,
			uint64_t big, uint64_t nesting)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.lost_full, full);
	CHECK_U64(st.lost_wrap, wrap);
	CHECK_U64(st.lost_big, big);
	CHECK_U64(st.lost_nesting, nesting);
}

/* Nothing documented for a reader works before grb_reader_open(). */
static void test_reader_not_open(void)
{
	struct grb_channel *chan = create(&raw, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	uint64_t c, p;
	char s[8];

	CHECK_EQ(put(&raw, chan, 1, 8), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), -EPERM);
	CHECK_EQ(grb_reader_get_next(b), -EPERM);
	CHECK_EQ(grb_reader_put_next(b), -EPERM);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), -EPERM);
	CHECK_EQ(grb_reader_put_subbuf(b), -EPERM);
	CHECK_EQ(grb_reader_held(b, &sb), -EPERM);
	CHECK_EQ(grb_reader_read(b, 0, s, 1), -EPERM);
	CHECK_EQ(grb_reader_read_cstr(b, 0, s, sizeof(s), NULL), -EPERM);
	CHECK_EQ(grb_reader_record(b, 0, &rec), -EPERM);
	CHECK_EQ(grb_reader_release(b), -EPERM);

	/* NULL buffers. */
	CHECK_EQ(grb_reader_open(NULL), -EINVAL);
	CHECK_EQ(grb_reader_release(NULL), -EINVAL);
	CHECK_EQ(grb_reader_snapshot(NULL, &c, &p), -EINVAL);
	CHECK_EQ(grb_reader_get_next(NULL), -EINVAL);
	CHECK_EQ(grb_reader_put_next(NULL), -EINVAL);
	CHECK_EQ(grb_reader_get_subbuf(NULL, 0), -EINVAL);
	CHECK_EQ(grb_reader_put_subbuf(NULL), -EINVAL);
	CHECK_EQ(grb_reader_held(NULL, &sb), -EINVAL);
	CHECK_EQ(grb_reader_read(NULL, 0, s, 1), -EINVAL);
	CHECK_EQ(grb_reader_read_cstr(NULL, 0, s, sizeof(s), NULL), -EINVAL);
	CHECK_EQ(grb_reader_record(NULL, 0, &rec), -EINVAL);
	CHECK_EQ(grb_reader_first_record(NULL), 0);

	/* One reader at a time; a released buffer can be opened again. */
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_open(b), -EBUSY);
	CHECK_EQ(grb_reader_release(b), 0);
	CHECK_EQ(grb_reader_release(b), -EPERM);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_open(b), -EBUSY);
	/* NULL out-arguments of an open reader. */
	CHECK_EQ(grb_reader_snapshot(b, NULL, &p), -EINVAL);
	CHECK_EQ(grb_reader_snapshot(b, &c, NULL), -EINVAL);
	CHECK_EQ(grb_reader_held(b, NULL), -EINVAL);
	grb_channel_destroy(chan);
}

/*
 * Write tags 1-4 into the first sub-buffer of a fresh channel, checking
 * that the reader gets nothing until the last of them is committed: not
 * while the sub-buffer is open, nor once it is closed with a record still
 * reserved.
 */
static void write_undelivered(struct grb_channel *chan, struct grb_buf *b)
{
	struct grb_ctx r = GRB_CTX_INIT(8, 1);
	struct grb_reader_subbuf sb;
	uint64_t c, p, tag = 4;

	/* Nothing closed yet. */
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), -EAGAIN);
	CHECK_U64(c, 0);
	CHECK_U64(p, 0);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), -EAGAIN);
	CHECK_EQ(grb_reader_put_next(b), -EPERM);
	CHECK_EQ(grb_reader_put_subbuf(b), -EPERM);
	CHECK_EQ(grb_reader_held(b, &sb), -EPERM);

	/* Open but not closed: still nothing. */
	CHECK_EQ(put(&raw, chan, 1, 8), 0);
	CHECK_EQ(put(&raw, chan, 2, 8), 0);
	CHECK_EQ(put(&raw, chan, 3, 8), 0);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), -EAGAIN);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);

	/* Closed, but a record in it is not committed: not delivered. */
	CHECK_EQ(grb_reserve(&raw, chan, &r), 0);
	grb_write(&raw, &r, &tag, sizeof(tag));
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), 0);
	CHECK_U64(c, 0);
	CHECK_U64(p, SB);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), -EAGAIN);
	grb_commit(&raw, &r);
}

/* The get/put protocol: holding, positions, delivery. */
static void test_reader_protocol(void)
{
	static const uint64_t want[] = { 1, 2, 3, 4 };
	struct grb_channel *chan = create(&raw, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	struct tags t = { { 0 }, 0, 0 };
	uint64_t c, p, tag;

	CHECK_EQ(grb_reader_open(b), 0);
	write_undelivered(chan, b);

	/* Positions must name a sub-buffer. */
	CHECK_EQ(grb_reader_get_subbuf(b, 1), -EINVAL);
	CHECK_EQ(grb_reader_get_subbuf(b, SB / 2), -EINVAL);
	CHECK_EQ(grb_reader_get_subbuf(b, SB - 1), -EINVAL);
	CHECK_EQ(grb_reader_get_subbuf(b, SB + 8), -EINVAL);

	/* Pinned with get_subbuf: the other gets and put_next refuse. */
	CHECK_EQ(grb_reader_get_subbuf(b, 0), 0);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), -EBUSY);
	CHECK_EQ(grb_reader_get_next(b), -EBUSY);
	CHECK_EQ(grb_reader_put_next(b), -EPERM);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.records, 4);
	CHECK_U64(sb.data_size, 32);
	CHECK_EQ(grb_reader_put_subbuf(b), 0);
	CHECK_EQ(grb_reader_put_subbuf(b), -EPERM);
	/* Not consumed by the pin: get_subbuf again works. */
	CHECK_EQ(grb_reader_get_subbuf(b, 0), 0);
	CHECK_EQ(grb_reader_put_subbuf(b), 0);

	/* Taken with get_next: the other gets and put_subbuf refuse. */
	expect_next(b, 4, 32);
	CHECK_EQ(grb_reader_get_next(b), -EBUSY);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), -EBUSY);
	CHECK_EQ(grb_reader_put_subbuf(b), -EPERM);
	/* Every record written around the refusals is there. */
	for (tag = 0; tag < 4; tag++)
		read_tag(b, tag * 8, 8, &t);
	expect_tags(&t, want, 4);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_put_next(b), -EPERM);

	/* Consumed now: its position is stale, the next one not closed. */
	CHECK_EQ(grb_reader_get_subbuf(b, 0), -ESTALE);
	CHECK_EQ(grb_reader_get_subbuf(b, SB), -EAGAIN);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), -EAGAIN);
	CHECK_U64(c, SB);
	CHECK_U64(p, SB);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);

	/* Finalized and drained: no data, and stale stays stale. */
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_reader_get_next(b), -ENODATA);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), -ENODATA);
	CHECK_EQ(grb_reader_get_subbuf(b, SB), -ENODATA);
	CHECK_EQ(grb_reader_get_subbuf(b, 2 * SB), -ENODATA);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), -ESTALE);
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(chan);
}

/* Release with a sub-buffer held: pinned, it is put back unconsumed;
 * taken with get_next, it is consumed. */
static void test_reader_release_held(void)
{
	struct grb_channel *chan = create(&raw, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_ctx ctx;
	uint64_t c, p;

	for (int i = 0; i < 2; i++) {
		ctx = (struct grb_ctx)GRB_CTX_INIT(8, 1);
		CHECK_EQ(grb_reserve(&raw, chan, &ctx), 0);
		grb_write_fill(&raw, &ctx, i, 8);
		grb_commit(&raw, &ctx);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	}
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), 0);
	CHECK_EQ(grb_reader_release(b), 0);
	CHECK_EQ(grb_reader_release(b), -EPERM);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), 0);
	CHECK_U64(c, 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_release(b), 0);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), 0);
	CHECK_U64(c, SB);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), -ESTALE);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(chan);
}

/* Finalize with an unread sub-buffer: it is still read, then no data. */
static void test_reader_finalize_drain(void)
{
	static const uint64_t want[] = { 7, 8, 9 };
	struct grb_channel *chan = create(&raw_ow, SB, 2);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct tags t = { { 0 }, 0, 0 };
	uint64_t c, p;

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(put(&raw_ow, chan, 7, 8), 0);
	CHECK_EQ(put(&raw_ow, chan, 8, 8), 0);
	CHECK_EQ(put(&raw_ow, chan, 9, 8), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_channel_finalize(chan), -EALREADY);
	CHECK_EQ(grb_channel_finalize(NULL), -EINVAL);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), 0);
	CHECK_EQ(grb_reader_get_subbuf(b, SB), -ENODATA);
	CHECK_EQ(drain(b, 0, 8, &t), -ENODATA);
	expect_tags(&t, want, 3);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), -ENODATA);
	CHECK_EQ(grb_reader_get_next(b), -ENODATA);
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(chan);
}

/*
 * Overwrite mode: positions the writers pushed the reader past are stale;
 * the sub-buffers still in the ring are read, pinned or taken.
 */
static void test_reader_overwritten(void)
{
	static const uint64_t want[] = { 9, 10, 11, 12, 13, 14, 15, 16 };
	struct grb_channel *chan = create(&raw_ow, SB, 2);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	struct tags t = { { 0 }, 0, 0 };
	struct grb_buf_stats st;
	uint64_t c, p, tag;

	CHECK_EQ(grb_reader_open(b), 0);
	/* Four sub-buffers of four records in a ring of two. */
	for (tag = 1; tag <= 16; tag++)
		CHECK_EQ(put(&raw_ow, chan, tag, 1000), 0);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), 0);
	CHECK_U64(c, 2 * SB);
	CHECK_U64(p, 3 * SB);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), -ESTALE);
	CHECK_EQ(grb_reader_get_subbuf(b, SB), -ESTALE);
	CHECK_EQ(grb_reader_get_subbuf(b, 3 * SB), -EAGAIN);
	/* A pin reads in place and gives the sub-buffer back unconsumed. */
	CHECK_EQ(grb_reader_get_subbuf(b, 2 * SB), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.seq, 2);
	CHECK_U64(sb.records, 4);
	CHECK_EQ(grb_reader_read(b, 0, &tag, 8), 0);
	CHECK_U64(tag, 9);
	CHECK_EQ(grb_reader_put_subbuf(b), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(drain(b, 0, 1000, &t), -EAGAIN);
	expect_tags(&t, want, 8);
	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.written, 16);
	CHECK_U64(st.read, 8);
	CHECK_U64(st.overwritten, 8);
	expect_lost(b, 0, 0, 0, 0);
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(chan);
}

/* Ranges and strings in a held sub-buffer. */
static void test_reader_read(void)
{
	struct grb_channel *chan = create(&raw, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_ctx ctx = GRB_CTX_INIT(12, 1);
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	char dst[32];
	size_t len;

	CHECK_EQ(grb_reader_open(b), 0);
	/* "hello world" with its NUL, then "abc" with none: the data ends
	 * inside a string. */
	CHECK_EQ(grb_reserve(&raw, chan, &ctx), 0);
	grb_write(&raw, &ctx, "hello world", 12);
	grb_commit(&raw, &ctx);
	ctx = (struct grb_ctx)GRB_CTX_INIT(3, 1);
	CHECK_EQ(grb_reserve(&raw, chan, &ctx), 0);
	grb_write(&raw, &ctx, "abc", 3);
	grb_commit(&raw, &ctx);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.data_size, 15);
	CHECK_U64(sb.records, 2);

	/* grb_reader_read: the last byte is inside, one past is not. */
	CHECK_EQ(grb_reader_read(b, 0, dst, 15), 0);
	CHECK(memcmp(dst, "hello world\0abc", 15) == 0);
	CHECK_EQ(grb_reader_read(b, 14, dst, 1), 0);
	CHECK_EQ(dst[0], 'c');
	CHECK_EQ(grb_reader_read(b, 15, dst, 0), 0);
	CHECK_EQ(grb_reader_read(b, 14, dst, 2), -ERANGE);
	CHECK_EQ(grb_reader_read(b, 0, dst, 16), -ERANGE);
	CHECK_EQ(grb_reader_read(b, 15, dst, 1), -ERANGE);
	CHECK_EQ(grb_reader_read(b, 16, dst, 0), -ERANGE);
	/* offset + len overflowing size_t is still out of range. */
	CHECK_EQ(grb_reader_read(b, 1, dst, SIZE_MAX), -ERANGE);
	CHECK_EQ(grb_reader_read(b, SIZE_MAX, dst, 2), -ERANGE);
	CHECK_EQ(grb_reader_read(b, 0, NULL, 1), -EINVAL);

	/* grb_reader_read_cstr. */
	memset(dst, 'X', sizeof(dst));
	CHECK_EQ(grb_reader_read_cstr(b, 0, dst, sizeof(dst), &len), 0);
	CHECK_EQ(strcmp(dst, "hello world"), 0);
	CHECK_U64(len, 11);
	CHECK_EQ(grb_reader_read_cstr(b, 0, dst, 12, &len), 0);
	CHECK_EQ(grb_reader_read_cstr(b, 6, dst, 6, NULL), 0);
	CHECK_EQ(strcmp(dst, "world"), 0);
	CHECK_EQ(grb_reader_read_cstr(b, 11, dst, 1, &len), 0);
	CHECK_U64(len, 0);
	CHECK_EQ(dst[0], '\0');
	/* Too small: truncated, terminated, and nothing written past cap. */
	memset(dst, 'X', sizeof(dst));
	CHECK_EQ(grb_reader_read_cstr(b, 0, dst, 11, &len), -ENOBUFS);
	CHECK_U64(len, 11);
	CHECK_EQ(strcmp(dst, "hello worl"), 0);
	CHECK_EQ(dst[11], 'X');
	memset(dst, 'X', sizeof(dst));
	CHECK_EQ(grb_reader_read_cstr(b, 0, dst, 1, NULL), -ENOBUFS);
	CHECK_EQ(dst[0], '\0');
	CHECK_EQ(dst[1], 'X');
	/* No NUL before the end of the data, or nothing to read at all. */
	CHECK_EQ(grb_reader_read_cstr(b, 12, dst, sizeof(dst), &len), -ERANGE);
	CHECK_EQ(grb_reader_read_cstr(b, 14, dst, sizeof(dst), &len), -ERANGE);
	CHECK_EQ(grb_reader_read_cstr(b, 15, dst, sizeof(dst), &len), -ERANGE);
	CHECK_EQ(grb_reader_read_cstr(b, SIZE_MAX, dst, sizeof(dst), &len),
		 -ERANGE);
	CHECK_EQ(grb_reader_read_cstr(b, 0, NULL, 8, &len), -EINVAL);
	CHECK_EQ(grb_reader_read_cstr(b, 0, dst, 0, &len), -EINVAL);

	/* This client has no decoder. */
	CHECK_EQ(grb_reader_record(b, 0, &rec), -ENOTSUP);
	CHECK_EQ(grb_reader_record(b, 0, NULL), -EINVAL);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_read(b, 0, dst, 1), -EPERM);
	CHECK_EQ(grb_reader_read_cstr(b, 0, dst, 8, NULL), -EPERM);
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(chan);
}

/* grb_reader_record with a decoder: the test client's. */
static void test_reader_record(void)
{
	const struct grb_config *cfg = tc_config(TV_PER_CHANNEL | TV_DISCARD);
	struct grb_channel *chan = create(cfg, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	size_t first = grb_reader_first_record(b);

	CHECK_U64(first, sizeof(struct tc_header));
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(tc_write(cfg, chan, 0, 0, 10), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_EQ(grb_reader_record(b, first, &rec), 0);
	CHECK_U64(rec.next, sb.data_size);
	CHECK_U64(rec.payload_len, sizeof(struct trec) + 10);
	CHECK_EQ(grb_reader_record(b, rec.next, &rec), -ENODATA);
	CHECK_EQ(grb_reader_record(b, sb.data_size + 100, &rec), -ENODATA);
	/* Four bytes before the end cannot hold a record header. */
	CHECK_EQ(grb_reader_record(b, sb.data_size - 4, &rec), -EINVAL);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_record(b, first, &rec), -EPERM);
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(chan);
}

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

/* Creation's -ENOMEM, stats and validation arguments. */
static void test_validate_each(void);

static void test_misc(void)
{
	struct grb_channel_attr attr = { "huge", (size_t)1 << 31,
					 (size_t)1 << 17, NULL };
	struct grb_channel *chan = NULL;
	struct grb_buf_stats st;
	struct grb_buf *b;
	char msg[128];
	uint64_t magic;

	/* 2^48 data bytes: valid geometry, but no address space for it. */
	CHECK_EQ(grb_channel_create(&raw, &attr, &chan), -ENOMEM);
	CHECK(chan == NULL);

	chan = create(&raw, SB, 4);
	b = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_buf_get_stats(NULL, &st), -EINVAL);
	CHECK_EQ(grb_buf_get_stats(b, NULL), -EINVAL);
	CHECK_EQ(grb_channel_get_stats(NULL, &st), -EINVAL);
	CHECK_EQ(grb_channel_get_stats(chan, NULL), -EINVAL);
	CHECK_EQ(grb_buf_validate(NULL, msg, sizeof(msg)), -EINVAL);
	CHECK_EQ(put(&raw, chan, 1, 8), 0);
	CHECK_EQ(grb_buf_validate(b, msg, sizeof(msg)), 0);
	/* A broken description is reported, with a message. */
	magic = b->shm->magic;
	b->shm->magic = ~magic;
	msg[0] = '\0';
	CHECK_EQ(grb_buf_validate(b, msg, sizeof(msg)), -EUCLEAN);
	CHECK(msg[0] != '\0');
	CHECK_EQ(grb_buf_validate(b, NULL, 0), -EUCLEAN);
	b->shm->magic = magic;
	CHECK_EQ(grb_buf_validate(b, msg, sizeof(msg)), 0);
	grb_channel_destroy(chan);
	test_validate_each();
}

/* Add @d to the 64-bit word at @w, check that grb_buf_validate() reports
 * it with a message, and take it back. */
static void corrupt(const struct grb_buf *b, void *w, uint64_t d)
{
	_Atomic uint64_t *v = (_Atomic uint64_t *)w;
	char msg[256];

	atomic_fetch_add(v, d);
	msg[0] = '\0';
	CHECK_EQ(grb_buf_validate(b, msg, sizeof(msg)), -EUCLEAN);
	CHECK(msg[0] != '\0');
	atomic_fetch_sub(v, d);
	CHECK_EQ(grb_buf_validate(b, msg, sizeof(msg)), 0);
}

/* Each invariant grb/validate.h lists, broken alone on a quiescent
 * buffer with a closed, a delivered and an open sub-buffer. */
static void test_validate_each(void)
{
	for (int ow = 0; ow < 2; ow++) {
		const struct grb_config *cfg = ow ? &raw_ow : &raw;
		struct grb_channel *chan = create(cfg, SB, 4);
		struct grb_buf *b = grb_channel_buf(chan, 0);
		uint64_t i, id;

		CHECK_EQ(grb_reader_open(b), 0);
		for (i = 0; i < 3; i++) {
			CHECK_EQ(put(cfg, chan, i, 8), 0);
			CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		}
		CHECK_EQ(put(cfg, chan, 3, 8), 0);
		CHECK_EQ(grb_reader_get_next(b), 0);
		CHECK_EQ(grb_reader_put_next(b), 0);
		CHECK_EQ(grb_buf_validate(b, NULL, 0), 0);
		/* Positions: consumed off a sub-buffer start, or past the
		 * write position; the write position a buffer ahead. */
		corrupt(b, &b->shm->consumed, 8);
		corrupt(b, &b->shm->consumed, 8 * SB);
		corrupt(b, &b->shm->offset, 4 * SB);
		/* A slot's commit counter, of the open sub-buffer and of a
		 * delivered one; a closed one's delivery mark. */
		corrupt(b, &b->hot[3].cc, 8);
		corrupt(b, &b->hot[1].cc, 8);
		corrupt(b, &b->cold[2].cc_sb, SB);
		/* Accounting: a record read or delivered that was not. */
		corrupt(b, &b->shm->records_read, 1);
		corrupt(b, &b->shm->records_delivered, 1);
		if (ow) {
			/* Ids: not a permutation, NOREF, a lap. */
			id = atomic_load((_Atomic uint64_t *)&b->ids[0]);
			corrupt(b, &b->ids[0],
				((atomic_load((_Atomic uint64_t *)&b->ids[1]) -
				  id) & GRB_ID_INDEX_MASK));
			corrupt(b, &b->ids[2], id & GRB_ID_NOREF ?
				-(uint64_t)GRB_ID_NOREF : GRB_ID_NOREF);
			corrupt(b, &b->ids[2], UINT64_C(1) << GRB_ID_LAP_SHIFT);
		}
		grb_channel_destroy(chan);
	}
}

/* The CPUs this thread may run on, to reach each per-CPU buffer. */
static int allowed[CPU_SETSIZE], nallowed;

static void read_allowed(void)
{
	cpu_set_t set;
	int c;

	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			allowed[nallowed++] = c;
	CHECK(nallowed > 0);
}

/*
 * Run on the @k-th allowed CPU (modulo their number) and return the
 * buffer a reservation of @cfg lands in from there.
 */
static unsigned int move_to(const struct grb_config *cfg, unsigned int k)
{
	cpu_set_t set;
	int c = allowed[k % (unsigned int)nallowed];

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
	return cfg->alloc == GRB_ALLOC_PER_CPU ? (unsigned int)c : 0;
}

static void restore_affinity(void)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < nallowed; i++)
		CPU_SET(allowed[i], &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

/*
 * The refusals above on every test client variant, checked by its
 * checker: each record reserved is read exactly once (or counted as
 * overwritten) and every counted refusal matches a failed write.  The
 * thread moves between the CPUs it may use, so per-CPU variants fill
 * several buffers.
 */
static void run_variant(int v)
{
	const struct grb_config *cfg = tc_config(v);
	struct grb_channel *chan = create(cfg, SB, 4);
	unsigned int nbufs = grb_channel_nr_bufs(chan), i, off;
	uint64_t refused = 0;
	struct tc_checker tc;
	uint32_t seq = 0;
	int ret;

	CHECK_EQ(tc_checker_init(&tc, chan, 1, 4000), 0);
	for (i = 0; i < nbufs; i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
	/* Fill every buffer: discard variants refuse, overwrite ones wrap. */
	for (; seq < 1500; seq++) {
		move_to(cfg, seq);
		ret = tc_write(cfg, chan, 0, seq, seq % 100);
		if (ret == 0)
			tc_mark_reserved(&tc, 0, seq);
		else if (ret == -ENOBUFS)
			refused++;
		else
			CHECK_EQ(ret, 0);
	}
	CHECK(refused > 0 || cfg->mode == GRB_MODE_OVERWRITE);
	tc_drain_all(&tc, chan);
	/* A disabled buffer refuses without counting; the others write. */
	off = move_to(cfg, 0);
	CHECK_EQ(grb_buf_record_disable(grb_channel_buf(chan, off)), 0);
	for (; seq < 1600; seq++) {
		i = move_to(cfg, seq);
		ret = tc_write(cfg, chan, 0, seq, 8);
		if (ret == 0)
			tc_mark_reserved(&tc, 0, seq);
		else
			CHECK_EQ(ret, -EAGAIN);
		CHECK_EQ(ret == -EAGAIN, i == off);
	}
	CHECK_EQ(grb_buf_record_enable(grb_channel_buf(chan, off)), 0);
	for (; seq < 1700; seq++) {
		move_to(cfg, seq);
		CHECK_EQ(tc_write(cfg, chan, 0, seq, 8), 0);
		tc_mark_reserved(&tc, 0, seq);
	}
	CHECK_EQ(grb_channel_finalize(chan), 0);
	for (; seq < 1710; seq++)
		CHECK_EQ(tc_write(cfg, chan, 0, seq, 8), -ESHUTDOWN);
	restore_affinity();
	tc_drain_all(&tc, chan);
	CHECK_U64(tc_final_check(&tc, chan, refused), 0);
	tc_checker_free(&tc);
	grb_channel_destroy(chan);
}

/* The basic client's documented errors: arguments. */
static const struct grb_basic_attr basic_attr = {
	"basic", SB, 4, GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 1,
};

static void test_basic_args(void)
{
	static char big[2 * SB];
	struct grb_basic_attr bad = basic_attr;
	struct grb_basic_counts cnt;
	struct grb_basic_event ev;
	struct grb_basic_wctx w;
	struct grb_basic *b = NULL;

	CHECK_EQ(grb_basic_create(NULL, &b), -EINVAL);
	CHECK(grb_basic_config((enum grb_alloc)2, GRB_MODE_DISCARD, 0) == NULL);
	CHECK(grb_basic_config(GRB_ALLOC_PER_CPU, (enum grb_mode)2, 0) == NULL);
	CHECK(grb_basic_config(GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0) != NULL);
	CHECK_EQ(grb_basic_create(&basic_attr, NULL), -EINVAL);
	bad.subbuf_size = 3 * SB;
	CHECK_EQ(grb_basic_create(&bad, &b), -EINVAL);
	bad = basic_attr;
	bad.alloc = (enum grb_alloc)5;
	CHECK_EQ(grb_basic_create(&bad, &b), -EINVAL);
	bad = basic_attr;
	bad.mode = (enum grb_mode)5;
	CHECK_EQ(grb_basic_create(&bad, &b), -EINVAL);
	CHECK(b == NULL);
	CHECK_EQ(grb_basic_create(&basic_attr, &b), 0);

	CHECK_EQ(grb_basic_write(NULL, "x", 1), -EINVAL);
	CHECK_EQ(grb_basic_write(b, NULL, 1), -EINVAL);
	CHECK_EQ(grb_basic_write(b, "x", (size_t)GRB_BASIC_MAX_LEN + 1),
		 -EINVAL);
	CHECK_EQ(grb_basic_reserve(NULL, 1, &w), -EINVAL);
	CHECK_EQ(grb_basic_reserve(b, 1, NULL), -EINVAL);
	CHECK_EQ(grb_basic_write(b, big, SB), -ENOSPC);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, big, SB), -EAGAIN);
	CHECK_EQ(grb_basic_consume(b, 1, &ev, big, SB), -EINVAL);
	CHECK_EQ(grb_basic_consume(NULL, 0, &ev, big, SB), -EINVAL);
	CHECK_EQ(grb_basic_consume(b, 0, NULL, big, SB), -EINVAL);
	CHECK_EQ(grb_basic_peek(b, 1, &ev, big, SB), -EINVAL);
	CHECK_EQ(grb_basic_get_counts(b, 1, &cnt), -EINVAL);
	CHECK_EQ(grb_basic_get_counts(NULL, 0, &cnt), -EINVAL);
	CHECK_EQ(grb_basic_reset(NULL), -EINVAL);
	CHECK_EQ(grb_basic_flush(NULL), -EINVAL);
	CHECK_EQ(grb_basic_finalize(NULL), -EINVAL);
	CHECK_EQ(grb_basic_record_disable(NULL), -EINVAL);
	CHECK_EQ(grb_basic_record_enable(NULL), -EINVAL);
	CHECK_EQ(grb_basic_get_counts(b, 0, &cnt), 0);
	CHECK_U64(cnt.lost, 1);
	grb_basic_destroy(b);
	grb_basic_destroy(NULL);
}

/* Consume: -ENOBUFS keeps the record, a corrupt one gives -EIO. */
static void test_basic_consume(void)
{
	struct grb_basic_event ev;
	struct grb_reader_subbuf sb;
	struct grb_basic *b = NULL;
	struct grb_record rec;
	struct grb_buf *buf;
	uint32_t word;
	size_t off;
	char dst[16];

	CHECK_EQ(grb_basic_create(&basic_attr, &b), 0);
	CHECK_EQ(grb_basic_write(b, NULL, 0), 0);
	CHECK_EQ(grb_basic_write(b, "hello", 5), 0);
	CHECK_EQ(grb_basic_record_disable(b), 0);
	CHECK_EQ(grb_basic_write(b, "no", 2), -EAGAIN);
	CHECK_EQ(grb_basic_record_enable(b), 0);
	CHECK_EQ(grb_basic_write(b, "abcd", 4), 0);
	CHECK_EQ(grb_basic_flush(b), 0);
	/* The empty record first, then "hello": too big for 2 bytes, it
	 * stays and ev describes it. */
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), 0);
	CHECK_U64(ev.len, 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, 2), -ENOBUFS);
	CHECK_U64(ev.len, 5);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), 0);
	CHECK(memcmp(dst, "hello", 5) == 0);

	/*
	 * A corrupt length word is a decode failure: -EIO.  The cursor now
	 * holds the sub-buffer at "abcd"; find that record with the
	 * engine's decoder and make its length run past the data.
	 */
	CHECK_EQ(grb_basic_peek(b, 0, &ev, dst, sizeof(dst)), 0);
	CHECK_U64(ev.len, 4);
	buf = grb_channel_buf(grb_basic_channel(b), 0);
	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	for (off = grb_reader_first_record(buf); ; off = rec.next) {
		CHECK_EQ(grb_reader_record(buf, off, &rec), 0);
		if (rec.next == sb.data_size)
			break;
	}
	CHECK_U64(rec.payload_len, 4);
	memcpy(&word, (const char *)sb.data + rec.offset, sizeof(word));
	word |= 0x00fffff0u;
	memcpy((char *)sb.data + rec.offset, &word, sizeof(word));
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -EIO);
	grb_basic_destroy(b);
}

/* Finalized: writes refused, the rest read, then no data. */
static void test_basic_finalize(void)
{
	struct grb_basic_counts cnt;
	struct grb_basic_event ev;
	struct grb_basic *b = NULL;
	char dst[16];

	CHECK_EQ(grb_basic_create(&basic_attr, &b), 0);
	CHECK_EQ(grb_basic_write(b, "z", 1), 0);
	CHECK_EQ(grb_basic_finalize(b), 0);
	CHECK_EQ(grb_basic_finalize(b), -EALREADY);
	CHECK_EQ(grb_basic_write(b, "z", 1), -ESHUTDOWN);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), 0);
	CHECK_EQ(dst[0], 'z');
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -ENODATA);
	CHECK_EQ(grb_basic_get_counts(b, 0, &cnt), 0);
	CHECK_U64(cnt.written, 1);
	CHECK_U64(cnt.consumed, 1);
	CHECK_U64(cnt.lost, 0);
	grb_basic_destroy(b);
}

int main(void)
{
	int v;

	test_reader_not_open();
	test_reader_protocol();
	test_reader_release_held();
	test_reader_finalize_drain();
	test_reader_overwritten();
	test_reader_read();
	test_reader_record();
	test_shutdown();
	test_disabled();
	test_too_big();
	test_full();
	test_wrap();
	test_nesting();
	test_discard_reserve();
	test_size_wrap_and_small_clock();
	test_flush();
	test_misc();
	read_allowed();
	for (v = 0; v < TV_COUNT; v++)
		run_variant(v);
	test_basic_args();
	test_basic_consume();
	test_basic_finalize();
	printf("test_errors: passed\n");
	return 0;
}
