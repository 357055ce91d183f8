/* SPDX-License-Identifier: MIT */
/*
 * cohsyms CAT:NAME... - tell the coherence plugin where the named kernel
 * functions are, from this kernel's /proc/kallsyms, for kernels whose
 * symbol table the host does not have (Debian's packaged kernel: its
 * System.map is a stub). A function ends where the next text symbol
 * starts. Names not found are reported and skipped; exit 1 if none of the
 * lookup functions was found, since a count over nothing would pass.
 */
#include "hypercall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sym {
	unsigned long addr;
	char name[64];
};

static int cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int main(int argc, char **argv)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	struct sym *s = NULL;
	size_t n = 0, cap = 0;
	char line[512], type, name[256];
	unsigned long addr;
	int lookups = 0;

	if (!f) {
		perror("cohsyms: /proc/kallsyms");
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %255s", &addr, &type, name) != 3)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			s = realloc(s, cap * sizeof(*s));
			if (!s)
				return 1;
		}
		s[n].addr = addr;
		snprintf(s[n].name, sizeof(s[n].name), "%.63s", name);
		n++;
	}
	fclose(f);
	qsort(s, n, sizeof(*s), cmp);
	if (n == 0 || s[n - 1].addr == 0) {
		fprintf(stderr, "cohsyms: /proc/kallsyms shows no addresses (kptr_restrict?)\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		char *colon = strchr(argv[i], ':');
		int found = 0;
		if (!colon)
			continue;
		*colon = 0;
		for (size_t k = 0; k + 1 < n; k++) {
			if (strcmp(s[k].name, colon + 1))
				continue;
			size_t e = k + 1;
			while (e < n && s[e].addr == s[k].addr)
				e++;
			if (e == n)
				break;
			char desc[160];
			snprintf(desc, sizeof(desc), "%s %s", argv[i], colon + 1);
			coh_call(COH_ADDFN, s[k].addr, s[e].addr, (unsigned long)desc);
			printf("cohsyms: %s %s %lx-%lx\n", argv[i], colon + 1, s[k].addr, s[e].addr);
			found = 1;
			lookups += !strcmp(argv[i], "lookup");
			break;
		}
		if (!found)
			printf("cohsyms: %s not in kallsyms\n", colon + 1);
	}
	coh_call(COH_COMMIT, 0, 0, 0);
	free(s);
	if (!lookups) {
		fprintf(stderr, "cohsyms: no lookup function found\n");
		return 1;
	}
	return 0;
}
