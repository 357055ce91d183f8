/* SPDX-License-Identifier: MIT */
/*
 * Thousands of short-lived threads, a few alive at a time: each takes a
 * range (ranges are reused round-robin once every slot has had a thread),
 * creates fds, closes some and hands one to the main thread before it
 * exits.  The fds handed over outlive their creators and must still reach
 * their objects; a thread exiting while holding a range leaves nothing
 * behind but the fds it handed over.
 */
#include "hard.h"

#define ALIVE 8

struct job {
	pthread_t tid;
	unsigned id;
	struct tok kept;
	int lo, hi;
};

static void *life(void *arg)
{
	struct job *j = arg;
	struct tok tmp;
	unsigned long seed = j->id * 2654435761ul + 1;

	CHECK(tok_create(&tmp, j->id, xorshift(&seed)) == 0, "create: %s", strerror(errno));
	CHECK(tok_create(&j->kept, ((uint64_t)1 << 40) | j->id, xorshift(&seed)) == 0, "create: %s",
	      strerror(errno));
	tok_check_close(&tmp);
	j->lo = j->hi = -1;
	if (api_range) {
		CHECK(api_range(&j->lo, &j->hi) == 0, "no range");
		for (int k = 0; k < 2; k++)
			CHECK(j->kept.fd[k] < 0 || (j->kept.fd[k] >= j->lo && j->kept.fd[k] < j->hi),
			      "thread %u: fd %d outside [%d,%d)", j->id, j->kept.fd[k], j->lo, j->hi);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned nthreads = (unsigned)env_num("HARD_THREADS", 3000);
	struct job *jobs = calloc(nthreads, sizeof(*jobs));
	double t0 = now_s();
	int before;

	hard_init(argc, argv);
	CHECK(jobs, "calloc");
	before = count_fds();
	for (unsigned i = 0; i < nthreads; i++) {
		jobs[i].id = i;
		if (i >= ALIVE) {
			struct job *old = &jobs[i - ALIVE];

			pthread_join(old->tid, NULL);
			/* Handed over by a thread that has exited: still its object. */
			tok_check_close(&old->kept);
		}
		CHECK(pthread_create(&jobs[i].tid, NULL, life, &jobs[i]) == 0, "pthread_create %u", i);
	}
	for (unsigned i = nthreads > ALIVE ? nthreads - ALIVE : 0; i < nthreads; i++) {
		pthread_join(jobs[i].tid, NULL);
		tok_check_close(&jobs[i].kept);
	}
	CHECK(count_fds() == before, "leak: %d fds open, %d before", count_fds(), before);
	printf("%u short-lived threads in %.1f s: ok (%s)\n", nthreads, now_s() - t0, argv[1]);
	free(jobs);
	return 0;
}
