// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_explicit on|off: explicit targets ignore the range: F_DUPFD's
 * minimum (0: the lowest free number, below the range; 20: 20), dup2 and
 * dup3.
 */
#include "fdrange.h"

static void explicit_targets(void)
{
	const unsigned lo = 100, hi = 164;
	int fd, d;

	set_range_checked(lo, hi);
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	CHECK(in(fd, lo, hi), "open gave %d", fd);
	d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	CHECK(d >= 0 && d < (int)lo, "F_DUPFD(0) gave %d, not the lowest free", d);
	close(d);
	d = fcntl(fd, F_DUPFD_CLOEXEC, 20);
	CHECK(d == 20, "F_DUPFD(20) gave %d", d);
	CHECK(dup2(fd, 21) == 21 && dup3(fd, 22, O_CLOEXEC) == 22, "dup2/dup3 moved");
	close(20);
	close(21);
	close(22);
	close(fd);
	set_range(0, 0);
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_explicit", explicit_targets, NULL);
}
