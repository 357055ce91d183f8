/* SPDX-License-Identifier: MIT */
/* Chunk geometry: every chunk below the cap, aligned to 64; fixed ranges cut there. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "geometry.h"
#include "pregrow.h"

#define NR FDR_MAX_FD

static struct fdr_config cfg_of(unsigned base, unsigned width)
{
	struct fdr_config c;

	fdr_config_defaults(&c);
	c.base = base;
	c.width = width;
	return c;
}

/* The top fd below the limit is never in a chunk (memcached refuses it). */
static void cap_keeps_limit_minus_one_out(void **state)
{
	(void)state;
	for (unsigned long limit = 1; limit <= 70000; limit = limit * 3 / 2 + 1) {
		unsigned long cap = fdr_geom_cap(limit, NR);

		assert_int_equal(cap % 64, 0);
		assert_true(cap <= limit - 1);
		assert_true(cap + 64 > limit - 1);
	}
	assert_int_equal(fdr_geom_cap(0, NR), 0);
	assert_int_equal(fdr_geom_cap(1024, NR), 960);
	assert_int_equal(fdr_geom_cap(1025, NR), 1024);
	assert_int_equal(fdr_geom_cap(1 << 30, 4096), 4032);  /* nr_open caps a huge limit */
}

static void chunks_below_cap(void **state)
{
	(void)state;
	assert_int_equal(fdr_geom_nchunks(64, 960), 14);
	assert_int_equal(fdr_geom_nchunks(64, 64), 0);
	assert_int_equal(fdr_geom_nchunks(64, 0), 0);
	assert_int_equal(fdr_geom_nchunks(0, 1024), 16);
	assert_int_equal(fdr_chunk_lo(64, 0), 64);
	assert_int_equal(fdr_chunk_lo(64, 3), 256);
	assert_int_equal(fdr_chunk_of(64, 63), -1);
	assert_int_equal(fdr_chunk_of(64, 64), 0);
	assert_int_equal(fdr_chunk_of(64, 127), 0);
	assert_int_equal(fdr_chunk_of(64, 128), 1);
	/* No overflow at the largest settings. */
	assert_int_equal(fdr_chunk_lo(FDR_MAX_FD - 64, 16383), FDR_MAX_FD - 64 + 16383UL * 64);
}

/* Without a width every chunk below the cap may be claimed by anyone. */
static void auto_width_claims_anywhere(void **state)
{
	struct fdr_config c = cfg_of(64, 0);
	unsigned first, end;

	(void)state;
	fdr_geom_claimable(&c, 5, 14, &first, &end);
	assert_int_equal(first, 0);
	assert_int_equal(end, 14);
}

/* A fixed range: its own chunks only, cut where the limit cuts it. */
static void fixed_width_is_cut_at_limit(void **state)
{
	struct fdr_config c = cfg_of(64, 256);
	unsigned first, end, n = fdr_geom_nchunks(64, fdr_geom_cap(1024, NR));

	(void)state;
	fdr_geom_claimable(&c, 0, n, &first, &end);
	assert_int_equal(first, 0);
	assert_int_equal(end, 4);
	fdr_geom_claimable(&c, 3, n, &first, &end);  /* fds 832-1087: cut at 960 */
	assert_int_equal(first, 12);
	assert_int_equal(end, 14);
	assert_true(fdr_chunk_lo(64, end) <= 1024 - 1);
	fdr_geom_claimable(&c, 4, n, &first, &end);  /* wholly above: empty */
	assert_true(first >= end);
	/* Huge width and index: no overflow, empty. */
	c.width = FDR_MAX_FD;
	fdr_geom_claimable(&c, 1023, n, &first, &end);
	assert_true(first >= end);
}

static void pregrow_top_is_bounded(void **state)
{
	(void)state;
	assert_int_equal(fdr_pregrow_top(1024, 20000, NR), 1023);    /* the default */
	assert_int_equal(fdr_pregrow_top(65536, 20000, NR), 19967);  /* the limit's cap */
	assert_int_equal(fdr_pregrow_top(65536, 1048576, NR), 65535);
	assert_int_equal(fdr_pregrow_top(20000, 1048576, NR), 16383); /* power of two <= entries */
	assert_int_equal(fdr_pregrow_top(1024, 1000, NR), 959);      /* below limit - 1 */
	assert_int_equal(fdr_pregrow_top(65536, 20000, 4096), 4031); /* nr_open */
	assert_int_equal(fdr_pregrow_top(128, 20000, NR), 127);
	assert_int_equal(fdr_pregrow_top(100, 20000, NR), 0);        /* too few entries */
	assert_int_equal(fdr_pregrow_top(0, 20000, NR), 0);          /* off */
	assert_int_equal(fdr_pregrow_top(1024, 0, NR), 0);           /* a limit of 0: no wrap */
	assert_int_equal(fdr_pregrow_top(1024, 64, NR), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cap_keeps_limit_minus_one_out),
		cmocka_unit_test(chunks_below_cap),
		cmocka_unit_test(auto_width_claims_anywhere),
		cmocka_unit_test(fixed_width_is_cut_at_limit),
		cmocka_unit_test(pregrow_top_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
