/* SPDX-License-Identifier: MIT */
/*
 * tests/func/test_ctf_emit.c - grb_ctf_emit() and grb_ctf_emit_raw()
 * (grb/ctf.h) on a tracer without a writer thread: each refusal of their
 * arguments and of raw payloads (the length of a fixed class, a NUL
 * ending each string, nothing after the last field), a class of another
 * tracer; what grb_reserve() refuses (too big, records disabled, a full
 * buffer) and how each is counted in grb_ctf_stats; grb_ctf_stop() and
 * -EALREADY, -ESHUTDOWN after it, the statistics' arguments; and the
 * finalized channel read back by its caller, every event committed and
 * the first one's payload as written.  A refusal a caller cannot tell
 * apart, or an event counted wrongly, is a loss nobody sees.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ctf_rig.h"
#include "grb/channel.h"
#include "grb/ctf.h"
#include "grb/reader.h"

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

int main(void)
{
	ctf_rig_start();
	contract_emit();
	return ctf_rig_done("test_ctf_emit");
}
