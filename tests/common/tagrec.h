/* SPDX-License-Identifier: MIT */
/*
 * tests/common/tagrec.h - "raw" clients and their tagged records, for the
 * errno tests (tests/unit/test_errors*.c) and test_reader_contract.c: no
 * sub-buffer header, no record header, no clock (timestamp_bits 0,
 * clock_read NULL).  A record
 * is then exactly its payload, whose first 8 bytes are a tag and the rest
 * the tag's low byte, so a sub-buffer decodes as data_size / record size
 * tags; the helpers write such records and read them back, checking each
 * whole.  Header-only: each test includes it once.
 */
#ifndef GRB_TESTS_TAGREC_H
#define GRB_TESTS_TAGREC_H

#include <stdint.h>
#include <string.h>

#include "check.h"
#include "grb/grb.h"

#define SB 4096

static const struct grb_config raw = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 }, 0,
};
static const struct grb_config raw_ow = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 0, { 0 }, 0,
};

static inline struct grb_channel *create(const struct grb_config *cfg,
					 size_t subbuf_size,
					 size_t num_subbuf)
{
	struct grb_channel_attr attr = { "errors", subbuf_size, num_subbuf,
					 NULL };
	struct grb_channel *chan = NULL;

	CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	return chan;
}

/* One record of @size bytes (at least 8) starting with @tag. */
static inline int put(const struct grb_config *cfg,
		      struct grb_channel *chan, uint64_t tag, size_t size)
{
	struct grb_ctx ctx = GRB_CTX_INIT(size, 1);
	int ret = grb_reserve(cfg, chan, &ctx);

	if (ret)
		return ret;
	grb_write(cfg, &ctx, &tag, sizeof(tag));
	grb_write_fill(cfg, &ctx, (int)(tag & 0xff), size - sizeof(tag));
	grb_commit(cfg, &ctx);
	return 0;
}

/* Tags read back from a buffer. */
struct tags {
	uint64_t v[256];
	unsigned int n;
	unsigned int subbufs;
};

/*
 * Check the record of @size bytes at @off of the held sub-buffer and
 * append its tag.
 */
static inline void read_tag(struct grb_buf *b, size_t off, size_t size,
			    struct tags *t)
{
	unsigned char fill[SB];
	size_t i;

	CHECK(t->n < 256);
	CHECK_EQ(grb_reader_read(b, off, &t->v[t->n], 8), 0);
	CHECK_EQ(grb_reader_read(b, off + 8, fill, size - 8), 0);
	/* The record is intact, not only its tag. */
	for (i = 0; i < size - 8; i++)
		CHECK_EQ(fill[i], t->v[t->n] & 0xff);
	t->n++;
}

/*
 * Take one sub-buffer of records of @size bytes after a header of
 * @hdr_len bytes and append their tags.  Return: get_next's result.
 */
static inline int take(struct grb_buf *b, size_t hdr_len, size_t size,
		       struct tags *t)
{
	struct grb_reader_subbuf sb;
	size_t off;
	int ret = grb_reader_get_next(b);

	if (ret)
		return ret;
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.data_size, hdr_len + sb.records * size);
	for (off = hdr_len; off < sb.data_size; off += size)
		read_tag(b, off, size, t);
	t->subbufs++;
	CHECK_EQ(grb_reader_put_next(b), 0);
	return 0;
}

/* Take every delivered sub-buffer.  Return: get_next's final result. */
static inline int drain(struct grb_buf *b, size_t hdr_len, size_t size,
			struct tags *t)
{
	int ret;

	while ((ret = take(b, hdr_len, size, t)) == 0)
		;
	return ret;
}

/* get_next, and check what it holds. */
static inline void expect_next(struct grb_buf *b, uint64_t records,
			       size_t data_size)
{
	struct grb_reader_subbuf sb;

	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.records, records);
	CHECK_U64(sb.data_size, data_size);
}

/* Compare what was read with the tags expected, in order. */
static inline void expect_tags(const struct tags *t,
			       const uint64_t *want, unsigned int n)
{
	unsigned int i;

	CHECK_EQ(t->n, n);
	for (i = 0; i < n; i++)
		CHECK_U64(t->v[i], want[i]);
}

/* The four loss counters of @b, exactly. */
static inline void expect_lost(struct grb_buf *b, uint64_t full,
			       uint64_t wrap, uint64_t big, uint64_t nesting)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.lost_full, full);
	CHECK_U64(st.lost_wrap, wrap);
	CHECK_U64(st.lost_big, big);
	CHECK_U64(st.lost_nesting, nesting);
}

#endif /* GRB_TESTS_TAGREC_H */
