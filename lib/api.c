/* SPDX-License-Identifier: MIT */
/* The public API declared in fdrange.h. */
#include "fdrange.h"
#include "blockmap.h"
#include "geometry.h"
#include "lines.h"
#include "owners.h"
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
	unsigned long cap, l, h;
	unsigned o, first, end;

	if (!fdr_ready())
		return -ENODEV;
	/* A fork child's own block may not exist yet (the parent's is not ours). */
	if (!__atomic_load_n(&fdr_p->hdr, __ATOMIC_ACQUIRE) && !fdr_block_for_child())
		return -EAGAIN;
	o = fdr_owner_self();
	if (o == FDR_NO_OWNER)
		return -EAGAIN;
	cap = __atomic_load_n(&fdr_st.cap, __ATOMIC_RELAXED);
	if (fdr_st.cfg.width) {
		/* A fixed range, cut where the limit cuts it. */
		fdr_geom_claimable(&fdr_st.cfg, o - FDR_OWN_FIRST,
				   fdr_geom_nchunks(fdr_st.cfg.base, cap), &first, &end);
		if (first >= end)
			return -ERANGE;
		l = fdr_chunk_lo(fdr_st.cfg.base, first);
		h = fdr_chunk_lo(fdr_st.cfg.base, end);
	} else if (!__atomic_load_n(&fdr_owner(o)->chunks, __ATOMIC_RELAXED) &&
		   __atomic_load_n(&fdr_owner(o)->kind, __ATOMIC_RELAXED) == FDR_KIND_THREAD) {
		/* A thread without chunks: its line (given one, as fdrange.h
		 * promises), where its next fd goes first. */
		unsigned line = fdr_line_of(o, cap, NULL);

		if (line == FDR_NO_LINE)
			return -ERANGE;
		l = fdr_line_lo(fdr_st.cfg.base, line);
		h = l + 8;
	} else {
		/* The chunk the thread's next fd goes to first. */
		unsigned c = __atomic_load_n(&fdr_owner(o)->hint, __ATOMIC_RELAXED);

		c = c ? c - 1 : fdr_owner_next_chunk(o, 0, cap);
		if (c == FDR_NO_CHUNK || fdr_chunk_lo(fdr_st.cfg.base, c) + FDR_CHUNK_FDS > cap)
			c = fdr_owner_next_chunk(o, 0, cap);
		if (c == FDR_NO_CHUNK)
			c = fdr_owner_claim_lowest(o, cap, NULL);
		if (c == FDR_NO_CHUNK)
			return -ERANGE;
		l = fdr_chunk_lo(fdr_st.cfg.base, c);
		h = l + FDR_CHUNK_FDS;
	}
	*lo = (int)l;
	*hi = (int)h;
	return 0;
}

FDR_EXPORT int fdrange_range_of_fd(int fd)
{
	long c;
	uint32_t id;

	if (!fdr_ready())
		return -ENODEV;
	if (!__atomic_load_n(&fdr_p->hdr, __ATOMIC_ACQUIRE))
		return -ENOENT;
	c = fdr_chunk_of(fdr_st.cfg.base, fd);
	id = c < 0 ? 0 : fdr_chunk_owner((unsigned)c);
	/* A line of the lines pool is its holder's. */
	if (id == fdr_owner_id(FDR_OWN_LINES))
		id = fdr_line_owner((unsigned)(fd - (int)fdr_st.cfg.base) / 8);
	return id >= fdr_owner_id(FDR_OWN_FIRST) ? (int)(fdr_owner_index(id) - FDR_OWN_FIRST) :
	       -ENOENT;
}

FDR_EXPORT int fdrange_report(int fd)
{
	/* Before initialisation there is nothing to report, and initialising
	 * from here (perhaps a signal handler) is not worth the risk. */
	if (__atomic_load_n(&fdr_st.phase, __ATOMIC_ACQUIRE) != FDR_READY)
		return -EAGAIN;
	return fdr_report_write(fd);
}
