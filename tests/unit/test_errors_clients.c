/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_errors_clients.c - the refusals of test_errors.c and
 * test_errors_reserve.c seen through clients: on every test client
 * variant, checked by its checker (each record reserved is read exactly
 * once or counted as overwritten, and every counted refusal matches a
 * failed write), with the thread moving between the CPUs it may use;
 * then every errno the basic client (grb/basic.h) documents: arguments,
 * consume's -ENOBUFS and -EIO, and what finalize refuses.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>

#include "check.h"
#include "grb/basic.h"
#include "tagrec.h"
#include "tclient.h"

/* The CPUs this thread may run on, to reach each per-CPU buffer. */
static int allowed[CPU_SETSIZE], nallowed;

static void read_allowed(void)
{
	cpu_set_t set;
	int c;

	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			allowed[nallowed++] = c;
	CHECK(nallowed > 0);
}

/*
 * Run on the @k-th allowed CPU (modulo their number) and return the
 * buffer a reservation of @cfg lands in from there.
 */
static unsigned int move_to(const struct grb_config *cfg, unsigned int k)
{
	cpu_set_t set;
	int c = allowed[k % (unsigned int)nallowed];

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
	return cfg->alloc == GRB_ALLOC_PER_CPU ? (unsigned int)c : 0;
}

static void restore_affinity(void)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < nallowed; i++)
		CPU_SET(allowed[i], &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

/*
 * The refusals of test_errors_reserve.c on every test client variant,
 * checked by its checker: each record reserved is read exactly once (or
 * counted as overwritten) and every counted refusal matches a failed
 * write.  The thread moves between the CPUs it may use, so per-CPU
 * variants fill several buffers.
 */
static void run_variant(int v)
{
	const struct grb_config *cfg = tc_config(v);
	struct grb_channel *chan = create(cfg, SB, 4);
	unsigned int nbufs = grb_channel_nr_bufs(chan), i, off;
	uint64_t refused = 0;
	struct tc_checker tc;
	uint32_t seq = 0;
	int ret;

	CHECK_EQ(tc_checker_init(&tc, chan, 1, 4000), 0);
	for (i = 0; i < nbufs; i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
	/* Fill every buffer: discard variants refuse, overwrite ones wrap. */
	for (; seq < 1500; seq++) {
		move_to(cfg, seq);
		ret = tc_write(cfg, chan, 0, seq, seq % 100);
		if (ret == 0)
			tc_mark_reserved(&tc, 0, seq);
		else if (ret == -ENOBUFS)
			refused++;
		else
			CHECK_EQ(ret, 0);
	}
	CHECK(refused > 0 || cfg->mode == GRB_MODE_OVERWRITE);
	tc_drain_all(&tc, chan);
	/* A disabled buffer refuses without counting; the others write. */
	off = move_to(cfg, 0);
	CHECK_EQ(grb_buf_record_disable(grb_channel_buf(chan, off)), 0);
	for (; seq < 1600; seq++) {
		i = move_to(cfg, seq);
		ret = tc_write(cfg, chan, 0, seq, 8);
		if (ret == 0)
			tc_mark_reserved(&tc, 0, seq);
		else
			CHECK_EQ(ret, -EAGAIN);
		CHECK_EQ(ret == -EAGAIN, i == off);
	}
	CHECK_EQ(grb_buf_record_enable(grb_channel_buf(chan, off)), 0);
	for (; seq < 1700; seq++) {
		move_to(cfg, seq);
		CHECK_EQ(tc_write(cfg, chan, 0, seq, 8), 0);
		tc_mark_reserved(&tc, 0, seq);
	}
	CHECK_EQ(grb_channel_finalize(chan), 0);
	for (; seq < 1710; seq++)
		CHECK_EQ(tc_write(cfg, chan, 0, seq, 8), -ESHUTDOWN);
	restore_affinity();
	tc_drain_all(&tc, chan);
	CHECK_U64(tc_final_check(&tc, chan, refused), 0);
	tc_checker_free(&tc);
	grb_channel_destroy(chan);
}

/* The basic client's documented errors: arguments. */
static const struct grb_basic_attr basic_attr = {
	"basic", SB, 4, GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 1,
};

static void test_basic_args(void)
{
	static char big[2 * SB];
	struct grb_basic_attr bad = basic_attr;
	struct grb_basic_counts cnt;
	struct grb_basic_event ev;
	struct grb_basic_wctx w;
	struct grb_basic *b = NULL;

	CHECK_EQ(grb_basic_create(NULL, &b), -EINVAL);
	CHECK(grb_basic_config((enum grb_alloc)2, GRB_MODE_DISCARD, 0) == NULL);
	CHECK(grb_basic_config(GRB_ALLOC_PER_CPU, (enum grb_mode)2, 0) == NULL);
	CHECK(grb_basic_config(GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0) != NULL);
	CHECK_EQ(grb_basic_create(&basic_attr, NULL), -EINVAL);
	bad.subbuf_size = 3 * SB;
	CHECK_EQ(grb_basic_create(&bad, &b), -EINVAL);
	bad = basic_attr;
	bad.alloc = (enum grb_alloc)5;
	CHECK_EQ(grb_basic_create(&bad, &b), -EINVAL);
	bad = basic_attr;
	bad.mode = (enum grb_mode)5;
	CHECK_EQ(grb_basic_create(&bad, &b), -EINVAL);
	CHECK(b == NULL);
	CHECK_EQ(grb_basic_create(&basic_attr, &b), 0);

	CHECK_EQ(grb_basic_write(NULL, "x", 1), -EINVAL);
	CHECK_EQ(grb_basic_write(b, NULL, 1), -EINVAL);
	CHECK_EQ(grb_basic_write(b, "x", (size_t)GRB_BASIC_MAX_LEN + 1),
		 -EINVAL);
	CHECK_EQ(grb_basic_reserve(NULL, 1, &w), -EINVAL);
	CHECK_EQ(grb_basic_reserve(b, 1, NULL), -EINVAL);
	CHECK_EQ(grb_basic_write(b, big, SB), -ENOSPC);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, big, SB), -EAGAIN);
	CHECK_EQ(grb_basic_consume(b, 1, &ev, big, SB), -EINVAL);
	CHECK_EQ(grb_basic_consume(NULL, 0, &ev, big, SB), -EINVAL);
	CHECK_EQ(grb_basic_consume(b, 0, NULL, big, SB), -EINVAL);
	CHECK_EQ(grb_basic_peek(b, 1, &ev, big, SB), -EINVAL);
	CHECK_EQ(grb_basic_get_counts(b, 1, &cnt), -EINVAL);
	CHECK_EQ(grb_basic_get_counts(NULL, 0, &cnt), -EINVAL);
	CHECK_EQ(grb_basic_reset(NULL), -EINVAL);
	CHECK_EQ(grb_basic_flush(NULL), -EINVAL);
	CHECK_EQ(grb_basic_finalize(NULL), -EINVAL);
	CHECK_EQ(grb_basic_record_disable(NULL), -EINVAL);
	CHECK_EQ(grb_basic_record_enable(NULL), -EINVAL);
	CHECK_EQ(grb_basic_get_counts(b, 0, &cnt), 0);
	CHECK_U64(cnt.lost, 1);
	grb_basic_destroy(b);
	grb_basic_destroy(NULL);
}

/* Consume: -ENOBUFS keeps the record, a corrupt one gives -EIO. */
static void test_basic_consume(void)
{
	struct grb_basic_event ev;
	struct grb_reader_subbuf sb;
	struct grb_basic *b = NULL;
	struct grb_record rec;
	struct grb_buf *buf;
	uint32_t word;
	size_t off;
	char dst[16];

	CHECK_EQ(grb_basic_create(&basic_attr, &b), 0);
	CHECK_EQ(grb_basic_write(b, NULL, 0), 0);
	CHECK_EQ(grb_basic_write(b, "hello", 5), 0);
	CHECK_EQ(grb_basic_record_disable(b), 0);
	CHECK_EQ(grb_basic_write(b, "no", 2), -EAGAIN);
	CHECK_EQ(grb_basic_record_enable(b), 0);
	CHECK_EQ(grb_basic_write(b, "abcd", 4), 0);
	CHECK_EQ(grb_basic_flush(b), 0);
	/* The empty record first, then "hello": too big for 2 bytes, it
	 * stays and ev describes it. */
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), 0);
	CHECK_U64(ev.len, 0);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, 2), -ENOBUFS);
	CHECK_U64(ev.len, 5);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), 0);
	CHECK(memcmp(dst, "hello", 5) == 0);

	/*
	 * A corrupt length word is a decode failure: -EIO.  The cursor now
	 * holds the sub-buffer at "abcd"; find that record with the
	 * engine's decoder and make its length run past the data.
	 */
	CHECK_EQ(grb_basic_peek(b, 0, &ev, dst, sizeof(dst)), 0);
	CHECK_U64(ev.len, 4);
	buf = grb_channel_buf(grb_basic_channel(b), 0);
	CHECK_EQ(grb_reader_held(buf, &sb), 0);
	for (off = grb_reader_first_record(buf); ; off = rec.next) {
		CHECK_EQ(grb_reader_record(buf, off, &rec), 0);
		if (rec.next == sb.data_size)
			break;
	}
	CHECK_U64(rec.payload_len, 4);
	memcpy(&word, (const char *)sb.data + rec.offset, sizeof(word));
	word |= 0x00fffff0u;
	memcpy((char *)sb.data + rec.offset, &word, sizeof(word));
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -EIO);
	grb_basic_destroy(b);
}

/* Finalized: writes refused, the rest read, then no data. */
static void test_basic_finalize(void)
{
	struct grb_basic_counts cnt;
	struct grb_basic_event ev;
	struct grb_basic *b = NULL;
	char dst[16];

	CHECK_EQ(grb_basic_create(&basic_attr, &b), 0);
	CHECK_EQ(grb_basic_write(b, "z", 1), 0);
	CHECK_EQ(grb_basic_finalize(b), 0);
	CHECK_EQ(grb_basic_finalize(b), -EALREADY);
	CHECK_EQ(grb_basic_write(b, "z", 1), -ESHUTDOWN);
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), 0);
	CHECK_EQ(dst[0], 'z');
	CHECK_EQ(grb_basic_consume(b, 0, &ev, dst, sizeof(dst)), -ENODATA);
	CHECK_EQ(grb_basic_get_counts(b, 0, &cnt), 0);
	CHECK_U64(cnt.written, 1);
	CHECK_U64(cnt.consumed, 1);
	CHECK_U64(cnt.lost, 0);
	grb_basic_destroy(b);
}

int main(void)
{
	int v;

	read_allowed();
	for (v = 0; v < TV_COUNT; v++)
		run_variant(v);
	test_basic_args();
	test_basic_consume();
	test_basic_finalize();
	printf("test_errors_clients: passed\n");
	return 0;
}
