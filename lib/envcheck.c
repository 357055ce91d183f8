/* SPDX-License-Identifier: MIT */
/*
 * Unknown FDRANGE_* variables (see envcheck.h).  Everything on the stack,
 * bounded by FDR_ENV_NAME_MAX; formatting through strbuf, which writes
 * nothing anywhere when given flush_fd -1.
 */
#include "envcheck.h"
#include "options.h"
#include "strbuf.h"

#include <errno.h>
#include <stdbool.h>

#define PREFIX "FDRANGE_"
#define PREFIX_LEN (sizeof(PREFIX) - 1)

/*
 * Variables that start with FDRANGE_ but are not library options, and are
 * legitimately in the environment of a program run under the library.
 * The one place to add such a name.
 */
static const char *const allowed[] = {
	"FDRANGE_BENCH_LIB",   /* bench/ab.c: the library the A/B benchmarks preload */
};

/* The length of the name of entry @e: up to '=' or the end. */
static size_t name_len(const char *e)
{
	size_t n = 0;

	while (e[n] && e[n] != '=')
		n++;
	return n;
}

/* Whether the first @n bytes of @name are exactly @word. */
static bool name_is(const char *name, size_t n, const char *word)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (word[i] != name[i])
			return false;
	return word[n] == 0;
}

static bool has_prefix(const char *e)
{
	for (size_t i = 0; i < PREFIX_LEN; i++)
		if (e[i] != PREFIX[i])
			return false;
	return true;
}

static unsigned char lower(char c)
{
	unsigned char u = (unsigned char)c;

	return u >= 'A' && u <= 'Z' ? (unsigned char)(u | 0x20) : u;
}

unsigned fdr_env_distance(const char *a, size_t na, const char *b, size_t nb)
{
	/* Three rows of the optimal-string-alignment table suffice. */
	unsigned rows[3][FDR_ENV_NAME_MAX + 1];
	unsigned *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	if (na > FDR_ENV_NAME_MAX || nb > FDR_ENV_NAME_MAX)
		return (unsigned)-1;
	for (size_t j = 0; j <= nb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= na; i++) {
		unsigned *t;

		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= nb; j++) {
			unsigned cost = lower(a[i - 1]) != lower(b[j - 1]);
			unsigned v = prev[j - 1] + cost;

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) && prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[nb];
}

/* The option whose name is closest to the @n bytes of @name, if close
 * enough to be a slip (at most 2 edits, and fewer than half of the part
 * after FDRANGE_), else NULL. */
static const char *closest(const char *name, size_t n)
{
	const char *best = NULL;
	unsigned best_d = (unsigned)-1;
	size_t rest = n - PREFIX_LEN;

	for (unsigned i = 0; i < fdr_noptions; i++) {
		const char *env = fdr_options[i].env;
		/* name_len, not a strlen loop the compiler would make a call of */
		unsigned d = fdr_env_distance(name + PREFIX_LEN, rest, env + PREFIX_LEN,
					      name_len(env) - PREFIX_LEN);

		if (d < best_d) {
			best_d = d;
			best = env;
		}
	}
	return best && best_d <= 2 && 2 * (size_t)best_d < rest ? best : NULL;
}

/* @n bytes of @name: as they are if plain (letters, digits, '_'), else
 * quoted with control characters escaped, and cut if long. */
static void put_name(struct strbuf *sb, const char *name, size_t n)
{
	char buf[FDR_ENV_NAME_MAX + 1];
	bool plain = n <= FDR_ENV_NAME_MAX;
	size_t i;

	for (i = 0; plain && i < n; i++) {
		char c = name[i];

		plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			(c >= '0' && c <= '9') || c == '_';
	}
	if (plain) {
		for (i = 0; i < n; i++)
			sb_char(sb, name[i]);
		return;
	}
	for (i = 0; i < n && i < FDR_ENV_NAME_MAX; i++)
		buf[i] = name[i];
	buf[i] = 0;
	/* sb_quoted adds "..." itself only for what it cuts: say so for ours. */
	sb_quoted(sb, buf, FDR_ENV_NAME_MAX);
	if (n > FDR_ENV_NAME_MAX)
		sb_str(sb, "...");
}

static bool known(const char *name, size_t n)
{
	for (unsigned i = 0; i < fdr_noptions; i++)
		if (name_is(name, n, fdr_options[i].env))
			return true;
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (name_is(name, n, allowed[i]))
			return true;
	return false;
}

int fdr_env_check(char *const *envp, char *msg, size_t msglen)
{
	if (!envp)
		return 0;
	for (; *envp; envp++) {
		const char *e = *envp;
		size_t n;
		const char *near;
		struct strbuf sb;

		if (!has_prefix(e))
			continue;
		n = name_len(e);
		if (known(e, n))
			continue;
		if (!msg || !msglen)
			return -EINVAL;
		near = closest(e, n);
		sb_init(&sb, msg, msglen, -1);
		sb_str(&sb, "unknown variable ");
		put_name(&sb, e, n);
		if (near) {
			sb_str(&sb, "; did you mean ");
			sb_str(&sb, near);
			sb_char(&sb, '?');
		} else {
			sb_str(&sb, "; known: ");
			for (unsigned i = 0; i < fdr_noptions; i++) {
				if (i)
					sb_str(&sb, ", ");
				sb_str(&sb, fdr_options[i].env);
			}
		}
		return -EINVAL;
	}
	return 0;
}
