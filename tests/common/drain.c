/* SPDX-License-Identifier: MIT */
/*
 * tests/common/drain.c - the test client's reader and checker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grb/iter.h"
#include "grb/validate.h"
#include "tclient.h"

uint32_t tc_checksum(const struct trec *r, const unsigned char *extra);

#define FAIL(tc, ...) do {                                   \
	fprintf(stderr, "check: " __VA_ARGS__);              \
	fputc('\n', stderr);                                 \
	(tc)->errors++;                                      \
} while (0)

int tc_checker_init(struct tc_checker *tc, struct grb_channel *chan,
		    uint32_t nwriters, uint32_t maxseq)
{
	size_t n = (size_t)nwriters * maxseq;
	unsigned int i;

	memset(tc, 0, sizeof(*tc));
	tc->nwriters = nwriters;
	tc->maxseq = maxseq;
	tc->nbufs = grb_channel_nr_bufs(chan);
	tc->seen = calloc(n, 1);
	tc->reserved = calloc(n, 1);
	tc->last_seq = malloc(sizeof(int64_t) * tc->nbufs * nwriters);
	tc->next_subbuf_seq = calloc(tc->nbufs, sizeof(uint64_t));
	if (!tc->seen || !tc->reserved || !tc->last_seq ||
	    !tc->next_subbuf_seq)
		return -1;
	for (i = 0; i < tc->nbufs * nwriters; i++)
		tc->last_seq[i] = -1;
	return 0;
}

void tc_checker_free(struct tc_checker *tc)
{
	free(tc->seen);
	free(tc->reserved);
	free(tc->last_seq);
	free(tc->next_subbuf_seq);
}

void tc_mark_reserved(struct tc_checker *tc, uint32_t writer, uint32_t seq)
{
	__atomic_store_n(&tc->reserved[(size_t)writer * tc->maxseq + seq], 1,
			 __ATOMIC_RELAXED);
}

void tc_mark_abandoned(struct tc_checker *tc, int discarded)
{
	__atomic_fetch_add(discarded ? &tc->discards : &tc->skips_written, 1,
			   __ATOMIC_RELAXED);
}

/*
 * Verify one tagged record.  *prev_ts is the previous record's rebuilt
 * timestamp (0 before the first record of the sub-buffer, which must
 * then carry a full one); @h is the sub-buffer header, whose begin and
 * end timestamps bound every record's.
 */
static void check_record(struct tc_checker *tc, unsigned int bi,
			 const struct grb_reader_subbuf *sb,
			 const struct grb_record *rec, uint64_t *prev_ts,
			 int compress, const struct tc_header *h)
{
	const unsigned char *p = (const unsigned char *)sb->data;
	uint64_t ts;
	struct trec r;
	size_t idx;
	int64_t *last;

	if (rec->payload_len < sizeof(r)) {
		FAIL(tc, "buf %u seq %lu: record too short (%zu)", bi,
		     (unsigned long)sb->seq, rec->payload_len);
		return;
	}
	memcpy(&r, p + rec->payload_off, sizeof(r));
	if (rec->payload_len != sizeof(r) + r.extra ||
	    (r.writer != TC_SKIP_WRITER &&
	     (r.writer >= tc->nwriters || r.seq >= tc->maxseq))) {
		FAIL(tc, "buf %u: torn record (len %zu writer %u seq %u)", bi,
		     rec->payload_len, r.writer, r.seq);
		return;
	}
	if (tc_checksum(&r, p + rec->payload_off + sizeof(r)) != r.csum) {
		FAIL(tc, "buf %u: bad checksum writer %u seq %u", bi,
		     r.writer, r.seq);
		return;
	}
	/*
	 * The rebuilt timestamp must be the writer's clock value exactly:
	 * the previous record's with the low bits replaced (design.md
	 * section 10 shows the high bits cannot differ), and never below it.
	 */
	if (rec->rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		ts = rec->timestamp;
	} else {
		if (!compress)
			FAIL(tc, "compressed timestamp without compression");
		if (*prev_ts == 0)
			FAIL(tc, "buf %u seq %llu: first record of the sub-buffer has a compressed timestamp",
			     bi, (unsigned long long)sb->seq);
		ts = (*prev_ts & ~UINT64_C(0xffff)) | rec->timestamp;
	}
	if (ts != r.ts)
		FAIL(tc, "buf %u writer %u seq %u: timestamp %llu decoded as %llu",
		     bi, r.writer, r.seq, (unsigned long long)r.ts,
		     (unsigned long long)ts);
	if (ts < *prev_ts)
		FAIL(tc, "buf %u: timestamps go backwards (%llu after %llu)", bi,
		     (unsigned long long)ts, (unsigned long long)*prev_ts);
	if (r.ts < h->ts_begin || r.ts > h->ts_end)
		FAIL(tc, "buf %u seq %llu: timestamp %llu outside the sub-buffer's [%llu, %llu]",
		     bi, (unsigned long long)sb->seq, (unsigned long long)r.ts,
		     (unsigned long long)h->ts_begin,
		     (unsigned long long)h->ts_end);
	*prev_ts = ts;
	if (r.writer == TC_SKIP_WRITER) {
		tc->skips_read++;
		return;
	}
	/* Whether the writer's reservation succeeded is checked at the end:
	 * the writer marks it only after its commit returns. */
	idx = (size_t)r.writer * tc->maxseq + r.seq;
	if (tc->seen[idx]++)
		FAIL(tc, "writer %u seq %u read twice", r.writer, r.seq);
	last = &tc->last_seq[(size_t)bi * tc->nwriters + r.writer];
	if ((int64_t)r.seq <= *last)
		FAIL(tc, "buf %u writer %u: seq %u after %lld (reordered)",
		     bi, r.writer, r.seq, (long long)*last);
	*last = r.seq;
}

static void check_subbuf(struct tc_checker *tc, struct grb_buf *buf,
			 unsigned int bi, int discard, int compress)
{
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	struct tc_header h;
	uint64_t n = 0, prev_ts = 0;
	size_t off;
	int ret;

	grb_reader_held(buf, &sb);
	memcpy(&h, sb.data, sizeof(h));
	if (h.magic != TC_MAGIC || h.seq != sb.seq ||
	    h.data_size != sb.data_size || h.records != sb.records)
		FAIL(tc, "buf %u: header mismatch (seq %llu/%llu size %llu/%zu records %llu/%llu)",
		     bi, (unsigned long long)h.seq, (unsigned long long)sb.seq,
		     (unsigned long long)h.data_size, sb.data_size,
		     (unsigned long long)h.records,
		     (unsigned long long)sb.records);
	if (sb.seq < tc->next_subbuf_seq[bi] ||
	    (discard && sb.seq != tc->next_subbuf_seq[bi]))
		FAIL(tc, "buf %u: sub-buffer seq %llu, expected %llu", bi,
		     (unsigned long long)sb.seq,
		     (unsigned long long)tc->next_subbuf_seq[bi]);
	tc->next_subbuf_seq[bi] = sb.seq + 1;
	for (off = grb_reader_first_record(buf); off < sb.data_size;
	     off = rec.next) {
		ret = grb_reader_record(buf, off, &rec);
		if (ret) {
			FAIL(tc, "buf %u: undecodable record at %zu (%d)", bi,
			     off, ret);
			break;
		}
		check_record(tc, bi, &sb, &rec, &prev_ts, compress, &h);
		n++;
	}
	if (n != sb.records)
		FAIL(tc, "buf %u sub-buffer %llu: %llu records decoded, %llu counted",
		     bi, (unsigned long long)sb.seq, (unsigned long long)n,
		     (unsigned long long)sb.records);
	tc->records_read += n;
	tc->subbufs_read++;
}

uint64_t tc_drain_buf(struct tc_checker *tc, struct grb_channel *chan,
		      unsigned int i)
{
	struct grb_buf *buf = grb_channel_buf(chan, i);
	const struct grb_config *cfg = chan->cfg;
	uint64_t n = 0;
	int ret;

	while ((ret = grb_reader_get_next(buf)) == 0) {
		check_subbuf(tc, buf, i, cfg->mode == GRB_MODE_DISCARD,
			     cfg->timestamp_bits < 64);
		ret = grb_reader_put_next(buf);
		if (ret)
			FAIL(tc, "put_next: %d", ret);
		n++;
	}
	if (ret != -EAGAIN && ret != -ENODATA)
		FAIL(tc, "get_next: %d", ret);
	return n;
}

uint64_t tc_drain_all(struct tc_checker *tc, struct grb_channel *chan)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < tc->nbufs; i++)
		n += tc_drain_buf(tc, chan, i);
	return n;
}

uint64_t tc_final_check(struct tc_checker *tc, struct grb_channel *chan,
			uint64_t refused)
{
	struct grb_buf_stats st;
	uint64_t reserved = 0, seen = 0, lost;
	size_t i, n = (size_t)tc->nwriters * tc->maxseq;
	unsigned int b;
	int discard = chan->cfg->mode == GRB_MODE_DISCARD;
	char why[160];

	for (b = 0; b < tc->nbufs; b++) {
		if (grb_reader_get_next(grb_channel_buf(chan, b)) != -ENODATA)
			FAIL(tc, "buf %u not finalized and drained", b);
		if (grb_buf_validate(grb_channel_buf(chan, b), why,
				     sizeof(why)) != 0)
			FAIL(tc, "buf %u fails validation: %s", b, why);
	}
	for (i = 0; i < n; i++) {
		reserved += tc->reserved[i];
		seen += tc->seen[i];
		if (tc->seen[i] && !tc->reserved[i])
			FAIL(tc, "writer %zu seq %zu read but never reserved",
			     i / tc->maxseq, i % tc->maxseq);
		if (discard && tc->reserved[i] && !tc->seen[i])
			FAIL(tc, "discard mode: writer %zu seq %zu never read",
			     i / tc->maxseq, i % tc->maxseq);
	}
	grb_channel_get_stats(chan, &st);
	lost = st.lost_full + st.lost_wrap + st.lost_big + st.lost_nesting;
	if (st.written != reserved + tc->skips_written)
		FAIL(tc, "written %llu != reserved %llu + skip records %llu",
		     (unsigned long long)st.written,
		     (unsigned long long)reserved,
		     (unsigned long long)tc->skips_written);
	if (st.discarded != tc->discards)
		FAIL(tc, "discarded %llu, writers discarded %llu",
		     (unsigned long long)st.discarded,
		     (unsigned long long)tc->discards);
	if (st.read != tc->records_read ||
	    seen + tc->skips_read != tc->records_read)
		FAIL(tc, "read: engine %llu, decoded %llu, distinct %llu + %llu skips",
		     (unsigned long long)st.read,
		     (unsigned long long)tc->records_read,
		     (unsigned long long)seen,
		     (unsigned long long)tc->skips_read);
	if (discard && tc->skips_read != tc->skips_written)
		FAIL(tc, "discard mode: %llu skip records read, %llu written",
		     (unsigned long long)tc->skips_read,
		     (unsigned long long)tc->skips_written);
	if (st.written != st.read + st.overwritten)
		FAIL(tc, "written %llu != read %llu + overwritten %llu",
		     (unsigned long long)st.written,
		     (unsigned long long)st.read,
		     (unsigned long long)st.overwritten);
	if (discard && st.overwritten != 0)
		FAIL(tc, "discard mode overwrote %llu",
		     (unsigned long long)st.overwritten);
	if (lost != refused)
		FAIL(tc, "lost %llu != refused %llu", (unsigned long long)lost,
		     (unsigned long long)refused);
	return tc->errors;
}

void tc_check_iter_record(struct tc_checker *tc, const struct grb_iter_record *r)
{
	const unsigned char *p = (const unsigned char *)r->payload;
	unsigned int bi = r->cpu < 0 ? 0 : (unsigned int)r->cpu;
	struct trec t;
	size_t idx;
	int64_t *last;

	tc->records_read++;
	if (r->payload_len < sizeof(t)) {
		FAIL(tc, "iter: record too short (%zu)", r->payload_len);
		return;
	}
	memcpy(&t, p, sizeof(t));
	if (r->payload_len != sizeof(t) + t.extra ||
	    (t.writer != TC_SKIP_WRITER &&
	     (t.writer >= tc->nwriters || t.seq >= tc->maxseq))) {
		FAIL(tc, "iter: torn record (len %zu writer %u seq %u)",
		     r->payload_len, t.writer, t.seq);
		return;
	}
	if (tc_checksum(&t, p + sizeof(t)) != t.csum) {
		FAIL(tc, "iter: bad checksum writer %u seq %u", t.writer, t.seq);
		return;
	}
	if (r->timestamp != t.ts)
		FAIL(tc, "iter: writer %u seq %u: timestamp %llu rebuilt as %llu",
		     t.writer, t.seq, (unsigned long long)t.ts,
		     (unsigned long long)r->timestamp);
	if (t.writer == TC_SKIP_WRITER) {
		tc->skips_read++;
		return;
	}
	idx = (size_t)t.writer * tc->maxseq + t.seq;
	if (tc->seen[idx]++)
		FAIL(tc, "iter: writer %u seq %u read twice", t.writer, t.seq);
	if (bi >= tc->nbufs)
		bi = 0;
	last = &tc->last_seq[(size_t)bi * tc->nwriters + t.writer];
	if ((int64_t)t.seq <= *last)
		FAIL(tc, "iter: buf %u writer %u: seq %u after %lld", bi,
		     t.writer, t.seq, (long long)*last);
	*last = t.seq;
}

uint64_t tc_final_check_iter(struct tc_checker *tc, struct grb_channel *chan,
			     uint64_t refused, uint64_t lost_reported)
{
	struct grb_buf_stats st;
	uint64_t reserved = 0, seen = 0, lost;
	size_t i, n = (size_t)tc->nwriters * tc->maxseq;
	int discard = chan->cfg->mode == GRB_MODE_DISCARD;

	for (i = 0; i < n; i++) {
		reserved += tc->reserved[i];
		seen += tc->seen[i];
		if (tc->seen[i] && !tc->reserved[i])
			FAIL(tc, "iter: writer %zu seq %zu read but never reserved",
			     i / tc->maxseq, i % tc->maxseq);
		if (discard && tc->reserved[i] && !tc->seen[i])
			FAIL(tc, "iter: discard mode: writer %zu seq %zu never read",
			     i / tc->maxseq, i % tc->maxseq);
	}
	grb_channel_get_stats(chan, &st);
	lost = st.lost_full + st.lost_wrap + st.lost_big + st.lost_nesting;
	if (st.written != reserved + tc->skips_written)
		FAIL(tc, "iter: written %llu != reserved %llu + skips %llu",
		     (unsigned long long)st.written,
		     (unsigned long long)reserved,
		     (unsigned long long)tc->skips_written);
	if (st.read != tc->records_read)
		FAIL(tc, "iter: engine read %llu, iterators returned %llu",
		     (unsigned long long)st.read,
		     (unsigned long long)tc->records_read);
	if (seen + tc->skips_read + st.overwritten != st.written)
		FAIL(tc, "iter: seen %llu + skips %llu + overwritten %llu != written %llu",
		     (unsigned long long)seen,
		     (unsigned long long)tc->skips_read,
		     (unsigned long long)st.overwritten,
		     (unsigned long long)st.written);
	if (lost_reported != lost + st.overwritten)
		FAIL(tc, "iter: reported lost %llu != refused %llu + overwritten %llu",
		     (unsigned long long)lost_reported,
		     (unsigned long long)lost,
		     (unsigned long long)st.overwritten);
	if (lost != refused)
		FAIL(tc, "iter: lost %llu != refused %llu",
		     (unsigned long long)lost, (unsigned long long)refused);
	if (st.discarded != tc->discards)
		FAIL(tc, "iter: discarded %llu, writers discarded %llu",
		     (unsigned long long)st.discarded,
		     (unsigned long long)tc->discards);
	if (discard && st.overwritten)
		FAIL(tc, "iter: discard mode overwrote %llu",
		     (unsigned long long)st.overwritten);
	return tc->errors;
}
