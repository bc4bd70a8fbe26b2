/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_ctf_streams.c - what the CTF client's writer thread
 * puts in the stream files (grb/ctf.h): its counts (events, packets,
 * bytes) against the files it wrote, after events from every CPU; a
 * stream write that fails (the file size limit, EFBIG), which
 * grb_ctf_stop() returns, each file ending at the last packet written
 * whole; and flush_period_ns, with the default period and a small one:
 * a quiet buffer's few events reach the stream files while the tracer
 * runs, each once, with no padding.  A reader of a live trace sees only
 * what these files hold.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "ctf_rig.h"
#include "grb/channel.h"
#include "grb/ctf.h"

/* The writer thread's counts against the stream files it wrote. */
static void contract_output(void)
{
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	struct grb_ctf_stats st;
	struct grb_ctf *t;
	struct dirent *e;
	uint64_t bytes = 0;
	char dir[256];
	DIR *dd;

	snprintf(dir, sizeof(dir), "%s/out", scratch);
	a.trace_dir = dir;
	a.alloc = GRB_ALLOC_PER_CPU;
	a.flush_period_ns = 1000000;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	ev = reg_u64(t);
	for (uint64_t i = 0; i < 1000; i++) {
		if (i % 100 == 0)
			ctf_pin(ctf_cpus[i / 100 % (uint64_t)ctf_ncpus]);
		CHECK_EQ(grb_ctf_emit_raw(t, ev, &i, sizeof(i)), 0);
	}
	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_EQ(grb_ctf_stop(t), -EALREADY);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events, 1000);
	CHECK_U64(st.events_discarded, 0);
	CHECK_U64(st.packets_discarded, 0);
	/* At least the empty first packet of each stream, and the data. */
	CHECK(st.packets >= grb_channel_nr_bufs(grb_ctf_channel(t)) + 1);
	grb_ctf_destroy(t);
	dd = opendir(dir);
	CHECK(dd != NULL);
	while ((e = readdir(dd))) {
		struct stat sb;
		char p[512];

		if (strncmp(e->d_name, "c_", 2))
			continue;
		path_of(p, sizeof(p), dir, e->d_name);
		CHECK_EQ(stat(p, &sb), 0);
		bytes += (uint64_t)sb.st_size;
	}
	closedir(dd);
	CHECK_U64(st.bytes, bytes);
	rm_dir(dir);
}

/*
 * A stream write that fails (the file size limit, EFBIG): grb_ctf_stop()
 * returns that errno, and each stream file ends at the last packet
 * written whole.  In a child, whose limit it sets.
 */
static void contract_write_error(void)
{
	struct grb_ctf_attr a = attr_ok();
	struct packet_head h;
	struct stat sb;
	char dir[256], p[512];
	size_t len, off;
	char *m;
	int status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/efbig", scratch);
	a.trace_dir = dir;
	a.flush_period_ns = 1000000;
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 20000, 20000 };
		const struct grb_ctf_event *ev;
		struct grb_ctf *t;
		int ret;

		signal(SIGXFSZ, SIG_IGN);
		CHECK_EQ(setrlimit(RLIMIT_FSIZE, &rl), 0);
		CHECK_EQ(grb_ctf_create(&a, &t), 0);
		ev = reg_u64(t);
		for (uint64_t i = 0; i < 20000; i++) {
			grb_ctf_emit_raw(t, ev, &i, sizeof(i));
			if (i % 1000 == 0)
				usleep(2000);
		}
		ret = grb_ctf_stop(t);
		if (ret != -EFBIG)
			fprintf(stderr, "grb_ctf_stop: %d, not -EFBIG\n", ret);
		grb_ctf_destroy(t);
		_exit(ret == -EFBIG ? 0 : 1);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	path_of(p, sizeof(p), dir, "c_0");
	CHECK_EQ(stat(p, &sb), 0);
	CHECK(sb.st_size > 0 && sb.st_size <= 20000);
	m = slurp(dir, "c_0", &len);
	CHECK_U64(len, (uint64_t)sb.st_size);
	for (off = 0; off + sizeof(h) <= len; off += h.packet_size / 8) {
		memcpy(&h, m + off, sizeof(h));
		CHECK_EQ(h.magic, 0xC1FC1FC1);
		CHECK(h.packet_size >= sizeof(h) * 8);
	}
	CHECK_U64(off, len);
	free(m);
	rm_dir(dir);
}

/*
 * The events of @n emits, up to 5 s after them, with the tracer left
 * running: the writer thread has to flush their quiet sub-buffer.  0
 * when they did not come out.
 */
static int quiet_events_out(const char *dir, uint64_t n)
{
	unsigned char seen[64];
	uint64_t pads = 0;

	CHECK(n <= sizeof(seen));
	for (int i = 0; i < 500; i++) {
		memset(seen, 0, sizeof(seen));
		if (stream_events(dir, "c", seen, sizeof(seen), &pads) == n) {
			for (uint64_t v = 0; v < n; v++)
				CHECK_EQ(seen[v], 1);
			CHECK_U64(pads, 0);
			return 1;
		}
		sleep_ns(10000000);
	}
	return 0;
}

/*
 * flush_period_ns: a few events on one CPU, then nothing; the tracer is
 * not stopped, so only the writer thread's periodic flush brings them
 * out, with the default period (0) and with a small one.  Per-CPU
 * buffers, so that the other CPUs' stay quiet too.
 */
static void contract_flush_period(uint64_t period_ns)
{
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	struct grb_ctf_stats st;
	struct grb_ctf *t;
	uint64_t pads = 0;
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/flush", scratch);
	a.trace_dir = dir;
	a.alloc = GRB_ALLOC_PER_CPU;
	a.flush_period_ns = period_ns;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	ev = reg_u64(t);
	ctf_pin(ctf_cpus[ctf_ncpus - 1]);
	for (uint64_t v = 0; v < 5; v++)
		CHECK_EQ(grb_ctf_emit_raw(t, ev, &v, sizeof(v)), 0);
	ctf_pin(ctf_cpus[0]);
	if (!quiet_events_out(dir, 5)) {
		fprintf(stderr, "flush_period_ns %llu: events not in the "
			"stream files after 5 s\n",
			(unsigned long long)period_ns);
		CHECK(0);
	}
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events, 5);
	CHECK(st.packets > grb_channel_nr_bufs(grb_ctf_channel(t)));
	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_U64(stream_events(dir, "c", NULL, 0, &pads), 5);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

/*
 * A period of centuries, up to UINT64_MAX (ctf.h sets no bound): the
 * writer thread does not flush the quiet buffer while the tracer runs
 * (the deadline overflowed: it flushed on every pass, with a core kept
 * busy, or every 20 ms), and the events come out at stop.
 */
static void contract_flush_period_huge(uint64_t period_ns)
{
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	struct grb_ctf *t;
	uint64_t pads = 0;
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/flush_huge", scratch);
	a.trace_dir = dir;
	a.alloc = GRB_ALLOC_PER_CPU;
	a.flush_period_ns = period_ns;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	ev = reg_u64(t);
	for (uint64_t v = 0; v < 3; v++)
		CHECK_EQ(grb_ctf_emit_raw(t, ev, &v, sizeof(v)), 0);
	sleep_ns(300000000);
	CHECK_U64(stream_events(dir, "c", NULL, 0, &pads), 0);
	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_U64(stream_events(dir, "c", NULL, 0, &pads), 3);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

/* Packets in the stream file NAME_CPU of @dir (each header gives its
 * size). */
static uint64_t stream_packets(const char *dir, int cpu)
{
	struct packet_head h;
	uint64_t n = 0;
	char name[32], p[512];
	long off = 0;
	FILE *f;

	snprintf(name, sizeof(name), "c_%d", cpu);
	path_of(p, sizeof(p), dir, name);
	f = fopen(p, "rb");
	CHECK(f != NULL);
	while (fseek(f, off, SEEK_SET) == 0 &&
	       fread(&h, sizeof(h), 1, f) == 1) {
		CHECK(h.packet_size >= 8 * sizeof(h));
		off += (long)(h.packet_size / 8);
		n++;
	}
	fclose(f);
	return n;
}

struct busy {
	struct grb_ctf *t;
	const struct grb_ctf_event *ev;
	int cpu;
	atomic_int stop;
};

static void *busy_main(void *arg)
{
	struct busy *b = (struct busy *)arg;

	ctf_pin(b->cpu);
	for (uint64_t v = 0; !atomic_load(&b->stop); v++)
		(void)grb_ctf_emit_raw(b->t, b->ev, &v, sizeof(v));
	return NULL;
}

/*
 * flush_period_ns is a time: a busy CPU, whose packets wake the writer
 * thread all the time, does not make it flush a quiet CPU's sub-buffer
 * more often.  One event a millisecond for a second on the quiet CPU,
 * into 64 KiB sub-buffers it does not fill, with a 400 ms period: a few
 * packets (its first, about three flushes, the last at stop), not one
 * per few wake-ups.
 */
static void contract_period_under_load(void)
{
	struct grb_ctf_attr a = attr_ok();
	struct busy b = { NULL, NULL, 0, 0 };
	uint64_t n, start;
	pthread_t tid;
	char dir[256];

	if (ctf_ncpus < 2) {
		printf("test_ctf_streams: flush period under load skipped: "
		       "one CPU\n");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/load", scratch);
	a.trace_dir = dir;
	a.alloc = GRB_ALLOC_PER_CPU;
	a.subbuf_size = 65536;
	a.flush_period_ns = 400000000;
	CHECK_EQ(grb_ctf_create(&a, &b.t), 0);
	b.ev = reg_u64(b.t);
	b.cpu = ctf_cpus[0];
	CHECK_EQ(pthread_create(&tid, NULL, busy_main, &b), 0);
	ctf_pin(ctf_cpus[1]);
	start = now_ns();
	for (uint64_t v = 0; now_ns() - start < 1000000000u; v++) {
		CHECK_EQ(grb_ctf_emit_raw(b.t, b.ev, &v, sizeof(v)), 0);
		sleep_ns(1000000);
	}
	atomic_store(&b.stop, 1);
	CHECK_EQ(pthread_join(tid, NULL), 0);
	ctf_pin(ctf_cpus[0]);
	CHECK_EQ(grb_ctf_stop(b.t), 0);
	n = stream_packets(dir, ctf_cpus[1]);
	if (n > 8) {
		fprintf(stderr, "flush period under load: %llu packets from "
			"the quiet CPU in about 1 s with a 400 ms period\n",
			(unsigned long long)n);
		CHECK(0);
	}
	CHECK(n >= 2);
	grb_ctf_destroy(b.t);
	rm_dir(dir);
}

int main(void)
{
	ctf_rig_start();
	contract_period_under_load();
	contract_output();
	contract_write_error();
	contract_flush_period(0);
	contract_flush_period(2000000);
	contract_flush_period_huge(UINT64_MAX);
	contract_flush_period_huge((uint64_t)INT64_MAX);
	return ctf_rig_done("test_ctf_streams");
}
