// SPDX-License-Identifier: GPL-2.0
/*
 * fdexec [ROUNDS]: exec with and without close-on-exec, from the main
 * thread and from a secondary thread, while another thread keeps looking
 * up N (so the table is shared and exec has to unshare it).
 *
 * Round r opens N = ident r (O_CLOEXEC when r is even), starts a reader
 * thread, warms the exec'ing thread's cache with lookups of N, then execs
 * itself (from a secondary thread when r % 3 == 2). The new image checks
 * that N is closed (cloexec) or still names ident r (not cloexec), then
 * starts the next round. All rounds run in one chain of execs.
 */
#include "common.h"

static int n_fd;
static long round_no, rounds;
static char self[256];

static void do_exec(void)
{
	char a1[32], a2[32], a3[32], a4[32];
	char *av[] = { "fdexec", a1, a2, a3, a4, NULL };

	snprintf(a1, sizeof(a1), "%ld", rounds);
	snprintf(a2, sizeof(a2), "%ld", round_no);
	snprintf(a3, sizeof(a3), "%d", n_fd);
	snprintf(a4, sizeof(a4), "%d", (round_no % 2) == 0);
	/* warm this thread's cache for N */
	for (int i = 0; i < 200; i++) {
		struct obs o;

		observe(n_fd, &o);
		if (!obs_matches(&o, round_no)) {
			char b[200];

			obs_str(&o, b, sizeof(b));
			fail("before exec: N does not name ident %ld: %s",
			     round_no, b);
			break;
		}
	}
	execv(self, av);
	die("execv");
}

static void *exec_thread(void *p)
{
	(void)p;
	do_exec();
	return NULL;
}

static void *spin_reader(void *p)
{
	(void)p;
	for (long i = 0; i < 10000000; i++) {
		struct obs o;

		observe(n_fd, &o);
		if (!obs_matches(&o, round_no)) {
			fail("reader: N does not name ident %ld", round_no);
			break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	ssize_t l;

	setup("fdexec", 600);
	l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (l <= 0)
		die("readlink /proc/self/exe");
	self[l] = 0;

	if (argc == 5) {
		/* After exec of round argv[2]. */
		long prev = atol(argv[2]);
		int fd = atoi(argv[3]), cloexec = atoi(argv[4]);
		struct obs o;

		rounds = atol(argv[1]);
		observe(fd, &o);
		if (!obs_matches(&o, cloexec ? 0 : prev)) {
			char b[200];

			obs_str(&o, b, sizeof(b));
			fail("round %ld after exec (%s): %s", prev,
			     cloexec ? "cloexec, expect closed" : "expect kept", b);
			return report("exec", prev);
		}
		close(fd);
		round_no = prev + 1;
	} else {
		rounds = argc > 1 ? atol(argv[1]) : 60;
		round_no = 1;
	}
	if (round_no > rounds) {
		atomic_store(&sh->checks, rounds);
		return report("exec", rounds);
	}

	n_fd = open_ident(round_no, (round_no % 2) == 0 ? O_CLOEXEC : 0);
	if (pthread_create(&t, NULL, spin_reader, NULL))
		die("pthread_create");
	if (round_no % 3 == 2) {
		pthread_t e;

		if (pthread_create(&e, NULL, exec_thread, NULL))
			die("pthread_create");
		pthread_join(e, NULL);	/* exec never returns */
		die("exec thread returned");
	}
	do_exec();
	return 1;
}
