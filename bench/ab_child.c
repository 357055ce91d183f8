/* SPDX-License-Identifier: MIT */
/*
 * What a benchmark's child uses to measure and report (see ab.h): clocks,
 * the "@ key value" lines, /proc figures, the library's own view, threads.
 * The driver that runs the children is ab.c.
 */
#include "ab.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

const char *ab_prog = "bench";

uint64_t ab_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ab_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", ab_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void ab_bad_arg(const char *arg, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: %s: ", ab_prog, arg);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

void ab_loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");

	snprintf(buf, len, "?");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		snprintf(buf, len, "?");
	buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

void ab_emit(const char *key, double value)
{
	printf("@ %s %.9g\n", key, value);
}

void ab_note(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

unsigned long ab_ulong(const char *name, const char *value, unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = value ? strtoul(value, &end, 10) : 0;
	if (!value || !*value || *end || errno || v < min || v > max)
		ab_die("--%s=%s: expected an integer from %lu to %lu", name,
		       value ? value : "", min, max);
	return v;
}

unsigned long ab_nofile(void)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_NOFILE, &rl) ? 0 : rl.rlim_cur;
}

static long status_field(const char *field)
{
	/*
	 * A raw openat: through open() the library would place this fd on
	 * side B, growing the very fd table being measured.
	 */
	char buf[4096], *p;
	long n = -1;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = 0;
	p = strstr(buf, field);
	if (p)
		n = strtol(p + strlen(field), NULL, 10);
	return n;
}

long ab_fdsize(void)
{
	return status_field("\nFDSize:");
}

long ab_rss_kib(void)
{
	return status_field("\nVmRSS:");
}

int ab_lib_active(void)
{
	int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "fdrange_active");

	return active ? active() : -1;
}

int ab_lib_range(int *lo, int *hi)
{
	int (*range)(int *, int *) = (int (*)(int *, int *))dlsym(RTLD_DEFAULT,
								    "fdrange_thread_range");

	return range && range(lo, hi) == 0 ? 0 : -1;
}

void ab_threads(unsigned nthreads, void *(*fn)(void *), void *args, size_t argsize)
{
	pthread_t *t = calloc(nthreads, sizeof(*t));
	int err;

	if (!t)
		ab_die("out of memory");
	for (unsigned i = 0; i < nthreads; i++) {
		err = pthread_create(&t[i], NULL, fn, (char *)args + i * argsize);
		if (err)
			ab_die("pthread_create: %s", strerror(err));
	}
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	free(t);
}
