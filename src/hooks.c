/* SPDX-License-Identifier: MIT */
/*
 * src/hooks.c - the race-injection hook a torture test installs.  Present
 * in every build so tests can link either library; called only from code
 * compiled with GRB_TEST_HOOKS.
 */
#include <stddef.h>

#include "grb/impl/hooks.h"

static grb_hook_fn hook_fn;
static void *hook_arg;

void grb_test_set_hook(grb_hook_fn fn, void *arg)
{
	hook_arg = arg;
	hook_fn = fn;
}

void grb__hook(enum grb_hook_point point)
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
		"discard-closed",
	};

	return (unsigned int)point < GRB_HOOK_COUNT ? names[point] : "?";
}
