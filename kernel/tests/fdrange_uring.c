// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_uring on|off: io_uring's openat and accept into the table (not
 * fixed files) land in the submitter's range when they complete inline.
 * (A request punted to an io-wq worker runs as that worker, a task without
 * a range, and gets the lowest free fd: not checked here.)
 */
#include "fdrange.h"
#include <liburing.h>

/* Submit the prepared request and check the fd its completion installed
 * (an error result fails the check too). */
static void uring_check(struct io_uring *ring, const char *what, unsigned lo, unsigned hi)
{
	struct io_uring_cqe *cqe;
	int r;

	io_uring_submit(ring);
	if (io_uring_wait_cqe(ring, &cqe))
		return;
	r = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	CHECK(in(r, lo, hi), "io_uring %s gave %d, range [%u,%u)", what, r, lo, hi);
	if (r >= 0)
		close(r);
}

static void uring_paths(void)
{
	const unsigned lo = 100, hi = 164;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int port = 0, lst, c;

	set_range_checked(lo, hi);
	lst = tcp_listener(&port);
	CHECK(in(lst, lo, hi), "socket gave %d", lst);
	/* The ring's own fd is lowest-free too: set up before the check. */
	if (io_uring_queue_init(4, &ring, 0)) {
		fprintf(stderr, "%s: io_uring unavailable, its paths not checked\n", prog);
		close(lst);
		set_range(0, 0);
		return;
	}
	/* A path in the dentry cache, with no symlink on the way (/proc/self
	 * is one): an uncached lookup fails inline, and the request is
	 * punted to a worker, outside the range. */
	close(open("/etc/hosts", O_RDONLY | O_CLOEXEC));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, "/etc/hosts", O_RDONLY | O_CLOEXEC, 0);
	uring_check(&ring, "openat", lo, hi);
	c = tcp_connect(port);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_accept(sqe, lst, NULL, NULL, SOCK_CLOEXEC);
	uring_check(&ring, "accept", lo, hi);
	if (c >= 0)
		close(c);
	io_uring_queue_exit(&ring);
	close(lst);
	set_range(0, 0);
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_uring", uring_paths, NULL);
}
