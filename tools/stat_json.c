/* SPDX-License-Identifier: MIT */
/*
 * The JSON report (--json): everything the text shows, keys documented in
 * man/fdrange.1 and only ever added, never renamed ("schema": 1).
 *
 * Strings from the target are raw bytes, not necessarily UTF-8: every byte
 * outside printable ASCII is written as \u00XX (the byte as a Latin-1 code
 * point), so the document is valid JSON and valid UTF-8 whatever the
 * target put in its names, and no raw control byte reaches a terminal.
 */
#include "stat.h"
#include "options.h"

#include <inttypes.h>
#include <string.h>

void st_json_str(FILE *out, const char *s, size_t max)
{
	fputc('"', out);
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

void st_json_error(FILE *out, const char *msg, const char *reason, long pid)
{
	fputs("{\"schema\":1,\"error\":", out);
	st_json_str(out, msg, strlen(msg));
	if (reason)
		fprintf(out, ",\"reason\":\"%s\"", reason);
	if (pid > 0)
		fprintf(out, ",\"pid\":%ld", pid);
	fputs("}\n", out);
}

static void key(FILE *out, bool *first, const char *k)
{
	fprintf(out, "%s\"%s\":", *first ? "" : ",", k);
	*first = false;
}

static void kv_u(FILE *out, bool *first, const char *k, unsigned long long v)
{
	key(out, first, k);
	fprintf(out, "%llu", v);
}

static void kv_s(FILE *out, bool *first, const char *k, const char *v, size_t max)
{
	key(out, first, k);
	st_json_str(out, v, max);
}

static void kv_purity(FILE *out, bool *first, const char *k, double p)
{
	key(out, first, k);
	if (p < 0)
		fputs("null", out);
	else
		fprintf(out, "%.1f", p);
}

static void letter_str(FILE *out, int g)
{
	fprintf(out, "\"%c\"", st_letter(g));
}

static void served_by(FILE *out, const struct st_report *r, const struct st_served *by,
		      unsigned n)
{
	fputc('[', out);
	for (unsigned i = 0; i < n; i++) {
		fprintf(out, "%s{\"group\":", i ? "," : "");
		letter_str(out, by[i].group);
		fprintf(out, ",\"key\":%ld,\"fds\":%u}", r->groups[by[i].group].shown, by[i].n);
	}
	fputc(']', out);
}

static void kv_reason(FILE *out, bool *first, const char *k, enum st_reason why)
{
	key(out, first, k);
	if (st_reason_word(why))
		fprintf(out, "\"%s\"", st_reason_word(why));
	else
		fputs("null", out);
}

static void summary_fields(FILE *out, const struct st_summary *s, bool *first)
{
	kv_u(out, first, "pid", (unsigned long long)s->pid);
	kv_s(out, first, "library", s->library, 16);
	kv_u(out, first, "open_fds", s->open_fds);
	kv_u(out, first, "groups", s->groups);
	kv_u(out, first, "shared_lines", s->shared_lines);
	kv_u(out, first, "shared_socket_lines", s->shared_socket_lines);
	kv_u(out, first, "client_sockets", s->client_sockets);
	kv_u(out, first, "shared_client_lines", s->shared_client_lines);
	if (s->block) {
		kv_u(out, first, "threshold", s->threshold);
		kv_s(out, first, "path", s->kernel_range ? "kernel-range" : "dup", 16);
		kv_u(out, first, "range_sets", s->range_sets);
		kv_u(out, first, "low_shared_client_lines", s->low_shared_client_lines);
		kv_purity(out, first, "min_purity", s->min_purity);
		kv_purity(out, first, "min_client_purity", s->min_client_purity);
		kv_u(out, first, "placed", s->placed);
		kv_u(out, first, "inplace", s->inplace);
		kv_u(out, first, "kept", s->kept);
		kv_u(out, first, "fallbacks", s->fallbacks);
		kv_u(out, first, "extra_probes", s->probes);
		kv_s(out, first, "model", s->model, 32);
		kv_u(out, first, "realignments", s->realignments);
		kv_u(out, first, "misplaced", s->misses);
		kv_u(out, first, "unseen_fds", s->unseen);
	}
	kv_reason(out, first, "reason", s->reason);
}

void st_summary_json(FILE *out, const struct st_summary *s, double t)
{
	bool first = false;

	if (s->error[0]) {
		st_json_error(out, s->error, s->error_reason, s->pid);
		return;
	}
	fprintf(out, "{\"schema\":1");
	if (t > 0)
		fprintf(out, ",\"time\":%.3f", t);
	summary_fields(out, s, &first);
	fputs("}\n", out);
}

static void block(FILE *out, const struct st_report *r)
{
	const struct st_blk *b = r->b;
	const struct fdr_blk_hdr *h = &b->hdr;
	static const char *const policy[] = { "auto", "thread", "roundrobin" };
	bool first = true;
	char buf[64];

	fputc('{', out);
	kv_s(out, &first, "lib_version", h->lib_version, sizeof(h->lib_version));
	kv_u(out, &first, "version", h->version);
	snprintf(buf, sizeof(buf), "%" PRIx64, b->map_start);
	kv_s(out, &first, "map_start", buf, sizeof(buf));
	snprintf(buf, sizeof(buf), "%" PRIx64, b->map_end);
	kv_s(out, &first, "map_end", buf, sizeof(buf));
	kv_s(out, &first, "read_through", b->via ? b->via : "memory", 32);
	key(out, &first, "active");
	fputs(h->flags & FDR_BLK_ACTIVE ? "true" : "false", out);
	kv_s(out, &first, "why_inactive", fdr_why_words[h->why_inactive], 16);
	kv_s(out, &first, "why_msg", h->why_msg, sizeof(h->why_msg));

	key(out, &first, "settings");
	fputc('[', out);
	for (uint32_t i = 0; i < h->nsettings; i++) {
		const struct fdr_blk_setting *s = &h->settings[i];
		bool f2 = true;

		fputs(i ? ",{" : "{", out);
		kv_s(out, &f2, "name", s->name, sizeof(s->name));
		kv_s(out, &f2, "value", s->value, sizeof(s->value));
		key(out, &f2, "default");
		fputs(s->from_env ? "false" : "true", out);
		key(out, &f2, "known");
		fputs(fdr_option_by_env(s->name) ? "true" : "false", out);
		fputc('}', out);
	}
	fputc(']', out);

	key(out, &first, "geometry");
	{
		bool f2 = true;

		fputc('{', out);
		kv_u(out, &f2, "base", h->base);
		kv_u(out, &f2, "chunk", h->chunk);
		kv_u(out, &f2, "chunks_claimed", r->claimed_chunks);
		kv_u(out, &f2, "top_chunk", h->top_chunk);
		kv_u(out, &f2, "nchunks", h->nchunks);
		kv_u(out, &f2, "fixed_width", h->fixed_width);
		kv_u(out, &f2, "limit_seen", h->limit);
		kv_u(out, &f2, "limit_now", r->p->soft_limit);
		kv_u(out, &f2, "limit_changes", h->limit_changes);
		kv_u(out, &f2, "nr_open", h->nr_open);
		kv_u(out, &f2, "single_kept", h->single_kept);
		kv_u(out, &f2, "threshold", h->threshold);
		kv_u(out, &f2, "few_seen", h->few_seen);
		kv_u(out, &f2, "kernel_range", h->kernel_range);
		kv_u(out, &f2, "untracked", h->untracked);
		kv_u(out, &f2, "bound_top", h->bound_top);
		kv_u(out, &f2, "open_counted", h->open_counted);
		kv_u(out, &f2, "counts", h->counts);
		fputc('}', out);
	}

	key(out, &first, "handoff");
	{
		bool f2 = true;

		fputc('{', out);
		kv_s(out, &f2, "policy", policy[h->policy], 16);
		kv_s(out, &f2, "model", fdr_model_words[h->model], 16);
		key(out, &f2, "rotation");
		fputc('[', out);
		for (uint32_t i = 0; i < h->rot_len; i++) {
			uint32_t o = h->rot_owner[i];

			fprintf(out, "%s{\"owner\":%" PRIu32 ",\"tid\":%ld}", i ? "," : "", o,
				o < h->nowners ? st_shown_tid(r, b->owners[o].tid) : 0);
		}
		fputc(']', out);
		kv_u(out, &f2, "learned_after", h->learned_after);
		kv_u(out, &f2, "relearns", h->relearns);
		kv_u(out, &f2, "accepted", h->accepted);
		kv_u(out, &f2, "observed", h->observed);
		kv_u(out, &f2, "hits", h->hits);
		kv_u(out, &f2, "misses", h->misses);
		kv_u(out, &f2, "realignments", h->realignments);
		kv_u(out, &f2, "accepts_left", h->accepts_left);
		fputc('}', out);
	}

	key(out, &first, "owners");
	fputc('[', out);
	for (unsigned k = 0; k < r->nowners; k++) {
		const struct st_owner *ow = &r->owners[k];
		const struct fdr_blk_owner *o = &b->owners[ow->idx];
		bool f2 = true;
		char label[48];

		fputs(k ? ",{" : "{", out);
		kv_u(out, &f2, "index", ow->idx);
		kv_s(out, &f2, "kind", st_kind_word(o->kind), 16);
		kv_u(out, &f2, "tid", (unsigned long long)st_shown_tid(r, o->tid));
		kv_u(out, &f2, "ns_tid", o->tid);
		st_owner_label(r, ow, label, sizeof(label));
		kv_s(out, &f2, "label", label, sizeof(label));
		key(out, &f2, "group");
		if (ow->group >= 0)
			letter_str(out, ow->group);
		else
			fputs("null", out);
		kv_u(out, &f2, "chunks", ow->nchunks);
		key(out, &f2, "fds");
		fputc('[', out);
		for (size_t i = 0; i < ow->nspans; i++) {
			const struct st_span *s = &r->spans[ow->span0 + i];

			fprintf(out, "%s[%ld,%ld]", i ? "," : "", s->lo, s->hi - 1);
		}
		fputc(']', out);
		kv_u(out, &f2, "lines", ow->nlines);
		kv_u(out, &f2, "placed", o->placed);
		kv_u(out, &f2, "inplace", o->inplace);
		kv_u(out, &f2, "kept", o->kept);
		kv_u(out, &f2, "fallbacks", ow->fallbacks);
		kv_u(out, &f2, "fallback_full", o->fallback[FDR_FB_FULL]);
		kv_u(out, &f2, "fallback_limit", o->fallback[FDR_FB_LIMIT]);
		kv_u(out, &f2, "fallback_other", o->fallback[FDR_FB_OTHER]);
		kv_u(out, &f2, "fallback_bound", o->fallback[FDR_FB_BOUND]);
		kv_u(out, &f2, "fallback_near", o->fallback[FDR_FB_NEAR]);
		kv_u(out, &f2, "extra_probes", o->probes);
		kv_u(out, &f2, "range_sets", o->range_sets);
		kv_u(out, &f2, "claims", o->claims);
		kv_u(out, &f2, "threads", o->threads);
		kv_u(out, &f2, "live", o->live);
		kv_u(out, &f2, "open", ow->open);
		kv_u(out, &f2, "served", ow->served);
		kv_u(out, &f2, "open_lines", ow->open_lines);
		/* As the text shows it: a learning pool's purity means nothing. */
		kv_purity(out, &f2, "purity", o->kind == FDR_KIND_SPARSE ? ST_NO_PURITY : ow->purity);
		kv_purity(out, &f2, "client_purity",
			  o->kind == FDR_KIND_SPARSE ? ST_NO_PURITY : ow->client_purity);
		key(out, &f2, "served_by");
		served_by(out, r, ow->by, ow->nby);
		fputc('}', out);
	}
	fputc(']', out);
	fprintf(out, ",\"low\":{\"open\":%u,\"served_by\":", r->low_open);
	served_by(out, r, r->low_by, r->low_nby);
	fprintf(out, "},\"unowned\":{\"open\":%u,\"served_by\":", r->unowned_open);
	served_by(out, r, r->unowned_by, r->unowned_nby);
	fprintf(out, "},\"fallbacks\":{\"full\":%" PRIu64 ",\"limit\":%" PRIu64 ",\"other\":%"
		PRIu64 ",\"kept\":%" PRIu64 ",\"bound\":%" PRIu64 ",\"near\":%" PRIu64 "}",
		r->fb_why[FDR_FB_FULL], r->fb_why[FDR_FB_LIMIT], r->fb_why[FDR_FB_OTHER], r->kept,
		r->fb_why[FDR_FB_BOUND], r->fb_why[FDR_FB_NEAR]);
	fputc('}', out);
}

void st_render_json(FILE *out, const struct st_report *r)
{
	const struct st_proc *p = r->p;
	struct st_summary sum;
	char why[ST_WHY_MAX + 200];
	bool first = false;

	fputs("{\"schema\":1", out);
	kv_u(out, &first, "pid", (unsigned long long)p->pid);
	kv_u(out, &first, "nspid", (unsigned long long)p->nspid);
	kv_s(out, &first, "pid_namespace", st_other_ns(p) ? "other" : "same", 8);
	kv_s(out, &first, "comm", p->comm, sizeof(p->comm));
	kv_u(out, &first, "open_fds", p->nfds);
	kv_u(out, &first, "threads", p->threads);
	kv_u(out, &first, "rlimit_nofile", p->soft_limit);
	kv_s(out, &first, "library", st_library_word(r), 16);
	kv_reason(out, &first, "reason", r->reason);
	st_reason_text(r, why, sizeof(why));
	kv_s(out, &first, "reason_text", why, sizeof(why));
	if (r->found.inherited_from)
		kv_u(out, &first, "inherited_from", (unsigned long long)r->found.inherited_from);
	if (r->b) {
		kv_u(out, &first, "seen_fds", r->seen);
		kv_u(out, &first, "unseen_fds", st_unseen(r));
		key(out, &first, "block");
		block(out, r);
	} else {
		kv_s(out, &first, "no_block", r->noblk, sizeof(r->noblk));
	}
	kv_s(out, &first, "group_by", r->b ? "thread" : "epoll", 8);
	key(out, &first, "groups");
	fputc('[', out);
	for (unsigned g = 0; g < r->ngroups; g++) {
		const struct st_group *gr = &r->groups[g];

		fprintf(out, "%s{\"letter\":", g ? "," : "");
		letter_str(out, (int)g);
		fprintf(out, ",\"key\":%ld,\"ns_key\":%ld,\"name\":", gr->shown, gr->key);
		st_json_str(out, gr->name, sizeof(gr->name));
		fprintf(out, ",\"fds\":%u,\"sockets\":%u,\"accepted\":%u}", gr->fds, gr->sockets,
			gr->clients);
	}
	fputc(']', out);
	fprintf(out, ",\"lines\":{\"served\":%lu,\"shared\":%lu,\"socket\":%lu,\"shared_socket\":%lu,"
		"\"client\":%lu,\"shared_client\":%lu,\"below_threshold\":%lu,"
		"\"shared_below_threshold\":%lu,\"shared_client_below_threshold\":%lu}",
		r->t.lines, r->t.shared, r->t.sock_lines, r->t.sock_shared, r->t.client_lines,
		r->t.client_shared, r->t.low_lines, r->t.low_shared, r->t.low_client_shared);
	key(out, &first, "summary");
	fputc('{', out);
	first = true;
	st_summarize(r, &sum);
	summary_fields(out, &sum, &first);
	fputs("}}\n", out);
}
