// SPDX-License-Identifier: GPL-2.0
/*
 * fdgrow ROUNDS: the fd table is replaced by a larger one (expand_fdtable)
 * while two reader threads look up N, and N is replaced after every
 * growth. With CONFIG_FDCACHE the invalidation counters live in the table
 * and move with it: the old table's counters are bumped and copied into
 * the new one, and a lookup that still holds the old table must not trust
 * its counters once the new table is published.
 *
 * A table never shrinks, so each round is a fresh process: a fork of the
 * single-threaded parent, whose small table the child copies. The child
 * starts its readers, then grows its table six times (dup2 of N to fd
 * 64, 128, ... 2048: tables of 128 to 4096 fds) and replaces N four times
 * after each growth; every lookup is checked against the states the
 * child publishes (common.h).
 */
#include "common.h"
#include <sys/resource.h>

static void replace_n(int n, long ident)
{
	int tmp = open_ident(ident, 0);

	change_begin(ident);
	if (dup2(tmp, n) != n)
		die("dup2");
	change_end(n, ident, "grow");
	close(tmp);
}

static int round_child(long base)
{
	long ident = base;
	pthread_t r[2];
	int n;

	n = open_ident(ident, 0);
	state0(ident);
	r[0] = start_reader(n, 0);
	r[1] = start_reader(n, 1);
	for (int g = 0; g < 6 && !atomic_load(&sh->failures); g++) {
		int hi = 64 << g;

		/* The table grows under the readers' lookups of N. */
		if (dup2(n, hi) != hi)
			die("dup2 to grow the table");
		close(hi);
		for (int k = 0; k < 4; k++)
			replace_n(n, ++ident);
	}
	atomic_store(&sh->stop, 1);
	pthread_join(r[0], NULL);
	pthread_join(r[1], NULL);
	return atomic_load(&sh->failures) ? 1 : 0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	struct rlimit rl;
	long done = 0;

	setup("fdgrow", 600);
	/* fd 2048 needs a limit above the usual soft 1024 (hard is 4096). */
	if (getrlimit(RLIMIT_NOFILE, &rl))
		die("getrlimit");
	if (rl.rlim_max < 4096) {
		printf("fdgrow grow: SKIP hard RLIMIT_NOFILE %lu < 4096\n",
		       (unsigned long)rl.rlim_max);
		return 0;
	}
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit");
	for (long i = 0; i < rounds && !atomic_load(&sh->failures); i++) {
		int status;
		pid_t pid;

		atomic_store(&sh->stop, 0);
		pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid)
			_exit(round_child(1 + i * 100));
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail("round %ld: child ended with status 0x%x", i, status);
		done++;
	}
	return report("grow", done);
}
