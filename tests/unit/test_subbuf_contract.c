/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_subbuf_contract.c - what the public headers promise
 * about a sub-buffer's two ends.
 *
 * grb/reader.h, struct grb_reader_subbuf: ts_begin is the timestamp of
 * the reservation that opened the sub-buffer, ts_end that of the one that
 * closed it (a record that fills it or does not fit in it, a flush, a
 * discard); its records lie in [ts_begin, ts_end], every later record of
 * the buffer is at or after ts_end, both are 0 without a clock, and a
 * live (open) sub-buffer from grb_reader_live() has ts_end 0 and the
 * ts_begin it will be delivered with.  The clock here is a word the test
 * sets before each reservation, so every expected value is exact.
 *
 * grb/config.h: buffer_begin runs on the thread that opened the
 * sub-buffer, inside its reservation (before its record can be written);
 * buffer_end runs on the thread whose commit completed it, with every
 * record in it committed and visible.  Two writer threads in lock step
 * make the opener and the completer different threads: one holds a
 * reservation open while the other fills and closes the sub-buffer, then
 * commits last.  A flush or a discard that closes a sub-buffer with
 * nothing pending completes it itself: buffer_end runs on the flushing or
 * discarding thread (a reader's thread, for a flush).
 *
 * Every case runs per channel and per CPU (the threads pinned to one
 * CPU), in both modes, with full, compressed and no timestamps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "grb/grb.h"

#define SUBBUF 4096
#define NSUB 4
#define REC_HDR 16      /* u64 timestamp, u32 payload length, u32 tag */
#define BIG 200         /* payload of a 216-byte slot */
#define MAX_RECS 256
#define SC_MAGIC 0x73626374u

/* The client's sub-buffer header, written by its callbacks. */
struct sc_header {
	uint32_t magic;
	int32_t cpu;
	uint64_t seq;
	uint64_t ts_begin;      /* buffer_begin's info->timestamp */
	uint64_t ts_end;        /* buffer_end's */
	uint64_t data_size;
	uint64_t records;
};
#define HDR sizeof(struct sc_header)

struct sc_rec_hdr {
	uint64_t ts;            /* ctx.timestamp as reserved */
	uint32_t len;
	uint32_t tag;
};

/* What ran, where: the thread (0 the main one, which also reads) and the
 * call it was in. */
enum { DO_NONE, DO_RESERVE, DO_COMMIT, DO_FLUSH, DO_DISCARD };
static _Thread_local int who;
static _Thread_local int doing;

struct sc_event {
	uint64_t seq, ts, records, data_size;
	int who, doing, cpu, bytes_ok;
};
/* Callbacks run one at a time (the threads take turns), each turn
 * handed over under a mutex, so plain arrays do. */
static struct sc_event begins[64], ends[64];
static unsigned int nbegins, nends;

static _Atomic uint64_t clk;

static uint64_t sc_clock(void)
{
	return atomic_load_explicit(&clk, memory_order_relaxed);
}

static size_t sc_hdr_size(void)
{
	return HDR;
}

static unsigned char pattern(uint32_t tag, uint32_t i)
{
	return (unsigned char)(tag * 31u + i * 7u + 1u);
}

/*
 * Walk the records of a sub-buffer's [HDR, size) into out (may be NULL).
 * Return: their count, or -1 when some record's bytes are not those
 * written (not there yet, or not visible).
 */
static int64_t sc_walk(const unsigned char *sb, size_t size,
		       struct sc_rec_hdr *out)
{
	struct sc_rec_hdr h;
	size_t off = HDR;
	int64_t n = 0;
	uint32_t i;

	while (off < size) {
		if (size - off < REC_HDR)
			return -1;
		memcpy(&h, sb + off, sizeof(h));
		if (h.len > SUBBUF || size - off - REC_HDR < h.len)
			return -1;
		for (i = 0; i < h.len; i++)
			if (sb[off + REC_HDR + i] != pattern(h.tag, i))
				return -1;
		if (out && n < MAX_RECS)
			out[n] = h;
		off += REC_HDR + h.len;
		n++;
	}
	return n;
}

static void log_event(struct sc_event *ev, const struct grb_subbuf_info *info)
{
	ev->seq = info->seq;
	ev->ts = info->timestamp;
	ev->records = info->records;
	ev->data_size = info->data_size;
	ev->who = who;
	ev->doing = doing;
	ev->cpu = info->cpu;
}

static void sc_begin(struct grb_buf *buf, void *header,
		     const struct grb_subbuf_info *info)
{
	struct sc_header h = { SC_MAGIC, info->cpu, info->seq, info->timestamp,
			       0, 0, 0 };

	(void)buf;
	CHECK(nbegins < 64);
	log_event(&begins[nbegins++], info);
	memcpy(header, &h, sizeof(h));
}

static void sc_end(struct grb_buf *buf, void *header,
		   const struct grb_subbuf_info *info)
{
	struct sc_header h;
	struct sc_event *ev;

	(void)buf;
	CHECK(nends < 64);
	ev = &ends[nends++];
	log_event(ev, info);
	/* Every record committed and its bytes visible, right here. */
	ev->bytes_ok = sc_walk(header, info->data_size, NULL) ==
		(int64_t)info->records;
	memcpy(&h, header, sizeof(h));
	h.ts_end = info->timestamp;
	h.data_size = info->data_size;
	h.records = info->records;
	memcpy(header, &h, sizeof(h));
}

#define SC_CB(clock) { .clock_read = (clock),                            \
		       .subbuf_header_size = sc_hdr_size,                \
		       .buffer_begin = sc_begin, .buffer_end = sc_end }
#define SC_CFG(alloc, mode, bits, clock, flags) \
	{ (alloc), (mode), (bits), SC_CB(clock), (flags) }
#define SC_PERCPU GRB_ALLOC_PER_CPU
#define SC_PERCHAN GRB_ALLOC_PER_CHANNEL
#define SC_SYNC GRB_CONFIG_SYNC_PER_CPU

static const struct grb_config cfgs[] = {
	SC_CFG(SC_PERCHAN, GRB_MODE_DISCARD, 64, sc_clock, 0),
	SC_CFG(SC_PERCHAN, GRB_MODE_DISCARD, 16, sc_clock, 0),
	SC_CFG(SC_PERCHAN, GRB_MODE_DISCARD, 0, NULL, 0),
	SC_CFG(SC_PERCHAN, GRB_MODE_OVERWRITE, 64, sc_clock, 0),
	SC_CFG(SC_PERCHAN, GRB_MODE_OVERWRITE, 16, sc_clock, 0),
	SC_CFG(SC_PERCHAN, GRB_MODE_OVERWRITE, 0, NULL, 0),
	SC_CFG(SC_PERCPU, GRB_MODE_DISCARD, 64, sc_clock, SC_SYNC),
	SC_CFG(SC_PERCPU, GRB_MODE_DISCARD, 16, sc_clock, SC_SYNC),
	SC_CFG(SC_PERCPU, GRB_MODE_DISCARD, 0, NULL, SC_SYNC),
	SC_CFG(SC_PERCPU, GRB_MODE_OVERWRITE, 64, sc_clock, SC_SYNC),
	SC_CFG(SC_PERCPU, GRB_MODE_OVERWRITE, 16, sc_clock, SC_SYNC),
	SC_CFG(SC_PERCPU, GRB_MODE_OVERWRITE, 0, NULL, SC_SYNC),
};

/* The run in progress. */
static const struct grb_config *cfg;
static struct grb_channel *chan;
static struct grb_buf *buf;
static int pinned_cpu;
static int rseq_runs;           /* per-CPU runs on the rseq path */
static uint32_t next_tag;
/* Records reserved and not discarded, in position order, and how many
 * the reader has met. */
static struct sc_rec_hdr written[MAX_RECS];
static unsigned int nwritten, nread;
static uint64_t last_ts_end;    /* the previous sub-buffer's */

/* What a timestamp set on the clock is as the engine reports it. */
static uint64_t X(uint64_t t)
{
	return cfg->timestamp_bits ? t : 0;
}

/* Bytes left in the open sub-buffer; 0 when none is open. */
static uint64_t room(void)
{
	struct grb_buf_stats st;
	uint64_t off;

	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	off = st.produced & (SUBBUF - 1);
	return off ? SUBBUF - off : 0;
}

/* Reserve a record of len payload bytes at clock value ts and write it;
 * the caller commits or discards ctx. */
static int sc_reserve(struct grb_ctx *ctx, uint32_t len, uint64_t ts)
{
	unsigned char pay[256];
	struct sc_rec_hdr h;
	uint32_t i;
	int ret;

	CHECK(len <= sizeof(pay));
	*ctx = (struct grb_ctx)GRB_CTX_INIT(REC_HDR + len, 1);
	atomic_store_explicit(&clk, ts, memory_order_relaxed);
	doing = DO_RESERVE;
	ret = grb_reserve(cfg, chan, ctx);
	doing = DO_NONE;
	if (ret)
		return ret;
	CHECK(ctx->buf == buf);
	CHECK_U64(ctx->timestamp, X(ts));
	h.ts = ctx->timestamp;
	h.len = len;
	h.tag = next_tag++;
	for (i = 0; i < len; i++)
		pay[i] = pattern(h.tag, i);
	grb_write(cfg, ctx, &h, sizeof(h));
	grb_write(cfg, ctx, pay, len);
	CHECK(nwritten < MAX_RECS);
	written[nwritten++] = h;
	return 0;
}

static void sc_commit(struct grb_ctx *ctx)
{
	doing = DO_COMMIT;
	grb_commit(cfg, ctx);
	doing = DO_NONE;
}

static int sc_discard(struct grb_ctx *ctx)
{
	int ret;

	doing = DO_DISCARD;
	ret = grb_try_discard_reserve(cfg, ctx);
	doing = DO_NONE;
	if (ret == 0)
		nwritten--;     /* it was the last reservation */
	return ret;
}

static void put(uint32_t len, uint64_t ts)
{
	struct grb_ctx ctx;

	CHECK_EQ(sc_reserve(&ctx, len, ts), 0);
	sc_commit(&ctx);
}

static int sc_flush(enum grb_flush how, int whole_channel)
{
	int ret;

	doing = DO_FLUSH;
	ret = whole_channel ? grb_channel_flush(chan, how) :
		grb_buf_flush(buf, how);
	doing = DO_NONE;
	return ret;
}

/* A sub-buffer as the reader got it. */
struct sc_sb {
	struct grb_reader_subbuf sb;
	struct sc_header h;
	struct sc_rec_hdr rec[MAX_RECS];
	int64_t n;
};

/*
 * What holds for every sub-buffer read: its records are the next ones
 * written, all intact, within [ts_begin, ts_end], the first at ts_begin,
 * none before the previous sub-buffer's ts_end; the header the callbacks
 * wrote agrees with the reader's description; no clock, no timestamps.
 */
static void check_common(const struct sc_sb *s)
{
	const struct grb_reader_subbuf *sb = &s->sb;
	int64_t i;

	if (cfg->timestamp_bits == 0) {
		CHECK_U64(sb->ts_begin, 0);
		CHECK_U64(sb->ts_end, 0);
	}
	CHECK_U64(s->h.magic, SC_MAGIC);
	CHECK_U64(s->h.seq, sb->seq);
	CHECK_U64(s->h.ts_begin, sb->ts_begin);
	CHECK_U64(s->h.ts_end, sb->ts_end);
	CHECK_U64(s->h.records, sb->records);
	CHECK_U64(s->h.data_size, sb->data_size);
	CHECK_EQ(s->n, (int64_t)sb->records);
	CHECK(sb->ts_begin <= sb->ts_end);
	CHECK(sb->ts_begin >= last_ts_end);
	if (s->n > 0)
		CHECK_U64(sb->ts_begin, s->rec[0].ts);
	for (i = 0; i < s->n; i++) {
		CHECK(s->rec[i].ts >= sb->ts_begin);
		CHECK(s->rec[i].ts <= sb->ts_end);
		CHECK(nread < nwritten);
		CHECK_U64(s->rec[i].tag, written[nread].tag);
		CHECK_U64(s->rec[i].ts, written[nread].ts);
		nread++;
	}
	last_ts_end = sb->ts_end;
}

/* The oldest sub-buffer, pinned (get_subbuf) and then consumed
 * (get_next): both describe it alike. */
static void take(struct sc_sb *s)
{
	struct grb_reader_subbuf pinned;
	uint64_t c, p;

	CHECK_EQ(grb_reader_snapshot(buf, &c, &p), 0);
	CHECK_EQ(grb_reader_get_subbuf(buf, c), 0);
	CHECK_EQ(grb_reader_held(buf, &pinned), 0);
	CHECK_EQ(grb_reader_put_subbuf(buf), 0);
	CHECK_EQ(grb_reader_get_next(buf), 0);
	CHECK_EQ(grb_reader_held(buf, &s->sb), 0);
	memcpy(&s->h, s->sb.data, sizeof(s->h));
	s->n = sc_walk(s->sb.data, s->sb.data_size, s->rec);
	CHECK_EQ(grb_reader_put_next(buf), 0);
	CHECK_U64(pinned.pos, s->sb.pos);
	CHECK_U64(pinned.ts_begin, s->sb.ts_begin);
	CHECK_U64(pinned.ts_end, s->sb.ts_end);
	check_common(s);
}

/* --- ts_begin and ts_end, one writer -------------------------------- */

/* Closed by a record that does not fit: that record's timestamp, which
 * also opens the next sub-buffer. */
static void closed_by_overflow(uint64_t t)
{
	struct sc_sb s;
	uint64_t first = t;

	CHECK_U64(room(), 0);
	put(BIG, t);
	while (room() > REC_HDR + BIG)
		put(BIG, t += 10);
	CHECK(room() > 0);
	put(BIG, t += 10);              /* the closer */
	take(&s);
	CHECK_U64(s.sb.ts_begin, X(first));
	CHECK_U64(s.sb.ts_end, X(t));
	CHECK(s.n > 1);
	/* The closer is not a record of it: its last record is older. */
	if (cfg->timestamp_bits)
		CHECK(s.rec[s.n - 1].ts < s.sb.ts_end);
}

/* Closed by a record that fills it exactly: its last record's. */
static void closed_by_exact_fill(uint64_t t)
{
	uint64_t prev_end = last_ts_end;
	struct sc_sb s;

	/* Opened by closed_by_overflow's closer, which ended the previous
	 * sub-buffer: the same timestamp at both ends. */
	CHECK(room() > 0);
	while (room() > REC_HDR + BIG + 32)
		put(BIG, t += 10);
	put((uint32_t)(room() - REC_HDR), t += 10);
	CHECK_U64(room(), 0);
	take(&s);
	CHECK_U64(s.sb.ts_begin, prev_end);
	CHECK_U64(s.sb.ts_end, X(t));
	CHECK_U64(s.rec[s.n - 1].ts, X(t));
	CHECK_U64(s.sb.data_size, SUBBUF);
}

/* Closed by a flush: the flush's clock.  Before it, the live read. */
static void closed_by_flush(uint64_t t)
{
	struct grb_reader_subbuf live;
	struct sc_rec_hdr rec[4];
	struct sc_sb s;
	int i;

	CHECK_U64(room(), 0);
	for (i = 0; i < 3; i++)
		put(24, t + 10 * (uint64_t)i);
	if (cfg->mode == GRB_MODE_DISCARD) {
		CHECK_EQ(grb_reader_live(buf, &live), 0);
		CHECK_U64(live.ts_end, 0);
		CHECK_U64(live.ts_begin, X(t));
		CHECK_U64(live.records, 3);
		CHECK_U64(live.data_size, HDR + 3 * (REC_HDR + 24));
		CHECK_EQ(sc_walk(live.data, live.data_size, rec), 3);
		CHECK_U64(rec[0].ts, live.ts_begin);
	} else {
		CHECK_EQ(grb_reader_live(buf, &live), -ENOTSUP);
	}
	atomic_store_explicit(&clk, t + 1000, memory_order_relaxed);
	CHECK_EQ(sc_flush(GRB_FLUSH_ACTIVE, 0), 0);
	take(&s);
	CHECK_U64(s.sb.ts_begin, X(t));
	CHECK_U64(s.sb.ts_end, X(t + 1000));
	CHECK_U64(s.sb.records, 3);
	if (cfg->mode == GRB_MODE_DISCARD)
		CHECK_U64(s.sb.ts_begin, live.ts_begin);
}

/* Closed by a discard: the discarded reservation's timestamp. */
static void closed_by_discard(uint64_t t)
{
	struct grb_ctx ctx;
	struct sc_sb s;

	CHECK_U64(room(), 0);
	put(40, t);
	put(40, t + 10);
	CHECK_EQ(sc_reserve(&ctx, 40, t + 20), 0);
	CHECK_EQ(sc_discard(&ctx), 0);
	CHECK_U64(room(), 0);
	take(&s);
	CHECK_U64(s.sb.ts_begin, X(t));
	CHECK_U64(s.sb.ts_end, X(t + 20));
	CHECK_U64(s.sb.records, 2);
	CHECK_U64(s.sb.data_size, HDR + 2 * (REC_HDR + 40));
}

/* Opened and closed by one flush, with no record: its clock, twice. */
static void opened_by_empty_flush(uint64_t t)
{
	struct sc_sb s;

	CHECK_U64(room(), 0);
	atomic_store_explicit(&clk, t, memory_order_relaxed);
	CHECK_EQ(sc_flush(GRB_FLUSH_ACTIVE, 0), -ENODATA);
	CHECK_EQ(sc_flush(GRB_FLUSH_EMPTY, 0), 0);
	take(&s);
	CHECK_U64(s.sb.records, 0);
	CHECK_U64(s.sb.data_size, HDR);
	CHECK_U64(s.sb.ts_begin, X(t));
	CHECK_U64(s.sb.ts_end, X(t));
}

/* A slot that fills its sub-buffer exactly, discarded: it stays the
 * closer, and its timestamp the end. */
static void exact_slot_discarded(uint64_t t)
{
	struct grb_ctx ctx;
	struct sc_sb s;

	CHECK_U64(room(), 0);
	put(BIG, t);
	while (room() > REC_HDR + BIG + 32)
		put(BIG, t += 10);
	CHECK_EQ(sc_reserve(&ctx, (uint32_t)(room() - REC_HDR), t + 10), 0);
	CHECK_EQ(sc_discard(&ctx), 0);
	take(&s);
	CHECK_U64(s.sb.ts_end, X(t + 10));
	CHECK_U64(s.rec[s.n - 1].ts, X(t));
}

/* A reservation that closes one sub-buffer (it does not fit) and opens
 * the next, discarded: it closed the first and opened and closed the
 * second, which has no record. */
static void overflow_closer_discarded(uint64_t t)
{
	struct grb_ctx ctx;
	struct sc_sb s;

	CHECK_U64(room(), 0);
	put(BIG, t);
	while (room() > REC_HDR + BIG)
		put(BIG, t += 10);
	CHECK_EQ(sc_reserve(&ctx, BIG, t + 10), 0);
	CHECK_EQ(sc_discard(&ctx), 0);
	take(&s);
	CHECK_U64(s.sb.ts_end, X(t + 10));
	take(&s);
	CHECK_U64(s.sb.records, 0);
	CHECK_U64(s.sb.ts_begin, X(t + 10));
	CHECK_U64(s.sb.ts_end, X(t + 10));
}

static void start(const struct grb_config *c, const char *name)
{
	struct grb_channel_attr attr = { name, SUBBUF, NSUB, NULL };

	cfg = c;
	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	if (cfg->alloc == GRB_ALLOC_PER_CPU) {
		CHECK((unsigned int)pinned_cpu < grb_channel_nr_bufs(chan));
		buf = grb_channel_buf(chan, (unsigned int)pinned_cpu);
		rseq_runs += grb_channel_write_path(chan, NULL) ==
			GRB_WRITE_RSEQ;
	} else {
		buf = grb_channel_buf(chan, 0);
	}
	CHECK_EQ(grb_reader_open(buf), 0);
	nwritten = nread = 0;
	nbegins = nends = 0;
	last_ts_end = 0;
}

static void finish(void)
{
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_reader_get_next(buf), -ENODATA);
	CHECK_U64(nread, nwritten);
	/* One buffer_end per buffer_begin, each on its sub-buffer. */
	CHECK_U64(nends, nbegins);
	CHECK_EQ(grb_reader_release(buf), 0);
	grb_channel_destroy(chan);
}

static void test_timestamps(const struct grb_config *c)
{
	/* Above 2^16, so that compressed timestamps wrap their low bits. */
	uint64_t base = UINT64_C(1) << 20;

	start(c, "ts");
	closed_by_overflow(base);
	closed_by_exact_fill(base + 100000);
	closed_by_flush(base + 200000);
	closed_by_discard(base + 300000);
	opened_by_empty_flush(base + 400000);
	exact_slot_discarded(base + 500000);
	overflow_closer_discarded(base + 600000);
	finish();
}

/* --- which thread runs buffer_begin and buffer_end ------------------- */

struct worker {
	pthread_t th;
	int id;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void (*job)(struct worker *w);
	int quit;
	struct grb_ctx held;    /* a reservation kept open between jobs */
	uint64_t ts;            /* the job's clock value */
};

static struct worker wa = { .id = 1 }, wb = { .id = 2 };

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	void (*job)(struct worker *);

	who = w->id;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->job && !w->quit)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->job)
			break;
		job = w->job;
		pthread_mutex_unlock(&w->lock);
		job(w);
		pthread_mutex_lock(&w->lock);
		w->job = NULL;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Run job on w's thread, at clock value ts, and wait until it is done
 * (the mutex publishes each side's writes to the other). */
static void run_on(struct worker *w, void (*job)(struct worker *),
		   uint64_t ts)
{
	pthread_mutex_lock(&w->lock);
	w->ts = ts;
	w->job = job;
	pthread_cond_broadcast(&w->cond);
	while (w->job)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

static void job_hold(struct worker *w)
{
	CHECK_EQ(sc_reserve(&w->held, 64, w->ts), 0);
}

static void job_commit_held(struct worker *w)
{
	atomic_store_explicit(&clk, w->ts, memory_order_relaxed);
	sc_commit(&w->held);
}

/* Fill the open sub-buffer, then close it with a record that does not
 * fit (and opens the next). */
static void job_fill_overflow(struct worker *w)
{
	while (room() > REC_HDR + BIG)
		put(BIG, w->ts++);
	put(BIG, w->ts++);
}

static void job_fill_exact(struct worker *w)
{
	while (room() > REC_HDR + BIG + 32)
		put(BIG, w->ts++);
	put((uint32_t)(room() - REC_HDR), w->ts++);
	CHECK_U64(room(), 0);
}

static void job_put2(struct worker *w)
{
	put(8, w->ts);
	put(8, w->ts + 1);
}

static void job_put_discard(struct worker *w)
{
	struct grb_ctx ctx;

	put(8, w->ts);
	CHECK_EQ(sc_reserve(&ctx, 8, w->ts + 1), 0);
	CHECK_EQ(sc_discard(&ctx), 0);
}

static void check_event(const struct sc_event *ev, uint64_t seq, int thread,
			int call)
{
	CHECK_U64(ev->seq, seq);
	CHECK_EQ(ev->who, thread);
	CHECK_EQ(ev->doing, call);
	CHECK_EQ(ev->cpu, cfg->alloc == GRB_ALLOC_PER_CPU ? pinned_cpu : -1);
}

/* buffer_end of sub-buffer seq, the last one: on thread, in call, with
 * every record's bytes there. */
static void check_end(uint64_t seq, int thread, int call)
{
	CHECK(nends > 0);
	check_event(&ends[nends - 1], seq, thread, call);
	CHECK_EQ(ends[nends - 1].bytes_ok, 1);
}

static void drain(unsigned int n)
{
	struct sc_sb s;

	while (n--)
		take(&s);
}

/* A opens, B closes (overflow), A completes; then the other way round
 * with an exact fill. */
static void opener_and_completer_differ(void)
{
	run_on(&wa, job_hold, 10);
	check_event(&begins[nbegins - 1], 0, 1, DO_RESERVE);
	run_on(&wb, job_fill_overflow, 20);
	/* B's closer opened sub-buffer 1, on B; 0 waits for A. */
	check_event(&begins[nbegins - 1], 1, 2, DO_RESERVE);
	CHECK_U64(nends, 0);
	run_on(&wa, job_commit_held, 100);
	check_end(0, 1, DO_COMMIT);
	CHECK_U64(ends[0].records, 1 + (SUBBUF - HDR - REC_HDR - 64) /
		  (REC_HDR + BIG));

	run_on(&wb, job_hold, 200);
	run_on(&wa, job_fill_exact, 210);
	CHECK_U64(nends, 1);
	run_on(&wb, job_commit_held, 300);
	check_end(1, 2, DO_COMMIT);
	CHECK_U64(ends[1].data_size, SUBBUF);
	drain(2);
}

/* A flush closes: buffer_end on the pending commit's thread, or on the
 * flushing one (here the reader's) when nothing is pending. */
static void flush_completes(void)
{
	run_on(&wa, job_hold, 400);
	check_event(&begins[nbegins - 1], 2, 1, DO_RESERVE);
	run_on(&wb, job_put2, 410);
	atomic_store_explicit(&clk, 420, memory_order_relaxed);
	CHECK_EQ(sc_flush(GRB_FLUSH_ACTIVE, 0), 0);
	CHECK_U64(nends, 2);
	run_on(&wa, job_commit_held, 430);
	check_end(2, 1, DO_COMMIT);
	CHECK_U64(ends[2].ts, X(420));
	CHECK_U64(ends[2].records, 3);

	run_on(&wb, job_put2, 500);
	check_event(&begins[nbegins - 1], 3, 2, DO_RESERVE);
	atomic_store_explicit(&clk, 510, memory_order_relaxed);
	CHECK_EQ(sc_flush(GRB_FLUSH_ACTIVE, 1), 0);
	check_end(3, 0, DO_FLUSH);
	CHECK_U64(ends[3].ts, X(510));
	drain(2);

	/* Opened and closed by the reader's flush: both callbacks on it. */
	atomic_store_explicit(&clk, 600, memory_order_relaxed);
	CHECK_EQ(sc_flush(GRB_FLUSH_EMPTY, 0), 0);
	check_event(&begins[nbegins - 1], 4, 0, DO_FLUSH);
	check_end(4, 0, DO_FLUSH);
}

/* A discard closes: buffer_end on the pending commit's thread, or on the
 * discarding one when nothing is pending. */
static void discard_completes(void)
{
	unsigned int n = nends;

	run_on(&wa, job_hold, 700);
	check_event(&begins[nbegins - 1], 5, 1, DO_RESERVE);
	run_on(&wb, job_put_discard, 710);
	CHECK_U64(nends, n);
	run_on(&wa, job_commit_held, 720);
	check_end(5, 1, DO_COMMIT);
	CHECK_U64(ends[nends - 1].ts, X(711));
	CHECK_U64(ends[nends - 1].records, 2);

	run_on(&wb, job_put_discard, 800);
	check_end(6, 2, DO_DISCARD);
	CHECK_U64(ends[nends - 1].ts, X(801));
	drain(3);
}

static void test_threads(const struct grb_config *c)
{
	start(c, "threads");
	opener_and_completer_differ();
	flush_completes();
	discard_completes();
	finish();
}

static void workers_start(void)
{
	struct worker *w[2] = { &wa, &wb };
	int i;

	for (i = 0; i < 2; i++) {
		pthread_mutex_init(&w[i]->lock, NULL);
		pthread_cond_init(&w[i]->cond, NULL);
		CHECK_EQ(pthread_create(&w[i]->th, NULL, worker_main, w[i]), 0);
	}
}

static void workers_stop(void)
{
	struct worker *w[2] = { &wa, &wb };
	int i;

	for (i = 0; i < 2; i++) {
		pthread_mutex_lock(&w[i]->lock);
		w[i]->quit = 1;
		pthread_cond_broadcast(&w[i]->cond);
		pthread_mutex_unlock(&w[i]->lock);
		CHECK_EQ(pthread_join(w[i]->th, NULL), 0);
		pthread_mutex_destroy(&w[i]->lock);
		pthread_cond_destroy(&w[i]->cond);
	}
}

/* Every thread on one CPU (workers inherit it), so that a per-CPU
 * channel's writers share a buffer. */
static void pin(void)
{
	cpu_set_t set;
	int c;

	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (c = 0; c < CPU_SETSIZE && !CPU_ISSET(c, &set); c++)
		;
	CHECK(c < CPU_SETSIZE);
	CPU_ZERO(&set);
	CPU_SET(c, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
	pinned_cpu = c;
}

int main(void)
{
	size_t i;

	pin();
	workers_start();
	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		test_timestamps(&cfgs[i]);
		test_threads(&cfgs[i]);
	}
	workers_stop();
	printf("test_subbuf_contract: %zu configurations passed (%d per-CPU "
	       "runs on the rseq path)\n", i, rseq_runs);
	return 0;
}
