/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the guest tests. The fdcache programs use all of it;
 * the fd-range programs (fdrange_*.c) its includes, die() and the alarm
 * handler, through fdrange.h.
 *
 * Every test watches one descriptor N while something changes what N names.
 * Each file ever installed at N gets an identity: a fresh open() of marker
 * file m (m = ident % NMARK, content "MARK000m"), positioned at offset
 * ident. A lookup reads three things through N: the marker (pread), the
 * identity (lseek SEEK_CUR: the position belongs to the struct file) and
 * the inode (fstat). The mutator publishes a sequence number around every
 * change (odd: changing, even: stable) and, per stable state, what N must
 * name (ident, or 0 for "closed"). A reader that saw the same even sequence
 * before and after its lookups must have seen exactly that state; one that
 * raced with a change must never see a file older than the state it
 * started in (identities only grow). Anything else is a wrong file.
 *
 * All loops are bounded; alarm() bounds every program.
 */
#ifndef FDTEST_COMMON_H
#define FDTEST_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define NMARK 4
#define MAXSTATES 100000

struct shared {
	atomic_ulong seq;		/* 2k: state k stable; 2k+1: leaving state k */
	atomic_int stop;
	atomic_long failures;
	atomic_long checks;		/* lookups checked against a stable state */
	atomic_long raced;		/* lookups that overlapped a change */
	atomic_int readers;		/* reader loops running */
	long ident[MAXSTATES];		/* what N names in state k; 0 = closed */
};

static struct shared *sh;
static ino_t mark_ino[NMARK];
static const char *prog = "fdtest";

static inline void fail(const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: FAIL: %s\n", prog, buf);
	if (sh)
		atomic_fetch_add(&sh->failures, 1);
	else
		exit(1);
}

static inline void die(const char *what)
{
	fprintf(stderr, "%s: FAIL: %s: %s\n", prog, what, strerror(errno));
	exit(1);
}

static inline void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "FAIL: timeout (alarm)\n";
	write(2, m, sizeof(m) - 1);
	_exit(1);
}

static inline void markpath(int m, char *buf, size_t n)
{
	snprintf(buf, n, "/tmp/fdtest/mark%d", m);
}

/* Create the marker files (idempotent) and map the shared state. */
static inline void setup(const char *name, unsigned int timeout_s)
{
	char p[64], content[16];

	prog = name;
	signal(SIGALRM, on_alarm);
	alarm(timeout_s);
	mkdir("/tmp/fdtest", 0755);
	for (int m = 0; m < NMARK; m++) {
		struct stat st;
		int fd;

		markpath(m, p, sizeof(p));
		fd = open(p, O_RDWR | O_CREAT, 0644);
		if (fd < 0)
			die("create marker");
		snprintf(content, sizeof(content), "MARK%04d", m);
		if (pwrite(fd, content, 8, 0) != 8)
			die("write marker");
		if (fstat(fd, &st))
			die("fstat marker");
		mark_ino[m] = st.st_ino;
		close(fd);
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap");
}

/* Open the marker of identity @ident, positioned at @ident; returns fd. */
static inline int open_ident(long ident, int flags)
{
	char p[64];
	int fd;

	markpath(ident % NMARK, p, sizeof(p));
	fd = open(p, O_RDONLY | flags);
	if (fd < 0)
		die("open marker");
	if (lseek(fd, ident, SEEK_SET) != ident)
		die("lseek marker");
	return fd;
}

struct obs {
	int err[3];	/* errno of pread, lseek, fstat (0: ok) */
	int marker;	/* from pread, -1 if unreadable */
	long ident;	/* from lseek */
	int ino_mark;	/* marker index from fstat's inode, -1 if unknown */
};

static inline void observe(int fd, struct obs *o)
{
	char buf[9];
	struct stat st;
	ssize_t n;
	off_t pos;

	memset(o, 0, sizeof(*o));
	o->marker = -1;
	o->ino_mark = -1;
	n = pread(fd, buf, 8, 0);
	if (n < 0)
		o->err[0] = errno;
	else if (n == 8 && !memcmp(buf, "MARK", 4)) {
		buf[8] = 0;
		o->marker = atoi(buf + 4);
	}
	pos = lseek(fd, 0, SEEK_CUR);
	if (pos < 0)
		o->err[1] = errno;
	else
		o->ident = pos;
	if (fstat(fd, &st))
		o->err[2] = errno;
	else
		for (int m = 0; m < NMARK; m++)
			if (st.st_ino == mark_ino[m])
				o->ino_mark = m;
}

/* Does @o match exactly what state @ident says? */
static inline int obs_matches(const struct obs *o, long ident)
{
	if (ident == 0)
		return o->err[0] == EBADF && o->err[1] == EBADF &&
		       o->err[2] == EBADF;
	return !o->err[0] && !o->err[1] && !o->err[2] &&
	       o->ident == ident && o->marker == ident % NMARK &&
	       o->ino_mark == ident % NMARK;
}

static inline void obs_str(const struct obs *o, char *buf, size_t n)
{
	snprintf(buf, n, "pread=%s/marker %d lseek=%s/ident %ld fstat=%s/mark %d",
		 o->err[0] ? strerror(o->err[0]) : "ok", o->marker,
		 o->err[1] ? strerror(o->err[1]) : "ok", o->ident,
		 o->err[2] ? strerror(o->err[2]) : "ok", o->ino_mark);
}

/*
 * One checked lookup of @fd against the published states. Returns 1 if it
 * was checked against a stable state.
 */
static inline int checked_lookup(int fd, const char *who)
{
	unsigned long s1, s2;
	struct obs o;
	char b[200];

	s1 = atomic_load(&sh->seq);
	observe(fd, &o);
	s2 = atomic_load(&sh->seq);
	if (s1 == s2 && !(s1 & 1)) {
		atomic_fetch_add(&sh->checks, 1);
		if (!obs_matches(&o, sh->ident[s1 >> 1])) {
			obs_str(&o, b, sizeof(b));
			fail("%s: stable state %lu expects %s%ld, saw %s", who,
			     s1 >> 1, sh->ident[s1 >> 1] ? "ident " : "closed",
			     sh->ident[s1 >> 1] ? sh->ident[s1 >> 1] : 0L, b);
		}
		return 1;
	}
	atomic_fetch_add(&sh->raced, 1);
	/*
	 * Raced with changes: each of the three lookups must have seen the
	 * file of one of the states from s1's to the one in flight at s2
	 * (published by change_begin() before the change), or EBADF if one
	 * of them was "closed". Nothing older, nothing unknown.
	 */
	{
		unsigned long lo = s1 >> 1, hi = (s2 + 1) >> 1;
		int closed_ok = 0, ident_ok = 0, mark_ok = 0, ino_ok = 0;

		if (hi - lo > 256 || hi >= MAXSTATES)
			return 0;	/* too slow a lookup to say anything */
		for (unsigned long k = lo; k <= hi; k++) {
			long id = sh->ident[k];

			if (!id) {
				closed_ok = 1;
				continue;
			}
			/* position 0: reopened at N by open(), lseek to
			 * its ident still to come */
			ident_ok |= o.ident == id || o.ident == 0;
			mark_ok |= o.marker == id % NMARK;
			ino_ok |= o.ino_mark == id % NMARK;
		}
		if ((o.err[0] ? !(o.err[0] == EBADF && closed_ok) : !mark_ok) ||
		    (o.err[1] ? !(o.err[1] == EBADF && closed_ok) : !ident_ok) ||
		    (o.err[2] ? !(o.err[2] == EBADF && closed_ok) : !ino_ok)) {
			obs_str(&o, b, sizeof(b));
			fail("%s: lookup racing states %lu..%lu (idents %ld..%ld) saw %s",
			     who, lo, hi, sh->ident[lo], sh->ident[hi], b);
		}
	}
	return 0;
}

/* Mutator side: N is about to name @ident (0: closed); seq goes odd. */
static inline void change_begin(long ident)
{
	unsigned long k = (atomic_load(&sh->seq) >> 1) + 1;

	if (k >= MAXSTATES) {
		fprintf(stderr, "%s: too many states\n", prog);
		exit(1);
	}
	sh->ident[k] = ident;
	atomic_fetch_add(&sh->seq, 1);
}

/* Mutator side: N now names @ident (0: closed); publish, then self-check. */
static inline void change_end(int fd, long ident, const char *who)
{
	unsigned long s = atomic_load(&sh->seq);
	unsigned long k = (s >> 1) + 1;
	struct obs o;
	char b[200];

	if (sh->ident[k] != ident) {
		fprintf(stderr, "%s: change_end(%ld) after change_begin(%ld)\n",
			prog, ident, sh->ident[k]);
		exit(1);
	}
	atomic_store(&sh->seq, 2 * k);
	observe(fd, &o);
	if (!obs_matches(&o, ident)) {
		obs_str(&o, b, sizeof(b));
		fail("%s: own lookup after change expects %s%ld, saw %s", who,
		     ident ? "ident " : "closed ", ident, b);
	}
	/* Let the readers look at every state (bounded wait). */
	if (atomic_load(&sh->readers) > 0) {
		long c0 = atomic_load(&sh->checks) + atomic_load(&sh->raced);

		for (long i = 0; i < 100000 && atomic_load(&sh->readers) > 0 &&
		     atomic_load(&sh->checks) + atomic_load(&sh->raced) < c0 + 2; i++)
			sched_yield();
	}
}

/* Start: N names @ident in state 0. */
static inline void state0(long ident)
{
	atomic_store(&sh->seq, 0);
	sh->ident[0] = ident;
}

struct reader_arg {
	int fd;
	long max_iters;
	char name[32];
};

static inline void *reader_thread(void *p)
{
	struct reader_arg *a = p;

	for (long i = 0; i < a->max_iters && !atomic_load(&sh->stop); i++)
		checked_lookup(a->fd, a->name);
	atomic_fetch_sub(&sh->readers, 1);
	return NULL;
}

static inline pthread_t start_reader(int fd, int idx)
{
	static struct reader_arg args[16];
	pthread_t t;

	args[idx].fd = fd;
	args[idx].max_iters = 50000000;
	snprintf(args[idx].name, sizeof(args[idx].name), "reader%d", idx);
	atomic_fetch_add(&sh->readers, 1);
	if (pthread_create(&t, NULL, reader_thread, &args[idx]))
		die("pthread_create");
	return t;
}

static inline int report(const char *what, long iters)
{
	long f = atomic_load(&sh->failures);

	printf("%s %s: %s iterations=%ld checked=%ld raced=%ld failures=%ld\n",
	       prog, what, f ? "FAIL" : "PASS", iters,
	       atomic_load(&sh->checks), atomic_load(&sh->raced), f);
	fflush(stdout);
	return f ? 1 : 0;
}

#endif
