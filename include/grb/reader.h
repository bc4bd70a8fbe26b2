/* SPDX-License-Identifier: MIT */
/*
 * grb/reader.h - the read side: one reader per buffer takes whole
 * sub-buffers, reads them in place, and gives them back.
 *
 * Positions are free-running byte offsets in the buffer (they never wrap
 * modulo the buffer size); a sub-buffer is named by the position of its
 * first byte.  The reader consumes sub-buffers in order:
 *
 *	grb_reader_open(buf);
 *	while ((ret = grb_reader_get_next(buf)) != -ENODATA) {
 *		if (ret == -EAGAIN) { wait or flush; continue; }
 *		...read with grb_reader_read() / grb_reader_record()...
 *		grb_reader_put_next(buf);
 *	}
 *	grb_reader_release(buf);
 *
 * In overwrite mode the reader owns a spare sub-buffer: get swaps it with
 * the delivered one, so writers keep going and never touch data being
 * read.  In discard mode the reader reads in place and writers cannot
 * enter the sub-buffer until put_next moves the consumed position.
 *
 * Concurrency: the reader functions of one buffer must not run at the same
 * time as each other (one reader); they run concurrently with writers,
 * flushes and statistics.  None of them is signal-safe.
 */
#ifndef GRB_READER_H
#define GRB_READER_H

#include "grb/api.h"

#include <stddef.h>
#include <stdint.h>

#include "grb/config.h"

#ifdef __cplusplus
extern "C" {
#endif

struct grb_buf;

/**
 * grb_reader_open - become the buffer's reader.
 * Return: 0; -EBUSY when another reader has it open; -EINVAL for NULL.
 * Ordering: acquire.
 */
GRB_API int grb_reader_open(struct grb_buf *buf);

/**
 * grb_reader_takeover - become the reader of a shared buffer whose reader
 * process is gone (a crash tool, a restarted consumer), whether or not it
 * released the buffer.
 * @buf: a buffer of a shared channel (grb/shm.h).
 *
 * What the previous reader held stays held, now by the caller: when
 * grb_reader_held() then returns 0, that sub-buffer is the oldest one
 * not yet consumed (taken with get_next) or pinned (get_subbuf); finish
 * it with the matching put.  The caller asserts that the previous reader
 * will never touch the buffer again: grb does not know who it was.
 * Return: 0 when the caller is now the reader (1 when it took the role
 * from another); -EOPNOTSUPP for a private channel's buffer (its reader
 * lives and dies with its writers); -EINVAL for NULL.
 * Context: any thread; not concurrently with another reader function
 * on @buf in any process.
 * Ordering: acquire, as grb_reader_open().
 */
GRB_API int grb_reader_takeover(struct grb_buf *buf);

/**
 * grb_reader_release - stop reading; a held sub-buffer is put back first
 * (not consumed when it came from get_subbuf, consumed when from get_next).
 * Return: 0; -EPERM when not open; -EINVAL for NULL.
 * Ordering: release.
 */
GRB_API int grb_reader_release(struct grb_buf *buf);

/**
 * grb_reader_snapshot - the positions a reader can read between.
 * @buf: buffer, open for reading.
 * @consumed: receives the consumed position (first unread sub-buffer).
 * @produced: receives the start of the sub-buffer writers are in (every
 *            sub-buffer before it is closed, though maybe not delivered).
 * Return: 0 when at least one closed sub-buffer is not consumed yet
 * (@consumed < @produced: in discard mode one held with get_next still
 * counts, in overwrite mode get_next consumed it); -EAGAIN when none is;
 * -ENODATA when the channel is finalized and everything was consumed;
 * -EPERM when not open; -EINVAL for NULL.
 * Ordering: acquire.
 */
GRB_API int grb_reader_snapshot(struct grb_buf *buf, uint64_t *consumed,
			uint64_t *produced);

/**
 * grb_reader_get_subbuf - pin the sub-buffer at @pos for reading, without
 * consuming it (for snapshots of a flight recorder).
 * @buf: buffer, open for reading.
 * @pos: a sub-buffer position, from a snapshot.
 * Return: 0; -EAGAIN when it is not delivered yet; -ESTALE when it was
 * overwritten or consumed (pos is behind the buffer); -ENODATA when
 * finalized and @pos is at or past the end; -EBUSY when a sub-buffer is
 * already held; -EINVAL when @pos is not sub-buffer aligned or NULL;
 * -EBADMSG (a reader attached to shared buffers, grb/shm.h) when the
 * mapping names no sub-buffer of the buffer; -EPERM when not open.
 * Ordering: acquire; pairs with the release in the delivering commit.
 */
GRB_API int grb_reader_get_subbuf(struct grb_buf *buf, uint64_t pos);

/**
 * grb_reader_put_subbuf - release a sub-buffer from grb_reader_get_subbuf().
 * Return: 0; -EPERM when none is held this way or not open; -EINVAL for
 * NULL.
 * Ordering: release.
 */
GRB_API int grb_reader_put_subbuf(struct grb_buf *buf);

/**
 * grb_reader_get_next - take the oldest unconsumed sub-buffer.
 *
 * In overwrite mode its records count as read (grb_buf_stats.read) from
 * this call on, and the consumed position moves now, as writers could
 * otherwise push it; in discard mode both happen at
 * grb_reader_put_next(), and until then writers cannot enter it.
 * Return: 0; -EAGAIN when none is delivered yet (flush, or wait);
 * -ENODATA when finalized and drained; -EBUSY when a sub-buffer is already
 * held; -EBADMSG (a reader attached to shared buffers, grb/shm.h) when
 * the mapping names no sub-buffer of the buffer; -EPERM when not open;
 * -EINVAL for NULL.
 * Ordering: acquire; pairs with the release in the delivering commit.
 */
GRB_API int grb_reader_get_next(struct grb_buf *buf);

/**
 * grb_reader_put_next - finish a sub-buffer from grb_reader_get_next() and
 * let writers reuse it.
 * Return: 0; -EPERM when none is held this way or not open; -EINVAL for
 * NULL.
 * Ordering: release; pairs with the acquire of the consumed position in
 * the reserve slow path (discard mode).
 */
GRB_API int grb_reader_put_next(struct grb_buf *buf);

/* The sub-buffer the reader holds. */
struct grb_reader_subbuf {
	uint64_t pos;          /* its position */
	uint64_t seq;          /* pos / subbuf_size */
	size_t data_size;      /* valid bytes, header included */
	size_t padded_size;    /* data_size rounded up to the page size */
	uint64_t records;      /* records committed in it */
	const void *data;      /* its first byte, valid until put */
	uint64_t ts_begin;     /* timestamp of the reservation that opened it */
	uint64_t ts_end;       /* of the one that closed it (a flush's, or a
				  discard's); records lie in [ts_begin, ts_end]
				  and every later record of the buffer is at
				  or after ts_end (0s without a clock) */
	/* Records refused or overwritten on the buffer, in total, when it
	 * opened; see docs/design.md section 13 for what it includes. */
	uint64_t lost_open;
};

/**
 * grb_reader_live - look at the committed start of the sub-buffer writers
 * are filling, without closing it (discard mode).
 * @buf: buffer, open for reading, holding nothing.
 * @sb: receives the prefix: pos and seq of the sub-buffer, data_size the
 *      bytes from its start (sub-buffer header included) that are all
 *      committed, records their count, data its first byte, ts_begin and
 *      lost_open as for a delivered one; padded_size equals data_size
 *      (nothing is padded yet); ts_end is 0 (it is not closed).
 *
 * A low-rate stream reaches its reader this way without a flush, which
 * would cost the rest of the sub-buffer.  Nothing is held or consumed:
 * the bytes stay valid and unchanged until the reader consumes that
 * sub-buffer, and a later call may return a longer prefix of the same
 * one (decode from where the last call ended; grb_reader_record() does
 * not apply, call the client's record_decode on sb->data).  When the
 * sub-buffer is delivered, grb_reader_get_next() returns all of it.
 * Return: 0; -EAGAIN when there is no such prefix now: the next
 * sub-buffer to read is already closed (use get_next), none is open, or
 * some reservation in it is not committed yet; -ENODATA when finalized and
 * drained; -ENOTSUP in overwrite mode (writers may come back to the
 * sub-buffer a lap later while it is read: use flush and get_next, or
 * snapshots); -EBUSY when a sub-buffer is held; -EPERM when not open;
 * -EINVAL for NULL.
 * Ordering: acquire; pairs with the commits' release.
 */
GRB_API int grb_reader_live(struct grb_buf *buf, struct grb_reader_subbuf *sb);

/**
 * grb_reader_held - describe the held sub-buffer.
 * Return: 0; -EPERM when none is held (or not open); -EINVAL for NULL;
 * -EBADMSG (a reader attached to shared buffers, grb/shm.h) when the
 * mapping names no sub-buffer, or a data size larger than one, for the
 * held one.  grb_reader_read(), grb_reader_read_cstr() and
 * grb_reader_record() start with this call and return its errors.
 */
GRB_API int grb_reader_held(const struct grb_buf *buf, struct grb_reader_subbuf *sb);

/**
 * grb_reader_read - copy bytes out of the held sub-buffer.
 * @buf: buffer with a held sub-buffer.
 * @offset: first byte, from the sub-buffer start.
 * @dst: destination.
 * @len: bytes to copy.
 * Return: 0; -ERANGE when [offset, offset + len) is not inside the data;
 * -EPERM when none is held; -EINVAL for a NULL @buf, or a NULL @dst with
 * a non-zero @len (an empty copy may name no destination); -EBADMSG as
 * grb_reader_held().
 */
GRB_API int grb_reader_read(const struct grb_buf *buf, size_t offset, void *dst,
		    size_t len);

/**
 * grb_reader_read_cstr - copy a NUL-terminated string out of the held
 * sub-buffer.
 * @buf: buffer with a held sub-buffer.
 * @offset: first byte of the string.
 * @dst: destination, receives the string and its NUL.
 * @cap: bytes available at @dst.
 * @len: receives the string length (without NUL); may be NULL.
 * Return: 0; -ERANGE when @offset is outside the data or no NUL ends the
 * string inside the data; -ENOBUFS when the string does not fit in @cap
 * (@dst then holds a truncated, terminated copy); -EPERM when none is
 * held; -EINVAL for NULL, or a @cap of 0; -EBADMSG as grb_reader_held().
 */
GRB_API int grb_reader_read_cstr(const struct grb_buf *buf, size_t offset, char *dst,
			 size_t cap, size_t *len);

/**
 * grb_reader_record - decode the record whose slot starts at @offset of the
 * held sub-buffer, with the client's record_decode callback.
 * @buf: buffer with a held sub-buffer.
 * @offset: slot start; the first is right after the sub-buffer header
 *          (grb_reader_first_record()), the next is rec->next.
 * @rec: receives the record.
 * Return: 0; -ENODATA when @offset is at or past the end of the data;
 * -EINVAL when the bytes are not a record (or NULL arguments); -ENOTSUP
 * when the client has no decoder; -EPERM when none is held; -EBADMSG as
 * grb_reader_held().
 */
GRB_API int grb_reader_record(const struct grb_buf *buf, size_t offset,
		      struct grb_record *rec);

/**
 * grb_reader_first_record - offset of the first record slot in a
 * sub-buffer: the client's sub-buffer header size (0 for a NULL @buf).
 */
GRB_API size_t grb_reader_first_record(const struct grb_buf *buf);

#ifdef __cplusplus
}
#endif

#endif /* GRB_READER_H */
