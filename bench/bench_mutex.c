/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_mutex.c - a ring of fixed slots behind one pthread mutex:
 * the queue anyone writes first, as a baseline.
 *
 * The timestamp is read under the lock so that records are in time order
 * in the ring, as a ring buffer's are.  In the scalability run every
 * writer shares the one ring.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "clock.h"
#include "queue.h"

struct mring {
	pthread_mutex_t lock;
	unsigned char *slots;
	uint64_t head, tail;     /* slots written, slots consumed */
	uint64_t nslots;
	size_t slot;
};

static void *mring_create(size_t slot)
{
	struct mring *m = (struct mring *)calloc(1, sizeof(*m));

	if (!m || !(m->slots = (unsigned char *)aligned_alloc(64,
							BENCH_BUF_BYTES))) {
		fprintf(stderr, "grb_bench: out of memory\n");
		exit(1);
	}
	pthread_mutex_init(&m->lock, NULL);
	m->slot = slot;
	m->nslots = BENCH_BUF_BYTES / slot;
	return m;
}

static void mring_destroy(void *p)
{
	struct mring *m = (struct mring *)p;

	pthread_mutex_destroy(&m->lock);
	free(m->slots);
	free(m);
}

/* The slot to fill, under the lock; NULL when full and not dropping. */
BENCH_INLINE unsigned char *mring_slot(struct mring *m, int drop)
{
	if (m->head - m->tail == m->nslots) {
		if (!drop)
			return NULL;
		m->tail++;
	}
	return m->slots + (m->head++ & (m->nslots - 1)) * m->slot;
}

BENCH_INLINE int mring_write_ts(struct mring *m, int drop)
{
	struct queue_rec_ts r;
	unsigned char *s;

	r.hdr = 1;
	r.cpu = (uint32_t)sched_getcpu();
	pthread_mutex_lock(&m->lock);
	s = mring_slot(m, drop);
	if (s) {
		r.ts = bench_clock_mono();
		memcpy(s, &r, sizeof(r));
	}
	pthread_mutex_unlock(&m->lock);
	return s ? 0 : -1;
}

BENCH_NOINLINE static int mutex_write_ts_drop(void *p)
{
	return mring_write_ts((struct mring *)p, 1);
}

BENCH_NOINLINE static int mutex_write_ts_discard(void *p)
{
	return mring_write_ts((struct mring *)p, 0);
}

BENCH_NOINLINE static int mutex_write_nots_drop(void *p)
{
	struct mring *m = (struct mring *)p;
	struct queue_rec r = { 1, (uint32_t)sched_getcpu() };

	pthread_mutex_lock(&m->lock);
	memcpy(mring_slot(m, 1), &r, sizeof(r));
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static uint64_t mutex_read_some(void *p, uint64_t max, uint64_t *bad)
{
	struct mring *m = (struct mring *)p;
	struct queue_rec_ts r[256];
	uint64_t n = 0, i;

	if (max > 256)
		max = 256;
	pthread_mutex_lock(&m->lock);
	while (n < max && m->tail != m->head) {
		memcpy(&r[n++], m->slots + (m->tail & (m->nslots - 1)) *
		       m->slot, sizeof(r[0]));
		m->tail++;
	}
	pthread_mutex_unlock(&m->lock);
	for (i = 0; i < n; i++)
		*bad += r[i].cpu >= (uint32_t)CPU_SETSIZE;
	return n;
}

static const struct queue_ops mutex_ops = {
	.system = "mutex",
	.id = "mutex",
	.desc = "ring behind a pthread mutex",
	.create = mring_create,
	.destroy = mring_destroy,
	.write_ts_drop = mutex_write_ts_drop,
	.write_nots_drop = mutex_write_nots_drop,
	.write_ts_discard = mutex_write_ts_discard,
	.read_some = mutex_read_some,
	.shared = 1,
};

void bench_mutex_run(const struct bench_opts *o)
{
	bench_queue_run(o, &mutex_ops);
}
