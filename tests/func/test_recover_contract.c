/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_recover_contract.c - what grb/recover.h and grb/shm.h
 * promise that test_recover.c, test_shm.c and test_shm_errors.c do not
 * check already, one promise per block:
 *
 *  - recovery: from an attached reader's and an attached writer's handle
 *    ("any role"); a zombie writer is dead; a live thread of the
 *    recovering process itself holds its sub-buffer; an open sub-buffer
 *    is not stuck; the deadline, 0 against one never reached, and its
 *    clock kept per handle; the stuck sub-buffers after the oldest done
 *    in the same call; grb_channel_recover() summing its buffers; a
 *    signal handler's committed record inside a dead reservation;
 *    100 dead writers in one sub-buffer; info.bytes exact;
 *    timestamps after the padding still in order;
 *  - shared channels: the client name's length bound, file modes
 *    whatever the umask, files allocated, -EEXIST on a later buffer
 *    leaving the earlier ones removed and the one found untouched,
 *    -EACCES, attach's buffer order and a configuration
 *    grb_config_check() refuses, attach_dir's name checks, the
 *    creator's callbacks alone, an attached destroy that does not
 *    finalize, one reader role across handles and processes, and
 *    grb_channel_send()'s group rule (as root).
 *
 * No check depends on timing: waits are bounded waits for what must
 * happen, and the one deadline check relies only on a monotonic clock
 * having advanced past a sleep.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/reader.h"
#include "grb/recover.h"
#include "grb/shm.h"
#include "tclient.h"

/* Dead writers in one sub-buffer: beyond the old bound of 24 pieces,
 * within the journal's GRB_JOURNAL_SLOTS threads. */
#define NDEAD 100
#define CLIENT "tclient"
#define SB 4096

struct shared {
	_Atomic int ready[NDEAD];
};

static struct shared *sh;
static char dir[] = "/tmp/grb-rc-XXXXXX";

static struct grb_basic *shared_basic(const char *name, enum grb_alloc alloc,
				      size_t sbsize)
{
	struct grb_basic_attr attr = {
		.name = name, .subbuf_size = sbsize, .num_subbuf = 4,
		.alloc = alloc, .mode = GRB_MODE_DISCARD,
		.compress_timestamps = 1,
	};
	struct grb_shm_attr sattr = { .client = GRB_BASIC_CLIENT, .gid = -1 };
	struct grb_basic *b;

	CHECK_EQ(grb_basic_create_shared(&attr, &sattr, &b), 0);
	return b;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

static void on_usr1(int sig)
{
	(void)sig;
}

static struct grb_basic *sig_b;

/* A handler that writes into the shared channel, and commits. */
static void on_usr1_write(int sig)
{
	(void)sig;
	if (grb_basic_write(sig_b, "sig", 3) != 0)
		_exit(3);
}

/*
 * Fork a writer that reserves @len bytes (on @cpu, -1: anywhere), fills
 * them, says so in sh->ready[@k] and then waits (@how 0) or exits without
 * committing (@how 1); with @how 2 a signal handler writes a record of
 * its own inside the reservation first.  Return when the reservation is
 * made; the pid.
 */
static pid_t reserver(struct grb_basic *b, unsigned int k, size_t len,
		      int cpu, int how)
{
	struct grb_basic_wctx wctx;
	pid_t pid;

	atomic_store(&sh->ready[k], 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (cpu >= 0)
			pin(cpu);
		if (grb_basic_reserve(b, len, &wctx) != 0)
			_exit(2);
		memset(wctx.data, 0xee, len);
		if (how == 2) {
			sig_b = b;
			signal(SIGUSR1, on_usr1_write);
			raise(SIGUSR1);
		}
		atomic_store(&sh->ready[k], 1);
		if (how == 1)
			_exit(0);
		for (;;)
			pause();
	}
	while (!atomic_load(&sh->ready[k]))
		usleep(1000);
	return pid;
}

static void kill_reap(pid_t pid)
{
	int status;

	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
}

static uint64_t produced(struct grb_channel *chan)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	return st.produced;
}

/*
 * Read every delivered sub-buffer of buffer @i through @rchan (its
 * reader): the records, whose timestamps must not go back (a record
 * after recovery's padding is expanded from the one before it); the
 * payload "sig" is counted in *@sigs when not NULL.  Return: records.
 */
static uint64_t drain(struct grb_channel *rchan, unsigned int i,
		      unsigned int *sigs)
{
	struct grb_buf *rb = grb_channel_buf(rchan, i);
	struct grb_basic_event ev;
	struct grb_reader_subbuf sb;
	uint64_t n = 0, prev, last = 0;
	size_t off, poff, next;
	int ret;

	while (grb_reader_get_next(rb) == 0) {
		CHECK_EQ(grb_reader_held(rb, &sb), 0);
		off = sizeof(struct grb_basic_subbuf_header);
		prev = 0;
		while ((ret = grb_basic_decode(sb.data, sb.data_size, off, prev,
					       &ev, &poff, &next)) == 0) {
			CHECK(ev.timestamp >= last);
			CHECK(ev.timestamp - last < UINT64_C(1) << 32 || !last);
			CHECK(memchr((const char *)sb.data + poff, 0xee,
				     ev.len) == NULL);
			if (sigs && ev.len == 3 &&
			    !memcmp((const char *)sb.data + poff, "sig", 3))
				(*sigs)++;
			last = prev = ev.timestamp;
			off = next;
			n++;
		}
		CHECK_EQ(ret, -ENODATA);
		CHECK_EQ(grb_reader_put_next(rb), 0);
	}
	return n;
}

static void check_info(const struct grb_recover_info *in, uint64_t subbufs,
		       uint64_t records, uint64_t waiting)
{
	CHECK_U64(in->subbufs, subbufs);
	CHECK_U64(in->records, records);
	CHECK_U64(in->waiting, waiting);
	CHECK_U64(in->ambiguous, 0);
}

/* ---- recovery ---------------------------------------------------------- */

/* "@buf: a buffer of a shared channel, created or attached (any role)". */
static void recover_any_role(void)
{
	struct grb_basic *b = shared_basic("roles", GRB_ALLOC_PER_CHANNEL, SB);
	struct grb_channel *chan = grb_basic_channel(b), *rd, *wr;
	const struct grb_config *cfg =
		grb_basic_config(GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 1);
	struct grb_recover_info info;
	struct grb_buf_stats st;
	int fd = grb_channel_shm_fd(chan, 0);
	pid_t pid;

	CHECK_EQ(grb_channel_attach(cfg, GRB_BASIC_CLIENT, &fd, 1,
				    GRB_ATTACH_READER, &rd), 0);
	CHECK_EQ(grb_channel_attach(cfg, GRB_BASIC_CLIENT, &fd, 1,
				    GRB_ATTACH_WRITER, &wr), 0);
	CHECK_EQ(grb_reader_open(grb_channel_buf(rd, 0)), 0);
	/* A dead writer; the attached reader recovers its sub-buffer. */
	CHECK_EQ(grb_basic_write(b, "one", 3), 0);
	pid = reserver(b, 0, 16, -1, 0);
	kill_reap(pid);
	CHECK_EQ(grb_channel_flush(rd, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_channel_recover(rd, 0, &info), 1);
	check_info(&info, 1, 1, 0);
	CHECK_U64(drain(rd, 0, NULL), 1);
	/* Another; the attached writer's handle recovers it. */
	pid = reserver(b, 0, 16, -1, 0);
	kill_reap(pid);
	CHECK_EQ(grb_basic_write(b, "two", 3), 0);
	CHECK_EQ(grb_channel_flush(rd, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_recover(grb_channel_buf(wr, 0), 0, &info), 1);
	check_info(&info, 1, 1, 0);
	CHECK_U64(drain(rd, 0, NULL), 1);
	/* The counters live in the mapping: every handle sees them. */
	CHECK_EQ(grb_channel_get_stats(wr, &st), 0);
	CHECK_U64(st.lost_dead, 2);
	CHECK_U64(st.recovered, 2);
	CHECK_U64(st.written, 2);
	CHECK_U64(st.read, 2);
	grb_channel_destroy(wr);
	grb_channel_destroy(rd);
	grb_basic_destroy(b);
}

/*
 * "no such pid, a zombie, ...": a writer that exited without committing
 * and is not reaped yet is dead.  And only a closed sub-buffer is stuck:
 * while the dead reservation's sub-buffer is open, nothing is done and
 * nothing is waiting.
 */
static void recover_zombie(void)
{
	struct grb_basic *b = shared_basic("zombie", GRB_ALLOC_PER_CHANNEL, SB);
	struct grb_channel *chan = grb_basic_channel(b);
	struct grb_recover_info info;
	struct grb_buf_stats st;
	siginfo_t si;
	pid_t pid;

	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(grb_basic_write(b, "before", 6), 0);
	pid = reserver(b, 0, 24, -1, 1);
	/* Exited, not reaped (WNOWAIT): a zombie. */
	memset(&si, 0, sizeof(si));
	CHECK_EQ(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(grb_basic_write(b, "after", 5), 0);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 0);
	check_info(&info, 0, 0, 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 1);
	check_info(&info, 1, 1, 0);
	CHECK_EQ(waitpid(pid, NULL, 0), pid);
	CHECK_U64(drain(chan, 0, NULL), 2);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 1);
	grb_basic_destroy(b);
}

/*
 * "A sub-buffer in which a live thread holds a reservation is left
 * alone": the recovering process's own thread included.
 */
static void recover_self_live(void)
{
	struct grb_basic *b = shared_basic("self", GRB_ALLOC_PER_CHANNEL, SB);
	struct grb_channel *chan = grb_basic_channel(b);
	struct grb_buf *rb = grb_channel_buf(chan, 0);
	struct grb_recover_info info;
	struct grb_basic_wctx wctx;
	struct grb_buf_stats st;

	CHECK_EQ(grb_reader_open(rb), 0);
	CHECK_EQ(grb_basic_reserve(b, 16, &wctx), 0);
	memset(wctx.data, 0x11, 16);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 0);
	check_info(&info, 0, 0, 1);
	CHECK_EQ(grb_reader_get_next(rb), -EAGAIN);
	grb_basic_commit(&wctx);
	CHECK_U64(drain(chan, 0, NULL), 1);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 0);
	check_info(&info, 0, 0, 0);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 0);
	CHECK_U64(st.recovered, 0);
	grb_basic_destroy(b);
}

/*
 * The deadline: one never reached leaves dead writers' sub-buffers
 * alone, counted in waiting; its clock is this handle's, started at its
 * first call that sees the oldest stuck; once run out, the stuck
 * sub-buffers after the oldest are done in the same call.  info.bytes is
 * the dead records' slots, exactly.
 */
static void recover_deadline(void)
{
	struct grb_basic *b = shared_basic("deadline", GRB_ALLOC_PER_CHANNEL,
					   SB);
	struct grb_channel *chan = grb_basic_channel(b), *other;
	const struct grb_config *cfg =
		grb_basic_config(GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 1);
	const uint64_t d = 200000000;   /* 0.2 s */
	struct grb_recover_info info;
	struct grb_buf_stats st;
	uint64_t p0, slots = 0;
	int fd = grb_channel_shm_fd(chan, 0);
	unsigned int i;
	pid_t pid;

	CHECK_EQ(grb_channel_attach(cfg, GRB_BASIC_CLIENT, &fd, 1,
				    GRB_ATTACH_READER, &other), 0);
	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	/* Two sub-buffers, each stuck on a dead reservation. */
	for (i = 0; i < 2; i++) {
		CHECK_EQ(grb_basic_write(b, "before", 6), 0);
		p0 = produced(chan);
		pid = reserver(b, 0, 40, -1, 0);
		slots += produced(chan) - p0;
		kill_reap(pid);
		CHECK_EQ(grb_basic_write(b, "after", 5), 0);
		CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	}
	for (i = 0; i < 3; i++) {
		CHECK_EQ(grb_channel_recover(chan, UINT64_MAX, &info), 0);
		check_info(&info, 0, 0, 2);
		CHECK_EQ(grb_reader_get_next(grb_channel_buf(chan, 0)), -EAGAIN);
	}
	/* This handle has seen them stuck since the first call above. */
	usleep((useconds_t)(d / 1000 + 50000));
	/* Another handle's clock starts now: it waits. */
	CHECK_EQ(grb_channel_recover(other, d, &info), 0);
	check_info(&info, 0, 0, 2);
	/* This one's has run out: both, in one call. */
	CHECK_EQ(grb_channel_recover(chan, d, &info), 2);
	check_info(&info, 2, 2, 0);
	CHECK_U64(info.bytes, slots);
	CHECK_U64(drain(chan, 0, NULL), 4);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 2);
	CHECK_U64(st.recovered, 2);
	grb_channel_destroy(other);
	grb_basic_destroy(b);
}

/* grb_channel_recover(): the sum of its buffers' returns and infos. */
static void recover_channel_sum(void)
{
	struct grb_basic *b;
	struct grb_channel *chan;
	struct grb_recover_info info;
	struct grb_buf_stats st;
	unsigned int i;
	pid_t pid;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("recover_channel_sum: skipped: one CPU\n");
		return;
	}
	b = shared_basic("sum", GRB_ALLOC_PER_CPU, SB);
	chan = grb_basic_channel(b);
	CHECK(grb_channel_nr_bufs(chan) >= 2);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
		pid = reserver(b, i, 16, (int)i, 0);
		kill_reap(pid);
	}
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_channel_recover(chan, UINT64_MAX, &info), 0);
	check_info(&info, 0, 0, 2);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 2);
	check_info(&info, 2, 2, 0);
	for (i = 0; i < 2; i++) {
		CHECK_U64(drain(chan, i, NULL), 0);
		CHECK_EQ(grb_buf_get_stats(grb_channel_buf(chan, i), &st), 0);
		CHECK_U64(st.lost_dead, 1);
		CHECK_U64(st.recovered, 1);
	}
	grb_basic_destroy(b);
}

/*
 * "A signal handler that reserves in a shared buffer must commit before
 * it returns": one that did, inside a reservation its process died
 * holding, is read; only the dead outer record is lost.
 */
static void recover_signal_nested(void)
{
	struct grb_basic *b = shared_basic("signal", GRB_ALLOC_PER_CHANNEL, SB);
	struct grb_channel *chan = grb_basic_channel(b);
	struct grb_recover_info info;
	struct grb_buf_stats st;
	unsigned int sigs = 0;
	pid_t pid;

	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(grb_basic_write(b, "before", 6), 0);
	pid = reserver(b, 0, 32, -1, 2);
	kill_reap(pid);
	CHECK_EQ(grb_basic_write(b, "after", 5), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 1);
	check_info(&info, 1, 1, 0);
	CHECK_U64(drain(chan, 0, &sigs), 3);
	CHECK_EQ(sigs, 1);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 1);
	CHECK_U64(st.written, 3);
	grb_basic_destroy(b);
}

/*
 * "when every thread with a reservation in it belongs to a process that
 * is gone, it ... delivers the sub-buffer", however many died holding
 * one: NDEAD (100) writer processes die holding reservations in one
 * sub-buffer (a process group killed at once).
 */
static void recover_many_dead(void)
{
	struct grb_basic *b = shared_basic("many", GRB_ALLOC_PER_CHANNEL,
					   4 * SB);
	struct grb_channel *chan = grb_basic_channel(b);
	struct grb_recover_info info;
	struct grb_buf_stats st;
	pid_t pids[NDEAD];
	unsigned int i;

	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(grb_basic_write(b, "before", 6), 0);
	for (i = 0; i < NDEAD; i++)
		pids[i] = reserver(b, i, 16, -1, 0);
	for (i = 0; i < NDEAD; i++)
		kill_reap(pids[i]);
	CHECK_EQ(grb_basic_write(b, "after", 5), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 1);
	check_info(&info, 1, NDEAD, 0);
	CHECK_U64(drain(chan, 0, NULL), 2);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, NDEAD);
	grb_basic_destroy(b);
}

/* ---- shared channels --------------------------------------------------- */

static void path_of(char *out, size_t n, const char *name, unsigned int i)
{
	snprintf(out, n, "%s/%s.%u", dir, name, i);
}

/* Client names: 1 to GRB_SHM_CLIENT_MAX bytes, and the longest attaches. */
static void shm_client_names(void)
{
	const struct grb_config *cfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD);
	struct grb_channel_attr attr = { "names", SB, 4, NULL };
	char name[GRB_SHM_CLIENT_MAX + 2];
	struct grb_shm_attr sattr = { name, NULL, -1 };
	struct grb_channel *chan, *att;
	int fd;

	memset(name, 'c', sizeof(name));
	name[GRB_SHM_CLIENT_MAX + 1] = '\0';
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan), -EINVAL);
	name[GRB_SHM_CLIENT_MAX] = '\0';
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan), 0);
	fd = grb_channel_shm_fd(chan, 0);
	CHECK_EQ(grb_channel_attach(cfg, name, &fd, 1, GRB_ATTACH_READER,
				    &att), 0);
	grb_channel_destroy(att);
	name[GRB_SHM_CLIENT_MAX - 1] = '\0';
	CHECK_EQ(grb_channel_attach(cfg, name, &fd, 1, GRB_ATTACH_READER,
				    &att), -EPROTOTYPE);
	grb_channel_destroy(chan);
	sattr.client = NULL;
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan), -EINVAL);
}

/*
 * "Files are created owner-only (0600), or 0660 with the group", the
 * mode asked for whatever the umask; and allocated, not sparse.
 */
static void shm_modes(void)
{
	const struct grb_config *cfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD);
	struct grb_channel_attr attr = { "modes", SB, 4, NULL };
	struct grb_shm_attr sattr = { CLIENT, dir, -1 };
	struct grb_channel *chan;
	char path[512];
	struct stat st;
	mode_t old;
	int g;

	path_of(path, sizeof(path), "modes", 0);
	for (g = 0; g < 2; g++) {
		old = umask(0777);
		sattr.gid = g ? (int)getgid() : -1;
		CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan), 0);
		umask(old);
		CHECK_EQ(stat(path, &st), 0);
		CHECK_EQ(st.st_mode & 07777, g ? 0660 : 0600);
		CHECK((uint64_t)st.st_blocks * 512 >= (uint64_t)st.st_size);
		grb_channel_destroy(chan);
		CHECK(access(path, F_OK) != 0);
	}
}

/*
 * -EEXIST for a later buffer's file: "nothing is overwritten" and "no
 * file is left behind": the earlier buffers' files are removed, the one
 * found is left as it was.
 */
static void shm_eexist_later(void)
{
	const struct grb_config *cfg = tc_config(TV_SHARED | TV_DISCARD);
	struct grb_channel_attr attr = { "later", SB, 4, NULL };
	struct grb_shm_attr sattr = { CLIENT, dir, -1 };
	struct grb_channel *chan;
	char path[512], got[8];
	int fd;

	if (sysconf(_SC_NPROCESSORS_CONF) < 2) {
		printf("shm_eexist_later: skipped: one buffer only\n");
		return;
	}
	path_of(path, sizeof(path), "later", 1);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "keep", 4), 4);
	close(fd);
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan), -EEXIST);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(read(fd, got, sizeof(got)), 4);
	CHECK(memcmp(got, "keep", 4) == 0);
	close(fd);
	CHECK_EQ(unlink(path), 0);
	path_of(path, sizeof(path), "later", 0);
	CHECK(access(path, F_OK) != 0);
}

/* Attach: descriptors in another order than the buffers', one twice, and
 * a configuration grb_config_check() refuses; attach_dir's names. */
static void shm_attach_args(void)
{
	const struct grb_config *cfg = tc_config(TV_SHARED | TV_DISCARD);
	struct grb_channel_attr attr = { "order", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_channel *chan, *att;
	struct grb_config bad;
	int fds[2];

	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &mem, &chan), 0);
	if (grb_channel_nr_bufs(chan) >= 2) {
		CHECK_EQ(grb_channel_nr_bufs(chan), 2);
		fds[0] = grb_channel_shm_fd(chan, 1);
		fds[1] = grb_channel_shm_fd(chan, 0);
		CHECK_EQ(grb_channel_attach(cfg, CLIENT, fds, 2,
					    GRB_ATTACH_READER, &att), -EBADMSG);
		fds[0] = grb_channel_shm_fd(chan, 0);
		CHECK_EQ(grb_channel_attach(cfg, CLIENT, fds, 2,
					    GRB_ATTACH_READER, &att), -EBADMSG);
		fds[1] = grb_channel_shm_fd(chan, 1);
		CHECK_EQ(grb_channel_attach(cfg, CLIENT, fds, 2,
					    GRB_ATTACH_WRITER, &att), 0);
		grb_channel_destroy(att);
	}
	fds[0] = grb_channel_shm_fd(chan, 0);
	memcpy(&bad, cfg, sizeof(bad));
	bad.timestamp_bits = 65;
	CHECK_EQ(grb_channel_attach(&bad, CLIENT, fds, 1, GRB_ATTACH_READER,
				    &att), -EINVAL);
	grb_channel_destroy(chan);
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, NULL,
					GRB_ATTACH_READER, &att), -EINVAL);
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "a/b",
					GRB_ATTACH_READER, &att), -EINVAL);
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, NULL, "x",
					GRB_ATTACH_READER, &att), -EINVAL);
}

static int n_create, n_finalize;

static int count_create(struct grb_buf *buf, void *priv, int cpu)
{
	(void)buf, (void)priv, (void)cpu;
	n_create++;
	return 0;
}

static void count_finalize(struct grb_buf *buf, void *priv, int cpu)
{
	(void)buf, (void)priv, (void)cpu;
	n_finalize++;
}

/*
 * Roles: the buffer_create and buffer_finalize callbacks are the
 * creator's alone; an attached channel's destroy only unmaps (it does
 * not finalize the channel for its readers).
 */
static void shm_roles(void)
{
	static struct grb_config cfg;
	struct grb_channel_attr attr = { "roles", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_channel *chan, *rd, *wr;
	struct grb_buf *own;
	uint64_t c, p;
	int fd;

	memcpy(&cfg, tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD),
	       sizeof(cfg));
	cfg.cb.buffer_create = count_create;
	cfg.cb.buffer_finalize = count_finalize;
	CHECK_EQ(grb_channel_create_shared(&cfg, &attr, &mem, &chan), 0);
	CHECK_EQ(n_create, 1);
	own = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_reader_open(own), 0);
	fd = grb_channel_shm_fd(chan, 0);
	CHECK_EQ(grb_channel_attach(&cfg, CLIENT, &fd, 1, GRB_ATTACH_WRITER,
				    &wr), 0);
	CHECK_EQ(grb_channel_attach(&cfg, CLIENT, &fd, 1, GRB_ATTACH_READER,
				    &rd), 0);
	CHECK_EQ(n_create, 1);
	CHECK_EQ(grb_channel_finalize(rd), -EPERM);
	grb_channel_destroy(wr);
	grb_channel_destroy(rd);
	CHECK_EQ(n_create, 1);
	CHECK_EQ(n_finalize, 0);
	CHECK_EQ(grb_reader_snapshot(own, &c, &p), -EAGAIN);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(n_finalize, 1);
	CHECK_EQ(grb_reader_snapshot(own, &c, &p), -ENODATA);
	grb_channel_destroy(chan);
	CHECK_EQ(n_finalize, 1);
}

/* "one reader role per buffer, wherever it runs": -EBUSY in another
 * handle and another process; a flag in the mapping, so a process that
 * exits holding it leaves it taken. */
static void shm_reader_role(void)
{
	const struct grb_config *cfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD);
	struct grb_channel_attr attr = { "role", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_channel *chan, *att;
	struct grb_buf *own;
	int fd, round, status, want;
	pid_t pid;

	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &mem, &chan), 0);
	own = grb_channel_buf(chan, 0);
	fd = grb_channel_shm_fd(chan, 0);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, &fd, 1, GRB_ATTACH_READER,
				    &att), 0);
	CHECK_EQ(grb_reader_open(own), 0);
	CHECK_EQ(grb_reader_open(grb_channel_buf(att, 0)), -EBUSY);
	for (round = 0; round < 2; round++) {
		want = round ? 0 : -EBUSY;
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			struct grb_channel *c;

			if (grb_channel_attach(cfg, CLIENT, &fd, 1,
					       GRB_ATTACH_READER, &c) != 0)
				_exit(2);
			_exit(grb_reader_open(grb_channel_buf(c, 0)) == want ?
			      0 : 1);
		}
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		if (round == 0)
			CHECK_EQ(grb_reader_release(own), 0);
	}
	/* The child exited holding it. */
	CHECK_EQ(grb_reader_open(own), -EBUSY);
	CHECK_EQ(grb_reader_open(grb_channel_buf(att, 0)), -EBUSY);
	CHECK_EQ(grb_reader_takeover(own), 1);
	grb_channel_destroy(att);
	grb_channel_destroy(chan);
}

#define GROUP 4242              /* a group no account needs to have */

/*
 * A process of uid 65534 and primary group @gid: attaches by path through
 * the group's mode, may not create files in the test's directory, and
 * connects to the test twice to receive what it sends.
 */
static void group_child(const struct sockaddr_un *sa, gid_t gid, int member)
{
	const struct grb_config *cfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD);
	struct grb_channel_attr attr = { "mine", SB, 4, NULL };
	struct grb_shm_attr sattr = { CLIENT, dir, -1 };
	struct grb_channel *att;
	int s, round;

	CHECK_EQ(setgroups(0, NULL), 0);
	CHECK_EQ(setresgid(gid, gid, gid), 0);
	CHECK_EQ(setresuid(65534, 65534, 65534), 0);
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "grp",
					GRB_ATTACH_READER, &att),
		 member ? 0 : -EACCES);
	if (member)
		grb_channel_destroy(att);
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &att), -EACCES);
	for (round = 0; round < 1 + member; round++) {
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		CHECK(s >= 0);
		CHECK_EQ(connect(s, (const struct sockaddr *)sa, sizeof(*sa)), 0);
		CHECK_EQ(grb_channel_recv(s, cfg, CLIENT, GRB_ATTACH_READER,
					  &att),
			 member && round == 0 ? 0 : -ECONNRESET);
		if (member && round == 0)
			grb_channel_destroy(att);
		close(s);
	}
	_exit(0);
}

/*
 * grb_channel_send(): a peer whose primary group is the channel's group
 * may attach, from the creator; an attached channel does not know the
 * group and refuses it; a peer of another group is refused.  As root.
 */
static void shm_group_send(void)
{
	const struct grb_config *cfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD);
	struct grb_channel_attr attr = { "grp", SB, 4, NULL };
	struct grb_shm_attr sattr = { CLIENT, dir, GROUP };
	struct grb_channel *chan, *att;
	struct sockaddr_un sa;
	int lsock, conn, status, member;
	pid_t pid;

	if (geteuid() != 0) {
		printf("shm_group_send: skipped: needs root\n");
		return;
	}
	CHECK_EQ(chmod(dir, 0755), 0);
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan), 0);
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "grp",
					GRB_ATTACH_READER, &att), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "grb-rc-%d",
		 (int)getpid());
	lsock = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(lsock >= 0);
	CHECK_EQ(bind(lsock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_EQ(listen(lsock, 2), 0);
	for (member = 1; member >= 0; member--) {
		fflush(stdout);
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0)
			group_child(&sa, member ? GROUP : 65534, member);
		conn = accept(lsock, NULL, NULL);
		CHECK(conn >= 0);
		CHECK_EQ(grb_channel_send(chan, conn), member ? 0 : -EPERM);
		close(conn);
		if (member) {
			conn = accept(lsock, NULL, NULL);
			CHECK(conn >= 0);
			CHECK_EQ(grb_channel_send(att, conn), -EPERM);
			close(conn);
		}
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	close(lsock);
	grb_channel_destroy(att);
	grb_channel_destroy(chan);
	CHECK_EQ(chmod(dir, 0700), 0);
}

int main(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	signal(SIGUSR1, on_usr1);
	CHECK(mkdtemp(dir) != NULL);
	recover_any_role();
	recover_zombie();
	recover_self_live();
	recover_deadline();
	recover_channel_sum();
	recover_signal_nested();
	recover_many_dead();
	printf("recovery: any role, zombie, own live thread, open sub-buffer, "
	       "deadline per handle, channel sum, signal handler, %d dead\n",
	       NDEAD);
	shm_client_names();
	shm_modes();
	shm_eexist_later();
	shm_attach_args();
	shm_roles();
	shm_reader_role();
	shm_group_send();
	printf("shm: client names, modes, -EEXIST, attach arguments, roles, "
	       "reader role, group\n");
	CHECK_EQ(rmdir(dir), 0);        /* nothing left behind */
	return 0;
}
