/* SPDX-License-Identifier: MIT */
/*
 * tests/common/tclient.c - the test client's configurations, callbacks
 * and writer.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tclient.h"

static _Atomic uint64_t tc_clock_value;
static _Atomic uint64_t *tc_clock_word = &tc_clock_value;

/* A clock that always moves, in steps that overflow 16 bits every ~66
 * reads, so both compressed and full timestamps occur. */
static uint64_t tc_clock(void)
{
	return atomic_fetch_add(tc_clock_word, 997) + 997;
}

void tc_clock_share(_Atomic uint64_t *word)
{
	tc_clock_word = word ? word : &tc_clock_value;
}

static size_t tc_record_header_size(const struct grb_config *cfg,
				    size_t offset, size_t *pre,
				    const struct grb_ctx *ctx)
{
	(void)cfg;
	*pre = grb_offset_align(offset, 4);
	return *pre + 4 + ((ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP) ? 8 : 4);
}

static size_t tc_subbuf_header_size(void)
{
	return sizeof(struct tc_header);
}

static void tc_buffer_begin(struct grb_buf *buf, void *hdr,
			    const struct grb_subbuf_info *info)
{
	struct tc_header *h = (struct tc_header *)hdr;

	(void)buf;
	h->magic = TC_MAGIC;
	h->cpu = info->cpu;
	h->seq = info->seq;
	h->ts_begin = info->timestamp;
	h->ts_end = 0;
	h->data_size = ~UINT64_C(0);
	h->records = ~UINT64_C(0);
	h->lost = ~UINT64_C(0);
}

static void tc_buffer_end(struct grb_buf *buf, void *hdr,
			  const struct grb_subbuf_info *info)
{
	struct tc_header *h = (struct tc_header *)hdr;

	(void)buf;
	h->ts_end = info->timestamp;
	h->data_size = info->data_size;
	h->records = info->records;
	h->lost = info->lost;
}

static int tc_record_decode(const struct grb_config *cfg, const void *subbuf,
			    size_t offset, size_t data_size,
			    struct grb_record *rec)
{
	const char *p = (const char *)subbuf;
	size_t at = offset + grb_offset_align(offset, 4);
	uint32_t word, low;

	(void)cfg;
	if (at + 8 > data_size)
		return -EINVAL;
	memcpy(&word, p + at, 4);
	rec->offset = at;
	if (word & TREC_FULL) {
		if (at + 12 > data_size)
			return -EINVAL;
		memcpy(&rec->timestamp, p + at + 4, 8);
		rec->header_len = 12;
		rec->rflags = GRB_RFLAG_FULL_TIMESTAMP;
	} else {
		memcpy(&low, p + at + 4, 4);
		rec->timestamp = low;
		rec->header_len = 8;
		rec->rflags = 0;
	}
	rec->payload_off = at + rec->header_len;
	rec->payload_len = word & TREC_LEN_MASK;
	if (rec->payload_len > data_size - rec->payload_off)
		return -EINVAL;
	rec->next = rec->payload_off + rec->payload_len;
	return 0;
}

#define TC_CB() {                                        \
	.clock_read = tc_clock,                              \
	.record_header_size = tc_record_header_size,         \
	.subbuf_header_size = tc_subbuf_header_size,         \
	.buffer_begin = tc_buffer_begin,                     \
	.buffer_end = tc_buffer_end,                         \
	.record_decode = tc_record_decode,                   \
}

/* pflags: the per-CPU rows' flags; the private ones ask for the per-CPU
 * (rseq) write path, which a channel falls back from where it cannot
 * have it (grb/config.h). */
#define TC_CONFIGS(flags, pflags)                                              \
	{ GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 64, TC_CB(), pflags },        \
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 64, TC_CB(), flags },     \
	{ GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 64, TC_CB(), pflags },          \
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 64, TC_CB(), flags },       \
	{ GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, TC_TS_BITS, TC_CB(),          \
	  pflags },                                                            \
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, TC_TS_BITS, TC_CB(),      \
	  flags },                                                             \
	{ GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, TC_TS_BITS, TC_CB(), pflags },  \
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, TC_TS_BITS, TC_CB(), flags }

static const struct grb_config tc_configs[2 * TV_COUNT] = {
	TC_CONFIGS(0, GRB_CONFIG_SYNC_PER_CPU),
	TC_CONFIGS(GRB_CONFIG_SHARED, GRB_CONFIG_SHARED),
};

const struct grb_config *tc_config(int variant)
{
	return &tc_configs[variant & (2 * TV_COUNT - 1)];
}

const char *tc_variant_name(int variant)
{
	static const char *names[TV_COUNT] = {
		"per-cpu/overwrite/full-ts", "per-channel/overwrite/full-ts",
		"per-cpu/discard/full-ts", "per-channel/discard/full-ts",
		"per-cpu/overwrite/compressed-ts",
		"per-channel/overwrite/compressed-ts",
		"per-cpu/discard/compressed-ts",
		"per-channel/discard/compressed-ts",
	};
	return names[variant & (TV_COUNT - 1)];
}

uint32_t tc_checksum(const struct trec *r, const unsigned char *extra);

/* FNV-1a over the tag fields and the extra bytes. */
uint32_t tc_checksum(const struct trec *r, const unsigned char *extra)
{
	uint32_t h = 2166136261u;
	const unsigned char *p = (const unsigned char *)r;
	size_t i;

	for (i = 0; i < offsetof(struct trec, csum); i++)
		h = (h ^ p[i]) * 16777619u;
	for (i = 0; i < r->extra; i++)
		h = (h ^ extra[i]) * 16777619u;
	return h;
}

/*
 * Which records go through grb_write_record(): TC_ONE_CALL=0 none, 1 all,
 * unset or anything else those of odd sequence numbers.  Read once, at
 * load time, so that writers in signal handlers never call getenv().
 */
static int tc_one_call_mode = 2;

__attribute__((constructor)) static void tc_one_call_init(void)
{
	const char *e = getenv("TC_ONE_CALL");

	if (e && strcmp(e, "0") == 0)
		tc_one_call_mode = 0;
	else if (e && strcmp(e, "1") == 0)
		tc_one_call_mode = 1;
}

static inline int tc_one_call(uint32_t seq)
{
	return tc_one_call_mode == 2 ? (int)(seq & 1) : tc_one_call_mode;
}

/* One record's contents, built before or inside its reservation. */
struct tc_rec_in {
	uint32_t writer, seq, extra;
	tc_hook_fn hook;
	void *arg;
};

/*
 * Write a tagged record into a reserved context: header, alignment, the
 * hook, payload.  Both ways of writing end here, so a record reads the
 * same whichever wrote it.
 */
static GRB_ALWAYS_INLINE void tc_fill_in(const struct grb_config *cfg,
					 struct grb_ctx *ctx,
					 const struct tc_rec_in *in)
{
	unsigned char bytes[256];
	struct trec r;
	uint32_t word, low, i;

	r.writer = in->writer;
	r.seq = in->seq;
	r.ts = ctx->timestamp;
	r.extra = in->extra;
	for (i = 0; i < in->extra; i++)
		bytes[i] = (unsigned char)(in->seq * 31 + i);
	r.csum = tc_checksum(&r, bytes);
	word = (uint32_t)ctx->data_size;
	if (ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		word |= TREC_FULL;
		grb_write(cfg, ctx, &word, 4);
		grb_write(cfg, ctx, &ctx->timestamp, 8);
	} else {
		low = (uint32_t)(ctx->timestamp & ((1u << TC_TS_BITS) - 1));
		grb_write(cfg, ctx, &word, 4);
		grb_write(cfg, ctx, &low, 4);
	}
	grb_ctx_align(cfg, ctx, 4);
	/* Header written, payload not yet: a commit published too early, or
	 * a slot reused while its writer sits here, shows as a torn record. */
	if (in->hook)
		in->hook(in->arg, ctx);
	grb_write(cfg, ctx, &r, sizeof(r));
	grb_write(cfg, ctx, bytes, in->extra);
}

/* grb_write_record()'s fill: the record described by client_priv. */
static GRB_ALWAYS_INLINE void tc_fill(const struct grb_config *cfg,
				      struct grb_ctx *ctx)
{
	tc_fill_in(cfg, ctx, (const struct tc_rec_in *)ctx->client_priv);
}

/*
 * The writer of tc_write() and tc_write_hook().  Records of odd sequence
 * numbers are written with grb_write_record(), the others with
 * grb_reserve() and grb_commit() (TC_ONE_CALL in the environment: 0, all
 * with the three calls; 1, all with the one), so that every test that
 * writes through the test client runs both.
 */
static GRB_ALWAYS_INLINE int tc_write_cfg_hook(const struct grb_config *cfg,
					       struct grb_channel *chan,
					       uint32_t writer, uint32_t seq,
					       uint32_t extra, tc_hook_fn hook,
					       void *arg)
{
	struct grb_ctx ctx;
	struct tc_rec_in in;
	int ret;

	if (extra > 256)
		extra = 256;
	in.writer = writer;
	in.seq = seq;
	in.extra = extra;
	in.hook = hook;
	in.arg = arg;
	if (tc_one_call(seq))
		return grb_write_record(cfg, chan, sizeof(struct trec) + extra,
					4, &in, tc_fill);
	grb_ctx_init(&ctx, sizeof(struct trec) + extra, 4);
	ret = grb_reserve(cfg, chan, &ctx);
	if (ret)
		return ret;
	tc_fill_in(cfg, &ctx, &in);
	grb_commit(cfg, &ctx);
	return 0;
}

/* With a constant NULL hook the call folds away: tc_write()'s plain path. */
static GRB_ALWAYS_INLINE int tc_write_cfg(const struct grb_config *cfg,
					  struct grb_channel *chan,
					  uint32_t writer, uint32_t seq,
					  uint32_t extra)
{
	return tc_write_cfg_hook(cfg, chan, writer, seq, extra, NULL, NULL);
}

/* One specialised fast path per configuration: a case per index. */
#define TC_CASES(call)                                                     \
	case 0: return call(0);   case 1: return call(1);                  \
	case 2: return call(2);   case 3: return call(3);                  \
	case 4: return call(4);   case 5: return call(5);                  \
	case 6: return call(6);   case 7: return call(7);                  \
	case 8: return call(8);   case 9: return call(9);                  \
	case 10: return call(10); case 11: return call(11);                \
	case 12: return call(12); case 13: return call(13);                \
	case 14: return call(14); default: return call(15)

int tc_write(const struct grb_config *cfg, struct grb_channel *chan,
	     uint32_t writer, uint32_t seq, uint32_t extra)
{
#define TC_WRITE(i) tc_write_cfg(&tc_configs[i], chan, writer, seq, extra)
	switch (cfg - tc_configs) {
	TC_CASES(TC_WRITE);
	}
#undef TC_WRITE
}

int tc_write_hook(const struct grb_config *cfg, struct grb_channel *chan,
		  uint32_t writer, uint32_t seq, uint32_t extra,
		  tc_hook_fn hook, void *arg)
{
#define TC_WRITE_HOOK(i) \
	tc_write_cfg_hook(&tc_configs[i], chan, writer, seq, extra, hook, arg)
	switch (cfg - tc_configs) {
	TC_CASES(TC_WRITE_HOOK);
	}
#undef TC_WRITE_HOOK
}

/* The header write shared by tc_reserve(): as tc_write_cfg_hook() does. */
int tc_reserve(const struct grb_config *cfg, struct grb_channel *chan,
	       uint32_t writer, uint32_t seq, uint32_t extra,
	       struct tc_pending *p)
{
	uint32_t word, low, i;
	int ret;

	if (extra > sizeof(p->bytes))
		extra = sizeof(p->bytes);
	p->cfg = cfg;
	p->ctx = (struct grb_ctx)GRB_CTX_INIT(sizeof(struct trec) + extra, 4);
	ret = grb_reserve(cfg, chan, &p->ctx);
	if (ret)
		return ret;
	p->r.writer = writer;
	p->r.seq = seq;
	p->r.ts = p->ctx.timestamp;
	p->r.extra = extra;
	for (i = 0; i < extra; i++)
		p->bytes[i] = (unsigned char)(seq * 31 + i);
	word = (uint32_t)p->ctx.data_size;
	if (p->ctx.rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		word |= TREC_FULL;
		grb_write(cfg, &p->ctx, &word, 4);
		grb_write(cfg, &p->ctx, &p->ctx.timestamp, 8);
	} else {
		low = (uint32_t)(p->ctx.timestamp & ((1u << TC_TS_BITS) - 1));
		grb_write(cfg, &p->ctx, &word, 4);
		grb_write(cfg, &p->ctx, &low, 4);
	}
	grb_ctx_align(cfg, &p->ctx, 4);
	return 0;
}

void tc_finish(struct tc_pending *p)
{
	p->r.csum = tc_checksum(&p->r, p->bytes);
	grb_write(p->cfg, &p->ctx, &p->r, sizeof(p->r));
	grb_write(p->cfg, &p->ctx, p->bytes, p->r.extra);
	grb_commit(p->cfg, &p->ctx);
}

int tc_abandon(struct tc_pending *p)
{
	/* Part of the payload is written first, as a writer that changes
	 * its mind half way would: those bytes must never be read. */
	grb_write(p->cfg, &p->ctx, &p->r, sizeof(p->r) / 2);
	p->ctx.wptr -= sizeof(p->r) / 2;
	if (grb_try_discard_reserve(p->cfg, &p->ctx) == 0)
		return 1;
	p->r.writer = TC_SKIP_WRITER;
	tc_finish(p);
	return 0;
}
