/* SPDX-License-Identifier: MIT */
/*
 * bench/util.c - clocks, thread placement, the timed loops and child
 * processes shared by every benchmarked system.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static cpu_set_t bench_mask;
static int bench_cpus[CPU_SETSIZE];
static int bench_ncpus;

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_cpus_init(void)
{
	int c;

	CPU_ZERO(&bench_mask);
	if (sched_getaffinity(0, sizeof(bench_mask), &bench_mask) != 0)
		CPU_SET(0, &bench_mask);
	bench_ncpus = 0;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &bench_mask))
			bench_cpus[bench_ncpus++] = c;
}

int bench_nr_cpus(void)
{
	return bench_ncpus;
}

int bench_cpu_for_writer(int i)
{
	return bench_cpus[i % bench_ncpus];
}

int bench_cpu_for_reader(void)
{
	return bench_cpus[1 % bench_ncpus];
}

int bench_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void bench_loop_wall(bench_write_fn fn, void *obj, uint64_t n,
		     struct bench_loop *out)
{
	uint64_t i, refused = 0, t0, t1;

	t0 = bench_now_ns();
	for (i = 0; i < n; i++)
		refused += fn(obj) != 0;
	t1 = bench_now_ns();
	out->ns = t1 - t0;
	out->refused = refused;
}

void bench_loop_batched(bench_write_fn fn, void *obj, uint64_t n,
			struct bench_batches *out)
{
	uint64_t done = 0, start, t0, t1;

	memset(out, 0, sizeof(*out));
	start = bench_now_ns();
	t0 = start;
	while (done < n) {
		uint64_t k = n - done < BENCH_BATCH ? n - done : BENCH_BATCH;
		uint64_t i, bad = 0;

		for (i = 0; i < k; i++)
			bad += fn(obj) != 0;
		t1 = bench_now_ns();
		if (bad == 0) {
			out->ns_written += t1 - t0;
			out->n_written += k;
		} else if (bad == k) {
			out->ns_refused += t1 - t0;
			out->n_refused += k;
		}
		out->refused += bad;
		out->written += k - bad;
		done += k;
		t0 = t1;
	}
	out->ns = t0 - start;
}

struct scale_thread {
	struct bench_scale *s;
	pthread_barrier_t *bar;
	int idx;
	uint64_t cpu_ns, start, end, refused;
};

static void *scale_main(void *p)
{
	struct scale_thread *t = (struct scale_thread *)p;
	struct bench_scale *s = t->s;
	void *obj = s->obj(s->arg, t->idx);
	uint64_t i, refused = 0, c0;

	bench_pin_self(bench_cpu_for_writer(t->idx));
	pthread_barrier_wait(t->bar);
	t->start = bench_now_ns();
	c0 = bench_thread_cpu_ns();
	for (i = 0; i < s->per_thread; i++)
		refused += s->fn(obj) != 0;
	t->cpu_ns = bench_thread_cpu_ns() - c0;
	t->end = bench_now_ns();
	t->refused = refused;
	return NULL;
}

int bench_scale_run(struct bench_scale *s)
{
	struct scale_thread *t;
	pthread_t *tid;
	pthread_barrier_t bar;
	uint64_t first = UINT64_MAX, last = 0;
	int i, started = 0, ret = 0;

	t = (struct scale_thread *)calloc((size_t)s->threads, sizeof(*t));
	tid = (pthread_t *)calloc((size_t)s->threads, sizeof(*tid));
	if (!t || !tid) {
		free(t);
		free(tid);
		return -ENOMEM;
	}
	pthread_barrier_init(&bar, NULL, (unsigned int)s->threads);
	for (i = 0; i < s->threads; i++) {
		t[i].s = s;
		t[i].bar = &bar;
		t[i].idx = i;
		ret = -pthread_create(&tid[i], NULL, scale_main, &t[i]);
		if (ret)
			break;
		started++;
	}
	/* A barrier short of threads would block the started ones forever. */
	if (ret) {
		fprintf(stderr, "grb_bench: cannot start writer threads: %s\n",
			strerror(-ret));
		exit(1);
	}
	s->cpu_ns = 0;
	s->refused = 0;
	for (i = 0; i < started; i++) {
		pthread_join(tid[i], NULL);
		s->cpu_ns += t[i].cpu_ns;
		s->refused += t[i].refused;
		if (t[i].start < first)
			first = t[i].start;
		if (t[i].end > last)
			last = t[i].end;
	}
	s->records = (uint64_t)s->threads * s->per_thread;
	s->wall_ns = last - first;
	pthread_barrier_destroy(&bar);
	free(t);
	free(tid);
	return 0;
}

/* Kill a child that outlives this: a hung lttng or valgrind. */
#define BENCH_RUN_TIMEOUT_MS (600 * 1000)

int bench_spawn(char *const argv[], int *out_fd)
{
	int fd[2] = { -1, -1 };
	pid_t pid;

	if (out_fd && pipe2(fd, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		if (out_fd) {
			close(fd[0]);
			close(fd[1]);
		}
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		sched_setaffinity(0, sizeof(bench_mask), &bench_mask);
		dup2(null, STDIN_FILENO);
		dup2(out_fd ? fd[1] : null, STDOUT_FILENO);
		dup2(out_fd ? fd[1] : null, STDERR_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (out_fd) {
		close(fd[1]);
		*out_fd = fd[0];
	}
	return (int)pid;
}

int bench_run(char *const argv[], char *out, size_t cap)
{
	uint64_t deadline = bench_now_ns() +
			    (uint64_t)BENCH_RUN_TIMEOUT_MS * 1000000u;
	int fd, status, timed_out = 0;
	size_t len = 0;
	pid_t pid;

	if (!out)
		return (pid = bench_spawn(argv, NULL)) < 0 ? -1 :
			bench_wait(pid, BENCH_RUN_TIMEOUT_MS);
	pid = bench_spawn(argv, &fd);
	if (pid < 0)
		return -1;
	for (;;) {
		char scratch[4096];
		char *dst = len + 1 < cap ? out + len : scratch;
		size_t room = len + 1 < cap ? cap - 1 - len : sizeof(scratch);
		struct pollfd pfd = { fd, POLLIN, 0 };
		uint64_t now = bench_now_ns();
		ssize_t r;

		if (now >= deadline) {
			kill(pid, SIGKILL);
			timed_out = 1;
			break;
		}
		r = poll(&pfd, 1, (int)((deadline - now) / 1000000u) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			continue;
		r = read(fd, dst, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (dst != scratch)
			len += (size_t)r;
	}
	close(fd);
	if (cap)
		out[len] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (timed_out)
		return 128 + SIGKILL;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int bench_wait(int pid, unsigned int timeout_ms)
{
	uint64_t deadline = bench_now_ns() + (uint64_t)timeout_ms * 1000000u;
	int status, timed_out = 0;
	pid_t r;

	for (;;) {
		r = waitpid((pid_t)pid, &status, WNOHANG);
		if (r == (pid_t)pid)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (r == 0 && bench_now_ns() >= deadline) {
			kill((pid_t)pid, SIGKILL);
			timed_out = 1;
			while (waitpid((pid_t)pid, &status, 0) < 0)
				if (errno != EINTR)
					return -1;
			break;
		}
		bench_poll_sleep(1000);
	}
	if (timed_out)
		return 128 + SIGKILL;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int bench_have_prog(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);

		if (n > 0 && n + strlen(prog) + 2 < sizeof(buf)) {
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
			if (access(buf, X_OK) == 0)
				return 1;
		}
		path = end ? end + 1 : NULL;
	}
	return 0;
}

int bench_self_dir(char *dir, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
	char *slash;

	if (n <= 0)
		return -1;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

void bench_poll_sleep(unsigned int us)
{
	struct timespec ts = { 0, (long)us * 1000 };

	nanosleep(&ts, NULL);
}

const char *bench_size_str(uint64_t bytes, char *buf, size_t cap)
{
	if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
		snprintf(buf, cap, "%llu MiB", (unsigned long long)(bytes >> 20));
	else if (bytes >= 1024 && bytes % 1024 == 0)
		snprintf(buf, cap, "%llu KiB", (unsigned long long)(bytes >> 10));
	else
		snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
	return buf;
}
