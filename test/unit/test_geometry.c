/* SPDX-License-Identifier: MIT */
/* Range geometry: every range below the limit, aligned to 64, or none. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "geometry.h"
#include "pregrow.h"

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

/* An explicit width is cut at the limit, never straddles it. */
static void explicit_width_is_cut_at_limit(void **state)
{
	struct fdr_config c = cfg_of(4, 64, 256);   /* ranges 64, 320, 576, 832 */

	(void)state;
	/* limit 1024: the top usable multiple of 64 below 1023 is 960 */
	assert_int_equal(fdr_geom_end(&c, 256, 0, 1024, FDR_MAX_FD), 320);
	assert_int_equal(fdr_geom_end(&c, 256, 2, 1024, FDR_MAX_FD), 832);
	assert_int_equal(fdr_geom_end(&c, 256, 3, 1024, FDR_MAX_FD), 960);
	/* limit 600: range 2 starts at the cut, nothing of it is usable */
	assert_int_equal(fdr_geom_end(&c, 256, 1, 600, FDR_MAX_FD), 576);
	assert_true(fdr_geom_end(&c, 256, 2, 600, FDR_MAX_FD) <= fdr_geom_lo(&c, 256, 2));
	assert_true(fdr_geom_end(&c, 256, 3, 600, FDR_MAX_FD) <= fdr_geom_lo(&c, 256, 3));
	/* fs.nr_open cuts the same way as the limit */
	assert_int_equal(fdr_geom_end(&c, 256, 3, 1u << 20, 1024), 960);
}

/* Whatever the width, no usable fd is limit - 1 or above, and with auto
 * widths the cut never bites. */
static void range_end_stays_below_limit(void **state)
{
	(void)state;
	for (unsigned slots = 1; slots <= 16; slots++) {
		for (unsigned long limit = 64; limit <= 70000; limit = limit * 3 / 2 + 7) {
			struct fdr_config c = cfg_of(slots, 64, 0);
			unsigned aw = fdr_geom_width(&c, limit, FDR_MAX_FD);

			for (unsigned s = 0; s < slots; s++) {
				unsigned long end;

				for (unsigned w = 64; w <= 4096; w *= 4) {
					end = fdr_geom_end(&c, w, s, limit, FDR_MAX_FD);
					assert_int_equal(end % 64, 0);
					assert_true(end <= fdr_geom_lo(&c, w, s) + w);
					if (end > fdr_geom_lo(&c, w, s))
						assert_true(end - 1 < limit - 1);
				}
				if (aw)
					assert_int_equal(fdr_geom_end(&c, aw, s, limit, FDR_MAX_FD),
							 fdr_geom_lo(&c, aw, s) + aw);
			}
		}
	}
}

/* FDRANGE_PREGROW: the table grows to the top of the ranges, never past
 * the limit, and the table the kernel rounds up to stays within the cap. */
static void pregrow_top_is_bounded(void **state)
{
	struct fdr_config c = cfg_of(2, 64, 0);
	const unsigned long nr = 1048576;

	(void)state;
	assert_int_equal(fdr_pregrow_top(&c, 9920, 20000, nr, 65536), 19903);  /* top of ranges */
	assert_int_equal(fdr_pregrow_top(&c, 448, 1024, nr, 65536), 959);      /* memcached -c 1024 */
	assert_int_equal(fdr_pregrow_top(&c, 524224, 1048576, nr, 65536), 65535); /* cap */
	assert_int_equal(fdr_pregrow_top(&c, 9920, 20000, nr, 20000), 16383);  /* power of two <= cap */
	assert_int_equal(fdr_pregrow_top(&c, 4096, 1000, nr, 65536), 999);     /* limit */
	assert_int_equal(fdr_pregrow_top(&c, 9920, 20000, 4096, 65536), 4095); /* nr_open */
	assert_int_equal(fdr_pregrow_top(&c, 9920, 20000, nr, 128), 127);
	assert_int_equal(fdr_pregrow_top(&c, 9920, 20000, nr, 100), 0);        /* too small a cap */
	assert_int_equal(fdr_pregrow_top(&c, 9920, 20000, nr, 0), 0);          /* off */
	assert_int_equal(fdr_pregrow_top(&c, 0, 20000, nr, 65536), 0);         /* no geometry */
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
		cmocka_unit_test(explicit_width_is_cut_at_limit),
		cmocka_unit_test(range_end_stays_below_limit),
		cmocka_unit_test(pregrow_top_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
