/* SPDX-License-Identifier: MIT */
/*
 * bench/queue.c - sections 1 (no reader), 2 and 3 for a plain queue, run
 * with the same loops, counts and placement as grb's.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "queue.h"
#include "report.h"

static void row_common(struct bench_row *row, const struct queue_ops *q,
		       const char *section, const char *name,
		       const char *unit, int threads, int reader)
{
	report_describe(row, section, q->system, name, unit, 0, threads,
			reader);
}

static void alone(const struct bench_opts *o, const struct queue_ops *q,
		  int ts)
{
	void *qu = q->create(ts ? sizeof(struct queue_rec_ts)
				: sizeof(struct queue_rec));
	bench_write_fn fn = ts ? q->write_ts_drop : q->write_nots_drop;
	struct bench_stat st;
	struct bench_row *row;
	struct bench_loop l;
	double ns[64];
	int k;

	bench_loop_wall(fn, qu, o->n_warm, &l);
	for (k = 0; k < o->runs; k++) {
		bench_loop_wall(fn, qu, o->n_single, &l);
		ns[k] = (double)l.ns / (double)o->n_single;
	}
	q->destroy(qu);
	bench_stat_of(ns, o->runs, &st);
	row = report_add("ow/%s-%s/0/alone", q->id, ts ? "mono" : "nots");
	row_common(row, q, "overwrite", "ns_per_entry", "ns/entry", 1, 0);
	snprintf(row->config, sizeof(row->config),
		 "%s, %s, drops the oldest when full, no reader", q->desc,
		 ts ? "ts=clock_gettime(MONOTONIC), 16-byte slots"
		    : "no timestamp, 8-byte slots");
	report_set(row, &st);
}

struct consumer {
	const struct queue_ops *q;
	void *qu;
	unsigned int poll_us;
	atomic_int stop;            /* 2: drain, then stop */
	atomic_int ready;           /* set once pinned, before reading */
	atomic_uint_fast64_t records;
	uint64_t bad;
	pthread_t tid;
};

static void *consumer_main(void *p)
{
	struct consumer *c = (struct consumer *)p;

	bench_pin_self(bench_cpu_for_reader());
	atomic_store_explicit(&c->ready, 1, memory_order_release);
	for (;;) {
		int stop = atomic_load_explicit(&c->stop, memory_order_acquire);
		uint64_t n = c->q->read_some(c->qu, 4096, &c->bad);

		atomic_fetch_add_explicit(&c->records, n, memory_order_relaxed);
		if (n == 0 && stop == 2)
			break;
		if (n == 0)
			bench_poll_sleep(c->poll_us);
	}
	return NULL;
}

struct totals {
	uint64_t attempts, written, lost, read, mismatch;
	double ns_call[64], ns_written[64], ns_lost[64], rate[64];
	int nw, nl;
};

static void discard_once(const struct bench_opts *o,
			 const struct queue_ops *q, unsigned int poll_us,
			 struct totals *t, int k)
{
	struct bench_batches b;
	struct consumer c;
	uint64_t read_during;

	memset(&c, 0, sizeof(c));
	c.q = q;
	c.qu = q->create(sizeof(struct queue_rec_ts));
	c.poll_us = poll_us;
	if (pthread_create(&c.tid, NULL, consumer_main, &c) != 0) {
		fprintf(stderr, "grb_bench: cannot start the consumer\n");
		exit(1);
	}
	/* The writer starts only once the consumer runs on its CPU. */
	while (!atomic_load_explicit(&c.ready, memory_order_acquire))
		sched_yield();
	bench_loop_batched(q->write_ts_discard, c.qu, o->n_discard, &b);
	read_during = atomic_load(&c.records);
	atomic_store_explicit(&c.stop, 2, memory_order_release);
	pthread_join(c.tid, NULL);
	q->destroy(c.qu);
	t->attempts += o->n_discard;
	t->written += b.written;
	t->lost += b.refused;
	t->read += atomic_load(&c.records);
	t->mismatch += (atomic_load(&c.records) != b.written) + c.bad;
	t->ns_call[k] = (double)b.ns / (double)o->n_discard;
	t->rate[k] = (double)read_during * 1e9 / (double)b.ns;
	if (b.n_written)
		t->ns_written[t->nw++] = (double)b.ns_written /
					 (double)b.n_written;
	if (b.n_refused)
		t->ns_lost[t->nl++] = (double)b.ns_refused /
				      (double)b.n_refused;
}

static struct bench_row *discard_row(const struct queue_ops *q,
				     const char *sfx, unsigned int poll_us,
				     const char *metric, const char *unit,
				     const char *note)
{
	struct bench_row *row = report_add("dc/%s%s/%s", q->id, sfx, metric);

	row_common(row, q, "discard", metric, unit, 1, 1);
	snprintf(row->config, sizeof(row->config),
		 "%s, ts=clock_gettime(MONOTONIC), 16-byte slots, "
		 "consumer on the other CPU polling every %u us", q->desc,
		 poll_us);
	snprintf(row->note, sizeof(row->note), "%s", note);
	return row;
}

static void discard(const struct bench_opts *o, const struct queue_ops *q,
		    const char *sfx, unsigned int poll_us)
{
	const struct report_metric *stats = report_discard_metrics;
	struct totals t;
	struct bench_stat st;
	struct bench_row *row;
	char note[128];
	int k;
	size_t i;

	memset(&t, 0, sizeof(t));
	for (k = 0; k < o->runs; k++)
		discard_once(o, q, poll_us, &t, k);
	snprintf(note, sizeof(note), "summed over %d runs of %llu attempts; "
		 "written + lost %s attempts; read %s written", o->runs,
		 (unsigned long long)o->n_discard,
		 t.written + t.lost == t.attempts ? "==" : "!=",
		 t.read == t.written ? "==" : "!=");
	row = discard_row(q, sfx, poll_us, "attempts", "records", note);
	row->value = row->min = row->max = (double)t.attempts;
	row = discard_row(q, sfx, poll_us, "written", "records", note);
	row->value = row->min = row->max = (double)t.written;
	row = discard_row(q, sfx, poll_us, "lost", "records", note);
	row->value = row->min = row->max = (double)t.lost;
	row = discard_row(q, sfx, poll_us, "read", "records", note);
	row->value = row->min = row->max = (double)t.read;
	row = discard_row(q, sfx, poll_us, "check", "mismatches", t.mismatch ?
			  "COUNTS DO NOT ADD UP" : "writer and reader agree");
	row->value = row->min = row->max = (double)t.mismatch;
	for (i = 0; i < REPORT_DISCARD_METRICS; i++) {
		const double *v = i == 0 ? t.ns_call : i == 1 ? t.ns_written :
				  i == 2 ? t.ns_lost : t.rate;
		int n = i == 1 ? t.nw : i == 2 ? t.nl : o->runs;

		row = discard_row(q, sfx, poll_us, stats[i].metric, stats[i].unit,
				  stats[i].note);
		bench_stat_of(v, n, &st);
		report_set(row, &st);
	}
}

struct scale_set {
	void *qu[8 * BENCH_MAX_THREADS];
	int shared;
};

static void *scale_obj(void *arg, int idx)
{
	struct scale_set *s = (struct scale_set *)arg;

	return s->qu[s->shared ? 0 : idx];
}

static void scale(const struct bench_opts *o, const struct queue_ops *q,
		  int ts)
{
	struct scale_set set;
	int t, k, i, maxt = 0;

	for (t = 0; t < BENCH_MAX_THREADS; t++)
		if (o->threads[t] > maxt)
			maxt = o->threads[t];
	if (maxt > 8 * BENCH_MAX_THREADS)
		maxt = 8 * BENCH_MAX_THREADS;
	memset(&set, 0, sizeof(set));
	set.shared = q->shared;
	for (i = 0; i < (q->shared ? 1 : maxt); i++)
		set.qu[i] = q->create(ts ? sizeof(struct queue_rec_ts)
					 : sizeof(struct queue_rec));
	for (t = 0; t < BENCH_MAX_THREADS; t++) {
		struct bench_scale s = {
			.fn = ts ? q->write_ts_drop : q->write_nots_drop,
			.obj = scale_obj, .arg = &set,
			.threads = o->threads[t] < maxt ? o->threads[t] : maxt,
			.per_thread = o->n_scale,
		};
		struct bench_stat st;
		struct bench_row *row;
		double ns[64];

		for (k = 0; k < o->runs; k++) {
			bench_scale_run(&s);
			ns[k] = (double)s.cpu_ns / (double)s.records;
		}
		bench_stat_of(ns, o->runs, &st);
		row = report_add("sc/%s-%s/%d", q->id, ts ? "mono" : "nots",
				 s.threads);
		row_common(row, q, "scale", "cpu_ns_per_record",
			   "ns CPU/record", s.threads, 0);
		snprintf(row->config, sizeof(row->config),
			 "%s, %s, %s, drops the oldest when full", q->desc,
			 ts ? "ts=clock_gettime(MONOTONIC)" : "no timestamp",
			 q->shared ? "one queue shared by all writers"
				   : "one queue per writer");
		snprintf(row->note, sizeof(row->note), "%s",
			 s.threads > bench_nr_cpus() ?
			 "more threads than CPUs" : "");
		report_set(row, &st);
	}
	for (i = 0; i < (q->shared ? 1 : maxt); i++)
		q->destroy(set.qu[i]);
}

void bench_queue_run(const struct bench_opts *o, const struct queue_ops *q)
{
	alone(o, q, 1);
	alone(o, q, 0);
	discard(o, q, "", o->poll_us);
	discard(o, q, "-slow", o->poll_us_slow);
	scale(o, q, 1);
	scale(o, q, 0);
}
