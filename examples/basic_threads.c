/* SPDX-License-Identifier: MIT */
/*
 * examples/basic_threads.c - several threads write records with the basic
 * client while the main thread reads them back; prints what was written,
 * read and lost, and checks that the numbers add up.
 *
 * Usage: basic_threads [--out DIR [--copy]] [threads] [records-per-thread]
 *                      [overwrite|discard]
 *
 * --out DIR: instead of decoding records, write each buffer's sub-buffers
 * into DIR/buf-NNN.grb as they are delivered, with grb_buf_splice() (or
 * grb_buf_write() with --copy); `grb-read DIR` then prints the records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grb/basic.h"
#include "grb/channel.h"
#include "grb/output.h"

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

/* --out: one file per buffer, and how sub-buffers get there. */
struct out {
	const char *dir;
	int copy;               /* grb_buf_write() rather than splice */
	int *fds;
};

static int out_open(struct grb_basic *b, struct out *o)
{
	char path[4096];
	unsigned int i, n = grb_basic_nr_bufs(b);

	if (mkdir(o->dir, 0777) < 0 && errno != EEXIST) {
		perror(o->dir);
		return -1;
	}
	o->fds = calloc(n, sizeof(*o->fds));
	if (!o->fds)
		return -1;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/buf-%03u.grb", o->dir, i);
		o->fds[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC |
				 O_CLOEXEC, 0644);
		if (o->fds[i] < 0) {
			perror(path);
			return -1;
		}
	}
	return 0;
}

/*
 * Write every buffer's delivered sub-buffers to its file.  The basic
 * client opened the readers, so the outputs can take sub-buffers
 * directly.  Return: the number of buffers finalized and drained, or -1.
 */
static int out_drain(struct grb_basic *b, const struct out *o)
{
	struct grb_buf *buf;
	unsigned int i;
	int ret, drained = 0;

	for (i = 0; i < grb_basic_nr_bufs(b); i++) {
		buf = grb_channel_buf(grb_basic_channel(b), i);
		ret = o->copy ? grb_buf_write(buf, o->fds[i], 0, NULL) :
			grb_buf_splice(buf, o->fds[i], NULL, 0, NULL);
		if (ret == -ENODATA) {
			drained++;
		} else if (ret) {
			fprintf(stderr, "writing buffer %u: %s\n", i,
				grb_strerror(ret));
			return -1;
		}
	}
	return drained;
}

/*
 * Take what the writers delivered: records decoded and checked, or, with
 * --out, whole sub-buffers into the files.  After finalize, until every
 * buffer is drained.  Return: records read (with --out: 0, the buffers'
 * statistics count them).
 */
static uint64_t take(struct grb_basic *b, uint32_t nwriters,
		     const struct out *o, int final, uint64_t *errors)
{
	unsigned int nbufs = grb_basic_nr_bufs(b);
	int drained;

	if (!o)
		return drain(b, nwriters, errors);
	do {
		drained = out_drain(b, o);
		if (drained < 0) {
			(*errors)++;
			return 0;
		}
	} while (final && (unsigned int)drained < nbufs);
	return 0;
}

/* Write with nthreads threads while reading back (or writing to files). */
static int run(uint32_t nthreads, uint32_t count, int overwrite,
	       struct out *o)
{
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
	if (o && out_open(b, o) < 0) {
		grb_basic_destroy(b);
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
		read += take(b, nthreads, o, 0, &errors);
	} while (running);
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	grb_basic_finalize(b);
	read += take(b, nthreads, o, 1, &errors);

	for (i = 0; i < nthreads; i++) {
		ok += args[i].ok;
		refused += args[i].refused;
	}
	grb_channel_get_stats(grb_basic_channel(b), &st);
	if (o)
		read = st.read;         /* in the files, as whole sub-buffers */
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
	for (i = 0; o && i < grb_basic_nr_bufs(b); i++)
		close(o->fds[i]);
	if (o)
		free(o->fds);
	grb_basic_destroy(b);
	free(args);
	free(tids);
	return ret ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct out o = { NULL, 0, NULL };
	uint32_t nthreads, count;
	int overwrite, a = 1;

	for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
		if (strcmp(argv[a], "--out") == 0 && a + 1 < argc) {
			o.dir = argv[++a];
		} else if (strcmp(argv[a], "--copy") == 0) {
			o.copy = 1;
		} else {
			fprintf(stderr, "unknown option %s\n", argv[a]);
			return 2;
		}
	}
	nthreads = argc > a ? (uint32_t)atoi(argv[a]) : 4;
	count = argc > a + 1 ? (uint32_t)atoi(argv[a + 1]) : 200000;
	overwrite = argc > a + 2 && strcmp(argv[a + 2], "overwrite") == 0;
	return run(nthreads, count, overwrite, o.dir ? &o : NULL);
}
