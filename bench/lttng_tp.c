/* SPDX-License-Identifier: MIT */
/*
 * bench/lttng_tp.c - instantiate the grb_bench tracepoint provider (the
 * probes and the tracepoint definitions) in the traced application.
 */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE

#include "lttng_tp.h"
