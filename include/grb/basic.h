/* SPDX-License-Identifier: MIT */
/*
 * grb/basic.h - a ready-made client: length + timestamp records, per-CPU
 * or single buffer, overwrite or discard, read back record by record.
 *
 * For users who want a ring buffer, not a tracer: no configuration struct
 * to write, no record format to design.  Each record is
 *
 *	u32  length (bits 0-30) | full-timestamp flag (bit 31)
 *	u32  low 32 bits of the timestamp, or u64 full timestamp when flagged
 *	     (always full when timestamp compression is off)
 *	     payload, length bytes
 *
 * aligned on 4 bytes, after a 64-byte sub-buffer header
 * (struct grb_basic_subbuf_header).  Recovery from a dead writer
 * (grb/recover.h) may leave padding in a sub-buffer: the length word
 * 0x7fffffff, then a u32 span from that word to the next record; every
 * reader here skips it.  Timestamps are CLOCK_MONOTONIC
 * nanoseconds.  The library holds one static const configuration per
 * variant, so writes still take the specialised fast path.
 *
 * Concurrency: writes from any thread or signal handler; consume/peek of
 * one CPU's buffer from one thread at a time; reset only while no thread
 * writes or reads.
 */
#ifndef GRB_BASIC_H
#define GRB_BASIC_H

#include <stddef.h>
#include <stdint.h>

#include "grb/api.h"
#include "grb/config.h"

#ifdef __cplusplus
extern "C" {
#endif

struct grb_basic;
struct grb_channel;

struct grb_basic_attr {
	const char *name;
	size_t subbuf_size;          /* as struct grb_channel_attr */
	size_t num_subbuf;
	enum grb_alloc alloc;
	enum grb_mode mode;
	int compress_timestamps;     /* 1: 32 low bits when they suffice */
};

#define GRB_BASIC_MAGIC 0x67726231u   /* "grb1" */

/* Written at the start of every sub-buffer of a basic channel. */
struct grb_basic_subbuf_header {
	uint32_t magic;
	int32_t cpu;
	uint64_t seq;
	uint64_t ts_begin;
	uint64_t ts_end;
	uint64_t data_size;
	uint64_t records;
	uint64_t lost;          /* running lost count at delivery */
	uint64_t overwritten;   /* running overwritten count at delivery */
};

/**
 * grb_basic_create - create a basic channel and open its readers.
 * Return: 0; -EINVAL for NULL or an invalid attribute (see
 * grb_channel_create()); -ENOMEM.
 * Context: any thread; not signal-safe.
 */
GRB_API int grb_basic_create(const struct grb_basic_attr *attr, struct grb_basic **out);

/* The client name of basic channels in shared memory (grb/shm.h). */
#define GRB_BASIC_CLIENT "grb-basic"

struct grb_shm_attr;

/**
 * grb_basic_create_shared - grb_basic_create() with the buffers in shared
 * memory (grb/shm.h), for a consumer in another process.
 * @sattr: where and for whom, as grb_channel_create_shared(); NULL for
 *         owner-only memfds.  Its client name is ignored: basic channels
 *         are GRB_BASIC_CLIENT.
 *
 * The channel's readers are not opened: the consumer opens them, so this
 * handle is as after grb_basic_release_readers() (consume, peek and reset
 * return -EPERM; release_readers returns -EALREADY).  Hand the channel
 * over with grb_channel_send(grb_basic_channel(b), sock).
 * Return: as grb_basic_create() and grb_channel_create_shared().
 */
GRB_API int grb_basic_create_shared(const struct grb_basic_attr *attr,
				    const struct grb_shm_attr *sattr,
				    struct grb_basic **out);

/**
 * grb_basic_config - the configuration of basic channels with these
 * attributes, for a process that attaches to one (grb_channel_attach()).
 * Return: the configuration (static), or NULL for an invalid @alloc or
 * @mode.
 */
GRB_API const struct grb_config *grb_basic_config(enum grb_alloc alloc,
						  enum grb_mode mode,
						  int compress_timestamps);

/** grb_basic_destroy - finalize (if needed) and free.  NULL is a no-op. */
GRB_API void grb_basic_destroy(struct grb_basic *b);

/**
 * grb_basic_write - copy one record in.
 * @b: basic channel.
 * @data: payload (may be NULL when @len is 0).
 * @len: payload bytes, at most GRB_BASIC_MAX_LEN and what fits in a
 *       sub-buffer with the headers.
 * Return: 0, or the errors of grb_reserve(); -EINVAL for NULL @b, NULL
 * @data with @len > 0, or @len > GRB_BASIC_MAX_LEN.
 * Context: any thread, signal handlers included.
 */
GRB_API int grb_basic_write(struct grb_basic *b, const void *data, size_t len);

#define GRB_BASIC_MAX_LEN 0x7fffffffu

/* Bytes of engine state a zero-copy reservation carries. */
#define GRB_BASIC_WCTX_OPAQUE 192

/*
 * A zero-copy reservation of the basic client, on the caller's stack.
 * The engine's reservation context is opaque here, so that this header
 * does not depend on the engine's internal layout; the library checks at
 * build time that it fits (changing GRB_BASIC_WCTX_OPAQUE changes the
 * ABI, docs/abi.md).
 */
struct grb_basic_wctx {
	void *data;            /* out: where to write the payload */
	uint64_t timestamp;    /* out: the record's CLOCK_MONOTONIC ns */
	union {
		uint64_t u64;
		unsigned char bytes[GRB_BASIC_WCTX_OPAQUE];
	} opaque;
};

/**
 * grb_basic_reserve - reserve a record of @len bytes and write its header;
 * the caller fills w->data, then calls grb_basic_commit().
 * Return: 0, or the errors of grb_reserve(); -EINVAL for NULL @b or @w, or
 * @len > GRB_BASIC_MAX_LEN.
 * Context: as grb_basic_write().
 */
GRB_API int grb_basic_reserve(struct grb_basic *b, size_t len,
		      struct grb_basic_wctx *w);

/**
 * grb_basic_commit - publish a record from grb_basic_reserve().
 * Context and ordering: as grb_commit() (grb/writer.h): the reserving
 * thread, or one it handed @w to.
 */
GRB_API void grb_basic_commit(struct grb_basic_wctx *w);

/* A record read back. */
struct grb_basic_event {
	uint64_t timestamp;    /* full CLOCK_MONOTONIC ns */
	size_t len;            /* payload bytes */
	int cpu;               /* buffer it came from (-1 per channel) */
};

/**
 * grb_basic_consume - take the oldest record of buffer @cpu.
 * @b: basic channel.
 * @cpu: buffer index (0 for a per-channel buffer).
 * @ev: receives the record's description.
 * @dst: receives the payload.
 * @cap: bytes at @dst.
 * In discard mode a record is readable as soon as it is committed: the
 * committed start of the sub-buffer writers are filling is read live
 * (grb_reader_live()), so a slow stream needs no flush.  In overwrite mode
 * a record is readable once its sub-buffer closes (it fills, or a flush
 * or grb_channel_tick() closes it).
 * Return: 0; -EAGAIN when nothing is readable now; -ENODATA when
 * finalized and drained; -ENOBUFS when @cap < ev->len, or @dst is NULL
 * and ev->len > 0 (the record stays, ev is filled); -EINVAL for NULL @b
 * or @ev, or a bad @cpu; -EPERM after
 * grb_basic_release_readers(); -EIO when a record does not decode (memory overwritten by a
 * client bug): nothing then says where the next record starts, so the
 * rest of that sub-buffer is skipped and its records counted in
 * grb_basic_counts.corrupt (those committed by then at once; in discard
 * mode, read live from the open sub-buffer, those committed into its rest
 * afterwards when it closes, or at grb_basic_reset()); -EIO is returned
 * once, and the next call reads on from the next sub-buffer.
 * Context: one reader thread per buffer.
 */
GRB_API int grb_basic_consume(struct grb_basic *b, unsigned int cpu,
		      struct grb_basic_event *ev, void *dst, size_t cap);

/**
 * grb_basic_peek - as grb_basic_consume() without consuming (a record
 * that does not decode is skipped and counted all the same).
 */
GRB_API int grb_basic_peek(struct grb_basic *b, unsigned int cpu,
		   struct grb_basic_event *ev, void *dst, size_t cap);

/**
 * grb_basic_decode - decode one record of a basic channel's sub-buffer,
 * wherever its bytes are: in place, or copied out by grb_buf_write() or
 * grb_buf_splice() (a file holds the sub-buffers one after another, each
 * from its header to its header's data_size).  No channel is needed.
 * @subbuf: the sub-buffer's first byte, its struct grb_basic_subbuf_header.
 * @data_size: its valid bytes, header included: the reader's data_size,
 *             or the header's once the caller checked it against the
 *             bytes it has.
 * @offset: the record's slot: sizeof(struct grb_basic_subbuf_header) for
 *          the first, then the previous call's *@next.
 * @prev_ts: the full timestamp of the previous record of this sub-buffer,
 *           0 for its first record.
 * @ev: receives the record: its full timestamp, its payload length and
 *      the header's cpu.
 * @payload_off: receives the payload's offset from @subbuf (may be NULL).
 * @next: receives the offset of the next record's slot; the sub-buffer
 *        ends when it reaches @data_size.
 *
 * Timestamps: a record carries a full 64-bit timestamp, or only its low
 * 32 bits when the high bits are those of the record before it in the
 * buffer.  The full one is then @prev_ts with its low 32 bits replaced,
 * plus 2^32 if that went below @prev_ts (the low bits wrapped).  The
 * first record of every sub-buffer carries a full one, so each
 * sub-buffer decodes on its own: pass ev->timestamp of each record as the
 * next call's @prev_ts, and 0 at every sub-buffer's start.
 *
 * Padding that recovery left (grb/recover.h) is skipped: @next then
 * points past the record after it, and -ENODATA is returned when only
 * padding remains.  When the padding held the sub-buffer's first record
 * and @prev_ts is 0, the header's ts_begin (that record's timestamp)
 * stands in for @prev_ts.
 * Return: 0; -ENODATA when @offset is at or past @data_size (the end);
 * -EBADMSG when the bytes are not a basic sub-buffer or record: a header
 * without GRB_BASIC_MAGIC, a record header or payload running past
 * @data_size, or a compressed timestamp with no previous one (@prev_ts
 * 0); -EINVAL for NULL @subbuf, @ev or @next, a @data_size smaller than
 * the header, or an @offset inside the header.
 * Context: any thread, signal handlers included; reads only @subbuf.
 */
GRB_API int grb_basic_decode(const void *subbuf, size_t data_size,
			     size_t offset, uint64_t prev_ts,
			     struct grb_basic_event *ev, size_t *payload_off,
			     size_t *next);

struct grb_basic_counts {
	uint64_t entries;      /* written, not yet consumed, overwritten,
				  dropped nor skipped as corrupt */
	uint64_t overruns;     /* overwritten before being consumed */
	uint64_t written;
	uint64_t consumed;
	uint64_t dropped;      /* removed by grb_basic_reset(), or given
				  back by grb_basic_release_readers() */
	uint64_t corrupt;      /* skipped after a record failed to decode
				  (grb_basic_consume() returned -EIO) */
	uint64_t lost;         /* refused: full, wrap, too big, nesting */
	uint64_t dead;         /* reserved by a writer process that died
				  before committing; skipped after recovery
				  (grb/recover.h), never written nor read */
};

/**
 * grb_basic_get_counts - counters of buffer @cpu.
 * Return: 0; -EINVAL for NULL @b or @c, or a bad @cpu.
 * Context: the thread that reads buffer @cpu, or any thread while no
 * basic read call runs on it (consumed, dropped and corrupt are that
 * reader's plain counts).
 * Each counter is read atomically, one after the other, as
 * grb_buf_get_stats() reads them: while writers run they are not one
 * snapshot, and entries, computed from the others, is then 0 rather than
 * negative when they disagree.  Once writers have stopped, they add up.
 */
GRB_API int grb_basic_get_counts(struct grb_basic *b, unsigned int cpu,
		     struct grb_basic_counts *c);

/**
 * grb_basic_reset - drop every record not consumed yet.
 * Return: 0; -EINVAL for NULL; -EPERM after grb_basic_release_readers().
 * Context: no concurrent writer or reader.
 */
GRB_API int grb_basic_reset(struct grb_basic *b);

/**
 * grb_basic_record_disable/enable: refuse (-EAGAIN) or allow writes, as
 * grb_channel_record_disable/enable().  Return: 0, or -EINVAL for NULL.
 */
GRB_API int grb_basic_record_disable(struct grb_basic *b);
GRB_API int grb_basic_record_enable(struct grb_basic *b);

/**
 * grb_basic_flush - close every open sub-buffer so it can be consumed
 * (grb_channel_flush() with GRB_FLUSH_ACTIVE).
 * Return: 0, or -EINVAL for NULL.
 */
GRB_API int grb_basic_flush(struct grb_basic *b);

/**
 * grb_basic_finalize - end of writing (see grb_channel_finalize()).
 * Return: 0; -EINVAL for NULL; -EALREADY when already finalized.
 */
GRB_API int grb_basic_finalize(struct grb_basic *b);

/** grb_basic_nr_bufs - number of buffers (possible CPUs, or 1; 0 for
 * NULL). */
GRB_API unsigned int grb_basic_nr_bufs(const struct grb_basic *b);

/**
 * grb_basic_release_readers - stop reading the channel through this
 * client, so that the program reads it with the engine's read side on
 * grb_basic_channel(): grb/iter.h (every buffer merged in time order,
 * callbacks, polls) or grb/output.h.  The basic client's record_decode
 * serves those iterators.  Afterwards grb_basic_consume(), peek and reset
 * return -EPERM.  A sub-buffer the client held is given back consumed,
 * its records not consumed yet counted as dropped (grb_basic_counts);
 * from then on the engine's readers count what they read in
 * grb_buf_stats.read, not in the client's counts.
 * Records consumed live from the open sub-buffer (discard mode) are not
 * consumed in the engine, which only consumes whole sub-buffers: its
 * readers return them again.
 * Return: 0; -EINVAL for NULL; -EALREADY when already released.
 * Context: no concurrent basic read call.
 */
GRB_API int grb_basic_release_readers(struct grb_basic *b);

/** grb_basic_channel - the engine channel underneath (NULL for NULL). */
GRB_API struct grb_channel *grb_basic_channel(struct grb_basic *b);

#ifdef __cplusplus
}
#endif

#endif /* GRB_BASIC_H */
