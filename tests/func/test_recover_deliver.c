/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_recover_deliver.c - a writer process killed inside the
 * delivery of a sub-buffer it completed, at each step of it.
 *
 * grb/recover.h: "records committed before the writer died are delivered
 * as any others"; grb/channel.h: once flushed and drained, "written ==
 * read + overwritten".  A delivery marks its lap counted and adds the
 * lap to the statistics; a recoverer redoes the delivery of a writer
 * that died in it.  When the total was one buffer-wide add after the
 * mark, a writer killed between the two left the lap's records out of
 * `written` for good (read 36, written 0): the redo saw the mark and
 * skipped the add.
 *
 * The child writes 100-byte records until its hook, at the step under
 * test of its first delivery, kills it; the record whose commit
 * delivered is committed.  The test recovers, drains and checks the
 * counters, then writes more itself: the slot's later laps count too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/reader.h"
#include "grb/recover.h"
#include "grb/validate.h"
#include "grb_test_hooks.h"
#include "recover_rig.h"

static enum grb_hook_point kill_at;

static void kill_hook(enum grb_hook_point point, void *arg)
{
	(void)arg;
	if (point == kill_at)
		raise(SIGKILL);
}

/* Records in the delivered sub-buffers the reader takes now. */
static uint64_t drain(struct grb_buf *buf)
{
	struct grb_reader_subbuf sb;
	uint64_t n = 0;

	while (grb_reader_get_next(buf) == 0) {
		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		n += sb.records;
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	return n;
}

static void killed_at(enum grb_hook_point point)
{
	struct grb_basic *b = recover_shared_basic(GRB_ALLOC_PER_CHANNEL);
	struct grb_channel *chan = grb_basic_channel(b);
	struct grb_buf *buf = grb_channel_buf(chan, 0);
	struct recover_sync *done = recover_sync_map();
	struct grb_recover_info info;
	struct grb_buf_stats st;
	char rec[100], msg[256];
	uint64_t nread;
	int status, i;
	pid_t pid;

	memset(rec, 0x5a, sizeof(rec));
	CHECK_EQ(grb_reader_open(buf), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		kill_at = point;
		grb_test_set_hook(kill_hook, NULL);
		/* ready counts the writes that returned. */
		for (i = 0; i < 1000; i++) {
			if (grb_basic_write(b, rec, sizeof(rec)) != 0)
				_exit(2);
			done->ready++;
		}
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK(done->ready > 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK(grb_channel_recover(chan, 0, &info) >= 0);
	CHECK_U64(info.records, 0);
	nread = drain(buf);
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	/* Every write that returned, and the one whose commit delivered. */
	CHECK_U64(nread, (uint64_t)done->ready + 1);
	CHECK_U64(st.read, nread);
	CHECK_U64(st.written, st.read + st.overwritten);
	CHECK_U64(st.lost_dead, 0);
	CHECK_EQ(grb_buf_validate(buf, msg, sizeof(msg)), 0);

	/* Laps after the redone one: the slots' totals go on from it. */
	for (i = 0; i < 100; i++)
		CHECK_EQ(grb_basic_write(b, rec, sizeof(rec)), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	nread += drain(buf);
	CHECK_U64(nread, (uint64_t)done->ready + 1 + 100);
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	CHECK_U64(st.written, nread);
	CHECK_U64(st.read, nread);
	CHECK_EQ(grb_buf_validate(buf, msg, sizeof(msg)), 0);
	grb_basic_destroy(b);
	munmap(done, sizeof(*done));
	printf("killed at %s: %llu records, all counted\n",
	       grb_hook_name(point), (unsigned long long)nread);
}

int main(void)
{
	alarm(60);
	killed_at(GRB_HOOK_DELIVER_META);
	killed_at(GRB_HOOK_DELIVER_COUNTED);
	killed_at(GRB_HOOK_DELIVER_PUBLISH);
	return 0;
}
