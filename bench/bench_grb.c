/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_grb.c - grb measured through a client of its own: the
 * configurations, the record format, the writer and reader, and the three
 * experiments (overwrite with and without a reader, discard with a reader,
 * write-side scalability).
 *
 * Record, 4-byte aligned, after a 64-byte sub-buffer header:
 *
 *	u32  bit 31: full timestamp follows; bits 27-30: event id (1);
 *	     bits 0-26: low 27 bits of the timestamp (0 without a clock)
 *	u64  full timestamp, only when bit 31 is set
 *	u32  payload: the writer's CPU id
 *
 * 8 bytes per record in the common case, as LTTng-UST's compact event
 * header (27-bit timestamp, 5-bit id) plus the same 32-bit field.
 *
 * Clocks: the default is clock_gettime(CLOCK_MONOTONIC), the clock
 * LTTng-UST stamps its events with, so grb and LTTng pay for the same
 * clock; a second variant reads the TSC with rdtscp (ordered after the
 * position load, as grb/config.h requires; a bare rdtsc is not), to show
 * what the cheapest valid clock gives against the rdtsc floor.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grb/channel.h"
#include "grb/reader.h"
#include "grb/writer.h"

#include "bench.h"
#include "clock.h"
#include "report.h"
#include "util.h"

#define REC_FULL     (UINT32_C(1) << 31)
#define REC_ID       (UINT32_C(1) << 27)
#define REC_TS_BITS  27
#define REC_TS_MASK  ((UINT32_C(1) << REC_TS_BITS) - 1)
#define SB_MAGIC     0x62656e63u   /* "benc" */

/* Sub-buffer header, 64 bytes. */
struct sb_header {
	uint32_t magic;
	int32_t cpu;
	uint64_t seq;
	uint64_t ts_begin;
	uint64_t ts_end;
	uint64_t data_size;
	uint64_t records;
	uint64_t lost;
	uint64_t overwritten;
};

static uint64_t clock_tsc(void)
{
	return bench_rdtscp();
}

static size_t rec_header_size(const struct grb_config *cfg, size_t offset,
			      size_t *pre, const struct grb_ctx *ctx)
{
	*pre = (0 - offset) & 3;
	if (cfg->timestamp_bits && (ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP))
		return *pre + sizeof(uint32_t) + sizeof(uint64_t);
	return *pre + sizeof(uint32_t);
}

static size_t sb_header_size(void)
{
	return sizeof(struct sb_header);
}

static void sb_begin(struct grb_buf *buf, void *header,
		     const struct grb_subbuf_info *info)
{
	struct sb_header *h = (struct sb_header *)header;

	(void)buf;
	h->magic = SB_MAGIC;
	h->cpu = info->cpu;
	h->seq = info->seq;
	h->ts_begin = info->timestamp;
}

static void sb_end(struct grb_buf *buf, void *header,
		   const struct grb_subbuf_info *info)
{
	struct sb_header *h = (struct sb_header *)header;

	(void)buf;
	h->ts_end = info->timestamp;
	h->data_size = info->data_size;
	h->records = info->records;
	h->lost = info->lost;
	h->overwritten = info->overwritten;
}

#define REC_CB(clock) {                          \
	.clock_read = (clock),                    \
	.record_header_size = rec_header_size,    \
	.subbuf_header_size = sb_header_size,     \
	.buffer_begin = sb_begin,                 \
	.buffer_end = sb_end,                     \
}

static const struct grb_config cfg_ow_mono = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, REC_TS_BITS,
	REC_CB(bench_clock_mono), 0
};
static const struct grb_config cfg_ow_tsc = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, REC_TS_BITS, REC_CB(clock_tsc), 0
};
static const struct grb_config cfg_ow_nots = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 0, REC_CB(NULL), 0
};
static const struct grb_config cfg_dc_mono = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, REC_TS_BITS,
	REC_CB(bench_clock_mono), 0
};
/* The same as cfg_ow_mono and cfg_ow_nots on the per-CPU (rseq) path. */
static const struct grb_config cfg_ow_mono_rseq = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, REC_TS_BITS,
	REC_CB(bench_clock_mono), GRB_CONFIG_SYNC_PER_CPU
};
static const struct grb_config cfg_ow_nots_rseq = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 0, REC_CB(NULL),
	GRB_CONFIG_SYNC_PER_CPU
};

/* The record (header word, the full timestamp when flagged, the CPU id)
 * into a reserved context; grb_write_record()'s fill too. */
static inline void rec_fill(const struct grb_config *cfg, struct grb_ctx *ctx)
{
	uint32_t word = REC_ID, cpu = (uint32_t)ctx->cpu;

	if (cfg->timestamp_bits) {
		word |= (uint32_t)ctx->timestamp & REC_TS_MASK;
		if (ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP) {
			word |= REC_FULL;
			grb_write(cfg, ctx, &word, sizeof(word));
			grb_write(cfg, ctx, &ctx->timestamp, sizeof(uint64_t));
		} else {
			grb_write(cfg, ctx, &word, sizeof(word));
		}
	} else {
		grb_write(cfg, ctx, &word, sizeof(word));
	}
	grb_write(cfg, ctx, &cpu, sizeof(cpu));
}

/* One record through the inline fast path specialised for @cfg. */
BENCH_INLINE int rec_write(const struct grb_config *cfg,
			   struct grb_channel *chan)
{
	struct grb_ctx ctx;
	int ret;

	/* Inputs only: grb_reserve() fills the outputs. */
	grb_ctx_init(&ctx, sizeof(uint32_t), 1);
	ret = grb_reserve(cfg, chan, &ctx);
	if (__builtin_expect(ret != 0, 0))
		return ret;
	rec_fill(cfg, &ctx);
	grb_commit(cfg, &ctx);
	return 0;
}

/* The same record, written by grb_write_record(). */
BENCH_INLINE int rec_write1(const struct grb_config *cfg,
			    struct grb_channel *chan)
{
	return grb_write_record(cfg, chan, sizeof(uint32_t), 1, NULL,
				rec_fill);
}

/*
 * The write functions every loop calls through a pointer, as it calls the
 * other systems'; their names are what callgrind's --toggle-collect
 * selects, so they are global.
 */
BENCH_NOINLINE int bench_grb_write_ow_mono(void *chan);
BENCH_NOINLINE int bench_grb_write_ow_tsc(void *chan);
BENCH_NOINLINE int bench_grb_write_ow_nots(void *chan);
BENCH_NOINLINE int bench_grb_write_dc_mono(void *chan);
BENCH_NOINLINE int bench_grb_write_rseq_mono(void *chan);
BENCH_NOINLINE int bench_grb_write_rseq_nots(void *chan);
BENCH_NOINLINE int bench_grb_write1_ow_nots(void *chan);
BENCH_NOINLINE int bench_grb_write1_rseq_nots(void *chan);
BENCH_NOINLINE int bench_grb_write1_rseq_mono(void *chan);

BENCH_NOINLINE int bench_grb_write_ow_mono(void *chan)
{
	return rec_write(&cfg_ow_mono, (struct grb_channel *)chan);
}

BENCH_NOINLINE int bench_grb_write_ow_tsc(void *chan)
{
	return rec_write(&cfg_ow_tsc, (struct grb_channel *)chan);
}

BENCH_NOINLINE int bench_grb_write_ow_nots(void *chan)
{
	return rec_write(&cfg_ow_nots, (struct grb_channel *)chan);
}

BENCH_NOINLINE int bench_grb_write_dc_mono(void *chan)
{
	return rec_write(&cfg_dc_mono, (struct grb_channel *)chan);
}

BENCH_NOINLINE int bench_grb_write_rseq_mono(void *chan)
{
	return rec_write(&cfg_ow_mono_rseq, (struct grb_channel *)chan);
}

BENCH_NOINLINE int bench_grb_write_rseq_nots(void *chan)
{
	return rec_write(&cfg_ow_nots_rseq, (struct grb_channel *)chan);
}

BENCH_NOINLINE int bench_grb_write1_ow_nots(void *chan)
{
	return rec_write1(&cfg_ow_nots, (struct grb_channel *)chan);
}

BENCH_NOINLINE int bench_grb_write1_rseq_nots(void *chan)
{
	return rec_write1(&cfg_ow_nots_rseq, (struct grb_channel *)chan);
}

BENCH_NOINLINE int bench_grb_write1_rseq_mono(void *chan)
{
	return rec_write1(&cfg_ow_mono_rseq, (struct grb_channel *)chan);
}

struct variant {
	const char *id;          /* key part and --callgrind-one name */
	const char *desc;
	const struct grb_config *cfg;
	bench_write_fn fn;
};

static const struct variant variants[] = {
	{ "grb-mono", "overwrite, ts=clock_gettime(MONOTONIC)",
	  &cfg_ow_mono, bench_grb_write_ow_mono },
	{ "grb-tsc", "overwrite, ts=rdtscp", &cfg_ow_tsc,
	  bench_grb_write_ow_tsc },
	{ "grb-nots", "overwrite, no timestamp", &cfg_ow_nots,
	  bench_grb_write_ow_nots },
	{ "grb-dc-mono", "discard, ts=clock_gettime(MONOTONIC)", &cfg_dc_mono,
	  bench_grb_write_dc_mono },
	{ "grb-rseq-mono", "overwrite, per-CPU (rseq), "
	  "ts=clock_gettime(MONOTONIC)", &cfg_ow_mono_rseq,
	  bench_grb_write_rseq_mono },
	{ "grb-rseq-nots", "overwrite, per-CPU (rseq), no timestamp",
	  &cfg_ow_nots_rseq, bench_grb_write_rseq_nots },
	{ "grb-rec-nots", "overwrite, no timestamp, grb_write_record()",
	  &cfg_ow_nots, bench_grb_write1_ow_nots },
	{ "grb-rec-rseq-nots", "overwrite, per-CPU (rseq), no timestamp, "
	  "grb_write_record()", &cfg_ow_nots_rseq,
	  bench_grb_write1_rseq_nots },
	{ "grb-rec-rseq-mono", "overwrite, per-CPU (rseq), "
	  "ts=clock_gettime(MONOTONIC), grb_write_record()",
	  &cfg_ow_mono_rseq, bench_grb_write1_rseq_mono },
};

static const struct variant *variant_of(const char *id)
{
	size_t i;

	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
		if (strcmp(variants[i].id, id) == 0)
			return &variants[i];
	return NULL;
}

static struct grb_channel *chan_new(const struct grb_config *cfg,
				    size_t subbuf)
{
	struct grb_channel_attr attr = {
		.name = "grb_bench",
		.subbuf_size = subbuf,
		.num_subbuf = BENCH_BUF_BYTES / subbuf,
		.priv = NULL,
	};
	struct grb_channel *chan;
	int ret = grb_channel_create(cfg, &attr, &chan);

	if (ret) {
		fprintf(stderr, "grb_bench: grb_channel_create: %s\n",
			grb_strerror(ret));
		exit(1);
	}
	return chan;
}

/* Which write path a channel took, for the rows' notes. */
static const char *path_str(const struct grb_channel *chan)
{
	enum grb_path_reason why = GRB_PATH_AS_ASKED;

	if (grb_channel_write_path(chan, &why) == GRB_WRITE_RSEQ)
		return "path rseq";
	switch (why) {
	case GRB_PATH_AS_ASKED:
		return "path atomic";
	case GRB_PATH_NO_RSEQ:
		return "path atomic (no rseq registration)";
	case GRB_PATH_ENV:
		return "path atomic (GRB_SYNC=atomic)";
	default:
		return "path atomic (fallback)";
	}
}

/*
 * The reader: one thread on the reader CPU takes every delivered
 * sub-buffer of every buffer (get_next / put_next), walks its records and
 * checks each payload is a CPU id; it sleeps poll_us when it found nothing.
 */
struct reader {
	struct grb_channel *chan;
	int has_ts;
	unsigned int poll_us;
	atomic_int stop;            /* 1: stop now; 2: drain, then stop */
	atomic_int ready;           /* set once pinned, before reading */
	atomic_uint_fast64_t records;  /* records walked */
	uint64_t bad;               /* bad payloads or record counts */
	int err;                    /* unexpected reader error */
	pthread_t tid;
};

static uint64_t walk(const struct grb_reader_subbuf *sb, size_t off,
		     int has_ts, uint64_t *bad)
{
	const unsigned char *p = (const unsigned char *)sb->data;
	uint64_t n = 0;

	while (off + 2 * sizeof(uint32_t) <= sb->data_size) {
		uint32_t word, cpu;

		memcpy(&word, p + off, sizeof(word));
		off += sizeof(word);
		if (has_ts && (word & REC_FULL))
			off += sizeof(uint64_t);
		if (off + sizeof(cpu) > sb->data_size) {
			(*bad)++;
			break;
		}
		memcpy(&cpu, p + off, sizeof(cpu));
		off += sizeof(cpu);
		*bad += cpu >= (uint32_t)CPU_SETSIZE;
		n++;
	}
	*bad += n != sb->records;
	return n;
}

static void *reader_main(void *p)
{
	struct reader *r = (struct reader *)p;
	unsigned int i, nbufs = grb_channel_nr_bufs(r->chan);

	bench_pin_self(bench_cpu_for_reader());
	atomic_store_explicit(&r->ready, 1, memory_order_release);
	for (;;) {
		int stop = atomic_load_explicit(&r->stop, memory_order_acquire);
		int progress = 0;

		if (stop == 1)
			break;
		for (i = 0; i < nbufs; i++) {
			struct grb_buf *buf = grb_channel_buf(r->chan, i);
			struct grb_reader_subbuf sb;
			int ret;

			while ((ret = grb_reader_get_next(buf)) == 0) {
				grb_reader_held(buf, &sb);
				atomic_fetch_add_explicit(&r->records,
					walk(&sb, grb_reader_first_record(buf),
					     r->has_ts, &r->bad),
					memory_order_relaxed);
				grb_reader_put_next(buf);
				progress = 1;
			}
			if (ret != -EAGAIN && ret != -ENODATA)
				r->err = ret;
		}
		/* Drain: a pass that began after the flush found nothing. */
		if (!progress && stop == 2)
			break;
		if (!progress)
			bench_poll_sleep(r->poll_us);
	}
	return NULL;
}

static void reader_start(struct reader *r, struct grb_channel *chan,
			 int has_ts, unsigned int poll_us)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->chan = chan;
	r->has_ts = has_ts;
	r->poll_us = poll_us;
	for (i = 0; i < grb_channel_nr_bufs(chan); i++)
		grb_reader_open(grb_channel_buf(chan, i));
	if (pthread_create(&r->tid, NULL, reader_main, r) != 0) {
		fprintf(stderr, "grb_bench: cannot start the reader\n");
		exit(1);
	}
	/* The writer starts only once the reader runs on its CPU. */
	while (!atomic_load_explicit(&r->ready, memory_order_acquire))
		sched_yield();
}

static void reader_stop(struct reader *r, int how)
{
	unsigned int i;

	atomic_store_explicit(&r->stop, how, memory_order_release);
	pthread_join(r->tid, NULL);
	for (i = 0; i < grb_channel_nr_bufs(r->chan); i++)
		grb_reader_release(grb_channel_buf(r->chan, i));
}

static void row_common(struct bench_row *row, const char *section,
		       const char *name, const char *unit, uint64_t subbuf,
		       int threads, int reader)
{
	report_describe(row, section, "grb", name, unit, subbuf, threads,
			reader);
}

/* Section 1, no reader: K runs of n records on a warm channel. */
static void overwrite_alone(const struct bench_opts *o,
			    const struct variant *v, size_t subbuf)
{
	struct grb_channel *chan = chan_new(v->cfg, subbuf);
	struct bench_loop l;
	struct bench_stat st;
	struct bench_row *row;
	double ns[64];
	uint64_t refused = 0;
	int k;

	const char *path = path_str(chan);

	bench_loop_wall(v->fn, chan, o->n_warm, &l);
	for (k = 0; k < o->runs; k++) {
		bench_loop_wall(v->fn, chan, o->n_single, &l);
		ns[k] = (double)l.ns / (double)o->n_single;
		refused += l.refused;
	}
	grb_channel_destroy(chan);
	bench_stat_of(ns, o->runs, &st);
	row = report_add("ow/%s/%zu/alone", v->id, subbuf);
	row_common(row, "overwrite", "ns_per_entry", "ns/entry", subbuf, 1, 0);
	snprintf(row->config, sizeof(row->config), "%s, no reader", v->desc);
	snprintf(row->note, sizeof(row->note), "%llu refused; %s",
		 (unsigned long long)refused, path);
	report_set(row, &st);
}

/* Section 1, with a reader draining on the other CPU. */
static void overwrite_read(const struct bench_opts *o,
			   const struct variant *v, size_t subbuf)
{
	struct grb_channel *chan = chan_new(v->cfg, subbuf);
	double ns[64], rate[64];
	struct bench_stat st;
	struct bench_row *row;
	struct bench_loop l;
	struct reader r;
	uint64_t bad = 0;
	int k;

	bench_loop_wall(v->fn, chan, o->n_warm, &l);
	for (k = 0; k < o->runs; k++) {
		uint64_t read;

		reader_start(&r, chan, v->cfg->timestamp_bits != 0,
			     o->poll_us);
		bench_loop_wall(v->fn, chan, o->n_single, &l);
		read = atomic_load(&r.records);
		reader_stop(&r, 1);
		ns[k] = (double)l.ns / (double)o->n_single;
		rate[k] = (double)read * 1e9 / (double)l.ns;
		bad += r.bad + (r.err != 0);
	}
	grb_channel_destroy(chan);
	bench_stat_of(ns, o->runs, &st);
	row = report_add("ow/%s/%zu/reader", v->id, subbuf);
	row_common(row, "overwrite", "ns_per_entry", "ns/entry", subbuf, 1, 1);
	snprintf(row->config, sizeof(row->config),
		 "%s, reader polling every %u us", v->desc, o->poll_us);
	snprintf(row->note, sizeof(row->note), "%s",
		 bad ? "READER FOUND BAD RECORDS" : "reader checked records");
	report_set(row, &st);
	bench_stat_of(rate, o->runs, &st);
	row = report_add("ow/%s/%zu/reader/rate", v->id, subbuf);
	row_common(row, "overwrite", "reader_entries_per_s", "entries/s",
		   subbuf, 1, 1);
	snprintf(row->config, sizeof(row->config),
		 "%s, records read during the writer's run / its wall time",
		 v->desc);
	report_set(row, &st);
}

void bench_grb_overwrite(const struct bench_opts *o)
{
	static const char *const ids[] = { "grb-mono", "grb-tsc", "grb-nots",
					   "grb-rseq-mono", "grb-rseq-nots",
					   "grb-rec-nots", "grb-rec-rseq-mono",
					   "grb-rec-rseq-nots" };
	const struct variant *v;
	size_t i;
	int s;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		v = variant_of(ids[i]);
		if (v->cfg == &cfg_ow_tsc && !bench_have_tsc())
			continue;
		for (s = 0; s < BENCH_NR_SUBBUFS; s++)
			overwrite_alone(o, v, o->subbufs[s]);
	}
	for (s = 0; s < BENCH_NR_SUBBUFS; s++)
		overwrite_read(o, &variants[0], o->subbufs[s]);
}

/* One discard-mode run on a fresh channel; adds to the totals. */
struct discard_totals {
	uint64_t attempts, written, lost, read, walked, mismatch;
	double ns_call[64], ns_written[64], ns_lost[64], rate[64];
	int nw, nl;
};

static void discard_once(const struct bench_opts *o, unsigned int poll_us,
			 struct discard_totals *t, int k)
{
	const struct variant *v = variant_of("grb-dc-mono");
	struct grb_channel *chan = chan_new(v->cfg, BENCH_DISCARD_SUBBUF);
	struct grb_buf_stats stats;
	struct bench_batches b;
	struct reader r;
	uint64_t lost, read_during;

	reader_start(&r, chan, 1, poll_us);
	bench_loop_batched(v->fn, chan, o->n_discard, &b);
	read_during = atomic_load(&r.records);
	grb_channel_flush(chan, GRB_FLUSH_ACTIVE);
	reader_stop(&r, 2);
	grb_channel_get_stats(chan, &stats);
	grb_channel_destroy(chan);
	lost = stats.lost_full + stats.lost_wrap + stats.lost_big +
	       stats.lost_nesting;
	t->attempts += o->n_discard;
	t->written += stats.written;
	t->lost += lost;
	t->read += stats.read;
	t->walked += atomic_load(&r.records);
	/* The writer's own outcome counts must match grb's counters. */
	t->mismatch += (stats.written != b.written) + (lost != b.refused) +
		       (stats.read != stats.written) +
		       (atomic_load(&r.records) != stats.read) + r.bad +
		       (r.err != 0);
	t->ns_call[k] = (double)b.ns / (double)o->n_discard;
	t->rate[k] = (double)read_during * 1e9 / (double)b.ns;
	if (b.n_written)
		t->ns_written[t->nw++] = (double)b.ns_written /
					 (double)b.n_written;
	if (b.n_refused)
		t->ns_lost[t->nl++] = (double)b.ns_refused /
				      (double)b.n_refused;
}

static struct bench_row *discard_row(const char *id, unsigned int poll_us,
				     const char *metric, const char *unit,
				     const char *note)
{
	struct bench_row *row = report_add("dc/%s/%s", id, metric);

	row_common(row, "discard", metric, unit, BENCH_DISCARD_SUBBUF, 1, 1);
	snprintf(row->config, sizeof(row->config), "discard, "
		 "ts=clock_gettime(MONOTONIC), reader on the other CPU "
		 "polling every %u us", poll_us);
	snprintf(row->note, sizeof(row->note), "%s", note);
	return row;
}

/*
 * K runs with the reader polling every @poll_us; counts are summed over
 * the runs, times are medians.
 */
static void discard_set(const struct bench_opts *o, const char *id,
			unsigned int poll_us)
{
	const struct report_metric *stats = report_discard_metrics;
	struct discard_totals t;
	struct bench_stat st;
	struct bench_row *row;
	char note[128];
	size_t i;
	int k;

	memset(&t, 0, sizeof(t));
	for (k = 0; k < o->runs; k++)
		discard_once(o, poll_us, &t, k);
	snprintf(note, sizeof(note), "summed over %d runs of %llu attempts; "
		 "written + lost %s attempts; read %s written",
		 o->runs, (unsigned long long)o->n_discard,
		 t.written + t.lost == t.attempts ? "==" : "!=",
		 t.read == t.written ? "==" : "!=");
	row = discard_row(id, poll_us, "attempts", "records", note);
	row->value = row->min = row->max = (double)t.attempts;
	row = discard_row(id, poll_us, "written", "records", note);
	row->value = row->min = row->max = (double)t.written;
	row = discard_row(id, poll_us, "lost", "records", note);
	row->value = row->min = row->max = (double)t.lost;
	row = discard_row(id, poll_us, "read", "records", note);
	row->value = row->min = row->max = (double)t.read;
	row = discard_row(id, poll_us, "check", "mismatches", t.mismatch ?
			  "COUNTS DO NOT ADD UP" :
			  "writer, grb counters and reader agree");
	row->value = row->min = row->max = (double)t.mismatch;
	for (i = 0; i < REPORT_DISCARD_METRICS; i++) {
		const double *vals = i == 0 ? t.ns_call : i == 1 ?
				     t.ns_written : i == 2 ? t.ns_lost : t.rate;
		int n = i == 1 ? t.nw : i == 2 ? t.nl : o->runs;

		row = discard_row(id, poll_us, stats[i].metric, stats[i].unit,
				  stats[i].note);
		bench_stat_of(vals, n, &st);
		report_set(row, &st);
	}
}

void bench_grb_discard(const struct bench_opts *o)
{
	discard_set(o, "grb", o->poll_us);
	discard_set(o, "grb-slow", o->poll_us_slow);
}

struct scale_ctx {
	struct grb_channel *chan;
};

static void *scale_obj(void *arg, int idx)
{
	(void)idx;
	return ((struct scale_ctx *)arg)->chan;
}

void bench_grb_scale(const struct bench_opts *o)
{
	static const char *const ids[] = { "grb-mono", "grb-nots",
					   "grb-rseq-mono", "grb-rseq-nots",
					   "grb-rec-rseq-mono",
					   "grb-rec-rseq-nots" };
	int i, t, k;

	for (i = 0; i < (int)(sizeof(ids) / sizeof(ids[0])); i++) {
		const struct variant *v = variant_of(ids[i]);
		struct scale_ctx sc = { chan_new(v->cfg, BENCH_SCALE_SUBBUF) };
		struct bench_loop l;

		bench_loop_wall(v->fn, sc.chan, o->n_warm, &l);
		for (t = 0; t < BENCH_MAX_THREADS; t++) {
			struct bench_scale s = {
				.fn = v->fn, .obj = scale_obj, .arg = &sc,
				.threads = o->threads[t],
				.per_thread = o->n_scale,
			};
			struct bench_stat st;
			struct bench_row *row;
			double ns[64];
			uint64_t refused = 0;

			for (k = 0; k < o->runs; k++) {
				bench_scale_run(&s);
				ns[k] = (double)s.cpu_ns / (double)s.records;
				refused += s.refused;
			}
			bench_stat_of(ns, o->runs, &st);
			row = report_add("sc/%s/%d", v->id, s.threads);
			row_common(row, "scale", "cpu_ns_per_record",
				   "ns CPU/record", BENCH_SCALE_SUBBUF,
				   s.threads, 0);
			snprintf(row->config, sizeof(row->config),
				 "%s, no reader, %llu records per thread",
				 v->desc, (unsigned long long)o->n_scale);
			snprintf(row->note, sizeof(row->note),
				 "%llu refused; %s%s",
				 (unsigned long long)refused, path_str(sc.chan),
				 s.threads > bench_nr_cpus() ?
				 "; more threads than CPUs" : "");
			report_set(row, &st);
		}
		grb_channel_destroy(sc.chan);
	}
}

/*
 * Valgrind registers no rseq, so a per-CPU channel takes the atomic path
 * there.  To count the per-CPU path's instructions, the callgrind run
 * (one thread, pinned) marks the channel and its buffers as per-CPU and the
 * thread's unregistered rseq area as on the CPU it is pinned to: the
 * sections then run their common path.  Nothing could abort them, which
 * one thread does not need; a registered area is never written (the
 * kernel owns its cpu_id), and nothing else runs in this mode.
 */
static void fake_rseq(struct grb_channel *chan, int on)
{
#ifdef GRB_RSEQ_ASM
	struct rseq *rs = grb__rseq_area();
	int cpu = bench_cpu_for_writer(0);
	unsigned int i;

	if (__rseq_size != 0 || (unsigned int)cpu >= chan->nr_bufs ||
	    grb_channel_write_path(chan, NULL) == GRB_WRITE_RSEQ)
		return;
	__atomic_store_n(&rs->cpu_id, (uint32_t)cpu, __ATOMIC_RELAXED);
	if (!(chan->cfg->flags & GRB_CONFIG_SYNC_PER_CPU))
		return;
	for (i = 0; i < chan->nr_bufs; i++)
		chan->bufs[i].rseq = on;
	/* What the channel's creation sets with the path (layout.h). */
	chan->nr_fast = on ? chan->nr_bufs : 0;
#else
	(void)chan;
	(void)on;
#endif
}

int bench_grb_one(const char *what, uint64_t n)
{
	const struct variant *v = variant_of(what);
	struct grb_channel *chan;
	struct bench_loop l;

	if (!v)
		return -EINVAL;
	chan = chan_new(v->cfg, BENCH_SCALE_SUBBUF);
	bench_pin_self(bench_cpu_for_writer(0));
	/* The one-call write sends a thread without rseq to its three-call
	 * path: its CPU id is faked too, on either write path. */
	if (((v->cfg->flags & GRB_CONFIG_SYNC_PER_CPU) ||
	     strncmp(what, "grb-rec-", 8) == 0) &&
	    grb_channel_write_path(chan, NULL) != GRB_WRITE_RSEQ)
		fake_rseq(chan, 1);
	bench_loop_wall(v->fn, chan, n, &l);
	/* Every record committed: the flush at destroy takes the atomic
	 * path again (its membarrier is not registered here). */
	fake_rseq(chan, 0);
	grb_channel_destroy(chan);
	printf("%s: %llu records, %llu refused\n", what,
	       (unsigned long long)n, (unsigned long long)l.refused);
	return 0;
}
