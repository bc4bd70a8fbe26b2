/* SPDX-License-Identifier: MIT */
/*
 * grb/channel.h - channels and their buffers: creation, flush, finalize,
 * statistics, memory.
 *
 * A channel is a set of buffers (one per possible CPU, or one) sharing a
 * client configuration and a geometry: num_subbuf sub-buffers of
 * subbuf_size bytes each, both powers of two.
 *
 * Which operations may run at the same time on one channel:
 *
 *   operation                       | concurrent with
 *   --------------------------------+----------------------------------
 *   grb_reserve/commit (writer.h)   | everything below but finalize
 *                                   | and destroy
 *   grb_buf_flush, grb_channel_flush| writers, readers, other flushes,
 *                                   | finalize
 *   grb_*_record_disable/enable     | everything but destroy
 *   grb_buf_stats, grb_channel_*    | everything but destroy
 *   grb_channel_finalize            | readers, flushes (and ticks,
 *                                   | grb/timer.h); writers must have
 *                                   | stopped
 *   grb_channel_destroy             | nothing
 */
#ifndef GRB_CHANNEL_H
#define GRB_CHANNEL_H

#include "grb/api.h"

#include <stddef.h>
#include <stdint.h>

#include "grb/config.h"

#ifdef __cplusplus
extern "C" {
#endif

struct grb_channel;
struct grb_buf;

struct grb_channel_attr {
	const char *name;        /* for diagnostics; NULL for "" */
	size_t subbuf_size;      /* power of two, >= page size, <= 2 GiB */
	size_t num_subbuf;       /* power of two, >= 2, <= 2^31 */
	void *priv;              /* handed to buffer_create/finalize */
};

/**
 * grb_channel_create - allocate a channel and its buffers.
 * @cfg: client configuration; must outlive the channel.
 * @attr: geometry and name.
 * @out: receives the channel.
 *
 * Reads the number of possible CPUs once (per-CPU allocation), maps one
 * zeroed region per buffer and calls buffer_create for each.
 * Return: 0, or
 *  -EINVAL  a NULL argument; grb_config_check() fails; subbuf_size or
 *           num_subbuf is not a power of two, subbuf_size is below the
 *           page size or above GRB_SUBBUF_SIZE_MAX, num_subbuf is below 2
 *           or above GRB_NUM_SUBBUF_MAX (the id layout), a buffer of
 *           more than 2^48 bytes (subbuf_size x num_subbuf), or the
 *           sub-buffer header leaves no room for a record;
 *  -ENOMEM  memory could not be mapped;
 *  any negative errno returned by buffer_create (a positive return
 *  from it is reported as -EINVAL).
 * On error nothing is left allocated.
 * Context: any thread; not signal-safe.
 */
GRB_API int grb_channel_create(const struct grb_config *cfg,
		       const struct grb_channel_attr *attr,
		       struct grb_channel **out);

/**
 * grb_channel_destroy - unmap every buffer and free the channel.
 * @chan: channel, or NULL (no-op).
 *
 * Finalizes the channel first when grb_channel_finalize() was not called
 * (not an attached channel: finalize is its creator's, grb/shm.h).
 * Context: no other thread may use @chan during or after the call.
 */
GRB_API void grb_channel_destroy(struct grb_channel *chan);

/* Flags for grb_buf_flush() and grb_channel_flush(). */
enum grb_flush {
	/* Close the open sub-buffer when it holds data. */
	GRB_FLUSH_ACTIVE = 0,
	/* Also produce a header-only sub-buffer when none is open, so a
	 * reader learns the time range; skipped when the next sub-buffer
	 * is not free. */
	GRB_FLUSH_EMPTY = 1,
};

/**
 * grb_buf_flush - close the open sub-buffer so readers can get it.
 * @buf: buffer.
 * @how: GRB_FLUSH_ACTIVE or GRB_FLUSH_EMPTY.
 *
 * The sub-buffer is delivered as soon as the records reserved in it are
 * committed: by the last of those commits, or at once, by this call on
 * the calling thread (the client's buffer_end included), when none is
 * pending.  After grb_channel_finalize() a buffer stays ended: a flush
 * there opens no sub-buffer, GRB_FLUSH_EMPTY included (-ENODATA).
 * Return: 0 when a sub-buffer was closed; -ENODATA when there was nothing
 * to close; -ENOBUFS (discard mode, buffer full) or -EIO (next sub-buffer
 * still being written) when GRB_FLUSH_EMPTY could not open a sub-buffer;
 * -EBUSY in a shared buffer when the calling thread gets no journal
 * entry (grb/recover.h: too many writing threads, or its entries all in
 * use); -EBADMSG from a process attached as the reader (grb/shm.h) when
 * the mapping is inconsistent (the write position behind the consumed
 * one or more than two rings ahead of it, or a
 * sub-buffer id naming none of the buffer's), so that no writer code
 * runs on it; -EINVAL for a NULL @buf or an unknown @how.
 * Context: any thread, including one that is not a writer; signal-safe.
 * Ordering: as a reservation.
 */
GRB_API int grb_buf_flush(struct grb_buf *buf, enum grb_flush how);

/**
 * grb_channel_flush - grb_buf_flush() on every buffer.
 * Return: 0, or -EINVAL for a NULL @chan or unknown @how.  No per-buffer
 * result is reported: nothing to close (-ENODATA), an empty sub-buffer
 * that could not be opened (-ENOBUFS, -EIO), no journal entry (-EBUSY),
 * an inconsistent mapping (-EBADMSG); every buffer is tried whatever the
 * others gave.  grb_buf_flush() on each buffer tells them apart.
 * Context and ordering: as grb_buf_flush(), buffer after buffer.
 */
GRB_API int grb_channel_flush(struct grb_channel *chan, enum grb_flush how);

/**
 * grb_channel_finalize - end of writing: flush every buffer and mark it
 * finalized.
 * @chan: channel.
 *
 * Calls buffer_finalize on every buffer.  Later reservations fail with
 * -ESHUTDOWN; readers drain what is left and then get -ENODATA.  A
 * GRB_FLUSH_EMPTY flush (an idle tick's) running at the same time either
 * opens its sub-buffer before finalize returns (finalize waits for it,
 * and readers get that sub-buffer before -ENODATA) or opens none; one
 * that does not come back within about a second (its process was killed
 * in it) is no longer waited for.  The
 * flush needs no journal entry in a shared buffer: when live threads
 * hold them all, it runs unjournaled (the writers are done), so no
 * committed record is left behind.
 * Return: 0; -EINVAL for NULL; -EALREADY when already finalized; -EPERM
 * on an attached channel (grb/shm.h: finalize is the creator's).
 * Context: writers must have returned from their last commit.
 * Ordering: release; pairs with the reader's acquire of the finalized bit.
 */
GRB_API int grb_channel_finalize(struct grb_channel *chan);

/**
 * grb_channel_record_disable / grb_channel_record_enable - make every
 * later reservation fail with -EAGAIN, or allow them again.  Records
 * refused this way are not counted as lost (the client asked for it).
 * Return: 0, or -EINVAL for NULL.
 * Context: any thread.  Ordering: relaxed; a reservation racing with the
 * call may still succeed.
 */
GRB_API int grb_channel_record_disable(struct grb_channel *chan);
GRB_API int grb_channel_record_enable(struct grb_channel *chan);
GRB_API int grb_buf_record_disable(struct grb_buf *buf);
GRB_API int grb_buf_record_enable(struct grb_buf *buf);

/**
 * grb_channel_nr_bufs - number of buffers: possible CPUs, or 1.
 * Return: the count (0 for NULL).
 */
GRB_API unsigned int grb_channel_nr_bufs(const struct grb_channel *chan);

/**
 * grb_channel_buf - buffer @i of a channel (the buffer of CPU @i when
 * allocation is per CPU).
 * Return: the buffer, or NULL when @chan is NULL or @i is out of range.
 */
GRB_API struct grb_buf *grb_channel_buf(struct grb_channel *chan, unsigned int i);

/** grb_channel_priv - the attr->priv given at creation (NULL for NULL). */
GRB_API void *grb_channel_priv(const struct grb_channel *chan);

/** grb_buf_cpu - the buffer's CPU, or -1 for a per-channel buffer (and
 * for NULL). */
GRB_API int grb_buf_cpu(const struct grb_buf *buf);

/** grb_buf_channel - the channel a buffer belongs to (NULL for NULL). */
GRB_API struct grb_channel *grb_buf_channel(const struct grb_buf *buf);

/* Which synchronization a channel's writers use (GRB_CONFIG_SYNC_PER_CPU). */
enum grb_write_path {
	GRB_WRITE_ATOMIC = 0,   /* locked atomics (docs/design.md 5-7) */
	GRB_WRITE_RSEQ = 1,     /* per-CPU restartable sequences (25) */
};

/* Why a channel took its path. */
enum grb_path_reason {
	GRB_PATH_AS_ASKED = 0,      /* the path the configuration asked for */
	GRB_PATH_NO_ARCH = 1,       /* no rseq sections for this CPU
				       architecture (x86-64 only so far) */
	GRB_PATH_NO_RSEQ = 2,       /* the C library's rseq registration is
				       absent or failed (valgrind, seccomp, an
				       old kernel, another library owning it,
				       glibc.pthread.rseq=0) */
	GRB_PATH_NO_MEMBARRIER = 3, /* membarrier's rseq command refused
				       (Linux < 5.10, seccomp) */
	GRB_PATH_SHARED = 4,        /* a shared channel, or a configuration
				       with GRB_CONFIG_SHARED: membarrier
				       cannot reach writers in other
				       processes */
	GRB_PATH_ENV = 5,           /* GRB_SYNC=atomic in the environment */
	GRB_PATH_SANITIZER = 6,     /* grb built with ThreadSanitizer, which
				       cannot see the sections' plain stores */
};

/**
 * grb_channel_write_path - the synchronization a channel's writers use.
 * @chan: channel.
 * @why: NULL, or where to store an enum grb_path_reason: GRB_PATH_AS_ASKED
 *       when the channel took the path its configuration asked for, else
 *       why it fell back to the atomic path.
 *
 * Decided once, at creation; a channel attached from another process
 * (grb/shm.h) always reports GRB_WRITE_ATOMIC, with GRB_PATH_SHARED when
 * its configuration asks for the per-CPU path (whatever the environment
 * and the build) and GRB_PATH_AS_ASKED otherwise.  When several reasons
 * apply, the first of NO_ARCH, SANITIZER, ENV, SHARED, NO_RSEQ and
 * NO_MEMBARRIER, in that order, is reported (a shared configuration under
 * GRB_SYNC=atomic reports ENV; one under valgrind reports SHARED).
 * Return: GRB_WRITE_ATOMIC or GRB_WRITE_RSEQ; -EINVAL when @chan is NULL.
 * Context: any thread.  Ordering: none.
 */
GRB_API int grb_channel_write_path(const struct grb_channel *chan,
				   enum grb_path_reason *why);

/*
 * Counters of one buffer.  When writers and the reader are quiescent and
 * the buffer is flushed and drained:
 *   written == read + overwritten
 * and every reservation refused for a loss (-EBUSY, -ENOBUFS, -EIO,
 * -ENOSPC of grb_reserve()) is in exactly one lost_* counter; the
 * refusals that are not losses (-EAGAIN, -ESHUTDOWN, -EINVAL) are in
 * none.  The nesting and journal checks come first (grb/writer.h): on a
 * disabled or finalized buffer a reservation refused by them is -EBUSY,
 * counted in lost_nesting.
 */
struct grb_buf_stats {
	uint64_t written;       /* records committed */
	uint64_t read;          /* records in sub-buffers the reader consumed */
	uint64_t overwritten;   /* records in sub-buffers writers pushed the
				   reader past (overwrite mode) */
	uint64_t lost_full;     /* refused: buffer full (discard mode) */
	uint64_t lost_wrap;     /* refused: next sub-buffer not committed */
	uint64_t lost_big;      /* refused: larger than a sub-buffer */
	uint64_t lost_nesting;  /* refused: nesting deeper than the bound,
				   or no journal entry (shared buffers) */
	uint64_t discarded;     /* reservations abandoned with
				   grb_try_discard_reserve(): never written,
				   never read, not a loss */
	uint64_t produced;      /* write position, bytes */
	uint64_t consumed;      /* read position, bytes */
	uint64_t lost_dead;     /* reserved by a writer that died before
				   committing; skipped by recovery
				   (grb/recover.h), never read */
	uint64_t recovered;     /* sub-buffers completed by recovery */
	/*
	 * Per-CPU (rseq) path only, else 0 (grb_channel_write_path()).
	 * remote_commits: commits (of records, or of a sub-buffer's header
	 * or padding) made off the buffer's CPU: by a writer that migrated
	 * between reserve and commit, by another thread it handed the
	 * context to, by a flush running off that CPU, or by a thread
	 * without rseq; and, on the
	 * buffer's CPU, by a thread whose section aborted 16 times in a
	 * row (a debugger single-stepping it).
	 * remote_moves: write-position moves by the remote protocol: every
	 * flush that moves the position, from whatever CPU; discards and
	 * reservations made off the buffer's CPU, or by a thread without
	 * rseq (not those of a thread with rseq on it); and reservations
	 * that gave up after 16 aborts as above.  Each one cost a membarrier()
	 * system call (docs/design.md section 25).  A flush, discard or
	 * reservation that moves nothing is not counted: one refused
	 * (-ENODATA, -ENOBUFS, -EIO, -EBUSY, or any refusal of
	 * grb_reserve()), or a discard of a slot that ends at its
	 * sub-buffer's end (it succeeds with the position already past
	 * it); though a flush or discard refused off the buffer's CPU, or
	 * a refused GRB_FLUSH_EMPTY, may still have made the system call.
	 */
	uint64_t remote_commits;
	uint64_t remote_moves;
};

/**
 * grb_buf_get_stats - read a buffer's counters.
 * @buf: buffer.
 * @st: receives the counters.
 *
 * Each counter is read atomically; the set is a consistent snapshot only
 * when the buffer is quiescent.  written includes records committed in
 * sub-buffers not yet delivered.
 * Return: 0, or -EINVAL for a NULL argument.
 * Context: any thread.
 */
GRB_API int grb_buf_get_stats(const struct grb_buf *buf, struct grb_buf_stats *st);

/**
 * grb_channel_get_stats - the sum of grb_buf_get_stats() over all buffers,
 * field by field (produced and consumed included).
 * Return: 0, or -EINVAL for a NULL argument.
 * Context: any thread; a snapshot as grb_buf_get_stats() says.
 */
GRB_API int grb_channel_get_stats(const struct grb_channel *chan,
		      struct grb_buf_stats *st);

struct grb_memory {
	uint64_t data_bytes;     /* nr_bufs x physical sub-buffers x size */
	uint64_t control_bytes;  /* descriptions, counters, ids, metadata,
				    and in shared memory the writers'
				    journal (grb/recover.h) */
	uint64_t total_bytes;    /* their sum: what the channel maps, plus
				    its struct grb_channel and struct
				    grb_buf handles on the heap (counted
				    in control_bytes) */
	unsigned int nr_bufs;
	uint64_t subbufs_per_buf;  /* num_subbuf, + 1 in overwrite mode */
};

/**
 * grb_channel_memory - what a channel's buffers occupy.
 * Return: 0, or -EINVAL for a NULL argument.
 */
GRB_API int grb_channel_memory(const struct grb_channel *chan, struct grb_memory *mem);

/**
 * grb_strerror - a short message for a grb return code.
 * @err: a negative errno returned by a grb function (or 0).
 * Return: a static string; never NULL.
 */
GRB_API const char *grb_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* GRB_CHANNEL_H */
