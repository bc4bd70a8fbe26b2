/* SPDX-License-Identifier: MIT */
/*
 * grb/output.h - moving data out: record payloads copied into a caller's
 * buffer, and whole sub-buffers written or spliced to a file descriptor.
 *
 * These are the three outputs of the 2010 proposal: read (payloads, a
 * record split across calls when the caller's buffer is short), write and
 * splice (delivered sub-buffers as they are, sub-buffer header included,
 * padding after data_size left out).  The in-process mmap view of a
 * sub-buffer is grb_reader_held()'s pointer.
 *
 * Concurrency: the calls act as the buffer's (or channel's) reader and
 * run concurrently with writers; one reader at a time.  Not signal-safe.
 */
#ifndef GRB_OUTPUT_H
#define GRB_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "grb/api.h"

#ifdef __cplusplus
extern "C" {
#endif

struct grb_buf;
struct grb_buf_iter;
struct grb_chan_iter;

/**
 * grb_buf_iter_read / grb_chan_iter_read - copy record payloads, back to
 * back, into @dst.
 * @it: iterator (grb/iter.h); records come in its order.
 * @dst: destination.
 * @cap: bytes at @dst.
 * @len: receives the bytes copied (0 when nothing is available).
 *
 * A record that does not fit in what is left of @dst is split: its first
 * bytes end this call, the rest starts the next one (the iterator keeps
 * the record and the offset reached in it).  Record boundaries are not
 * marked; a caller that needs them uses the iterators directly.  A
 * _next() call on the iterator while a record is split returns that
 * record whole and forgets the split.  A record that does not decode is
 * skipped and counted as the _next() functions say, and the copy goes on.
 * Losses: no record reaches the caller, so the losses the iterator
 * reports with a record (grb_iter_record.lost) are not reported by these
 * calls: they stay in grb_buf_iter_lost() / grb_chan_iter_lost() (and out
 * of grb_chan_iter_stats()'s lost) until a _next() call returns a record
 * of that buffer, which then carries them.
 * Return: 0 (with *@len > 0, or *@len == 0 when nothing is readable now,
 * or when what was read were records with empty payloads);
 * -ENODATA when finalized and drained (a snapshot: at its end) and
 * nothing is pending (a call that copied something, or consumed records
 * with empty payloads, returns 0, the next one -ENODATA); -EBADMSG from
 * an attached reader (grb/shm.h)
 * whose mapping names no sub-buffer of its buffer, as the iterator's
 * _next(); -EINVAL for NULL arguments or @cap == 0.
 * Context: the iterator's thread; not signal-safe.
 * Ordering: as the iterator's _next().
 */
GRB_API int grb_buf_iter_read(struct grb_buf_iter *it, void *dst, size_t cap,
			      size_t *len);
GRB_API int grb_chan_iter_read(struct grb_chan_iter *it, void *dst,
			       size_t cap, size_t *len);

/**
 * grb_buf_write - write delivered sub-buffers to a file descriptor with
 * write(2), consuming them.
 * @buf: buffer, open for reading, holding nothing.
 * @fd: destination (a file, a pipe, a socket).
 * @max: at most this many sub-buffers (0: all those closed when the call
 *       begins, so that it ends while writers go on delivering).
 * @bytes: receives the bytes of the sub-buffers written whole (may be
 *         NULL); after an error, part of the failed one may follow them
 *         in @fd (a caller that retries into a regular file can truncate
 *         it to where they end).
 *
 * Each sub-buffer is written from its first byte to data_size (its
 * header included, the padding after data_size left out), then given
 * back (grb_reader_put_next()).  A short write is continued, EINTR is
 * retried, and a non-blocking @fd that is full (EAGAIN) is waited for
 * with poll(2): a sub-buffer is consumed only once all of it is written,
 * and the output never ends inside one but at an error.  Writing to a
 * pipe or socket whose reader is gone raises SIGPIPE, as write(2) does;
 * ignore it to get -EPIPE.
 * Return: 0 (also when nothing was delivered); -ENODATA when finalized and
 * drained and nothing was written by this call; the negative errno of
 * write(2) or poll(2), or -EIO when write(2) took nothing without saying
 * why (that sub-buffer is then put back unconsumed in discard mode, so
 * the next call starts with it; in overwrite mode it is lost and counted
 * as read, as the reader claimed it); -EBADF when @fd is not open, or is
 * open for reading only (checked before any sub-buffer is taken, so
 * nothing is consumed); -EBADMSG from an attached reader whose mapping is
 * inconsistent, as grb_reader_get_next(); -EBUSY when a sub-buffer is
 * held; -EPERM when not open; -EINVAL for NULL @buf or a negative @fd.
 * Context: the buffer's reader; not signal-safe; may block in write(2).
 * Ordering: as grb_reader_get_next() and grb_reader_put_next().
 */
GRB_API int grb_buf_write(struct grb_buf *buf, int fd, uint64_t max,
			  uint64_t *bytes);

/**
 * grb_buf_splice - as grb_buf_write(), without copying through user space:
 * vmsplice(2) of the sub-buffer's pages into @pipe_fds[1], then splice(2)
 * from @pipe_fds[0] to @fd.
 * @pipe_fds: a pipe the caller created (pipe2(2)) and owns, empty; it is
 *            empty on return.  NULL: the call makes one, as large as a
 *            sub-buffer when the system allows (F_SETPIPE_SZ), and closes
 *            it.  A sub-buffer larger than the pipe goes through it in
 *            pieces of its capacity (F_GETPIPE_SZ).
 *
 * The sub-buffer is held until splice has moved all of its bytes out of
 * the pipe, so the kernel no longer references its pages when writers may
 * reuse them.  That holds when @fd is a regular file (the page cache
 * copies); splicing into a pipe or a socket can leave the kernel holding
 * references after the call, so for any other @fd, and for a file opened
 * with O_APPEND (which splice(2) refuses), this copies with write(2), as
 * grb_buf_write() does.  EINTR and EAGAIN are handled as there.
 * Return: as grb_buf_write(), with the errno of vmsplice(2), splice(2),
 * pipe2(2), fstat(2) or fcntl(2); -EBADF for a bad @fd (as
 * grb_buf_write()), or, when @fd is one splice is used for (a regular file
 * without O_APPEND), @pipe_fds that are not the read end and the write end
 * of one pipe, in that order (for any other @fd they are not used);
 * -EINVAL, in that case too, for a pipe that is not empty (its bytes are
 * left in it); all are checked before any sub-buffer is taken.
 * Context: as grb_buf_write().
 * Ordering: as grb_buf_write().
 */
GRB_API int grb_buf_splice(struct grb_buf *buf, int fd, const int *pipe_fds,
			   uint64_t max, uint64_t *bytes);

#ifdef __cplusplus
}
#endif

#endif /* GRB_OUTPUT_H */
