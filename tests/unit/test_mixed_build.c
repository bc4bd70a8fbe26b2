/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_mixed_build.c - a caller compiled without grb's rseq
 * sections (tests/CMakeLists.txt builds this file with GRB_NO_RSEQ_ASM,
 * as another architecture's build or a caller's own choice would) writing
 * to a channel the library put on the per-CPU path.
 *
 * Whether a channel takes that path is the library's decision, made at
 * run time; whether the inline reserve and commit contain the sections is
 * the caller's compile-time one.  Such a caller must send the per-CPU
 * buffer's reservations and commits to the library's slow paths, which
 * follow the buffer's protocol: a commit on the atomic fast path would
 * add to `cc` alone while the library's sections add to `cc_local`, and a
 * sub-buffer closed under an open record (here by a flush) would never be
 * delivered.  Every record must be read back, and every buffer validate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "grb/grb.h"

#include "check.h"

#ifdef GRB_RSEQ_ASM
#error "this test must be compiled without grb's rseq sections"
#endif

#define N 200

static const struct grb_config cfg_dc = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 }, GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config cfg_ow = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 0, { 0 },
	GRB_CONFIG_SYNC_PER_CPU,
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

/* Read every delivered sub-buffer of b: its bytes are the records,
 * 16 bytes of one letter each.  Return: the records read. */
static uint64_t drain(struct grb_buf *b)
{
	struct grb_reader_subbuf sb;
	const unsigned char *p;
	uint64_t n = 0;
	size_t off;

	while (grb_reader_get_next(b) == 0) {
		CHECK_EQ(grb_reader_held(b, &sb), 0);
		CHECK_U64(sb.data_size % 16, 0);
		CHECK_U64(sb.records, sb.data_size / 16);
		p = (const unsigned char *)sb.data;
		for (off = 0; off < sb.data_size; off += 16)
			CHECK(p[off] >= 'a' && p[off] <= 'z' &&
			      memchr(p + off, p[off] ^ 0xff, 16) == NULL &&
			      p[off + 15] == p[off]);
		n += sb.records;
		CHECK_EQ(grb_reader_put_next(b), 0);
	}
	return n;
}

static void run(const struct grb_config *cfg)
{
	struct grb_channel_attr attr = { "mixed", 4096, 4, NULL };
	struct grb_channel *chan;
	struct grb_buf_stats st;
	struct grb_buf *b;
	char msg[160] = "";
	uint64_t read = 0;
	int i;

	pin(0);
	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	printf("%s: write path %d\n", cfg == &cfg_dc ? "discard" : "overwrite",
	       grb_channel_write_path(chan, NULL));
	b = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_reader_open(b), 0);
	for (i = 0; i < N; i++) {
		struct grb_ctx ctx = GRB_CTX_INIT(16, 8);

		CHECK_EQ(grb_reserve(cfg, chan, &ctx), 0);
		CHECK_EQ(ctx.buf, b);
		grb_write_fill(cfg, &ctx, 'a' + i % 26, 16);
		/* Close the sub-buffer under the open record now and then:
		 * only this record's commit can then deliver it. */
		if (i % 7 == 0)
			CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		grb_commit(cfg, &ctx);
		read += drain(b);
	}
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	read += drain(b);
	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.written, N);
	CHECK_U64(read, N);
	CHECK_U64(st.read, N);
	CHECK_EQ(grb_buf_validate(b, msg, sizeof(msg)), 0);
	grb_channel_destroy(chan);
}

int main(void)
{
	run(&cfg_dc);
	run(&cfg_ow);
	printf("test_mixed_build: ok\n");
	return 0;
}
