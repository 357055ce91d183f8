/* SPDX-License-Identifier: MIT */
/*
 * Growing the kernel's fd table once (FDRANGE_PREGROW): at the first move
 * past the threshold, or at start-up with the threshold 0; see pregrow.c.
 */
#ifndef FDR_PREGROW_H
#define FDR_PREGROW_H

#include "geometry.h"

/*
 * The highest fd the table is grown to cover, or 0 for none: a table of at
 * most @entries fds, kept below the chunk cap for the soft RLIMIT_NOFILE
 * @limit and fs.nr_open (so 0 for a limit of 0, never a wrap).  The kernel
 * rounds a table up to a power of two (at least 128 entries above the 64
 * embedded ones), and the table for fd 2^k - 1 has exactly 2^k entries: the
 * cut aims just below the largest power of two <= @entries.  Pure
 * arithmetic, for the unit tests.
 */
static inline unsigned long fdr_pregrow_top(unsigned long entries, unsigned long limit,
					    unsigned long nr_open)
{
	unsigned long cap = fdr_geom_cap(limit, nr_open), top, pow2 = 128;

	if (entries < 128 || cap <= 64)
		return 0;
	while (pow2 <= entries / 2)
		pow2 *= 2;
	top = pow2 - 1;
	if (top > cap - 1)
		top = cap - 1;
	/* fds 0..63 live in the table embedded in files_struct: nothing to grow. */
	return top < 64 ? 0 : top;
}

/* Grow the table now if /proc/self/status, as read at start-up (status.h),
 * says the process is single-threaded and its table smaller; see pregrow.c. */
void fdr_pregrow(void) __attribute__((visibility("hidden")));

/* With FDRANGE_THRESHOLD: grow the table once, at the first fd @fd numbered
 * past it, inside that fd's move (moves.h); see pregrow.c. */
void fdr_pregrow_late(int fd) __attribute__((visibility("hidden")));

#endif
