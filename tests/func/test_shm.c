/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_shm.c - shared channels (grb/shm.h) across processes.
 *
 *  - every record read exactly once or counted: the creating process and
 *    2 or 4 writer processes write tagged records into the same buffers,
 *    moving between CPUs and interrupted by signals whose handlers write
 *    too, while a reader process drains them; each process got the
 *    channel over a UNIX socket (grb_channel_send/recv).  The reader runs
 *    the tagged-record checker (tests/common/tclient.h) on what it read,
 *    against the writers' marks kept in memory shared by all of them, and
 *    its final accounting must add up, in both modes;
 *  - attach refusals: another client name or configuration, a wrong
 *    count of descriptors, a truncated file, another layout version, not
 *    a grb buffer, a descriptor not open read-write; creation refusals;
 *    the owner-only file mode and the group mode;
 *  - roles: an attached process cannot finalize, and destroying it leaves
 *    the channel working; files removed when the owner destroys it;
 *  - a corrupt index or size in the mapping is -EBADMSG from the reader;
 *  - as root: a process of another uid is refused by grb_channel_send()
 *    and cannot open the owner-only files;
 *  - creation on a full filesystem and the socket hand-over's errors are
 *    in test_shm_errors.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/iter.h"
#include "grb/output.h"
#include "grb/shm.h"
#include "tclient.h"

#define CLIENT "tclient"
#define SB 4096
#define PER 20000               /* records per writer */
#define MAXW 10                 /* writer ids: 5 processes, + handlers */

/* What the processes of one run share, besides the channel. */
struct shared {
	_Atomic uint64_t clock;
	_Atomic uint64_t refused;
	_Atomic int done;               /* writers finished, finalized */
	_Atomic int stop_signals;
};

static struct shared *sh;

static void *shared_zero(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	return p;
}

/* ---- a writer process ------------------------------------------------ */

static const struct grb_config *w_cfg;
static struct grb_channel *w_chan;
static struct tc_checker *w_tc;
static uint32_t w_handler_id;
static uint32_t w_handler_seq;

/* A signal handler that writes: nesting inside the process's writer. */
static void on_signal(int sig)
{
	(void)sig;
	if (w_handler_seq >= PER)
		return;
	if (tc_write(w_cfg, w_chan, w_handler_id, w_handler_seq, 3) == 0)
		tc_mark_reserved(w_tc, w_handler_id, w_handler_seq);
	else
		atomic_fetch_add(&sh->refused, 1);
	w_handler_seq++;
}

/* The creator signals the writer processes while it writes. */
static pid_t *sig_pids;
static unsigned int sig_n;

static void write_all(const struct grb_config *cfg, struct grb_channel *chan,
		      struct tc_checker *tc, uint32_t id)
{
	unsigned int p;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t seq;
	cpu_set_t set;

	for (seq = 0; seq < PER; seq++) {
		if (ncpu > 1 && seq % 512 == 0) {
			/* Move to another CPU: another per-CPU buffer. */
			CPU_ZERO(&set);
			CPU_SET((int)((seq / 512 + id) % (uint32_t)ncpu), &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
		if (tc_write(cfg, chan, id, seq, seq % 29) == 0)
			tc_mark_reserved(tc, id, seq);
		else
			atomic_fetch_add(&sh->refused, 1);
		if (seq % 1024 == 0)
			sched_yield();
		for (p = 0; seq % 128 == 0 && p < sig_n; p++)
			kill(sig_pids[p], SIGUSR1);
	}
}

static void writer_process(int sock, const struct grb_config *cfg,
			   struct tc_checker *tc, uint32_t id, uint32_t hid)
{
	struct sigaction sa;

	CHECK_EQ(grb_channel_recv(sock, cfg, CLIENT, GRB_ATTACH_WRITER,
				  &w_chan), 0);
	close(sock);
	w_cfg = cfg;
	w_tc = tc;
	w_handler_id = hid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	write_all(cfg, w_chan, tc, id);
	/* Block the handler before the channel goes away. */
	signal(SIGUSR1, SIG_IGN);
	/* An attached writer cannot end the channel for everyone. */
	CHECK_EQ(grb_channel_finalize(w_chan), -EPERM);
	grb_channel_destroy(w_chan);
	_exit(0);
}

/* ---- the reader process ----------------------------------------------- */

static void reader_process(int sock, const struct grb_config *cfg,
			   struct tc_checker *tc)
{
	struct grb_channel *chan;
	unsigned int i;
	uint64_t errors;

	CHECK_EQ(grb_channel_recv(sock, cfg, CLIENT, GRB_ATTACH_READER,
				  &chan), 0);
	close(sock);
	for (i = 0; i < grb_channel_nr_bufs(chan); i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
	while (!atomic_load(&sh->done)) {
		/* Flush from this side, as a consumer's timer would. */
		CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
		if (tc_drain_all(tc, chan) == 0)
			usleep(200);
	}
	/* Finalized: everything is delivered; read the rest. */
	while (tc_drain_all(tc, chan) != 0)
		;
	errors = tc_final_check(tc, chan, atomic_load(&sh->refused));
	if (errors || tc->records_read == 0) {
		fprintf(stderr, "test_shm: reader: %llu errors, %llu read\n",
			(unsigned long long)errors,
			(unsigned long long)tc->records_read);
		_exit(1);
	}
	CHECK_EQ(grb_channel_finalize(chan), -EPERM);
	grb_channel_destroy(chan);
	_exit(0);
}

static void wait_ok(pid_t pid, const char *what)
{
	int st;

	CHECK_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "test_shm: %s process failed (status %#x)\n",
			what, st);
		exit(1);
	}
}

static void cross_process(int variant, unsigned int nproc)
{
	const struct grb_config *cfg = tc_config(variant | TV_SHARED);
	struct grb_channel_attr attr = { "xproc", SB, 8, NULL };
	struct grb_shm_attr sattr = { CLIENT, NULL, -1 };
	struct grb_channel *chan;
	struct tc_checker tc;
	struct grb_buf_stats st;
	pid_t reader, writers[8];
	int sv[2];
	unsigned int p;
	size_t nmarks = (size_t)MAXW * PER;

	memset(sh, 0, sizeof(*sh));
	tc_clock_share(&sh->clock);
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan), 0);
	CHECK_EQ(tc_checker_init(&tc, chan, MAXW, PER), 0);
	/* The writers' marks, where the reader process sees them. */
	free(tc.reserved);
	tc.reserved = shared_zero(nmarks);

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	reader = fork();
	CHECK(reader >= 0);
	if (reader == 0) {
		close(sv[0]);
		reader_process(sv[1], cfg, &tc);
	}
	close(sv[1]);
	CHECK_EQ(grb_channel_send(chan, sv[0]), 0);
	close(sv[0]);

	for (p = 0; p < nproc; p++) {
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		writers[p] = fork();
		CHECK(writers[p] >= 0);
		if (writers[p] == 0) {
			close(sv[0]);
			writer_process(sv[1], cfg, &tc, 1 + p, 5 + p);
		}
		close(sv[1]);
		CHECK_EQ(grb_channel_send(chan, sv[0]), 0);
		close(sv[0]);
	}
	/* The creator writes too (writer 0), and signals the others. */
	sig_pids = writers;
	sig_n = nproc;
	write_all(cfg, chan, &tc, 0);
	sig_n = 0;
	for (p = 0; p < nproc; p++)
		wait_ok(writers[p], "writer");
	CHECK_EQ(grb_channel_finalize(chan), 0);
	atomic_store(&sh->done, 1);
	wait_ok(reader, "reader");
	/* The counters the reader kept are in the shared mapping. */
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK(st.read > 0);
	CHECK_U64(st.written, st.read + st.overwritten);
	if (variant & TV_DISCARD)
		CHECK_U64(st.overwritten, 0);
	printf("test_shm: %-26s %u writer processes: %llu written, %llu read,"
	       " %llu overwritten, %llu refused\n", tc_variant_name(variant),
	       nproc, (unsigned long long)st.written,
	       (unsigned long long)st.read,
	       (unsigned long long)st.overwritten,
	       (unsigned long long)atomic_load(&sh->refused));
	munmap(tc.reserved, nmarks);
	tc.reserved = NULL;
	tc_checker_free(&tc);
	grb_channel_destroy(chan);
	tc_clock_share(NULL);
}

/* ---- refusals ----------------------------------------------------------- */

static char dir[] = "/tmp/grb-shm-XXXXXX";

static void path_of(char *out, size_t n, const char *name, unsigned int i)
{
	snprintf(out, n, "%s/%s.%u", dir, name, i);
}

/* Copy the first len bytes of name.0 to copy.0. */
static void copy_file(const char *name, const char *copy, size_t len)
{
	char from[512], to[512];
	char *buf = malloc(len);
	int in, out;

	path_of(from, sizeof(from), name, 0);
	path_of(to, sizeof(to), copy, 0);
	CHECK(buf != NULL);
	in = open(from, O_RDONLY);
	out = open(to, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(in >= 0 && out >= 0);
	CHECK_EQ(pread(in, buf, len, 0), (ssize_t)len);
	CHECK_EQ(pwrite(out, buf, len, 0), (ssize_t)len);
	close(in);
	close(out);
	free(buf);
}

static void patch_file(const char *name, off_t at, const void *v, size_t n)
{
	char path[512];
	int fd;

	path_of(path, sizeof(path), name, 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(pwrite(fd, v, n, at), (ssize_t)n);
	close(fd);
}

static void test_refusals(void)
{
	const struct grb_config *cfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD);
	const struct grb_config *other =
		tc_config(TV_SHARED | TV_PER_CHANNEL);
	const struct grb_config *percpu = tc_config(TV_SHARED | TV_DISCARD);
	struct grb_channel_attr attr = { "chan", SB, 4, NULL };
	struct grb_channel_attr noname = { NULL, SB, 4, NULL };
	struct grb_shm_attr sattr = { CLIENT, dir, -1 };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_shm_attr bad = { "", NULL, -1 };
	struct grb_channel *chan, *att, *c2;
	struct grb_buf_shm d;
	struct stat st;
	char path[512], before[64], after[64];
	static const char *const copies[] = { "short", "tiny", "ver", "geom",
					      "magic", "nbufs" };
	uint32_t version = GRB_SHM_VERSION + 1;
	size_t i;
	int fd, fds[2];
	size_t map_size;

	CHECK(mkdtemp(dir) != NULL);
	/* Creation refusals. */
	CHECK_EQ(grb_channel_create_shared(tc_config(TV_PER_CHANNEL |
						     TV_DISCARD),
					   &attr, &sattr, &chan), -EINVAL);
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, NULL, &chan), -EINVAL);
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &bad, &chan), -EINVAL);
	bad.client = "a-client-name-longer-than-31-bytes";
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &bad, &chan), -EINVAL);
	CHECK_EQ(grb_channel_create_shared(cfg, &noname, &sattr, &chan),
		 -EINVAL);
	sattr.dir = "/nonexistent/grb";
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan),
		 -ENOENT);
	sattr.dir = dir;
	attr.name = "a/b";
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan),
		 -EINVAL);
	attr.name = "chan";
	CHECK_EQ(grb_channel_shm_fd(NULL, 0), -EINVAL);

	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan), 0);
	path_of(path, sizeof(path), "chan", 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	map_size = (size_t)st.st_size;
	/* A second channel of the same name overwrites nothing. */
	fd = open(path, O_RDONLY);
	CHECK_EQ(pread(fd, before, sizeof(before), 0), (ssize_t)sizeof(before));
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &c2), -EEXIST);
	CHECK_EQ(pread(fd, after, sizeof(after), 0), (ssize_t)sizeof(after));
	CHECK(memcmp(before, after, sizeof(before)) == 0);
	close(fd);

	/* Identity and description checks. */
	/* A configuration without GRB_CONFIG_SHARED does not journal. */
	CHECK_EQ(grb_channel_attach_dir(tc_config(TV_PER_CHANNEL | TV_DISCARD),
					CLIENT, dir, "chan", GRB_ATTACH_WRITER,
					&att), -EINVAL);
	CHECK_EQ(grb_channel_attach_dir(cfg, "other", dir, "chan",
					GRB_ATTACH_READER, &att), -EPROTOTYPE);
	CHECK_EQ(grb_channel_attach_dir(other, CLIENT, dir, "chan",
					GRB_ATTACH_READER, &att), -EPROTOTYPE);
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "missing",
					GRB_ATTACH_READER, &att), -ENOENT);
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "chan", 7, &att),
		 -EINVAL);
	/* "Return: as grb_channel_attach()": its argument errors come
	 * before any file is looked at, a missing one included. */
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "missing", 7, &att),
		 -EINVAL);
	CHECK_EQ(grb_channel_attach_dir(tc_config(TV_PER_CHANNEL | TV_DISCARD),
					CLIENT, dir, "missing",
					GRB_ATTACH_READER, &att), -EINVAL);
	fds[0] = fds[1] = grb_channel_shm_fd(chan, 0);
	CHECK(fds[0] >= 0);
	CHECK_EQ(grb_channel_shm_fd(chan, 1), -EINVAL);
	/* Direct attach: NULL arguments, no descriptor or too many, an
	 * unknown role. */
	CHECK_EQ(grb_channel_attach(NULL, CLIENT, fds, 1, GRB_ATTACH_READER,
				    &att), -EINVAL);
	CHECK_EQ(grb_channel_attach(cfg, NULL, fds, 1, GRB_ATTACH_READER,
				    &att), -EINVAL);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, NULL, 1, GRB_ATTACH_READER,
				    &att), -EINVAL);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, fds, 1, GRB_ATTACH_READER,
				    NULL), -EINVAL);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, fds, 0, GRB_ATTACH_READER,
				    &att), -EINVAL);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, fds, GRB_SHM_MAX_BUFS + 1,
				    GRB_ATTACH_READER, &att), -EINVAL);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, fds, 1, 7, &att), -EINVAL);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, fds, 2, GRB_ATTACH_READER,
				    &att), -EBADMSG);
	/* A per-CPU configuration of the same client: another layout. */
	CHECK_EQ(grb_channel_attach(percpu, CLIENT, fds, 1, GRB_ATTACH_READER,
				    &att), -EPROTOTYPE);
	/* Buffers of two channels, each in its own place: not one channel
	 * (their channel ids differ); the same two of one channel are. */
	{
		struct grb_shm_attr anon = { CLIENT, NULL, -1 };
		struct grb_channel *ca, *cb;
		int mix[2];

		CHECK_EQ(grb_channel_create_shared(percpu, &attr, &anon, &ca),
			 0);
		CHECK_EQ(grb_channel_create_shared(percpu, &attr, &anon, &cb),
			 0);
		/* Two buffers (two possible CPUs): a count of 2 in @fds is
		 * right for both channels. */
		if (grb_channel_nr_bufs(ca) == 2) {
			mix[0] = grb_channel_shm_fd(ca, 0);
			mix[1] = grb_channel_shm_fd(cb, 1);
			CHECK_EQ(grb_channel_attach(percpu, CLIENT, mix, 2,
						    GRB_ATTACH_READER, &att),
				 -EBADMSG);
			mix[1] = grb_channel_shm_fd(ca, 1);
			CHECK_EQ(grb_channel_attach(percpu, CLIENT, mix, 2,
						    GRB_ATTACH_READER, &att), 0);
			grb_channel_destroy(att);
		} else {
			printf("test_shm: %u possible CPUs, not 2: the mixed "
			       "attach is not checked\n",
			       grb_channel_nr_bufs(ca));
		}
		grb_channel_destroy(cb);
		grb_channel_destroy(ca);
	}
	copy_file("chan", "short", 4096);
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "short",
					GRB_ATTACH_READER, &att), -EBADMSG);
	copy_file("chan", "tiny", 16);
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "tiny",
					GRB_ATTACH_READER, &att), -EBADMSG);
	copy_file("chan", "ver", map_size);
	patch_file("ver", offsetof(struct grb_buf_shm, version), &version,
		   sizeof(version));
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "ver",
					GRB_ATTACH_READER, &att),
		 -EPROTONOSUPPORT);
	copy_file("chan", "geom", map_size);
	d.off_data = 4096 * 3;
	patch_file("geom", offsetof(struct grb_buf_shm, off_data), &d.off_data,
		   sizeof(d.off_data));
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "geom",
					GRB_ATTACH_READER, &att), -EBADMSG);
	/* A buffer count of 0 or beyond the limit, before any is opened. */
	copy_file("chan", "nbufs", map_size);
	for (i = 0; i < 2; i++) {
		uint32_t nb = i ? GRB_SHM_MAX_BUFS + 1 : 0;

		patch_file("nbufs", offsetof(struct grb_buf_shm, nr_bufs), &nb,
			   sizeof(nb));
		CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "nbufs",
						GRB_ATTACH_READER, &att),
			 -EBADMSG);
	}
	/* What comes over the socket is checked too: not a grb message,
	 * and a sender that hangs up before sending. */
	{
		unsigned char junk[64];
		unsigned int nr;
		int sp[2], *got;

		memset(junk, 0xab, sizeof(junk));
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
		CHECK_EQ(write(sp[1], junk, sizeof(junk)), (ssize_t)sizeof(junk));
		CHECK_EQ(grb_channel_recv_fds(sp[0], &got, &nr), -EBADMSG);
		close(sp[0]);
		close(sp[1]);
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
		close(sp[1]);
		CHECK_EQ(grb_channel_recv(sp[0], cfg, CLIENT, GRB_ATTACH_READER,
					  &att), -ECONNRESET);
		close(sp[0]);
		CHECK_EQ(grb_channel_recv_fds(-1, &got, &nr) < 0, 1);
		CHECK_EQ(grb_channel_recv_fds(0, NULL, &nr), -EINVAL);
	}
	copy_file("chan", "magic", map_size);
	patch_file("magic", 0, "notagrb!", 8);
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "magic",
					GRB_ATTACH_READER, &att), -EBADMSG);
	fd = open(path, O_RDONLY);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, &fd, 1, GRB_ATTACH_READER,
				    &att), -EBADF);
	close(fd);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, &fd, 1, GRB_ATTACH_READER,
				    &att), -EBADF);

	/* Roles: a writer attached by path writes; its destroy leaves the
	 * channel open for the owner's writers. */
	CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "chan",
					GRB_ATTACH_WRITER, &att), 0);
	CHECK_EQ(tc_write(cfg, att, 0, 0, 0), 0);
	CHECK_EQ(grb_channel_finalize(att), -EPERM);
	grb_channel_destroy(att);
	/* An attached channel's destroy only unmaps: the files stay. */
	CHECK_EQ(access(path, F_OK), 0);
	CHECK_EQ(tc_write(cfg, chan, 0, 1, 0), 0);
	/* Attach duplicates the descriptors: the caller's own may be
	 * closed at once, and a reader attached so still reads, and may
	 * tick (flush) from its side. */
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, &fd, 1, GRB_ATTACH_READER,
				    &att), 0);
	CHECK_EQ(close(fd), 0);
	CHECK_EQ(grb_reader_open(grb_channel_buf(att, 0)), 0);
	CHECK_EQ(grb_channel_tick(att, GRB_TICK_FLUSH), 0);
	CHECK_EQ(grb_channel_tick(att, GRB_TICK_FLUSH), 0);
	CHECK_EQ(grb_reader_get_next(grb_channel_buf(att, 0)), 0);
	CHECK_EQ(grb_reader_put_next(grb_channel_buf(att, 0)), 0);
	grb_channel_destroy(att);
	CHECK_EQ(access(path, F_OK), 0);
	CHECK_EQ(grb_channel_shm_fd(chan, 1), -EINVAL);
	grb_channel_destroy(chan);
	CHECK(access(path, F_OK) != 0);     /* the owner removed its files */

	/* A memfd channel; a private one has no descriptors. */
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &mem, &chan), 0);
	fd = grb_channel_shm_fd(chan, 0);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, 4096), -1);  /* sealed against shrinking */
	CHECK_EQ(errno, EPERM);
	CHECK_EQ(grb_channel_send(NULL, 0), -EINVAL);
	grb_channel_destroy(chan);
	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	CHECK_EQ(grb_channel_shm_fd(chan, 0), -EINVAL);
	CHECK_EQ(grb_channel_send(chan, 0), -EINVAL);
	grb_channel_destroy(chan);
	/* A shared channel's memory includes the writers' journal. */
	{
		struct grb_memory pm, sm;

		CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
		CHECK_EQ(grb_channel_memory(chan, &pm), 0);
		grb_channel_destroy(chan);
		CHECK_EQ(grb_channel_create_shared(cfg, &attr, &mem, &chan), 0);
		CHECK_EQ(grb_channel_memory(chan, &sm), 0);
		grb_channel_destroy(chan);
		CHECK_U64(sm.data_bytes, pm.data_bytes);
		/* The journal may start in the private layout's last page. */
		CHECK(sm.control_bytes + (uint64_t)sysconf(_SC_PAGESIZE) >=
		      pm.control_bytes +
		      GRB_JOURNAL_SLOTS * sizeof(struct grb_jslot));
		CHECK_U64(sm.total_bytes, sm.data_bytes + sm.control_bytes);
	}

	/* The group mode. */
	sattr.gid = (int)getgid();
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0660);
	CHECK_EQ(st.st_gid, getgid());
	grb_channel_destroy(chan);
	sattr.gid = -1;
	/* The damaged copies are ours to remove. */
	for (i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		path_of(path, sizeof(path), copies[i], 0);
		CHECK_EQ(unlink(path), 0);
	}
}

/* ---- a corrupt mapping -------------------------------------------------- */

static void test_corrupt(void)
{
	const struct grb_config *cfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD);
	const struct grb_config *ocfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL);
	struct grb_channel_attr attr = { "bad", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_channel *chan, *att;
	struct grb_reader_subbuf sb;
	struct grb_buf *own, *rd;
	struct grb_chan_iter *ci;
	struct grb_iter_record r;
	uint64_t slot, id, pos, cons;
	char msg[128];
	int fd;

	/* Discard mode: a data size beyond the sub-buffer. */
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &mem, &chan), 0);
	fd = grb_channel_shm_fd(chan, 0);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, &fd, 1, GRB_ATTACH_READER,
				    &att), 0);
	own = grb_channel_buf(chan, 0);
	rd = grb_channel_buf(att, 0);
	CHECK_EQ(grb_reader_open(rd), 0);
	CHECK_EQ(tc_write(cfg, chan, 0, 0, 0), 0);
	CHECK_EQ(grb_buf_flush(own, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_get_next(rd), 0);
	CHECK_EQ(grb_reader_held(rd, &sb), 0);
	own->meta[own->shm->held_phys].data_size = SB * 100;
	CHECK_EQ(grb_reader_held(rd, &sb), -EBADMSG);
	own->meta[own->shm->held_phys].data_size = sb.data_size;
	id = own->shm->held_phys;
	own->shm->held_phys = 1000;
	CHECK_EQ(grb_reader_held(rd, &sb), -EBADMSG);
	own->shm->held_phys = id;
	CHECK_EQ(grb_reader_put_next(rd), 0);
	/* A flush from the reader's side: the write position more than two
	 * rings ahead of the consumed one, or behind it, is refused. */
	CHECK_EQ(tc_write(cfg, chan, 0, 0, 0), 0);
	pos = atomic_load((_Atomic uint64_t *)&own->shm->offset);
	cons = atomic_load((_Atomic uint64_t *)&own->shm->consumed);
	atomic_store((_Atomic uint64_t *)&own->shm->offset,
		     cons + 2 * 4 * SB + 64);
	CHECK_EQ(grb_buf_flush(rd, GRB_FLUSH_ACTIVE), -EBADMSG);
	atomic_store((_Atomic uint64_t *)&own->shm->offset, cons - 64);
	CHECK_EQ(grb_buf_flush(rd, GRB_FLUSH_ACTIVE), -EBADMSG);
	atomic_store((_Atomic uint64_t *)&own->shm->offset, pos);
	CHECK_EQ(grb_buf_flush(rd, GRB_FLUSH_ACTIVE), 0);
	/* The sub-buffer that flush delivered, with a data size beyond the
	 * sub-buffer: grb_buf_write() and grb_buf_splice() give -EBADMSG,
	 * write nothing and leave it unconsumed (they wrote from a
	 * description the reader had refused: whatever the stack held). */
	{
		uint64_t at = (cons / SB) % 4, good = own->meta[at].data_size;
		uint64_t bytes = 1;
		int out = memfd_create("grb-test-out", MFD_CLOEXEC);
		struct stat ost;

		CHECK(out >= 0);
		CHECK(good > 0 && good <= SB);
		own->meta[at].data_size = SB * 100;
		CHECK_EQ(grb_buf_write(rd, out, 1, &bytes), -EBADMSG);
		CHECK_U64(bytes, 0);
		bytes = 1;
		CHECK_EQ(grb_buf_splice(rd, out, NULL, 1, &bytes), -EBADMSG);
		CHECK_U64(bytes, 0);
		CHECK_EQ(fstat(out, &ost), 0);
		CHECK_EQ(ost.st_size, 0);
		own->meta[at].data_size = good;
		CHECK_EQ(grb_buf_write(rd, out, 1, &bytes), 0);
		CHECK_U64(bytes, good);
		CHECK_EQ(fstat(out, &ost), 0);
		CHECK_EQ(ost.st_size, (long long)good);
		close(out);
	}
	/* The same through an iterator, both forms: -EBADMSG each time
	 * (no sub-buffer skipped uncounted, none read from a stale
	 * description), then the records once the size is right. */
	{
		enum grb_iter_mode modes[2] = { GRB_ITER_SNAPSHOT,
						GRB_ITER_CONSUME };
		struct grb_buf_iter *bit;
		uint64_t at, good;
		int m;

		CHECK_EQ(tc_write(cfg, chan, 0, 1, 0), 0);
		CHECK_EQ(grb_buf_flush(rd, GRB_FLUSH_ACTIVE), 0);
		cons = atomic_load((_Atomic uint64_t *)&own->shm->consumed);
		at = (cons / SB) % 4;
		good = own->meta[at].data_size;
		CHECK_EQ(grb_reader_release(rd), 0);
		for (m = 0; m < 2; m++) {
			CHECK_EQ(grb_buf_iter_create(rd, modes[m], &bit), 0);
			own->meta[at].data_size = SB * 100;
			CHECK_EQ(grb_buf_iter_next(bit, &r), -EBADMSG);
			CHECK_EQ(grb_buf_iter_next(bit, &r), -EBADMSG);
			own->meta[at].data_size = good;
			CHECK_EQ(grb_buf_iter_next(bit, &r), 0);
			CHECK_U64(r.lost, 0);
			grb_buf_iter_destroy(bit);
		}
		CHECK_EQ(grb_reader_open(rd), 0);
	}
	/* The validator trusts its own copy of the geometry, not the
	 * mapping's: a huge count is a report, not a walk off the end. */
	own->shm->num_subbuf = own->shm->nr_phys = UINT64_C(1) << 28;
	CHECK_EQ(grb_buf_validate(rd, msg, sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "geometry") != NULL);
	own->shm->num_subbuf = own->shm->nr_phys = 4;
	grb_channel_destroy(att);
	grb_channel_destroy(chan);

	/* Overwrite mode: an id naming a sub-buffer that does not exist. */
	CHECK_EQ(grb_channel_create_shared(ocfg, &attr, &mem, &chan), 0);
	fd = grb_channel_shm_fd(chan, 0);
	CHECK_EQ(grb_channel_attach(ocfg, CLIENT, &fd, 1, GRB_ATTACH_READER,
				    &att), 0);
	own = grb_channel_buf(chan, 0);
	rd = grb_channel_buf(att, 0);
	CHECK_EQ(grb_reader_open(rd), 0);
	CHECK_EQ(tc_write(ocfg, chan, 0, 0, 0), 0);
	CHECK_EQ(grb_buf_flush(own, GRB_FLUSH_ACTIVE), 0);
	atomic_store((_Atomic uint64_t *)&own->ids[0],
		     (atomic_load((_Atomic uint64_t *)&own->ids[0]) &
		      ~GRB_ID_INDEX_MASK) | 77);
	CHECK_EQ(grb_reader_get_next(rd), -EBADMSG);
	/* A channel iterator returns that error too, rather than wait for
	 * the buffer forever. */
	CHECK_EQ(grb_reader_release(rd), 0);
	CHECK_EQ(grb_chan_iter_create(att, GRB_ITER_CONSUME, &ci), 0);
	CHECK_EQ(grb_chan_iter_next(ci, &r), -EBADMSG);
	grb_chan_iter_destroy(ci);
	CHECK_EQ(grb_reader_open(rd), 0);
	/* A flush from the reader's side runs no writer code on such a
	 * mapping: the slot it would close names no sub-buffer. */
	CHECK_EQ(tc_write(ocfg, chan, 0, 0, 0), 0);
	slot = (atomic_load((_Atomic uint64_t *)&own->shm->offset) / SB) % 4;
	id = atomic_load((_Atomic uint64_t *)&own->ids[slot]);
	atomic_store((_Atomic uint64_t *)&own->ids[slot],
		     (id & ~GRB_ID_INDEX_MASK) | 77);
	CHECK_EQ(grb_buf_flush(rd, GRB_FLUSH_ACTIVE), -EBADMSG);
	/* The owner's finalize flushes too, as a trusted writer. */
	atomic_store((_Atomic uint64_t *)&own->ids[slot], id);
	grb_channel_destroy(att);
	grb_channel_destroy(chan);

	/* Overwrite mode, a delivered sub-buffer whose size is beyond the
	 * sub-buffer: a consuming iterator's get_next consumed it before
	 * held() refused it (grb/iter.h): -EBADMSG once, its record counted
	 * read, and the next call goes on with the next sub-buffer. */
	CHECK_EQ(grb_channel_create_shared(ocfg, &attr, &mem, &chan), 0);
	fd = grb_channel_shm_fd(chan, 0);
	CHECK_EQ(grb_channel_attach(ocfg, CLIENT, &fd, 1, GRB_ATTACH_READER,
				    &att), 0);
	own = grb_channel_buf(chan, 0);
	rd = grb_channel_buf(att, 0);
	CHECK_EQ(tc_write(ocfg, chan, 0, 0, 0), 0);
	CHECK_EQ(grb_buf_flush(own, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(tc_write(ocfg, chan, 0, 1, 0), 0);
	CHECK_EQ(grb_buf_flush(own, GRB_FLUSH_ACTIVE), 0);
	{
		struct grb_buf_iter *bit;
		struct grb_buf_stats st;
		uint64_t phys = atomic_load((_Atomic uint64_t *)&own->ids[0]) &
			GRB_ID_INDEX_MASK;
		uint64_t good = own->meta[phys].data_size;

		own->meta[phys].data_size = SB * 100;
		CHECK_EQ(grb_buf_iter_create(rd, GRB_ITER_CONSUME, &bit), 0);
		CHECK_EQ(grb_buf_iter_next(bit, &r), -EBADMSG);
		CHECK_EQ(grb_buf_iter_next(bit, &r), 0);
		CHECK(r.pos >= SB && r.pos < 2 * SB);
		CHECK_U64(r.lost, 0);
		CHECK_EQ(grb_buf_iter_next(bit, &r), -EAGAIN);
		CHECK_EQ(grb_buf_get_stats(own, &st), 0);
		CHECK_U64(st.read, 2);
		grb_buf_iter_destroy(bit);
		own->meta[phys].data_size = good;
	}
	grb_channel_destroy(att);
	grb_channel_destroy(chan);
}

/* ---- another user ------------------------------------------------------- */

static void test_other_uid(void)
{
	const struct grb_config *cfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD);
	struct grb_channel_attr attr = { "uid", SB, 4, NULL };
	struct grb_shm_attr sattr = { CLIENT, dir, -1 };
	struct grb_channel *chan, *chan2;
	struct sockaddr_un sa;
	int lsock, conn, st;
	pid_t pid;

	if (geteuid() != 0) {
		printf("test_shm: not root: the other-uid check is skipped\n");
		return;
	}
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sattr, &chan), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	/* An abstract name: SO_PEERCRED reports the connecting process. */
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "grb-test-%d",
		 (int)getpid());
	lsock = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(lsock >= 0);
	CHECK_EQ(bind(lsock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_EQ(listen(lsock, 1), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct grb_channel *att;
		int s;

		CHECK_EQ(setresgid(65534, 65534, 65534), 0);
		CHECK_EQ(setresuid(65534, 65534, 65534), 0);
		/* The owner-only files do not open. */
		CHECK_EQ(grb_channel_attach_dir(cfg, CLIENT, dir, "uid",
						GRB_ATTACH_READER, &att),
			 -EACCES);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		CHECK(s >= 0);
		CHECK_EQ(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
		/* The creator refuses: nothing comes but the end. */
		CHECK_EQ(grb_channel_recv(s, cfg, CLIENT, GRB_ATTACH_READER,
					  &att), -ECONNRESET);
		/* Nor does a receiver take descriptors from another user:
		 * send, then wait for the receiver to hang up. */
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		CHECK(s >= 0);
		CHECK_EQ(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
		{
			char c;

			while (read(s, &c, 1) > 0)
				;
		}
		_exit(0);
	}
	conn = accept(lsock, NULL, NULL);
	CHECK(conn >= 0);
	CHECK_EQ(grb_channel_send(chan, conn), -EPERM);
	close(conn);
	conn = accept(lsock, NULL, NULL);
	CHECK(conn >= 0);
	{
		unsigned int nr;
		int *got;

		CHECK_EQ(grb_channel_recv_fds(conn, &got, &nr), -EPERM);
		CHECK_EQ(grb_channel_recv(conn, cfg, CLIENT, GRB_ATTACH_READER,
					  &chan2), -EPERM);
	}
	close(conn);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(lsock);
	grb_channel_destroy(chan);
}

/*
 * grb_reader_takeover(): the role changes hands whether or not it was
 * released, the held sub-buffer stays held for the new reader, and a
 * private buffer refuses.
 */
static void test_takeover(void)
{
	const struct grb_config *cfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD);
	struct grb_channel_attr attr = { "takeover", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_channel *chan, *att, *priv;
	struct grb_reader_subbuf sb, sb2;
	struct grb_buf *own, *rd;
	int fd;

	CHECK_EQ(grb_reader_takeover(NULL), -EINVAL);
	CHECK_EQ(grb_channel_create(tc_config(TV_PER_CHANNEL | TV_DISCARD),
				    &attr, &priv), 0);
	CHECK_EQ(grb_reader_takeover(grb_channel_buf(priv, 0)), -EOPNOTSUPP);
	grb_channel_destroy(priv);

	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &mem, &chan), 0);
	fd = grb_channel_shm_fd(chan, 0);
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, &fd, 1, GRB_ATTACH_READER,
				    &att), 0);
	own = grb_channel_buf(chan, 0);
	rd = grb_channel_buf(att, 0);
	/* Free role: taken as by grb_reader_open(). */
	CHECK_EQ(grb_reader_takeover(own), 0);
	CHECK_EQ(grb_reader_open(rd), -EBUSY);
	/* The "dead" reader (the creator's handle) holds a sub-buffer. */
	CHECK_EQ(tc_write(cfg, chan, 0, 0, 0), 0);
	CHECK_EQ(tc_write(cfg, chan, 0, 0, 0), 0);
	CHECK_EQ(grb_buf_flush(own, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_get_next(own), 0);
	CHECK_EQ(grb_reader_held(own, &sb), 0);
	/* Taken from it: 1, and the same sub-buffer is held. */
	CHECK_EQ(grb_reader_takeover(rd), 1);
	CHECK_EQ(grb_reader_held(rd, &sb2), 0);
	CHECK_EQ(sb2.pos, sb.pos);
	CHECK_EQ(sb2.records, 2);
	CHECK_EQ(grb_reader_put_next(rd), 0);
	CHECK_EQ(grb_reader_get_next(rd), -EAGAIN);
	CHECK_EQ(grb_reader_release(rd), 0);
	grb_channel_destroy(att);
	grb_channel_destroy(chan);
}

int main(void)
{
	sh = shared_zero(sizeof(*sh));
	signal(SIGUSR1, SIG_IGN);
	test_refusals();
	test_corrupt();
	test_takeover();
	test_other_uid();
	cross_process(TV_DISCARD, 2);
	cross_process(0, 2);
	cross_process(TV_PER_CHANNEL | TV_DISCARD | TV_COMPRESS, 2);
	cross_process(TV_PER_CHANNEL | TV_COMPRESS, 2);
	cross_process(TV_DISCARD, 4);
	cross_process(TV_PER_CHANNEL, 4);
	CHECK_EQ(rmdir(dir), 0);         /* nothing left behind */
	printf("test_shm: passed\n");
	return 0;
}
