/* SPDX-License-Identifier: MIT */
/*
 * A preloaded library, loaded after libfdrange, whose constructor locks the
 * process into a filter before libfdrange's constructor has run: the
 * fcntl filter of the other sandbox tests, and openat killed as well, so
 * that a start-up read of /proc/self/status by libfdrange would be fatal.
 * Its prctl() goes through libfdrange's wrapper, which must then keep the
 * library from making any syscall of its own.  (It used to read the
 * status file under the filter and die of SIGSYS.)  Used by
 * seccomp_filter_in_threads MODE ctor.
 */
#include "../seccomp_fcntl_filter.h"

#include <stdlib.h>

static int kill_openat(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FCNTL_FILTER_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

__attribute__((constructor)) static void lock_in(void)
{
	if (!getenv("SECCOMP_FROM_CONSTRUCTOR"))
		return;
	if (install_fcntl_filter(FILTER_PRCTL, SECCOMP_RET_KILL_PROCESS) || kill_openat())
		abort();
}
