/* SPDX-License-Identifier: MIT */
/*
 * /proc/self/status as it was at start-up (status.c): read once, before
 * anything else, by fdr_init() (state.c); its values are used by the
 * sandbox check (sandbox.c) and the table growth (pregrow.c).
 */
#ifndef FDR_STATUS_H
#define FDR_STATUS_H

#include "global.h"

/*
 * Read /proc/self/status and keep the lines start-up uses.  0, or -errno:
 * the file could not be opened, or read to its end, or had none of them.
 * Async-signal-safe: no lock, no allocation, raw syscalls only.
 */
int fdr_status_read(void) FDR_HIDDEN;

/* The same from @fd, open on text laid out as that file (the unit test);
 * what an earlier read kept is forgotten first. */
int fdr_status_read_fd(int fd) FDR_HIDDEN;

/* The number after @key ("Threads:") as read, or -1: no such line, or
 * nothing read. */
long fdr_status_value(const char *key) FDR_HIDDEN;

#endif
