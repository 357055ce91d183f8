/* SPDX-License-Identifier: MIT */
/*
 * Unknown FDRANGE_* variables: a misspelt setting (FDRANGE_SLOT=4,
 * FDRANGE_ACEPT=roundrobin) must not silently run with the default.
 * Pure: no malloc, no stdio, no libc call at all, so the preload library's
 * constructor can run it before libc is fully usable.
 */
#ifndef FDR_ENVCHECK_H
#define FDR_ENVCHECK_H

#include <stddef.h>

/* Names compared for "did you mean" up to this length; longer ones are
 * only ever "unknown". */
#define FDR_ENV_NAME_MAX 48u

/*
 * Check every "NAME=VALUE" entry of @envp (NULL-terminated; NULL: none)
 * whose NAME starts with FDRANGE_.  Returns 0 if each such NAME is an
 * option's variable (fdr_options[].env) or on the allow-list of
 * non-option variables (envcheck.c), else -EINVAL with one line (no
 * newline) in @msg, at most @msglen bytes, about the first unknown one:
 *   unknown variable FDRANGE_SLOT; did you mean FDRANGE_SLOTS?
 *   unknown variable FDRANGE_FOO; known: FDRANGE_SLOTS, FDRANGE_BASE, ...
 * Values are never copied into @msg.
 */
int fdr_env_check(char *const *envp, char *msg, size_t msglen);

/* The edit distance (Damerau-Levenshtein, optimal string alignment:
 * insert, delete, substitute, swap two neighbours), ignoring ASCII case,
 * between the first @na bytes of @a and the first @nb of @b, both at most
 * FDR_ENV_NAME_MAX; (unsigned)-1 if either is longer. */
unsigned fdr_env_distance(const char *a, size_t na, const char *b, size_t nb);

#endif
