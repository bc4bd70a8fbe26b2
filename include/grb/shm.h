/* SPDX-License-Identifier: MIT */
/*
 * grb/shm.h - channels whose buffers live in shared memory, and other
 * processes attaching to them as the reader or as more writers.
 *
 * A shared channel is created as any other, but each buffer's mapping is
 * a memfd (or a file under a directory the caller names, such as a
 * directory on /dev/shm) mapped MAP_SHARED.  Nothing in a mapping is a
 * pointer (grb/impl/layout.h), so another process that maps the same
 * file descriptors runs the same reserve, commit and reader code on it.
 * The descriptors travel over a UNIX socket (grb_channel_send() /
 * grb_channel_recv(), SCM_RIGHTS), or the other process opens the files
 * by path (grb_channel_attach_dir()).
 *
 *	creator:   grb_channel_create_shared(&cfg, &attr, &sattr, &chan);
 *	           ...accept a connection on a UNIX socket...
 *	           grb_channel_send(chan, conn);
 *	consumer:  grb_channel_recv(sock, &cfg, "myclient",
 *	                            GRB_ATTACH_READER, &chan);
 *	           ...grb_reader_open(), iterators, outputs, waits...
 *
 * Identity.  Each mapping records the client name given at creation, a
 * fingerprint of the configuration's layout-relevant fields (mode,
 * allocation, timestamp bits, sub-buffer header size), the number of
 * buffers and the buffer's index; attaching checks each against the
 * attacher's own configuration and client name.  The callbacks are the
 * attacher's: each process brings its own code for the same format.
 *
 * Trust.  Files are created owner-only (0600), or 0660 with the group the
 * caller names; grb_channel_send() refuses a peer whose credentials
 * (SO_PEERCRED) are not the caller's user (or, with a group, a member of
 * that group's gid as primary group).  An attacher checks every field of
 * the description against its configuration and the file's size before
 * it maps the whole file, and the reader checks each physical sub-buffer
 * index and data size it reads from the mapping, so a corrupt description
 * is an error at attach and a corrupt index or size is -EBADMSG from the
 * reader, not an access outside the mapping.  A memfd is sealed against
 * shrinking (F_SEAL_SHRINK), so no process can truncate it under another,
 * and against growing (F_SEAL_GROW: attach refuses a file of another
 * size), the seals themselves sealed (F_SEAL_SEAL); a file under a
 * directory cannot be sealed, and shrinking it while mapped raises
 * SIGBUS in every process that touches the lost pages.
 *
 * Roles.  The creator owns the channel: finalize, the buffer_create and
 * buffer_finalize callbacks and, with a directory, removing the files at
 * destroy are its alone.  An attached channel (reader or writer) does
 * none of these: grb_channel_finalize() on it is -EPERM and
 * grb_channel_destroy() only unmaps.  An attached reader may flush
 * (grb_channel_flush(), grb_channel_tick()) from its side.  Several
 * processes may write; one reader role per buffer, wherever it runs:
 * grb_reader_open() takes it, -EBUSY while another handle holds it.  The
 * role is one flag in the mapping, so grb cannot tell which handle took
 * it: a handle that did not open must not call the reader functions
 * (they check only that the role is taken).
 *
 * A writer process that dies between reserve and commit: every writing
 * thread journals its reservations in the mapping, and the reader
 * completes the sub-buffer it left with grb_channel_recover()
 * (grb/recover.h).  A signal handler that reserves in a shared channel
 * must commit before it returns (not hand the context to another
 * thread), and at most GRB_JOURNAL_SLOTS threads write to one buffer at
 * a time, each from its first write to the buffer until it exits (-EBUSY
 * beyond, counted in lost_nesting; grb/recover.h).
 */
#ifndef GRB_SHM_H
#define GRB_SHM_H

#include "grb/api.h"

#include <stddef.h>
#include <stdint.h>

#include "grb/channel.h"
#include "grb/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest client name, terminating NUL excluded. */
#define GRB_SHM_CLIENT_MAX 31

/* Most buffers one channel may have when shared (one fd each). */
#define GRB_SHM_MAX_BUFS 4096

struct grb_shm_attr {
	/* Identity of the record format: 1 to GRB_SHM_CLIENT_MAX bytes. */
	const char *client;
	/* NULL: one memfd per buffer.  Otherwise an existing directory: the
	 * buffers are the files DIR/NAME.0, DIR/NAME.1, ... (NAME is the
	 * channel attribute's name, which must then be set and contain no
	 * '/'), created exclusively (-EEXIST when one is there). */
	const char *dir;
	/* -1: owner only (files 0600).  Otherwise the group that may attach
	 * (files 0660, owned by this gid). */
	int gid;
};

/**
 * grb_channel_create_shared - grb_channel_create() with buffers in shared
 * memory.
 * @cfg, @attr, @out: as grb_channel_create().
 * @sattr: client identity, where the memory lives, who may attach.
 *
 * Every buffer is allocated (written to, not sparse) at creation, so a
 * shortage of shared memory is -ENOSPC here, not SIGBUS later.
 * Return: 0, or what grb_channel_create() returns, or
 *  -EINVAL  @cfg without GRB_CONFIG_SHARED in its flags (grb/config.h),
 *           @sattr NULL, client missing or longer than GRB_SHM_CLIENT_MAX,
 *           a directory without a channel name (NULL or empty) or with
 *           a '/' in it (a name of any length, only the path must fit:
 *           -ENAMETOOLONG), or
 *           more than GRB_SHM_MAX_BUFS buffers;
 *  -EEXIST  a buffer file is already there (nothing is overwritten);
 *  -ENAMETOOLONG a path DIR/NAME.i of 4096 bytes or more (it would
 *           otherwise be cut short, and name another file), or a NAME.i
 *           longer than the file system takes (255 bytes on most);
 *  -EACCES, -ENOENT, -ENOSPC, -EMFILE...  from creating, sizing or
 *           allocating a file or memfd, or setting its group.
 * On error nothing is left allocated and no file is left behind.
 * Context: any thread; not signal-safe.
 */
GRB_API int grb_channel_create_shared(const struct grb_config *cfg,
				      const struct grb_channel_attr *attr,
				      const struct grb_shm_attr *sattr,
				      struct grb_channel **out);

/* What an attaching process will do with the channel. */
enum grb_attach_role {
	GRB_ATTACH_READER = 1,  /* the reader protocol, waits, outputs */
	GRB_ATTACH_WRITER = 2,  /* reserve/commit into the same buffers */
};

/**
 * grb_channel_attach - map a shared channel from its buffers' file
 * descriptors, in buffer order.
 * @cfg: this process's configuration; must match the creator's (above),
 *       have GRB_CONFIG_SHARED, and outlive the channel.
 * @client: the client name the creator gave.
 * @fds: @nr_fds descriptors, one per buffer.  They are duplicated; the
 *       caller keeps (and closes) its own.
 * @role: GRB_ATTACH_READER or GRB_ATTACH_WRITER.
 * @out: receives the channel; grb_channel_destroy() unmaps it.
 *
 * Return: 0, or
 *  -EINVAL          a NULL argument, an unknown role, @nr_fds 0 or above
 *                   GRB_SHM_MAX_BUFS, grb_config_check() fails, or @cfg
 *                   lacks GRB_CONFIG_SHARED;
 *  -EBADF           a descriptor is not open, or not open for reading and
 *                   writing;
 *  -EBADMSG         a descriptor is not a grb buffer (too small, wrong
 *                   magic), or its description is inconsistent: sizes or
 *                   offsets that do not match its geometry, a file size
 *                   other than the mapping's (truncated), a buffer index
 *                   or count other than its place in @fds, or buffers of
 *                   different channels (each channel has an id, written
 *                   in every buffer at creation);
 *  -EPROTONOSUPPORT the mapping has another layout version;
 *  -EPROTOTYPE      another client name or configuration fingerprint;
 *  -EMFILE, -ENFILE no descriptor left to duplicate one into;
 *  -ENOMEM          mapping failed.
 * Context: any thread; not signal-safe.
 */
GRB_API int grb_channel_attach(const struct grb_config *cfg, const char *client,
			       const int *fds, unsigned int nr_fds,
			       enum grb_attach_role role,
			       struct grb_channel **out);

/**
 * grb_channel_attach_dir - grb_channel_attach() on the files DIR/NAME.i
 * that grb_channel_create_shared() made, for every i it made.
 * Return: as grb_channel_attach(); -ENOENT when DIR/NAME.0 is missing,
 * -EACCES when a file may not be opened for reading and writing (another
 * user's, without the group), -EBADMSG when one is not a grb buffer (a
 * directory, a socket, an empty file...), -ELOOP when one is a symbolic
 * link (not followed), -ENAMETOOLONG for a path DIR/NAME.i of 4096 bytes
 * or more or a NAME.i longer than the file system takes, -EMFILE or
 * -ENFILE when no descriptor is left, -EINVAL for a NULL or empty @name
 * or a '/' in it (a name of any length otherwise).
 */
GRB_API int grb_channel_attach_dir(const struct grb_config *cfg,
				   const char *client, const char *dir,
				   const char *name, enum grb_attach_role role,
				   struct grb_channel **out);

/**
 * grb_channel_send - hand a shared channel's descriptors to the process
 * at the other end of a connected UNIX stream socket.
 * @chan: a shared channel (created or attached).
 * @sock: the connected socket.
 *
 * Checks the peer's credentials first (SO_PEERCRED): its uid must be
 * this process's effective uid, or, from the channel that created the
 * buffers with a group, its gid that group (an attached channel does not
 * know the group: it accepts only the uid).  Sends a small header and the
 * descriptors
 * (SCM_RIGHTS, in batches).
 * Return: 0, or
 *  -EINVAL    NULL @chan or a channel not in shared memory;
 *  -EPERM     the peer may not attach;
 *  -ENOTCONN  @sock has no peer (not connected, listening, or not a UNIX
 *             socket);
 *  -EPIPE     the peer closed its end (no SIGPIPE: everything is sent
 *             with MSG_NOSIGNAL);
 *  -ENOTSOCK, -EBADF, -ECONNRESET...  from the socket.
 * Context: any thread.
 */
GRB_API int grb_channel_send(const struct grb_channel *chan, int sock);

/**
 * grb_channel_recv - receive what grb_channel_send() sent and attach.
 * @sock: the connected UNIX stream socket.
 * @cfg, @client, @role, @out: as grb_channel_attach().
 *
 * Checks the sender's credentials (SO_PEERCRED: this process's effective
 * uid, or root).  The descriptors received are closed once mapped, and
 * when the attach fails (none is left open on any error).  What
 * grb_channel_attach() refuses whatever the message holds (a NULL
 * argument, an unknown role, a configuration grb_config_check() refuses
 * or without GRB_CONFIG_SHARED) is -EINVAL before anything is read: the
 * message stays on the socket for a call that can take it.
 * Return: as grb_channel_attach(), or -EPERM for a sender that is neither,
 * -ENOTCONN for a socket with no peer, -EBADMSG for a message that is not
 * grb_channel_send()'s (its descriptors too few or too many among them),
 * -EMFILE or -ENFILE when no descriptor is left to receive them into
 * (the message was grb_channel_send()'s: not -EBADMSG),
 * -EPROTONOSUPPORT for one of another version, -ECONNRESET when the
 * sender closed early, or the socket's errno (-ENOTSOCK, -EBADF...).
 * Context: any thread.
 */
GRB_API int grb_channel_recv(int sock, const struct grb_config *cfg,
			     const char *client, enum grb_attach_role role,
			     struct grb_channel **out);

/**
 * grb_channel_recv_fds - receive what grb_channel_send() sent, without
 * attaching: for a consumer that picks the configuration itself (trying
 * grb_channel_attach() with each it knows until one is not -EPROTOTYPE).
 * @sock: the connected UNIX stream socket.
 * @fds: receives a malloc()ed array of the descriptors, in buffer order;
 *       the caller closes each and frees the array.
 * @nr: receives their count.
 * Return: 0, or as grb_channel_recv() (nothing to free then; -EINVAL
 * for NULL @fds or @nr).
 */
GRB_API int grb_channel_recv_fds(int sock, int **fds, unsigned int *nr);

/**
 * grb_channel_shm_fd - the descriptor of buffer @i of a shared channel,
 * owned by the channel (do not close it).
 * Return: the descriptor, or -EINVAL for NULL, an index out of range or a
 * channel not in shared memory.
 */
GRB_API int grb_channel_shm_fd(const struct grb_channel *chan, unsigned int i);

#ifdef __cplusplus
}
#endif

#endif /* GRB_SHM_H */
