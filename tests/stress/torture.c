/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/torture.c - the torture harness: every race-injection point
 * of the library (tests/hooks/grb_test_hooks.h) is filled, per a schedule drawn from
 * the seed, with a busy delay, a yield, a forced change of the CPU the
 * thread reports, or a real move to another CPU (sched_setaffinity(): on
 * the per-CPU path it aborts the section that follows, or makes the
 * commit that follows a remote one), while writers (which abandon one record in 32 with
 * grb_try_discard_reserve()), a reader and a flusher run every variant.
 * The tagged-record checker and grb_buf_validate() judge the end state.
 *
 * Usage: torture [SECONDS [SEED]].  A failure prints the seed, the variant
 * and the schedule; the same seed gives the same schedule.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "grb_test_hooks.h"
#include "stress_util.h"
#include "tclient.h"

#define NWRITERS 5
#define MAXSEQ (1u << 20)

enum action { ACT_NONE, ACT_SPIN, ACT_YIELD, ACT_MIGRATE, ACT_AFFINITY,
	      ACT_COUNT };

static const char *const action_names[ACT_COUNT] = {
	"none", "spin", "yield", "migrate", "affinity",
};

/* Per hook point: what to do and how often (1 in `every` passes). */
struct schedule {
	enum action act[GRB_HOOK_COUNT];
	unsigned int every[GRB_HOOK_COUNT];
};

static struct schedule sched_now;
static int ncpus;
static _Thread_local uint64_t rng;
static atomic_uint_fast64_t injected;

static void hook(enum grb_hook_point point, void *arg)
{
	const struct schedule *s = (const struct schedule *)arg;
	unsigned int i;

	if (s->act[point] == ACT_NONE || rng == 0 ||
	    stress_rand(&rng) % s->every[point] != 0)
		return;
	atomic_fetch_add_explicit(&injected, 1, memory_order_relaxed);
	switch (s->act[point]) {
	case ACT_SPIN:
		for (i = 0; i < 2000; i++)
			__asm__ __volatile__("" ::: "memory");
		break;
	case ACT_YIELD:
		sched_yield();
		break;
	case ACT_MIGRATE:
		grb_test_set_cpu((int)(stress_rand(&rng) % (unsigned)ncpus));
		break;
	case ACT_AFFINITY: {
		cpu_set_t set;

		/* A real move; the reported CPU follows it again. */
		grb_test_set_cpu(-1);
		CPU_ZERO(&set);
		CPU_SET((int)(stress_rand(&rng) % (unsigned)(ncpus - 1)),
			&set);
		sched_setaffinity(0, sizeof(set), &set);
		break;
	}
	default:
		break;
	}
}

static void draw_schedule(struct schedule *s, uint64_t seed, int variant)
{
	uint64_t r = stress_seed(seed, (uint64_t)variant, 77);
	int p;

	for (p = 0; p < GRB_HOOK_COUNT; p++) {
		s->act[p] = (enum action)(stress_rand(&r) % ACT_COUNT);
		s->every[p] = 1u << (stress_rand(&r) % 6);
	}
}

static void print_schedule(const struct schedule *s, FILE *f)
{
	int p;

	for (p = 0; p < GRB_HOOK_COUNT; p++)
		fprintf(f, "  %-16s %-7s 1/%u\n",
			grb_hook_name((enum grb_hook_point)p),
			action_names[s->act[p]], s->every[p]);
}

struct ctx {
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct tc_checker *tc;
	uint64_t seed;
	uint64_t deadline;
	atomic_int stop;
	atomic_int writers_left;
	uint64_t refused[NWRITERS];
};

struct warg {
	struct ctx *c;
	uint32_t id;
};

static void *writer(void *p)
{
	struct warg *w = (struct warg *)p;
	struct ctx *c = w->c;
	struct tc_pending pending;
	uint64_t r;
	uint32_t seq;

	rng = stress_seed(c->seed, w->id, 1);
	for (seq = 0; seq < MAXSEQ && !atomic_load(&c->stop); seq++) {
		r = stress_rand(&rng);
		if ((r & 31) == 0) {
			/* Abandon one record in 32: discard, or skip record. */
			if (tc_reserve(c->cfg, c->chan, w->id, seq,
				       (uint32_t)((r >> 8) % 120), &pending) == 0)
				tc_mark_abandoned(c->tc, tc_abandon(&pending));
			else
				c->refused[w->id]++;
		} else if (tc_write(c->cfg, c->chan, w->id, seq,
				    (uint32_t)((r >> 8) % 120)) == 0) {
			tc_mark_reserved(c->tc, w->id, seq);
		} else {
			c->refused[w->id]++;
		}
		if (stress_now_ns() > c->deadline)
			atomic_store(&c->stop, 1);
	}
	atomic_fetch_sub(&c->writers_left, 1);
	return NULL;
}

static void *flusher(void *p)
{
	struct ctx *c = (struct ctx *)p;
	unsigned int i = 0;

	rng = stress_seed(c->seed, 99, 2);
	while (atomic_load(&c->writers_left) > 0) {
		grb_channel_flush(c->chan, (i++ & 3) ? GRB_FLUSH_ACTIVE :
				  GRB_FLUSH_EMPTY);
		stress_sleep_ns(200000);
	}
	return NULL;
}

static int run(int v, uint64_t seed, double seconds)
{
	struct grb_channel_attr attr = { tc_variant_name(v), 4096,
					 (v & 1) ? 8 : 4, NULL };
	pthread_t tw[NWRITERS], tf;
	struct warg wa[NWRITERS];
	struct tc_checker tc;
	struct ctx c = { 0 };
	uint64_t refused = 0, errors;
	struct grb_buf_stats st;
	unsigned int i;

	draw_schedule(&sched_now, seed, v);
	if (grb_channel_create(tc_config(v), &attr, &c.chan) ||
	    tc_checker_init(&tc, c.chan, NWRITERS, MAXSEQ)) {
		fprintf(stderr, "torture: setup failed\n");
		return 1;
	}
	for (i = 0; i < grb_channel_nr_bufs(c.chan); i++)
		grb_reader_open(grb_channel_buf(c.chan, i));
	c.cfg = tc_config(v);
	c.tc = &tc;
	c.seed = seed;
	c.deadline = stress_now_ns() + (uint64_t)(seconds * 1e9);
	atomic_store(&c.writers_left, NWRITERS);
	grb_test_set_hook(hook, &sched_now);
	rng = stress_seed(seed, 100, 3);
	for (i = 0; i < NWRITERS; i++) {
		wa[i] = (struct warg){ &c, i };
		pthread_create(&tw[i], NULL, writer, &wa[i]);
	}
	pthread_create(&tf, NULL, flusher, &c);
	while (atomic_load(&c.writers_left) > 0)
		tc_drain_all(&tc, c.chan);
	for (i = 0; i < NWRITERS; i++) {
		pthread_join(tw[i], NULL);
		refused += c.refused[i];
	}
	pthread_join(tf, NULL);
	grb_test_set_hook(NULL, NULL);
	grb_channel_finalize(c.chan);
	tc_drain_all(&tc, c.chan);
	errors = tc_final_check(&tc, c.chan, refused);
	grb_channel_get_stats(c.chan, &st);
	printf("torture %-36s read %8llu refused %8llu remote %llu/%llu\n",
	       tc_variant_name(v), (unsigned long long)tc.records_read,
	       (unsigned long long)refused,
	       (unsigned long long)st.remote_commits,
	       (unsigned long long)st.remote_moves);
	if (errors || tc.records_read == 0) {
		fprintf(stderr, "FAILED: torture variant %s, seed %llu, %llu errors; schedule:\n",
			tc_variant_name(v), (unsigned long long)seed,
			(unsigned long long)errors);
		print_schedule(&sched_now, stderr);
		fprintf(stderr, "repeat: torture %.1f %llu\n", seconds * TV_COUNT,
			(unsigned long long)seed);
	}
	tc_checker_free(&tc);
	grb_channel_destroy(c.chan);
	return errors || tc.records_read == 0;
}

int main(int argc, char **argv)
{
	struct stress_args a;
	int v, failed = 0;

	stress_parse(argc, argv, &a);
	ncpus = stress_ncpus() + 1;     /* one past: an impossible CPU too */
	for (v = 0; v < TV_COUNT; v++)
		failed |= run(v, a.seed, a.seconds / TV_COUNT);
	printf("torture: %llu injections, %s\n",
	       (unsigned long long)atomic_load(&injected),
	       failed ? "FAILED" : "passed");
	if (atomic_load(&injected) == 0) {
		fprintf(stderr, "torture: no injection happened\n");
		return 1;
	}
	return failed;
}
