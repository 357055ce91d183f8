/* SPDX-License-Identifier: MIT */
/* inotify_init(2), inotify_init1(2). */
#include "wrap.h"

#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

FDR_EXPORT int inotify_init(void)
{
	int (*next)(void) = NEXT(inotify_init);
	int fd = FDR_CREATE(next ? next() : (int)fdr_syscall(SYS_inotify_init1, 0));

	return fdr_wrap_place(fd, 0, FDR_FROM_OTHER);
}

FDR_EXPORT int inotify_init1(int flags)
{
	int (*next)(int) = NEXT(inotify_init1);
	int fd = FDR_CREATE(next ? next(flags) : (int)fdr_syscall(SYS_inotify_init1, flags));

	return fdr_wrap_place(fd, flags & IN_CLOEXEC, FDR_FROM_OTHER);
}
