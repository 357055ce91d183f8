/* SPDX-License-Identifier: MIT */
/* The A/B driver: runs the sides round after round and prints the table (see ab.h). */
#include "ab.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AB_DEFAULT_LIB
#define AB_DEFAULT_LIB "build/lib/libfdrange.so"
#endif

extern char **environ;

struct key {
	char name[64];
	unsigned n[AB_MAX_SIDES];
	double v[AB_MAX_SIDES][AB_MAX_ROUNDS];
};

static const struct ab_bench *bench;
static struct key keys[AB_MAX_KEYS];
static unsigned nkeys;
static char notes[AB_MAX_SIDES][2048];

unsigned ab_values(const char *name, unsigned side, double out[AB_MAX_ROUNDS])
{
	for (unsigned k = 0; k < nkeys; k++)
		if (!strcmp(keys[k].name, name)) {
			memcpy(out, keys[k].v[side], keys[k].n[side] * sizeof(double));
			return keys[k].n[side];
		}
	return 0;
}

struct ab_stat ab_stat(const char *name, unsigned side)
{
	double tmp[AB_MAX_ROUNDS];

	return ab_stats_of(tmp, ab_values(name, side, tmp));
}

static void record(unsigned side, const char *name, double v)
{
	unsigned k;

	for (k = 0; k < nkeys && strcmp(keys[k].name, name); k++)
		;
	if (k == nkeys) {
		if (nkeys == AB_MAX_KEYS)
			return;
		snprintf(keys[nkeys++].name, sizeof(keys[0].name), "%s", name);
	}
	if (keys[k].n[side] < AB_MAX_ROUNDS)
		keys[k].v[side][keys[k].n[side]++] = v;
}

static char **child_env(const struct ab_side *s, const char *lib)
{
	size_t n = 0, m = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 8, sizeof(*env));
	if (!env)
		ab_die("out of memory");
	for (size_t i = 0; i < n; i++) {
		bool drop = !strncmp(environ[i], "LD_PRELOAD=", 11);

		for (unsigned e = 0; s->env[e] && !drop; e++) {
			size_t len = strcspn(s->env[e], "=") + 1;

			drop = !strncmp(environ[i], s->env[e], len);
		}
		if (!drop)
			env[m++] = environ[i];
	}
	if (s->preload) {
		char *p = malloc(strlen(lib) + 12);

		if (!p)
			ab_die("out of memory");
		sprintf(p, "LD_PRELOAD=%s", lib);
		env[m++] = p;
	}
	for (unsigned e = 0; s->env[e]; e++)
		env[m++] = (char *)s->env[e];
	env[m] = NULL;
	return env;
}

/* Run side @si once; returns 0 or -1. */
static int run_child(unsigned si, unsigned round, char **fwd, unsigned nfwd, const char *lib)
{
	const struct ab_side *s = &bench->sides[si];
	char **env = child_env(s, lib), **argv, idx[32], line[512];
	FILE *in;
	int pfd[2], status;
	pid_t pid;

	argv = calloc(nfwd + 3, sizeof(*argv));
	if (!argv || pipe2(pfd, O_CLOEXEC))
		ab_die("out of memory or fds");
	argv[0] = (char *)bench->name;
	snprintf(idx, sizeof(idx), "--child=%u", si);
	argv[1] = idx;
	memcpy(argv + 2, fwd, nfwd * sizeof(*argv));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ab_die("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(pfd[1], 1);
		execve("/proc/self/exe", argv, env);
		fprintf(stderr, "%s: exec /proc/self/exe: %s\n", bench->name, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	in = fdopen(pfd[0], "r");
	while (in && fgets(line, sizeof(line), in)) {
		char name[64];
		double v;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "@ %63s %lf", name, &v) == 2) {
			record(si, name, v);
		} else if (!strncmp(line, "# ", 2)) {
			if (round == 0) {
				size_t len = strlen(notes[si]);

				snprintf(notes[si] + len, sizeof(notes[si]) - len, "  [%s] %s\n",
					 s->label, line + 2);
			}
		} else {
			puts(line);
		}
	}
	if (in)
		fclose(in);
	free(argv);
	for (char **e = env; *e; e++)
		if (!strncmp(*e, "LD_PRELOAD=", 11))
			free(*e);
	free(env);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s: side %s, round %u: child %s %d\n", bench->name, s->label,
			round + 1, WIFSIGNALED(status) ? "killed by signal" : "exited with",
			WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		return -1;
	}
	return 0;
}

static void fmt_value(char *buf, size_t len, double v)
{
	double a = fabs(v);

	snprintf(buf, len, a >= 1e6 ? "%.3g" : a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
}

static void print_table(unsigned rounds)
{
	char m[24], lo[24], hi[24], cell[96];

	printf("%-22s", "");
	for (unsigned s = 0; s < bench->nsides; s++)
		printf("  %-26s", bench->sides[s].label);
	for (unsigned s = 1; s < bench->nsides; s++) {
		snprintf(cell, sizeof(cell), "%s/%s", bench->sides[s].label, bench->sides[0].label);
		printf("  %9s", cell);
	}
	printf("\n%-22s", "metric");
	for (unsigned s = 0; s < bench->nsides; s++)
		printf("  %-26s", "median [min .. max]");
	putchar('\n');
	for (unsigned k = 0; k < nkeys; k++) {
		struct ab_stat base = ab_stat(keys[k].name, 0);

		printf("%-22s", keys[k].name);
		for (unsigned s = 0; s < bench->nsides; s++) {
			struct ab_stat st = ab_stat(keys[k].name, s);

			if (!st.present) {
				printf("  %-26s", "-");
				continue;
			}
			fmt_value(m, sizeof(m), st.median);
			fmt_value(lo, sizeof(lo), st.min);
			fmt_value(hi, sizeof(hi), st.max);
			snprintf(cell, sizeof(cell), "%s [%s .. %s]", m, lo, hi);
			printf("  %-26s", cell);
		}
		for (unsigned s = 1; s < bench->nsides; s++) {
			struct ab_stat st = ab_stat(keys[k].name, s);

			if (st.present && base.present && base.median != 0)
				printf("  %9.2f", st.median / base.median);
			else
				printf("  %9s", "-");
		}
		putchar('\n');
	}
	printf("(%u rounds, sides alternating", rounds);
	for (unsigned s = 0; s < bench->nsides; s++)
		printf(" %s", bench->sides[s].label);
	printf(" ...)\n");
}

static void write_tsv(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		ab_die("%s: %s", path, strerror(errno));
	fprintf(f, "# key\tside\tmedian\tmin\tmax\trounds\n");
	for (unsigned k = 0; k < nkeys; k++)
		for (unsigned s = 0; s < bench->nsides; s++) {
			struct ab_stat st = ab_stat(keys[k].name, s);

			if (st.present)
				fprintf(f, "%s\t%s\t%.6g\t%.6g\t%.6g\t%u\n", keys[k].name,
					bench->sides[s].label, st.median, st.min, st.max, st.n);
		}
	fclose(f);
}

static void header(const char *lib, unsigned rounds, double seconds, bool smoke)
{
	struct utsname u;
	char load[64];

	ab_loadavg(load, sizeof(load));
	uname(&u);
	printf("== %s%s: %s (%s)\n", bench->name, smoke ? " [smoke: checks that it runs, "
	       "numbers mean nothing]" : "", bench->what, bench->unit);
	printf("machine: %ld online CPUs, Linux %s %s, load average %s, RLIMIT_NOFILE %lu\n",
	       sysconf(_SC_NPROCESSORS_ONLN), u.release, u.machine, load, ab_nofile());
	printf("rounds: %u", rounds);
	if (seconds > 0)
		printf(", %.3g s per measured quantity", seconds);
	printf("; library: %s\n", lib);
	for (unsigned s = 0; s < bench->nsides; s++) {
		printf("  %-12s %s", bench->sides[s].label, bench->sides[s].desc);
		for (unsigned e = 0; bench->sides[s].env[e]; e++)
			printf(" %s", bench->sides[s].env[e]);
		putchar('\n');
	}
}

static void usage(void)
{
	printf("usage: %s [--rounds=N] [--seconds=S] [--smoke] [--lib=PATH] [--tsv=FILE]%s%s\n"
	       "  %s\n"
	       "  Runs itself once per side and round, alternating the sides, and prints\n"
	       "  medians with [min .. max] over the rounds and each side's ratio to side %s.\n"
	       "  --smoke: one round, a fraction of a second, to check that it runs.\n",
	       bench->name, bench->usage ? " " : "", bench->usage ? bench->usage : "",
	       bench->what, bench->sides[0].label);
}

static void *idle_thread(void *arg)
{
	for (;;)
		pause();
	return arg;
}

int ab_main(int argc, char **argv, const struct ab_bench *b)
{
	const char *lib = getenv("FDRANGE_BENCH_LIB"), *tsv = NULL;
	unsigned rounds = b->rounds, nfwd = 0;
	double seconds = b->seconds;
	bool smoke = false, rounds_set = false, seconds_set = false;
	int child = -1, failed = 0;
	char **fwd = calloc((size_t)argc + 1, sizeof(*fwd));

	bench = b;
	ab_prog = b->name;
	if (!fwd)
		ab_die("out of memory");
	if (!lib)
		lib = AB_DEFAULT_LIB;
	for (int i = 1; i < argc; i++) {
		char name[64], *eq;
		const char *arg = argv[i], *val;

		if (strncmp(arg, "--", 2)) {
			usage();
			free(fwd);
			return 2;
		}
		snprintf(name, sizeof(name), "%s", arg + 2);
		eq = strchr(name, '=');
		if (eq)
			*eq = 0;
		val = strchr(arg, '=') ? strchr(arg, '=') + 1 : NULL;
		if (!strcmp(name, "help")) {
			usage();
			free(fwd);
			return 0;
		} else if (!strcmp(name, "child")) {
			child = (int)ab_ulong(name, val, 0, b->nsides - 1);
			continue;
		} else if (!strcmp(name, "rounds")) {
			rounds = (unsigned)ab_ulong(name, val, 1, AB_MAX_ROUNDS);
			rounds_set = true;
		} else if (!strcmp(name, "seconds")) {
			seconds = val ? atof(val) : 0;
			if (!(seconds > 0 && seconds < 3600))
				ab_die("--seconds=%s: expected a positive number", val ? val : "");
			seconds_set = true;
		} else if (!strcmp(name, "smoke")) {
			smoke = true;
		} else if (!strcmp(name, "lib")) {
			if (!val || !*val)
				ab_die("--lib needs a path");
			lib = val;
			continue;
		} else if (!strcmp(name, "tsv")) {
			tsv = val;
			continue;
		} else if (!b->option || b->option(name, val) < 0) {
			fprintf(stderr, "%s: unknown option %s\n", b->name, arg);
			usage();
			free(fwd);
			return 2;
		}
		fwd[nfwd++] = argv[i];
	}
	if (smoke) {
		if (!rounds_set)
			rounds = 1;
		if (!seconds_set)
			seconds = 0.01;
	}

	if (child >= 0) {
		const struct ab_side *s = &b->sides[child];
		struct ab_ctx ctx = {
			.side = s->label, .mode = s->arg ? s->arg : "", .preload = s->preload,
			.smoke = smoke, .seconds = seconds,
			.ncpus = sysconf(_SC_NPROCESSORS_ONLN),
		};
		int active = ab_lib_active(), rc;

		/* A B run without the library in B measures nothing: refuse. */
		if (s->preload && active < 0)
			ab_die("side %s: libfdrange is not loaded (LD_PRELOAD=%s)", s->label,
			       getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
		if (s->preload && active == 0 && !getenv("FDRANGE_DISABLE"))
			ab_die("side %s: libfdrange is loaded but passing through", s->label);
		if (!s->preload && active >= 0)
			ab_die("side %s: libfdrange is loaded but should not be", s->label);
		free(fwd);
		/* The library leaves a single-threaded process alone; a server,
		 * whose costs these stand for, has threads: so has every child. */
		{
			pthread_t idle;

			if (pthread_create(&idle, NULL, idle_thread, NULL) == 0)
				pthread_detach(idle);
		}
		rc = b->child(&ctx);
		fflush(stdout);
		return rc;
	}

	if (access(lib, R_OK) && !strchr(lib, ':'))
		ab_die("%s: %s (build it, or pass --lib=PATH)", lib, strerror(errno));
	header(lib, rounds, seconds, smoke);
	fflush(stdout);
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned s = 0; s < b->nsides; s++)
			if (run_child(s, r, fwd, nfwd, lib))
				failed = 1;
	for (unsigned s = 0; s < b->nsides; s++) {
		bool any = false;

		for (unsigned k = 0; k < nkeys; k++)
			any |= keys[k].n[s] > 0;
		if (!any) {
			fprintf(stderr, "%s: side %s produced no results\n", b->name, b->sides[s].label);
			failed = 1;
		}
	}
	print_table(rounds);
	for (unsigned s = 0; s < b->nsides; s++)
		if (notes[s][0]) {
			printf("notes (first round):\n");
			break;
		}
	for (unsigned s = 0; s < b->nsides; s++)
		fputs(notes[s], stdout);
	if (b->summary) {
		struct ab_ctx ctx = { .smoke = smoke, .seconds = seconds,
				      .ncpus = sysconf(_SC_NPROCESSORS_ONLN) };

		b->summary(&ctx);
	}
	if (tsv)
		write_tsv(tsv);
	free(fwd);
	if (failed)
		printf("%s: FAILED (see above)\n", b->name);
	return failed;
}

/* Median [min, max] of the per-round differences x(sx) - y(sy). */
static struct ab_stat diff(const char *x, unsigned sx, const char *y, unsigned sy)
{
	double a[AB_MAX_ROUNDS], b[AB_MAX_ROUNDS];
	unsigned na = ab_values(x, sx, a), nb = ab_values(y, sy, b), n = na < nb ? na : nb;

	for (unsigned i = 0; i < n; i++)
		a[i] -= b[i];
	return ab_stats_of(a, n);
}

struct ab_cost ab_cost_split(const char *x, const char *xm)
{
	struct ab_cost c = { .whole = diff(x, 1, x, 0) };

	if (c.whole.present) {
		c.kernel = diff(xm, 0, x, 0);
		c.library = diff(x, 1, xm, 1);
	}
	return c;
}
