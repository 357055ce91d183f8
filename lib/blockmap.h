/* SPDX-License-Identifier: MIT */
/* Making the stats block (block.h) of this process: see blockmap.c. */
#ifndef FDR_BLOCKMAP_H
#define FDR_BLOCKMAP_H

#include "proc.h"

/* At start-up: the block, in a memfd or else private memory.  0 or -errno. */
int fdr_block_create(void) FDR_HIDDEN;

/* In a child (of fork, _Fork, clone), at its first placement: a block of
 * its own.  false: none (yet); pass the fd through. */
bool fdr_block_for_child(void) FDR_HIDDEN;

/* The settings and geometry as they are now, into the header. */
void fdr_block_geometry(void) FDR_HIDDEN;

#endif
