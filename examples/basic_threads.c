/* SPDX-License-Identifier: MIT */
/*
 * examples/basic_threads.c - several threads write records with the basic
 * client while the main thread reads them back; prints what was written,
 * read and lost, and checks that the numbers add up.
 *
 * Usage: basic_threads [threads] [records-per-thread] [overwrite|discard]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grb/basic.h"
#include "grb/channel.h"

struct sample {
	uint32_t writer;
	uint32_t seq;
};

static atomic_uint writers_done;

struct writer_arg {
	struct grb_basic *b;
	uint32_t id;
	uint32_t count;
	uint64_t ok;
	uint64_t refused;
};

static void *writer(void *p)
{
	struct writer_arg *w = (struct writer_arg *)p;
	struct sample s = { w->id, 0 };

	for (s.seq = 0; s.seq < w->count; s.seq++) {
		if (grb_basic_write(w->b, &s, sizeof(s)) == 0)
			w->ok++;
		else
			w->refused++;
	}
	atomic_fetch_add(&writers_done, 1);
	return NULL;
}

/* Read everything readable from every buffer; returns records read. */
static uint64_t drain(struct grb_basic *b, uint32_t nwriters,
		      uint64_t *errors)
{
	struct grb_basic_event ev;
	struct sample s;
	uint64_t n = 0;
	unsigned int cpu;

	for (cpu = 0; cpu < grb_basic_nr_bufs(b); cpu++) {
		while (grb_basic_consume(b, cpu, &ev, &s, sizeof(s)) == 0) {
			if (ev.len != sizeof(s) || s.writer >= nwriters)
				(*errors)++;
			n++;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	uint32_t nthreads = argc > 1 ? (uint32_t)atoi(argv[1]) : 4;
	uint32_t count = argc > 2 ? (uint32_t)atoi(argv[2]) : 200000;
	int overwrite = argc > 3 && strcmp(argv[3], "overwrite") == 0;
	struct grb_basic_attr attr = {
		.name = "example",
		.subbuf_size = 64 * 1024,
		.num_subbuf = 8,
		.alloc = GRB_ALLOC_PER_CPU,
		.mode = overwrite ? GRB_MODE_OVERWRITE : GRB_MODE_DISCARD,
		.compress_timestamps = 1,
	};
	struct writer_arg *args;
	pthread_t *tids;
	struct grb_basic *b;
	struct grb_buf_stats st;
	uint64_t read = 0, ok = 0, refused = 0, errors = 0;
	uint32_t i;
	int ret, running;

	if (nthreads == 0 || nthreads > 1024) {
		fprintf(stderr, "threads must be 1..1024\n");
		return 2;
	}
	ret = grb_basic_create(&attr, &b);
	if (ret) {
		fprintf(stderr, "grb_basic_create: %s\n", grb_strerror(ret));
		return 1;
	}
	args = calloc(nthreads, sizeof(*args));
	tids = calloc(nthreads, sizeof(*tids));
	for (i = 0; i < nthreads; i++) {
		args[i] = (struct writer_arg){ b, i, count, 0, 0 };
		pthread_create(&tids[i], NULL, writer, &args[i]);
	}
	/* Read while the writers run, then drain after finalize. */
	do {
		running = atomic_load(&writers_done) < nthreads;
		read += drain(b, nthreads, &errors);
	} while (running);
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	grb_basic_finalize(b);
	read += drain(b, nthreads, &errors);

	for (i = 0; i < nthreads; i++) {
		ok += args[i].ok;
		refused += args[i].refused;
	}
	grb_channel_get_stats(grb_basic_channel(b), &st);
	printf("mode %s, %u writer threads, %u records each, %u buffers\n",
	       overwrite ? "overwrite" : "discard", nthreads, count,
	       grb_basic_nr_bufs(b));
	printf("written     %llu\n", (unsigned long long)ok);
	printf("read        %llu\n", (unsigned long long)read);
	printf("overwritten %llu\n", (unsigned long long)st.overwritten);
	printf("lost        %llu (full %llu, wrap %llu, big %llu, nesting %llu)\n",
	       (unsigned long long)refused, (unsigned long long)st.lost_full,
	       (unsigned long long)st.lost_wrap, (unsigned long long)st.lost_big,
	       (unsigned long long)st.lost_nesting);
	ret = ok == read + st.overwritten && ok == st.written &&
		refused == st.lost_full + st.lost_wrap + st.lost_big +
		st.lost_nesting && errors == 0;
	printf("accounting  %s\n", ret ? "adds up" : "DOES NOT ADD UP");
	grb_basic_destroy(b);
	free(args);
	free(tids);
	return ret ? 0 : 1;
}
