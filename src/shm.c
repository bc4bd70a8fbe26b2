/* SPDX-License-Identifier: MIT */
/*
 * src/shm.c - shared channels (grb/shm.h): buffer files created and
 * allocated, a mapping's description checked before another process maps
 * it, and the descriptors handed over a UNIX socket.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "engine.h"
#include "grb/impl/journal.h"
#include "grb/shm.h"

/* The header grb_channel_send() writes before the descriptors. */
#define SEND_MAGIC   UINT64_C(0x3130534446627267)   /* "grbFDS01" */
#define SEND_BATCH   64u

struct send_header {
	uint64_t magic;
	uint32_t version;               /* GRB_SHM_VERSION */
	uint32_t nr_bufs;
};

static int client_ok(const char *client)
{
	size_t n = client ? strnlen(client, GRB_SHM_CLIENT_MAX + 1) : 0;

	return n >= 1 && n <= GRB_SHM_CLIENT_MAX;
}

/* Any length: a path that does not fit is -ENAMETOOLONG (file_path()). */
static int name_ok(const char *name)
{
	return name && name[0] && !strchr(name, '/');
}

/* -errno of the last failed call, never 0. */
static int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

/* DIR/NAME.i into path; -ENAMETOOLONG when it does not fit (a path cut
 * short would name another file). */
static int file_path(char *path, size_t size, const char *dir,
		     const char *name, unsigned int i)
{
	int n = snprintf(path, size, "%s/%s.%u", dir, name, i);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* open(2) of a buffer file that should be there.  A directory is not a
 * grb buffer (-EBADMSG, as any other file that is not one); a symbolic
 * link is not followed (-ELOOP). */
static int open_buf_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

	/* A directory, a socket (ENXIO) or a device without a driver
	 * (ENXIO, ENODEV) is not a grb buffer either. */
	if (fd < 0)
		return errno == EISDIR || errno == ENXIO || errno == ENODEV ?
			-EBADMSG : neg_errno();
	return fd;
}


/*
 * One buffer's file: a memfd, or DIR/NAME.i created exclusively; owner
 * only or the group's, sized and allocated to map_size.
 */
static int make_file(const struct grb_shm_attr *sa, const char *name,
		     unsigned int i, uint64_t map_size, int *out)
{
	mode_t mode = sa->gid >= 0 ? 0660 : 0600;
	char path[4096];
	int fd, ret;

	if (sa->dir) {
		ret = file_path(path, sizeof(path), sa->dir, name, i);
		if (ret)
			return ret;
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
			  O_NOFOLLOW, mode);
	} else {
		/* The name is for diagnostics (/proc/PID/fd): the channel's
		 * first 63 bytes, as it keeps them, within memfd's limit. */
		snprintf(path, sizeof(path), "grb-%.63s.%u", name, i);
		fd = memfd_create(path, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	}
	if (fd < 0)
		return neg_errno();
	/* Exactly the mode asked for, whatever the umask. */
	if (fchmod(fd, mode) < 0 ||
	    (sa->gid >= 0 && fchown(fd, (uid_t)-1, (gid_t)sa->gid) < 0)) {
		ret = neg_errno();
		goto fail;
	}
	/* Real pages now: a shortage is -ENOSPC here, not SIGBUS later. */
	ret = posix_fallocate(fd, 0, (off_t)map_size);
	if (ret) {
		ret = -ret;
		goto fail;
	}
	if (!sa->dir && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
			      F_SEAL_SEAL) < 0) {
		ret = neg_errno();
		goto fail;
	}
	*out = fd;
	return 0;
fail:
	close(fd);
	if (sa->dir)
		unlink(path);
	return ret;
}

static void remove_files(const char *dir, const char *name, unsigned int n)
{
	char path[4096];
	unsigned int i;

	for (i = 0; i < n; i++)
		if (file_path(path, sizeof(path), dir, name, i) == 0)
			unlink(path);
}

/* chan->shm_dir holds "DIR/NAME": the whole name, which chan->name
 * (64 bytes, for diagnostics) may cut short. */
void grb__shm_remove(const struct grb_channel *chan)
{
	char path[4096];
	unsigned int i;

	if (chan->shared != GRB_CHAN_OWNER || !chan->shm_dir)
		return;
	for (i = 0; i < chan->nr_bufs; i++)
		if ((size_t)snprintf(path, sizeof(path), "%s.%u", chan->shm_dir,
				     i) < sizeof(path))
			unlink(path);
}

int grb_channel_create_shared(const struct grb_config *cfg,
			      const struct grb_channel_attr *attr,
			      const struct grb_shm_attr *sattr,
			      struct grb_channel **out)
{
	struct grb_channel *chan;
	struct grb_layout l;
	unsigned int i, nr, made = 0;
	int *fds, ret;

	if (!out || !attr || !sattr || !client_ok(sattr->client))
		return -EINVAL;
	if (sattr->dir && !name_ok(attr->name))
		return -EINVAL;
	ret = grb_config_check(cfg);
	if (!ret && !(cfg->flags & GRB_CONFIG_SHARED))
		ret = -EINVAL;
	if (!ret)
		ret = grb__check_geometry(cfg, attr->subbuf_size,
					  attr->num_subbuf);
	if (ret)
		return ret;
	nr = grb__nr_bufs(cfg);
	if (nr > GRB_SHM_MAX_BUFS)
		return -EINVAL;
	grb__layout(cfg, attr->subbuf_size, attr->num_subbuf,
		    GRB_JOURNAL_SLOTS, &l);
	fds = (int *)malloc(nr * sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	for (; made < nr; made++) {
		ret = make_file(sattr, attr->name ? attr->name : "", made,
				l.map_size, &fds[made]);
		if (ret)
			goto fail;
	}
	/* From here the channel owns fds, on failure too. */
	ret = grb__channel_create(cfg, attr, fds, &chan);
	if (ret) {
		if (sattr->dir)
			remove_files(sattr->dir, attr->name, nr);
		return ret;
	}
	for (i = 0; i < nr; i++)
		strncpy(chan->bufs[i].shm->client, sattr->client,
			GRB_SHM_CLIENT_BYTES - 1);
	chan->gid = sattr->gid;
	if (sattr->dir) {
		size_t n = strlen(sattr->dir) + strlen(attr->name) + 2;

		chan->shm_dir = (char *)malloc(n);
		if (chan->shm_dir)
			snprintf(chan->shm_dir, n, "%s/%s", sattr->dir,
				 attr->name);
		if (!chan->shm_dir) {
			remove_files(sattr->dir, attr->name, nr);
			grb_channel_destroy(chan);
			return -ENOMEM;
		}
	}
	*out = chan;
	return 0;
fail:
	for (i = 0; i < made; i++)
		close(fds[i]);
	free(fds);
	if (sattr->dir)
		remove_files(sattr->dir, attr->name, made);
	return ret;
}

/*
 * Read and check the description of buffer i of nr, before anything is
 * mapped: the file is input, not trusted.  On success *d holds the
 * checked copy every later use of the layout comes from.
 */
static int read_desc(int fd, unsigned int i, unsigned int nr,
		     const struct grb_config *cfg, const char *client,
		     struct grb_buf_shm *d)
{
	struct grb_layout l;
	struct stat st;
	int fl;

	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) != O_RDWR || fstat(fd, &st) < 0)
		return -EBADF;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(*d) ||
	    pread(fd, d, sizeof(*d), 0) != (ssize_t)sizeof(*d) ||
	    d->magic != GRB_SHM_MAGIC)
		return -EBADMSG;
	if (d->version != GRB_SHM_VERSION)
		return -EPROTONOSUPPORT;
	if (!memchr(d->client, 0, sizeof(d->client)) ||
	    strcmp(d->client, client) != 0 ||
	    d->mode != (uint32_t)cfg->mode ||
	    d->alloc != (uint32_t)cfg->alloc ||
	    d->timestamp_bits != cfg->timestamp_bits ||
	    d->header_size != grb__subbuf_header_size(cfg))
		return -EPROTOTYPE;
	if (grb__check_geometry(cfg, d->subbuf_size, d->num_subbuf))
		return -EBADMSG;
	grb__layout(cfg, d->subbuf_size, d->num_subbuf, GRB_JOURNAL_SLOTS,
		    &l);
	if (d->nr_phys != l.nr_phys || d->off_hot != l.off_hot ||
	    d->off_journal != l.off_journal || d->nr_jslots != l.nr_jslots ||
	    d->off_cold != l.off_cold || d->off_ids != l.off_ids ||
	    d->off_meta != l.off_meta || d->off_data != l.off_data ||
	    d->map_size != l.map_size ||
	    (uint64_t)st.st_size != l.map_size)
		return -EBADMSG;
	if (d->nr_bufs != nr || d->buf_index != i ||
	    d->cpu != (cfg->alloc == GRB_ALLOC_PER_CPU ? (int64_t)i : -1) ||
	    (cfg->alloc == GRB_ALLOC_PER_CHANNEL && nr != 1))
		return -EBADMSG;
	return 0;
}

/* The role and the configuration both attach functions refuse before
 * they read anything: -EINVAL, or grb_config_check()'s error. */
static int attach_args(const struct grb_config *cfg,
		       enum grb_attach_role role)
{
	int ret;

	if (role != GRB_ATTACH_READER && role != GRB_ATTACH_WRITER)
		return -EINVAL;
	ret = grb_config_check(cfg);
	if (ret)
		return ret;
	return (cfg->flags & GRB_CONFIG_SHARED) ? 0 : -EINVAL;
}

int grb_channel_attach(const struct grb_config *cfg, const char *client,
		       const int *fds, unsigned int nr_fds,
		       enum grb_attach_role role, struct grb_channel **out)
{
	struct grb_channel *chan;
	struct grb_buf_shm d, d0;
	unsigned int i;
	void *mem;
	int ret;

	if (!out || !fds || !client || nr_fds == 0 ||
	    nr_fds > GRB_SHM_MAX_BUFS)
		return -EINVAL;
	ret = attach_args(cfg, role);
	if (ret)
		return ret;
	ret = read_desc(fds[0], 0, nr_fds, cfg, client, &d0);
	if (ret)
		return ret;
	ret = grb__channel_alloc(cfg, NULL, d0.subbuf_size, d0.num_subbuf,
				 nr_fds, &chan);
	if (ret)
		return ret;
	chan->shared = role == GRB_ATTACH_READER ? GRB_CHAN_READER :
		GRB_CHAN_WRITER;
	chan->shm_fds = (int *)malloc(nr_fds * sizeof(int));
	if (!chan->shm_fds) {
		grb__channel_free(chan, 0);
		return -ENOMEM;
	}
	for (i = 0; i < nr_fds; i++)
		chan->shm_fds[i] = -1;
	for (i = 0; i < nr_fds; i++) {
		ret = i ? read_desc(fds[i], i, nr_fds, cfg, client, &d) : 0;
		if (i == 0)
			d = d0;
		/* Every buffer of a channel has the same geometry, and the
		 * same channel id: buffers of two channels are not one. */
		if (!ret && (d.subbuf_size != d0.subbuf_size ||
			     d.num_subbuf != d0.num_subbuf ||
			     d.chan_id != d0.chan_id))
			ret = -EBADMSG;
		if (ret)
			goto fail;
		chan->shm_fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0);
		if (chan->shm_fds[i] < 0) {
			ret = neg_errno();
			goto fail;
		}
		mem = mmap(NULL, d.map_size, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fds[i], 0);
		if (mem == MAP_FAILED) {
			ret = -ENOMEM;
			goto fail;
		}
		grb__buf_bind(&chan->bufs[i], mem, &d, chan);
	}
	memcpy(chan->name, d0.client, sizeof(d0.client) < sizeof(chan->name) ?
	       sizeof(d0.client) : sizeof(chan->name));
	*out = chan;
	return 0;
fail:
	grb__channel_free(chan, 0);
	return ret;
}

int grb_channel_attach_dir(const struct grb_config *cfg, const char *client,
			   const char *dir, const char *name,
			   enum grb_attach_role role, struct grb_channel **out)
{
	struct grb_buf_shm d;
	char path[4096];
	unsigned int i, nr;
	int *fds, fd, ret;

	if (!dir || !name_ok(name) || !out || !cfg || !client)
		return -EINVAL;
	/* What grb_channel_attach() refuses, refused before any file is
	 * looked at: its errors come first, as it says. */
	ret = attach_args(cfg, role);
	if (ret)
		return ret;
	ret = file_path(path, sizeof(path), dir, name, 0);
	if (ret)
		return ret;
	fd = open_buf_file(path);
	if (fd < 0)
		return fd;
	/* How many files: what buffer 0 says, bounded before use. */
	if (pread(fd, &d, sizeof(d), 0) != (ssize_t)sizeof(d) ||
	    d.magic != GRB_SHM_MAGIC) {
		close(fd);
		return -EBADMSG;
	}
	if (d.version != GRB_SHM_VERSION) {
		close(fd);
		return -EPROTONOSUPPORT;
	}
	nr = d.nr_bufs;
	if (nr == 0 || nr > GRB_SHM_MAX_BUFS) {
		close(fd);
		return -EBADMSG;
	}
	fds = (int *)malloc(nr * sizeof(*fds));
	if (!fds) {
		close(fd);
		return -ENOMEM;
	}
	fds[0] = fd;
	for (i = 1; i < nr; i++) {
		ret = file_path(path, sizeof(path), dir, name, i);
		fds[i] = ret ? ret : open_buf_file(path);
		if (fds[i] < 0) {
			ret = fds[i];
			goto out;
		}
	}
	ret = grb_channel_attach(cfg, client, fds, nr, role, out);
out:
	while (i-- > 0)
		close(fds[i]);
	free(fds);
	return ret;
}

int grb_channel_shm_fd(const struct grb_channel *chan, unsigned int i)
{
	if (!chan || !chan->shm_fds || i >= chan->nr_bufs)
		return -EINVAL;
	return chan->shm_fds[i];
}

/*
 * The peer's credentials.  A socket without a peer (not connected, or
 * not a UNIX socket) reports the invalid uid (uid_t)-1 rather than an
 * error: that is -ENOTCONN, not a peer to refuse with -EPERM.
 */
static int peer_cred(int sock, struct ucred *cred)
{
	socklen_t len = sizeof(*cred);
	int listening = 0;

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, cred, &len) < 0)
		return neg_errno();
	if (cred->uid == (uid_t)-1)
		return -ENOTCONN;
	/* A listening socket has no peer, but the kernel reports its own
	 * credentials for it (and receiving on it fails with EINVAL). */
	len = sizeof(listening);
	if (getsockopt(sock, SOL_SOCKET, SO_ACCEPTCONN, &listening,
		       &len) == 0 && listening)
		return -ENOTCONN;
	return 0;
}

/* Send all of buf, with the descriptors (if any) on its first byte. */
static int send_all(int sock, const void *buf, size_t len, const int *fds,
		    unsigned int nfds)
{
	char cbuf[CMSG_SPACE(SEND_BATCH * sizeof(int))];
	struct iovec iov;
	struct msghdr msg;
	struct cmsghdr *cm;
	ssize_t n;

	while (len) {
		memset(&msg, 0, sizeof(msg));
		iov.iov_base = (void *)buf;
		iov.iov_len = len;
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
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? neg_errno() : -EPIPE;
		buf = (const char *)buf + n;
		len -= (size_t)n;
		nfds = 0;
	}
	return 0;
}

int grb_channel_send(const struct grb_channel *chan, int sock)
{
	struct send_header h;
	struct ucred cred;
	unsigned int i, k;
	char one = 'F';
	int ret;

	if (!chan || !chan->shm_fds)
		return -EINVAL;
	ret = peer_cred(sock, &cred);
	if (ret)
		return ret;
	if (cred.uid != geteuid() &&
	    !(chan->gid >= 0 && cred.gid == (gid_t)chan->gid))
		return -EPERM;
	memset(&h, 0, sizeof(h));
	h.magic = SEND_MAGIC;
	h.version = GRB_SHM_VERSION;
	h.nr_bufs = chan->nr_bufs;
	ret = send_all(sock, &h, sizeof(h), NULL, 0);
	for (i = 0; !ret && i < chan->nr_bufs; i += k) {
		k = chan->nr_bufs - i < SEND_BATCH ? chan->nr_bufs - i :
			SEND_BATCH;
		ret = send_all(sock, &one, 1, chan->shm_fds + i, k);
	}
	return ret;
}

/*
 * Descriptors were cut short (MSG_CTRUNC): either more came on one byte
 * than a batch, which grb_channel_send() never sends, or the kernel had
 * no descriptor number left to install one in (it then installs fewer,
 * or none, and says only this).  Tell the two apart by asking for one
 * now: a well-formed message this process had no room for is attach's
 * -EMFILE or -ENFILE, not a bad message.
 */
static int cut_short(int sock)
{
	int fd = fcntl(sock, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		return errno == EMFILE || errno == ENFILE ? -errno : -EBADMSG;
	close(fd);
	return -EBADMSG;
}

/*
 * Receive exactly len bytes; descriptors that arrive with them are
 * appended to fds (at most want, *got so far).  Descriptors beyond want,
 * or cut short (MSG_CTRUNC), make the message bad, unless they were cut
 * for want of a descriptor number (cut_short()).
 */
static int recv_all(int sock, void *buf, size_t len, int *fds,
		    unsigned int want, unsigned int *got)
{
	char cbuf[CMSG_SPACE(SEND_BATCH * sizeof(int))];
	struct iovec iov;
	struct msghdr msg;
	struct cmsghdr *cm;
	unsigned int n;
	ssize_t r;
	int err = 0;

	while (len) {
		memset(&msg, 0, sizeof(msg));
		iov.iov_base = buf;
		iov.iov_len = len;
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? neg_errno() : -ECONNRESET;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SCM_RIGHTS)
				continue;
			n = (unsigned int)((cm->cmsg_len - CMSG_LEN(0)) /
					   sizeof(int));
			if (*got + n > want) {
				/* Close what we cannot keep. */
				int extra[SEND_BATCH];

				memcpy(extra, CMSG_DATA(cm), n * sizeof(int));
				while (n--)
					close(extra[n]);
				err = -EBADMSG;
				continue;
			}
			memcpy(fds + *got, CMSG_DATA(cm), n * sizeof(int));
			*got += n;
		}
		if ((msg.msg_flags & MSG_CTRUNC) && !err)
			err = cut_short(sock);
		buf = (char *)buf + r;
		len -= (size_t)r;
	}
	return err;
}

int grb_channel_recv(int sock, const struct grb_config *cfg,
		     const char *client, enum grb_attach_role role,
		     struct grb_channel **out)
{
	unsigned int nr, i;
	int *fds, ret;

	if (!out || !cfg || !client)
		return -EINVAL;
	/* What attaching would refuse whatever arrives is refused before
	 * anything is read: the sender's message stays on the socket. */
	ret = attach_args(cfg, role);
	if (ret)
		return ret;
	ret = grb_channel_recv_fds(sock, &fds, &nr);
	if (ret)
		return ret;
	ret = grb_channel_attach(cfg, client, fds, nr, role, out);
	for (i = 0; i < nr; i++)
		close(fds[i]);
	free(fds);
	return ret;
}

int grb_channel_recv_fds(int sock, int **out, unsigned int *nr)
{
	struct send_header h;
	struct ucred cred;
	unsigned int got = 0, i, k;
	int *fds = NULL, ret;
	char one;

	if (!out || !nr)
		return -EINVAL;
	ret = peer_cred(sock, &cred);
	if (ret)
		return ret;
	if (cred.uid != geteuid() && cred.uid != 0)
		return -EPERM;
	ret = recv_all(sock, &h, sizeof(h), NULL, 0, &got);
	if (ret)
		return ret;
	if (h.magic != SEND_MAGIC || h.nr_bufs == 0 ||
	    h.nr_bufs > GRB_SHM_MAX_BUFS)
		return -EBADMSG;
	if (h.version != GRB_SHM_VERSION)
		return -EPROTONOSUPPORT;
	fds = (int *)malloc(h.nr_bufs * sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	for (i = 0; !ret && i < h.nr_bufs; i += k) {
		k = h.nr_bufs - i < SEND_BATCH ? h.nr_bufs - i : SEND_BATCH;
		ret = recv_all(sock, &one, 1, fds, i + k, &got);
		if (!ret && got != i + k)
			ret = -EBADMSG;
	}
	if (!ret) {
		*out = fds;
		*nr = h.nr_bufs;
		return 0;
	}
	while (got-- > 0)
		close(fds[got]);
	free(fds);
	return ret;
}
