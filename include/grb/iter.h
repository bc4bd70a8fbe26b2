/* SPDX-License-Identifier: MIT */
/*
 * grb/iter.h - record iterators: the records of one buffer in order, and
 * the records of a whole channel merged in timestamp order.
 *
 * An iterator decodes each record with the client's record_decode
 * callback, rebuilds its timestamp in full (a compressed one is the
 * previous record's with the low timestamp_bits replaced), and reports
 * how many records the buffer lost before it.  It takes sub-buffers
 * through the reader protocol (grb/reader.h) and is the buffer's reader
 * for as long as it exists: it opens the buffers when created and
 * releases them when destroyed.
 *
 * Two forms:
 *  - GRB_ITER_CONSUME: records are gone once returned; a sub-buffer is
 *    consumed (grb_reader_get_next()) when the iterator starts on it and
 *    given back when it moves past its last record (by the call after
 *    the one that returned that record).  In discard mode it
 *    also returns records live from the sub-buffer writers are filling
 *    (grb_reader_live()), and resumes after them when that sub-buffer is
 *    delivered.
 *  - GRB_ITER_SNAPSHOT: a flight recorder's content as it is now, read
 *    without consuming it (grb_reader_get_subbuf()); the iterator ends
 *    (-ENODATA) at the write position it saw when created, while writers
 *    go on: at the end of the last sub-buffer closed by then (a
 *    sub-buffer still open then is not part of it: flush first to
 *    include it).  A sub-buffer overwritten before the iterator reaches it is
 *    skipped and its loss reported.
 *
 * Losses: grb_iter_record.lost counts the records this buffer refused or
 * had overwritten since the previous record the iterator returned from
 * it, and those the iterator skipped because they did not decode (-EIO
 * below).  It is exact in total (the sum over a run, plus what
 * grb_buf_iter_lost() reports at the end, equals the buffer's loss
 * counters plus the skipped records), and exact in place to within a
 * sub-buffer: a refusal is reported before the first record of the next
 * sub-buffer that opened after it, an overwritten sub-buffer at the gap
 * it leaves.  In overwrite mode, what the buffer lost before the iterator
 * was created (sub-buffers pushed out before it took one) goes with its
 * first record.
 *
 * Concurrency: an iterator is used by one thread at a time; writers run
 * concurrently.  Not signal-safe.
 */
#ifndef GRB_ITER_H
#define GRB_ITER_H

#include <stddef.h>
#include <stdint.h>

#include "grb/api.h"
#include "grb/config.h"

#ifdef __cplusplus
extern "C" {
#endif

struct grb_buf;
struct grb_channel;
struct grb_buf_iter;
struct grb_chan_iter;

enum grb_iter_mode {
	GRB_ITER_CONSUME = 0,
	GRB_ITER_SNAPSHOT = 1,
};

/* grb_iter_record.flags */
enum grb_iter_flag {
	/*
	 * Channel iterator only: the record's timestamp is below one the
	 * iterator already returned (a clock that went backwards across
	 * CPUs, or a record the merge could not wait for).  It is returned
	 * in place, not reordered, and counted (grb_chan_iter_stats()).
	 */
	GRB_ITER_LATE = 1u << 0,
	/* The record was read live, from a sub-buffer not yet closed. */
	GRB_ITER_LIVE = 1u << 1,
};

/* One record, as the iterators return it. */
struct grb_iter_record {
	uint64_t timestamp;     /* rebuilt in full (0 without a clock) */
	const void *payload;    /* valid until the next call on the iterator */
	size_t payload_len;
	struct grb_buf *buf;    /* the buffer it came from */
	int cpu;                /* that buffer's CPU, -1 for per channel */
	uint64_t pos;           /* position of the record's slot */
	uint64_t lost;          /* records lost in this buffer before it
				   (refused, overwritten, undecodable) */
	unsigned int flags;     /* GRB_ITER_* */
	struct grb_record rec;  /* as record_decode described it; offsets
				   are from the sub-buffer's start */
};

/**
 * grb_buf_iter_create - an iterator over one buffer's records.
 * @buf: buffer; the iterator opens it for reading.
 * @mode: GRB_ITER_CONSUME or GRB_ITER_SNAPSHOT.
 * @out: receives the iterator.
 * Return: 0; -EINVAL for NULL or an unknown mode; -ENOTSUP when the
 * client has no record_decode; -EBUSY when the buffer already has a
 * reader; -ENOMEM.
 * Context: any thread; not signal-safe.
 */
GRB_API int grb_buf_iter_create(struct grb_buf *buf, enum grb_iter_mode mode,
				struct grb_buf_iter **out);

/**
 * grb_buf_iter_next - the next record of the buffer.
 * @it: iterator.
 * @r: receives the record.
 * Return: 0; -EAGAIN when nothing more is readable now (wait with
 * grb_buf_wait(), or flush); -ENODATA when the buffer is finalized and
 * drained, or, for a snapshot, at its end; -EIO when a record does not
 * decode: the rest of its sub-buffer is skipped and its records counted
 * as lost (reported with the next record; read live, the records
 * committed into that rest later too), and the next call goes on;
 * -EBADMSG (a reader attached to shared buffers, grb/shm.h) when the
 * mapping names no sub-buffer of the buffer (a snapshot, and a consuming
 * iterator in discard mode, meet that sub-buffer again at the next call;
 * in overwrite mode a consuming iterator's grb_reader_get_next() consumed
 * it, and the buffer counts its records as read: none is returned or
 * reported lost); -EINVAL for NULL.
 * Ordering: acquire (as grb_reader_get_next()).
 */
GRB_API int grb_buf_iter_next(struct grb_buf_iter *it,
			      struct grb_iter_record *r);

/**
 * grb_buf_iter_lost - losses not yet reported with a record: the buffer's
 * refused, overwritten and undecodable records since the last record
 * returned.
 * Return: the count (0 for NULL).
 */
GRB_API uint64_t grb_buf_iter_lost(struct grb_buf_iter *it);

/**
 * grb_buf_iter_destroy - release the buffer and free the iterator.  In
 * GRB_ITER_CONSUME mode a delivered sub-buffer it was in is consumed
 * whole; records it returned live (GRB_ITER_LIVE) from the open
 * sub-buffer are not consumed, as that sub-buffer is still being
 * written: the buffer's next reader gets them again.  NULL is a no-op.
 */
GRB_API void grb_buf_iter_destroy(struct grb_buf_iter *it);

/**
 * grb_chan_iter_create - an iterator over every buffer of a channel,
 * merged in timestamp order.
 * @chan: channel; the iterator opens all its buffers for reading.
 * @mode: GRB_ITER_CONSUME or GRB_ITER_SNAPSHOT.
 * @out: receives the iterator.
 *
 * Records come out by (timestamp, buffer index, position): a priority
 * heap over the buffers, O(log buffers) per record.  A record is returned
 * only when no buffer can still produce an earlier one: every other
 * buffer either has a record waiting, or is known to write nothing older
 * (its last sub-buffer read ended at or after that timestamp, or it is
 * finalized and drained).  A buffer that writes nothing therefore holds
 * the merge back (-EAGAIN) until it closes a sub-buffer: call
 * grb_channel_tick() (grb/timer.h) once a period with GRB_TICK_IDLE,
 * which delivers an empty sub-buffer for a buffer with none open that
 * wrote nothing for a whole period (one that wrote since the previous
 * tick, or at the first tick since its creation, needs one tick more),
 * and GRB_TICK_FLUSH, which closes one left open with data for a whole
 * period (one whose records were read live included), or run the tick
 * thread.  docs/design.md section 21
 * explains the rule.  A channel without a clock (timestamp_bits 0) has no
 * time order across buffers to keep: a record is returned as soon as its
 * buffer has it (lowest buffer index first among those waiting), and no
 * buffer holds the merge back.
 * Return: as grb_buf_iter_create(), per buffer.
 * Context: any thread; not signal-safe.
 */
GRB_API int grb_chan_iter_create(struct grb_channel *chan,
				 enum grb_iter_mode mode,
				 struct grb_chan_iter **out);

/**
 * grb_chan_iter_next - the next record of the channel in timestamp order.
 * @it: iterator.
 * @r: receives the record.
 * Return: 0; -EAGAIN when the next record cannot be decided yet (a buffer
 * has nothing readable and may still write something older: wait, tick,
 * or flush); -ENODATA when every buffer is finalized and drained (for a
 * snapshot, at its end); -EIO as grb_buf_iter_next(); another negative
 * errno of a buffer's reader, as grb_buf_iter_next() returns it (-EBADMSG
 * for a shared mapping naming no sub-buffer of its buffer); -EINVAL for
 * NULL.
 */
GRB_API int grb_chan_iter_next(struct grb_chan_iter *it,
			       struct grb_iter_record *r);

/* What a channel iterator has seen so far. */
struct grb_chan_iter_stats {
	uint64_t records;       /* returned */
	uint64_t late;          /* returned with GRB_ITER_LATE */
	uint64_t lost;          /* reported lost with the records returned,
				   all buffers (what grb_chan_iter_lost()
				   still holds is not in it) */
	uint64_t undecodable;   /* -EIO returned */
};

/**
 * grb_chan_iter_stats - counts of a channel iterator.
 * Return: 0; -EINVAL for NULL.
 */
GRB_API int grb_chan_iter_stats(const struct grb_chan_iter *it,
				struct grb_chan_iter_stats *st);

/**
 * grb_chan_iter_lost - as grb_buf_iter_lost(), summed over the buffers:
 * losses not yet reported with a record.
 * Return: the count (0 for NULL).
 */
GRB_API uint64_t grb_chan_iter_lost(struct grb_chan_iter *it);

/** grb_chan_iter_destroy - as grb_buf_iter_destroy(), for every buffer. */
GRB_API void grb_chan_iter_destroy(struct grb_chan_iter *it);

/*
 * Callback consumption, in the style of libbpf's ring buffer: a function
 * called for each record; returning non-zero stops the loop after that
 * record (which counts as consumed).
 */
typedef int (*grb_record_fn)(void *arg, const struct grb_iter_record *r);

/**
 * grb_buf_iter_consume / grb_chan_iter_consume - call @fn on every record
 * available now, in the iterator's order.
 * @it: iterator.
 * @fn: callback.
 * @arg: passed to @fn.
 * @count: receives the number of records passed to @fn (0 when the call
 *         is refused); may be NULL.
 *
 * An undecodable record (-EIO from next) is skipped and counted as the
 * iterator says; the loop goes on.
 * Return: 0 when nothing more is available now; -ECANCELED when @fn
 * stopped the loop; -ENODATA when every buffer is finalized and drained,
 * or a snapshot is at its end (after the last record); another negative
 * errno of the iterator's _next() other than -EIO (-EBADMSG for a shared
 * mapping naming no sub-buffer of its buffer), which ends the loop after
 * the records before it; -EINVAL for NULL @it or @fn.
 * Context: the iterator's thread; @fn runs on it and may not use @it.
 */
GRB_API int grb_buf_iter_consume(struct grb_buf_iter *it, grb_record_fn fn,
				 void *arg, uint64_t *count);
GRB_API int grb_chan_iter_consume(struct grb_chan_iter *it, grb_record_fn fn,
				  void *arg, uint64_t *count);

/**
 * grb_buf_iter_poll / grb_chan_iter_poll - consume what is available, and
 * if there was nothing, wait for something (grb/wait.h) and consume it.
 * @timeout_ns: nanoseconds to wait at most, or GRB_WAIT_FOREVER (-1).
 *
 * In discard mode the wait wakes on one record committed live; otherwise
 * on one delivered sub-buffer.  A channel merge held back by an idle
 * buffer waits on that buffer: something must close a sub-buffer there
 * (a writer, a flush, or grb_channel_tick()).
 * Return: as the consume functions, and -ETIMEDOUT when nothing was
 * consumed before the time ran out (neither allocates); -EINVAL also
 * for a negative @timeout_ns other than GRB_WAIT_FOREVER, before any
 * record is consumed.
 */
GRB_API int grb_buf_iter_poll(struct grb_buf_iter *it, grb_record_fn fn,
			      void *arg, int64_t timeout_ns, uint64_t *count);
GRB_API int grb_chan_iter_poll(struct grb_chan_iter *it, grb_record_fn fn,
			       void *arg, int64_t timeout_ns, uint64_t *count);

#ifdef __cplusplus
}
#endif

#endif /* GRB_ITER_H */
