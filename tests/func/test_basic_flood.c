/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_basic_flood.c - the basic client (grb/basic.h) in all
 * eight variants (tests/common/basic_rig.h), under load: several threads
 * write tagged records while the main thread consumes, once with a small
 * buffer (overwrite, loss) and once with a roomy one; after finalize
 * every record read is intact, read once, in per-writer order and with
 * non-decreasing, plausible timestamps inside its buffer, and the
 * counters add up exactly (written == consumed + overruns + dropped +
 * entries, failed writes == lost).  The single-threaded checks are
 * test_basic.c's, the raw sub-buffers test_basic_raw.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic_rig.h"
#include "check.h"
#include "grb/basic.h"
#include "grb/channel.h"
#include "grb/validate.h"

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

int main(void)
{
	int v;

	for (v = 0; v < V_COUNT; v++) {
		test_flood(v, PAGE, 4);          /* small: overwrite, loss */
		test_flood(v, 16 * PAGE, 8);     /* roomy */
	}
	printf("test_basic_flood: all variants passed\n");
	return 0;
}
