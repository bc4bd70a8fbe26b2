/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_ckring.c - Concurrency Kit's ck_ring as a plain-queue
 * baseline: single producer, single consumer, reserve + copy + commit.
 *
 * SPSC means one writer per ring, so the scalability run gives each writer
 * thread its own ring (the most favourable arrangement a plain queue has).
 * Without libck-dev at build time the harness reports the skip.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "report.h"

#ifdef GRB_BENCH_HAVE_CK
#include <ck_ring.h>

#include "clock.h"
#include "queue.h"

CK_RING_PROTOTYPE(rts, queue_rec_ts)
CK_RING_PROTOTYPE(rnots, queue_rec)

struct ckq {
	struct ck_ring ring;
	void *slots;
};

static void *ckq_create(size_t slot)
{
	struct ckq *q = (struct ckq *)aligned_alloc(64, sizeof(struct ckq));

	if (!q || !(q->slots = aligned_alloc(64, BENCH_BUF_BYTES))) {
		fprintf(stderr, "grb_bench: out of memory\n");
		exit(1);
	}
	ck_ring_init(&q->ring, (unsigned int)(BENCH_BUF_BYTES / slot));
	return q;
}

static void ckq_destroy(void *p)
{
	struct ckq *q = (struct ckq *)p;

	free(q->slots);
	free(q);
}

BENCH_INLINE struct queue_rec_ts *reserve_ts(struct ckq *q, int drop)
{
	struct queue_rec_ts *s, old;

	s = ck_ring_enqueue_reserve_spsc_rts(&q->ring,
					     (struct queue_rec_ts *)q->slots);
	if (__builtin_expect(s == NULL, 0) && drop) {
		/* The only producer is also the only consumer here. */
		ck_ring_dequeue_spsc_rts(&q->ring,
					 (struct queue_rec_ts *)q->slots, &old);
		s = ck_ring_enqueue_reserve_spsc_rts(&q->ring,
				(struct queue_rec_ts *)q->slots);
	}
	return s;
}

BENCH_NOINLINE static int ck_write_ts_drop(void *p)
{
	struct ckq *q = (struct ckq *)p;
	struct queue_rec_ts *s = reserve_ts(q, 1);

	s->ts = bench_clock_mono();
	s->hdr = 1;
	s->cpu = (uint32_t)sched_getcpu();
	ck_ring_enqueue_commit_spsc(&q->ring);
	return 0;
}

BENCH_NOINLINE static int ck_write_ts_discard(void *p)
{
	struct ckq *q = (struct ckq *)p;
	struct queue_rec_ts *s = reserve_ts(q, 0);

	if (!s)
		return -1;
	s->ts = bench_clock_mono();
	s->hdr = 1;
	s->cpu = (uint32_t)sched_getcpu();
	ck_ring_enqueue_commit_spsc(&q->ring);
	return 0;
}

BENCH_NOINLINE static int ck_write_nots_drop(void *p)
{
	struct ckq *q = (struct ckq *)p;
	struct queue_rec *s, old;

	s = ck_ring_enqueue_reserve_spsc_rnots(&q->ring,
					       (struct queue_rec *)q->slots);
	if (__builtin_expect(s == NULL, 0)) {
		ck_ring_dequeue_spsc_rnots(&q->ring,
					   (struct queue_rec *)q->slots, &old);
		s = ck_ring_enqueue_reserve_spsc_rnots(&q->ring,
				(struct queue_rec *)q->slots);
	}
	s->hdr = 1;
	s->cpu = (uint32_t)sched_getcpu();
	ck_ring_enqueue_commit_spsc(&q->ring);
	return 0;
}

static uint64_t ck_read_some(void *p, uint64_t max, uint64_t *bad)
{
	struct ckq *q = (struct ckq *)p;
	struct queue_rec_ts r;
	uint64_t n = 0;

	while (n < max && ck_ring_dequeue_spsc_rts(&q->ring,
			(struct queue_rec_ts *)q->slots, &r)) {
		*bad += r.cpu >= (uint32_t)CPU_SETSIZE;
		n++;
	}
	return n;
}

static const struct queue_ops ck_ops = {
	.system = "ck_ring",
	.id = "ckring",
	.desc = "ck_ring SPSC reserve+copy+commit",
	.create = ckq_create,
	.destroy = ckq_destroy,
	.write_ts_drop = ck_write_ts_drop,
	.write_nots_drop = ck_write_nots_drop,
	.write_ts_discard = ck_write_ts_discard,
	.read_some = ck_read_some,
	.shared = 0,
};

void bench_ckring_run(const struct bench_opts *o)
{
	bench_queue_run(o, &ck_ops);
}

#else /* !GRB_BENCH_HAVE_CK */

void bench_ckring_run(const struct bench_opts *o)
{
	(void)o;
	report_skip("ck_ring", "libck-dev (ck_ring.h, libck) not found at "
		    "build time; scripts/install-bench-deps installs it");
}

#endif
