/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_xproc.c - section 6, cross-process: a writer process, a
 * consumer daemon in another process, the trace on tmpfs; grb with
 * grb-consumerd beside LTTng-UST with its consumer daemon, the same event
 * and the same buffers.
 *
 * Each run, for each system (grb first, then LTTng-UST, run after run):
 *   grb       grb-consumerd -q -n 1 -l SOCK DIR/grb-I is started; a
 *             process forked from grb_bench (pinned like every writer)
 *             creates a shared basic channel (per-CPU, discard, 8 x 128
 *             KiB sub-buffers, compressed timestamps), hands it over the
 *             socket (grb_channel_send), writes N records of 4 bytes (its
 *             CPU id, sched_getcpu(), as the LTTng event), reports its
 *             counts, destroys the channel (which finalizes it) and exits;
 *             grb-consumerd drains the rest, prints its summary and exits.
 *   lttng-ust a session writing to DIR/lttng-I: per-UID buffers, discard,
 *             8 x 128 KiB sub-buffers, the event grb_bench:rec (one
 *             uint32_t, the CPU id); grb_bench_lttng writes N events and
 *             exits; `lttng stop` (which flushes and waits until no data
 *             is pending), `lttng list` for the discarded events,
 *             `lttng destroy`, then babeltrace2 counts the events.
 * DIR is on tmpfs (/dev/shm).  No warm-up on either side.
 *
 * Figures, per run, median [min-max] over the runs:
 *   ns/record   the writer's loop (N calls, each one out-of-line call
 *               through a function pointer) / N: the same bench_loop_wall
 *               in both writers;
 *   drain MB/s  bytes of the consumer's stream files at the end (grb's
 *               stream_*; LTTng's channel files, without its metadata and
 *               index files) / the time from the writer's first call to
 *               the moment those files reached their final size.  That
 *               moment is found the same way for both: once the writer
 *               process has returned its figures, grb_bench polls the
 *               files' sizes every millisecond until the consumer side is
 *               done (grb-consumerd exited; `lttng stop` returned), and
 *               takes the poll that first saw the final size.  So it
 *               includes, for grb, the writer's grb_basic_destroy()
 *               (which finalizes the channel: the consumer's cue to
 *               drain the last sub-buffers) and, for LTTng-UST, the
 *               application's exit and `lttng stop` (its cue; the lttng
 *               client asks whether data is pending every 200 ms until
 *               none is); it excludes `lttng destroy` and the consumers'
 *               own exit;
 *   drain records/s  records in the output / the same time;
 *   lost        grb: calls the writer saw refused (checked against the
 *               channel's lost counters and grb-consumerd's); LTTng:
 *               "Discarded events" of `lttng list` after the stop.
 * Checked: grb: the stream files are decoded here (grb_basic_decode), and
 * records in them + lost = N, records = the writer's written count =
 * grb-consumerd's read count, file bytes = its byte count.  LTTng:
 * events in the trace (babeltrace2) + discarded = N.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <grb/basic.h>
#include <grb/channel.h>
#include <grb/shm.h>

#include "bench.h"
#include "report.h"
#include "util.h"
#include "xproc.h"

#define TMPFS_MAGIC_ 0x01021994
#define XP_OUT_CAP 4096

/* ---- watching a consumer's output ---- */

void xproc_watch_init(struct xproc_watch *w, const char *dir,
		      const char *prefix)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	snprintf(w->prefix, sizeof(w->prefix), "%s", prefix);
	w->t_change = bench_now_ns();
}

static int is_stream(const struct xproc_watch *w, const char *name)
{
	size_t n = strlen(name);

	return strncmp(name, w->prefix, strlen(w->prefix)) == 0 &&
	       !(n > 4 && strcmp(name + n - 4, ".idx") == 0);
}

static void walk(const struct xproc_watch *w, int dfd, int depth,
		 uint64_t *data, uint64_t *other)
{
	DIR *d;
	struct dirent *e;
	struct stat st;

	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(st.st_mode) && depth < 8) {
			int sub = openat(dirfd(d), e->d_name, O_RDONLY |
					 O_DIRECTORY | O_CLOEXEC);

			if (sub >= 0)
				walk(w, sub, depth + 1, data, other);
		} else if (S_ISREG(st.st_mode)) {
			if (is_stream(w, e->d_name))
				*data += (uint64_t)st.st_size;
			else
				*other += (uint64_t)st.st_size;
		}
	}
	closedir(d);
}

void xproc_watch_poll(struct xproc_watch *w)
{
	uint64_t data = 0, other = 0;
	int fd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0)
		walk(w, fd, 0, &data, &other);
	if (data != w->bytes) {
		w->bytes = data;
		w->t_change = bench_now_ns();
	}
	w->other = other;
}

int xproc_watch_child(struct xproc_watch *w, int pid, int fd, char *out,
		      size_t cap, unsigned int timeout_ms)
{
	uint64_t deadline = bench_now_ns() +
			    (uint64_t)timeout_ms * 1000000u;
	size_t len = 0;
	int status = 0, exited = 0, eof = fd < 0;

	if (out && cap)
		out[0] = '\0';
	while (!exited || !eof) {
		if (!eof) {
			struct pollfd p = { fd, POLLIN, 0 };
			char scratch[512];
			char *dst = out && len + 1 < cap ? out + len : scratch;
			size_t room = out && len + 1 < cap ? cap - 1 - len :
				      sizeof(scratch);
			ssize_t r;

			if (poll(&p, 1, 1) > 0) {
				r = read(fd, dst, room);
				if (r > 0 && dst != scratch) {
					len += (size_t)r;
					out[len] = '\0';
				} else if (r == 0 || (r < 0 && errno != EINTR &&
						      errno != EAGAIN)) {
					eof = 1;
				}
			}
		} else {
			bench_poll_sleep(1000);
		}
		xproc_watch_poll(w);
		if (!exited) {
			pid_t r = waitpid((pid_t)pid, &status, WNOHANG);

			if (r == (pid_t)pid)
				exited = 1;
			else if (r < 0 && errno != EINTR)
				return -1;
		}
		if (!exited && bench_now_ns() >= deadline) {
			kill((pid_t)pid, SIGKILL);
			waitpid((pid_t)pid, &status, 0);
			return 128 + SIGKILL;
		}
		if (exited && !eof && bench_now_ns() >= deadline)
			break;
	}
	xproc_watch_poll(w);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* ---- grb: the writer process ---- */

BENCH_NOINLINE static int xp_write(void *obj)
{
	uint32_t cpu = (uint32_t)sched_getcpu();

	return grb_basic_write((struct grb_basic *)obj, &cpu, sizeof(cpu));
}

/* Connect to grb-consumerd's socket, which it may not have bound yet. */
static int connect_retry(const char *path)
{
	struct sockaddr_un sa;
	int i, s;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path));
	for (i = 0; i < 1000; i++) {
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0)
			return -1;
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return s;
		close(s);
		if (errno != ENOENT && errno != ECONNREFUSED)
			return -1;
		bench_poll_sleep(10000);
	}
	return -1;
}

/*
 * The forked writer.  Writes one line to @res: "ok START NS REFUSED
 * WRITTEN LOST" (CLOCK_MONOTONIC before the first call, the loop's wall
 * time, the calls refused, and the channel's written and lost counters
 * summed over its buffers) or "err WHAT", then finalizes and exits.
 */
static void writer_child(const char *sock_path, uint64_t n, int res)
{
	struct grb_basic_attr attr = { "xproc", BENCH_XPROC_SUBBUF,
				       BENCH_XPROC_NSUB, GRB_ALLOC_PER_CPU,
				       GRB_MODE_DISCARD, 1 };
	struct grb_basic_counts c;
	struct grb_basic *b = NULL;
	struct bench_loop l;
	uint64_t start, written = 0, lost = 0;
	unsigned int i;
	int sock, ret;

	bench_pin_self(bench_cpu_for_writer(0));
	ret = grb_basic_create_shared(&attr, NULL, &b);
	if (ret) {
		dprintf(res, "err grb_basic_create_shared: %s\n",
			grb_strerror(ret));
		_exit(1);
	}
	sock = connect_retry(sock_path);
	if (sock < 0) {
		dprintf(res, "err connect to grb-consumerd: %s\n",
			strerror(errno));
		_exit(1);
	}
	ret = grb_channel_send(grb_basic_channel(b), sock);
	if (ret) {
		dprintf(res, "err grb_channel_send: %s\n", grb_strerror(ret));
		_exit(1);
	}
	start = bench_now_ns();
	bench_loop_wall(xp_write, b, n, &l);
	for (i = 0; i < grb_basic_nr_bufs(b); i++) {
		if (grb_basic_get_counts(b, i, &c) == 0) {
			written += c.written;
			lost += c.lost;
		}
	}
	dprintf(res, "ok %llu %llu %llu %llu %llu\n",
		(unsigned long long)start, (unsigned long long)l.ns,
		(unsigned long long)l.refused, (unsigned long long)written,
		(unsigned long long)lost);
	close(res);
	/* Finalizes: grb-consumerd drains the rest and ends the channel. */
	grb_basic_destroy(b);
	close(sock);
	_exit(0);
}

/* ---- grb: checking the output ---- */

struct decoded {
	uint64_t records, bad, subbufs;
};

/* Records in one stream file of grb-consumerd, each a 4-byte CPU id. */
static int decode_file(const char *path, struct decoded *d)
{
	const size_t hs = sizeof(struct grb_basic_subbuf_header);
	struct grb_basic_subbuf_header h;
	struct grb_basic_event ev;
	unsigned char *map;
	struct stat st;
	size_t at = 0, off, next, poff;
	uint64_t prev;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	if (st.st_size == 0) {
		close(fd);
		return 0;
	}
	map = (unsigned char *)mmap(NULL, (size_t)st.st_size, PROT_READ,
				    MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	while (at + hs <= (size_t)st.st_size) {
		memcpy(&h, map + at, hs);
		if (h.magic != GRB_BASIC_MAGIC || h.data_size < hs ||
		    h.data_size > (size_t)st.st_size - at) {
			ret = -1;
			break;
		}
		d->subbufs++;
		prev = 0;
		for (off = hs; grb_basic_decode(map + at, h.data_size, off,
						prev, &ev, &poff, &next) == 0;
		     off = next) {
			uint32_t cpu;

			memcpy(&cpu, map + at + poff, sizeof(cpu));
			if (ev.len != sizeof(cpu) || (int)cpu != ev.cpu)
				d->bad++;
			d->records++;
			prev = ev.timestamp;
		}
		if (off != h.data_size)
			ret = -1;
		at += h.data_size;
	}
	if (at != (size_t)st.st_size)
		ret = -1;
	munmap(map, (size_t)st.st_size);
	return ret;
}

/* grb-consumerd's OUTDIR/chan0/stream_I files. */
static int decode_dir(const char *outdir, struct decoded *d)
{
	char path[PATH_MAX], dir[PATH_MAX - 256];
	struct dirent *e;
	DIR *dp;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	snprintf(dir, sizeof(dir), "%.*s/chan0", PATH_MAX - 300, outdir);
	dp = opendir(dir);
	if (!dp)
		return -1;
	while ((e = readdir(dp)) != NULL) {
		if (strncmp(e->d_name, "stream_", 7) != 0)
			continue;
		snprintf(path, sizeof(path), "%.*s/%s", PATH_MAX - 300, dir,
			 e->d_name);
		if (decode_file(path, d) != 0)
			ret = -1;
	}
	closedir(dp);
	return ret;
}

/* ---- grb: one run ---- */

struct grb_side {
	char consumerd[PATH_MAX];
	const char *dir;
};

static int find_consumerd(char *path, size_t cap)
{
	char dir[PATH_MAX - 32];

#ifdef GRB_BENCH_CONSUMERD
	if (access(GRB_BENCH_CONSUMERD, X_OK) == 0) {
		snprintf(path, cap, "%s", GRB_BENCH_CONSUMERD);
		return 0;
	}
#endif
	if (bench_self_dir(dir, sizeof(dir)) == 0) {
		snprintf(path, cap, "%s/../tools/grb-consumerd", dir);
		if (access(path, X_OK) == 0)
			return 0;
	}
	if (bench_have_prog("grb-consumerd")) {
		snprintf(path, cap, "grb-consumerd");
		return 0;
	}
	return -1;
}

/* Read @fd to end of file into @buf (@cap), for at most @timeout_ms. */
static void read_all(int fd, char *buf, size_t cap, unsigned int timeout_ms)
{
	uint64_t deadline = bench_now_ns() +
			    (uint64_t)timeout_ms * 1000000u;
	size_t len = 0;

	buf[0] = '\0';
	while (len + 1 < cap) {
		struct pollfd p = { fd, POLLIN, 0 };
		uint64_t now = bench_now_ns();
		ssize_t r;

		if (now >= deadline)
			break;
		if (poll(&p, 1, (int)((deadline - now) / 1000000u) + 1) <= 0)
			continue;
		r = read(fd, buf + len, cap - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = '\0';
	}
}

static int grb_run(const struct grb_side *g, uint64_t n, int idx,
		   struct xproc_run *r, char *why, size_t whycap)
{
	char out[PATH_MAX], sock[PATH_MAX], res[256], cout[XP_OUT_CAP];
	char *argv[] = { (char *)g->consumerd, (char *)"-q", (char *)"-n",
			 (char *)"1", (char *)"-l", sock, out, NULL };
	char *rm[] = { (char *)"rm", (char *)"-rf", out, NULL };
	unsigned long long start = 0, ns = 0, refused = 0, written = 0,
			   lost = 0, cread = 0, cbytes = 0, lf = 0, lw = 0,
			   lb = 0, ln = 0, lo = 0;
	struct xproc_watch w;
	struct decoded d;
	char *line;
	int cfd = -1, rp[2], cpid, wpid, cst, wst, dec;

	memset(r, 0, sizeof(*r));
	r->kept = r->lost = -1;
	r->calls = n;
	snprintf(out, sizeof(out), "%s/grb-%d", g->dir, idx);
	snprintf(sock, sizeof(sock), "%s/grb-%d.sock", g->dir, idx);
	cpid = bench_spawn(argv, &cfd);
	if (cpid < 0) {
		snprintf(why, whycap, "cannot start %.120s", g->consumerd);
		return -1;
	}
	if (pipe2(rp, O_CLOEXEC) != 0) {
		kill(cpid, SIGTERM);
		bench_wait(cpid, 10000);
		close(cfd);
		snprintf(why, whycap, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	wpid = fork();
	if (wpid == 0) {
		close(rp[0]);
		close(cfd);
		writer_child(sock, n, rp[1]);
	}
	close(rp[1]);
	if (wpid < 0) {
		close(rp[0]);
		kill(cpid, SIGTERM);
		bench_wait(cpid, 10000);
		close(cfd);
		snprintf(why, whycap, "fork: %s", strerror(errno));
		return -1;
	}
	/* Blocked (no polling) while the writer writes, as for LTTng. */
	read_all(rp[0], res, sizeof(res), BENCH_XPROC_TIMEOUT_MS);
	close(rp[0]);
	/* A writer that failed may never have connected: grb-consumerd
	 * would wait for it; SIGTERM makes it drain what it has and exit. */
	if (strncmp(res, "ok ", 3) != 0)
		kill(cpid, SIGTERM);
	xproc_watch_init(&w, out, "stream_");
	xproc_watch_poll(&w);
	cst = xproc_watch_child(&w, cpid, cfd, cout, sizeof(cout),
				BENCH_XPROC_TIMEOUT_MS);
	close(cfd);
	wst = bench_wait(wpid, 10000);
	if (sscanf(res, "ok %llu %llu %llu %llu %llu", &start, &ns, &refused,
		   &written, &lost) != 5) {
		snprintf(why, whycap, "the writer process: %.120s (exit %d)",
			 res[0] ? res : "no figures", wst);
		bench_run(rm, NULL, 0);
		return -1;
	}
	line = strstr(cout, "channel ");
	if (cst != 0 || !line ||
	    sscanf(line, "channel %*s %llu records read, %llu bytes, lost "
		   "full=%llu wrap=%llu big=%llu nesting=%llu overwritten=%llu",
		   &cread, &cbytes, &lf, &lw, &lb, &ln, &lo) != 7) {
		line = strchr(cout, '\n');
		if (line)
			*line = '\0';
		snprintf(why, whycap, "grb-consumerd exit %d: %.120s", cst,
			 cout[0] ? cout : "no summary");
		bench_run(rm, NULL, 0);
		return -1;
	}
	dec = decode_dir(out, &d);
	bench_run(rm, NULL, 0);
	r->write_ns = ns;
	r->drain_ns = w.t_change > start ? w.t_change - start : 0;
	r->bytes = w.bytes;
	r->other_bytes = w.other;
	r->kept = (long long)d.records;
	r->lost = (long long)refused;
	r->mismatch = dec != 0 || wst != 0 || d.bad != 0 ||
		      d.records + refused != n || d.records != written ||
		      d.records != cread || lost != refused ||
		      lf + lw + lb + ln + lo != refused || w.bytes != cbytes;
	snprintf(r->check, sizeof(r->check), "records in the files "
		 "(decoded) %llu + refused %llu %s %llu calls; written %llu, "
		 "grb-consumerd read %llu, lost %llu, %llu bytes%s",
		 (unsigned long long)d.records, refused,
		 d.records + refused == n ? "=" : "!=",
		 (unsigned long long)n, written, cread,
		 lf + lw + lb + ln + lo, cbytes,
		 dec || d.bad ? "; FILES DO NOT DECODE" : "");
	return 0;
}

/* ---- rows ---- */

struct xp_series {
	struct xproc_run run[64];
	int n;
};

static struct bench_row *xp_row(const char *system, const char *key_sys,
				const char *name, const char *unit,
				const double *v, int n)
{
	struct bench_stat st;
	struct bench_row *row;

	row = report_add("xp/%s/%s", key_sys, name);
	report_describe(row, "xproc", system, name, unit, BENCH_XPROC_SUBBUF,
			1, 1);
	bench_stat_of(v, n, &st);
	report_set(row, &st);
	return row;
}

static void series_rows(const char *system, const char *key_sys,
			const char *config, uint64_t n,
			const struct xp_series *s)
{
	double ns[64], mb[64], rec[64], lost[64], bpr[64], tail[64];
	unsigned long long bytes = 0, other = 0, kept = 0, lsum = 0;
	struct bench_row *row;
	const char *check = "";
	int i, bad = 0;

	for (i = 0; i < s->n; i++) {
		const struct xproc_run *r = &s->run[i];
		double t = (double)r->drain_ns;

		ns[i] = (double)r->write_ns / (double)r->calls;
		mb[i] = t > 0 ? (double)r->bytes * 1e3 / t : NAN;
		rec[i] = t > 0 && r->kept >= 0 ?
			 (double)r->kept * 1e9 / t : NAN;
		lost[i] = r->lost >= 0 ? (double)r->lost : NAN;
		bpr[i] = r->kept > 0 ? (double)r->bytes / (double)r->kept :
			 NAN;
		tail[i] = r->drain_ns >= r->write_ns ?
			  (double)(r->drain_ns - r->write_ns) / 1e6 : 0;
		bytes += r->bytes;
		other += r->other_bytes;
		kept += r->kept > 0 ? (unsigned long long)r->kept : 0;
		lsum += r->lost > 0 ? (unsigned long long)r->lost : 0;
		bad += r->mismatch;
		if (r->mismatch || !check[0])
			check = r->check;
	}
	row = xp_row(system, key_sys, "ns_per_record", "ns/record", ns, s->n);
	snprintf(row->config, sizeof(row->config), "%s", config);
	snprintf(row->note, sizeof(row->note), "writer process's loop of "
		 "%llu calls / calls", (unsigned long long)n);
	row = xp_row(system, key_sys, "drain_mb_s", "MB/s", mb, s->n);
	snprintf(row->config, sizeof(row->config), "%s", config);
	snprintf(row->note, sizeof(row->note), "stream-file bytes / (writer's "
		 "first call -> files at final size, 1 ms polls); %llu bytes "
		 "in %d runs (+%llu metadata/index bytes)", bytes, s->n,
		 other);
	row = xp_row(system, key_sys, "drain_records_s", "records/s", rec,
		     s->n);
	snprintf(row->config, sizeof(row->config), "%s", config);
	snprintf(row->note, sizeof(row->note), "records in the output / the "
		 "same time; %llu records in %d runs", kept, s->n);
	row = xp_row(system, key_sys, "lost", "records", lost, s->n);
	snprintf(row->config, sizeof(row->config), "%s", config);
	snprintf(row->note, sizeof(row->note), "per run of %llu calls; %llu "
		 "in %d runs", (unsigned long long)n, lsum, s->n);
	row = xp_row(system, key_sys, "tail_ms", "ms", tail, s->n);
	snprintf(row->config, sizeof(row->config), "%s", config);
	snprintf(row->note, sizeof(row->note), "writer's last call -> the "
		 "files at their final size (the drain time less the loop)");
	row = xp_row(system, key_sys, "bytes_per_record", "bytes/record",
		     bpr, s->n);
	snprintf(row->config, sizeof(row->config), "%s", config);
	snprintf(row->note, sizeof(row->note), "stream-file bytes / records "
		 "in them (headers, padding included)");
	row = report_add("xp/%s/check", key_sys);
	report_describe(row, "xproc", system, "check", "mismatches",
			BENCH_XPROC_SUBBUF, 1, 1);
	snprintf(row->config, sizeof(row->config), "%s", config);
	row->value = row->min = row->max = bad;
	row->runs = s->n;
	if (bad)
		snprintf(row->note, sizeof(row->note), "COUNTS DO NOT ADD UP "
			 "in %d of %d runs: %s", bad, s->n, check);
	else
		snprintf(row->note, sizeof(row->note), "%d of %d runs add "
			 "up; run 1: %s", s->n, s->n, check);
}

static void ratio_row(const char *name, const char *unit)
{
	const struct bench_row *g = report_find("xp/grb/%s", name);
	const struct bench_row *l = report_find("xp/lttng/%s", name);
	struct bench_row *row;

	if (!g || !l || isnan(g->value) || isnan(l->value) || l->value == 0)
		return;
	row = report_add("xp/ratio/%s", name);
	report_describe(row, "xproc", "grb/lttng-ust", name, unit,
			BENCH_XPROC_SUBBUF, 1, 1);
	snprintf(row->config, sizeof(row->config), "grb's median / "
		 "LTTng-UST's median, same run");
	row->value = row->min = row->max = g->value / l->value;
	row->runs = 1;
}

/* /dev/shm when it is tmpfs: DIR/grb-bench-xproc.XXXXXX into @dir. */
static int tmpfs_dir(char *dir, size_t cap, const char **why)
{
	struct statfs fs;

	if (statfs("/dev/shm", &fs) != 0 ||
	    (unsigned long)fs.f_type != (unsigned long)TMPFS_MAGIC_) {
		*why = "/dev/shm is not a tmpfs";
		return -1;
	}
	snprintf(dir, cap, "/dev/shm/grb-bench-xproc.XXXXXX");
	if (!mkdtemp(dir)) {
		*why = "cannot create a directory in /dev/shm";
		return -1;
	}
	return 0;
}

void bench_xproc_run(const struct bench_opts *o)
{
	static struct xp_series gs, ls;
	struct grb_side g;
	struct bench_lttng_xp *lx = NULL;
	char dir[PATH_MAX - 64], why[192], cfg[96];
	char *rm[] = { (char *)"rm", (char *)"-rf", dir, NULL };
	const char *w = NULL;
	int i, have_grb = 1;

	memset(&gs, 0, sizeof(gs));
	memset(&ls, 0, sizeof(ls));
	if (tmpfs_dir(dir, sizeof(dir), &w) != 0) {
		report_skip("xproc", "%s", w);
		return;
	}
	g.dir = dir;
	if (find_consumerd(g.consumerd, sizeof(g.consumerd)) != 0) {
		report_skip("xproc grb", "grb-consumerd not found (built with "
			    "GRB_BUILD_TOOLS, next to grb_bench, or in PATH)");
		have_grb = 0;
	}
	if (!o->lttng) {
		report_skip("xproc lttng-ust", "--no-lttng");
	} else {
		lx = bench_lttng_xproc_open(&w);
		if (!lx)
			report_skip("xproc lttng-ust", "%s", w);
	}
	for (i = 0; i < o->runs && i < 64; i++) {
		if (have_grb) {
			fprintf(stderr, "  xproc: grb + grb-consumerd, run %d\n",
				i + 1);
			if (grb_run(&g, o->n_xproc, i, &gs.run[gs.n], why,
				    sizeof(why)) == 0) {
				gs.n++;
			} else {
				report_skip("xproc grb", "%s", why);
				have_grb = 0;
			}
		}
		if (lx) {
			fprintf(stderr, "  xproc: lttng-ust + consumer daemon, "
				"run %d\n", i + 1);
			if (bench_lttng_xproc_run(lx, dir, o->n_xproc, i,
						  &ls.run[ls.n], why,
						  sizeof(why)) == 0) {
				ls.n++;
			} else {
				report_skip("xproc lttng-ust", "%s", why);
				bench_lttng_xproc_close(lx);
				lx = NULL;
			}
		}
	}
	bench_lttng_xproc_close(lx);
	bench_run(rm, NULL, 0);
	if (gs.n) {
		snprintf(cfg, sizeof(cfg), "shared basic channel, per-CPU, "
			 "discard, grb-consumerd splice to tmpfs");
		series_rows("grb", "grb", cfg, o->n_xproc, &gs);
	}
	if (ls.n) {
		snprintf(cfg, sizeof(cfg), "tracepoint, per-UID buffers, "
			 "discard, consumer daemon to tmpfs");
		series_rows("lttng-ust", "lttng", cfg, o->n_xproc, &ls);
	}
	ratio_row("ns_per_record", "x");
	ratio_row("drain_mb_s", "x");
	ratio_row("drain_records_s", "x");
}
