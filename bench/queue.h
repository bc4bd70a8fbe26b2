/* SPDX-License-Identifier: MIT */
/*
 * bench/queue.h - the experiments for plain queues (ck_ring, the mutex
 * ring), which have no sub-buffers, no overwrite mode and no reader-side
 * spare: a baseline of what moving a record through a queue costs.
 *
 * A queue of 1 MiB holds fixed slots: {u64 timestamp, u32 header, u32
 * payload} (16 bytes) with a timestamp, {u32 header, u32 payload} (8
 * bytes) without.  The timestamp is the default clock,
 * clock_gettime(CLOCK_MONOTONIC), read after the slot is reserved.
 *
 * Overwrite with no reader: when the queue is full the writer drops the
 * oldest record itself and retries, the flight recorder a plain queue
 * allows.  Discard: a consumer thread on the reader CPU dequeues, and a
 * full queue refuses the record.
 */
#ifndef BENCH_QUEUE_H
#define BENCH_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct bench_opts;

struct queue_rec_ts {
	uint64_t ts;
	uint32_t hdr;
	uint32_t cpu;
};

struct queue_rec {
	uint32_t hdr;
	uint32_t cpu;
};

struct queue_ops {
	const char *system;       /* "ck_ring", "mutex" */
	const char *id;           /* key part: "ckring", "mutex" */
	const char *desc;         /* how writes are done */
	/* A queue of BENCH_BUF_BYTES of @slot-byte slots. */
	void *(*create)(size_t slot);
	void (*destroy)(void *q);
	bench_write_fn write_ts_drop;     /* 16-byte slots */
	bench_write_fn write_nots_drop;   /* 8-byte slots */
	bench_write_fn write_ts_discard;  /* 16-byte slots */
	/*
	 * Consumer: dequeue up to @max 16-byte records, check each payload,
	 * add the bad ones to *bad.  Return: records dequeued.
	 */
	uint64_t (*read_some)(void *q, uint64_t max, uint64_t *bad);
	/* 1: all scalability writers share one queue; 0: one queue each. */
	int shared;
};

void bench_queue_run(const struct bench_opts *o, const struct queue_ops *q);

#endif /* BENCH_QUEUE_H */
