// SPDX-License-Identifier: GPL-2.0
/*
 * fdrange_nolock on|off [ITERS]: the range fast paths (patch 0007: a task
 * allocates in its own range, and any task closes or puts back an fd
 * there, under the group's lock, not file_lock) against everything else
 * that writes the same slots at the same time.  ITERS / 50 rounds (at least 2), each in a fresh process, so that
 * the table starts small and grows while the ranges are in use:
 *
 *   - NR threads with ranges, each in a group of its own (512 fds apart),
 *     allocate (eventfd, pipe, socket; O_CLOEXEC or not) and close at full
 *     speed;
 *   - one thread dup2()s and dup3()s onto slots in those ranges, free or
 *     not, and closes some of them again;
 *   - one thread closes slots in the ranges, close_range()s pieces of them
 *     (and CLOSE_RANGE_CLOEXEC), and flips FD_CLOEXEC;
 *   - one thread grows the table (dup2 to ever higher fds), forks children
 *     that check their copy of the table, and unshare(CLONE_FILES)s once
 *     and checks its own copy; in every fourth round it execs this program
 *     in the middle of it all, and the new image checks what it inherited.
 *
 * After each round, with no other thread running (or in the exec'd image),
 * the table must be consistent: every fd /proc/thread-self/fd lists answers
 * F_GETFD and no other does; the kernel's count of open fds is that number;
 * dup2() onto every free slot of the ranges succeeds (EBUSY would be a bit
 * set with no file); and, with no range, allocation hands out every free
 * number in ascending order up to past the ranges (a lost or stale bit in
 * open_fds or full_fds_bits would skip one).  After all rounds, the files
 * the system has allocated (/proc/sys/fs/file-nr, a per-CPU counter's sum:
 * within 64 per CPU) are back where they were: no file leaked.  The dup2
 * thread also dup2()s from slots of the ranges, and the close thread reads
 * their /proc/self/fdinfo, while their owners close them: both take a
 * reference under file_lock.  Freed twice or used after free is KASAN's to find in the
 * debug boots; every boot fails on a kernel warning in dmesg.
 */
#include "fdrange.h"

#define NR 4		/* threads with ranges */
#define BASE 1024	/* their ranges: BASE + 512 i, 64 fds each */
#define WIDTH 64
#define TOP (BASE + 512 * NR)	/* checked up to here */
#define ROUND_MS 150

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static atomic_int stop;
static int probe = -1;	/* an fd to dup2() from */

static unsigned lo_of(int i) { return BASE + 512 * i; }

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245 + 12345;
	return *s >> 8;
}

static void *ranged(void *arg)
{
	int i = (int)(long)arg, held[48], n = 0, p[2];
	unsigned lo = lo_of(i), s = 7 + i;

	if (prctl(PR_SET_FD_RANGE, lo, lo + WIDTH, 3, 0)) {
		CHECK(0, "PR_SET_FD_RANGE [%u,%u): %s", lo, lo + WIDTH, strerror(errno));
		return NULL;
	}
	while (!atomic_load(&stop)) {
		int fl = rnd(&s) & 1, fd;

		switch (rnd(&s) % 3) {
		case 0:
			fd = eventfd(0, fl ? EFD_CLOEXEC : 0);
			break;
		case 1:
			fd = socket(AF_UNIX, SOCK_DGRAM | (fl ? SOCK_CLOEXEC : 0), 0);
			break;
		default:
			fd = pipe2(p, fl ? O_CLOEXEC : 0) ? -1 : p[0];
			if (fd >= 0 && n < 47)
				held[n++] = p[1];
			else if (fd >= 0)
				close(p[1]);
		}
		CHECK(fd >= 0, "thread %d: allocation failed: %s", i, strerror(errno));
		if (fd >= 0)
			held[n++] = fd;
		if (n >= 47 || (rnd(&s) & 3) == 0)
			/* Others may have closed or replaced them: EBADF is fine. */
			while (n)
				close(held[--n]);
	}
	while (n)
		close(held[--n]);
	return NULL;
}

/* A slot of some ranged thread's range, free or not. */
static unsigned ranged_slot(unsigned *s)
{
	unsigned lo = lo_of(rnd(s) % NR);

	return lo + rnd(s) % WIDTH;
}

static void *dupper(void *arg)
{
	unsigned s = 99;

	(void)arg;
	while (!atomic_load(&stop)) {
		int fd = (int)ranged_slot(&s);
		/* From a slot of the ranges too, which its owner may be
		 * closing at this moment. */
		int from = rnd(&s) & 1 ? probe : (int)ranged_slot(&s);

		if (rnd(&s) & 1)
			dup2(from, fd);
		else
			dup3(from, fd, O_CLOEXEC);
		if (rnd(&s) & 1)
			close(fd);
	}
	return NULL;
}

static void *closer(void *arg)
{
	unsigned s = 5;

	(void)arg;
	while (!atomic_load(&stop)) {
		unsigned fd = ranged_slot(&s);

		switch (rnd(&s) % 9) {
		case 8: {
			/* /proc's fdinfo takes a reference under file_lock. */
			char path[64], buf[256];
			int f;

			snprintf(path, sizeof(path), "/proc/self/fdinfo/%u", fd);
			f = open(path, O_RDONLY | O_CLOEXEC);
			if (f >= 0) {
				if (read(f, buf, sizeof(buf)) < 0)
					buf[0] = 0;
				close(f);
			}
			break;
		}
		case 0:
			syscall(SYS_close_range, fd, fd + 7, 0);
			break;
		case 1:
			syscall(SYS_close_range, fd, fd + 7, CLOSE_RANGE_CLOEXEC);
			break;
		case 2:
		case 3:
			fcntl(fd, F_SETFD, rnd(&s) & 1 ? FD_CLOEXEC : 0);
			break;
		default:
			close(fd);
		}
	}
	return NULL;
}

/*
 * The table as this thread sees it, with nothing else running in it: the
 * listing and F_GETFD agree, the count is right, no free slot of the
 * ranges is busy.  Returns the number of problems.
 */
static int table_is_consistent(const char *when)
{
	static char listed[TOP * 16];
	DIR *d = opendir("/proc/thread-self/fd");
	struct dirent *e;
	int bad = 0, dfd;

	if (!d) {
		CHECK(0, "%s: opendir: %s", when, strerror(errno));
		return 1;
	}
	dfd = dirfd(d);
	memset(listed, 0, sizeof(listed));
	while ((e = readdir(d))) {
		long fd = strtol(e->d_name, NULL, 10);

		if (e->d_name[0] != '.' && fd >= 0 && fd < (long)sizeof(listed))
			listed[fd] = 1;
	}
	closedir(d);
	listed[dfd] = 0;
	for (int fd = 0; fd < (int)sizeof(listed); fd++) {
		int open = fcntl(fd, F_GETFD) >= 0;

		if (open != listed[fd]) {
			CHECK(0, "%s: fd %d: F_GETFD says %s, /proc says %s", when, fd,
			      open ? "open" : "closed", listed[fd] ? "open" : "closed");
			bad++;
		}
	}
	{
		long k = kernel_open_count(), p = proc_open_count();

		if (k != p) {
			CHECK(0, "%s: the kernel counts %ld fds, /proc lists %ld", when, k, p);
			bad++;
		}
	}
	for (int i = 0; i < NR; i++)
		for (unsigned fd = lo_of(i); fd < lo_of(i) + WIDTH; fd++) {
			if (fcntl(fd, F_GETFD) >= 0)
				continue;
			if (dup2(probe, fd) != (int)fd) {
				CHECK(0, "%s: dup2 onto free fd %u: %s", when, fd, strerror(errno));
				bad++;
			} else {
				close(fd);
			}
		}
	return bad;
}

/* With every fd above 2 closed but the probe, and no range: allocation
 * hands out 3, 4, ... in order, past the ranges. */
static void lowest_free_is_exact(const char *when)
{
	static int got[TOP + 64];
	int n = 0;

	prctl(PR_SET_FD_RANGE, 0, 0, 0, 0);
	syscall(SYS_close_range, 3, ~0u, 0);
	probe = eventfd(0, EFD_CLOEXEC);
	CHECK(probe == 3, "%s: first fd after close_range: %d", when, probe);
	for (int want = 4; want < TOP + 64; want++) {
		int fd = eventfd(0, 0);

		got[n++] = fd;
		if (fd != want) {
			CHECK(0, "%s: lowest free is %d, allocation gave %d", when, want, fd);
			break;
		}
	}
	while (n)
		close(got[--n]);
}

static int exec_check(void)
{
	int bad;

	probe = eventfd(0, EFD_CLOEXEC);
	bad = table_is_consistent("after exec");
	lowest_free_is_exact("after exec");
	return bad || failures ? 1 : 0;
}

static void *misc(void *arg)
{
	int exec_round = (int)(long)arg;
	unsigned s = 3, top = 4096;
	int unshared = 0;

	while (!atomic_load(&stop)) {
		unsigned r = rnd(&s) % 16;

		if (r < 4 && top <= 65536) {
			/* The table grows while the ranges are in use. */
			CHECK(dup2(probe, top) == (int)top, "dup2 to %u: %s", top, strerror(errno));
			close(top);
			top *= 2;
		} else if (r < 6) {
			pid_t c = fork();

			if (c == 0)
				_exit(table_is_consistent("forked child") ? 1 : 0);
			int st = 0;

			CHECK(c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "forked child: status %#x", st);
		} else if (r == 6 && !unshared) {
			unshared = 1;
			CHECK(unshare(CLONE_FILES) == 0, "unshare: %s", strerror(errno));
			/* A copy of its own now: the others cannot reach it. */
			table_is_consistent("after unshare");
		} else if (r == 7 && exec_round) {
			execl(self_path, self_path, "exec-check", (char *)NULL);
			CHECK(0, "exec: %s", strerror(errno));
		}
		usleep(500);
	}
	return NULL;
}

/* One round, in a child of its own: its exit status says. */
static int round_in_child(int round)
{
	pthread_t t[NR + 3];
	struct timespec ts = { 0, ROUND_MS * 1000000L };

	probe = eventfd(0, EFD_CLOEXEC);
	atomic_store(&stop, 0);
	for (long i = 0; i < NR; i++)
		pthread_create(&t[i], NULL, ranged, (void *)i);
	pthread_create(&t[NR], NULL, dupper, NULL);
	pthread_create(&t[NR + 1], NULL, closer, NULL);
	pthread_create(&t[NR + 2], NULL, misc, (void *)(long)(round % 4 == 3));
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < NR + 3; i++)
		pthread_join(t[i], NULL);
	table_is_consistent("after the round");
	lowest_free_is_exact("after the round");
	return failures ? 1 : 0;
}

static long files_allocated(void)
{
	long n = -1;
	FILE *f = fopen("/proc/sys/fs/file-nr", "r");

	if (f && fscanf(f, "%ld", &n) != 1)
		n = -1;
	if (f)
		fclose(f);
	return n;
}

/* A count from debugfs's fd_range/stats, or -1. */
static long fast_stat(const char *name)
{
	char key[32];
	long v, n = -1;
	FILE *f = fopen("/sys/kernel/debug/fd_range/stats", "r");

	while (f && fscanf(f, "%31s %ld", key, &v) == 2)
		if (!strcmp(key, name))
			n = v;
	if (f)
		fclose(f);
	return n;
}

/* Booted with fd_range_nolock on (any of kstrtobool()'s spellings; the
 * last one given wins), on a kernel without the fdcache (which turns the
 * fast paths off): what PR_GET_FD_RANGE must report. */
static int booted_nolock(void)
{
	char buf[4096] = "", *p, *v;
	FILE *f = fopen("/proc/cmdline", "r");
	int on = 0;

	if (f && !fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	if (f)
		fclose(f);
	for (p = buf; (p = strstr(p, "fd_range_nolock=")); p = v) {
		v = p + strlen("fd_range_nolock=");
		if (p != buf && p[-1] != ' ')
			continue;
		on = v[0] && strchr("1yYtT", v[0]) ? 1 : (v[0] == 'o' || v[0] == 'O') &&
		     (v[1] == 'n' || v[1] == 'N') ? 1 : 0;
	}
	return on && access("/sys/kernel/debug/fdcache", F_OK);
}

static void nolock(void)
{
	struct rlimit rl = { 1 << 17, 1 << 17 };
	long rounds = iters / 50 < 2 ? 2 : iters / 50, before, after = -1, slack;
	long fast0 = fast_stat("alloc_fast"), cfast0 = fast_stat("close_fast");
	unsigned r6[6] = { 0, 0, 0, 0, 0, 7 };
	int on = booted_nolock();

	/* The sixth value says whether the fast paths run, so that the
	 * library can lay its ranges out for the groups. */
	CHECK(prctl(PR_GET_FD_RANGE, r6, 6, 0, 0) == 0 && r6[5] == (unsigned)on,
	      "PR_GET_FD_RANGE's sixth value %u, booted %s fd_range_nolock=on", r6[5],
	      on ? "with" : "without");

	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "RLIMIT_NOFILE: %s", strerror(errno));
	before = files_allocated();
	for (long r = 0; r < rounds; r++) {
		pid_t c = fork();
		int st = 0;

		if (c == 0)
			_exit(round_in_child((int)r));
		CHECK(c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "round %ld: status %#x", r, st);
	}
	/* fput() of the last files may still be queued (of the rounds, or
	 * of the programs before this one): wait for it, bounded.  The count
	 * is a per-CPU counter's sum, which may be off by its batch per CPU:
	 * a leak of the rounds' thousands of files would be far more. */
	slack = 64 * sysconf(_SC_NPROCESSORS_CONF);
	for (int i = 0; i < 100 && (after = files_allocated()) > before + slack; i++)
		usleep(20000);
	CHECK(after <= before + slack, "files allocated: %ld before the rounds, %ld after", before, after);
	/* A stress test of the fast paths is one only if they ran. */
	if (on) {
		long fast = fast_stat("alloc_fast"), cfast = fast_stat("close_fast");

		CHECK(fast0 >= 0 && fast > fast0 && cfast > cfast0,
		      "fast paths not taken: alloc_fast %ld -> %ld, close_fast %ld -> %ld "
		      "(debugfs fd_range/stats)", fast0, fast, cfast0, cfast);
		printf("%s: fast allocations %ld, fast closes %ld\n", prog, fast - fast0, cfast - cfast0);
	}
	printf("%s: %ld rounds of %d ms\n", prog, rounds, ROUND_MS);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec-check")) {
		prog = "fdrange_nolock";
		return exec_check();
	}
	return range_main(argc, argv, "fdrange_nolock", nolock, NULL);
}
