/* SPDX-License-Identifier: MIT */
/*
 * grb/recover.h - a writer process that dies between reserve and commit
 * never stalls a shared buffer.
 *
 * Without recovery, a sub-buffer holding a reservation that will never
 * be committed is never delivered: the reader waits for it forever, and
 * writers that come round to it again are refused (lost_wrap).  Every
 * thread that writes to a shared buffer (grb/shm.h) records what it is
 * doing to the write position in the buffer's journal, in the shared
 * mapping (grb/impl/journal.h); a process that reads the buffer, usually
 * the consumer, calls grb_channel_recover() now and then.  For each
 * sub-buffer that is closed but not delivered, and stayed so for the
 * deadline, it checks the journal: when every thread with a reservation
 * in it belongs to a process that is gone (no such pid, a zombie, or
 * another process with the same pid, the recovering process itself
 * included, told apart by its start time in /proc/PID/stat), it works
 * out which of their bytes were never committed, turns them into padding
 * the client's decoder skips (struct grb_client_cb.record_pad; the basic
 * client has one) or ends the sub-buffer before them, and delivers the
 * sub-buffer.  Those records are counted in lost_dead (grb_buf_stats);
 * records committed before the writer died are delivered as any others
 * (with a client without record_pad, those after a dead record in its
 * sub-buffer are cut off with it, as grb/config.h says).
 *
 * A sub-buffer in which a live thread holds a reservation is left alone,
 * however long it takes: recovery never races with a live writer, even
 * one whose pid and thread id a dead writer had (it takes a journal slot
 * of its own, with its own start time).
 *
 * Limits.  At most GRB_JOURNAL_SLOTS threads may write to one shared
 * buffer at a time: a thread holds its journal slot from its first write
 * to the buffer until it exits, whether or not it holds a reservation,
 * and the slot of a thread that exited is claimed again; one beyond is
 * refused with -EBUSY and counted in lost_nesting.  A
 * signal handler that reserves in a shared buffer must commit (or
 * discard) before it returns, not hand its context to another thread.
 * Recovery takes any number of dead reservations in one sub-buffer (a
 * writer killed between reserve and commit leaves a record certainly
 * uncommitted), but at most 20 uncertain pieces (a reservation whose
 * CAS may not have happened, a commit that may have, or the padding or
 * header of a sub-buffer switch that was under way) besides those that
 * overlap a certainly uncommitted one: a sub-buffer with more, such as
 * 21 writers killed between their journal entry and their CAS, is left
 * stuck (counted in `waiting`).  A dead record's bytes are known only
 * from the commit counter's sum: when two writers died in the same
 * sub-buffer and more than one set of their reservations adds up to what
 * is missing, the union is damaged, which may take a committed record
 * with it (counted in `ambiguous`; a record slot so taken is counted in
 * `records` and lost_dead as the dead ones are when the record of a dead
 * entry in the union begins where it does; one a longer dead entry
 * covers from an earlier start is lost uncounted).  A writer that died
 * after journaling but before its CAS reserved nothing: where its
 * entry's record begins where a dead record does, that record is counted
 * once.
 * A record that follows padding may have a compressed timestamp taken
 * relative to the dead record's: decoders expand it from the record
 * before the padding, which is exact unless the two are more than 2^32
 * clock units apart.  Only one process should recover a buffer at a
 * time (its reader).  The start time counts clock ticks (10 ms at
 * USER_HZ 100): a pid reused within the tick in which the dead process
 * started, or any reused pid when /proc cannot be read, is taken as the
 * same process, alive, and its sub-buffers wait while that process
 * lives.  Pids are the writers' as the recovering process sees them: the
 * writers and the recoverer must share a pid namespace.
 */
#ifndef GRB_RECOVER_H
#define GRB_RECOVER_H

#include "grb/api.h"

#include <stdint.h>

#include "grb/impl/journal.h"   /* GRB_JOURNAL_SLOTS */

#ifdef __cplusplus
extern "C" {
#endif

struct grb_buf;
struct grb_channel;

/* What one call did. */
struct grb_recover_info {
	uint64_t subbufs;       /* sub-buffers completed and delivered */
	uint64_t records;       /* dead writers' records in them, never
				   delivered (added to lost_dead) */
	uint64_t bytes;         /* bytes turned into padding or cut off */
	uint64_t ambiguous;     /* sub-buffers recovered by the union rule
				   above: a committed record may be lost */
	uint64_t waiting;       /* stuck sub-buffers left as they are: the
				   deadline has not passed, a live thread
				   holds them, or the journal does not
				   account for what is missing (yet) */
};

/**
 * grb_buf_recover - complete the sub-buffers of @buf that dead writers
 * left incomplete.
 * @buf: a buffer of a shared channel, created or attached (any role).
 * @deadline_ns: leave the buffer's stuck sub-buffers alone until this
 *               handle has seen the oldest of them stuck for this long
 *               (0: at once).  The clock starts at the first call that
 *               finds that one stuck; once it has run out, the stuck
 *               sub-buffers after it are completed in the same call
 *               (none can be read before it anyway).
 * @info: receives what the call did (may be NULL).
 * Return: the number of sub-buffers delivered (0 when none needed it or
 * none could be); -EINVAL for NULL @buf; -EOPNOTSUPP for a private
 * channel's buffer (its writers die with its reader); -ENOMEM when the
 * scratch for a stuck sub-buffer (about 150 KiB, freed before the call
 * returns) cannot be allocated: nothing was changed.
 * Context: one thread per buffer at a time; never concurrently with
 * another process recovering the same buffer.  Not signal-safe.  Reads
 * /proc and calls kill(pid, 0) for the pids in the journal.
 */
GRB_API int grb_buf_recover(struct grb_buf *buf, uint64_t deadline_ns,
			    struct grb_recover_info *info);

/**
 * grb_channel_recover - grb_buf_recover() on every buffer of @chan.
 * Return: the sum of their returns, @info receiving the sums; -EINVAL
 * for NULL @chan; -EOPNOTSUPP for a private channel; or, at once, the
 * first error a buffer returns (-ENOMEM): the buffers before it stay as
 * their calls left them, and @info is not written.
 */
GRB_API int grb_channel_recover(struct grb_channel *chan, uint64_t deadline_ns,
				struct grb_recover_info *info);

#ifdef __cplusplus
}
#endif

#endif /* GRB_RECOVER_H */
