/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_recover_slots.c - what grb/recover.h and grb/shm.h
 * promise about recovery, one by one: its errors; a live writer's
 * sub-buffer left alone however long it takes, a dead one's recovered
 * once its deadline has run; GRB_JOURNAL_SLOTS writing threads at a time
 * and what the next one, a flush and a finalize get; the cut of a client
 * without record_pad; a live writer whose process's first thread exited,
 * and the slots of exited threads claimed from another process.  (test_recover.c kills writers at random;
 * test_recover_contract.c and test_recover_pid.c hold the rest of the
 * contract.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/reader.h"
#include "grb/recover.h"
#include "grb/shm.h"
#include "grb/validate.h"
#include "recover_rig.h"
#include "tclient.h"

static struct recover_sync *sh;

static struct grb_basic *slots_b;
static pthread_barrier_t bar_written, bar_exit;

static void *slot_thread(void *arg)
{
	int *ret = (int *)arg;

	*ret = grb_basic_write(slots_b, "x", 1);
	pthread_barrier_wait(&bar_written);
	pthread_barrier_wait(&bar_exit);
	return NULL;
}

static void *one_write(void *arg)
{
	*(int *)arg = grb_basic_write(slots_b, "y", 1);
	return NULL;
}

static void *one_flush(void *arg)
{
	*(int *)arg = grb_channel_flush(grb_basic_channel(slots_b),
					GRB_FLUSH_ACTIVE);
	if (*(int *)arg == 0)
		*(int *)arg = grb_buf_flush(grb_channel_buf(
			grb_basic_channel(slots_b), 0), GRB_FLUSH_ACTIVE);
	return NULL;
}

/* What grb/recover.h and grb/shm.h promise, one by one. */
static void contract(void)
{
	struct grb_basic_attr pattr = {
		.name = "private", .subbuf_size = 4096, .num_subbuf = 4,
		.alloc = GRB_ALLOC_PER_CHANNEL, .mode = GRB_MODE_DISCARD,
	};
	struct grb_basic_counts counts;
	struct grb_basic_wctx wctx;
	struct grb_recover_info info;
	struct grb_buf_stats st;
	struct grb_channel *chan;
	struct grb_basic *b;
	pthread_t tid[GRB_JOURNAL_SLOTS + 1];
	int rets[GRB_JOURNAL_SLOTS], extra = 1, status, ret;
	uint64_t read, committed;
	struct grb_buf *rb;
	unsigned int i;
	pid_t pid;

	/* Errors. */
	CHECK_EQ(grb_buf_recover(NULL, 0, &info), -EINVAL);
	CHECK_EQ(grb_channel_recover(NULL, 0, &info), -EINVAL);
	CHECK_EQ(grb_basic_create(&pattr, &b), 0);
	CHECK_EQ(grb_channel_recover(grb_basic_channel(b), 0, &info),
		 -EOPNOTSUPP);
	CHECK_EQ(grb_buf_recover(grb_channel_buf(grb_basic_channel(b), 0), 0,
				 NULL), -EOPNOTSUPP);
	grb_basic_destroy(b);

	/* A live writer's sub-buffer is never touched, however long; once
	 * it is dead, the deadline runs from the first call that sees the
	 * sub-buffer stuck. */
	b = recover_shared_basic(GRB_ALLOC_PER_CHANNEL);
	chan = grb_basic_channel(b);
	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(grb_basic_write(b, "before", 6), 0);
	sh->ready = 0;
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (grb_basic_reserve(b, 16, &wctx) == 0)
			memset(wctx.data, 0xee, 16);
		sh->ready = 1;
		pause();
		_exit(0);
	}
	while (!sh->ready)
		usleep(1000);
	CHECK_EQ(grb_basic_write(b, "after", 5), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(grb_channel_recover(chan, 0, &info), 0);
		CHECK_U64(info.waiting, 1);
		CHECK_EQ(grb_reader_get_next(grb_channel_buf(chan, 0)), -EAGAIN);
		usleep(20000);
	}
	kill(pid, SIGKILL);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(grb_channel_recover(chan, 300000000, &info), 0);
	CHECK_U64(info.waiting, 1);
	CHECK_EQ(grb_channel_recover(chan, 300000000, &info), 0);
	usleep(320000);
	CHECK_EQ(grb_channel_recover(chan, 300000000, &info), 1);
	CHECK_U64(info.subbufs, 1);
	CHECK_U64(info.records, 1);
	CHECK(info.bytes >= 16);
	CHECK_U64(info.waiting, 0);
	CHECK_U64(info.ambiguous, 0);
	grb_channel_get_stats(chan, &st);
	CHECK_U64(st.lost_dead, 1);
	CHECK_U64(st.recovered, 1);
	CHECK_EQ(grb_basic_get_counts(b, 0, &counts), 0);
	CHECK_U64(counts.dead, 1);
	CHECK_U64(counts.written, 2);
	CHECK_U64(st.written, 2);
	CHECK_EQ(grb_reader_get_next(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(grb_reader_put_next(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 0);
	CHECK_U64(info.waiting, 0);
	grb_basic_destroy(b);

	/* GRB_JOURNAL_SLOTS writing threads at a time; one more is refused
	 * with -EBUSY and counted in lost_nesting; a thread that exited
	 * gives its slot to the next. */
	slots_b = recover_shared_basic(GRB_ALLOC_PER_CHANNEL);
	pthread_barrier_init(&bar_written, NULL, GRB_JOURNAL_SLOTS + 1);
	pthread_barrier_init(&bar_exit, NULL, GRB_JOURNAL_SLOTS + 1);
	for (i = 0; i < GRB_JOURNAL_SLOTS; i++)
		CHECK_EQ(pthread_create(&tid[i], NULL, slot_thread, &rets[i]), 0);
	pthread_barrier_wait(&bar_written);
	for (i = 0; i < GRB_JOURNAL_SLOTS; i++)
		CHECK(rets[i] == 0 || rets[i] == -ENOBUFS);
	CHECK_EQ(pthread_create(&tid[GRB_JOURNAL_SLOTS], NULL, one_write,
				&extra), 0);
	CHECK_EQ(pthread_join(tid[GRB_JOURNAL_SLOTS], NULL), 0);
	CHECK_EQ(extra, -EBUSY);
	grb_channel_get_stats(grb_basic_channel(slots_b), &st);
	CHECK_U64(st.lost_nesting, 1);
	/* A flush moves the position too: with no slot, -EBUSY. */
	extra = 1;
	CHECK_EQ(pthread_create(&tid[GRB_JOURNAL_SLOTS], NULL, one_flush,
				&extra), 0);
	CHECK_EQ(pthread_join(tid[GRB_JOURNAL_SLOTS], NULL), 0);
	CHECK_EQ(extra, -EBUSY);
	/* Finalize needs no slot (its writers are done): every committed
	 * record is still read, the open sub-buffer closed by it. */
	for (i = 0, committed = 0; i < GRB_JOURNAL_SLOTS; i++)
		committed += rets[i] == 0;
	CHECK_EQ(grb_channel_finalize(grb_basic_channel(slots_b)), 0);
	rb = grb_channel_buf(grb_basic_channel(slots_b), 0);
	CHECK_EQ(grb_reader_open(rb), 0);
	for (read = 0; (ret = grb_reader_get_next(rb)) == 0; ) {
		struct grb_reader_subbuf sb;

		CHECK_EQ(grb_reader_held(rb, &sb), 0);
		read += sb.records;
		CHECK_EQ(grb_reader_put_next(rb), 0);
	}
	CHECK_EQ(ret, -ENODATA);
	CHECK_U64(read, committed);
	CHECK_EQ(grb_reader_release(rb), 0);
	pthread_barrier_wait(&bar_exit);
	for (i = 0; i < GRB_JOURNAL_SLOTS; i++)
		CHECK_EQ(pthread_join(tid[i], NULL), 0);
	/* A thread that exited gave its slot: the next one gets past the
	 * journal to the finalized channel's refusal. */
	extra = 1;
	CHECK_EQ(pthread_create(&tid[0], NULL, one_write, &extra), 0);
	CHECK_EQ(pthread_join(tid[0], NULL), 0);
	CHECK_EQ(extra, -ESHUTDOWN);
	pthread_barrier_destroy(&bar_written);
	pthread_barrier_destroy(&bar_exit);
	grb_basic_destroy(slots_b);
	printf("contract: errors, live writer left alone, deadline, "
	       "journal slots\n");
}

/*
 * A client without record_pad (the test client): recovery cuts the
 * sub-buffer where the dead writer's slot begins, and reports every byte
 * cut off, the committed records after the slot included (config.h).
 */
static void contract_no_pad(void)
{
	const struct grb_config *cfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD);
	struct grb_channel_attr attr = { "nopad", 4096, 4, NULL };
	struct grb_shm_attr mem = { "tclient", NULL, -1 };
	struct grb_recover_info info;
	struct grb_reader_subbuf sb;
	struct grb_buf_stats st;
	struct grb_channel *chan;
	struct tc_pending p;
	uint64_t dead_at, end;
	pid_t pid;

	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &mem, &chan), 0);
	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(tc_write(cfg, chan, 0, 0, 0), 0);
	grb_channel_get_stats(chan, &st);
	dead_at = st.produced;
	sh->ready = 0;
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (tc_reserve(cfg, chan, 1, 0, 8, &p) == 0)
			sh->ready = 1;
		pause();
		_exit(0);
	}
	recover_kill_holder(sh, pid);
	for (uint32_t i = 1; i <= 5; i++)
		CHECK_EQ(tc_write(cfg, chan, 0, i, 100), 0);
	grb_channel_get_stats(chan, &st);
	end = st.produced;
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 1);
	CHECK_U64(info.records, 1);
	CHECK_U64(info.bytes, end - dead_at);
	CHECK_EQ(grb_reader_get_next(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(grb_reader_held(grb_channel_buf(chan, 0), &sb), 0);
	CHECK_U64(sb.data_size, dead_at);
	CHECK_EQ(grb_reader_put_next(grb_channel_buf(chan, 0)), 0);
	grb_channel_destroy(chan);
}

/* In a child of the test: wait until the test's check ends it, or the
 * test ends without it (a failed check exits at once). */

/* The holder thread of a process whose first thread has exited. */
static void *holder_main(void *arg)
{
	struct grb_basic_wctx wctx;

	(void)arg;
	if (grb_basic_reserve(slots_b, 16, &wctx) != 0)
		_exit(2);
	memset(wctx.data, 0xab, 16);
	sh->ready = 1;
	while (!sh->go)
		usleep(1000);
	grb_basic_commit(&wctx);
	/* The process ends here, not when its last thread returns: under
	 * TSan its background thread outlives both, and the process never
	 * exited. */
	_exit(0);
}

static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	CHECK(f != NULL);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	CHECK(p != NULL);
	return p[2];
}

/*
 * Threads, not processes (grb/recover.h: "recovery never races with a
 * live writer"; "the slot of a thread that exited is claimed again"):
 *  - a process whose first thread called pthread_exit() shows as a
 *    zombie in /proc while its other threads run: a reservation one of
 *    them holds is left alone, and commits later;
 *  - the slots of threads that exited in a process that lives on are
 *    claimed again by another process's writer (they were not, and
 *    after GRB_JOURNAL_SLOTS short-lived threads every other process got
 *    -EBUSY).
 */
static void contract_threads(void)
{
	struct grb_recover_info info;
	struct grb_basic_counts counts;
	struct grb_channel *chan;
	pthread_t t;
	int status, ret;
	unsigned int i;
	pid_t pid, pid2;
	char msg[256];

	slots_b = recover_shared_basic(GRB_ALLOC_PER_CHANNEL);
	chan = grb_basic_channel(slots_b);
	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(grb_basic_write(slots_b, "before", 6), 0);
	sh->ready = 0;
	sh->go = 0;
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (pthread_create(&t, NULL, holder_main, NULL) != 0)
			_exit(3);
		pthread_exit(NULL);
	}
	while (!sh->ready)
		usleep(1000);
	/* The case at hand: the first thread is a zombie. */
	for (i = 0; i < 1000 && proc_state(pid) != 'Z'; i++)
		usleep(1000);
	CHECK_EQ(proc_state(pid), 'Z');
	CHECK_EQ(grb_basic_write(slots_b, "after", 5), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 0);
	CHECK_U64(info.waiting, 1);
	CHECK_EQ(grb_reader_get_next(grb_channel_buf(chan, 0)), -EAGAIN);
	sh->go = 1;
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 0);
	CHECK_U64(info.records, 0);
	CHECK_EQ(grb_buf_validate(grb_channel_buf(chan, 0), msg, sizeof(msg)),
		 0);
	CHECK_EQ(grb_reader_get_next(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(grb_reader_put_next(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(grb_basic_get_counts(slots_b, 0, &counts), 0);
	CHECK_U64(counts.dead, 0);
	CHECK_U64(counts.written, 3);
	grb_basic_destroy(slots_b);

	/* GRB_JOURNAL_SLOTS threads, one after the other, each writing once
	 * and exiting, in a process that then waits; then a writer in
	 * another process. */
	slots_b = recover_shared_basic(GRB_ALLOC_PER_CHANNEL);
	CHECK_EQ(grb_reader_open(grb_channel_buf(grb_basic_channel(slots_b),
						 0)), 0);
	sh->ready = 0;
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		/* Gone with the test, should a check fail in it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (i = 0; i < GRB_JOURNAL_SLOTS; i++) {
			ret = 1;
			if (pthread_create(&t, NULL, one_write, &ret) != 0 ||
			    pthread_join(t, NULL) != 0 || ret != 0)
				_exit(4);
		}
		sh->ready = 1;
		pause();
		_exit(0);
	}
	while (!sh->ready)
		usleep(1000);
	pid2 = fork();
	CHECK(pid2 >= 0);
	if (pid2 == 0)
		_exit(grb_basic_write(slots_b, "other", 5) == 0 ? 0 : 5);
	CHECK_EQ(waitpid(pid2, &status, 0), pid2);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	kill(pid, SIGKILL);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	grb_basic_destroy(slots_b);
	printf("contract: a zombie first thread, slots of exited threads\n");
}

int main(void)
{
	sh = recover_sync_map();
	contract();
	contract_no_pad();
	contract_threads();
	return 0;
}
