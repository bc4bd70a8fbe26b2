/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_wake.c - how soon a waiting reader gets one record, and what
 * a low-rate stream costs in buffer space, each beside a baseline measured
 * in the same run:
 *
 *  wake-up   one record at random intervals of 0.2-1.8 ms to a reader
 *            blocked in grb_buf_iter_poll(), or in grb_buf_wait() with a
 *            watermark one byte past what it read, against a bare futex
 *            wake-up between the same two threads;
 *  low rate  1,000 records/s into 64 KiB sub-buffers: buffer bytes used
 *            per record with live reading, against a reader that flushes
 *            after every record (the way without grb_reader_live()).
 *
 * The writer is the first writer CPU's thread; the reader runs on the
 * reader CPU.  Each record carries the CLOCK_MONOTONIC time read just
 * before its commit; the latency is from then to the return of the
 * reader's call that got it.
 */
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "grb/channel.h"
#include "grb/iter.h"
#include "grb/reader.h"
#include "grb/wait.h"

#include "bench.h"
#include "read_client.h"
#include "report.h"
#include "util.h"

#define LOW_SUBBUF (64u << 10)

/*
 * Wake-up latency and the low rate.  A writer on the first writer CPU
 * commits one record at a time; a reader thread on the reader CPU waits
 * for it in one of these ways and notes, when its call returns, how long
 * ago each record it got was stamped.
 */
enum wake_kind {
	WAKE_FUTEX,   /* baseline: a bare futex wake-up, no ring buffer */
	WAKE_POLL,    /* grb_buf_iter_poll(): the live watermark */
	WAKE_WAIT,    /* grb_buf_wait() one byte past what was read */
	WAKE_FLUSH,   /* wait, flush, get_next: without live reading */
	NR_WAKE
};

static const struct {
	const char *id, *label;
} wakes[NR_WAKE] = {
	{ "futex", "futex wake-up, no ring buffer (baseline)" },
	{ "poll", "grb_buf_iter_poll, live watermark" },
	{ "wait", "grb_buf_wait past what was read + consume" },
	{ "flush", "grb_buf_wait, flush, get_next (no live read)" },
};

#define WAKE_PENDING 256
#define WAKE_TIMEOUT_NS 100000000   /* a reader re-checks every 100 ms */

struct waker {
	enum wake_kind kind;
	struct grb_channel *chan;
	struct grb_buf *buf;
	struct grb_buf_iter *it;
	atomic_uint seq;                /* futex baseline: the futex word */
	atomic_uint_fast64_t sent;      /* futex baseline: the time */
	uint32_t seen;                  /* futex baseline: reader's copy */
	atomic_int stop, ready;
	atomic_uint_fast64_t taken;     /* records the reader got */
	uint64_t pending[WAKE_PENDING];
	unsigned int npend;
	double *lat;
	uint64_t nlat, cap;
	uint64_t slot_bytes;            /* slots of the records read */
	uint64_t read_end;              /* position past the last read */
	uint64_t calls, empty;          /* waiting calls, ones with nothing */
	uint64_t cpu_ns, wall_ns;
	int err;
};

static void futex_call(atomic_uint *w, int op, uint32_t val,
		       const struct timespec *ts)
{
	syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0);
}

static int wake_cb(void *arg, const struct grb_iter_record *r)
{
	struct waker *w = (struct waker *)arg;
	uint64_t t, sb = r->pos & ~(uint64_t)(LOW_SUBBUF - 1);

	if (r->payload_len != sizeof(t)) {
		w->err = -EINVAL;
		return 1;
	}
	memcpy(&t, r->payload, sizeof(t));
	w->pending[w->npend++] = t;
	w->slot_bytes += r->rec.next - (r->pos - sb);
	w->read_end = sb + r->rec.next;
	return w->npend == WAKE_PENDING;
}

static int futex_step(struct waker *w, uint64_t *cnt)
{
	static const struct timespec to = { 0, WAKE_TIMEOUT_NS };
	uint32_t s = atomic_load_explicit(&w->seq, memory_order_acquire);

	*cnt = 0;
	if (s == w->seen) {
		if (atomic_load(&w->stop))
			return -ENODATA;
		futex_call(&w->seq, FUTEX_WAIT_PRIVATE, s, &to);
		return 0;
	}
	/* The acquire above pairs with the writer's release increment. */
	w->pending[w->npend++] = atomic_load_explicit(&w->sent,
						      memory_order_relaxed);
	w->seen = s;
	*cnt = 1;
	return 0;
}

/* Consume; when there was nothing, block until one byte past what was
 * read is committed (or a sub-buffer delivered), and consume again. */
static int wait_step(struct waker *w, uint64_t *cnt)
{
	struct grb_watermark wm = { 1, 1 };
	struct grb_buf_stats st;
	int ret = grb_buf_iter_consume(w->it, wake_cb, w, cnt);

	if (ret || *cnt)
		return ret;
	grb_buf_get_stats(w->buf, &st);
	if (w->read_end > st.consumed)
		wm.bytes = w->read_end - st.consumed + 1;
	ret = grb_buf_wait(w->buf, &wm, WAKE_TIMEOUT_NS);
	if (ret == -ETIMEDOUT)
		return 0;
	if (ret && ret != -ENODATA)
		return ret;
	return grb_buf_iter_consume(w->it, wake_cb, w, cnt);
}

/* The way without live reading: wake on a committed record, close its
 * sub-buffer, take what was delivered. */
static int flush_step(struct waker *w, uint64_t *cnt)
{
	struct grb_watermark wm = { 1, 1 };
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	uint64_t t;
	int ret;

	*cnt = 0;
	ret = grb_buf_wait(w->buf, &wm, WAKE_TIMEOUT_NS);
	if (ret == -ETIMEDOUT)
		return 0;
	if (ret && ret != -ENODATA)
		return ret;
	grb_buf_flush(w->buf, GRB_FLUSH_ACTIVE);
	while ((ret = grb_reader_get_next(w->buf)) == 0) {
		size_t off = grb_reader_first_record(w->buf);

		grb_reader_held(w->buf, &sb);
		while (off < sb.data_size && w->npend < WAKE_PENDING &&
		       rd_decode(&cfg_one_dc, sb.data, off, sb.data_size,
				 &rec) == 0 && rec.payload_len == sizeof(t)) {
			memcpy(&t, (const char *)sb.data + rec.payload_off,
			       sizeof(t));
			w->pending[w->npend++] = t;
			w->slot_bytes += rec.next - off;
			off = rec.next;
			(*cnt)++;
		}
		grb_reader_put_next(w->buf);
	}
	return ret == -EAGAIN ? 0 : ret;
}

/* The latency of every record the last call returned. */
static void wake_stamp(struct waker *w, uint64_t cnt)
{
	uint64_t now = bench_now_ns();
	unsigned int i;

	w->calls++;
	w->empty += cnt == 0;
	for (i = 0; i < w->npend; i++)
		if (w->nlat < w->cap)
			w->lat[w->nlat++] = (double)(now - w->pending[i]);
	atomic_fetch_add(&w->taken, w->npend);
	w->npend = 0;
}

static void *wake_reader(void *p)
{
	struct waker *w = (struct waker *)p;
	uint64_t c0, t0, cnt;
	int ret = 0;

	bench_pin_self(bench_cpu_for_reader());
	if (w->kind == WAKE_POLL || w->kind == WAKE_WAIT)
		ret = grb_buf_iter_create(w->buf, GRB_ITER_CONSUME, &w->it);
	else if (w->kind == WAKE_FLUSH)
		ret = grb_reader_open(w->buf);
	w->err = ret;
	c0 = bench_thread_cpu_ns();
	t0 = bench_now_ns();
	atomic_store(&w->ready, 1);
	while (ret == 0) {
		switch (w->kind) {
		case WAKE_FUTEX:
			ret = futex_step(w, &cnt);
			break;
		case WAKE_POLL:
			ret = grb_buf_iter_poll(w->it, wake_cb, w,
						WAKE_TIMEOUT_NS, &cnt);
			break;
		case WAKE_WAIT:
			ret = wait_step(w, &cnt);
			break;
		default:
			ret = flush_step(w, &cnt);
			break;
		}
		wake_stamp(w, cnt);
		if (ret == -ETIMEDOUT || ret == -ECANCELED)
			ret = 0;
	}
	w->cpu_ns = bench_thread_cpu_ns() - c0;
	w->wall_ns = bench_now_ns() - t0;
	if (ret != -ENODATA && !w->err)
		w->err = ret;
	if (w->it)
		grb_buf_iter_destroy(w->it);
	else if (w->kind == WAKE_FLUSH)
		grb_reader_release(w->buf);
	return NULL;
}

/* Busy CPU time of the whole machine and of this process, for the load
 * other programs put on it while a wake-up run went on. */
struct sysload {
	double busy_s, steal_s, self_s, wall_s;
};

static void sysload_read(struct sysload *l)
{
	unsigned long long v[8] = { 0 };
	double hz = (double)sysconf(_SC_CLK_TCK);
	struct rusage ru;
	FILE *f = fopen("/proc/stat", "re");

	memset(l, 0, sizeof(*l));
	if (f) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]) != 8)
			memset(v, 0, sizeof(v));
		fclose(f);
	}
	/* user nice system idle iowait irq softirq steal */
	l->busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
	l->steal_s = (double)v[7] / hz;
	getrusage(RUSAGE_SELF, &ru);
	l->self_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
		    ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec)
		    / 1e6;
	l->wall_s = (double)bench_now_ns() / 1e9;
}

/* Percent of all online CPUs' time: other programs', and stolen. */
static void sysload_since(const struct sysload *a, double *other,
			  double *steal)
{
	struct sysload b;
	double cap;

	sysload_read(&b);
	cap = (b.wall_s - a->wall_s) * (double)sysconf(_SC_NPROCESSORS_ONLN);
	*other = 100.0 * ((b.busy_s - a->busy_s) - (b.self_s - a->self_s)) /
		 cap;
	if (*other < 0)
		*other = 0;
	*steal = 100.0 * (b.steal_s - a->steal_s) / cap;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One record, now, through the way @w is measured. */
static int wake_send(struct waker *w)
{
	if (w->kind != WAKE_FUTEX)
		return rd_write(&cfg_one_dc, w->chan, 1);
	atomic_store_explicit(&w->sent, bench_now_ns(), memory_order_relaxed);
	/* Release: the reader that sees the new value sees the time. */
	atomic_fetch_add_explicit(&w->seq, 1, memory_order_release);
	futex_call(&w->seq, FUTEX_WAKE_PRIVATE, 1, NULL);
	return 0;
}

/* What one wake-up or low-rate run measured. */
struct wake_out {
	double p50, p99, max, cpu_pct, calls_per_rec;
	double bytes_per_rec, slot, live_frac;
	uint64_t sent, taken, refused;
};

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * @n records from this thread: at random intervals of 0.2-1.8 ms
 * (@period_ns 0), or every @period_ns on a fixed schedule.
 */
static void wake_run(enum wake_kind kind, uint64_t n, uint64_t period_ns,
		     struct wake_out *out)
{
	struct waker *w = (struct waker *)calloc(1, sizeof(*w));
	uint64_t rng = 0x9e3779b97f4a7c15u, i, p0 = 0, p1 = 0, deadline;
	struct grb_buf_stats st;
	struct timespec ts;
	pthread_t tid;

	if (!w || !(w->lat = (double *)malloc(n * sizeof(double)))) {
		fprintf(stderr, "grb_bench: out of memory\n");
		exit(1);
	}
	memset(out, 0, sizeof(*out));
	w->kind = kind;
	w->cap = n;
	if (kind != WAKE_FUTEX) {
		w->chan = rd_chan(&cfg_one_dc, LOW_SUBBUF);
		w->buf = grb_channel_buf(w->chan, 0);
	}
	if (pthread_create(&tid, NULL, wake_reader, w) != 0) {
		fprintf(stderr, "grb_bench: cannot start the reader\n");
		exit(1);
	}
	while (!atomic_load(&w->ready))
		sched_yield();
	if (w->buf && grb_buf_get_stats(w->buf, &st) == 0)
		p0 = st.produced;
	deadline = bench_now_ns();
	for (i = 0; i < n; i++) {
		deadline += period_ns ? period_ns :
			    200000 + xorshift(&rng) % 1600000;
		if (deadline < bench_now_ns())
			deadline = bench_now_ns();
		ts.tv_sec = (time_t)(deadline / 1000000000u);
		ts.tv_nsec = (long)(deadline % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
		out->refused += wake_send(w) != 0;
	}
	out->sent = n - out->refused;
	/* Give the reader a second to take the last records without a
	 * flush; what it then has was read live (or flushed by itself). */
	for (i = 0; i < 1000 && atomic_load(&w->taken) < out->sent; i++)
		bench_poll_sleep(1000);
	out->taken = atomic_load(&w->taken);
	if (w->buf && grb_buf_get_stats(w->buf, &st) == 0)
		p1 = st.produced;
	atomic_store(&w->stop, 1);
	if (kind == WAKE_FUTEX)
		futex_call(&w->seq, FUTEX_WAKE_PRIVATE, 1, NULL);
	else
		grb_channel_finalize(w->chan);
	pthread_join(tid, NULL);
	if (w->err)
		fprintf(stderr, "  read: %s reader: %s\n", wakes[kind].id,
			grb_strerror(w->err));
	qsort(w->lat, w->nlat, sizeof(double), cmp_dbl);
	out->p50 = w->nlat ? w->lat[w->nlat / 2] / 1e3 : NAN;
	out->p99 = w->nlat ? w->lat[w->nlat * 99 / 100] / 1e3 : NAN;
	out->max = w->nlat ? w->lat[w->nlat - 1] / 1e3 : NAN;
	out->cpu_pct = w->wall_ns ? 100.0 * (double)w->cpu_ns /
		       (double)w->wall_ns : NAN;
	out->calls_per_rec = out->taken ? (double)w->calls /
			     (double)out->taken : NAN;
	out->bytes_per_rec = out->sent && w->buf ?
			     (double)(p1 - p0) / (double)out->sent : NAN;
	out->slot = out->taken && w->buf ?
		    (double)w->slot_bytes / (double)out->taken : NAN;
	out->live_frac = out->sent ? (double)out->taken /
			 (double)out->sent : NAN;
	if (w->chan)
		grb_channel_destroy(w->chan);
	free(w->lat);
	free(w);
}

static void wake_row(const char *group, const char *id, const char *metric,
		     const char *unit, double v, const char *config,
		     const char *note)
{
	struct bench_row *row = report_add("rd/%s/%s/%s", group, id, metric);

	report_describe(row, "read", strcmp(id, "futex") ? "grb" : "futex",
			metric, unit, LOW_SUBBUF, 1, 1);
	snprintf(row->config, sizeof(row->config), "%.*s",
		 (int)sizeof(row->config) - 1, config);
	snprintf(row->note, sizeof(row->note), "%s", note);
	row->payload = 8;
	row->value = row->min = row->max = v;
	row->runs = 1;
}

static void latency_rows(const char *group, const char *id,
			 const struct wake_out *w, const char *config)
{
	char note[160];

	snprintf(note, sizeof(note), "%llu records sent, %llu taken, %llu "
		 "refused", (unsigned long long)w->sent,
		 (unsigned long long)w->taken,
		 (unsigned long long)w->refused);
	wake_row(group, id, "p50", "us", w->p50, config, note);
	wake_row(group, id, "p99", "us", w->p99, config, note);
	wake_row(group, id, "max", "us", w->max, config, note);
	wake_row(group, id, "reader_cpu", "% of one CPU", w->cpu_pct, config,
		 "reader thread CPU time / its wall time");
	wake_row(group, id, "calls_per_record", "calls/record",
		 w->calls_per_rec, config, "waiting calls the reader made "
		 "per record it got");
}

/* Wake-up latency: the futex baseline, then the two grb waits. */
static void wake_latency(const struct bench_opts *o)
{
	static const enum wake_kind kinds[] = {
		WAKE_FUTEX, WAKE_POLL, WAKE_WAIT };
	double other, steal;
	struct wake_out w;
	struct sysload l0;
	char config[96];
	size_t i;

	sysload_read(&l0);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		fprintf(stderr, "  read: wake-up, %s\n", wakes[kinds[i]].id);
		wake_run(kinds[i], o->n_wake, 0, &w);
		snprintf(config, sizeof(config), "%s; one record every "
			 "0.2-1.8 ms (random)", wakes[kinds[i]].label);
		latency_rows("wake", wakes[kinds[i]].id, &w, config);
	}
	sysload_since(&l0, &other, &steal);
	wake_row("wake", "load", "other_cpu", "% of all CPUs", other,
		 "CPU time of other programs during the wake-up runs",
		 "/proc/stat busy time minus this process's");
	wake_row("wake", "load", "steal", "% of all CPUs", steal,
		 "CPU time stolen by the hypervisor during the wake-up runs",
		 "/proc/stat steal");
}

/* 1,000 records/s: live reading against a flush per record. */
static void wake_low_rate(const struct bench_opts *o)
{
	static const struct {
		enum wake_kind kind;
		const char *id;
	} runs[] = { { WAKE_POLL, "live" }, { WAKE_FLUSH, "flush" } };
	struct wake_out w;
	char config[128];
	size_t i;

	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		fprintf(stderr, "  read: low rate, %s\n", runs[i].id);
		wake_run(runs[i].kind, 1000u * o->low_secs, 1000000, &w);
		snprintf(config, sizeof(config), "%s; 1000 records/s for %u "
			 "s, 64 KiB sub-buffers", wakes[runs[i].kind].label,
			 o->low_secs);
		latency_rows("low", runs[i].id, &w, config);
		wake_row("low", runs[i].id, "bytes_per_record", "bytes/record",
			 w.bytes_per_rec, config, "write position advanced / "
			 "records written");
		wake_row("low", runs[i].id, "slot", "bytes/record", w.slot,
			 config, "the records' own slots (header, payload, "
			 "padding), mean");
		wake_row("low", runs[i].id, "ratio", "x slot",
			 w.bytes_per_rec / w.slot, config,
			 "buffer bytes per record / slot bytes");
		wake_row("low", runs[i].id, "taken", "fraction",
			 w.live_frac, config, "records the reader had before "
			 "the channel was finalized / written");
	}
}

void bench_wake_run(const struct bench_opts *o)
{
	wake_latency(o);
	wake_low_rate(o);
}
