// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_grow on|off: a range past the table's size grows the table (as
 * F_DUPFD would); when the table cannot grow (fs.nr_open lowered under
 * it, in a fork child) the lowest free fd comes, never an error the range
 * caused; a range past RLIMIT_NOFILE is not used.
 */
#include "fdrange.h"

static void resize_and_limit(void)
{
	struct rlimit rl;
	int fd, want;

	/* Past the table's size (at most 4096 here): the table grows. */
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 8192) {
		struct rlimit up = { 8192, rl.rlim_max > 8192 ? rl.rlim_max : 8192 };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
	}
	CHECK(set_range(5000, 5008) == 0, "set [5000,5008): %s", strerror(errno));
	fd = eventfd(0, EFD_CLOEXEC);
	if (rl.rlim_cur > 5000)
		CHECK(fd == 5000, "range past the table: got %d", fd);
	else
		CHECK(fd >= 0 && fd < 5000, "range past RLIMIT_NOFILE %lu: got %d",
		      (unsigned long)rl.rlim_cur, fd);
	close(fd);
	/* The table cannot grow to the range (fs.nr_open lowered under it):
	 * the lowest free fd, never an error the range caused.  In a fork
	 * child, whose copy of the table is small again. */
	if (rl.rlim_cur > 5000) {
		pid_t pid;
		int st;

		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			FILE *f = fopen("/proc/sys/fs/nr_open", "r+");
			unsigned long was = 0;

			failures = 0;  /* the child's own verdict */

			if (!f || fscanf(f, "%lu", &was) != 1) {
				fprintf(stderr, "%s: fs.nr_open not readable, growth failure not checked\n", prog);
				_exit(0);
			}
			CHECK(set_range(5000, 5008) == 0, "set [5000,5008): %s", strerror(errno));
			rewind(f);
			if (fprintf(f, "4096\n") > 0 && fflush(f) == 0) {
				want = lowest_free();
				fd = eventfd(0, EFD_CLOEXEC);
				CHECK(fd == want, "table cannot grow to the range: got %d (%s), lowest free %d",
				      fd, fd < 0 ? strerror(errno) : "ok", want);
				CHECK(set_range(5000, 5008) == -1 && errno == EINVAL,
				      "a range past fs.nr_open accepted");
				rewind(f);
				fprintf(f, "%lu\n", was);
				fflush(f);
			} else {
				fprintf(stderr, "%s: fs.nr_open not writable, growth failure not checked\n", prog);
			}
			_exit(failures ? 1 : 0);
		}
		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
		      "the growth-failure child failed");
	}
	/* Past the soft limit: not used at all. */
	rl.rlim_cur = 1024;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %s", strerror(errno));
	want = lowest_free();
	fd = eventfd(0, EFD_CLOEXEC);
	CHECK(fd == want, "range past the limit: got %d, lowest free %d", fd, want);
	close(fd);
	set_range(0, 0);
}

int main(int argc, char **argv)
{
	return range_main(argc, argv, "fdrange_grow", resize_and_limit, NULL);
}
