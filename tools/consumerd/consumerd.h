/* SPDX-License-Identifier: MIT */
/*
 * tools/consumerd/consumerd.h - what grb-consumerd's two halves share:
 * the state of one drained channel, and the consumer thread that drains
 * it (drain.c) for the main thread (main.c), which accepts producers and
 * starts, watches and finishes the channels.
 */
#ifndef GRB_CONSUMERD_H
#define GRB_CONSUMERD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "grb/ctf.h"
#include "grb/grb.h"

/* One stream file of a CTF trace. */
struct ctf_stream {
	struct grb_ctf_stream_state st;
	/* The last packet's header, for the trailer (end_ctf()). */
	unsigned char last[GRB_CTF_PACKET_HEADER_SIZE];
};

struct chan_state {
	struct grb_channel *chan;
	char name[64];
	char dir[4096];
	int conn;                       /* the producer's connection, or -1 */
	int *out;                       /* one stream file per buffer */
	/* A CTF channel (grb/ctf.h): its streams' state, and the producer's
	 * metadata file, copied into the trace whenever it changes. */
	int ctf;
	struct ctf_stream *st;
	char meta_src[4200];
	struct timespec meta_mtime;
	off_t meta_size;
	uint64_t bytes;
	int err;                        /* the consumer thread's first error */
	/* Sub-buffers left undrained at the end: live writers hold them
	 * (and the reader takes sub-buffers in order, so all after them). */
	uint64_t left;
	_Atomic uint64_t bytes_shown;
	_Atomic int gone;               /* producer gone, or a signal */
	_Atomic int finished;           /* the thread is done */
	/* The flush period and the recovery deadline (-t, -r). */
	uint64_t tick_ns;
	uint64_t recover_ns;
	int joined;
	pthread_t tid;
};

/* CLOCK_MONOTONIC, in nanoseconds. */
int64_t cd_now_ns(void);

/*
 * The consumer thread of one channel (pthread_create()'s start routine,
 * @arg the channel's chan_state): waits for data, drains it into the
 * stream files, flushes and recovers every tick_ns, and when the main
 * thread sets `gone` flushes, recovers and drains everything left, sets
 * `err` to its first error and `finished`, and returns NULL.
 */
void *cd_consume(void *arg);

/* Copy the producer's metadata file into a CTF channel's trace when it
 * changed (written beside it, then renamed).  Return: 0 or -errno. */
int cd_copy_metadata(struct chan_state *cs);

/* The channel's summary line: records read, bytes, every loss. */
void cd_print_counts(FILE *f, const struct chan_state *cs,
		     const char *prefix);

#endif /* GRB_CONSUMERD_H */
