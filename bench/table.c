/* SPDX-License-Identifier: MIT */
/*
 * bench/table.c - the terminal table, laid out like the 2010 cover
 * letter's: overwrite mode per sub-buffer size (grb's CTF client beside
 * LTTng-UST there, with the traces both wrote), discard-mode counts,
 * scalability per thread count, then instruction counts, then the read
 * side (rates and output with their ratio to the baseline, wake-up
 * latency percentiles, the low rate, LTTng-UST's readers), then the
 * cross-process row (grb-consumerd beside LTTng-UST's consumer daemon,
 * with their ratio), then the targets, then any check that failed.
 * Every cell is "median [min-max]" over the runs.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "machine.h"
#include "report.h"
#include "util.h"

#define LABEL_W 44
#define CELL_W  22

static FILE *out;   /* where bench_table_print() writes */

/* "25.1 [24.9-26.0]" for the row with key fmt..., or "-". */
static const char *cell(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static const char *cell(char *buf, size_t cap, const char *fmt, ...)
{
	const struct bench_row *r;
	char key[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	r = report_find("%s", key);
	if (!r || isnan(r->value))
		snprintf(buf, cap, "-");
	else if (r->runs > 1)
		snprintf(buf, cap, "%.1f [%.1f-%.1f]", r->value, r->min,
			 r->max);
	else
		snprintf(buf, cap, "%.1f", r->value);
	return buf;
}

/* Entries per second as "4.12 M/s [3.9-4.3]". */
static const char *rate_cell(char *buf, size_t cap, const char *key)
{
	const struct bench_row *r = report_find("%s", key);

	if (!r || isnan(r->value))
		snprintf(buf, cap, "-");
	else if (r->runs > 1)
		snprintf(buf, cap, "%.2fM/s [%.2f-%.2f]", r->value / 1e6,
			 r->min / 1e6, r->max / 1e6);
	else
		snprintf(buf, cap, "%.2fM/s", r->value / 1e6);
	return buf;
}

static void overwrite_line(const struct bench_opts *o, const char *label,
			   const char *id, const char *suffix)
{
	char c[BENCH_NR_SUBBUFS][64];
	int s;

	for (s = 0; s < BENCH_NR_SUBBUFS; s++)
		cell(c[s], sizeof(c[s]), "ow/%s/%zu/%s", id, o->subbufs[s],
		     suffix);
	if (!strcmp(c[0], "-") && !strcmp(c[1], "-") && !strcmp(c[2], "-"))
		return;
	fprintf(out, "  %-*s %-*s %-*s %s\n", LABEL_W, label, CELL_W, c[0], CELL_W,
	       c[1], c[2]);
}

static void rate_line(const struct bench_opts *o, const char *id)
{
	char c[BENCH_NR_SUBBUFS][64], key[64];
	int s;

	for (s = 0; s < BENCH_NR_SUBBUFS; s++) {
		snprintf(key, sizeof(key), "ow/%s/%zu/reader/rate", id,
			 o->subbufs[s]);
		rate_cell(c[s], sizeof(c[s]), key);
	}
	if (!strcmp(c[0], "-") && !strcmp(c[1], "-") && !strcmp(c[2], "-"))
		return;
	fprintf(out, "  %-*s %-*s %-*s %s\n", LABEL_W, "    reader read", CELL_W,
	       c[0], CELL_W, c[1], c[2]);
}

static void single_line(const char *label, const char *key)
{
	char c[64];

	cell(c, sizeof(c), "%s", key);
	if (strcmp(c, "-"))
		fprintf(out, "  %-*s %s\n", LABEL_W, label, c);
}

static void ctf_lines(const struct bench_opts *o);

static void section_overwrite(const struct bench_opts *o)
{
	char h[BENCH_NR_SUBBUFS][32], sz[16];
	int s;

	for (s = 0; s < BENCH_NR_SUBBUFS; s++)
		snprintf(h[s], sizeof(h[s]), "%s sub-buffers",
			 bench_size_str(o->subbufs[s], sz, sizeof(sz)));
	fprintf(out, "\n1. Overwrite (flight recorder) mode, 1 writer, ns/entry\n");
	fprintf(out, "  %-*s %-*s %-*s %s\n", LABEL_W, "", CELL_W, h[0], CELL_W,
	       h[1], h[2]);
	overwrite_line(o, "grb, ts=clock_gettime, no reader", "grb-mono",
		       "alone");
	overwrite_line(o, "grb, ts=rdtscp, no reader", "grb-tsc", "alone");
	overwrite_line(o, "grb, no timestamp, no reader", "grb-nots", "alone");
	overwrite_line(o, "grb rseq, ts=clock_gettime, no reader",
		       "grb-rseq-mono", "alone");
	overwrite_line(o, "grb rseq, no timestamp, no reader", "grb-rseq-nots",
		       "alone");
	overwrite_line(o, "grb 1-call, no timestamp, no reader",
		       "grb-rec-nots", "alone");
	overwrite_line(o, "grb rseq 1-call, ts=clock_gettime, no reader",
		       "grb-rec-rseq-mono", "alone");
	overwrite_line(o, "grb rseq 1-call, no timestamp, no reader",
		       "grb-rec-rseq-nots", "alone");
	overwrite_line(o, "grb, ts=clock_gettime, reader", "grb-mono",
		       "reader");
	rate_line(o, "grb-mono");
	overwrite_line(o, "lttng-ust, snapshot session (no reader)", "lttng",
		       "alone");
	overwrite_line(o, "lttng-ust, consumer daemon reading", "lttng",
		       "reader");
	rate_line(o, "lttng");
	ctf_lines(o);
	fprintf(out, "  %-*s (1 MiB, no sub-buffers)\n", LABEL_W,
	       "plain queues, writer drops the oldest:");
	single_line("ck_ring SPSC, ts=clock_gettime",
		    "ow/ckring-mono/0/alone");
	single_line("ck_ring SPSC, no timestamp", "ow/ckring-nots/0/alone");
	single_line("mutex ring, ts=clock_gettime", "ow/mutex-mono/0/alone");
	single_line("mutex ring, no timestamp", "ow/mutex-nots/0/alone");
	fprintf(out, "  %-*s (ns/record)\n", LABEL_W, "floor, 1 MiB array:");
	single_line("clock_gettime(MONOTONIC) + 16-byte store", "floor/mono");
	single_line("rdtsc + 16-byte store", "floor/rdtsc");
	single_line("rdtscp + 16-byte store", "floor/rdtscp");
	single_line("lock cmpxchg + 16-byte store", "floor/cas");
	single_line("16-byte store alone", "floor/store");
	single_line("per-CPU position + clock_gettime + store",
		    "floor/percpu-mono");
}

static double val(const char *fmt, const char *id, const char *metric)
{
	const struct bench_row *r = report_find(fmt, id, metric);

	return r ? r->value : NAN;
}

static void discard_block(const char *label, const char *id)
{
	char a[64], b[64], c[64], d[64], key[64];
	double written = val("dc/%s/%s", id, "written"),
	       lost = val("dc/%s/%s", id, "lost"),
	       read = val("dc/%s/%s", id, "read"),
	       att = val("dc/%s/%s", id, "attempts"),
	       check = val("dc/%s/%s", id, "check");

	if (isnan(att))
		return;
	fprintf(out, "  %-12s written %-12.0f lost %-12.0f read %-12.0f %s\n", label,
	       written, lost, read, check == 0 ?
	       "(written + lost = attempts, read = written)" :
	       "(COUNTS DO NOT ADD UP)");
	snprintf(key, sizeof(key), "dc/%s/reader_rate", id);
	fprintf(out, "  %-12s ns/call %s  ns/written %s  ns/discarded %s  "
	       "reader %s\n", "",
	       cell(a, sizeof(a), "dc/%s/ns_per_call", id),
	       cell(b, sizeof(b), "dc/%s/ns_per_written", id),
	       cell(c, sizeof(c), "dc/%s/ns_per_discarded", id),
	       rate_cell(d, sizeof(d), key));
}

static void section_discard(const struct bench_opts *o)
{
	char sz[16];

	fprintf(out, "\n2. Discard mode, reader on another CPU, %s sub-buffers, "
		"%d runs x %llu write attempts (counts summed)\n",
		bench_size_str(BENCH_DISCARD_SUBBUF, sz, sizeof(sz)), o->runs,
		(unsigned long long)o->n_discard);
	fprintf(out, "  reader polling every %u us (LTTng-UST: its consumer "
		"daemon)\n", o->poll_us);
	discard_block("grb", "grb");
	discard_block("lttng-ust", "lttng");
	discard_block("ck_ring", "ckring");
	discard_block("mutex ring", "mutex");
	fprintf(out, "  reader polling every %u ms, slower than the writer "
		"fills 1 MiB: records must be lost, and counted\n",
		o->poll_us_slow / 1000);
	discard_block("grb", "grb-slow");
	discard_block("ck_ring", "ckring-slow");
	discard_block("mutex ring", "mutex-slow");
}

static void scale_line(const struct bench_opts *o, const char *label,
		       const char *id)
{
	char c[BENCH_MAX_THREADS][64];
	int t, any = 0;

	for (t = 0; t < BENCH_MAX_THREADS; t++) {
		cell(c[t], sizeof(c[t]), "sc/%s/%d", id, o->threads[t]);
		any |= strcmp(c[t], "-") != 0;
	}
	if (any)
		fprintf(out, "  %-*s %-*s %-*s %-*s %s\n", LABEL_W, label, CELL_W,
		       c[0], CELL_W, c[1], CELL_W, c[2], c[3]);
}

static void section_scale(const struct bench_opts *o)
{
	char h[BENCH_MAX_THREADS][40], sz[16];
	int t;

	for (t = 0; t < BENCH_MAX_THREADS; t++)
		snprintf(h[t], sizeof(h[t]), "%d thread%s%s", o->threads[t],
			 o->threads[t] > 1 ? "s" : "",
			 o->threads[t] > bench_nr_cpus() ? " (>CPUs)" : "");
	fprintf(out, "\n3. Scalability: CPU time per record (ns), overwrite, %s "
	       "sub-buffers, no reader\n",
	       bench_size_str(BENCH_SCALE_SUBBUF, sz, sizeof(sz)));
	fprintf(out, "  %-*s %-*s %-*s %-*s %s\n", LABEL_W, "", CELL_W, h[0],
	       CELL_W, h[1], CELL_W, h[2], h[3]);
	scale_line(o, "grb, ts=clock_gettime", "grb-mono");
	scale_line(o, "grb, no timestamp", "grb-nots");
	scale_line(o, "grb rseq, ts=clock_gettime", "grb-rseq-mono");
	scale_line(o, "grb rseq, no timestamp", "grb-rseq-nots");
	scale_line(o, "grb rseq 1-call, ts=clock_gettime",
		   "grb-rec-rseq-mono");
	scale_line(o, "grb rseq 1-call, no timestamp", "grb-rec-rseq-nots");
	scale_line(o, "lttng-ust, snapshot session", "lttng");
	scale_line(o, "ck_ring SPSC per writer, ts=clock_gettime",
		   "ckring-mono");
	scale_line(o, "ck_ring SPSC per writer, no timestamp", "ckring-nots");
	scale_line(o, "mutex ring shared, ts=clock_gettime", "mutex-mono");
	scale_line(o, "mutex ring shared, no timestamp", "mutex-nots");
	if (o->threads[BENCH_MAX_THREADS - 1] > bench_nr_cpus())
		fprintf(out, "  (>CPUs: more writer threads than the %d CPUs the "
		       "benchmark runs on; they time-share)\n",
		       bench_nr_cpus());
}

static void section_instr(const struct bench_opts *o)
{
	static const struct {
		const char *what, *label;
	} l[] = {
		{ "grb-nots", "grb, no timestamp" },
		{ "grb-tsc", "grb, ts=rdtscp" },
		{ "grb-mono", "grb, ts=clock_gettime" },
		{ "grb-rseq-nots", "grb rseq, no timestamp (*)" },
		{ "grb-rseq-mono", "grb rseq, ts=clock_gettime (*)" },
		{ "grb-rec-nots", "grb 1-call, no timestamp" },
		{ "grb-rec-rseq-nots", "grb rseq 1-call, no timestamp (*)" },
		{ "grb-rec-rseq-mono", "grb rseq 1-call, ts=clock_gettime (*)" },
		{ "floor-rdtscp", "floor: rdtscp + 16-byte store" },
		{ "floor-mono", "floor: clock_gettime + 16-byte store" },
		{ "floor-cas", "floor: lock cmpxchg + 16-byte store" },
		{ "read-raw", "read: get_next, inline decode, put_next" },
		{ "read-buf", "read: grb_buf_iter_next" },
		{ "read-chan", "read: grb_chan_iter_next, merged" },
	};
	size_t i;
	int any = 0;

	for (i = 0; i < sizeof(l) / sizeof(l[0]); i++) {
		const struct bench_row *r = report_find("ir/%s", l[i].what);
		const struct bench_row *fb =
			report_find("ir/%s/cpu_fallback", l[i].what);

		if (!r)
			continue;
		if (!any)
			fprintf(out, "\n4. Instructions per record (callgrind, %llu "
			       "records; under valgrind there is no rseq, so "
			       "grb's CPU id falls back to sched_getcpu())\n",
			       (unsigned long long)o->n_instr);
		any = 1;
		if (fb)
			fprintf(out, "  %-*s %6.1f   (CPU-id fallback %.1f; %.1f "
			       "without it)\n", LABEL_W, l[i].label, r->value,
			       fb->value, r->value - fb->value);
		else
			fprintf(out, "  %-*s %6.1f\n", LABEL_W, l[i].label, r->value);
	}
	if (report_find("ir/grb-rseq-nots"))
		fprintf(out, "  (*) valgrind has no rseq: the run marks its one "
		       "pinned thread's area as on its CPU, so the sections "
		       "run their common path\n");
}

/* The value of row fmt..., or NAN. */
static double rv(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static double rv(const char *fmt, ...)
{
	const struct bench_row *r;
	char key[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	r = report_find("%s", key);
	return r ? r->value : NAN;
}

/*
 * A line of ratios, one per sub-buffer size: the rows fmt... with the
 * size in place of its %zu, as "0.31x".
 */
static void ratio_line(const struct bench_opts *o, const char *label,
		       const char *fmt)
{
	char c[BENCH_NR_SUBBUFS][32];
	int s, any = 0;

	for (s = 0; s < BENCH_NR_SUBBUFS; s++) {
		double v = rv(fmt, o->subbufs[s]);

		if (isnan(v))
			snprintf(c[s], sizeof(c[s]), "-");
		else
			snprintf(c[s], sizeof(c[s]), "%.2fx", v);
		any |= !isnan(v);
	}
	if (any)
		fprintf(out, "  %-*s %-*s %-*s %s\n", LABEL_W, label, CELL_W,
			c[0], CELL_W, c[1], c[2]);
}

/* A line of cells, one per sub-buffer size, as ratio_line(). */
static void ow_cells_line(const struct bench_opts *o, const char *label,
			  const char *fmt)
{
	char c[BENCH_NR_SUBBUFS][64];
	int s, any = 0;

	for (s = 0; s < BENCH_NR_SUBBUFS; s++) {
		cell(c[s], sizeof(c[s]), fmt, o->subbufs[s]);
		any |= strcmp(c[s], "-") != 0;
	}
	if (any)
		fprintf(out, "  %-*s %-*s %-*s %s\n", LABEL_W, label, CELL_W,
			c[0], CELL_W, c[1], c[2]);
}

/* A check row's note, after "ok: " when it holds. */
static void check_line(const char *label, const char *key)
{
	const struct bench_row *r = report_find("%s", key);

	if (r)
		fprintf(out, "  %-*s %s%s\n", LABEL_W, label, r->value == 0 ?
			"ok: " : "", r->note);
}

/*
 * grb's CTF client beside LTTng-UST (bench_ctf.c): ns/event and its
 * ratio to the LTTng row of the same kind and size, then the traces.
 */
static void ctf_lines(const struct bench_opts *o)
{
	static const struct {
		const char *id, *suffix, *label, *ratio;
	} l[] = {
		{ "ctf-raw", "alone",
		  "ctf emit_raw, ts=clock_gettime, no reader",
		  "    / lttng-ust snapshot session" },
		{ "ctf-val", "alone",
		  "ctf emit, ts=clock_gettime, no reader",
		  "    / lttng-ust snapshot session" },
		{ "ctf-tsc", "alone",
		  "ctf emit_raw, ts=rdtscp, no reader",
		  "    / lttng-ust snapshot session" },
		{ "ctf-raw", "trace",
		  "ctf emit_raw, ts=clock_gettime, trace_dir",
		  "    / lttng-ust consumer daemon reading" },
	};
	const struct bench_row *r;
	char label[160], key[64], a[64], b[64], sz[16];
	size_t i;
	int s;

	if (!report_find("ow/ctf-raw/%u/alone", BENCH_SCALE_SUBBUF))
		return;
	fprintf(out, "  %-*s (LTTng's event: one u32 field; / = ctf's "
		"median / lttng-ust's, this run)\n", LABEL_W,
		"grb's CTF tracer client (grb/ctf.h):");
	for (i = 0; i < sizeof(l) / sizeof(l[0]); i++) {
		overwrite_line(o, l[i].label, l[i].id, l[i].suffix);
		snprintf(key, sizeof(key), "ow/%s/%%zu/%s/x-lttng", l[i].id,
			 l[i].suffix);
		ratio_line(o, l[i].ratio, key);
	}
	fprintf(out, "  %-*s (stream files / events in them; headers and "
		"padding included)\n", LABEL_W, "traces of these runs, "
		"bytes/event:");
	ow_cells_line(o, "ctf, trace_dir (above)",
		      "tr/ctf/%zu/bytes_per_event");
	r = report_find("tr/lttng/%u/bytes_per_event", BENCH_SCALE_SUBBUF);
	snprintf(label, sizeof(label), "lttng-ust, %s", r ? r->config :
		 "consumer daemon's trace");
	ow_cells_line(o, label, "tr/lttng/%zu/bytes_per_event");
	ratio_line(o, "    ctf / lttng-ust", "tr/ratio/%zu/bytes_per_event");
	r = report_find("tr/ctf/bt2_events_per_s");
	if (r) {
		const struct bench_row *lt =
			report_find("tr/lttng/bt2_events_per_s");

		snprintf(a, sizeof(a), "%.2fM/s", r->value / 1e6);
		snprintf(b, sizeof(b), "-");
		if (lt)
			snprintf(b, sizeof(b), "%.2fM/s, ctf / lttng-ust "
				 "%.2fx", lt->value / 1e6,
				 rv("tr/ratio/bt2_events_per_s"));
		fprintf(out, "  %-*s ctf %s, lttng-ust %s (%s traces)\n",
			LABEL_W, "babeltrace2 -o dummy, events/s", a, b,
			bench_size_str(BENCH_SCALE_SUBBUF, sz, sizeof(sz)));
		fprintf(out, "  %-*s ctf: %s\n", LABEL_W, "", r->note);
		if (lt)
			fprintf(out, "  %-*s lttng-ust: %s\n", LABEL_W, "",
				lt->note);
	}
	for (s = 0; s < BENCH_NR_SUBBUFS; s++) {
		bench_size_str(o->subbufs[s], sz, sizeof(sz));
		snprintf(label, sizeof(label), "check, ctf trace, %s", sz);
		snprintf(key, sizeof(key), "tr/ctf/%zu/check", o->subbufs[s]);
		check_line(label, key);
		snprintf(label, sizeof(label), "check, lttng-ust trace, %s",
			 sz);
		snprintf(key, sizeof(key), "tr/lttng/%zu/check", o->subbufs[s]);
		check_line(label, key);
	}
}

static const struct {
	const char *id, *label;
} read_rates[] = {
	{ "raw", "get_next, inline decode, put_next (baseline)" },
	{ "buf-dc", "grb_buf_iter_next, discard" },
	{ "buf-ow", "grb_buf_iter_next, overwrite" },
	{ "buf-cb", "grb_buf_iter_consume (callback), discard" },
	{ "chan", "grb_chan_iter_next, merged, all CPUs" },
	{ "chan-cb", "grb_chan_iter_consume (callback), merged" },
};

static void read_rate_lines(const struct bench_opts *o)
{
	double base = rv("rd/rate/raw/ns");
	char a[64], b[64], key[64];
	size_t i;

	if (isnan(base) && isnan(rv("rd/rate/buf-dc/ns")))
		return;
	fprintf(out, "  records out of a filled, finalized channel: 1 MiB per "
		"CPU, 128 KiB sub-buffers, 8-byte records, %u fills per run"
		"\n", o->read_rounds);
	fprintf(out, "  %-*s %-*s %-*s %s\n", LABEL_W, "", CELL_W,
		"records/s", CELL_W, "ns/record", "ns / baseline");
	for (i = 0; i < sizeof(read_rates) / sizeof(read_rates[0]); i++) {
		snprintf(key, sizeof(key), "rd/rate/%s/rate", read_rates[i].id);
		rate_cell(a, sizeof(a), key);
		cell(b, sizeof(b), "rd/rate/%s/ns", read_rates[i].id);
		fprintf(out, "  %-*s %-*s %-*s %.2f\n", LABEL_W,
			read_rates[i].label, CELL_W, a, CELL_W, b,
			rv("rd/rate/%s/ns", read_rates[i].id) / base);
	}
}

static const struct {
	const char *id, *label;
} read_outs[] = {
	{ "memcpy", "memcpy of the same bytes (floor)" },
	{ "write2", "write(2) by hand, one call per sub-buffer" },
	{ "write", "grb_buf_write" },
	{ "splice", "grb_buf_splice" },
};

static void read_out_lines(const struct bench_opts *o)
{
	static const size_t sizes[] = { 4u << 10, 128u << 10 };
	char c[2][96];
	size_t i, s;
	double floor[2];

	if (isnan(rv("rd/out/memcpy/%zu", sizes[1])))
		return;
	for (s = 0; s < 2; s++)
		floor[s] = rv("rd/out/memcpy/%zu", sizes[s]);
	fprintf(out, "  whole sub-buffers to a file on /dev/shm (tmpfs), %u "
		"MiB per run, GB/s (x memcpy)\n", o->out_rounds);
	fprintf(out, "  %-*s %-*s %s\n", LABEL_W, "", CELL_W + 8,
		"4 KiB sub-buffers", "128 KiB sub-buffers");
	for (i = 0; i < sizeof(read_outs) / sizeof(read_outs[0]); i++) {
		for (s = 0; s < 2; s++) {
			double v = rv("rd/out/%s/%zu", read_outs[i].id,
				      sizes[s]);
			char g[64];

			cell(g, sizeof(g), "rd/out/%s/%zu", read_outs[i].id,
			     sizes[s]);
			snprintf(c[s], sizeof(c[s]), "%s (%.2fx)", g,
				 v / floor[s]);
		}
		if (isnan(rv("rd/out/%s/%zu", read_outs[i].id, sizes[1])))
			continue;
		fprintf(out, "  %-*s %-*s %s\n", LABEL_W, read_outs[i].label,
			CELL_W + 8, c[0], c[1]);
	}
}

static void wake_line(const char *group, const char *id, const char *label,
		      int low)
{
	double f50 = rv("rd/wake/futex/p50"), f99 = rv("rd/wake/futex/p99");

	if (isnan(rv("rd/%s/%s/p50", group, id)))
		return;
	if (low)
		fprintf(out, "  %-*s %8.1f %6.1f %7.1f %9.1f %9.1f %8.1f%% "
			"%10.1f\n", LABEL_W, label,
			rv("rd/%s/%s/bytes_per_record", group, id),
			rv("rd/%s/%s/slot", group, id),
			rv("rd/%s/%s/ratio", group, id),
			rv("rd/%s/%s/p50", group, id),
			rv("rd/%s/%s/p99", group, id),
			rv("rd/%s/%s/reader_cpu", group, id),
			rv("rd/%s/%s/calls_per_record", group, id));
	else
		fprintf(out, "  %-*s %9.1f %9.1f %9.1f %8.1f%% %10.1f   "
			"%.2fx / %.2fx\n", LABEL_W, label,
			rv("rd/%s/%s/p50", group, id),
			rv("rd/%s/%s/p99", group, id),
			rv("rd/%s/%s/max", group, id),
			rv("rd/%s/%s/reader_cpu", group, id),
			rv("rd/%s/%s/calls_per_record", group, id),
			rv("rd/%s/%s/p50", group, id) / f50,
			rv("rd/%s/%s/p99", group, id) / f99);
}

static void read_wake_lines(const struct bench_opts *o)
{
	if (!isnan(rv("rd/wake/futex/p50"))) {
		fprintf(out, "  wake-up: %llu records, one every 0.2-1.8 ms "
			"(random); other programs used %.0f%% of the CPUs, "
			"steal %.0f%%\n", (unsigned long long)o->n_wake,
			rv("rd/wake/load/other_cpu"), rv("rd/wake/load/steal"));
		fprintf(out, "  %-*s %9s %9s %9s %9s %10s   %s\n", LABEL_W,
			"", "p50 us", "p99 us", "max us", "reader CPU", "calls/rec",
			"p50 / p99 x baseline");
		wake_line("wake", "futex", "futex wake-up, no ring buffer "
			  "(baseline)", 0);
		wake_line("wake", "poll", "grb_buf_iter_poll, live watermark",
			  0);
		wake_line("wake", "wait", "grb_buf_wait past what was read",
			  0);
	}
	if (isnan(rv("rd/low/live/p50")))
		return;
	fprintf(out, "  low rate: 1000 records/s for %u s into 64 KiB "
		"sub-buffers, one discard buffer; 8-byte payload\n",
		o->low_secs);
	fprintf(out, "  %-*s %8s %6s %7s %9s %9s %9s %10s\n", LABEL_W, "",
		"B/record", "slot", "x slot", "p50 us", "p99 us", "rd CPU",
		"calls/rec");
	wake_line("low", "live", "live reading (grb_buf_iter_poll)", 1);
	wake_line("low", "flush", "flush after every record (no live read)",
		  1);
}

/* LTTng-UST's readers of this run's events beside grb's. */
static void read_peer_lines(void)
{
	static const struct {
		const char *kind, *label;
	} bt[] = {
		{ "dc", "discard" },
		{ "rd", "overwrite + consumer" },
		{ "fr", "snapshot" },
	};
	const struct bench_row *r;
	double cd = rv("dc/lttng/reader_rate"), g = rv("rd/rate/chan/rate");
	size_t i;

	if (isnan(cd) && !report_find("rd/bt2/dc/%u", BENCH_DISCARD_SUBBUF))
		return;
	fprintf(out, "  peers: LTTng-UST's readers, on the events of its own "
		"runs in this benchmark\n");
	if (!isnan(cd))
		fprintf(out, "  %-*s %.2fM/s (grb's polling reader in section "
			"2: %.2fM/s)\n", LABEL_W, "consumer daemon, discard "
			"session", cd / 1e6, rv("dc/grb/reader_rate") / 1e6);
	if (!isnan(cd))
		fprintf(out, "  %-*s (events in the trace / the writer's wall "
			"time: bounded by the writer)\n", LABEL_W, "");
	for (i = 0; i < sizeof(bt) / sizeof(bt[0]); i++) {
		char label[96];
		uint64_t sb = strcmp(bt[i].kind, "dc") ? BENCH_SCALE_SUBBUF :
			      BENCH_DISCARD_SUBBUF;

		r = report_find("rd/bt2/%s/%llu", bt[i].kind,
				(unsigned long long)sb);
		if (!r)
			continue;
		snprintf(label, sizeof(label), "babeltrace2, %s trace",
			 bt[i].label);
		fprintf(out, "  %-*s %.2fM/s; grb_chan_iter_next %.1fx that "
			"(%s)\n", LABEL_W, label, r->value / 1e6, g / r->value,
			r->note);
	}
}

static void section_read(const struct bench_opts *o)
{
	if (isnan(rv("rd/rate/buf-dc/ns")) && isnan(rv("rd/wake/futex/p50")))
		return;
	fprintf(out, "\n5. Read side, reader on CPU %d (the writer on CPU %d)"
		"\n", bench_cpu_for_reader(), bench_cpu_for_writer(0));
	read_rate_lines(o);
	read_out_lines(o);
	read_wake_lines(o);
	read_peer_lines();
}

/* A count as "12345 [0-23456]", or "-". */
static const char *count_cell(char *buf, size_t cap, const char *key)
{
	const struct bench_row *r = report_find("%s", key);

	if (!r || isnan(r->value))
		snprintf(buf, cap, "-");
	else if (r->runs > 1)
		snprintf(buf, cap, "%.0f [%.0f-%.0f]", r->value, r->min,
			 r->max);
	else
		snprintf(buf, cap, "%.0f", r->value);
	return buf;
}

static void xproc_line(const char *label, const char *id)
{
	char a[64], b[64], c[64], d[64], key[64];

	if (!report_find("xp/%s/ns_per_record", id))
		return;
	cell(a, sizeof(a), "xp/%s/ns_per_record", id);
	cell(b, sizeof(b), "xp/%s/drain_mb_s", id);
	snprintf(key, sizeof(key), "xp/%s/drain_records_s", id);
	rate_cell(c, sizeof(c), key);
	snprintf(key, sizeof(key), "xp/%s/lost", id);
	count_cell(d, sizeof(d), key);
	fprintf(out, "  %-*s %-*s %-*s %-*s %s\n", LABEL_W, label, CELL_W, a,
		CELL_W, b, CELL_W, c, d);
}

static void xproc_check(const char *label, const char *id)
{
	const struct bench_row *r = report_find("xp/%s/check", id);

	if (r)
		fprintf(out, "  %-*s %s%s\n", LABEL_W, label, r->value == 0 ?
			"ok: " : "", r->note);
}

/* "%.1f" of row fmt..., or "-". */
static const char *num(char *buf, size_t cap, const char *key)
{
	double v = rv("%s", key);

	if (isnan(v))
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%.1f", v);
	return buf;
}

static void section_xproc(const struct bench_opts *o)
{
	char sz[16], a[32], b[32], c[32], d[32];
	double ns = rv("xp/ratio/ns_per_record"),
	       mb = rv("xp/ratio/drain_mb_s"),
	       rec = rv("xp/ratio/drain_records_s");

	if (!report_find("xp/grb/ns_per_record") &&
	    !report_find("xp/lttng/ns_per_record"))
		return;
	fprintf(out, "\n6. Cross-process: a writer process, a consumer daemon "
		"draining to /dev/shm (tmpfs); per-CPU discard\n   buffers of "
		"%u x %s sub-buffers, %llu records of 4 bytes (the CPU id) per "
		"run, no warm-up\n", (unsigned int)BENCH_BUF_BYTES /
		(128u << 10), bench_size_str(128u << 10, sz, sizeof(sz)),
		(unsigned long long)o->n_xproc);
	fprintf(out, "  %-*s %-*s %-*s %-*s %s\n", LABEL_W, "", CELL_W,
		"writer ns/record", CELL_W, "drain MB/s", CELL_W,
		"drain records/s", "lost records");
	xproc_line("grb, grb-consumerd (splice)", "grb");
	xproc_line("lttng-ust, consumer daemon (per-UID)", "lttng");
	if (!isnan(ns) || !isnan(mb)) {
		snprintf(a, sizeof(a), "%.2fx", ns);
		snprintf(b, sizeof(b), "%.2fx", mb);
		snprintf(c, sizeof(c), "%.2fx", rec);
		fprintf(out, "  %-*s %-*s %-*s %s\n", LABEL_W,
			"grb / lttng-ust (medians)", CELL_W, a, CELL_W, b, c);
	} else {
		fprintf(out, "  %-*s - (a system was not measured: see Not "
			"measured)\n", LABEL_W, "grb / lttng-ust (medians)");
	}
	fprintf(out, "  %-*s grb %s, lttng-ust %s (stream files, headers "
		"and padding included)\n", LABEL_W, "bytes per record kept",
		num(a, sizeof(a), "xp/grb/bytes_per_record"),
		num(b, sizeof(b), "xp/lttng/bytes_per_record"));
	fprintf(out, "  %-*s grb %s ms, lttng-ust %s ms (medians; `lttng "
		"stop` asks\n  %-*s whether data is pending every 200 ms)\n",
		LABEL_W, "last record -> files at their final size",
		num(c, sizeof(c), "xp/grb/tail_ms"),
		num(d, sizeof(d), "xp/lttng/tail_ms"), LABEL_W, "");
	fprintf(out, "  drain: stream-file bytes / (writer's first record -> "
		"the files at their final size, polled every 1 ms\n  once the "
		"writer process returned): includes grb's finalize at "
		"grb_basic_destroy(), and the traced\n  application's exit and "
		"`lttng stop` for LTTng-UST\n");
	xproc_check("check, grb", "grb");
	xproc_check("check, lttng-ust", "lttng");
}

void bench_table_print(FILE *f, const struct bench_opts *o,
		       const struct bench_machine *m)
{
	size_t i;
	int c;

	out = f;
	fprintf(out, "grb-bench  %s\n", m->date);
	fprintf(out, "machine    %s (%s MHz), %d CPUs online, %d used; kernel %s; "
	       "clocksource %s\n", m->cpu_model, m->cpu_mhz, m->cpus_online,
	       m->cpus_allowed, m->kernel, m->clocksource);
	fprintf(out, "build      %s\n", m->compiler);
	fprintf(out, "run        %s: median [min-max] of %d runs; %llu records "
	       "per single-writer run; payload 4 bytes (the writer's CPU "
	       "id); 1 MiB per CPU\n", o->quick ? "--quick" : "default",
	       o->runs, (unsigned long long)o->n_single);
	fprintf(out, "placement  writer i on CPU i mod %d (CPUs", bench_nr_cpus());
	for (c = 0; c < bench_nr_cpus() && c < 8; c++)
		fprintf(out, " %d", bench_cpu_for_writer(c));
	fprintf(out, "), reader on CPU %d, for every system; each write is one "
	       "out-of-line call through a function pointer\n",
	       bench_cpu_for_reader());
	section_overwrite(o);
	section_discard(o);
	section_scale(o);
	section_instr(o);
	section_read(o);
	section_xproc(o);
	bench_targets_print(out);
	for (i = 0; i < report_nr_fails(); i++) {
		const char *what = report_fail_at(i);

		if (i == 0)
			fprintf(out, "\nCHECKS FAILED (%zu): the run is not "
				"valid\n", report_nr_fails());
		if (what)
			fprintf(out, "  %s\n", what);
	}
	for (i = 0; i < report_nr_skips(); i++) {
		const char *what, *why;

		report_skip_at(i, &what, &why);
		if (i == 0)
			fprintf(out, "\nNot measured\n");
		fprintf(out, "  %s: skipped: %s\n", what, why);
	}
}
