/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_floor.c - the machine's floor: what a timestamped record
 * costs at the very least.
 *
 * Each floor function reads a clock (or does one locked compare-and-swap)
 * and stores 16 bytes, {timestamp, header, payload}, at the next slot of a
 * 1 MiB array, so it walks memory like a ring buffer writer.  No ring
 * buffer can stamp and store a record for less than its clock's floor.
 *
 * "percpu-mono" adds what any per-CPU buffer must do before it reads the
 * clock (the clock is read after the position, so that timestamps grow
 * with positions): the CPU number from the rseq area glibc registered,
 * that CPU's buffer through an array of pointers, its position; and after
 * the clock, the position moved on.  Four dependent loads and a plain
 * store, no check and no atomic: what the per-CPU target T6c (grb's
 * timestamped record at most 3 ns above the clock floor) leaves for
 * everything else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define FLOOR_HAVE_RSEQ 1
#endif

#include "bench.h"
#include "clock.h"
#include "report.h"
#include "util.h"

struct floor_rec {
	uint64_t ts;
	uint32_t hdr;
	uint32_t payload;
};

/* A per-CPU buffer's position, on a line of its own. */
struct floor_head {
	uint64_t pos;
	char pad[56];
};

#define FLOOR_MAX_HEADS 1024

struct floor_state {
	unsigned char *ring;
	size_t pos;
	uint64_t word;       /* the compare-and-swap target */
	struct floor_head *heads[FLOOR_MAX_HEADS];   /* per CPU */
	struct floor_head *head_mem;
};

/* The CPU number the kernel wrote into this thread's rseq area, or 0
 * (valgrind, no rseq): one load after __rseq_offset's, as grb's. */
BENCH_INLINE unsigned int floor_cpu(void)
{
#ifdef FLOOR_HAVE_RSEQ
	const struct rseq *rs = (const struct rseq *)(void *)
		((char *)__builtin_thread_pointer() + __rseq_offset);
	unsigned int cpu = __atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);

	return cpu < FLOOR_MAX_HEADS ? cpu : 0;
#else
	return 0;
#endif
}

BENCH_INLINE int floor_store(struct floor_state *st, uint64_t ts)
{
	struct floor_rec r = { ts, 1, 0 };

	memcpy(st->ring + st->pos, &r, sizeof(r));
	st->pos = (st->pos + sizeof(r)) & (BENCH_BUF_BYTES - 1);
	return 0;
}

/* Global: callgrind's --toggle-collect selects them by name. */
BENCH_NOINLINE int bench_floor_store(void *p);
BENCH_NOINLINE int bench_floor_mono(void *p);
BENCH_NOINLINE int bench_floor_rdtsc(void *p);
BENCH_NOINLINE int bench_floor_rdtscp(void *p);
BENCH_NOINLINE int bench_floor_cas(void *p);
BENCH_NOINLINE int bench_floor_percpu_mono(void *p);

BENCH_NOINLINE int bench_floor_store(void *p)
{
	struct floor_state *st = (struct floor_state *)p;

	return floor_store(st, st->pos);
}

BENCH_NOINLINE int bench_floor_mono(void *p)
{
	return floor_store((struct floor_state *)p, bench_clock_mono());
}

BENCH_NOINLINE int bench_floor_rdtsc(void *p)
{
	return floor_store((struct floor_state *)p, bench_rdtsc());
}

BENCH_NOINLINE int bench_floor_rdtscp(void *p)
{
	return floor_store((struct floor_state *)p, bench_rdtscp());
}

BENCH_NOINLINE int bench_floor_cas(void *p)
{
	struct floor_state *st = (struct floor_state *)p;
	uint64_t old = st->word;

	/* One uncontended lock cmpxchg, as a reservation does. */
	__atomic_compare_exchange_n(&st->word, &old, old + 1, 0,
				    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
	return floor_store(st, old);
}

BENCH_NOINLINE int bench_floor_percpu_mono(void *p)
{
	struct floor_state *st = (struct floor_state *)p;
	struct floor_head *h = st->heads[floor_cpu()];
	uint64_t x = __atomic_load_n(&h->pos, __ATOMIC_RELAXED);
	uint64_t ts = bench_clock_mono();

	__atomic_store_n(&h->pos, x + sizeof(struct floor_rec),
			 __ATOMIC_RELAXED);
	return floor_store(st, ts);
}

static const struct {
	const char *id;
	const char *desc;
	bench_write_fn fn;
	int tsc;
} floors[] = {
	{ "mono", "clock_gettime(MONOTONIC) + 16-byte store",
	  bench_floor_mono, 0 },
	{ "rdtsc", "rdtsc + 16-byte store", bench_floor_rdtsc, 1 },
	{ "rdtscp", "rdtscp + 16-byte store", bench_floor_rdtscp, 2 },
	{ "cas", "lock cmpxchg + 16-byte store", bench_floor_cas, 0 },
	{ "store", "16-byte store alone", bench_floor_store, 0 },
	{ "percpu-mono", "rseq CPU id, its buffer's position, "
	  "clock_gettime(MONOTONIC), position store + 16-byte store",
	  bench_floor_percpu_mono, 0 },
};

#define NR_FLOORS (sizeof(floors) / sizeof(floors[0]))

static void floor_init(struct floor_state *st)
{
	size_t i;

	st->ring = (unsigned char *)calloc(1, BENCH_BUF_BYTES);
	if (!st->ring) {
		fprintf(stderr, "grb_bench: out of memory\n");
		exit(1);
	}
	st->pos = 0;
	st->word = 0;
	st->head_mem = (struct floor_head *)calloc(FLOOR_MAX_HEADS,
						    sizeof(*st->head_mem));
	if (!st->head_mem) {
		fprintf(stderr, "grb_bench: out of memory\n");
		exit(1);
	}
	for (i = 0; i < FLOOR_MAX_HEADS; i++)
		st->heads[i] = &st->head_mem[i];
}

static void floor_fini(struct floor_state *st)
{
	free(st->ring);
	free(st->head_mem);
}

void bench_floor_run(const struct bench_opts *o)
{
	struct floor_state st;
	size_t i;
	int k;

	floor_init(&st);
	for (i = 0; i < NR_FLOORS; i++) {
		struct bench_loop l;
		struct bench_stat s;
		struct bench_row *row;
		double ns[64];

		/* tsc: 1 reads rdtsc, 2 rdtscp (bench/clock.h). */
		if ((floors[i].tsc && !BENCH_HAVE_TSC) ||
		    (floors[i].tsc == 2 && !bench_have_tsc()))
			continue;
		bench_loop_wall(floors[i].fn, &st, o->n_warm, &l);
		for (k = 0; k < o->runs; k++) {
			bench_loop_wall(floors[i].fn, &st, o->n_single, &l);
			ns[k] = (double)l.ns / (double)o->n_single;
		}
		bench_stat_of(ns, o->runs, &s);
		row = report_add("floor/%s", floors[i].id);
		snprintf(row->section, sizeof(row->section), "floor");
		snprintf(row->system, sizeof(row->system), "floor");
		snprintf(row->name, sizeof(row->name), "ns_per_record");
		snprintf(row->unit, sizeof(row->unit), "ns/record");
		snprintf(row->config, sizeof(row->config), "%s",
			 floors[i].desc);
		snprintf(row->note, sizeof(row->note),
			 "1 MiB array written in sequence");
		row->payload = BENCH_PAYLOAD;
		row->threads = 1;
		report_set(row, &s);
	}
	floor_fini(&st);
}

int bench_floor_one(const char *what, uint64_t n)
{
	struct floor_state st;
	struct bench_loop l;
	size_t i;

	for (i = 0; i < NR_FLOORS; i++) {
		if (strncmp(what, "floor-", 6) != 0 ||
		    strcmp(what + 6, floors[i].id) != 0)
			continue;
		floor_init(&st);
		bench_pin_self(bench_cpu_for_writer(0));
		bench_loop_wall(floors[i].fn, &st, n, &l);
		floor_fini(&st);
		printf("%s: %llu records\n", what, (unsigned long long)n);
		return 0;
	}
	return -EINVAL;
}
