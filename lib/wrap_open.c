/* SPDX-License-Identifier: MIT */
/*
 * open(2) and its family.  Every name is exported on its own: glibc has
 * distinct entry points for the 64-bit and the _FORTIFY_SOURCE variants
 * (open() compiles to __open_2() under -D_FORTIFY_SOURCE), and a program
 * reaches exactly one of them.
 */
#include "wrap.h"

#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/*
 * The mode argument exists only when the flags create a file.  va_start is
 * unconditional (starting a list reads nothing) because clang's analyzer
 * loses a va_list started inside a branch of a statement expression.
 */
#define MODE_ARG(flags, last) ({ \
	mode_t m_ = 0; \
	va_list ap_; \
	va_start(ap_, last); \
	if ((flags) & O_CREAT || ((flags) & O_TMPFILE) == O_TMPFILE) \
		m_ = va_arg(ap_, mode_t); \
	va_end(ap_); \
	m_; })

#define placed(call, flags) fdr_wrap_place(FDR_CREATE(call), (flags) & O_CLOEXEC, FDR_FROM_OPEN)

static int sys_open(int dirfd, const char *path, int flags, mode_t mode)
{
	return (int)fdr_syscall(SYS_openat, dirfd, path, flags, mode);
}

FDR_EXPORT int open(const char *path, int flags, ...)
{
	int (*next)(const char *, int, ...) = NEXT(open);
	mode_t mode = MODE_ARG(flags, flags);

	return placed(next ? next(path, flags, mode) : sys_open(AT_FDCWD, path, flags, mode), flags);
}

FDR_EXPORT int open64(const char *path, int flags, ...)
{
	int (*next)(const char *, int, ...) = NEXT(open64);
	mode_t mode = MODE_ARG(flags, flags);

	return placed(next ? next(path, flags, mode) :
			     sys_open(AT_FDCWD, path, flags | O_LARGEFILE, mode), flags);
}

FDR_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	int (*next)(int, const char *, int, ...) = NEXT(openat);
	mode_t mode = MODE_ARG(flags, flags);

	return placed(next ? next(dirfd, path, flags, mode) : sys_open(dirfd, path, flags, mode),
		      flags);
}

FDR_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	int (*next)(int, const char *, int, ...) = NEXT(openat64);
	mode_t mode = MODE_ARG(flags, flags);

	return placed(next ? next(dirfd, path, flags, mode) :
			     sys_open(dirfd, path, flags | O_LARGEFILE, mode), flags);
}

#define CREAT_FLAGS (O_CREAT | O_WRONLY | O_TRUNC)

FDR_EXPORT int creat(const char *path, mode_t mode)
{
	int (*next)(const char *, mode_t) = NEXT(creat);

	return placed(next ? next(path, mode) : sys_open(AT_FDCWD, path, CREAT_FLAGS, mode),
		      CREAT_FLAGS);
}

FDR_EXPORT int creat64(const char *path, mode_t mode)
{
	int (*next)(const char *, mode_t) = NEXT(creat64);

	return placed(next ? next(path, mode) :
			     sys_open(AT_FDCWD, path, CREAT_FLAGS | O_LARGEFILE, mode), CREAT_FLAGS);
}

/*
 * The fortify entry points are called only without O_CREAT/O_TMPFILE (the
 * compiler uses open() when a mode is passed); libc's version aborts on
 * those, so a fallback that ignores the mode is faithful enough.
 */
FDR_EXPORT int __open_2(const char *path, int flags)
{
	int (*next)(const char *, int) = NEXT(__open_2);

	return placed(next ? next(path, flags) : sys_open(AT_FDCWD, path, flags, 0), flags);
}

FDR_EXPORT int __open64_2(const char *path, int flags)
{
	int (*next)(const char *, int) = NEXT(__open64_2);

	return placed(next ? next(path, flags) : sys_open(AT_FDCWD, path, flags | O_LARGEFILE, 0),
		      flags);
}

FDR_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	int (*next)(int, const char *, int) = NEXT(__openat_2);

	return placed(next ? next(dirfd, path, flags) : sys_open(dirfd, path, flags, 0), flags);
}

FDR_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	int (*next)(int, const char *, int) = NEXT(__openat64_2);

	return placed(next ? next(dirfd, path, flags) :
			     sys_open(dirfd, path, flags | O_LARGEFILE, 0), flags);
}
