/* SPDX-License-Identifier: MIT */
/*
 * setrlimit(2) and prlimit(2) for RLIMIT_NOFILE of this process.  Wrapping
 * them keeps the range geometry below the limit without a getrlimit per
 * placed fd; a limit changed from outside (prlimit(1) on us) is caught by
 * F_DUPFD failing, which falls back safely.
 *
 * These make the prlimit64 syscall themselves, exactly as glibc's own
 * versions do, instead of looking up the next definition: sanitizer
 * runtimes call setrlimit() while they initialise, before dlsym or even
 * their own shadow memory work, so this file must need neither (meson
 * builds it without address- and thread-sanitizer instrumentation for
 * that reason, and it uses the syscall instruction itself where sys.h has
 * it).
 */
#include "state.h"
#include "sys.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * After a successful call: the soft limit @rl set, if it was RLIMIT_NOFILE.
 * @rl may be NULL: the kernel accepts prlimit64 with no new limit (nothing
 * is set, the call returns 0), and glibc's setrlimit(res, NULL) is exactly
 * that call, so a NULL that reaches here after success sets nothing.  It is
 * read only after the kernel has read it successfully, so it is readable.
 * glibc declares setrlimit's pointer nonnull, so the compiler would drop a
 * plain NULL test in those two: the pointer goes through launder() first.
 */
#define NOTED(ret, resource, rl) ({ \
	const __typeof__(*(rl)) *rl_ = launder(rl); \
	if ((ret) == 0 && rl_ && (int)(resource) == RLIMIT_NOFILE) \
		fdr_limit_changed((unsigned long)rl_->rlim_cur); \
	(ret); })

/* @p, with everything the compiler believed about it forgotten. */
static inline const void *launder(const void *p)
{
	__asm__("" : "+r"(p));
	return p;
}

static int prlimit_call(pid_t pid, int resource, const void *new_rl, void *old_rl)
{
	long r;

	if (!FDR_HAVE_RAW_SYSCALL)
		return (int)fdr_syscall(SYS_prlimit64, pid, resource, new_rl, old_rl);
	r = fdr_raw_syscall(SYS_prlimit64, pid, resource, (long)new_rl, (long)old_rl, 0, 0);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}

static int is_self(pid_t pid)
{
	return pid == 0 || pid == sys_getpid();
}

FDR_EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *rl)
{
	int ret = prlimit_call(0, resource, rl, NULL);

	return NOTED(ret, resource, rl);
}

FDR_EXPORT int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *rl)
{
	int ret = prlimit_call(0, resource, rl, NULL);

	return NOTED(ret, resource, rl);
}

FDR_EXPORT int prlimit(pid_t pid, __rlimit_resource_t resource, const struct rlimit *new_rl,
		       struct rlimit *old_rl)
{
	int ret = prlimit_call(pid, resource, new_rl, old_rl);

	if (!new_rl || !is_self(pid))
		return ret;
	return NOTED(ret, resource, new_rl);
}

FDR_EXPORT int prlimit64(pid_t pid, __rlimit_resource_t resource, const struct rlimit64 *new_rl,
			 struct rlimit64 *old_rl)
{
	int ret = prlimit_call(pid, resource, new_rl, old_rl);

	if (!new_rl || !is_self(pid))
		return ret;
	return NOTED(ret, resource, new_rl);
}
