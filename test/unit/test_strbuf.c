/* SPDX-License-Identifier: MIT */
/* The malloc-free formatter behind every message and report. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <unistd.h>

#include "strbuf.h"

static void numbers_and_padding(void **state)
{
	char mem[64];
	struct strbuf sb;

	(void)state;
	sb_init(&sb, mem, sizeof(mem), -1);
	sb_u64(&sb, 0);
	sb_char(&sb, ' ');
	sb_u64(&sb, 18446744073709551615ull);
	sb_u64w(&sb, 42, 5);
	sb_strw(&sb, "ab", 4);
	sb_char(&sb, '|');
	assert_string_equal(mem, "0 18446744073709551615   42ab  |");
}

static void truncates_without_overflow(void **state)
{
	char mem[8];
	struct strbuf sb;

	(void)state;
	sb_init(&sb, mem, sizeof(mem), -1);
	sb_str(&sb, "0123456789");
	assert_int_equal(sb.len, 7);
	assert_string_equal(mem, "0123456");
}

static void flushes_long_output_to_fd(void **state)
{
	char mem[16], got[256];
	struct strbuf sb;
	int p[2];
	ssize_t n;

	(void)state;
	assert_int_equal(pipe(p), 0);
	sb_init(&sb, mem, sizeof(mem), p[1]);
	for (int i = 0; i < 10; i++)
		sb_str(&sb, "abcdefghij");
	assert_int_equal(sb_flush(&sb), 0);
	close(p[1]);
	n = read(p[0], got, sizeof(got));
	close(p[0]);
	assert_int_equal(n, 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(got[i], 'a' + i % 10);
}

static void quoted_escapes(void **state)
{
	char mem[64];
	struct strbuf sb;

	(void)state;
	sb_init(&sb, mem, sizeof(mem), -1);
	sb_quoted(&sb, "a\tb\\\x7f", 64);
	assert_string_equal(mem, "\"a\\x09b\\x5c\\x7f\"");
	sb_init(&sb, mem, sizeof(mem), -1);
	sb_quoted(&sb, "abcdef", 3);
	assert_string_equal(mem, "\"abc...\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numbers_and_padding),
		cmocka_unit_test(truncates_without_overflow),
		cmocka_unit_test(flushes_long_output_to_fd),
		cmocka_unit_test(quoted_escapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
