/* SPDX-License-Identifier: MIT */
/*
 * bench/lttng_app.c - grb_bench_lttng, the application grb_bench traces
 * with LTTng-UST.  A separate program, so that grb_bench itself does not
 * carry lttng-ust's constructor and listener threads into the other
 * systems' runs, and so that it registers with a session that is already
 * set up.
 *
 * Usage: grb_bench_lttng [--single N K W] [--scale M K T1,T2,...]
 *
 *   --single  W warm-up events, then K timed runs of N events on one
 *             thread pinned like grb's writer
 *   --scale   for each thread count T, K runs of M events per thread,
 *             threads pinned like grb's writers
 *
 * Prints, one per line: "enabled 0|1", "single RUN NS N", "start NS"
 * (CLOCK_MONOTONIC just before the first timed single run, for grb_bench
 * timing the consumer daemon from there), "scale T RUN CPU_NS RECORDS
 * WALL_NS", "calls TOTAL", "span NS" (first to last event, warm-up
 * included).  Exit 2 when the tracepoint never got enabled (the
 * application did not register with a session daemon).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lttng_tp.h"
#include "util.h"

BENCH_NOINLINE static int tp_write(void *obj)
{
	(void)obj;
	tracepoint(grb_bench, rec, (uint32_t)sched_getcpu());
	return 0;
}

static void *scale_obj(void *arg, int idx)
{
	(void)idx;
	return arg;
}

/*
 * lttng-ust's constructor waits up to LTTNG_UST_REGISTER_TIMEOUT for the
 * session daemon; wait a little more for the event to be enabled.
 */
static int wait_enabled(void)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (tracepoint_enabled(grb_bench, rec))
			return 1;
		bench_poll_sleep(10000);
	}
	return 0;
}

static void run_single(uint64_t n, int k, uint64_t warm, uint64_t *calls)
{
	struct bench_loop l;
	uint64_t start;
	int i;

	bench_pin_self(bench_cpu_for_writer(0));
	bench_loop_wall(tp_write, NULL, warm, &l);
	*calls += warm;
	for (i = 0; i < k; i++) {
		start = bench_now_ns();
		bench_loop_wall(tp_write, NULL, n, &l);
		*calls += n;
		printf("single %d %llu %llu\n", i, (unsigned long long)l.ns,
		       (unsigned long long)n);
		if (i == 0)
			printf("start %llu\n", (unsigned long long)start);
	}
}

static void run_scale(uint64_t m, int k, char *list, uint64_t *calls)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct bench_scale s = {
			.fn = tp_write, .obj = scale_obj, .arg = NULL,
			.threads = atoi(tok), .per_thread = m,
		};
		int i;

		if (s.threads <= 0)
			continue;
		for (i = 0; i < k; i++) {
			bench_scale_run(&s);
			*calls += s.records;
			printf("scale %d %d %llu %llu %llu\n", s.threads, i,
			       (unsigned long long)s.cpu_ns,
			       (unsigned long long)s.records,
			       (unsigned long long)s.wall_ns);
		}
	}
}

int main(int argc, char **argv)
{
	uint64_t calls = 0, t0;
	int i;

	bench_cpus_init();
	if (!wait_enabled()) {
		printf("enabled 0\n");
		return 2;
	}
	printf("enabled 1\n");
	t0 = bench_now_ns();
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--single") == 0 && i + 3 < argc) {
			run_single(strtoull(argv[i + 1], NULL, 0),
				   atoi(argv[i + 2]),
				   strtoull(argv[i + 3], NULL, 0), &calls);
			i += 3;
		} else if (strcmp(argv[i], "--scale") == 0 && i + 3 < argc) {
			run_scale(strtoull(argv[i + 1], NULL, 0),
				  atoi(argv[i + 2]), argv[i + 3], &calls);
			i += 3;
		} else {
			fprintf(stderr, "grb_bench_lttng: bad argument %s\n",
				argv[i]);
			return 1;
		}
	}
	printf("calls %llu\nspan %llu\n", (unsigned long long)calls,
	       (unsigned long long)(bench_now_ns() - t0));
	return 0;
}
