/* SPDX-License-Identifier: MIT */
/*
 * bench/report.h - results: statistics over runs, one row per figure,
 * skipped systems, failed checks, and the CSV / JSON files.
 *
 * Every figure the benchmark prints is a row here first, found again by
 * its key when the terminal table (table.c), the targets (targets.c) and
 * the plots (plot.c) are made.  Rows are added from one thread.
 */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stddef.h>
#include <stdint.h>

/* Median, minimum and maximum of n values. */
struct bench_stat {
	double med, min, max;
	int n;
};

void bench_stat_of(const double *v, int n, struct bench_stat *st);

struct bench_row {
	char key[64];        /* unique, e.g. "ow/grb-mono/131072/reader" */
	char section[16];    /* overwrite, discard, scale, floor, instr, target */
	char system[24];     /* grb, lttng-ust, ck_ring, mutex, floor */
	char name[40];       /* the metric, e.g. ns_per_entry */
	char config[96];     /* mode, clock, reader, what the run did */
	char unit[24];
	double value, min, max;   /* median and range over the runs */
	int runs;
	unsigned int payload;     /* payload bytes per record */
	uint64_t subbuf;          /* sub-buffer bytes, 0 when not applicable */
	int threads;              /* writer threads */
	int reader;               /* 1 when a reader ran concurrently */
	char note[256];
};

/*
 * Add a row whose key is printf(fmt, ...); the caller fills the rest.
 * Return: the row (zeroed but for key and payload); exits on overflow.
 */
struct bench_row *report_add(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Describe a row: what it measures, of which system, under what run. */
void report_describe(struct bench_row *r, const char *section,
		     const char *system, const char *name, const char *unit,
		     uint64_t subbuf, int threads, int reader);

/* The metrics every discard-mode run reports, in table order. */
struct report_metric {
	const char *metric, *unit, *note;
};
#define REPORT_DISCARD_METRICS 4
extern const struct report_metric report_discard_metrics[REPORT_DISCARD_METRICS];

/* Fill value/min/max/runs from a statistic. */
void report_set(struct bench_row *r, const struct bench_stat *st);

/* The row with key printf(fmt, ...), or NULL. */
const struct bench_row *report_find(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* A system or figure that was not measured, and why (one line). */
void report_skip(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The reason @what was skipped, or NULL. */
const char *report_skipped(const char *what);

/*
 * A check that failed: counts that do not add up, a trace its reader
 * cannot read.  Printed on stderr now and at the end of the table, and
 * grb_bench then exits with status 1 (a slow figure is never a failure).
 */
void report_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

size_t report_nr_fails(void);
const char *report_fail_at(size_t i);

size_t report_nr_rows(void);
const struct bench_row *report_row(size_t i);
size_t report_nr_skips(void);
void report_skip_at(size_t i, const char **what, const char **why);

struct bench_machine;

/* Return: 0, or -errno when the file cannot be written. */
int report_write_csv(const char *path);
int report_write_json(const char *path, const struct bench_machine *m,
		      const char *run_desc);

#endif /* BENCH_REPORT_H */
