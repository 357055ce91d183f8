// SPDX-License-Identifier: GPL-2.0
/*
 * fdrace MODE [ITERS]: two reader threads look up fd N in a loop while the
 * main thread keeps changing what N names, in the same (shared) table:
 *
 *   close        close(N), then open() a different file, which lands at N
 *   close_range  close_range(N, ~0U, 0), then open() again
 *   dup2         dup2(fresh file, N) over the open N
 *   dup3         dup3(fresh file, N, O_CLOEXEC every other time)
 *   dupfd        close(N), fcntl(fresh, F_DUPFD, N) onto it
 *   uring        io_uring IORING_OP_CLOSE on N, then open() again
 *                (SKIP if io_uring is not available)
 *   mix          all of the above in turn
 *
 * Every fresh file is a new struct file, so closed files are freed and
 * their memory reused while readers may still have them cached.
 */
#include "common.h"
#include <liburing.h>
#include <linux/close_range.h>

static struct io_uring ring;
static int have_ring;

enum op { OP_CLOSE, OP_CLOSE_RANGE, OP_DUP2, OP_DUP3, OP_DUPFD, OP_URING, NOPS };
static const char *opname[] = { "close", "close_range", "dup2", "dup3",
				"dupfd", "uring" };

static long next_ident = 1;

static void uring_close(int fd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;

	if (!sqe)
		die("io_uring_get_sqe");
	io_uring_prep_close(sqe, fd);
	if (io_uring_submit(&ring) != 1)
		die("io_uring_submit");
	if (io_uring_wait_cqe(&ring, &cqe))
		die("io_uring_wait_cqe");
	if (cqe->res != 0) {
		errno = -cqe->res;
		die("IORING_OP_CLOSE");
	}
	io_uring_cqe_seen(&ring, cqe);
}

/* Close N by @how, publish "closed", reopen at N (lowest free fd). */
static void close_reopen(int n, enum op how)
{
	long id = next_ident++;
	int fd;

	change_begin(0);
	if (how == OP_CLOSE)
		close(n);
	else if (how == OP_CLOSE_RANGE)
		syscall(SYS_close_range, n, ~0U, 0);
	else
		uring_close(n);
	change_end(n, 0, opname[how]);

	change_begin(id);
	fd = open_ident(id, 0);
	if (fd != n)
		fail("%s: reopen landed at %d, not %d", opname[how], fd, n);
	change_end(n, id, opname[how]);
}

static void replace(int n, enum op how, long iter)
{
	long id = next_ident++;
	int t = open_ident(id, 0);

	if (how == OP_DUPFD) {
		/* close N (published), then F_DUPFD onto the hole */
		change_begin(0);
		close(n);
		change_end(n, 0, "dupfd-close");
	}
	change_begin(id);
	if (how == OP_DUP2) {
		if (dup2(t, n) != n)
			die("dup2");
	} else if (how == OP_DUP3) {
		if (dup3(t, n, (iter & 1) ? O_CLOEXEC : 0) != n)
			die("dup3");
	} else {
		if (fcntl(t, F_DUPFD, n) != n)
			fail("F_DUPFD did not land on %d", n);
	}
	change_end(n, id, opname[how]);
	close(t);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "mix";
	long iters = argc > 2 ? atol(argv[2]) : 2000;
	pthread_t r[2];
	char name[64];
	int n, nops = 0;
	enum op ops[NOPS];

	snprintf(name, sizeof(name), "fdrace");
	setup("fdrace", 300);
	if (!strcmp(mode, "uring") || !strcmp(mode, "mix")) {
		int e = io_uring_queue_init(8, &ring, 0);

		have_ring = e == 0;
		if (!have_ring && !strcmp(mode, "uring")) {
			printf("fdrace uring: SKIP io_uring unavailable (%s)\n",
			       strerror(-e));
			return 0;
		}
	}
	for (int i = 0; i < NOPS; i++)
		if (!strcmp(mode, "mix") ? (i != OP_URING || have_ring)
					 : !strcmp(mode, opname[i]))
			ops[nops++] = i;
	if (!nops) {
		fprintf(stderr, "fdrace: unknown mode %s\n", mode);
		return 2;
	}
	if (iters > MAXSTATES / 3)
		iters = MAXSTATES / 3;

	n = open_ident(next_ident, 0);	/* lowest free fd: N */
	state0(next_ident++);
	r[0] = start_reader(n, 0);
	r[1] = start_reader(n, 1);
	for (long i = 0; i < iters && !atomic_load(&sh->failures); i++) {
		enum op op = ops[i % nops];

		if (op == OP_CLOSE || op == OP_CLOSE_RANGE || op == OP_URING)
			close_reopen(n, op);
		else
			replace(n, op, i);
	}
	atomic_store(&sh->stop, 1);
	pthread_join(r[0], NULL);
	pthread_join(r[1], NULL);
	return report(mode, iters);
}
