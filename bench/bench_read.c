/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_read.c - how fast records and sub-buffers come out of grb,
 * each figure beside a baseline measured in the same run:
 *
 *  rates   records out of a pre-filled, finalized channel (1 MiB per CPU,
 *          128 KiB sub-buffers) through the buffer iterator in discard and
 *          overwrite mode, the callback loop and the channel merge, against
 *          a hand-written walk of the same sub-buffers (get_next, this
 *          client's decoder inline, put_next);
 *  output  whole sub-buffers to a file on tmpfs with grb_buf_write() and
 *          grb_buf_splice(), against write(2) by hand and memcpy of the
 *          same bytes (the floor).
 *
 * The buffers are filled by writers pinned as everywhere in the benchmark
 * and read on the reader CPU; filling is not timed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "grb/channel.h"
#include "grb/iter.h"
#include "grb/output.h"
#include "grb/reader.h"

#include "bench.h"
#include "read_client.h"
#include "report.h"
#include "util.h"

#define RD_SUBBUF BENCH_SCALE_SUBBUF

/* Write from the calling thread until the buffer refuses (discard mode)
 * or @n records are written.  Return: records written. */
static uint64_t fill(const struct grb_config *cfg, struct grb_channel *chan,
		     uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		if (rd_write(cfg, chan, 0) != 0)
			break;
	return i;
}

/* Records a 1 MiB buffer holds and then some: discard mode stops at the
 * first refusal, overwrite mode goes round twice. */
#define FILL_MAX (2 * BENCH_BUF_BYTES / 8)

struct fill_thread {
	const struct grb_config *cfg;
	struct grb_channel *chan;
	pthread_barrier_t *bar;
	int cpu;
	uint64_t written;
};

static void *fill_main(void *p)
{
	struct fill_thread *t = (struct fill_thread *)p;

	bench_pin_self(t->cpu);
	pthread_barrier_wait(t->bar);
	t->written = fill(t->cfg, t->chan, FILL_MAX);
	return NULL;
}

#define FILL_THREADS 64

/* Every CPU of the run (up to FILL_THREADS) fills its own buffer at the
 * same time, so that timestamps interleave across buffers as in a trace. */
static uint64_t fill_all(const struct grb_config *cfg,
			 struct grb_channel *chan)
{
	struct fill_thread t[FILL_THREADS];
	pthread_t tid[FILL_THREADS];
	pthread_barrier_t bar;
	int i, n = bench_nr_cpus() < FILL_THREADS ? bench_nr_cpus() :
		   FILL_THREADS;
	uint64_t total = 0;

	pthread_barrier_init(&bar, NULL, (unsigned int)n);
	for (i = 0; i < n; i++) {
		t[i] = (struct fill_thread){ cfg, chan, &bar,
					     bench_cpu_for_writer(i), 0 };
		if (pthread_create(&tid[i], NULL, fill_main, &t[i]) != 0) {
			fprintf(stderr, "grb_bench: cannot start a writer\n");
			exit(1);
		}
	}
	for (i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		total += t[i].written;
	}
	pthread_barrier_destroy(&bar);
	return total;
}

/* The buffer holding the most records: the writer's CPU's, also under
 * valgrind, where the CPU id comes from sched_getcpu(). */
static struct grb_buf *fullest_buf(struct grb_channel *chan)
{
	struct grb_buf *best = grb_channel_buf(chan, 0);
	struct grb_buf_stats st;
	uint64_t most = 0;
	unsigned int i;

	for (i = 0; i < grb_channel_nr_bufs(chan); i++) {
		grb_buf_get_stats(grb_channel_buf(chan, i), &st);
		if (st.written > most) {
			most = st.written;
			best = grb_channel_buf(chan, i);
		}
	}
	return best;
}

/* What a drain saw: records, bad payloads, timestamps out of order. */
struct drain {
	uint64_t limit;   /* stop after this many records */
	uint64_t n, bad, late, prev_ts, ns;
};

static void check_rec(struct drain *d, const struct grb_iter_record *r)
{
	uint32_t cpu;

	memcpy(&cpu, r->payload, sizeof(cpu));
	d->bad += r->payload_len != sizeof(cpu) || cpu >= CPU_SETSIZE;
	d->late += r->timestamp < d->prev_ts;
	d->prev_ts = r->timestamp;
	d->n++;
}

static int drain_cb(void *arg, const struct grb_iter_record *r)
{
	struct drain *d = (struct drain *)arg;

	check_rec(d, r);
	return d->n == d->limit;
}

/*
 * The drains, out of line and global: callgrind's --toggle-collect
 * counts the instructions of one of them (section 4).
 */
BENCH_NOINLINE void bench_read_drain_raw(struct grb_buf *buf,
					 struct drain *d);
BENCH_NOINLINE void bench_read_drain_buf(struct grb_buf_iter *it,
					 struct drain *d);
BENCH_NOINLINE void bench_read_drain_chan(struct grb_chan_iter *it,
					  struct drain *d);

/* The baseline: the reader protocol and this client's decoder inline. */
BENCH_NOINLINE void bench_read_drain_raw(struct grb_buf *buf,
					 struct drain *d)
{
	struct grb_reader_subbuf sb;
	struct grb_record rec;
	uint32_t cpu;

	while (d->n < d->limit && grb_reader_get_next(buf) == 0) {
		size_t off = grb_reader_first_record(buf);

		grb_reader_held(buf, &sb);
		while (off < sb.data_size && d->n < d->limit &&
		       rd_decode(&cfg_cpu_dc, sb.data, off, sb.data_size,
				 &rec) == 0) {
			memcpy(&cpu, (const char *)sb.data + rec.payload_off,
			       sizeof(cpu));
			d->bad += rec.payload_len != sizeof(cpu) ||
				  cpu >= CPU_SETSIZE;
			d->n++;
			off = rec.next;
		}
		grb_reader_put_next(buf);
	}
}

BENCH_NOINLINE void bench_read_drain_buf(struct grb_buf_iter *it,
					 struct drain *d)
{
	struct grb_iter_record r;

	while (d->n < d->limit && grb_buf_iter_next(it, &r) == 0)
		check_rec(d, &r);
}

BENCH_NOINLINE void bench_read_drain_chan(struct grb_chan_iter *it,
					  struct drain *d)
{
	struct grb_iter_record r;

	while (d->n < d->limit && grb_chan_iter_next(it, &r) == 0)
		check_rec(d, &r);
}

enum rate_kind {
	RATE_RAW, RATE_BUF_DC, RATE_BUF_OW, RATE_BUF_CB, RATE_CHAN,
	RATE_CHAN_CB, NR_RATES
};

static const struct {
	const char *id, *label;
} rates[NR_RATES] = {
	{ "raw", "get_next + inline decode + put_next (baseline)" },
	{ "buf-dc", "grb_buf_iter_next, discard" },
	{ "buf-ow", "grb_buf_iter_next, overwrite" },
	{ "buf-cb", "grb_buf_iter_consume (callback), discard" },
	{ "chan", "grb_chan_iter_next, merged over all CPUs" },
	{ "chan-cb", "grb_chan_iter_consume (callback), merged" },
};

/* A channel filled for one kind of drain, finalized, read on the reader
 * CPU. */
struct reading {
	enum rate_kind kind;
	struct grb_channel *chan;
	struct grb_buf *buf;
	struct grb_buf_iter *bi;
	struct grb_chan_iter *ci;
};

static int merged(enum rate_kind kind)
{
	return kind == RATE_CHAN || kind == RATE_CHAN_CB;
}

static void reading_open(struct reading *rd, enum rate_kind kind)
{
	const struct grb_config *cfg = kind == RATE_BUF_OW ? &cfg_cpu_ow :
				       &cfg_cpu_dc;
	int ret;

	memset(rd, 0, sizeof(*rd));
	rd->kind = kind;
	rd->chan = rd_chan(cfg, RD_SUBBUF);
	if (merged(kind))
		fill_all(cfg, rd->chan);
	else
		fill(cfg, rd->chan, FILL_MAX);
	grb_channel_finalize(rd->chan);
	rd->buf = fullest_buf(rd->chan);
	bench_pin_self(bench_cpu_for_reader());
	if (merged(kind))
		ret = grb_chan_iter_create(rd->chan, GRB_ITER_CONSUME, &rd->ci);
	else if (kind == RATE_RAW)
		ret = grb_reader_open(rd->buf);
	else
		ret = grb_buf_iter_create(rd->buf, GRB_ITER_CONSUME, &rd->bi);
	if (ret) {
		fprintf(stderr, "grb_bench: read: %s\n", grb_strerror(ret));
		exit(1);
	}
}

static void reading_drain(struct reading *rd, struct drain *d)
{
	uint64_t cnt;

	switch (rd->kind) {
	case RATE_RAW:
		bench_read_drain_raw(rd->buf, d);
		break;
	case RATE_BUF_DC:
	case RATE_BUF_OW:
		bench_read_drain_buf(rd->bi, d);
		break;
	case RATE_BUF_CB:
		while (d->n < d->limit &&
		       grb_buf_iter_consume(rd->bi, drain_cb, d, &cnt) == 0 &&
		       cnt)
			;
		break;
	case RATE_CHAN:
		bench_read_drain_chan(rd->ci, d);
		break;
	default:
		while (d->n < d->limit &&
		       grb_chan_iter_consume(rd->ci, drain_cb, d, &cnt) == 0 &&
		       cnt)
			;
		break;
	}
}

static void reading_close(struct reading *rd)
{
	if (rd->kind == RATE_RAW)
		grb_reader_release(rd->buf);
	grb_buf_iter_destroy(rd->bi);
	grb_chan_iter_destroy(rd->ci);
	bench_pin_self(bench_cpu_for_writer(0));
	grb_channel_destroy(rd->chan);
}

/*
 * @rounds timed drains of a whole filled channel, summed; the fills are
 * not timed.  Several per run, so that one run is tens of milliseconds.
 */
static void rate_once(enum rate_kind kind, unsigned int rounds,
		      struct drain *d)
{
	struct reading rd;
	unsigned int i;
	uint64_t t0;

	memset(d, 0, sizeof(*d));
	d->limit = UINT64_MAX;
	for (i = 0; i < rounds; i++) {
		reading_open(&rd, kind);
		d->prev_ts = 0;
		t0 = bench_now_ns();
		reading_drain(&rd, d);
		d->ns += bench_now_ns() - t0;
		reading_close(&rd);
	}
}

static void rate_rows(const struct bench_opts *o, enum rate_kind kind,
		      const double *ns, const double *mps, uint64_t n,
		      uint64_t bad, uint64_t late)
{
	struct bench_stat st;
	struct bench_row *row;
	int m;

	for (m = 0; m < 2; m++) {
		row = report_add("rd/rate/%s/%s", rates[kind].id,
				 m ? "ns" : "rate");
		report_describe(row, "read", "grb", m ? "ns_per_record" :
				"records_per_s", m ? "ns/record" : "records/s",
				RD_SUBBUF, merged(kind) ? bench_nr_cpus() : 1,
				1);
		snprintf(row->config, sizeof(row->config), "%s; 1 MiB per "
			 "CPU, filled then finalized; reader on CPU %d",
			 rates[kind].label, bench_cpu_for_reader());
		snprintf(row->note, sizeof(row->note), "%llu records per run "
			 "(last run, %u fills), %llu bad payloads, %llu out "
			 "of time order, over %d runs", (unsigned long long)n,
			 o->read_rounds,
			 (unsigned long long)bad, (unsigned long long)late,
			 o->runs);
		bench_stat_of(m ? ns : mps, o->runs, &st);
		report_set(row, &st);
	}
}

/* Every kind once per run, in turn, so that noise spreads over all. */
static void bench_read_rates(const struct bench_opts *o)
{
	double ns[NR_RATES][64], mps[NR_RATES][64];
	uint64_t bad[NR_RATES] = { 0 }, late[NR_RATES] = { 0 };
	uint64_t n[NR_RATES] = { 0 };
	struct drain d;
	int k, i;

	for (k = 0; k < o->runs; k++)
		for (i = 0; i < NR_RATES; i++) {
			rate_once((enum rate_kind)i, o->read_rounds, &d);
			ns[i][k] = d.n ? (double)d.ns / (double)d.n : NAN;
			mps[i][k] = d.ns ? (double)d.n * 1e9 / (double)d.ns :
				    NAN;
			n[i] = d.n;
			bad[i] += d.bad;
			late[i] += merged((enum rate_kind)i) ? d.late : 0;
		}
	for (i = 0; i < NR_RATES; i++)
		rate_rows(o, (enum rate_kind)i, ns[i], mps[i], n[i], bad[i],
			  late[i]);
}

/*
 * Output: whole sub-buffers of a per-channel discard buffer to a file on
 * tmpfs.  Each round fills the buffer (not timed), closes the open
 * sub-buffer, and moves every delivered one out on the reader CPU (timed);
 * a run is out_rounds rounds appended to one file, truncated before the
 * run, so the file system allocates its pages as a trace file's would.
 */
enum out_kind { OUT_MEMCPY, OUT_WRITE2, OUT_WRITE, OUT_SPLICE, NR_OUTS };

static const struct {
	const char *id, *label;
} outs[NR_OUTS] = {
	{ "memcpy", "memcpy of the same bytes (floor)" },
	{ "write2", "get_next, write(2), put_next by hand" },
	{ "write", "grb_buf_write" },
	{ "splice", "grb_buf_splice (vmsplice + splice)" },
};

#define OUT_PATH_FMT "/dev/shm/grb-bench-read.%d"

struct out_ctx {
	int fd;
	int pipe_fds[2];
	unsigned char *dst;      /* the memcpy floor's destination */
	size_t dst_off, dst_cap;
	uint64_t bytes, ns, errors;
};

/* Move every delivered sub-buffer out by hand: memcpy or write(2). */
static void out_by_hand(struct grb_buf *buf, struct out_ctx *c, int copy)
{
	struct grb_reader_subbuf sb;

	while (grb_reader_get_next(buf) == 0) {
		size_t done = 0;

		grb_reader_held(buf, &sb);
		if (copy && c->dst_off + sb.data_size <= c->dst_cap) {
			memcpy(c->dst + c->dst_off, sb.data, sb.data_size);
			c->dst_off += sb.data_size;
			done = sb.data_size;
		}
		while (!copy && done < sb.data_size) {
			ssize_t w = write(c->fd, (const char *)sb.data + done,
					  sb.data_size - done);

			if (w <= 0)
				break;
			done += (size_t)w;
		}
		c->errors += done != sb.data_size;
		c->bytes += done;
		grb_reader_put_next(buf);
	}
}

static void out_round(enum out_kind kind, struct grb_channel *chan,
		      struct out_ctx *c)
{
	struct grb_buf *buf = grb_channel_buf(chan, 0);
	uint64_t t0, bytes = 0;
	int ret = 0;

	fill(&cfg_one_dc, chan, FILL_MAX);
	grb_buf_flush(buf, GRB_FLUSH_ACTIVE);
	bench_pin_self(bench_cpu_for_reader());
	t0 = bench_now_ns();
	switch (kind) {
	case OUT_MEMCPY:
	case OUT_WRITE2:
		out_by_hand(buf, c, kind == OUT_MEMCPY);
		break;
	case OUT_WRITE:
		ret = grb_buf_write(buf, c->fd, 0, &bytes);
		break;
	default:
		ret = grb_buf_splice(buf, c->fd, c->pipe_fds, 0, &bytes);
		break;
	}
	c->ns += bench_now_ns() - t0;
	bench_pin_self(bench_cpu_for_writer(0));
	c->bytes += bytes;
	c->errors += ret != 0;
}

/* One run of one kind.  Return: GB/s, or NAN when something failed. */
static double out_run(const struct bench_opts *o, enum out_kind kind,
		      size_t subbuf, struct out_ctx *c)
{
	struct grb_channel *chan = rd_chan(&cfg_one_dc, subbuf);
	unsigned int i;
	struct stat st;

	c->bytes = c->ns = 0;
	c->dst_off = 0;
	if (ftruncate(c->fd, 0) != 0 || lseek(c->fd, 0, SEEK_SET) != 0)
		c->errors++;
	grb_reader_open(grb_channel_buf(chan, 0));
	for (i = 0; i < o->out_rounds; i++)
		out_round(kind, chan, c);
	grb_reader_release(grb_channel_buf(chan, 0));
	grb_channel_destroy(chan);
	/* The file must hold every byte moved out. */
	if (kind != OUT_MEMCPY &&
	    (fstat(c->fd, &st) != 0 || (uint64_t)st.st_size != c->bytes))
		c->errors++;
	return c->ns ? (double)c->bytes / (double)c->ns : NAN;
}

static int out_setup(const struct bench_opts *o, struct out_ctx *c,
		     char *path, size_t cap)
{
	struct statfs fs;

	memset(c, 0, sizeof(*c));
	if (statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC) {
		report_skip("read output", "/dev/shm is not a tmpfs");
		return -1;
	}
	snprintf(path, cap, OUT_PATH_FMT, (int)getpid());
	c->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	c->dst_cap = (size_t)o->out_rounds * BENCH_BUF_BYTES;
	c->dst = (unsigned char *)malloc(c->dst_cap);
	if (c->fd < 0 || !c->dst || pipe2(c->pipe_fds, O_CLOEXEC) != 0) {
		report_skip("read output", "cannot create %s, a pipe or the "
			    "memcpy destination", path);
		if (c->fd >= 0)
			close(c->fd);
		unlink(path);
		free(c->dst);
		return -1;
	}
	/* Touch the destination: the floor copies, it does not fault. */
	memset(c->dst, 0, c->dst_cap);
	return 0;
}

static void bench_read_output(const struct bench_opts *o)
{
	static const size_t sizes[] = { 4u << 10, RD_SUBBUF };
	double gbs[2][NR_OUTS][64];
	uint64_t errors[2][NR_OUTS] = { { 0 } };
	struct bench_stat st;
	struct bench_row *row;
	struct out_ctx c;
	char path[64];
	size_t s;
	int k, i;

	if (out_setup(o, &c, path, sizeof(path)) != 0)
		return;
	for (k = 0; k < o->runs; k++)
		for (s = 0; s < 2; s++)
			for (i = 0; i < NR_OUTS; i++) {
				c.errors = 0;
				gbs[s][i][k] = out_run(o, (enum out_kind)i,
						       sizes[s], &c);
				errors[s][i] += c.errors;
			}
	for (s = 0; s < 2; s++)
		for (i = 0; i < NR_OUTS; i++) {
			row = report_add("rd/out/%s/%zu", outs[i].id,
					 sizes[s]);
			report_describe(row, "read", i == OUT_MEMCPY ?
					"floor" : "grb", "gbytes_per_s", "GB/s",
					sizes[s], 1, 1);
			snprintf(row->config, sizeof(row->config), "%s; to "
				 "/dev/shm (tmpfs), %u MiB per run",
				 outs[i].label, o->out_rounds);
			snprintf(row->note, sizeof(row->note), "%s",
				 errors[s][i] ? "SHORT OR FAILED OUTPUT" :
				 "every byte moved out; file size checked");
			bench_stat_of(gbs[s][i], o->runs, &st);
			report_set(row, &st);
		}
	close(c.fd);
	close(c.pipe_fds[0]);
	close(c.pipe_fds[1]);
	unlink(path);
	free(c.dst);
}

void bench_read_run(const struct bench_opts *o)
{
	fprintf(stderr, "  read: record rates\n");
	bench_read_rates(o);
	fprintf(stderr, "  read: sub-buffers to a file\n");
	bench_read_output(o);
}

int bench_read_one(const char *what, uint64_t n)
{
	static const struct {
		const char *what;
		enum rate_kind kind;
	} ones[] = {
		{ "read-raw", RATE_RAW },
		{ "read-buf", RATE_BUF_DC },
		{ "read-chan", RATE_CHAN },
	};
	struct reading rd;
	struct drain d;
	uint64_t before;
	size_t i;

	for (i = 0; i < sizeof(ones) / sizeof(ones[0]); i++)
		if (strcmp(what, ones[i].what) == 0)
			break;
	if (i == sizeof(ones) / sizeof(ones[0]))
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	d.limit = n;
	/* As many filled channels as it takes to read n records. */
	do {
		before = d.n;
		reading_open(&rd, ones[i].kind);
		reading_drain(&rd, &d);
		reading_close(&rd);
	} while (d.n < n && d.n > before);
	printf("%s: %llu records read, %llu bad\n", what,
	       (unsigned long long)d.n, (unsigned long long)d.bad);
	return d.n == n ? 0 : -EIO;
}
