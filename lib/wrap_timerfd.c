/* SPDX-License-Identifier: MIT */
/* timerfd_create(2). */
#include "place.h"
#include "real.h"

#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

FDR_EXPORT int timerfd_create(int clockid, int flags)
{
	int (*next)(int, int) = NEXT(timerfd_create);
	int fd = next ? next(clockid, flags) : (int)syscall(SYS_timerfd_create, clockid, flags);

	return fd < 0 ? fd : fdr_place(fd, flags & TFD_CLOEXEC, FDR_FROM_OTHER);
}
