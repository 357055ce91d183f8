/* SPDX-License-Identifier: MIT */
/*
 * A thread fills its 8-fd line, then a 64-fd chunk; a slot of its line is
 * freed, and its next fd goes back to that slot rather than to a new
 * chunk, so that fd numbers stay compact.  Except where the kernel
 * allocates and closes in ranges without the table's lock, under a lock
 * per 64-fd group (kernel patch 0007 booted with fd_range_nolock=on:
 * PR_GET_FD_RANGE's sixth value is 1) and the library is on its
 * kernel-range path: there a thread that has a chunk does not go back to
 * its line, whose group lock it would share with the lines of seven other
 * threads for every fd it got there.  Either way every fd keeps its file.
 */
#include "common.h"

#define IN_CHUNK 64

static int (*thread_range)(int *lo, int *hi);

static void *work(void *arg)
{
	int fds[8 + IN_CHUNK], lo = -1, hi = -1, freed, next;
	bool groups = kernel_groups();

	(void)arg;
	for (int i = 0; i < 8 + IN_CHUNK; i++) {
		fds[i] = eventfd((unsigned)i + 1, EFD_CLOEXEC);
		CHECK(fds[i] >= 0, "eventfd %d: %s", i, strerror(errno));
		/* Its range while it holds no chunk is its line. */
		if (placed_mode && i == 0)
			CHECK(thread_range(&lo, &hi) == 0 && hi - lo == 8 && fds[0] >= lo &&
			      fds[0] < hi, "first fd %d, thread range [%d,%d): not its line",
			      fds[0], lo, hi);
	}
	if (placed_mode)
		for (int i = 0; i < 8; i++)
			CHECK(fds[i] >= lo && fds[i] < hi, "fd %d of the first 8 (%d) outside the "
			      "line [%d,%d)", i, fds[i], lo, hi);
	freed = fds[3];
	close(freed);
	next = eventfd(100, EFD_CLOEXEC);
	CHECK(next >= 0, "eventfd: %s", strerror(errno));
	if (placed_mode && groups)
		CHECK(next < lo || next >= hi, "fd %d back in the line [%d,%d) although the "
		      "kernel locks per group", next, lo, hi);
	else if (placed_mode)
		CHECK(next == freed, "fd %d, not the line's free slot %d", next, freed);
	for (int i = 0; i < 8 + IN_CHUNK; i++) {
		uint64_t v = 0;

		if (i == 3)
			continue;
		CHECK(read(fds[i], &v, sizeof(v)) == sizeof(v) && v == (uint64_t)i + 1,
		      "fd %d reads %llu, want %d", fds[i], (unsigned long long)v, i + 1);
		close(fds[i]);
	}
	close(next);
	printf("line reused before a new chunk: next fd %d, freed %d, line [%d,%d), kernel "
	       "groups %s: ok (%s)\n", next, freed, lo, hi, groups ? "yes" : "no",
	       placed_mode ? "placed" : "plain");
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int before;

	test_mode(argc, argv);
	thread_range = (int (*)(int *, int *))dlsym(RTLD_DEFAULT, "fdrange_thread_range");
	CHECK(!placed_mode || thread_range, "fdrange_thread_range not exported");
	before = count_fds();
	CHECK(pthread_create(&t, NULL, work, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	return 0;
}
