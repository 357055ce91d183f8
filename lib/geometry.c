/* SPDX-License-Identifier: MIT */
#include "geometry.h"

void fdr_geom_claimable(const struct fdr_config *cfg, unsigned i, unsigned nchunks,
			unsigned *first, unsigned *end)
{
	unsigned long per, f, e;

	if (!cfg->width) {
		*first = 0;
		*end = nchunks;
		return;
	}
	per = cfg->width / FDR_CHUNK_FDS;
	f = per * i;
	e = f + per;
	*first = f < nchunks ? (unsigned)f : nchunks;
	*end = e < nchunks ? (unsigned)e : nchunks;
}
