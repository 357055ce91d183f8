/* SPDX-License-Identifier: MIT */
/*
 * A thread accepts one connection (a control connection, say) and then
 * goes to work creating fds of its own, accepting no more.  Its fds land
 * in its range and keep working, plain and placed.  On a kernel with the
 * per-task fd range (the library's kernel-range path) the thread's kernel
 * range must come back to its own fds: an acceptor's range is aimed at
 * its connections, and a thread that stopped accepting would otherwise
 * have every fd of its own moved (F_DUPFD + close) forever.  OWN fds
 * span several 64-fd chunks (the range is 256 wide, FDRANGE_WIDTH), so the
 * range must move with them: aimed once, it would stay on the first.  Most
 * of them must be born in the kernel range the thread had when it created
 * them (a never-reset acceptor gets about a third).
 */
#include "hard.h"

#include <netinet/in.h>
#include <arpa/inet.h>

#define OWN 200

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	unsigned kr[5] = { 0 };
	int before, l, c, acc, fds[OWN], born = 0;
	uint64_t v = 0;
	bool kernel;

	hard_init(argc, argv);
	kernel = kernel_range_path();
	before = count_fds();
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(l, 4) == 0 &&
	      getsockname(l, (struct sockaddr *)&a, &len) == 0, "listen: %s", strerror(errno));
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(c >= 0 && connect(c, (struct sockaddr *)&a, sizeof(a)) == 0, "connect: %s",
	      strerror(errno));
	acc = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	CHECK(acc >= 0, "accept4: %s", strerror(errno));

	for (int i = 0; i < OWN; i++) {
		CHECK(!kernel || kernel_fd_range(kr), "PR_GET_FD_RANGE");
		fds[i] = eventfd(0, EFD_CLOEXEC);
		CHECK(fds[i] >= 0, "eventfd %d: %s", i, strerror(errno));
		CHECK(!placed_mode || in_my_range(fds[i]), "eventfd %d (fd %d) not in the range", i,
		      fds[i]);
		v = (uint64_t)i + 1;
		CHECK(write(fds[i], &v, sizeof(v)) == sizeof(v), "eventfd write");
		/* In the range the kernel held before the call: born there. */
		born += kernel && fds[i] >= (int)kr[0] && fds[i] < (int)kr[1];
	}
	if (kernel)
		CHECK(born >= OWN * 3 / 4, "%d of %d own fds born in the thread's kernel range, "
		      "want at least %d", born, OWN, OWN * 3 / 4);
	for (int i = 0; i < OWN; i++) {
		CHECK(read(fds[i], &v, sizeof(v)) == sizeof(v) && v == (uint64_t)i + 1,
		      "eventfd %d reads %llu", i, (unsigned long long)v);
		close(fds[i]);
	}
	/* The connection still reaches its peer. */
	CHECK(write(c, "ok", 2) == 2 && read(acc, &v, 2) == 2 && !memcmp(&v, "ok", 2), "data");
	close(acc);
	close(c);
	close(l);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	report_born("accept then work: own fds placed", kernel, born, OWN, argv[1]);
	return 0;
}
