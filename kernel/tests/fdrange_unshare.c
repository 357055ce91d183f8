// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_unshare on|off: a thread that leaves the shared table,
 * unshare(CLONE_FILES) or close_range(CLOSE_RANGE_UNSHARE), leaves its
 * range behind: PR_GET_FD_RANGE reports none, and its next fd is the
 * lowest free one of its copy.
 */
#include "fdrange.h"

static void *thread_unshares(void *arg)
{
	unsigned r[3];
	int how = (int)(long)arg, fd, want;

	set_range(400, 408);
	if (how == 0)
		CHECK(unshare(CLONE_FILES) == 0, "unshare: %s", strerror(errno));
	else
		CHECK(syscall(SYS_close_range, 1000, 1001, CLOSE_RANGE_UNSHARE) == 0,
		      "close_range(UNSHARE): %s", strerror(errno));
	get_range(r);
	CHECK(r[0] == 0 && r[1] == 0, "%s: range [%u,%u) still reported",
	      how ? "close_range" : "unshare", r[0], r[1]);
	want = lowest_free();
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == want, "%s: got %d, lowest free %d", how ? "close_range" : "unshare", fd, want);
	return NULL;
}

static void unshare_leaves_range(void)
{
	pthread_t t;

	/* A thread that leaves the shared table leaves its range behind. */
	for (long how = 0; how < 2; how++) {
		pthread_create(&t, NULL, thread_unshares, (void *)how);
		pthread_join(t, NULL);
	}
	set_range(0, 0);
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_unshare", unshare_leaves_range, NULL);
}
