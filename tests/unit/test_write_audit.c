/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_write_audit.c - promises of grb/writer.h (and of
 * grb/channel.h about the write path and its remote counters) that the
 * other writer tests leave unchecked:
 *
 *  1. the context: grb_ctx_init() sets the inputs only, GRB_CTX_INIT
 *     zeroes the outputs, and grb_reserve() fills every output (owner per
 *     thread, jent NULL in a private buffer, cc_done a lap's byte total);
 *  2. refusals: -EBUSY (nesting) and -ENOSPC counted in the buffer of
 *     the calling CPU, whichever it is; a finalized channel is
 *     -ESHUTDOWN even while disabled, whichever came first; -EIO, not
 *     -ENOBUFS, in discard mode when the lap's sub-buffer is uncommitted;
 *     a slot of padding alone at a sub-buffer boundary (after a
 *     sub-buffer header) is a record, an empty one -EINVAL that opens
 *     nothing; in a shared buffer whose journal slots live threads hold
 *     all, -EBUSY (lost_nesting) before -EAGAIN and -ESHUTDOWN;
 *  3. GRB_MAX_NESTING reservations open at once on one thread through
 *     nested signal handlers (grb_reserve() and grb_write_record()): the
 *     next is -EBUSY, counted once in the calling CPU's buffer, its fill
 *     never called; the records land in reservation order;
 *  4. contexts committed and discarded by another thread: the levels go
 *     back to the reserving thread, never to the committer, and the
 *     committer's own refusal is counted in its own CPU's buffer;
 *  5. grb_try_discard_reserve(): a slot that ends at its sub-buffer's end
 *     can be discarded after a later record (no move, no remote move);
 *     -EBUSY after a flush, after a record that opened the next
 *     sub-buffer, and after a later reservation was discarded; not after
 *     a later reservation that was refused;
 *  6. remote_commits and remote_moves: a reservation whose move runs off
 *     the buffer's CPU is one remote move, a refused one none; a
 *     GRB_FLUSH_EMPTY opens a header-only sub-buffer with one remote move,
 *     and one remote commit when run off the CPU; a thread without rseq
 *     pays exactly one of each per record;
 *  7. grb_channel_write_path() on shared configurations under
 *     GRB_SYNC=atomic (ENV before SHARED) and on attached channels (SHARED
 *     or AS_ASKED, whatever the environment);
 *  8. grb/align.h: the pointer helpers assert their alignment too.
 *
 * Every case runs on per-CPU configurations with GRB_CONFIG_SYNC_PER_CPU
 * and on per-channel ones, discard and overwrite, each channel created
 * as the environment decides and once under GRB_SYNC=atomic, so both
 * write paths are checked in every run (remote counters: the stated
 * count on the per-CPU path, 0 on the atomic one).  Cases that move the
 * thread need two CPUs; with one they say so and check what they can.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan_rig.h"
#include "check.h"
#include "expect_path.h"
#include "grb/align.h"
#include "grb/grb.h"
#include "grb/shm.h"

#define SB 4096
#define NSB 4
/* Record header: u32 payload length, u32 magic; then the payload, every
 * byte of it the record's tag. */
#define RH 8
#define MAGIC 0x61756474u

/* ---- the client ---------------------------------------------------------- */

/*
 * When set (a CPU), the next record_header_size call of this thread moves
 * it to that CPU: inside grb_reserve(), after the buffer is picked and
 * before the position moves, which is where a preemption can migrate a
 * real writer.
 */
static _Thread_local int move_in_hdr = -1;

static size_t rec_hdr(const struct grb_config *cfg, size_t off, size_t *pre,
		      const struct grb_ctx *ctx)
{
	int c = move_in_hdr;

	(void)cfg;
	(void)off;
	(void)ctx;
	*pre = 0;
	if (c >= 0) {
		move_in_hdr = -1;
		pin(c);
	}
	return RH;
}

#define CB { .record_header_size = rec_hdr }
static const struct grb_config pc_d = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, CB, GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config pc_o = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 0, CB, GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config ch_d = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, CB, 0,
};
static const struct grb_config ch_o = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 0, CB, 0,
};

/* Write the record into a reserved context: header, then the tag. */
static void write_rec(const struct grb_config *cfg, struct grb_ctx *ctx,
		      unsigned char tag)
{
	uint32_t h[2] = { (uint32_t)ctx->data_size, MAGIC };

	grb_write(cfg, ctx, h, sizeof(h));
	grb_write_fill(cfg, ctx, tag, ctx->data_size);
}

/* ---- CPUs and channels --------------------------------------------------- */

static cpu_set_t all_cpus;
static int cpus[2], ncpus;

/* n on the per-CPU path, 0 on the atomic one. */
#define R(g, n) ((g)->rseq ? (uint64_t)(n) : 0)
#define PER_CPU(g) ((g)->cfg->alloc == GRB_ALLOC_PER_CPU)

static void rig_open(struct rig *g, const struct grb_config *cfg,
		     const char *name, int force_atomic)
{
	chan_rig_open(g, cfg, name, SB, NSB, force_atomic, cpus[0]);
}

/* The buffer a writer on CPU c uses. */
static unsigned int buf_of(const struct rig *g, int c)
{
	return PER_CPU(g) ? (unsigned int)c : 0;
}

/* Reserve a record of @size payload bytes and write it, tagged @tag. */
static int res(const struct rig *g, struct grb_ctx *ctx, size_t size,
	       unsigned char tag)
{
	int ret;

	*ctx = (struct grb_ctx)GRB_CTX_INIT(size, 1);
	ret = grb_reserve(g->cfg, g->chan, ctx);
	if (ret == 0)
		write_rec(g->cfg, ctx, tag);
	return ret;
}

static void put(const struct rig *g, size_t size, unsigned char tag)
{
	struct grb_ctx ctx;

	CHECK_EQ(res(g, &ctx, size, tag), 0);
	grb_commit(g->cfg, &ctx);
}

/* Exactly GRB_MAX_NESTING - @held more reservations fit on this thread. */
static void nesting_free_at(const struct rig *g, unsigned int held, int line)
{
	struct grb_ctx ctx[GRB_MAX_NESTING + 1];
	unsigned int i, n = GRB_MAX_NESTING - held;
	int ret;

	for (i = 0; i < n; i++) {
		ret = res(g, &ctx[i], 1, 0xee);
		if (ret != 0) {
			fprintf(stderr, "line %d, %s: level %u refused (%d)\n",
				line, g->name, i, ret);
			CHECK(0);
		}
	}
	if (res(g, &ctx[n], 1, 0xee) != -EBUSY) {
		fprintf(stderr, "line %d: level %u not refused\n", line, n);
		CHECK(0);
	}
	while (i-- > 0)
		grb_commit(g->cfg, &ctx[i]);
}

#define nesting_free(g, held) nesting_free_at(g, held, __LINE__)

/* ---- counters ------------------------------------------------------------ */

#define NF (sizeof(struct grb_buf_stats) / sizeof(uint64_t))
#define F(name) (offsetof(struct grb_buf_stats, name) / sizeof(uint64_t))
#define ALLBUFS (-1)

static const char *const fnames[NF] = {
	"written", "read", "overwritten", "lost_full", "lost_wrap",
	"lost_big", "lost_nesting", "discarded", "produced", "consumed",
	"lost_dead", "recovered", "remote_commits", "remote_moves",
};

/* The counters of buffer @i, or of the channel for ALLBUFS. */
static void snap(const struct rig *g, int i, uint64_t *v)
{
	struct grb_buf_stats st;

	if (i == ALLBUFS)
		CHECK_EQ(grb_channel_get_stats(g->chan, &st), 0);
	else
		CHECK_EQ(grb_buf_get_stats(grb_channel_buf(g->chan,
							   (unsigned int)i),
					   &st), 0);
	memcpy(v, &st, sizeof(st));
}

/* Every counter moved from @a to @b by @d (NULL: none moved). */
static void moved_at(const struct rig *g, const uint64_t *a, const uint64_t *b,
		     const uint64_t *d, int line)
{
	size_t i;

	for (i = 0; i < NF; i++) {
		uint64_t want = d ? d[i] : 0;

		if (b[i] - a[i] != want) {
			fprintf(stderr, "line %d, %s (%s path): %s moved by "
				"%lld, expected %llu\n", line, g->name,
				g->rseq ? "rseq" : "atomic", fnames[i],
				(long long)(b[i] - a[i]),
				(unsigned long long)want);
			CHECK(0);
		}
	}
}

#define moved(g, a, b, d) moved_at(g, a, b, d, __LINE__)

/*
 * Take the next sub-buffer of @buf: @n records in @size bytes, each one
 * whole, tagged tags[k] (NULL: any tag).
 */
static void expect_subbuf_at(struct grb_buf *buf, uint64_t n, size_t size,
			     const unsigned char *tags, int line)
{
	struct grb_reader_subbuf sb;
	unsigned char payload[SB];
	uint32_t h[2];
	size_t off = 0, j;
	uint64_t k = 0;
	int ret = grb_reader_get_next(buf);

	if (ret != 0) {
		fprintf(stderr, "line %d: get_next %d\n", line, ret);
		CHECK(0);
	}
	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	if (sb.records != n || sb.data_size != size) {
		fprintf(stderr, "line %d: %llu records in %zu bytes, expected "
			"%llu in %zu\n", line, (unsigned long long)sb.records,
			sb.data_size, (unsigned long long)n, size);
		CHECK(0);
	}
	for (; off < sb.data_size; k++) {
		CHECK_EQ(grb_reader_read(buf, off, h, sizeof(h)), 0);
		CHECK_EQ(h[1], MAGIC);
		CHECK(off + RH + h[0] <= sb.data_size);
		CHECK_EQ(grb_reader_read(buf, off + RH, payload, h[0]), 0);
		for (j = 0; j < h[0]; j++)
			CHECK_EQ(payload[j], payload[0]);
		if (tags && h[0] && payload[0] != tags[k]) {
			fprintf(stderr, "line %d: record %llu tagged %u, "
				"expected %u\n", line, (unsigned long long)k,
				payload[0], tags[k]);
			CHECK(0);
		}
		off += RH + h[0];
	}
	CHECK_U64(k, n);
	CHECK_EQ(grb_reader_put_next(buf), 0);
}

#define expect_subbuf(buf, n, size, tags) \
	expect_subbuf_at(buf, n, size, tags, __LINE__)

/* Close what is open and read everything: the next record opens a
 * sub-buffer. */
static void fresh_subbuf(const struct rig *g)
{
	if (grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE) == 0)
		while (grb_reader_get_next(g->buf) == 0)
			CHECK_EQ(grb_reader_put_next(g->buf), 0);
}

/* ---- 1. the context ------------------------------------------------------ */

static void *owner_of_thread(void *arg)
{
	const struct rig *g = (const struct rig *)arg;
	struct grb_ctx ctx;
	void *owner;

	CHECK_EQ(res(g, &ctx, 8, 0x31), 0);
	owner = ctx.owner;
	grb_commit(g->cfg, &ctx);
	return owner;
}

/* The outputs of two contexts are the same, field by field. */
static int same_outputs(const struct grb_ctx *a, const struct grb_ctx *b)
{
	return a->buf == b->buf && a->cpu == b->cpu &&
		a->rflags == b->rflags && a->timestamp == b->timestamp &&
		a->pre_offset == b->pre_offset && a->end == b->end &&
		a->slot_size == b->slot_size && a->wptr == b->wptr &&
		a->wend == b->wend && a->cc == b->cc &&
		a->cc_done == b->cc_done && a->owner == b->owner &&
		a->jent == b->jent;
}

static void case_ctx(const struct rig *g)
{
	struct grb_ctx ctx, c2, z = GRB_CTX_INIT(5, 4);
	pthread_t t;
	void *other;
	int i;

	/* GRB_CTX_INIT: the inputs, every output zero. */
	memset(&c2, 0, sizeof(c2));
	CHECK_U64(z.data_size, 5);
	CHECK_U64(z.largest_align, 4);
	CHECK(z.client_priv == NULL);
	CHECK(same_outputs(&z, &c2));
	/* grb_ctx_init(): the three inputs, the outputs left as they were. */
	memset(&ctx, 0x5a, sizeof(ctx));
	memset(&c2, 0x5a, sizeof(c2));
	grb_ctx_init(&ctx, 24, 8);
	CHECK_U64(ctx.data_size, 24);
	CHECK_U64(ctx.largest_align, 8);
	CHECK(ctx.client_priv == NULL);
	CHECK(same_outputs(&ctx, &c2));

	/* Every output, for a record at offset 0 and one after it. */
	for (i = 0; i < 2; i++) {
		CHECK_EQ(res(g, &ctx, 24, 0x30), 0);
		CHECK(ctx.buf == g->buf);
		CHECK_EQ(ctx.cpu, PER_CPU(g) ? cpus[0] : 0);
		CHECK_EQ(ctx.rflags, 0);
		CHECK_U64(ctx.timestamp, 0);
		CHECK_U64(ctx.pre_offset, (uint64_t)i * (RH + 24));
		CHECK_U64(ctx.end, ctx.pre_offset + RH + 24);
		CHECK_U64(ctx.slot_size, RH + 24);
		CHECK(ctx.wptr == ctx.wend);
		CHECK(ctx.cc != NULL);
		CHECK_U64(ctx.cc_done, SB);
		CHECK(ctx.owner != NULL);
		CHECK(ctx.jent == NULL);
		grb_commit(g->cfg, &ctx);
	}
	/* owner: the reserving thread's, one per thread. */
	CHECK_EQ(res(g, &c2, 8, 0x30), 0);
	CHECK(c2.owner == ctx.owner);
	grb_commit(g->cfg, &c2);
	CHECK_EQ(pthread_create(&t, NULL, owner_of_thread, (void *)g), 0);
	CHECK_EQ(pthread_join(t, &other), 0);
	CHECK(other != NULL && other != (void *)ctx.owner);
	/* cc_done is a lap's byte total: one more sub-buffer per lap. */
	CHECK_EQ(grb_channel_flush(g->chan, GRB_FLUSH_ACTIVE), 0);
	while (grb_reader_get_next(g->buf) == 0)
		CHECK_EQ(grb_reader_put_next(g->buf), 0);
	for (i = 1; i < NSB; i++) {
		put(g, SB - RH, 0x32);
		while (grb_reader_get_next(g->buf) == 0)
			CHECK_EQ(grb_reader_put_next(g->buf), 0);
	}
	/* The second lap: a record that opens a sub-buffer, one inside. */
	for (i = 0; i < 2; i++) {
		CHECK_EQ(res(g, &ctx, 8, 0x33), 0);
		CHECK_U64(ctx.pre_offset, (uint64_t)NSB * SB + i * (RH + 8));
		CHECK_U64(ctx.cc_done, 2 * SB);
		grb_commit(g->cfg, &ctx);
	}
	nesting_free(g, 0);
}

/* ---- 2. where refusals are counted --------------------------------------- */

/* Calls of the fill functions below. */
static int wr_calls;

/*
 * -EBUSY and -ENOSPC on CPU @c: counted in that CPU's buffer (the
 * channel's only one when per channel), nowhere else.  @other holds the
 * thread's levels.
 */
static void refusals_on(const struct rig *g, const struct rig *other, int c)
{
	struct grb_ctx held[GRB_MAX_NESTING], ctx;
	uint64_t a[NF], b[NF], ca[NF], cb[NF], d[NF] = { 0 };
	int i = (int)buf_of(g, c);
	unsigned int k;

	pin(c);
	snap(g, i, a);
	snap(g, ALLBUFS, ca);
	for (k = 0; k < GRB_MAX_NESTING; k++)
		CHECK_EQ(res(other, &held[k], 8, 0x40), 0);
	CHECK_EQ(res(g, &ctx, 8, 0x41), -EBUSY);
	/* First, before the size is looked at. */
	CHECK_EQ(res(g, &ctx, SB + 1, 0x41), -EBUSY);
	while (k-- > 0)
		grb_commit(other->cfg, &held[k]);
	CHECK_EQ(res(g, &ctx, SB + 1, 0x41), -ENOSPC);
	snap(g, i, b);
	snap(g, ALLBUFS, cb);
	d[F(lost_nesting)] = 2;
	d[F(lost_big)] = 1;
	moved(g, a, b, d);
	moved(g, ca, cb, d);
	pin(cpus[0]);
}

static void case_refusal_buffers(const struct rig *g, const struct rig *other)
{
	refusals_on(g, other, cpus[0]);
	if (ncpus > 1)
		refusals_on(g, other, cpus[1]);
	nesting_free(g, 0);
}

static void fill_count(const struct grb_config *cfg, struct grb_ctx *ctx)
{
	wr_calls++;
	write_rec(cfg, ctx, 0x42);
}

/* Both calls refuse with @err, counting nothing. */
static void refused_uncounted(const struct rig *g, int err, size_t size)
{
	uint64_t a[NF], b[NF];
	struct grb_ctx ctx;

	snap(g, ALLBUFS, a);
	CHECK_EQ(res(g, &ctx, size, 0x42), err);
	wr_calls = 0;
	CHECK_EQ(grb_write_record(g->cfg, g->chan, size, 1, NULL, fill_count),
		 err);
	CHECK_EQ(wr_calls, 0);
	snap(g, ALLBUFS, b);
	moved(g, a, b, NULL);
}

/*
 * -ESHUTDOWN "also when it is disabled too": a buffer disabled before
 * finalize, and the channel disabled after it; sizes that would be
 * -EINVAL or -ENOSPC are -ESHUTDOWN too.
 */
static void case_shutdown_disabled(const struct rig *g)
{
	put(g, 8, 0x42);
	CHECK_EQ(grb_buf_record_disable(g->buf), 0);
	refused_uncounted(g, -EAGAIN, 8);
	CHECK_EQ(grb_channel_finalize(g->chan), 0);
	refused_uncounted(g, -ESHUTDOWN, 8);
	refused_uncounted(g, -ESHUTDOWN, 0);
	refused_uncounted(g, -ESHUTDOWN, SB + 1);
	CHECK_EQ(grb_buf_record_enable(g->buf), 0);
	refused_uncounted(g, -ESHUTDOWN, 8);
	CHECK_EQ(grb_channel_record_disable(g->chan), 0);
	refused_uncounted(g, -ESHUTDOWN, 8);
	CHECK_EQ(grb_channel_record_enable(g->chan), 0);
	refused_uncounted(g, -ESHUTDOWN, 8);
	expect_subbuf(g->buf, 1, RH + 8, NULL);
	CHECK_EQ(grb_reader_get_next(g->buf), -ENODATA);
}

/*
 * Discard mode, the lap's sub-buffer still holding an uncommitted record:
 * -EIO (lost_wrap), although the ring is full too, from both calls.
 */
static void case_wrap_in_discard_mode(const struct rig *g)
{
	uint64_t a[NF], b[NF], d[NF] = { 0 };
	struct grb_ctx x, y;
	int i;

	CHECK_EQ(res(g, &x, 8, 0x50), 0);
	/* Four 1000-byte slots per sub-buffer, the first beside x. */
	for (i = 0; i < 4 * NSB; i++)
		put(g, 1000 - RH, 0x51);
	snap(g, ALLBUFS, a);
	CHECK_EQ(res(g, &y, 1000 - RH, 0x52), -EIO);
	wr_calls = 0;
	CHECK_EQ(grb_write_record(g->cfg, g->chan, 1000 - RH, 1, NULL,
				  fill_count), -EIO);
	CHECK_EQ(wr_calls, 0);
	snap(g, ALLBUFS, b);
	d[F(lost_wrap)] = 2;
	moved(g, a, b, d);
	/* Committed, the lap is delivered; read, the ring is free again. */
	grb_commit(g->cfg, &x);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	for (i = 0; i < NSB; i++)
		expect_subbuf(g->buf, i ? 4 : 5, i ? 4000 : 4016, NULL);
	put(g, 8, 0x53);
	nesting_free(g, 0);
}

/*
 * A client with a 4-byte sub-buffer header and no record header: at a
 * sub-buffer boundary, data_size 0 aligned on 8 is a slot of 4 bytes of
 * padding (reserved, a record); aligned on 4 or 1 it is empty (-EINVAL,
 * nothing opened, nothing counted), and inside the sub-buffer too.
 */
static size_t sbh4(void)
{
	return 4;
}

static const struct grb_config pc_h4 = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { .subbuf_header_size = sbh4 },
	GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config ch_h4 = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 0,
	{ .subbuf_header_size = sbh4 }, 0,
};

static void fill_none(const struct grb_config *cfg, struct grb_ctx *ctx)
{
	(void)cfg;
	wr_calls++;
	CHECK_U64(ctx->slot_size, 4);
	CHECK(ctx->wend - ctx->wptr == 4);
}

static void case_padding_only(const struct rig *g)
{
	uint64_t a[NF], b[NF], d[NF] = { 0 };
	struct grb_reader_subbuf sb;
	struct grb_ctx ctx;
	int api;

	for (api = 0; api < 2; api++) {
		snap(g, ALLBUFS, a);
		ctx = (struct grb_ctx)GRB_CTX_INIT(0, 4);
		CHECK_EQ(grb_reserve(g->cfg, g->chan, &ctx), -EINVAL);
		wr_calls = 0;
		CHECK_EQ(grb_write_record(g->cfg, g->chan, 0, 1, NULL,
					  fill_none), -EINVAL);
		CHECK_EQ(wr_calls, 0);
		snap(g, ALLBUFS, b);
		moved(g, a, b, NULL);
		if (api) {
			CHECK_EQ(grb_write_record(g->cfg, g->chan, 0, 8, NULL,
						  fill_none), 0);
			CHECK_EQ(wr_calls, 1);
		} else {
			ctx = (struct grb_ctx)GRB_CTX_INIT(0, 8);
			CHECK_EQ(grb_reserve(g->cfg, g->chan, &ctx), 0);
			CHECK_U64(ctx.pre_offset & (SB - 1), 4);
			CHECK_U64(ctx.slot_size, 4);
			grb_commit(g->cfg, &ctx);
		}
		snap(g, ALLBUFS, a);
		d[F(written)] = 1;
		d[F(produced)] = 8;
		moved(g, b, a, d);
		/* Offset 8: empty again, aligned on 8 or not at all. */
		ctx = (struct grb_ctx)GRB_CTX_INIT(0, 8);
		CHECK_EQ(grb_reserve(g->cfg, g->chan, &ctx), -EINVAL);
		CHECK_EQ(grb_write_record(g->cfg, g->chan, 0, 1, NULL,
					  fill_none), -EINVAL);
		snap(g, ALLBUFS, b);
		moved(g, a, b, NULL);
		CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
		CHECK_EQ(grb_reader_get_next(g->buf), 0);
		CHECK_EQ(grb_reader_held(g->buf, &sb), 0);
		CHECK_U64(sb.records, 1);
		CHECK_U64(sb.data_size, 8);
		CHECK_EQ(grb_reader_put_next(g->buf), 0);
	}
}

/* ---- 3. nesting through signal handlers ---------------------------------- */

#define LEVELS (GRB_MAX_NESTING + 1)

static const struct rig *sig_g;
static int sig_api;             /* 0: grb_reserve(), 1: grb_write_record() */
static volatile sig_atomic_t sig_level;
static int lv_ret[LEVELS + 1], lv_fills[LEVELS + 1];
static uint64_t lv_pos[LEVELS + 1];

static void level(void);

static void on_nest(int sig)
{
	int saved = errno;

	(void)sig;
	level();
	errno = saved;
}

/* Inside the reservation of level L: note it, and nest the next one. */
static void lv_fill(const struct grb_config *cfg, struct grb_ctx *ctx)
{
	int l = sig_level;

	lv_fills[l]++;
	lv_pos[l] = ctx->pre_offset & (SB - 1);
	write_rec(cfg, ctx, (unsigned char)(0x60 + l));
	if (l < LEVELS)
		raise(SIGUSR2);
}

/* One level: its record, with the next level in its window. */
static void level(void)
{
	const struct rig *g = sig_g;
	struct grb_ctx ctx = GRB_CTX_INIT(16, 1);
	int l = ++sig_level;

	if (sig_api) {
		lv_ret[l] = grb_write_record(g->cfg, g->chan, 16, 1, NULL,
					     lv_fill);
	} else {
		lv_ret[l] = grb_reserve(g->cfg, g->chan, &ctx);
		if (lv_ret[l] == 0) {
			lv_fill(g->cfg, &ctx);
			grb_commit(g->cfg, &ctx);
		}
	}
	sig_level--;
}

static void nest_with(const struct rig *g, int api)
{
	static const unsigned char tags[] = { 0x5f, 0x61, 0x62, 0x63, 0x64 };
	uint64_t a[NF], b[NF], ca[NF], cb[NF], d[NF] = { 0 };
	int l, i = (int)buf_of(g, cpus[0]);

	fresh_subbuf(g);
	put(g, 8, 0x5f);
	sig_g = g;
	sig_api = api;
	memset(lv_ret, 0x7f, sizeof(lv_ret));
	memset(lv_fills, 0, sizeof(lv_fills));
	snap(g, i, a);
	snap(g, ALLBUFS, ca);
	level();
	snap(g, i, b);
	snap(g, ALLBUFS, cb);
	for (l = 1; l <= GRB_MAX_NESTING; l++) {
		CHECK_EQ(lv_ret[l], 0);
		CHECK_EQ(lv_fills[l], 1);
		/* Reserved in order, each inside the one before. */
		CHECK_U64(lv_pos[l], RH + 8 + (uint64_t)(l - 1) * (RH + 16));
	}
	CHECK_EQ(lv_ret[LEVELS], -EBUSY);
	CHECK_EQ(lv_fills[LEVELS], 0);
	d[F(written)] = GRB_MAX_NESTING;
	d[F(lost_nesting)] = 1;
	d[F(produced)] = GRB_MAX_NESTING * (RH + 16);
	/* Pinned: every commit ran on the buffer's CPU. */
	moved(g, a, b, d);
	moved(g, ca, cb, d);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	expect_subbuf(g->buf, 1 + GRB_MAX_NESTING,
		      RH + 8 + GRB_MAX_NESTING * (RH + 16), tags);
	nesting_free(g, 0);
}

/* ThreadSanitizer runs the handler of a signal like SIGUSR2 at its next
 * interception point, not where raise() returns: the levels would not
 * nest inside each other's fill.  The other presets run this case. */
#if defined(__SANITIZE_THREAD__)
#define NESTING_BY_SIGNAL 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NESTING_BY_SIGNAL 0
#endif
#endif
#ifndef NESTING_BY_SIGNAL
#define NESTING_BY_SIGNAL 1
#endif

static void case_signal_nesting(const struct rig *g)
{
	struct sigaction sa, old;

	if (!NESTING_BY_SIGNAL) {
		printf("  signal nesting: not under ThreadSanitizer, which "
		       "defers signal handlers\n");
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_nest;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR2, &sa, &old), 0);
	nest_with(g, 0);
	nest_with(g, 1);
	CHECK_EQ(sigaction(SIGUSR2, &old, NULL), 0);
}

/* ---- 4. contexts finished by another thread ------------------------------ */

struct finisher {
	const struct rig *g, *other;
	struct grb_ctx *ctx;    /* GRB_MAX_NESTING of them */
	int cpu;
	int busy_own, busy_after, discard;
};

static void *finish_all(void *arg)
{
	struct finisher *f = (struct finisher *)arg;
	struct grb_ctx own[GRB_MAX_NESTING], ctx;
	unsigned int k;

	pin(f->cpu);
	/* Every level of this thread held by its own records. */
	for (k = 0; k < GRB_MAX_NESTING; k++)
		CHECK_EQ(res(f->other, &own[k], 8, 0x70), 0);
	f->busy_own = res(f->g, &ctx, 8, 0x71);
	/* The other thread's: three commits, then a discard of its last. */
	for (k = 0; k < GRB_MAX_NESTING - 1; k++)
		grb_commit(f->g->cfg, &f->ctx[k]);
	f->discard = grb_try_discard_reserve(f->g->cfg, &f->ctx[k]);
	/* None of that gave this thread a level. */
	f->busy_after = res(f->other, &ctx, 8, 0x72);
	for (k = GRB_MAX_NESTING; k-- > 0;)
		grb_commit(f->other->cfg, &own[k]);
	return NULL;
}

static void case_handoff(const struct rig *g, const struct rig *other)
{
	static const unsigned char tags[] = { 0x73, 0x74, 0x74, 0x74 };
	struct grb_ctx held[GRB_MAX_NESTING];
	struct finisher f = { g, other, held, cpus[ncpus - 1], 0, 0, -1 };
	uint64_t a[NF], b[NF], fa[NF], fb[NF], d[NF] = { 0 };
	int moved_off = f.cpu != cpus[0], i = (int)buf_of(g, cpus[0]);
	int fi = (int)buf_of(g, f.cpu);
	pthread_t t;
	unsigned int k;

	put(g, 8, 0x73);
	for (k = 0; k < GRB_MAX_NESTING; k++)
		CHECK_EQ(res(g, &held[k], 8, 0x74), 0);
	nesting_free(g, GRB_MAX_NESTING);
	snap(g, i, a);
	snap(g, fi, fa);
	CHECK_EQ(pthread_create(&t, NULL, finish_all, &f), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(f.busy_own, -EBUSY);
	CHECK_EQ(f.busy_after, -EBUSY);
	CHECK_EQ(f.discard, 0);
	snap(g, i, b);
	snap(g, fi, fb);
	/* The finisher's refusal is in its own CPU's buffer. */
	if (fi != i) {
		memset(d, 0, sizeof(d));
		d[F(lost_nesting)] = 1;
		moved(g, fa, fb, d);
		memset(d, 0, sizeof(d));
	} else {
		d[F(lost_nesting)] = 1;
	}
	d[F(written)] = GRB_MAX_NESTING - 1;
	d[F(discarded)] = 1;
	d[F(produced)] = SB - (RH + 8) * (GRB_MAX_NESTING + 1);
	d[F(remote_commits)] = moved_off ? R(g, GRB_MAX_NESTING) : 0;
	d[F(remote_moves)] = moved_off ? R(g, 1) : 0;
	moved(g, a, b, d);
	/* The discard closed the sub-buffer: delivered, without a flush. */
	expect_subbuf(g->buf, GRB_MAX_NESTING, (RH + 8) * GRB_MAX_NESTING,
		      tags);
	/* Every level of this thread is back. */
	nesting_free(g, 0);
	nesting_free(other, 0);
}

/* ---- 5. discards --------------------------------------------------------- */

/*
 * A slot that ends exactly at its sub-buffer's end is still discarded
 * after a later record (in the next sub-buffer): nothing moves, from
 * another CPU no remote move either (the commit of the slot is remote).
 */
static void case_discard_exact_end(const struct rig *g)
{
	static const unsigned char first[] = { 0x80 }, next[] = { 0x82 };
	uint64_t a[NF], b[NF], d[NF] = { 0 };
	struct grb_ctx x, y;
	int i = (int)buf_of(g, cpus[0]), off = ncpus > 1;

	put(g, 100, 0x80);
	CHECK_EQ(res(g, &x, SB - (RH + 100) - RH, 0x81), 0);
	CHECK_U64(x.end, SB);
	CHECK_EQ(res(g, &y, 40, 0x82), 0);
	CHECK_U64(y.pre_offset, SB);
	grb_commit(g->cfg, &y);
	if (off)
		pin(cpus[1]);
	snap(g, i, a);
	CHECK_EQ(grb_try_discard_reserve(g->cfg, &x), 0);
	snap(g, i, b);
	d[F(discarded)] = 1;
	d[F(remote_commits)] = off ? R(g, 1) : 0;
	moved(g, a, b, d);
	pin(cpus[0]);
	/* Closed where x began, and complete: delivered by the discard. */
	expect_subbuf(g->buf, 1, RH + 100, first);
	CHECK_EQ(grb_reader_get_next(g->buf), -EAGAIN);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	expect_subbuf(g->buf, 1, RH + 40, next);
	nesting_free(g, 0);
}

/* Refused after a flush: nothing changes, the caller commits. */
static void case_discard_after_flush(const struct rig *g)
{
	static const unsigned char tags[] = { 0x83, 0x84 };
	uint64_t a[NF], b[NF];
	struct grb_ctx x;
	int how;

	for (how = GRB_FLUSH_ACTIVE; how <= GRB_FLUSH_EMPTY; how++) {
		fresh_subbuf(g);
		put(g, 8, 0x83);
		CHECK_EQ(res(g, &x, 8, 0x84), 0);
		CHECK_EQ(grb_buf_flush(g->buf, (enum grb_flush)how), 0);
		CHECK_EQ(grb_reader_get_next(g->buf), -EAGAIN);
		snap(g, ALLBUFS, a);
		CHECK_EQ(grb_try_discard_reserve(g->cfg, &x), -EBUSY);
		snap(g, ALLBUFS, b);
		moved(g, a, b, NULL);
		nesting_free(g, 1);
		grb_commit(g->cfg, &x);
		expect_subbuf(g->buf, 2, 2 * (RH + 8), tags);
	}
	nesting_free(g, 0);
}

/*
 * A later reservation that was refused does not stop a discard; one that
 * did not fit and opened the next sub-buffer does, and so does a later
 * one discarded first.
 */
static void case_discard_later(const struct rig *g)
{
	static const unsigned char tags[] = { 0x85, 0x86 };
	uint64_t a[NF], b[NF], d[NF] = { 0 };
	struct grb_ctx x, y;

	/* Refused with -ENOSPC: x is still the last reservation. */
	put(g, 8, 0x85);
	CHECK_EQ(res(g, &x, 8, 0x86), 0);
	CHECK_EQ(res(g, &y, SB + 1, 0x87), -ENOSPC);
	snap(g, ALLBUFS, a);
	CHECK_EQ(grb_try_discard_reserve(g->cfg, &x), 0);
	snap(g, ALLBUFS, b);
	d[F(discarded)] = 1;
	/* On the buffer's CPU: a move, but no remote one. */
	d[F(produced)] = SB - 2 * (RH + 8);
	moved(g, a, b, d);
	expect_subbuf(g->buf, 1, RH + 8, tags);

	/* y does not fit after x: it closes x's sub-buffer and opens the
	 * next, so x is no longer the last. */
	put(g, 8, 0x85);
	CHECK_EQ(res(g, &x, 8, 0x86), 0);
	CHECK_EQ(res(g, &y, SB - RH - 16, 0x88), 0);
	CHECK_U64(y.pre_offset, 2 * SB);
	snap(g, ALLBUFS, a);
	CHECK_EQ(grb_try_discard_reserve(g->cfg, &x), -EBUSY);
	snap(g, ALLBUFS, b);
	moved(g, a, b, NULL);
	grb_commit(g->cfg, &y);
	grb_commit(g->cfg, &x);
	expect_subbuf(g->buf, 2, 2 * (RH + 8), tags);
	CHECK_EQ(grb_reader_get_next(g->buf), -EAGAIN);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	expect_subbuf(g->buf, 1, SB - 16, NULL);

	/* y discarded first: x is no longer the last, and is refused. */
	put(g, 8, 0x85);
	CHECK_EQ(res(g, &x, 8, 0x86), 0);
	CHECK_EQ(res(g, &y, 8, 0x89), 0);
	CHECK_EQ(grb_try_discard_reserve(g->cfg, &y), 0);
	snap(g, ALLBUFS, a);
	CHECK_EQ(grb_try_discard_reserve(g->cfg, &x), -EBUSY);
	snap(g, ALLBUFS, b);
	moved(g, a, b, NULL);
	nesting_free(g, 1);
	grb_commit(g->cfg, &x);
	expect_subbuf(g->buf, 2, 2 * (RH + 8), tags);
	nesting_free(g, 0);
}

/* ---- 6. the remote counters ---------------------------------------------- */

/* A reservation whose position move runs on another CPU: one remote
 * move, and its commit from there one remote commit; refused, none. */
static void case_remote_reserve(const struct rig *g)
{
	uint64_t a[NF], b[NF], d[NF] = { 0 };
	int i = (int)buf_of(g, cpus[0]);
	struct grb_ctx x;

	put(g, 8, 0x90);
	snap(g, ALLBUFS, a);
	move_in_hdr = cpus[1];
	CHECK_EQ(res(g, &x, 8, 0x91), 0);
	CHECK_EQ(sched_getcpu(), cpus[1]);
	CHECK(x.buf == g->buf);
	CHECK_EQ(x.cpu, PER_CPU(g) ? cpus[0] : 0);
	snap(g, ALLBUFS, b);
	d[F(produced)] = RH + 8;
	d[F(remote_moves)] = R(g, 1);
	moved(g, a, b, d);
	grb_commit(g->cfg, &x);
	snap(g, ALLBUFS, a);
	memset(d, 0, sizeof(d));
	d[F(written)] = 1;
	d[F(remote_commits)] = R(g, 1);
	moved(g, b, a, d);
	/* The channel's counters are buffer cpus[0]'s: nothing went to
	 * the buffer of the CPU the reservation ended on. */
	snap(g, i, b);
	moved(g, b, a, NULL);

	/* Refused there: counted in the buffer picked, no remote move. */
	pin(cpus[0]);
	move_in_hdr = cpus[1];
	CHECK_EQ(res(g, &x, SB + 1, 0x92), -ENOSPC);
	CHECK_EQ(sched_getcpu(), cpus[1]);
	snap(g, i, b);
	memset(d, 0, sizeof(d));
	d[F(lost_big)] = 1;
	moved(g, a, b, d);
	pin(cpus[0]);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	expect_subbuf(g->buf, 2, 2 * (RH + 8), NULL);
	nesting_free(g, 0);
}

/*
 * GRB_FLUSH_EMPTY with nothing open: a header-only sub-buffer, one
 * remote move from any CPU, and its commit remote when off the CPU.
 */
static void case_remote_flush_empty(const struct rig *g)
{
	uint64_t a[NF], b[NF], d[NF] = { 0 };
	int k;

	for (k = 0; k < ncpus; k++) {
		pin(cpus[k]);
		snap(g, ALLBUFS, a);
		CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_EMPTY), 0);
		snap(g, ALLBUFS, b);
		d[F(produced)] = SB;
		d[F(remote_moves)] = R(g, 1);
		d[F(remote_commits)] = k ? R(g, 1) : 0;
		moved(g, a, b, d);
		expect_subbuf(g->buf, 0, 0, NULL);
	}
	pin(cpus[0]);
	nesting_free(g, 0);
}

#define RSEQ_FLAG_UNREG 1       /* RSEQ_FLAG_UNREGISTER, linux/rseq.h */
#define NR_NORSEQ 10

/* Take this thread's rseq registration back.  Return: 0, or -1 when the
 * kernel refuses (the caller then skips). */
static int drop_rseq(void)
{
#ifdef TEST_HAVE_RSEQ
	struct rseq *rs = (struct rseq *)(void *)
		((char *)__builtin_thread_pointer() + __rseq_offset);
	long r;

	if (__rseq_size == 0)
		return 0;       /* none to take back */
	/* The length registered: glibc's, or the whole area. */
	r = syscall(__NR_rseq, rs, (unsigned int)__rseq_size,
		    RSEQ_FLAG_UNREG, RSEQ_SIG);
	if (r != 0 && __rseq_size != sizeof(*rs))
		r = syscall(__NR_rseq, rs, (unsigned int)sizeof(*rs),
			    RSEQ_FLAG_UNREG, RSEQ_SIG);
	return r == 0 ? 0 : -1;
#else
	return 0;
#endif
}

struct norseq_job {
	const struct rig *g;
	int skipped;
};

static void fill_norseq(const struct grb_config *cfg, struct grb_ctx *ctx)
{
	write_rec(cfg, ctx, 0x95);
}

static void *norseq_writer(void *arg)
{
	struct norseq_job *j = (struct norseq_job *)arg;
	const struct rig *g = j->g;
	uint64_t a[NF], b[NF], d[NF] = { 0 };
	int k, i = (int)buf_of(g, cpus[0]);

	if (drop_rseq() != 0) {
		j->skipped = 1;
		return NULL;
	}
	pin(cpus[0]);
	snap(g, ALLBUFS, a);
	for (k = 0; k < NR_NORSEQ; k++) {
		put(g, 8, 0x94);
		CHECK_EQ(grb_write_record(g->cfg, g->chan, 8, 1, NULL,
					  fill_norseq), 0);
	}
	snap(g, i, b);
	/* One move and one commit per record, none for the header-less
	 * sub-buffer it opened; all in the buffer of its CPU. */
	d[F(written)] = 2 * NR_NORSEQ;
	d[F(produced)] = 2 * NR_NORSEQ * (RH + 8);
	d[F(remote_moves)] = R(g, 2 * NR_NORSEQ);
	d[F(remote_commits)] = R(g, 2 * NR_NORSEQ);
	moved(g, a, b, d);
	snap(g, ALLBUFS, b);
	moved(g, a, b, d);
	return NULL;
}

static void case_norseq(const struct rig *g)
{
	struct norseq_job j = { g, 0 };
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, norseq_writer, &j), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	if (j.skipped) {
		printf("note: rseq unregistration refused: the thread "
		       "without rseq is skipped\n");
		return;
	}
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	expect_subbuf(g->buf, 2 * NR_NORSEQ, 2 * NR_NORSEQ * (RH + 8), NULL);
	nesting_free(g, 0);
}

/* ---- 7. grb_channel_write_path() ----------------------------------------- */

static const struct grb_config sh_sync = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 },
	GRB_CONFIG_SHARED | GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config sh_plain = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 }, GRB_CONFIG_SHARED,
};

static void check_path(const struct grb_channel *chan, int path,
		       enum grb_path_reason want)
{
	enum grb_path_reason why = (enum grb_path_reason)-1;

	CHECK_EQ(grb_channel_write_path(chan, &why), path);
	CHECK_EQ(why, want);
}

/* A shared channel of @cfg, and a reader attached to it. */
static void shared_pair(const struct grb_config *cfg, const char *client,
			struct grb_channel **own, struct grb_channel **att)
{
	struct grb_channel_attr attr = { "audit", SB, NSB, NULL };
	struct grb_shm_attr sattr = { client, NULL, -1 };
	int fds[256];
	unsigned int i, n;

	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, own), 0);
	n = grb_channel_nr_bufs(*own);
	CHECK(n <= 256);
	for (i = 0; i < n; i++)
		fds[i] = grb_channel_shm_fd(*own, i);
	CHECK_EQ(grb_channel_attach(cfg, client, fds, n, GRB_ATTACH_WRITER,
				    att), 0);
}

static void test_paths(void)
{
	struct grb_channel_attr attr = { "audit", SB, NSB, NULL };
	const char *orig = getenv("GRB_SYNC");
	char *saved = orig ? strdup(orig) : NULL;
	struct grb_channel *own, *att, *chan;
	enum grb_path_reason forced;

	CHECK(!orig || saved);
	/* GRB_SYNC=atomic comes before SHARED: a shared configuration,
	 * private or in shared memory, reports ENV (or a reason before
	 * it); an attached channel reports SHARED whatever the variable. */
	CHECK_EQ(setenv("GRB_SYNC", "atomic", 1), 0);
	forced = test_expected_reason(1);
	CHECK(forced == GRB_PATH_ENV || forced == GRB_PATH_SANITIZER ||
	      forced == GRB_PATH_NO_ARCH);
	CHECK_EQ(grb_channel_create(&sh_sync, &attr, &chan), 0);
	check_path(chan, GRB_WRITE_ATOMIC, forced);
	grb_channel_destroy(chan);
	shared_pair(&sh_sync, "audit-sync", &own, &att);
	check_path(own, GRB_WRITE_ATOMIC, forced);
	check_path(att, GRB_WRITE_ATOMIC, GRB_PATH_SHARED);
	grb_channel_destroy(att);
	grb_channel_destroy(own);
	/* Without the flag: as asked, attached or not, with or without
	 * the variable. */
	shared_pair(&sh_plain, "audit-plain", &own, &att);
	check_path(own, GRB_WRITE_ATOMIC, GRB_PATH_AS_ASKED);
	check_path(att, GRB_WRITE_ATOMIC, GRB_PATH_AS_ASKED);
	grb_channel_destroy(att);
	grb_channel_destroy(own);
	CHECK_EQ(unsetenv("GRB_SYNC"), 0);
	shared_pair(&sh_sync, "audit-sync", &own, &att);
	check_path(own, GRB_WRITE_ATOMIC, test_expected_reason(1));
	check_path(att, GRB_WRITE_ATOMIC, GRB_PATH_SHARED);
	grb_channel_destroy(att);
	grb_channel_destroy(own);
	if (saved)
		CHECK_EQ(setenv("GRB_SYNC", saved, 1), 0);
	free(saved);
}

/*
 * A shared buffer whose GRB_JOURNAL_SLOTS journal slots are all held by
 * live threads: the next thread's reservation is -EBUSY, counted as
 * lost_nesting, and that check comes before -EAGAIN and -ESHUTDOWN.
 */
static const struct grb_config sh_ch = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, CB, GRB_CONFIG_SHARED,
};

static struct grb_channel *j_chan;
static pthread_barrier_t j_written, j_done;

static void *j_holder(void *arg)
{
	struct grb_ctx ctx = GRB_CTX_INIT(8, 1);

	(void)arg;
	CHECK_EQ(grb_reserve(&sh_ch, j_chan, &ctx), 0);
	write_rec(&sh_ch, &ctx, 0xa0);
	grb_commit(&sh_ch, &ctx);
	pthread_barrier_wait(&j_written);
	pthread_barrier_wait(&j_done);
	return NULL;
}

static void j_fill(const struct grb_config *cfg, struct grb_ctx *ctx)
{
	wr_calls++;
	write_rec(cfg, ctx, 0xa1);
}

/* One more thread: both calls' results, in r[0] and r[1]. */
static void *j_extra(void *arg)
{
	struct grb_ctx ctx = GRB_CTX_INIT(8, 1);
	int *r = (int *)arg;

	r[0] = grb_reserve(&sh_ch, j_chan, &ctx);
	if (r[0] == 0) {
		write_rec(&sh_ch, &ctx, 0xa1);
		grb_commit(&sh_ch, &ctx);
	}
	r[1] = grb_write_record(&sh_ch, j_chan, 8, 1, NULL, j_fill);
	return NULL;
}

/* Run j_extra on a new thread: both calls return @err, and lost_nesting
 * moves by @lost, nothing else. */
static void extra_writer(int err, uint64_t lost)
{
	struct rig g = { &sh_ch, j_chan, NULL, 0, "journal" };
	uint64_t a[NF], b[NF], d[NF] = { 0 };
	int r[2] = { 1, 1 };
	pthread_t t;

	snap(&g, ALLBUFS, a);
	wr_calls = 0;
	CHECK_EQ(pthread_create(&t, NULL, j_extra, r), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(r[0], err);
	CHECK_EQ(r[1], err);
	CHECK_EQ(wr_calls, 0);
	snap(&g, ALLBUFS, b);
	d[F(lost_nesting)] = lost;
	moved(&g, a, b, d);
}

static void test_journal_first(void)
{
	struct grb_channel_attr attr = { "audit-j", SB, NSB, NULL };
	struct grb_shm_attr sattr = { "audit-j", NULL, -1 };
	pthread_t t[GRB_JOURNAL_SLOTS];
	struct grb_buf_stats st;
	char msg[160];
	unsigned int i;

	CHECK_EQ(grb_channel_create_shared(&sh_ch, &attr, &sattr, &j_chan),
		 0);
	CHECK_EQ(pthread_barrier_init(&j_written, NULL,
				      GRB_JOURNAL_SLOTS + 1), 0);
	CHECK_EQ(pthread_barrier_init(&j_done, NULL, GRB_JOURNAL_SLOTS + 1),
		 0);
	for (i = 0; i < GRB_JOURNAL_SLOTS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, j_holder, NULL), 0);
	pthread_barrier_wait(&j_written);
	extra_writer(-EBUSY, 2);
	CHECK_EQ(grb_channel_record_disable(j_chan), 0);
	extra_writer(-EBUSY, 2);
	CHECK_EQ(grb_channel_finalize(j_chan), 0);
	extra_writer(-EBUSY, 2);
	pthread_barrier_wait(&j_done);
	for (i = 0; i < GRB_JOURNAL_SLOTS; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	/* The slots are free again: the channel's own refusal shows. */
	extra_writer(-ESHUTDOWN, 0);
	CHECK_EQ(grb_channel_get_stats(j_chan, &st), 0);
	CHECK_U64(st.written, GRB_JOURNAL_SLOTS);
	CHECK_EQ(grb_buf_validate(grb_channel_buf(j_chan, 0), msg,
				  sizeof(msg)), 0);
	pthread_barrier_destroy(&j_written);
	pthread_barrier_destroy(&j_done);
	grb_channel_destroy(j_chan);
}

/* ---- 8. grb/align.h: the pointer helpers' precondition ------------------- */

#ifndef NDEBUG
static void expect_abort(int which, size_t a)
{
	static unsigned char byte;
	struct rlimit no_core = { 0, 0 };
	volatile uintptr_t sink;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		setrlimit(RLIMIT_CORE, &no_core);
		if (!freopen("/dev/null", "w", stderr))
			_exit(3);
		if (which == 0)
			sink = (uintptr_t)grb_ptr_align(&byte, a);
		else if (which == 1)
			sink = (uintptr_t)grb_ptr_align_floor(&byte, a);
		else
			sink = (uintptr_t)grb_ptr_is_aligned(&byte, a);
		(void)sink;
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGABRT);
}
#endif

static void test_align_ptr(void)
{
#ifndef NDEBUG
	int which;

	for (which = 0; which < 3; which++) {
		expect_abort(which, 0);
		expect_abort(which, 3);
		expect_abort(which, 4097);
	}
#endif
}

/* ---- driver -------------------------------------------------------------- */

typedef void (*case_fn)(const struct rig *g);
typedef void (*case2_fn)(const struct rig *g, const struct rig *other);

static void run(const struct grb_config *cfg, const char *name, case_fn fn,
		int fa)
{
	struct rig g;

	rig_open(&g, cfg, name, fa);
	fn(&g);
	chan_rig_close(&g);
}

static void run2(const struct grb_config *cfg, const char *name, case2_fn fn,
		 int fa)
{
	struct rig g, other;

	rig_open(&g, cfg, name, fa);
	rig_open(&other, cfg, "other", fa);
	fn(&g, &other);
	chan_rig_close(&other);
	chan_rig_close(&g);
}

static void run_all(int fa)
{
	static const struct {
		const struct grb_config *cfg;
		const char *name;
	} sets[] = {
		{ &pc_d, "per-CPU sync, discard" },
		{ &pc_o, "per-CPU sync, overwrite" },
		{ &ch_d, "per-channel, discard" },
		{ &ch_o, "per-channel, overwrite" },
	};
	size_t k;

	for (k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
		const struct grb_config *c = sets[k].cfg;
		const char *n = sets[k].name;

		run(c, n, case_ctx, fa);
		run2(c, n, case_refusal_buffers, fa);
		run(c, n, case_shutdown_disabled, fa);
		if (c->mode == GRB_MODE_DISCARD)
			run(c, n, case_wrap_in_discard_mode, fa);
		run(c, n, case_signal_nesting, fa);
		run2(c, n, case_handoff, fa);
		run(c, n, case_discard_exact_end, fa);
		run(c, n, case_discard_after_flush, fa);
		run(c, n, case_discard_later, fa);
		if (ncpus > 1)
			run(c, n, case_remote_reserve, fa);
		run(c, n, case_remote_flush_empty, fa);
		run(c, n, case_norseq, fa);
	}
	run(&pc_h4, "per-CPU sync, sub-buffer header", case_padding_only, fa);
	run(&ch_h4, "per-channel, sub-buffer header", case_padding_only, fa);
}

int main(void)
{
	struct rig g;
	int c;

	setvbuf(stdout, NULL, _IONBF, 0);
	/* First: its children abort, best before threads left their
	 * cached stacks (valgrind reports them in each child). */
	test_align_ptr();
	CHECK_EQ(sched_getaffinity(0, sizeof(all_cpus), &all_cpus), 0);
	for (c = 0; c < CPU_SETSIZE && ncpus < 2; c++)
		if (CPU_ISSET(c, &all_cpus))
			cpus[ncpus++] = c;
	CHECK(ncpus > 0);
	pin(cpus[0]);
	rig_open(&g, &pc_d, "probe", 0);
	printf("per-CPU sync channels: %s path\n", g.rseq ? "rseq" : "atomic");
	chan_rig_close(&g);
	if (ncpus < 2)
		printf("note: one CPU only: the cases that move are skipped\n");
	run_all(0);
	run_all(1);
	test_paths();
	test_journal_first();
	printf("test_write_audit: passed\n");
	return 0;
}
