/* SPDX-License-Identifier: MIT */
/*
 * Bounded string building without stdio or malloc: the library formats its
 * error lines and reports with these, because it may run inside a signal
 * handler or before libc's stdio is usable.
 */
#ifndef FDR_STRBUF_H
#define FDR_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *p;
	size_t len, cap;   /* len < cap always; p[len] == 0 */
	int flush_fd;      /* >= 0: write out and restart when full */
};

void sb_init(struct strbuf *sb, char *mem, size_t cap, int flush_fd);
void sb_str(struct strbuf *sb, const char *s);
void sb_char(struct strbuf *sb, char c);
void sb_u64(struct strbuf *sb, unsigned long long v);
/* Right-aligned in @width columns. */
void sb_u64w(struct strbuf *sb, unsigned long long v, unsigned width);
void sb_strw(struct strbuf *sb, const char *s, unsigned width);
/* @s quoted, control characters escaped, cut at @max bytes. */
void sb_quoted(struct strbuf *sb, const char *s, size_t max);
/* Write what is buffered to flush_fd. Returns 0 or -errno. */
int sb_flush(struct strbuf *sb);

#endif
