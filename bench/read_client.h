/* SPDX-License-Identifier: MIT */
/*
 * bench/read_client.h - the grb client of the read-side experiments
 * (bench_read.c, bench_wake.c): a record format with a decoder, so that
 * the iterators can read it, and its write path.
 *
 * Record: a u32 word (bit 31: a full u64 timestamp follows; bits 27-30:
 * payload length in 4-byte words; bits 0-26: the low 27 bits of the
 * timestamp), the optional u64, then the payload: the writer's CPU id (4
 * bytes: 8-byte records, as in the rest of the benchmark) or, for the
 * wake-up runs, the CLOCK_MONOTONIC time read just before the commit (8
 * bytes).  Sub-buffers start with a 64-byte header.  The configurations
 * are static const, so each write path folds as a real client's does.
 */
#ifndef BENCH_READ_CLIENT_H
#define BENCH_READ_CLIENT_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grb/channel.h"
#include "grb/writer.h"

#include "bench.h"
#include "clock.h"
#include "util.h"

#define RD_FULL      (UINT32_C(1) << 31)
#define RD_LEN_SHIFT 27
#define RD_LEN_MASK  UINT32_C(0xf)
#define RD_TS_BITS   27
#define RD_TS_MASK   ((UINT32_C(1) << RD_TS_BITS) - 1)

/* Sub-buffer header, 64 bytes: enough to make a written file readable. */
struct rd_header {
	uint32_t magic;
	int32_t cpu;
	uint64_t seq;
	uint64_t ts_begin;
	uint64_t ts_end;
	uint64_t data_size;
	uint64_t records;
	uint64_t spare[2];
};

static inline size_t rd_header_size(const struct grb_config *cfg,
				    size_t offset, size_t *pre,
				    const struct grb_ctx *ctx)
{
	(void)cfg;
	*pre = (0 - offset) & 3;
	if (ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP)
		return *pre + sizeof(uint32_t) + sizeof(uint64_t);
	return *pre + sizeof(uint32_t);
}

static inline size_t rd_sb_size(void)
{
	return sizeof(struct rd_header);
}

static inline void rd_begin(struct grb_buf *buf, void *header,
			    const struct grb_subbuf_info *info)
{
	struct rd_header *h = (struct rd_header *)header;

	(void)buf;
	h->magic = 0x72656164u;   /* "read" */
	h->cpu = info->cpu;
	h->seq = info->seq;
	h->ts_begin = info->timestamp;
}

static inline void rd_end(struct grb_buf *buf, void *header,
			  const struct grb_subbuf_info *info)
{
	struct rd_header *h = (struct rd_header *)header;

	(void)buf;
	h->ts_end = info->timestamp;
	h->data_size = info->data_size;
	h->records = info->records;
}

static inline int rd_decode(const struct grb_config *cfg,
			    const void *subbuf, size_t offset,
			    size_t data_size, struct grb_record *rec)
{
	const unsigned char *p = (const unsigned char *)subbuf;
	size_t at = offset + ((0 - offset) & 3), hl = sizeof(uint32_t), len;
	uint32_t word;

	(void)cfg;
	if (at + sizeof(word) > data_size)
		return -EINVAL;
	memcpy(&word, p + at, sizeof(word));
	rec->rflags = 0;
	rec->timestamp = word & RD_TS_MASK;
	if (word & RD_FULL) {
		if (at + hl + sizeof(uint64_t) > data_size)
			return -EINVAL;
		memcpy(&rec->timestamp, p + at + hl, sizeof(uint64_t));
		rec->rflags = GRB_RFLAG_FULL_TIMESTAMP;
		hl += sizeof(uint64_t);
	}
	len = ((word >> RD_LEN_SHIFT) & RD_LEN_MASK) * 4;
	if (len == 0 || len > data_size - at - hl)
		return -EINVAL;
	rec->offset = at;
	rec->header_len = hl;
	rec->payload_off = at + hl;
	rec->payload_len = len;
	rec->next = at + hl + len;
	return 0;
}

#define RD_CB {                               \
	.clock_read = bench_clock_mono,        \
	.record_header_size = rd_header_size,  \
	.subbuf_header_size = rd_sb_size,      \
	.buffer_begin = rd_begin,              \
	.buffer_end = rd_end,                  \
	.record_decode = rd_decode,            \
}

static const struct grb_config cfg_cpu_dc = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, RD_TS_BITS, RD_CB, 0
};
static const struct grb_config cfg_cpu_ow = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, RD_TS_BITS, RD_CB, 0
};
static const struct grb_config cfg_one_dc = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, RD_TS_BITS, RD_CB, 0
};

/*
 * One record; @stamp: the payload is the time read just before the
 * commit (8 bytes), else the writer's CPU id (4 bytes).
 */
BENCH_INLINE int rd_write(const struct grb_config *cfg,
			  struct grb_channel *chan, int stamp)
{
	size_t len = stamp ? sizeof(uint64_t) : sizeof(uint32_t);
	uint32_t word = (uint32_t)(len / 4) << RD_LEN_SHIFT, cpu;
	struct grb_ctx ctx;
	uint64_t now;
	int ret;

	grb_ctx_init(&ctx, len, 4);
	ret = grb_reserve(cfg, chan, &ctx);
	if (ret)
		return ret;
	word |= (uint32_t)ctx.timestamp & RD_TS_MASK;
	if (ctx.rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		word |= RD_FULL;
		grb_write(cfg, &ctx, &word, sizeof(word));
		grb_write(cfg, &ctx, &ctx.timestamp, sizeof(uint64_t));
	} else {
		grb_write(cfg, &ctx, &word, sizeof(word));
	}
	if (stamp) {
		now = bench_now_ns();
		grb_write(cfg, &ctx, &now, sizeof(now));
	} else {
		cpu = (uint32_t)ctx.cpu;
		grb_write(cfg, &ctx, &cpu, sizeof(cpu));
	}
	grb_commit(cfg, &ctx);
	return 0;
}

static inline struct grb_channel *rd_chan(const struct grb_config *cfg,
					  size_t subbuf)
{
	struct grb_channel_attr attr = {
		.name = "grb_bench_read",
		.subbuf_size = subbuf,
		.num_subbuf = BENCH_BUF_BYTES / subbuf,
		.priv = NULL,
	};
	struct grb_channel *chan;
	int ret = grb_channel_create(cfg, &attr, &chan);

	if (ret) {
		fprintf(stderr, "grb_bench: grb_channel_create: %s\n",
			grb_strerror(ret));
		exit(1);
	}
	return chan;
}

#endif /* BENCH_READ_CLIENT_H */
