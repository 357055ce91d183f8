/* SPDX-License-Identifier: MIT */
/*
 * `fdrange stat`: the interface between its rooms.
 *
 *   stat_main.c     arguments, orchestration, exit codes, --interval
 *   stat_proc.c     what /proc says: fds, targets, epoll watch lists,
 *                   comm and thread names, limits, TCP classes
 *   stat_block.c    finding, reading and validating the stats block
 *                   (lib/block.h): hostile input, often read as root
 *   stat_analyze.c  grouping, owners, purity, shared lines, the summary
 *   stat_text.c     the text report
 *   stat_json.c     the JSON report
 *
 * Everything read from the target is hostile: strings are kept raw here
 * and escaped only by the renderers; numbers from the block are used only
 * after fdr_blk_check*() accepted them.
 */
#ifndef FDRANGE_TOOLS_STAT_H
#define FDRANGE_TOOLS_STAT_H

#include "block.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* `fdrange stat ...`: argv[0] is "stat".  Returns the exit status. */
int fdrange_stat_main(int argc, char **argv);

/* Exit statuses. */
#define ST_EXIT_OK      0
#define ST_EXIT_PROC    1   /* no such process, or /proc refused us */
#define ST_EXIT_USAGE   2
#define ST_EXIT_BLOCK   3   /* the process maps a block we refuse: corrupt or hostile */

/*
 * hdr.policy: lib/options.h's enum fdr_accept once the "auto" policy lands
 * there (auto, thread, roundrobin, in that order).  Spelled out here so a
 * reader of the block does not change meaning with the option table.
 */
enum st_policy { ST_POLICY_AUTO, ST_POLICY_THREAD, ST_POLICY_ROUNDROBIN, ST_POLICY_NR };

#define ST_TARGET_MAX   128  /* bytes of an fd's link target kept (cut beyond) */
#define ST_NAME_MAX     64   /* bytes of a comm kept */
#define ST_MAX_FDS      (4u << 20)  /* fds listed at most: above the kernel's nr_open max / 512 */
#define ST_WHY_MAX      320

/* TCP class of a socket fd (from /proc/PID/net/tcp and tcp6). */
enum st_tcp { ST_TCP_NONE, ST_TCP_LISTEN, ST_TCP_CLIENT, ST_TCP_OTHER };

struct st_fd {
	int fd;
	int watchers;                /* epoll instances watching it now */
	int watcher;                 /* the (last) epoll fd watching it */
	int group;                   /* index into st_report.groups, -1 none */
	int owner;                   /* block owner index of its chunk, -1 none */
	uint32_t tid;                /* block: thread that registered it, while watched */
	uint64_t ino;                /* socket inode, 0 not a socket */
	bool is_epoll, is_socket, pending;
	uint8_t tcp;                 /* enum st_tcp */
	char target[ST_TARGET_MAX];  /* raw readlink bytes, cut, NUL-terminated */
};

struct st_proc {
	long pid;
	long nspid;                  /* its pid in its own namespace; 0 unknown */
	char comm[ST_NAME_MAX];      /* raw */
	unsigned long long soft_limit;  /* RLIMIT_NOFILE now; 0 unknown */
	struct st_fd *fds;           /* sorted by fd */
	size_t nfds;
	unsigned listen_ports;       /* distinct TCP ports it listens on */
	/* In another pid namespace (nspid != pid): its threads' tids there
	 * (what the block records) to ours, sorted by the former. */
	struct st_tid { long ns, host; } *tids;
	size_t ntids;
};

/* stat_proc.c.  Functions return 0 or -errno. */
int st_proc_read(struct st_proc *p, long pid, char *why, size_t whylen);
void st_proc_free(struct st_proc *p);
/* The name (raw) of @p's thread @tid (as the process sees it), or
 * "(exited)". */
void st_thread_name(const struct st_proc *p, long tid, char *out, size_t len);
/* Whether process @pid still exists (not a zombie). */
bool st_proc_alive(long pid);

/* The validated block: copies, never pointers into the target. */
struct st_blk {
	struct fdr_blk_hdr hdr;
	struct fdr_blk_owner *owners;  /* hdr.nowners records, 128-aligned memory */
	uint32_t *chunks;              /* hdr.top_chunk entries */
	uint64_t map_start, map_end;   /* where the target maps it */
	const char *via;               /* "map_files" or "/proc/PID/mem" */
};

/* A bounded reader of the block's bytes: 0 or -errno (-EIO: short). */
struct st_src {
	int (*read)(void *ctx, void *buf, size_t len, uint64_t off);
	void *ctx;
	uint64_t maplen;               /* bytes mapped: nothing beyond is read */
};

/* stat_block.c, pure: each returns 0, or -EBADMSG with one line in @why
 * naming the field and its bad value; -EPROTONOSUPPORT (same kind of
 * line) for a block of another version: another release, not a forgery. */
int fdr_blk_check_hdr(const struct fdr_blk_hdr *h, uint64_t maplen, char *why, size_t whylen);
int fdr_blk_check_owners(const struct fdr_blk_hdr *h, const struct fdr_blk_owner *o,
			 char *why, size_t whylen);
int fdr_blk_check_chunks(const struct fdr_blk_hdr *h, const uint32_t *chunks,
			 char *why, size_t whylen);
/* All of the above over a block laid out in @buf (any alignment), whose
 * first @len bytes are given and @maplen mapped. */
int fdr_blk_check(const void *buf, size_t len, size_t maplen, char *why, size_t whylen);

/* Read and check the block through @src into @b.  0, -EBADMSG (refused,
 * @why says why), -ENOMEM, or the reader's -errno. */
int st_blk_load(const struct st_src *src, struct st_blk *b, char *why, size_t whylen);
/* Per open fd: the registering thread (only while an epoll watches it, as
 * an older record may name a previous holder) and the pending bit. */
int st_blk_records(const struct st_src *src, const struct st_blk *b, struct st_fd *fds,
		   size_t nfds);
void st_blk_free(struct st_blk *b);

/* The block process @p maps: 1 found (in @b), 0 none (@lib_mapped says
 * whether libfdrange.so is; also for one block of another version, shown
 * as inactive), -EBADMSG candidates refused, else -errno; @why says what
 * happened. */
int st_blk_find(const struct st_proc *p, struct st_blk *b, bool *lib_mapped, char *why,
		size_t whylen);

/* stat_analyze.c */
#define ST_NO_PURITY (-1.0)

struct st_group {
	long key;                    /* tid (block) or epoll fd (/proc only) */
	char name[ST_NAME_MAX];      /* raw thread name, or "" */
	unsigned fds, sockets, clients;
};

struct st_served {
	int group;
	unsigned n;
};

struct st_owner {
	unsigned idx;
	unsigned nchunks;            /* chunks it holds (table, or its fixed range) */
	unsigned open, served;       /* open fds in its chunks; of those with a serving thread */
	double purity;               /* ST_NO_PURITY: nothing served */
	double client_purity;        /* of its accepted client sockets; ST_NO_PURITY: none */
	uint64_t fallbacks;
	struct st_served *by;        /* by count, descending */
	unsigned nby;
	size_t span0, nspans;        /* its chunk runs: st_report.spans[span0..] */
	int group;                   /* the group of its tid, -1 none */
};

/* A run of consecutive chunks [lo, hi) held by one owner. */
struct st_span {
	uint32_t owner, lo, hi;
};

struct st_lines {
	unsigned long lines, shared;          /* 8-fd lines with served fds; with 2+ servers */
	unsigned long sock_lines, sock_shared;
	unsigned long client_lines, client_shared;
};

struct st_report {
	struct st_proc *p;
	struct st_blk *b;            /* NULL: /proc only */
	bool lib_mapped;
	char noblk[ST_WHY_MAX];      /* without a block: why */
	struct st_group *groups;
	unsigned ngroups;
	struct st_owner *owners;     /* one per used owner record (kind != FREE) */
	unsigned nowners;
	unsigned low_open, unowned_open;
	struct st_served *low_by, *unowned_by;
	unsigned low_nby, unowned_nby;
	struct st_lines t;
	unsigned long client_sockets;
	double min_purity;
	double min_client_purity;    /* the same over accepted client sockets only */
	uint64_t placed, inplace, kept, fallbacks, probes, claims;
	uint64_t fb_why[FDR_FB_NR];
	unsigned claimed_chunks;
	/* Set by the caller: a serving thread's name (raw), given its tid. */
	void (*name_of)(const struct st_proc *p, long tid, char *out, size_t len);
	struct st_served *served_mem;  /* backs the .by arrays */
	unsigned *gsorted;           /* group indices sorted by key */
	struct st_span *spans;       /* grouped by owner, in fd order within one */
	size_t nspans;
};

int st_analyze(struct st_report *r);
void st_report_free(struct st_report *r);

/* The chunk holding @fd's owner index, or -1 (below base, unclaimed). */
int st_owner_of_fd(const struct st_blk *b, long fd);
/* "thread 1234", "lane 3 (tid 1234)", "sparse pool", "shared pool". */
void st_owner_label(const struct st_report *r, const struct st_owner *ow, char *buf,
		    size_t len);
/* The group whose key is @key, -1 none. */
int st_group_of_key(const struct st_report *r, long key);
/* Index of the first fd >= @fd in r->p->fds. */
size_t st_lower_bound(const struct st_proc *p, long fd);
const char *st_kind_word(uint32_t kind);
const char *st_model_word(const struct fdr_blk_hdr *h);  /* summary's model= */
/* Auto policy, 16 or more accepted, none ever registered: nothing to learn from. */
bool st_never_registered(const struct fdr_blk_hdr *h);
char st_letter(int group);

/* stat_text.c */
struct st_text_opts {
	bool color, map;
};

void st_render_text(FILE *out, const struct st_report *r, const struct st_text_opts *o);
void st_summary_text(FILE *out, const struct st_report *r);
/* @s (raw, at most @max bytes) with control and non-ASCII bytes as \xNN. */
void st_put_escaped(FILE *out, const char *s, size_t max);

/* stat_json.c */
void st_render_json(FILE *out, const struct st_report *r);
void st_summary_json(FILE *out, const struct st_report *r, double t);
void st_json_error(FILE *out, const char *msg);
void st_json_str(FILE *out, const char *s, size_t max);

#endif
