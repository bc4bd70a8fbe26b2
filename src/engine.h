/* SPDX-License-Identifier: MIT */
/*
 * src/engine.h - what the out-of-line parts of the engine share: the
 * layout and position arithmetic, and each file's entry points.  It does
 * not include the writer's fast path (grb/writer.h): the reader, delivery
 * and the validator work on positions, not on reservations.  The files
 * that do (reserve.c, switch.c) include grb/writer.h themselves.
 */
#ifndef GRB_SRC_ENGINE_H
#define GRB_SRC_ENGINE_H

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "grb/api.h"
#include "grb/channel.h"
#include "grb/config.h"
#include "grb/reader.h"
#include "grb/impl/layout.h"
#include "grb/impl/position.h"

static inline size_t grb__subbuf_header_size(const struct grb_config *cfg)
{
	return cfg->cb.subbuf_header_size ? cfg->cb.subbuf_header_size() : 0;
}

/* Records refused or overwritten on a buffer so far (relaxed counts). */
static inline uint64_t grb__lost_total(const struct grb_buf_shm *shm)
{
	return grb_load_relaxed(&shm->lost_full) +
		grb_load_relaxed(&shm->lost_wrap) +
		grb_load_relaxed(&shm->lost_big) +
		grb_load_relaxed(&shm->lost_nesting) +
		grb_load_relaxed(&shm->records_overwritten);
}

static inline uint64_t grb__page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* src/switch.c: opening and closing sub-buffers. */
int grb__subbuf_free(const struct grb_config *cfg, struct grb_buf *buf,
		     uint64_t pos);
void grb__begin_new(const struct grb_config *cfg, struct grb_buf *buf,
		    uint64_t pos, uint64_t phys, uint64_t ts);
void grb__commit_bytes(const struct grb_config *cfg, struct grb_buf *buf,
		       uint64_t pos, uint64_t bytes);
void grb__set_close(struct grb_buf *buf, uint64_t pos, uint64_t data_size,
		    uint64_t ts);
void grb__end_old(const struct grb_config *cfg, struct grb_buf *buf,
		  uint64_t old, uint64_t ts);
/* grb_channel_finalize()'s flush: unjournaled when no entry is free. */
int grb__flush_final(struct grb_buf *buf);

/* src/deliver.c: exported, the inline commit calls it. */
GRB_API void grb__deliver(const struct grb_config *cfg, struct grb_buf *buf,
			  uint64_t cc, uint64_t pos);
/* Its last step, publishing cc_sb, alone: for a recoverer finishing an
 * overwrite-mode delivery whose id was already published. */
void grb__deliver_publish(struct grb_buf *buf, uint64_t slot, uint64_t cc);

/*
 * src/overwrite.c: the overwrite-mode protocol.  push and clear_noref are
 * exported: the inline reserve calls them (grb__overwrite_enter()).
 */
GRB_API void grb__push_reader(struct grb_buf *buf, uint64_t pos);
GRB_API uint64_t grb__clear_noref(struct grb_buf *buf, uint64_t slot);
void grb__ow_publish(struct grb_buf *buf, uint64_t slot, uint64_t phys,
		     uint64_t pos);
int grb__ow_claim(struct grb_buf *buf, uint64_t c);
int64_t grb__ow_swap_in(struct grb_buf *buf, uint64_t pos, uint64_t spare);
int grb__ow_swap_back(struct grb_buf *buf, uint64_t pos, uint64_t held,
		      uint64_t spare);
uint64_t grb__ow_reader_phys(const struct grb_buf_shm *shm);

/* src/wait.c: exported, the inline commit calls it. */
GRB_API void grb__wake(struct grb_buf *buf);
/* grb_channel_wait() with a byte watermark per buffer (marks[i], 0 for
 * none; NULL: `bytes` for all), for the iterators' polls. */
int grb__channel_wait_marks(struct grb_channel *chan, uint64_t n,
			    uint64_t bytes, const uint64_t *marks,
			    int64_t timeout_ns);

/*
 * src/reader.c: the committed prefix of the sub-buffer at pos, when it is
 * the one writers are filling and every reservation in it so far is
 * committed.  Return: 0 with *size bytes (header included) and *records
 * (may be NULL); -EAGAIN otherwise.  Discard mode only.
 */
int grb__live_prefix(struct grb_buf *buf, uint64_t pos, uint64_t *size,
		     uint64_t *records);

/*
 * src/reader.c: release a sub-buffer held from grb_reader_get_next()
 * without consuming it; discard mode only.  Return: 0; -EPERM when none
 * is held that way, in overwrite mode, or when not open.
 */
int grb__reader_unget(struct grb_buf *buf);

/*
 * src/reader.c: a sub-buffer from grb_reader_get_next() that could not be
 * used (a failed write, a description the reader refused).  Discard mode:
 * given back unconsumed, the next get_next returns it again.  Overwrite
 * mode: get_next already moved the consumed position past it and its
 * records count as read; finished, so the reader holds nothing.
 */
void grb__reader_give_back(struct grb_buf *buf);

/* src/channel.c: the parts of a buffer's mapping (grb/impl/layout.h). */
struct grb_layout {
	uint64_t off_hot, off_cold, off_ids, off_meta, off_data, map_size;
	uint64_t nr_phys, off_journal, nr_jslots;
};
/* nr_jslots: GRB_JOURNAL_SLOTS for a shared buffer, 0 for a private one. */
void grb__layout(const struct grb_config *cfg, uint64_t subbuf_size,
		 uint64_t num_subbuf, uint64_t nr_jslots,
		 struct grb_layout *l);
/* The geometry limits of grb_channel_create(): 0 or -EINVAL. */
int grb__check_geometry(const struct grb_config *cfg, uint64_t subbuf_size,
			uint64_t num_subbuf);
/* Buffers a channel of this configuration has: possible CPUs, or 1. */
unsigned int grb__nr_bufs(const struct grb_config *cfg);
/* Fill the process handle of the mapping at mem from its description d
 * (a copy checked by the caller, when another process made it). */
void grb__buf_bind(struct grb_buf *buf, void *mem,
		   const struct grb_buf_shm *d, struct grb_channel *chan);
/* A channel with its handle arrays, no buffer mapped yet. */
int grb__channel_alloc(const struct grb_config *cfg, const char *name,
		       uint64_t subbuf_size, uint64_t num_subbuf,
		       unsigned int nr_bufs, struct grb_channel **out);
/*
 * Create a channel on checked arguments: anonymous memory (fds NULL), or
 * the shared files fds[] (one per buffer, each sized to the layout's
 * map_size), which the channel then owns, also on failure.
 */
int grb__channel_create(const struct grb_config *cfg,
			const struct grb_channel_attr *attr, int *fds,
			struct grb_channel **out);
/* Unmap and free; see src/channel.c for the callbacks it runs. */
void grb__channel_free(struct grb_channel *chan, unsigned int created);

/* src/shm.c: the owner of a channel in files removes them at destroy. */
void grb__shm_remove(const struct grb_channel *chan);

/*
 * src/rseq.c: the per-CPU (rseq) path (docs/design.md section 25).
 * decide: the path for a new channel (GRB_WRITE_*), *reason set to a
 * GRB_PATH_*.  offset_cas: the slow paths' CAS of the write position,
 * whatever the path.  remote_enter/exit bracket a remote operation on a
 * per-CPU buffer's position, and remote_moved counts one that moved it
 * (grb_buf_stats.remote_moves); fence makes its CPU run a full barrier and
 * abort its critical sections (fence_all: every CPU's).  The remaining
 * three are exported: the inline commit calls them; commit_slow is a
 * per-CPU configuration's commit out of line, on either path.
 */
int grb__rseq_decide(const struct grb_config *cfg, int shared, int *reason);
int grb__offset_cas(struct grb_buf *buf, uint64_t *old, uint64_t new_pos);
void grb__remote_enter(struct grb_buf *buf);
void grb__remote_exit(struct grb_buf *buf);
void grb__remote_moved(struct grb_buf *buf);
void grb__rseq_fence(struct grb_buf *buf);
void grb__rseq_fence_all(void);
GRB_API void grb__rseq_deliver(const struct grb_config *cfg,
			       struct grb_buf *buf, uint64_t sum, uint64_t pos);
GRB_API void grb__rseq_commit_slow(const struct grb_config *cfg,
				   struct grb_buf *buf, uint64_t pos,
				   uint64_t add);
GRB_API void grb__commit_slow(const struct grb_config *cfg,
			      struct grb_buf *buf, uint64_t pos, uint64_t add);

/* src/cpu.c */
int grb__possible_cpus(void);

/*
 * The number of buffers of a per-CPU channel is the possible CPUs' count;
 * the test build may give more (grb_test_set_nr_cpus(), so that a test
 * merges more buffers than this machine has CPUs).  Nothing in what is
 * installed.
 */
#ifndef GRB_NR_CPUS_OVERRIDE
#define GRB_NR_CPUS_OVERRIDE(n) (n)
#endif

#endif /* GRB_SRC_ENGINE_H */
