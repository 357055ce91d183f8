/* SPDX-License-Identifier: MIT */
/* signalfd(2). */
#include "place.h"
#include "real.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

FDR_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	int (*next)(int, const sigset_t *, int) = NEXT(signalfd);
	int ret = next ? next(fd, mask, flags) :
			 (int)syscall(SYS_signalfd4, fd, mask, (size_t)(_NSIG / 8), flags);

	/* With fd != -1 the call only changes the mask of an existing fd. */
	return ret < 0 || fd != -1 ? ret : fdr_place(ret, flags & SFD_CLOEXEC, FDR_FROM_OTHER);
}
