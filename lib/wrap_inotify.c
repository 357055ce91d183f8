/* SPDX-License-Identifier: MIT */
/* inotify_init(2), inotify_init1(2). */
#include "place.h"
#include "real.h"

#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

FDR_EXPORT int inotify_init(void)
{
	int (*next)(void) = NEXT(inotify_init);
	int fd = next ? next() : (int)syscall(SYS_inotify_init1, 0);

	return fd < 0 ? fd : fdr_place(fd, false, FDR_FROM_OTHER);
}

FDR_EXPORT int inotify_init1(int flags)
{
	int (*next)(int) = NEXT(inotify_init1);
	int fd = next ? next(flags) : (int)syscall(SYS_inotify_init1, flags);

	return fd < 0 ? fd : fdr_place(fd, flags & IN_CLOEXEC, FDR_FROM_OTHER);
}
