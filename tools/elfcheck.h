/* SPDX-License-Identifier: MIT */
/*
 * Whether libfdrange can help a program at all, from its ELF file alone:
 * a static executable never runs the dynamic loader, so LD_PRELOAD loads
 * nothing into it; a Go program's runtime makes its syscalls itself, so
 * none of its fds pass through the wrapped libc calls.
 */
#ifndef FDRANGE_TOOLS_ELFCHECK_H
#define FDRANGE_TOOLS_ELFCHECK_H

#include <stddef.h>

enum fdr_elf {
	FDR_ELF_DYNAMIC,     /* has a PT_INTERP: the preload works */
	FDR_ELF_STATIC,      /* an executable without PT_INTERP */
	FDR_ELF_GO,          /* a Go build id note or .go.buildinfo section */
	FDR_ELF_GO_STATIC,   /* both */
	FDR_ELF_OTHER,       /* not an ELF file of this machine: a script, unreadable, ... */
};

/* What @path is.  Reads only its headers, bounded. */
enum fdr_elf fdr_elf_kind(const char *path);

/* The file execvp(@name) would run, as it searches PATH, into @out: 0, or
 * -1 if there is none (exec then reports it). */
int fdr_which(const char *name, char *out, size_t len);

#endif
