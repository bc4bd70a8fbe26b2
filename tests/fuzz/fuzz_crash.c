/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_crash.c - libFuzzer target: grb-crash's engine
 * (tools/crash/salvage.c) on the files of a dead CTF producer that were
 * damaged.
 *
 * Once per process, a child process plays the producer: it creates a CTF
 * tracer whose buffers and metadata are files in a temporary directory,
 * registers event classes (one with an id past the compact header's
 * range), emits a few hundred events from one thread, moving it between
 * CPUs, leaves one reservation it never commits, and exits without
 * destroying anything, which is what SIGKILL leaves behind.  There are
 * two such producers, per-CPU buffers in discard mode and one
 * per-channel buffer in overwrite mode that wraps, and their files
 * (NAME.0, NAME.1, ..., NAME.metadata) are kept in memory.
 *
 * Each run writes the files of one of them (bit 0 of the first input
 * byte) to a fresh directory, applies the rest of the input to them as
 * patches, and salvages them into an output directory as `grb-crash
 * DIR/NAME OUTDIR` would (bit 1: keeping the padding events); both
 * directories are then removed.  A patch is 9 bytes: a file (a byte,
 * modulo the number of files, the metadata text among them), a 4-byte
 * offset modulo that file's size and 4 bytes to store there; a file
 * byte of 0xf0 or above cuts the file at the offset instead.  Any return
 * code is fine; a crash, a sanitizer report, a leak or a hang is a bug.
 *
 * The trace's event layouts are loaded once, from the undamaged
 * metadata, before the first run: the decoder's tables live as long as
 * the process (ctf_events.c), so otherwise whichever run first loaded a
 * damaged copy would decide how every later run decodes.  A damaged
 * metadata text is still parsed at every run, and its layouts decode
 * packets that name its (damaged) UUID.
 *
 * Built with clang's -fsanitize=fuzzer,address,undefined (option
 * GRB_FUZZ).  The long run:
 *	build/clang/tests/fuzz_crash -max_total_time=600 -timeout=10 -rss_limit_mb=4096
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grb/ctf.h"
#include "grb/grb.h"
#include "../../tools/crash/salvage.h"

#define NAME "c"
#define MAX_FILES 64

#define check(cond, what) do {                                          \
	if (!(cond)) {                                                  \
		fprintf(stderr, "fuzz_crash: %s (line %d)\n", what,     \
			__LINE__);                                      \
		abort();                                                \
	}                                                               \
} while (0)

/* The files a dead producer left, by name. */
struct snapshot {
	unsigned int nr;
	char *name[MAX_FILES];
	unsigned char *data[MAX_FILES];
	size_t len[MAX_FILES];
};

static char base[256];
static struct snapshot snaps[2];

static void set_cpu(unsigned int cpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % (unsigned int)(n > 0 ? n : 1), &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void emit_one(struct grb_ctf *t, const struct grb_ctf_event *const *ev,
		     uint32_t i)
{
	static const uint16_t arr[3] = { 7, 8, 9 };
	union grb_ctf_value v[4];
	char text[32];

	memset(text, 'a' + (int)(i % 26), sizeof(text));
	text[i % 23] = 0;
	switch (i % 3) {
	case 0:
		v[0].u = i;
		v[1].u = (uint64_t)i * 0x9e3779b97f4a7c15ull;
		v[2].s = text;
		break;
	case 1:
		v[0].i = -(int64_t)i;
		v[1].u = i % 2 ? 200 : 1;
		v[2].d = i / 3.0;
		v[3].array = arr;
		break;
	default:
		v[0].u = i;
		break;
	}
	grb_ctf_emit(t, ev[i % 3], v);
}

/*
 * A reservation whose writer dies before it commits: its record header
 * and its first field are written (ctf.c's layout), then more events on
 * top of it, from the same thread, push the writer on to the next
 * sub-buffers so that the one it holds is closed but never delivered.
 */
static void die_in_record(struct grb_ctf *t, const struct grb_ctf_event *const *ev,
			  enum grb_alloc alloc, enum grb_mode mode)
{
	const struct grb_config *cfg = grb_ctf_config(alloc, mode,
						      GRB_CTF_CLOCK_MONOTONIC);
	struct grb_ctx ctx;
	uint64_t seq = 12345;
	uint32_t w;

	grb_ctx_init(&ctx, 4 + 8 + 10, 1);
	/* The CTF client's header size reads the event through a pointer
	 * to it (clients/ctf/ctf.c). */
	ctx.client_priv = (void *)(uintptr_t)&ev[0];
	if (grb_reserve(cfg, grb_ctf_channel(t), &ctx))
		return;
	if (ctx.rflags & GRB_RFLAG_FULL_TIMESTAMP) {
		unsigned char h[13] = { 31 };

		memcpy(h + 5, &ctx.timestamp, 8);
		grb_write(cfg, &ctx, h, sizeof(h));
	} else {
		w = (uint32_t)ctx.timestamp << 5;
		grb_write(cfg, &ctx, &w, sizeof(w));
	}
	grb_write(cfg, &ctx, &seq, 4);
	for (uint32_t i = 0; i < 150; i++)
		emit_one(t, ev, i);
}

/* The producer process: never returns. */
static void produce(const char *dir, enum grb_alloc alloc, enum grb_mode mode,
		    uint32_t events)
{
	static const struct grb_ctf_enum_label l[3] = {
		{ "zero", 0 }, { "one", 1 }, { "many", 200 },
	};
	static const struct grb_ctf_field fa[3] = {
		{ "seq", GRB_CTF_INT, 4, 0, 10, 0, NULL, 0 },
		{ "check", GRB_CTF_INT, 8, 0, 16, 0, NULL, 0 },
		{ "s", GRB_CTF_STRING, 0, 0, 0, 0, NULL, 0 },
	};
	static const struct grb_ctf_field fb[4] = {
		{ "x", GRB_CTF_INT, 2, 1, 10, 0, NULL, 0 },
		{ "e", GRB_CTF_ENUM, 1, 0, 0, 0, l, 3 },
		{ "d", GRB_CTF_FLOAT, 8, 0, 0, 0, NULL, 0 },
		{ "arr", GRB_CTF_INT, 2, 0, 10, 3, NULL, 0 },
	};
	struct grb_ctf_event_desc d = { "fz:a", -1, fa, 3 };
	const struct grb_ctf_event *ev[3], *filler;
	struct grb_ctf_attr a;
	struct grb_ctf *t;
	char name[16];

	memset(&a, 0, sizeof(a));
	a.name = NAME;
	a.subbuf_size = 4096;
	a.num_subbuf = 4;
	a.alloc = alloc;
	a.mode = mode;
	a.shm_dir = dir;
	a.hostname = "fuzz";
	if (grb_ctf_create(&a, &t) || grb_ctf_event_register(t, &d, &ev[0]))
		_exit(10);
	d = (struct grb_ctf_event_desc){ "fz:b", 3, fb, 4 };
	if (grb_ctf_event_register(t, &d, &ev[1]))
		_exit(11);
	/* Classes with no events take ids 2 to 29, the rest of what a
	 * compact header can carry, so the third class needs the extended
	 * header. */
	for (uint32_t i = 2; i < 30; i++) {
		snprintf(name, sizeof(name), "fz:f%u", i);
		d = (struct grb_ctf_event_desc){ name, -1, fa, 1 };
		if (grb_ctf_event_register(t, &d, &filler))
			_exit(12);
	}
	d = (struct grb_ctf_event_desc){ "fz:ext", -1, fa, 1 };
	if (grb_ctf_event_register(t, &d, &ev[2]))
		_exit(13);
	for (uint32_t i = 0; i < events; i++) {
		if (i % 50 == 0)
			set_cpu(i / 50);
		emit_one(t, ev, i);
	}
	die_in_record(t, ev, alloc, mode);
	_exit(0);
}

/* Remove directory @dir and what it holds, directories included. */
static void rm_dir(const char *dir)
{
	char path[sizeof(base) + 300];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR)
			rm_dir(path);
		else
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/*
 * This process's directory, TMP/grb_fuzz_crash.PID.  A run that crashed
 * left its own, files and all (no exit handler runs then): those whose
 * process is gone are removed, so that crashes do not pile up in shared
 * memory.
 */
static void make_base(const char *tmp)
{
	static const char prefix[] = "grb_fuzz_crash.";
	char path[sizeof(base) + 300];
	struct dirent *e;
	DIR *d = opendir(tmp);

	while (d && (e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, prefix, sizeof(prefix) - 1))
			continue;
		pid = strtol(e->d_name + sizeof(prefix) - 1, &end, 10);
		if (*end || pid <= 0 || (pid != getpid() &&
		    (kill((pid_t)pid, 0) == 0 || errno != ESRCH)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name);
		rm_dir(path);
	}
	if (d)
		closedir(d);
	check((size_t)snprintf(base, sizeof(base), "%s/%s%d", tmp, prefix,
			       (int)getpid()) < sizeof(base) - 20 &&
	      mkdir(base, 0700) == 0, "cannot make a temporary directory");
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void take(struct snapshot *s, const char *dir)
{
	char path[sizeof(base) + 300];
	struct dirent **list;
	struct stat st;
	int n, fd;

	n = scandir(dir, &list, NULL, by_name);
	check(n > 0, "no files left by the producer");
	for (int i = 0; i < n; i++) {
		const char *f = list[i]->d_name;

		if (f[0] != '.') {
			check(s->nr < MAX_FILES, "too many files");
			snprintf(path, sizeof(path), "%s/%s", dir, f);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			check(fd >= 0 && fstat(fd, &st) == 0, "cannot open");
			s->name[s->nr] = strdup(f);
			s->len[s->nr] = (size_t)st.st_size;
			s->data[s->nr] = (unsigned char *)malloc(s->len[s->nr] + 1);
			check(s->name[s->nr] && s->data[s->nr] &&
			      read(fd, s->data[s->nr], s->len[s->nr]) ==
			      (ssize_t)s->len[s->nr], "cannot read");
			close(fd);
			s->nr++;
		}
		free(list[i]);
	}
	free(list);
}

/* Run a producer in a child, keep what it left, learn its layouts. */
static void make_snapshot(struct snapshot *s, enum grb_alloc alloc,
			  enum grb_mode mode, uint32_t events)
{
	char dir[sizeof(base) + 16];
	int status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/src", base);
	check(mkdir(dir, 0700) == 0, "cannot make a directory");
	pid = fork();
	check(pid >= 0, "cannot fork");
	if (pid == 0)
		produce(dir, alloc, mode, events);
	check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "the producer failed");
	take(s, dir);
	rm_dir(dir);
	for (unsigned int i = 0; i < s->nr; i++)
		if (!strcmp(s->name[i], NAME ".metadata"))
			check(grb_ctf_metadata_load((const char *)s->data[i],
						    s->len[i], NULL) == 0,
			      "the producer's metadata does not load");
}

static void put_file(const char *dir, const char *name,
		     const unsigned char *p, size_t len)
{
	char path[sizeof(base) + 300];
	ssize_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	check(fd >= 0, "cannot create a file");
	while (len && (n = write(fd, p, len)) > 0) {
		p += n;
		len -= (size_t)n;
	}
	check(n >= 0, "cannot write a file");
	close(fd);
}

/* Write @s patched with @data to a fresh directory and salvage it. */
static int run(const struct snapshot *s, const uint8_t *data, size_t size,
	       int keep_padding, struct salvage_report *r)
{
	char in[sizeof(base) + 16], out[sizeof(base) + 16], err[512];
	struct salvage_opts o = { in, NAME, out, keep_padding };
	unsigned char *copy[MAX_FILES];
	size_t len[MAX_FILES];
	uint32_t at, val;
	int ret;

	for (unsigned int i = 0; i < s->nr; i++) {
		len[i] = s->len[i];
		copy[i] = (unsigned char *)malloc(len[i] + 1);
		check(copy[i], "out of memory");
		memcpy(copy[i], s->data[i], len[i]);
	}
	for (; size >= 9; data += 9, size -= 9) {
		unsigned int f = data[0] % s->nr;

		memcpy(&at, data + 1, 4);
		memcpy(&val, data + 5, 4);
		if (data[0] >= 0xf0)
			len[f] = at % (len[f] + 1);
		else if (len[f] >= 4)
			memcpy(copy[f] + at % (len[f] - 3), &val, 4);
	}
	snprintf(in, sizeof(in), "%s/in", base);
	snprintf(out, sizeof(out), "%s/out", base);
	check(mkdir(in, 0700) == 0, "cannot make a directory");
	for (unsigned int i = 0; i < s->nr; i++) {
		put_file(in, s->name[i], copy[i], len[i]);
		free(copy[i]);
	}
	ret = salvage(&o, r, err, sizeof(err));
	rm_dir(out);
	rm_dir(in);
	return ret;
}

static void cleanup(void)
{
	for (int k = 0; k < 2; k++)
		for (unsigned int i = 0; i < snaps[k].nr; i++) {
			free(snaps[k].name[i]);
			free(snaps[k].data[i]);
		}
	rm_dir(base);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	struct salvage_report r;

	(void)argc;
	(void)argv;
	/* Shared memory, where such files live, and fast. */
	if (access("/dev/shm", W_OK) == 0)
		tmp = "/dev/shm";
	make_base(tmp ? tmp : "/tmp");
	atexit(cleanup);
	make_snapshot(&snaps[0], GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD, 300);
	make_snapshot(&snaps[1], GRB_ALLOC_PER_CHANNEL, GRB_MODE_OVERWRITE, 800);
	/* Undamaged, each must come out whole: else the runs test less
	 * than they seem to. */
	for (int k = 0; k < 2; k++) {
		check(run(&snaps[k], NULL, 0, 0, &r) == 0 && r.events > 0 &&
		      r.damaged == 0, "an undamaged snapshot does not salvage");
		fprintf(stderr, "fuzz_crash: snapshot %d: %u files, %u buffers, "
			"%llu packets, %llu events, %llu dead, %llu "
			"recovered\n", k, snaps[k].nr, r.nr_bufs,
			(unsigned long long)r.packets,
			(unsigned long long)r.events,
			(unsigned long long)r.dead,
			(unsigned long long)r.recovered);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct salvage_report r;

	if (size < 1)
		return 0;
	run(&snaps[data[0] & 1], data + 1, size - 1, (data[0] >> 1) & 1, &r);
	return 0;
}
