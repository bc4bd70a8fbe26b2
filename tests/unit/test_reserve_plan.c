/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_reserve_plan.c - the reserve slow path's decision
 * (src/reserve_plan.h), a pure function, driven from a table of cases:
 * every branch (fits, exact fill, does not fit, opens at a boundary, fits
 * exactly after the header, too big, a size that wrapped, empty), at
 * small and huge positions.
 */
#include <stdio.h>

#include "check.h"
#include "../../src/reserve_plan.h"

#define SB 4096u
#define BIG (UINT64_C(1) << 62)

struct plan_case {
	const char *what;
	struct grb_plan_in in;          /* old, sb, hdr, data, here, open */
	struct grb_plan want;           /* verdict .. pad, as in the struct */
};

#define R GRB_PLAN_RESERVE
#define TB GRB_PLAN_TOO_BIG
#define E GRB_PLAN_EMPTY

/*
 * want: { verdict, old, close_old, open_new, exact_fill, open_at, begin,
 * end, pad }; fields of a refusal other than the verdict are not compared.
 */
static const struct plan_case cases[] = {
	{ "fits where it is",
	  { 100, SB, 64, 40, 50, 60 },
	  { R, 100, 0, 0, 0, 0, 100, 150, 0 } },
	{ "fills the sub-buffer exactly: closes it, no padding",
	  { 4000, SB, 64, 80, 96, 100 },
	  { R, 4000, 0, 0, 1, 0, 4000, 4096, 0 } },
	{ "one byte too many: closes here, opens the next after its header",
	  { 4000, SB, 64, 80, 97, 100 },
	  { R, 4000, 1, 1, 0, 4096, 4160, 4260, 96 } },
	{ "at a boundary: opens a sub-buffer, closes none",
	  { 4096, SB, 64, 80, 0, 100 },
	  { R, 4096, 0, 1, 0, 4096, 4160, 4260, 0 } },
	{ "exactly the room after the header",
	  { 8192, SB, 64, 4000, 0, 4032 },
	  { R, 8192, 0, 1, 1, 8192, 8256, 12288, 0 } },
	{ "one byte more than the room after the header",
	  { 8192, SB, 64, 4000, 0, 4033 },
	  { TB, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ "too big from inside an open sub-buffer",
	  { 100, SB, 64, 4000, 4040, 4040 },
	  { TB, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ "a data size that wraps the slot size to 0 is too big, not empty",
	  { 100, SB, 64, UINT64_MAX - 7, 0, 0 },
	  { TB, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ "a data size that wraps at a boundary",
	  { 0, SB, 64, UINT64_MAX - 7, 0, 0 },
	  { TB, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ "data size above the sub-buffer with small (wrapped) slot sizes",
	  { 100, SB, 0, SB + 1, 8, 8 },
	  { TB, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ "an empty slot where it is",
	  { 100, SB, 64, 0, 0, 0 },
	  { E, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ "an empty slot at a boundary",
	  { 4096, SB, 64, 0, 0, 0 },
	  { E, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ "no headers: a record of exactly a sub-buffer fits",
	  { 0, SB, 0, SB, 0, SB },
	  { R, 0, 0, 1, 1, 0, 0, 4096, 0 } },
	{ "no headers: a whole-sub-buffer record from inside one",
	  { 10, SB, 0, SB, SB, SB },
	  { R, 10, 1, 1, 1, 4096, 4096, 8192, 4086 } },
	{ "last byte of a sub-buffer left",
	  { 5 * SB + 4095, SB, 64, 1, 2, 2 },
	  { R, 5 * SB + 4095, 1, 1, 0, 6 * SB, 6 * SB + 64, 6 * SB + 66, 1 } },
	{ "far positions do not overflow",
	  { BIG + 10, SB, 64, 8, 10, 20 },
	  { R, BIG + 10, 0, 0, 0, 0, BIG + 10, BIG + 20, 0 } },
	{ "far positions, closing",
	  { BIG + 4090, SB, 64, 8, 10, 20 },
	  { R, BIG + 4090, 1, 1, 0, BIG + SB, BIG + SB + 64, BIG + SB + 84,
	    6 } },
};

static int check_case(const struct plan_case *c)
{
	struct grb_plan p;
	const struct grb_plan *w = &c->want;

	grb__reserve_plan(&c->in, &p);
	if (p.verdict != w->verdict)
		goto bad;
	if (p.verdict != GRB_PLAN_RESERVE)
		return 0;
	if (p.old != w->old || p.close_old != w->close_old ||
	    p.open_new != w->open_new || p.exact_fill != w->exact_fill ||
	    p.begin != w->begin || p.end != w->end || p.pad != w->pad ||
	    (p.open_new && p.open_at != w->open_at))
		goto bad;
	return 0;
bad:
	fprintf(stderr, "case \"%s\": got verdict %d close %d open %d exact %d open_at %llu [%llu, %llu) pad %llu\n",
		c->what, p.verdict, p.close_old, p.open_new, p.exact_fill,
		(unsigned long long)p.open_at, (unsigned long long)p.begin,
		(unsigned long long)p.end, (unsigned long long)p.pad);
	return 1;
}

int main(void)
{
	size_t i, n = sizeof(cases) / sizeof(cases[0]);
	int failed = 0;

	for (i = 0; i < n; i++)
		failed += check_case(&cases[i]);
	CHECK_EQ(failed, 0);
	printf("test_reserve_plan: %zu cases passed\n", n);
	return 0;
}
