/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_journal_claim.c - two processes claiming journal slots
 * of dead owners at once (grb/recover.h: "recovery never races with a
 * live writer, even one whose pid and thread id a dead writer had (it
 * takes a journal slot of its own, with its own start time)").
 *
 * A claim CASes the slot's owner word, then stores its own start time.
 * In between, the slot's start is still the dead owner's: another
 * process that judged the new owner by it found a process started at
 * another time, "dead", and took the slot, whose start the first
 * claimant then overwrote with its own.  The second process's entries
 * were then judged by the first's start: dead while alive, and recovery
 * ran under its reservation.  The owner word now carries
 * GRB_JOWNER_CLAIM until the start is stored, and a claiming owner is
 * judged by its pid alone.
 *
 * The hook at GRB_HOOK_JOURNAL_CLAIMED parks the first claimant (N) in
 * that window while the second (X) claims and reserves; then N goes on,
 * and a recovery must leave X's reservation alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/reader.h"
#include "grb/recover.h"
#include "grb/validate.h"
#include "grb_test_hooks.h"
#include "recover_rig.h"

struct claim_sync {
	_Atomic int n_parked, n_go, n_done, x_ready, x_go;
};

static struct claim_sync *cs;

static void park_hook(enum grb_hook_point point, void *arg)
{
	(void)arg;
	if (point != GRB_HOOK_JOURNAL_CLAIMED)
		return;
	cs->n_parked = 1;
	while (!cs->n_go)
		usleep(1000);
}

static pid_t child(void)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	return pid;
}

int main(void)
{
	struct grb_basic *b = recover_shared_basic(GRB_ALLOC_PER_CHANNEL);
	struct grb_channel *chan = grb_basic_channel(b);
	struct grb_buf *buf = grb_channel_buf(chan, 0);
	struct grb_recover_info info;
	struct grb_basic_wctx w;
	unsigned int i;
	int status;
	pid_t n, x, p;
	char msg[256];

	alarm(60);
	cs = (struct claim_sync *)mmap(NULL, sizeof(*cs),
				       PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(cs != MAP_FAILED);
	CHECK_EQ(grb_reader_open(buf), 0);
	/* Every slot owned by a dead process. */
	for (i = 0; i < GRB_JOURNAL_SLOTS; i++) {
		p = child();
		if (p == 0)
			_exit(grb_basic_write(b, "d", 1) == 0 ? 0 : 1);
		CHECK_EQ(waitpid(p, &status, 0), p);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	/* Started a few clock ticks after the first dead owner. */
	usleep(50000);
	n = child();
	if (n == 0) {
		grb_test_set_hook(park_hook, NULL);
		if (grb_basic_write(b, "n", 1) != 0)
			_exit(2);
		cs->n_done = 1;
		pause();
		_exit(0);
	}
	while (!cs->n_parked)
		usleep(1000);
	usleep(50000);
	x = child();
	if (x == 0) {
		if (grb_basic_write(b, "x1", 2) != 0 ||
		    grb_basic_reserve(b, 16, &w) != 0)
			_exit(3);
		memset(w.data, 0x55, 16);
		cs->x_ready = 1;
		while (!cs->x_go)
			usleep(1000);
		grb_basic_commit(&w);
		_exit(0);
	}
	while (!cs->x_ready)
		usleep(1000);
	cs->n_go = 1;
	while (!cs->n_done)
		usleep(1000);
	/* X holds a reservation and is alive: its sub-buffer waits. */
	CHECK_EQ(grb_basic_write(b, "after", 5), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 0);
	CHECK_U64(info.records, 0);
	CHECK_U64(info.waiting, 1);
	cs->x_go = 1;
	CHECK_EQ(waitpid(x, &status, 0), x);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(grb_buf_validate(buf, msg, sizeof(msg)), 0);
	CHECK_EQ(kill(n, SIGKILL), 0);
	CHECK_EQ(waitpid(n, &status, 0), n);
	grb_basic_destroy(b);
	printf("test_journal_claim: passed\n");
	return 0;
}
