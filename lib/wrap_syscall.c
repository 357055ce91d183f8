/* SPDX-License-Identifier: MIT */
/*
 * syscall(3), wrapped only to see a seccomp filter coming: libseccomp and
 * most sandboxes install theirs with syscall(SYS_seccomp, ...) (glibc has
 * no seccomp() function), and after that the library must make no syscall
 * the filter may forbid (sandbox.c).  Everything else passes straight to
 * the next definition, arguments, result and errno untouched.
 *
 * Built uninstrumented like wrap_rlimit.c: a sanitizer runtime may call
 * syscall() before its shadow memory exists; only a seccomp install, long
 * after start-up, reaches instrumented code.
 */
#include "real.h"
#include "sandbox.h"
#include "sys.h"

#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>

FDR_EXPORT long syscall(long n, ...)
{
	long (*next)(long, ...) = NEXT(syscall);
	long a[6];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_seccomp && (a[0] == SECCOMP_SET_MODE_STRICT || a[0] == SECCOMP_SET_MODE_FILTER))
		fdr_sandbox_coming(a[0] == SECCOMP_SET_MODE_FILTER &&
				   ((unsigned long)a[1] & SECCOMP_FILTER_FLAG_TSYNC));
	else if (n == SYS_prctl && (int)a[0] == PR_SET_SECCOMP)
		fdr_sandbox_coming(false);
	return next ? next(n, a[0], a[1], a[2], a[3], a[4], a[5]) : fdr_syscall_direct(n, a);
}
