/* SPDX-License-Identifier: MIT */
/*
 * Failure injection, preloaded in front of libfdrange: the library makes
 * its own F_DUPFD and close through libc's syscall() (lib/sys.h), so this
 * syscall() sees exactly those and nothing the program does through its
 * own fcntl()/close().  INJECT says what to do to every INJECT_EVERY-th
 * one (default every one):
 *
 *   dupfd=ERRNO  F_DUPFD/F_DUPFD_CLOEXEC fails with ERRNO (EMFILE, EINVAL,
 *                ENOMEM, EBADF, EINTR...), nothing duplicated
 *   dupfd=far    F_DUPFD succeeds but far above the range asked for, as
 *                if the range were full
 *   close=ERRNO  close closes (Linux always releases the fd, even when it
 *                reports EINTR or EIO) and then reports failure
 *
 * inject_count() tells the test how many it injected.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long (*real_syscall)(long, ...);
static int what;           /* 0 none, 1 dupfd errno, 2 dupfd far, 3 close errno */
static int err;
static unsigned long every = 1, seen, injected;

__attribute__((constructor)) static void setup(void)
{
	const char *s = getenv("INJECT"), *e = getenv("INJECT_EVERY");
	static const struct { const char *name; int val; } errs[] = {
		{ "EMFILE", EMFILE }, { "EINVAL", EINVAL }, { "ENOMEM", ENOMEM },
		{ "EBADF", EBADF }, { "EINTR", EINTR }, { "EIO", EIO }, { "EPERM", EPERM },
	};
	const char *arg = NULL;

	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (e)
		every = strtoul(e, NULL, 10) ? strtoul(e, NULL, 10) : 1;
	if (!s)
		return;
	if (!strncmp(s, "dupfd=", 6)) {
		arg = s + 6;
		what = strcmp(arg, "far") ? 1 : 2;
	} else if (!strncmp(s, "close=", 6)) {
		arg = s + 6;
		what = 3;
	}
	for (unsigned i = 0; arg && i < sizeof(errs) / sizeof(errs[0]); i++)
		if (!strcmp(arg, errs[i].name))
			err = errs[i].val;
	if ((what == 1 || what == 3) && !err)
		abort();
}

unsigned long inject_count(void)
{
	return __atomic_load_n(&injected, __ATOMIC_RELAXED);
}

static int due(void)
{
	return __atomic_add_fetch(&seen, 1, __ATOMIC_RELAXED) % every == 0;
}

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real_syscall)
		real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (nr == SYS_fcntl && (a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC) &&
	    (what == 1 || what == 2) && due()) {
		__atomic_fetch_add(&injected, 1, __ATOMIC_RELAXED);
		if (what == 1) {
			errno = err;
			return -1;
		}
		/* Far above: the library must see it outside the range. */
		return real_syscall(nr, a[0], a[1], a[2] + 4096, 0, 0, 0);
	}
	if (nr == SYS_close && what == 3 && due()) {
		long r = real_syscall(nr, a[0], 0, 0, 0, 0, 0);

		__atomic_fetch_add(&injected, 1, __ATOMIC_RELAXED);
		if (r == 0) {
			errno = err;
			return -1;
		}
		return r;
	}
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
