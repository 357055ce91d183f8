/* SPDX-License-Identifier: MIT */
/*
 * Start-up and shutdown, in one visible order (state.c), and readiness:
 * the wrappers ask fdr_ready() before anything else.
 */
#ifndef FDR_STATE_H
#define FDR_STATE_H

#include "global.h"

/* Initialise once; safe from any thread, a signal handler or a constructor. */
void fdr_init(void) FDR_HIDDEN;

/* Initialised, and placing fds (not disabled, misconfigured or sandboxed). */
static inline bool fdr_ready(void)
{
	if (__builtin_expect(__atomic_load_n(&fdr_st.phase, __ATOMIC_ACQUIRE) != FDR_READY, 0)) {
		fdr_init();
		if (__atomic_load_n(&fdr_st.phase, __ATOMIC_ACQUIRE) != FDR_READY)
			return false;
	}
	return __atomic_load_n(&fdr_st.active, __ATOMIC_RELAXED);
}

/* A new soft RLIMIT_NOFILE took effect in this process. */
void fdr_limit_changed(unsigned long soft) FDR_HIDDEN;

/* Write the report to @fd.  Returns 0 or -errno. */
int fdr_report_write(int fd) FDR_HIDDEN;
/* At exit: the report FDRANGE_STATS asks for, if any. */
void fdr_report_at_exit(void) FDR_HIDDEN;

#endif
