/* SPDX-License-Identifier: MIT */
/* eventfd(2). */
#include "wrap.h"

#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

FDR_EXPORT int eventfd(unsigned int initval, int flags)
{
	int (*next)(unsigned int, int) = NEXT(eventfd);
	int fd = FDR_CREATE(next ? next(initval, flags) :
			    (int)fdr_syscall(SYS_eventfd2, initval, flags));

	return fdr_wrap_place(fd, flags & EFD_CLOEXEC, FDR_FROM_OTHER);
}
