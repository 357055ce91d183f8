/* SPDX-License-Identifier: MIT */
/* accept(2), accept4(2): the fds a server creates most. */
#include "wrap.h"
#include "handoff.h"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int accepted(int fd, int cloexec)
{
	if (fd < 0 || !fdr_ready())
		return fd;
	fd = fdr_place(fd, cloexec != 0, FDR_FROM_ACCEPT);
	fdr_handoff_accepted(fd);
	return fd;
}

FDR_EXPORT int accept(int sockfd, struct sockaddr *addr, socklen_t *addrlen)
{
	int (*next)(int, struct sockaddr *, socklen_t *) = NEXT(accept);

	return accepted(FDR_CREATE(next ? next(sockfd, addr, addrlen) :
				   (int)fdr_syscall(SYS_accept4, sockfd, addr, addrlen, 0)), 0);
}

FDR_EXPORT int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
	int (*next)(int, struct sockaddr *, socklen_t *, int) = NEXT(accept4);

	return accepted(FDR_CREATE(next ? next(sockfd, addr, addrlen, flags) :
				   (int)fdr_syscall(SYS_accept4, sockfd, addr, addrlen, flags)),
			flags & SOCK_CLOEXEC);
}
