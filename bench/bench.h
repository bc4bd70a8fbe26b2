/* SPDX-License-Identifier: MIT */
/*
 * bench/bench.h - the run parameters and the entry point of each
 * benchmarked system.
 *
 * Every system runs the same experiments with the same parameters: a
 * 4-byte payload (the writer's CPU id), 1 MiB per CPU (or per ring), the
 * same sub-buffer sizes, the same thread placement (util.h), the same
 * loops.  Each entry point adds its rows to the report (report.h) or a
 * one-line skip reason.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_BUF_BYTES   (1u << 20)   /* per CPU, or per ring */
#define BENCH_PAYLOAD     4u           /* the writer's CPU id */
#define BENCH_NR_SUBBUFS  3
#define BENCH_MAX_THREADS 4            /* entries of bench_opts.threads */
#define BENCH_SCALE_SUBBUF (128u << 10)
#define BENCH_DISCARD_SUBBUF (128u << 10)

struct bench_opts {
	int quick;
	int runs;               /* K: runs per figure, median reported */
	uint64_t n_single;      /* records per single-writer run */
	uint64_t n_warm;        /* records written before the timed runs */
	uint64_t n_discard;     /* write attempts per discard-mode run */
	uint64_t n_scale;       /* records per thread per scalability run */
	uint64_t n_instr;       /* records counted under callgrind */
	unsigned int poll_us;   /* a reader with nothing to read sleeps this */
	unsigned int poll_us_slow;  /* the slow reader of the discard runs */
	size_t subbufs[BENCH_NR_SUBBUFS];
	int threads[BENCH_MAX_THREADS];
	int lttng;              /* 0: --no-lttng */
	int callgrind;          /* 0: --no-callgrind */
	int lttng_reader;       /* run the LTTng overwrite + consumer jobs */
	uint64_t n_wake;        /* records per wake-up latency run */
	unsigned int low_secs;  /* seconds per low-rate run (1000/s) */
	unsigned int out_rounds;  /* buffer fills per output run */
	unsigned int read_rounds; /* channel fills per read-rate run */
	uint64_t n_xproc;       /* records per cross-process run */
	const char *out_dir;
};

/* bench_grb.c */
void bench_grb_overwrite(const struct bench_opts *o);
void bench_grb_discard(const struct bench_opts *o);
void bench_grb_scale(const struct bench_opts *o);
/* Write n records with the variant @what (callgrind.c); 0 or -EINVAL. */
int bench_grb_one(const char *what, uint64_t n);

/* bench_floor.c */
void bench_floor_run(const struct bench_opts *o);
int bench_floor_one(const char *what, uint64_t n);

/* bench_ckring.c, bench_mutex.c: sections 1 (no reader), 2 and 3. */
void bench_ckring_run(const struct bench_opts *o);
void bench_mutex_run(const struct bench_opts *o);

/* bench_read.c, bench_wake.c: the read side (section 5). */
void bench_read_run(const struct bench_opts *o);
void bench_wake_run(const struct bench_opts *o);
/* Read n records with the drain @what (callgrind.c); 0, -EINVAL, -EIO. */
int bench_read_one(const char *what, uint64_t n);

/* bench_lttng.c */
void bench_lttng_run(const struct bench_opts *o);

/* bench_xproc.c: the cross-process section (6), grb and LTTng-UST. */
void bench_xproc_run(const struct bench_opts *o);

/* callgrind.c */
void bench_callgrind_run(const struct bench_opts *o);
int bench_callgrind_one(const char *what, uint64_t n);

/* table.c, targets.c, plot.c */
struct bench_machine;
void bench_table_print(FILE *f, const struct bench_opts *o,
		       const struct bench_machine *m);
void bench_targets_eval(const struct bench_opts *o);
void bench_targets_print(FILE *f);
void bench_plot(const struct bench_opts *o);

#endif /* BENCH_BENCH_H */
