/* SPDX-License-Identifier: MIT */
/*
 * grb/config.h - the client configuration contract.
 *
 * A client (a tracer, a logger, the basic client in grb/basic.h) declares
 * one `static const struct grb_config` and passes its address first to
 * every fast-path inline (grb/writer.h).  Because the object is constant
 * and visible to the compiler, each `if (cfg->mode == ...)` folds and each
 * callback call through `cfg->cb` becomes a direct, usually inlined, call:
 * one specialised code path per client, with the slow paths shared.
 *
 * The configuration is validated once, by grb_channel_create(), which
 * refuses invalid combinations with -EINVAL; the fast paths never check it.
 */
#ifndef GRB_CONFIG_H
#define GRB_CONFIG_H

#include "grb/api.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct grb_buf;
struct grb_ctx;
struct grb_config;

/* Where buffers live: one per possible CPU, or one for the channel. */
enum grb_alloc {
	GRB_ALLOC_PER_CPU = 0,
	GRB_ALLOC_PER_CHANNEL = 1,
};

/*
 * What a full buffer does:
 *  GRB_MODE_OVERWRITE  flight recorder: writers push the reader and reuse
 *                      the oldest sub-buffer; its records are counted as
 *                      overwritten.  A spare sub-buffer owned by the reader
 *                      keeps data being read safe from writers.
 *  GRB_MODE_DISCARD    producer-consumer: new records are refused and
 *                      counted as lost (full) until the reader frees space.
 */
enum grb_mode {
	GRB_MODE_OVERWRITE = 0,
	GRB_MODE_DISCARD = 1,
};

/* Reservation flags, set by grb_reserve() in ctx->rflags. */
enum grb_rflag {
	/*
	 * The record must carry a full 64-bit timestamp: it opens a
	 * sub-buffer, follows a discarded reservation, or its timestamp
	 * differs above the kept bits from that of the reservation before
	 * it in the buffer.  A refused reservation keeps no timestamp: the
	 * record after a lost one is compared with the last record reserved
	 * before it.  Racing writers may get the flag when not needed.
	 * Never set when timestamp_bits is 0, always when it is 64.
	 */
	GRB_RFLAG_FULL_TIMESTAMP = 1u << 0,
	/*
	 * Set by a client's record_decode, never by grb_reserve(): the
	 * bytes are padding written by record_pad (a dead writer's record,
	 * grb/recover.h).  Readers skip it; it is not a record.
	 */
	GRB_RFLAG_PADDING = 1u << 1,
};

/*
 * What the engine tells a client about one sub-buffer (a "packet") when it
 * opens it (buffer_begin) and when it delivers it (buffer_end).  The
 * fields marked "end only" are 0 at buffer_begin.
 */
struct grb_subbuf_info {
	/* Sub-buffer sequence number: its start position / sub-buffer size.
	 * Consecutive for a buffer; a reader sees overwritten packets as gaps. */
	uint64_t seq;
	/* begin: timestamp of the opening reservation; end: of the closing one
	 * (0 when the client keeps no timestamps). */
	uint64_t timestamp;
	/* end only: bytes used, sub-buffer header included; padding excluded. */
	uint64_t data_size;
	/* end only: records committed in this sub-buffer. */
	uint64_t records;
	/*
	 * end only: running count of records refused on this buffer (full,
	 * wrap, too big, nesting) when the sub-buffer was delivered.  A
	 * sub-buffer is delivered when its last commit lands, which need
	 * not follow position order (a slow committer holds an earlier one
	 * back), so the counts of consecutive sub-buffers can decrease; a
	 * reader wanting the losses between two sub-buffers must not take
	 * the difference blindly.
	 */
	uint64_t lost;
	/* end only: running count of records overwritten on this buffer, at
	 * delivery, with the same caveat as lost. */
	uint64_t overwritten;
	/* CPU of the buffer, or -1 for a per-channel buffer. */
	int cpu;
};

/* A record as a client's decoder describes it to a reader. */
struct grb_record {
	size_t offset;       /* record start (after pre-header padding) */
	size_t header_len;   /* bytes of record header */
	size_t payload_off;  /* payload start, from the sub-buffer start */
	size_t payload_len;  /* payload bytes */
	size_t next;         /* where the next record's slot starts */
	uint64_t timestamp;  /* as stored: full, or the low timestamp_bits */
	unsigned int rflags; /* GRB_RFLAG_* as the writer set them */
};

/*
 * Client callbacks.  Only clock_read and record_header_size run on the fast
 * path; with a static const config they are inlined.  Every other callback
 * runs on a slow path (sub-buffer switch, delivery, creation).
 */
struct grb_client_cb {
	/*
	 * Read the clock.  Required when timestamp_bits > 0, NULL otherwise.
	 * Must be monotonic across CPUs, signal-safe, and read between the
	 * load of the write position that precedes it and the reservation's
	 * compare-and-swap that follows, so that timestamps grow with
	 * positions in a buffer.  grb adds no fence for it: the clock must
	 * carry its own.  The vDSO clock_gettime() does on x86-64 (lfence
	 * or rdtscp) and arm64 (isb before the counter read); a bare rdtsc
	 * or cntvct read may execute early and needs a fence.
	 */
	uint64_t (*clock_read)(void);
	/*
	 * Size of the record header to write at sub-buffer @offset, including
	 * the padding before it, which is returned in *@pre_padding.
	 * ctx->rflags and ctx->data_size are set.  NULL means no header.
	 */
	size_t (*record_header_size)(const struct grb_config *cfg, size_t offset,
				     size_t *pre_padding,
				     const struct grb_ctx *ctx);
	/* Bytes reserved at the start of each sub-buffer.  NULL means 0. */
	size_t (*subbuf_header_size)(void);
	/*
	 * Write the sub-buffer header at @header when a sub-buffer opens.
	 * Runs on the thread that opened it, inside the reservation that
	 * did (so before its record is written), or inside the
	 * GRB_FLUSH_EMPTY flush that opened it empty.  In a shared buffer a
	 * recoverer may run it for an opener that died (grb/recover.h).
	 */
	void (*buffer_begin)(struct grb_buf *buf, void *header,
			     const struct grb_subbuf_info *info);
	/*
	 * Patch the header at delivery (end timestamp, sizes, counts).  Runs
	 * on the thread whose commit completed the sub-buffer; every record
	 * in it is committed and visible.  Whatever closes a sub-buffer
	 * short of its end commits the padding after it: a reservation whose
	 * record does not fit, a flush, a discard.  When no record in it is
	 * pending, that completes it, and buffer_end runs inside that
	 * grb_reserve() or grb_write_record() (before the buffer_begin of
	 * the sub-buffer it opens), the flush (on the flushing thread: a
	 * reader's, a tick's) or the discard.  On the per-CPU path
	 * (GRB_CONFIG_SYNC_PER_CPU) two racing commits may both see the
	 * sub-buffer complete; the first to claim it runs buffer_end, which
	 * may then be the earlier of the two.  In a shared buffer a
	 * recoverer runs it for a last committer that died (grb/recover.h).
	 */
	void (*buffer_end)(struct grb_buf *buf, void *header,
			   const struct grb_subbuf_info *info);
	/* Called once per buffer at channel creation; a negative errno
	 * aborts the creation, which then frees everything. */
	int (*buffer_create)(struct grb_buf *buf, void *priv, int cpu);
	/* Called once per buffer at channel finalize, and for each buffer
	 * already created when a later one's creation fails. */
	void (*buffer_finalize)(struct grb_buf *buf, void *priv, int cpu);
	/*
	 * Decode the record whose slot starts at @offset in the sub-buffer
	 * @subbuf holding @data_size valid bytes.  Return 0 and fill @rec, or
	 * -EINVAL when the bytes do not form a record.  Used by readers.
	 */
	int (*record_decode)(const struct grb_config *cfg, const void *subbuf,
			     size_t offset, size_t data_size,
			     struct grb_record *rec);
	/*
	 * Write, over the @len bytes at @at, something record_decode reads
	 * as padding: one or more records with GRB_RFLAG_PADDING that
	 * together span exactly @len bytes.  Used by dead-writer recovery
	 * (grb/recover.h) for the bytes of records that will never be
	 * committed, when committed records follow them in the sub-buffer;
	 * @len is then at least the smallest record slot the client ever
	 * reserves, and @at is where such a slot began.  The record after
	 * the padding may have compressed its timestamp against the dead
	 * one's, which no reader sees (grb/recover.h).  NULL: the recoverer
	 * ends the sub-buffer before the first dead record instead, and the
	 * committed records after it are lost with it (the sub-buffer's
	 * record count, grb_subbuf_info.records, still includes them).
	 */
	void (*record_pad)(const struct grb_config *cfg, void *at, size_t len);
};

/*
 * A client configuration.  Declare it static const; pass the same object
 * to grb_channel_create() and to every fast-path call on that channel.
 */
struct grb_config {
	enum grb_alloc alloc;
	enum grb_mode mode;
	/*
	 * Timestamp bits kept per record.  0: no timestamps (clock_read must
	 * be NULL).  64: every record carries a full timestamp.  1 to 63:
	 * compression; a record carries only the low bits unless
	 * GRB_RFLAG_FULL_TIMESTAMP is set in its reservation.
	 */
	unsigned int timestamp_bits;
	struct grb_client_cb cb;
	/*
	 * GRB_CONFIG_* bits, 0 for none.  GRB_CONFIG_SHARED for a
	 * configuration of channels in shared memory (grb/shm.h); a private
	 * channel may use one too.  GRB_CONFIG_SYNC_PER_CPU below.  A shared
	 * channel's writers journal each reservation in the mapping so that
	 * the sub-buffer of one that dies can be recovered (grb/recover.h):
	 * a few plain stores per record, which a private configuration's
	 * fast path does not contain at all.
	 * Last, so that a positional initializer without it means 0.
	 */
	unsigned int flags;
};

/* grb_config.flags */
#define GRB_CONFIG_SHARED 1u
/*
 * Per-CPU synchronization (GRB_ALLOC_PER_CPU only): writers update their
 * CPU's buffer with restartable sequences (rseq) instead of locked
 * atomics: a record's reserve and commit then carry no lock prefix.
 * Whether a channel gets it is decided at creation, and it falls back to
 * the atomic path (same records, same guarantees) when this machine,
 * process or build cannot: grb_channel_write_path() says which path a
 * channel took and why (grb/channel.h).  Writers may still migrate,
 * nest in signal handlers, commit from another thread or CPU, and be
 * single-stepped by a debugger; those rare cases, and flushes, cost a
 * system call (membarrier) instead.  The inline code of such a
 * configuration holds the per-CPU path only: on a channel that fell back,
 * each reserve and commit is a call into the library.
 */
#define GRB_CONFIG_SYNC_PER_CPU 2u

/**
 * grb_config_check - validate a configuration without creating a channel.
 * @cfg: configuration to check.
 *
 * Return: 0 when valid; -EINVAL when @cfg is NULL, alloc or mode is not an
 * enum value, timestamp_bits > 64, clock_read is NULL while timestamp_bits
 * > 0, clock_read is set while timestamp_bits == 0, flags has a bit
 * other than GRB_CONFIG_SHARED and GRB_CONFIG_SYNC_PER_CPU, or
 * GRB_CONFIG_SYNC_PER_CPU is set with GRB_ALLOC_PER_CHANNEL.
 * Context: any thread.
 * Ordering: none.
 */
GRB_API int grb_config_check(const struct grb_config *cfg);

#ifdef __cplusplus
}
#endif

#endif /* GRB_CONFIG_H */
