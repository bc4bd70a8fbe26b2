/* SPDX-License-Identifier: MIT */
/*
 * tests/common/basic_rig.h - what the basic client's tests
 * (tests/func/test_basic*.c) share: the eight variants (per-CPU or
 * per-channel buffers, overwrite or discard mode, timestamp compression
 * off or on) and a client of each, the thread pinned to the CPU it runs
 * on so that its records land in one known buffer, and a buffer's counts
 * with the identity every quiescent buffer satisfies.  Header-only; the
 * test defines _GNU_SOURCE before any include (sched_getcpu(),
 * cpu_set_t).
 */
#ifndef GRB_TESTS_BASIC_RIG_H
#define GRB_TESTS_BASIC_RIG_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "check.h"
#include "grb/basic.h"

/* Variant bits: index = alloc * 4 + mode * 2 + compress. */
#define V_PER_CHANNEL 4
#define V_DISCARD     2
#define V_COMPRESS    1
#define V_COUNT       8

#define PAGE          4096
#define HDR           sizeof(struct grb_basic_subbuf_header)

/* The affinity mask the process started with: main() reads it. */
static cpu_set_t orig_mask;

static inline const char *variant_name(int v)
{
	static const char *names[V_COUNT] = {
		"per-cpu/overwrite", "per-cpu/overwrite/compressed",
		"per-cpu/discard", "per-cpu/discard/compressed",
		"per-channel/overwrite", "per-channel/overwrite/compressed",
		"per-channel/discard", "per-channel/discard/compressed",
	};
	return names[v];
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline struct grb_basic *make(int v, size_t subbuf_size,
				     size_t num_subbuf)
{
	struct grb_basic_attr attr = {
		.name = variant_name(v),
		.subbuf_size = subbuf_size,
		.num_subbuf = num_subbuf,
		.alloc = (v & V_PER_CHANNEL) ? GRB_ALLOC_PER_CHANNEL :
			GRB_ALLOC_PER_CPU,
		.mode = (v & V_DISCARD) ? GRB_MODE_DISCARD : GRB_MODE_OVERWRITE,
		.compress_timestamps = v & V_COMPRESS,
	};
	struct grb_basic *b = NULL;

	CHECK_EQ(grb_basic_create(&attr, &b), 0);
	CHECK(b != NULL);
	return b;
}

/* Keep the calling thread on the CPU it runs on, so its records land in
 * one buffer; unpin() gives back the mask the process started with. */
static inline void pin(void)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	CHECK(cpu >= 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
}

static inline void unpin(void)
{
	CHECK_EQ(sched_setaffinity(0, sizeof(orig_mask), &orig_mask), 0);
}

/* The buffer a pinned thread writes to, chosen as the engine does. */
static inline unsigned int home(struct grb_basic *b, int v)
{
	unsigned int cpu;

	if (v & V_PER_CHANNEL)
		return 0;
	cpu = (unsigned int)sched_getcpu();
	return cpu < grb_basic_nr_bufs(b) ? cpu : 0;
}

static inline int buf_cpu(int v, unsigned int i)
{
	return (v & V_PER_CHANNEL) ? -1 : (int)i;
}

static inline struct grb_basic_counts counts(struct grb_basic *b,
					     unsigned int i)
{
	struct grb_basic_counts c;

	CHECK_EQ(grb_basic_get_counts(b, i, &c), 0);
	/* The identity every snapshot of a quiescent buffer satisfies. */
	CHECK_U64(c.written, c.consumed + c.overruns + c.dropped + c.entries);
	return c;
}

/*
 * Run each of the @n @tests, in order, on every variant, with the thread
 * pinned (pin()) for each variant and given back its mask after; reads
 * the mask the process started with first.
 */
static inline void run_pinned(void (*const *tests)(int), size_t n)
{
	size_t k;
	int v;

	CHECK_EQ(sched_getaffinity(0, sizeof(orig_mask), &orig_mask), 0);
	for (v = 0; v < V_COUNT; v++) {
		pin();
		for (k = 0; k < n; k++)
			tests[k](v);
		unpin();
	}
}

#endif /* GRB_TESTS_BASIC_RIG_H */
