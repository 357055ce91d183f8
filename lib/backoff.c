/* SPDX-License-Identifier: MIT */
/*
 * The back-off after a fallback of the placement rule (place.c).
 *
 * No room for owner @o: its chunks are full and no chunk can be claimed
 * (the do-no-harm bound, or a fixed width).  The next tries would most
 * likely fail too, each a probe: an F_DUPFD and a close, 2 more
 * allocations that write the bitmap and slot lines every thread shares,
 * until the owner's own fds close or the bound rises.  A process that
 * holds about FD_SETSIZE fds keeps hitting the bound (memcached at 1000
 * connections in the coherence model:
 * docs/results/2026-12-05-coherence-open-fd-count.md).  So after such a
 * fallback this thread leaves the next 1 fd for @o where the kernel put
 * it without a try, after the next failure 2, then 4, up to
 * FDR_BACKOFF_MAX; they count as the same fallback.  It ends at an fd of
 * @o found in place or placed, and is not applied where the try could go
 * further than the failed one could: a higher cap (an fd the select()
 * rule did not hold below 1024, a raised limit) or a higher bound.  The
 * slots are this thread's (direct-mapped: with more owners than slots
 * one owner's failure may cut another's back-off short, which costs a
 * try); the skipped fds are still counted in the shared block.
 */
#include "backoff.h"

bool fdr_backoff_skip(unsigned o, unsigned long cap, unsigned *why)
{
	struct fdr_backoff *b = fdr_backoff_of(o);
	/* One load: a signal handler's skip in between costs a skip, never
	 * a wrap to 255. */
	unsigned left = b->left;

	if (b->owner != fdr_owner_id(o) || !left || left > FDR_BACKOFF_MAX || cap > b->cap ||
	    __atomic_load_n(&fdr_st.bound_top, __ATOMIC_RELAXED) > b->top)
		return false;
	b->left = (uint8_t)(left - 1);
	*why = b->why;
	return true;
}

void fdr_backoff_failed(unsigned o, unsigned long cap, unsigned why)
{
	struct fdr_backoff *b = fdr_backoff_of(o);
	unsigned step = b->owner == fdr_owner_id(o) ? b->step : 0;

	step = !step ? 1 : step >= FDR_BACKOFF_MAX / 2 ? FDR_BACKOFF_MAX : step * 2;
	b->owner = (uint16_t)fdr_owner_id(o);
	b->step = (uint8_t)step;
	b->why = (uint8_t)why;
	b->cap = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
	b->top = (uint32_t)__atomic_load_n(&fdr_st.bound_top, __ATOMIC_RELAXED);
	b->left = (uint8_t)step;
}
