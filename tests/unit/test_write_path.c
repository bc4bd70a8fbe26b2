/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_write_path.c - the per-CPU (rseq) write path's contract
 * (GRB_CONFIG_SYNC_PER_CPU, docs/design.md section 25): which
 * configurations grb_config_check() accepts with the flag, which channels
 * get the path and what grb_channel_write_path() reports (per-CPU,
 * per-channel, GRB_SYNC in the environment, shared and attached
 * channels, whose records, written by the owner and an attached writer on
 * each CPU the thread may use, are read back through an attached reader
 * with no remote operation counted).
 *
 * What to expect is computed from the environment, as the library
 * decides it (tests/common/expect_path.h): the rseq path unless grb has
 * no sections for this architecture, was built with ThreadSanitizer
 * (this test is built with the same flags), GRB_SYNC=atomic is set,
 * glibc's rseq registration is absent (valgrind) or the kernel has no
 * rseq membarrier.  The cases that leave the buffer's CPU on a channel
 * that has the path are test_write_path_remote.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "grb/grb.h"
#include "grb/shm.h"
#include "expect_path.h"
#include "tclient.h"
#include "wpath.h"

/* Check a channel's path: RSEQ exactly when @why is AS_ASKED. */
static void check_path(const struct grb_channel *chan, int want_rseq,
		       enum grb_path_reason want_why)
{
	enum grb_path_reason why = (enum grb_path_reason)-1;
	int path = grb_channel_write_path(chan, &why);

	if (path != (want_rseq ? GRB_WRITE_RSEQ : GRB_WRITE_ATOMIC) ||
	    why != want_why)
		fprintf(stderr, "path %d (%s), expected %d (%s)\n", path,
			reason_name((int)why), want_rseq, reason_name(want_why));
	CHECK_EQ(path, want_rseq ? GRB_WRITE_RSEQ : GRB_WRITE_ATOMIC);
	CHECK_EQ(why, want_why);
	/* @why may be NULL. */
	CHECK_EQ(grb_channel_write_path(chan, NULL), path);
}

/* A per-CPU configuration with the flag, as expected now. */
static void check_expected_path(const struct grb_channel *chan, int shared)
{
	enum grb_path_reason why = test_expected_reason(shared);

	check_path(chan, why == GRB_PATH_AS_ASKED, why);
}

static struct grb_channel *create(const struct grb_config *cfg)
{
	struct grb_channel_attr attr = { "write_path", SB, NSB, NULL };
	struct grb_channel *chan = NULL;

	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	return chan;
}

/* ---- configurations --------------------------------------------------- */

/* Raw clients: no headers, no clock; a record is its payload. */
static const struct grb_config raw_cpu = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 }, 0,
};
static const struct grb_config raw_cpu_sync = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 },
	GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config raw_chan = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 }, 0,
};
static const struct grb_config raw_chan_sync = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 },
	GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config raw_shared_sync = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 },
	GRB_CONFIG_SHARED | GRB_CONFIG_SYNC_PER_CPU,
};

/* One raw record of 16 bytes, tagged. */
static int put(const struct grb_config *cfg, struct grb_channel *chan,
	       uint64_t tag)
{
	struct grb_ctx ctx = GRB_CTX_INIT(16, 8);
	int ret = grb_reserve(cfg, chan, &ctx);

	if (ret)
		return ret;
	grb_write(cfg, &ctx, &tag, sizeof(tag));
	grb_write(cfg, &ctx, &tag, sizeof(tag));
	grb_commit(cfg, &ctx);
	return 0;
}

/* Read every delivered raw sub-buffer of buffer i; return the records. */
static uint64_t raw_drain(struct grb_channel *chan, unsigned int i)
{
	struct grb_buf *b = grb_channel_buf(chan, i);
	struct grb_reader_subbuf sb;
	uint64_t n = 0, a, c;
	size_t off;

	while (grb_reader_get_next(b) == 0) {
		CHECK_EQ(grb_reader_held(b, &sb), 0);
		CHECK_U64(sb.data_size, sb.records * 16);
		for (off = 0; off < sb.data_size; off += 16) {
			CHECK_EQ(grb_reader_read(b, off, &a, 8), 0);
			CHECK_EQ(grb_reader_read(b, off + 8, &c, 8), 0);
			CHECK_U64(a, c);
			CHECK_U64(a >> 32, 0x77706174u);   /* "wpat" */
		}
		n += sb.records;
		CHECK_EQ(grb_reader_put_next(b), 0);
	}
	return n;
}

/* ---- the configurations checked and the reported path ------------------ */

static void test_config_check(void)
{
	struct grb_config cfg = raw_chan_sync;
	struct grb_channel *chan = NULL;
	struct grb_channel_attr attr = { "bad", SB, NSB, NULL };

	CHECK_EQ(grb_config_check(&raw_chan_sync), -EINVAL);
	CHECK_EQ(grb_channel_create(&raw_chan_sync, &attr, &chan), -EINVAL);
	CHECK(chan == NULL);
	CHECK_EQ(grb_config_check(&raw_cpu_sync), 0);
	CHECK_EQ(grb_config_check(&raw_shared_sync), 0);
	CHECK_EQ(grb_config_check(&raw_cpu), 0);
	CHECK_EQ(grb_config_check(&raw_chan), 0);
	/* Unknown flag bits, alone and with the known ones. */
	cfg = raw_cpu_sync;
	cfg.flags = 4;
	CHECK_EQ(grb_config_check(&cfg), -EINVAL);
	cfg.flags = GRB_CONFIG_SYNC_PER_CPU | 4;
	CHECK_EQ(grb_config_check(&cfg), -EINVAL);
	cfg.flags = GRB_CONFIG_SHARED | GRB_CONFIG_SYNC_PER_CPU | 0x80000000u;
	CHECK_EQ(grb_config_check(&cfg), -EINVAL);
	/* The test client's private per-CPU variants carry the flag; its
	 * per-channel and shared ones do not. */
	CHECK(tc_config(0)->flags & GRB_CONFIG_SYNC_PER_CPU);
	CHECK(!(tc_config(TV_PER_CHANNEL)->flags & GRB_CONFIG_SYNC_PER_CPU));
	CHECK(!(tc_config(TV_SHARED)->flags & GRB_CONFIG_SYNC_PER_CPU));
	CHECK_EQ(grb_config_check(tc_config(TV_DISCARD | TV_COMPRESS)), 0);
}

static void test_paths(void)
{
	struct grb_channel *chan;
	enum grb_path_reason why = GRB_PATH_ENV;
	int path;

	CHECK_EQ(grb_channel_write_path(NULL, &why), -EINVAL);
	CHECK_EQ(grb_channel_write_path(NULL, NULL), -EINVAL);

	/* Without the flag: atomic, as asked, whatever the environment. */
	chan = create(&raw_cpu);
	check_path(chan, 0, GRB_PATH_AS_ASKED);
	grb_channel_destroy(chan);
	chan = create(&raw_chan);
	check_path(chan, 0, GRB_PATH_AS_ASKED);
	grb_channel_destroy(chan);
	chan = create(tc_config(TV_PER_CHANNEL | TV_DISCARD));
	check_path(chan, 0, GRB_PATH_AS_ASKED);
	grb_channel_destroy(chan);

	/* With it: what this process, build and environment allow. */
	chan = create(&raw_cpu_sync);
	check_expected_path(chan, 0);
	path = grb_channel_write_path(chan, &why);
	printf("per-CPU channel with GRB_CONFIG_SYNC_PER_CPU: %s (%s)\n",
	       path == GRB_WRITE_RSEQ ? "rseq" : "atomic",
	       reason_name((int)why));
	grb_channel_destroy(chan);
	chan = create(tc_config(0));
	check_expected_path(chan, 0);
	grb_channel_destroy(chan);
	/* A private channel of a configuration marked shared cannot have
	 * it either (its memory could be handed to another process). */
	chan = create(&raw_shared_sync);
	check_expected_path(chan, 1);
	grb_channel_destroy(chan);
}

/* GRB_SYNC=atomic at creation forces the atomic path; nothing else does. */
static void test_env(void)
{
	static const char *const ignored[] = {
		"", "rseq", "ATOMIC", "atomic ", " atomic", "atomics", "0",
	};
	const char *orig = getenv("GRB_SYNC");
	char *saved = orig ? strdup(orig) : NULL;
	enum grb_path_reason forced, why;
	struct grb_channel *a, *chan;
	size_t i;

	CHECK(!orig || saved);
	CHECK_EQ(setenv("GRB_SYNC", "atomic", 1), 0);
	forced = test_expected_reason(0);
	/* ENV unless a reason checked before it applies. */
	CHECK(forced == GRB_PATH_ENV || forced == GRB_PATH_SANITIZER ||
	      forced == GRB_PATH_NO_ARCH);
	a = create(&raw_cpu_sync);
	check_path(a, 0, forced);
	chan = create(&raw_cpu);
	check_path(chan, 0, GRB_PATH_AS_ASKED);
	grb_channel_destroy(chan);

	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
		CHECK_EQ(setenv("GRB_SYNC", ignored[i], 1), 0);
		CHECK(test_expected_reason(0) != GRB_PATH_ENV);
		chan = create(&raw_cpu_sync);
		check_expected_path(chan, 0);
		grb_channel_destroy(chan);
	}
	CHECK_EQ(unsetenv("GRB_SYNC"), 0);
	chan = create(&raw_cpu_sync);
	check_expected_path(chan, 0);
	grb_channel_destroy(chan);
	/* Decided once: the channel made under GRB_SYNC=atomic keeps it. */
	check_path(a, 0, forced);
	CHECK_EQ(put(&raw_cpu_sync, a, UINT64_C(0x77706174) << 32), 0);
	CHECK_EQ(grb_channel_write_path(a, &why), GRB_WRITE_ATOMIC);
	grb_channel_destroy(a);

	if (saved) {
		CHECK_EQ(setenv("GRB_SYNC", saved, 1), 0);
		free(saved);
	}
}

/* Shared channels: membarrier cannot reach other processes' writers. */
static void test_shared(void)
{
	struct grb_channel_attr attr = { "wpath", SB, 4, NULL };
	struct grb_shm_attr sattr = { "wpath", NULL, -1 };
	struct grb_channel *chan = NULL, *rd = NULL, *wr = NULL;
	struct grb_buf_stats st;
	enum grb_path_reason why;
	unsigned int i, n;
	uint64_t tag = UINT64_C(0x77706174) << 32, got = 0;
	int fds[64];

	CHECK_EQ(grb_channel_create_shared(&raw_shared_sync, &attr, &sattr,
					   &chan), 0);
	check_path(chan, 0, test_expected_reason(1));
	n = grb_channel_nr_bufs(chan);
	CHECK(n <= 64);
	for (i = 0; i < n; i++) {
		fds[i] = grb_channel_shm_fd(chan, i);
		CHECK(fds[i] >= 0);
	}
	CHECK_EQ(grb_channel_attach(&raw_shared_sync, "wpath", fds, n,
				    GRB_ATTACH_READER, &rd), 0);
	CHECK_EQ(grb_channel_attach(&raw_shared_sync, "wpath", fds, n,
				    GRB_ATTACH_WRITER, &wr), 0);
	/* An attached channel is atomic, whatever its creator's build or
	 * environment: the reason is that it is shared. */
	check_path(rd, 0, GRB_PATH_SHARED);
	check_path(wr, 0, GRB_PATH_SHARED);
	CHECK_EQ(grb_channel_write_path(wr, &why), GRB_WRITE_ATOMIC);

	/* Records from the owner and the attached writer, on each CPU the
	 * thread may use, read through the attached reader. */
	for (i = 0; i < (unsigned int)nallowed; i++) {
		pin(allowed[i]);
		CHECK_EQ(put(&raw_shared_sync, chan, tag | (2 * i)), 0);
		CHECK_EQ(put(&raw_shared_sync, wr, tag | (2 * i + 1)), 0);
	}
	unpin();
	for (i = 0; i < n; i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(rd, i)), 0);
	CHECK_EQ(grb_channel_flush(rd, GRB_FLUSH_ACTIVE), 0);
	for (i = 0; i < n; i++)
		got += raw_drain(rd, i);
	CHECK_U64(got, 2 * (uint64_t)nallowed);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.written, 2 * (uint64_t)nallowed);
	CHECK_U64(st.read, 2 * (uint64_t)nallowed);
	CHECK_U64(st.remote_commits, 0);
	CHECK_U64(st.remote_moves, 0);
	for (i = 0; i < n; i++) {
		char msg[160];

		CHECK_EQ(grb_buf_validate(grb_channel_buf(chan, i), msg,
					  sizeof(msg)), 0);
	}
	grb_channel_destroy(wr);
	grb_channel_destroy(rd);
	grb_channel_destroy(chan);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	read_allowed();
	test_config_check();
	test_paths();
	test_env();
	test_shared();
	printf("test_write_path: passed\n");
	return 0;
}
