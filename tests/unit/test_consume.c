/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_consume.c - callback consumption and polling over the
 * iterators (grb/iter.h), and the explicit timers (grb/timer.h): the tick
 * flushes what stayed open a whole period and closes an empty sub-buffer
 * for an idle buffer; the ticker thread does it periodically, so that a
 * channel merge held back by an idle buffer moves on by itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"
#include "grb/iter.h"
#include "grb/timer.h"
#include "grb/wait.h"

#define SB 4096

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Records: a u32 length then the payload; full 64-bit timestamps. */
static size_t hdr(const struct grb_config *cfg, size_t offset, size_t *pre,
		  const struct grb_ctx *ctx)
{
	(void)cfg;
	(void)ctx;
	*pre = grb_offset_align(offset, 8);
	return *pre + 16;
}

static int decode(const struct grb_config *cfg, const void *subbuf,
		  size_t offset, size_t data_size, struct grb_record *rec)
{
	const char *p = (const char *)subbuf;
	size_t at = offset + grb_offset_align(offset, 8);
	uint64_t len;

	(void)cfg;
	if (at + 16 > data_size)
		return -EINVAL;
	memcpy(&len, p + at, 8);
	memcpy(&rec->timestamp, p + at + 8, 8);
	rec->offset = at;
	rec->header_len = 16;
	rec->rflags = GRB_RFLAG_FULL_TIMESTAMP;
	rec->payload_off = at + 16;
	rec->payload_len = (size_t)len;
	if (len > data_size - rec->payload_off)
		return -EINVAL;
	rec->next = rec->payload_off + rec->payload_len;
	return 0;
}

#define CB { .clock_read = clock_ns, .record_header_size = hdr, \
	     .record_decode = decode }

static const struct grb_config disc = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 64, CB, 0 };
static const struct grb_config cpu_disc = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 64, CB, 0 };

static void put(const struct grb_config *cfg, struct grb_channel *chan,
		uint64_t tag)
{
	struct grb_ctx ctx = GRB_CTX_INIT(8, 8);
	uint64_t len = 8;

	CHECK_EQ(grb_reserve(cfg, chan, &ctx), 0);
	grb_write(cfg, &ctx, &len, 8);
	grb_write(cfg, &ctx, &ctx.timestamp, 8);
	grb_write(cfg, &ctx, &tag, 8);
	grb_commit(cfg, &ctx);
}

static struct grb_channel *create(const struct grb_config *cfg)
{
	struct grb_channel_attr attr = { "consume", SB, 64, NULL };
	struct grb_channel *chan;

	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	return chan;
}

struct seen {
	uint64_t n, next_tag, stop_at;
};

/* Checks tags arrive in order; stops the loop once at stop_at. */
static int on_record(void *arg, const struct grb_iter_record *r)
{
	struct seen *s = (struct seen *)arg;
	uint64_t tag;

	CHECK_EQ(r->payload_len, 8);
	memcpy(&tag, r->payload, 8);
	CHECK_U64(tag, s->next_tag);
	s->next_tag++;
	s->n++;
	return s->n == s->stop_at;
}

static void test_consume(void)
{
	struct grb_channel *chan = create(&disc);
	struct grb_buf_iter *it;
	struct seen s = { 0, 0, 30 };
	uint64_t count, i;

	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0), GRB_ITER_CONSUME,
				     &it), 0);
	/* Refused: *count still says how many were passed (none). */
	count = 7;
	CHECK_EQ(grb_buf_iter_consume(NULL, on_record, &s, &count), -EINVAL);
	CHECK_U64(count, 0);
	count = 7;
	CHECK_EQ(grb_buf_iter_consume(it, NULL, &s, &count), -EINVAL);
	CHECK_U64(count, 0);
	count = 7;
	CHECK_EQ(grb_chan_iter_consume(NULL, on_record, &s, &count), -EINVAL);
	CHECK_U64(count, 0);
	count = 7;
	CHECK_EQ(grb_buf_iter_poll(it, on_record, &s, -2, &count), -EINVAL);
	CHECK_U64(count, 0);
	count = 7;
	CHECK_EQ(grb_chan_iter_poll(NULL, on_record, &s, 0, &count), -EINVAL);
	CHECK_U64(count, 0);
	CHECK_EQ(grb_buf_iter_consume(it, on_record, &s, &count), 0);
	CHECK_U64(count, 0);
	for (i = 0; i < 100; i++)
		put(&disc, chan, i);
	/* The callback stops at the 30th record; the rest stays. */
	CHECK_EQ(grb_buf_iter_consume(it, on_record, &s, &count), -ECANCELED);
	CHECK_U64(count, 30);
	CHECK_EQ(grb_buf_iter_consume(it, on_record, &s, &count), 0);
	CHECK_U64(count, 70);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_buf_iter_consume(it, on_record, &s, &count), -ENODATA);
	CHECK_U64(count, 0);
	CHECK_U64(s.n, 100);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);
}

struct poller {
	struct grb_buf_iter *it;
	struct seen s;
	int ret;
	uint64_t count;
};

static void *poll_main(void *arg)
{
	struct poller *p = (struct poller *)arg;

	p->ret = grb_buf_iter_poll(p->it, on_record, &p->s, GRB_WAIT_FOREVER,
				   &p->count);
	return NULL;
}

/* A blocked poll returns on one live record: no flush, no full page. */
static void test_poll(void)
{
	struct grb_channel *chan = create(&disc);
	struct poller p = { NULL, { 0, 0, 0 }, 1, 0 };
	uint64_t count, t0;
	pthread_t t;

	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0), GRB_ITER_CONSUME,
				     &p.it), 0);
	CHECK_EQ(grb_buf_iter_poll(p.it, on_record, &p.s, 0, &count),
		 -ETIMEDOUT);
	CHECK_EQ(pthread_create(&t, NULL, poll_main, &p), 0);
	usleep(20000);
	put(&disc, chan, 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(p.ret, 0);
	CHECK_U64(p.count, 1);
	/* Having read that record live, a poll sleeps until another one:
	 * it must not find the one it read and spin (its CPU time stays far
	 * below the 100 ms it waits). */
	t0 = thread_cpu_ns();
	CHECK_EQ(grb_buf_iter_poll(p.it, on_record, &p.s, 100000000, &count),
		 -ETIMEDOUT);
	CHECK(thread_cpu_ns() - t0 < 30000000);
	grb_buf_iter_destroy(p.it);
	grb_channel_destroy(chan);
}

static void *poll_timed_main(void *arg)
{
	struct poller *p = (struct poller *)arg;

	p->ret = grb_buf_iter_poll(p->it, on_record, &p->s, 150000000,
				   &p->count);
	return NULL;
}

struct chan_poller {
	struct grb_chan_iter *ci;
	struct seen s;
	int ret;
	uint64_t count;
};

static void *chan_poll_main(void *arg)
{
	struct chan_poller *p = (struct chan_poller *)arg;

	p->ret = grb_chan_iter_poll(p->ci, on_record, &p->s, GRB_WAIT_FOREVER,
				    &p->count);
	return NULL;
}

/*
 * "If there was nothing, wait for something and consume it": a wake-up
 * that brings no record (an empty flush delivers a header-only
 * sub-buffer) sends the poll back to waiting, it does not return 0 with
 * nothing consumed; the record that comes next ends it.  Both polls.
 */
static void test_poll_empty_wake(void)
{
	struct grb_channel *chan = create(&disc);
	struct poller p = { NULL, { 0, 0, 0 }, 1, 0 };
	struct chan_poller cp = { NULL, { 0, 0, 0 }, 1, 0 };
	pthread_t t;

	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0), GRB_ITER_CONSUME,
				     &p.it), 0);
	CHECK_EQ(pthread_create(&t, NULL, poll_main, &p), 0);
	usleep(20000);
	CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, 0), GRB_FLUSH_EMPTY), 0);
	usleep(20000);
	put(&disc, chan, 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(p.ret, 0);
	CHECK_U64(p.count, 1);
	/* With a timeout and nothing but such wake-ups (the flush delivers
	 * the sub-buffer whose record the poll read live): -ETIMEDOUT. */
	CHECK_EQ(pthread_create(&t, NULL, poll_timed_main, &p), 0);
	usleep(20000);
	CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, 0), GRB_FLUSH_EMPTY), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(p.ret, -ETIMEDOUT);
	CHECK_U64(p.count, 0);
	grb_buf_iter_destroy(p.it);
	grb_channel_destroy(chan);

	chan = create(&disc);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &cp.ci), 0);
	CHECK_EQ(pthread_create(&t, NULL, chan_poll_main, &cp), 0);
	usleep(20000);
	CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, 0), GRB_FLUSH_EMPTY), 0);
	usleep(20000);
	put(&disc, chan, 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(cp.ret, 0);
	CHECK_U64(cp.count, 1);
	grb_chan_iter_destroy(cp.ci);
	grb_channel_destroy(chan);
}

/* One tick flushes a sub-buffer only after it stayed open a period; an
 * idle buffer gets an empty sub-buffer. */
static void test_tick(void)
{
	struct grb_channel *chan = create(&disc);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	struct grb_ticker *t;

	CHECK_EQ(grb_channel_tick(NULL, 0), -EINVAL);
	CHECK_EQ(grb_channel_tick(chan, 1u << 7), -EINVAL);
	CHECK_EQ(grb_ticker_start(NULL, 1000, 0, &t), -EINVAL);
	CHECK_EQ(grb_ticker_start(chan, 0, 0, &t), -EINVAL);
	CHECK_EQ(grb_ticker_start(chan, 1000, 0, NULL), -EINVAL);
	CHECK_EQ(grb_ticker_start(chan, 1000, 1u << 7, &t), -EINVAL);
	CHECK_EQ(grb_ticker_stop(NULL), -EINVAL);
	CHECK_EQ(grb_reader_open(b), 0);
	put(&disc, chan, 1);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_FLUSH), 0);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);      /* first seen open */
	put(&disc, chan, 2);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_FLUSH), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);            /* open a period */
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.records, 2);
	CHECK_EQ(grb_reader_put_next(b), 0);
	/* Idle since the last tick, nothing open: an empty sub-buffer. */
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_FLUSH), 0);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_FLUSH | GRB_TICK_IDLE), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.records, 0);
	CHECK(sb.ts_end > 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	grb_channel_destroy(chan);

	/* Idle ticks cost a sub-buffer each: in overwrite mode they push
	 * the oldest out; in discard mode, full, they fail quietly. */
	{
		static const struct grb_config ow = {
			GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 64, CB, 0 };
		struct grb_channel_attr a4 = { "idle", SB, 4, NULL };
		struct grb_buf_stats st;

		CHECK_EQ(grb_channel_create(&ow, &a4, &chan), 0);
		b = grb_channel_buf(chan, 0);
		CHECK_EQ(grb_reader_open(b), 0);
		put(&ow, chan, 1);
		put(&ow, chan, 2);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		for (int i = 0; i < 5; i++)
			CHECK_EQ(grb_channel_tick(chan, GRB_TICK_IDLE), 0);
		CHECK_EQ(grb_buf_get_stats(b, &st), 0);
		CHECK_U64(st.overwritten, 2);
		grb_channel_destroy(chan);

		CHECK_EQ(grb_channel_create(&disc, &a4, &chan), 0);
		b = grb_channel_buf(chan, 0);
		CHECK_EQ(grb_reader_open(b), 0);
		for (int i = 0; i < 4; i++)
			CHECK_EQ(grb_channel_tick(chan, GRB_TICK_IDLE), 0);
		/* Full of empty sub-buffers: the next tick changes nothing
		 * and counts no loss. */
		CHECK_EQ(grb_buf_get_stats(b, &st), 0);
		CHECK_U64(st.produced, 4 * SB);
		CHECK_EQ(grb_channel_tick(chan, GRB_TICK_IDLE), 0);
		CHECK_EQ(grb_buf_get_stats(b, &st), 0);
		CHECK_U64(st.produced, 4 * SB);
		CHECK_U64(st.lost_full + st.lost_wrap, 0);
		CHECK_EQ(grb_reader_get_next(b), 0);
		CHECK_EQ(grb_reader_put_next(b), 0);
		CHECK_EQ(grb_channel_tick(chan, GRB_TICK_IDLE), 0);
		CHECK_EQ(grb_buf_get_stats(b, &st), 0);
		CHECK_U64(st.produced, 5 * SB);
		grb_channel_destroy(chan);
	}

	/* The first tick of a channel that never wrote: idle since its
	 * creation, an empty sub-buffer. */
	chan = create(&disc);
	b = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_FLUSH), 0);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_IDLE), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.records, 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
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

/*
 * A merge held back by an idle buffer: polling waits on that buffer, and
 * the ticker thread's empty sub-buffers let it go on.
 */
static void test_merge_ticker(void)
{
	struct grb_channel *chan;
	struct grb_chan_iter *ci;
	struct grb_ticker *t;
	struct seen s = { 0, 0, 0 };
	cpu_set_t all, one;
	uint64_t count, total = 0;
	int cpus[2], i, ret;

	if (ncpus_allowed(cpus) < 2) {
		printf("test_consume: merge with an idle buffer skipped: one CPU\n");
		return;
	}
	CHECK_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
	chan = create(&cpu_disc);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	/* Only one CPU's buffer writes; the other stays idle. */
	CPU_ZERO(&one);
	CPU_SET(cpus[1], &one);
	CHECK_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	for (i = 0; i < 10; i++)
		put(&cpu_disc, chan, (uint64_t)i);
	CHECK_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
	CHECK_EQ(grb_chan_iter_consume(ci, on_record, &s, &count), 0);
	CHECK_U64(count, 0);                    /* held back */
	CHECK_EQ(grb_chan_iter_poll(ci, on_record, &s, 30000000, &count),
		 -ETIMEDOUT);                   /* nothing moves it */
	CHECK_EQ(grb_ticker_start(chan, 5000000,
				  GRB_TICK_FLUSH | GRB_TICK_IDLE, &t), 0);
	while (total < 10) {
		ret = grb_chan_iter_poll(ci, on_record, &s, 2000000000, &count);
		CHECK_EQ(ret, 0);
		total += count;
	}
	CHECK_EQ(grb_ticker_stop(t), 0);
	CHECK_U64(s.n, 10);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);
}

int main(void)
{
	alarm(60);
	test_consume();
	test_poll();
	test_poll_empty_wake();
	test_tick();
	test_merge_ticker();
	printf("test_consume: passed\n");
	return 0;
}
