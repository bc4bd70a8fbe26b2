/* SPDX-License-Identifier: MIT */
/*
 * bench/xproc.h - the cross-process section (bench_xproc.c): what one
 * run of one system measured, the watch on a consumer's output files
 * that both systems are timed with, and the LTTng-UST side
 * (bench_lttng.c).
 *
 * One run: a writer process writes N records of the LTTng event's
 * payload (a 32-bit CPU id) into per-CPU discard buffers of
 * BENCH_XPROC_NSUB sub-buffers of BENCH_XPROC_SUBBUF bytes; a consumer
 * daemon (grb-consumerd, or LTTng's consumer daemon) writes what it gets
 * to files on tmpfs.
 */
#ifndef BENCH_XPROC_H
#define BENCH_XPROC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"

#define BENCH_XPROC_SUBBUF (128u << 10)
#define BENCH_XPROC_NSUB   (BENCH_BUF_BYTES / BENCH_XPROC_SUBBUF)

/* A child that takes longer than this is killed and the run dropped. */
#define BENCH_XPROC_TIMEOUT_MS (120u * 1000u)

struct xproc_run {
	uint64_t calls;       /* write calls the writer made (N) */
	uint64_t write_ns;    /* wall time of the writer's loop */
	uint64_t drain_ns;    /* writer's first call to the output's final
				 size (xproc_watch below) */
	uint64_t bytes;       /* bytes of the stream files at the end */
	uint64_t other_bytes; /* other files (LTTng's metadata, index) */
	long long kept;       /* records counted in the output files */
	long long lost;       /* records refused / discarded */
	int mismatch;         /* the counts do not add up (check) */
	char check[160];      /* what was compared, and how it came out */
};

/*
 * The output of a consumer, watched: the bytes of the files under @dir
 * whose names start with @prefix (its stream files; ".idx" files
 * excepted), and when a poll last saw that number change.  Polled every
 * millisecond once the writer is done, the last change is when the
 * consumer had written everything, within a millisecond.
 */
struct xproc_watch {
	char dir[PATH_MAX];
	char prefix[32];
	uint64_t bytes;       /* stream-file bytes at the last poll */
	uint64_t other;       /* other regular files' bytes, same poll */
	uint64_t t_change;    /* CLOCK_MONOTONIC ns of the poll that first
				 saw the current @bytes */
};

void xproc_watch_init(struct xproc_watch *w, const char *dir,
		      const char *prefix);
void xproc_watch_poll(struct xproc_watch *w);

/*
 * Poll @w every millisecond until child @pid has exited and, when @fd is
 * not -1, its output pipe @fd reached end of file (the output into @out,
 * @cap bytes, NUL-terminated).  Kills the child after @timeout_ms.
 * Return: its exit status, 128 + signal, or -1.
 */
int xproc_watch_child(struct xproc_watch *w, int pid, int fd, char *out,
		      size_t cap, unsigned int timeout_ms);

/* bench_lttng.c: the LTTng-UST side, a session per run. */
struct bench_lttng_xp;

/* Return: the private LTTng environment, or NULL with *@why set. */
struct bench_lttng_xp *bench_lttng_xproc_open(const char **why);

/*
 * One run: a discard session with per-UID buffers writing to @dir (on
 * tmpfs), grb_bench_lttng writing @n events, `lttng stop`, the discarded
 * count from `lttng list`, the events in the trace from babeltrace2.
 * Return: 0, or -1 with the reason in @why.
 */
int bench_lttng_xproc_run(struct bench_lttng_xp *x, const char *dir,
			  uint64_t n, int idx, struct xproc_run *r,
			  char *why, size_t whycap);

void bench_lttng_xproc_close(struct bench_lttng_xp *x);

#endif /* BENCH_XPROC_H */
