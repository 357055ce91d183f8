/* SPDX-License-Identifier: MIT */
/*
 * mcspread: memcached load spread at random over thousands of connections,
 * for bench/density-memcached.sh.
 *
 * mcload (bench/ab-memcached's client) keeps one request in flight on
 * every connection, so with thousands of connections thousands wait in
 * the server's queues.  mcspread holds --conns connections open but keeps
 * only --inflight requests outstanding: each new request goes to a
 * connection drawn uniformly at random among the idle ones.  memcached
 * deals its connections out to its workers in turn, so every request
 * lands on a random worker and, there, on a random one of that worker's
 * thousands of fds: the access pattern bench_density measures, in a real
 * server.
 *
 * The ASCII protocol, get and set on keys drawn uniformly from --keys;
 * --preload sets every key once first (on one connection), so gets hit.
 * The latency of a request is from its send() to the end of its answer.
 * Connections are closed with a reset (SO_LINGER 0): rounds of thousands
 * of connections would otherwise leave the loopback's ports in TIME_WAIT.
 *
 * Output, one line of key=value pairs, as mcload's:
 *   ops= seconds= ops_per_s= avg_us= p50_us= p90_us= p99_us= p999_us=
 *   max_us= gets= misses= errors= conns= inflight=
 * Exit 0; 1 when a connection failed; 2 on a bad argument.
 */
#include "ab.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROG "mcspread"
#define MAX_SAMPLES (4u << 20)  /* latencies kept per thread */

static struct {
	unsigned port, conns, inflight, threads, keys, value_size;
	double seconds, get_ratio;
	bool preload;
} o = { .conns = 8192, .inflight = 32, .threads = 1, .keys = 10000, .value_size = 64,
	.seconds = 10, .get_ratio = 0.9 };

struct conn {
	int fd;
	bool busy, get;
	uint64_t sent_ns;
	size_t in_len;
	char *in;
};

struct worker {
	unsigned first, n, slots;       /* its connections, its requests in flight */
	uint64_t rng, ops, gets, misses, errors;
	double *lat;                    /* ns, the first MAX_SAMPLES requests */
	unsigned nlat;
	double sum_ns;
	int failed;
};

static struct conn *conns;
static size_t in_cap;
static char *value;
static uint64_t end_ns;


static unsigned arg_uint(const char *arg, const char *v, unsigned min, unsigned max)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = v && *v && *v != '-' ? strtoul(v, &end, 10) : 0;
	if (!v || !*v || *v == '-' || *end || errno || x < min || x > max)
		ab_bad_arg(arg, "'%s' is not an integer from %u to %u; expected one", v ? v : "", min, max);
	return (unsigned)x;
}

static double arg_double(const char *arg, const char *v, double min, double max)
{
	char *end;
	double x = v ? strtod(v, &end) : 0;

	if (!v || !*v || *end || !(x >= min && x <= max))
		ab_bad_arg(arg, "'%s' is not a number from %g to %g; expected one", v ? v : "", min, max);
	return x;
}

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static int connect_one(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o.port) };
	struct linger reset = { .l_onoff = 1, .l_linger = 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "%s: connect to 127.0.0.1:%u: %s\n", PROG, o.port, strerror(errno));
		exit(1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
	return fd;
}

static void send_request(struct conn *c, bool get, unsigned key)
{
	char buf[128];
	int len = get ? snprintf(buf, sizeof(buf), "get key:%08u\r\n", key) :
		snprintf(buf, sizeof(buf), "set key:%08u 0 0 %u\r\n", key, o.value_size);
	struct iovec iov[3] = { { buf, (size_t)len }, { value, o.value_size }, { "\r\n", 2 } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = get ? 1 : 3 };
	ssize_t want = get ? len : len + (ssize_t)o.value_size + 2;

	c->get = get;
	c->busy = true;
	c->in_len = 0;
	c->sent_ns = ab_now_ns();
	if (sendmsg(c->fd, &msg, MSG_NOSIGNAL) != want) {
		fprintf(stderr, "%s: send: %s\n", PROG, strerror(errno));
		exit(1);
	}
}

/* An answer is complete: END\r\n after a get, one line after a set. */
static bool complete(const struct conn *c)
{
	if (c->in_len < 2 || memcmp(c->in + c->in_len - 2, "\r\n", 2))
		return false;
	if (!c->get)
		return true;
	return c->in_len >= 5 && !memcmp(c->in + c->in_len - 5, "END\r\n", 5);
}

static void preload(void)
{
	struct conn c = { .fd = connect_one(), .in = malloc(in_cap) };

	if (!c.in)
		ab_die("out of memory");
	for (unsigned k = 0; k < o.keys; k++) {
		send_request(&c, false, k);
		while (!complete(&c)) {
			ssize_t r = recv(c.fd, c.in + c.in_len, in_cap - c.in_len, 0);

			if (r <= 0) {
				fprintf(stderr, "%s: preload: %s\n", PROG, r ? strerror(errno) : "closed");
				exit(1);
			}
			c.in_len += (size_t)r;
		}
	}
	close(c.fd);
	free(c.in);
}

/* A random idle connection of @w; with few requests in flight the first draw nearly always is. */
static struct conn *pick(struct worker *w)
{
	for (;;) {
		struct conn *c = &conns[w->first + next_rand(&w->rng) % w->n];

		if (!c->busy)
			return c;
	}
}

static void issue(struct worker *w)
{
	bool get = (double)(next_rand(&w->rng) >> 11) / 9007199254740992.0 < o.get_ratio;

	send_request(pick(w), get, (unsigned)(next_rand(&w->rng) % o.keys));
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct epoll_event ev[64];
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		ab_die("epoll_create1: %s", strerror(errno));
	for (unsigned i = w->first; i < w->first + w->n; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = &conns[i] };

		if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &e))
			ab_die("epoll_ctl: %s", strerror(errno));
	}
	for (unsigned s = 0; s < w->slots; s++)
		issue(w);
	for (;;) {
		uint64_t now = ab_now_ns();
		int n;

		if (now >= end_ns)
			break;
		n = epoll_wait(ep, ev, 64, (int)((end_ns - now) / 1000000 + 1));
		for (int i = 0; i < n; i++) {
			struct conn *c = ev[i].data.ptr;
			ssize_t r = recv(c->fd, c->in + c->in_len, in_cap - c->in_len, 0);
			uint64_t t;

			if (r <= 0) {
				if (r < 0 && errno == EAGAIN)
					continue;
				fprintf(stderr, "%s: connection %d: %s\n", PROG, c->fd,
					r ? strerror(errno) : "closed by the server");
				w->failed = 1;
				goto out;
			}
			c->in_len += (size_t)r;
			if (!complete(c)) {
				if (c->in_len == in_cap) {
					w->errors++;
					c->in_len = 0;
				}
				continue;
			}
			t = ab_now_ns();
			c->busy = false;
			if (t > end_ns)
				continue;
			w->ops++;
			if (c->get) {
				w->gets++;
				w->misses += !strncmp(c->in, "END\r\n", 5);
				w->errors += strncmp(c->in, "VALUE ", 6) && strncmp(c->in, "END\r\n", 5);
			} else {
				w->errors += strncmp(c->in, "STORED\r\n", 8) != 0;
			}
			w->sum_ns += (double)(t - c->sent_ns);
			if (w->nlat < MAX_SAMPLES)
				w->lat[w->nlat++] = (double)(t - c->sent_ns);
			issue(w);
		}
	}
out:
	close(ep);
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: %s --port N [--conns C] [--inflight K] [--threads T] [--seconds S]\n"
		"       [--keys N] [--value-size BYTES] [--get-ratio R] [--preload]\n"
		"memcached load: C connections open, K requests in flight, each sent on a random\n"
		"idle connection.  Defaults: --conns 8192 --inflight 32 --threads 1 --seconds 10\n"
		"--keys 10000 --value-size 64 --get-ratio 0.9.  --seconds 0 with --preload: only\n"
		"set the keys.\n", PROG);
}

int main(int argc, char **argv)
{
	struct worker *ws;
	struct rlimit rl;
	struct ab_stat st;
	double *all, seconds;
	size_t nall = 0;
	uint64_t ops = 0, gets = 0, misses = 0, errors = 0, start;
	double sum = 0;
	int failed = 0;

	ab_prog = PROG;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--preload")) {
			o.preload = true;
			continue;
		} else if (!strcmp(a, "--port")) {
			o.port = arg_uint(a, v, 1, 65535);
		} else if (!strcmp(a, "--conns")) {
			o.conns = arg_uint(a, v, 1, 1000000);
		} else if (!strcmp(a, "--inflight")) {
			o.inflight = arg_uint(a, v, 1, 100000);
		} else if (!strcmp(a, "--threads")) {
			o.threads = arg_uint(a, v, 1, 64);
		} else if (!strcmp(a, "--seconds")) {
			o.seconds = arg_double(a, v, 0, 86400);
		} else if (!strcmp(a, "--keys")) {
			o.keys = arg_uint(a, v, 1, 100000000);
		} else if (!strcmp(a, "--value-size")) {
			o.value_size = arg_uint(a, v, 1, 65536);
		} else if (!strcmp(a, "--get-ratio")) {
			o.get_ratio = arg_double(a, v, 0, 1);
		} else {
			ab_bad_arg(a, "unknown argument; expected one of the options in --help");
		}
		i++;
	}
	if (!o.port)
		ab_bad_arg("--port", "missing; expected the memcached port");
	if (o.inflight > o.conns)
		ab_bad_arg("--inflight", "%u is more than --conns %u; expected at most one request in "
			"flight per connection", o.inflight, o.conns);
	if (o.threads > o.inflight)
		ab_bad_arg("--threads", "%u is more than --inflight %u; expected at least one request "
			"in flight per thread", o.threads, o.inflight);
	/* Thousands of connections: the soft limit up to the hard one. */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if ((rlim_t)o.conns + 16 > rl.rlim_cur)
		ab_bad_arg("--conns", "%u connections need %u fds, RLIMIT_NOFILE hard limit is %lu; "
			"expected fewer, or a higher limit", o.conns, o.conns + 16,
			(unsigned long)rl.rlim_cur);

	in_cap = o.value_size + 256;
	value = malloc(o.value_size);
	if (!value)
		ab_die("out of memory");
	memset(value, 'x', o.value_size);
	if (o.preload)
		preload();
	if (o.seconds == 0)
		return 0;

	conns = calloc(o.conns, sizeof(*conns));
	ws = calloc(o.threads, sizeof(*ws));
	if (!conns || !ws)
		ab_die("out of memory");
	for (unsigned i = 0; i < o.conns; i++) {
		conns[i].fd = connect_one();
		conns[i].in = malloc(in_cap);
		if (!conns[i].in)
			ab_die("out of memory");
	}
	for (unsigned t = 0, first = 0; t < o.threads; t++) {
		ws[t].first = first;
		ws[t].n = o.conns / o.threads + (t < o.conns % o.threads);
		ws[t].slots = o.inflight / o.threads + (t < o.inflight % o.threads);
		ws[t].rng = 0x9e3779b97f4a7c15ull * (t + 1);
		ws[t].lat = malloc(MAX_SAMPLES * sizeof(double));
		if (!ws[t].lat)
			ab_die("out of memory");
		first += ws[t].n;
	}
	start = ab_now_ns();
	end_ns = start + (uint64_t)(o.seconds * 1e9);
	ab_threads(o.threads, run, ws, sizeof(*ws));
	seconds = (double)(end_ns - start) / 1e9;

	all = malloc((size_t)o.threads * MAX_SAMPLES * sizeof(double));
	if (!all)
		ab_die("out of memory");
	for (unsigned t = 0; t < o.threads; t++) {
		memcpy(all + nall, ws[t].lat, ws[t].nlat * sizeof(double));
		nall += ws[t].nlat;
		ops += ws[t].ops;
		gets += ws[t].gets;
		misses += ws[t].misses;
		errors += ws[t].errors;
		sum += ws[t].sum_ns;
		failed |= ws[t].failed;
	}
	/* ab_stats_of sorts them: the percentiles are then positions. */
	st = ab_stats_of(all, (unsigned)nall);
#define PCT(q) (nall ? all[(size_t)((double)(nall - 1) * (q))] / 1e3 : 0)
	printf("ops=%llu seconds=%.3f ops_per_s=%.0f avg_us=%.2f p50_us=%.2f p90_us=%.2f "
	       "p99_us=%.2f p999_us=%.2f max_us=%.2f gets=%llu misses=%llu errors=%llu conns=%u "
	       "inflight=%u\n", (unsigned long long)ops, seconds, (double)ops / seconds,
	       ops ? sum / (double)ops / 1e3 : 0, PCT(0.5), PCT(0.9), PCT(0.99), PCT(0.999),
	       st.present ? st.max / 1e3 : 0, (unsigned long long)gets, (unsigned long long)misses,
	       (unsigned long long)errors, o.conns, o.inflight);
	for (unsigned i = 0; i < o.conns; i++)
		close(conns[i].fd);
	return failed;
}
