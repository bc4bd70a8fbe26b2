/* SPDX-License-Identifier: MIT */
/*
 * bench/util.h - what every benchmarked system shares: clocks, thread
 * placement, the timed loops, and running child processes.
 *
 * Every system is measured through the same loops, calling its write
 * function through the same function pointer, so that no system gets a
 * cheaper call site than another.  Used by grb_bench and by the LTTng
 * traced application (grb_bench_lttng), which must not link grb.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_NOINLINE __attribute__((noinline))
#define BENCH_INLINE   static inline __attribute__((always_inline))

/* CLOCK_MONOTONIC and CLOCK_THREAD_CPUTIME_ID, in nanoseconds. */
uint64_t bench_now_ns(void);
uint64_t bench_thread_cpu_ns(void);

/*
 * Thread placement, the same for every system: writer i runs on the i-th
 * CPU of the process's affinity mask (modulo their number), the reader on
 * the CPU after the single writer's.  bench_cpus_init() reads the mask
 * once; bench_run() gives child processes the whole mask back, so daemons
 * we start are not pinned.
 */
void bench_cpus_init(void);
int bench_nr_cpus(void);
int bench_cpu_for_writer(int i);
int bench_cpu_for_reader(void);
int bench_pin_self(int cpu);

/* A write of one record: 0 when written, a negative value when refused. */
typedef int (*bench_write_fn)(void *obj);

struct bench_loop {
	uint64_t ns;         /* wall time of the loop */
	uint64_t refused;    /* calls that returned non-zero */
};

/* Call fn(obj) n times; wall time and refusals. */
void bench_loop_wall(bench_write_fn fn, void *obj, uint64_t n,
		     struct bench_loop *out);

/*
 * Discard-mode loop: n calls in batches of BENCH_BATCH, each batch timed.
 * A batch whose calls all succeeded counts toward ns per written record, a
 * batch whose calls were all refused toward ns per discarded record; mixed
 * batches count only in the totals.  Losses come in bursts (the buffer is
 * full until the reader frees a sub-buffer), so few batches are mixed.
 */
#define BENCH_BATCH 256

struct bench_batches {
	uint64_t ns;                 /* wall time of the whole loop */
	uint64_t written, refused;   /* call outcomes */
	uint64_t ns_written, n_written;   /* all-written batches */
	uint64_t ns_refused, n_refused;   /* all-refused batches */
};

void bench_loop_batched(bench_write_fn fn, void *obj, uint64_t n,
			struct bench_batches *out);

/*
 * Scalability run: @threads threads, writer i pinned as above, each calling
 * fn(obj(arg, i)) @per_thread times after a common start barrier.
 */
struct bench_scale {
	bench_write_fn fn;
	void *(*obj)(void *arg, int idx);
	void *arg;
	int threads;
	uint64_t per_thread;
	/* Results. */
	uint64_t cpu_ns;       /* CLOCK_THREAD_CPUTIME_ID summed over writers */
	uint64_t wall_ns;      /* first start to last end */
	uint64_t records;      /* calls made */
	uint64_t refused;
};

/* Return: 0, or a negative errno when a thread could not be started. */
int bench_scale_run(struct bench_scale *s);

/*
 * Run argv (PATH lookup) with the full CPU mask; stdout and stderr go to
 * @out (NUL-terminated, truncated to @cap), or nowhere when @out is NULL.
 * A child still running after 10 minutes is killed.
 * Return: the exit status, 128 + signal, or -1 when it could not start.
 */
int bench_run(char *const argv[], char *out, size_t cap);

/*
 * Start argv (PATH lookup) in the background with the full CPU mask, as
 * bench_run() does; stdin is /dev/null, stdout and stderr go to a pipe
 * whose read end is *out_fd (close-on-exec), or to /dev/null when @out_fd
 * is NULL.  Reap it with bench_wait().
 * Return: the child's pid, or -1 when it could not start.
 */
int bench_spawn(char *const argv[], int *out_fd);

/*
 * Wait for a child of bench_spawn() (or fork()) at most @timeout_ms
 * milliseconds, then kill it (SIGKILL) and reap it.
 * Return: as bench_run().
 */
int bench_wait(int pid, unsigned int timeout_ms);

/* Sleep @us microseconds: a reader that found nothing to read. */
void bench_poll_sleep(unsigned int us);

/* "4 KiB", "1 MiB" or "512 B" into @buf; returns @buf. */
const char *bench_size_str(uint64_t bytes, char *buf, size_t cap);

/* True when @prog is an executable in PATH (or a path that is one). */
int bench_have_prog(const char *prog);

/* The directory of the running executable, for its sibling files. */
int bench_self_dir(char *dir, size_t cap);

#endif /* BENCH_UTIL_H */
