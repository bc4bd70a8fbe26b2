/* SPDX-License-Identifier: MIT */
/*
 * grb/grb.h - the whole engine API: configuration, channels, the write
 * fast path and the reader.  The basic client is in grb/basic.h.
 */
#ifndef GRB_GRB_H
#define GRB_GRB_H

#include "grb/align.h"
#include "grb/config.h"
#include "grb/channel.h"
#include "grb/reader.h"
#include "grb/validate.h"
#include "grb/version.h"
#include "grb/writer.h"

#endif /* GRB_GRB_H */
