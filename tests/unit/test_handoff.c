/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_handoff.c - a reservation committed (or discarded) by
 * another thread than the one that reserved it.
 *
 * grb/writer.h lets a thread hand a reserved context to another thread,
 * which commits it.  The reservation holds a nesting level of the thread
 * that reserved it; the commit must give that level back to that thread,
 * and leave the committing thread's own count alone.  Before the fix, the
 * commit decremented the committing thread's counter: the reserving
 * thread's never came down and the committer's wrapped, after which both
 * threads were refused with -EBUSY (counted as lost_nesting).
 *
 * Two threads take turns in lock step (a mutex and a condition variable,
 * which also publish the slot's bytes to the committer): one reserves and
 * writes a record, the other commits it (or now and then discards it),
 * many times, first in one direction, then in the other.  Then each thread checks that exactly
 * GRB_MAX_NESTING reservations can be open on it and the next one is
 * refused, and the reader gets every committed record once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "grb/grb.h"

#define ROUNDS 300
#define REC 16

static const struct grb_config cfg = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 }, 0,
};

/* One mailbox per direction: the context in flight and whose turn. */
struct box {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct grb_ctx ctx;
	int full;
};

struct side {
	int id;
	struct grb_channel *chan;
	struct box *out, *in;   /* contexts sent, contexts received */
	uint64_t committed, discarded;
	struct grb_ctx ack;     /* an empty message: "done, send the next" */
};

static void box_put(struct box *b, const struct grb_ctx *ctx)
{
	pthread_mutex_lock(&b->lock);
	while (b->full)
		pthread_cond_wait(&b->cond, &b->lock);
	b->ctx = *ctx;
	b->full = 1;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

static void box_get(struct box *b, struct grb_ctx *ctx)
{
	pthread_mutex_lock(&b->lock);
	while (!b->full)
		pthread_cond_wait(&b->cond, &b->lock);
	*ctx = b->ctx;
	b->full = 0;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/* Exactly GRB_MAX_NESTING reservations fit on this thread, not one more. */
static void check_nesting_exact(struct grb_channel *chan, int id)
{
	struct grb_ctx ctx[GRB_MAX_NESTING + 1];
	uint64_t tag;
	int i;

	for (i = 0; i < GRB_MAX_NESTING; i++) {
		ctx[i] = (struct grb_ctx)GRB_CTX_INIT(REC, 1);
		CHECK_EQ(grb_reserve(&cfg, chan, &ctx[i]), 0);
		tag = (uint64_t)id << 32 | (0xfff00u + (uint64_t)i);
		grb_write(&cfg, &ctx[i], &tag, sizeof(tag));
		grb_write_fill(&cfg, &ctx[i], 0, REC - sizeof(tag));
	}
	ctx[i] = (struct grb_ctx)GRB_CTX_INIT(REC, 1);
	CHECK_EQ(grb_reserve(&cfg, chan, &ctx[i]), -EBUSY);
	for (i = GRB_MAX_NESTING - 1; i >= 0; i--)
		grb_commit(&cfg, &ctx[i]);
}

/* Reserve and write a record, and send it to the other thread. */
static void send_one(struct side *s, int round)
{
	struct grb_ctx mine = GRB_CTX_INIT(REC, 1);
	uint64_t tag;

	CHECK_EQ(grb_reserve(&cfg, s->chan, &mine), 0);
	tag = (uint64_t)s->id << 32 | (uint64_t)round;
	grb_write(&cfg, &mine, &tag, sizeof(tag));
	grb_write_fill(&cfg, &mine, 0x11, REC - sizeof(tag));
	box_put(s->out, &mine);
}

/* Receive a record from the other thread and commit or discard it. */
static void finish_one(struct side *s, int round)
{
	struct grb_ctx theirs;

	box_get(s->in, &theirs);
	/* Now and then discarded instead (it is the last reservation, as
	 * the sender waits for it before the next). */
	if (round % 7 == 3) {
		CHECK_EQ(grb_try_discard_reserve(&cfg, &theirs), 0);
		s->discarded++;
	} else {
		grb_commit(&cfg, &theirs);
		s->committed++;
	}
}

static void *side_main(void *arg)
{
	struct side *s = (struct side *)arg;
	int round;

	/*
	 * One direction at a time: first thread 1 reserves and thread 2
	 * finishes, then the other way round.  (Exchanging in both
	 * directions at once would keep each thread's count balanced even
	 * when a commit charged the wrong thread.)  The acknowledgement
	 * keeps at most one record in flight.
	 */
	for (round = 0; round < ROUNDS; round++) {
		if (s->id == 1) {
			send_one(s, round);
			box_get(s->in, &s->ack);
		} else {
			finish_one(s, round);
			box_put(s->out, &s->ack);
		}
	}
	for (round = 0; round < ROUNDS; round++) {
		if (s->id == 2) {
			send_one(s, round);
			box_get(s->in, &s->ack);
		} else {
			finish_one(s, round);
			box_put(s->out, &s->ack);
		}
	}
	/* Both threads can still nest exactly as deep as the bound says. */
	check_nesting_exact(s->chan, s->id);
	return NULL;
}

int main(void)
{
	struct grb_channel_attr attr = { "handoff", 4096, 256, NULL };
	struct box ab = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
			  GRB_CTX_INIT(0, 1), 0 };
	struct box ba = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
			  GRB_CTX_INIT(0, 1), 0 };
	struct side a = { 1, NULL, &ab, &ba, 0, 0, GRB_CTX_INIT(0, 1) };
	struct side b = { 2, NULL, &ba, &ab, 0, 0, GRB_CTX_INIT(0, 1) };
	struct grb_channel *chan;
	struct grb_buf *buf;
	struct grb_buf_stats st;
	struct grb_reader_subbuf sb;
	pthread_t ta, tb;
	uint64_t records = 0, tag;
	size_t off;
	int ret;

	CHECK_EQ(grb_channel_create(&cfg, &attr, &chan), 0);
	a.chan = b.chan = chan;
	CHECK_EQ(pthread_create(&ta, NULL, side_main, &a), 0);
	CHECK_EQ(pthread_create(&tb, NULL, side_main, &b), 0);
	CHECK_EQ(pthread_join(ta, NULL), 0);
	CHECK_EQ(pthread_join(tb, NULL), 0);
	CHECK(a.discarded + b.discarded > 0);
	/* And the main thread, which committed nothing, is untouched. */
	check_nesting_exact(chan, 3);

	buf = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	CHECK_U64(st.lost_nesting, 3);          /* one per check, no more */
	CHECK_U64(st.discarded, a.discarded + b.discarded);
	CHECK_U64(st.written, a.committed + b.committed + 3 * GRB_MAX_NESTING);
	CHECK_EQ(grb_reader_open(buf), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	while ((ret = grb_reader_get_next(buf)) == 0) {
		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		CHECK_U64(sb.data_size, sb.records * REC);
		for (off = 0; off < sb.data_size; off += REC) {
			CHECK_EQ(grb_reader_read(buf, off, &tag, sizeof(tag)), 0);
			CHECK((tag >> 32) >= 1 && (tag >> 32) <= 3);
		}
		records += sb.records;
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK_EQ(ret, -ENODATA);
	CHECK_U64(records, st.written);
	CHECK_EQ(grb_buf_validate(buf, NULL, 0), 0);
	grb_channel_destroy(chan);
	printf("test_handoff: %u rounds each way, %llu discarded: passed\n",
	       ROUNDS, (unsigned long long)(a.discarded + b.discarded));
	return 0;
}
