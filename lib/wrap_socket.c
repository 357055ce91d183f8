/* SPDX-License-Identifier: MIT */
/* socket(2), socketpair(2). */
#include "wrap.h"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

FDR_EXPORT int socket(int domain, int type, int protocol)
{
	int (*next)(int, int, int) = NEXT(socket);
	int fd = FDR_CREATE(next ? next(domain, type, protocol) :
			    (int)fdr_syscall(SYS_socket, domain, type, protocol));

	return fdr_wrap_place(fd, type & SOCK_CLOEXEC, FDR_FROM_OTHER);
}

FDR_EXPORT int socketpair(int domain, int type, int protocol, int sv[2])
{
	int (*next)(int, int, int, int *) = NEXT(socketpair);
	int ret = FDR_CREATE(next ? next(domain, type, protocol, sv) :
			     (int)fdr_syscall(SYS_socketpair, domain, type, protocol, sv));

	if (ret == 0) {
		sv[0] = fdr_wrap_place(sv[0], type & SOCK_CLOEXEC, FDR_FROM_OTHER);
		sv[1] = fdr_wrap_place(sv[1], type & SOCK_CLOEXEC, FDR_FROM_OTHER);
	}
	return ret;
}
