/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_recover_pid.c - grb/recover.h: a writer is dead when
 * its pid is gone, a zombie, or another process with the same pid, told
 * apart by its start time.  The test gives a dead writer's pid to another
 * process (as root, through /proc/sys/kernel/ns_last_pid) and checks: a
 * dead writer whose pid a new process, or the recovering process itself,
 * has is still dead; a new writer with a former writer's pid and thread
 * id is alive.  Without root, or when another process takes the pid
 * each time, it says what it skipped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/reader.h"
#include "grb/recover.h"
#include "grb/shm.h"
#include "recover_rig.h"

static struct recover_sync *sh;

static void wait_for(_Atomic int *flag, pid_t parent)
{
	while (!(flag && *flag) && getppid() == parent)
		usleep(1000);
}

/*
 * Fork a child whose pid is @want, a pid that a dead process had: set
 * the kernel's last pid (/proc/sys/kernel/ns_last_pid, root only) just
 * below it and fork.  A process forking elsewhere at the same moment may
 * take it first, hence a few tries.  Return: 0 in the child; in the
 * parent the child's pid, or -1 when that pid could not be had.
 */
static pid_t fork_as(pid_t want)
{
	char num[32];
	int fd, i, n, ok;
	pid_t pid;

	for (i = 0; i < 20; i++) {
		fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		n = snprintf(num, sizeof(num), "%d", (int)want - 1);
		ok = write(fd, num, (size_t)n) == n;
		close(fd);
		if (!ok)
			return -1;
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			if (getpid() != want)
				_exit(0);
			return 0;
		}
		if (pid == want)
			return pid;
		CHECK_EQ(waitpid(pid, NULL, 0), pid);
		usleep(1000);
	}
	return -1;
}

/*
 * A shared basic channel whose only sub-buffer so far is stuck: a
 * writer process reserved in it and was killed, and the test closed it.
 * Return: the dead writer's pid.
 */
static pid_t dead_writer(struct grb_basic *b)
{
	struct grb_basic_wctx wctx;
	struct grb_channel *chan = grb_basic_channel(b);
	pid_t pid;

	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(grb_basic_write(b, "before", 6), 0);
	sh->ready = 0;
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (grb_basic_reserve(b, 16, &wctx) == 0) {
			memset(wctx.data, 0xee, 16);
			sh->ready = 1;
		}
		pause();
		_exit(0);
	}
	recover_kill_holder(sh, pid);
	CHECK_EQ(grb_basic_write(b, "after", 5), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	/* Start times are in clock ticks (10 ms): the next process with
	 * this pid must start in a later one. */
	usleep(50000);
	return pid;
}

/* Read the one delivered sub-buffer: its records, and no more. */
static void read_one(struct grb_channel *chan, uint64_t records)
{
	struct grb_buf *rb = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;

	CHECK_EQ(grb_reader_get_next(rb), 0);
	CHECK_EQ(grb_reader_held(rb, &sb), 0);
	CHECK_U64(sb.records, records);
	CHECK_EQ(grb_reader_put_next(rb), 0);
	CHECK_EQ(grb_reader_get_next(rb), -EAGAIN);
}

/*
 * grb/recover.h: a writer is dead when its pid is gone, a zombie, "or
 * another process with the same pid", told apart by its start time.
 */
static void pid_reuse(void)
{
	struct grb_recover_info info;
	struct grb_basic_wctx wctx;
	struct grb_buf_stats st;
	struct grb_channel *chan;
	struct grb_basic *b;
	pid_t dead, pid, parent = getpid();
	int status, ret;

	if (geteuid() != 0 || access("/proc/sys/kernel/ns_last_pid", W_OK)) {
		printf("pid_reuse: skipped: needs root and a writable "
		       "/proc/sys/kernel/ns_last_pid to reuse a pid\n");
		return;
	}

	/* Another process has the dead writer's pid: still dead. */
	b = recover_shared_basic(GRB_ALLOC_PER_CHANNEL);
	chan = grb_basic_channel(b);
	dead = dead_writer(b);
	pid = fork_as(dead);
	if (pid == 0) {
		wait_for(NULL, parent);
		_exit(0);
	}
	if (pid < 0) {
		printf("pid_reuse: skipped: pid %d was taken by another "
		       "process each time\n", (int)dead);
		grb_basic_destroy(b);
		return;
	}
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 1);
	CHECK_U64(info.records, 1);
	CHECK_U64(info.waiting, 0);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, NULL, 0), pid);
	read_one(chan, 2);
	grb_basic_destroy(b);

	/* The recovering process itself has the dead writer's pid (a
	 * consumer restarted after the writer died): still dead to it. */
	b = recover_shared_basic(GRB_ALLOC_PER_CHANNEL);
	chan = grb_basic_channel(b);
	dead = dead_writer(b);
	pid = fork_as(dead);
	if (pid == 0) {
		ret = grb_channel_recover(chan, 0, &info);
		if (ret != 1 || info.records != 1) {
			fprintf(stderr, "pid_reuse: recoverer with the dead "
				"writer's pid: %d recovered, %llu waiting\n",
				ret, (unsigned long long)info.waiting);
			_exit(1);
		}
		_exit(0);
	}
	if (pid > 0) {
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		read_one(chan, 2);
		grb_channel_get_stats(chan, &st);
		CHECK_U64(st.lost_dead, 1);
	} else {
		printf("pid_reuse: recoverer case skipped: pid %d was taken "
		       "by another process each time\n", (int)dead);
	}
	grb_basic_destroy(b);

	/* A writer that exited cleanly left its journal slot to a pid and
	 * thread id that a new writer process now has: the new writer's
	 * reservation is a live one, never recovered under it. */
	b = recover_shared_basic(GRB_ALLOC_PER_CHANNEL);
	chan = grb_basic_channel(b);
	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	dead = fork();
	CHECK(dead >= 0);
	if (dead == 0)
		_exit(grb_basic_write(b, "first", 5) == 0 ? 0 : 1);
	CHECK_EQ(waitpid(dead, &status, 0), dead);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	usleep(50000);
	sh->ready = 0;
	sh->go = 0;
	pid = fork_as(dead);
	if (pid == 0) {
		if (grb_basic_reserve(b, 16, &wctx) != 0)
			_exit(1);
		memset(wctx.data, 0xdd, 16);
		sh->ready = 1;
		wait_for(&sh->go, parent);
		grb_basic_commit(&wctx);
		_exit(0);
	}
	if (pid > 0) {
		while (!sh->ready)
			usleep(1000);
		CHECK_EQ(grb_basic_write(b, "after", 5), 0);
		CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
		CHECK_EQ(grb_channel_recover(chan, 0, &info), 0);
		CHECK_U64(info.waiting, 1);
		CHECK_U64(info.subbufs, 0);
		sh->go = 1;
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		read_one(chan, 3);
		grb_channel_get_stats(chan, &st);
		CHECK_U64(st.lost_dead, 0);
		CHECK_U64(st.recovered, 0);
	} else {
		printf("pid_reuse: live writer case skipped: pid %d was taken "
		       "by another process each time\n", (int)dead);
	}
	grb_basic_destroy(b);
	printf("pid_reuse: a dead writer's pid reused by another process, "
	       "by the recoverer, by a live writer\n");
}


int main(void)
{
	sh = recover_sync_map();
	pid_reuse();
	return 0;
}
