/* SPDX-License-Identifier: MIT */
/*
 * The guest side of the coherence plugin's channel: a user-mode
 * `xchg %rcx,%rcx` (bytes 48 87 c9, a no-op no compiler emits) with the
 * command in %rax and its arguments in %rdi, %rsi, %rdx. Outside the
 * instrumented QEMU it does nothing, so the programs also run bare.
 */
#ifndef COH_HYPERCALL_H
#define COH_HYPERCALL_H

enum { COH_OPEN = 1, COH_CLOSE = 2, COH_ADDFN = 3, COH_COMMIT = 4 };

static inline void coh_call(unsigned long cmd, unsigned long a, unsigned long b, unsigned long c)
{
	__asm__ volatile(".byte 0x48, 0x87, 0xc9" : : "a"(cmd), "D"(a), "S"(b), "d"(c) : "memory");
}

#endif
