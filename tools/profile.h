/* SPDX-License-Identifier: MIT */
/*
 * fdrange profile: the share of a process's CPU spent in the kernel's fd
 * paths, from sampled kernel call stacks (see fdrange-profile(1)).
 *
 * profile_funcs.c: the one table of kernel functions and their path, the
 * kernel's symbols (/proc/kallsyms), and the rule that puts a sample in a
 * path.  profile.c: the sampler (perf_event_open), the reader of perf(1)
 * data (--perf-data), the report.
 */
#ifndef FDR_PROFILE_H
#define FDR_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a sample goes.  The first four are the fd paths. */
enum pf_cat {
	PF_LOOKUP,      /* fget/fdget and fput: the lookup behind every read, send, epoll_ctl */
	PF_CREATE,      /* alloc_fd, fd_install, dup: what accept, socket, open do to the table */
	PF_CLOSE,       /* close_fd, file_close_fd, __fput */
	PF_LOCKWAIT,    /* the spin-lock slow path right under a function taking file_lock */
	PF_VIRT,        /* the hypervisor's: left out of every share */
	PF_KERNEL,      /* any other kernel code */
	PF_USER,        /* the process's own code */
	PF_NCAT
};

/* A function of the table as the classification uses it: SPIN marks the
 * slow paths, which count only as PF_LOCKWAIT (when the nearest function
 * of the table above them takes file_lock) or PF_KERNEL. */
#define PF_SPIN PF_NCAT

struct pf_func {
	const char *name;
	int cat;                /* enum pf_cat, or PF_SPIN */
	int file_lock;          /* takes files->file_lock: a slow path right under it is lock wait */
};

extern const struct pf_func pf_funcs[];
extern const unsigned pf_nfuncs;
extern const char *const pf_cat_name[PF_NCAT];

/* The kernel's text symbols of the table, as address ranges. */
struct pf_range {
	uint64_t lo, hi;        /* [lo, hi) */
	unsigned func;          /* index in pf_funcs */
};

struct pf_syms {
	struct pf_range *r;
	unsigned n;
	bool present[64];       /* per pf_funcs entry: found in the kernel */
};

/*
 * Read @path (normally /proc/kallsyms) into @s.  Returns 0; -1 with a one-line
 * reason in @err when the file cannot be read or its addresses are hidden
 * (kptr_restrict), -2 in the latter case.
 */
int pf_syms_load(struct pf_syms *s, const char *path, char *err, size_t errlen);
void pf_syms_free(struct pf_syms *s);

/* Whether pf_funcs[@i] is missing from this kernel: its name is not in @s,
 * nor (a slow path) is the slow path there under another name; false for
 * the hypervisor's functions, which only its guests have. */
bool pf_absent(const struct pf_syms *s, unsigned i);

/* The number in the file @path (a /proc/sys setting), or LONG_MIN. */
long pf_read_long(const char *path);

/* The pf_funcs index of the function holding @ip, or -1. */
int pf_syms_find(const struct pf_syms *s, uint64_t ip);

/* The pf_funcs index of @name, a suffix from the first dot ignored, or -1. */
int pf_func_by_name(const char *name);

/*
 * The path of one sample.  @leaf: the function index of the sampled ip (-1
 * for none of the table), @kernel: the ip is in the kernel; @chain: the
 * function indexes (-1 for others) of the callers, nearest first.  *@func is
 * set to the function charged (the leaf's), or -1.
 */
enum pf_cat pf_classify(int leaf, bool kernel, const int *chain, unsigned n, int *func);

/* fdrange profile's main, argv[0] being "profile". */
int fdrange_profile_main(int argc, char **argv);

#endif
