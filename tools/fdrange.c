/* SPDX-License-Identifier: MIT */
/*
 * fdrange: run a command with libfdrange preloaded, in the manner of
 * onload(1) and eatmydata(1).  Options are validated with the library's own
 * parser before anything starts, so a bad value never reaches a run.
 */
#include "elfcheck.h"
#include "envcheck.h"
#include "options.h"
#include "geometry.h"
#include "profile.h"
#include "stat.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define EXIT_NOEXEC 126
#define EXIT_NOTFOUND 127

/* Where ld.so splits LD_PRELOAD (glibc's rtld: strsep(" :")). */
#define PRELOAD_SEPARATORS " :"

static const char *prog = "fdrange";

#define HELP_INDENT 21  /* where an option's text starts */
#define HELP_WIDTH  80

/* @text from column HELP_INDENT, words wrapped before HELP_WIDTH, no
 * trailing space; @first_col: where the cursor is now (0: a new line). */
static void wrap(FILE *out, const char *text, int first_col)
{
	int col = first_col;

	if (col < HELP_INDENT) {
		fprintf(out, "%*s", HELP_INDENT - col, "");
		col = HELP_INDENT;
	}
	while (*text) {
		size_t w = strcspn(text, " ");

		if (col > HELP_INDENT && col + 1 + (int)w > HELP_WIDTH) {
			fprintf(out, "\n%*s", HELP_INDENT, "");
			col = HELP_INDENT;
		} else if (col > HELP_INDENT) {
			fputc(' ', out);
			col++;
		}
		fwrite(text, 1, w, out);
		col += (int)w;
		text += w;
		while (*text == ' ')
			text++;
	}
	fputc('\n', out);
}

static void usage(FILE *out)
{
	char acc[160], line[256];

	fprintf(out,
		"Usage: %s [OPTION]... [--] COMMAND [ARG]...\n"
		"   or: %s stat [--color=WHEN] [--no-map] [--json] PID\n"
		"   or: %s stat [--json|--prometheus] [--interval S] PID...|--all\n"
		"   or: %s profile [--seconds N] [--json] PID...\n"
		"   or: %s profile [--json] -- COMMAND [ARG]...\n"
		"   or: %s ab [OPTION]... --load 'COMMAND' -- SERVER [ARG]...\n"
		"Run COMMAND with libfdrange preloaded: each thread's new file descriptors\n"
		"go to a range of fd numbers of its own.  Each option sets the environment\n"
		"variable named beside it; variables already set are kept unless overridden.\n"
		"'%s stat PID' shows how a running process's fds are placed and which\n"
		"threads serve them (see '%s stat --help'); '%s -- stat' runs a program\n"
		"named stat.  'profile' measures the share of a process's CPU in the kernel's\n"
		"fd paths; 'ab' compares a server plain and under the library with your load\n"
		"(each with --help).  Both are subcommands too: to run a program named ab\n"
		"(Apache Bench) or profile under the library, write '%s -- ab ...' or\n"
		"'%s -- profile ...'.\n"
		"\n", prog, prog, prog, prog, prog, prog, prog, prog, prog, prog, prog);
	for (unsigned i = 0; i < fdr_noptions; i++) {
		const struct fdr_option *o = &fdr_options[i];
		char left[48];

		fdr_option_accepted(o, acc, sizeof(acc));
		snprintf(left, sizeof(left), "  --%s%s%s", o->flag, o->metavar ? " " : "",
			 o->metavar ? o->metavar : "");
		snprintf(line, sizeof(line), "%s (default %s)", o->env, o->def);
		fprintf(out, "%-*s", HELP_INDENT, left);
		if ((int)strlen(left) >= HELP_INDENT) {
			fputc('\n', out);
			wrap(out, line, 0);
		} else {
			wrap(out, line, HELP_INDENT);
		}
		wrap(out, o->help, 0);
		snprintf(line, sizeof(line), "accepted: %s", acc);
		wrap(out, line, 0);
	}
	fprintf(out,
		"  -v, --verbose      print the effective settings and geometry to stderr first\n"
		"  -h, --help         show this help and exit\n"
		"  --version          show the version and exit\n"
		"\n"
		"The library cannot help a statically linked program (nothing preloads into\n"
		"it) or a Go program (its runtime makes its own syscalls): fdrange says so on\n"
		"stderr and runs it anyway.\n"
		"\n"
		"Exit status: COMMAND's, or 2 for a bad option or an unknown FDRANGE_*\n"
		"variable in the environment, 126 if COMMAND cannot be executed, 127 if\n"
		"it is not found.\n");
}

static const char *lookup_env(const char *name, void *arg)
{
	(void)arg;
	return getenv(name);
}

/* The library next to this binary in a build tree, else the installed one. */
static int find_library(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		char *slash;

		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash && (size_t)(slash - exe) + sizeof("/../lib") <= sizeof(exe)) {
			char real[PATH_MAX];

			/*
			 * Resolve the directory, not the file: libfdrange.so is
			 * a link to the versioned file, and LD_PRELOAD should
			 * keep naming libfdrange.so.
			 */
			memcpy(slash, "/../lib", sizeof("/../lib"));
			if (realpath(exe, real) &&
			    snprintf(out, len, "%s/libfdrange.so", real) < (int)len &&
			    access(out, R_OK) == 0)
				return 0;
		}
	}
	snprintf(out, len, "%s/libfdrange.so", FDRANGE_LIBDIR);
	return access(out, R_OK) == 0 ? 0 : -ENOENT;
}

/*
 * LD_PRELOAD with @lib last and no other libfdrange entry.  Last, so that
 * runtimes which must be loaded first (ASan's, a malloc replacement) still
 * are; the wrapped calls then reach libfdrange through their RTLD_NEXT.
 */
static char *compose_preload(const char *lib, const char *old)
{
	size_t cap = strlen(lib) + (old ? strlen(old) : 0) + 2;
	char *out = malloc(cap);
	size_t n = 0;

	if (!out)
		return NULL;
	while (old && *old) {
		size_t w = strcspn(old, PRELOAD_SEPARATORS);

		if (w && !st_is_lib_path(old, w)) {
			memcpy(out + n, old, w);
			n += w;
			out[n++] = ':';
		}
		old += w;
		if (*old)
			old++;
	}
	/* NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.strcpy): cap counts lib and old */
	strcpy(out + n, lib);
	return out;
}

/*
 * fs.nr_open, the kernel's cap on any process's fd numbers, as the library
 * reads it (FDR_MAX_FD, the kernel default, where /proc cannot say), so
 * that -v shows the geometry the library will compute.
 */
static unsigned long read_nr_open(void)
{
	unsigned long v = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		char buf[32], *end;

		if (fgets(buf, sizeof(buf), f)) {
			errno = 0;
			v = strtoul(buf, &end, 10);
			if (errno || end == buf || (*end && *end != '\n'))
				v = 0;
		}
		fclose(f);
	}
	return v ? v : FDR_MAX_FD;
}

static void print_settings(const struct fdr_config *cfg, const char *lib)
{
	struct rlimit rl;
	char val[FDR_PATH_MAX];

	fprintf(stderr, "%s: library %s\n", prog, lib);
	for (unsigned i = 0; i < fdr_noptions; i++) {
		fdr_option_format(&fdr_options[i], cfg, val, sizeof(val));
		fprintf(stderr, "%s: %s=%s%s\n", prog, fdr_options[i].env, val,
			cfg->source[i] == FDR_SRC_DEFAULT ? " (default)" : "");
	}
	if (cfg->stats[0])
		fprintf(stderr, "%s: note: the report is written when the program calls exit() "
			"or returns from main; one that ends with _exit(), a raw exit_group (Go "
			"programs, some servers' worker threads) or a signal writes none: watch it "
			"with 'fdrange stat PID' instead\n", prog);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		unsigned long cap = fdr_geom_cap(rl.rlim_cur, read_nr_open());

		if (cap > cfg->base)
			fprintf(stderr, "%s: with RLIMIT_NOFILE %llu now: fds from %u up to fd %lu, %s, "
				"%s (a program that changes its limit gets numbers below the new "
				"one)\n",
				prog, (unsigned long long)rl.rlim_cur, cfg->base, cap - 1,
				cfg->width ? "in fixed ranges" :
				"an 8-fd line per thread, then 64-fd chunks as it needs them",
				cfg->bound == FDR_BOUND_OFF ?
				"bounded only by the limit (FDRANGE_BOUND=off: fds at 1024 and above "
				"while the program holds few, no select())" :
				"and never above max(1024, 2 x the fds open + 64)");
		else
			fprintf(stderr, "%s: with RLIMIT_NOFILE %llu now no chunk fits; "
				"fds stay where the kernel puts them until the limit is raised\n",
				prog, (unsigned long long)rl.rlim_cur);
	}
}

/* One line when the library cannot help @cmd; it runs all the same. */
static void warn_unhelpable(const char *cmd)
{
	char path[PATH_MAX];

	if (fdr_which(cmd, path, sizeof(path)) < 0)
		return;  /* execvp says what is wrong */
	switch (fdr_elf_kind(path)) {
	case FDR_ELF_STATIC:
		fprintf(stderr, "%s: warning: %s is statically linked: no dynamic loader runs for it, "
			"so libfdrange is not loaded; running it anyway\n", prog, cmd);
		break;
	case FDR_ELF_GO:
	case FDR_ELF_GO_STATIC:
		fprintf(stderr, "%s: warning: %s is a Go program: its runtime makes its own "
			"syscalls, so no fd of it passes through libfdrange; running it anyway\n",
			prog, cmd);
		break;
	default:
		break;
	}
}

/*
 * fdrange ab: the A/B runner (a script of the fdrange-bench package) run
 * with this fdrange.  From a build tree, the build's runner and helpers.
 */
static int run_ab(char **argv)
{
	char exe[PATH_MAX], dir[PATH_MAX], script[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *helpers = FDRANGE_HELPERDIR;
	bool build_tree = false;

	if (n > 0) {
		char *slash;

		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			snprintf(dir, sizeof(dir), "%.*s/../bench", (int)(slash - exe), exe);
			snprintf(script, sizeof(script), "%s/ab-report", dir);
			if (access(script, X_OK) == 0) {
				helpers = dir;
				build_tree = true;
			}
		}
		setenv("FDR_AB_FDRANGE", exe, 1);
	}
	snprintf(script, sizeof(script), "%s/ab-server", helpers);
	if (access(script, X_OK) != 0) {
		fprintf(stderr, "%s ab: the A/B runner is not installed (no %s): install the "
			"fdrange-bench package\n", prog, script);
		return EXIT_NOTFOUND;
	}
	if (build_tree)
		setenv("FDR_AB_HELPERDIR", helpers, 1);
	setenv("AB_PROG", "fdrange ab", 1);
	argv[0] = script;
	execv(script, argv);
	fprintf(stderr, "%s ab: %s: %s\n", prog, script, strerror(errno));
	return EXIT_NOEXEC;
}

int main(int argc, char **argv)
{
	struct fdr_config cfg, scratch;
	bool verbose = false;
	char lib[PATH_MAX], msg[256];
	char *preload;
	int i, err;

	/* A subcommand only as the very first word: after options or "--",
	 * "stat" is the command to run. */
	if (argc > 1 && !strcmp(argv[1], "stat"))
		return fdrange_stat_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "profile"))
		return fdrange_profile_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "ab"))
		return run_ab(argv + 1);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		const struct fdr_option *o;
		char name[32];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--version")) {
			printf("fdrange %s\n", FDRANGE_VERSION_STRING);
			return 0;
		}
		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose = true;
			continue;
		}
		/* Only the name before '=' must fit: the value may be long. */
		if (strncmp(a, "--", 2) != 0 || strcspn(a + 2, "=") >= sizeof(name)) {
			fprintf(stderr, "%s: unknown option '%s'; see '%s --help'\n", prog, a, prog);
			return EXIT_USAGE;
		}
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(a + 2, "="), a + 2);
		o = fdr_option_by_flag(name);
		if (!o) {
			fprintf(stderr, "%s: unknown option '%s'; see '%s --help'\n", prog, a, prog);
			return EXIT_USAGE;
		}
		if (a[2 + strlen(name)] == '=')
			val = a + 3 + strlen(name);
		if (!o->metavar) {
			if (val) {
				fprintf(stderr, "%s: option '--%s' takes no value\n", prog, name);
				return EXIT_USAGE;
			}
			val = "1";
		} else if (!val) {
			if (i + 1 >= argc) {
				fprintf(stderr, "%s: option '--%s' needs a value (%s)\n", prog, name,
					o->metavar);
				return EXIT_USAGE;
			}
			val = argv[++i];
		}
		fdr_config_defaults(&scratch);
		if (fdr_option_parse(o, val, &scratch, msg, sizeof(msg)) < 0) {
			fprintf(stderr, "%s: --%s: %s\n", prog, name, msg);
			return EXIT_USAGE;
		}
		setenv(o->env, val, 1);
	}
	if (i >= argc) {
		fprintf(stderr, "%s: no command given; see '%s --help'\n", prog, prog);
		return EXIT_USAGE;
	}
	/* A misspelt variable would otherwise run with the default setting. */
	if (fdr_env_check(environ, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, msg);
		return EXIT_USAGE;
	}
	/* The environment as the library will read it, flags and inherited alike. */
	if (fdr_config_load(&cfg, lookup_env, NULL, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, msg);
		return EXIT_USAGE;
	}
	if (find_library(lib, sizeof(lib)) < 0) {
		fprintf(stderr, "%s: libfdrange.so not found (looked next to this program and in %s)\n",
			prog, FDRANGE_LIBDIR);
		return EXIT_NOEXEC;
	}
	if (lib[strcspn(lib, PRELOAD_SEPARATORS)]) {
		fprintf(stderr, "%s: cannot preload %s: the dynamic loader splits LD_PRELOAD at "
			"spaces and colons; install or build libfdrange under a path without them\n",
			prog, lib);
		return EXIT_NOEXEC;
	}
	preload = compose_preload(lib, getenv("LD_PRELOAD"));
	if (!preload || setenv("LD_PRELOAD", preload, 1)) {
		free(preload);
		fprintf(stderr, "%s: out of memory\n", prog);
		return EXIT_NOEXEC;
	}
	free(preload);
	if (verbose)
		print_settings(&cfg, lib);
	warn_unhelpable(argv[i]);
	execvp(argv[i], argv + i);
	/* Read errno before printing: fprintf to a closed stderr sets it. */
	err = errno;
	fprintf(stderr, "%s: %s: %s\n", prog, argv[i], strerror(err));
	return err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
}
