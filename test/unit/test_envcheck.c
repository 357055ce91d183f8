/* SPDX-License-Identifier: MIT */
/* Unknown FDRANGE_* variables: found, named with the closest known name or
 * the list of known ones, on one line, without the value. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "envcheck.h"
#include "options.h"

static int check(const char *const *env, char *msg, size_t len)
{
	memset(msg, 'X', len);
	return fdr_env_check((char *const *)env, msg, len);
}

static void every_option_and_other_variables_pass(void **state)
{
	const char *env[16] = { "PATH=/usr/bin", "HOME=/root", "FDRANGE", "FDRANGEX=1",
				"fdrange_slots=4", "X_FDRANGE_SLOT=1", "FDRANGE_BENCH_LIB=/x.so" };
	unsigned n = 7;
	char msg[256];

	(void)state;
	for (unsigned i = 0; i < fdr_noptions && n < 15; i++)
		env[n++] = fdr_options[i].env;   /* a name without '=' is a name too */
	assert_int_equal(check(env, msg, sizeof(msg)), 0);
	assert_int_equal(fdr_env_check(NULL, msg, sizeof(msg)), 0);
	{
		const char *none[] = { NULL };

		assert_int_equal(check(none, msg, sizeof(msg)), 0);
	}
}

static void near_misses_suggest_the_option(void **state)
{
	/* Each case is skipped if the option it suggests is no longer in the
	 * table (the option set may change; the check follows the table). */
	static const struct { const char *entry, *opt, *want; } cases[] = {
		{ "FDRANGE_SLOT=4", "FDRANGE_SLOTS",
		  "unknown variable FDRANGE_SLOT; did you mean FDRANGE_SLOTS?" },
		{ "FDRANGE_ACEPT=roundrobin", "FDRANGE_ACCEPT",
		  "unknown variable FDRANGE_ACEPT; did you mean FDRANGE_ACCEPT?" },
		{ "FDRANGE_WIDHT=64", "FDRANGE_WIDTH",
		  "unknown variable FDRANGE_WIDHT; did you mean FDRANGE_WIDTH?" },
		{ "FDRANGE_STAT=stderr", "FDRANGE_STATS",
		  "unknown variable FDRANGE_STAT; did you mean FDRANGE_STATS?" },
		{ "FDRANGE_slots=4", "FDRANGE_SLOTS",
		  "unknown variable FDRANGE_slots; did you mean FDRANGE_SLOTS?" },
		{ "FDRANGE_DISABLED=1", "FDRANGE_DISABLE",
		  "unknown variable FDRANGE_DISABLED; did you mean FDRANGE_DISABLE?" },
		{ "FDRANGE_PREGROWN=0", "FDRANGE_PREGROW",
		  "unknown variable FDRANGE_PREGROWN; did you mean FDRANGE_PREGROW?" },
		{ "FDRANGE_BASES=128", "FDRANGE_BASE",
		  "unknown variable FDRANGE_BASES; did you mean FDRANGE_BASE?" },
		{ "FDRANGE_OPNE=keep", "FDRANGE_OPEN",
		  "unknown variable FDRANGE_OPNE; did you mean FDRANGE_OPEN?" },
	};
	char msg[256];
	unsigned ran = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *env[] = { "PATH=/bin", cases[i].entry, NULL };

		if (!fdr_option_by_env(cases[i].opt))
			continue;
		ran++;
		assert_int_equal(check(env, msg, sizeof(msg)), -EINVAL);
		assert_string_equal(msg, cases[i].want);
	}
	assert_true(ran >= 3);
}

/* Whatever the table holds: each option's name with its last letter
 * dropped, or its last two swapped, suggests an option at least as close. */
static void every_option_has_near_misses(void **state)
{
	char entry[FDR_ENV_NAME_MAX + 8], msg[256];
	const char *env[] = { entry, NULL };

	(void)state;
	for (unsigned i = 0; i < fdr_noptions; i++) {
		const char *name = fdr_options[i].env;
		size_t n = strlen(name);

		for (int how = 0; how < 2; how++) {
			const char *got;
			unsigned d_own, d_got;

			memcpy(entry, name, n + 1);
			if (how == 0) {
				entry[n - 1] = 0;
			} else {
				entry[n - 2] = name[n - 1];
				entry[n - 1] = name[n - 2];
				if (entry[n - 1] == entry[n - 2])
					continue;
			}
			assert_int_equal(check(env, msg, sizeof(msg)), -EINVAL);
			got = strstr(msg, "; did you mean ");
			assert_non_null(got);
			got += strlen("; did you mean ");
			{
				char sugg[FDR_ENV_NAME_MAX + 8];
				size_t len = strcspn(got, "?");

				assert_true(len < sizeof(sugg));
				memcpy(sugg, got, len);
				sugg[len] = 0;
				assert_non_null(fdr_option_by_env(sugg));
			}
			d_own = fdr_env_distance(entry + 8, strlen(entry) - 8, name + 8, n - 8);
			d_got = fdr_env_distance(entry + 8, strlen(entry) - 8, got + 8,
						 strcspn(got, "?") - 8);
			assert_true(d_got <= d_own);
		}
	}
}

static void far_names_list_every_known_one(void **state)
{
	const char *env[] = { "FDRANGE_THREADS=4", NULL };
	char msg[512], want[512] = "unknown variable FDRANGE_THREADS; known: ";

	(void)state;
	for (unsigned i = 0; i < fdr_noptions; i++) {
		if (i)
			strcat(want, ", ");
		strcat(want, fdr_options[i].env);
	}
	assert_int_equal(check(env, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, want);
	/* Too short to guess from: "FDRANGE_X" is no slip of any name. */
	env[0] = "FDRANGE_X=1";
	assert_int_equal(check(env, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "unknown variable FDRANGE_X; known: FDRANGE_SLOTS, "));
	env[0] = "FDRANGE_=1";
	assert_int_equal(check(env, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "unknown variable FDRANGE_; known: "));
}

static void first_unknown_wins_and_value_is_not_shown(void **state)
{
	const char *env[] = { "FDRANGE_SLOTS=4", "FDRANGE_SLOT=secret-value", "FDRANGE_ACEPT=x",
			      NULL };
	char msg[256];

	(void)state;
	assert_int_equal(check(env, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "FDRANGE_SLOT;"));
	assert_null(strstr(msg, "secret"));
	assert_null(strstr(msg, "ACEPT"));
}

static void odd_names_stay_on_one_bounded_line(void **state)
{
	char longname[400], msg[256];
	const char *env[] = { "FDRANGE_A\nB=1", NULL };

	(void)state;
	assert_int_equal(check(env, msg, sizeof(msg)), -EINVAL);
	assert_null(strchr(msg, '\n'));
	assert_non_null(strstr(msg, "unknown variable \"FDRANGE_A\\x0aB\""));
	memset(longname, 'Q', sizeof(longname));
	memcpy(longname, "FDRANGE_", 8);
	longname[sizeof(longname) - 3] = '=';
	longname[sizeof(longname) - 2] = '1';
	longname[sizeof(longname) - 1] = 0;
	env[0] = longname;
	assert_int_equal(check(env, msg, sizeof(msg)), -EINVAL);
	assert_true(strlen(msg) < sizeof(msg));
	assert_non_null(strstr(msg, "...; known: "));
	/* A tiny or absent buffer: still the verdict, nothing written past it. */
	{
		char small[16 + 1];

		small[16] = 'Z';
		assert_int_equal(fdr_env_check((char *const *)env, small, 16), -EINVAL);
		assert_int_equal(small[16], 'Z');
		assert_int_equal(strlen(small), 15);
		assert_int_equal(fdr_env_check((char *const *)env, NULL, 0), -EINVAL);
	}
}

static void distance_counts_edits(void **state)
{
	(void)state;
	assert_int_equal(fdr_env_distance("SLOTS", 5, "SLOTS", 5), 0);
	assert_int_equal(fdr_env_distance("SLOT", 4, "SLOTS", 5), 1);
	assert_int_equal(fdr_env_distance("WIDHT", 5, "WIDTH", 5), 1);   /* a swap is one */
	assert_int_equal(fdr_env_distance("base", 4, "BASE", 4), 0);
	assert_int_equal(fdr_env_distance("", 0, "OPEN", 4), 4);
	assert_int_equal(fdr_env_distance("KITTEN", 6, "SITTING", 7), 3);
	{
		char big[FDR_ENV_NAME_MAX + 1];

		memset(big, 'A', sizeof(big));
		assert_int_equal(fdr_env_distance(big, FDR_ENV_NAME_MAX, big, FDR_ENV_NAME_MAX), 0);
		assert_int_equal(fdr_env_distance(big, FDR_ENV_NAME_MAX + 1, "A", 1), (unsigned)-1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_option_and_other_variables_pass),
		cmocka_unit_test(near_misses_suggest_the_option),
		cmocka_unit_test(every_option_has_near_misses),
		cmocka_unit_test(far_names_list_every_known_one),
		cmocka_unit_test(first_unknown_wins_and_value_is_not_shown),
		cmocka_unit_test(odd_names_stay_on_one_bounded_line),
		cmocka_unit_test(distance_counts_edits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
