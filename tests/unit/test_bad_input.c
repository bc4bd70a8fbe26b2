/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_bad_input.c - bad input across the public API: every
 * refusal returns the errno its header names, and changes nothing.
 *
 * The errno tests (test_errors*.c) and the audits of each header check
 * which errno a bad argument gets.  What they check only here and there
 * is the second half of the promise: that a refused call leaves
 * everything as it was.  Here each refusal runs against channels that
 * hold records (delivered sub-buffers, an open one, a held or pinned
 * one), and after each one the whole mapping of every buffer is compared
 * byte for byte with a copy taken before (positions, counters, reader
 * state, wait words, sub-buffer ids, the data), together with the
 * statistics and the process's descriptors and threads; a refusal the
 * header says is counted (a record too big for a sub-buffer) changes its
 * counter by one and nothing else.  At the end every record written is
 * read back, intact and in order, and the counters add up.
 *
 * Covered: grb/channel.h, config.h, writer.h (sizes and alignments that
 * wrap, a zero-byte string field, a zero alignment), reader.h in each
 * state (not open, nothing held, a sub-buffer taken, one pinned,
 * finalized), iter.h
 * (a refused call does not move the iterator), output.h (bad
 * descriptors, a caller's pipe that is not empty), wait.h, timer.h,
 * validate.h, recover.h, shm.h (a refused receive leaves the message on
 * the socket), basic.h, ctf.h and grb_strerror() for every errno a
 * header lists; and a finalized channel, where writes, flushes and ticks
 * refuse or do nothing.
 *
 * The client: a 16-byte sub-buffer header, then records of a 4-byte
 * length word (4-byte aligned) and a payload whose first 8 bytes are a
 * tag and the rest the tag's low byte; no clock.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/ctf.h"
#include "grb/grb.h"

#define SB 4096
#define NSUB 4
#define HDR 16
#define MAGIC 0x62616431u       /* "bad1" */
#define MAXTAGS 512
#define CLIENT "bad-client"     /* of the shared channels */

/* ---- the client ------------------------------------------------------ */

static size_t bi_subbuf_header(void)
{
	return HDR;
}

static void bi_begin(struct grb_buf *buf, void *header,
		     const struct grb_subbuf_info *info)
{
	uint32_t m = MAGIC;

	(void)buf;
	memcpy(header, &m, sizeof(m));
	memcpy((char *)header + 8, &info->seq, sizeof(info->seq));
}

static size_t bi_header(const struct grb_config *cfg, size_t offset,
			size_t *pre, const struct grb_ctx *ctx)
{
	(void)cfg;
	(void)ctx;
	*pre = grb_offset_align(offset, 4);
	return *pre + 4;
}

static int bi_decode(const struct grb_config *cfg, const void *subbuf,
		     size_t offset, size_t data_size, struct grb_record *rec)
{
	size_t at = offset + grb_offset_align(offset, 4);
	uint32_t len;

	(void)cfg;
	if (at > data_size || data_size - at < 4)
		return -EINVAL;
	memcpy(&len, (const char *)subbuf + at, sizeof(len));
	if (len < 8 || len > data_size - at - 4)
		return -EINVAL;
	rec->offset = at;
	rec->header_len = 4;
	rec->payload_off = at + 4;
	rec->payload_len = len;
	rec->next = at + 4 + len;
	rec->timestamp = 0;
	rec->rflags = 0;
	return 0;
}

#define BI_CB { .record_header_size = bi_header,                         \
		.subbuf_header_size = bi_subbuf_header,                  \
		.buffer_begin = bi_begin, .record_decode = bi_decode }

static const struct grb_config pcpu_disc = {
	GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, BI_CB, GRB_CONFIG_SYNC_PER_CPU,
};
static const struct grb_config chan_ovw = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 0, BI_CB, 0,
};
static const struct grb_config chan_disc = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, BI_CB, 0,
};
static const struct grb_config chan_shared = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, BI_CB, GRB_CONFIG_SHARED,
};
static const struct grb_config pcpu_ovw_shared = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 0, BI_CB, GRB_CONFIG_SHARED,
};
/* The same format without a decoder: iterators refuse it. */
static const struct grb_config chan_nodec = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0,
	{ .record_header_size = bi_header,
	  .subbuf_header_size = bi_subbuf_header }, 0,
};

/* A grb_write_record() fill that a refused write must never call. */
static int fill_calls;

static void fill_never(const struct grb_config *cfg, struct grb_ctx *ctx)
{
	(void)cfg;
	(void)ctx;
	fill_calls++;
}

/* What was written, per buffer, in order. */
struct wlog {
	unsigned int n;
	unsigned int first;     /* those before it are read already */
	uint64_t tag[MAXTAGS];
};

static size_t rec_len(uint64_t tag)
{
	return 8 + (size_t)(tag % 7) * 20;
}

/* One record; logged in the buffer it went to. */
static int put(const struct grb_config *cfg, struct grb_channel *chan,
	       struct wlog *log, uint64_t tag)
{
	size_t len = rec_len(tag);
	uint32_t word = (uint32_t)len;
	struct grb_ctx ctx = GRB_CTX_INIT(len, 1);
	int ret = grb_reserve(cfg, chan, &ctx);

	if (ret)
		return ret;
	grb_write(cfg, &ctx, &word, sizeof(word));
	grb_write(cfg, &ctx, &tag, sizeof(tag));
	grb_write_fill(cfg, &ctx, (int)(tag & 0xff), len - 8);
	grb_commit(cfg, &ctx);
	CHECK(log[ctx.cpu].n < MAXTAGS);
	log[ctx.cpu].tag[log[ctx.cpu].n++] = tag;
	return 0;
}

/* Check the payload of a record (its tag and fill) and return the tag. */
static uint64_t check_payload(const unsigned char *p, size_t len)
{
	uint64_t tag;
	size_t i;

	CHECK(len >= 8);
	memcpy(&tag, p, sizeof(tag));
	CHECK_EQ(len, rec_len(tag));
	for (i = 8; i < len; i++)
		CHECK_EQ(p[i], tag & 0xff);
	return tag;
}

/* Append the records of the sub-buffer @b holds to @got. */
static void read_held(struct grb_buf *b, struct wlog *got)
{
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	uint32_t m;
	size_t off;

	CHECK_EQ(grb_reader_held(b, &sb), 0);
	memcpy(&m, sb.data, sizeof(m));
	CHECK_EQ(m, MAGIC);
	for (off = HDR; off < sb.data_size; off = rec.next) {
		CHECK_EQ(grb_reader_record(b, off, &rec), 0);
		CHECK(got->n < MAXTAGS);
		got->tag[got->n++] = check_payload(
			(const unsigned char *)sb.data + rec.payload_off,
			rec.payload_len);
	}
}

/*
 * Give back what @b's reader holds: a sub-buffer taken with get_next is
 * read into @got first; a pinned one goes back unconsumed, and get_next
 * returns it again.
 */
static void unhold(struct grb_buf *b, struct wlog *got)
{
	struct grb_reader_subbuf sb;

	if (grb_reader_held(b, &sb) != 0 || grb_reader_put_subbuf(b) == 0)
		return;
	read_held(b, got);
	CHECK_EQ(grb_reader_put_next(b), 0);
}

/*
 * Read every buffer of @chan to its end (what its reader holds first,
 * then each delivered sub-buffer after a flush) and compare with @log:
 * every record written, intact, in order, none twice.  Then the counters:
 * nothing refused for want of room (lost_big is the writer test's),
 * nothing overwritten, every record written read.
 */
static void read_back(struct grb_channel *chan, const struct wlog *log)
{
	struct grb_buf_stats st;
	struct wlog got;
	struct grb_buf *b;
	unsigned int i, k;
	int ret;

	for (i = 0; i < grb_channel_nr_bufs(chan); i++) {
		b = grb_channel_buf(chan, i);
		memset(&got, 0, sizeof(got));
		if (grb_reader_open(b) == -EBUSY)
			unhold(b, &got);
		ret = grb_buf_flush(b, GRB_FLUSH_ACTIVE);
		CHECK(ret == 0 || ret == -ENODATA);
		while (grb_reader_get_next(b) == 0) {
			read_held(b, &got);
			CHECK_EQ(grb_reader_put_next(b), 0);
		}
		CHECK_EQ(got.n, log[i].n - log[i].first);
		for (k = 0; k < got.n; k++)
			CHECK_U64(got.tag[k], log[i].tag[log[i].first + k]);
		CHECK_EQ(grb_buf_get_stats(b, &st), 0);
		CHECK_U64(st.lost_full + st.lost_wrap + st.lost_nesting, 0);
		CHECK_U64(st.overwritten, 0);
		CHECK_U64(st.written, log[i].n);
		CHECK_U64(st.written, st.read);
		CHECK_EQ(grb_buf_validate(b, NULL, 0), 0);
		CHECK_EQ(grb_reader_release(b), 0);
	}
}

/* ---- "nothing changed" ------------------------------------------------ */

static int count_entries(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	CHECK(d != NULL);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * Everything a refused call could change: each buffer's whole mapping
 * (description, positions, counters, reader state, wait words, ids,
 * data) and statistics, the channel's sum, and the process's descriptors
 * and threads.  Up to four channels at once.
 */
#define SNAP_CHANS 4
struct snap {
	unsigned int nchan;
	struct grb_channel *chan[SNAP_CHANS];
	unsigned char **map[SNAP_CHANS];
	struct grb_buf_stats *st[SNAP_CHANS];
	struct grb_buf_stats sum[SNAP_CHANS];
	int fds, threads;
};

static void snap_free(struct snap *s)
{
	unsigned int c, i;

	for (c = 0; c < s->nchan; c++) {
		for (i = 0; i < grb_channel_nr_bufs(s->chan[c]); i++)
			free(s->map[c][i]);
		free(s->map[c]);
		free(s->st[c]);
	}
	s->nchan = 0;
}

static void snap_fill(struct snap *s)
{
	struct grb_buf *b;
	unsigned int c, i, n;

	for (c = 0; c < s->nchan; c++) {
		n = grb_channel_nr_bufs(s->chan[c]);
		s->map[c] = calloc(n, sizeof(*s->map[c]));
		s->st[c] = calloc(n, sizeof(*s->st[c]));
		CHECK(s->map[c] != NULL && s->st[c] != NULL);
		for (i = 0; i < n; i++) {
			b = grb_channel_buf(s->chan[c], i);
			s->map[c][i] = malloc(b->map_size);
			CHECK(s->map[c][i] != NULL);
			memcpy(s->map[c][i], b->shm, b->map_size);
			CHECK_EQ(grb_buf_get_stats(b, &s->st[c][i]), 0);
		}
		CHECK_EQ(grb_channel_get_stats(s->chan[c], &s->sum[c]), 0);
	}
	s->fds = count_entries("/proc/self/fd");
	s->threads = count_entries("/proc/self/task");
}

/* A snapshot of the channels given, NULL-ended. */
static void snap_take(struct snap *s, struct grb_channel *first, ...)
{
	struct grb_channel *c;
	va_list ap;

	snap_free(s);
	va_start(ap, first);
	for (c = first; c; c = va_arg(ap, struct grb_channel *)) {
		CHECK(s->nchan < SNAP_CHANS);
		s->chan[s->nchan++] = c;
	}
	va_end(ap);
	snap_fill(s);
}

/* Take the same snapshot again, after an expected change. */
static void snap_retake(struct snap *s)
{
	struct grb_channel *chan[SNAP_CHANS];
	unsigned int n = s->nchan;

	memcpy(chan, s->chan, sizeof(chan));
	snap_free(s);
	s->nchan = n;
	memcpy(s->chan, chan, sizeof(chan));
	snap_fill(s);
}

static void stats_same(const struct grb_buf_stats *a,
		       const struct grb_buf_stats *b, const char *what,
		       int line)
{
	static const char *const names[] = {
		"written", "read", "overwritten", "lost_full", "lost_wrap",
		"lost_big", "lost_nesting", "discarded", "produced",
		"consumed", "lost_dead", "recovered", "remote_commits",
		"remote_moves",
	};
	uint64_t x[sizeof(names) / sizeof(names[0])];
	uint64_t y[sizeof(names) / sizeof(names[0])];
	unsigned int i;

	_Static_assert(sizeof(x) == sizeof(*a), "a name per counter");
	if (memcmp(a, b, sizeof(*a)) == 0)
		return;
	memcpy(x, a, sizeof(x));
	memcpy(y, b, sizeof(y));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (x[i] != y[i])
			fprintf(stderr, "line %d: %s changed %s from %llu to "
				"%llu\n", line, what, names[i],
				(unsigned long long)x[i],
				(unsigned long long)y[i]);
	exit(1);
}

/* Calls checked for changes, for the summary line. */
static unsigned int checked;

/* Everything as in @s, or a message naming the call and what moved. */
static void snap_check(const struct snap *s, const char *what, int line)
{
	struct grb_buf_stats st;
	const unsigned char *now;
	struct grb_buf *b;
	unsigned int c, i;
	size_t k;

	checked++;
	for (c = 0; c < s->nchan; c++) {
		for (i = 0; i < grb_channel_nr_bufs(s->chan[c]); i++) {
			b = grb_channel_buf(s->chan[c], i);
			CHECK_EQ(grb_buf_get_stats(b, &st), 0);
			stats_same(&s->st[c][i], &st, what, line);
			now = (const unsigned char *)b->shm;
			if (memcmp(now, s->map[c][i], b->map_size) == 0)
				continue;
			for (k = 0; now[k] == s->map[c][i][k]; k++)
				;
			fprintf(stderr, "line %d: %s changed channel %u buffer"
				" %u at byte %zu of its mapping (the first %zu"
				" are its description)\n", line, what, c, i, k,
				sizeof(struct grb_buf_shm));
			exit(1);
		}
		CHECK_EQ(grb_channel_get_stats(s->chan[c], &st), 0);
		stats_same(&s->sum[c], &st, what, line);
	}
	if (count_entries("/proc/self/fd") != s->fds ||
	    count_entries("/proc/self/task") != s->threads) {
		fprintf(stderr, "line %d: %s left a descriptor or a thread\n",
			line, what);
		exit(1);
	}
}

/* A refused call: its errno, and nothing changed. */
#define BAD(s, call, err) do {                                            \
	CHECK_EQ((call), (err));                                          \
	snap_check((s), #call, __LINE__);                                 \
} while (0)

/* A call that returns no errno (a pointer, a count, void): its value,
 * and nothing changed. */
#define SAME(s, cond) do {                                                \
	CHECK(cond);                                                      \
	snap_check((s), #cond, __LINE__);                                 \
} while (0)

/* ---- channels with records ------------------------------------------ */

static cpu_set_t all_cpus;
static int cpus[2], ncpus;
static uint64_t next_tag = 1;

static void read_cpus(void)
{
	int c;

	CHECK_EQ(sched_getaffinity(0, sizeof(all_cpus), &all_cpus), 0);
	for (c = 0; c < CPU_SETSIZE && ncpus < 2; c++)
		if (CPU_ISSET(c, &all_cpus))
			cpus[ncpus++] = c;
	CHECK(ncpus > 0);
}

static void pin(int c)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

static void unpin(void)
{
	CHECK_EQ(sched_setaffinity(0, sizeof(all_cpus), &all_cpus), 0);
}

static int is_shared(const struct grb_config *cfg)
{
	return (cfg->flags & GRB_CONFIG_SHARED) != 0;
}

/* A channel of @cfg, in shared memory (memfds) when @cfg says so. */
static struct grb_channel *make(const struct grb_config *cfg)
{
	struct grb_channel_attr attr = { "bad", SB, NSUB, NULL };
	struct grb_shm_attr sa = { CLIENT, NULL, -1 };
	struct grb_channel *chan = NULL;

	if (is_shared(cfg))
		CHECK_EQ(grb_channel_create_shared(cfg, &attr, &sa, &chan), 0);
	else
		CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	return chan;
}

static struct wlog *new_log(struct grb_channel *chan)
{
	struct wlog *log = calloc(grb_channel_nr_bufs(chan), sizeof(*log));

	CHECK(log != NULL);
	return log;
}

/* The buffer records written on CPU @c go to. */
static unsigned int buf_of(const struct grb_config *cfg, int c)
{
	return cfg->alloc == GRB_ALLOC_PER_CPU ? (unsigned int)c : 0;
}

/*
 * Write two and a half sub-buffers more into the buffer of CPU @c (or
 * the only one): on a fresh buffer, two delivered and one open with
 * records committed.
 */
static void fill(const struct grb_config *cfg, struct grb_channel *chan,
		 struct wlog *log, int c)
{
	struct grb_buf *b = grb_channel_buf(chan, buf_of(cfg, c));
	struct grb_buf_stats st;
	uint64_t end;

	pin(c);
	CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	end = st.produced + 2 * SB + SB / 2;
	do {
		CHECK_EQ(put(cfg, chan, log, next_tag++), 0);
		CHECK_EQ(grb_buf_get_stats(b, &st), 0);
	} while (st.produced < end);
	unpin();
}

/*
 * Take the first sub-buffer of @b and check it against the head of
 * @log, whose first record to read is then the next one: the consumed
 * position is past 0.
 */
static void consume_first(struct grb_buf *b, struct wlog *log)
{
	struct wlog got;
	unsigned int k;

	memset(&got, 0, sizeof(got));
	CHECK_EQ(grb_reader_get_next(b), 0);
	read_held(b, &got);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK(got.n > 0 && got.n <= log->n);
	for (k = 0; k < got.n; k++)
		CHECK_U64(got.tag[k], log->tag[k]);
	log->first = got.n;
}

/* What the reader holds when the refusals run; HOLD_FINAL: nothing, on a
 * finalized channel. */
enum hold { HOLD_NONE, HOLD_NEXT, HOLD_POS, HOLD_FINAL };

/* ---- grb/channel.h, config.h, timer.h, validate.h, recover.h ---------- */

static void bad_create(struct snap *s)
{
	static const struct grb_config bad_cfgs[] = {
		{ (enum grb_alloc)2, GRB_MODE_DISCARD, 0, BI_CB, 0 },
		{ GRB_ALLOC_PER_CHANNEL, (enum grb_mode)-1, 0, BI_CB, 0 },
		{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 65, BI_CB, 0 },
		{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 16, BI_CB, 0 },
		{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, BI_CB, 4 },
		{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, BI_CB,
		  GRB_CONFIG_SYNC_PER_CPU },
	};
	static const size_t bad_geo[][2] = {
		{ 0, NSUB }, { SB + 1, NSUB }, { SB / 2, NSUB },
		{ (size_t)GRB_SUBBUF_SIZE_MAX * 2, NSUB }, { SIZE_MAX, NSUB },
		{ SB, 0 }, { SB, 1 }, { SB, 3 },
		{ SB, (size_t)GRB_NUM_SUBBUF_MAX * 2 }, { SB, SIZE_MAX },
		/* 2^49 bytes. */
		{ (size_t)1 << 30, (size_t)1 << 19 },
	};
	struct grb_channel_attr attr = { "bad", SB, NSUB, NULL };
	struct grb_channel *mark = (struct grb_channel *)&attr, *c = mark;
	unsigned int i;

	BAD(s, grb_channel_create(NULL, &attr, &c), -EINVAL);
	BAD(s, grb_channel_create(&chan_disc, NULL, &c), -EINVAL);
	BAD(s, grb_channel_create(&chan_disc, &attr, NULL), -EINVAL);
	for (i = 0; i < sizeof(bad_cfgs) / sizeof(bad_cfgs[0]); i++) {
		BAD(s, grb_config_check(&bad_cfgs[i]), -EINVAL);
		BAD(s, grb_channel_create(&bad_cfgs[i], &attr, &c), -EINVAL);
	}
	for (i = 0; i < sizeof(bad_geo) / sizeof(bad_geo[0]); i++) {
		attr.subbuf_size = bad_geo[i][0];
		attr.num_subbuf = bad_geo[i][1];
		BAD(s, grb_channel_create(&chan_disc, &attr, &c), -EINVAL);
	}
	CHECK(c == mark);
	BAD(s, grb_config_check(NULL), -EINVAL);
}

static void bad_channel_calls(struct snap *s, struct grb_channel *chan,
			      struct grb_buf *b)
{
	struct grb_buf_stats st, st0;
	struct grb_memory mem, mem0;
	struct grb_recover_info info, info0;
	struct grb_ticker *t = (struct grb_ticker *)&st;
	enum grb_path_reason why = (enum grb_path_reason)77;
	char msg[16] = "untouched";
	unsigned int n = grb_channel_nr_bufs(chan);
	int sp[2];
	char c;

	bad_create(s);
	grb_channel_destroy(NULL);
	/* Unknown flush kinds: the open sub-buffer stays open. */
	BAD(s, grb_buf_flush(NULL, GRB_FLUSH_ACTIVE), -EINVAL);
	BAD(s, grb_buf_flush(b, (enum grb_flush)2), -EINVAL);
	BAD(s, grb_buf_flush(b, (enum grb_flush)-1), -EINVAL);
	BAD(s, grb_buf_flush(b, (enum grb_flush)INT_MAX), -EINVAL);
	BAD(s, grb_channel_flush(NULL, GRB_FLUSH_EMPTY), -EINVAL);
	BAD(s, grb_channel_flush(chan, (enum grb_flush)3), -EINVAL);
	BAD(s, grb_channel_flush(chan, (enum grb_flush)INT_MIN), -EINVAL);
	BAD(s, grb_channel_finalize(NULL), -EINVAL);
	BAD(s, grb_channel_record_disable(NULL), -EINVAL);
	BAD(s, grb_channel_record_enable(NULL), -EINVAL);
	BAD(s, grb_buf_record_disable(NULL), -EINVAL);
	BAD(s, grb_buf_record_enable(NULL), -EINVAL);
	/* Out-of-range indexes, NULL handles. */
	SAME(s, grb_channel_nr_bufs(NULL) == 0);
	SAME(s, grb_channel_buf(chan, n) == NULL);
	SAME(s, grb_channel_buf(chan, n + 1) == NULL);
	SAME(s, grb_channel_buf(chan, UINT_MAX) == NULL);
	SAME(s, grb_channel_buf(NULL, 0) == NULL);
	SAME(s, grb_channel_priv(NULL) == NULL);
	SAME(s, grb_buf_cpu(NULL) == -1);
	SAME(s, grb_buf_channel(NULL) == NULL);
	SAME(s, grb_reader_first_record(NULL) == 0);
	BAD(s, grb_channel_write_path(NULL, &why), -EINVAL);
	CHECK_EQ(why, 77);
	/* Refused statistics leave the caller's struct alone. */
	memset(&st, 0xa5, sizeof(st));
	st0 = st;
	BAD(s, grb_buf_get_stats(NULL, &st), -EINVAL);
	BAD(s, grb_buf_get_stats(b, NULL), -EINVAL);
	BAD(s, grb_channel_get_stats(NULL, &st), -EINVAL);
	BAD(s, grb_channel_get_stats(chan, NULL), -EINVAL);
	CHECK_EQ(memcmp(&st, &st0, sizeof(st)), 0);
	memset(&mem, 0xa5, sizeof(mem));
	mem0 = mem;
	BAD(s, grb_channel_memory(NULL, &mem), -EINVAL);
	BAD(s, grb_channel_memory(chan, NULL), -EINVAL);
	CHECK_EQ(memcmp(&mem, &mem0, sizeof(mem)), 0);

	/* grb/timer.h: an unknown bit refuses the whole tick (the open
	 * sub-buffer is not flushed), and no ticker thread starts. */
	BAD(s, grb_channel_tick(NULL, GRB_TICK_FLUSH), -EINVAL);
	BAD(s, grb_channel_tick(chan, GRB_TICK_FLUSH | (1u << 2)), -EINVAL);
	BAD(s, grb_channel_tick(chan, GRB_TICK_IDLE | (1u << 31)), -EINVAL);
	BAD(s, grb_channel_tick(chan, ~0u), -EINVAL);
	BAD(s, grb_ticker_start(NULL, 1000, GRB_TICK_FLUSH, &t), -EINVAL);
	BAD(s, grb_ticker_start(chan, 0, GRB_TICK_FLUSH, &t), -EINVAL);
	BAD(s, grb_ticker_start(chan, 1000, 1u << 2, &t), -EINVAL);
	BAD(s, grb_ticker_start(chan, 1000, GRB_TICK_FLUSH, NULL), -EINVAL);
	CHECK(t == (struct grb_ticker *)&st);
	BAD(s, grb_ticker_stop(NULL), -EINVAL);

	/* grb/validate.h: @msg is left alone on -EINVAL; a check of a
	 * quiescent buffer writes nothing. */
	BAD(s, grb_buf_validate(NULL, msg, sizeof(msg)), -EINVAL);
	CHECK_EQ(strcmp(msg, "untouched"), 0);
	BAD(s, grb_buf_validate(b, msg, sizeof(msg)), 0);
	BAD(s, grb_buf_validate(b, NULL, 100), 0);
	CHECK_EQ(strcmp(msg, "untouched"), 0);

	BAD(s, grb_buf_recover(NULL, 0, &info), -EINVAL);
	BAD(s, grb_channel_recover(NULL, 0, &info), -EINVAL);
	BAD(s, grb_channel_send(NULL, 0), -EINVAL);
	BAD(s, grb_channel_shm_fd(NULL, 0), -EINVAL);
	BAD(s, grb_channel_shm_fd(chan, n), -EINVAL);
	BAD(s, grb_channel_shm_fd(chan, UINT_MAX), -EINVAL);
	if (grb_channel_shm_fd(chan, 0) >= 0)
		return;

	/* grb/recover.h on a private channel: @info not written. */
	memset(&info, 0xa5, sizeof(info));
	info0 = info;
	BAD(s, grb_buf_recover(NULL, 0, &info), -EINVAL);
	BAD(s, grb_buf_recover(b, 0, &info), -EOPNOTSUPP);
	BAD(s, grb_buf_recover(b, UINT64_MAX, NULL), -EOPNOTSUPP);
	BAD(s, grb_channel_recover(NULL, 0, &info), -EINVAL);
	BAD(s, grb_channel_recover(chan, 0, &info), -EOPNOTSUPP);
	CHECK_EQ(memcmp(&info, &info0, sizeof(info)), 0);

	/* grb/shm.h on a private channel: nothing goes on the socket. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	snap_retake(s);
	BAD(s, grb_channel_send(chan, sp[0]), -EINVAL);
	BAD(s, grb_channel_send(NULL, sp[0]), -EINVAL);
	BAD(s, grb_channel_shm_fd(chan, 0), -EINVAL);
	CHECK_EQ(recv(sp[1], &c, 1, MSG_DONTWAIT), -1);
	CHECK_EQ(errno, EAGAIN);
	close(sp[0]);
	close(sp[1]);
	snap_retake(s);
}

/* ---- grb/wait.h ------------------------------------------------------- */

/* @b is open for reading, @ob's channel @other has no buffer open. */
static void bad_wait_calls(struct snap *s, struct grb_channel *chan,
			   struct grb_buf *b, struct grb_channel *other)
{
	struct grb_buf *ob = grb_channel_buf(other, 0);
	struct grb_watermark wm = { 1, 0 };
	int fd = -77;

	BAD(s, grb_buf_wait(NULL, NULL, 0), -EINVAL);
	BAD(s, grb_buf_wait(b, NULL, -2), -EINVAL);
	BAD(s, grb_buf_wait(b, &wm, INT64_MIN), -EINVAL);
	BAD(s, grb_buf_wait(ob, NULL, 0), -EPERM);
	BAD(s, grb_buf_wait(ob, &wm, GRB_WAIT_FOREVER), -EPERM);
	BAD(s, grb_channel_wait(NULL, NULL, 0), -EINVAL);
	BAD(s, grb_channel_wait(chan, &wm, -3), -EINVAL);
	BAD(s, grb_channel_wait(other, NULL, 0), -EPERM);
	BAD(s, grb_channel_wait(other, &wm, GRB_WAIT_FOREVER), -EPERM);
	/* No event fd is made for a refused call. */
	BAD(s, grb_channel_event_fd(NULL, &fd), -EINVAL);
	BAD(s, grb_channel_event_fd(chan, NULL), -EINVAL);
	CHECK_EQ(fd, -77);
	BAD(s, grb_channel_arm(NULL, NULL), -EINVAL);
	BAD(s, grb_channel_arm(chan, &wm), -EBADF);
	BAD(s, grb_channel_arm(other, NULL), -EBADF);
	/* With an event fd, a channel not read is refused before anything
	 * is armed or cleared. */
	CHECK_EQ(grb_channel_event_fd(other, &fd), 0);
	snap_retake(s);
	BAD(s, grb_channel_arm(other, &wm), -EPERM);
	BAD(s, grb_channel_arm(other, NULL), -EPERM);
}

/* ---- grb/output.h ----------------------------------------------------- */

static off_t fd_size(int fd)
{
	struct stat st;

	CHECK_EQ(fstat(fd, &st), 0);
	return st.st_size;
}

/*
 * Descriptors and pipes that are refused before any sub-buffer is taken;
 * with @held, also the -EBUSY of a reader that holds one.  @b is open,
 * @ob not.
 */
static void bad_output_calls(struct snap *s, struct grb_buf *b,
			     struct grb_buf *ob, int held, enum grb_mode mode)
{
	int out = memfd_create("bad-out", MFD_CLOEXEC);
	int rd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
	int p[2], q[2], dirty[2], closed, both[2], rev[2], mixed[2];
	uint64_t bytes;
	int avail;

	CHECK(out >= 0 && rd >= 0 && full >= 0);
	CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
	CHECK_EQ(pipe2(q, O_CLOEXEC), 0);
	CHECK_EQ(pipe2(dirty, O_CLOEXEC), 0);
	CHECK_EQ(write(dirty[1], "abc", 3), 3);
	closed = dup(out);
	CHECK(closed >= 0);
	close(closed);
	both[0] = both[1] = out;
	rev[0] = p[1];
	rev[1] = p[0];
	mixed[0] = p[0];
	mixed[1] = q[1];
	snap_retake(s);

	bytes = 77;
	BAD(s, grb_buf_write(NULL, out, 0, &bytes), -EINVAL);
	CHECK_U64(bytes, 0);
	BAD(s, grb_buf_write(b, -1, 0, NULL), -EINVAL);
	BAD(s, grb_buf_write(b, INT_MIN, 1, &bytes), -EINVAL);
	BAD(s, grb_buf_write(b, closed, 0, &bytes), -EBADF);
	BAD(s, grb_buf_write(b, rd, 0, &bytes), -EBADF);
	BAD(s, grb_buf_write(ob, out, 0, &bytes), -EPERM);
	BAD(s, grb_buf_splice(NULL, out, NULL, 0, &bytes), -EINVAL);
	BAD(s, grb_buf_splice(b, -1, p, 0, &bytes), -EINVAL);
	BAD(s, grb_buf_splice(b, closed, NULL, 0, &bytes), -EBADF);
	BAD(s, grb_buf_splice(b, rd, NULL, 0, &bytes), -EBADF);
	BAD(s, grb_buf_splice(b, out, rev, 0, &bytes), -EBADF);
	BAD(s, grb_buf_splice(b, out, mixed, 0, &bytes), -EBADF);
	BAD(s, grb_buf_splice(b, out, both, 0, &bytes), -EBADF);
	BAD(s, grb_buf_splice(ob, out, NULL, 0, &bytes), -EPERM);
	BAD(s, grb_buf_splice(ob, out, p, 0, &bytes), -EPERM);
	/*
	 * A pipe with bytes in it: they would go out first, in place of
	 * the sub-buffer's, and as many of its bytes would stay in the pipe,
	 * referencing pages writers reuse.  Refused before anything is
	 * taken, the caller's bytes left where they are.
	 */
	BAD(s, grb_buf_splice(b, out, dirty, 0, &bytes), -EINVAL);
	BAD(s, grb_buf_splice(b, out, dirty, 1, NULL), -EINVAL);
	CHECK_EQ(ioctl(dirty[0], FIONREAD, &avail), 0);
	CHECK_EQ(avail, 3);
	/*
	 * A write that fails: in discard mode the sub-buffer is given back
	 * unconsumed, as it was (in overwrite mode get_next consumed it, and
	 * it is lost, as grb/output.h says).
	 */
	if (!held && mode == GRB_MODE_DISCARD) {
		BAD(s, grb_buf_write(b, full, 0, &bytes), -ENOSPC);
		BAD(s, grb_buf_splice(b, full, p, 1, &bytes), -ENOSPC);
	}
	if (held) {
		BAD(s, grb_buf_write(b, out, 0, &bytes), -EBUSY);
		BAD(s, grb_buf_splice(b, out, NULL, 0, &bytes), -EBUSY);
		BAD(s, grb_buf_splice(b, out, p, 1, &bytes), -EBUSY);
	}
	CHECK_U64(bytes, 0);
	CHECK_EQ(fd_size(out), 0);
	close(out);
	close(rd);
	close(full);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(dirty[0]);
	close(dirty[1]);
	snap_retake(s);
}

/* ---- grb/reader.h and the iterators' creation, in each state ---------- */

/* A reader that is not open: every reader function is -EPERM. */
static void bad_not_open(struct snap *s, struct grb_buf *ob)
{
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	uint64_t c = 7, p = 7;
	size_t len = 7;
	char d[8];

	BAD(s, grb_reader_snapshot(ob, &c, &p), -EPERM);
	BAD(s, grb_reader_get_next(ob), -EPERM);
	BAD(s, grb_reader_put_next(ob), -EPERM);
	BAD(s, grb_reader_get_subbuf(ob, 0), -EPERM);
	BAD(s, grb_reader_put_subbuf(ob), -EPERM);
	BAD(s, grb_reader_held(ob, &sb), -EPERM);
	BAD(s, grb_reader_live(ob, &sb), -EPERM);
	BAD(s, grb_reader_read(ob, 0, d, 1), -EPERM);
	BAD(s, grb_reader_read_cstr(ob, 0, d, sizeof(d), &len), -EPERM);
	BAD(s, grb_reader_record(ob, HDR, &rec), -EPERM);
	BAD(s, grb_reader_release(ob), -EPERM);
	if (grb_channel_shm_fd(grb_buf_channel(ob), 0) < 0)
		BAD(s, grb_reader_takeover(ob), -EOPNOTSUPP);
	CHECK(c == 7 && p == 7 && len == 7);
}

/*
 * The reader of @b is open and holds what @hold says (the sub-buffer @sb
 * for HOLD_NEXT and HOLD_POS); its consumed position is past 0, and
 * sub-buffers are left to read.
 */
static void bad_reader_calls(struct snap *s, struct grb_channel *chan,
			     struct grb_buf *b, enum hold hold,
			     const struct grb_reader_subbuf *sb,
			     enum grb_mode mode)
{
	struct grb_buf_iter *it = (struct grb_buf_iter *)&hold;
	struct grb_chan_iter *ci = (struct grb_chan_iter *)&hold;
	struct grb_reader_subbuf live;
	struct grb_record rec;
	uint64_t c, p, far = ~(uint64_t)(SB - 1);
	size_t ds, len = 7;
	char d[64];

	BAD(s, grb_reader_open(b), -EBUSY);
	if (grb_channel_shm_fd(chan, 0) < 0)
		BAD(s, grb_reader_takeover(b), -EOPNOTSUPP);
	BAD(s, grb_reader_snapshot(b, NULL, &p), -EINVAL);
	BAD(s, grb_reader_snapshot(b, &c, NULL), -EINVAL);
	BAD(s, grb_reader_get_subbuf(b, 1), -EINVAL);
	BAD(s, grb_reader_get_subbuf(b, UINT64_MAX), -EINVAL);
	BAD(s, grb_reader_get_subbuf(b, SB + SB / 2), -EINVAL);
	BAD(s, grb_reader_live(b, NULL), -EINVAL);
	BAD(s, grb_reader_held(b, NULL), -EINVAL);
	BAD(s, grb_buf_iter_create(b, (enum grb_iter_mode)2, &it), -EINVAL);
	BAD(s, grb_buf_iter_create(b, GRB_ITER_SNAPSHOT, NULL), -EINVAL);
	BAD(s, grb_buf_iter_create(NULL, GRB_ITER_CONSUME, &it), -EINVAL);
	BAD(s, grb_buf_iter_create(b, GRB_ITER_CONSUME, &it), -EBUSY);
	BAD(s, grb_chan_iter_create(chan, (enum grb_iter_mode)-1, &ci),
	    -EINVAL);
	BAD(s, grb_chan_iter_create(chan, GRB_ITER_SNAPSHOT, &ci), -EBUSY);
	BAD(s, grb_chan_iter_create(NULL, GRB_ITER_SNAPSHOT, &ci), -EINVAL);
	CHECK(it == (struct grb_buf_iter *)&hold);
	CHECK(ci == (struct grb_chan_iter *)&hold);

	if (hold == HOLD_NONE || hold == HOLD_FINAL) {
		BAD(s, grb_reader_put_next(b), -EPERM);
		BAD(s, grb_reader_put_subbuf(b), -EPERM);
		BAD(s, grb_reader_held(b, &live), -EPERM);
		BAD(s, grb_reader_read(b, 0, d, 1), -EPERM);
		BAD(s, grb_reader_read(b, 0, NULL, 0), -EPERM);
		BAD(s, grb_reader_read_cstr(b, HDR, d, sizeof(d), &len),
		    -EPERM);
		BAD(s, grb_reader_record(b, HDR, &rec), -EPERM);
		/* Consumed already; far ahead, not there yet (nor ever,
		 * once finalized). */
		BAD(s, grb_reader_get_subbuf(b, 0), -ESTALE);
		BAD(s, grb_reader_get_subbuf(b, far),
		    hold == HOLD_FINAL ? -ENODATA : -EAGAIN);
		CHECK_EQ(len, 7);
		return;
	}
	ds = sb->data_size;
	BAD(s, grb_reader_get_next(b), -EBUSY);
	BAD(s, grb_reader_get_subbuf(b, sb->pos), -EBUSY);
	BAD(s, grb_reader_get_subbuf(b, far), -EBUSY);
	BAD(s, grb_reader_live(b, &live),
	    mode == GRB_MODE_DISCARD ? -EBUSY : -ENOTSUP);
	if (hold == HOLD_NEXT)
		BAD(s, grb_reader_put_subbuf(b), -EPERM);
	else
		BAD(s, grb_reader_put_next(b), -EPERM);
	/* Ranges outside the data, sums that wrap. */
	BAD(s, grb_reader_read(b, ds, d, 1), -ERANGE);
	BAD(s, grb_reader_read(b, 0, d, ds + 1), -ERANGE);
	BAD(s, grb_reader_read(b, ds + 1, d, 0), -ERANGE);
	BAD(s, grb_reader_read(b, SIZE_MAX, d, 1), -ERANGE);
	BAD(s, grb_reader_read(b, 1, d, SIZE_MAX), -ERANGE);
	BAD(s, grb_reader_read(b, ds, d, SIZE_MAX), -ERANGE);
	BAD(s, grb_reader_read(b, 0, NULL, 1), -EINVAL);
	BAD(s, grb_reader_read_cstr(b, HDR, d, 0, &len), -EINVAL);
	BAD(s, grb_reader_read_cstr(b, HDR, NULL, sizeof(d), &len), -EINVAL);
	BAD(s, grb_reader_read_cstr(b, ds, d, sizeof(d), &len), -ERANGE);
	BAD(s, grb_reader_read_cstr(b, SIZE_MAX, d, sizeof(d), &len),
	    -ERANGE);
	CHECK_EQ(len, 7);
	BAD(s, grb_reader_record(b, ds, &rec), -ENODATA);
	BAD(s, grb_reader_record(b, SIZE_MAX, &rec), -ENODATA);
	BAD(s, grb_reader_record(b, HDR, NULL), -EINVAL);
	/* Not a record: the decoder's -EINVAL. */
	BAD(s, grb_reader_record(b, ds - 2, &rec), -EINVAL);
}

/* GRB_MAX_NESTING records reserved at once on CPU cpus[0], then
 * committed last first. */
static void put_nested(const struct grb_config *cfg,
		       struct grb_channel *chan, struct wlog *log)
{
	struct grb_ctx ctx[GRB_MAX_NESTING];
	uint64_t tag;
	uint32_t word;
	int k;

	pin(cpus[0]);
	for (k = 0; k < GRB_MAX_NESTING; k++) {
		tag = next_tag++;
		word = (uint32_t)rec_len(tag);
		grb_ctx_init(&ctx[k], word, 1);
		CHECK_EQ(grb_reserve(cfg, chan, &ctx[k]), 0);
		grb_write(cfg, &ctx[k], &word, sizeof(word));
		grb_write(cfg, &ctx[k], &tag, sizeof(tag));
		grb_write_fill(cfg, &ctx[k], (int)(tag & 0xff), word - 8);
		log[ctx[k].cpu].tag[log[ctx[k].cpu].n++] = tag;
	}
	for (k = GRB_MAX_NESTING - 1; k >= 0; k--)
		grb_commit(cfg, &ctx[k]);
	unpin();
}

/*
 * A finalized channel: what writers, flushes and ticks may still be
 * asked refuses, or does nothing, and counts nothing; @b has records
 * left to read.
 */
static void bad_finalized(struct snap *s, const struct grb_config *cfg,
			  struct grb_channel *chan, struct grb_buf *b)
{
	struct grb_ctx ctx;
	int k;

	BAD(s, grb_channel_finalize(chan), -EALREADY);
	BAD(s, grb_buf_flush(b, GRB_FLUSH_ACTIVE), -ENODATA);
	BAD(s, grb_buf_flush(b, GRB_FLUSH_EMPTY), -ENODATA);
	BAD(s, grb_channel_flush(chan, GRB_FLUSH_EMPTY), 0);
	BAD(s, grb_channel_tick(chan, GRB_TICK_FLUSH | GRB_TICK_IDLE), 0);
	BAD(s, grb_channel_tick(chan, GRB_TICK_FLUSH | GRB_TICK_IDLE), 0);
	BAD(s, grb_channel_record_enable(chan), 0);
	pin(cpus[0]);
	for (k = 0; k < 2 * GRB_MAX_NESTING; k++) {
		grb_ctx_init(&ctx, 8, 1);
		BAD(s, grb_reserve(cfg, chan, &ctx), -ESHUTDOWN);
		BAD(s, grb_write_record(cfg, chan, 8, 1, NULL, fill_never),
		    -ESHUTDOWN);
		grb_ctx_init(&ctx, SIZE_MAX, 1);
		BAD(s, grb_reserve(cfg, chan, &ctx), -ESHUTDOWN);
	}
	unpin();
	CHECK_EQ(fill_calls, 0);
}

/*
 * A channel of @cfg with records in the buffers of up to two CPUs (two
 * sub-buffers delivered and one open in each, the first consumed), every
 * buffer open for reading, and the first written buffer holding what
 * @hold says; beside it a channel of the same configuration that has no
 * record and no reader.  Every refusal above, then everything read back.
 */
static void test_refusals(const struct grb_config *cfg, enum hold hold)
{
	struct grb_channel *chan = make(cfg), *other = make(cfg);
	struct wlog *log = new_log(chan), *none = new_log(other);
	struct grb_reader_subbuf sb;
	struct snap s = { 0 };
	struct grb_buf *b;
	unsigned int i;
	int k;

	for (k = 0; k < (cfg->alloc == GRB_ALLOC_PER_CPU ? ncpus : 1); k++)
		fill(cfg, chan, log, cpus[k]);
	for (i = 0; i < grb_channel_nr_bufs(chan); i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
	b = grb_channel_buf(chan, buf_of(cfg, cpus[0]));
	consume_first(b, &log[buf_of(cfg, cpus[0])]);
	memset(&sb, 0, sizeof(sb));
	if (hold == HOLD_NEXT)
		CHECK_EQ(grb_reader_get_next(b), 0);
	if (hold == HOLD_POS)
		CHECK_EQ(grb_reader_get_subbuf(b, SB), 0);
	if (hold == HOLD_NEXT || hold == HOLD_POS)
		CHECK_EQ(grb_reader_held(b, &sb), 0);
	if (hold == HOLD_FINAL)
		CHECK_EQ(grb_channel_finalize(chan), 0);

	snap_take(&s, chan, other, NULL);
	bad_channel_calls(&s, chan, b);
	bad_wait_calls(&s, chan, b, other);
	bad_output_calls(&s, b, grb_channel_buf(other, 0),
			 hold == HOLD_NEXT || hold == HOLD_POS, cfg->mode);
	bad_not_open(&s, grb_channel_buf(other, 0));
	bad_reader_calls(&s, chan, b, hold, &sb, cfg->mode);
	if (hold == HOLD_FINAL)
		bad_finalized(&s, cfg, chan, b);
	snap_free(&s);
	/* The refused reservations gave their nesting levels back: as many
	 * as the bound allows can be open at once. */
	if (hold == HOLD_FINAL)
		put_nested(cfg, other, none);

	read_back(chan, log);
	read_back(other, none);
	grb_channel_destroy(chan);
	grb_channel_destroy(other);
	free(log);
	free(none);
}

/* ---- grb/iter.h and grb/output.h's reads: a refusal moves nothing ---- */

struct got {
	const struct grb_config *cfg;
	struct wlog *log;               /* per buffer */
};

static unsigned int buf_index(const struct grb_config *cfg,
			      const struct grb_buf *b)
{
	return cfg->alloc == GRB_ALLOC_PER_CPU ? (unsigned int)grb_buf_cpu(b)
		: 0;
}

static void got_record(struct got *g, const struct grb_iter_record *r)
{
	struct wlog *l = &g->log[buf_index(g->cfg, r->buf)];

	CHECK(l->n < MAXTAGS);
	CHECK_U64(r->lost, 0);
	l->tag[l->n++] = check_payload(r->payload, r->payload_len);
}

static int on_record(void *arg, const struct grb_iter_record *r)
{
	got_record((struct got *)arg, r);
	return 0;
}

static int never(void *arg, const struct grb_iter_record *r)
{
	(void)arg;
	(void)r;
	CHECK(0);
	return 1;
}

static void same_logs(const struct grb_channel *chan, const struct wlog *a,
		      const struct wlog *b)
{
	unsigned int i, k;

	for (i = 0; i < grb_channel_nr_bufs(chan); i++) {
		CHECK_EQ(a[i].n, b[i].n);
		for (k = 0; k < a[i].n; k++)
			CHECK_U64(a[i].tag[k], b[i].tag[k]);
	}
}

/* Refusals of the iterator calls, whose state @s covers through the
 * buffers the iterator holds. */
#define BAD_ITER_CALLS(s, kind, it, got)                                   \
do {                                                                       \
	struct grb_iter_record r_;                                         \
	uint64_t n_ = 7;                                                   \
	size_t len_ = 7;                                                   \
	char d_[16];                                                       \
									   \
	BAD(s, grb_##kind##_iter_next(it, NULL), -EINVAL);                 \
	BAD(s, grb_##kind##_iter_next(NULL, &r_), -EINVAL);                \
	BAD(s, grb_##kind##_iter_consume(it, NULL, got, &n_), -EINVAL);    \
	CHECK_U64(n_, 0);                                                  \
	BAD(s, grb_##kind##_iter_consume(NULL, never, NULL, NULL),         \
	    -EINVAL);                                                      \
	BAD(s, grb_##kind##_iter_poll(it, never, NULL, -2, NULL), -EINVAL);\
	BAD(s, grb_##kind##_iter_poll(it, never, NULL, INT64_MIN, &n_),    \
	    -EINVAL);                                                      \
	BAD(s, grb_##kind##_iter_poll(it, NULL, NULL, 0, &n_), -EINVAL);   \
	BAD(s, grb_##kind##_iter_poll(NULL, never, NULL, 0, &n_), -EINVAL);\
	BAD(s, grb_##kind##_iter_read(it, d_, 0, &len_), -EINVAL);         \
	BAD(s, grb_##kind##_iter_read(it, NULL, sizeof(d_), &len_),        \
	    -EINVAL);                                                      \
	BAD(s, grb_##kind##_iter_read(it, d_, sizeof(d_), NULL), -EINVAL); \
	BAD(s, grb_##kind##_iter_read(NULL, d_, sizeof(d_), &len_),        \
	    -EINVAL);                                                      \
	SAME(s, grb_##kind##_iter_lost(NULL) == 0);                        \
	grb_##kind##_iter_destroy(NULL);                                   \
	CHECK_EQ(len_, 7);                                                 \
} while (0)

/*
 * A buffer iterator and then a channel iterator, each stopped after its
 * first record, with a sub-buffer held: each refusal leaves the buffers
 * and the iterator as they were, so the records that follow come out
 * all, once, in order.
 */
static void test_iter_refusals(const struct grb_config *cfg)
{
	struct grb_channel *chan = make(cfg), *nodec = make(&chan_nodec);
	struct wlog *log = new_log(chan), *seen = new_log(chan);
	struct got g = { cfg, seen };
	struct grb_chan_iter_stats cst, cst0;
	struct grb_iter_record r;
	struct grb_chan_iter *ci;
	struct grb_buf_iter *it;
	struct snap s = { 0 };
	unsigned int bi = buf_of(cfg, cpus[0]);
	int k;

	for (k = 0; k < (cfg->alloc == GRB_ALLOC_PER_CPU ? ncpus : 1); k++)
		fill(cfg, chan, log, cpus[k]);

	/* A client without a decoder: refused, no reader left open. */
	snap_take(&s, chan, nodec, NULL);
	it = (struct grb_buf_iter *)&s;
	BAD(&s, grb_buf_iter_create(grb_channel_buf(nodec, 0),
				    GRB_ITER_CONSUME, &it), -ENOTSUP);
	BAD(&s, grb_chan_iter_create(nodec, GRB_ITER_SNAPSHOT, &ci),
	    -ENOTSUP);
	CHECK(it == (struct grb_buf_iter *)&s);

	/* A snapshot of one buffer, holding a pinned sub-buffer: its
	 * records are not consumed, and come again below. */
	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, bi),
				     GRB_ITER_SNAPSHOT, &it), 0);
	CHECK_EQ(grb_buf_iter_next(it, &r), 0);
	CHECK_U64(check_payload(r.payload, r.payload_len), log[bi].tag[0]);
	snap_retake(&s);
	BAD_ITER_CALLS(&s, buf, it, &g);
	CHECK_EQ(grb_buf_iter_next(it, &r), 0);
	CHECK_U64(check_payload(r.payload, r.payload_len), log[bi].tag[1]);
	grb_buf_iter_destroy(it);

	/* One buffer, consumed. */
	CHECK_EQ(grb_buf_iter_create(grb_channel_buf(chan, bi),
				     GRB_ITER_CONSUME, &it), 0);
	CHECK_EQ(grb_buf_iter_next(it, &r), 0);
	got_record(&g, &r);
	snap_retake(&s);
	BAD_ITER_CALLS(&s, buf, it, &g);
	/* Delivered whole, so that the iterator consumes what it read
	 * live, and the channel iterator does not return it again. */
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_buf_iter_consume(it, on_record, &g, NULL), 0);
	grb_buf_iter_destroy(it);

	/* The whole channel: what the buffer iterator left (the other
	 * CPU's records), and more. */
	fill(cfg, chan, log, cpus[0]);
	CHECK_EQ(grb_chan_iter_create(chan, GRB_ITER_CONSUME, &ci), 0);
	CHECK_EQ(grb_chan_iter_next(ci, &r), 0);
	got_record(&g, &r);
	snap_retake(&s);
	BAD_ITER_CALLS(&s, chan, ci, &g);
	memset(&cst, 0xa5, sizeof(cst));
	cst0 = cst;
	BAD(&s, grb_chan_iter_stats(NULL, &cst), -EINVAL);
	BAD(&s, grb_chan_iter_stats(ci, NULL), -EINVAL);
	CHECK_EQ(memcmp(&cst, &cst0, sizeof(cst)), 0);
	snap_free(&s);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_chan_iter_consume(ci, on_record, &g, NULL), 0);
	CHECK_EQ(grb_chan_iter_stats(ci, &cst), 0);
	CHECK_U64(cst.lost + cst.late + cst.undecodable, 0);
	grb_chan_iter_destroy(ci);

	same_logs(chan, seen, log);
	grb_channel_destroy(chan);
	grb_channel_destroy(nodec);
	free(log);
	free(seen);
}

/* ---- grb/writer.h: sizes and alignments that wrap, empty fields ------- */

/*
 * A refusal the header says is counted in lost_big, in buffer @i of the
 * first channel of @s: that counter moved by one, and nothing else.
 */
static void expect_big(struct snap *s, unsigned int i, int ret,
		       const char *what, int line)
{
	const size_t at = offsetof(struct grb_buf_shm, lost_big);
	struct grb_buf_stats st;
	uint64_t v;

	CHECK_EQ(ret, -ENOSPC);
	CHECK_EQ(grb_buf_get_stats(grb_channel_buf(s->chan[0], i), &st), 0);
	CHECK_U64(st.lost_big, s->st[0][i].lost_big + 1);
	s->st[0][i].lost_big++;
	s->sum[0].lost_big++;
	memcpy(&v, s->map[0][i] + at, sizeof(v));
	v++;
	memcpy(s->map[0][i] + at, &v, sizeof(v));
	snap_check(s, what, line);
}

#define BIG(s, i, call) expect_big((s), (i), (call), #call, __LINE__)

static void test_writer_inputs(const struct grb_config *cfg)
{
	/* Sizes whose slot sums wrap, or only just do not fit. */
	static const size_t sizes[] = {
		SIZE_MAX, SIZE_MAX - 3, SIZE_MAX - HDR, SIZE_MAX / 2 + 1,
		(size_t)GRB_SUBBUF_SIZE_MAX, (size_t)GRB_SUBBUF_SIZE_MAX - 1,
		SB, SB - HDR - 4 + 1,
	};
	/* Alignments no offset in a sub-buffer meets. */
	static const size_t aligns[] = {
		(size_t)1 << 20, (size_t)1 << 40, (size_t)1 << 63,
	};
	struct grb_channel *chan = make(cfg);
	struct wlog *log = new_log(chan);
	unsigned int i = buf_of(cfg, cpus[0]), k;
	struct snap s = { 0 };
	struct grb_ctx ctx;
	uint64_t tag;
	uint32_t word;
	size_t len;
	char *w;

	fill(cfg, chan, log, cpus[0]);
	pin(cpus[0]);
	snap_take(&s, chan, NULL);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		grb_ctx_init(&ctx, sizes[k], 1);
		BIG(&s, i, grb_reserve(cfg, chan, &ctx));
		BIG(&s, i, grb_write_record(cfg, chan, sizes[k], 1, NULL,
					    fill_never));
		grb_ctx_init(&ctx, sizes[k], 8);
		BIG(&s, i, grb_reserve(cfg, chan, &ctx));
	}
	for (k = 0; k < sizeof(aligns) / sizeof(aligns[0]); k++) {
		grb_ctx_init(&ctx, 8, aligns[k]);
		BIG(&s, i, grb_reserve(cfg, chan, &ctx));
		BIG(&s, i, grb_write_record(cfg, chan, 8, aligns[k], NULL,
					    fill_never));
	}
	CHECK_EQ(fill_calls, 0);
	snap_free(&s);

	/*
	 * A string field of 0 bytes and an alignment of 0 or 1 write
	 * nothing and leave the cursor where it was; the record around them
	 * comes out intact.
	 */
	tag = next_tag++;
	len = rec_len(tag);
	word = (uint32_t)len;
	grb_ctx_init(&ctx, len, 1);
	CHECK_EQ(grb_reserve(cfg, chan, &ctx), 0);
	grb_write(cfg, &ctx, &word, sizeof(word));
	w = ctx.wptr;
	grb_write_str(cfg, &ctx, "not written", 0);
	CHECK(ctx.wptr == w);
	grb_ctx_align(cfg, &ctx, 0);
	CHECK(ctx.wptr == w);
	grb_ctx_align(cfg, &ctx, 1);
	CHECK(ctx.wptr == w);
	grb_write(cfg, &ctx, &tag, sizeof(tag));
	grb_write_str(cfg, &ctx, "", 0);
	grb_write_fill(cfg, &ctx, (int)(tag & 0xff), len - 8);
	CHECK(ctx.wptr == ctx.wend);
	grb_commit(cfg, &ctx);
	log[ctx.cpu].tag[log[ctx.cpu].n++] = tag;
	unpin();
	read_back(chan, log);
	grb_channel_destroy(chan);
	free(log);
}

/* ---- grb/basic.h ------------------------------------------------------ */

static void counts_same(struct grb_basic *bc, const struct grb_basic_counts *c,
			int line)
{
	struct grb_basic_counts now;
	unsigned int i;

	for (i = 0; i < grb_basic_nr_bufs(bc); i++) {
		CHECK_EQ(grb_basic_get_counts(bc, i, &now), 0);
		if (memcmp(&now, &c[i], sizeof(now))) {
			fprintf(stderr, "line %d: the basic counts of buffer %u"
				" changed\n", line, i);
			exit(1);
		}
	}
}

#define BAD_BASIC(s, bc, c, call, err) do {                               \
	BAD((s), (call), (err));                                          \
	counts_same((bc), (c), __LINE__);                                 \
} while (0)

/* Creations refused: nothing made, *out untouched. */
static void bad_basic_create(struct snap *s, const struct grb_basic_attr *ok)
{
	struct grb_basic_attr a;
	struct grb_basic *mark = (struct grb_basic *)&a, *bc = mark;

	BAD(s, grb_basic_create(NULL, &bc), -EINVAL);
	BAD(s, grb_basic_create(ok, NULL), -EINVAL);
	a = *ok;
	a.alloc = (enum grb_alloc)3;
	BAD(s, grb_basic_create(&a, &bc), -EINVAL);
	a = *ok;
	a.mode = (enum grb_mode)3;
	BAD(s, grb_basic_create(&a, &bc), -EINVAL);
	a = *ok;
	a.subbuf_size = 100;
	BAD(s, grb_basic_create(&a, &bc), -EINVAL);
	a = *ok;
	a.num_subbuf = 1;
	BAD(s, grb_basic_create(&a, &bc), -EINVAL);
	BAD(s, grb_basic_create_shared(&a, NULL, &bc), -EINVAL);
	CHECK(bc == mark);
}

/* grb_basic_decode() refused: its outputs are not written. */
static void bad_basic_decode(struct snap *s)
{
	struct grb_basic_subbuf_header h;
	unsigned char sub[256];
	struct grb_basic_event ev = { 7, 7, 7 };
	size_t off = 7, next = 7;
	const size_t hs = sizeof(h);

	memset(&h, 0, sizeof(h));
	memset(sub, 0, sizeof(sub));
	h.magic = GRB_BASIC_MAGIC;
	memcpy(sub, &h, sizeof(h));
	BAD(s, grb_basic_decode(NULL, 256, hs, 0, &ev, &off, &next), -EINVAL);
	BAD(s, grb_basic_decode(sub, 256, hs, 0, NULL, &off, &next), -EINVAL);
	BAD(s, grb_basic_decode(sub, 256, hs, 0, &ev, &off, NULL), -EINVAL);
	BAD(s, grb_basic_decode(sub, hs - 1, hs, 0, &ev, &off, &next),
	    -EINVAL);
	BAD(s, grb_basic_decode(sub, 256, hs - 1, 0, &ev, &off, &next),
	    -EINVAL);
	BAD(s, grb_basic_decode(sub, 256, 256, 0, &ev, &off, &next),
	    -ENODATA);
	BAD(s, grb_basic_decode(sub, 256, SIZE_MAX, 0, &ev, &off, &next),
	    -ENODATA);
	/* A length running past the data; a compressed timestamp first. */
	memcpy(sub + hs, "\xff\x00\x00\x00", 4);
	BAD(s, grb_basic_decode(sub, 256, hs, 0, &ev, &off, &next),
	    -EBADMSG);
	memcpy(sub + hs, "\x00\x00\x00\x00", 4);
	BAD(s, grb_basic_decode(sub, 256, hs, 0, &ev, &off, &next),
	    -EBADMSG);
	h.magic = 0;
	memcpy(sub, &h, sizeof(h));
	BAD(s, grb_basic_decode(sub, 256, hs, 1, &ev, &off, &next), -EBADMSG);
	CHECK(ev.timestamp == 7 && ev.len == 7 && ev.cpu == 7);
	CHECK(off == 7 && next == 7);
}

/*
 * A basic channel with records in the buffer of the first CPU, the
 * first one peeked (so its sub-buffer is the client's already): every
 * refused call leaves the engine's and the client's counts, and the
 * mapping, as they were; then each record comes out once, in order.
 */
static void test_basic(enum grb_alloc alloc, enum grb_mode mode)
{
	struct grb_basic_attr attr = { "bad", SB, NSUB, alloc, mode, 1 };
	struct grb_basic *bc;
	struct grb_basic_counts *c;
	struct grb_basic_wctx w;
	struct grb_basic_event ev, ev0;
	struct snap s = { 0 };
	unsigned int n, i, cpu;
	uint64_t tag, want;
	char big[256];
	size_t len;

	CHECK_EQ(grb_basic_create(&attr, &bc), 0);
	n = grb_basic_nr_bufs(bc);
	cpu = alloc == GRB_ALLOC_PER_CPU ? (unsigned int)cpus[0] : 0;
	pin(cpus[0]);
	for (tag = 1; tag <= 100; tag++) {
		len = rec_len(tag);
		memcpy(big, &tag, sizeof(tag));
		memset(big + 8, (int)(tag & 0xff), len - 8);
		CHECK_EQ(grb_basic_write(bc, big, len), 0);
	}
	/* In overwrite mode a record is readable once its sub-buffer is
	 * closed. */
	CHECK_EQ(grb_basic_flush(bc), 0);
	CHECK_EQ(grb_basic_peek(bc, cpu, &ev, big, sizeof(big)), 0);
	CHECK_U64(check_payload((const unsigned char *)big, ev.len), 1);
	c = calloc(n, sizeof(*c));
	CHECK(c != NULL);
	for (i = 0; i < n; i++)
		CHECK_EQ(grb_basic_get_counts(bc, i, &c[i]), 0);
	snap_take(&s, grb_basic_channel(bc), NULL);

	/* Arguments. */
	BAD_BASIC(&s, bc, c, grb_basic_consume(NULL, cpu, &ev, big, 256),
		  -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_consume(bc, cpu, NULL, big, 256),
		  -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_consume(bc, n, &ev, big, 256), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_consume(bc, UINT_MAX, &ev, big, 256),
		  -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_peek(bc, n, &ev, big, 256), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_peek(NULL, 0, &ev, big, 256), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_get_counts(bc, n, &c[0]), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_get_counts(bc, cpu, NULL), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_get_counts(NULL, 0, &c[0]), -EINVAL);
	/* Destinations too small: the record stays, its length given. */
	memset(&ev0, 0, sizeof(ev0));
	ev = ev0;
	BAD_BASIC(&s, bc, c, grb_basic_consume(bc, cpu, &ev, big, 0),
		  -ENOBUFS);
	CHECK_EQ(ev.len, rec_len(1));
	BAD_BASIC(&s, bc, c, grb_basic_consume(bc, cpu, &ev, NULL, 256),
		  -ENOBUFS);
	BAD_BASIC(&s, bc, c, grb_basic_consume(bc, cpu, &ev, big,
					       rec_len(1) - 1), -ENOBUFS);
	BAD_BASIC(&s, bc, c, grb_basic_peek(bc, cpu, &ev, NULL, 0), -ENOBUFS);
	/* Writes refused for their arguments are no loss. */
	BAD_BASIC(&s, bc, c, grb_basic_write(NULL, big, 8), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_write(bc, NULL, 8), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_write(bc, big,
					     (size_t)GRB_BASIC_MAX_LEN + 1),
		  -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_write(bc, big, SIZE_MAX), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_reserve(NULL, 8, &w), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_reserve(bc, 8, NULL), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_reserve(bc, SIZE_MAX, &w), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_reset(NULL), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_flush(NULL), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_finalize(NULL), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_record_disable(NULL), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_record_enable(NULL), -EINVAL);
	BAD_BASIC(&s, bc, c, grb_basic_release_readers(NULL), -EINVAL);
	SAME(&s, grb_basic_nr_bufs(NULL) == 0);
	SAME(&s, grb_basic_channel(NULL) == NULL);
	grb_basic_destroy(NULL);
	bad_basic_create(&s, &attr);
	bad_basic_decode(&s);
	snap_free(&s);
	unpin();

	/* Every record, once, in order. */
	for (want = 1; want < tag; want++) {
		CHECK_EQ(grb_basic_consume(bc, cpu, &ev, big, sizeof(big)), 0);
		CHECK_U64(check_payload((const unsigned char *)big, ev.len),
			  want);
	}
	CHECK_EQ(grb_basic_consume(bc, cpu, &ev, big, sizeof(big)), -EAGAIN);
	CHECK_EQ(grb_basic_get_counts(bc, cpu, &c[0]), 0);
	CHECK_U64(c[0].written, tag - 1);
	CHECK_U64(c[0].consumed, tag - 1);
	CHECK_U64(c[0].lost + c[0].dropped + c[0].corrupt + c[0].overruns, 0);
	free(c);
	grb_basic_destroy(bc);
}

/* ---- grb/ctf.h -------------------------------------------------------- */

static const struct grb_ctf_field ctf_fields[] = {
	{ "n", GRB_CTF_INT, 8, 0, 10, 0, NULL, 0 },
	{ "s", GRB_CTF_STRING, 0, 0, 0, 0, NULL, 0 },
	{ "a", GRB_CTF_INT, 1, 0, 16, 4, NULL, 0 },
};

static void test_ctf(void)
{
	struct grb_ctf_attr a = {
		.name = "bad", .subbuf_size = SB, .num_subbuf = NSUB,
		.alloc = GRB_ALLOC_PER_CHANNEL, .mode = GRB_MODE_DISCARD,
		.clock = GRB_CTF_CLOCK_MONOTONIC,
	};
	struct grb_ctf_event_desc desc = { "ev", -1, ctf_fields, 3 };
	struct grb_ctf_field bad_field = { "1x", GRB_CTF_INT, 8, 0, 0, 0,
					   NULL, 0 };
	const struct grb_ctf_event *ev, *ev2, *next, *mark = NULL;
	unsigned char arr[4] = { 1, 2, 3, 4 }, raw[32], pkt[128], pkt0[128];
	struct grb_ctf_stream_state st = { 5, 6, 0 }, st0 = st;
	struct grb_ctf *t, *t2, *tm = (struct grb_ctf *)&a;
	struct grb_ctf_stats cs;
	union grb_ctf_value v[3];
	struct grb_ctf_attr b;
	uint8_t uuid[16], uuid0[16];
	struct snap s = { 0 };
	uint64_t gap = 9;
	int i;

	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_create(&a, &t2), 0);
	CHECK_EQ(grb_ctf_event_register(t, &desc, &ev), 0);
	CHECK_EQ(grb_ctf_event_register(t2, &desc, &ev2), 0);
	v[0].u = 42;
	v[1].s = "str";
	v[2].array = arr;
	for (i = 0; i < 10; i++)
		CHECK_EQ(grb_ctf_emit(t, ev, v), 0);
	snap_take(&s, grb_ctf_channel(t), grb_ctf_channel(t2), NULL);

	/* Creation: nothing made, *out untouched. */
	BAD(&s, grb_ctf_create(NULL, &t), -EINVAL);
	BAD(&s, grb_ctf_create(&a, NULL), -EINVAL);
	b = a;
	b.name = "a/b";
	BAD(&s, grb_ctf_create(&b, &tm), -EINVAL);
	b.name = "..";
	BAD(&s, grb_ctf_create(&b, &tm), -EINVAL);
	b = a;
	b.alloc = (enum grb_alloc)5;
	BAD(&s, grb_ctf_create(&b, &tm), -EINVAL);
	b = a;
	b.mode = (enum grb_mode)5;
	BAD(&s, grb_ctf_create(&b, &tm), -EINVAL);
	b = a;
	b.clock = (enum grb_ctf_clock)2;
	BAD(&s, grb_ctf_create(&b, &tm), -EINVAL);
	b = a;
	b.subbuf_size = SB + 1;
	BAD(&s, grb_ctf_create(&b, &tm), -EINVAL);
	CHECK(tm == (struct grb_ctf *)&a);
	SAME(&s, grb_ctf_config((enum grb_alloc)5, GRB_MODE_DISCARD,
				GRB_CTF_CLOCK_MONOTONIC) == NULL);
	SAME(&s, grb_ctf_config(GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD,
				(enum grb_ctf_clock)-1) == NULL);
	SAME(&s, grb_basic_config(GRB_ALLOC_PER_CPU, (enum grb_mode)2, 0) ==
	     NULL);

	/* Emits refused for their arguments reserve nothing. */
	BAD(&s, grb_ctf_emit(NULL, ev, v), -EINVAL);
	BAD(&s, grb_ctf_emit(t, NULL, v), -EINVAL);
	BAD(&s, grb_ctf_emit(t, ev2, v), -EINVAL);
	BAD(&s, grb_ctf_emit(t2, ev, v), -EINVAL);
	BAD(&s, grb_ctf_emit(t, ev, NULL), -EINVAL);
	v[2].array = NULL;
	BAD(&s, grb_ctf_emit(t, ev, v), -EINVAL);
	v[2].array = arr;
	memset(raw, 'x', sizeof(raw));
	BAD(&s, grb_ctf_emit_raw(t, ev, NULL, 16), -EINVAL);
	BAD(&s, grb_ctf_emit_raw(t, ev, raw, sizeof(raw)), -EINVAL);
	BAD(&s, grb_ctf_emit_raw(t, ev2, raw, 14), -EINVAL);
	/* Registrations refused: no id is used up. */
	BAD(&s, grb_ctf_event_register(NULL, &desc, &next), -EINVAL);
	BAD(&s, grb_ctf_event_register(t, NULL, &next), -EINVAL);
	BAD(&s, grb_ctf_event_register(t, &desc, NULL), -EINVAL);
	BAD(&s, grb_ctf_event_register(t, &desc, &mark), -EINVAL);
	desc.name = "";
	BAD(&s, grb_ctf_event_register(t, &desc, &mark), -EINVAL);
	desc.name = "other";
	desc.loglevel = 15;
	BAD(&s, grb_ctf_event_register(t, &desc, &mark), -EINVAL);
	desc.loglevel = -1;
	desc.nr_fields = GRB_CTF_MAX_FIELDS + 1;
	BAD(&s, grb_ctf_event_register(t, &desc, &mark), -EINVAL);
	desc.fields = &bad_field;
	desc.nr_fields = 1;
	BAD(&s, grb_ctf_event_register(t, &desc, &mark), -EINVAL);
	CHECK(mark == NULL);
	desc.nr_fields = 0;
	CHECK_EQ(grb_ctf_event_register(t, &desc, &next), 0);
	CHECK_EQ(grb_ctf_event_id(next), 1);
	SAME(&s, grb_ctf_event_id(NULL) == UINT32_MAX);
	SAME(&s, grb_ctf_channel(NULL) == NULL);
	memset(&cs, 0xa5, sizeof(cs));
	BAD(&s, grb_ctf_get_stats(NULL, &cs), -EINVAL);
	BAD(&s, grb_ctf_get_stats(t, NULL), -EINVAL);
	BAD(&s, grb_ctf_stop(NULL), -EINVAL);
	grb_ctf_destroy(NULL);
	snap_free(&s);

	/* A consumer's packet helpers: nothing written on -EBADMSG. */
	memset(pkt, 0x5a, sizeof(pkt));
	memcpy(pkt0, pkt, sizeof(pkt));
	CHECK_EQ(grb_ctf_packet_fixup(pkt, sizeof(pkt), &st, &gap), -EBADMSG);
	CHECK_EQ(grb_ctf_packet_fixup(pkt, 10, &st, &gap), -EBADMSG);
	CHECK_EQ(grb_ctf_packet_fixup(NULL, sizeof(pkt), &st, &gap), -EINVAL);
	CHECK_EQ(grb_ctf_packet_fixup(pkt, sizeof(pkt), NULL, &gap), -EINVAL);
	CHECK_EQ(grb_ctf_stream_trailer(pkt, &st, 100, raw), -EBADMSG);
	CHECK_EQ(grb_ctf_stream_leader(pkt, &st, raw), -EBADMSG);
	CHECK_EQ(grb_ctf_stream_trailer(NULL, &st, 100, raw), -EINVAL);
	CHECK_EQ(grb_ctf_stream_leader(pkt, NULL, raw), -EINVAL);
	CHECK_EQ(memcmp(pkt, pkt0, sizeof(pkt)), 0);
	CHECK(st.next_seq == st0.next_seq &&
	      st.last_discarded == st0.last_discarded &&
	      st.started == st0.started);
	CHECK_U64(gap, 9);
	memset(uuid, 0x11, sizeof(uuid));
	memcpy(uuid0, uuid, sizeof(uuid));
	CHECK_EQ(grb_ctf_metadata_load(NULL, 100, uuid), -EBADMSG);
	CHECK_EQ(grb_ctf_metadata_load("/* CTF 1.8 */", 13, uuid), -EBADMSG);
	CHECK_EQ(memcmp(uuid, uuid0, sizeof(uuid)), 0);

	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_EQ(grb_ctf_get_stats(t, &cs), 0);
	CHECK_U64(cs.events, 10);
	CHECK_U64(cs.events_discarded, 0);
	grb_ctf_destroy(t);
	grb_ctf_destroy(t2);
}

/* ---- grb/shm.h -------------------------------------------------------- */


/* The message grb_channel_send() put on @sock is still all there. */
static void message_waits(int sock)
{
	char c;

	CHECK_EQ(recv(sock, &c, 1, MSG_PEEK | MSG_DONTWAIT), 1);
}

static void test_shm(void)
{
	static const struct grb_config bad_shared = {
		GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 3, BI_CB,
		GRB_CONFIG_SHARED,
	};
	struct grb_channel_attr attr = { "bad", SB, NSUB, NULL };
	struct grb_shm_attr sa = { CLIENT, NULL, -1 };
	struct grb_channel *chan, *att, *mark = (struct grb_channel *)&sa;
	struct grb_channel *x = mark;
	struct wlog log[1];
	struct snap s = { 0 };
	int sp[2], fd, rdonly, efd = -7;
	char path[64];

	memset(log, 0, sizeof(log));
	CHECK_EQ(grb_channel_create_shared(&chan_shared, &attr, &sa, &chan), 0);
	fill(&chan_shared, chan, log, cpus[0]);
	fd = grb_channel_shm_fd(chan, 0);
	CHECK(fd >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rdonly = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(rdonly >= 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	CHECK_EQ(grb_channel_send(chan, sp[0]), 0);
	snap_take(&s, chan, NULL);

	/* A receive refused for its arguments reads nothing: the message
	 * stays for a call that can take it. */
	BAD(&s, grb_channel_recv(sp[1], &chan_shared, CLIENT,
				 (enum grb_attach_role)0, &x), -EINVAL);
	message_waits(sp[1]);
	BAD(&s, grb_channel_recv(sp[1], &chan_shared, CLIENT,
				 (enum grb_attach_role)3, &x), -EINVAL);
	message_waits(sp[1]);
	BAD(&s, grb_channel_recv(sp[1], &chan_disc, CLIENT,
				 GRB_ATTACH_READER, &x), -EINVAL);
	message_waits(sp[1]);
	BAD(&s, grb_channel_recv(sp[1], &bad_shared, CLIENT,
				 GRB_ATTACH_READER, &x), -EINVAL);
	message_waits(sp[1]);
	BAD(&s, grb_channel_recv(sp[1], NULL, CLIENT, GRB_ATTACH_READER, &x),
	    -EINVAL);
	BAD(&s, grb_channel_recv(sp[1], &chan_shared, NULL, GRB_ATTACH_READER,
				 &x), -EINVAL);
	BAD(&s, grb_channel_recv(sp[1], &chan_shared, CLIENT,
				 GRB_ATTACH_READER, NULL), -EINVAL);
	BAD(&s, grb_channel_recv_fds(sp[1], NULL, NULL), -EINVAL);
	message_waits(sp[1]);

	/* Attaching refused: no descriptor kept, nothing mapped. */
	BAD(&s, grb_channel_attach(&chan_shared, CLIENT, &fd, 1,
				   (enum grb_attach_role)0, &x), -EINVAL);
	BAD(&s, grb_channel_attach(&chan_shared, CLIENT, &fd, 0,
				   GRB_ATTACH_READER, &x), -EINVAL);
	BAD(&s, grb_channel_attach(&chan_shared, CLIENT, &fd,
				   GRB_SHM_MAX_BUFS + 1, GRB_ATTACH_READER,
				   &x), -EINVAL);
	BAD(&s, grb_channel_attach(&chan_disc, CLIENT, &fd, 1,
				   GRB_ATTACH_READER, &x), -EINVAL);
	BAD(&s, grb_channel_attach(&bad_shared, CLIENT, &fd, 1,
				   GRB_ATTACH_WRITER, &x), -EINVAL);
	BAD(&s, grb_channel_attach(&chan_shared, "other", &fd, 1,
				   GRB_ATTACH_READER, &x), -EPROTOTYPE);
	BAD(&s, grb_channel_attach(&chan_shared, CLIENT, NULL, 1,
				   GRB_ATTACH_READER, &x), -EINVAL);
	BAD(&s, grb_channel_attach(&chan_shared, CLIENT, &rdonly, 1,
				   GRB_ATTACH_READER, &x), -EBADF);
	BAD(&s, grb_channel_attach_dir(&chan_shared, CLIENT, "/", "a/b",
				       GRB_ATTACH_READER, &x), -EINVAL);
	BAD(&s, grb_channel_attach_dir(&chan_shared, CLIENT, "/", "bad",
				       (enum grb_attach_role)9, &x), -EINVAL);
	CHECK(x == mark);
	BAD(&s, grb_channel_shm_fd(chan, 1), -EINVAL);
	BAD(&s, grb_channel_shm_fd(chan, UINT_MAX), -EINVAL);
	BAD(&s, grb_reader_takeover(NULL), -EINVAL);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	snap_retake(&s);
	BAD(&s, grb_channel_finalize(chan), -EALREADY);

	/* The message, received at last; the attached reader's refusals. */
	CHECK_EQ(grb_channel_recv(sp[1], &chan_shared, CLIENT,
				  GRB_ATTACH_READER, &att), 0);
	snap_retake(&s);
	BAD(&s, grb_channel_finalize(att), -EPERM);
	BAD(&s, grb_channel_event_fd(att, &efd), -ENOTSUP);
	BAD(&s, grb_channel_shm_fd(att, 1), -EINVAL);
	CHECK_EQ(efd, -7);
	snap_free(&s);
	close(sp[0]);
	close(sp[1]);
	close(rdonly);
	read_back(att, log);
	grb_channel_destroy(att);
	grb_channel_destroy(chan);
}

/* ---- grb_strerror() --------------------------------------------------- */

/* A message of grb's own for every errno a header in include/grb/ lists. */
static void test_strerror(void)
{
	static const int errs[] = {
		-EINVAL, -ENODATA, -EPERM, -EBADMSG, -EBUSY, -EAGAIN, -EIO,
		-ENOMEM, -ENOBUFS, -ENOTSUP, -EBADF, -ESHUTDOWN, -ENOSPC,
		-EALREADY, -EMFILE, -ETIMEDOUT, -EOPNOTSUPP, -ENFILE,
		-ENAMETOOLONG, -EEXIST, -ERANGE, -EPROTOTYPE,
		-EPROTONOSUPPORT, -EPIPE, -ENOTSOCK, -ENOTCONN, -ENOENT,
		-ECONNRESET, -EACCES, -EUCLEAN, -ESTALE, -ELOOP, -ECANCELED,
	};
	unsigned int i;
	const char *m;

	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		m = grb_strerror(errs[i]);
		CHECK(m != NULL && m[0] != '\0');
		if (strcmp(m, "unknown error") == 0) {
			fprintf(stderr, "grb_strerror(%d): no message\n",
				errs[i]);
			exit(1);
		}
	}
}

int main(void)
{
	static const struct grb_config *const cfgs[] = {
		&pcpu_disc, &chan_ovw, &chan_disc, &chan_shared,
		&pcpu_ovw_shared,
	};
	unsigned int c;
	int h;

	read_cpus();
	for (c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		for (h = HOLD_NONE; h <= HOLD_FINAL; h++)
			test_refusals(cfgs[c], (enum hold)h);
		test_iter_refusals(cfgs[c]);
		test_writer_inputs(cfgs[c]);
	}
	test_basic(GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE);
	test_basic(GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD);
	test_ctf();
	test_shm();
	test_strerror();
	printf("test_bad_input: %u refused calls changed nothing; passed\n",
	       checked);
	return 0;
}
