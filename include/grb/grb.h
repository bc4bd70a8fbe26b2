/* SPDX-License-Identifier: MIT */
/*
 * grb/grb.h - the whole engine API: configuration, channels, the write
 * fast path, the reader, and the read side built on it (iterators,
 * waiting, timers, outputs).  The basic client is in grb/basic.h.
 */
#ifndef GRB_GRB_H
#define GRB_GRB_H

#include "grb/align.h"
#include "grb/config.h"
#include "grb/channel.h"
#include "grb/iter.h"
#include "grb/output.h"
#include "grb/reader.h"
#include "grb/recover.h"
#include "grb/shm.h"
#include "grb/timer.h"
#include "grb/validate.h"
#include "grb/version.h"
#include "grb/wait.h"
#include "grb/writer.h"

#endif /* GRB_GRB_H */
