/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_recover_audit.c - recovery (grb/recover.h) against the
 * interleavings of other processes that test_recover*.c leave to chance:
 *  - the record count of an ambiguous union: a stale entry that names a
 *    committed record and part of a dead one (their pieces overlap) still
 *    has the record slot it takes counted, as grb/recover.h says, and a
 *    slot a longer stale entry covers from an earlier start is not;
 *  - a writer killed inside grb_try_discard_reserve();
 *  - a live writer that commits into the stuck sub-buffer, and frees its
 *    entry, while the recoverer reads the journal: nothing is repaired
 *    from the commit counter loaded before it (a dead writer's committed
 *    record was padded over, the CAS that then failed coming too late);
 *  - the recoverer's freeing of a dead slot's entries, and its pruning
 *    of a TENTATIVE entry that cannot have done its CAS, against a thread
 *    that claims the slot meanwhile: an entry is freed only as the
 *    recoverer loaded it, never after the claimant wrote its own there.
 *
 * The interleavings are forced without sleeping: a page of the journal
 * is made inaccessible and the recoverer's first access to it faults; the
 * SIGSEGV handler then does what the other process would have done
 * (commit, or claim and journal), gives the page back and returns, and
 * the recoverer's load runs again and sees it.  Linked with the hooks
 * library (tests/hooks): writer processes are killed at hook points.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/grb.h"
#include "grb/impl/journal.h"
#include "grb/recover.h"
#include "grb/shm.h"
#include "grb_test_hooks.h"

#define CLIENT "raudit"
#define SB 4096
#define REC 32                  /* the smallest record: tag, then filler */

/* Recovery's padding: the dead bytes become 0xaa. */
static void pad_aa(const struct grb_config *cfg, void *at, size_t len)
{
	(void)cfg;
	memset(at, 0xaa, len);
}

/*
 * Raw records (no sub-buffer header, no clock), shared, one buffer.  No
 * record_decode: where two sets of dead pieces add up to what is
 * missing, recovery cannot choose and damages their union.
 */
static const struct grb_config raw_pad = {
	GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD, 0, { .record_pad = pad_aa },
	GRB_CONFIG_SHARED,
};

static struct grb_channel *new_channel(const char *name)
{
	struct grb_channel_attr attr = { name, SB, 4, NULL };
	struct grb_shm_attr mem = { CLIENT, NULL, -1 };
	struct grb_channel *chan;

	CHECK_EQ(grb_channel_create_shared(&raw_pad, &attr, &mem, &chan), 0);
	CHECK_EQ(grb_reader_open(grb_channel_buf(chan, 0)), 0);
	return chan;
}

static int reserve(struct grb_channel *chan, struct grb_ctx *ctx,
		   uint64_t tag, size_t len)
{
	int ret;

	grb_ctx_init(ctx, len, 1);
	ret = grb_reserve(&raw_pad, chan, ctx);
	if (ret)
		return ret;
	grb_write(&raw_pad, ctx, &tag, sizeof(tag));
	grb_write_fill(&raw_pad, ctx, (int)(tag & 0xff), len - sizeof(tag));
	return 0;
}

/* One raw record of @len bytes: the tag, then its low byte. */
static void put(struct grb_channel *chan, uint64_t tag, size_t len)
{
	struct grb_ctx ctx;

	CHECK_EQ(reserve(chan, &ctx, tag, len), 0);
	grb_commit(&raw_pad, &ctx);
}

static enum grb_hook_point kill_at;

static void kill_hook(enum grb_hook_point point, void *arg)
{
	(void)arg;
	if (point == kill_at)
		raise(SIGKILL);
}

/* A writer process that dies at @point of its one record of @len bytes
 * (its journal slot is the first free one). */
static void writer_dies(struct grb_channel *chan, enum grb_hook_point point,
			uint64_t tag, size_t len)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		kill_at = point;
		grb_test_set_hook(kill_hook, NULL);
		put(chan, tag, len);
		_exit(3);               /* the hook did not kill it */
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* A pid no process has: a child's, reaped. */
static pid_t dead_pid(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(0);
	CHECK_EQ(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* The held sub-buffer's @len bytes at @off are record @tag, whole. */
static void expect_record(struct grb_buf *b, size_t off, uint64_t tag,
			  size_t len)
{
	unsigned char bytes[SB];
	uint64_t t;
	size_t i;

	CHECK_EQ(grb_reader_read(b, off, bytes, len), 0);
	memcpy(&t, bytes, sizeof(t));
	CHECK_U64(t, tag);
	for (i = sizeof(t); i < len; i++)
		CHECK_EQ(bytes[i], tag & 0xff);
}

/* The held sub-buffer's @len bytes at @off are recovery's padding. */
static void expect_padding(struct grb_buf *b, size_t off, size_t len)
{
	unsigned char bytes[SB];
	size_t i;

	CHECK_EQ(grb_reader_read(b, off, bytes, len), 0);
	for (i = 0; i < len; i++)
		CHECK_EQ(bytes[i], 0xaa);
}

static void expect_info(const struct grb_recover_info *in, uint64_t subbufs,
			uint64_t records, uint64_t bytes, uint64_t ambiguous,
			uint64_t waiting)
{
	CHECK_U64(in->subbufs, subbufs);
	CHECK_U64(in->records, records);
	CHECK_U64(in->bytes, bytes);
	CHECK_U64(in->ambiguous, ambiguous);
	CHECK_U64(in->waiting, waiting);
}

/* ---- faults on the journal's pages --------------------------------------- */

static long page;

static char *page_of(const void *p)
{
	return (char *)((uintptr_t)p & ~((uintptr_t)page - 1));
}

/*
 * A chain of faults: stage i's page is inaccessible until the first
 * access to it, when the handler makes it accessible again and runs the
 * stage's action (which may take the next stage's page away).
 */
struct stage {
	char *at;                       /* the page, inaccessible */
	size_t len;                     /* bytes from it */
	void (*act)(void);
};

static struct stage stages[2];
static volatile sig_atomic_t nr_stages, cur_stage;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	char *addr = (char *)si->si_addr;
	struct stage *s;

	(void)uc;
	s = cur_stage < nr_stages ? &stages[cur_stage] : NULL;
	if (!s || addr < s->at || addr >= s->at + s->len) {
		/* Not ours: the access faults again, and kills. */
		signal(sig, SIG_DFL);
		return;
	}
	CHECK_EQ(mprotect(s->at, s->len, PROT_READ | PROT_WRITE), 0);
	cur_stage++;
	s->act();
}

static void arm(unsigned int n)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGSEGV, &sa, NULL), 0);
	nr_stages = (sig_atomic_t)n;
	cur_stage = 0;
	CHECK_EQ(mprotect(stages[0].at, stages[0].len, PROT_NONE), 0);
}

/* Every stage ran; the handler is the default one again. */
static void disarm(void)
{
	CHECK_EQ(cur_stage, nr_stages);
	signal(SIGSEGV, SIG_DFL);
}

static void take_page(char *at, size_t len)
{
	CHECK_EQ(mprotect(at, len, PROT_NONE), 0);
}

/* Mark slot @s as the main thread's of process @pid (dead, started at
 * tick 1), with no entry in use. */
static void forge_dead_slot(struct grb_jslot *s, pid_t pid)
{
	uint64_t owner = (uint64_t)(uint32_t)pid << 32 | (uint32_t)pid;
	unsigned int k;

	for (k = 0; k < GRB_JOURNAL_ENTRIES; k++)
		grb_store_relaxed(&s->e[k].word, 0);
	grb_store_relaxed(&s->start, 1);
	grb_store_relaxed(&s->owner, owner);
}

/* ---- the record count of an ambiguous union ------------------------------ */

/*
 * grb/recover.h: "the union is damaged, which may take a committed
 * record with it (counted in `ambiguous`; a record slot so taken is
 * counted in `records` and lost_dead as the dead ones are)".
 *
 * Tag 1 [0, 32); a writer's CAS took [32, 64) and it died; another
 * loaded the position 64, journaled a record of 64 bytes, [64, 128), and
 * died before its CAS; tag 2 took [64, 96) and was committed; a third
 * writer's CAS took [96, 128) and it died; tag 3 [128, 160).  Two sets
 * add up to the 64 bytes missing: the two dead records, or the stale
 * entry alone.  The union [32, 128) is padded: two dead records and tag
 * 2's slot, three records.  The stale entry's piece overlaps both tag 2
 * and the second dead record, so the most pairwise disjoint record
 * pieces are two: counting those left tag 2's slot out.
 */
static void test_taken_slot_counted(void)
{
	struct grb_recover_info info;
	struct grb_reader_subbuf sb;
	struct grb_channel *chan = new_channel("taken");
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_stats st;

	put(chan, 1, REC);
	writer_dies(chan, GRB_HOOK_RESERVE_DONE, 90, REC);
	writer_dies(chan, GRB_HOOK_RESERVE_LOADED, 91, 2 * REC);
	put(chan, 2, REC);
	writer_dies(chan, GRB_HOOK_RESERVE_DONE, 92, REC);
	put(chan, 3, REC);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);

	CHECK_EQ(grb_channel_recover(chan, 0, &info), 1);
	expect_info(&info, 1, 3, 3 * REC, 1, 0);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 3);
	CHECK_U64(st.recovered, 1);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.data_size, 5 * REC);
	expect_record(b, 0, 1, REC);
	expect_padding(b, REC, 3 * REC);
	expect_record(b, 4 * REC, 3, REC);
	CHECK_EQ(grb_reader_put_next(b), 0);
	grb_channel_destroy(chan);
}

/*
 * The other half of that sentence: "one a longer dead entry covers from
 * an earlier start is lost uncounted".  Tag 1 [0, 32); a writer
 * journaled [32, 96) and died before its CAS; one whose CAS took
 * [32, 64) died; tag 2 [64, 96); a writer journaled [96, 128) and died
 * before its CAS; one whose CAS took [96, 160) died; tag 3 [160, 192).
 * The dead records and the two stale entries each add up to the 96
 * bytes missing: the union [32, 160) is padded, tag 2 with it, and the
 * record pieces begin at two places: two records, not three.
 */
static void test_covered_slot(void)
{
	struct grb_recover_info info;
	struct grb_reader_subbuf sb;
	struct grb_channel *chan = new_channel("covered");
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_stats st;

	put(chan, 1, REC);
	writer_dies(chan, GRB_HOOK_RESERVE_LOADED, 90, 2 * REC);
	writer_dies(chan, GRB_HOOK_RESERVE_DONE, 91, REC);
	put(chan, 2, REC);
	writer_dies(chan, GRB_HOOK_RESERVE_LOADED, 92, REC);
	writer_dies(chan, GRB_HOOK_RESERVE_DONE, 93, 2 * REC);
	put(chan, 3, REC);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);

	CHECK_EQ(grb_channel_recover(chan, 0, &info), 1);
	expect_info(&info, 1, 2, 4 * REC, 1, 0);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 2);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.data_size, 6 * REC);
	expect_record(b, 0, 1, REC);
	expect_padding(b, REC, 4 * REC);
	expect_record(b, 5 * REC, 3, REC);
	CHECK_EQ(grb_reader_put_next(b), 0);
	grb_channel_destroy(chan);
}

/* ---- a discard that dies ------------------------------------------------ */

/*
 * docs/design.md section 17: "Discards are journaled but no kill test
 * discards."  A writer that reserved [32, 64) and died inside
 * grb_try_discard_reserve(), after its CAS closed the sub-buffer (the
 * position at 4096) and before its commit: its entry is OWNED, with the
 * close in xend.  Recovery ends the sub-buffer where the slot begins and
 * counts the slot once, in lost_dead (the discard was not counted: it
 * died first); the next record opens the next sub-buffer.
 */
static void test_discard_dies(void)
{
	struct grb_channel *chan = new_channel("discard");
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_recover_info info;
	struct grb_reader_subbuf sb;
	struct grb_buf_stats st;
	struct grb_ctx ctx;
	pid_t pid;
	int status;

	put(chan, 1, REC);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		kill_at = GRB_HOOK_DISCARD_CLOSED;
		grb_test_set_hook(kill_hook, NULL);
		if (reserve(chan, &ctx, 9, REC) == 0)
			grb_try_discard_reserve(&raw_pad, &ctx);
		_exit(3);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	CHECK_EQ(grb_buf_recover(b, 0, &info), 1);
	expect_info(&info, 1, 1, SB - REC, 0, 0);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 1);
	CHECK_U64(st.discarded, 0);
	CHECK_U64(st.written, 1);
	CHECK_U64(st.recovered, 1);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.data_size, REC);
	CHECK_U64(sb.records, 1);
	expect_record(b, 0, 1, REC);
	CHECK_EQ(grb_reader_put_next(b), 0);

	/* The buffer goes on: the next record is the next sub-buffer's. */
	put(chan, 2, REC);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.data_size, REC);
	expect_record(b, 0, 2, REC);
	CHECK_EQ(grb_reader_put_next(b), 0);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.read, st.written);
	grb_channel_destroy(chan);
}

/*
 * Killed later in the discard, after its entry says COMMITTING and
 * before its commit: the slot is the recoverer's lost_dead, and must not
 * also be counted discarded (the discard counts itself once committed).
 */
static void test_discard_dies_committing(void)
{
	struct grb_channel *chan = new_channel("discard2");
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_recover_info info;
	struct grb_buf_stats st;
	struct grb_ctx ctx;
	pid_t pid;
	int status;

	put(chan, 1, REC);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		kill_at = GRB_HOOK_DISCARD_COMMITTING;
		grb_test_set_hook(kill_hook, NULL);
		if (reserve(chan, &ctx, 9, REC) == 0)
			grb_try_discard_reserve(&raw_pad, &ctx);
		_exit(3);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK_EQ(grb_buf_recover(b, 0, &info), 1);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 1);
	CHECK_U64(st.discarded, 0);
	CHECK_U64(info.records, 1);
	grb_channel_destroy(chan);
}

/* ---- a live commit during the journal scan ------------------------------- */

struct holder {
	struct grb_channel *chan;
	struct grb_ctx ctx;
	_Atomic int held, go, done;
};

static struct holder hold;

/* A live writer thread: reserves, waits for the word, commits. */
static void *holder_main(void *arg)
{
	struct holder *h = (struct holder *)arg;

	CHECK_EQ(reserve(h->chan, &h->ctx, 4, REC), 0);
	atomic_store(&h->held, 1);
	while (!atomic_load(&h->go))
		sched_yield();
	grb_commit(&raw_pad, &h->ctx);
	atomic_store(&h->done, 1);
	return NULL;
}

/* In the recoverer, mid-scan: the live writer commits and frees. */
static void holder_commits(void)
{
	atomic_store(&hold.go, 1);
	while (!atomic_load(&hold.done))
		;
}

/*
 * The journal's pages that hold nothing else the recoverer reads before
 * its scan (the buffer's lines, the slot's counters, the ids and the
 * descriptions lie before the journal): from the first page boundary
 * after the journal's start to its end.  Return: the first slot whose
 * entries lie there.
 */
static unsigned int journal_tail(struct grb_buf *b, char **at, size_t *len)
{
	char *start = (char *)b->journal, *end;
	unsigned int i;

	end = (char *)&b->journal[b->nr_jslots];
	*at = page_of(start) == start ? start : page_of(start) + page;
	*len = (size_t)(page_of(end - 1) + page - *at);
	CHECK((char *)b->data >= *at + *len);
	for (i = 0; (char *)&b->journal[i + 1] <= *at; i++)
		;
	return i;
}

/*
 * grb/recover.h: "A sub-buffer in which a live thread holds a
 * reservation is left alone ... recovery never races with a live
 * writer"; grb/impl/journal.h: the recoverer "loads it again after the
 * journal, before it writes anything into the sub-buffer".
 *
 * Dead writer 1's CAS took [0, 64) and it died; dead writer 2 committed
 * [64, 96) and died before freeing its entry (COMMITTING: its commit
 * may or may not have happened); a live thread holds [96, 128);
 * flushed.  The recoverer loads the commit counter (64 + 32 bytes
 * missing), and while it reads the journal the live thread commits and
 * frees its entry.  The two dead entries then add up to the 96 bytes the
 * counter said were missing: the recoverer padded the committed record
 * of dead writer 2 and only then found, by its failed CAS, that the
 * counter had moved; the next call delivered the sub-buffer with that
 * record gone, uncounted.
 */
static void test_commit_during_scan(void)
{
	struct grb_recover_info info;
	struct grb_reader_subbuf sb;
	struct grb_channel *chan = new_channel("midscan");
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_buf_stats st;
	unsigned int i, first;
	pthread_t th;
	pid_t dead;
	size_t len;
	char *at;

	/* The slots before the journal's tail are a dead process's: the
	 * writers below take slots in the tail, which faults. */
	first = journal_tail(b, &at, &len);
	dead = dead_pid();
	for (i = 0; i < first; i++)
		forge_dead_slot(&b->journal[i], dead);

	writer_dies(chan, GRB_HOOK_RESERVE_DONE, 90, 2 * REC);
	writer_dies(chan, GRB_HOOK_COMMIT_AFTER, 2, REC);
	memset(&hold, 0, sizeof(hold));
	hold.chan = chan;
	CHECK_EQ(pthread_create(&th, NULL, holder_main, &hold), 0);
	while (!atomic_load(&hold.held))
		sched_yield();
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);

	stages[0].at = at;
	stages[0].len = len;
	stages[0].act = holder_commits;
	arm(1);
	CHECK_EQ(grb_buf_recover(b, 0, &info), 0);
	disarm();
	CHECK_EQ(pthread_join(th, NULL), 0);
	expect_info(&info, 0, 0, 0, 0, 1);

	/* Only the dead record is missing now. */
	CHECK_EQ(grb_buf_recover(b, 0, &info), 1);
	expect_info(&info, 1, 1, 2 * REC, 0, 0);
	CHECK_EQ(grb_channel_get_stats(chan, &st), 0);
	CHECK_U64(st.lost_dead, 1);
	CHECK_U64(st.written, 2);
	CHECK_EQ(grb_reader_get_next(b), 0);
	CHECK_EQ(grb_reader_held(b, &sb), 0);
	CHECK_U64(sb.data_size, 4 * REC);
	CHECK_U64(sb.records, 2);
	expect_padding(b, 0, 2 * REC);
	expect_record(b, 2 * REC, 2, REC);
	expect_record(b, 3 * REC, 4, REC);
	CHECK_EQ(grb_reader_put_next(b), 0);
	grb_channel_destroy(chan);
}

/* ---- freeing a dead slot's entries while it is claimed ------------------- */

static struct grb_jslot *claimed;
static unsigned int claimed_k;
static char *head_page;
static uint64_t claim_pos;

/* Fault 1, on the entry: the slot's head page goes next. */
static void take_head(void)
{
	take_page(head_page, (size_t)page);
}

/*
 * Fault 2, on the slot's start (after the entry and its range were
 * loaded, before the entry is freed): a thread of this live process
 * claims the idle slot (its owner then had one entry CLAIMING, as a
 * writer killed inside grb__journal_take() leaves it) and journals the
 * reservation it is about to make at the write position.
 */
static void claim_slot(void)
{
	struct grb_jentry *e = &claimed->e[claimed_k];
	uint64_t me = (uint64_t)(uint32_t)getpid() << 32 |
		(uint32_t)syscall(SYS_gettid);

	grb_store_relaxed(&claimed->owner, me);
	grb_store_relaxed(&e->begin, claim_pos);
	grb_store_relaxed(&e->end, claim_pos + REC);
	grb_store_relaxed(&e->xend, 0);
	grb_store_relaxed(&e->word, grb__jword(GRB_J_TENTATIVE, claim_pos));
}

/*
 * A slot from @from on whose head (owner, start) and one of its entries
 * lie on two pages, the entries before it on the first: its index, the
 * entry's in @k.  Return: -1 if the journal has none.
 */
static int straddling_slot(struct grb_buf *b, unsigned int from,
			   unsigned int *k)
{
	const size_t elen = sizeof(struct grb_jentry);
	unsigned int i, j;
	char *head, *w;

	for (i = from; i < b->nr_jslots; i++) {
		head = (char *)&b->journal[i];
		if (page_of(head) != page_of(head + 15))
			continue;
		for (j = 0; j < GRB_JOURNAL_ENTRIES; j++) {
			w = (char *)&b->journal[i].e[j];
			if (page_of(w) == page_of(head))
				continue;
			if (page_of(w) != page_of(w + elen - 1))
				break;
			*k = j;
			return (int)i;
		}
	}
	return -1;
}

/*
 * The recoverer frees the entries a dead process left before the write
 * position, so that its slot can be claimed again (grb/recover.h: "the
 * slot of a thread that exited is claimed again").  It loads the slot's
 * owner once, then each entry; a writer killed inside
 * grb__journal_take() left one CLAIMING, which does not keep the slot
 * from being claimed (src/journal.c slot_idle()).  When a thread claims
 * it after the recoverer loaded its owner, and journals its reservation
 * in that entry after the recoverer loaded it, the recoverer must not
 * store NONE over it: the live thread's reservation would have no entry,
 * and its sub-buffer could be recovered under it.
 */
static void test_free_vs_claim(void)
{
	struct grb_channel *chan = new_channel("claim");
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_recover_info info;
	struct grb_jentry *e;
	unsigned int k;
	int i;

	/* Not this thread's slot (the first). */
	i = straddling_slot(b, 1, &k);
	CHECK(i >= 0);
	put(chan, 1, REC);
	claim_pos = REC;
	claimed = &b->journal[i];
	claimed_k = k;
	forge_dead_slot(claimed, dead_pid());
	e = &claimed->e[k];
	grb_store_relaxed(&e->end, 0);
	grb_store_relaxed(&e->xend, 0);
	grb_store_relaxed(&e->word, grb__jword(GRB_J_CLAIMING, 0));
	head_page = page_of(claimed);

	stages[0].at = page_of(e);
	stages[0].len = (size_t)page;
	stages[0].act = take_head;
	stages[1].at = head_page;
	stages[1].len = (size_t)page;
	stages[1].act = claim_slot;
	arm(2);
	CHECK_EQ(grb_buf_recover(b, 0, &info), 0);
	disarm();
	expect_info(&info, 0, 0, 0, 0, 0);
	CHECK_U64(grb_load_relaxed(&e->word),
		  grb__jword(GRB_J_TENTATIVE, claim_pos));

	/* Its owner alive, the entry stays, however often it is tried. */
	CHECK_EQ(grb_buf_recover(b, 0, &info), 0);
	CHECK_U64(grb_load_relaxed(&e->word),
		  grb__jword(GRB_J_TENTATIVE, claim_pos));
	grb_store_relaxed(&e->word, 0);
	grb_store_relaxed(&claimed->owner, 0);
	grb_channel_destroy(chan);
}

/* Fault 1, on the journal: the write position's page goes next. */
static void take_offset_page(void)
{
	take_page(head_page, (size_t)page);
}

/* Fault 2, on the recoverer's load of the write position: the thread that
 * claimed the slot, its first CAS failed, journals its retry. */
static void journal_retry(void)
{
	struct grb_jentry *e = &claimed->e[claimed_k];

	grb_store_relaxed(&e->begin, claim_pos);
	grb_store_relaxed(&e->end, claim_pos + REC);
	grb_store_relaxed(&e->word, grb__jword(GRB_J_TENTATIVE, claim_pos));
}

/*
 * The other place the recoverer frees an entry: a TENTATIVE entry of a
 * dead owner whose CAS would move the position past where it is (it
 * cannot have happened).  Judged by the slot's owner as loaded before
 * its entries, the entry may be a thread's that claimed the slot since:
 * its first CAS, from a position it loaded late, fails, and it journals
 * its retry in the same entry.  The recoverer, between its load of the
 * position and its store, must not put NONE over the retry, which will
 * succeed.  Here a dead writer's record leaves the sub-buffer stuck, so
 * that the recoverer reads the journal, and the claimant's first entry
 * names [100, 4096 + 64).
 */
static void test_prune_vs_claim(void)
{
	struct grb_channel *chan = new_channel("prune");
	struct grb_buf *b = grb_channel_buf(chan, 0);
	struct grb_recover_info info;
	struct grb_jentry *e;
	unsigned int first;
	size_t len;
	char *at;

	first = journal_tail(b, &at, &len);
	CHECK(first + 8 < b->nr_jslots);
	/* Not on the position's page, as journal_tail() checks. */
	CHECK(page_of(&b->shm->offset) < at);
	writer_dies(chan, GRB_HOOK_RESERVE_DONE, 90, REC);
	put(chan, 2, REC);
	CHECK_EQ(grb_channel_flush(chan, GRB_FLUSH_ACTIVE), 0);
	claim_pos = SB;
	claimed = &b->journal[first + 8];
	claimed_k = 0;
	forge_dead_slot(claimed, dead_pid());
	e = &claimed->e[0];
	grb_store_relaxed(&e->begin, 100);
	grb_store_relaxed(&e->end, SB + 2 * REC);
	grb_store_relaxed(&e->xend, 0);
	grb_store_relaxed(&e->ts, 0);
	grb_store_relaxed(&e->word, grb__jword(GRB_J_TENTATIVE, 100));
	head_page = page_of(&b->shm->offset);

	stages[0].at = at;
	stages[0].len = len;
	stages[0].act = take_offset_page;
	stages[1].at = head_page;
	stages[1].len = (size_t)page;
	stages[1].act = journal_retry;
	arm(2);
	CHECK_EQ(grb_buf_recover(b, 0, &info), 1);
	disarm();
	expect_info(&info, 1, 1, REC, 0, 0);
	CHECK_U64(grb_load_relaxed(&e->word),
		  grb__jword(GRB_J_TENTATIVE, claim_pos));
	grb_store_relaxed(&e->word, 0);
	grb_store_relaxed(&claimed->owner, 0);
	grb_channel_destroy(chan);
}

int main(void)
{
	page = sysconf(_SC_PAGESIZE);
	CHECK(page > 0);
	test_taken_slot_counted();
	printf("test_recover_audit: an ambiguous union counts the slot a "
	       "stale entry takes\n");
	test_covered_slot();
	printf("test_recover_audit: a slot a longer stale entry covers is "
	       "not counted\n");
	test_discard_dies();
	printf("test_recover_audit: a writer killed inside a discard\n");
	test_discard_dies_committing();
	printf("test_recover_audit: a writer killed before its discard's "
	       "commit is lost_dead, not discarded too\n");
	test_commit_during_scan();
	printf("test_recover_audit: a live commit during the journal scan "
	       "repairs nothing\n");
	test_free_vs_claim();
	printf("test_recover_audit: a dead slot claimed while its entries "
	       "are freed keeps the claimant's entry\n");
	test_prune_vs_claim();
	printf("test_recover_audit: a claimant's retry outlives the pruning "
	       "of its first entry\n");
	printf("test_recover_audit: passed\n");
	return 0;
}
