/* SPDX-License-Identifier: MIT */
/*
 * bench/report.c - statistics, result rows, skips, CSV and JSON output.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "report.h"

#define REPORT_MAX_ROWS  512
#define REPORT_MAX_SKIPS 32

static struct bench_row rows[REPORT_MAX_ROWS];
static size_t nr_rows;

static struct {
	char what[48];
	char why[160];
} skips[REPORT_MAX_SKIPS];
static size_t nr_skips;

#define REPORT_MAX_FAILS 32

static char fails[REPORT_MAX_FAILS][256];
static size_t nr_fails;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void bench_stat_of(const double *v, int n, struct bench_stat *st)
{
	double s[64];
	int i;

	if (n > 64)
		n = 64;
	st->n = n;
	if (n <= 0) {
		st->med = st->min = st->max = NAN;
		return;
	}
	for (i = 0; i < n; i++)
		s[i] = v[i];
	qsort(s, (size_t)n, sizeof(s[0]), cmp_double);
	st->min = s[0];
	st->max = s[n - 1];
	st->med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void report_describe(struct bench_row *r, const char *section,
		     const char *system, const char *name, const char *unit,
		     uint64_t subbuf, int threads, int reader)
{
	snprintf(r->section, sizeof(r->section), "%s", section);
	snprintf(r->system, sizeof(r->system), "%s", system);
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	r->subbuf = subbuf;
	r->threads = threads;
	r->reader = reader;
}

const struct report_metric report_discard_metrics[REPORT_DISCARD_METRICS] = {
	{ "ns_per_call", "ns/call", "every write attempt" },
	{ "ns_per_written", "ns/entry",
	  "batches of 256 where every record was written" },
	{ "ns_per_discarded", "ns/entry",
	  "batches of 256 where every record was discarded" },
	{ "reader_rate", "entries/s",
	  "records read during the writer's run / its wall time" },
};

struct bench_row *report_add(const char *fmt, ...)
{
	struct bench_row *r;
	va_list ap;

	if (nr_rows == REPORT_MAX_ROWS) {
		fprintf(stderr, "grb_bench: too many result rows\n");
		exit(1);
	}
	r = &rows[nr_rows++];
	memset(r, 0, sizeof(*r));
	va_start(ap, fmt);
	vsnprintf(r->key, sizeof(r->key), fmt, ap);
	va_end(ap);
	r->payload = 4;
	r->value = r->min = r->max = NAN;
	return r;
}

void report_set(struct bench_row *r, const struct bench_stat *st)
{
	r->value = st->med;
	r->min = st->min;
	r->max = st->max;
	r->runs = st->n;
}

const struct bench_row *report_find(const char *fmt, ...)
{
	char key[sizeof(rows[0].key)];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	for (i = 0; i < nr_rows; i++)
		if (strcmp(rows[i].key, key) == 0)
			return &rows[i];
	return NULL;
}

void report_skip(const char *what, const char *fmt, ...)
{
	va_list ap;

	if (nr_skips == REPORT_MAX_SKIPS)
		return;
	snprintf(skips[nr_skips].what, sizeof(skips[0].what), "%s", what);
	va_start(ap, fmt);
	vsnprintf(skips[nr_skips].why, sizeof(skips[0].why), fmt, ap);
	va_end(ap);
	fprintf(stderr, "  %s: skipped: %s\n", what, skips[nr_skips].why);
	nr_skips++;
}

const char *report_skipped(const char *what)
{
	size_t i;

	for (i = 0; i < nr_skips; i++)
		if (strcmp(skips[i].what, what) == 0)
			return skips[i].why;
	return NULL;
}

void report_fail(const char *fmt, ...)
{
	char text[sizeof(fails[0])];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fprintf(stderr, "grb_bench: CHECK FAILED: %s\n", text);
	/* Past the table's room the count still fails the run. */
	if (nr_fails < REPORT_MAX_FAILS)
		memcpy(fails[nr_fails], text, sizeof(text));
	nr_fails++;
}

size_t report_nr_fails(void)
{
	return nr_fails;
}

const char *report_fail_at(size_t i)
{
	return i < nr_fails && i < REPORT_MAX_FAILS ? fails[i] : NULL;
}

size_t report_nr_rows(void)
{
	return nr_rows;
}

const struct bench_row *report_row(size_t i)
{
	return i < nr_rows ? &rows[i] : NULL;
}

size_t report_nr_skips(void)
{
	return nr_skips;
}

void report_skip_at(size_t i, const char **what, const char **why)
{
	*what = skips[i].what;
	*why = skips[i].why;
}

/* A CSV field: quoted, with quotes doubled. */
static void csv_str(FILE *f, const char *s, const char *sep)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
	fputs(sep, f);
}

static void csv_num(FILE *f, double v, const char *sep)
{
	if (!isnan(v))
		fprintf(f, "%.6g", v);
	fputs(sep, f);
}

int report_write_csv(const char *path)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f)
		return -errno;
	fputs("key,section,system,name,value,min,max,unit,runs,config,"
	      "payload_bytes,subbuf_bytes,threads,reader,note\n", f);
	for (i = 0; i < nr_rows; i++) {
		const struct bench_row *r = &rows[i];

		csv_str(f, r->key, ",");
		csv_str(f, r->section, ",");
		csv_str(f, r->system, ",");
		csv_str(f, r->name, ",");
		csv_num(f, r->value, ",");
		csv_num(f, r->min, ",");
		csv_num(f, r->max, ",");
		csv_str(f, r->unit, ",");
		fprintf(f, "%d,", r->runs);
		csv_str(f, r->config, ",");
		fprintf(f, "%u,%llu,%d,%s,", r->payload,
			(unsigned long long)r->subbuf, r->threads,
			r->reader ? "on" : "off");
		csv_str(f, r->note, "\n");
	}
	for (i = 0; i < nr_skips; i++) {
		fputs("\"skip/", f);
		fputs(skips[i].what, f);
		fputs("\",\"skip\",", f);
		csv_str(f, skips[i].what, ",");
		fputs("\"skipped\",,,,,0,\"\",4,0,0,off,", f);
		csv_str(f, skips[i].why, "\n");
	}
	return fclose(f) == 0 ? 0 : -errno;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

int report_write_json(const char *path, const struct bench_machine *m,
		      const char *run_desc)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f)
		return -errno;
	fputs("{\n  \"machine\": {", f);
	fputs("\"cpu\": ", f);
	json_str(f, m->cpu_model);
	fprintf(f, ", \"cpus_online\": %d, \"cpus_used\": %d, ",
		m->cpus_online, m->cpus_allowed);
	fputs("\"kernel\": ", f);
	json_str(f, m->kernel);
	fputs(", \"clocksource\": ", f);
	json_str(f, m->clocksource);
	fputs(", \"date\": ", f);
	json_str(f, m->date);
	fputs(", \"compiler\": ", f);
	json_str(f, m->compiler);
	fputs("},\n  \"run\": ", f);
	json_str(f, run_desc);
	fputs(",\n  \"rows\": [\n", f);
	for (i = 0; i < nr_rows; i++) {
		const struct bench_row *r = &rows[i];

		fputs("    {\"key\": ", f);
		json_str(f, r->key);
		fputs(", \"section\": ", f);
		json_str(f, r->section);
		fputs(", \"system\": ", f);
		json_str(f, r->system);
		fputs(", \"name\": ", f);
		json_str(f, r->name);
		fputs(", \"value\": ", f);
		json_num(f, r->value);
		fputs(", \"min\": ", f);
		json_num(f, r->min);
		fputs(", \"max\": ", f);
		json_num(f, r->max);
		fputs(", \"unit\": ", f);
		json_str(f, r->unit);
		fprintf(f, ", \"runs\": %d, \"config\": ", r->runs);
		json_str(f, r->config);
		fprintf(f, ", \"payload_bytes\": %u, \"subbuf_bytes\": %llu, "
			"\"threads\": %d, \"reader\": %s, \"note\": ",
			r->payload, (unsigned long long)r->subbuf, r->threads,
			r->reader ? "true" : "false");
		json_str(f, r->note);
		fputs(i + 1 < nr_rows ? "},\n" : "}\n", f);
	}
	fputs("  ],\n  \"skipped\": [", f);
	for (i = 0; i < nr_skips; i++) {
		fputs(i ? ", {\"what\": " : "{\"what\": ", f);
		json_str(f, skips[i].what);
		fputs(", \"reason\": ", f);
		json_str(f, skips[i].why);
		fputc('}', f);
	}
	fputs("],\n  \"failed\": [", f);
	for (i = 0; i < nr_fails && i < REPORT_MAX_FAILS; i++) {
		if (i)
			fputs(", ", f);
		json_str(f, fails[i]);
	}
	fputs("]\n}\n", f);
	return fclose(f) == 0 ? 0 : -errno;
}
