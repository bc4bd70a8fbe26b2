/* SPDX-License-Identifier: MIT */
/*
 * tests/common/check.h - minimal assertion macros for grb's tests.  A
 * failed check prints where and why and exits non-zero, so ctest sees it.
 */
#ifndef GRB_TESTS_CHECK_H
#define GRB_TESTS_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond) do {                                                  \
	if (!(cond)) {                                                    \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n",              \
			__FILE__, __LINE__, #cond);                       \
		exit(1);                                                  \
	}                                                                 \
} while (0)

#define CHECK_EQ(a, b) do {                                               \
	long long check_a_ = (long long)(a), check_b_ = (long long)(b);   \
	if (check_a_ != check_b_) {                                       \
		fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s "       \
			"(%lld != %lld)\n", __FILE__, __LINE__, #a, #b,   \
			check_a_, check_b_);                              \
		exit(1);                                                  \
	}                                                                 \
} while (0)

#define CHECK_U64(a, b) do {                                              \
	uint64_t check_a_ = (uint64_t)(a), check_b_ = (uint64_t)(b);      \
	if (check_a_ != check_b_) {                                       \
		fprintf(stderr, "%s:%d: CHECK_U64 failed: %s == %s "      \
			"(%" PRIu64 " != %" PRIu64 ")\n", __FILE__,       \
			__LINE__, #a, #b, check_a_, check_b_);            \
		exit(1);                                                  \
	}                                                                 \
} while (0)

#endif /* GRB_TESTS_CHECK_H */
