/* SPDX-License-Identifier: MIT */
/*
 * setrlimit, setrlimit64, prlimit and prlimit64 with NULL (and invalid)
 * limit pointers return exactly what glibc returns -- the result of the
 * prlimit64 syscall with the same arguments -- with the same errno, and
 * never crash.  Under libfdrange the wrappers used to read the new limit
 * through the pointer after a successful call: setrlimit(RLIMIT_NOFILE,
 * NULL) succeeds in the kernel (nothing to set, nothing to return) and
 * then crashed in the wrapper (exit 139).
 * usage: rlimit_null_pointers plain|placed
 */
#include "../check.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Through volatile pointers: glibc declares setrlimit's argument nonnull,
 * and the compiler must not reason the calls away. */
static void *volatile null_p;
static void *volatile bad_p = (void *)1;  /* unmapped: the kernel says EFAULT */
#define NUL ((void *)null_p)
#define BAD ((void *)bad_p)

/* What glibc's versions do: the raw syscall, errno from its result. */
static long expected(pid_t pid, int res, const void *new_rl, void *old_rl, int *err)
{
	long r = syscall(SYS_prlimit64, pid, res, new_rl, old_rl);

	*err = r < 0 ? errno : 0;
	return r;
}

#define SENTINEL 12345

static int ncases;

/* Run @call in a child (a crash must be reported, not kill the test),
 * compare its return and errno with @want_ret/@want_errno. */
#define CASE(desc, want_ret, want_errno, call) do { \
	pid_t pid_ = fork(); \
	int st_; \
	ncases++; \
	CHECK(pid_ >= 0, "fork: %s", strerror(errno)); \
	if (pid_ == 0) { \
		long r_; \
		errno = SENTINEL; \
		r_ = (call); \
		if (r_ != (want_ret)) { \
			fprintf(stderr, "%s: returned %ld, wanted %ld\n", desc, r_, (long)(want_ret)); \
			_exit(1); \
		} \
		if (errno != ((want_ret) == 0 ? SENTINEL : (want_errno))) { \
			fprintf(stderr, "%s: errno %d, wanted %d\n", desc, errno, \
				(want_ret) == 0 ? SENTINEL : (want_errno)); \
			_exit(1); \
		} \
		_exit(0); \
	} \
	CHECK(waitpid(pid_, &st_, 0) == pid_, "waitpid: %s", strerror(errno)); \
	CHECK(WIFEXITED(st_) && WEXITSTATUS(st_) == 0, "%s: %s %d", desc, \
	      WIFSIGNALED(st_) ? "killed by signal" : "exit status", \
	      WIFSIGNALED(st_) ? WTERMSIG(st_) : WEXITSTATUS(st_)); \
} while (0)

int main(int argc, char **argv)
{
	static const int resources[] = { RLIMIT_NOFILE, RLIMIT_CORE };
	struct rlimit old;
	struct rlimit64 old64;
	int err;
	long want;

	test_mode(argc, argv);
	alarm(30);
	for (unsigned i = 0; i < sizeof(resources) / sizeof(resources[0]); i++) {
		int res = resources[i];

		want = expected(0, res, NUL, NUL, &err);
		CASE("setrlimit(NULL)", want, err, setrlimit(res, NUL));
		CASE("setrlimit64(NULL)", want, err, setrlimit64(res, NUL));
		CASE("prlimit(0, NULL, NULL)", want, err, prlimit(0, res, NUL, NUL));
		CASE("prlimit64(0, NULL, NULL)", want, err, prlimit64(0, res, NUL, NUL));
		CASE("prlimit(getpid(), NULL, NULL)", want, err, prlimit(getpid(), res, NUL, NUL));
		want = expected(0, res, NUL, &old, &err);
		CASE("prlimit(0, NULL, &old)", want, err, prlimit(0, res, NUL, &old));
		CASE("prlimit64(0, NULL, &old)", want, err, prlimit64(0, res, NUL, &old64));
		want = expected(0, res, BAD, NUL, &err);
		CASE("setrlimit(BAD)", want, err, setrlimit(res, BAD));
		CASE("setrlimit64(BAD)", want, err, setrlimit64(res, BAD));
		CASE("prlimit(0, BAD, NULL)", want, err, prlimit(0, res, BAD, NUL));
		CASE("prlimit64(0, BAD, NULL)", want, err, prlimit64(0, res, BAD, NUL));
		want = expected(0, res, NUL, BAD, &err);
		CASE("prlimit(0, NULL, BAD)", want, err, prlimit(0, res, NUL, BAD));
		CASE("prlimit64(0, NULL, BAD)", want, err, prlimit64(0, res, NUL, BAD));
	}
	/* And in this process too, after all of them: still alive, limit intact. */
	CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0, "getrlimit: %s", strerror(errno));
	errno = SENTINEL;
	CHECK(setrlimit(RLIMIT_NOFILE, NUL) == 0 && errno == SENTINEL,
	      "setrlimit(RLIMIT_NOFILE, NULL) in the parent: errno %d", errno);
	CHECK(prlimit(0, RLIMIT_NOFILE, NUL, NUL) == 0 && errno == SENTINEL,
	      "prlimit(0, RLIMIT_NOFILE, NULL, NULL): errno %d", errno);
	printf("%d cases: same result and errno as the prlimit64 syscall, no crash\n", ncases);
	return 0;
}
