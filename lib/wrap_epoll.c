/* SPDX-License-Identifier: MIT */
/* epoll_create(2), epoll_create1(2). */
#include "place.h"
#include "real.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

FDR_EXPORT int epoll_create(int size)
{
	int (*next)(int) = NEXT(epoll_create);
	int fd;

	if (next) {
		fd = next(size);
	} else if (size <= 0) {
		errno = EINVAL;
		fd = -1;
	} else {
		fd = (int)syscall(SYS_epoll_create1, 0);
	}
	return fd < 0 ? fd : fdr_place(fd, false, FDR_FROM_OTHER);
}

FDR_EXPORT int epoll_create1(int flags)
{
	int (*next)(int) = NEXT(epoll_create1);
	int fd = next ? next(flags) : (int)syscall(SYS_epoll_create1, flags);

	return fd < 0 ? fd : fdr_place(fd, flags & EPOLL_CLOEXEC, FDR_FROM_OTHER);
}
