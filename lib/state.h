/* SPDX-License-Identifier: MIT */
/*
 * Process-wide state of the library: configuration, the current geometry,
 * the per-range counters, and each thread's range.
 */
#ifndef FDR_STATE_H
#define FDR_STATE_H

#include "options.h"

#include <stdbool.h>

#define FDR_HIDDEN __attribute__((visibility("hidden")))
#define FDR_EXPORT __attribute__((visibility("default")))
/*
 * What each thread writes gets this much to itself: two 64-byte lines,
 * because x86's adjacent-line prefetcher fetches lines in 128-byte pairs
 * (and some arm64 cores have 128-byte lines), so a counter one line away
 * from another thread's still makes the pair bounce between cores.
 */
#define FDR_PAD 128

enum fdr_phase { FDR_UNINIT, FDR_BUSY, FDR_READY };

/* Why an fd was not moved into its range. */
enum fdr_reason {
	FDR_FB_FULL,   /* F_DUPFD found no free fd inside the range */
	FDR_FB_LIMIT,  /* the range is not below RLIMIT_NOFILE (EINVAL, EMFILE, no geometry) */
	FDR_FB_OTHER,  /* any other F_DUPFD error */
	FDR_FB_NR
};

/*
 * Counters of one range.  Each range has FDR_PAD bytes of its own: in the
 * thread policy only the range's own thread writes it, so the placement
 * path never writes a line another thread writes too.
 */
struct fdr_range_stats {
	unsigned long placed;          /* moved into the range */
	unsigned long inplace;         /* already inside it, left alone */
	unsigned long kept;            /* not moved by rule: fds 0-2, policy */
	unsigned long fallback[FDR_FB_NR];
	unsigned long threads;         /* threads given this range */
} __attribute__((aligned(FDR_PAD)));

struct fdr_state {
	int phase;                 /* enum fdr_phase */
	bool active;               /* placing fds */
	bool secure;               /* AT_SECURE: environment ignored */
	bool config_error;         /* bad FDRANGE_* value: passing through */
	struct fdr_config cfg;
	unsigned long nr_open;     /* fs.nr_open, read once */
	unsigned long limit;       /* soft RLIMIT_NOFILE as last seen */
	unsigned width;            /* range width for limit; 0 = no fit */
	unsigned long limit_changes;

	/* written once per new thread */
	unsigned next_thread __attribute__((aligned(FDR_PAD)));
	/* written on every accept under the roundrobin policy */
	unsigned long rr_next __attribute__((aligned(FDR_PAD)));

	struct fdr_range_stats range[FDR_MAX_SLOTS];
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

/* The calling thread's range index, assigning one on first use. */
unsigned fdr_thread_slot(void) FDR_HIDDEN;

/* A new soft RLIMIT_NOFILE took effect in this process. */
void fdr_limit_changed(unsigned long soft) FDR_HIDDEN;

static inline void fdr_count(unsigned long *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* Write the report to @fd.  Returns 0 or -errno. */
int fdr_report_write(int fd) FDR_HIDDEN;

#endif
