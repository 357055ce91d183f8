/* SPDX-License-Identifier: MIT */
#include "strbuf.h"
#include "sys.h"

#include <errno.h>

void sb_init(struct strbuf *sb, char *mem, size_t cap, int flush_fd)
{
	sb->p = mem;
	sb->cap = cap;
	sb->len = 0;
	sb->flush_fd = flush_fd;
	if (cap)
		mem[0] = 0;
}

void sb_char(struct strbuf *sb, char c)
{
	if (sb->len + 1 >= sb->cap) {
		if (sb->flush_fd < 0 || sb_flush(sb) < 0 || sb->cap < 2)
			return;
	}
	sb->p[sb->len++] = c;
	sb->p[sb->len] = 0;
}

void sb_str(struct strbuf *sb, const char *s)
{
	while (s && *s)
		sb_char(sb, *s++);
}

static size_t u64_digits(unsigned long long v, char out[24])
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = 0;
	return n;
}

void sb_u64(struct strbuf *sb, unsigned long long v)
{
	char d[24];

	u64_digits(v, d);
	sb_str(sb, d);
}

void sb_u64w(struct strbuf *sb, unsigned long long v, unsigned width)
{
	char d[24];
	size_t n = u64_digits(v, d);

	while (n++ < width)
		sb_char(sb, ' ');
	sb_str(sb, d);
}

void sb_strw(struct strbuf *sb, const char *s, unsigned width)
{
	size_t n = 0;

	for (; s[n]; n++)
		;
	sb_str(sb, s);
	while (n++ < width)
		sb_char(sb, ' ');
}

void sb_quoted(struct strbuf *sb, const char *s, size_t max)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	sb_char(sb, '"');
	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == max) {
			sb_str(sb, "...");
			break;
		}
		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
			sb_str(sb, "\\x");
			sb_char(sb, hex[c >> 4]);
			sb_char(sb, hex[c & 15]);
		} else {
			sb_char(sb, (char)c);
		}
	}
	sb_char(sb, '"');
}

int sb_flush(struct strbuf *sb)
{
	size_t off = 0;

	while (off < sb->len) {
		long n = sys_write(sb->flush_fd, sb->p + off, sb->len - off);

		if (n == -EINTR)
			continue;
		if (n <= 0) {
			sb->len = 0;
			sb->p[0] = 0;
			return n < 0 ? (int)n : -EIO;
		}
		off += (size_t)n;
	}
	sb->len = 0;
	sb->p[0] = 0;
	return 0;
}
