/* SPDX-License-Identifier: MIT */
/*
 * clients/ctf/ctf_output.c - the tracer's writer thread: takes every
 * delivered packet and appends it to its stream file in the trace
 * directory, flushes quiet buffers each period, completes the packets
 * of shared buffers that a dead writer process left incomplete, and at
 * stop drains everything and ends each stream with the final loss
 * count.
 *
 * Before a packet is written, two of its fields are made what a CTF
 * reader expects of a stream, which the engine cannot promise because
 * sub-buffers are delivered in commit order, not position order:
 * events_discarded never decreases from one packet to the next (a
 * packet delivered late carries an older count), and the gaps in
 * packet_seq_num are counted as the packets a reader will report lost.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctf_internal.h"

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Write one packet of buffer @i; 0, -EAGAIN (none), -ENODATA (drained). */
static int take_packet(struct grb_ctf *t, unsigned int i)
{
	struct grb_buf *buf = grb_channel_buf(t->chan, i);
	struct ctf_stream *s = &t->streams[i];
	struct grb_reader_subbuf sb;
	struct grb_ctf_stream_state st = s->st;
	struct ctf_packet *h;
	uint64_t gap = 0;
	int ret;

	ret = grb_reader_get_next(buf);
	if (ret)
		return ret;
	ret = grb_reader_held(buf, &sb);
	if (ret)
		goto put;
	/* The reader owns the held sub-buffer until put_next (in place in
	 * discard mode, the swapped-out spare in overwrite mode). */
	h = (struct ctf_packet *)(uintptr_t)sb.data;
	ret = grb_ctf_packet_fixup(h, sb.data_size, &st, &gap);
	if (ret)
		goto put;
	if (!t->write_error) {
		ret = write_all(s->fd, (const char *)sb.data, sb.data_size);
		if (ret) {
			/* End the file at the last packet written whole. */
			if (ftruncate(s->fd, (off_t)s->size) == 0)
				lseek(s->fd, (off_t)s->size, SEEK_SET);
			t->write_error = ret;
		}
	}
	if (!t->write_error) {
		s->st = st;
		s->size += sb.data_size;
		pthread_mutex_lock(&t->stats_lock);
		t->stats.packets++;
		t->stats.packets_discarded += gap;
		t->stats.bytes += sb.data_size;
		pthread_mutex_unlock(&t->stats_lock);
	}
put:
	grb_reader_put_next(buf);
	return ret;
}

int grb_ctf_packet_fixup(void *packet, size_t size,
			 struct grb_ctf_stream_state *s, uint64_t *gap)
{
	struct ctf_packet h;

	if (!packet || !s)
		return -EINVAL;
	if (size < sizeof(h))
		return -EBADMSG;
	/* Copied: the packet is packed and may be at any address. */
	memcpy(&h, packet, sizeof(h));
	if (h.magic != CTF_MAGIC)
		return -EBADMSG;
	if (h.events_discarded < s->last_discarded) {
		h.events_discarded = s->last_discarded;
		memcpy((char *)packet + offsetof(struct ctf_packet,
						 events_discarded),
		       &h.events_discarded, sizeof(h.events_discarded));
	}
	if (gap)
		*gap = s->started && h.packet_seq_num > s->next_seq ?
			h.packet_seq_num - s->next_seq : 0;
	s->last_discarded = h.events_discarded;
	s->next_seq = h.packet_seq_num + 1;
	s->started = 1;
	return 0;
}

int grb_ctf_stream_trailer(const void *last, struct grb_ctf_stream_state *s,
			   uint64_t refused, void *out)
{
	struct ctf_packet h;

	if (!last || !s || !out)
		return -EINVAL;
	memcpy(&h, last, sizeof(h));
	if (!s->started || h.magic != CTF_MAGIC)
		return -EBADMSG;
	if (refused <= s->last_discarded)
		return 0;
	h.timestamp_begin = h.timestamp_end;
	h.content_size = sizeof(h) * 8;
	h.packet_size = sizeof(h) * 8;
	h.packet_seq_num = s->next_seq;
	h.events_discarded = refused;
	memcpy(out, &h, sizeof(h));
	s->last_discarded = refused;
	s->next_seq++;
	return 1;
}

int grb_ctf_stream_leader(const void *first, struct grb_ctf_stream_state *s,
			  void *out)
{
	struct ctf_packet h;

	if (!first || !s || !out)
		return -EINVAL;
	memcpy(&h, first, sizeof(h));
	if (h.magic != CTF_MAGIC)
		return -EBADMSG;
	if (s->started || h.packet_seq_num == 0)
		return 0;
	h.timestamp_end = h.timestamp_begin;
	h.content_size = sizeof(h) * 8;
	h.packet_size = sizeof(h) * 8;
	h.packet_seq_num = 0;
	h.events_discarded = 0;
	memcpy(out, &h, sizeof(h));
	s->started = 1;
	s->next_seq = 1;
	s->last_discarded = 0;
	return 1;
}

static void drain(struct grb_ctf *t)
{
	unsigned int n = grb_channel_nr_bufs(t->chan);

	for (unsigned int i = 0; i < n; i++)
		while (take_packet(t, i) == 0)
			;
}

/*
 * A shared channel's writers may be other processes, and one that died
 * between reserve and commit leaves its sub-buffer incomplete: never
 * delivered, it would end its stream there for good, and every packet
 * after it with it.  This thread is the buffers' reader, so it is the
 * one to complete such a sub-buffer (grb/recover.h: padding over the
 * dead events, counted in lost_dead, which grb_ctf_get_stats() reports
 * as events_dead) once it has stayed stuck for @deadline_ns.  A live
 * writer's sub-buffer is left alone however long it takes.
 */
static int recover_dead(struct grb_ctf *t, uint64_t deadline_ns)
{
	if (!(t->cfg->flags & GRB_CONFIG_SHARED))
		return 0;
	return grb_channel_recover(t->chan, deadline_ns, NULL);
}

/* Drain everything, completing at once what dead writers left: each
 * sub-buffer recovered may let the packets after it through. */
static void drain_all(struct grb_ctf *t)
{
	do
		drain(t);
	while (recover_dead(t, 0) > 0);
}

static uint64_t refused(struct grb_buf *buf)
{
	struct grb_buf_stats st;

	grb_buf_get_stats(buf, &st);
	return st.lost_full + st.lost_wrap + st.lost_big + st.lost_nesting;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * now + period, saturated: the period is any uint64_t (ctf.h sets no
 * bound), and one past INT64_MAX went negative (a flush on every pass, a
 * core kept busy) or overflowed the deadline (a flush every slice).
 */
static int64_t tick_after(int64_t now, uint64_t period)
{
	return period > (uint64_t)(INT64_MAX - now) ? INT64_MAX :
		now + (int64_t)period;
}

static void *writer_main(void *arg)
{
	struct grb_ctf *t = (struct grb_ctf *)arg;
	int64_t slice = t->flush_period_ns / 4 > 20000000 ? 20000000 :
		(int64_t)(t->flush_period_ns / 4);
	int64_t next_tick = tick_after(mono_ns(), t->flush_period_ns), left;
	unsigned int n = grb_channel_nr_bufs(t->chan);

	/* A stop is seen within 20 ms whatever the period (slice). */
	if (!slice)
		slice = 1;
	while (!atomic_load_explicit(&t->stop, memory_order_acquire)) {
		drain(t);
		/* The period is a time, not a count of wake-ups: a busy
		 * buffer's packets wake this thread far more often. */
		left = next_tick - mono_ns();
		grb_channel_wait(t->chan, NULL,
				 left < 0 ? 0 : left < slice ? left : slice);
		if (mono_ns() >= next_tick) {
			grb_channel_tick(t->chan, GRB_TICK_FLUSH);
			recover_dead(t, t->flush_period_ns);
			next_tick = tick_after(mono_ns(), t->flush_period_ns);
		}
	}
	/* Writers are done (grb_ctf_stop()'s contract), or dead. */
	grb_channel_flush(t->chan, GRB_FLUSH_ACTIVE);
	drain_all(t);
	/*
	 * A stream whose last packet does not carry every refused event
	 * (they came after its last delivery) gets one more, header only,
	 * so that a reader reports them all.
	 */
	for (unsigned int i = 0; i < n; i++) {
		struct grb_buf *buf = grb_channel_buf(t->chan, i);

		if (refused(buf) > t->streams[i].st.last_discarded &&
		    grb_buf_flush(buf, GRB_FLUSH_EMPTY) == 0)
			while (take_packet(t, i) == 0)
				;
	}
	grb_channel_finalize(t->chan);
	drain_all(t);
	return NULL;
}

static void close_streams(struct grb_ctf *t, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (t->streams[i].fd >= 0)
			close(t->streams[i].fd);
		grb_reader_release(grb_channel_buf(t->chan, i));
	}
}

int grb__ctf_output_start(struct grb_ctf *t)
{
	unsigned int n = grb_channel_nr_bufs(t->chan), i;
	char path[4200];
	int ret = 0;

	t->streams = (struct ctf_stream *)calloc(n, sizeof(*t->streams));
	if (!t->streams)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct grb_buf *buf = grb_channel_buf(t->chan, i);
		int cpu = grb_buf_cpu(buf);

		snprintf(path, sizeof(path), "%s/%s_%d", t->trace_dir, t->name,
			 cpu < 0 ? 0 : cpu);
		t->streams[i].fd = open(path, O_WRONLY | O_CREAT | O_EXCL |
					O_CLOEXEC, 0644);
		if (t->streams[i].fd < 0) {
			ret = -errno;
			break;
		}
		ret = grb_reader_open(buf);
		if (ret) {
			close(t->streams[i].fd);
			unlink(path);
			break;
		}
	}
	if (!ret) {
		/*
		 * The empty first packets (grb_ctf_create()), written out
		 * before any writer can come: in overwrite mode writers that
		 * start at once could otherwise lap them before the thread
		 * runs, and the first packet a reader sees would carry a
		 * non-zero events_discarded it cannot count from.
		 */
		drain(t);
		ret = -pthread_create(&t->thread, NULL, writer_main, t);
		if (!ret) {
			t->thread_started = 1;
			return 0;
		}
	}
	/* Undo: the files this call created. */
	for (unsigned int j = 0; j < i; j++) {
		int cpu = grb_buf_cpu(grb_channel_buf(t->chan, j));

		snprintf(path, sizeof(path), "%s/%s_%d", t->trace_dir, t->name,
			 cpu < 0 ? 0 : cpu);
		unlink(path);
	}
	close_streams(t, i);
	free(t->streams);
	t->streams = NULL;
	return ret;
}

int grb__ctf_output_stop(struct grb_ctf *t)
{
	atomic_store_explicit(&t->stop, 1, memory_order_release);
	pthread_join(t->thread, NULL);
	t->thread_started = 0;
	close_streams(t, grb_channel_nr_bufs(t->chan));
	return t->write_error;
}
