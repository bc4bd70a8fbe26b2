/* SPDX-License-Identifier: MIT */
/*
 * examples/shm_producer.c - a producer whose consumer is another process:
 * a basic channel in shared memory handed to grb-consumerd over its
 * socket, then written by several threads.
 *
 *   shm_producer SOCKET THREADS RECORDS [discard|overwrite] [--hold MS]
 *                [--kill | --kill-reserved] [--reserve-hold MS]
 *
 * Prints "written N" (records the writers committed), then destroys the
 * channel, which finalizes it; the consumer drains what is left.  --hold
 * keeps the connection open MS milliseconds after writing;
 * --kill ends the process with SIGKILL instead of exiting;
 * --kill-reserved does so while it holds a reservation it never commits,
 * which the consumer recovers from (grb/recover.h); --reserve-hold
 * reserves one more record after "written", prints "reserved", and
 * commits it MS milliseconds later (a live writer the consumer must wait
 * for).
 */
#define _DEFAULT_SOURCE      /* usleep() */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <grb/basic.h>
#include <grb/shm.h>

static struct grb_basic *b;
static unsigned long per_thread;
static atomic_ulong written;

static void *writer(void *arg)
{
	unsigned long id = (unsigned long)(uintptr_t)arg, i;
	char msg[48];
	int n;

	for (i = 0; i < per_thread; i++) {
		n = snprintf(msg, sizeof(msg), "w%lu-%lu", id, i);
		if (grb_basic_write(b, msg, (size_t)n) == 0)
			atomic_fetch_add(&written, 1);
		if (i % 256 == 0)
			usleep(100);    /* a producer, not a benchmark */
	}
	return NULL;
}

/* A bad command line: what is wrong (a word not understood, or too few
 * arguments), then the synopsis.  Silently ignoring a word would run
 * another test than the one asked for (a misspelt --kill does not kill). */
static int usage(const char *prog, const char *word)
{
	if (word)
		fprintf(stderr, "%s: bad argument '%s'\n", prog, word);
	fprintf(stderr, "usage: %s SOCKET THREADS RECORDS [discard|overwrite] "
		"[--hold MS] [--kill | --kill-reserved] [--reserve-hold MS]\n",
		prog);
	return 2;
}

int main(int argc, char **argv)
{
	struct grb_basic_attr attr = { "producer", 65536, 16, GRB_ALLOC_PER_CPU,
				       GRB_MODE_DISCARD, 1 };
	struct sockaddr_un sa;
	pthread_t tid[64];
	unsigned long threads, i;
	long hold = 0, reserve_hold = 0;
	struct grb_basic_wctx w;
	int sock, kill_self = 0, ret;

	if (argc < 4)
		return usage(argv[0], NULL);
	threads = strtoul(argv[2], NULL, 10);
	per_thread = strtoul(argv[3], NULL, 10) / (threads ? threads : 1);
	for (i = 4; i < (unsigned long)argc; i++) {
		if (!strcmp(argv[i], "overwrite"))
			attr.mode = GRB_MODE_OVERWRITE;
		else if (!strcmp(argv[i], "discard"))
			attr.mode = GRB_MODE_DISCARD;
		else if (!strcmp(argv[i], "--kill"))
			kill_self = 1;
		else if (!strcmp(argv[i], "--kill-reserved"))
			kill_self = 2;
		else if (!strcmp(argv[i], "--hold") && i + 1 < (unsigned long)argc)
			hold = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--reserve-hold") &&
			 i + 1 < (unsigned long)argc)
			reserve_hold = strtol(argv[++i], NULL, 10);
		else
			return usage(argv[0], argv[i]);
	}
	if (threads == 0 || threads > 64) {
		fprintf(stderr, "%s: THREADS must be 1 to 64\n", argv[0]);
		return 2;
	}
	ret = grb_basic_create_shared(&attr, NULL, &b);
	if (ret) {
		fprintf(stderr, "create: %s\n", grb_strerror(ret));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		return 1;
	}
	ret = grb_channel_send(grb_basic_channel(b), sock);
	if (ret) {
		fprintf(stderr, "send: %s\n", grb_strerror(ret));
		return 1;
	}
	for (i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, writer, (void *)(uintptr_t)i);
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("written %lu\n", (unsigned long)atomic_load(&written));
	fflush(stdout);
	if (hold)
		usleep((useconds_t)hold * 1000);
	if (reserve_hold && grb_basic_reserve(b, 24, &w) == 0) {
		memset(w.data, 'r', 24);
		printf("reserved\n");
		fflush(stdout);
		usleep((useconds_t)reserve_hold * 1000);
		grb_basic_commit(&w);
	}
	/* Die between reserve and commit: the record is never written, its
	 * sub-buffer never completed but by the consumer's recovery. */
	if (kill_self == 2 && grb_basic_reserve(b, 24, &w) == 0)
		memset(w.data, 0xee, 24);
	if (kill_self)
		raise(SIGKILL);
	/* Destroy finalizes the channel: the consumer drains it to the end
	 * (it would also after the connection ends, as with --kill).  Its
	 * own mapping stays valid after this process is gone. */
	close(sock);
	grb_basic_destroy(b);
	return 0;
}
