/* SPDX-License-Identifier: MIT */
/*
 * grb/validate.h - whole-buffer invariant checker, for tests, stress runs
 * and recovery tools.
 */
#ifndef GRB_VALIDATE_H
#define GRB_VALIDATE_H

#include "grb/api.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct grb_buf;

/**
 * grb_buf_validate - check every invariant of a quiescent buffer.
 * @buf: buffer; no writer may be between reserve and commit, no flush or
 *       reader call may run.
 * @msg: receives a one-line description of the first broken invariant,
 *       cut to @cap bytes with its NUL; may be NULL.  Left alone when
 *       every invariant holds, on -ENOMEM, and when @cap is 0.
 * @cap: bytes at @msg.
 *
 * Checks the description (magic, version, geometry, mode), the positions
 * (consumed sub-buffer aligned, behind produced by at most a buffer), each
 * slot's commit counter against the bytes the write position implies,
 * delivery of every closed sub-buffer, the sub-buffer ids (a permutation
 * of the physical sub-buffers, NOREF and lap as delivered), and the
 * accounting: written == read + overwritten + records still unread.
 * Return: 0 when all hold; -EUCLEAN when one does not; -EINVAL for a NULL
 * @buf; -ENOMEM when the checker cannot allocate its scratch map of the
 * physical sub-buffers (the sub-buffer ids were then not checked).
 * Context: any thread, quiescent buffer.
 */
GRB_API int grb_buf_validate(const struct grb_buf *buf, char *msg, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* GRB_VALIDATE_H */
