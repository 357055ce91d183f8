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
 * configuration, secure-execution mode, or not yet initialised). */
int fdrange_active(void);

/*
 * The range [*lo, *hi) the calling thread's new fds go to, assigning the
 * thread a range first if it has none.  -ENODEV in pass-through, -ERANGE
 * when no range fits below the current RLIMIT_NOFILE.
 */
int fdrange_thread_range(int *lo, int *hi);

/* The index of the range holding fd number @fd, or -ENOENT if none does. */
int fdrange_range_of_fd(int fd);

/* Write the statistics report (the same text as FDRANGE_STATS) to @fd. */
int fdrange_report(int fd);

#ifdef __cplusplus
}
#endif

#endif
