/* SPDX-License-Identifier: MIT */
/*
 * The lines pool (lines.c): an 8-fd line for a thread that holds no chunk.
 */
#ifndef FDR_LINES_H
#define FDR_LINES_H

#include "owners.h"

#define FDR_NO_LINE (~0u)

/*
 * Does a thread use its line of the pool, given whether it holds @chunks?
 * Not for a fixed FDRANGE_WIDTH.  Where the kernel allocates and closes in
 * ranges under a lock per 64-fd group (kernel patch 0007), only until it
 * has a chunk: a thread that has outgrown its line and goes back to it
 * whenever closes free a slot there would share the group lock of the
 * line's chunk with seven other threads, as it shared file_lock, for
 * every fd it gets there.  A thread with a few fds keeps its line: a
 * chunk each would spend the do-no-harm bound's fd numbers on them.
 */
static inline bool fdr_line_used(bool chunks)
{
	return !fdr_st.cfg.width && !(chunks && fdr_st.kernel_groups);
}

/* Line @line (chunk * 8 + l) holds fds [BASE + 8 line, BASE + 8 line + 8). */
static inline unsigned long fdr_line_lo(unsigned base, unsigned line)
{
	return base + 8ul * line;
}

/* The id (fdr_owner_id, block.h) of the owner holding line @line; 0 none. */
static inline unsigned fdr_line_owner(unsigned line)
{
	struct fdr_proc *p = fdr_p;

	return line < p->nchunks * FDR_LINES_PER_CHUNK ?
	       __atomic_load_n(&p->lines[line], __ATOMIC_RELAXED) : 0;
}

/*
 * The line owner @o holds, wholly below @cap, claiming the lowest free one
 * for it if it holds none; FDR_NO_LINE if none can be had (*@bounded set
 * when the bound refused the pool a new chunk).
 */
unsigned fdr_line_of(unsigned o, unsigned long cap, bool *bounded) FDR_HIDDEN;

#endif
