/* SPDX-License-Identifier: MIT */
/*
 * grb/timer.h - the periodic work a consumer needs, as calls it makes, and
 * an optional thread that makes them.
 *
 * grb starts no thread behind the user's back.  Two things need doing
 * periodically when writers are slow or stop:
 *  - a sub-buffer that has held data for a whole period is closed
 *    (flushed), so its records reach the reader even if it never fills;
 *  - a buffer that wrote nothing for a whole period delivers an empty
 *    sub-buffer carrying the time it was closed, so that a channel merge
 *    (grb/iter.h) knows that buffer writes nothing older and can go on.
 * grb_channel_tick() does both, once; call it every period from your own
 * event loop or timer.  grb_ticker_start() runs it on a thread the caller
 * starts and stops explicitly.
 */
#ifndef GRB_TIMER_H
#define GRB_TIMER_H

#include <stdint.h>

#include "grb/api.h"

#ifdef __cplusplus
extern "C" {
#endif

struct grb_channel;
struct grb_ticker;

/* What a tick does (or them together). */
enum grb_tick_flag {
	/* Close a sub-buffer that already held data at the previous tick. */
	GRB_TICK_FLUSH = 1u << 0,
	/*
	 * Deliver an empty sub-buffer for a buffer that wrote nothing since
	 * the previous tick (at the first tick of this process's handle:
	 * since the buffer was created, also for a handle attached later)
	 * and has
	 * none open.  It costs a sub-buffer: in
	 * overwrite mode each one pushes the oldest sub-buffer out, so a
	 * flight recorder that is only read after the fact should not use
	 * it; in discard mode it fails quietly when the buffer is full.
	 */
	GRB_TICK_IDLE = 1u << 1,
};

/**
 * grb_channel_tick - one period's work on every buffer of a channel.
 * @chan: channel.
 * @flags: GRB_TICK_* bits.
 *
 * "A period" is the time between two calls: the caller's period.  The
 * flushes are grb_buf_flush() calls: they may complete a sub-buffer, and
 * then the client's buffer_end callback runs on the calling thread and
 * waiting readers are woken.
 * Return: 0; -EINVAL for NULL @chan or unknown flags.
 * Context: any thread, one tick at a time per channel (ticks must not run
 * concurrently with each other), concurrently with writers and readers;
 * not with grb_channel_destroy().  Not signal-safe.
 */
GRB_API int grb_channel_tick(struct grb_channel *chan, unsigned int flags);

/**
 * grb_ticker_start - start a thread that calls grb_channel_tick(@chan,
 * @flags) every @period_ns nanoseconds until grb_ticker_stop().
 * @out: receives the ticker.
 *
 * The thread touches nothing but what grb_channel_tick() does (the write
 * positions, flushes, the client's buffer_begin/buffer_end callbacks, and
 * wake-ups), blocks no signal beyond the mask it inherits from the thread
 * that starts it, and is joined by grb_ticker_stop().  Do not
 * call grb_channel_tick() on the same channel while it runs.
 * Return: 0; -EINVAL for NULL arguments, a zero period or unknown flags;
 * -ENOMEM; the negated error number pthread_create() returned.
 * Context: any thread.
 */
GRB_API int grb_ticker_start(struct grb_channel *chan, uint64_t period_ns,
			     unsigned int flags, struct grb_ticker **out);

/**
 * grb_ticker_stop - stop the thread, wait for it, free the ticker.
 * Return: 0; -EINVAL for NULL.
 * Context: any thread but the ticker's own; before grb_channel_destroy().
 */
GRB_API int grb_ticker_stop(struct grb_ticker *t);

#ifdef __cplusplus
}
#endif

#endif /* GRB_TIMER_H */
