/* SPDX-License-Identifier: MIT */
/*
 * clients/ctf/ctf.c - the CTF client: its configurations, packet header
 * callbacks, creation, event registration and write side.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf_internal.h"

/* ------------------------------------------------------------------ */
/* Callbacks. */

/*
 * What an emit writes, in ctx->client_priv: the event class for the
 * record header's size, and the payload for the fill functions.  The
 * header's size needs the event alone: ctx->client_priv points at a
 * pointer to it (the first member here), which is all a caller that
 * reserves on a CTF channel itself has to give (the kill tests do).
 */
struct emit_args {
	const struct grb_ctf_event *ev;
	const void *payload;            /* grb_ctf_emit_raw() */
	size_t len;
	const union grb_ctf_value *v;   /* grb_ctf_emit() */
	const size_t *slen;
};

static size_t ctf_record_header_size(const struct grb_config *cfg,
				     size_t offset, size_t *pre,
				     const struct grb_ctx *ctx)
{
	const struct grb_ctf_event *ev =
		*(const struct grb_ctf_event *const *)ctx->client_priv;

	(void)cfg;
	(void)offset;
	*pre = 0;
	return ((ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP) ||
		ev->id >= GRB_CTF_COMPACT_IDS) ? CTF_EXT_HEADER
		: sizeof(uint32_t);
}

static size_t ctf_subbuf_header_size(void)
{
	return sizeof(struct ctf_packet);
}

static uint32_t cpu_of(int cpu)
{
	return cpu < 0 ? 0 : (uint32_t)cpu;
}

/*
 * The parts of a packet header that never change (magic, trace UUID,
 * stream id and instance) are written into every physical sub-buffer
 * once, here, by the creator: so buffer_begin needs no tracer, and a
 * process that attached (a consumer recovering a dead writer's
 * sub-buffer, grb/recover.h) writes correct headers too.
 */
static int ctf_buffer_create(struct grb_buf *buf, void *priv, int cpu)
{
	const struct grb_ctf *t = (const struct grb_ctf *)priv;

	for (uint64_t i = 0; i < buf->nr_phys; i++) {
		struct ctf_packet h;

		memset(&h, 0, sizeof(h));
		h.magic = CTF_MAGIC;
		memcpy(h.uuid, t->types->uuid, sizeof(h.uuid));
		h.stream_instance_id = cpu_of(cpu);
		h.cpu_id = cpu_of(cpu);
		memcpy(buf->data + (i << buf->subbuf_order), &h, sizeof(h));
	}
	return 0;
}

static void ctf_buffer_begin(struct grb_buf *buf, void *header,
			     const struct grb_subbuf_info *info)
{
	struct ctf_packet *h = (struct ctf_packet *)header;

	(void)buf;
	h->magic = CTF_MAGIC;
	h->stream_id = 0;
	h->stream_instance_id = cpu_of(info->cpu);
	h->cpu_id = cpu_of(info->cpu);
	h->timestamp_begin = info->timestamp;
	h->packet_seq_num = info->seq;
	/* Until delivery: an end no reader accepts. */
	h->timestamp_end = 0;
	h->content_size = 0;
	h->packet_size = 0;
}

static void ctf_buffer_end(struct grb_buf *buf, void *header,
			   const struct grb_subbuf_info *info)
{
	struct ctf_packet *h = (struct ctf_packet *)header;

	(void)buf;
	h->timestamp_end = info->timestamp;
	h->packet_seq_num = info->seq;
	/* Packets tile a stream file exactly: a reader writes data_size
	 * bytes (grb_buf_write()), and the padding after them is not in
	 * the file. */
	h->content_size = (uint64_t)info->data_size * 8;
	h->packet_size = (uint64_t)info->data_size * 8;
	h->events_discarded = info->lost;
}

#define CTF_CB(clk) {                                       \
	.clock_read = clk,                                  \
	.record_header_size = ctf_record_header_size,       \
	.subbuf_header_size = ctf_subbuf_header_size,       \
	.buffer_begin = ctf_buffer_begin,                   \
	.buffer_end = ctf_buffer_end,                       \
	.buffer_create = ctf_buffer_create,                 \
	.record_decode = grb__ctf_record_decode,            \
	.record_pad = grb__ctf_pad,                         \
}

/* Index: shared * 8 + clock * 4 + alloc * 2 + mode. */
#define CTF_CONFIGS(clk, flags, pflags)                                        \
	{ GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, CTF_TS_BITS, CTF_CB(clk),     \
	  pflags },                                                            \
	{ GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, CTF_TS_BITS, CTF_CB(clk),       \
	  pflags },                                                            \
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, CTF_TS_BITS, CTF_CB(clk), \
	  flags },                                                             \
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, CTF_TS_BITS, CTF_CB(clk),   \
	  flags }

/* Private per-CPU channels ask for the per-CPU (rseq) write path, which
 * a channel falls back from where it cannot have it (grb/config.h). */
static const struct grb_config ctf_configs[16] = {
	CTF_CONFIGS(grb__ctf_clock_mono, 0, GRB_CONFIG_SYNC_PER_CPU),
	CTF_CONFIGS(grb__ctf_clock_tsc, 0, GRB_CONFIG_SYNC_PER_CPU),
	CTF_CONFIGS(grb__ctf_clock_mono, GRB_CONFIG_SHARED, GRB_CONFIG_SHARED),
	CTF_CONFIGS(grb__ctf_clock_tsc, GRB_CONFIG_SHARED, GRB_CONFIG_SHARED),
};

const struct grb_config *grb__ctf_config(enum grb_alloc alloc,
					 enum grb_mode mode,
					 enum grb_ctf_clock clock, int shared)
{
	return &ctf_configs[(shared != 0) * 8 +
			    (clock == GRB_CTF_CLOCK_TSC) * 4 +
			    (alloc == GRB_ALLOC_PER_CHANNEL) * 2 +
			    (mode == GRB_MODE_DISCARD)];
}

const struct grb_config *grb_ctf_config(enum grb_alloc alloc,
					enum grb_mode mode,
					enum grb_ctf_clock clock)
{
	if ((alloc != GRB_ALLOC_PER_CPU && alloc != GRB_ALLOC_PER_CHANNEL) ||
	    (mode != GRB_MODE_OVERWRITE && mode != GRB_MODE_DISCARD) ||
	    (clock != GRB_CTF_CLOCK_MONOTONIC && clock != GRB_CTF_CLOCK_TSC))
		return NULL;
	return grb__ctf_config(alloc, mode, clock, 1);
}

/* ------------------------------------------------------------------ */
/* Creation. */

static int chan_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 63)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return 0;
	}
	return strcmp(s, ".") && strcmp(s, "..");
}

static void set_hostname(struct grb_ctf *t, const char *h)
{
	char buf[sizeof(t->hostname)];
	size_t i;

	if (!h) {
		if (gethostname(buf, sizeof(buf)))
			strcpy(buf, "unknown");
		buf[sizeof(buf) - 1] = 0;
		h = buf;
	}
	/* Only what needs no escaping in a TSDL string. */
	for (i = 0; h[i] && i < sizeof(t->hostname) - 1; i++) {
		unsigned char c = (unsigned char)h[i];

		t->hostname[i] = (c < 0x20 || c >= 0x7f || c == '"' ||
				  c == '\\') ? '_' : (char)c;
	}
	t->hostname[i] = 0;
}

static int new_uuid(uint8_t u[16])
{
	size_t got = 0;

	while (got < 16) {
		ssize_t n = getrandom(u + got, 16 - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);   /* version 4 */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);   /* RFC 4122 variant */
	return 0;
}

static char *path_join(const char *dir, const char *name, const char *ext)
{
	size_t n = strlen(dir) + strlen(name) + strlen(ext) + 2;
	char *p = (char *)malloc(n);

	if (p)
		snprintf(p, n, "%s/%s%s", dir, name, ext);
	return p;
}

static void free_types(struct grb_ctf *t)
{
	uint32_t nr;

	if (!t->types)
		return;
	/* Forget this tracer's classes before freeing them: a decoder of
	 * the same trace in this process must load them again. */
	nr = atomic_load_explicit(&t->types->nr, memory_order_relaxed);
	atomic_store_explicit(&t->types->nr, 0, memory_order_release);
	for (uint32_t i = 0; i < nr; i++) {
		grb__ctf_event_free(t->types->ev[i]);
		t->types->ev[i] = NULL;
	}
}

static int exists_in(const char *dir, const char *name, const char *ext)
{
	char *p = path_join(dir, name, ext);
	int ret;

	if (!p)
		return -ENOMEM;
	ret = access(p, F_OK) == 0 ? -EEXIST : 0;
	free(p);
	return ret;
}

static int refuse_existing(const struct grb_ctf_attr *attr)
{
	int ret = 0;

	if (attr->trace_dir)
		ret = exists_in(attr->trace_dir, "metadata", "");
	if (!ret && attr->shm_dir)
		ret = exists_in(attr->shm_dir, attr->name, ".metadata");
	return ret;
}

int grb_ctf_create(const struct grb_ctf_attr *attr, struct grb_ctf **out)
{
	struct grb_shm_attr sa = { GRB_CTF_CLIENT, NULL, -1 };
	struct grb_channel_attr cattr;
	struct grb_ctf *t;
	uint8_t uuid[16];
	int ret, shared, wrote_meta = 0;

	if (!attr || !out || !chan_name_ok(attr->name) ||
	    (attr->alloc != GRB_ALLOC_PER_CPU &&
	     attr->alloc != GRB_ALLOC_PER_CHANNEL) ||
	    (attr->mode != GRB_MODE_OVERWRITE &&
	     attr->mode != GRB_MODE_DISCARD) ||
	    (attr->clock != GRB_CTF_CLOCK_MONOTONIC &&
	     attr->clock != GRB_CTF_CLOCK_TSC))
		return -EINVAL;
	shared = attr->shm_dir != NULL;
	t = (struct grb_ctf *)calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->reg_lock, NULL);
	pthread_mutex_init(&t->stats_lock, NULL);
	snprintf(t->name, sizeof(t->name), "%s", attr->name);
	set_hostname(t, attr->hostname);
	t->clock = attr->clock;
	t->flush_period_ns = attr->flush_period_ns ? attr->flush_period_ns
		: 100000000u;
	ret = grb__ctf_clock_calibrate(t);
	if (ret)
		goto fail;
	ret = new_uuid(uuid);
	if (ret)
		goto fail;
	t->types = grb__ctf_types_new(uuid);
	if (!t->types) {
		ret = -ENOMEM;
		goto fail;
	}
	t->cfg = grb__ctf_config(attr->alloc, attr->mode, attr->clock, shared);
	/*
	 * A trace or a shared tracer already there is refused before
	 * anything is written.  Only a first check: one created since is
	 * found by the exclusive creation of its files (buffer files, the
	 * metadata, stream files), and the failure path removes only what
	 * this call made, never another tracer's.
	 */
	ret = refuse_existing(attr);
	if (ret)
		goto fail;
	if (attr->trace_dir) {
		t->trace_dir = strdup(attr->trace_dir);
		if (!t->trace_dir) {
			ret = -ENOMEM;
			goto fail;
		}
		if (mkdir(attr->trace_dir, 0755) == 0)
			t->made_trace_dir = 1;
		else if (errno != EEXIST) {
			ret = -errno;
			goto fail;
		}
	}
	if (shared) {
		t->meta_path = path_join(attr->shm_dir, attr->name, ".metadata");
		if (!t->meta_path) {
			ret = -ENOMEM;
			goto fail;
		}
		sa.dir = attr->shm_dir;
	}
	memset(&cattr, 0, sizeof(cattr));
	cattr.name = attr->name;
	cattr.subbuf_size = attr->subbuf_size;
	cattr.num_subbuf = attr->num_subbuf;
	cattr.priv = t;
	ret = shared ? grb_channel_create_shared(t->cfg, &cattr, &sa, &t->chan)
		: grb_channel_create(t->cfg, &cattr, &t->chan);
	if (ret)
		goto fail;
	ret = grb__ctf_metadata_write(t, 1);
	if (ret)
		goto fail;
	wrote_meta = 1;
	/*
	 * Every stream starts with an empty packet whose events_discarded
	 * is 0: a CTF reader reports the losses of a packet as the
	 * difference from the previous one, and for a first packet has
	 * nothing to take it from (babeltrace2 then says only that events
	 * "may" have been discarded).
	 */
	grb_channel_flush(t->chan, GRB_FLUSH_EMPTY);
	if (t->trace_dir) {
		ret = grb__ctf_output_start(t);
		if (ret)
			goto fail;
	}
	*out = t;
	return 0;
fail:
	grb_channel_destroy(t->chan);
	if (wrote_meta && t->meta_path)
		unlink(t->meta_path);
	if (wrote_meta && t->trace_dir) {
		char *m = path_join(t->trace_dir, "metadata", "");

		if (m)
			unlink(m);
		free(m);
	}
	if (t->made_trace_dir)
		rmdir(t->trace_dir);
	free(t->trace_dir);
	free(t->meta_path);
	free(t);
	return ret;
}

int grb_ctf_event_register(struct grb_ctf *t,
			   const struct grb_ctf_event_desc *desc,
			   const struct grb_ctf_event **out)
{
	struct grb_ctf_event *ev;
	uint32_t nr;
	int ret;

	if (!t || !desc || !out)
		return -EINVAL;
	ret = grb__ctf_event_build(desc, &ev);
	if (ret)
		return ret;
	ev->owner = t;
	pthread_mutex_lock(&t->reg_lock);
	nr = atomic_load_explicit(&t->types->nr, memory_order_relaxed);
	for (uint32_t i = 0; i < nr; i++)
		if (!strcmp(t->types->ev[i]->name, ev->name))
			ret = -EINVAL;
	if (!ret && nr == GRB_CTF_MAX_EVENTS)
		ret = -ENOSPC;
	if (ret)
		goto out;
	/* Id 30 is the padding event's; 31 is the extended header's code
	 * in the compact space, and a class id like any other in the
	 * extended header, where every id from 30 up goes. */
	ev->id = ctf_id_of(nr);
	t->types->ev[nr] = ev;
	/* Release: the class before the count, for decoders. */
	atomic_store_explicit(&t->types->nr, nr + 1, memory_order_release);
	ret = grb__ctf_metadata_write(t, 0);
	if (ret) {
		atomic_store_explicit(&t->types->nr, nr, memory_order_release);
		t->types->ev[nr] = NULL;
		/* The metadata still describes nr classes: rewrite it so. */
		grb__ctf_metadata_write(t, 0);
	}
out:
	pthread_mutex_unlock(&t->reg_lock);
	if (ret)
		grb__ctf_event_free(ev);
	else
		*out = ev;
	return ret;
}

/* ------------------------------------------------------------------ */
/* The write side, specialised per configuration. */

static GRB_ALWAYS_INLINE void put_header(const struct grb_config *cfg,
					 struct grb_ctx *ctx, uint32_t id)
{
	if ((ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP) ||
	    id >= GRB_CTF_COMPACT_IDS) {
		char h[CTF_EXT_HEADER];

		h[0] = (char)CTF_ID_EXT;
		memcpy(h + 1, &id, sizeof(id));
		memcpy(h + 5, &ctx->timestamp, sizeof(uint64_t));
		grb_write(cfg, ctx, h, sizeof(h));
	} else {
		uint32_t w = id | (uint32_t)ctx->timestamp << 5;

		grb_write(cfg, ctx, &w, sizeof(w));
	}
}

/* grb_write_record()'s fill for grb_ctf_emit_raw(): header, payload. */
static GRB_ALWAYS_INLINE void fill_raw(const struct grb_config *cfg,
				       struct grb_ctx *ctx)
{
	const struct emit_args *a = (const struct emit_args *)ctx->client_priv;

	put_header(cfg, ctx, a->ev->id);
	if (a->len)
		grb_write(cfg, ctx, a->payload, a->len);
}

static GRB_ALWAYS_INLINE int emit_raw(const struct grb_config *cfg,
				      struct grb_ctf *t,
				      const struct grb_ctf_event *ev,
				      const void *payload, size_t len)
{
	struct emit_args a = { ev, payload, len, NULL, NULL };

	return grb_write_record(cfg, t->chan, len, 1, &a, fill_raw);
}

/* grb_write_record()'s fill for grb_ctf_emit(): header, then each field
 * as the metadata lays it out. */
static GRB_ALWAYS_INLINE void fill_values(const struct grb_config *cfg,
					  struct grb_ctx *ctx)
{
	const struct emit_args *a = (const struct emit_args *)ctx->client_priv;
	const struct grb_ctf_event *ev = a->ev;
	const union grb_ctf_value *v = a->v;
	unsigned int s = 0;

	put_header(cfg, ctx, ev->id);
	for (unsigned int i = 0; i < ev->nr_fields; i++) {
		const struct ctf_field *f = &ev->fields[i];

		if (f->kind == GRB_CTF_STRING) {
			grb_write(cfg, ctx, v[i].s ? v[i].s : "", a->slen[s++]);
		} else if (f->length) {
			grb_write(cfg, ctx, v[i].array,
				  (size_t)f->size * f->length);
		} else if (f->kind == GRB_CTF_FLOAT && f->size == 4) {
			float x = (float)v[i].d;

			grb_write(cfg, ctx, &x, sizeof(x));
		} else {
			/* Little-endian: the low bytes come first. */
			grb_write(cfg, ctx, &v[i].u, f->size);
		}
	}
}

static GRB_ALWAYS_INLINE int emit_values(const struct grb_config *cfg,
					 struct grb_ctf *t,
					 const struct grb_ctf_event *ev,
					 const union grb_ctf_value *v,
					 const size_t *slen, size_t len)
{
	struct emit_args a = { ev, NULL, 0, v, slen };

	return grb_write_record(cfg, t->chan, len, 1, &a, fill_values);
}

/* One constant configuration per case, so each inlines its own path. */
#define CTF_CASES(call)                                                    \
	case 0: return call(0);   case 1: return call(1);                  \
	case 2: return call(2);   case 3: return call(3);                  \
	case 4: return call(4);   case 5: return call(5);                  \
	case 6: return call(6);   case 7: return call(7);                  \
	case 8: return call(8);   case 9: return call(9);                  \
	case 10: return call(10); case 11: return call(11);                \
	case 12: return call(12); case 13: return call(13);                \
	case 14: return call(14); default: return call(15)

int grb_ctf_emit(struct grb_ctf *t, const struct grb_ctf_event *ev,
		 const union grb_ctf_value *values)
{
	size_t slen[GRB_CTF_MAX_FIELDS];
	size_t len;
	unsigned int s = 0;

	if (!t || !ev || ev->owner != t || (!values && ev->nr_fields))
		return -EINVAL;
	len = ev->fixed_size;
	for (unsigned int i = 0; i < ev->nr_fields; i++) {
		const struct ctf_field *f = &ev->fields[i];

		if (f->kind == GRB_CTF_STRING) {
			slen[s] = (values[i].s ? strlen(values[i].s) : 0) + 1;
			len += slen[s++];
		} else if (f->length && !values[i].array) {
			return -EINVAL;
		}
	}
	switch (t->cfg - ctf_configs) {
#define CTF_EMIT(i) emit_values(&ctf_configs[i], t, ev, values, slen, len)
	CTF_CASES(CTF_EMIT);
#undef CTF_EMIT
	}
}

int grb_ctf_emit_raw(struct grb_ctf *t, const struct grb_ctf_event *ev,
		     const void *payload, size_t len)
{
	if (!t || !ev || ev->owner != t || (!payload && len))
		return -EINVAL;
	if (ev->nr_strings ? grb__ctf_payload_len(ev, (const char *)payload,
						  len) != (long)len
	    : len != ev->fixed_size)
		return -EINVAL;
	switch (t->cfg - ctf_configs) {
#define CTF_RAW(i) emit_raw(&ctf_configs[i], t, ev, payload, len)
	CTF_CASES(CTF_RAW);
#undef CTF_RAW
	}
}

/* ------------------------------------------------------------------ */

int grb_ctf_stop(struct grb_ctf *t)
{
	int ret;

	if (!t)
		return -EINVAL;
	if (t->stopped)
		return -EALREADY;
	t->stopped = 1;
	if (t->thread_started)
		return grb__ctf_output_stop(t);
	ret = grb_channel_finalize(t->chan);
	return ret == -EALREADY ? 0 : ret;
}

int grb_ctf_get_stats(const struct grb_ctf *t, struct grb_ctf_stats *st)
{
	struct grb_buf_stats bs;

	if (!t || !st)
		return -EINVAL;
	pthread_mutex_lock((pthread_mutex_t *)&t->stats_lock);
	*st = t->stats;
	pthread_mutex_unlock((pthread_mutex_t *)&t->stats_lock);
	grb_channel_get_stats(t->chan, &bs);
	st->events = bs.written;
	st->events_discarded = bs.lost_full + bs.lost_wrap + bs.lost_big +
		bs.lost_nesting;
	st->events_dead = bs.lost_dead;
	st->events_overwritten = bs.overwritten;
	return 0;
}

struct grb_channel *grb_ctf_channel(struct grb_ctf *t)
{
	return t ? t->chan : NULL;
}

void grb_ctf_destroy(struct grb_ctf *t)
{
	if (!t)
		return;
	if (!t->stopped)
		grb_ctf_stop(t);
	grb_channel_destroy(t->chan);
	if (t->meta_path)
		unlink(t->meta_path);
	free_types(t);
	free(t->streams);
	free(t->trace_dir);
	free(t->meta_path);
	pthread_mutex_destroy(&t->reg_lock);
	pthread_mutex_destroy(&t->stats_lock);
	free(t);
}
