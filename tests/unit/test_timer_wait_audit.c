/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_timer_wait_audit.c - promises of grb/timer.h and
 * grb/wait.h that test_wait.c, test_ticker.c, test_consume.c and
 * test_read_contract.c leave unchecked:
 *  - GRB_TICK_FLUSH closes only a sub-buffer that held data at the
 *    previous tick, not one that opened since; a flushing tick feeds an
 *    armed event fd;
 *  - the first tick of a handle attached later counts from the buffer's
 *    creation: an empty sub-buffer only if the buffer never wrote; the
 *    next one flushes there as anywhere;
 *  - the ticker: no tick before a period has passed, none after
 *    grb_ticker_stop() returns, a stop that does not wait out a long
 *    period, the starter's signal mask and no other, and the negated
 *    error of a pthread_create() that fails;
 *  - the byte watermark counts the client's sub-buffer header of the
 *    open sub-buffer; a subbufs above the ring's size is the ring's size;
 *  - a timeout past CLOCK_MONOTONIC's range waits (no early -ETIMEDOUT),
 *    and a signal does not end a channel wait early;
 *  - the argument checks come before -EPERM for a channel wait too;
 *  - what a wake-up reports is readable at once (acquire);
 *  - no wait bit is left set once a wait or an arming that did not arm
 *    returns, so writers pay nothing;
 *  - the event fd is non-blocking, readable only after an arming, and
 *    its creation's errno is returned (-EMFILE) with no fd kept;
 *  - an arming refused with -EPERM leaves an earlier arming in place,
 *    and one its reader blocks over in a wait with a higher watermark
 *    still feeds the fd at its own;
 *  - a reader attached to shared buffers is woken by commits made
 *    through another handle; it has no event fd, which those commits
 *    could not write (-ENOTSUP).
 *
 * Raw clients (tagrec.h): a record is its payload, the first 8 bytes a
 * tag; four 1000-byte records fill a 4096-byte sub-buffer and the fifth
 * opens the next.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"
#include "grb/shm.h"
#include "grb/timer.h"
#include "grb/wait.h"
#include "tagrec.h"

#define NSUB 4
#define REC 1000
#define HDR 32

static const struct grb_config pcpu = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 }, 0,
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void put_tags(const struct grb_config *cfg, struct grb_channel *chan,
		     uint64_t first, uint64_t last)
{
	uint64_t tag;

	for (tag = first; tag <= last; tag++)
		CHECK_EQ(put(cfg, chan, tag, REC), 0);
}

static uint64_t produced(const struct grb_buf *b)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	return st.produced;
}

static int fd_readable(int fd)
{
	struct pollfd pfd = { fd, POLLIN, 0 };

	return poll(&pfd, 1, 0);
}

/* The wait bits of every buffer of @chan, or-ed. */
static uint64_t wait_bits(struct grb_channel *chan)
{
	uint64_t w = 0;
	unsigned int i;

	for (i = 0; i < grb_channel_nr_bufs(chan); i++)
		w |= atomic_load(&grb_channel_buf(chan, i)->shm->waiting);
	return w;
}

/*
 * GRB_TICK_FLUSH: sub-buffer 0 held data at the first tick; by the
 * second, it filled and sub-buffer 1 opened.  Sub-buffer 1 did not hold
 * data at the previous tick: left open.  The third tick closes it.
 */
static void test_tick_flush_opened_since(void)
{
	struct grb_channel *chan = create(&raw, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct tags t = { { 0 }, 0, 0 };
	static const uint64_t want[] = { 1, 2, 3, 4, 5 };

	CHECK_EQ(grb_reader_open(b), 0);
	put_tags(&raw, chan, 1, 1);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_FLUSH), 0);
	put_tags(&raw, chan, 2, 5);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_FLUSH), 0);
	CHECK_EQ(take(b, 0, REC, &t), 0);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	CHECK_U64(produced(b), SB + REC);       /* still open */
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_FLUSH), 0);
	CHECK_EQ(take(b, 0, REC, &t), 0);
	expect_tags(&t, want, 5);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	grb_channel_destroy(chan);
}

/* A flushing tick wakes an armed event fd (grb/timer.h: "waiting readers
 * are woken"), once. */
static void test_tick_feeds_fd(void)
{
	struct grb_channel *chan = create(&raw, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	uint64_t v;
	int fd;

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
	put_tags(&raw, chan, 1, 1);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_FLUSH), 0);
	CHECK_EQ(fd_readable(fd), 0);
	CHECK_EQ(grb_channel_tick(chan, GRB_TICK_FLUSH), 0);
	CHECK_EQ(fd_readable(fd), 1);
	CHECK_EQ(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	CHECK_U64(v, 1);
	CHECK_U64(wait_bits(chan), 0);
	grb_channel_destroy(chan);
}

/*
 * The first tick of a handle attached later: "idle since the buffer was
 * created".  A buffer that wrote (even with nothing open now) gets no
 * empty sub-buffer; one that never wrote gets one.  A first tick closes
 * nothing either: there was no previous tick for the data to be seen at.
 */
static void test_tick_attached(void)
{
	static const struct grb_config shared = {
		GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 },
		GRB_CONFIG_SHARED,
	};
	struct grb_channel_attr attr = { "tickatt", SB, NSUB, NULL };
	struct grb_shm_attr sattr = { "audit", NULL, -1 };
	struct grb_channel *own, *att;
	struct grb_buf *b;
	uint64_t pos;
	int fd, wrote;

	for (wrote = 0; wrote < 3; wrote++) {
		CHECK_EQ(grb_channel_create_shared(&shared, &attr, &sattr,
						   &own), 0);
		if (wrote)
			put_tags(&shared, own, 1, 5);   /* 0 closed, 1 open */
		if (wrote == 2)
			CHECK_EQ(grb_buf_flush(grb_channel_buf(own, 0),
					       GRB_FLUSH_ACTIVE), 0);
		fd = grb_channel_shm_fd(own, 0);
		CHECK(fd >= 0);
		CHECK_EQ(grb_channel_attach(&shared, "audit", &fd, 1,
					    GRB_ATTACH_READER, &att), 0);
		b = grb_channel_buf(att, 0);
		pos = produced(b);
		CHECK_U64(pos, wrote == 0 ? 0 : wrote == 1 ? SB + REC : 2 * SB);
		CHECK_EQ(grb_channel_tick(att, GRB_TICK_FLUSH |
					  GRB_TICK_IDLE), 0);
		CHECK_U64(produced(b), wrote ? pos : SB);
		/* From then on, ticks there work as anywhere: the open
		 * sub-buffer seen at this tick is closed at the next. */
		if (wrote == 1) {
			CHECK_EQ(grb_channel_tick(att, GRB_TICK_FLUSH), 0);
			CHECK_U64(produced(b), 2 * SB);
		}
		grb_channel_destroy(att);
		grb_channel_destroy(own);
	}
}

/* What the ticker's ticks ran: buffer_end of every empty sub-buffer. */
static atomic_uint end_calls;
static atomic_int mask_taken;
static sigset_t end_mask;
static pthread_t end_thread;

static void on_end(struct grb_buf *buf, void *hdr,
		   const struct grb_subbuf_info *info)
{
	(void)buf;
	(void)hdr;
	(void)info;
	if (!atomic_load(&mask_taken)) {
		CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &end_mask), 0);
		end_thread = pthread_self();
		atomic_store(&mask_taken, 1);
	}
	atomic_fetch_add(&end_calls, 1);
}

static const struct grb_config ticked = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 0, { .buffer_end = on_end },
	0,
};

/* Wait up to 5 s for the ticker's @n-th buffer_end. */
static void await_ends(unsigned int n)
{
	uint64_t t0 = now_ns();

	while (atomic_load(&end_calls) < n) {
		CHECK(now_ns() - t0 < 5000000000u);
		usleep(1000);
	}
}

/* The ticker's signal mask is its starter's, SIGUSR2 blocked or not. */
static void test_ticker_mask(void)
{
	struct grb_channel *chan = create(&ticked, SB, NSUB);
	struct grb_ticker *t;
	sigset_t old, set, mine;
	int blocked, sig;

	CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &old), 0);
	for (blocked = 0; blocked < 2; blocked++) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		CHECK_EQ(pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK,
					 &set, NULL), 0);
		CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &mine), 0);
		atomic_store(&mask_taken, 0);
		atomic_store(&end_calls, 0);
		CHECK_EQ(grb_ticker_start(chan, 1000000, GRB_TICK_IDLE, &t), 0);
		await_ends(1);
		CHECK_EQ(grb_ticker_stop(t), 0);
		CHECK(!pthread_equal(end_thread, pthread_self()));
		CHECK_EQ(sigismember(&end_mask, SIGUSR2), blocked);
		for (sig = 1; sig < SIGRTMIN; sig++)
			CHECK_EQ(sigismember(&end_mask, sig),
				 sigismember(&mine, sig));
	}
	CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	grb_channel_destroy(chan);
}

/*
 * Every period, from the start: no tick before a period has passed, so
 * at most elapsed / period of them (a loaded machine makes fewer); and
 * none once grb_ticker_stop() has returned (it joined the thread).
 */
static void test_ticker_schedule(void)
{
	const uint64_t period = 20000000;       /* 20 ms */
	struct grb_channel *chan = create(&ticked, SB, NSUB);
	struct grb_ticker *t;
	uint64_t t0, elapsed;
	unsigned int n;

	atomic_store(&end_calls, 0);
	t0 = now_ns();
	CHECK_EQ(grb_ticker_start(chan, period, GRB_TICK_IDLE, &t), 0);
	await_ends(2);
	usleep(60000);
	CHECK_EQ(grb_ticker_stop(t), 0);
	elapsed = now_ns() - t0;
	n = atomic_load(&end_calls);
	CHECK(n >= 2);
	if (n > elapsed / period)
		fprintf(stderr, "%u ticks in %.1f ms\n", n, elapsed / 1e6);
	CHECK(n <= elapsed / period);
	usleep(5 * period / 1000);
	CHECK_EQ(atomic_load(&end_calls), n);
	grb_channel_destroy(chan);
}

/* A stop does not wait for the period to end; a period not over yet has
 * made no tick. */
static void test_ticker_long_period(void)
{
	struct grb_channel *chan = create(&ticked, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_ticker *t;
	uint64_t t0;

	atomic_store(&end_calls, 0);
	CHECK_EQ(grb_ticker_start(chan, UINT64_C(3600000000000),
				  GRB_TICK_IDLE | GRB_TICK_FLUSH, &t), 0);
	usleep(20000);
	t0 = now_ns();
	CHECK_EQ(grb_ticker_stop(t), 0);
	CHECK(now_ns() - t0 < 2000000000u);
	CHECK_EQ(atomic_load(&end_calls), 0);
	CHECK_U64(produced(b), 0);
	grb_channel_destroy(chan);
}

static void *noop_main(void *arg)
{
	return arg;
}

/*
 * "the negated error number pthread_create() returned": threads whose
 * default stack cannot be mapped.  Where such a stack maps after all
 * (no address space limit hit), there is nothing to check.
 */
static void test_ticker_create_fails(void)
{
	struct grb_channel *chan = create(&ticked, SB, NSUB);
	pthread_attr_t def, huge;
	struct grb_ticker *t = NULL;
	pthread_t th;
	int ret;

	CHECK_EQ(pthread_getattr_default_np(&def), 0);
	CHECK_EQ(pthread_attr_init(&huge), 0);
	CHECK_EQ(pthread_attr_setstacksize(&huge, (size_t)1 << 47), 0);
	CHECK_EQ(pthread_setattr_default_np(&huge), 0);
	ret = pthread_create(&th, NULL, noop_main, NULL);
	if (ret == 0) {
		CHECK_EQ(pthread_join(th, NULL), 0);
		printf("test_timer_wait_audit: a huge stack mapped: "
		       "pthread_create() failure not checked\n");
	} else {
		CHECK_EQ(grb_ticker_start(chan, 1000000, GRB_TICK_IDLE, &t),
			 -ret);
	}
	CHECK_EQ(pthread_setattr_default_np(&def), 0);
	pthread_attr_destroy(&huge);
	pthread_attr_destroy(&def);
	/* Threads start again, and the channel was not touched. */
	CHECK_EQ(grb_ticker_start(chan, UINT64_C(3600000000000),
				  GRB_TICK_IDLE, &t), 0);
	CHECK_EQ(grb_ticker_stop(t), 0);
	CHECK_U64(produced(grb_channel_buf(chan, 0)), 0);
	grb_channel_destroy(chan);
}

/*
 * The byte watermark counts the open sub-buffer's live bytes "its
 * client header included (grb_reader_live()'s data_size)".
 */
static size_t hdr_size(void)
{
	return HDR;
}

static void test_bytes_header(void)
{
	static const struct grb_config hdr_disc = {
		GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0,
		{ .subbuf_header_size = hdr_size }, 0,
	};
	struct grb_channel *chan = create(&hdr_disc, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_watermark wm;
	struct grb_reader_subbuf sb;
	int fd;

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
	CHECK_EQ(put(&hdr_disc, chan, 1, REC), 0);
	CHECK_EQ(grb_reader_live(b, &sb), 0);
	CHECK_U64(sb.data_size, HDR + REC);
	wm = (struct grb_watermark){ 2, HDR + REC };
	CHECK_EQ(grb_buf_wait(b, &wm, 0), 0);
	CHECK_EQ(grb_channel_wait(chan, &wm, 0), 0);
	CHECK_EQ(grb_channel_arm(chan, &wm), 0);
	wm = (struct grb_watermark){ 2, HDR + REC + 1 };
	CHECK_EQ(grb_buf_wait(b, &wm, 0), -ETIMEDOUT);
	CHECK_EQ(grb_channel_wait(chan, &wm, 0), -ETIMEDOUT);
	CHECK_EQ(grb_channel_arm(chan, &wm), -EAGAIN);
	/* The next record meets it: the commit feeds the fd. */
	CHECK_EQ(put(&hdr_disc, chan, 2, 8), 0);
	CHECK_EQ(fd_readable(fd), 1);
	grb_channel_destroy(chan);
}

/* "A subbufs above the ring's size counts as the ring's size": met once
 * every sub-buffer of the ring is delivered, in either mode. */
static void test_subbufs_clamped(void)
{
	struct grb_watermark wm = { 1000, 0 };
	int ow, i, fd;

	for (ow = 0; ow < 2; ow++) {
		const struct grb_config *cfg = ow ? &raw_ow : &raw;
		struct grb_channel *chan = create(cfg, SB, NSUB);
		struct grb_buf *b = grb_channel_buf(chan, 0);

		CHECK_EQ(grb_reader_open(b), 0);
		CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
		for (i = 0; i < NSUB; i++) {
			CHECK_EQ(grb_buf_wait(b, &wm, 0), -ETIMEDOUT);
			CHECK_EQ(grb_channel_wait(chan, &wm, 0), -ETIMEDOUT);
			CHECK_EQ(grb_channel_arm(chan, &wm), -EAGAIN);
			CHECK_EQ(fd_readable(fd), 0);
			put_tags(cfg, chan, 1, 1);
			CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		}
		CHECK_EQ(fd_readable(fd), 1);
		CHECK_EQ(grb_buf_wait(b, &wm, 0), 0);
		CHECK_EQ(grb_channel_wait(chan, &wm, 0), 0);
		CHECK_EQ(grb_channel_arm(chan, &wm), 0);
		wm.subbufs = UINT64_MAX;
		CHECK_EQ(grb_buf_wait(b, &wm, 0), 0);
		wm.subbufs = 1000;
		grb_channel_destroy(chan);
	}
}

/* A waiter on another thread, and whether it has returned. */
struct waiter {
	struct grb_channel *chan;
	struct grb_buf *b;      /* NULL: a channel wait */
	int64_t timeout;
	atomic_int done;
	int ret;
	int got;                /* get_next right after the wake-up */
	uint64_t took;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = (struct waiter *)arg;
	struct grb_buf *rb = w->b ? w->b : grb_channel_buf(w->chan, 0);
	uint64_t t0 = now_ns();

	w->ret = w->b ? grb_buf_wait(w->b, NULL, w->timeout) :
		grb_channel_wait(w->chan, NULL, w->timeout);
	w->took = now_ns() - t0;
	/* Acquire: what woke it is there to take. */
	w->got = w->ret == 0 ? grb_reader_get_next(rb) : 1;
	if (w->got == 0)
		CHECK_EQ(grb_reader_put_next(rb), 0);
	atomic_store(&w->done, 1);
	return NULL;
}

static void waiter_start(struct waiter *w, pthread_t *th,
			 struct grb_channel *chan, int chan_wide,
			 int64_t timeout)
{
	w->chan = chan;
	w->b = chan_wide ? NULL : grb_channel_buf(chan, 0);
	w->timeout = timeout;
	atomic_store(&w->done, 0);
	w->ret = 1;
	w->got = 1;
	CHECK_EQ(pthread_create(th, NULL, waiter_main, w), 0);
}

/*
 * A timeout whose end lies past CLOCK_MONOTONIC's range waits without
 * limit: not -ETIMEDOUT at once (an overflowed deadline in the past),
 * nor a short sleep.  The delivery then wakes it, and get_next right
 * after the wake-up finds the sub-buffer.
 */
static void test_far_timeout(void)
{
	int64_t far[3];
	struct waiter w;
	pthread_t th;
	int chan_wide, k;

	for (chan_wide = 0; chan_wide < 2; chan_wide++) {
		for (k = 0; k < 3; k++) {
			struct grb_channel *chan = create(&raw, SB, NSUB);

			/* The end of the range (a second before it, and
			 * just past it) and the longest timeout. */
			far[0] = INT64_MAX - (int64_t)now_ns() - 1000000000;
			far[1] = far[0] + 1001000000;
			far[2] = INT64_MAX;
			CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
			waiter_start(&w, &th, chan, chan_wide, far[k]);
			usleep(50000);
			CHECK_EQ(atomic_load(&w.done), 0);
			put_tags(&raw, chan, 1, 1);
			CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, 0),
					       GRB_FLUSH_ACTIVE), 0);
			CHECK_EQ(pthread_join(th, NULL), 0);
			CHECK_EQ(w.ret, 0);
			CHECK_EQ(w.got, 0);
			CHECK_U64(wait_bits(chan), 0);
			grb_channel_destroy(chan);
		}
	}
}

/* Woken many times in a row: each wake-up finds what it reports. */
static void test_wake_acquire(void)
{
	struct grb_channel *chan = create(&raw, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct waiter w;
	pthread_t th;
	int i;

	CHECK_EQ(grb_reader_open(b), 0);
	for (i = 0; i < 200; i++) {
		waiter_start(&w, &th, chan, i & 1, GRB_WAIT_FOREVER);
		if (i % 3 == 0)
			usleep(100);
		put_tags(&raw, chan, (uint64_t)i, (uint64_t)i);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		CHECK_EQ(pthread_join(th, NULL), 0);
		CHECK_EQ(w.ret, 0);
		CHECK_EQ(w.got, 0);
	}
	grb_channel_destroy(chan);
}

/* "A signal does not end the wait early", for a channel wait too. */
static void on_usr1(int sig)
{
	(void)sig;
}

static void test_chan_wait_signal(void)
{
	struct grb_channel *chan = create(&raw, SB, NSUB);
	struct sigaction sa, old;
	struct waiter w;
	pthread_t th;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;        /* no SA_RESTART */
	CHECK_EQ(sigaction(SIGUSR1, &sa, &old), 0);
	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	waiter_start(&w, &th, chan, 1, 200000000);
	for (i = 0; i < 5; i++) {
		usleep(20000);
		pthread_kill(th, SIGUSR1);
	}
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(w.ret, -ETIMEDOUT);
	CHECK(w.took >= 190000000);
	CHECK_EQ(sigaction(SIGUSR1, &old, NULL), 0);
	grb_channel_destroy(chan);
}

/*
 * Argument errors before -EPERM, for the channel wait as for the buffer
 * wait; -EBADF before -EPERM for arming.  And the bits: nothing is left
 * armed by a wait that timed out or returned, nor by an arming that
 * returned 0 or -ENODATA, so commits find the word zero again.
 */
static void test_args_and_bits(void)
{
	struct grb_channel *chan = create(&raw, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	int fd;

	CHECK_EQ(grb_channel_wait(chan, NULL, -2), -EINVAL);
	CHECK_EQ(grb_channel_wait(chan, NULL, INT64_MIN), -EINVAL);
	CHECK_EQ(grb_buf_wait(b, NULL, INT64_MIN), -EINVAL);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EBADF);
	CHECK_EQ(grb_channel_wait(chan, NULL, 0), -EPERM);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_buf_wait(b, NULL, 1000000), -ETIMEDOUT);
	CHECK_U64(wait_bits(chan), 0);
	CHECK_EQ(grb_channel_wait(chan, NULL, 1000000), -ETIMEDOUT);
	CHECK_U64(wait_bits(chan), 0);
	CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
	CHECK_U64(wait_bits(chan), GRB_WAIT_FD);
	/* Met now: 0, and the earlier arming taken back. */
	put_tags(&raw, chan, 1, 1);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_U64(wait_bits(chan), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), 0);
	CHECK_U64(wait_bits(chan), 0);
	CHECK_EQ(grb_buf_wait(b, NULL, 1000000), 0);
	CHECK_U64(wait_bits(chan), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_U64(wait_bits(chan), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -ENODATA);
	CHECK_EQ(grb_buf_wait(b, NULL, GRB_WAIT_FOREVER), -ENODATA);
	CHECK_EQ(grb_channel_wait(chan, NULL, GRB_WAIT_FOREVER), -ENODATA);
	CHECK_U64(wait_bits(chan), 0);
	grb_channel_destroy(chan);
}

/*
 * The event fd: non-blocking; readable only after an arming (deliveries
 * before any feed nothing); once per arming per buffer.
 */
static void test_event_fd_arming(void)
{
	struct grb_channel *chan = create(&raw, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct waiter w;
	pthread_t th;
	uint64_t v;
	int fd, fl, chan_wide;

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
	fl = fcntl(fd, F_GETFL);
	CHECK(fl >= 0);
	CHECK(fl & O_NONBLOCK);
	CHECK_EQ(read(fd, &v, sizeof(v)), -1);
	CHECK_EQ(errno, EAGAIN);
	put_tags(&raw, chan, 1, 1);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_wait(b, NULL, 0), 0);
	CHECK_EQ(fd_readable(fd), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	/* Blocked waiters woken: the fd, never armed, stays quiet. */
	for (chan_wide = 0; chan_wide < 2; chan_wide++) {
		waiter_start(&w, &th, chan, chan_wide, GRB_WAIT_FOREVER);
		usleep(20000);
		put_tags(&raw, chan, 1, 1);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		CHECK_EQ(pthread_join(th, NULL), 0);
		CHECK_EQ(w.ret, 0);
		CHECK_EQ(w.got, 0);
		CHECK_EQ(fd_readable(fd), 0);
	}
	CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
	put_tags(&raw, chan, 2, 2);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	put_tags(&raw, chan, 3, 3);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	CHECK_U64(v, 1);
	CHECK_EQ(fd_readable(fd), 0);
	grb_channel_destroy(chan);
}

/*
 * "the negative errno of eventfd(2)": no descriptor left (-EMFILE).  The
 * channel keeps none then (arming is still -EBADF), and makes one once
 * descriptors are free again.
 */
static void test_event_fd_emfile(void)
{
	struct grb_channel *chan = create(&raw, SB, NSUB);
	struct rlimit old, low;
	int probe, fd = -1;

	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(probe >= 0);
	close(probe);
	/* Every descriptor below the lowest free one is taken. */
	low = old;
	low.rlim_cur = (rlim_t)probe;
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
	CHECK_EQ(grb_channel_event_fd(chan, &fd), -EMFILE);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EBADF);
	CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
	CHECK(fd >= 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
	grb_channel_destroy(chan);
}

/*
 * An arming refused with -EPERM changes nothing: the earlier arming
 * still stands, and a delivery then feeds the fd.  Needs two buffers.
 */
static void test_arm_eperm_keeps(void)
{
	struct grb_channel *chan = create(&pcpu, SB, NSUB);
	unsigned int i, n = grb_channel_nr_bufs(chan);
	uint64_t v;
	int fd;

	if (n < 2) {
		printf("test_timer_wait_audit: -EPERM arming skipped: "
		       "one buffer\n");
		grb_channel_destroy(chan);
		return;
	}
	for (i = 0; i < n; i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
	CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
	CHECK_EQ(grb_reader_release(grb_channel_buf(chan, 1)), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EPERM);
	CHECK_EQ(grb_channel_wait(chan, NULL, 0), -EPERM);
	CHECK_EQ(fd_readable(fd), 0);
	CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, 0), GRB_FLUSH_EMPTY), 0);
	CHECK_EQ(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	CHECK_U64(v, 1);
	grb_channel_destroy(chan);
}

/*
 * An arming stands while its reader blocks in a wait of its own with a
 * higher watermark: the delivery that meets the arming's still feeds
 * the fd.  (The wait stored its watermark over the arming's, and the fd
 * then stayed quiet until the wait's was met.)  A lower one wakes the
 * wait as usual, and the fd with it.
 */
static void test_arm_then_wait(void)
{
	struct grb_watermark two = { 2, 0 }, three = { 3, 0 };
	struct grb_channel *chan;
	struct grb_buf *b;
	struct waiter w;
	pthread_t th;
	uint64_t v;
	int fd, chan_wide;

	for (chan_wide = 0; chan_wide < 2; chan_wide++) {
		chan = create(&raw, SB, NSUB);
		b = grb_channel_buf(chan, 0);
		CHECK_EQ(grb_reader_open(b), 0);
		CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
		CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
		CHECK_EQ(chan_wide ? grb_channel_wait(chan, &two, 1000000) :
			 grb_buf_wait(b, &two, 1000000), -ETIMEDOUT);
		CHECK_U64(wait_bits(chan), GRB_WAIT_FD);
		put_tags(&raw, chan, 1, 1);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		CHECK_EQ(fd_readable(fd), 1);
		CHECK_EQ(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
		CHECK_U64(v, 1);
		CHECK_EQ(grb_reader_get_next(b), 0);
		CHECK_EQ(grb_reader_put_next(b), 0);

		CHECK_EQ(grb_channel_arm(chan, &three), -EAGAIN);
		waiter_start(&w, &th, chan, chan_wide, GRB_WAIT_FOREVER);
		usleep(20000);
		put_tags(&raw, chan, 2, 2);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		CHECK_EQ(pthread_join(th, NULL), 0);
		CHECK_EQ(w.ret, 0);
		CHECK_EQ(w.got, 0);
		CHECK_U64(wait_bits(chan), 0);
		grb_channel_destroy(chan);
	}
}

/*
 * A reader attached to shared buffers (grb/shm.h) "waits the same way":
 * its blocking waits are woken by commits made through the creator's
 * handle (another mapping of the same memory, as in another process).
 * Its event fd could not be: those commits cannot write this handle's
 * eventfd, so it has none (-ENOTSUP), and arming is -EBADF.
 */
static void test_attached_waits(void)
{
	static const struct grb_config shared = {
		GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 },
		GRB_CONFIG_SHARED,
	};
	struct grb_channel_attr attr = { "waitatt", SB, NSUB, NULL };
	struct grb_shm_attr sattr = { "audit", NULL, -1 };
	struct grb_channel *own, *att;
	struct waiter w;
	pthread_t th;
	int fd, chan_wide;

	CHECK_EQ(grb_channel_create_shared(&shared, &attr, &sattr, &own), 0);
	fd = grb_channel_shm_fd(own, 0);
	CHECK(fd >= 0);
	CHECK_EQ(grb_channel_attach(&shared, "audit", &fd, 1,
				    GRB_ATTACH_READER, &att), 0);
	CHECK_EQ(grb_reader_open(grb_channel_buf(att, 0)), 0);
	for (chan_wide = 0; chan_wide < 2; chan_wide++) {
		waiter_start(&w, &th, att, chan_wide, GRB_WAIT_FOREVER);
		usleep(20000);
		put_tags(&shared, own, 1, 1);
		CHECK_EQ(grb_buf_flush(grb_channel_buf(own, 0),
				       GRB_FLUSH_ACTIVE), 0);
		CHECK_EQ(pthread_join(th, NULL), 0);
		CHECK_EQ(w.ret, 0);
		CHECK_EQ(w.got, 0);
	}
	fd = -1;
	CHECK_EQ(grb_channel_event_fd(att, NULL), -EINVAL);
	CHECK_EQ(grb_channel_event_fd(att, &fd), -ENOTSUP);
	CHECK_EQ(fd, -1);
	CHECK_EQ(grb_channel_arm(att, NULL), -EBADF);
	/* The creator's handle has one. */
	CHECK_EQ(grb_channel_event_fd(own, &fd), 0);
	CHECK(fd >= 0);
	grb_channel_destroy(att);
	grb_channel_destroy(own);
}

int main(void)
{
	/* A lost wake-up or a stop that waits a period: fail, not hang. */
	alarm(60);
	test_tick_flush_opened_since();
	test_tick_feeds_fd();
	test_tick_attached();
	test_ticker_mask();
	test_ticker_schedule();
	test_ticker_long_period();
	test_ticker_create_fails();
	test_bytes_header();
	test_subbufs_clamped();
	test_far_timeout();
	test_wake_acquire();
	test_chan_wait_signal();
	test_args_and_bits();
	test_event_fd_arming();
	test_event_fd_emfile();
	test_arm_eperm_keeps();
	test_arm_then_wait();
	test_attached_waits();
	printf("test_timer_wait_audit: passed\n");
	return 0;
}
