/* SPDX-License-Identifier: MIT */
/*
 * tests/common/tclient.h - the test client: a configuration per variant
 * (alloc x mode x timestamp compression), records tagged with writer id,
 * sequence, timestamp and checksum, and a checker that reads buffers back
 * and verifies every record and counter.
 *
 * Record layout (after 4-byte aligned pre-padding):
 *   u32  payload length (bits 0-23) | TREC_FULL (bit 24)
 *   u64  timestamp when TREC_FULL, else u32 holding its low 16 bits
 *   struct trec, then trec.extra pattern bytes
 */
#ifndef GRB_TESTS_TCLIENT_H
#define GRB_TESTS_TCLIENT_H

#include <stdint.h>

#include "grb/grb.h"

/* Variant bits. */
#define TV_PER_CHANNEL 1
#define TV_DISCARD     2
#define TV_COMPRESS    4
#define TV_COUNT       8
/* tc_config() only: the same with GRB_CONFIG_SHARED, for grb/shm.h. */
#define TV_SHARED      8

#define TREC_FULL      (UINT32_C(1) << 24)
#define TREC_LEN_MASK  UINT32_C(0x00ffffff)
#define TC_TS_BITS     16
#define TC_MAGIC       0x74657374u
/* trec.writer of a record a writer abandoned but could not discard: it
 * is committed, counted as a record by the engine, and skipped by
 * readers. */
#define TC_SKIP_WRITER 0xffffffffu

struct trec {
	uint32_t writer;
	uint32_t seq;
	uint64_t ts;          /* ctx.timestamp as reserved */
	uint32_t extra;       /* pattern bytes after the struct */
	uint32_t csum;
};

/* Sub-buffer header of the test client. */
struct tc_header {
	uint32_t magic;
	int32_t cpu;
	uint64_t seq;
	uint64_t ts_begin;
	uint64_t ts_end;
	uint64_t data_size;
	uint64_t records;
	uint64_t lost;
};

const struct grb_config *tc_config(int variant);

/*
 * Make the test clock count in @word (NULL: back to its own), e.g. a word
 * in memory shared by writer processes, whose records must then share
 * one clock for timestamps to rise in position order.  Before any writer
 * starts.
 */
void tc_clock_share(_Atomic uint64_t *word);
const char *tc_variant_name(int variant);

/*
 * Write one tagged record with the fast path specialised for @cfg (one of
 * tc_config()'s).  Return: grb_reserve()'s result.
 */
int tc_write(const struct grb_config *cfg, struct grb_channel *chan,
	     uint32_t writer, uint32_t seq, uint32_t extra);

/*
 * A hook tc_write_hook() runs between grb_reserve() and grb_commit(), after
 * the record header is written and before the payload; @ctx is the live
 * reservation (read it, do not change it).  Stress tests migrate the
 * thread, yield, spin or raise a signal there.  It runs on the writing
 * thread, from a signal handler when the writer is one, so it must then be
 * async-signal-safe.
 */
typedef void (*tc_hook_fn)(void *arg, const struct grb_ctx *ctx);

/*
 * As tc_write(), calling @hook(@arg, ctx) inside the reservation window
 * (@hook may be NULL).  Async-signal-safe when @hook is.
 * Return: grb_reserve()'s result; the hook runs only when it is 0.
 */
int tc_write_hook(const struct grb_config *cfg, struct grb_channel *chan,
		  uint32_t writer, uint32_t seq, uint32_t extra,
		  tc_hook_fn hook, void *arg);

/*
 * A record reserved (header written) by one thread and finished by
 * another: tc_reserve() fills it, tc_finish() or tc_abandon() ends it on
 * any thread (the hand-off must publish it, as any queue or lock does).
 */
struct tc_pending {
	const struct grb_config *cfg;
	struct grb_ctx ctx;
	struct trec r;
	unsigned char bytes[256];
};

/* Reserve a tagged record and write its header.  Return: grb_reserve()'s. */
int tc_reserve(const struct grb_config *cfg, struct grb_channel *chan,
	       uint32_t writer, uint32_t seq, uint32_t extra,
	       struct tc_pending *p);

/* Write the payload and commit. */
void tc_finish(struct tc_pending *p);

/*
 * Give the record up: grb_try_discard_reserve(), and when that is refused
 * (-EBUSY) commit it as a TC_SKIP_WRITER record instead.
 * Return: 1 when discarded, 0 when committed as a skip record.
 */
int tc_abandon(struct tc_pending *p);

/* Reader-side verification state for one channel. */
struct tc_checker {
	uint32_t nwriters;
	uint32_t maxseq;            /* seq < maxseq for every writer */
	uint8_t *seen;              /* nwriters x maxseq: read count */
	uint8_t *reserved;          /* nwriters x maxseq: writer's success */
	int64_t *last_seq;          /* per (buffer, writer): order check */
	unsigned int nbufs;
	uint64_t *next_subbuf_seq;  /* per buffer: expected header seq */
	uint64_t records_read;      /* skip records included */
	uint64_t skips_read;
	uint64_t subbufs_read;
	uint64_t errors;
	/* Writer side, any thread: what tc_abandon() did. */
	uint64_t skips_written;
	uint64_t discards;
};

int tc_checker_init(struct tc_checker *tc, struct grb_channel *chan,
		    uint32_t nwriters, uint32_t maxseq);
void tc_checker_free(struct tc_checker *tc);

/* Writers call this after a successful tc_write (thread-safe per slot). */
void tc_mark_reserved(struct tc_checker *tc, uint32_t writer, uint32_t seq);

/* Writers call this with tc_abandon()'s result (thread-safe). */
void tc_mark_abandoned(struct tc_checker *tc, int discarded);

/*
 * Read every sub-buffer available now from buffer @i and verify it.
 * Return: number of sub-buffers read; errors are counted in tc->errors
 * with a message on stderr.
 */
uint64_t tc_drain_buf(struct tc_checker *tc, struct grb_channel *chan,
		      unsigned int i);
uint64_t tc_drain_all(struct tc_checker *tc, struct grb_channel *chan);

/*
 * End-of-run verification: the channel must be finalized and drained.
 * Checks no record was read twice, only reserved records were read, the
 * engine counters agree with what was read, written == read +
 * overwritten, and the discards and skip records match what the writers
 * did.  @refused is the number of failed tc_write() calls.
 * Return: 0 when every check passed, else the number of failures.
 */
uint64_t tc_final_check(struct tc_checker *tc, struct grb_channel *chan,
			uint64_t refused);

struct grb_iter_record;

/*
 * Verify one record returned by an iterator (grb/iter.h): an intact tagged
 * payload, a rebuilt timestamp equal to the writer's clock value, read at
 * most once, in order per (buffer, writer).  Skip records are counted.
 * Errors are counted in tc->errors with a message on stderr.
 */
void tc_check_iter_record(struct tc_checker *tc,
			  const struct grb_iter_record *r);

/*
 * End of an iterator run: the channel finalized and the iterator drained
 * to -ENODATA.  @lost_reported is the sum of the records' lost counts and
 * of the iterators' final grb_buf_iter_lost().  Checks every record was
 * read once or is accounted as lost (overwritten or refused), the engine
 * counters agree, and in discard mode nothing was overwritten.
 * Return: the number of failures (0 when all passed).
 */
uint64_t tc_final_check_iter(struct tc_checker *tc, struct grb_channel *chan,
			     uint64_t refused, uint64_t lost_reported);

#endif /* GRB_TESTS_TCLIENT_H */
