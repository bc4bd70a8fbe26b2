/* SPDX-License-Identifier: MIT */
/*
 * grb/api.h - what marks a symbol as part of libgrb's interface.
 *
 * The library is built with hidden visibility: only declarations marked
 * GRB_API are exported from libgrb.so.  That is every public function,
 * plus the few grb__ slow paths and the thread-local state that the
 * inline fast path (grb/writer.h) calls or reads from the caller's code.
 * Their names and signatures are part of the ABI (docs/abi.md).
 */
#ifndef GRB_API_H
#define GRB_API_H

#define GRB_API __attribute__((visibility("default")))

#endif /* GRB_API_H */
