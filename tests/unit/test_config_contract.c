/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_config_contract.c - what grb/config.h promises a client
 * about its callbacks and its reservation flags, and what grb/channel.h
 * says about creation, where the other unit tests do not check it:
 *
 *  - record_header_size is called with the slot's sub-buffer offset (the
 *    header size for a record that opens a sub-buffer), the same @cfg,
 *    and a context whose rflags, data_size and client_priv are set; the
 *    slot it describes is where the context points: the record header
 *    at the slot start plus *pre_padding, the slot its size plus the
 *    payload;
 *  - GRB_RFLAG_FULL_TIMESTAMP: set on the record that opens a sub-buffer
 *    (after an overflow, an exact fill, a flush, a discard, a header-only
 *    sub-buffer), and when the timestamp differs from the previous
 *    record's above timestamp_bits, compared with the previous record,
 *    not with the sub-buffer's first; always with 64 bits, never with 0;
 *    ctx->timestamp is the whole clock value either way;
 *  - subbuf_header_size: NULL means 0 (the first slot at offset 0);
 *  - buffer_begin and buffer_end: the same header pointer, the start of
 *    the sub-buffer, zeroed on the first lap (creation maps zeroed
 *    memory); seq is the start position / subbuf_size; timestamps of the
 *    opening and the closing reservation (0 without a clock); data_size
 *    excludes padding (overflow, discard) and includes the header (a
 *    header-only sub-buffer); lost is the running count of full, wrap,
 *    too-big and nesting refusals at delivery, not of -EAGAIN ones;
 *  - record_decode gets the held sub-buffer, the slot offset and the
 *    valid bytes, and its -EINVAL reaches the reader;
 *  - buffer_create gets each buffer of the channel (the one
 *    grb_channel_buf() returns) before any sub-buffer opens;
 *    buffer_finalize comes after the final flush's buffer_end of its
 *    buffer, at finalize and at a destroy without finalize;
 *  - geometry: a NULL name is accepted; a buffer of exactly 2^48 bytes is
 *    not refused as -EINVAL (its mapping may fail: -ENOMEM); the maxima
 *    are the 2 GiB and 2^31 the attribute comments give;
 *  - grb_reserve() never sets GRB_RFLAG_PADDING.
 *
 * Each sequence runs on a per-channel configuration and a per-CPU one
 * with GRB_CONFIG_SYNC_PER_CPU (the thread pinned to one CPU), so both
 * write paths are covered where this machine has them; ctest runs the
 * program again under GRB_SYNC=atomic.  The clock is a word the test
 * sets before each reservation, so every expected value is exact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"

#define SB 4096
#define NSUB 8
#define HDR 32
#define FULL GRB_RFLAG_FULL_TIMESTAMP

static uint64_t clk;
static int mark;                        /* &mark: ctx->client_priv */

static uint64_t clock_get(void)
{
	return clk;
}

static size_t hdr_size(void)
{
	return HDR;
}

/* The record header: padding to 8 bytes, then 16 bytes with a full
 * timestamp (u32 len | 1 << 31, u32 0, u64 ts) or 8 (u32 len, u32 low). */
static size_t pre_of(size_t off)
{
	return (8 - (off & 7)) & 7;
}

static size_t rh_len(unsigned int rflags)
{
	return (rflags & FULL) ? 16 : 8;
}

struct rh_call {
	const struct grb_config *cfg;
	size_t offset;
	unsigned int rflags;
	size_t data_size;
	void *client_priv;
};
static struct rh_call calls[16];
static unsigned int ncalls;

static size_t rh_size(const struct grb_config *cfg, size_t offset,
		      size_t *pre, const struct grb_ctx *ctx)
{
	struct rh_call c = { cfg, offset, ctx->rflags, ctx->data_size,
			     ctx->client_priv };

	if (ncalls < 16)
		calls[ncalls++] = c;
	*pre = pre_of(offset);
	return *pre + rh_len(ctx->rflags);
}

/* What the buffer callbacks saw, in one sequence of ticks. */
struct sb_event {
	uint64_t seq, ts, data_size, records, lost, overwritten, tick;
	int cpu, zero;
	void *header;
};
static struct sb_event begins[64], ends[64];
static unsigned int nbegins, nends;
static struct {
	struct grb_buf *buf;
	void *priv;
	int cpu;
	uint64_t tick;
} creates[64], finals[64];
static unsigned int ncreates, nfinals;
static uint64_t tick;

static void log_info(struct sb_event *ev, void *header,
		     const struct grb_subbuf_info *info)
{
	ev->seq = info->seq;
	ev->ts = info->timestamp;
	ev->data_size = info->data_size;
	ev->records = info->records;
	ev->lost = info->lost;
	ev->overwritten = info->overwritten;
	ev->cpu = info->cpu;
	ev->header = header;
	ev->tick = ++tick;
}

static void cb_begin(struct grb_buf *buf, void *header,
		     const struct grb_subbuf_info *info)
{
	struct sb_event *ev;
	size_t i, n = grb_reader_first_record(buf);

	CHECK(nbegins < 64);
	ev = &begins[nbegins++];
	log_info(ev, header, info);
	ev->zero = 1;
	for (i = 0; i < n; i++)
		if (((unsigned char *)header)[i] != 0)
			ev->zero = 0;
	if (n >= 4)
		memcpy(header, "cch!", 4);
}

static void cb_end(struct grb_buf *buf, void *header,
		   const struct grb_subbuf_info *info)
{
	(void)buf;
	CHECK(nends < 64);
	log_info(&ends[nends++], header, info);
}

static int cb_create(struct grb_buf *buf, void *priv, int cpu)
{
	CHECK(ncreates < 64);
	creates[ncreates].buf = buf;
	creates[ncreates].priv = priv;
	creates[ncreates].cpu = cpu;
	creates[ncreates++].tick = ++tick;
	return 0;
}

static void cb_finalize(struct grb_buf *buf, void *priv, int cpu)
{
	CHECK(nfinals < 64);
	finals[nfinals].buf = buf;
	finals[nfinals].priv = priv;
	finals[nfinals].cpu = cpu;
	finals[nfinals++].tick = ++tick;
}

/* What the decoder was handed, last call. */
static const void *dec_subbuf;
static size_t dec_offset, dec_size;

static int cb_decode(const struct grb_config *cfg, const void *subbuf,
		     size_t offset, size_t data_size, struct grb_record *rec)
{
	const unsigned char *p = (const unsigned char *)subbuf;
	size_t at = offset + pre_of(offset);
	uint32_t w0, w1;
	uint64_t ts;

	(void)cfg;
	dec_subbuf = subbuf;
	dec_offset = offset;
	dec_size = data_size;
	if (at + 8 > data_size)
		return -EINVAL;
	memcpy(&w0, p + at, 4);
	memcpy(&w1, p + at + 4, 4);
	rec->offset = at;
	rec->rflags = (w0 & 0x80000000u) ? FULL : 0;
	rec->header_len = rh_len(rec->rflags);
	if (at + rec->header_len > data_size || (rec->rflags && w1 != 0))
		return -EINVAL;
	if (rec->rflags) {
		memcpy(&ts, p + at + 8, 8);
		rec->timestamp = ts;
	} else {
		rec->timestamp = w1;
	}
	rec->payload_off = at + rec->header_len;
	rec->payload_len = w0 & 0x7fffffffu;
	rec->next = rec->payload_off + rec->payload_len;
	if (rec->next > data_size)
		return -EINVAL;
	return 0;
}

#define CB(clock, hdr) { .clock_read = (clock),                         \
	.record_header_size = rh_size, .subbuf_header_size = (hdr),      \
	.buffer_begin = cb_begin, .buffer_end = cb_end,                  \
	.buffer_create = cb_create, .buffer_finalize = cb_finalize,      \
	.record_decode = cb_decode }
#define PCPU GRB_ALLOC_PER_CPU
#define PCHAN GRB_ALLOC_PER_CHANNEL
#define SYNC GRB_CONFIG_SYNC_PER_CPU

/* Compressed timestamps (8 bits kept), full ones, none. */
static const struct grb_config c8[2] = {
	{ PCHAN, GRB_MODE_DISCARD, 8, CB(clock_get, hdr_size), 0 },
	{ PCPU, GRB_MODE_DISCARD, 8, CB(clock_get, hdr_size), SYNC },
};
static const struct grb_config c64[2] = {
	{ PCHAN, GRB_MODE_OVERWRITE, 64, CB(clock_get, hdr_size), 0 },
	{ PCPU, GRB_MODE_OVERWRITE, 64, CB(clock_get, hdr_size), SYNC },
};
static const struct grb_config c0[2] = {
	{ PCHAN, GRB_MODE_DISCARD, 0, CB(NULL, NULL), 0 },
	{ PCPU, GRB_MODE_OVERWRITE, 0, CB(NULL, NULL), SYNC },
};

/* ---- the run in progress ---------------------------------------------- */

static const struct grb_config *cfg;
static struct grb_channel *chan;
static struct grb_buf *buf;
static int cpu0;                /* the CPU the thread is pinned to */
static int want_cpu;            /* what info->cpu must say */

static void start(const struct grb_config *c, void *priv)
{
	struct grb_channel_attr attr = { "ccontract", SB, NSUB, priv };
	cpu_set_t set;
	unsigned int i;

	CPU_ZERO(&set);
	CPU_SET(cpu0, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
	nbegins = nends = ncreates = nfinals = 0;
	cfg = c;
	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	want_cpu = cfg->alloc == GRB_ALLOC_PER_CPU ? cpu0 : -1;
	buf = grb_channel_buf(chan, want_cpu < 0 ? 0 : (unsigned int)cpu0);
	CHECK(buf != NULL);
	/* buffer_create: every buffer, the channel's own, with attr.priv,
	 * before any sub-buffer opened. */
	CHECK_EQ(ncreates, grb_channel_nr_bufs(chan));
	for (i = 0; i < ncreates; i++) {
		CHECK(creates[i].buf == grb_channel_buf(chan, i));
		CHECK(creates[i].priv == priv);
		CHECK_EQ(creates[i].cpu, grb_buf_cpu(creates[i].buf));
	}
	CHECK_EQ(nbegins, 0);
}

static const struct sb_event *find(const struct sb_event *evs,
				   unsigned int n, uint64_t seq)
{
	unsigned int i;

	for (i = n; i-- > 0;)
		if (evs[i].seq == seq)
			return &evs[i];
	return NULL;
}

/* Check that the logged record_header_size calls include the one that
 * describes ctx's slot, and that ctx points where it says. */
static void check_slot(const struct grb_ctx *ctx, size_t len)
{
	size_t off = (size_t)(ctx->pre_offset & (SB - 1));
	const struct sb_event *b = find(begins, nbegins,
					ctx->pre_offset / SB);
	unsigned int i, seen = 0;

	for (i = 0; i < ncalls; i++)
		if (calls[i].cfg == cfg && calls[i].offset == off &&
		    calls[i].rflags == ctx->rflags &&
		    calls[i].data_size == len &&
		    calls[i].client_priv == (void *)&mark)
			seen = 1;
	CHECK(seen);
	CHECK_U64(ctx->slot_size, pre_of(off) + rh_len(ctx->rflags) + len);
	CHECK(b != NULL);
	CHECK((char *)ctx->wptr == (char *)b->header + off + pre_of(off));
	CHECK(ctx->buf == buf);
}

/* Reserve a record of len payload bytes at clock ts; write it; commit
 * unless @hold. */
static int put_at(size_t len, uint64_t ts, struct grb_ctx *out, int hold)
{
	struct grb_ctx ctx = GRB_CTX_INIT(len, 1);
	uint32_t w[2];
	int ret;

	ctx.client_priv = &mark;
	clk = ts;
	ncalls = 0;
	ret = grb_reserve(cfg, chan, &ctx);
	if (ret)
		return ret;
	check_slot(&ctx, len);
	/* GRB_RFLAG_PADDING is the decoder's, never grb_reserve()'s. */
	CHECK_EQ(ctx.rflags & ~(unsigned int)FULL, 0);
	/* ctx->timestamp is the whole clock value, compressed or not. */
	CHECK_U64(ctx.timestamp, cfg->timestamp_bits ? ts : 0);
	w[0] = (uint32_t)len | ((ctx.rflags & FULL) ? 0x80000000u : 0);
	w[1] = (ctx.rflags & FULL) ? 0 : (uint32_t)ctx.timestamp;
	grb_write(cfg, &ctx, w, sizeof(w));
	if (ctx.rflags & FULL)
		grb_write(cfg, &ctx, &ctx.timestamp, 8);
	grb_write_fill(cfg, &ctx, 0x5a, len);
	CHECK(ctx.wptr == ctx.wend);
	if (!hold)
		grb_commit(cfg, &ctx);
	if (out)
		*out = ctx;
	return 0;
}

static uint64_t off_now(void)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	return st.produced & (SB - 1);
}

static uint64_t lost_now(void)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	return st.lost_full + st.lost_wrap + st.lost_big + st.lost_nesting;
}

/* The sub-buffer seq was delivered last, as described. */
static void check_end(uint64_t seq, uint64_t ts, uint64_t data_size,
		      uint64_t records)
{
	const struct sb_event *e, *b;

	CHECK(nends > 0);
	e = &ends[nends - 1];
	b = find(begins, nbegins, seq);
	CHECK_U64(e->seq, seq);
	CHECK_U64(e->ts, cfg->timestamp_bits ? ts : 0);
	CHECK_U64(e->data_size, data_size);
	CHECK_U64(e->records, records);
	CHECK_EQ(e->cpu, want_cpu);
	/* buffer_end patches the header buffer_begin wrote. */
	CHECK(b != NULL);
	CHECK(e->header == b->header);
	CHECK(e->tick > b->tick);
}

/* The sub-buffer seq opened last, at ts, zeroed (first lap). */
static void check_begin(uint64_t seq, uint64_t ts)
{
	const struct sb_event *b;

	CHECK(nbegins > 0);
	b = &begins[nbegins - 1];
	CHECK_U64(b->seq, seq);
	CHECK_U64(b->ts, cfg->timestamp_bits ? ts : 0);
	CHECK_EQ(b->cpu, want_cpu);
	if (seq < NSUB)
		CHECK_EQ(b->zero, 1);
}

/*
 * After finalize or destroy: each buffer created was finalized once, with
 * its cpu and attr.priv, after the delivery of its last sub-buffer.  Only
 * what start() logged is used: after a destroy the channel is gone.
 */
static void check_finalized(uint64_t last_seq, void *priv)
{
	const struct sb_event *e = find(ends, nends, last_seq);
	unsigned int i;

	CHECK_EQ(nfinals, ncreates);
	for (i = 0; i < nfinals; i++) {
		CHECK(finals[i].buf == creates[i].buf);
		CHECK(finals[i].priv == priv);
		CHECK_EQ(finals[i].cpu, creates[i].cpu);
		if (finals[i].buf == buf) {
			CHECK(e != NULL);
			CHECK(e->tick < finals[i].tick);
		}
	}
}

/* ---- 1. layout and FULL_TIMESTAMP with compressed timestamps ----------- */

static void seq_compressed(const struct grb_config *c)
{
	struct grb_ctx x;
	uint64_t off, len, prev_off;
	unsigned int n;

	start(c, &mark);
	/* Opens sub-buffer 0: at the header's end, full. */
	CHECK_EQ(put_at(5, 0x1000, &x, 0), 0);
	CHECK_U64(x.pre_offset, HDR);
	CHECK(x.rflags & FULL);
	check_begin(0, 0x1000);
	/* Low bits only: compressed (and a slot with pre-padding). */
	CHECK_EQ(put_at(3, 0x10ff, &x, 0), 0);
	CHECK_U64(x.pre_offset, HDR + 16 + 5);
	CHECK(pre_of(HDR + 16 + 5) != 0);
	CHECK_EQ(x.rflags & FULL, 0);
	/* Above the kept bits: full. */
	CHECK_EQ(put_at(3, 0x1100, &x, 0), 0);
	CHECK(x.rflags & FULL);
	/* Against the previous record (0x1100), not the first (0x1000). */
	CHECK_EQ(put_at(3, 0x1150, &x, 0), 0);
	CHECK_EQ(x.rflags & FULL, 0);
	CHECK_EQ(put_at(3, 0x1150, &x, 0), 0);
	CHECK_EQ(x.rflags & FULL, 0);
	/* The top bit alone. */
	CHECK_EQ(put_at(3, 0x1150 | (UINT64_C(1) << 63), &x, 0), 0);
	CHECK(x.rflags & FULL);
	CHECK_EQ(put_at(3, 0x11ff | (UINT64_C(1) << 63), &x, 0), 0);
	CHECK_EQ(x.rflags & FULL, 0);
	CHECK_EQ(nbegins, 1);
	CHECK_EQ(nends, 0);

	/* A record that does not fit, same clock: closes 0 where the
	 * position was (padding excluded), opens 1 with a full timestamp. */
	clk = 0x11ff | (UINT64_C(1) << 63);
	off = off_now();
	len = SB - off;
	CHECK_EQ(put_at(len, clk, &x, 0), 0);
	CHECK_U64(x.pre_offset, SB + HDR);
	CHECK(x.rflags & FULL);
	check_end(0, clk, off, 7);
	check_begin(1, clk);

	/* Exactly the rest of sub-buffer 1, compressed: it closes it. */
	off = off_now();
	len = SB - off - pre_of(off) - 8;
	CHECK_EQ(put_at(len, clk, &x, 0), 0);
	CHECK_EQ(x.rflags & FULL, 0);
	CHECK_U64(x.end, 2 * SB);
	check_end(1, clk, SB, 2);
	/* The next record, same clock, opens 2: full. */
	CHECK_EQ(put_at(1, clk, &x, 0), 0);
	CHECK_U64(x.pre_offset, 2 * SB + HDR);
	CHECK(x.rflags & FULL);
	check_begin(2, clk);

	/* A flush closes 2 at its clock; the next record is full. */
	off = off_now();
	clk += 7;
	CHECK_EQ(grb_buf_flush(buf, GRB_FLUSH_ACTIVE), 0);
	check_end(2, clk, off, 1);
	CHECK_EQ(put_at(1, clk, &x, 0), 0);
	CHECK_U64(x.pre_offset, 3 * SB + HDR);
	CHECK(x.rflags & FULL);
	check_begin(3, clk);
	/* A discard closes 3 where its slot began, at its clock. */
	CHECK_EQ(put_at(2, clk + 1, &x, 1), 0);
	CHECK_EQ(x.rflags & FULL, 0);
	prev_off = x.pre_offset & (SB - 1);
	CHECK_EQ(grb_try_discard_reserve(cfg, &x), 0);
	check_end(3, x.timestamp, prev_off, 1);
	/* Nothing open: a header-only sub-buffer, opened and closed at the
	 * flush's clock, header included in data_size. */
	clk += 2;
	n = nends;
	CHECK_EQ(grb_buf_flush(buf, GRB_FLUSH_EMPTY), 0);
	CHECK_EQ(nends, n + 1);
	check_begin(4, clk);
	check_end(4, clk, HDR, 0);
	CHECK_EQ(put_at(1, clk, &x, 0), 0);
	CHECK_U64(x.pre_offset, 5 * SB + HDR);
	CHECK(x.rflags & FULL);
	check_begin(5, clk);
	CHECK_EQ(grb_buf_flush(buf, GRB_FLUSH_ACTIVE), 0);
	check_end(5, clk, HDR + 16 + 1, 1);

	/* record_decode, through the reader: the held sub-buffer, the slot
	 * offset, the valid bytes; its -EINVAL comes back. */
	{
		struct grb_reader_subbuf sb;
		struct grb_record rec;
		size_t at;

		CHECK_EQ(grb_reader_open(buf), 0);
		CHECK_EQ(grb_reader_get_next(buf), 0);
		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		CHECK_EQ(memcmp(sb.data, "cch!", 4), 0);
		CHECK(sb.data == begins[0].header);
		at = grb_reader_first_record(buf);
		CHECK_U64(at, HDR);
		CHECK_EQ(grb_reader_record(buf, at, &rec), 0);
		CHECK(dec_subbuf == sb.data);
		CHECK_U64(dec_offset, HDR);
		CHECK_U64(dec_size, sb.data_size);
		CHECK_U64(rec.timestamp, 0x1000);
		CHECK_U64(rec.payload_len, 5);
		CHECK_EQ(grb_reader_record(buf, rec.next, &rec), 0);
		CHECK_U64(dec_offset, HDR + 16 + 5);
		CHECK_U64(rec.timestamp, 0x10ff);
		CHECK_EQ(rec.rflags, 0);
		CHECK_EQ(grb_reader_record(buf, sb.data_size - 4, &rec),
			 -EINVAL);
		CHECK_U64(dec_offset, sb.data_size - 4);
		CHECK_EQ(grb_reader_put_next(buf), 0);
		CHECK_EQ(grb_reader_release(buf), 0);
	}
	CHECK_EQ(grb_channel_finalize(chan), 0);
	check_finalized(5, &mark);
	grb_channel_destroy(chan);
	/* Destroy after finalize finalizes nothing again. */
	CHECK_EQ(nfinals, ncreates);
}

/* ---- 2. full timestamps always (64 bits), none (0 bits) --------------- */

static void seq_full(const struct grb_config *c)
{
	struct grb_ctx x;
	unsigned int i;

	start(c, NULL);
	for (i = 0; i < 5; i++) {
		CHECK_EQ(put_at(8, 0x4242, &x, 0), 0);
		CHECK(x.rflags & FULL);
		CHECK_U64(x.pre_offset, HDR + i * (16 + 8));
	}
	check_begin(0, 0x4242);
	clk = 0x4243;
	CHECK_EQ(grb_buf_flush(buf, GRB_FLUSH_ACTIVE), 0);
	check_end(0, 0x4243, HDR + 5 * 24, 5);
	/* Destroy without finalize: flushes, then finalizes each buffer. */
	CHECK_EQ(put_at(8, 0x5000, &x, 0), 0);
	grb_channel_destroy(chan);
	check_end(1, 0x5000, HDR + 24, 1);
	check_finalized(1, NULL);
}

static void seq_none(const struct grb_config *c)
{
	struct grb_ctx x;
	unsigned int i;

	start(c, NULL);
	/* No sub-buffer header: the first slot is at offset 0; no clock:
	 * no flag, no timestamp, not even on the opener. */
	for (i = 0; i < 3; i++) {
		CHECK_EQ(put_at(3, 0x777, &x, 0), 0);
		CHECK_EQ(x.rflags & FULL, 0);
		/* Slots of 11 bytes, then 5 of pre-padding each. */
		CHECK_U64(x.pre_offset, i ? 16 * i - 5 : 0);
	}
	check_begin(0, 0);
	CHECK_EQ(grb_buf_flush(buf, GRB_FLUSH_ACTIVE), 0);
	check_end(0, 0, 43, 3);
	CHECK_EQ(put_at(3, 0x777, &x, 0), 0);
	CHECK_EQ(x.rflags & FULL, 0);
	CHECK_U64(x.pre_offset, SB);
	CHECK_EQ(grb_buf_flush(buf, GRB_FLUSH_ACTIVE), 0);
	check_end(1, 0, 11, 1);
	/* A header-only sub-buffer of a client without header: empty. */
	CHECK_EQ(grb_buf_flush(buf, GRB_FLUSH_EMPTY), 0);
	check_begin(2, 0);
	check_end(2, 0, 0, 0);
	grb_channel_destroy(chan);
}

/* ---- 3. info->lost at delivery ----------------------------------------- */

static void seq_lost(const struct grb_config *c)
{
	struct grb_ctx held[GRB_MAX_NESTING], x;
	struct grb_buf_stats st;
	unsigned int i;
	int ret;

	start(c, NULL);
	CHECK_EQ(put_at(8, 10, &x, 0), 0);
	/* Too big, and one nesting level too deep: both counted. */
	CHECK_EQ(put_at(SB, 10, &x, 0), -ENOSPC);
	for (i = 0; i < GRB_MAX_NESTING; i++)
		CHECK_EQ(put_at(8, 11, &held[i], 1), 0);
	CHECK_EQ(put_at(8, 11, &x, 0), -EBUSY);
	for (i = GRB_MAX_NESTING; i-- > 0;)
		grb_commit(cfg, &held[i]);
	/* Refused because disabled: not a loss. */
	CHECK_EQ(grb_channel_record_disable(chan), 0);
	CHECK_EQ(put_at(8, 12, &x, 0), -EAGAIN);
	CHECK_EQ(grb_channel_record_enable(chan), 0);
	CHECK_U64(lost_now(), 2);
	CHECK_EQ(grb_buf_flush(buf, GRB_FLUSH_ACTIVE), 0);
	check_end(0, 12, HDR + 16 + 8 + GRB_MAX_NESTING * 16,
		  1 + GRB_MAX_NESTING);
	CHECK_U64(ends[nends - 1].lost, 2);
	CHECK_U64(ends[nends - 1].overwritten, 0);

	/* Full, no reader: the refusal is in the sub-buffer a flush then
	 * delivers. */
	for (i = 0; i < 1000; i++) {
		ret = put_at(500, 13, &x, 0);
		if (ret)
			break;
	}
	CHECK_EQ(ret, -ENOBUFS);
	CHECK_U64(lost_now(), 3);
	CHECK_EQ(grb_buf_flush(buf, GRB_FLUSH_ACTIVE), 0);
	CHECK_U64(ends[nends - 1].seq, NSUB - 1);
	CHECK_U64(ends[nends - 1].lost, 3);
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	CHECK_U64(st.lost_full, 1);
	grb_channel_destroy(chan);
}

/* Overwrite mode: a wrap refusal lands in the held-back sub-buffer's
 * count, delivered after it by the late commit. */
static void seq_wrap(const struct grb_config *c)
{
	struct grb_ctx held, x;
	struct grb_buf_stats st;
	uint64_t in0 = 1;
	unsigned int i;
	int ret;

	start(c, NULL);
	CHECK_EQ(put_at(8, 20, &held, 1), 0);
	for (i = 0; i < 1000; i++) {
		ret = put_at(500, 21, &x, 0);
		if (ret)
			break;
		if (x.pre_offset < SB)
			in0++;
	}
	CHECK_EQ(ret, -EIO);
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	CHECK_U64(st.lost_wrap, 1);
	/* Sub-buffers 1 to NSUB - 2 delivered with no loss yet; the refused
	 * reservation did not close NSUB - 1. */
	CHECK_EQ(nends, NSUB - 2);
	for (i = 0; i < nends; i++) {
		CHECK_U64(ends[i].seq, i + 1);
		CHECK_U64(ends[i].lost, 0);
	}
	grb_commit(cfg, &held);
	CHECK_EQ(nends, NSUB - 1);
	CHECK_U64(ends[nends - 1].seq, 0);
	CHECK_U64(ends[nends - 1].records, in0);
	CHECK_U64(ends[nends - 1].lost, 1);
	CHECK_U64(ends[nends - 1].overwritten, 0);
	grb_channel_destroy(chan);
}

/* ---- 4. creation ------------------------------------------------------- */

static void test_geometry(void)
{
	static const struct grb_config plain = {
		PCHAN, GRB_MODE_DISCARD, 0, { 0 }, 0,
	};
	struct grb_channel_attr attr = { NULL, SB, 2, NULL };
	struct grb_channel *ch = NULL;
	int ret;

	/* "<= 2 GiB", "<= 2^31". */
	CHECK_U64(GRB_SUBBUF_SIZE_MAX, UINT64_C(1) << 31);
	CHECK_U64(GRB_NUM_SUBBUF_MAX, UINT64_C(1) << 31);
	/* A NULL name is "". */
	CHECK_EQ(grb_channel_create(&plain, &attr, &ch), 0);
	grb_channel_destroy(ch);
	/* 2^31 x 2^17 = 2^48 bytes: not "more than 2^48", so not -EINVAL;
	 * the mapping itself may not fit in the address space. */
	attr.subbuf_size = (size_t)GRB_SUBBUF_SIZE_MAX;
	attr.num_subbuf = (size_t)1 << 17;
	ch = NULL;
	ret = grb_channel_create(&plain, &attr, &ch);
	CHECK(ret == 0 || ret == -ENOMEM);
	if (ret == 0)
		grb_channel_destroy(ch);
	else
		CHECK(ch == NULL);
}

int main(void)
{
	unsigned int v;

	cpu0 = sched_getcpu();
	CHECK(cpu0 >= 0);
	{
		struct grb_channel_attr attr = { "path", SB, NSUB, NULL };
		enum grb_path_reason why;
		int path;

		CHECK_EQ(grb_channel_create(&c8[1], &attr, &chan), 0);
		path = grb_channel_write_path(chan, &why);
		printf("per-CPU variants: %s path (reason %d)\n",
		       path == GRB_WRITE_RSEQ ? "rseq" : "atomic", (int)why);
		grb_channel_destroy(chan);
	}
	test_geometry();
	for (v = 0; v < 2; v++) {
		seq_compressed(&c8[v]);
		seq_full(&c64[v]);
		seq_none(&c0[v]);
		seq_lost(&c8[v]);
		seq_wrap(&c64[v]);
	}
	printf("test_config_contract: passed\n");
	return 0;
}
