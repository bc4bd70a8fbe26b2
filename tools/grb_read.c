/* SPDX-License-Identifier: MIT */
/*
 * tools/grb_read.c - grb-read: print the records of files that
 * grb_buf_write() or grb_buf_splice() wrote from a basic channel (one file
 * per buffer: its sub-buffers one after another, each starting with a
 * struct grb_basic_subbuf_header whose data_size says where the next one
 * begins), merged across the files in timestamp order.
 *
 * Usage: grb-read [-q] PATH...
 *   PATH  a file, or a directory whose files are all read (dot files
 *         left out; anything in it that is not a regular file, such as
 *         a subdirectory or a FIFO, is reported)
 *   -q    print no records, only the notes and the summary
 *   -h, --help  the usage, on stdout, exit status 0
 *
 * Each record is one line:
 *   <timestamp> cpu=<cpu> len=<bytes> text="<payload>" | hex=<payload>
 * (text when every byte is printable ASCII other than '"' and '\').
 * Lines starting with '#' are notes: sub-buffers missing from a buffer
 * (a jump in the header's seq, as overwrite mode or a failed write leaves),
 * the loss counts the headers carry when they grow, and a summary per
 * file at the end.
 *
 * The files are input, not trusted: every size and offset is checked
 * against the file before use.  A malformed file is reported on stderr
 * with where it went wrong, its records up to there are still printed,
 * and the exit status is 1.  So is a PATH that does not exist or cannot
 * be read, a directory with no file in it, and output that cannot be
 * written (the records printed would be incomplete); a bad command line
 * is 2.  Memory use is one sub-buffer per file.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grb/basic.h"

#define HSIZE sizeof(struct grb_basic_subbuf_header)

/* One file: where it is, the sub-buffer in memory, its waiting record. */
struct src {
	char *path;
	int fd;
	uint64_t size;          /* file bytes */
	uint64_t at;            /* file offset of the sub-buffer in memory */
	unsigned char *sb;      /* that sub-buffer, [0, h.data_size) */
	size_t sb_cap;
	struct grb_basic_subbuf_header h;
	size_t next;            /* offset of the next record slot in sb */
	uint64_t prev_ts;       /* last timestamp rebuilt in sb */
	uint64_t taken;         /* records decoded from sb */
	int loaded;             /* sb holds a sub-buffer */
	int done;               /* nothing more: end of file, or malformed */
	/* The record waiting to be merged. */
	int have;
	struct grb_basic_event ev;
	size_t payload_off;
	/* What the file showed. */
	uint64_t subbufs, records, gaps, missing, lost, overwritten;
	int started;            /* a sub-buffer was read: last_seq is set */
	uint64_t last_seq;
};

static int quiet;
static int failed;

/* A malformed or unreadable file: say where, stop reading it. */
static void bad(struct src *s, const char *why)
{
	fprintf(stderr, "grb-read: %s: offset %" PRIu64 ": %s; the rest of "
		"the file is skipped\n", s->path, s->at, why);
	failed = 1;
	s->done = 1;
	s->have = 0;
}

/* Read exactly n bytes at off; 0, or -1 (reported) on error or EOF. */
static int read_at(struct src *s, void *dst, size_t n, uint64_t off)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = pread(s->fd, (char *)dst + got, n - got,
			  (off_t)(off + got));
		if (r > 0) {
			got += (size_t)r;
		} else if (r == 0) {
			bad(s, "the file ends early (truncated?)");
			return -1;
		} else if (errno != EINTR) {
			bad(s, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Notes for a new sub-buffer: a seq jump, and losses that grew. */
static void note_subbuf(struct src *s)
{
	const struct grb_basic_subbuf_header *h = &s->h;

	if (s->started && h->seq != s->last_seq + 1) {
		s->gaps++;
		if (h->seq > s->last_seq + 1) {
			s->missing += h->seq - s->last_seq - 1;
			printf("# %s: cpu %d: sub-buffers %" PRIu64 " to %"
			       PRIu64 " missing\n", s->path, h->cpu,
			       s->last_seq + 1, h->seq - 1);
		} else {
			printf("# %s: cpu %d: sub-buffer %" PRIu64 " after %"
			       PRIu64 " (out of order)\n", s->path, h->cpu,
			       h->seq, s->last_seq);
		}
	}
	if (h->lost > s->lost || h->overwritten > s->overwritten)
		printf("# %s: cpu %d: by sub-buffer %" PRIu64 ": %" PRIu64
		       " records lost, %" PRIu64 " overwritten in all\n",
		       s->path, h->cpu, h->seq, h->lost, h->overwritten);
	if (h->lost > s->lost)
		s->lost = h->lost;
	if (h->overwritten > s->overwritten)
		s->overwritten = h->overwritten;
	s->started = 1;
	s->last_seq = h->seq;
}

/*
 * Load the sub-buffer at s->at.  Return: 1 loaded, 0 at the end of the
 * file, -1 malformed (reported).
 */
static int load_subbuf(struct src *s)
{
	struct grb_basic_subbuf_header *h = &s->h;
	uint64_t left = s->size - s->at;
	unsigned char *p;

	if (left == 0)
		return 0;
	if (left < HSIZE) {
		bad(s, "a sub-buffer header is cut short");
		return -1;
	}
	if (read_at(s, h, HSIZE, s->at))
		return -1;
	if (h->magic != GRB_BASIC_MAGIC) {
		bad(s, "no basic sub-buffer header here (bad magic)");
		return -1;
	}
	if (h->data_size < HSIZE || h->data_size > left) {
		bad(s, h->data_size < HSIZE ? "data_size is below the header "
		    "size" : "data_size runs past the end of the file");
		return -1;
	}
	if (h->data_size > s->sb_cap) {
		p = realloc(s->sb, (size_t)h->data_size);
		if (!p) {
			bad(s, "out of memory for a sub-buffer");
			return -1;
		}
		s->sb = p;
		s->sb_cap = (size_t)h->data_size;
	}
	if (read_at(s, s->sb, (size_t)h->data_size, s->at))
		return -1;
	note_subbuf(s);
	s->subbufs++;
	s->next = HSIZE;
	s->prev_ts = 0;
	s->taken = 0;
	s->loaded = 1;
	return 1;
}

/* Finish the loaded sub-buffer: its record count must match. */
static int end_subbuf(struct src *s)
{
	if (s->taken != s->h.records) {
		bad(s, "the header's record count does not match its records");
		return -1;
	}
	s->at += s->h.data_size;
	s->loaded = 0;
	return 0;
}

/* Make s->have a waiting record, or s->done. */
static void advance(struct src *s)
{
	int ret;

	s->have = 0;
	while (!s->done) {
		if (!s->loaded) {
			ret = load_subbuf(s);
			if (ret <= 0) {
				s->done = 1;
				return;
			}
		}
		ret = grb_basic_decode(s->sb, (size_t)s->h.data_size, s->next,
				       s->prev_ts, &s->ev, &s->payload_off,
				       &s->next);
		if (ret == 0) {
			s->prev_ts = s->ev.timestamp;
			s->taken++;
			s->records++;
			s->have = 1;
			return;
		}
		if (ret != -ENODATA) {
			bad(s, "a record does not decode");
			return;
		}
		if (end_subbuf(s))
			return;
	}
}

static int printable(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] > 0x7e || p[i] == '"' || p[i] == '\\')
			return 0;
	return 1;
}

static void print_record(const struct src *s)
{
	const unsigned char *p = s->sb + s->payload_off;
	size_t i, n = s->ev.len;

	printf("%" PRIu64 " cpu=%d len=%zu ", s->ev.timestamp, s->ev.cpu, n);
	if (printable(p, n)) {
		printf("text=\"%.*s\"\n", (int)n, (const char *)p);
		return;
	}
	fputs("hex=", stdout);
	for (i = 0; i < n; i++)
		printf("%02x", p[i]);
	putchar('\n');
}

/* Print every record in timestamp order: the smallest waiting record of
 * all files each time (ties by file order), a scan as files are few. */
static uint64_t merge(struct src *srcs, size_t n)
{
	uint64_t count = 0;
	size_t i, min;

	for (i = 0; i < n; i++)
		advance(&srcs[i]);
	for (;;) {
		min = n;
		for (i = 0; i < n; i++)
			if (srcs[i].have && (min == n || srcs[i].ev.timestamp <
					     srcs[min].ev.timestamp))
				min = i;
		if (min == n)
			return count;
		if (!quiet)
			print_record(&srcs[min]);
		count++;
		advance(&srcs[min]);
	}
}

struct list {
	struct src *v;
	size_t n, cap;
};

/*
 * Open a file and add it; an unreadable one is reported and left out.
 * O_NONBLOCK: a FIFO with no writer would block the open itself, before
 * fstat() can tell it is not a regular file; for a regular file the flag
 * changes nothing, so it is not cleared.
 */
static int add_file(struct list *l, const char *path)
{
	const char *why = NULL;
	struct src *s;
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	if (why) {
		fprintf(stderr, "grb-read: %s: %s\n", path, why);
		if (fd >= 0)
			close(fd);
		failed = 1;
		return 0;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		s = realloc(l->v, l->cap * sizeof(*s));
		if (!s)
			return -1;
		l->v = s;
	}
	s = &l->v[l->n++];
	memset(s, 0, sizeof(*s));
	s->path = strdup(path);
	s->fd = fd;
	s->size = (uint64_t)st.st_size;
	return s->path ? 0 : -1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory: its regular files, by name (dot files left out). */
static int add_dir(struct list *l, const char *dir)
{
	char **names = NULL, **more, path[4096];
	size_t n = 0, i;
	struct dirent *e;
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d) {
		fprintf(stderr, "grb-read: %s: %s\n", dir, strerror(errno));
		failed = 1;
		return 0;
	}
	while (ret == 0) {
		errno = 0;      /* readdir() tells an error from the end so */
		e = readdir(d);
		if (!e) {
			if (errno) {
				fprintf(stderr, "grb-read: %s: %s\n", dir,
					strerror(errno));
				failed = 1;
			}
			break;
		}
		if (e->d_name[0] == '.')
			continue;
		more = realloc(names, (n + 1) * sizeof(*names));
		if (!more || !(more[n] = strdup(e->d_name)))
			ret = -1;
		if (more)
			names = more;
		n += ret == 0;
	}
	closedir(d);
	if (ret == 0 && n == 0) {
		/* No stream file at all: never what a channel leaves. */
		fprintf(stderr, "grb-read: %s: no files in this directory\n",
			dir);
		failed = 1;
	}
	qsort(names, n, sizeof(*names), by_name);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (ret == 0)
			ret = add_file(l, path);
		free(names[i]);
	}
	free(names);
	return ret;
}

static void summary(const struct list *l, uint64_t count)
{
	const struct src *s;
	size_t i;

	for (i = 0; i < l->n; i++) {
		s = &l->v[i];
		printf("# %s: %" PRIu64 " sub-buffers, %" PRIu64 " records, %"
		       PRIu64 " gaps (%" PRIu64 " sub-buffers missing), %"
		       PRIu64 " lost, %" PRIu64 " overwritten\n", s->path,
		       s->subbufs, s->records, s->gaps, s->missing, s->lost,
		       s->overwritten);
	}
	printf("# total: %" PRIu64 " records from %zu files\n", count, l->n);
}

static void usage(FILE *f)
{
	fputs("usage: grb-read [-q] PATH...\n"
	      "  Print the records of basic-channel files written by\n"
	      "  grb_buf_write()/grb_buf_splice(), merged in timestamp order.\n"
	      "  PATH is a file or a directory of them; -q prints only notes\n"
	      "  and the summary.\n", f);
}

int main(int argc, char **argv)
{
	struct list l = { NULL, 0, 0 };
	struct stat st;
	uint64_t count;
	size_t i;
	int a, ret = 0;

	/* A reader of our output that went away is an output error like a
	 * full disk (reported, status 1), not a silent death by SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		if (strcmp(argv[a], "-q") == 0) {
			quiet = 1;
		} else if (strcmp(argv[a], "-h") == 0 ||
			   strcmp(argv[a], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "grb-read: unknown option '%s'\n",
				argv[a]);
			usage(stderr);
			return 2;
		}
	}
	if (a == argc) {
		fputs("grb-read: no PATH given\n", stderr);
		usage(stderr);
		return 2;
	}
	for (; a < argc && ret == 0; a++) {
		if (stat(argv[a], &st) == 0 && S_ISDIR(st.st_mode))
			ret = add_dir(&l, argv[a]);
		else
			ret = add_file(&l, argv[a]);
	}
	if (ret) {
		fprintf(stderr, "grb-read: out of memory\n");
		return 1;
	}
	count = merge(l.v, l.n);
	summary(&l, count);
	/* Output that did not all get out (a full disk, a closed pipe) must
	 * not pass for the whole of it. */
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "grb-read: writing the records: %s\n",
			errno ? strerror(errno) : "write error");
		failed = 1;
	}
	for (i = 0; i < l.n; i++) {
		close(l.v[i].fd);
		free(l.v[i].sb);
		free(l.v[i].path);
	}
	free(l.v);
	return failed;
}
