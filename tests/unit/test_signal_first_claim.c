/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_signal_first_claim.c - a thread's first write to a
 * shared buffer, interrupted by a signal whose handler writes too.
 *
 * grb/writer.h: grb_reserve() and grb_write_record() are async-signal-
 * safe, in shared buffers too (grb/recover.h expects handlers to write
 * there).  A thread's first write to a journaled buffer claims a journal
 * slot, which reads the process's start time; that read used to register
 * a fork handler through pthread_once() on the way.  A signal landing
 * inside the registration, whose handler wrote to a shared buffer, ran
 * into the same pthread_once() on its own thread and waited for itself
 * forever.  The registration is now made when a journaled buffer is
 * mapped.
 *
 * __register_atfork(), which pthread_atfork() calls, is interposed below:
 * the signal is raised from inside it, once the channel exists.  The
 * alarm turns a deadlock into a failure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/shm.h"

static struct grb_basic *shared;
static volatile sig_atomic_t handled, raised;
static int handler_ret = 1;

/* glibc's, called by pthread_atfork(). */
int __register_atfork(void (*prepare)(void), void (*parent)(void),
		      void (*child)(void), void *dso);

/*
 * TSan's own start-up registers its fork handlers through here before its
 * run time is ready: the interposer must not be instrumented.
 */
#if defined(__SANITIZE_THREAD__)
#define NO_TSAN __attribute__((no_sanitize_thread))
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NO_TSAN __attribute__((no_sanitize("thread")))
#endif
#endif
#ifndef NO_TSAN
#define NO_TSAN
#endif

NO_TSAN int __register_atfork(void (*prepare)(void), void (*parent)(void),
			      void (*child)(void), void *dso)
{
	static int (*real)(void (*)(void), void (*)(void), void (*)(void),
			   void *);

	if (!real)
		real = (int (*)(void (*)(void), void (*)(void),
				void (*)(void), void *))
			dlsym(RTLD_NEXT, "__register_atfork");
	if (shared && !raised) {
		raised = 1;
		raise(SIGUSR1);
	}
	return real(prepare, parent, child, dso);
}

static void on_usr1(int sig)
{
	(void)sig;
	handler_ret = grb_basic_write(shared, "handler", 7);
	handled = 1;
}

int main(void)
{
	struct grb_basic_attr attr = {
		.name = "first", .subbuf_size = 4096, .num_subbuf = 4,
		.alloc = GRB_ALLOC_PER_CHANNEL, .mode = GRB_MODE_DISCARD,
	};
	struct grb_shm_attr sattr = { .client = GRB_BASIC_CLIENT, .gid = -1 };
	struct grb_basic_counts c;
	struct grb_basic *b;

	alarm(30);
	CHECK(signal(SIGUSR1, on_usr1) != SIG_ERR);
	CHECK_EQ(grb_basic_create_shared(&attr, &sattr, &b), 0);
	shared = b;
	/* The first write of this thread and process. */
	CHECK_EQ(grb_basic_write(b, "main", 4), 0);
	/* Had a registration run now, the handler wrote too. */
	if (raised)
		CHECK(handled && handler_ret == 0);
	CHECK_EQ(grb_basic_get_counts(b, 0, &c), 0);
	CHECK_U64(c.written, raised ? 2u : 1u);
	shared = NULL;
	grb_basic_destroy(b);
	printf("test_signal_first_claim: passed (%s)\n",
	       raised ? "a registration ran inside the write" :
	       "no registration inside the write");
	return 0;
}
