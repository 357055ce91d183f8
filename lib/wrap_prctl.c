/* SPDX-License-Identifier: MIT */
/*
 * prctl(2), wrapped only for PR_SET_SECCOMP: a sandbox about to lock the
 * process in (OpenSSH's pre-authentication child does it this way); the
 * library steps aside first (sandbox.c).  Everything else, and the
 * result, is libc's.
 */
#include "real.h"
#include "sandbox.h"
#include "sys.h"

#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

FDR_EXPORT int prctl(int option, ...)
{
	int (*next)(int, ...) = NEXT(prctl);
	unsigned long a[4];
	va_list ap;

	/* prctl() reads four more arguments whatever the option takes. */
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP)
		fdr_sandbox_coming(false);
	return next ? next(option, a[0], a[1], a[2], a[3]) :
		      (int)fdr_syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
}
