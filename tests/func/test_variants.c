/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_variants.c - every configuration variant, written by
 * several threads while a reader drains, then finalized and checked: each
 * successfully reserved record is read exactly once, intact and in order,
 * or counted as overwritten; every refusal is counted as lost.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "tclient.h"

#define NWRITERS 3
#define PER_WRITER 40000

struct warg {
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct tc_checker *tc;
	uint32_t id;
	uint64_t refused;
};

static atomic_int writers_left;

static void *writer(void *p)
{
	struct warg *w = (struct warg *)p;
	uint32_t seq;

	for (seq = 0; seq < PER_WRITER; seq++) {
		/* Sizes vary so records straddle pages and sub-buffer ends. */
		if (tc_write(w->cfg, w->chan, w->id, seq, (seq * 7) % 200) == 0)
			tc_mark_reserved(w->tc, w->id, seq);
		else
			w->refused++;
	}
	atomic_fetch_sub(&writers_left, 1);
	return NULL;
}

static void run_variant(int v, size_t subbuf_size, size_t num_subbuf)
{
	struct grb_channel_attr attr = {
		.name = tc_variant_name(v),
		.subbuf_size = subbuf_size,
		.num_subbuf = num_subbuf,
	};
	struct grb_channel *chan;
	struct tc_checker tc;
	struct warg args[NWRITERS];
	pthread_t tids[NWRITERS];
	struct grb_buf_stats st;
	uint64_t refused = 0;
	int i;

	CHECK_EQ(grb_channel_create(tc_config(v), &attr, &chan), 0);
	CHECK_EQ(tc_checker_init(&tc, chan, NWRITERS, PER_WRITER), 0);
	for (i = 0; i < (int)grb_channel_nr_bufs(chan); i++)
		CHECK_EQ(grb_reader_open(grb_channel_buf(chan, i)), 0);
	atomic_store(&writers_left, NWRITERS);
	for (i = 0; i < NWRITERS; i++) {
		args[i] = (struct warg){ tc_config(v), chan, &tc, (uint32_t)i, 0 };
		CHECK_EQ(pthread_create(&tids[i], NULL, writer, &args[i]), 0);
	}
	while (atomic_load(&writers_left) > 0)
		tc_drain_all(&tc, chan);
	for (i = 0; i < NWRITERS; i++) {
		pthread_join(tids[i], NULL);
		refused += args[i].refused;
	}
	CHECK_EQ(grb_channel_finalize(chan), 0);
	tc_drain_all(&tc, chan);
	grb_channel_get_stats(chan, &st);
	printf("%-36s sb %6zu x %2zu: written %7llu read %7llu overwritten %7llu"
	       " lost full %llu wrap %llu big %llu nest %llu\n",
	       tc_variant_name(v), subbuf_size, num_subbuf,
	       (unsigned long long)st.written, (unsigned long long)st.read,
	       (unsigned long long)st.overwritten,
	       (unsigned long long)st.lost_full, (unsigned long long)st.lost_wrap,
	       (unsigned long long)st.lost_big,
	       (unsigned long long)st.lost_nesting);
	CHECK_U64(tc_final_check(&tc, chan, refused), 0);
	CHECK(tc.records_read > 0);
	tc_checker_free(&tc);
	grb_channel_destroy(chan);
}

int main(void)
{
	int v;

	for (v = 0; v < TV_COUNT; v++) {
		run_variant(v, 4096, 4);       /* small: forces loss/overwrite */
		run_variant(v, 65536, 16);     /* roomy */
	}
	printf("test_variants: all variants passed\n");
	return 0;
}
