/* SPDX-License-Identifier: MIT */
/*
 * When a range is full or RLIMIT_NOFILE is too low, the library returns the
 * original fd: every call still succeeds exactly as often as without the
 * library, every fd is valid and distinct, and no copy leaks.
 *
 *   fallback_is_clean MODE full    range of 64 fds, 150 fds created; the
 *                                  86 that find it full are not probed for
 *                                  each time (backoff.c),
 *                                  and room freed there is found again
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

/*
 * The report's total row: fallbacks for want of room (a full range, or
 * the do-no-harm bound) and failed probes.  After the name: tid, chunks,
 * lines, threads, placed, inplace, kept, fb_full, fb_limit, fb_other,
 * fb_bound, fb_near, probes.
 */
static void report_totals(unsigned long long *no_room, unsigned long long *probes)
{
	static char text[16384];
	unsigned long long v[12];
	char *row;

	read_report(text, sizeof(text));
	row = strstr(text, "\ntotal");
	CHECK(row && sscanf(row, " total %*u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
			    &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
			    &v[10], &v[11]) == 12, "no total row in the report:\n%s", text);
	*no_room = v[6] + v[9];
	*probes = v[11];
}

/*
 * The back-off ends: free one fd in the range and, below it, holes that
 * lowest-free numbering hands out first.  Within 17 creations (the
 * longest skip, 16, and a try) one lands in the range again.  Returns
 * how many of fds[] are open.
 */
static int room_is_found_again(int made, const struct geom *g)
{
	int holes = 0, freed = -1, tries;

	for (int i = 0; i < made && (holes < 20 || freed < 0); i++) {
		if (freed < 0 && range_of(g, fds[i]) == 0) {
			freed = fds[i];
		} else if (holes < 20 && fds[i] < g->base && fds[i] > 2) {
			CHECK(close(fds[i]) == 0, "close %d", fds[i]);
			holes++;
		} else {
			continue;
		}
		fds[i] = fds[--made];
		i--;
	}
	CHECK(freed >= 0 && holes == 20, "no fd in the range (%d) or 20 below it (%d)", freed, holes);
	CHECK(close(freed) == 0, "close %d", freed);
	for (tries = 1; tries <= 17; tries++) {
		int fd = open("/dev/null", O_RDONLY);

		CHECK(fd >= 0, "open: %s", strerror(errno));
		fds[made++] = fd;
		if (range_of(g, fd) == 0)
			break;
	}
	CHECK(tries <= 17, "17 fds made after the range had room again, none in it");
	return made;
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
		if (placed_mode) {
			unsigned long long no_room, probes;

			CHECK(in_range == g.width, "%d fds in the range of %ld", in_range, g.width);
			/* Each fd not in the range is a counted fallback, and
			 * the full range is not probed again for each: after a
			 * failed try (2 probes here) the next 1, 2, 4 .. 16 fds
			 * are left untried, 8 tries for 86 fds, where a try
			 * per fd made at least 86 probes. */
			report_totals(&no_room, &probes);
			/* + 1: the memfd the report is written to. */
			CHECK(no_room == (unsigned long long)(made - in_range) + 1,
			      "%llu fallbacks for want of room, %d fds made, %d in the range", no_room,
			      made, in_range);
			CHECK(probes * 4 < no_room, "%llu failed probes for %llu fds that found the range full",
			      probes, no_room);
			made = room_is_found_again(made, &g);
		}
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
