/* SPDX-License-Identifier: MIT */
/* epoll_create(2), epoll_create1(2). */
#include "wrap.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

static int epoll_create_call(int size)
{
	int (*next)(int) = NEXT(epoll_create);

	if (next)
		return next(size);
	if (size <= 0) {
		errno = EINVAL;
		return -1;
	}
	return (int)fdr_syscall(SYS_epoll_create1, 0);
}

FDR_EXPORT int epoll_create(int size)
{
	return fdr_wrap_place(FDR_CREATE(epoll_create_call(size)), 0, FDR_FROM_OTHER);
}

FDR_EXPORT int epoll_create1(int flags)
{
	int (*next)(int) = NEXT(epoll_create1);
	int fd = FDR_CREATE(next ? next(flags) : (int)fdr_syscall(SYS_epoll_create1, flags));

	return fdr_wrap_place(fd, flags & EPOLL_CLOEXEC, FDR_FROM_OTHER);
}
