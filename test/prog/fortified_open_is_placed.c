/* SPDX-License-Identifier: MIT */
/*
 * Built with -O2 -D_FORTIFY_SOURCE=2: open()/openat() with flags the
 * compiler cannot see compile to __open_2/__openat_2 (meson checks the
 * binary imports them), and those fds are placed too.
 */
#include "common.h"

int main(int argc, char **argv)
{
	volatile int flags = O_RDONLY | O_CLOEXEC;
	int fd[2];

	test_mode(argc, argv);
	fd[0] = open("/dev/null", flags);
	fd[1] = openat(AT_FDCWD, "/dev/null", flags);
	for (int i = 0; i < 2; i++) {
		CHECK(fd[i] >= 0 && (fcntl(fd[i], F_GETFD) & FD_CLOEXEC), "fortified open %d", i);
		if (placed_mode) {
			int lo, hi, (*range)(int *, int *) = (int (*)(int *, int *))dlsym(RTLD_DEFAULT,
											 "fdrange_thread_range");

			CHECK(range(&lo, &hi) == 0 && fd[i] >= lo && fd[i] < hi,
			      "fortified open returned unplaced fd %d", fd[i]);
		}
		close(fd[i]);
	}
	printf("fortify: ok (%s)\n", argv[1]);
	return 0;
}
