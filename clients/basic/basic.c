/* SPDX-License-Identifier: MIT */
/*
 * clients/basic/basic.c - the basic client: its configurations,
 * sub-buffer header callbacks, creation and write side.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "basic_internal.h"
#include "grb/shm.h"

static uint64_t basic_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t basic_record_header_size(const struct grb_config *cfg,
				       size_t offset, size_t *pre,
				       const struct grb_ctx *ctx)
{
	(void)cfg;
	*pre = grb_offset_align(offset, GRB_BASIC_ALIGN);
	return *pre + sizeof(uint32_t) +
		((ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP) ?
		 sizeof(uint64_t) : sizeof(uint32_t));
}

static size_t basic_subbuf_header_size(void)
{
	return sizeof(struct grb_basic_subbuf_header);
}

static void basic_buffer_begin(struct grb_buf *buf, void *header,
			       const struct grb_subbuf_info *info)
{
	struct grb_basic_subbuf_header *h =
		(struct grb_basic_subbuf_header *)header;

	(void)buf;
	h->magic = GRB_BASIC_MAGIC;
	h->cpu = info->cpu;
	h->seq = info->seq;
	h->ts_begin = info->timestamp;
	/* Sentinels until delivery patches them. */
	h->ts_end = 0;
	h->data_size = ~UINT64_C(0);
	h->records = ~UINT64_C(0);
}

static void basic_buffer_end(struct grb_buf *buf, void *header,
			     const struct grb_subbuf_info *info)
{
	struct grb_basic_subbuf_header *h =
		(struct grb_basic_subbuf_header *)header;

	(void)buf;
	h->ts_end = info->timestamp;
	h->data_size = info->data_size;
	h->records = info->records;
	h->lost = info->lost;
	h->overwritten = info->overwritten;
}

int grb__basic_record_decode(const struct grb_config *cfg, const void *subbuf,
			     size_t offset, size_t data_size,
			     struct grb_record *rec);

/*
 * Padding over a dead writer's record (grb/recover.h): at the aligned
 * start, a length word no record can have (a payload of 2^31 - 1 bytes
 * never fits a sub-buffer), then the span from there to the end.  A
 * slot is at least its padding plus two words, so it always fits.
 */
static void basic_record_pad(const struct grb_config *cfg, void *at,
			     size_t len)
{
	size_t pre = grb_offset_align((uintptr_t)at, GRB_BASIC_ALIGN);
	uint32_t w[2] = { GRB_BASIC_PAD_WORD, (uint32_t)(len - pre) };

	(void)cfg;
	if (len < pre + sizeof(w))
		return;
	memcpy((char *)at + pre, w, sizeof(w));
}

#define BASIC_CB {                                 \
	.clock_read = basic_clock,                            \
	.record_header_size = basic_record_header_size,       \
	.subbuf_header_size = basic_subbuf_header_size,       \
	.buffer_begin = basic_buffer_begin,                   \
	.buffer_end = basic_buffer_end,                       \
	.record_decode = grb__basic_record_decode,            \
	.record_pad = basic_record_pad,                       \
}

/* Index: shared * 8 + alloc * 4 + mode * 2 + compress.  The shared ones
 * journal their reservations (GRB_CONFIG_SHARED); the private ones do
 * not pay for it. */
#define BASIC_CONFIGS(flags, pflags)                                           \
	{ GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 64, BASIC_CB, pflags },       \
	{ GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 32, BASIC_CB, pflags },       \
	{ GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 64, BASIC_CB, pflags },         \
	{ GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 32, BASIC_CB, pflags },         \
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 64, BASIC_CB, flags },    \
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 32, BASIC_CB, flags },    \
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 64, BASIC_CB, flags },      \
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 32, BASIC_CB, flags }

/* Private per-CPU channels ask for the per-CPU (rseq) write path, which
 * a channel falls back from where it cannot have it (grb/config.h). */
static const struct grb_config basic_configs[16] = {
	BASIC_CONFIGS(0, GRB_CONFIG_SYNC_PER_CPU),
	BASIC_CONFIGS(GRB_CONFIG_SHARED, GRB_CONFIG_SHARED),
};

const struct grb_config *grb__basic_config(enum grb_alloc alloc,
					   enum grb_mode mode, int compress,
					   int shared)
{
	return &basic_configs[(shared != 0) * 8 +
			      (alloc == GRB_ALLOC_PER_CHANNEL) * 4 +
			      (mode == GRB_MODE_DISCARD) * 2 + (compress != 0)];
}

const struct grb_config *grb_basic_config(enum grb_alloc alloc,
					  enum grb_mode mode,
					  int compress_timestamps)
{
	if ((alloc != GRB_ALLOC_PER_CPU && alloc != GRB_ALLOC_PER_CHANNEL) ||
	    (mode != GRB_MODE_OVERWRITE && mode != GRB_MODE_DISCARD))
		return NULL;
	return grb__basic_config(alloc, mode, compress_timestamps, 1);
}

static int basic_create(const struct grb_basic_attr *attr,
			const struct grb_shm_attr *sattr, int shared,
			struct grb_basic **out);

/* One constant configuration per case, so each inlines its own path. */
#define BASIC_CASES(call)                                                  \
	case 0: return call(0);   case 1: return call(1);                  \
	case 2: return call(2);   case 3: return call(3);                  \
	case 4: return call(4);   case 5: return call(5);                  \
	case 6: return call(6);   case 7: return call(7);                  \
	case 8: return call(8);   case 9: return call(9);                  \
	case 10: return call(10); case 11: return call(11);                \
	case 12: return call(12); case 13: return call(13);                \
	case 14: return call(14); default: return call(15)

int grb_basic_create(const struct grb_basic_attr *attr, struct grb_basic **out)
{
	return basic_create(attr, NULL, 0, out);
}

int grb_basic_create_shared(const struct grb_basic_attr *attr,
			    const struct grb_shm_attr *sattr,
			    struct grb_basic **out)
{
	return basic_create(attr, sattr, 1, out);
}

static int basic_create(const struct grb_basic_attr *attr,
			const struct grb_shm_attr *sattr, int shared,
			struct grb_basic **out)
{
	struct grb_shm_attr sa = { GRB_BASIC_CLIENT, NULL, -1 };
	struct grb_channel_attr cattr;
	struct grb_basic *b;
	unsigned int i;
	int ret;

	if (!attr || !out)
		return -EINVAL;
	if ((attr->alloc != GRB_ALLOC_PER_CPU &&
	     attr->alloc != GRB_ALLOC_PER_CHANNEL) ||
	    (attr->mode != GRB_MODE_OVERWRITE &&
	     attr->mode != GRB_MODE_DISCARD))
		return -EINVAL;
	b = (struct grb_basic *)calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->cfg = grb__basic_config(attr->alloc, attr->mode,
				   attr->compress_timestamps, shared);
	memset(&cattr, 0, sizeof(cattr));
	cattr.name = attr->name;
	cattr.subbuf_size = attr->subbuf_size;
	cattr.num_subbuf = attr->num_subbuf;
	cattr.priv = b;
	if (shared && sattr) {
		sa.dir = sattr->dir;
		sa.gid = sattr->gid;
	}
	ret = shared ? grb_channel_create_shared(b->cfg, &cattr, &sa, &b->chan)
		: grb_channel_create(b->cfg, &cattr, &b->chan);
	if (ret)
		goto fail;
	b->cursors = (struct grb_basic_cursor *)calloc(
		grb_channel_nr_bufs(b->chan), sizeof(*b->cursors));
	if (!b->cursors) {
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < grb_channel_nr_bufs(b->chan); i++) {
		b->cursors[i].live_pos = UINT64_MAX;
		/* A shared channel's reader is the consumer's. */
		ret = shared ? 0 : grb_reader_open(grb_channel_buf(b->chan, i));
		if (ret)
			goto fail;
	}
	b->external_reader = shared;
	*out = b;
	return 0;
fail:
	grb_channel_destroy(b->chan);
	free(b->cursors);
	free(b);
	return ret;
}

void grb_basic_destroy(struct grb_basic *b)
{
	if (!b)
		return;
	grb_channel_destroy(b->chan);
	free(b->cursors);
	free(b);
}

/*
 * What grb_basic_wctx.opaque holds: the engine's reservation and the
 * configuration that made it.  may_alias: it lives in a byte array.
 */
struct basic_wstate {
	struct grb_ctx ctx;
	const struct grb_config *cfg;
} __attribute__((may_alias));

_Static_assert(sizeof(struct basic_wstate) <= GRB_BASIC_WCTX_OPAQUE,
	       "grb_basic_wctx.opaque is too small for the engine context");
_Static_assert(_Alignof(struct basic_wstate) <= _Alignof(uint64_t),
	       "grb_basic_wctx.opaque is not aligned enough");

static struct basic_wstate *wstate(struct grb_basic_wctx *w)
{
	return (struct basic_wstate *)(void *)w->opaque.bytes;
}

/* The record header (the payload's length, then the timestamp, whole or
 * its low 32 bits) at the cursor of a reserved context. */
static GRB_ALWAYS_INLINE void basic_put_header(const struct grb_config *cfg,
					       struct grb_ctx *ctx, size_t len)
{
	uint32_t word = (uint32_t)len;

	if (ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		word |= GRB_BASIC_FULL_TS;
		grb_write(cfg, ctx, &word, sizeof(word));
		grb_write(cfg, ctx, &ctx->timestamp, sizeof(uint64_t));
	} else {
		uint32_t low = (uint32_t)ctx->timestamp;

		grb_write(cfg, ctx, &word, sizeof(word));
		grb_write(cfg, ctx, &low, sizeof(low));
	}
}

/* The reservation and header write, specialised per configuration. */
static GRB_ALWAYS_INLINE int basic_reserve(const struct grb_config *cfg,
					   struct grb_basic *b, size_t len,
					   struct basic_wstate *st)
{
	struct grb_ctx *ctx = &st->ctx;
	int ret;

	grb_ctx_init(ctx, len, 1);
	st->cfg = cfg;
	ret = grb_reserve(cfg, b->chan, ctx);
	if (ret)
		return ret;
	basic_put_header(cfg, ctx, len);
	return 0;
}

/* What grb_basic_write() copies, for basic_fill() (ctx->client_priv). */
struct basic_copy {
	const void *data;
	size_t len;
};

/* The record header, then the payload, into a reserved context. */
static GRB_ALWAYS_INLINE void basic_fill(const struct grb_config *cfg,
					struct grb_ctx *ctx)
{
	const struct basic_copy *in =
		(const struct basic_copy *)ctx->client_priv;

	basic_put_header(cfg, ctx, in->len);
	if (in->len)
		grb_write(cfg, ctx, in->data, in->len);
}

/* The copying write: one call (grb_write_record()). */
static GRB_ALWAYS_INLINE int basic_write(const struct grb_config *cfg,
					 struct grb_basic *b,
					 const void *data, size_t len)
{
	struct basic_copy in = { data, len };

	return grb_write_record(cfg, b->chan, len, 1, &in, basic_fill);
}

/* The zero-copy reservation: the engine state goes into the opaque area. */
static GRB_ALWAYS_INLINE int basic_reserve_w(const struct grb_config *cfg,
					     struct grb_basic *b, size_t len,
					     struct grb_basic_wctx *w)
{
	struct basic_wstate *st = wstate(w);
	int ret = basic_reserve(cfg, b, len, st);

	if (ret)
		return ret;
	w->data = st->ctx.wptr;
	w->timestamp = st->ctx.timestamp;
	return 0;
}

int grb_basic_write(struct grb_basic *b, const void *data, size_t len)
{
	if (!b || (!data && len) || len > GRB_BASIC_MAX_LEN)
		return -EINVAL;
	/* One constant configuration per case: each inlines its own path. */
	switch (b->cfg - basic_configs) {
#define BASIC_WRITE(i) basic_write(&basic_configs[i], b, data, len)
	BASIC_CASES(BASIC_WRITE);
#undef BASIC_WRITE
	}
}

int grb_basic_reserve(struct grb_basic *b, size_t len,
		      struct grb_basic_wctx *w)
{
	if (!b || !w || len > GRB_BASIC_MAX_LEN)
		return -EINVAL;
	switch (b->cfg - basic_configs) {
#define BASIC_RESERVE(i) basic_reserve_w(&basic_configs[i], b, len, w)
	BASIC_CASES(BASIC_RESERVE);
#undef BASIC_RESERVE
	}
}

void grb_basic_commit(struct grb_basic_wctx *w)
{
	struct basic_wstate *st = wstate(w);

	/* The inline commit reads no configuration field (only delivery,
	 * out of line, does), so it needs no per-variant copy. */
	grb_commit(st->cfg, &st->ctx);
}

int grb_basic_record_disable(struct grb_basic *b)
{
	return b ? grb_channel_record_disable(b->chan) : -EINVAL;
}

int grb_basic_record_enable(struct grb_basic *b)
{
	return b ? grb_channel_record_enable(b->chan) : -EINVAL;
}

int grb_basic_flush(struct grb_basic *b)
{
	return b ? grb_channel_flush(b->chan, GRB_FLUSH_ACTIVE) : -EINVAL;
}

int grb_basic_finalize(struct grb_basic *b)
{
	return b ? grb_channel_finalize(b->chan) : -EINVAL;
}

unsigned int grb_basic_nr_bufs(const struct grb_basic *b)
{
	return b ? grb_channel_nr_bufs(b->chan) : 0;
}

struct grb_channel *grb_basic_channel(struct grb_basic *b)
{
	return b ? b->chan : NULL;
}
