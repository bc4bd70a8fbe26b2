/* SPDX-License-Identifier: MIT */
/*
 * src/timer.c - the periodic tick (flush what stayed open, deliver an
 * empty sub-buffer for an idle buffer) and the optional ticker thread.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "engine.h"
#include "grb/timer.h"

#define TICK_FLAGS (GRB_TICK_FLUSH | GRB_TICK_IDLE)

static void tick_buf(struct grb_buf *buf, uint64_t *last, unsigned int flags)
{
	/* Acquire: pairs with the reservations' CAS; only a snapshot. */
	uint64_t p = grb_load_acquire(&buf->shm->offset);

	if ((flags & GRB_TICK_FLUSH) && grb__subbuf_offset(buf, p) != 0 &&
	    grb__subbuf_offset(buf, *last) != 0 &&
	    grb__subbuf_trunc(buf, p) == grb__subbuf_trunc(buf, *last))
		grb_buf_flush(buf, GRB_FLUSH_ACTIVE);   /* open a whole period */
	else if ((flags & GRB_TICK_IDLE) && p == *last &&
		 grb__subbuf_offset(buf, p) == 0)
		grb_buf_flush(buf, GRB_FLUSH_EMPTY);    /* idle a whole period */
	*last = grb_load_acquire(&buf->shm->offset);
}

int grb_channel_tick(struct grb_channel *chan, unsigned int flags)
{
	unsigned int i;

	if (!chan || (flags & ~TICK_FLAGS))
		return -EINVAL;
	for (i = 0; i < chan->nr_bufs; i++)
		tick_buf(&chan->bufs[i], &chan->tick_pos[i], flags);
	return 0;
}

struct grb_ticker {
	struct grb_channel *chan;
	uint64_t period_ns;
	unsigned int flags;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
};

static void *ticker_main(void *arg)
{
	struct grb_ticker *t = (struct grb_ticker *)arg;
	struct timespec next, now;

	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		next.tv_nsec += (long)(t->period_ns % 1000000000u);
		next.tv_sec += (time_t)(t->period_ns / 1000000000u) +
			next.tv_nsec / 1000000000;
		next.tv_nsec %= 1000000000;
		/*
		 * A deadline already past (a tick slower than a period, the
		 * process stopped): the next tick is a period from now, not
		 * one of a burst that would each find the buffers "idle for
		 * a period" and flush or deliver empty sub-buffers for it.
		 */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec ||
		    (now.tv_sec == next.tv_sec && now.tv_nsec >= next.tv_nsec)) {
			next.tv_nsec = now.tv_nsec +
				(long)(t->period_ns % 1000000000u);
			next.tv_sec = now.tv_sec +
				(time_t)(t->period_ns / 1000000000u) +
				next.tv_nsec / 1000000000;
			next.tv_nsec %= 1000000000;
		}
		while (!t->stop &&
		       pthread_cond_timedwait(&t->cond, &t->lock, &next) == 0)
			;
		if (t->stop)
			break;
		pthread_mutex_unlock(&t->lock);
		grb_channel_tick(t->chan, t->flags);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int grb_ticker_start(struct grb_channel *chan, uint64_t period_ns,
		     unsigned int flags, struct grb_ticker **out)
{
	struct grb_ticker *t;
	pthread_condattr_t ca;
	int ret;

	if (!chan || !out || period_ns == 0 || (flags & ~TICK_FLAGS))
		return -EINVAL;
	t = (struct grb_ticker *)calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->chan = chan;
	t->period_ns = period_ns;
	t->flags = flags;
	pthread_mutex_init(&t->lock, NULL);
	/* The deadline is on CLOCK_MONOTONIC: wall-clock steps do not
	 * stretch or shrink a period. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&t->thread, NULL, ticker_main, t);
	if (ret) {
		pthread_cond_destroy(&t->cond);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return -ret;
	}
	*out = t;
	return 0;
}

int grb_ticker_stop(struct grb_ticker *t)
{
	if (!t)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	free(t);
	return 0;
}
