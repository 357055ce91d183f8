/* SPDX-License-Identifier: MIT */
/* The public API declared in fdrange.h. */
#include "fdrange.h"
#include "geometry.h"
#include "state.h"

#include <errno.h>

FDR_EXPORT const char *fdrange_version(void)
{
	return FDRANGE_VERSION_STRING;
}

FDR_EXPORT int fdrange_active(void)
{
	return fdr_ready();
}

FDR_EXPORT int fdrange_thread_range(int *lo, int *hi)
{
	unsigned width, slot;
	unsigned long l;

	if (!fdr_ready())
		return -ENODEV;
	width = __atomic_load_n(&fdr_st.width, __ATOMIC_RELAXED);
	if (!width)
		return -ERANGE;
	slot = fdr_thread_slot();
	l = fdr_geom_lo(&fdr_st.cfg, width, slot);
	*lo = (int)l;
	*hi = (int)(l + width);
	return 0;
}

FDR_EXPORT int fdrange_range_of_fd(int fd)
{
	int r;

	if (!fdr_ready())
		return -ENODEV;
	r = fdr_geom_range_of(&fdr_st.cfg, __atomic_load_n(&fdr_st.width, __ATOMIC_RELAXED), fd);
	return r < 0 ? -ENOENT : r;
}

FDR_EXPORT int fdrange_report(int fd)
{
	if (__atomic_load_n(&fdr_st.phase, __ATOMIC_ACQUIRE) != FDR_READY)
		fdr_init();
	return fdr_report_write(fd);
}
