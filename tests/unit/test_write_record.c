/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_write_record.c - grb_write_record() against each promise
 * of its doc comment (grb/writer.h, docs/design.md section 25.9), first
 * part; test_write_record_races.c has the rest (4-7: laps and the NOREF
 * window, a signal handler's record, a migrating fill, a woken reader):
 *
 *  1. the record of grb_reserve(), fill, grb_commit(): each record goes to
 *     two channels, by one API on one and by the other on the other, with
 *     losses, flushes and reads between; both read back byte for byte
 *     alike, every record intact, the statistics equal;
 *  2. the fill runs once, on the calling thread (another thread's too),
 *     with client_priv, data_size and largest_align as passed, buf, cpu
 *     and timestamp set, wptr..wend exactly header, padding and payload;
 *     record_header_size sees the same client_priv;
 *  3. each refusal returns grb_reserve()'s errno on an identical fresh
 *     channel, moves the same counter and nothing else, calls no fill and
 *     gives the nesting level back.
 *
 * On per-CPU configurations with GRB_CONFIG_SYNC_PER_CPU and per-channel
 * ones, overwrite and discard, with and without timestamps, each channel
 * created as the environment decides and under GRB_SYNC=atomic (as in
 * test_writer_contract.c), so both paths are checked in every run.  The
 * record client and the channels are tests/common/wr_rig.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "grb/grb.h"
#include "wr_rig.h"

/* ---- 1, 2. the same records as the three calls -------------------------- */

#define EQ_N 500

/* Record i: now and then too big; alignments 1 to 8; a clock that jumps
 * above the kept bits every 40 records, inside sub-buffers too. */
#define EQ_SIZE(i) ((i) % 97 == 50 ? SB + 1 : 8 + ((i) * 37u) % 900)
#define EQ_ALIGN(i) ((size_t)1 << ((i) % 4))
#define EQ_CLOCK(i) ((UINT64_C(1) << 40) + (uint64_t)(i) * 1000 + \
		     ((uint64_t)((i) / 40) << TS_BITS))

/* Read x and y in step: the same sub-buffers, byte for byte. */
static void drain_pair(const struct rig *x, const struct rig *y,
		       int64_t *last, uint64_t *n)
{
	struct grb_reader_subbuf a, b;
	int rx;

	while ((rx = grb_reader_get_next(x->buf)) == 0) {
		CHECK_EQ(grb_reader_get_next(y->buf), 0);
		CHECK_EQ(grb_reader_held(x->buf, &a), 0);
		CHECK_EQ(grb_reader_held(y->buf, &b), 0);
		CHECK(memcmp(a.data, b.data, a.data_size) == 0);
		/* Then every field (all 64-bit: no padding) but data. */
		a.data = b.data = NULL;
		CHECK(memcmp(&a, &b, sizeof(a)) == 0);
		*n += check_held(x->buf, last);
		CHECK_EQ(grb_reader_put_next(x->buf), 0);
		CHECK_EQ(grb_reader_put_next(y->buf), 0);
	}
	CHECK_EQ(rx, -EAGAIN);
	CHECK_EQ(grb_reader_get_next(y->buf), -EAGAIN);
}

struct tjob {
	const struct rig *x, *y;
	struct wr_in a, b;
	pthread_t self;
	int ra, rb;
};

static void *thread_write(void *arg)
{
	struct tjob *j = (struct tjob *)arg;

	j->self = pthread_self();
	j->ra = wr(j->x, ONE, &j->a, 100, 4, NULL);
	j->rb = wr(j->y, THREE, &j->b, 100, 4, NULL);
	return NULL;
}

/* @arg: x was created under GRB_SYNC=atomic; y is created alike. */
static void case_equiv(const struct rig *x, int arg)
{
	struct tjob job = { .x = x, .a.seq = EQ_N, .b.seq = EQ_N };
	uint64_t vx[NF], vy[NF], n = 0;
	int64_t last = -1;
	unsigned int i;
	int c0, rx, ry;
	struct rig y;
	pthread_t t;

	rig_open(&y, x->cfg, x->name, arg);
	CHECK_EQ(y.rseq, x->rseq);
	job.y = &y;
	for (i = 0; i < EQ_N; i++) {
		struct wr_in ix = { .seq = i }, iy = { .seq = i };
		size_t size = EQ_SIZE(i), align = EQ_ALIGN(i);

		clock_now = EQ_CLOCK(i);
		c0 = hdr_calls;
		rx = wr(x, i & 1 ? ONE : THREE, &ix, size, align, NULL);
		ry = wr(&y, i & 1 ? THREE : ONE, &iy, size, align, NULL);
		if (rx != ry || (rx && rx != -ENOSPC && rx != -ENOBUFS)) {
			fprintf(stderr, "%s (%s), record %u: %d and %d\n",
				x->name, PATH(x), i, rx, ry);
			CHECK(0);
		}
		CHECK(hdr_calls >= c0 + 2);
		CHECK_EQ(hdr_bad, 0);
		check_seen(x, &ix, size, align, rx);
		check_seen(&y, &iy, size, align, ry);
		CHECK_U64(ix.seen.pre_offset, rx ? 0 : iy.seen.pre_offset);
		CHECK_U64(ix.seen.end, rx ? 0 : iy.seen.end);
		CHECK_EQ(ix.seen.rflags, rx ? 0 : iy.seen.rflags);
		if (i % 150 == 149)
			CHECK_EQ(grb_buf_flush(x->buf, GRB_FLUSH_ACTIVE),
				 grb_buf_flush(y.buf, GRB_FLUSH_ACTIVE));
		/* Read in bursts: records are lost or overwritten between. */
		if (i % 64 == 63)
			drain_pair(x, &y, &last, &n);
	}
	/* Another thread's records (after making room): its fill runs on
	 * that thread. */
	drain_pair(x, &y, &last, &n);
	CHECK_EQ(pthread_create(&t, NULL, thread_write, &job), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(job.ra, 0);
	CHECK_EQ(job.rb, 0);
	CHECK_EQ(job.a.calls, 1);
	CHECK(pthread_equal(job.a.thread, job.self));
	CHECK(!pthread_equal(job.a.thread, pthread_self()));
	CHECK_U64(job.a.seen.end, job.b.seen.end);
	CHECK_EQ(grb_buf_flush(x->buf, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_flush(y.buf, GRB_FLUSH_ACTIVE), 0);
	drain_pair(x, &y, &last, &n);
	CHECK_EQ(last, EQ_N);
	stats(x->chan, NULL, vx);
	stats(y.chan, NULL, vy);
	same(x->name, PATH(x), "statistics", vx, vy);
	CHECK_U64(vx[FIELD(read)], n);
	CHECK(vx[FIELD(lost_big)] > 0);
	CHECK(vx[x->cfg->mode == O ? FIELD(overwritten) : FIELD(lost_full)]);
	rig_close(&y);
}

/* ---- 3. refusals -------------------------------------------------------- */

enum { K_NESTING, K_DISABLED, K_BUF_DISABLED, K_FINALIZED, K_FULL, K_WRAP,
       K_BIG, K_HUGE, K_EMPTY, K_EMPTY_INSIDE, NK };

static const struct {
	const char *name;
	int err;
	size_t lost;            /* the counter moved, or NF for none */
	size_t size;
} kinds[NK] = {
	{ "nesting", -EBUSY, FIELD(lost_nesting), 8 },
	{ "channel disabled", -EAGAIN, NF, 8 },
	{ "buffer disabled", -EAGAIN, NF, 8 },
	{ "finalized", -ESHUTDOWN, NF, 8 },
	{ "full", -ENOBUFS, FIELD(lost_full), 1000 },
	{ "wrap", -EIO, FIELD(lost_wrap), 1000 },
	{ "too big", -ENOSPC, FIELD(lost_big), SB + 1 },
	{ "huge", -ENOSPC, FIELD(lost_big), SIZE_MAX },
	{ "empty at a boundary", -EINVAL, NF, 0 },
	{ "empty inside", -EINVAL, NF, 0 },
};

/*
 * Bring a fresh channel to refusal @k and write with @api; return what
 * that returned, and how each counter moved in @d.  Undone after, and
 * the nesting level checked.
 */
static int refuse_once(const struct grb_config *cfg, const char *name,
		       int force_atomic, int k, int api, uint64_t *d)
{
	struct grb_ctx held[GRB_MAX_NESTING];
	struct wr_in in = { .seq = 1 };
	uint64_t a[NF], b[NF];
	struct rig g;
	unsigned int i;
	int ret;

	rig_open(&g, cfg, name, force_atomic);
	/* Inside a sub-buffer, where the fast path could take it. */
	if (k != K_FULL && k != K_WRAP && k != K_EMPTY)
		put(&g, 8, NULL);
	for (i = 0; k == K_NESTING && i < GRB_MAX_NESTING; i++)
		put(&g, 8, &held[i]);
	if (k == K_DISABLED)
		CHECK_EQ(grb_channel_record_disable(g.chan), 0);
	if (k == K_BUF_DISABLED)
		CHECK_EQ(grb_buf_record_disable(g.buf), 0);
	if (k == K_FINALIZED)
		CHECK_EQ(grb_channel_finalize(g.chan), 0);
	if (k == K_WRAP)
		put(&g, 8, &held[0]);
	for (i = 0; (k == K_FULL || k == K_WRAP) && i < 4 * NSB; i++)
		put(&g, 1000, NULL);
	stats(g.chan, NULL, a);
	ret = wr(&g, api, &in, kinds[k].size, 1, NULL);
	stats(g.chan, NULL, b);
	CHECK_EQ(in.calls, 0);
	for (i = 0; i < NF; i++)
		d[i] = b[i] - a[i];
	for (i = GRB_MAX_NESTING; k == K_NESTING && i-- > 0;)
		grb_commit(cfg, &held[i]);
	if (k == K_WRAP)
		grb_commit(cfg, &held[0]);
	CHECK_EQ(grb_channel_record_enable(g.chan), 0);
	CHECK_EQ(grb_buf_record_enable(g.buf), 0);
	expect_nesting_free();
	rig_close(&g);
	return ret;
}

static void case_refusals(const struct grb_config *cfg, const char *name,
			  int force_atomic)
{
	const char *path = force_atomic ? "GRB_SYNC=atomic" : "as created";
	uint64_t d1[NF], d3[NF], want[NF];
	int k, r1, r3;

	for (k = 0; k < NK; k++) {
		if ((k == K_FULL && cfg->mode != D) ||
		    (k == K_WRAP && cfg->mode != O) ||
		    (k >= K_EMPTY && cfg->cb.record_header_size))
			continue;
		r1 = refuse_once(cfg, name, force_atomic, k, ONE, d1);
		r3 = refuse_once(cfg, name, force_atomic, k, THREE, d3);
		if (r1 != r3 || r1 != kinds[k].err) {
			fprintf(stderr, "%s (%s), %s: grb_write_record() %d, "
				"grb_reserve() %d, expected %d\n", name, path,
				kinds[k].name, r1, r3, kinds[k].err);
			CHECK(0);
		}
		memset(want, 0, sizeof(want));
		if (kinds[k].lost < NF)
			want[kinds[k].lost] = 1;
		same(name, path, kinds[k].name, d1, d3);
		same(name, path, kinds[k].name, d1, want);
	}
}

/* ---- driver ------------------------------------------------------------- */

static void run_all(int fa)
{
	static const struct grb_config *const sets[2][5] = {
		{ &pc_d, &pc_o, &pc_dt, &pc_ot, &pc_raw },
		{ &ch_d, &ch_o, &ch_dt, &ch_ot, &ch_raw },
	};
	static const char *const names[2] = { "per-CPU sync", "per-channel" };
	const struct grb_config *const *c;
	int s, i;

	for (s = 0; s < 2; s++) {
		c = sets[s];
		for (i = 0; i < 4; i++)
			rig_run(c[i], names[s], fa, case_equiv, fa);
		for (i = 0; i < 5; i++)
			case_refusals(c[i], names[s], fa);
	}
}

int main(void)
{
	rig_setup();
	run_all(0);
	run_all(1);
	rig_teardown();
	printf("test_write_record: passed\n");
	return 0;
}
