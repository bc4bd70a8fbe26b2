/* SPDX-License-Identifier: MIT */
/*
 * tools/consumerd/drain.c - grb-consumerd's consumer thread: one per
 * channel, it waits on the channel's futex (grb_channel_wait), splices
 * every delivered sub-buffer into its stream file (a CTF channel's
 * packets are written one by one, each fixed up first, and the metadata
 * copied whenever the tracer adds to it), and runs the flush timer and
 * the recovery of dead writers from this side of the shared mapping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "consumerd.h"

int64_t cd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}


/* Write all of p, through EINTR and short writes.  Return: 0 or -errno. */
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

/*
 * A CTF buffer's delivered packets, written one by one: each is made
 * what a CTF reader expects of the next packet of its stream first
 * (grb_ctf_packet_fixup()), which splice could not do.
 */
static int drain_ctf(struct chan_state *cs, unsigned int i)
{
	struct grb_buf *buf = grb_channel_buf(cs->chan, i);
	struct grb_reader_subbuf sb;
	char lead[GRB_CTF_PACKET_HEADER_SIZE];
	int ret;

	while ((ret = grb_reader_get_next(buf)) == 0) {
		ret = grb_reader_held(buf, &sb);
		/* A stream that starts after packets were overwritten (or
		 * taken by another consumer): a leader first, so that a
		 * reader reports them (grb_ctf_stream_leader()). */
		if (!ret && grb_ctf_stream_leader(sb.data, &cs->st[i].st,
						  lead) == 1) {
			ret = write_all(cs->out[i], lead, sizeof(lead));
			if (!ret)
				cs->bytes += sizeof(lead);
		}
		if (!ret)
			ret = grb_ctf_packet_fixup((void *)(uintptr_t)sb.data,
						   sb.data_size, &cs->st[i].st,
						   NULL);
		if (!ret)
			ret = write_all(cs->out[i], (const char *)sb.data,
					sb.data_size);
		if (!ret) {
			memcpy(cs->st[i].last, sb.data, sizeof(cs->st[i].last));
			cs->bytes += sb.data_size;
		}
		grb_reader_put_next(buf);
		if (ret)
			return ret;
	}
	return ret == -EAGAIN ? 0 : ret;
}

/*
 * The end of a CTF trace: a stream whose buffer refused events after its
 * last packet closed (full, waiting for us) gets one more packet, header
 * only, that carries the final count (grb_ctf_stream_trailer()), so that
 * a CTF reader reports every refused event.
 */
static int end_ctf(struct chan_state *cs)
{
	unsigned char trailer[GRB_CTF_PACKET_HEADER_SIZE];
	unsigned int i, n = grb_channel_nr_bufs(cs->chan);
	struct grb_buf_stats st;
	int ret, err = 0;

	for (i = 0; i < n; i++) {
		grb_buf_get_stats(grb_channel_buf(cs->chan, i), &st);
		ret = grb_ctf_stream_trailer(cs->st[i].last, &cs->st[i].st,
					     st.lost_full + st.lost_wrap +
					     st.lost_big + st.lost_nesting,
					     trailer);
		if (ret == 1) {
			ret = write_all(cs->out[i], (const char *)trailer,
					sizeof(trailer));
			if (!ret)
				cs->bytes += sizeof(trailer);
		}
		/* -EBADMSG: no packet came out of this buffer at all. */
		if (ret < 0 && ret != -EBADMSG && !err)
			err = ret;
	}
	atomic_store(&cs->bytes_shown, cs->bytes);
	return err;
}

/* Copy the producer's metadata into the trace when it changed (written
 * next to it, then renamed: a reader never sees half of it). */
int cd_copy_metadata(struct chan_state *cs)
{
	char path[4300], tmp[4300], *text;
	struct stat st;
	ssize_t n;
	int in, out, ret = 0;

	if (stat(cs->meta_src, &st))
		return -errno;
	if (st.st_size == cs->meta_size &&
	    st.st_mtim.tv_sec == cs->meta_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == cs->meta_mtime.tv_nsec)
		return 0;
	if (st.st_size <= 0 || st.st_size > (64 << 20))
		return -EBADMSG;
	text = (char *)malloc((size_t)st.st_size);
	if (!text)
		return -ENOMEM;
	in = open(cs->meta_src, O_RDONLY | O_CLOEXEC);
	n = in < 0 ? -1 : read(in, text, (size_t)st.st_size);
	if (in >= 0)
		close(in);
	if (n <= 0) {
		free(text);
		return n < 0 ? -errno : -EBADMSG;
	}
	/* Known to this process's decoder (recovery walks the packets). */
	ret = grb_ctf_metadata_load(text, (size_t)n, NULL);
	snprintf(path, sizeof(path), "%s/metadata", cs->dir);
	snprintf(tmp, sizeof(tmp), "%s/.metadata.tmp", cs->dir);
	out = ret ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			      0600);
	if (!ret && out < 0)
		ret = -errno;
	if (!ret)
		ret = write_all(out, text, (size_t)n);
	if (out >= 0 && close(out) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (!ret) {
		cs->meta_size = st.st_size;
		cs->meta_mtime = st.st_mtim;
	}
	free(text);
	return ret;
}

/* Splice what is delivered now from every buffer.  Return: 0, or the
 * first error other than "nothing there". */
static int drain(struct chan_state *cs)
{
	unsigned int i, n = grb_channel_nr_bufs(cs->chan);
	uint64_t b;
	int ret, err = 0;

	if (cs->ctf) {
		/* Classes registered since the last look, first. */
		err = cd_copy_metadata(cs);
		for (i = 0; i < n; i++) {
			ret = drain_ctf(cs, i);
			if (ret && ret != -ENODATA && !err)
				err = ret;
		}
		atomic_store(&cs->bytes_shown, cs->bytes);
		return err;
	}
	for (i = 0; i < n; i++) {
		ret = grb_buf_splice(grb_channel_buf(cs->chan, i), cs->out[i],
				     NULL, 0, &b);
		cs->bytes += b;
		if (ret && ret != -ENODATA && !err)
			err = ret;
	}
	atomic_store(&cs->bytes_shown, cs->bytes);
	return err;
}

/*
 * After the producer went away: complete what dead writers left.  Its
 * socket closes while the kernel tears the process down, a moment before
 * the process counts as dead (a zombie), so a sub-buffer it left is
 * retried for up to two seconds; one a live writer (another process)
 * still holds is left to it.  Each recovery may unblock the next
 * sub-buffer, and what was recovered is drained as it comes.
 */
static void settle(struct chan_state *cs)
{
	struct grb_recover_info info;
	int64_t end = cd_now_ns() + 2000000000;
	int ret;

	for (;;) {
		ret = grb_channel_recover(cs->chan, 0, &info);
		/* What live writers still hold when we give up. */
		cs->left = ret == 0 ? info.waiting : 0;
		if (ret < 0 || (ret == 0 && info.waiting == 0))
			return;
		if (ret == 0 && cd_now_ns() >= end)
			return;
		if (ret == 0)
			usleep(10000);
		if (drain(cs))
			return;
	}
}

/* now + the flush period, saturated: -t accepts periods of centuries,
 * and an overflowed deadline was always past (a flush on every pass, a
 * CPU kept busy). */
static int64_t tick_after(const struct chan_state *cs, int64_t now)
{
	return cs->tick_ns > (uint64_t)(INT64_MAX - now) ? INT64_MAX :
		now + (int64_t)cs->tick_ns;
}

void *cd_consume(void *arg)
{
	struct chan_state *cs = (struct chan_state *)arg;
	struct grb_watermark wm = { 1, 0 };
	int64_t next_tick = tick_after(cs, cd_now_ns()), left;
	int ret;

	for (;;) {
		/* Set by the main thread: producer gone, or a signal (the
		 * handler's flag is the main thread's alone). */
		if (atomic_load(&cs->gone))
			break;
		left = next_tick - cd_now_ns();
		ret = grb_channel_wait(cs->chan, &wm, left > 0 ? left : 0);
		if (ret == -ENODATA)
			break;          /* finalized and drained */
		cs->err = drain(cs);
		if (cs->err)
			break;
		if (cd_now_ns() >= next_tick) {
			grb_channel_tick(cs->chan, GRB_TICK_FLUSH);
			grb_channel_recover(cs->chan, cs->recover_ns, NULL);
			next_tick = tick_after(cs, cd_now_ns());
		}
	}
	/*
	 * The producer is gone or we were asked to stop: close what is open
	 * from this side, complete what dead writers left (at once: a
	 * sub-buffer a live writer holds is left alone all the same), and
	 * take everything out.  A recovered sub-buffer may make the next
	 * one deliverable, hence the loop.
	 */
	grb_channel_flush(cs->chan, GRB_FLUSH_ACTIVE);
	settle(cs);
	ret = drain(cs);
	if (!cs->err)
		cs->err = ret;
	if (cs->ctf && !cs->err)
		cs->err = end_ctf(cs);
	if (cs->err)
		fprintf(stderr, "grb-consumerd: %s: writing: %s\n", cs->name,
			strerror(-cs->err));
	atomic_store(&cs->finished, 1);
	return NULL;
}

void cd_print_counts(FILE *f, const struct chan_state *cs,
		     const char *prefix)
{
	struct grb_buf_stats st;

	grb_channel_get_stats(cs->chan, &st);
	fprintf(f, "%schannel %s: %llu records read, %llu bytes, lost full=%llu"
		" wrap=%llu big=%llu nesting=%llu overwritten=%llu dead=%llu,"
		" %llu sub-buffers recovered\n", prefix,
		cs->name, (unsigned long long)st.read,
		(unsigned long long)atomic_load(&cs->bytes_shown),
		(unsigned long long)st.lost_full,
		(unsigned long long)st.lost_wrap,
		(unsigned long long)st.lost_big,
		(unsigned long long)st.lost_nesting,
		(unsigned long long)st.overwritten,
		(unsigned long long)st.lost_dead,
		(unsigned long long)st.recovered);
}

