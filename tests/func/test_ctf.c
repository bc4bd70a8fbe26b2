/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_ctf.c - the CTF client (grb/ctf.h) read back by real
 * readers: the writer side of tests/func/ctf_check.py.
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
 * test_ctf
 *	the events mode into a scratch directory, removed after: its own
 *	checks (the ids, the counters against the events committed) with
 *	no reader, which is how ctest runs it (func/test_ctf), under
 *	valgrind and the sanitizers too.
 *
 * tests/func/ctf_check.py runs the first two, then babeltrace2 and
 * babeltrace 1.5 on DIR, and compares what they print with OUT.  The
 * contract of grb/ctf.h is checked by the test_ctf_*.c programs:
 * test_ctf_create, test_ctf_register, test_ctf_emit, test_ctf_streams,
 * test_ctf_packets, test_ctf_attach and test_ctf_dead (and
 * test_ctf_contract, test_ctf_crash).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ctf_rig.h"
#include "grb/channel.h"
#include "grb/ctf.h"

/* ---- the expected file ---------------------------------------------- */

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
			w->target = ctf_cpus[(seq / 5 + (uint32_t)w->id) %
					 (uint32_t)ctf_ncpus];
			ctf_pin(w->target);
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
		ctf_pin(ctf_cpus[k % ctf_ncpus]);
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
			ctf_pin(ctf_cpus[(n / 2048 + (uint32_t)w->id) % (uint32_t)ctf_ncpus]);
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

/* ---- main -------------------------------------------------------------- */

/* The events mode as ctest runs it: no reader, nothing left behind. */
static int run_scratch(void)
{
	char dir[300], out[300];

	ctf_rig_start();
	path_of(dir, sizeof(dir), scratch, "trace");
	path_of(out, sizeof(out), scratch, "expected.json");
	CHECK_EQ(run_events(dir, out, 0, 0), 0);
	rm_dir(dir);
	CHECK_EQ(unlink(out), 0);
	return ctf_rig_done("test_ctf");
}

static int usage(void)
{
	fprintf(stderr, "usage: test_ctf\n"
		"       test_ctf events DIR OUT [--per-channel] [--all-ids]\n"
		"       test_ctf discard|overwrite DIR OUT\n");
	return 2;
}

int main(int argc, char **argv)
{
	int per_channel = 0, all_ids = 0;

	if (argc == 1)
		return run_scratch();
	ctf_cpus_init();
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
