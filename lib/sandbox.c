/* SPDX-License-Identifier: MIT */
/*
 * Seccomp sandboxes.  A filter allows what its program makes, and a move
 * makes a call the program may never make itself: Tor's sandbox allows
 * fcntl only for F_GETFD/F_SETFD/F_GETFL/F_SETFL, so the library's
 * F_DUPFD would be killed with SIGSYS.  So the library makes no syscall
 * of its own once a filter may be in force:
 *  - inherited at exec: /proc/self/status says "Seccomp: 2" at start-up,
 *    read before anything else, and then nothing else is done (no block,
 *    no limit lookup, no table growth: nothing the filter may forbid; the
 *    read itself uses only what the dynamic loader used to load us);
 *  - installed while running: prctl(PR_SET_SECCOMP) and seccomp(2) through
 *    syscall() are wrapped, and the library stops before the filter is
 *    installed, in every thread (a filter binds its thread and the threads
 *    it makes later; with TSYNC all threads at once, so moves in flight are
 *    waited for).  If the install then fails, the library stays stopped.
 * What is left is what needs no syscall: fds pass through untouched, and
 * the block (if any) says why.  A filter installed by a raw syscall
 * instruction, not through libc, is not seen.
 */
#include "sandbox.h"
#include "krange.h"
#include "moves.h"
#include "proc.h"
#include "status.h"

bool fdr_sandbox_in_status(void)
{
	/* 0: no filter; 1: strict mode; 2: a filter. */
	return fdr_status_value("Seccomp:") > 0;
}

/* A TSYNC install waits at most about this many pauses for moves in flight. */
#define SANDBOX_SPINS (1ul << 24)

void fdr_sandbox_coming(bool tsync)
{
	struct fdr_blk_hdr *h = __atomic_load_n(&fdr_p->hdr, __ATOMIC_ACQUIRE);

	/* Before the filter: the kernel would go on numbering this thread's
	 * fds in its range, and the library could no longer correct any. */
	fdr_krange_drop();
	__atomic_store_n(&fdr_st.sandboxed, true, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fdr_st.active, false, __ATOMIC_SEQ_CST);
	fdr_st.why = FDR_WHY_SECCOMP;
	if (h) {
		__atomic_store_n(&h->why_inactive, FDR_WHY_SECCOMP, __ATOMIC_RELAXED);
		__atomic_fetch_and(&h->flags, ~FDR_BLK_ACTIVE, __ATOMIC_RELAXED);
	}
	if (tsync)
		fdr_moves_wait(SANDBOX_SPINS);
}
