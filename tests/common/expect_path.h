/* SPDX-License-Identifier: MIT */
/*
 * tests/common/expect_path.h - which write path a per-CPU channel with
 * GRB_CONFIG_SYNC_PER_CPU should take in this environment, worked out
 * apart from the library (docs/design.md section 25.5), so that tests can
 * check what grb_channel_write_path() reports and run the path-specific
 * checks only where the path is there.  Header-only: the sanitizer
 * check must see the flags the test itself is compiled with, the same
 * as the library's.
 */
#ifndef GRB_TESTS_EXPECT_PATH_H
#define GRB_TESTS_EXPECT_PATH_H

#include <linux/membarrier.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "grb/channel.h"

#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define TEST_HAVE_RSEQ 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif

/* GRB_SYNC=atomic in the environment (any other value is ignored). */
static inline int test_env_atomic(void)
{
	const char *e = getenv("GRB_SYNC");

	return e && strcmp(e, "atomic") == 0;
}

/* glibc registered rseq for this thread and the kernel fills cpu_id. */
static inline int test_rseq_registered(void)
{
#ifdef TEST_HAVE_RSEQ
	const struct rseq *rs = (const struct rseq *)(void *)
		((char *)__builtin_thread_pointer() + __rseq_offset);

	return __rseq_size >= 16 &&
		(int32_t)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED) >= 0;
#else
	return 0;
#endif
}

/* The kernel has membarrier's rseq command. */
static inline int test_membarrier_rseq(void)
{
	long r = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	return r > 0 && (r & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ);
}

/*
 * Why a channel of a per-CPU configuration with GRB_CONFIG_SYNC_PER_CPU,
 * created now by this thread, takes the path it takes; @shared: in
 * shared memory or with GRB_CONFIG_SHARED.  GRB_PATH_AS_ASKED means
 * the per-CPU path.
 */
static inline enum grb_path_reason test_expected_reason(int shared)
{
#if !defined(__x86_64__) || !defined(TEST_HAVE_RSEQ)
	(void)shared;
	return GRB_PATH_NO_ARCH;
#else
#ifdef TEST_TSAN
	return GRB_PATH_SANITIZER;
#endif
	if (test_env_atomic())
		return GRB_PATH_ENV;
	if (shared)
		return GRB_PATH_SHARED;
	if (!test_rseq_registered())
		return GRB_PATH_NO_RSEQ;
	if (!test_membarrier_rseq())
		return GRB_PATH_NO_MEMBARRIER;
	return GRB_PATH_AS_ASKED;
#endif
}

/*
 * Create a channel of @cfg with @attr, under GRB_SYNC=atomic when
 * @force_atomic (the variable is restored afterwards), and check the
 * path it reports: test_expected_reason() for a configuration with
 * GRB_CONFIG_SYNC_PER_CPU, GRB_PATH_AS_ASKED for any other.
 * Return: 1 when the channel took the per-CPU path, 0 otherwise.
 */
static inline int test_create_checked(const struct grb_config *cfg,
				      const struct grb_channel_attr *attr,
				      int force_atomic,
				      struct grb_channel **chan)
{
	const char *orig = getenv("GRB_SYNC");
	char *saved = orig ? strdup(orig) : NULL;
	enum grb_path_reason why = (enum grb_path_reason)-1, want;
	int sync = (cfg->flags & GRB_CONFIG_SYNC_PER_CPU) != 0, rseq;

	CHECK(!orig || saved);
	if (force_atomic)
		CHECK_EQ(setenv("GRB_SYNC", "atomic", 1), 0);
	want = sync ? test_expected_reason(0) : GRB_PATH_AS_ASKED;
	CHECK_EQ(grb_channel_create(cfg, attr, chan), 0);
	if (force_atomic) {
		if (saved)
			CHECK_EQ(setenv("GRB_SYNC", saved, 1), 0);
		else
			CHECK_EQ(unsetenv("GRB_SYNC"), 0);
	}
	free(saved);
	rseq = grb_channel_write_path(*chan, &why) == GRB_WRITE_RSEQ;
	CHECK_EQ(why, want);
	CHECK_EQ(rseq, sync && want == GRB_PATH_AS_ASKED);
	return rseq;
}

#endif /* GRB_TESTS_EXPECT_PATH_H */
