/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_ctf_packets.c - what a consumer of a CTF client's
 * buffers does to the packets it writes out (grb/ctf.h):
 * grb_ctf_packet_fixup() on packets at any alignment, refusing what is
 * not a packet without touching it, counting the packets missing before
 * each and raising a loss count that went back; grb_ctf_stream_trailer()
 * and its refusals, the header-only packet it appends when refusals came
 * after the last one, and the case it is for: a shared tracer's discard
 * buffer that filled with no reader, refusals after its last packet, a
 * reader attached after the stop.  Without them a reader would report
 * the wrong losses, or none.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "ctf_rig.h"
#include "grb/channel.h"
#include "grb/ctf.h"
#include "grb/reader.h"
#include "grb/shm.h"

/* Packet @seq with @discarded at @p (any alignment), 8 bytes of data. */
static void put_packet(unsigned char *p, uint64_t seq, uint64_t discarded)
{
	struct packet_head h;

	memset(&h, 0, sizeof(h));
	h.magic = 0xC1FC1FC1;
	memset(h.uuid, 0x5a, sizeof(h.uuid));
	h.timestamp_begin = 1000 * seq;
	h.timestamp_end = 1000 * seq + 500;
	h.content_size = h.packet_size = (sizeof(h) + 8) * 8;
	h.packet_seq_num = seq;
	h.events_discarded = discarded;
	h.cpu_id = 1;
	memcpy(p, &h, sizeof(h));
	memset(p + sizeof(h), 0xee, 8);
}

static void contract_fixup(void)
{
	enum { SIZE = sizeof(struct packet_head) + 8 };
	unsigned char buf[SIZE + 1], copy[SIZE + 1];
	unsigned char *p = buf + 1;          /* not aligned */
	struct grb_ctf_stream_state s;
	struct packet_head h;
	uint64_t gap = 99;

	memset(&s, 0, sizeof(s));
	memset(buf, 0, sizeof(buf));
	put_packet(p, 5, 3);
	CHECK_EQ(grb_ctf_packet_fixup(NULL, SIZE, &s, &gap), -EINVAL);
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, NULL, &gap), -EINVAL);
	/* Not a packet: nothing changes. */
	memcpy(copy, buf, sizeof(buf));
	CHECK_EQ(grb_ctf_packet_fixup(p, sizeof(struct packet_head) - 1, &s,
				      &gap), -EBADMSG);
	p[0] ^= 1;
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, &gap), -EBADMSG);
	p[0] ^= 1;
	CHECK(memcmp(copy, buf, sizeof(buf)) == 0);
	CHECK(!s.started && !s.next_seq && !s.last_discarded);
	CHECK_U64(gap, 99);

	/* The first packet: no gap before it, whatever its number. */
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, &gap), 0);
	CHECK_U64(gap, 0);
	CHECK(memcmp(copy, buf, sizeof(buf)) == 0);
	CHECK(s.started);
	CHECK_U64(s.next_seq, 6);
	CHECK_U64(s.last_discarded, 3);
	/* Three packets missing, and an older loss count: raised to the
	 * previous packet's, nothing else changed. */
	put_packet(p, 9, 2);
	memcpy(copy, buf, sizeof(buf));
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, &gap), 0);
	CHECK_U64(gap, 3);
	memcpy(&h, p, sizeof(h));
	CHECK_U64(h.events_discarded, 3);
	memcpy(copy + 1 + offsetof(struct packet_head, events_discarded),
	       &h.events_discarded, sizeof(h.events_discarded));
	CHECK(memcmp(copy, buf, sizeof(buf)) == 0);
	CHECK_U64(s.next_seq, 10);
	CHECK_U64(s.last_discarded, 3);
	/* The next one, more losses; @gap may be NULL. */
	put_packet(p, 10, 7);
	memcpy(copy, buf, sizeof(buf));
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, NULL), 0);
	CHECK(memcmp(copy, buf, sizeof(buf)) == 0);
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, &gap), 0);
	CHECK_U64(s.next_seq, 11);
	CHECK_U64(s.last_discarded, 7);
	/* The same packet again is no gap. */
	CHECK_U64(gap, 0);
}

/*
 * A header-only packet @o made from packet @from: the same stream, UUID
 * and CPU, both timestamps @ts, no event, sequence number @seq and
 * events_discarded @discarded; the bytes around it untouched.
 */
static void check_header_only(const unsigned char *out, size_t out_size,
			      const unsigned char *o, const unsigned char *from,
			      uint64_t ts, uint64_t seq, uint64_t discarded)
{
	struct packet_head h, f;

	CHECK_EQ(out[0], 0x77);
	CHECK_EQ(out[out_size - 1], 0x77);
	memcpy(&h, o, sizeof(h));
	memcpy(&f, from, sizeof(f));
	CHECK_EQ(h.magic, f.magic);
	CHECK(memcmp(h.uuid, f.uuid, sizeof(h.uuid)) == 0);
	CHECK_EQ(h.stream_id, f.stream_id);
	CHECK_U64(h.stream_instance_id, f.stream_instance_id);
	CHECK_EQ(h.cpu_id, f.cpu_id);
	CHECK_U64(h.timestamp_begin, ts);
	CHECK_U64(h.timestamp_end, ts);
	CHECK_U64(h.content_size, GRB_CTF_PACKET_HEADER_SIZE * 8);
	CHECK_U64(h.packet_size, GRB_CTF_PACKET_HEADER_SIZE * 8);
	CHECK_U64(h.packet_seq_num, seq);
	CHECK_U64(h.events_discarded, discarded);
}

static void contract_trailer_args(void)
{
	enum { SIZE = sizeof(struct packet_head) + 8 };
	unsigned char last[SIZE + 1], out[GRB_CTF_PACKET_HEADER_SIZE + 2];
	unsigned char *p = last + 1, *o = out + 1;     /* not aligned */
	struct grb_ctf_stream_state s, s0;
	struct packet_head l;

	CHECK_EQ(GRB_CTF_PACKET_HEADER_SIZE, sizeof(struct packet_head));
	memset(&s, 0, sizeof(s));
	memset(out, 0x77, sizeof(out));
	put_packet(p, 4, 10);
	CHECK_EQ(grb_ctf_stream_trailer(NULL, &s, 1, o), -EINVAL);
	CHECK_EQ(grb_ctf_stream_trailer(p, NULL, 1, o), -EINVAL);
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 1, NULL), -EINVAL);
	/* No packet appended yet. */
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 11, o), -EBADMSG);
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, NULL), 0);
	/* Not a CTF header. */
	p[0] ^= 1;
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 11, o), -EBADMSG);
	p[0] ^= 1;
	/* Every refusal reported already: none needed, nothing touched. */
	s0 = s;
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 10, o), 0);
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 3, o), 0);
	CHECK(memcmp(&s, &s0, sizeof(s)) == 0);
	for (size_t i = 0; i < sizeof(out); i++)
		CHECK_EQ(out[i], 0x77);
	/* Later refusals: the next packet of the stream, header only. */
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 25, o), 1);
	memcpy(&l, p, sizeof(l));
	check_header_only(out, sizeof(out), o, p, l.timestamp_end, 5, 25);
	/* The state moved on as if the trailer went through the fixup. */
	CHECK(s.started);
	CHECK_U64(s.next_seq, 6);
	CHECK_U64(s.last_discarded, 25);
	CHECK_EQ(grb_ctf_stream_trailer(o, &s, 25, o), 0);
}

/*
 * The case the trailer is for: a shared tracer's discard-mode buffer
 * fills with no reader, a flush closes its last packet, and what is
 * emitted after is refused.  A reader that attaches after the stop finds
 * packets whose last events_discarded misses those refusals; the trailer
 * carries the total grb_ctf_get_stats() reports.
 */
static void contract_trailer_shm(void)
{
	static const struct grb_ctf_field f[] = { INT("n", 4, 0, 10) };
	struct grb_ctf_event_desc d = { "n", -1, f, 1 };
	struct grb_ctf_attr a = attr_ok();
	unsigned char last[GRB_CTF_PACKET_HEADER_SIZE];
	unsigned char out[GRB_CTF_PACKET_HEADER_SIZE];
	const struct grb_ctf_event *ev;
	struct grb_ctf_stream_state s;
	struct grb_reader_subbuf sb;
	struct grb_ctf_stats st;
	struct grb_buf_stats bs;
	union grb_ctf_value v[1];
	struct grb_channel *att;
	struct packet_head h;
	struct grb_buf *buf;
	struct grb_ctf *t;
	uint64_t before, packets = 0;
	char dir[256];
	int ret;

	snprintf(dir, sizeof(dir), "%s/trailer", scratch);
	CHECK_EQ(mkdir(dir, 0755), 0);
	a.shm_dir = dir;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	v[0].u = 7;
	for (int i = 0; i < 4096; i++)
		grb_ctf_emit(t, ev, v);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	before = st.events_discarded;
	CHECK(before > 0);
	CHECK_EQ(grb_channel_flush(grb_ctf_channel(t), GRB_FLUSH_ACTIVE), 0);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(grb_ctf_emit(t, ev, v), -ENOBUFS);
	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events_discarded, before + 100);

	CHECK_EQ(grb_channel_attach_dir(grb_ctf_config(a.alloc, a.mode,
						       a.clock),
					GRB_CTF_CLIENT, dir, "c",
					GRB_ATTACH_READER, &att), 0);
	buf = grb_channel_buf(att, 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	memset(&s, 0, sizeof(s));
	while ((ret = grb_reader_get_next(buf)) == 0) {
		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		CHECK_EQ(grb_ctf_packet_fixup((void *)(uintptr_t)sb.data,
					      sb.data_size, &s, NULL), 0);
		memcpy(last, sb.data, sizeof(last));
		packets++;
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK_EQ(ret, -ENODATA);
	CHECK_U64(packets, a.num_subbuf);
	/* The last packet misses the 100 refused after the flush. */
	memcpy(&h, last, sizeof(h));
	CHECK_U64(h.events_discarded, before);
	CHECK_EQ(grb_buf_get_stats(buf, &bs), 0);
	CHECK_EQ(grb_ctf_stream_trailer(last, &s, bs.lost_full + bs.lost_wrap +
					bs.lost_big + bs.lost_nesting, out), 1);
	memcpy(&h, out, sizeof(h));
	CHECK_U64(h.events_discarded, st.events_discarded);
	CHECK_U64(h.packet_seq_num, a.num_subbuf);
	CHECK_EQ(grb_reader_release(buf), 0);
	grb_channel_destroy(att);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

/* grb_ctf_stream_leader(): every return, what it writes and leaves. */
static void contract_leader(void)
{
	enum { SIZE = sizeof(struct packet_head) + 8 };
	unsigned char first[SIZE + 1], out[GRB_CTF_PACKET_HEADER_SIZE + 2];
	unsigned char *p = first + 1, *o = out + 1;    /* not aligned */
	struct grb_ctf_stream_state s, s0;
	struct packet_head f;
	uint64_t gap = 0;

	memset(&s, 0, sizeof(s));
	memset(out, 0x77, sizeof(out));
	put_packet(p, 9, 40);
	CHECK_EQ(grb_ctf_stream_leader(NULL, &s, o), -EINVAL);
	CHECK_EQ(grb_ctf_stream_leader(p, NULL, o), -EINVAL);
	CHECK_EQ(grb_ctf_stream_leader(p, &s, NULL), -EINVAL);
	p[0] ^= 1;
	CHECK_EQ(grb_ctf_stream_leader(p, &s, o), -EBADMSG);
	p[0] ^= 1;
	/* A stream that starts at packet 0 needs none: nothing touched. */
	put_packet(p, 0, 0);
	s0 = s;
	CHECK_EQ(grb_ctf_stream_leader(p, &s, o), 0);
	CHECK(memcmp(&s, &s0, sizeof(s)) == 0);
	for (size_t i = 0; i < sizeof(out); i++)
		CHECK_EQ(out[i], 0x77);
	/* One that starts at packet 9, 40 events refused before it. */
	put_packet(p, 9, 40);
	CHECK_EQ(grb_ctf_stream_leader(p, &s, o), 1);
	memcpy(&f, p, sizeof(f));
	check_header_only(out, sizeof(out), o, p, f.timestamp_begin, 0, 0);
	CHECK_EQ(s.started, 1);
	CHECK_U64(s.next_seq, 1);
	CHECK_U64(s.last_discarded, 0);
	/* The first packet then shows the 8 packets before it as a gap. */
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, &gap), 0);
	CHECK_U64(gap, 8);
	CHECK_U64(s.last_discarded, 40);
	/* Once a packet is appended, never again. */
	put_packet(p, 30, 50);
	s0 = s;
	memset(out, 0x77, sizeof(out));
	CHECK_EQ(grb_ctf_stream_leader(p, &s, o), 0);
	CHECK(memcmp(&s, &s0, sizeof(s)) == 0);
	CHECK_EQ(out[1], 0x77);
}

int main(void)
{
	ctf_rig_start();
	contract_fixup();
	contract_trailer_args();
	contract_trailer_shm();
	contract_leader();
	return ctf_rig_done("test_ctf_packets");
}
