/* SPDX-License-Identifier: MIT */
/*
 * The A/B driver shared by the benchmark programs.
 *
 * Each program is its own driver: run plainly, it re-executes itself once
 * per side (A: no library, B: LD_PRELOAD of libfdrange.so, and whatever
 * other sides the program declares), alternating the sides round after
 * round (A B A B ...), so that drift of a noisy machine lands on every side
 * alike.  The child measures and prints "@ key value" lines; the driver
 * collects them and prints, per key, the median over the rounds with its
 * min and max, and the ratio of each side's median to the first side's.
 *
 * The re-exec (rather than measuring both sides in one process) is what
 * makes side A honest: a library loaded and disabled is still a library
 * loaded, while a process that never had it is the baseline users compare
 * against.
 */
#ifndef AB_H
#define AB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ab_stats.h"

#define AB_MAX_SIDES 6
#define AB_MAX_KEYS 96
#define AB_MAX_ROUNDS 64

struct ab_side {
	const char *label;      /* short column name: "A", "B", "B-nopregrow" */
	const char *desc;       /* one line for the legend */
	bool preload;           /* LD_PRELOAD the library */
	const char *env[4];     /* extra "NAME=value" settings, NULL-terminated */
	const char *arg;        /* passed to the child as --mode=ARG, or NULL */
};

/* What a child sees of the run. */
struct ab_ctx {
	const char *side;       /* label of the side this child runs */
	const char *mode;       /* the side's arg, or "" */
	bool preload;
	bool smoke;             /* a check that it runs, not a measurement */
	double seconds;         /* time to spend per measured quantity */
	long ncpus;             /* online CPUs */
};

struct ab_bench {
	const char *name;
	const char *what;        /* one line: what the numbers are */
	const char *unit;        /* of the values, for the header */
	const struct ab_side *sides;
	unsigned nsides;
	unsigned rounds;         /* default rounds for a full run */
	double seconds;          /* default seconds per quantity for a full run */
	const char *usage;       /* the program's own --name=value options */
	/* A program option (both in the driver and in the child); 0 or -1. */
	int (*option)(const char *name, const char *value);
	/* Measure, printing results with ab_emit().  Returns the exit code. */
	int (*child)(const struct ab_ctx *ctx);
	/* Optional: extra lines after the table (ab_stat() gives the numbers). */
	void (*summary)(const struct ab_ctx *ctx);
};

int ab_main(int argc, char **argv, const struct ab_bench *b);

/* The program's name in messages (ab_die); ab_main sets it. */
extern const char *ab_prog;

/* In the child: one measured value, and a line of information. */
void ab_emit(const char *key, double value);
void ab_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* In the summary: the statistics of @key on side @side (index). */
struct ab_stat ab_stat(const char *key, unsigned side);

/* In the summary: the values of @key on side @side, in round order; their count. */
unsigned ab_values(const char *key, unsigned side, double out[AB_MAX_ROUNDS]);

/*
 * Where the cost side B adds to an operation goes, as medians [min, max] of
 * per-round differences (rounds paired in order).  @x is the operation's
 * key, @xm the key of the same operation followed by one move done by hand
 * (F_DUPFD + close); side 0 is A, side 1 is B:
 *   whole   = B(x) - A(x)     the library's whole cost (two processes);
 *   kernel  = A(xm) - A(x)    the move's syscalls, without the library;
 *   library = B(x) - B(xm)    the library's own code, same fd numbers.
 * whole.present is false when @x was not measured.
 */
struct ab_cost {
	struct ab_stat whole, kernel, library;
};
struct ab_cost ab_cost_split(const char *x, const char *xm);

/* CLOCK_MONOTONIC in ns. */
uint64_t ab_now_ns(void);

/* fdrange_active() of a preloaded library, or -1 when none is loaded. */
int ab_lib_active(void);

/* The calling thread's range as the library sees it; 0, or -1 when none. */
int ab_lib_range(int *lo, int *hi);

/* The soft RLIMIT_NOFILE, FDSize (the kernel's fd table capacity) and VmRSS in KiB. */
unsigned long ab_nofile(void);
long ab_fdsize(void);
long ab_rss_kib(void);

/*
 * Run @fn on @nthreads new threads, thread i getting (char *)args + i *
 * argsize; returns when all have finished.  Dies on failure.
 */
void ab_threads(unsigned nthreads, void *(*fn)(void *), void *args, size_t argsize);

/* A parsed number from a --name=value option; dies on a bad one. */
unsigned long ab_ulong(const char *name, const char *value, unsigned long min, unsigned long max);

/* Fail the child with a message. */
void ab_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* A bad argument: "PROG: ARG: message" on stderr, exit 2. */
void ab_bad_arg(const char *arg, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* The first line of /proc/loadavg into @buf, or "?". */
void ab_loadavg(char *buf, size_t len);

#endif
