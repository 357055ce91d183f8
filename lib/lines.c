/* SPDX-License-Identifier: MIT */
/*
 * The lines pool.  What separates two threads in the kernel's fd[] array
 * is the 64-byte line of 8 fd pointers, not the 64-fd chunk: a thread that
 * holds a handful of fds (a thread per connection with its one file, a
 * thread pool's worker with the file it serves, an aio helper) needs one
 * line, and a whole chunk for it multiplied fd numbers by the threads
 * (200 handler threads: 13504 instead of 406).  So a thread's first fds go
 * to one 8-fd line of its own in a chunk of the lines pool (FDR_OWN_LINES),
 * the lowest free line first; only a thread that fills its line goes on to
 * chunks (place.c), at the cost of one extra try, once.  A line goes back
 * when its thread exits (owners.c's release); the pool keeps its chunks.
 */
#include "lines.h"
#include "geometry.h"

static bool take(unsigned o, unsigned idx)
{
	uint32_t cur = 0;

	return __atomic_compare_exchange_n(&fdr_p->lines[idx], &cur, fdr_owner_id(o), false,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static unsigned take_in(unsigned o, unsigned c, unsigned long cap)
{
	for (unsigned l = 0; l < FDR_LINES_PER_CHUNK; l++) {
		unsigned idx = c * FDR_LINES_PER_CHUNK + l;

		if (fdr_line_lo(fdr_st.cfg.base, idx) + 8 > cap)
			break;
		if (!__atomic_load_n(&fdr_p->lines[idx], __ATOMIC_RELAXED) && take(o, idx))
			return idx;
	}
	return FDR_NO_LINE;
}

unsigned fdr_line_of(unsigned o, unsigned long cap, bool *bounded)
{
	struct fdr_blk_owner *ow = fdr_owner(o);
	unsigned held = __atomic_load_n(&ow->line, __ATOMIC_RELAXED), idx = FDR_NO_LINE, c;
	uint32_t none = 0;

	if (held)
		return fdr_line_lo(fdr_st.cfg.base, held - 1) + 8 <= cap ? held - 1 : FDR_NO_LINE;
	for (c = fdr_owner_next_chunk(FDR_OWN_LINES, 0, cap); c != FDR_NO_CHUNK && idx == FDR_NO_LINE;
	     c = fdr_owner_next_chunk(FDR_OWN_LINES, c + 1, cap))
		idx = take_in(o, c, cap);
	if (idx == FDR_NO_LINE) {
		c = fdr_owner_claim_lowest(FDR_OWN_LINES, cap, bounded);
		if (c == FDR_NO_CHUNK)
			return FDR_NO_LINE;
		idx = take_in(o, c, cap);
		if (idx == FDR_NO_LINE)
			return FDR_NO_LINE;
	}
	/* Threads sharing the owner (FDRANGE_SLOTS) may race: one line each
	 * owner, the loser gives its back. */
	if (!__atomic_compare_exchange_n(&ow->line, &none, idx + 1, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED)) {
		uint32_t mine = fdr_owner_id(o);

		__atomic_compare_exchange_n(&fdr_p->lines[idx], &mine, 0, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
		return fdr_line_lo(fdr_st.cfg.base, none - 1) + 8 <= cap ? none - 1 : FDR_NO_LINE;
	}
	__atomic_store_n(&ow->lines, 1, __ATOMIC_RELAXED);
	fdr_count(&ow->claims);
	return idx;
}
