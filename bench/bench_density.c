/* SPDX-License-Identifier: MIT */
/*
 * bench_density: what packing a thread's fds together does to the cost of
 * looking them up, independent of the library.
 *
 * With T threads creating fds in turn, the kernel's lowest-free numbering
 * interleaves them: a thread's N fds span N x T / 8 cache lines of the fd
 * table's fd[] array (8 pointers a line), against N / 8 when they are
 * packed together.  A thread that looks up its own fds at random then
 * needs T times as many lines of fd[] in its caches.  Whether that costs
 * anything depends on how much else the thread touches between lookups:
 * nothing (everything stays cached either way), or so much that neither
 * layout's lines survive, or in between, where the packed lines still do.
 *
 * One process, no library.  Per round and per (N, T): T owner threads
 * create N non-blocking eventfds each, taking turns (so lowest-free
 * numbering interleaves them: owner i's k-th fd is B + k*T + i, where B is
 * 64, or the next multiple of 64 above the fds open at start, and
 * placeholders take every free fd below B first).  The same files are then
 * renumbered in place, so the three layouts hold the same struct files and
 * differ only in their numbers:
 *
 *   interleaved  fd B + k*T + i        as the kernel hands them out
 *   packed       fd B + i*N + k        each owner's fds contiguous
 *   control      fd B + (T-1-i)*N + k  packed, owners in reverse order: the
 *                                      same density at other numbers (A/A)
 *
 * For every point (M measuring threads, P KB of pressure) the three
 * layouts are measured in turn, the order rotating from point to point and
 * round to round.  Measuring thread i (owner i, pinned to CPU i mod
 * ncpus) picks one of its own N fds at random, walks P KB of its private
 * memory (a 64-byte stride: one load per cache line, so it evicts P KB
 * of what was cached), reads the clock once to bring the clock's own
 * lines back, and times one fcntl(fd, F_GETFD) with clock_gettime around
 * the syscall alone.  The random sequence is the same for the three
 * layouts of a point and round.
 *
 * Why F_GETFD: of the cheap calls on an fd it does the least beside the
 * lookup.  fcntl() does fdget_raw() (the fd[] slot, then the struct file's
 * reference count, taken and dropped because the process has threads),
 * no LSM work on this kernel, and F_GETFD reads one bit of the
 * close-on-exec bitmap.  An 8-byte read() of an empty non-blocking eventfd
 * also takes the eventfd's spinlock, touches its context and goes through
 * rw_verify_area and the VFS read path: more per-fd memory that is the
 * same in both layouts, diluting the difference being measured.
 *
 * Per round and point the figure is the median lookup, less the median of
 * back-to-back clock pairs.  The lookups' times spread evenly from the
 * fastest to the slowest (how many of the lines a lookup needs were still
 * cached varies from lookup to lookup), so the median moves with the
 * share that missed; and it stands when another tenant slows part of a
 * measurement down, which a mean, even a trimmed one, does not.  Over the
 * rounds: median [min .. max] per layout, packed/interleaved (ratio of
 * the medians, with the per-round ratios' min .. max), in how many rounds
 * packed was cheaper, and the control's control/packed ratio, which says
 * how far two layouts of equal density differ by chance.
 *
 * RLIMIT_NOFILE is raised to the hard limit; an N x T that does not fit
 * under it is skipped, and the table says so.
 */
#include "ab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#define PROG "bench_density"
#define SLACK 8                 /* fds above a layout: renumbering, checks */
#define MAX_LIST 16
#define MAX_ROUNDS 100
#define MAX_MEASURERS 16
#define RING_MIN ((size_t)64 << 20) /* bytes of pressure memory per measuring thread */

enum layout { L_INTERLEAVED, L_PACKED, L_CONTROL, NLAYOUTS };
static const char *const layout_name[NLAYOUTS] = { "interleaved", "packed", "control" };

struct list {
	unsigned n;
	unsigned long v[MAX_LIST];
};

static struct {
	struct list n, threads, measurers, pressure;
	unsigned rounds, lookups;
	unsigned long seed;
	bool smoke, check;
	const char *csv, *rounds_csv;
} opt;

/* One (N, T, M, P) point: a value per layout and round. */
struct point {
	unsigned n, t, m, p_kb;
	double v[NLAYOUTS][MAX_ROUNDS];
};

static struct point *points;
static unsigned npoints;
static long ncpus;
static int base;                /* the first fd of every layout */
static unsigned long fd_limit;

/* ---- arguments: one line naming the argument, exit 2 ---- */


static unsigned long parse_num(const char *arg, const char *s, size_t len, unsigned long min,
			       unsigned long max, const char *accepted)
{
	char buf[32], *end;
	unsigned long v;

	if (!len || len >= sizeof(buf) || s[0] == '-' || s[0] == '+')
		ab_bad_arg(arg, "'%.*s' is not an integer; expected %s", (int)len, s, accepted);
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (*end || errno)
		ab_bad_arg(arg, "'%s' is not an integer; expected %s", buf, accepted);
	if (v < min || v > max)
		ab_bad_arg(arg, "%lu is out of range; expected %s", v, accepted);
	return v;
}

static void parse_list(const char *arg, const char *value, unsigned long min, unsigned long max,
		       struct list *out)
{
	char accepted[128];
	const char *s = value;

	snprintf(accepted, sizeof(accepted),
		 "a comma-separated list of up to %d integers from %lu to %lu", MAX_LIST, min, max);
	out->n = 0;
	for (;;) {
		size_t len = strcspn(s, ",");

		if (out->n == MAX_LIST)
			ab_bad_arg(arg, "more than %d values; expected %s", MAX_LIST, accepted);
		out->v[out->n++] = parse_num(arg, s, len, min, max, accepted);
		if (!s[len])
			break;
		s += len + 1;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--n=LIST] [--threads=LIST] [--measurers=LIST] [--pressure=LIST]\n"
		"       [--rounds=R] [--lookups=K] [--seed=S] [--csv=FILE] [--rounds-csv=FILE]\n"
		"       [--check] [--smoke]\n"
		"Cost of one fd lookup (fcntl F_GETFD) when each thread's fds are packed\n"
		"together against interleaved by lowest-free numbering, in one process,\n"
		"without the library.  LIST is comma-separated.\n"
		"  --n          fds per owner thread (default 1024,2048,4096,8192)\n"
		"  --threads    owner threads T, the interleaving factor (default 2,4)\n"
		"  --measurers  threads that measure at once, owners 0..M-1, M <= T (default 1,2)\n"
		"  --pressure   KB of private memory walked between lookups (default 0,1,2,4,8,16,32,64,256,1024)\n"
		"  --rounds     rounds, the layouts alternating in each (default 15)\n"
		"  --lookups    timed lookups per measuring thread, point, layout and round\n"
		"               (default 2000)\n"
		"  --csv        one line per point: medians, min, max, ratios\n"
		"  --rounds-csv one line per point, layout and round\n"
		"  --check      after every renumbering, check every fd holds its file (slow)\n"
		"  --smoke      a short run that checks it works (--n=64,512 --threads=2\n"
		"               --measurers=1 --pressure=0,16 --rounds=2 --lookups=200 --check);\n"
		"               the numbers mean nothing\n",
		PROG);
}

/* The options that take a value. */
static bool known_option(const char *name)
{
	static const char *const names[] = { "n", "threads", "measurers", "pressure", "rounds",
					     "lookups", "seed", "csv", "rounds-csv" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static void parse_args(int argc, char **argv)
{
	bool set_n = false, set_t = false, set_m = false, set_p = false, set_r = false, set_k = false;
	unsigned long tmin = ULONG_MAX, mmax = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '='), *v = eq ? eq + 1 : NULL;
		char name[32];

		if (strncmp(a, "--", 2))
			ab_bad_arg(a, "unexpected argument; expected options only (see --help)");
		snprintf(name, sizeof(name), "%.*s", (int)(eq ? eq - a - 2 : (long)strlen(a) - 2), a + 2);
		if (!strcmp(name, "help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(name, "smoke") || !strcmp(name, "check")) {
			if (v)
				ab_bad_arg(a, "takes no value; expected --%s", name);
			if (name[0] == 's')
				opt.smoke = true;
			opt.check = true;
			continue;
		}
		if (!known_option(name))
			ab_bad_arg(a, "unknown option; expected one of --n --threads --measurers --pressure "
				"--rounds --lookups --seed --csv --rounds-csv --check --smoke --help");
		if (!v || (!*v && strcmp(name, "csv") && strcmp(name, "rounds-csv")))
			ab_bad_arg(a, "the value is missing; expected --%s=VALUE (see --help)", name);
		if (!strcmp(name, "n")) {
			parse_list(a, v, 8, 1 << 20, &opt.n);
			set_n = true;
		} else if (!strcmp(name, "threads")) {
			parse_list(a, v, 2, 64, &opt.threads);
			set_t = true;
		} else if (!strcmp(name, "measurers")) {
			parse_list(a, v, 1, MAX_MEASURERS, &opt.measurers);
			set_m = true;
		} else if (!strcmp(name, "pressure")) {
			parse_list(a, v, 0, 1 << 20, &opt.pressure);
			set_p = true;
		} else if (!strcmp(name, "rounds")) {
			opt.rounds = (unsigned)parse_num(a, v, strlen(v), 1, MAX_ROUNDS,
							 "an integer from 1 to 100");
			set_r = true;
		} else if (!strcmp(name, "lookups")) {
			opt.lookups = (unsigned)parse_num(a, v, strlen(v), 10, 1000000,
							  "an integer from 10 to 1000000");
			set_k = true;
		} else if (!strcmp(name, "seed")) {
			opt.seed = parse_num(a, v, strlen(v), 0, ULONG_MAX, "a non-negative integer");
		} else if (!strcmp(name, "csv") || !strcmp(name, "rounds-csv")) {
			if (!*v)
				ab_bad_arg(a, "the file name is empty; expected a file to write");
			if (name[0] == 'c')
				opt.csv = v;
			else
				opt.rounds_csv = v;
		}
	}
	static const struct list def_n = { 4, { 1024, 2048, 4096, 8192 } },
		def_t = { 2, { 2, 4 } }, def_m = { 2, { 1, 2 } },
		def_p = { 10, { 0, 1, 2, 4, 8, 16, 32, 64, 256, 1024 } }, smoke_n = { 2, { 64, 512 } },
		smoke_t = { 1, { 2 } }, smoke_m = { 1, { 1 } }, smoke_p = { 2, { 0, 16 } };
	if (!set_n)
		opt.n = opt.smoke ? smoke_n : def_n;
	if (!set_t)
		opt.threads = opt.smoke ? smoke_t : def_t;
	if (!set_m)
		opt.measurers = opt.smoke ? smoke_m : def_m;
	if (!set_p)
		opt.pressure = opt.smoke ? smoke_p : def_p;
	if (!set_r)
		opt.rounds = opt.smoke ? 2 : 15;
	if (!set_k)
		opt.lookups = opt.smoke ? 200 : 2000;
	for (unsigned i = 0; i < opt.threads.n; i++)
		tmin = opt.threads.v[i] < tmin ? opt.threads.v[i] : tmin;
	for (unsigned i = 0; i < opt.measurers.n; i++)
		mmax = opt.measurers.v[i] > mmax ? opt.measurers.v[i] : mmax;
	if (mmax > tmin) {
		char arg[40];

		snprintf(arg, sizeof(arg), "--measurers=...%lu...", mmax);
		ab_bad_arg(arg, "%lu measuring threads but only %lu owner threads (--threads); expected at "
			"most the smallest --threads value", mmax, tmin);
	}
}

/* ---- the fd layouts ---- */

static int fd_of(enum layout l, unsigned owner, unsigned k, unsigned n, unsigned t)
{
	switch (l) {
	case L_INTERLEAVED:
		return base + (int)(k * t + owner);
	case L_PACKED:
		return base + (int)(owner * n + k);
	default:
		return base + (int)((t - 1 - owner) * n + k);
	}
}

/*
 * The first fd of the layouts: 64, or the next multiple of 64 above the
 * fds open at start (a shell may pass some on), so that the layouts start
 * on a cache line of fd[] with nothing open above.
 */
static void choose_base(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int top = 0;

	base = 64;
	if (!d)
		return; /* no /proc: the creation check still catches an fd in the way */
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (fd != dirfd(d) && fd > top)
			top = fd;
	}
	closedir(d);
	if (top >= base)
		base = (top / 64 + 1) * 64;
}

/* Raise RLIMIT_NOFILE to the hard limit (and fs.nr_open); take fds below base. */
static void setup_fds(void)
{
	struct rlimit rl;
	unsigned long nr_open = 1048576;
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");
	int filler;

	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 1048576;
		fclose(f);
	}
	choose_base();
	if (getrlimit(RLIMIT_NOFILE, &rl))
		ab_die("getrlimit: %s", strerror(errno));
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > nr_open)
		rl.rlim_max = nr_open;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		ab_die("setrlimit(RLIMIT_NOFILE, %lu): %s", (unsigned long)rl.rlim_cur, strerror(errno));
	fd_limit = rl.rlim_cur;
	filler = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (filler < 0)
		ab_die("/dev/null: %s", strerror(errno));
	/* Placeholders in every free fd below base: lowest-free then starts there. */
	for (;;) {
		int fd = fcntl(filler, F_DUPFD_CLOEXEC, 0);

		if (fd < 0)
			ab_die("placeholder fd: %s", strerror(errno));
		if (fd >= base) {
			close(fd);
			break;
		}
	}
}

/*
 * Grow the kernel's table once, now, while single-threaded, to hold fd
 * @top: with threads alive a growth waits for an RCU grace period, and
 * every layout should live in the same table.
 */
static void pregrow(unsigned long top)
{
	int fd = top < fd_limit ? fcntl(0, F_DUPFD_CLOEXEC, (int)top) : -1;

	if (fd >= 0)
		close(fd);
}

struct creator {
	unsigned index, n, t;
	sem_t *turn;
	int wrong, got;     /* the first fd not where lowest-free should put it */
};

/* Owner i creates its N fds, one per turn, after owner i-1's. */
static void *create_in_turn(void *arg)
{
	struct creator *c = arg;

	for (unsigned k = 0; k < c->n; k++) {
		int fd;

		while (sem_wait(&c->turn[c->index]) && errno == EINTR)
			;
		fd = eventfd(opt.check ? c->index * c->n + k + 1 : 0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (fd < 0)
			ab_die("eventfd (owner %u, fd %u of %u): %s", c->index, k + 1, c->n,
			       strerror(errno));
		if (fd != fd_of(L_INTERLEAVED, c->index, k, c->n, c->t) && c->wrong < 0) {
			c->wrong = fd_of(L_INTERLEAVED, c->index, k, c->n, c->t);
			c->got = fd;
		}
		sem_post(&c->turn[(c->index + 1) % c->t]);
	}
	return NULL;
}

static void create_layout(unsigned n, unsigned t)
{
	struct creator *c = calloc(t, sizeof(*c));
	sem_t *turn = calloc(t, sizeof(*turn));

	if (!c || !turn)
		ab_die("out of memory");
	for (unsigned i = 0; i < t; i++) {
		sem_init(&turn[i], 0, i == 0);
		c[i] = (struct creator){ .index = i, .n = n, .t = t, .turn = turn, .wrong = -1 };
	}
	ab_threads(t, create_in_turn, c, sizeof(*c));
	for (unsigned i = 0; i < t; i++) {
		if (c[i].wrong >= 0)
			ab_die("owner %u got fd %d where lowest-free numbering should give %d: "
			       "something else holds fds at %d and up", i, c[i].got, c[i].wrong, base);
		sem_destroy(&turn[i]);
	}
	free(c);
	free(turn);
}

static void close_layout(unsigned n, unsigned t)
{
	for (unsigned i = 0; i < n * t; i++)
		close(base + (int)i);
}

/* With --check: every fd of layout @l holds its own eventfd (its count is its id + 1). */
static void check_layout(enum layout l, unsigned n, unsigned t)
{
	for (unsigned i = 0; i < t; i++)
		for (unsigned k = 0; k < n; k++) {
			char path[64], buf[512], *p;
			int fd = fd_of(l, i, k, n, t), in;
			ssize_t len;

			snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
			in = open(path, O_RDONLY | O_CLOEXEC);
			len = in < 0 ? -1 : read(in, buf, sizeof(buf) - 1);
			if (in >= 0)
				close(in);
			if (len <= 0)
				ab_die("%s layout: fd %d: %s", layout_name[l], fd, strerror(errno));
			buf[len] = 0;
			p = strstr(buf, "eventfd-count:");
			if (!p || strtoull(p + 14, NULL, 16) != i * n + k + 1)
				ab_die("%s layout: fd %d does not hold owner %u's fd %u", layout_name[l],
				       fd, i, k);
		}
}

/*
 * Renumber the N x T files from layout @from to layout @to, in place:
 * the permutation's cycles, each with one spare fd above the region.
 * dup3 onto a chosen number is safe here: every fd in the region is ours
 * and no other thread is running.
 */
static void renumber(enum layout from, enum layout to, unsigned n, unsigned t)
{
	unsigned total = n * t, *at = malloc(total * sizeof(*at)), *dest = malloc(total * sizeof(*dest));
	unsigned *cycle = malloc(total * sizeof(*cycle));
	bool *done = calloc(total, sizeof(*done));

	if (!at || !dest || !cycle || !done)
		ab_die("out of memory");
	if (from == to)
		goto out;
	for (unsigned i = 0; i < t; i++)
		for (unsigned k = 0; k < n; k++) {
			unsigned id = i * n + k;

			at[fd_of(from, i, k, n, t) - base] = id;
			dest[id] = (unsigned)(fd_of(to, i, k, n, t) - base);
		}
	for (unsigned p = 0; p < total; p++) {
		unsigned len = 0, q = p;
		int spare;

		if (done[p] || dest[at[p]] == p) {
			done[p] = true;
			continue;
		}
		/* The file at cycle[j] goes to cycle[j + 1], the last one's to cycle[0]. */
		do {
			cycle[len++] = q;
			done[q] = true;
			q = dest[at[q]];
		} while (q != p);
		spare = fcntl(base + (int)cycle[len - 1], F_DUPFD_CLOEXEC, base + (int)total);
		if (spare < 0)
			ab_die("renumbering: F_DUPFD: %s", strerror(errno));
		for (unsigned j = len - 1; j > 0; j--)
			if (dup3(base + (int)cycle[j - 1], base + (int)cycle[j], O_CLOEXEC) < 0)
				ab_die("renumbering: dup3: %s", strerror(errno));
		if (dup3(spare, base + (int)cycle[0], O_CLOEXEC) < 0)
			ab_die("renumbering: dup3: %s", strerror(errno));
		close(spare);
	}
	if (opt.check)
		check_layout(to, n, t);
out:
	free(at);
	free(dest);
	free(cycle);
	free(done);
}

/* ---- measuring ---- */

struct measurer {
	unsigned index, n, t, p_kb, lookups;
	enum layout layout;
	uint64_t seed;
	volatile unsigned char *mem;   /* its own ring of ring_size bytes */
	size_t ring_size, cursor;
	double *ns;                     /* lookups values */
	double result, pair;
	unsigned sink;
};

static uint64_t next_rand(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The next P KB of the ring, one load per 64-byte line.  The ring is far
 * larger than L2, so every walk brings in lines that were not cached,
 * evicting about P KB of what was: a server touching request data between
 * two lookups, not a buffer that stays cached.
 */
static unsigned walk(struct measurer *m)
{
	size_t end = m->cursor + (size_t)m->p_kb * 1024;
	unsigned sum = 0;

	if (end > m->ring_size) {
		m->cursor = 0;
		end = (size_t)m->p_kb * 1024;
	}
	for (size_t off = m->cursor; off < end; off += 64)
		sum += m->mem[off];
	m->cursor = end;
	return sum;
}

static void *measure(void *arg)
{
	struct measurer *m = arg;
	unsigned warm = m->lookups / 4, sink = 0;
	uint64_t rng = m->seed;
	double pair, lookup;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET((int)(m->index % (unsigned)ncpus), &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus); /* best effort */
	/* Every own fd once, then warm-up lookups as measured, untimed. */
	for (unsigned k = 0; k < m->n; k++)
		if (fcntl(fd_of(m->layout, m->index, k, m->n, m->t), F_GETFD) < 0)
			ab_die("fcntl F_GETFD: %s", strerror(errno));
	for (unsigned j = 0; j < warm + m->lookups; j++) {
		int fd = fd_of(m->layout, m->index, (unsigned)(next_rand(&rng) % m->n), m->n, m->t);
		uint64_t t0, t1;
		int r;

		sink += walk(m);
		(void)ab_now_ns();
		t0 = ab_now_ns();
		r = fcntl(fd, F_GETFD);
		t1 = ab_now_ns();
		if (r < 0)
			ab_die("fcntl(%d, F_GETFD): %s", fd, strerror(errno));
		if (j >= warm)
			m->ns[j - warm] = (double)(t1 - t0);
	}
	lookup = ab_stats_of(m->ns, m->lookups).median;
	/* Less what the clock pair costs alone. */
	for (unsigned j = 0; j < m->lookups; j++) {
		uint64_t t0 = ab_now_ns();

		m->ns[j] = (double)(ab_now_ns() - t0);
	}
	pair = ab_stats_of(m->ns, m->lookups).median;
	m->result = lookup - pair;
	m->pair = pair;
	m->sink = sink;
	return NULL;
}

/* ---- the run ---- */

static double pair_sum;
static unsigned long pair_count;

static double measure_point(const struct point *pt, enum layout l, unsigned round, unsigned index,
			    struct measurer *ms)
{
	double v = 0;

	for (unsigned i = 0; i < pt->m; i++) {
		ms[i].index = i;
		ms[i].n = pt->n;
		ms[i].t = pt->t;
		ms[i].p_kb = pt->p_kb;
		ms[i].lookups = opt.lookups;
		ms[i].layout = l;
		/* The same random fds for the three layouts of a point and round. */
		ms[i].seed = opt.seed * 0x100000001b3ull + round * 1000003ull + index * 7919ull + i;
	}
	ab_threads(pt->m, measure, ms, sizeof(*ms));
	for (unsigned i = 0; i < pt->m; i++) {
		v += ms[i].result / pt->m;
		pair_sum += ms[i].pair;
		pair_count++;
	}
	return v;
}

static struct ab_stat stat_of(const double *v, unsigned n)
{
	double tmp[MAX_ROUNDS];

	memcpy(tmp, v, n * sizeof(*v));
	return ab_stats_of(tmp, n);
}

/* Per round: a[r] / b[r]. */
static struct ab_stat ratio_of(const double *a, const double *b, unsigned n)
{
	double r[MAX_ROUNDS];

	for (unsigned i = 0; i < n; i++)
		r[i] = a[i] / b[i];
	return ab_stats_of(r, n);
}

struct summary {
	struct ab_stat l[NLAYOUTS], ratio, aa;
	double ratio_med, aa_med;
	unsigned cheaper;
};

static struct summary summarize(const struct point *pt)
{
	struct summary s;

	for (unsigned l = 0; l < NLAYOUTS; l++)
		s.l[l] = stat_of(pt->v[l], opt.rounds);
	s.ratio = ratio_of(pt->v[L_PACKED], pt->v[L_INTERLEAVED], opt.rounds);
	s.aa = ratio_of(pt->v[L_CONTROL], pt->v[L_PACKED], opt.rounds);
	s.ratio_med = s.l[L_PACKED].median / s.l[L_INTERLEAVED].median;
	s.aa_med = s.l[L_CONTROL].median / s.l[L_PACKED].median;
	s.cheaper = 0;
	for (unsigned r = 0; r < opt.rounds; r++)
		s.cheaper += pt->v[L_PACKED][r] < pt->v[L_INTERLEAVED][r];
	return s;
}

static void print_table(void)
{
	char cell[NLAYOUTS][48], ratio[48], aa[48];

	printf("%6s %3s %3s %6s %11s  %-22s %-22s %-21s %7s  %-21s\n", "N", "T", "M", "P_KB",
	       "lines i/p", "interleaved ns", "packed ns", "packed/interleaved", "cheaper",
	       "control/packed (A/A)");
	for (unsigned i = 0; i < npoints; i++) {
		const struct point *pt = &points[i];
		struct summary s = summarize(pt);
		char lines[24];

		for (unsigned l = 0; l < NLAYOUTS; l++)
			snprintf(cell[l], sizeof(cell[l]), "%.0f [%.0f .. %.0f]", s.l[l].median,
				 s.l[l].min, s.l[l].max);
		snprintf(ratio, sizeof(ratio), "%.3f [%.2f .. %.2f]", s.ratio_med, s.ratio.min,
			 s.ratio.max);
		snprintf(aa, sizeof(aa), "%.3f [%.2f .. %.2f]", s.aa_med, s.aa.min, s.aa.max);
		snprintf(lines, sizeof(lines), "%u/%u", (pt->n * pt->t + 7) / 8, (pt->n + 7) / 8);
		printf("%6u %3u %3u %6u %11s  %-22s %-22s %-21s %4u/%-2u  %-21s\n", pt->n, pt->t,
		       pt->m, pt->p_kb, lines, cell[L_INTERLEAVED], cell[L_PACKED], ratio, s.cheaper,
		       opt.rounds, aa);
	}
}

static FILE *open_out(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		ab_die("%s: %s", path, strerror(errno));
	return f;
}

static void close_out(FILE *f, const char *path)
{
	if (ferror(f) | fclose(f))
		ab_die("%s: write error", path);
}

static void write_csv(const char *path)
{
	FILE *f = open_out(path);

	fprintf(f, "n,threads,measurers,pressure_kb,rounds,lines_interleaved,lines_packed");
	for (unsigned l = 0; l < NLAYOUTS; l++)
		fprintf(f, ",%s_ns,%s_min,%s_max", layout_name[l], layout_name[l], layout_name[l]);
	fprintf(f, ",ratio,ratio_min,ratio_max,packed_cheaper,aa_ratio,aa_min,aa_max,saved_ns\n");
	for (unsigned i = 0; i < npoints; i++) {
		const struct point *pt = &points[i];
		struct summary s = summarize(pt);

		fprintf(f, "%u,%u,%u,%u,%u,%u,%u", pt->n, pt->t, pt->m, pt->p_kb, opt.rounds,
			(pt->n * pt->t + 7) / 8, (pt->n + 7) / 8);
		for (unsigned l = 0; l < NLAYOUTS; l++)
			fprintf(f, ",%.1f,%.1f,%.1f", s.l[l].median, s.l[l].min, s.l[l].max);
		fprintf(f, ",%.4f,%.4f,%.4f,%u,%.4f,%.4f,%.4f,%.1f\n", s.ratio_med, s.ratio.min,
			s.ratio.max, s.cheaper, s.aa_med, s.aa.min, s.aa.max,
			s.l[L_INTERLEAVED].median - s.l[L_PACKED].median);
	}
	close_out(f, path);
}

static void write_rounds_csv(const char *path)
{
	FILE *f = open_out(path);

	fprintf(f, "n,threads,measurers,pressure_kb,round,layout,ns\n");
	for (unsigned i = 0; i < npoints; i++)
		for (unsigned r = 0; r < opt.rounds; r++)
			for (unsigned l = 0; l < NLAYOUTS; l++)
				fprintf(f, "%u,%u,%u,%u,%u,%s,%.1f\n", points[i].n, points[i].t,
					points[i].m, points[i].p_kb, r + 1, layout_name[l],
					points[i].v[l][r]);
	close_out(f, path);
}

static void header(void)
{
	struct utsname u;
	char load[64];
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

	ab_loadavg(load, sizeof(load));
	uname(&u);
	printf("== %s%s: one fd lookup (fcntl F_GETFD) on a thread's own fds, packed against "
	       "interleaved by lowest-free numbering; no library\n", PROG,
	       opt.smoke ? " [smoke: checks that it runs, numbers mean nothing]" : "");
	printf("machine: %ld online CPUs, Linux %s %s, load average %s, L2 %ld KiB per core, "
	       "RLIMIT_NOFILE %lu (raised to the hard limit)\n", ncpus, u.release, u.machine, load,
	       l2 > 0 ? l2 / 1024 : -1, fd_limit);
	printf("layouts from fd %d; rounds: %u, layouts interleaved, packed, control alternating; %u timed lookups per "
	       "measuring thread, point, layout and round; seed %lu\n", base, opt.rounds, opt.lookups,
	       opt.seed);
}

int main(int argc, char **argv)
{
	unsigned long max_total = 0, kb_max = 0, mmax = 0;
	size_t ring;
	struct measurer ms[MAX_MEASURERS];
	uint64_t started;
	unsigned index;

	ab_prog = PROG;
	parse_args(argc, argv);
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus < 1)
		ncpus = 1;
	setup_fds();
	header();
	points = calloc((size_t)opt.n.n * opt.threads.n * opt.measurers.n * opt.pressure.n,
			sizeof(*points));
	if (!points)
		ab_die("out of memory");
	for (unsigned it = 0; it < opt.threads.n; it++)
		for (unsigned in = 0; in < opt.n.n; in++) {
			unsigned long n = opt.n.v[in], t = opt.threads.v[it], need = base + n * t + SLACK;

			if (need > fd_limit) {
				printf("skipped: N=%lu x T=%lu needs %lu fds, RLIMIT_NOFILE hard limit "
				       "is %lu\n", n, t, need, fd_limit);
				continue;
			}
			max_total = n * t > max_total ? n * t : max_total;
			for (unsigned im = 0; im < opt.measurers.n; im++)
				for (unsigned ip = 0; ip < opt.pressure.n; ip++)
					points[npoints++] = (struct point){
						.n = (unsigned)n, .t = (unsigned)t,
						.m = (unsigned)opt.measurers.v[im],
						.p_kb = (unsigned)opt.pressure.v[ip] };
		}
	if (!npoints)
		ab_die("no N x T fits under RLIMIT_NOFILE %lu", fd_limit);
	pregrow(base + max_total + SLACK - 1);
	for (unsigned i = 0; i < opt.pressure.n; i++)
		kb_max = opt.pressure.v[i] > kb_max ? opt.pressure.v[i] : kb_max;
	for (unsigned i = 0; i < opt.measurers.n; i++)
		mmax = opt.measurers.v[i] > mmax ? opt.measurers.v[i] : mmax;
	/* Each measuring thread's ring: 64 MiB, or 16 walks of the largest P. */
	ring = (size_t)kb_max * 1024 * 16 > RING_MIN ? (size_t)kb_max * 1024 * 16 : RING_MIN;
	for (unsigned i = 0; i < mmax; i++) {
		unsigned char *mem = malloc(ring);

		ms[i].ns = calloc(opt.lookups, sizeof(double));
		if (!mem || !ms[i].ns)
			ab_die("out of memory");
		memset(mem, (int)i + 1, ring);
		ms[i].mem = mem;
		ms[i].ring_size = ring;
		ms[i].cursor = 0;
	}
	fflush(stdout);

	started = ab_now_ns();
	for (unsigned r = 0; r < opt.rounds; r++) {
		index = 0;
		for (unsigned first = 0; first < npoints;) {
			unsigned n = points[first].n, t = points[first].t, last = first;
			enum layout cur = L_INTERLEAVED;

			while (last < npoints && points[last].n == n && points[last].t == t)
				last++;
			create_layout(n, t);
			if (opt.check)
				check_layout(L_INTERLEAVED, n, t);
			for (unsigned i = first; i < last; i++, index++)
				for (unsigned j = 0; j < NLAYOUTS; j++) {
					enum layout l = (enum layout)((r + index + j) % NLAYOUTS);

					renumber(cur, l, n, t);
					cur = l;
					points[i].v[l][r] = measure_point(&points[i], l, r, index, ms);
				}
			close_layout(n, t);
			first = last;
		}
		if (!opt.smoke)
			fprintf(stderr, "%s: round %u of %u done, %.0f s\n", PROG, r + 1, opt.rounds,
				(double)(ab_now_ns() - started) / 1e9);
	}
	print_table();
	printf("ns: per lookup, a round's median lookup less the clock "
	       "pair (median %.0f ns, subtracted); median [min .. max] over the rounds\n",
	       pair_count ? pair_sum / (double)pair_count : 0.0);
	printf("lines i/p: fd[] cache lines a measuring thread's fds span, interleaved / packed; "
	       "packed/interleaved: ratio of the medians [min .. max of the rounds' ratios]; "
	       "cheaper: rounds where packed was cheaper; control/packed: two layouts of equal "
	       "density (A/A)\n");
	printf("(%u rounds, %u points, %.0f s)\n", opt.rounds, npoints,
	       (double)(ab_now_ns() - started) / 1e9);
	if (opt.csv)
		write_csv(opt.csv);
	if (opt.rounds_csv)
		write_rounds_csv(opt.rounds_csv);
	for (unsigned i = 0; i < mmax; i++) {
		free((void *)ms[i].mem);
		free(ms[i].ns);
	}
	free(points);
	return 0;
}
