// SPDX-License-Identifier: GPL-2.0
/*
 * fdfork MODE [ROUNDS]:
 *
 *   fork         fork() from a threaded parent whose threads have N cached.
 *                Parent and child then each replace N in their own table
 *                with identities from disjoint ranges, with a reader
 *                thread each: neither may ever see the other's files.
 *   clone_files  clone(CLONE_FILES) without CLONE_VM: a child process that
 *                shares the table looks up N while the parent closes and
 *                replaces it; then the child exits (exit with a shared
 *                table) and the parent goes on.
 *   exit         short-lived threads look up N and exit while the main
 *                thread keeps replacing N.
 */
#include "common.h"
#include <sched.h>

static int n_fd;

static void replace_n(long ident, const char *who)
{
	int tmp = open_ident(ident, 0);

	change_begin(ident);
	if (dup2(tmp, n_fd) != n_fd)
		die("dup2");
	change_end(n_fd, ident, who);
	close(tmp);
}

/* Child of fork: private copies of everything, including its own states. */
static int fork_child(long base, long ident_at_fork)
{
	struct shared *mine;
	pthread_t r;
	struct obs o;

	observe(n_fd, &o);
	if (!obs_matches(&o, ident_at_fork))
		fail("child: N after fork is not ident %ld", ident_at_fork);
	mine = mmap(NULL, sizeof(*mine), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mine == MAP_FAILED)
		die("mmap");
	sh = mine;
	state0(ident_at_fork);
	r = start_reader(n_fd, 0);
	for (int k = 1; k <= 20; k++)
		replace_n(base + k, "child");
	atomic_store(&sh->stop, 1);
	pthread_join(r, NULL);
	return atomic_load(&sh->failures) ? 1 : 0;
}

static int run_fork(long rounds)
{
	long ident = 1;
	pthread_t r;

	n_fd = open_ident(ident, 0);
	state0(ident);
	r = start_reader(n_fd, 0);
	for (long i = 0; i < rounds && !atomic_load(&sh->failures); i++) {
		int st;
		pid_t pid;

		for (int k = 0; k < 50; k++)
			checked_lookup(n_fd, "parent-warm");
		pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0)
			_exit(fork_child(10000000 + i * 1000, ident));
		for (int k = 0; k < 20; k++)
			replace_n(++ident, "parent");
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			fail("fork child %ld failed (status 0x%x)", i, st);
	}
	atomic_store(&sh->stop, 1);
	pthread_join(r, NULL);
	return report("fork", rounds);
}

static int run_clone_files(long rounds)
{
	long ident = 1;

	n_fd = open_ident(ident, 0);
	state0(ident);
	for (long i = 0; i < rounds && !atomic_load(&sh->failures); i++) {
		int st;
		pid_t pid;

		atomic_store(&sh->stop, 0);
		pid = syscall(SYS_clone, CLONE_FILES | SIGCHLD, NULL, NULL,
			      NULL, 0);
		if (pid < 0)
			die("clone(CLONE_FILES)");
		if (pid == 0) {
			/* shares the table (and sh) with the parent; raw
			 * clone child: no pthreads, no stdio buffers */
			atomic_fetch_add(&sh->readers, 1);
			for (long k = 0; k < 1000000 && !atomic_load(&sh->stop); k++)
				checked_lookup(n_fd, "clone-child");
			atomic_fetch_sub(&sh->readers, 1);
			_exit(0);
		}
		/* wait (bounded) for the child to start looking */
		for (long w = 0; w < 10000000 && !atomic_load(&sh->readers); w++)
			sched_yield();
		for (int k = 0; k < 20; k++) {
			if (k % 4 == 3) {
				/* close N, then reopen it at N */
				int fd;

				change_begin(0);
				close(n_fd);
				change_end(n_fd, 0, "parent-close");
				change_begin(ident + 1);
				fd = open_ident(++ident, 0);
				if (fd != n_fd)
					fail("reopen landed at %d", fd);
				change_end(n_fd, ident, "parent-reopen");
			} else {
				replace_n(++ident, "parent");
			}
		}
		atomic_store(&sh->stop, 1);
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			fail("clone child %ld failed (status 0x%x)", i, st);
		/* the child's exit must not disturb the table */
		replace_n(++ident, "parent-after-exit");
	}
	return report("clone_files", rounds);
}

static void *short_thread(void *p)
{
	(void)p;
	for (int k = 0; k < 30; k++)
		checked_lookup(n_fd, "short-thread");
	return NULL;
}

static int run_exit(long rounds)
{
	long ident = 1;

	n_fd = open_ident(ident, 0);
	state0(ident);
	for (long i = 0; i < rounds && !atomic_load(&sh->failures); i++) {
		pthread_t t[3];

		for (int k = 0; k < 3; k++)
			if (pthread_create(&t[k], NULL, short_thread, NULL))
				die("pthread_create");
		for (int k = 0; k < 3; k++)
			replace_n(++ident, "main");
		for (int k = 0; k < 3; k++)
			pthread_join(t[k], NULL);
	}
	return report("exit", rounds);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	long rounds = argc > 2 ? atol(argv[2]) : 100;

	setup("fdfork", 300);
	if (!strcmp(mode, "fork"))
		return run_fork(rounds);
	if (!strcmp(mode, "clone_files"))
		return run_clone_files(rounds);
	if (!strcmp(mode, "exit"))
		return run_exit(rounds);
	fprintf(stderr, "fdfork: unknown mode %s\n", mode);
	return 2;
}
