/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_ctf_register.c - grb_ctf_event_register() (grb/ctf.h):
 * each class description it refuses (event names that are not printable
 * UTF-8 or are the padding's, log levels, too many or duplicate fields,
 * field names that are not C identifiers, kinds, sizes, bases, array
 * lengths, enumerations whose labels or values do not fit) and the
 * limits it accepts; the id each class gets (its rank, skipping 30),
 * which a refused class must not take; -ENOSPC after GRB_CTF_MAX_EVENTS
 * classes; and a metadata write that fails, which registers nothing,
 * then the metadata written whole before the retry returns.  A class
 * the metadata cannot describe would make the whole trace unreadable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ctf_rig.h"
#include "grb/ctf.h"

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
	snprintf(dir, sizeof(dir), "%s/meta", scratch);
	snprintf(away, sizeof(away), "%s/meta-away", scratch);
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
	CHECK_EQ(tmp_files(dir), 0);
	free(m);
	CHECK_EQ(grb_ctf_stop(t), 0);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

int main(void)
{
	ctf_rig_start();
	register_classes();
	register_limits();
	return ctf_rig_done("test_ctf_register");
}
