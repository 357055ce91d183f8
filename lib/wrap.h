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
 * @call, made once more when it failed with EMFILE: another thread's move
 * may have held a second number that plain Linux would have had free.  The
 * retry is made with new moves held off and those in flight ended
 * (moves.h), so it meets the table as plain Linux would.  errno is as a plain call leaves it: unchanged on success, the
 * last failure's otherwise.
 */
#define FDR_CREATE(call) ({ \
	int e_ = errno; \
	__typeof__(call) r_ = (call); \
	if (r_ < 0 && errno == EMFILE && fdr_ready()) { \
		fdr_starve_begin(); \
		errno = e_; \
		r_ = (call); \
		fdr_starve_end(); \
	} \
	r_; })

/* The fd @fd a successful call returned, placed; a failure as it was. */
static inline int fdr_wrap_place(int fd, int cloexec, enum fdr_origin origin)
{
	return fd < 0 || !fdr_ready() ? fd : fdr_place(fd, cloexec != 0, origin);
}

#endif
