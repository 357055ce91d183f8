/* SPDX-License-Identifier: MIT */
/*
 * Statistics of the A/B benchmarks: medians over rounds (every benchmark),
 * and the comparison with a verdict of bench/ab-memcached (ab_report.c).
 */
#ifndef AB_STATS_H
#define AB_STATS_H

#include <stdbool.h>

struct ab_stat {
	bool present;
	unsigned n;
	double median, min, max;
};

/* Median, min and max of @n values (sorted in place). */
struct ab_stat ab_stats_of(double *v, unsigned n);

/*
 * One metric of an A/B run with an A/A control: per round, the same load
 * against three servers, A and A2 (identical, plain) and B.
 *
 *   B/A ratio of round i:  b[i] / a[i]     what B changes
 *   A/A ratio of round i:  a2[i] / a[i]    what nothing changes: the noise
 *
 * The A/A band is [1 / (1 + h), 1 + h], h the largest A2/A or A/A2 of any
 * round, less 1: the largest difference two identical servers showed in
 * the same run, either way round (printed "+-h").
 *
 * p is a two-sided p-value for "B is just another plain server", from
 * B's rank among the three servers of each round (0: lowest value, 2:
 * highest; ties share the mean rank).  If B were plain, the three would be
 * interchangeable and each rank equally likely (1/3) in every round, however
 * the machine drifts; p is the chance that the sum of B's ranks lies at
 * least as far from its middle (n) as measured, counted exactly over all
 * 3^n ways the ranks could fall.  So "B the highest in 6 of 6 rounds" is
 * p = 2/729.  The ranks say whether B differs consistently; the band says
 * whether it differs by more than the machine's own noise: both must hold.
 *
 * Decision, in this order:
 *   AB_SAME      the median B/A lies inside the A/A band: noise, whatever p
 *   AB_TOO_FEW   outside the band, but fewer than AB_MIN_ROUNDS rounds (3
 *                rounds cannot reach p < 0.05: B the highest in all 3 is
 *                p = 2/27)
 *   AB_BETTER,   outside the band and p < AB_ALPHA: B is better or worse
 *   AB_WORSE     (higher throughput, or lower latency, is better)
 *   AB_UNCLEAR   outside the band but p >= AB_ALPHA: could be chance
 */
#define AB_MIN_ROUNDS 4
#define AB_ALPHA 0.05

enum ab_decision { AB_TOO_FEW, AB_SAME, AB_BETTER, AB_WORSE, AB_UNCLEAR };

struct ab_compare {
	unsigned n;
	struct ab_stat ba, aa;  /* the B/A and the A/A ratios */
	double band_lo, band_hi, spread; /* the A/A band, h (0.13 for +-13%) */
	double p;
	unsigned b_highest, b_lowest; /* rounds where B was the highest, the lowest */
	double change;          /* median B/A - 1 */
	enum ab_decision decision;
};

/* Compare @n rounds; @lower_better for latencies.  All values > 0. */
struct ab_compare ab_compare(const double *a, const double *a2, const double *b, unsigned n,
			     bool lower_better);

/* "same", "better", ... as in the JSON output. */
const char *ab_decision_name(enum ab_decision d);

#endif
