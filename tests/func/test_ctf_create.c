/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_ctf_create.c - grb_ctf_create() (grb/ctf.h): every
 * attribute it refuses (names, allocation, mode, clock, geometry) and
 * the TSC clock where Linux reports no invariant TSC; the trace
 * directory it makes, holding the metadata and one stream file per
 * buffer and nothing else, and the host name written in the metadata;
 * the errno of a directory it cannot make; and what a refused creation
 * leaves: at most an empty directory, never a file of a trace or of
 * shared-memory buffers that was there (-EEXIST), whether in a trace
 * directory or in a shm_dir.  A creation that fails half-way must not
 * damage a live trace, or its reader would lose it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "ctf_rig.h"
#include "grb/channel.h"
#include "grb/ctf.h"

/* Is @w a whole word of @line? */
static int word_in(const char *line, const char *w)
{
	size_t n = strlen(w);
	const char *p = line;

	while ((p = strstr(p, w)) != NULL) {
		if (p > line && p[-1] == ' ' &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

/* What Linux reports of rdtscp and of an invariant TSC. */
static int tsc_invariant(void)
{
#if defined(__x86_64__)
	static char line[16384];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int ok = 0;

	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		ok = word_in(line, "rdtscp") && word_in(line, "constant_tsc") &&
			word_in(line, "nonstop_tsc");
		break;
	}
	fclose(f);
	return ok;
#else
	return 0;
#endif
}

/* The CPU of a per-CPU channel's last buffer: its stream file is the
 * last one a tracer creates. */
static int last_cpu(void)
{
	struct grb_ctf_attr a = attr_ok();
	struct grb_channel *ch;
	struct grb_ctf *t;
	int cpu;

	a.alloc = GRB_ALLOC_PER_CPU;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	ch = grb_ctf_channel(t);
	CHECK(ch != NULL);
	cpu = grb_buf_cpu(grb_channel_buf(ch, grb_channel_nr_bufs(ch) - 1));
	grb_ctf_destroy(t);
	return cpu;
}

/* Attributes refused, and the clocks. */
static void create_refusals(void)
{
	static const char *const bad_names[] = {
		"", "a/b", "a b", ".", "..", "é", "a\nb", "x:y", "a*",
	};
	struct grb_ctf_attr a = attr_ok();
	struct grb_ctf *t;
	char name[128];

	CHECK_EQ(grb_ctf_create(NULL, &t), -EINVAL);
	CHECK_EQ(grb_ctf_create(&a, NULL), -EINVAL);
	a.name = NULL;
	CHECK_EQ(try_create(&a), -EINVAL);
	for (size_t i = 0; i < ARRAY_SIZE(bad_names); i++) {
		a.name = bad_names[i];
		CHECK_EQ(try_create(&a), -EINVAL);
	}
	memset(name, 'n', 64);
	name[64] = 0;
	a.name = name;
	CHECK_EQ(try_create(&a), -EINVAL);       /* 64 bytes */
	name[63] = 0;
	CHECK_EQ(try_create(&a), 0);             /* 63 */
	a.name = "Az09_.-";
	CHECK_EQ(try_create(&a), 0);
	a = attr_ok();
	a.alloc = (enum grb_alloc)2;
	CHECK_EQ(try_create(&a), -EINVAL);
	a = attr_ok();
	a.mode = (enum grb_mode)2;
	CHECK_EQ(try_create(&a), -EINVAL);
	a = attr_ok();
	a.clock = (enum grb_ctf_clock)2;
	CHECK_EQ(try_create(&a), -EINVAL);
	/* Geometry, as grb_channel_create() refuses it. */
	a = attr_ok();
	a.subbuf_size = 5000;
	CHECK_EQ(try_create(&a), -EINVAL);
	a.subbuf_size = (size_t)sysconf(_SC_PAGESIZE) / 2;
	CHECK_EQ(try_create(&a), -EINVAL);
	a = attr_ok();
	a.num_subbuf = 1;
	CHECK_EQ(try_create(&a), -EINVAL);
	a.num_subbuf = 3;
	CHECK_EQ(try_create(&a), -EINVAL);
	a = attr_ok();
	a.clock = GRB_CTF_CLOCK_TSC;
	CHECK_EQ(try_create(&a), tsc_invariant() ? 0 : -ENOTSUP);

}

/* The trace directory: made, refused, left empty after a failure. */
static void create_files(void)
{
	struct grb_ctf_attr a = attr_ok();
	char dir[256];
	size_t len;
	char *m;

	/* A trace directory is created when missing and holds the metadata
	 * and one stream file per buffer, nothing else. */
	snprintf(dir, sizeof(dir), "%s/new", scratch);
	a.trace_dir = dir;
	CHECK_EQ(try_create(&a), 0);
	CHECK_EQ(dir_entries(dir), 2);
	CHECK(exists(dir, "metadata") && exists(dir, "c_0"));
	rm_dir(dir);
	/* The host name in the env block: what a TSDL string would need
	 * escaped becomes '_'; NULL is gethostname()'s. */
	{
		struct grb_ctf *t;
		char want[300], host[256];

		a.hostname = "h\"o\\s\tt\xc3\xa9";
		CHECK_EQ(grb_ctf_create(&a, &t), 0);
		m = slurp(dir, "metadata", &len);
		CHECK(strstr(m, "\thostname = \"h_o_s_t__\";\n") != NULL);
		free(m);
		grb_ctf_destroy(t);
		rm_dir(dir);
		a.hostname = NULL;
		CHECK_EQ(gethostname(host, sizeof(host)), 0);
		host[sizeof(host) - 1] = 0;
		snprintf(want, sizeof(want), "\thostname = \"%s\";\n", host);
		CHECK_EQ(grb_ctf_create(&a, &t), 0);
		m = slurp(dir, "metadata", &len);
		CHECK(strstr(m, want) != NULL);
		free(m);
		grb_ctf_destroy(t);
		rm_dir(dir);
	}
	/* The errno of mkdir and of open. */
	a.trace_dir = "/nonexistent-grb-test/trace";
	CHECK_EQ(try_create(&a), -ENOENT);
	put_file(scratch, "plain", "x");
	snprintf(dir, sizeof(dir), "%s/plain", scratch);
	a.trace_dir = dir;
	CHECK_EQ(try_create(&a), -ENOTDIR);
	m = slurp(scratch, "plain", &len);
	CHECK(strcmp(m, "x") == 0);
	free(m);
	CHECK_EQ(unlink(dir), 0);
	/* A failure after the directory was made: at most that directory
	 * is left, empty. */
	snprintf(dir, sizeof(dir), "%s/geometry", scratch);
	a.trace_dir = dir;
	a.subbuf_size = 5000;
	CHECK_EQ(try_create(&a), -EINVAL);
	CHECK(dir_entries(dir) <= 0);
	rmdir(dir);
}

/* -EEXIST, and what a refused creation must leave of what is there. */
static void create_exists(void)
{
	struct grb_ctf_attr a = attr_ok();
	char dir[256], file[64];
	struct grb_ctf *t, *t2;
	size_t len, len2;
	char *m, *m2;
	int same;

	/* The stream file of the last buffer is there; the files
	 * made for the others are removed again. */
	a.alloc = GRB_ALLOC_PER_CPU;
	snprintf(dir, sizeof(dir), "%s/busy", scratch);
	CHECK_EQ(mkdir(dir, 0755), 0);
	snprintf(file, sizeof(file), "c_%d", last_cpu());
	put_file(dir, file, "old");
	a.trace_dir = dir;
	CHECK_EQ(try_create(&a), -EEXIST);
	CHECK_EQ(dir_entries(dir), 1);
	m = slurp(dir, file, &len);
	CHECK(strcmp(m, "old") == 0);
	free(m);
	rm_dir(dir);
	/* A second tracer into a live trace is refused; the trace must be
	 * left readable. */
	snprintf(dir, sizeof(dir), "%s/live", scratch);
	a.trace_dir = dir;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	m = slurp(dir, "metadata", &len);
	CHECK_EQ(grb_ctf_create(&a, &t2), -EEXIST);
	same = 0;
	if (exists(dir, "metadata")) {
		m2 = slurp(dir, "metadata", &len2);
		same = len2 == len && memcmp(m, m2, len) == 0;
		free(m2);
	}
	CHECK(same);
	free(m);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

/* The same in shared memory: a buffer file is there. */
static void create_exists_shm(void)
{
	struct grb_ctf_attr a = attr_ok();
	struct grb_ctf *t, *t2;
	char dir[256], file[64];
	unsigned int nb;

	a.alloc = GRB_ALLOC_PER_CPU;
	snprintf(dir, sizeof(dir), "%s/shm", scratch);
	CHECK_EQ(mkdir(dir, 0755), 0);
	a.shm_dir = dir;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_channel_nr_bufs(grb_ctf_channel(t)) + 1u,
		 (unsigned int)dir_entries(dir));
	CHECK(exists(dir, "c.metadata"));
	nb = grb_channel_nr_bufs(grb_ctf_channel(t));
	CHECK_EQ(grb_ctf_create(&a, &t2), -EEXIST);
	CHECK(exists(dir, "c.metadata"));
	grb_ctf_destroy(t);
	/* Destroy removes the buffer files and the metadata. */
	CHECK_EQ(dir_entries(dir), 0);
	/* Only the last buffer's file is there: the others' are removed. */
	a.name = "d";
	snprintf(file, sizeof(file), "d.%u", nb - 1);
	put_file(dir, file, "old");
	CHECK_EQ(try_create(&a), -EEXIST);
	CHECK_EQ(dir_entries(dir), 1);
	rm_dir(dir);
	a.shm_dir = "/nonexistent-grb-test";
	CHECK_EQ(try_create(&a), -ENOENT);
	grb_ctf_destroy(NULL);
}

int main(void)
{
	ctf_rig_start();
	create_refusals();
	create_files();
	create_exists();
	create_exists_shm();
	return ctf_rig_done("test_ctf_create");
}
