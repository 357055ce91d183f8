/* SPDX-License-Identifier: MIT */
/*
 * Why the library is not placing a process's fds, in one word for
 * scripts and one line for people, and the summary every output form
 * shares.  Pure: from what /proc and the block said, nothing read here.
 *
 * The first that applies, in this order: not loaded; loaded with no block
 * (started under a seccomp filter, where the library makes no syscall and
 * so no block; a block of another release; a fork child still on its
 * parent's block; none at all); the block's own reason (FDRANGE_DISABLE,
 * a bad FDRANGE_* variable, a filter installed while running, a set-id program); a limit
 * that leaves no chunk above the base; a single thread so far; threads, but
 * every fd they made numbered below the threshold (nothing past it placed,
 * found in place, kept by rule or fallen back).
 */
#include "stat.h"
#include "geometry.h"

#include <stdio.h>
#include <string.h>

static const char *const words[ST_R_NR] = {
	[ST_R_NONE] = NULL,
	[ST_R_NOT_LOADED] = "not_loaded",
	[ST_R_NO_BLOCK] = "no_block",
	[ST_R_SECCOMP_START] = "seccomp_at_start",
	[ST_R_OTHER_RELEASE] = "other_release",
	[ST_R_INHERITED] = "inherited",
	[ST_R_DISABLED] = "disabled",
	[ST_R_CONFIG] = "config",
	[ST_R_SECCOMP] = "seccomp",
	[ST_R_SECURE] = "secure",
	[ST_R_LIMIT] = "limit",
	[ST_R_SINGLE] = "single_threaded",
	[ST_R_FEW] = "few_fds",
};

const char *st_reason_word(enum st_reason why)
{
	return why < ST_R_NR ? words[why] : NULL;
}

/* No chunk fits below the limit the library last saw. */
static bool limit_too_low(const struct fdr_blk_hdr *h)
{
	return h->limit && !fdr_geom_nchunks(h->base, fdr_geom_cap(h->limit, h->nr_open));
}

static enum st_reason block_reason(const struct st_report *r)
{
	const struct fdr_blk_hdr *h = &r->b->hdr;

	switch (h->why_inactive) {
	case FDR_WHY_DISABLED:
		return ST_R_DISABLED;
	case FDR_WHY_CONFIG:
		return ST_R_CONFIG;
	case FDR_WHY_SECCOMP:
		return ST_R_SECCOMP;
	case FDR_WHY_SECURE:
		return ST_R_SECURE;
	default:
		break;
	}
	if (limit_too_low(h))
		return ST_R_LIMIT;
	if (r->p->threads == 1)
		return ST_R_SINGLE;
	/* Only while no fd past the threshold was seen at all: one that fell
	 * back has its own reason in the counters. */
	if (h->few_seen && !r->placed && !r->inplace && !r->fallbacks && !r->kept)
		return ST_R_FEW;
	return ST_R_NONE;
}

const char *st_model_word(const struct fdr_blk_hdr *h)
{
	if (h->policy == ST_POLICY_THREAD)
		return "thread";
	if (h->policy == ST_POLICY_ROUNDROBIN)
		return "roundrobin";
	return h->model < FDR_MODEL_NR ? fdr_model_words[h->model] : "?";
}

void st_reason_find(struct st_report *r)
{
	const struct st_found *f = &r->found;

	if (r->b)
		r->reason = block_reason(r);
	else if (!f->lib_mapped)
		r->reason = ST_R_NOT_LOADED;
	else if (f->inherited_from)
		r->reason = ST_R_INHERITED;
	else if (f->other_release)
		r->reason = ST_R_OTHER_RELEASE;
	else if (r->p->seccomp > 0)
		r->reason = ST_R_SECCOMP_START;
	else
		r->reason = ST_R_NO_BLOCK;
}

void st_reason_text(const struct st_report *r, char *buf, size_t len)
{
	const struct fdr_blk_hdr *h = r->b ? &r->b->hdr : NULL;

	/* The block's own reasons come with a block, and only with one. */
	if (!h && (r->reason == ST_R_CONFIG || r->reason == ST_R_LIMIT || r->reason == ST_R_FEW)) {
		snprintf(buf, len, "?");
		return;
	}
	switch (r->reason) {
	case ST_R_NONE:
		snprintf(buf, len, "%s", "");
		break;
	case ST_R_NOT_LOADED:
	case ST_R_OTHER_RELEASE:
	case ST_R_INHERITED:
		snprintf(buf, len, "%s", r->noblk);
		break;
	case ST_R_NO_BLOCK:
		snprintf(buf, len, "libfdrange is loaded but keeps no stats block (a release "
			 "that keeps none, or no memory for it)");
		break;
	case ST_R_SECCOMP_START:
		snprintf(buf, len, "it started under a seccomp filter (Seccomp: %d in "
			 "/proc/%ld/status): the library then makes no syscall of its own, keeps "
			 "no stats block and places nothing", r->p->seccomp, r->p->pid);
		break;
	case ST_R_DISABLED:
		snprintf(buf, len, "disabled (FDRANGE_DISABLE=1): the library passes every call "
			 "through");
		break;
	case ST_R_CONFIG: {
		/* The line the library printed at start, without its name. */
		const char *msg = h->why_msg;

		if (!strncmp(msg, "libfdrange: ", 12))
			msg += 12;
		snprintf(buf, len, "a bad or unknown FDRANGE_* variable: %.*s; the library passes "
			 "every call through", (int)sizeof(h->why_msg),
			 msg[0] ? msg : "(the library gave no message)");
		break;
	}
	case ST_R_SECCOMP:
		snprintf(buf, len, "a seccomp filter was installed while it ran: the library "
			 "stopped placing fds then (a move makes calls the filter may forbid)");
		break;
	case ST_R_SECURE:
		snprintf(buf, len, "a set-user-ID or set-group-ID program (secure-execution "
			 "mode): the library passes every call through");
		break;
	case ST_R_LIMIT:
		snprintf(buf, len, "RLIMIT_NOFILE %llu (as the library last saw it) leaves no "
			 "64-fd chunk above FDRANGE_BASE %u: fds stay where the kernel puts them "
			 "until the limit is raised",
			 (unsigned long long)h->limit, (unsigned)h->base);
		break;
	case ST_R_SINGLE:
		snprintf(buf, len, "single-threaded so far: the library leaves fds alone until "
			 "the process starts a second thread");
		break;
	case ST_R_FEW:
		snprintf(buf, len, "few fds so far: every fd it made was numbered below "
			 "FDRANGE_THRESHOLD %llu, where a move costs more than it saves; fds are "
			 "placed once the process holds all fds below %llu",
			 (unsigned long long)h->threshold, (unsigned long long)h->threshold);
		break;
	default:
		snprintf(buf, len, "?");
		break;
	}
}

const char *st_library_word(const struct st_report *r)
{
	if (!r->found.lib_mapped && !r->b)
		return "no";
	return r->b && (r->reason == ST_R_NONE || r->reason == ST_R_LIMIT ||
			r->reason == ST_R_SINGLE || r->reason == ST_R_FEW) ? "yes" : "inactive";
}

unsigned long st_unseen(const struct st_report *r)
{
	size_t open;

	if (!r->b)
		return 0;
	open = r->p->nfds;
	/* Fds left below the threshold pass through uncounted. */
	if (r->b->hdr.few_seen)
		open -= r->below_threshold;
	/* The counters count every fd ever seen, closed ones too: only the
	 * excess of open fds over them is known never to have been seen. */
	return open > r->seen ? (unsigned long)(open - r->seen) : 0;
}

bool st_unseen_matters(const struct st_report *r)
{
	unsigned long n = st_unseen(r);

	/* 0-2 and a few fds made before the library loaded are normal. */
	return r->reason == ST_R_NONE && n > 3 && 2 * n > r->p->nfds;
}

void st_summarize(const struct st_report *r, struct st_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->pid = r->p->pid;
	snprintf(s->comm, sizeof(s->comm), "%s", r->p->comm);
	s->library = st_library_word(r);
	s->reason = r->reason;
	s->open_fds = r->p->nfds;
	s->groups = r->ngroups;
	s->shared_lines = r->t.shared;
	s->shared_socket_lines = r->t.sock_shared;
	s->client_sockets = r->client_sockets;
	s->shared_client_lines = r->t.client_shared;
	s->min_purity = r->min_purity;
	s->min_client_purity = r->min_client_purity;
	if (!r->b)
		return;
	s->block = true;
	s->placed = r->placed;
	s->inplace = r->inplace;
	s->kept = r->kept;
	s->fallbacks = r->fallbacks;
	memcpy(s->fb_why, r->fb_why, sizeof(s->fb_why));
	s->probes = r->probes;
	s->claims = r->claims;
	s->single_kept = r->b->hdr.single_kept;
	s->few_seen = r->b->hdr.few_seen;
	s->threshold = r->b->hdr.threshold;
	s->kernel_range = r->b->hdr.kernel_range;
	s->range_sets = r->range_sets;
	s->low_shared_client_lines = r->t.low_client_shared;
	s->untracked = r->b->hdr.untracked;
	s->accepted = r->b->hdr.accepted;
	s->hits = r->b->hdr.hits;
	s->misses = r->b->hdr.misses;
	s->relearns = r->b->hdr.relearns;
	s->realignments = r->b->hdr.realignments;
	s->accepts_left = r->b->hdr.accepts_left;
	s->unseen = st_unseen(r);
	s->model = st_model_word(&r->b->hdr);
	snprintf(s->lib_version, sizeof(s->lib_version), "%s", r->b->hdr.lib_version);
}

void st_summarize_error(long pid, const char *reason, const char *why, struct st_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->error_reason = reason;
	snprintf(s->error, sizeof(s->error), "%s", why);
}
