/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_write_record.c - grb_write_record() against each promise
 * of its doc comment (grb/writer.h, docs/design.md section 25.9):
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
 *     gives the nesting level back;
 *  4. overwrite mode over many laps, a reader taking, pinning and giving
 *     back sub-buffers between writes: every record intact; and a record
 *     written while its lap's first writer has not yet cleared NOREF,
 *     the reader swapping the slot out meanwhile;
 *  5. a fill whose signal handler writes a record: both read back, the
 *     handler's after, the nesting levels given back;
 *  6. a fill that migrates: one remote commit on the per-CPU path, the
 *     record in ctx->cpu's buffer;
 *  7. a reader blocked in grb_buf_wait() is woken by the write that
 *     delivers (its reservation, or its commit) or meets a bytes mark.
 *
 * On per-CPU configurations with GRB_CONFIG_SYNC_PER_CPU and per-channel
 * ones, overwrite and discard, with and without timestamps, each channel
 * created as the environment decides and under GRB_SYNC=atomic (as in
 * test_writer_contract.c), so both paths are checked in every run.
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "expect_path.h"
#include "grb/grb.h"

#define SB 4096
#define NSB 4
#define TS_BITS 27
#define WAIT_NS INT64_C(5000000000)

enum { ONE, THREE };    /* grb_write_record(), or the three calls */

/* ---- the client --------------------------------------------------------- */

/*
 * A record, 4-byte aligned: a u32 word (payload length, log2 of the
 * payload's alignment, W_FULL for GRB_RFLAG_FULL_TIMESTAMP), the u64
 * timestamp (with a clock), padding, the payload: the 8 bytes of the
 * record's seq, then pat(seq, j).
 */
#define W_LEN 0x00ffffffu
#define W_ALIGN 24
#define W_FULL 0x80000000u

struct wr_in {                  /* one record, and the test's client_priv */
	uint64_t seq;
	void (*hook)(struct grb_ctx *ctx);      /* the fill runs it first */
	int calls;              /* fill calls */
	pthread_t thread;       /* the thread of the last one */
	struct grb_ctx seen;    /* the context it got */
	ptrdiff_t left;         /* wend - wptr after writing */
};

/* The record being written on this thread (a signal handler's nests). */
static _Thread_local struct wr_in *cur_in;
static int hdr_calls, hdr_bad;
static uint64_t clock_now = UINT64_C(1) << 40;

static uint64_t clock_get(void)
{
	return clock_now;
}

static uint8_t pat(uint64_t seq, size_t j)
{
	return j < 8 ? (uint8_t)(seq >> (8 * j)) : (uint8_t)(seq * 131 + j * 7);
}

#define HDR_LEN(cfg) ((cfg)->timestamp_bits ? 12u : 4u)

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
static volatile int64_t end_trigger = -1;

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
#define PC GRB_ALLOC_PER_CPU
#define CH GRB_ALLOC_PER_CHANNEL
#define D GRB_MODE_DISCARD
#define O GRB_MODE_OVERWRITE
#define SYNC GRB_CONFIG_SYNC_PER_CPU
static const struct grb_config pc_d = { PC, D, 0, CB, SYNC };
static const struct grb_config pc_o = { PC, O, 0, CB, SYNC };
static const struct grb_config pc_dt = { PC, D, TS_BITS, CB_TS, SYNC };
static const struct grb_config pc_ot = { PC, O, TS_BITS, CB_TS, SYNC };
static const struct grb_config pc_raw = { PC, D, 0, { 0 }, SYNC };
static const struct grb_config ch_d = { CH, D, 0, CB, 0 };
static const struct grb_config ch_o = { CH, O, 0, CB, 0 };
static const struct grb_config ch_dt = { CH, D, TS_BITS, CB_TS, 0 };
static const struct grb_config ch_ot = { CH, O, TS_BITS, CB_TS, 0 };
static const struct grb_config ch_raw = { CH, D, 0, { 0 }, 0 };
/* The nesting level is probed on a channel of its own. */
static const struct grb_config probe_cfg = { CH, O, 0, { 0 }, 0 };
static struct grb_channel *probe;

/* ---- CPUs, channels, statistics ----------------------------------------- */

static int cpus[2], ncpus;      /* cpus[0]: where the thread lives */

static void pin(int c)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
	CHECK_EQ(sched_getcpu(), c);
}

struct rig {
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct grb_buf *buf;    /* the buffer of cpus[0] (or the only one) */
	int rseq;               /* the channel took the per-CPU path */
	const char *name;
};

#define PATH(g) ((g)->rseq ? "rseq path" : "atomic path")

/* As test_writer_contract.c: create, and check the path taken. */
static void rig_open(struct rig *g, const struct grb_config *cfg,
		     const char *name, int force_atomic)
{
	struct grb_channel_attr attr = { name, SB, NSB, NULL };
	const char *orig = getenv("GRB_SYNC");
	char *saved = orig ? strdup(orig) : NULL;
	enum grb_path_reason why = (enum grb_path_reason)-1, want;
	int sync = (cfg->flags & SYNC) != 0;

	CHECK(!orig || saved);
	if (force_atomic)
		CHECK_EQ(setenv("GRB_SYNC", "atomic", 1), 0);
	want = sync ? test_expected_reason(0) : GRB_PATH_AS_ASKED;
	memset(g, 0, sizeof(*g));
	CHECK_EQ(grb_channel_create(cfg, &attr, &g->chan), 0);
	if (force_atomic && saved)
		CHECK_EQ(setenv("GRB_SYNC", saved, 1), 0);
	else if (force_atomic)
		CHECK_EQ(unsetenv("GRB_SYNC"), 0);
	free(saved);
	g->cfg = cfg;
	g->name = name;
	g->rseq = grb_channel_write_path(g->chan, &why) == GRB_WRITE_RSEQ;
	CHECK_EQ(why, want);
	CHECK_EQ(g->rseq, sync && want == GRB_PATH_AS_ASKED);
	g->buf = grb_channel_buf(g->chan, cfg->alloc == PC ?
				 (unsigned int)cpus[0] : 0);
	CHECK(g->buf != NULL);
	CHECK_EQ(grb_reader_open(g->buf), 0);
}

static void rig_close(struct rig *g)
{
	char msg[160];
	unsigned int i;

	for (i = 0; i < grb_channel_nr_bufs(g->chan); i++) {
		msg[0] = '\0';
		if (grb_buf_validate(grb_channel_buf(g->chan, i), msg,
				     sizeof(msg))) {
			fprintf(stderr, "%s: buffer %u: %s\n", g->name, i, msg);
			CHECK(0);
		}
	}
	CHECK_EQ(hdr_bad, 0);
	grb_channel_destroy(g->chan);
}

#define NF (sizeof(struct grb_buf_stats) / sizeof(uint64_t))
#define FIELD(name) (offsetof(struct grb_buf_stats, name) / sizeof(uint64_t))

static const char *const field_names[NF] = {
	"written", "read", "overwritten", "lost_full", "lost_wrap",
	"lost_big", "lost_nesting", "discarded", "produced", "consumed",
	"lost_dead", "recovered", "remote_commits", "remote_moves",
};

/* The counters of @buf (or of @chan when @buf is NULL), as an array. */
static void stats(struct grb_channel *chan, struct grb_buf *buf,
		  uint64_t *v)
{
	struct grb_buf_stats st;

	if (buf)
		CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	else
		CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	memcpy(v, &st, sizeof(st));
}

/* Counters @x as expected in @y; each one that is not is named. */
static void same(const char *name, const char *path, const char *what,
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
static void nesting_free_at(int line)
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

#define expect_nesting_free() nesting_free_at(__LINE__)

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
static int wr(const struct rig *g, int api, struct wr_in *in, size_t size,
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

static void put(const struct rig *g, size_t size, struct grb_ctx *held)
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
static void check_seen(const struct rig *g, const struct wr_in *in,
		       size_t size, size_t align, int ret)
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
static uint64_t check_held(struct grb_buf *buf, int64_t *last)
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
static uint64_t drain(struct grb_buf *buf, int64_t *last)
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

/* ---- 4. overwrite mode over many laps ----------------------------------- */

#define LAP_N 400

static void case_laps(const struct rig *g, int arg)
{
	struct wr_in in = { .seq = 0 };
	uint64_t c, p, n = 0, v[NF];
	int64_t last = -1;
	unsigned int i;
	int ret;

	(void)arg;
	for (i = 0; i < LAP_N; i++) {
		in.seq = i;
		CHECK_EQ(wr(g, ONE, &in, 8 + (i * 53u) % 600, 1, NULL), 0);
		/* The reader takes one every 4 records for 60 records, then
		 * nothing for 60; every third time it pins the oldest and
		 * gives it back unconsumed. */
		if ((i / 60) % 2 || i % 4)
			continue;
		if (i % 12 == 0) {
			if (grb_reader_snapshot(g->buf, &c, &p) == 0 &&
			    grb_reader_get_subbuf(g->buf, c) == 0) {
				check_held(g->buf, NULL);
				CHECK_EQ(grb_reader_put_subbuf(g->buf), 0);
			}
			continue;
		}
		ret = grb_reader_get_next(g->buf);
		CHECK(ret == 0 || ret == -EAGAIN);
		if (ret == 0) {
			n += check_held(g->buf, &last);
			CHECK_EQ(grb_reader_put_next(g->buf), 0);
		}
	}
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	n += drain(g->buf, &last);
	CHECK_EQ(last, LAP_N - 1);
	stats(NULL, g->buf, v);
	CHECK_U64(v[FIELD(written)], LAP_N);
	CHECK_U64(v[FIELD(read)], n);
	CHECK_U64(v[FIELD(read)] + v[FIELD(overwritten)], LAP_N);
	CHECK(v[FIELD(overwritten)] > 0);
	CHECK(v[FIELD(produced)] >= 4 * NSB * SB);      /* four laps */
}

/* What the SIGUSR1 handler of cases 4 and 5 writes. */
static const struct rig *sig_g;
static struct wr_in sig_in;
static size_t sig_size;
static volatile int sig_ran, sig_ret, sig_get;

static void on_sig(int sig)
{
	int saved = errno;

	(void)sig;
	sig_ran++;
	sig_ret = wr(sig_g, ONE, &sig_in, sig_size, 1, NULL);
	errno = saved;
}

static void get_hook(struct grb_ctx *ctx)
{
	sig_get = grb_reader_get_next(ctx->buf);
}

/*
 * A lap's first writer A has moved the position into slot 0's next lap
 * and, closing the old sub-buffer, delivers it (buffer_end) before it
 * takes slot 0 from the reader: NOREF is still set.  A signal there
 * writes record B with grb_write_record(); B's fill lets the reader take
 * the oldest sub-buffer (a reader thread could, at any time), then
 * writes.  What the reader got must be intact, and B read back later.
 */
static void case_noref(const struct rig *g, int arg)
{
	struct wr_in a = { .seq = 0 };
	int64_t last = -1;
	uint64_t n, v[NF];

	(void)arg;
	/* Four 1000-byte records per sub-buffer: one lap, none read. */
	for (a.seq = 0; a.seq < 4 * NSB; a.seq++)
		CHECK_EQ(wr(g, ONE, &a, 1000, 1, NULL), 0);
	sig_g = g;
	sig_in = (struct wr_in){ .seq = 4 * NSB + 1, .hook = get_hook };
	sig_size = 1000;
	sig_ran = 0;
	sig_get = 1;
	end_trigger = NSB - 1;
	CHECK_EQ(wr(g, ONE, &a, 1000, 1, NULL), 0);
	CHECK_EQ(sig_ran, 1);
	CHECK_EQ(sig_ret, 0);
	CHECK_EQ(sig_get, 0);
	CHECK_U64(a.seen.pre_offset, (uint64_t)NSB * SB);
	CHECK_U64(sig_in.seen.pre_offset, a.seen.end);
	n = check_held(g->buf, &last);
	CHECK_EQ(grb_reader_put_next(g->buf), 0);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	n += drain(g->buf, &last);
	CHECK_EQ(last, 4 * NSB + 1);
	stats(NULL, g->buf, v);
	CHECK_U64(v[FIELD(written)], 4 * NSB + 2);
	CHECK_U64(v[FIELD(read)], n);
	CHECK_U64(v[FIELD(read)] + v[FIELD(overwritten)], 4 * NSB + 2);
}

/* ---- 5. a signal handler writes inside the fill ------------------------- */

static void raise_hook(struct grb_ctx *ctx)
{
	(void)ctx;
	CHECK_EQ(raise(SIGUSR1), 0);
}

static void case_signal(const struct rig *g, int arg)
{
	/* Round 0: the outer record opens the sub-buffer; 1: inside it;
	 * 2: inside it, and the handler's does not fit: it closes the
	 * sub-buffer, which the outer commit then delivers. */
	static const size_t inner[3] = { 40, 40, SB - 64 };
	struct wr_in out = { .hook = raise_hook };
	uint64_t n, v[NF];
	int64_t last = -1;
	int r;

	(void)arg;
	sig_g = g;
	for (r = 0; r < 3; r++) {
		out.seq = 2 * (uint64_t)r;
		sig_in = (struct wr_in){ .seq = out.seq + 1 };
		sig_size = inner[r];
		sig_ran = 0;
		CHECK_EQ(wr(g, ONE, &out, 40, 1, NULL), 0);
		CHECK_EQ(sig_ran, 1);
		CHECK_EQ(sig_ret, 0);
		check_seen(g, &out, 40, 1, 0);
		check_seen(g, &sig_in, inner[r], 1, 0);
		CHECK_U64(sig_in.seen.pre_offset, r < 2 ? out.seen.end : SB);
		expect_nesting_free();
	}
	/* Delivered by the outer commit: no flush needed. */
	CHECK_EQ(grb_reader_get_next(g->buf), 0);
	n = check_held(g->buf, &last);
	CHECK_EQ(grb_reader_put_next(g->buf), 0);
	CHECK_EQ(last, 4);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	n += drain(g->buf, &last);
	CHECK_U64(n, 6);
	CHECK_EQ(last, 5);
	stats(NULL, g->buf, v);
	CHECK_U64(v[FIELD(written)], 6);
}

/* ---- 6. the fill migrates ----------------------------------------------- */

static void move_hook(struct grb_ctx *ctx)
{
	(void)ctx;
	pin(cpus[1]);
}

static void case_migrate(const struct rig *g, int arg)
{
	struct grb_buf *b1 = grb_channel_buf(g->chan, (unsigned int)cpus[1]);
	uint64_t a0[NF], a1[NF], z0[NF], z1[NF];
	struct wr_in in = { .hook = move_hook };
	int64_t last = -1;

	(void)arg;
	/* Record 0 opens the sub-buffer (slow path), 1 goes inside it. */
	for (in.seq = 0; in.seq < 2; in.seq++) {
		stats(NULL, g->buf, z0);
		stats(NULL, b1, z1);
		CHECK_EQ(wr(g, ONE, &in, 64, 1, NULL), 0);
		CHECK_EQ(sched_getcpu(), cpus[1]);
		stats(NULL, g->buf, a0);
		stats(NULL, b1, a1);
		pin(cpus[0]);
		CHECK_EQ(in.calls, 1);
		CHECK_EQ(in.seen.cpu, cpus[0]);
		CHECK(in.seen.buf == g->buf);
		/* One remote commit, and everything on the buffer reserved
		 * in; nothing on the other. */
		z0[FIELD(written)]++;
		z0[FIELD(produced)] += in.seen.slot_size;
		z0[FIELD(remote_commits)] += g->rseq ? 1 : 0;
		same(g->name, PATH(g), "buffer reserved in", a0, z0);
		same(g->name, PATH(g), "buffer moved to", a1, z1);
	}
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	CHECK_U64(drain(grb_channel_buf(g->chan, (unsigned int)in.seen.cpu),
			&last), 2);
	CHECK_EQ(last, 1);
}

/* ---- 7. a waiting reader is woken --------------------------------------- */

enum { W_SLOW, W_FAST, W_LIVE };

struct waiter {
	struct grb_buf *buf;
	struct grb_watermark wm;
	int ret, started, done;
	pid_t tid;
	int64_t ns;             /* how long grb_buf_wait() took */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct waiter *cur_waiter;

static void *wait_main(void *arg)
{
	struct waiter *w = (struct waiter *)arg;

	w->tid = gettid();
	__atomic_store_n(&w->started, 1, __ATOMIC_RELEASE);
	w->ns = now_ns();
	w->ret = grb_buf_wait(w->buf, &w->wm, WAIT_NS);
	w->ns = now_ns() - w->ns;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Until the waiter sleeps in futex(2), as /proc tells (2 s at most). */
static void wait_blocked(pid_t tid)
{
	char path[64], line[32] = "";
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	for (i = 0; i < 2000 && atoi(line) != SYS_futex; i++) {
		usleep(1000);
		f = fopen(path, "r");
		if (!f)
			return;
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
	}
}

/* Close the sub-buffer under the record being written: its commit will
 * deliver it.  The waiter must still be waiting. */
static void flush_hook(struct grb_ctx *ctx)
{
	CHECK_EQ(grb_buf_flush(ctx->buf, GRB_FLUSH_ACTIVE), 0);
	CHECK(!__atomic_load_n(&cur_waiter->done, __ATOMIC_ACQUIRE));
}

static void case_wake(const struct rig *g, int how)
{
	struct waiter w = { g->buf, { 1, 0 }, 1, 0, 0, 0, 0 };
	struct wr_in a = { .seq = 1 }, b = { .seq = 2 };
	size_t size = how == W_SLOW ? SB / 2 : 64;
	int64_t last = -1;
	pthread_t t;

	/* A record that opens the sub-buffer, before the wait. */
	CHECK_EQ(wr(g, ONE, &a, size, 1, NULL), 0);
	if (how == W_LIVE)
		w.wm.bytes = a.seen.slot_size + 1;
	if (how == W_FAST)
		b.hook = flush_hook;
	cur_waiter = &w;
	CHECK_EQ(pthread_create(&t, NULL, wait_main, &w), 0);
	while (!__atomic_load_n(&w.started, __ATOMIC_ACQUIRE))
		usleep(100);
	wait_blocked(w.tid);
	CHECK(!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE));
	/* W_SLOW: b does not fit, its reservation delivers; W_FAST: b's
	 * commit delivers; W_LIVE: b's commit passes the bytes mark. */
	CHECK_EQ(wr(g, ONE, &b, size, 1, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	/*
	 * Woken, not timed out.  A waiter whose wake-up was lost returns
	 * 0 too, at its deadline, when it finds the data there (its
	 * documented "met on entry"): the time tells them apart.
	 */
	if (w.ret != 0 || w.ns >= WAIT_NS) {
		fprintf(stderr, "%s (%s), wake %d: grb_buf_wait() %d after "
			"%lld ms\n", g->name, PATH(g), how, w.ret,
			(long long)(w.ns / 1000000));
		CHECK(0);
	}
	if (how != W_SLOW)
		CHECK_U64(b.seen.pre_offset, a.seen.end);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE),
		 how == W_FAST ? -ENODATA : 0);
	CHECK_U64(drain(g->buf, &last), 2);
	CHECK_EQ(last, 2);
}

/* ---- driver ------------------------------------------------------------- */

static void run(const struct grb_config *cfg, const char *name, int fa,
		void (*fn)(const struct rig *g, int arg), int arg)
{
	struct rig g;

	rig_open(&g, cfg, name, fa);
	fn(&g, arg);
	expect_nesting_free();
	rig_close(&g);
}

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
			run(c[i], names[s], fa, case_equiv, fa);
		for (i = 0; i < 5; i++)
			case_refusals(c[i], names[s], fa);
		for (i = 1; i < 4; i += 2) {
			run(c[i], names[s], fa, case_laps, 0);
			run(c[i], names[s], fa, case_noref, 0);
		}
		run(c[0], names[s], fa, case_signal, 0);
		run(c[3], names[s], fa, case_signal, 0);
		for (i = 0; s == 0 && ncpus > 1 && i < 4; i += 3)
			run(c[i], names[s], fa, case_migrate, 0);
		run(c[0], names[s], fa, case_wake, W_SLOW);
		run(c[1], names[s], fa, case_wake, W_SLOW);
		run(c[0], names[s], fa, case_wake, W_FAST);
		run(c[3], names[s], fa, case_wake, W_FAST);
		run(c[2], names[s], fa, case_wake, W_LIVE);
	}
}

int main(void)
{
	struct grb_channel_attr attr = { "probe", SB, NSB, NULL };
	struct sigaction sa;
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
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(grb_channel_create(&probe_cfg, &attr, &probe), 0);
	rig_open(&g, &pc_d, "probe", 0);
	printf("per-CPU sync channels: %s\n", PATH(&g));
	rig_close(&g);
	if (ncpus < 2)
		printf("note: one CPU only: the migrating fill (case 6) is "
		       "skipped\n");
	run_all(0);
	run_all(1);
	grb_channel_destroy(probe);
	printf("test_write_record: passed\n");
	return 0;
}
