/* SPDX-License-Identifier: MIT */
/* Seccomp sandboxes: the library steps aside (sandbox.c). */
#ifndef FDR_SANDBOX_H
#define FDR_SANDBOX_H

#include "global.h"

/* At start-up, from /proc/self/status (status.h): a filter (or strict
 * mode) in force. */
bool fdr_sandbox_in_status(void) FDR_HIDDEN;

/*
 * The program is about to install a seccomp filter (prctl or seccomp(2)):
 * stop placing for good, in every thread; with @tsync (the filter will
 * bind all threads at once) wait for moves in flight first.
 */
void fdr_sandbox_coming(bool tsync) FDR_HIDDEN;

#endif
