/* SPDX-License-Identifier: MIT */
/*
 * bench/plot.c - the data files behind the plots (ns per record against
 * sub-buffer size, CPU ns per record against writer threads) and the
 * gnuplot run that draws them, as PNG and SVG next to results.csv.
 *
 * Each .dat file holds one block per series, separated by two blank
 * lines; a block's first line is its title (plot.gp reads it with
 * columnheader), then "x median min max" lines.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "report.h"
#include "util.h"

struct series {
	const char *title;
	const char *key;    /* printf format taking the x value */
};

static int write_block(FILE *f, const struct series *s, const double *x,
		       int nx)
{
	int i, n = 0;

	for (i = 0; i < nx; i++) {
		char key[64];
		const struct bench_row *r;

		snprintf(key, sizeof(key), s->key, (unsigned long)x[i]);
		r = report_find("%s", key);
		if (!r || isnan(r->value))
			continue;
		if (n++ == 0)
			fprintf(f, "\"%s\" 0 0 0\n", s->title);
		/* Sub-buffer sizes are plotted in KiB, thread counts as is. */
		fprintf(f, "%g %g %g %g\n", x[i] < 1024 ? x[i] : x[i] / 1024,
			r->value, r->min, r->max);
	}
	if (n)
		fprintf(f, "\n\n");
	return n > 0;
}

static int write_dat(const char *path, const struct series *s, int ns,
		     const double *x, int nx, int flat_from)
{
	FILE *f = fopen(path, "w");
	int i, blocks = 0;

	if (!f)
		return -1;
	for (i = 0; i < ns; i++) {
		if (i >= flat_from) {
			/* A figure with no x (a floor): drawn flat. */
			double y[BENCH_NR_SUBBUFS];
			const struct bench_row *r = report_find("%s", s[i].key);
			int j;

			if (!r || isnan(r->value))
				continue;
			fprintf(f, "\"%s\" 0 0 0\n", s[i].title);
			for (j = 0; j < nx && j < BENCH_NR_SUBBUFS; j++) {
				y[j] = x[j] / 1024;
				fprintf(f, "%g %g %g %g\n", y[j], r->value,
					r->min, r->max);
			}
			fprintf(f, "\n\n");
			blocks++;
			continue;
		}
		blocks += write_block(f, &s[i], x, nx);
	}
	fclose(f);
	return blocks;
}

void bench_plot(const struct bench_opts *o)
{
	static const struct series sub[] = {
		{ "grb ts=clock_gettime", "ow/grb-mono/%lu/alone" },
		{ "grb ts=rdtscp", "ow/grb-tsc/%lu/alone" },
		{ "grb no timestamp", "ow/grb-nots/%lu/alone" },
		{ "grb ts=clock_gettime + reader", "ow/grb-mono/%lu/reader" },
		{ "LTTng-UST snapshot", "ow/lttng/%lu/alone" },
		{ "LTTng-UST + consumer", "ow/lttng/%lu/reader" },
		{ "floor clock_gettime+store", "floor/mono" },
		{ "floor rdtscp+store", "floor/rdtscp" },
	};
	static const struct series thr[] = {
		{ "grb ts=clock_gettime", "sc/grb-mono/%lu" },
		{ "grb no timestamp", "sc/grb-nots/%lu" },
		{ "LTTng-UST snapshot", "sc/lttng/%lu" },
		{ "ck_ring per writer ts", "sc/ckring-mono/%lu" },
		{ "ck_ring per writer no ts", "sc/ckring-nots/%lu" },
		{ "mutex ring ts", "sc/mutex-mono/%lu" },
		{ "mutex ring no ts", "sc/mutex-nots/%lu" },
	};
	char path[PATH_MAX], dir[PATH_MAX], script[PATH_MAX + 16],
	     expr[PATH_MAX + 128], out[4096];
	char *argv[] = { (char *)"gnuplot", (char *)"-e", expr, script, NULL };
	double xs[BENCH_NR_SUBBUFS], xt[BENCH_MAX_THREADS];
	const char *term;
	int i;

	for (i = 0; i < BENCH_NR_SUBBUFS; i++)
		xs[i] = (double)o->subbufs[i];
	for (i = 0; i < BENCH_MAX_THREADS; i++)
		xt[i] = o->threads[i];
	snprintf(path, sizeof(path), "%s/subbuf.dat", o->out_dir);
	write_dat(path, sub, (int)(sizeof(sub) / sizeof(sub[0])), xs,
		  BENCH_NR_SUBBUFS, 6);
	snprintf(path, sizeof(path), "%s/threads.dat", o->out_dir);
	write_dat(path, thr, (int)(sizeof(thr) / sizeof(thr[0])), xt,
		  BENCH_MAX_THREADS, 99);
	if (!bench_have_prog("gnuplot")) {
		report_skip("plots", "gnuplot not installed (gnuplot-nox)");
		return;
	}
	if (bench_self_dir(dir, sizeof(dir)) != 0)
		return;
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	{
		char *probe[] = { (char *)"gnuplot", (char *)"-e",
				  (char *)"set terminal", NULL };

		bench_run(probe, out, sizeof(out));
		term = strstr(out, "pngcairo") ? "pngcairo" : "png";
	}
	snprintf(expr, sizeof(expr), "dir='%s'; term='%s'; ext='png'",
		 o->out_dir, term);
	if (bench_run(argv, out, sizeof(out)) != 0)
		report_skip("plots (png)", "gnuplot failed: %.100s", out);
	snprintf(expr, sizeof(expr), "dir='%s'; term='svg'; ext='svg'",
		 o->out_dir);
	if (bench_run(argv, out, sizeof(out)) != 0)
		report_skip("plots (svg)", "gnuplot failed: %.100s", out);
}
