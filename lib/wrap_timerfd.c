/* SPDX-License-Identifier: MIT */
/* timerfd_create(2). */
#include "wrap.h"

#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

FDR_EXPORT int timerfd_create(int clockid, int flags)
{
	int (*next)(int, int) = NEXT(timerfd_create);
	int fd = FDR_CREATE(next ? next(clockid, flags) :
			    (int)fdr_syscall(SYS_timerfd_create, clockid, flags));

	return fdr_wrap_place(fd, flags & TFD_CLOEXEC, FDR_FROM_OTHER);
}
