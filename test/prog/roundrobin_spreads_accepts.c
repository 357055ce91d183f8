/* SPDX-License-Identifier: MIT */
/*
 * FDRANGE_ACCEPT=roundrobin: one thread accepts; the k-th accepted
 * connection lands in range k mod SLOTS, in order, and fds from other calls
 * (the listener, the client sockets) stay below BASE.
 */
#include "common.h"

#define NCONN 24

int main(int argc, char **argv)
{
	struct maker_ctx ctx;
	int acc[NCONN], cli[NCONN], before;
	struct geom g;

	test_mode(argc, argv);
	maker_ctx_init(&ctx);
	before = count_fds();
	for (int k = 0; k < NCONN; k++) {
		CHECK(connect_client(&ctx, &cli[k]) == 0, "connect: %s", strerror(errno));
		acc[k] = (k & 1) ? accept(ctx.listener, NULL, NULL) :
				   accept4(ctx.listener, NULL, NULL, SOCK_NONBLOCK);
		CHECK(acc[k] >= 0, "accept: %s", strerror(errno));
	}
	if (placed_mode) {
		g = test_geom();
		CHECK(ctx.listener < g.base, "listener %d was moved", ctx.listener);
		for (int k = 0; k < NCONN; k++) {
			CHECK(range_of(&g, acc[k]) == k % g.slots,
			      "connection %d: fd %d in range %ld, expected %ld", k, acc[k],
			      range_of(&g, acc[k]), k % g.slots);
			CHECK(cli[k] < g.base, "client socket %d was moved under roundrobin", cli[k]);
		}
	}
	for (int k = 0; k < NCONN; k++) {
		char c = 'x';

		CHECK(write(cli[k], &c, 1) == 1 && read(acc[k], &c, 1) == 1, "connection %d broken", k);
		close(acc[k]);
		close(cli[k]);
	}
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	maker_ctx_fini(&ctx);
	printf("roundrobin: ok (%s)\n", argv[1]);
	return 0;
}
