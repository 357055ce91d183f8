/* SPDX-License-Identifier: MIT */
/*
 * The do-no-harm bound on fd numbers (bound.c): they grow with the fds the
 * process holds, not with its threads.
 */
#ifndef FDR_BOUND_H
#define FDR_BOUND_H

#include "global.h"

/* The bound's rules hold (FDRANGE_BOUND=auto): the FD_SETSIZE rule, the
 * bound itself, and on the kernel-range path the range's floor at 1024.
 * FDRANGE_BOUND=off, on the user's word that no fd goes to select(), drops
 * them all; the near-limit rule stays. */
static inline bool fdr_bound_on(void)
{
	return fdr_st.cfg.bound != FDR_BOUND_OFF;
}

/* May a chunk whose fds end just below @end be claimed now?  Always with
 * FDRANGE_BOUND=off (the soft limit is checked apart: place.c). */
bool fdr_bound_allows(unsigned long end) FDR_HIDDEN;

/*
 * A placement the back-off left untried (place.c) after the bound stopped
 * one: it stands for the refused claim it would have made, so the next
 * count comes after as many fds as without the back-off.
 */
void fdr_bound_skipped(void) FDR_HIDDEN;

/*
 * The highest fd (+1) a move of the kernel's fd @fd may go to, given the
 * chunk cap @cap: a number select() can hold stays one it can hold.
 */
static inline unsigned long fdr_bound_cap(int fd, unsigned long cap)
{
	if (!fdr_bound_on())
		return cap;
	return (unsigned)fd < FDR_FD_SETSIZE && cap > FDR_FD_SETSIZE ? FDR_FD_SETSIZE : cap;
}

/*
 * Fewer than this many numbers between the kernel's lowest free fd and the
 * soft limit: the table is nearly full, and a move's second number could
 * be the one another thread's creation needs (EMFILE plain Linux would not
 * give).  Such fds stay where the kernel put them.
 */
#define FDR_NEAR_LIMIT 64u

static inline bool fdr_near_limit(int fd, unsigned long limit)
{
	return (unsigned long)fd + FDR_NEAR_LIMIT >= limit;
}

#endif
