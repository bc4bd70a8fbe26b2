/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_recover.c - a writer process killed anywhere between
 * reserve and commit never stalls a shared buffer (grb/recover.h).
 *
 * Usage: test_recover [KILLS [SEED]]   (default 60 kills: half with hooks
 * in discard mode, a quarter with two writers, a quarter in overwrite)
 *
 * Each round forks writer processes that write tagged records (writer,
 * sequence, a checked filler) into a shared basic channel and record, in
 * memory shared with the test, the fate of each record: committed (the
 * write returned 0), refused, or in flight.  Then one writer is killed
 * with SIGKILL:
 *
 *  - at a race-injection point (tests/hooks), on its Nth visit: the
 *    hook raises SIGKILL in the writer itself.  Every point a write or a
 *    flush passes is used in turn;
 *  - at a random time, by the test, while a second writer process writes
 *    into the same buffers (per-CPU, both migrating).
 *
 * The test then flushes, recovers (grb_channel_recover()) and drains as
 * the buffer's reader, and checks: the buffer does not stall (everything
 * produced is delivered and consumed); every committed record is read
 * exactly once, intact; a refused record is never read; the record in
 * flight is read when the kill came after its commit add, never when it
 * came before (a dead record is never delivered as data); lost_dead
 * counts exactly the records killed between their reservation and their
 * commit; written == read at the end, in both modes (overwrite mode:
 * read + overwritten).
 *
 * The recovery's one-by-one contract is in test_recover_slots.c,
 * test_recover_contract.c and test_recover_pid.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/reader.h"
#include "grb/recover.h"
#include "grb/shm.h"
#include "grb_test_hooks.h"
#include "tclient.h"

#define MAXW   8192             /* writer ids over a run */
#define PER    1500             /* records a writer tries */

enum fate { F_NONE = 0, F_COMMITTED = 1, F_REFUSED = 2 };

struct wstate {
	_Atomic int hooked;             /* killed by its hook */
	_Atomic int inflight;           /* a write is under way */
	_Atomic uint32_t attempt;       /* its sequence */
	_Atomic uint32_t tried;         /* writes started */
	unsigned char fate[PER];
};

struct shared {
	struct wstate w[MAXW];
};

struct payload {
	uint32_t w, seq, len, pad;
};

static struct shared *sh;
static unsigned char *seen;             /* [MAXW][PER] read counts */
static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned char fill_byte(uint32_t w, uint32_t seq, uint32_t i)
{
	return (unsigned char)(w * 31u + seq * 7u + i);
}

/* The kill plan of a hooked writer. */
static enum grb_hook_point kill_point;
static long kill_after;

static void kill_hook(enum grb_hook_point point, void *arg)
{
	(void)arg;
	if (point == kill_point && --kill_after == 0) {
		atomic_store(&((struct wstate *)arg)->hooked, 1);
		raise(SIGKILL);
	}
}

/* About 2 us of work between records, so that a kill at a random time
 * finds a writer in any part of its loop. */
static void spin_us(long us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L +
	       (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

/* A writer process: PER records, a flush now and then, then exit. */
static void writer(struct grb_basic *b, uint32_t w, int migrate)
{
	struct wstate *ws = &sh->w[w];
	unsigned char buf[sizeof(struct payload) + 64];
	struct payload p;
	uint32_t seq, i;
	cpu_set_t set;
	int ret;

	for (seq = 0; seq < PER; seq++) {
		if (migrate && seq % 97 == 0) {
			CPU_ZERO(&set);
			CPU_SET((int)(seq / 97) % 2, &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
		p.w = w;
		p.seq = seq;
		p.len = (uint32_t)((seq * 13u + w) % 61u);
		p.pad = 0;
		memcpy(buf, &p, sizeof(p));
		for (i = 0; i < p.len; i++)
			buf[sizeof(p) + i] = fill_byte(w, seq, i);
		atomic_store(&ws->attempt, seq);
		atomic_store(&ws->tried, seq + 1);
		atomic_store(&ws->inflight, 1);
		ret = grb_basic_write(b, buf, sizeof(p) + p.len);
		ws->fate[seq] = ret == 0 ? F_COMMITTED : F_REFUSED;
		atomic_store(&ws->inflight, 0);
		if (migrate)
			spin_us(2);
		if (seq % 50 == 49)
			grb_basic_flush(b);
	}
	_exit(0);
}

static void check_record(const unsigned char *data, size_t len)
{
	struct payload p;
	uint32_t i;

	CHECK(len >= sizeof(p));
	memcpy(&p, data, sizeof(p));
	CHECK(p.w < MAXW && p.seq < PER);
	CHECK_EQ(len, sizeof(p) + p.len);
	for (i = 0; i < p.len; i++)
		CHECK_EQ(data[sizeof(p) + i], fill_byte(p.w, p.seq, i));
	CHECK(seen[(size_t)p.w * PER + p.seq] < 255);
	seen[(size_t)p.w * PER + p.seq]++;
}

/* Read every delivered sub-buffer of every buffer.  Return: records. */
static uint64_t drain(struct grb_channel *chan)
{
	struct grb_reader_subbuf sb;
	struct grb_basic_event ev;
	uint64_t n = 0, prev;
	size_t off, poff, next;
	unsigned int i;
	int ret;

	for (i = 0; i < grb_channel_nr_bufs(chan); i++) {
		struct grb_buf *buf = grb_channel_buf(chan, i);

		while (grb_reader_get_next(buf) == 0) {
			CHECK_EQ(grb_reader_held(buf, &sb), 0);
			off = sizeof(struct grb_basic_subbuf_header);
			prev = 0;
			for (;;) {
				ret = grb_basic_decode(sb.data, sb.data_size,
						       off, prev, &ev, &poff,
						       &next);
				if (ret == -ENODATA)
					break;
				CHECK_EQ(ret, 0);
				check_record((const unsigned char *)sb.data +
					     poff, ev.len);
				prev = ev.timestamp;
				off = next;
				n++;
			}
			CHECK_EQ(grb_reader_put_next(buf), 0);
		}
	}
	return n;
}

/*
 * After the writers are gone: close what is open, recover what they
 * left, read everything.  The buffer must not stall: all it produced is
 * consumed within a few seconds.
 */
static uint64_t settle(struct grb_channel *chan)
{
	struct grb_recover_info info;
	struct grb_buf_stats st;
	uint64_t n = 0;
	int tries;

	for (tries = 0; tries < 2000; tries++) {
		grb_channel_flush(chan, GRB_FLUSH_ACTIVE);
		CHECK(grb_channel_recover(chan, 0, &info) >= 0);
		CHECK_EQ(info.ambiguous, 0);
		n += drain(chan);
		grb_channel_get_stats(chan, &st);
		if (st.consumed == st.produced)
			return n;
		usleep(1000);
	}
	grb_channel_get_stats(chan, &st);
	fprintf(stderr, "stalled: produced %llu consumed %llu (waiting %llu)\n",
		(unsigned long long)st.produced,
		(unsigned long long)st.consumed,
		(unsigned long long)info.waiting);
	exit(1);
}

/*
 * Wait for a writer process while reading and recovering as a consumer
 * would (recovery must leave a live writer's sub-buffer alone).
 */
static int reap(struct grb_channel *chan, pid_t pid, uint64_t *read)
{
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		CHECK(r >= 0);
		if (r == pid)
			return status;
		CHECK(grb_channel_recover(chan, 0, NULL) >= 0);
		*read += drain(chan);
		usleep(200);
	}
}

/* Points a write or a flush passes, and whether a kill there comes
 * after the in-flight record's commit add (2), between its reservation
 * and the add (1), before its reservation (0), or either (-1). */
static const struct {
	enum grb_hook_point point;
	int when;
	long max_after;
} points[] = {
	{ GRB_HOOK_RESERVE_LOADED, 0, 400 },
	{ GRB_HOOK_SLOW_CHECKED, 0, 4 },
	{ GRB_HOOK_RESERVE_DONE, 1, 400 },
	{ GRB_HOOK_END_OLD, 1, 4 },
	{ GRB_HOOK_COMMIT_BEFORE, 1, 400 },
	{ GRB_HOOK_COMMIT_AFTER, 2, 400 },
	/* A delivery runs in the commit that completes a sub-buffer, or in
	 * a reservation whose padding does (the record not yet committed):
	 * either may be the in-flight one's fate. */
	{ GRB_HOOK_DELIVER_META, -1, 4 },
	{ GRB_HOOK_DELIVER_PUBLISH, -1, 4 },
	{ GRB_HOOK_FLUSH_LOADED, 0, 6 },
	{ GRB_HOOK_ENTER_PUSHED, 1, 8 },
	{ GRB_HOOK_PUSH_BEFORE_CAS, 1, 8 },
};
#define NPOINTS (sizeof(points) / sizeof(points[0]))

/* A writer process that kills itself at the Nth visit of point k. */
static pid_t fork_hooked_writer(struct grb_basic *b, uint32_t w,
				unsigned int k, int migrate)
{
	pid_t pid;

	kill_point = points[k].point;
	kill_after = 1 + (long)(rnd() % (uint64_t)points[k].max_after);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		grb_test_set_hook(kill_hook, &sh->w[w]);
		writer(b, w, migrate);
	}
	return pid;
}

struct totals {
	uint64_t read, dead_expected, dead_max, kills, rounds;
	int overwrite;          /* committed records may be overwritten */
};

/* Check one finished writer's records against what was read. */
static void check_writer(uint32_t w, int killed, int when,
			 struct totals *t)
{
	struct wstate *ws = &sh->w[w];
	uint32_t s, tried = atomic_load(&ws->tried);
	int inflight = killed && atomic_load(&ws->inflight);
	uint32_t a = atomic_load(&ws->attempt);
	unsigned char got;

	for (s = 0; s < PER; s++) {
		got = seen[(size_t)w * PER + s];
		if (inflight && s == a) {
			CHECK(got <= 1);
			if (when == 2 && !t->overwrite)
				CHECK_EQ(got, 1);
			else if (when == 0 || when == 1)
				CHECK_EQ(got, 0);
			if (when == 1)
				t->dead_expected++;
			if (when == -1 && got == 0)
				t->dead_max++;
			continue;
		}
		if (s < tried && ws->fate[s] == F_COMMITTED && t->overwrite)
			CHECK(got <= 1);
		else if (s < tried && ws->fate[s] == F_COMMITTED)
			CHECK_EQ(got, 1);
		else
			CHECK_EQ(got, 0);
	}
}

static void run(enum grb_mode mode, enum grb_alloc alloc, long kills,
		int hooked)
{
	struct grb_basic_attr attr = {
		.name = "recover", .subbuf_size = 4096, .num_subbuf = 4,
		.alloc = alloc, .mode = mode, .compress_timestamps = 1,
	};
	struct grb_shm_attr sattr = { .client = GRB_BASIC_CLIENT, .gid = -1 };
	struct totals t = { 0 };
	struct grb_buf_stats st;
	struct grb_channel *chan;
	struct grb_basic *b;
	uint32_t w = 0;
	pid_t pid, other;
	unsigned int i, k;
	int status, killed;
	long r;

	t.overwrite = mode == GRB_MODE_OVERWRITE;
	CHECK_EQ(grb_basic_create_shared(&attr, &sattr, &b), 0);
	chan = grb_basic_channel(b);
	for (i = 0; i < grb_channel_nr_bufs(chan); i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
	memset(sh, 0, sizeof(*sh));
	memset(seen, 0, (size_t)MAXW * PER);
	/* Until that many writers were killed (a hook point a writer never
	 * reaches lets it finish: that round kills nobody). */
	for (r = 0; t.kills < (uint64_t)kills && r < 4 * kills; r++) {
		k = (unsigned int)(r % NPOINTS);
		CHECK(w + 2 < MAXW);
		if (hooked) {
			pid = fork_hooked_writer(b, w, k, 0);
			status = reap(chan, pid, &t.read);
			if (WIFSIGNALED(status)) {
				CHECK_EQ(WTERMSIG(status), SIGKILL);
				t.kills++;
			} else {
				CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			}
			t.read += settle(chan);
			check_writer(w, WIFSIGNALED(status),
				     points[k].when, &t);
			w++;
		} else {
			/*
			 * Two writers at once, migrating; one is killed by its
			 * hook (so that it dies holding a reservation while
			 * the other writes on), or by the test at a random
			 * time if its hook has not fired by then.
			 */
			pid = fork_hooked_writer(b, w, k, 1);
			other = fork();
			CHECK(other >= 0);
			if (other == 0)
				writer(b, w + 1, 1);
			usleep((useconds_t)(rnd() % 4000));
			kill(pid, SIGKILL);
			status = reap(chan, pid, &t.read);
			killed = WIFSIGNALED(status);
			t.kills += (uint64_t)killed;
			status = reap(chan, other, &t.read);
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			t.read += settle(chan);
			check_writer(w, killed,
				     atomic_load(&sh->w[w].hooked) ?
				     points[k].when : -1, &t);
			check_writer(w + 1, 0, -1, &t);
			w += 2;
		}
		t.rounds++;
	}
	grb_channel_get_stats(chan, &st);
	/* Counters add up: every committed record read, the dead ones
	 * counted and nothing else. */
	CHECK_U64(st.written, t.read + st.overwritten);
	/* Hundreds of writer processes came and went: the slots of the
	 * dead ones were claimed again, none was refused for want of one. */
	CHECK_U64(st.lost_nesting, 0);
	CHECK_U64(t.kills, kills);
	CHECK(st.lost_dead >= t.dead_expected);
	CHECK(st.lost_dead <= t.dead_expected + t.dead_max);
	printf("%s %s %s: %llu rounds, %llu kills, %llu records read, "
	       "%llu dead, %llu sub-buffers recovered\n",
	       mode == GRB_MODE_DISCARD ? "discard" : "overwrite",
	       alloc == GRB_ALLOC_PER_CPU ? "per-cpu" : "per-channel",
	       hooked ? "hook kills" : "hook and random kills, 2 writers",
	       (unsigned long long)t.rounds, (unsigned long long)t.kills,
	       (unsigned long long)t.read, (unsigned long long)st.lost_dead,
	       (unsigned long long)st.recovered);
	grb_basic_destroy(b);
}


int main(int argc, char **argv)
{
	long kills = argc > 1 ? atol(argv[1]) : 60;

	rng = argc > 2 ? strtoull(argv[2], NULL, 0) :
		(uint64_t)time(NULL) * 2654435761u + 1;
	printf("seed %llu\n", (unsigned long long)rng);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	seen = malloc((size_t)MAXW * PER);
	CHECK(seen);
	if (kills < 4)
		kills = 4;
	run(GRB_MODE_DISCARD, GRB_ALLOC_PER_CHANNEL, kills / 2, 1);
	run(GRB_MODE_DISCARD, GRB_ALLOC_PER_CPU, kills / 4, 0);
	run(GRB_MODE_OVERWRITE, GRB_ALLOC_PER_CHANNEL, kills / 4, 1);
	return 0;
}
