/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_ctf_contract.c - promises of grb/ctf.h that the
 * other test_ctf_*.c programs and ctf_check.py leave unchecked: what a
 * refused creation leaves in both directories; the host name's 127
 * bytes; the class description copied; the metadata replaced by rename
 * (trace directory and NAME.metadata); registrations from several
 * threads; the NULL arguments of the emits, -ESHUTDOWN after stop; the
 * stream files byte by byte (packet header and context, compact and
 * extended event headers and when each is used, timestamps inside their
 * packet) against grb_ctf_stats; grb_ctf_destroy() without a stop;
 * babeltrace2 on an empty trace; a shared tracer whose process ended
 * without grb_ctf_destroy(), decoded once grb_ctf_metadata_load() ran.
 * No check depends on timing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "ctf_rig.h"
#include "grb/channel.h"
#include "grb/ctf.h"
#include "grb/reader.h"
#include "grb/shm.h"

#define MAGIC      0xC1FC1FC1u

/* ---- helpers -------------------------------------------------------- */

static int file_is(const char *dir, const char *name, const char *text)
{
	size_t len;
	char *m = slurp(dir, name, &len);
	int same = len == strlen(text) && memcmp(m, text, len) == 0;

	free(m);
	return same;
}

static void unlink_in(const char *dir, const char *name)
{
	char p[512];

	path_of(p, sizeof(p), dir, name);
	CHECK_EQ(unlink(p), 0);
}

/* The trace UUID of metadata @m (its trace block). */
static void uuid_of(const char *m, uint8_t u[16])
{
	const char *p = strstr(m, "\tuuid = \"");
	unsigned int k = 0;

	CHECK(p != NULL);
	memset(u, 0, 16);
	for (p += 9; *p != '"' && k < 32; p++) {
		if (*p == '-')
			continue;
		u[k / 2] = (uint8_t)(u[k / 2] << 4 |
				     (*p <= '9' ? *p - '0' : *p - 'a' + 10));
		k++;
	}
	CHECK_EQ(k, 32);
}

static const struct grb_ctf_field f_n[] = { INT("n", 8, 0, 10) };

/* ---- grb_ctf_create: what is already there stays as it was ----------- */

static void create_leftovers(void)
{
	struct grb_ctf_attr a = attr_ok();
	char dir[256], shm[256];
	struct grb_ctf *t;
	unsigned int nb;

	path_of(dir, sizeof(dir), scratch, "trace");
	path_of(shm, sizeof(shm), scratch, "shm");
	CHECK_EQ(mkdir(shm, 0755), 0);

	/* A stream file in the trace directory of a shared tracer: neither
	 * directory keeps anything of the refused tracer. */
	CHECK_EQ(mkdir(dir, 0755), 0);
	put_file(dir, "c_0", "old");
	a.trace_dir = dir;
	a.shm_dir = shm;
	CHECK_EQ(try_create(&a), -EEXIST);
	CHECK_EQ(dir_entries(dir), 1);
	CHECK(file_is(dir, "c_0", "old"));
	CHECK_EQ(dir_entries(shm), 0);
	rm_dir(dir);

	/* The trace directory exists; the shared one does not: it stays,
	 * empty (only a directory this call made may be left). */
	CHECK_EQ(mkdir(dir, 0755), 0);
	a.shm_dir = "/nonexistent-grb-test";
	CHECK_EQ(try_create(&a), -ENOENT);
	CHECK_EQ(dir_entries(dir), 0);

	/* A lone metadata file, in either place: untouched, and no stream
	 * or buffer file made beside it. */
	put_file(dir, "metadata", "old trace");
	a.shm_dir = NULL;
	CHECK_EQ(try_create(&a), -EEXIST);
	CHECK_EQ(dir_entries(dir), 1);
	CHECK(file_is(dir, "metadata", "old trace"));
	rm_dir(dir);
	a.trace_dir = NULL;
	a.shm_dir = shm;
	put_file(shm, "c.metadata", "old tracer");
	CHECK_EQ(try_create(&a), -EEXIST);
	CHECK_EQ(dir_entries(shm), 1);
	CHECK(file_is(shm, "c.metadata", "old tracer"));
	unlink_in(shm, "c.metadata");

	/* A buffer file of a per-CPU shared tracer, the first or the last:
	 * its bytes stay, nothing else is left. */
	a.alloc = GRB_ALLOC_PER_CPU;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	nb = grb_channel_nr_bufs(grb_ctf_channel(t));
	grb_ctf_destroy(t);
	CHECK_EQ(dir_entries(shm), 0);
	for (unsigned int i = 0; i < 2; i++) {
		char file[32];

		snprintf(file, sizeof(file), "c.%u", i ? nb - 1 : 0);
		put_file(shm, file, "buffer");
		CHECK_EQ(try_create(&a), -EEXIST);
		CHECK_EQ(dir_entries(shm), 1);
		CHECK(file_is(shm, file, "buffer"));
		unlink_in(shm, file);
	}
	CHECK_EQ(rmdir(shm), 0);
}

/* ---- grb_ctf_event_register ------------------------------------------ */

/* The description is copied; the metadata replaced, never rewritten in
 * place, in both places it is kept. */
static void register_copy_rename(void)
{
	struct grb_ctf_attr a = attr_ok();
	struct grb_ctf_field f[2] = { INT("n", 8, 0, 10), STR("s") };
	struct grb_ctf_event_desc d = { NULL, 3, f, 2 };
	const struct grb_ctf_event *ev, *ev2;
	char dir[256], shm[256], name[16] = "first", path[512], buf[8192];
	unsigned char raw[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', 'c', 0 };
	struct grb_ctf *t;
	size_t len, olen;
	char *m, *old;
	int fd;

	path_of(dir, sizeof(dir), scratch, "reg");
	path_of(shm, sizeof(shm), scratch, "regshm");
	CHECK_EQ(mkdir(shm, 0755), 0);
	a.trace_dir = dir;
	a.shm_dir = shm;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	old = slurp(dir, "metadata", &olen);
	CHECK(olen < sizeof(buf) && strstr(old, "\"first\"") == NULL);
	path_of(path, sizeof(path), dir, "metadata");
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	d.name = name;
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	/* A reader holding the old file still reads it whole. */
	CHECK_EQ(pread(fd, buf, sizeof(buf), 0), (ssize_t)olen);
	CHECK(memcmp(buf, old, olen) == 0);
	close(fd);
	free(old);
	m = slurp(dir, "metadata", &len);
	CHECK(strstr(m, "name = \"first\";") != NULL);
	CHECK(strstr(m, "loglevel = 3;") != NULL);
	free(m);
	m = slurp(shm, "c.metadata", &len);
	CHECK(strstr(m, "name = \"first\";") != NULL);
	free(m);

	/* Change everything the caller passed: the class stays as it was
	 * registered. */
	strcpy(name, "second");
	f[0].size = 1;
	f[1] = (struct grb_ctf_field)INT("z", 2, 0, 10);
	d.loglevel = 5;
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev2), 0);
	strcpy(name, "first");
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev2), -EINVAL);
	CHECK_EQ(grb_ctf_emit_raw(t, ev, raw, 12), 0);
	CHECK_EQ(grb_ctf_emit_raw(t, ev, raw, 3), -EINVAL);
	CHECK_EQ(grb_ctf_stop(t), 0);
	/* A handle stays valid once stopped. */
	CHECK_EQ(grb_ctf_event_id(ev), 0);
	CHECK_EQ(grb_ctf_event_id(ev2), 1);
	grb_ctf_destroy(t);
	m = slurp(dir, "metadata", &len);
	CHECK(strstr(m, "\t\tinteger { size = 64; align = 8; signed = false; "
		     "base = 10; } _n;\n\t\tstring _s;\n") != NULL);
	free(m);
	/* Destroyed: the shared files are gone, the trace stays. */
	CHECK_EQ(dir_entries(shm), 0);
	CHECK_EQ(rmdir(shm), 0);
	rm_dir(dir);
}

#define REG_THREADS 4

struct reg_arg {
	struct grb_ctf *t;
	unsigned int k;
	uint32_t ids[GRB_CTF_MAX_EVENTS / REG_THREADS];
};

static void *reg_thread(void *p)
{
	struct reg_arg *r = (struct reg_arg *)p;
	struct grb_ctf_event_desc d = { NULL, -1, f_n, 1 };
	const struct grb_ctf_event *ev;
	char name[32];

	for (unsigned int i = 0; i < ARRAY_SIZE(r->ids); i++) {
		snprintf(name, sizeof(name), "t%u:e%u", r->k, i);
		d.name = name;
		CHECK_EQ(grb_ctf_event_register(r->t, &d, &ev), 0);
		r->ids[i] = grb_ctf_event_id(ev);
	}
	return NULL;
}

/* Registrations from several threads at once: each class an id of its
 * own, together every id of ranks 0 to 4095 (30 skipped); then -ENOSPC,
 * and -EINVAL for a class refused anyway. */
static void register_threads(void)
{
	static struct reg_arg args[REG_THREADS];
	static unsigned char seen[GRB_CTF_MAX_EVENTS + 1];
	struct grb_ctf_attr a = attr_ok();
	struct grb_ctf_event_desc d = { "more", -1, f_n, 1 };
	const struct grb_ctf_event *ev;
	pthread_t th[REG_THREADS];
	struct grb_ctf *t;

	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	for (unsigned int i = 0; i < REG_THREADS; i++) {
		args[i].t = t;
		args[i].k = i;
		CHECK_EQ(pthread_create(&th[i], NULL, reg_thread, &args[i]), 0);
	}
	for (unsigned int i = 0; i < REG_THREADS; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	for (unsigned int i = 0; i < REG_THREADS; i++)
		for (unsigned int j = 0; j < ARRAY_SIZE(args[i].ids); j++) {
			uint32_t id = args[i].ids[j];

			CHECK(id <= GRB_CTF_MAX_EVENTS && id != GRB_CTF_PADDING_ID);
			CHECK_EQ(seen[id]++, 0);
			/* One thread's classes in its order. */
			if (j)
				CHECK(id > args[i].ids[j - 1]);
		}
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), -ENOSPC);
	d.name = "t0:e0";
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), -EINVAL);
	d.name = "";
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), -EINVAL);
	d.name = "ok";
	d.loglevel = 15;
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), -EINVAL);
	grb_ctf_destroy(t);
}

/* ---- grb_ctf_emit*: the NULL arguments, after stop ------------------- */

static void emit_nulls(void)
{
	static const struct grb_ctf_field f_s[] = { STR("s") };
	struct grb_ctf_event_desc dn = { "none", -1, NULL, 0 };
	struct grb_ctf_event_desc ds = { "str", -1, f_s, 1 };
	struct grb_ctf_event_desc di = { "int", -1, f_n, 1 };
	const struct grb_ctf_event *none, *str, *in;
	struct grb_ctf_attr a = attr_ok();
	union grb_ctf_value v[1] = { { .u = 1 } };
	struct grb_ctf_stats st;
	struct grb_ctf *t;

	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &dn, &none), 0);
	CHECK_EQ(grb_ctf_event_register(t, &ds, &str), 0);
	CHECK_EQ(grb_ctf_event_register(t, &di, &in), 0);
	/* A class without fields needs no payload and no values. */
	CHECK_EQ(grb_ctf_emit_raw(t, none, NULL, 0), 0);
	CHECK_EQ(grb_ctf_emit(t, none, NULL), 0);
	/* One with fields does. */
	CHECK_EQ(grb_ctf_emit_raw(t, str, NULL, 0), -EINVAL);
	CHECK_EQ(grb_ctf_emit_raw(t, in, NULL, 0), -EINVAL);
	CHECK_EQ(grb_ctf_emit_raw(t, in, NULL, 8), -EINVAL);
	CHECK_EQ(grb_ctf_emit(t, in, NULL), -EINVAL);
	CHECK_EQ(grb_ctf_emit(t, str, NULL), -EINVAL);
	CHECK_EQ(grb_ctf_emit(t, in, v), 0);
	CHECK_EQ(grb_ctf_stop(t), 0);
	/* Stopped: what grb_reserve() says of a finalized channel, through
	 * either call, and nothing counted. */
	CHECK_EQ(grb_ctf_emit(t, in, v), -ESHUTDOWN);
	CHECK_EQ(grb_ctf_emit(t, none, NULL), -ESHUTDOWN);
	CHECK_EQ(grb_ctf_emit_raw(t, none, NULL, 0), -ESHUTDOWN);
	/* Bad arguments are still -EINVAL. */
	CHECK_EQ(grb_ctf_emit(t, in, NULL), -EINVAL);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events, 3);
	CHECK_U64(st.events_discarded, 0);
	grb_ctf_destroy(t);
}

/* ---- the stream files, byte by byte ---------------------------------- */

#define NCLASS 34        /* ids 0-29 compact, 31-34 extended */
#define PER_CPU 300

struct walk {
	uint8_t uuid[16];
	uint64_t t0, t1;         /* the clock around the emits */
	uint64_t events, packets, bytes, gaps, discarded;
	uint64_t compact;
};

/* Walk one stream file @name of @dir (buffer @buf of @t). */
static void walk_stream(struct walk *w, const char *dir, const char *name,
			struct grb_buf *buf)
{
	struct grb_buf_stats bs;
	struct packet_head h;
	uint64_t next_seq = 0, last_disc = 0, prev_ts = 0;
	size_t len, off;
	int cpu = grb_buf_cpu(buf);
	char *m = slurp(dir, name, &len);

	for (off = 0; off < len; off += h.packet_size / 8) {
		size_t p, end;
		int first = 1;

		CHECK(len - off >= sizeof(h));
		memcpy(&h, m + off, sizeof(h));
		CHECK_EQ(h.magic, MAGIC);
		CHECK(memcmp(h.uuid, w->uuid, 16) == 0);
		CHECK_EQ(h.stream_id, 0);
		CHECK_U64(h.stream_instance_id, cpu < 0 ? 0 : (uint64_t)cpu);
		CHECK_U64(h.cpu_id, h.stream_instance_id);
		CHECK_U64(h.content_size, h.packet_size);
		CHECK(h.packet_size % 8 == 0 && h.packet_size / 8 >= sizeof(h) &&
		      h.packet_size / 8 <= len - off);
		CHECK(h.timestamp_begin <= h.timestamp_end);
		w->gaps += h.packet_seq_num - next_seq;
		CHECK(h.packet_seq_num >= next_seq);
		next_seq = h.packet_seq_num + 1;
		CHECK(h.events_discarded >= last_disc);
		last_disc = h.events_discarded;
		end = off + h.packet_size / 8;
		for (p = off + sizeof(h); p < end; first = 0) {
			unsigned int id = (unsigned char)m[p] & 31u;
			uint64_t ts, v;
			uint32_t word, eid;

			/* No writer died: no padding event. */
			CHECK(id != GRB_CTF_PADDING_ID);
			if (id == 31u) {
				CHECK(end - p >= 13);
				memcpy(&eid, m + p + 1, 4);
				memcpy(&ts, m + p + 5, 8);
				p += 13;
			} else {
				/* Compact: never a packet's first event, nor
				 * an id from GRB_CTF_COMPACT_IDS up. */
				CHECK(!first);
				CHECK(id < GRB_CTF_COMPACT_IDS);
				memcpy(&word, m + p, 4);
				eid = id;
				ts = (prev_ts & ~(uint64_t)0x7ffffff) |
					(word >> 5);
				if (ts < prev_ts)
					ts += (uint64_t)1 << 27;
				p += 4;
				w->compact++;
			}
			CHECK(eid <= NCLASS && eid != GRB_CTF_PADDING_ID);
			/* Ids from 30 up: the extended header, always. */
			CHECK(eid < GRB_CTF_COMPACT_IDS || id == 31u);
			CHECK(ts >= prev_ts);
			CHECK(ts >= h.timestamp_begin && ts <= h.timestamp_end);
			CHECK(ts >= w->t0 && ts <= w->t1);
			prev_ts = ts;
			CHECK(end - p >= 8);
			memcpy(&v, m + p, 8);
			CHECK_U64(v % 1000, eid);
			p += 8;
			w->events++;
		}
		CHECK_U64(p, end);
		w->packets++;
		w->bytes += h.packet_size / 8;
	}
	CHECK_U64(off, len);
	CHECK(w->packets > 0);
	/* The stream's last packet carries every event its buffer refused. */
	CHECK_EQ(grb_buf_get_stats(buf, &bs), 0);
	CHECK_U64(last_disc, bs.lost_full + bs.lost_wrap + bs.lost_big +
		  bs.lost_nesting);
	w->discarded += last_disc;
	free(m);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

/* Per-CPU buffers, classes on both sides of id 30, a refusal (too big),
 * every CPU this process may use. */
static void stream_layout(void)
{
	static const struct grb_ctf_field f_big[] = { STR("s") };
	const struct grb_ctf_event *ev[NCLASS + 1], *big;
	struct grb_ctf_event_desc d = { NULL, -1, f_n, 1 };
	struct grb_ctf_attr a = attr_ok();
	struct walk w;
	struct grb_ctf_stats st;
	struct grb_channel *ch;
	cpu_set_t all;
	union grb_ctf_value v[1];
	char dir[256], name[32], *m, *huge;
	struct grb_ctf *t;
	uint64_t emitted = 0;
	size_t len;

	memset(&w, 0, sizeof(w));
	path_of(dir, sizeof(dir), scratch, "layout");
	a.trace_dir = dir;
	a.alloc = GRB_ALLOC_PER_CPU;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	ch = grb_ctf_channel(t);
	for (unsigned int i = 0; i < NCLASS; i++) {
		snprintf(name, sizeof(name), "c%u", i);
		d.name = name;
		CHECK_EQ(grb_ctf_event_register(t, &d, &ev[i]), 0);
	}
	d.name = "big";
	d.fields = f_big;
	CHECK_EQ(grb_ctf_event_register(t, &d, &big), 0);
	m = slurp(dir, "metadata", &len);
	uuid_of(m, w.uuid);
	free(m);

	CHECK_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
	w.t0 = now_ns();
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		pin(c);
		for (uint64_t i = 0; i < PER_CPU; i++) {
			uint32_t id = grb_ctf_event_id(ev[i % NCLASS]);
			uint64_t val = i * 1000 + id;

			CHECK_EQ(grb_ctf_emit_raw(t, ev[i % NCLASS], &val,
						  sizeof(val)), 0);
			emitted++;
		}
	}
	CHECK_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
	huge = malloc(a.subbuf_size + 1);
	CHECK(huge != NULL);
	memset(huge, 'h', a.subbuf_size);
	huge[a.subbuf_size] = 0;
	v[0].s = huge;
	CHECK_EQ(grb_ctf_emit(t, big, v), -ENOSPC);
	free(huge);
	w.t1 = now_ns();
	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);

	/* One stream file per buffer, NAME_CPU, and the metadata. */
	CHECK_EQ(dir_entries(dir), (int)grb_channel_nr_bufs(ch) + 1);
	for (unsigned int i = 0; i < grb_channel_nr_bufs(ch); i++) {
		struct grb_buf *buf = grb_channel_buf(ch, i);

		snprintf(name, sizeof(name), "c_%d", grb_buf_cpu(buf));
		walk_stream(&w, dir, name, buf);
	}
	CHECK_U64(w.events, emitted);
	CHECK(w.compact > 0);
	/* The counters, against the files. */
	CHECK_U64(st.events, emitted);
	CHECK_U64(st.events_discarded, 1);
	CHECK_U64(st.events_discarded, w.discarded);
	CHECK_U64(st.events_overwritten, 0);
	CHECK_U64(st.events_dead, 0);
	CHECK_U64(st.packets, w.packets);
	CHECK_U64(st.packets_discarded, w.gaps);
	CHECK_U64(st.packets_discarded, 0);
	CHECK_U64(st.bytes, w.bytes);
	grb_ctf_destroy(t);
	rm_dir(dir);
}

/* ---- destroy without stop; what babeltrace2 prints -------------------- */

/* The lines babeltrace2 prints of trace @dir, or -1 when it is not
 * installed; it must succeed. */
static int64_t babeltrace(const char *dir)
{
	char cmd[600], line[4096];
	int64_t lines = 0;
	FILE *f;

	if (system("babeltrace2 --version >/dev/null 2>&1") != 0)
		return -1;
	CHECK((size_t)snprintf(cmd, sizeof(cmd), "babeltrace2 '%s'", dir) <
	      sizeof(cmd));
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (strchr(line, '\n'))
			lines++;
	CHECK_EQ(pclose(f), 0);
	return lines;
}

static void destroy_unstopped(void)
{
	struct grb_ctf_event_desc d = { "n", -1, f_n, 1 };
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	char dir[256], shm[256], host[201], want[160], *m;
	struct grb_ctf *t;
	struct packet_head h;
	int64_t lines;
	uint64_t events = 0;
	size_t len, off;

	path_of(dir, sizeof(dir), scratch, "unstopped");
	path_of(shm, sizeof(shm), scratch, "unstopped_shm");
	CHECK_EQ(mkdir(shm, 0755), 0);
	a.trace_dir = dir;
	a.shm_dir = shm;
	/* Never flushed by the writer thread while the test runs. */
	a.flush_period_ns = 3600000000000u;

	/* No event: babeltrace2 reads the trace, prints nothing.  The env
	 * block's host name is the first 127 bytes of attr.hostname. */
	memset(host, 'h', 200);
	host[200] = 0;
	host[126] = 'x';          /* the last byte kept */
	host[127] = 'y';          /* the first byte dropped */
	a.hostname = host;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	grb_ctf_destroy(t);
	snprintf(want, sizeof(want), "\thostname = \"%.127s\";\n", host);
	m = slurp(dir, "metadata", &len);
	CHECK(strstr(m, want) != NULL);
	free(m);
	CHECK_EQ(dir_entries(shm), 0);
	lines = babeltrace(dir);
	CHECK(lines == -1 || lines == 0);
	rm_dir(dir);

	/* Seven events: destroy stops, so all are in the stream file. */
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	for (uint64_t i = 0; i < 7; i++)
		CHECK_EQ(grb_ctf_emit_raw(t, ev, &i, sizeof(i)), 0);
	grb_ctf_destroy(t);
	CHECK_EQ(dir_entries(shm), 0);
	CHECK_EQ(rmdir(shm), 0);
	CHECK_EQ(dir_entries(dir), 2);
	m = slurp(dir, "c_0", &len);
	for (off = 0; off + sizeof(h) <= len; off += h.packet_size / 8) {
		memcpy(&h, m + off, sizeof(h));
		CHECK_EQ(h.magic, MAGIC);
		CHECK(h.packet_size / 8 >= sizeof(h));
		/* 8-byte payloads: the first extended (21 bytes), then
		 * compact (12) or extended. */
		for (size_t p = off + sizeof(h); p < off + h.packet_size / 8;
		     events++)
			p += ((unsigned char)m[p] & 31u) == 31u ? 21 : 12;
	}
	CHECK_U64(off, len);
	CHECK_U64(events, 7);
	free(m);
	lines = babeltrace(dir);
	CHECK(lines == -1 || lines == 7);
	rm_dir(dir);
}

/* ---- a shared tracer whose process ended without destroying it ------- */

static void ended_producer(void)
{
	static const struct grb_ctf_field f[] = { INT("n", 4, 0, 10), STR("s") };
	struct grb_ctf_event_desc d = { "gone", -1, f, 2 };
	struct grb_ctf_attr a = attr_ok();
	const struct grb_config *cfg;
	struct grb_reader_subbuf sb;
	struct grb_channel *att;
	struct packet_head h;
	struct grb_buf *buf;
	uint8_t u[16], want[16];
	char shm[256], *m;
	uint64_t n = 0;
	size_t len;
	int status, ret, refused = 0;
	pid_t pid;

	path_of(shm, sizeof(shm), scratch, "ended");
	CHECK_EQ(mkdir(shm, 0755), 0);
	a.shm_dir = shm;
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		const struct grb_ctf_event *ev;
		union grb_ctf_value v[2];
		struct grb_ctf *t;

		CHECK_EQ(grb_ctf_create(&a, &t), 0);
		CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
		for (uint64_t i = 0; i < 3; i++) {
			v[0].u = 40 + i;
			v[1].s = i == 1 ? NULL : "abc";
			CHECK_EQ(grb_ctf_emit(t, ev, v), 0);
		}
		CHECK_EQ(grb_ctf_stop(t), 0);
		_exit(0);        /* no grb_ctf_destroy(): the files stay */
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(dir_entries(shm), 2);     /* c.0, c.metadata */

	cfg = grb_ctf_config(a.alloc, a.mode, a.clock);
	CHECK_EQ(grb_channel_attach_dir(cfg, GRB_CTF_CLIENT, shm, "c",
					GRB_ATTACH_READER, &att), 0);
	buf = grb_channel_buf(att, 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	m = slurp(shm, "c.metadata", &len);
	while ((ret = grb_reader_get_next(buf)) == 0) {
		struct grb_record rec;
		size_t off = grb_reader_first_record(buf);

		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		memcpy(&h, sb.data, sizeof(h));
		if (off < sb.data_size && !refused) {
			/* The classes of this trace are not known here
			 * yet: its events do not decode. */
			CHECK(grb_reader_record(buf, off, &rec) != 0);
			refused = 1;
			memset(u, 0, sizeof(u));
			CHECK_EQ(grb_ctf_metadata_load(m, len, u), 0);
			CHECK(memcmp(u, h.uuid, 16) == 0);
			uuid_of(m, want);
			CHECK(memcmp(u, want, 16) == 0);
		}
		while (grb_reader_record(buf, off, &rec) == 0) {
			uint32_t x;
			char s[4];

			CHECK_EQ(grb_reader_read(buf, rec.payload_off, &x, 4), 0);
			CHECK_U64(x, 40 + n);
			/* NULL was written as "". */
			CHECK_EQ(rec.payload_len, n == 1 ? 5 : 8);
			CHECK_EQ(grb_reader_read(buf, rec.payload_off + 4, s,
						 rec.payload_len - 4), 0);
			CHECK(strcmp(s, n == 1 ? "" : "abc") == 0);
			n++;
			off = rec.next;
		}
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK_EQ(ret, -ENODATA);
	CHECK(refused);
	CHECK_U64(n, 3);
	/* Loaded again: nothing changes. */
	CHECK_EQ(grb_ctf_metadata_load(m, len, NULL), 0);
	free(m);
	CHECK_EQ(grb_reader_release(buf), 0);
	grb_channel_destroy(att);
	rm_dir(shm);
}

int main(void)
{
	ctf_rig_start();
	create_leftovers();
	register_copy_rename();
	register_threads();
	emit_nulls();
	stream_layout();
	destroy_unstopped();
	ended_producer();
	return ctf_rig_done("test_ctf_contract");
}
