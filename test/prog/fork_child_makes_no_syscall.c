/* SPDX-License-Identifier: MIT */
/*
 * Inside fork() the library makes no syscall, and a child with one thread
 * moves nothing: a threaded parent locks itself into a seccomp filter that
 * kills on memfd_create and ftruncate (the calls that make a stats block),
 * forks, and the child opens a file and exits through exit() (destructors
 * run).  The child must exit 0 with the kernel's lowest free fd, as
 * without the library.  (The child used to make its block inside fork, and
 * to keep placing because glibc's single-threaded flag stays cleared.)
 */
#include "common.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_create, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ftruncate, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	int st, want;
	pid_t c;

	test_mode(argc, argv);  /* threaded, as a server */
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "no_new_privs: %s", strerror(errno));
	CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0, "seccomp: %s", strerror(errno));
	want = lowest_free();
	c = fork();
	CHECK(c >= 0, "fork: %s", strerror(errno));
	if (c == 0) {
		int fd = open("/dev/null", O_RDONLY);

		exit(fd == want ? 0 : 10);
	}
	CHECK(waitpid(c, &st, 0) == c, "waitpid");
	CHECK(!WIFSIGNALED(st), "child killed by signal %d", WTERMSIG(st));
	CHECK(WEXITSTATUS(st) == 0, "child exit %d: its fd was not the lowest free", WEXITSTATUS(st));
	printf("fork under a filter: child exited 0 with the lowest free fd: ok (%s)\n", argv[1]);
	return 0;
}
