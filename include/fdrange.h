/* SPDX-License-Identifier: MIT */
/*
 * libfdrange public API.
 *
 * Programs never need this header: the library works on unmodified programs
 * through LD_PRELOAD.  It exists for programs and tests that want to ask the
 * library what it is doing.  Because a program cannot know whether the
 * library was preloaded, look the functions up at run time:
 *
 *     int (*range)(int *, int *) = dlsym(RTLD_DEFAULT, "fdrange_thread_range");
 *
 * All functions are async-signal-safe and return 0 or a negative errno value.
 */
#ifndef FDRANGE_H
#define FDRANGE_H

#ifdef __cplusplus
extern "C" {
#endif

#define FDRANGE_VERSION_MAJOR 0
#define FDRANGE_VERSION_MINOR 1

/* The library's version, e.g. "0.1.0". */
const char *fdrange_version(void);

/* 1 while fds are being placed, 0 in pass-through (disabled, bad
 * configuration, a seccomp filter, or not yet initialised).  Placing
 * includes leaving alone the fds the kernel numbers below
 * FDRANGE_THRESHOLD (64): 1 says the rules apply, not that an fd moved. */
int fdrange_active(void);

/*
 * The range [*lo, *hi) the calling thread's new fds go to first, once they
 * are numbered past FDRANGE_THRESHOLD (below it they keep the kernel's
 * number): with the default geometry the 8-fd line of a thread that holds no chunk yet
 * (claiming one for a thread that holds neither) or the 64-fd chunk it
 * will use next, with FDRANGE_WIDTH its fixed range cut at the limit.
 * -ENODEV in pass-through, -ERANGE when nothing fits below the current
 * RLIMIT_NOFILE (or the library's bound on fd numbers), -EAGAIN when the
 * thread cannot be given an owner now (called from a signal handler that
 * interrupted that very step, or in a fork child whose block cannot be
 * made).
 */
int fdrange_thread_range(int *lo, int *hi);

/* The index of the thread (or lane) owning the chunk or line of fd number
 * @fd, or -ENOENT if none does (below BASE, unclaimed, or one of the pools). */
int fdrange_range_of_fd(int fd);

/* Write the statistics report (the same text as FDRANGE_STATS) to @fd;
 * -EAGAIN before the library has started. */
int fdrange_report(int fd);

#ifdef __cplusplus
}
#endif

#endif
