/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/stress_util.h - what every stress program shares: the
 * command line (duration in seconds, optional seed), a seeded generator,
 * the clock and a sleep.  Header only: every .c file in this directory is
 * a test program of its own.
 *
 * Usage of a stress program: NAME [SECONDS [SEED]].  SECONDS defaults to 2;
 * SEED defaults to one taken from the clock and is always printed, so a
 * failing run can be repeated with the same decisions (the interleaving of
 * threads, of course, is not repeatable).
 */
#ifndef GRB_TESTS_STRESS_UTIL_H
#define GRB_TESTS_STRESS_UTIL_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct stress_args {
	double seconds;
	uint64_t seed;
};

static inline uint64_t stress_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void stress_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u),
			       (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Parse NAME [SECONDS [SEED]]; exits with a usage message on bad input. */
static inline void stress_parse(int argc, char **argv, struct stress_args *a)
{
	struct timespec ts;
	char *end;

	a->seconds = 2;
	if (argc > 1) {
		a->seconds = strtod(argv[1], &end);
		if (*end || !(a->seconds > 0) || a->seconds > 86400) {
			fprintf(stderr, "usage: %s [seconds [seed]]\n", argv[0]);
			exit(2);
		}
	}
	if (argc > 2) {
		a->seed = strtoull(argv[2], &end, 0);
		if (*end) {
			fprintf(stderr, "usage: %s [seconds [seed]]\n", argv[0]);
			exit(2);
		}
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		a->seed = ((uint64_t)ts.tv_sec * 1000000000u +
			   (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 40);
	}
	printf("%s: %.3g s, seed %" PRIu64 " (repeat: %s %g %" PRIu64 ")\n",
	       argv[0], a->seconds, a->seed, argv[0], a->seconds, a->seed);
	fflush(stdout);
}

/* splitmix64: turns any seed, 0 included, into a good generator state. */
static inline uint64_t stress_mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* xorshift64*; the state must not be 0 (stress_mix() of anything is
 * almost never 0, and the seeding below forces it). */
static inline uint64_t stress_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

static inline uint64_t stress_seed(uint64_t seed, uint64_t a, uint64_t b)
{
	return stress_mix(seed ^ stress_mix(a * 1000003u + b)) | 1;
}

/* Online CPUs, at least 1. */
static inline int stress_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (int)n;
}

#endif /* GRB_TESTS_STRESS_UTIL_H */
