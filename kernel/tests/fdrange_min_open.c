// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_min_open on|off: the range is used only while the table holds
 * min_open fds, and then even with holes below it (a connection closed low
 * is not replaced low); with fewer held, the lowest free fd, the hole
 * first.  A min_open no table can reach: never used, and no error.
 */
#include "fdrange.h"

static void min_open_leaves_holes(void)
{
	int held[24], n = 0, fd, hole, want;
	long open = kernel_open_count();
	unsigned r[5];

	CHECK(open >= 0, "PR_GET_FD_RANGE of 5 values: %s", strerror(errno));
	if (open < 0)
		return;
	COUNT_MATCHES("before min_open");
	CHECK(prctl(PR_SET_FD_RANGE, 600, 664, 3, open + 20) == 0, "set with min_open %ld: %s",
	      open + 20, strerror(errno));
	memset(r, 0xff, sizeof(r));
	CHECK(prctl(PR_GET_FD_RANGE, r, 5, 0, 0) == 0 && r[0] == 600 && r[1] == 664 && r[2] == 3 &&
	      r[3] == open + 20 && r[4] == open, "GET gave [%u,%u) floor %u min_open %u open %u",
	      r[0], r[1], r[2], r[3], r[4]);
	/* fewer than min_open held: the lowest free fd */
	while (n < 20) {
		want = lowest_free();
		held[n] = eventfd(0, EFD_CLOEXEC);
		CHECK(held[n] == want, "holding %ld of %ld: got %d, lowest free %d", open + n, open + 20,
		      held[n], want);
		n++;
	}
	/* min_open held: the range, and a hole below it stays a hole */
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == 600, "holding min_open (%ld): got %d, want 600", open + 20, fd);
	hole = held[3];
	close(hole);
	held[3] = fd;
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == 601, "holding %ld with fd %d free: got %d, want 601", open + 20, hole, fd);
	held[n++] = fd;
	COUNT_MATCHES("min_open held");
	/* below min_open again: the hole first */
	close(held[--n]);
	close(held[3]);
	held[3] = -1;
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == hole, "holding %ld of %ld: got %d, want the hole %d", open + 19, open + 20, fd, hole);
	held[3] = fd;
	for (int i = 0; i < n; i++)
		close(held[i]);
	/* a min_open no table can reach: never used, and no error */
	CHECK(prctl(PR_SET_FD_RANGE, 600, 664, 3, 1ul << 31) == 0, "min_open 2^31: %s", strerror(errno));
	want = lowest_free();
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == want, "min_open 2^31: got %d, lowest free %d", fd, want);
	close(fd);
	set_range(0, 0);
	COUNT_MATCHES("after min_open");
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_min_open", min_open_leaves_holes, NULL);
}
