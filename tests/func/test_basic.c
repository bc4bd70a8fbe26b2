/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_basic.c - the basic client (grb/basic.h) in all eight
 * variants: per-CPU or per-channel buffers, overwrite or discard mode,
 * timestamp compression off or on.
 *
 * For each variant:
 *  - flood: several threads write tagged records while the main thread
 *    consumes; after finalize every record read is intact, read once, in
 *    per-writer order and with non-decreasing, plausible timestamps inside
 *    its buffer, and the counters add up exactly (written == consumed +
 *    overruns + dropped + entries, failed writes == lost);
 *  - single-threaded checks, with the thread pinned so that every record
 *    lands in one known buffer: peek/consume and -ENOBUFS, zero-copy
 *    reserve/commit (a pending commit holds back delivery), a record that
 *    exactly fills a sub-buffer, overwrite keeping the newest records or
 *    discard refusing the newest, reset, record disable/enable, finalize
 *    and -ENODATA, -EINVAL;
 *  - the raw sub-buffers, read through the engine reader on
 *    grb_basic_channel(): sub-buffer headers, which records carry a full
 *    timestamp and which only its low 32 bits, and that consume rebuilds
 *    every timestamp exactly.
 *
 * Crossing a 2^32 ns boundary of CLOCK_MONOTONIC takes up to 4.3 s of
 * waiting, so that check only runs with GRB_TEST_TS_BOUNDARY=1 in the
 * environment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/channel.h"
#include "grb/reader.h"
#include "grb/validate.h"

/* Variant bits: index = alloc * 4 + mode * 2 + compress. */
#define V_PER_CHANNEL 4
#define V_DISCARD     2
#define V_COMPRESS    1
#define V_COUNT       8

#define PAGE          4096
#define HDR           sizeof(struct grb_basic_subbuf_header)
#define REC_HDR_FULL  12u   /* u32 length word + u64 timestamp */
#define TS_HIGH(t)    ((uint64_t)(t) >> 32)

static cpu_set_t orig_mask;

static const char *variant_name(int v)
{
	static const char *names[V_COUNT] = {
		"per-cpu/overwrite", "per-cpu/overwrite/compressed",
		"per-cpu/discard", "per-cpu/discard/compressed",
		"per-channel/overwrite", "per-channel/overwrite/compressed",
		"per-channel/discard", "per-channel/discard/compressed",
	};
	return names[v];
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct grb_basic *make(int v, size_t subbuf_size, size_t num_subbuf)
{
	struct grb_basic_attr attr = {
		.name = variant_name(v),
		.subbuf_size = subbuf_size,
		.num_subbuf = num_subbuf,
		.alloc = (v & V_PER_CHANNEL) ? GRB_ALLOC_PER_CHANNEL :
			GRB_ALLOC_PER_CPU,
		.mode = (v & V_DISCARD) ? GRB_MODE_DISCARD : GRB_MODE_OVERWRITE,
		.compress_timestamps = v & V_COMPRESS,
	};
	struct grb_basic *b = NULL;

	CHECK_EQ(grb_basic_create(&attr, &b), 0);
	CHECK(b != NULL);
	return b;
}

/* Keep the calling thread on the CPU it runs on, so its records land in
 * one buffer; unpin() gives back the mask the process started with. */
static void pin(void)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	CHECK(cpu >= 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
}

static void unpin(void)
{
	CHECK_EQ(sched_setaffinity(0, sizeof(orig_mask), &orig_mask), 0);
}

/* The buffer a pinned thread writes to, chosen as the engine does. */
static unsigned int home(struct grb_basic *b, int v)
{
	unsigned int cpu;

	if (v & V_PER_CHANNEL)
		return 0;
	cpu = (unsigned int)sched_getcpu();
	return cpu < grb_basic_nr_bufs(b) ? cpu : 0;
}

static int buf_cpu(int v, unsigned int i)
{
	return (v & V_PER_CHANNEL) ? -1 : (int)i;
}

static struct grb_basic_counts counts(struct grb_basic *b, unsigned int i)
{
	struct grb_basic_counts c;

	CHECK_EQ(grb_basic_get_counts(b, i, &c), 0);
	/* The identity every snapshot of a quiescent buffer satisfies. */
	CHECK_U64(c.written, c.consumed + c.overruns + c.dropped + c.entries);
	return c;
}

/*
 * Check the counts of buffer i field by field, in the order written,
 * consumed, entries, overruns, dropped, lost; ANY skips a field.
 */
#define ANY UINT64_MAX
#define EXPECT_COUNTS(b, i, wr, co, en, ov, dr, lo) \
	expect_counts(__LINE__, (b), (i), (uint64_t[6]){ wr, co, en, ov, dr, lo })

static void expect_counts(int line, struct grb_basic *b, unsigned int i,
			  const uint64_t want[6])
{
	static const char *names[6] = { "written", "consumed", "entries",
					"overruns", "dropped", "lost" };
	struct grb_basic_counts c = counts(b, i);
	const uint64_t got[6] = { c.written, c.consumed, c.entries,
				  c.overruns, c.dropped, c.lost };
	int k;

	for (k = 0; k < 6; k++) {
		if (want[k] == ANY || got[k] == want[k])
			continue;
		fprintf(stderr, "%s:%d: counts.%s is %" PRIu64 ", expected %"
			PRIu64 "\n", __FILE__, line, names[k], got[k], want[k]);
		exit(1);
	}
}

/* ------------------------------------------------------------------ */
/* Flood: several writers, one consumer.                               */

#define FLOOD_WRITERS    4
#define FLOOD_PER_WRITER 10000
#define FLOOD_EXTRA_MAX  97

struct payload {
	uint32_t writer;
	uint32_t seq;
	uint64_t t_before;    /* writer's clock read just before the write */
	uint32_t extra;       /* pattern bytes after the struct */
	uint32_t csum;
};

static unsigned char pattern(uint32_t writer, uint32_t seq, uint32_t i)
{
	return (unsigned char)(writer * 131u + seq * 7u + i);
}

/* FNV-1a over the tag fields and the pattern bytes. */
static uint32_t payload_csum(const struct payload *p,
			     const unsigned char *extra)
{
	const unsigned char *q = (const unsigned char *)p;
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < offsetof(struct payload, csum); i++)
		h = (h ^ q[i]) * 16777619u;
	for (i = 0; i < p->extra; i++)
		h = (h ^ extra[i]) * 16777619u;
	return h;
}

struct flood_writer {
	struct grb_basic *b;
	uint8_t *ok;          /* writer x seq; read only after join */
	uint32_t id;
	uint64_t ok_count, nobufs, eio, other;   /* grb_basic_write results */
	int other_err;        /* the last unexpected one */
};

static void *flood_writer_main(void *arg)
{
	struct flood_writer *w = (struct flood_writer *)arg;
	unsigned char rec[sizeof(struct payload) + FLOOD_EXTRA_MAX];
	struct payload p;
	uint32_t seq, i;
	int ret;

	for (seq = 0; seq < FLOOD_PER_WRITER; seq++) {
		p.writer = w->id;
		p.seq = seq;
		p.extra = (seq * 13u) % FLOOD_EXTRA_MAX;
		for (i = 0; i < p.extra; i++)
			rec[sizeof(p) + i] = pattern(w->id, seq, i);
		p.t_before = now_ns();
		p.csum = payload_csum(&p, rec + sizeof(p));
		memcpy(rec, &p, sizeof(p));
		ret = grb_basic_write(w->b, rec, sizeof(p) + p.extra);
		if (ret == 0) {
			w->ok[(size_t)w->id * FLOOD_PER_WRITER + seq] = 1;
			w->ok_count++;
		} else if (ret == -ENOBUFS) {
			w->nobufs++;
		} else if (ret == -EIO) {
			w->eio++;
		} else {
			w->other++;
			w->other_err = ret;
		}
	}
	return NULL;
}

struct flood_reader {
	int v;
	unsigned int nbufs;
	uint64_t t_start;
	uint8_t *seen;        /* writer x seq: times read */
	int64_t *last_seq;    /* buffer x writer */
	uint64_t *last_ts;    /* per buffer */
	uint64_t *consumed;   /* per buffer */
};

static void flood_check(struct flood_reader *r, unsigned int bi,
			const struct grb_basic_event *ev,
			const unsigned char *rec)
{
	struct payload p;
	int64_t *last;

	CHECK_EQ(ev->cpu, buf_cpu(r->v, bi));
	CHECK(ev->len >= sizeof(p));
	memcpy(&p, rec, sizeof(p));
	CHECK(p.writer < FLOOD_WRITERS && p.seq < FLOOD_PER_WRITER);
	CHECK_U64(ev->len, sizeof(p) + p.extra);
	CHECK_U64(payload_csum(&p, rec + sizeof(p)), p.csum);
	/* Reserved after the writer's clock read and before this read. */
	CHECK(ev->timestamp >= p.t_before);
	CHECK(ev->timestamp >= r->t_start);
	CHECK(ev->timestamp <= now_ns());
	CHECK(ev->timestamp >= r->last_ts[bi]);
	r->last_ts[bi] = ev->timestamp;
	last = &r->last_seq[(size_t)bi * FLOOD_WRITERS + p.writer];
	CHECK((int64_t)p.seq > *last);
	*last = p.seq;
	CHECK_EQ(r->seen[(size_t)p.writer * FLOOD_PER_WRITER + p.seq]++, 0);
	r->consumed[bi]++;
}

/* Consume what is readable now.  Return: 1 when some buffer ended with
 * -EAGAIN (more may come), 0 when every buffer reported -ENODATA. */
static int flood_drain(struct grb_basic *b, struct flood_reader *r)
{
	unsigned char rec[sizeof(struct payload) + FLOOD_EXTRA_MAX];
	struct grb_basic_event ev;
	unsigned int i;
	int ret, pending = 0;

	for (i = 0; i < r->nbufs; i++) {
		while ((ret = grb_basic_consume(b, i, &ev, rec,
						sizeof(rec))) == 0)
			flood_check(r, i, &ev, rec);
		if (ret != -EAGAIN && ret != -ENODATA) {
			fprintf(stderr, "consume buffer %u: %s\n", i,
				grb_strerror(ret));
			CHECK(0);
		}
		pending |= ret == -EAGAIN;
	}
	return pending;
}

static void flood_final(int v, struct grb_basic *b, struct flood_reader *r,
			struct flood_writer *w, const uint8_t *ok,
			size_t subbuf_size, size_t num_subbuf)
{
	uint64_t written = 0, over = 0, lost = 0, failed = 0, seen = 0;
	uint64_t succeeded = 0;
	struct grb_basic_counts c;
	char why[160];
	unsigned int i;
	size_t k;

	for (i = 0; i < FLOOD_WRITERS; i++) {
		if (w[i].other)
			fprintf(stderr, "writer %u: %llu writes failed with %s\n",
				i, (unsigned long long)w[i].other,
				grb_strerror(w[i].other_err));
		CHECK_U64(w[i].other, 0);
		succeeded += w[i].ok_count;
		failed += w[i].nobufs + w[i].eio;
		/* Only discard mode refuses a record because it is full. */
		if (!(v & V_DISCARD))
			CHECK_U64(w[i].nobufs, 0);
	}
	for (i = 0; i < r->nbufs; i++) {
		c = counts(b, i);
		CHECK_U64(c.entries, 0);
		CHECK_U64(c.dropped, 0);
		CHECK_U64(c.consumed, r->consumed[i]);
		if (v & V_DISCARD)
			CHECK_U64(c.overruns, 0);
		CHECK_EQ(grb_buf_validate(grb_channel_buf(grb_basic_channel(b),
							  i), why, sizeof(why)), 0);
		written += c.written;
		over += c.overruns;
		lost += c.lost;
	}
	for (k = 0; k < (size_t)FLOOD_WRITERS * FLOOD_PER_WRITER; k++) {
		/* Only records whose write succeeded can be read... */
		CHECK(!r->seen[k] || ok[k]);
		/* ...and in discard mode each of them is. */
		if (v & V_DISCARD)
			CHECK(r->seen[k] || !ok[k]);
		seen += r->seen[k];
	}
	CHECK_U64(written, succeeded);
	CHECK_U64(written, seen + over);
	CHECK_U64(lost, failed);
	printf("%-34s sb %5zu x %2zu: written %6llu read %6llu overwritten %6llu"
	       " lost %llu\n", variant_name(v), subbuf_size, num_subbuf,
	       (unsigned long long)written, (unsigned long long)seen,
	       (unsigned long long)over, (unsigned long long)lost);
}

static void test_flood(int v, size_t subbuf_size, size_t num_subbuf)
{
	size_t n = (size_t)FLOOD_WRITERS * FLOOD_PER_WRITER;
	struct flood_writer w[FLOOD_WRITERS];
	pthread_t tid[FLOOD_WRITERS];
	struct flood_reader r;
	struct grb_basic *b = make(v, subbuf_size, num_subbuf);
	uint8_t *ok = calloc(n, 1);
	unsigned int i;
	int done;

	memset(&r, 0, sizeof(r));
	r.v = v;
	r.nbufs = grb_basic_nr_bufs(b);
	r.t_start = now_ns();
	r.seen = calloc(n, 1);
	r.last_seq = malloc(sizeof(int64_t) * r.nbufs * FLOOD_WRITERS);
	r.last_ts = calloc(r.nbufs, sizeof(uint64_t));
	r.consumed = calloc(r.nbufs, sizeof(uint64_t));
	CHECK(ok && r.seen && r.last_seq && r.last_ts && r.consumed);
	for (i = 0; i < r.nbufs * FLOOD_WRITERS; i++)
		r.last_seq[i] = -1;
	for (i = 0; i < FLOOD_WRITERS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].b = b;
		w[i].ok = ok;
		w[i].id = i;
		CHECK_EQ(pthread_create(&tid[i], NULL, flood_writer_main,
					&w[i]), 0);
	}
	/* Read while the writers run: the reader races with them. */
	for (done = 0; done < FLOOD_WRITERS;) {
		flood_drain(b, &r);
		if (pthread_tryjoin_np(tid[done], NULL) == 0)
			done++;
		else
			sched_yield();  /* let writers run where threads are
					   serialised (valgrind) */
	}
	CHECK_EQ(grb_basic_finalize(b), 0);
	/* Nothing is pending any more: a few passes reach -ENODATA. */
	for (i = 0; flood_drain(b, &r); i++)
		CHECK(i < 1000);
	for (i = 0; i < r.nbufs; i++)
		CHECK_EQ(grb_basic_consume(b, i, &(struct grb_basic_event){ 0 },
					   NULL, 0), -ENODATA);
	flood_final(v, b, &r, w, ok, subbuf_size, num_subbuf);
	grb_basic_destroy(b);
	free(ok);
	free(r.seen);
	free(r.last_seq);
	free(r.last_ts);
	free(r.consumed);
}

/* ------------------------------------------------------------------ */
/* Single-threaded checks; the caller pinned the thread (see pin()).  */

static void write_seq(struct grb_basic *b, uint32_t seq)
{
	CHECK_EQ(grb_basic_write(b, &seq, sizeof(seq)), 0);
}

/* Consume one record of buffer i, which must hold a u32 sequence. */
static uint32_t read_seq(struct grb_basic *b, unsigned int i)
{
	struct grb_basic_event ev;
	uint32_t seq = 0;

	CHECK_EQ(grb_basic_consume(b, i, &ev, &seq, sizeof(seq)), 0);
	CHECK_U64(ev.len, sizeof(seq));
	return seq;
}

/* Every buffer but @h answers @ret to consume. */
static void others_are(struct grb_basic *b, unsigned int h, int ret)
{
	struct grb_basic_event ev;
	unsigned int i;

	for (i = 0; i < grb_basic_nr_bufs(b); i++)
		if (i != h)
			CHECK_EQ(grb_basic_consume(b, i, &ev, NULL, 0), ret);
}

static void test_peek_consume(int v)
{
	struct grb_basic *b = make(v, PAGE, 4);
	unsigned int h = home(b, v);
	struct grb_basic_event ev, ev2;
	char dst[128], big[100];
	uint64_t t0, t1, ts_a, ts_b;

	memset(big, 'x', sizeof(big));
	big[sizeof(big) - 1] = 'y';
	t0 = now_ns();
	CHECK_EQ(grb_basic_write(b, "alpha", 5), 0);
	CHECK_EQ(grb_basic_write(b, NULL, 0), 0);
	CHECK_EQ(grb_basic_write(b, big, sizeof(big)), 0);
	t1 = now_ns();
	/* Overwrite mode: nothing is readable before the sub-buffer closes.
	 * Discard mode: committed records are readable live. */
	if (v & V_DISCARD) {
		CHECK_EQ(grb_basic_peek(b, h, &ev, dst, sizeof(dst)), 0);
		CHECK_U64(ev.len, 5);
	} else {
		CHECK_EQ(grb_basic_peek(b, h, &ev, dst, sizeof(dst)), -EAGAIN);
		CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)),
			 -EAGAIN);
	}
	EXPECT_COUNTS(b, h, 3, 0, 3, 0, 0, 0);
	CHECK_EQ(grb_basic_flush(b), 0);

	/* Peek twice: the same record, with the same timestamp. */
	memset(dst, 0, sizeof(dst));
	CHECK_EQ(grb_basic_peek(b, h, &ev, dst, sizeof(dst)), 0);
	CHECK_U64(ev.len, 5);
	CHECK(memcmp(dst, "alpha", 5) == 0);
	CHECK_EQ(ev.cpu, buf_cpu(v, h));
	CHECK(ev.timestamp >= t0 && ev.timestamp <= t1);
	ts_a = ev.timestamp;
	memset(dst, 0, sizeof(dst));
	CHECK_EQ(grb_basic_peek(b, h, &ev2, dst, sizeof(dst)), 0);
	CHECK_U64(ev2.len, 5);
	CHECK_U64(ev2.timestamp, ts_a);
	CHECK(memcmp(dst, "alpha", 5) == 0);

	/* A destination too small: -ENOBUFS, ev filled, the record stays. */
	memset(&ev, 0, sizeof(ev));
	CHECK_EQ(grb_basic_peek(b, h, &ev, dst, 4), -ENOBUFS);
	CHECK_U64(ev.len, 5);
	memset(&ev, 0, sizeof(ev));
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, 4), -ENOBUFS);
	CHECK_U64(ev.len, 5);
	CHECK_U64(ev.timestamp, ts_a);
	CHECK_EQ(grb_basic_consume(b, h, &ev, NULL, 0), -ENOBUFS);
	EXPECT_COUNTS(b, h, 3, 0, 3, 0, 0, 0);
	memset(dst, 0, sizeof(dst));
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, 5), 0);
	CHECK_U64(ev.len, 5);
	CHECK_U64(ev.timestamp, ts_a);
	CHECK(memcmp(dst, "alpha", 5) == 0);
	EXPECT_COUNTS(b, h, 3, 1, 2, 0, 0, 0);

	/* The empty record needs no room; then the 100-byte one. */
	CHECK_EQ(grb_basic_peek(b, h, &ev, dst, 0), 0);
	CHECK_U64(ev.len, 0);
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, 0), 0);
	CHECK_U64(ev.len, 0);
	CHECK(ev.timestamp >= ts_a);
	ts_b = ev.timestamp;
	memset(dst, 0, sizeof(dst));
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)), 0);
	CHECK_U64(ev.len, sizeof(big));
	CHECK(memcmp(dst, big, sizeof(big)) == 0);
	CHECK(ev.timestamp >= ts_b && ev.timestamp <= t1);
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)), -EAGAIN);
	CHECK_EQ(grb_basic_peek(b, h, &ev, dst, sizeof(dst)), -EAGAIN);
	others_are(b, h, -EAGAIN);
	EXPECT_COUNTS(b, h, 3, 3, 0, 0, 0, 0);
	grb_basic_destroy(b);
}

static void test_zero_copy(int v)
{
	struct grb_basic *b = make(v, PAGE, 4);
	unsigned int h = home(b, v);
	static unsigned char exp[3000], dst[3000];
	struct grb_basic_wctx w, w2;
	struct grb_basic_event ev;
	size_t i;

	for (i = 0; i < sizeof(exp); i++)
		exp[i] = (unsigned char)(i * 29u + 3u);
	CHECK_EQ(grb_basic_reserve(b, sizeof(exp), &w), 0);
	CHECK(w.data != NULL);
	memcpy(w.data, exp, sizeof(exp));
	/* Closed but not committed: the commit, not the flush, delivers. */
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)), -EAGAIN);
	EXPECT_COUNTS(b, h, 0, 0, 0, 0, 0, 0);
	grb_basic_commit(&w);
	EXPECT_COUNTS(b, h, 1, 0, 1, 0, 0, 0);
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)), 0);
	CHECK_U64(ev.len, sizeof(exp));
	CHECK_U64(ev.timestamp, w.timestamp);
	CHECK(memcmp(dst, exp, sizeof(exp)) == 0);

	/* An empty zero-copy record. */
	CHECK_EQ(grb_basic_reserve(b, 0, &w), 0);
	grb_basic_commit(&w);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, 0), 0);
	CHECK_U64(ev.len, 0);
	CHECK_U64(ev.timestamp, w.timestamp);

	/* Two reservations open at once, committed in reverse order: read
	 * back in reservation order. */
	CHECK_EQ(grb_basic_reserve(b, 6, &w), 0);
	CHECK_EQ(grb_basic_reserve(b, 7, &w2), 0);
	memcpy(w2.data, "second!", 7);
	memcpy(w.data, "first!", 6);
	grb_basic_commit(&w2);
	grb_basic_commit(&w);
	CHECK(w.timestamp <= w2.timestamp);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)), 0);
	CHECK(ev.len == 6 && memcmp(dst, "first!", 6) == 0);
	CHECK_U64(ev.timestamp, w.timestamp);
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)), 0);
	CHECK(ev.len == 7 && memcmp(dst, "second!", 7) == 0);
	CHECK_U64(ev.timestamp, w2.timestamp);
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)), -EAGAIN);
	EXPECT_COUNTS(b, h, 4, 4, 0, 0, 0, 0);
	grb_basic_destroy(b);
}

/*
 * The largest record: a 12-byte record header (the first record of a
 * sub-buffer carries a full timestamp) after the 64-byte sub-buffer
 * header fills a page-sized sub-buffer exactly, which closes it at once.
 */
static void test_exact_fill(int v)
{
	const size_t fill = PAGE - HDR - REC_HDR_FULL;
	struct grb_basic *b = make(v, PAGE, 4);
	unsigned int h = home(b, v);
	static unsigned char big[PAGE], dst[PAGE];
	struct grb_basic_event ev;
	struct grb_basic_wctx w;
	size_t i;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 13u + 1u);
	CHECK_EQ(grb_basic_write(b, big, fill), 0);
	/* Readable without a flush: the record closed its sub-buffer. */
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)), 0);
	CHECK_U64(ev.len, fill);
	CHECK(memcmp(dst, big, fill) == 0);
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)), -EAGAIN);
	/* A byte more can never fit: refused and counted as lost. */
	CHECK_EQ(grb_basic_write(b, big, fill + 1), -ENOSPC);
	CHECK_EQ(grb_basic_reserve(b, GRB_BASIC_MAX_LEN, &w), -ENOSPC);
	EXPECT_COUNTS(b, h, 1, 1, 0, 0, 0, 2);
	/* A small record, then a full-size one that closes the small one's
	 * sub-buffer with padding and fills the next: both readable. */
	write_seq(b, 77);
	CHECK_EQ(grb_basic_write(b, big + 1, fill), 0);
	CHECK_U64(read_seq(b, h), 77);
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)), 0);
	CHECK_U64(ev.len, fill);
	CHECK(memcmp(dst, big + 1, fill) == 0);
	CHECK_EQ(grb_basic_consume(b, h, &ev, dst, sizeof(dst)), -EAGAIN);
	EXPECT_COUNTS(b, h, 3, 3, 0, 0, 0, 2);
	grb_basic_destroy(b);
}

/*
 * More records than the buffer holds, with no reader: overwrite mode keeps
 * the newest and counts the oldest as overruns; discard mode keeps the
 * oldest and refuses the rest as lost.
 */
#define FILL_N 3000

static void test_full(int v)
{
	struct grb_basic *b = make(v, PAGE, 4);
	unsigned int h = home(b, v);
	struct grb_basic_event ev;
	struct grb_basic_counts c;
	uint32_t seq, first, kept = FILL_N, n = 0;
	int ret;

	for (seq = 0; seq < FILL_N; seq++) {
		ret = grb_basic_write(b, &seq, sizeof(seq));
		if (ret == 0) {
			CHECK(kept == FILL_N);  /* no success after a refusal */
			continue;
		}
		CHECK(v & V_DISCARD);
		CHECK_EQ(ret, -ENOBUFS);
		if (kept == FILL_N)
			kept = seq;
	}
	CHECK_EQ(grb_basic_flush(b), 0);
	c = counts(b, h);
	CHECK_U64(c.written, kept);
	CHECK_U64(c.lost, FILL_N - kept);
	if (v & V_DISCARD) {
		CHECK(kept > 0 && kept < FILL_N);
		CHECK_U64(c.overruns, 0);
	} else {
		CHECK(c.overruns > 0);
	}
	/* What is left is a contiguous run: the newest in overwrite mode,
	 * the oldest in discard mode. */
	first = (uint32_t)c.overruns;
	for (seq = first; seq < kept; seq++, n++)
		CHECK_U64(read_seq(b, h), seq);
	CHECK_EQ(grb_basic_consume(b, h, &ev, NULL, 0), -EAGAIN);
	CHECK_U64(n + c.overruns, kept);
	EXPECT_COUNTS(b, h, kept, n, 0, c.overruns, 0, FILL_N - kept);
	/* Room again once read. */
	write_seq(b, FILL_N);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_U64(read_seq(b, h), FILL_N);
	EXPECT_COUNTS(b, h, kept + 1, n + 1, 0, c.overruns, 0, FILL_N - kept);
	grb_basic_destroy(b);
}

static void test_reset(int v)
{
	struct grb_basic *b = make(v, PAGE, 4);
	unsigned int h = home(b, v);
	struct grb_basic_event ev;
	uint32_t seq;

	/* 500 records fill more than one sub-buffer, less than four. */
	for (seq = 0; seq < 500; seq++)
		write_seq(b, seq);
	/* The reader stops inside the first sub-buffer. */
	for (seq = 0; seq < 10; seq++)
		CHECK_U64(read_seq(b, h), seq);
	/* And a few more records stay in the open sub-buffer. */
	for (seq = 500; seq < 505; seq++)
		write_seq(b, seq);
	EXPECT_COUNTS(b, h, 505, 10, 495, 0, 0, 0);
	CHECK_EQ(grb_basic_reset(b), 0);
	EXPECT_COUNTS(b, h, 505, 10, 0, 0, 495, 0);
	CHECK_EQ(grb_basic_consume(b, h, &ev, NULL, 0), -EAGAIN);
	/* Writing and reading go on after a reset. */
	write_seq(b, 1000);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_U64(read_seq(b, h), 1000);
	CHECK_EQ(grb_basic_consume(b, h, &ev, NULL, 0), -EAGAIN);
	/* Resetting an empty buffer drops nothing. */
	CHECK_EQ(grb_basic_reset(b), 0);
	EXPECT_COUNTS(b, h, 506, 11, 0, 0, 495, 0);
	grb_basic_destroy(b);
}

static void test_disable(int v)
{
	struct grb_basic *b = make(v, PAGE, 4);
	unsigned int h = home(b, v);
	struct grb_basic_event ev;
	struct grb_basic_wctx w, w2;
	uint32_t seq = 2;

	write_seq(b, 1);
	/* A reservation made before disable still commits. */
	CHECK_EQ(grb_basic_reserve(b, sizeof(seq), &w), 0);
	memcpy(w.data, &seq, sizeof(seq));
	CHECK_EQ(grb_basic_record_disable(b), 0);
	CHECK_EQ(grb_basic_write(b, &seq, sizeof(seq)), -EAGAIN);
	CHECK_EQ(grb_basic_reserve(b, sizeof(seq), &w2), -EAGAIN);
	grb_basic_commit(&w);
	/* Refusals the client asked for are not losses. */
	EXPECT_COUNTS(b, h, 2, 0, 2, 0, 0, 0);
	CHECK_EQ(grb_basic_record_enable(b), 0);
	write_seq(b, 3);
	CHECK_EQ(grb_basic_flush(b), 0);
	CHECK_U64(read_seq(b, h), 1);
	CHECK_U64(read_seq(b, h), 2);
	CHECK_U64(read_seq(b, h), 3);
	CHECK_EQ(grb_basic_consume(b, h, &ev, NULL, 0), -EAGAIN);
	EXPECT_COUNTS(b, h, 3, 3, 0, 0, 0, 0);
	grb_basic_destroy(b);
}

static void test_finalize(int v)
{
	struct grb_basic *b = make(v, PAGE, 4);
	unsigned int h = home(b, v);
	struct grb_basic_event ev;
	struct grb_basic_wctx w;
	uint32_t seq;

	for (seq = 0; seq < 3; seq++)
		write_seq(b, seq);
	/* Finalize flushes: no grb_basic_flush() needed. */
	CHECK_EQ(grb_basic_finalize(b), 0);
	CHECK_EQ(grb_basic_finalize(b), -EALREADY);
	CHECK_EQ(grb_basic_write(b, &seq, sizeof(seq)), -ESHUTDOWN);
	CHECK_EQ(grb_basic_reserve(b, sizeof(seq), &w), -ESHUTDOWN);
	CHECK_EQ(grb_basic_record_disable(b), 0);
	CHECK_EQ(grb_basic_write(b, &seq, sizeof(seq)), -ESHUTDOWN);
	for (seq = 0; seq < 3; seq++)
		CHECK_U64(read_seq(b, h), seq);
	CHECK_EQ(grb_basic_consume(b, h, &ev, NULL, 0), -ENODATA);
	CHECK_EQ(grb_basic_peek(b, h, &ev, NULL, 0), -ENODATA);
	CHECK_EQ(grb_basic_consume(b, h, &ev, NULL, 0), -ENODATA);
	others_are(b, h, -ENODATA);
	EXPECT_COUNTS(b, h, 3, 3, 0, 0, 0, 0);
	grb_basic_destroy(b);
}

static void create_fails(int v, size_t subbuf_size, size_t num_subbuf,
			 int alloc, int mode)
{
	struct grb_basic_attr attr = {
		.subbuf_size = subbuf_size,
		.num_subbuf = num_subbuf,
		.alloc = (enum grb_alloc)alloc,
		.mode = (enum grb_mode)mode,
		.compress_timestamps = v & V_COMPRESS,
	};
	struct grb_basic *b = NULL;

	CHECK_EQ(grb_basic_create(&attr, &b), -EINVAL);
	CHECK(b == NULL);
}

static void test_einval(int v)
{
	struct grb_basic *b = make(v, PAGE, 4);
	unsigned int n = grb_basic_nr_bufs(b), i;
	int alloc = (v & V_PER_CHANNEL) ? 1 : 0, mode = (v & V_DISCARD) ? 1 : 0;
	struct grb_basic_attr attr = { .subbuf_size = PAGE, .num_subbuf = 4 };
	struct grb_basic_event ev;
	struct grb_basic_counts c;
	struct grb_basic_wctx w;
	char x[8] = { 0 };

	CHECK(n >= 1);
	if (v & V_PER_CHANNEL)
		CHECK_EQ(n, 1);
	CHECK_EQ(grb_channel_nr_bufs(grb_basic_channel(b)), n);
	CHECK_EQ(grb_basic_write(NULL, x, 1), -EINVAL);
	CHECK_EQ(grb_basic_write(b, NULL, 1), -EINVAL);
	CHECK_EQ(grb_basic_write(b, x, (size_t)GRB_BASIC_MAX_LEN + 1), -EINVAL);
	CHECK_EQ(grb_basic_reserve(NULL, 1, &w), -EINVAL);
	CHECK_EQ(grb_basic_reserve(b, 1, NULL), -EINVAL);
	CHECK_EQ(grb_basic_reserve(b, (size_t)GRB_BASIC_MAX_LEN + 1, &w),
		 -EINVAL);
	CHECK_EQ(grb_basic_consume(NULL, 0, &ev, x, sizeof(x)), -EINVAL);
	CHECK_EQ(grb_basic_consume(b, n, &ev, x, sizeof(x)), -EINVAL);
	CHECK_EQ(grb_basic_consume(b, ~0u, &ev, x, sizeof(x)), -EINVAL);
	CHECK_EQ(grb_basic_consume(b, 0, NULL, x, sizeof(x)), -EINVAL);
	CHECK_EQ(grb_basic_peek(NULL, 0, &ev, x, sizeof(x)), -EINVAL);
	CHECK_EQ(grb_basic_peek(b, n, &ev, x, sizeof(x)), -EINVAL);
	CHECK_EQ(grb_basic_peek(b, 0, NULL, x, sizeof(x)), -EINVAL);
	CHECK_EQ(grb_basic_get_counts(NULL, 0, &c), -EINVAL);
	CHECK_EQ(grb_basic_get_counts(b, n, &c), -EINVAL);
	CHECK_EQ(grb_basic_get_counts(b, 0, NULL), -EINVAL);
	CHECK_EQ(grb_basic_reset(NULL), -EINVAL);
	CHECK_EQ(grb_basic_record_disable(NULL), -EINVAL);
	CHECK_EQ(grb_basic_record_enable(NULL), -EINVAL);
	CHECK_EQ(grb_basic_flush(NULL), -EINVAL);
	CHECK_EQ(grb_basic_finalize(NULL), -EINVAL);
	CHECK_EQ(grb_basic_nr_bufs(NULL), 0);
	CHECK(grb_basic_channel(NULL) == NULL);
	grb_basic_destroy(NULL);
	/* None of the refused calls counted anything. */
	for (i = 0; i < n; i++)
		EXPECT_COUNTS(b, i, 0, 0, 0, 0, 0, 0);
	grb_basic_destroy(b);

	CHECK_EQ(grb_basic_create(NULL, &b), -EINVAL);
	CHECK_EQ(grb_basic_create(&attr, NULL), -EINVAL);
	create_fails(v, PAGE, 4, 7, mode);           /* alloc */
	create_fails(v, PAGE, 4, alloc, 7);          /* mode */
	create_fails(v, 3 * PAGE, 4, alloc, mode);   /* not a power of two */
	create_fails(v, PAGE / 2, 4, alloc, mode);   /* below a page */
	create_fails(v, PAGE, 1, alloc, mode);       /* a single sub-buffer */
	create_fails(v, PAGE, 6, alloc, mode);       /* not a power of two */
}

/* ------------------------------------------------------------------ */
/* Raw sub-buffers, through the engine reader of grb_basic_channel().  */

struct tsrec {
	uint64_t ts;          /* the reservation's timestamp */
	uint32_t seq;
	uint32_t extra;       /* filler bytes after the struct */
};

struct raw_stats {
	uint32_t next_seq;
	uint64_t full, compressed, subbufs;
	uint64_t crossings;          /* full: high bits changed mid sub-buffer */
	uint64_t compressed_after;   /* compressed, at or after `boundary` */
	uint64_t boundary;
};

/* A zero-copy record holding its own reservation timestamp. */
static void raw_write(struct grb_basic *b, uint32_t seq)
{
	struct grb_basic_wctx w;
	struct tsrec r;

	r.seq = seq;
	r.extra = seq % 11;   /* lengths vary: records start unaligned */
	CHECK_EQ(grb_basic_reserve(b, sizeof(r) + r.extra, &w), 0);
	r.ts = w.timestamp;
	memcpy(w.data, &r, sizeof(r));
	memset((char *)w.data + sizeof(r), 0xa5, r.extra);
	grb_basic_commit(&w);
}

/* Check one raw record against the previous one of its sub-buffer. */
static void raw_record(int v, const struct grb_record *rec,
		       const struct tsrec *r, uint64_t nrec, uint64_t prev,
		       struct raw_stats *st)
{
	CHECK_U64(r->seq, st->next_seq);
	st->next_seq++;
	CHECK_U64(rec->payload_len, sizeof(*r) + r->extra);
	CHECK(r->ts >= prev);
	if (rec->rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		CHECK_U64(rec->timestamp, r->ts);
		st->full++;
		if (nrec > 0 && TS_HIGH(prev) != TS_HIGH(r->ts))
			st->crossings++;
		return;
	}
	/* Compressed: only with compression, never first in a sub-buffer,
	 * and only when the high bits are the previous record's. */
	CHECK(v & V_COMPRESS);
	CHECK(nrec > 0);
	CHECK_U64(rec->timestamp, r->ts & UINT64_C(0xffffffff));
	CHECK_U64(TS_HIGH(prev), TS_HIGH(r->ts));
	st->compressed++;
	if (st->boundary && r->ts >= st->boundary)
		st->compressed_after++;
}

static void raw_subbuf(int v, struct grb_buf *buf, unsigned int h,
		       uint64_t pos, struct raw_stats *st)
{
	struct grb_basic_subbuf_header hd;
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	struct tsrec r;
	uint64_t nrec = 0, prev = 0, first = 0;
	size_t off;

	CHECK_EQ(grb_reader_get_subbuf(buf, pos), 0);
	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	CHECK_U64(sb.pos, pos);
	CHECK_U64(sb.seq, pos / PAGE);
	CHECK_EQ(grb_reader_read(buf, 0, &hd, sizeof(hd)), 0);
	CHECK_U64(hd.magic, GRB_BASIC_MAGIC);
	CHECK_EQ(hd.cpu, buf_cpu(v, h));
	CHECK_U64(hd.seq, sb.seq);
	CHECK_U64(hd.data_size, sb.data_size);
	CHECK_U64(hd.records, sb.records);
	CHECK_U64(hd.lost + hd.overwritten, 0);
	CHECK_U64(grb_reader_first_record(buf), HDR);
	for (off = HDR; off < sb.data_size; off = rec.next) {
		CHECK_EQ(grb_reader_record(buf, off, &rec), 0);
		CHECK(rec.payload_len >= sizeof(r));
		CHECK_EQ(grb_reader_read(buf, rec.payload_off, &r, sizeof(r)),
			 0);
		raw_record(v, &rec, &r, nrec, prev, st);
		if (nrec++ == 0)
			first = r.ts;
		prev = r.ts;
	}
	/* The records end exactly where the data does. */
	CHECK_U64(off, sb.data_size);
	CHECK_U64(nrec, sb.records);
	CHECK_U64(hd.ts_begin, first);
	CHECK(hd.ts_end >= prev);
	CHECK_EQ(grb_reader_put_subbuf(buf), 0);
	st->subbufs++;
}

/* Walk every closed sub-buffer of buffer h without consuming it, then
 * consume the records and check each rebuilt timestamp is exact. */
static void raw_check(int v, struct grb_basic *b, unsigned int h,
		      uint32_t n, struct raw_stats *st)
{
	struct grb_buf *buf = grb_channel_buf(grb_basic_channel(b), h);
	unsigned char rec[sizeof(struct tsrec) + 16];
	struct grb_basic_event ev;
	uint64_t c, p, pos;
	struct tsrec r;
	uint32_t seq;

	CHECK_EQ(grb_reader_snapshot(buf, &c, &p), 0);
	CHECK_U64(c, 0);
	for (pos = c; pos < p; pos += PAGE)
		raw_subbuf(v, buf, h, pos, st);
	CHECK_U64(st->next_seq, n);
	CHECK(st->full >= st->subbufs);
	for (seq = 0; seq < n; seq++) {
		CHECK_EQ(grb_basic_consume(b, h, &ev, rec, sizeof(rec)), 0);
		memcpy(&r, rec, sizeof(r));
		CHECK_U64(r.seq, seq);
		CHECK_U64(ev.len, sizeof(r) + r.extra);
		CHECK_U64(ev.timestamp, r.ts);
	}
	CHECK_EQ(grb_basic_consume(b, h, &ev, rec, sizeof(rec)), -EAGAIN);
	/* Consumed now: the reader can no longer pin it. */
	CHECK_EQ(grb_reader_get_subbuf(buf, c), -ESTALE);
}

#define RAW_N 600

static void test_raw(int v)
{
	struct grb_basic *b = make(v, PAGE, 8);
	unsigned int h = home(b, v);
	struct raw_stats st;
	uint32_t seq;

	memset(&st, 0, sizeof(st));
	for (seq = 0; seq < RAW_N; seq++)
		raw_write(b, seq);
	CHECK_EQ(grb_basic_flush(b), 0);
	raw_check(v, b, h, RAW_N, &st);
	CHECK(st.subbufs >= 2);
	if (v & V_COMPRESS)
		CHECK(st.compressed > 0);
	else
		CHECK_U64(st.compressed, 0);
	grb_basic_destroy(b);
}

/*
 * Write records every 100 us from 3 ms before to 3 ms after a multiple of
 * 2^32 ns of CLOCK_MONOTONIC: the high timestamp bits change in the
 * middle of a sub-buffer, so the first record after the change must carry
 * a full timestamp and the compressed ones after it must be rebuilt with
 * the new high bits.  Waits up to 4.3 s for the boundary.
 */
static void test_ts_boundary(int v)
{
	struct grb_basic *b = make(v, PAGE, 8);
	unsigned int h = home(b, v);
	const uint64_t margin = 3000000;
	struct timespec until, gap = { 0, 100000 };
	struct raw_stats st;
	uint64_t t = now_ns(), boundary = (TS_HIGH(t) + 1) << 32;
	uint32_t seq = 0;

	memset(&st, 0, sizeof(st));
	if (boundary - t < 2 * margin)
		boundary += UINT64_C(1) << 32;
	st.boundary = boundary;
	until.tv_sec = (time_t)((boundary - margin) / 1000000000u);
	until.tv_nsec = (long)((boundary - margin) % 1000000000u);
	CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL),
		 0);
	do {
		raw_write(b, seq++);
		nanosleep(&gap, NULL);
	} while (now_ns() < boundary + margin);
	CHECK_EQ(grb_basic_flush(b), 0);
	raw_check(v, b, h, seq, &st);
	CHECK(st.crossings > 0);
	CHECK(st.compressed_after > 0);
	printf("%-34s %u records across the 2^32 ns boundary at %llu: "
	       "%llu full, %llu compressed (%llu after)\n", variant_name(v),
	       seq, (unsigned long long)boundary,
	       (unsigned long long)st.full, (unsigned long long)st.compressed,
	       (unsigned long long)st.compressed_after);
	grb_basic_destroy(b);
}

int main(void)
{
	int v;

	CHECK_EQ(sched_getaffinity(0, sizeof(orig_mask), &orig_mask), 0);
	for (v = 0; v < V_COUNT; v++) {
		test_flood(v, PAGE, 4);          /* small: overwrite, loss */
		test_flood(v, 16 * PAGE, 8);     /* roomy */
		pin();
		test_peek_consume(v);
		test_zero_copy(v);
		test_exact_fill(v);
		test_full(v);
		test_reset(v);
		test_disable(v);
		test_finalize(v);
		test_einval(v);
		test_raw(v);
		unpin();
	}
	if (getenv("GRB_TEST_TS_BOUNDARY")) {
		pin();
		test_ts_boundary(V_PER_CHANNEL | V_COMPRESS);
		unpin();
	} else {
		printf("2^32 ns timestamp boundary: skipped "
		       "(set GRB_TEST_TS_BOUNDARY=1 to wait for one)\n");
	}
	printf("test_basic: all variants passed\n");
	return 0;
}
