/* SPDX-License-Identifier: MIT */
/*
 * The words of this process's placement state that are neither in its
 * block (block.h) nor settings (fdr_st, global.h): how far the bound's
 * count of open fds has got (bound.c), the hand-off learner's own words
 * (handoff.c) and the learning pool's cursor (place.c).  They describe
 * the block in use, so they are reset in one place, fdr_pstate_reset(),
 * when a block starts to be used: at start-up and, in a fork child, when
 * it makes its own block at its first placement (blockmap.c).  A fork
 * child keeps its parent's words until then and uses none of them: they
 * are only reached through its own block, which is published after the
 * reset.  No fork handler touches them.
 */
#ifndef FDR_PSTATE_H
#define FDR_PSTATE_H

#include "global.h"

/* The hand-off learner's ring: the last accepts and who served them. */
#define FDR_HANDOFF_RING 64u

struct fdr_pstate {
	/* bound.c */
	struct {
		int counting;            /* one count at a time; others fall back meanwhile */
		bool last_helped;        /* the last count raised the bound */
		unsigned long refused;   /* claims refused since the last count */
	} bound __attribute__((aligned(FDR_PAD)));

	/* handoff.c */
	struct {
		/* seq + 1 (bits 0..31) | acceptor owner id (32..47) | server owner id (48..63) */
		uint64_t ring[FDR_HANDOFF_RING];
		int busy;                /* the learner's try-lock */
		unsigned gen;            /* model generation, bumped on every change */
		unsigned long rot_off;   /* rotation position of seq k: (k + rot_off) % L */
		uint32_t window;         /* the last WINDOW checks, 1 = miss */
		unsigned waited;         /* evaluations that found a rotation incomplete */
		bool stale;              /* a predicted thread is gone */
	} learner __attribute__((aligned(FDR_PAD)));

	/* place.c: the learning pool's line after the last one used */
	unsigned sparse_cursor __attribute__((aligned(FDR_PAD)));
};

extern struct fdr_pstate fdr_ps FDR_HIDDEN;

/*
 * A block starts to be used (blockmap.c), before other threads can see it:
 * nothing counted, nothing learned.  Memory only (async-signal-safe).
 */
void fdr_pstate_reset(void) FDR_HIDDEN;

#endif
