/* SPDX-License-Identifier: MIT */
/*
 * The placement rule's arithmetic: where range i lies for a given
 * configuration and RLIMIT_NOFILE.  Pure functions, unit-tested.
 */
#ifndef FDR_GEOMETRY_H
#define FDR_GEOMETRY_H

#include "options.h"

/*
 * The width of every range when the soft RLIMIT_NOFILE is @limit and the
 * kernel's fs.nr_open is @nr_open: the configured width, or for auto the
 * largest multiple of 64 such that BASE + SLOTS * width <= min(limit,
 * nr_open) - 1.  0 means no range fits: pass through.
 *
 * The top fd below the limit stays outside every range because servers
 * such as memcached refuse a connection whose fd is limit - 1, which plain
 * lowest-free allocation only hands out when everything else is taken.
 */
unsigned fdr_geom_width(const struct fdr_config *cfg, unsigned long limit,
			unsigned long nr_open);

/* The first fd of range @slot for @width. */
static inline unsigned long fdr_geom_lo(const struct fdr_config *cfg,
					unsigned width, unsigned slot)
{
	return cfg->base + (unsigned long)slot * width;
}

/*
 * One past the last fd that range @slot may hand out: its end, cut down to
 * the last multiple of 64 at or below min(@limit, @nr_open) - 1.  With an
 * auto width the cut never bites.  An explicit FDRANGE_WIDTH is used as
 * given, and without the cut a range straddling the limit would hand out
 * limit - 1 (refused by memcached) and the fds just below it while the
 * other ranges still have room.  A result <= the range's first fd means
 * nothing of the range is usable.
 */
unsigned long fdr_geom_end(const struct fdr_config *cfg, unsigned width, unsigned slot,
			   unsigned long limit, unsigned long nr_open);

/* The range holding @fd, or -1. */
int fdr_geom_range_of(const struct fdr_config *cfg, unsigned width, long fd);

#endif
