/* SPDX-License-Identifier: MIT */
/*
 * The option table: the one place where every FDRANGE_* setting is defined.
 * Parsing, the wrapper's --help and flags, and the config dump in the stats
 * report are all generated from fdr_options[].
 */
#ifndef FDR_OPTIONS_H
#define FDR_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#define FDR_ALIGN       64u       /* ranges start and end on multiples of this */
#define FDR_MAX_SLOTS   1024u
#define FDR_MAX_FD      1048576u  /* the kernel's default fs.nr_open */
#define FDR_PATH_MAX    512u

/* Index into the option's names[]: also stored in the stats block. */
enum fdr_accept { FDR_ACCEPT_AUTO, FDR_ACCEPT_THREAD, FDR_ACCEPT_ROUNDROBIN };
enum fdr_open { FDR_OPEN_MOVE, FDR_OPEN_KEEP };
enum fdr_local { FDR_LOCAL_MOVE, FDR_LOCAL_KEEP };
enum fdr_kernel { FDR_KERNEL_AUTO, FDR_KERNEL_OFF };
enum fdr_bound { FDR_BOUND_AUTO, FDR_BOUND_OFF };

enum fdr_source { FDR_SRC_DEFAULT, FDR_SRC_ENV };

struct fdr_config {
	unsigned slots;          /* 0: auto, a range per thread */
	unsigned base;
	unsigned width;          /* 0: auto, ranges grow in 64-fd chunks on demand */
	unsigned accept;         /* enum fdr_accept */
	unsigned open;           /* enum fdr_open */
	unsigned local;          /* enum fdr_local */
	unsigned threshold;       /* fds the kernel numbers below this are not moved */
	unsigned kernel;          /* enum fdr_kernel */
	unsigned bound;           /* enum fdr_bound */
	bool disable;
	unsigned pregrow;         /* fd table entries to grow to once; 0 = off */
	char stats[FDR_PATH_MAX]; /* "" none, "stderr", or a path (%p = pid) */
	unsigned char source[16]; /* enum fdr_source, by option index */
};

enum fdr_opt_type { FDR_T_UINT, FDR_T_BOOL, FDR_T_ENUM, FDR_T_DEST };

struct fdr_option {
	const char *env;          /* FDRANGE_SLOTS */
	const char *flag;         /* slots: the wrapper's --slots */
	const char *metavar;      /* N, or NULL for a flag without argument */
	enum fdr_opt_type type;
	size_t offset;            /* of the value in struct fdr_config */
	unsigned min, max, multiple;
	const char *auto_word;    /* UINT only: word meaning "derive it" (0) */
	const char *const *names; /* ENUM only, NULL-terminated */
	const char *def;          /* the default: parsed like a value, shown to users */
	const char *help;
};

extern const struct fdr_option fdr_options[];
extern const unsigned fdr_noptions;

/* Fill @cfg with the defaults: each row's .def, parsed. */
void fdr_config_defaults(struct fdr_config *cfg);

/*
 * Parse one option's value into @cfg.  Returns 0, or -EINVAL and writes a
 * one-line message (no newline) of at most @msglen bytes into @msg naming
 * the variable, the value and what is accepted.
 */
int fdr_option_parse(const struct fdr_option *opt, const char *value,
		     struct fdr_config *cfg, char *msg, size_t msglen);

/*
 * Read every option through @get (getenv, or a test's lookup).  Returns 0
 * or the first error, with its message in @msg.
 */
int fdr_config_load(struct fdr_config *cfg,
		    const char *(*get)(const char *name, void *arg), void *arg,
		    char *msg, size_t msglen);

const struct fdr_option *fdr_option_by_env(const char *env);
const struct fdr_option *fdr_option_by_flag(const char *flag);

/* The value of @opt in @cfg as text, e.g. "4", "auto", "roundrobin". */
size_t fdr_option_format(const struct fdr_option *opt,
			 const struct fdr_config *cfg, char *buf, size_t len);

/* "the value accepted" text of @opt, e.g. "an integer from 1 to 1024". */
size_t fdr_option_accepted(const struct fdr_option *opt, char *buf, size_t len);

#endif
