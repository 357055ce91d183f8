/* SPDX-License-Identifier: MIT */
/*
 * Reading just enough of an ELF file to tell a program libfdrange cannot
 * help (elfcheck.h).  The file is the user's own program, but a truncated
 * or odd one must still give an answer, never a crash: every offset and
 * count is checked against the file's size and a cap before it is read.
 *
 * Go is recognised as the Go toolchain marks its binaries: a note of
 * owner "Go" and type 4 (NT_GO_BUILDID, in section .note.go.buildid and a
 * PT_NOTE segment), or a section named .go.buildinfo (Go 1.13 and later,
 * kept by strip).
 */
#include "elfcheck.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ELF_TABLE_MAX  (1u << 20)   /* bytes of program or section headers read at most */
#define NT_GO_BUILDID  4u

struct elf {
	int fd;
	uint64_t size;
	bool is64;
};

/* @len bytes at @off, all within the file. */
static bool get(const struct elf *e, void *buf, size_t len, uint64_t off)
{
	if (off > e->size || len > e->size - off)
		return false;
	return pread(e->fd, buf, len, (off_t)off) == (ssize_t)len;
}

static uint64_t field(const unsigned char *p, unsigned size)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	/* Native byte order: fdr_elf_kind() takes only this machine's. */
	switch (size) {
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

/* Whether the notes in [off, off + len) hold Go's build id. */
static bool go_note(const struct elf *e, uint64_t off, uint64_t len)
{
	unsigned char *buf;
	bool found = false;
	uint64_t at = 0;

	if (len > ELF_TABLE_MAX || !(buf = malloc(len ? len : 1)))
		return false;
	if (!get(e, buf, len, off)) {
		free(buf);
		return false;
	}
	/* Each note: namesz, descsz, type, then name and desc padded to 4. */
	while (!found && at + 12 <= len) {
		uint64_t namesz = field(buf + at, 4), descsz = field(buf + at + 4, 4);
		uint64_t type = field(buf + at + 8, 4);

		found = namesz == 3 && type == NT_GO_BUILDID && at + 12 + 3 <= len &&
			!memcmp(buf + at + 12, "Go", 3);
		at += 12 + ((namesz + 3) & ~3ull) + ((descsz + 3) & ~3ull);
	}
	free(buf);
	return found;
}

/* Program headers: PT_INTERP (dynamic), a Go note (Go). */
static void segments(const struct elf *e, const unsigned char *eh, bool *interp, bool *go)
{
	uint64_t off = field(eh + (e->is64 ? 32 : 28), e->is64 ? 8 : 4);
	unsigned entsize = (unsigned)field(eh + (e->is64 ? 54 : 42), 2);
	unsigned num = (unsigned)field(eh + (e->is64 ? 56 : 44), 2);
	unsigned char ph[sizeof(Elf64_Phdr)];

	if (entsize < (e->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) ||
	    (uint64_t)entsize * num > ELF_TABLE_MAX)
		return;
	for (unsigned i = 0; i < num; i++) {
		uint32_t type;

		if (!get(e, ph, e->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr),
			 off + (uint64_t)i * entsize))
			return;
		type = (uint32_t)field(ph, 4);
		if (type == PT_INTERP)
			*interp = true;
		else if (type == PT_NOTE && !*go)
			*go = e->is64 ? go_note(e, field(ph + 8, 8), field(ph + 32, 8)) :
					go_note(e, field(ph + 4, 4), field(ph + 16, 4));
	}
}

/* Section names: .go.buildinfo or .note.go.buildid (Go). */
static bool go_sections(const struct elf *e, const unsigned char *eh)
{
	uint64_t off = field(eh + (e->is64 ? 40 : 32), e->is64 ? 8 : 4);
	unsigned entsize = (unsigned)field(eh + (e->is64 ? 58 : 46), 2);
	unsigned num = (unsigned)field(eh + (e->is64 ? 60 : 48), 2);
	unsigned strndx = (unsigned)field(eh + (e->is64 ? 62 : 50), 2);
	unsigned char sh[sizeof(Elf64_Shdr)];
	uint64_t stroff, strsize;
	char *names;
	bool found = false;

	if (!num || strndx >= num ||
	    entsize < (e->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) ||
	    (uint64_t)entsize * num > ELF_TABLE_MAX ||
	    !get(e, sh, e->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr),
		 off + (uint64_t)strndx * entsize))
		return false;
	stroff = e->is64 ? field(sh + 24, 8) : field(sh + 16, 4);
	strsize = e->is64 ? field(sh + 32, 8) : field(sh + 20, 4);
	if (!strsize || strsize > ELF_TABLE_MAX || !(names = malloc(strsize + 1)))
		return false;
	if (!get(e, names, strsize, stroff)) {
		free(names);
		return false;
	}
	names[strsize] = 0;
	for (unsigned i = 0; i < num && !found; i++) {
		uint32_t name;

		if (!get(e, sh, e->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr),
			 off + (uint64_t)i * entsize))
			break;
		name = (uint32_t)field(sh, 4);
		found = name < strsize && (!strcmp(names + name, ".go.buildinfo") ||
					   !strcmp(names + name, ".note.go.buildid"));
	}
	free(names);
	return found;
}

enum fdr_elf fdr_elf_kind(const char *path)
{
	static const unsigned char native = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
					    ELFDATA2LSB : ELFDATA2MSB;
	unsigned char eh[sizeof(Elf64_Ehdr)];
	struct elf e = { open(path, O_RDONLY | O_CLOEXEC), 0, false };
	bool interp = false, go = false;
	enum fdr_elf kind = FDR_ELF_OTHER;
	struct stat st;
	unsigned type;

	if (e.fd < 0)
		return FDR_ELF_OTHER;
	if (fstat(e.fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	e.size = (uint64_t)st.st_size;
	if (!get(&e, eh, sizeof(Elf32_Ehdr), 0) || memcmp(eh, ELFMAG, SELFMAG) != 0 ||
	    (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64) || eh[EI_DATA] != native)
		goto out;
	e.is64 = eh[EI_CLASS] == ELFCLASS64;
	if (e.is64 && !get(&e, eh, sizeof(Elf64_Ehdr), 0))
		goto out;
	type = (unsigned)field(eh + 16, 2);
	if (type != ET_EXEC && type != ET_DYN)
		goto out;
	segments(&e, eh, &interp, &go);
	go = go || go_sections(&e, eh);
	/* An ET_DYN without PT_INTERP is a static-pie, or a shared library
	 * run directly (ld.so itself): neither runs the loader for it. */
	if (go)
		kind = interp ? FDR_ELF_GO : FDR_ELF_GO_STATIC;
	else
		kind = interp ? FDR_ELF_DYNAMIC : FDR_ELF_STATIC;
out:
	close(e.fd);
	return kind;
}

int fdr_which(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/'))
		return snprintf(out, len, "%s", name) < (int)len ? 0 : -1;
	/* execvp's default, as glibc has it. */
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;;) {
		size_t n = strcspn(p, ":");
		struct stat st;

		/* An empty entry is the current directory. */
		if (snprintf(out, len, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", name) < (int)len &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		if (!p[n])
			break;
		p += n + 1;
	}
	return -1;
}
