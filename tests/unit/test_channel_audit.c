/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_channel_audit.c - promises of grb/channel.h,
 * grb/config.h, grb/basic.h and grb/validate.h that the other tests
 * leave unchecked or check on one write path only:
 *  - creation: a refusal leaves *out as it was; a mapping that fails on
 *    a later buffer of a per-CPU channel is -ENOMEM, runs no callback
 *    and gives the earlier buffers' memory back;
 *  - grb_channel_flush() tries every buffer whatever the others give
 *    (-ENODATA, -ENOBUFS before them);
 *  - grb_buf_flush(): delivered by the flush when nothing is pending,
 *    by the last commit otherwise; GRB_FLUSH_EMPTY's -ENOBUFS and -EIO,
 *    counted as no loss; after finalize, -ENODATA for both kinds;
 *  - finalize: -ESHUTDOWN also on a disabled channel, which enabling
 *    does not undo; a reservation beyond the nesting bound (held open on
 *    another channel) is -EBUSY, counted in the finalized buffer;
 *  - the counters: each refusal in exactly one lost_* counter (an empty
 *    slot's -EINVAL in none), discarded apart from written, written
 *    ahead of delivery, produced and consumed in bytes, written == read
 *    + overwritten once flushed and drained, the channel's sum over
 *    per-CPU buffers;
 *  - grb_channel_memory(): the mapping plus the two handles, exactly;
 *  - grb_buf_validate(): -EUCLEAN for each geometry field; @msg cut to
 *    @cap, left alone when all hold and with a @cap of 0;
 *  - the basic client: grb_basic_config(), grb_basic_create() refusals,
 *    every errno of write, reserve, consume, peek, reset, counts,
 *    release_readers, flush and finalize, and grb_basic_decode()'s.
 * The flush, finalize and counter checks run on a per-channel buffer and
 * on a per-CPU one with GRB_CONFIG_SYNC_PER_CPU (the per-CPU path where
 * this machine has it; ctest runs the program again under
 * GRB_SYNC=atomic with GRB_TEST_BOTH_PATHS).  Raw clients (tagrec.h): a
 * record is its payload, and four REC-byte records fill a sub-buffer,
 * the fifth closing it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/grb.h"
#include "grb/validate.h"
#include "tagrec.h"

#define NSUB 4
#define REC 1000                /* four to a sub-buffer */

static struct grb_buf_stats stats(const struct grb_buf *b)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	return st;
}

static uint64_t lost_sum(const struct grb_buf_stats *st)
{
	return st->lost_full + st->lost_wrap + st->lost_big + st->lost_nesting;
}

static void expect_valid(const struct grb_buf *b)
{
	char msg[256] = "";
	int ret = grb_buf_validate(b, msg, sizeof(msg));

	if (ret)
		fprintf(stderr, "grb_buf_validate: %s\n", msg);
	CHECK_EQ(ret, 0);
}

/* The CPUs this thread may run on, lowest and highest. */
static cpu_set_t all_cpus;
static int cpu_lo = -1, cpu_hi = -1;

static void read_cpus(void)
{
	int c;

	CHECK_EQ(sched_getaffinity(0, sizeof(all_cpus), &all_cpus), 0);
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all_cpus))
			continue;
		if (cpu_lo < 0)
			cpu_lo = c;
		cpu_hi = c;
	}
	CHECK(cpu_lo >= 0);
}

static void pin(int c)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

static void unpin(void)
{
	CHECK_EQ(sched_setaffinity(0, sizeof(all_cpus), &all_cpus), 0);
}

/*
 * The flush, finalize and counter checks run on a per-channel buffer and
 * on the buffer of a per-CPU channel with GRB_CONFIG_SYNC_PER_CPU, the
 * thread pinned to its CPU: the per-CPU (rseq) path where this machine
 * has it, whose flushes and refusals are code of their own.
 */
static const struct grb_config pcpu = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 }, GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config pcpu_ow = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 0, { 0 },
	GRB_CONFIG_SYNC_PER_CPU,
};

static const struct grb_config *variant(int pc, int ow)
{
	if (pc)
		return ow ? &pcpu_ow : &pcpu;
	return ow ? &raw_ow : &raw;
}

/* A channel of @cfg and the buffer this thread writes to. */
static struct grb_channel *open_variant(const struct grb_config *cfg,
					struct grb_buf **b)
{
	struct grb_channel *c = create(cfg, SB, NSUB);

	if (cfg->alloc == GRB_ALLOC_PER_CPU) {
		pin(cpu_lo);
		*b = grb_channel_buf(c, (unsigned int)cpu_lo);
	} else {
		*b = grb_channel_buf(c, 0);
	}
	CHECK(*b != NULL);
	return c;
}

static void close_variant(struct grb_channel *c)
{
	unpin();
	grb_channel_destroy(c);
}

/* ------------------------------------------------------------------ */
/* Creation. */

static int created, finalized;

static int count_create(struct grb_buf *buf, void *priv, int cpu)
{
	(void)buf;
	(void)priv;
	(void)cpu;
	created++;
	return 0;
}

static void count_finalize(struct grb_buf *buf, void *priv, int cpu)
{
	(void)buf;
	(void)priv;
	(void)cpu;
	finalized++;
}

static const struct grb_config counted_percpu = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0,
	{ .buffer_create = count_create, .buffer_finalize = count_finalize },
	0,
};
static const struct grb_config counted_channel = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0,
	{ .buffer_create = count_create, .buffer_finalize = count_finalize },
	0,
};

/* The address space this process maps now, from /proc/self/statm. */
static uint64_t vm_bytes(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	CHECK(f != NULL);
	CHECK_EQ(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 * A sanitizer's runtime or valgrind maps for itself under the same
 * address-space limit, and may fail where the library would not.
 */
static int address_space_shared(void)
{
	const char *pre = getenv("LD_PRELOAD");

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
	return 1;
#endif
#endif
	return pre && strstr(pre, "vgpreload") != NULL;
}

/*
 * A mapping that fails on the second buffer of a per-CPU channel: the
 * first is unmapped again (a channel of one buffer of the same size then
 * fits under the same limit), no buffer_create ran, and nothing came
 * back.  Skipped with a single possible CPU, under a sanitizer or
 * valgrind, and where the limit does not bind.
 */
static void test_create_enomem(void)
{
	const size_t sb = (size_t)1 << 20, n = 32;      /* 32 MiB a buffer */
	struct grb_channel_attr attr = { "enomem", sb, n, NULL };
	struct grb_channel *chan = (struct grb_channel *)&attr, *probe;
	struct rlimit old, lim;
	int ret;

	CHECK_EQ(grb_channel_create(&counted_channel, &attr, &probe), 0);
	CHECK_EQ(created, 1);
	grb_channel_destroy(probe);
	CHECK_EQ(finalized, 1);
	created = finalized = 0;
	CHECK_EQ(grb_channel_create(&counted_percpu, &attr, &probe), 0);
	if (grb_channel_nr_bufs(probe) < 2) {
		grb_channel_destroy(probe);
		created = finalized = 0;
		return;
	}
	grb_channel_destroy(probe);
	created = finalized = 0;

	if (address_space_shared())
		return;
	CHECK_EQ(getrlimit(RLIMIT_AS, &old), 0);
	lim = old;
	/* Room for one buffer and the heap's growth, not for two. */
	lim.rlim_cur = vm_bytes() + sb * n + sb * n / 2;
	if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < lim.rlim_cur)
		return;
	CHECK_EQ(setrlimit(RLIMIT_AS, &lim), 0);
	ret = grb_channel_create(&counted_percpu, &attr, &chan);
	if (ret == 0) {
		/* The limit does not bind here: nothing to check. */
		CHECK_EQ(setrlimit(RLIMIT_AS, &old), 0);
		grb_channel_destroy(chan);
		created = finalized = 0;
		return;
	}
	CHECK_EQ(ret, -ENOMEM);
	CHECK(chan == (struct grb_channel *)&attr);
	CHECK_EQ(created, 0);
	CHECK_EQ(finalized, 0);
	/* The first buffer's mapping was given back. */
	CHECK_EQ(grb_channel_create(&counted_channel, &attr, &probe), 0);
	CHECK_EQ(setrlimit(RLIMIT_AS, &old), 0);
	grb_channel_destroy(probe);
	CHECK_EQ(created, 1);
	CHECK_EQ(finalized, 1);
	created = finalized = 0;
}

/* A refused creation leaves *out as it was. */
static void test_create_out_untouched(void)
{
	struct grb_channel_attr attr = { NULL, SB, 3, NULL };
	struct grb_channel *chan = (struct grb_channel *)&attr;
	struct grb_config bad = raw;

	CHECK_EQ(grb_channel_create(&raw, &attr, &chan), -EINVAL);
	CHECK(chan == (struct grb_channel *)&attr);
	attr.num_subbuf = NSUB;
	bad.flags = GRB_CONFIG_SYNC_PER_CPU;    /* with per-channel */
	CHECK_EQ(grb_config_check(&bad), -EINVAL);
	CHECK_EQ(grb_channel_create(&bad, &attr, &chan), -EINVAL);
	CHECK(chan == (struct grb_channel *)&attr);
	bad.alloc = GRB_ALLOC_PER_CPU;
	CHECK_EQ(grb_config_check(&bad), 0);
	bad.flags = GRB_CONFIG_SYNC_PER_CPU | GRB_CONFIG_SHARED;
	CHECK_EQ(grb_config_check(&bad), 0);
	bad.flags = 4;
	CHECK_EQ(grb_config_check(&bad), -EINVAL);
	/* A NULL name is "": accepted. */
	CHECK_EQ(grb_channel_create(&raw, &attr, &chan), 0);
	CHECK_EQ(grb_channel_write_path(chan, NULL), GRB_WRITE_ATOMIC);
	CHECK_EQ(grb_channel_write_path(NULL, NULL), -EINVAL);
	grb_channel_destroy(chan);
}

/* ------------------------------------------------------------------ */
/* Flush and finalize. */

static int ends;

static void count_end(struct grb_buf *buf, void *header,
		      const struct grb_subbuf_info *info)
{
	(void)buf;
	(void)header;
	(void)info;
	ends++;
}

static const struct grb_config ended = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0,
	{ .buffer_end = count_end }, 0,
};

/* Delivered by the flush when nothing is pending, else by the commit. */
static void test_flush_delivery(void)
{
	struct grb_channel *c = create(&ended, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(c, 0);
	struct grb_ctx hold = GRB_CTX_INIT(REC, 1);

	CHECK_EQ(grb_reader_open(b), 0);
	ends = 0;
	CHECK_EQ(put(&ended, c, 1, REC), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(ends, 1);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_put_next(b), 0);

	CHECK_EQ(grb_reserve(&ended, c, &hold), 0);
	grb_write_fill(&ended, &hold, 2, REC);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(ends, 1);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	/* Closed: nothing more to close. */
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), -ENODATA);
	grb_commit(&ended, &hold);
	CHECK_EQ(ends, 2);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	expect_valid(b);
	grb_channel_destroy(c);
}

/* GRB_FLUSH_EMPTY's refusals are no loss; finalize ends every flush. */
static void test_flush_empty_refused(int pc)
{
	const struct grb_config *cfg = variant(pc, 0);
	struct grb_ctx hold = GRB_CTX_INIT(REC, 1);
	struct grb_buf_stats st;
	struct grb_channel *c;
	struct grb_buf *b;
	uint64_t t;

	/* Discard mode, full: the next sub-buffer is the reader's. */
	c = open_variant(cfg, &b);
	CHECK_EQ(grb_reader_open(b), 0);
	for (t = 1; t <= NSUB * 4; t++)
		CHECK_EQ(put(cfg, c, t, REC), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), -ENODATA);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), -ENOBUFS);
	st = stats(b);
	CHECK_U64(lost_sum(&st), 0);
	CHECK_U64(st.produced, NSUB * SB);
	/* Freed: a header-only sub-buffer opens and closes at once. */
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), 0);
	CHECK_U64(stats(b).produced, (NSUB + 1) * SB);
	expect_valid(b);
	close_variant(c);

	/* Overwrite mode: the next sub-buffer a lap ago holds a record
	 * still reserved. */
	cfg = variant(pc, 1);
	c = open_variant(cfg, &b);
	CHECK_EQ(grb_reserve(cfg, c, &hold), 0);
	grb_write_fill(cfg, &hold, 1, REC);
	for (t = 2; t <= NSUB * 4; t++)
		CHECK_EQ(put(cfg, c, t, REC), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), -EIO);
	st = stats(b);
	CHECK_U64(lost_sum(&st), 0);
	CHECK_U64(st.produced, NSUB * SB);
	grb_commit(cfg, &hold);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), 0);
	CHECK_U64(stats(b).produced, (NSUB + 1) * SB);

	/* Finalized: no flush opens or closes anything. */
	CHECK_EQ(put(cfg, c, 100, REC), 0);
	CHECK_EQ(grb_channel_finalize(c), 0);
	t = stats(b).produced;
	CHECK_U64(t, (NSUB + 2) * SB);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), -ENODATA);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), -ENODATA);
	CHECK_EQ(grb_channel_flush(c, GRB_FLUSH_EMPTY), 0);
	CHECK_U64(stats(b).produced, t);
	/* Argument errors come first. */
	CHECK_EQ(grb_buf_flush(NULL, GRB_FLUSH_ACTIVE), -EINVAL);
	CHECK_EQ(grb_buf_flush(b, (enum grb_flush)2), -EINVAL);
	CHECK_EQ(grb_buf_flush(b, (enum grb_flush)-1), -EINVAL);
	CHECK_EQ(grb_channel_flush(c, (enum grb_flush)2), -EINVAL);
	CHECK_EQ(grb_channel_flush(NULL, GRB_FLUSH_ACTIVE), -EINVAL);
	CHECK_EQ(grb_channel_finalize(c), -EALREADY);
	CHECK_EQ(grb_channel_finalize(NULL), -EINVAL);
	expect_valid(b);
	close_variant(c);
}

/*
 * grb_channel_flush() on a per-CPU channel: a buffer that has nothing
 * (-ENODATA) or no room (-ENOBUFS) does not stop the others.
 */
static void test_channel_flush_all(void)
{
	struct grb_channel *c = create(&pcpu, SB, NSUB);
	unsigned int n = grb_channel_nr_bufs(c), i;
	struct grb_buf *hi, *lo;
	uint64_t t;

	if (cpu_hi == cpu_lo || (unsigned int)cpu_hi >= n) {
		grb_channel_destroy(c);
		return;
	}
	hi = grb_channel_buf(c, (unsigned int)cpu_hi);
	lo = grb_channel_buf(c, (unsigned int)cpu_lo);
	/* Records only on the highest CPU: every buffer before it has
	 * nothing to close. */
	pin(cpu_hi);
	CHECK_EQ(put(&pcpu, c, 1, REC), 0);
	unpin();
	CHECK_EQ(grb_channel_flush(c, GRB_FLUSH_ACTIVE), 0);
	CHECK_U64(stats(hi).produced, SB);
	CHECK_EQ(grb_reader_open(hi), 0);
	CHECK_EQ(grb_reader_get_next(hi), 0);
	CHECK_EQ(grb_reader_put_next(hi), 0);
	CHECK_U64(stats(lo).produced, 0);

	/* The lowest CPU's buffer full: GRB_FLUSH_EMPTY refused there, a
	 * header-only sub-buffer in every other. */
	pin(cpu_lo);
	for (t = 1; t <= NSUB * 4; t++)
		CHECK_EQ(put(&pcpu, c, t, REC), 0);
	unpin();
	CHECK_EQ(grb_buf_flush(lo, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_flush(lo, GRB_FLUSH_EMPTY), -ENOBUFS);
	CHECK_EQ(grb_channel_flush(c, GRB_FLUSH_EMPTY), 0);
	for (i = 0; i < n; i++) {
		struct grb_buf *b = grb_channel_buf(c, i);

		CHECK_U64(stats(b).produced,
			  b == lo ? NSUB * SB : b == hi ? 2 * SB : SB);
	}
	grb_channel_destroy(c);
}

/*
 * Finalized and disabled: -ESHUTDOWN, which enabling does not undo, and
 * no counter moves; a reservation beyond the nesting bound is -EBUSY
 * first, counted in the finalized buffer's lost_nesting.
 */
static void test_finalized_refusals(int pc)
{
	const struct grb_config *cfg = variant(pc, 0);
	struct grb_channel *a = create(&raw, SB, NSUB), *c;
	struct grb_ctx open[GRB_MAX_NESTING];
	struct grb_buf_stats st;
	struct grb_buf *b;
	int i;

	c = open_variant(cfg, &b);
	CHECK_EQ(grb_channel_record_disable(c), 0);
	CHECK_EQ(put(cfg, c, 1, 8), -EAGAIN);
	CHECK_EQ(grb_channel_finalize(c), 0);
	CHECK_EQ(put(cfg, c, 1, 8), -ESHUTDOWN);
	CHECK_EQ(grb_channel_record_enable(c), 0);
	CHECK_EQ(put(cfg, c, 1, 8), -ESHUTDOWN);
	CHECK_EQ(grb_buf_record_enable(b), 0);
	CHECK_EQ(put(cfg, c, 1, SB * 2), -ESHUTDOWN);
	st = stats(b);
	CHECK_U64(lost_sum(&st), 0);
	CHECK_U64(st.written, 0);

	for (i = 0; i < GRB_MAX_NESTING; i++) {
		grb_ctx_init(&open[i], 8, 1);
		CHECK_EQ(grb_reserve(&raw, a, &open[i]), 0);
	}
	CHECK_EQ(put(cfg, c, 1, 8), -EBUSY);
	st = stats(b);
	CHECK_U64(st.lost_nesting, 1);
	CHECK_U64(lost_sum(&st), 1);
	CHECK_U64(stats(grb_channel_buf(a, 0)).lost_nesting, 0);
	for (i = GRB_MAX_NESTING - 1; i >= 0; i--) {
		grb_write_fill(&raw, &open[i], 0, 8);
		grb_commit(&raw, &open[i]);
	}
	CHECK_EQ(grb_channel_record_disable(NULL), -EINVAL);
	CHECK_EQ(grb_channel_record_enable(NULL), -EINVAL);
	grb_channel_destroy(a);
	close_variant(c);
}

/* ------------------------------------------------------------------ */
/* Counters. */

/*
 * Each refusal in one counter, discards in none but discarded, positions
 * in bytes, written ahead of delivery; then flushed and drained, written
 * == read + overwritten.
 */
static void test_counters(int pc)
{
	int ow;

	for (ow = 0; ow < 2; ow++) {
		const struct grb_config *cfg = variant(pc, ow);
		struct grb_buf *b;
		struct grb_channel *c = open_variant(cfg, &b);
		struct grb_ctx hold = GRB_CTX_INIT(REC, 1);
		struct grb_ctx d = GRB_CTX_INIT(REC, 1);
		struct grb_ctx e = GRB_CTX_INIT(0, 1);
		struct grb_buf_stats st;
		uint64_t t, written = 0;
		int ret;

		CHECK_EQ(grb_reader_open(b), 0);
		/* Written before any delivery. */
		CHECK_EQ(put(cfg, c, 1, REC), 0);
		written++;
		st = stats(b);
		CHECK_U64(st.written, 1);
		CHECK_U64(st.produced, REC);
		CHECK_U64(st.consumed, 0);
		/* An empty slot: -EINVAL, in no counter. */
		CHECK_EQ(grb_reserve(cfg, c, &e), -EINVAL);
		st = stats(b);
		CHECK_U64(lost_sum(&st), 0);
		CHECK_U64(st.produced, REC);
		/* Too big: lost_big only. */
		CHECK_EQ(put(cfg, c, 2, SB + 1), -ENOSPC);
		st = stats(b);
		CHECK_U64(st.lost_big, 1);
		CHECK_U64(lost_sum(&st), 1);
		/* A discarded reservation: discarded only. */
		CHECK_EQ(grb_reserve(cfg, c, &d), 0);
		CHECK_EQ(grb_try_discard_reserve(cfg, &d), 0);
		st = stats(b);
		CHECK_U64(st.discarded, 1);
		CHECK_U64(st.written, written);
		CHECK_U64(lost_sum(&st), 1);
		CHECK_U64(st.produced, SB);     /* the discard closed it */
		/* A record held open, then fill the ring behind it. */
		CHECK_EQ(grb_reserve(cfg, c, &hold), 0);
		grb_write_fill(cfg, &hold, 3, REC);
		written++;
		/*
		 * Fill the ring behind it until a sub-buffer cannot open:
		 * in discard mode slot 0 of the next lap, unread
		 * (lost_full); in overwrite mode slot 1, whose lap holds
		 * the open record (lost_wrap).
		 */
		for (t = 4; (ret = put(cfg, c, t, REC)) == 0; t++)
			written++;
		CHECK_EQ(ret, ow ? -EIO : -ENOBUFS);
		CHECK_U64(stats(b).produced, (ow ? NSUB + 1 : NSUB) * SB -
			  (SB - 4 * REC));
		st = stats(b);
		CHECK_U64(st.lost_wrap, ow ? 1 : 0);
		CHECK_U64(st.lost_full, ow ? 0 : 1);
		CHECK_U64(lost_sum(&st), 2);
		CHECK_U64(st.written, written - 1);
		grb_commit(cfg, &hold);
		CHECK_U64(stats(b).written, written);
		CHECK_U64(stats(b).discarded, 1);
		/* Flushed and drained. */
		grb_buf_flush(b, GRB_FLUSH_ACTIVE);
		while (grb_reader_get_next(b) == 0)
			CHECK_EQ(grb_reader_put_next(b), 0);
		st = stats(b);
		CHECK_U64(st.written, written);
		CHECK_U64(st.written, st.read + st.overwritten);
		CHECK_U64(st.consumed, st.produced);
		if (grb_channel_write_path(c, NULL) == GRB_WRITE_ATOMIC) {
			CHECK_U64(st.remote_commits, 0);
			CHECK_U64(st.remote_moves, 0);
		}
		CHECK_U64(st.lost_dead, 0);
		CHECK_U64(st.recovered, 0);
		expect_valid(b);
		close_variant(c);
	}
}

/* grb_channel_get_stats(): the sum over a per-CPU channel's buffers. */
static void test_channel_sum(void)
{
	struct grb_channel *c = create(&pcpu_ow, SB, NSUB);
	struct grb_buf_stats sum, one, want;
	unsigned int i;
	uint64_t t;

	pin(cpu_lo);
	for (t = 1; t <= 9; t++)
		CHECK_EQ(put(&pcpu_ow, c, t, REC), 0);
	CHECK_EQ(put(&pcpu_ow, c, t, SB * 2), -ENOSPC);
	pin(cpu_hi);
	for (t = 1; t <= 3; t++)
		CHECK_EQ(put(&pcpu_ow, c, t, REC), 0);
	unpin();
	memset(&want, 0, sizeof(want));
	for (i = 0; i < grb_channel_nr_bufs(c); i++) {
		one = stats(grb_channel_buf(c, i));
		want.written += one.written;
		want.produced += one.produced;
		want.lost_big += one.lost_big;
	}
	memset(&sum, 0xa5, sizeof(sum));
	CHECK_EQ(grb_channel_get_stats(c, &sum), 0);
	CHECK_U64(sum.written, 12);
	CHECK_U64(want.written, 12);
	CHECK_U64(sum.produced, want.produced);
	CHECK_U64(sum.lost_big, 1);
	CHECK_U64(sum.read, 0);
	CHECK_U64(sum.overwritten, 0);
	CHECK_U64(sum.remote_moves, 0);
	grb_channel_destroy(c);
}

/* grb_channel_memory(): the buffer's mapping plus the handles. */
static void test_memory(void)
{
	int ow;

	for (ow = 0; ow < 2; ow++) {
		struct grb_channel *c = create(ow ? &raw_ow : &raw, SB, 8);
		struct grb_buf *b = grb_channel_buf(c, 0);
		struct grb_memory m;

		CHECK_EQ(grb_channel_memory(c, &m), 0);
		CHECK_EQ(m.nr_bufs, 1);
		CHECK_U64(m.subbufs_per_buf, ow ? 9 : 8);
		CHECK_U64(m.data_bytes, (uint64_t)SB * (ow ? 9 : 8));
		/* The mapping, the channel's handle and the buffer's. */
		CHECK_U64(m.total_bytes, b->shm->map_size +
			  sizeof(struct grb_channel) + sizeof(struct grb_buf));
		CHECK_U64(m.total_bytes, m.data_bytes + m.control_bytes);
		grb_channel_destroy(c);
	}
}

/* ------------------------------------------------------------------ */
/* The checker. */

static void test_validate(void)
{
	struct grb_channel *c = create(&raw_ow, SB, NSUB);
	struct grb_buf *b = grb_channel_buf(c, 0);
	char msg[8];
	uint64_t v;

	CHECK_EQ(put(&raw_ow, c, 1, REC), 0);
	/* @msg cut to @cap: one byte holds the terminator alone. */
	memset(msg, 'x', sizeof(msg));
	b->shm->version++;
	CHECK_EQ(grb_buf_validate(b, msg, 1), -EUCLEAN);
	CHECK_EQ(msg[0], '\0');
	CHECK_EQ(msg[1], 'x');
	b->shm->version--;
	/* Geometry: each field the checker compares. */
	v = b->shm->num_subbuf;
	b->shm->num_subbuf = v * 2;
	CHECK_EQ(grb_buf_validate(b, NULL, 0), -EUCLEAN);
	b->shm->num_subbuf = v;
	v = b->shm->subbuf_size;
	b->shm->subbuf_size = v * 2;
	CHECK_EQ(grb_buf_validate(b, NULL, 0), -EUCLEAN);
	b->shm->subbuf_size = v;
	v = b->shm->nr_phys;
	b->shm->nr_phys = v - 1;
	CHECK_EQ(grb_buf_validate(b, NULL, 0), -EUCLEAN);
	b->shm->nr_phys = v;
	/* No @msg with room given: accepted. */
	CHECK_EQ(grb_buf_validate(b, NULL, 64), 0);
	/* @msg left alone when all hold, and with a @cap of 0. */
	memset(msg, 'x', sizeof(msg));
	CHECK_EQ(grb_buf_validate(b, msg, sizeof(msg)), 0);
	CHECK_EQ(msg[0], 'x');
	b->shm->magic++;
	CHECK_EQ(grb_buf_validate(b, msg, 0), -EUCLEAN);
	CHECK_EQ(msg[0], 'x');
	CHECK_EQ(grb_buf_validate(b, msg, sizeof(msg)), -EUCLEAN);
	CHECK(msg[0] != 'x');
	CHECK(memchr(msg, '\0', sizeof(msg)) != NULL);
	b->shm->magic--;
	CHECK_EQ(grb_buf_validate(NULL, msg, sizeof(msg)), -EINVAL);
	expect_valid(b);
	grb_channel_destroy(c);
}

/* ------------------------------------------------------------------ */
/* The basic client. */

static const struct grb_basic_attr basic_attr = {
	"audit", 4096, 4, GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 1,
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_basic_config(void)
{
	const struct grb_config *cfg;
	int a, m, z;

	for (a = 0; a < 2; a++) {
		for (m = 0; m < 2; m++) {
			for (z = 0; z < 3; z++) {
				cfg = grb_basic_config((enum grb_alloc)a,
						       (enum grb_mode)m, z);
				CHECK(cfg != NULL);
				CHECK_EQ(grb_config_check(cfg), 0);
				CHECK_EQ((int)cfg->alloc, a);
				CHECK_EQ((int)cfg->mode, m);
				CHECK(cfg->flags & GRB_CONFIG_SHARED);
				CHECK(cfg == grb_basic_config(
					      (enum grb_alloc)a,
					      (enum grb_mode)m, z));
			}
			/* Compression on or off: two configurations. */
			CHECK(grb_basic_config((enum grb_alloc)a,
					       (enum grb_mode)m, 0) !=
			      grb_basic_config((enum grb_alloc)a,
					       (enum grb_mode)m, 1));
		}
	}
	CHECK(!grb_basic_config((enum grb_alloc)2, GRB_MODE_DISCARD, 0));
	CHECK(!grb_basic_config((enum grb_alloc)-1, GRB_MODE_DISCARD, 0));
	CHECK(!grb_basic_config(GRB_ALLOC_PER_CPU, (enum grb_mode)2, 0));
}

static void test_basic_create(void)
{
	struct grb_basic_attr a = basic_attr;
	struct grb_basic *b = (struct grb_basic *)&a;

	CHECK_EQ(grb_basic_create(NULL, &b), -EINVAL);
	CHECK_EQ(grb_basic_create(&a, NULL), -EINVAL);
	a.alloc = (enum grb_alloc)2;
	CHECK_EQ(grb_basic_create(&a, &b), -EINVAL);
	a = basic_attr;
	a.mode = (enum grb_mode)-1;
	CHECK_EQ(grb_basic_create(&a, &b), -EINVAL);
	a = basic_attr;
	a.num_subbuf = 3;
	CHECK_EQ(grb_basic_create(&a, &b), -EINVAL);
	a = basic_attr;
	a.subbuf_size = 4096 + 1;
	CHECK_EQ(grb_basic_create(&a, &b), -EINVAL);
	CHECK(b == (struct grb_basic *)&a);
	a = basic_attr;
	a.name = NULL;
	CHECK_EQ(grb_basic_create(&a, &b), 0);
	CHECK_EQ(grb_basic_nr_bufs(b), 1);
	CHECK(grb_basic_channel(b) != NULL);
	grb_basic_destroy(b);
	CHECK_EQ(grb_basic_nr_bufs(NULL), 0);
	CHECK(grb_basic_channel(NULL) == NULL);
	grb_basic_destroy(NULL);
}

/* Write and reserve: their refusals, counted as grb_reserve()'s. */
static void test_basic_write(void)
{
	struct grb_basic *b;
	struct grb_basic_wctx w;
	struct grb_basic_event ev;
	struct grb_basic_counts c;
	char big[4096], out[64];
	uint64_t before, after;

	CHECK_EQ(grb_basic_create(&basic_attr, &b), 0);
	memset(big, 7, sizeof(big));
	CHECK_EQ(grb_basic_write(NULL, big, 1), -EINVAL);
	CHECK_EQ(grb_basic_write(b, NULL, 1), -EINVAL);
	CHECK_EQ(grb_basic_write(b, big, (size_t)GRB_BASIC_MAX_LEN + 1),
		 -EINVAL);
	CHECK_EQ(grb_basic_reserve(NULL, 1, &w), -EINVAL);
	CHECK_EQ(grb_basic_reserve(b, 1, NULL), -EINVAL);
	CHECK_EQ(grb_basic_reserve(b, (size_t)GRB_BASIC_MAX_LEN + 1, &w),
		 -EINVAL);
	CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
	CHECK_U64(c.lost, 0);
	CHECK_U64(c.written, 0);
	/* More than a sub-buffer holds with the headers: -ENOSPC, lost. */
	CHECK_EQ(grb_basic_write(b, big, sizeof(big)), -ENOSPC);
	CHECK_EQ(grb_basic_reserve(b, sizeof(big), &w), -ENOSPC);
	CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
	CHECK_U64(c.lost, 2);
	/* The largest that fits: header, full-timestamp record header. */
	CHECK_EQ(grb_basic_write(b, big, 4096 - 64 - 12), 0);
	/* An empty record from no data. */
	CHECK_EQ(grb_basic_write(b, NULL, 0), 0);
	/* Zero-copy: the timestamp is CLOCK_MONOTONIC now. */
	before = mono_ns();
	CHECK_EQ(grb_basic_reserve(b, 5, &w), 0);
	after = mono_ns();
	CHECK(w.timestamp >= before && w.timestamp <= after);
	memcpy(w.data, "hello", 5);
	grb_basic_commit(&w);

	CHECK_EQ(grb_basic_consume(b, 0, &ev, big, sizeof(big)), 0);
	CHECK_U64(ev.len, 4096 - 64 - 12);
	CHECK_EQ(ev.cpu, -1);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, NULL, 0), 0);
	CHECK_U64(ev.len, 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, out, sizeof(out)), 0);
	CHECK_U64(ev.len, 5);
	CHECK_U64(ev.timestamp, w.timestamp);
	CHECK_EQ(memcmp(out, "hello", 5), 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, out, sizeof(out)), -EAGAIN);
	CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
	CHECK_U64(c.written, 3);
	CHECK_U64(c.consumed, 3);
	CHECK_U64(c.entries, 0);
	grb_basic_destroy(b);
}

/* Consume and peek: every errno, in overwrite and discard mode. */
static void test_basic_read(void)
{
	int ow;

	for (ow = 0; ow < 2; ow++) {
		struct grb_basic_attr a = basic_attr;
		struct grb_basic_event ev;
		struct grb_basic_counts c;
		struct grb_basic *b;
		uint32_t v = 0;
		char out[2];

		a.mode = ow ? GRB_MODE_OVERWRITE : GRB_MODE_DISCARD;
		CHECK_EQ(grb_basic_create(&a, &b), 0);
		CHECK_EQ(grb_basic_consume(NULL, 0, &ev, &v, 4), -EINVAL);
		CHECK_EQ(grb_basic_consume(b, 0, NULL, &v, 4), -EINVAL);
		CHECK_EQ(grb_basic_consume(b, 1, &ev, &v, 4), -EINVAL);
		CHECK_EQ(grb_basic_peek(b, 1, &ev, &v, 4), -EINVAL);
		CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, 4), -EAGAIN);
		v = 42;
		CHECK_EQ(grb_basic_write(b, &v, 4), 0);
		v = 43;
		CHECK_EQ(grb_basic_write(b, &v, 4), 0);
		/* Overwrite mode: readable once the sub-buffer closes. */
		if (ow) {
			CHECK_EQ(grb_basic_peek(b, 0, &ev, &v, 4), -EAGAIN);
			CHECK_EQ(grb_basic_flush(b), 0);
		}
		/* Too small a destination: ev filled, the record stays. */
		memset(&ev, 0, sizeof(ev));
		CHECK_EQ(grb_basic_consume(b, 0, &ev, out, sizeof(out)),
			 -ENOBUFS);
		CHECK_U64(ev.len, 4);
		CHECK(ev.timestamp != 0);
		CHECK_EQ(grb_basic_consume(b, 0, &ev, NULL, 8), -ENOBUFS);
		v = 0;
		CHECK_EQ(grb_basic_peek(b, 0, &ev, &v, 4), 0);
		CHECK_EQ(v, 42);
		v = 0;
		CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, 4), 0);
		CHECK_EQ(v, 42);
		CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
		CHECK_U64(c.entries, 1);
		CHECK_U64(c.consumed, 1);
		CHECK_EQ(grb_basic_get_counts(b, 1, &c), -EINVAL);
		CHECK_EQ(grb_basic_get_counts(NULL, 0, &c), -EINVAL);
		CHECK_EQ(grb_basic_get_counts(b, 0, NULL), -EINVAL);
		/* Reset drops what is left. */
		CHECK_EQ(grb_basic_reset(b), 0);
		CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
		CHECK_U64(c.dropped, 1);
		CHECK_U64(c.entries, 0);
		CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, 4), -EAGAIN);
		/* Disabled: -EAGAIN, not lost. */
		CHECK_EQ(grb_basic_record_disable(b), 0);
		CHECK_EQ(grb_basic_write(b, &v, 4), -EAGAIN);
		CHECK_EQ(grb_basic_record_enable(b), 0);
		CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
		CHECK_U64(c.lost, 0);
		v = 44;
		CHECK_EQ(grb_basic_write(b, &v, 4), 0);
		/* Finalized: what is left is read, then -ENODATA. */
		CHECK_EQ(grb_basic_finalize(b), 0);
		CHECK_EQ(grb_basic_finalize(b), -EALREADY);
		CHECK_EQ(grb_basic_write(b, &v, 4), -ESHUTDOWN);
		v = 0;
		CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, 4), 0);
		CHECK_EQ(v, 44);
		CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, 4), -ENODATA);
		CHECK_EQ(grb_basic_peek(b, 0, &ev, &v, 4), -ENODATA);
		/* Released: the client reads no more. */
		CHECK_EQ(grb_basic_release_readers(b), 0);
		CHECK_EQ(grb_basic_release_readers(b), -EALREADY);
		CHECK_EQ(grb_basic_consume(b, 0, &ev, &v, 4), -EPERM);
		CHECK_EQ(grb_basic_peek(b, 0, &ev, &v, 4), -EPERM);
		CHECK_EQ(grb_basic_reset(b), -EPERM);
		grb_basic_destroy(b);
	}
	CHECK_EQ(grb_basic_reset(NULL), -EINVAL);
	CHECK_EQ(grb_basic_release_readers(NULL), -EINVAL);
	CHECK_EQ(grb_basic_record_disable(NULL), -EINVAL);
	CHECK_EQ(grb_basic_record_enable(NULL), -EINVAL);
	CHECK_EQ(grb_basic_flush(NULL), -EINVAL);
	CHECK_EQ(grb_basic_finalize(NULL), -EINVAL);
}

/* grb_basic_decode(): each refusal, in the order the header gives. */
static void test_basic_decode(void)
{
	const size_t hs = sizeof(struct grb_basic_subbuf_header);
	unsigned char sb[256];
	struct grb_basic_subbuf_header h;
	struct grb_basic_event ev;
	size_t next, poff;
	uint32_t w[4];
	uint64_t ts = UINT64_C(0x123456789);

	memset(sb, 0, sizeof(sb));
	memset(&h, 0, sizeof(h));
	h.magic = GRB_BASIC_MAGIC;
	h.cpu = 3;
	h.ts_begin = ts;
	memcpy(sb, &h, hs);
	/* A full-timestamp record of 4 bytes, then a compressed one. */
	w[0] = 4 | UINT32_C(0x80000000);
	memcpy(sb + hs, w, 4);
	memcpy(sb + hs + 4, &ts, 8);
	memcpy(sb + hs + 12, "abcd", 4);
	w[0] = 2;
	w[1] = (uint32_t)ts + 5;
	memcpy(sb + hs + 16, w, 8);
	memcpy(sb + hs + 24, "xy", 2);

	CHECK_EQ(grb_basic_decode(NULL, hs + 26, hs, 0, &ev, NULL, &next),
		 -EINVAL);
	CHECK_EQ(grb_basic_decode(sb, hs + 26, hs, 0, NULL, NULL, &next),
		 -EINVAL);
	CHECK_EQ(grb_basic_decode(sb, hs + 26, hs, 0, &ev, NULL, NULL),
		 -EINVAL);
	CHECK_EQ(grb_basic_decode(sb, hs - 1, hs, 0, &ev, NULL, &next),
		 -EINVAL);
	CHECK_EQ(grb_basic_decode(sb, hs + 26, hs - 4, 0, &ev, NULL, &next),
		 -EINVAL);
	CHECK_EQ(grb_basic_decode(sb, hs, hs, 0, &ev, NULL, &next),
		 -ENODATA);
	CHECK_EQ(grb_basic_decode(sb, hs + 26, hs + 26, 0, &ev, NULL, &next),
		 -ENODATA);
	/* Records running past the end, a compressed one with no base. */
	CHECK_EQ(grb_basic_decode(sb, hs + 15, hs, 0, &ev, NULL, &next),
		 -EBADMSG);
	CHECK_EQ(grb_basic_decode(sb, hs + 11, hs, 0, &ev, NULL, &next),
		 -EBADMSG);
	CHECK_EQ(grb_basic_decode(sb, hs + 26, hs + 16, 0, &ev, NULL, &next),
		 -EBADMSG);
	CHECK_EQ(grb_basic_decode(sb, hs + 25, hs + 16, ts, &ev, NULL,
				  &next), -EBADMSG);
	/* Read whole. */
	CHECK_EQ(grb_basic_decode(sb, hs + 26, hs, 0, &ev, &poff, &next), 0);
	CHECK_U64(ev.timestamp, ts);
	CHECK_U64(ev.len, 4);
	CHECK_EQ(ev.cpu, 3);
	CHECK_U64(poff, hs + 12);
	CHECK_U64(next, hs + 16);
	CHECK_EQ(grb_basic_decode(sb, hs + 26, next, ev.timestamp, &ev, &poff,
				  &next), 0);
	CHECK_U64(ev.timestamp, ts + 5);
	CHECK_U64(ev.len, 2);
	CHECK_U64(poff, hs + 24);
	CHECK_U64(next, hs + 26);
	/* A low word below the previous one: the low bits wrapped. */
	CHECK_EQ(grb_basic_decode(sb, hs + 26, hs + 16, ts + 10, &ev, NULL,
				  &next), 0);
	CHECK_U64(ev.timestamp, ts + 5 + (UINT64_C(1) << 32));
	/* Not a basic sub-buffer. */
	h.magic = ~GRB_BASIC_MAGIC;
	memcpy(sb, &h, hs);
	CHECK_EQ(grb_basic_decode(sb, hs + 26, hs, 0, &ev, NULL, &next),
		 -EBADMSG);
}

int main(void)
{
	int pc;

	read_cpus();
	test_create_out_untouched();
	test_create_enomem();
	test_flush_delivery();
	for (pc = 0; pc < 2; pc++) {
		test_flush_empty_refused(pc);
		test_finalized_refusals(pc);
		test_counters(pc);
	}
	test_channel_flush_all();
	test_channel_sum();
	test_memory();
	test_validate();
	test_basic_config();
	test_basic_create();
	test_basic_write();
	test_basic_read();
	test_basic_decode();
	printf("test_channel_audit: passed\n");
	return 0;
}
