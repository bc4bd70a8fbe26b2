/* SPDX-License-Identifier: MIT */
/*
 * examples/ctf_tracer.c - a tracer built on the CTF client (grb/ctf.h):
 * two event classes declared at run time, written by several threads,
 * into a trace directory babeltrace2 reads.
 *
 *   ctf_tracer -o TRACE_DIR [-t THREADS] [-n EVENTS] [-m discard|overwrite]
 *   ctf_tracer -s SHM_DIR [-t THREADS] [-n EVENTS] [-m ...] [-w] [-f]
 *
 * Each thread writes EVENTS app:request events (default 100000) and one
 * app:state event every 64 of them.
 * -o: the tracer's own writer thread writes TRACE_DIR.  -s: the buffers
 * are files in SHM_DIR (for grb-consumerd --attach SHM_DIR/ctf, or
 * grb-crash after a crash); with -w the program waits for SIGUSR1 before
 * writing and again before it removes them, so that a consumer can
 * attach and finish.  -f: the threads write twice, with a flush of every
 * buffer in between (what a periodic flush does), so that a buffer which
 * filled in the first round refuses the whole second one after its last
 * packet closed.  Prints "written N discarded D" at the end.
 */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <grb/ctf.h>
#include <grb/grb.h>

static struct grb_ctf *tracer;
static const struct grb_ctf_event *ev_req, *ev_state;
static long per_thread = 100000;

static const struct grb_ctf_enum_label states[] = {
	{ "IDLE", 0 }, { "BUSY", 1 }, { "DONE", 2 },
};

static void *worker(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	char path[32];

	for (long i = 0; i < per_thread; i++) {
		/* A fixed-layout event: its payload is a packed struct. */
		struct __attribute__((packed)) {
			uint32_t thread;
			uint64_t bytes;
			double ms;
		} req = { id, (uint64_t)i * 512, (double)i / 1000 };

		grb_ctf_emit_raw(tracer, ev_req, &req, sizeof(req));
		if (i % 64 == 0) {
			/* A variable one: values by field. */
			union grb_ctf_value v[3];

			snprintf(path, sizeof(path), "/srv/%ld", i % 1000);
			v[0].u = id;
			v[1].u = (uint64_t)(i / 64 % 3);
			v[2].s = path;
			grb_ctf_emit(tracer, ev_state, v);
		}
	}
	return NULL;
}

static void wait_usr1(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
}

int main(int argc, char **argv)
{
	static const struct grb_ctf_field req_fields[] = {
		{ "thread", GRB_CTF_INT, 4, 0, 10, 0, NULL, 0 },
		{ "bytes", GRB_CTF_INT, 8, 0, 16, 0, NULL, 0 },
		{ "ms", GRB_CTF_FLOAT, 8, 0, 0, 0, NULL, 0 },
	};
	static const struct grb_ctf_field state_fields[] = {
		{ "thread", GRB_CTF_INT, 4, 0, 10, 0, NULL, 0 },
		{ "state", GRB_CTF_ENUM, 1, 0, 0, 0, states, 3 },
		{ "path", GRB_CTF_STRING, 0, 0, 0, 0, NULL, 0 },
	};
	static const struct grb_ctf_event_desc req = {
		"app:request", 13, req_fields, 3 };
	static const struct grb_ctf_event_desc state = {
		"app:state", 13, state_fields, 3 };
	struct grb_ctf_attr a;
	struct grb_ctf_stats st;
	pthread_t th[64];
	long threads = 2;
	int c, ret, wait = 0, rounds = 1;
	sigset_t set;

	memset(&a, 0, sizeof(a));
	a.name = "ctf";
	a.subbuf_size = 64 * 1024;
	a.num_subbuf = 8;
	a.alloc = GRB_ALLOC_PER_CPU;
	a.mode = GRB_MODE_DISCARD;
	a.clock = GRB_CTF_CLOCK_MONOTONIC;
	while ((c = getopt(argc, argv, "o:s:t:n:m:wf")) != -1) {
		switch (c) {
		case 'o': a.trace_dir = optarg; break;
		case 's': a.shm_dir = optarg; break;
		case 't': threads = atol(optarg); break;
		case 'n': per_thread = atol(optarg); break;
		case 'm': a.mode = strcmp(optarg, "overwrite") ?
			GRB_MODE_DISCARD : GRB_MODE_OVERWRITE; break;
		case 'w': wait = 1; break;
		case 'f': rounds = 2; break;
		default:
			fprintf(stderr, "usage: ctf_tracer -o DIR | -s DIR "
				"[-t N] [-n N] [-m MODE] [-w] [-f]\n");
			return 2;
		}
	}
	if (!a.trace_dir == !a.shm_dir) {
		fprintf(stderr, "ctf_tracer: give one of -o and -s\n");
		return 2;
	}
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "ctf_tracer: -t: 1 to 64 threads\n");
		return 2;
	}
	/* SIGUSR1 is waited for with sigwait(): blocked in every thread. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	ret = grb_ctf_create(&a, &tracer);
	if (!ret)
		ret = grb_ctf_event_register(tracer, &req, &ev_req);
	if (!ret)
		ret = grb_ctf_event_register(tracer, &state, &ev_state);
	if (ret) {
		fprintf(stderr, "ctf_tracer: %s\n", grb_strerror(ret));
		return 1;
	}
	if (wait) {
		printf("ready\n");
		fflush(stdout);
		wait_usr1();
	}
	for (int r = 0; r < rounds; r++) {
		if (r)
			grb_channel_flush(grb_ctf_channel(tracer),
					  GRB_FLUSH_ACTIVE);
		for (long t = 0; t < threads; t++)
			pthread_create(&th[t], NULL, worker,
				       (void *)(uintptr_t)t);
		for (long t = 0; t < threads; t++)
			pthread_join(th[t], NULL);
	}
	ret = grb_ctf_stop(tracer);
	grb_ctf_get_stats(tracer, &st);
	printf("written %llu discarded %llu\n",
	       (unsigned long long)st.events,
	       (unsigned long long)st.events_discarded);
	fflush(stdout);
	if (wait)
		wait_usr1();
	grb_ctf_destroy(tracer);
	return ret ? 1 : 0;
}
