/* SPDX-License-Identifier: MIT */
/*
 * tests/common/wr_rig.c - the record client and the channels of the
 * grb_write_record() tests (wr_rig.h).
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

#include "check.h"
#include "expect_path.h"
#include "wr_rig.h"

/* ---- the client --------------------------------------------------------- */

_Thread_local struct wr_in *cur_in;
int hdr_calls, hdr_bad;
uint64_t clock_now = UINT64_C(1) << 40;

static uint64_t clock_get(void)
{
	return clock_now;
}

uint8_t pat(uint64_t seq, size_t j)
{
	return j < 8 ? (uint8_t)(seq >> (8 * j)) : (uint8_t)(seq * 131 + j * 7);
}

static size_t wr_header(const struct grb_config *cfg, size_t off,
			size_t *pre, const struct grb_ctx *ctx)
{
	hdr_calls++;
	hdr_bad += ctx->client_priv != cur_in;
	*pre = grb_offset_align(off, 4);
	return *pre + HDR_LEN(cfg);
}

static int wr_decode(const struct grb_config *cfg, const void *subbuf,
		     size_t offset, size_t size, struct grb_record *rec)
{
	const char *p = (const char *)subbuf;
	size_t at = offset + grb_offset_align(offset, 4), pay;
	uint32_t word;

	if (at + HDR_LEN(cfg) > size)
		return -EINVAL;
	memcpy(&word, p + at, 4);
	rec->offset = at;
	rec->rflags = (word & W_FULL) ? GRB_RFLAG_FULL_TIMESTAMP : 0;
	rec->header_len = HDR_LEN(cfg);
	rec->timestamp = 0;
	memcpy(&rec->timestamp, p + at + 4, HDR_LEN(cfg) - 4);
	pay = at + HDR_LEN(cfg);
	pay += grb_offset_align(pay, (size_t)1 << ((word >> W_ALIGN) & 15));
	rec->payload_off = pay;
	rec->payload_len = word & W_LEN;
	if (pay > size || rec->payload_len > size - pay)
		return -EINVAL;
	rec->next = pay + rec->payload_len;
	return 0;
}

/* Raise SIGUSR1 when this sub-buffer is delivered (case 4). */
volatile int64_t end_trigger = -1;

static void wr_buffer_end(struct grb_buf *buf, void *header,
			  const struct grb_subbuf_info *info)
{
	(void)buf;
	(void)header;
	if ((int64_t)info->seq == end_trigger) {
		end_trigger = -1;
		CHECK_EQ(raise(SIGUSR1), 0);
	}
}

/* The header (for configurations that have one), then the payload. */
static void emit(const struct grb_config *cfg, struct grb_ctx *ctx,
		 uint64_t seq)
{
	uint32_t word = (uint32_t)ctx->data_size & W_LEN;
	uint8_t b;
	size_t j;

	if (cfg->cb.record_header_size) {
		word |= (uint32_t)__builtin_ctzl(ctx->largest_align) << W_ALIGN;
		if (ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP)
			word |= W_FULL;
		grb_write(cfg, ctx, &word, 4);
		grb_write(cfg, ctx, &ctx->timestamp, HDR_LEN(cfg) - 4);
	}
	grb_ctx_align(cfg, ctx, ctx->largest_align);
	for (j = 0; j < ctx->data_size; j++) {
		b = pat(seq, j);
		grb_write(cfg, ctx, &b, 1);
	}
}

/* The fill: note what it got, run the record's hook, write. */
static void wr_fill(const struct grb_config *cfg, struct grb_ctx *ctx)
{
	struct wr_in *in = cur_in;

	in->calls++;
	in->thread = pthread_self();
	in->seen = *ctx;
	if (in->hook)
		in->hook(ctx);
	emit(cfg, ctx, in->seq);
	in->left = ctx->wend - ctx->wptr;
}

#define CB { .record_header_size = wr_header, .record_decode = wr_decode, \
	     .buffer_end = wr_buffer_end }
#define CB_TS { .clock_read = clock_get, .record_header_size = wr_header, \
		.record_decode = wr_decode, .buffer_end = wr_buffer_end }
const struct grb_config pc_d = { PC, D, 0, CB, SYNC };
const struct grb_config pc_o = { PC, O, 0, CB, SYNC };
const struct grb_config pc_dt = { PC, D, TS_BITS, CB_TS, SYNC };
const struct grb_config pc_ot = { PC, O, TS_BITS, CB_TS, SYNC };
const struct grb_config pc_raw = { PC, D, 0, { 0 }, SYNC };
const struct grb_config ch_d = { CH, D, 0, CB, 0 };
const struct grb_config ch_o = { CH, O, 0, CB, 0 };
const struct grb_config ch_dt = { CH, D, TS_BITS, CB_TS, 0 };
const struct grb_config ch_ot = { CH, O, TS_BITS, CB_TS, 0 };
const struct grb_config ch_raw = { CH, D, 0, { 0 }, 0 };
const struct grb_config probe_cfg = { CH, O, 0, { 0 }, 0 };
struct grb_channel *probe;

/* ---- CPUs, channels, statistics ----------------------------------------- */

int cpus[2], ncpus;

/* As test_writer_contract.c: create, and check the path taken. */
void rig_open(struct rig *g, const struct grb_config *cfg, const char *name,
	      int force_atomic)
{
	chan_rig_open(g, cfg, name, SB, NSB, force_atomic, cpus[0]);
}

void rig_close(struct rig *g)
{
	CHECK_EQ(hdr_bad, 0);
	chan_rig_close(g);
}

const char *const field_names[NF] = {
	"written", "read", "overwritten", "lost_full", "lost_wrap",
	"lost_big", "lost_nesting", "discarded", "produced", "consumed",
	"lost_dead", "recovered", "remote_commits", "remote_moves",
};

/* The counters of @buf (or of @chan when @buf is NULL), as an array. */
void stats(struct grb_channel *chan, struct grb_buf *buf, uint64_t *v)
{
	struct grb_buf_stats st;

	if (buf)
		CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	else
		CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	memcpy(v, &st, sizeof(st));
}

/* Counters @x as expected in @y; each one that is not is named. */
void same(const char *name, const char *path, const char *what,
	  const uint64_t *x, const uint64_t *y)
{
	size_t i;

	for (i = 0; i < NF; i++) {
		if (x[i] == y[i])
			continue;
		fprintf(stderr, "%s (%s), %s: %s %llu, expected %llu\n",
			name, path, what, field_names[i],
			(unsigned long long)x[i], (unsigned long long)y[i]);
		CHECK(0);
	}
}

/* Exactly GRB_MAX_NESTING reservations fit on this thread, then -EBUSY. */
void nesting_free_at(int line)
{
	struct grb_ctx c[GRB_MAX_NESTING + 1];
	int i, ret;

	for (i = 0; i <= GRB_MAX_NESTING; i++) {
		c[i] = (struct grb_ctx)GRB_CTX_INIT(8, 1);
		ret = grb_reserve(&probe_cfg, probe, &c[i]);
		if (ret != (i < GRB_MAX_NESTING ? 0 : -EBUSY)) {
			fprintf(stderr, "line %d: nesting level %d of %d: "
				"%d\n", line, i + 1, GRB_MAX_NESTING, ret);
			CHECK(0);
		}
	}
	for (i = GRB_MAX_NESTING; i-- > 0;)
		grb_commit(&probe_cfg, &c[i]);
}

/* ---- writing and reading ------------------------------------------------ */

/* grb_write_record() with a constant configuration, as a client has it. */
#define ONE_CALL(c) do {                                                  \
	if (g->cfg == &(c))                                               \
		return grb_write_record(&(c), g->chan, size, align, in,   \
					wr_fill);                         \
} while (0)

static int one_call(const struct rig *g, struct wr_in *in, size_t size,
		    size_t align)
{
	ONE_CALL(pc_d);
	ONE_CALL(pc_o);
	ONE_CALL(pc_dt);
	ONE_CALL(pc_ot);
	ONE_CALL(pc_raw);
	ONE_CALL(ch_d);
	ONE_CALL(ch_o);
	ONE_CALL(ch_dt);
	ONE_CALL(ch_ot);
	ONE_CALL(ch_raw);
	CHECK(0);
	return 0;
}

/* Write record @in with either API; with @held, reserve it only. */
int wr(const struct rig *g, int api, struct wr_in *in, size_t size,
       size_t align, struct grb_ctx *held)
{
	struct wr_in *outer = cur_in;
	struct grb_ctx ctx, *c = held ? held : &ctx;
	int ret;

	in->calls = 0;
	cur_in = in;
	if (api == ONE) {
		ret = one_call(g, in, size, align);
	} else {
		grb_ctx_init(c, size, align);
		c->client_priv = in;
		ret = grb_reserve(g->cfg, g->chan, c);
		if (ret == 0)
			wr_fill(g->cfg, c);
		if (ret == 0 && !held)
			grb_commit(g->cfg, c);
	}
	cur_in = outer;
	return ret;
}

void put(const struct rig *g, size_t size, struct grb_ctx *held)
{
	struct wr_in in = { .seq = 0 };

	CHECK_EQ(wr(g, THREE, &in, size, 1, held), 0);
}

/*
 * What the fill of a record this thread wrote (@ret returned) got: one
 * call when it succeeded, none otherwise; the inputs as passed; the
 * outputs of a reservation in g->buf; wptr at the header, wend where
 * header, alignment padding and payload end, all of it written.
 */
void check_seen(const struct rig *g, const struct wr_in *in, size_t size,
		size_t align, int ret)
{
	const struct grb_ctx *c = &in->seen;
	uint64_t w = c->pre_offset;
	size_t hl = 0;

	CHECK_EQ(in->calls, ret == 0);
	if (ret)
		return;
	CHECK(pthread_equal(in->thread, pthread_self()));
	CHECK(c->client_priv == in);
	CHECK_U64(c->data_size, size);
	CHECK_U64(c->largest_align, align);
	CHECK(c->buf == g->buf);
	CHECK_EQ(c->cpu, g->cfg->alloc == PC ? cpus[0] : 0);
	CHECK_U64(c->timestamp, g->cfg->timestamp_bits ? clock_now : 0);
	if (g->cfg->timestamp_bits && c->pre_offset % SB == 0)
		CHECK(c->rflags & GRB_RFLAG_FULL_TIMESTAMP);
	CHECK_U64(c->end - c->pre_offset, c->slot_size);
	if (g->cfg->cb.record_header_size) {
		hl = HDR_LEN(g->cfg);
		w += grb_offset_align(w, 4);
	}
	CHECK_U64(w + (uint64_t)(c->wend - c->wptr), c->end);
	CHECK_U64(w + hl + grb_offset_align(w + hl, align) + size, c->end);
	CHECK_EQ(in->left, 0);
}

/*
 * Check every record of the held sub-buffer: intact, and with @last,
 * seqs increasing after *last.  Return: how many.
 */
uint64_t check_held(struct grb_buf *buf, int64_t *last)
{
	static uint8_t p[SB];
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	uint64_t n = 0, seq;
	size_t off, j;
	int ret;

	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	for (off = grb_reader_first_record(buf);
	     (ret = grb_reader_record(buf, off, &rec)) == 0; off = rec.next) {
		CHECK(rec.payload_len >= 8 && rec.payload_len <= SB);
		CHECK_EQ(grb_reader_read(buf, rec.payload_off, p,
					 rec.payload_len), 0);
		for (seq = 0, j = 0; j < 8; j++)
			seq |= (uint64_t)p[j] << (8 * j);
		for (j = 8; j < rec.payload_len && p[j] == pat(seq, j); j++)
			;
		if (j < rec.payload_len || (last && (int64_t)seq <= *last)) {
			fprintf(stderr, "sub-buffer %llu, record %llu at %zu:"
				" %s (byte %zu of %zu; previous %lld)\n",
				(unsigned long long)sb.seq,
				(unsigned long long)seq, rec.offset,
				j < rec.payload_len ? "damaged" : "misplaced",
				j, rec.payload_len,
				last ? (long long)*last : -1LL);
			CHECK(0);
		}
		if (last)
			*last = (int64_t)seq;
		n++;
	}
	CHECK_EQ(ret, -ENODATA);
	CHECK_U64(n, sb.records);
	return n;
}

/* Read every delivered sub-buffer; return the records read. */
uint64_t drain(struct grb_buf *buf, int64_t *last)
{
	uint64_t n = 0;
	int ret;

	while ((ret = grb_reader_get_next(buf)) == 0) {
		n += check_held(buf, last);
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK_EQ(ret == -ENODATA ? -EAGAIN : ret, -EAGAIN);
	return n;
}

/* ---- set-up ------------------------------------------------------------- */

void rig_setup(void)
{
	struct grb_channel_attr attr = { "probe", SB, NSB, NULL };
	cpu_set_t all;
	struct rig g;
	int c;

	setvbuf(stdout, NULL, _IONBF, 0);
	CHECK_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
	/* The highest CPU first: a ctx->cpu of 0 then cannot pass for it. */
	for (c = CPU_SETSIZE - 1; c >= 0 && ncpus < 2; c--)
		if (CPU_ISSET(c, &all))
			cpus[ncpus++] = c;
	CHECK(ncpus > 0);
	pin(cpus[0]);
	CHECK_EQ(grb_channel_create(&probe_cfg, &attr, &probe), 0);
	rig_open(&g, &pc_d, "probe", 0);
	printf("per-CPU sync channels: %s\n", PATH(&g));
	rig_close(&g);
}

void rig_teardown(void)
{
	grb_channel_destroy(probe);
	probe = NULL;
}

void rig_run(const struct grb_config *cfg, const char *name, int fa,
	     void (*fn)(const struct rig *g, int arg), int arg)
{
	struct rig g;

	rig_open(&g, cfg, name, fa);
	fn(&g, arg);
	expect_nesting_free();
	rig_close(&g);
}
