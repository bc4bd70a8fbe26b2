/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_ctf.c - grb's CTF tracer client (grb/ctf.h) beside
 * LTTng-UST, in section 1: the same event as grb_bench_lttng's
 * tracepoint (one unsigned 32-bit field, the writer's CPU id from
 * sched_getcpu(), as the tracepoint call computes it), the same clock
 * (CLOCK_MONOTONIC, LTTng-UST's; the TSC in one more row), per-CPU
 * overwrite buffers of the LTTng channel's geometry (1 MiB per CPU, each
 * sub-buffer size of the table), one writer pinned like every other,
 * the same warm-up and the same K runs of N events.
 *
 * Rows, per sub-buffer size:
 *   ow/ctf-raw/S/alone  grb_ctf_emit_raw(), no trace_dir: nothing reads
 *                       (a flight recorder, as LTTng's snapshot session)
 *   ow/ctf-val/S/alone  grb_ctf_emit(), the values API, likewise
 *   ow/ctf-tsc/S/alone  grb_ctf_emit_raw() on a GRB_CTF_CLOCK_TSC tracer
 *   ow/ctf-raw/S/trace  grb_ctf_emit_raw() with attr.trace_dir: the
 *                       tracer's writer thread drains every packet into
 *                       the stream files while the writer runs (as
 *                       LTTng's consumer daemon does in the overwrite +
 *                       consumer session)
 * each with its ratio to the LTTng-UST row of the same kind, same size,
 * same run (".../x-lttng").  The traces of the last kind are then
 * compared with LTTng's (rows tr/...): stream-file bytes per event they
 * hold, and babeltrace2 --output-format=dummy's read rate on the 128 KiB
 * ones, read alternately, up to 3 times each.
 *
 * Checks, each a failed run when it does not hold (report_fail()): the
 * writer's calls and refusals against the tracer's counters; the stream
 * files' bytes on disk against grb_ctf_get_stats(); the events
 * babeltrace2 counts in each trace against the events the tracer says
 * its files hold (committed less overwritten), and for LTTng against
 * the calls when `lttng list` reports no lost packet.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <grb/channel.h>
#include <grb/ctf.h>

#include "bench.h"
#include "bench_ctf.h"
#include "clock.h"
#include "report.h"
#include "util.h"
#include "xproc.h"

/* LTTng's channel name: both traces' stream files are grbchan_CPU. */
#define CTF_CHAN    "grbchan"
#define BT_OUT_CAP  (64 * 1024)
/* The traces whose babeltrace2 read rates are compared. */
#define CTF_READ_SUBBUF BENCH_SCALE_SUBBUF

/*
 * The two traces babeltrace2's read rate is measured on, kept until
 * both exist so that their reads alternate and the machine's load
 * weighs on both alike.  LTTng's comes first, from bench_lttng.c, which
 * would remove it: it is moved into a directory of ours.
 */
struct kept_trace {
	char parent[PATH_MAX - 64];   /* ours, removed afterwards ("" none) */
	char dir[PATH_MAX];           /* the trace ("" none) */
	long long events;             /* babeltrace2's count (checked) */
	uint64_t bytes;               /* its stream files */
	const char *config;
};

static struct kept_trace kept_ctf, kept_lttng;

struct ctf_writer {
	struct grb_ctf *t;
	const struct grb_ctf_event *ev;
};

/*
 * The write functions the loop calls through its pointer, as it calls
 * every system's.  The CPU id is read before the call, as the LTTng
 * tracepoint's argument is: the client takes a payload made already.
 */
static BENCH_NOINLINE int ctf_write_raw(void *obj)
{
	struct ctf_writer *w = (struct ctf_writer *)obj;
	uint32_t cpu = (uint32_t)sched_getcpu();

	return grb_ctf_emit_raw(w->t, w->ev, &cpu, sizeof(cpu));
}

static BENCH_NOINLINE int ctf_write_val(void *obj)
{
	struct ctf_writer *w = (struct ctf_writer *)obj;
	union grb_ctf_value v = { .u = (uint32_t)sched_getcpu() };

	return grb_ctf_emit(w->t, w->ev, &v);
}

struct ctf_variant {
	const char *id;      /* key: ow/ID/SUBBUF/alone or .../trace */
	const char *desc;
	enum grb_ctf_clock clock;
	bench_write_fn fn;
	int trace;           /* attr.trace_dir: the writer thread drains */
};

static const struct ctf_variant variants[] = {
	{ "ctf-raw", "grb_ctf_emit_raw, ts=clock_gettime(MONOTONIC)",
	  GRB_CTF_CLOCK_MONOTONIC, ctf_write_raw, 0 },
	{ "ctf-val", "grb_ctf_emit (values), ts=clock_gettime(MONOTONIC)",
	  GRB_CTF_CLOCK_MONOTONIC, ctf_write_val, 0 },
	{ "ctf-tsc", "grb_ctf_emit_raw, ts=rdtscp", GRB_CTF_CLOCK_TSC,
	  ctf_write_raw, 0 },
	{ "ctf-raw", "grb_ctf_emit_raw, ts=clock_gettime(MONOTONIC)",
	  GRB_CTF_CLOCK_MONOTONIC, ctf_write_raw, 1 },
};

#define NR_VARIANTS (sizeof(variants) / sizeof(variants[0]))

/* The event of lttng_tp.h: grb_bench:rec { uint32_t cpu; }. */
static const struct grb_ctf_field rec_fields[] = {
	{ .name = "cpu", .kind = GRB_CTF_INT, .size = 4 },
};

static const struct grb_ctf_event_desc rec_desc = {
	.name = "grb_bench:rec", .loglevel = -1,
	.fields = rec_fields, .nr_fields = 1,
};

/*
 * A tracer of variant @v, sub-buffers of @subbuf bytes, writing the
 * trace into @dir when not NULL.  Its writer thread inherits the
 * creating thread's CPU mask, so it is created from the reader CPU,
 * where every system's reader runs, and the caller is pinned back.
 */
static int writer_open(const struct ctf_variant *v, size_t subbuf,
		       const char *dir, struct ctf_writer *w)
{
	struct grb_ctf_attr attr = {
		.name = CTF_CHAN,
		.subbuf_size = subbuf,
		.num_subbuf = BENCH_BUF_BYTES / subbuf,
		.alloc = GRB_ALLOC_PER_CPU,
		.mode = GRB_MODE_OVERWRITE,
		.clock = v->clock,
		.trace_dir = dir,
	};
	int ret;

	if (dir)
		bench_pin_self(bench_cpu_for_reader());
	ret = grb_ctf_create(&attr, &w->t);
	if (dir)
		bench_pin_self(bench_cpu_for_writer(0));
	if (ret)
		return ret;
	ret = grb_ctf_event_register(w->t, &rec_desc, &w->ev);
	if (ret)
		grb_ctf_destroy(w->t);
	return ret;
}

/* ---- babeltrace2 ---- */

/*
 * Events babeltrace2's counter sink finds in @dir: 0, or -1 when it
 * cannot read the trace (its output, in @out, says why).
 */
static int bt2_count(const char *dir, long long *events, char *out,
		     size_t cap)
{
	char *argv[] = { (char *)"babeltrace2", (char *)dir,
			 (char *)"--component=sink.utils.counter",
			 (char *)"--params=step=+0", NULL };
	char *p;

	if (bench_run(argv, out, cap) != 0)
		return -1;
	p = strstr(out, " Event messages");
	if (!p)
		p = strstr(out, " Event message");
	if (!p)
		return -1;
	while (p > out && p[-1] != '\n')
		p--;
	*events = strtoll(p, NULL, 10);
	return 0;
}

/*
 * Wall time of `babeltrace2 --output-format=dummy DIR`, the process
 * start included: decoding every event and discarding it.  Return: 0,
 * or -1 when it failed.
 */
static int bt2_read_ns(const char *dir, uint64_t *ns, char *out, size_t cap)
{
	char *argv[] = { (char *)"babeltrace2",
			 (char *)"--output-format=dummy", (char *)dir, NULL };
	uint64_t t0 = bench_now_ns();
	int ret = bench_run(argv, out, cap);

	*ns = bench_now_ns() - t0;
	return ret == 0 ? 0 : -1;
}

/* First line of babeltrace2's output, for a failure message. */
static const char *first_line(char *s)
{
	char *nl;

	while (*s == '\n' || *s == ' ')
		s++;
	nl = strchr(s, '\n');
	if (nl)
		*nl = '\0';
	return *s ? s : "no output";
}

/* ---- rows ---- */

static struct bench_row *tr_row(const char *system, const char *key,
				const char *name, const char *unit,
				size_t subbuf, const char *config)
{
	struct bench_row *row = report_add("%s", key);

	report_describe(row, "ctf-trace", system, name, unit, subbuf, 1, 1);
	snprintf(row->config, sizeof(row->config), "%s", config);
	row->runs = 1;
	return row;
}

/* The rate row of babeltrace2's reads: events / wall time of each. */
static void read_row(const char *system, const char *key,
		     const struct kept_trace *t, const double *rate, int n)
{
	struct bench_row *row = tr_row(system, key, "bt2_events_per_s",
				       "events/s", CTF_READ_SUBBUF, t->config);
	struct bench_stat st;

	bench_stat_of(rate, n, &st);
	report_set(row, &st);
	snprintf(row->note, sizeof(row->note), "babeltrace2 --output-format="
		 "dummy: %lld events, %llu stream bytes, median %.3f s with "
		 "the process start; %d read%s, alternating with the other "
		 "trace's", t->events, (unsigned long long)t->bytes,
		 (double)t->events / st.med, n, n > 1 ? "s" : "");
}

/*
 * The check row of one trace: @bad mismatches, @text what was compared.
 * A mismatch also fails the run.
 */
static void check_row(const char *system, const char *key, size_t subbuf,
		      const char *config, int bad, const char *text)
{
	struct bench_row *row = tr_row(system, key, "check", "mismatches",
				       subbuf, config);
	char sz[16];

	row->value = row->min = row->max = bad;
	snprintf(row->note, sizeof(row->note), "%s%s", bad ?
		 "COUNTS DO NOT ADD UP: " : "", text);
	if (bad)
		report_fail("%s trace, %s sub-buffers: %s", system,
			    bench_size_str(subbuf, sz, sizeof(sz)), text);
}

/* ---- grb's CTF traces ---- */

/*
 * The trace a trace_dir run left in @dir: its stream bytes on disk, the
 * events babeltrace2 counts in it.  Return: 1 when it is kept for the
 * read rate (kept_ctf), else 0: the caller removes it.
 */
static int ctf_trace(size_t subbuf, const char *dir, uint64_t calls,
		     const struct grb_ctf_stats *st, int stop_ret, char *out)
{
	static const char config[] = "grb_ctf_emit_raw, trace_dir (the "
				     "tracer's writer thread)";
	uint64_t kept = st->events - st->events_overwritten;
	struct xproc_watch w;
	struct bench_row *row;
	long long bt = -1;
	char key[64], text[256];
	int have_bt = bench_have_prog("babeltrace2"), read_ok = 1, bad;

	xproc_watch_init(&w, dir, CTF_CHAN "_");
	xproc_watch_poll(&w);
	snprintf(key, sizeof(key), "tr/ctf/%zu/bytes_per_event", subbuf);
	row = tr_row("grb-ctf", key, "bytes_per_event", "bytes/event",
		     subbuf, config);
	row->value = row->min = row->max = kept ? (double)w.bytes /
					   (double)kept : NAN;
	snprintf(row->note, sizeof(row->note), "%llu stream-file bytes "
		 "(+%llu metadata) / %llu events in them (%llu committed - "
		 "%llu overwritten); %llu packets", (unsigned long long)w.bytes,
		 (unsigned long long)w.other, (unsigned long long)kept,
		 (unsigned long long)st->events,
		 (unsigned long long)st->events_overwritten,
		 (unsigned long long)st->packets);
	if (have_bt)
		read_ok = bt2_count(dir, &bt, out, BT_OUT_CAP) == 0;
	bad = !read_ok || stop_ret != 0 || w.bytes != st->bytes ||
	      calls != st->events + st->events_discarded ||
	      (have_bt && bt != (long long)kept);
	if (!read_ok)
		snprintf(text, sizeof(text), "babeltrace2 cannot read the "
			 "trace: %s", first_line(out));
	else
		snprintf(text, sizeof(text), "%s %lld events, the tracer "
			 "%llu (%llu committed - %llu overwritten; %llu "
			 "calls, %llu refused); stream files %llu bytes, "
			 "tracer %llu%s", have_bt ? "babeltrace2" :
			 "unverified (no babeltrace2)", bt,
			 (unsigned long long)kept,
			 (unsigned long long)st->events,
			 (unsigned long long)st->events_overwritten,
			 (unsigned long long)calls,
			 (unsigned long long)st->events_discarded,
			 (unsigned long long)w.bytes,
			 (unsigned long long)st->bytes,
			 stop_ret ? "; grb_ctf_stop failed" : "");
	snprintf(key, sizeof(key), "tr/ctf/%zu/check", subbuf);
	check_row("grb-ctf", key, subbuf, config, bad, text);
	if (!have_bt || bad || subbuf != CTF_READ_SUBBUF)
		return 0;
	snprintf(kept_ctf.dir, sizeof(kept_ctf.dir), "%s", dir);
	kept_ctf.events = bt;
	kept_ctf.bytes = w.bytes;
	kept_ctf.config = config;
	return 1;
}

/* ---- one variant, one sub-buffer size ---- */

static void ctf_one(const struct bench_opts *o, const struct ctf_variant *v,
		    size_t subbuf, const char *tmp, char *out)
{
	char dir[PATH_MAX], sz[16], what[64];
	char *rm[] = { (char *)"rm", (char *)"-rf", dir, NULL };
	struct ctf_writer w;
	struct grb_ctf_stats st;
	struct bench_loop l;
	struct bench_stat stat;
	struct bench_row *row;
	uint64_t calls, refused;
	double ns[64];
	int k, ret, stop_ret;

	snprintf(dir, sizeof(dir), "%.*s/ctf-%zu", PATH_MAX - 32, tmp, subbuf);
	ret = writer_open(v, subbuf, v->trace ? dir : NULL, &w);
	if (ret) {
		snprintf(what, sizeof(what), "grb-ctf %s %s", v->id,
			 bench_size_str(subbuf, sz, sizeof(sz)));
		report_skip(what, "grb_ctf_create: %s", grb_strerror(ret));
		return;
	}
	bench_loop_wall(v->fn, &w, o->n_warm, &l);
	calls = o->n_warm;
	refused = l.refused;
	for (k = 0; k < o->runs; k++) {
		bench_loop_wall(v->fn, &w, o->n_single, &l);
		ns[k] = (double)l.ns / (double)o->n_single;
		calls += o->n_single;
		refused += l.refused;
	}
	stop_ret = grb_ctf_stop(w.t);
	grb_ctf_get_stats(w.t, &st);
	grb_ctf_destroy(w.t);
	bench_stat_of(ns, o->runs, &stat);
	row = report_add("ow/%s/%zu/%s", v->id, subbuf,
			 v->trace ? "trace" : "alone");
	report_describe(row, "overwrite", "grb-ctf", "ns_per_entry",
			"ns/entry", subbuf, 1, v->trace);
	snprintf(row->config, sizeof(row->config), "%s, per-CPU overwrite, "
		 "%s", v->desc, v->trace ? "trace_dir (writer thread)" :
		 "no reader");
	snprintf(row->note, sizeof(row->note), "%llu events committed of "
		 "%llu calls, %llu refused, %llu overwritten",
		 (unsigned long long)st.events, (unsigned long long)calls,
		 (unsigned long long)refused,
		 (unsigned long long)st.events_overwritten);
	report_set(row, &stat);
	/* Every call the tracer did not refuse is an event it committed. */
	if (calls != st.events + st.events_discarded ||
	    refused != st.events_discarded)
		report_fail("grb-ctf %s, %s sub-buffers: %llu calls, %llu "
			    "refused, but the tracer committed %llu and "
			    "refused %llu", row->config,
			    bench_size_str(subbuf, sz, sizeof(sz)),
			    (unsigned long long)calls,
			    (unsigned long long)refused,
			    (unsigned long long)st.events,
			    (unsigned long long)st.events_discarded);
	if (v->trace && !ctf_trace(subbuf, dir, calls, &st, stop_ret, out))
		bench_run(rm, NULL, 0);
}

/* ---- ratios to LTTng-UST, same run ---- */

static void ratio_row(const char *key, const char *section, double num,
		      double den, size_t subbuf, int reader,
		      const char *config)
{
	struct bench_row *row;

	if (isnan(num) || isnan(den) || den == 0)
		return;
	row = report_add("%s", key);
	report_describe(row, section, "grb-ctf/lttng-ust", "ratio", "x",
			subbuf, 1, reader);
	snprintf(row->config, sizeof(row->config), "%s", config);
	snprintf(row->note, sizeof(row->note), "grb-ctf's median / "
		 "LTTng-UST's median, same run");
	row->value = row->min = row->max = num / den;
	row->runs = 1;
}

static double value_of(const char *key)
{
	const struct bench_row *r = report_find("%s", key);

	return r ? r->value : NAN;
}

static void ratios(const struct bench_opts *o)
{
	char a[64], b[64], c[64];
	size_t i;
	int s;

	for (s = 0; s < BENCH_NR_SUBBUFS; s++) {
		size_t sb = o->subbufs[s];

		for (i = 0; i < NR_VARIANTS; i++) {
			const char *kind = variants[i].trace ? "trace" :
					   "alone";

			snprintf(a, sizeof(a), "ow/%s/%zu/%s", variants[i].id,
				 sb, kind);
			snprintf(b, sizeof(b), "ow/lttng/%zu/%s", sb,
				 variants[i].trace ? "reader" : "alone");
			snprintf(c, sizeof(c), "ow/%s/%zu/%s/x-lttng",
				 variants[i].id, sb, kind);
			ratio_row(c, "overwrite", value_of(a), value_of(b), sb,
				  variants[i].trace, variants[i].trace ?
				  "ns/event vs LTTng-UST's consumer daemon "
				  "session" : "ns/event vs LTTng-UST's "
				  "snapshot session");
		}
		snprintf(a, sizeof(a), "tr/ctf/%zu/bytes_per_event", sb);
		snprintf(b, sizeof(b), "tr/lttng/%zu/bytes_per_event", sb);
		snprintf(c, sizeof(c), "tr/ratio/%zu/bytes_per_event", sb);
		ratio_row(c, "ctf-trace", value_of(a), value_of(b), sb, 1,
			  "stream bytes per event kept");
	}
	ratio_row("tr/ratio/bt2_events_per_s", "ctf-trace",
		  value_of("tr/ctf/bt2_events_per_s"),
		  value_of("tr/lttng/bt2_events_per_s"), CTF_READ_SUBBUF, 1,
		  "babeltrace2 --output-format=dummy, events/s");
}

/*
 * babeltrace2 --output-format=dummy on both kept traces, alternately,
 * which trace goes first alternating too; K rounds, one with --quick.
 */
static void read_rates(const struct bench_opts *o, char *out)
{
	struct kept_trace *t[2] = { &kept_ctf, &kept_lttng };
	static const char *const sys[2] = { "grb-ctf", "lttng-ust" };
	static const char *const key[2] = { "tr/ctf/bt2_events_per_s",
					     "tr/lttng/bt2_events_per_s" };
	double rate[2][64];
	int n[2] = { 0, 0 }, rounds = o->quick ? 1 : o->runs, r, j;

	if (rounds > 3)
		rounds = 3;
	for (r = 0; r < rounds; r++) {
		for (j = 0; j < 2; j++) {
			int i = r & 1 ? 1 - j : j;
			uint64_t ns;

			if (!t[i]->dir[0])
				continue;
			if (bt2_read_ns(t[i]->dir, &ns, out, BT_OUT_CAP)) {
				report_fail("%s trace: babeltrace2 --output-"
					    "format=dummy failed: %s", sys[i],
					    first_line(out));
				t[i]->dir[0] = '\0';
				continue;
			}
			rate[i][n[i]++] = (double)t[i]->events * 1e9 /
					  (double)ns;
		}
	}
	for (j = 0; j < 2; j++)
		if (n[j])
			read_row(sys[j], key[j], t[j], rate[j], n[j]);
}

void bench_ctf_release(void)
{
	char *rm[] = { (char *)"rm", (char *)"-rf", kept_lttng.parent, NULL };

	if (kept_lttng.parent[0])
		bench_run(rm, NULL, 0);
	memset(&kept_lttng, 0, sizeof(kept_lttng));
	memset(&kept_ctf, 0, sizeof(kept_ctf));
}

void bench_ctf_run(const struct bench_opts *o)
{
	char tmp[PATH_MAX - 64] = "/tmp/grb-bench-ctf.XXXXXX";
	char *rm[] = { (char *)"rm", (char *)"-rf", tmp, NULL };
	char *out;
	size_t i;
	int s;

	out = (char *)malloc(BT_OUT_CAP);
	if (!out || !mkdtemp(tmp)) {
		report_skip("grb-ctf", "%s", out ? "cannot create a temporary "
			    "directory" : "out of memory");
		free(out);
		return;
	}
	for (i = 0; i < NR_VARIANTS; i++) {
		if (variants[i].clock == GRB_CTF_CLOCK_TSC && !bench_have_tsc())
			continue;
		/* --quick: the one size LTTng-UST runs then. */
		for (s = 0; s < BENCH_NR_SUBBUFS; s++)
			if (!o->quick || o->subbufs[s] == BENCH_SCALE_SUBBUF)
				ctf_one(o, &variants[i], o->subbufs[s], tmp,
					out);
	}
	read_rates(o, out);
	bench_run(rm, NULL, 0);
	bench_ctf_release();
	free(out);
	ratios(o);
}

/* ---- LTTng-UST's trace, handed over by bench_lttng.c ---- */

int bench_ctf_wants_lttng_trace(const struct bench_opts *o, int snapshot,
				size_t subbuf)
{
	if (o->lttng_reader)
		return !snapshot;
	return snapshot && subbuf == BENCH_SCALE_SUBBUF;
}

void bench_ctf_lttng_trace(const char *dir, const struct bench_ctf_peer *p)
{
	const char *config = p->snapshot ? "snapshot (the last buffers)" :
			     "consumer daemon's trace";
	struct xproc_watch w;
	struct bench_row *row;
	char key[64], text[256];
	int bad;

	xproc_watch_init(&w, dir, CTF_CHAN "_");
	xproc_watch_poll(&w);
	snprintf(key, sizeof(key), "tr/lttng/%zu/bytes_per_event", p->subbuf);
	row = tr_row("lttng-ust", key, "bytes_per_event", "bytes/event",
		     p->subbuf, config);
	row->value = row->min = row->max = p->events > 0 ?
		(double)w.bytes / (double)p->events : NAN;
	snprintf(row->note, sizeof(row->note), "%llu stream-file bytes "
		 "(+%llu metadata, index) / %lld events in them (babeltrace2)",
		 (unsigned long long)w.bytes, (unsigned long long)w.other,
		 p->events);
	/*
	 * LTTng-UST counts no overwritten event, only the packets the
	 * consumer lost: without such a loss, every call is in the trace.
	 */
	if (p->snapshot || p->lost_packets != 0) {
		char why[96];

		if (p->snapshot)
			snprintf(why, sizeof(why), "a snapshot holds the "
				 "last buffers only");
		else if (p->lost_packets < 0)
			snprintf(why, sizeof(why), "lttng list gave no "
				 "lost-packet count");
		else
			snprintf(why, sizeof(why), "lttng list: %lld packets "
				 "lost, their events not counted",
				 p->lost_packets);
		bad = p->events < 0 || (uint64_t)p->events > p->calls;
		snprintf(text, sizeof(text), "babeltrace2 %lld events of %llu "
			 "calls (%s: at most the calls)", p->events,
			 (unsigned long long)p->calls, why);
	} else {
		bad = p->events < 0 || (uint64_t)p->events != p->calls;
		snprintf(text, sizeof(text), "babeltrace2 %lld events, %llu "
			 "calls, lttng list: %lld packets lost", p->events,
			 (unsigned long long)p->calls, p->lost_packets);
	}
	snprintf(key, sizeof(key), "tr/lttng/%zu/check", p->subbuf);
	check_row("lttng-ust", key, p->subbuf, config, bad, text);
	if (bad || p->subbuf != CTF_READ_SUBBUF)
		return;
	bench_ctf_release();
	snprintf(kept_lttng.parent, sizeof(kept_lttng.parent),
		 "/tmp/grb-bench-ctf-lttng.XXXXXX");
	if (!mkdtemp(kept_lttng.parent)) {
		kept_lttng.parent[0] = '\0';
		report_skip("lttng-ust trace read", "cannot create a "
			    "temporary directory");
		return;
	}
	snprintf(kept_lttng.dir, sizeof(kept_lttng.dir), "%s/trace",
		 kept_lttng.parent);
	if (rename(dir, kept_lttng.dir) != 0) {
		report_skip("lttng-ust trace read", "cannot move the trace: "
			    "%s", strerror(errno));
		bench_ctf_release();
		return;
	}
	kept_lttng.events = p->events;
	kept_lttng.bytes = w.bytes;
	kept_lttng.config = config;
}
