/* SPDX-License-Identifier: MIT */
/*
 * Owners and their chunks (see owners.c): which thread's fds go where.
 */
#ifndef FDR_OWNERS_H
#define FDR_OWNERS_H

#include "proc.h"

#define FDR_NO_OWNER (~0u)
#define FDR_NO_CHUNK (~0u)

/* The calling thread's owner index, given one on first use; FDR_NO_OWNER
 * when none can be had now (no block, or a signal handler interrupted the
 * assignment). */
unsigned fdr_owner_self(void) FDR_HIDDEN;

/* The calling thread's tid, cached: one gettid per thread and process. */
uint32_t fdr_self_tid(void) FDR_HIDDEN;

static inline struct fdr_blk_owner *fdr_owner(unsigned o)
{
	return &fdr_p->owners[o];
}

/* The id (fdr_owner_id, block.h) of the owner holding chunk @c; 0 none. */
static inline unsigned fdr_chunk_owner(unsigned c)
{
	struct fdr_proc *p = fdr_p;

	return c < p->nchunks ? __atomic_load_n(&p->chunks[c], __ATOMIC_RELAXED) : 0;
}

/* Owner @o's lowest chunk at or above @from wholly below @cap, or FDR_NO_CHUNK. */
unsigned fdr_owner_next_chunk(unsigned o, unsigned from, unsigned long cap) FDR_HIDDEN;

/*
 * Claim chunk @c (wholly below @cap) for @o if nobody holds it, @o may and
 * the bound (bound.c) allows; true if @o holds it now.
 */
bool fdr_owner_claim(unsigned o, unsigned c, unsigned long cap) FDR_HIDDEN;

/* Claim for @o the lowest unclaimed chunk it may hold below @cap, or
 * FDR_NO_CHUNK; *@bounded (if given) is set when the bound refused it. */
unsigned fdr_owner_claim_lowest(unsigned o, unsigned long cap, bool *bounded) FDR_HIDDEN;

/* In the constructor: the thread-exit hook. */
void fdr_owners_init(void) FDR_HIDDEN;
/* A new block (at start-up, or a fork child's): the pools and the lanes. */
void fdr_owners_setup(struct fdr_blk_hdr *h) FDR_HIDDEN;

#endif
