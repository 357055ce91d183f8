/* SPDX-License-Identifier: MIT */
#ifndef FDR_ENVCHECK_H
#define FDR_ENVCHECK_H

#include <stddef.h>

/*
 * 0 if every FDRANGE_* variable in @envp is an option of the table, else
 * -EINVAL with one line in @msg naming the first unknown one and the
 * closest known name.
 */
int fdr_env_check(char *const *envp, char *msg, size_t msglen);

#endif
