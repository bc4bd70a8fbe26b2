/* SPDX-License-Identifier: MIT */
/*
 * clients/ctf/ctf_clock.c - the trace clocks and their CTF clock class:
 * frequency, and the offset from the clock's zero to the Epoch that lets
 * a reader print wall-clock times.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctf_internal.h"

static uint64_t ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t grb__ctf_clock_mono(void)
{
	return ns_of(CLOCK_MONOTONIC);
}

#if defined(__x86_64__)
/*
 * rdtscp waits for the instructions before it (the load of the write
 * position); the lfence after it keeps the reservation's compare-and-swap
 * from starting before the counter is read (grb/config.h, clock_read).
 */
uint64_t grb__ctf_clock_tsc(void)
{
	uint32_t lo, hi, aux;

	__asm__ __volatile__("rdtscp\n\tlfence"
			     : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

/* Is @flag a whole word of /proc/cpuinfo's flags line @line? */
static int has_flag(const char *line, const char *flag)
{
	size_t n = strlen(flag);
	const char *p = line;

	while ((p = strstr(p, flag)) != NULL) {
		if (p > line && p[-1] == ' ' &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

/*
 * What Linux says of the CPU: rdtscp, and a TSC that neither changes
 * rate nor stops.  Linux's flags, not CPUID: some virtual machines run
 * rdtscp without reporting it, and valgrind's CPUID reports it whether
 * or not the CPU underneath has it, then stops the program with SIGILL
 * when it is not reported there.
 */
static int tsc_invariant(void)
{
	char line[8192];
	int ok = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		ok = has_flag(line, "rdtscp") &&
			has_flag(line, "constant_tsc") &&
			has_flag(line, "nonstop_tsc");
		break;
	}
	fclose(f);
	return ok;
}
#else
uint64_t grb__ctf_clock_tsc(void)
{
	return 0;
}

static int tsc_invariant(void)
{
	return 0;
}
#endif

/* The Epoch time at clock value 0, as offset_s + offset / freq. */
static void set_offset(struct grb_ctf *t, uint64_t real_ns, uint64_t clk)
{
	/* Clock value clk was read at real_ns: zero was at real_ns -
	 * clk / freq seconds.  Work in (seconds, cycles below a second). */
	__int128 cycles = (__int128)real_ns * t->clock_freq / 1000000000 -
		(__int128)clk;
	__int128 s = cycles / (__int128)t->clock_freq;
	__int128 c = cycles % (__int128)t->clock_freq;

	if (c < 0) {
		c += t->clock_freq;
		s--;
	}
	t->clock_offset_s = (int64_t)s;
	t->clock_offset = (uint64_t)c;
}

/*
 * A value of @clk and the time of clock @ref it was read at: the middle
 * of the narrowest of a few brackets of @ref reads.  A bracket that a
 * preemption or an interrupt widened is left out, so it cannot skew the
 * offset (or the TSC's frequency) by half its width.
 */
static void read_at(uint64_t (*clk)(void), clockid_t ref, uint64_t *at,
		    uint64_t *value)
{
	uint64_t best = UINT64_MAX;

	/* The first bracket is always taken (best starts above any width):
	 * set here too, so that no path leaves the outputs unset. */
	*at = 0;
	*value = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t r0 = ns_of(ref);
		uint64_t v = clk();
		uint64_t r1 = ns_of(ref);

		if (i == 0 || r1 - r0 < best) {
			best = r1 - r0;
			*at = r0 + (r1 - r0) / 2;
			*value = v;
		}
	}
}

int grb__ctf_clock_calibrate(struct grb_ctf *t)
{
	uint64_t real, c, m0, m1, c0, c1;
	struct timespec pause = { 0, 50 * 1000 * 1000 };

	if (t->clock == GRB_CTF_CLOCK_MONOTONIC) {
		t->clock_freq = 1000000000u;
		read_at(grb__ctf_clock_mono, CLOCK_REALTIME, &real, &c);
		set_offset(t, real, c);
		return 0;
	}
	if (!tsc_invariant())
		return -ENOTSUP;
	read_at(grb__ctf_clock_tsc, CLOCK_MONOTONIC, &m0, &c0);
	nanosleep(&pause, NULL);
	read_at(grb__ctf_clock_tsc, CLOCK_MONOTONIC, &m1, &c1);
	if (m1 <= m0 || c1 <= c0)
		return -ENOTSUP;
	t->clock_freq = (uint64_t)((__int128)(c1 - c0) * 1000000000 /
				   (m1 - m0));
	if (!t->clock_freq)
		return -ENOTSUP;
	read_at(grb__ctf_clock_tsc, CLOCK_REALTIME, &real, &c);
	set_offset(t, real, c);
	return 0;
}
