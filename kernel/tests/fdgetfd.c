// SPDX-License-Identifier: GPL-2.0
/*
 * fdgetfd [ITERS]: pidfd_getfd() from another process while the target
 * replaces N in its table and a target thread looks N up.
 *
 * The target (parent) replaces N over and over (dup2 of fresh files,
 * close and reopen), a reader thread checks its lookups. The child takes
 * copies of the parent's N with pidfd_getfd() and checks that each copy
 * is a file N named between just before and just after the call (never
 * an older one), and that it stays readable after the parent replaced
 * or closed N.
 */
#include "common.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/*
 * The parent's reopen lands at N through open(), at position 0, before
 * its lseek() to the identity: a copy taken in between shares that file
 * and reads as position 0 until the lseek.
 */
static int unpositioned(const struct obs *o, long ident)
{
	return ident && !o->err[0] && !o->err[1] && !o->err[2] && o->ident == 0 &&
	       o->marker == ident % NMARK && o->ino_mark == ident % NMARK;
}

static int child(pid_t target, int n, long iters)
{
	int pidfd = syscall(SYS_pidfd_open, target, 0);
	int kept = -1, kept_early = 0;
	long kept_ident = 0, got = 0, early = 0;
	unsigned long kept_s2 = 0;

	if (pidfd < 0) {
		if (errno == ENOSYS) {
			printf("fdgetfd: SKIP pidfd_open unavailable\n");
			return 0;
		}
		die("pidfd_open");
	}
	for (long i = 0; i < iters && !atomic_load(&sh->stop); i++) {
		unsigned long s1, s2;
		long floor_ident, newest = 0;
		struct obs o;
		int fd, is_early = 0;

		s1 = atomic_load(&sh->seq);
		floor_ident = sh->ident[s1 >> 1];
		fd = syscall(SYS_pidfd_getfd, pidfd, n, 0);
		s2 = atomic_load(&sh->seq);
		if (fd < 0) {
			if (errno != EBADF)
				die("pidfd_getfd");
			if (s1 == s2 && !(s1 & 1) && sh->ident[s1 >> 1])
				fail("pidfd_getfd: EBADF while N was open");
			continue;
		}
		got++;
		observe(fd, &o);
		/* idents grow by one per new file; a change in flight at s2
		 * may already have installed the next one */
		for (long k = s2 >> 1; k >= 0 && !newest; k--)
			newest = sh->ident[k];
		if (s2 & 1)
			newest++;
		/* Only while that change is in flight: change_end() follows
		 * the lseek. */
		if ((s2 & 1) && unpositioned(&o, newest)) {
			o.ident = newest;
			is_early = 1;
			early++;
		} else if (o.err[1] || o.ident < floor_ident || o.ident > newest ||
		    !obs_matches(&o, o.ident)) {
			char b[200];

			obs_str(&o, b, sizeof(b));
			fail("pidfd_getfd copy: idents %ld..%ld allowed, saw %s",
			     floor_ident, newest, b);
		}
		if (s1 == s2 && !(s1 & 1) && !obs_matches(&o, sh->ident[s1 >> 1]))
			fail("pidfd_getfd copy does not match stable state");
		if (kept >= 0) {
			/* the old copy survives whatever the parent did to N */
			struct obs ko;
			/* still unpositioned only while that same change is in flight */
			int same_change = kept_early && atomic_load(&sh->seq) == kept_s2;

			observe(kept, &ko);
			if (!obs_matches(&ko, kept_ident) &&
			    !(same_change && unpositioned(&ko, kept_ident)))
				fail("kept copy of ident %ld changed", kept_ident);
			close(kept);
		}
		kept = fd;
		kept_ident = o.ident;
		kept_early = is_early;
		kept_s2 = s2;
	}
	printf("fdgetfd child: copies=%ld (%ld taken between a reopen and its lseek)\n",
	       got, early);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 2000;
	long ident = 1;
	pthread_t r;
	pid_t pid;
	int n, st;

	setup("fdgetfd", 300);
	if (iters > MAXSTATES / 3)
		iters = MAXSTATES / 3;
	n = open_ident(ident, 0);
	state0(ident);
	r = start_reader(n, 0);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		sh->stop = 0;
		_exit(child(getppid(), n, iters * 4));
	}
	for (long i = 0; i < iters && !atomic_load(&sh->failures); i++) {
		if (i % 5 == 4) {
			int fd;

			change_begin(0);
			close(n);
			change_end(n, 0, "parent-close");
			change_begin(ident + 1);
			fd = open_ident(++ident, 0);
			if (fd != n)
				fail("reopen landed at %d", fd);
			change_end(n, ident, "parent-reopen");
		} else {
			int tmp = open_ident(++ident, 0);

			change_begin(ident);
			if (dup2(tmp, n) != n)
				die("dup2");
			change_end(n, ident, "parent-dup2");
			close(tmp);
		}
	}
	atomic_store(&sh->stop, 1);
	pthread_join(r, NULL);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		fail("child failed (status 0x%x)", st);
	return report("pidfd_getfd", iters);
}
