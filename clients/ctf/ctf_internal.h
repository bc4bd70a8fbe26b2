/* SPDX-License-Identifier: MIT */
/*
 * clients/ctf/ctf_internal.h - the CTF client's packet and event format
 * and its state, shared by the write side (ctf.c), the event classes and
 * decoder (ctf_events.c), the metadata writer (ctf_metadata.c), the
 * clocks (ctf_clock.c) and the writer thread (ctf_output.c).
 */
#ifndef GRB_CLIENTS_CTF_INTERNAL_H
#define GRB_CLIENTS_CTF_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "grb/ctf.h"
#include "grb/grb.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the CTF client writes the little-endian bit layout of its headers"
#endif

#define CTF_MAGIC      UINT32_C(0xC1FC1FC1)
#define CTF_TS_BITS    27u
#define CTF_ID_EXT     31u
#define CTF_EXT_HEADER 13u       /* u8 31, u32 id, u64 timestamp */
/* A padding event: u8 30, u16 n, n bytes. */
#define CTF_PAD_HEADER 3u
#define CTF_PAD_MAX    (CTF_PAD_HEADER + 0xffffu)

/*
 * Packet header and context, the sub-buffer header of every CTF
 * sub-buffer: packed, as the metadata declares it (84 bytes).
 */
struct ctf_packet {
	uint32_t magic;
	uint8_t uuid[16];
	uint32_t stream_id;
	uint64_t stream_instance_id;
	uint64_t timestamp_begin;
	uint64_t timestamp_end;
	uint64_t content_size;      /* bits */
	uint64_t packet_size;       /* bits */
	uint64_t packet_seq_num;
	uint64_t events_discarded;
	uint32_t cpu_id;
} __attribute__((packed));

_Static_assert(sizeof(struct ctf_packet) == GRB_CTF_PACKET_HEADER_SIZE,
	       "the packet header is GRB_CTF_PACKET_HEADER_SIZE bytes");

/*
 * Class ids skip 30, the padding event's id: the class registered after
 * @rank others has id ctf_id_of(rank), and the tables are indexed by rank.
 */
static inline uint32_t ctf_id_of(uint32_t rank)
{
	return rank < GRB_CTF_PADDING_ID ? rank : rank + 1;
}

/* The rank of class @id, or -1 for the padding id. */
static inline int ctf_rank_of(uint32_t id, uint32_t *rank)
{
	if (id == GRB_CTF_PADDING_ID)
		return -1;
	*rank = id < GRB_CTF_PADDING_ID ? id : id - 1;
	return 0;
}

/* One field of a registered class (a validated deep copy). */
struct ctf_field {
	char *name;
	enum grb_ctf_kind kind;
	unsigned int size;
	int is_signed;
	unsigned int base;
	unsigned int length;
	struct grb_ctf_enum_label *labels;   /* labels strdup()ed */
	unsigned int nr_labels;
};

/* An event class: registered by a tracer, or loaded from metadata. */
struct grb_ctf_event {
	const struct grb_ctf *owner;   /* NULL when loaded from metadata */
	uint32_t id;
	char *name;
	int loglevel;
	struct ctf_field *fields;
	unsigned int nr_fields;
	size_t fixed_size;             /* payload bytes, strings excluded */
	unsigned int nr_strings;       /* string fields (variable length) */
};

/*
 * The event classes of one trace, by id, found by its UUID: what
 * record_decode needs to find where an event ends.  Append-only: nr is
 * published with release after the class it counts.
 */
struct ctf_types {
	uint8_t uuid[16];
	_Atomic uint32_t nr;
	struct grb_ctf_event *ev[GRB_CTF_MAX_EVENTS];
	struct ctf_types *next;
};

/* The writer thread's view of one stream. */
struct ctf_stream {
	int fd;
	struct grb_ctf_stream_state st;
	uint64_t size;              /* bytes written whole */
};

struct grb_ctf {
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct ctf_types *types;
	pthread_mutex_t reg_lock;      /* registrations, metadata rewrite */
	char name[64];
	char hostname[128];
	enum grb_ctf_clock clock;
	uint64_t clock_freq;
	int64_t clock_offset_s;
	uint64_t clock_offset;         /* cycles, below one second's */
	char *trace_dir;
	char *meta_path;               /* the metadata file to (re)write */
	int made_trace_dir;
	/* Writer thread (trace_dir). */
	pthread_t thread;
	int thread_started;
	_Atomic int stop;
	int stopped;
	int write_error;
	uint64_t flush_period_ns;
	struct ctf_stream *streams;
	struct grb_ctf_stats stats;    /* the writer thread's counts */
	pthread_mutex_t stats_lock;
};

/* ctf.c: the configuration of each variant. */
const struct grb_config *grb__ctf_config(enum grb_alloc alloc,
					 enum grb_mode mode,
					 enum grb_ctf_clock clock, int shared);

/* ctf_events.c */
int grb__ctf_event_build(const struct grb_ctf_event_desc *desc,
			 struct grb_ctf_event **out);
void grb__ctf_event_free(struct grb_ctf_event *ev);
struct ctf_types *grb__ctf_types_new(const uint8_t uuid[16]);
struct ctf_types *grb__ctf_types_find(const uint8_t uuid[16]);
int grb__ctf_record_decode(const struct grb_config *cfg, const void *subbuf,
			   size_t offset, size_t data_size,
			   struct grb_record *rec);
/* Bytes of the payload of @ev at @p (at most @avail), or -EINVAL. */
long grb__ctf_payload_len(const struct grb_ctf_event *ev, const char *p,
			  size_t avail);
void grb__ctf_pad(const struct grb_config *cfg, void *at, size_t len);

/* ctf_metadata.c: the whole TSDL text of @t into a malloc()ed string. */
int grb__ctf_metadata(const struct grb_ctf *t, char **text, size_t *len);
/* Write it to t->meta_path and the trace directory, each replaced whole;
 * @excl: the first write, -EEXIST where a file is there already (and
 * nothing of this call left behind). */
int grb__ctf_metadata_write(const struct grb_ctf *t, int excl);

/* ctf_clock.c */
uint64_t grb__ctf_clock_mono(void);
uint64_t grb__ctf_clock_tsc(void);
int grb__ctf_clock_calibrate(struct grb_ctf *t);

/* ctf_output.c: the writer thread. */
int grb__ctf_output_start(struct grb_ctf *t);
int grb__ctf_output_stop(struct grb_ctf *t);

#endif /* GRB_CLIENTS_CTF_INTERNAL_H */
