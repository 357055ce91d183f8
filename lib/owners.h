/* SPDX-License-Identifier: MIT */
/*
 * Owners and their chunks (see owners.c): which thread's fds go where.
 */
#ifndef FDR_OWNERS_H
#define FDR_OWNERS_H

#include "state.h"

#define FDR_NO_OWNER (~0u)
#define FDR_NO_CHUNK (~0u)

/* The calling thread's owner index, given one on first use; FDR_NO_OWNER
 * when none can be had now (a signal handler interrupted the assignment). */
unsigned fdr_owner_self(void) FDR_HIDDEN;

/* The calling thread's tid, cached: one gettid per thread, ever. */
uint32_t fdr_self_tid(void) FDR_HIDDEN;

static inline struct fdr_blk_owner *fdr_owner(unsigned o)
{
	return &fdr_st.owners[o];
}

static inline unsigned fdr_chunk_owner(unsigned c)
{
	return c < fdr_st.nchunks ? __atomic_load_n(&fdr_st.chunks[c], __ATOMIC_RELAXED) : 0;
}

/* Owner @o's lowest chunk at or above @from, or FDR_NO_CHUNK. */
unsigned fdr_owner_next_chunk(unsigned o, unsigned from) FDR_HIDDEN;

/* Claim chunk @c for @o if nobody holds it and @o may; true if @o holds it now. */
bool fdr_owner_claim(unsigned o, unsigned c) FDR_HIDDEN;

/* Claim for @o the lowest unclaimed chunk it may hold below the cap, or FDR_NO_CHUNK. */
unsigned fdr_owner_claim_lowest(unsigned o) FDR_HIDDEN;

/* Start-up: the pools, the roundrobin lanes, the thread-exit hook. */
void fdr_owners_init(void) FDR_HIDDEN;
/* Inside fork, in the child (memory only): the forking thread is the only one. */
void fdr_owners_atfork_child(void) FDR_HIDDEN;
/* The child's own block is made: only the forking thread's owner lives on. */
void fdr_owners_child_fixup(void) FDR_HIDDEN;

#endif
