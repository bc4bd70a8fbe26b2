/* SPDX-License-Identifier: MIT */
/*
 * tests/common/recover_rig.h - what the recovery tests that fork a
 * writer process share: a page of flags both the child and the test see,
 * and the shared basic channel they write into (grb/recover.h).
 */
#ifndef GRB_TESTS_RECOVER_RIG_H
#define GRB_TESTS_RECOVER_RIG_H

#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "grb/basic.h"
#include "grb/shm.h"

struct recover_sync {
	_Atomic int ready;              /* the child has reserved */
	_Atomic int go;                 /* the test lets the child commit */
};

/* The flags, in memory the test's children share with it. */
static inline struct recover_sync *recover_sync_map(void)
{
	struct recover_sync *s = (struct recover_sync *)mmap(NULL,
		sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		-1, 0);

	CHECK(s != MAP_FAILED);
	return s;
}

/*
 * The child @pid holds a reservation once it sets s->ready (the test
 * cleared it before the fork): wait for that, then kill the child with
 * SIGKILL and reap it, a writer dead between its reserve and its commit.
 */
static inline void recover_kill_holder(struct recover_sync *s, pid_t pid)
{
	while (!s->ready)
		usleep(1000);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, NULL, 0), pid);
}

/* A shared basic channel of 4 x 4 KiB sub-buffers, discard mode. */
static inline struct grb_basic *recover_shared_basic(enum grb_alloc alloc)
{
	struct grb_basic_attr attr = {
		.name = "contract", .subbuf_size = 4096, .num_subbuf = 4,
		.alloc = alloc, .mode = GRB_MODE_DISCARD,
	};
	struct grb_shm_attr sattr = { .client = GRB_BASIC_CLIENT, .gid = -1 };
	struct grb_basic *b;

	CHECK_EQ(grb_basic_create_shared(&attr, &sattr, &b), 0);
	return b;
}

#endif /* GRB_TESTS_RECOVER_RIG_H */
