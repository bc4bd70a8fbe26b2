/* SPDX-License-Identifier: MIT */
/*
 * bench/grb_bench.c - grb_bench: the 2010 cover letter's benchmark tables
 * measured on this machine, for grb and, in the same run, for LTTng-UST,
 * ck_ring, a mutex ring and the machine's floor.
 *
 * Usage: grb_bench [--quick] [--runs K] [--out DIR] [--no-lttng]
 *                  [--no-callgrind] [--no-plot] [--only SECTION,...]
 *        grb_bench --callgrind-one WHAT N   (used under valgrind)
 *
 * Sections: 1 overwrite mode with and without a reader per sub-buffer
 * size; 2 discard mode with a reader (written, lost, read); 3 write-side
 * scalability with 1, 2, 4, 8 threads; 4 instructions per record; 5 the
 * read side (record rates, sub-buffers to a file, wake-up latency, the
 * low rate; bench_read.c, bench_wake.c); 6 cross-process: a writer
 * process and a consumer daemon draining to tmpfs, grb with grb-consumerd
 * beside LTTng-UST with its consumer daemon (bench_xproc.c); 7 the
 * project's targets.  Section 1 also holds grb's CTF tracer client
 * beside LTTng-UST, and the traces both write (bench_ctf.c).
 * Output: the table on stdout (also table.txt), results.csv,
 * results.json and the plots in DIR (default build/bench-results).  Progress goes to stderr.
 *
 * A benchmark, never a test: nothing here fails on a slow figure.  A
 * count that does not add up (report_fail()) makes it exit with 1, once
 * every result is written.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "bench_ctf.h"
#include "machine.h"
#include "report.h"
#include "util.h"

#ifndef GRB_BENCH_OUT_DIR
#define GRB_BENCH_OUT_DIR "build/bench-results"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: grb_bench [--quick] [--runs K] [--out DIR] "
		"[--no-lttng] [--no-callgrind] [--no-plot]\n"
		"                 [--only SECTION,...]\n"
		"       grb_bench --callgrind-one WHAT N\n"
		"  --quick         3 runs, short loops, fewer LTTng sessions\n"
		"  --runs K        runs per figure, 1..64 (default 5)\n"
		"  --out DIR       output directory (default %s)\n"
		"  --no-lttng, --no-callgrind, --no-plot   leave that part "
		"out\n"
		"  --only LIST     run only these sections: floor, overwrite, "
		"ckring, mutex,\n"
		"                  discard, scale, read, wake, lttng, "
		"ctf, xproc, callgrind\n",
		GRB_BENCH_OUT_DIR);
}

static void defaults(struct bench_opts *o, int quick)
{
	static const int threads[BENCH_MAX_THREADS] = { 1, 2, 4, 8 };

	memset(o, 0, sizeof(*o));
	o->quick = quick;
	o->runs = quick ? 3 : 5;
	o->n_single = quick ? 200000 : 1000000;
	/* More than a buffer's worth: every page touched before timing. */
	o->n_warm = quick ? 150000 : 300000;
	o->n_discard = quick ? 500000 : 2000000;
	o->n_scale = quick ? 100000 : 500000;
	o->n_instr = quick ? 50000 : 200000;
	o->poll_us = 50;
	/* Slower than a writer fills 1 MiB: the discard runs lose records. */
	o->poll_us_slow = 10000;
	o->subbufs[0] = 4u << 10;
	o->subbufs[1] = 128u << 10;
	o->subbufs[2] = 512u << 10;
	memcpy(o->threads, threads, sizeof(threads));
	o->lttng = 1;
	o->callgrind = 1;
	o->lttng_reader = !quick;
	o->n_wake = quick ? 300 : 2000;
	o->low_secs = quick ? 1 : 3;
	o->out_rounds = quick ? 4 : 16;
	o->read_rounds = quick ? 2 : 4;
	o->n_xproc = quick ? 500000 : 2000000;
	o->out_dir = GRB_BENCH_OUT_DIR;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static void stage(const char *what)
{
	fprintf(stderr, "grb_bench: %s\n", what);
}

/* Print the table to stdout and to DIR/table.txt. */
static void print_table(const struct bench_opts *o,
			const struct bench_machine *m)
{
	char path[PATH_MAX];
	FILE *f;

	bench_table_print(stdout, o, m);
	fflush(stdout);
	snprintf(path, sizeof(path), "%s/table.txt", o->out_dir);
	f = fopen(path, "w");
	if (!f)
		return;
	bench_table_print(f, o, m);
	fclose(f);
}

/*
 * Options into @o.  Return: -1 to go on, else the exit status (after
 * --help, a usage error, or --callgrind-one).
 */
static int parse_args(int argc, char **argv, struct bench_opts *o,
		      int *plot, const char **only)
{
	int i, quick = 0, runs = 0, lttng = 1, cg = 1;
	const char *out = NULL;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--callgrind-one") == 0 && i + 2 < argc)
			return bench_callgrind_one(argv[i + 1],
				strtoull(argv[i + 2], NULL, 0)) ? 1 : 0;
		if (strcmp(argv[i], "--quick") == 0) {
			quick = 1;
		} else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			runs = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else if (strcmp(argv[i], "--no-lttng") == 0) {
			lttng = 0;
		} else if (strcmp(argv[i], "--no-callgrind") == 0) {
			cg = 0;
		} else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
			*only = argv[++i];
		} else if (strcmp(argv[i], "--no-plot") == 0) {
			*plot = 0;
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	defaults(o, quick);
	if (runs < 0 || runs > 64) {
		usage(stderr);
		return 2;
	}
	if (runs)
		o->runs = runs;
	if (out)
		o->out_dir = out;
	o->lttng = lttng;
	o->callgrind = cg;
	return -1;
}

/* Is @name among the sections to run (--only), or are all run? */
static int wanted(const char *only, const char *name)
{
	size_t n = strlen(name);
	const char *p = only;

	if (!only)
		return 1;
	while ((p = strstr(p, name)) != NULL) {
		if ((p == only || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

/* Every system, every section, in a fixed order. */
static void run_all(const struct bench_opts *o, const char *only)
{
	static const struct {
		const char *name, *stage;
		void (*run)(const struct bench_opts *o);
	} parts[] = {
		{ "floor", "floor", bench_floor_run },
		{ "overwrite", "grb, overwrite mode", bench_grb_overwrite },
		{ "ckring", "ck_ring", bench_ckring_run },
		{ "mutex", "mutex ring", bench_mutex_run },
		{ "discard", "grb, discard mode", bench_grb_discard },
		{ "scale", "grb, scalability", bench_grb_scale },
		{ "read", "grb, read side: rates and output", bench_read_run },
		{ "wake", "grb, read side: wake-up and low rate",
		  bench_wake_run },
		{ "lttng", "lttng-ust", bench_lttng_run },
		/* After lttng: its rows are what the CTF rows are put to. */
		{ "ctf", "grb CTF client beside lttng-ust", bench_ctf_run },
		{ "xproc", "cross-process: grb-consumerd, LTTng-UST's "
		  "consumer daemon", bench_xproc_run },
		{ "callgrind", "instruction counts", bench_callgrind_run },
	};
	size_t i;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (!wanted(only, parts[i].name))
			continue;
		stage(parts[i].stage);
		parts[i].run(o);
	}
	bench_ctf_release();
	bench_targets_eval(o);
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct bench_machine m;
	char path[PATH_MAX], desc[256];
	const char *only = NULL;
	int plot = 1, ret;
	uint64_t t0;

	bench_cpus_init();
	ret = parse_args(argc, argv, &o, &plot, &only);
	if (ret >= 0)
		return ret;
	if (mkdir_p(o.out_dir) != 0) {
		fprintf(stderr, "grb_bench: cannot create %s\n", o.out_dir);
		return 1;
	}
	t0 = bench_now_ns();
	bench_machine_read(&m);
	bench_pin_self(bench_cpu_for_writer(0));
	fprintf(stderr, "grb_bench: %s, %d CPUs; writing to %s\n",
		m.cpu_model, bench_nr_cpus(), o.out_dir);
#ifndef __OPTIMIZE__
	fprintf(stderr, "grb_bench: WARNING: not an optimised build; use "
		"the release preset\n");
#endif
	run_all(&o, only);
	if (plot) {
		stage("plots");
		bench_plot(&o);
	}
	snprintf(desc, sizeof(desc), "%s, %d runs, %.0f s", o.quick ?
		 "--quick" : "default", o.runs,
		 (double)(bench_now_ns() - t0) / 1e9);
	snprintf(path, sizeof(path), "%s/results.csv", o.out_dir);
	if (report_write_csv(path) != 0)
		fprintf(stderr, "grb_bench: cannot write %s\n", path);
	snprintf(path, sizeof(path), "%s/results.json", o.out_dir);
	if (report_write_json(path, &m, desc) != 0)
		fprintf(stderr, "grb_bench: cannot write %s\n", path);
	print_table(&o, &m);
	fprintf(stderr, "grb_bench: done in %.1f s; results in %s "
		"(results.csv, results.json, table.txt%s)\n",
		(double)(bench_now_ns() - t0) / 1e9, o.out_dir,
		plot ? ", ns_vs_subbuf.png/.svg, ns_vs_threads.png/.svg" : "");
	if (report_nr_fails()) {
		fprintf(stderr, "grb_bench: %zu check%s FAILED (see the end of "
			"the table)\n", report_nr_fails(),
			report_nr_fails() > 1 ? "s" : "");
		return 1;
	}
	return 0;
}
