/* SPDX-License-Identifier: MIT */
/*
 * Process-wide state of the library: the configuration, the limit the
 * chunks must stay below, and where the block (block.h) is.  The block
 * holds everything that changes while the program runs; this holds what
 * is fixed at start-up, plus the few words the hot path reads.
 */
#ifndef FDR_STATE_H
#define FDR_STATE_H

#include "block.h"
#include "options.h"

#include <stdbool.h>
#include <stdint.h>

#define FDR_HIDDEN __attribute__((visibility("hidden")))
#define FDR_EXPORT __attribute__((visibility("default")))
/*
 * What each thread writes gets this much to itself: two 64-byte lines,
 * because x86's adjacent-line prefetcher fetches lines in 128-byte pairs
 * (and some arm64 cores have 128-byte lines), so a counter one line away
 * from another thread's still makes the pair bounce between cores.
 */
#define FDR_PAD FDR_OWNER_SIZE

enum fdr_phase { FDR_UNINIT, FDR_BUSY, FDR_READY };

struct fdr_state {
	int phase;                 /* enum fdr_phase */
	bool active;               /* placing fds */
	bool secure;               /* AT_SECURE: environment ignored */
	bool config_error;         /* bad or unknown FDRANGE_* variable: passing through */
	struct fdr_config cfg;
	unsigned ncpus;            /* online CPUs at start-up */
	unsigned long nr_open;     /* fs.nr_open, read once */

	/* The block (block.c): pointers set at start-up and in a fork child. */
	struct fdr_blk_hdr *hdr;
	struct fdr_blk_owner *owners;
	uint32_t *chunks;          /* owner index + 1 per chunk */
	uint64_t *recs;
	unsigned nchunks;          /* chunk table entries (below nr_open) */
	uint64_t nrecs;

	/* Read on every placement, written when the limit changes. */
	unsigned long limit __attribute__((aligned(FDR_PAD)));  /* soft RLIMIT_NOFILE */
	unsigned long cap;         /* fdr_geom_cap(limit, nr_open) */

	/* Written once per new owner and per claimed chunk. */
	unsigned claim_from __attribute__((aligned(FDR_PAD)));  /* lowest chunk maybe unclaimed */
	unsigned next_thread;      /* threads that asked for an owner */

	/*
	 * In a child of fork(): the parent's block, still mapped but never
	 * written, until the child makes its own at its first placement
	 * (blockmap.c); and whether the child has shown a thread other than
	 * the one that forked (glibc's flag stays cleared in the child).
	 */
	struct fdr_blk_hdr *parent_hdr;
	bool child_single;
	unsigned fork_epoch;
};

extern struct fdr_state fdr_st FDR_HIDDEN;

/* Initialise once; safe from any thread, a signal handler or a constructor. */
void fdr_init(void) FDR_HIDDEN;

static inline bool fdr_ready(void)
{
	if (__builtin_expect(__atomic_load_n(&fdr_st.phase, __ATOMIC_ACQUIRE) != FDR_READY, 0)) {
		fdr_init();
		if (__atomic_load_n(&fdr_st.phase, __ATOMIC_ACQUIRE) != FDR_READY)
			return false;
	}
	return fdr_st.active;
}

/*
 * glibc clears this when the process creates its first thread and never
 * sets it again.  While it is set there is no other thread whose fds could
 * share a line with ours: nothing is moved, no syscall is made.
 */
extern char __libc_single_threaded __attribute__((weak));

/* In a fork child: no thread but the forking one seen yet (owners.c). */
bool fdr_child_still_single(void) FDR_HIDDEN;

static inline bool fdr_single_threaded(void)
{
	if (&__libc_single_threaded && __atomic_load_n(&__libc_single_threaded, __ATOMIC_RELAXED))
		return true;
	return __builtin_expect(__atomic_load_n(&fdr_st.child_single, __ATOMIC_RELAXED), 0) &&
	       fdr_child_still_single();
}

/*
 * Set in the forking thread from our fork prepare handler until the end of
 * our child handler: other libraries' fork handlers that create fds then
 * (in the child, before ours has switched blocks) must not be placed with
 * the parent's block.
 */
extern __thread int fdr_tls_forking __attribute__((tls_model("initial-exec"))) FDR_HIDDEN;

/* A new soft RLIMIT_NOFILE took effect in this process. */
void fdr_limit_changed(unsigned long soft) FDR_HIDDEN;

static inline void fdr_count(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* Write the report to @fd.  Returns 0 or -errno. */
int fdr_report_write(int fd) FDR_HIDDEN;
/* At exit: the report FDRANGE_STATS asks for, if any. */
void fdr_report_at_exit(void) FDR_HIDDEN;

#endif
