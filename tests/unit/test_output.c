/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_output.c - grb_buf_write() and grb_buf_splice()
 * (grb/output.h); the read side is tests/func/test_outputs_checker.c.
 *  - files on /tmp and /dev/shm byte-identical to the delivered
 *    sub-buffers [0, data_size) as grb_reader_held() shows them before
 *    they are consumed, one sub-buffer at a time or all; splice in pieces
 *    through a small caller pipe, and whole through its own pipe grown
 *    past the default size;
 *  - a pipe (non-blocking, smaller than a sub-buffer, read slowly) and an
 *    O_APPEND file take the write(2) fallback;
 *  - every documented errno, short writes, EINTR and EAGAIN, and what a
 *    sub-buffer that failed to go out becomes in each mode (put back, or
 *    lost and counted as read); a bad output (a closed fd, one open for
 *    reading only, the ends of two pipes) refused before any sub-buffer
 *    is taken, so that nothing is lost in either mode.
 *
 * write(2), vmsplice(2), splice(2) and poll(2) are interposed below for
 * one file descriptor at a time: libgrb.so calls them through the PLT, so
 * the test's definitions win and can cut, interrupt or fail them, and
 * count the calls that show which path a sub-buffer took.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"
#include "grb/output.h"
#include "tclient.h"

/* ---- fault injection ------------------------------------------------ */

struct fault {
	int fd;             /* the descriptor faults apply to; -1: none,
			       ANY_FD: all */
	int eintr;          /* fail the next calls with EINTR */
	int eagain;         /* then with EAGAIN */
	size_t cap;         /* move at most this many bytes a call */
	int err;            /* fail with this errno ... */
	unsigned long after;/* ... once this many calls went through */
	int zero;           /* write(2) returns 0 */
	unsigned long calls;/* calls on fd that went through */
	size_t max_len;     /* largest length asked for */
};

#define ANY_FD (-2)

static struct fault f_write = { .fd = -1 }, f_splice = { .fd = -1 },
	f_vmsplice = { .fd = -1 }, f_poll = { .fd = -1 };

static void fault_reset(void)
{
	const struct fault none = { .fd = -1 };

	f_write = none;
	f_splice = none;
	f_vmsplice = none;
	f_poll = none;
}

/* Return -1 (errno set) to fail the call, else 0 with *n cut to cap. */
static int fault_hit(struct fault *f, int fd, size_t *n)
{
	if (fd != f->fd && f->fd != ANY_FD)
		return 0;
	if (*n > f->max_len)
		f->max_len = *n;
	if (f->eintr) {
		f->eintr--;
		errno = EINTR;
		return -1;
	}
	if (f->eagain) {
		f->eagain--;
		errno = EAGAIN;
		return -1;
	}
	if (f->err && f->calls >= f->after) {
		errno = f->err;
		return -1;
	}
	f->calls++;
	if (f->cap && *n > f->cap)
		*n = f->cap;
	return 0;
}

ssize_t write(int fd, const void *p, size_t n)
{
	if (fault_hit(&f_write, fd, &n))
		return -1;
	if (fd == f_write.fd && f_write.zero)
		return 0;
	return syscall(SYS_write, fd, p, n);
}

ssize_t splice(int in, loff_t *in_off, int out, loff_t *out_off, size_t n,
	       unsigned int flags)
{
	if (fault_hit(&f_splice, out, &n))
		return -1;
	return syscall(SYS_splice, in, in_off, out, out_off, n, flags);
}

ssize_t vmsplice(int fd, const struct iovec *iov, size_t nr, unsigned int flags)
{
	struct iovec one = iov[0];

	if (fault_hit(&f_vmsplice, fd, &one.iov_len))
		return -1;
	return syscall(SYS_vmsplice, fd, nr == 1 ? &one : iov, nr, flags);
}

/*
 * glibc declares poll()'s array write-only (access attribute), so reading
 * fds[0].fd here looks like a read of uninitialized memory to gcc -O1
 * (clang has no such warning); the callers fill fd and events, as poll(2)
 * requires.
 */
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	size_t one = 1;

	if (n == 1 && fault_hit(&f_poll, fds[0].fd, &one))
		return -1;
	return (int)syscall(SYS_poll, fds, n, timeout);
}
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* ---- write and splice ------------------------------------------------ */

#define SB 4096

static struct grb_channel *create(const struct grb_config *cfg, size_t sb,
				  size_t n)
{
	struct grb_channel_attr attr = { "output", sb, n, NULL };
	struct grb_channel *chan;

	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	return chan;
}

/*
 * The delivered sub-buffers [0, data_size) as grb_reader_held() shows
 * them, read without consuming (get_subbuf), back to back.  Return: the
 * byte count; *first: the first one's.
 */
static size_t held_bytes(struct grb_buf *buf, unsigned char *out,
			 size_t *first)
{
	uint64_t step = grb_buf_channel(buf)->subbuf_size, c, p, pos;
	struct grb_reader_subbuf sb;
	size_t n = 0;

	*first = 0;
	if (grb_reader_snapshot(buf, &c, &p) != 0)
		return 0;
	for (pos = c; pos < p; pos += step) {
		CHECK_EQ(grb_reader_get_subbuf(buf, pos), 0);
		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		memcpy(out + n, sb.data, sb.data_size);
		if (n == 0)
			*first = sb.data_size;
		n += sb.data_size;
		CHECK_EQ(grb_reader_put_subbuf(buf), 0);
	}
	return n;
}

static unsigned char *file_bytes(int fd, size_t *len)
{
	struct stat st;
	unsigned char *p;

	CHECK_EQ(fstat(fd, &st), 0);
	p = malloc((size_t)st.st_size + 1);
	CHECK(p != NULL);
	CHECK_EQ(pread(fd, p, (size_t)st.st_size, 0), st.st_size);
	*len = (size_t)st.st_size;
	return p;
}

static int temp_file(const char *dir, int flags)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/grb-output-XXXXXX", dir);
	fd = mkostemp(path, flags);
	CHECK(fd >= 0);
	unlink(path);
	return fd;
}

enum method { M_WRITE, M_SPLICE, M_SPLICE_PIPE };

static int out(enum method m, struct grb_buf *buf, int fd, const int *pfd,
	       uint64_t max, uint64_t *bytes)
{
	if (m == M_WRITE)
		return grb_buf_write(buf, fd, max, bytes);
	return grb_buf_splice(buf, fd, m == M_SPLICE_PIPE ? pfd : NULL, max,
			      bytes);
}

/* tclient records into an open buffer: enough to wrap an overwrite one. */
static struct grb_channel *tc_filled(int variant, size_t sb, size_t nsb,
				     uint32_t nrec)
{
	struct grb_channel *chan = create(tc_config(variant), sb, nsb);
	struct grb_buf *buf = grb_channel_buf(chan, 0);
	uint32_t i;

	CHECK_EQ(grb_reader_open(buf), 0);
	for (i = 0; i < nrec; i++)
		tc_write(tc_config(variant), chan, 0, i, i % 97);
	grb_buf_flush(buf, GRB_FLUSH_ACTIVE);
	return chan;
}

/*
 * Sub-buffers out to a file in dir: the first alone (max 1), then the
 * rest; the file must hold exactly what get_subbuf showed.
 */
static void test_file(int variant, const char *dir, enum method m,
		      size_t sb, int pipe_sz)
{
	size_t nsb = 8, want_len, first, got_len;
	struct grb_channel *chan = tc_filled(variant, sb, nsb,
					     (uint32_t)(sb / 64 * 20));
	struct grb_buf *buf = grb_channel_buf(chan, 0);
	unsigned char *want = malloc(sb * nsb), *got;
	struct grb_buf_stats st;
	uint64_t bytes;
	int fd = temp_file(dir, 0), pfd[2];

	CHECK(want != NULL);
	CHECK_EQ(pipe2(pfd, O_CLOEXEC), 0);
	if (pipe_sz)
		CHECK_EQ(fcntl(pfd[1], F_SETPIPE_SZ, pipe_sz), pipe_sz);
	want_len = held_bytes(buf, want, &first);
	CHECK(first > 0 && want_len > first);
	fault_reset();
	f_vmsplice.fd = ANY_FD;         /* ours or the caller's pipe */
	f_splice.fd = fd;
	CHECK_EQ(out(m, buf, fd, pfd, 1, &bytes), 0);
	CHECK_U64(bytes, first);
	CHECK_EQ(out(m, buf, fd, pfd, 0, &bytes), 0);
	CHECK_U64(bytes, want_len - first);
	CHECK_EQ(out(m, buf, fd, pfd, 0, &bytes), 0);
	CHECK_U64(bytes, 0);
	got = file_bytes(fd, &got_len);
	CHECK_U64(got_len, want_len);
	CHECK(memcmp(got, want, want_len) == 0);
	/* The kernel path was taken, in pieces no larger than the pipe. */
	CHECK_EQ(f_splice.calls > 0, m != M_WRITE);
	if (m == M_SPLICE_PIPE)
		CHECK(f_vmsplice.max_len <= (size_t)pipe_sz);
	if (m == M_SPLICE && sb > 65536)
		CHECK(f_vmsplice.max_len > 65536);  /* our pipe grew */
	fault_reset();
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	CHECK_U64(st.read + st.overwritten, st.written);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(out(m, buf, fd, pfd, 0, &bytes), -ENODATA);
	free(got);
	free(want);
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
	grb_channel_destroy(chan);
}

struct slow_reader {
	int fd;
	unsigned char *out;
	size_t len, cap;
};

static void *slow_read(void *p)
{
	struct slow_reader *s = (struct slow_reader *)p;
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	size_t room;
	ssize_t n;

	for (;;) {
		usleep(200);
		room = s->cap - s->len;
		n = read(s->fd, s->out + s->len, room < 1000 ? room : 1000);
		if (n == 0)
			break;
		if (n > 0)
			s->len += (size_t)n;
		else
			CHECK(syscall(SYS_poll, &pfd, 1, -1) >= 0);
	}
	return NULL;
}

/*
 * Non-regular targets take the write(2) fallback (the pipe_fds, here
 * not a pipe at all, are never touched): a pipe read slowly, non-blocking
 * and smaller than a sub-buffer (EAGAIN, waited on), and a file opened
 * with O_APPEND.
 */
static void test_fallback(int variant)
{
	size_t sb = 16384, nsb = 8, want_len, first, got_len;
	struct grb_channel *chan = tc_filled(variant, sb, nsb, 2000);
	struct grb_buf *buf = grb_channel_buf(chan, 0);
	unsigned char *want = malloc(sb * nsb), *got = malloc(sb * nsb);
	struct slow_reader s = { -1, got, 0, sb * nsb };
	static const int not_pipe[2] = { -1, -1 };
	uint64_t bytes;
	pthread_t t;
	int pfd[2], fd;

	CHECK(want && got);
	want_len = held_bytes(buf, want, &first);
	CHECK_EQ(pipe2(pfd, O_CLOEXEC | O_NONBLOCK), 0);
	CHECK_EQ(fcntl(pfd[1], F_SETPIPE_SZ, 4096), 4096);
	s.fd = pfd[0];
	CHECK_EQ(pthread_create(&t, NULL, slow_read, &s), 0);
	CHECK_EQ(grb_buf_splice(buf, pfd[1], not_pipe, 0, &bytes), 0);
	CHECK_U64(bytes, want_len);
	close(pfd[1]);
	CHECK_EQ(pthread_join(t, NULL), 0);
	close(pfd[0]);
	CHECK_U64(s.len, want_len);
	CHECK(memcmp(got, want, want_len) == 0);
	free(got);

	for (unsigned int i = 0; i < 100; i++)
		tc_write(tc_config(variant), chan, 0, i, 3);
	grb_buf_flush(buf, GRB_FLUSH_ACTIVE);
	want_len = held_bytes(buf, want, &first);
	fd = temp_file("/tmp", O_APPEND);
	CHECK_EQ(grb_buf_splice(buf, fd, not_pipe, 0, &bytes), 0);
	CHECK_U64(bytes, want_len);
	got = file_bytes(fd, &got_len);
	CHECK_U64(got_len, want_len);
	CHECK(memcmp(got, want, want_len) == 0);
	close(fd);
	free(got);
	free(want);
	grb_channel_destroy(chan);
}

/* ---- failures -------------------------------------------------------- */

enum fail_kind {
	F_WRITE_FULL,           /* write(2): ENOSPC (/dev/full) */
	F_SPLICE_FULL,          /* the same through splice's fallback */
	F_WRITE_PIPE,           /* write(2): EPIPE, SIGPIPE ignored */
	F_WRITE_ZERO,           /* write(2) takes nothing: EIO */
	F_WRITE_POLL,           /* EAGAIN, then poll(2) fails: ENOMEM */
	F_VMSPLICE_MIDWAY,      /* vmsplice(2) fails after two pieces */
	F_SPLICE_MIDWAY,        /* splice(2) fails after two pieces */
};

/* Make one output call fail as kind says; return its result. */
static int fail_once(enum fail_kind kind, struct grb_buf *buf, int file)
{
	uint64_t bytes = 99;
	int pfd[2], fd, ret, queued = -1;

	CHECK_EQ(pipe2(pfd, O_CLOEXEC), 0);
	fd = file;
	switch (kind) {
	case F_WRITE_FULL:
	case F_SPLICE_FULL:
		fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
		CHECK(fd >= 0);
		break;
	case F_WRITE_PIPE:
		close(pfd[0]);
		pfd[0] = -1;
		fd = pfd[1];
		break;
	case F_WRITE_ZERO:
		f_write.fd = file;
		f_write.zero = 1;
		break;
	case F_WRITE_POLL:
		f_write.fd = file;
		f_write.eagain = 1;
		f_poll.fd = file;
		f_poll.err = ENOMEM;
		break;
	case F_VMSPLICE_MIDWAY:
	case F_SPLICE_MIDWAY:
		f_vmsplice.cap = 1000;
		f_vmsplice.fd = pfd[1];
		f_splice.fd = file;
		if (kind == F_SPLICE_MIDWAY) {
			f_splice.err = ENOSPC;
			f_splice.after = 2;
		} else {
			f_vmsplice.err = ENOMEM;
			f_vmsplice.after = 2;
		}
		break;
	}
	if (kind == F_SPLICE_FULL ||
	    kind == F_VMSPLICE_MIDWAY || kind == F_SPLICE_MIDWAY)
		ret = grb_buf_splice(buf, fd, pfd, 0, &bytes);
	else
		ret = grb_buf_write(buf, fd, 0, &bytes);
	CHECK_U64(bytes, 0);    /* no sub-buffer went out whole */
	if (kind == F_SPLICE_MIDWAY || kind == F_VMSPLICE_MIDWAY) {
		/* Two pieces reached the file; the pipe was emptied. */
		CHECK_EQ(ioctl(pfd[0], FIONREAD, &queued), 0);
		CHECK_EQ(queued, 0);
		CHECK_EQ(lseek(file, 0, SEEK_END), 2000);
		CHECK_EQ(ftruncate(file, 0), 0);
		CHECK_EQ(lseek(file, 0, SEEK_SET), 0);
	}
	fault_reset();
	if (fd != file)
		close(fd);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] != fd)
		close(pfd[1]);
	return ret;
}

/*
 * A sub-buffer that fails to go out: discard mode gives it back (the
 * next call writes it and everything after), overwrite mode loses it and
 * counts it as read (the next call writes the rest).
 */
static void test_failure(int variant, enum fail_kind kind, int err)
{
	size_t want_len, first, got_len;
	struct grb_channel *chan = tc_filled(variant, SB, 8, 300);
	struct grb_buf *buf = grb_channel_buf(chan, 0);
	unsigned char *want = malloc(SB * 8), *got;
	int discard = variant & TV_DISCARD, fd = temp_file("/tmp", 0);
	struct grb_buf_stats st0, st;
	uint64_t bytes;

	CHECK(want != NULL);
	want_len = held_bytes(buf, want, &first);
	CHECK(want_len > first);
	CHECK_EQ(grb_buf_get_stats(buf, &st0), 0);
	CHECK_EQ(fail_once(kind, buf, fd), -err);
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	if (discard)
		CHECK_U64(st.read, st0.read);
	else
		CHECK(st.read > st0.read);
	CHECK_EQ(grb_buf_write(buf, fd, 0, &bytes), 0);
	got = file_bytes(fd, &got_len);
	CHECK_U64(bytes, got_len);
	if (discard) {
		CHECK_U64(got_len, want_len);
		CHECK(memcmp(got, want, want_len) == 0);
	} else {
		CHECK_U64(got_len, want_len - first);
		CHECK(memcmp(got, want + first, got_len) == 0);
	}
	free(got);
	free(want);
	close(fd);
	grb_channel_destroy(chan);
}

/* Failures before any sub-buffer is taken consume nothing. */
static void test_early_errors(int variant)
{
	struct grb_channel *chan = tc_filled(variant, SB, 8, 100);
	struct grb_buf *buf = grb_channel_buf(chan, 0);
	static const int not_pipe[2] = { 0, 1 };
	int fd = temp_file("/tmp", 0), closed = dup(fd), pfd[2], swapped[2];
	struct rlimit old, lim;
	struct grb_buf_stats st;
	uint64_t bytes;

	close(closed);
	CHECK_EQ(grb_buf_write(NULL, fd, 0, &bytes), -EINVAL);
	CHECK_EQ(grb_buf_write(buf, -1, 0, &bytes), -EINVAL);
	CHECK_EQ(grb_buf_splice(NULL, fd, NULL, 0, &bytes), -EINVAL);
	CHECK_EQ(grb_buf_splice(buf, -1, NULL, 0, &bytes), -EINVAL);
	CHECK_EQ(grb_buf_splice(buf, closed, NULL, 0, &bytes), -EBADF);
	CHECK_EQ(grb_buf_splice(buf, fd, not_pipe, 0, &bytes), -EBADF);
	/* A pipe's ends swapped: vmsplice(2) would read into the ring. */
	CHECK_EQ(pipe2(pfd, O_CLOEXEC), 0);
	swapped[0] = pfd[1];
	swapped[1] = pfd[0];
	CHECK_EQ(grb_buf_splice(buf, fd, swapped, 0, &bytes), -EBADF);
	close(pfd[0]);
	close(pfd[1]);
	/* Bad outputs, refused before a sub-buffer is taken (in overwrite
	 * mode one taken is consumed): a closed fd, one open for reading
	 * only, the ends of two different pipes. */
	{
		int ro = open("/dev/null", O_RDONLY | O_CLOEXEC), p2[2];
		int mixed[2];
		struct grb_buf_stats before, after;

		CHECK(ro >= 0);
		CHECK_EQ(grb_buf_get_stats(buf, &before), 0);
		CHECK_EQ(grb_buf_write(buf, closed, 0, &bytes), -EBADF);
		CHECK_EQ(grb_buf_write(buf, ro, 0, &bytes), -EBADF);
		CHECK_EQ(grb_buf_splice(buf, ro, NULL, 0, &bytes), -EBADF);
		CHECK_EQ(pipe2(pfd, O_CLOEXEC), 0);
		CHECK_EQ(pipe2(p2, O_CLOEXEC), 0);
		mixed[0] = pfd[0];
		mixed[1] = p2[1];
		CHECK_EQ(grb_buf_splice(buf, fd, mixed, 0, &bytes), -EBADF);
		CHECK_U64(bytes, 0);
		close(pfd[1]);  /* the pipe read from has no writer now */
		CHECK_EQ(grb_buf_splice(buf, fd, mixed, 0, &bytes), -EBADF);
		CHECK_EQ(grb_buf_get_stats(buf, &after), 0);
		CHECK_U64(after.consumed, before.consumed);
		CHECK_U64(after.read, before.read);
		close(pfd[0]);
		close(p2[0]);
		close(p2[1]);
		close(ro);
	}
	/* No descriptor left for the call's own pipe. */
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)closed;
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
	CHECK_EQ(grb_buf_splice(buf, fd, NULL, 0, &bytes), -EMFILE);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
	/* A held sub-buffer, then a buffer that is not open. */
	CHECK_EQ(grb_reader_get_next(buf), 0);
	CHECK_EQ(grb_buf_write(buf, fd, 0, &bytes), -EBUSY);
	CHECK_EQ(grb_buf_splice(buf, fd, NULL, 0, &bytes), -EBUSY);
	CHECK_EQ(grb_reader_put_next(buf), 0);
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	CHECK_EQ(grb_reader_release(buf), 0);
	CHECK_EQ(grb_buf_write(buf, fd, 0, &bytes), -EPERM);
	CHECK_EQ(grb_buf_splice(buf, fd, NULL, 0, &bytes), -EPERM);
	CHECK_EQ(pipe2(pfd, O_CLOEXEC), 0);
	CHECK_EQ(grb_buf_splice(buf, pfd[1], NULL, 0, &bytes), -EPERM);
	close(pfd[0]);
	close(pfd[1]);
	CHECK_EQ(lseek(fd, 0, SEEK_END), 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	/* bytes may be NULL; nothing consumed above but the one sub-buffer
	 * put back by hand. */
	CHECK_EQ(grb_buf_write(buf, fd, 0, NULL), 0);
	CHECK(lseek(fd, 0, SEEK_END) > 0);
	CHECK_EQ(grb_buf_write(buf, fd, 0, &bytes), 0);
	CHECK_U64(bytes, 0);    /* nothing delivered: not an error */
	close(fd);
	grb_channel_destroy(chan);
	(void)st;
}

/*
 * Short writes, EINTR and EAGAIN at every step: the file still holds
 * exactly the sub-buffers, each whole.
 */
static void test_interrupted(int variant, int splice_path)
{
	size_t want_len, first, got_len;
	struct grb_channel *chan = tc_filled(variant, 16384, 8, 1500);
	struct grb_buf *buf = grb_channel_buf(chan, 0);
	unsigned char *want = malloc(16384 * 8), *got;
	int fd = temp_file("/tmp", 0), pfd[2];
	uint64_t bytes;

	CHECK(want != NULL);
	CHECK_EQ(pipe2(pfd, O_CLOEXEC), 0);
	want_len = held_bytes(buf, want, &first);
	f_write = (struct fault){ .fd = fd, .eintr = 3, .eagain = 2,
				  .cap = 7 };
	f_splice = (struct fault){ .fd = fd, .eintr = 2, .eagain = 2,
				   .cap = 100 };
	f_vmsplice = (struct fault){ .fd = pfd[1], .eintr = 2, .eagain = 1,
				     .cap = 999 };
	if (splice_path)
		CHECK_EQ(grb_buf_splice(buf, fd, pfd, 0, &bytes), 0);
	else
		CHECK_EQ(grb_buf_write(buf, fd, 0, &bytes), 0);
	CHECK_U64(bytes, want_len);
	/* Every fault was met, and the pieces were as small as asked. */
	if (splice_path) {
		CHECK(f_splice.eintr == 0 && f_splice.eagain == 0);
		CHECK(f_vmsplice.eintr == 0 && f_vmsplice.eagain == 0);
		CHECK(f_splice.calls >= want_len / 100);
	} else {
		CHECK(f_write.eintr == 0 && f_write.eagain == 0);
		CHECK(f_write.calls >= want_len / 7);
	}
	fault_reset();
	got = file_bytes(fd, &got_len);
	CHECK_U64(got_len, want_len);
	CHECK(memcmp(got, want, want_len) == 0);
	free(got);
	free(want);
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
	grb_channel_destroy(chan);
}

/* Writing to a pipe whose reader is gone raises SIGPIPE, as write(2)
 * does (the failure tests above ignore it to see -EPIPE).  In a child,
 * with SIGPIPE at its default action. */
static void test_sigpipe(void)
{
	int pfd[2], status;
	pid_t pid;

	CHECK_EQ(pipe(pfd), 0);
	/* The read end closes before the fork: were the parent to close
	 * its copy after, the child could write into the pipe first. */
	close(pfd[0]);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct grb_channel *chan;
		sigset_t pipe_only;

		/* Default action and unblocked, whatever the runner set. */
		signal(SIGPIPE, SIG_DFL);
		sigemptyset(&pipe_only);
		sigaddset(&pipe_only, SIGPIPE);
		sigprocmask(SIG_UNBLOCK, &pipe_only, NULL);
		chan = tc_filled(TV_PER_CHANNEL | TV_DISCARD, SB, 4, 50);
		grb_buf_write(grb_channel_buf(chan, 0), pfd[1], 0, NULL);
		_exit(3);       /* not reached: SIGPIPE ends the process */
	}
	close(pfd[1]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGPIPE);
}

int main(void)
{
	static const char *const dirs[] = { "/tmp", "/dev/shm" };
	static const int variants[] = {
		TV_PER_CHANNEL | TV_DISCARD,
		TV_PER_CHANNEL,
		TV_PER_CHANNEL | TV_DISCARD | TV_COMPRESS,
		TV_PER_CHANNEL | TV_COMPRESS,
	};
	static const struct { enum fail_kind kind; int err; } fails[] = {
		{ F_WRITE_FULL, ENOSPC },
		{ F_SPLICE_FULL, ENOSPC }, { F_WRITE_PIPE, EPIPE },
		{ F_WRITE_ZERO, EIO }, { F_WRITE_POLL, ENOMEM },
		{ F_VMSPLICE_MIDWAY, ENOMEM },
		{ F_SPLICE_MIDWAY, ENOSPC },
	};
	unsigned int v, d, i;

	signal(SIGPIPE, SIG_IGN);
	alarm(240);     /* a splice that blocks is a failure */
	for (v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		for (d = 0; d < 2; d++) {
			if (access(dirs[d], W_OK) != 0) {
				printf("test_output: %s skipped\n", dirs[d]);
				continue;
			}
			test_file(variants[v], dirs[d], M_WRITE, SB, 0);
			test_file(variants[v], dirs[d], M_SPLICE, SB, 0);
			test_file(variants[v], dirs[d], M_SPLICE_PIPE, 16384,
				  4096);
			test_file(variants[v], dirs[d], M_SPLICE, 131072, 0);
		}
		test_fallback(variants[v]);
		for (i = 0; i < sizeof(fails) / sizeof(fails[0]); i++)
			test_failure(variants[v], fails[i].kind, fails[i].err);
		test_early_errors(variants[v]);
		test_interrupted(variants[v], 0);
		test_interrupted(variants[v], 1);
	}
	test_sigpipe();
	printf("test_output: passed\n");
	return 0;
}
