/* SPDX-License-Identifier: MIT */
/*
 * src/write_record.c - the out-of-line ends of grb_write_record()
 * (grb/writer.h, docs/design.md section 25.9).
 *
 * The one-call fast path jumps to these rather than calling code that
 * returns into it.  grb__write_record_slow() writes the record with the
 * three calls; the others finish a commit the way grb_commit() does (the
 * delivery with the nesting level still held, then the level given back,
 * then the wake-up check) and return grb_write_record()'s 0.
 */
#include "engine.h"
#include "grb/writer.h"

/*
 * Whatever left the fast path before reserving: a lap's first writer in
 * overwrite mode (NOREF set), a thread without rseq, a per-CPU channel
 * that fell back to the atomic path, nesting at its limit, a position
 * that moved, a record that opens or fills a sub-buffer.  The three
 * calls, with the configuration read at run time: the reservation's own
 * slow paths are out of line anyway.
 */
int grb__write_record_slow(const struct grb_config *cfg,
			   struct grb_channel *chan, size_t data_size,
			   size_t largest_align, void *client_priv,
			   grb_fill_fn fill)
{
	struct grb_ctx ctx;
	int ret;

	grb_ctx_init(&ctx, data_size, largest_align);
	ctx.client_priv = client_priv;
	ret = grb_reserve(cfg, chan, &ctx);
	if (ret)
		return ret;
	fill(cfg, &ctx);
	grb_commit(cfg, &ctx);
	return 0;
}

/* The wake-up check that ends every commit (see grb_commit()). */
static int wake_check(struct grb_buf *buf)
{
	if (GRB_UNLIKELY(grb_load_seq_cst(&buf->shm->waiting)))
		grb__wake(buf);
	return 0;
}

/* A per-CPU commit whose section aborted or ran off the buffer's CPU. */
int grb__record_commit_slow(const struct grb_config *cfg, struct grb_buf *buf,
			    uint64_t pos, uint64_t add)
{
	grb__rseq_commit_slow(cfg, buf, pos, add);
	grb__nesting_undo();
	return wake_check(buf);
}

/*
 * A commit whose counter passed the one-AND pre-test: confirm that it
 * completed the lap, deliver (per-CPU buffers claim the delivery first),
 * then as any commit.
 */
int grb__record_commit_end(const struct grb_config *cfg, struct grb_buf *buf,
			   uint64_t pos, uint64_t sum)
{
	if (grb__cc_complete(buf, sum, pos)) {
		if (buf->rseq)
			grb__rseq_deliver(cfg, buf, sum, pos);
		else
			grb__deliver(cfg, buf, sum, pos);
	}
	grb__nesting_undo();
	return wake_check(buf);
}

/* A reader waits (the level is already given back). */
int grb__record_wake(struct grb_buf *buf)
{
	grb__wake(buf);
	return 0;
}
