/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_ctf_meta.c - libFuzzer target: what a tracer declares
 * (event class descriptions), the TSDL metadata the CTF client writes
 * from it, the reader of that metadata (grb_ctf_metadata_load()) and the
 * event decoder (record_decode of grb_ctf_config()).
 *
 * The low two bits of the first input byte pick what the rest is:
 *
 *  - 2 or 3, descriptions: up to four event classes, with names of any
 *    bytes (quotes, backslashes, control bytes, names too long, TSDL
 *    keywords among them), any kind, size, signedness, base, array
 *    length, labels and values, and any number of fields.  They are
 *    registered on one tracer whose buffer and metadata are files in a
 *    temporary directory (the metadata is rewritten at each class).  A
 *    registration must succeed or fail with -EINVAL (-ENOSPC is checked
 *    once at start-up), and agree with grb/ctf.h: a class the header
 *    clearly allows is accepted, one it clearly forbids is refused.
 *    After a success the metadata file must load, lex as TSDL with every
 *    string, comment and brace closed and nothing but ASCII outside
 *    strings (no byte of a user's string leaves its quotes), carry the
 *    names and labels verbatim in their quotes and the class's layout
 *    line, and hold the reader's keys (comments at a line start) once
 *    per class and once for the trace: a user's string must not be able
 *    to pass for one.  Two events of the class, emitted with values
 *    from the input, must then decode to exactly the bytes written.
 *  - 0, metadata: the bytes go to grb_ctf_metadata_load(), which must
 *    return 0, -EBADMSG or -ENOMEM.
 *  - 1, a packet: the bytes follow a valid packet header of a trace loaded
 *    at start-up, in a buffer of exactly that size, and record_decode
 *    walks them: it must read nothing outside data_size (ASan checks)
 *    and describe records inside it.
 *
 * A failed check aborts; a crash, a sanitizer report, a leak or a hang
 * is a bug.  Built with clang's -fsanitize=fuzzer,address,undefined
 * (option GRB_FUZZ).  The long run:
 *	build/clang/tests/fuzz_ctf_meta -max_total_time=600 -timeout=10 -rss_limit_mb=4096
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grb/ctf.h"
#include "grb/grb.h"

#define SUBBUF 65536u
#define PKT_HEADER 84u          /* packet header + context */
#define CTF_MAGIC 0xC1FC1FC1u
/* Classes per tracer before a new one: the whole metadata is rewritten
 * at each registration, so a long list would slow every run down. */
#define RECYCLE 64u

#define check(cond, what) do {                                          \
	if (!(cond)) {                                                  \
		fprintf(stderr, "fuzz_ctf_meta: %s (line %d)\n", what,  \
			__LINE__);                                      \
		abort();                                                \
	}                                                               \
} while (0)

/* The unread input. */
struct in {
	const uint8_t *p;
	size_t n;
};

/* Everything one run allocates, freed at its end. */
struct pool {
	void **p;
	size_t n, cap;
};

/* The tracer registrations go to, and what the test knows of it. */
struct tracer {
	struct grb_ctf *t;
	struct grb_buf *buf;
	char *names[RECYCLE];
	unsigned int nr;
	uint8_t uuid[16];
};

/* The bytes of a C identifier, those that may start one first. */
static const char ident[] = "abcdefghijklmnopqrstuvwxyz"
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789";
#define IDENT_FIRST 53

static char dir[256];
static char meta_path[300];
static struct tracer tr;
static const struct grb_config *cfg;
static char long127[128], long128[129];
static char label_names[GRB_CTF_ENUM_MAX + 2][8];
static char field_names[GRB_CTF_MAX_FIELDS + 8][8];
static unsigned char pattern[8 * GRB_CTF_ARRAY_MAX];
/* The trace the packet mode decodes with, and four the metadata mode
 * loads into (see load_raw()). */
static const uint8_t uuid_dec[16] = { 0xd0, 0xde, 0xc0, 0xde, 1 };
static const uint8_t uuid_raw[4][16] = {
	{ 0xa0, 1 }, { 0xa0, 2 }, { 0xa0, 3 }, { 0xa0, 4 },
};

static unsigned int byte(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint64_t word(struct in *in)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < 8; i++)
		v |= (uint64_t)byte(in) << (8 * i);
	return v;
}

static void *pool_get(struct pool *pl, size_t size)
{
	void *p;

	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? 2 * pl->cap : 64;
		void **np = (void **)realloc(pl->p, cap * sizeof(*np));

		check(np, "out of memory");
		pl->p = np;
		pl->cap = cap;
	}
	/* Exactly the size asked for, so ASan sees a read past its end. */
	p = malloc(size ? size : 1);
	check(p, "out of memory");
	pl->p[pl->n++] = p;
	return p;
}

static void pool_free(struct pool *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		free(pl->p[i]);
	free(pl->p);
}

/*
 * A string from the input: an identifier (what a valid field name looks
 * like), raw bytes (NUL ends them early), or one of the names that are
 * refused or awkward to quote.  @fallback once the input is used up, so
 * that a short input still makes whole classes.
 */
static const char *str(struct in *in, struct pool *pl, const char *fallback)
{
	static const char *const special[16] = {
		NULL, "", "grb:padding", long127, long128, "event", "struct",
		"integer", "a\"b", "c:\\d", "x\ny", "\x7f", "\xc3\xa9t\xc3\xa9",
		"*/ \"", "enum", "_",
	};
	unsigned int sel, len;
	char *s;

	if (!in->n)
		return fallback;
	sel = byte(in);
	if (sel >= 0xf0)
		return special[sel - 0xf0];
	if (sel < 0x80) {
		len = (sel & 0x40) ? (sel & 0x3f) + 1 : (sel & 7) + 1;
		s = (char *)pool_get(pl, len + 1);
		for (unsigned int i = 0; i < len; i++)
			s[i] = ident[byte(in) % (i ? sizeof(ident) - 1 :
						 IDENT_FIRST)];
	} else {
		len = (sel - 0x80) * 2;
		s = (char *)pool_get(pl, len + 1);
		for (unsigned int i = 0; i < len; i++)
			s[i] = (char)byte(in);
	}
	s[len] = 0;
	return s;
}

static int64_t label_value(struct in *in)
{
	static const int64_t odd[8] = { INT64_MIN, INT64_MAX, 255, 256,
					65536, -129, INT64_C(4294967296), 0 };
	unsigned int b = byte(in);

	if (b < 0x80)
		return b;                   /* fits every size */
	if (b < 0xf0)
		return (int8_t)b;           /* fits signed sizes only */
	return b == 0xff ? (int64_t)word(in) : odd[b & 7];
}

static void make_labels(struct in *in, struct pool *pl, struct grb_ctf_field *f)
{
	static const unsigned int odd[8] = { 0, 0, 256, 257, 255, 128, 2, 1 };
	unsigned int b = byte(in);
	struct grb_ctf_enum_label *l;

	f->nr_labels = (b & 0x80) ? odd[b & 7] : (b & 7) + 1;
	if (f->nr_labels == 0 && !(b & 1)) {
		f->labels = NULL;
		return;
	}
	l = (struct grb_ctf_enum_label *)pool_get(pl, f->nr_labels * sizeof(*l));
	for (unsigned int i = 0; i < f->nr_labels; i++) {
		l[i].label = str(in, pl, label_names[i]);
		l[i].value = label_value(in);
	}
	f->labels = l;
}

static void make_field(struct in *in, struct pool *pl, struct grb_ctf_field *f,
		       unsigned int idx)
{
	static const unsigned int kinds[8] = { GRB_CTF_INT, GRB_CTF_FLOAT,
		GRB_CTF_STRING, GRB_CTF_ENUM, GRB_CTF_INT, GRB_CTF_ENUM, 4,
		0x80000000u };
	static const unsigned int int_sizes[4] = { 1, 2, 4, 8 };
	static const unsigned int odd_sizes[8] = { 0, 3, 5, 16, 4096,
						   UINT_MAX, 6, 7 };
	static const unsigned int bases[5] = { 0, 2, 8, 10, 16 };
	static const unsigned int odd_bases[8] = { 1, 3, 7, 11, 15, 17, 100,
						   UINT_MAX };
	static const unsigned int long_lengths[8] = { GRB_CTF_ARRAY_MAX,
		GRB_CTF_ARRAY_MAX + 1, 4096, UINT_MAX, 1024, 8192, 16384,
		32768 };
	static const int signs[4] = { 0, 1, 2, -1 };
	unsigned int b;

	memset(f, 0, sizeof(*f));
	f->name = str(in, pl, field_names[idx]);
	f->kind = (enum grb_ctf_kind)kinds[byte(in) & 7];
	b = byte(in);
	if (b & 0x80)
		f->size = odd_sizes[b & 7];
	else if (f->kind == GRB_CTF_FLOAT)
		f->size = 4u << (b & 1);
	else if (f->kind != GRB_CTF_STRING)
		f->size = int_sizes[b & 3];
	b = byte(in);
	f->is_signed = signs[b & 3];
	f->base = (b & 0x80) ? odd_bases[(b >> 2) & 7] : bases[(b >> 2) % 5];
	b = byte(in);
	if (b >= 0xf8)
		f->length = long_lengths[b & 7];
	else if (b >= 0xc0)
		f->length = b - 0xbf;
	if (f->kind == GRB_CTF_ENUM)
		make_labels(in, pl, f);
}

static void make_desc(struct in *in, struct pool *pl,
		      struct grb_ctf_event_desc *d)
{
	static const int odd_levels[8] = { -2, 15, INT_MIN, INT_MAX, 100,
					   -100, 14, -1 };
	static const unsigned int odd_nr[8] = { GRB_CTF_MAX_FIELDS,
		GRB_CTF_MAX_FIELDS + 1, GRB_CTF_MAX_FIELDS - 1, 32,
		GRB_CTF_MAX_FIELDS + 6, UINT_MAX, 16, 0 };
	unsigned int opts = byte(in), b, n;
	struct grb_ctf_field *f;

	d->name = str(in, pl, "e");
	b = byte(in);
	d->loglevel = b < 0xf0 ? (int)(b % 16) - 1 : odd_levels[b & 7];
	b = byte(in);
	d->nr_fields = b < 0xf0 ? b % 9 : odd_nr[b & 7];
	/* More than the maximum is refused before a field is read: no
	 * need to make them all. */
	n = d->nr_fields < GRB_CTF_MAX_FIELDS + 6 ? d->nr_fields
		: GRB_CTF_MAX_FIELDS + 6;
	if ((opts & 0x0f) == 0x0f) {
		d->fields = NULL;
		return;
	}
	f = (struct grb_ctf_field *)pool_get(pl, n * sizeof(*f));
	for (unsigned int i = 0; i < n; i++)
		make_field(in, pl, &f[i], i);
	d->fields = f;
}

/* ------------------------------------------------------------------ */
/* What grb/ctf.h promises about a description. */

enum verdict { MUST_ACCEPT, EITHER, MUST_REFUSE };

static enum verdict worst(enum verdict a, enum verdict b)
{
	return a > b ? a : b;
}

static int is_ident(const char *s)
{
	const char *c = strchr(ident, s[0]);

	return s[0] && c && c < ident + IDENT_FIRST &&
		strspn(s, ident) == strlen(s);
}

/* "printable, no '"' or '\\', at most GRB_CTF_NAME_MAX bytes, not
 * "grb:padding"", and not registered yet.  Whether bytes above ASCII are
 * printable the header does not say. */
static enum verdict event_name(const char *s)
{
	enum verdict v = MUST_ACCEPT;
	size_t n;

	if (!s || !(n = strlen(s)) || n > GRB_CTF_NAME_MAX ||
	    !strcmp(s, "grb:padding"))
		return MUST_REFUSE;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
			return MUST_REFUSE;
		if (c >= 0x80)
			v = EITHER;
	}
	for (unsigned int i = 0; i < tr.nr; i++)
		if (!strcmp(tr.names[i], s))
			return MUST_REFUSE;
	return v;
}

/* The header bounds a label's length and count only: the rest (empty,
 * quotes, duplicates, a value the integer cannot hold) is the client's
 * choice, which the metadata checks then hold to the quoting rules. */
static enum verdict labels(const struct grb_ctf_field *f)
{
	enum verdict v = MUST_ACCEPT;

	if (!f->labels || f->nr_labels == 0 || f->nr_labels > GRB_CTF_ENUM_MAX)
		return MUST_REFUSE;
	for (unsigned int i = 0; i < f->nr_labels; i++) {
		const char *s = f->labels[i].label;

		if (!s || strlen(s) > GRB_CTF_NAME_MAX)
			return MUST_REFUSE;
		if (!*s)
			v = EITHER;
		for (; *s; s++)
			if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\' ||
			    (unsigned char)*s >= 0x7f)
				v = EITHER;
		for (unsigned int j = 0; j < i; j++)
			if (f->labels[j].label &&
			    !strcmp(f->labels[j].label, f->labels[i].label))
				v = EITHER;
		if (f->labels[i].value < 0 || f->labels[i].value > 127)
			v = EITHER;
	}
	return v;
}

static enum verdict field(const struct grb_ctf_field *f)
{
	int int_size = f->size == 1 || f->size == 2 || f->size == 4 ||
		f->size == 8;

	if (!f->name || strlen(f->name) > GRB_CTF_NAME_MAX || !is_ident(f->name))
		return MUST_REFUSE;
	switch (f->kind) {
	case GRB_CTF_INT:
		if (!int_size || (f->base != 0 && f->base != 2 && f->base != 8 &&
				  f->base != 10 && f->base != 16))
			return MUST_REFUSE;
		break;
	case GRB_CTF_FLOAT:
		if (f->size != 4 && f->size != 8)
			return MUST_REFUSE;
		break;
	case GRB_CTF_STRING:
		return f->size || f->length ? MUST_REFUSE : MUST_ACCEPT;
	case GRB_CTF_ENUM:
		if (!int_size || f->length > GRB_CTF_ARRAY_MAX)
			return MUST_REFUSE;
		return labels(f);
	default:
		return MUST_REFUSE;
	}
	return f->length > GRB_CTF_ARRAY_MAX ? MUST_REFUSE : MUST_ACCEPT;
}

static enum verdict desc_verdict(const struct grb_ctf_event_desc *d)
{
	enum verdict v = event_name(d->name);

	/* The header gives the range, but not as an -EINVAL case. */
	if (d->loglevel < -1 || d->loglevel > 14)
		v = worst(v, EITHER);
	if (d->nr_fields > GRB_CTF_MAX_FIELDS || (d->nr_fields && !d->fields))
		return MUST_REFUSE;
	for (unsigned int i = 0; i < d->nr_fields; i++) {
		v = worst(v, field(&d->fields[i]));
		for (unsigned int j = 0; j < i && d->fields[i].name; j++)
			if (d->fields[j].name &&
			    !strcmp(d->fields[i].name, d->fields[j].name))
				return MUST_REFUSE;
	}
	return v;
}

/* ------------------------------------------------------------------ */
/* The metadata a registration wrote. */

static char *read_file(const char *path, size_t *len)
{
	struct stat st;
	char *text;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	check(fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0,
	      "no metadata file");
	text = (char *)malloc((size_t)st.st_size);
	check(text, "out of memory");
	n = read(fd, text, (size_t)st.st_size);
	check(n == st.st_size, "short read of the metadata");
	close(fd);
	*len = (size_t)n;
	return text;
}

/*
 * A TSDL reader's lexer: every comment and string closes, a string holds
 * no newline and no backslash (the writer escapes nothing, so one would
 * be a user's byte that a reader takes for an escape), braces balance,
 * and outside strings and comments there is printable ASCII only.
 */
static void check_tsdl(const char *t, size_t len)
{
	long depth = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)t[i];

		if (c == '/' && i + 1 < len && t[i + 1] == '*') {
			const char *e = (const char *)memmem(t + i + 2,
				len - i - 2, "*/", 2);

			check(e, "a comment does not end");
			i = (size_t)(e - t) + 1;
		} else if (c == '/' && i + 1 < len && t[i + 1] == '/') {
			while (i < len && t[i] != '\n')
				i++;
		} else if (c == '"') {
			for (i++; i < len && t[i] != '"'; i++)
				check(t[i] != '\n' && t[i] != '\\' && t[i],
				      "a byte of a string escapes its quotes");
			check(i < len, "a string does not end");
		} else if (c == '{') {
			depth++;
		} else if (c == '}') {
			check(depth-- > 0, "a brace closes nothing");
		} else {
			check(c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f),
			      "a byte outside strings that TSDL does not have");
		}
	}
	check(depth == 0, "braces do not balance");
}

static size_t count(const char *t, size_t len, const char *key)
{
	size_t n = 0, k = strlen(key);
	const char *p = t, *end = t + len;

	while ((p = (const char *)memmem(p, (size_t)(end - p), key, k))) {
		n++;
		p += k;
	}
	return n;
}

static void has(const char *t, size_t len, const char *want, const char *what)
{
	check(memmem(t, len, want, strlen(want)), what);
}

/* The layout line ctf_metadata.c writes, from the description. */
static void layout_of(const struct grb_ctf_event_desc *d, uint32_t id,
		      char *out, size_t cap)
{
	size_t n = (size_t)snprintf(out, cap, "/* grb-layout %u ", id);

	if (!d->nr_fields)
		n += (size_t)snprintf(out + n, cap - n, "-");
	for (unsigned int i = 0; i < d->nr_fields; i++) {
		const struct grb_ctf_field *f = &d->fields[i];

		if (i)
			n += (size_t)snprintf(out + n, cap - n, ",");
		if (f->kind == GRB_CTF_STRING) {
			n += (size_t)snprintf(out + n, cap - n, "s");
			continue;
		}
		n += (size_t)snprintf(out + n, cap - n, "%c%u",
				      f->kind == GRB_CTF_FLOAT ? 'f' :
				      f->is_signed ? 'i' : 'u', f->size);
		if (f->length)
			n += (size_t)snprintf(out + n, cap - n, "x%u",
					      f->length);
	}
	snprintf(out + n, cap - n, " */\n");
}

static void check_metadata(const struct grb_ctf_event_desc *d, uint32_t id)
{
	char want[1024];
	uint8_t u[16];
	size_t len;
	char *t = read_file(meta_path, &len);

	check(grb_ctf_metadata_load(t, len, u) == 0,
	      "the metadata the client wrote does not load");
	check(!memcmp(u, tr.uuid, 16), "the metadata names another trace");
	check_tsdl(t, len);
	check(count(t, len, "\n/* grb-trace uuid=") == 1,
	      "the trace key is in the metadata more than once");
	check(count(t, len, "\n/* grb-layout ") == tr.nr,
	      "a layout key is in the metadata outside its line");
	snprintf(want, sizeof(want), "\tname = \"%s\";\n", d->name);
	has(t, len, want, "the event name is not written as it was given");
	layout_of(d, id, want, sizeof(want));
	has(t, len, want, "the layout line does not match the class");
	for (unsigned int i = 0; i < d->nr_fields; i++) {
		const struct grb_ctf_field *f = &d->fields[i];

		snprintf(want, sizeof(want), " _%s%s", f->name,
			 f->length ? "[" : ";\n");
		has(t, len, want, "a field name is not written as given");
		for (unsigned int j = 0; f->kind == GRB_CTF_ENUM &&
		     j < f->nr_labels; j++) {
			/* Unsigned containers' values are written
			 * unsigned (from 2^63 up given as negative). */
			if (f->is_signed)
				snprintf(want, sizeof(want), "\"%s\" = %lld",
					 f->labels[j].label,
					 (long long)f->labels[j].value);
			else
				snprintf(want, sizeof(want), "\"%s\" = %llu",
					 f->labels[j].label,
					 (unsigned long long)f->labels[j].value);
			has(t, len, want, "a label is not written as given");
		}
	}
	free(t);
}

/* ------------------------------------------------------------------ */
/* Events of a class just registered, written and read back. */

/*
 * One value per field from the input, and the payload bytes they make
 * (when @want is not NULL).  Arrays too big to copy from the input point
 * into a fixed pattern.  Returns the payload size.
 */
static size_t make_values(struct in *in, struct pool *pl,
			  const struct grb_ctf_event_desc *d,
			  union grb_ctf_value *v, unsigned char *want)
{
	size_t len = 0;

	for (unsigned int i = 0; i < d->nr_fields; i++) {
		const struct grb_ctf_field *f = &d->fields[i];
		size_t n = (size_t)f->size * (f->length ? f->length : 1);
		const void *src;
		float x;

		if (f->kind == GRB_CTF_STRING) {
			v[i].s = str(in, pl, "");
			src = v[i].s ? v[i].s : "";
			n = strlen((const char *)src) + 1;
		} else if (f->length) {
			unsigned char *a = n <= 4096 ?
				(unsigned char *)pool_get(pl, n) : pattern;

			for (size_t k = 0; a != pattern && k < n; k++)
				a[k] = (unsigned char)byte(in);
			v[i].array = a;
			src = a;
		} else if (f->kind == GRB_CTF_FLOAT) {
			v[i].u = word(in);
			x = (float)v[i].d;
			src = f->size == 4 ? (const void *)&x : (const void *)&v[i].d;
		} else {
			/* Little-endian: the low bytes come first. */
			v[i].u = word(in);
			src = &v[i].u;
		}
		if (want)
			memcpy(want + len, src, n);
		len += n;
	}
	return len;
}

/* Compact (4 bytes, ids below 30) or extended (13), with our id. */
static void check_header(const unsigned char *h, const struct grb_record *rec,
			 uint32_t id)
{
	uint32_t got = h[0] & 31u;

	if (got == 31) {
		memcpy(&got, h + 1, sizeof(got));
		check(rec->header_len == 13, "an extended header not 13 bytes");
	} else {
		check(rec->header_len == 4 && id < 30,
		      "a compact header not 4 bytes, or for an id above 29");
	}
	check(got == id, "an event decodes with another id");
}

/* Read every packet delivered; each event must be one of ours. */
static unsigned int drain(uint32_t id, const unsigned char *want, size_t len)
{
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	unsigned int got = 0;
	size_t off;

	grb_buf_flush(tr.buf, GRB_FLUSH_ACTIVE);
	while (grb_reader_get_next(tr.buf) == 0) {
		check(grb_reader_held(tr.buf, &sb) == 0, "nothing held");
		for (off = PKT_HEADER; off < sb.data_size; off = rec.next) {
			const unsigned char *p = (const unsigned char *)sb.data;

			check(cfg->cb.record_decode(cfg, sb.data, off,
						    sb.data_size, &rec) == 0,
			      "an event emitted does not decode");
			check(want && !(rec.rflags & GRB_RFLAG_PADDING) &&
			      rec.payload_len == len &&
			      !memcmp(p + rec.payload_off, want, len),
			      "an event decodes to other bytes than written");
			check_header(p + off, &rec, id);
			got++;
		}
		check(off == sb.data_size, "events overrun their packet");
		grb_reader_put_next(tr.buf);
	}
	return got;
}

static void emit_and_decode(struct in *in, struct pool *pl,
			    const struct grb_ctf_event_desc *d,
			    const struct grb_ctf_event *ev)
{
	union grb_ctf_value v[GRB_CTF_MAX_FIELDS];
	unsigned char *want = NULL;
	struct in again = *in;
	unsigned int ok = 0;
	size_t len;
	int ret;

	len = make_values(in, pl, d, v, NULL);
	if (len <= SUBBUF) {
		/* The same input again, now keeping the bytes. */
		want = (unsigned char *)pool_get(pl, len);
		*in = again;
		make_values(in, pl, d, v, want);
	}
	for (int k = 0; k < 2; k++) {
		ret = grb_ctf_emit(tr.t, ev, v);
		/* Not this engine's exact limit: a bound each side of it. */
		check(ret == 0 || ret == -ENOSPC, "emit failed");
		check(ret == 0 || len > SUBBUF / 2, "a small event refused");
		check(ret != 0 || len <= SUBBUF, "an event bigger than a packet");
		ok += ret == 0;
	}
	check(drain(grb_ctf_event_id(ev), want, len) == ok,
	      "not as many events decode as were emitted");
}

/* ------------------------------------------------------------------ */

static void tracer_close(void)
{
	if (!tr.t)
		return;
	grb_reader_release(tr.buf);
	grb_ctf_destroy(tr.t);
	for (unsigned int i = 0; i < tr.nr; i++)
		free(tr.names[i]);
	memset(&tr, 0, sizeof(tr));
}

static void tracer_open(void)
{
	struct grb_ctf_attr a;
	size_t len;
	char *t;

	memset(&a, 0, sizeof(a));
	a.name = "m";
	a.subbuf_size = SUBBUF;
	a.num_subbuf = 4;
	a.alloc = GRB_ALLOC_PER_CHANNEL;
	a.mode = GRB_MODE_DISCARD;
	a.clock = GRB_CTF_CLOCK_MONOTONIC;
	a.shm_dir = dir;
	a.hostname = "fuzz";
	check(grb_ctf_create(&a, &tr.t) == 0, "cannot create the tracer");
	tr.buf = grb_channel_buf(grb_ctf_channel(tr.t), 0);
	check(grb_reader_open(tr.buf) == 0, "cannot read the tracer");
	t = read_file(meta_path, &len);
	check(grb_ctf_metadata_load(t, len, tr.uuid) == 0,
	      "a new tracer's metadata does not load");
	free(t);
}

static void do_register(struct in *in, struct pool *pl)
{
	for (int k = 0; k < 4 && in->n; k++) {
		struct grb_ctf_event_desc d;
		const struct grb_ctf_event *ev;
		enum verdict v;
		int ret;

		make_desc(in, pl, &d);
		v = desc_verdict(&d);
		ret = grb_ctf_event_register(tr.t, &d, &ev);
		check(ret == 0 || ret == -EINVAL, "registration failed");
		check(ret == 0 || v != MUST_ACCEPT,
		      "a class grb/ctf.h allows is refused");
		check(ret != 0 || v != MUST_REFUSE,
		      "a class grb/ctf.h forbids is accepted");
		if (ret)
			continue;
		/* The rank, skipping 30 (the padding event's id). */
		check(grb_ctf_event_id(ev) == (tr.nr < 30 ? tr.nr : tr.nr + 1),
		      "an id out of rank");
		tr.names[tr.nr++] = strdup(d.name);
		check_metadata(&d, grb_ctf_event_id(ev));
		emit_and_decode(in, pl, &d, ev);
		if (tr.nr == RECYCLE) {
			tracer_close();
			tracer_open();
		}
	}
}

/*
 * Raw bytes as metadata.  The tables of the traces a process learns live
 * as long as it does (ctf_events.c), so a run that spells a new UUID
 * would add one for good: every valid UUID after the key is replaced by
 * one of four, which keeps the memory bounded and parses the same way.
 */
static void load_raw(const uint8_t *data, size_t size)
{
	static const char key[] = "grb-trace uuid=";
	static const char hex[] = "0123456789abcdef";
	char *text = (char *)malloc(size ? size : 1), *p, *end = text + size;
	int ret;

	check(text, "out of memory");
	memcpy(text, data, size);
	for (p = text; (p = (char *)memmem(p, (size_t)(end - p), key,
					   sizeof(key) - 1)); ) {
		const uint8_t *u;
		int i = 0;

		p += sizeof(key) - 1;
		while (i < 32 && p + i < end && p[i] && strchr(hex, p[i]))
			i++;
		if (i < 32)
			continue;
		u = uuid_raw[p[0] & 3];
		for (int k = 0; k < 16; k++) {
			p[2 * k] = hex[u[k] >> 4];
			p[2 * k + 1] = hex[u[k] & 15];
		}
	}
	ret = grb_ctf_metadata_load(text, size, NULL);
	check(ret == 0 || ret == -EBADMSG || ret == -ENOMEM,
	      "metadata_load returned another error");
	free(text);
}

/*
 * Fuzz bytes after a valid packet header of the trace loaded at start-up
 * (or of the current tracer): the buffer is exactly data_size bytes, so
 * ASan reports any read past it.
 */
static void decode_raw(struct in *in)
{
	static const size_t bad[4] = { 0, PKT_HEADER - 1, 0, 0 };
	int own = byte(in) & 1;
	size_t size = PKT_HEADER + in->n, off;
	unsigned char *pkt = (unsigned char *)malloc(size);
	uint32_t magic = CTF_MAGIC;
	struct grb_record rec;

	check(pkt, "out of memory");
	memset(pkt, 0, PKT_HEADER);
	memcpy(pkt, &magic, sizeof(magic));
	memcpy(pkt + 4, own ? tr.uuid : uuid_dec, 16);
	memcpy(pkt + PKT_HEADER, in->p, in->n);
	for (off = PKT_HEADER; off < size; off = rec.next) {
		if (cfg->cb.record_decode(cfg, pkt, off, size, &rec))
			break;
		check(rec.offset == off && rec.next > off && rec.next <= size &&
		      rec.payload_off >= off &&
		      rec.payload_off + rec.payload_len <= rec.next,
		      "a record decoded outside its packet");
	}
	/* Offsets in the header, at the end and past it: refused. */
	for (int i = 0; i < 4; i++) {
		off = i < 2 ? bad[i] : size + (size_t)(i - 2);
		check(cfg->cb.record_decode(cfg, pkt, off, size, &rec) == -EINVAL,
		      "a record decoded outside the packet's records");
	}
	free(pkt);
}

/* GRB_CTF_MAX_EVENTS classes, then -ENOSPC: on a tracer that writes no
 * metadata, as each registration would rewrite all of it. */
static void check_enospc(void)
{
	struct grb_ctf_field f = { "x", GRB_CTF_INT, 4, 0, 0, 0, NULL, 0 };
	struct grb_ctf_event_desc d = { NULL, -1, &f, 1 };
	const struct grb_ctf_event *ev;
	struct grb_ctf_attr a;
	struct grb_ctf *t;
	char name[16];

	memset(&a, 0, sizeof(a));
	a.name = "full";
	a.subbuf_size = 4096;
	a.num_subbuf = 2;
	a.alloc = GRB_ALLOC_PER_CHANNEL;
	a.mode = GRB_MODE_DISCARD;
	a.hostname = "fuzz";
	check(grb_ctf_create(&a, &t) == 0, "cannot create a tracer");
	d.name = name;
	for (unsigned int i = 0; i <= GRB_CTF_MAX_EVENTS; i++) {
		snprintf(name, sizeof(name), "e%u", i);
		check(grb_ctf_event_register(t, &d, &ev) ==
		      (i < GRB_CTF_MAX_EVENTS ? 0 : -ENOSPC),
		      "GRB_CTF_MAX_EVENTS classes are not exactly the limit");
	}
	grb_ctf_destroy(t);
}

/* The trace of the packet mode: classes of every layout, ids 0 to 40 so
 * that both event headers occur. */
static void load_decode_trace(void)
{
	static const char *const layouts[12] = {
		"-", "u1", "i2,u4", "u8x4", "f4,f8", "s", "s,s", "u4,s,i8",
		"f8x3,s", "u1x65536", "s,u2x2,s", "i4x2,s,f4",
	};
	char text[4096];
	size_t n;

	n = (size_t)snprintf(text, sizeof(text),
			     "/* CTF 1.8 */\n/* grb-trace uuid=");
	for (int i = 0; i < 16; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%02x",
				      uuid_dec[i]);
	n += (size_t)snprintf(text + n, sizeof(text) - n, " */\n");
	/* Ranks 0 to 39: ids skip 30, the padding event's. */
	for (unsigned int i = 0; i < 40; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "/* grb-layout %u %s */\n",
				      i < 30 ? i : i + 1, layouts[i % 12]);
	check(n < sizeof(text), "layout text too long");
	check(grb_ctf_metadata_load(text, n, NULL) == 0,
	      "the packet mode's trace does not load");
}

/* Remove directory @path and the files in it. */
static void rm_dir(const char *path)
{
	char f[sizeof(dir) + 300];
	struct dirent *e;
	DIR *d = opendir(path);

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s", path, e->d_name);
		unlink(f);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

/*
 * This process's directory, TMP/grb_fuzz_meta.PID.  A run that crashed
 * left its own (no exit handler runs then): those whose process is gone
 * are removed, so that crashes do not pile up in shared memory.
 */
static void make_dir(const char *tmp)
{
	static const char prefix[] = "grb_fuzz_meta.";
	char path[sizeof(dir) + 300];
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
	check((size_t)snprintf(dir, sizeof(dir), "%s/%s%d", tmp, prefix,
			       (int)getpid()) < sizeof(dir) - 20 &&
	      mkdir(dir, 0700) == 0, "cannot make a temporary directory");
}

static void cleanup(void)
{
	tracer_close();
	rm_dir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	/* Shared memory, where a tracer's files usually live, and fast. */
	if (access("/dev/shm", W_OK) == 0)
		tmp = "/dev/shm";
	make_dir(tmp ? tmp : "/tmp");
	snprintf(meta_path, sizeof(meta_path), "%s/m.metadata", dir);
	atexit(cleanup);
	memset(long127, 'n', GRB_CTF_NAME_MAX);
	memset(long128, 'n', GRB_CTF_NAME_MAX + 1);
	for (unsigned int i = 0; i < GRB_CTF_ENUM_MAX + 2; i++)
		snprintf(label_names[i], sizeof(label_names[i]), "v%u", i);
	for (unsigned int i = 0; i < GRB_CTF_MAX_FIELDS + 8; i++)
		snprintf(field_names[i], sizeof(field_names[i]), "f%u", i);
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (unsigned char)(i * 7 + (i >> 8));
	cfg = grb_ctf_config(GRB_ALLOC_PER_CHANNEL, GRB_MODE_DISCARD,
			     GRB_CTF_CLOCK_MONOTONIC);
	check(cfg, "no configuration");
	load_decode_trace();
	check_enospc();
	tracer_open();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in;
	struct pool pl = { NULL, 0, 0 };

	if (size < 1)
		return 0;
	in.p = data + 1;
	in.n = size - 1;
	switch (data[0] & 3) {
	case 0:
		load_raw(data + 1, size - 1);
		break;
	case 1:
		decode_raw(&in);
		break;
	default:
		do_register(&in, &pl);
		break;
	}
	pool_free(&pl);
	return 0;
}
