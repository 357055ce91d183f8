/* SPDX-License-Identifier: MIT */
/*
 * What every part of the library reads: the settings, the limit the chunks
 * must stay below, and the few words the hot path needs.  state.c fills it
 * at start-up; the fields below say who writes them later.  This process's
 * own block is not here but in proc.h, in memory a fork child does not
 * inherit.
 */
#ifndef FDR_GLOBAL_H
#define FDR_GLOBAL_H

#include "block.h"
#include "options.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FDR_HIDDEN __attribute__((visibility("hidden")))
#define FDR_EXPORT __attribute__((visibility("default")))
/* initial-exec: the general TLS model may call malloc on first access. */
#define FDR_TLS __thread __attribute__((tls_model("initial-exec")))
/*
 * What each thread writes gets this much to itself: two 64-byte lines,
 * because x86's adjacent-line prefetcher fetches lines in 128-byte pairs
 * (and some arm64 cores have 128-byte lines), so a counter one line away
 * from another thread's still makes the pair bounce between cores.
 */
#define FDR_PAD FDR_OWNER_SIZE
/* select()'s fd_set holds fds below this; glibc's FD_SET aborts above it. */
#define FDR_FD_SETSIZE 1024u

enum fdr_phase { FDR_UNINIT, FDR_BUSY, FDR_READY };

struct fdr_state {
	int phase;                 /* enum fdr_phase */
	/* Placing fds.  Set at start-up; cleared for good, in every thread,
	 * when the program installs a seccomp filter (sandbox.c). */
	bool active;
	bool secure;               /* AT_SECURE: environment ignored */
	bool sandboxed;            /* a seccomp filter is or will be in force */
	bool kernel_range;         /* the kernel has PR_SET_FD_RANGE and it is used */
	bool kernel_groups;        /* ... and allocates and closes in ranges without
				    * the table's lock, per 64-fd group (lines.h) */
	uint32_t why;              /* enum fdr_why: what the block and the report say */
	char why_msg[160];         /* FDR_WHY_CONFIG: the message printed at start */
	struct fdr_config cfg;
	unsigned ncpus;            /* online CPUs at start-up */
	unsigned long nr_open;     /* fs.nr_open, read once */
	size_t blk_size;           /* bytes of a block (every process of the program: the same) */
	/* The block last mapped into this address space: this process's own,
	 * or in a fork child that has not made one yet, its parent's. */
	struct fdr_blk_hdr *last_hdr;
	/* Process epochs handed out along this line of descent (proc.c). */
	unsigned epoch_next;

	/* Read on every placement, written when the limit changes. */
	unsigned long limit __attribute__((aligned(FDR_PAD)));  /* soft RLIMIT_NOFILE */
	unsigned long cap;         /* fdr_geom_cap(limit, nr_open) */
	unsigned long bound_top;   /* chunks end at or below it (bound.c) */

	/* Written once per new owner and per claimed chunk. */
	unsigned claim_from __attribute__((aligned(FDR_PAD)));  /* lowest chunk maybe unclaimed */
	unsigned next_thread;      /* threads that asked for an owner */
};

extern struct fdr_state fdr_st FDR_HIDDEN;

/*
 * glibc clears this when the process creates its first thread and never
 * sets it again, not even in a fork child (proc.c tracks children).
 */
extern char __libc_single_threaded __attribute__((weak));

static inline void fdr_count(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static inline void fdr_count32(uint32_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

#endif
