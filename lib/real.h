/* SPDX-License-Identifier: MIT */
/*
 * The next definitions of the wrapped functions (normally libc's), looked
 * up once with dlsym(RTLD_NEXT).  A wrapper called while the lookup itself
 * is running on the same thread (dlsym may allocate, and a preloaded
 * allocator may open files) gets NULL and makes the syscall directly.
 */
#ifndef FDR_REAL_H
#define FDR_REAL_H

#include "global.h"

#define FDR_SYMBOLS(X) \
	X(accept) X(accept4) X(socket) X(socketpair) \
	X(open) X(open64) X(openat) X(openat64) X(creat) X(creat64) \
	X(__open_2) X(__open64_2) X(__openat_2) X(__openat64_2) \
	X(pipe) X(pipe2) X(epoll_create) X(epoll_create1) X(eventfd) \
	X(timerfd_create) X(signalfd) X(inotify_init) X(inotify_init1) X(memfd_create) \
	X(epoll_ctl) X(prctl) X(syscall)

enum fdr_sym {
#define FDR_SYM_ENUM(n) FDR_SYM_##n,
	FDR_SYMBOLS(FDR_SYM_ENUM)
	FDR_NSYMS
};

extern void *fdr_next_tab[FDR_NSYMS] FDR_HIDDEN;

void *fdr_resolve(enum fdr_sym sym) FDR_HIDDEN;

static inline void *fdr_next(enum fdr_sym sym)
{
	void *p = __atomic_load_n(&fdr_next_tab[sym], __ATOMIC_RELAXED);

	return __builtin_expect(p != NULL, 1) ? p : fdr_resolve(sym);
}

/* The next definition of @name, typed like the wrapper, or NULL. */
/* NOLINTNEXTLINE(bugprone-macro-parentheses): name is pasted into a token */
#define NEXT(name) ((__typeof__(&name))fdr_next(FDR_SYM_##name))

#endif
