/* SPDX-License-Identifier: MIT */
/*
 * src/consume.c - callback consumption over the iterators (grb/iter.h):
 * call a function per record, and wait (grb/wait.h) when there is none.
 */
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

int grb_buf_iter_consume(struct grb_buf_iter *it, grb_record_fn fn, void *arg,
			 uint64_t *count)
{
	if (!it || !fn)
		return -EINVAL;
	return consume(it, buf_next, fn, arg, count);
}

int grb_chan_iter_consume(struct grb_chan_iter *it, grb_record_fn fn,
			  void *arg, uint64_t *count)
{
	if (!it || !fn)
		return -EINVAL;
	return consume(it, chan_next, fn, arg, count);
}

/* Wake on one live record in discard mode, else on a delivery. */
static void live_watermark(const struct grb_buf *buf, struct grb_watermark *wm)
{
	wm->subbufs = 1;
	wm->bytes = buf->chan->cfg->mode == GRB_MODE_DISCARD ? 1 : 0;
}

int grb_buf_iter_poll(struct grb_buf_iter *it, grb_record_fn fn, void *arg,
		      int64_t timeout_ns, uint64_t *count)
{
	struct grb_watermark wm;
	struct grb_buf *buf;
	uint64_t n = 0;
	int ret;

	if (!it || !fn)
		return -EINVAL;
	buf = grb__buf_iter_buf(it);
	ret = consume(it, buf_next, fn, arg, &n);
	if (ret == 0 && n == 0) {
		live_watermark(buf, &wm);
		ret = grb_buf_wait(buf, &wm, timeout_ns);
		if (ret == 0)
			ret = consume(it, buf_next, fn, arg, &n);
		else if (ret == -ENODATA)
			ret = consume(it, buf_next, fn, arg, &n);
	}
	if (count)
		*count = n;
	return ret;
}

int grb_chan_iter_poll(struct grb_chan_iter *it, grb_record_fn fn, void *arg,
		       int64_t timeout_ns, uint64_t *count)
{
	struct grb_watermark wm;
	struct grb_buf *blocker;
	uint64_t n = 0;
	int ret;

	if (!it || !fn)
		return -EINVAL;
	ret = consume(it, chan_next, fn, arg, &n);
	if (ret == 0 && n == 0) {
		/* Wait where the merge is stuck: on the idle buffer that
		 * holds it back, or on any buffer when none has anything. */
		blocker = grb__chan_iter_blocker(it);
		if (blocker) {
			live_watermark(blocker, &wm);
			ret = grb_buf_wait(blocker, &wm, timeout_ns);
		} else {
			live_watermark(grb__chan_iter_channel(it)->bufs, &wm);
			ret = grb_channel_wait(grb__chan_iter_channel(it),
					       &wm, timeout_ns);
		}
		if (ret == 0 || ret == -ENODATA)
			ret = consume(it, chan_next, fn, arg, &n);
	}
	if (count)
		*count = n;
	return ret;
}
