/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_reader_contract.c - promises of grb/reader.h and
 * grb/validate.h that the other unit tests leave unchecked (the errno
 * lists, the get/put protocol in discard mode and the sub-buffers' ends
 * are test_errors.c's, test_wait.c's and test_subbuf_contract.c's):
 *  - when a sub-buffer's records count as read: at get_next in overwrite
 *    mode (consumed moves then), at put_next in discard mode;
 *  - the overwrite-mode spare: a sub-buffer held with get_next or pinned
 *    with get_subbuf is never written while writers lap the reader, no
 *    write is refused meanwhile, and get_next then returns the oldest
 *    sub-buffer still in the ring, with its seq and lost_open;
 *  - a pin gives the data back to the ring unconsumed (a later get_next
 *    reads the same records), also through grb_reader_release(), and a
 *    pinned sub-buffer the writers went past is stale afterwards;
 *  - lost_open counts refusals and overwrites made before the opening;
 *  - grb_reader_live(): read in place (the pointer get_next later
 *    returns), a longer prefix later with the earlier bytes unchanged,
 *    seq and lost_open as delivered, and which errno comes first;
 *  - grb_reader_read() of zero bytes to no destination;
 *  - get_subbuf of a position far ahead (2^63 and more past the consumed
 *    one) is -EAGAIN, and -ENODATA once finalized, never -ESTALE;
 *  - grb_reader_takeover() of an overwrite-mode reader holding a pin;
 *  - grb_buf_validate(): quiet on a buffer with a sub-buffer held or
 *    pinned, and -EUCLEAN for invariants test_errors.c does not break
 *    (version, mode, discard-mode ids, the reader's spare, the overwrite
 *    count); @msg is left alone with a @cap of 0, and cut to @cap.
 *
 * Raw clients: no headers, no clock; a record is its payload, whose
 * first 8 bytes are a tag.  Four 1000-byte records fill a 4096-byte
 * sub-buffer, so sub-buffer k holds tags 4k+1 to 4k+4 and the fifth
 * record closes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"
#include "grb/shm.h"
#include "grb/validate.h"
#include "tagrec.h"

#define NSUB 4
#define REC 1000
#define PER_SB 4

static const struct grb_config ovw_shared = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 0, { 0 }, GRB_CONFIG_SHARED,
};

/* Tags first to last, one REC-byte record each, none refused. */
static void put_tags(const struct grb_config *cfg, struct grb_channel *chan,
		     uint64_t first, uint64_t last)
{
	uint64_t tag;

	for (tag = first; tag <= last; tag++)
		CHECK_EQ(put(cfg, chan, tag, REC), 0);
}

static struct grb_buf_stats stats(const struct grb_buf *b)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	return st;
}

/* The held sub-buffer is the full one at @pos: tags 4k+1 .. 4k+4. */
static void expect_held(const struct grb_buf *b, uint64_t pos)
{
	struct grb_reader_subbuf sb;
	uint64_t tag, i;

	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.pos, pos);
	CHECK_U64(sb.seq, pos / SB);
	CHECK_U64(sb.records, PER_SB);
	CHECK_U64(sb.data_size, PER_SB * REC);
	for (i = 0; i < PER_SB; i++) {
		CHECK_EQ(grb_reader_read(b, i * REC, &tag, sizeof(tag)), 0);
		CHECK_U64(tag, pos / SB * PER_SB + i + 1);
	}
}

static void expect_valid(const struct grb_buf *b)
{
	char msg[256] = "";
	int ret = grb_buf_validate(b, msg, sizeof(msg));

	if (ret)
		fprintf(stderr, "grb_buf_validate: %s\n", msg);
	CHECK_EQ(ret, 0);
}

/*
 * When records count as read (grb_buf_stats.read and .consumed): in
 * overwrite mode at get_next, which moves the consumed position; in
 * discard mode at put_next.  The checker accepts the buffer in between.
 */
static void test_read_counted(void)
{
	int ow;

	for (ow = 0; ow < 2; ow++) {
		const struct grb_config *cfg = ow ? &raw_ow : &raw;
		struct grb_channel *chan = create(cfg, SB, NSUB);
		struct grb_buf *b = grb_channel_buf(chan, 0);

		CHECK_EQ(grb_reader_open(b), 0);
		put_tags(cfg, chan, 1, 5);      /* the fifth closes sub-buffer 0 */
		CHECK_EQ(grb_reader_get_next(b), 0);
		expect_held(b, 0);
		CHECK_U64(stats(b).read, ow ? PER_SB : 0);
		CHECK_U64(stats(b).consumed, ow ? SB : 0);
		expect_valid(b);
		CHECK_EQ(grb_reader_put_next(b), 0);
		CHECK_U64(stats(b).read, PER_SB);
		CHECK_U64(stats(b).consumed, SB);
		expect_valid(b);
		CHECK_EQ(grb_reader_release(b), 0);
		grb_channel_destroy(chan);
	}
}

/*
 * Overwrite mode, get_next held while the writers go round the ring
 * twice and more: nothing refused, the held bytes unchanged, and then
 * get_next gives the oldest sub-buffer left, its lost_open the records
 * overwritten before it opened.
 */
static void test_spare_held(void)
{
	struct grb_channel *chan = create(&raw_ow, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb, again;
	static unsigned char copy[SB];
	struct grb_buf_stats st;
	uint64_t c, p, k;

	CHECK_EQ(grb_reader_open(b), 0);
	put_tags(&raw_ow, chan, 1, 8);     /* sub-buffer 0 closed, 1 open */
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	memcpy(copy, sb.data, sb.data_size);
	/* 40 more: sub-buffers 2 to 11, the ring of four lapped twice. */
	put_tags(&raw_ow, chan, 9, 48);
	CHECK_EQ(grb_reader_held(b, &again), 0);
	CHECK(again.data == sb.data);
	CHECK_U64(again.data_size, sb.data_size);
	CHECK(memcmp(again.data, copy, sb.data_size) == 0);
	expect_held(b, 0);
	expect_valid(b);
	CHECK_EQ(grb_reader_put_next(b), 0);

	/* Sub-buffers 5 to 11 each pushed the reader past one (1 to 7): 28
	 * records overwritten, consumed at 8, 11 open. */
	st = stats(b);
	CHECK_U64(st.written, 48);
	CHECK_U64(st.read, PER_SB);
	CHECK_U64(st.overwritten, 7 * PER_SB);
	CHECK_U64(st.lost_full + st.lost_wrap + st.lost_big + st.lost_nesting,
		  0);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), 0);
	CHECK_U64(c, 8 * SB);
	CHECK_U64(p, 11 * SB);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	for (k = 8; k <= 11; k++) {
		CHECK_EQ(grb_reader_get_next(b), 0);
		expect_held(b, k * SB);
		CHECK_EQ(grb_reader_held(b, &sb), 0);
		/* Opening sub-buffer k pushed the reader past k - 4. */
		CHECK_U64(sb.lost_open, (k - 4) * PER_SB);
		CHECK_EQ(grb_reader_put_next(b), 0);
	}
	CHECK_EQ(grb_reader_get_next(b), -ENODATA);
	st = stats(b);
	CHECK_U64(st.written, st.read + st.overwritten);
	CHECK_U64(st.read, 5 * PER_SB);
	expect_valid(b);
	grb_channel_destroy(chan);
}

/*
 * Overwrite mode, a pin: given back untouched it is read again by
 * get_next; held while the writers lap the reader, its bytes do not
 * change, and once put its position is stale.
 */
static void test_spare_pinned(void)
{
	struct grb_channel *chan = create(&raw_ow, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb, again;
	static unsigned char copy[SB];
	uint64_t c, p;

	CHECK_EQ(grb_reader_open(b), 0);
	put_tags(&raw_ow, chan, 1, 9);     /* 0 and 1 closed, 2 open */
	/* Pinned and put back with no writer in between: not consumed,
	 * the same records for get_next. */
	CHECK_EQ(grb_reader_get_subbuf(b, 0), 0);
	expect_held(b, 0);
	CHECK_U64(stats(b).read, 0);
	CHECK_U64(stats(b).consumed, 0);
	expect_valid(b);
	CHECK_EQ(grb_reader_put_subbuf(b), 0);
	expect_valid(b);
	CHECK_EQ(grb_reader_get_next(b), 0);
	expect_held(b, 0);
	CHECK_EQ(grb_reader_put_next(b), 0);

	/* Pin 1, then lap the ring twice. */
	CHECK_EQ(grb_reader_get_subbuf(b, SB), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	memcpy(copy, sb.data, sb.data_size);
	put_tags(&raw_ow, chan, 10, 48);
	CHECK_EQ(grb_reader_held(b, &again), 0);
	CHECK(again.data == sb.data);
	CHECK(memcmp(again.data, copy, sb.data_size) == 0);
	expect_held(b, SB);
	expect_valid(b);
	CHECK_EQ(grb_reader_put_subbuf(b), 0);
	expect_valid(b);
	CHECK_EQ(grb_reader_get_subbuf(b, SB), -ESTALE);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), 0);
	CHECK_U64(c, 8 * SB);
	CHECK_U64(p, 11 * SB);
	/* The oldest left is read in place of the one pinned. */
	CHECK_EQ(grb_reader_get_next(b), 0);
	expect_held(b, 8 * SB);
	CHECK_EQ(grb_reader_put_next(b), 0);
	expect_valid(b);
	grb_channel_destroy(chan);
}

/*
 * grb_reader_release() in overwrite mode: a pin is given back unconsumed
 * (the next reader's get_next reads it), a get_next is consumed.
 */
static void test_release_overwrite(void)
{
	struct grb_channel *chan = create(&raw_ow, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	uint64_t c, p;

	put_tags(&raw_ow, chan, 1, 9);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), 0);
	CHECK_EQ(grb_reader_release(b), 0);
	expect_valid(b);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), 0);
	CHECK_U64(c, 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	expect_held(b, 0);
	CHECK_EQ(grb_reader_release(b), 0);
	expect_valid(b);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_snapshot(b, &c, &p), 0);
	CHECK_U64(c, SB);
	CHECK_U64(stats(b).read, PER_SB);
	CHECK_EQ(grb_reader_get_next(b), 0);
	expect_held(b, SB);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_release(b), 0);
	/* The writers still go round the ring with the reader gone. */
	put_tags(&raw_ow, chan, 10, 40);
	expect_valid(b);
	grb_channel_destroy(chan);
}

/*
 * lost_open: the refusals and overwrites counted before the sub-buffer
 * opened, not those after.  Discard mode: a record too big for any
 * sub-buffer and records refused by a full buffer.
 */
static void test_lost_open(void)
{
	struct grb_channel *chan = create(&raw, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(put(&raw, chan, 1, REC), 0);
	CHECK_EQ(put(&raw, chan, 2, 2 * SB), -ENOSPC);        /* lost_big */
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(put(&raw, chan, 3, REC), 0);                  /* opens 1 */
	CHECK_EQ(put(&raw, chan, 4, 2 * SB), -ENOSPC);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.lost_open, 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.records, 1);
	CHECK_U64(sb.lost_open, 1);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_U64(stats(b).lost_big, 2);
	grb_channel_destroy(chan);
}

/*
 * grb_reader_live(): the prefix is read in place (get_next later holds
 * the same bytes at the same address), grows with later commits while
 * what it showed stays as it was, and carries the pos, seq and lost_open
 * the delivered sub-buffer has, on a later lap too.
 */
static void test_live(void)
{
	struct grb_channel *chan = create(&raw, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf live, more, sb;
	static unsigned char copy[SB];
	uint64_t k;
	int i;

	CHECK_EQ(grb_reader_open(b), 0);
	/* Five sub-buffers and some refusals first, so that the live one
	 * is on the second lap with losses before it. */
	for (k = 0; k < 5; k++) {
		CHECK_EQ(put(&raw, chan, k, REC), 0);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		if (k == 3)
			for (i = 0; i < 3; i++)
				CHECK_EQ(put(&raw, chan, 99, REC), -ENOBUFS);
		if (k >= 3) {
			CHECK_EQ(grb_reader_get_next(b), 0);
			CHECK_EQ(grb_reader_put_next(b), 0);
		}
	}
	while (grb_reader_get_next(b) == 0)
		CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(put(&raw, chan, 50, REC), 0);
	CHECK_EQ(grb_reader_live(b, &live), 0);
	CHECK_U64(live.pos, 5 * SB);
	CHECK_U64(live.seq, 5);
	CHECK_U64(live.records, 1);
	CHECK_U64(live.data_size, REC);
	CHECK_U64(live.lost_open, 3);
	/* Nothing is padded yet, and it is not closed. */
	CHECK_U64(live.padded_size, live.data_size);
	CHECK_U64(live.ts_end, 0);
	memcpy(copy, live.data, live.data_size);
	CHECK_EQ(put(&raw, chan, 51, REC), 0);
	CHECK_EQ(grb_reader_live(b, &more), 0);
	CHECK(more.data == live.data);
	CHECK_U64(more.pos, live.pos);
	CHECK_U64(more.records, 2);
	CHECK_U64(more.data_size, 2 * REC);
	CHECK(memcmp(more.data, copy, live.data_size) == 0);
	CHECK_U64(more.lost_open, live.lost_open);
	/* Finalized with it unread: not drained, so -EAGAIN, not -ENODATA. */
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_reader_live(b, &sb), -EAGAIN);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK(sb.data == live.data);
	CHECK_U64(sb.pos, live.pos);
	CHECK_U64(sb.seq, live.seq);
	CHECK_U64(sb.records, 2);
	CHECK_U64(sb.data_size, more.data_size);
	CHECK_U64(sb.lost_open, live.lost_open);
	CHECK(memcmp(sb.data, copy, live.data_size) == 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_live(b, &sb), -ENODATA);
	grb_channel_destroy(chan);

	/* Discard mode, a sub-buffer pinned with get_subbuf is held too
	 * (-EBUSY); the pin gives it back unconsumed, and with it read,
	 * the live prefix is there again. */
	chan = create(&raw, SB, NSUB);
	b = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(put(&raw, chan, 1, REC), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(put(&raw, chan, 2, REC), 0);
	CHECK_EQ(grb_reader_get_subbuf(b, 0), 0);
	CHECK_EQ(grb_reader_live(b, &sb), -EBUSY);
	CHECK_EQ(grb_reader_put_subbuf(b), 0);
	CHECK_EQ(grb_reader_live(b, &sb), -EAGAIN);     /* read that first */
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.pos, 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_live(b, &sb), 0);
	CHECK_U64(sb.pos, SB);
	CHECK_U64(sb.records, 1);
	grb_channel_destroy(chan);

	/* Which refusal comes first: not open, then overwrite mode (even
	 * with a sub-buffer held). */
	chan = create(&raw_ow, SB, NSUB);
	b = grb_channel_buf(chan, 0);
	put_tags(&raw_ow, chan, 1, 5);
	CHECK_EQ(grb_reader_live(b, &sb), -EPERM);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_live(b, &sb), -ENOTSUP);
	CHECK_EQ(grb_reader_put_next(b), 0);
	grb_channel_destroy(chan);
}

/* grb_reader_read(): an empty copy may name no destination, but is still
 * bounded by the data. */
static void test_read_empty(void)
{
	struct grb_channel *chan = create(&raw, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_read(b, 0, NULL, 0), -EPERM);
	put_tags(&raw, chan, 1, 5);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_read(b, 0, NULL, 0), 0);
	CHECK_EQ(grb_reader_read(b, PER_SB * REC, NULL, 0), 0);
	CHECK_EQ(grb_reader_read(b, PER_SB * REC + 1, NULL, 0), -ERANGE);
	CHECK_EQ(grb_reader_put_next(b), 0);
	grb_channel_destroy(chan);
}

/*
 * grb_reader_takeover() of an overwrite-mode buffer whose reader died
 * holding a pin: the new reader holds it, and putting it back leaves it
 * unconsumed.
 */
/* "-ESTALE when it was overwritten or consumed (pos is behind the
 * buffer)": positions never wrap, so one 2^63 or more ahead is not
 * behind; it is not delivered yet, or past the end once finalized. */
static void test_far_ahead(void)
{
	static const uint64_t far[] = {
		UINT64_C(1) << 63, UINT64_MAX & ~(uint64_t)(SB - 1),
		100 * (uint64_t)SB,
	};
	const struct grb_config *cfgs[] = { &raw, &raw_ow };
	unsigned int i, k;

	for (k = 0; k < 2; k++) {
		struct grb_channel *chan = create(cfgs[k], SB, NSUB);
		struct grb_buf *b = grb_channel_buf(chan, 0);

		CHECK_EQ(grb_reader_open(b), 0);
		put_tags(cfgs[k], chan, 1, 5);     /* 0 closed, 1 open */
		for (i = 0; i < sizeof(far) / sizeof(far[0]); i++)
			CHECK_EQ(grb_reader_get_subbuf(b, far[i]), -EAGAIN);
		grb_channel_finalize(chan);
		for (i = 0; i < sizeof(far) / sizeof(far[0]); i++)
			CHECK_EQ(grb_reader_get_subbuf(b, far[i]), -ENODATA);
		/* Nothing was taken: the records are all still there. */
		CHECK_EQ(grb_reader_get_subbuf(b, 0), 0);
		CHECK_EQ(grb_reader_put_subbuf(b), 0);
		CHECK_U64(stats(b).read, 0);
		grb_channel_destroy(chan);
	}
}

static void test_takeover_pinned(void)
{
	struct grb_channel_attr attr = { "takeover", SB, NSUB, NULL };
	struct grb_shm_attr mem = { "reader_contract", NULL, -1 };
	struct grb_channel *chan, *att;
	struct grb_buf *own, *rd;
	int fd;

	CHECK_EQ(grb_channel_create_shared(&ovw_shared, &attr, &mem, &chan), 0);
	fd = grb_channel_shm_fd(chan, 0);
	CHECK_EQ(grb_channel_attach(&ovw_shared, mem.client, &fd, 1,
				    GRB_ATTACH_READER, &att), 0);
	own = grb_channel_buf(chan, 0);
	rd = grb_channel_buf(att, 0);
	put_tags(&ovw_shared, chan, 1, 9);
	CHECK_EQ(grb_reader_open(own), 0);
	CHECK_EQ(grb_reader_get_subbuf(own, SB), 0);
	CHECK_EQ(grb_reader_takeover(rd), 1);
	expect_held(rd, SB);
	CHECK_EQ(grb_reader_get_next(rd), -EBUSY);
	CHECK_EQ(grb_reader_put_next(rd), -EPERM);
	CHECK_EQ(grb_reader_put_subbuf(rd), 0);
	expect_valid(rd);
	CHECK_EQ(grb_reader_get_next(rd), 0);
	expect_held(rd, 0);
	CHECK_EQ(grb_reader_put_next(rd), 0);
	CHECK_EQ(grb_reader_get_next(rd), 0);
	expect_held(rd, SB);
	CHECK_EQ(grb_reader_put_next(rd), 0);
	CHECK_EQ(grb_reader_release(rd), 0);
	grb_channel_destroy(att);
	grb_channel_destroy(chan);
}

/* Add @d to the 64-bit word at @w: reported with a message, then taken
 * back and clean again. */
static void corrupt64(const struct grb_buf *b, void *w, uint64_t d)
{
	_Atomic uint64_t *v = (_Atomic uint64_t *)w;
	char msg[256];

	atomic_fetch_add(v, d);
	msg[0] = '\0';
	CHECK_EQ(grb_buf_validate(b, msg, sizeof(msg)), -EUCLEAN);
	CHECK(msg[0] != '\0');
	atomic_fetch_sub(v, d);
	expect_valid(b);
}

static void corrupt32(const struct grb_buf *b, uint32_t *w, uint32_t d)
{
	char msg[256];

	*w += d;
	msg[0] = '\0';
	CHECK_EQ(grb_buf_validate(b, msg, sizeof(msg)), -EUCLEAN);
	CHECK(msg[0] != '\0');
	*w -= d;
	expect_valid(b);
}

/*
 * grb_buf_validate(): the invariants test_errors.c leaves whole, each
 * broken alone (version, mode, an id in discard mode, the reader's spare,
 * the overwrite count); and how @msg is filled.
 */
static void test_validate(void)
{
	int ow;

	for (ow = 0; ow < 2; ow++) {
		const struct grb_config *cfg = ow ? &raw_ow : &raw;
		struct grb_channel *chan = create(cfg, SB, NSUB);
		struct grb_buf *b = grb_channel_buf(chan, 0);
		char msg[256];
		size_t len;

		CHECK_EQ(grb_reader_open(b), 0);
		put_tags(cfg, chan, 1, 9);
		CHECK_EQ(grb_reader_get_next(b), 0);
		CHECK_EQ(grb_reader_put_next(b), 0);
		expect_valid(b);
		/* No room for a message: none is asked for. */
		CHECK_EQ(grb_buf_validate(b, NULL, 0), 0);
		corrupt32(b, &b->shm->version, 1);
		corrupt32(b, &b->shm->mode, 1);
		if (ow) {
			/* The spare names no sub-buffer; a record counted
			 * overwritten that was not. */
			corrupt64(b, &b->shm->reader_id, 1000);
			corrupt64(b, &b->shm->records_overwritten, 1);
		} else {
			/* Discard-mode ids never change. */
			corrupt64(b, &b->ids[1], 1);
			corrupt64(b, &b->ids[3], UINT64_C(1) << 40);
		}
		/* @cap 0: @msg untouched; a small @cap: cut and terminated;
		 * a large one: one line. */
		b->shm->version += 1;
		memset(msg, 'X', sizeof(msg));
		CHECK_EQ(grb_buf_validate(b, msg, 0), -EUCLEAN);
		CHECK_EQ(msg[0], 'X');
		CHECK_EQ(grb_buf_validate(b, msg, 5), -EUCLEAN);
		CHECK_EQ(msg[4], '\0');
		CHECK_U64(strlen(msg), 4);
		CHECK_EQ(msg[5], 'X');
		CHECK_EQ(grb_buf_validate(b, msg, sizeof(msg)), -EUCLEAN);
		len = strlen(msg);
		CHECK(len > 4 && len < sizeof(msg));
		CHECK(strchr(msg, '\n') == NULL);
		b->shm->version -= 1;
		expect_valid(b);
		grb_channel_destroy(chan);
	}
}

int main(void)
{
	test_read_counted();
	test_spare_held();
	test_spare_pinned();
	test_release_overwrite();
	test_lost_open();
	test_live();
	test_read_empty();
	test_far_ahead();
	test_takeover_pinned();
	test_validate();
	printf("test_reader_contract: passed\n");
	return 0;
}
