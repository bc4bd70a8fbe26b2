/* SPDX-License-Identifier: MIT */
/*
 * tests/hooks/hooks.c - the race-injection hook and the CPU override of
 * the test-only grb_hooked library (see grb_test_hooks.h).
 */
#include <stddef.h>

#include "grb_test_hooks.h"

static grb_hook_fn hook_fn;
static void *hook_arg;

void grb_test_set_hook(grb_hook_fn fn, void *arg)
{
	hook_arg = arg;
	hook_fn = fn;
}

void grb_test_hook(enum grb_hook_point point)
{
	grb_hook_fn fn = hook_fn;

	if (fn)
		fn(point, hook_arg);
}

const char *grb_hook_name(enum grb_hook_point point)
{
	static const char *const names[GRB_HOOK_COUNT] = {
		"reserve-loaded", "reserve-done", "enter-pushed",
		"commit-before", "commit-after", "slow-checked", "end-old",
		"flush-loaded", "deliver-meta", "deliver-publish",
		"push-before-cas", "get-delivered", "get-swapped", "put-before",
		"discard-closed", "wait-checked", "live-checked",
		"journal-claimed", "deliver-counted", "discard-committing",
	};

	return (unsigned int)point < GRB_HOOK_COUNT ? names[point] : "?";
}

/* Process-wide: per-CPU channels' buffer count, or 0 for the real one. */
static int nr_cpus_override;

void grb_test_set_nr_cpus(int n)
{
	__atomic_store_n(&nr_cpus_override, n > 0 ? n : 0, __ATOMIC_RELAXED);
}

int grb_test_nr_cpus(int n)
{
	int o = __atomic_load_n(&nr_cpus_override, __ATOMIC_RELAXED);

	return o > 0 ? o : n;
}

/* Per thread: the CPU id to report instead of the real one, or -1. */
static _Thread_local int cpu_override = -1;

void grb_test_set_cpu(int cpu)
{
	cpu_override = cpu < 0 ? -1 : cpu;
}

int grb_test_cpu(int cpu)
{
	return cpu_override >= 0 ? cpu_override : cpu;
}
