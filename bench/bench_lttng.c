/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_lttng.c - LTTng-UST 2.13 measured beside grb: sessions set
 * up with the lttng command, the traced loop run by grb_bench_lttng, and
 * every figure checked against the events LTTng actually recorded.
 *
 * Isolation: LTTNG_HOME points at a fresh temporary directory, so the
 * lttng client state and a per-user session daemon are private to this
 * run; sessions get unique names and are destroyed.  When no session
 * daemon answers, `lttng-sessiond --daemonize --no-kernel` is started
 * with a pid file in that directory, and only that pid is stopped at the
 * end.
 *
 * Jobs, all with per-UID (per-CPU) buffers of 1 MiB per CPU:
 *   fr  snapshot session, overwrite channel, nothing consumes during the
 *       run (flight recorder, no reader); one per sub-buffer size; the
 *       128 KiB one also runs the scalability threads.  Checked by
 *       recording a snapshot and counting its events.
 *   rd  normal session, overwrite channel, the consumer daemon reads and
 *       writes the trace while the application runs (with a reader).
 *       Its trace is handed to bench_ctf.c (bench_ctf_lttng_trace(); with
 *       --quick, the 128 KiB snapshot's) before it is removed: the CTF
 *       client's traces are compared with it.
 *   dc  normal session, discard channel, consumer daemon reading;
 *       events read are counted in the trace, events lost come from
 *       `lttng list` ("Discarded events"); they must add up to the calls.
 *   xp  the cross-process section's (bench_xproc.c, xproc.h): normal
 *       session on tmpfs, discard channel of 8 x 128 KiB sub-buffers, one
 *       run of N events per session, `lttng stop` timed by watching the
 *       trace files grow.
 * Counting needs babeltrace2; without it the figures are marked
 * unverified.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "bench_ctf.h"
#include "report.h"
#include "util.h"
#include "xproc.h"

#define OUT_CAP (256 * 1024)

struct lttng_env {
	char tmp[PATH_MAX - 64];   /* LTTNG_HOME and trace output */
	char app[PATH_MAX];        /* grb_bench_lttng */
	pid_t daemon;              /* the session daemon we started, or 0 */
	int seq;
	int have_bt;               /* babeltrace2 present */
	char *out;                 /* OUT_CAP bytes of command output */
	char *saved_home;          /* LTTNG_HOME before env_open(), or NULL */
	int home_set;              /* env_open() set LTTNG_HOME */
};

/* Run `lttng ARGS...` (NULL-terminated); output in env->out. */
static int lttng(struct lttng_env *env, ...)
{
	char *argv[24];
	va_list ap;
	int n = 0;

	argv[n++] = (char *)"lttng";
	va_start(ap, env);
	while (n < 23 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	return bench_run(argv, env->out, OUT_CAP);
}

/* First line of the last command's output, for a skip reason. */
static const char *first_line(char *s)
{
	char *nl;

	while (*s == '\n' || *s == ' ')
		s++;
	nl = strchr(s, '\n');
	if (nl)
		*nl = '\0';
	return *s ? s : "no output";
}

static int daemon_answers(struct lttng_env *env)
{
	return lttng(env, "list", NULL) == 0;
}

static int daemon_start(struct lttng_env *env, const char **why)
{
	char pidfile[PATH_MAX], opt[PATH_MAX + 16];
	char *argv[] = { (char *)"lttng-sessiond", (char *)"--daemonize",
			 (char *)"--no-kernel", opt, NULL };
	FILE *f;
	int i, pid = 0;

	snprintf(pidfile, sizeof(pidfile), "%s/sessiond.pid", env->tmp);
	snprintf(opt, sizeof(opt), "--pidfile=%s", pidfile);
	if (bench_run(argv, NULL, 0) != 0) {
		*why = "lttng-sessiond --daemonize --no-kernel failed";
		return -1;
	}
	f = fopen(pidfile, "re");
	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	env->daemon = pid > 0 ? (pid_t)pid : 0;
	for (i = 0; i < 100; i++) {
		if (daemon_answers(env)) {
			fprintf(stderr, "  lttng-ust: started lttng-sessiond "
				"(pid %d), LTTNG_HOME=%s\n", pid, env->tmp);
			return 0;
		}
		bench_poll_sleep(100000);
	}
	*why = "the session daemon started but does not answer";
	return -1;
}

/* Stop the daemon we started: its recorded pid only. */
static void daemon_stop(struct lttng_env *env)
{
	char path[64], comm[64] = "";
	FILE *f;
	int i;

	if (!env->daemon)
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)env->daemon);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	if (strncmp(comm, "lttng-sessiond", 14) != 0)
		return;
	kill(env->daemon, SIGTERM);
	for (i = 0; i < 100 && kill(env->daemon, 0) == 0; i++)
		bench_poll_sleep(100000);
	if (kill(env->daemon, 0) == 0)
		kill(env->daemon, SIGKILL);
	fprintf(stderr, "  lttng-ust: stopped lttng-sessiond (pid %d)\n",
		(int)env->daemon);
	env->daemon = 0;
}

/* Bytes of the regular files under a trace directory. */
static uint64_t trace_bytes;

static int add_size(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (type == FTW_F)
		trace_bytes += (uint64_t)st->st_size;
	return 0;
}

/*
 * Events in a trace directory, or -1 when it cannot be read.  The
 * babeltrace2 run is timed (process start included) and the trace's size
 * taken, for the read-side peer rows.
 */
static long long count_events(struct lttng_env *env, const char *dir,
			      uint64_t *ns, uint64_t *bytes)
{
	char *argv[] = { (char *)"babeltrace2", (char *)dir,
			 (char *)"--component=sink.utils.counter",
			 (char *)"--params=step=+0", NULL };
	uint64_t t0 = bench_now_ns();
	char *p;

	if (bench_run(argv, env->out, OUT_CAP) != 0)
		return -1;
	*ns = bench_now_ns() - t0;
	trace_bytes = 0;
	nftw(dir, add_size, 16, FTW_PHYS);
	*bytes = trace_bytes;
	p = strstr(env->out, " Event messages");
	if (!p)
		p = strstr(env->out, " Event message");
	if (!p)
		return -1;
	while (p > env->out && p[-1] != '\n')
		p--;
	return strtoll(p, NULL, 10);
}

/* "Discarded events: N" or "Lost packets: N" from `lttng list NAME`. */
static long long list_stat(struct lttng_env *env, const char *name,
			   const char *what)
{
	char *p;

	if (lttng(env, "list", name, NULL) != 0)
		return -1;
	p = strstr(env->out, what);
	return p ? strtoll(p + strlen(what), NULL, 10) : 0;
}

enum job_kind { JOB_FR, JOB_RD, JOB_DC };

struct job {
	enum job_kind kind;
	size_t subbuf;
	int scale;
};

struct job_out {
	double single[64];
	int nsingle;
	double scale[BENCH_MAX_THREADS][64];
	int nscale[BENCH_MAX_THREADS];
	unsigned long long calls, span;
	long long events, discarded;
	long long lost_packets;     /* overwrite + consumer: lttng list */
	uint64_t bt_ns, bt_bytes;   /* babeltrace2's run and the trace size */
};

static void parse_app(const struct bench_opts *o, char *s, struct job_out *r)
{
	char *save = NULL, *line;

	for (line = strtok_r(s, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, b, c, d, e;
		int t;

		if (sscanf(line, "single %llu %llu %llu", &a, &b, &c) == 3 &&
		    r->nsingle < 64 && c) {
			r->single[r->nsingle++] = (double)b / (double)c;
		} else if (sscanf(line, "scale %llu %llu %llu %llu %llu", &a,
				  &b, &c, &d, &e) == 5 && d) {
			for (t = 0; t < BENCH_MAX_THREADS; t++)
				if ((unsigned long long)o->threads[t] == a &&
				    r->nscale[t] < 64)
					r->scale[t][r->nscale[t]++] =
						(double)c / (double)d;
		} else if (sscanf(line, "calls %llu", &a) == 1) {
			r->calls = a;
		} else if (sscanf(line, "span %llu", &a) == 1) {
			r->span = a;
		}
	}
}

static const char *job_name(enum job_kind k)
{
	return k == JOB_FR ? "flight recorder (snapshot)" :
	       k == JOB_RD ? "overwrite + consumer" : "discard + consumer";
}

/* Create session @name writing to @dir, its channel and event; start. */
static int session_create(struct lttng_env *env, const struct job *j,
			  const char *name, const char *dir, char *why,
			  size_t whycap)
{
	char subbuf[32], nsub[32];

	snprintf(subbuf, sizeof(subbuf), "--subbuf-size=%zu", j->subbuf);
	snprintf(nsub, sizeof(nsub), "--num-subbuf=%zu",
		 BENCH_BUF_BYTES / j->subbuf);
	if ((j->kind == JOB_FR ?
	     lttng(env, "create", name, "--snapshot", "--output", dir, NULL) :
	     lttng(env, "create", name, "--output", dir, NULL)) != 0) {
		snprintf(why, whycap, "lttng create: %s", first_line(env->out));
		return -1;
	}
	if (lttng(env, "enable-channel", "--userspace", "--session", name,
		  "--buffers-uid", subbuf, nsub, j->kind == JOB_DC ?
		  "--discard" : "--overwrite", "grbchan", NULL) != 0 ||
	    lttng(env, "enable-event", "--userspace", "--session", name,
		  "--channel", "grbchan", "grb_bench:*", NULL) != 0 ||
	    lttng(env, "start", name, NULL) != 0) {
		snprintf(why, whycap, "lttng: %s", first_line(env->out));
		lttng(env, "destroy", name, NULL);
		return -1;
	}
	return 0;
}

/* Run grb_bench_lttng for the job; its figures into @r. */
static int app_run(struct lttng_env *env, const struct bench_opts *o,
		   const struct job *j, struct job_out *r, char *why,
		   size_t whycap)
{
	char n1[32], n2[32], k[16], warm[32], threads[64];
	char *argv[16];
	int n = 0, ret;

	snprintf(n1, sizeof(n1), "%llu", (unsigned long long)
		 (j->kind == JOB_DC ? o->n_discard : o->n_single));
	snprintf(k, sizeof(k), "%d", o->runs);
	snprintf(warm, sizeof(warm), "%llu", (unsigned long long)
		 (j->kind == JOB_DC ? 0 : o->n_warm));
	argv[n++] = env->app;
	argv[n++] = (char *)"--single";
	argv[n++] = n1;
	argv[n++] = k;
	argv[n++] = warm;
	if (j->scale) {
		snprintf(n2, sizeof(n2), "%llu",
			 (unsigned long long)o->n_scale);
		snprintf(threads, sizeof(threads), "%d,%d,%d,%d",
			 o->threads[0], o->threads[1], o->threads[2],
			 o->threads[3]);
		argv[n++] = (char *)"--scale";
		argv[n++] = n2;
		argv[n++] = k;
		argv[n++] = threads;
	}
	argv[n] = NULL;
	ret = bench_run(argv, env->out, OUT_CAP);
	if (ret == 0)
		parse_app(o, env->out, r);
	else
		snprintf(why, whycap, "not recorded: the traced application "
			 "%s (exit %d)", ret == 2 ? "never saw the event "
			 "enabled (did not register)" : "failed", ret);
	return ret;
}

/* Every run printed, and LTTng recorded something. */
static int job_check(const struct lttng_env *env, const struct bench_opts *o,
		     const struct job *j, const struct job_out *r, char *why,
		     size_t whycap)
{
	int t;

	if (env->have_bt && r->events <= 0) {
		snprintf(why, whycap, "not recorded: no event in the %s",
			 j->kind == JOB_FR ? "snapshot" : "trace");
		return -1;
	}
	if (r->nsingle != o->runs) {
		snprintf(why, whycap, "the traced application printed %d of "
			 "%d runs", r->nsingle, o->runs);
		return -1;
	}
	for (t = 0; j->scale && t < BENCH_MAX_THREADS; t++)
		if (r->nscale[t] != o->runs) {
			snprintf(why, whycap, "scalability runs missing");
			return -1;
		}
	return 0;
}

/* Create the session, run the application, check, destroy. */
static int run_job(struct lttng_env *env, const struct bench_opts *o,
		   const struct job *j, struct job_out *r, char *why,
		   size_t whycap)
{
	char name[64], dir[PATH_MAX];
	char *rm[] = { (char *)"rm", (char *)"-rf", dir, NULL };
	int ret;

	memset(r, 0, sizeof(*r));
	r->events = r->discarded = r->lost_packets = -1;
	snprintf(name, sizeof(name), "grb-bench-%d-%d", (int)getpid(),
		 env->seq++);
	snprintf(dir, sizeof(dir), "%s/%s", env->tmp, name);
	if (session_create(env, j, name, dir, why, whycap) != 0)
		return -1;
	ret = app_run(env, o, j, r, why, whycap);
	lttng(env, "stop", name, NULL);
	if (ret == 0 && j->kind == JOB_FR &&
	    lttng(env, "snapshot", "record", "--session", name, NULL) != 0) {
		snprintf(why, whycap, "lttng snapshot record: %s",
			 first_line(env->out));
		ret = -1;
	}
	if (ret == 0 && j->kind == JOB_DC)
		r->discarded = list_stat(env, name, "Discarded events:");
	if (ret == 0 && j->kind == JOB_RD)
		r->lost_packets = list_stat(env, name, "Lost packets:");
	lttng(env, "destroy", name, NULL);
	if (ret == 0 && env->have_bt)
		r->events = count_events(env, dir, &r->bt_ns, &r->bt_bytes);
	/* The CTF client's traces are compared with this one (bench_ctf.c). */
	if (ret == 0 && env->have_bt && j->kind != JOB_DC &&
	    bench_ctf_wants_lttng_trace(o, j->kind == JOB_FR, j->subbuf)) {
		struct bench_ctf_peer p = {
			.subbuf = j->subbuf, .snapshot = j->kind == JOB_FR,
			.calls = r->calls, .events = r->events,
			.lost_packets = r->lost_packets,
		};

		bench_ctf_lttng_trace(dir, &p);
	}
	bench_run(rm, NULL, 0);
	if (ret != 0)
		return -1;
	return job_check(env, o, j, r, why, whycap);
}

static struct bench_row *lt_row(const char *section, const char *name,
				const char *unit, size_t subbuf, int threads,
				int reader, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

static struct bench_row *lt_row(const char *section, const char *name,
				const char *unit, size_t subbuf, int threads,
				int reader, const char *fmt, ...)
{
	char key[64];
	struct bench_row *row;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	row = report_add("%s", key);
	report_describe(row, section, "lttng-ust", name, unit, subbuf,
			threads, reader);
	return row;
}

static void verified_note(const struct lttng_env *env,
			  const struct job_out *r, struct bench_row *row)
{
	if (env->have_bt)
		snprintf(row->note, sizeof(row->note),
			 "%lld events recorded of %llu calls", r->events,
			 r->calls);
	else
		snprintf(row->note, sizeof(row->note),
			 "unverified: babeltrace2 not installed");
}

/* Discard job: attempts, written, lost, read and whether they add up. */
static void discard_rows(const struct bench_opts *o, const struct job *j,
			 const struct job_out *r, const struct bench_stat *st)
{
	struct bench_row *row;
	long long read = r->events, lost = r->discarded;
	int ok = read >= 0 && lost >= 0 &&
		 (unsigned long long)(read + lost) == r->calls;
	static const char *const metric[] = {
		"attempts", "written", "lost", "read", "check" };
	double val[5];
	int i;

	val[0] = (double)r->calls;
	val[1] = read >= 0 ? (double)read : NAN;
	val[2] = lost >= 0 ? (double)lost : NAN;
	val[3] = val[1];
	val[4] = ok ? 0 : 1;
	for (i = 0; i < 5; i++) {
		row = lt_row("discard", metric[i], i == 4 ?
			     "mismatches" : "records", j->subbuf, 1, 1,
			     "dc/lttng/%s", metric[i]);
		snprintf(row->config, sizeof(row->config),
			 "tracepoint, per-UID buffers, discard, "
			 "consumer daemon");
		snprintf(row->note, sizeof(row->note), "summed over "
			 "%d runs; lost = lttng list \"Discarded "
			 "events\"; read = events in the trace%s",
			 o->runs, ok ? "" : "; DO NOT ADD UP");
		row->value = row->min = row->max = val[i];
	}
	row = lt_row("discard", "ns_per_call", "ns/call", j->subbuf, 1,
		     1, "dc/lttng/ns_per_call");
	snprintf(row->config, sizeof(row->config), "tracepoint, "
		 "per-UID buffers, discard, consumer daemon");
	snprintf(row->note, sizeof(row->note), "a tracepoint does not "
		 "say whether it discarded");
	report_set(row, st);
	if (r->span && read > 0) {
		row = lt_row("discard", "reader_rate", "entries/s",
			     j->subbuf, 1, 1, "dc/lttng/reader_rate");
		snprintf(row->config, sizeof(row->config),
			 "consumer daemon: events in the trace / "
			 "writer's wall time");
		row->value = row->min = row->max =
			(double)read * 1e9 / (double)r->span;
		row->runs = 1;
	}
}

/*
 * The read side's peer: babeltrace2 reading the trace this job recorded,
 * counted with its counter sink; wall time of the whole process.
 */
static void reader_peer_row(const struct job *j, const struct job_out *r)
{
	static const char *const kind[] = { "fr", "rd", "dc" };
	struct bench_row *row;

	row = lt_row("read", "babeltrace2_events_per_s", "events/s",
		     j->subbuf, 1, 1, "rd/bt2/%s/%zu", kind[j->kind],
		     j->subbuf);
	snprintf(row->system, sizeof(row->system), "babeltrace2");
	snprintf(row->config, sizeof(row->config), "counter sink, the %s "
		 "trace in /tmp", job_name(j->kind));
	snprintf(row->note, sizeof(row->note), "%lld events, %llu trace "
		 "bytes, %.3f s with the process start", r->events,
		 (unsigned long long)r->bt_bytes, (double)r->bt_ns / 1e9);
	row->value = row->min = row->max =
		(double)r->events * 1e9 / (double)r->bt_ns;
	row->runs = 1;
}

static void job_rows(const struct lttng_env *env, const struct bench_opts *o,
		     const struct job *j, const struct job_out *r)
{
	struct bench_stat st;
	struct bench_row *row;
	int t;

	bench_stat_of(r->single, r->nsingle, &st);
	if (j->kind == JOB_FR || j->kind == JOB_RD) {
		row = lt_row("overwrite", "ns_per_entry", "ns/entry", j->subbuf,
			     1, j->kind == JOB_RD, "ow/lttng/%zu/%s", j->subbuf,
			     j->kind == JOB_FR ? "alone" : "reader");
		snprintf(row->config, sizeof(row->config), "tracepoint, "
			 "per-UID buffers, %s", job_name(j->kind));
		verified_note(env, r, row);
		report_set(row, &st);
	}
	if (j->kind == JOB_RD && r->events > 0 && r->span) {
		row = lt_row("overwrite", "reader_entries_per_s", "entries/s",
			     j->subbuf, 1, 1, "ow/lttng/%zu/reader/rate",
			     j->subbuf);
		snprintf(row->config, sizeof(row->config), "consumer daemon: "
			 "events in the trace / writer's wall time");
		row->value = row->min = row->max =
			(double)r->events * 1e9 / (double)r->span;
		row->runs = 1;
	}
	if (j->kind == JOB_DC)
		discard_rows(o, j, r, &st);
	if (r->events > 0 && r->bt_ns)
		reader_peer_row(j, r);
	for (t = 0; j->scale && t < BENCH_MAX_THREADS; t++) {
		bench_stat_of(r->scale[t], r->nscale[t], &st);
		row = lt_row("scale", "cpu_ns_per_record", "ns CPU/record",
			     j->subbuf, o->threads[t], 0, "sc/lttng/%d",
			     o->threads[t]);
		snprintf(row->config, sizeof(row->config), "tracepoint, "
			 "per-UID buffers, flight recorder (snapshot), "
			 "%llu events per thread",
			 (unsigned long long)o->n_scale);
		snprintf(row->note, sizeof(row->note), "%s",
			 o->threads[t] > bench_nr_cpus() ?
			 "more threads than CPUs" : "");
		report_set(row, &st);
	}
}

static int env_setup(struct lttng_env *env, const char **why)
{
	char dir[PATH_MAX - 32];

	if (bench_self_dir(dir, sizeof(dir)) != 0) {
		*why = "cannot find the program's directory";
		return -1;
	}
	snprintf(env->app, sizeof(env->app), "%s/grb_bench_lttng", dir);
	if (access(env->app, X_OK) != 0) {
		*why = "lttng-ust (pkg-config lttng-ust, liblttng-ust-dev) "
		       "not found at build time";
		return -1;
	}
	if (!bench_have_prog("lttng") || !bench_have_prog("lttng-sessiond")) {
		*why = "lttng-tools not installed (lttng, lttng-sessiond)";
		return -1;
	}
	snprintf(env->tmp, sizeof(env->tmp), "/tmp/grb-bench-lttng.XXXXXX");
	if (!mkdtemp(env->tmp)) {
		*why = "cannot create a temporary directory";
		return -1;
	}
	env->have_bt = bench_have_prog("babeltrace2");
	return 0;
}

/*
 * The private LTTng environment: temporary LTTNG_HOME, a session daemon
 * (started when none answers).  Return: 0, or -1 with *@why set.  The
 * caller calls env_close() after either.
 */
static int env_open(struct lttng_env *env, const char **why)
{
	char *old_home = getenv("LTTNG_HOME");

	memset(env, 0, sizeof(*env));
	if (env_setup(env, why) != 0)
		return -1;
	env->out = (char *)malloc(OUT_CAP);
	if (!env->out) {
		*why = "out of memory";
		return -1;
	}
	env->saved_home = old_home ? strdup(old_home) : NULL;
	env->home_set = 1;
	setenv("LTTNG_HOME", env->tmp, 1);
	setenv("LTTNG_UST_REGISTER_TIMEOUT", "10000", 1);
	if (!daemon_answers(env) && daemon_start(env, why) != 0)
		return -1;
	return 0;
}

/* Stop our daemon, remove the temporary directory, restore LTTNG_HOME. */
static void env_close(struct lttng_env *env)
{
	char *rm[] = { (char *)"rm", (char *)"-rf", env->tmp, NULL };

	daemon_stop(env);
	if (env->tmp[0])
		bench_run(rm, NULL, 0);
	if (env->home_set && env->saved_home)
		setenv("LTTNG_HOME", env->saved_home, 1);
	else if (env->home_set)
		unsetenv("LTTNG_HOME");
	if (env->home_set)
		unsetenv("LTTNG_UST_REGISTER_TIMEOUT");
	env->home_set = 0;
	free(env->saved_home);
	free(env->out);
	env->saved_home = NULL;
	env->out = NULL;
}

void bench_lttng_run(const struct bench_opts *o)
{
	struct job jobs[8];
	struct lttng_env env;
	const char *why = NULL;
	char reason[192];
	int nj = 0, i;

	if (!o->lttng) {
		report_skip("lttng-ust", "--no-lttng");
		return;
	}
	if (env_open(&env, &why) != 0) {
		report_skip("lttng-ust", "%s", why);
		goto out;
	}
	for (i = 0; i < BENCH_NR_SUBBUFS; i++) {
		int is_scale = o->subbufs[i] == BENCH_SCALE_SUBBUF;

		if (!o->quick || is_scale)
			jobs[nj++] = (struct job){ JOB_FR, o->subbufs[i],
						   is_scale };
	}
	for (i = 0; o->lttng_reader && i < BENCH_NR_SUBBUFS; i++)
		jobs[nj++] = (struct job){ JOB_RD, o->subbufs[i], 0 };
	jobs[nj++] = (struct job){ JOB_DC, BENCH_DISCARD_SUBBUF, 0 };
	for (i = 0; i < nj; i++) {
		struct job_out r;
		char what[64];

		fprintf(stderr, "  lttng-ust: %s, %zu KiB sub-buffers\n",
			job_name(jobs[i].kind), jobs[i].subbuf >> 10);
		if (run_job(&env, o, &jobs[i], &r, reason,
			    sizeof(reason)) != 0) {
			snprintf(what, sizeof(what), "lttng-ust %s %zu KiB",
				 job_name(jobs[i].kind), jobs[i].subbuf >> 10);
			report_skip(what, "%s", reason);
			continue;
		}
		job_rows(&env, o, &jobs[i], &r);
	}
out:
	env_close(&env);
}

/*
 * The cross-process section's LTTng-UST side (xproc.h): the environment
 * above, held open across the section's runs.
 */
struct bench_lttng_xp {
	struct lttng_env env;
};

struct bench_lttng_xp *bench_lttng_xproc_open(const char **why)
{
	struct bench_lttng_xp *x;

	x = (struct bench_lttng_xp *)calloc(1, sizeof(*x));
	if (!x) {
		*why = "out of memory";
		return NULL;
	}
	if (env_open(&x->env, why) != 0) {
		env_close(&x->env);
		free(x);
		return NULL;
	}
	if (!x->env.have_bt)
		fprintf(stderr, "  xproc: babeltrace2 not installed: LTTng's "
			"events in the trace are not counted\n");
	return x;
}

void bench_lttng_xproc_close(struct bench_lttng_xp *x)
{
	if (!x)
		return;
	env_close(&x->env);
	free(x);
}

/* "single 0 NS N", "start T" and "calls C" from grb_bench_lttng. */
static int xp_parse_app(char *s, struct xproc_run *r, uint64_t *start)
{
	char *save = NULL, *line;
	unsigned long long a, b, c;
	int got = 0;

	for (line = strtok_r(s, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "single %llu %llu %llu", &a, &b, &c) == 3) {
			r->write_ns = b;
			got |= 1;
		} else if (sscanf(line, "start %llu", &a) == 1) {
			*start = a;
			got |= 2;
		} else if (sscanf(line, "calls %llu", &a) == 1) {
			r->calls = a;
			got |= 4;
		}
	}
	return got == 7 ? 0 : -1;
}

int bench_lttng_xproc_run(struct bench_lttng_xp *x, const char *dir,
			  uint64_t n, int idx, struct xproc_run *r,
			  char *why, size_t whycap)
{
	struct lttng_env *env = &x->env;
	const struct job j = { JOB_DC, BENCH_XPROC_SUBBUF, 0 };
	char name[64], tdir[PATH_MAX], nbuf[32];
	char *app[] = { env->app, (char *)"--single", nbuf, (char *)"1",
			(char *)"0", NULL };
	char *stop[] = { (char *)"lttng", (char *)"stop", name, NULL };
	char *rm[] = { (char *)"rm", (char *)"-rf", tdir, NULL };
	struct xproc_watch w;
	uint64_t start = 0, bt_ns = 0, bt_bytes = 0;
	int ret, pid, fd = -1;

	memset(r, 0, sizeof(*r));
	r->kept = r->lost = -1;
	snprintf(name, sizeof(name), "grb-xproc-%d-%d", (int)getpid(), idx);
	snprintf(tdir, sizeof(tdir), "%.*s/lttng-%d", PATH_MAX - 32, dir,
		 idx);
	snprintf(nbuf, sizeof(nbuf), "%llu", (unsigned long long)n);
	if (session_create(env, &j, name, tdir, why, whycap) != 0)
		return -1;
	ret = bench_run(app, env->out, OUT_CAP);
	if (ret != 0 || xp_parse_app(env->out, r, &start) != 0) {
		snprintf(why, whycap, "the traced application %s (exit %d)",
			 ret == 2 ? "never saw the event enabled" :
			 "failed or printed no figures", ret);
		lttng(env, "destroy", name, NULL);
		bench_run(rm, NULL, 0);
		return -1;
	}
	/* The consumer daemon writes the last sub-buffers when the session
	 * stops (`lttng stop` flushes them and returns once no data is
	 * pending): its files reach their final size during the stop. */
	xproc_watch_init(&w, tdir, "grbchan_");
	xproc_watch_poll(&w);
	pid = bench_spawn(stop, &fd);
	ret = pid < 0 ? -1 : xproc_watch_child(&w, pid, fd, env->out,
					       OUT_CAP, BENCH_XPROC_TIMEOUT_MS);
	if (fd >= 0)
		close(fd);
	if (ret != 0) {
		snprintf(why, whycap, "lttng stop: %s (exit %d)",
			 first_line(env->out), ret);
		lttng(env, "destroy", name, NULL);
		bench_run(rm, NULL, 0);
		return -1;
	}
	r->drain_ns = w.t_change > start ? w.t_change - start : 0;
	r->bytes = w.bytes;
	r->other_bytes = w.other;
	r->lost = list_stat(env, name, "Discarded events:");
	lttng(env, "destroy", name, NULL);
	if (env->have_bt)
		r->kept = count_events(env, tdir, &bt_ns, &bt_bytes);
	bench_run(rm, NULL, 0);
	if (!env->have_bt) {
		snprintf(r->check, sizeof(r->check), "unverified: babeltrace2 "
			 "not installed; discarded = lttng list");
		return 0;
	}
	r->mismatch = r->kept < 0 || r->lost < 0 ||
		      (unsigned long long)(r->kept + r->lost) != r->calls;
	snprintf(r->check, sizeof(r->check), "events in the trace "
		 "(babeltrace2) %lld + discarded (lttng list) %lld %s %llu "
		 "calls", r->kept, r->lost, r->mismatch ? "!=" : "=",
		 (unsigned long long)r->calls);
	return 0;
}
