// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_create on|off: with a range set, every lowest-free creation path
 * lands in it: open, socket, raw syscall(SYS_socket), accept, pipe, dup,
 * SCM_RIGHTS, eventfd, epoll_create1, pidfd_open, opendir (glibc's
 * internal open); cleared, numbering is lowest-free again.  io_uring and
 * NSS have programs of their own (fdrange_uring, fdrange_nss).
 */
#include "fdrange.h"
#include <sys/epoll.h>

static void creation_paths(void)
{
	const unsigned lo = 100, hi = 164;
	int port = 0, lst, c, a, p[2], fd;
	DIR *dir;

	set_range_checked(lo, hi);
	lst = tcp_listener(&port);
	CHECK(in(lst, lo, hi), "socket gave %d", lst);
	fd = (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(in(fd, lo, hi), "syscall(SYS_socket) gave %d", fd);
	close(fd);
	c = tcp_connect(port);
	a = accept4(lst, NULL, NULL, SOCK_CLOEXEC);
	CHECK(in(c, lo, hi) && in(a, lo, hi), "connect socket %d, accept4 %d", c, a);
	close(c);
	close(a);
	close(lst);
	CHECK(pipe2(p, O_CLOEXEC) == 0 && in(p[0], lo, hi) && in(p[1], lo, hi),
	      "pipe2 gave %d %d", p[0], p[1]);
	fd = dup(p[0]);
	CHECK(in(fd, lo, hi), "dup gave %d", fd);
	close(fd);
	fd = pass_fd(p[1]);
	CHECK(in(fd, lo, hi), "SCM_RIGHTS gave %d", fd);
	close(fd);
	close(p[0]);
	close(p[1]);
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(in(fd, lo, hi), "eventfd gave %d", fd);
	close(fd);
	fd = epoll_create1(EPOLL_CLOEXEC);
	CHECK(in(fd, lo, hi), "epoll_create1 gave %d", fd);
	close(fd);
	fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	CHECK(in(fd, lo, hi), "pidfd_open gave %d", fd);
	close(fd);
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	CHECK(in(fd, lo, hi), "open gave %d", fd);
	close(fd);
	dir = opendir("/proc/self");
	CHECK(dir && in(dirfd(dir), lo, hi), "opendir gave %d", dir ? dirfd(dir) : -1);
	if (dir)
		closedir(dir);
	CHECK(set_range(0, 0) == 0, "clearing: %s", strerror(errno));
	no_range_is_lowest_free();
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_create", creation_paths, NULL);
}
