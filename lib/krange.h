/* SPDX-License-Identifier: MIT */
/*
 * The kernel's per-task fd range (PR_SET_FD_RANGE, kernel/ series patch
 * 0002), where the kernel has it: the kernel then allocates a thread's new
 * fds in the thread's own range, and the dup path (place.c) only corrects
 * what lands elsewhere.
 */
#ifndef FDR_KRANGE_H
#define FDR_KRANGE_H

#include "global.h"

/* At start-up, while nothing is placed: does the kernel have it?  One
 * prctl (two on a kernel with it), and none at all with FDRANGE_KERNEL=off
 * or in a sandbox.  *@groups: whether it allocates and closes in ranges
 * without the table's lock (patch 0007, booted with fd_range_nolock=on). */
bool fdr_krange_probe(bool *groups) FDR_HIDDEN;

/* Before the library stops (a seccomp filter is coming): the calling
 * thread's range is dropped, while the prctl is still allowed; nothing if
 * the library has stopped already. */
void fdr_krange_drop(void) FDR_HIDDEN;

/* Inside a move (moves.h): the kernel numbered the calling thread's new
 * fd @fd (its own or accepted) where the dup path had to move it.  If that
 * is outside the range the thread believes it has, the belief is wrong,
 * and its next range is set even if it looks unchanged. */
void fdr_krange_missed(int fd) FDR_HIDDEN;

/* Inside a move: the calling thread (owner @self) just got fd @fd where
 * its fds go, and the kernel's range follows it, with a prctl only when it
 * changes. */
void fdr_krange_follow(unsigned self, int fd) FDR_HIDDEN;

/* Owner @self's fd @fd was found in place: every so often its range goes
 * back to its lowest chunk, so that fd numbers sink after a burst.  Makes
 * its own move bracket, as fdr_krange_aim(). */
void fdr_krange_sink(unsigned self, int fd, unsigned long cap) FDR_HIDDEN;

/* The calling thread (owner @self) accepted a connection: aim its range at
 * where the next accepted fd is predicted to go.  Makes its own move
 * bracket when it must set the range. */
void fdr_krange_aim(unsigned self) FDR_HIDDEN;

#endif
