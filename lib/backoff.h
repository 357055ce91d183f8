/* SPDX-License-Identifier: MIT */
/*
 * After a placement found no room for an owner, this thread leaves that
 * owner's next few fds where the kernel put them (backoff.c).  The slots
 * are this thread's words (fdr_thread.backoff, proc.h).
 */
#ifndef FDR_BACKOFF_H
#define FDR_BACKOFF_H

#include "proc.h"

static inline struct fdr_backoff *fdr_backoff_of(unsigned o)
{
	return &fdr_t.backoff[o % FDR_BACKOFF_SLOTS];
}

/* Skip this placement for owner @o, capped at @cap?  If so, *@why is the
 * fallback it counts as. */
bool fdr_backoff_skip(unsigned o, unsigned long cap, unsigned *why) FDR_HIDDEN;

/* A placement for owner @o, capped at @cap, found no room: fallback @why. */
void fdr_backoff_failed(unsigned o, unsigned long cap, unsigned why) FDR_HIDDEN;

/* An fd of owner @o was found in place or placed: its back-off ends.  On
 * the path of every fd found in place: inline, one load. */
static inline void fdr_backoff_end(unsigned o)
{
	struct fdr_backoff *b = fdr_backoff_of(o);

	if (b->owner == fdr_owner_id(o))
		b->owner = 0;
}

#endif
