/* SPDX-License-Identifier: MIT */
/*
 * With no settings, an accepted connection goes to the chunks of the
 * thread that will serve it, learned from epoll_ctl(EPOLL_CTL_ADD):
 *
 *   rotation      one thread accepts and deals connection k to worker
 *                 order[k mod 4] (memcached, Netty's boss/worker);
 *   refusing      the same, but every 7th connection is refused (closed by
 *                 the acceptor, never dealt: memcached over its -c); the
 *                 rotation must realign and stay learned;
 *   batched       the same rotation, but each worker registers its
 *                 connections 6 at a time, so the registrations arrive in
 *                 batches, out of accept order (trafficserver's net
 *                 threads do): the rotation's length and order must still
 *                 be learned right;
 *   local         each worker accepts from the shared listener and serves
 *                 what it accepted (h2o, haproxy multi-queue off), with
 *                 FDRANGE_LOCAL=move: into the accepting thread's chunks;
 *   local-kept    the same with FDRANGE_LOCAL=keep, the default (unset
 *                 or keep): on the dup path every
 *                 connection accepted
 *                 after the model settled stays where the kernel numbered
 *                 it, below BASE or above (counted kept: exactly those,
 *                 none of them moved), the model still checked with them;
 *                 those accepted while learning go to the learning pool as
 *                 in local; on the kernel-range path the kernel puts them
 *                 in the accepting thread's range;
 *   burst         the rotation, but the acceptor first accepts BURST
 *                 connections and only then deals them (a client that
 *                 opens all its connections at once): all of them are
 *                 accepted before the first answer, so each must go alone
 *                 on an 8-fd line of the learning pool, none packed;
 *   random        the acceptor deals to a random worker: not predictable,
 *                 the connections must go to the shared pool, not to a
 *                 worker's chunks, and the report must say so.
 *
 * In every mode, plain and placed: every connection carries its data
 * intact and nothing leaks.  Placed: no 8-fd line holds connections of two
 * workers, connections after the learning phase are in their server's
 * chunks (or the pool, for random), and the exit report names the model.
 */
#include "common.h"

#define NWORKERS 4
#define NCONN 96
#define LEARNING_MAX 24   /* connections the model may take to settle */
#define BASE 64           /* FDRANGE_BASE's default: the tests set no other */
#define BURST 48          /* burst mode: accepted before any is dealt (< the pool's 64 lines) */

enum mode { ROTATION, REFUSING, BATCHED, LOCAL, RANDOM, BURST_ };

struct worker {
	pthread_t tid;
	int idx, epfd, queue[2];    /* the acceptor writes fds into queue[1] */
	int conns[NCONN], nconns;
	long conn_seq[NCONN];
};

static struct worker workers[NWORKERS];
static enum mode mode;
static bool kept_mode;  /* local-kept on the dup path */
static bool keep_set;   /* FDRANGE_LOCAL unset or keep */
static int listener;
static const int order[NWORKERS] = { 2, 0, 3, 1 };
static int (*range_of_fd)(int);
static pthread_barrier_t ready;

static void serve(struct worker *w, int fd, long seq)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	char buf[16] = { 0 };

	CHECK(epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll_ctl: %s", strerror(errno));
	/* The client sent its sequence number: it must arrive here intact. */
	CHECK(epoll_wait(w->epfd, &ev, 1, 5000) == 1, "no data on fd %d", fd);
	CHECK(read(fd, buf, sizeof(buf)) == 8 && !memcmp(buf, "conn", 4), "bad data on fd %d", fd);
	CHECK(seq < 0 || atoi(buf + 4) == seq, "fd %d: connection %d, expected %ld", fd,
	      atoi(buf + 4), seq);
	CHECK(epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL) == 0, "epoll_ctl DEL");
	/* Accepted here (local): the client's number stands for its accept's. */
	w->conn_seq[w->nconns] = seq < 0 ? atoi(buf + 4) : seq;
	w->conns[w->nconns] = fd;
	__atomic_store_n(&w->nconns, w->nconns + 1, __ATOMIC_RELEASE);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	CHECK(w->epfd >= 0, "epoll_create1");
	pthread_barrier_wait(&ready);
	for (;;) {
		int fd, msg[2];

		if (mode == LOCAL) {
			fd = accept(listener, NULL, NULL);
			if (fd < 0 && (errno == EINVAL || errno == EBADF))
				break;  /* shut down */
			CHECK(fd >= 0, "accept: %s", strerror(errno));
			serve(w, fd, -1);
			continue;
		}
		/* The fd and the connection's number travel together. */
		CHECK(read(w->queue[0], msg, sizeof(msg)) == sizeof(msg), "queue");
		fd = msg[0];
		if (fd < 0)
			break;
		if (mode == BATCHED) {
			int more[5][2], n = 0;

			while (n < 5) {
				CHECK(read(w->queue[0], more[n], sizeof(more[n])) == sizeof(more[n]), "queue");
				if (more[n][0] < 0)
					break;
				n++;
			}
			serve(w, fd, msg[1]);
			for (int i = 0; i < n; i++)
				serve(w, more[i][0], more[i][1]);
			if (n < 5)
				break;
			continue;
		}
		serve(w, fd, msg[1]);
	}
	return NULL;
}

/* The client: NCONN connections, each sending "connNNNN". */
static void *client_main(void *arg)
{
	static int fds[NCONN];
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	(void)arg;
	CHECK(getsockname(listener, (struct sockaddr *)&a, &len) == 0, "getsockname");
	for (int k = 0; k < NCONN; k++) {
		char msg[9];

		fds[k] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(fds[k] >= 0 && connect(fds[k], (struct sockaddr *)&a, sizeof(a)) == 0,
		      "connect: %s", strerror(errno));
		snprintf(msg, sizeof(msg), "conn%04d", k);
		CHECK(write(fds[k], msg, 8) == 8, "write");
		/* One at a time, as a server's clients arrive, not one burst. */
		usleep(2000);
	}
	usleep(300000);
	for (int k = 0; k < NCONN; k++)
		close(fds[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	pthread_t client;
	int before, in_chunks = 0, kept_conns = 0, refused = 0;
	int kept_above = 0;
	long settled = NCONN;  /* local-kept: connections accepted before the model settled */
	bool kernel_path = false;
	unsigned seed = 1;

	test_mode(argc, argv);
	CHECK(argc >= 3,
	      "usage: %s plain|placed rotation|refusing|batched|local|local-kept|random|burst",
	      argv[0]);
	/* FDRANGE_LOCAL=keep, the default, changes only what a local model does. */
	keep_set = !getenv("FDRANGE_LOCAL") || !strcmp(getenv("FDRANGE_LOCAL"), "keep");
	kept_mode = !strcmp(argv[2], "local-kept");
	CHECK(!kept_mode || keep_set, "local-kept needs FDRANGE_LOCAL unset or keep");
	CHECK(strcmp(argv[2], "local") || !keep_set, "local needs FDRANGE_LOCAL=move");
	mode = !strcmp(argv[2], "rotation") ? ROTATION : !strcmp(argv[2], "refusing") ? REFUSING :
	       !strcmp(argv[2], "batched") ? BATCHED : !strcmp(argv[2], "local") || kept_mode ? LOCAL :
	       !strcmp(argv[2], "burst") ? BURST_ : RANDOM;
	if (placed_mode && kept_mode) {
		/* Where the kernel has the range the setting changes nothing. */
		static char text[16384];

		read_report(text, sizeof(text));
		kernel_path = strstr(text, "placement path: kernel range") != NULL;
		kept_mode = !kernel_path;
	}
	range_of_fd = (int (*)(int))dlsym(RTLD_DEFAULT, "fdrange_range_of_fd");
	before = count_fds();
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(listener >= 0 && bind(listener, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	      listen(listener, 128) == 0, "listen: %s", strerror(errno));
	pthread_barrier_init(&ready, NULL, NWORKERS + 1);
	for (int i = 0; i < NWORKERS; i++) {
		workers[i].idx = i;
		CHECK(pipe(workers[i].queue) == 0, "pipe");
		CHECK(pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]) == 0, "pthread");
	}
	pthread_barrier_wait(&ready);
	CHECK(pthread_create(&client, NULL, client_main, NULL) == 0, "pthread");
	if (mode != LOCAL) {
		/* This thread accepts and deals. */
		int held[BURST];

		for (long k = 0, dealt = 0; k < NCONN; k++) {
			int fd = accept(listener, NULL, NULL), w;

			CHECK(fd >= 0 && fd < (1 << 16), "accept: %s", strerror(errno));
			if (mode == BURST_ && k < BURST) {
				held[k] = fd;
				if (k < BURST - 1)
					continue;
				for (int b = 0; b < BURST; b++) {
					int msg[2] = { held[b], b };

					w = order[dealt++ % NWORKERS];
					CHECK(write(workers[w].queue[1], msg, sizeof(msg)) == sizeof(msg),
					      "deal");
				}
				continue;
			}
			if (mode == REFUSING && k % 7 == 6) {
				char buf[8];

				CHECK(read(fd, buf, 8) == 8, "refused connection's data");
				close(fd);
				refused++;
				continue;
			}
			int msg[2] = { fd, (int)k };

			w = mode == RANDOM ? (int)(rand_r(&seed) % NWORKERS) : order[dealt % NWORKERS];
			dealt++;
			CHECK(write(workers[w].queue[1], msg, sizeof(msg)) == sizeof(msg), "deal");
		}
	}
	/* Every connection served, the workers still alive: a thread's chunks
	 * go back to the pool when it exits. */
	for (int t = 0; t < 1000; t++) {
		int n = refused;

		for (int i = 0; i < NWORKERS; i++)
			n += __atomic_load_n(&workers[i].nconns, __ATOMIC_ACQUIRE);
		if (n == NCONN)
			break;
		usleep(10000);
	}

	if (placed_mode && kept_mode) {
		static char text[16384];
		const char *s;

		read_report(text, sizeof(text));
		s = strstr(text, "model local, settled after ");
		CHECK(s && sscanf(s, "model local, settled after %ld", &settled) == 1 &&
		      settled >= 0 && settled <= LEARNING_MAX,
		      "local-kept: the model did not settle as local within %d connections",
		      LEARNING_MAX);
	}
	{
		int total = 0, shared = 0, line_owner[(1 << 16) / 8];

		memset(line_owner, -1, sizeof(line_owner));
		for (int i = 0; i < NWORKERS; i++) {
			struct worker *w = &workers[i];
			/* The worker made its epoll fd itself: that is its range. */
			int own = placed_mode ? range_of_fd(w->epfd) : -1;

			total += w->nconns;
			for (int c = 0; c < w->nconns && placed_mode; c++) {
				int fd = w->conns[c], *o = &line_owner[fd / 8];
				int r = range_of_fd(fd);

				/* Kept: numbered as plain numbers them, below BASE or
				 * in any hole above it, another worker's line too: no
				 * line or range to check.  Counted against the report
				 * below.  Those before it went to the learning pool. */
				if (kept_mode && w->conn_seq[c] >= settled) {
					kept_conns++;
					kept_above += fd >= BASE;
					continue;
				}

				/* The shared pool of unpredictable connections is packed. */
				if (r < 0 && mode == RANDOM)
					continue;
				/* A connection dealt right after a refusal was predicted for
				 * the next worker: it shares that worker's line until the
				 * rotation realigns (once per refusal). */
				if (*o != -1 && *o != i && mode == REFUSING)
					shared++;
				else
					CHECK(*o == -1 || *o == i,
					      "fd %d: line %d holds connections of workers %d and %d",
					      fd, fd / 8, *o, i);
				*o = i;
				/* Accepted before any answer: the learning pool, one per line. */
				if (mode == BURST_ && w->conn_seq[c] < BURST) {
					CHECK(r < 0 && fd % 8 == 0,
					      "burst connection %ld: fd %d, range %d: not on a line of the learning pool",
					      w->conn_seq[c], fd, r);
					/* Alone: the packed shared pool would have neighbours. */
					for (int n = fd + 1; n < fd + 8; n++)
						CHECK(fcntl(n, F_GETFD) < 0 && errno == EBADF,
						      "burst connection %ld: fd %d shares its line with fd %d",
						      w->conn_seq[c], fd, n);
				}
				if (r < 0)
					continue;  /* the learning pool: one fd per line */
				CHECK(mode != RANDOM, "random hand-off, yet fd %d is in range %d", fd, r);
				/* After a refusal, until the rotation realigns. */
				if (own != r && mode == REFUSING)
					shared++;
				else
					CHECK(own == r, "worker %d: fd %d in range %d, its own is %d", i, fd, r,
					      own);
				in_chunks += own == r;
			}
		}
		CHECK(total + refused == NCONN, "%d served + %d refused of %d", total, refused, NCONN);
		CHECK(shared <= 4 * refused, "%d misplaced connections for %d refusals", shared, refused);
		if (placed_mode && mode != RANDOM)
			/* After a burst the answers are all in at once: the model
			 * must settle within a few connections, not be judged
			 * unpredictable for want of the newest answers. */
			CHECK(in_chunks >= NCONN - refused - kept_conns -
					   (mode == BURST_ ? BURST + 8 : LEARNING_MAX) -
					   (mode == REFUSING ? refused * 2 : 0),
			      "only %d of %d connections in their server's chunks", in_chunks,
			      NCONN - refused);
		if (mode == LOCAL) {
			shutdown(listener, SHUT_RDWR);
		} else {
			for (int i = 0; i < NWORKERS; i++) {
				int stop[2] = { -1, -1 };

				CHECK(write(workers[i].queue[1], stop, sizeof(stop)) == sizeof(stop), "stop");
			}
		}
		for (int i = 0; i < NWORKERS; i++)
			pthread_join(workers[i].tid, NULL);
		pthread_join(client, NULL);
		for (int i = 0; i < NWORKERS; i++) {
			for (int c = 0; c < workers[i].nconns; c++)
				close(workers[i].conns[c]);
			close(workers[i].epfd);
			close(workers[i].queue[0]);
			close(workers[i].queue[1]);
		}
	}
	close(listener);
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("%s: %d connections, %d in their server's chunks, %d refused: ok (%s)\n", argv[2],
	       NCONN, in_chunks, refused, argv[1]);
	if (placed_mode) {
		/* What the library says it learned. */
		const char *want = mode == LOCAL ? "model local" :
				   mode == RANDOM ? "model unpredictable" : "model rotation over 4";
		static char text[16384];

		read_report(text, sizeof(text));
		fputs(text, stdout);
		CHECK(strstr(text, want), "the report does not say '%s'", want);
		if (keep_set) {
			/* The totals row: tid chunks lines threads placed inplace kept ... */
			const char *t = strstr(text, "\ntotal ");
			unsigned long v[7] = { 0 };

			CHECK(t && sscanf(t, "\ntotal %lu %lu %lu %lu %lu %lu %lu", &v[0], &v[1], &v[2],
					  &v[3], &v[4], &v[5], &v[6]) == 7, "no totals row in the report");
			if (kept_mode) {
				/* While the model is learned they are placed: keep
				 * follows the model, not the setting alone.  After it,
				 * every one is kept, above BASE too (a revert to
				 * keeping only those below BASE places most of them). */
				CHECK(v[6] == (unsigned long)(NCONN - settled) &&
				      v[6] == (unsigned long)kept_conns,
				      "%lu connections kept, %d accepted after the model settled after %ld",
				      v[6], kept_conns, settled);
				CHECK(kept_above >= 8,
				      "only %d kept connections above BASE %d: the test does not reach past it",
				      kept_above, BASE);
				CHECK(strstr(text, "predictions ") && !strstr(text, " 0 right,"),
				      "the model was not checked with the kept connections");
			} else {
				/* A hand-off (or the kernel's range): nothing kept. */
				CHECK(v[6] == 0, "%lu connections kept, model not local", v[6]);
			}
			printf("FDRANGE_LOCAL=keep: %lu kept (%d above BASE), %s\n", v[6], kept_above,
			       kernel_path ? "kernel-range path, placed by the kernel" :
			       kept_mode ? "dup path" : "a hand-off, placed");
		}
	}
	return 0;
}
