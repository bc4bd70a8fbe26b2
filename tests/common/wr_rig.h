/* SPDX-License-Identifier: MIT */
/*
 * tests/common/wr_rig.h - the record client and the channels of the
 * grb_write_record() tests (tests/unit/test_write_record.c and
 * test_write_record_races.c): records whose fill notes the context it
 * got, written by either API; channels opened on the calling thread's
 * CPU and checked for the write path they took; statistics compared
 * field by field; delivered sub-buffers read back and checked record by
 * record.
 */
#ifndef GRB_TESTS_WR_RIG_H
#define GRB_TESTS_WR_RIG_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "chan_rig.h"
#include "grb/grb.h"

#define SB 4096
#define NSB 4
#define TS_BITS 27

enum { ONE, THREE };    /* grb_write_record(), or the three calls */

/*
 * A record, 4-byte aligned: a u32 word (payload length, log2 of the
 * payload's alignment, W_FULL for GRB_RFLAG_FULL_TIMESTAMP), the u64
 * timestamp (with a clock), padding, the payload: the 8 bytes of the
 * record's seq, then pat(seq, j).
 */
#define W_LEN 0x00ffffffu
#define W_ALIGN 24
#define W_FULL 0x80000000u
#define HDR_LEN(cfg) ((cfg)->timestamp_bits ? 12u : 4u)

struct wr_in {                  /* one record, and the test's client_priv */
	uint64_t seq;
	void (*hook)(struct grb_ctx *ctx);      /* the fill runs it first */
	int calls;              /* fill calls */
	pthread_t thread;       /* the thread of the last one */
	struct grb_ctx seen;    /* the context it got */
	ptrdiff_t left;         /* wend - wptr after writing */
};

/* The record being written on this thread (a signal handler's nests). */
extern _Thread_local struct wr_in *cur_in;
/* record_header_size calls, and those whose client_priv was not cur_in. */
extern int hdr_calls, hdr_bad;
/* What the timestamped configurations' clock returns. */
extern uint64_t clock_now;
/* buffer_end raises SIGUSR1 when it closes this sub-buffer (then -1). */
extern volatile int64_t end_trigger;

/* The record's byte j of the payload of record seq. */
uint8_t pat(uint64_t seq, size_t j);

#define PC GRB_ALLOC_PER_CPU
#define CH GRB_ALLOC_PER_CHANNEL
#define D GRB_MODE_DISCARD
#define O GRB_MODE_OVERWRITE
#define SYNC GRB_CONFIG_SYNC_PER_CPU
/* Per-CPU with GRB_CONFIG_SYNC_PER_CPU (pc_) and per-channel (ch_):
 * discard, overwrite, each with timestamps (t), and a header-less one
 * (raw). */
extern const struct grb_config pc_d, pc_o, pc_dt, pc_ot, pc_raw;
extern const struct grb_config ch_d, ch_o, ch_dt, ch_ot, ch_raw;
/* The nesting level is probed on a channel of its own. */
extern const struct grb_config probe_cfg;
extern struct grb_channel *probe;

/* cpus[0]: where the thread lives; cpus[1], when ncpus is 2, another. */
extern int cpus[2], ncpus;

#define PATH(g) ((g)->rseq ? "rseq path" : "atomic path")

/* The statistics as an array of NF counters; FIELD(name) indexes it. */
#define NF (sizeof(struct grb_buf_stats) / sizeof(uint64_t))
#define FIELD(name) (offsetof(struct grb_buf_stats, name) / sizeof(uint64_t))
extern const char *const field_names[NF];

/* Pick cpus[], pin the thread on cpus[0], create the probe channel and
 * print which path per-CPU sync channels take here. */
void rig_setup(void);
/* Destroy the probe channel. */
void rig_teardown(void);
/* chan_rig_open() (chan_rig.h) with SB, NSB and cpus[0]: create, and
 * check the path taken; under GRB_SYNC=atomic when force_atomic.  The
 * reader is opened on g->buf. */
void rig_open(struct rig *g, const struct grb_config *cfg, const char *name,
	      int force_atomic);
/* Check hdr_bad, then chan_rig_close(): validate every buffer, destroy. */
void rig_close(struct rig *g);
/* rig_open(), fn(g, arg), the nesting level checked, rig_close(). */
void rig_run(const struct grb_config *cfg, const char *name, int fa,
	     void (*fn)(const struct rig *g, int arg), int arg);

/* The counters of @buf (or of @chan when @buf is NULL), as an array. */
void stats(struct grb_channel *chan, struct grb_buf *buf, uint64_t *v);
/* Counters @x as expected in @y; each one that is not is named. */
void same(const char *name, const char *path, const char *what,
	  const uint64_t *x, const uint64_t *y);
/* Exactly GRB_MAX_NESTING reservations fit on this thread, then -EBUSY. */
void nesting_free_at(int line);
#define expect_nesting_free() nesting_free_at(__LINE__)

/* Write record @in with either API; with @held, reserve it only. */
int wr(const struct rig *g, int api, struct wr_in *in, size_t size,
       size_t align, struct grb_ctx *held);
/* A record of @size with the three calls; with @held, reserved only. */
void put(const struct rig *g, size_t size, struct grb_ctx *held);
/* What the fill of a record this thread wrote (@ret returned) got. */
void check_seen(const struct rig *g, const struct wr_in *in, size_t size,
		size_t align, int ret);
/* Check every record of the held sub-buffer: intact, and with @last,
 * seqs increasing after *last.  Return: how many. */
uint64_t check_held(struct grb_buf *buf, int64_t *last);
/* Read every delivered sub-buffer; return the records read. */
uint64_t drain(struct grb_buf *buf, int64_t *last);

#endif /* GRB_TESTS_WR_RIG_H */
