/* SPDX-License-Identifier: MIT */
#include "real.h"
#include "sys.h"

#include <dlfcn.h>

void *fdr_next_tab[FDR_NSYMS] FDR_HIDDEN;

static const char *const names[FDR_NSYMS] = {
#define FDR_SYM_NAME(n) #n,
	FDR_SYMBOLS(FDR_SYM_NAME)
};

static __thread int resolving __attribute__((tls_model("initial-exec")));

void *fdr_resolve(enum fdr_sym sym)
{
	if (resolving)
		return NULL;
	resolving = 1;
	/* All at once: one burst of dlsym at start-up, none later. */
	for (unsigned i = 0; i < FDR_NSYMS; i++)
		if (!__atomic_load_n(&fdr_next_tab[i], __ATOMIC_RELAXED))
			__atomic_store_n(&fdr_next_tab[i], dlsym(RTLD_NEXT, names[i]),
					 __ATOMIC_RELAXED);
	fdr_syscall_resolve();
	resolving = 0;
	return __atomic_load_n(&fdr_next_tab[sym], __ATOMIC_RELAXED);
}
