/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_write_record_races.c - grb_write_record() against each
 * promise of its doc comment (grb/writer.h, docs/design.md section 25.9),
 * second part: what runs beside the call (test_write_record.c has 1-3,
 * the records, the fill's context and the refusals):
 *
 *  4. overwrite mode over many laps, a reader taking, pinning and giving
 *     back sub-buffers between writes: every record intact; and a record
 *     written while its lap's first writer has not yet cleared NOREF,
 *     the reader swapping the slot out meanwhile;
 *  5. a fill whose signal handler writes a record: both read back, the
 *     handler's after, the nesting levels given back;
 *  6. a fill that migrates: one remote commit on the per-CPU path, the
 *     record in ctx->cpu's buffer;
 *  7. a reader blocked in grb_buf_wait() is woken by the write that
 *     delivers (its reservation, or its commit) or meets a bytes mark.
 *
 * On the configurations of test_write_record.c, each channel created as
 * the environment decides and under GRB_SYNC=atomic, so both paths are
 * checked in every run.  The record client and the channels are
 * tests/common/wr_rig.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"
#include "wr_rig.h"

#define WAIT_NS INT64_C(5000000000)

/* ---- 4. overwrite mode over many laps ----------------------------------- */

#define LAP_N 400

static void case_laps(const struct rig *g, int arg)
{
	struct wr_in in = { .seq = 0 };
	uint64_t c, p, n = 0, v[NF];
	int64_t last = -1;
	unsigned int i;
	int ret;

	(void)arg;
	for (i = 0; i < LAP_N; i++) {
		in.seq = i;
		CHECK_EQ(wr(g, ONE, &in, 8 + (i * 53u) % 600, 1, NULL), 0);
		/* The reader takes one every 4 records for 60 records, then
		 * nothing for 60; every third time it pins the oldest and
		 * gives it back unconsumed. */
		if ((i / 60) % 2 || i % 4)
			continue;
		if (i % 12 == 0) {
			if (grb_reader_snapshot(g->buf, &c, &p) == 0 &&
			    grb_reader_get_subbuf(g->buf, c) == 0) {
				check_held(g->buf, NULL);
				CHECK_EQ(grb_reader_put_subbuf(g->buf), 0);
			}
			continue;
		}
		ret = grb_reader_get_next(g->buf);
		CHECK(ret == 0 || ret == -EAGAIN);
		if (ret == 0) {
			n += check_held(g->buf, &last);
			CHECK_EQ(grb_reader_put_next(g->buf), 0);
		}
	}
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	n += drain(g->buf, &last);
	CHECK_EQ(last, LAP_N - 1);
	stats(NULL, g->buf, v);
	CHECK_U64(v[FIELD(written)], LAP_N);
	CHECK_U64(v[FIELD(read)], n);
	CHECK_U64(v[FIELD(read)] + v[FIELD(overwritten)], LAP_N);
	CHECK(v[FIELD(overwritten)] > 0);
	CHECK(v[FIELD(produced)] >= 4 * NSB * SB);      /* four laps */
}

/* What the SIGUSR1 handler of cases 4 and 5 writes. */
static const struct rig *sig_g;
static struct wr_in sig_in;
static size_t sig_size;
static volatile int sig_ran, sig_ret, sig_get;

static void on_sig(int sig)
{
	int saved = errno;

	(void)sig;
	sig_ran++;
	sig_ret = wr(sig_g, ONE, &sig_in, sig_size, 1, NULL);
	errno = saved;
}

static void get_hook(struct grb_ctx *ctx)
{
	sig_get = grb_reader_get_next(ctx->buf);
}

/*
 * A lap's first writer A has moved the position into slot 0's next lap
 * and, closing the old sub-buffer, delivers it (buffer_end) before it
 * takes slot 0 from the reader: NOREF is still set.  A signal there
 * writes record B with grb_write_record(); B's fill lets the reader take
 * the oldest sub-buffer (a reader thread could, at any time), then
 * writes.  What the reader got must be intact, and B read back later.
 */
static void case_noref(const struct rig *g, int arg)
{
	struct wr_in a = { .seq = 0 };
	int64_t last = -1;
	uint64_t n, v[NF];

	(void)arg;
	/* Four 1000-byte records per sub-buffer: one lap, none read. */
	for (a.seq = 0; a.seq < 4 * NSB; a.seq++)
		CHECK_EQ(wr(g, ONE, &a, 1000, 1, NULL), 0);
	sig_g = g;
	sig_in = (struct wr_in){ .seq = 4 * NSB + 1, .hook = get_hook };
	sig_size = 1000;
	sig_ran = 0;
	sig_get = 1;
	end_trigger = NSB - 1;
	CHECK_EQ(wr(g, ONE, &a, 1000, 1, NULL), 0);
	CHECK_EQ(sig_ran, 1);
	CHECK_EQ(sig_ret, 0);
	CHECK_EQ(sig_get, 0);
	CHECK_U64(a.seen.pre_offset, (uint64_t)NSB * SB);
	CHECK_U64(sig_in.seen.pre_offset, a.seen.end);
	n = check_held(g->buf, &last);
	CHECK_EQ(grb_reader_put_next(g->buf), 0);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	n += drain(g->buf, &last);
	CHECK_EQ(last, 4 * NSB + 1);
	stats(NULL, g->buf, v);
	CHECK_U64(v[FIELD(written)], 4 * NSB + 2);
	CHECK_U64(v[FIELD(read)], n);
	CHECK_U64(v[FIELD(read)] + v[FIELD(overwritten)], 4 * NSB + 2);
}

/* ---- 5. a signal handler writes inside the fill ------------------------- */

static void raise_hook(struct grb_ctx *ctx)
{
	(void)ctx;
	CHECK_EQ(raise(SIGUSR1), 0);
}

static void case_signal(const struct rig *g, int arg)
{
	/* Round 0: the outer record opens the sub-buffer; 1: inside it;
	 * 2: inside it, and the handler's does not fit: it closes the
	 * sub-buffer, which the outer commit then delivers. */
	static const size_t inner[3] = { 40, 40, SB - 64 };
	struct wr_in out = { .hook = raise_hook };
	uint64_t n, v[NF];
	int64_t last = -1;
	int r;

	(void)arg;
	sig_g = g;
	for (r = 0; r < 3; r++) {
		out.seq = 2 * (uint64_t)r;
		sig_in = (struct wr_in){ .seq = out.seq + 1 };
		sig_size = inner[r];
		sig_ran = 0;
		CHECK_EQ(wr(g, ONE, &out, 40, 1, NULL), 0);
		CHECK_EQ(sig_ran, 1);
		CHECK_EQ(sig_ret, 0);
		check_seen(g, &out, 40, 1, 0);
		check_seen(g, &sig_in, inner[r], 1, 0);
		CHECK_U64(sig_in.seen.pre_offset, r < 2 ? out.seen.end : SB);
		expect_nesting_free();
	}
	/* Delivered by the outer commit: no flush needed. */
	CHECK_EQ(grb_reader_get_next(g->buf), 0);
	n = check_held(g->buf, &last);
	CHECK_EQ(grb_reader_put_next(g->buf), 0);
	CHECK_EQ(last, 4);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	n += drain(g->buf, &last);
	CHECK_U64(n, 6);
	CHECK_EQ(last, 5);
	stats(NULL, g->buf, v);
	CHECK_U64(v[FIELD(written)], 6);
}

/* ---- 6. the fill migrates ----------------------------------------------- */

static void move_hook(struct grb_ctx *ctx)
{
	(void)ctx;
	pin(cpus[1]);
}

static void case_migrate(const struct rig *g, int arg)
{
	struct grb_buf *b1 = grb_channel_buf(g->chan, (unsigned int)cpus[1]);
	uint64_t a0[NF], a1[NF], z0[NF], z1[NF];
	struct wr_in in = { .hook = move_hook };
	int64_t last = -1;

	(void)arg;
	/* Record 0 opens the sub-buffer (slow path), 1 goes inside it. */
	for (in.seq = 0; in.seq < 2; in.seq++) {
		stats(NULL, g->buf, z0);
		stats(NULL, b1, z1);
		CHECK_EQ(wr(g, ONE, &in, 64, 1, NULL), 0);
		CHECK_EQ(sched_getcpu(), cpus[1]);
		stats(NULL, g->buf, a0);
		stats(NULL, b1, a1);
		pin(cpus[0]);
		CHECK_EQ(in.calls, 1);
		CHECK_EQ(in.seen.cpu, cpus[0]);
		CHECK(in.seen.buf == g->buf);
		/* One remote commit, and everything on the buffer reserved
		 * in; nothing on the other. */
		z0[FIELD(written)]++;
		z0[FIELD(produced)] += in.seen.slot_size;
		z0[FIELD(remote_commits)] += g->rseq ? 1 : 0;
		same(g->name, PATH(g), "buffer reserved in", a0, z0);
		same(g->name, PATH(g), "buffer moved to", a1, z1);
	}
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE), 0);
	CHECK_U64(drain(grb_channel_buf(g->chan, (unsigned int)in.seen.cpu),
			&last), 2);
	CHECK_EQ(last, 1);
}

/* ---- 7. a waiting reader is woken --------------------------------------- */

enum { W_SLOW, W_FAST, W_LIVE };

struct waiter {
	struct grb_buf *buf;
	struct grb_watermark wm;
	int ret, started, done;
	pid_t tid;
	int64_t ns;             /* how long grb_buf_wait() took */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct waiter *cur_waiter;

static void *wait_main(void *arg)
{
	struct waiter *w = (struct waiter *)arg;

	w->tid = gettid();
	__atomic_store_n(&w->started, 1, __ATOMIC_RELEASE);
	w->ns = now_ns();
	w->ret = grb_buf_wait(w->buf, &w->wm, WAIT_NS);
	w->ns = now_ns() - w->ns;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Until the waiter sleeps in futex(2), as /proc tells (2 s at most). */
static void wait_blocked(pid_t tid)
{
	char path[64], line[32] = "";
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	for (i = 0; i < 2000 && atoi(line) != SYS_futex; i++) {
		usleep(1000);
		f = fopen(path, "r");
		if (!f)
			return;
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
	}
}

/* Close the sub-buffer under the record being written: its commit will
 * deliver it.  The waiter must still be waiting. */
static void flush_hook(struct grb_ctx *ctx)
{
	CHECK_EQ(grb_buf_flush(ctx->buf, GRB_FLUSH_ACTIVE), 0);
	CHECK(!__atomic_load_n(&cur_waiter->done, __ATOMIC_ACQUIRE));
}

static void case_wake(const struct rig *g, int how)
{
	struct waiter w = { g->buf, { 1, 0 }, 1, 0, 0, 0, 0 };
	struct wr_in a = { .seq = 1 }, b = { .seq = 2 };
	size_t size = how == W_SLOW ? SB / 2 : 64;
	int64_t last = -1;
	pthread_t t;

	/* A record that opens the sub-buffer, before the wait. */
	CHECK_EQ(wr(g, ONE, &a, size, 1, NULL), 0);
	if (how == W_LIVE)
		w.wm.bytes = a.seen.slot_size + 1;
	if (how == W_FAST)
		b.hook = flush_hook;
	cur_waiter = &w;
	CHECK_EQ(pthread_create(&t, NULL, wait_main, &w), 0);
	while (!__atomic_load_n(&w.started, __ATOMIC_ACQUIRE))
		usleep(100);
	wait_blocked(w.tid);
	CHECK(!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE));
	/* W_SLOW: b does not fit, its reservation delivers; W_FAST: b's
	 * commit delivers; W_LIVE: b's commit passes the bytes mark. */
	CHECK_EQ(wr(g, ONE, &b, size, 1, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	/*
	 * Woken, not timed out.  A waiter whose wake-up was lost returns
	 * 0 too, at its deadline, when it finds the data there (its
	 * documented "met on entry"): the time tells them apart.
	 */
	if (w.ret != 0 || w.ns >= WAIT_NS) {
		fprintf(stderr, "%s (%s), wake %d: grb_buf_wait() %d after "
			"%lld ms\n", g->name, PATH(g), how, w.ret,
			(long long)(w.ns / 1000000));
		CHECK(0);
	}
	if (how != W_SLOW)
		CHECK_U64(b.seen.pre_offset, a.seen.end);
	CHECK_EQ(grb_buf_flush(g->buf, GRB_FLUSH_ACTIVE),
		 how == W_FAST ? -ENODATA : 0);
	CHECK_U64(drain(g->buf, &last), 2);
	CHECK_EQ(last, 2);
}

/* ---- driver ------------------------------------------------------------- */

static void run_all(int fa)
{
	static const struct grb_config *const sets[2][4] = {
		{ &pc_d, &pc_o, &pc_dt, &pc_ot },
		{ &ch_d, &ch_o, &ch_dt, &ch_ot },
	};
	static const char *const names[2] = { "per-CPU sync", "per-channel" };
	const struct grb_config *const *c;
	int s, i;

	for (s = 0; s < 2; s++) {
		c = sets[s];
		for (i = 1; i < 4; i += 2) {
			rig_run(c[i], names[s], fa, case_laps, 0);
			rig_run(c[i], names[s], fa, case_noref, 0);
		}
		rig_run(c[0], names[s], fa, case_signal, 0);
		rig_run(c[3], names[s], fa, case_signal, 0);
		for (i = 0; s == 0 && ncpus > 1 && i < 4; i += 3)
			rig_run(c[i], names[s], fa, case_migrate, 0);
		rig_run(c[0], names[s], fa, case_wake, W_SLOW);
		rig_run(c[1], names[s], fa, case_wake, W_SLOW);
		rig_run(c[0], names[s], fa, case_wake, W_FAST);
		rig_run(c[3], names[s], fa, case_wake, W_FAST);
		rig_run(c[2], names[s], fa, case_wake, W_LIVE);
	}
}

int main(void)
{
	struct sigaction sa;

	rig_setup();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	if (ncpus < 2)
		printf("note: one CPU only: the migrating fill (case 6) is "
		       "skipped\n");
	run_all(0);
	run_all(1);
	rig_teardown();
	printf("test_write_record_races: passed\n");
	return 0;
}
