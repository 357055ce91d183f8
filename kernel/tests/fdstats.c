// SPDX-License-Identifier: GPL-2.0
/*
 * fdstats EXPECT: check the cache's counters in debugfs.
 *
 *   on    /sys/kernel/debug/fdcache/stats says enabled 1; LOOPS lookups of
 *         one fd by a threaded process give at least 90% hits; dup2 over
 *         the fd counts invalidations; writing 0 to fdcache/enabled stops
 *         all counting (0 hits in another LOOPS lookups), writing 1 brings
 *         hits back.
 *   off   enabled 0 (booted with fdcache=off): LOOPS lookups give 0 hits,
 *         0 misses, 0 invalidations.
 *   none  no fdcache in debugfs (unpatched kernel or CONFIG_FDCACHE=n).
 *   print just print the counters.
 */
#include "common.h"

#define STATS "/sys/kernel/debug/fdcache/stats"
#define ENABLED "/sys/kernel/debug/fdcache/enabled"
#define LOOPS 10000

struct st {
	long enabled, hits, misses, stale, invalidations;
};

static int read_stats(struct st *s)
{
	char line[128], key[64];
	long v;
	FILE *f = fopen(STATS, "r");

	if (!f)
		return -1;
	memset(s, 0, sizeof(*s));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", key, &v) == 2) {
			if (!strcmp(key, "enabled"))
				s->enabled = v;
			else if (!strcmp(key, "hits"))
				s->hits = v;
			else if (!strcmp(key, "misses"))
				s->misses = v;
			else if (!strcmp(key, "stale"))
				s->stale = v;
			else if (!strcmp(key, "invalidations"))
				s->invalidations = v;
		}
	fclose(f);
	return 0;
}

static void set_enabled(int on)
{
	int fd = open(ENABLED, O_WRONLY);

	if (fd < 0 || write(fd, on ? "1\n" : "0\n", 2) != 2)
		die("write " ENABLED);
	close(fd);
}

static void *idle_thread(void *p)
{
	(void)p;
	pause();
	return NULL;
}

static void lookups(int fd, long n)
{
	char b[8];

	for (long i = 0; i < n; i++)
		if (pread(fd, b, 8, 0) != 8)
			die("pread");
}

static void show(const char *tag, const struct st *a, const struct st *b)
{
	printf("fdstats %s: enabled=%ld hits+%ld misses+%ld stale+%ld invalidations+%ld\n",
	       tag, b->enabled, b->hits - a->hits, b->misses - a->misses,
	       b->stale - a->stale, b->invalidations - a->invalidations);
}

int main(int argc, char **argv)
{
	const char *expect = argc > 1 ? argv[1] : "print";
	struct st a, b;
	pthread_t t;
	int fd, bad = 0;

	setup("fdstats", 120);
	if (!strcmp(expect, "print")) {
		if (read_stats(&a))
			printf("fdstats: no " STATS "\n");
		else
			printf("fdstats: enabled %ld hits %ld misses %ld stale %ld invalidations %ld\n",
			       a.enabled, a.hits, a.misses, a.stale, a.invalidations);
		return 0;
	}
	if (!strcmp(expect, "none")) {
		if (access(STATS, F_OK) == 0) {
			printf("fdstats none: FAIL " STATS " exists\n");
			return 1;
		}
		printf("fdstats none: PASS no fdcache in debugfs\n");
		return 0;
	}
	/* a second thread makes the table shared: fdget() takes the
	 * reference-counting path, which is where the cache sits */
	if (pthread_create(&t, NULL, idle_thread, NULL))
		die("pthread_create");
	fd = open_ident(1, 0);
	if (read_stats(&a))
		die("read " STATS);
	lookups(fd, LOOPS);
	read_stats(&b);
	show(expect, &a, &b);
	if (!strcmp(expect, "on")) {
		if (b.enabled != 1 || b.hits - a.hits < LOOPS * 9 / 10) {
			printf("fdstats on: FAIL expected >= %d hits\n", LOOPS * 9 / 10);
			bad = 1;
		}
		a = b;
		for (int i = 0; i < 100; i++) {
			int tmp = open_ident(2 + i, 0);

			if (dup2(tmp, fd) != fd)
				die("dup2");
			close(tmp);
			lookups(fd, 1);
		}
		read_stats(&b);
		show("on/dup2x100", &a, &b);
		if (b.invalidations - a.invalidations < 100) {
			printf("fdstats on: FAIL expected >= 100 invalidations\n");
			bad = 1;
		}
		set_enabled(0);
		read_stats(&a);
		lookups(fd, LOOPS);
		read_stats(&b);
		show("on/runtime-off", &a, &b);
		if (b.enabled != 0 || b.hits != a.hits || b.misses != a.misses) {
			printf("fdstats on: FAIL counting while switched off\n");
			bad = 1;
		}
		set_enabled(1);
		read_stats(&a);
		lookups(fd, LOOPS);
		read_stats(&b);
		show("on/runtime-on", &a, &b);
		if (b.enabled != 1 || b.hits - a.hits < LOOPS * 9 / 10) {
			printf("fdstats on: FAIL no hits after switching back on\n");
			bad = 1;
		}
	} else if (!strcmp(expect, "off")) {
		if (b.enabled != 0 || b.hits != a.hits || b.misses != a.misses ||
		    b.invalidations != a.invalidations) {
			printf("fdstats off: FAIL counters moved while off\n");
			bad = 1;
		}
	} else {
		fprintf(stderr, "fdstats: unknown mode %s\n", expect);
		return 2;
	}
	printf("fdstats %s: %s\n", expect, bad ? "FAIL" : "PASS");
	return bad;
}
