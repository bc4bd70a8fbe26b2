/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_config.c - what creation refuses and what it reports:
 * grb_config_check() and grb_channel_create() on every invalid input, a
 * buffer_create callback that fails half way, grb_channel_memory(), the
 * buffer count, and grb_strerror().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"

static uint64_t clock_zero(void)
{
	return 0;
}

static size_t hdr_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t hdr_page_minus_1(void)
{
	return (size_t)sysconf(_SC_PAGESIZE) - 1;
}

/* A valid starting point every invalid case below changes one field of. */
static const struct grb_config good = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 }, 0,
};

static struct grb_channel_attr good_attr(void)
{
	struct grb_channel_attr a = { "cfg", 0, 4, NULL };

	a.subbuf_size = (size_t)sysconf(_SC_PAGESIZE);
	return a;
}

/* Creation must refuse and hand nothing back. */
static void expect_create_einval(const struct grb_config *cfg,
				 const struct grb_channel_attr *attr)
{
	struct grb_channel *chan = NULL;

	CHECK_EQ(grb_channel_create(cfg, attr, &chan), -EINVAL);
	CHECK(chan == NULL);
}

static void test_config_check(void)
{
	struct grb_channel_attr attr = good_attr();
	struct grb_config c;
	unsigned int bits;

	CHECK_EQ(grb_config_check(&good), 0);
	CHECK_EQ(grb_config_check(NULL), -EINVAL);

	/* Enum values out of range, on both sides. */
	c = good;
	c.alloc = (enum grb_alloc)2;
	CHECK_EQ(grb_config_check(&c), -EINVAL);
	expect_create_einval(&c, &attr);
	c.alloc = (enum grb_alloc)-1;
	CHECK_EQ(grb_config_check(&c), -EINVAL);
	c = good;
	c.mode = (enum grb_mode)2;
	CHECK_EQ(grb_config_check(&c), -EINVAL);
	expect_create_einval(&c, &attr);
	c.mode = (enum grb_mode)-1;
	CHECK_EQ(grb_config_check(&c), -EINVAL);

	/* Flags: GRB_CONFIG_SHARED or nothing; a private channel may use a
	 * shared configuration. */
	c = good;
	c.flags = GRB_CONFIG_SHARED;
	CHECK_EQ(grb_config_check(&c), 0);
	c.flags = 2;
	CHECK_EQ(grb_config_check(&c), -EINVAL);
	expect_create_einval(&c, &attr);
	c.flags = ~0u;
	CHECK_EQ(grb_config_check(&c), -EINVAL);

	/* Timestamp bits: 0 needs no clock, 1 to 64 need one, 65 is out. */
	c = good;
	c.cb.clock_read = clock_zero;
	for (bits = 1; bits <= 64; bits++) {
		c.timestamp_bits = bits;
		CHECK_EQ(grb_config_check(&c), 0);
	}
	c.timestamp_bits = 65;
	CHECK_EQ(grb_config_check(&c), -EINVAL);
	expect_create_einval(&c, &attr);
	c.timestamp_bits = ~0u;
	CHECK_EQ(grb_config_check(&c), -EINVAL);
	/* A clock without bits would be read for nothing. */
	c.timestamp_bits = 0;
	CHECK_EQ(grb_config_check(&c), -EINVAL);
	expect_create_einval(&c, &attr);
	/* Bits without a clock would call NULL on the fast path. */
	c = good;
	c.timestamp_bits = 16;
	CHECK_EQ(grb_config_check(&c), -EINVAL);
	expect_create_einval(&c, &attr);
	c.timestamp_bits = 64;
	CHECK_EQ(grb_config_check(&c), -EINVAL);

	/* Every valid enum combination passes. */
	c = good;
	c.alloc = GRB_ALLOC_PER_CPU;
	c.mode = GRB_MODE_OVERWRITE;
	CHECK_EQ(grb_config_check(&c), 0);
}

static void test_create_args(void)
{
	struct grb_channel_attr attr = good_attr();
	size_t page = attr.subbuf_size;
	struct grb_channel *chan = NULL;
	struct grb_config c;

	CHECK_EQ(grb_channel_create(NULL, &attr, &chan), -EINVAL);
	CHECK(chan == NULL);
	CHECK_EQ(grb_channel_create(&good, NULL, &chan), -EINVAL);
	CHECK(chan == NULL);
	CHECK_EQ(grb_channel_create(&good, &attr, NULL), -EINVAL);

	/* Sub-buffer size. */
	attr = good_attr();
	attr.subbuf_size = 0;
	expect_create_einval(&good, &attr);
	attr.subbuf_size = 3 * page;
	expect_create_einval(&good, &attr);
	attr.subbuf_size = page + 1;
	expect_create_einval(&good, &attr);
	attr.subbuf_size = page / 2;
	expect_create_einval(&good, &attr);
	attr.subbuf_size = 1;
	expect_create_einval(&good, &attr);
	attr.subbuf_size = (size_t)GRB_SUBBUF_SIZE_MAX * 2;
	expect_create_einval(&good, &attr);
	attr.subbuf_size = SIZE_MAX;
	expect_create_einval(&good, &attr);

	/* Sub-buffer count. */
	attr = good_attr();
	attr.num_subbuf = 0;
	expect_create_einval(&good, &attr);
	attr.num_subbuf = 1;
	expect_create_einval(&good, &attr);
	attr.num_subbuf = 3;
	expect_create_einval(&good, &attr);
	attr.num_subbuf = 6;
	expect_create_einval(&good, &attr);
	attr.num_subbuf = (size_t)GRB_NUM_SUBBUF_MAX * 2;   /* 2^32 */
	expect_create_einval(&good, &attr);
	attr.num_subbuf = SIZE_MAX;
	expect_create_einval(&good, &attr);

	/*
	 * Both at their maximum pass each bound alone, but a buffer of 2^62
	 * bytes would bring positions near wrapping; creation caps
	 * log2(size) + log2(count) at 48 (channel.h: more than 2^48 bytes).
	 */
	attr.subbuf_size = (size_t)GRB_SUBBUF_SIZE_MAX;
	attr.num_subbuf = (size_t)GRB_NUM_SUBBUF_MAX;
	expect_create_einval(&good, &attr);
	attr.num_subbuf = (size_t)1 << 18;             /* 31 + 18 = 49 */
	expect_create_einval(&good, &attr);

	/* A sub-buffer header that leaves no byte for a record. */
	attr = good_attr();
	c = good;
	c.cb.subbuf_header_size = hdr_page;
	expect_create_einval(&c, &attr);
	/* One byte left is enough. */
	c.cb.subbuf_header_size = hdr_page_minus_1;
	CHECK_EQ(grb_channel_create(&c, &attr, &chan), 0);
	grb_channel_destroy(chan);

	/* The smallest valid geometry is accepted: one page, two of them. */
	attr.num_subbuf = 2;
	CHECK_EQ(grb_channel_create(&good, &attr, &chan), 0);
	grb_channel_destroy(chan);
}

/* Callbacks that record what creation did to each buffer. */
struct create_log {
	int fail_at;            /* index of the call that fails, or -1 */
	int fail_ret;           /* what it returns: 0 for -ENOTCONN */
	int created[64];        /* cpu of each buffer_create call */
	int ncreated;
	int finalized[64];      /* cpu of each buffer_finalize call */
	int nfinalized;
	void *priv_seen;
};

static int log_create(struct grb_buf *buf, void *priv, int cpu)
{
	struct create_log *log = (struct create_log *)priv;

	CHECK(buf != NULL);
	CHECK_EQ(grb_buf_cpu(buf), cpu);
	log->priv_seen = priv;
	if (log->ncreated == log->fail_at) {
		log->ncreated++;
		return log->fail_ret ? log->fail_ret : -ENOTCONN;
	}
	CHECK(log->ncreated < 64);
	log->created[log->ncreated++] = cpu;
	return 0;
}

static void log_finalize(struct grb_buf *buf, void *priv, int cpu)
{
	struct create_log *log = (struct create_log *)priv;

	CHECK_EQ(grb_buf_cpu(buf), cpu);
	CHECK(log->nfinalized < 64);
	log->finalized[log->nfinalized++] = cpu;
}

static const struct grb_config logged_percpu = {
	GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 0,
	{ .buffer_create = log_create, .buffer_finalize = log_finalize }, 0,
};
static const struct grb_config logged_channel = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0,
	{ .buffer_create = log_create, .buffer_finalize = log_finalize }, 0,
};

/* One more than the highest CPU in /sys/devices/system/cpu/possible. */
static unsigned int possible_cpus(void)
{
	char line[4096], *p, *end;
	long a, b, max = -1;
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");

	CHECK(f != NULL);
	CHECK(fgets(line, sizeof(line), f) != NULL);
	fclose(f);
	/* A list of "a" or "a-b" items separated by commas. */
	for (p = line; *p && *p != '\n'; p = end) {
		a = strtol(p, &end, 10);
		CHECK(end != p);
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			CHECK(end != p);
		}
		if (b > max)
			max = b;
		if (*end == ',')
			end++;
	}
	CHECK(max >= 0);
	return (unsigned int)max + 1;
}

static void test_buffer_create_fails(void)
{
	struct grb_channel_attr attr = good_attr();
	struct create_log log;
	struct grb_channel *chan = NULL;
	unsigned int n = possible_cpus(), i;
	int fail_at = n >= 2 ? 1 : 0;

	/* A clean run first: every buffer created once, finalized once. */
	memset(&log, 0, sizeof(log));
	log.fail_at = -1;
	attr.priv = &log;
	CHECK_EQ(grb_channel_create(&logged_percpu, &attr, &chan), 0);
	CHECK_EQ(grb_channel_nr_bufs(chan), n);
	CHECK(grb_channel_priv(chan) == &log);
	CHECK(log.priv_seen == &log);
	CHECK_EQ(log.ncreated, (int)n);
	for (i = 0; i < n && i < 64; i++)
		CHECK_EQ(log.created[i], (int)i);
	CHECK_EQ(log.nfinalized, 0);
	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(log.nfinalized, (int)n);
	/* Destroy after finalize does not finalize again. */
	grb_channel_destroy(chan);
	CHECK_EQ(log.nfinalized, (int)n);

	/*
	 * The second buffer's callback fails: its error comes back as is,
	 * the first buffer (created) is finalized, the failing one is not,
	 * and everything is unmapped (valgrind checks the heap; the maps
	 * are freed by the same channel_free path).  With a single possible
	 * CPU the only buffer fails instead.
	 */
	memset(&log, 0, sizeof(log));
	log.fail_at = fail_at;
	attr.priv = &log;
	chan = NULL;
	CHECK_EQ(grb_channel_create(&logged_percpu, &attr, &chan), -ENOTCONN);
	CHECK(chan == NULL);
	CHECK_EQ(log.ncreated, fail_at + 1);
	CHECK_EQ(log.nfinalized, fail_at);
	if (fail_at == 1)
		CHECK_EQ(log.finalized[0], 0);

	/* Per channel: one buffer, cpu -1; it failing finalizes nothing. */
	memset(&log, 0, sizeof(log));
	log.fail_at = 0;
	attr.priv = &log;
	CHECK_EQ(grb_channel_create(&logged_channel, &attr, &chan), -ENOTCONN);
	CHECK_EQ(log.nfinalized, 0);
	/* A positive return is a failure too, reported as -EINVAL. */
	memset(&log, 0, sizeof(log));
	log.fail_at = 0;
	log.fail_ret = 5;
	CHECK_EQ(grb_channel_create(&logged_channel, &attr, &chan), -EINVAL);
	CHECK_EQ(log.nfinalized, 0);
	memset(&log, 0, sizeof(log));
	log.fail_at = -1;
	CHECK_EQ(grb_channel_create(&logged_channel, &attr, &chan), 0);
	CHECK_EQ(log.ncreated, 1);
	CHECK_EQ(log.created[0], -1);
	CHECK_EQ(grb_channel_nr_bufs(chan), 1);
	CHECK_EQ(grb_buf_cpu(grb_channel_buf(chan, 0)), -1);
	CHECK(grb_channel_buf(chan, 1) == NULL);
	/* Destroy without finalize finalizes, once. */
	grb_channel_destroy(chan);
	CHECK_EQ(log.nfinalized, 1);
	CHECK_EQ(log.finalized[0], -1);
}

static const struct grb_config mem_cfgs[4] = {
	{ GRB_ALLOC_PER_CPU, GRB_MODE_OVERWRITE, 0, { 0 }, 0 },
	{ GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 0, { 0 }, 0 },
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 0, { 0 }, 0 },
	{ GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { 0 }, 0 },
};

static void test_memory(void)
{
	static const size_t sizes[][2] = {
		{ 64 << 10, 16 }, { 4096, 2 }, { 1 << 20, 4 },
	};
	struct grb_channel_attr attr = good_attr();
	unsigned int ncpu = possible_cpus(), v, g, i;
	struct grb_channel *chan;
	struct grb_memory m;
	uint64_t phys, nbufs;

	for (v = 0; v < 4; v++) {
		for (g = 0; g < 3; g++) {
			const struct grb_config *cfg = &mem_cfgs[v];

			attr.subbuf_size = sizes[g][0];
			attr.num_subbuf = sizes[g][1];
			CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
			memset(&m, 0xa5, sizeof(m));
			CHECK_EQ(grb_channel_memory(chan, &m), 0);
			nbufs = cfg->alloc == GRB_ALLOC_PER_CPU ? ncpu : 1;
			/* The reader's spare exists in overwrite mode only. */
			phys = sizes[g][1] +
				(cfg->mode == GRB_MODE_OVERWRITE ? 1 : 0);
			CHECK_U64(m.nr_bufs, nbufs);
			CHECK_U64(grb_channel_nr_bufs(chan), nbufs);
			CHECK_U64(m.subbufs_per_buf, phys);
			CHECK_U64(m.data_bytes, nbufs * phys * sizes[g][0]);
			CHECK_U64(m.total_bytes,
				  m.data_bytes + m.control_bytes);
			CHECK(m.control_bytes > 0);
			/* The mappings are what the memory report counts. */
			for (i = 0; i < nbufs; i++) {
				struct grb_buf *b = grb_channel_buf(chan, i);

				CHECK_EQ(grb_buf_cpu(b),
					 cfg->alloc == GRB_ALLOC_PER_CPU ?
					 (int)i : -1);
				CHECK(grb_buf_channel(b) == chan);
				CHECK(m.control_bytes >= nbufs *
				      (b->shm->map_size - phys * sizes[g][0]));
			}
			CHECK(!grb_channel_buf(chan, (unsigned int)nbufs));
			/* A 64 KiB x 16 channel is almost all data. */
			if (g == 0)
				CHECK(m.control_bytes < m.data_bytes / 4);
			grb_channel_destroy(chan);
		}
	}
	CHECK_EQ(grb_channel_memory(NULL, &m), -EINVAL);
	attr = good_attr();
	CHECK_EQ(grb_channel_create(&good, &attr, &chan), 0);
	CHECK_EQ(grb_channel_memory(chan, NULL), -EINVAL);
	grb_channel_destroy(chan);
	CHECK_EQ(grb_channel_nr_bufs(NULL), 0);
	CHECK(grb_channel_buf(NULL, 0) == NULL);
	CHECK(grb_channel_priv(NULL) == NULL);
	CHECK_EQ(grb_buf_cpu(NULL), -1);
	CHECK(grb_buf_channel(NULL) == NULL);
	/* destroy(NULL) is a documented no-op. */
	grb_channel_destroy(NULL);
}

static void test_strerror(void)
{
	/* Every errno a header in include/grb/ lists. */
	static const int errs[] = {
		-EINVAL, -ENOMEM, -EAGAIN, -ESHUTDOWN, -EBUSY, -ENOBUFS, -EIO,
		-ENOSPC, -ENODATA, -ESTALE, -EPERM, -ERANGE, -EALREADY,
		-ENOTSUP, -EUCLEAN, -EBADMSG, -ETIMEDOUT, -ECANCELED, -EEXIST,
		-ENOENT, -EACCES, -EMFILE, -EBADF, -EPIPE, -ECONNRESET,
		-ENOTSOCK, -EPROTOTYPE, -EPROTONOSUPPORT, -ENOTCONN, -ENFILE,
		-ENAMETOOLONG, -ELOOP,
	};
	static const int unknown[] = {
		1, 2, EINVAL, -EINTR, -EDOM, -9999, 12345, INT32_MIN,
		INT32_MAX,
	};
	const unsigned int n = sizeof(errs) / sizeof(errs[0]);
	const char *msg[sizeof(errs) / sizeof(errs[0])];
	const char *s;
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		msg[i] = grb_strerror(errs[i]);
		CHECK(msg[i] != NULL);
		CHECK(msg[i][0] != '\0');
		CHECK(strcmp(msg[i], "unknown error") != 0);
		CHECK(strcmp(msg[i], grb_strerror(0)) != 0);
		for (j = 0; j < i; j++)
			CHECK(strcmp(msg[i], msg[j]) != 0);
	}
	/* The same value on Linux: one message for both. */
	CHECK_EQ(strcmp(grb_strerror(-EOPNOTSUPP), grb_strerror(-ENOTSUP)), 0);
	CHECK(grb_strerror(0) != NULL);
	CHECK(grb_strerror(0)[0] != '\0');
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		s = grb_strerror(unknown[i]);
		CHECK(s != NULL);
		CHECK_EQ(strcmp(s, "unknown error"), 0);
	}
}

/* What buffer_begin and buffer_end are told (struct grb_subbuf_info). */
static struct info_log {
	uint64_t begins, ends;
	uint64_t next_seq;
	struct grb_subbuf_info last_end;
	uint64_t begin_ts;
} ilog;
static uint64_t info_clock_val = 1000;

static uint64_t info_clock(void)
{
	return ++info_clock_val;
}

static void info_begin(struct grb_buf *buf, void *header,
		       const struct grb_subbuf_info *info)
{
	(void)buf;
	(void)header;
	CHECK_EQ(info->cpu, -1);
	ilog.begins++;
	ilog.begin_ts = info->timestamp;
}

static void info_end(struct grb_buf *buf, void *header,
		     const struct grb_subbuf_info *info)
{
	struct grb_buf_stats st;

	(void)header;
	/* One writer: deliveries come in position order, and the running
	 * counts are the buffer's at that moment. */
	CHECK_U64(info->seq, ilog.next_seq);
	ilog.next_seq = info->seq + 1;
	CHECK_EQ(info->cpu, -1);
	CHECK(info->timestamp >= ilog.begin_ts);
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	CHECK_U64(info->lost, st.lost_full + st.lost_wrap + st.lost_big +
		  st.lost_nesting);
	CHECK_U64(info->overwritten, st.overwritten);
	ilog.ends++;
	ilog.last_end = *info;
}

static void test_subbuf_info(void)
{
	for (int ow = 0; ow < 2; ow++) {
		const struct grb_config cfg = {
			GRB_ALLOC_PER_CHANNEL,
			ow ? GRB_MODE_OVERWRITE : GRB_MODE_DISCARD, 64,
			{ .clock_read = info_clock, .buffer_begin = info_begin,
			  .buffer_end = info_end }, 0,
		};
		struct grb_channel_attr attr = { "info", 4096, 4, NULL };
		struct grb_channel *chan;
		struct grb_buf_stats st;
		uint64_t i;

		memset(&ilog, 0, sizeof(ilog));
		CHECK_EQ(grb_channel_create(&cfg, &attr, &chan), 0);
		/* 100 bytes a record: 40 to a sub-buffer, 1000 in all. */
		for (i = 0; i < 1000; i++) {
			struct grb_ctx ctx = GRB_CTX_INIT(100, 1);

			if (grb_reserve(&cfg, chan, &ctx) == 0) {
				grb_write_fill(&cfg, &ctx, 0, 100);
				grb_commit(&cfg, &ctx);
			}
		}
		CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
		CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
		CHECK_U64(ilog.ends, ow ? 1000 / 40 : 4);
		CHECK_U64(ilog.begins, ilog.ends);
		CHECK_U64(ilog.last_end.records, 40);
		CHECK_U64(ilog.last_end.data_size, 4000);
		if (ow) {
			CHECK(st.overwritten > 0);
			CHECK_U64(ilog.last_end.overwritten, st.overwritten);
			CHECK_U64(ilog.last_end.lost, 0);
		} else {
			CHECK_U64(st.lost_full, 1000 - 4 * 40);
			/* The last sub-buffer was delivered by the flush,
			 * after every refusal. */
			CHECK_U64(ilog.last_end.lost, st.lost_full);
			CHECK_U64(ilog.last_end.overwritten, 0);
		}
		grb_channel_destroy(chan);
	}
}

int main(void)
{
	test_config_check();
	test_create_args();
	test_buffer_create_fails();
	test_memory();
	test_subbuf_info();
	test_strerror();
	printf("test_config: passed\n");
	return 0;
}
