/* SPDX-License-Identifier: MIT */
/* Unknown FDRANGE_* variables: a misspelt option must not pass silently. */
#include "envcheck.h"
#include "options.h"
#include "strbuf.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define NAME_MAX_LEN 32

static unsigned distance(const char *a, size_t la, const char *b, size_t lb)
{
	unsigned row[NAME_MAX_LEN + 1];

	if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
		return ~0u;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

int fdr_env_check(char *const *envp, char *msg, size_t msglen)
{
	for (; envp && *envp; envp++) {
		const char *e = *envp, *eq = strchr(e, '=');
		size_t len = eq ? (size_t)(eq - e) : strlen(e);
		const struct fdr_option *best = NULL;
		unsigned bestd = ~0u;
		struct strbuf sb;
		bool known = false;

		if (strncmp(e, "FDRANGE_", 8) != 0)
			continue;
		for (unsigned i = 0; i < fdr_noptions && !known; i++) {
			const char *n = fdr_options[i].env;
			unsigned d = distance(e, len, n, strlen(n));

			known = d == 0;
			if (d < bestd) {
				bestd = d;
				best = &fdr_options[i];
			}
		}
		if (known)
			continue;
		sb_init(&sb, msg, msglen, -1);
		sb_str(&sb, "unknown variable ");
		{
			char name[NAME_MAX_LEN * 2 + 1];
			size_t n = len < sizeof(name) - 1 ? len : sizeof(name) - 1;
			bool plain = true;

			memcpy(name, e, n);
			name[n] = 0;
			for (size_t i = 0; i < n; i++)
				plain &= (name[i] >= 'A' && name[i] <= 'Z') ||
					 (name[i] >= '0' && name[i] <= '9') || name[i] == '_';
			if (plain && n == len)
				sb_str(&sb, name);
			else
				sb_quoted(&sb, name, n);
		}
		if (best && bestd <= 3) {
			sb_str(&sb, "; did you mean ");
			sb_str(&sb, best->env);
			sb_str(&sb, "?");
		} else {
			sb_str(&sb, "; known:");
			for (unsigned i = 0; i < fdr_noptions; i++) {
				sb_str(&sb, i ? ", " : " ");
				sb_str(&sb, fdr_options[i].env);
			}
		}
		return -EINVAL;
	}
	return 0;
}
