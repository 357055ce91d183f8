/* SPDX-License-Identifier: MIT */
/* pipe(2), pipe2(2). */
#include "wrap.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int placed_pair(int ret, int fds[2], int flags)
{
	if (ret == 0) {
		fds[0] = fdr_wrap_place(fds[0], flags & O_CLOEXEC, FDR_FROM_OTHER);
		fds[1] = fdr_wrap_place(fds[1], flags & O_CLOEXEC, FDR_FROM_OTHER);
	}
	return ret;
}

FDR_EXPORT int pipe(int fds[2])
{
	int (*next)(int *) = NEXT(pipe);

	return placed_pair(FDR_CREATE(next ? next(fds) : (int)fdr_syscall(SYS_pipe2, fds, 0)),
			   fds, 0);
}

FDR_EXPORT int pipe2(int fds[2], int flags)
{
	int (*next)(int *, int) = NEXT(pipe2);

	return placed_pair(FDR_CREATE(next ? next(fds, flags) :
				      (int)fdr_syscall(SYS_pipe2, fds, flags)), fds, flags);
}
