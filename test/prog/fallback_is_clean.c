/* SPDX-License-Identifier: MIT */
/*
 * When a range is full or RLIMIT_NOFILE is too low, the library returns the
 * original fd: every call still succeeds exactly as often as without the
 * library, every fd is valid and distinct, and no copy leaks.
 *
 *   fallback_is_clean MODE full    range of 64 fds, 150 fds created
 *   fallback_is_clean MODE tiny    RLIMIT_NOFILE 40: create until EMFILE
 *   fallback_is_clean MODE over    FDRANGE_WIDTH beyond a lowered limit
 */
#include "common.h"

#define MAX 400

static int fds[MAX];

/* Create pipes until @n fds exist or EMFILE; returns how many were made. */
static int fill(int n)
{
	int made = 0;

	while (made + 2 <= n) {
		int p[2];

		if (pipe(p) < 0) {
			CHECK(errno == EMFILE, "pipe: %s", strerror(errno));
			break;
		}
		fds[made++] = p[0];
		fds[made++] = p[1];
	}
	return made;
}

static void check_distinct_valid(int n)
{
	for (int i = 0; i < n; i++) {
		CHECK(fd_valid(fds[i]), "fd %d invalid", fds[i]);
		for (int j = 0; j < i; j++)
			CHECK(fds[i] != fds[j], "fd %d returned twice", fds[i]);
	}
}

static void set_limit(rlim_t soft)
{
	struct rlimit rl;

	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	rl.rlim_cur = soft;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	int before, made, open_now;
	const char *mode = argc > 2 ? argv[2] : "";

	test_mode(argc, argv);
	before = count_fds();
	if (!strcmp(mode, "full")) {
		struct geom g = test_geom();
		int in_range = 0;

		made = fill(150);
		CHECK(made == 150, "only %d fds made", made);
		check_distinct_valid(made);
		for (int i = 0; i < made; i++)
			in_range += range_of(&g, fds[i]) == 0;
		if (placed_mode)
			CHECK(in_range == g.width, "%d fds in the range of %ld", in_range, g.width);
	} else if (!strcmp(mode, "tiny") || !strcmp(mode, "over")) {
		rlim_t lim = !strcmp(mode, "tiny") ? 40 : 300;

		set_limit(lim);
		open_now = count_fds();
		made = fill(MAX);
		/* Exactly the free numbers below the limit, as without the library
		 * (the pipe that would need the last odd fd fails, so allow one). */
		CHECK(made >= (int)lim - open_now - 1 && made <= (int)lim - open_now,
		      "%d fds made with limit %d and %d open", made, (int)lim, open_now);
		check_distinct_valid(made);
		for (int i = 0; i < made; i++)
			CHECK(fds[i] < (int)lim, "fd %d above the limit %d", fds[i], (int)lim);
		/* Free one and the next creation succeeds again. */
		close(fds[--made]);
		close(fds[--made]);
		{
			int p[2];

			CHECK(pipe(p) == 0, "pipe after freeing: %s", strerror(errno));
			fds[made++] = p[0];
			fds[made++] = p[1];
		}
	} else {
		CHECK(0, "unknown mode '%s'", mode);
	}
	for (int i = 0; i < made; i++)
		CHECK(close(fds[i]) == 0, "close %d", fds[i]);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("fallback %s: ok (%s)\n", mode, argv[1]);
	return 0;
}
