/* SPDX-License-Identifier: MIT */
/*
 * src/error.c - messages for the negative errno values grb returns, in the
 * words of grb's contracts rather than the C library's generic ones.
 */
#include <errno.h>

#include "grb/channel.h"

const char *grb_strerror(int err)
{
	switch (err) {
	case 0:		return "success";
	case -EINVAL:	return "invalid argument or configuration";
	case -ENOMEM:	return "out of memory";
	case -EAGAIN:	return "not available now: records disabled, or no sub-buffer ready";
	case -ESHUTDOWN: return "channel finalized";
	case -EBUSY:	return "busy: reader already open, sub-buffer already held, nesting too deep, no journal entry, or reservation not the last";
	case -ENOBUFS:	return "buffer full (discard mode) or destination too small";
	case -EIO:	return "next sub-buffer still being written a lap ago, a record that does not decode, or an I/O error";
	case -ENOSPC:	return "no space: record larger than a sub-buffer, or out of shared memory or event classes";
	case -ENODATA:	return "no data: finalized and drained, or nothing to flush";
	case -ESTALE:	return "position overwritten or already consumed";
	case -EPERM:	return "not permitted in this state (reader not open or released, nothing held, or an attached channel)";
	case -ERANGE:	return "outside the sub-buffer's data";
	case -EALREADY:	return "already done: finalized, released or stopped";
	/* -EOPNOTSUPP is the same value on Linux. */
	case -ENOTSUP:	return "not supported: no record decoder, a private channel, or not on this machine";
	case -EUCLEAN:	return "buffer invariant broken (grb_buf_validate)";
	case -EBADMSG:	return "malformed: a shared mapping, packet or metadata failed its checks";
	case -ETIMEDOUT: return "timed out";
	case -ECANCELED: return "stopped by the callback";
	case -EEXIST:	return "already exists: shared-memory or trace files of that name";
	case -ENOENT:	return "no such file or directory";
	case -EACCES:	return "permission denied";
	case -EMFILE:	return "too many open files";
	case -ENFILE:	return "too many open files in the system";
	case -ENAMETOOLONG: return "path or file name too long";
	case -ELOOP:	return "a symbolic link, not followed";
	case -EBADF:	return "bad file descriptor";
	case -EPIPE:	return "the other end is closed";
	case -ECONNRESET: return "connection reset by the peer";
	case -ENOTSOCK:	return "not a socket";
	case -ENOTCONN:	return "the socket has no peer";
	case -EPROTOTYPE: return "shared buffers of another client or configuration";
	case -EPROTONOSUPPORT: return "shared buffers of another layout version";
	default:	return "unknown error";
	}
}
