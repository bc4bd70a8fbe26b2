/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_writes.c - the write helpers and where records land:
 * grb_write across 4 KiB pages, grb_write_str, grb_write_fill and
 * grb_ctx_align read back byte for byte, and the two ways a record ends a
 * sub-buffer: filling it exactly, or not fitting and moving to the next
 * one (the rest becomes padding).
 *
 * The client has a 32-byte sub-buffer header patched at delivery and no
 * record header, so each record is exactly its payload and the tests
 * know every offset.
 */
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"

#define HDR 32
#define HDR_MAGIC 0x77726974u
#define PAGE 4096

struct whdr {
	uint32_t magic;
	uint32_t cpu;
	uint64_t seq;
	uint64_t data_size;
	uint64_t records;
};

static size_t whdr_size(void)
{
	return sizeof(struct whdr);
}

static void whdr_begin(struct grb_buf *buf, void *header,
		       const struct grb_subbuf_info *info)
{
	struct whdr h = { HDR_MAGIC, (uint32_t)info->cpu, info->seq,
			  ~UINT64_C(0), ~UINT64_C(0) };

	(void)buf;
	memcpy(header, &h, sizeof(h));
}

static void whdr_end(struct grb_buf *buf, void *header,
		     const struct grb_subbuf_info *info)
{
	struct whdr h;

	(void)buf;
	memcpy(&h, header, sizeof(h));
	h.data_size = info->data_size;
	h.records = info->records;
	memcpy(header, &h, sizeof(h));
}

static const struct grb_config wcfg = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0,
	{ .subbuf_header_size = whdr_size, .buffer_begin = whdr_begin,
	  .buffer_end = whdr_end }, 0,
};

static uint64_t page_size;

static struct grb_channel *create(size_t subbuf_size, size_t num_subbuf)
{
	struct grb_channel_attr attr = { "writes", subbuf_size, num_subbuf,
					 NULL };
	struct grb_channel *chan = NULL;

	CHECK_EQ(sizeof(struct whdr), HDR);
	CHECK_EQ(grb_channel_create(&wcfg, &attr, &chan), 0);
	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	return chan;
}

static void destroy(struct grb_channel *chan)
{
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_stats st;

	/* Every test reads all it wrote, and nothing is ever refused. */
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(grb_reader_get_next(b), -ENODATA);
	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	CHECK_U64(st.written, st.read);
	CHECK_U64(st.lost_full + st.lost_wrap + st.lost_big +
		  st.lost_nesting, 0);
	CHECK_EQ(grb_buf_validate(b, NULL, 0), 0);
	CHECK_EQ(grb_reader_release(b), 0);
	grb_channel_destroy(chan);
}

/*
 * get_next, and check the sub-buffer against what was expected and
 * against its own header: data_size and records as delivered, and
 * padded_size the data size rounded up to the page.
 */
static void get_expect(struct grb_buf *b, uint64_t records, size_t data_size,
		       struct grb_reader_subbuf *sb)
{
	struct whdr h;

	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, sb), 0);
	CHECK_U64(sb->records, records);
	CHECK_U64(sb->data_size, data_size);
	CHECK_U64(sb->padded_size,
		  (data_size + page_size - 1) / page_size * page_size);
	CHECK_EQ(grb_reader_read(b, 0, &h, sizeof(h)), 0);
	CHECK_EQ(h.magic, HDR_MAGIC);
	CHECK_U64(h.seq, sb->seq);
	CHECK_U64(h.data_size, data_size);
	CHECK_U64(h.records, records);
}

/* Byte i of record k of the page-crossing run. */
static unsigned char pat(unsigned int k, size_t i)
{
	return (unsigned char)(k * 7 + i * 13 + (i >> 8) + 1);
}

#define NPAT 5000
#define BIG_SB (64 << 10)

struct pat_run {
	size_t size[NPAT];
	unsigned int read;          /* records verified so far */
	size_t prev_end;            /* sub-buffer offset after the last */
	unsigned int crossings;     /* records crossing a 4 KiB page */
	unsigned int switches;      /* records that moved to a new one */
	unsigned int subbufs;
};

/* Verify every delivered sub-buffer against the sizes written. */
static void pat_drain(struct grb_buf *b, struct pat_run *run)
{
	static unsigned char tmp[NPAT];
	struct grb_reader_subbuf sb;
	unsigned int k;
	size_t off, i, s;

	while (grb_reader_get_next(b) == 0) {
		CHECK_EQ(grb_reader_held(b, &sb), 0);
		CHECK(sb.records > 0);
		CHECK(sb.data_size <= BIG_SB);
		CHECK_U64(sb.padded_size, (sb.data_size + page_size - 1) /
			  page_size * page_size);
		off = HDR;
		for (k = 0; k < sb.records; k++) {
			CHECK(run->read < NPAT);
			s = run->size[run->read];
			CHECK_EQ(grb_reader_read(b, off, tmp, s), 0);
			for (i = 0; i < s; i++)
				CHECK_EQ(tmp[i], pat(run->read, i));
			/* The held sub-buffer is contiguous in memory too. */
			CHECK(memcmp(tmp, (const char *)sb.data + off, s) == 0);
			off += s;
			run->read++;
		}
		CHECK_U64(off, sb.data_size);
		run->subbufs++;
		CHECK_EQ(grb_reader_put_next(b), 0);
	}
}

/* Write record k; odd ones in one grb_write, even ones in pieces. */
static void pat_write(struct grb_channel *chan, struct pat_run *run,
		      unsigned int k)
{
	static unsigned char bytes[NPAT];
	size_t size = run->size[k], off, done, piece, i;
	struct grb_ctx ctx = GRB_CTX_INIT(size, 1);

	for (i = 0; i < size; i++)
		bytes[i] = pat(k, i);
	CHECK_EQ(grb_reserve(&wcfg, chan, &ctx), 0);
	CHECK_U64(ctx.slot_size, size);
	CHECK(ctx.wend - ctx.wptr == (ptrdiff_t)size);
	off = ctx.pre_offset & (BIG_SB - 1);
	if (off / PAGE != (off + size - 1) / PAGE)
		run->crossings++;
	/* A record opens a sub-buffer only when it did not fit the last. */
	if (off == HDR && k > 0) {
		CHECK(run->prev_end + size > BIG_SB);
		run->switches++;
	}
	if (k & 1) {
		grb_write(&wcfg, &ctx, bytes, size);
	} else {
		for (done = 0; done < size; done += piece) {
			piece = 1 + (done * 31 + k) % 700;
			if (piece > size - done)
				piece = size - done;
			grb_write(&wcfg, &ctx, bytes + done, piece);
		}
	}
	CHECK(ctx.wptr == ctx.wend);
	grb_commit(&wcfg, &ctx);
	run->prev_end = ((ctx.end - 1) & (BIG_SB - 1)) + 1;
}

static void test_page_crossing(void)
{
	static struct pat_run run;
	struct grb_channel *chan = create(BIG_SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	unsigned int k;

	memset(&run, 0, sizeof(run));
	/* Every size from 1 to 5000 bytes, in an order that mixes them. */
	for (k = 0; k < NPAT; k++)
		run.size[k] = 1 + (size_t)(k * 2017u) % NPAT;
	for (k = 0; k < NPAT; k++) {
		pat_write(chan, &run, k);
		pat_drain(b, &run);
	}
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	pat_drain(b, &run);
	CHECK_EQ(run.read, NPAT);
	/* About half the records cross a page; the switch path ran for
	 * every sub-buffer but the first. */
	CHECK(run.crossings > NPAT / 4);
	CHECK_EQ(run.switches + 1, run.subbufs);
	printf("test_writes: %u records, %u across a page, %u sub-buffers\n",
	       run.read, run.crossings, run.subbufs);
	destroy(chan);
}

/* Fill both sub-buffers with 0xaa records that exactly fill them, so
 * later records land in memory that was written before. */
static void dirty(struct grb_channel *chan, size_t sb_size)
{
	static unsigned char tmp[BIG_SB];
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_ctx ctx;
	struct grb_reader_subbuf sb;
	size_t i;
	int n;

	for (n = 0; n < 2; n++) {
		ctx = (struct grb_ctx)GRB_CTX_INIT(sb_size - HDR, 1);
		CHECK_EQ(grb_reserve(&wcfg, chan, &ctx), 0);
		grb_write_fill(&wcfg, &ctx, 0xaa, sb_size - HDR);
		CHECK(ctx.wptr == ctx.wend);
		grb_commit(&wcfg, &ctx);
		/* Exactly full: delivered by the commit, no flush needed. */
		get_expect(b, 1, sb_size, &sb);
		CHECK_EQ(grb_reader_read(b, HDR, tmp, sb_size - HDR), 0);
		for (i = 0; i < sb_size - HDR; i++)
			CHECK_EQ(tmp[i], 0xaa);
		CHECK_EQ(grb_reader_put_next(b), 0);
	}
}

struct str_case {
	const char *s;
	size_t field;
};

static void test_strings(void)
{
	static char long_str[4801], dst[5000];
	static unsigned char field[5000];
	const struct str_case cases[] = {
		{ "hello", 16 }, { "hello", 6 }, { "hello", 5 }, { "hello", 2 },
		{ "hello", 1 }, { "", 1 }, { "", 9 }, { long_str, 100 },
		{ long_str, 4801 }, { long_str, 4802 }, { long_str, 4900 },
	};
	const unsigned int n = sizeof(cases) / sizeof(cases[0]);
	struct grb_channel *chan = create(BIG_SB, 2);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	size_t off[sizeof(cases) / sizeof(cases[0])], want, len, used = HDR, i;
	struct grb_reader_subbuf sb;
	struct grb_ctx ctx;
	unsigned int k;

	for (i = 0; i < sizeof(long_str) - 1; i++)
		long_str[i] = (char)('a' + i % 26);
	long_str[sizeof(long_str) - 1] = '\0';
	dirty(chan, BIG_SB);
	for (k = 0; k < n; k++) {
		ctx = (struct grb_ctx)GRB_CTX_INIT(cases[k].field, 1);
		CHECK_EQ(grb_reserve(&wcfg, chan, &ctx), 0);
		off[k] = ctx.pre_offset & (BIG_SB - 1);
		grb_write_str(&wcfg, &ctx, cases[k].s, cases[k].field);
		/* The whole field is written, string and NUL fill. */
		CHECK(ctx.wptr == ctx.wend);
		grb_commit(&wcfg, &ctx);
		used += cases[k].field;
	}
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	get_expect(b, n, used, &sb);
	for (k = 0; k < n; k++) {
		want = strlen(cases[k].s);
		if (want > cases[k].field - 1)
			want = cases[k].field - 1;
		memset(dst, 'X', sizeof(dst));
		CHECK_EQ(grb_reader_read_cstr(b, off[k], dst, sizeof(dst),
					      &len), 0);
		CHECK_U64(len, want);
		CHECK(memcmp(dst, cases[k].s, want) == 0);
		CHECK_EQ(dst[want], '\0');
		/* After the string, the rest of the field is NUL, although
		 * the memory held 0xaa before. */
		CHECK_EQ(grb_reader_read(b, off[k], field, cases[k].field), 0);
		CHECK(memcmp(field, cases[k].s, want) == 0);
		for (i = want; i < cases[k].field; i++)
			CHECK_EQ(field[i], 0);
	}
	CHECK_EQ(grb_reader_put_next(b), 0);
	destroy(chan);
}

/* Where test_fill_and_align() put things, as sub-buffer offsets. */
struct aligned_rec {
	size_t fill_off;    /* the fill record */
	size_t start;       /* the aligned record: its 'A' */
	size_t a_off;       /* its u64, on 8 */
	size_t w_off;       /* its 16 'B', on 16 */
	size_t v_off;       /* its 8 'C', on the page */
	size_t p_off;       /* the end of what was written */
	size_t end;         /* the end of its slot */
};

static const uint64_t aligned_word = UINT64_C(0x1122334455667788);

/*
 * One record of fills: 100 x 0x5c, none of 0x00, 1 x 0xff, 52 x 0; its
 * odd size leaves the next record unaligned.  Then one record laid out
 * with grb_ctx_align: a byte, a u64 on 8 bytes, a 16-byte block on 16,
 * and 8 bytes on the next page.  That slot is sized for the worst-case
 * padding; what is skipped is not written.
 */
static void write_fill_and_align(struct grb_channel *chan,
				 struct aligned_rec *r)
{
	size_t size = 1 + 7 + 8 + 15 + 16 + (PAGE - 1) + 8;
	struct grb_ctx ctx = GRB_CTX_INIT(153, 1);
	char *base;

	CHECK_EQ(grb_reserve(&wcfg, chan, &ctx), 0);
	r->fill_off = ctx.pre_offset & (BIG_SB - 1);
	grb_write_fill(&wcfg, &ctx, 0x5c, 100);
	grb_write_fill(&wcfg, &ctx, 0, 0);
	grb_write_fill(&wcfg, &ctx, 0x1ff, 1);   /* converted to a byte */
	grb_write_fill(&wcfg, &ctx, 0, 52);
	CHECK(ctx.wptr == ctx.wend);
	grb_commit(&wcfg, &ctx);

	ctx = (struct grb_ctx)GRB_CTX_INIT(size, 1);
	CHECK_EQ(grb_reserve(&wcfg, chan, &ctx), 0);
	r->start = ctx.pre_offset & (BIG_SB - 1);
	CHECK_EQ(r->start, r->fill_off + 153);
	base = ctx.wptr - r->start;
	grb_write(&wcfg, &ctx, "A", 1);
	grb_ctx_align(&wcfg, &ctx, 1);            /* never moves */
	CHECK_U64((uint64_t)(ctx.wptr - base), r->start + 1);
	grb_ctx_align(&wcfg, &ctx, 8);
	r->a_off = (size_t)(ctx.wptr - base);
	CHECK_U64(r->a_off, grb_align(r->start + 1, 8));
	CHECK_U64((uintptr_t)ctx.wptr % 8, 0);
	grb_ctx_align(&wcfg, &ctx, 8);            /* already aligned */
	CHECK_U64((uint64_t)(ctx.wptr - base), r->a_off);
	grb_write(&wcfg, &ctx, &aligned_word, sizeof(aligned_word));
	grb_ctx_align(&wcfg, &ctx, 16);
	r->w_off = (size_t)(ctx.wptr - base);
	CHECK_U64(r->w_off, grb_align(r->a_off + 8, 16));
	grb_write_fill(&wcfg, &ctx, 'B', 16);
	grb_ctx_align(&wcfg, &ctx, PAGE);
	r->v_off = (size_t)(ctx.wptr - base);
	CHECK_U64(r->v_off, grb_align(r->w_off + 16, PAGE));
	CHECK_U64((uintptr_t)ctx.wptr % PAGE, 0);
	grb_write_fill(&wcfg, &ctx, 'C', 8);
	r->p_off = (size_t)(ctx.wptr - base);
	CHECK(ctx.wptr <= ctx.wend);
	grb_commit(&wcfg, &ctx);
	r->end = r->start + size;
}

/* Bytes [from, to) of the sub-buffer, read into rec from fill_off on. */
static void expect_range(const unsigned char *rec, const struct aligned_rec *r,
			 size_t from, size_t to, unsigned char c)
{
	size_t i;

	for (i = from; i < to; i++)
		CHECK_EQ(rec[i - r->fill_off], c);
}

static void test_fill_and_align(void)
{
	static unsigned char rec[8192];
	struct grb_channel *chan = create(BIG_SB, 2);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	struct aligned_rec r;
	size_t i;

	/* The padding skipped must keep the 0xaa of the earlier lap. */
	dirty(chan, BIG_SB);
	write_fill_and_align(chan, &r);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	get_expect(b, 2, r.end, &sb);
	CHECK(r.end - r.fill_off <= sizeof(rec));
	CHECK_EQ(grb_reader_read(b, r.fill_off, rec, r.end - r.fill_off), 0);
	for (i = 0; i < 153; i++)
		CHECK_EQ(rec[i], i < 100 ? 0x5c : i == 100 ? 0xff : 0);
	expect_range(rec, &r, r.start, r.start + 1, 'A');
	expect_range(rec, &r, r.start + 1, r.a_off, 0xaa);
	CHECK(memcmp(rec + r.a_off - r.fill_off, &aligned_word, 8) == 0);
	expect_range(rec, &r, r.a_off + 8, r.w_off, 0xaa);
	expect_range(rec, &r, r.w_off, r.w_off + 16, 'B');
	expect_range(rec, &r, r.w_off + 16, r.v_off, 0xaa);
	expect_range(rec, &r, r.v_off, r.p_off, 'C');
	/* The unused tail of the slot is not written either. */
	expect_range(rec, &r, r.p_off, r.end, 0xaa);
	/* Each step did skip something, or the 0xaa checks prove little. */
	CHECK(r.a_off > r.start + 1);
	CHECK(r.w_off > r.a_off + 8);
	CHECK(r.v_off > r.w_off + 16);
	CHECK(r.end > r.p_off);
	CHECK_EQ(grb_reader_put_next(b), 0);
	destroy(chan);
}

/* One record of @size bytes of @c, aligned on @align. */
static struct grb_ctx put(struct grb_channel *chan, size_t size, size_t align,
			  int c)
{
	struct grb_ctx ctx = GRB_CTX_INIT(size, align);

	CHECK_EQ(grb_reserve(&wcfg, chan, &ctx), 0);
	grb_ctx_align(&wcfg, &ctx, align);
	CHECK(ctx.wend - ctx.wptr == (ptrdiff_t)size);
	grb_write_fill(&wcfg, &ctx, c, size);
	grb_commit(&wcfg, &ctx);
	return ctx;
}

/* The record at @off of the held sub-buffer is @size bytes of @c. */
static void expect_bytes(struct grb_buf *b, size_t off, size_t size, int c)
{
	static unsigned char tmp[PAGE];
	size_t i;

	CHECK_EQ(grb_reader_read(b, off, tmp, size), 0);
	for (i = 0; i < size; i++)
		CHECK_EQ(tmp[i], (unsigned char)c);
}

/* In 4 KiB sub-buffers: exact fills and switches, at every path. */
static void test_subbuf_ends(void)
{
	struct grb_channel *chan = create(PAGE, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	struct grb_ctx ctx;
	char c;

	/* Exact fill by the record that opens the sub-buffer. */
	ctx = put(chan, PAGE - HDR, 1, 1);
	CHECK_U64(ctx.pre_offset, HDR);
	CHECK_U64(ctx.end, PAGE);
	get_expect(b, 1, PAGE, &sb);
	expect_bytes(b, HDR, PAGE - HDR, 1);
	CHECK_EQ(grb_reader_put_next(b), 0);
	/* Nothing is left open after it. */
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), -ENODATA);

	/* Exact fill by a record after others: the fast path sees it reach
	 * the end and hands it to the slow path, which closes at once. */
	put(chan, 100, 1, 2);
	put(chan, 100, 1, 3);
	put(chan, 100, 1, 4);
	ctx = put(chan, PAGE - HDR - 300, 1, 5);
	CHECK_U64(ctx.end, 2 * PAGE);
	get_expect(b, 4, PAGE, &sb);
	expect_bytes(b, HDR + 200, 100, 4);
	expect_bytes(b, HDR + 300, PAGE - HDR - 300, 5);
	CHECK_EQ(grb_reader_put_next(b), 0);

	/* One byte too large for what is left: it moves on, and the old
	 * sub-buffer is delivered with its 3 records and padded. */
	put(chan, 100, 1, 6);
	put(chan, 100, 1, 7);
	put(chan, 100, 1, 8);
	ctx = put(chan, PAGE - HDR - 300 + 1, 1, 9);
	CHECK_U64(ctx.pre_offset, 3 * PAGE + HDR);
	get_expect(b, 3, HDR + 300, &sb);
	CHECK_U64(sb.padded_size, PAGE);
	expect_bytes(b, HDR + 200, 100, 8);
	CHECK_EQ(grb_reader_read(b, HDR + 300, &c, 1), -ERANGE);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_reader_get_next(b), -EAGAIN);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	get_expect(b, 1, HDR + PAGE - HDR - 300 + 1, &sb);
	expect_bytes(b, HDR, PAGE - HDR - 300 + 1, 9);
	CHECK_EQ(grb_reader_put_next(b), 0);

	/*
	 * With alignment: after a 4-byte record the position is 36, so an
	 * 8-aligned record has 4 bytes of padding before it.  4056 bytes
	 * then fill the sub-buffer exactly; 4057 do not fit.
	 */
	put(chan, 4, 1, 10);
	ctx = put(chan, PAGE - HDR - 8, 8, 11);
	CHECK_U64(ctx.pre_offset, 4 * PAGE + HDR + 4);
	CHECK_U64(ctx.slot_size, PAGE - HDR - 4);
	get_expect(b, 2, PAGE, &sb);
	expect_bytes(b, HDR, 4, 10);
	expect_bytes(b, HDR + 8, PAGE - HDR - 8, 11);
	CHECK_EQ(grb_reader_put_next(b), 0);
	put(chan, 4, 1, 12);
	ctx = put(chan, PAGE - HDR - 8 + 1, 8, 13);
	/* At the next sub-buffer's 32 the record is already aligned. */
	CHECK_U64(ctx.pre_offset, 6 * PAGE + HDR);
	CHECK_U64(ctx.slot_size, PAGE - HDR - 8 + 1);
	get_expect(b, 1, HDR + 4, &sb);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
	get_expect(b, 1, PAGE - 8 + 1, &sb);
	expect_bytes(b, HDR, PAGE - HDR - 8 + 1, 13);
	CHECK_EQ(grb_reader_put_next(b), 0);

	/* A header-only sub-buffer pads to one page. */
	CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_EMPTY), 0);
	get_expect(b, 0, HDR, &sb);
	CHECK_U64(sb.padded_size, page_size);
	CHECK_EQ(grb_reader_put_next(b), 0);
	destroy(chan);
}

/* padded_size in a large sub-buffer: data sizes around page multiples. */
static void test_padded_size(void)
{
	static const size_t sizes[] = {
		PAGE - HDR - 1, PAGE - HDR, PAGE - HDR + 1, 2 * PAGE - HDR,
		3 * PAGE - HDR + 5, BIG_SB - HDR - 1,
	};
	struct grb_channel *chan = create(BIG_SB, 4);
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	unsigned int k;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		put(chan, sizes[k], 1, (int)k);
		CHECK_EQ(grb_buf_flush(b, GRB_FLUSH_ACTIVE), 0);
		get_expect(b, 1, HDR + sizes[k], &sb);
		CHECK(sb.padded_size >= sb.data_size);
		CHECK(sb.padded_size - sb.data_size < page_size);
		expect_bytes(b, HDR + sizes[k] - 1, 1, (int)k);
		CHECK_EQ(grb_reader_put_next(b), 0);
	}
	destroy(chan);
}

int main(void)
{
	page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	CHECK(page_size >= 4096 && page_size <= BIG_SB / 4);
	test_page_crossing();
	test_strings();
	test_fill_and_align();
	/* Its offsets assume sub-buffers of one 4 KiB page. */
	if (page_size == PAGE)
		test_subbuf_ends();
	else
		printf("test_writes: page size %llu, 4 KiB sub-buffer cases "
		       "skipped\n", (unsigned long long)page_size);
	test_padded_size();
	printf("test_writes: passed\n");
	return 0;
}
