// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_floor on|off: with a floor, the range is used only while every
 * fd below the floor is open; a process holding few fds keeps its low
 * numbers, and an fd freed below the floor is refilled first.
 */
#include "fdrange.h"

static void floor_keeps_few_fds_low(void)
{
	int fd, want, held[64], n = 0;
	unsigned r[3];

	CHECK(prctl(PR_SET_FD_RANGE, 600, 664, 40, 0) == 0, "set with floor 40: %s", strerror(errno));
	get_range(r);
	CHECK(r[0] == 600 && r[1] == 664 && r[2] == 40, "GET gave [%u,%u) floor %u", r[0], r[1], r[2]);
	want = lowest_free();
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == want && fd < 40, "few fds (lowest free %d): got %d", want, fd);
	close(fd);
	/* fill everything below the floor: then the range applies */
	while ((fd = lowest_free()) >= 0 && fd < 40 && n < 64)
		held[n++] = fcntl(0, F_DUPFD_CLOEXEC, fd);
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == 600, "all of 0-39 open: got %d, want 600", fd);
	close(fd);
	/* one fd below the floor freed: its number again */
	if (n > 5) {
		want = held[5];
		close(held[5]);
		fd = eventfd(0, EFD_CLOEXEC);
		CHECK(fd == want, "fd %d below the floor free: got %d", want, fd);
		held[5] = fd;
	}
	for (int i = 0; i < n; i++)
		close(held[i]);
	set_range(0, 0);
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_floor", floor_keeps_few_fds_low, NULL);
}
