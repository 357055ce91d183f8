/* SPDX-License-Identifier: MIT */
/*
 * The option table and its strict parser.  Strict like jemalloc's
 * MALLOC_CONF: a value is taken whole or not at all, and anything not
 * understood switches the library to pass-through with a message, so a typo
 * never silently runs an A/B comparison with the wrong settings.
 */
#include "options.h"
#include "block.h"
#include "strbuf.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

static const char *const accept_names[] = { "auto", "thread", "roundrobin", NULL };
/* FDRANGE_OPEN and FDRANGE_LOCAL: enum fdr_open and enum fdr_local. */
static const char *const move_keep_names[] = { "move", "keep", NULL };
_Static_assert(FDR_OPEN_MOVE == 0 && FDR_OPEN_KEEP == 1 && FDR_LOCAL_MOVE == 0 && FDR_LOCAL_KEEP == 1,
	       "move_keep_names[] is indexed by both enums");
/* FDRANGE_KERNEL and FDRANGE_BOUND: enum fdr_kernel and enum fdr_bound. */
static const char *const kernel_names[] = { "auto", "off", NULL };
_Static_assert(FDR_KERNEL_AUTO == 0 && FDR_KERNEL_OFF == 1 && FDR_BOUND_AUTO == 0 && FDR_BOUND_OFF == 1,
	       "kernel_names[] is indexed by both enums");

#define OFF(f) offsetof(struct fdr_config, f)

/* The one place each option is defined, its default included (.def). */
const struct fdr_option fdr_options[] = {
	{ "FDRANGE_SLOTS", "slots", "N", FDR_T_UINT, OFF(slots), 1, FDR_MAX_SLOTS, 1,
	  "auto", NULL, "auto",
	  "auto: every thread gets a range of its own (an 8-fd line, then 64-fd chunks); N: at most N ranges, threads share them "
	  "round-robin in the order they first need one (roundrobin: the number of rotation "
	  "positions, auto = online CPUs, at most 64)" },
	{ "FDRANGE_BASE", "base", "FD", FDR_T_UINT, OFF(base), 0, FDR_MAX_FD - FDR_ALIGN, FDR_ALIGN,
	  NULL, NULL, "64",
	  "first fd of the ranges; fds below it keep the kernel's lowest-free numbering" },
	{ "FDRANGE_WIDTH", "width", "N", FDR_T_UINT, OFF(width), FDR_ALIGN, FDR_MAX_FD, FDR_ALIGN,
	  "auto", NULL, "auto",
	  "auto: a thread's first fds go to an 8-fd line of its own, more to 64-fd chunks claimed "
	  "on demand, the lowest free first, below max(1024, 2 x open fds + 64), so fd numbers "
	  "stay compact; N: fixed ranges of N fds laid out from BASE" },
	{ "FDRANGE_ACCEPT", "accept", "POLICY", FDR_T_ENUM, OFF(accept), 0, 0, 0,
	  NULL, accept_names, "auto",
	  "auto: an accepted fd goes to the range of the thread expected to serve it, learned "
	  "from epoll_ctl (the accepting thread, or the next of a rotation; unpredictable ones in a "
	  "shared pool; none moved when epoll is (almost) never used); thread: the "
	  "accepting thread's range; roundrobin: the k-th accepted fd goes to position k mod L "
	  "(L = SLOTS, or the online CPUs, at most 64) and fds from other calls are not moved" },
	{ "FDRANGE_LOCAL", "local", "POLICY", FDR_T_ENUM, OFF(local), 0, 0, 0,
	  NULL, move_keep_names, "keep",
	  "with FDRANGE_ACCEPT=auto, where the kernel has no fd range: what happens to an "
	  "accepted fd once the library has learned that each thread serves the connections "
	  "it accepts (model local: h2o, haproxy with per-thread binds, envoy); keep: where "
	  "the kernel put it (lowest-free, as without the library), sparing the move's "
	  "F_DUPFD and close (2 more takes of file_lock per connection, which cost more "
	  "than they save in that shape); move: into the accepting thread's range; fds "
	  "handed to other threads are moved either way" },
	{ "FDRANGE_OPEN", "open", "POLICY", FDR_T_ENUM, OFF(open), 0, 0, 0,
	  NULL, move_keep_names, "move",
	  "move: place fds from open/openat/creat too; keep: leave them where the kernel put "
	  "them (closing the original fd drops POSIX record locks the process holds on that file)" },
	{ "FDRANGE_THRESHOLD", "threshold", "N", FDR_T_UINT, OFF(threshold), 0, FDR_MAX_FD, 1,
	  NULL, NULL, "64",
	  "an fd the kernel numbers below N stays where the kernel put it: the process does "
	  "not hold all of fds 0 to N-1 yet, too few fds for a move (2 syscalls, 2 more fd-table "
	  "writes under file_lock) to pay; 0: move from the first fd; on the kernel-range path "
	  "the kernel counts instead: ranges are used while the process holds N fds or more, "
	  "so a thread's new fds go to its range, if it has one with room, not into a hole "
	  "below N" },
	{ "FDRANGE_KERNEL", "kernel", "POLICY", FDR_T_ENUM, OFF(kernel), 0, 0, 0,
	  NULL, kernel_names, "auto",
	  "auto: where the kernel has the per-task fd range (the kernel/ series, "
	  "CONFIG_FD_RANGE; probed once at start), each thread's range is set with "
	  "prctl(PR_SET_FD_RANGE) when it changes, and the kernel allocates its new fds "
	  "there: no move, no syscall per fd; off: always move with F_DUPFD" },
	{ "FDRANGE_BOUND", "bound", "POLICY", FDR_T_ENUM, OFF(bound), 0, 0, 0,
	  NULL, kernel_names, "auto",
	  "auto: the do-no-harm bound: a kernel fd below 1024 is never placed at 1024 or "
	  "above (select() and FD_SET hold only fds below 1024), and chunks are claimed only "
	  "below max(1024, 2 x open fds + 64), so fd numbers grow with the fds held, not with "
	  "threads; off: only RLIMIT_NOFILE bounds placement, for a program that never hands "
	  "an fd to select() or FD_SET (with FDRANGE_WIDTH=512 on the kernel's fd range with "
	  "fd_range_nolock=on each thread's fds then lie on fd-table bitmap lines of its own; "
	  "fd numbers grow with threads x width)" },
	{ "FDRANGE_DISABLE", "disable", NULL, FDR_T_BOOL, OFF(disable), 0, 1, 0,
	  NULL, NULL, "0",
	  "1: load but pass every call through untouched (the A side of an A/B run)" },
	{ "FDRANGE_PREGROW", "pregrow", "N", FDR_T_UINT, OFF(pregrow), 0, FDR_MAX_FD, 1,
	  NULL, NULL, "1024",
	  "grow the kernel's fd table to N entries (rounded down to a power of two; about 8.25 "
	  "bytes of kernel memory each), never beyond RLIMIT_NOFILE, once: at the first move of "
	  "an fd numbered past FDRANGE_THRESHOLD (with the threshold 0: at start-up, while "
	  "single-threaded); spares the threads placing fds above the table's size a wait of "
	  "milliseconds (synchronize_rcu) at each growth; 0 (or below 128): off" },
	{ "FDRANGE_STATS", "stats", "DEST", FDR_T_DEST, OFF(stats), 0, 0, 0,
	  NULL, NULL, "none",
	  "write a report at exit to 'stderr' or to a file path containing a '/' (created "
	  "0600, appended, never through a symlink; %p becomes the pid); none: no report" },
};

const unsigned fdr_noptions = sizeof(fdr_options) / sizeof(fdr_options[0]);

_Static_assert(sizeof(fdr_options) / sizeof(fdr_options[0]) <=
	       sizeof(((struct fdr_config *)0)->source), "source[] too small");
_Static_assert(sizeof(fdr_options) / sizeof(fdr_options[0]) <= FDR_SETTINGS_MAX,
	       "more options than the stats block has settings for");

void fdr_config_defaults(struct fdr_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	/* A default that does not parse is a bug the unit tests catch. */
	for (unsigned i = 0; i < fdr_noptions; i++)
		fdr_option_parse(&fdr_options[i], fdr_options[i].def, cfg, NULL, 0);
}

const struct fdr_option *fdr_option_by_env(const char *env)
{
	for (unsigned i = 0; i < fdr_noptions; i++)
		if (!strcmp(fdr_options[i].env, env))
			return &fdr_options[i];
	return NULL;
}

const struct fdr_option *fdr_option_by_flag(const char *flag)
{
	for (unsigned i = 0; i < fdr_noptions; i++)
		if (!strcmp(fdr_options[i].flag, flag))
			return &fdr_options[i];
	return NULL;
}

size_t fdr_option_accepted(const struct fdr_option *opt, char *buf, size_t len)
{
	struct strbuf sb;

	sb_init(&sb, buf, len, -1);
	switch (opt->type) {
	case FDR_T_UINT:
		if (opt->auto_word) {
			sb_str(&sb, "'");
			sb_str(&sb, opt->auto_word);
			sb_str(&sb, "' or ");
		}
		sb_str(&sb, opt->multiple > 1 ? "a multiple of " : "an integer");
		if (opt->multiple > 1)
			sb_u64(&sb, opt->multiple);
		sb_str(&sb, " from ");
		sb_u64(&sb, opt->min);
		sb_str(&sb, " to ");
		sb_u64(&sb, opt->max);
		break;
	case FDR_T_BOOL:
		sb_str(&sb, "1, 0, yes, no, true, false, on or off");
		break;
	case FDR_T_ENUM:
		for (unsigned i = 0; opt->names[i]; i++) {
			if (i)
				sb_str(&sb, opt->names[i + 1] ? ", " : " or ");
			sb_str(&sb, opt->names[i]);
		}
		break;
	case FDR_T_DEST:
		sb_str(&sb, "'stderr', 'none' or a file path with a '/' of at most ");
		sb_u64(&sb, FDR_PATH_MAX - 1);
		sb_str(&sb, " bytes");
		break;
	}
	return sb.len;
}

static int fail(const struct fdr_option *opt, const char *value, const char *why,
		char *msg, size_t msglen)
{
	if (msg && msglen) {
		struct strbuf sb;
		char acc[160];

		fdr_option_accepted(opt, acc, sizeof(acc));
		sb_init(&sb, msg, msglen, -1);
		sb_str(&sb, opt->env);
		sb_char(&sb, '=');
		sb_quoted(&sb, value, 64);
		sb_str(&sb, ": ");
		sb_str(&sb, why);
		sb_str(&sb, "; accepted: ");
		sb_str(&sb, acc);
	}
	return -EINVAL;
}

static int parse_uint(const struct fdr_option *opt, const char *v, unsigned *out,
		      char *msg, size_t msglen)
{
	uint64_t n = 0;
	const char *p = v;

	if (opt->auto_word && !strcmp(v, opt->auto_word)) {
		*out = 0;
		return 0;
	}
	if (!*p)
		return fail(opt, v, "empty value", msg, msglen);
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return fail(opt, v, *p == '-' ? "negative or not a number" :
				    p == v ? "not a number" : "trailing characters",
				    msg, msglen);
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > 0xffffffffu)
			return fail(opt, v, "out of range", msg, msglen);
	}
	if (n < opt->min || n > opt->max)
		return fail(opt, v, "out of range", msg, msglen);
	if (opt->multiple > 1 && n % opt->multiple) {
		char why[40];
		struct strbuf sb;

		sb_init(&sb, why, sizeof(why), -1);
		sb_str(&sb, "not a multiple of ");
		sb_u64(&sb, opt->multiple);
		return fail(opt, v, why, msg, msglen);
	}
	*out = (unsigned)n;
	return 0;
}

int fdr_option_parse(const struct fdr_option *opt, const char *value,
		     struct fdr_config *cfg, char *msg, size_t msglen)
{
	static const char *const yes[] = { "1", "yes", "true", "on", NULL };
	static const char *const no[] = { "0", "no", "false", "off", NULL };
	void *field = (char *)cfg + opt->offset;
	unsigned u = 0;
	int ret;

	switch (opt->type) {
	case FDR_T_UINT:
		ret = parse_uint(opt, value, &u, msg, msglen);
		if (ret)
			return ret;
		*(unsigned *)field = u;
		return 0;
	case FDR_T_BOOL:
		for (unsigned i = 0; yes[i]; i++) {
			if (!strcmp(value, yes[i])) {
				*(bool *)field = true;
				return 0;
			}
			if (!strcmp(value, no[i])) {
				*(bool *)field = false;
				return 0;
			}
		}
		return fail(opt, value, *value ? "not a boolean" : "empty value", msg, msglen);
	case FDR_T_ENUM:
		for (unsigned i = 0; opt->names[i]; i++) {
			if (!strcmp(value, opt->names[i])) {
				*(unsigned *)field = i;
				return 0;
			}
		}
		return fail(opt, value, *value ? "unknown value" : "empty value", msg, msglen);
	case FDR_T_DEST:
		if (!*value)
			return fail(opt, value, "empty value", msg, msglen);
		if (strlen(value) >= FDR_PATH_MAX)
			return fail(opt, value, "too long", msg, msglen);
		/* FDRANGE_STATS=1 or =yes is a mistake, not a wish for a file
		 * named 1 in whatever the current directory is. */
		if (strcmp(value, "stderr") != 0 && strcmp(value, "none") != 0 && !strchr(value, '/'))
			return fail(opt, value, "not stderr, none or a path", msg, msglen);
		/* "none" is what --help and the report show for no report, so it
		 * must read back as that, not as a file named none (./none is). */
		/* NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.strcpy): length checked above */
		strcpy((char *)field, strcmp(value, "none") ? value : "");
		return 0;
	}
	return -EINVAL;
}

int fdr_config_load(struct fdr_config *cfg,
		    const char *(*get)(const char *name, void *arg), void *arg,
		    char *msg, size_t msglen)
{
	fdr_config_defaults(cfg);
	for (unsigned i = 0; i < fdr_noptions; i++) {
		const char *v = get(fdr_options[i].env, arg);
		int ret;

		if (!v)
			continue;
		ret = fdr_option_parse(&fdr_options[i], v, cfg, msg, msglen);
		if (ret)
			return ret;
		cfg->source[i] = FDR_SRC_ENV;
	}
	return 0;
}

size_t fdr_option_format(const struct fdr_option *opt,
			 const struct fdr_config *cfg, char *buf, size_t len)
{
	const void *field = (const char *)cfg + opt->offset;
	struct strbuf sb;

	sb_init(&sb, buf, len, -1);
	switch (opt->type) {
	case FDR_T_UINT:
		if (opt->auto_word && !*(const unsigned *)field)
			sb_str(&sb, opt->auto_word);
		else
			sb_u64(&sb, *(const unsigned *)field);
		break;
	case FDR_T_BOOL:
		sb_str(&sb, *(const bool *)field ? "1" : "0");
		break;
	case FDR_T_ENUM:
		sb_str(&sb, opt->names[*(const unsigned *)field]);
		break;
	case FDR_T_DEST:
		sb_str(&sb, *(const char *)field ? (const char *)field : "none");
		break;
	}
	return sb.len;
}
