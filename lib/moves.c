/* SPDX-License-Identifier: MIT */
/* Moves in flight: see moves.h. */
#include "moves.h"

#include <errno.h>

static inline void pause_once(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

static bool any_moving(void)
{
	struct fdr_proc *p = fdr_p;
	const struct fdr_blk_hdr *h = __atomic_load_n(&p->hdr, __ATOMIC_ACQUIRE);
	unsigned n;

	if (!h)
		return false;
	n = __atomic_load_n(&h->nowners, __ATOMIC_RELAXED);
	for (unsigned o = 0; o < n && o < FDR_MAX_OWNERS; o++)
		if (__atomic_load_n(&p->owners[o].busy, __ATOMIC_SEQ_CST))
			return true;
	return false;
}

bool fdr_moves_wait(unsigned long spins)
{
	bool seen = false;

	while (any_moving()) {
		seen = true;
		if (!spins--)
			break;
		pause_once();
	}
	return seen;
}

/* Moves are microseconds; a mover preempted in between is not waited for
 * long: the caller then gets its EMFILE, as it would from a full table. */
#define RETRY_SPINS (1ul << 16)
#define RETRIES 3

bool fdr_retry_create(int tries)
{
	if (tries >= RETRIES || errno != EMFILE)
		return false;
	return fdr_moves_wait(RETRY_SPINS);
}
