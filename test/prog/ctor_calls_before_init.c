/* SPDX-License-Identifier: MIT */
/*
 * Wrapped calls made from another library's constructor, possibly before
 * libfdrange's constructor ran, return valid fds with the requested flags,
 * and placement works normally once main() runs.
 */
#include "common.h"

extern int early_fds[4];

int main(int argc, char **argv)
{
	int fd;

	test_mode(argc, argv);
	for (int i = 0; i < 4; i++)
		CHECK(early_fds[i] >= 0 && fd_valid(early_fds[i]), "early fd %d: %d", i, early_fds[i]);
	CHECK(fcntl(early_fds[0], F_GETFD) & FD_CLOEXEC, "early open lost O_CLOEXEC");
	CHECK(write(early_fds[3], "x", 1) == 1, "early pipe broken");
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(fd >= 0, "socket");
	if (placed_mode) {
		int lo, hi, (*range)(int *, int *) = (int (*)(int *, int *))dlsym(RTLD_DEFAULT,
										 "fdrange_thread_range");

		CHECK(range(&lo, &hi) == 0 && fd >= lo && fd < hi, "fd %d not placed after start-up", fd);
	}
	for (int i = 0; i < 4; i++)
		close(early_fds[i]);
	close(fd);
	printf("constructor calls: ok (%s)\n", argv[1]);
	return 0;
}
