/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_errors.c - every errno grb/reader.h documents, and
 * those of statistics, validation and channel creation's -ENOMEM, each
 * reached by a real call, and after each refusal a check that what was
 * written before it is still read back, intact and in order: a reader
 * used before grb_reader_open(), the get/put protocol (holding,
 * positions, delivery, release and finalize with a sub-buffer held,
 * overwritten positions), reads of ranges and strings, records through a
 * decoder; then every invariant grb/validate.h lists, broken alone.
 *
 * The cases use the "raw" clients of tests/common/tagrec.h: a record is
 * exactly its payload, whose first 8 bytes are a tag.  The writer's
 * refusals are test_errors_reserve.c's; the same refusals on every test
 * client variant, and the basic client's errors, test_errors_clients.c's.
 */
#include <string.h>

#include "check.h"
#include "tagrec.h"
#include "tclient.h"

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
	/* A finalized buffer stays ended: an empty flush, or an idle
	 * ticker's, opens no sub-buffer after the reader's -ENODATA. */
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), -ENODATA);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_EMPTY), 0);
	grb_channel_tick(chan, GRB_TICK_IDLE);
	grb_channel_tick(chan, GRB_TICK_IDLE);
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
		corrupt(b, &b->hot[1].dtotal, 1);
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

int main(void)
{
	test_reader_not_open();
	test_reader_protocol();
	test_reader_release_held();
	test_reader_finalize_drain();
	test_reader_overwritten();
	test_reader_read();
	test_reader_record();
	test_misc();
	printf("test_errors: passed\n");
	return 0;
}
