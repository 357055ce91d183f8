/* SPDX-License-Identifier: MIT */
/*
 * posix_spawn() with file actions (open, dup2, close) while other threads
 * create fds.  glibc runs the actions in a CLONE_VFORK child with its own
 * internal open (not interposed), so nothing is placed there; the spawned
 * program inherits the preload and must see exactly the files the actions
 * set up.  `cat` copies a file the parent wrote to a pipe read back here.
 */
#include "hard.h"

#include <spawn.h>

#define NCHURN 2

extern char **environ;
static volatile int stop;

int main(int argc, char **argv)
{
	struct churn c[NCHURN] = { 0 };
	unsigned rounds = (unsigned)env_num("HARD_FORKS", 150);
	char path[] = "/tmp/fdrange-spawn.XXXXXX";
	int before, tmp;

	hard_init(argc, argv);
	before = count_fds();
	tmp = mkstemp(path);
	CHECK(tmp >= 0, "mkstemp: %s", strerror(errno));
	close(tmp);
	churn_start(c, NCHURN, &stop, false);
	for (unsigned i = 0; i < rounds; i++) {
		char want[32], got[64] = { 0 };
		char *args[] = { "cat", NULL };
		posix_spawn_file_actions_t fa;
		int p[2], st, len, f;
		ssize_t n;
		pid_t pid;

		len = snprintf(want, sizeof(want), "spawn %u\n", i);
		f = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		CHECK(f >= 0 && write(f, want, (size_t)len) == len, "write %s", path);
		CHECK(!placed_mode || in_my_range(f), "fd %d from open() not placed", f);
		close(f);
		CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe2");
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 0, path, O_RDONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, p[1], 1);
		posix_spawn_file_actions_addclose(&fa, p[0]);
		CHECK(posix_spawnp(&pid, "cat", &fa, NULL, args, environ) == 0, "posix_spawnp");
		posix_spawn_file_actions_destroy(&fa);
		close(p[1]);
		/* To EOF, not one read: a cat that sends with sendfile() (busybox)
		 * makes one more call after the data, which a pipe already
		 * closed here answers with SIGPIPE.  Past the buffer, the rest is
		 * read and counted, not kept. */
		n = 0;
		for (;;) {
			char sink[64];
			size_t cap = sizeof(got) - 1;  /* got stays NUL-terminated */
			size_t kept = (size_t)n < cap ? (size_t)n : cap;
			ssize_t r = kept < cap ? read(p[0], got + kept, cap - kept) :
						 read(p[0], sink, sizeof(sink));

			if (r < 0 && errno == EINTR)
				continue;
			CHECK(r >= 0, "read from cat: %s", strerror(errno));
			if (!r)
				break;
			n += r;
		}
		close(p[0]);
		CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "cat status %#x", st);
		CHECK(n == len && !memcmp(got, want, (size_t)len), "cat wrote '%s'", got);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	churn_join(c, NCHURN);
	unlink(path);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("posix_spawn: %u rounds ok (%s)\n", rounds, argv[1]);
	return 0;
}
