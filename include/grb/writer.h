/* SPDX-License-Identifier: MIT */
/*
 * grb/writer.h - the write side: reserve, write in place, commit.
 *
 * A record is written in three steps:
 *
 *	struct grb_ctx ctx = GRB_CTX_INIT(sizeof(payload), alignof(payload));
 *	if (grb_reserve(&cfg, chan, &ctx) == 0) {
 *		...write the client's record header...
 *		grb_write(&cfg, &ctx, &payload, sizeof(payload));
 *		grb_commit(&cfg, &ctx);
 *	}
 *
 * or in one call, grb_write_record(), with a function that writes the
 * record into the reserved context (the same record, fewer instructions).
 *
 * Concurrency: any number of threads, and signal handlers interrupting
 * them between reserve and commit (up to GRB_MAX_NESTING levels), may write
 * to one channel at once.  A thread may migrate to another CPU between
 * reserve and commit; the record stays in the buffer it reserved in.
 * Writers never wait, never take a lock, and never block on the reader.
 */
#ifndef GRB_WRITER_H
#define GRB_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "grb/config.h"
#include "grb/impl/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

struct grb_thread_state;
struct grb_jentry;

/*
 * Reservation context, on the writer's stack.  The caller sets data_size
 * and largest_align; grb_reserve() fills the rest.
 */
struct grb_ctx {
	size_t data_size;          /* in: payload bytes after the header */
	size_t largest_align;      /* in: payload alignment, power of two */
	void *client_priv;         /* in: for the client's callbacks */
	struct grb_buf *buf;       /* out: buffer reserved in */
	int cpu;                   /* out: its CPU, or 0 (per channel) */
	unsigned int rflags;       /* out: GRB_RFLAG_* */
	uint64_t timestamp;        /* out: clock value, 0 without clock */
	uint64_t pre_offset;       /* out: slot start position */
	uint64_t end;              /* out: slot end position */
	size_t slot_size;          /* out: end - pre_offset */
	char *wptr;                /* out: write cursor (record header) */
	char *wend;                /* out: end of the slot in memory */
	grb_atomic_u64 *cc;        /* out: commit counter of the slot */
	uint64_t cc_done;          /* out: its byte total when complete */
	/* out: the reserving thread's state, whose nesting level the
	 * reservation holds until its commit or discard. */
	struct grb_thread_state *owner;
	/* out: the reservation's journal entry in a shared buffer, else
	 * NULL (grb/impl/journal.h). */
	struct grb_jentry *jent;
};

#define GRB_CTX_INIT(size, align) \
	{ (size), (align), NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, 0, \
	  NULL, NULL }

/**
 * grb_ctx_init - set a context's inputs (the outputs are left for
 * grb_reserve() to fill, which spares the fast path zeroing them).
 * @ctx: context on the writer's stack.
 * @data_size: payload bytes.
 * @largest_align: payload alignment, a power of two (1 for none).
 */
static inline void grb_ctx_init(struct grb_ctx *ctx, size_t data_size,
				size_t largest_align)
{
	ctx->data_size = data_size;
	ctx->largest_align = largest_align;
	ctx->client_priv = NULL;
}

/**
 * grb_reserve - reserve a slot for one record.
 * @cfg: the channel's configuration (the same static const object).
 * @chan: channel to write to.
 * @ctx: context with data_size and largest_align set.
 *
 * Picks the buffer of the current CPU (or the channel's buffer), reserves
 * header + padding + data_size bytes with one move of the write position
 * (a compare-and-swap, or on the per-CPU path a restartable sequence),
 * and points ctx->wptr at the record header.  On success the caller must
 * end with exactly one grb_commit() or a successful
 * grb_try_discard_reserve().
 *
 * Return: 0 on success, or, with nothing reserved:
 *  -EAGAIN     records are disabled on the channel or buffer;
 *  -ESHUTDOWN  the channel was finalized (also when it is disabled too);
 *  -EBUSY      more than GRB_MAX_NESTING reservations are open on this
 *              thread, or, in a shared buffer, the thread gets no journal
 *              entry (grb/recover.h) (both counted as lost_nesting, in
 *              the buffer the reservation would have gone to: on a
 *              per-CPU channel, the calling CPU's; these two are checked
 *              first, before -EAGAIN and -ESHUTDOWN);
 *  -ENOBUFS    discard mode, buffer full (counted as lost_full);
 *  -EIO        the next sub-buffer still holds uncommitted data from the
 *              previous lap (counted as lost_wrap), in either mode: in
 *              discard mode it comes before -ENOBUFS, whose ring is then
 *              full too;
 *  -ENOSPC     the record cannot fit in an empty sub-buffer (counted as
 *              lost_big);
 *  -EINVAL     the slot would be empty (no record header, data_size 0,
 *              and no alignment padding where it starts): nothing a
 *              reader could find; not counted.  (A slot of alignment
 *              padding alone is reserved, and counts as a record.)
 * Context: any thread, signal handlers included; async-signal-safe.
 * Ordering: acquire on the write position, so writes into the slot happen
 * after the reader released its previous contents.
 */
static inline int grb_reserve(const struct grb_config *cfg,
			      struct grb_channel *chan, struct grb_ctx *ctx);

/**
 * grb_write - copy bytes at the write cursor and advance it.
 * @cfg: the channel's configuration.
 * @ctx: a context returned by a successful grb_reserve().
 * @src: bytes to copy.
 * @len: byte count; the cursor must stay inside the reserved slot.
 *
 * The slot is contiguous in memory even when it crosses a page.
 * Context: the reserving thread.  Ordering: none (published by commit).
 */
static inline void grb_write(const struct grb_config *cfg,
			     struct grb_ctx *ctx, const void *src, size_t len);

/**
 * grb_write_fill - write @len copies of byte @c at the cursor.
 * Context and ordering as grb_write().
 */
static inline void grb_write_fill(const struct grb_config *cfg,
				  struct grb_ctx *ctx, int c, size_t len);

/**
 * grb_write_str - copy a C string into a field of @len bytes.
 * @cfg: the channel's configuration.
 * @ctx: a reserved context.
 * @s: NUL-terminated string.
 * @len: field size.  The string is truncated to len - 1 bytes and the
 *       rest of the field, at least one byte, is filled with NUL, so the
 *       field always holds a terminated string; a @len of 0 writes
 *       nothing (a field of no bytes).
 * Context and ordering as grb_write().
 */
static inline void grb_write_str(const struct grb_config *cfg,
				 struct grb_ctx *ctx, const char *s,
				 size_t len);

/**
 * grb_ctx_align - pad the cursor to an alignment (offset-based).
 * @cfg: the channel's configuration.
 * @ctx: a reserved context.
 * @align: power of two, at most the page size; 0 (as 1) pads nothing.
 *
 * The padding bytes are skipped, not written.
 */
static inline void grb_ctx_align(const struct grb_config *cfg,
				 struct grb_ctx *ctx, size_t align);

/**
 * grb_commit - publish a reserved record.
 * @cfg: the channel's configuration.
 * @ctx: the context of a successful grb_reserve().
 *
 * Adds the slot to its sub-buffer's commit counter.  The commit that
 * completes a sub-buffer delivers it: calls buffer_end, publishes the
 * sub-buffer to the reader and, in overwrite mode, lets the reader swap it.
 * The reservation's nesting level is given back to the thread that
 * reserved (ctx->owner), whichever thread commits.
 * Context: the reserving thread, or any thread it handed ctx to.  A
 * hand-off must make the reserving thread's writes into the slot visible
 * to the committing thread (any queue, lock or join does), and the
 * reserving thread must not exit before the commit: the commit updates
 * that thread's nesting count (an atomic add when committed elsewhere).
 * A signal handler commits (or discards) only what it reserved itself,
 * never a reservation of the code it interrupted: on the reserving
 * thread the count is updated with a plain add, which may land inside the
 * interrupted code's own update of it and be lost, leaving the thread a
 * nesting level short for good.
 * Ordering: release: every write into the slot happens before the reader
 * can see the sub-buffer delivered.
 */
static inline void grb_commit(const struct grb_config *cfg,
			      struct grb_ctx *ctx);

/**
 * grb_try_discard_reserve - abandon a reservation instead of committing it.
 * @cfg: the channel's configuration.
 * @ctx: the context of a successful, uncommitted grb_reserve().
 *
 * Possible while the slot is the last one reserved in its buffer, and
 * always for a slot that ends exactly at its sub-buffer's end (it is that
 * sub-buffer's last slot whatever comes after, in the next one).  The
 * sub-buffer is then closed where the slot begins: the slot and the
 * rest of the sub-buffer become padding that no reader ever sees, and the
 * sub-buffer is delivered once its other records are committed.  The
 * write position never moves backwards, so a discard costs the rest of the
 * sub-buffer: filter before reserving, and keep discards for the rare
 * record a writer must abandon after reserving.
 *
 * Return: 0 when the reservation was discarded: no commit follows, the
 * nesting level is given back, and the buffer's records_discarded
 * (grb_buf_stats.discarded) grows by one; the next record opens a new
 * sub-buffer and carries a full timestamp.  -EBUSY when another
 * reservation or a flush came after it (in its sub-buffer, or one that
 * did not fit there and opened the next): nothing
 * changed, and the caller must still grb_commit() a record its readers
 * know to skip.
 * Context: the thread that holds ctx (as grb_commit()); async-signal-safe.
 * Ordering: release on success: the bytes already written into the slot
 * happen before any later use of that memory.
 */
static inline int grb_try_discard_reserve(const struct grb_config *cfg,
					  struct grb_ctx *ctx);

/*
 * Writes one record into a reserved context: the client's record header
 * and the payload, with grb_write() and its kin (grb_write_record()).
 */
typedef void (*grb_fill_fn)(const struct grb_config *cfg,
			    struct grb_ctx *ctx);

/**
 * grb_write_record - reserve, write and commit one record in one call.
 * @cfg: the channel's configuration.
 * @chan: channel to write to.
 * @data_size: payload bytes after the record header (as in grb_ctx).
 * @largest_align: payload alignment, a power of two (1 for none).
 * @client_priv: becomes the context's client_priv, for the client's
 *               callbacks and for @fill.
 * @fill: called once, on this thread, after a successful reservation,
 *        with the reserved context, to write the record (its header,
 *        then data_size bytes) at ctx->wptr with grb_write() and its
 *        kin; it must not commit or discard the context.  A static
 *        function passed by name is inlined.
 *
 * The same record as grb_reserve(), @fill, then grb_commit() on the same
 * thread, in fewer instructions: the context never leaves the call, so
 * the fast path keeps it in registers, and it ends in a jump to what is
 * out of line rather than a call that returns into it.
 *
 * Return: 0 when the record was written and committed, else
 * grb_reserve()'s negative errno, for the same reasons and counted the
 * same way, with @fill not called.
 * Context: any thread, signal handlers included; async-signal-safe when
 * @fill is.  Ordering: as grb_reserve() then grb_commit().
 */
static inline int grb_write_record(const struct grb_config *cfg,
				   struct grb_channel *chan,
				   size_t data_size, size_t largest_align,
				   void *client_priv, grb_fill_fn fill);

#ifdef __cplusplus
}
#endif

#include "grb/impl/writer_inline.h"

#endif /* GRB_WRITER_H */
