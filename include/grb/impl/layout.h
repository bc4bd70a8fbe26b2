/* SPDX-License-Identifier: MIT */
/*
 * grb/impl/layout.h - memory layout of a buffer and of its process handle.
 *
 * Each buffer (one per CPU, or one per channel) is a single mapping:
 *
 *   +--------------------------+ 0
 *   | struct grb_buf_shm       |  description, positions, reader, counters
 *   +--------------------------+ shm->off_hot
 *   | grb_commit_hot[n]        |  one cache line per ring slot
 *   +--------------------------+ shm->off_cold
 *   | grb_commit_cold[n]       |  one cache line per ring slot
 *   +--------------------------+ shm->off_ids
 *   | id word[n]               |  ring slot -> physical sub-buffer
 *   +--------------------------+ shm->off_meta
 *   | grb_subbuf_meta[p]       |  per physical sub-buffer
 *   +--------------------------+ shm->off_journal
 *   | grb_jslot[j]             |  write journal (shared buffers only)
 *   +--------------------------+ shm->off_data (page aligned)
 *   | data: p x subbuf_size    |
 *   +--------------------------+ shm->map_size
 *
 * n = num_subbuf ring slots; p = n + 1 physical sub-buffers in overwrite
 * mode (the extra one is the reader's spare), p = n in discard mode;
 * j = GRB_JOURNAL_SLOTS in a shared buffer, 0 in a private one
 * (grb/impl/journal.h).
 * Everything in the mapping is found from its start by the offsets in
 * grb_buf_shm, never by a stored pointer, so that another process mapping
 * the same memory, or a recovery tool reading a file after a crash, sees
 * the same buffer.  struct grb_buf is the process-local handle that caches
 * the derived pointers for the fast path.
 */
#ifndef GRB_IMPL_LAYOUT_H
#define GRB_IMPL_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "grb/config.h"
#include "grb/impl/atomic.h"
#include "grb/impl/compat.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GRB_CACHELINE 64

/* "grbBUF01" in little-endian byte order, first word of every buffer. */
#define GRB_SHM_MAGIC   UINT64_C(0x3130465542627267)
#define GRB_SHM_VERSION 9u

/* Bytes of grb_buf_shm.client, the NUL included (grb/shm.h). */
#define GRB_SHM_CLIENT_BYTES 32

/*
 * Sub-buffer id word: which physical sub-buffer a ring slot (or the
 * reader) holds, plus the overwrite-mode swap state.
 *
 *  63                         33  32  31                          0
 * +-----------------------------+----+------------------------------+
 * | lap (31 bits, truncated)    | NR |  physical sub-buffer index   |
 * +-----------------------------+----+------------------------------+
 *
 * NR (no reference) is set at delivery, together with the lap of the
 * delivered data: no writer references the sub-buffer and the reader may
 * swap it out.  A writer entering the slot for the next lap clears NR
 * before it touches the data.  In discard mode ids never change.
 */
#define GRB_ID_INDEX_MASK UINT64_C(0x00000000ffffffff)
#define GRB_ID_NOREF      (UINT64_C(1) << 32)
#define GRB_ID_LAP_SHIFT  33
#define GRB_ID_LAP_MASK   (~UINT64_C(0) << GRB_ID_LAP_SHIFT)

/* Ring slots per buffer: the index field must also hold the spare. */
#define GRB_NUM_SUBBUF_MAX (UINT64_C(1) << 31)
/* Sub-buffer bytes: a lap's commit bytes must stay below 2^32 (see cc). */
#define GRB_SUBBUF_SIZE_MAX (UINT64_C(1) << 31)

/*
 * Commit counter word, cumulative over laps:
 *
 *  63                             32 31                              0
 * +---------------------------------+---------------------------------+
 * | records committed (mod 2^32)    | bytes committed (mod 2^32)      |
 * +---------------------------------+---------------------------------+
 *
 * Each commit adds slot_size + 2^32 in one atomic add.  Bytes carry into
 * the record half, which is harmless: between two values of the same
 * slot the byte delta is below 2^32 (a lap adds exactly subbuf_size <=
 * 2^31), so delta >> 32 is the exact record count and the low half
 * compares exactly against the expected byte total.
 */
#define GRB_CC_RECORD     (UINT64_C(1) << 32)
#define GRB_CC_BYTES_MASK UINT64_C(0x00000000ffffffff)

/*
 * grb_buf_shm.blocked; any bit sends reserve to its slow path.  Bits 0-1
 * stop writers; bits 8-63 count the remote operations in progress on a
 * per-CPU (rseq) buffer (docs/design.md section 25.3), during which its
 * writers move the position with locked instructions only.
 */
#define GRB_BLOCKED_DISABLED  UINT64_C(1)
#define GRB_BLOCKED_FINALIZED UINT64_C(2)
#define GRB_BLOCKED_STOP      (GRB_BLOCKED_DISABLED | GRB_BLOCKED_FINALIZED)
#define GRB_BLOCKED_REMOTE    (UINT64_C(1) << 8)

/*
 * flush_gate: GRB_GATE_CLOSED once grb_channel_finalize() has begun on
 * the buffer; plus GRB_GATE_EMPTY per GRB_FLUSH_EMPTY flush in progress
 * that found it open.  One word, so that each such flush either counts
 * itself before finalize closes the gate (finalize then waits for it) or
 * sees the gate closed (it then opens nothing).
 */
#define GRB_GATE_CLOSED UINT64_C(1)
#define GRB_GATE_EMPTY  UINT64_C(2)

/*
 * Bits of grb_buf_shm.waiting: who waits for this buffer's data.  A waker
 * takes the bits with one atomic and-not, so one commit per arming pays
 * for the wake-up call.
 */
#define GRB_WAIT_BUF  UINT64_C(1)   /* grb_buf_wait(): futex on wake_seq */
#define GRB_WAIT_CHAN UINT64_C(2)   /* grb_channel_wait(): buffer 0's
				       chan_wake_seq */
#define GRB_WAIT_FD   UINT64_C(4)   /* an armed event fd (grb/wait.h) */

/* What the reader holds (grb_buf_shm.held). */
#define GRB_HELD_NONE 0u
#define GRB_HELD_POS  1u   /* grb_reader_get_subbuf(): pinned, not consumed */
#define GRB_HELD_NEXT 2u   /* grb_reader_get_next(): being consumed */

struct grb_commit_hot {
	/* See the commit counter word.  On a per-CPU (rseq) buffer: the
	 * commits made from other CPUs, with an atomic add. */
	grb_atomic_u64 cc;
	/* Per-CPU (rseq) buffers only, else 0: the commits made on the
	 * buffer's CPU, by a plain add in a critical section.  The slot's
	 * commit count is cc + cc_local (docs/design.md section 25.1). */
	grb_atomic_u64 cc_local;
	/* Records of the slot's delivered laps (written == their sum over
	 * the slots + what is committed and not delivered), and that total
	 * before the lap `counted` names.  Written only by that lap's
	 * deliverer, or a recoverer redoing its delivery: each store is
	 * idempotent, so a deliverer killed anywhere in it is redone exactly
	 * (src/deliver.c). */
	grb_atomic_u64 dtotal;
	grb_atomic_u64 dbase;
	char pad[GRB_CACHELINE - 4 * sizeof(grb_atomic_u64)];
};

struct grb_commit_cold {
	/* cc as it was when the slot was last delivered (0 initially). */
	grb_atomic_u64 cc_sb;
	/* Records of the lap last delivered, for overwrite accounting. */
	grb_atomic_u64 records_lap;
	/* Set by the one reservation that closes the slot's current lap. */
	grb_atomic_u64 data_size;
	grb_atomic_u64 ts_end;
	/* Set by the reservation that opens the slot's current lap: its
	 * timestamp, and the buffer's running count of records refused or
	 * overwritten when it opened (src/switch.c grb__begin_new()). */
	grb_atomic_u64 ts_begin;
	grb_atomic_u64 lost_open;
	/* 1 + the position of the last lap whose delivery marked it
	 * counted: stored after the slot's dbase, before its dtotal (hot
	 * line) and the add to subbufs_delivered, which a recoverer
	 * finishing the delivery of a writer that died in it does not make
	 * twice (src/deliver.c). */
	grb_atomic_u64 counted;
	/* Per-CPU (rseq) buffers: 1 + the position of the last lap whose
	 * delivery a commit claimed (docs/design.md section 25.4). */
	grb_atomic_u64 claimed;
	/* Eight words: the whole cache line, no padding left. */
};

/*
 * Per physical sub-buffer, written by the delivering thread before it
 * publishes the delivery, read by the reader that owns the sub-buffer.
 */
struct grb_subbuf_meta {
	uint64_t data_size;
	uint64_t records;
	uint64_t seq;
	uint64_t ts_begin;      /* the opener's timestamp */
	uint64_t ts_end;        /* the closer's timestamp */
	uint64_t lost_open;     /* refused + overwritten when it opened */
};

struct grb_buf_shm {
	/* Description, written once at creation. */
	uint64_t magic;
	uint32_t version;
	uint32_t mode;                  /* enum grb_mode */
	uint64_t map_size;
	uint64_t subbuf_size;
	uint64_t num_subbuf;
	uint64_t nr_phys;
	int64_t cpu;                    /* -1 for a per-channel buffer */
	uint64_t off_hot, off_cold, off_ids, off_meta, off_data;
	uint64_t off_journal, nr_jslots;

	/* Writer line: every reserve reads it. */
	GRB_ALIGNAS(GRB_CACHELINE) grb_atomic_u64 offset;  /* write position */
	grb_atomic_u64 last_ts;         /* for timestamp compression */
	grb_atomic_u64 blocked;         /* GRB_BLOCKED_* */

	/* Reader position, pushed by writers in overwrite mode. */
	GRB_ALIGNAS(GRB_CACHELINE) grb_atomic_u64 consumed;

	/* Reader state: touched only by the reader. */
	GRB_ALIGNAS(GRB_CACHELINE) grb_atomic_u64 active_readers;
	uint64_t reader_id;             /* the reader's spare (overwrite) */
	uint64_t held;                  /* GRB_HELD_* */
	uint64_t held_pos;              /* position of the held sub-buffer */
	uint64_t held_phys;             /* its physical index */
	grb_atomic_u64 records_read;    /* written by the reader only */

	/* Counters, written on slow paths only. */
	GRB_ALIGNAS(GRB_CACHELINE) grb_atomic_u64 records_overwritten;
	grb_atomic_u64 lost_full;
	grb_atomic_u64 lost_wrap;
	grb_atomic_u64 lost_big;
	grb_atomic_u64 lost_nesting;
	/* Reservations given back by grb_try_discard_reserve(). */
	grb_atomic_u64 records_discarded;
	/* Sub-buffers delivered. */
	grb_atomic_u64 subbufs_delivered;
	/* Dead-writer recovery (src/recover.c): records reserved by
	 * writers that died before committing them, never delivered as
	 * data; and sub-buffers completed by a recoverer. */
	grb_atomic_u64 lost_dead;
	grb_atomic_u64 subbufs_recovered;
	/* Per-CPU (rseq) path (src/rseq.c): commits that reached this
	 * buffer from off its CPU, and remote moves of its position. */
	grb_atomic_u64 remote_commits;
	grb_atomic_u64 remote_moves;
	/* GRB_GATE_*: finalize against GRB_FLUSH_EMPTY (src/switch.c). */
	grb_atomic_u64 flush_gate;

	/*
	 * Wake line: read by every commit (one load of a line that stays
	 * shared while no reader waits), written when a reader arms a wait
	 * and when a writer wakes it (src/wait.c).
	 */
	GRB_ALIGNAS(GRB_CACHELINE) grb_atomic_u64 waiting;   /* GRB_WAIT_* */
	grb_atomic_u64 wake_pos;        /* wake at a commit ending here */
	grb_atomic_u64 wake_delivered;  /* wake at a delivery ending here */
	grb_atomic_u64 wake_seq;        /* futex word (its low 32 bits) */
	grb_atomic_u64 chan_wake_seq;   /* buffer 0 only: the channel's */

	/*
	 * Identity, written once at creation and checked by a process that
	 * attaches (src/shm.c): the client's name and the configuration
	 * fields the layout and the record format depend on, the number of
	 * buffers of the channel and this buffer's index among them, and
	 * the channel's id: random at creation, the same in each of its
	 * buffers, so that buffers of two channels are not attached as one.
	 */
	GRB_ALIGNAS(GRB_CACHELINE) char client[GRB_SHM_CLIENT_BYTES];
	uint32_t alloc;                 /* enum grb_alloc */
	uint32_t timestamp_bits;
	uint64_t header_size;           /* the client's sub-buffer header */
	uint32_t nr_bufs;
	uint32_t buf_index;
	uint64_t chan_id;
};

struct grb_channel;
struct grb_jslot;

/*
 * Process-local handle of one buffer; pointers derived from the mapping.
 * The first cache line holds what every reservation and commit reads,
 * with the masks precomputed; the handle is GRB_BUF_HANDLE_SIZE bytes, a
 * power of two, so that finding the current CPU's is a shift and an add.
 */
#define GRB_BUF_HANDLE_SIZE 256

struct grb_buf {
	/* Fast-path line. */
	struct grb_buf_shm *shm;
	struct grb_commit_hot *hot;
	grb_atomic_u64 *ids;
	char *data;
	uint64_t subbuf_size;
	uint64_t sb_mask;               /* subbuf_size - 1 */
	uint64_t buf_mask;              /* buf_size - 1 */
	unsigned int subbuf_order;
	/* 1 when this buffer's writers take the per-CPU (rseq) path,
	 * decided at channel creation (docs/design.md section 25.5). */
	int rseq;

	struct grb_commit_cold *cold;
	struct grb_subbuf_meta *meta;
	uint64_t buf_size;
	unsigned int buf_order;
	unsigned int nsb_order;         /* log2(num_subbuf) */
	int cpu;                        /* -1 for a per-channel buffer */
	struct grb_channel *chan;
	/* Local copies of the description, so that nothing another process
	 * writes into the mapping later changes what this one bounds-checks
	 * against or unmaps. */
	uint64_t nr_phys;
	uint64_t map_size;
	/* The write journal: NULL in a private buffer.  jkey is unique to
	 * this handle in the process, never 0 (the per-thread slot cache's
	 * key, grb/impl/journal.h). */
	struct grb_jslot *journal;
	uint64_t nr_jslots;
	uint64_t jkey;
	/* The recoverer's deadline: the oldest stuck sub-buffer it saw, and
	 * since when (src/recover.c). */
	uint64_t stuck_pos;
	uint64_t stuck_since;
	/* Up to GRB_BUF_HANDLE_SIZE (checked in src/channel.c). */
	char pad[GRB_BUF_HANDLE_SIZE - 8 * 7 - 4 * 2 - 8 * 3 - 4 * 4 -
		 8 * 8];
};

/* grb_channel.shared: where the buffers live, and this process's role. */
#define GRB_CHAN_PRIVATE  0u    /* anonymous memory of this process */
#define GRB_CHAN_OWNER    1u    /* shared, created here */
#define GRB_CHAN_READER   2u    /* shared, attached as the reader */
#define GRB_CHAN_WRITER   3u    /* shared, attached as a writer */

struct grb_channel {
	const struct grb_config *cfg;
	struct grb_buf *bufs;
	unsigned int nr_bufs;
	/* The buffers grb_write_record()'s fast path may pick: nr_bufs, or
	 * 0 when the configuration inlines the per-CPU path and the channel
	 * fell back to the atomic one, so that the CPU's range check sends
	 * every record of such a channel out of line (docs/design.md 25.5). */
	unsigned int nr_fast;
	uint64_t subbuf_size;
	uint64_t num_subbuf;
	void *priv;
	int finalized;
	int event_fd;                   /* grb_channel_event_fd(), or -1 */
	uint64_t *tick_pos;             /* per buffer: position at the last
					   grb_channel_tick() */
	char name[64];
	unsigned int shared;            /* GRB_CHAN_* */
	int gid;                        /* the group that may attach, or -1 */
	int *shm_fds;                   /* one per buffer when shared */
	char *shm_dir;                  /* owner with files: their directory */
	/* grb_channel_write_path(): the path and the reason. */
	int write_path;
	int path_reason;
};

#ifdef __cplusplus
}
#endif

#endif /* GRB_IMPL_LAYOUT_H */
