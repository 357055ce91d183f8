/* SPDX-License-Identifier: MIT */
/*
 * Growing the kernel's fd table at start-up (FDRANGE_PREGROW): see pregrow.c.
 */
#ifndef FDR_PREGROW_H
#define FDR_PREGROW_H

#include "state.h"

/*
 * The highest fd the table is grown to cover, or 0 for none: the top of the
 * ranges (base + slots * width - 1), kept below the soft RLIMIT_NOFILE
 * @limit and fs.nr_open, and cut so that the table the kernel allocates
 * stays within @cap fds.  The kernel rounds a table up to a power of two
 * (at least 128 entries above the 64 embedded ones), and the table for fd
 * 2^k - 1 has exactly 2^k entries: the cut aims just below the largest
 * power of two <= cap.  Pure arithmetic, for the unit tests.
 */
static inline unsigned long fdr_pregrow_top(const struct fdr_config *cfg, unsigned width,
					    unsigned long limit, unsigned long nr_open,
					    unsigned long cap)
{
	unsigned long top, pow2 = 128;

	if (!width || !cfg->slots || cap < 128)
		return 0;
	top = cfg->base + (unsigned long)cfg->slots * width - 1;
	if (limit < nr_open)
		nr_open = limit;
	if (top > nr_open - 1)
		top = nr_open - 1;
	while (pow2 <= cap / 2)
		pow2 *= 2;
	if (top > pow2 - 1)
		top = pow2 - 1;
	/* fds 0..63 live in the table embedded in files_struct: nothing to grow. */
	return top < 64 ? 0 : top;
}

/* Grow the table now if the process is single-threaded; see pregrow.c. */
void fdr_pregrow(void) FDR_HIDDEN;

#endif
