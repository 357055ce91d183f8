/* SPDX-License-Identifier: MIT */
/*
 * Who will serve an accepted connection (see handoff.c).
 */
#ifndef FDR_HANDOFF_H
#define FDR_HANDOFF_H

#include "global.h"

/* Chunks the learning pool may take (one fd per line: 8 fds a chunk). */
#define FDR_SPARSE_CHUNKS 8u

/* In fdr_place, for an fd accepted by owner @acc: the owner to place it
 * with, FDR_NO_OWNER to leave it where the kernel put it. */
unsigned fdr_handoff_owner(unsigned acc) FDR_HIDDEN;
/* Whether the settled model is local: each thread serves what it accepts. */
bool fdr_handoff_is_local(void) FDR_HIDDEN;
/* The owner the next accept by owner @acc will be placed with, as far as
 * the model knows now (krange.c aims the kernel's range there). */
unsigned fdr_handoff_next(unsigned acc) FDR_HIDDEN;
/* The accept wrapper returns @fd: note it as awaiting its serving thread. */
void fdr_handoff_accepted(int fd) FDR_HIDDEN;
/* epoll_ctl(EPOLL_CTL_ADD) of @fd succeeded on this thread (active library). */
void fdr_handoff_registered(int fd) FDR_HIDDEN;
/* A new block (start-up, a fork child's), its learner's words reset
 * (pstate.h): nothing learned yet; the rotation of an explicit roundrobin. */
void fdr_handoff_setup(struct fdr_blk_hdr *h) FDR_HIDDEN;
/* A call other than accept made @fd: an accept's pending record for the
 * number is stale (that connection was closed unregistered). */
void fdr_handoff_created(int fd) FDR_HIDDEN;

#endif
