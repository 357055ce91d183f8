/* SPDX-License-Identifier: MIT */
/* eventfd(2). */
#include "place.h"
#include "real.h"

#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

FDR_EXPORT int eventfd(unsigned int initval, int flags)
{
	int (*next)(unsigned int, int) = NEXT(eventfd);
	int fd = next ? next(initval, flags) : (int)syscall(SYS_eventfd2, initval, flags);

	return fd < 0 ? fd : fdr_place(fd, flags & EFD_CLOEXEC, FDR_FROM_OTHER);
}
