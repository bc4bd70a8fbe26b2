/* SPDX-License-Identifier: MIT */
/*
 * src/wait.c - waking a waiting reader, and waiting (grb/wait.h).
 *
 * The protocol is a Dekker pair on two sides of the buffer:
 *
 *   reader: set a GRB_WAIT_* bit (seq_cst RMW), check for data with
 *           seq_cst loads, sleep on the futex word read before the check;
 *   writer: publish data (the commit add, or the delivery's store of
 *           cc_sb, or finalize's bit, all seq_cst), load the bits
 *           (seq_cst), and when one is set and the watermark is met, take
 *           the bits with one atomic and-not and wake.
 *
 * Either the writer's load sees the reader's bit, or the reader's check
 * sees the writer's data: both cannot miss, because all four operations
 * are seq_cst and so lie in one total order, in which each side's store
 * comes before its own load.  (seq_cst operations, not fences, also
 * because ThreadSanitizer does not model fences.)
 * A wake-up that lands between the reader's check and its sleep changes
 * the futex word first, so FUTEX_WAIT returns at once.
 */
#include <limits.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "grb/wait.h"

/* The 32 bits of a 64-bit word the futex waits on: its low half. */
static uint32_t *futex_word(grb_atomic_u64 *w)
{
	return (uint32_t *)(void *)w +
		(__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 1 : 0);
}

/* Not FUTEX_PRIVATE_FLAG: the word may be in a mapping shared with other
 * processes. */
static void futex_wake(grb_atomic_u64 *w)
{
	syscall(SYS_futex, futex_word(w), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void futex_wait(grb_atomic_u64 *w, uint32_t seen,
		       const struct timespec *rel)
{
	syscall(SYS_futex, futex_word(w), FUTEX_WAIT, seen, rel, NULL, 0);
}

/*
 * Does buffer buf meet the watermark (n delivered sub-buffers past the
 * consumed position, or, when bytes_end is not UINT64_MAX, readable data
 * up to position bytes_end), or, finalized, has it delivered its last?
 * Return: 1 when it does, 0 when not, -ENODATA when finalized and drained.
 */
static int buf_ready(struct grb_buf *buf, uint64_t n, uint64_t bytes_end)
{
	struct grb_buf_shm *shm = buf->shm;
	/* Every load here is seq_cst: the reader's side of the handshake
	 * (they are also acquire: each pairs with the store or RMW that
	 * published what it reads).  consumed: the reader's own store, or a
	 * writer's push. */
	uint64_t c = grb_load_seq_cst(&shm->consumed);
	uint64_t p = c, live, end;
	uint64_t i;

	if (n > buf->buf_size >> buf->subbuf_order)
		n = buf->buf_size >> buf->subbuf_order;
	for (i = 0; i < n; i++, p += buf->subbuf_size) {
		/* Pairs with the store of cc_sb in grb__deliver(). */
		if (!grb__delivered(buf,
				    grb_load_seq_cst(&buf->cold[grb__slot(buf, p)].cc_sb),
				    p))
			break;
	}
	if (i == n || (bytes_end != UINT64_MAX && p >= bytes_end))
		return 1;
	if (bytes_end != UINT64_MAX && buf->chan->cfg->mode == GRB_MODE_DISCARD &&
	    grb__live_prefix(buf, p, &live, NULL) == 0 && p + live >= bytes_end)
		return 1;
	/* Finalized bit before the position: pairs with finalize's RMW.
	 * Nothing more will come then: everything up to the end delivered
	 * meets any watermark (a larger one never would be met), and
	 * nothing left is the end. */
	if (grb_load_seq_cst(&shm->blocked) & GRB_BLOCKED_FINALIZED) {
		end = grb__subbuf_trunc(buf, grb_load_seq_cst(&shm->offset));
		if (c >= end)
			return -ENODATA;
		if (p >= end)
			return 1;
	}
	return 0;
}

/* The watermark a waiter stored, as buf_ready() takes it. */
static int armed_ready(struct grb_buf *buf)
{
	return buf_ready(buf, grb_load_relaxed(&buf->shm->wake_delivered),
			 grb_load_relaxed(&buf->shm->wake_pos));
}

void grb__wake(struct grb_buf *buf)
{
	struct grb_buf_shm *shm = buf->shm;
	struct grb_channel *chan = buf->chan;
	uint64_t w, one = 1;
	int efd;

	/* Seen set by the caller; the watermark was stored before the bit
	 * (the waiter's seq_cst RMW orders its stores before it). */
	if (armed_ready(buf) == 0)
		return;
	/* Take the bits: one waker per arming makes the calls. */
	w = grb_fetch_and_seq_cst(&shm->waiting, 0);
	if (w & GRB_WAIT_BUF) {
		grb_fetch_add_seq_cst(&shm->wake_seq, 1);
		futex_wake(&shm->wake_seq);
	}
	if (w & GRB_WAIT_CHAN) {
		grb_fetch_add_seq_cst(&chan->bufs[0].shm->chan_wake_seq, 1);
		futex_wake(&chan->bufs[0].shm->chan_wake_seq);
	}
	/* Set before the arming whose bit we took (the arm loads it). */
	efd = __atomic_load_n(&chan->event_fd, __ATOMIC_RELAXED);
	if ((w & GRB_WAIT_FD) && efd >= 0 &&
	    write(efd, &one, sizeof(one)) < 0) {
		/* The counter cannot overflow from one write per arming;
		 * nothing else can fail on a valid eventfd. */
	}
}

/*
 * Where a byte watermark of @bytes past consumed position @c is met;
 * UINT64_MAX, which no position reaches, when it is off (0) or when the
 * sum would pass the largest position (such a watermark is never met, and
 * must not wrap to one below @c, which would be met at once).
 */
static uint64_t wm_end(uint64_t c, uint64_t bytes)
{
	return bytes && bytes < UINT64_MAX - c ? c + bytes : UINT64_MAX;
}

/*
 * Arm buffer buf for a waiter of kind `bit` with watermark wm.
 *
 * The buffer has one stored watermark for all its kinds of waiter.  An
 * event fd arming stays while its reader blocks in a wait of its own:
 * that wait must not raise the arming's watermark, or a delivery that
 * meets the arming's would feed the fd nothing.  So while another kind
 * is armed the lower of both is stored: a waker then comes at the first
 * of the two, and each waiter treats an early wake-up as spurious (a
 * wait checks its own watermark again; an fd readiness is a hint).  A
 * stale read here (the bits taken meanwhile) only makes one such early
 * wake-up.
 */
static void arm(struct grb_buf *buf, uint64_t bit, uint64_t n, uint64_t bytes)
{
	struct grb_buf_shm *shm = buf->shm;
	uint64_t c = grb_load_acquire(&shm->consumed);
	uint64_t end = wm_end(c, bytes), v;

	if (grb_load_relaxed(&shm->waiting) & ~bit) {
		v = grb_load_relaxed(&shm->wake_delivered);
		n = v < n ? v : n;
		v = grb_load_relaxed(&shm->wake_pos);
		end = v < end ? v : end;
	}
	grb_store_relaxed(&shm->wake_delivered, n);
	grb_store_relaxed(&shm->wake_pos, end);
	/* seq_cst: the Dekker side of the reader (see the top of the file);
	 * also publishes the watermark to the waker that sees the bit. */
	grb_fetch_or_seq_cst(&shm->waiting, bit);
}

/*
 * After arming a per-CPU (rseq) buffer: its local commits store cc_local
 * with a plain store, which x86-64 may make visible only after that
 * writer's load of `waiting`.  The fence drains it, so the check that
 * follows sees the commit, or the commit had not run and its load sees
 * the bit (docs/design.md section 25.4, the same reasoning).
 */
static void arm_fence(struct grb_channel *chan, struct grb_buf *buf)
{
	unsigned int i;

	if (buf) {
		if (buf->rseq)
			grb__rseq_fence(buf);
		return;
	}
	for (i = 0; i < chan->nr_bufs; i++) {
		if (chan->bufs[i].rseq) {
			grb__rseq_fence_all();
			return;
		}
	}
}

static void disarm(struct grb_buf *buf, uint64_t bit)
{
	grb_fetch_and_seq_cst(&buf->shm->waiting, ~bit);
}

static int check_reader(const struct grb_buf *buf)
{
	return grb_load_relaxed(&buf->shm->active_readers) ? 0 : -EPERM;
}

/* Time left until deadline (CLOCK_MONOTONIC ns); 0 when passed. */
static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec *remaining(int64_t deadline, struct timespec *ts)
{
	int64_t left;

	if (deadline < 0)
		return NULL;
	left = deadline - now_ns();
	if (left < 0)
		left = 0;
	ts->tv_sec = (time_t)(left / 1000000000);
	ts->tv_nsec = (long)(left % 1000000000);
	return ts;
}

/* The deadline of a wait of @timeout_ns from now; -1 for none, also when
 * it lies past the clock's range (about 292 years of uptime), where the
 * sum would overflow. */
static int check_args(int64_t timeout_ns, int64_t *deadline)
{
	int64_t now;

	if (timeout_ns < 0 && timeout_ns != GRB_WAIT_FOREVER)
		return -EINVAL;
	if (timeout_ns < 0) {
		*deadline = -1;
		return 0;
	}
	now = now_ns();
	*deadline = timeout_ns > INT64_MAX - now ? -1 : now + timeout_ns;
	return 0;
}

static void watermark(const struct grb_watermark *wm, uint64_t *n,
		      uint64_t *bytes)
{
	*n = wm && wm->subbufs ? wm->subbufs : 1;
	*bytes = wm ? wm->bytes : 0;
}

int grb_buf_wait(struct grb_buf *buf, const struct grb_watermark *wm,
		 int64_t timeout_ns)
{
	struct grb_buf_shm *shm;
	struct timespec ts;
	int64_t deadline;
	uint64_t n, bytes;
	uint32_t seen;
	int ret;

	if (!buf || check_args(timeout_ns, &deadline))
		return -EINVAL;
	if (check_reader(buf))
		return -EPERM;
	shm = buf->shm;
	watermark(wm, &n, &bytes);
	for (;;) {
		ret = buf_ready(buf, n,
				wm_end(grb_load_acquire(&shm->consumed), bytes));
		if (ret)
			return ret < 0 ? ret : 0;
		if (deadline >= 0 && now_ns() >= deadline)
			return -ETIMEDOUT;
		GRB_HOOK(GRB_HOOK_WAIT_CHECKED);
		/* Read before the check: a wake after it changes the word. */
		seen = (uint32_t)grb_load_acquire(&shm->wake_seq);
		arm(buf, GRB_WAIT_BUF, n, bytes);
		arm_fence(NULL, buf);
		if (armed_ready(buf) == 0)
			futex_wait(&shm->wake_seq, seen, remaining(deadline, &ts));
		disarm(buf, GRB_WAIT_BUF);
	}
}

/*
 * Any buffer of the channel ready?  marks: per buffer, the byte watermark
 * (0: none), or NULL for `bytes` on every buffer.  Return: 1, 0, or
 * -ENODATA when every buffer is finalized and drained; -EPERM when one is
 * not being read.
 */
static int chan_ready(struct grb_channel *chan, uint64_t n, uint64_t bytes,
		      const uint64_t *marks)
{
	unsigned int i, drained = 0;
	struct grb_buf *buf;
	uint64_t b;
	int r;

	/* Every buffer first: a ready one must not hide one not open. */
	for (i = 0; i < chan->nr_bufs; i++)
		if (check_reader(&chan->bufs[i]))
			return -EPERM;
	for (i = 0; i < chan->nr_bufs; i++) {
		buf = &chan->bufs[i];
		b = marks ? marks[i] : bytes;
		r = buf_ready(buf, n,
			      wm_end(grb_load_acquire(&buf->shm->consumed), b));
		if (r > 0)
			return 1;
		drained += r < 0;
	}
	return drained == chan->nr_bufs ? -ENODATA : 0;
}

static void chan_arm(struct grb_channel *chan, uint64_t bit, uint64_t n,
		     uint64_t bytes, const uint64_t *marks)
{
	unsigned int i;

	for (i = 0; i < chan->nr_bufs; i++)
		arm(&chan->bufs[i], bit, n, marks ? marks[i] : bytes);
}

static void chan_disarm(struct grb_channel *chan, uint64_t bit)
{
	unsigned int i;

	for (i = 0; i < chan->nr_bufs; i++)
		disarm(&chan->bufs[i], bit);
}

int grb__channel_wait_marks(struct grb_channel *chan, uint64_t n,
			    uint64_t bytes, const uint64_t *marks,
			    int64_t timeout_ns)
{
	grb_atomic_u64 *word;
	struct timespec ts;
	int64_t deadline;
	uint32_t seen;
	int ret;

	if (!chan || check_args(timeout_ns, &deadline))
		return -EINVAL;
	word = &chan->bufs[0].shm->chan_wake_seq;
	for (;;) {
		ret = chan_ready(chan, n, bytes, marks);
		if (ret)
			return ret < 0 ? ret : 0;
		if (deadline >= 0 && now_ns() >= deadline)
			return -ETIMEDOUT;
		GRB_HOOK(GRB_HOOK_WAIT_CHECKED);
		seen = (uint32_t)grb_load_acquire(word);
		chan_arm(chan, GRB_WAIT_CHAN, n, bytes, marks);
		arm_fence(chan, NULL);
		if (chan_ready(chan, n, bytes, marks) == 0)
			futex_wait(word, seen, remaining(deadline, &ts));
		chan_disarm(chan, GRB_WAIT_CHAN);
	}
}

int grb_channel_wait(struct grb_channel *chan, const struct grb_watermark *wm,
		     int64_t timeout_ns)
{
	uint64_t n, bytes;

	watermark(wm, &n, &bytes);
	return grb__channel_wait_marks(chan, n, bytes, NULL, timeout_ns);
}

int grb_channel_event_fd(struct grb_channel *chan, int *fd)
{
	int efd, cur;

	if (!chan || !fd)
		return -EINVAL;
	/*
	 * An attached channel's writers all write through other handles,
	 * in other processes, whose commits cannot write this process's
	 * eventfd; they would take an arming's bit back and write nothing,
	 * so the fd would never become readable.  Refuse, rather than hand
	 * out a descriptor that stays silent: the futex waits work there.
	 */
	if (chan->shared == GRB_CHAN_READER || chan->shared == GRB_CHAN_WRITER)
		return -ENOTSUP;
	/* Made once: callers racing here each make one, one is kept (the
	 * CAS) and the others closed, so all get the same. */
	cur = __atomic_load_n(&chan->event_fd, __ATOMIC_ACQUIRE);
	if (cur < 0) {
		efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd < 0)
			return -errno;
		if (__atomic_compare_exchange_n(&chan->event_fd, &cur, efd, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			cur = efd;
		else
			close(efd);
	}
	*fd = cur;
	return 0;
}

int grb_channel_arm(struct grb_channel *chan, const struct grb_watermark *wm)
{
	uint64_t n, bytes, drain;
	unsigned int i;
	int ret, efd;

	if (!chan)
		return -EINVAL;
	efd = __atomic_load_n(&chan->event_fd, __ATOMIC_ACQUIRE);
	if (efd < 0)
		return -EBADF;
	watermark(wm, &n, &bytes);
	/* Refused before anything changes: a refusal must not clear a
	 * readiness an earlier arming left on the fd. */
	for (i = 0; i < chan->nr_bufs; i++)
		if (check_reader(&chan->bufs[i]))
			return -EPERM;
	/*
	 * An earlier arming woke on one buffer and left the others armed:
	 * take those bits back, so that a return of 0 leaves nothing armed
	 * and one of -EAGAIN arms every buffer with this watermark.  Then
	 * clear what an earlier arming left readable.
	 */
	chan_disarm(chan, GRB_WAIT_FD);
	if (read(efd, &drain, sizeof(drain)) < 0) {
		/* EAGAIN: nothing to clear. */
	}
	ret = chan_ready(chan, n, bytes, NULL);
	if (ret)
		return ret < 0 ? ret : 0;
	GRB_HOOK(GRB_HOOK_WAIT_CHECKED);
	chan_arm(chan, GRB_WAIT_FD, n, bytes, NULL);
	arm_fence(chan, NULL);
	ret = chan_ready(chan, n, bytes, NULL);
	if (ret) {
		chan_disarm(chan, GRB_WAIT_FD);
		return ret < 0 ? ret : 0;
	}
	return -EAGAIN;
}
