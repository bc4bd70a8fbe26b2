/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_ctf_attach.c - what another process needs to read a
 * CTF client's trace (grb/ctf.h): grb_ctf_config(), its refusals and the
 * eight configurations, each of the shared variant and each apart; a
 * reader attached with one decodes the events of a shared tracer this
 * process created; and grb_ctf_metadata_load() on the tracer's own
 * metadata (its UUID returned, again and again), on what is not this
 * client's metadata or is damaged (-EBADMSG), and on another trace's,
 * which it learns.  A reader that attaches with the wrong configuration
 * or trusts damaged metadata misreads every event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "ctf_rig.h"
#include "grb/channel.h"
#include "grb/ctf.h"
#include "grb/reader.h"
#include "grb/shm.h"

static void contract_config(void)
{
	static const struct grb_ctf_field f[] = { INT("n", 4, 0, 10), STR("s") };
	struct grb_ctf_event_desc d = { "n", -1, f, 2 };
	const struct grb_config *seen[8], *cfg;
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	union grb_ctf_value v[2];
	struct grb_channel *att;
	struct grb_buf *buf;
	struct grb_ctf *t;
	char dir[256];
	uint64_t n = 0;
	int ret;

	CHECK(grb_ctf_config((enum grb_alloc)2, GRB_MODE_DISCARD,
			     GRB_CTF_CLOCK_MONOTONIC) == NULL);
	CHECK(grb_ctf_config(GRB_ALLOC_PER_CPU, (enum grb_mode)2,
			     GRB_CTF_CLOCK_MONOTONIC) == NULL);
	CHECK(grb_ctf_config(GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD,
			     (enum grb_ctf_clock)2) == NULL);
	/* Eight configurations, all of the shared variant. */
	for (int i = 0; i < 8; i++) {
		seen[i] = grb_ctf_config((enum grb_alloc)(i & 1),
					 (enum grb_mode)(i >> 1 & 1),
					 (enum grb_ctf_clock)(i >> 2));
		CHECK(seen[i] != NULL);
		CHECK(seen[i]->flags & GRB_CONFIG_SHARED);
		CHECK_EQ(seen[i]->alloc, i & 1);
		CHECK_EQ(seen[i]->mode, i >> 1 & 1);
		for (int j = 0; j < i; j++)
			CHECK(seen[i] != seen[j]);
	}

	/* A reader attached with it decodes the events of a trace this
	 * process created. */
	snprintf(dir, sizeof(dir), "%s/attach", scratch);
	CHECK_EQ(mkdir(dir, 0755), 0);
	a.shm_dir = dir;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	v[0].u = 1;
	v[1].s = "one";
	CHECK_EQ(grb_ctf_emit(t, ev, v), 0);
	v[1].s = "two";
	CHECK_EQ(grb_ctf_emit(t, ev, v), 0);
	CHECK_EQ(grb_channel_flush(grb_ctf_channel(t), GRB_FLUSH_ACTIVE), 0);
	cfg = grb_ctf_config(a.alloc, a.mode, a.clock);
	CHECK_EQ(grb_channel_attach_dir(cfg, GRB_CTF_CLIENT, dir, "c",
					GRB_ATTACH_READER, &att), 0);
	buf = grb_channel_buf(att, 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	while ((ret = grb_reader_get_next(buf)) == 0) {
		struct grb_record rec;
		size_t off = grb_reader_first_record(buf);
		char s[8];

		while (grb_reader_record(buf, off, &rec) == 0) {
			CHECK_EQ(rec.payload_len, 4 + 4);
			CHECK_EQ(grb_reader_read(buf, rec.payload_off + 4, s, 4),
				 0);
			CHECK(strcmp(s, n++ ? "two" : "one") == 0);
			off = rec.next;
		}
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK_EQ(ret, -EAGAIN);
	CHECK_U64(n, 2);
	CHECK_EQ(grb_reader_release(buf), 0);
	grb_channel_destroy(att);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

/* The trace UUID as the metadata's trace block writes it. */
static void uuid_of(const char *m, uint8_t u[16])
{
	const char *p = strstr(m, "\tuuid = \"");
	unsigned int k = 0;

	CHECK(p != NULL);
	for (p += 9; *p != '"' && k < 32; p++) {
		if (*p == '-')
			continue;
		if (k % 2 == 0)
			u[k / 2] = 0;
		u[k / 2] = (uint8_t)(u[k / 2] << 4 |
				     (*p <= '9' ? *p - '0' : *p - 'a' + 10));
		k++;
	}
	CHECK_EQ(k, 32);
}

/* A copy of metadata @m as another trace's: the first hex digit of its
 * UUID comment made @digit (other than the original). */
static char *other_trace(const char *m, size_t len, char digit)
{
	char *c = malloc(len + 1);
	char *p;

	CHECK(c != NULL);
	memcpy(c, m, len + 1);
	p = strstr(c, "/* grb-trace uuid=");
	CHECK(p != NULL);
	CHECK(p[18] != digit);
	p[18] = digit;
	return c;
}

static void contract_metadata(void)
{
	static const struct grb_ctf_field f[] = {
		INT("n", 4, 0, 10), STR("s"), FLTS("d", 8, 2),
	};
	struct grb_ctf_event_desc d = { "a", -1, f, 3 };
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	uint8_t u[16], want[16];
	char dir[256], digits[5];
	struct grb_ctf *t;
	char *m, *c, *p;
	size_t len;
	int k = 0;

	snprintf(dir, sizeof(dir), "%s/load", scratch);
	a.trace_dir = dir;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	d.name = "b";
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	m = slurp(dir, "metadata", &len);

	/* The tracer's own metadata, again and again. */
	memset(u, 0, sizeof(u));
	CHECK_EQ(grb_ctf_metadata_load(m, len, u), 0);
	uuid_of(m, want);
	CHECK(memcmp(u, want, sizeof(u)) == 0);
	CHECK_EQ(grb_ctf_metadata_load(m, len, u), 0);
	CHECK_EQ(grb_ctf_metadata_load(m, len, NULL), 0);

	/* Not metadata this client wrote, or damaged. */
	CHECK_EQ(grb_ctf_metadata_load(NULL, 0, u), -EBADMSG);
	CHECK_EQ(grb_ctf_metadata_load("garbage", 7, u), -EBADMSG);
	CHECK_EQ(grb_ctf_metadata_load("", 0, u), -EBADMSG);
	p = strstr(m, "/* grb-trace uuid=");
	CHECK(p != NULL);
	CHECK_EQ(grb_ctf_metadata_load(m, (size_t)(p - m) + 30, u), -EBADMSG);
	/* Four other traces' UUIDs. */
	for (const char *h = "abcdef"; *h && k < 4; h++)
		if (*h != p[18])
			digits[k++] = *h;
	c = other_trace(m, len, 'g');                    /* not hex */
	CHECK_EQ(grb_ctf_metadata_load(c, len, u), -EBADMSG);
	free(c);
	c = other_trace(m, len, digits[0]);
	p = strstr(c, "/* grb-layout 0 ");
	CHECK(p != NULL);
	p[16] = 'q';                                     /* a damaged field */
	CHECK_EQ(grb_ctf_metadata_load(c, len, u), -EBADMSG);
	free(c);
	c = other_trace(m, len, digits[1]);
	p = strstr(c, "/* grb-layout 0 ");
	CHECK(p != NULL);
	p[5] = 'X';                                      /* id 1 comes first */
	CHECK_EQ(grb_ctf_metadata_load(c, len, u), -EBADMSG);
	free(c);
	/* Cut inside a class's line: damaged, not a shorter class (it
	 * was taken as one, and the whole text loaded after it then
	 * replaced nothing). */
	c = other_trace(m, len, digits[3]);
	p = strstr(c, "/* grb-layout 0 ");
	CHECK(p != NULL);
	for (size_t cut = 16; cut < strcspn(p + 16, "\n") + 16; cut++)
		CHECK_EQ(grb_ctf_metadata_load(c, (size_t)(p - c) + cut, u),
			 -EBADMSG);
	free(c);
	/* Another trace, whole: learnt, its UUID returned. */
	c = other_trace(m, len, digits[2]);
	CHECK_EQ(grb_ctf_metadata_load(c, len, u), 0);
	want[0] = (uint8_t)((want[0] & 0x0f) | (digits[2] - 'a' + 10) << 4);
	CHECK(memcmp(u, want, sizeof(u)) == 0);
	free(c);
	free(m);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

int main(void)
{
	ctf_rig_start();
	contract_config();
	contract_metadata();
	return ctf_rig_done("test_ctf_attach");
}
