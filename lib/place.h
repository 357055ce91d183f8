/* SPDX-License-Identifier: MIT */
#ifndef FDR_PLACE_H
#define FDR_PLACE_H

#include "global.h"

/* Which kind of call created the fd: the policies treat them differently. */
enum fdr_origin { FDR_FROM_ACCEPT, FDR_FROM_OPEN, FDR_FROM_OTHER };

/*
 * The placement rule.  Takes the fd a successful libc call returned, in a
 * process where the library is active (the caller checked fdr_ready()),
 * and returns the fd the caller gets: a copy in the chunks or the line of
 * the thread expected to use it (the original closed), or the original
 * itself.  Never fails, never changes errno, never touches an fd other
 * than @fd and its copies.
 */
int fdr_place(int fd, bool cloexec, enum fdr_origin origin) FDR_HIDDEN;

#endif
