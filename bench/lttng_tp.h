/* SPDX-License-Identifier: MIT */
/*
 * bench/lttng_tp.h - the LTTng-UST 2.13 tracepoint provider of the
 * benchmark: one event, grb_bench:rec, with one 32-bit field, the
 * writer's CPU id (the payload every system records).
 *
 * The lttng-ust tracepoint headers want this header included again with
 * TRACEPOINT_HEADER_MULTI_READ defined, hence the guard form below.
 */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER grb_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(
	grb_bench,
	rec,
	TP_ARGS(uint32_t, cpu),
	TP_FIELDS(
		ctf_integer(uint32_t, cpu, cpu)
	)
)

#endif /* BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
