/* SPDX-License-Identifier: MIT */
/* Statistics of the A/B benchmarks: see ab_stats.h. */
#include "ab_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct ab_stat ab_stats_of(double *v, unsigned n)
{
	struct ab_stat st = { 0 };

	if (!n)
		return st;
	qsort(v, n, sizeof(double), cmp_double);
	st.present = true;
	st.n = n;
	st.min = v[0];
	st.max = v[n - 1];
	st.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	return st;
}

/*
 * Twice B's rank among the three values of a round, less 2: -2 (lowest)
 * to 2 (highest), ties at the mean of their ranks.  Also for the others.
 */
static void ranks2(const double v[3], int out[3])
{
	for (unsigned k = 0; k < 3; k++) {
		int below = 0, same = 0;

		for (unsigned j = 0; j < 3; j++) {
			below += v[j] < v[k];
			same += v[j] == v[k];
		}
		out[k] = 2 * below + same - 1 - 2;
	}
}

/*
 * P(|sum of B's ranks2| >= |observed|) when in every round B's rank is
 * any of the three with probability 1/3: the distribution of the sum,
 * built round by round.
 */
static double rank_p(const int (*r)[3], unsigned n, int observed)
{
	size_t width = 4 * (size_t)n + 1;
	double *dist = calloc(width, sizeof(*dist)), *next = calloc(width, sizeof(*next)), p = 0;

	if (!dist || !next) {
		free(dist);
		free(next);
		return NAN;
	}
	dist[2 * n] = 1;        /* index 2n: sum 0 */
	for (unsigned i = 0; i < n; i++) {
		memset(next, 0, width * sizeof(*next));
		for (size_t s = 0; s < width; s++)
			if (dist[s] != 0)
				for (unsigned k = 0; k < 3; k++)
					next[(size_t)((long)s + r[i][k])] += dist[s] / 3;
		memcpy(dist, next, width * sizeof(*dist));
	}
	for (size_t s = 0; s < width; s++)
		if (labs((long)s - 2 * (long)n) >= abs(observed))
			p += dist[s];
	free(dist);
	free(next);
	return p > 1 ? 1 : p;
}

struct ab_compare ab_compare(const double *a, const double *a2, const double *b, unsigned n,
			     bool lower_better)
{
	struct ab_compare c = { .n = n, .p = NAN };
	double *ba = malloc(2 * (size_t)n * sizeof(double) + 1), *aa = ba + n;
	int (*r)[3] = malloc((size_t)n * sizeof(*r) + 1), observed = 0;

	if (!ba || !r || !n) {
		free(ba);
		free(r);
		c.decision = AB_TOO_FEW;
		return c;
	}
	for (unsigned i = 0; i < n; i++) {
		const double v[3] = { a[i], a2[i], b[i] };

		ba[i] = b[i] / a[i];
		aa[i] = a2[i] / a[i];
		/* A2/A = 2 and 0.5 are the same noise: the band is symmetric in log. */
		if (fabs(log(aa[i])) > c.spread)
			c.spread = fabs(log(aa[i]));
		ranks2(v, r[i]);
		observed += r[i][2];
		c.b_highest += r[i][2] == 2;
		c.b_lowest += r[i][2] == -2;
	}
	c.band_lo = exp(-c.spread);
	c.band_hi = exp(c.spread);
	c.spread = c.band_hi - 1;
	c.ba = ab_stats_of(ba, n);
	c.aa = ab_stats_of(aa, n);
	c.change = c.ba.median - 1;
	c.p = rank_p((const int (*)[3])r, n, observed);
	if (c.ba.median >= c.band_lo && c.ba.median <= c.band_hi)
		c.decision = AB_SAME;
	else if (n < AB_MIN_ROUNDS)
		c.decision = AB_TOO_FEW;
	else if (!(c.p < AB_ALPHA))
		c.decision = AB_UNCLEAR;
	else
		c.decision = (c.ba.median > 1) != lower_better ? AB_BETTER : AB_WORSE;
	free(ba);
	free(r);
	return c;
}

const char *ab_decision_name(enum ab_decision d)
{
	static const char *const names[] = { "too_few_rounds", "same", "better", "worse",
					     "inconclusive" };

	return names[d];
}
