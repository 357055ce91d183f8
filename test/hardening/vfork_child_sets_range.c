/* SPDX-License-Identifier: MIT */
/*
 * A vfork child runs on its parent thread's memory, the library's words
 * for that thread included, but it is a task of its own: the kernel gave
 * it no fd range.  Here the parent's range is full when the child creates
 * an fd; the library moves the child's fd to the owner's next chunk and
 * sets that chunk as the range: the child's range, recorded in words the
 * parent reads as its own.  Plain and placed, every fd keeps working and
 * nothing leaks.  On the library's kernel-range path the parent's range
 * must then come to its new chunk after one more move, instead of the
 * parent believing it is there already and having every fd moved: at least
 * 3/4 of its next 32 fds are born in its kernel range (a sink into the
 * full first chunk costs one more miss per 16 fds).
 */
#include "hard.h"

#define AFTER 32

/* vfork, in a frame of its own: the child makes one fd through the
 * wrapper and exits; the parent's locals are not in this frame. */
static __attribute__((noinline)) pid_t vfork_child_creates(void)
{
	pid_t pid = vfork();

	if (pid == 0) {
		int fd = eventfd(0, EFD_CLOEXEC);

		if (fd >= 0)
			close(fd);
		_exit(fd >= 0 ? 0 : 1);
	}
	return pid;
}

int main(int argc, char **argv)
{
	unsigned kr[5] = { 0 };
	int before, fds[256], n = 0, after[AFTER], born = 0, status = 0;
	bool kernel;
	pid_t pid;

	hard_init(argc, argv);
	before = count_fds();
	kernel = kernel_range_path();

	/* The parent's first fd sets its range; then the range is filled. */
	fds[n++] = eventfd(0, EFD_CLOEXEC);
	CHECK(fds[0] >= 0, "eventfd: %s", strerror(errno));
	if (kernel) {
		CHECK(kernel_fd_range(kr) && kr[1] > kr[0], "no kernel range after the first fd");
		for (int f = (int)kr[0]; f < (int)kr[1] && n < 256; f++)
			if (fcntl(f, F_GETFD) < 0) {
				fds[n] = eventfd(0, EFD_CLOEXEC);
				CHECK(fds[n] >= (int)kr[0] && fds[n] < (int)kr[1],
				      "fd %d outside the kernel range [%u,%u) while it had room",
				      fds[n], kr[0], kr[1]);
				n++;
			}
	}

	pid = vfork_child_creates();
	CHECK(pid > 0, "vfork: %s", strerror(errno));
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "vfork child failed (status %#x)", status);

	/* The parent goes on: its fds work and, on the kernel path, are born
	 * in the range its thread has when it creates them. */
	for (int i = 0; i < AFTER; i++) {
		uint64_t v = (uint64_t)i + 7;

		CHECK(!kernel || kernel_fd_range(kr), "PR_GET_FD_RANGE");
		after[i] = eventfd(0, EFD_CLOEXEC);
		CHECK(after[i] >= 0, "eventfd after the vfork: %s", strerror(errno));
		CHECK(!placed_mode || in_my_range(after[i]), "fd %d not in the thread's range",
		      after[i]);
		born += kernel && after[i] >= (int)kr[0] && after[i] < (int)kr[1];
		CHECK(write(after[i], &v, sizeof(v)) == sizeof(v) &&
		      read(after[i], &v, sizeof(v)) == sizeof(v) && v == (uint64_t)i + 7,
		      "eventfd %d", after[i]);
	}
	/* One move right after the child, and one each time the range sinks
	 * to the owner's lowest chunk (every 16th fd found in place), which
	 * is full here: about 3 of 32 (krange.c).  Believing the child's
	 * range, the parent would have every fd moved. */
	if (kernel)
		CHECK(born >= AFTER * 3 / 4, "after the vfork child %d of %d fds born in the kernel "
		      "range, want at least %d", born, AFTER, AFTER * 3 / 4);
	for (int i = 0; i < AFTER; i++)
		close(after[i]);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	report_born("vfork child creates an fd: the parent's later fds", kernel, born, AFTER,
		    argv[1]);
	return 0;
}
