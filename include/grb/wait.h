/* SPDX-License-Identifier: MIT */
/*
 * grb/wait.h - waiting for data without polling: a blocking wait per
 * buffer and per channel, and an event file descriptor for poll/epoll.
 *
 * The wait word is a futex inside the buffer's mapping, so a reader in
 * another process that maps the buffer waits the same way (the event fd
 * does not: it is fed only by commits made through its own channel
 * handle, grb_channel_event_fd()).  Writers pay nothing while no reader
 * waits: a commit loads one word (GRB_WAIT_* bits on a line no writer
 * writes) and finds it zero.  A reader that arms a wait sets that word;
 * the first commit (or delivery) that meets the watermark takes the bits
 * back with one atomic and-not and makes the one wake-up call.  The
 * ordering that keeps a wake-up from being lost is in docs/design.md,
 * section 20, and in the Spin model.
 *
 * Concurrency: one reader per buffer (grb/reader.h); a channel wait or an
 * armed event fd counts as reading every buffer of the channel.  An
 * arming stands while its reader blocks in a wait: the fd still becomes
 * readable at the arming's watermark (or at the wait's, when lower: a
 * readiness is only a hint).  Writers run concurrently.  None of these
 * functions is signal-safe.
 */
#ifndef GRB_WAIT_H
#define GRB_WAIT_H

#include <stddef.h>
#include <stdint.h>

#include "grb/api.h"

#ifdef __cplusplus
extern "C" {
#endif

struct grb_buf;
struct grb_channel;

/*
 * When a waiting reader is woken: as soon as either is true.
 *   subbufs  this many sub-buffers past the consumed position are
 *            delivered (0 means 1);
 *   bytes    this many bytes past the consumed position are readable:
 *            each delivered sub-buffer counts whole (subbuf_size, its
 *            padding included), and in discard mode the bytes
 *            committed live in the open one count too, its client
 *            header included (grb_reader_live()'s data_size); 0 turns
 *            it off, and a count that would take the position past
 *            UINT64_MAX is never met.  A subbufs above the ring's size
 *            counts as the ring's size.
 * A finalized buffer wakes its waiter as soon as nothing more can come:
 * with sub-buffers left to read, the wait returns 0 (the watermark counts
 * as met, even one the buffer will never reach); with none, -ENODATA.
 */
struct grb_watermark {
	uint64_t subbufs;
	uint64_t bytes;
};

/* Wait forever. */
#define GRB_WAIT_FOREVER (-1)

/**
 * grb_buf_wait - block until the buffer's reader has something to read.
 * @buf: buffer, open for reading.
 * @wm: watermark, or NULL for one delivered sub-buffer.
 * @timeout_ns: nanoseconds to wait at most; 0 only checks;
 *              GRB_WAIT_FOREVER waits without limit, as does a timeout
 *              whose end lies past CLOCK_MONOTONIC's range (INT64_MAX
 *              nanoseconds, about 292 years).
 *
 * Return: 0 when the watermark is met (the data may already be there on
 * entry); -ENODATA when the buffer is finalized and drained; -ETIMEDOUT
 * when the time ran out first; -EPERM when the buffer is not open for
 * reading; -EINVAL for NULL @buf or a negative timeout other than
 * GRB_WAIT_FOREVER.  A signal does not end the wait early.
 * Context: the buffer's reader thread.
 * Ordering: acquire: what the wake-up reports is visible to the reader.
 */
GRB_API int grb_buf_wait(struct grb_buf *buf, const struct grb_watermark *wm,
			 int64_t timeout_ns);

/**
 * grb_channel_wait - block until any buffer of the channel meets @wm.
 * @chan: channel whose buffers are all open for reading.
 * @wm: per-buffer watermark, or NULL for one delivered sub-buffer.
 * @timeout_ns: as grb_buf_wait().
 *
 * Return: 0 when some buffer meets the watermark; -ENODATA when every
 * buffer is finalized and drained; -ETIMEDOUT; -EPERM when a buffer is not
 * open for reading; -EINVAL for NULL @chan or a bad timeout.
 * Context: the channel's reader thread.  Ordering: acquire.
 */
GRB_API int grb_channel_wait(struct grb_channel *chan,
			     const struct grb_watermark *wm,
			     int64_t timeout_ns);

/**
 * grb_channel_event_fd - a file descriptor an event loop can poll.
 * @chan: channel.
 * @fd: receives a non-blocking eventfd, owned by the channel (closed by
 *      grb_channel_destroy()); the same one on every call.
 *
 * It becomes readable only after an arming: after grb_channel_arm()
 * returned -EAGAIN and a buffer then met the watermark, or while an
 * arming runs that then returns 0 (a writer that met the watermark
 * between the arming and the check after it wakes it all the same).
 * Each buffer's writers write to it at most once per arming, from the
 * commit that wakes, so a read normally finds at most the number of
 * buffers; a wake-up late enough to land after the next arming started
 * can add one to it.  A readiness is only a hint: read the fd (or arm
 * again) to clear it, and treat a wake-up that finds nothing as
 * spurious.
 * Only commits made through this channel handle write it (an eventfd is
 * this process's).  A channel attached to shared buffers (grb/shm.h),
 * whose writers all write through other handles, has none: wait with
 * grb_channel_wait() there.  On a shared channel created here, a commit
 * made through an attached writer's handle clears an arming without
 * writing the fd: poll it only while no writer is attached.
 * Return: 0; -EINVAL for NULL; -ENOTSUP for an attached channel; the
 * negative errno of eventfd(2).
 * Context: any thread, not concurrently with grb_channel_destroy().
 */
GRB_API int grb_channel_event_fd(struct grb_channel *chan, int *fd);

/**
 * grb_channel_arm - arm the event fd before polling it.
 * @chan: channel with an event fd, every buffer open for reading.
 * @wm: per-buffer watermark, or NULL for one delivered sub-buffer.
 *
 * Return: 0 when a buffer already meets @wm (do not poll: read now, the fd
 * is not armed; a wake-up this arming or an earlier one started may still
 * make it readable once: read the fd, or arm again, before polling it);
 * -EAGAIN when armed: poll the fd; -ENODATA when every
 * buffer is finalized and drained; -EBADF when there is no event fd yet;
 * -EPERM when a buffer is not open for reading (nothing is changed: a
 * readiness an earlier arming left on the fd stays); -EINVAL for NULL
 * @chan.
 * Context: the channel's reader thread.  Ordering: as grb_channel_wait().
 */
GRB_API int grb_channel_arm(struct grb_channel *chan,
			    const struct grb_watermark *wm);

#ifdef __cplusplus
}
#endif

#endif /* GRB_WAIT_H */
