/* SPDX-License-Identifier: MIT */
/*
 * Daemons close stdin/stdout and open /dev/null expecting to get fd 0 and
 * fd 1 back; fds 0-2 are never moved.
 */
#include "common.h"

int main(int argc, char **argv)
{
	int saved_out, fd;

	test_mode(argc, argv);
	saved_out = fcntl(1, F_DUPFD_CLOEXEC, 10);
	CHECK(saved_out >= 0, "dup stdout");
	close(0);
	fd = open("/dev/null", O_RDONLY);
	CHECK(fd == 0, "reopened stdin is fd %d", fd);
	close(1);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK(fd == 1, "socket after closing stdout is fd %d", fd);
	close(1);
	CHECK(dup2(saved_out, 1) == 1, "restore stdout");
	close(saved_out);
	printf("fds 0-2 kept: ok (%s)\n", argv[1]);
	return 0;
}
