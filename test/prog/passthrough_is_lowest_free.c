/* SPDX-License-Identifier: MIT */
/*
 * In pass-through (no library, FDRANGE_DISABLE=1, or a bad FDRANGE_* value)
 * every call returns the lowest free fd, exactly as the kernel allocates.
 */
#include "common.h"

int main(int argc, char **argv)
{
	struct maker_ctx ctx;
	int before, (*active)(void);

	test_mode(argc, argv);
	active = (int (*)(void))dlsym(RTLD_DEFAULT, "fdrange_active");
	CHECK(!active || !active(), "libfdrange is placing fds; expected pass-through");
	maker_ctx_init(&ctx);
	before = count_fds();
	for (unsigned m = 0; m < NMAKERS; m++) {
		int out[2], expect = lowest_free(), n = makers[m].make(&ctx, false, out);

		CHECK(n > 0, "%s: %s", makers[m].name, strerror(errno));
		/* accept's pair: the client socket came first */
		CHECK(out[n == 2 && !strncmp(makers[m].name, "accept", 6) ? 1 : 0] == expect,
		      "%s returned fd %d, lowest free was %d", makers[m].name, out[0], expect);
		for (int i = 0; i < n; i++)
			close(out[i]);
	}
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	maker_ctx_fini(&ctx);
	printf("pass-through: ok (%s)\n", argv[1]);
	return 0;
}
