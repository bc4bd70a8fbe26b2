/* SPDX-License-Identifier: MIT */
/*
 * src/internal.h - helpers shared by the out-of-line parts of the engine.
 */
#ifndef GRB_SRC_INTERNAL_H
#define GRB_SRC_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "grb/channel.h"
#include "grb/reader.h"
#include "grb/writer.h"

static inline size_t grb__subbuf_header_size(const struct grb_config *cfg)
{
	return cfg->cb.subbuf_header_size ? cfg->cb.subbuf_header_size() : 0;
}

/* Lap bits of the sub-buffer id for position pos. */
static inline uint64_t grb__id_lap(const struct grb_buf *b, uint64_t pos)
{
	return (pos >> b->buf_order) << GRB_ID_LAP_SHIFT;
}

/* True when cc_sb says the lap holding position pos has been delivered. */
static inline int grb__delivered(const struct grb_buf *b, uint64_t cc_sb,
				 uint64_t pos)
{
	return grb__cc_complete(b, cc_sb, pos);
}

static inline uint64_t grb__page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* src/switch.c */
int grb__subbuf_free(const struct grb_config *cfg, struct grb_buf *buf,
		     uint64_t pos);
void grb__begin_new(const struct grb_config *cfg, struct grb_buf *buf,
		    uint64_t pos, uint64_t phys, uint64_t ts);
void grb__commit_bytes(const struct grb_config *cfg, struct grb_buf *buf,
		       uint64_t pos, uint64_t bytes);
void grb__set_close(struct grb_buf *buf, uint64_t pos, uint64_t data_size,
		    uint64_t ts);
void grb__end_old(const struct grb_config *cfg, struct grb_buf *buf,
		  uint64_t old, uint64_t ts);

/* src/cpu.c */
int grb__possible_cpus(void);

#endif /* GRB_SRC_INTERNAL_H */
