/* SPDX-License-Identifier: MIT */
/*
 * The syscalls the library makes on its own behalf.  They return -errno and
 * leave errno alone, so the wrappers never have to repair it.  They go
 * through libc's syscall() rather than fcntl()/close() because close() is a
 * cancellation point (a cancelled move would leak the copy) and because
 * syscall() is one seam a failure-injection preload can interpose.
 */
#ifndef FDR_SYS_H
#define FDR_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline long sys_ret(long r, int saved)
{
	if (r == -1) {
		r = -errno;
		errno = saved;
	}
	return r;
}

#define SYS_CALL(...) ({ int saved_ = errno; long r_ = syscall(__VA_ARGS__); sys_ret(r_, saved_); })

static inline long sys_write(int fd, const void *buf, size_t n)
{
	return SYS_CALL(SYS_write, fd, buf, n);
}

static inline long sys_read(int fd, void *buf, size_t n)
{
	return SYS_CALL(SYS_read, fd, buf, n);
}

/*
 * ThreadSanitizer models fds and cannot see a raw close: it would take the
 * kernel's reuse of the number by another thread for a race with the
 * thread that created it.  Its syscall hooks tell it (TSan builds only).
 */
#if defined(__SANITIZE_THREAD__)
#define FDR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FDR_TSAN 1
#endif
#endif
#ifdef FDR_TSAN
void __sanitizer_syscall_pre_impl_close(long fd);
void __sanitizer_syscall_post_impl_close(long res, long fd);
#endif

static inline long sys_close(int fd)
{
#ifdef FDR_TSAN
	long r;

	__sanitizer_syscall_pre_impl_close(fd);
	r = SYS_CALL(SYS_close, fd);
	__sanitizer_syscall_post_impl_close(r, fd);
	return r;
#else
	return SYS_CALL(SYS_close, fd);
#endif
}

/* The lowest free fd >= @min sharing @fd's open file; never clobbers. */
static inline long sys_dupfd(int fd, unsigned min, int cloexec)
{
	return SYS_CALL(SYS_fcntl, fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, min);
}

static inline long sys_openat(int dirfd, const char *path, int flags, unsigned mode)
{
	return SYS_CALL(SYS_openat, dirfd, path, flags, mode);
}

static inline long sys_getpid(void)
{
	return SYS_CALL(SYS_getpid);
}

#endif
