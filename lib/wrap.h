/* SPDX-License-Identifier: MIT */
/*
 * What every wrapper of an fd-creating call does: make the call (once more
 * if a move in flight held the number it needed), and place the new fd.
 */
#ifndef FDR_WRAP_H
#define FDR_WRAP_H

#include "moves.h"
#include "place.h"
#include "real.h"
#include "state.h"
#include "sys.h"

/*
 * @call, made again (a few times at most) when it failed with EMFILE while
 * another thread's move held a second number: plain Linux would have had
 * that number free.  errno is as a plain call leaves it: unchanged on
 * success, the last failure's otherwise.
 */
#define FDR_CREATE(call) ({ \
	int e_ = errno; \
	__typeof__(call) r_; \
	for (int t_ = 0; (r_ = (call)) < 0 && fdr_ready() && fdr_retry_create(t_); t_++) \
		errno = e_; \
	r_; })

/* The fd @fd a successful call returned, placed; a failure as it was. */
static inline int fdr_wrap_place(int fd, int cloexec, enum fdr_origin origin)
{
	return fd < 0 || !fdr_ready() ? fd : fdr_place(fd, cloexec != 0, origin);
}

#endif
