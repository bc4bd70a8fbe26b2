/* SPDX-License-Identifier: MIT */
/*
 * tests/common/ctf_rig.c - the helpers of the CTF client's tests
 * (ctf_rig.h): files and CPUs, a plain tracer, the stream files read
 * back, and test_ctf's event classes and the values it emits.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "ctf_rig.h"
#include "grb/ctf.h"

/* ---- the scratch directory, files, clocks, CPUs ----------------------- */

char scratch[] = "/tmp/grb-ctf-XXXXXX";

void ctf_rig_start(void)
{
	ctf_cpus_init();
	CHECK(mkdtemp(scratch) != NULL);
}

int ctf_rig_done(const char *prog)
{
	/* Nothing left behind. */
	CHECK_EQ(rmdir(scratch), 0);
	printf("%s: passed\n", prog);
	return 0;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u),
			       (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int ctf_cpus[CPU_SETSIZE];
int ctf_ncpus;

void ctf_cpus_init(void)
{
	cpu_set_t set;

	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			ctf_cpus[ctf_ncpus++] = c;
	CHECK(ctf_ncpus > 0);
}

void ctf_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

void path_of(char *out, size_t n, const char *dir, const char *name)
{
	CHECK((size_t)snprintf(out, n, "%s/%s", dir, name) < n);
}

int dir_entries(const char *dir)
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

int tmp_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t len;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		len = strlen(e->d_name);
		if (len >= 4 && strcmp(e->d_name + len - 4, ".tmp") == 0)
			n++;
	}
	closedir(d);
	return n;
}

int exists(const char *dir, const char *name)
{
	char p[512];

	path_of(p, sizeof(p), dir, name);
	return access(p, F_OK) == 0;
}

void put_file(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	path_of(p, sizeof(p), dir, name);
	f = fopen(p, "w");
	CHECK(f != NULL);
	fputs(text, f);
	CHECK_EQ(fclose(f), 0);
}

char *slurp(const char *dir, const char *name, size_t *len)
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

void rm_dir(const char *dir)
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

/* ---- tracers ------------------------------------------------------- */

struct grb_ctf_attr attr_ok(void)
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

int try_create(const struct grb_ctf_attr *a)
{
	struct grb_ctf *t = NULL;
	int ret = grb_ctf_create(a, &t);

	if (ret == 0)
		grb_ctf_destroy(t);
	return ret;
}

uint32_t id_of_rank(uint32_t rank)
{
	return rank < 30 ? rank : rank + 1;
}

const struct grb_ctf_event *reg_u64(struct grb_ctf *t)
{
	static const struct grb_ctf_field f[] = { INT("n", 8, 0, 10) };
	struct grb_ctf_event_desc d = { "n", -1, f, 1 };
	const struct grb_ctf_event *ev;

	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	return ev;
}

uint64_t stream_events(const char *dir, const char *name,
		       unsigned char *seen, uint64_t max, uint64_t *pads)
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

/* ---- event classes covering every field kind ------------------------- */

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

struct tclass classes[MAXC];
unsigned int nr_classes;
unsigned int nr_setup;
unsigned int sig_class, late_class, big_class;

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

void classes_init(int all_ids)
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

int register_class(struct grb_ctf *t, unsigned int i)
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

void gen_event(unsigned int cls, uint32_t thr, uint32_t seq, struct gen *g)
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

int emit_gen(struct grb_ctf *t, unsigned int cls, const struct gen *g)
{
	unsigned char buf[MAXF * ARR_BYTES];

	if (g->raw)
		return grb_ctf_emit_raw(t, classes[cls].ev, buf, pack(cls, g, buf));
	return grb_ctf_emit(t, classes[cls].ev, g->v);
}
