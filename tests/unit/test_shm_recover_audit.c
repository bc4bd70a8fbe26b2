/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_shm_recover_audit.c - promises of grb/shm.h and
 * grb/recover.h that test_shm*.c and test_recover*.c leave unchecked:
 *  - grb_channel_recv() and grb_channel_recv_fds() with no descriptor
 *    left for what they receive (none, or fewer than the buffers): the
 *    -EMFILE of attach, not -EBADMSG, and none kept; more descriptors on
 *    one byte than grb_channel_send() puts there is still -EBADMSG;
 *  - creation: more than GRB_SHM_MAX_BUFS buffers is -EINVAL; a
 *    buffer_create callback failing on a later buffer gives its errno,
 *    buffer_finalize runs on those created, and no file and no
 *    descriptor is left;
 *  - attach: a file longer than its mapping is -EBADMSG; a mapping that
 *    fails is -ENOMEM, with no descriptor kept;
 *  - the hand-over on a socket that is not a UNIX one (TCP, UDP):
 *    -ENOTCONN from both ends;
 *  - a memfd can neither shrink nor grow, and its seals are final;
 *  - recovery: the bound of 20 uncertain pieces (20 recovered, 21 left
 *    waiting); writers that journaled and died before their CAS beside
 *    the one whose CAS took those bytes: one dead record in
 *    info.records and lost_dead, not one per entry; the ambiguous union
 *    (info.ambiguous); -ENOMEM with nothing changed, then the same
 *    recovery.
 *
 * Linked with the hooks library (tests/hooks): writer processes are
 * killed at GRB_HOOK_RESERVE_LOADED (entry journaled, no CAS) and at
 * GRB_HOOK_RESERVE_DONE (CAS done, entry still tentative), and
 * grb_test_set_nr_cpus() sets how many buffers a per-CPU channel gets.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"
#include "grb/recover.h"
#include "grb/shm.h"
#include "grb_test_hooks.h"

#define CLIENT "audit"
#define SB 4096
#define REC 32                  /* one raw record: its tag, then filler */
#define BATCH 64                /* descriptors per byte (src/shm.c) */

static char dir[] = "/tmp/grb-shm-audit-XXXXXX";

/* What grb_channel_send() writes first (src/shm.c, struct send_header). */
struct wire_header {
	uint64_t magic;
	uint32_t version;
	uint32_t nr_bufs;
};

#define WIRE_MAGIC UINT64_C(0x3130534446627267)   /* "grbFDS01" */

/*
 * The dead writers' bytes become 0xaa.  No record_decode: with two sets
 * of dead entries that add up to what is missing, recovery cannot tell
 * which is right and damages the union.
 */
static void pad_aa(const struct grb_config *cfg, void *at, size_t len)
{
	(void)cfg;
	memset(at, 0xaa, len);
}

/* Raw records (no header, no clock), shared, one buffer. */
static const struct grb_config raw_pad = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { .record_pad = pad_aa },
	GRB_CONFIG_SHARED,
};
/* Per-CPU: as many buffers as grb_test_set_nr_cpus() says. */
static const struct grb_config raw_pcpu = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 }, GRB_CONFIG_SHARED,
};

/* Entries of a directory, "." and ".." left out. */
static int count_entries(const char *path)
{
	struct dirent *e;
	DIR *d = opendir(path);
	int n = 0;

	CHECK(d != NULL);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Descriptors this process has open (opendir's own not counted). */
static int count_fds(void)
{
	return count_entries("/proc/self/fd") - 1;
}

/* Valgrind keeps its own descriptor and address-space limits. */
static int under_valgrind(void)
{
	const char *pre = getenv("LD_PRELOAD");

	return pre && strstr(pre, "vgpreload") != NULL;
}

/* The lowest descriptor number not in use. */
static int lowest_free(void)
{
	int fd = dup(0);

	CHECK(fd >= 0);
	close(fd);
	return fd;
}

/* One raw record of REC bytes: the tag, then its low byte. */
static int put(const struct grb_config *cfg, struct grb_channel *chan,
	       uint64_t tag)
{
	struct grb_ctx ctx = GRB_CTX_INIT(REC, 1);
	int ret = grb_reserve(cfg, chan, &ctx);

	if (ret)
		return ret;
	grb_write(cfg, &ctx, &tag, sizeof(tag));
	grb_write_fill(cfg, &ctx, (int)(tag & 0xff), REC - sizeof(tag));
	grb_commit(cfg, &ctx);
	return 0;
}

/* ---- the consumer socket ------------------------------------------------ */

/* Send @len bytes with @nfds descriptors on them, as a forger would. */
static void send_raw(int sock, const void *buf, size_t len, const int *fds,
		     unsigned int nfds)
{
	char cbuf[CMSG_SPACE((BATCH + 1) * sizeof(int))];
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg;
	struct cmsghdr *cm;

	CHECK(nfds <= BATCH + 1);
	memset(&msg, 0, sizeof(msg));
	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds) {
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	}
	CHECK_EQ(sendmsg(sock, &msg, MSG_NOSIGNAL), (ssize_t)len);
}

/*
 * grb_channel_recv() returns "as grb_channel_attach()", whose "-EMFILE,
 * -ENFILE: no descriptor left" this is: the kernel installs fewer of the
 * descriptors than came, or none, and flags the message MSG_CTRUNC.  It
 * was reported as -EBADMSG, "a message that is not grb_channel_send()'s",
 * which sent a consumer looking for a bad sender.  Those installed are
 * closed.  A forger's 65 descriptors on one byte are cut short by the
 * receiver's room for 64, with descriptors to spare: that one is bad.
 */
static void test_recv_no_fd_left(void)
{
	struct grb_channel_attr attr = { "nofd", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct wire_header h = { WIRE_MAGIC, GRB_SHM_VERSION, BATCH + 1 };
	struct grb_channel *chan, *att = NULL;
	int sp[2], n0, *got = NULL, ret, left, pass, many[BATCH + 1], i;
	struct rlimit old, lim;
	unsigned int nr;

	grb_test_set_nr_cpus(2);
	CHECK_EQ(grb_channel_create_shared(&raw_pcpu, &attr, &mem, &chan), 0);
	grb_test_set_nr_cpus(0);
	CHECK_EQ(grb_channel_nr_bufs(chan), 2);
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	/* Room for none of the two descriptors, then for one.  (Valgrind
	 * does not apply its own limit to descriptors received.) */
	for (left = 0; left < 2 && !under_valgrind(); left++) {
		for (pass = 0; pass < 2; pass++) {
			CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
					    0, sp), 0);
			CHECK_EQ(grb_channel_send(chan, sp[0]), 0);
			n0 = count_fds();
			lim = old;
			lim.rlim_cur = (rlim_t)(lowest_free() + left);
			CHECK_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
			if (pass == 0)
				ret = grb_channel_recv(sp[1], &raw_pcpu, CLIENT,
						       GRB_ATTACH_READER, &att);
			else
				ret = grb_channel_recv_fds(sp[1], &got, &nr);
			CHECK_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
			CHECK_EQ(ret, -EMFILE);
			CHECK_EQ(count_fds(), n0);
			close(sp[0]);
			close(sp[1]);
		}
	}
	/* With room to spare, the same message attaches. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	CHECK_EQ(grb_channel_send(chan, sp[0]), 0);
	CHECK_EQ(grb_channel_recv(sp[1], &raw_pcpu, CLIENT, GRB_ATTACH_READER,
				  &att), 0);
	grb_channel_destroy(att);
	close(sp[0]);
	close(sp[1]);
	/* More on one byte than a batch: cut short, but not for want of a
	 * descriptor. */
	for (i = 0; i <= BATCH; i++)
		many[i] = grb_channel_shm_fd(chan, 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	n0 = count_fds();
	send_raw(sp[1], &h, sizeof(h), NULL, 0);
	send_raw(sp[1], "F", 1, many, BATCH + 1);
	close(sp[1]);
	CHECK_EQ(grb_channel_recv_fds(sp[0], &got, &nr), -EBADMSG);
	CHECK_EQ(count_fds(), n0 - 1);
	close(sp[0]);
	grb_channel_destroy(chan);
}

/*
 * grb_channel_send() and grb_channel_recv() on sockets that are
 * connected, but not UNIX ones: "-ENOTCONN  @sock has no peer (not
 * connected, listening, or not a UNIX socket)" - no peer credentials to
 * check, so not -EPERM.  Loopback only.
 */
static void test_not_unix(void)
{
	struct grb_channel_attr attr = { "inet", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct sockaddr_in in;
	socklen_t len = sizeof(in);
	struct grb_channel *chan, *att;
	int l, s, c, u, *got;
	unsigned int nr;

	CHECK_EQ(grb_channel_create_shared(&raw_pad, &attr, &mem, &chan), 0);
	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(l >= 0);
	CHECK_EQ(bind(l, (struct sockaddr *)&in, sizeof(in)), 0);
	CHECK_EQ(listen(l, 1), 0);
	CHECK_EQ(getsockname(l, (struct sockaddr *)&in, &len), 0);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(s >= 0);
	CHECK_EQ(connect(s, (struct sockaddr *)&in, sizeof(in)), 0);
	c = accept(l, NULL, NULL);
	CHECK(c >= 0);
	CHECK_EQ(grb_channel_send(chan, s), -ENOTCONN);
	CHECK_EQ(grb_channel_send(chan, c), -ENOTCONN);
	CHECK_EQ(grb_channel_recv(c, &raw_pad, CLIENT, GRB_ATTACH_READER,
				  &att), -ENOTCONN);
	CHECK_EQ(grb_channel_recv_fds(s, &got, &nr), -ENOTCONN);
	u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(u >= 0);
	CHECK_EQ(connect(u, (struct sockaddr *)&in, sizeof(in)), 0);
	CHECK_EQ(grb_channel_send(chan, u), -ENOTCONN);
	CHECK_EQ(grb_channel_recv_fds(u, &got, &nr), -ENOTCONN);
	close(u);
	close(c);
	close(s);
	close(l);
	grb_channel_destroy(chan);
}

/* ---- creation ------------------------------------------------------------ */

static int n_create, n_finalize;

/* The second buffer's creation fails. */
static int create_fail_second(struct grb_buf *buf, void *priv, int cpu)
{
	(void)buf, (void)priv, (void)cpu;
	return ++n_create == 2 ? -EIO : 0;
}

static void count_finalize(struct grb_buf *buf, void *priv, int cpu)
{
	(void)buf, (void)priv, (void)cpu;
	n_finalize++;
}

/*
 * "-EINVAL ... more than GRB_SHM_MAX_BUFS buffers", before any file is
 * made (the descriptor limit is set low, so that code making them would
 * say -EMFILE instead, quickly); "On error nothing is left allocated and
 * no file is left behind", here after a buffer_create callback refused
 * the second of three buffers, with "what grb_channel_create() returns":
 * the callback's errno, and buffer_finalize for the one created.
 */
static void test_create(void)
{
	static struct grb_config cfg;
	struct grb_channel_attr attr = { "made", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_shm_attr sa = { CLIENT, dir, -1 };
	struct grb_channel *chan;
	struct rlimit old, lim;
	int n0;

	n0 = count_fds();
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)(lowest_free() + 64);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
	grb_test_set_nr_cpus(GRB_SHM_MAX_BUFS + 1);
	CHECK_EQ(grb_channel_create_shared(&raw_pcpu, &attr, &mem, &chan),
		 -EINVAL);
	CHECK_EQ(grb_channel_create_shared(&raw_pcpu, &attr, &sa, &chan),
		 -EINVAL);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
	CHECK_EQ(count_entries(dir), 0);
	CHECK_EQ(count_fds(), n0);

	memcpy(&cfg, &raw_pcpu, sizeof(cfg));
	cfg.cb.buffer_create = create_fail_second;
	cfg.cb.buffer_finalize = count_finalize;
	grb_test_set_nr_cpus(3);
	CHECK_EQ(grb_channel_create_shared(&cfg, &attr, &sa, &chan), -EIO);
	CHECK_EQ(n_create, 2);
	CHECK_EQ(n_finalize, 1);
	CHECK_EQ(count_entries(dir), 0);
	CHECK_EQ(count_fds(), n0);
	n_create = n_finalize = 0;
	CHECK_EQ(grb_channel_create_shared(&cfg, &attr, &mem, &chan), -EIO);
	CHECK_EQ(n_finalize, 1);
	CHECK_EQ(count_fds(), n0);
	grb_test_set_nr_cpus(0);
}

/*
 * "A memfd is sealed against shrinking (F_SEAL_SHRINK), so no process
 * can truncate it under another": nor grow it, which would make every
 * later attach refuse it ("a file size other than the mapping's"), nor
 * change those seals.
 */
static void test_seals(void)
{
	struct grb_channel_attr attr = { "sealed", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_channel *chan;
	struct stat st;
	int fd, seals;

	CHECK_EQ(grb_channel_create_shared(&raw_pad, &attr, &mem, &chan), 0);
	fd = grb_channel_shm_fd(chan, 0);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	seals = fcntl(fd, F_GET_SEALS);
	CHECK(seals >= 0);
	CHECK_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
		 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	CHECK_EQ(ftruncate(fd, st.st_size - 4096), -1);
	CHECK_EQ(errno, EPERM);
	CHECK_EQ(ftruncate(fd, st.st_size + 4096), -1);
	CHECK_EQ(errno, EPERM);
	CHECK_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), -1);
	CHECK_EQ(errno, EPERM);
	grb_channel_destroy(chan);
}

/* ---- attach ------------------------------------------------------------- */

/* Use stack now, so that a child under an address-space limit need not
 * grow it. */
static void __attribute__((noinline)) touch_stack(void)
{
	volatile char deep[256 * 1024];
	size_t i;

	for (i = 0; i < sizeof(deep); i += 1024)
		deep[i] = 1;
}

/*
 * Whether an address-space limit binds the library alone: a sanitizer's
 * runtime or valgrind maps (and aborts) under the same limit.  The cases
 * that need one are skipped under them, and where a limit is already
 * set (unlimit_as() puts back none).
 */
static int limit_binds_library(void)
{
	struct rlimit lim;

	if (getrlimit(RLIMIT_AS, &lim) != 0 || lim.rlim_cur != RLIM_INFINITY)
		return 0;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
	return 0;
#endif
#endif
	return !under_valgrind();
}

/* Limit this process's address space to what it uses plus @room bytes. */
static void limit_as(size_t room)
{
	unsigned long pages;
	struct rlimit lim;
	FILE *f = fopen("/proc/self/statm", "r");

	CHECK(f != NULL);
	CHECK_EQ(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	CHECK_EQ(getrlimit(RLIMIT_AS, &lim), 0);
	lim.rlim_cur = (rlim_t)(pages * (unsigned long)sysconf(_SC_PAGESIZE) +
				room);
	CHECK_EQ(setrlimit(RLIMIT_AS, &lim), 0);
}

static void unlimit_as(void)
{
	struct rlimit lim;

	CHECK_EQ(getrlimit(RLIMIT_AS, &lim), 0);
	lim.rlim_cur = lim.rlim_max;
	CHECK_EQ(setrlimit(RLIMIT_AS, &lim), 0);
}

static void wait_child(pid_t pid)
{
	int st;

	CHECK_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "test_shm_recover_audit: child failed (%#x)\n",
			st);
		exit(1);
	}
}

/*
 * grb_channel_attach(): "-EBADMSG ... a file size other than the
 * mapping's" (longer, here: short ones are test_shm.c's), by path and by
 * descriptor; "-ENOMEM mapping failed", in a child whose address space
 * has no room for the 4 MiB mapping, with no descriptor kept.
 */
static void test_attach(void)
{
	struct grb_channel_attr attr = { "long", SB, 4, NULL };
	struct grb_channel_attr big = { "big", 64 * 1024, 64, NULL };
	struct grb_shm_attr sa = { CLIENT, dir, -1 };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_channel *chan, *att;
	char path[512];
	struct stat st;
	int fd, n0;
	pid_t pid;

	CHECK_EQ(grb_channel_create_shared(&raw_pad, &attr, &sa, &chan), 0);
	snprintf(path, sizeof(path), "%s/long.0", dir);
	fd = open(path, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(ftruncate(fd, st.st_size + 4096), 0);
	CHECK_EQ(grb_channel_attach_dir(&raw_pad, CLIENT, dir, "long",
					GRB_ATTACH_READER, &att), -EBADMSG);
	CHECK_EQ(grb_channel_attach(&raw_pad, CLIENT, &fd, 1,
				    GRB_ATTACH_WRITER, &att), -EBADMSG);
	CHECK_EQ(ftruncate(fd, st.st_size), 0);
	CHECK_EQ(grb_channel_attach(&raw_pad, CLIENT, &fd, 1,
				    GRB_ATTACH_WRITER, &att), 0);
	grb_channel_destroy(att);
	close(fd);
	grb_channel_destroy(chan);

	if (!limit_binds_library()) {
		printf("test_shm_recover_audit: attach's -ENOMEM skipped "
		       "(sanitizer or valgrind)\n");
		return;
	}
	CHECK_EQ(grb_channel_create_shared(&raw_pad, &big, &mem, &chan), 0);
	fd = grb_channel_shm_fd(chan, 0);
	touch_stack();
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int ret;

		n0 = count_fds();
		limit_as(1024 * 1024);
		ret = grb_channel_attach(&raw_pad, CLIENT, &fd, 1,
					 GRB_ATTACH_READER, &att);
		unlimit_as();
		CHECK_EQ(ret, -ENOMEM);
		CHECK_EQ(count_fds(), n0);
		CHECK_EQ(grb_channel_attach(&raw_pad, CLIENT, &fd, 1,
					    GRB_ATTACH_READER, &att), 0);
		grb_channel_destroy(att);
		_exit(0);
	}
	wait_child(pid);
	grb_channel_destroy(chan);
}

/* ---- recovery ------------------------------------------------------------ */

static enum grb_hook_point kill_at;

static void kill_hook(enum grb_hook_point point, void *arg)
{
	(void)arg;
	if (point == kill_at)
		raise(SIGKILL);
}

/*
 * A writer process that dies at @point of its one record: at
 * GRB_HOOK_RESERVE_LOADED it has journaled the slot it means to take and
 * not moved the position; at GRB_HOOK_RESERVE_DONE its CAS took the slot
 * and its entry still says it may not have.
 */
static void writer_dies(struct grb_channel *chan, enum grb_hook_point point)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		kill_at = point;
		grb_test_set_hook(kill_hook, NULL);
		put(&raw_pad, chan, 99);
		_exit(3);               /* the hook did not kill it */
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* The held sub-buffer's record at @off is tag @tag, whole. */
static void expect_record(struct grb_buf *b, size_t off, uint64_t tag)
{
	unsigned char bytes[REC];
	uint64_t t;
	size_t i;

	CHECK_EQ(grb_reader_read(b, off, bytes, REC), 0);
	memcpy(&t, bytes, sizeof(t));
	CHECK_U64(t, tag);
	for (i = sizeof(t); i < REC; i++)
		CHECK_EQ(bytes[i], tag & 0xff);
}

/* The held sub-buffer's @len bytes at @off are recovery's padding. */
static void expect_padding(struct grb_buf *b, size_t off, size_t len)
{
	unsigned char bytes[SB];
	size_t i;

	CHECK(len <= sizeof(bytes));
	CHECK_EQ(grb_reader_read(b, off, bytes, len), 0);
	for (i = 0; i < len; i++)
		CHECK_EQ(bytes[i], 0xaa);
}

static void expect_info(const struct grb_recover_info *in, uint64_t subbufs,
			uint64_t records, uint64_t bytes, uint64_t ambiguous,
			uint64_t waiting)
{
	CHECK_U64(in->subbufs, subbufs);
	CHECK_U64(in->records, records);
	CHECK_U64(in->bytes, bytes);
	CHECK_U64(in->ambiguous, ambiguous);
	CHECK_U64(in->waiting, waiting);
}

/*
 * Tag 1, then @stale writers that journal [REC, 2 REC) and die before
 * their CAS, then one whose CAS takes it and dies, then tag 2; flushed.
 * Every entry is uncertain (tentative) and names the same bytes.
 */
static struct grb_channel *stale_entries(unsigned int stale)
{
	struct grb_channel_attr attr = { "stale", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_channel *chan;
	unsigned int i;

	CHECK_EQ(grb_channel_create_shared(&raw_pad, &attr, &mem, &chan), 0);
	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	CHECK_EQ(put(&raw_pad, chan, 1), 0);
	for (i = 0; i < stale; i++)
		writer_dies(chan, GRB_HOOK_RESERVE_LOADED);
	writer_dies(chan, GRB_HOOK_RESERVE_DONE);
	CHECK_EQ(put(&raw_pad, chan, 2), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	return chan;
}

/*
 * grb/recover.h: "at most 20 uncertain pieces ... a sub-buffer with
 * more, such as 21 writers killed between their journal entry and their
 * CAS, is left stuck (counted in `waiting`)".  And lost_dead counts
 * records "reserved by a writer that died before committing"
 * (grb/channel.h): a writer killed before its CAS reserved nothing.
 * Each of the entries naming the dead record's bytes was counted as a
 * record of its own (one dead record: records 2 with one such writer,
 * 20 with 19); it is one.
 */
static void test_uncertain(void)
{
	static const unsigned int stale[] = { 1, 19 };
	struct grb_recover_info info;
	struct grb_reader_subbuf sb;
	struct grb_buf_stats st;
	struct grb_channel *chan;
	struct grb_buf *b;
	unsigned int k;

	for (k = 0; k < 2; k++) {
		chan = stale_entries(stale[k]);
		b = grb_channel_buf(chan, 0);
		CHECK_EQ(grb_channel_recover(chan, 0, &info), 1);
		expect_info(&info, 1, 1, REC, 0, 0);
		CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
		CHECK_U64(st.lost_dead, 1);
		CHECK_U64(st.recovered, 1);
		CHECK_U64(st.written, 2);
		CHECK_EQ(grb_reader_get_next(b), 0);
		CHECK_EQ(grb_reader_held(b, &sb), 0);
		CHECK_U64(sb.data_size, 3 * REC);
		CHECK_U64(sb.records, 2);
		expect_record(b, 0, 1);
		expect_padding(b, REC, REC);
		expect_record(b, 2 * REC, 2);
		CHECK_EQ(grb_reader_put_next(b), 0);
		CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
		CHECK_U64(st.read, st.written);
		grb_channel_destroy(chan);
	}

	/* 21 uncertain pieces: stuck, however often it is tried. */
	chan = stale_entries(20);
	b = grb_channel_buf(chan, 0);
	for (k = 0; k < 2; k++) {
		CHECK_EQ(grb_channel_recover(chan, 0, &info), 0);
		expect_info(&info, 0, 0, 0, 0, 1);
		CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	}
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 0);
	CHECK_U64(st.recovered, 0);
	grb_channel_destroy(chan);
}

/*
 * grb/recover.h: "when two writers died in the same sub-buffer and more
 * than one set of their reservations adds up to what is missing, the
 * union is damaged, which may take a committed record with it (counted
 * in `ambiguous`)".  One writer's CAS took [REC, 2 REC) and it died;
 * another journaled [2 REC, 3 REC), where the position then was, and
 * died before its CAS; tag 2 took those bytes and was committed.  Either
 * entry alone explains the missing REC bytes, and this client has no
 * decoder to choose: both are padded, tag 2 with them, and the slot it
 * took is counted with the dead record.
 */
static void test_ambiguous(void)
{
	struct grb_channel_attr attr = { "ambiguous", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_recover_info info;
	struct grb_reader_subbuf sb;
	struct grb_buf_stats st;
	struct grb_channel *chan;
	struct grb_buf *b;

	CHECK_EQ(grb_channel_create_shared(&raw_pad, &attr, &mem, &chan), 0);
	b = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(put(&raw_pad, chan, 1), 0);
	writer_dies(chan, GRB_HOOK_RESERVE_DONE);
	writer_dies(chan, GRB_HOOK_RESERVE_LOADED);
	CHECK_EQ(put(&raw_pad, chan, 2), 0);
	CHECK_EQ(put(&raw_pad, chan, 3), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 1);
	expect_info(&info, 1, 2, 2 * REC, 1, 0);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 2);
	CHECK_U64(st.recovered, 1);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.data_size, 4 * REC);
	expect_record(b, 0, 1);
	expect_padding(b, REC, 2 * REC);
	expect_record(b, 3 * REC, 3);
	CHECK_EQ(grb_reader_put_next(b), 0);
	grb_channel_destroy(chan);
}

/* Take all the memory an address-space limit leaves; the list's head. */
static void *hog_memory(void)
{
	void *head = NULL, *p;

	while ((p = malloc(4096)) != NULL) {
		memcpy(p, &head, sizeof(head));
		head = p;
	}
	return head;
}

static void free_hog(void *head)
{
	void *next;

	while (head) {
		memcpy(&next, head, sizeof(next));
		free(head);
		head = next;
	}
}

/*
 * grb_buf_recover(): "-ENOMEM when the scratch for a stuck sub-buffer
 * (about 150 KiB, freed before the call returns) cannot be allocated:
 * nothing was changed"; grb_channel_recover() returns it too.  In a
 * child with no memory left: -ENOMEM from both, the sub-buffer still
 * stuck and nothing counted; with memory again, the same recovery as
 * if the failed calls had not been made.
 */
static void test_recover_enomem(void)
{
	struct grb_channel_attr attr = { "nomem", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_recover_info info;
	struct grb_buf_stats st;
	struct grb_channel *chan;
	struct grb_buf *b;
	pid_t pid;

	CHECK_EQ(grb_channel_create_shared(&raw_pad, &attr, &mem, &chan), 0);
	b = grb_channel_buf(chan, 0);
	CHECK_EQ(grb_reader_open(b), 0);
	CHECK_EQ(put(&raw_pad, chan, 1), 0);
	writer_dies(chan, GRB_HOOK_RESERVE_DONE);
	CHECK_EQ(put(&raw_pad, chan, 2), 0);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	if (!limit_binds_library()) {
		printf("test_shm_recover_audit: recovery's -ENOMEM skipped "
		       "(sanitizer or valgrind)\n");
		grb_channel_destroy(chan);
		return;
	}
	touch_stack();
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int r1, r2;
		void *hog;

		limit_as(256 * 1024);
		hog = hog_memory();
		r1 = grb_buf_recover(b, 0, &info);
		r2 = grb_channel_recover(chan, 0, &info);
		free_hog(hog);
		unlimit_as();
		CHECK_EQ(r1, -ENOMEM);
		CHECK_EQ(r2, -ENOMEM);
		CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
		CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
		CHECK_U64(st.lost_dead, 0);
		CHECK_U64(st.recovered, 0);
		_exit(0);
	}
	wait_child(pid);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 1);
	expect_info(&info, 1, 1, REC, 0, 0);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 1);
	CHECK_U64(st.recovered, 1);
	grb_channel_destroy(chan);
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	test_recv_no_fd_left();
	test_not_unix();
	test_create();
	test_seals();
	test_attach();
	printf("test_shm_recover_audit: shm: receiving with no descriptor "
	       "left, not a UNIX socket, creation limits, seals, attach\n");
	test_uncertain();
	test_ambiguous();
	test_recover_enomem();
	printf("test_shm_recover_audit: recovery: 20 uncertain pieces, stale "
	       "entries counted once, ambiguous, -ENOMEM\n");
	CHECK_EQ(rmdir(dir), 0);        /* nothing left behind */
	printf("test_shm_recover_audit: passed\n");
	return 0;
}
