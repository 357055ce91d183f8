/* SPDX-License-Identifier: MIT */
/*
 * The syscalls the library makes on its own behalf.  They return -errno and
 * leave errno alone, so the wrappers never have to repair it.  They go
 * through the process's syscall() (fdr_syscall, syscall.c) rather than
 * fcntl()/close() because close() is a cancellation point (a cancelled
 * move would leak the copy) and because syscall() is one seam a
 * failure-injection preload can interpose.
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

/* syscall(), as the program would call it: see syscall.c. */
long fdr_syscall(long n, ...) __attribute__((visibility("hidden")));
/* Look up the process's syscall(); once, in a normal context (real.c). */
void fdr_syscall_resolve(void) __attribute__((visibility("hidden")));
/* The syscall with no lookup: the instruction (or dlsym where sys.h has
 * none); -1 and errno like syscall(). */
long fdr_syscall_direct(long n, const long a[6]) __attribute__((visibility("hidden")));

#define SYS_CALL(...) ({ int saved_ = errno; long r_ = fdr_syscall(__VA_ARGS__); sys_ret(r_, saved_); })

/*
 * The syscall instruction itself, for code that must not depend on any
 * lookup (syscall.c's fallback, wrap_rlimit.c before sanitizers are up).
 * Returns -errno.  FDR_HAVE_RAW_SYSCALL is 0 where it is not written.
 */
#if defined(__x86_64__)
#define FDR_HAVE_RAW_SYSCALL 1
static inline long fdr_raw_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define FDR_HAVE_RAW_SYSCALL 1
static inline long fdr_raw_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}
#else
#define FDR_HAVE_RAW_SYSCALL 0
static inline long fdr_raw_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	(void)n, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6;
	return -ENOSYS;
}
#endif

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

static inline long sys_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4,
			     unsigned long a5)
{
	return SYS_CALL(SYS_prctl, option, a2, a3, a4, a5);
}

static inline long sys_getpid(void)
{
	return SYS_CALL(SYS_getpid);
}

#endif
