/* SPDX-License-Identifier: MIT */
/*
 * The sandbox the seccomp tests lock themselves into (test/security and
 * test/families): fcntl() only for F_GETFD, F_SETFD, F_GETFL and F_SETFL,
 * as Tor's `Sandbox 1` allows; any other command (a move's F_DUPFD) gets
 * @action.  Everything else, and other architectures' calls, pass.
 */
#ifndef TEST_SECCOMP_FCNTL_FILTER_H
#define TEST_SECCOMP_FCNTL_FILTER_H

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define FCNTL_FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FCNTL_FILTER_ARCH AUDIT_ARCH_AARCH64
#else
#error "the seccomp tests know x86_64 and aarch64"
#endif

enum fcntl_filter_how { FILTER_SECCOMP, FILTER_TSYNC, FILTER_PRCTL };

/* Install it in the calling thread (all threads with FILTER_TSYNC): 0, or
 * -1 with errno. */
static inline int install_fcntl_filter(enum fcntl_filter_how how, unsigned action)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FCNTL_FILTER_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fcntl, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* args[1], low 32 bits (little-endian): the command */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_GETFD, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_SETFD, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_GETFL, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_SETFL, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	if (how == FILTER_PRCTL)
		return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    how == FILTER_TSYNC ? SECCOMP_FILTER_FLAG_TSYNC : 0, &prog);
}

#endif
