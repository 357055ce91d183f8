/* SPDX-License-Identifier: MIT */
/* memfd_create(2). */
#include "wrap.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

FDR_EXPORT int memfd_create(const char *name, unsigned int flags)
{
	int (*next)(const char *, unsigned int) = NEXT(memfd_create);
	int fd = FDR_CREATE(next ? next(name, flags) :
			    (int)fdr_syscall(SYS_memfd_create, name, flags));

	return fdr_wrap_place(fd, (flags & MFD_CLOEXEC) != 0, FDR_FROM_OTHER);
}
