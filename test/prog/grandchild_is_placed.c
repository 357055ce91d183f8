/* SPDX-License-Identifier: MIT */
/*
 * One process, one block, however many fork() generations down: a
 * double-forking daemon's grandchild whose threads create fds gets them
 * placed (fd >= BASE, in the thread's own line), in a block of its own
 * (the only fdrange block it maps carries its own pid), whether or not
 * the middle process ever placed an fd.  (The grandchild used to keep a
 * NULL parent block, or inherit a "making" flag left at 1: its threads
 * got 3 4 5 6 and `fdrange stat` called its block forged.)
 *
 *   grandchild_is_placed MODE idle     the middle process places nothing
 *   grandchild_is_placed MODE placing  the middle process places first
 */
#include "common.h"

#include <sys/wait.h>

#define NT 3

static int made[NT];
/* The threads live until all made their fds: an exited thread's line goes
 * back to the pool, and the next thread may share it with its fds. */
static pthread_barrier_t all;
static bool wait_all;

static void *make(void *arg)
{
	long i = (long)arg;

	made[i] = eventfd(0, EFD_CLOEXEC);
	CHECK(made[i] >= 0, "eventfd: %s", strerror(errno));
	if (wait_all)
		pthread_barrier_wait(&all);
	return NULL;
}

/* The header pid of every fdrange block this process maps; their count. */
static int blocks(int32_t pids[4])
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	CHECK(f, "maps");
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo;

		if (!strstr(line, "/memfd:fdrange (deleted)") || sscanf(line, "%lx-", &lo) != 1)
			continue;
		/* struct fdr_blk_hdr: magic[8], version, hdr_size, size (8), pid */
		if (n < 4)
			pids[n] = *(const int32_t *)(uintptr_t)(lo + 24);
		n++;
	}
	fclose(f);
	return n;
}

/* In the grandchild: threads make fds; 0 if they were placed as they should be. */
static int grandchild(long base)
{
	pthread_t t[NT];
	int32_t pids[4];
	int n;

	pthread_barrier_init(&all, NULL, NT);
	wait_all = true;
	for (long i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, make, (void *)i))
			return 20;
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NT; i++) {
		if (placed_mode && made[i] < base) {
			fprintf(stderr, "grandchild thread %d: fd %d not placed\n", i, made[i]);
			return 21;
		}
		for (int k = 0; k < i && placed_mode; k++)
			if ((made[i] - base) / 8 == (made[k] - base) / 8) {
				fprintf(stderr, "grandchild fds %d and %d on one line\n", made[i],
					made[k]);
				return 22;
			}
	}
	n = blocks(pids);
	if (placed_mode && (n != 1 || pids[0] != getpid())) {
		fprintf(stderr, "grandchild %d maps %d blocks, the first of pid %d\n", getpid(), n,
			n ? pids[0] : 0);
		return 23;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long base = env_num("FDRANGE_BASE", 64);
	const char *mode = argc > 2 ? argv[2] : "";
	int p[2], st, code = -1;
	pid_t mid;

	test_mode(argc, argv);
	CHECK(!strcmp(mode, "idle") || !strcmp(mode, "placing"), "mode idle or placing");
	CHECK(pipe(p) == 0, "pipe");
	mid = fork();
	CHECK(mid >= 0, "fork");
	if (mid == 0) {
		pid_t g;

		if (!strcmp(mode, "placing")) {
			pthread_t t;

			/* A thread of the middle process places an fd first. */
			CHECK(pthread_create(&t, NULL, make, (void *)0L) == 0, "pthread_create");
			pthread_join(t, NULL);
			CHECK(!placed_mode || made[0] >= base, "middle: fd %d not placed", made[0]);
			close(made[0]);
		}
		setsid();
		g = fork();
		if (g < 0)
			_exit(30);
		if (g == 0) {
			int r = grandchild(base);

			CHECK(write(p[1], &r, sizeof(r)) == sizeof(r), "write");
			_exit(0);
		}
		_exit(0);  /* the daemon's middle process goes away */
	}
	close(p[1]);
	CHECK(waitpid(mid, &st, 0) == mid && WIFEXITED(st) && !WEXITSTATUS(st), "middle process");
	CHECK(read(p[0], &code, sizeof(code)) == sizeof(code), "no word from the grandchild");
	CHECK(code == 0, "grandchild failed with %d (%s)", code, mode);
	close(p[0]);
	printf("double fork (%s middle): the grandchild's threads are placed, in its own block: "
	       "ok (%s)\n", mode, argv[1]);
	return 0;
}
