/* SPDX-License-Identifier: MIT */
/* The per-process placement state (pstate.h): its one definition and reset. */
#include "pstate.h"

struct fdr_pstate fdr_ps FDR_HIDDEN = { .bound = { .last_helped = true } };

void fdr_pstate_reset(void)
{
	/* The bound (bound.c): back to FD_SETSIZE, nothing counted. */
	__atomic_store_n(&fdr_st.bound_top, FDR_FD_SETSIZE, __ATOMIC_RELAXED);
	__atomic_store_n(&fdr_ps.bound.last_helped, true, __ATOMIC_RELAXED);
	__atomic_store_n(&fdr_ps.bound.refused, 0, __ATOMIC_RELAXED);
	fdr_ps.bound.counting = 0;

	/* The hand-off learner (handoff.c): nothing learned. */
	fdr_ps.learner.busy = 0;
	fdr_ps.learner.gen = 0;
	fdr_ps.learner.rot_off = 0;
	fdr_ps.learner.window = 0;
	fdr_ps.learner.waited = 0;
	fdr_ps.learner.stale = false;
	for (unsigned i = 0; i < FDR_HANDOFF_RING; i++)
		fdr_ps.learner.ring[i] = 0;

	/* The learning pool (place.c): from its lowest line.  A new block
	 * has no pool chunk yet, so the first pick is the same whatever
	 * the cursor says; the reset only keeps a fork child's cursor
	 * from starting at its parent's. */
	__atomic_store_n(&fdr_ps.sparse_cursor, 0, __ATOMIC_RELAXED);
}
