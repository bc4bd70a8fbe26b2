/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_merge_many.c - the channel merge (grb/iter.h) over more
 * buffers than this machine may have CPUs: the test build gives per-CPU
 * channels 3, 7 and 16 buffers (grb_test_set_nr_cpus()), and one writer
 * fills each buffer in turn, pretending to run on its CPU
 * (grb_test_set_cpu(); a configuration without the per-CPU path, so no
 * section runs for a CPU that does not exist).
 *
 * Each buffer's records carry timestamps that grow by 0-3 at random, so
 * the buffers interleave unpredictably and often tie.  After finalize,
 * grb_chan_iter_next() must return every record once, in (timestamp,
 * buffer index) order and, within a buffer, in position order; none
 * flagged LATE, nothing lost.  On a machine of two CPUs the other tests
 * merge two buffers, a heap without a second level: this one reaches
 * every level of the heap's sift.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "grb_test_hooks.h"
#include "lenrec.h"
#include "../stress/stress_util.h"
#include "grb/grb.h"
#include "grb/iter.h"

#define SB 4096
#define NSB 32
#define PER_BUF 1500

static const struct grb_config cpu_disc = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 16,
	{ .clock_read = lenrec_clock, .record_header_size = lenrec_header,
	  .record_decode = lenrec_decode },
	0,
};

/* The stress tests' generator, fixed seed: the same run every time. */
static uint64_t rng = 0x9e3779b97f4a7c15u;

/* A record whose payload is @tag (8 bytes), stamped @ts, in the buffer
 * of the CPU this thread pretends to run on. */
static void put(struct grb_channel *chan, uint64_t tag, uint64_t ts)
{
	struct grb_ctx ctx = GRB_CTX_INIT(8, 4);
	uint32_t word = 8, low;

	lenrec_now = ts;
	CHECK_EQ(grb_reserve(&cpu_disc, chan, &ctx), 0);
	if (ctx.rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		word |= LENREC_FULL;
		grb_write(&cpu_disc, &ctx, &word, 4);
		grb_write(&cpu_disc, &ctx, &ctx.timestamp, 8);
	} else {
		low = (uint32_t)(ctx.timestamp & 0xffff);
		grb_write(&cpu_disc, &ctx, &word, 4);
		grb_write(&cpu_disc, &ctx, &low, 4);
	}
	grb_write(&cpu_disc, &ctx, &tag, 8);
	grb_commit(&cpu_disc, &ctx);
}

static void run(unsigned int nbufs)
{
	struct grb_channel_attr attr = { "merge_many", SB, NSB, NULL };
	struct grb_chan_iter_stats st;
	struct grb_channel *chan;
	struct grb_chan_iter *ci;
	struct grb_iter_record r;
	uint64_t *next_j, ts, tag, prev_ts = 0, n = 0, ties = 0, switches = 0;
	unsigned int b, prev_b = 0, j;
	int ret;

	grb_test_set_nr_cpus((int)nbufs);
	CHECK_EQ(grb_channel_create(&cpu_disc, &attr, &chan), 0);
	grb_test_set_nr_cpus(0);
	CHECK_EQ(grb_channel_nr_bufs(chan), nbufs);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	/* Every buffer starts at the same time and grows by 0-3 per
	 * record: the merged order switches buffers at random. */
	for (b = 0; b < nbufs; b++) {
		grb_test_set_cpu((int)b);
		ts = UINT64_C(5) << 40;
		for (j = 0; j < PER_BUF; j++) {
			ts += stress_rand(&rng) % 4;
			put(chan, (uint64_t)b << 32 | j, ts);
		}
	}
	grb_test_set_cpu(-1);
	CHECK_EQ(grb_channel_finalize(chan), 0);

	next_j = (uint64_t *)calloc(nbufs, sizeof(*next_j));
	CHECK(next_j != NULL);
	while ((ret = grb_chan_iter_next(ci, &r)) == 0) {
		CHECK_EQ(r.payload_len, 8);
		memcpy(&tag, r.payload, 8);
		b = (unsigned int)(tag >> 32);
		CHECK(b < nbufs);
		CHECK(r.buf == grb_channel_buf(chan, b));
		/* Each buffer's records once, in position order. */
		CHECK_U64(tag & 0xffffffffu, next_j[b]);
		next_j[b]++;
		CHECK_U64(r.lost, 0);
		CHECK(!(r.flags & GRB_ITER_LATE));
		/* (timestamp, buffer index) never goes back. */
		if (n > 0) {
			CHECK(r.timestamp >= prev_ts);
			if (r.timestamp == prev_ts)
				CHECK(b >= prev_b);
			ties += r.timestamp == prev_ts && b != prev_b;
			switches += b != prev_b;
		}
		prev_ts = r.timestamp;
		prev_b = b;
		n++;
	}
	CHECK_EQ(ret, -ENODATA);
	CHECK_U64(n, (uint64_t)nbufs * PER_BUF);
	for (b = 0; b < nbufs; b++)
		CHECK_U64(next_j[b], PER_BUF);
	CHECK_EQ(grb_chan_iter_stats(ci, &st), 0);
	CHECK_U64(st.records, n);
	CHECK_U64(st.late, 0);
	/* The run did interleave and tie (else it proved little). */
	CHECK(switches > n / 4);
	CHECK(ties > 0);
	printf("%2u buffers: %llu records, %llu buffer switches, %llu ties "
	       "across buffers\n", nbufs, (unsigned long long)n,
	       (unsigned long long)switches, (unsigned long long)ties);
	free(next_j);
	grb_chan_iter_destroy(ci);
	grb_channel_destroy(chan);
}

int main(void)
{
	run(3);
	run(7);
	run(16);
	printf("test_merge_many: passed\n");
	return 0;
}
