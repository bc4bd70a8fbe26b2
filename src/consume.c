/* SPDX-License-Identifier: MIT */
/*
 * src/consume.c - callback consumption over the iterators (grb/iter.h):
 * call a function per record, and wait (grb/wait.h) when there is none.
 */
#include <time.h>

#include "engine.h"
#include "grb/iter.h"
#include "grb/wait.h"
#include "iter_internal.h"

typedef int (*next_fn)(void *it, struct grb_iter_record *r);

static int buf_next(void *it, struct grb_iter_record *r)
{
	return grb_buf_iter_next((struct grb_buf_iter *)it, r);
}

static int chan_next(void *it, struct grb_iter_record *r)
{
	return grb_chan_iter_next((struct grb_chan_iter *)it, r);
}

static int consume(void *it, next_fn next, grb_record_fn fn, void *arg,
		   uint64_t *count)
{
	struct grb_iter_record r;
	uint64_t n = 0;
	int ret;

	for (;;) {
		ret = next(it, &r);
		if (ret == -EIO)
			continue;       /* skipped and counted by the iterator */
		if (ret)
			break;
		n++;
		if (fn(arg, &r)) {
			ret = -ECANCELED;
			break;
		}
	}
	if (count)
		*count = n;
	return ret == -EAGAIN ? 0 : ret;
}

/* A call refused before it starts: *count says no record was passed. */
static int refused(uint64_t *count)
{
	if (count)
		*count = 0;
	return -EINVAL;
}

int grb_buf_iter_consume(struct grb_buf_iter *it, grb_record_fn fn, void *arg,
			 uint64_t *count)
{
	if (!it || !fn)
		return refused(count);
	return consume(it, buf_next, fn, arg, count);
}

int grb_chan_iter_consume(struct grb_chan_iter *it, grb_record_fn fn,
			  void *arg, uint64_t *count)
{
	if (!it || !fn)
		return refused(count);
	return consume(it, chan_next, fn, arg, count);
}

/* A timeout grb_buf_wait() takes: refused before any record is taken,
 * not only when the poll comes to wait. */
static int bad_timeout(int64_t timeout_ns)
{
	return timeout_ns < 0 && timeout_ns != GRB_WAIT_FOREVER;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Has a poll's time run out?  Sets *left to what is left of @timeout_ns
 * since @start (GRB_WAIT_FOREVER never runs out).  A wake-up can bring
 * no record (a header-only sub-buffer, a merge still held back): the
 * poll then waits again, for what is left.
 */
static int poll_expired(int64_t timeout_ns, int64_t start, int64_t *left)
{
	if (timeout_ns == GRB_WAIT_FOREVER)
		return 0;
	*left = timeout_ns - (mono_ns() - start);
	return *left <= 0;
}

int grb_buf_iter_poll(struct grb_buf_iter *it, grb_record_fn fn, void *arg,
		      int64_t timeout_ns, uint64_t *count)
{
	struct grb_watermark wm;
	int64_t start, left = timeout_ns;
	uint64_t n = 0;
	int ret;

	if (!it || !fn || bad_timeout(timeout_ns))
		return refused(count);
	start = mono_ns();
	ret = consume(it, buf_next, fn, arg, &n);
	while (ret == 0 && n == 0) {
		/* A delivered sub-buffer, or (discard mode) one record more
		 * than the iterator already read live: waking on any live
		 * byte would find the ones it read and never sleep. */
		wm.subbufs = 1;
		wm.bytes = grb__buf_iter_live_mark(it);
		ret = grb_buf_wait(grb__buf_iter_buf(it), &wm, left);
		if (ret == 0 || ret == -ENODATA)
			ret = consume(it, buf_next, fn, arg, &n);
		if (ret == 0 && n == 0 &&
		    poll_expired(timeout_ns, start, &left))
			ret = -ETIMEDOUT;
	}
	if (count)
		*count = n;
	return ret;
}

int grb_chan_iter_poll(struct grb_chan_iter *it, grb_record_fn fn, void *arg,
		       int64_t timeout_ns, uint64_t *count)
{
	struct grb_channel *chan;
	struct grb_buf_iter *blocker;
	struct grb_watermark wm;
	int64_t start, left = timeout_ns;
	uint64_t n = 0;
	int ret;

	if (!it || !fn || bad_timeout(timeout_ns))
		return refused(count);
	start = mono_ns();
	ret = consume(it, chan_next, fn, arg, &n);
	while (ret == 0 && n == 0) {
		/* Wait where the merge is stuck: on the idle buffer that
		 * holds it back, or on any buffer when none has anything,
		 * each past what its iterator already read live. */
		blocker = grb__chan_iter_blocker(it);
		chan = grb__chan_iter_channel(it);
		if (blocker) {
			wm.subbufs = 1;
			wm.bytes = grb__buf_iter_live_mark(blocker);
			ret = grb_buf_wait(grb__buf_iter_buf(blocker), &wm,
					   left);
		} else {
			ret = grb__channel_wait_marks(chan, 1, 0,
						      grb__chan_iter_marks(it),
						      left);
		}
		if (ret == 0 || ret == -ENODATA)
			ret = consume(it, chan_next, fn, arg, &n);
		if (ret == 0 && n == 0 &&
		    poll_expired(timeout_ns, start, &left))
			ret = -ETIMEDOUT;
	}
	if (count)
		*count = n;
	return ret;
}
