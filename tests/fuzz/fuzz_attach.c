/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_attach.c - libFuzzer target: attach to a shared buffer
 * whose bytes another process may have damaged, and read all of it.
 *
 * The image is a real buffer (the test client, per channel, in discard or
 * overwrite mode as the first input byte says), written and flushed so it
 * holds delivered sub-buffers.  The rest of the input is a list of
 * patches, each a 4-byte offset (modulo the image size) and 4 bytes to
 * store there, applied to the mapping.  A reader process then attaches
 * (grb_channel_attach) and reads everything the reader protocol gives it:
 * records decoded with the client's decoder and copied out.  Any error
 * code is fine; a crash, a sanitizer report or a hang is a bug: the
 * reader must treat the mapping as untrusted input (grb/shm.h).
 *
 * When the first byte's bit 2 is set, the image also holds a sub-buffer
 * a dead writer left incomplete (a reservation never committed, its
 * journal slot given to a pid that does not exist), and the reader runs
 * the recovery (grb_channel_recover()) before it reads: the journal, the
 * counters and the data it works from are then damaged too.
 *
 * Built with clang's -fsanitize=fuzzer,address (option GRB_FUZZ).
 *	build/clang/tests/fuzz_attach -max_total_time=600 -timeout=10 corpus/
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grb/impl/journal.h"
#include "grb/recover.h"
#include "grb/shm.h"
#include "tclient.h"

#define SB 4096

static void read_all(struct grb_channel *chan)
{
	struct grb_buf *buf = grb_channel_buf(chan, 0);
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	unsigned char copy[SB];
	size_t off;
	int round, n;

	if (grb_reader_open(buf))
		return;
	for (round = 0; round < 16; round++) {
		if (grb_reader_get_next(buf))
			break;
		if (grb_reader_held(buf, &sb) == 0) {
			off = grb_reader_first_record(buf);
			for (n = 0; n < 4096 &&
			     grb_reader_record(buf, off, &rec) == 0; n++) {
				if (rec.payload_len <= sizeof(copy))
					grb_reader_read(buf, rec.payload_off,
							copy, rec.payload_len);
				if (rec.next <= off)
					break;
				off = rec.next;
			}
		}
		grb_reader_put_next(buf);
	}
	grb_reader_release(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct grb_config *cfg;
	struct grb_channel_attr attr = { "fuzz", SB, 4, NULL };
	struct grb_shm_attr sattr = { "tclient", NULL, -1 };
	struct grb_channel *chan, *att;
	unsigned char *map, *saved;
	uint32_t at, val, seq;
	struct tc_pending pend;
	size_t map_size;
	int fd, dead = 0;
	uint64_t i;

	if (size < 1)
		return 0;
	cfg = tc_config(TV_SHARED | TV_PER_CHANNEL |
			((data[0] & 1) ? TV_DISCARD : 0) |
			((data[0] & 2) ? TV_COMPRESS : 0));
	if (grb_channel_create_shared(cfg, &attr, &sattr, &chan))
		return 0;
	for (seq = 0; seq < 150; seq++)
		tc_write(cfg, chan, 0, seq, seq % 37);
	if ((data[0] & 4) && tc_reserve(cfg, chan, 0, seq, 5, &pend) == 0) {
		dead = 1;
		tc_write(cfg, chan, 0, seq + 1, 3);
	}
	grb_buf_flush(grb_channel_buf(chan, 0), GRB_FLUSH_ACTIVE);
	fd = grb_channel_shm_fd(chan, 0);
	map_size = (size_t)lseek(fd, 0, SEEK_END);
	map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	saved = malloc(map_size);
	if (map != MAP_FAILED && saved) {
		memcpy(saved, map, map_size);
		/* The reservation's owner "dies": its slot names a pid that
		 * cannot exist (above pid_max). */
		for (i = 0; dead && i < grb_channel_buf(chan, 0)->nr_jslots; i++) {
			struct grb_jslot *js = &grb_channel_buf(chan, 0)->journal[i];

			if (grb_load_relaxed(&js->owner) >> 32 ==
			    (uint64_t)getpid())
				grb_store_relaxed(&js->owner,
						  UINT64_C(0x7ffffff0) << 32 | 1);
		}
		for (data++, size--; size >= 8; data += 8, size -= 8) {
			memcpy(&at, data, 4);
			memcpy(&val, data + 4, 4);
			at %= (uint32_t)(map_size - 3);
			memcpy(map + at, &val, 4);
		}
		if (grb_channel_attach(cfg, "tclient", &fd, 1,
				       GRB_ATTACH_READER, &att) == 0) {
			if (dead)
				grb_channel_recover(att, 0, NULL);
			read_all(att);
			grb_channel_destroy(att);
		}
		/* The writers' side trusts the mapping (it is theirs): undo
		 * the damage before the owner finalizes. */
		memcpy(map, saved, map_size);
		munmap(map, map_size);
	}
	/* The writer "comes back" to end its reservation (its nesting level
	 * must be given back), on the undamaged image. */
	if (dead)
		tc_finish(&pend);
	free(saved);
	grb_channel_destroy(chan);
	return 0;
}
