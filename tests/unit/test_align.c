/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_align.c - every helper of grb/align.h at its boundaries.
 *
 * Expected values are computed with division and remainder rather than
 * with masks, so that a test does not repeat the formula it checks.  The
 * alignments are every power of two from 1 to 4096 (the page sizes a
 * record layout meets) and 2^63, the largest a uint64_t can hold.
 */
#include <signal.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/align.h"

#define TOP_BIT (UINT64_C(1) << 63)

/* Every alignment the value tests use: 2^0 .. 2^12, then 2^63. */
static const uint64_t aligns[] = {
	1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, TOP_BIT,
};
#define NALIGNS (sizeof(aligns) / sizeof(aligns[0]))

/* Round up modulo 2^64, the way the contract of grb_align() states it. */
static uint64_t ref_align(uint64_t v, uint64_t a)
{
	uint64_t r = v % a;

	return r ? v - r + a : v;
}

static uint64_t ref_floor(uint64_t v, uint64_t a)
{
	return v - v % a;
}

/* Check the three value helpers on one (value, alignment) pair. */
static void check_value(uint64_t v, uint64_t a)
{
	CHECK_U64(grb_align(v, a), ref_align(v, a));
	CHECK_U64(grb_align_floor(v, a), ref_floor(v, a));
	CHECK_EQ(grb_is_aligned(v, a), v % a == 0);
	/* Both roundings land on the alignment, and floor never passes v. */
	CHECK_EQ(grb_is_aligned(grb_align(v, a), a), 1);
	CHECK_EQ(grb_is_aligned(grb_align_floor(v, a), a), 1);
	CHECK(grb_align_floor(v, a) <= v);
}

static void test_values(void)
{
	unsigned int i;
	uint64_t a, k;

	for (i = 0; i < NALIGNS; i++) {
		a = aligns[i];
		check_value(0, a);
		check_value(a - 1, a);
		check_value(a, a);
		check_value(a + 1, a);
		check_value(2 * a - 1, a);      /* 2^64 - 1 when a is 2^63 */
		/* The top of the range: the last multiple of a is exact. */
		check_value(UINT64_MAX - (a - 1), a);
		for (k = 0; k < 3 && k < a; k++)
			check_value(UINT64_MAX - k, a);
	}

	/* Spot values, written out so that a broken reference shows too. */
	CHECK_U64(grb_align(0, 4096), 0);
	CHECK_U64(grb_align(1, 4096), 4096);
	CHECK_U64(grb_align(4095, 4096), 4096);
	CHECK_U64(grb_align(4096, 4096), 4096);
	CHECK_U64(grb_align(4097, 4096), 8192);
	CHECK_U64(grb_align(8191, 4096), 8192);
	CHECK_U64(grb_align(7, 1), 7);
	CHECK_U64(grb_align_floor(8191, 4096), 4096);
	CHECK_U64(grb_align_floor(4095, 4096), 0);
	CHECK_U64(grb_align(TOP_BIT - 1, TOP_BIT), TOP_BIT);
	CHECK_U64(grb_align(TOP_BIT, TOP_BIT), TOP_BIT);
	CHECK_U64(grb_align_floor(UINT64_MAX, TOP_BIT), TOP_BIT);
	CHECK_U64(grb_align_floor(TOP_BIT - 1, TOP_BIT), 0);
	CHECK_EQ(grb_is_aligned(TOP_BIT, TOP_BIT), 1);
	CHECK_EQ(grb_is_aligned(TOP_BIT + 4096, TOP_BIT), 0);

	/*
	 * The documented wrap: a value within a - 1 of UINT64_MAX has no
	 * multiple of a above it in 64 bits, so grb_align() returns 0, as
	 * unsigned arithmetic does.  Callers round sizes and positions that
	 * are far below 2^64, so the wrap is a documented edge, not a use.
	 */
	CHECK_U64(grb_align(UINT64_MAX, 2), 0);
	CHECK_U64(grb_align(UINT64_MAX, 4096), 0);
	CHECK_U64(grb_align(UINT64_MAX - 4094, 4096), 0);
	CHECK_U64(grb_align(UINT64_MAX - 4095, 4096), UINT64_MAX - 4095);
	CHECK_U64(grb_align(TOP_BIT + 1, TOP_BIT), 0);
	CHECK_U64(grb_align(UINT64_MAX, TOP_BIT), 0);
	/* Alignment 1 never rounds, so it never wraps. */
	CHECK_U64(grb_align(UINT64_MAX, 1), UINT64_MAX);
}

/* Offsets are size_t: the 2^63 cases need a 64-bit size_t. */
static void check_offset(size_t drift, size_t a)
{
	size_t up = grb_offset_align(drift, a);
	size_t down = grb_offset_align_floor(drift, a);

	CHECK_U64(up, (a - drift % a) % a);
	CHECK_U64(down, drift % a);
	/* The defining properties, stated as the header states them. */
	CHECK(up < a);
	CHECK(down < a);
	CHECK_U64((drift + up) % a, 0);
	CHECK_U64((drift - down) % a, 0);
	/* Exactly one of them is zero, or both when already aligned. */
	CHECK_EQ(up == 0, down == 0);
	if (up)
		CHECK_U64(up + down, a);
}

static void test_offsets(void)
{
	unsigned int i;
	size_t a, d;

	/* Every drift from 0 to 2a for every page-range alignment. */
	for (i = 0; i < NALIGNS && aligns[i] <= 4096; i++) {
		a = (size_t)aligns[i];
		for (d = 0; d <= 2 * a; d++)
			check_offset(d, a);
	}
	CHECK_U64(grb_offset_align(0, 8), 0);
	CHECK_U64(grb_offset_align(1, 8), 7);
	CHECK_U64(grb_offset_align(7, 8), 1);
	CHECK_U64(grb_offset_align(8, 8), 0);
	CHECK_U64(grb_offset_align(9, 8), 7);
	CHECK_U64(grb_offset_align_floor(9, 8), 1);
	CHECK_U64(grb_offset_align_floor(15, 8), 7);
	CHECK_U64(grb_offset_align(4097, 4096), 4095);

	if (sizeof(size_t) >= sizeof(uint64_t)) {
		a = (size_t)TOP_BIT;
		check_offset(0, a);
		check_offset(1, a);
		check_offset(a - 1, a);
		check_offset(a, a);
		check_offset(a + 1, a);
		check_offset(SIZE_MAX, a);      /* 2a - 1 */
		CHECK_U64(grb_offset_align(1, a), a - 1);
		CHECK_U64(grb_offset_align(a + 1, a), a - 1);
		CHECK_U64(grb_offset_align_floor(SIZE_MAX, a), a - 1);
	}
}

/* An arena whose start is aligned beyond every alignment tested below. */
static alignas(8192) unsigned char arena[4 * 8192];

static void test_pointers(void)
{
	const unsigned char *p;
	unsigned int i;
	size_t a, k, up, down;

	CHECK_EQ(grb_ptr_is_aligned(arena, 8192), 1);
	for (i = 0; i < NALIGNS && aligns[i] <= 4096; i++) {
		a = (size_t)aligns[i];
		/* Start one alignment in, so floor never leaves the arena. */
		for (k = 0; k <= 2 * a; k++) {
			p = arena + a + k;
			up = (a - k % a) % a;
			down = k % a;
			CHECK(grb_ptr_align(p, a) ==
			      (void *)(arena + a + k + up));
			CHECK(grb_ptr_align_floor(p, a) ==
			      (void *)(arena + a + k - down));
			CHECK_EQ(grb_ptr_is_aligned(p, a), down == 0);
		}
	}
	/* NULL is aligned on everything and rounds to itself. */
	CHECK(grb_ptr_align(NULL, 4096) == NULL);
	CHECK(grb_ptr_align_floor(NULL, 4096) == NULL);
	CHECK_EQ(grb_ptr_is_aligned(NULL, 4096), 1);

	/* A user-space address is below 2^63, so it floors to NULL and
	 * rounds up to 2^63 itself. */
	if (sizeof(uintptr_t) >= sizeof(uint64_t)) {
		a = (size_t)TOP_BIT;
		CHECK(grb_ptr_align_floor(arena + 1, a) == NULL);
		CHECK_U64((uintptr_t)grb_ptr_align(arena + 1, a), TOP_BIT);
		CHECK_EQ(grb_ptr_is_aligned(arena + 1, a), 0);
	}
}

static void test_pow2(void)
{
	unsigned int k;

	CHECK_EQ(grb_is_pow2(0), 0);
	CHECK_EQ(grb_is_pow2(1), 1);
	CHECK_EQ(grb_is_pow2(2), 1);
	CHECK_EQ(grb_is_pow2(3), 0);
	CHECK_EQ(grb_is_pow2(6), 0);
	CHECK_EQ(grb_is_pow2(TOP_BIT), 1);
	CHECK_EQ(grb_is_pow2(TOP_BIT + 1), 0);
	CHECK_EQ(grb_is_pow2(UINT64_MAX), 0);
	for (k = 0; k < 64; k++) {
		CHECK_EQ(grb_is_pow2(UINT64_C(1) << k), 1);
		if (k >= 2)
			CHECK_EQ(grb_is_pow2((UINT64_C(1) << k) - 1), 0);
		if (k >= 1)
			CHECK_EQ(grb_is_pow2((UINT64_C(1) << k) + 1), 0);
	}
}

struct align16 {
	alignas(16) unsigned char b[16];
};

struct mixed {
	char c;
	uint32_t u;
};

/*
 * GRB_OBJECT_ALIGN takes its alignment from the pointed-to type.  The
 * pointers below are built from a byte offset on purpose: they are what a
 * writer holds before it aligns them, and they are never dereferenced.
 */
#define CHECK_OBJECT_ALIGN(type) do {                                       \
	size_t al_ = alignof(type), k_;                                     \
	for (k_ = 0; k_ <= 2 * al_; k_++) {                                 \
		type *p_ = (type *)(void *)(arena + 64 + k_);               \
		size_t up_ = (al_ - k_ % al_) % al_;                        \
		CHECK(GRB_OBJECT_ALIGN(p_) ==                               \
		      (void *)(arena + 64 + k_ + up_));                     \
		CHECK(GRB_OBJECT_ALIGN_FLOOR(p_) ==                         \
		      (void *)(arena + 64 + k_ - k_ % al_));                \
	}                                                                   \
} while (0)

static void test_object_align(void)
{
	CHECK_EQ(GRB_ALIGNOF(uint8_t), 1);
	CHECK_EQ(GRB_ALIGNOF(struct align16), 16);
	CHECK_EQ(GRB_ALIGNOF(struct mixed), alignof(uint32_t));
	CHECK_OBJECT_ALIGN(uint8_t);
	CHECK_OBJECT_ALIGN(uint16_t);
	CHECK_OBJECT_ALIGN(uint32_t);
	CHECK_OBJECT_ALIGN(uint64_t);
	CHECK_OBJECT_ALIGN(double);
	CHECK_OBJECT_ALIGN(struct mixed);
	CHECK_OBJECT_ALIGN(struct align16);
	/* A const pointee keeps its alignment. */
	CHECK_OBJECT_ALIGN(const uint64_t);
}

#ifndef NDEBUG
/*
 * The alignment precondition is checked by assert() in debug builds: a
 * zero or non-power-of-two alignment must abort rather than return a
 * wrong rounding.  Each case runs in a child so the abort is observed.
 */
static void expect_abort(uint64_t a, int which)
{
	struct rlimit no_core = { 0, 0 };
	volatile uint64_t sink;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		setrlimit(RLIMIT_CORE, &no_core);
		/* The assert message is expected; keep the log readable. */
		if (!freopen("/dev/null", "w", stderr))
			_exit(3);
		switch (which) {
		case 0: sink = grb_align(5, a); break;
		case 1: sink = grb_align_floor(5, a); break;
		case 2: sink = (uint64_t)grb_is_aligned(5, a); break;
		case 3: sink = grb_offset_align(5, (size_t)a); break;
		default: sink = grb_offset_align_floor(5, (size_t)a); break;
		}
		(void)sink;
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGABRT);
}

static void test_preconditions(void)
{
	int which;

	for (which = 0; which < 5; which++) {
		expect_abort(0, which);
		expect_abort(3, which);
		expect_abort(UINT64_MAX, which);
	}
}
#endif

int main(void)
{
	test_values();
	test_offsets();
	test_pointers();
	test_pow2();
	test_object_align();
#ifndef NDEBUG
	test_preconditions();
#endif
	printf("test_align: passed\n");
	return 0;
}
