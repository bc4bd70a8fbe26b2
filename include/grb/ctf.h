/* SPDX-License-Identifier: MIT */
/*
 * grb/ctf.h - a tracer client that writes Common Trace Format 1.8 traces,
 * which babeltrace2, babeltrace 1.5 and Trace Compass read.
 *
 * A tracer declares its event classes at run time (a name and fields of
 * integer, floating point, string and enumeration types, scalars or
 * fixed arrays), then records each event with one call.  Every buffer of
 * the channel is a CTF stream: each sub-buffer is one packet, whose
 * header (magic, trace UUID, stream id, stream instance id = the CPU)
 * and context (timestamp_begin/end, content_size, packet_size,
 * packet_seq_num, events_discarded, cpu_id) the client writes when the
 * sub-buffer opens and patches when it is delivered.  Events are packed
 * (byte-aligned) in native byte order:
 *
 *	compact header, u32:  id (bits 0-4) | low 27 timestamp bits (5-31)
 *	extended header:      u8 31, u32 id, u64 full timestamp (13 bytes)
 *	payload:              the fields in declaration order
 *
 * The extended header is used for ids from GRB_CTF_COMPACT_IDS up, and
 * whenever the engine asks for a full timestamp (a packet's first
 * event, or a timestamp whose bits above the low 27 differ from the
 * previous event's: always after more than 2^27 clock units, and after
 * fewer when they cross a multiple of 2^27), so a reader never misses a
 * wrap of the 27 bits.  Compact id 30 is reserved
 * for padding ("grb:padding", grb/recover.h) and written only over the
 * bytes of a writer that died before committing.
 *
 * Output.  With attr.trace_dir, a thread of the tracer writes the trace
 * there: a file "metadata" (TSDL, rewritten when an event class is
 * added) and one stream file per buffer, NAME_CPU (NAME_0 for a
 * per-channel buffer).  `babeltrace2 DIR` prints it.  With attr.shm_dir
 * the buffers are files SHM_DIR/NAME.i in shared memory (grb/shm.h) and
 * the metadata is SHM_DIR/NAME.metadata; grb-consumerd --attach drains
 * them into a trace directory, and grb-crash rebuilds a trace from them
 * after the producer died.  With both, the writer thread drains the
 * shared buffers, and completes the packets that a writer process which
 * died between reserve and commit left incomplete (grb/recover.h) once
 * they stayed so for a flush period (and at once at grb_ctf_stop()).
 *
 * Losses.  events_discarded in each packet is the running count of
 * events the buffer refused (buffer full, next sub-buffer still being
 * written, too big, nesting), which babeltrace reports as "discarded
 * events"; packets overwritten in overwrite mode leave gaps in
 * packet_seq_num, which it reports as "discarded packets".  The writer
 * thread keeps both counts (struct grb_ctf_stats) so that they can be
 * compared with what a reader reports.  A reader reports only what
 * changed after a stream's first packet, so a stream that starts after
 * packets were lost (overwrite mode, rebuilt by grb-crash after a crash,
 * or drained by a consumer that attached late) begins with a header-only
 * leader packet (grb_ctf_stream_leader(); grb-crash and grb-consumerd
 * write it), which makes those losses a gap and a rise the reader
 * reports.
 *
 * Concurrency: grb_ctf_emit*() from any thread or signal handler;
 * grb_ctf_event_register() from any thread (not a signal handler);
 * grb_ctf_stop() and grb_ctf_destroy() once every writer is done.
 */
#ifndef GRB_CTF_H
#define GRB_CTF_H

#include "grb/api.h"

#include <stddef.h>
#include <stdint.h>

#include "grb/config.h"

#ifdef __cplusplus
extern "C" {
#endif

struct grb_ctf;
struct grb_ctf_event;
struct grb_channel;

/* The client name of CTF channels in shared memory (grb/shm.h). */
#define GRB_CTF_CLIENT "grb-ctf"

/* Event ids below this use the 4-byte compact header. */
#define GRB_CTF_COMPACT_IDS 30u
/* The id of padding events: never a registered class's. */
#define GRB_CTF_PADDING_ID 30u
/* Most event classes one tracer may register. */
#define GRB_CTF_MAX_EVENTS 4096u
/* Most fields in one event class. */
#define GRB_CTF_MAX_FIELDS 64u
/* Longest event, field or enumeration label name (bytes, NUL excluded). */
#define GRB_CTF_NAME_MAX 127u
/* Most elements in a fixed array field. */
#define GRB_CTF_ARRAY_MAX 65536u
/* Most labels in one enumeration. */
#define GRB_CTF_ENUM_MAX 256u
/* Bytes of a packet's header and context: every packet starts with them,
 * and a packet without events (grb_ctf_stream_trailer()) is just them. */
#define GRB_CTF_PACKET_HEADER_SIZE 84u

/* Clock of a trace. */
enum grb_ctf_clock {
	/* CLOCK_MONOTONIC in nanoseconds (vDSO clock_gettime). */
	GRB_CTF_CLOCK_MONOTONIC = 0,
	/* The time-stamp counter (rdtscp), its frequency measured against
	 * CLOCK_MONOTONIC at creation.  x86-64 only, where Linux's CPU
	 * flags (/proc/cpuinfo) list rdtscp, constant_tsc and nonstop_tsc
	 * (-ENOTSUP otherwise). */
	GRB_CTF_CLOCK_TSC = 1,
};

/* Kind of a field. */
enum grb_ctf_kind {
	GRB_CTF_INT = 0,     /* size 1, 2, 4 or 8 bytes; signed or not */
	GRB_CTF_FLOAT = 1,   /* size 4 (float) or 8 (double) */
	GRB_CTF_STRING = 2,  /* NUL-terminated UTF-8; size 0; no array */
	GRB_CTF_ENUM = 3,    /* an integer (size, signed) with labels */
};

/* One label of an enumeration: the value it names. */
struct grb_ctf_enum_label {
	const char *label;     /* 1 to GRB_CTF_NAME_MAX bytes of UTF-8, as
				  an event name (grb_ctf_event_desc) */
	int64_t value;
};

/* One field of an event class. */
struct grb_ctf_field {
	const char *name;      /* a C identifier, at most GRB_CTF_NAME_MAX */
	enum grb_ctf_kind kind;
	unsigned int size;     /* bytes of one element (see the kinds) */
	int is_signed;         /* INT and ENUM: two's complement */
	unsigned int base;     /* INT: display base 2, 8, 10 or 16 (0: 10) */
	unsigned int length;   /* 0: a scalar; N: a fixed array of N
				  elements (INT, FLOAT, ENUM) */
	const struct grb_ctf_enum_label *labels;  /* ENUM: 1 or more */
	unsigned int nr_labels;
};

/* An event class, as the tracer declares it. */
struct grb_ctf_event_desc {
	const char *name;      /* well-formed UTF-8 without control
				  characters (C0, DEL, C1), '"' or '\\', at
				  most GRB_CTF_NAME_MAX bytes, not
				  "grb:padding" */
	int loglevel;          /* 0 to 14 as LTTng's, or -1 for none */
	const struct grb_ctf_field *fields;
	unsigned int nr_fields;  /* 0 to GRB_CTF_MAX_FIELDS */
};

struct grb_ctf_attr {
	/* Channel name: stream files are NAME_CPU; shared files NAME.i.
	 * 1 to 63 bytes of [A-Za-z0-9_.-], not "." or "..". */
	const char *name;
	size_t subbuf_size;      /* as struct grb_channel_attr */
	size_t num_subbuf;
	enum grb_alloc alloc;
	enum grb_mode mode;
	enum grb_ctf_clock clock;
	/* In-process output: the trace directory (created when missing;
	 * stream files in it must not exist).  NULL: no writer thread; the
	 * channel is read elsewhere (shm_dir) or by the caller. */
	const char *trace_dir;
	/* Shared memory: an existing directory for the buffer files and
	 * NAME.metadata (grb/shm.h).  NULL: private buffers. */
	const char *shm_dir;
	/* Writer thread: every period, flush a sub-buffer that already held
	 * events at the previous one, so that a quiet CPU's events come out
	 * within two periods (0: 100 ms).  A time, however busy the other
	 * buffers keep the thread. */
	uint64_t flush_period_ns;
	/* Written into the metadata's env block (NULL: gethostname()): its
	 * first 127 bytes, each control, non-ASCII, '"' or '\\' byte
	 * written as '_'. */
	const char *hostname;
};

/**
 * grb_ctf_create - create a tracer: its channel, metadata and, with
 * attr->trace_dir, its writer thread.
 * @attr: as above.
 * @out: receives the tracer.
 * Return: 0, or
 *  -EINVAL   NULL, a bad name, alloc, mode or clock, or what
 *            grb_channel_create() refuses (geometry);
 *  -ENOTSUP  GRB_CTF_CLOCK_TSC on a machine without an invariant TSC or
 *            whose CPU does not report rdtscp;
 *  -EEXIST   a stream, buffer or metadata file is already there, or
 *            appears while this call runs (another tracer created at
 *            the same time): nothing of that trace or tracer is touched;
 *  -ENOMEM, or the errno of mkdir, open, write or pthread_create.
 * On error nothing is left allocated but the tracer's event-class table
 * (about 32 KiB, kept for the life of the process, as grb_ctf_destroy()
 * keeps it), and nothing this call created is left behind: its files are
 * removed, and so is a trace directory it made (one that was there
 * already stays).
 * Context: any thread; not signal-safe.
 */
GRB_API int grb_ctf_create(const struct grb_ctf_attr *attr, struct grb_ctf **out);

/**
 * grb_ctf_event_register - add an event class.  Its id is the number of
 * classes registered before it, plus one from the 31st class on: id 30
 * is GRB_CTF_PADDING_ID's.
 * @t: tracer.
 * @desc: the class; copied, so it need not outlive the call.
 * @ev: receives the class handle, valid until grb_ctf_destroy().
 *
 * The metadata is rewritten (atomically: a new file renamed over the
 * old) before this returns, so a reader of the trace knows the class
 * before any of its events.
 * Return: 0, or
 *  -EINVAL   NULL, a name that is empty, too long, not allowed (above),
 *            or already registered; a loglevel outside -1 to 14; a field
 *            whose name is not a C identifier or repeats another; a
 *            kind, size, base, length or label set not allowed for its
 *            kind (see the structs; labels are 1 to GRB_CTF_NAME_MAX
 *            bytes without '"', '\\' or control bytes, distinct, and
 *            each value fits the container: an unsigned 8-byte one takes
 *            values from 2^63 up as negative int64_t); more than
 *            GRB_CTF_MAX_FIELDS fields;
 *  -ENOSPC   GRB_CTF_MAX_EVENTS classes already;
 *  -ENOMEM, or the errno of writing the metadata (the class is then
 *            not registered).
 * Context: any thread; serialised with other registrations.
 */
GRB_API int grb_ctf_event_register(struct grb_ctf *t,
				   const struct grb_ctf_event_desc *desc,
				   const struct grb_ctf_event **ev);

/** grb_ctf_event_id - the id of a class (see grb_ctf_event_register()),
 * or UINT32_MAX for NULL. */
GRB_API uint32_t grb_ctf_event_id(const struct grb_ctf_event *ev);

/** One field's value for grb_ctf_emit(), by kind. */
union grb_ctf_value {
	int64_t i;            /* signed INT or ENUM scalar */
	uint64_t u;           /* unsigned INT or ENUM scalar */
	double d;             /* FLOAT scalar (size 4 is narrowed) */
	const char *s;        /* STRING (NULL is written as "") */
	const void *array;    /* an array: length elements of size bytes,
				 native layout (float/double for FLOAT) */
};

/**
 * grb_ctf_emit - record one event.
 * @t: tracer.
 * @ev: its class.
 * @values: one value per field, in declaration order.
 *
 * Reserves header and payload in the current CPU's buffer with one
 * compare-and-swap, writes them in place and commits.  Nothing is
 * allocated and nothing formatted.
 * Return: 0, or what grb_reserve() returns (the losses it counts appear
 * as discarded events; -ESHUTDOWN once grb_ctf_stop() ran); -EINVAL for
 * a NULL @t or @ev, NULL @values for a class with fields (a class
 * without fields may pass NULL), @ev of another tracer, or a NULL array.
 * Context: any thread, signal handlers included.
 */
GRB_API int grb_ctf_emit(struct grb_ctf *t, const struct grb_ctf_event *ev,
			 const union grb_ctf_value *values);

/**
 * grb_ctf_emit_raw - record one event whose payload the caller laid out
 * already: the fields packed in order, native byte order, strings with
 * their NUL.  For an event of fixed-size fields it is a packed C struct.
 * @len: payload bytes.
 * Return: as grb_ctf_emit(); -EINVAL also when @len does not match the
 * class (fixed-size fields) or a string's NUL is missing, and for a NULL
 * @payload with @len above 0 (a class without fields may pass NULL, 0).
 * Context: any thread, signal handlers included.
 */
GRB_API int grb_ctf_emit_raw(struct grb_ctf *t, const struct grb_ctf_event *ev,
			     const void *payload, size_t len);

/*
 * A stream writer's memory of the packets it wrote to one stream file,
 * for grb_ctf_packet_fixup().  Zero it before the first packet.
 */
struct grb_ctf_stream_state {
	uint64_t next_seq;          /* packet_seq_num expected next */
	uint64_t last_discarded;    /* events_discarded of the last packet */
	int started;                /* a packet was written */
};

/**
 * grb_ctf_packet_fixup - prepare a delivered packet (a sub-buffer of a
 * CTF channel, as grb_reader_held() describes it) to be appended to its
 * stream file, for a consumer that writes the files itself.
 * @packet: the packet's first byte; the caller holds it.
 * @size: its data_size.
 * @s: the stream's state, updated.
 * @gap: receives the packets missing between the previous packet and
 *       this one (overwritten before they were read); may be NULL.
 *
 * Sub-buffers are delivered in commit order, not position order, so the
 * running loss count a late packet carries can be older than its
 * predecessor's; a CTF reader takes the difference between consecutive
 * packets, so this raises events_discarded to the previous packet's
 * when lower.  Nothing else changes.
 * Return: 0; -EBADMSG when @size is below a packet header or the magic
 * is not CTF's (nothing changed); -EINVAL for NULL @packet or @s.
 * Context: the buffer's reader.
 */
GRB_API int grb_ctf_packet_fixup(void *packet, size_t size,
				 struct grb_ctf_stream_state *s, uint64_t *gap);

/**
 * grb_ctf_stream_trailer - the packet that ends a stream file whose last
 * refused events came after its last packet, for a consumer that writes
 * the files itself.
 * @last: the first GRB_CTF_PACKET_HEADER_SIZE bytes of the last packet
 *        appended to the stream, as grb_ctf_packet_fixup() left them.
 * @s: the stream's state (the one grb_ctf_packet_fixup() kept); updated
 *     when a trailer is made, as if it had been through the fixup.
 * @refused: the buffer's refused events once it stops being written:
 *           lost_full + lost_wrap + lost_big + lost_nesting of
 *           grb_buf_get_stats() (grb_ctf_stats.events_discarded, per
 *           buffer).
 * @out: GRB_CTF_PACKET_HEADER_SIZE bytes; receives the trailer.
 *
 * A full discard-mode buffer refuses events until its reader frees a
 * sub-buffer, so the events refused after the last packet closed are in
 * no packet's events_discarded, and a CTF reader would never report
 * them.  The tracer's own writer thread ends each stream with an empty
 * packet at grb_ctf_stop(); a consumer of a shared tracer, which cannot
 * write into the finalized buffer, makes that packet here: @last's
 * stream, UUID and CPU, both timestamps @last's end, the next sequence
 * number, no event, events_discarded @refused.
 * Return: 1 when @out holds a trailer to append; 0 when none is needed
 * (@refused is not above s->last_discarded; @out and @s untouched);
 * -EBADMSG when no packet was appended yet (s->started is 0) or @last's
 * magic is not CTF's; -EINVAL for a NULL argument.
 * Context: the stream's writer, after the stream's last packet.
 */
GRB_API int grb_ctf_stream_trailer(const void *last,
				   struct grb_ctf_stream_state *s,
				   uint64_t refused, void *out);

/**
 * grb_ctf_stream_leader - the packet that starts a stream file whose
 * first packet is not the buffer's first, for a consumer that writes the
 * files itself.
 * @first: the first GRB_CTF_PACKET_HEADER_SIZE bytes of the packet about
 *         to be appended first, as delivered (before the fixup).
 * @s: the stream's state, zeroed (no packet appended yet); updated when
 *     a leader is made, as if it had been through the fixup.
 * @out: GRB_CTF_PACKET_HEADER_SIZE bytes; receives the leader.
 *
 * A CTF reader reports a gap in packet_seq_num, or a rise of
 * events_discarded, only after a stream's first packet.  A stream that
 * starts later (overwrite mode: the packets before it were overwritten
 * before a crash was salvaged or a late consumer attached; or another
 * consumer took them) would hide those losses; this packet comes first
 * and makes them a gap and a rise the reader reports: @first's stream,
 * UUID and CPU, both timestamps @first's begin, sequence number 0, no
 * event, events_discarded 0.  Packets another consumer took are then
 * reported as discarded from this trace, which does not hold them.
 * Return: 1 when @out holds a leader to append before @first; 0 when
 * none is needed (@first's sequence number is 0, or s->started is set;
 * @out and @s untouched); -EBADMSG when @first's magic is not CTF's;
 * -EINVAL for a NULL argument.
 * Context: the stream's writer, before the stream's first packet.
 */
GRB_API int grb_ctf_stream_leader(const void *first,
				  struct grb_ctf_stream_state *s, void *out);

/* What a tracer's channel and writer thread counted. */
struct grb_ctf_stats {
	uint64_t events;             /* events committed (all buffers) */
	uint64_t events_discarded;   /* refused: full, wrap, big, nesting;
					the sum over streams of their last
					packet's events_discarded (each
					packet carries a running count) */
	uint64_t events_dead;        /* reserved by a writer that died
					(shared buffers; padding events),
					counted once the buffer's reader
					recovered them: the writer thread,
					or the consumer's
					grb_channel_recover() */
	uint64_t events_overwritten; /* in packets overwritten before the
					writer thread read them */
	uint64_t packets;            /* packets written to stream files */
	uint64_t packets_discarded;  /* gaps in packet_seq_num between the
					packets written, all streams */
	uint64_t bytes;              /* bytes written to stream files */
};

/**
 * grb_ctf_stop - end of tracing: flush every buffer, drain it into the
 * stream files, and end each stream with a packet that carries the final
 * events_discarded (so every refused event is reported), then stop the
 * writer thread and finalize the channel.  With attr.shm_dir and no
 * attr.trace_dir there is no writer thread: it flushes the active
 * packets and finalizes, and a consumer (grb-consumerd --attach) drains
 * them; events refused after a stream's last packet closed, while every
 * sub-buffer waited for that consumer, are then reported by the packet
 * the consumer appends when it ends the stream (grb_ctf_stream_trailer()).
 * Return: 0; -EALREADY when stopped already; -EINVAL for NULL; the
 * errno of a write that failed (the trace then ends at the last packet
 * written whole).
 * Context: every writer must have returned from its last emit.
 */
GRB_API int grb_ctf_stop(struct grb_ctf *t);

/**
 * grb_ctf_get_stats - the tracer's counters (exact once stopped).
 * Return: 0, or -EINVAL for NULL.
 */
GRB_API int grb_ctf_get_stats(const struct grb_ctf *t, struct grb_ctf_stats *st);

/** grb_ctf_channel - the tracer's channel (for statistics, flushes). */
GRB_API struct grb_channel *grb_ctf_channel(struct grb_ctf *t);

/**
 * grb_ctf_config - the configuration of CTF channels with these
 * attributes, shared variant, for a process that attaches to one
 * (grb_channel_attach(), client GRB_CTF_CLIENT).  Its record_decode
 * decodes events of the traces whose metadata this process created or
 * loaded (grb_ctf_metadata_load()).
 * Return: the configuration, or NULL for an invalid argument.
 */
GRB_API const struct grb_config *grb_ctf_config(enum grb_alloc alloc,
						enum grb_mode mode,
						enum grb_ctf_clock clock);

/**
 * grb_ctf_metadata_load - learn the event layouts of a trace from its
 * metadata text, so that record_decode of grb_ctf_config() can walk its
 * packets (grb-crash, grb-consumerd).
 * @text: the metadata this client wrote; @len its bytes.
 * @uuid: receives the trace UUID (16 bytes); may be NULL.
 * Return: 0, or -EBADMSG when @text is not metadata this client wrote
 * (or is damaged); -ENOMEM.  Loading the same trace again replaces
 * nothing and is 0 once its classes are known.
 * Context: any thread.
 */
GRB_API int grb_ctf_metadata_load(const char *text, size_t len, uint8_t uuid[16]);

/**
 * grb_ctf_destroy - stop (when not stopped), destroy the channel (and,
 * shared, remove its buffer files and metadata file: only a process that
 * dies before this call leaves them, for grb-crash) and free the tracer,
 * its event classes included.  Its event-class table (about 32 KiB) stays
 * allocated for the life of the process: a decoder in any thread may
 * still hold it.  NULL is a no-op.
 */
GRB_API void grb_ctf_destroy(struct grb_ctf *t);

#ifdef __cplusplus
}
#endif

#endif /* GRB_CTF_H */
