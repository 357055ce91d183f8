// SPDX-License-Identifier: GPL-2.0
/*
 * fdunshare MODE [ROUNDS]: a thread that has N cached leaves the shared
 * table while the others keep changing N in it.
 *
 *   unshare      the thread calls unshare(CLONE_FILES): from then on it
 *                must see exactly the file N named at that moment, however
 *                often the main thread dup2()s over N in the shared table;
 *                its own close(N) must not close N for the others.
 *   close_range  the thread calls close_range(N, N, CLOSE_RANGE_UNSHARE):
 *                N is closed for it, untouched for the others.
 *
 * Round structure: main opens N (state ident), starts the leaver thread,
 * the leaver warms its cache, leaves, signals; main then replaces N in the
 * shared table a number of times, each change checked by the main thread
 * and racing the leaver's lookups of its private N.
 */
#include "common.h"
#include <sched.h>
#include <linux/close_range.h>

static int use_close_range, n_fd;
static long round_ident;
static atomic_int left, done;

static void *leaver(void *p)
{
	struct obs o;
	char b[200];
	long expect;

	(void)p;
	for (int i = 0; i < 100; i++)
		checked_lookup(n_fd, "leaver-before");
	if (use_close_range) {
		if (syscall(SYS_close_range, n_fd, n_fd, CLOSE_RANGE_UNSHARE))
			die("close_range(CLOSE_RANGE_UNSHARE)");
		expect = 0;
	} else {
		if (unshare(CLONE_FILES))
			die("unshare(CLONE_FILES)");
		expect = round_ident;
	}
	atomic_store(&left, 1);
	for (long i = 0; i < 1000000 && !atomic_load(&done); i++) {
		observe(n_fd, &o);
		if (!obs_matches(&o, expect)) {
			obs_str(&o, b, sizeof(b));
			fail("private table: expected %s%ld, saw %s",
			     expect ? "ident " : "closed ", expect, b);
			break;
		}
	}
	if (!use_close_range) {
		close(n_fd);	/* only in the private table */
		observe(n_fd, &o);
		if (!obs_matches(&o, 0))
			fail("private close did not close N for the leaver");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "unshare";
	long rounds = argc > 2 ? atol(argv[2]) : 200;
	long ident = 1;

	setup("fdunshare", 300);
	use_close_range = !strcmp(mode, "close_range");
	if (!use_close_range && strcmp(mode, "unshare")) {
		fprintf(stderr, "fdunshare: unknown mode %s\n", mode);
		return 2;
	}
	n_fd = open_ident(ident, 0);
	state0(ident);
	for (long r = 0; r < rounds && !atomic_load(&sh->failures); r++) {
		pthread_t t;

		round_ident = ident;
		atomic_store(&left, 0);
		atomic_store(&done, 0);
		if (pthread_create(&t, NULL, leaver, NULL))
			die("pthread_create");
		for (long w = 0; !atomic_load(&left) && w < 100000000; w++)
			checked_lookup(n_fd, "main-wait");
		for (int k = 0; k < 10; k++) {
			int tmp = open_ident(++ident, 0);

			change_begin(ident);
			if (dup2(tmp, n_fd) != n_fd)
				die("dup2");
			change_end(n_fd, ident, "main");
			close(tmp);
		}
		atomic_store(&done, 1);
		pthread_join(t, NULL);
		/* the leaver's private close must not have touched ours */
		checked_lookup(n_fd, "main-after");
	}
	return report(mode, rounds);
}
