/* SPDX-License-Identifier: MIT */
/*
 * tests/common/chan_rig.h - a channel under test on a pinned thread: the
 * thread moved to a chosen CPU, a channel created and checked for the
 * write path it reports (expect_path.h), its reader opened on the
 * buffer of that CPU, and at the end every buffer validated before the
 * channel is destroyed.  Shared by tests/unit/test_writer_contract.c
 * and the grb_write_record() tests' rig (wr_rig.c).  Header-only, as
 * expect_path.h, which it builds on.
 */
#ifndef GRB_TESTS_CHAN_RIG_H
#define GRB_TESTS_CHAN_RIG_H

#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "expect_path.h"
#include "grb/grb.h"

struct rig {
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct grb_buf *buf;    /* the buffer of the rig's CPU (or the only one) */
	int rseq;               /* the channel took the per-CPU path */
	const char *name;
};

/* Move the calling thread to CPU @c, and check it is there. */
static inline void pin(int c)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
	CHECK_EQ(sched_getcpu(), c);
}

/*
 * Create a channel of @cfg with @nr_subbufs sub-buffers of @subbuf_size
 * bytes, under GRB_SYNC=atomic when @force_atomic, and check the path it
 * reports against what the environment allows; open the reader on the
 * buffer of CPU @cpu (per-CPU channels) or on the only one.
 */
static inline void chan_rig_open(struct rig *g, const struct grb_config *cfg,
				 const char *name, size_t subbuf_size,
				 size_t nr_subbufs, int force_atomic, int cpu)
{
	struct grb_channel_attr attr = { name, subbuf_size, nr_subbufs, NULL };

	memset(g, 0, sizeof(*g));
	g->rseq = test_create_checked(cfg, &attr, force_atomic, &g->chan);
	g->cfg = cfg;
	g->name = name;
	g->buf = grb_channel_buf(g->chan, cfg->alloc == GRB_ALLOC_PER_CPU ?
				 (unsigned int)cpu : 0);
	CHECK(g->buf != NULL);
	CHECK_EQ(grb_reader_open(g->buf), 0);
}

/* Validate every buffer of the channel (each fault named), destroy it. */
static inline void chan_rig_close(struct rig *g)
{
	char msg[160];
	unsigned int i;

	for (i = 0; i < grb_channel_nr_bufs(g->chan); i++) {
		msg[0] = '\0';
		if (grb_buf_validate(grb_channel_buf(g->chan, i), msg,
				     sizeof(msg))) {
			fprintf(stderr, "%s: buffer %u: %s\n", g->name, i, msg);
			CHECK(0);
		}
	}
	grb_channel_destroy(g->chan);
}

#endif /* GRB_TESTS_CHAN_RIG_H */
