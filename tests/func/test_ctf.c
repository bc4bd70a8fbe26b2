/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_ctf.c - the CTF client (grb/ctf.h).
 *
 * test_ctf [contract]
 *	every errno and promise of grb/ctf.h a program can reach: what
 *	grb_ctf_create() refuses and what a failed creation leaves; each
 *	class grb_ctf_event_register() refuses, -ENOSPC, a failed metadata
 *	write; each refusal of grb_ctf_emit() and grb_ctf_emit_raw() and
 *	the losses they report and count; stop, statistics, the channel
 *	read back by its caller, the attach configurations, the metadata
 *	loader, grb_ctf_packet_fixup() and grb_ctf_stream_trailer();
 *	flush_period_ns (a quiet buffer's events reach the stream files
 *	while the tracer runs); events_dead after a writer process of a
 *	shared tracer died holding reservations, recovered by a consumer
 *	or by the writer thread.  ctest runs this mode
 *	(func/test_ctf).
 *
 * test_ctf events DIR OUT [--per-channel] [--all-ids]
 *	three writer threads moving between CPUs, and a signal handler
 *	interrupting them, emit events of classes covering every field
 *	kind, through grb_ctf_emit() and grb_ctf_emit_raw(), into a trace
 *	in DIR (one class is registered while they run, and every buffer
 *	stays quiet for longer than the 27 timestamp bits cover); then
 *	events too big for a sub-buffer are refused.  OUT receives one
 *	JSON object a line: the classes, each event committed (thread,
 *	sequence number, the clock read just before and just after its
 *	emit, its CPU) and the counters.  Per-CPU buffers in discard mode;
 *	--per-channel: one buffer in overwrite mode; --all-ids: more than
 *	GRB_CTF_COMPACT_IDS classes (the ids from 30 up).
 *
 * test_ctf discard|overwrite DIR OUT
 *	a consumer too slow for two writers (the writer thread runs at
 *	SCHED_IDLE), until events were refused (discard) or packets
 *	overwritten (overwrite); OUT receives the counters.
 *
 * tests/func/ctf_check.py runs the last two, then babeltrace2 and
 * babeltrace 1.5 on DIR, and compares what they print with OUT.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "grb/channel.h"
#include "grb/ctf.h"
#include "grb/reader.h"
#include "grb/recover.h"
#include "grb/shm.h"
#include "grb/writer.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * A check of a promise the client is known to break (reported, not
 * fixed here).  It must fail today; once it passes the bug is fixed and
 * the marker has to become a CHECK, so an unexpected pass fails too.
 */
#define CHECK_XFAIL(cond, bug) do {                                       \
	if (cond) {                                                       \
		fprintf(stderr, "%s:%d: XPASS, the known bug is fixed: "  \
			"make this a CHECK: %s\n", __FILE__, __LINE__, bug); \
		exit(1);                                                  \
	}                                                                 \
	printf("test_ctf: XFAIL (known bug): %s\n", bug);                 \
} while (0)

/* ---- helpers -------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u),
			       (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The CPUs this process may run on, which the writers move between. */
static int cpus[CPU_SETSIZE];
static int ncpus;

static void cpus_init(void)
{
	cpu_set_t set;

	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpus++] = c;
	CHECK(ncpus > 0);
}

/* Run the calling thread on @cpu only; it is there when this returns. */
static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void path_of(char *out, size_t n, const char *dir, const char *name)
{
	CHECK((size_t)snprintf(out, n, "%s/%s", dir, name) < n);
}

/* Entries of @dir but . and .., or -1 when it does not exist. */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static int exists(const char *dir, const char *name)
{
	char p[512];

	path_of(p, sizeof(p), dir, name);
	return access(p, F_OK) == 0;
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	path_of(p, sizeof(p), dir, name);
	f = fopen(p, "w");
	CHECK(f != NULL);
	fputs(text, f);
	CHECK_EQ(fclose(f), 0);
}

static char *slurp(const char *dir, const char *name, size_t *len)
{
	char p[512];
	struct stat st;
	char *buf;
	int fd;

	path_of(p, sizeof(p), dir, name);
	fd = open(p, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	CHECK(buf != NULL);
	CHECK_EQ(read(fd, buf, (size_t)st.st_size), st.st_size);
	buf[st.st_size] = 0;
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* Remove the files of @dir, then @dir. */
static void rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		path_of(p, sizeof(p), dir, e->d_name);
		CHECK_EQ(unlink(p), 0);
	}
	closedir(d);
	CHECK_EQ(rmdir(dir), 0);
}

/* ---- event classes covering every field kind ------------------------- */

#define INT(n, sz, sg, b)        { n, GRB_CTF_INT, sz, sg, b, 0, NULL, 0 }
#define INTS(n, sz, sg, b, len)  { n, GRB_CTF_INT, sz, sg, b, len, NULL, 0 }
#define FLT(n, sz)               { n, GRB_CTF_FLOAT, sz, 0, 0, 0, NULL, 0 }
#define FLTS(n, sz, len)         { n, GRB_CTF_FLOAT, sz, 0, 0, len, NULL, 0 }
#define STR(n)                   { n, GRB_CTF_STRING, 0, 0, 0, 0, NULL, 0 }
#define ENUM(n, sz, sg, l)       { n, GRB_CTF_ENUM, sz, sg, 0, 0, l, ARRAY_SIZE(l) }
#define ENUMS(n, sz, sg, l, len) { n, GRB_CTF_ENUM, sz, sg, 0, len, l, ARRAY_SIZE(l) }

static const struct grb_ctf_enum_label lab_state[] = {   /* i8 */
	{ "NEG_MIN", -128 }, { "MINUS_ONE", -1 }, { "ZERO", 0 },
	{ "POS_MAX", 127 }, { "état ü", 5 },
};
static const struct grb_ctf_enum_label lab_mode[] = {    /* u16; RUN twice */
	{ "IDLE", 0 }, { "RUN", 1 }, { "ALSO_RUN", 1 }, { "WAIT", 2 },
	{ "TOP", 65535 },
};
static const struct grb_ctf_enum_label lab_wide[] = {    /* i64 */
	{ "MIN", INT64_MIN }, { "MAX", INT64_MAX }, { "ONE", 1 },
	{ "NEG", -77 },
};
static const struct grb_ctf_enum_label lab_mask[] = {    /* u32 */
	{ "NONE", 0 }, { "ALL", 4294967295 }, { "SEVEN", 7 },
};
static const struct grb_ctf_enum_label lab_big[] = {     /* u64 */
	{ "ZERO", 0 }, { "TOP_SIGNED", INT64_MAX }, { "ONE", 1 },
};

static const struct grb_ctf_field f_uints[] = {
	INT("u8", 1, 0, 10), INT("u16", 2, 0, 16), INT("u32", 4, 0, 10),
	INT("u64", 8, 0, 16), INT("u8_bin", 1, 0, 2), INT("u16_oct", 2, 0, 8),
	INT("u64_dec", 8, 0, 10), INT("u32_hex", 4, 0, 16),
	INT("u32_default", 4, 0, 0),
};
static const struct grb_ctf_field f_sints[] = {
	INT("s8", 1, 1, 10), INT("s16", 2, 1, 16), INT("s32", 4, 1, 10),
	INT("s64", 8, 1, 16), INT("s8_bin", 1, 1, 2), INT("s16_oct", 2, 1, 8),
	INT("s64_dec", 8, 1, 10), INT("s32_hex", 4, 1, 16),
	INT("s64_oct", 8, 1, 8), INT("s16_bin", 2, 1, 2),
};
static const struct grb_ctf_field f_floats[] = {
	FLT("f4", 4), FLT("f8", 8), FLT("g4", 4), FLT("g8", 8),
};
static const struct grb_ctf_field f_strings[] = {
	STR("s"), INT("n", 2, 0, 10), STR("t"), STR("u"),
};
static const struct grb_ctf_field f_enums[] = {
	ENUM("state", 1, 1, lab_state), ENUM("mode", 2, 0, lab_mode),
	ENUM("wide", 8, 1, lab_wide), ENUM("mask", 4, 0, lab_mask),
	ENUM("big", 8, 0, lab_big),
};
static const struct grb_ctf_field f_arrays[] = {
	INTS("bytes", 1, 0, 16, 300), INTS("shorts", 2, 1, 10, 4),
	INTS("quads", 8, 0, 16, 3), FLTS("fl", 4, 3), FLTS("db", 8, 2),
	ENUMS("states", 1, 1, lab_state, 3), ENUMS("masks", 4, 0, lab_mask, 2),
	INTS("one", 4, 1, 8, 1),
};
static const struct grb_ctf_field f_mixed[] = {
	STR("head"), INT("x", 4, 1, 10), STR("mid"), FLTS("pair", 8, 2),
	ENUM("m", 2, 0, lab_mode), STR("tail"),
};
/* TSDL keywords and a leading underscore: the metadata writes every
 * field name with one more underscore, which readers remove. */
static const struct grb_ctf_field f_keywords[] = {
	INT("string", 4, 0, 10), STR("integer"), FLT("enum", 8),
	INT("struct", 2, 1, 16), INT("_under", 1, 0, 10), INT("align", 8, 1, 10),
	INT("event", 1, 1, 10), STR("floating_point"),
};
static const struct grb_ctf_field f_unicode[] = {
	INT("seq", 4, 0, 10), STR("text"),
};
static const struct grb_ctf_field f_filler[] = {
	INT("k", 4, 0, 10), INT("d", 2, 1, 16),
};
static const struct grb_ctf_field f_signal[] = {
	INT("tag", 8, 0, 16), STR("note"), FLT("f", 4),
};
static const struct grb_ctf_field f_late[] = {
	INT("x", 4, 0, 10), STR("why"), ENUMS("e", 2, 0, lab_mode, 2),
};

/*
 * Strings a reader must print as written.  None holds '"', '\\' or a
 * control character: babeltrace 1.5 prints strings without escaping
 * them, so its lines could not be parsed back.
 */
static const char *const texts[] = {
	"",
	"plain ASCII text",
	"héllo wörld",
	"日本語のテキスト",
	"rocket 🚀 four-byte UTF-8",
	"punctuation, [brackets] {braces} (parens) : colon = equals",
	"a longer string: 0123456789 abcdefghijklmnopqrstuvwxyz "
	"0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 abcdefghij "
	"0123456789 the end",
};

#define MAXF 12          /* fields in one test class, at most */
#define ARR_BYTES 320    /* bytes of one array field, at most */
#define MAXC 48          /* test classes */

struct tclass {
	char name[64];
	int loglevel;
	const struct grb_ctf_field *fields;
	unsigned int nr_fields;
	const struct grb_ctf_event *ev;
};

static struct tclass classes[MAXC];
static unsigned int nr_classes;
static unsigned int nr_setup;       /* the classes the writers pick */
static unsigned int sig_class, late_class, big_class;

static unsigned int add_class(const char *name, int loglevel,
			      const struct grb_ctf_field *f, unsigned int n)
{
	struct tclass *c = &classes[nr_classes];

	CHECK(nr_classes < MAXC && n <= MAXF);
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->loglevel = loglevel;
	c->fields = f;
	c->nr_fields = n;
	for (unsigned int i = 0; i < n; i++)
		CHECK((size_t)f[i].size * f[i].length <= ARR_BYTES);
	return nr_classes++;
}

#define ADD_CLASS(name, ll, f) add_class(name, ll, f, ARRAY_SIZE(f))

/* The id grb/ctf.h promises the class registered after @rank others:
 * the rank, skipping 30 (the padding event's). */
static uint32_t id_of_rank(uint32_t rank)
{
	return rank < 30 ? rank : rank + 1;
}

/* The classes of the events mode; @all_ids: more than 30 of them. */
static void classes_init(int all_ids)
{
	char name[64];

	ADD_CLASS("grb_test:ints_unsigned", 0, f_uints);
	ADD_CLASS("grb_test:ints_signed", 1, f_sints);
	ADD_CLASS("grb_test:floats", 2, f_floats);
	big_class = ADD_CLASS("grb_test:strings", 3, f_strings);
	ADD_CLASS("grb_test:enums", 4, f_enums);
	ADD_CLASS("grb_test:arrays", 5, f_arrays);
	add_class("grb_test:empty", -1, NULL, 0);
	ADD_CLASS("grb_test:mixed", 6, f_mixed);
	ADD_CLASS("grb_test:keywords", 7, f_keywords);
	ADD_CLASS("grb_test:ünïcödé évènement", 14, f_unicode);
	/* Ranks 10 to 27; with all_ids 28 to 32 too, which have ids 28,
	 * 29, 31, 32 and 33 (30 is the padding event's, 31 the extended
	 * header's code in the compact space). */
	for (unsigned int i = 10; i < (all_ids ? 33u : 28u); i++) {
		snprintf(name, sizeof(name), "grb_test:filler_%02u", i);
		ADD_CLASS(name, (int)(i % 16) - 1, f_filler);
	}
	nr_setup = nr_classes;
	sig_class = ADD_CLASS("grb_test:signal", 9, f_signal);
	late_class = ADD_CLASS("grb_test:late", 10, f_late);
}

static int register_class(struct grb_ctf *t, unsigned int i)
{
	struct tclass *c = &classes[i];
	struct grb_ctf_event_desc d = { c->name, c->loglevel, c->fields,
					c->nr_fields };

	return grb_ctf_event_register(t, &d, &c->ev);
}

/* ---- values: a pure function of (class, thread, seq) ----------------- */

static uint64_t mix64(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static uint64_t draw(unsigned int cls, uint32_t thr, uint32_t seq,
		     unsigned int field, unsigned int elem)
{
	return mix64(mix64(mix64((uint64_t)cls << 32 | thr) ^ seq) ^
		     ((uint64_t)field << 32 | elem));
}

/* 2^e, for e in the normal range of a double. */
static double pow2(int e)
{
	uint64_t bits = (uint64_t)(e + 1023) << 52;
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

/* An integer or enumeration element: its bits, sign-extended. */
static uint64_t elem_bits(const struct grb_ctf_field *fd, uint64_t r)
{
	unsigned int bits = fd->size * 8;
	uint64_t mask = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
	uint64_t v;

	if (fd->kind == GRB_CTF_ENUM && r % 4 != 0)
		return (uint64_t)fd->labels[(r >> 2) % fd->nr_labels].value;
	switch ((r >> 2) % 8) {
	case 0:         /* the minimum */
		v = fd->is_signed ? UINT64_C(1) << (bits - 1) : 0;
		break;
	case 1:         /* the maximum */
		v = fd->is_signed ? mask >> 1 : mask;
		break;
	case 2:
		v = 0;
		break;
	case 3:         /* -1, or the maximum */
		v = mask;
		break;
	default:
		v = r >> 5;
		break;
	}
	v &= mask;
	if (fd->is_signed && bits < 64 && (v >> (bits - 1)))
		v |= ~mask;
	return v;
}

static double elem_float(const struct grb_ctf_field *fd, uint64_t r)
{
	static const double special[] = { 0.0, -0.0, 1.0, -1.5, 0.1,
					  65504.0, 1e-3, 3.0e38 };
	int span = fd->size == 4 ? 60 : 900;
	int e = (int)((r >> 8) % (uint64_t)(2 * span + 1)) - span - 31;

	if (r % 6 == 0)
		return special[(r >> 3) % ARRAY_SIZE(special)];
	return (double)(int32_t)(r >> 32) * pow2(e);
}

struct gen {
	int raw;                              /* through emit_raw */
	union grb_ctf_value v[MAXF];
	unsigned char arr[MAXF][ARR_BYTES];   /* arrays, native layout */
};

static void gen_event(unsigned int cls, uint32_t thr, uint32_t seq,
		      struct gen *g)
{
	const struct tclass *c = &classes[cls];

	g->raw = (int)(draw(cls, thr, seq, 63, 0) & 1);
	for (unsigned int i = 0; i < c->nr_fields; i++) {
		const struct grb_ctf_field *fd = &c->fields[i];
		uint64_t r = draw(cls, thr, seq, i, 0);

		if (fd->kind == GRB_CTF_STRING) {
			/* NULL is written as "" (grb_ctf_emit() only). */
			g->v[i].s = !g->raw && r % 11 == 0 ? NULL
				: texts[r % ARRAY_SIZE(texts)];
		} else if (fd->length) {
			for (unsigned int e = 0; e < fd->length; e++) {
				uint64_t re = draw(cls, thr, seq, i, e + 1);
				unsigned char *p = g->arr[i] + e * fd->size;

				if (fd->kind == GRB_CTF_FLOAT && fd->size == 4) {
					float x = (float)elem_float(fd, re);

					memcpy(p, &x, 4);
				} else if (fd->kind == GRB_CTF_FLOAT) {
					double x = elem_float(fd, re);

					memcpy(p, &x, 8);
				} else {
					uint64_t b = elem_bits(fd, re);

					memcpy(p, &b, fd->size);
				}
			}
			g->v[i].array = g->arr[i];
		} else if (fd->kind == GRB_CTF_FLOAT) {
			g->v[i].d = elem_float(fd, r);
		} else {
			g->v[i].u = elem_bits(fd, r);
		}
	}
}

/* The payload of grb_ctf_emit_raw(): fields packed, little-endian. */
static size_t pack(unsigned int cls, const struct gen *g, unsigned char *p)
{
	const struct tclass *c = &classes[cls];
	size_t n = 0;

	for (unsigned int i = 0; i < c->nr_fields; i++) {
		const struct grb_ctf_field *fd = &c->fields[i];

		if (fd->kind == GRB_CTF_STRING) {
			size_t len = strlen(g->v[i].s) + 1;

			memcpy(p + n, g->v[i].s, len);
			n += len;
		} else if (fd->length) {
			memcpy(p + n, g->arr[i], (size_t)fd->size * fd->length);
			n += (size_t)fd->size * fd->length;
		} else if (fd->kind == GRB_CTF_FLOAT && fd->size == 4) {
			float x = (float)g->v[i].d;

			memcpy(p + n, &x, 4);
			n += 4;
		} else {
			memcpy(p + n, &g->v[i].u, fd->size);
			n += fd->size;
		}
	}
	return n;
}

static int emit_gen(struct grb_ctf *t, unsigned int cls, const struct gen *g)
{
	unsigned char buf[MAXF * ARR_BYTES];

	if (g->raw)
		return grb_ctf_emit_raw(t, classes[cls].ev, buf, pack(cls, g, buf));
	return grb_ctf_emit(t, classes[cls].ev, g->v);
}

/* ---- the expected file ---------------------------------------------- */

static const char *kind_name(enum grb_ctf_kind k)
{
	switch (k) {
	case GRB_CTF_INT: return "int";
	case GRB_CTF_FLOAT: return "float";
	case GRB_CTF_STRING: return "string";
	default: return "enum";
	}
}

static void json_class(FILE *f, unsigned int i)
{
	const struct tclass *c = &classes[i];

	fputs("{\"class\": ", f);
	json_str(f, c->name);
	fprintf(f, ", \"id\": %u, \"loglevel\": %d, \"fields\": [",
		grb_ctf_event_id(c->ev), c->loglevel);
	for (unsigned int j = 0; j < c->nr_fields; j++) {
		const struct grb_ctf_field *fd = &c->fields[j];

		fprintf(f, "%s{\"name\": ", j ? ", " : "");
		json_str(f, fd->name);
		fprintf(f, ", \"kind\": \"%s\", \"size\": %u, \"signed\": %d, "
			"\"base\": %u, \"length\": %u, \"labels\": [",
			kind_name(fd->kind), fd->size, fd->is_signed,
			fd->base ? fd->base : 10, fd->length);
		for (unsigned int k = 0; k < fd->nr_labels; k++) {
			fprintf(f, "%s[", k ? ", " : "");
			json_str(f, fd->labels[k].label);
			fprintf(f, ", %" PRId64 "]", fd->labels[k].value);
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
}

/* One element in native layout. */
static void json_elem(FILE *f, const struct grb_ctf_field *fd,
		      const unsigned char *p)
{
	uint64_t u = 0;

	if (fd->kind == GRB_CTF_FLOAT && fd->size == 4) {
		float x;

		memcpy(&x, p, 4);
		fprintf(f, "%.17e", (double)x);
		return;
	}
	if (fd->kind == GRB_CTF_FLOAT) {
		double x;

		memcpy(&x, p, 8);
		fprintf(f, "%.17e", x);
		return;
	}
	memcpy(&u, p, fd->size);
	if (fd->is_signed && fd->size < 8 && (u >> (fd->size * 8 - 1)))
		u |= ~((UINT64_C(1) << (fd->size * 8)) - 1);
	if (fd->is_signed)
		fprintf(f, "%" PRId64, (int64_t)u);
	else
		fprintf(f, "%" PRIu64, u);
}

struct rec {
	unsigned int cls;
	uint32_t seq;
	uint64_t lo, hi;     /* the clock just before and after the emit */
	int cpu;             /* the CPU of its buffer */
};

static void json_event(FILE *f, const struct rec *r, uint32_t thr)
{
	const struct tclass *c = &classes[r->cls];
	struct gen g;

	gen_event(r->cls, thr, r->seq, &g);
	fputs("{\"event\": ", f);
	json_str(f, c->name);
	fprintf(f, ", \"thread\": %u, \"seq\": %u, \"lo\": %" PRIu64
		", \"hi\": %" PRIu64 ", \"cpu\": %d, \"values\": [", thr,
		r->seq, r->lo, r->hi, r->cpu);
	for (unsigned int i = 0; i < c->nr_fields; i++) {
		const struct grb_ctf_field *fd = &c->fields[i];
		unsigned char b[8];

		if (i)
			fputs(", ", f);
		if (fd->kind == GRB_CTF_STRING) {
			json_str(f, g.v[i].s ? g.v[i].s : "");
		} else if (fd->length) {
			fputc('[', f);
			for (unsigned int e = 0; e < fd->length; e++) {
				if (e)
					fputs(", ", f);
				json_elem(f, fd, g.arr[i] + e * fd->size);
			}
			fputc(']', f);
		} else if (fd->kind == GRB_CTF_FLOAT) {
			/* A size 4 value is narrowed to float. */
			fprintf(f, "%.17e", fd->size == 4 ?
				(double)(float)g.v[i].d : g.v[i].d);
		} else {
			memcpy(b, &g.v[i].u, 8);
			json_elem(f, fd, b);
		}
	}
	fputs("]}\n", f);
}

/* The counters, and each buffer's with the name of its stream file. */
static void json_stats(FILE *f, struct grb_ctf *t, const char *name)
{
	struct grb_channel *ch = grb_ctf_channel(t);
	struct grb_ctf_stats st;

	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	fprintf(f, "{\"stats\": {\"events\": %" PRIu64 ", \"events_discarded\": %"
		PRIu64 ", \"events_dead\": %" PRIu64 ", \"events_overwritten\": %"
		PRIu64 ", \"packets\": %" PRIu64 ", \"packets_discarded\": %"
		PRIu64 ", \"bytes\": %" PRIu64 "}, \"buffers\": [", st.events,
		st.events_discarded, st.events_dead, st.events_overwritten,
		st.packets, st.packets_discarded, st.bytes);
	for (unsigned int i = 0; i < grb_channel_nr_bufs(ch); i++) {
		struct grb_buf *b = grb_channel_buf(ch, i);
		struct grb_buf_stats bs;
		int cpu = grb_buf_cpu(b);

		CHECK_EQ(grb_buf_get_stats(b, &bs), 0);
		fprintf(f, "%s{\"stream\": \"%s_%d\", \"lost\": %" PRIu64
			", \"lost_full\": %" PRIu64 ", \"lost_wrap\": %" PRIu64
			", \"lost_big\": %" PRIu64 ", \"lost_nesting\": %" PRIu64
			", \"written\": %" PRIu64 ", \"overwritten\": %" PRIu64 "}",
			i ? ", " : "", name, cpu < 0 ? 0 : cpu,
			bs.lost_full + bs.lost_wrap + bs.lost_big +
			bs.lost_nesting, bs.lost_full, bs.lost_wrap,
			bs.lost_big, bs.lost_nesting, bs.written,
			bs.overwritten);
	}
	fputs("]}\n", f);
}

/* ---- events: threads, migrations, a signal handler ------------------- */

#define NTHR 3              /* writer threads */
#define PER 400             /* events per writer thread */
#define HMAX 1024           /* signal handler events per thread, at most */
#define HANDLER_THREAD 100  /* handler events: thread HANDLER_THREAD + id */
#define GAP_NS 150000000u   /* quiet time, more than 2^27 ns */
#define NBIG 3              /* refused events at the end */

struct writer {
	int id;
	pthread_t th;
	int target;                        /* the CPU it is pinned to */
	int per_channel;
	volatile sig_atomic_t in_emit;
	volatile sig_atomic_t nh;          /* handler events recorded */
	unsigned int nested;               /* of them inside an emit */
	unsigned int handler_errors;
	struct rec recs[PER];
	struct rec hrecs[HMAX];
};

static struct grb_ctf *tracer;
static struct writer writers[NTHR];
static _Thread_local struct writer *self;
static const struct grb_ctf_event *_Atomic late_ev;
static pthread_barrier_t gap_barrier;
static _Atomic int quiet, quiet_ack, finished, sig_stopped;

static void on_signal(int sig)
{
	struct writer *w = self;
	int saved = errno;
	struct gen g;
	uint64_t lo, hi;
	int ret, cpu, n;

	(void)sig;
	if (!w || w->nh >= HMAX)
		return;
	n = w->nh;
	gen_event(sig_class, HANDLER_THREAD + (uint32_t)w->id, (uint32_t)n, &g);
	/* The thread may be between choosing its next CPU and moving
	 * there: the CPU is the one it runs on, before and after. */
	cpu = sched_getcpu();
	lo = now_ns();
	ret = emit_gen(tracer, sig_class, &g);
	hi = now_ns();
	if (ret || cpu != sched_getcpu()) {
		w->handler_errors++;
	} else {
		w->hrecs[n] = (struct rec){ sig_class, (uint32_t)n, lo, hi,
					    w->per_channel ? 0 : cpu };
		w->nested += w->in_emit != 0;
		w->nh = n + 1;
	}
	errno = saved;
}

/* Every buffer quiet for GAP_NS: the next event of each needs a full
 * timestamp, or a reader would place it 2^27 ns too early. */
static void quiet_gap(struct writer *w)
{
	pthread_barrier_wait(&gap_barrier);
	if (w->id == 0) {
		atomic_store(&quiet, 1);
		while (!atomic_load(&quiet_ack))
			sleep_ns(100000);
		sleep_ns(GAP_NS);
	}
	pthread_barrier_wait(&gap_barrier);
	if (w->id == 0) {
		atomic_store(&quiet_ack, 0);
		atomic_store(&quiet, 0);
	}
}

/* A class registered while events are written. */
static void register_late(void)
{
	CHECK_EQ(register_class(tracer, late_class), 0);
	atomic_store_explicit(&late_ev, classes[late_class].ev,
			      memory_order_release);
}

static unsigned int pick(uint32_t thr, uint32_t seq)
{
	const struct grb_ctf_event *late =
		atomic_load_explicit(&late_ev, memory_order_acquire);
	unsigned int n = nr_setup + (late != NULL);
	unsigned int k = (seq + thr * 11) % n;

	return k < nr_setup ? k : late_class;
}

static void *events_writer(void *arg)
{
	struct writer *w = (struct writer *)arg;

	self = w;
	for (uint32_t seq = 0; seq < PER; seq++) {
		unsigned int cls;
		struct gen g;
		uint64_t lo, hi;
		int ret, cpu;

		if (seq % 5 == 0) {
			w->target = cpus[(seq / 5 + (uint32_t)w->id) %
					 (uint32_t)ncpus];
			pin(w->target);
		}
		if (seq == PER / 2)
			quiet_gap(w);
		if (w->id == 1 && seq == PER / 4)
			register_late();
		cls = pick((uint32_t)w->id, seq);
		gen_event(cls, (uint32_t)w->id, seq, &g);
		w->in_emit = 1;
		lo = now_ns();
		ret = emit_gen(tracer, cls, &g);
		hi = now_ns();
		w->in_emit = 0;
		cpu = sched_getcpu();
		CHECK_EQ(ret, 0);
		CHECK_EQ(cpu, w->target);
		w->recs[seq] = (struct rec){ cls, seq, lo, hi,
					     w->per_channel ? 0 : cpu };
	}
	atomic_fetch_add(&finished, 1);
	/* The signaller must not signal a thread that is gone. */
	while (!atomic_load(&sig_stopped))
		sleep_ns(100000);
	return NULL;
}

static void *signaller(void *arg)
{
	(void)arg;
	while (atomic_load(&finished) < NTHR) {
		if (atomic_load(&quiet)) {
			atomic_store(&quiet_ack, 1);
		} else {
			for (int i = 0; i < NTHR; i++)
				pthread_kill(writers[i].th, SIGUSR1);
		}
		sleep_ns(200000);
	}
	atomic_store(&sig_stopped, 1);
	return NULL;
}

/* Refused after the last event: only the stream's final packet can
 * report them (grb_ctf_stop()). */
static void refuse_big(size_t subbuf_size)
{
	union grb_ctf_value big[4];
	char *s = malloc(subbuf_size + 1);

	CHECK(s != NULL);
	memset(s, 'x', subbuf_size);
	s[subbuf_size] = 0;
	big[0].s = s;
	big[1].u = 1;
	big[2].s = big[3].s = "";
	/* No sub-buffer open: stop must add a packet to report them. */
	CHECK_EQ(grb_channel_flush(grb_ctf_channel(tracer), GRB_FLUSH_ACTIVE),
		 0);
	for (int k = 0; k < NBIG; k++) {
		pin(cpus[k % ncpus]);
		CHECK_EQ(grb_ctf_emit(tracer, classes[big_class].ev, big),
			 -ENOSPC);
	}
	free(s);
}

/* The classes, the events committed, the counters; returns the events. */
static uint64_t write_expected(const char *out, const char *name,
			       unsigned int *nested)
{
	uint64_t events = 0;
	FILE *f = fopen(out, "w");

	CHECK(f != NULL);
	*nested = 0;
	for (unsigned int i = 0; i < nr_classes; i++)
		json_class(f, i);
	for (int i = 0; i < NTHR; i++) {
		struct writer *w = &writers[i];

		CHECK_EQ(w->handler_errors, 0);
		for (int k = 0; k < PER; k++)
			json_event(f, &w->recs[k], (uint32_t)i);
		for (int k = 0; k < w->nh; k++)
			json_event(f, &w->hrecs[k],
				   HANDLER_THREAD + (uint32_t)i);
		events += PER + (uint64_t)w->nh;
		*nested += w->nested;
	}
	json_stats(f, tracer, name);
	CHECK_EQ(fclose(f), 0);
	return events;
}

static int run_events(const char *dir, const char *out, int per_channel,
		      int all_ids)
{
	struct grb_ctf_attr attr = {
		.name = "ctf", .subbuf_size = 4096, .num_subbuf = 256,
		.alloc = per_channel ? GRB_ALLOC_PER_CHANNEL : GRB_ALLOC_PER_CPU,
		.mode = per_channel ? GRB_MODE_OVERWRITE : GRB_MODE_DISCARD,
		.clock = GRB_CTF_CLOCK_MONOTONIC, .trace_dir = dir,
		/* Longer than the gap, so it stays inside one packet. */
		.flush_period_ns = 2000000000u,
		.hostname = "grb-test",
	};
	struct sigaction sa;
	struct grb_ctf_stats st;
	pthread_t sig_th;
	unsigned int nested;
	uint64_t events;

	classes_init(all_ids);
	CHECK_EQ(grb_ctf_create(&attr, &tracer), 0);
	for (unsigned int i = 0; i <= nr_setup; i++) {
		CHECK_EQ(register_class(tracer, i), 0);
		/* The id is the registration rank, skipping 30. */
		CHECK_EQ(grb_ctf_event_id(classes[i].ev), id_of_rank(i));
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(pthread_barrier_init(&gap_barrier, NULL, NTHR), 0);
	for (int i = 0; i < NTHR; i++) {
		writers[i].id = i;
		writers[i].per_channel = per_channel;
		CHECK_EQ(pthread_create(&writers[i].th, NULL, events_writer,
					&writers[i]), 0);
	}
	CHECK_EQ(pthread_create(&sig_th, NULL, signaller, NULL), 0);
	for (int i = 0; i < NTHR; i++)
		CHECK_EQ(pthread_join(writers[i].th, NULL), 0);
	CHECK_EQ(pthread_join(sig_th, NULL), 0);
	signal(SIGUSR1, SIG_IGN);
	pthread_barrier_destroy(&gap_barrier);
	CHECK_EQ(grb_ctf_event_id(classes[late_class].ev),
		 id_of_rank(nr_setup + 1));

	refuse_big(attr.subbuf_size);
	CHECK_EQ(grb_ctf_stop(tracer), 0);
	events = write_expected(out, attr.name, &nested);

	CHECK_EQ(grb_ctf_get_stats(tracer, &st), 0);
	CHECK_U64(st.events, events);
	CHECK_U64(st.events_discarded, NBIG);
	CHECK_U64(st.events_overwritten, 0);
	CHECK_U64(st.packets_discarded, 0);
	CHECK_U64(st.events_dead, 0);
	printf("test_ctf events: %llu events (%u in a handler inside an "
	       "emit), %llu packets, %u classes\n", (unsigned long long)events,
	       nested, (unsigned long long)st.packets, nr_classes);
	grb_ctf_destroy(tracer);
	return 0;
}

/* ---- discard, overwrite: a slow consumer ----------------------------- */

#define LW 4                      /* writer threads */
#define LOSS_DEADLINE_NS 5000000000u

struct load {
	uint8_t thread;
	uint32_t seq;
	uint64_t v[4];
} __attribute__((packed));

static const struct grb_ctf_field f_load[] = {
	INT("thread", 1, 0, 10), INT("seq", 4, 0, 10), INTS("v", 8, 0, 16, 4),
};
static const struct grb_ctf_field f_huge[] = { STR("text") };

struct lwriter {
	int id;
	pthread_t th;
	uint64_t ok, full, wrap, big;
};

static const struct grb_ctf_event *load_ev, *huge_ev;
static enum grb_mode loss_mode;
static pthread_barrier_t loss_start;
static _Atomic int loss_stop, loss_timeout;
static uint64_t loss_deadline;
static char huge_text[8192];

/* Enough to compare: losses of the kind the mode has, and packets the
 * consumer wrote around them. */
static int losses_seen(void)
{
	unsigned int nb = grb_channel_nr_bufs(grb_ctf_channel(tracer));
	struct grb_buf_stats bs;
	struct grb_ctf_stats st;

	CHECK_EQ(grb_ctf_get_stats(tracer, &st), 0);
	CHECK_EQ(grb_channel_get_stats(grb_ctf_channel(tracer), &bs), 0);
	if (loss_mode == GRB_MODE_DISCARD)
		return bs.lost_full > 0 && st.packets >= nb + 4;
	return st.packets_discarded > 0 && st.events_overwritten > 0 &&
		st.packets >= nb + 2;
}

static void *loss_writer(void *arg)
{
	struct lwriter *w = (struct lwriter *)arg;
	union grb_ctf_value huge = { .s = huge_text };
	struct load p;

	memset(&p, 0, sizeof(p));
	p.thread = (uint8_t)w->id;
	pthread_barrier_wait(&loss_start);
	for (uint32_t n = 0;; n++) {
		int ret;

		if (n % 2048 == 0) {
			pin(cpus[(n / 2048 + (uint32_t)w->id) % (uint32_t)ncpus]);
			if (w->id == 0 && losses_seen())
				atomic_store(&loss_stop, 1);
			if (w->id == 0 && now_ns() > loss_deadline) {
				atomic_store(&loss_timeout, 1);
				atomic_store(&loss_stop, 1);
			}
			if (atomic_load(&loss_stop))
				break;
		}
		if (n % 5000 == 17) {
			CHECK_EQ(grb_ctf_emit(tracer, huge_ev, &huge), -ENOSPC);
			w->big++;
			continue;
		}
		p.seq = n;
		p.v[0] = n;
		p.v[3] = ~(uint64_t)n;
		ret = grb_ctf_emit_raw(tracer, load_ev, &p, sizeof(p));
		if (ret == 0)
			w->ok++;
		else if (ret == -ENOBUFS && loss_mode == GRB_MODE_DISCARD)
			w->full++;
		else if (ret == -EIO)
			w->wrap++;
		else
			CHECK_EQ(ret, 0);
	}
	return NULL;
}

/* The writers' counts @w against grb's, then the counters to @out. */
static void loss_results(enum grb_mode mode, const struct lwriter *w,
			 const char *out, const char *name)
{
	uint64_t ok = w->ok, full = w->full, wrap = w->wrap, big = w->big;
	struct grb_buf_stats bs;
	struct grb_ctf_stats st;
	FILE *f;

	/* Every refusal the writers saw is a discarded event, by reason. */
	CHECK_EQ(grb_ctf_get_stats(tracer, &st), 0);
	CHECK_EQ(grb_channel_get_stats(grb_ctf_channel(tracer), &bs), 0);
	CHECK_U64(st.events, ok);
	CHECK_U64(st.events_discarded, full + wrap + big);
	CHECK_U64(bs.lost_full, full);
	CHECK_U64(bs.lost_wrap, wrap);
	CHECK_U64(bs.lost_big, big);
	CHECK_U64(bs.lost_nesting, 0);
	CHECK(big > 0);
	if (mode == GRB_MODE_DISCARD) {
		CHECK(full > 0);
		CHECK_U64(st.events_overwritten, 0);
		CHECK_U64(st.packets_discarded, 0);
	} else {
		CHECK(st.packets_discarded > 0);
		CHECK(st.events_overwritten > 0);
	}
	f = fopen(out, "w");
	CHECK(f != NULL);
	json_stats(f, tracer, name);
	CHECK_EQ(fclose(f), 0);
	printf("test_ctf: %llu events, %llu refused (%llu full, %llu wrap, "
	       "%llu too big), %llu overwritten, %llu packets written, %llu "
	       "lost\n", (unsigned long long)ok,
	       (unsigned long long)(full + wrap + big),
	       (unsigned long long)full, (unsigned long long)wrap,
	       (unsigned long long)big,
	       (unsigned long long)st.events_overwritten,
	       (unsigned long long)st.packets,
	       (unsigned long long)st.packets_discarded);
}

static int run_losses(const char *dir, const char *out, enum grb_mode mode)
{
	struct grb_ctf_attr attr = {
		.name = "ctf", .subbuf_size = 4096, .num_subbuf = 4,
		.alloc = GRB_ALLOC_PER_CPU, .mode = mode,
		.clock = GRB_CTF_CLOCK_MONOTONIC, .trace_dir = dir,
		.hostname = "grb-test",
	};
	struct grb_ctf_event_desc dl = { "grb_test:load", -1, f_load,
					 ARRAY_SIZE(f_load) };
	struct grb_ctf_event_desc dh = { "grb_test:huge", -1, f_huge, 1 };
	struct sched_param sp = { 0 };
	struct lwriter w[LW], sum;
	int idle;

	loss_mode = mode;
	memset(huge_text, 'h', sizeof(huge_text) - 1);
	CHECK_EQ(pthread_barrier_init(&loss_start, NULL, LW + 1), 0);
	/* The writers first, at the normal policy... */
	for (int i = 0; i < LW; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = i;
		CHECK_EQ(pthread_create(&w[i].th, NULL, loss_writer, &w[i]), 0);
	}
	/* ...then the tracer's writer thread, which inherits SCHED_IDLE
	 * from this one: it runs only when a CPU has nothing else to do,
	 * and the writers keep both busy. */
	idle = sched_setscheduler(0, SCHED_IDLE, &sp) == 0;
	printf("test_ctf %s: the consumer runs %s\n",
	       mode == GRB_MODE_DISCARD ? "discard" : "overwrite",
	       idle ? "at SCHED_IDLE" : "at the normal policy (SCHED_IDLE "
	       "refused)");
	CHECK_EQ(grb_ctf_create(&attr, &tracer), 0);
	CHECK_EQ(grb_ctf_event_register(tracer, &dl, &load_ev), 0);
	CHECK_EQ(grb_ctf_event_register(tracer, &dh, &huge_ev), 0);
	loss_deadline = now_ns() + LOSS_DEADLINE_NS;
	pthread_barrier_wait(&loss_start);
	memset(&sum, 0, sizeof(sum));
	for (int i = 0; i < LW; i++) {
		CHECK_EQ(pthread_join(w[i].th, NULL), 0);
		sum.ok += w[i].ok;
		sum.full += w[i].full;
		sum.wrap += w[i].wrap;
		sum.big += w[i].big;
	}
	pthread_barrier_destroy(&loss_start);
	if (atomic_load(&loss_timeout)) {
		fprintf(stderr, "test_ctf: no losses to compare after %u s: "
			"the consumer was never too slow\n",
			(unsigned int)(LOSS_DEADLINE_NS / 1000000000u));
		return 1;
	}
	CHECK_EQ(grb_ctf_stop(tracer), 0);

	loss_results(mode, &sum, out, attr.name);
	grb_ctf_destroy(tracer);
	return 0;
}

/* ---- contract: grb_ctf_create ---------------------------------------- */

static char base[] = "/tmp/grb-ctf-XXXXXX";

static struct grb_ctf_attr attr_ok(void)
{
	struct grb_ctf_attr a;

	memset(&a, 0, sizeof(a));
	a.name = "c";
	a.subbuf_size = 4096;
	a.num_subbuf = 4;
	a.alloc = GRB_ALLOC_PER_CHANNEL;
	a.mode = GRB_MODE_DISCARD;
	a.clock = GRB_CTF_CLOCK_MONOTONIC;
	return a;
}

/* grb_ctf_create()'s result; a tracer it made is destroyed at once. */
static int try_create(const struct grb_ctf_attr *a)
{
	struct grb_ctf *t = NULL;
	int ret = grb_ctf_create(a, &t);

	if (ret == 0)
		grb_ctf_destroy(t);
	return ret;
}

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
	snprintf(dir, sizeof(dir), "%s/new", base);
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
	put_file(base, "plain", "x");
	snprintf(dir, sizeof(dir), "%s/plain", base);
	a.trace_dir = dir;
	CHECK_EQ(try_create(&a), -ENOTDIR);
	m = slurp(base, "plain", &len);
	CHECK(strcmp(m, "x") == 0);
	free(m);
	CHECK_EQ(unlink(dir), 0);
	/* A failure after the directory was made: at most that directory
	 * is left, empty. */
	snprintf(dir, sizeof(dir), "%s/geometry", base);
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
	snprintf(dir, sizeof(dir), "%s/busy", base);
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
	snprintf(dir, sizeof(dir), "%s/live", base);
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
	snprintf(dir, sizeof(dir), "%s/shm", base);
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

/* ---- contract: grb_ctf_event_register -------------------------------- */

static unsigned int reg_ok;     /* classes registered on the tracer */

/* Register a one-field class under a name never used before. */
static int reg_field(struct grb_ctf *t, struct grb_ctf_field fd)
{
	static unsigned int k;
	const struct grb_ctf_event *ev;
	struct grb_ctf_event_desc d = { NULL, -1, &fd, 1 };
	char name[32];
	int ret;

	snprintf(name, sizeof(name), "grb_test:field_%u", k++);
	d.name = name;
	ret = grb_ctf_event_register(t, &d, &ev);
	if (ret == 0) {
		CHECK_EQ(grb_ctf_event_id(ev), id_of_rank(reg_ok));
		reg_ok++;
	}
	return ret;
}

static int reg_desc(struct grb_ctf *t, const char *name, int loglevel,
		    const struct grb_ctf_field *f, unsigned int n)
{
	struct grb_ctf_event_desc d = { name, loglevel, f, n };
	const struct grb_ctf_event *ev;
	int ret = grb_ctf_event_register(t, &d, &ev);

	if (ret == 0) {
		CHECK_EQ(grb_ctf_event_id(ev), id_of_rank(reg_ok));
		reg_ok++;
	}
	return ret;
}

/* "iii...": @n bytes. */
static const char *ident_of(size_t n)
{
	static char ident[GRB_CTF_NAME_MAX + 2];

	CHECK(n < sizeof(ident));
	memset(ident, 'i', n);
	ident[n] = 0;
	return ident;
}

/* Field names: C identifiers of 1 to 127 bytes. */
static void field_names(struct grb_ctf *t)
{
	static const char *const bad_idents[] = {
		"", "1a", "a-b", "a b", "é", "a.b", "a:b",
	};
	struct grb_ctf_field f = INT("x", 4, 0, 10);

	f.name = NULL;
	CHECK_EQ(reg_field(t, f), -EINVAL);
	for (size_t i = 0; i < ARRAY_SIZE(bad_idents); i++) {
		f.name = bad_idents[i];
		CHECK_EQ(reg_field(t, f), -EINVAL);
	}
	f.name = ident_of(GRB_CTF_NAME_MAX + 1);
	CHECK_EQ(reg_field(t, f), -EINVAL);
	f.name = ident_of(GRB_CTF_NAME_MAX);
	CHECK_EQ(reg_field(t, f), 0);
	f.name = "_";
	CHECK_EQ(reg_field(t, f), 0);
	f.name = "string";
	CHECK_EQ(reg_field(t, f), 0);
}

/* Kinds, and the sizes, bases and lengths of each. */
static void field_kinds(struct grb_ctf *t)
{
	static const unsigned int bad_int_sizes[] = { 0, 3, 5, 16 };
	static const unsigned int bad_bases[] = { 1, 3, 7, 9, 11, 17 };
	static const unsigned int bases[] = { 0, 2, 8, 10, 16 };
	struct grb_ctf_field f = INT("x", 4, 0, 10);

	f.kind = (enum grb_ctf_kind)4;
	CHECK_EQ(reg_field(t, f), -EINVAL);
	f.kind = (enum grb_ctf_kind)-1;
	CHECK_EQ(reg_field(t, f), -EINVAL);
	f.kind = GRB_CTF_INT;
	for (size_t i = 0; i < ARRAY_SIZE(bad_int_sizes); i++) {
		f.size = bad_int_sizes[i];
		CHECK_EQ(reg_field(t, f), -EINVAL);
	}
	for (unsigned int sz = 1; sz <= 8; sz *= 2) {
		f.size = sz;
		CHECK_EQ(reg_field(t, f), 0);
	}
	f.size = 4;
	for (size_t i = 0; i < ARRAY_SIZE(bad_bases); i++) {
		f.base = bad_bases[i];
		CHECK_EQ(reg_field(t, f), -EINVAL);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bases); i++) {
		f.base = bases[i];
		CHECK_EQ(reg_field(t, f), 0);
	}
	f.base = 10;
	f.size = 1;
	f.length = GRB_CTF_ARRAY_MAX + 1;
	CHECK_EQ(reg_field(t, f), -EINVAL);
	f.length = GRB_CTF_ARRAY_MAX;
	CHECK_EQ(reg_field(t, f), 0);
	f = (struct grb_ctf_field)FLT("x", 4);
	CHECK_EQ(reg_field(t, f), 0);
	f.size = 8;
	CHECK_EQ(reg_field(t, f), 0);
	f.length = 3;
	CHECK_EQ(reg_field(t, f), 0);
	f.length = GRB_CTF_ARRAY_MAX + 1;
	CHECK_EQ(reg_field(t, f), -EINVAL);
	f.length = 0;
	for (unsigned int sz = 0; sz <= 16; sz += 2) {
		f.size = sz;
		CHECK_EQ(reg_field(t, f), sz == 4 || sz == 8 ? 0 : -EINVAL);
	}
	f = (struct grb_ctf_field)STR("x");
	CHECK_EQ(reg_field(t, f), 0);
	f.size = 1;
	CHECK_EQ(reg_field(t, f), -EINVAL);
	f.size = 0;
	f.length = 1;
	CHECK_EQ(reg_field(t, f), -EINVAL);

}

/* Enumerations: 1 to 256 distinct printable labels whose values fit
 * the integer. */
static void field_enums(struct grb_ctf *t)
{
	static const struct { unsigned int size; int is_signed; int64_t v; }
	bad_values[] = {
		{ 1, 0, 256 }, { 1, 0, -1 }, { 1, 1, 128 }, { 1, 1, -129 },
		{ 2, 0, 65536 }, { 2, 1, -32769 }, { 2, 1, 32768 },
		{ 4, 0, INT64_C(4294967296) }, { 4, 0, -1 },
		{ 4, 1, INT64_C(2147483648) }, { 4, 1, INT64_C(-2147483649) },
	}, good_values[] = {
		{ 1, 0, 255 }, { 1, 1, -128 }, { 1, 1, 127 }, { 2, 0, 65535 },
		{ 2, 1, -32768 }, { 4, 0, INT64_C(4294967295) },
		{ 4, 1, INT64_C(-2147483648) }, { 8, 0, INT64_MAX },
		{ 8, 1, INT64_MIN },
	};
	static const char *const bad_labels[] = {
		"", "a\"b", "a\\b", "a\nb", "\x7f", "bad\xff", "c1\xc2\x85",
	};
	static struct grb_ctf_enum_label many[257];
	static char many_names[257][8];
	struct grb_ctf_enum_label lab[2] = { { "A", 0 }, { "B", 1 } };
	struct grb_ctf_field f = ENUM("x", 1, 0, lab);

	CHECK_EQ(reg_field(t, f), 0);
	f.length = 2;
	CHECK_EQ(reg_field(t, f), 0);
	f.length = 0;
	f.size = 3;
	CHECK_EQ(reg_field(t, f), -EINVAL);
	f.size = 1;
	f.labels = NULL;
	CHECK_EQ(reg_field(t, f), -EINVAL);
	f.labels = lab;
	f.nr_labels = 0;
	CHECK_EQ(reg_field(t, f), -EINVAL);
	f.nr_labels = 2;
	lab[1].label = NULL;
	CHECK_EQ(reg_field(t, f), -EINVAL);
	for (size_t i = 0; i < ARRAY_SIZE(bad_labels); i++) {
		lab[1].label = bad_labels[i];
		CHECK_EQ(reg_field(t, f), -EINVAL);
	}
	lab[1].label = ident_of(GRB_CTF_NAME_MAX);
	CHECK_EQ(reg_field(t, f), 0);
	lab[1].label = ident_of(GRB_CTF_NAME_MAX + 1);
	CHECK_EQ(reg_field(t, f), -EINVAL);
	lab[1].label = "A";                 /* twice */
	CHECK_EQ(reg_field(t, f), -EINVAL);
	lab[1].label = "état ü";
	CHECK_EQ(reg_field(t, f), 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad_values); i++) {
		f.size = bad_values[i].size;
		f.is_signed = bad_values[i].is_signed;
		lab[1].value = bad_values[i].v;
		CHECK_EQ(reg_field(t, f), -EINVAL);
	}
	for (size_t i = 0; i < ARRAY_SIZE(good_values); i++) {
		f.size = good_values[i].size;
		f.is_signed = good_values[i].is_signed;
		lab[1].value = good_values[i].v;
		CHECK_EQ(reg_field(t, f), 0);
	}
	for (unsigned int i = 0; i < 257; i++) {
		snprintf(many_names[i], sizeof(many_names[i]), "l%u", i);
		many[i].label = many_names[i];
		many[i].value = i;
	}
	f = (struct grb_ctf_field)ENUM("x", 2, 0, many);
	CHECK_EQ(reg_field(t, f), -EINVAL);      /* 257 labels */
	f.nr_labels = GRB_CTF_ENUM_MAX;
	CHECK_EQ(reg_field(t, f), 0);
}

/* What a class may be: every refusal, and the limits accepted. */
static void register_classes(void)
{
	static const char *const bad_events[] = {
		"", "a\"b", "a\\b", "a\nb", "tab\there", "\x7f", "grb:padding",
		/* Not UTF-8: a stray continuation byte, bytes that lead
		 * nothing, a truncated sequence, overlong forms, a surrogate,
		 * above U+10FFFF; and U+0085, a C1 control. */
		"bad\x80", "bad\xff\xfe", "cut\xe2\x82", "\xc0\xaf",
		"\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"c1\xc2\x85",
	};
	struct grb_ctf_attr a = attr_ok();
	struct grb_ctf_field fs[GRB_CTF_MAX_FIELDS + 1];
	struct grb_ctf_event_desc d = { "e", -1, NULL, 0 };
	const struct grb_ctf_event *ev;
	char names[GRB_CTF_MAX_FIELDS + 1][8];
	struct grb_ctf *t;

	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	reg_ok = 0;
	CHECK_EQ(grb_ctf_event_register(NULL, &d, &ev), -EINVAL);
	CHECK_EQ(grb_ctf_event_register(t, NULL, &ev), -EINVAL);
	CHECK_EQ(grb_ctf_event_register(t, &d, NULL), -EINVAL);
	CHECK_EQ(grb_ctf_event_id(NULL), UINT32_MAX);

	/* Event names: printable, no '"' or '\\', 1 to 127 bytes, not the
	 * padding's, not twice. */
	CHECK_EQ(reg_desc(t, NULL, -1, NULL, 0), -EINVAL);
	for (size_t i = 0; i < ARRAY_SIZE(bad_events); i++)
		CHECK_EQ(reg_desc(t, bad_events[i], -1, NULL, 0), -EINVAL);
	CHECK_EQ(reg_desc(t, ident_of(GRB_CTF_NAME_MAX + 1), -1, NULL, 0),
		 -EINVAL);
	CHECK_EQ(reg_desc(t, ident_of(GRB_CTF_NAME_MAX), -1, NULL, 0), 0);
	CHECK_EQ(reg_desc(t, "grb:padding:not", -1, NULL, 0), 0);
	CHECK_EQ(reg_desc(t, "ünïcödé: spaces, (too)", -1, NULL, 0), 0);
	/* Two, three and four bytes, at the edges of what is allowed. */
	CHECK_EQ(reg_desc(t, "\xc2\xa0\xdf\xbf\xe0\xa0\x80\xef\xbf\xbd"
			  "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", -1, NULL, 0),
		 0);
	CHECK_EQ(reg_desc(t, "twice", -1, NULL, 0), 0);
	CHECK_EQ(reg_desc(t, "twice", -1, NULL, 0), -EINVAL);
	/* Log levels: -1, or 0 to 14. */
	CHECK_EQ(reg_desc(t, "ll", -2, NULL, 0), -EINVAL);
	CHECK_EQ(reg_desc(t, "ll", 15, NULL, 0), -EINVAL);
	CHECK_EQ(reg_desc(t, "ll0", 0, NULL, 0), 0);
	CHECK_EQ(reg_desc(t, "ll14", 14, NULL, 0), 0);

	/* Up to GRB_CTF_MAX_FIELDS fields, named apart. */
	for (unsigned int i = 0; i <= GRB_CTF_MAX_FIELDS; i++) {
		snprintf(names[i], sizeof(names[i]), "f%u", i);
		fs[i] = (struct grb_ctf_field)INT(names[i], 1, 0, 10);
	}
	CHECK_EQ(reg_desc(t, "wide", -1, fs, GRB_CTF_MAX_FIELDS + 1), -EINVAL);
	CHECK_EQ(reg_desc(t, "wide", -1, fs, GRB_CTF_MAX_FIELDS), 0);
	CHECK_EQ(reg_desc(t, "nofields", -1, NULL, 1), -EINVAL);
	fs[1].name = fs[0].name;
	CHECK_EQ(reg_desc(t, "dup", -1, fs, 2), -EINVAL);
	fs[1].name = names[1];
	field_names(t);
	field_kinds(t);
	field_enums(t);
	/* Refused classes took no id: the next is the count of the others. */
	CHECK_EQ(reg_desc(t, "last", -1, NULL, 0), 0);
	grb_ctf_destroy(t);

}

/* -ENOSPC, and a metadata write that fails. */
static void register_limits(void)
{
	struct grb_ctf_attr a = attr_ok();
	struct grb_ctf_event_desc d = { "e", -1, NULL, 0 };
	const struct grb_ctf_event *ev, *first;
	char ename[32], dir[256], away[256];
	struct grb_ctf *t;
	size_t len;
	char *m;

	/* After GRB_CTF_MAX_EVENTS classes (no trace directory,
	 * so no metadata is rewritten 4096 times). */
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	for (unsigned int i = 0; i < GRB_CTF_MAX_EVENTS; i++) {
		snprintf(ename, sizeof(ename), "e%u", i);
		d.name = ename;
		CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
		CHECK_EQ(grb_ctf_event_id(ev), id_of_rank(i));
	}
	d.name = "one more";
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), -ENOSPC);
	grb_ctf_destroy(t);

	/* A metadata write that fails registers nothing. */
	snprintf(dir, sizeof(dir), "%s/meta", base);
	snprintf(away, sizeof(away), "%s/meta-away", base);
	a.trace_dir = dir;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	d.name = "grb_test:first";
	CHECK_EQ(grb_ctf_event_register(t, &d, &first), 0);
	CHECK_EQ(rename(dir, away), 0);
	d.name = "grb_test:retry";
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), -ENOENT);
	CHECK_EQ(rename(away, dir), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	CHECK_EQ(grb_ctf_event_id(ev), 1);
	/* Written before the call returned, whole (no temporary left). */
	m = slurp(dir, "metadata", &len);
	CHECK(strstr(m, "name = \"grb_test:retry\";") != NULL);
	CHECK(strstr(strstr(m, "name = \"grb_test:retry\";") + 1,
		     "name = \"grb_test:retry\";") == NULL);
	CHECK(!exists(dir, "metadata.tmp"));
	free(m);
	CHECK_EQ(grb_ctf_stop(t), 0);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

/* ---- contract: emit, stop, statistics -------------------------------- */

struct fixed {
	uint32_t a;
	uint16_t b;
} __attribute__((packed));

/* Read the finalized channel of @t back, as its caller may (no trace
 * directory); returns the events, checks the first one's payload. */
static uint64_t read_back(struct grb_ctf *t, const struct fixed *first)
{
	struct grb_buf *buf = grb_channel_buf(grb_ctf_channel(t), 0);
	uint64_t n = 0;
	int ret;

	CHECK_EQ(grb_reader_open(buf), 0);
	while ((ret = grb_reader_get_next(buf)) == 0) {
		struct grb_record rec;
		size_t off = grb_reader_first_record(buf);

		while ((ret = grb_reader_record(buf, off, &rec)) == 0) {
			if (!(rec.rflags & GRB_RFLAG_PADDING) && n++ == 0) {
				struct fixed got;

				CHECK_EQ(rec.payload_len, sizeof(got));
				CHECK_EQ(grb_reader_read(buf, rec.payload_off,
							 &got, sizeof(got)), 0);
				CHECK(memcmp(&got, first, sizeof(got)) == 0);
			}
			off = rec.next;
		}
		CHECK_EQ(ret, -ENODATA);
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK_EQ(ret, -ENODATA);
	CHECK_EQ(grb_reader_release(buf), 0);
	return n;
}

/* Two tracers and their classes; @ok counts the events committed. */
struct emit_env {
	struct grb_ctf *t, *t2;
	const struct grb_ctf_event *fixed, *str, *arr, *none, *other;
	struct fixed fx;
	uint64_t ok;
};

static void emit_refusals(struct emit_env *e)
{
	union grb_ctf_value v[3];
	unsigned char arr[4] = { 1, 2, 3, 4 };

	/* The first event: read back at the end. */
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->fixed, &e->fx, sizeof(e->fx)), 0);
	e->ok++;
	v[0].u = 7;
	v[1].s = "x";
	v[2].s = NULL;                        /* written as "" */
	CHECK_EQ(grb_ctf_emit(NULL, e->str, v), -EINVAL);
	CHECK_EQ(grb_ctf_emit(e->t, NULL, v), -EINVAL);
	CHECK_EQ(grb_ctf_emit(e->t, e->other, v), -EINVAL);  /* t2's class */
	CHECK_EQ(grb_ctf_emit(e->t, e->str, NULL), -EINVAL);
	CHECK_EQ(grb_ctf_emit(e->t, e->str, v), 0);
	e->ok++;
	CHECK_EQ(grb_ctf_emit(e->t, e->none, NULL), 0);
	e->ok++;
	v[0].array = NULL;
	CHECK_EQ(grb_ctf_emit(e->t, e->arr, v), -EINVAL);
	v[0].array = arr;
	CHECK_EQ(grb_ctf_emit(e->t, e->arr, v), 0);
	e->ok++;
}

/* Raw payloads: the length of a fixed class, a NUL ending each string
 * and nothing after the last field. */
static void raw_refusals(struct emit_env *e)
{
	const void *fx = &e->fx;
	size_t n = sizeof(e->fx);
	unsigned char raw[16] = { 0 };

	CHECK_EQ(grb_ctf_emit_raw(NULL, e->fixed, fx, n), -EINVAL);
	CHECK_EQ(grb_ctf_emit_raw(e->t, NULL, fx, n), -EINVAL);
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->other, fx, n), -EINVAL);
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->fixed, NULL, n), -EINVAL);
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->fixed, fx, n - 1), -EINVAL);
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->fixed, raw, n + 1), -EINVAL);
	/* Not NULL: with NULL the client copies 0 bytes from NULL, which
	 * UBSan reports (a bug, reported). */
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->none, raw, 0), 0);
	e->ok++;
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->none, raw, 1), -EINVAL);
	memcpy(raw, "\x01\x00\x00\x00" "ab\0" "cd\0" "e", 11);
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->str, raw, 10), 0);
	e->ok++;
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->str, raw, 11), -EINVAL); /* after */
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->str, raw, 9), -EINVAL);  /* no NUL */
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->str, raw, 7), -EINVAL);  /* no t */
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->str, raw, 3), -EINVAL);  /* no n */
}

/* What grb_reserve() refuses, counted as discarded events but for
 * disabled records; returns the events refused. */
static uint64_t emit_losses(struct emit_env *e, size_t subbuf_size)
{
	union grb_ctf_value v[3];
	struct grb_ctf_stats st;
	uint64_t full = 0;
	char *huge;
	int ret;

	huge = malloc(subbuf_size + 1);
	CHECK(huge != NULL);
	memset(huge, 'h', subbuf_size);
	huge[subbuf_size] = 0;
	v[0].u = 1;
	v[1].s = huge;
	v[2].s = "";
	CHECK_EQ(grb_ctf_emit(e->t, e->str, v), -ENOSPC);
	free(huge);
	CHECK_EQ(grb_channel_record_disable(grb_ctf_channel(e->t)), 0);
	CHECK_EQ(grb_ctf_emit_raw(e->t, e->fixed, &e->fx, sizeof(e->fx)),
		 -EAGAIN);
	CHECK_EQ(grb_channel_record_enable(grb_ctf_channel(e->t)), 0);
	CHECK_EQ(grb_ctf_get_stats(e->t, &st), 0);
	CHECK_U64(st.events_discarded, 1);
	/* Nobody reads this channel: it fills, then refuses. */
	for (int i = 0; i < 100000 && full < 10; i++) {
		ret = grb_ctf_emit_raw(e->t, e->fixed, &e->fx, sizeof(e->fx));
		if (ret == 0)
			e->ok++;
		else if (ret == -ENOBUFS)
			full++;
		else
			CHECK_EQ(ret, 0);
	}
	CHECK_U64(full, 10);
	return 1 + full;
}

static void contract_emit(void)
{
	static const struct grb_ctf_field f_fixed[] = {
		INT("a", 4, 0, 16), INT("b", 2, 0, 10),
	};
	static const struct grb_ctf_field f_str[] = {
		INT("n", 4, 0, 10), STR("s"), STR("t"),
	};
	static const struct grb_ctf_field f_arr[] = { INTS("a", 1, 0, 10, 4) };
	struct grb_ctf_event_desc d_fixed = { "fixed", -1, f_fixed, 2 };
	struct grb_ctf_event_desc d_str = { "str", -1, f_str, 3 };
	struct grb_ctf_event_desc d_arr = { "arr", -1, f_arr, 1 };
	struct grb_ctf_event_desc d_none = { "none", -1, NULL, 0 };
	struct emit_env e = { .fx = { 0x11223344, 0x5566 } };
	struct grb_ctf_attr a = attr_ok();
	struct grb_ctf_stats st;
	uint64_t refused;

	CHECK_EQ(grb_ctf_create(&a, &e.t), 0);
	CHECK_EQ(grb_ctf_create(&a, &e.t2), 0);
	CHECK(grb_ctf_channel(e.t) != NULL);
	CHECK_EQ(grb_ctf_event_register(e.t, &d_fixed, &e.fixed), 0);
	CHECK_EQ(grb_ctf_event_register(e.t, &d_str, &e.str), 0);
	CHECK_EQ(grb_ctf_event_register(e.t, &d_arr, &e.arr), 0);
	CHECK_EQ(grb_ctf_event_register(e.t, &d_none, &e.none), 0);
	CHECK_EQ(grb_ctf_event_register(e.t2, &d_fixed, &e.other), 0);
	emit_refusals(&e);
	raw_refusals(&e);
	refused = emit_losses(&e, a.subbuf_size);

	CHECK_EQ(grb_ctf_get_stats(NULL, &st), -EINVAL);
	CHECK_EQ(grb_ctf_get_stats(e.t, NULL), -EINVAL);
	CHECK_EQ(grb_ctf_stop(NULL), -EINVAL);
	CHECK_EQ(grb_ctf_stop(e.t), 0);
	CHECK_EQ(grb_ctf_stop(e.t), -EALREADY);
	CHECK_EQ(grb_ctf_emit_raw(e.t, e.fixed, &e.fx, sizeof(e.fx)),
		 -ESHUTDOWN);
	CHECK_EQ(grb_ctf_get_stats(e.t, &st), 0);
	CHECK_U64(st.events, e.ok);
	CHECK_U64(st.events_discarded, refused);
	CHECK_U64(st.events_overwritten, 0);
	/* Without a writer thread, nothing is written to files. */
	CHECK_U64(st.packets, 0);
	CHECK_U64(st.bytes, 0);
	CHECK_U64(read_back(e.t, &e.fx), e.ok);
	grb_ctf_destroy(e.t);
	grb_ctf_destroy(e.t2);
}

/* The writer thread's counts against the stream files it wrote. */
static void contract_output(void)
{
	static const struct grb_ctf_field f[] = { INT("n", 8, 0, 10) };
	struct grb_ctf_event_desc d = { "n", -1, f, 1 };
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	struct grb_ctf_stats st;
	struct grb_ctf *t;
	struct dirent *e;
	uint64_t bytes = 0;
	char dir[256];
	DIR *dd;

	snprintf(dir, sizeof(dir), "%s/out", base);
	a.trace_dir = dir;
	a.alloc = GRB_ALLOC_PER_CPU;
	a.flush_period_ns = 1000000;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	for (uint64_t i = 0; i < 1000; i++) {
		if (i % 100 == 0)
			pin(cpus[i / 100 % (uint64_t)ncpus]);
		CHECK_EQ(grb_ctf_emit_raw(t, ev, &i, sizeof(i)), 0);
	}
	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_EQ(grb_ctf_stop(t), -EALREADY);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events, 1000);
	CHECK_U64(st.events_discarded, 0);
	CHECK_U64(st.packets_discarded, 0);
	/* At least the empty first packet of each stream, and the data. */
	CHECK(st.packets >= grb_channel_nr_bufs(grb_ctf_channel(t)) + 1);
	grb_ctf_destroy(t);
	dd = opendir(dir);
	CHECK(dd != NULL);
	while ((e = readdir(dd))) {
		struct stat sb;
		char p[512];

		if (strncmp(e->d_name, "c_", 2))
			continue;
		path_of(p, sizeof(p), dir, e->d_name);
		CHECK_EQ(stat(p, &sb), 0);
		bytes += (uint64_t)sb.st_size;
	}
	closedir(dd);
	CHECK_U64(st.bytes, bytes);
	rm_dir(dir);
}

/* ---- contract: attach configurations, the metadata loader ------------ */

static void contract_config(void)
{
	static const struct grb_ctf_field f[] = { INT("n", 4, 0, 10), STR("s") };
	struct grb_ctf_event_desc d = { "n", -1, f, 2 };
	const struct grb_config *seen[8], *cfg;
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	union grb_ctf_value v[2];
	struct grb_channel *att;
	struct grb_buf *buf;
	struct grb_ctf *t;
	char dir[256];
	uint64_t n = 0;
	int ret;

	CHECK(grb_ctf_config((enum grb_alloc)2, GRB_MODE_DISCARD,
			     GRB_CTF_CLOCK_MONOTONIC) == NULL);
	CHECK(grb_ctf_config(GRB_ALLOC_PER_CPU, (enum grb_mode)2,
			     GRB_CTF_CLOCK_MONOTONIC) == NULL);
	CHECK(grb_ctf_config(GRB_ALLOC_PER_CPU, GRB_MODE_DISCARD,
			     (enum grb_ctf_clock)2) == NULL);
	/* Eight configurations, all of the shared variant. */
	for (int i = 0; i < 8; i++) {
		seen[i] = grb_ctf_config((enum grb_alloc)(i & 1),
					 (enum grb_mode)(i >> 1 & 1),
					 (enum grb_ctf_clock)(i >> 2));
		CHECK(seen[i] != NULL);
		CHECK(seen[i]->flags & GRB_CONFIG_SHARED);
		CHECK_EQ(seen[i]->alloc, i & 1);
		CHECK_EQ(seen[i]->mode, i >> 1 & 1);
		for (int j = 0; j < i; j++)
			CHECK(seen[i] != seen[j]);
	}

	/* A reader attached with it decodes the events of a trace this
	 * process created. */
	snprintf(dir, sizeof(dir), "%s/attach", base);
	CHECK_EQ(mkdir(dir, 0755), 0);
	a.shm_dir = dir;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	v[0].u = 1;
	v[1].s = "one";
	CHECK_EQ(grb_ctf_emit(t, ev, v), 0);
	v[1].s = "two";
	CHECK_EQ(grb_ctf_emit(t, ev, v), 0);
	CHECK_EQ(grb_channel_flush(grb_ctf_channel(t), GRB_FLUSH_ACTIVE), 0);
	cfg = grb_ctf_config(a.alloc, a.mode, a.clock);
	CHECK_EQ(grb_channel_attach_dir(cfg, GRB_CTF_CLIENT, dir, "c",
					GRB_ATTACH_READER, &att), 0);
	buf = grb_channel_buf(att, 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	while ((ret = grb_reader_get_next(buf)) == 0) {
		struct grb_record rec;
		size_t off = grb_reader_first_record(buf);
		char s[8];

		while (grb_reader_record(buf, off, &rec) == 0) {
			CHECK_EQ(rec.payload_len, 4 + 4);
			CHECK_EQ(grb_reader_read(buf, rec.payload_off + 4, s, 4),
				 0);
			CHECK(strcmp(s, n++ ? "two" : "one") == 0);
			off = rec.next;
		}
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK_EQ(ret, -EAGAIN);
	CHECK_U64(n, 2);
	CHECK_EQ(grb_reader_release(buf), 0);
	grb_channel_destroy(att);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

/* The trace UUID as the metadata's trace block writes it. */
static void uuid_of(const char *m, uint8_t u[16])
{
	const char *p = strstr(m, "\tuuid = \"");
	unsigned int k = 0;

	CHECK(p != NULL);
	for (p += 9; *p != '"' && k < 32; p++) {
		if (*p == '-')
			continue;
		if (k % 2 == 0)
			u[k / 2] = 0;
		u[k / 2] = (uint8_t)(u[k / 2] << 4 |
				     (*p <= '9' ? *p - '0' : *p - 'a' + 10));
		k++;
	}
	CHECK_EQ(k, 32);
}

/* A copy of metadata @m as another trace's: the first hex digit of its
 * UUID comment made @digit (other than the original). */
static char *other_trace(const char *m, size_t len, char digit)
{
	char *c = malloc(len + 1);
	char *p;

	CHECK(c != NULL);
	memcpy(c, m, len + 1);
	p = strstr(c, "/* grb-trace uuid=");
	CHECK(p != NULL);
	CHECK(p[18] != digit);
	p[18] = digit;
	return c;
}

static void contract_metadata(void)
{
	static const struct grb_ctf_field f[] = {
		INT("n", 4, 0, 10), STR("s"), FLTS("d", 8, 2),
	};
	struct grb_ctf_event_desc d = { "a", -1, f, 3 };
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	uint8_t u[16], want[16];
	char dir[256], digits[4];
	struct grb_ctf *t;
	char *m, *c, *p;
	size_t len;
	int k = 0;

	snprintf(dir, sizeof(dir), "%s/load", base);
	a.trace_dir = dir;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	d.name = "b";
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	m = slurp(dir, "metadata", &len);

	/* The tracer's own metadata, again and again. */
	memset(u, 0, sizeof(u));
	CHECK_EQ(grb_ctf_metadata_load(m, len, u), 0);
	uuid_of(m, want);
	CHECK(memcmp(u, want, sizeof(u)) == 0);
	CHECK_EQ(grb_ctf_metadata_load(m, len, u), 0);
	CHECK_EQ(grb_ctf_metadata_load(m, len, NULL), 0);

	/* Not metadata this client wrote, or damaged. */
	CHECK_EQ(grb_ctf_metadata_load(NULL, 0, u), -EBADMSG);
	CHECK_EQ(grb_ctf_metadata_load("garbage", 7, u), -EBADMSG);
	CHECK_EQ(grb_ctf_metadata_load("", 0, u), -EBADMSG);
	p = strstr(m, "/* grb-trace uuid=");
	CHECK(p != NULL);
	CHECK_EQ(grb_ctf_metadata_load(m, (size_t)(p - m) + 30, u), -EBADMSG);
	/* Three other traces' UUIDs. */
	for (const char *h = "abcdef"; *h && k < 3; h++)
		if (*h != p[18])
			digits[k++] = *h;
	c = other_trace(m, len, 'g');                    /* not hex */
	CHECK_EQ(grb_ctf_metadata_load(c, len, u), -EBADMSG);
	free(c);
	c = other_trace(m, len, digits[0]);
	p = strstr(c, "/* grb-layout 0 ");
	CHECK(p != NULL);
	p[16] = 'q';                                     /* a damaged field */
	CHECK_EQ(grb_ctf_metadata_load(c, len, u), -EBADMSG);
	free(c);
	c = other_trace(m, len, digits[1]);
	p = strstr(c, "/* grb-layout 0 ");
	CHECK(p != NULL);
	p[5] = 'X';                                      /* id 1 comes first */
	CHECK_EQ(grb_ctf_metadata_load(c, len, u), -EBADMSG);
	free(c);
	/* Another trace, whole: learnt, its UUID returned. */
	c = other_trace(m, len, digits[2]);
	CHECK_EQ(grb_ctf_metadata_load(c, len, u), 0);
	want[0] = (uint8_t)((want[0] & 0x0f) | (digits[2] - 'a' + 10) << 4);
	CHECK(memcmp(u, want, sizeof(u)) == 0);
	free(c);
	free(m);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

/* ---- contract: grb_ctf_packet_fixup ---------------------------------- */

/* A packet's header and context, as the metadata declares them. */
struct packet_head {
	uint32_t magic;
	uint8_t uuid[16];
	uint32_t stream_id;
	uint64_t stream_instance_id;
	uint64_t timestamp_begin;
	uint64_t timestamp_end;
	uint64_t content_size;
	uint64_t packet_size;
	uint64_t packet_seq_num;
	uint64_t events_discarded;
	uint32_t cpu_id;
} __attribute__((packed));

/* Packet @seq with @discarded at @p (any alignment), 8 bytes of data. */
static void put_packet(unsigned char *p, uint64_t seq, uint64_t discarded)
{
	struct packet_head h;

	memset(&h, 0, sizeof(h));
	h.magic = 0xC1FC1FC1;
	memset(h.uuid, 0x5a, sizeof(h.uuid));
	h.timestamp_begin = 1000 * seq;
	h.timestamp_end = 1000 * seq + 500;
	h.content_size = h.packet_size = (sizeof(h) + 8) * 8;
	h.packet_seq_num = seq;
	h.events_discarded = discarded;
	h.cpu_id = 1;
	memcpy(p, &h, sizeof(h));
	memset(p + sizeof(h), 0xee, 8);
}

static void contract_fixup(void)
{
	enum { SIZE = sizeof(struct packet_head) + 8 };
	unsigned char buf[SIZE + 1], copy[SIZE + 1];
	unsigned char *p = buf + 1;          /* not aligned */
	struct grb_ctf_stream_state s;
	struct packet_head h;
	uint64_t gap = 99;

	memset(&s, 0, sizeof(s));
	memset(buf, 0, sizeof(buf));
	put_packet(p, 5, 3);
	CHECK_EQ(grb_ctf_packet_fixup(NULL, SIZE, &s, &gap), -EINVAL);
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, NULL, &gap), -EINVAL);
	/* Not a packet: nothing changes. */
	memcpy(copy, buf, sizeof(buf));
	CHECK_EQ(grb_ctf_packet_fixup(p, sizeof(struct packet_head) - 1, &s,
				      &gap), -EBADMSG);
	p[0] ^= 1;
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, &gap), -EBADMSG);
	p[0] ^= 1;
	CHECK(memcmp(copy, buf, sizeof(buf)) == 0);
	CHECK(!s.started && !s.next_seq && !s.last_discarded);
	CHECK_U64(gap, 99);

	/* The first packet: no gap before it, whatever its number. */
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, &gap), 0);
	CHECK_U64(gap, 0);
	CHECK(memcmp(copy, buf, sizeof(buf)) == 0);
	CHECK(s.started);
	CHECK_U64(s.next_seq, 6);
	CHECK_U64(s.last_discarded, 3);
	/* Three packets missing, and an older loss count: raised to the
	 * previous packet's, nothing else changed. */
	put_packet(p, 9, 2);
	memcpy(copy, buf, sizeof(buf));
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, &gap), 0);
	CHECK_U64(gap, 3);
	memcpy(&h, p, sizeof(h));
	CHECK_U64(h.events_discarded, 3);
	memcpy(copy + 1 + offsetof(struct packet_head, events_discarded),
	       &h.events_discarded, sizeof(h.events_discarded));
	CHECK(memcmp(copy, buf, sizeof(buf)) == 0);
	CHECK_U64(s.next_seq, 10);
	CHECK_U64(s.last_discarded, 3);
	/* The next one, more losses; @gap may be NULL. */
	put_packet(p, 10, 7);
	memcpy(copy, buf, sizeof(buf));
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, NULL), 0);
	CHECK(memcmp(copy, buf, sizeof(buf)) == 0);
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, &gap), 0);
	CHECK_U64(s.next_seq, 11);
	CHECK_U64(s.last_discarded, 7);
	/* The same packet again is no gap. */
	CHECK_U64(gap, 0);
}

/* ---- contract: grb_ctf_stream_trailer -------------------------------- */

static void contract_trailer_args(void)
{
	enum { SIZE = sizeof(struct packet_head) + 8 };
	unsigned char last[SIZE + 1], out[GRB_CTF_PACKET_HEADER_SIZE + 2];
	unsigned char *p = last + 1, *o = out + 1;     /* not aligned */
	struct grb_ctf_stream_state s, s0;
	struct packet_head h, l;

	CHECK_EQ(GRB_CTF_PACKET_HEADER_SIZE, sizeof(struct packet_head));
	memset(&s, 0, sizeof(s));
	memset(out, 0x77, sizeof(out));
	put_packet(p, 4, 10);
	CHECK_EQ(grb_ctf_stream_trailer(NULL, &s, 1, o), -EINVAL);
	CHECK_EQ(grb_ctf_stream_trailer(p, NULL, 1, o), -EINVAL);
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 1, NULL), -EINVAL);
	/* No packet appended yet. */
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 11, o), -EBADMSG);
	CHECK_EQ(grb_ctf_packet_fixup(p, SIZE, &s, NULL), 0);
	/* Not a CTF header. */
	p[0] ^= 1;
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 11, o), -EBADMSG);
	p[0] ^= 1;
	/* Every refusal reported already: none needed, nothing touched. */
	s0 = s;
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 10, o), 0);
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 3, o), 0);
	CHECK(memcmp(&s, &s0, sizeof(s)) == 0);
	for (size_t i = 0; i < sizeof(out); i++)
		CHECK_EQ(out[i], 0x77);
	/* Later refusals: the next packet of the stream, header only. */
	CHECK_EQ(grb_ctf_stream_trailer(p, &s, 25, o), 1);
	CHECK_EQ(out[0], 0x77);
	CHECK_EQ(out[sizeof(out) - 1], 0x77);
	memcpy(&h, o, sizeof(h));
	memcpy(&l, p, sizeof(l));
	CHECK_EQ(h.magic, l.magic);
	CHECK(memcmp(h.uuid, l.uuid, sizeof(h.uuid)) == 0);
	CHECK_EQ(h.stream_id, l.stream_id);
	CHECK_U64(h.stream_instance_id, l.stream_instance_id);
	CHECK_EQ(h.cpu_id, l.cpu_id);
	CHECK_U64(h.timestamp_begin, l.timestamp_end);
	CHECK_U64(h.timestamp_end, l.timestamp_end);
	CHECK_U64(h.content_size, GRB_CTF_PACKET_HEADER_SIZE * 8);
	CHECK_U64(h.packet_size, GRB_CTF_PACKET_HEADER_SIZE * 8);
	CHECK_U64(h.packet_seq_num, 5);
	CHECK_U64(h.events_discarded, 25);
	/* The state moved on as if the trailer went through the fixup. */
	CHECK(s.started);
	CHECK_U64(s.next_seq, 6);
	CHECK_U64(s.last_discarded, 25);
	CHECK_EQ(grb_ctf_stream_trailer(o, &s, 25, o), 0);
}

/*
 * The case the trailer is for: a shared tracer's discard-mode buffer
 * fills with no reader, a flush closes its last packet, and what is
 * emitted after is refused.  A reader that attaches after the stop finds
 * packets whose last events_discarded misses those refusals; the trailer
 * carries the total grb_ctf_get_stats() reports.
 */
static void contract_trailer_shm(void)
{
	static const struct grb_ctf_field f[] = { INT("n", 4, 0, 10) };
	struct grb_ctf_event_desc d = { "n", -1, f, 1 };
	struct grb_ctf_attr a = attr_ok();
	unsigned char last[GRB_CTF_PACKET_HEADER_SIZE];
	unsigned char out[GRB_CTF_PACKET_HEADER_SIZE];
	const struct grb_ctf_event *ev;
	struct grb_ctf_stream_state s;
	struct grb_reader_subbuf sb;
	struct grb_ctf_stats st;
	struct grb_buf_stats bs;
	union grb_ctf_value v[1];
	struct grb_channel *att;
	struct packet_head h;
	struct grb_buf *buf;
	struct grb_ctf *t;
	uint64_t before, packets = 0;
	char dir[256];
	int ret;

	snprintf(dir, sizeof(dir), "%s/trailer", base);
	CHECK_EQ(mkdir(dir, 0755), 0);
	a.shm_dir = dir;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	v[0].u = 7;
	for (int i = 0; i < 4096; i++)
		grb_ctf_emit(t, ev, v);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	before = st.events_discarded;
	CHECK(before > 0);
	CHECK_EQ(grb_channel_flush(grb_ctf_channel(t), GRB_FLUSH_ACTIVE), 0);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(grb_ctf_emit(t, ev, v), -ENOBUFS);
	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events_discarded, before + 100);

	CHECK_EQ(grb_channel_attach_dir(grb_ctf_config(a.alloc, a.mode,
						       a.clock),
					GRB_CTF_CLIENT, dir, "c",
					GRB_ATTACH_READER, &att), 0);
	buf = grb_channel_buf(att, 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	memset(&s, 0, sizeof(s));
	while ((ret = grb_reader_get_next(buf)) == 0) {
		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		CHECK_EQ(grb_ctf_packet_fixup((void *)(uintptr_t)sb.data,
					      sb.data_size, &s, NULL), 0);
		memcpy(last, sb.data, sizeof(last));
		packets++;
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK_EQ(ret, -ENODATA);
	CHECK_U64(packets, a.num_subbuf);
	/* The last packet misses the 100 refused after the flush. */
	memcpy(&h, last, sizeof(h));
	CHECK_U64(h.events_discarded, before);
	CHECK_EQ(grb_buf_get_stats(buf, &bs), 0);
	CHECK_EQ(grb_ctf_stream_trailer(last, &s, bs.lost_full + bs.lost_wrap +
					bs.lost_big + bs.lost_nesting, out), 1);
	memcpy(&h, out, sizeof(h));
	CHECK_U64(h.events_discarded, st.events_discarded);
	CHECK_U64(h.packet_seq_num, a.num_subbuf);
	CHECK_EQ(grb_reader_release(buf), 0);
	grb_channel_destroy(att);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

/*
 * A stream write that fails (the file size limit, EFBIG): grb_ctf_stop()
 * returns that errno, and each stream file ends at the last packet
 * written whole.  In a child, whose limit it sets.
 */
static void contract_write_error(void)
{
	static const struct grb_ctf_field f[] = { INT("n", 8, 0, 10) };
	struct grb_ctf_event_desc d = { "n", -1, f, 1 };
	struct grb_ctf_attr a = attr_ok();
	struct packet_head h;
	struct stat sb;
	char dir[256], p[512];
	size_t len, off;
	char *m;
	int status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/efbig", base);
	a.trace_dir = dir;
	a.flush_period_ns = 1000000;
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 20000, 20000 };
		const struct grb_ctf_event *ev;
		struct grb_ctf *t;
		int ret;

		signal(SIGXFSZ, SIG_IGN);
		CHECK_EQ(setrlimit(RLIMIT_FSIZE, &rl), 0);
		CHECK_EQ(grb_ctf_create(&a, &t), 0);
		CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
		for (uint64_t i = 0; i < 20000; i++) {
			grb_ctf_emit_raw(t, ev, &i, sizeof(i));
			if (i % 1000 == 0)
				usleep(2000);
		}
		ret = grb_ctf_stop(t);
		if (ret != -EFBIG)
			fprintf(stderr, "grb_ctf_stop: %d, not -EFBIG\n", ret);
		grb_ctf_destroy(t);
		_exit(ret == -EFBIG ? 0 : 1);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	path_of(p, sizeof(p), dir, "c_0");
	CHECK_EQ(stat(p, &sb), 0);
	CHECK(sb.st_size > 0 && sb.st_size <= 20000);
	m = slurp(dir, "c_0", &len);
	CHECK_U64(len, (uint64_t)sb.st_size);
	for (off = 0; off + sizeof(h) <= len; off += h.packet_size / 8) {
		memcpy(&h, m + off, sizeof(h));
		CHECK_EQ(h.magic, 0xC1FC1FC1);
		CHECK(h.packet_size >= sizeof(h) * 8);
	}
	CHECK_U64(off, len);
	free(m);
	rm_dir(dir);
}

/* ---- contract: what the writer thread puts in the stream files ------- */

/*
 * The events in the stream files NAME_* of @dir, each with an 8-byte
 * payload: their count; each payload below @max is marked in @seen, and
 * padding events are counted in *@pads.  A packet the writer thread is
 * still appending is left out.
 */
static uint64_t stream_events(const char *dir, const char *name,
			      unsigned char *seen, uint64_t max,
			      uint64_t *pads)
{
	size_t nlen = strlen(name);
	DIR *dd = opendir(dir);
	struct dirent *e;
	uint64_t n = 0;

	CHECK(dd != NULL);
	while ((e = readdir(dd))) {
		struct packet_head h;
		size_t len, off;
		char *m;

		if (strncmp(e->d_name, name, nlen) || e->d_name[nlen] != '_')
			continue;
		m = slurp(dir, e->d_name, &len);
		for (off = 0; off + sizeof(h) <= len; off += h.packet_size / 8) {
			size_t p, end;

			memcpy(&h, m + off, sizeof(h));
			CHECK_EQ(h.magic, 0xC1FC1FC1);
			CHECK(h.packet_size >= sizeof(h) * 8);
			CHECK_U64(h.content_size, h.packet_size);
			if (h.packet_size / 8 > len - off)
				break;
			end = off + h.packet_size / 8;
			p = off + sizeof(h);
			while (p < end) {
				unsigned int id = (unsigned char)m[p] & 31u;
				uint16_t pad;
				uint64_t v;

				if (id == GRB_CTF_PADDING_ID) {
					CHECK(p + 3 <= end);
					memcpy(&pad, m + p + 1, sizeof(pad));
					p += 3u + pad;
					(*pads)++;
					continue;
				}
				/* Extended header (id 31) or compact. */
				p += id == 31u ? 13u : 4u;
				CHECK(p + sizeof(v) <= end);
				memcpy(&v, m + p, sizeof(v));
				p += sizeof(v);
				if (seen && v < max)
					seen[v]++;
				n++;
			}
			CHECK_U64(p, end);
		}
		free(m);
	}
	closedir(dd);
	return n;
}

/*
 * The events of @n emits, up to 5 s after them, with the tracer left
 * running: the writer thread has to flush their quiet sub-buffer.  0
 * when they did not come out.
 */
static int quiet_events_out(const char *dir, uint64_t n)
{
	unsigned char seen[64];
	uint64_t pads = 0;

	CHECK(n <= sizeof(seen));
	for (int i = 0; i < 500; i++) {
		memset(seen, 0, sizeof(seen));
		if (stream_events(dir, "c", seen, sizeof(seen), &pads) == n) {
			for (uint64_t v = 0; v < n; v++)
				CHECK_EQ(seen[v], 1);
			CHECK_U64(pads, 0);
			return 1;
		}
		sleep_ns(10000000);
	}
	return 0;
}

/*
 * flush_period_ns: a few events on one CPU, then nothing; the tracer is
 * not stopped, so only the writer thread's periodic flush brings them
 * out, with the default period (0) and with a small one.  Per-CPU
 * buffers, so that the other CPUs' stay quiet too.
 */
static void contract_flush_period(uint64_t period_ns)
{
	static const struct grb_ctf_field f[] = { INT("n", 8, 0, 10) };
	struct grb_ctf_event_desc d = { "n", -1, f, 1 };
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	struct grb_ctf_stats st;
	struct grb_ctf *t;
	uint64_t pads = 0;
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/flush", base);
	a.trace_dir = dir;
	a.alloc = GRB_ALLOC_PER_CPU;
	a.flush_period_ns = period_ns;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	pin(cpus[ncpus - 1]);
	for (uint64_t v = 0; v < 5; v++)
		CHECK_EQ(grb_ctf_emit_raw(t, ev, &v, sizeof(v)), 0);
	pin(cpus[0]);
	if (!quiet_events_out(dir, 5)) {
		fprintf(stderr, "flush_period_ns %llu: events not in the "
			"stream files after 5 s\n",
			(unsigned long long)period_ns);
		CHECK(0);
	}
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events, 5);
	CHECK(st.packets > grb_channel_nr_bufs(grb_ctf_channel(t)));
	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_U64(stream_events(dir, "c", NULL, 0, &pads), 5);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

/* ---- contract: a writer process that dies holding reservations ------- */

/* What the dying writer and the test tell each other (shared mapping). */
struct dead_sync {
	_Atomic int stage;      /* child: DEAD_FIRST, then all reserved */
	_Atomic int go;         /* test: the child's sub-buffer is closed */
};

/* The dying writer's records: held in its first sub-buffer, then in the
 * next one; and those it commits before. */
#define DEAD_FIRST     2u
#define DEAD_SECOND    1u
#define DEAD_COMMITTED 5u
#define DEAD_CHILD_TAG 1000000u   /* the child's payloads count from here */

/* Reserve one event of @ev and write part of it, never committed. */
static int hold_one(const struct grb_config *cfg, struct grb_ctf *t,
		    const struct grb_ctf_event *ev, struct grb_ctx *ctx)
{
	int ret;

	/* The header's size: the CTF client's callback reads the event
	 * through a pointer to it in client_priv (clients/ctf/ctf.c). */
	const struct grb_ctf_event *evp = ev;

	grb_ctx_init(ctx, sizeof(uint64_t), 1);
	ctx->client_priv = (void *)(uintptr_t)&evp;
	ret = grb_reserve(cfg, grb_ctf_channel(t), ctx);
	if (ret == 0)
		grb_write_fill(cfg, ctx, 0xee, 3);
	return ret;
}

/* The writer process: it commits a few events, then dies holding
 * DEAD_FIRST + DEAD_SECOND reservations (SIGKILL, from the test). */
static void dead_writer(const struct grb_config *cfg, struct grb_ctf *t,
			const struct grb_ctf_event *ev, struct dead_sync *sy)
{
	struct grb_ctx ctx[DEAD_FIRST + DEAD_SECOND];
	unsigned int i;

	for (uint64_t v = DEAD_CHILD_TAG; v < DEAD_CHILD_TAG + DEAD_COMMITTED;
	     v++)
		if (grb_ctf_emit_raw(t, ev, &v, sizeof(v)))
			_exit(2);
	for (i = 0; i < DEAD_FIRST; i++)
		if (hold_one(cfg, t, ev, &ctx[i]))
			_exit(3);
	atomic_store(&sy->stage, 1);
	while (!atomic_load(&sy->go))
		usleep(1000);
	for (; i < DEAD_FIRST + DEAD_SECOND; i++)
		if (hold_one(cfg, t, ev, &ctx[i]))
			_exit(4);
	atomic_store(&sy->stage, 2);
	for (;;)
		pause();
}

/* Wait (up to 10 s) for the child to reach @stage; it must not exit. */
static void wait_stage(struct dead_sync *sy, int stage, pid_t pid)
{
	int status;

	for (int i = 0; i < 10000 && atomic_load(&sy->stage) < stage; i++) {
		CHECK_EQ(waitpid(pid, &status, WNOHANG), 0);
		usleep(1000);
	}
	CHECK_EQ(atomic_load(&sy->stage), stage);
}

/* Emit the test's own events, payloads *@next on; return how many. */
static uint64_t emit_own(struct grb_ctf *t, const struct grb_ctf_event *ev,
			 uint64_t *next, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++, (*next)++)
		CHECK_EQ(grb_ctf_emit_raw(t, ev, next, sizeof(*next)), 0);
	return n;
}

/* The payloads read_dead() has seen: the test's, the dying writer's. */
static unsigned char seen_own[4096], seen_child[DEAD_COMMITTED];

/*
 * Read every delivered packet of @buf; count the events (each payload
 * once, none of the dead writer's) and the padding events.
 */
static uint64_t read_dead(struct grb_buf *buf, uint64_t own, uint64_t *pads,
			  int *done)
{
	uint64_t n = 0;
	int ret;

	while ((ret = grb_reader_get_next(buf)) == 0) {
		struct grb_record rec;
		size_t off = grb_reader_first_record(buf);
		uint64_t v;

		while ((ret = grb_reader_record(buf, off, &rec)) == 0) {
			off = rec.next;
			if (rec.rflags & GRB_RFLAG_PADDING) {
				(*pads)++;
				continue;
			}
			CHECK_EQ(rec.payload_len, sizeof(v));
			CHECK_EQ(grb_reader_read(buf, rec.payload_off, &v,
						 sizeof(v)), 0);
			if (v >= DEAD_CHILD_TAG) {
				CHECK(v < DEAD_CHILD_TAG + DEAD_COMMITTED);
				CHECK_EQ(seen_child[v - DEAD_CHILD_TAG]++, 0);
			} else {
				CHECK(v < own && v < sizeof(seen_own));
				CHECK_EQ(seen_own[v]++, 0);
			}
			n++;
		}
		CHECK_EQ(ret, -ENODATA);
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK(ret == -EAGAIN || ret == -ENODATA);
	*done = ret == -ENODATA;
	return n;
}

/*
 * events_dead: a writer process of a shared tracer is killed while it
 * holds reservations in two sub-buffers; after recovery by a consumer
 * (an attached reader), grb_ctf_get_stats() reports exactly those
 * records as dead, every committed event (the dead writer's too) as
 * written and read, and none as discarded.
 */
static void contract_dead(enum grb_mode mode, int stop_first)
{
	static const struct grb_ctf_field f[] = { INT("n", 8, 0, 10) };
	struct grb_ctf_event_desc d = { "n", -1, f, 1 };
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	const struct grb_config *cfg;
	struct grb_recover_info info;
	struct grb_ctf_stats st;
	struct grb_buf_stats bs;
	struct grb_channel *att;
	struct dead_sync *sy;
	struct grb_buf *buf;
	struct grb_ctf *t;
	uint64_t own = 0, committed, read = 0, pads = 0, end;
	char dir[256];
	int status, done = 0;
	pid_t pid;

	memset(seen_own, 0, sizeof(seen_own));
	memset(seen_child, 0, sizeof(seen_child));
	snprintf(dir, sizeof(dir), "%s/dead", base);
	CHECK_EQ(mkdir(dir, 0755), 0);
	a.shm_dir = dir;
	a.mode = mode;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	/* A shared tracer writes with the configuration others attach
	 * with. */
	cfg = grb_ctf_config(a.alloc, a.mode, a.clock);
	CHECK_EQ(grb_channel_attach_dir(cfg, GRB_CTF_CLIENT, dir, "c",
					GRB_ATTACH_READER, &att), 0);
	buf = grb_channel_buf(att, 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	sy = (struct dead_sync *)mmap(NULL, sizeof(*sy),
				      PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sy != MAP_FAILED);
	committed = emit_own(t, ev, &own, 10);

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		dead_writer(cfg, t, ev, sy);
	wait_stage(sy, 1, pid);
	committed += DEAD_COMMITTED;
	/*
	 * Fill the sub-buffer of its first reservations until no event
	 * fits (12 bytes with a compact header): its last reservation then
	 * closes it and opens the next one.  (Should an event of ours take
	 * an extended header, 21 bytes, it may open the next one itself:
	 * the last reservation still goes there.)
	 */
	CHECK_EQ(grb_channel_get_stats(grb_ctf_channel(t), &bs), 0);
	end = (bs.produced | (a.subbuf_size - 1)) + 1;
	while (bs.produced <= end && end - bs.produced >= 12) {
		committed += emit_own(t, ev, &own, 1);
		CHECK_EQ(grb_channel_get_stats(grb_ctf_channel(t), &bs), 0);
	}
	atomic_store(&sy->go, 1);
	wait_stage(sy, 2, pid);
	committed += emit_own(t, ev, &own, 3);
	CHECK_EQ(grb_channel_flush(grb_ctf_channel(t), GRB_FLUSH_ACTIVE), 0);

	/* Alive, it is waited for: nothing recovered, nothing dead. */
	CHECK_EQ(grb_channel_recover(att, 0, &info), 0);
	CHECK_U64(info.records, 0);
	CHECK(info.waiting >= 1);
	read += read_dead(buf, own, &pads, &done);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events_dead, 0);
	CHECK(read < committed);

	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* The producer may end before its consumer recovers. */
	if (stop_first)
		CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_EQ(grb_channel_recover(att, 0, &info), 2);
	CHECK_U64(info.subbufs, 2);
	CHECK_U64(info.records, DEAD_FIRST + DEAD_SECOND);
	CHECK_U64(info.ambiguous, 0);
	CHECK_U64(info.waiting, 0);
	read += read_dead(buf, own, &pads, &done);
	/* Each dead run is padding (one event or more), never data. */
	CHECK(pads >= 2);
	CHECK_U64(read, committed);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events_dead, DEAD_FIRST + DEAD_SECOND);
	CHECK_U64(st.events, committed);
	CHECK_U64(st.events_discarded, 0);
	CHECK_U64(st.events_overwritten, 0);

	/* The same once stopped (exact), the stream drained to its end. */
	if (!stop_first)
		CHECK_EQ(grb_ctf_stop(t), 0);
	while (!done)
		read += read_dead(buf, own, &pads, &done);
	CHECK_U64(read, committed);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events_dead, DEAD_FIRST + DEAD_SECOND);
	CHECK_U64(st.events, committed);
	CHECK_U64(st.events_discarded, 0);
	CHECK_U64(st.events_overwritten, 0);
	CHECK_U64(st.packets, 0);
	CHECK_EQ(grb_buf_get_stats(buf, &bs), 0);
	CHECK_U64(bs.lost_dead, st.events_dead);
	CHECK_U64(bs.read, committed);
	CHECK_EQ(grb_reader_release(buf), 0);
	grb_channel_destroy(att);
	grb_ctf_destroy(t);
	munmap(sy, sizeof(*sy));
	rm_dir(dir);
}

/*
 * The same with both attr.shm_dir and attr.trace_dir: the writer thread
 * is the buffer's reader, so it is the one to complete what the dead
 * writer left, or the stream would stop at that packet for good.  Its
 * events (those committed after the dead ones too) come out in the
 * stream files while the tracer runs, and events_dead counts the dead.
 * With a period longer than the test (@running 0), grb_ctf_stop() must
 * complete them at once.
 */
static void contract_dead_thread(int running)
{
	static const struct grb_ctf_field f[] = { INT("n", 8, 0, 10) };
	struct grb_ctf_event_desc d = { "n", -1, f, 1 };
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	struct grb_ctf_stats st;
	struct dead_sync *sy;
	struct grb_ctf *t;
	uint64_t own = 0, committed, pads = 0, n = 0;
	char dir[256], out[256];
	int status;
	pid_t pid;

	memset(seen_own, 0, sizeof(seen_own));
	snprintf(dir, sizeof(dir), "%s/deadt", base);
	snprintf(out, sizeof(out), "%s/deadt_out", base);
	CHECK_EQ(mkdir(dir, 0755), 0);
	a.shm_dir = dir;
	a.trace_dir = out;
	a.flush_period_ns = running ? 2000000 : 3600000000000u;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	sy = (struct dead_sync *)mmap(NULL, sizeof(*sy),
				      PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sy != MAP_FAILED);
	committed = emit_own(t, ev, &own, 10);
	atomic_store(&sy->go, 1);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		dead_writer(grb_ctf_config(a.alloc, a.mode, a.clock), t, ev,
			    sy);
	wait_stage(sy, 2, pid);
	committed += DEAD_COMMITTED;
	committed += emit_own(t, ev, &own, 3);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	/* Up to 5 s, the tracer running. */
	for (int i = 0; running && i < 500 && n < committed; i++) {
		sleep_ns(10000000);
		pads = 0;
		n = stream_events(out, "c", NULL, 0, &pads);
	}
	if (running) {
		CHECK_U64(n, committed);
		CHECK(pads >= 1);
		CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
		CHECK_U64(st.events_dead, DEAD_FIRST + DEAD_SECOND);
		CHECK_U64(st.events, committed);
		CHECK_U64(st.events_discarded, 0);
	}

	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events_dead, DEAD_FIRST + DEAD_SECOND);
	CHECK_U64(st.events, committed);
	CHECK_U64(st.events_discarded, 0);
	CHECK_U64(st.packets_discarded, 0);
	pads = 0;
	CHECK_U64(stream_events(out, "c", seen_own, sizeof(seen_own), &pads),
		  committed);
	CHECK(pads >= 1);
	for (uint64_t v = 0; v < own; v++)
		CHECK_EQ(seen_own[v], 1);
	grb_ctf_destroy(t);
	munmap(sy, sizeof(*sy));
	rm_dir(dir);
	rm_dir(out);
}

/* ---- main -------------------------------------------------------------- */

static int contract(void)
{
	CHECK(mkdtemp(base) != NULL);
	create_refusals();
	create_files();
	create_exists();
	create_exists_shm();
	register_classes();
	register_limits();
	contract_emit();
	contract_output();
	contract_config();
	contract_metadata();
	contract_fixup();
	contract_trailer_args();
	contract_trailer_shm();
	contract_write_error();
	contract_flush_period(0);
	contract_flush_period(2000000);
	contract_dead(GRB_MODE_DISCARD, 0);
	contract_dead(GRB_MODE_DISCARD, 1);
	contract_dead(GRB_MODE_OVERWRITE, 0);
	contract_dead(GRB_MODE_OVERWRITE, 1);
	contract_dead_thread(1);
	contract_dead_thread(0);
	/* Nothing left behind. */
	CHECK_EQ(rmdir(base), 0);
	printf("test_ctf contract: passed\n");
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: test_ctf [contract]\n"
		"       test_ctf events DIR OUT [--per-channel] [--all-ids]\n"
		"       test_ctf discard|overwrite DIR OUT\n");
	return 2;
}

int main(int argc, char **argv)
{
	int per_channel = 0, all_ids = 0;

	cpus_init();
	if (argc == 1 || (argc == 2 && !strcmp(argv[1], "contract")))
		return contract();
	if (argc < 4)
		return usage();
	if (!strcmp(argv[1], "discard") && argc == 4)
		return run_losses(argv[2], argv[3], GRB_MODE_DISCARD);
	if (!strcmp(argv[1], "overwrite") && argc == 4)
		return run_losses(argv[2], argv[3], GRB_MODE_OVERWRITE);
	if (strcmp(argv[1], "events"))
		return usage();
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--per-channel"))
			per_channel = 1;
		else if (!strcmp(argv[i], "--all-ids"))
			all_ids = 1;
		else
			return usage();
	}
	return run_events(argv[2], argv[3], per_channel, all_ids);
}
