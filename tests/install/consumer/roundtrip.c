/* SPDX-License-Identifier: MIT */
/*
 * tests/install/consumer/roundtrip.c - what an external program does with
 * an installed grb: create a channel, write records, read them back and
 * check each one, once through the engine API (grb/grb.h, with its own
 * static const configuration, so the inline fast path is compiled here,
 * in the consumer) and once through the basic client (grb/basic.h).
 *
 * Built three ways by tests/install/run.sh: into a program, into a
 * program through a CMake project, and into a -shared plugin that a host
 * dlopen()s.  It includes only installed headers, as <grb/...>.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <grb/basic.h>
#include <grb/grb.h>

#include "roundtrip.h"

#define RT_RECORDS 200u

/*
 * The engine client: a 4-byte length before each payload, no sub-buffer
 * header, no timestamps.  Per-CPU buffers, so the fast path reads the
 * CPU number from the rseq area (__rseq_offset) in this object.
 */
static size_t rt_header_size(const struct grb_config *cfg, size_t offset,
			     size_t *pre, const struct grb_ctx *ctx)
{
	(void)cfg;
	(void)ctx;
	*pre = grb_offset_align(offset, 4);
	return *pre + 4;
}

static int rt_decode(const struct grb_config *cfg, const void *subbuf,
		     size_t offset, size_t data_size, struct grb_record *rec)
{
	const char *p = (const char *)subbuf;
	size_t at = offset + grb_offset_align(offset, 4);
	uint32_t len;

	(void)cfg;
	if (at + 4 > data_size)
		return -EINVAL;
	memcpy(&len, p + at, 4);
	if (len > data_size - at - 4)
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

static const struct grb_config rt_config = {
	.alloc = GRB_ALLOC_PER_CPU,
	.mode = GRB_MODE_DISCARD,
	.timestamp_bits = 0,
	.cb = {
		.record_header_size = rt_header_size,
		.record_decode = rt_decode,
	},
};

/* Payload i: its number and a value derived from it. */
struct rt_payload {
	uint32_t seq;
	uint32_t check;
};

static uint32_t rt_check(uint32_t seq)
{
	return seq * 2654435761u ^ 0x5a5a5a5au;
}

static int rt_fail(const char *what, int ret)
{
	fprintf(stderr, "roundtrip: %s: %d (%s)\n", what, ret,
		ret < 0 ? grb_strerror(ret) : "check failed");
	return -1;
}

/*
 * Read every sub-buffer of every buffer, marking the payloads seen.
 * The channel is finalized, so each buffer ends with -ENODATA.
 */
static int rt_engine_read(struct grb_channel *chan, unsigned char *seen)
{
	unsigned int i;

	for (i = 0; i < grb_channel_nr_bufs(chan); i++) {
		struct grb_buf *buf = grb_channel_buf(chan, i);
		int ret = grb_reader_open(buf);

		if (ret)
			return rt_fail("grb_reader_open", ret);
		while ((ret = grb_reader_get_next(buf)) == 0) {
			struct grb_reader_subbuf sb;
			struct grb_record rec;
			struct rt_payload p;
			size_t off;

			ret = grb_reader_held(buf, &sb);
			if (ret)
				return rt_fail("grb_reader_held", ret);
			off = grb_reader_first_record(buf);
			while ((ret = grb_reader_record(buf, off, &rec)) == 0) {
				if (rec.payload_len != sizeof(p))
					return rt_fail("record length", 0);
				ret = grb_reader_read(buf, rec.payload_off, &p,
						      sizeof(p));
				if (ret)
					return rt_fail("grb_reader_read", ret);
				if (p.seq >= RT_RECORDS || seen[p.seq] ||
				    p.check != rt_check(p.seq))
					return rt_fail("engine record content", 0);
				seen[p.seq] = 1;
				off = rec.next;
			}
			if (ret != -ENODATA)
				return rt_fail("grb_reader_record", ret);
			ret = grb_reader_put_next(buf);
			if (ret)
				return rt_fail("grb_reader_put_next", ret);
		}
		if (ret != -ENODATA)
			return rt_fail("grb_reader_get_next", ret);
		ret = grb_reader_release(buf);
		if (ret)
			return rt_fail("grb_reader_release", ret);
	}
	return 0;
}

static int rt_engine(void)
{
	const struct grb_channel_attr attr = {
		.name = "install-engine",
		.subbuf_size = 4096,
		.num_subbuf = 4,
	};
	unsigned char seen[RT_RECORDS] = { 0 };
	struct grb_channel *chan;
	uint32_t i;
	int ret;

	ret = grb_channel_create(&rt_config, &attr, &chan);
	if (ret)
		return rt_fail("grb_channel_create", ret);
	for (i = 0; i < RT_RECORDS; i++) {
		struct grb_ctx ctx = GRB_CTX_INIT(sizeof(struct rt_payload), 4);
		struct rt_payload p = { i, rt_check(i) };
		uint32_t len = sizeof(p);

		ret = grb_reserve(&rt_config, chan, &ctx);
		if (ret) {
			grb_channel_destroy(chan);
			return rt_fail("grb_reserve", ret);
		}
		grb_write(&rt_config, &ctx, &len, sizeof(len));
		grb_write(&rt_config, &ctx, &p, sizeof(p));
		grb_commit(&rt_config, &ctx);
	}
	ret = grb_channel_finalize(chan);
	if (ret == 0)
		ret = rt_engine_read(chan, seen);
	else
		rt_fail("grb_channel_finalize", ret);
	grb_channel_destroy(chan);
	if (ret)
		return ret;
	for (i = 0; i < RT_RECORDS; i++)
		if (!seen[i])
			return rt_fail("engine record missing", 0);
	return 0;
}

static int rt_basic(void)
{
	const struct grb_basic_attr attr = {
		.name = "install-basic",
		.subbuf_size = 4096,
		.num_subbuf = 4,
		.alloc = GRB_ALLOC_PER_CPU,
		.mode = GRB_MODE_DISCARD,
		.compress_timestamps = 1,
	};
	unsigned char seen[RT_RECORDS] = { 0 };
	struct grb_basic_event ev;
	struct rt_payload p;
	struct grb_basic *b;
	unsigned int cpu;
	uint32_t i;
	int ret;

	ret = grb_basic_create(&attr, &b);
	if (ret)
		return rt_fail("grb_basic_create", ret);
	for (i = 0; i < RT_RECORDS; i++) {
		p.seq = i;
		p.check = rt_check(i);
		ret = grb_basic_write(b, &p, sizeof(p));
		if (ret) {
			grb_basic_destroy(b);
			return rt_fail("grb_basic_write", ret);
		}
	}
	ret = grb_basic_finalize(b);
	for (cpu = 0; ret == 0 && cpu < grb_basic_nr_bufs(b); cpu++) {
		while ((ret = grb_basic_consume(b, cpu, &ev, &p, sizeof(p))) == 0) {
			if (ev.len != sizeof(p) || p.seq >= RT_RECORDS ||
			    seen[p.seq] || p.check != rt_check(p.seq)) {
				ret = rt_fail("basic record content", 0);
				break;
			}
			seen[p.seq] = 1;
		}
		if (ret == -ENODATA)
			ret = 0;
		else if (ret != -1)
			rt_fail("grb_basic_consume", ret);
	}
	grb_basic_destroy(b);
	if (ret)
		return -1;
	for (i = 0; i < RT_RECORDS; i++)
		if (!seen[i])
			return rt_fail("basic record missing", 0);
	return 0;
}

int consumer_roundtrip(const char *who)
{
	unsigned int number = grb_version_number();
	const char *version = grb_version();

	/* Headers and library must come from the same install. */
	if (number != GRB_VERSION_NUMBER ||
	    strcmp(version, GRB_VERSION_STRING) != 0) {
		fprintf(stderr, "%s: headers are %s, library is %s\n", who,
			GRB_VERSION_STRING, version);
		return -1;
	}
	if (rt_engine() || rt_basic()) {
		fprintf(stderr, "%s: round trip failed\n", who);
		return -1;
	}
	printf("%s: %u records written and read back twice (engine, basic), library %s\n",
	       who, RT_RECORDS, version);
	return 0;
}
