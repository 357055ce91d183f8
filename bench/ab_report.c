/* SPDX-License-Identifier: MIT */
/*
 * ab-report DIR [--json]: the table, the verdict and the JSON of a
 * bench/ab-server run (fdrange ab, and its preset fdrange-ab-memcached),
 * from what the runner left in DIR:
 *
 *   DIR/run.conf    key=value lines: the run's settings and the machine
 *   DIR/rounds.csv  one line per server and round, from the load tool;
 *                   "nan" for a latency the tool does not report
 *
 * Writes DIR/summary.txt (the text it prints), DIR/result.json (the schema
 * is in fdrange-ab(1)), and for the runner's gnuplot script
 * DIR/chart.dat and DIR/chart-vars.gp.  Prints the text, or with --json
 * the JSON.  The statistics and the decision rule are in ab_stats.h.
 * Exit 0; 1 when DIR cannot be read or holds no complete round; 2 on a
 * bad argument; 3 when there is no verdict: the comparison is void (B
 * placed no fd: the locality line of run.conf says placed=0, inplace=0
 * and kept=0, so A and B both ran plain; or its placement is unknown), or
 * the throughput is
 * outside the A/A band in fewer rounds than a difference needs
 * (AB_MIN_ROUNDS: "no verdict: ...").
 */
#include "ab_stats.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 1000
#define MAX_CONF 60
#define SCHEMA_MC "fdrange-ab-memcached/1"
#define SCHEMA "fdrange-ab/1"
#define EXIT_VOID 3             /* no verdict: void, or too few rounds */

enum { SA, SA2, SB, NSERVERS };
enum { M_OPS, M_AVG, M_P50, M_P90, M_P99, M_P999, M_MAX, M_ERRORS, NMETRICS };

static const char *const server_key[NSERVERS] = { "A", "A2", "B" };
static const char *const metric_key[NMETRICS] = { "ops_per_s", "avg_us", "p50_us", "p90_us",
						   "p99_us", "p999_us", "max_us", "errors" };
static const char csv_header[] =
	"round,position,server,ops_per_s,avg_us,p50_us,p90_us,p99_us,p999_us,max_us,errors";

struct round {
	unsigned have;                  /* bit per server */
	unsigned position[NSERVERS];    /* 1..3: when in the round it ran */
	double v[NSERVERS][NMETRICS];
};

static struct {
	char key[40], value[512];
} conf[MAX_CONF];
static unsigned nconf;
static struct round rounds[MAX_ROUNDS + 1];
static unsigned nrounds, incomplete;    /* complete rounds 1..nrounds */
static const char *dir;
static bool have[NMETRICS];             /* reported in every complete round */
static unsigned lat = M_P99;            /* the latency compared: p99, else the mean */

static void fail(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void fail(int rc, const char *fmt, ...)
{
	va_list ap;

	fputs("ab-report: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(rc);
}

static const char *conf_get(const char *key)
{
	for (unsigned i = 0; i < nconf; i++)
		if (!strcmp(conf[i].key, key))
			return conf[i].value;
	return "";
}

static long conf_long(const char *key)
{
	return strtol(conf_get(key), NULL, 10);
}

static FILE *open_in(const char *name, const char *mode)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, mode);
	if (!f)
		fail(1, "%s: %s", path, strerror(errno));
	return f;
}

static void read_conf(void)
{
	FILE *f = open_in("run.conf", "r");
	char line[600];

	while (fgets(line, sizeof(line), f) && nconf < MAX_CONF) {
		char *eq = strchr(line, '=');

		line[strcspn(line, "\n")] = 0;
		if (!eq || eq == line || eq - line >= (long)sizeof(conf[0].key))
			continue;
		memcpy(conf[nconf].key, line, (size_t)(eq - line));
		conf[nconf].key[eq - line] = 0;
		snprintf(conf[nconf].value, sizeof(conf[0].value), "%s", eq + 1);
		nconf++;
	}
	fclose(f);
}

static void read_csv(void)
{
	FILE *f = open_in("rounds.csv", "r");
	char line[1024], server[8];
	unsigned lineno = 0, maxround = 0;

	while (fgets(line, sizeof(line), f)) {
		struct round *r;
		double v[NMETRICS];
		unsigned round, pos, s;
		int used = 0;

		lineno++;
		line[strcspn(line, "\r\n")] = 0;
		if (lineno == 1) {
			if (strcmp(line, csv_header))
				fail(1, "%s/rounds.csv: line 1: expected the header '%s'", dir, csv_header);
			continue;
		}
		if (sscanf(line, "%u,%u,%7[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf%n", &round, &pos, server,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &used) != 11 ||
		    line[used] || round < 1 || round > MAX_ROUNDS || pos < 1 || pos > NSERVERS ||
		    isinf(v[0]))
			fail(1, "%s/rounds.csv: line %u: expected round (1-%d),position (1-3),server,"
			     "and 8 numbers, got '%s'", dir, lineno, MAX_ROUNDS, line);
		for (s = 0; s < NSERVERS && strcmp(server, server_key[s]); s++)
			;
		if (s == NSERVERS)
			fail(1, "%s/rounds.csv: line %u: server '%s': expected A, A2 or B", dir, lineno,
			     server);
		/* Throughput always; a latency the load tool does not give is nan. */
		for (unsigned m = 0; m < NMETRICS; m++)
			if (!(v[m] > 0 || (m == M_ERRORS && v[m] == 0) || (m != M_OPS && isnan(v[m]))))
				fail(1, "%s/rounds.csv: line %u: %s %g: expected a number above 0%s", dir,
				     lineno, metric_key[m], v[m], m == M_OPS ? "" : " or nan");
		r = &rounds[round];
		if (r->have & (1u << s))
			fail(1, "%s/rounds.csv: line %u: round %u of %s twice", dir, lineno, round, server);
		r->have |= 1u << s;
		r->position[s] = pos;
		memcpy(r->v[s], v, sizeof(v));
		if (round > maxround)
			maxround = round;
	}
	fclose(f);
	/* An interrupted run leaves its last round incomplete: analyse the rest. */
	for (nrounds = 0; nrounds < maxround && rounds[nrounds + 1].have == 7; nrounds++)
		;
	incomplete = maxround - nrounds;
	if (!nrounds)
		fail(1, "%s/rounds.csv: no complete round (each needs A, A2 and B)", dir);
	for (unsigned m = 0; m < NMETRICS; m++) {
		have[m] = true;
		for (unsigned i = 1; i <= nrounds; i++)
			for (unsigned s = 0; s < NSERVERS; s++)
				if (isnan(rounds[i].v[s][m]))
					have[m] = false;
	}
	if (!have[M_P99])
		lat = have[M_AVG] ? M_AVG : NMETRICS;
}

/* The memcached preset's run, or an old run of it without a preset line. */
static bool is_memcached(void)
{
	return !strcmp(conf_get("preset"), "memcached") || !conf_get("server_cmd")[0];
}

static const char *server_name(void)
{
	return conf_get("name")[0] ? conf_get("name") : "memcached";
}

static const char *lat_label(void)
{
	return lat == M_P99 ? "p99" : "mean latency";
}

/*
 * Whether B's placement makes the comparison void: 0 not void, VOID_PLACED_NONE
 * when B placed no fd (@buf: the reason), VOID_UNKNOWN when its placement
 * could not be read (@buf: what the locality line says instead).  Unknown
 * is void too: a B that maybe ran plain must not read as a verdict on the
 * library.  An fd the library found in place (the kernel-range path) is
 * its work too, and so are connections kept under model local
 * (FDRANGE_LOCAL=keep, the default, leaves those of a server whose threads
 * serve what they accept where the kernel numbered them): such a B is what
 * the library does for that server, not plain (KEPT_ONLY, @buf: how many).
 */
enum { VOID_PLACED_NONE = 1, VOID_UNKNOWN, KEPT_ONLY = -1 };

/* The value of @key in a line of space-separated key=value words, or NULL. */
static const char *kv_find(const char *line, const char *key)
{
	size_t n = strlen(key);

	for (const char *at = strstr(line, key); at; at = strstr(at + 1, key))
		if ((at == line || at[-1] == ' ') && at[n] == '=')
			return at + n + 1;
	return NULL;
}

/* The locality line's number @key: 1 read, 0 absent (an older fdrange
 * stat), -1 not a number. */
static int loc_u64(const char *loc, const char *key, unsigned long *v)
{
	const char *at = kv_find(loc, key);
	char *end;

	*v = 0;
	if (!at)
		return 0;
	errno = 0;
	*v = strtoul(at, &end, 10);
	return end == at || errno || (*end && *end != ' ') || *at == '-' ? -1 : 1;
}

static int void_reason(char *buf, size_t len)
{
	const char *loc = conf_get("locality"), *why;
	unsigned long placed, inplace, kept;
	int rc;

	if (strcmp(conf_get("aa"), "1") == 0)
		return 0;
	rc = loc_u64(loc, "placed", &placed);
	if (rc == 0) {
		size_t n = strlen(loc);

		/* ab-server writes a failure as "(...)": the verdict adds its own. */
		if (n >= 2 && loc[0] == '(' && loc[n - 1] == ')')
			snprintf(buf, len, "%.*s", (int)(n - 2), loc + 1);
		else
			snprintf(buf, len, "%s", n ? loc : "no locality line in run.conf");
		return VOID_UNKNOWN;
	}
	if (rc < 0 || loc_u64(loc, "inplace", &inplace) < 0 || loc_u64(loc, "kept", &kept) < 0) {
		snprintf(buf, len, "%s", loc);
		return VOID_UNKNOWN;
	}
	if (placed != 0 || inplace != 0)
		return 0;
	/* Only a local model's: fds 0-2 are kept by rule in any process. */
	if (kept != 0 && strstr(loc, " model=local ")) {
		snprintf(buf, len, "%lu", kept);
		return KEPT_ONLY;
	}
	why = strstr(loc, " reason=");
	snprintf(buf, len, "%.*s", why ? (int)strcspn(why + 8, " ") : 1, why ? why + 8 : "-");
	return VOID_PLACED_NONE;
}

/* The values of @metric on server @s, in round order. */
static void column(unsigned s, unsigned metric, double *out)
{
	for (unsigned i = 0; i < nrounds; i++)
		out[i] = rounds[i + 1].v[s][metric];
}

static struct ab_compare compare(unsigned metric)
{
	static double a[MAX_ROUNDS], a2[MAX_ROUNDS], b[MAX_ROUNDS];

	if (metric >= NMETRICS || !have[metric]) {
		struct ab_compare none;

		memset(&none, 0, sizeof(none));
		none.ba.median = none.ba.min = none.ba.max = NAN;
		none.aa = none.ba;
		none.band_lo = none.band_hi = none.spread = none.p = none.change = NAN;
		none.decision = AB_SAME;
		return none;
	}

	column(SA, metric, a);
	column(SA2, metric, a2);
	column(SB, metric, b);
	return ab_compare(a, a2, b, nrounds, metric != M_OPS);
}

static struct ab_stat stat_of(unsigned s, unsigned metric)
{
	static double v[MAX_ROUNDS];

	column(s, metric, v);
	return ab_stats_of(v, nrounds);
}

static void fmt_num(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
}

static int cpus_needed(void)
{
	return (int)(conf_long("server_threads") + conf_long("client_threads"));
}

/* "the fastest of the three in 6 of 6 rounds (p=0.0027)": how consistently B
 * lies on the side of its median; @paren: the p in parentheses, else after a comma. */
static void consistency(char *buf, size_t len, const struct ab_compare *c, bool primary, bool paren)
{
	bool up = c->change > 0;
	const char *word = primary ? (up ? "fastest" : "slowest") : (up ? "highest" : "lowest");
	char p[32];

	if (c->p < 0.001)
		snprintf(p, sizeof(p), "p<0.001");
	else
		snprintf(p, sizeof(p), "p=%.2g", c->p);
	snprintf(buf, len, "the %s of the three in %u of %u rounds%s%s%s", word,
		 up ? c->b_highest : c->b_lowest, c->n, paren ? " (" : ", ", p, paren ? ")" : "");
}

/* The verdict's part for throughput (@primary) or p99 latency. */
static void clause(char *buf, size_t len, const struct ab_compare *c, bool primary)
{
	char range[64], band[64], cons[96];

	snprintf(range, sizeof(range), "%.3f [%.3f-%.3f]", c->ba.median, c->ba.min, c->ba.max);
	/* Ratios and bands alike with 3 digits: a ratio is read against
	 * its band, and 2 digits made 0.987 look inside 0.99-0.99. */
	snprintf(band, sizeof(band), "%.3f-%.3f (+-%.*f%%)", c->band_lo, c->band_hi,
		 c->spread < 0.1 ? 1 : 0, c->spread * 100);
	consistency(cons, sizeof(cons), c, primary, primary);
	if (primary && c->decision == AB_TOO_FEW)
		snprintf(buf, len, "no verdict: throughput B/A %s is outside the A/A band %s, but %u "
			 "round%s cannot show a difference (at least %d; 6 or more recommended)", range,
			 band, c->n, c->n == 1 ? "" : "s", AB_MIN_ROUNDS);
	else if (!primary && lat >= NMETRICS)
		buf[0] = 0;
	else if (c->decision == AB_TOO_FEW)
		snprintf(buf, len, "%s B/A %.3f outside its A/A band %.3f-%.3f, too few rounds to "
			 "tell", lat_label(), c->ba.median, c->band_lo, c->band_hi);
	else if (primary && c->decision == AB_SAME)
		snprintf(buf, len, "no measurable difference on this machine: throughput B/A %s "
			 "is inside the A/A band %s", range, band);
	else if (primary && c->decision == AB_UNCLEAR)
		snprintf(buf, len, "inconclusive: throughput B/A %s is outside the A/A band %s, but "
			 "B was %s: run more rounds (-r)", range, band, cons);
	else if (primary)
		snprintf(buf, len, "B %s by %.1f%%: throughput B/A %s is outside the A/A band %s, "
			 "B %s", c->change > 0 ? "faster" : "slower",
			 fabs(c->change) * 100, range, band, cons);
	else if (c->decision == AB_SAME)
		snprintf(buf, len, "%s B/A %.3f inside its A/A band %.3f-%.3f", lat_label(),
			 c->ba.median, c->band_lo, c->band_hi);
	else if (c->decision == AB_UNCLEAR)
		snprintf(buf, len, "%s B/A %.3f outside its A/A band %.3f-%.3f, but B was %s: "
			 "inconclusive", lat_label(), c->ba.median, c->band_lo, c->band_hi, cons);
	else
		snprintf(buf, len, "%s %s by %.1f%% (B/A %.3f, outside %.3f-%.3f; B %s)", lat_label(),
			 c->change > 0 ? "higher" : "lower", fabs(c->change) * 100, c->ba.median,
			 c->band_lo, c->band_hi, cons);
}

/* Returns true when the comparison is void (B placed, found or kept nothing). */
static bool verdict(char *buf, size_t len, const struct ab_compare *ops, const struct ab_compare *p99)
{
	char a[512], b[512] = "", note[256] = "", aa[128] = "", vd[512] = "", why[160];
	long cpus = conf_long("cpus_online");
	int void_kind = void_reason(why, sizeof(why));
	bool is_void = void_kind > 0;

	clause(a, sizeof(a), ops, true);
	clause(b, sizeof(b), p99, false);
	/* The one caveat of both: the preset gives its thread counts, the
	 * runner counts the server's threads (client threads unknown then). */
	if (cpus > 0 && conf_long("server_threads") > 0 && cpus < cpus_needed()) {
		if (conf_long("client_threads") > 0)
			snprintf(note, sizeof(note), " (%ld CPUs for %ld server + %ld client threads: "
				 "the fd-table effect is not expected here)", cpus,
				 conf_long("server_threads"), conf_long("client_threads"));
		else
			snprintf(note, sizeof(note), " (%ld CPUs for %ld server threads: the fd-table "
				 "effect is not expected here)", cpus, conf_long("server_threads"));
	}
	if (!strcmp(conf_get("aa"), "1"))
		snprintf(aa, sizeof(aa), "[A/A check: B is plain %s too] ", server_name());
	/* First, so that nobody reads the rest as a verdict on the library. */
	if (void_kind == VOID_UNKNOWN)
		snprintf(vd, sizeof(vd), "VOID, B's placement unknown (%s), so B may have run "
			 "plain: ", why);
	else if (is_void)
		snprintf(vd, sizeof(vd), "VOID, B placed no fd (reason=%s), so A and B both ran "
			 "plain and this compares plain with plain%s: ", why, !strcmp(why, "few_fds") ?
			 " (the library acts once the process holds 64 fds, FDRANGE_THRESHOLD: "
			 "more connections)" : "");
	else if (void_kind == KEPT_ONLY)
		snprintf(vd, sizeof(vd), "B moved no fd: its threads serve what they accept "
			 "(model=local), and it kept %s where the kernel numbered them "
			 "(FDRANGE_LOCAL=keep, the default), so B differs from A by the library's "
			 "calls only: ", why);
	snprintf(buf, len, "verdict: %s%s%s%s%s%s", vd, aa, a, b[0] ? "; " : "", b, note);
	return is_void;
}

static const char *server_label(unsigned s)
{
	if (s == SA)
		return "A  plain";
	if (s == SA2)
		return "A2 plain (A/A)";
	return !strcmp(conf_get("aa"), "1") ? "B  plain (--aa)" : "B  libfdrange";
}

/* "lookup=3.49 create=0.00 ..." from run.conf: the value of @key, or NAN. */
static double profile_value(const char *side, const char *key)
{
	char k[32];
	const char *at;

	snprintf(k, sizeof(k), "profile_%s", side);
	at = kv_find(conf_get(k), key);
	return at ? strtod(at, NULL) : NAN;
}

/* One line of the fd-path shares of @side, or why there are none. */
static void profile_line(char *buf, size_t len, const char *side)
{
	char k[32];
	const char *v;

	snprintf(k, sizeof(k), "profile_%s", side);
	v = conf_get(k);
	if (!v[0])
		snprintf(buf, len, "not measured");
	else if (isnan(profile_value(side, "fd_paths")))
		snprintf(buf, len, "%s", v);
	else
		snprintf(buf, len, "fd paths %.2f%% of CPU: lookup %.2f%%, create %.2f%%, close %.2f%%, "
			 "lock wait %.2f%%", profile_value(side, "fd_paths"),
			 profile_value(side, "lookup"), profile_value(side, "create"),
			 profile_value(side, "close"), profile_value(side, "lock_wait"));
}

/* "order A B A2", or "order rotating (A B A2, B A2 A, A2 A B)": the orders
 * the complete rounds ran in, each once, as the positions say. */
static void orders(char *buf, size_t len)
{
	char seen[3][16], one[16];
	unsigned n = 0, k;
	size_t used;

	for (unsigned i = 1; i <= nrounds && n < 3; i++) {
		one[0] = 0;
		for (unsigned pos = 1; pos <= NSERVERS; pos++)
			for (unsigned s = 0; s < NSERVERS; s++)
				if (rounds[i].position[s] == pos)
					snprintf(one + strlen(one), sizeof(one) - strlen(one), "%s%s",
						 one[0] ? " " : "", server_key[s]);
		for (k = 0; k < n && strcmp(seen[k], one); k++)
			;
		if (k == n)
			snprintf(seen[n++], sizeof(seen[0]), "%s", one);
	}
	used = (size_t)snprintf(buf, len, n == 1 ? "order %s" : "order rotating (%s", seen[0]);
	for (k = 1; k < n && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, ", %s", seen[k]);
	if (n > 1 && used < len)
		snprintf(buf + used, len - used, ")");
}

static void text(FILE *f, const struct ab_compare *cmp, const char *line)
{
	const unsigned shown[] = { M_OPS, M_P50, lat < NMETRICS ? lat : M_P99 };
	char cell[96], m[24], lo[24], hi[24], order[64];

	if (conf_get("partial")[0])
		fprintf(f, "PARTIAL: %s; the rounds completed before it:\n", conf_get("partial"));
	if (is_memcached())
		fprintf(f, "memcached -t %s -m %s%s%s; mcload: %s threads, %s connections, get ratio %s, "
			"%s-byte values, %s keys\n", conf_get("server_threads"), conf_get("memory_mb"),
			conf_get("server_args")[0] ? " " : "", conf_get("server_args"),
			conf_get("client_threads"), conf_get("conns"), conf_get("get_ratio"),
			conf_get("value_size"), conf_get("keys"));
	else
		fprintf(f, "server: %s\nload (%s): %s\n", conf_get("server_cmd"), conf_get("parser"),
			conf_get("load_cmd"));
	orders(order, sizeof(order));
	fprintf(f, "%u round%s of %s s per server, %s; %s CPUs online%s%s%s%s\n", nrounds,
		nrounds == 1 ? "" : "s", conf_get("duration_s"), order, conf_get("cpus_online"),
		conf_get("server_cpus")[0] ? ", servers on CPUs " : "", conf_get("server_cpus"),
		conf_get("client_cpus")[0] ? ", client on CPUs " : "", conf_get("client_cpus"));
	if (incomplete)
		fprintf(f, "(%u incomplete round%s at the end left out)\n", incomplete,
			incomplete == 1 ? "" : "s");
	fprintf(f, "\n%-18s %-28s %-24s %s\n", "server", "ops/s median [min-max]",
		"p50 us median [min-max]", lat == M_AVG ? "mean us median [min-max]" :
		"p99 us median [min-max]");
	for (unsigned s = 0; s < NSERVERS; s++) {
		fprintf(f, "%-18s", server_label(s));
		for (unsigned k = 0; k < 3; k++) {
			struct ab_stat st = stat_of(s, shown[k]);

			fmt_num(m, sizeof(m), st.median);
			fmt_num(lo, sizeof(lo), st.min);
			fmt_num(hi, sizeof(hi), st.max);
			if (isnan(st.median))
				snprintf(cell, sizeof(cell), "-");
			else
				snprintf(cell, sizeof(cell), "%s [%s-%s]", m, lo, hi);
			fprintf(f, " %-*s", k < 2 ? (k ? 24 : 28) : 0, cell);
		}
		fputc('\n', f);
	}
	fprintf(f, "\nper round         ");
	for (unsigned i = 1; i <= nrounds; i++)
		fprintf(f, " %6u", i);
	fputc('\n', f);
	for (unsigned k = 0; k < 3; k++) {
		static double a[MAX_ROUNDS], a2[MAX_ROUNDS], b[MAX_ROUNDS];
		const char *name = shown[k] == M_OPS ? "ops/s" : shown[k] == M_P50 ? "p50" :
				   shown[k] == M_AVG ? "mean" : "p99";

		if (!have[shown[k]])
			continue;
		column(SA, shown[k], a);
		column(SA2, shown[k], a2);
		column(SB, shown[k], b);
		fprintf(f, "B/A  %-13s", name);
		for (unsigned i = 0; i < nrounds; i++)
			fprintf(f, " %6.3f", b[i] / a[i]);
		fprintf(f, "\nA2/A %-13s", name);
		for (unsigned i = 0; i < nrounds; i++)
			fprintf(f, " %6.3f", a2[i] / a[i]);
		fputc('\n', f);
	}
	fprintf(f, "\n%-8s %-22s %-24s %-12s %-8s %s\n", "metric", "B/A median [min-max]",
		"A/A band (+-spread)", "B high/low", "p", "decision");
	for (unsigned k = 0; k < 3; k++) {
		const struct ab_compare *c = &cmp[k];
		char band[48], p[24], hl[24];

		if (!have[shown[k]])
			continue;
		snprintf(cell, sizeof(cell), "%.3f [%.3f-%.3f]", c->ba.median, c->ba.min, c->ba.max);
		snprintf(band, sizeof(band), "%.3f-%.3f (+-%.1f%%)", c->band_lo, c->band_hi,
			 c->spread * 100);
		snprintf(p, sizeof(p), "%.2g", c->p);
		snprintf(hl, sizeof(hl), "%u/%u", c->b_highest, c->b_lowest);
		fprintf(f, "%-8s %-22s %-24s %-12s %-8s %s\n", k == 0 ? "ops/s" : k == 1 ? "p50 us" :
			shown[k] == M_AVG ? "mean us" : "p99 us",
			cell, band, hl, p, ab_decision_name(c->decision));
	}
	fprintf(f, "(band: 1/(1+h) to 1+h, 1+h the largest A2/A or A/A2 of any round; B high/low: rounds where B "
		"had the highest/lowest value of the three; p: the chance, if B were plain, of ranks "
		"at least this one-sided; see fdrange-ab(1))\n");
	if (!have[M_P50] || !have[M_P99])
		fprintf(f, "(%s: not reported by the load tool)\n", !have[M_P50] && !have[M_P99] ?
			"p50 and p99" : !have[M_P50] ? "p50" : "p99");
	if (conf_get("profile_A")[0] || conf_get("profile_B")[0]) {
		char pa[256], pb[256];

		profile_line(pa, sizeof(pa), "A");
		profile_line(pb, sizeof(pb), "B");
		fprintf(f, "\nfd paths (fdrange profile during unmeasured load after the rounds):\n"
			"  A  plain       %s\n  B  libfdrange  %s\n", pa, pb);
	}
	if (conf_get("locality")[0])
		fprintf(f, "\nB locality (fdrange stat during 2 s of unmeasured load after the rounds): %s\n",
			conf_get("locality"));
	fprintf(f, "\n%s\n", line);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

/* A setting: the counts as numbers, aa as a boolean, the rest as strings. */
static void json_conf_value(FILE *f, const char *key, const char *v)
{
	static const char numeric[] = " server_threads client_threads conns duration_s rounds "
				      "get_ratio value_size key_size keys memory_mb cpus_online ";
	char pat[48], *end;

	snprintf(pat, sizeof(pat), " %s ", key);
	if (!strcmp(key, "aa"))
		fputs(strcmp(v, "1") ? "false" : "true", f);
	else if (strstr(numeric, pat) && *v && (strtod(v, &end), !*end))
		fputs(v, f);
	else
		json_str(f, v);
}

static void json_compare(FILE *f, const char *name, const struct ab_compare *c, bool last)
{
	fprintf(f, "    ");
	json_str(f, name);
	fprintf(f, ": {\"ba_median\": ");
	json_num(f, c->ba.median);
	fprintf(f, ", \"ba_min\": ");
	json_num(f, c->ba.min);
	fprintf(f, ", \"ba_max\": ");
	json_num(f, c->ba.max);
	fprintf(f, ", \"aa_median\": ");
	json_num(f, c->aa.median);
	fprintf(f, ", \"band\": [");
	json_num(f, c->band_lo);
	fprintf(f, ", ");
	json_num(f, c->band_hi);
	fprintf(f, "], \"spread\": ");
	json_num(f, c->spread);
	fprintf(f, ", \"p\": ");
	json_num(f, c->p);
	fprintf(f, ", \"b_highest\": %u, \"b_lowest\": %u, \"change\": ", c->b_highest, c->b_lowest);
	json_num(f, c->change);
	fprintf(f, ", \"decision\": \"%s\"}%s\n", ab_decision_name(c->decision), last ? "" : ",");
}

static void json(FILE *f, const struct ab_compare *cmp, const char *line)
{
	static const char *const compared[] = { "ops_per_s", "p50_us", "p99_us" };

	fprintf(f, "{\n  \"schema\": \"%s\",\n  \"config\": {", is_memcached() ? SCHEMA_MC : SCHEMA);
	for (unsigned i = 0, first = 1; i < nconf; i++) {
		if (!strcmp(conf[i].key, "locality") || !strncmp(conf[i].key, "profile_", 8) ||
		    !strcmp(conf[i].key, "partial"))
			continue;
		fprintf(f, "%s\n    ", first ? "" : ",");
		json_str(f, conf[i].key);
		fprintf(f, ": ");
		json_conf_value(f, conf[i].key, conf[i].value);
		first = 0;
	}
	fprintf(f, "\n  },\n  \"rounds\": [\n");
	for (unsigned i = 1; i <= nrounds; i++) {
		fprintf(f, "    {\"round\": %u", i);
		for (unsigned s = 0; s < NSERVERS; s++) {
			fprintf(f, ", \"%s\": {\"position\": %u", server_key[s], rounds[i].position[s]);
			for (unsigned m = 0; m < NMETRICS; m++) {
				fprintf(f, ", \"%s\": ", metric_key[m]);
				json_num(f, rounds[i].v[s][m]);
			}
			fputc('}', f);
		}
		fprintf(f, "}%s\n", i < nrounds ? "," : "");
	}
	fprintf(f, "  ],\n  \"servers\": {\n");
	for (unsigned s = 0; s < NSERVERS; s++) {
		fprintf(f, "    \"%s\": {\"label\": ", server_key[s]);
		json_str(f, server_label(s) + 3);
		for (unsigned m = 0; m < NMETRICS; m++) {
			struct ab_stat st = stat_of(s, m);

			fprintf(f, ", \"%s\": {\"median\": ", metric_key[m]);
			json_num(f, st.median);
			fprintf(f, ", \"min\": ");
			json_num(f, st.min);
			fprintf(f, ", \"max\": ");
			json_num(f, st.max);
			fputc('}', f);
		}
		fprintf(f, "}%s\n", s + 1 < NSERVERS ? "," : "");
	}
	fprintf(f, "  },\n  \"compare\": {\n");
	for (unsigned k = 0; k < 3; k++)
		json_compare(f, k == 2 && lat == M_AVG ? "avg_us" : compared[k], &cmp[k], k == 2);
	fprintf(f, "  },\n  \"complete_rounds\": %u,\n  \"incomplete_rounds\": %u,\n"
		"  \"partial\": ", nrounds, incomplete);
	if (conf_get("partial")[0])
		json_str(f, conf_get("partial"));
	else
		fputs("null", f);
	fprintf(f, ",\n  \"fd_paths_pct\": {");
	for (unsigned s = 0; s < 2; s++) {
		static const char *const keys[] = { "fd_paths", "lookup", "create", "close", "lock_wait",
						    "kernel_other", "user" };
		const char *side = s ? "B" : "A";
		char k[16];

		snprintf(k, sizeof(k), "profile_%s", side);
		fprintf(f, "%s\"%s\": ", s ? ", " : "", side);
		if (isnan(profile_value(side, "fd_paths"))) {
			if (conf_get(k)[0])
				json_str(f, conf_get(k));
			else
				fputs("null", f);
			continue;
		}
		fputc('{', f);
		for (unsigned j = 0; j < sizeof(keys) / sizeof(keys[0]); j++) {
			fprintf(f, "%s\"%s\": ", j ? ", " : "", keys[j]);
			json_num(f, profile_value(side, keys[j]));
		}
		fputc('}', f);
	}
	fprintf(f, "},\n  \"locality\": ");
	json_str(f, conf_get("locality"));
	{
		char why[160];

		fprintf(f, ",\n  \"void\": %s", void_reason(why, sizeof(why)) > 0 ? "true" : "false");
	}
	fprintf(f, ",\n  \"verdict\": ");
	json_str(f, line + strlen("verdict: "));
	fprintf(f, "\n}\n");
}

static void gp_var(FILE *g, const char *name, double v)
{
	if (isnan(v) || isinf(v))
		fprintf(g, "%s = NaN\n", name);
	else
		fprintf(g, "%s = %.6g\n", name, v);
}

/* What the runner's gnuplot script draws: the rounds, the bands, the verdict. */
static void chart_files(const struct ab_compare *cmp)
{
	FILE *d = open_in("chart.dat", "w"), *g;
	const unsigned cols[] = { M_OPS, M_P50, lat < NMETRICS ? lat : M_P99 };

	fprintf(d, "# round");
	for (unsigned k = 0; k < 3; k++)
		for (unsigned s = 0; s < NSERVERS; s++)
			fprintf(d, " %s_%s", server_key[s], metric_key[cols[k]]);
	fprintf(d, " BA_ops AA_ops BA_p99 AA_p99\n");
	for (unsigned i = 1; i <= nrounds; i++) {
		const struct round *r = &rounds[i];

		fprintf(d, "%u", i);
		for (unsigned k = 0; k < 3; k++)
			for (unsigned s = 0; s < NSERVERS; s++)
				fprintf(d, " %.6g", r->v[s][cols[k]]);
		fprintf(d, " %.6g %.6g %.6g %.6g\n", r->v[SB][M_OPS] / r->v[SA][M_OPS],
			r->v[SA2][M_OPS] / r->v[SA][M_OPS], r->v[SB][lat % NMETRICS] / r->v[SA][lat % NMETRICS],
			r->v[SA2][lat % NMETRICS] / r->v[SA][lat % NMETRICS]);
	}
	fclose(d);
	g = open_in("chart-vars.gp", "w");
	fprintf(g, "rounds = %u\n", nrounds);
	/* gnuplot's name for not-a-number is NaN, not C's nan. */
	gp_var(g, "ops_lo", cmp[0].band_lo);
	gp_var(g, "ops_hi", cmp[0].band_hi);
	gp_var(g, "ops_med", cmp[0].ba.median);
	gp_var(g, "p99_lo", cmp[2].band_lo);
	gp_var(g, "p99_hi", cmp[2].band_hi);
	gp_var(g, "p99_med", cmp[2].ba.median);
	fprintf(g, "b_label = \"%s\"\n", server_label(SB) + 3);
	fprintf(g, "have_lat = %d\nlat_name = \"%s\"\nops_unit = \"ops/s\"\n", lat < NMETRICS,
		lat == M_AVG ? "mean" : "p99");
	if (conf_get("profile_A")[0] || conf_get("profile_B")[0]) {
		char pa[256], pb[256];

		profile_line(pa, sizeof(pa), "A");
		profile_line(pb, sizeof(pb), "B");
		for (char *c = pa; *c; c++)
			if (*c == '"' || *c == '\\')
				*c = '\'';
		for (char *c = pb; *c; c++)
			if (*c == '"' || *c == '\\')
				*c = '\'';
		fprintf(g, "profile_title = \"A: %s | B: %s\"\n", pa, pb);
	} else {
		fprintf(g, "profile_title = \"\"\n");
	}
	fclose(g);
}

int main(int argc, char **argv)
{
	bool as_json = false, is_void;
	struct ab_compare cmp[3];
	char line[2048];
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			as_json = true;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: ab-report DIR [--json]\n"
			       "The table and verdict of an A/B run (fdrange ab, fdrange-ab-memcached)\n"
			       "from DIR/run.conf and\n"
			       "DIR/rounds.csv; writes DIR/summary.txt, DIR/result.json, DIR/chart.dat,\n"
			       "DIR/chart-vars.gp.\n");
			return 0;
		} else if (argv[i][0] == '-' || dir)
			fail(2, "%s: unexpected argument; expected one directory and optionally --json",
			     argv[i]);
		else
			dir = argv[i];
	}
	if (!dir)
		fail(2, "DIR: missing; expected the directory of a run");
	read_conf();
	read_csv();
	cmp[0] = compare(M_OPS);
	cmp[1] = compare(M_P50);
	cmp[2] = compare(lat);
	is_void = verdict(line, sizeof(line), &cmp[0], &cmp[2]);
	f = open_in("summary.txt", "w");
	text(f, cmp, line);
	fclose(f);
	f = open_in("result.json", "w");
	json(f, cmp, line);
	fclose(f);
	chart_files(cmp);
	if (as_json)
		json(stdout, cmp, line);
	else
		text(stdout, cmp, line);
	/* No verdict, as void or from too few rounds, is one status. */
	return fflush(stdout) ? 1 : is_void || cmp[0].decision == AB_TOO_FEW ? EXIT_VOID : 0;
}
