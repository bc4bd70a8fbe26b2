/* SPDX-License-Identifier: MIT */
/*
 * tools/consumerd/main.c - grb-consumerd: drain basic channels (and, with
 * --attach, CTF ones) that other processes write in shared memory
 * (grb/shm.h) into stream files.
 *
 * One thread per channel (drain.c) waits on the channel's futex,
 * splices every delivered sub-buffer into OUTDIR/NAME/stream_I (one file
 * per buffer, readable with grb-read), and runs the flush timer from this
 * side, so a quiet producer's records still come out.  The main thread,
 * here, reads the command line, accepts producers on a UNIX socket,
 * notices when one goes away (its connection ends: exit, crash or SIGKILL
 * alike), handles SIGINT/SIGTERM and prints progress.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "consumerd.h"
#include "grb/basic.h"

#define MAX_CHANS 64

static const char usage[] =
"NAME\n"
"    grb-consumerd - drain shared-memory basic channels into stream files\n"
"\n"
"SYNOPSIS\n"
"    grb-consumerd [-t MS] [-r MS] [-n N] [-q] -l SOCKET OUTDIR\n"
"    grb-consumerd [-t MS] [-r MS] [-q] -a DIR/NAME OUTDIR\n"
"\n"
"DESCRIPTION\n"
"    Attaches as the reader to basic channels created in shared memory by\n"
"    other processes (grb_basic_create_shared, grb/shm.h) and writes each\n"
"    delivered sub-buffer, header included, to OUTDIR/NAME/stream_I, one\n"
"    file per buffer, with splice(2).  grb-read prints those files.\n"
"\n"
"    With --attach, the channel may also be a CTF tracer's (grb_ctf_create\n"
"    with shm_dir, grb/ctf.h): OUTDIR/NAME is then a CTF trace, the\n"
"    metadata (copied from DIR/NAME.metadata whenever the tracer adds an\n"
"    event class) and one stream file NAME_CPU per buffer, which\n"
"    `babeltrace2 OUTDIR/NAME` prints.  A stream whose buffer refused\n"
"    events after its last packet ends with an empty packet carrying\n"
"    the final count, so the reader reports every discarded event.\n"
"\n"
"    Every period it flushes sub-buffers that stayed open a whole period,\n"
"    from its side of the shared mapping, so records of a quiet producer\n"
"    come out within two periods.  With --listen, when a producer goes\n"
"    away (exits, or is killed: its connection ends) it flushes and\n"
"    drains that producer's channel, prints its counts and detaches;\n"
"    with --attach there is no connection, and it ends when the\n"
"    producer finalizes the channel.  On SIGINT or SIGTERM it does the\n"
"    same for every channel and exits.\n"
"\n"
"    It writes a new trace and never overwrites one: with --listen,\n"
"    OUTDIR must not exist or be an empty directory; with --attach,\n"
"    OUTDIR/NAME must not exist or be empty (OUTDIR is made if missing).\n"
"    A channel it refuses leaves no file or directory of its own behind.\n"
"    It never removes the shared buffers it reads.\n"
"\n"
"    A writer process killed between reserve and commit leaves its\n"
"    sub-buffer incomplete.  Every period, a sub-buffer that has stayed\n"
"    incomplete for the recovery deadline and whose unfinished writers\n"
"    are all dead is completed (grb_channel_recover(), grb/recover.h):\n"
"    the dead records become padding that grb-read skips, counted as\n"
"    dead, and the stream goes on.  When a producer goes away (or on a\n"
"    signal), its channel is recovered at once before the last drain.\n"
"\n"
"OPTIONS\n"
"    -l, --listen SOCKET  accept producers on the UNIX socket SOCKET (made\n"
"                         0600; removed at exit unless another consumer\n"
"                         has since put its own there; a file already\n"
"                         there that is not a socket is an error).  Each\n"
"                         connection sends one channel with\n"
"                         grb_channel_send() and keeps the connection\n"
"                         open while it writes; one that sends no\n"
"                         channel within 2 seconds is refused.  At most\n"
"                         64 producers at a time (a channel drained\n"
"                         gives its place to the next).\n"
"    -a, --attach DIR/NAME attach to the files of the channel NAME that\n"
"                         a producer created under DIR; ends when the\n"
"                         producer finalizes it, or on a signal.\n"
"    -n, --count N        with --listen, exit once N producers (N >= 1)\n"
"                         have come and gone, a producer whose channel\n"
"                         was refused included (default: run until a\n"
"                         signal).\n"
"    -t, --tick MS        flush period in milliseconds, 1 or more\n"
"                         (default 100).\n"
"    -r, --recover-after MS  recovery deadline in milliseconds (default\n"
"                         1000; 0: as soon as the writers are dead).\n"
"    -q, --quiet          no progress line on the terminal.\n"
"    -h, --help           this text.\n"
"\n"
"OUTPUT\n"
"    On a terminal, a progress line every second: records read, bytes\n"
"    written, records lost (full, wrap, big, nesting, overwritten, dead)\n"
"    and the rate.  At the end of each channel, a summary line on stdout:\n"
"      channel NAME: R records read, B bytes, lost full=F wrap=W big=G\n"
"      nesting=N overwritten=O dead=D, S sub-buffers recovered\n"
"\n"
"EXIT STATUS\n"
"    0 when every channel was drained; 1 on an error (printed), a bad\n"
"    command line, or a producer's channel that was refused; 3 when a\n"
"    channel ended with sub-buffers that writers still alive hold (they\n"
"    and the sub-buffers after them were not drained; a message on\n"
"    stderr says how many).\n";


static struct chan_state *chans[MAX_CHANS];
static unsigned int nchans;
static uint64_t tick_ns = 100 * 1000000ull;
static uint64_t recover_ns = 1000 * 1000000ull;
static volatile sig_atomic_t stop;
static int quiet;
static const char *outdir;

/* A bad command line: what is wrong, then the synopsis. */
static int bad_usage(const char *fmt, const char *arg)
{
	fputs("grb-consumerd: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nusage: grb-consumerd [-t MS] [-r MS] [-n N] [-q] -l SOCKET "
	      "OUTDIR\n       grb-consumerd [-t MS] [-r MS] [-q] -a DIR/NAME "
	      "OUTDIR\n       grb-consumerd --help\n", stderr);
	return 1;
}

/* A whole decimal number in [min, max]: no sign, no suffix, no overflow. */
static int parse_num(const char *arg, const char *opt, uint64_t min,
		     uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = arg[0] >= '0' && arg[0] <= '9' ? strtoull(arg, &end, 10) : 0;
	if (arg[0] < '0' || arg[0] > '9' || errno || *end || v < min ||
	    v > max) {
		fprintf(stderr, "grb-consumerd: %s '%s': not a whole number "
			"from %llu to %llu\n", opt, arg,
			(unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * A directory to write a new trace in: made when missing (its parent must
 * exist), accepted when empty; anything else is refused, so that an
 * earlier trace is never overwritten.  @make 0: only check.
 * Return: 1 when it was made here (a refusal after that removes it
 * again), 0 when it exists and is empty or (@make 0) is missing; -EEXIST
 * when it holds something; -ENOTDIR; another -errno.
 */
static int fresh_dir(const char *path, int make)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int ret = 0;

	if (stat(path, &st) < 0) {
		if (errno != ENOENT || !make)
			return errno == ENOENT ? 0 : -errno;
		return mkdir(path, 0700) < 0 ? -errno : 1;
	}
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(path, W_OK | X_OK) < 0)
		return -errno;
	d = opendir(path);
	if (!d)
		return -errno;
	while (ret == 0 && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			ret = -EEXIST;
	closedir(d);
	return ret;
}

static const char *dir_error(int ret)
{
	return ret == -EEXIST ? "not empty (grb-consumerd writes a new trace "
		"and does not overwrite one)" : strerror(-ret);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}
/* The basic configuration these descriptors were made with. */
static int attach_basic(const int *fds, unsigned int nr,
			struct grb_channel **chan)
{
	static const enum grb_alloc allocs[] = { GRB_ALLOC_PER_CPU,
						 GRB_ALLOC_PER_CHANNEL };
	static const enum grb_mode modes[] = { GRB_MODE_DISCARD,
					       GRB_MODE_OVERWRITE };
	int a, m, c, ret = -EPROTOTYPE;

	for (a = 0; a < 2 && ret == -EPROTOTYPE; a++)
		for (m = 0; m < 2 && ret == -EPROTOTYPE; m++)
			for (c = 0; c < 2 && ret == -EPROTOTYPE; c++)
				ret = grb_channel_attach(
					grb_basic_config(allocs[a], modes[m], c),
					GRB_BASIC_CLIENT, fds, nr,
					GRB_ATTACH_READER, chan);
	return ret;
}

/* The stream file of buffer @i: NAME_CPU in a CTF trace (@name whole:
 * cs->name may be cut short), else stream_I. */
static void stream_path(const struct chan_state *cs, const char *name,
			unsigned int i, char *path, size_t len)
{
	int cpu = grb_buf_cpu(grb_channel_buf(cs->chan, i));

	if (cs->ctf)
		snprintf(path, len, "%s/%s_%d", cs->dir, name,
			 cpu < 0 ? 0 : cpu);
	else
		snprintf(path, len, "%s/stream_%u", cs->dir, i);
}

static int start_channel(struct grb_channel *chan, const char *name,
			 int conn, const char *meta_src)
{
	struct chan_state *cs;
	unsigned int i, n = grb_channel_nr_bufs(chan), opened = 0, files = 0;
	unsigned int slot;
	char path[4300];
	int ret, made;

	/* A place: a new one, or that of a channel already finished. */
	for (slot = 0; slot < nchans && !chans[slot]->joined; slot++)
		;
	if (slot == MAX_CHANS) {
		fprintf(stderr, "grb-consumerd: more than %d channels at "
			"once\n", MAX_CHANS);
		return -ENOSPC;
	}
	cs = (struct chan_state *)calloc(1, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	cs->chan = chan;
	cs->conn = conn;
	cs->tick_ns = tick_ns;
	cs->recover_ns = recover_ns;
	snprintf(cs->name, sizeof(cs->name), "%s", name);
	snprintf(cs->dir, sizeof(cs->dir), "%s/%s", outdir, name);
	made = fresh_dir(cs->dir, 1);
	if (made < 0) {
		fprintf(stderr, "grb-consumerd: %s: %s\n", cs->dir,
			dir_error(made));
		free(cs);
		return made;
	}
	cs->out = (int *)calloc(n, sizeof(int));
	cs->st = (struct ctf_stream *)calloc(n, sizeof(*cs->st));
	if (!cs->out || !cs->st) {
		ret = -ENOMEM;
		goto fail;
	}
	if (meta_src) {
		cs->ctf = 1;
		snprintf(cs->meta_src, sizeof(cs->meta_src), "%s", meta_src);
		ret = cd_copy_metadata(cs);
		if (ret)
			goto fail;
	}
	for (i = 0; i < n; i++) {
		ret = grb_reader_open(grb_channel_buf(chan, i));
		if (ret)
			goto fail;
		opened++;
		stream_path(cs, name, i, path, sizeof(path));
		/* O_EXCL: the directory was empty; never truncate a file. */
		cs->out[i] = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
				  0600);
		if (cs->out[i] < 0) {
			ret = -errno;
			goto fail;
		}
		files++;
	}
	ret = pthread_create(&cs->tid, NULL, cd_consume, cs);
	if (ret) {
		ret = -ret;
		goto fail;
	}
	if (slot < nchans) {
		free(chans[slot]->out);
		free(chans[slot]->st);
		free(chans[slot]);
	} else {
		nchans++;
	}
	chans[slot] = cs;
	return 0;
fail:
	fprintf(stderr, "grb-consumerd: %s: %s\n", name, grb_strerror(ret));
	/*
	 * Nothing was read yet: give back what was taken, and remove the
	 * files made here, so that a refused channel leaves no trace to be
	 * mistaken for one and no OUTDIR/NAME that a second try would find
	 * not empty.  The directory goes only if it was made here.
	 */
	for (i = 0; i < files; i++) {
		close(cs->out[i]);
		stream_path(cs, name, i, path, sizeof(path));
		unlink(path);
	}
	for (i = 0; i < opened; i++)
		grb_reader_release(grb_channel_buf(chan, i));
	if (cs->ctf) {
		snprintf(path, sizeof(path), "%s/metadata", cs->dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/.metadata.tmp", cs->dir);
		unlink(path);
	}
	if (made)
		rmdir(cs->dir);
	free(cs->out);
	free(cs->st);
	free(cs);
	return ret;
}

/* Join the channel's thread, print its counts, let it go.
 * Return: the thread's error (0 when it drained everything). */
static int finish_channel(struct chan_state *cs)
{
	unsigned int i;

	pthread_join(cs->tid, NULL);
	cs->joined = 1;
	cd_print_counts(stdout, cs, "");
	fflush(stdout);
	for (i = 0; i < grb_channel_nr_bufs(cs->chan); i++)
		close(cs->out[i]);
	if (cs->conn >= 0)
		close(cs->conn);
	/* Give the reader role back (destroy only unmaps): a consumer
	 * started after this one, on a channel still being written, can
	 * then open the buffers. */
	for (i = 0; i < grb_channel_nr_bufs(cs->chan); i++)
		grb_reader_release(grb_channel_buf(cs->chan, i));
	grb_channel_destroy(cs->chan);
	if (cs->err)
		return 1;
	if (cs->left) {
		fprintf(stderr, "grb-consumerd: channel %s: %llu sub-buffers "
			"left to writers still alive, and what follows them\n",
			cs->name, (unsigned long long)cs->left);
		return 3;
	}
	return 0;
}

/* The exit status so far, and a channel's: an error (1) wins over
 * sub-buffers left to live writers (3). */
static int worse(int status, int ret)
{
	if (status == 1 || ret == 0)
		return status;
	return ret == 1 || status == 0 ? ret : status;
}

/* How long a new connection has to send its channel. */
static const struct timeval recv_limit = { 2, 0 };

/* Return: 1 a producer's channel was refused (reported), else 0. */
static int accept_producer(int lsock, unsigned int *seen)
{
	struct grb_channel *chan;
	unsigned int nr, i;
	char name[64];
	int conn, *fds, ret;

	conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0)
		return 0;
	/* A peer that connects and sends nothing must not hold this thread
	 * (nor a signal's stop) for longer than that. */
	(void)setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &recv_limit,
			 sizeof(recv_limit));
	ret = grb_channel_recv_fds(conn, &fds, &nr);
	if (!ret) {
		ret = attach_basic(fds, nr, &chan);
		for (i = 0; i < nr; i++)
			close(fds[i]);
		free(fds);
	}
	if (ret) {
		fprintf(stderr, "grb-consumerd: a producer's channel: %s\n",
			grb_strerror(ret));
		close(conn);
		return 1;
	}
	snprintf(name, sizeof(name), "chan%u", (*seen)++);
	if (start_channel(chan, name, conn, NULL)) {
		grb_channel_destroy(chan);
		close(conn);
		return 1;
	}
	return 0;
}

static void progress(int64_t *last_t, uint64_t *last_read)
{
	struct grb_buf_stats st, sum;
	uint64_t bytes = 0;
	unsigned int i;
	int64_t t = cd_now_ns();
	double rate;

	if (quiet || !isatty(STDERR_FILENO) || t - *last_t < 1000000000)
		return;
	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < nchans; i++) {
		if (chans[i]->joined)
			continue;
		grb_channel_get_stats(chans[i]->chan, &st);
		sum.read += st.read;
		sum.lost_full += st.lost_full;
		sum.lost_wrap += st.lost_wrap;
		sum.lost_big += st.lost_big;
		sum.lost_nesting += st.lost_nesting;
		sum.overwritten += st.overwritten;
		sum.lost_dead += st.lost_dead;
		bytes += atomic_load(&chans[i]->bytes_shown);
	}
	rate = (double)(sum.read - *last_read) * 1e9 / (double)(t - *last_t);
	fprintf(stderr, "\r%llu records, %llu bytes, lost %llu/%llu/%llu/%llu/"
		"%llu/%llu (full/wrap/big/nesting/overwritten/dead), "
		"%.0f records/s   ",
		(unsigned long long)sum.read, (unsigned long long)bytes,
		(unsigned long long)sum.lost_full,
		(unsigned long long)sum.lost_wrap,
		(unsigned long long)sum.lost_big,
		(unsigned long long)sum.lost_nesting,
		(unsigned long long)sum.overwritten,
		(unsigned long long)sum.lost_dead, rate);
	*last_t = t;
	*last_read = sum.read;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "attach", required_argument, NULL, 'a' },
		{ "count", required_argument, NULL, 'n' },
		{ "tick", required_argument, NULL, 't' },
		{ "recover-after", required_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen_path = NULL, *attach = NULL;
	struct sockaddr_un sa;
	struct sigaction act;
	struct pollfd pfd[MAX_CHANS + 1];
	unsigned int seen = 0, gone = 0, refused = 0, i, np;
	uint64_t last_read = 0, count = 0, ms;
	int64_t last_t = cd_now_ns();
	int lsock = -1, c, status = 0, bound, made_out = 0;
	struct stat sst, ours;
	mode_t old_mask;
	char buf[1];

	while ((c = getopt_long(argc, argv, "l:a:n:t:r:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'l': listen_path = optarg; break;
		case 'a': attach = optarg; break;
		case 'n':
			if (parse_num(optarg, "-n", 1, UINT_MAX, &count))
				return 1;
			break;
		case 'r':
			if (parse_num(optarg, "-r", 0, UINT64_MAX / 1000000,
				      &ms))
				return 1;
			recover_ns = ms * 1000000ull;
			break;
		case 't':
			if (parse_num(optarg, "-t", 1, UINT64_MAX / 1000000,
				      &ms))
				return 1;
			tick_ns = ms * 1000000ull;
			break;
		case 'q': quiet = 1; break;
		case 'h': fputs(usage, stdout); return 0;
		/* getopt_long() has named the option. */
		default: return bad_usage("%s", "bad option");
		}
	}
	if (!listen_path == !attach)
		return bad_usage("%s", listen_path ? "-l and -a exclude each "
				 "other" : "-l SOCKET or -a DIR/NAME is needed");
	if (attach && count)
		return bad_usage("%s", "-n goes with -l, not -a");
	if (optind == argc)
		return bad_usage("%s", "OUTDIR is missing");
	if (optind < argc - 1)
		return bad_usage("extra argument '%s'", argv[optind + 1]);
	/* The socket is bound under a temporary name and renamed over
	 * LISTEN_PATH: only a socket (one a consumer left) may be there. */
	if (listen_path && lstat(listen_path, &sst) == 0 &&
	    !S_ISSOCK(sst.st_mode)) {
		fprintf(stderr, "grb-consumerd: %s: exists and is not a "
			"socket; not replaced\n", listen_path);
		return 1;
	}
	outdir = argv[optind];
	/* Listening: OUTDIR is the trace.  Attaching: OUTDIR/NAME is, made
	 * once the channel is known to be one (start_channel()). */
	c = listen_path ? fresh_dir(outdir, 1) : 0;
	if (c < 0) {
		fprintf(stderr, "grb-consumerd: %s: %s\n", outdir, dir_error(c));
		return 1;
	}
	/* A run refused from here on removes the OUTDIR it made. */
	made_out = c;
	memset(&act, 0, sizeof(act));
	act.sa_handler = on_signal;
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGTERM, &act, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (attach) {
		char dir[4096], meta[4200] = "", *slash;
		struct grb_channel *chan = NULL;
		int ret = -EPROTOTYPE, a, m, k;

		snprintf(dir, sizeof(dir), "%s", attach);
		slash = strrchr(dir, '/');
		if (!slash || !slash[1])
			return bad_usage("-a '%s': expected DIR/NAME", attach);
		*slash = 0;
		if (!dir[0])
			snprintf(dir, sizeof(dir), "/");
		/* Refuse an OUTDIR/NAME in use before touching the channel. */
		snprintf(meta, sizeof(meta), "%s/%s", outdir, slash + 1);
		ret = fresh_dir(meta, 0);
		if (ret) {
			fprintf(stderr, "grb-consumerd: %s: %s\n", meta,
				dir_error(ret));
			return 1;
		}
		meta[0] = 0;
		ret = -EPROTOTYPE;
		for (a = 0; a < 2 && ret == -EPROTOTYPE; a++)
			for (m = 0; m < 2 && ret == -EPROTOTYPE; m++)
				for (k = 0; k < 2 && ret == -EPROTOTYPE; k++)
					ret = grb_channel_attach_dir(
						grb_basic_config(
						    a ? GRB_ALLOC_PER_CHANNEL :
							GRB_ALLOC_PER_CPU,
						    m ? GRB_MODE_OVERWRITE :
							GRB_MODE_DISCARD, k),
						GRB_BASIC_CLIENT, dir,
						slash + 1, GRB_ATTACH_READER,
						&chan);
		/* Not basic: a CTF tracer's channel (grb/ctf.h)? */
		for (a = 0; a < 2 && ret == -EPROTOTYPE; a++)
			for (m = 0; m < 2 && ret == -EPROTOTYPE; m++)
				for (k = 0; k < 2 && ret == -EPROTOTYPE; k++) {
					ret = grb_channel_attach_dir(
						grb_ctf_config(
						    a ? GRB_ALLOC_PER_CHANNEL :
							GRB_ALLOC_PER_CPU,
						    m ? GRB_MODE_OVERWRITE :
							GRB_MODE_DISCARD,
						    (enum grb_ctf_clock)k),
						GRB_CTF_CLIENT, dir,
						slash + 1, GRB_ATTACH_READER,
						&chan);
					if (!ret)
						snprintf(meta, sizeof(meta),
							 "%s.metadata", attach);
				}
		if (ret) {
			fprintf(stderr, "grb-consumerd: %s: %s\n", attach,
				ret == -EPROTOTYPE ? "not a grb-basic or grb-ctf "
				"channel" : grb_strerror(ret));
			return 1;
		}
		made_out = mkdir(outdir, 0700) == 0;
		if (!made_out && errno != EEXIST) {
			fprintf(stderr, "grb-consumerd: %s: %s\n", outdir,
				strerror(errno));
			grb_channel_destroy(chan);
			return 1;
		}
		if (start_channel(chan, slash + 1, -1, meta[0] ? meta : NULL)) {
			grb_channel_destroy(chan);
			if (made_out)
				rmdir(outdir);
			return 1;
		}
	} else {
		struct stat tst;

		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		/*
		 * Bound under a temporary name, owner-only from the start
		 * (umask: no window with looser bits), and renamed once it
		 * listens: a producer that sees the path can connect.
		 */
		if (strlen(listen_path) + 4 >= sizeof(sa.sun_path)) {
			fprintf(stderr, "grb-consumerd: %s: socket path too "
				"long\n", listen_path);
			if (made_out)
				rmdir(outdir);
			return 1;
		}
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.tmp",
			 listen_path);
		/* A socket an earlier consumer left there goes; anything
		 * else is not ours to remove. */
		if (lstat(sa.sun_path, &tst) == 0) {
			if (!S_ISSOCK(tst.st_mode)) {
				fprintf(stderr, "grb-consumerd: %s: exists and "
					"is not a socket\n", sa.sun_path);
				if (made_out)
					rmdir(outdir);
				return 1;
			}
			unlink(sa.sun_path);
		}
		lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		old_mask = umask(0177);
		bound = lsock < 0 ? -1 :
			bind(lsock, (struct sockaddr *)&sa, sizeof(sa));
		umask(old_mask);
		if (bound < 0 || listen(lsock, 16) < 0 ||
		    rename(sa.sun_path, listen_path) < 0) {
			fprintf(stderr, "grb-consumerd: %s: %s\n", listen_path,
				strerror(errno));
			if (lsock >= 0)
				unlink(sa.sun_path);
			if (made_out)
				rmdir(outdir);
			return 1;
		}
		/* Which file is ours: a consumer started later on the same
		 * path renames its own socket over it, and that one must
		 * not be what this one removes at exit. */
		if (lstat(listen_path, &ours) < 0)
			memset(&ours, 0, sizeof(ours));
	}

	while (!stop) {
		np = 0;
		if (lsock >= 0)
			pfd[np++] = (struct pollfd){ lsock, POLLIN, 0 };
		for (i = 0; i < nchans; i++)
			if (!chans[i]->joined && chans[i]->conn >= 0)
				pfd[np++] = (struct pollfd){ chans[i]->conn,
							     POLLIN, 0 };
		poll(pfd, np, 200);
		if (lsock >= 0 && (pfd[0].revents & POLLIN) &&
		    accept_producer(lsock, &seen)) {
			refused++;
			status = 1;
		}
		/* A producer's connection that ends (EOF or error) or a
		 * channel that finished on its own (finalized). */
		for (i = 0; i < nchans; i++) {
			struct chan_state *cs = chans[i];

			if (cs->joined)
				continue;
			if (cs->conn >= 0 && recv(cs->conn, buf, 1,
						  MSG_DONTWAIT) != -1)
				atomic_store(&cs->gone, 1);
			else if (cs->conn >= 0 && errno != EAGAIN &&
				 errno != EWOULDBLOCK)
				atomic_store(&cs->gone, 1);
			if (atomic_load(&cs->finished)) {
				if (!quiet && isatty(STDERR_FILENO))
					fputc('\n', stderr);
				status = worse(status, finish_channel(cs));
				gone++;
			}
		}
		if (attach && gone == nchans)
			break;
		if (count && gone + refused >= count)
			break;
		progress(&last_t, &last_read);
	}
	/* Signal, or done: every channel left flushes and drains. */
	for (i = 0; i < nchans; i++) {
		if (chans[i]->joined)
			continue;
		atomic_store(&chans[i]->gone, 1);
		status = worse(status, finish_channel(chans[i]));
	}
	if (lsock >= 0) {
		close(lsock);
		if (lstat(listen_path, &sst) == 0 &&
		    sst.st_ino == ours.st_ino && sst.st_dev == ours.st_dev)
			unlink(listen_path);
	}
	for (i = 0; i < nchans; i++) {
		free(chans[i]->out);
		free(chans[i]->st);
		free(chans[i]);
	}
	return status;
}

