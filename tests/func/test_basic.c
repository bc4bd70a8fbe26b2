/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_basic.c - the basic client (grb/basic.h) in all eight
 * variants (tests/common/basic_rig.h): per-CPU or per-channel buffers,
 * overwrite or discard mode, timestamp compression off or on.
 *
 * For each variant, single-threaded checks, with the thread pinned so
 * that every record lands in one known buffer: peek/consume and
 * -ENOBUFS, zero-copy reserve/commit (a pending commit holds back
 * delivery), a record that exactly fills a sub-buffer, overwrite keeping
 * the newest records or discard refusing the newest, reset, record
 * disable/enable, finalize and -ENODATA, -EINVAL; after each, the counts
 * field by field.  Several writers at once are test_basic_flood.c's, the
 * raw sub-buffers and timestamps test_basic_raw.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic_rig.h"
#include "check.h"
#include "grb/basic.h"
#include "grb/channel.h"

#define REC_HDR_FULL  12u   /* u32 length word + u64 timestamp */

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

int main(void)
{
	static void (*const tests[])(int) = {
		test_peek_consume, test_zero_copy, test_exact_fill, test_full,
		test_reset, test_disable, test_finalize, test_einval,
	};

	run_pinned(tests, sizeof(tests) / sizeof(tests[0]));
	printf("test_basic: all variants passed\n");
	return 0;
}
