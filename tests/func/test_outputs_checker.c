/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_outputs_checker.c - what the outputs of grb/output.h
 * deliver, checked against what was written:
 *  - grb_buf_iter_read() / grb_chan_iter_read(): payloads back to back,
 *    with every destination size from 1 byte up, byte-identical to the
 *    records written (buffer iterator consuming live and delivered
 *    records in discard and overwrite mode, a snapshot against the
 *    iterator's own records, the channel merge across two CPUs); a split
 *    record that _next() then returns whole; the read errnos;
 *  - grb_basic_decode() on a basic channel's file from grb_buf_write():
 *    the records written, without the channel; timestamps rebuilt across
 *    a wrap of their low 32 bits and every errno, on bytes made by hand;
 *  - records read exactly once across read, write and splice: writer
 *    threads write tagged records (tests/common/tclient.h) while the main
 *    thread takes them out with one of the four outputs; every record
 *    that came out (from the file, or the payload stream) is verified
 *    and marked, and the checker's final accounting must add up (in
 *    discard mode every record written came out once; in overwrite mode
 *    the rest were overwritten).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/grb.h"
#include "grb/iter.h"
#include "grb/output.h"
#include "tclient.h"

/* ---- a client with records of any length ---------------------------- */

#define SB 4096
#define NREC 240

static uint64_t now_val;

static uint64_t oc_clock(void)
{
	return now_val;
}

static size_t oc_header(const struct grb_config *cfg, size_t offset,
			size_t *pre, const struct grb_ctx *ctx)
{
	(void)cfg;
	(void)ctx;
	*pre = grb_offset_align(offset, 4);
	return *pre + 12;
}

/* u32 payload length, u64 timestamp, payload. */
static int oc_decode(const struct grb_config *cfg, const void *subbuf,
		     size_t offset, size_t data_size, struct grb_record *rec)
{
	const char *p = (const char *)subbuf;
	size_t at = offset + grb_offset_align(offset, 4);
	uint32_t len;

	(void)cfg;
	if (at + 12 > data_size)
		return -EINVAL;
	memcpy(&len, p + at, 4);
	memcpy(&rec->timestamp, p + at + 4, 8);
	rec->offset = at;
	rec->rflags = GRB_RFLAG_FULL_TIMESTAMP;
	rec->header_len = 12;
	rec->payload_off = at + 12;
	rec->payload_len = len;
	if (len > data_size - rec->payload_off)
		return -EINVAL;
	rec->next = rec->payload_off + len;
	return 0;
}

#define OC_CB { .clock_read = oc_clock, .record_header_size = oc_header, \
		.record_decode = oc_decode }

static const struct grb_config oc_disc = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 64, OC_CB, 0 };
static const struct grb_config oc_ovw = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 64, OC_CB, 0 };
static const struct grb_config oc_cpu = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 64, OC_CB, 0 };

/* Record i: 0 to 60 bytes (zero-length ones included), a pattern of i. */
static size_t plen(unsigned int i)
{
	return (i * 7u) % 61u;
}

static unsigned char pbyte(unsigned int i, size_t j)
{
	return (unsigned char)(i * 31u + j * 5u + 1u);
}

static void oc_put(const struct grb_config *cfg, struct grb_channel *chan,
		   unsigned int i)
{
	struct grb_ctx ctx = GRB_CTX_INIT(plen(i), 1);
	uint32_t len = (uint32_t)plen(i);
	size_t j;

	now_val = 1000 + (uint64_t)i * 10;
	CHECK_EQ(grb_reserve(cfg, chan, &ctx), 0);
	grb_write(cfg, &ctx, &len, 4);
	grb_write(cfg, &ctx, &ctx.timestamp, 8);
	for (j = 0; j < len; j++) {
		unsigned char c = pbyte(i, j);

		grb_write(cfg, &ctx, &c, 1);
	}
	grb_commit(cfg, &ctx);
}

/* The payloads of records [0, n), back to back. */
static size_t expected_stream(unsigned char *out, unsigned int n)
{
	size_t len = 0, j;
	unsigned int i;

	for (i = 0; i < n; i++)
		for (j = 0; j < plen(i); j++)
			out[len++] = pbyte(i, j);
	return len;
}

static struct grb_channel *create(const struct grb_config *cfg, size_t sb,
				  size_t n)
{
	struct grb_channel_attr attr = { "output", sb, n, NULL };
	struct grb_channel *chan;

	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	return chan;
}

/* ---- read ------------------------------------------------------------ */

typedef int (*read_fn)(void *it, void *dst, size_t cap, size_t *len);

static int buf_read(void *it, void *dst, size_t cap, size_t *len)
{
	return grb_buf_iter_read((struct grb_buf_iter *)it, dst, cap, len);
}

static int chan_read(void *it, void *dst, size_t cap, size_t *len)
{
	return grb_chan_iter_read((struct grb_chan_iter *)it, dst, cap, len);
}

/*
 * Read to the end with a cap-byte destination and append to out.  With
 * everything readable (finalized, or a snapshot), every call but the
 * last fills the destination: a split must not end a call early.
 */
static size_t read_all(void *it, read_fn fn, size_t cap, unsigned char *out)
{
	unsigned char dst[128];
	size_t got = 0, len;
	int ret, short_seen = 0;

	while ((ret = fn(it, dst, cap, &len)) == 0) {
		CHECK(len <= cap);
		CHECK(len > 0);         /* nothing pending yet data remains */
		CHECK(!short_seen);
		short_seen = len < cap;
		memcpy(out + got, dst, len);
		got += len;
	}
	CHECK_EQ(ret, -ENODATA);
	CHECK_EQ(fn(it, dst, cap, &len), -ENODATA);
	return got;
}

/* One buffer, consumed: half read live (discard) before the rest is
 * written, then everything after finalize; every cap from 1 byte up. */
static void test_read_buf(const struct grb_config *cfg)
{
	static unsigned char want[NREC * 61], got[NREC * 61];
	size_t want_len = expected_stream(want, NREC), n, len, cap;
	struct grb_channel *chan;
	struct grb_buf_iter *it;
	unsigned int i;

	for (cap = 1; cap <= 70; cap++) {
		chan = create(cfg, SB, 8);
		CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0),
					     GRB_ITER_CONSUME, &it), 0);
		for (i = 0; i < NREC / 2; i++)
			oc_put(cfg, chan, i);
		n = 0;
		while (grb_buf_iter_read(it, got + n, cap, &len) == 0 &&
		       len > 0)
			n += len;
		/* Live records (discard), or a delivered sub-buffer. */
		CHECK(n > 0);
		for (; i < NREC; i++)
			oc_put(cfg, chan, i);
		CHECK_EQ(grb_channel_finalize(chan), 0);
		n += read_all(it, buf_read, cap, got + n);
		CHECK_U64(n, want_len);
		CHECK(memcmp(got, want, want_len) == 0);
		grb_buf_iter_destroy(it);
		grb_channel_destroy(chan);
	}
}

/* A snapshot of a wrapped flight recorder: the same bytes for every cap
 * as the iterator's own records give. */
static void test_read_snapshot(void)
{
	static unsigned char want[4 * NREC * 61], got[4 * NREC * 61];
	struct grb_channel *chan = create(&oc_ovw, SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_iter_record r;
	struct grb_buf_iter *it;
	size_t want_len = 0, cap;
	unsigned int i;

	for (i = 0; i < 4 * NREC; i++)
		oc_put(&oc_ovw, chan, i % NREC);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_SNAPSHOT, &it), 0);
	while (grb_buf_iter_next(it, &r) == 0) {
		memcpy(want + want_len, r.payload, r.payload_len);
		want_len += r.payload_len;
	}
	grb_buf_iter_destroy(it);
	CHECK(want_len > SB);   /* more than a sub-buffer survived */
	for (cap = 1; cap <= 70; cap++) {
		CHECK_EQ(grb_buf_iter_create(b, GRB_ITER_SNAPSHOT, &it), 0);
		CHECK_U64(read_all(it, buf_read, cap, got), want_len);
		CHECK(memcmp(got, want, want_len) == 0);
		grb_buf_iter_destroy(it);
	}
	grb_channel_destroy(chan);
}

static int first_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int c, n = 0;

	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

static void run_on(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

/* The merge: records alternate between buffers (when there are two CPUs)
 * with rising timestamps, so the merged stream is records 0, 1, 2... */
static void test_read_chan(void)
{
	static unsigned char want[NREC * 61], got[NREC * 61];
	size_t want_len = expected_stream(want, NREC), cap;
	struct grb_chan_iter_stats st;
	struct grb_channel *chan;
	struct grb_chan_iter *ci;
	cpu_set_t all;
	unsigned int i;
	int cpus[2], ncpus = first_cpus(cpus, 2);

	CHECK_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
	for (cap = 1; cap <= 70; cap++) {
		chan = create(&oc_cpu, SB, 8);
		CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
		for (i = 0; i < NREC; i++) {
			run_on(cpus[i % (unsigned int)ncpus]);
			oc_put(&oc_cpu, chan, i);
		}
		CHECK_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
		CHECK_EQ(grb_channel_finalize(chan), 0);
		CHECK_U64(read_all(ci, chan_read, cap, got), want_len);
		CHECK(memcmp(got, want, want_len) == 0);
		CHECK_EQ(grb_chan_iter_stats(ci, &st), 0);
		CHECK_U64(st.records, NREC);
		grb_chan_iter_destroy(ci);
		grb_channel_destroy(chan);
	}
}

/* A split record, then _next(): it comes whole, and read goes on after
 * it.  Record 3 is 21 bytes, record 4 is 28. */
static void test_read_then_next(int chan_iter)
{
	const struct grb_config *cfg = chan_iter ? &oc_cpu : &oc_disc;
	struct grb_channel *chan = create(cfg, SB, 8);
	struct grb_buf_iter *it = NULL;
	struct grb_chan_iter *ci = NULL;
	struct grb_iter_record r;
	unsigned char dst[64];
	size_t len;
	unsigned int i;

	for (i = 3; i < 6; i++)
		oc_put(cfg, chan, i);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	if (chan_iter)
		CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	else
		CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0),
					     GRB_ITER_CONSUME, &it), 0);
	CHECK_EQ(chan_iter ? grb_chan_iter_read(ci, dst, 5, &len) :
		 grb_buf_iter_read(it, dst, 5, &len), 0);
	CHECK_U64(len, 5);
	CHECK_EQ(dst[4], pbyte(3, 4));
	CHECK_EQ(chan_iter ? grb_chan_iter_next(ci, &r) :
		 grb_buf_iter_next(it, &r), 0);
	CHECK_U64(r.payload_len, plen(3));
	CHECK(memcmp(r.payload, (unsigned char[]){ pbyte(3, 0), pbyte(3, 1) },
		     2) == 0);
	CHECK_EQ(((const unsigned char *)r.payload)[20], pbyte(3, 20));
	/* The split is forgotten: read starts at record 4's first byte. */
	CHECK_EQ(chan_iter ? grb_chan_iter_read(ci, dst, 30, &len) :
		 grb_buf_iter_read(it, dst, 30, &len), 0);
	CHECK_U64(len, 30);
	CHECK_EQ(dst[0], pbyte(4, 0));
	CHECK_EQ(dst[27], pbyte(4, 27));
	CHECK_EQ(dst[28], pbyte(5, 0));
	grb_chan_iter_destroy(ci);
	grb_buf_iter_destroy(it);
	grb_channel_destroy(chan);
}

static void test_read_errors(void)
{
	struct grb_channel *chan = create(&oc_disc, SB, 4);
	struct grb_chan_iter *ci;
	struct grb_buf_iter *it;
	unsigned char dst[8];
	size_t len = 99;

	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0),
				     GRB_ITER_CONSUME, &it), 0);
	CHECK_EQ(grb_buf_iter_read(NULL, dst, 8, &len), -EINVAL);
	CHECK_EQ(grb_buf_iter_read(it, NULL, 8, &len), -EINVAL);
	CHECK_EQ(grb_buf_iter_read(it, dst, 0, &len), -EINVAL);
	CHECK_EQ(grb_buf_iter_read(it, dst, 8, NULL), -EINVAL);
	CHECK_EQ(grb_buf_iter_read(it, dst, 8, &len), 0);
	CHECK_U64(len, 0);      /* nothing readable now */
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_buf_iter_read(it, dst, 8, &len), -ENODATA);
	grb_buf_iter_destroy(it);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	CHECK_EQ(grb_chan_iter_read(NULL, dst, 8, &len), -EINVAL);
	CHECK_EQ(grb_chan_iter_read(ci, NULL, 8, &len), -EINVAL);
	CHECK_EQ(grb_chan_iter_read(ci, dst, 0, &len), -EINVAL);
	CHECK_EQ(grb_chan_iter_read(ci, dst, 8, NULL), -EINVAL);
	CHECK_EQ(grb_chan_iter_read(ci, dst, 8, &len), -ENODATA);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);
	chan = create(&oc_cpu, SB, 4);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	len = 99;
	CHECK_EQ(grb_chan_iter_read(ci, dst, 8, &len), 0);
	CHECK_U64(len, 0);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);

	/* Records with empty payloads (record 0's), the last ones of a
	 * finalized channel: the call that consumes them returns 0 with
	 * *len 0, the next one -ENODATA. */
	for (int k = 0; k < 2; k++) {
		const struct grb_config *cfg = k ? &oc_cpu : &oc_disc;

		chan = create(cfg, SB, 4);
		oc_put(cfg, chan, 0);
		oc_put(cfg, chan, 0);
		CHECK_EQ(grb_channel_finalize(chan), 0);
		len = 99;
		if (k) {
			CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME,
						      &ci), 0);
			CHECK_EQ(grb_chan_iter_read(ci, dst, 8, &len), 0);
			CHECK_U64(len, 0);
			CHECK_EQ(grb_chan_iter_read(ci, dst, 8, &len), -ENODATA);
			{
				struct grb_chan_iter_stats cst;

				CHECK_EQ(grb_chan_iter_stats(ci, &cst), 0);
				CHECK_U64(cst.records, 2);
			}
			grb_chan_iter_destroy(ci);
		} else {
			CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, 0),
						     GRB_ITER_CONSUME, &it), 0);
			CHECK_EQ(grb_buf_iter_read(it, dst, 8, &len), 0);
			CHECK_U64(len, 0);
			CHECK_EQ(grb_buf_iter_read(it, dst, 8, &len), -ENODATA);
			grb_buf_iter_destroy(it);
		}
		grb_channel_destroy(chan);
	}
}

/* ---- records exactly once --------------------------------------------- */

#define NWRITERS 2
#define PER_WRITER 6000

enum how { H_BUF_READ, H_CHAN_READ, H_WRITE, H_SPLICE };

static const char *const how_name[] = {
	"buffer read", "channel read", "write", "splice",
};

uint32_t tc_checksum(const struct trec *r, const unsigned char *extra);

struct writer {
	pthread_t tid;
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct tc_checker *tc;
	uint32_t id;
	uint64_t refused;
};

static atomic_uint writers_done;

static void *write_records(void *p)
{
	struct writer *w = (struct writer *)p;
	uint32_t seq;

	for (seq = 0; seq < PER_WRITER; seq++) {
		if (tc_write(w->cfg, w->chan, w->id, seq, seq % 41) == 0)
			tc_mark_reserved(w->tc, w->id, seq);
		else
			w->refused++;
		/* Bursts the reader cannot keep up with (losses), then
		 * pauses it can (records read). */
		if (seq % 2048 > 1024 && seq % 32 == 0)
			sched_yield();
	}
	atomic_fetch_add(&writers_done, 1);
	return NULL;
}

/*
 * One record that came out: intact, read once, and after the previous
 * one of its writer in the same stream (*last, per writer).
 */
static void mark(struct tc_checker *tc, const unsigned char *payload,
		 size_t len, int64_t *last)
{
	struct trec r;
	size_t idx;

	CHECK(len >= sizeof(r));
	memcpy(&r, payload, sizeof(r));
	CHECK_U64(len, sizeof(r) + r.extra);
	CHECK(r.writer < tc->nwriters && r.seq < tc->maxseq);
	CHECK_U64(tc_checksum(&r, payload + sizeof(r)), r.csum);
	idx = (size_t)r.writer * tc->maxseq + r.seq;
	CHECK_EQ(tc->seen[idx], 0);
	tc->seen[idx] = 1;
	CHECK((int64_t)r.seq > last[r.writer]);
	last[r.writer] = r.seq;
	tc->records_read++;
}

/* A payload stream from read: tagged records back to back. */
static void mark_stream(struct tc_checker *tc, const unsigned char *p,
			size_t len)
{
	int64_t last[NWRITERS] = { -1, -1 };
	struct trec r;
	size_t at = 0;

	while (at < len) {
		CHECK(len - at >= sizeof(r));
		memcpy(&r, p + at, sizeof(r));
		CHECK(len - at >= sizeof(r) + r.extra);
		mark(tc, p + at, sizeof(r) + r.extra, last);
		at += sizeof(r) + r.extra;
	}
}

/*
 * A file from write or splice: sub-buffers one after another, each with
 * its header, decoded with the client's own decoder.  Writers' order is
 * checked per buffer (the header's cpu).
 */
static void mark_file(struct tc_checker *tc, const struct grb_config *cfg,
		      int fd)
{
	int64_t last[64][NWRITERS];
	struct grb_record rec;
	struct tc_header h;
	struct stat st;
	unsigned char *p;
	size_t at = 0, off, n, b;

	memset(last, 0xff, sizeof(last));       /* -1 each */
	CHECK_EQ(fstat(fd, &st), 0);
	p = malloc((size_t)st.st_size + 1);
	CHECK(p != NULL);
	CHECK_EQ(pread(fd, p, (size_t)st.st_size, 0), st.st_size);
	while (at < (size_t)st.st_size) {
		CHECK((size_t)st.st_size - at >= sizeof(h));
		memcpy(&h, p + at, sizeof(h));
		CHECK_U64(h.magic, TC_MAGIC);
		CHECK(h.data_size >= sizeof(h) &&
		      h.data_size <= (size_t)st.st_size - at);
		b = h.cpu < 0 ? 0 : (size_t)h.cpu % 64;
		for (off = sizeof(h), n = 0; off < h.data_size; n++) {
			CHECK_EQ(cfg->cb.record_decode(cfg, p + at, off,
						       h.data_size, &rec), 0);
			mark(tc, p + at + rec.payload_off, rec.payload_len,
			     last[b]);
			off = rec.next;
		}
		CHECK_U64(n, h.records);
		at += h.data_size;
	}
	free(p);
}

/* Take what is there now with one of the outputs. */
static int take(enum how how, struct grb_channel *chan, void **its,
		int fd, unsigned char **stream, size_t *len)
{
	unsigned int i, nbufs = grb_channel_nr_bufs(chan), done = 0;
	size_t got;
	int ret = 0;

	for (i = 0; i < nbufs; i++) {
		struct grb_buf *buf = grb_channel_buf(chan, i);

		if (how == H_WRITE)
			ret = grb_buf_write(buf, fd, 0, NULL);
		else if (how == H_SPLICE)
			ret = grb_buf_splice(buf, fd, NULL, 0, NULL);
		else if (how == H_BUF_READ)
			while ((ret = grb_buf_iter_read(its[i], stream[i] +
					len[i], 13, &got)) == 0 && got)
				len[i] += got;
		else if (i == 0)
			while ((ret = grb_chan_iter_read(its[0], stream[0] +
					len[0], 13, &got)) == 0 && got)
				len[0] += got;
		CHECK(ret == 0 || ret == -ENODATA);
		done += ret == -ENODATA || (how == H_CHAN_READ && i > 0);
	}
	return done == nbufs;
}

static void *open_its(enum how how, struct grb_channel *chan, void **its)
{
	unsigned int i;

	if (how == H_CHAN_READ)
		CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME,
			 (struct grb_chan_iter **)&its[0]), 0);
	for (i = 0; i < grb_channel_nr_bufs(chan); i++) {
		struct grb_buf *buf = grb_channel_buf(chan, i);

		if (how == H_BUF_READ)
			CHECK_EQ(grb_buf_iter_create(buf, GRB_ITER_CONSUME,
				 (struct grb_buf_iter **)&its[i]), 0);
		else if (how != H_CHAN_READ)
			CHECK_EQ(grb_reader_open(buf), 0);
	}
	return its;
}

/* The iterators let the buffers go; the checker reads them once more. */
static void close_its(enum how how, struct grb_channel *chan, void **its)
{
	unsigned int i;

	if (how == H_CHAN_READ)
		grb_chan_iter_destroy(its[0]);
	for (i = 0; i < grb_channel_nr_bufs(chan); i++) {
		if (how == H_BUF_READ)
			grb_buf_iter_destroy(its[i]);
		if (how == H_BUF_READ || how == H_CHAN_READ)
			CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
	}
}

static void test_exactly_once(int variant, enum how how)
{
	const struct grb_config *cfg = tc_config(variant);
	struct grb_channel *chan = create(cfg, SB, 8);
	unsigned int nbufs = grb_channel_nr_bufs(chan), i;
	size_t cap = (size_t)NWRITERS * PER_WRITER * 80;
	unsigned char **stream = calloc(nbufs, sizeof(*stream));
	size_t *len = calloc(nbufs, sizeof(*len));
	void **its = calloc(nbufs, sizeof(*its));
	struct writer w[NWRITERS];
	struct tc_checker tc;
	uint64_t refused = 0;
	char path[] = "/tmp/grb-outputs-XXXXXX";
	int fd = mkostemp(path, O_CLOEXEC);

	CHECK(fd >= 0 && stream && len && its);
	unlink(path);
	CHECK_EQ(tc_checker_init(&tc, chan, NWRITERS, PER_WRITER), 0);
	for (i = 0; i < nbufs && how <= H_CHAN_READ; i++)
		CHECK((stream[i] = malloc(cap)) != NULL);
	open_its(how, chan, its);
	atomic_store(&writers_done, 0);
	for (i = 0; i < NWRITERS; i++) {
		w[i] = (struct writer){ .cfg = cfg, .chan = chan, .tc = &tc,
					.id = i };
		CHECK_EQ(pthread_create(&w[i].tid, NULL, write_records,
					&w[i]), 0);
	}
	while (atomic_load(&writers_done) < NWRITERS)
		take(how, chan, its, fd, stream, len);
	for (i = 0; i < NWRITERS; i++) {
		CHECK_EQ(pthread_join(w[i].tid, NULL), 0);
		refused += w[i].refused;
	}
	CHECK_EQ(grb_channel_finalize(chan), 0);
	while (!take(how, chan, its, fd, stream, len))
		;
	close_its(how, chan, its);
	if (how >= H_WRITE)
		mark_file(&tc, cfg, fd);
	for (i = 0; i < nbufs && how <= H_CHAN_READ; i++) {
		mark_stream(&tc, stream[i], len[i]);
		free(stream[i]);
	}
	CHECK(tc.records_read > 0);
	if (tc_final_check(&tc, chan, refused) != 0) {
		fprintf(stderr, "test_outputs_checker: %s, %s failed\n",
			tc_variant_name(variant), how_name[how]);
		exit(1);
	}
	tc_checker_free(&tc);
	grb_channel_destroy(chan);
	close(fd);
	free(stream);
	free(len);
	free(its);
}

/* ---- the basic client's decoder on files ------------------------------ */

/*
 * A basic channel written to a file with grb_buf_write() decodes, without
 * the channel, to the records written: payloads, count per sub-buffer,
 * timestamps rising inside [ts_begin, ts_end].
 */
static void test_basic_file(void)
{
	struct grb_basic_attr attr = { "decode", SB, 8, GRB_ALLOC_PER_CHANNEL,
				       GRB_MODE_DISCARD, 1 };
	const size_t hsize = sizeof(struct grb_basic_subbuf_header);
	struct grb_basic_subbuf_header h;
	struct grb_basic_event ev;
	unsigned char pay[64], *p;
	size_t at = 0, off, next, poff, total;
	unsigned int i, n = 0, j;
	uint64_t prev, bytes;
	struct grb_basic *b;
	char path[] = "/tmp/grb-decode-XXXXXX";
	int fd = mkostemp(path, O_CLOEXEC);

	CHECK(fd >= 0);
	unlink(path);
	CHECK_EQ(grb_basic_create(&attr, &b), 0);
	for (i = 0; i < NREC; i++) {
		for (j = 0; j < plen(i); j++)
			pay[j] = pbyte(i, j);
		CHECK_EQ(grb_basic_write(b, pay, plen(i)), 0);
	}
	CHECK_EQ(grb_basic_finalize(b), 0);
	CHECK_EQ(grb_buf_write(grb_channel_buf(grb_basic_channel(b), 0), fd,
			       0, &bytes), 0);
	total = (size_t)lseek(fd, 0, SEEK_END);
	CHECK_U64(total, bytes);
	p = malloc(total);
	CHECK(p != NULL);
	CHECK_EQ(pread(fd, p, total, 0), (ssize_t)total);
	while (at < total) {
		CHECK(total - at >= hsize);
		memcpy(&h, p + at, hsize);
		CHECK(h.data_size >= hsize && h.data_size <= total - at);
		prev = 0;
		for (off = hsize, j = 0; off < h.data_size; off = next, j++) {
			CHECK_EQ(grb_basic_decode(p + at, h.data_size, off,
						  prev, &ev, &poff, &next), 0);
			CHECK_U64(ev.len, plen(n));
			for (i = 0; i < ev.len; i++)
				CHECK_EQ(p[at + poff + i], pbyte(n, i));
			CHECK(ev.timestamp >= prev &&
			      ev.timestamp >= h.ts_begin &&
			      ev.timestamp <= h.ts_end);
			CHECK_EQ(ev.cpu, h.cpu);
			prev = ev.timestamp;
			n++;
		}
		CHECK_EQ(grb_basic_decode(p + at, h.data_size, off, prev, &ev,
					  NULL, &next), -ENODATA);
		CHECK_U64(j, h.records);
		at += h.data_size;
	}
	CHECK_EQ(n, NREC);
	free(p);
	close(fd);
	grb_basic_destroy(b);
}

/* Put a basic record (the format grb/basic.h draws) at p; its length. */
static size_t basic_rec(unsigned char *p, uint32_t len, int full, uint64_t ts)
{
	uint32_t word = len | (full ? UINT32_C(0x80000000) : 0);
	uint32_t low = (uint32_t)ts;

	memcpy(p, &word, 4);
	if (full)
		memcpy(p + 4, &ts, 8);
	else
		memcpy(p + 4, &low, 4);
	memset(p + (full ? 12 : 8), 0xab, len);
	return (full ? 12 : 8) + ((len + 3) & ~3u);
}

/* Timestamps rebuilt across a wrap of the low 32 bits, and every errno,
 * on bytes made by hand. */
static void test_basic_decode_errors(void)
{
	const size_t hsize = sizeof(struct grb_basic_subbuf_header);
	struct grb_basic_subbuf_header h = { .magic = GRB_BASIC_MAGIC,
					     .cpu = 3 };
	uint64_t t0 = UINT64_C(0x1fffffff0);
	unsigned char sb[256];
	struct grb_basic_event ev;
	size_t end, off2, off3, next, poff;

	memcpy(sb, &h, hsize);
	off2 = hsize + basic_rec(sb + hsize, 5, 1, t0);
	off3 = off2 + basic_rec(sb + off2, 0, 0, t0 + 0x20);    /* wraps */
	end = off3 + basic_rec(sb + off3, 1, 0, t0 + 0x30);
	CHECK_EQ(grb_basic_decode(sb, end, hsize, 0, &ev, &poff, &next), 0);
	CHECK_U64(ev.timestamp, t0);
	CHECK_U64(ev.len, 5);
	CHECK_EQ(ev.cpu, 3);
	CHECK_U64(poff, hsize + 12);
	CHECK_U64(next, hsize + 12 + 5);
	CHECK_EQ(grb_basic_decode(sb, end, next, t0, &ev, &poff, &next), 0);
	CHECK_U64(ev.timestamp, t0 + 0x20);
	CHECK_U64(ev.len, 0);
	CHECK_U64(next, off3);
	CHECK_EQ(grb_basic_decode(sb, end, off3, t0 + 0x20, &ev, NULL,
				  &next), 0);
	CHECK_U64(ev.timestamp, t0 + 0x30);
	CHECK_EQ(grb_basic_decode(sb, end, end, 0, &ev, NULL, &next),
		 -ENODATA);
	CHECK_EQ(grb_basic_decode(NULL, end, hsize, 0, &ev, NULL, &next),
		 -EINVAL);
	CHECK_EQ(grb_basic_decode(sb, end, hsize, 0, NULL, NULL, &next),
		 -EINVAL);
	CHECK_EQ(grb_basic_decode(sb, end, hsize, 0, &ev, NULL, NULL),
		 -EINVAL);
	CHECK_EQ(grb_basic_decode(sb, hsize - 1, hsize, 0, &ev, NULL, &next),
		 -EINVAL);
	CHECK_EQ(grb_basic_decode(sb, end, hsize - 4, 0, &ev, NULL, &next),
		 -EINVAL);
	/* A compressed timestamp needs the previous one. */
	CHECK_EQ(grb_basic_decode(sb, end, off2, 0, &ev, NULL, &next),
		 -EBADMSG);
	/* Cut inside the payload, and inside a record header. */
	CHECK_EQ(grb_basic_decode(sb, hsize + 14, hsize, 0, &ev, NULL, &next),
		 -EBADMSG);
	CHECK_EQ(grb_basic_decode(sb, hsize + 6, hsize, 0, &ev, NULL, &next),
		 -EBADMSG);
	sb[0] ^= 1;
	CHECK_EQ(grb_basic_decode(sb, end, hsize, 0, &ev, NULL, &next),
		 -EBADMSG);
}

int main(void)
{
	int variant;
	enum how how;

	test_read_buf(&oc_disc);
	test_read_buf(&oc_ovw);
	test_read_snapshot();
	test_read_chan();
	test_read_then_next(0);
	test_read_then_next(1);
	test_read_errors();
	test_basic_file();
	test_basic_decode_errors();
	for (variant = 0; variant < TV_COUNT; variant++)
		for (how = H_BUF_READ; how <= H_SPLICE; how++)
			test_exactly_once(variant, how);
	printf("test_outputs_checker: passed\n");
	return 0;
}
