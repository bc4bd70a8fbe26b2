/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_ctf_audit.c - promises of grb/ctf.h that the other
 * test_ctf_*.c programs and ctf_check.py leave unchecked, found by an
 * audit of the header:
 *
 *  - a creation racing with another tracer's (a trace or a shared tracer
 *    that appears after grb_ctf_create() looked for one) is refused with
 *    -EEXIST and leaves that tracer's files as they were: its metadata
 *    was removed, or replaced by the loser's;
 *  - the TSDL text written for every field kind and option;
 *  - both clocks read back by babeltrace2 as the wall-clock times of the
 *    emits (frequency, offset, full timestamps after more than 2^27
 *    units), and the compact header only where the bits above the low 27
 *    equal the previous event's;
 *  - a trace holding "grb:padding" events (a writer process died between
 *    reserve and commit) read by babeltrace2 and babeltrace 1.5;
 *  - a consumer's stream files made with grb_ctf_stream_leader(),
 *    grb_ctf_packet_fixup() and grb_ctf_stream_trailer(): babeltrace2
 *    reports exactly the packets and events lost before, between and
 *    after them.
 *
 * The babeltrace checks are skipped where babeltrace2 (or babeltrace) is
 * not installed; the TSC clock where grb_ctf_create() refuses it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
#include "grb/writer.h"

#define MAGIC 0xC1FC1FC1u

/* ---- helpers -------------------------------------------------------- */

static int have(const char *reader)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "%s --version >/dev/null 2>&1", reader);
	return system(cmd) == 0;
}

/* Run @cmd; its standard output into a malloc()ed string. */
static char *run(const char *cmd, int *status)
{
	size_t cap = 1 << 16, len = 0, n;
	char *out = malloc(cap);
	FILE *f = popen(cmd, "r");

	CHECK(out != NULL && f != NULL);
	while ((n = fread(out + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 4096) {
			cap *= 2;
			out = realloc(out, cap);
			CHECK(out != NULL);
		}
	}
	out[len] = 0;
	*status = pclose(f);
	return out;
}

/* How many times @needle is in @hay. */
static unsigned int count_of(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void unlink_in(const char *dir, const char *name)
{
	char p[512];

	path_of(p, sizeof(p), dir, name);
	CHECK_EQ(unlink(p), 0);
}

static int file_is(const char *dir, const char *name, const char *text)
{
	size_t len;
	char *m;
	int same;

	if (!exists(dir, name))
		return 0;
	m = slurp(dir, name, &len);
	same = len == strlen(text) && memcmp(m, text, len) == 0;
	free(m);
	return same;
}

/* ---- a creation racing with another tracer's --------------------------- */

/*
 * grb_ctf_create() first looks for a tracer's metadata with access(2);
 * this one, which the test program's definition puts before libc's for
 * the library too, makes "another tracer" write its metadata at @armed
 * right after the look found none: the window of two processes that
 * create the same tracer at once.
 */
static char armed[512];

int access(const char *path, int mode)
{
	int ret = faccessat(AT_FDCWD, path, mode, 0);

	if (armed[0] && strcmp(path, armed) == 0) {
		FILE *f = fopen(armed, "w");

		CHECK(f != NULL);
		fputs("another tracer's metadata", f);
		CHECK_EQ(fclose(f), 0);
		armed[0] = 0;
	}
	return ret;
}

static void audit_create_race(void)
{
	static const char other[] = "another tracer's metadata";
	struct grb_ctf_attr a = attr_ok();
	char shm[256], dir[256];

	path_of(shm, sizeof(shm), scratch, "race_shm");
	path_of(dir, sizeof(dir), scratch, "race_trace");
	CHECK_EQ(mkdir(shm, 0755), 0);
	CHECK_EQ(mkdir(dir, 0755), 0);

	/* Shared: the other tracer made its buffer file, then its metadata.
	 * This call fails on the buffer file, and removed that metadata. */
	put_file(shm, "c.0", "buffer");
	path_of(armed, sizeof(armed), shm, "c.metadata");
	a.shm_dir = shm;
	CHECK_EQ(try_create(&a), -EEXIST);
	CHECK(!armed[0]);
	CHECK(file_is(shm, "c.metadata", other));
	CHECK(file_is(shm, "c.0", "buffer"));
	CHECK_EQ(dir_entries(shm), 2);

	/* A trace directory: the other tracer's stream file and metadata.
	 * This call replaced the metadata with its own, then failed on the
	 * stream file and removed it. */
	a.shm_dir = NULL;
	a.trace_dir = dir;
	put_file(dir, "c_0", "stream");
	path_of(armed, sizeof(armed), dir, "metadata");
	CHECK_EQ(try_create(&a), -EEXIST);
	CHECK(!armed[0]);
	CHECK(file_is(dir, "metadata", other));
	CHECK(file_is(dir, "c_0", "stream"));
	CHECK_EQ(dir_entries(dir), 2);

	/* The metadata alone, into both directories: the shared metadata
	 * this call wrote first goes again, the other's stays. */
	unlink_in(dir, "c_0");
	unlink_in(dir, "metadata");
	unlink_in(shm, "c.0");
	unlink_in(shm, "c.metadata");
	path_of(armed, sizeof(armed), dir, "metadata");
	a.shm_dir = shm;
	CHECK_EQ(try_create(&a), -EEXIST);
	CHECK(!armed[0]);
	CHECK(file_is(dir, "metadata", other));
	CHECK_EQ(dir_entries(dir), 1);
	CHECK_EQ(dir_entries(shm), 0);

	/* With nothing racing, the same directories take a tracer. */
	unlink_in(dir, "metadata");
	CHECK_EQ(try_create(&a), 0);
	CHECK_EQ(dir_entries(dir), 2);     /* metadata, c_0 */
	CHECK_EQ(dir_entries(shm), 0);     /* destroyed: removed */
	rm_dir(dir);
	CHECK_EQ(rmdir(shm), 0);
}

/* ---- the TSDL of every field kind and option -------------------------- */

static void audit_metadata_text(void)
{
	static const struct grb_ctf_enum_label lab_u64[] = {
		{ "ZERO", 0 }, { "TOP_BIT", INT64_MIN }, { "ALL_ONES", -1 },
	};
	static const struct grb_ctf_enum_label lab_i8[] = {
		{ "MIN", -128 }, { "a b \xc3\xa9", 3 },
	};
	static const struct grb_ctf_field f[] = {
		INT("u8b", 1, 0, 2), INT("i16o", 2, 1, 8), INT("u32d", 4, 0, 0),
		INT("i64h", 8, 1, 16), FLT("f4", 4), FLT("f8", 8), STR("s"),
		ENUM("eu", 8, 0, lab_u64), ENUM("ei", 1, 1, lab_i8),
		INTS("au", 2, 0, 10, 3), FLTS("af", 8, 2),
		ENUMS("ae", 1, 1, lab_i8, 2), INT("event", 4, 0, 10),
	};
	static const char *const want[] = {
		"\t\tinteger { size = 8; align = 8; signed = false; "
		"base = 2; } _u8b;\n",
		"\t\tinteger { size = 16; align = 8; signed = true; "
		"base = 8; } _i16o;\n",
		"\t\tinteger { size = 32; align = 8; signed = false; "
		"base = 10; } _u32d;\n",
		"\t\tinteger { size = 64; align = 8; signed = true; "
		"base = 16; } _i64h;\n",
		"\t\tfloating_point { exp_dig = 8; mant_dig = 24; "
		"byte_order = native; align = 8; } _f4;\n",
		"\t\tfloating_point { exp_dig = 11; mant_dig = 53; "
		"byte_order = native; align = 8; } _f8;\n",
		"\t\tstring _s;\n",
		"\t\tenum : integer { size = 64; align = 8; signed = false; "
		"base = 10; } { \"ZERO\" = 0, "
		"\"TOP_BIT\" = 9223372036854775808, "
		"\"ALL_ONES\" = 18446744073709551615 } _eu;\n",
		"\t\tenum : integer { size = 8; align = 8; signed = true; "
		"base = 10; } { \"MIN\" = -128, \"a b \xc3\xa9\" = 3 } _ei;\n",
		"\t\tinteger { size = 16; align = 8; signed = false; "
		"base = 10; } _au[3];\n",
		"\t\tfloating_point { exp_dig = 11; mant_dig = 53; "
		"byte_order = native; align = 8; } _af[2];\n",
		"\t\tenum : integer { size = 8; align = 8; signed = true; "
		"base = 10; } { \"MIN\" = -128, \"a b \xc3\xa9\" = 3 } "
		"_ae[2];\n",
		"\t\tinteger { size = 32; align = 8; signed = false; "
		"base = 10; } _event;\n",
		"event {\n\tname = \"all\";\n\tid = 0;\n\tstream_id = 0;\n"
		"\tloglevel = 14;\n\tfields := struct {\n",
		"event {\n\tname = \"no level\";\n\tid = 1;\n\tstream_id = 0;\n"
		"\tfields := struct {\n\t};\n};\n",
		"event {\n\tname = \"level 0\";\n\tid = 2;\n\tstream_id = 0;\n"
		"\tloglevel = 0;\n",
		"/* grb-layout 0 u1,i2,u4,i8,f4,f8,s,u8,i1,u2x3,f8x2,i1x2,"
		"u4 */\n",
		"/* grb-layout 1 - */\n",
	};
	struct grb_ctf_event_desc d = { "all", 14, f, ARRAY_SIZE(f) };
	struct grb_ctf_event_desc d1 = { "no level", -1, NULL, 0 };
	struct grb_ctf_event_desc d2 = { "level 0", 0, NULL, 0 };
	const struct grb_ctf_event *ev, *ev1, *ev2;
	struct grb_ctf_attr a = attr_ok();
	uint16_t au[3] = { 1, 2, 65535 };
	double af[2] = { 0.5, -2.0 };
	int8_t ae[2] = { -128, 3 };
	union grb_ctf_value v[ARRAY_SIZE(f)];
	struct grb_ctf *t;
	char dir[256], cmd[600], *m, *out;
	size_t len;
	int status;

	path_of(dir, sizeof(dir), scratch, "tsdl");
	a.trace_dir = dir;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d1, &ev1), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d2, &ev2), 0);
	m = slurp(dir, "metadata", &len);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		if (!strstr(m, want[i]))
			fprintf(stderr, "metadata lacks: %s", want[i]);
		CHECK(strstr(m, want[i]) != NULL);
	}
	/* Id 30 is the padding event's, once; the CTF 1.8 mark is first. */
	CHECK_EQ(count_of(m, "\tid = 30;\n"), 1);
	CHECK(strncmp(m, "/* CTF 1.8", 10) == 0);
	free(m);

	/* The unsigned 8-byte labels from 2^63 up name those values. */
	memset(v, 0, sizeof(v));
	v[6].s = "text";
	v[7].u = UINT64_C(1) << 63;
	v[8].i = -128;
	v[9].array = au;
	v[10].array = af;
	v[11].array = ae;
	CHECK_EQ(grb_ctf_emit(t, ev, v), 0);
	v[7].u = UINT64_MAX;
	v[8].i = 3;
	CHECK_EQ(grb_ctf_emit(t, ev, v), 0);
	CHECK_EQ(grb_ctf_emit(t, ev1, NULL), 0);
	CHECK_EQ(grb_ctf_stop(t), 0);
	grb_ctf_destroy(t);
	if (have("babeltrace2")) {
		snprintf(cmd, sizeof(cmd), "babeltrace2 '%s'", dir);
		out = run(cmd, &status);
		CHECK_EQ(status, 0);
		CHECK_EQ(count_of(out, "\n"), 3);
		CHECK_EQ(count_of(out, "\"TOP_BIT\" : container = "
				  "9223372036854775808"), 1);
		CHECK_EQ(count_of(out, "\"ALL_ONES\" : container = "
				  "18446744073709551615"), 1);
		CHECK_EQ(count_of(out, "ei = ( \"MIN\" : container = -128 )"),
			 1);
		CHECK_EQ(count_of(out, "ei = ( \"a b \xc3\xa9\" : "
				  "container = 3 )"), 1);
		CHECK_EQ(count_of(out, "au = [ [0] = 1, [1] = 2, "
				  "[2] = 65535 ]"), 2);
		CHECK_EQ(count_of(out, "event = 0 }"), 2);
		free(out);
	}
	rm_dir(dir);
}

/* ---- both clocks, read back as wall-clock times ----------------------- */

#define CLOCK_EVENTS 12

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The "freq = N;" of the clock block of metadata @m. */
static uint64_t freq_of(const char *m)
{
	const char *p = strstr(m, "\tfreq = ");

	CHECK(p != NULL);
	return strtoull(p + 8, NULL, 10);
}

/*
 * The stream file's events, one packet at a time: a compact header only
 * where the 27 bits go on from the previous event's (the bits above them
 * equal), an extended one first in each packet, and after every gap of
 * more than 2^27 clock units (told by the payloads, the realtime of each
 * emit, of @unit_ns nanoseconds each).  Returns the events.
 */
static unsigned int check_headers(const char *dir, double unit_ns)
{
	struct packet_head h;
	uint64_t prev_low = 0, prev_rt = 0;
	unsigned int n = 0;
	size_t len, off;
	char *m = slurp(dir, "c_0", &len);

	for (off = 0; off < len; off += h.packet_size / 8) {
		size_t p, end;
		int first = 1;

		CHECK(len - off >= sizeof(h));
		memcpy(&h, m + off, sizeof(h));
		CHECK_EQ(h.magic, MAGIC);
		end = off + h.packet_size / 8;
		for (p = off + sizeof(h); p < end; first = 0, n++) {
			uint64_t rt, ts;
			uint32_t w;

			if (((unsigned char)m[p] & 31u) == 31u) {
				memcpy(&ts, m + p + 5, sizeof(ts));
				prev_low = ts & 0x7ffffffu;
				p += 13;
				memcpy(&rt, m + p, sizeof(rt));
			} else {
				memcpy(&w, m + p, sizeof(w));
				CHECK(!first);
				CHECK((w >> 5) >= prev_low);
				prev_low = w >> 5;
				p += 4;
				memcpy(&rt, m + p, sizeof(rt));
				CHECK((double)(rt - prev_rt) <
				      unit_ns * (1u << 27));
			}
			prev_rt = rt;
			p += sizeof(rt);
		}
		CHECK_U64(p, end);
	}
	CHECK_U64(off, len);
	free(m);
	return n;
}

/*
 * What babeltrace2 prints of each event: its time, in seconds since the
 * Epoch, between the realtime read before and after its emit (@rt0,
 * @rt1; within 3 ms, the clocks' calibration).  A full timestamp missed
 * after a gap puts an event 2^27 units (tens of milliseconds at least)
 * early.
 */
static void check_times(const char *dir, const uint64_t *rt0,
			const uint64_t *rt1)
{
	const uint64_t tol = 3000000;
	unsigned int n = 0;
	char cmd[600], *out, *line;
	int status;

	snprintf(cmd, sizeof(cmd), "babeltrace2 --clock-seconds '%s'", dir);
	out = run(cmd, &status);
	CHECK_EQ(status, 0);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), n++) {
		unsigned long long s, ns, rt;
		const char *p = strstr(line, "rt = ");
		unsigned int i;

		CHECK(sscanf(line, "[%llu.%9llu]", &s, &ns) == 2 && p);
		rt = strtoull(p + 5, NULL, 10);
		for (i = 0; i < CLOCK_EVENTS && rt0[i] != rt; i++)
			;
		CHECK(i < CLOCK_EVENTS);
		if (s * 1000000000u + ns + tol < rt0[i] ||
		    s * 1000000000u + ns > rt1[i] + tol)
			fprintf(stderr, "event %u at %llu.%09llu, emitted "
				"between %llu and %llu\n", i, s, ns,
				(unsigned long long)rt0[i],
				(unsigned long long)rt1[i]);
		CHECK(s * 1000000000u + ns + tol >= rt0[i]);
		CHECK(s * 1000000000u + ns <= rt1[i] + tol);
	}
	CHECK_EQ(n, CLOCK_EVENTS);
	free(out);
}

/*
 * Events 0.6 and 1.5 times 2^27 clock units apart, alternately, all in
 * one packet (no flush while the tracer runs): the short gaps cross a
 * multiple of 2^27 more often than not, the long ones always.
 */
static void audit_clock(enum grb_ctf_clock clock)
{
	static const struct grb_ctf_field f[] = { INT("rt", 8, 0, 10) };
	struct grb_ctf_event_desc d = { "t", -1, f, 1 };
	uint64_t rt0[CLOCK_EVENTS], rt1[CLOCK_EVENTS];
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	struct grb_ctf *t;
	char dir[256], *m;
	double unit_ns;
	size_t len;
	int ret;

	path_of(dir, sizeof(dir), scratch, "clock");
	a.trace_dir = dir;
	a.clock = clock;
	a.subbuf_size = 65536;
	a.flush_period_ns = 3600000000000u;
	ret = grb_ctf_create(&a, &t);
	if (clock == GRB_CTF_CLOCK_TSC && ret == -ENOTSUP) {
		printf("test_ctf_audit: no invariant TSC, its clock skipped\n");
		return;
	}
	CHECK_EQ(ret, 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	m = slurp(dir, "metadata", &len);
	unit_ns = 1e9 / (double)freq_of(m);
	free(m);
	for (unsigned int i = 0; i < CLOCK_EVENTS; i++) {
		if (i)
			sleep_ns((uint64_t)(unit_ns * (1u << 27) *
					    (i % 2 ? 0.6 : 1.5)));
		rt0[i] = realtime_ns();
		CHECK_EQ(grb_ctf_emit_raw(t, ev, &rt0[i], sizeof(rt0[i])), 0);
		rt1[i] = realtime_ns();
	}
	CHECK_EQ(grb_ctf_stop(t), 0);
	grb_ctf_destroy(t);
	CHECK_EQ(check_headers(dir, unit_ns), CLOCK_EVENTS);
	if (have("babeltrace2"))
		check_times(dir, rt0, rt1);
	rm_dir(dir);
}

/* ---- padding events, read by babeltrace ------------------------------- */

/* The dying writer: commits events 100 to 104, then holds three
 * reservations (written in part) until it is killed. */
static void dying_writer(struct grb_ctf *t, const struct grb_ctf_event *ev,
			 const struct grb_config *cfg, _Atomic int *ready)
{
	const struct grb_ctf_event *evp = ev;
	struct grb_ctx ctx[3];

	for (uint64_t v = 100; v < 105; v++)
		if (grb_ctf_emit_raw(t, ev, &v, sizeof(v)))
			_exit(2);
	for (unsigned int i = 0; i < ARRAY_SIZE(ctx); i++) {
		grb_ctx_init(&ctx[i], sizeof(uint64_t), 1);
		/* The CTF client's header size reads the class through a
		 * pointer to it (clients/ctf/ctf.c). */
		ctx[i].client_priv = (void *)(uintptr_t)&evp;
		if (grb_reserve(cfg, grb_ctf_channel(t), &ctx[i]))
			_exit(3);
		grb_write_fill(cfg, &ctx[i], 0xee, 3);
	}
	atomic_store(ready, 1);
	for (;;)
		pause();
}

/*
 * A shared tracer with a trace directory; a writer process dies holding
 * reservations between committed events; grb_ctf_stop() completes its
 * sub-buffer with padding.  Each reader prints every committed event
 * once and the padding as "grb:padding" events.
 */
static void audit_padding(void)
{
	static const char *const readers[] = { "babeltrace2", "babeltrace" };
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	struct grb_ctf_stats st;
	_Atomic int *ready;
	struct grb_ctf *t;
	char shm[256], dir[256], cmd[600], *out;
	int status;
	pid_t pid;

	path_of(shm, sizeof(shm), scratch, "pad_shm");
	path_of(dir, sizeof(dir), scratch, "pad_trace");
	CHECK_EQ(mkdir(shm, 0755), 0);
	a.shm_dir = shm;
	a.trace_dir = dir;
	a.flush_period_ns = 3600000000000u;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	ev = reg_u64(t);
	ready = mmap(NULL, sizeof(*ready), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(ready != MAP_FAILED);
	for (uint64_t v = 0; v < 3; v++)
		CHECK_EQ(grb_ctf_emit_raw(t, ev, &v, sizeof(v)), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		dying_writer(t, ev, grb_ctf_config(a.alloc, a.mode, a.clock),
			     ready);
	for (int i = 0; i < 10000 && !atomic_load(ready); i++)
		usleep(1000);
	CHECK(atomic_load(ready));
	for (uint64_t v = 3; v < 6; v++)
		CHECK_EQ(grb_ctf_emit_raw(t, ev, &v, sizeof(v)), 0);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK_U64(st.events, 11);
	CHECK_U64(st.events_dead, 3);
	grb_ctf_destroy(t);
	CHECK_EQ(rmdir(shm), 0);
	munmap(ready, sizeof(*ready));

	for (size_t r = 0; r < ARRAY_SIZE(readers); r++) {
		if (!have(readers[r]))
			continue;
		snprintf(cmd, sizeof(cmd), "%s '%s'", readers[r], dir);
		out = run(cmd, &status);
		if (status != 0 || count_of(out, " n: ") != 11)
			fprintf(stderr, "%s printed:\n%s", readers[r], out);
		CHECK_EQ(status, 0);
		CHECK_EQ(count_of(out, " n: "), 11);
		for (unsigned int v = 0; v < 105; v++) {
			char want[32];

			if (v == 6)
				v = 100;
			snprintf(want, sizeof(want), "{ n = %u }\n", v);
			CHECK_EQ(count_of(out, want), 1);
		}
		CHECK(count_of(out, " grb:padding: ") >= 1);
		CHECK_EQ(count_of(out, " grb:padding: "),
			 count_of(out, "{ len = "));
		free(out);
	}
	rm_dir(dir);
}

/* ---- a consumer's stream files, and what babeltrace2 reports --------- */

struct reported {
	uint64_t events, packets, may;
};

/* The losses babeltrace2 reports on its standard error, in @err. */
static void parse_losses(const char *err, struct reported *r)
{
	static const char key[] = "Tracer discarded ";
	const char *p;

	memset(r, 0, sizeof(*r));
	for (p = err; (p = strstr(p, key)); ) {
		char *q;
		uint64_t n = strtoull(p + sizeof(key) - 1, &q, 10);

		if (strncmp(q, " event", 6) == 0)
			r->events += n;
		else if (strncmp(q, " packet", 7) == 0)
			r->packets += n;
		else
			CHECK(0);
		p = q;
	}
	r->may = count_of(err, "may have discarded");
}

/* The consumer: the packets of @shm's buffer into @dir/c_0, behind a
 * leader and before a trailer when they are needed, as grb-consumerd
 * writes them.  Returns the packets lost before and between them. */
static uint64_t consume(const struct grb_ctf_attr *a, const char *shm,
			const char *dir, int *leader, int *trailer)
{
	unsigned char last[GRB_CTF_PACKET_HEADER_SIZE];
	unsigned char extra[GRB_CTF_PACKET_HEADER_SIZE];
	struct grb_ctf_stream_state s;
	struct grb_reader_subbuf sb;
	struct grb_channel *att;
	struct grb_buf_stats bs;
	struct packet_head h;
	struct grb_buf *buf;
	uint64_t lost = 0, gap, next = 0;
	char path[512];
	FILE *f;
	int ret;

	CHECK_EQ(grb_channel_attach_dir(grb_ctf_config(a->alloc, a->mode,
						       a->clock),
					GRB_CTF_CLIENT, shm, "c",
					GRB_ATTACH_READER, &att), 0);
	buf = grb_channel_buf(att, 0);
	CHECK_EQ(grb_reader_open(buf), 0);
	path_of(path, sizeof(path), dir, "c_0");
	f = fopen(path, "wb");
	CHECK(f != NULL);
	memset(&s, 0, sizeof(s));
	*leader = *trailer = 0;
	while ((ret = grb_reader_get_next(buf)) == 0) {
		CHECK_EQ(grb_reader_held(buf, &sb), 0);
		memcpy(&h, sb.data, sizeof(h));
		/* Counted from the sequence numbers alone. */
		lost += h.packet_seq_num - next;
		next = h.packet_seq_num + 1;
		ret = grb_ctf_stream_leader(sb.data, &s, extra);
		CHECK(ret == 0 || ret == 1);
		if (ret == 1) {
			CHECK_EQ(fwrite(extra, sizeof(extra), 1, f), 1);
			*leader = 1;
		}
		CHECK_EQ(grb_ctf_packet_fixup((void *)(uintptr_t)sb.data,
					      sb.data_size, &s, &gap), 0);
		CHECK_EQ(fwrite(sb.data, sb.data_size, 1, f), 1);
		memcpy(last, sb.data, sizeof(last));
		CHECK_EQ(grb_reader_put_next(buf), 0);
	}
	CHECK_EQ(ret, -ENODATA);
	CHECK_EQ(grb_buf_get_stats(buf, &bs), 0);
	ret = grb_ctf_stream_trailer(last, &s, bs.lost_full + bs.lost_wrap +
				     bs.lost_big + bs.lost_nesting, extra);
	CHECK(ret == 0 || ret == 1);
	if (ret == 1) {
		CHECK_EQ(fwrite(extra, sizeof(extra), 1, f), 1);
		*trailer = 1;
	}
	CHECK_EQ(fclose(f), 0);
	CHECK_EQ(grb_reader_release(buf), 0);
	grb_channel_destroy(att);
	/* The leader stands for packet 0, the empty one of creation. */
	return *leader ? lost - 1 : lost;
}

/*
 * A shared tracer, read once it stopped.  Overwrite mode: its first
 * packets were overwritten, and an event too big was refused before
 * them (a leader is needed).  Discard mode: the buffer filled, and
 * events were refused after its last packet closed (a trailer is
 * needed).  babeltrace2 must report the packets and events lost, no
 * more, and never that it "may have" lost some.
 */
static void audit_consumer(enum grb_mode mode)
{
	static const struct grb_ctf_field f[] = { STR("s") };
	struct grb_ctf_event_desc d = { "s", -1, f, 1 };
	struct grb_ctf_attr a = attr_ok();
	const struct grb_ctf_event *ev;
	struct grb_ctf_stats st;
	union grb_ctf_value v[1];
	struct reported rep;
	struct grb_ctf *t;
	char shm[256], dir[256], cmd[1200], err[512], *out, *m, *e;
	uint64_t lost;
	size_t len;
	int status, leader, trailer;

	path_of(shm, sizeof(shm), scratch, "cons_shm");
	path_of(dir, sizeof(dir), scratch, "cons_trace");
	path_of(err, sizeof(err), scratch, "cons_err");
	CHECK_EQ(mkdir(shm, 0755), 0);
	CHECK_EQ(mkdir(dir, 0755), 0);
	a.shm_dir = shm;
	a.mode = mode;
	CHECK_EQ(grb_ctf_create(&a, &t), 0);
	CHECK_EQ(grb_ctf_event_register(t, &d, &ev), 0);
	v[0].s = m = malloc(a.subbuf_size + 1);
	CHECK(m != NULL);
	memset(m, 'x', a.subbuf_size);
	m[a.subbuf_size] = 0;
	CHECK_EQ(grb_ctf_emit(t, ev, v), -ENOSPC);
	v[0].s = "0123456789";
	for (int i = 0; i < 2000; i++) {
		int ret = grb_ctf_emit(t, ev, v);

		CHECK(ret == 0 || (mode == GRB_MODE_DISCARD &&
				   ret == -ENOBUFS));
	}
	if (mode == GRB_MODE_DISCARD) {
		CHECK_EQ(grb_channel_flush(grb_ctf_channel(t),
					   GRB_FLUSH_ACTIVE), 0);
		for (int i = 0; i < 50; i++)
			CHECK_EQ(grb_ctf_emit(t, ev, v), -ENOBUFS);
	}
	free(m);
	CHECK_EQ(grb_ctf_stop(t), 0);
	CHECK_EQ(grb_ctf_get_stats(t, &st), 0);
	CHECK(st.events_discarded > (mode == GRB_MODE_DISCARD ? 50u : 0u));
	CHECK(mode == GRB_MODE_DISCARD || st.events_overwritten > 0);

	lost = consume(&a, shm, dir, &leader, &trailer);
	CHECK_EQ(leader, mode == GRB_MODE_OVERWRITE);
	CHECK_EQ(trailer, mode == GRB_MODE_DISCARD);
	CHECK(mode == GRB_MODE_DISCARD ? lost == 0 : lost > 0);
	m = slurp(shm, "c.metadata", &len);
	grb_ctf_destroy(t);
	CHECK_EQ(rmdir(shm), 0);
	put_file(dir, "metadata", m);
	free(m);
	if (have("babeltrace2")) {
		snprintf(cmd, sizeof(cmd), "babeltrace2 '%s' 2>'%s'", dir,
			 err);
		out = run(cmd, &status);
		CHECK_EQ(status, 0);
		e = slurp(scratch, "cons_err", &len);
		parse_losses(e, &rep);
		if (rep.events != st.events_discarded || rep.packets != lost ||
		    rep.may)
			fprintf(stderr, "babeltrace2 reported %llu events, "
				"%llu packets; grb refused %llu, lost %llu "
				"packets:\n%s",
				(unsigned long long)rep.events,
				(unsigned long long)rep.packets,
				(unsigned long long)st.events_discarded,
				(unsigned long long)lost, e);
		CHECK_U64(rep.events, st.events_discarded);
		CHECK_U64(rep.packets, lost);
		CHECK_U64(rep.may, 0);
		CHECK_U64(count_of(out, "\n"),
			  st.events - st.events_overwritten);
		free(e);
		free(out);
		CHECK_EQ(unlink(err), 0);
	}
	rm_dir(dir);
}

int main(void)
{
	ctf_rig_start();
	audit_create_race();
	audit_metadata_text();
	audit_consumer(GRB_MODE_OVERWRITE);
	audit_consumer(GRB_MODE_DISCARD);
	audit_padding();
	audit_clock(GRB_CTF_CLOCK_MONOTONIC);
	audit_clock(GRB_CTF_CLOCK_TSC);
	return ctf_rig_done("test_ctf_audit");
}
