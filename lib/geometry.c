/* SPDX-License-Identifier: MIT */
#include "geometry.h"

unsigned fdr_geom_width(const struct fdr_config *cfg, unsigned long limit,
			unsigned long nr_open)
{
	unsigned long top = limit < nr_open ? limit : nr_open;
	unsigned long w;

	if (cfg->width)
		return cfg->width;
	if (!cfg->slots || top <= 1 || top - 1 <= cfg->base)
		return 0;
	w = (top - 1 - cfg->base) / cfg->slots;
	w -= w % FDR_ALIGN;
	return w > FDR_MAX_FD ? FDR_MAX_FD : (unsigned)w;
}

unsigned long fdr_geom_end(const struct fdr_config *cfg, unsigned width, unsigned slot,
			   unsigned long limit, unsigned long nr_open)
{
	unsigned long top = limit < nr_open ? limit : nr_open;
	unsigned long end = fdr_geom_lo(cfg, width, slot) + width;
	unsigned long cap = top ? (top - 1) - (top - 1) % FDR_ALIGN : 0;

	return end < cap ? end : cap;
}

int fdr_geom_range_of(const struct fdr_config *cfg, unsigned width, long fd)
{
	unsigned long i;

	if (!width || fd < (long)cfg->base)
		return -1;
	i = ((unsigned long)fd - cfg->base) / width;
	return i < cfg->slots ? (int)i : -1;
}
