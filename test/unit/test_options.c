/* SPDX-License-Identifier: MIT */
/* Option parsing: the table's defaults, every accepted form, every bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "options.h"

struct env {
	const char *names[8], *values[8];
};

static const char *lookup(const char *name, void *arg)
{
	struct env *e = arg;

	for (int i = 0; i < 8 && e->names[i]; i++)
		if (!strcmp(e->names[i], name))
			return e->values[i];
	return NULL;
}

static int load1(const char *name, const char *value, struct fdr_config *cfg, char *msg)
{
	struct env e = { { name }, { value } };

	return fdr_config_load(cfg, lookup, &e, msg, 256);
}

static void defaults_without_environment(void **state)
{
	struct env e = { { NULL }, { NULL } };
	struct fdr_config cfg;
	char msg[256];

	(void)state;
	assert_int_equal(fdr_config_load(&cfg, lookup, &e, msg, sizeof(msg)), 0);
	assert_int_equal(cfg.slots, 0);
	assert_int_equal(cfg.base, 64);
	assert_int_equal(cfg.width, 0);
	assert_int_equal(cfg.accept, FDR_ACCEPT_AUTO);
	assert_int_equal(cfg.pregrow, 1024);
	assert_int_equal(cfg.threshold, 64);
	assert_int_equal(cfg.open, FDR_OPEN_MOVE);
	assert_int_equal(cfg.local, FDR_LOCAL_KEEP);
	assert_int_equal(cfg.bound, FDR_BOUND_AUTO);
	assert_false(cfg.disable);
	assert_string_equal(cfg.stats, "");
	for (unsigned i = 0; i < fdr_noptions; i++)
		assert_int_equal(cfg.source[i], FDR_SRC_DEFAULT);
}

/* Each row's default parses as a value of its own row: one source of truth. */
static void every_default_parses(void **state)
{
	struct fdr_config cfg;
	char msg[256];

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	for (unsigned i = 0; i < fdr_noptions; i++)
		assert_int_equal(fdr_option_parse(&fdr_options[i], fdr_options[i].def, &cfg, msg,
						  sizeof(msg)), 0);
}

static void good_values_are_taken(void **state)
{
	struct fdr_config cfg;
	char msg[256];

	(void)state;
	assert_int_equal(load1("FDRANGE_SLOTS", "1", &cfg, msg), 0);
	assert_int_equal(cfg.slots, 1);
	assert_int_equal(cfg.source[0], FDR_SRC_ENV);
	assert_int_equal(load1("FDRANGE_SLOTS", "1024", &cfg, msg), 0);
	assert_int_equal(cfg.slots, 1024);
	assert_int_equal(load1("FDRANGE_BASE", "0", &cfg, msg), 0);
	assert_int_equal(cfg.base, 0);
	assert_int_equal(load1("FDRANGE_BASE", "4096", &cfg, msg), 0);
	assert_int_equal(cfg.base, 4096);
	assert_int_equal(load1("FDRANGE_WIDTH", "auto", &cfg, msg), 0);
	assert_int_equal(cfg.width, 0);
	assert_int_equal(load1("FDRANGE_WIDTH", "512", &cfg, msg), 0);
	assert_int_equal(cfg.width, 512);
	assert_int_equal(load1("FDRANGE_ACCEPT", "roundrobin", &cfg, msg), 0);
	assert_int_equal(cfg.accept, FDR_ACCEPT_ROUNDROBIN);
	assert_int_equal(load1("FDRANGE_OPEN", "keep", &cfg, msg), 0);
	assert_int_equal(cfg.open, FDR_OPEN_KEEP);
	assert_int_equal(load1("FDRANGE_LOCAL", "keep", &cfg, msg), 0);
	assert_int_equal(cfg.local, FDR_LOCAL_KEEP);
	assert_int_equal(load1("FDRANGE_LOCAL", "move", &cfg, msg), 0);
	assert_int_equal(cfg.local, FDR_LOCAL_MOVE);
	assert_int_equal(load1("FDRANGE_BOUND", "off", &cfg, msg), 0);
	assert_int_equal(cfg.bound, FDR_BOUND_OFF);
	assert_int_equal(load1("FDRANGE_BOUND", "auto", &cfg, msg), 0);
	assert_int_equal(cfg.bound, FDR_BOUND_AUTO);
	assert_int_equal(load1("FDRANGE_THRESHOLD", "0", &cfg, msg), 0);
	assert_int_equal(cfg.threshold, 0);
	assert_int_equal(load1("FDRANGE_THRESHOLD", "1048576", &cfg, msg), 0);
	assert_int_equal(cfg.threshold, 1048576);
	for (const char *const *v = (const char *const[]){ "1", "yes", "true", "on", NULL }; *v; v++) {
		assert_int_equal(load1("FDRANGE_DISABLE", *v, &cfg, msg), 0);
		assert_true(cfg.disable);
	}
	for (const char *const *v = (const char *const[]){ "0", "no", "false", "off", NULL }; *v; v++) {
		assert_int_equal(load1("FDRANGE_DISABLE", *v, &cfg, msg), 0);
		assert_false(cfg.disable);
	}
	assert_int_equal(load1("FDRANGE_STATS", "stderr", &cfg, msg), 0);
	assert_string_equal(cfg.stats, "stderr");
	assert_int_equal(load1("FDRANGE_STATS", "/tmp/r.%p", &cfg, msg), 0);
	assert_string_equal(cfg.stats, "/tmp/r.%p");
	assert_int_equal(load1("FDRANGE_STATS", "./none", &cfg, msg), 0);
	assert_string_equal(cfg.stats, "./none");
	assert_int_equal(load1("FDRANGE_SLOTS", "auto", &cfg, msg), 0);
	assert_int_equal(cfg.slots, 0);
	assert_int_equal(load1("FDRANGE_ACCEPT", "thread", &cfg, msg), 0);
	assert_int_equal(cfg.accept, FDR_ACCEPT_THREAD);
	assert_int_equal(load1("FDRANGE_ACCEPT", "auto", &cfg, msg), 0);
	assert_int_equal(cfg.accept, FDR_ACCEPT_AUTO);
}

/* Each bad value is refused with one line naming variable, value, accepted. */
static void expect_refused(const char *name, const char *value, const char *why)
{
	struct fdr_config cfg;
	char msg[256];

	assert_int_equal(load1(name, value, &cfg, msg), -EINVAL);
	assert_non_null(strstr(msg, name));
	assert_non_null(strstr(msg, "accepted: "));
	assert_non_null(strstr(msg, why));
	assert_null(strchr(msg, '\n'));
}

static void bad_values_are_refused(void **state)
{
	(void)state;
	expect_refused("FDRANGE_SLOTS", "abc", "not a number");
	expect_refused("FDRANGE_THRESHOLD", "1048577", "out of range");
	expect_refused("FDRANGE_THRESHOLD", "auto", "not a number");
	expect_refused("FDRANGE_THRESHOLD", "-1", "negative");
	expect_refused("FDRANGE_SLOTS", "0", "out of range");
	expect_refused("FDRANGE_SLOTS", "-3", "negative");
	expect_refused("FDRANGE_SLOTS", "99999999999999999999", "out of range");
	expect_refused("FDRANGE_SLOTS", "4x", "trailing characters");
	expect_refused("FDRANGE_SLOTS", "4 ", "trailing characters");
	expect_refused("FDRANGE_SLOTS", " 4", "not a number");
	expect_refused("FDRANGE_SLOTS", "+4", "not a number");
	expect_refused("FDRANGE_SLOTS", "0x10", "trailing characters");
	expect_refused("FDRANGE_SLOTS", "", "empty value");
	expect_refused("FDRANGE_SLOTS", "1025", "out of range");
	expect_refused("FDRANGE_BASE", "100", "not a multiple of 64");
	expect_refused("FDRANGE_BASE", "1048576", "out of range");
	expect_refused("FDRANGE_WIDTH", "0", "out of range");
	expect_refused("FDRANGE_WIDTH", "96", "not a multiple of 64");
	expect_refused("FDRANGE_WIDTH", "Auto", "not a number");
	expect_refused("FDRANGE_ACCEPT", "round-robin", "unknown value");
	expect_refused("FDRANGE_ACCEPT", "", "empty value");
	expect_refused("FDRANGE_OPEN", "MOVE", "unknown value");
	expect_refused("FDRANGE_LOCAL", "off", "unknown value");
	expect_refused("FDRANGE_BOUND", "1024", "unknown value");
	expect_refused("FDRANGE_DISABLE", "2", "not a boolean");
	expect_refused("FDRANGE_DISABLE", "", "empty value");
	expect_refused("FDRANGE_STATS", "", "empty value");
	/* No slash: a mistake, not a file in whatever the cwd is. */
	expect_refused("FDRANGE_STATS", "1", "not stderr, none or a path");
	expect_refused("FDRANGE_STATS", "yes", "not stderr, none or a path");
	expect_refused("FDRANGE_STATS", "64k", "not stderr, none or a path");
}

static void message_names_value_and_accepted(void **state)
{
	struct fdr_config cfg;
	char msg[256];

	(void)state;
	load1("FDRANGE_SLOTS", "abc", &cfg, msg);
	assert_string_equal(msg, "FDRANGE_SLOTS=\"abc\": not a number; "
				 "accepted: 'auto' or an integer from 1 to 1024");
	load1("FDRANGE_WIDTH", "65", &cfg, msg);
	assert_string_equal(msg, "FDRANGE_WIDTH=\"65\": not a multiple of 64; "
				 "accepted: 'auto' or a multiple of 64 from 64 to 1048576");
	load1("FDRANGE_BASE", "65", &cfg, msg);
	assert_non_null(strstr(msg, "not a multiple of 64"));
	load1("FDRANGE_ACCEPT", "x", &cfg, msg);
	assert_string_equal(msg, "FDRANGE_ACCEPT=\"x\": unknown value; accepted: auto, thread or roundrobin");
}

static void control_characters_stay_on_one_line(void **state)
{
	struct fdr_config cfg;
	char msg[256];
	char longval[FDR_PATH_MAX + 100];

	(void)state;
	assert_int_equal(load1("FDRANGE_ACCEPT", "a\nb\"c", &cfg, msg), -EINVAL);
	assert_null(strchr(msg, '\n'));
	assert_non_null(strstr(msg, "a\\x0ab\\x22c"));
	memset(longval, 'x', sizeof(longval) - 1);
	longval[sizeof(longval) - 1] = 0;
	assert_int_equal(load1("FDRANGE_STATS", longval, &cfg, msg), -EINVAL);
	assert_non_null(strstr(msg, "too long"));
	assert_non_null(strstr(msg, "...\""));
}

static void first_error_wins_and_config_is_defaults(void **state)
{
	struct env e = { { "FDRANGE_SLOTS", "FDRANGE_BASE" }, { "2", "7" } };
	struct fdr_config cfg;
	char msg[256];

	(void)state;
	assert_int_equal(fdr_config_load(&cfg, lookup, &e, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "FDRANGE_BASE=\"7\""));
}

static void format_round_trips(void **state)
{
	struct fdr_config cfg, back;
	char val[FDR_PATH_MAX], msg[256];

	(void)state;
	fdr_config_defaults(&cfg);
	cfg.width = 128;
	cfg.accept = FDR_ACCEPT_ROUNDROBIN;
	strcpy(cfg.stats, "stderr");
	fdr_config_defaults(&back);
	for (unsigned i = 0; i < fdr_noptions; i++) {
		fdr_option_format(&fdr_options[i], &cfg, val, sizeof(val));
		if (fdr_options[i].type == FDR_T_DEST && !strcmp(val, "none"))
			continue;
		assert_int_equal(fdr_option_parse(&fdr_options[i], val, &back, msg, sizeof(msg)), 0);
	}
	assert_memory_equal(&cfg, &back, offsetof(struct fdr_config, source));
}

static void table_is_consistent(void **state)
{
	(void)state;
	for (unsigned i = 0; i < fdr_noptions; i++) {
		const struct fdr_option *o = &fdr_options[i];

		assert_ptr_equal(fdr_option_by_env(o->env), o);
		assert_ptr_equal(fdr_option_by_flag(o->flag), o);
		assert_int_equal(strncmp(o->env, "FDRANGE_", 8), 0);
		assert_non_null(o->help);
		assert_non_null(o->def);
		assert_true((o->type == FDR_T_ENUM) == (o->names != NULL));
		assert_true((o->type == FDR_T_BOOL) == (o->metavar == NULL));
	}
	assert_null(fdr_option_by_env("FDRANGE_NOPE"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_without_environment),
		cmocka_unit_test(every_default_parses),
		cmocka_unit_test(good_values_are_taken),
		cmocka_unit_test(bad_values_are_refused),
		cmocka_unit_test(message_names_value_and_accepted),
		cmocka_unit_test(control_characters_stay_on_one_line),
		cmocka_unit_test(first_error_wins_and_config_is_defaults),
		cmocka_unit_test(format_round_trips),
		cmocka_unit_test(table_is_consistent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
