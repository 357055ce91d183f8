// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_full on|off: a full range falls back to the lowest free number,
 * and a freed slot in the range is used again.
 */
#include "fdrange.h"

static void full_range_falls_back(void)
{
	int fds[8], extra, want;

	CHECK(set_range(300, 304) == 0, "set [300,304): %s", strerror(errno));
	for (int i = 0; i < 4; i++) {
		fds[i] = eventfd(0, EFD_CLOEXEC);
		CHECK(fds[i] == 300 + i, "fd %d of the range is %d", i, fds[i]);
	}
	want = lowest_free();
	extra = eventfd(0, EFD_CLOEXEC);
	CHECK(extra == want, "full range: got %d, lowest free %d", extra, want);
	close(fds[2]);
	fds[2] = eventfd(0, EFD_CLOEXEC);
	CHECK(fds[2] == 302, "a freed slot in the range: got %d, want 302", fds[2]);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	close(extra);
	set_range(0, 0);
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_full", full_range_falls_back, NULL);
}
