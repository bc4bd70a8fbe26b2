/* SPDX-License-Identifier: MIT */
/*
 * tests/common/wpath.h - what the per-CPU write path's tests
 * (tests/unit/test_write_path*.c) share: the channels' geometry, the
 * name of each reason grb_channel_write_path() gives, and two CPUs this
 * thread may run on, to move it between them (with chan_rig.h's pin(),
 * and back to its whole mask with unpin()).  Header-only; the test
 * defines _GNU_SOURCE before any include (sched_getcpu(), cpu_set_t).
 */
#ifndef GRB_TESTS_WPATH_H
#define GRB_TESTS_WPATH_H

#include <sched.h>

#include "chan_rig.h"
#include "check.h"

#define SB 65536
#define NSB 8

static inline const char *reason_name(int r)
{
	static const char *const names[] = {
		"as asked", "no arch", "no rseq", "no membarrier", "shared",
		"env", "sanitizer",
	};

	return r >= 0 && r < 7 ? names[r] : "?";
}

/* The thread's mask as it started, and the first two CPUs in it. */
static cpu_set_t all_cpus;
static int allowed[2], nallowed;

static inline void read_allowed(void)
{
	int c;

	CHECK_EQ(sched_getaffinity(0, sizeof(all_cpus), &all_cpus), 0);
	for (c = 0; c < CPU_SETSIZE && nallowed < 2; c++)
		if (CPU_ISSET(c, &all_cpus))
			allowed[nallowed++] = c;
	CHECK(nallowed > 0);
}

/* Give the thread back the mask it started with. */
static inline void unpin(void)
{
	CHECK_EQ(sched_setaffinity(0, sizeof(all_cpus), &all_cpus), 0);
}

#endif /* GRB_TESTS_WPATH_H */
