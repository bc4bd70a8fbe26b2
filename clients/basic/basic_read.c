/* SPDX-License-Identifier: MIT */
/*
 * clients/basic/basic_read.c - the basic client's read side: record
 * decoding, consume and peek per buffer, counts and reset.
 */
#include <stddef.h>
#include <string.h>

#include "basic_internal.h"

int grb__basic_record_decode(const struct grb_config *cfg, const void *subbuf,
			     size_t offset, size_t data_size,
			     struct grb_record *rec)
{
	const char *p = (const char *)subbuf;
	size_t at = offset + grb_offset_align(offset, GRB_BASIC_ALIGN);
	uint32_t word, low;
	uint64_t ts;

	(void)cfg;
	if (at + 2 * sizeof(uint32_t) > data_size)
		return -EINVAL;
	memcpy(&word, p + at, sizeof(word));
	rec->offset = at;
	rec->rflags = 0;
	if (word == GRB_BASIC_PAD_WORD) {
		/* Padding (basic_record_pad()): its span follows. */
		memcpy(&low, p + at + sizeof(uint32_t), sizeof(low));
		if (low < 2 * sizeof(uint32_t) || low > data_size - at)
			return -EINVAL;
		rec->rflags = GRB_RFLAG_PADDING;
		rec->timestamp = 0;
		rec->header_len = 2 * sizeof(uint32_t);
		rec->payload_off = at + rec->header_len;
		rec->payload_len = low - rec->header_len;
		rec->next = at + low;
		return 0;
	}
	if (word & GRB_BASIC_FULL_TS) {
		if (at + sizeof(uint32_t) + sizeof(uint64_t) > data_size)
			return -EINVAL;
		memcpy(&ts, p + at + sizeof(uint32_t), sizeof(ts));
		rec->header_len = sizeof(uint32_t) + sizeof(uint64_t);
		rec->rflags = GRB_RFLAG_FULL_TIMESTAMP;
	} else {
		memcpy(&low, p + at + sizeof(uint32_t), sizeof(low));
		ts = low;
		rec->header_len = 2 * sizeof(uint32_t);
	}
	rec->timestamp = ts;
	rec->payload_off = at + rec->header_len;
	rec->payload_len = word & GRB_BASIC_LEN_MASK;
	if (rec->payload_len > data_size - rec->payload_off)
		return -EINVAL;
	rec->next = rec->payload_off + rec->payload_len;
	return 0;
}

/* Rebuild a full timestamp from its low 32 bits and the previous one. */
static uint64_t expand_ts(uint64_t prev, const struct grb_record *rec)
{
	uint64_t ts;

	if (rec->rflags & GRB_RFLAG_FULL_TIMESTAMP)
		return rec->timestamp;
	ts = (prev & ~UINT64_C(0xffffffff)) | rec->timestamp;
	if (ts < prev)
		ts += UINT64_C(1) << 32;
	return ts;
}

int grb_basic_decode(const void *subbuf, size_t data_size, size_t offset,
		     uint64_t prev_ts, struct grb_basic_event *ev,
		     size_t *payload_off, size_t *next)
{
	const size_t hsize = sizeof(struct grb_basic_subbuf_header);
	struct grb_basic_subbuf_header h;
	struct grb_record rec;

	if (!subbuf || !ev || !next || data_size < hsize || offset < hsize)
		return -EINVAL;
	if (offset >= data_size)
		return -ENODATA;
	/* The bytes may come from a file: nothing in them is trusted. */
	memcpy(&h, subbuf, hsize);
	if (h.magic != GRB_BASIC_MAGIC)
		return -EBADMSG;
	for (;;) {
		if (grb__basic_record_decode(NULL, subbuf, offset, data_size,
					     &rec))
			return -EBADMSG;
		if (!(rec.rflags & GRB_RFLAG_PADDING))
			break;
		/* A dead writer's bytes, skipped (grb/recover.h).  When
		 * they held the sub-buffer's first record, the records after
		 * it compressed their timestamps against the opener's, which
		 * the header keeps. */
		offset = rec.next;
		if (offset >= data_size)
			return -ENODATA;
		if (prev_ts == 0)
			prev_ts = h.ts_begin;
	}
	if (!(rec.rflags & GRB_RFLAG_FULL_TIMESTAMP) && prev_ts == 0)
		return -EBADMSG;
	ev->timestamp = expand_ts(prev_ts, &rec);
	ev->len = rec.payload_len;
	ev->cpu = h.cpu;
	if (payload_off)
		*payload_off = rec.payload_off;
	*next = rec.next;
	return 0;
}

/*
 * Nothing says where the next record starts: give the rest of the
 * sub-buffer up, count its records, and report the damage once.  The next
 * call reads on from the next sub-buffer.  (Live, the sub-buffer is not
 * held: it is skipped when it is delivered.)
 */
static int cursor_corrupt(struct grb_buf *buf, struct grb_basic_cursor *cur)
{
	struct grb_reader_subbuf sb;

	if (cur->held) {
		grb_reader_held(buf, &sb);
		cur->corrupt += sb.records - cur->taken;
		grb_reader_put_next(buf);
		cur->held = 0;
	} else {
		/*
		 * Read live: skip the rest now, and count now what is
		 * committed of it (grb/basic.h: counted with the -EIO); the
		 * records committed after it are counted as it is delivered
		 * (cursor_take()) or reset (grb_basic_reset()).  taken then
		 * covers what is counted.
		 */
		if (grb_reader_live(buf, &sb) == 0 && sb.pos == cur->live_pos &&
		    sb.records > cur->taken) {
			cur->corrupt += sb.records - cur->taken;
			cur->taken = sb.records;
		}
		cur->damaged = 1;
		cur->next = cur->data_size;
		cur->live = 0;
	}
	return -EIO;
}

/* Take the next delivered sub-buffer: resume it when it was read live. */
static void cursor_take(struct grb_buf *buf, struct grb_basic_cursor *cur)
{
	struct grb_reader_subbuf sb;

	grb_reader_held(buf, &sb);
	cur->held = 1;
	cur->data = (const char *)sb.data;
	cur->data_size = sb.data_size;
	if (sb.pos != cur->live_pos) {
		cur->taken = 0;
		cur->next = grb_reader_first_record(buf);
		/* Each sub-buffer decodes on its own (grb_basic_decode()). */
		cur->prev_ts = 0;
	} else if (cur->damaged) {
		/* Damaged while read live: its rest is skipped and counted. */
		cur->corrupt += sb.records - cur->taken;
		cur->next = cur->data_size;
	}
	cur->damaged = 0;
	cur->live_pos = UINT64_MAX;
}

/*
 * Discard mode, nothing delivered: the committed prefix of the open
 * sub-buffer (grb_reader_live()), from where the last live read stopped.
 * Return: 0 when it has a record not read yet, else -EAGAIN (or the
 * reader's -ENODATA).
 */
static int cursor_live(struct grb_buf *buf, struct grb_basic_cursor *cur)
{
	struct grb_reader_subbuf sb;
	int ret = grb_reader_live(buf, &sb);

	if (ret)
		return ret;
	if (sb.pos != cur->live_pos) {
		cur->live_pos = sb.pos;
		cur->taken = 0;
		cur->damaged = 0;
		cur->next = grb_reader_first_record(buf);
		cur->prev_ts = 0;
	}
	cur->data = (const char *)sb.data;
	cur->data_size = sb.data_size;
	cur->live = !cur->damaged && cur->next < cur->data_size;
	return cur->live ? 0 : -EAGAIN;
}

/* Make cursor point at a record; take sub-buffers as needed. */
static int cursor_fill(struct grb_basic *b, struct grb_buf *buf,
		       struct grb_basic_cursor *cur, struct grb_record *rec)
{
	int ret;

	for (;;) {
		if (!cur->held && !cur->live) {
			ret = grb_reader_get_next(buf);
			if (ret == 0)
				cursor_take(buf, cur);
			else if (ret == -EAGAIN &&
				 b->cfg->mode == GRB_MODE_DISCARD)
				ret = cursor_live(buf, cur);
			if (ret)
				return ret;
		}
		if (cur->next < cur->data_size) {
			ret = grb__basic_record_decode(b->cfg, cur->data,
						       cur->next,
						       cur->data_size, rec);
			if (ret == 0 && (rec->rflags & GRB_RFLAG_PADDING)) {
				/* A dead writer's bytes (grb/recover.h); as
				 * in grb_basic_decode() for the timestamp. */
				cur->next = rec->next;
				if (cur->prev_ts == 0)
					memcpy(&cur->prev_ts, cur->data +
					       offsetof(struct
					       grb_basic_subbuf_header,
					       ts_begin), sizeof(uint64_t));
				continue;
			}
			if (ret == 0)
				return 0;
			return cursor_corrupt(buf, cur);
		}
		if (cur->held) {
			grb_reader_put_next(buf);
			cur->held = 0;
		}
		cur->live = 0;
	}
}

static int basic_read(struct grb_basic *b, unsigned int cpu,
		      struct grb_basic_event *ev, void *dst, size_t cap,
		      int consume)
{
	struct grb_basic_cursor *cur;
	struct grb_record rec;
	struct grb_buf *buf;
	int ret;

	if (!b || !ev || cpu >= grb_channel_nr_bufs(b->chan))
		return -EINVAL;
	if (b->external_reader)
		return -EPERM;
	buf = grb_channel_buf(b->chan, cpu);
	cur = &b->cursors[cpu];
	ret = cursor_fill(b, buf, cur, &rec);
	if (ret)
		return ret;
	ev->timestamp = expand_ts(cur->prev_ts, &rec);
	ev->len = rec.payload_len;
	ev->cpu = grb_buf_cpu(buf);
	if (cap < rec.payload_len || (!dst && rec.payload_len))
		return -ENOBUFS;
	if (rec.payload_len)
		memcpy(dst, cur->data + rec.payload_off, rec.payload_len);
	if (consume) {
		cur->prev_ts = ev->timestamp;
		cur->next = rec.next;
		cur->consumed++;
		cur->taken++;
		/* Give a finished sub-buffer back now: in discard mode an idle
		 * reader would otherwise keep writers out of it. */
		if (cur->held && cur->next >= cur->data_size) {
			grb_reader_put_next(buf);
			cur->held = 0;
		}
	}
	return 0;
}

int grb_basic_consume(struct grb_basic *b, unsigned int cpu,
		      struct grb_basic_event *ev, void *dst, size_t cap)
{
	return basic_read(b, cpu, ev, dst, cap, 1);
}

int grb_basic_peek(struct grb_basic *b, unsigned int cpu,
		   struct grb_basic_event *ev, void *dst, size_t cap)
{
	return basic_read(b, cpu, ev, dst, cap, 0);
}

int grb_basic_get_counts(struct grb_basic *b, unsigned int cpu,
		     struct grb_basic_counts *c)
{
	struct grb_buf_stats st;
	struct grb_basic_cursor *cur;
	uint64_t gone;

	if (!b || !c || cpu >= grb_channel_nr_bufs(b->chan))
		return -EINVAL;
	cur = &b->cursors[cpu];
	grb_buf_get_stats(grb_channel_buf(b->chan, cpu), &st);
	c->written = st.written;
	c->overruns = st.overwritten;
	c->consumed = cur->consumed;
	c->dropped = cur->dropped;
	c->corrupt = cur->corrupt;
	c->lost = st.lost_full + st.lost_wrap + st.lost_big + st.lost_nesting;
	c->dead = st.lost_dead;
	/* The counters are read one after the other: while writers run,
	 * overwrites after the load of `written` can make the sum larger
	 * than it.  No record is then left: 0, not a wrapped count. */
	gone = st.overwritten + cur->consumed + cur->dropped + cur->corrupt;
	c->entries = st.written > gone ? st.written - gone : 0;
	return 0;
}

int grb_basic_reset(struct grb_basic *b)
{
	struct grb_reader_subbuf sb;
	struct grb_basic_cursor *cur;
	struct grb_buf *buf;
	unsigned int i;

	if (!b)
		return -EINVAL;
	if (b->external_reader)
		return -EPERM;
	for (i = 0; i < grb_channel_nr_bufs(b->chan); i++) {
		buf = grb_channel_buf(b->chan, i);
		cur = &b->cursors[i];
		grb_buf_flush(buf, GRB_FLUSH_ACTIVE);
		if (cur->held) {
			grb_reader_held(buf, &sb);
			cur->dropped += sb.records - cur->taken;
			grb_reader_put_next(buf);
			cur->held = 0;
		}
		while (grb_reader_get_next(buf) == 0) {
			grb_reader_held(buf, &sb);
			if (sb.pos == cur->live_pos && cur->damaged) {
				/* The rest of a sub-buffer damaged while
				 * read live is corrupt, as cursor_take()
				 * counts it. */
				cur->corrupt += sb.records - cur->taken;
			} else {
				/* Records already consumed live are not
				 * dropped. */
				cur->dropped += sb.records -
					(sb.pos == cur->live_pos ?
					 cur->taken : 0);
			}
			grb_reader_put_next(buf);
		}
		cur->damaged = 0;
		cur->live = 0;
		cur->live_pos = UINT64_MAX;
	}
	return 0;
}

int grb_basic_release_readers(struct grb_basic *b)
{
	unsigned int i;

	if (!b)
		return -EINVAL;
	if (b->external_reader)
		return -EALREADY;
	for (i = 0; i < grb_channel_nr_bufs(b->chan); i++) {
		struct grb_buf *buf = grb_channel_buf(b->chan, i);
		struct grb_reader_subbuf sb;

		/* Releasing puts a held sub-buffer back, consumed: what the
		 * client had not taken from it is dropped, as by a reset. */
		if (b->cursors[i].held && grb_reader_held(buf, &sb) == 0)
			b->cursors[i].dropped += sb.records -
				b->cursors[i].taken;
		grb_reader_release(buf);
		b->cursors[i].held = 0;
		b->cursors[i].live = 0;
	}
	b->external_reader = 1;
	return 0;
}
