/* SPDX-License-Identifier: MIT */
/*
 * The kernel functions of each fd path, in one table, and the rule that
 * charges a sample to a path.  A sample is charged by the function it was
 * taken in (its self time, as `perf report --no-children` counts it): the
 * inclusive time of close_fd would hold the whole teardown of a TCP
 * connection, which no fd placement changes.  The exception is the spin
 * lock's slow path: it is shared by every lock of the kernel, so a sample
 * there counts as waiting for the fd table's lock only when the nearest
 * function of the table above it is one that takes files->file_lock (the
 * file_lock column).
 *
 * Names change between kernels; the table holds those of Linux 5.10 to
 * 6.18, and fdrange profile --functions shows which the running kernel has.
 */
#include "profile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const pf_cat_name[PF_NCAT] = {
	"lookup", "create", "close", "lock wait", "virtualisation", "kernel, other", "user",
};

/* Name, path, and whether it takes files->file_lock (see pf_classify). */
const struct pf_func pf_funcs[] = {
	/* The lookup: fd -> struct file, and the reference dropped after it. */
	{ "fget", PF_LOOKUP, 0 },
	{ "fget_raw", PF_LOOKUP, 0 },
	{ "fget_task", PF_LOOKUP, 0 },
	{ "fdget", PF_LOOKUP, 0 },             /* 6.7+, was __fdget */
	{ "fdget_raw", PF_LOOKUP, 0 },
	{ "fdget_pos", PF_LOOKUP, 0 },         /* 6.7+, was __fdget_pos */
	{ "__fdget", PF_LOOKUP, 0 },
	{ "__fdget_raw", PF_LOOKUP, 0 },
	{ "__fdget_pos", PF_LOOKUP, 0 },
	{ "__fget_light", PF_LOOKUP, 0 },
	{ "__fget", PF_LOOKUP, 0 },
	{ "__fget_files", PF_LOOKUP, 0 },
	{ "__fget_files_rcu", PF_LOOKUP, 0 },
	{ "fput", PF_LOOKUP, 0 },
	{ "fput_many", PF_LOOKUP, 0 },         /* before 5.11 */
	{ "__file_ref_put", PF_LOOKUP, 0 },    /* 6.13+: file_ref_t */
	{ "__f_unlock_pos", PF_LOOKUP, 0 },
	/* Creating: a free number under the table's lock, the file installed. */
	{ "alloc_fd", PF_CREATE, 1 },
	{ "__alloc_fd", PF_CREATE, 1 },        /* before 5.11 */
	{ "get_unused_fd_flags", PF_CREATE, 0 },
	{ "__get_unused_fd_flags", PF_CREATE, 0 },
	{ "fd_install", PF_CREATE, 0 },
	{ "__fd_install", PF_CREATE, 0 },
	{ "expand_files", PF_CREATE, 1 },
	{ "expand_fdtable", PF_CREATE, 1 },
	{ "f_dupfd", PF_CREATE, 1 },
	{ "do_dup2", PF_CREATE, 1 },
	{ "ksys_dup3", PF_CREATE, 1 },
	{ "replace_fd", PF_CREATE, 1 },
	{ "receive_fd", PF_CREATE, 0 },
	{ "__receive_fd", PF_CREATE, 0 },
	{ "put_unused_fd", PF_CREATE, 1 },     /* an accept that failed gives its number back */
	{ "__put_unused_fd", PF_CREATE, 1 },
	/* Closing: the number freed under the lock, the file's last reference. */
	{ "close_fd", PF_CLOSE, 1 },
	{ "__close_fd", PF_CLOSE, 1 },         /* before 5.11 */
	{ "file_close_fd", PF_CLOSE, 1 },      /* 6.8+, was close_fd_get_file */
	{ "file_close_fd_locked", PF_CLOSE, 0 },
	{ "close_fd_get_file", PF_CLOSE, 0 },
	{ "pick_file", PF_CLOSE, 1 },
	{ "__close_range", PF_CLOSE, 1 },
	{ "filp_close", PF_CLOSE, 0 },
	{ "filp_flush", PF_CLOSE, 0 },
	{ "__fput", PF_CLOSE, 0 },
	{ "____fput", PF_CLOSE, 0 },
	{ "__fput_sync", PF_CLOSE, 0 },
	/* The spin lock's slow path, native and paravirtualised. */
	{ "native_queued_spin_lock_slowpath", PF_SPIN, 0 },
	{ "queued_spin_lock_slowpath", PF_SPIN, 0 },
	{ "__pv_queued_spin_lock_slowpath", PF_SPIN, 0 },
	/*
	 * Where a paravirtualised guest re-enables interrupts: the timer
	 * interrupts held back meanwhile all land here, so these samples say
	 * where the hypervisor delivered them, not what the process did.
	 */
	{ "pvm_irq_enable", PF_VIRT, 0 },
	{ "__raw_callee_save_pvm_irq_enable", PF_VIRT, 0 },   /* its register-saving thunk */
	{ "xen_irq_enable_direct", PF_VIRT, 0 },
	{ "xen_restore_fl_direct", PF_VIRT, 0 },
};
const unsigned pf_nfuncs = sizeof(pf_funcs) / sizeof(pf_funcs[0]);

_Static_assert(sizeof(pf_funcs) / sizeof(pf_funcs[0]) <= 64, "pf_syms.present holds 64");

/* A name with a compiler's suffix (alloc_fd.isra.0, __fput.cold) is the
 * same function: the suffix names a clone or its cold part. */
int pf_func_by_name(const char *name)
{
	size_t len = strcspn(name, ".");

	for (unsigned i = 0; i < pf_nfuncs; i++)
		if (!strncmp(pf_funcs[i].name, name, len) && !pf_funcs[i].name[len])
			return (int)i;
	return -1;
}

long pf_read_long(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = LONG_MIN;

	if (f) {
		char buf[32], *end;

		if (fgets(buf, sizeof(buf), f)) {
			errno = 0;
			v = strtol(buf, &end, 10);
			if (errno || end == buf)
				v = LONG_MIN;
		}
		fclose(f);
	}
	return v;
}

struct ksym {
	uint64_t addr;
	int func;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int range_cmp(const void *a, const void *b)
{
	const struct pf_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int pf_syms_load(struct pf_syms *s, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	struct ksym *all = NULL;
	size_t n = 0, cap = 0;
	char line[512];
	bool nonzero = false;

	memset(s, 0, sizeof(*s));
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, *end, *name;

		/* "ADDR TYPE NAME[\t[MODULE]]" */
		errno = 0;
		addr = strtoull(line, &end, 16);
		if (errno || end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = end[1];
		name = end + 3;
		name[strcspn(name, " \t\n")] = 0;
		if (!name[0])
			continue;
		if (addr)
			nonzero = true;
		/* Text symbols only: a data symbol between two functions would
		 * cut the first one short. */
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (n == cap) {
			struct ksym *p;

			cap = cap ? cap * 2 : 65536;
			p = realloc(all, cap * sizeof(*all));
			if (!p) {
				free(all);
				fclose(f);
				snprintf(err, errlen, "out of memory reading %s", path);
				return -1;
			}
			all = p;
		}
		all[n].addr = addr;
		all[n].func = pf_func_by_name(name);
		n++;
	}
	fclose(f);
	if (!nonzero) {
		free(all);
		if (!n) {
			snprintf(err, errlen, "%s is empty: this kernel lists no symbols", path);
			return -1;
		}
		/* The kernel shows the addresses to CAP_SYSLOG, or to anyone
		 * when kptr_restrict is 0 and perf_event_paranoid at most 1. */
		char kr[24] = "unreadable", pp[24] = "unreadable";
		long v;

		if ((v = pf_read_long("/proc/sys/kernel/kptr_restrict")) != LONG_MIN)
			snprintf(kr, sizeof(kr), "%ld", v);
		if ((v = pf_read_long("/proc/sys/kernel/perf_event_paranoid")) != LONG_MIN)
			snprintf(pp, sizeof(pp), "%ld", v);
		snprintf(err, errlen, "%s hides the kernel's addresses from this user "
			 "(kernel.kptr_restrict=%s, kernel.perf_event_paranoid=%s): run as root or "
			 "with CAP_SYSLOG, or set kptr_restrict to 0 and perf_event_paranoid to 1 or less",
			 path, kr, pp);
		return -2;
	}
	if (all)
		qsort(all, n, sizeof(*all), ksym_cmp);
	s->r = calloc(pf_nfuncs + 1, sizeof(*s->r) * 4);
	if (!s->r) {
		free(all);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t j = i + 1;

		if (all[i].func < 0 || s->n >= (pf_nfuncs + 1) * 4)
			continue;
		/* A function ends where the next symbol at a higher address begins. */
		while (j < n && all[j].addr == all[i].addr)
			j++;
		s->r[s->n].lo = all[i].addr;
		s->r[s->n].hi = j < n ? all[j].addr : all[i].addr + 4096;
		s->r[s->n].func = (unsigned)all[i].func;
		s->present[all[i].func] = true;
		s->n++;
	}
	free(all);
	qsort(s->r, s->n, sizeof(*s->r), range_cmp);
	return 0;
}

/*
 * The spin lock's slow path has one name per kernel configuration
 * (queued_spin_lock_slowpath is #defined to native_... where paravirtual
 * spin locks are built in): one of them present is the slow path present.
 * The hypervisor's functions exist only on their hypervisor's guests.
 */
bool pf_absent(const struct pf_syms *s, unsigned i)
{
	if (s->present[i] || pf_funcs[i].cat == PF_VIRT)
		return false;
	if (pf_funcs[i].cat == PF_SPIN)
		for (unsigned j = 0; j < pf_nfuncs; j++)
			if (pf_funcs[j].cat == PF_SPIN && s->present[j])
				return false;
	return true;
}

void pf_syms_free(struct pf_syms *s)
{
	free(s->r);
	s->r = NULL;
	s->n = 0;
}

int pf_syms_find(const struct pf_syms *s, uint64_t ip)
{
	unsigned lo = 0, hi = s->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (ip < s->r[mid].lo)
			hi = mid;
		else if (ip >= s->r[mid].hi)
			lo = mid + 1;
		else
			return (int)s->r[mid].func;
	}
	return -1;
}

enum pf_cat pf_classify(int leaf, bool kernel, const int *chain, unsigned n, int *func)
{
	*func = -1;
	if (!kernel)
		return PF_USER;
	if (leaf < 0)
		return PF_KERNEL;
	*func = leaf;
	if (pf_funcs[leaf].cat != PF_SPIN)
		return (enum pf_cat)pf_funcs[leaf].cat;
	/*
	 * The nearest function of the table above the slow path says whose lock
	 * it spins on: __fput, filp_close and the like run after file_lock is
	 * dropped, so a socket's lock taken under them is not the table's.
	 * Another slow-path frame (a paravirtualised one calling the native)
	 * says nothing about whose lock it is.
	 */
	for (unsigned i = 0; i < n; i++)
		if (chain[i] >= 0 && pf_funcs[chain[i]].cat != PF_SPIN)
			return pf_funcs[chain[i]].file_lock ? PF_LOCKWAIT : PF_KERNEL;
	return PF_KERNEL;
}
