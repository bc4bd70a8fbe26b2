/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_write_path_remote.c - on a per-CPU channel with the
 * per-CPU (rseq) write path (GRB_CONFIG_SYNC_PER_CPU, docs/design.md
 * section 25), the cases that leave the buffer's CPU and take the remote
 * protocol, each counted exactly in remote_commits and remote_moves and
 * each leaving every record intact:
 *
 *  - records written while pinned to one CPU: no remote operation;
 *  - a record reserved on CPU 0 and committed after moving to CPU 1: one
 *    remote commit on buffer 0;
 *  - a context handed to another thread that commits it: a remote commit
 *    when that thread runs on CPU 1, none when on CPU 0;
 *  - flushes: nothing open is -ENODATA and costs nothing; a flush with
 *    data is a remote move (and, from another CPU, a remote commit of the
 *    padding), and the sub-buffer it closes is read back;
 *  - a discard after moving to the other CPU: a remote move and commit,
 *    counted as discarded; one on the buffer's CPU is neither; one that
 *    is refused (not the last reservation) still leaves a readable skip
 *    record;
 *  - a signal handler that writes between its thread's reserve and
 *    commit (and one that moves the thread to the other CPU first);
 *  - a thread whose rseq registration was taken back: every record it
 *    writes takes the remote forms, lands in the buffer of the CPU
 *    sched_getcpu() names, and is read back.
 *
 * Whether the channel takes the path is computed from the environment,
 * as the library decides it (tests/common/expect_path.h; which
 * configurations get it and why is test_write_path.c's).  Where the
 * atomic path is expected the same sequences run and every remote
 * counter must stay 0.  The sequences also run on a channel forced to
 * the atomic path (GRB_SYNC=atomic at its creation), so both paths are
 * compared on every run.  Every record goes through the test client's
 * checker: read exactly once, intact, counters agreeing, and
 * grb_buf_validate() clean on every buffer at the end.  With one CPU to
 * run on, nothing here can move: the test says so and passes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"
#include "expect_path.h"
#include "tclient.h"
#include "wpath.h"

#define RSEQ_UNREGISTER 1       /* RSEQ_FLAG_UNREGISTER (linux/rseq.h) */

/* Writer ids of the checker. */
enum { W_MAIN, W_HANDLER, W_NORSEQ, NW };
#define MAXSEQ 4096

static void stats_of(struct grb_channel *chan, unsigned int i,
		     struct grb_buf_stats *st)
{
	CHECK_EQ(grb_buf_get_stats(grb_channel_buf(chan, i), st), 0);
}

/* ---- the remote cases on a per-CPU channel ------------------------------ */

struct wp_rig {
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct tc_checker tc;
	int rseq;               /* the channel took the rseq path */
	int c0, c1;             /* two CPUs; their buffers have their ids */
	uint32_t seq[NW];
};

/* n on the rseq path, 0 on the atomic one. */
#define R(rig, n) ((rig)->rseq ? (uint64_t)(n) : 0)

#define CHECK_DELTA(after, before, field, n) \
	CHECK_U64((after).field - (before).field, (n))

/* The remote counters of buffer i moved by exactly (commits, moves). */
static void check_remote(const struct grb_buf_stats *after,
			 const struct grb_buf_stats *before, uint64_t commits,
			 uint64_t moves)
{
	CHECK_DELTA(*after, *before, remote_commits, commits);
	CHECK_DELTA(*after, *before, remote_moves, moves);
}

static void write_n(struct wp_rig *g, uint32_t w, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++) {
		CHECK_EQ(tc_write(g->cfg, g->chan, w, g->seq[w], k % 50), 0);
		tc_mark_reserved(&g->tc, w, g->seq[w]++);
	}
}

/* Drain buffer i; the checker must have found nothing wrong. */
static uint64_t drain(struct wp_rig *g, unsigned int i)
{
	uint64_t n = tc_drain_buf(&g->tc, g->chan, i);

	CHECK_U64(g->tc.errors, 0);
	return n;
}

static void validate(struct wp_rig *g)
{
	char msg[160];
	unsigned int i;

	for (i = 0; i < grb_channel_nr_bufs(g->chan); i++) {
		msg[0] = '\0';
		if (grb_buf_validate(grb_channel_buf(g->chan, i), msg,
				     sizeof(msg)) != 0) {
			fprintf(stderr, "buf %u: %s\n", i, msg);
			CHECK(0);
		}
	}
}

/* Records written on one CPU stay local; flushes are remote moves. */
static void part_local_and_flush(struct wp_rig *g)
{
	struct grb_buf_stats a0, a1, b0, b1;
	struct grb_buf *buf0 = grb_channel_buf(g->chan, (unsigned int)g->c0);
	struct grb_buf *buf1 = grb_channel_buf(g->chan, (unsigned int)g->c1);
	uint64_t read0 = g->tc.records_read;

	pin(g->c0);
	write_n(g, W_MAIN, 300);
	pin(g->c1);
	write_n(g, W_MAIN, 200);
	stats_of(g->chan, (unsigned int)g->c0, &b0);
	stats_of(g->chan, (unsigned int)g->c1, &b1);
	/* A fresh channel, every record on its own CPU (some opened a
	 * sub-buffer: the header commits are local too). */
	CHECK_U64(b0.written, 300);
	CHECK_U64(b1.written, 200);
	CHECK_U64(b0.remote_commits, 0);
	CHECK_U64(b0.remote_moves, 0);
	CHECK_U64(b1.remote_commits, 0);
	CHECK_U64(b1.remote_moves, 0);
	validate(g);

	/* Flush buffer c1 from its own CPU: a remote move (a flush always
	 * takes the remote protocol), the padding committed locally. */
	CHECK_EQ(grb_buf_flush(buf1, GRB_FLUSH_ACTIVE), 0);
	stats_of(g->chan, (unsigned int)g->c1, &a1);
	check_remote(&a1, &b1, 0, R(g, 1));
	CHECK_DELTA(a1, b1, written, 0);
	/* Flush buffer c0 from CPU c1: the move and the padding's commit
	 * are both remote. */
	CHECK_EQ(grb_buf_flush(buf0, GRB_FLUSH_ACTIVE), 0);
	stats_of(g->chan, (unsigned int)g->c0, &a0);
	check_remote(&a0, &b0, R(g, 1), R(g, 1));
	/* The flushed sub-buffers are readable, every record intact. */
	CHECK(drain(g, (unsigned int)g->c0) > 0);
	CHECK(drain(g, (unsigned int)g->c1) > 0);
	CHECK_U64(g->tc.records_read - read0, 500);
	b0 = a0;
	b1 = a1;
	stats_of(g->chan, (unsigned int)g->c0, &a0);
	stats_of(g->chan, (unsigned int)g->c1, &a1);
	CHECK_U64(a0.read, 300);
	CHECK_U64(a1.read, 200);

	/* Nothing open now: -ENODATA, and no remote operation at all. */
	pin(g->c0);
	CHECK_EQ(grb_buf_flush(buf0, GRB_FLUSH_ACTIVE), -ENODATA);
	CHECK_EQ(grb_buf_flush(buf1, GRB_FLUSH_ACTIVE), -ENODATA);
	CHECK_EQ(grb_channel_flush(g->chan, GRB_FLUSH_ACTIVE), 0);
	stats_of(g->chan, (unsigned int)g->c0, &b0);
	stats_of(g->chan, (unsigned int)g->c1, &b1);
	check_remote(&b0, &a0, 0, 0);
	check_remote(&b1, &a1, 0, 0);
	validate(g);
}

/* Reserve on c0, commit on c1: one remote commit on buffer c0. */
static void part_migrate_commit(struct wp_rig *g)
{
	struct grb_buf *buf0 = grb_channel_buf(g->chan, (unsigned int)g->c0);
	struct grb_buf_stats a0, a1, b0, b1;
	struct tc_pending p;
	uint64_t read0 = g->tc.records_read;
	int k;

	for (k = 0; k < 3; k++) {
		pin(g->c0);
		/* The first opens a sub-buffer: its header commit is local. */
		stats_of(g->chan, (unsigned int)g->c0, &b0);
		stats_of(g->chan, (unsigned int)g->c1, &b1);
		CHECK_EQ(tc_reserve(g->cfg, g->chan, W_MAIN, g->seq[W_MAIN],
				    40, &p), 0);
		CHECK_EQ(p.ctx.cpu, g->c0);
		pin(g->c1);
		tc_finish(&p);
		tc_mark_reserved(&g->tc, W_MAIN, g->seq[W_MAIN]++);
		stats_of(g->chan, (unsigned int)g->c0, &a0);
		stats_of(g->chan, (unsigned int)g->c1, &a1);
		check_remote(&a0, &b0, R(g, 1), 0);
		check_remote(&a1, &b1, 0, 0);
		CHECK_DELTA(a0, b0, written, 1);
		CHECK_DELTA(a1, b1, written, 0);
		validate(g);
		/* And a record reserved and committed on c1 in between:
		 * local to buffer c1. */
		write_n(g, W_MAIN, 1);
		stats_of(g->chan, (unsigned int)g->c1, &b1);
		check_remote(&b1, &a1, 0, 0);
	}
	/* Read back: flushed from c1, another remote move and commit. */
	stats_of(g->chan, (unsigned int)g->c0, &b0);
	stats_of(g->chan, (unsigned int)g->c1, &b1);
	CHECK_EQ(grb_buf_flush(buf0, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_flush(grb_channel_buf(g->chan, (unsigned int)g->c1),
			       GRB_FLUSH_ACTIVE), 0);
	stats_of(g->chan, (unsigned int)g->c0, &a0);
	stats_of(g->chan, (unsigned int)g->c1, &a1);
	check_remote(&a0, &b0, R(g, 1), R(g, 1));
	check_remote(&a1, &b1, 0, R(g, 1));
	CHECK_EQ(drain(g, (unsigned int)g->c0), 1);
	CHECK_EQ(drain(g, (unsigned int)g->c1), 1);
	CHECK_U64(g->tc.records_read - read0, 6);
	stats_of(g->chan, (unsigned int)g->c0, &b0);
	stats_of(g->chan, (unsigned int)g->c1, &b1);
	CHECK_DELTA(b0, a0, read, 3);
	CHECK_DELTA(b1, a1, read, 3);
}

/* A context handed to another thread, which commits: remote when that
 * thread runs off the buffer's CPU, local when on it. */
struct handoff {
	struct tc_pending *p;
	int cpu;
};

static void *finish_main(void *arg)
{
	struct handoff *h = (struct handoff *)arg;

	pin(h->cpu);
	tc_finish(h->p);
	return NULL;
}

static void part_handoff(struct wp_rig *g)
{
	struct grb_buf_stats a0, b0;
	struct tc_pending p;
	struct handoff h = { &p, 0 };
	uint64_t read0 = g->tc.records_read;
	pthread_t th;
	int k;

	/* One record first, so that no record below opens a sub-buffer
	 * (whose header commit is the reserving thread's). */
	pin(g->c0);
	write_n(g, W_MAIN, 1);
	for (k = 0; k < 2; k++) {
		h.cpu = k ? g->c1 : g->c0;
		pin(g->c0);
		stats_of(g->chan, (unsigned int)g->c0, &b0);
		CHECK_EQ(tc_reserve(g->cfg, g->chan, W_MAIN, g->seq[W_MAIN],
				    40, &p), 0);
		CHECK_EQ(p.ctx.cpu, g->c0);
		CHECK_EQ(pthread_create(&th, NULL, finish_main, &h), 0);
		CHECK_EQ(pthread_join(th, NULL), 0);
		tc_mark_reserved(&g->tc, W_MAIN, g->seq[W_MAIN]++);
		stats_of(g->chan, (unsigned int)g->c0, &a0);
		check_remote(&a0, &b0, k ? R(g, 1) : 0, 0);
		CHECK_DELTA(a0, b0, written, 1);
	}
	validate(g);
	/* Every record is read back whole. */
	CHECK_EQ(grb_buf_flush(grb_channel_buf(g->chan, (unsigned int)g->c0),
			       GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(drain(g, (unsigned int)g->c0), 1);
	CHECK_U64(g->tc.records_read - read0, 3);
}

/* Discards: after moving (remote), on the CPU (local), refused. */
static void part_discard(struct wp_rig *g)
{
	struct grb_buf_stats a0, b0;
	struct tc_pending p, q;
	uint64_t read0 = g->tc.records_read, subbufs;

	/* After migrating: the discard moves the position and commits the
	 * slot and padding from CPU c1. */
	pin(g->c0);
	write_n(g, W_MAIN, 2);
	CHECK_EQ(tc_reserve(g->cfg, g->chan, W_MAIN, g->seq[W_MAIN], 30, &p),
		 0);
	pin(g->c1);
	stats_of(g->chan, (unsigned int)g->c0, &b0);
	CHECK_EQ(tc_abandon(&p), 1);    /* grb_try_discard_reserve() == 0 */
	tc_mark_abandoned(&g->tc, 1);
	stats_of(g->chan, (unsigned int)g->c0, &a0);
	check_remote(&a0, &b0, R(g, 1), R(g, 1));
	CHECK_DELTA(a0, b0, discarded, 1);
	CHECK_DELTA(a0, b0, written, 0);
	validate(g);
	/* The discard closed the sub-buffer: its two records are ready. */
	subbufs = drain(g, (unsigned int)g->c0);
	CHECK_U64(subbufs, 1);
	CHECK_U64(g->tc.records_read - read0, 2);
	/* The next record (same sequence number: the discarded one is
	 * never read) opens a new sub-buffer, on c0. */
	pin(g->c0);
	write_n(g, W_MAIN, 1);

	/* On the buffer's own CPU: no remote operation. */
	stats_of(g->chan, (unsigned int)g->c0, &b0);
	CHECK_EQ(tc_reserve(g->cfg, g->chan, W_MAIN, g->seq[W_MAIN], 10, &p),
		 0);
	CHECK_EQ(tc_abandon(&p), 1);
	tc_mark_abandoned(&g->tc, 1);
	stats_of(g->chan, (unsigned int)g->c0, &a0);
	check_remote(&a0, &b0, 0, 0);
	CHECK_DELTA(a0, b0, discarded, 1);
	CHECK_EQ(drain(g, (unsigned int)g->c0), 1);
	CHECK_U64(g->tc.records_read - read0, 3);

	/* Refused: not the last reservation, and tried from c1.  The
	 * record is committed as a skip record; both commits are remote. */
	write_n(g, W_MAIN, 1);
	CHECK_EQ(tc_reserve(g->cfg, g->chan, W_MAIN, g->seq[W_MAIN], 20, &p),
		 0);
	CHECK_EQ(tc_reserve(g->cfg, g->chan, W_MAIN, g->seq[W_MAIN] + 1, 20,
			    &q), 0);
	pin(g->c1);
	stats_of(g->chan, (unsigned int)g->c0, &b0);
	CHECK_EQ(tc_abandon(&p), 0);    /* -EBUSY: committed as a skip */
	tc_mark_abandoned(&g->tc, 0);
	g->seq[W_MAIN]++;
	tc_finish(&q);
	tc_mark_reserved(&g->tc, W_MAIN, g->seq[W_MAIN]++);
	stats_of(g->chan, (unsigned int)g->c0, &a0);
	CHECK_DELTA(a0, b0, remote_commits, R(g, 2));
	CHECK_DELTA(a0, b0, discarded, 0);
	CHECK_DELTA(a0, b0, written, 2);
	validate(g);
	CHECK_EQ(grb_buf_flush(grb_channel_buf(g->chan, (unsigned int)g->c0),
			       GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(drain(g, (unsigned int)g->c0), 1);
	/* The record before, the skip record and the last one. */
	CHECK_U64(g->tc.records_read - read0, 6);
	CHECK_U64(g->tc.skips_read, 1);
}

/* ---- signal handlers ---------------------------------------------------- */

static struct wp_rig *volatile h_rig;
static volatile sig_atomic_t h_ran, h_ret, h_move_to = -1, h_cpu;

static void on_usr1(int sig)
{
	struct wp_rig *g = h_rig;
	int saved = errno;
	cpu_set_t set;

	(void)sig;
	h_ran++;
	if (h_move_to >= 0) {
		CPU_ZERO(&set);
		CPU_SET(h_move_to, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0) {
			h_ret = -1000;
			errno = saved;
			return;
		}
	}
	h_cpu = sched_getcpu();
	h_ret = tc_write(g->cfg, g->chan, W_HANDLER, g->seq[W_HANDLER], 33);
	if (h_ret == 0)
		tc_mark_reserved(&g->tc, W_HANDLER, g->seq[W_HANDLER]++);
	errno = saved;
}

/* A handler writes between its thread's reserve and commit. */
static void part_signal(struct wp_rig *g)
{
	struct grb_buf_stats a0, a1, b0, b1;
	struct sigaction sa, old;
	struct tc_pending p;
	uint64_t read0 = g->tc.records_read;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, &old), 0);
	h_rig = g;

	/* On one CPU: both records local. */
	pin(g->c0);
	stats_of(g->chan, (unsigned int)g->c0, &b0);
	CHECK_EQ(tc_reserve(g->cfg, g->chan, W_MAIN, g->seq[W_MAIN], 12, &p),
		 0);
	h_ran = 0;
	h_move_to = -1;
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(h_ran, 1);
	CHECK_EQ(h_ret, 0);
	CHECK_EQ(h_cpu, g->c0);
	tc_finish(&p);
	tc_mark_reserved(&g->tc, W_MAIN, g->seq[W_MAIN]++);
	stats_of(g->chan, (unsigned int)g->c0, &a0);
	CHECK_DELTA(a0, b0, written, 2);
	check_remote(&a0, &b0, 0, 0);

	/* The handler moves the thread to c1 first: its record goes to
	 * buffer c1 (locally), the interrupted one commits remotely. */
	b0 = a0;
	stats_of(g->chan, (unsigned int)g->c1, &b1);
	CHECK_EQ(tc_reserve(g->cfg, g->chan, W_MAIN, g->seq[W_MAIN], 12, &p),
		 0);
	h_ran = 0;
	h_move_to = g->c1;
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(h_ran, 1);
	CHECK_EQ(h_ret, 0);
	CHECK_EQ(h_cpu, g->c1);
	CHECK_EQ(sched_getcpu(), g->c1);
	tc_finish(&p);
	tc_mark_reserved(&g->tc, W_MAIN, g->seq[W_MAIN]++);
	h_move_to = -1;
	stats_of(g->chan, (unsigned int)g->c0, &a0);
	stats_of(g->chan, (unsigned int)g->c1, &a1);
	CHECK_DELTA(a0, b0, written, 1);
	CHECK_DELTA(a1, b1, written, 1);
	check_remote(&a0, &b0, R(g, 1), 0);
	check_remote(&a1, &b1, 0, 0);
	validate(g);

	CHECK_EQ(sigaction(SIGUSR1, &old, NULL), 0);
	pin(g->c0);
	CHECK_EQ(grb_channel_flush(g->chan, GRB_FLUSH_ACTIVE), 0);
	drain(g, (unsigned int)g->c0);
	drain(g, (unsigned int)g->c1);
	CHECK_U64(g->tc.records_read - read0, 4);
}

/* ---- a thread without rseq ---------------------------------------------- */

struct norseq {
	struct wp_rig *g;
	int skipped;
	int cpu_id_after;
};

#define NORSEQ_N 40

static void *norseq_main(void *arg)
{
	struct norseq *t = (struct norseq *)arg;
	struct wp_rig *g = t->g;
	struct grb_buf_stats a0, a1, b0, b1;
	struct tc_pending p;
#ifdef TEST_HAVE_RSEQ
	struct rseq *rs = (struct rseq *)(void *)
		((char *)__builtin_thread_pointer() + __rseq_offset);
	long r;

	if (__rseq_size == 0) {
		/* None to take back (valgrind): the thread has none. */
		t->cpu_id_after = (int32_t)__atomic_load_n(&rs->cpu_id,
							   __ATOMIC_RELAXED);
		goto write;
	}
	/*
	 * The length must be the one registered: __rseq_size, or, where
	 * glibc exports the feature size (20) and registers the whole
	 * area (Debian's 2.36, glibc >= 2.40), sizeof(struct rseq).
	 */
	r = syscall(__NR_rseq, rs, (unsigned int)__rseq_size,
		    RSEQ_UNREGISTER, RSEQ_SIG);
	if (r != 0 && errno == EINVAL && __rseq_size != sizeof(*rs))
		r = syscall(__NR_rseq, rs, (unsigned int)sizeof(*rs),
			    RSEQ_UNREGISTER, RSEQ_SIG);
	if (r != 0) {
		printf("note: rseq unregistration refused (%s): the thread "
		       "without rseq is skipped\n", strerror(errno));
		t->skipped = 1;
		return NULL;
	}
	t->cpu_id_after = (int32_t)__atomic_load_n(&rs->cpu_id,
						   __ATOMIC_RELAXED);
write:
#endif
	/* grb picks the buffer with sched_getcpu() then. */
	pin(g->c0);
	stats_of(g->chan, (unsigned int)g->c0, &b0);
	stats_of(g->chan, (unsigned int)g->c1, &b1);
	write_n(g, W_NORSEQ, NORSEQ_N);
	stats_of(g->chan, (unsigned int)g->c0, &a0);
	stats_of(g->chan, (unsigned int)g->c1, &a1);
	CHECK_DELTA(a0, b0, written, NORSEQ_N);
	CHECK_DELTA(a1, b1, written, 0);
	/*
	 * Every commit takes the remote form (a header commit may come on
	 * top), and so does every move of the position: each reservation
	 * fails its section on the CPU check and takes the slow path.
	 */
	if (g->rseq) {
		CHECK(a0.remote_commits - b0.remote_commits >= NORSEQ_N);
		CHECK(a0.remote_commits - b0.remote_commits <= NORSEQ_N + 2);
		CHECK(a0.remote_moves - b0.remote_moves >= NORSEQ_N);
	} else {
		check_remote(&a0, &b0, 0, 0);
	}
	check_remote(&a1, &b1, 0, 0);

	pin(g->c1);
	b0 = a0;
	b1 = a1;
	write_n(g, W_NORSEQ, NORSEQ_N);
	/* And one reserved on c1 and committed on c0. */
	CHECK_EQ(tc_reserve(g->cfg, g->chan, W_NORSEQ, g->seq[W_NORSEQ], 8,
			    &p), 0);
	pin(g->c0);
	tc_finish(&p);
	tc_mark_reserved(&g->tc, W_NORSEQ, g->seq[W_NORSEQ]++);
	stats_of(g->chan, (unsigned int)g->c0, &a0);
	stats_of(g->chan, (unsigned int)g->c1, &a1);
	CHECK_DELTA(a0, b0, written, 0);
	CHECK_DELTA(a1, b1, written, NORSEQ_N + 1);
	check_remote(&a0, &b0, 0, 0);
	if (g->rseq) {
		CHECK(a1.remote_commits - b1.remote_commits >= NORSEQ_N + 1);
		CHECK(a1.remote_moves - b1.remote_moves >= NORSEQ_N + 1);
	} else {
		check_remote(&a1, &b1, 0, 0);
	}
	return NULL;
}

static void part_norseq(struct wp_rig *g)
{
	struct norseq t = { g, 0, 0 };
	uint64_t read0 = g->tc.records_read;
	pthread_t tid;

	CHECK_EQ(pthread_create(&tid, NULL, norseq_main, &t), 0);
	CHECK_EQ(pthread_join(tid, NULL), 0);
	if (t.skipped)
		return;
	printf("thread without rseq: its rseq cpu_id %d, %u "
	       "records\n", t.cpu_id_after, 2 * NORSEQ_N + 1);
	validate(g);
	CHECK_EQ(grb_channel_flush(g->chan, GRB_FLUSH_ACTIVE), 0);
	drain(g, (unsigned int)g->c0);
	drain(g, (unsigned int)g->c1);
	CHECK_U64(g->tc.records_read - read0, 2 * NORSEQ_N + 1);
}

/*
 * Run every part on a channel of variant v; @force_atomic creates it
 * under GRB_SYNC=atomic.
 */
static void run_rig(int v, int force_atomic)
{
	struct grb_channel_attr attr = { "write_path", SB, NSB, NULL };
	enum grb_path_reason why = (enum grb_path_reason)-1;
	struct grb_buf_stats st;
	struct wp_rig g;
	unsigned int i;

	memset(&g, 0, sizeof(g));
	g.cfg = tc_config(v);
	g.c0 = allowed[0];
	g.c1 = allowed[1];
	/* The path and its reason, checked against the environment. */
	g.rseq = test_create_checked(g.cfg, &attr, force_atomic, &g.chan);
	grb_channel_write_path(g.chan, &why);
	/* @why may be NULL. */
	CHECK_EQ(grb_channel_write_path(g.chan, NULL),
		 g.rseq ? GRB_WRITE_RSEQ : GRB_WRITE_ATOMIC);
	printf("%s%s: %s path (%s)\n", tc_variant_name(v),
	       force_atomic ? ", GRB_SYNC=atomic" : "",
	       g.rseq ? "rseq" : "atomic", reason_name((int)why));
	CHECK((unsigned int)g.c1 < grb_channel_nr_bufs(g.chan));
	CHECK_EQ(tc_checker_init(&g.tc, g.chan, NW, MAXSEQ), 0);
	for (i = 0; i < grb_channel_nr_bufs(g.chan); i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(g.chan, i)), 0);

	part_local_and_flush(&g);
	part_migrate_commit(&g);
	part_handoff(&g);
	part_discard(&g);
	part_signal(&g);
	part_norseq(&g);

	unpin();
	CHECK_EQ(grb_channel_finalize(g.chan), 0);
	tc_drain_all(&g.tc, g.chan);
	CHECK_U64(tc_final_check(&g.tc, g.chan, 0), 0);
	validate(&g);
	CHECK_EQ(grb_channel_get_stats(g.chan, &st), 0);
	CHECK_U64(st.written, st.read);
	CHECK_U64(st.discarded, 2);
	if (g.rseq) {
		CHECK(st.remote_commits > 0);
		CHECK(st.remote_moves > 0);
	} else {
		CHECK_U64(st.remote_commits, 0);
		CHECK_U64(st.remote_moves, 0);
	}
	printf("  written %" PRIu64 " read %" PRIu64 " discarded %" PRIu64
	       " remote commits %" PRIu64 " moves %" PRIu64 "\n", st.written,
	       st.read, st.discarded, st.remote_commits, st.remote_moves);
	tc_checker_free(&g.tc);
	grb_channel_destroy(g.chan);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	read_allowed();
	if (nallowed < 2) {
		printf("note: this thread may run on one CPU only: the "
		       "migration cases are skipped\n");
		printf("test_write_path_remote: passed\n");
		return 0;
	}
	run_rig(TV_DISCARD, 0);
	run_rig(TV_COMPRESS, 0);
	run_rig(TV_DISCARD | TV_COMPRESS, 1);
	run_rig(0, 1);
	unpin();
	printf("test_write_path_remote: passed\n");
	return 0;
}
