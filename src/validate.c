/* SPDX-License-Identifier: MIT */
/*
 * src/validate.c - the whole-buffer invariant checker (grb/validate.h).
 *
 * The buffer is quiescent by contract, so every load is relaxed: nothing
 * is being published while the checker reads.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "grb/validate.h"
#include "engine.h"

static int broken(char *msg, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (msg && cap) {
		va_start(ap, fmt);
		vsnprintf(msg, cap, fmt, ap);
		va_end(ap);
	}
	return -EUCLEAN;
}

/* Bytes slot i must have committed, given the write position. */
static uint64_t expected_bytes(const struct grb_buf *buf, uint64_t i,
			       uint64_t offset)
{
	uint64_t produced = grb__subbuf_trunc(buf, offset);
	uint64_t start = i << buf->subbuf_order, closed = 0;

	if (produced > start)
		closed = (produced - start + buf->buf_size - 1) >> buf->buf_order;
	if (grb__subbuf_offset(buf, offset) && grb__slot(buf, offset) == i)
		return closed * buf->subbuf_size +
			grb__subbuf_offset(buf, offset);
	return closed * buf->subbuf_size;
}

static int check_ids(const struct grb_buf *buf, uint64_t offset, char *msg,
		     size_t cap)
{
	const struct grb_buf_shm *shm = buf->shm;
	/* The process's own copies of the geometry (the mapping may be
	 * shared with a process that damaged it: grb/shm.h). */
	uint64_t n = buf->buf_size >> buf->subbuf_order, i, id, idx, reader;
	uint64_t produced = grb__subbuf_trunc(buf, offset), lap;
	unsigned char *used = calloc(buf->nr_phys, 1);
	int ret = 0;

	/* Not a broken invariant: the ids are left unjudged. */
	if (!used)
		return -ENOMEM;
	/* In overwrite mode the reader owns one physical sub-buffer: the one
	 * pinned by get_subbuf, else its spare. */
	if (buf->chan->cfg->mode == GRB_MODE_OVERWRITE) {
		reader = grb__ow_reader_phys(shm);
		if (reader >= buf->nr_phys) {
			ret = broken(msg, cap, "reader holds index %llu",
				     (unsigned long long)reader);
			goto out;
		}
		used[reader] = 1;
	}
	for (i = 0; i < n && !ret; i++) {
		id = grb_load_relaxed(&buf->ids[i]);
		idx = id & GRB_ID_INDEX_MASK;
		if (buf->chan->cfg->mode == GRB_MODE_DISCARD && id != i)
			ret = broken(msg, cap, "discard slot %llu has id %llx",
				     (unsigned long long)i,
				     (unsigned long long)id);
		else if (idx >= buf->nr_phys || used[idx]++)
			ret = broken(msg, cap, "slot %llu: index %llu reused",
				     (unsigned long long)i,
				     (unsigned long long)idx);
		else if (buf->chan->cfg->mode == GRB_MODE_OVERWRITE &&
			 expected_bytes(buf, i, offset) >= buf->subbuf_size &&
			 !(grb__subbuf_offset(buf, offset) &&
			   grb__slot(buf, offset) == i)) {
			/* Closed and delivered: NOREF with the last lap. */
			lap = ((produced - 1 - (i << buf->subbuf_order)) >>
			       buf->buf_order) * buf->buf_size +
				(i << buf->subbuf_order);
			if (!(id & GRB_ID_NOREF) ||
			    (id & GRB_ID_LAP_MASK) !=
			    (grb__id_lap(buf, lap) & GRB_ID_LAP_MASK))
				ret = broken(msg, cap,
					     "slot %llu: id %llx not delivered",
					     (unsigned long long)i,
					     (unsigned long long)id);
		}
	}
out:
	free(used);
	return ret;
}

int grb_buf_validate(const struct grb_buf *buf, char *msg, size_t cap)
{
	const struct grb_buf_shm *shm;
	uint64_t offset, consumed, produced, i, cc, cc_sb, exp, q, partial;
	uint64_t unread = 0, records_total = 0, dsum = 0;
	struct grb_buf_stats st;

	if (!buf)
		return -EINVAL;
	shm = buf->shm;
	if (shm->magic != GRB_SHM_MAGIC || shm->version != GRB_SHM_VERSION)
		return broken(msg, cap, "bad magic or version");
	if (shm->subbuf_size != buf->subbuf_size ||
	    shm->num_subbuf != buf->buf_size >> buf->subbuf_order ||
	    shm->nr_phys != buf->nr_phys ||
	    shm->mode != (uint32_t)buf->chan->cfg->mode)
		return broken(msg, cap, "geometry mismatch");
	offset = grb_load_relaxed(&shm->offset);
	consumed = grb_load_relaxed(&shm->consumed);
	produced = grb__subbuf_trunc(buf, offset);
	if (grb__subbuf_offset(buf, consumed) || consumed > produced ||
	    produced - consumed > buf->buf_size)
		return broken(msg, cap, "consumed %llu vs produced %llu",
			      (unsigned long long)consumed,
			      (unsigned long long)produced);
	for (i = 0; i < buf->buf_size >> buf->subbuf_order; i++) {
		cc = grb__cc_load(buf, i);
		cc_sb = grb_load_relaxed(&buf->cold[i].cc_sb);
		exp = expected_bytes(buf, i, offset);
		if (((cc - exp) & GRB_CC_BYTES_MASK) != 0)
			return broken(msg, cap,
				      "slot %llu: %llu bytes committed, %llu reserved",
				      (unsigned long long)i,
				      (unsigned long long)(cc & GRB_CC_BYTES_MASK),
				      (unsigned long long)exp);
		/* Every closed lap is delivered; an open one is not yet, and
		 * holds exactly its partial bytes since the last delivery. */
		partial = exp & (buf->subbuf_size - 1);
		if (((cc - cc_sb) & GRB_CC_BYTES_MASK) != partial ||
		    (partial == 0 && cc != cc_sb))
			return broken(msg, cap,
				      "slot %llu: delivered state does not match its commits",
				      (unsigned long long)i);
		records_total += (cc - exp) >> 32;
		dsum += grb_load_relaxed(&buf->hot[i].dtotal);
	}
	for (q = consumed; q < produced; q += buf->subbuf_size)
		unread += grb_load_relaxed(&buf->cold[grb__slot(buf, q)].records_lap);
	grb_buf_get_stats(buf, &st);
	if ((records_total & 0xffffffffu) != (st.written & 0xffffffffu))
		return broken(msg, cap, "commit counters hold %llu records, stats %llu",
			      (unsigned long long)records_total,
			      (unsigned long long)st.written);
	/* Records of a sub-buffer held through get_next in discard mode are
	 * unread until put_next; in overwrite mode they count as read. */
	if (st.written != st.read + st.overwritten + unread +
	    (st.written - dsum))
		return broken(msg, cap,
			      "written %llu != read %llu + overwritten %llu + unread %llu",
			      (unsigned long long)st.written,
			      (unsigned long long)st.read,
			      (unsigned long long)st.overwritten,
			      (unsigned long long)unread);
	return check_ids(buf, offset, msg, cap);
}
