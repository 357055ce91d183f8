/* SPDX-License-Identifier: MIT */
/*
 * fds created with syscall(SYS_socket, ...) (and SYS_pipe2, SYS_dup3)
 * bypass libc and the library: they stay where the kernel put them, even
 * inside a range, and the library's placements work around them (F_DUPFD
 * skips taken numbers) without ever touching them.  On a kernel with the
 * per-task fd range (kernel/, the library's kernel-range path) the kernel
 * itself puts them in the thread's range, where the library did not move
 * them either.
 */
#include "hard.h"

#include <netinet/in.h>
#include <arpa/inet.h>

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int before, lowest, raw_l, raw_c, acc, p[2], inside = -1, lo = 0, hi = 0, wrapped[8];
	char buf[8] = { 0 };
	unsigned kr[5] = { 0 };

	hard_init(argc, argv);
	before = count_fds();
	lowest = fcntl(0, F_DUPFD, 0);
	close(lowest);

	/* A raw listening socket gets the lowest free number, unmoved. */
	raw_l = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(raw_l == lowest, "raw socket got %d, lowest free was %d", raw_l, lowest);
	CHECK(bind(raw_l, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(raw_l, 8) == 0 &&
	      getsockname(raw_l, (struct sockaddr *)&a, &len) == 0, "listen");
	/* A raw client connects; the accepted fd is wrapped and placed. */
	raw_c = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	CHECK(raw_c == lowest + 1, "raw socket got %d", raw_c);
	CHECK(connect(raw_c, (struct sockaddr *)&a, sizeof(a)) == 0, "connect: %s", strerror(errno));
	acc = accept4(raw_l, NULL, NULL, SOCK_CLOEXEC);
	CHECK(acc >= 0, "accept4: %s", strerror(errno));
	CHECK(!placed_mode || in_my_range(acc), "accepted fd %d not placed", acc);
	CHECK(write(raw_c, "raw", 3) == 3 && read(acc, buf, 3) == 3 && !memcmp(buf, "raw", 3),
	      "data raw -> accepted");

	/* A raw fd put inside the range by the program (dup3) is skipped. */
	if (api_range) {
		CHECK(api_range(&lo, &hi) == 0, "range");
		for (inside = lo; inside < hi && fcntl(inside, F_GETFD) >= 0; inside++)
			;
		CHECK((int)syscall(SYS_dup3, raw_c, inside, 0) == inside, "dup3 into the range");
	}
	CHECK((int)syscall(SYS_pipe2, p, 0) == 0, "raw pipe2");
	/* PR_GET_FD_RANGE: this thread's kernel range, if the kernel has one */
	if (kernel_fd_range(kr) && kr[1])
		CHECK(p[0] >= (int)kr[0] && p[0] < (int)kr[1], "raw pipe at %d, kernel range [%u,%u)",
		      p[0], kr[0], kr[1]);
	else
		CHECK(p[0] < (placed_mode ? lo : 1 << 30) || !placed_mode, "raw pipe moved to %d", p[0]);
	for (int i = 0; i < 8; i++) {
		wrapped[i] = socket(AF_INET, SOCK_DGRAM, 0);
		CHECK(wrapped[i] >= 0, "socket: %s", strerror(errno));
		CHECK(wrapped[i] != inside && wrapped[i] != raw_l && wrapped[i] != raw_c &&
		      wrapped[i] != p[0] && wrapped[i] != p[1], "fd %d handed out twice", wrapped[i]);
		CHECK(!placed_mode || in_my_range(wrapped[i]), "socket %d not placed", wrapped[i]);
	}
	/* The raw fds still work. */
	CHECK(write(p[1], "pp", 2) == 2 && read(p[0], buf, 2) == 2 && !memcmp(buf, "pp", 2), "raw pipe");
	if (inside >= 0) {
		CHECK(write(inside, "in", 2) == 2 && read(acc, buf, 2) == 2 && !memcmp(buf, "in", 2),
		      "raw fd inside the range");
		close(inside);
	}
	for (int i = 0; i < 8; i++)
		close(wrapped[i]);
	close(p[0]);
	close(p[1]);
	close(acc);
	close(raw_c);
	close(raw_l);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("raw syscalls: not moved, nothing broken: ok (%s)\n", argv[1]);
	return 0;
}
