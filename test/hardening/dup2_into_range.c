/* SPDX-License-Identifier: MIT */
/*
 * The program itself dup2()s and dup3()s onto chosen free numbers inside
 * the ranges while threads fill those ranges.  The library never hands
 * out (nor closes, nor replaces) a number the program holds: F_DUPFD skips
 * it.  The program's fds keep reaching their files throughout.
 *
 * (A program that dup2()s onto a number it did not check is free can
 * replace an fd another thread holds, with or without the library; the
 * library only makes numbers >= FDRANGE_BASE likelier to be in use.)
 */
#include "hard.h"

#define NT 4
#define PER 60

static int pinned[NT * 3];
static int npinned;

struct job {
	pthread_t tid;
	struct tok o[PER];
};

static void *make(void *arg)
{
	struct job *j = arg;

	for (int i = 0; i < PER; i++) {
		CHECK(tok_create(&j->o[i], (uint64_t)(uintptr_t)j ^ (uint64_t)i, (unsigned long)i) == 0,
		      "create: %s", strerror(errno));
		for (int k = 0; k < 2; k++)
			for (int p = 0; p < npinned; p++)
				CHECK(j->o[i].fd[k] != pinned[p], "fd %d handed out while pinned", pinned[p]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct job jobs[NT];
	long base = env_num("FDRANGE_BASE", 128), width = env_num("FDRANGE_WIDTH", 256);
	int before, src, memfd;
	uint64_t token = 0x5eed, got;

	hard_init(argc, argv);
	before = count_fds();
	memfd = memfd_create("pinned", MFD_CLOEXEC);
	CHECK(memfd >= 0 && pwrite(memfd, &token, 8, 0) == 8, "memfd");
	src = memfd;
	/* Pin numbers at the start, inside and near the end of each range. */
	for (int r = 0; r < NT; r++) {
		int want[3] = { (int)(base + r * width), (int)(base + r * width + 5),
				(int)(base + r * width + width / 2) };

		for (int k = 0; k < 3; k++) {
			int fd;

			/* The next free number (the memfd itself may sit at a
			 * range's start). */
			while (fcntl(want[k], F_GETFD) >= 0)
				want[k]++;
			fd = k == 1 ? dup3(src, want[k], O_CLOEXEC) : dup2(src, want[k]);
			CHECK(fd == want[k], "dup onto %d: %s", want[k], strerror(errno));
			pinned[npinned++] = fd;
		}
	}
	for (int t = 0; t < NT; t++)
		CHECK(pthread_create(&jobs[t].tid, NULL, make, &jobs[t]) == 0, "pthread_create");
	for (int t = 0; t < NT; t++)
		pthread_join(jobs[t].tid, NULL);
	for (int p = 0; p < npinned; p++) {
		got = 0;
		CHECK(pread(pinned[p], &got, 8, 0) == 8 && got == token, "pinned fd %d lost its file",
		      pinned[p]);
		CHECK(fcntl(pinned[p], F_GETFD) == (p % 3 == 1 ? FD_CLOEXEC : 0), "pinned fd %d flags",
		      pinned[p]);
	}
	for (int t = 0; t < NT; t++)
		for (int i = 0; i < PER; i++)
			tok_check_close(&jobs[t].o[i]);
	for (int p = 0; p < npinned; p++)
		close(pinned[p]);
	close(memfd);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("dup2 into ranges: %d pinned numbers kept: ok (%s)\n", npinned, argv[1]);
	return 0;
}
