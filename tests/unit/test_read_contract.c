/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_read_contract.c - promises of the read-side headers
 * (grb/iter.h, grb/output.h, grb/wait.h, grb/timer.h) that the other unit
 * tests leave unchecked:
 *  - argument checks: a NULL record, an unknown mode before a busy buffer,
 *    a channel iterator that fails on one buffer releases the others;
 *  - destroying a consuming iterator: a delivered sub-buffer it was in is
 *    consumed whole, records it read live are not;
 *  - losses exact in place (a refusal is reported with the first record
 *    of the next sub-buffer that opened after it) and exact in total even
 *    when grb_chan_iter_lost() is asked while a record waits in the merge;
 *  - a channel snapshot: merged, ends where it began, consumes nothing;
 *  - without a clock, the lowest buffer index first among those waiting;
 *  - the callback loops skip an undecodable record and go on; @count may
 *    be NULL; a poll's bad timeout is refused before anything is taken;
 *  - grb_channel_arm() returning 0 leaves the event fd unarmed;
 *  - a tick: GRB_TICK_IDLE leaves an open sub-buffer alone and skips a
 *    buffer that wrote since the last tick; buffer_end runs on the
 *    ticking thread, and a waiting reader is woken.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lenrec.h"
#include "grb/grb.h"
#include "grb/iter.h"
#include "grb/output.h"
#include "grb/timer.h"
#include "grb/wait.h"

#define SB 4096
#define FULL LENREC_FULL
#define TS_BITS 16

/* The thread that ran buffer_end last, and how many times it ran. */
static pthread_t end_thread;
static unsigned int end_calls;

static void on_buffer_end(struct grb_buf *buf, void *header,
			  const struct grb_subbuf_info *info)
{
	(void)buf;
	(void)header;
	(void)info;
	end_thread = pthread_self();
	end_calls++;
}

#define CB { .clock_read = lenrec_clock, .record_header_size = lenrec_header, \
	     .record_decode = lenrec_decode }

static const struct grb_config chan_disc = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, TS_BITS, CB, 0 };
static const struct grb_config chan_ovw = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, TS_BITS, CB, 0 };
static const struct grb_config cpu_disc = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, TS_BITS, CB, 0 };
static const struct grb_config cpu_nots = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0,
	{ .record_header_size = lenrec_header, .record_decode = lenrec_decode }, 0 };
static const struct grb_config chan_end = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, TS_BITS,
	{ .clock_read = lenrec_clock, .record_header_size = lenrec_header,
	  .buffer_end = on_buffer_end, .record_decode = lenrec_decode }, 0 };

/* Write a record whose payload is `tag` (8 bytes), at clock value ts. */
static int put(const struct grb_config *cfg, struct grb_channel *chan,
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

/* A record whose length runs past the sub-buffer: it does not decode. */
static void put_bad(const struct grb_config *cfg, struct grb_channel *chan)
{
	struct grb_ctx ctx = GRB_CTX_INIT(8, 4);
	uint32_t bad = 0x7fff0000u;

	CHECK_EQ(grb_reserve(cfg, chan, &ctx), 0);
	grb_write(cfg, &ctx, &bad, 4);
	grb_write_fill(cfg, &ctx, 0, 12);
	grb_commit(cfg, &ctx);
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
	struct grb_channel_attr attr = { "contract", SB, n, NULL };
	struct grb_channel *chan;

	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	return chan;
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

static cpu_set_t all_cpus;

static void run_anywhere(void)
{
	CHECK_EQ(sched_setaffinity(0, sizeof(all_cpus), &all_cpus), 0);
}

/* Index of the buffer a record came from. */
static unsigned int buf_index(struct grb_channel *chan,
			      const struct grb_iter_record *r)
{
	unsigned int i;

	for (i = 0; i < grb_channel_nr_bufs(chan); i++)
		if (grb_channel_buf(chan, i) == r->buf)
			return i;
	CHECK(0);
	return 0;
}

/*
 * iter.h argument checks: a NULL record is -EINVAL; an unknown mode is
 * -EINVAL before the buffer is found busy; a channel iterator refused by
 * one buffer (-EBUSY) leaves none of the others open.
 */
static void test_args(void)
{
	struct grb_channel *chan = create(&chan_disc, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_chan_iter_stats st;
	struct grb_chan_iter *ci;
	struct grb_buf_iter *it;
	unsigned int n, i;

	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
	CHECK_EQ(grb_buf_iter_next(it, NULL), -EINVAL);
	CHECK_EQ(grb_buf_iter_create(b, (enum grb_iter_mode)7, &it), -EINVAL);
	grb_buf_iter_destroy(it);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	CHECK_EQ(grb_chan_iter_next(ci, NULL), -EINVAL);
	/* A new iterator has seen nothing. */
	memset(&st, 0xff, sizeof(st));
	CHECK_EQ(grb_chan_iter_stats(ci, &st), 0);
	CHECK_U64(st.records + st.late + st.lost + st.undecodable, 0);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);

	chan = create(&cpu_disc, 4);
	n = grb_channel_nr_bufs(chan);
	if (n > 1) {
		/* The last buffer is busy: every buffer before it was opened
		 * by the failed create, and must be released again. */
		CHECK_EQ(grb_reader_open(grb_channel_buf(chan, n - 1)), 0);
		CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci),
			 -EBUSY);
		for (i = 0; i + 1 < n; i++)
			CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
	}
	grb_channel_destroy(chan);
}

/*
 * grb_buf_iter_destroy() in GRB_ITER_CONSUME mode: the delivered
 * sub-buffer it was in is consumed whole; the records it read live are
 * not, and the next reader gets them again.
 */
static void test_destroy(void)
{
	struct grb_channel *chan = create(&chan_disc, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_iter *it;
	struct grb_iter_record r;
	struct grb_buf_stats st;
	int pass;

	CHECK_EQ(put(&chan_disc, chan, 0, 10), 0);
	CHECK_EQ(put(&chan_disc, chan, 1, 11), 0);
	CHECK_EQ(put(&chan_disc, chan, 2, 12), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(put(&chan_disc, chan, 3, 13), 0);
	CHECK_EQ(put(&chan_disc, chan, 4, 14), 0);
	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
	CHECK_EQ(grb_buf_iter_next(it, &r), 0);
	CHECK_U64(tag_of(&r), 0);
	grb_buf_iter_destroy(it);
	/* Records 1 and 2 went with their sub-buffer. */
	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.consumed, SB);
	for (pass = 0; pass < 2; pass++) {
		CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
		CHECK_EQ(grb_buf_iter_next(it, &r), 0);
		CHECK_U64(tag_of(&r), 3);
		CHECK(r.flags & GRB_ITER_LIVE);
		CHECK_EQ(grb_buf_iter_next(it, &r), 0);
		CHECK_U64(tag_of(&r), 4);
		CHECK(r.flags & GRB_ITER_LIVE);
		CHECK_EQ(grb_buf_iter_next(it, &r), -EAGAIN);
		grb_buf_iter_destroy(it);
	}
	grb_channel_destroy(chan);
}

/*
 * Losses exact in place: refusals of a full buffer are reported with the
 * first record of the next sub-buffer that opened after them, not with
 * the records of sub-buffers that were already open.
 */
static void test_lost_in_place(void)
{
	struct grb_channel *chan = create(&chan_disc, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_iter *it;
	struct grb_iter_record r;
	struct grb_buf_stats st;
	uint64_t i, refused = 0, reported = 0, seen_x = 0;
	int ret;

	for (i = 0; i < 2000; i++)
		refused += put(&chan_disc, chan, i, 100 + i) != 0;
	CHECK(refused > 0);
	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.lost_full + st.lost_wrap, refused);
	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), 0);
	/* Through the first sub-buffer, to the first record of the second:
	 * the first is given back, so a writer can open a fifth. */
	do {
		CHECK_EQ(grb_buf_iter_next(it, &r), 0);
		CHECK_U64(r.lost, 0);
	} while (r.pos < SB);
	CHECK_EQ(put(&chan_disc, chan, 9999, 5000), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	while ((ret = grb_buf_iter_next(it, &r)) == 0) {
		reported += r.lost;
		if (tag_of(&r) == 9999) {
			CHECK_U64(r.lost, refused);
			seen_x++;
		} else {
			CHECK_U64(r.lost, 0);
		}
	}
	CHECK_EQ(ret, -ENODATA);
	CHECK_U64(seen_x, 1);
	CHECK_U64(reported + grb_buf_iter_lost(it), refused);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);
}

/*
 * Losses exact in total through the merge, even when grb_chan_iter_lost()
 * is asked while a record of the losing buffer waits for an idle one: the
 * losses it noted are reported with that record, not dropped.
 */
static void test_chan_lost_exact(void)
{
	struct grb_chan_iter_stats st;
	struct grb_buf_stats bst;
	struct grb_chan_iter *ci;
	struct grb_iter_record r;
	struct grb_channel *chan;
	uint64_t i, refused = 0, reported = 0, mid;
	int cpus[2], ret;

	if (ncpus_allowed(cpus) < 2) {
		printf("test_read_contract: merged losses skipped: one CPU\n");
		return;
	}
	chan = create(&cpu_disc, 4);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	/* One buffer fills and refuses; the other stays idle. */
	run_on(cpus[0]);
	for (i = 0; i < 2000; i++)
		refused += put(&cpu_disc, chan, i, 100 + i) != 0;
	run_anywhere();
	CHECK(refused > 0);
	CHECK_EQ(grb_buf_get_stats(grb_channel_buf(chan, (unsigned int)cpus[0]),
				   &bst), 0);
	CHECK_U64(bst.lost_full + bst.lost_wrap, refused);
	CHECK_EQ(grb_chan_iter_next(ci, &r), -EAGAIN);  /* held back */
	mid = grb_chan_iter_lost(ci);
	CHECK_U64(mid, refused);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	while ((ret = grb_chan_iter_next(ci, &r)) == 0)
		reported += r.lost;
	CHECK_EQ(ret, -ENODATA);
	reported += grb_chan_iter_lost(ci);
	CHECK_U64(reported, refused);
	CHECK_EQ(grb_chan_iter_stats(ci, &st), 0);
	CHECK_U64(st.lost + grb_chan_iter_lost(ci), refused);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);
}

/* A channel snapshot: the records as they are, merged; the end it saw
 * when created, while writers go on; nothing consumed. */
static void test_chan_snapshot(void)
{
	struct grb_channel *chan = create(&chan_ovw, 64);
	struct grb_chan_iter_stats st;
	struct grb_chan_iter *ci;
	struct grb_buf_iter *it;
	struct grb_iter_record r;
	uint64_t i, n = 0;

	for (i = 0; i < 50; i++)
		CHECK_EQ(put(&chan_ovw, chan, i, 100 + i), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_SNAPSHOT, &ci), 0);
	while (grb_chan_iter_next(ci, &r) == 0) {
		CHECK_U64(tag_of(&r), n);
		CHECK_U64(r.timestamp, 100 + n);
		CHECK_EQ(r.flags & GRB_ITER_LIVE, 0);
		n++;
		/* Sub-buffers delivered after its creation are not its. */
		CHECK_EQ(put(&chan_ovw, chan, 1000 + n, 200 + n), 0);
		if (n % 10 == 0)
			CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	}
	CHECK_U64(n, 50);
	CHECK_EQ(grb_chan_iter_next(ci, &r), -ENODATA);
	CHECK_EQ(grb_chan_iter_stats(ci, &st), 0);
	CHECK_U64(st.records, 50);
	grb_chan_iter_destroy(ci);
	/* The same records are still there for a consumer. */
	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0), GRB_ITER_CONSUME,
				     &it), 0);
	for (i = 0; i < 50; i++) {
		CHECK_EQ(grb_buf_iter_next(it, &r), 0);
		CHECK_U64(tag_of(&r), i);
	}
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);
}

/* Without a clock: among the buffers with a record waiting, the lowest
 * index first, whichever wrote first. */
static void test_clockless_order(void)
{
	struct grb_chan_iter *ci;
	struct grb_iter_record r;
	struct grb_channel *chan;
	int cpus[2];

	if (ncpus_allowed(cpus) < 2) {
		printf("test_read_contract: clock-less order skipped: one CPU\n");
		return;
	}
	chan = create(&cpu_nots, 4);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	run_on(cpus[1]);
	CHECK_EQ(put(&cpu_nots, chan, 1, 0), 0);
	run_on(cpus[0]);
	CHECK_EQ(put(&cpu_nots, chan, 2, 0), 0);
	run_anywhere();
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 2);
	CHECK_EQ(buf_index(chan, &r), cpus[0]);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	CHECK_U64(tag_of(&r), 1);
	CHECK_EQ(buf_index(chan, &r), cpus[1]);
	CHECK_EQ(grb_chan_iter_next(ci, &r), -EAGAIN);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);
}

struct tally {
	uint64_t calls, lost;
};

static int count_record(void *arg, const struct grb_iter_record *r)
{
	struct tally *t = (struct tally *)arg;

	t->calls++;
	t->lost += r->lost;
	return 0;
}

/* Good, bad, good in one sub-buffer; good in the next; finalized. */
static struct grb_channel *with_bad_record(void)
{
	struct grb_channel *chan = create(&chan_disc, 4);

	CHECK_EQ(put(&chan_disc, chan, 1, 10), 0);
	lenrec_now = 11;
	put_bad(&chan_disc, chan);
	CHECK_EQ(put(&chan_disc, chan, 2, 12), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(put(&chan_disc, chan, 3, 13), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	return chan;
}

/*
 * The callback loops: an undecodable record is skipped and counted as the
 * iterator says, and the loop goes on to the end; @count may be NULL.
 */
static void test_consume_undecodable(void)
{
	struct grb_chan_iter_stats st;
	struct grb_channel *chan;
	struct grb_chan_iter *ci;
	struct grb_buf_iter *it;
	struct tally t = { 0, 0 };
	uint64_t count = 99;

	chan = with_bad_record();
	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0), GRB_ITER_CONSUME,
				     &it), 0);
	CHECK_EQ(grb_buf_iter_consume(it, count_record, &t, &count), -ENODATA);
	CHECK_U64(count, 2);
	CHECK_U64(t.calls, 2);
	CHECK_U64(t.lost, 2);   /* the bad one and the one after it */
	CHECK_EQ(grb_buf_iter_consume(it, count_record, &t, NULL), -ENODATA);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);

	chan = with_bad_record();
	t = (struct tally){ 0, 0 };
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	CHECK_EQ(grb_chan_iter_consume(ci, count_record, &t, NULL), -ENODATA);
	CHECK_U64(t.calls, 2);
	CHECK_U64(t.lost, 2);
	CHECK_EQ(grb_chan_iter_stats(ci, &st), 0);
	CHECK_U64(st.records, 2);
	CHECK_U64(st.undecodable, 1);
	CHECK_U64(st.lost, 2);
	CHECK_EQ(grb_chan_iter_poll(ci, count_record, &t, 0, NULL), -ENODATA);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);
}

/* A poll's timeout is checked as grb_buf_wait() checks it, before any
 * record is taken. */
static void test_poll_timeout_arg(void)
{
	struct grb_channel *chan = create(&chan_disc, 4);
	struct grb_chan_iter *ci;
	struct grb_buf_iter *it;
	struct tally t = { 0, 0 };
	uint64_t count = 99;

	CHECK_EQ(put(&chan_disc, chan, 1, 10), 0);
	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0), GRB_ITER_CONSUME,
				     &it), 0);
	CHECK_EQ(grb_buf_iter_poll(it, count_record, &t, -5, &count), -EINVAL);
	CHECK_U64(t.calls, 0);
	CHECK_EQ(grb_buf_iter_poll(it, count_record, &t, GRB_WAIT_FOREVER,
				   &count), 0);
	CHECK_U64(count, 1);
	grb_buf_iter_destroy(it);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	CHECK_EQ(grb_chan_iter_poll(ci, count_record, &t, -5, &count), -EINVAL);
	CHECK_U64(t.calls, 1);
	CHECK_EQ(grb_chan_iter_poll(ci, count_record, &t, 0, &count), 0);
	CHECK_U64(count, 1);   /* read live again: the buffer iterator's */
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);
}

static int fd_readable(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, 0);
}

/*
 * grb_channel_arm() returning 0 means "read now, the fd is not armed":
 * no buffer may still hold an earlier arming and feed the fd.
 */
static void test_arm_unarmed(void)
{
	struct grb_channel *chan = create(&cpu_disc, 4);
	unsigned int n = grb_channel_nr_bufs(chan), i;
	uint64_t v;
	int fd;

	if (n < 2) {
		printf("test_read_contract: arming skipped: one buffer\n");
		grb_channel_destroy(chan);
		return;
	}
	for (i = 0; i < n; i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
	CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
	/* Buffer 0 wakes the fd; the others are still armed. */
	CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, 0), GRB_FLUSH_EMPTY), 0);
	CHECK_EQ(fd_readable(fd), 1);
	CHECK_EQ(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	CHECK_U64(v, 1);
	/* Buffer 0 is ready: 0, nothing armed, the fd stays quiet. */
	CHECK_EQ(grb_channel_arm(chan, NULL), 0);
	for (i = 1; i < n; i++)
		CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, i),
				       GRB_FLUSH_EMPTY), 0);
	CHECK_EQ(fd_readable(fd), 0);
	grb_channel_destroy(chan);
}

struct ticker_arg {
	struct grb_channel *chan;
	unsigned int flags;
	pthread_t ran_on;
};

static void *tick_main(void *arg)
{
	struct ticker_arg *a = (struct ticker_arg *)arg;

	a->ran_on = pthread_self();
	CHECK_EQ(grb_channel_tick(a->chan, a->flags), 0);
	return NULL;
}

struct waiter {
	struct grb_buf *b;
	int ret;
};

static void *wait_main(void *arg)
{
	struct waiter *w = (struct waiter *)arg;

	w->ret = grb_buf_wait(w->b, NULL, GRB_WAIT_FOREVER);
	return NULL;
}

/*
 * The tick: GRB_TICK_IDLE alone leaves an open sub-buffer alone, and
 * gives no empty sub-buffer to a buffer that wrote since the previous
 * tick; a flushing tick runs buffer_end on its own thread and wakes a
 * waiting reader.
 */
static void test_tick(void)
{
	struct grb_channel *chan = create(&chan_end, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct ticker_arg ta = { chan, GRB_TICK_FLUSH, pthread_self() };
	struct waiter w = { b, 1 };
	struct grb_buf_stats st;
	pthread_t th, tt;

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(put(&chan_end, chan, 1, 10), 0);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_IDLE), 0);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_IDLE), 0);
	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK(st.produced < SB);                /* still open, not closed */
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	CHECK_EQ(end_calls, 0);
	/* Close it from another thread with a waiter blocked. */
	CHECK_EQ(pthread_create(&th, NULL, wait_main, &w), 0);
	usleep(20000);          /* most likely blocked by now; need not be */
	CHECK_EQ(pthread_create(&tt, NULL, tick_main, &ta), 0);
	CHECK_EQ(pthread_join(tt, NULL), 0);
	CHECK_EQ(end_calls, 1);
	CHECK(pthread_equal(end_thread, ta.ran_on));
	CHECK(!pthread_equal(end_thread, pthread_self()));
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(w.ret, 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	/* Wrote since the last tick, then closed by a flush: none open,
	 * but not idle a whole period. */
	CHECK_EQ(put(&chan_end, chan, 2, 20), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.produced, 2 * SB);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_IDLE), 0);
	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.produced, 2 * SB);
	/* Idle a whole period now: an empty sub-buffer. */
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_IDLE), 0);
	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.produced, 3 * SB);
	grb_channel_destroy(chan);
}

int main(void)
{
	/* A lost wake-up would block forever: fail instead. */
	alarm(60);
	CHECK_EQ(sched_getaffinity(0, sizeof(all_cpus), &all_cpus), 0);
	test_args();
	test_destroy();
	test_lost_in_place();
	test_chan_lost_exact();
	test_chan_snapshot();
	test_clockless_order();
	test_consume_undecodable();
	test_poll_timeout_arg();
	test_arm_unarmed();
	test_tick();
	printf("test_read_contract: passed\n");
	return 0;
}
