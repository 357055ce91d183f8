/* SPDX-License-Identifier: MIT */
/*
 * The placement's arithmetic: 64-fd chunks above BASE and how far they may
 * go below RLIMIT_NOFILE.  Pure functions, unit-tested.
 *
 * Chunk c holds fds [BASE + 64c, BASE + 64(c+1)): eight lines of the
 * kernel's fd[] pointer array, so two chunks never share a cache line
 * there.  An owner (a thread, see owners.c) holds chunks; with an explicit
 * FDRANGE_WIDTH, owner i may hold only the chunks of range i, the fixed
 * [BASE + i*WIDTH, BASE + (i+1)*WIDTH).
 */
#ifndef FDR_GEOMETRY_H
#define FDR_GEOMETRY_H

#include "options.h"

#define FDR_CHUNK_FDS FDR_ALIGN

/*
 * One past the last fd any chunk may hold when the soft RLIMIT_NOFILE is
 * @limit and fs.nr_open is @nr_open: min(limit, nr_open) - 1, rounded down
 * to a multiple of 64.  The top fd below the limit stays outside, because
 * servers such as memcached refuse a connection whose fd is limit - 1,
 * which plain lowest-free allocation hands out only when all else is taken.
 */
static inline unsigned long fdr_geom_cap(unsigned long limit, unsigned long nr_open)
{
	unsigned long top = limit < nr_open ? limit : nr_open;

	return top ? (top - 1) - (top - 1) % FDR_CHUNK_FDS : 0;
}

/* How many chunks lie wholly below @cap. */
static inline unsigned fdr_geom_nchunks(unsigned base, unsigned long cap)
{
	return cap > base ? (unsigned)((cap - base) / FDR_CHUNK_FDS) : 0;
}

static inline unsigned long fdr_chunk_lo(unsigned base, unsigned c)
{
	return base + (unsigned long)c * FDR_CHUNK_FDS;
}

/* The chunk holding @fd, or -1 below BASE. */
static inline long fdr_chunk_of(unsigned base, long fd)
{
	return fd < (long)base ? -1 : (fd - (long)base) / (long)FDR_CHUNK_FDS;
}

/*
 * The chunks owner slot @i may claim: [*first, *end).  Without a fixed
 * width that is every chunk below the cap; with one, the chunks of range
 * @i cut at @nchunks (a range straddling the limit keeps only its part
 * below, so it never hands out limit - 1 while other ranges have room).
 */
void fdr_geom_claimable(const struct fdr_config *cfg, unsigned i, unsigned nchunks,
			unsigned *first, unsigned *end);

#endif
