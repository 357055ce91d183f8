/* SPDX-License-Identifier: MIT */
/*
 * After fork the parent keeps placing fds, and the child, which has one
 * thread, keeps the kernel's numbers (nothing to separate); across exec the
 * new image gets the library again (and places once it has threads),
 * close-on-exec fds are gone and the others are still there and still the
 * same files.
 */
#include "common.h"

static void check_placed(int fd, const char *who)
{
	int (*range)(int *, int *) = (int (*)(int *, int *))dlsym(RTLD_DEFAULT, "fdrange_thread_range");
	int lo, hi;

	CHECK(fd_valid(fd), "%s: fd %d invalid", who, fd);
	if (!placed_mode)
		return;
	CHECK(range && range(&lo, &hi) == 0, "%s: no range", who);
	CHECK(fd >= lo && fd < hi, "%s: fd %d outside [%d,%d)", who, fd, lo, hi);
}

int main(int argc, char **argv)
{
	int keep, gone, p[2], status, before;
	pid_t pid;
	char kbuf[16], gbuf[16];

	test_mode(argc, argv);
	if (argc == 5 && !strcmp(argv[2], "exec-child")) {
		char c;

		keep = atoi(argv[3]);
		gone = atoi(argv[4]);
		CHECK(fcntl(gone, F_GETFD) == -1 && errno == EBADF, "close-on-exec fd %d survived exec", gone);
		CHECK(read(keep, &c, 1) == 1 && c == 'k', "inherited fd %d is not the pipe", keep);
		p[0] = eventfd(0, 0);
		check_placed(p[0], "exec child");
		close(p[0]);
		return 0;
	}
	before = count_fds();
	CHECK(pipe(p) == 0, "pipe");
	check_placed(p[0], "parent");
	gone = eventfd(0, EFD_CLOEXEC);
	check_placed(gone, "parent");
	CHECK(write(p[1], "kk", 2) == 2, "write");

	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		char c;

		/* One thread: the kernel's number, well below BASE. */
		CHECK(fd_valid(fd) && fd < env_num("FDRANGE_BASE", 64), "child: fd %d was moved", fd);
		close(fd);
		CHECK(read(p[0], &c, 1) == 1 && c == 'k', "child: inherited pipe broken");
		snprintf(kbuf, sizeof(kbuf), "%d", p[0]);
		snprintf(gbuf, sizeof(gbuf), "%d", gone);
		execl("/proc/self/exe", argv[0], argv[1], "exec-child", kbuf, gbuf, (char *)NULL);
		_exit(99);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: status %#x", status);
	{
		int fd = timerfd_create(CLOCK_MONOTONIC, 0);

		check_placed(fd, "parent after fork");
		close(fd);
	}
	close(p[0]);
	close(p[1]);
	close(gone);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("fork and exec: ok (%s)\n", argv[1]);
	return 0;
}
