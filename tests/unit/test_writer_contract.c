/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_writer_contract.c - what grb/writer.h and grb/channel.h
 * promise about refusals, discards, flushes and counters, on both write
 * paths, where the other unit tests do not already check it:
 *
 *  - every refusal of grb_reserve() reserves nothing, moves exactly the
 *    one lost_* counter its errno names (-EBUSY, -ENOBUFS, -EIO,
 *    -ENOSPC) or none (-EAGAIN, -ESHUTDOWN, -EINVAL), and leaves the
 *    thread's nesting depth as it was; -EBUSY (nesting) comes before
 *    -EAGAIN and -ESHUTDOWN and is counted even then;
 *  - a slot of alignment padding alone is reserved and counts as a
 *    record; an empty slot is -EINVAL;
 *  - the outputs of a reservation (buffer, CPU, timestamp, slot bounds);
 *  - grb_try_discard_reserve(): success gives the nesting level back and
 *    the next record opens a sub-buffer with a full timestamp; -EBUSY
 *    changes nothing (no counter, the caller still holds its level),
 *    also when tried from another CPU; the closed sub-buffer waits for
 *    its other records' commits;
 *  - flushes: GRB_FLUSH_EMPTY closes an open sub-buffer without adding a
 *    header-only one; a flush that closes nothing (-ENODATA, or
 *    GRB_FLUSH_EMPTY refused with -ENOBUFS or -EIO) changes no counter,
 *    remote_moves included ("every flush that moves the position");
 *    grb_channel_flush() still returns 0;
 *  - statistics: written counts committed records only, undelivered ones
 *    included; grb_channel_get_stats() is the sum of every buffer's.
 *
 * Each case runs on per-CPU configurations with GRB_CONFIG_SYNC_PER_CPU
 * (the rseq path where this machine allows it) and per-channel ones,
 * each created once as the environment decides and once under
 * GRB_SYNC=atomic, so both paths are checked in every run.  The thread
 * is pinned to one CPU so that a per-CPU channel's records share a
 * buffer; the cases that leave that CPU need a second one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "chan_rig.h"
#include "expect_path.h"
#include "grb/grb.h"

#define SB 4096
#define NSB 4

static uint64_t clock_now = UINT64_C(1) << 40;

static uint64_t clock_step(void)
{
	return ++clock_now;
}

static const struct grb_config pc_d = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 }, GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config pc_o = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 0, { 0 },
	GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config pc_ts = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 16, { .clock_read = clock_step },
	GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config ch_d = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 }, 0,
};
static const struct grb_config ch_o = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 0, { 0 }, 0,
};
static const struct grb_config ch_ts = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 16,
	{ .clock_read = clock_step }, 0,
};

/* ---- CPUs ------------------------------------------------------------ */

static cpu_set_t all_cpus;
static int cpus[2], ncpus;

/* ---- a channel under test --------------------------------------------- */

/* n on the per-CPU path, 0 on the atomic one. */
#define R(g, n) ((g)->rseq ? (uint64_t)(n) : 0)

static void rig_open(struct rig *g, const struct grb_config *cfg,
		     const char *name, int force_atomic)
{
	chan_rig_open(g, cfg, name, SB, NSB, force_atomic, cpus[0]);
}

/* Reserve @size bytes aligned on @align and fill them with @c. */
static int reserve_fill(const struct rig *g, struct grb_ctx *ctx,
			size_t size, size_t align, int c)
{
	int ret;

	*ctx = (struct grb_ctx)GRB_CTX_INIT(size, align);
	ret = grb_reserve(g->cfg, g->chan, ctx);
	if (ret == 0)
		grb_write_fill(g->cfg, ctx, c, size);
	return ret;
}

static int put(const struct rig *g, size_t size)
{
	struct grb_ctx ctx;
	int ret = reserve_fill(g, &ctx, size, 1, 0x5a);

	if (ret == 0)
		grb_commit(g->cfg, &ctx);
	return ret;
}

static void chan_stats(const struct rig *g, struct grb_buf_stats *st)
{
	CHECK_EQ(grb_channel_get_stats(g->chan, st), 0);
}

#define NFIELDS (sizeof(struct grb_buf_stats) / sizeof(uint64_t))

static const char *const field_names[NFIELDS] = {
	"written", "read", "overwritten", "lost_full", "lost_wrap",
	"lost_big", "lost_nesting", "discarded", "produced", "consumed",
	"lost_dead", "recovered", "remote_commits", "remote_moves",
};

#define FIELD(name) (offsetof(struct grb_buf_stats, name) / sizeof(uint64_t))

static uint64_t field(const struct grb_buf_stats *st, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)st + i * sizeof(uint64_t), sizeof(v));
	return v;
}

/*
 * Every counter moved by exactly @delta[i] between @a and @b (a NULL
 * @delta: none moved).
 */
static void expect_delta(const struct rig *g, const struct grb_buf_stats *a,
			 const struct grb_buf_stats *b, const uint64_t *delta,
			 int line)
{
	size_t i;

	for (i = 0; i < NFIELDS; i++) {
		uint64_t want = delta ? delta[i] : 0;

		if (field(b, i) - field(a, i) != want) {
			fprintf(stderr, "line %d, %s (%s path): %s moved by "
				"%lld, expected %llu\n", line, g->name,
				g->rseq ? "rseq" : "atomic", field_names[i],
				(long long)(field(b, i) - field(a, i)),
				(unsigned long long)want);
			CHECK(0);
		}
	}
}

/* Exactly GRB_MAX_NESTING reservations fit on this thread, then -EBUSY. */
static void expect_nesting_free(const struct rig *g, unsigned int held)
{
	struct grb_ctx ctx[GRB_MAX_NESTING + 1];
	unsigned int i, n = GRB_MAX_NESTING - held;

	for (i = 0; i < n; i++)
		CHECK_EQ(reserve_fill(g, &ctx[i], 8, 1, 1), 0);
	CHECK_EQ(reserve_fill(g, &ctx[n], 8, 1, 1), -EBUSY);
	while (i-- > 0)
		grb_commit(g->cfg, &ctx[i]);
}

/*
 * A reservation of @size bytes aligned on @align refused with @err: the
 * channel's counters move by one in @lost (a FIELD() index), or by
 * nothing when @lost is NFIELDS, and nothing is reserved.
 */
static void expect_refused_at(const struct rig *g, size_t size, size_t align,
			      int err, size_t lost, int line)
{
	uint64_t delta[NFIELDS] = { 0 };
	struct grb_buf_stats a, b;
	struct grb_ctx ctx;

	chan_stats(g, &a);
	ctx = (struct grb_ctx)GRB_CTX_INIT(size, align);
	if (grb_reserve(g->cfg, g->chan, &ctx) != err) {
		fprintf(stderr, "line %d, %s: expected %d\n", line, g->name,
			err);
		CHECK(0);
	}
	chan_stats(g, &b);
	if (lost < NFIELDS)
		delta[lost] = 1;
	expect_delta(g, &a, &b, delta, line);
}

#define expect_refused(g, size, align, err, lost) \
	expect_refused_at(g, size, align, err, lost, __LINE__)
#define NONE NFIELDS

/* Take the next sub-buffer of g->buf: it holds @records in @size bytes. */
static void expect_subbuf(const struct rig *g, uint64_t records, size_t size)
{
	struct grb_reader_subbuf sb;

	CHECK_EQ(grb_reader_get_next(g->buf), 0);
	CHECK_EQ(grb_reader_held(g->buf, &sb), 0);
	CHECK_U64(sb.records, records);
	CHECK_U64(sb.data_size, size);
	CHECK_EQ(grb_reader_put_next(g->buf), 0);
}

/* ---- 1. refusals and their counters ------------------------------------ */

/*
 * The outputs of a reservation, and the empty and padding-only slots
 * (writer.h: "-EINVAL the slot would be empty ... A slot of alignment
 * padding alone is reserved, and counts as a record").
 */
static void case_ctx_and_empty(const struct rig *g)
{
	struct grb_buf_stats a, b;
	struct grb_ctx ctx;
	uint64_t delta[NFIELDS] = { 0 };

	/* At a sub-buffer boundary, and inside one at an aligned offset. */
	expect_refused(g, 0, 1, -EINVAL, NONE);
	expect_refused(g, 0, 8, -EINVAL, NONE);
	CHECK_EQ(reserve_fill(g, &ctx, 3, 1, 0x11), 0);
	CHECK(ctx.buf == g->buf);
	CHECK_EQ(ctx.cpu, g->cfg->alloc == GRB_ALLOC_PER_CPU ? cpus[0] : 0);
	CHECK_U64(ctx.timestamp, 0);
	CHECK_U64(ctx.pre_offset, 0);
	CHECK_U64(ctx.end, 3);
	CHECK_U64(ctx.slot_size, ctx.end - ctx.pre_offset);
	CHECK(ctx.wptr == ctx.wend);
	grb_commit(g->cfg, &ctx);
	/* Offset 3: five bytes of padding before an aligned empty payload. */
	chan_stats(g, &a);
	ctx = (struct grb_ctx)GRB_CTX_INIT(0, 8);
	CHECK_EQ(grb_reserve(g->cfg, g->chan, &ctx), 0);
	CHECK_U64(ctx.pre_offset, 3);
	CHECK_U64(ctx.slot_size, 5);
	grb_ctx_align(g->cfg, &ctx, 8);
	CHECK(ctx.wptr == ctx.wend);
	grb_commit(g->cfg, &ctx);
	chan_stats(g, &b);
	delta[FIELD(written)] = 1;
	delta[FIELD(produced)] = 5;
	expect_delta(g, &a, &b, delta, __LINE__);
	/* Offset 8 is aligned: that slot would be empty. */
	expect_refused(g, 0, 8, -EINVAL, NONE);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	expect_subbuf(g, 2, 8);
	expect_nesting_free(g, 0);
}

/* -ENOSPC in an open sub-buffer and at a boundary: lost_big. */
static void case_too_big(const struct rig *g)
{
	CHECK_EQ(put(g, 8), 0);
	expect_refused(g, SB + 1, 1, -ENOSPC, FIELD(lost_big));
	expect_refused(g, SIZE_MAX, 1, -ENOSPC, FIELD(lost_big));
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	expect_refused(g, SB + 1, 1, -ENOSPC, FIELD(lost_big));
	/* A record that fills a sub-buffer exactly fits. */
	CHECK_EQ(put(g, SB), 0);
	expect_subbuf(g, 1, 8);
	expect_subbuf(g, 1, SB);
	expect_nesting_free(g, 0);
}

/* Hold every nesting level of this thread on @other's channel. */
static void hold_all(const struct rig *other, struct grb_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < GRB_MAX_NESTING; i++)
		CHECK_EQ(reserve_fill(other, &ctx[i], 8, 1, 2), 0);
}

static void release_all(const struct rig *other, struct grb_ctx *ctx)
{
	unsigned int i = GRB_MAX_NESTING;

	while (i-- > 0)
		grb_commit(other->cfg, &ctx[i]);
}

/*
 * -EBUSY beyond GRB_MAX_NESTING: counted as lost_nesting on the channel
 * refused, and "checked first, before -EAGAIN and -ESHUTDOWN", so
 * counted there too.
 * @other is a second channel on which the levels are held, so that
 * finalizing this one does not break its "writers have stopped" rule.
 */
static void case_nesting_first(const struct rig *g, const struct rig *other)
{
	struct grb_ctx held[GRB_MAX_NESTING];

	CHECK_EQ(put(g, 8), 0);
	hold_all(other, held);
	expect_refused(g, 8, 1, -EBUSY, FIELD(lost_nesting));
	CHECK_EQ(grb_channel_record_disable(g->chan), 0);
	expect_refused(g, 8, 1, -EBUSY, FIELD(lost_nesting));
	release_all(other, held);
	expect_refused(g, 8, 1, -EAGAIN, NONE);
	expect_refused(g, SB + 1, 1, -EAGAIN, NONE);
	CHECK_EQ(grb_channel_record_enable(g->chan), 0);
	CHECK_EQ(grb_channel_finalize(g->chan), 0);
	expect_refused(g, 8, 1, -ESHUTDOWN, NONE);
	expect_refused(g, SB + 1, 1, -ESHUTDOWN, NONE);
	hold_all(other, held);
	expect_refused(g, 8, 1, -EBUSY, FIELD(lost_nesting));
	release_all(other, held);
	expect_subbuf(g, 1, 8);
	CHECK_EQ(grb_reader_get_next(g->buf), -ENODATA);
	expect_nesting_free(other, 0);
}

/*
 * Discard mode: -ENOBUFS (lost_full) once the ring is full, and the
 * GRB_FLUSH_EMPTY that cannot open a sub-buffer: -ENOBUFS, counting
 * nothing, remote_moves included, and grb_channel_flush() still 0.
 */
static void case_full(const struct rig *g)
{
	struct grb_buf_stats a, b;
	int i;

	for (i = 0; i < 4 * NSB; i++)
		CHECK_EQ(put(g, 1000), 0);
	expect_refused(g, 1000, 1, -ENOBUFS, FIELD(lost_full));
	expect_refused(g, 1000, 1, -ENOBUFS, FIELD(lost_full));
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	chan_stats(g, &a);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), -ENODATA);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_EMPTY), -ENOBUFS);
	chan_stats(g, &b);
	expect_delta(g, &a, &b, NULL, __LINE__);
	/* The other buffers of a per-CPU channel get header-only ones. */
	CHECK_EQ(grb_channel_flush(g->chan, GRB_FLUSH_EMPTY), 0);
	CHECK_EQ(grb_channel_flush(g->chan, GRB_FLUSH_ACTIVE), 0);
	expect_refused(g, 8, 1, -ENOBUFS, FIELD(lost_full));
	for (i = 0; i < NSB; i++)
		expect_subbuf(g, 4, 4000);
	CHECK_EQ(put(g, 8), 0);
	expect_nesting_free(g, 0);
}

/*
 * Overwrite mode: -EIO (lost_wrap) while a record of the previous lap is
 * uncommitted, and GRB_FLUSH_EMPTY refused with -EIO, counting nothing.
 */
static void case_wrap(const struct rig *g)
{
	struct grb_buf_stats a, b;
	struct grb_ctx r;
	int i;

	CHECK_EQ(reserve_fill(g, &r, 8, 1, 3), 0);
	for (i = 0; i < 4 * NSB; i++)
		CHECK_EQ(put(g, 1000), 0);
	expect_refused(g, 1000, 1, -EIO, FIELD(lost_wrap));
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	chan_stats(g, &a);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_EMPTY), -EIO);
	chan_stats(g, &b);
	expect_delta(g, &a, &b, NULL, __LINE__);
	CHECK_EQ(grb_channel_flush(g->chan, GRB_FLUSH_EMPTY), 0);
	expect_refused(g, 8, 1, -EIO, FIELD(lost_wrap));
	grb_commit(g->cfg, &r);
	CHECK_EQ(put(g, 8), 0);
	expect_nesting_free(g, 0);
}

/* ---- 2. discards -------------------------------------------------------- */

/*
 * Success: the level is given back, `discarded` grows by one and nothing
 * else but the position, and the next record opens a new sub-buffer with
 * a full timestamp.  -EBUSY: nothing changed, and the caller still holds
 * its level until it commits.
 */
static void case_discard(const struct rig *g)
{
	uint64_t delta[NFIELDS] = { 0 };
	struct grb_buf_stats a, b;
	struct grb_ctx x, y;

	CHECK_EQ(put(g, 8), 0);
	CHECK_EQ(reserve_fill(g, &x, 8, 1, 4), 0);
	CHECK_EQ(x.rflags & GRB_RFLAG_FULL_TIMESTAMP, 0);
	chan_stats(g, &a);
	CHECK_EQ(grb_try_discard_reserve(g->cfg, &x), 0);
	chan_stats(g, &b);
	delta[FIELD(discarded)] = 1;
	delta[FIELD(produced)] = SB - 16;
	expect_delta(g, &a, &b, delta, __LINE__);
	CHECK_EQ(reserve_fill(g, &x, 8, 1, 5), 0);
	CHECK_U64(x.pre_offset, SB);
	CHECK(x.rflags & GRB_RFLAG_FULL_TIMESTAMP);
	/* The discard gave its level back: x holds the only one. */
	expect_nesting_free(g, 1);
	grb_commit(g->cfg, &x);

	/* Refused: another reservation came after it. */
	CHECK_EQ(reserve_fill(g, &x, 8, 1, 6), 0);
	CHECK_EQ(reserve_fill(g, &y, 8, 1, 7), 0);
	chan_stats(g, &a);
	CHECK_EQ(grb_try_discard_reserve(g->cfg, &x), -EBUSY);
	chan_stats(g, &b);
	expect_delta(g, &a, &b, NULL, __LINE__);
	expect_nesting_free(g, 2);
	grb_commit(g->cfg, &y);
	expect_nesting_free(g, 1);
	grb_commit(g->cfg, &x);
	expect_nesting_free(g, 0);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	expect_subbuf(g, 1, 8);
	/* The second: 5, and the skipped 6 and 7, and expect_nesting_free's. */
	CHECK_EQ(grb_reader_get_next(g->buf), 0);
	CHECK_EQ(grb_reader_put_next(g->buf), 0);
}

/*
 * A discard closes its sub-buffer where the slot begins; an earlier
 * record still reserved in it holds the delivery back until its commit,
 * which then delivers it ("delivered once its other records are
 * committed").
 */
static void case_discard_waits(const struct rig *g)
{
	struct grb_ctx e, d;

	CHECK_EQ(put(g, 8), 0);
	CHECK_EQ(reserve_fill(g, &e, 24, 1, 8), 0);
	CHECK_EQ(reserve_fill(g, &d, 40, 1, 9), 0);
	CHECK_EQ(grb_try_discard_reserve(g->cfg, &d), 0);
	CHECK_EQ(grb_reader_get_next(g->buf), -EAGAIN);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), -ENODATA);
	grb_commit(g->cfg, &e);
	expect_subbuf(g, 2, 32);
	CHECK_EQ(grb_reader_get_next(g->buf), -EAGAIN);
	expect_nesting_free(g, 0);
}

/*
 * A discard refused after the thread moved to another CPU: "nothing
 * changed" holds there too, remote_moves included (channel.h: remote
 * moves are write-position moves).  Then the records commit remotely.
 */
static void case_discard_moved(const struct rig *g)
{
	uint64_t delta[NFIELDS] = { 0 };
	struct grb_buf_stats a, b;
	struct grb_ctx x, y;

	CHECK_EQ(put(g, 8), 0);
	CHECK_EQ(reserve_fill(g, &x, 8, 1, 10), 0);
	CHECK_EQ(reserve_fill(g, &y, 8, 1, 11), 0);
	pin(cpus[1]);
	chan_stats(g, &a);
	CHECK_EQ(grb_try_discard_reserve(g->cfg, &x), -EBUSY);
	chan_stats(g, &b);
	expect_delta(g, &a, &b, NULL, __LINE__);
	/* The last one can go: one remote move, one remote commit. */
	CHECK_EQ(grb_try_discard_reserve(g->cfg, &y), 0);
	chan_stats(g, &a);
	delta[FIELD(discarded)] = 1;
	delta[FIELD(produced)] = SB - 24;
	delta[FIELD(remote_moves)] = R(g, 1);
	delta[FIELD(remote_commits)] = R(g, 1);
	expect_delta(g, &b, &a, delta, __LINE__);
	grb_commit(g->cfg, &x);
	pin(cpus[0]);
	expect_subbuf(g, 2, 16);
	expect_nesting_free(g, 0);
}

/* ---- 3. flushes and statistics ------------------------------------------ */

/*
 * GRB_FLUSH_EMPTY with a sub-buffer open closes that one only; with none
 * open it adds a header-only one.  A flush with nothing to close counts
 * nothing.
 */
static void case_flush_empty(const struct rig *g)
{
	uint64_t delta[NFIELDS] = { 0 };
	struct grb_buf_stats a, b;

	CHECK_EQ(put(g, 8), 0);
	chan_stats(g, &a);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_EMPTY), 0);
	chan_stats(g, &b);
	delta[FIELD(produced)] = SB - 8;
	delta[FIELD(remote_moves)] = R(g, 1);
	expect_delta(g, &a, &b, delta, __LINE__);
	expect_subbuf(g, 1, 8);
	CHECK_EQ(grb_reader_get_next(g->buf), -EAGAIN);
	chan_stats(g, &a);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), -ENODATA);
	chan_stats(g, &b);
	expect_delta(g, &a, &b, NULL, __LINE__);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_EMPTY), 0);
	chan_stats(g, &a);
	delta[FIELD(produced)] = SB;
	delta[FIELD(consumed)] = 0;
	expect_delta(g, &b, &a, delta, __LINE__);
	expect_subbuf(g, 0, 0);
	CHECK_EQ(grb_reader_get_next(g->buf), -EAGAIN);
}

/*
 * written: committed records, including those of sub-buffers not yet
 * delivered, never a record only reserved; read and overwritten once
 * drained; the channel's counters are the sum of its buffers'.
 */
static void case_stats(const struct rig *g)
{
	struct grb_buf_stats a, b, sum;
	struct grb_ctx x;
	unsigned int i;
	size_t f;

	chan_stats(g, &a);
	CHECK_EQ(reserve_fill(g, &x, 16, 1, 12), 0);
	chan_stats(g, &b);
	CHECK_U64(b.written, a.written);
	grb_commit(g->cfg, &x);
	CHECK_EQ(put(g, 16), 0);
	chan_stats(g, &b);
	CHECK_U64(b.written, a.written + 2);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	while (grb_reader_get_next(g->buf) == 0)
		CHECK_EQ(grb_reader_put_next(g->buf), 0);
	CHECK_EQ(grb_buf_get_stats(g->buf, &b), 0);
	CHECK_U64(b.written, 2);
	CHECK_U64(b.written, b.read + b.overwritten);
	CHECK_U64(b.produced, b.consumed);
	/* Records in another buffer too, and some refused. */
	if (ncpus > 1 && g->cfg->alloc == GRB_ALLOC_PER_CPU) {
		pin(cpus[1]);
		CHECK_EQ(put(g, 16), 0);
		expect_refused(g, SB + 1, 1, -ENOSPC, FIELD(lost_big));
		pin(cpus[0]);
	}
	CHECK_EQ(put(g, 24), 0);
	expect_refused(g, SB + 1, 1, -ENOSPC, FIELD(lost_big));
	chan_stats(g, &a);
	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < grb_channel_nr_bufs(g->chan); i++) {
		CHECK_EQ(grb_buf_get_stats(grb_channel_buf(g->chan, i), &b), 0);
		for (f = 0; f < NFIELDS; f++) {
			uint64_t v = field(&sum, f) + field(&b, f);

			memcpy((char *)&sum + f * sizeof(uint64_t), &v,
			       sizeof(v));
		}
	}
	expect_delta(g, &a, &sum, NULL, __LINE__);
}

/* ---- driver -------------------------------------------------------------- */

typedef void (*case_fn)(const struct rig *g);

static void run_case(const struct grb_config *cfg, const char *name,
		     case_fn fn, int force_atomic)
{
	struct rig g;

	rig_open(&g, cfg, name, force_atomic);
	fn(&g);
	chan_rig_close(&g);
}

static void run_nesting(const struct grb_config *cfg, const char *name,
			int force_atomic)
{
	struct rig g, other;

	rig_open(&g, cfg, name, force_atomic);
	rig_open(&other, cfg, "other", force_atomic);
	case_nesting_first(&g, &other);
	chan_rig_close(&other);
	chan_rig_close(&g);
}

static void run_all(int force_atomic)
{
	static const struct {
		const struct grb_config *d, *o, *ts;
		const char *name;
	} sets[] = {
		{ &pc_d, &pc_o, &pc_ts, "per-CPU sync" },
		{ &ch_d, &ch_o, &ch_ts, "per-channel" },
	};
	size_t i;

	for (i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		run_case(sets[i].d, sets[i].name, case_ctx_and_empty,
			 force_atomic);
		run_case(sets[i].o, sets[i].name, case_ctx_and_empty,
			 force_atomic);
		run_case(sets[i].d, sets[i].name, case_too_big, force_atomic);
		run_case(sets[i].o, sets[i].name, case_too_big, force_atomic);
		run_nesting(sets[i].d, sets[i].name, force_atomic);
		run_nesting(sets[i].o, sets[i].name, force_atomic);
		run_case(sets[i].d, sets[i].name, case_full, force_atomic);
		run_case(sets[i].o, sets[i].name, case_wrap, force_atomic);
		run_case(sets[i].ts, sets[i].name, case_discard, force_atomic);
		run_case(sets[i].d, sets[i].name, case_discard_waits,
			 force_atomic);
		run_case(sets[i].o, sets[i].name, case_discard_waits,
			 force_atomic);
		if (ncpus > 1) {
			run_case(sets[i].ts, sets[i].name, case_discard_moved,
				 force_atomic);
			run_case(sets[i].o, sets[i].name, case_discard_moved,
				 force_atomic);
		}
		run_case(sets[i].d, sets[i].name, case_flush_empty,
			 force_atomic);
		run_case(sets[i].o, sets[i].name, case_flush_empty,
			 force_atomic);
		run_case(sets[i].d, sets[i].name, case_stats, force_atomic);
		run_case(sets[i].o, sets[i].name, case_stats, force_atomic);
	}
}

int main(void)
{
	struct rig g;
	int c;

	setvbuf(stdout, NULL, _IONBF, 0);
	CHECK_EQ(sched_getaffinity(0, sizeof(all_cpus), &all_cpus), 0);
	for (c = 0; c < CPU_SETSIZE && ncpus < 2; c++)
		if (CPU_ISSET(c, &all_cpus))
			cpus[ncpus++] = c;
	CHECK(ncpus > 0);
	pin(cpus[0]);
	rig_open(&g, &pc_d, "probe", 0);
	printf("per-CPU sync channels: %s path\n",
	       g.rseq ? "rseq" : "atomic");
	chan_rig_close(&g);
	if (ncpus < 2)
		printf("note: one CPU only: the cases that move are skipped\n");
	run_all(0);
	run_all(1);
	printf("test_writer_contract: passed\n");
	return 0;
}
