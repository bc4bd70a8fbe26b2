/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_ctf.h - grb's CTF tracer client (grb/ctf.h) measured beside
 * LTTng-UST in section 1 (bench_ctf.c): write cost per event, the bytes
 * per event of the traces both write, and how fast babeltrace2 reads
 * them.
 *
 * The LTTng-UST side of the trace comparison is measured on a trace of
 * bench_lttng.c's jobs, which removes it afterwards: that file hands the
 * trace over through bench_ctf_lttng_trace() first.
 */
#ifndef BENCH_BENCH_CTF_H
#define BENCH_BENCH_CTF_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

/*
 * Section 1's CTF rows (keys ow/ctf-...), the trace rows (tr/ctf/...) and
 * their ratios to the LTTng-UST rows of the same run (run after
 * bench_lttng_run(), whose rows it reads).  A count that does not add up
 * is a failed check (report_fail()).
 */
void bench_ctf_run(const struct bench_opts *o);

/* An LTTng-UST trace of this run, as bench_lttng.c knows it. */
struct bench_ctf_peer {
	size_t subbuf;            /* sub-buffer size of its channel */
	int snapshot;             /* a snapshot: the last buffers only */
	uint64_t calls;           /* tracepoint calls of the application */
	long long events;         /* babeltrace2's count, -1 when unread */
	long long lost_packets;   /* `lttng list` "Lost packets", -1 when
				     unknown (or a snapshot) */
};

/*
 * Which of bench_lttng.c's traces the CTF rows are compared with: the
 * overwrite + consumer daemon trace of each sub-buffer size (the
 * session that writes its trace while the application runs, as the
 * CTF client's writer thread does); with --quick, which runs no such
 * session, the 128 KiB snapshot.  Return: 1 for those.
 */
int bench_ctf_wants_lttng_trace(const struct bench_opts *o, int snapshot,
				size_t subbuf);

/*
 * Measure the LTTng-UST trace in @dir (before it is removed): stream
 * bytes per event; check @p->events against what LTTng says it kept
 * (rows tr/lttng/...).  The 128 KiB trace is moved away, for
 * bench_ctf_run() to read it alternately with its own.
 */
void bench_ctf_lttng_trace(const char *dir, const struct bench_ctf_peer *p);

/*
 * Remove the LTTng-UST trace kept for bench_ctf_run() when that did not
 * run (--only): grb_bench calls it once every section ran.
 */
void bench_ctf_release(void);

#endif /* BENCH_BENCH_CTF_H */
