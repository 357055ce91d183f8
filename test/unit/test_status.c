/* SPDX-License-Identifier: MIT */
/*
 * The library's one reader of /proc/self/status (lib/status.c): the lines
 * start-up uses are found wherever they are in the file, a long Groups:
 * line included, and read back as numbers; a file without them, or none
 * at all, is refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "status.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* fdr_status_read_fd() of @text, written to a pipe and closed. */
static int read_text(const char *text)
{
	int p[2], ret;
	size_t len = strlen(text);

	assert_int_equal(pipe(p), 0);
	assert_true(len < 65536);  /* the pipe's buffer: the write does not block */
	assert_int_equal(write(p[1], text, len), (ssize_t)len);
	close(p[1]);
	ret = fdr_status_read_fd(p[0]);
	close(p[0]);
	return ret;
}

static void values_are_read(void **state)
{
	(void)state;
	assert_int_equal(read_text("Name:\tx\nFDSize:\t64\nThreads:\t1\nSeccomp:\t0\n"
				   "Seccomp_filters:\t3\n"), 0);
	assert_int_equal(fdr_status_value("FDSize:"), 64);
	assert_int_equal(fdr_status_value("Threads:"), 1);
	/* Seccomp_filters: is not Seccomp: */
	assert_int_equal(fdr_status_value("Seccomp:"), 0);
	/* Not a line start-up keeps. */
	assert_int_equal(fdr_status_value("Name:"), -1);
	assert_int_equal(read_text("Threads: 12\nSeccomp:\t2\n"), 0);
	assert_int_equal(fdr_status_value("Threads:"), 12);
	assert_int_equal(fdr_status_value("Seccomp:"), 2);
	assert_int_equal(fdr_status_value("FDSize:"), -1);
}

/* Hundreds of supplementary groups put Seccomp: kilobytes down. */
static void long_groups_line_is_skipped(void **state)
{
	static char text[32768];
	size_t n = 0;

	(void)state;
	n += (size_t)snprintf(text + n, sizeof(text) - n, "FDSize:\t256\nGroups:\t");
	for (unsigned g = 0; g < 2000; g++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%u ", 100000 + g);
	snprintf(text + n, sizeof(text) - n, "\nThreads:\t3\nSeccomp:\t2\n");
	assert_int_equal(read_text(text), 0);
	assert_int_equal(fdr_status_value("FDSize:"), 256);
	assert_int_equal(fdr_status_value("Threads:"), 3);
	assert_int_equal(fdr_status_value("Seccomp:"), 2);
}

/* Nothing start-up uses: refused, and nothing is read back. */
static void status_without_the_lines_is_refused(void **state)
{
	(void)state;
	assert_int_equal(read_text("Name:\tx\nPid:\t1\n"), -EIO);
	assert_int_equal(fdr_status_value("Threads:"), -1);
	assert_int_equal(read_text(""), -EIO);
	/* A last line without its newline is not taken as whole. */
	assert_int_equal(read_text("Threads:\t1"), -EIO);
	assert_int_equal(fdr_status_read_fd(-1), -EIO);
	assert_int_equal(fdr_status_value("Threads:"), -1);
}

/* The process's own file, as the library reads it at start-up. */
static void own_status_is_read(void **state)
{
	(void)state;
	assert_int_equal(fdr_status_read(), 0);
	assert_true(fdr_status_value("Threads:") >= 1);
	assert_true(fdr_status_value("FDSize:") >= 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values_are_read),
		cmocka_unit_test(long_groups_line_is_skipped),
		cmocka_unit_test(status_without_the_lines_is_refused),
		cmocka_unit_test(own_status_is_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
