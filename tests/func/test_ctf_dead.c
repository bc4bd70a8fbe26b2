/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_ctf_dead.c - events_dead (grb/ctf.h): a writer process
 * of a shared tracer is killed while it holds reservations in two
 * sub-buffers.  Recovered by a consumer (an attached reader), in discard
 * and overwrite mode, with the tracer stopped before or after the
 * recovery: nothing is recovered while the writer lives, then exactly
 * its held records are dead, every committed event (the dead writer's
 * too) is written and read once, none is discarded.  Recovered by the
 * writer thread (both shm_dir and trace_dir), whether it runs
 * periodically or only grb_ctf_stop() completes them: every committed
 * event reaches the stream files.  Otherwise one dead process would stop
 * a stream for good.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "ctf_rig.h"
#include "grb/channel.h"
#include "grb/ctf.h"
#include "grb/reader.h"
#include "grb/recover.h"
#include "grb/shm.h"
#include "grb/writer.h"

/* What the dying writer and the test tell each other (shared mapping). */
struct dead_sync {
	_Atomic int stage;      /* child: DEAD_FIRST, then all reserved */
	_Atomic int go;         /* test: the child's sub-buffer is closed */
};

/* The dying writer's records: held in its first sub-buffer, then in the
 * next one; and those it commits before. */
#define DEAD_FIRST     2u
#define DEAD_SECOND    1u
#define DEAD_COMMITTED 5u
#define DEAD_CHILD_TAG 1000000u   /* the child's payloads count from here */

/* Reserve one event of @ev and write part of it, never committed. */
static int hold_one(const struct grb_config *cfg, struct grb_ctf *t,
		    const struct grb_ctf_event *ev, struct grb_ctx *ctx)
{
	int ret;

	/* The header's size: the CTF client's callback reads the event
	 * through a pointer to it in client_priv (clients/ctf/ctf.c). */
	const struct grb_ctf_event *evp = ev;

	grb_ctx_init(ctx, sizeof(uint64_t), 1);
	ctx->client_priv = (void *)(uintptr_t)&evp;
	ret = grb_reserve(cfg, grb_ctf_channel(t), ctx);
	if (ret == 0)
		grb_write_fill(cfg, ctx, 0xee, 3);
	return ret;
}

/* The writer process: it commits a few events, then dies holding
 * DEAD_FIRST + DEAD_SECOND reservations (SIGKILL, from the test). */
static void dead_writer(const struct grb_config *cfg, struct grb_ctf *t,
			const struct grb_ctf_event *ev, struct dead_sync *sy)
{
	struct grb_ctx ctx[DEAD_FIRST + DEAD_SECOND];
	unsigned int i;

	for (uint64_t v = DEAD_CHILD_TAG; v < DEAD_CHILD_TAG + DEAD_COMMITTED;
	     v++)
		if (grb_ctf_emit_raw(t, ev, &v, sizeof(v)))
			_exit(2);
	for (i = 0; i < DEAD_FIRST; i++)
		if (hold_one(cfg, t, ev, &ctx[i]))
			_exit(3);
	atomic_store(&sy->stage, 1);
	while (!atomic_load(&sy->go))
		usleep(1000);
	for (; i < DEAD_FIRST + DEAD_SECOND; i++)
		if (hold_one(cfg, t, ev, &ctx[i]))
			_exit(4);
	atomic_store(&sy->stage, 2);
	for (;;)
		pause();
}

/* Wait (up to 10 s) for the child to reach @stage; it must not exit. */
static void wait_stage(struct dead_sync *sy, int stage, pid_t pid)
{
	int status;

	for (int i = 0; i < 10000 && atomic_load(&sy->stage) < stage; i++) {
		CHECK_EQ(waitpid(pid, &status, WNOHANG), 0);
		usleep(1000);
	}
	CHECK_EQ(atomic_load(&sy->stage), stage);
}

/* Emit the test's own events, payloads *@next on; return how many. */
static uint64_t emit_own(struct grb_ctf *t, const struct grb_ctf_event *ev,
			 uint64_t *next, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++, (*next)++)
		CHECK_EQ(grb_ctf_emit_raw(t, ev, next, sizeof(*next)), 0);
	return n;
}

/* The payloads read_dead() has seen: the test's, the dying writer's. */
static unsigned char seen_own[4096], seen_child[DEAD_COMMITTED];

/*
 * Read every delivered packet of @buf; count the events (each payload
 * once, none of the dead writer's) and the padding events.
 */
static uint64_t read_dead(struct grb_buf *buf, uint64_t own, uint64_t *pads,
			  int *done)
{
	uint64_t n = 0;
	int ret;

	while ((ret = grb_reader_get_next(buf)) == 0) {
		struct grb_record rec;
		size_t off = grb_reader_first_record(buf);
		uint64_t v;

		while ((ret = grb_reader_record(buf, off, &rec)) == 0) {
			off = rec.next;
			if (rec.rflags & GRB_RFLAG_PADDING) {
				(*pads)++;
				continue;
			}
			CHECK_EQ(rec.payload_len, sizeof(v));
			CHECK_EQ(grb_reader_read(buf, rec.payload_off, &v,
						 sizeof(v)), 0);
			if (v >= DEAD_CHILD_TAG) {
				CHECK(v < DEAD_CHILD_TAG + DEAD_COMMITTED);
				CHECK_EQ(seen_child[v - DEAD_CHILD_TAG]++, 0);
			} else {
				CHECK(v < own && v < sizeof(seen_own));
				CHECK_EQ(seen_own[v]++, 0);
			}
			n++;
		}
		CHECK_EQ(ret, -ENODATA);
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK(ret == -EAGAIN || ret == -ENODATA);
	*done = ret == -ENODATA;
	return n;
}

/* The tracer's statistics once the dying writer's records were
 * recovered: exactly those dead, every committed event written (the dead
 * writer's too), none discarded.  Returns them in *@st. */
static void expect_dead_stats(struct grb_ctf *t, uint64_t committed,
			      struct grb_ctf_stats *st)
{
	CHECK_EQ(grb_ctf_get_stats(t, st), 0);
	CHECK_U64(st->events_dead, DEAD_FIRST + DEAD_SECOND);
	CHECK_U64(st->events, committed);
	CHECK_U64(st->events_discarded, 0);
}

/*
 * events_dead: a writer process of a shared tracer is killed while it
 * holds reservations in two sub-buffers; after recovery by a consumer
 * (an attached reader), grb_ctf_get_stats() reports exactly those
 * records as dead, every committed event (the dead writer's too) as
 * written and read, and none as discarded.
 */
static void contract_dead(enum grb_mode mode, int stop_first)
{
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	const struct grb_config *cfg;
	struct grb_recover_info info;
	struct grb_ctf_stats st;
	struct grb_buf_stats bs;
	struct grb_channel *att;
	struct dead_sync *sy;
	struct grb_buf *buf;
	struct grb_ctf *t;
	uint64_t own = 0, committed, read = 0, pads = 0, end;
	char dir[256];
	int status, done = 0;
	pid_t pid;

	memset(seen_own, 0, sizeof(seen_own));
	memset(seen_child, 0, sizeof(seen_child));
	snprintf(dir, sizeof(dir), "%s/dead", scratch);
	CHECK_EQ(mkdir(dir, 0755), 0);
	a.shm_dir = dir;
	a.mode = mode;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	ev = reg_u64(t);
	/* A shared tracer writes with the configuration others attach
	 * with. */
	cfg = grb_ctf_config(a.alloc, a.mode, a.clock);
	CHECK_EQ(grb_channel_attach_dir(cfg, GRB_CTF_CLIENT, dir, "c",
					GRB_ATTACH_READER, &att), 0);
	buf = grb_channel_buf(att, 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	sy = (struct dead_sync *)mmap(NULL, sizeof(*sy),
				      PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sy != MAP_FAILED);
	committed = emit_own(t, ev, &own, 10);

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		dead_writer(cfg, t, ev, sy);
	wait_stage(sy, 1, pid);
	committed += DEAD_COMMITTED;
	/*
	 * Fill the sub-buffer of its first reservations until no event
	 * fits (12 bytes with a compact header): its last reservation then
	 * closes it and opens the next one.  (Should an event of ours take
	 * an extended header, 21 bytes, it may open the next one itself:
	 * the last reservation still goes there.)
	 */
	CHECK_EQ(grb_channel_get_stats(grb_ctf_channel(t), &bs), 0);
	end = (bs.produced | (a.subbuf_size - 1)) + 1;
	while (bs.produced <= end && end - bs.produced >= 12) {
		committed += emit_own(t, ev, &own, 1);
		CHECK_EQ(grb_channel_get_stats(grb_ctf_channel(t), &bs), 0);
	}
	atomic_store(&sy->go, 1);
	wait_stage(sy, 2, pid);
	committed += emit_own(t, ev, &own, 3);
	CHECK_EQ(grb_channel_flush(grb_ctf_channel(t), GRB_FLUSH_ACTIVE), 0);

	/* Alive, it is waited for: nothing recovered, nothing dead. */
	CHECK_EQ(grb_channel_recover(att, 0, &info), 0);
	CHECK_U64(info.records, 0);
	CHECK(info.waiting >= 1);
	read += read_dead(buf, own, &pads, &done);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events_dead, 0);
	CHECK(read < committed);

	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* The producer may end before its consumer recovers. */
	if (stop_first)
		CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_EQ(grb_channel_recover(att, 0, &info), 2);
	CHECK_U64(info.subbufs, 2);
	CHECK_U64(info.records, DEAD_FIRST + DEAD_SECOND);
	CHECK_U64(info.ambiguous, 0);
	CHECK_U64(info.waiting, 0);
	read += read_dead(buf, own, &pads, &done);
	/* Each dead run is padding (one event or more), never data. */
	CHECK(pads >= 2);
	CHECK_U64(read, committed);
	expect_dead_stats(t, committed, &st);
	CHECK_U64(st.events_overwritten, 0);

	/* The same once stopped (exact), the stream drained to its end. */
	if (!stop_first)
		CHECK_EQ(grb_ctf_stop(t), 0);
	while (!done)
		read += read_dead(buf, own, &pads, &done);
	CHECK_U64(read, committed);
	expect_dead_stats(t, committed, &st);
	CHECK_U64(st.events_overwritten, 0);
	CHECK_U64(st.packets, 0);
	CHECK_EQ(grb_buf_get_stats(buf, &bs), 0);
	CHECK_U64(bs.lost_dead, st.events_dead);
	CHECK_U64(bs.read, committed);
	CHECK_EQ(grb_reader_release(buf), 0);
	grb_channel_destroy(att);
	grb_ctf_destroy(t);
	munmap(sy, sizeof(*sy));
	rm_dir(dir);
}

/*
 * The same with both attr.shm_dir and attr.trace_dir: the writer thread
 * is the buffer's reader, so it is the one to complete what the dead
 * writer left, or the stream would stop at that packet for good.  Its
 * events (those committed after the dead ones too) come out in the
 * stream files while the tracer runs, and events_dead counts the dead.
 * With a period longer than the test (@running 0), grb_ctf_stop() must
 * complete them at once.
 */
static void contract_dead_thread(int running)
{
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	struct grb_ctf_stats st;
	struct dead_sync *sy;
	struct grb_ctf *t;
	uint64_t own = 0, committed, pads = 0, n = 0;
	char dir[256], out[256];
	int status;
	pid_t pid;

	memset(seen_own, 0, sizeof(seen_own));
	snprintf(dir, sizeof(dir), "%s/deadt", scratch);
	snprintf(out, sizeof(out), "%s/deadt_out", scratch);
	CHECK_EQ(mkdir(dir, 0755), 0);
	a.shm_dir = dir;
	a.trace_dir = out;
	a.flush_period_ns = running ? 2000000 : 3600000000000u;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	ev = reg_u64(t);
	sy = (struct dead_sync *)mmap(NULL, sizeof(*sy),
				      PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sy != MAP_FAILED);
	committed = emit_own(t, ev, &own, 10);
	atomic_store(&sy->go, 1);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		dead_writer(grb_ctf_config(a.alloc, a.mode, a.clock), t, ev,
			    sy);
	wait_stage(sy, 2, pid);
	committed += DEAD_COMMITTED;
	committed += emit_own(t, ev, &own, 3);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	/* Up to 5 s, the tracer running. */
	for (int i = 0; running && i < 500 && n < committed; i++) {
		sleep_ns(10000000);
		pads = 0;
		n = stream_events(out, "c", NULL, 0, &pads);
	}
	if (running) {
		CHECK_U64(n, committed);
		CHECK(pads >= 1);
		expect_dead_stats(t, committed, &st);
	}

	CHECK_EQ(grb_ctf_stop(t), 0);
	expect_dead_stats(t, committed, &st);
	CHECK_U64(st.packets_discarded, 0);
	pads = 0;
	CHECK_U64(stream_events(out, "c", seen_own, sizeof(seen_own), &pads),
		  committed);
	CHECK(pads >= 1);
	for (uint64_t v = 0; v < own; v++)
		CHECK_EQ(seen_own[v], 1);
	grb_ctf_destroy(t);
	munmap(sy, sizeof(*sy));
	rm_dir(dir);
	rm_dir(out);
}

int main(void)
{
	ctf_rig_start();
	contract_dead(GRB_MODE_DISCARD, 0);
	contract_dead(GRB_MODE_DISCARD, 1);
	contract_dead(GRB_MODE_OVERWRITE, 0);
	contract_dead(GRB_MODE_OVERWRITE, 1);
	contract_dead_thread(1);
	contract_dead_thread(0);
	return ctf_rig_done("test_ctf_dead");
}
