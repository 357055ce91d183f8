/* SPDX-License-Identifier: MIT */
/*
 * mcload: a closed-loop memcached load client that times every request,
 * for bench/ab-memcached.
 *
 * memcaslap, which the runner used before, prints an average latency and
 * (with -S) a log2 histogram: a p99 read off a log2 histogram can be off
 * by a factor of two, too coarse to compare two servers.  mcload keeps a
 * log-linear histogram instead (64 sub-buckets per power of two, so a
 * percentile is within 0.8% of the true value) and prints the percentiles.
 *
 * Like memcaslap in its default mode, each connection has one request in
 * flight: it sends, waits for the whole answer, and sends the next one
 * (a closed loop: throughput = connections / latency).  The latency of a
 * request is the time from its send() to the end of its answer, as the
 * client sees it.  The ASCII protocol, get and set on keys drawn uniformly
 * from --keys keys; with --preload every key is set once first, so gets
 * hit.  Requests still in flight when the time is up are not counted.
 *
 * --churn N closes a connection after its N-th answer and opens a new one
 * in its place (0, the default: never), so the server accepts and closes
 * connections at 1/N of the request rate, as under clients that make a few
 * requests per connection (bench/manycore.sh).  The connect is blocking
 * and not part of any request's latency, but it is part of the time, so of
 * the throughput.  --key-prefix P makes the keys "P000...0123" instead of
 * "k000...0123", same length: bench/coherence/guest/acceptd.c, the
 * accept-per-thread server, takes only keys "key" followed by digits.
 *
 * Output, one line of key=value pairs:
 *   ops= seconds= ops_per_s= avg_us= p50_us= p90_us= p99_us= p999_us=
 *   max_us= gets= misses= errors=
 * and with --churn, reconnects= (new connections made during the run).
 * errors counts answers other than VALUE/END/STORED (a full cache answers
 * SERVER_ERROR to sets).  Exit 0; 1 when a connection failed or was
 * closed by the server (the line is printed all the same); 2 on a bad
 * argument.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SUB_BITS 6
#define SUB (1u << SUB_BITS)
#define NBUCKETS ((64 - SUB_BITS) * SUB)

struct opts {
	struct in_addr host;
	unsigned port, threads, conns, value_size, key_size, keys, churn;
	double seconds, get_ratio;
	bool preload;
	const char *key_prefix;
	size_t prefix_len;
};

struct conn {
	int fd;
	bool get, dead;
	unsigned served;        /* answers on this connection, for --churn */
	uint64_t sent_ns, rng;
	char *buf;              /* the get request, then the set request */
	size_t get_len, set_len;
	char *req;              /* the one being sent: into buf */
	size_t req_len, req_off;
	char *in;
	size_t in_len, in_cap;
};

struct worker {
	const struct opts *o;
	unsigned first, n;      /* its connections: first .. first + n - 1 */
	uint64_t hist[NBUCKETS];
	uint64_t ops, gets, misses, errors, lost, sum_ns, max_ns, reconnects;
	char err[160];
};

static pthread_barrier_t start_barrier;
static uint64_t start_ns, end_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void bad_arg(const char *name, const char *value, const char *accepted)
{
	fprintf(stderr, "mcload: %s: '%s' is not valid; expected %s\n", name, value, accepted);
	exit(2);
}

static unsigned arg_uint(const char *name, const char *v, unsigned min, unsigned max)
{
	char *end, buf[64];
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (!*v || *end || errno || n < min || n > max || *v == '-') {
		snprintf(buf, sizeof(buf), "an integer from %u to %u", min, max);
		bad_arg(name, v, buf);
	}
	return (unsigned)n;
}

static double arg_double(const char *name, const char *v, double min, double max)
{
	char *end, buf[64];
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (!*v || *end || errno || !(d >= min && d <= max)) {
		snprintf(buf, sizeof(buf), "a number from %g to %g", min, max);
		bad_arg(name, v, buf);
	}
	return d;
}

/* Bucket of a latency: exact below 128 ns, then 64 steps per power of two. */
static unsigned bucket_of(uint64_t ns)
{
	unsigned e, shift;

	if (ns < 2 * SUB)
		return (unsigned)ns;
	e = 63u - (unsigned)__builtin_clzll(ns);
	shift = e - SUB_BITS;
	return (shift + 1) * SUB + (unsigned)((ns >> shift) & (SUB - 1));
}

/* The middle of bucket @b, in ns. */
static double bucket_mid(unsigned b)
{
	unsigned shift;
	double lo;

	if (b < 2 * SUB)
		return b;
	shift = b / SUB - 1;
	lo = (double)((uint64_t)(SUB + b % SUB) << shift);
	return lo + ((double)((uint64_t)1 << shift) - 1) / 2;
}

static double percentile_us(const uint64_t *h, uint64_t total, double q)
{
	uint64_t rank = (uint64_t)(q * (double)total + 0.999999), seen = 0;

	if (!total)
		return 0;
	if (rank < 1)
		rank = 1;
	for (unsigned b = 0; b < NBUCKETS; b++) {
		seen += h[b];
		if (seen >= rank)
			return bucket_mid(b) / 1000;
	}
	return 0;
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static void put_key(char *at, const struct opts *o, unsigned key)
{
	char num[16];
	int len = snprintf(num, sizeof(num), "%u", key);

	/* "k000...0123" (--key-prefix, then zeros): every key exactly --key-size bytes long. */
	memset(at, '0', o->key_size);
	memcpy(at, o->key_prefix, o->prefix_len);
	memcpy(at + o->key_size - (unsigned)len, num, (size_t)len);
}

static int connect_to(const struct opts *o)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port),
				 .sin_addr = o->host };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Is the answer in @c complete?  1: yes (counted), 0: not yet, -1: the
 * connection is unusable.
 */
static int answer_done(struct worker *w, struct conn *c)
{
	char *eol = memmem(c->in, c->in_len, "\r\n", 2);
	size_t line = eol ? (size_t)(eol - c->in) + 2 : 0;

	if (!eol)
		return c->in_len >= c->in_cap ? -1 : 0;
	if (c->get && !strncmp(c->in, "VALUE ", 6)) {
		unsigned long bytes;
		char *sp = memrchr(c->in, ' ', line - 2);

		if (!sp)
			return -1;
		bytes = strtoul(sp + 1, NULL, 10);
		if (c->in_len < line + bytes + 2 + 5)
			return c->in_len >= c->in_cap ? -1 : 0;
		return memcmp(c->in + line + bytes, "\r\nEND\r\n", 7) ? -1 : 1;
	}
	if (c->get && !strncmp(c->in, "END\r\n", 5))
		w->misses++;
	else if (!(!c->get && !strncmp(c->in, "STORED\r\n", 8)))
		w->errors++;
	return 1;
}

/* Start the next request on @c: its key, get or set, and the clock. */
static void send_next(struct worker *w, struct conn *c)
{
	const struct opts *o = w->o;
	unsigned key = (unsigned)(next_rand(&c->rng) % o->keys);

	c->get = (double)(next_rand(&c->rng) >> 11) / 9007199254740992.0 < o->get_ratio;
	c->req = c->get ? c->buf : c->buf + c->get_len;
	c->req_len = c->get ? c->get_len : c->set_len;
	c->req_off = 0;
	c->in_len = 0;
	put_key(c->req + 4, o, key);
	c->sent_ns = now_ns();
}

/* Write what is left of the request; false when the connection broke. */
static bool flush_req(struct conn *c)
{
	while (c->req_off < c->req_len) {
		ssize_t n = send(c->fd, c->req + c->req_off, c->req_len - c->req_off, MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		c->req_off += (size_t)n;
	}
	return true;
}

/* Connect and lay out the two requests; false (with w->err) on failure. */
static bool conn_open(struct worker *w, struct conn *c, unsigned idx)
{
	const struct opts *o = w->o;
	char hdr[32];
	size_t hlen = (size_t)snprintf(hdr, sizeof(hdr), " 0 0 %u\r\n", o->value_size);

	c->get_len = 4 + o->key_size + 2;
	c->set_len = 4 + o->key_size + hlen + o->value_size + 2;
	c->rng = 0x9e3779b97f4a7c15ull * (idx + 1);
	c->in_cap = o->value_size + 512;
	c->in = malloc(c->in_cap);
	/* get KEY\r\n, then set KEY 0 0 V\r\nvvv...\r\n; keys are written in place. */
	c->buf = malloc(c->get_len + c->set_len);
	c->fd = -1;
	if (!c->in || !c->buf) {
		snprintf(w->err, sizeof(w->err), "out of memory");
		return false;
	}
	memcpy(c->buf, "get ", 4);
	memcpy(c->buf + 4 + o->key_size, "\r\n", 2);
	memcpy(c->buf + c->get_len, "set ", 4);
	memcpy(c->buf + c->get_len + 4 + o->key_size, hdr, hlen);
	memset(c->buf + c->get_len + 4 + o->key_size + hlen, 'v', o->value_size);
	memcpy(c->buf + c->get_len + c->set_len - 2, "\r\n", 2);
	c->fd = connect_to(o);
	if (c->fd < 0) {
		snprintf(w->err, sizeof(w->err), "connection %u to port %u: %s", idx + 1, o->port,
			 strerror(errno));
		return false;
	}
	return true;
}

/*
 * --churn: replace @c's connection by a new one; false (with w->err) when
 * the new one cannot be made.  The close also takes the fd out of @ep.
 */
static bool conn_renew(struct worker *w, int ep, struct conn *c)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = c };

	close(c->fd);
	c->served = 0;
	c->fd = connect_to(w->o);
	if (c->fd < 0 || fcntl(c->fd, F_SETFL, O_NONBLOCK) || epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e)) {
		snprintf(w->err, sizeof(w->err), "reconnecting to port %u: %s", w->o->port,
			 strerror(errno));
		return false;
	}
	w->reconnects++;
	return true;
}

/* Read what the server sent; 1: the answer is complete, 0: not yet, -1: broken. */
static int conn_read(struct worker *w, struct conn *c)
{
	for (;;) {
		ssize_t r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
		int done;

		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r <= 0)
			return -1;
		c->in_len += (size_t)r;
		done = answer_done(w, c);
		if (done)
			return done;
	}
}

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	struct conn *cs = calloc(w->n, sizeof(*cs));
	struct epoll_event ev[64];
	int ep = epoll_create1(EPOLL_CLOEXEC);
	bool ok = cs && ep >= 0;

	if (!ok)
		snprintf(w->err, sizeof(w->err), "out of memory or fds");
	for (unsigned i = 0; ok && i < w->n; i++) {
		struct epoll_event e = { .events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = &cs[i] };

		ok = conn_open(w, &cs[i], w->first + i) &&
		     fcntl(cs[i].fd, F_SETFL, O_NONBLOCK) == 0 &&
		     epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &e) == 0;
	}
	if (!ok) {
		w->lost++;
		if (!w->err[0])
			snprintf(w->err, sizeof(w->err), "setting up a connection: %s", strerror(errno));
	}
	/* Every thread has its connections up before the clock starts (first
	 * wait); the main thread sets the clock between the two. */
	pthread_barrier_wait(&start_barrier);
	pthread_barrier_wait(&start_barrier);
	for (unsigned i = 0; ok && i < w->n; i++) {
		send_next(w, &cs[i]);
		if (!flush_req(&cs[i]))
			cs[i].dead = true, w->lost++;
	}
	while (ok) {
		uint64_t t = now_ns();
		int n;

		if (t >= end_ns)
			break;
		n = epoll_wait(ep, ev, 64, (int)((end_ns - t) / 1000000 + 1));
		for (int k = 0; k < n; k++) {
			struct conn *c = ev[k].data.ptr;
			int done;

			if (c->dead)
				continue;
			done = c->req_off < c->req_len && !flush_req(c) ? -1 : conn_read(w, c);
			if (done == 1) {
				uint64_t t1 = now_ns(), lat = t1 - c->sent_ns;

				if (t1 > end_ns)
					continue;
				w->ops++;
				w->gets += c->get;
				w->sum_ns += lat;
				if (lat > w->max_ns)
					w->max_ns = lat;
				w->hist[bucket_of(lat)]++;
				if (w->o->churn && ++c->served >= w->o->churn &&
				    !conn_renew(w, ep, c)) {
					w->lost++;
					c->dead = true;
					continue;
				}
				send_next(w, c);
				done = flush_req(c) ? 0 : -1;
			}
			if (done < 0) {
				if (now_ns() < end_ns) {
					snprintf(w->err, sizeof(w->err),
						 "connection %u: closed by the server or an unreadable answer",
						 w->first + (unsigned)(c - cs) + 1);
					w->lost++;
				}
				c->dead = true;
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
			}
		}
	}
	for (unsigned i = 0; cs && i < w->n; i++) {
		if (cs[i].fd >= 0)
			close(cs[i].fd);
		free(cs[i].in);
		free(cs[i].buf);
	}
	free(cs);
	if (ep >= 0)
		close(ep);
	return NULL;
}

/* Set every key once, one request after another, from one connection. */
static int preload(const struct opts *o)
{
	struct worker w = { .o = o };
	struct conn c = { 0 };
	int rc = 0;

	if (!conn_open(&w, &c, 0)) {
		fprintf(stderr, "mcload: preload: %s\n", w.err);
		rc = 1;
	}
	for (unsigned k = 0; !rc && k < o->keys; k++) {
		int done = 0;

		c.req = c.buf + c.get_len;
		c.req_len = c.set_len;
		c.req_off = 0;
		c.in_len = 0;
		c.get = false;
		put_key(c.req + 4, o, k);
		while (c.req_off < c.req_len && !rc) {
			ssize_t n = send(c.fd, c.req + c.req_off, c.req_len - c.req_off, MSG_NOSIGNAL);

			if (n <= 0)
				rc = 1;
			else
				c.req_off += (size_t)n;
		}
		while (!rc && !done) {
			ssize_t r = recv(c.fd, c.in + c.in_len, c.in_cap - c.in_len, 0);

			if (r <= 0)
				rc = 1;
			else
				c.in_len += (size_t)r, done = answer_done(&w, &c);
		}
		if (done < 0)
			rc = 1;
	}
	if (rc == 0 && w.errors) {
		fprintf(stderr, "mcload: preload: %" PRIu64 " of %u sets refused "
			"(is memcached -m large enough for --keys x --value-size?)\n", w.errors, o->keys);
		rc = 1;
	} else if (rc && c.fd >= 0) {
		fprintf(stderr, "mcload: preload: the connection to port %u broke\n", o->port);
	}
	if (c.fd >= 0)
		close(c.fd);
	free(c.in);
	free(c.buf);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: mcload --port N [--host IPV4] [--threads T] [--conns C] [--seconds S]\n"
		"              [--get-ratio R] [--value-size B] [--key-size B] [--keys N] [--preload]\n"
		"              [--churn N] [--key-prefix P]\n"
		"Closed-loop memcached load (one request in flight per connection), every\n"
		"request timed; prints one line: ops= seconds= ops_per_s= avg_us= p50_us=\n"
		"p90_us= p99_us= p999_us= max_us= gets= misses= errors=.\n"
		"Defaults: --host 127.0.0.1 --threads 2 --conns 32 --seconds 10 --get-ratio 0.9\n"
		"--value-size 1024 --key-size 64 --keys 10000.  --preload sets every key once\n"
		"first; --seconds 0 with it only preloads.  --churn N: a new connection after\n"
		"every N answers on one (default 0: never; prints reconnects= too).\n"
		"--key-prefix P: keys P000...0123 (default k; 1 to 16 letters and digits).\n");
}

int main(int argc, char **argv)
{
	struct opts o = { .threads = 2, .conns = 32, .seconds = 10, .get_ratio = 0.9,
			  .value_size = 1024, .key_size = 64, .keys = 10000, .key_prefix = "k" };
	struct worker *ws;
	pthread_t *tids;
	uint64_t hist[NBUCKETS] = { 0 }, ops = 0, gets = 0, misses = 0, errors = 0, lost = 0;
	uint64_t sum = 0, max = 0, reconnects = 0;
	const char *err = NULL;
	char knum[16];
	double secs;
	bool have_port = false;

	inet_pton(AF_INET, "127.0.0.1", &o.host);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--preload")) {
			o.preload = true;
			continue;
		}
		if (strncmp(a, "--", 2)) {
			fprintf(stderr, "mcload: '%s': unexpected argument; expected options only (see --help)\n", a);
			return 2;
		}
		if (!v) {
			fprintf(stderr, "mcload: %s: the value is missing, or it is no option; expected %s VALUE "
				"(see --help)\n", a, a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--port"))
			o.port = arg_uint(a, v, 1, 65535), have_port = true;
		else if (!strcmp(a, "--host")) {
			if (inet_pton(AF_INET, v, &o.host) != 1)
				bad_arg(a, v, "an IPv4 address such as 127.0.0.1");
		} else if (!strcmp(a, "--threads"))
			o.threads = arg_uint(a, v, 1, 256);
		else if (!strcmp(a, "--conns"))
			o.conns = arg_uint(a, v, 1, 100000);
		else if (!strcmp(a, "--seconds"))
			o.seconds = arg_double(a, v, 0, 86400);
		else if (!strcmp(a, "--get-ratio"))
			o.get_ratio = arg_double(a, v, 0, 1);
		else if (!strcmp(a, "--value-size"))
			o.value_size = arg_uint(a, v, 1, 1048576);
		else if (!strcmp(a, "--key-size"))
			o.key_size = arg_uint(a, v, 10, 250);
		else if (!strcmp(a, "--keys"))
			o.keys = arg_uint(a, v, 1, 100000000);
		else if (!strcmp(a, "--churn"))
			o.churn = arg_uint(a, v, 0, 1000000000);
		else if (!strcmp(a, "--key-prefix")) {
			size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");

			if (!*v || v[n] || n > 16)
				bad_arg(a, v, "1 to 16 letters and digits");
			o.key_prefix = v;
		} else {
			fprintf(stderr, "mcload: %s: unknown option; expected one of the options in --help\n", a);
			return 2;
		}
	}
	if (!have_port) {
		fprintf(stderr, "mcload: --port: missing; expected the memcached port, 1 to 65535\n");
		return 2;
	}
	o.prefix_len = strlen(o.key_prefix);
	if (o.prefix_len + (size_t)snprintf(knum, sizeof(knum), "%u", o.keys - 1) > o.key_size) {
		fprintf(stderr, "mcload: --key-size: %u cannot hold the prefix '%s' and key %u; expected "
			"at least %zu\n", o.key_size, o.key_prefix, o.keys - 1, o.prefix_len + strlen(knum));
		return 2;
	}
	if (o.conns < o.threads) {
		fprintf(stderr, "mcload: --conns: %u is fewer than --threads %u; expected at least one "
			"connection per thread\n", o.conns, o.threads);
		return 2;
	}
	if (o.preload && preload(&o))
		return 1;
	if (o.seconds == 0)
		return o.preload ? 0 : (fprintf(stderr, "mcload: --seconds: 0 without --preload; "
						"expected more than 0\n"), 2);
	ws = calloc(o.threads, sizeof(*ws));
	tids = calloc(o.threads, sizeof(*tids));
	if (!ws || !tids || pthread_barrier_init(&start_barrier, NULL, o.threads + 1)) {
		fprintf(stderr, "mcload: out of memory\n");
		return 1;
	}
	for (unsigned t = 0, first = 0; t < o.threads; t++) {
		ws[t].o = &o;
		ws[t].first = first;
		ws[t].n = o.conns / o.threads + (t < o.conns % o.threads);
		first += ws[t].n;
		if (pthread_create(&tids[t], NULL, run_worker, &ws[t])) {
			fprintf(stderr, "mcload: cannot start thread %u\n", t + 1);
			return 1;
		}
	}
	pthread_barrier_wait(&start_barrier);
	start_ns = now_ns();
	end_ns = start_ns + (uint64_t)(o.seconds * 1e9);
	pthread_barrier_wait(&start_barrier);
	for (unsigned t = 0; t < o.threads; t++) {
		pthread_join(tids[t], NULL);
		for (unsigned b = 0; b < NBUCKETS; b++)
			hist[b] += ws[t].hist[b];
		ops += ws[t].ops;
		gets += ws[t].gets;
		misses += ws[t].misses;
		errors += ws[t].errors;
		lost += ws[t].lost;
		reconnects += ws[t].reconnects;
		sum += ws[t].sum_ns;
		if (ws[t].max_ns > max)
			max = ws[t].max_ns;
		if (ws[t].err[0])
			err = ws[t].err;
	}
	secs = (double)(now_ns() < end_ns ? now_ns() - start_ns : end_ns - start_ns) / 1e9;
	printf("ops=%" PRIu64 " seconds=%.3f ops_per_s=%.1f avg_us=%.1f p50_us=%.1f p90_us=%.1f "
	       "p99_us=%.1f p999_us=%.1f max_us=%.1f gets=%" PRIu64 " misses=%" PRIu64
	       " errors=%" PRIu64,
	       ops, secs, secs > 0 ? (double)ops / secs : 0, ops ? (double)sum / (double)ops / 1000 : 0,
	       percentile_us(hist, ops, 0.50), percentile_us(hist, ops, 0.90),
	       percentile_us(hist, ops, 0.99), percentile_us(hist, ops, 0.999), (double)max / 1000,
	       gets, misses, errors);
	if (o.churn)
		printf(" reconnects=%" PRIu64, reconnects);
	putchar('\n');
	free(ws);
	free(tids);
	if (lost) {
		fprintf(stderr, "mcload: %" PRIu64 " connection(s) failed; last: %s\n", lost, err);
		return 1;
	}
	if (!ops) {
		fprintf(stderr, "mcload: no request completed in %.3g s\n", o.seconds);
		return 1;
	}
	return 0;
}
