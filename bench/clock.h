/* SPDX-License-Identifier: MIT */
/*
 * bench/clock.h - the clocks a record can be stamped with.
 *
 * bench_clock_mono() is the default clock of every system in the
 * benchmark: CLOCK_MONOTONIC through the vDSO, the clock LTTng-UST and
 * grb's basic client use.  The TSC reads exist for the floor and for one
 * grb variant; rdtscp waits for earlier instructions, so it is ordered
 * after the position load as grb/config.h requires of clock_read, which a
 * bare rdtsc is not.
 */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "machine.h"

static inline uint64_t bench_clock_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>

#define BENCH_HAVE_TSC 1

static inline uint64_t bench_rdtsc(void)
{
	return __rdtsc();
}

static inline uint64_t bench_rdtscp(void)
{
	unsigned int aux;

	return __rdtscp(&aux);
}
#else
#define BENCH_HAVE_TSC 0

/* Not called: the TSC rows are skipped on other architectures. */
static inline uint64_t bench_rdtsc(void)
{
	return bench_clock_mono();
}

static inline uint64_t bench_rdtscp(void)
{
	return bench_clock_mono();
}
#endif

/*
 * Can the TSC rows run?  x86 whose flags in /proc/cpuinfo say rdtscp:
 * some virtual machines run rdtscp without reporting it, and valgrind
 * (section 4) then stops the program with SIGILL, so the rows are
 * skipped, as the CTF client refuses its TSC clock there.
 */
static inline int bench_have_tsc(void)
{
	return BENCH_HAVE_TSC && bench_cpu_flag("rdtscp");
}

#endif /* BENCH_CLOCK_H */
