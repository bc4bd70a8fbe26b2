/* SPDX-License-Identifier: MIT */
/*
 * tools/grb_crash.c - grb-crash: rebuild a trace from the shared-memory
 * files of a producer that was killed or crashed (tools/crash/salvage.c
 * does the work).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash/salvage.h"

static const char usage[] =
"NAME\n"
"    grb-crash - rebuild a trace from a dead producer's shared memory\n"
"\n"
"SYNOPSIS\n"
"    grb-crash [-p] [-q] DIR/NAME OUTDIR\n"
"\n"
"DESCRIPTION\n"
"    Reads the buffer files DIR/NAME.0, DIR/NAME.1, ... that a producer\n"
"    created with grb_ctf_create() or grb_basic_create_shared() and a\n"
"    directory (grb/shm.h), after the producer died, even by SIGKILL in\n"
"    the middle of a record.  It takes the reader role of every buffer\n"
"    (from a reader that died with the producer), closes the sub-buffer\n"
"    each was filling, completes the sub-buffers the dead writers left\n"
"    (grb/recover.h: a record whose commit did not complete becomes\n"
"    padding and is counted as dead) and writes every packet out, in\n"
"    order, from the oldest one not yet consumed.\n"
"\n"
"    A CTF channel (grb/ctf.h) becomes a CTF trace in OUTDIR: the\n"
"    metadata (DIR/NAME.metadata) and one stream file NAME_CPU per\n"
"    buffer, without the padding events, which `babeltrace2 OUTDIR`\n"
"    prints.  A basic channel becomes stream files OUTDIR/stream_I,\n"
"    which `grb-read OUTDIR/stream_*` prints as text.\n"
"\n"
"    Run it when no consumer reads these files any more: it takes the\n"
"    reader role whoever had it.  Records of a writer still alive in\n"
"    an open sub-buffer are left there (reported as waiting), and so\n"
"    is every later sub-buffer of that buffer, delivered or not: a\n"
"    buffer is read in order, so its stream stops before the first\n"
"    sub-buffer a live writer holds.  Run it again once that writer\n"
"    has committed or died.\n"
"\n"
"    OUTDIR is made if missing; a file already in it is never\n"
"    overwritten (the run fails before reading anything, and leaves\n"
"    no file of its own).  A packet that cannot be written stays in\n"
"    the buffer, for another run.  The buffer files are not removed.\n"
"\n"
"OPTIONS\n"
"    -p, --keep-padding  keep the grb:padding events in a CTF trace.\n"
"    -q, --quiet         no summary line.\n"
"    -h, --help          this text.\n"
"\n"
"EXIT STATUS\n"
"    0 the trace was written; 1 an error (a message says which);\n"
"    2 usage; 3 written, but sub-buffers were left to live writers or\n"
"    packets were damaged (said on stderr, even with -q).\n";

/* A bad command line: what is wrong, then the synopsis. */
static int bad_usage(const char *what, const char *arg)
{
	fprintf(stderr, "grb-crash: %s%s%s\nusage: grb-crash [-p] [-q] "
		"DIR/NAME OUTDIR\n       grb-crash --help\n", what,
		arg ? " " : "", arg ? arg : "");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "keep-padding", no_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct salvage_opts o;
	struct salvage_report r;
	char dir[4096], err[512];
	char *slash;
	int c, quiet = 0, ret;

	memset(&o, 0, sizeof(o));
	while ((c = getopt_long(argc, argv, "pqh", lopts, NULL)) != -1) {
		switch (c) {
		case 'p': o.keep_padding = 1; break;
		case 'q': quiet = 1; break;
		case 'h': fputs(usage, stdout); return 0;
		/* getopt_long() has named the option. */
		default: return bad_usage("bad option", NULL);
		}
	}
	if (optind == argc)
		return bad_usage("DIR/NAME and OUTDIR are missing", NULL);
	if (optind == argc - 1)
		return bad_usage("OUTDIR is missing", NULL);
	if (optind < argc - 2)
		return bad_usage("extra argument", argv[optind + 2]);
	snprintf(dir, sizeof(dir), "%s", argv[optind]);
	slash = strrchr(dir, '/');
	if (!slash || !slash[1]) {
		fprintf(stderr, "grb-crash: %s: expected DIR/NAME\n",
			argv[optind]);
		return 2;
	}
	*slash = 0;
	o.shm_dir = dir[0] ? dir : "/";
	o.name = slash + 1;
	o.outdir = argv[optind + 1];
	ret = salvage(&o, &r, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "grb-crash: %s\n", err);
		return 1;
	}
	if (!quiet)
		printf("grb-crash: %s (%s, %u buffers): %llu packets, "
		       "%llu records; dead %llu, padding removed %llu, "
		       "sub-buffers recovered %llu (ambiguous %llu), "
		       "waiting %llu, damaged %llu; %llu bytes in %s\n",
		       o.name, r.client, r.nr_bufs,
		       (unsigned long long)r.packets,
		       (unsigned long long)r.events,
		       (unsigned long long)r.dead,
		       (unsigned long long)r.padding,
		       (unsigned long long)r.recovered,
		       (unsigned long long)r.ambiguous,
		       (unsigned long long)r.waiting,
		       (unsigned long long)r.damaged,
		       (unsigned long long)r.bytes, o.outdir);
	if (r.waiting || r.damaged) {
		fprintf(stderr, "grb-crash: %s: the trace is incomplete: %llu "
			"sub-buffers left to writers still alive (with every "
			"later one of their buffers), %llu packets "
			"damaged\n", o.name, (unsigned long long)r.waiting,
			(unsigned long long)r.damaged);
		return 3;
	}
	return 0;
}
