/* SPDX-License-Identifier: MIT */
/*
 * src/journal.c - the write journal's slots: a thread claims one per
 * shared buffer it writes to, once; and who is alive, for the recoverer
 * (src/recover.c).  The entries and their protocol are in
 * grb/impl/journal.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine.h"
#include "grb/impl/journal.h"
#include "journal_internal.h"

GRB_THREAD_LOCAL struct grb_jcache grb__jcache[GRB_JCACHE_SIZE] GRB_TLS_MODEL;

/* This process's start time, read once (and again after a fork). */
static grb_atomic_u64 self_start;

/*
 * A forked child is another process: the slots its parent's thread owns
 * are not its own.  Only the forking thread exists in the child; forget
 * what it cached.
 */
static void after_fork_child(void)
{
	memset(grb__jcache, 0, sizeof(grb__jcache));
	grb_store_relaxed(&self_start, 0);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_register(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

/*
 * Read up to cap - 1 bytes of a /proc file into buf, NUL-terminated.
 * Only open/read/close: async-signal-safe, as a claim from a signal
 * handler needs.  Return: the length, or -1 (errno set: ENOENT or ESRCH
 * when the process or thread is gone).
 */
static ssize_t read_proc(const char *path, char *buf, size_t cap)
{
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, cap - 1);
	err = errno;
	close(fd);
	errno = err;
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/*
 * The path of a /proc file of process pid (and of its thread tid when
 * tid > 0): /proc/PID/LEAF or /proc/PID/task/TID/LEAF.  By hand rather
 * than with snprintf(), which POSIX does not list as async-signal-safe;
 * the same goes for parse_dec() against strtoull() and atoi().
 */
static void proc_path(char *path, size_t cap, int pid, int tid,
		      const char *leaf)
{
	char digits[2][12];
	const char *parts[6];
	size_t n = 0, i, k;
	int v[2] = { pid, tid }, j, d;
	unsigned int u;

	for (j = 0; j < 2; j++) {
		u = v[j] > 0 ? (unsigned int)v[j] : 0;
		d = (int)sizeof(digits[j]) - 1;
		digits[j][d] = '\0';
		do {
			digits[j][--d] = (char)('0' + u % 10);
			u /= 10;
		} while (u && d > 0);
		memmove(digits[j], digits[j] + d, sizeof(digits[j]) - (size_t)d);
	}
	parts[n++] = "/proc/";
	parts[n++] = digits[0];
	if (tid > 0) {
		parts[n++] = "/task/";
		parts[n++] = digits[1];
	}
	parts[n++] = "/";
	parts[n++] = leaf;
	for (i = 0, k = 0; i < n; i++) {
		const char *c;

		for (c = parts[i]; *c && k + 1 < cap; c++)
			path[k++] = *c;
	}
	path[k] = '\0';
}

/* The decimal number at p, after any blanks. */
static uint64_t parse_dec(const char *p)
{
	uint64_t v = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	return v;
}

/* Field 3 (state) and field 22 (start time) of a /proc stat file. */
static int stat_file(const char *path, char *state, uint64_t *start)
{
	char buf[512], *p;
	unsigned int field;

	if (read_proc(path, buf, sizeof(buf)) < 0)
		return -1;
	/* The command name may hold anything, ')' included: the last one
	 * ends it. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	p += 2;
	*state = *p;
	/* p is at field 3; the start time is field 22. */
	for (field = 3; field < 22 && *p; p++)
		if (*p == ' ')
			field++;
	if (field != 22)
		return -1;
	*start = parse_dec(p);
	return 0;
}

int grb__proc_stat(int pid, char *state, uint64_t *start)
{
	char path[64];

	proc_path(path, sizeof(path), pid, 0, "stat");
	return stat_file(path, state, start);
}

/*
 * Threads still running in process pid, from /proc/PID/status; -1 when
 * it cannot be read.  A process whose first thread called pthread_exit()
 * shows as a zombie while its other threads run: they are counted here
 * (the zombie first thread too, so a process whose threads all exited
 * shows 1).
 */
static int proc_threads(int pid)
{
	char path[64], buf[4096], *p;

	proc_path(path, sizeof(path), pid, 0, "status");
	if (read_proc(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\nThreads:");
	return p ? (int)parse_dec(p + 9) : -1;
}

void grb__journal_process_init(void)
{
	/* A forked child must read its start again (after_fork_child()).
	 * Not async-signal-safe (pthread_once() may wait for itself):
	 * called when a journaled buffer is mapped, never on a write. */
	pthread_once(&atfork_once, atfork_register);
}

/* Signal-safe: open/read/close, and relaxed atomics. */
static uint64_t self_start_time(void)
{
	uint64_t start = grb_load_relaxed(&self_start);
	char state;

	if (start == 0 && grb__proc_stat(getpid(), &state, &start) == 0)
		grb_store_relaxed(&self_start, start);
	return start;
}

static uint64_t self_owner(void)
{
	return (uint64_t)(uint32_t)getpid() << 32 |
		(uint32_t)syscall(SYS_gettid);
}

int grb__process_alive(int pid, uint64_t start)
{
	uint64_t now;
	char state;

	if (pid <= 0)
		return 0;
	/* This process, or a dead one whose pid it now has (a consumer
	 * restarted after the writer died): the start time tells. */
	if (pid == getpid()) {
		now = self_start_time();
		return start == 0 || now == 0 || now == start;
	}
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return 0;
	/* It exists (perhaps as another user's): a zombie is dead, and a
	 * process started at another time is a later one with its pid.
	 * Unreadable: assume alive, never recover under a live writer. */
	if (grb__proc_stat(pid, &state, &now) != 0)
		return 1;
	if (start != 0 && now != start)
		return 0;
	/* A zombie first thread with others still running is a live
	 * process (unreadable: taken as live, as above). */
	if (state == 'Z' || state == 'X')
		return proc_threads(pid) != 1;
	return 1;
}

/*
 * Is the thread that owns a slot gone (its process, or itself)?  In any
 * process, this one or another: a thread's /proc task entry goes when it
 * exits, but for the first thread's (tid == pid), which stays as a
 * zombie while the others run.  An owner still claiming the slot
 * (GRB_JOWNER_CLAIM) has not stored its start yet: the start there is
 * the previous owner's, so its process is judged by its pid alone.
 */
static int owner_gone(uint64_t owner, uint64_t start)
{
	int pid = grb__jowner_pid(owner), tid = (int)(uint32_t)owner;
	char path[64], state;
	uint64_t t;

	if (owner & GRB_JOWNER_CLAIM)
		start = 0;
	if (!grb__process_alive(pid, start))
		return 1;
	proc_path(path, sizeof(path), pid, tid, "stat");
	if (stat_file(path, &state, &t) != 0)
		return errno == ENOENT || errno == ESRCH;
	return state == 'Z' || state == 'X';
}

/* Every entry free, or taken without a valid range (CLAIMING)? */
static int slot_idle(struct grb_jslot *s)
{
	uint64_t st;
	unsigned int i;

	for (i = 0; i < GRB_JOURNAL_ENTRIES; i++) {
		st = grb_load_acquire(&s->e[i].word) >> GRB_J_STATE_SHIFT;
		if (st != GRB_J_NONE && st != GRB_J_CLAIMING)
			return 0;
	}
	return 1;
}

static struct grb_jslot *take_slot(struct grb_jslot *s, uint64_t expect,
				   uint64_t me)
{
	unsigned int i;

	/* A CAS, once per thread and buffer: two threads may want the
	 * same free slot.  acq_rel: the entries' last stores by the old
	 * owner (or the recoverer that freed them) come first.  Marked as
	 * claiming until our start is stored: until then the slot's start
	 * is the old owner's, and a claimant in another process that judged
	 * us by it would find us dead and take the slot from under us. */
	if (!grb_cas_acq_rel(&s->owner, &expect, me | GRB_JOWNER_CLAIM))
		return NULL;
	for (i = 0; i < GRB_JOURNAL_ENTRIES; i++)
		grb_store_relaxed(&s->e[i].word, grb__jword(GRB_J_NONE, 0));
	GRB_HOOK(GRB_HOOK_JOURNAL_CLAIMED);
	grb_store_relaxed(&s->start, self_start_time());
	/* Release: the start and the cleared entries come with it. */
	grb_store_release(&s->owner, me);
	return s;
}

struct grb_jslot *grb__journal_slot(struct grb_buf *buf)
{
	struct grb_jcache *c = &grb__jcache[buf->jkey & (GRB_JCACHE_SIZE - 1)];
	struct grb_jslot *found = NULL, *s;
	uint64_t me = self_owner(), owner, i, self, start;
	int pass;

	if (!buf->journal)
		return NULL;
	self = self_start_time();
	/* Ours already (another handle of the same mapping, or a cache
	 * entry another buffer evicted)?  A slot with our pid and tid but
	 * another start time is a dead process's that had them: taking it
	 * as ours would leave its start time on our entries, and the
	 * recoverer would judge this live thread by the dead process.  It
	 * is claimed below like any dead owner's, or left.  Relaxed loads:
	 * an owner word equal to ours was stored by this thread (program
	 * order shows us its start) or by a dead process.  A stale start
	 * of that process's is 0 ("unknown": the slot is taken as ours and
	 * judged alive while this process lives) or an earlier owner's
	 * (not ours: claimed below as a dead owner's, only once idle), so
	 * no choice lets recovery run under a live thread. */
	for (i = 0; i < buf->nr_jslots && !found; i++) {
		s = &buf->journal[i];
		if (grb_load_relaxed(&s->owner) != me)
			continue;
		start = grb_load_relaxed(&s->start);
		if (start == self || start == 0 || self == 0)
			found = s;
	}
	/* A free one, else one whose thread is gone and left nothing. */
	for (pass = 0; pass < 2 && !found; pass++) {
		for (i = 0; i < buf->nr_jslots && !found; i++) {
			s = &buf->journal[i];
			owner = grb_load_acquire(&s->owner);
			if (pass == 0 && owner == 0)
				found = take_slot(s, 0, me);
			else if (pass == 1 && owner != 0 &&
				 owner_gone(owner, grb_load_relaxed(&s->start)) &&
				 slot_idle(s))
				found = take_slot(s, owner, me);
		}
	}
	if (!found)
		return NULL;
	c->key = 0;
	grb_signal_fence();
	c->slot = found;
	grb_signal_fence();
	c->key = buf->jkey;
	return found;
}
