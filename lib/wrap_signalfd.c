/* SPDX-License-Identifier: MIT */
/* signalfd(2). */
#include "wrap.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

FDR_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	int (*next)(int, const sigset_t *, int) = NEXT(signalfd);
	int ret = FDR_CREATE(next ? next(fd, mask, flags) :
			     (int)fdr_syscall(SYS_signalfd4, fd, mask, (size_t)(_NSIG / 8), flags));

	/* With fd != -1 the call only changes the mask of an existing fd. */
	return fd != -1 ? ret : fdr_wrap_place(ret, flags & SFD_CLOEXEC, FDR_FROM_OTHER);
}
