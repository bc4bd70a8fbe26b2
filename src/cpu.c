/* SPDX-License-Identifier: MIT */
/*
 * src/cpu.c - per-thread state and the CPU topology grb reads.
 */
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "engine.h"
#include "grb/impl/thread.h"

GRB_THREAD_LOCAL struct grb_thread_state grb__tls GRB_TLS_MODEL;

void grb__nesting_exit_remote(struct grb_thread_state *owner)
{
	/*
	 * Relaxed: the count publishes nothing; it only lets the owner open
	 * another reservation (see grb__nesting_enter()).  The slot's bytes
	 * are published by the commit add, not by this.
	 */
	grb_fetch_add_relaxed(&owner->left_remote, 1);
}

int grb__cpu_slow(void)
{
	int cpu = sched_getcpu();

	/* No CPU number at all: every writer shares buffer 0. */
	return cpu < 0 ? 0 : cpu;
}

/*
 * The buffer index of a per-CPU channel with n buffers, for a thread whose
 * rseq area gave no usable CPU number (not registered, or a CPU beyond
 * those possible at creation: never trusted).
 */
unsigned int grb__cpu_index(unsigned int n)
{
	int cpu = grb_cpu_current();

	return (unsigned int)cpu < n ? (unsigned int)cpu : 0;
}

/*
 * Number of possible CPUs: one more than the highest CPU number in
 * /sys/devices/system/cpu/possible (e.g. "0-3" or "0,2-5"), so that every
 * CPU id the kernel can report indexes a buffer.
 */
int grb__possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	int max = -1, a, b, n;
	char sep;

	if (f) {
		for (;;) {
			n = fscanf(f, "%d", &a);
			if (n != 1)
				break;
			b = a;
			n = fscanf(f, "%c", &sep);
			if (n == 1 && sep == '-') {
				if (fscanf(f, "%d", &b) != 1)
					break;
				n = fscanf(f, "%c", &sep);
			}
			if (b > max)
				max = b;
			if (n != 1 || sep != ',')
				break;
		}
		fclose(f);
	}
	if (max + 1 < conf)
		max = (int)conf - 1;
	return max < 0 ? 1 : max + 1;
}
