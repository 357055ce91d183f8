/* SPDX-License-Identifier: MIT */
/*
 * Moves in flight.  While an fd is moved it holds two numbers (the
 * kernel's and the copy's) for the time of one F_DUPFD and one close; each
 * moving thread marks it in its own owner record, so that two others can
 * wait for it: a sandbox install (sandbox.c), and a creation that failed
 * with EMFILE because of it (wrap.h).
 */
#ifndef FDR_MOVES_H
#define FDR_MOVES_H

#include "proc.h"

/* A creation is retrying (fdr_starve_begin): true if this move is held
 * off; false once the hold has lasted too long. */
bool fdr_move_held_off(void) FDR_HIDDEN;

/*
 * Before the second number is taken.  false: the library has stopped (a
 * seccomp filter is coming, or a creation near the limit is retrying) and
 * the fd must stay where it is.  The sequentially consistent add and load
 * pair with the sandbox's store and scan: either the sandbox sees this
 * move, or this move sees the sandbox.  fdr_t.moving never counts more
 * than this thread has in busy (or in making): raised after, lowered
 * before, so that a signal handler reading both between them overcounts
 * the others' moves (a bounded wait), never undercounts them (a TSYNC
 * install that misses one).
 */
static inline bool fdr_move_begin(struct fdr_blk_owner *me)
{
	__atomic_fetch_add(&me->busy, 1, __ATOMIC_SEQ_CST);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	fdr_t.moving++;
	/* Likewise with a starved creation (fdr_starve_begin): it waits for
	 * this move, or this move is not made. */
	if (__builtin_expect(__atomic_load_n(&fdr_st.active, __ATOMIC_SEQ_CST) &&
			     (!__atomic_load_n(&fdr_p->starved, __ATOMIC_SEQ_CST) ||
			      !fdr_move_held_off()), 1))
		return true;
	fdr_t.moving--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&me->busy, 1, __ATOMIC_RELEASE);
	return false;
}

static inline void fdr_move_end(struct fdr_blk_owner *me)
{
	fdr_t.moving--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&me->busy, 1, __ATOMIC_RELEASE);
}

/* Wait, at most about @spins pauses, until no other thread has a move in
 * flight.  This thread's own moves are not waited for: in a signal handler
 * that interrupted one it cannot end meanwhile. */
void fdr_moves_wait(unsigned long spins) FDR_HIDDEN;

/*
 * A wrapped creation failed with EMFILE, maybe because a move in flight
 * held the number it would have had (plain Linux would have given it).
 * Between these two it is made again: new moves are held off, and those
 * in flight have ended (waited for, bounded).  The call made again may
 * block (accept, a FIFO's open) or never come back (cancellation, a
 * longjmp out of a handler): so the hold also ends by itself, after
 * FDR_HOLD_MAX moves held off.
 */
void fdr_starve_begin(void) FDR_HIDDEN;

static inline void fdr_starve_end(void)
{
	int n = __atomic_load_n(&fdr_p->starved, __ATOMIC_RELAXED);

	/* Never below 0: a fork from a handler that interrupted a retry makes
	 * a child whose (wiped) count this retry never raised. */
	while (n > 0 && !__atomic_compare_exchange_n(&fdr_p->starved, &n, n - 1, true,
						     __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

#endif
