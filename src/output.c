/* SPDX-License-Identifier: MIT */
/*
 * src/output.c - moving data out (grb/output.h): record payloads copied
 * back to back through the iterators, and whole delivered sub-buffers
 * written or spliced to a file descriptor through the reader protocol.
 *
 * A sub-buffer goes out whole or the call fails on it: it is given back
 * (put_next) only once every byte of [0, data_size) has left, so writers
 * never reuse pages the kernel or the file still needs, and a file holds
 * sub-buffers one after another, each starting with its header.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engine.h"
#include "grb/iter.h"
#include "grb/output.h"
#include "iter_internal.h"

/* Copy payload bytes [off, payload_len) of r, as many as fit in room. */
static size_t copy_part(char *dst, size_t room, const struct grb_iter_record *r,
			size_t off)
{
	size_t n = r->payload_len - off;

	if (n > room)
		n = room;
	if (n)
		memcpy(dst, (const char *)r->payload + off, n);
	return n;
}

/* A read stops: what it took counts first (records with empty payloads
 * too: they were consumed); "nothing now" is not an error, the end is
 * only when nothing was taken. */
static int read_result(int ret, size_t got, int took, size_t *len)
{
	*len = got;
	if (took || ret == -EAGAIN)
		return 0;
	return ret;
}

int grb_buf_iter_read(struct grb_buf_iter *it, void *dst, size_t cap,
		      size_t *len)
{
	struct grb_iter_record r;
	size_t got = 0, n;
	int ret = 0, took = 0;

	if (!it || !dst || cap == 0 || !len)
		return -EINVAL;
	while (got < cap) {
		/* The same record until advanced: a split one comes back. */
		ret = grb__buf_iter_peek(it, &r);
		if (ret == -EIO)
			continue;       /* skipped and counted by the iterator */
		if (ret)
			break;
		n = copy_part((char *)dst + got, cap - got, &r, it->read_off);
		got += n;
		took = 1;
		if (it->read_off + n < r.payload_len) {
			it->read_off += n;      /* dst is full */
			break;
		}
		/* Advancing clears the losses the record carried; the
		 * caller sees no record, so they stay for
		 * grb_buf_iter_lost() (grb/output.h). */
		grb__buf_iter_advance(it, &r);  /* resets read_off */
		it->lost_pending += r.lost;
	}
	return read_result(ret, got, took, len);
}

int grb_chan_iter_read(struct grb_chan_iter *ci, void *dst, size_t cap,
		       size_t *len)
{
	struct grb_iter_split *sp;
	struct grb_iter_record r;
	size_t got = 0, n, off;
	int ret = 0, took = 0;

	if (!ci || !dst || cap == 0 || !len)
		return -EINVAL;
	/* The merge takes a record when it returns it, so a split one is
	 * kept here rather than peeked again. */
	sp = grb__chan_iter_split(ci);
	while (got < cap) {
		if (sp->off) {
			r = sp->rec;
			off = sp->off;
			sp->off = 0;
		} else {
			ret = grb_chan_iter_next(ci, &r);
			if (ret == -EIO)
				continue;       /* skipped and counted */
			if (ret)
				break;
			if (r.lost)
				grb__chan_iter_unreport(ci, &r);
			off = 0;
		}
		n = copy_part((char *)dst + got, cap - got, &r, off);
		got += n;
		took = 1;
		if (off + n < r.payload_len) {
			sp->rec = r;
			sp->off = off + n;
			break;
		}
	}
	return read_result(ret, got, took, len);
}

/*
 * Wait until fd is ready for events.  Used when a non-blocking fd says
 * EAGAIN in the middle of a sub-buffer: stopping there would leave part
 * of one in the output, so the call finishes it.  A poll error or hang-up
 * is left for the next write or splice to report with its own errno.
 */
static int wait_fd(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	while (poll(&p, 1, -1) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/* Is this errno "try again": interrupted, or a full non-blocking fd? */
static int retry_errno(int fd, short events)
{
	if (errno == EINTR)
		return 0;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return wait_fd(fd, events);
	return -errno;
}

/* Write all of [p, p + n) to fd.  Return: 0 or a negative errno. */
static int write_all(int fd, const char *p, size_t n)
{
	ssize_t w;
	int ret;

	while (n) {
		w = write(fd, p, n);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		/* write(2) returns 0 for a non-zero count only on devices
		 * that take nothing: report it rather than spin. */
		if (w == 0)
			return -EIO;
		ret = retry_errno(fd, POLLOUT);
		if (ret)
			return ret;
	}
	return 0;
}

/* How one sub-buffer leaves: write(2), or vmsplice(2) + splice(2). */
struct out_ops {
	int (*emit)(void *arg, int fd, const struct grb_reader_subbuf *sb);
	void *arg;
};

static int emit_write(void *arg, int fd, const struct grb_reader_subbuf *sb)
{
	(void)arg;
	return write_all(fd, (const char *)sb->data, sb->data_size);
}

/*
 * The number of sub-buffers a call may take: those closed when it began
 * (so a call ends even while writers keep delivering), at most max.
 * Return: 0; -ENODATA when finalized and drained; -EBUSY when one is
 * held; -EPERM when not open.
 */
static int subbufs_now(struct grb_buf *buf, uint64_t max, uint64_t *n)
{
	uint64_t c, p;
	int ret = grb_reader_snapshot(buf, &c, &p);

	*n = 0;
	if (ret == -EPERM || ret == -EINVAL)
		return ret;
	/* Only the reader sets held: its own value. */
	if (buf->shm->held != GRB_HELD_NONE)
		return -EBUSY;
	if (ret == -EAGAIN)
		return 0;
	if (ret)
		return ret;
	*n = (p - c) >> buf->subbuf_order;
	if (max && max < *n)
		*n = max;
	return 0;
}

static int out_subbufs(struct grb_buf *buf, int fd, uint64_t max,
		       uint64_t *bytes, const struct out_ops *ops)
{
	struct grb_reader_subbuf sb;
	uint64_t n, i, total = 0;
	int ret = subbufs_now(buf, max, &n);

	for (i = 0; ret == 0 && i < n; i++) {
		ret = grb_reader_get_next(buf);
		if (ret) {
			/* Closed but not delivered yet (a writer has not
			 * committed), or drained: what was taken stands. */
			if (ret == -EAGAIN || ret == -ENODATA)
				ret = 0;
			break;
		}
		/* An attached reader's mapping may describe it wrongly
		 * (-EBADMSG): given back as a failed write is. */
		ret = grb_reader_held(buf, &sb);
		if (!ret)
			ret = ops->emit(ops->arg, fd, &sb);
		if (ret) {
			grb__reader_give_back(buf);
			break;
		}
		grb_reader_put_next(buf);
		total += sb.data_size;
	}
	if (bytes)
		*bytes = total;
	return ret;
}

/* Is fd open for writing?  Checked before a sub-buffer is taken: in
 * overwrite mode one taken and not written is lost. */
static int out_fd_check(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	return (fl & O_ACCMODE) == O_RDONLY ? -EBADF : 0;
}

int grb_buf_write(struct grb_buf *buf, int fd, uint64_t max, uint64_t *bytes)
{
	const struct out_ops ops = { emit_write, NULL };
	int ret;

	if (bytes)
		*bytes = 0;
	if (!buf || fd < 0)
		return -EINVAL;
	ret = out_fd_check(fd);
	if (ret)
		return ret;
	return out_subbufs(buf, fd, max, bytes, &ops);
}

/* The pipe a splice goes through, and how much it takes at once. */
struct splice_pipe {
	int rd, wr;
	size_t chunk;
};

/*
 * Move n bytes that are in the pipe to fd.  On failure the rest is read
 * out and dropped, so the pipe is empty and no longer references the
 * sub-buffer's pages when it is given back.
 */
static int splice_out(const struct splice_pipe *sp, int fd, size_t n)
{
	char scrap[512];
	ssize_t s;
	int ret = 0;

	while (n && ret == 0) {
		s = splice(sp->rd, NULL, fd, NULL, n, SPLICE_F_MOVE);
		if (s > 0)
			n -= (size_t)s;
		else if (s == 0)
			ret = -EIO;     /* the pipe is empty: not ours */
		else
			ret = retry_errno(fd, POLLOUT);
	}
	while (n) {
		s = read(sp->rd, scrap, n < sizeof(scrap) ? n : sizeof(scrap));
		if (s > 0)
			n -= (size_t)s;
		else if (s == 0 || errno != EINTR)
			break;
	}
	return ret;
}

/* vmsplice a sub-buffer's bytes into the pipe, a chunk at a time, and
 * splice each chunk out to fd before the next. */
static int emit_splice(void *arg, int fd, const struct grb_reader_subbuf *sb)
{
	const struct splice_pipe *sp = (const struct splice_pipe *)arg;
	const char *p = (const char *)sb->data;
	size_t left = sb->data_size;
	struct iovec iov;
	ssize_t in;
	int ret;

	while (left) {
		iov.iov_base = (void *)p;
		iov.iov_len = left < sp->chunk ? left : sp->chunk;
		/* No SPLICE_F_GIFT: the pages stay the ring's; the pipe only
		 * references them until splice_out() empties it. */
		in = vmsplice(sp->wr, &iov, 1, 0);
		if (in < 0) {
			ret = retry_errno(sp->wr, POLLOUT);
			if (ret)
				return ret;
			continue;
		}
		if (in == 0)
			return -EIO;
		ret = splice_out(sp, fd, (size_t)in);
		if (ret)
			return ret;
		p += in;
		left -= (size_t)in;
	}
	return 0;
}

/* Is fd a pipe's end, opened for acc (O_RDONLY or O_WRONLY)? */
static int pipe_end(int fd, int acc)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_ACCMODE) == acc &&
		fcntl(fd, F_GETPIPE_SZ) > 0;
}

/* Are rd and wr ends of one pipe?  Its two ends share one inode.  With
 * the ends of two pipes, the bytes written into one would never come out
 * of the other: the call would block, or fail with them still in it. */
static int same_pipe(int rd, int wr)
{
	struct stat a, b;

	return fstat(rd, &a) == 0 && fstat(wr, &b) == 0 &&
		a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Our own pipe: made as large as a sub-buffer when the system allows
 * (fewer system calls per sub-buffer); the size it ends up with is the
 * chunk.  A caller's pipe is used at the size it has.
 */
static int pipe_open(struct splice_pipe *sp, const int *pipe_fds,
		     size_t subbuf_size)
{
	int fds[2], sz;

	if (pipe_fds) {
		sp->rd = pipe_fds[0];
		sp->wr = pipe_fds[1];
		/* vmsplice(2) on a read end reads the pipe into the ring, and
		 * bytes left in a pipe that cannot be read keep referencing
		 * it: both ends must be what they claim. */
		if (!pipe_end(sp->rd, O_RDONLY) || !pipe_end(sp->wr, O_WRONLY) ||
		    !same_pipe(sp->rd, sp->wr))
			return -EBADF;
		/* Bytes already in it would go out ahead of the sub-buffer's,
		 * and as many of those would stay behind, referencing pages
		 * writers reuse. */
		if (ioctl(sp->rd, FIONREAD, &sz) < 0 || sz != 0)
			return -EINVAL;
	} else {
		if (pipe2(fds, O_CLOEXEC) < 0)
			return -errno;
		sp->rd = fds[0];
		sp->wr = fds[1];
		sz = fcntl(sp->wr, F_GETPIPE_SZ);
		if (sz >= 0 && (size_t)sz < subbuf_size &&
		    subbuf_size <= (size_t)INT32_MAX)
			(void)fcntl(sp->wr, F_SETPIPE_SZ, (int)subbuf_size);
	}
	sz = fcntl(sp->wr, F_GETPIPE_SZ);
	if (sz <= 0) {
		sz = sz < 0 ? -errno : -EINVAL;
		if (!pipe_fds) {
			close(sp->rd);
			close(sp->wr);
		}
		return sz;
	}
	sp->chunk = (size_t)sz;
	return 0;
}

/* Does splice(2) take fd as its output, with the kernel done with the
 * pages when it returns?  A regular file not opened for appending. */
static int splice_fits(int fd, int *fits)
{
	struct stat st;
	int fl;

	if (fstat(fd, &st) < 0)
		return -errno;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -errno;
	/* splice(2) refuses O_APPEND outputs (EINVAL); write(2) does not. */
	*fits = S_ISREG(st.st_mode) && !(fl & O_APPEND);
	return 0;
}

int grb_buf_splice(struct grb_buf *buf, int fd, const int *pipe_fds,
		   uint64_t max, uint64_t *bytes)
{
	struct splice_pipe sp;
	struct out_ops ops = { emit_splice, &sp };
	int ret, fits = 0;

	if (bytes)
		*bytes = 0;
	if (!buf || fd < 0)
		return -EINVAL;
	ret = out_fd_check(fd);
	if (ret)
		return ret;
	ret = splice_fits(fd, &fits);
	if (ret)
		return ret;
	if (!fits)
		return grb_buf_write(buf, fd, max, bytes);
	ret = pipe_open(&sp, pipe_fds, buf->subbuf_size);
	if (ret)
		return ret;
	ret = out_subbufs(buf, fd, max, bytes, &ops);
	if (!pipe_fds) {
		close(sp.rd);
		close(sp.wr);
	}
	return ret;
}
