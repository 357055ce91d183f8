/* SPDX-License-Identifier: MIT */
/* fdrange profile's classification and its reading of /proc/kallsyms,
 * against made-up symbol files: hidden addresses refused with the reason,
 * function ends, compiler suffixes, the lock-wait rule. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"

#define SYMS_TEMPLATE "/tmp/fdrange-kallsyms.XXXXXX"

/* pf_syms_load() of a made-up /proc/kallsyms holding @text: its result. */
static int load_syms(struct pf_syms *s, const char *text, char *err, size_t errlen)
{
	char path[] = SYMS_TEMPLATE;
	int fd = mkstemp(path), rc;
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	rc = pf_syms_load(s, path, err, errlen);
	unlink(path);
	return rc;
}

static void hidden_addresses_are_refused(void **state)
{
	struct pf_syms s;
	char err[512];

	(void)state;
	assert_int_equal(load_syms(&s, "0000000000000000 T fget\n0000000000000000 T fdget\n"
				   "0000000000000000 t alloc_fd\n", err, sizeof(err)), -2);
	assert_non_null(strstr(err, "kptr_restrict"));
	assert_non_null(strstr(err, "CAP_SYSLOG"));
	assert_int_equal(load_syms(&s, "", err, sizeof(err)), -1);
	assert_int_equal(pf_syms_load(&s, "/nonexistent/kallsyms", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot read"));
}

static void functions_end_at_the_next_text_symbol(void **state)
{
	struct pf_syms s;
	char err[512];
	int fdget = pf_func_by_name("fdget"), alloc = pf_func_by_name("alloc_fd");

	(void)state;
	assert_int_equal(load_syms(&s, "ffffffff81001000 T fdget\n"
				   "ffffffff81001080 d some_data\n"           /* data does not end a function */
				   "ffffffff81001100 T other\n"
				   "ffffffff81002000 t alloc_fd.isra.0\n"     /* a clone is the function */
				   "ffffffff81002040 t __pfx_x\n", err, sizeof(err)), 0);
	assert_int_equal(pf_syms_find(&s, 0xffffffff81001000ull), fdget);
	assert_int_equal(pf_syms_find(&s, 0xffffffff810010ffull), fdget);
	assert_int_equal(pf_syms_find(&s, 0xffffffff81001100ull), -1);
	assert_int_equal(pf_syms_find(&s, 0xffffffff81002010ull), alloc);
	assert_int_equal(pf_syms_find(&s, 0xffffffff81002040ull), -1);
	assert_int_equal(pf_syms_find(&s, 0xffffffff81000fffull), -1);
	assert_true(s.present[fdget]);
	assert_true(s.present[alloc]);
	assert_false(s.present[pf_func_by_name("fput")]);
	pf_syms_free(&s);
}

static void the_lock_counts_only_under_create_or_close(void **state)
{
	int spin = pf_func_by_name("native_queued_spin_lock_slowpath");
	int alloc = pf_func_by_name("alloc_fd"), close = pf_func_by_name("file_close_fd");
	int fget = pf_func_by_name("fget"), virt = pf_func_by_name("pvm_irq_enable");
	int under_alloc[] = { -1, alloc, -1 }, under_close[] = { close }, elsewhere[] = { -1, -1 };
	int under_fget[] = { fget }, f;

	(void)state;
	assert_true(spin >= 0 && alloc >= 0 && close >= 0 && fget >= 0 && virt >= 0);
	assert_int_equal(pf_classify(spin, true, under_alloc, 3, &f), PF_LOCKWAIT);
	assert_int_equal(f, spin);
	assert_int_equal(pf_classify(spin, true, under_close, 1, &f), PF_LOCKWAIT);
	assert_int_equal(pf_classify(spin, true, elsewhere, 2, &f), PF_KERNEL);
	assert_int_equal(pf_classify(spin, true, under_fget, 1, &f), PF_KERNEL);
	assert_int_equal(pf_classify(spin, true, NULL, 0, &f), PF_KERNEL);
	/*
	 * __fput -> sock_close -> tcp_close -> lock_sock -> slow path: the
	 * socket's lock, taken after file_lock was dropped, even with
	 * close_fd further up the stack.
	 */
	{
		int fput = pf_func_by_name("__fput"), close_fd = pf_func_by_name("close_fd");
		int under_fput[] = { -1, -1, -1, fput, -1, close_fd };

		assert_true(fput >= 0 && close_fd >= 0);
		assert_int_equal(pf_classify(spin, true, under_fput, 6, &f), PF_KERNEL);
	}
	/* A paravirtualised slow path above the native one: look past it. */
	{
		int pv = pf_func_by_name("__pv_queued_spin_lock_slowpath");
		int under_pv[] = { pv, -1, alloc };

		assert_true(pv >= 0);
		assert_int_equal(pf_classify(spin, true, under_pv, 3, &f), PF_LOCKWAIT);
	}
	/* Self time: a sample in other code under alloc_fd is not create. */
	assert_int_equal(pf_classify(-1, true, under_alloc, 3, &f), PF_KERNEL);
	assert_int_equal(f, -1);
	assert_int_equal(pf_classify(alloc, true, NULL, 0, &f), PF_CREATE);
	assert_int_equal(pf_classify(fget, true, NULL, 0, &f), PF_LOOKUP);
	assert_int_equal(pf_classify(close, true, NULL, 0, &f), PF_CLOSE);
	assert_int_equal(pf_classify(virt, true, under_alloc, 3, &f), PF_VIRT);
	assert_int_equal(pf_classify(-1, false, NULL, 0, &f), PF_USER);
}

static void every_name_is_once_in_the_table(void **state)
{
	(void)state;
	for (unsigned i = 0; i < pf_nfuncs; i++)
		assert_int_equal(pf_func_by_name(pf_funcs[i].name), (int)i);
	assert_int_equal(pf_func_by_name("fdget.cold"), pf_func_by_name("fdget"));
	assert_int_equal(pf_func_by_name("fdge"), -1);
	assert_int_equal(pf_func_by_name("fdgetx"), -1);
}

/* "Not in this kernel" names what it lacks: not a slow-path name whose
 * slow path it has under another, nor the hypervisor's functions. */
static void absent_means_missing_from_this_kernel(void **state)
{
	struct pf_syms s;
	char err[512];
	int native = pf_func_by_name("native_queued_spin_lock_slowpath");
	int generic = pf_func_by_name("queued_spin_lock_slowpath");
	int pv = pf_func_by_name("__pv_queued_spin_lock_slowpath");

	(void)state;
	/* A kernel without paravirtual spin locks: the generic name only. */
	assert_int_equal(load_syms(&s, "ffffffff81001000 T fdget\n"
				   "ffffffff81002000 T queued_spin_lock_slowpath\n"
				   "ffffffff81003000 T other\n", err, sizeof(err)), 0);
	assert_false(pf_absent(&s, (unsigned)generic));
	assert_false(pf_absent(&s, (unsigned)native));
	assert_false(pf_absent(&s, (unsigned)pv));
	assert_false(pf_absent(&s, (unsigned)pf_func_by_name("fdget")));
	assert_true(pf_absent(&s, (unsigned)pf_func_by_name("__fdget")));
	assert_false(pf_absent(&s, (unsigned)pf_func_by_name("pvm_irq_enable")));
	pf_syms_free(&s);
	/* No slow path under any name: each of its names is missing. */
	assert_int_equal(load_syms(&s, "ffffffff81001000 T fdget\nffffffff81003000 T other\n",
				   err, sizeof(err)), 0);
	assert_true(pf_absent(&s, (unsigned)generic));
	assert_true(pf_absent(&s, (unsigned)native));
	assert_true(pf_absent(&s, (unsigned)pv));
	pf_syms_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hidden_addresses_are_refused),
		cmocka_unit_test(functions_end_at_the_next_text_symbol),
		cmocka_unit_test(the_lock_counts_only_under_create_or_close),
		cmocka_unit_test(every_name_is_once_in_the_table),
		cmocka_unit_test(absent_means_missing_from_this_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
