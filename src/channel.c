/* SPDX-License-Identifier: MIT */
/*
 * src/channel.c - channel creation and teardown, the memory of a buffer,
 * finalize, record enable/disable, statistics.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine.h"
#include "grb/align.h"

int grb_config_check(const struct grb_config *cfg)
{
	if (!cfg)
		return -EINVAL;
	if (cfg->alloc != GRB_ALLOC_PER_CPU &&
	    cfg->alloc != GRB_ALLOC_PER_CHANNEL)
		return -EINVAL;
	if (cfg->mode != GRB_MODE_OVERWRITE && cfg->mode != GRB_MODE_DISCARD)
		return -EINVAL;
	if (cfg->timestamp_bits > 64)
		return -EINVAL;
	if ((cfg->timestamp_bits > 0) != (cfg->cb.clock_read != NULL))
		return -EINVAL;
	return 0;
}

static unsigned int log2u(uint64_t x)
{
	return (unsigned int)__builtin_ctzll(x);
}

static int check_attr(const struct grb_config *cfg,
		      const struct grb_channel_attr *attr)
{
	uint64_t sb = attr->subbuf_size, n = attr->num_subbuf;

	if (!grb_is_pow2(sb) || sb < grb__page_size() ||
	    sb > GRB_SUBBUF_SIZE_MAX)
		return -EINVAL;
	if (!grb_is_pow2(n) || n < 2 || n > GRB_NUM_SUBBUF_MAX)
		return -EINVAL;
	/* Positions are 64-bit and must not wrap: keep a buffer far below. */
	if (log2u(sb) + log2u(n) > 48)
		return -EINVAL;
	if (grb__subbuf_header_size(cfg) >= sb)
		return -EINVAL;
	return 0;
}

/* Offsets of the parts of one buffer's mapping; see grb/impl/layout.h. */
struct buf_layout {
	uint64_t off_hot, off_cold, off_ids, off_meta, off_data, map_size;
	uint64_t nr_phys;
};

static void compute_layout(const struct grb_config *cfg, uint64_t sb,
			   uint64_t n, struct buf_layout *l)
{
	uint64_t page = grb__page_size();

	l->nr_phys = n + (cfg->mode == GRB_MODE_OVERWRITE ? 1 : 0);
	l->off_hot = grb_align(sizeof(struct grb_buf_shm), GRB_CACHELINE);
	l->off_cold = l->off_hot + n * sizeof(struct grb_commit_hot);
	l->off_ids = l->off_cold + n * sizeof(struct grb_commit_cold);
	l->off_meta = grb_align(l->off_ids + n * sizeof(grb_atomic_u64),
				GRB_CACHELINE);
	l->off_data = grb_align(l->off_meta +
				l->nr_phys * sizeof(struct grb_subbuf_meta),
				page);
	l->map_size = l->off_data + l->nr_phys * sb;
}

/* Fill the process handle from a mapping's description. */
static void bind_handle(struct grb_buf *buf, struct grb_buf_shm *shm,
			struct grb_channel *chan)
{
	char *base = (char *)shm;

	buf->shm = shm;
	buf->hot = (struct grb_commit_hot *)(void *)(base + shm->off_hot);
	buf->cold = (struct grb_commit_cold *)(void *)(base + shm->off_cold);
	buf->ids = (grb_atomic_u64 *)(void *)(base + shm->off_ids);
	buf->meta = (struct grb_subbuf_meta *)(void *)(base + shm->off_meta);
	buf->data = base + shm->off_data;
	buf->subbuf_size = shm->subbuf_size;
	buf->buf_size = shm->subbuf_size * shm->num_subbuf;
	buf->subbuf_order = log2u(shm->subbuf_size);
	buf->nsb_order = log2u(shm->num_subbuf);
	buf->buf_order = buf->subbuf_order + buf->nsb_order;
	buf->cpu = (int)shm->cpu;
	buf->chan = chan;
}

static int buf_map(struct grb_channel *chan, struct grb_buf *buf, int cpu)
{
	const struct grb_config *cfg = chan->cfg;
	struct buf_layout l;
	struct grb_buf_shm *shm;
	uint64_t i;
	void *mem;

	compute_layout(cfg, chan->subbuf_size, chan->num_subbuf, &l);
	mem = mmap(NULL, l.map_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		return -ENOMEM;
	/* Anonymous memory is zero: every counter and position starts at 0. */
	shm = (struct grb_buf_shm *)mem;
	shm->magic = GRB_SHM_MAGIC;
	shm->version = GRB_SHM_VERSION;
	shm->mode = (uint32_t)cfg->mode;
	shm->map_size = l.map_size;
	shm->subbuf_size = chan->subbuf_size;
	shm->num_subbuf = chan->num_subbuf;
	shm->nr_phys = l.nr_phys;
	shm->cpu = cpu;
	shm->off_hot = l.off_hot;
	shm->off_cold = l.off_cold;
	shm->off_ids = l.off_ids;
	shm->off_meta = l.off_meta;
	shm->off_data = l.off_data;
	bind_handle(buf, shm, chan);
	/*
	 * Slot i starts on physical sub-buffer i; the spare is the reader's.
	 * Relaxed: no other thread knows the buffer yet; whatever hands it
	 * the channel (thread creation, a lock, a queue) orders these stores
	 * before its first use, on any architecture.
	 */
	for (i = 0; i < chan->num_subbuf; i++)
		grb_store_relaxed(&buf->ids[i], i);
	shm->reader_id = chan->num_subbuf;
	return 0;
}

static void buf_unmap(struct grb_buf *buf)
{
	if (buf->shm)
		munmap(buf->shm, buf->shm->map_size);
	buf->shm = NULL;
}

static void channel_free(struct grb_channel *chan, unsigned int created)
{
	unsigned int i;

	for (i = 0; i < chan->nr_bufs; i++) {
		if (i < created && chan->cfg->cb.buffer_finalize &&
		    !chan->finalized)
			chan->cfg->cb.buffer_finalize(&chan->bufs[i], chan->priv,
						      chan->bufs[i].cpu);
		buf_unmap(&chan->bufs[i]);
	}
	if (chan->event_fd >= 0)
		close(chan->event_fd);
	free(chan->tick_pos);
	free(chan->bufs);
	free(chan);
}

int grb_channel_create(const struct grb_config *cfg,
		       const struct grb_channel_attr *attr,
		       struct grb_channel **out)
{
	struct grb_channel *chan;
	unsigned int i, created = 0;
	int ret;

	if (!out || !attr)
		return -EINVAL;
	ret = grb_config_check(cfg);
	if (ret)
		return ret;
	ret = check_attr(cfg, attr);
	if (ret)
		return ret;
	chan = (struct grb_channel *)calloc(1, sizeof(*chan));
	if (!chan)
		return -ENOMEM;
	chan->cfg = cfg;
	chan->subbuf_size = attr->subbuf_size;
	chan->num_subbuf = attr->num_subbuf;
	chan->priv = attr->priv;
	chan->event_fd = -1;
	if (attr->name)
		strncpy(chan->name, attr->name, sizeof(chan->name) - 1);
	chan->nr_bufs = cfg->alloc == GRB_ALLOC_PER_CPU ?
		(unsigned int)grb__possible_cpus() : 1;
	chan->bufs = (struct grb_buf *)calloc(chan->nr_bufs,
					      sizeof(*chan->bufs));
	chan->tick_pos = (uint64_t *)calloc(chan->nr_bufs,
					    sizeof(*chan->tick_pos));
	if (!chan->bufs || !chan->tick_pos) {
		free(chan->bufs);
		free(chan->tick_pos);
		free(chan);
		return -ENOMEM;
	}
	for (i = 0; i < chan->nr_bufs; i++) {
		ret = buf_map(chan, &chan->bufs[i],
			      cfg->alloc == GRB_ALLOC_PER_CPU ? (int)i : -1);
		if (ret)
			goto fail;
	}
	for (; created < chan->nr_bufs; created++) {
		if (!cfg->cb.buffer_create)
			continue;
		ret = cfg->cb.buffer_create(&chan->bufs[created], chan->priv,
					    chan->bufs[created].cpu);
		if (ret)
			goto fail;
	}
	*out = chan;
	return 0;
fail:
	channel_free(chan, created);
	return ret < 0 ? ret : -EINVAL;
}

int grb_channel_finalize(struct grb_channel *chan)
{
	unsigned int i;

	if (!chan)
		return -EINVAL;
	if (chan->finalized)
		return -EALREADY;
	for (i = 0; i < chan->nr_bufs; i++) {
		grb_buf_flush(&chan->bufs[i], GRB_FLUSH_ACTIVE);
		/* Release: the flush above is visible to a reader that sees
		 * the bit; pairs with the acquire in the reader's drained(). */
		grb_fetch_or_seq_cst(&chan->bufs[i].shm->blocked,
				     GRB_BLOCKED_FINALIZED);
		/* Waiters of a drained buffer must learn it ends: the same
		 * handshake as a delivery (src/wait.c); seq_cst, as there. */
		if (grb_load_seq_cst(&chan->bufs[i].shm->waiting))
			grb__wake(&chan->bufs[i]);
		if (chan->cfg->cb.buffer_finalize)
			chan->cfg->cb.buffer_finalize(&chan->bufs[i], chan->priv,
						      chan->bufs[i].cpu);
	}
	chan->finalized = 1;
	return 0;
}

void grb_channel_destroy(struct grb_channel *chan)
{
	if (!chan)
		return;
	if (!chan->finalized)
		grb_channel_finalize(chan);
	channel_free(chan, chan->nr_bufs);
}

/*
 * Relaxed, as grb/channel.h says: the bit orders nothing else.  A writer
 * on another thread may still reserve for as long as the store takes to
 * reach it; one that synchronises with this thread after the call (a
 * lock, a join, any acquire of something released after it) is refused,
 * by coherence, on weakly ordered machines as on x86.
 */
int grb_buf_record_disable(struct grb_buf *buf)
{
	if (!buf)
		return -EINVAL;
	grb_fetch_or_relaxed(&buf->shm->blocked, GRB_BLOCKED_DISABLED);
	return 0;
}

int grb_buf_record_enable(struct grb_buf *buf)
{
	if (!buf)
		return -EINVAL;
	grb_fetch_and_relaxed(&buf->shm->blocked, ~GRB_BLOCKED_DISABLED);
	return 0;
}

int grb_channel_record_disable(struct grb_channel *chan)
{
	unsigned int i;

	if (!chan)
		return -EINVAL;
	for (i = 0; i < chan->nr_bufs; i++)
		grb_buf_record_disable(&chan->bufs[i]);
	return 0;
}

int grb_channel_record_enable(struct grb_channel *chan)
{
	unsigned int i;

	if (!chan)
		return -EINVAL;
	for (i = 0; i < chan->nr_bufs; i++)
		grb_buf_record_enable(&chan->bufs[i]);
	return 0;
}

unsigned int grb_channel_nr_bufs(const struct grb_channel *chan)
{
	return chan ? chan->nr_bufs : 0;
}

struct grb_buf *grb_channel_buf(struct grb_channel *chan, unsigned int i)
{
	if (!chan || i >= chan->nr_bufs)
		return NULL;
	return &chan->bufs[i];
}

void *grb_channel_priv(const struct grb_channel *chan)
{
	return chan ? chan->priv : NULL;
}

int grb_buf_cpu(const struct grb_buf *buf)
{
	return buf ? buf->cpu : -1;
}

struct grb_channel *grb_buf_channel(const struct grb_buf *buf)
{
	return buf ? buf->chan : NULL;
}

int grb_buf_get_stats(const struct grb_buf *buf, struct grb_buf_stats *st)
{
	const struct grb_buf_shm *shm;
	uint64_t i, pending = 0, delivered, cc_sb;

	if (!buf || !st)
		return -EINVAL;
	shm = buf->shm;
	/*
	 * Every counter is a relaxed load: each value is exact on its own,
	 * and the set is a snapshot only when the buffer is quiescent and
	 * the caller has synchronised with the threads that stopped (a join
	 * or a lock), which makes their last stores visible on any
	 * architecture.  While writers run, a delivery between the load of
	 * records_delivered and that of its slot's cc_sb leaves its records
	 * out of `written` (grb/channel.h says so).
	 */
	delivered = grb_load_relaxed(&shm->records_delivered);
	/*
	 * Records committed in laps not delivered yet: the record half of
	 * the counter's growth since the last delivery (see layout.h).
	 * cc_sb is read first, with acquire: it pairs with the release
	 * store in grb__deliver(), so cc (read after) is never behind it
	 * and the difference never goes negative, on ARM or POWER too.
	 */
	for (i = 0; i < shm->num_subbuf; i++) {
		cc_sb = grb_load_acquire(&buf->cold[i].cc_sb);
		pending += (grb_load_relaxed(&buf->hot[i].cc) - cc_sb) >> 32;
	}
	st->written = delivered + pending;
	st->read = grb_load_relaxed(&shm->records_read);
	st->overwritten = grb_load_relaxed(&shm->records_overwritten);
	st->lost_full = grb_load_relaxed(&shm->lost_full);
	st->lost_wrap = grb_load_relaxed(&shm->lost_wrap);
	st->lost_big = grb_load_relaxed(&shm->lost_big);
	st->lost_nesting = grb_load_relaxed(&shm->lost_nesting);
	st->discarded = grb_load_relaxed(&shm->records_discarded);
	st->produced = grb_load_relaxed(&shm->offset);
	st->consumed = grb_load_relaxed(&shm->consumed);
	return 0;
}

int grb_channel_get_stats(const struct grb_channel *chan, struct grb_buf_stats *st)
{
	struct grb_buf_stats one;
	unsigned int i;

	if (!chan || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	for (i = 0; i < chan->nr_bufs; i++) {
		grb_buf_get_stats(&chan->bufs[i], &one);
		st->written += one.written;
		st->read += one.read;
		st->overwritten += one.overwritten;
		st->lost_full += one.lost_full;
		st->lost_wrap += one.lost_wrap;
		st->lost_big += one.lost_big;
		st->lost_nesting += one.lost_nesting;
		st->discarded += one.discarded;
		st->produced += one.produced;
		st->consumed += one.consumed;
	}
	return 0;
}

int grb_channel_memory(const struct grb_channel *chan, struct grb_memory *mem)
{
	struct buf_layout l;

	if (!chan || !mem)
		return -EINVAL;
	compute_layout(chan->cfg, chan->subbuf_size, chan->num_subbuf, &l);
	mem->nr_bufs = chan->nr_bufs;
	mem->subbufs_per_buf = l.nr_phys;
	mem->data_bytes = (uint64_t)chan->nr_bufs * l.nr_phys *
		chan->subbuf_size;
	mem->control_bytes = (uint64_t)chan->nr_bufs * l.off_data +
		sizeof(*chan) + chan->nr_bufs * sizeof(*chan->bufs);
	mem->total_bytes = mem->data_bytes + mem->control_bytes;
	return 0;
}
