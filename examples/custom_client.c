/* SPDX-License-Identifier: MIT */
/*
 * examples/custom_client.c - a client of its own on the engine API.
 *
 * The basic client (grb/basic.h) fixes a record format for you.  A tracer
 * or a logger usually wants its own: a compact header, event ids, a
 * sub-buffer header a post-processing tool can read without grb.  This
 * example builds one from scratch on grb/grb.h:
 *
 *  - a `static const struct grb_config`: per-CPU buffers, overwrite (flight
 *    recorder) mode, 32-bit compressed timestamps from CLOCK_MONOTONIC;
 *  - the callbacks the engine calls: clock_read and record_header_size on
 *    the fast path, subbuf_header_size, buffer_begin and buffer_end when a
 *    sub-buffer opens and is delivered, record_decode for readers;
 *  - writer threads using grb_reserve() / grb_write() / grb_commit(), and
 *    grb_try_discard_reserve() for a record abandoned after its
 *    reservation;
 *  - after grb_channel_finalize(), a reader that takes every sub-buffer,
 *    decodes every record, rebuilds the compressed timestamps and checks
 *    all of it against what the writers wrote and the engine counted.
 *
 * It exits with status 1 when anything read back is wrong, so it doubles
 * as a test (ctest runs it).
 *
 * Record format, every record starting on a 4-byte boundary:
 *
 *	u32 head     bit 31      CC_HEAD_FULL: a full 64-bit timestamp follows
 *	             bits 16-30  event id (enum cc_event)
 *	             bits 0-15   payload length in bytes
 *	u32 ts_low   the low 32 bits of the timestamp     (compact: 8 bytes)
 *	  or
 *	u64 ts       the whole timestamp, if CC_HEAD_FULL  (full: 12 bytes)
 *	payload      length bytes
 *
 * Both header sizes are multiples of 4, so a payload of 4-byte fields
 * starts right after the header with no padding, and the decoder knows
 * where it is without being told the writer's alignment.
 *
 * Usage: custom_client [threads] [records-per-thread]
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grb/grb.h"

/* ---- The record format ------------------------------------------------ */

#define CC_HEAD_FULL     UINT32_C(0x80000000)
#define CC_HEAD_ID_SHIFT 16
#define CC_HEAD_ID_MASK  UINT32_C(0x7fff)
#define CC_HEAD_LEN_MASK UINT32_C(0xffff)
#define CC_TS_BITS       32

enum cc_event {
	/* A measurement: struct cc_sample. */
	CC_EV_SAMPLE = 1,
	/* A progress mark: struct cc_mark, then a NUL-terminated text. */
	CC_EV_MARK = 2,
	/* A reservation its writer abandoned but could not discard: the
	 * payload is zeros, and readers step over it. */
	CC_EV_SKIP = 3,
};

struct cc_sample {
	uint32_t writer;
	uint32_t seq;
	uint32_t value;
	/* A hash of the fields above and of the record's full timestamp:
	 * the reader recomputes it from the timestamp it rebuilt. */
	uint32_t check;
};

struct cc_mark {
	uint32_t writer;
	uint32_t seq;
	/* followed by the text "writer W reached S", NUL included */
};

#define CC_MAGIC 0x31306363u   /* "cc01" in little-endian memory */

/*
 * The sub-buffer ("packet") header: enough for a tool that reads a dump of
 * the memory, without grb, to walk the records and to know what was lost.
 */
struct cc_packet {
	uint32_t magic;
	int32_t cpu;          /* buffer's CPU, -1 for a per-channel buffer */
	uint64_t seq;         /* sub-buffer sequence number */
	uint64_t ts_begin;    /* timestamp of the opening reservation */
	uint64_t ts_end;      /* timestamp of the closing one */
	uint64_t data_size;   /* bytes used, this header included */
	uint64_t records;     /* records committed in the sub-buffer */
	uint64_t lost;        /* records refused on the buffer so far */
};

/* ---- The callbacks ---------------------------------------------------- */

/*
 * CLOCK_MONOTONIC in nanoseconds.  glibc answers clock_gettime() from the
 * vDSO, without a system call, and the vDSO read carries the fence that
 * clock_read's contract asks for (grb/config.h): the counter is not read
 * before the position load that precedes the call.  It is also
 * async-signal-safe, as a writer in a signal handler needs.
 */
static uint64_t cc_clock_read(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) +
		(uint64_t)ts.tv_nsec;
}

/*
 * Runs inside every reservation, so it must be cheap: 4-byte alignment
 * padding before the header, then 8 or 12 header bytes depending on
 * whether the engine asks for a full timestamp.
 */
static size_t cc_record_header_size(const struct grb_config *cfg,
				    size_t offset, size_t *pre_padding,
				    const struct grb_ctx *ctx)
{
	(void)cfg;
	*pre_padding = grb_offset_align(offset, 4);
	return *pre_padding + 4 +
		((ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP) ? 8 : 4);
}

static size_t cc_subbuf_header_size(void)
{
	return sizeof(struct cc_packet);
}

static void cc_buffer_begin(struct grb_buf *buf, void *header,
			    const struct grb_subbuf_info *info)
{
	struct cc_packet p;

	(void)buf;
	/* Fields only buffer_end knows start as all ones, so that a header
	 * that was never patched cannot pass for a real one. */
	memset(&p, 0xff, sizeof(p));
	p.magic = CC_MAGIC;
	p.cpu = info->cpu;
	p.seq = info->seq;
	p.ts_begin = info->timestamp;
	memcpy(header, &p, sizeof(p));
}

/*
 * Runs on the thread whose commit completed the sub-buffer; every record
 * in it is committed and visible here.
 */
static void cc_buffer_end(struct grb_buf *buf, void *header,
			  const struct grb_subbuf_info *info)
{
	struct cc_packet *p = (struct cc_packet *)header;

	(void)buf;
	p->ts_end = info->timestamp;
	p->data_size = info->data_size;
	p->records = info->records;
	p->lost = info->lost;
}

/*
 * The inverse of cc_record_header_size() and of the writer below.  The
 * bytes may come from memory a buggy or dead writer scribbled on, so
 * every length is checked against the valid data before it is used.
 */
static int cc_record_decode(const struct grb_config *cfg, const void *subbuf,
			    size_t offset, size_t data_size,
			    struct grb_record *rec)
{
	const unsigned char *p = (const unsigned char *)subbuf;
	size_t at = offset + grb_offset_align(offset, 4);
	uint32_t head, low;

	(void)cfg;
	if (at > data_size || data_size - at < 8)
		return -EINVAL;
	memcpy(&head, p + at, sizeof(head));
	rec->offset = at;
	if (head & CC_HEAD_FULL) {
		if (data_size - at < 12)
			return -EINVAL;
		memcpy(&rec->timestamp, p + at + 4, sizeof(rec->timestamp));
		rec->header_len = 12;
		rec->rflags = GRB_RFLAG_FULL_TIMESTAMP;
	} else {
		memcpy(&low, p + at + 4, sizeof(low));
		rec->timestamp = low;
		rec->header_len = 8;
		rec->rflags = 0;
	}
	rec->payload_off = at + rec->header_len;
	rec->payload_len = head & CC_HEAD_LEN_MASK;
	if (rec->payload_len > data_size - rec->payload_off)
		return -EINVAL;
	rec->next = rec->payload_off + rec->payload_len;
	return 0;
}

/*
 * The configuration.  It is static const and every fast-path call below
 * passes its address, so the compiler folds the mode and alloc tests and
 * calls the two fast-path callbacks directly: this file gets a write path
 * of its own.  grb_channel_create() validates it once.
 */
static const struct grb_config cc_config = {
	.alloc = GRB_ALLOC_PER_CPU,
	.mode = GRB_MODE_OVERWRITE,
	.timestamp_bits = CC_TS_BITS,
	.cb = {
		.clock_read = cc_clock_read,
		.record_header_size = cc_record_header_size,
		.subbuf_header_size = cc_subbuf_header_size,
		.buffer_begin = cc_buffer_begin,
		.buffer_end = cc_buffer_end,
		.record_decode = cc_record_decode,
	},
};

/* ---- The write side --------------------------------------------------- */

/* A marker every CC_MARK_EVERY samples of a writer. */
#define CC_MARK_EVERY 1000
/* One sample in CC_FAIL_EVERY cannot be produced (see cc_produce()). */
#define CC_FAIL_EVERY 4999
#define CC_TEXT_MAX   48

static uint32_t cc_hash(uint32_t h, uint32_t v)
{
	h ^= v;
	h *= UINT32_C(0x9e3779b1);
	return h ^ (h >> 15);
}

static uint32_t cc_sample_check(const struct cc_sample *s, uint64_t ts)
{
	uint32_t h = cc_hash(UINT32_C(0x12345678), s->writer);

	h = cc_hash(h, s->seq);
	h = cc_hash(h, s->value);
	h = cc_hash(h, (uint32_t)ts);
	return cc_hash(h, (uint32_t)(ts >> 32));
}

/* The value writer w records as sample seq; the reader recomputes it. */
static uint32_t cc_expected_value(uint32_t writer, uint32_t seq)
{
	return cc_hash(writer + 1, seq);
}

/*
 * Produce a sample's value.  It stands for a source that can fail after
 * the slot is reserved: a client that copies straight into the slot (from
 * a device, or from memory that may fault) only learns half way that the
 * record is no good.  Here every CC_FAIL_EVERY-th sample fails.
 */
static int cc_produce(uint32_t writer, uint32_t seq, uint32_t *value)
{
	if (seq % CC_FAIL_EVERY == CC_FAIL_EVERY - 1)
		return -EFAULT;
	*value = cc_expected_value(writer, seq);
	return 0;
}

static void cc_mark_text(char *dst, size_t cap, uint32_t writer, uint32_t seq)
{
	snprintf(dst, cap, "writer %u reached %u", writer, seq);
}

/* What one writer did, as it saw it; the main thread adds them up. */
struct cc_writer {
	pthread_t tid;
	struct grb_channel *chan;
	uint32_t id;
	uint32_t count;
	uint64_t committed;   /* records committed: samples, marks, skips */
	uint64_t skips;       /* abandoned, discard refused: committed as SKIP */
	uint64_t discarded;   /* abandoned and discarded */
	uint64_t refused;     /* refused by grb_reserve(), counted as lost */
	uint64_t failed;      /* any other error: a bug in this program */
};

/*
 * The record header, in the form the reservation asks for.  The engine
 * sets GRB_RFLAG_FULL_TIMESTAMP when the record opens a sub-buffer (a
 * reader may start there) or when the timestamp moved past what the low
 * 32 bits can say relative to the previous record; otherwise the low bits
 * are enough for a reader that saw the previous record.
 */
static inline void cc_write_header(struct grb_ctx *ctx, enum cc_event ev,
				   size_t len)
{
	uint32_t head = ((uint32_t)ev << CC_HEAD_ID_SHIFT) | (uint32_t)len;
	uint32_t low;

	if (ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		head |= CC_HEAD_FULL;
		grb_write(&cc_config, ctx, &head, sizeof(head));
		grb_write(&cc_config, ctx, &ctx->timestamp,
			  sizeof(ctx->timestamp));
	} else {
		low = (uint32_t)ctx->timestamp;
		grb_write(&cc_config, ctx, &head, sizeof(head));
		grb_write(&cc_config, ctx, &low, sizeof(low));
	}
}

/* Count a refusal of grb_reserve() where it belongs. */
static void cc_refused(struct cc_writer *w, int ret)
{
	switch (ret) {
	case -ENOBUFS:   /* full (discard mode only) */
	case -EIO:       /* next sub-buffer still being written a lap ago */
	case -ENOSPC:    /* larger than a sub-buffer */
	case -EBUSY:     /* nesting deeper than GRB_MAX_NESTING */
		w->refused++;   /* each is in one lost_* counter */
		break;
	default:         /* disabled, finalized, empty slot: not here */
		fprintf(stderr, "writer %u: grb_reserve: %s\n", w->id,
			grb_strerror(ret));
		w->failed++;
	}
}

static void cc_write_mark(struct cc_writer *w, uint32_t seq)
{
	char text[CC_TEXT_MAX];
	struct cc_mark m = { w->id, seq };
	struct grb_ctx ctx;
	size_t field;
	int ret;

	cc_mark_text(text, sizeof(text), w->id, seq);
	field = strlen(text) + 1;
	grb_ctx_init(&ctx, sizeof(m) + field, 4);
	ret = grb_reserve(&cc_config, w->chan, &ctx);
	if (ret) {
		cc_refused(w, ret);
		return;
	}
	cc_write_header(&ctx, CC_EV_MARK, ctx.data_size);
	grb_write(&cc_config, &ctx, &m, sizeof(m));
	grb_write_str(&cc_config, &ctx, text, field);
	grb_commit(&cc_config, &ctx);
	w->committed++;
}

static void cc_write_sample(struct cc_writer *w, uint32_t seq)
{
	struct grb_ctx ctx = GRB_CTX_INIT(sizeof(struct cc_sample), 4);
	struct cc_sample s = { w->id, seq, 0, 0 };
	int ret;

	ret = grb_reserve(&cc_config, w->chan, &ctx);
	if (ret) {
		cc_refused(w, ret);
		return;
	}
	if (cc_produce(w->id, seq, &s.value) != 0) {
		/*
		 * The record is no good; give the slot back.  That works
		 * only while ours is the last reservation in the buffer:
		 * the engine then closes the sub-buffer where our slot
		 * starts, so the slot and the rest of the sub-buffer
		 * become padding no reader sees, and the next record
		 * opens a new one.  That costs the rest of the sub-buffer:
		 * filter before reserving whenever the decision can be
		 * made earlier.
		 */
		ret = grb_try_discard_reserve(&cc_config, &ctx);
		if (ret == 0) {
			w->discarded++;
			return;
		}
		/*
		 * -EBUSY: something reserved after our slot in this buffer
		 * (a thread that ran on this CPU while we were preempted, a
		 * signal handler, a flush), and the write position never
		 * moves back over it.  Nothing changed: the slot is still
		 * ours and must still be committed, or its sub-buffer is
		 * never delivered.  So fill it with a record readers know
		 * to skip.
		 */
		cc_write_header(&ctx, CC_EV_SKIP, sizeof(s));
		grb_write_fill(&cc_config, &ctx, 0, sizeof(s));
		grb_commit(&cc_config, &ctx);
		w->committed++;
		w->skips++;
		return;
	}
	cc_write_header(&ctx, CC_EV_SAMPLE, sizeof(s));
	s.check = cc_sample_check(&s, ctx.timestamp);
	grb_write(&cc_config, &ctx, &s, sizeof(s));
	grb_commit(&cc_config, &ctx);
	w->committed++;
}

static void *cc_writer_main(void *arg)
{
	struct cc_writer *w = (struct cc_writer *)arg;
	uint32_t seq;

	for (seq = 0; seq < w->count; seq++) {
		if (seq % CC_MARK_EVERY == 0)
			cc_write_mark(w, seq);
		cc_write_sample(w, seq);
	}
	return NULL;
}

/* ---- The read side ---------------------------------------------------- */

struct cc_reader {
	uint32_t nwriters;
	uint32_t count;
	unsigned char *seen;      /* [writer][seq]: sample read already */
	int64_t *last_seq;        /* [writer]: last sample seq in this buffer */
	uint64_t records;         /* records decoded */
	uint64_t samples, marks, skips;
	uint64_t full_ts, compact_ts;
	uint64_t subbufs;
	uint64_t errors;
};

#define CC_FAIL(r, ...) do {                                  \
	fprintf(stderr, "custom_client: " __VA_ARGS__);       \
	fputc('\n', stderr);                                  \
	(r)->errors++;                                        \
} while (0)

static void cc_check_sample(struct cc_reader *r, const struct cc_sample *s,
			    uint64_t ts)
{
	size_t i;

	if (s->writer >= r->nwriters || s->seq >= r->count) {
		CC_FAIL(r, "sample from writer %u seq %u: out of range",
			s->writer, s->seq);
		return;
	}
	/* A bad hash means a torn record or a wrongly rebuilt timestamp. */
	if (s->check != cc_sample_check(s, ts) ||
	    s->value != cc_expected_value(s->writer, s->seq))
		CC_FAIL(r, "writer %u seq %u: bad value or timestamp %llu",
			s->writer, s->seq, (unsigned long long)ts);
	if (s->seq % CC_FAIL_EVERY == CC_FAIL_EVERY - 1)
		CC_FAIL(r, "writer %u seq %u: an abandoned sample was read",
			s->writer, s->seq);
	i = (size_t)s->writer * r->count + s->seq;
	if (r->seen[i]++)
		CC_FAIL(r, "writer %u seq %u read twice", s->writer, s->seq);
	/* One thread's records in one buffer are in the order it wrote them. */
	if ((int64_t)s->seq <= r->last_seq[s->writer])
		CC_FAIL(r, "writer %u: seq %u after %lld", s->writer, s->seq,
			(long long)r->last_seq[s->writer]);
	r->last_seq[s->writer] = s->seq;
	r->samples++;
}

static void cc_check_mark(struct cc_reader *r, struct grb_buf *buf,
			  const struct grb_record *rec)
{
	char text[CC_TEXT_MAX], want[CC_TEXT_MAX];
	struct cc_mark m;
	size_t len;
	int ret;

	if (rec->payload_len < sizeof(m) + 1 ||
	    grb_reader_read(buf, rec->payload_off, &m, sizeof(m)) != 0) {
		CC_FAIL(r, "mark record too short (%zu bytes)",
			rec->payload_len);
		return;
	}
	/* The text must end inside the record, not merely in the data. */
	ret = grb_reader_read_cstr(buf, rec->payload_off + sizeof(m), text,
				   sizeof(text), &len);
	if (ret || sizeof(m) + len + 1 != rec->payload_len) {
		CC_FAIL(r, "mark text does not fit its record (%s)",
			grb_strerror(ret));
		return;
	}
	cc_mark_text(want, sizeof(want), m.writer, m.seq);
	if (m.writer >= r->nwriters || m.seq % CC_MARK_EVERY != 0 ||
	    strcmp(text, want) != 0)
		CC_FAIL(r, "bad mark \"%s\" (writer %u seq %u)", text,
			m.writer, m.seq);
	r->marks++;
}

/*
 * Check the held sub-buffer's header against what the engine says about
 * it.  @lost_total is what the buffer refused in all.
 * Return: 0, or -1 when there is no header to read.
 */
static int cc_check_packet(struct cc_reader *r, struct grb_buf *buf,
			   const struct grb_reader_subbuf *sb,
			   struct cc_packet *p, uint64_t lost_total)
{
	int ret = grb_reader_read(buf, 0, p, sizeof(*p));

	if (ret) {
		CC_FAIL(r, "no sub-buffer header: %s", grb_strerror(ret));
		return -1;
	}
	if (p->magic != CC_MAGIC || p->cpu != grb_buf_cpu(buf) ||
	    p->seq != sb->seq || p->data_size != sb->data_size ||
	    p->records != sb->records || p->ts_begin > p->ts_end)
		CC_FAIL(r, "cpu %d sub-buffer %llu: header does not match",
			grb_buf_cpu(buf), (unsigned long long)sb->seq);
	/*
	 * The lost count is the buffer's when the sub-buffer was delivered,
	 * and delivery need not follow position order: a sub-buffer whose
	 * writer was preempted before its commit is delivered after later
	 * ones, with a larger count.  So it only has an upper bound.
	 */
	if (p->lost > lost_total)
		CC_FAIL(r, "cpu %d: lost count %llu, of %llu in all",
			grb_buf_cpu(buf), (unsigned long long)p->lost,
			(unsigned long long)lost_total);
	return 0;
}

/*
 * The full timestamp of @rec.  @prev_ts is the previous record's, 0 for
 * the first record of a sub-buffer, which always carries a full one.  A
 * compact one shares its high bits with the record before it (grb/config.h,
 * GRB_RFLAG_FULL_TIMESTAMP), so only the low CC_TS_BITS are replaced.
 */
static uint64_t cc_rebuild_ts(struct cc_reader *r, const struct grb_record *rec,
			      uint64_t prev_ts)
{
	if (rec->rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		r->full_ts++;
		return rec->timestamp;
	}
	if (prev_ts == 0)
		CC_FAIL(r, "first record of a sub-buffer is compact");
	r->compact_ts++;
	return (prev_ts & ~((UINT64_C(1) << CC_TS_BITS) - 1)) | rec->timestamp;
}

/* Check one record's payload according to its event id. */
static void cc_check_event(struct cc_reader *r, struct grb_buf *buf,
			   const struct grb_record *rec, uint64_t ts)
{
	struct cc_sample s;
	uint32_t head, id;

	/* The event id is not the engine's business: read it here. */
	grb_reader_read(buf, rec->offset, &head, sizeof(head));
	id = (head >> CC_HEAD_ID_SHIFT) & CC_HEAD_ID_MASK;
	switch (id) {
	case CC_EV_SAMPLE:
		if (rec->payload_len != sizeof(s)) {
			CC_FAIL(r, "sample of %zu bytes", rec->payload_len);
			return;
		}
		grb_reader_read(buf, rec->payload_off, &s, sizeof(s));
		cc_check_sample(r, &s, ts);
		return;
	case CC_EV_MARK:
		cc_check_mark(r, buf, rec);
		return;
	case CC_EV_SKIP:
		r->skips++;
		return;
	default:
		CC_FAIL(r, "unknown event id %u", id);
	}
}

/* Decode and check every record of the held sub-buffer. */
static void cc_read_subbuf(struct cc_reader *r, struct grb_buf *buf,
			   uint64_t lost_total)
{
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	struct cc_packet p;
	uint64_t ts, prev_ts = 0, n = 0;
	size_t off;
	int ret;

	ret = grb_reader_held(buf, &sb);
	if (ret) {
		CC_FAIL(r, "grb_reader_held: %s", grb_strerror(ret));
		return;
	}
	if (cc_check_packet(r, buf, &sb, &p, lost_total))
		return;
	/* Records follow each other: each decode says where the next is. */
	off = grb_reader_first_record(buf);
	while ((ret = grb_reader_record(buf, off, &rec)) == 0) {
		ts = cc_rebuild_ts(r, &rec, prev_ts);
		if (ts < prev_ts || ts < p.ts_begin || ts > p.ts_end)
			CC_FAIL(r, "timestamp %llu out of order or outside [%llu, %llu]",
				(unsigned long long)ts,
				(unsigned long long)p.ts_begin,
				(unsigned long long)p.ts_end);
		prev_ts = ts;
		cc_check_event(r, buf, &rec, ts);
		n++;
		off = rec.next;
	}
	/* -ENODATA: off reached the end of the data, as it must. */
	if (ret != -ENODATA)
		CC_FAIL(r, "record at offset %zu does not decode: %s", off,
			grb_strerror(ret));
	if (n != sb.records)
		CC_FAIL(r, "%llu records decoded, the engine counted %llu",
			(unsigned long long)n, (unsigned long long)sb.records);
	r->records += n;
	r->subbufs++;
}

/*
 * Read one buffer to its end.  The same loop works while writers run; it
 * then also sees -EAGAIN (nothing delivered yet: wait, or flush), which
 * cannot happen here because the channel is finalized.
 */
static void cc_read_buf(struct cc_reader *r, struct grb_buf *buf,
			const struct grb_buf_stats *st)
{
	uint64_t lost_total = st->lost_full + st->lost_wrap + st->lost_big +
		st->lost_nesting;
	uint32_t i;
	int ret;

	for (i = 0; i < r->nwriters; i++)
		r->last_seq[i] = -1;
	ret = grb_reader_open(buf);
	if (ret) {
		CC_FAIL(r, "grb_reader_open: %s", grb_strerror(ret));
		return;
	}
	while ((ret = grb_reader_get_next(buf)) == 0) {
		cc_read_subbuf(r, buf, lost_total);
		ret = grb_reader_put_next(buf);
		if (ret)
			CC_FAIL(r, "grb_reader_put_next: %s",
				grb_strerror(ret));
	}
	if (ret != -ENODATA)
		CC_FAIL(r, "grb_reader_get_next: %s", grb_strerror(ret));
	grb_reader_release(buf);
}

/* ---- Putting it together ---------------------------------------------- */

/*
 * Compare what the writers did, what the reader decoded and what the
 * engine counted.
 */
static void cc_check_totals(struct cc_reader *r,
				const struct cc_writer *w, uint32_t nwriters,
				const struct grb_buf_stats *sum)
{
	uint64_t committed = 0, refused = 0, discarded = 0, skips = 0;
	uint64_t failed = 0, lost;
	uint32_t i;

	for (i = 0; i < nwriters; i++) {
		committed += w[i].committed;
		refused += w[i].refused;
		discarded += w[i].discarded;
		skips += w[i].skips;
		failed += w[i].failed;
	}
	lost = sum->lost_full + sum->lost_wrap + sum->lost_big +
		sum->lost_nesting;
	if (failed)
		CC_FAIL(r, "%llu unexpected write errors",
			(unsigned long long)failed);
	if (sum->written != committed)
		CC_FAIL(r, "engine counted %llu written, writers committed %llu",
			(unsigned long long)sum->written,
			(unsigned long long)committed);
	if (sum->read != r->records)
		CC_FAIL(r, "engine counted %llu read, reader decoded %llu",
			(unsigned long long)sum->read,
			(unsigned long long)r->records);
	if (sum->written != sum->read + sum->overwritten)
		CC_FAIL(r, "written %llu != read %llu + overwritten %llu",
			(unsigned long long)sum->written,
			(unsigned long long)sum->read,
			(unsigned long long)sum->overwritten);
	if (lost != refused)
		CC_FAIL(r, "engine counted %llu lost, writers saw %llu refused",
			(unsigned long long)lost, (unsigned long long)refused);
	if (sum->discarded != discarded)
		CC_FAIL(r, "engine counted %llu discarded, writers %llu",
			(unsigned long long)sum->discarded,
			(unsigned long long)discarded);
	if (r->skips > skips)
		CC_FAIL(r, "%llu skip records read, %llu written",
			(unsigned long long)r->skips,
			(unsigned long long)skips);
}

static void cc_print_summary(const struct cc_reader *r, uint32_t nwriters,
			     uint32_t count, unsigned int nbufs,
			     const struct grb_buf_stats *sum)
{
	printf("custom client: %u writers x %u samples, %u per-CPU buffers, overwrite mode\n",
	       nwriters, count, nbufs);
	printf("engine   written %llu  read %llu  overwritten %llu  discarded %llu\n",
	       (unsigned long long)sum->written, (unsigned long long)sum->read,
	       (unsigned long long)sum->overwritten,
	       (unsigned long long)sum->discarded);
	printf("         lost: full %llu  wrap %llu  big %llu  nesting %llu\n",
	       (unsigned long long)sum->lost_full,
	       (unsigned long long)sum->lost_wrap,
	       (unsigned long long)sum->lost_big,
	       (unsigned long long)sum->lost_nesting);
	/*
	 * With more writer threads than CPUs, a writer preempted between
	 * reserve and commit keeps its sub-buffer from being delivered;
	 * writers on that CPU that come round to it a lap later are refused
	 * until it commits.  More or larger sub-buffers make that rarer.
	 */
	if (sum->lost_wrap)
		printf("         (wrap: a sub-buffer a lap behind was still held by a preempted writer)\n");
	printf("reader   %llu sub-buffers, %llu records: %llu samples, %llu marks, %llu skips\n",
	       (unsigned long long)r->subbufs, (unsigned long long)r->records,
	       (unsigned long long)r->samples, (unsigned long long)r->marks,
	       (unsigned long long)r->skips);
	printf("         timestamps: %llu full, %llu compact\n",
	       (unsigned long long)r->full_ts,
	       (unsigned long long)r->compact_ts);
	printf("check    %s (%llu errors)\n", r->errors ? "FAILED" : "passed",
	       (unsigned long long)r->errors);
}

static void cc_add_stats(struct grb_buf_stats *sum,
			 const struct grb_buf_stats *st)
{
	sum->written += st->written;
	sum->read += st->read;
	sum->overwritten += st->overwritten;
	sum->lost_full += st->lost_full;
	sum->lost_wrap += st->lost_wrap;
	sum->lost_big += st->lost_big;
	sum->lost_nesting += st->lost_nesting;
	sum->discarded += st->discarded;
}

/*
 * Read every buffer of the finalized channel and add up its counters in
 * @sum.  One reader per buffer: here one thread takes them in turn; a
 * live reader would run a thread per buffer, or poll them all.
 */
static void cc_read_all(struct cc_reader *r, struct grb_channel *chan,
			struct grb_buf_stats *sum)
{
	unsigned int i, nbufs = grb_channel_nr_bufs(chan);
	struct grb_buf_stats st;
	char msg[160];

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < nbufs; i++) {
		struct grb_buf *buf = grb_channel_buf(chan, i);

		grb_buf_get_stats(buf, &st);
		cc_read_buf(r, buf, &st);
		/* After the drain: the read count is now final. */
		grb_buf_get_stats(buf, &st);
		cc_add_stats(sum, &st);
		/* The engine's own whole-buffer invariants, for good measure. */
		if (grb_buf_validate(buf, msg, sizeof(msg)) != 0)
			CC_FAIL(r, "buffer %u: %s", i, msg);
	}
}

int main(int argc, char **argv)
{
	uint32_t nwriters = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 4;
	uint32_t count = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 20000;
	/*
	 * Small on purpose: 16 sub-buffers of 64 KiB per CPU hold less than
	 * the writers produce, so old sub-buffers are overwritten, as in a
	 * flight recorder.
	 */
	struct grb_channel_attr attr = {
		.name = "custom_client",
		.subbuf_size = 64 * 1024,
		.num_subbuf = 16,
	};
	struct grb_buf_stats sum;
	struct cc_reader r;
	struct cc_writer *w;
	struct grb_channel *chan;
	unsigned int i;
	int ret;

	if (nwriters == 0 || nwriters > 256 || count == 0 ||
	    count > 10000000) {
		fprintf(stderr, "usage: custom_client [threads 1-256] [records-per-thread 1-10000000]\n");
		return 2;
	}
	ret = grb_channel_create(&cc_config, &attr, &chan);
	if (ret) {
		fprintf(stderr, "grb_channel_create: %s\n", grb_strerror(ret));
		return 1;
	}
	w = calloc(nwriters, sizeof(*w));
	memset(&r, 0, sizeof(r));
	r.nwriters = nwriters;
	r.count = count;
	r.seen = calloc((size_t)nwriters * count, 1);
	r.last_seq = calloc(nwriters, sizeof(*r.last_seq));
	if (!w || !r.seen || !r.last_seq) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}

	for (i = 0; i < nwriters; i++) {
		w[i].chan = chan;
		w[i].id = i;
		w[i].count = count;
		if (pthread_create(&w[i].tid, NULL, cc_writer_main, &w[i])) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	for (i = 0; i < nwriters; i++)
		pthread_join(w[i].tid, NULL);

	/* Every writer has returned from its last commit: finalizing flushes
	 * the open sub-buffers, and readers can drain to -ENODATA. */
	ret = grb_channel_finalize(chan);
	if (ret)
		CC_FAIL(&r, "grb_channel_finalize: %s", grb_strerror(ret));

	cc_read_all(&r, chan, &sum);
	cc_check_totals(&r, w, nwriters, &sum);
	cc_print_summary(&r, nwriters, count, grb_channel_nr_bufs(chan), &sum);

	grb_channel_destroy(chan);
	free(r.seen);
	free(r.last_seq);
	free(w);
	return r.errors ? 1 : 0;
}
