/* SPDX-License-Identifier: MIT */
/*
 * clients/basic/basic_internal.h - the basic client's record format and
 * state, shared by its write side (basic.c) and read side (basic_read.c).
 * A client of the engine like any other: it uses only public headers.
 */
#ifndef GRB_SRC_BASIC_INTERNAL_H
#define GRB_SRC_BASIC_INTERNAL_H

#include <errno.h>

#include "grb/basic.h"
#include "grb/grb.h"

#define GRB_BASIC_FULL_TS  UINT32_C(0x80000000)
#define GRB_BASIC_LEN_MASK UINT32_C(0x7fffffff)
#define GRB_BASIC_ALIGN    4u
/* The length word of padding (basic_record_pad()). */
#define GRB_BASIC_PAD_WORD GRB_BASIC_LEN_MASK

/* Per-buffer read cursor, process-local. */
struct grb_basic_cursor {
	int held;              /* a sub-buffer is taken with get_next */
	int live;              /* data points at a live prefix (discard) */
	int damaged;           /* a record read live did not decode */
	uint64_t live_pos;     /* sub-buffer read live, or ~0 */
	const char *data;      /* the sub-buffer's bytes (held or live) */
	size_t next;           /* offset of the next record slot */
	size_t data_size;
	uint64_t prev_ts;      /* full timestamp of the sub-buffer's last
				  record read, 0 at its start */
	uint64_t consumed;     /* records consumed by this client */
	uint64_t dropped;      /* records removed by reset */
	uint64_t corrupt;      /* records skipped: their data did not decode */
	uint64_t taken;        /* records of the held (or live-read)
				  sub-buffer consumed, or counted corrupt */
};

struct grb_basic {
	const struct grb_config *cfg;
	struct grb_channel *chan;
	struct grb_basic_cursor *cursors;
	int external_reader;   /* grb_basic_release_readers() was called */
};

/* src/basic.c: one configuration per (alloc, mode, compression,
 * private or shared). */
const struct grb_config *grb__basic_config(enum grb_alloc alloc,
					   enum grb_mode mode, int compress,
					   int shared);

#endif /* GRB_SRC_BASIC_INTERNAL_H */
