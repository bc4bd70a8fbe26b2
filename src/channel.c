/* SPDX-License-Identifier: MIT */
/*
 * src/channel.c - channel creation and teardown, the memory of a buffer,
 * finalize, record enable/disable, statistics.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "grb/align.h"
#include "grb/impl/journal.h"
#include "grb/writer.h"
#include "journal_internal.h"

/* grb_reserve() finds a CPU's handle by a shift: keep the pad right. */
_Static_assert(sizeof(struct grb_buf) == GRB_BUF_HANDLE_SIZE,
	       "struct grb_buf must be GRB_BUF_HANDLE_SIZE bytes");

/* Source of grb_buf.jkey. */
static grb_atomic_u64 grb__jkey_next;

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
	if (cfg->flags & ~(GRB_CONFIG_SHARED | GRB_CONFIG_SYNC_PER_CPU))
		return -EINVAL;
	if ((cfg->flags & GRB_CONFIG_SYNC_PER_CPU) &&
	    cfg->alloc != GRB_ALLOC_PER_CPU)
		return -EINVAL;
	return 0;
}

static unsigned int log2u(uint64_t x)
{
	return (unsigned int)__builtin_ctzll(x);
}

int grb__check_geometry(const struct grb_config *cfg, uint64_t sb, uint64_t n)
{
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

void grb__layout(const struct grb_config *cfg, uint64_t sb, uint64_t n,
		 uint64_t nr_jslots, struct grb_layout *l)
{
	uint64_t page = grb__page_size();

	l->nr_phys = n + (cfg->mode == GRB_MODE_OVERWRITE ? 1 : 0);
	l->off_hot = grb_align(sizeof(struct grb_buf_shm), GRB_CACHELINE);
	l->off_cold = l->off_hot + n * sizeof(struct grb_commit_hot);
	l->off_ids = l->off_cold + n * sizeof(struct grb_commit_cold);
	l->off_meta = grb_align(l->off_ids + n * sizeof(grb_atomic_u64),
				GRB_CACHELINE);
	l->off_journal = grb_align(l->off_meta +
				   l->nr_phys * sizeof(struct grb_subbuf_meta),
				   GRB_CACHELINE);
	l->nr_jslots = nr_jslots;
	l->off_data = grb_align(l->off_journal +
				nr_jslots * sizeof(struct grb_jslot), page);
	l->map_size = l->off_data + l->nr_phys * sb;
}

void grb__buf_bind(struct grb_buf *buf, void *mem,
		   const struct grb_buf_shm *d, struct grb_channel *chan)
{
	char *base = (char *)mem;

	buf->shm = (struct grb_buf_shm *)mem;
	buf->hot = (struct grb_commit_hot *)(void *)(base + d->off_hot);
	buf->cold = (struct grb_commit_cold *)(void *)(base + d->off_cold);
	buf->ids = (grb_atomic_u64 *)(void *)(base + d->off_ids);
	buf->meta = (struct grb_subbuf_meta *)(void *)(base + d->off_meta);
	buf->data = base + d->off_data;
	buf->subbuf_size = d->subbuf_size;
	buf->buf_size = d->subbuf_size * d->num_subbuf;
	buf->sb_mask = d->subbuf_size - 1;
	buf->buf_mask = buf->buf_size - 1;
	buf->subbuf_order = log2u(d->subbuf_size);
	buf->nsb_order = log2u(d->num_subbuf);
	buf->buf_order = buf->subbuf_order + buf->nsb_order;
	buf->cpu = (int)d->cpu;
	buf->nr_phys = d->nr_phys;
	buf->map_size = d->map_size;
	buf->chan = chan;
	buf->nr_jslots = d->nr_jslots;
	buf->journal = d->nr_jslots ?
		(struct grb_jslot *)(void *)(base + d->off_journal) : NULL;
	/* Here, not at a thread's first claim, which may run in a signal
	 * handler: what the journal needs set up once per process. */
	if (buf->journal)
		grb__journal_process_init();
	buf->stuck_pos = UINT64_MAX;
	/* Relaxed: a unique number is all it needs to be. */
	buf->jkey = grb_fetch_add_relaxed(&grb__jkey_next, 1) + 1;
}

/*
 * A new channel's id (grb_buf_shm.chan_id): random, else made of what
 * tells two creations apart (the process, the time, a counter), so that
 * two channels' buffers are never taken for one by an attach.
 */
static uint64_t new_chan_id(void)
{
	static grb_atomic_u64 seq;
	struct timespec ts;
	uint64_t id;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) == (ssize_t)sizeof(id))
		return id;
	clock_gettime(CLOCK_REALTIME, &ts);
	id = ((uint64_t)getpid() << 40) ^ ((uint64_t)ts.tv_sec << 30) ^
		(uint64_t)ts.tv_nsec;
	/* Relaxed: only distinct values matter. */
	return id ^ (grb_fetch_add_relaxed(&seq, 1) << 52);
}

/*
 * Map buffer i of a new channel: anonymous memory, or (fd >= 0) the
 * shared file the caller sized to the layout's map_size.  Either starts
 * as zeros, so every counter and position starts at 0.
 */
static int buf_map(struct grb_channel *chan, unsigned int i, int fd)
{
	const struct grb_config *cfg = chan->cfg;
	struct grb_buf *buf = &chan->bufs[i];
	struct grb_layout l;
	struct grb_buf_shm *shm;
	uint64_t k;
	void *mem;

	grb__layout(cfg, chan->subbuf_size, chan->num_subbuf,
		    fd < 0 ? 0 : GRB_JOURNAL_SLOTS, &l);
	if (fd < 0)
		mem = mmap(NULL, l.map_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	else
		mem = mmap(NULL, l.map_size, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return -ENOMEM;
	shm = (struct grb_buf_shm *)mem;
	shm->magic = GRB_SHM_MAGIC;
	shm->version = GRB_SHM_VERSION;
	shm->mode = (uint32_t)cfg->mode;
	shm->map_size = l.map_size;
	shm->subbuf_size = chan->subbuf_size;
	shm->num_subbuf = chan->num_subbuf;
	shm->nr_phys = l.nr_phys;
	shm->cpu = cfg->alloc == GRB_ALLOC_PER_CPU ? (int64_t)i : -1;
	shm->off_hot = l.off_hot;
	shm->off_cold = l.off_cold;
	shm->off_ids = l.off_ids;
	shm->off_meta = l.off_meta;
	shm->off_data = l.off_data;
	shm->off_journal = l.off_journal;
	shm->nr_jslots = l.nr_jslots;
	shm->alloc = (uint32_t)cfg->alloc;
	shm->timestamp_bits = cfg->timestamp_bits;
	shm->header_size = grb__subbuf_header_size(cfg);
	shm->nr_bufs = chan->nr_bufs;
	shm->buf_index = i;
	/* Buffers are mapped in index order: buffer 0's id is set. */
	shm->chan_id = i ? chan->bufs[0].shm->chan_id : new_chan_id();
	grb__buf_bind(buf, mem, shm, chan);
	/*
	 * Slot k starts on physical sub-buffer k; the spare is the reader's.
	 * Relaxed: no other thread knows the buffer yet; whatever hands it
	 * the channel (thread creation, a lock, a queue, the socket that
	 * carries its fd) orders these stores before its first use, on any
	 * architecture.
	 */
	for (k = 0; k < chan->num_subbuf; k++)
		grb_store_relaxed(&buf->ids[k], k);
	shm->reader_id = chan->num_subbuf;
	return 0;
}

static void buf_unmap(struct grb_buf *buf)
{
	if (buf->shm)
		munmap(buf->shm, buf->map_size);
	buf->shm = NULL;
}

/*
 * Free a channel.  The owner of a private or shared channel calls
 * buffer_finalize on the `created` buffers whose buffer_create ran (when
 * not finalized); an attached process never runs either callback.
 */
void grb__channel_free(struct grb_channel *chan, unsigned int created)
{
	unsigned int i;
	int owner = chan->shared <= GRB_CHAN_OWNER;

	for (i = 0; i < chan->nr_bufs; i++) {
		if (owner && i < created && chan->cfg->cb.buffer_finalize &&
		    !chan->finalized)
			chan->cfg->cb.buffer_finalize(&chan->bufs[i], chan->priv,
						      chan->bufs[i].cpu);
		buf_unmap(&chan->bufs[i]);
		if (chan->shm_fds && chan->shm_fds[i] >= 0)
			close(chan->shm_fds[i]);
	}
	if (chan->event_fd >= 0)
		close(chan->event_fd);
	grb__shm_remove(chan);
	free(chan->shm_fds);
	free(chan->shm_dir);
	free(chan->tick_pos);
	free(chan->bufs);
	free(chan);
}

int grb__channel_alloc(const struct grb_config *cfg, const char *name,
		       uint64_t subbuf_size, uint64_t num_subbuf,
		       unsigned int nr_bufs, struct grb_channel **out)
{
	struct grb_channel *chan;

	chan = (struct grb_channel *)calloc(1, sizeof(*chan));
	if (!chan)
		return -ENOMEM;
	chan->cfg = cfg;
	chan->subbuf_size = subbuf_size;
	chan->num_subbuf = num_subbuf;
	chan->event_fd = -1;
	chan->gid = -1;
	/* An attached channel keeps these: atomic, as no membarrier of
	 * this process reaches the writers of another. */
	chan->write_path = GRB_WRITE_ATOMIC;
	chan->path_reason = (cfg->flags & GRB_CONFIG_SYNC_PER_CPU) ?
		GRB_PATH_SHARED : GRB_PATH_AS_ASKED;
	if (name)
		strncpy(chan->name, name, sizeof(chan->name) - 1);
	chan->nr_bufs = nr_bufs;
	chan->nr_fast = grb__rseq_cfg(cfg) ? 0 : nr_bufs;
	/* Cache-line aligned: each handle's first line is the fast path's. */
	chan->bufs = (struct grb_buf *)aligned_alloc(GRB_CACHELINE,
		(size_t)nr_bufs * sizeof(*chan->bufs));
	if (chan->bufs)
		memset(chan->bufs, 0, (size_t)nr_bufs * sizeof(*chan->bufs));
	chan->tick_pos = (uint64_t *)calloc(nr_bufs, sizeof(*chan->tick_pos));
	if (!chan->bufs || !chan->tick_pos) {
		free(chan->bufs);
		free(chan->tick_pos);
		free(chan);
		return -ENOMEM;
	}
	*out = chan;
	return 0;
}

unsigned int grb__nr_bufs(const struct grb_config *cfg)
{
	return cfg->alloc == GRB_ALLOC_PER_CPU ?
		(unsigned int)GRB_NR_CPUS_OVERRIDE(grb__possible_cpus()) : 1;
}

int grb__channel_create(const struct grb_config *cfg,
			const struct grb_channel_attr *attr, int *fds,
			struct grb_channel **out)
{
	struct grb_channel *chan;
	unsigned int i, created = 0;
	int ret;

	ret = grb__channel_alloc(cfg, attr->name, attr->subbuf_size,
				 attr->num_subbuf, grb__nr_bufs(cfg), &chan);
	if (ret) {
		for (i = 0; fds && i < grb__nr_bufs(cfg); i++)
			close(fds[i]);
		free(fds);
		return ret;
	}
	chan->priv = attr->priv;
	if (fds) {
		/* The channel owns the descriptors from here on. */
		chan->shared = GRB_CHAN_OWNER;
		chan->shm_fds = fds;
	}
	for (i = 0; i < chan->nr_bufs; i++) {
		ret = buf_map(chan, i, fds ? fds[i] : -1);
		if (ret)
			goto fail;
	}
	/* The write path, once for the channel's life (design.md 25.5). */
	chan->write_path = grb__rseq_decide(cfg, fds != NULL,
					    &chan->path_reason);
	for (i = 0; i < chan->nr_bufs; i++)
		chan->bufs[i].rseq = chan->write_path == GRB_WRITE_RSEQ;
	if (chan->write_path == GRB_WRITE_RSEQ)
		chan->nr_fast = chan->nr_bufs;
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
	grb__channel_free(chan, created);
	return ret < 0 ? ret : -EINVAL;
}

int grb_channel_create(const struct grb_config *cfg,
		       const struct grb_channel_attr *attr,
		       struct grb_channel **out)
{
	int ret;

	if (!out || !attr)
		return -EINVAL;
	ret = grb_config_check(cfg);
	if (ret)
		return ret;
	ret = grb__check_geometry(cfg, attr->subbuf_size, attr->num_subbuf);
	if (ret)
		return ret;
	return grb__channel_create(cfg, attr, NULL, out);
}

int grb_channel_write_path(const struct grb_channel *chan,
			   enum grb_path_reason *why)
{
	if (!chan)
		return -EINVAL;
	if (why)
		*why = (enum grb_path_reason)chan->path_reason;
	return chan->write_path;
}

/*
 * Close buffer buf's gate to GRB_FLUSH_EMPTY (grb/impl/layout.h), then
 * wait for the empty flushes already past it, so that none opens a
 * sub-buffer after finalize: its reader gets -ENODATA only once.  A flush
 * stopped or dead inside (a process attached to a shared buffer, killed)
 * is waited for at most GATE_WAIT_NS; it might then still open one.
 */
#define GATE_WAIT_NS 1000000000
static void close_flush_gate(struct grb_buf *buf)
{
	struct timespec t0, t;

	/* Acquire, as the load below: what each flush did is visible. */
	if (!(grb_fetch_or_seq_cst(&buf->shm->flush_gate, GRB_GATE_CLOSED) &
	      ~GRB_GATE_CLOSED))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (grb_load_acquire(&buf->shm->flush_gate) & ~GRB_GATE_CLOSED) {
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000000000 +
		    (t.tv_nsec - t0.tv_nsec) > GATE_WAIT_NS)
			break;
	}
}

int grb_channel_finalize(struct grb_channel *chan)
{
	unsigned int i;

	if (!chan)
		return -EINVAL;
	if (chan->shared > GRB_CHAN_OWNER)
		return -EPERM;
	if (chan->finalized)
		return -EALREADY;
	for (i = 0; i < chan->nr_bufs; i++) {
		close_flush_gate(&chan->bufs[i]);
		grb__flush_final(&chan->bufs[i]);
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
	if (!chan->finalized && chan->shared <= GRB_CHAN_OWNER)
		grb_channel_finalize(chan);
	grb__channel_free(chan, chan->nr_bufs);
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
	uint64_t i, pending = 0, delivered = 0, cc_sb, counted, total;

	if (!buf || !st)
		return -EINVAL;
	shm = buf->shm;
	/*
	 * Every other counter is a relaxed load: each value is exact on its
	 * own, and the set is a snapshot only when the buffer is quiescent
	 * and the caller has synchronised with the threads that stopped (a
	 * join or a lock), which makes their last stores visible on any
	 * architecture.
	 *
	 * written, slot by slot: the records of its delivered laps, plus
	 * the record half of its commit counter's growth since the last
	 * delivery (see layout.h).  A lap in transit (marked counted, cc_sb
	 * not stored yet) is in that growth, so it goes with the total
	 * before it, dbase.  The words are read mark, cc_sb, total, then
	 * the mark and cc_sb again, all with acquire against
	 * grb__deliver()'s releases (dbase, mark, dtotal, cc_sb in that
	 * order): if neither changed, the total read belongs to the lap
	 * they name, and no delivery is counted twice or left out.  A slot
	 * delivered meanwhile is read again: the deliverer is one thread
	 * per slot, one store of each word per lap.  cc (read after cc_sb)
	 * is never behind it, so the growth never goes negative.
	 */
	for (i = 0; i < buf->buf_size >> buf->subbuf_order; i++) {
		for (;;) {
			counted = grb_load_acquire(&buf->cold[i].counted);
			cc_sb = grb_load_acquire(&buf->cold[i].cc_sb);
			if (counted && !grb__delivered(buf, cc_sb, counted - 1))
				total = grb_load_acquire(&buf->hot[i].dbase);
			else
				total = grb_load_acquire(&buf->hot[i].dtotal);
			if (grb_load_acquire(&buf->cold[i].counted) == counted &&
			    grb_load_acquire(&buf->cold[i].cc_sb) == cc_sb)
				break;
		}
		delivered += total;
		pending += (grb__cc_load(buf, i) - cc_sb) >> 32;
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
	st->lost_dead = grb_load_relaxed(&shm->lost_dead);
	st->recovered = grb_load_relaxed(&shm->subbufs_recovered);
	st->remote_commits = grb_load_relaxed(&shm->remote_commits);
	st->remote_moves = grb_load_relaxed(&shm->remote_moves);
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
		st->lost_dead += one.lost_dead;
		st->recovered += one.recovered;
		st->remote_commits += one.remote_commits;
		st->remote_moves += one.remote_moves;
	}
	return 0;
}

int grb_channel_memory(const struct grb_channel *chan, struct grb_memory *mem)
{
	struct grb_layout l;

	if (!chan || !mem)
		return -EINVAL;
	grb__layout(chan->cfg, chan->subbuf_size, chan->num_subbuf,
		    chan->shared ? GRB_JOURNAL_SLOTS : 0, &l);
	mem->nr_bufs = chan->nr_bufs;
	mem->subbufs_per_buf = l.nr_phys;
	mem->data_bytes = (uint64_t)chan->nr_bufs * l.nr_phys *
		chan->subbuf_size;
	mem->control_bytes = (uint64_t)chan->nr_bufs * l.off_data +
		sizeof(*chan) + chan->nr_bufs * sizeof(*chan->bufs);
	mem->total_bytes = mem->data_bytes + mem->control_bytes;
	return 0;
}
