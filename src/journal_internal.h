/* SPDX-License-Identifier: MIT */
/*
 * src/journal_internal.h - what the recoverer (src/recover.c) asks the
 * journal's owner bookkeeping (src/journal.c).
 */
#ifndef GRB_SRC_JOURNAL_INTERNAL_H
#define GRB_SRC_JOURNAL_INTERNAL_H

#include <stdint.h>

/*
 * Is process @pid, started at @start (0: unknown), still running?  A
 * zombie is not, unless only its first thread exited and others run; nor
 * is a process with that pid started at another time (this process
 * included: a dead writer may have had its pid); a process that exists
 * but whose /proc entry cannot be read is taken as running.
 */
int grb__process_alive(int pid, uint64_t start);

/* Fields 3 (state) and 22 (start time) of /proc/PID/stat: 0 or -1. */
int grb__proc_stat(int pid, char *state, uint64_t *start);

/* Once per process, before its first journaled write: called when a
 * buffer with a journal is mapped (src/channel.c).  Not signal-safe. */
void grb__journal_process_init(void);

#endif /* GRB_SRC_JOURNAL_INTERNAL_H */
