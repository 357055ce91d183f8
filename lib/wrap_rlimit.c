/* SPDX-License-Identifier: MIT */
/*
 * setrlimit(2) and prlimit(2) for RLIMIT_NOFILE of this process.  Wrapping
 * them keeps the range geometry below the limit without a getrlimit per
 * placed fd; a limit changed from outside (prlimit(1) on us) is caught by
 * F_DUPFD failing, which falls back safely.
 */
#include "real.h"
#include "sys.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* After a successful call: the soft limit @rl set, if it was RLIMIT_NOFILE. */
#define NOTED(ret, resource, rl) ({ \
	if ((ret) == 0 && (int)(resource) == RLIMIT_NOFILE) \
		fdr_limit_changed((unsigned long)(rl)->rlim_cur); \
	(ret); })

static int is_self(pid_t pid)
{
	return pid == 0 || pid == sys_getpid();
}

FDR_EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *rl)
{
	int (*next)(__rlimit_resource_t, const struct rlimit *) = NEXT(setrlimit);
	int ret = next ? next(resource, rl) :
			 (int)syscall(SYS_prlimit64, 0, resource, rl, NULL);

	return NOTED(ret, resource, rl);
}

FDR_EXPORT int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *rl)
{
	int (*next)(__rlimit_resource_t, const struct rlimit64 *) = NEXT(setrlimit64);
	int ret = next ? next(resource, rl) :
			 (int)syscall(SYS_prlimit64, 0, resource, rl, NULL);

	return NOTED(ret, resource, rl);
}

FDR_EXPORT int prlimit(pid_t pid, __rlimit_resource_t resource, const struct rlimit *new_rl,
		       struct rlimit *old_rl)
{
	int (*next)(pid_t, __rlimit_resource_t, const struct rlimit *, struct rlimit *) =
		NEXT(prlimit);
	int ret = next ? next(pid, resource, new_rl, old_rl) :
			 (int)syscall(SYS_prlimit64, pid, resource, new_rl, old_rl);

	if (!new_rl || !is_self(pid))
		return ret;
	return NOTED(ret, resource, new_rl);
}

FDR_EXPORT int prlimit64(pid_t pid, __rlimit_resource_t resource, const struct rlimit64 *new_rl,
			 struct rlimit64 *old_rl)
{
	int (*next)(pid_t, __rlimit_resource_t, const struct rlimit64 *, struct rlimit64 *) =
		NEXT(prlimit64);
	int ret = next ? next(pid, resource, new_rl, old_rl) :
			 (int)syscall(SYS_prlimit64, pid, resource, new_rl, old_rl);

	if (!new_rl || !is_self(pid))
		return ret;
	return NOTED(ret, resource, new_rl);
}
