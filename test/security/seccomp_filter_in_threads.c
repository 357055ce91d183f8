/* SPDX-License-Identifier: MIT */
/*
 * A threaded program that locks itself into a seccomp filter keeps
 * running under the library: the filter allows fcntl() only for F_GETFD,
 * F_SETFD, F_GETFL and F_SETFL (as Tor's sandbox does) and kills the
 * process on any other command, such as the F_DUPFD of a move.  After the
 * install every thread creates sockets, files and pipes: the process must
 * live, and the new fds keep the kernel's numbers (below BASE here).
 * (Under the library it used to die of SIGSYS at its first socket().)
 *
 *   seccomp_filter_in_threads MODE seccomp  seccomp(2) through syscall()
 *   seccomp_filter_in_threads MODE tsync    the same with TSYNC (all threads
 *                                           at once) while a thread keeps
 *                                           creating fds
 *   seccomp_filter_in_threads MODE prctl    prctl(PR_SET_SECCOMP)
 *   seccomp_filter_in_threads MODE exec     installed, then exec: the new
 *                                           program starts under the filter
 *   seccomp_filter_in_threads MODE groups   the same with 300 supplementary
 *                                           groups, whose Groups: line puts
 *                                           Seccomp: kilobytes down the
 *                                           status file (root only; it used
 *                                           to be read past: SIGSYS)
 *   seccomp_filter_in_threads MODE ctor LIB exec with LIB preloaded after
 *                                           the library: its constructor
 *                                           installs the filter, openat
 *                                           killed too, before ours runs
 *                                           (seccomp_filter_from_constructor.c)
 */
#include "../check.h"
#include "../seccomp_fcntl_filter.h"

#include <grp.h>
#include <sys/socket.h>

#define NT 2

static int stop, made[NT + 1];

static void install(const char *how)
{
	enum fcntl_filter_how h = !strcmp(how, "prctl") ? FILTER_PRCTL :
				  !strcmp(how, "tsync") ? FILTER_TSYNC : FILTER_SECCOMP;

	CHECK(install_fcntl_filter(h, SECCOMP_RET_KILL_PROCESS) == 0, "install (%s): %s", how,
	      strerror(errno));
}

static bool no_open;   /* ctor: openat is killed too */

/* One of each kind; the lowest of them.  The process dies here if a move's
 * F_DUPFD is made under the filter. */
static int create(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int o = no_open ? socket(AF_UNIX, SOCK_DGRAM, 0) : open("/dev/null", O_RDONLY);
	int p[2], low;

	CHECK(s >= 0 && o >= 0 && pipe(p) == 0, "create: %s", strerror(errno));
	low = s < o ? s : o;
	low = low < p[0] ? low : p[0];
	close(s);
	close(o);
	close(p[0]);
	close(p[1]);
	return low;
}

static pthread_barrier_t go;

static void *worker(void *arg)
{
	long i = (long)arg;

	pthread_barrier_wait(&go);   /* the filter is in */
	made[i] = create();
	return NULL;
}

static void *churner(void *arg)
{
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		create();
	return arg;
}

/* After the install (here or before exec): threads create fds. */
static void run_threads(const char *how)
{
	pthread_t t[NT], c;
	long base = 64;

	pthread_barrier_init(&go, NULL, NT + 1);
	for (long i = 0; i < NT; i++)
		CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0, "pthread_create");
	if (!strcmp(how, "tsync"))
		CHECK(pthread_create(&c, NULL, churner, NULL) == 0, "pthread_create");
	if (strcmp(how, "execed") != 0 && strcmp(how, "ctored") != 0)
		install(how);
	pthread_barrier_wait(&go);
	made[NT] = create();
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	if (!strcmp(how, "tsync")) {
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		pthread_join(c, NULL);
	}
	for (int i = 0; i <= NT; i++)
		CHECK(made[i] < base, "after the filter, fd %d was moved (%s)", made[i], how);
}

int main(int argc, char **argv)
{
	const char *how = argc > 2 ? argv[2] : "";

	/* Threaded from the start, as a server (test_mode's idle thread). */
	test_mode(argc, argv);
	if (!strcmp(how, "groups")) {
		static gid_t g[300];

		for (unsigned i = 0; i < sizeof(g) / sizeof(g[0]); i++)
			g[i] = 100000 + i;
		if (setgroups(sizeof(g) / sizeof(g[0]), g) != 0) {
			printf("SKIP: setgroups: %s (root only)\n", strerror(errno));
			return 77;
		}
		how = "exec";
	}
	if (!strcmp(how, "exec")) {
		char *args[] = { argv[0], argv[1], "execed", NULL };

		install("seccomp");
		execv("/proc/self/exe", args);
		/* No /proc (no_proc_filter_still_obeyed.sh): the path we ran as. */
		execv(argv[0], args);
		CHECK(0, "execv: %s", strerror(errno));
	}
	if (!strcmp(how, "ctor")) {
		char *args[] = { argv[0], argv[1], "ctored", NULL }, preload[4096];
		const char *old = getenv("LD_PRELOAD");

		CHECK(argc > 3, "mode ctor needs the library that installs the filter");
		snprintf(preload, sizeof(preload), "%s%s%s", old ? old : "", old ? " " : "", argv[3]);
		setenv("LD_PRELOAD", preload, 1);
		setenv("SECCOMP_FROM_CONSTRUCTOR", "1", 1);
		execv("/proc/self/exe", args);
		CHECK(0, "execv: %s", strerror(errno));
	}
	no_open = !strcmp(how, "ctored");
	CHECK(!strcmp(how, "seccomp") || !strcmp(how, "tsync") || !strcmp(how, "prctl") ||
	      !strcmp(how, "execed") || no_open, "mode seccomp, tsync, prctl, exec, groups or ctor");
	run_threads(how);
	printf("seccomp filter (%s) in a threaded process: it lives, fds keep kernel numbers: "
	       "ok (%s)\n", how, argv[1]);
	return 0;
}
