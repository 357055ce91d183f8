/* SPDX-License-Identifier: MIT */
/*
 * A program that confines itself with a strict seccomp filter and then
 * exits normally must not be killed by the library's own syscalls.  The
 * filter kills the process (SECCOMP_RET_KILL_PROCESS) for every syscall
 * but exit_group, exit and write; after installing it the program creates
 * nothing and calls exit(0), so destructors run -- which is where the
 * library used to unlink its stats block (unlinkat: SIGSYS).  Like sshd's
 * pre-authentication child, the "fork" variant installs the filter in a
 * forked child, which exits with exit(0); the parent checks it exited 0.
 * usage: seccomp_strict_exit plain|placed self|fork
 */
#include "../check.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define NATIVE_ARCH AUDIT_ARCH_I386
#endif

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif

#define ALLOW(nr) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static void confine(void)
{
#ifdef NATIVE_ARCH
	struct sock_filter code[] = {
		/* Another architecture's calling convention: kill. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW(__NR_exit_group),
		ALLOW(__NR_exit),
		ALLOW(__NR_write),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	/* Raw syscalls: nothing of libc's between here and exit(). */
	CHECK(syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0,
	      "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	CHECK(syscall(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0,
	      "PR_SET_SECCOMP: %s", strerror(errno));
#endif
}

int main(int argc, char **argv)
{
	bool fork_first;

	test_mode(argc, argv);
	CHECK(argc == 3 && (!strcmp(argv[2], "self") || !strcmp(argv[2], "fork")),
	      "usage: %s plain|placed self|fork", argv[0]);
#ifndef NATIVE_ARCH
	printf("SKIP: no seccomp architecture constant for this machine\n");
	return 77;
#endif
	fork_first = !strcmp(argv[2], "fork");
	/* Nothing may be left in stdio's buffers for exit() to write. */
	printf("%s: strict seccomp filter, then exit(0)\n", fork_first ? "forked child" : "process");
	fflush(NULL);
	if (fork_first) {
		pid_t pid;
		int st;

		alarm(20);
		pid = fork();
		CHECK(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0) {
			confine();
			exit(0);
		}
		CHECK(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "confined child: %s %d%s",
		      WIFSIGNALED(st) ? "killed by signal" : "exit status",
		      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
		      WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS ?
		      " (SIGSYS: a syscall outside the filter at exit)" : "");
		printf("the confined child exited 0\n");
		return 0;
	}
	confine();
	exit(0);
}
