/* SPDX-License-Identifier: MIT */
/*
 * One spin of a bounded wait (moves.c, blockmap.c: why a pause and no
 * syscall is said there): the CPU's pause hint, and a compiler barrier so
 * that the word waited for is loaded again at every spin.
 */
#ifndef FDR_CPU_RELAX_H
#define FDR_CPU_RELAX_H

static inline void fdr_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
	__asm__ volatile("" ::: "memory");
}

#endif
