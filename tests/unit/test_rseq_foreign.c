/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_rseq_foreign.c - a process whose rseq registration
 * belongs to another library, not to glibc (issue 12's fallbacks;
 * docs/design.md section 25.5).  glibc's own is turned off with
 * GLIBC_TUNABLES=glibc.pthread.rseq=0 (the test executes itself again
 * with it when it was not set), and the test, standing for the other
 * library, registers an area of its own with the rseq system call on each
 * writing thread.
 *
 * A per-CPU channel of a configuration that asks for the per-CPU path
 * must then take the atomic one and say why (GRB_PATH_NO_RSEQ, unless an
 * earlier reason applies: ThreadSanitizer, GRB_SYNC=atomic); two threads,
 * each moved over the CPUs it may use, write records that are all read
 * back, with every counter agreeing; and the other library's areas are
 * left alone: grb never stores into them (rseq_cs stays 0) and the kernel
 * keeps them current (cpu_id is the thread's CPU after every batch).
 *
 * Skipped (77) where the kernel refuses the registration (no rseq, or a
 * seccomp filter) or glibc ignores the tunable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "expect_path.h"
#include "grb/grb.h"
#include "tclient.h"
#include "wpath.h"

#if defined(__x86_64__) && defined(TEST_HAVE_RSEQ) && defined(__NR_rseq) && \
	defined(RSEQ_SIG)

#define TUNABLE "glibc.pthread.rseq=0"
#define NWRITERS 2
/* Small enough that 2 x 2 x 1000 records of at most ~100 bytes fit one
 * CPU's 512 KiB without a reader: nothing may be refused. */
#define PER_CPU_BATCH 1000
#define PER_WRITER (2 * PER_CPU_BATCH)

/* The other library's area: one per thread, 32-byte aligned as the
 * kernel requires, never glibc's. */
static __thread struct rseq foreign __attribute__((aligned(32)));

static int foreign_register(void)
{
	memset(&foreign, 0, sizeof(foreign));
	foreign.cpu_id = (uint32_t)RSEQ_CPU_ID_UNINITIALIZED;
	return (int)syscall(__NR_rseq, &foreign, sizeof(foreign), 0, RSEQ_SIG);
}

static void foreign_unregister(void)
{
	CHECK_EQ(syscall(__NR_rseq, &foreign, sizeof(foreign),
			 RSEQ_FLAG_UNREGISTER, RSEQ_SIG), 0);
}

/* The area as the kernel keeps it: this thread's CPU, and no critical
 * section that anyone but its owner could have named. */
static void foreign_check(void)
{
	CHECK_EQ((int32_t)__atomic_load_n(&foreign.cpu_id, __ATOMIC_RELAXED),
		 sched_getcpu());
	CHECK_U64(__atomic_load_n(&foreign.rseq_cs, __ATOMIC_RELAXED), 0);
}

struct warg {
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct tc_checker *tc;
	uint32_t id;
	uint64_t refused;
};

static void *writer(void *p)
{
	struct warg *w = (struct warg *)p;
	uint32_t seq = 0;
	int i, k;
	cpu_set_t one;

	CHECK_EQ(foreign_register(), 0);
	for (i = 0; i < 2; i++) {
		CPU_ZERO(&one);
		CPU_SET(allowed[i % nallowed], &one);
		CHECK_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
		for (k = 0; k < PER_CPU_BATCH; k++, seq++) {
			if (tc_write(w->cfg, w->chan, w->id, seq,
				     (seq * 5) % 60) == 0)
				tc_mark_reserved(w->tc, w->id, seq);
			else
				w->refused++;
		}
		foreign_check();
	}
	foreign_unregister();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *tun = getenv("GLIBC_TUNABLES");
	const struct grb_config *cfg = tc_config(TV_DISCARD);
	struct grb_channel_attr attr = { "rseq_foreign", SB, NSB, NULL };
	enum grb_path_reason why = (enum grb_path_reason)-1, want;
	struct grb_channel *chan = NULL;
	struct warg args[NWRITERS];
	pthread_t tids[NWRITERS];
	struct grb_buf_stats st;
	struct tc_checker tc;
	uint64_t refused = 0;
	int i, r;

	(void)argc;
	if (!tun || !strstr(tun, TUNABLE)) {
		if (setenv("GLIBC_TUNABLES", TUNABLE, 1) != 0)
			return 1;
		execv("/proc/self/exe", argv);
		fprintf(stderr, "test_rseq_foreign: execv: %s\n",
			strerror(errno));
		return 1;
	}
	if (__rseq_size != 0) {
		printf("test_rseq_foreign: skipped, glibc registered rseq "
		       "despite %s\n", TUNABLE);
		return 77;
	}
	r = foreign_register();
	if (r != 0) {
		printf("test_rseq_foreign: skipped, the kernel refused the "
		       "registration (%s)\n", strerror(errno));
		return 77;
	}
	read_allowed();

	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	want = test_expected_reason(0);
	if (want == GRB_PATH_AS_ASKED || want == GRB_PATH_NO_MEMBARRIER)
		want = GRB_PATH_NO_RSEQ;   /* what this process's setup is */
	CHECK_EQ(grb_channel_write_path(chan, &why), GRB_WRITE_ATOMIC);
	printf("per-CPU channel under another library's rseq: atomic (%s)\n",
	       reason_name((int)why));
	CHECK_EQ(why, want);

	CHECK_EQ(tc_checker_init(&tc, chan, NWRITERS, PER_WRITER), 0);
	for (i = 0; i < (int)grb_channel_nr_bufs(chan); i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
	for (i = 0; i < NWRITERS; i++) {
		args[i] = (struct warg){ cfg, chan, &tc, (uint32_t)i, 0 };
		CHECK_EQ(pthread_create(&tids[i], NULL, writer, &args[i]), 0);
	}
	for (i = 0; i < NWRITERS; i++) {
		CHECK_EQ(pthread_join(tids[i], NULL), 0);
		refused += args[i].refused;
	}
	/* The main thread's area too, after creating and before reading. */
	foreign_check();
	CHECK_EQ(grb_channel_finalize(chan), 0);
	tc_drain_all(&tc, chan);
	grb_channel_get_stats(chan, &st);
	printf("written %llu read %llu refused %llu, remote commits %llu "
	       "moves %llu\n", (unsigned long long)st.written,
	       (unsigned long long)st.read, (unsigned long long)refused,
	       (unsigned long long)st.remote_commits,
	       (unsigned long long)st.remote_moves);
	CHECK_U64(tc_final_check(&tc, chan, refused), 0);
	CHECK_U64(refused, 0);
	CHECK_U64(st.written, (uint64_t)NWRITERS * PER_WRITER);
	CHECK(tc.records_read > 0);
	/* The atomic path makes no remote operation of the per-CPU one. */
	CHECK_U64(st.remote_commits, 0);
	CHECK_U64(st.remote_moves, 0);
	foreign_check();
	tc_checker_free(&tc);
	grb_channel_destroy(chan);
	foreign_unregister();
	printf("test_rseq_foreign: passed\n");
	return 0;
}

#else

int main(void)
{
	printf("test_rseq_foreign: skipped, no rseq header or not x86-64\n");
	return 77;
}

#endif
