/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_shm_errors.c - what a shared channel's creation and its
 * socket hand-over (grb/shm.h) do when things go wrong:
 *  - creation on a full filesystem (as root: a small tmpfs in a mount
 *    namespace of its own) is -ENOSPC and leaves no file, no block and no
 *    descriptor behind;
 *  - the socket hand-over's errors, each documented errno provoked: not a
 *    socket, no peer, a peer gone (-EPIPE, and no SIGPIPE), a sender gone
 *    early, a message that is not grb_channel_send()'s, another version,
 *    bad arguments; and its descriptors: grb_channel_recv() keeps none
 *    of those it received, on success or failure, and
 *    grb_channel_recv_fds() hands each to the caller;
 *  - paths and names: a DIR/NAME.i too long for a path is -ENAMETOOLONG
 *    (not a name cut short), a directory or a symbolic link where a
 *    buffer file should be, a memfd channel with a long name, and attach
 *    with no descriptor left.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/shm.h"
#include "tclient.h"

#define CLIENT "tclient"
#define SB 4096

/* Where the plain files of these tests go. */
static char dir[] = "/tmp/grb-shm-errors-XXXXXX";

/* ---- descriptors, a full filesystem, the socket's errors --------------- */

/* Entries of a directory, "." and ".." left out (-1: cannot be read). */
static int count_entries(const char *path)
{
	struct dirent *e;
	DIR *d = opendir(path);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Descriptors this process has open (opendir's own is not counted). */
static int count_fds(void)
{
	int n = count_entries("/proc/self/fd");

	CHECK(n > 0);
	return n - 1;
}

/*
 * The child of test_enospc(), in a mount namespace of its own: mount a
 * tmpfs of @size bytes on @mnt, create there, unmount.  Return: what
 * creation returned; or 1 when the tmpfs cannot be had (reason printed).
 */
static int create_on_tmpfs(const char *mnt, unsigned long long size,
			   const struct grb_config *cfg,
			   const struct grb_channel_attr *attr)
{
	struct grb_shm_attr sattr = { CLIENT, mnt, -1 };
	struct statvfs before, after;
	struct grb_channel *chan;
	char opts[64];
	int fds, ret;

	snprintf(opts, sizeof(opts), "size=%llu,mode=0700", size);
	if (mount("grb-test", mnt, "tmpfs", 0, opts) != 0) {
		printf("test_shm_errors: ENOSPC case skipped: cannot mount a tmpfs: "
		       "%s\n", strerror(errno));
		return 1;
	}
	CHECK_EQ(statvfs(mnt, &before), 0);
	fds = count_fds();
	ret = grb_channel_create_shared(cfg, attr, &sattr, &chan);
	if (ret == 0) {
		CHECK_EQ(count_entries(mnt), (int)grb_channel_nr_bufs(chan));
		grb_channel_destroy(chan);
	}
	/* Nothing left behind, on error as after destroy: no file, no
	 * block of the filesystem, no descriptor. */
	CHECK_EQ(count_entries(mnt), 0);
	CHECK_EQ(statvfs(mnt, &after), 0);
	CHECK_U64(after.f_bfree, before.f_bfree);
	CHECK_EQ(count_fds(), fds);
	CHECK_EQ(umount(mnt), 0);
	return ret;
}

static void enospc_child(const char *mnt)
{
	const struct grb_config *cfg = tc_config(TV_SHARED | TV_DISCARD);
	struct grb_channel_attr attr = { "full", 16 * SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	unsigned long long map, page = (unsigned long long)sysconf(_SC_PAGESIZE);
	struct grb_channel *chan;
	unsigned int nr;
	struct stat st;
	int ret;

	if (unshare(CLONE_NEWNS) != 0 ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0) {
		printf("test_shm_errors: ENOSPC case skipped: no mount namespace of "
		       "our own: %s\n", strerror(errno));
		exit(77);
	}
	/* One buffer's size: a memfd channel's file. */
	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &mem, &chan), 0);
	CHECK_EQ(fstat(grb_channel_shm_fd(chan, 0), &st), 0);
	map = (unsigned long long)st.st_size;
	nr = grb_channel_nr_bufs(chan);
	grb_channel_destroy(chan);
	CHECK(map > 2 * page);
	/* Room for every buffer: created, then removed whole. */
	ret = create_on_tmpfs(mnt, nr * map + 16 * page, cfg, &attr);
	if (ret == 1)
		exit(77);
	CHECK_EQ(ret, 0);
	/* Room for half of the first buffer: refused at creation. */
	CHECK_EQ(create_on_tmpfs(mnt, map / 2 / page * page, cfg, &attr),
		 -ENOSPC);
	/* Room for all but half of the last: the buffers made before it
	 * are removed too. */
	if (nr > 1)
		CHECK_EQ(create_on_tmpfs(mnt, ((nr - 1) * map + map / 2) /
					 page * page, cfg, &attr), -ENOSPC);
	else
		printf("test_shm_errors: one buffer only (one CPU): the case of a "
		       "later buffer not fitting is not run\n");
	exit(0);
}

/*
 * grb/shm.h: "Every buffer is allocated (written to, not sparse) at
 * creation, so a shortage of shared memory is -ENOSPC here", and "On
 * error nothing is left allocated and no file is left behind".
 */
static void test_enospc(void)
{
	char mnt[] = "/tmp/grb-enospc-XXXXXX";
	pid_t pid;
	int st;

	if (geteuid() != 0) {
		printf("test_shm_errors: not root: the ENOSPC case is skipped\n");
		return;
	}
	CHECK(mkdtemp(mnt) != NULL);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		enospc_child(mnt);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) &&
	      (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 77));
	CHECK_EQ(rmdir(mnt), 0);
	if (WEXITSTATUS(st) == 0)
		printf("test_shm_errors: a full tmpfs: -ENOSPC at creation, nothing "
		       "left behind\n");
}

/* What grb_channel_send() writes first (src/shm.c, struct send_header). */
struct wire_header {
	uint64_t magic;
	uint32_t version;
	uint32_t nr_bufs;
};

#define WIRE_MAGIC UINT64_C(0x3130534446627267)   /* "grbFDS01" */

/* Send len bytes with nfds descriptors on them, as a forger would. */
static void send_raw(int sock, const void *buf, size_t len, const int *fds,
		     unsigned int nfds)
{
	char cbuf[CMSG_SPACE(64 * sizeof(int))];
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg;
	struct cmsghdr *cm;

	CHECK(nfds <= 64);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds) {
		memset(cbuf, 0, sizeof(cbuf));
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
 * A forged message on a fresh socket pair, then grb_channel_recv_fds()
 * and grb_channel_recv() on it: both must return @expect and keep no
 * descriptor that came with it (0: the caller closes what it got, the
 * channel is destroyed).  @hdr_len bytes of @hdr (NULL: none), then
 * @nr_f one-byte messages, the first carrying @nfds of @fds; then the
 * sender hangs up.
 */
static void forged(const struct grb_config *cfg, const struct wire_header *hdr,
		   size_t hdr_len, unsigned int nr_f, const int *fds,
		   unsigned int nfds, int expect)
{
	struct grb_channel *att;
	unsigned int pass, i, nr;
	int sp[2], n0, *got;

	for (pass = 0; pass < 2; pass++) {
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
		n0 = count_fds();
		if (hdr)
			send_raw(sp[1], hdr, hdr_len, NULL, 0);
		for (i = 0; i < nr_f; i++)
			send_raw(sp[1], "F", 1, i == 0 ? fds : NULL,
				 i == 0 ? nfds : 0);
		close(sp[1]);
		if (pass == 0) {
			CHECK_EQ(grb_channel_recv_fds(sp[0], &got, &nr), expect);
			for (i = 0; expect == 0 && i < nr; i++)
				CHECK_EQ(close(got[i]), 0);
			if (expect == 0)
				free(got);
		} else {
			CHECK_EQ(grb_channel_recv(sp[0], cfg, CLIENT,
						  GRB_ATTACH_READER, &att),
				 expect);
			if (expect == 0)
				grb_channel_destroy(att);
		}
		CHECK_EQ(count_fds(), n0 - 1);
		close(sp[0]);
	}
}

/* The sender's end, in a child with SIGPIPE's default action: a peer
 * that closed is -EPIPE, and the process lives. */
static void send_to_closed(const struct grb_channel *chan)
{
	int sp[2], st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
		close(sp[1]);
		CHECK_EQ(grb_channel_send(chan, sp[0]), -EPIPE);
		/* With data the peer never read, too. */
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
		CHECK_EQ(write(sp[0], "x", 1), 1);
		close(sp[1]);
		CHECK_EQ(grb_channel_send(chan, sp[0]), -EPIPE);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		fprintf(stderr, "test_shm_errors: grb_channel_send() to a closed peer "
			"killed the process with signal %d\n", WTERMSIG(st));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_socket_errors(void)
{
	const struct grb_config *cfg =
		tc_config(TV_SHARED | TV_PER_CHANNEL | TV_DISCARD);
	struct grb_channel_attr attr = { "sock", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct wire_header h = { WIRE_MAGIC, GRB_SHM_VERSION, 1 };
	struct grb_channel *chan, *att;
	unsigned int nr, i;
	int n0, file, pp[2], sp[2], s, extra[3], batch[64], *got;
	char path[512];

	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &mem, &chan), 0);
	n0 = count_fds();

	/* -ENOTSOCK: a regular file, either end of a pipe. */
	snprintf(path, sizeof(path), "%s/plain", dir);
	file = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(file >= 0);
	CHECK_EQ(pipe(pp), 0);
	CHECK_EQ(grb_channel_send(chan, file), -ENOTSOCK);
	CHECK_EQ(grb_channel_recv(file, cfg, CLIENT, GRB_ATTACH_READER, &att),
		 -ENOTSOCK);
	CHECK_EQ(grb_channel_recv_fds(file, &got, &nr), -ENOTSOCK);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(grb_channel_send(chan, pp[i]), -ENOTSOCK);
		CHECK_EQ(grb_channel_recv(pp[i], cfg, CLIENT,
					  GRB_ATTACH_READER, &att), -ENOTSOCK);
		CHECK_EQ(grb_channel_recv_fds(pp[i], &got, &nr), -ENOTSOCK);
	}
	close(pp[0]);
	close(pp[1]);
	close(file);
	CHECK_EQ(unlink(path), 0);
	/* -EBADF: no descriptor. */
	CHECK_EQ(grb_channel_send(chan, -1), -EBADF);
	CHECK_EQ(grb_channel_recv(-1, cfg, CLIENT, GRB_ATTACH_READER, &att),
		 -EBADF);
	CHECK_EQ(grb_channel_recv_fds(-1, &got, &nr), -EBADF);
	/* -ENOTCONN: a UNIX socket with no peer has no credentials to
	 * check (not -EPERM: nobody was refused). */
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(s >= 0);
	CHECK_EQ(grb_channel_send(chan, s), -ENOTCONN);
	CHECK_EQ(grb_channel_recv(s, cfg, CLIENT, GRB_ATTACH_READER, &att),
		 -ENOTCONN);
	CHECK_EQ(grb_channel_recv_fds(s, &got, &nr), -ENOTCONN);
	close(s);
	/* The same for a listening socket, which has no peer either (the
	 * kernel gives it its own credentials, and receiving on it fails
	 * with EINVAL: that was returned, -EINVAL meaning a NULL here). */
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(s >= 0);
	{
		struct sockaddr_un sa;

		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		/* An abstract address: nothing to clean up. */
		snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1,
			 "grb-test-listen-%d", (int)getpid());
		CHECK_EQ(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	}
	CHECK_EQ(listen(s, 1), 0);
	CHECK_EQ(grb_channel_send(chan, s), -ENOTCONN);
	CHECK_EQ(grb_channel_recv(s, cfg, CLIENT, GRB_ATTACH_READER, &att),
		 -ENOTCONN);
	CHECK_EQ(grb_channel_recv_fds(s, &got, &nr), -ENOTCONN);
	close(s);
	/* -EPIPE: the peer closed; the process is not killed. */
	send_to_closed(chan);

	/* -EINVAL: NULL arguments, a channel not in shared memory, an
	 * unknown role or a private configuration, refused before the
	 * message is read (it stays for a call that can take it). */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	CHECK_EQ(grb_channel_send(NULL, sp[0]), -EINVAL);
	/* (The sender's end closed: a call that read would not block.) */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pp), 0);
	close(pp[0]);
	CHECK_EQ(grb_channel_recv(pp[1], NULL, CLIENT, GRB_ATTACH_READER,
				  &att), -EINVAL);
	CHECK_EQ(grb_channel_recv(pp[1], cfg, NULL, GRB_ATTACH_READER, &att),
		 -EINVAL);
	CHECK_EQ(grb_channel_recv(pp[1], cfg, CLIENT, GRB_ATTACH_READER, NULL),
		 -EINVAL);
	CHECK_EQ(grb_channel_recv_fds(pp[1], NULL, &nr), -EINVAL);
	CHECK_EQ(grb_channel_recv_fds(pp[1], &got, NULL), -EINVAL);
	close(pp[1]);
	/* A call that read a message and dropped it would leave the next
	 * one waiting: it times out instead. */
	{
		struct timeval tv = { 2, 0 };

		CHECK_EQ(setsockopt(sp[1], SOL_SOCKET, SO_RCVTIMEO, &tv,
				    sizeof(tv)), 0);
	}
	n0 = count_fds();
	CHECK_EQ(grb_channel_send(chan, sp[0]), 0);
	CHECK_EQ(grb_channel_recv(sp[1], cfg, CLIENT, 7, &att), -EINVAL);
	CHECK_EQ(count_fds(), n0);
	CHECK_EQ(grb_channel_recv(sp[1], tc_config(TV_PER_CHANNEL | TV_DISCARD),
				  CLIENT, GRB_ATTACH_READER, &att), -EINVAL);
	CHECK_EQ(count_fds(), n0);
	/* The one message sent is still there, whole, and nothing after. */
	CHECK_EQ(grb_channel_recv(sp[1], cfg, CLIENT, GRB_ATTACH_READER, &att),
		 0);
	grb_channel_destroy(att);
	{
		char byte;

		CHECK_EQ(recv(sp[1], &byte, 1, MSG_DONTWAIT), -1);
		CHECK_EQ(errno, EAGAIN);
	}
	close(sp[0]);
	close(sp[1]);

	/* -ECONNRESET: the sender hung up before it sent anything, within
	 * the header, after it, between batches of descriptors; or it closed its
	 * end with bytes it never read (the kernel's own ECONNRESET). */
	forged(cfg, NULL, 0, 0, NULL, 0, -ECONNRESET);
	forged(cfg, &h, 5, 0, NULL, 0, -ECONNRESET);
	forged(cfg, &h, sizeof(h), 0, NULL, 0, -ECONNRESET);
	/* Two batches (src/shm.c sends 64 descriptors per byte): the
	 * first whole, the second never comes. */
	h.nr_bufs = 65;
	for (i = 0; i < 64; i++)
		batch[i] = grb_channel_shm_fd(chan, 0);
	forged(cfg, &h, sizeof(h), 1, batch, 64, -ECONNRESET);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	CHECK_EQ(write(sp[0], "x", 1), 1);
	close(sp[1]);
	CHECK_EQ(grb_channel_recv_fds(sp[0], &got, &nr), -ECONNRESET);
	close(sp[0]);

	/* -EBADMSG: not grb_channel_send()'s message.  Bytes that are not
	 * its header (with descriptors on them, too); no count or one
	 * beyond the limit; a descriptor missing, or one too many. */
	for (i = 0; i < 3; i++)
		extra[i] = grb_channel_shm_fd(chan, 0);
	{
		struct wire_header junk;

		memset(&junk, 0xab, sizeof(junk));
		forged(cfg, &junk, sizeof(junk), 0, NULL, 0, -EBADMSG);
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
		n0 = count_fds();
		send_raw(sp[1], &junk, sizeof(junk), extra, 2);
		CHECK_EQ(grb_channel_recv_fds(sp[0], &got, &nr), -EBADMSG);
		CHECK_EQ(count_fds(), n0);
		close(sp[0]);
		close(sp[1]);
	}
	h.nr_bufs = 1;
	h.magic = WIRE_MAGIC + 1;
	forged(cfg, &h, sizeof(h), 1, extra, 1, -EBADMSG);
	h.magic = WIRE_MAGIC;
	h.nr_bufs = 0;
	forged(cfg, &h, sizeof(h), 1, extra, 1, -EBADMSG);
	h.nr_bufs = GRB_SHM_MAX_BUFS + 1;
	forged(cfg, &h, sizeof(h), 1, extra, 1, -EBADMSG);
	h.nr_bufs = 1;
	forged(cfg, &h, sizeof(h), 1, extra, 0, -EBADMSG);
	forged(cfg, &h, sizeof(h), 1, extra, 3, -EBADMSG);
	/* -EPROTONOSUPPORT: grb_channel_send()'s, of another version. */
	h.version = GRB_SHM_VERSION + 1;
	forged(cfg, &h, sizeof(h), 1, extra, 1, -EPROTONOSUPPORT);
	h.version = GRB_SHM_VERSION;
	/* The forger's own header, well made: attaches (the test's
	 * forgeries differ from the real message only where they say). */
	forged(cfg, &h, sizeof(h), 1, extra, 1, 0);
	grb_channel_destroy(chan);
}

/*
 * grb_channel_recv(): "The descriptors received are closed once mapped",
 * after an attach that failed too; grb_channel_recv_fds(): the caller
 * owns them.
 */
static void test_recv_descriptors(void)
{
	const struct grb_config *cfg = tc_config(TV_SHARED | TV_DISCARD);
	const struct grb_config *other = tc_config(TV_SHARED);
	struct grb_channel_attr attr = { "fds", SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_channel *chan, *att;
	struct stat a, b;
	unsigned int nr, i, nb;
	int sp[2], n0, *got;

	CHECK_EQ(grb_channel_create_shared(cfg, &attr, &mem, &chan), 0);
	nb = grb_channel_nr_bufs(chan);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	n0 = count_fds();
	/* Attached: the channel's own copies are open, nothing else. */
	CHECK_EQ(grb_channel_send(chan, sp[0]), 0);
	CHECK_EQ(grb_channel_recv(sp[1], cfg, CLIENT, GRB_ATTACH_READER, &att),
		 0);
	CHECK_EQ(count_fds(), n0 + (int)nb);
	grb_channel_destroy(att);
	CHECK_EQ(count_fds(), n0);
	/* Attach refused: another client, another configuration. */
	CHECK_EQ(grb_channel_send(chan, sp[0]), 0);
	CHECK_EQ(grb_channel_recv(sp[1], cfg, "other", GRB_ATTACH_READER,
				  &att), -EPROTOTYPE);
	CHECK_EQ(count_fds(), n0);
	CHECK_EQ(grb_channel_send(chan, sp[0]), 0);
	CHECK_EQ(grb_channel_recv(sp[1], other, CLIENT, GRB_ATTACH_WRITER,
				  &att), -EPROTOTYPE);
	CHECK_EQ(count_fds(), n0);
	/* recv_fds: one new descriptor per buffer, the caller's: each is
	 * the buffer's file, stays open until the caller closes it, and
	 * attaches. */
	CHECK_EQ(grb_channel_send(chan, sp[0]), 0);
	CHECK_EQ(grb_channel_recv_fds(sp[1], &got, &nr), 0);
	CHECK_EQ(nr, nb);
	CHECK_EQ(count_fds(), n0 + (int)nr);
	for (i = 0; i < nr; i++) {
		CHECK_EQ(fstat(got[i], &a), 0);
		CHECK_EQ(fstat(grb_channel_shm_fd(chan, i), &b), 0);
		CHECK_U64(a.st_ino, b.st_ino);
		CHECK(got[i] != grb_channel_shm_fd(chan, i));
	}
	CHECK_EQ(grb_channel_attach(cfg, CLIENT, got, nr, GRB_ATTACH_READER,
				    &att), 0);
	grb_channel_destroy(att);
	CHECK_EQ(count_fds(), n0 + (int)nr);
	for (i = 0; i < nr; i++)
		CHECK_EQ(close(got[i]), 0);
	free(got);
	CHECK_EQ(count_fds(), n0);
	close(sp[0]);
	close(sp[1]);
	grb_channel_destroy(chan);
}

/* ---- paths and names --------------------------------------------------- */

/*
 * Make a directory under @base whose path is @len bytes long, of
 * components of at most 200 bytes (NAME_MAX is 255).  Return its path
 * (static storage), and the components' count in *depth.
 */
static const char *deep_dir(const char *base, size_t len, int *depth)
{
	static char path[4200];
	size_t n = strlen(base), part;

	CHECK(n < len);
	memcpy(path, base, n + 1);
	*depth = 0;
	while (n < len) {
		part = len - n - 1 < 200 ? len - n - 1 : 200;
		CHECK(part > 0);
		path[n++] = '/';
		memset(path + n, 'd', part);
		n += part;
		path[n] = '\0';
		CHECK_EQ(mkdir(path, 0700), 0);
		(*depth)++;
	}
	return path;
}

static void rm_deep_dir(char *path, int depth)
{
	while (depth-- > 0) {
		CHECK_EQ(rmdir(path), 0);
		*strrchr(path, '/') = '\0';
	}
}

/*
 * grb/shm.h: DIR/NAME.i is created exclusively; a path that does not
 * fit in 4096 bytes is -ENAMETOOLONG, not a path cut short (which named
 * "DIR/chan." for every buffer: one file with the wrong name, or -EEXIST
 * for the second).  attach_dir: a directory where a buffer file should
 * be is not a grb buffer (-EBADMSG), a symbolic link is not followed
 * (-ELOOP).  Without a directory, a channel name longer than memfd's
 * limit is fine (it is for diagnostics).  attach with no descriptor
 * left to duplicate one: -EMFILE.
 */
static void test_paths(void)
{
	const struct grb_config *pcpu = tc_config(TV_SHARED | TV_DISCARD);
	const struct grb_config *pch = tc_config(TV_SHARED | TV_DISCARD |
						 TV_PER_CHANNEL);
	struct grb_channel_attr attr = { "chan", SB, 4, NULL };
	struct grb_shm_attr sa = { CLIENT, NULL, -1 };
	struct grb_channel *chan, *att;
	char longname[300], path[4200], target[4300];
	struct rlimit old, lim;
	int depth, fd;

	/* "DIR/chan.0" is 4096 bytes with a DIR of 4089. */
	strcpy(path, deep_dir(dir, 4089, &depth));
	sa.dir = path;
	CHECK_EQ(grb_channel_create_shared(pch, &attr, &sa, &chan),
		 -ENAMETOOLONG);
	CHECK_EQ(grb_channel_create_shared(pcpu, &attr, &sa, &chan),
		 -ENAMETOOLONG);
	CHECK_EQ(count_entries(path), 0);
	CHECK_EQ(grb_channel_attach_dir(pch, CLIENT, path, "chan",
					GRB_ATTACH_READER, &att),
		 -ENAMETOOLONG);
	/* One byte shorter: it fits, and is named as asked. */
	attr.name = "cha";
	CHECK_EQ(grb_channel_create_shared(pch, &attr, &sa, &chan), 0);
	CHECK(strlen(path) + 7 < sizeof(target));
	strcpy(target, path);
	strcat(target, "/cha.0");
	CHECK_EQ(access(target, F_OK), 0);
	CHECK_EQ(grb_channel_attach_dir(pch, CLIENT, path, "cha",
					GRB_ATTACH_READER, &att), 0);
	grb_channel_destroy(att);
	grb_channel_destroy(chan);
	CHECK_EQ(count_entries(path), 0);
	rm_deep_dir(path, depth);
	attr.name = "chan";

	/* A directory, and a symbolic link to a real buffer file. */
	sa.dir = dir;
	CHECK_EQ(grb_channel_create_shared(pch, &attr, &sa, &chan), 0);
	snprintf(path, sizeof(path), "%s/isdir.0", dir);
	CHECK_EQ(mkdir(path, 0700), 0);
	CHECK_EQ(grb_channel_attach_dir(pch, CLIENT, dir, "isdir",
					GRB_ATTACH_READER, &att), -EBADMSG);
	CHECK_EQ(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/link.0", dir);
	snprintf(target, sizeof(target), "%s/chan.0", dir);
	(void)target[0];
	CHECK_EQ(symlink(target, path), 0);
	CHECK_EQ(grb_channel_attach_dir(pch, CLIENT, dir, "link",
					GRB_ATTACH_READER, &att), -ELOOP);
	CHECK_EQ(unlink(path), 0);
	/* A socket in the buffer file's place (open() says ENXIO). */
	{
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		int s = socket(AF_UNIX, SOCK_STREAM, 0);

		CHECK(s >= 0);
		CHECK((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path),
				       "%s/sock.0", dir) <
		      sizeof(sun.sun_path));
		CHECK_EQ(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
		CHECK_EQ(grb_channel_attach_dir(pch, CLIENT, dir, "sock",
						GRB_ATTACH_READER, &att),
			 -EBADMSG);
		close(s);
		CHECK_EQ(unlink(sun.sun_path), 0);
	}

	/* No descriptor left for attach's duplicates. */
	fd = grb_channel_shm_fd(chan, 0);
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim = old;
	/* The lowest free descriptor number becomes the limit. */
	lim.rlim_cur = (rlim_t)dup(fd);
	close((int)lim.rlim_cur);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
	CHECK_EQ(grb_channel_attach(pch, CLIENT, &fd, 1, GRB_ATTACH_READER,
				    &att), -EMFILE);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
	grb_channel_destroy(chan);

	/* A memfd channel's name is for diagnostics: any length. */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	attr.name = longname;
	/* In a directory, any length whose file names fit: 100 bytes (more
	 * than the handle's 64 for diagnostics), made, attached and removed
	 * by name; 299 is past a file name's 255. */
	longname[100] = '\0';
	sa.dir = dir;
	CHECK_EQ(grb_channel_create_shared(pch, &attr, &sa, &chan), 0);
	CHECK_EQ(grb_channel_attach_dir(pch, CLIENT, dir, longname,
					GRB_ATTACH_READER, &att), 0);
	grb_channel_destroy(att);
	grb_channel_destroy(chan);
	CHECK_EQ(count_entries(dir), 0);
	longname[100] = 'n';
	CHECK_EQ(grb_channel_create_shared(pch, &attr, &sa, &chan),
		 -ENAMETOOLONG);
	CHECK_EQ(grb_channel_attach_dir(pch, CLIENT, dir, longname,
					GRB_ATTACH_READER, &att),
		 -ENAMETOOLONG);
	CHECK_EQ(count_entries(dir), 0);
	sa.dir = NULL;
	CHECK_EQ(grb_channel_create_shared(pcpu, &attr, &sa, &chan), 0);
	grb_channel_destroy(chan);
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	test_enospc();
	test_socket_errors();
	test_recv_descriptors();
	test_paths();
	CHECK_EQ(rmdir(dir), 0);         /* nothing left behind */
	printf("test_shm_errors: passed\n");
	return 0;
}
