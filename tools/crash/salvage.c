/* SPDX-License-Identifier: MIT */
/*
 * tools/crash/salvage.c - rebuild a trace from a dead producer's
 * shared-memory files (see salvage.h).
 *
 * Everything read from the files is untrusted: the library's attach
 * checks the descriptions, its reader checks indexes and sizes, and
 * this file checks every packet header and decodes every event within
 * the bytes the reader says are valid.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE            /* O_CLOEXEC, memmem in the decoder */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grb/basic.h"
#include "grb/ctf.h"
#include "grb/grb.h"
#include "salvage.h"

#define CTF_MAGIC 0xC1FC1FC1u
#define CTF_HEADER 84u               /* packet header + context */
#define META_MAX (64u << 20)         /* metadata bigger than this: damaged */

/* Field offsets in a CTF packet (clients/ctf/ctf_internal.h). */
#define OFF_CONTENT   48
#define OFF_PACKET    56

struct out_stream {
	int fd;
	struct grb_ctf_stream_state st;
	/* The last packet's header, for the trailer (end_ctf()). */
	unsigned char last[GRB_CTF_PACKET_HEADER_SIZE];
};

struct job {
	const struct salvage_opts *o;
	struct salvage_report *r;
	char *err;
	size_t errlen;
	struct grb_channel *chan;
	const struct grb_config *cfg;
	int ctf;
	struct out_stream *out;
	char *pkt;                   /* a packet being rebuilt */
	size_t pkt_cap;
};

static int fail(struct job *j, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(j->err, j->errlen, fmt, ap);
	va_end(ap);
	return ret;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Which client wrote these files: try each configuration of each. */
static int attach(struct job *j)
{
	static const enum grb_alloc allocs[] = { GRB_ALLOC_PER_CPU,
						 GRB_ALLOC_PER_CHANNEL };
	static const enum grb_mode modes[] = { GRB_MODE_DISCARD,
					       GRB_MODE_OVERWRITE };
	const struct salvage_opts *o = j->o;
	int ret = -EPROTOTYPE;

	for (int a = 0; a < 2; a++)
		for (int m = 0; m < 2; m++)
			for (int c = 0; c < 2; c++) {
				const struct grb_config *cfg = grb_ctf_config(
					allocs[a], modes[m],
					(enum grb_ctf_clock)c);

				ret = grb_channel_attach_dir(cfg, GRB_CTF_CLIENT,
					o->shm_dir, o->name, GRB_ATTACH_READER,
					&j->chan);
				if (ret != -EPROTOTYPE) {
					j->cfg = cfg;
					j->ctf = 1;
					return ret;
				}
			}
	for (int a = 0; a < 2; a++)
		for (int m = 0; m < 2; m++)
			for (int c = 0; c < 2; c++) {
				const struct grb_config *cfg = grb_basic_config(
					allocs[a], modes[m], c);

				ret = grb_channel_attach_dir(cfg,
					GRB_BASIC_CLIENT, o->shm_dir, o->name,
					GRB_ATTACH_READER, &j->chan);
				if (ret != -EPROTOTYPE) {
					j->cfg = cfg;
					return ret;
				}
			}
	return ret;
}

/* Read NAME.metadata, teach the decoder its layouts, copy it out. */
static int load_metadata(struct job *j)
{
	char path[4200];
	struct stat st;
	char *text = NULL;
	size_t got = 0;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s.metadata", j->o->shm_dir,
		 j->o->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(j, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || st.st_size <= 0 || st.st_size > META_MAX) {
		close(fd);
		return fail(j, -EBADMSG, "%s: not a metadata file", path);
	}
	text = (char *)malloc((size_t)st.st_size);
	if (!text) {
		close(fd);
		return fail(j, -ENOMEM, "out of memory");
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	ret = grb_ctf_metadata_load(text, got, NULL);
	if (ret) {
		free(text);
		return fail(j, ret, "%s: not metadata grb's CTF client wrote",
			    path);
	}
	snprintf(path, sizeof(path), "%s/metadata", j->o->outdir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = fail(j, -errno, "%s: %s", path, errno == EEXIST ?
			   "exists (grb-crash does not overwrite a trace)" :
			   strerror(errno));
	} else {
		ret = write_all(fd, text, got);
		if (close(fd) && !ret)
			ret = -errno;
		if (ret)
			fail(j, ret, "%s: %s", path, strerror(-ret));
	}
	free(text);
	return ret;
}

/* The stream file of buffer @i. */
static void out_path(const struct job *j, unsigned int i, char *path,
		     size_t len)
{
	int cpu = grb_buf_cpu(grb_channel_buf(j->chan, i));

	if (j->ctf)
		snprintf(path, len, "%s/%s_%d", j->o->outdir, j->o->name,
			 cpu < 0 ? 0 : cpu);
	else
		snprintf(path, len, "%s/stream_%u", j->o->outdir, i);
}

/*
 * Create every stream file (never one that exists: O_EXCL).  When one
 * cannot be, those made here are removed again: nothing was read from
 * the buffers yet, so a run that fails here leaves no output behind.
 */
static int open_outputs(struct job *j)
{
	unsigned int n = grb_channel_nr_bufs(j->chan);
	char path[4200];
	int ret;

	j->out = (struct out_stream *)calloc(n, sizeof(*j->out));
	if (!j->out)
		return fail(j, -ENOMEM, "out of memory");
	for (unsigned int i = 0; i < n; i++)
		j->out[i].fd = -1;
	for (unsigned int i = 0; i < n; i++) {
		out_path(j, i, path, sizeof(path));
		j->out[i].fd = open(path, O_WRONLY | O_CREAT | O_EXCL |
				    O_CLOEXEC, 0644);
		if (j->out[i].fd >= 0)
			continue;
		ret = fail(j, -errno, "%s: %s", path, errno == EEXIST ?
			   "exists (grb-crash does not overwrite a trace)" :
			   strerror(errno));
		while (i-- > 0) {
			close(j->out[i].fd);
			j->out[i].fd = -1;
			out_path(j, i, path, sizeof(path));
			unlink(path);
		}
		return ret;
	}
	return 0;
}

/*
 * One CTF packet: keep the header, copy the events that decode, drop
 * padding (unless asked not to), and make the sizes say so.  A packet
 * whose header is not CTF, or whose events stop decoding, is cut where
 * the good bytes end and counted as damaged.
 */
static int put_ctf(struct job *j, unsigned int i, const char *data,
		   size_t size)
{
	struct out_stream *s = &j->out[i];
	char lead[GRB_CTF_PACKET_HEADER_SIZE];
	size_t off = CTF_HEADER, len = CTF_HEADER;
	uint64_t bits;
	uint32_t magic;
	int damaged = 0;

	if (size < CTF_HEADER) {
		j->r->damaged++;
		return 0;
	}
	memcpy(&magic, data, sizeof(magic));
	if (magic != CTF_MAGIC) {
		j->r->damaged++;
		return 0;
	}
	if (size > j->pkt_cap) {
		char *p = (char *)realloc(j->pkt, size);

		if (!p)
			return fail(j, -ENOMEM, "out of memory");
		j->pkt = p;
		j->pkt_cap = size;
	}
	memcpy(j->pkt, data, CTF_HEADER);
	while (off < size) {
		struct grb_record rec;

		if (j->cfg->cb.record_decode(j->cfg, data, off, size, &rec) ||
		    rec.next <= off || rec.next > size) {
			damaged = 1;
			break;
		}
		if ((rec.rflags & GRB_RFLAG_PADDING) && !j->o->keep_padding) {
			j->r->padding++;
		} else {
			memcpy(j->pkt + len, data + off, rec.next - off);
			len += rec.next - off;
			if (!(rec.rflags & GRB_RFLAG_PADDING))
				j->r->events++;
		}
		off = rec.next;
	}
	j->r->damaged += (uint64_t)damaged;
	bits = (uint64_t)len * 8;
	memcpy(j->pkt + OFF_CONTENT, &bits, sizeof(bits));
	memcpy(j->pkt + OFF_PACKET, &bits, sizeof(bits));
	/* A stream that starts after packets were overwritten: a leader
	 * first, so that a reader reports them (grb_ctf_stream_leader()). */
	if (grb_ctf_stream_leader(j->pkt, &s->st, lead) == 1) {
		int ret = write_all(s->fd, lead, sizeof(lead));

		if (ret)
			return ret;
		j->r->packets++;
		j->r->bytes += sizeof(lead);
	}
	/* As a live consumer writes it: no decreasing loss count. */
	grb_ctf_packet_fixup(j->pkt, len, &s->st, NULL);
	memcpy(s->last, j->pkt, sizeof(s->last));
	j->r->packets++;
	j->r->bytes += len;
	return write_all(s->fd, j->pkt, len);
}

static int put_packet(struct job *j, unsigned int i, struct grb_buf *buf)
{
	struct grb_reader_subbuf sb;
	int ret = grb_reader_held(buf, &sb);

	if (ret)
		return ret;
	if (j->ctf)
		return put_ctf(j, i, (const char *)sb.data, sb.data_size);
	j->r->packets++;
	j->r->events += sb.records;
	j->r->bytes += sb.data_size;
	return write_all(j->out[i].fd, (const char *)sb.data, sb.data_size);
}

/*
 * CTF: the stream of buffer @i ends with a header-only packet when the
 * buffer refused events after its last packet closed, as a live
 * consumer's does (grb_ctf_stream_trailer()).
 */
static int end_ctf(struct job *j, unsigned int i)
{
	unsigned char trailer[GRB_CTF_PACKET_HEADER_SIZE];
	struct out_stream *s = &j->out[i];
	struct grb_buf_stats st;
	int ret;

	grb_buf_get_stats(grb_channel_buf(j->chan, i), &st);
	ret = grb_ctf_stream_trailer(s->last, &s->st, st.lost_full +
				     st.lost_wrap + st.lost_big +
				     st.lost_nesting, trailer);
	if (ret != 1)
		return 0;       /* none needed, or no packet at all */
	j->r->packets++;
	j->r->bytes += sizeof(trailer);
	return write_all(s->fd, (const char *)trailer, sizeof(trailer));
}

/* Complete and write out everything of buffer @i. */
static int drain_buf(struct job *j, unsigned int i)
{
	struct grb_buf *buf = grb_channel_buf(j->chan, i);
	struct grb_recover_info info;
	struct grb_reader_subbuf sb;
	int ret;

	ret = grb_reader_takeover(buf);
	if (ret < 0)
		return fail(j, ret, "buffer %u: %s", i, grb_strerror(ret));
	/* What the dead reader held is the oldest sub-buffer: first. */
	if (grb_reader_held(buf, &sb) == 0) {
		ret = put_packet(j, i, buf);
		/* Not written: stays held, for the next run to take over. */
		if (ret)
			return fail(j, ret, "buffer %u: writing: %s", i,
				    strerror(-ret));
		grb_reader_put_next(buf);
		grb_reader_put_subbuf(buf);
	}
	/* Closed sub-buffers dead writers left, then the open one. */
	grb_buf_recover(buf, 0, &info);
	j->r->ambiguous += info.ambiguous;
	grb_buf_flush(buf, GRB_FLUSH_ACTIVE);
	grb_buf_recover(buf, 0, &info);
	j->r->ambiguous += info.ambiguous;
	j->r->waiting += info.waiting;
	for (;;) {
		ret = grb_reader_get_next(buf);
		if (ret == -EAGAIN || ret == -ENODATA)
			break;
		if (ret)
			return fail(j, ret, "buffer %u: %s", i,
				    grb_strerror(ret));
		ret = put_packet(j, i, buf);
		/* Not written: stays held, for the next run to take over. */
		if (ret)
			return fail(j, ret, "buffer %u: writing: %s", i,
				    strerror(-ret));
		grb_reader_put_next(buf);
	}
	ret = j->ctf ? end_ctf(j, i) : 0;
	if (ret)
		return fail(j, ret, "buffer %u: %s", i, strerror(-ret));
	return 0;
}

int salvage(const struct salvage_opts *o, struct salvage_report *r,
	    char *err, size_t errlen)
{
	struct job j;
	struct grb_buf_stats st;
	unsigned int n = 0;
	int ret, made = 0;

	memset(r, 0, sizeof(*r));
	memset(&j, 0, sizeof(j));
	j.o = o;
	j.r = r;
	j.err = err;
	j.errlen = errlen;
	err[0] = 0;
	ret = attach(&j);
	if (ret) {
		fail(&j, ret, "%s/%s: %s (%d)", o->shm_dir, o->name,
		     ret == -EPROTOTYPE ? "not a grb-ctf or grb-basic channel"
		     : ret == -EBADMSG ? "not the files of a grb channel, or "
		     "damaged" : strerror(-ret), ret);
		return ret;
	}
	snprintf(r->client, sizeof(r->client), "%s",
		 j.ctf ? GRB_CTF_CLIENT : GRB_BASIC_CLIENT);
	n = grb_channel_nr_bufs(j.chan);
	r->nr_bufs = n;
	made = mkdir(o->outdir, 0755) == 0;
	if (!made && errno != EEXIST) {
		ret = fail(&j, -errno, "%s: %s", o->outdir, strerror(errno));
		goto out;
	}
	if (j.ctf) {
		ret = load_metadata(&j);
		if (ret)
			goto out;
	}
	ret = open_outputs(&j);
	if (ret && j.ctf) {
		/* The metadata load_metadata() made: no trace after all. */
		char path[4200];

		snprintf(path, sizeof(path), "%s/metadata", o->outdir);
		unlink(path);
	}
	if (ret)
		goto out;
	for (unsigned int i = 0; i < n && !ret; i++)
		ret = drain_buf(&j, i);
	if (!ret && !grb_channel_get_stats(j.chan, &st)) {
		r->dead = st.lost_dead;
		r->recovered = st.recovered;
	}
out:
	for (unsigned int i = 0; j.out && i < n; i++)
		if (j.out[i].fd >= 0)
			close(j.out[i].fd);
	free(j.out);
	free(j.pkt);
	grb_channel_destroy(j.chan);
	/* A run that failed leaves no OUTDIR of its own; one that wrote
	 * packets before failing keeps them (rmdir() refuses). */
	if (ret && made)
		rmdir(o->outdir);
	return ret;
}
