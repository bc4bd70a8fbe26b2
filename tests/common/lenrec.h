/* SPDX-License-Identifier: MIT */
/*
 * tests/common/lenrec.h - a small record format for the read-side unit
 * tests, with a clock the test sets.
 *
 * A record: u32 length word (bit 31, LENREC_FULL: a full timestamp
 * follows), then a u64 timestamp or the low u32 of it, then the payload;
 * each record starts 4-byte aligned.  The clock returns lenrec_now, the
 * value the next reservation reads.  One test file includes it once.
 */
#ifndef GRB_TESTS_LENREC_H
#define GRB_TESTS_LENREC_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "grb/grb.h"

#define LENREC_FULL UINT32_C(0x80000000)

static uint64_t lenrec_now;

static inline uint64_t lenrec_clock(void)
{
	return lenrec_now;
}

static inline size_t lenrec_header(const struct grb_config *cfg,
				   size_t offset, size_t *pre,
				   const struct grb_ctx *ctx)
{
	(void)cfg;
	*pre = grb_offset_align(offset, 4);
	return *pre + 4 + ((ctx->rflags & GRB_RFLAG_FULL_TIMESTAMP) ? 8 : 4);
}

static inline int lenrec_decode(const struct grb_config *cfg,
				const void *subbuf, size_t offset,
				size_t data_size, struct grb_record *rec)
{
	const char *p = (const char *)subbuf;
	size_t at = offset + grb_offset_align(offset, 4);
	uint32_t word, low;

	(void)cfg;
	if (at + 8 > data_size)
		return -EINVAL;
	memcpy(&word, p + at, 4);
	rec->offset = at;
	rec->rflags = 0;
	if (word & LENREC_FULL) {
		if (at + 12 > data_size)
			return -EINVAL;
		memcpy(&rec->timestamp, p + at + 4, 8);
		rec->header_len = 12;
		rec->rflags = GRB_RFLAG_FULL_TIMESTAMP;
	} else {
		memcpy(&low, p + at + 4, 4);
		rec->timestamp = low;
		rec->header_len = 8;
	}
	rec->payload_off = at + rec->header_len;
	rec->payload_len = word & ~LENREC_FULL;
	if (rec->payload_len > data_size - rec->payload_off)
		return -EINVAL;
	rec->next = rec->payload_off + rec->payload_len;
	return 0;
}

#endif /* GRB_TESTS_LENREC_H */
