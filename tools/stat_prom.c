/* SPDX-License-Identifier: MIT */
/*
 * --prometheus: the Prometheus text exposition format, for node_exporter's
 * textfile collector (write to a temporary file, rename it into the
 * collector's directory).  Each metric family once, with its HELP and
 * TYPE, then one sample per process labelled pid and comm: the format
 * wants a family's samples together, so all processes are read first.
 *
 * A comm is the process's own bytes: escaped as the text report escapes
 * them (\xNN), then for the format (backslash, double quote), so no byte
 * of it can end a label or a line.
 */
#include "stat.h"

#include <inttypes.h>
#include <string.h>

static void label_value(FILE *out, const char *s, size_t max)
{
	static const char hex[] = "0123456789abcdef";

	fputc('"', out);
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c >= 0x7f || c == '\\')
			fprintf(out, "\\\\x%c%c", hex[c >> 4], hex[c & 15]);
		else if (c == '"')
			fputs("\\\"", out);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample: NAME{pid="",comm=""[,K="V"]} VALUE. */
static void sample(FILE *out, const char *name, const struct st_summary *s, const char *k,
		   const char *v, unsigned long long value)
{
	fprintf(out, "%s{pid=\"%ld\",comm=", name, s->pid);
	label_value(out, s->comm, sizeof(s->comm));
	if (k) {
		fprintf(out, ",%s=", k);
		label_value(out, v, strlen(v));
	}
	fprintf(out, "} %llu\n", value);
}

static void ratio(FILE *out, const char *name, const struct st_summary *s, double pct)
{
	fprintf(out, "%s{pid=\"%ld\",comm=", name, s->pid);
	label_value(out, s->comm, sizeof(s->comm));
	fprintf(out, "} %.3f\n", pct / 100.0);
}

/* A counter or gauge of the block, one per process that has one. */
struct blk_metric {
	const char *name, *type, *help;
	size_t off;   /* of a uint64_t in struct st_summary */
};

#define M(n, t, h, f) { n, t, h, offsetof(struct st_summary, f) }
static const struct blk_metric blk_metrics[] = {
	M("fdrange_fds_placed_total", "counter", "fds moved into their owner's chunks", placed),
	M("fdrange_fds_inplace_total", "counter", "fds already in their owner's chunk",
	  inplace),
	M("fdrange_fds_kept_total", "counter", "fds not moved by rule (0-2, FDRANGE_OPEN/LOCAL=keep, roundrobin)", kept),
	M("fdrange_fds_single_kept_total", "counter",
	  "fds left alone while the process was single-threaded", single_kept),
	M("fdrange_few_fds_seen", "gauge",
	  "1 once an fd was left where the kernel numbered it, below FDRANGE_THRESHOLD", few_seen),
	M("fdrange_kernel_range", "gauge",
	  "1: the kernel allocates each thread's fds in its range (PR_SET_FD_RANGE); 0: dup path",
	  kernel_range),
	M("fdrange_range_sets_total", "counter", "PR_SET_FD_RANGE calls",
	  range_sets),
	M("fdrange_extra_probes_total", "counter",
	  "extra F_DUPFD tries when an owner's chunks were full (2 syscalls each)", probes),
	M("fdrange_claims_total", "counter", "chunks and lines claimed", claims),
	M("fdrange_accepted_total", "counter", "accepted connections seen while multi-threaded",
	  accepted),
	M("fdrange_relearns_total", "counter", "times a settled hand-off model was learned again",
	  relearns),
	M("fdrange_realignments_total", "counter",
	  "times the rotation counter moved to follow the program", realignments),
	M("fdrange_accepts_left_total", "counter",
	  "accepted fds left where the kernel put them (model unregistered)", accepts_left),
};
#undef M

static uint64_t field(const struct st_summary *s, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)s + off, sizeof(v));
	return v;
}

static void block_families(FILE *out, const struct st_summary *s, size_t n)
{
	static const char *const fb[FDR_FB_NR] = { "full", "limit", "other", "bound", "near" };

	for (size_t m = 0; m < sizeof(blk_metrics) / sizeof(blk_metrics[0]); m++) {
		family(out, blk_metrics[m].name, blk_metrics[m].type, blk_metrics[m].help);
		for (size_t i = 0; i < n; i++)
			if (s[i].block)
				sample(out, blk_metrics[m].name, &s[i], NULL, NULL,
				       field(&s[i], blk_metrics[m].off));
	}
	family(out, "fdrange_fallbacks_total", "counter",
	       "fds that kept the kernel's number, by why they were not moved");
	for (size_t i = 0; i < n; i++)
		for (unsigned f = 0; s[i].block && f < FDR_FB_NR; f++)
			sample(out, "fdrange_fallbacks_total", &s[i], "reason", fb[f], s[i].fb_why[f]);
	family(out, "fdrange_predictions_total", "counter",
	       "hand-off predictions checked under a settled model");
	for (size_t i = 0; i < n; i++)
		if (s[i].block) {
			sample(out, "fdrange_predictions_total", &s[i], "result", "right", s[i].hits);
			sample(out, "fdrange_predictions_total", &s[i], "result", "wrong", s[i].misses);
		}
	family(out, "fdrange_model", "gauge",
	       "the learned hand-off of accepted connections (1 for the one in force)");
	for (size_t i = 0; i < n; i++)
		if (s[i].block)
			sample(out, "fdrange_model", &s[i], "model", s[i].model, 1);
	family(out, "fdrange_unseen_fds", "gauge",
	       "open fds that never passed through the library (at least this many)");
	for (size_t i = 0; i < n; i++)
		if (s[i].block)
			sample(out, "fdrange_unseen_fds", &s[i], NULL, NULL, s[i].unseen);
	family(out, "fdrange_min_purity_ratio", "gauge",
	       "lowest share of a thread's open fds served by that thread");
	for (size_t i = 0; i < n; i++)
		if (s[i].block && s[i].min_purity >= 0)
			ratio(out, "fdrange_min_purity_ratio", &s[i], s[i].min_purity);
	family(out, "fdrange_min_client_purity_ratio", "gauge",
	       "the same among accepted client sockets only");
	for (size_t i = 0; i < n; i++)
		if (s[i].block && s[i].min_client_purity >= 0)
			ratio(out, "fdrange_min_client_purity_ratio", &s[i], s[i].min_client_purity);
}

void st_render_prom(FILE *out, const struct st_summary *s, size_t n)
{
	family(out, "fdrange_placing", "gauge",
	       "1 if libfdrange is placing this process's fds, 0 if not (see fdrange_inactive)");
	for (size_t i = 0; i < n; i++)
		if (!s[i].error[0])
			sample(out, "fdrange_placing", &s[i], NULL, NULL,
			       !strcmp(s[i].library, "yes") && s[i].reason == ST_R_NONE);
	family(out, "fdrange_inactive", "gauge", "why libfdrange places nothing (1 for the reason)");
	for (size_t i = 0; i < n; i++)
		if (!s[i].error[0] && st_reason_word(s[i].reason))
			sample(out, "fdrange_inactive", &s[i], "reason", st_reason_word(s[i].reason), 1);
	family(out, "fdrange_library_info", "gauge", "libfdrange in this process: yes, inactive, no");
	for (size_t i = 0; i < n; i++)
		if (!s[i].error[0])
			sample(out, "fdrange_library_info", &s[i], "library", s[i].library, 1);
	family(out, "fdrange_open_fds", "gauge", "open fds of the process");
	for (size_t i = 0; i < n; i++)
		if (!s[i].error[0])
			sample(out, "fdrange_open_fds", &s[i], NULL, NULL, s[i].open_fds);
	family(out, "fdrange_shared_lines", "gauge",
	       "8-fd lines of the fd table holding open fds of two or more threads");
	for (size_t i = 0; i < n; i++)
		if (!s[i].error[0]) {
			sample(out, "fdrange_shared_lines", &s[i], "among", "all", s[i].shared_lines);
			sample(out, "fdrange_shared_lines", &s[i], "among", "sockets",
			       s[i].shared_socket_lines);
			sample(out, "fdrange_shared_lines", &s[i], "among", "clients",
			       s[i].shared_client_lines);
		}
	family(out, "fdrange_shared_client_lines_below_threshold", "gauge",
	       "8-fd lines below FDRANGE_THRESHOLD (not counted above) holding client sockets of "
	       "two or more threads, as without the library");
	for (size_t i = 0; i < n; i++)
		if (!s[i].error[0] && s[i].block)
			sample(out, "fdrange_shared_client_lines_below_threshold", &s[i], NULL, NULL,
			       s[i].low_shared_client_lines);
	block_families(out, s, n);
	family(out, "fdrange_stat_error", "gauge", "a process fdrange stat could not read");
	for (size_t i = 0; i < n; i++)
		if (s[i].error[0])
			sample(out, "fdrange_stat_error", &s[i], "reason", s[i].error_reason, 1);
}
