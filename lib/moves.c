/* SPDX-License-Identifier: MIT */
/* Moves in flight: see moves.h. */
#include "moves.h"
#include "cpu_relax.h"

/*
 * Moves and block makings in flight, this thread's own (fdr_t.moving)
 * left out: they are counted the same way, in busy and in making, so the
 * total less ours is what other threads have in flight.  A signal handler
 * that interrupted its own thread's move must not wait for that one, but
 * must still wait for everyone else's (a TSYNC install).
 */
static bool others_moving(void)
{
	struct fdr_proc *p = fdr_p;
	const struct fdr_blk_hdr *h;
	unsigned long total = 0;

	/* A fork child's block being made (blockmap.c): syscalls in flight. */
	if (__atomic_load_n(&p->making, __ATOMIC_SEQ_CST) == FDR_MAKING)
		total++;
	h = __atomic_load_n(&p->hdr, __ATOMIC_ACQUIRE);
	if (h) {
		unsigned n = __atomic_load_n(&h->nowners, __ATOMIC_ACQUIRE);

		for (unsigned o = 0; o < n && o < FDR_MAX_OWNERS; o++)
			total += __atomic_load_n(&p->owners[o].busy, __ATOMIC_SEQ_CST);
	}
	return total > (unsigned long)fdr_t.moving;
}

void fdr_moves_wait(unsigned long spins)
{
	while (others_moving()) {
		if (!spins--)
			break;
		fdr_cpu_relax();
	}
}

/*
 * Moves are microseconds, but a mover preempted between its two calls is
 * off its CPU for a scheduler slice or more, and plain Linux would not fail
 * this creation at all: wait up to about a hundred milliseconds of pauses
 * (no syscall: a sandbox may be coming), only while a move is seen in
 * flight, which near the limit is rare.
 */
#define RETRY_SPINS (1ul << 22)
/* Moves held off per retry at most: a retry that blocks (or was cancelled
 * and never ended) stops placement for this many fds, not for good.  Many:
 * the count starts before the retry's wait, and a retrying thread that is
 * preempted meanwhile must still find the hold in force (a loop creating
 * and closing on another CPU makes hundreds of moves a millisecond). */
#define FDR_HOLD_MAX 8192u

/*
 * The retry is unconditional: a move that held the number the call needed
 * may have ended before any check, and nothing tells (a counter of
 * finished moves would be one more shared line written per move).  It
 * costs one failed syscall per EMFILE, and the creating calls fail with
 * EMFILE before any side effect (the fd is allocated first).  Holding new
 * moves off for the retry matters: a retry that only waited for the move
 * in flight fell in step with a thread creating and closing in a loop, and
 * met its next move every time.
 */
void fdr_starve_begin(void)
{
	struct fdr_proc *p = fdr_p;

	__atomic_fetch_add(&p->starved, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&p->held_off, 0, __ATOMIC_RELAXED);
	fdr_moves_wait(RETRY_SPINS);
}

bool fdr_move_held_off(void)
{
	struct fdr_proc *p = fdr_p;
	unsigned n = __atomic_load_n(&p->held_off, __ATOMIC_RELAXED);

	if (n >= FDR_HOLD_MAX)
		return false;
	__atomic_store_n(&p->held_off, n + 1, __ATOMIC_RELAXED);
	return true;
}
