/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the configuration parser (lib/options.c) and the
 * range geometry (lib/geometry.c): any FDRANGE_* strings, any
 * RLIMIT_NOFILE, any fs.nr_open, any CPU count.
 *
 * Input: 8 bytes soft limit, 8 bytes nr_open, 8 bytes CPU count, 1 byte
 * message buffer length, 1 spare byte, then environment entries
 * "NAME=value" separated by NUL bytes (an environment string cannot hold
 * one); the last entry of a name wins, as with setenv.  By name, so the
 * corpus stays valid when the option table grows or is reordered.
 *
 * Properties, checked with abort() so libFuzzer and the replay report
 * them like crashes:
 *   - fdr_config_load() either accepts, with every field inside the
 *     option's bounds, or rejects with a one-line message naming the
 *     variable, cut to the caller's buffer and never written past it;
 *   - an accepted configuration has a geometry below the limit: every
 *     range's usable part [lo, end) is aligned to 64, inside
 *     [BASE, min(limit, nr_open) - 1), within its width, disjoint from
 *     the others, found again by fdr_geom_range_of(), and fits an int;
 *     an auto width is the largest that fits;
 *   - every option formats to text that parses back to the same value;
 *   - fdr_option_parse() of any value into any option behaves the same.
 */
#include "geometry.h"
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PROP(cond) do { if (!(cond)) abort(); } while (0)

#define HDR 26
#define MAXENV 32

struct input {
	const char *entry[MAXENV];  /* "NAME=value" */
	unsigned n;
};

static const char *get(const char *name, void *arg)
{
	const struct input *in = arg;
	size_t len = strlen(name);

	for (unsigned i = in->n; i-- > 0;)
		if (!strncmp(in->entry[i], name, len) && in->entry[i][len] == '=')
			return in->entry[i] + len + 1;
	return NULL;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The message of a refusal: one line, cut to @len, nothing past it. */
static void check_message(const char *msg, const char *canary, size_t len)
{
	size_t n = strnlen(msg, len);

	PROP(len == 0 || n < len);
	PROP(!memcmp(msg + len, canary, 16));
	if (len < 2)
		return;
	PROP(!memchr(msg, '\n', n));
	/* Long enough to hold it: starts with the variable's name. */
	if (len > 24)
		PROP(!strncmp(msg, "FDRANGE_", 8) && memchr(msg, '=', n));
}

static void check_fields(const struct fdr_config *c)
{
	PROP(c->slots <= FDR_MAX_SLOTS);
	PROP(c->base % FDR_ALIGN == 0 && c->base <= FDR_MAX_FD - FDR_ALIGN);
	PROP(c->width == 0 || (c->width % FDR_ALIGN == 0 && c->width >= FDR_ALIGN &&
			       c->width <= FDR_MAX_FD));
	PROP(c->accept <= FDR_ACCEPT_ROUNDROBIN && c->open <= FDR_OPEN_KEEP);
	PROP(strnlen(c->stats, FDR_PATH_MAX) < FDR_PATH_MAX);
	/* A report destination is stderr, nothing, or a path: never a bare word. */
	PROP(!c->stats[0] || !strcmp(c->stats, "stderr") || strchr(c->stats, '/'));
}

/* Every chunk an owner may claim lies wholly below the cap, inside its range. */
static void check_geometry(const struct fdr_config *c, unsigned long limit, unsigned long nr_open)
{
	unsigned long cap = fdr_geom_cap(limit, nr_open);
	unsigned n = fdr_geom_nchunks(c->base, cap), prev_end = 0;

	PROP(cap % FDR_ALIGN == 0 && cap <= (limit < nr_open ? limit : nr_open));
	PROP(!cap || cap <= (limit < nr_open ? limit : nr_open) - 1);
	PROP(n == 0 || fdr_chunk_lo(c->base, n) <= cap);
	for (unsigned s = 0; s < 64; s++) {
		unsigned first, end;

		fdr_geom_claimable(c, s, n, &first, &end);
		PROP(first <= n && end <= n);
		if (first >= end)
			continue;
		PROP(fdr_chunk_lo(c->base, end) <= cap);
		PROP(fdr_chunk_of(c->base, (long)fdr_chunk_lo(c->base, first)) == (long)first);
		if (c->width) {
			PROP(first >= prev_end);
			PROP(fdr_chunk_lo(c->base, end) - fdr_chunk_lo(c->base, first) <= c->width);
			prev_end = end;
		} else {
			PROP(first == 0 && end == n);
		}
	}
	PROP(fdr_chunk_of(c->base, (long)c->base - 1) == -1 || c->base == 0);
}

static void check_round_trip(const struct fdr_config *c)
{
	struct fdr_config back = *c;
	char val[FDR_PATH_MAX + 8], msg[256];

	for (unsigned i = 0; i < fdr_noptions; i++) {
		const struct fdr_option *o = &fdr_options[i];

		fdr_option_format(o, c, val, sizeof(val));
		PROP(fdr_option_parse(o, val, &back, msg, sizeof(msg)) == 0);
	}
	PROP(!memcmp(&back, c, offsetof(struct fdr_config, source)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char canary[16] = "canary-canary-ca";
	struct input in = { { NULL }, 0 };
	struct fdr_config cfg;
	char *text, msg[256 + 16];
	unsigned long limit, nr_open;
	size_t msglen, pos = 0;
	int ret;

	if (size < HDR)
		return 0;
	limit = (unsigned long)u64_at(data);
	nr_open = (unsigned long)u64_at(data + 8);
	msglen = data[24];
	/* The library reads nr_open from /proc and uses the default on 0. */
	if (!nr_open)
		nr_open = FDR_MAX_FD;
	text = malloc(size - HDR + 1);
	if (!text)
		return 0;
	memcpy(text, data + HDR, size - HDR);
	text[size - HDR] = 0;
	while (pos < size - HDR && in.n < MAXENV) {
		in.entry[in.n++] = text + pos;
		pos += strlen(text + pos) + 1;
	}

	memcpy(msg + msglen, canary, sizeof(canary));
	ret = fdr_config_load(&cfg, get, &in, msg, msglen);
	if (ret == 0) {
		check_fields(&cfg);
		check_geometry(&cfg, limit, nr_open);
		check_round_trip(&cfg);
	} else {
		PROP(ret == -EINVAL);
		check_message(msg, canary, msglen);
	}

	/* Every value against every option: accepted values are in bounds. */
	for (unsigned v = 0; v < in.n; v++) {
		const char *val = strchr(in.entry[v], '=');

		val = val ? val + 1 : in.entry[v];
		for (unsigned i = 0; i < fdr_noptions; i++) {
			struct fdr_config c;
			char m[96 + 16];

			fdr_config_defaults(&c);
			memcpy(m + sizeof(m) - 16, canary, 16);
			if (fdr_option_parse(&fdr_options[i], val, &c, m, sizeof(m) - 16) == 0) {
				check_fields(&c);
				check_geometry(&c, limit, nr_open);
			} else {
				check_message(m, canary, sizeof(m) - 16);
			}
		}
	}
	free(text);
	return 0;
}
