// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_args on|off: bad arguments fail with EINVAL (lo == hi, lo > hi,
 * hi past nr_open, a floor above lo, min_open past 32 bits or without a
 * range, PR_GET_FD_RANGE of 2 or 7 values or with arg4), a GET to NULL
 * with EFAULT, and a failed set leaves no range.
 */
#include "fdrange.h"

static void bad_arguments(void)
{
	unsigned r[8];

	errno = 0;
	CHECK(set_range(10, 10) == -1 && errno == EINVAL, "lo == hi accepted");
	CHECK(set_range(20, 10) == -1 && errno == EINVAL, "lo > hi accepted");
	CHECK(set_range(0, 1u << 31) == -1 && errno == EINVAL, "hi past nr_open accepted");
	CHECK(prctl(PR_SET_FD_RANGE, 100, 110, 101, 0) == -1 && errno == EINVAL, "floor above lo accepted");
	CHECK(prctl(PR_SET_FD_RANGE, 100, 110, 0, 1ul << 32) == -1 && errno == EINVAL,
	      "min_open past 32 bits accepted");
	CHECK(prctl(PR_SET_FD_RANGE, 0, 0, 0, 5) == -1 && errno == EINVAL, "min_open without a range accepted");
	CHECK(prctl(PR_GET_FD_RANGE, NULL, 0, 0, 0) == -1 && errno == EFAULT, "GET to NULL");
	CHECK(prctl(PR_GET_FD_RANGE, r, 2, 0, 0) == -1 && errno == EINVAL, "GET of 2 values accepted");
	CHECK(prctl(PR_GET_FD_RANGE, r, 7, 0, 0) == -1 && errno == EINVAL, "GET of 7 values accepted");
	CHECK(prctl(PR_GET_FD_RANGE, r, 3, 1, 0) == -1 && errno == EINVAL, "GET with arg4 accepted");
	get_range(r);
	CHECK(r[0] == 0 && r[1] == 0, "a failed set left [%u,%u)", r[0], r[1]);
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_args", bad_arguments, NULL);
}
