/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_callbacks_audit.c - what grb/config.h promises about the
 * client callbacks and timestamps, where test_config.c,
 * test_config_contract.c, test_subbuf_contract.c and test_timestamps.c do
 * not already check it:
 *
 *  - clock_read is read between the load of the write position and the
 *    reservation's compare-and-swap: a signal handler that writes while
 *    the clock is being read (the test's clock raises the signal right
 *    after it reads its counter) makes the interrupted reservation, or
 *    flush, start over with a new clock value, so timestamps still grow
 *    with positions.  Checked on grb_reserve()'s fast path, its slow
 *    path, grb_write_record() and grb_buf_flush();
 *  - GRB_RFLAG_FULL_TIMESTAMP after a lost record (-ENOSPC, -EAGAIN,
 *    -EBUSY, -ENOBUFS, -EIO): the next record is compared with the
 *    previous committed one, never with the refused reservation, whose
 *    clock value is not kept; and the flag at timestamp_bits 1 and 63;
 *  - record_header_size sees ctx->rflags and ctx->data_size on the
 *    grb_write_record() path too, and @fill sees the flag;
 *  - buffer_begin and buffer_end: the fields struct grb_subbuf_info marks
 *    "end only" are 0 at begin; a reservation whose record does not fit
 *    commits the closed sub-buffer's padding, so when nothing in it is
 *    pending its buffer_end runs inside grb_reserve() (or
 *    grb_write_record()), before the next sub-buffer's buffer_begin; an
 *    exact fill's buffer_end runs in that record's commit; a commit made
 *    off the buffer's CPU on the per-CPU path runs buffer_end once;
 *  - each sub-buffer gets exactly one buffer_begin (before its opening
 *    record is written) and one buffer_end, the second after the first,
 *    with a header the reader sees as the callbacks left it, under
 *    signal-handler writers injected at every writer-side hook point,
 *    under two threads racing on one per-CPU buffer, one of them off its
 *    CPU, and when a local and a remote commit both complete the same
 *    sub-buffer (only the claim keeps buffer_end to one call);
 *  - buffer_finalize runs once per buffer, not again on a second
 *    grb_channel_finalize() (-EALREADY) nor at destroy;
 *  - record_pad, for a writer process killed between reserve and commit:
 *    called on exactly the dead slot, buffer_end run once by the
 *    recoverer with the committed records counted; without record_pad
 *    the sub-buffer ends at the dead slot and grb_subbuf_info.records
 *    still counts the records cut off after it;
 *  - grb_config_check() on flag combinations, and a shared configuration
 *    on a private channel under the signal-handler writers.
 *
 * Every buffer read back goes through one checker: the first record of
 * each sub-buffer is full, every compressed timestamp rebuilt from the
 * previous record (no wrap step) equals the writer's clock value,
 * timestamps never decrease in position order, lie in [ts_begin, ts_end]
 * and are not below the previous sub-buffer's ts_end.
 *
 * Sequences run per channel, per CPU on the atomic path, per CPU with
 * GRB_CONFIG_SYNC_PER_CPU (the rseq path where the machine has it), and
 * the same again forced onto its atomic fallback (GRB_SYNC=atomic).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"
#include "grb_test_hooks.h"

#define SB 4096
#define NSUB 8
#define FULL GRB_RFLAG_FULL_TIMESTAMP
#define FULL_BIT 0x80000000u
#define PAD_BIT 0x40000000u
#define LEN_MASK 0x3fffffffu
#define AC_MAGIC 0x61636862u
#define MAXSEQ 8192
#define MAXTAG (1u << 20)
/* ac_rec.flags: a record its writer abandoned (discard refused). */
#define AC_SKIP 0x100u

/* The client's sub-buffer header, written by buffer_begin and patched by
 * buffer_end. */
struct ac_header {
	uint32_t magic;
	int32_t cpu;
	uint64_t seq;
	uint64_t ts_begin;
	uint64_t ts_end;
	uint64_t data_size;
	uint64_t records;
	uint64_t lost;
	uint64_t overwritten;
};
#define HDR sizeof(struct ac_header)

/* Every record's payload starts with this. */
struct ac_rec {
	uint64_t ts;            /* ctx->timestamp as reserved */
	uint32_t tag;
	uint32_t flags;         /* ctx->rflags, and AC_SKIP */
};

/* ---- the clock ----------------------------------------------------------- */

static _Atomic uint64_t clk;
static uint64_t clk_step;       /* 0: clk is set by the test */
/* Raise SIGUSR1 in the clk_arm-th clock read from now (not counting
 * the handler's), right after the counter is read: a signal arriving
 * in the middle of clock_read. */
static volatile sig_atomic_t clk_arm;
static volatile sig_atomic_t in_handler;
static unsigned int clock_signals;

static uint64_t ac_clock(void)
{
	uint64_t v;

	if (clk_step)
		v = atomic_fetch_add(&clk, clk_step) + clk_step;
	else
		v = atomic_load(&clk);
	if (clk_arm && !in_handler && --clk_arm == 0) {
		clock_signals++;
		raise(SIGUSR1);
	}
	return v;
}

/* ---- record layout ------------------------------------------------------- */

static size_t pre_of(size_t off)
{
	return (8 - (off & 7)) & 7;
}

static uint64_t low_mask(const struct grb_config *cfg)
{
	if (cfg->timestamp_bits >= 64)
		return ~UINT64_C(0);
	return (UINT64_C(1) << cfg->timestamp_bits) - 1;
}

/*
 * Record header: u32 payload length | FULL_BIT, then the timestamp: a u32
 * of low bits when compressed with at most 32 bits kept, else a u32 of 0
 * and a u64 (the full value, or the low bits when compressed).
 */
static size_t rh_len(const struct grb_config *cfg, unsigned int rflags)
{
	return !(rflags & FULL) && cfg->timestamp_bits <= 32 ? 8 : 16;
}

/*
 * The record_header_size calls of the test thread's current reservation
 * (a slow path makes several: the slot where the position is, the slot
 * after the next sub-buffer's header); not the handler's, and none while
 * other threads write (rh_log 0).
 */
struct rh_call {
	size_t offset, data_size;
	unsigned int rflags;
	void *client_priv;
};
#define NRH 8
static struct rh_call rh_calls[NRH];
static unsigned int nrh;
static int rh_log = 1;

static size_t ac_rh_size(const struct grb_config *cfg, size_t offset,
			 size_t *pre, const struct grb_ctx *ctx)
{
	if (rh_log && !in_handler && nrh < NRH) {
		rh_calls[nrh].offset = offset;
		rh_calls[nrh].data_size = ctx->data_size;
		rh_calls[nrh].rflags = ctx->rflags;
		rh_calls[nrh].client_priv = ctx->client_priv;
		nrh++;
	}
	*pre = pre_of(offset);
	return *pre + rh_len(cfg, ctx->rflags);
}

/* One of the logged calls described ctx's slot, with ctx's inputs and
 * its reservation flags set. */
static void check_rh_seen(const struct grb_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < nrh; i++)
		if (rh_calls[i].offset == (ctx->pre_offset & (SB - 1)) &&
		    rh_calls[i].data_size == ctx->data_size &&
		    rh_calls[i].rflags == ctx->rflags &&
		    rh_calls[i].client_priv == ctx->client_priv)
			return;
	CHECK(!"no record_header_size call describes the slot");
}

static size_t ac_hdr_size(void)
{
	return HDR;
}

/* Padding (record_pad): u32 length | PAD_BIT, u32 0, then that many
 * bytes; no timestamp. */
static int ac_decode(const struct grb_config *cfg, const void *subbuf,
		     size_t offset, size_t data_size, struct grb_record *rec)
{
	const unsigned char *p = (const unsigned char *)subbuf;
	size_t at = offset + pre_of(offset);
	uint32_t w0, w1;

	if (at + 8 > data_size)
		return -EINVAL;
	memcpy(&w0, p + at, 4);
	memcpy(&w1, p + at + 4, 4);
	rec->offset = at;
	if (w0 & PAD_BIT) {
		rec->rflags = GRB_RFLAG_PADDING;
		rec->header_len = 8;
		rec->timestamp = 0;
		rec->payload_off = at + 8;
		rec->payload_len = w0 & LEN_MASK;
		rec->next = rec->payload_off + rec->payload_len;
		return w1 == 0 && !(w0 & FULL_BIT) &&
			rec->payload_len <= data_size &&
			rec->next <= data_size ? 0 : -EINVAL;
	}
	rec->rflags = (w0 & FULL_BIT) ? FULL : 0;
	rec->header_len = rh_len(cfg, rec->rflags);
	if (data_size - at < rec->header_len)
		return -EINVAL;
	if (rec->header_len == 16)
		memcpy(&rec->timestamp, p + at + 8, 8);
	else
		rec->timestamp = w1;
	rec->payload_off = at + rec->header_len;
	rec->payload_len = w0 & LEN_MASK;
	rec->next = rec->payload_off + rec->payload_len;
	if (rec->payload_len < sizeof(struct ac_rec) ||
	    rec->payload_len > data_size || rec->next > data_size)
		return -EINVAL;
	return 0;
}

/* What record_pad was asked to cover, last call. */
static unsigned int npad;
static const void *pad_at;
static size_t pad_len;

static void ac_pad(const struct grb_config *cfg, void *at, size_t len)
{
	/* A sub-buffer is page aligned: the address gives the offset's
	 * alignment. */
	size_t pre = pre_of((size_t)(uintptr_t)at);
	uint32_t w[2] = { 0, 0 };

	(void)cfg;
	CHECK(len >= pre + 8);
	w[0] = (uint32_t)(len - pre - 8) | PAD_BIT;
	memset(at, 0, pre);
	memcpy((char *)at + pre, w, sizeof(w));
	npad++;
	pad_at = at;
	pad_len = len;
}

static unsigned char pattern(uint32_t tag, size_t i)
{
	return (unsigned char)(tag * 13u + i * 5u + 3u);
}

/* Write a whole record into ctx: header, struct ac_rec, pattern. */
static void fill_rec(const struct grb_config *cfg, struct grb_ctx *ctx,
		     uint32_t tag, uint32_t flags)
{
	struct ac_rec r = { ctx->timestamp, tag, ctx->rflags | flags };
	uint32_t w[2];
	uint64_t t;
	size_t i, n = ctx->data_size - sizeof(r);

	w[0] = (uint32_t)ctx->data_size | ((ctx->rflags & FULL) ? FULL_BIT : 0);
	w[1] = 0;
	t = (ctx->rflags & FULL) ? ctx->timestamp :
		ctx->timestamp & low_mask(cfg);
	if (rh_len(cfg, ctx->rflags) == 8)
		w[1] = (uint32_t)t;
	grb_write(cfg, ctx, w, sizeof(w));
	if (rh_len(cfg, ctx->rflags) == 16)
		grb_write(cfg, ctx, &t, sizeof(t));
	grb_write(cfg, ctx, &r, sizeof(r));
	for (i = 0; i < n; i++)
		*ctx->wptr++ = (char)pattern(tag, i);
	CHECK(ctx->wptr == ctx->wend);
}

/* ---- buffer callbacks ---------------------------------------------------- */

/* What the test thread was doing when a callback ran. */
enum { PH_NONE, PH_RESERVE, PH_COMMIT, PH_WRITE, PH_FLUSH, PH_DISCARD };
static volatile sig_atomic_t phase;

struct ac_event {
	int end;                /* 0: buffer_begin, 1: buffer_end */
	int phase, handler;
	uint64_t seq, ts, data_size, records, lost, overwritten, tick;
	int cpu;
	void *header;
};
#define NEV 512
static struct ac_event evs[NEV];
static _Atomic unsigned int nev;
static _Atomic uint64_t tick;
/* Per sequence number: callbacks run, and the tick of each. */
static _Atomic uint32_t nbegin[MAXSEQ], nend[MAXSEQ];
static uint64_t begin_tick[MAXSEQ], end_tick[MAXSEQ];
static _Atomic uint64_t end_records;    /* sum of info->records at end */
static int want_cpu;

static void log_event(int end, void *header,
		      const struct grb_subbuf_info *info)
{
	unsigned int i = atomic_fetch_add(&nev, 1);
	uint64_t t = atomic_fetch_add(&tick, 1) + 1;

	CHECK(info->seq < MAXSEQ);
	if (end) {
		atomic_fetch_add(&nend[info->seq], 1);
		end_tick[info->seq] = t;
		atomic_fetch_add(&end_records, info->records);
	} else {
		atomic_fetch_add(&nbegin[info->seq], 1);
		begin_tick[info->seq] = t;
	}
	CHECK_EQ(info->cpu, want_cpu);
	if (i >= NEV)
		return;
	evs[i].end = end;
	evs[i].phase = phase;
	evs[i].handler = in_handler;
	evs[i].seq = info->seq;
	evs[i].ts = info->timestamp;
	evs[i].data_size = info->data_size;
	evs[i].records = info->records;
	evs[i].lost = info->lost;
	evs[i].overwritten = info->overwritten;
	evs[i].cpu = info->cpu;
	evs[i].header = header;
	evs[i].tick = t;
}

static void ac_begin(struct grb_buf *buf, void *header,
		     const struct grb_subbuf_info *info)
{
	struct ac_header h = { AC_MAGIC, info->cpu, info->seq,
			       info->timestamp, 0, 0, 0, 0, 0 };

	(void)buf;
	/* "end only": nothing to report when a sub-buffer opens. */
	CHECK_U64(info->data_size, 0);
	CHECK_U64(info->records, 0);
	CHECK_U64(info->lost, 0);
	CHECK_U64(info->overwritten, 0);
	log_event(0, header, info);
	memcpy(header, &h, sizeof(h));
}

static void ac_end(struct grb_buf *buf, void *header,
		   const struct grb_subbuf_info *info)
{
	struct ac_header h;

	(void)buf;
	log_event(1, header, info);
	memcpy(&h, header, sizeof(h));
	h.ts_end = info->timestamp;
	h.data_size = info->data_size;
	h.records = info->records;
	h.lost = info->lost;
	h.overwritten = info->overwritten;
	memcpy(header, &h, sizeof(h));
}

static unsigned int ncreate, nfinal;

static int ac_create(struct grb_buf *buf, void *priv, int cpu)
{
	(void)buf;
	(void)priv;
	(void)cpu;
	ncreate++;
	return 0;
}

static void ac_finalize(struct grb_buf *buf, void *priv, int cpu)
{
	(void)buf;
	(void)priv;
	(void)cpu;
	nfinal++;
}

#define AC_CB_PAD(clock, pad) { .clock_read = (clock),                   \
	.record_header_size = ac_rh_size, .subbuf_header_size = ac_hdr_size, \
	.buffer_begin = ac_begin, .buffer_end = ac_end,                    \
	.buffer_create = ac_create, .buffer_finalize = ac_finalize,       \
	.record_decode = ac_decode, .record_pad = (pad) }
#define AC_CB(clock) AC_CB_PAD(clock, NULL)
#define PCHAN GRB_ALLOC_PER_CHANNEL
#define PCPU GRB_ALLOC_PER_CPU
#define DSC GRB_MODE_DISCARD
#define OVW GRB_MODE_OVERWRITE
#define SYNC GRB_CONFIG_SYNC_PER_CPU

/*
 * The write paths: per channel, per CPU (atomic), per CPU with the rseq
 * flag, and that one again with GRB_SYNC=atomic at creation (K_FALLBACK,
 * the same configuration objects as K_SYNC).
 */
enum { K_CHAN, K_CPU, K_SYNC, K_FALLBACK, NKIND };
static const char *const kind_name[NKIND] = {
	"per-channel", "per-cpu", "per-cpu-sync", "per-cpu-fallback"
};

#define AC_KINDS(mode, bits, clock) {                                    \
	{ PCHAN, (mode), (bits), AC_CB(clock), 0 },                       \
	{ PCPU, (mode), (bits), AC_CB(clock), 0 },                        \
	{ PCPU, (mode), (bits), AC_CB(clock), SYNC },                     \
	{ PCPU, (mode), (bits), AC_CB(clock), SYNC },                     \
}
static const struct grb_config c8d[NKIND] = AC_KINDS(DSC, 8, ac_clock);
static const struct grb_config c8o[NKIND] = AC_KINDS(OVW, 8, ac_clock);
static const struct grb_config c64d[NKIND] = AC_KINDS(DSC, 64, ac_clock);
static const struct grb_config c64o[NKIND] = AC_KINDS(OVW, 64, ac_clock);
static const struct grb_config c0d[NKIND] = AC_KINDS(DSC, 0, NULL);
static const struct grb_config c0o[NKIND] = AC_KINDS(OVW, 0, NULL);
static const struct grb_config c1d[NKIND] = AC_KINDS(DSC, 1, ac_clock);
static const struct grb_config c63o[NKIND] = AC_KINDS(OVW, 63, ac_clock);
/* Shared (recovery from a dead writer), with and without record_pad. */
static const struct grb_config csh_pad = {
	PCHAN, DSC, 8, AC_CB_PAD(ac_clock, ac_pad), GRB_CONFIG_SHARED,
};
static const struct grb_config csh_nopad = {
	PCHAN, DSC, 8, AC_CB(ac_clock), GRB_CONFIG_SHARED,
};

/* ---- the run in progress ------------------------------------------------- */

static const struct grb_config *cfg;
static struct grb_channel *chan;
static struct grb_buf *buf;
static int cpu0 = -1;           /* the CPU the test thread is pinned to */
static int cpu1 = -1;           /* another one it may run on, or -1 */
static int rseq_runs;
static _Atomic uint32_t next_tag;
/* Per tag: committed (1), and how many times the checker read it. */
static uint8_t committed[MAXTAG], seen[MAXTAG];
static int count_tags;          /* 0: records may be overwritten */
static int want_shared;         /* start(): in shared memory */
static char *sync_env;          /* GRB_SYNC as the test was started */

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

static void start(const struct grb_config *c, int k)
{
	struct grb_channel_attr attr = { "cbaudit", SB, NSUB, NULL };

	pin(cpu0);
	cfg = c;
	memset(nbegin, 0, sizeof(nbegin));
	memset(nend, 0, sizeof(nend));
	memset(committed, 0, sizeof(committed));
	memset(seen, 0, sizeof(seen));
	atomic_store(&nev, 0);
	atomic_store(&end_records, 0);
	atomic_store(&next_tag, 0);
	ncreate = nfinal = 0;
	count_tags = 1;
	clk_arm = 0;
	npad = 0;
	if (k == K_FALLBACK)
		CHECK_EQ(setenv("GRB_SYNC", "atomic", 1), 0);
	if (want_shared) {
		struct grb_shm_attr mem = { "cbaudit", NULL, -1 };

		CHECK_EQ(grb_channel_create_shared(cfg, &attr, &mem, &chan), 0);
	} else {
		CHECK_EQ(grb_channel_create(cfg, &attr, &chan), 0);
	}
	if (k == K_FALLBACK) {
		/* Back to what ctest set (GRB_SYNC=atomic for the atomic/
		 * run of every test), or nothing. */
		if (sync_env)
			CHECK_EQ(setenv("GRB_SYNC", sync_env, 1), 0);
		else
			CHECK_EQ(unsetenv("GRB_SYNC"), 0);
		CHECK_EQ(grb_channel_write_path(chan, NULL), GRB_WRITE_ATOMIC);
	}
	if (k == K_SYNC)
		rseq_runs += grb_channel_write_path(chan, NULL) ==
			GRB_WRITE_RSEQ;
	CHECK_EQ(ncreate, grb_channel_nr_bufs(chan));
	want_cpu = cfg->alloc == PCPU ? cpu0 : -1;
	buf = grb_channel_buf(chan, want_cpu < 0 ? 0 : (unsigned int)cpu0);
	CHECK(buf != NULL);
	CHECK_EQ(grb_reader_open(buf), 0);
}

static uint64_t room(void)
{
	struct grb_buf_stats st;
	uint64_t off;

	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	off = st.produced & (SB - 1);
	return off ? SB - off : 0;
}

/* ---- writing ------------------------------------------------------------- */

/* A record that opens its sub-buffer (it starts right after the header)
 * finds buffer_begin run, inside its reservation, before it writes. */
static void check_opener(const struct grb_ctx *ctx)
{
	if ((ctx->pre_offset & (SB - 1)) == HDR)
		CHECK_EQ(atomic_load(&nbegin[ctx->pre_offset / SB]), 1);
}

/* The last record a signal handler reserved. */
static struct grb_ctx h_last;

/* Reserve a record of `extra` pattern bytes; the caller commits. */
static int reserve(struct grb_ctx *ctx, size_t extra)
{
	int ret;

	*ctx = (struct grb_ctx)GRB_CTX_INIT(sizeof(struct ac_rec) + extra, 1);
	ctx->client_priv = (void *)ctx;
	if (!in_handler) {
		phase = PH_RESERVE;
		nrh = 0;
	}
	ret = grb_reserve(cfg, chan, ctx);
	if (!in_handler)
		phase = PH_NONE;
	if (ret)
		return ret;
	if (!in_handler)
		check_rh_seen(ctx);
	check_opener(ctx);
	if (cfg->timestamp_bits == 0)
		CHECK_U64(ctx->timestamp, 0);
	/* grb_reserve() never sets GRB_RFLAG_PADDING; never FULL without a
	 * clock, always with 64 bits. */
	CHECK_EQ(ctx->rflags & ~(unsigned int)FULL, 0);
	if (cfg->timestamp_bits == 0)
		CHECK_EQ(ctx->rflags, 0);
	if (cfg->timestamp_bits == 64)
		CHECK_EQ(ctx->rflags, FULL);
	return 0;
}

static uint32_t new_tag(void)
{
	uint32_t t = atomic_fetch_add(&next_tag, 1);

	CHECK(t < MAXTAG);
	return t;
}

static void commit(struct grb_ctx *ctx, uint32_t flags)
{
	uint32_t tag = new_tag();

	fill_rec(cfg, ctx, tag, flags);
	if (!in_handler)
		phase = PH_COMMIT;
	grb_commit(cfg, ctx);
	if (!in_handler)
		phase = PH_NONE;
	committed[tag] = 1;
}

/* Reserve, write and commit; returns grb_reserve()'s result. */
static int put(size_t extra, struct grb_ctx *out)
{
	struct grb_ctx ctx;
	int ret = reserve(&ctx, extra);

	if (ret)
		return ret;
	if (out)
		*out = ctx;
	commit(&ctx, 0);
	return 0;
}

/* put() at clock value ts (the clock is set by the test). */
static int put_at(size_t extra, uint64_t ts, struct grb_ctx *out)
{
	atomic_store(&clk, ts);
	return put(extra, out);
}

/* What grb_write_record()'s fill saw. */
struct wr_arg {
	uint32_t tag;
	struct grb_ctx seen;
};

static void wr_fill(const struct grb_config *c, struct grb_ctx *ctx)
{
	struct wr_arg *a = (struct wr_arg *)ctx->client_priv;

	/* record_header_size saw this slot, with rflags, data_size and
	 * client_priv set, on this path too. */
	if (!in_handler)
		check_rh_seen(ctx);
	check_opener(ctx);
	a->seen = *ctx;
	fill_rec(c, ctx, a->tag, 0);
}

static int write_rec(size_t extra, struct grb_ctx *out)
{
	struct wr_arg a;
	int ret;

	a.tag = new_tag();
	memset(&a.seen, 0, sizeof(a.seen));
	if (!in_handler) {
		phase = PH_WRITE;
		nrh = 0;
	}
	ret = grb_write_record(cfg, chan, sizeof(struct ac_rec) + extra, 1,
			       &a, wr_fill);
	if (!in_handler)
		phase = PH_NONE;
	if (ret == 0)
		committed[a.tag] = 1;
	if (out)
		*out = a.seen;
	return ret;
}

/* Discard, or commit as a record readers skip when that is refused. */
static void abandon(struct grb_ctx *ctx)
{
	int ret;

	if (!in_handler)
		phase = PH_DISCARD;
	ret = grb_try_discard_reserve(cfg, ctx);
	if (!in_handler)
		phase = PH_NONE;
	if (ret == -EBUSY)
		commit(ctx, AC_SKIP);
	else
		CHECK_EQ(ret, 0);
}

static int flush(enum grb_flush how)
{
	int ret;

	phase = PH_FLUSH;
	ret = grb_buf_flush(buf, how);
	phase = PH_NONE;
	return ret;
}

/* ---- reading back -------------------------------------------------------- */

static uint64_t prev_ts;        /* last record's timestamp, this buffer */
static uint64_t prev_ts_end;    /* last sub-buffer's ts_end */
static uint64_t nsubbufs;

/* Check one delivered sub-buffer (see the comment at the top). */
static void check_subbuf(const struct grb_reader_subbuf *sb)
{
	const unsigned char *p = (const unsigned char *)sb->data;
	uint64_t mask = low_mask(cfg), ts, n = 0;
	struct ac_header h;
	struct grb_record rec;
	struct ac_rec r;
	size_t off = HDR, i;

	CHECK(sb->seq < MAXSEQ);
	memcpy(&h, p, sizeof(h));
	CHECK_U64(h.magic, AC_MAGIC);
	CHECK_U64(h.seq, sb->seq);
	CHECK_EQ(h.cpu, want_cpu);
	/* One buffer_begin, one buffer_end, in that order, and the
	 * header as they left it. */
	CHECK_EQ(atomic_load(&nbegin[sb->seq]), 1);
	CHECK_EQ(atomic_load(&nend[sb->seq]), 1);
	CHECK(end_tick[sb->seq] > begin_tick[sb->seq]);
	CHECK_U64(h.ts_begin, sb->ts_begin);
	CHECK_U64(h.ts_end, sb->ts_end);
	CHECK_U64(h.data_size, sb->data_size);
	CHECK_U64(h.records, sb->records);
	CHECK(sb->ts_begin <= sb->ts_end);
	CHECK(sb->ts_begin >= prev_ts_end);
	if (cfg->timestamp_bits == 0)
		CHECK_U64(sb->ts_end, 0);
	while (off < sb->data_size) {
		CHECK_EQ(ac_decode(cfg, p, off, sb->data_size, &rec), 0);
		if (rec.rflags & GRB_RFLAG_PADDING) {
			/* A dead writer's bytes: not a record. */
			CHECK(cfg->cb.record_pad != NULL);
			off = rec.next;
			continue;
		}
		memcpy(&r, p + rec.payload_off, sizeof(r));
		CHECK_EQ(r.flags & FULL, rec.rflags);
		if (cfg->timestamp_bits == 0) {
			CHECK_EQ(rec.rflags, 0);
			CHECK_U64(r.ts, 0);
		} else if (n == 0) {
			/* A reader may start at any sub-buffer. */
			CHECK_EQ(rec.rflags, FULL);
			CHECK_U64(r.ts, sb->ts_begin);
		}
		if (cfg->timestamp_bits > 0) {
			/* Rebuilt from the previous record, with no step to
			 * the next window: the flag must make that exact. */
			ts = (rec.rflags & FULL) ? rec.timestamp :
				(prev_ts & ~mask) | (rec.timestamp & mask);
			CHECK_U64(ts, r.ts);
			CHECK(ts >= prev_ts);
			CHECK(ts >= sb->ts_begin);
			CHECK(ts <= sb->ts_end);
			prev_ts = ts;
		}
		CHECK(r.tag < MAXTAG);
		for (i = sizeof(r); i < rec.payload_len; i++)
			CHECK_EQ(p[rec.payload_off + i],
				 pattern(r.tag, i - sizeof(r)));
		if (count_tags) {
			CHECK_EQ(committed[r.tag], 1);
			CHECK_EQ(seen[r.tag], 0);
		}
		seen[r.tag]++;
		off = rec.next;
		n++;
	}
	CHECK_U64(off, sb->data_size);
	CHECK_U64(n, sb->records);
	prev_ts_end = sb->ts_end;
	if (prev_ts < prev_ts_end)
		prev_ts = prev_ts_end;
	nsubbufs++;
}

/* Read and check every delivered sub-buffer.  Return: the last
 * get_next result (-EAGAIN or -ENODATA). */
static int drain(void)
{
	struct grb_reader_subbuf sb;
	int ret;

	while ((ret = grb_reader_get_next(buf)) == 0) {
		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		check_subbuf(&sb);
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK(ret == -EAGAIN || ret == -ENODATA);
	return ret;
}

/* Finalize, drain, check every committed record was read once and that
 * each buffer was finalized once; destroy. */
static void finish(void)
{
	uint32_t i, n = atomic_load(&next_tag);

	CHECK_EQ(grb_channel_finalize(chan), 0);
	CHECK_EQ(nfinal, ncreate);
	/* A second finalize is refused and finalizes nothing again. */
	CHECK_EQ(grb_channel_finalize(chan), -EALREADY);
	CHECK_EQ(nfinal, ncreate);
	CHECK_EQ(drain(), -ENODATA);
	for (i = 0; count_tags && i < n; i++)
		CHECK_EQ(seen[i], committed[i]);
	CHECK_EQ(grb_reader_release(buf), 0);
	grb_channel_destroy(chan);
	CHECK_EQ(nfinal, ncreate);
	prev_ts = prev_ts_end = 0;
}

/* The i-th event logged, which must exist. */
static const struct ac_event *ev(unsigned int i)
{
	CHECK(i < atomic_load(&nev) && i < NEV);
	return &evs[i];
}

/* ---- the signal handler: a nested writer --------------------------------- */

static unsigned int h_runs;

static void on_signal(int sig)
{
	int saved = errno, ret;
	struct grb_ctx ctx;

	(void)sig;
	in_handler = 1;
	switch (h_runs++ % 4) {
	case 0:         /* a small record */
		ret = put(8 + h_runs % 64, &h_last);
		break;
	case 1:         /* the one-call path */
		ret = write_rec(24 + h_runs % 200, &h_last);
		break;
	case 2:         /* its own reservation, discarded */
		ret = reserve(&ctx, 16 + h_runs % 100);
		if (ret == 0) {
			h_last = ctx;
			abandon(&ctx);
		}
		break;
	default:        /* large: often does not fit, and switches */
		ret = put(900 + h_runs % 700, &h_last);
		break;
	}
	CHECK_EQ(ret, 0);
	in_handler = 0;
	errno = saved;
}

/* ---- 1. the clock is read between the position load and the CAS ---------- */

/*
 * The outer call's n-th clock read is interrupted by a handler that writes
 * one record (a small one: it lands in the open sub-buffer).  The outer
 * record then comes after the handler's, so its timestamp must be the
 * later one: the outer call must have loaded the position before reading
 * the clock, and retried when the handler moved it.
 */
#define EXPECT_AFTER_HANDLER(outer) do {                                 \
	CHECK_EQ(clk_arm, 0);                                             \
	CHECK((outer)->pre_offset > h_last.pre_offset);                   \
	CHECK((outer)->timestamp > h_last.timestamp);                     \
} while (0)

static void seq_clock_order(const struct grb_config *c, int k)
{
	struct grb_ctx x;
	unsigned int i, n;

	start(c, k);
	clk_step = 3;
	atomic_store(&clk, 1000);
	h_runs = 0;
	/* Open sub-buffer 0, then the fast path of grb_reserve(): the
	 * handler (a small put) runs inside its first clock read. */
	CHECK_EQ(put(8, NULL), 0);
	clk_arm = 1;
	CHECK_EQ(put(8, &x), 0);
	EXPECT_AFTER_HANDLER(&x);
	/* grb_write_record()'s fast path (the handler: write_rec). */
	clk_arm = 1;
	CHECK_EQ(write_rec(8, &x), 0);
	EXPECT_AFTER_HANDLER(&x);
	/* The slow path: a record that does not fit reads the clock on the
	 * fast path, then again in the slow path; interrupt the second. */
	h_runs = 0;
	while (room() > 600)
		CHECK_EQ(put(200, NULL), 0);
	clk_arm = 2;
	CHECK_EQ(put(1000, &x), 0);
	EXPECT_AFTER_HANDLER(&x);
	/* The slow path opening a sub-buffer (position at its start). */
	h_runs = 0;
	CHECK_EQ(flush(GRB_FLUSH_ACTIVE), 0);
	clk_arm = 2;
	CHECK_EQ(put(8, &x), 0);
	CHECK(h_last.rflags & FULL || cfg->timestamp_bits == 0);
	EXPECT_AFTER_HANDLER(&x);
	/*
	 * A flush closes at its own clock value: a record the handler adds
	 * while the flush reads the clock is inside what it closes, so the
	 * flush must start over and end the sub-buffer no earlier.
	 */
	h_runs = 0;
	clk_arm = 1;
	n = atomic_load(&nev);
	CHECK_EQ(flush(GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(clk_arm, 0);
	for (i = n; i < atomic_load(&nev); i++)
		if (ev(i)->end && ev(i)->seq == h_last.pre_offset / SB)
			break;
	CHECK(i < atomic_load(&nev));
	CHECK(ev(i)->ts >= h_last.timestamp);
	CHECK(ev(i)->ts > 0);
	clk_step = 0;
	finish();
}

/* ---- 2. GRB_RFLAG_FULL_TIMESTAMP after a lost record --------------------- */

static uint64_t lost_now(void)
{
	struct grb_buf_stats st;

	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	return st.lost_full + st.lost_wrap + st.lost_big + st.lost_nesting;
}

/* Reserve at clock ts and expect the refusal err, counted or not. */
static void refused_at(size_t extra, uint64_t ts, int err)
{
	struct grb_ctx ctx;
	uint64_t lost = lost_now();

	atomic_store(&clk, ts);
	CHECK_EQ(reserve(&ctx, extra), err);
	CHECK_U64(lost_now(), lost + (err == -EAGAIN ? 0 : 1));
}

/*
 * Discard mode, 8 bits kept: after each refusal at a clock value above
 * the previous record's kept bits, the next record (whose value has the
 * refused one's high bits) must be full; after a refusal within them, it
 * stays compressed.
 */
static void seq_lost_discard(const struct grb_config *c, int k)
{
	struct grb_ctx held[GRB_MAX_NESTING], x;
	unsigned int i;
	int ret;

	start(c, k);
	CHECK_EQ(put_at(8, 0x1000, &x), 0);
	CHECK_EQ(x.rflags, FULL);
	CHECK_EQ(put_at(8, 0x1010, &x), 0);
	CHECK_EQ(x.rflags, 0);
	/* Too big (-ENOSPC). */
	refused_at(SB, 0x1100, -ENOSPC);
	CHECK_EQ(put_at(8, 0x1120, &x), 0);
	CHECK_EQ(x.rflags, FULL);
	refused_at(SB, 0x1130, -ENOSPC);
	CHECK_EQ(put_at(8, 0x1140, &x), 0);
	CHECK_EQ(x.rflags, 0);
	/* Disabled (-EAGAIN, not a loss). */
	CHECK_EQ(grb_channel_record_disable(chan), 0);
	refused_at(8, 0x1200, -EAGAIN);
	CHECK_EQ(grb_channel_record_enable(chan), 0);
	CHECK_EQ(put_at(8, 0x1210, &x), 0);
	CHECK_EQ(x.rflags, FULL);
	/* Nested too deep (-EBUSY): no clock read at all. */
	atomic_store(&clk, 0x1300);
	for (i = 0; i < GRB_MAX_NESTING; i++)
		CHECK_EQ(reserve(&held[i], 8), 0);
	refused_at(8, 0x1400, -EBUSY);
	for (i = GRB_MAX_NESTING; i-- > 0;)
		commit(&held[i], 0);
	CHECK_EQ(put_at(8, 0x1410, &x), 0);
	CHECK_EQ(x.rflags, FULL);
	/* Full (-ENOBUFS): no reader consumes; the open sub-buffer stays
	 * open and a small record still fits in it. */
	atomic_store(&clk, 0x1420);
	for (i = 0; i < 1000; i++) {
		ret = put(500, NULL);
		if (ret)
			break;
	}
	CHECK_EQ(ret, -ENOBUFS);
	CHECK(room() > 64);
	refused_at(500, 0x1500, -ENOBUFS);
	CHECK_EQ(put_at(8, 0x1510, &x), 0);
	CHECK_EQ(x.rflags, FULL);
	CHECK(x.pre_offset / SB == NSUB - 1);
	finish();
}

/* Overwrite mode: a wrap refusal (-EIO) while a reservation is held. */
static void seq_lost_overwrite(const struct grb_config *c, int k)
{
	struct grb_ctx held, x;
	unsigned int i;
	int ret;

	start(c, k);
	atomic_store(&clk, 0x2000);
	CHECK_EQ(reserve(&held, 8), 0);
	for (i = 0; i < 1000; i++) {
		ret = put(500, NULL);
		if (ret)
			break;
	}
	CHECK_EQ(ret, -EIO);
	CHECK(room() > 64);
	refused_at(500, 0x2100, -EIO);
	CHECK_EQ(put_at(8, 0x2110, &x), 0);
	CHECK_EQ(x.rflags, FULL);
	CHECK_EQ(put_at(8, 0x2120, &x), 0);
	CHECK_EQ(x.rflags, 0);
	commit(&held, 0);
	finish();
}

/* ---- 3. the edges of timestamp_bits -------------------------------------- */

static void seq_bits1(const struct grb_config *c, int k)
{
	struct grb_ctx x;

	start(c, k);
	CHECK_EQ(put_at(8, 0x10, &x), 0);
	CHECK_EQ(x.rflags, FULL);
	CHECK_EQ(put_at(8, 0x11, &x), 0);   /* bit 0 only: compressed */
	CHECK_EQ(x.rflags, 0);
	CHECK_EQ(put_at(8, 0x12, &x), 0);
	CHECK_EQ(x.rflags, FULL);
	CHECK_EQ(put_at(8, 0x12, &x), 0);
	CHECK_EQ(x.rflags, 0);
	CHECK_EQ(put_at(8, 0x13, &x), 0);
	CHECK_EQ(x.rflags, 0);
	finish();
}

static void seq_bits63(const struct grb_config *c, int k)
{
	const uint64_t top = UINT64_C(1) << 63;
	struct grb_ctx x;

	start(c, k);
	CHECK_EQ(put_at(8, 5, &x), 0);
	CHECK_EQ(x.rflags, FULL);
	CHECK_EQ(put_at(8, (UINT64_C(1) << 62) | 7, &x), 0);
	CHECK_EQ(x.rflags, 0);
	CHECK_EQ(put_at(8, top | 1, &x), 0);
	CHECK_EQ(x.rflags, FULL);
	CHECK_EQ(put_at(8, top | (UINT64_C(1) << 62), &x), 0);
	CHECK_EQ(x.rflags, 0);
	finish();
}

/* ---- 4. when buffer_end runs --------------------------------------------- */

/* Fill the open sub-buffer until less than `keep` bytes are left. */
static void fill_to(uint64_t keep)
{
	while (room() >= keep)
		CHECK_EQ(put(100, NULL), 0);
}

/* The events of one call, from index n: the end of seq s, then the begin
 * of s + 1, both in phase ph, on this thread. */
static void expect_end_then_begin(unsigned int n, uint64_t s, int ph)
{
	CHECK_EQ(atomic_load(&nev), n + 2);
	CHECK_EQ(ev(n)->end, 1);
	CHECK_U64(ev(n)->seq, s);
	CHECK_EQ(ev(n)->phase, ph);
	CHECK_EQ(ev(n)->handler, 0);
	CHECK_EQ(ev(n + 1)->end, 0);
	CHECK_U64(ev(n + 1)->seq, s + 1);
	CHECK_EQ(ev(n + 1)->phase, ph);
	/* One reservation ended s and began s + 1: one timestamp. */
	CHECK_U64(ev(n)->ts, ev(n + 1)->ts);
}

static void seq_end_timing(const struct grb_config *c, int k)
{
	struct grb_ctx x, y;
	unsigned int n;
	uint64_t r;

	start(c, k);
	atomic_store(&clk, 0x3000);
	/* A record that does not fit, nothing pending in sub-buffer 0:
	 * its padding commit delivers 0 inside grb_reserve(). */
	CHECK_EQ(put(8, NULL), 0);
	fill_to(300);
	n = atomic_load(&nev);
	CHECK_EQ(reserve(&x, 400), 0);
	expect_end_then_begin(n, 0, PH_RESERVE);
	commit(&x, 0);
	/* The same with something pending in 0: no buffer_end until the
	 * pending record's commit. */
	fill_to(300);
	CHECK_EQ(reserve(&y, 8), 0);
	n = atomic_load(&nev);
	CHECK_EQ(reserve(&x, 400), 0);
	CHECK_EQ(atomic_load(&nev), n + 1);
	CHECK_EQ(ev(n)->end, 0);
	CHECK_U64(ev(n)->seq, 2);
	commit(&x, 0);
	CHECK_EQ(atomic_load(&nev), n + 1);
	commit(&y, 0);
	CHECK_EQ(atomic_load(&nev), n + 2);
	CHECK_EQ(ev(n + 1)->end, 1);
	CHECK_U64(ev(n + 1)->seq, 1);
	CHECK_EQ(ev(n + 1)->phase, PH_COMMIT);
	/* An exact fill: no buffer_end in its reservation; its commit
	 * delivers. */
	r = room();
	n = atomic_load(&nev);
	CHECK_EQ(reserve(&x, r - pre_of(SB - r) - rh_len(cfg, 0) -
			 sizeof(struct ac_rec)), 0);
	CHECK_U64(x.end % SB, 0);
	CHECK_EQ(atomic_load(&nev), n);
	commit(&x, 0);
	CHECK_EQ(atomic_load(&nev), n + 1);
	CHECK_EQ(ev(n)->end, 1);
	CHECK_U64(ev(n)->seq, 2);
	CHECK_U64(ev(n)->data_size, SB);
	CHECK_EQ(ev(n)->phase, PH_COMMIT);
	/* grb_write_record(): the same two callbacks inside the one call,
	 * and the opener full. */
	CHECK_EQ(put(8, NULL), 0);
	fill_to(300);
	n = atomic_load(&nev);
	CHECK_EQ(write_rec(400, &x), 0);
	expect_end_then_begin(n, 3, PH_WRITE);
	if (cfg->timestamp_bits)
		CHECK_EQ(x.rflags, FULL);
	CHECK_U64(x.pre_offset, 4 * SB + HDR);
	finish();
}

/*
 * Per-CPU buffers: a commit made on another CPU (the thread migrated
 * between reserve and commit) completes the sub-buffer; buffer_end runs
 * once, in that commit.
 */
static void seq_migrated_commit(const struct grb_config *c, int k)
{
	struct grb_buf_stats st;
	struct grb_ctx held, x;
	unsigned int n;

	start(c, k);
	atomic_store(&clk, 0x4000);
	CHECK_EQ(reserve(&held, 8), 0);
	fill_to(300);
	CHECK_EQ(reserve(&x, 400), 0);     /* closes 0, opens 1 */
	commit(&x, 0);
	n = atomic_load(&nev);
	CHECK_EQ(atomic_load(&nend[0]), 0);
	pin(cpu1);
	commit(&held, 0);
	pin(cpu0);
	CHECK_EQ(atomic_load(&nev), n + 1);
	CHECK_EQ(ev(n)->end, 1);
	CHECK_U64(ev(n)->seq, 0);
	CHECK_EQ(ev(n)->phase, PH_COMMIT);
	CHECK_EQ(atomic_load(&nend[0]), 1);
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	if (grb_channel_write_path(chan, NULL) == GRB_WRITE_RSEQ)
		CHECK(st.remote_commits > 0);
	finish();
}

/* ---- 5. signal-handler writers at every writer-side hook ----------------- */

static const enum grb_hook_point points[] = {
	GRB_HOOK_RESERVE_LOADED, GRB_HOOK_RESERVE_DONE,
	GRB_HOOK_ENTER_PUSHED, GRB_HOOK_COMMIT_BEFORE,
	GRB_HOOK_COMMIT_AFTER, GRB_HOOK_SLOW_CHECKED, GRB_HOOK_END_OLD,
	GRB_HOOK_FLUSH_LOADED, GRB_HOOK_DELIVER_META,
	GRB_HOOK_DELIVER_PUBLISH, GRB_HOOK_DISCARD_CLOSED,
	GRB_HOOK_DELIVER_COUNTED,
};
#define NPOINTS (sizeof(points) / sizeof(points[0]))
static volatile sig_atomic_t armed_point = -1;
static unsigned int fired[NPOINTS];

static void hook(enum grb_hook_point point, void *arg)
{
	unsigned int i;

	(void)arg;
	if (in_handler || (int)point != armed_point)
		return;
	armed_point = -1;
	for (i = 0; i < NPOINTS && points[i] != point; i++)
		;
	fired[i]++;
	raise(SIGUSR1);
}

static uint32_t rnd_state = 1;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/*
 * Random writes, discards and flushes, each with one signal armed at a
 * hook point or in a clock read.  The reader drains after every step, so
 * nothing is lost: every record must be read back once, through the
 * checker.
 */
static void seq_signals(const struct grb_config *c, int k, unsigned int iters)
{
	struct grb_ctx x;
	unsigned int i, a;
	uint32_t r;
	int ret;

	start(c, k);
	clk_step = 37;
	atomic_store(&clk, 1u << 20);
	h_runs = 0;
	grb_test_set_hook(hook, NULL);
	for (i = 0; i < iters; i++) {
		r = rnd();
		/* One injection per step: a hook point, or the clock. */
		a = r % (NPOINTS + 1);
		if (a < NPOINTS)
			armed_point = (int)points[a];
		else
			clk_arm = 1 + (int)((r >> 4) % 2);
		switch ((r >> 8) % 10) {
		case 0: case 1: case 2: case 3:
			CHECK_EQ(put((r >> 12) % 400, NULL), 0);
			break;
		case 4: case 5:
			CHECK_EQ(write_rec((r >> 12) % 400, NULL), 0);
			break;
		case 6:
			CHECK_EQ(reserve(&x, (r >> 12) % 200), 0);
			abandon(&x);
			break;
		case 7:
			ret = flush(GRB_FLUSH_ACTIVE);
			CHECK(ret == 0 || ret == -ENODATA);
			break;
		case 8:
			CHECK_EQ(flush(GRB_FLUSH_EMPTY), 0);
			break;
		default:
			CHECK_EQ(put(1200 + (r >> 12) % 1500, NULL), 0);
			break;
		}
		armed_point = -1;
		clk_arm = 0;
		CHECK_EQ(drain(), -EAGAIN);
	}
	grb_test_set_hook(NULL, NULL);
	clk_step = 0;
	CHECK_U64(lost_now(), 0);
	finish();
}

/* ---- 6. two threads on one per-CPU buffer, one off its CPU --------------- */

#define RACE_RECORDS 20000

/* Writes with none of the test thread's bookkeeping (phase, tags). */
static void *racer(void *arg)
{
	int remote = *(int *)arg;
	struct grb_ctx ctx;
	unsigned int i;

	pin(remote ? cpu1 : cpu0);
	/* Off the buffer's CPU: every reserve and commit is remote. */
	if (remote)
		grb_test_set_cpu(cpu0);
	for (i = 0; i < RACE_RECORDS; i++) {
		ctx = (struct grb_ctx)GRB_CTX_INIT(sizeof(struct ac_rec) + 8 +
						   (i * 53) % 300, 1);
		if (grb_reserve(cfg, chan, &ctx) == 0) {
			fill_rec(cfg, &ctx, new_tag(), 0);
			grb_commit(cfg, &ctx);
		}
	}
	grb_test_set_cpu(-1);
	return NULL;
}

static void seq_race(const struct grb_config *c, int k)
{
	struct grb_buf_stats st;
	pthread_t th[2];
	int who[2] = { 0, 1 }, i;
	uint64_t s, last;

	start(c, k);
	count_tags = 0;         /* overwrite mode, no reader: pushed */
	clk_step = 1;
	rh_log = 0;
	for (i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, racer, &who[i]), 0);
	for (i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	rh_log = 1;
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	/* Every sub-buffer opened once and delivered once. */
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	last = (st.produced - 1) / SB;
	CHECK(last < MAXSEQ);
	for (s = 0; s <= last; s++) {
		CHECK_EQ(atomic_load(&nbegin[s]), 1);
		CHECK_EQ(atomic_load(&nend[s]), 1);
	}
	CHECK_U64(atomic_load(&end_records), st.written);
	if (grb_channel_write_path(chan, NULL) == GRB_WRITE_RSEQ)
		CHECK(st.remote_commits > 0);
	clk_step = 0;
	finish();
}

/* ---- 7. two commits that both complete a sub-buffer ---------------------- */

/*
 * On the per-CPU path a
 * commit on the buffer's CPU (a plain add in a critical section) and one
 * off it (an atomic add, then a membarrier) each add, then each load the
 * sum of both counters: when each add lands before the other's loads,
 * both see the lap complete, and only the claim keeps buffer_end to one
 * call.  Two threads on two CPUs commit the last two records of a
 * sub-buffer at the same instant, many times over.
 */
#define DUEL_ROUNDS 500

struct duelist {
	pthread_t th;
	int remote;
	sem_t go, done;
	int cmd;                /* 1: reserve, 2: commit at the barrier */
	struct grb_ctx ctx;
};
static struct duelist duel[2];
static _Atomic int duel_ready[2], duel_quit;

static void *duel_main(void *arg)
{
	struct duelist *d = arg;
	int me = d->remote, round = 0;
	volatile int spin;

	pin(me ? cpu1 : cpu0);
	if (me)
		grb_test_set_cpu(cpu0);
	for (;;) {
		sem_wait(&d->go);
		if (atomic_load(&duel_quit))
			break;
		if (d->cmd == 1) {
			d->ctx = (struct grb_ctx)GRB_CTX_INIT(
				sizeof(struct ac_rec) + 8, 1);
			CHECK_EQ(grb_reserve(cfg, chan, &d->ctx), 0);
			fill_rec(cfg, &d->ctx, new_tag(), 0);
		} else {
			/* A two-thread barrier: both spin, each on its own
			 * CPU, so the commits start together. */
			round++;
			atomic_store(&duel_ready[me], round);
			while (atomic_load(&duel_ready[!me]) < round)
				;
			/* The local add must land while the remote commit
			 * is in its membarrier: a delay that varies from
			 * round to round sweeps across that window. */
			for (spin = 0; !me && spin < (round % 32) * 40; spin++)
				;
			grb_commit(cfg, &d->ctx);
		}
		sem_post(&d->done);
	}
	grb_test_set_cpu(-1);
	return NULL;
}

static void duel_run(struct duelist *d, int cmd)
{
	d->cmd = cmd;
	sem_post(&d->go);
}

static void seq_double_complete(const struct grb_config *c, int k)
{
	struct grb_ctx a;
	unsigned int i, j;
	uint64_t s;

	start(c, k);
	count_tags = 0;
	rh_log = 0;
	atomic_store(&duel_quit, 0);
	for (i = 0; i < 2; i++) {
		duel[i].remote = (int)i;
		atomic_store(&duel_ready[i], 0);
		CHECK_EQ(sem_init(&duel[i].go, 0, 0), 0);
		CHECK_EQ(sem_init(&duel[i].done, 0, 0), 0);
		CHECK_EQ(pthread_create(&duel[i].th, NULL, duel_main,
					&duel[i]), 0);
	}
	for (i = 0; i < DUEL_ROUNDS; i++) {
		for (j = 0; j < 2; j++) {
			duel_run(&duel[j], 1);
			sem_wait(&duel[j].done);
		}
		a = duel[0].ctx;
		s = a.pre_offset / SB;
		CHECK(s < MAXSEQ);
		CHECK_U64(duel[1].ctx.pre_offset / SB, s);
		/* Close it: only the two records are left to commit. */
		CHECK_EQ(grb_buf_flush(buf, GRB_FLUSH_ACTIVE), 0);
		CHECK_EQ(atomic_load(&nend[s]), 0);
		for (j = 0; j < 2; j++)
			duel_run(&duel[j], 2);
		for (j = 0; j < 2; j++)
			sem_wait(&duel[j].done);
		CHECK_EQ(atomic_load(&nend[s]), 1);
	}
	atomic_store(&duel_quit, 1);
	for (i = 0; i < 2; i++) {
		sem_post(&duel[i].go);
		CHECK_EQ(pthread_join(duel[i].th, NULL), 0);
		sem_destroy(&duel[i].go);
		sem_destroy(&duel[i].done);
	}
	rh_log = 1;
	finish();
}

/* ---- 8. a dead writer's sub-buffer --------------------------------------- */

/* The writer process's reservation, in memory it shares with the test. */
struct dead_sync {
	_Atomic int ready;
	uint64_t pre_offset;
};

/*
 * A writer process dies between reserve and commit, in the middle of a
 * sub-buffer that later records fill and a flush closes.  Recovery (on
 * this thread) runs buffer_end once, with the committed records counted
 * and the dead one not.  With record_pad it pads exactly the dead slot
 * (at its start, at least the smallest slot long) and the records after
 * it are read; without, the sub-buffer ends where the dead slot begins
 * and the records after it are cut off, yet still counted in
 * grb_subbuf_info.records (and the reader's records).
 */
static void seq_dead_writer(const struct grb_config *c)
{
	struct dead_sync *ds;
	struct grb_recover_info info;
	struct grb_reader_subbuf sb;
	struct grb_buf_stats st;
	struct grb_record rec;
	struct grb_ctx d, x;
	unsigned int n, i;
	size_t off;
	pid_t pid;

	ds = mmap(NULL, sizeof(*ds), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(ds != MAP_FAILED);
	want_shared = 1;
	start(c, K_CHAN);
	want_shared = 0;
	CHECK_EQ(put_at(8, 0x5000, &x), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		atomic_store(&clk, 0x5010);
		if (reserve(&d, 40) == 0) {
			ds->pre_offset = d.pre_offset;
			atomic_store(&ds->ready, 1);
		}
		pause();
		_exit(0);
	}
	while (!atomic_load(&ds->ready))
		usleep(1000);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, NULL, 0), pid);
	CHECK_EQ(put_at(8, 0x5020, &x), 0);
	CHECK_EQ(put_at(8, 0x5030, &x), 0);
	CHECK_EQ(flush(GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(atomic_load(&nend[0]), 0);
	n = atomic_load(&nev);
	CHECK_EQ(grb_channel_recover(chan, 0, &info), 1);
	CHECK_U64(info.records, 1);
	CHECK_EQ(atomic_load(&nev), n + 1);
	CHECK_EQ(ev(n)->end, 1);
	CHECK_U64(ev(n)->seq, 0);
	CHECK_U64(ev(n)->records, 3);
	CHECK_EQ(grb_buf_get_stats(buf, &st), 0);
	CHECK_U64(st.lost_dead, 1);
	if (c->cb.record_pad) {
		CHECK_EQ(npad, 1);
		CHECK(pad_at == (const char *)ev(n)->header +
		      (ds->pre_offset & (SB - 1)));
		CHECK(pad_len >= 8 + sizeof(struct ac_rec));
		CHECK_U64(ev(n)->data_size, x.end);
		CHECK_EQ(drain(), -EAGAIN);
	} else {
		CHECK_EQ(npad, 0);
		CHECK_U64(ev(n)->data_size, ds->pre_offset);
		CHECK_EQ(grb_reader_get_next(buf), 0);
		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		CHECK_U64(sb.data_size, ds->pre_offset);
		CHECK_U64(sb.records, 3);
		for (off = HDR, i = 0; off < sb.data_size; i++, off = rec.next)
			CHECK_EQ(grb_reader_record(buf, off, &rec), 0);
		CHECK_EQ(i, 1);
		CHECK_EQ(grb_reader_put_next(buf), 0);
		for (i = 0; i < atomic_load(&next_tag); i++)
			committed[i] = 0;
	}
	finish();
	munmap(ds, sizeof(*ds));
}

/* ---- 9. grb_config.flags ------------------------------------------------ */

/*
 * grb_config_check() on the flag combinations; and a shared configuration
 * used by a private channel, whose writers then journal each reservation
 * in private memory, under the same signal-handler writers as section 5.
 */
static void seq_flags(void)
{
	struct grb_config c = c8d[K_CPU];

	c.flags = GRB_CONFIG_SYNC_PER_CPU;
	CHECK_EQ(grb_config_check(&c), 0);
	c.flags = GRB_CONFIG_SYNC_PER_CPU | GRB_CONFIG_SHARED;
	CHECK_EQ(grb_config_check(&c), 0);
	c.flags = 4;
	CHECK_EQ(grb_config_check(&c), -EINVAL);
	c.flags = GRB_CONFIG_SHARED | 0x80000000u;
	CHECK_EQ(grb_config_check(&c), -EINVAL);
	c.alloc = PCHAN;
	c.flags = GRB_CONFIG_SYNC_PER_CPU | GRB_CONFIG_SHARED;
	CHECK_EQ(grb_config_check(&c), -EINVAL);
	c.flags = GRB_CONFIG_SHARED;
	CHECK_EQ(grb_config_check(&c), 0);
	seq_signals(&csh_pad, K_CHAN, 1000);
	seq_end_timing(&csh_nopad, K_CHAN);
}

/* ---- main ---------------------------------------------------------------- */

static void pick_cpus(void)
{
	cpu_set_t set;
	int c;

	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (cpu0 < 0)
			cpu0 = c;
		else if (cpu1 < 0)
			cpu1 = c;
	}
	CHECK(cpu0 >= 0);
}

int main(void)
{
	struct sigaction sa;
	int k;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	pick_cpus();
	if (getenv("GRB_SYNC"))
		sync_env = strdup(getenv("GRB_SYNC"));
	for (k = 0; k < NKIND; k++) {
		seq_clock_order(&c8d[k], k);
		seq_clock_order(&c64o[k], k);
		seq_lost_discard(&c8d[k], k);
		seq_lost_overwrite(&c8o[k], k);
		seq_bits1(&c1d[k], k);
		seq_bits63(&c63o[k], k);
		seq_end_timing(&c8d[k], k);
		seq_end_timing(&c0d[k], k);
		seq_signals(&c8d[k], k, 3000);
		seq_signals(&c8o[k], k, 3000);
		seq_signals(&c64d[k], k, 1000);
		seq_signals(&c0o[k], k, 1000);
		if (k != K_CHAN && cpu1 >= 0) {
			seq_migrated_commit(&c64d[k], k);
			seq_race(&c8o[k], k);
			seq_double_complete(&c64o[k], k);
		}
		printf("test_callbacks_audit: %s passed\n", kind_name[k]);
	}
	seq_dead_writer(&csh_pad);
	seq_dead_writer(&csh_nopad);
	seq_flags();
	printf("test_callbacks_audit: dead writer, flags passed\n");
	for (k = 0; k < (int)NPOINTS; k++)
		printf("  %s: %u signals\n", grb_hook_name(points[k]),
		       fired[k]);
	printf("  clock_read: %u signals\n", clock_signals);
	printf("test_callbacks_audit: passed, %llu sub-buffers checked (%d "
	       "per-CPU runs on the rseq path%s)\n",
	       (unsigned long long)nsubbufs, rseq_runs,
	       cpu1 < 0 ? ", one CPU: no migration" : "");
	free(sync_env);
	return 0;
}
