/* SPDX-License-Identifier: MIT */
/* accept(2), accept4(2): the fds a server creates most. */
#include "place.h"
#include "real.h"
#include "handoff.h"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

FDR_EXPORT int accept(int sockfd, struct sockaddr *addr, socklen_t *addrlen)
{
	int (*next)(int, struct sockaddr *, socklen_t *) = NEXT(accept);
	int fd = next ? next(sockfd, addr, addrlen) :
			(int)syscall(SYS_accept4, sockfd, addr, addrlen, 0);

	if (fd < 0)
		return fd;
	fd = fdr_place(fd, false, FDR_FROM_ACCEPT);
	fdr_handoff_accepted(fd);
	return fd;
}

FDR_EXPORT int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
	int (*next)(int, struct sockaddr *, socklen_t *, int) = NEXT(accept4);
	int fd = next ? next(sockfd, addr, addrlen, flags) :
			(int)syscall(SYS_accept4, sockfd, addr, addrlen, flags);

	if (fd < 0)
		return fd;
	fd = fdr_place(fd, flags & SOCK_CLOEXEC, FDR_FROM_ACCEPT);
	fdr_handoff_accepted(fd);
	return fd;
}
