/* SPDX-License-Identifier: MIT */
/*
 * `fdrange stat`: the interface between its rooms.
 *
 *   stat_main.c     arguments, orchestration, exit codes, --interval,
 *                   several PIDs and --all
 *   stat_proc.c     what /proc says: fds, targets, epoll watch lists,
 *                   comm and thread names, limits, TCP classes, status
 *   stat_find.c     finding the stats block in a live process (its maps),
 *                   opening it, telling an inherited block from a forgery
 *   stat_check.c    validating a block's bytes (lib/block.h): pure
 *   stat_load.c     reading a block and its fd records through a reader
 *   stat_analyze.c  grouping, owners, purity, shared lines
 *   stat_reason.c   why the library is not placing fds, and the summary
 *   stat_text.c     the text report
 *   stat_json.c     the JSON report
 *   stat_prom.c     the Prometheus text format (--prometheus)
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
#include <sys/types.h>

/* `fdrange stat ...`: argv[0] is "stat".  Returns the exit status. */
int fdrange_stat_main(int argc, char **argv);

/* Exit statuses. */
#define ST_EXIT_OK      0
#define ST_EXIT_PROC    1   /* no such process, or /proc refused us */
#define ST_EXIT_USAGE   2
#define ST_EXIT_BLOCK   3   /* the process maps a block we refuse: corrupt or hostile */

/* st_proc_read()'s own error: the process is a zombie (state Z or X). */
#define ST_ERR_EXITED   4096

/*
 * hdr.policy: lib/options.h's enum fdr_accept (auto, thread, roundrobin,
 * in that order).  Spelled out here so a reader of the block does not
 * change meaning with the option table.
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
	int owner;                   /* block owner index of its chunk (or line), -1 none */
	uint32_t tid;                /* block: thread that registered it, while watched */
	uint64_t ino;                /* socket inode, 0 not a socket */
	bool is_epoll, is_socket, pending;
	uint8_t tcp;                 /* enum st_tcp */
	char target[ST_TARGET_MAX];  /* raw readlink bytes, cut, NUL-terminated */
};

struct st_proc {
	long pid;
	long nspid;                  /* its pid in its own namespace; 0 unknown */
	long ppid;                   /* its parent, in our namespace; 0 unknown */
	char comm[ST_NAME_MAX];      /* raw */
	char state;                  /* State: letter (R, S, Z...); 0 unknown */
	unsigned threads;            /* Threads: 0 unknown */
	int seccomp;                 /* Seccomp: 0 none, 1 strict, 2 filter; -1 unknown */
	bool have_uids;
	uid_t uids[4];               /* Uid: real, effective, saved, fs */
	unsigned long long soft_limit;  /* RLIMIT_NOFILE now; 0 unknown */
	struct st_fd *fds;           /* sorted by fd */
	size_t nfds;
	unsigned listen_ports;       /* distinct TCP ports it listens on */
	/* In another pid namespace (nspid != pid): its threads' tids there
	 * (what the block records) to ours, sorted by the former. */
	struct st_tid { long ns, host; } *tids;
	size_t ntids;
};

/* stat_proc.c.  Functions return 0 or -errno (or -ST_ERR_EXITED). */
int st_proc_read(struct st_proc *p, long pid, char *why, size_t whylen);
void st_proc_free(struct st_proc *p);
/* The name (raw) of @p's thread @tid (as the process sees it), or
 * "(exited)". */
void st_thread_name(const struct st_proc *p, long tid, char *out, size_t len);
/* @p's thread @tid (as the process sees it) as we see it: 0 if gone. */
long st_host_tid(const struct st_proc *p, long tid);
/* Whether process @pid still exists (not a zombie). */
bool st_proc_alive(long pid);
/* All of @path, up to @max bytes, NUL-terminated: 0 or -errno (-EFBIG). */
int st_read_whole(const char *path, char **out, size_t *outlen, size_t max);
/* The few status fields of process @pid: state, PPid, NSpid, Threads,
 * Seccomp, Uid.  0 or -errno. */
int st_proc_status(struct st_proc *p, long pid);

/* The validated block: copies, never pointers into the target. */
struct st_blk {
	struct fdr_blk_hdr hdr;
	struct fdr_blk_owner *owners;  /* hdr.nowners records, 128-aligned memory */
	uint32_t *chunks;              /* hdr.top_chunk entries */
	uint32_t *lines;               /* hdr.top_chunk * FDR_LINES_PER_CHUNK entries: the
					* holder (index + 1) of each line of a chunk the
					* line pool holds, 0 elsewhere */
	uint64_t map_start, map_end;   /* where the target maps it */
	const char *via;               /* "map_files" or "/proc/PID/mem" */
};

/* A bounded reader of the block's bytes: 0 or -errno (-EIO: short). */
struct st_src {
	int (*read)(void *ctx, void *buf, size_t len, uint64_t off);
	void *ctx;
	uint64_t maplen;               /* bytes mapped: nothing beyond is read */
};

/* stat_check.c, pure: each returns 0, or -EBADMSG with one line in @why
 * naming the field and its bad value; -EPROTONOSUPPORT (same kind of
 * line) for a block of another version: another release, not a forgery. */
int fdr_blk_check_hdr(const struct fdr_blk_hdr *h, uint64_t maplen, char *why, size_t whylen);
int fdr_blk_check_owners(const struct fdr_blk_hdr *h, const struct fdr_blk_owner *o,
			 char *why, size_t whylen);
int fdr_blk_check_chunks(const struct fdr_blk_hdr *h, const uint32_t *chunks,
			 char *why, size_t whylen);
/* The lines of the chunks (hdr.top_chunk of them) the line pool holds. */
int fdr_blk_check_lines(const struct fdr_blk_hdr *h, const uint32_t *chunks,
			const uint32_t *lines, char *why, size_t whylen);
/* All of the above over a block laid out in @buf (any alignment), whose
 * first @len bytes are given and @maplen mapped. */
int fdr_blk_check(const void *buf, size_t len, size_t maplen, char *why, size_t whylen);

/* stat_load.c.  Read and check the block through @src into @b.  0,
 * -EBADMSG (refused, @why says why), -ENOMEM, or the reader's -errno. */
int st_blk_load(const struct st_src *src, struct st_blk *b, char *why, size_t whylen);
/* Per open fd: the registering thread (only while an epoll watches it, as
 * an older record may name a previous holder) and the pending bit. */
int st_blk_records(const struct st_src *src, const struct st_blk *b, struct st_fd *fds,
		   size_t nfds);
void st_blk_free(struct st_blk *b);

/* stat_find.c.  What the maps of a process said besides its own block. */
struct st_found {
	bool lib_mapped;               /* libfdrange.so is mapped */
	bool other_release;            /* its one block is of another version */
	long inherited_from;           /* an ancestor's block (fork child): that pid, as
					* we see it; 0 none */
};

/* The block process @p maps: 1 its own (in @b), 0 none of its own (@f
 * says what there is), -EBADMSG candidates refused, else -errno; @why
 * says what happened. */
int st_blk_find(const struct st_proc *p, struct st_blk *b, struct st_found *f, char *why,
		size_t whylen);
/* Whether process @pid maps libfdrange.so: 1 yes, 0 no, -errno unreadable. */
int st_maps_lib(long pid);
/* Whether the path (@len bytes, not NUL-terminated) names libfdrange.so
 * or a versioned file of it: its last component starts so. */
bool st_is_lib_path(const char *p, size_t len);

/* stat_analyze.c */
#define ST_NO_PURITY (-1.0)

struct st_group {
	long key;                    /* tid as the process sees it (block), or epoll fd */
	long shown;                  /* tid as we see it (0: gone), or the epoll fd */
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
	unsigned nlines;             /* lines it holds in the line pool's chunks; for the
				      * line pool: the lines it has handed out */
	unsigned open, served;       /* open fds in its chunks and lines; of those with a
				      * serving thread */
	unsigned open_lines;         /* 8-fd lines of its with open fds */
	double purity;               /* ST_NO_PURITY: nothing served */
	double client_purity;        /* of its accepted client sockets; ST_NO_PURITY: none */
	uint64_t fallbacks;
	struct st_served *by;        /* by count, descending */
	unsigned nby;
	size_t span0, nspans;        /* its fd runs: st_report.spans[span0..] */
	int group;                   /* the group of its tid, -1 none */
};

/* A run of fds [lo, hi) held by one owner (st_report.owners index). */
struct st_span {
	uint32_t owner;
	long lo, hi;
};

struct st_lines {
	unsigned long lines, shared;          /* 8-fd lines with served fds; with 2+ servers */
	unsigned long sock_lines, sock_shared;
	unsigned long client_lines, client_shared;
	/* Lines below the block's threshold, left to the kernel by rule: not in
	 * the counts above, which judge the placement. */
	unsigned long low_lines, low_shared, low_client_shared;
};

/* Why the library places nothing (or is not seen to): st_reason_word(). */
enum st_reason {
	ST_R_NONE,               /* placing, or ready to */
	ST_R_NOT_LOADED,         /* libfdrange.so not mapped */
	ST_R_NO_BLOCK,           /* mapped, no block, no other sign */
	ST_R_SECCOMP_START,      /* started under a seccomp filter: no block by design */
	ST_R_OTHER_RELEASE,      /* a block of another version */
	ST_R_INHERITED,          /* a fork child that placed nothing yet */
	ST_R_DISABLED,           /* FDRANGE_DISABLE=1 */
	ST_R_CONFIG,             /* a bad or unknown FDRANGE_* variable */
	ST_R_SECCOMP,            /* a filter installed while running */
	ST_R_SECURE,             /* secure-execution mode (set-id program) */
	ST_R_LIMIT,              /* RLIMIT_NOFILE leaves no chunk above the base */
	ST_R_SINGLE,             /* single-threaded so far */
	ST_R_FEW,                /* nothing placed yet: every fd numbered below threshold */
	ST_R_NR
};

struct st_report {
	struct st_proc *p;
	struct st_blk *b;            /* NULL: /proc only */
	struct st_found found;
	char noblk[ST_WHY_MAX];      /* without a block: why */
	enum st_reason reason;
	struct st_group *groups;     /* lettered in order of their (shown) tid or epoll fd */
	unsigned ngroups;
	struct st_owner *owners;     /* one per used owner record (kind != FREE) */
	unsigned nowners;
	unsigned low_open, unowned_open;
	size_t below_threshold;      /* open fds below the block's threshold */
	struct st_served *low_by, *unowned_by;
	unsigned low_nby, unowned_nby;
	struct st_lines t;
	unsigned long client_sockets;
	double min_purity;
	double min_client_purity;    /* the same over accepted client sockets only */
	uint64_t placed, inplace, kept, fallbacks, probes, claims;
	uint64_t range_sets;      /* PR_SET_FD_RANGE calls, all owners (saturating) */
	uint64_t fb_why[FDR_FB_NR];
	uint64_t seen;               /* fds that passed through the wrapped calls, ever */
	unsigned claimed_chunks;
	/* Set by the caller: a serving thread's name (raw), given its tid;
	 * and its tid as we see it (NULL: the same). */
	void (*name_of)(const struct st_proc *p, long tid, char *out, size_t len);
	long (*host_tid)(const struct st_proc *p, long tid);
	struct st_served *served_mem;  /* backs the .by arrays */
	unsigned *gsorted;           /* group indices sorted by key */
	struct st_span *spans;       /* grouped by owner, in fd order within one */
	size_t nspans;
};

int st_analyze(struct st_report *r);
void st_report_free(struct st_report *r);

/* The owner index of @fd: its chunk's, or in a line pool chunk its line's
 * holder (the pool's own for a free line); -1 below base or unclaimed. */
int st_owner_of_fd(const struct st_blk *b, long fd);
/* "thread 1234", "lane 3 (tid 1234)", "learning pool", "shared pool",
 * "line pool": tids as we see them. */
void st_owner_label(const struct st_report *r, const struct st_owner *ow, char *buf,
		    size_t len);
/* Block tid @tid as we see it: 0 if it is gone (another namespace). */
long st_shown_tid(const struct st_report *r, long tid);
/* Whether the process is in another pid namespace than ours. */
bool st_other_ns(const struct st_proc *p);
/* The group whose key is @key, -1 none. */
int st_group_of_key(const struct st_report *r, long key);
/* Index of the first fd >= @fd in r->p->fds. */
size_t st_lower_bound(const struct st_proc *p, long fd);
const char *st_kind_word(uint32_t kind);
char st_letter(int group);

/* stat_reason.c */
const char *st_model_word(const struct fdr_blk_hdr *h);  /* summary's model= */
void st_reason_find(struct st_report *r);
const char *st_reason_word(enum st_reason why);   /* NULL for ST_R_NONE */
/* The reason in one line (raw: @r's strings unescaped); "" for ST_R_NONE. */
void st_reason_text(const struct st_report *r, char *buf, size_t len);
/* yes (its block read, placing or ready), inactive (loaded, not placing), no. */
const char *st_library_word(const struct st_report *r);
/* At least this many open fds never passed through the library (0: none
 * known); meaningful with the process's own block. */
unsigned long st_unseen(const struct st_report *r);
/* Whether st_unseen() is worth a warning: most open fds unseen. */
bool st_unseen_matters(const struct st_report *r);

/* One process, as the summary line, JSON summary and Prometheus see it. */
struct st_summary {
	long pid;
	char comm[ST_NAME_MAX];      /* raw */
	char error[ST_WHY_MAX + 64]; /* "": read; else why it could not be (raw) */
	const char *error_reason;    /* then the error's word: exited, permission, ... */
	const char *library;
	enum st_reason reason;
	bool block;                  /* its own block was read */
	size_t open_fds;
	unsigned groups;
	unsigned long shared_lines, shared_socket_lines, client_sockets, shared_client_lines;
	double min_purity, min_client_purity;
	uint64_t placed, inplace, kept, fallbacks, probes, claims, single_kept, untracked;
	uint64_t few_seen, threshold;
	uint64_t kernel_range;       /* 1: the kernel allocates in the threads' ranges */
	uint64_t range_sets;         /* PR_SET_FD_RANGE calls, all owners */
	unsigned long low_shared_client_lines;
	uint64_t fb_why[FDR_FB_NR];
	uint64_t accepted, hits, misses, relearns, realignments, accepts_left;
	unsigned long unseen;
	const char *model;
	char lib_version[16];        /* raw */
};

void st_summarize(const struct st_report *r, struct st_summary *s);
/* Why pid @pid could not be read: @reason a word, @why the line (kept). */
void st_summarize_error(long pid, const char *reason, const char *why, struct st_summary *s);

/* stat_text.c */
struct st_text_opts {
	bool color, map;
};

void st_render_text(FILE *out, const struct st_report *r, const struct st_text_opts *o);
void st_summary_text(FILE *out, const struct st_summary *s);
/* @s (raw, at most @max bytes) with control and non-ASCII bytes as \xNN. */
void st_put_escaped(FILE *out, const char *s, size_t max);
/* "1 fd", "2 fds": @one or @many by @n. */
const char *st_pl(unsigned long long n, const char *one, const char *many);

/* stat_json.c */
void st_render_json(FILE *out, const struct st_report *r);
void st_summary_json(FILE *out, const struct st_summary *s, double t);
/* {"schema":1,"error":MSG[,"reason":WORD][,"pid":PID]}: pid 0 none. */
void st_json_error(FILE *out, const char *msg, const char *reason, long pid);
void st_json_str(FILE *out, const char *s, size_t max);

/* stat_prom.c: every metric family once, a sample per process in it. */
void st_render_prom(FILE *out, const struct st_summary *s, size_t n);

#endif
