/* SPDX-License-Identifier: MIT */
/* Range geometry: every range below the limit, aligned to 64, or none. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "geometry.h"

static struct fdr_config cfg_of(unsigned slots, unsigned base, unsigned width)
{
	struct fdr_config c;

	fdr_config_defaults(&c, 1);
	c.slots = slots;
	c.base = base;
	c.width = width;
	return c;
}

static void auto_width_fits_below_limit(void **state)
{
	(void)state;
	for (unsigned slots = 1; slots <= 64; slots++) {
		for (unsigned long limit = 1; limit <= 70000; limit = limit * 3 / 2 + 1) {
			struct fdr_config c = cfg_of(slots, 64, 0);
			unsigned w = fdr_geom_width(&c, limit, FDR_MAX_FD);

			if (!w)
				continue;
			assert_int_equal(w % 64, 0);
			/* every fd of every range is below limit - 1 */
			assert_true(fdr_geom_lo(&c, w, slots) <= limit - 1);
			/* and the width is the largest that does so */
			assert_true(fdr_geom_lo(&c, w + 64, slots) > limit - 1);
		}
	}
}

static void memcached_default_limit(void **state)
{
	struct fdr_config c = cfg_of(4, 64, 0);

	(void)state;
	/* memcached -c 1024 -t 4: (1023 - 64) / 4 = 239 -> 192 */
	assert_int_equal(fdr_geom_width(&c, 1024, FDR_MAX_FD), 192);
	assert_int_equal(fdr_geom_lo(&c, 192, 3), 64 + 3 * 192);
	/* exact fit would hand out fd 1023, which memcached refuses */
	c = cfg_of(15, 64, 0);
	assert_int_equal(fdr_geom_width(&c, 1024, FDR_MAX_FD), 0);
	assert_int_equal(fdr_geom_width(&c, 1025, FDR_MAX_FD), 64);
}

static void too_small_limit_gives_no_geometry(void **state)
{
	struct fdr_config c = cfg_of(8, 64, 0);

	(void)state;
	assert_int_equal(fdr_geom_width(&c, 0, FDR_MAX_FD), 0);
	assert_int_equal(fdr_geom_width(&c, 64, FDR_MAX_FD), 0);
	assert_int_equal(fdr_geom_width(&c, 64 + 8 * 64, FDR_MAX_FD), 0);
	assert_int_equal(fdr_geom_width(&c, 64 + 8 * 64 + 1, FDR_MAX_FD), 64);
}

static void nr_open_caps_huge_limits(void **state)
{
	struct fdr_config c = cfg_of(2, 64, 0);

	(void)state;
	assert_int_equal(fdr_geom_width(&c, (unsigned long)-1, 1048576), (1048575 - 64) / 2 / 64 * 64);
	assert_int_equal(fdr_geom_width(&c, 1UL << 40, 4096), (4095 - 64) / 2 / 64 * 64);
}

static void explicit_width_is_kept(void **state)
{
	struct fdr_config c = cfg_of(4, 128, 256);

	(void)state;
	/* an explicit width is used as given; the move fails safely above the limit */
	assert_int_equal(fdr_geom_width(&c, 300, FDR_MAX_FD), 256);
	assert_int_equal(fdr_geom_lo(&c, 256, 0), 128);
	assert_int_equal(fdr_geom_lo(&c, 256, 3), 128 + 768);
}

static void range_of_fd(void **state)
{
	struct fdr_config c = cfg_of(4, 128, 256);

	(void)state;
	assert_int_equal(fdr_geom_range_of(&c, 256, 0), -1);
	assert_int_equal(fdr_geom_range_of(&c, 256, 127), -1);
	assert_int_equal(fdr_geom_range_of(&c, 256, 128), 0);
	assert_int_equal(fdr_geom_range_of(&c, 256, 383), 0);
	assert_int_equal(fdr_geom_range_of(&c, 256, 384), 1);
	assert_int_equal(fdr_geom_range_of(&c, 256, 128 + 1024 - 1), 3);
	assert_int_equal(fdr_geom_range_of(&c, 256, 128 + 1024), -1);
	assert_int_equal(fdr_geom_range_of(&c, 0, 500), -1);
}

static void huge_slots_do_not_overflow(void **state)
{
	struct fdr_config c = cfg_of(FDR_MAX_SLOTS, FDR_MAX_FD - 64, FDR_MAX_FD);

	(void)state;
	assert_true(fdr_geom_lo(&c, FDR_MAX_FD, FDR_MAX_SLOTS) >
		    (unsigned long)FDR_MAX_FD * (FDR_MAX_SLOTS - 1));
	assert_int_equal(fdr_geom_range_of(&c, FDR_MAX_FD, 0x7fffffff), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(auto_width_fits_below_limit),
		cmocka_unit_test(memcached_default_limit),
		cmocka_unit_test(too_small_limit_gives_no_geometry),
		cmocka_unit_test(nr_open_caps_huge_limits),
		cmocka_unit_test(explicit_width_is_kept),
		cmocka_unit_test(range_of_fd),
		cmocka_unit_test(huge_slots_do_not_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
