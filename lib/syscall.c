/* SPDX-License-Identifier: MIT */
/*
 * The library's own way to make a syscall (fdr_syscall, sys.h's SYS_CALL):
 * through the process's syscall(), the first definition in the global
 * scope, exactly as if the program had called it, so that a
 * failure-injection preload in front of us sees the library's calls.
 * (The `fdrange` command and the tests link this too: there it is libc's.)
 *
 * Sanitizer runtimes may reach this before their shadow memory exists (via
 * setrlimit, wrap_rlimit.c): meson builds it uninstrumented, and it calls
 * nothing instrumented.  Before the lookup is done (another library's
 * constructor, or dlsym itself calling us), the syscall instruction is
 * made directly; on an architecture sys.h has no instruction for, dlsym is
 * asked then.
 */
#include "sys.h"

#include <dlfcn.h>
#include <stdarg.h>

typedef long (*syscall_fn)(long, ...);

static syscall_fn process_syscall;  /* the process's: maybe an interposer in front of us */

void fdr_syscall_resolve(void)
{
	__atomic_store_n(&process_syscall, (syscall_fn)dlsym(RTLD_DEFAULT, "syscall"),
			 __ATOMIC_RELEASE);
}

long fdr_syscall_direct(long n, const long a[6])
{
	long r;

	if (!FDR_HAVE_RAW_SYSCALL) {
		syscall_fn f = (syscall_fn)dlsym(RTLD_NEXT, "syscall");

		if (f)
			return f(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
	r = fdr_raw_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

long fdr_syscall(long n, ...)
{
	syscall_fn f = __atomic_load_n(&process_syscall, __ATOMIC_ACQUIRE);
	long a[6];

	va_list ap;

	/* syscall() itself reads six arguments whatever the call takes. */
	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return f ? f(n, a[0], a[1], a[2], a[3], a[4], a[5]) : fdr_syscall_direct(n, a);
}
