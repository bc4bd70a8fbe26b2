/* SPDX-License-Identifier: MIT */
/*
 * bench/callgrind.c - instructions per record, a figure machine noise
 * does not move.
 *
 * grb_bench runs itself under `valgrind --tool=callgrind
 * --toggle-collect=<write function>` in --callgrind-one mode, which makes
 * a fixed number of calls to that one write function; the collected
 * instruction count divided by the calls is the cost per record, the
 * amortised slow path (sub-buffer switches) included.
 *
 * Valgrind does not register rseq, so grb's CPU id falls back to
 * sched_getcpu() (grb__cpu_index, out of line); its inclusive cost, read
 * with callgrind_annotate, is reported apart and subtracted for the
 * "without the fallback" figure (what stays counted, the read of the
 * rseq area's id and its one compare, is what runs with rseq).
 *
 * The read side is counted the same way: instructions per record read by
 * one drain of bench_read.c (filling its channels is not collected).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "clock.h"
#include "report.h"
#include "util.h"

static const struct {
	const char *what;
	const char *fn;
	const char *desc;
	int quick;
} targets[] = {
	{ "grb-nots", "bench_grb_write_ow_nots",
	  "grb overwrite, no timestamp", 1 },
	{ "grb-tsc", "bench_grb_write_ow_tsc", "grb overwrite, ts=rdtscp", 0 },
	{ "grb-mono", "bench_grb_write_ow_mono",
	  "grb overwrite, ts=clock_gettime(MONOTONIC)", 1 },
	{ "grb-rseq-nots", "bench_grb_write_rseq_nots",
	  "grb overwrite, per-CPU (rseq), no timestamp", 1 },
	{ "grb-rseq-mono", "bench_grb_write_rseq_mono",
	  "grb overwrite, per-CPU (rseq), ts=clock_gettime(MONOTONIC)", 1 },
	{ "grb-rec-nots", "bench_grb_write1_ow_nots",
	  "grb overwrite, no timestamp, grb_write_record()", 1 },
	{ "grb-rec-rseq-nots", "bench_grb_write1_rseq_nots",
	  "grb overwrite, per-CPU (rseq), no timestamp, grb_write_record()",
	  1 },
	{ "grb-rec-rseq-mono", "bench_grb_write1_rseq_mono",
	  "grb overwrite, per-CPU (rseq), ts=clock_gettime(MONOTONIC), "
	  "grb_write_record()", 1 },
	{ "floor-rdtscp", "bench_floor_rdtscp",
	  "floor: rdtscp + 16-byte store", 0 },
	{ "floor-mono", "bench_floor_mono",
	  "floor: clock_gettime(MONOTONIC) + 16-byte store", 1 },
	{ "floor-cas", "bench_floor_cas",
	  "floor: lock cmpxchg + 16-byte store", 0 },
	{ "read-raw", "bench_read_drain_raw",
	  "read: get_next, inline decode, put_next", 1 },
	{ "read-buf", "bench_read_drain_buf",
	  "read: grb_buf_iter_next, discard", 1 },
	{ "read-chan", "bench_read_drain_chan",
	  "read: grb_chan_iter_next, merged", 1 },
};

#define NR_TARGETS (sizeof(targets) / sizeof(targets[0]))

int bench_callgrind_one(const char *what, uint64_t n)
{
	if (strncmp(what, "grb-", 4) == 0)
		return bench_grb_one(what, n);
	if (strncmp(what, "floor-", 6) == 0)
		return bench_floor_one(what, n);
	if (strncmp(what, "read-", 5) == 0)
		return bench_read_one(what, n);
	return -EINVAL;
}

/* The "totals:" (or "summary:") instruction count of a callgrind file. */
static double read_totals(const char *path)
{
	FILE *f = fopen(path, "re");
	char line[256];
	double v = NAN;

	if (!f)
		return NAN;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "totals:", 7) == 0)
			v = strtod(line + 7, NULL);
		else if (strncmp(line, "summary:", 8) == 0 && isnan(v))
			v = strtod(line + 8, NULL);
	}
	fclose(f);
	return v;
}

/* Inclusive instructions of @fn from callgrind_annotate, or 0. */
static double inclusive_of(const char *path, const char *fn, char *out,
			   size_t cap)
{
	char *argv[] = { (char *)"callgrind_annotate", (char *)"--inclusive=yes",
			 (char *)path, NULL };
	char *p, *line;

	if (bench_run(argv, out, cap) != 0)
		return 0;
	p = strstr(out, fn);
	if (!p)
		return 0;
	line = p;
	while (line > out && line[-1] != '\n')
		line--;
	/* "  1,234,567 (12.34%)  ???:fn [...]": drop the thousands commas. */
	{
		char num[64];
		size_t n = 0;

		while (line < p && (*line == ' ' || *line == '\t'))
			line++;
		while (line < p && n + 1 < sizeof(num) &&
		       (*line == ',' || (*line >= '0' && *line <= '9'))) {
			if (*line != ',')
				num[n++] = *line;
			line++;
		}
		num[n] = '\0';
		return n ? strtod(num, NULL) : 0;
	}
}

static struct bench_row *ir_row(const char *key, const char *desc,
				const char *name, double v, const char *note)
{
	struct bench_row *row = report_add("%s", key);

	snprintf(row->section, sizeof(row->section), "instr");
	snprintf(row->system, sizeof(row->system), "%s",
		 strncmp(key, "ir/floor", 8) == 0 ? "floor" : "grb");
	snprintf(row->name, sizeof(row->name), "%s", name);
	snprintf(row->unit, sizeof(row->unit), "instructions/record");
	snprintf(row->config, sizeof(row->config), "%s", desc);
	snprintf(row->note, sizeof(row->note), "%s", note);
	row->value = row->min = row->max = v;
	row->runs = 1;
	row->threads = 1;
	row->subbuf = BENCH_SCALE_SUBBUF;
	return row;
}

void bench_callgrind_run(const struct bench_opts *o)
{
	char self[PATH_MAX], file[PATH_MAX], tog[256], n[32], key[64];
	char *out;
	size_t i;

	if (!o->callgrind) {
		report_skip("callgrind", "--no-callgrind");
		return;
	}
	if (!bench_have_prog("valgrind")) {
		report_skip("callgrind", "valgrind not installed");
		return;
	}
	if (bench_self_dir(self, sizeof(self) - 16) != 0) {
		report_skip("callgrind", "cannot find the program");
		return;
	}
	strcat(self, "/grb_bench");
	out = (char *)malloc(1 << 20);
	if (!out)
		return;
	snprintf(n, sizeof(n), "%llu", (unsigned long long)o->n_instr);
	for (i = 0; i < NR_TARGETS; i++) {
		char opt[PATH_MAX + 32];
		char *argv[] = { (char *)"valgrind", (char *)"--tool=callgrind",
				 opt, tog, self, (char *)"--callgrind-one",
				 (char *)targets[i].what, n, NULL };
		double total, fb;
		int ret;

		if (o->quick && !targets[i].quick)
			continue;
		/* grb-tsc and floor-rdtscp: valgrind's CPU has no rdtscp
		 * when the real one does not report it (bench/clock.h). */
		if (strstr(targets[i].what, "tsc") && !bench_have_tsc()) {
			report_skip(targets[i].what,
				    "the CPU does not report rdtscp");
			continue;
		}
		snprintf(file, sizeof(file), "%s/callgrind.%s.out", o->out_dir,
			 targets[i].what);
		snprintf(opt, sizeof(opt), "--callgrind-out-file=%s", file);
		snprintf(tog, sizeof(tog), "--toggle-collect=%s",
			 targets[i].fn);
		fprintf(stderr, "  callgrind: %s\n", targets[i].what);
		ret = bench_run(argv, out, 1 << 20);
		total = read_totals(file);
		if (ret != 0 || isnan(total) || total <= 0) {
			report_skip(targets[i].what, "callgrind run failed "
				    "(exit %d)", ret);
			continue;
		}
		snprintf(key, sizeof(key), "ir/%s", targets[i].what);
		ir_row(key, targets[i].desc, "instr_per_record",
		       total / (double)o->n_instr,
		       "valgrind: no rseq, CPU id via sched_getcpu(); "
		       "vDSO clock as the C library runs it under valgrind");
		if (strncmp(targets[i].what, "grb-", 4) != 0)
			continue;
		fb = inclusive_of(file, "grb__cpu_index", out, 1 << 20);
		snprintf(key, sizeof(key), "ir/%s/cpu_fallback",
			 targets[i].what);
		ir_row(key, targets[i].desc, "cpu_fallback_instr_per_record",
		       fb / (double)o->n_instr,
		       "grb__cpu_index inclusive: valgrind only");
		snprintf(key, sizeof(key), "ir/%s/net", targets[i].what);
		ir_row(key, targets[i].desc, "instr_per_record_no_fallback",
		       (total - fb) / (double)o->n_instr,
		       "total minus the sched_getcpu() fallback");
	}
	free(out);
}
