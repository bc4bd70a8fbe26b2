/* SPDX-License-Identifier: MIT */
/*
 * tools/crash/salvage.h - rebuild a trace from the shared-memory files
 * of a producer that died: the engine of grb-crash, kept apart from its
 * command line so that the fuzzer (tests/fuzz/fuzz_crash.c) runs it on
 * damaged files.
 */
#ifndef GRB_TOOLS_SALVAGE_H
#define GRB_TOOLS_SALVAGE_H

#include <stddef.h>
#include <stdint.h>

struct salvage_opts {
	const char *shm_dir;    /* where the producer's files are */
	const char *name;       /* the channel: files NAME.0, NAME.1, ... */
	const char *outdir;     /* the trace to write (created if missing) */
	int keep_padding;       /* CTF: leave grb:padding events in */
};

struct salvage_report {
	char client[32];        /* "grb-ctf" or "grb-basic" */
	unsigned int nr_bufs;
	uint64_t packets;       /* packets (sub-buffers) written */
	uint64_t events;        /* records in them */
	uint64_t padding;       /* CTF: padding events removed */
	uint64_t dead;          /* records of dead writers (lost_dead) */
	uint64_t recovered;     /* sub-buffers completed by recovery */
	uint64_t ambiguous;     /* of which by the union rule */
	uint64_t waiting;       /* sub-buffers left: a writer is alive */
	uint64_t damaged;       /* packets cut short: bytes that do not
				   decode, or a header that is not CTF */
	uint64_t bytes;         /* bytes written to stream files */
};

/*
 * Attach to the files as their reader (taking the role from a dead
 * reader), complete what dead writers left (grb_buf_recover(), after a
 * flush that closes each open sub-buffer), and write every delivered
 * packet out: a CTF trace (stream files NAME_CPU and the metadata) for
 * a grb/ctf.h channel, each stream ended by a header-only packet when
 * its buffer refused events after its last packet closed
 * (grb_ctf_stream_trailer()); stream files stream_I that grb-read prints
 * for a basic one.  Returns 0 or a negative errno, with a message in
 * @err.
 */
int salvage(const struct salvage_opts *o, struct salvage_report *r,
	    char *err, size_t errlen);

#endif /* GRB_TOOLS_SALVAGE_H */
