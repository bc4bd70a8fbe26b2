/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_singlestep.c - a writer that a debugger single-steps
 * keeps writing (docs/design.md section 25.5).
 *
 * Under PTRACE_SINGLESTEP the kernel stops the thread after every
 * instruction, and each stop inside an rseq critical section aborts it on
 * resume: a section never reaches its committing instruction, and a
 * writer that only retried its sections would loop for ever.  After
 * GRB_RSEQ_TRIES aborts in a row on its own buffer's CPU, a writer takes
 * the remote forms instead (the same as a writer on another CPU).
 *
 * A child pinned to CPU 0 writes NREC records to a per-CPU basic channel
 * while the parent single-steps it from a SIGSTOP before the first write
 * to a SIGUSR1 after the last.  The step count is bounded: a writer that
 * makes no progress fails the test instead of hanging it.  The child then
 * reads its records back (each once, in order) and, on the per-CPU path,
 * checks that each record's reservation and commit went remote (a
 * section cannot complete under single-stepping; that is the case this
 * test exists for).  On the atomic path (GRB_SYNC=atomic, valgrind, no
 * rseq) the same sequence must work with no remote operation.  Where the
 * machine does not allow ptrace, the test is skipped (exit 77).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/grb.h"

#define NREC 6
/* About a thousand steps per record when every section aborts (the
 * retries, then the remote forms); a writer that loops gets nowhere near
 * the end before this many. */
#define MAX_STEPS 1000000L

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The traced child: exit status 0 when every check held. */
static int child(void)
{
	struct grb_basic_attr attr = {
		.name = "singlestep", .subbuf_size = 65536, .num_subbuf = 4,
		.alloc = GRB_ALLOC_PER_CPU, .mode = GRB_MODE_DISCARD,
		.compress_timestamps = 0,
	};
	struct grb_buf_stats st;
	struct grb_basic_event ev;
	struct grb_basic *b;
	struct grb_channel *chan;
	uint32_t i, v;
	int rseq, ret;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
		return 77;
	if (pin(0) != 0 || grb_basic_create(&attr, &b) != 0)
		return 2;
	chan = grb_basic_channel(b);
	rseq = grb_channel_write_path(chan, NULL) == GRB_WRITE_RSEQ;
	/* The parent single-steps from here... */
	raise(SIGSTOP);
	for (i = 0; i < NREC; i++)
		if (grb_basic_write(b, &i, sizeof(i)) != 0)
			return 3;
	/* ...to here. */
	raise(SIGUSR1);
	CHECK_EQ(grb_buf_get_stats(grb_channel_buf(chan, 0), &st), 0);
	if (rseq) {
		/* Every section aborted: each reservation moved the
		 * position remotely, each commit was a remote one, and so
		 * was the commit of the sub-buffer header the first
		 * reservation opened. */
		CHECK_U64(st.remote_moves, NREC);
		CHECK_U64(st.remote_commits, NREC + 1);
	} else {
		CHECK_U64(st.remote_moves, 0);
		CHECK_U64(st.remote_commits, 0);
	}
	for (i = 0; i < NREC; i++) {
		ret = grb_basic_consume(b, 0, &ev, &v, sizeof(v));
		CHECK_EQ(ret, 0);
		CHECK_EQ(ev.len, sizeof(v));
		CHECK_U64(v, i);
	}
	CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, sizeof(v)), -EAGAIN);
	grb_basic_destroy(b);
	printf("test_singlestep: child: %u records, path %s\n", NREC,
	       rseq ? "rseq" : "atomic");
	fflush(stdout);         /* the child leaves by _exit() */
	return 0;
}

int main(void)
{
	long steps = 0;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child());
	/* The child's SIGSTOP, or its exit when it cannot be traced. */
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("SKIP: ptrace is not allowed here\n");
		return 77;
	}
	CHECK(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
	for (;;) {
		CHECK_EQ(ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL), 0);
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFSTOPPED(status));
		if (WSTOPSIG(status) == SIGUSR1)
			break;
		CHECK_EQ(WSTOPSIG(status), SIGTRAP);
		if (++steps > MAX_STEPS) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "test_singlestep: the writer made no "
				"progress in %ld steps\n", MAX_STEPS);
			return 1;
		}
	}
	/* Let it run on, without the SIGUSR1. */
	CHECK_EQ(ptrace(PTRACE_DETACH, pid, NULL, NULL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	printf("test_singlestep: passed (%ld steps for %d records)\n", steps,
	       NREC);
	return 0;
}
