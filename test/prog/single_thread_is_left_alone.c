/* SPDX-License-Identifier: MIT */
/*
 * While a process has one thread, the library moves nothing: every call
 * returns the fd the kernel chose, the lowest free one, exactly as without
 * it (nothing to separate, and a program that works plain must see the
 * same numbers).  Once a
 * second thread exists, the same calls are placed at or above BASE.
 */
#include "common.h"

static void *idle(void *arg)
{
	pause();
	return arg;
}

int main(int argc, char **argv)
{
	struct maker_ctx ctx;
	pthread_t t;
	int before;
	bool placed;

	CHECK(argc >= 2, "usage: %s plain|placed", argv[0]);
	placed = !strcmp(argv[1], "placed");
	CHECK(placed == (dlsym(RTLD_DEFAULT, "fdrange_version") != NULL), "mode %s", argv[1]);
	maker_ctx_init(&ctx);
	before = count_fds();
	for (unsigned m = 0; m < NMAKERS; m++) {
		int want = lowest_free(), out[2], n = makers[m].make(&ctx, m & 1, out);

		CHECK(n > 0, "%s: %s", makers[m].name, strerror(errno));
		/* accept's maker connects a client first: its fd is the next one. */
		CHECK(out[0] == want || (n == 2 && out[1] == want && out[0] == want + 1),
		      "%s: fd %d while single-threaded, the lowest free was %d", makers[m].name,
		      out[0], want);
		for (int i = 0; i < n; i++)
			close(out[i]);
	}
	CHECK(pthread_create(&t, NULL, idle, NULL) == 0, "pthread_create");
	for (unsigned m = 0; m < NMAKERS; m++) {
		int out[2], n = makers[m].make(&ctx, m & 1, out);

		CHECK(n > 0, "%s: %s", makers[m].name, strerror(errno));
		if (placed)
			CHECK(out[0] >= env_num("FDRANGE_BASE", 64), "%s: fd %d not placed with threads",
			      makers[m].name, out[0]);
		for (int i = 0; i < n; i++)
			close(out[i]);
	}
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	maker_ctx_fini(&ctx);
	printf("single-threaded: lowest free; threaded: placed: ok (%s)\n", argv[1]);
	return 0;
}
