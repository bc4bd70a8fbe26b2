/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_wait.c - grb/wait.h and grb_reader_live(): every
 * documented return, a reader woken by a delivery, by finalize and by a
 * live commit, the event fd armed and fed, and the live prefix of an open
 * sub-buffer read without closing it.  Extremes: a byte watermark too
 * large to be met never is (it must not wrap to a met one), a timeout
 * near INT64_MAX waits as long as asked (no overflow: the ASan+UBSan
 * preset aborts on one), and a refused arm leaves the fd readable.
 * Two threads asking for the event fd at once get the same one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"
#include "grb/wait.h"

#define SB 4096
#define REC 64

static const struct grb_config disc = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 }, 0,
};
static const struct grb_config ovw = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 0, { 0 }, 0,
};

static struct grb_channel *create(const struct grb_config *cfg)
{
	struct grb_channel_attr attr = { "wait", SB, 4, NULL };
	struct grb_channel *chan = NULL;

	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	return chan;
}

static void put(const struct grb_config *cfg, struct grb_channel *chan,
		uint64_t tag)
{
	struct grb_ctx ctx = GRB_CTX_INIT(REC, 8);

	CHECK_EQ(grb_reserve(cfg, chan, &ctx), 0);
	grb_write(cfg, &ctx, &tag, sizeof(tag));
	grb_write_fill(cfg, &ctx, (int)tag, REC - sizeof(tag));
	grb_commit(cfg, &ctx);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_args(void)
{
	struct grb_channel *chan = create(&disc);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	int fd;

	CHECK_EQ(grb_buf_wait(NULL, NULL, 0), -EINVAL);
	CHECK_EQ(grb_buf_wait(b, NULL, -5), -EINVAL);
	CHECK_EQ(grb_buf_wait(b, NULL, 0), -EPERM);
	CHECK_EQ(grb_channel_wait(NULL, NULL, 0), -EINVAL);
	CHECK_EQ(grb_channel_wait(chan, NULL, 0), -EPERM);
	CHECK_EQ(grb_channel_event_fd(NULL, &fd), -EINVAL);
	CHECK_EQ(grb_channel_event_fd(chan, NULL), -EINVAL);
	CHECK_EQ(grb_channel_arm(NULL, NULL), -EINVAL);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EBADF);
	CHECK_EQ(grb_reader_live(b, &sb), -EPERM);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_live(b, NULL), -EINVAL);
	CHECK_EQ(grb_reader_live(NULL, &sb), -EINVAL);
	CHECK_EQ(grb_buf_wait(b, NULL, 0), -ETIMEDOUT);
	CHECK_EQ(grb_channel_wait(chan, NULL, 0), -ETIMEDOUT);
	CHECK_EQ(grb_channel_wait(chan, NULL, -5), -EINVAL);
	/* A reservation not committed yet: no live prefix past it. */
	{
		struct grb_ctx ctx = GRB_CTX_INIT(REC, 8);

		CHECK_EQ(grb_reserve(&disc, chan, &ctx), 0);
		CHECK_EQ(grb_reader_live(b, &sb), -EAGAIN);
		grb_write_fill(&disc, &ctx, 0, REC);
		grb_commit(&disc, &ctx);
		CHECK_EQ(grb_reader_live(b, &sb), 0);
		CHECK_U64(sb.records, 1);
		CHECK_EQ(sb.padded_size, sb.data_size);
		CHECK_U64(sb.ts_end, 0);
	}
	grb_channel_destroy(chan);
}

static void test_timeout(void)
{
	struct grb_channel *chan = create(&disc);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	uint64_t t0;

	CHECK_EQ(grb_reader_open(b), 0);
	t0 = now_ns();
	CHECK_EQ(grb_buf_wait(b, NULL, 20000000), -ETIMEDOUT);
	/* It slept (a futex wait), not returned at once. */
	CHECK(now_ns() - t0 >= 19000000);
	grb_channel_destroy(chan);
}

/* A signal does not end a wait early (grb/wait.h). */
static void on_usr1(int sig)
{
	(void)sig;
}

struct sig_wait {
	struct grb_buf *b;
	int ret;
	uint64_t took;
};

static void *sig_wait_main(void *arg)
{
	struct sig_wait *w = (struct sig_wait *)arg;
	uint64_t t0 = now_ns();

	w->ret = grb_buf_wait(w->b, NULL, 200000000);
	w->took = now_ns() - t0;
	return NULL;
}

static void test_signal(void)
{
	struct grb_channel *chan = create(&disc);
	struct sigaction sa;
	struct sig_wait w;
	pthread_t th;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;        /* no SA_RESTART */
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	w.b = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_reader_open(w.b), 0);
	CHECK_EQ(pthread_create(&th, NULL, sig_wait_main, &w), 0);
	for (int i = 0; i < 5; i++) {
		usleep(20000);
		pthread_kill(th, SIGUSR1);
	}
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(w.ret, -ETIMEDOUT);
	CHECK(w.took >= 190000000);
	sa.sa_handler = SIG_DFL;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	grb_channel_destroy(chan);
}

/* The live prefix: records readable before their sub-buffer closes. */
static void test_live(void)
{
	struct grb_channel *chan = create(&disc);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_watermark bytes = { 1, 3 * REC };
	struct grb_reader_subbuf sb;
	uint64_t tag;
	size_t off;

	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_reader_live(b, &sb), -EAGAIN);     /* nothing open */
	put(&disc, chan, 1);
	put(&disc, chan, 2);
	CHECK_EQ(grb_reader_live(b, &sb), 0);
	CHECK_U64(sb.pos, 0);
	CHECK_U64(sb.data_size, 2 * REC);
	CHECK_U64(sb.records, 2);
	/* Not enough for the byte watermark yet; then enough. */
	CHECK_EQ(grb_buf_wait(b, &bytes, 0), -ETIMEDOUT);
	put(&disc, chan, 3);
	CHECK_EQ(grb_buf_wait(b, &bytes, 0), 0);
	CHECK_EQ(grb_reader_live(b, &sb), 0);
	CHECK_U64(sb.records, 3);
	for (off = 0; off < sb.data_size; off += REC) {
		memcpy(&tag, (const char *)sb.data + off, sizeof(tag));
		CHECK_U64(tag, off / REC + 1);
	}
	/* Nothing was consumed: the delivered sub-buffer has them all. */
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_live(b, &sb), -EAGAIN);     /* closed now */
	CHECK_EQ(grb_buf_wait(b, NULL, 0), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.records, 3);
	CHECK_EQ(grb_reader_live(b, &sb), -EBUSY);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_reader_live(b, &sb), -ENODATA);
	CHECK_EQ(grb_buf_wait(b, NULL, GRB_WAIT_FOREVER), -ENODATA);
	grb_channel_destroy(chan);

	chan = create(&ovw);
	b = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_reader_open(b), 0);
	put(&ovw, chan, 1);
	CHECK_EQ(grb_reader_live(b, &sb), -ENOTSUP);
	grb_channel_destroy(chan);
}

struct waiter {
	struct grb_channel *chan;
	int chan_wide;
	int ret;
	struct grb_watermark wm;
};

static void *wait_main(void *arg)
{
	struct waiter *w = (struct waiter *)arg;

	w->ret = w->chan_wide ?
		grb_channel_wait(w->chan, &w->wm, GRB_WAIT_FOREVER) :
		grb_buf_wait(grb_channel_buf(w->chan, 0), &w->wm,
			     GRB_WAIT_FOREVER);
	return NULL;
}

/* A reader blocked with no timeout, woken by what the main thread does. */
static void wake_by(int chan_wide, int how)
{
	const struct grb_config *cfg = &disc;
	struct waiter w = { create(cfg), chan_wide, 1, { 1, 0 } };
	struct grb_buf *b = grb_channel_buf(w.chan, 0);
	pthread_t t;
	int i;

	if (how == 2)
		w.wm.bytes = REC;               /* live: one record */
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(pthread_create(&t, NULL, wait_main, &w), 0);
	usleep(20000);                          /* let it block */
	if (how == 0) {
		for (i = 0; i < SB / REC; i++)  /* fills and delivers one */
			put(cfg, w.chan, (uint64_t)i);
	} else if (how == 1) {
		CHECK_EQ(grb_channel_finalize(w.chan), 0);
	} else {
		put(cfg, w.chan, 7);            /* one commit, no delivery */
	}
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(w.ret, how == 1 ? -ENODATA : 0);
	grb_channel_destroy(w.chan);
}

static void test_event_fd(void)
{
	struct grb_channel *chan = create(&disc);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct pollfd pfd;
	uint64_t v;
	int fd, fd2, i;

	CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
	CHECK_EQ(grb_channel_event_fd(chan, &fd2), 0);
	CHECK_EQ(fd, fd2);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EPERM);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
	pfd = (struct pollfd){ fd, POLLIN, 0 };
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	/* A commit that delivers nothing does not feed it. */
	put(&disc, chan, 1);
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	for (i = 1; i < SB / REC; i++)
		put(&disc, chan, (uint64_t)i);
	CHECK_EQ(poll(&pfd, 1, 1000), 1);
	CHECK_EQ(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	CHECK_U64(v, 1);
	/* Data is there: arming says read now, and does not arm. */
	CHECK_EQ(grb_channel_arm(chan, NULL), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(poll(&pfd, 1, 1000), 1);
	CHECK_EQ(grb_channel_arm(chan, NULL), -ENODATA);
	grb_channel_destroy(chan);
}

/*
 * The bytes watermark (grb/wait.h): delivered sub-buffers count whole,
 * their padding included, in either mode; the open one's live records
 * only in discard mode.  And a channel wait is -EPERM when any buffer is
 * not open, even if another is ready.
 */
static void test_watermark(void)
{
	static const struct grb_config pcpu = {
		GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 }, 0,
	};
	struct grb_watermark wm;
	struct grb_channel *chan;
	struct grb_buf *b;
	uint64_t v;
	int fd;

	for (int mode = 0; mode < 2; mode++) {
		const struct grb_config *cfg = mode ? &ovw : &disc;

		chan = create(cfg);
		b = grb_channel_buf(chan, 0);
		CHECK_EQ(grb_reader_open(b), 0);
		put(cfg, chan, 1);
		/* Live only: bytes count it in discard mode alone. */
		wm = (struct grb_watermark){ 2, REC };
		CHECK_EQ(grb_buf_wait(b, &wm, 0), mode ? -ETIMEDOUT : 0);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		/* One delivered sub-buffer of one record: 2 sub-buffers are
		 * not there, but its SB bytes, padding included, are. */
		wm = (struct grb_watermark){ 2, 0 };
		CHECK_EQ(grb_buf_wait(b, &wm, 0), -ETIMEDOUT);
		wm = (struct grb_watermark){ 2, SB };
		CHECK_EQ(grb_buf_wait(b, &wm, 0), 0);
		wm = (struct grb_watermark){ 3, SB + 1 };
		CHECK_EQ(grb_buf_wait(b, &wm, 0), -ETIMEDOUT);
		/* subbufs 0 means 1; a second delivery meets 2. */
		wm = (struct grb_watermark){ 0, 0 };
		CHECK_EQ(grb_buf_wait(b, &wm, 0), 0);
		put(cfg, chan, 2);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		wm = (struct grb_watermark){ 2, 0 };
		CHECK_EQ(grb_buf_wait(b, &wm, 0), 0);
		wm = (struct grb_watermark){ 3, 0 };
		CHECK_EQ(grb_buf_wait(b, &wm, 0), -ETIMEDOUT);
		grb_channel_destroy(chan);
	}

	chan = create(&pcpu);
	if (grb_channel_nr_bufs(chan) > 1) {
		unsigned int n = grb_channel_nr_bufs(chan);

		b = grb_channel_buf(chan, 0);
		CHECK_EQ(grb_reader_open(b), 0);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), 0);
		CHECK_EQ(grb_buf_wait(b, NULL, 0), 0);
		CHECK_EQ(grb_channel_wait(chan, NULL, 0), -EPERM);
		CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
		CHECK_EQ(grb_channel_arm(chan, NULL), -EPERM);
		for (unsigned int i = 1; i < n; i++)
			CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
		CHECK_EQ(grb_channel_wait(chan, NULL, 0), 0);
		/* Armed on an empty channel: each buffer's waking delivery
		 * adds 1 to the counter, once per arming. */
		CHECK_EQ(grb_reader_get_next(b), 0);
		CHECK_EQ(grb_reader_put_next(b), 0);
		CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
		for (unsigned int i = 0; i < n; i++) {
			CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, i),
					       GRB_FLUSH_EMPTY), 0);
			CHECK_EQ(grb_buf_flush(grb_channel_buf(chan, i),
					       GRB_FLUSH_EMPTY), 0);
		}
		CHECK_EQ(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
		CHECK_U64(v, n);
		/* Arming again clears what the last arming left readable. */
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), 0);
		CHECK_EQ(grb_reader_get_next(b), 0);
		CHECK_EQ(grb_reader_put_next(b), 0);
		CHECK_EQ(grb_reader_get_next(b), 0);
		CHECK_EQ(grb_reader_put_next(b), 0);
		CHECK_EQ(grb_reader_get_next(b), 0);
		CHECK_EQ(grb_reader_put_next(b), 0);
		for (unsigned int i = 1; i < n; i++) {
			struct grb_buf *o = grb_channel_buf(chan, i);

			while (grb_reader_get_next(o) == 0)
				CHECK_EQ(grb_reader_put_next(o), 0);
		}
		CHECK_EQ(grb_channel_arm(chan, NULL), -EAGAIN);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), 0);
		CHECK_EQ(grb_channel_arm(chan, NULL), 0);
		CHECK_EQ(read(fd, &v, sizeof(v)), -1);
		CHECK_EQ(errno, EAGAIN);
		/* A watermark: met already, or armed until it is. */
		for (unsigned int i = 0; i < n; i++) {
			struct grb_buf *o = grb_channel_buf(chan, i);

			while (grb_reader_get_next(o) == 0)
				CHECK_EQ(grb_reader_put_next(o), 0);
		}
		wm = (struct grb_watermark){ 2, 0 };
		CHECK_EQ(grb_channel_arm(chan, &wm), -EAGAIN);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), 0);
		CHECK_EQ(read(fd, &v, sizeof(v)), -1);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), 0);
		CHECK_EQ(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
		CHECK_U64(v, 1);
		CHECK_EQ(grb_channel_arm(chan, &wm), 0);
	}
	grb_channel_destroy(chan);
}

static void test_extremes(void)
{
	static const uint64_t huge[] = {
		UINT64_MAX, UINT64_MAX - 100, UINT64_MAX - SB, UINT64_C(1) << 63,
	};
	struct grb_channel *chan = create(&disc);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_watermark wm;
	struct pollfd pfd;
	unsigned int i;
	int fd;

	CHECK_EQ(grb_reader_open(b), 0);
	put(&disc, chan, 1);
	/* Data there: the longest timeouts return at once. */
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_wait(b, NULL, INT64_MAX), 0);
	CHECK_EQ(grb_buf_wait(b, NULL, INT64_MAX - 1000), 0);
	CHECK_EQ(grb_channel_wait(chan, NULL, INT64_MAX), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	/* consumed is SB now, nothing is readable: no byte count that
	 * large is met, nor arms as met. */
	CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
	for (i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		wm = (struct grb_watermark){ 1, huge[i] };
		CHECK_EQ(grb_buf_wait(b, &wm, 0), -ETIMEDOUT);
		CHECK_EQ(grb_buf_wait(b, &wm, 1000000), -ETIMEDOUT);
		CHECK_EQ(grb_channel_wait(chan, &wm, 0), -ETIMEDOUT);
		CHECK_EQ(grb_channel_arm(chan, &wm), -EAGAIN);
	}
	/* Armed with the largest: a delivery still wakes (subbufs 1). */
	put(&disc, chan, 2);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	pfd = (struct pollfd){ fd, POLLIN, 0 };
	CHECK_EQ(poll(&pfd, 1, 1000), 1);
	/* A refused arm changes nothing: the fd stays readable. */
	CHECK_EQ(grb_reader_release(b), 0);
	CHECK_EQ(grb_channel_arm(chan, NULL), -EPERM);
	CHECK_EQ(poll(&pfd, 1, 0), 1);
	grb_channel_destroy(chan);
}

/* A watermark the buffer never reaches once finalized (2 sub-buffers,
 * one left): finalize wakes the waiter, 0 with what is left, then
 * -ENODATA.  It slept forever before. */
struct wm_waiter {
	struct grb_buf *b;
	struct grb_channel *chan;
	int ret;
};

static void *wm_wait_main(void *arg)
{
	struct wm_waiter *w = (struct wm_waiter *)arg;
	struct grb_watermark wm = { 2, 0 };

	w->ret = w->chan ? grb_channel_wait(w->chan, &wm, GRB_WAIT_FOREVER) :
		grb_buf_wait(w->b, &wm, GRB_WAIT_FOREVER);
	return NULL;
}

static void test_finalize_short(void)
{
	struct grb_watermark wm = { 2, 0 };
	struct timespec dl;
	int chan_wide, fd;

	for (chan_wide = 0; chan_wide < 2; chan_wide++) {
		struct grb_channel *chan = create(&disc);
		struct grb_buf *b = grb_channel_buf(chan, 0);
		struct wm_waiter w = { b, chan_wide ? chan : NULL, 1 };
		pthread_t t;

		CHECK_EQ(grb_reader_open(b), 0);
		put(&disc, chan, 1);
		CHECK_EQ(pthread_create(&t, NULL, wm_wait_main, &w), 0);
		usleep(20000);
		CHECK_EQ(grb_channel_finalize(chan), 0);
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 5;
		CHECK_EQ(pthread_timedjoin_np(t, NULL, &dl), 0);
		CHECK_EQ(w.ret, 0);
		/* Met at once now, and armed as met. */
		CHECK_EQ(grb_buf_wait(b, &wm, 0), 0);
		CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
		CHECK_EQ(grb_channel_arm(chan, &wm), 0);
		CHECK_EQ(grb_reader_get_next(b), 0);
		CHECK_EQ(grb_reader_put_next(b), 0);
		CHECK_EQ(grb_buf_wait(b, &wm, GRB_WAIT_FOREVER), -ENODATA);
		CHECK_EQ(grb_channel_wait(chan, &wm, GRB_WAIT_FOREVER),
			 -ENODATA);
		CHECK_EQ(grb_channel_arm(chan, &wm), -ENODATA);
		grb_channel_destroy(chan);
	}
}

/* grb_channel_event_fd() from two threads at once: "the same one on
 * every call", and no descriptor left open after destroy. */
struct efd_race {
	struct grb_channel *chan;
	pthread_barrier_t *bar;
	int fd;
};

static void *efd_main(void *arg)
{
	struct efd_race *r = (struct efd_race *)arg;

	pthread_barrier_wait(r->bar);
	CHECK_EQ(grb_channel_event_fd(r->chan, &r->fd), 0);
	return NULL;
}

static int open_fds(void)
{
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static void test_event_fd_race(void)
{
	pthread_barrier_t bar;
	struct efd_race r[2];
	pthread_t t[2];
	int i, k, fds0 = open_fds(), fd;

	CHECK_EQ(pthread_barrier_init(&bar, NULL, 2), 0);
	for (i = 0; i < 3000; i++) {
		struct grb_channel *chan = create(&disc);

		for (k = 0; k < 2; k++) {
			r[k] = (struct efd_race){ chan, &bar, -1 };
			CHECK_EQ(pthread_create(&t[k], NULL, efd_main, &r[k]), 0);
		}
		for (k = 0; k < 2; k++)
			CHECK_EQ(pthread_join(t[k], NULL), 0);
		CHECK_EQ(r[0].fd, r[1].fd);
		CHECK_EQ(grb_channel_event_fd(chan, &fd), 0);
		CHECK_EQ(fd, r[0].fd);
		grb_channel_destroy(chan);
		CHECK_EQ(open_fds(), fds0);
	}
	pthread_barrier_destroy(&bar);
}

int main(void)
{
	int chan_wide, how;

	/* A lost wake-up would block forever: fail instead. */
	alarm(60);
	test_args();
	test_timeout();
	test_signal();
	test_live();
	test_watermark();
	for (chan_wide = 0; chan_wide < 2; chan_wide++)
		for (how = 0; how < 3; how++)
			wake_by(chan_wide, how);
	test_event_fd();
	test_extremes();
	test_event_fd_race();
	test_finalize_short();
	printf("test_wait: passed\n");
	return 0;
}
