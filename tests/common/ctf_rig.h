/* SPDX-License-Identifier: MIT */
/*
 * tests/common/ctf_rig.h - what the CTF client's tests share
 * (tests/func/test_ctf.c and the test_ctf_*.c contract programs): a
 * scratch directory and the file helpers that look into it, the CPUs a
 * thread moves between, a plain tracer's attributes, the ids promised to
 * registered classes, the packet header the metadata declares and a
 * count of the events in stream files; and, for test_ctf's modes, event
 * classes covering every field kind with values drawn as a pure
 * function of (class, thread, sequence number).
 */
#ifndef GRB_TESTS_CTF_RIG_H
#define GRB_TESTS_CTF_RIG_H

#include <stddef.h>
#include <stdint.h>

#include "grb/ctf.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Field descriptions: name, size, signed, base, array length, labels. */
#define INT(n, sz, sg, b)        { n, GRB_CTF_INT, sz, sg, b, 0, NULL, 0 }
#define INTS(n, sz, sg, b, len)  { n, GRB_CTF_INT, sz, sg, b, len, NULL, 0 }
#define FLT(n, sz)               { n, GRB_CTF_FLOAT, sz, 0, 0, 0, NULL, 0 }
#define FLTS(n, sz, len)         { n, GRB_CTF_FLOAT, sz, 0, 0, len, NULL, 0 }
#define STR(n)                   { n, GRB_CTF_STRING, 0, 0, 0, 0, NULL, 0 }
#define ENUM(n, sz, sg, l)       { n, GRB_CTF_ENUM, sz, sg, 0, 0, l, ARRAY_SIZE(l) }
#define ENUMS(n, sz, sg, l, len) { n, GRB_CTF_ENUM, sz, sg, 0, len, l, ARRAY_SIZE(l) }

/* ---- the scratch directory, files, clocks, CPUs ----------------------- */

/* The program's scratch directory, made by ctf_rig_start(). */
extern char scratch[];

/* Note the CPUs and make scratch; every contract program starts so. */
void ctf_rig_start(void);
/* Check that scratch is left empty, remove it, print "@prog: passed";
 * returns main()'s 0. */
int ctf_rig_done(const char *prog);

uint64_t now_ns(void);
void sleep_ns(uint64_t ns);

/* The CPUs this process may run on, which the writers move between.
 * (ctf_ because tests/common/wr_rig.c has its own cpus and pin().) */
extern int ctf_cpus[];
extern int ctf_ncpus;
void ctf_cpus_init(void);
/* Run the calling thread on @cpu only; it is there when this returns. */
void ctf_pin(int cpu);

void path_of(char *out, size_t n, const char *dir, const char *name);
/* Entries of @dir but . and .., or -1 when it does not exist. */
int dir_entries(const char *dir);
/* Entries of @dir whose name ends in ".tmp" (the metadata's temporary
 * files), or -1 when it does not exist. */
int tmp_files(const char *dir);
int exists(const char *dir, const char *name);
void put_file(const char *dir, const char *name, const char *text);
/* The whole file, NUL-terminated, its length in *@len; free() it. */
char *slurp(const char *dir, const char *name, size_t *len);
/* Remove the files of @dir, then @dir. */
void rm_dir(const char *dir);

/* ---- tracers ------------------------------------------------------- */

/* One 4 KiB x 4 per-channel discard buffer, monotonic clock, named "c",
 * no directory: each test changes what it is about. */
struct grb_ctf_attr attr_ok(void);
/* grb_ctf_create()'s result; a tracer it made is destroyed at once. */
int try_create(const struct grb_ctf_attr *a);

/* The id grb/ctf.h promises the class registered after @rank others:
 * the rank, skipping 30 (the padding event's). */
uint32_t id_of_rank(uint32_t rank);

/* Register class "n" on @t: one unsigned 8-byte field, "n". */
const struct grb_ctf_event *reg_u64(struct grb_ctf *t);

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

/*
 * The events in the stream files NAME_* of @dir, each with an 8-byte
 * payload: their count; each payload below @max is marked in @seen, and
 * padding events are counted in *@pads.  A packet the writer thread is
 * still appending is left out.
 */
uint64_t stream_events(const char *dir, const char *name,
		       unsigned char *seen, uint64_t max, uint64_t *pads);

/* ---- test_ctf's event classes and their values ------------------------ */

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

extern struct tclass classes[MAXC];
extern unsigned int nr_classes;
extern unsigned int nr_setup;       /* the classes the writers pick */
extern unsigned int sig_class, late_class, big_class;

/* The classes of the events mode; @all_ids: more than 30 of them. */
void classes_init(int all_ids);
int register_class(struct grb_ctf *t, unsigned int i);

/* One event's values: a pure function of (class, thread, seq). */
struct gen {
	int raw;                              /* through emit_raw */
	union grb_ctf_value v[MAXF];
	unsigned char arr[MAXF][ARR_BYTES];   /* arrays, native layout */
};

void gen_event(unsigned int cls, uint32_t thr, uint32_t seq, struct gen *g);
/* Emit @g with grb_ctf_emit(), or packed with grb_ctf_emit_raw(). */
int emit_gen(struct grb_ctf *t, unsigned int cls, const struct gen *g);

#endif /* GRB_TESTS_CTF_RIG_H */
